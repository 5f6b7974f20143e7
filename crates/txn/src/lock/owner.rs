//! A session's handle on the lock manager: its `Proc` and the local table
//! of what it holds (PostgreSQL's LOCALLOCK), acquisition with the fast
//! path, waiting, and release at transaction end, at a savepoint's
//! rollback, or one lock at a time.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{Oid, PgResult};

use super::deadlock;
use super::fastpath;
use super::mode::LockMode;
use super::table::Enqueued;
use super::tag::LockTag;
use super::{DeadlockEdge, DeadlockReport, LockError, LockManager, LockSettings, Proc, WaitStatus};

/// How long a waiter sleeps between checks of its interrupts.
const POLL: Duration = Duration::from_millis(50);

/// Until when a lock is held.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LockScope {
    /// To the end of the top-level transaction (or of the sub-transaction
    /// that took it, if that one rolls back: `release_since`).
    Transaction,
    /// Until released, or the session ends (session-level advisory locks).
    Session,
}

/// How a request that must wait does it.
pub struct WaitContext<'a> {
    pub settings: LockSettings,
    /// Cancel, statement_timeout, termination: an error ends the wait
    /// with that error.
    pub check: &'a mut dyn FnMut() -> PgResult<()>,
}

/// The position in a transaction's acquisitions that `release_since`
/// rolls back to (a savepoint's).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct ReleaseMark(u64);

#[derive(Default)]
struct LocalLock {
    /// Held for the transaction: the sequence number of that acquisition.
    xact: Option<u64>,
    /// Session-level acquisitions not yet released.
    session: u32,
    /// Counted in the fast path's strong-lock bucket while held.
    strong: bool,
}

impl LocalLock {
    fn held(&self) -> bool {
        self.xact.is_some() || self.session > 0
    }
}

/// FNV-1a: the local table is looked up for every lock a statement takes,
/// with small keys that need no protection from chosen collisions (only
/// this session's own lock requests go in).
#[derive(Default)]
struct FnvHasher(u64);

impl std::hash::Hasher for FnvHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        let mut h = if self.0 == 0 {
            0xcbf2_9ce4_8422_2325
        } else {
            self.0
        };
        for b in bytes {
            h ^= *b as u64;
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        self.0 = h;
    }
}

type LocalTable = HashMap<(LockTag, LockMode), LocalLock, std::hash::BuildHasherDefault<FnvHasher>>;

pub struct LockOwner {
    mgr: Arc<LockManager>,
    proc: Arc<Proc>,
    /// The session's database: only its relations take the fast path.
    db: Oid,
    local: LocalTable,
    next_seq: u64,
}

impl LockOwner {
    /// A lock owner for the session with backend pid `pid` (the pid the
    /// deadlock report and pg_locks show) connected to database `db`.
    pub fn new(mgr: Arc<LockManager>, pid: i32, db: Oid) -> LockOwner {
        let proc = mgr.register(pid, db);
        LockOwner {
            mgr,
            proc,
            db,
            local: LocalTable::default(),
            next_seq: 0,
        }
    }

    pub fn manager(&self) -> &Arc<LockManager> {
        &self.mgr
    }

    pub fn pid(&self) -> i32 {
        self.proc.pid()
    }

    /// Whether this owner holds `mode` on `tag` (in either scope).
    pub fn holds(&self, tag: &LockTag, mode: LockMode) -> bool {
        self.local.get(&(*tag, mode)).is_some_and(LocalLock::held)
    }

    /// Whether this owner holds any lock for its transaction.
    pub fn holds_transaction_locks(&self) -> bool {
        self.local.values().any(|l| l.xact.is_some())
    }

    /// Takes `mode` on `tag`. A lock already held is only counted again.
    /// `wait` None: fail with `NotAvailable` instead of waiting (NOWAIT).
    pub fn acquire(
        &mut self,
        tag: LockTag,
        mode: LockMode,
        scope: LockScope,
        wait: Option<&mut WaitContext<'_>>,
    ) -> Result<(), LockError> {
        let held = self.local.get(&(tag, mode)).is_some_and(LocalLock::held);
        let strong = if held {
            false
        } else {
            self.acquire_new(tag, mode, wait)?
        };
        let seq = self.next_seq;
        let l = self.local.entry((tag, mode)).or_default();
        l.strong |= strong;
        match scope {
            LockScope::Transaction => {
                if l.xact.is_none() {
                    l.xact = Some(seq);
                    self.next_seq += 1;
                }
            }
            LockScope::Session => l.session += 1,
        }
        Ok(())
    }

