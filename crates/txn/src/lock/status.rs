//! What the lock manager shows: pg_locks' rows, pg_blocking_pids.

use super::mode::LockMode;
use super::tag::LockTag;
use super::{LockManager, Proc};

/// One row of pg_locks: a mode held or awaited by one session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LockStatus {
    pub tag: LockTag,
    pub mode: LockMode,
    pub granted: bool,
    pub fast_path: bool,
    pub pid: i32,
    /// `proc/local transaction` (pg_locks.virtualtransaction).
    pub virtual_xact: String,
    /// When the wait began, microseconds since the Unix epoch.
    pub wait_start_us: Option<i64>,
}

fn virtual_xact(p: &Proc) -> String {
    // Relaxed: a label only.
    let local = p.local_xact.load(std::sync::atomic::Ordering::Relaxed);
    format!("{}/{}", p.number + 1, local)
}

impl LockManager {
    /// Every lock held or awaited: the fast-path slots of each session,
    /// then the shared table (all partitions locked at once, so the table
    /// part is one consistent picture).
    pub fn status(&self) -> Vec<LockStatus> {
        let mut out = Vec::new();
        for p in self.procs() {
            let slots = p.fast_path.lock();
            let db = slots.db;
            for (rel, modes) in slots.entries() {
                for mode in LockMode::in_mask(modes) {
                    out.push(LockStatus {
                        tag: LockTag::Relation { db, rel },
                        mode,
                        granted: true,
                        fast_path: true,
                        pid: p.pid(),
                        virtual_xact: virtual_xact(&p),
                        wait_start_us: None,
                    });
                }
            }
        }
        let parts: Vec<_> = self.partitions.iter().map(|p| p.write()).collect();
        for part in &parts {
            for (tag, lock) in &part.locks {
                for h in &lock.holders {
                    for mode in LockMode::in_mask(h.modes) {
                        out.push(LockStatus {
                            tag: *tag,
                            mode,
                            granted: true,
                            fast_path: false,
                            pid: h.proc.pid(),
                            virtual_xact: virtual_xact(&h.proc),
                            wait_start_us: None,
                        });
                    }
                }
                for w in &lock.waiters {
                    out.push(LockStatus {
                        tag: *tag,
                        mode: w.mode,
                        granted: false,
                        fast_path: false,
                        pid: w.proc.pid(),
                        virtual_xact: virtual_xact(&w.proc),
                        wait_start_us: Some(w.since_us),
                    });
                }
            }
        }
        out
    }

    /// The pids that block the session with backend pid `pid` (PostgreSQL's
    /// pg_blocking_pids): holders of modes that conflict with the mode it
    /// waits for, then earlier waiters whose requests conflict with it.
    /// Empty when it does not wait.
    pub fn blocking_pids(&self, pid: i32) -> Vec<i32> {
        let Some(p) = self.proc_by_pid(pid) else {
            return Vec::new();
        };
        let Some((tag, mode)) = p.wait.lock().on else {
            return Vec::new();
        };
        let part = self.partition(&tag).write();
        let Some(lock) = part.locks.get(&tag) else {
            return Vec::new();
        };
        let Some(pos) = lock.waiters.iter().position(|w| *w.proc == *p) else {
            return Vec::new();
        };
        let mut out: Vec<i32> = lock
            .holders
            .iter()
            .filter(|h| *h.proc != *p && mode.conflicts() & h.modes != 0)
            .map(|h| h.proc.pid())
            .collect();
        out.extend(
            lock.waiters[..pos]
                .iter()
                .filter(|w| mode.conflicts_with(w.mode))
                .map(|w| w.proc.pid()),
        );
        out
    }

    /// Whether the session with backend pid `pid` waits for a lock.
    pub fn is_waiting(&self, pid: i32) -> bool {
        self.proc_by_pid(pid)
            .is_some_and(|p| p.wait.lock().on.is_some())
    }

    /// Fast-path slots in use by all sessions (tests).
    #[cfg(test)]
    pub(crate) fn fast_path_entries(&self) -> usize {
        self.procs()
            .iter()
            .map(|p| p.fast_path.lock().entries().count())
            .sum()
    }
}

#[cfg(test)]
pub(crate) fn slots_per_owner() -> usize {
    super::fastpath::SLOTS
}
