//! The heavyweight lock manager (PostgreSQL's `lmgr`): locks on relations,
//! transaction ids, tuples, advisory keys and catalog objects, in
//! PostgreSQL's eight modes, held to the end of a transaction or a session.
//! See the crate README ("Heavyweight locks") for the rules and lock order.
//!
//! - `LockManager` is the shared part: the lock table in 16 partitions
//!   (`table.rs`), the fast path's strong-lock counters (`fastpath.rs`) and
//!   the registry of lock holders (`Proc`, PostgreSQL's PGPROC).
//! - `LockOwner` is one session's handle (`owner.rs`): its `Proc` and a local
//!   table of what it holds, so taking a held lock again is a map lookup and
//!   the transaction's end releases everything in one pass.
//! - Waiting, `lock_timeout` and the deadlock check after `deadlock_timeout`
//!   are in `owner.rs` and `deadlock.rs`.

mod deadlock;
mod fastpath;
mod mode;
mod owner;
mod status;
mod table;
mod tag;
#[cfg(test)]
mod tests;

use std::sync::atomic::{AtomicI32, AtomicU64};
use std::sync::Arc;
use std::time::Duration;

use common::{PgError, SqlState};
use parking_lot::{Condvar, Mutex, RwLock};
use storage::lwlock::{LwRwLock, Tranche};

pub use mode::{LockMode, ModeMask};
pub use owner::{LockOwner, LockScope, ReleaseMark, WaitContext};
pub use status::LockStatus;
pub use tag::{AdvisoryKey, LockTag, CATALOG_CHANGE};

/// Partitions of the shared lock table (PostgreSQL's NUM_LOCK_PARTITIONS).
pub const PARTITIONS: usize = 16;

/// How a session waits: PostgreSQL's `deadlock_timeout` and `lock_timeout`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LockSettings {
    /// How long a waiter sleeps before it checks for a deadlock.
    pub deadlock_timeout: Duration,
    /// How long a wait may last before it fails with 55P03 (None: forever).
    pub lock_timeout: Option<Duration>,
}

impl Default for LockSettings {
    fn default() -> Self {
        LockSettings {
            deadlock_timeout: Duration::from_secs(1),
            lock_timeout: None,
        }
    }
}

/// One edge of a deadlock cycle: `pid` waits for `mode` on `tag` and is
/// blocked by `blocker`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeadlockEdge {
    pub pid: i32,
    pub mode: LockMode,
    pub tag: LockTag,
    pub blocker: i32,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeadlockReport {
    /// The cycle, starting with the process that found it.
    pub edges: Vec<DeadlockEdge>,
}

impl DeadlockReport {
    /// PostgreSQL's DETAIL: one line per edge.
    pub fn detail(&self) -> String {
        self.edges
            .iter()
            .map(|e| {
                format!(
                    "Process {} waits for {} on {}; blocked by process {}.",
                    e.pid,
                    e.mode.name(),
                    e.tag.describe(),
                    e.blocker
                )
            })
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// Why a lock was not acquired.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    /// NOWAIT, or a try-lock: it would have had to wait.
    #[error("lock not available")]
    NotAvailable,
    #[error("canceling statement due to lock timeout")]
    Timeout,
    #[error("deadlock detected")]
    Deadlock(DeadlockReport),
    /// The wait's check (cancel, statement_timeout, termination) failed.
    #[error("{}", .0.message)]
    Interrupted(PgError),
}

impl LockError {
    /// The error a client sees. `not_available` words NOWAIT's failure,
    /// which names the object (`could not obtain lock on relation "t"`).
    pub fn into_pg(self, not_available: impl FnOnce() -> PgError) -> PgError {
        match self {
            LockError::NotAvailable => not_available(),
            LockError::Timeout => PgError::new(
                SqlState::LOCK_NOT_AVAILABLE,
                "canceling statement due to lock timeout",
            ),
            LockError::Deadlock(report) => {
                PgError::new(SqlState::DEADLOCK_DETECTED, "deadlock detected")
                    .with_detail(report.detail())
                    .with_hint("See server log for query details.")
            }
            LockError::Interrupted(e) => e,
        }
    }
}

/// What a waiter's sleep ends with, set by whoever grants it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum WaitStatus {
    NotWaiting,
    Waiting,
    Granted,
}