    /// Returns whether the new lock was counted as a strong one.
    fn acquire_new(
        &mut self,
        tag: LockTag,
        mode: LockMode,
        wait: Option<&mut WaitContext<'_>>,
    ) -> Result<bool, LockError> {
        if let Some(rel) = fastpath::eligible(&tag, mode, self.db) {
            if self.mgr.fast_path_grant(&self.proc, &tag, rel, mode) {
                return Ok(false);
            }
        }
        let strong = fastpath::is_strong_relation_lock(&tag, mode);
        if strong {
            self.mgr.strong_begin(&tag);
        }
        match self.acquire_in_table(tag, mode, wait) {
            Ok(()) => Ok(strong),
            Err(e) => {
                if strong {
                    self.mgr.strong.decrement(&tag);
                }
                Err(e)
            }
        }
    }

    fn acquire_in_table(
        &mut self,
        tag: LockTag,
        mode: LockMode,
        wait: Option<&mut WaitContext<'_>>,
    ) -> Result<(), LockError> {
        let mut part = self.mgr.partition(&tag).write();
        let lock = part.lock_mut(tag);
        if lock.grantable_now(&self.proc, mode) {
            lock.grant(&self.proc, mode);
            return Ok(());
        }
        let Some(ctx) = wait else {
            part.forget_if_unused(&tag);
            return Err(LockError::NotAvailable);
        };
        match lock.enqueue(&self.proc, mode, now_us()) {
            Enqueued::Granted => return Ok(()),
            Enqueued::Deadlock { other, other_mode } => {
                part.forget_if_unused(&tag);
                let me = self.proc.pid();
                return Err(LockError::Deadlock(DeadlockReport {
                    edges: vec![
                        DeadlockEdge {
                            pid: me,
                            mode,
                            tag,
                            blocker: other.pid(),
                        },
                        DeadlockEdge {
                            pid: other.pid(),
                            mode: other_mode,
                            tag,
                            blocker: me,
                        },
                    ],
                }));
            }
            Enqueued::Queued => {}
        }
        {
            // Under the partition lock, so a release that grants us after
            // we let go of it finds us waiting (lock order: partition -> wait).
            let mut w = self.proc.wait.lock();
            w.status = WaitStatus::Waiting;
            w.on = Some((tag, mode));
        }
        drop(part);
        self.sleep(tag, ctx)
    }

    /// Sleeps until granted, checking the interrupts every `POLL`, failing
    /// at `lock_timeout` and checking for a deadlock once `deadlock_timeout`
    /// has passed.
    fn sleep(&mut self, tag: LockTag, ctx: &mut WaitContext<'_>) -> Result<(), LockError> {
        let _published =
            storage::lwlock::report_wait(storage::lwlock::lock_wait_event(tag.kind_name()));
        let start = Instant::now();
        let deadlock_at = start + ctx.settings.deadlock_timeout;
        let timeout_at = ctx.settings.lock_timeout.map(|t| start + t);
        let mut deadlock_checked = false;
        loop {
            {
                let mut w = self.proc.wait.lock();
                if w.status != WaitStatus::Granted {
                    let now = Instant::now();
                    let mut until = now + POLL;
                    if !deadlock_checked {
                        until = until.min(deadlock_at);
                    }
                    if let Some(t) = timeout_at {
                        until = until.min(t);
                    }
                    if until > now {
                        self.proc.woken.wait_until(&mut w, until);
                    }
                }
                if w.status == WaitStatus::Granted {
                    w.status = WaitStatus::NotWaiting;
                    return Ok(());
                }
            }
            if let Err(e) = (ctx.check)() {
                return self.abandon_wait(tag, LockError::Interrupted(e));
            }
            let now = Instant::now();
            if timeout_at.is_some_and(|t| now >= t) {
                return self.abandon_wait(tag, LockError::Timeout);
            }
            if !deadlock_checked && now >= deadlock_at {
                deadlock_checked = true;
                if let Some(report) = deadlock::check(&self.mgr, &self.proc) {
                    return Err(LockError::Deadlock(report));
                }
            }
        }
    }

