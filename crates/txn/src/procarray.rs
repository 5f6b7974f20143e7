//! The ProcArray: running transaction ids (top-level and sub-transactions)
//! in one dense sorted array, the sessions' advertised snapshot xmins, and
//! snapshot construction with reuse.
//!
//! Rules (see the crate README):
//! - Xids enter `running` in increasing order (they are handed out under the
//!   same mutex), so the array stays sorted by appending.
//! - A snapshot's xmax is `latest_completed + 1`: every xid at or above it
//!   is running or not yet started, so the running list only needs xids
//!   below it, and starting a transaction does not invalidate a snapshot.
//!   Only a completion does: snapshots are reused while `completed` has not
//!   moved since the cached one was built (PostgreSQL 14's xactCompletionCount).
//! - A session's advertised xmin is set under the mutex when it takes a
//!   snapshot and cleared without it; `global_xmin` reads them under the
//!   mutex, so it never misses a snapshot that exists when it returns.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use common::Xid;

use crate::snapshot::SnapshotData;

/// What the ProcArray knows about one session (PGPROC's part of it).
#[derive(Debug)]
pub struct ProcShared {
    /// The session's backend pid (pg_stat_activity, lock messages).
    pub pid: i32,
    /// Its top-level xid while it has one (pg_stat_activity.backend_xid).
    xid: AtomicU64,
    /// The oldest xmin of a snapshot it may still use; 0 if none.
    xmin: AtomicU64,
    in_use: AtomicBool,
}

/// A session's registration in the ProcArray; unregisters when dropped.
#[derive(Debug, Clone)]
pub struct Proc(Arc<ProcShared>);

impl Proc {
    pub fn pid(&self) -> i32 {
        self.0.pid
    }
    /// The top-level xid shown as backend_xid (0: none).
    pub fn xid(&self) -> Xid {
        self.0.xid.load(Ordering::Relaxed)
    }
    pub fn set_xid(&self, xid: Xid) {
        // Relaxed: display only; visibility never reads it.
        self.0.xid.store(xid, Ordering::Relaxed);
    }
    /// The advertised xmin (backend_xmin; 0: none).
    pub fn xmin(&self) -> Xid {
        self.0.xmin.load(Ordering::Relaxed)
    }
    /// The session holds no snapshot any more: the horizon may pass it.
    pub fn clear_xmin(&self) {
        // Relaxed: a late store only keeps the horizon back a little longer;
        // `global_xmin` reads under the ProcArray mutex.
        self.0.xmin.store(0, Ordering::Relaxed);
    }
    /// Ends the registration (the session is gone).
    pub fn unregister(&self) {
        self.clear_xmin();
        self.set_xid(0);
        self.0.in_use.store(false, Ordering::Relaxed);
    }
}

pub(crate) struct ProcArray {
    pub(crate) next_xid: Xid,
    pub(crate) xid_limit: Xid,
    /// Running xids, sorted (appended in assignment order).
    pub(crate) running: Vec<Xid>,
    /// The highest xid that has committed or aborted.
    pub(crate) latest_completed: Xid,
    /// Transactions ended so far (snapshot reuse).
    pub(crate) completed: u64,
    cached: Option<(u64, Arc<SnapshotData>)>,
    procs: Vec<Arc<ProcShared>>,
}

impl ProcArray {
    pub(crate) fn new(next_xid: Xid) -> ProcArray {
        ProcArray {
            next_xid,
            xid_limit: next_xid,
            running: Vec::new(),
            latest_completed: next_xid.saturating_sub(1),
            completed: 0,
            cached: None,
            procs: Vec::new(),
        }
    }

    pub(crate) fn is_running(&self, xid: Xid) -> bool {
        self.running.binary_search(&xid).is_ok()
    }

    pub(crate) fn add_running(&mut self, xid: Xid) {
        debug_assert!(self.running.last().is_none_or(|&l| l < xid));
        self.running.push(xid);
    }

    /// Removes the ended `xids` and counts one completion.
    pub(crate) fn remove_running(&mut self, xids: &[Xid]) {
        for &x in xids {
            if let Ok(i) = self.running.binary_search(&x) {
                self.running.remove(i);
            }
            self.latest_completed = self.latest_completed.max(x);
        }
        self.completed += 1;
    }

    pub(crate) fn register(&mut self, pid: i32) -> Proc {
        self.procs.retain(|p| p.in_use.load(Ordering::Relaxed));
        let shared = Arc::new(ProcShared {
            pid,
            xid: AtomicU64::new(0),
            xmin: AtomicU64::new(0),
            in_use: AtomicBool::new(true),
        });
        self.procs.push(shared.clone());
        Proc(shared)
    }

    /// The current snapshot data, reused while no transaction has ended;
    /// `proc`'s advertised xmin is set if it had none.
    pub(crate) fn snapshot(&mut self, proc: Option<&Proc>) -> Arc<SnapshotData> {
        let data = match &self.cached {
            Some((stamp, data)) if *stamp == self.completed => data.clone(),
            _ => {
                let xmax = self.latest_completed + 1;
                let end = self.running.partition_point(|&x| x < xmax);
                let running = self.running[..end].to_vec();
                let data = Arc::new(SnapshotData {
                    xmin: running.first().copied().unwrap_or(xmax),
                    xmax,
                    running,
                });
                self.cached = Some((self.completed, data.clone()));
                data
            }
        };
        if let Some(p) = proc {
            if p.xmin() == 0 {
                // Relaxed: ordered by the ProcArray mutex (see module rules).
                p.0.xmin.store(data.xmin, Ordering::Relaxed);
            }
        }
        data
    }

    /// The oldest xid whose effects some running transaction or live
    /// snapshot may still not see as finished: versions deleted by
    /// transactions that committed below it are dead to everyone.
    pub(crate) fn global_xmin(&self) -> Xid {
        let mut horizon = self.latest_completed + 1;
        if let Some(&first) = self.running.first() {
            horizon = horizon.min(first);
        }
        for p in &self.procs {
            let x = p.xmin.load(Ordering::Relaxed);
            if x != 0 && p.in_use.load(Ordering::Relaxed) {
                horizon = horizon.min(x);
            }
        }
        horizon
    }

    /// Registered sessions (pg_stat_activity's backend_xid/xmin).
    pub(crate) fn procs(&self) -> impl Iterator<Item = &Arc<ProcShared>> {
        self.procs
            .iter()
            .filter(|p| p.in_use.load(Ordering::Relaxed))
    }
}

impl ProcShared {
    pub fn xid(&self) -> Xid {
        self.xid.load(Ordering::Relaxed)
    }
    pub fn xmin(&self) -> Xid {
        self.xmin.load(Ordering::Relaxed)
    }
}