struct WaitState {
    status: WaitStatus,
    /// The lock waited for (pg_blocking_pids finds the queue through it).
    on: Option<(LockTag, LockMode)>,
}

/// A lock holder's shared state (PostgreSQL's PGPROC): its fast-path slots
/// and its wait. One per session, reused after the session ends.
pub struct Proc {
    number: u32,
    /// The backend pid of the session using it (0 while free).
    pid: AtomicI32,
    /// Bumped at each transaction end: pg_locks' virtualtransaction.
    local_xact: AtomicU64,
    fast_path: Mutex<fastpath::Slots>,
    wait: Mutex<WaitState>,
    woken: Condvar,
}

impl Proc {
    fn pid(&self) -> i32 {
        // Relaxed: the pid is set before the proc is handed out (registry
        // lock) and only read for reports.
        self.pid.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Wakes the proc after its request was granted. Called with the
    /// partition lock of the lock held (lock order: partition -> wait).
    fn grant_wakeup(&self) {
        let mut w = self.wait.lock();
        w.status = WaitStatus::Granted;
        w.on = None;
        self.woken.notify_one();
    }
}

impl PartialEq for Proc {
    fn eq(&self, other: &Self) -> bool {
        self.number == other.number
    }
}

/// Procs by number, with the free ones to reuse.
#[derive(Default)]
struct Registry {
    procs: Vec<Arc<Proc>>,
    free: Vec<u32>,
}

/// The shared lock table. One per server.
pub struct LockManager {
    partitions: Vec<LwRwLock<table::Partition>>,
    strong: fastpath::StrongCounts,
    registry: RwLock<Registry>,
}

impl Default for LockManager {
    fn default() -> Self {
        Self::new()
    }
}

impl LockManager {
    pub fn new() -> LockManager {
        LockManager {
            partitions: (0..PARTITIONS)
                .map(|_| LwRwLock::new(Tranche::LockManager, table::Partition::default()))
                .collect(),
            strong: fastpath::StrongCounts::new(),
            registry: RwLock::new(Registry::default()),
        }
    }

    fn partition_index(&self, tag: &LockTag) -> usize {
        (tag.hash() % PARTITIONS as u64) as usize
    }

    fn partition(&self, tag: &LockTag) -> &LwRwLock<table::Partition> {
        &self.partitions[self.partition_index(tag)]
    }

    /// A proc for a new session with backend pid `pid`.
    fn register(&self, pid: i32, db: common::Oid) -> Arc<Proc> {
        let mut reg = self.registry.write();
        let proc = match reg.free.pop() {
            Some(n) => reg.procs[n as usize].clone(),
            None => {
                let number = reg.procs.len() as u32;
                let p = Arc::new(Proc {
                    number,
                    pid: AtomicI32::new(0),
                    local_xact: AtomicU64::new(1),
                    fast_path: Mutex::new(fastpath::Slots::default()),
                    wait: Mutex::new(WaitState {
                        status: WaitStatus::NotWaiting,
                        on: None,
                    }),
                    woken: Condvar::new(),
                });
                reg.procs.push(p.clone());
                p
            }
        };
        // Relaxed: published to other threads by the registry lock.
        proc.pid.store(pid, std::sync::atomic::Ordering::Relaxed);
        proc.fast_path.lock().reset(db);
        proc
    }

    fn unregister(&self, proc: &Proc) {
        debug_assert!(proc.fast_path.lock().is_empty(), "proc freed holding locks");
        proc.pid.store(0, std::sync::atomic::Ordering::Relaxed);
        self.registry.write().free.push(proc.number);
    }

    /// The procs in use, for the fast path's transfer and pg_locks.
    fn procs(&self) -> Vec<Arc<Proc>> {
        let reg = self.registry.read();
        reg.procs.iter().filter(|p| p.pid() != 0).cloned().collect()
    }

    fn proc_by_pid(&self, pid: i32) -> Option<Arc<Proc>> {
        if pid == 0 {
            return None;
        }
        let reg = self.registry.read();
        reg.procs.iter().find(|p| p.pid() == pid).cloned()
    }
}