    /// Leaves the queue after an interrupt or timeout; if the lock was
    /// granted meanwhile it is kept (the interrupt is seen at the next check).
    fn abandon_wait(&mut self, tag: LockTag, err: LockError) -> Result<(), LockError> {
        let mut part = self.mgr.partition(&tag).write();
        let lock = part.lock_mut(tag);
        let dequeued = lock.dequeue(&self.proc);
        if dequeued {
            // Our request may have kept later waiters from being granted.
            lock.wake_waiters();
            part.forget_if_unused(&tag);
        }
        let mut w = self.proc.wait.lock();
        w.status = WaitStatus::NotWaiting;
        w.on = None;
        if dequeued {
            Err(err)
        } else {
            Ok(())
        }
    }

    /// Releases one hold of `mode` on `tag` in `scope` (a session-level
    /// advisory lock counts each acquisition); false if it was not held in
    /// that scope.
    pub fn release(&mut self, tag: LockTag, mode: LockMode, scope: LockScope) -> bool {
        let Some(l) = self.local.get_mut(&(tag, mode)) else {
            return false;
        };
        match scope {
            LockScope::Transaction if l.xact.is_some() => l.xact = None,
            LockScope::Session if l.session > 0 => l.session -= 1,
            _ => return false,
        }
        if !l.held() {
            let l = self.local.remove(&(tag, mode)).expect("found above");
            self.release_shared(tag, mode, l.strong);
        }
        true
    }

    /// Gives the lock back to the shared structures.
    fn release_shared(&self, tag: LockTag, mode: LockMode, strong: bool) {
        let in_slots = fastpath::eligible(&tag, mode, self.db).is_some()
            && self.mgr.fast_path_ungrant(&self.proc, &tag, mode);
        if !in_slots {
            let mut part = self.mgr.partition(&tag).write();
            let lock = part.lock_mut(tag);
            let held = lock.ungrant(&self.proc, mode);
            debug_assert!(held, "released {mode:?} on {tag:?} which was not held");
            lock.wake_waiters();
            part.forget_if_unused(&tag);
        }
        if strong {
            self.mgr.strong.decrement(&tag);
        }
    }

    /// Where the transaction's acquisitions stand now (a savepoint).
    pub fn mark(&self) -> ReleaseMark {
        ReleaseMark(self.next_seq)
    }

    /// Releases the transaction-scope locks first taken after `mark`
    /// (ROLLBACK TO SAVEPOINT: a rolled-back sub-transaction's locks go;
    /// locks the transaction held before it stay).
    pub fn release_since(&mut self, mark: ReleaseMark) {
        self.release_where(|l| l.xact.is_some_and(|s| s >= mark.0));
    }

    /// Releases every transaction-scope lock (commit or rollback).
    pub fn release_transaction(&mut self) {
        self.release_where(|l| l.xact.is_some());
        // Relaxed: only pg_locks reads it, as a label.
        self.proc
            .local_xact
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }

    /// Releases every session-level lock (pg_advisory_unlock_all).
    pub fn release_session_locks(&mut self) {
        for l in self.local.values_mut() {
            l.session = 0;
        }
        self.release_where(|_| false);
    }

    /// Drops the transaction hold of the locks `pick` selects, then gives
    /// back every lock no longer held in any scope.
    fn release_where(&mut self, pick: impl Fn(&LocalLock) -> bool) {
        let mut gone = Vec::new();
        for (key, l) in self.local.iter_mut() {
            if pick(l) {
                l.xact = None;
            }
            if !l.held() {
                gone.push(*key);
            }
        }
        for (tag, mode) in gone {
            let l = self.local.remove(&(tag, mode)).expect("listed above");
            self.release_shared(tag, mode, l.strong);
        }
    }
}

impl Drop for LockOwner {
    fn drop(&mut self) {
        for l in self.local.values_mut() {
            l.session = 0;
        }
        self.release_where(|_| true);
        self.mgr.unregister(&self.proc);
    }
}

/// Now, in microseconds since the Unix epoch (pg_locks.waitstart).
fn now_us() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_micros() as i64)
        .unwrap_or(0)
}
