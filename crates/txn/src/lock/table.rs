//! The shared lock table: per lock, who holds which modes (with a count per
//! mode) and the queue of waiters, with PostgreSQL's grant rules. Every
//! function here runs under the lock's partition mutex (`&mut Partition`).

use std::collections::HashMap;
use std::sync::Arc;

use super::mode::{LockMode, ModeMask};
use super::tag::LockTag;
use super::Proc;

#[derive(Default)]
pub(crate) struct Partition {
    pub locks: HashMap<LockTag, Lock>,
}

impl Partition {
    pub fn lock_mut(&mut self, tag: LockTag) -> &mut Lock {
        self.locks.entry(tag).or_default()
    }

    /// Drops `tag`'s entry once nobody holds or waits for it.
    pub fn forget_if_unused(&mut self, tag: &LockTag) {
        if self.locks.get(tag).is_some_and(Lock::is_unused) {
            self.locks.remove(tag);
        }
    }
}

/// A holder and the modes it holds (PostgreSQL's PROCLOCK).
pub(crate) struct Holder {
    pub proc: Arc<Proc>,
    pub modes: ModeMask,
}

pub(crate) struct Waiter {
    pub proc: Arc<Proc>,
    pub mode: LockMode,
    /// When the wait began (pg_locks.waitstart), microseconds since the
    /// Unix epoch.
    pub since_us: i64,
}

#[derive(Default)]
pub(crate) struct Lock {
    /// Holders of each mode (index: the mode's number).
    granted: [u32; 9],
    pub holders: Vec<Holder>,
    /// Waiters in queue order.
    pub waiters: Vec<Waiter>,
}

/// What enqueueing a request found (PostgreSQL's ProcSleep before it sleeps).
pub(crate) enum Enqueued {
    /// Granted at once: it may go ahead of waiters that wait for it.
    Granted,
    Queued,
    /// An earlier waiter waits for a mode we hold while we want a mode it
    /// holds: a deadlock only one of us can end (`RememberSimpleDeadLock`).
    Deadlock {
        other: Arc<Proc>,
        other_mode: LockMode,
    },
}

impl Lock {
    pub fn is_unused(&self) -> bool {
        self.holders.is_empty() && self.waiters.is_empty()
    }

    pub fn wait_mask(&self) -> ModeMask {
        self.waiters.iter().fold(0, |acc, w| acc | w.mode.bit())
    }

    /// The modes `proc` holds here.
    pub fn held_by(&self, proc: &Proc) -> ModeMask {
        self.holders
            .iter()
            .find(|h| *h.proc == *proc)
            .map_or(0, |h| h.modes)
    }

    /// Modes granted to others than `proc` (a holder never conflicts with
    /// itself: PostgreSQL's LockCheckConflicts).
    fn granted_to_others(&self, proc: &Proc) -> ModeMask {
        let own = self.held_by(proc);
        LockMode::ALL
            .into_iter()
            .filter(|m| {
                let mine = u32::from(own & m.bit() != 0);
                self.granted[*m as usize] > mine
            })
            .fold(0, |acc, m| acc | m.bit())
    }

    pub fn conflicts_with_granted(&self, proc: &Proc, mode: LockMode) -> bool {
        mode.conflicts() & self.granted_to_others(proc) != 0
    }

    pub fn grant(&mut self, proc: &Arc<Proc>, mode: LockMode) {
        match self.holders.iter_mut().find(|h| *h.proc == **proc) {
            Some(h) => {
                debug_assert_eq!(h.modes & mode.bit(), 0, "mode granted twice");
                h.modes |= mode.bit();
            }
            None => self.holders.push(Holder {
                proc: proc.clone(),
                modes: mode.bit(),
            }),
        }
        self.granted[mode as usize] += 1;
    }

    /// Removes `proc`'s hold of `mode`; false if it did not hold it.
    pub fn ungrant(&mut self, proc: &Proc, mode: LockMode) -> bool {
        let Some(i) = self.holders.iter().position(|h| *h.proc == *proc) else {
            return false;
        };
        let h = &mut self.holders[i];
        if h.modes & mode.bit() == 0 {
            return false;
        }
        h.modes &= !mode.bit();
        if h.modes == 0 {
            self.holders.swap_remove(i);
        }
        self.granted[mode as usize] -= 1;
        true
    }

    /// A new request with nobody in the way: no conflict with what others
    /// hold and none with what earlier waiters want.
    pub fn grantable_now(&self, proc: &Proc, mode: LockMode) -> bool {
        mode.conflicts() & self.wait_mask() == 0 && !self.conflicts_with_granted(proc, mode)
    }

    /// Queues a request that must wait, as PostgreSQL's ProcSleep: a
    /// requester that already holds modes here goes ahead of the first
    /// waiter that waits for one of them (else that waiter and we would
    /// wait for each other), and is granted at once if then nothing is in
    /// its way.
    pub fn enqueue(&mut self, proc: &Arc<Proc>, mode: LockMode, since_us: i64) -> Enqueued {
        let held = self.held_by(proc);
        let mut at = self.waiters.len();
        if held != 0 {
            let mut ahead: ModeMask = 0;
            for (i, w) in self.waiters.iter().enumerate() {
                if w.mode.conflicts() & held != 0 {
                    if mode.conflicts() & self.held_by(&w.proc) != 0 {
                        return Enqueued::Deadlock {
                            other: w.proc.clone(),
                            other_mode: w.mode,
                        };
                    }
                    if mode.conflicts() & ahead == 0 && !self.conflicts_with_granted(proc, mode) {
                        self.grant(proc, mode);
                        return Enqueued::Granted;
                    }
                    at = i;
                    break;
                }
                ahead |= w.mode.bit();
            }
        }
        self.waiters.insert(
            at,
            Waiter {
                proc: proc.clone(),
                mode,
                since_us,
            },
        );
        Enqueued::Queued
    }

    /// Removes `proc`'s queued request; false if it is not queued (granted).
    pub fn dequeue(&mut self, proc: &Proc) -> bool {
        match self.waiters.iter().position(|w| *w.proc == *proc) {
            Some(i) => {
                self.waiters.remove(i);
                true
            }
            None => false,
        }
    }

    /// Grants, in queue order, every waiter whose request conflicts
    /// neither with what is granted nor with an earlier waiter still
    /// waiting, and wakes it (PostgreSQL's ProcLockWakeup).
    pub fn wake_waiters(&mut self) {
        let mut ahead: ModeMask = 0;
        let mut i = 0;
        while i < self.waiters.len() {
            let w = &self.waiters[i];
            if w.mode.conflicts() & ahead == 0 && !self.conflicts_with_granted(&w.proc, w.mode) {
                let w = self.waiters.remove(i);
                self.grant(&w.proc, w.mode);
                w.proc.grant_wakeup();
            } else {
                ahead |= w.mode.bit();
                i += 1;
            }
        }
    }
}
