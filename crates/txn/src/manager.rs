//! Transaction manager: hands out 64-bit xids, tracks running transactions
//! (the ProcArray), records commits and aborts, and builds snapshots.
//!
//! Xids are reserved in batches by raising a limit stored durably in
//! `global/pg_xid_limit`, so xids are never reused after a crash.
//!
//! Lock order: `procarray` before the clog's page lock; nothing else is held
//! while taking `procarray`.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

use common::ids::FIRST_NORMAL_XID;
use common::Xid;
use parking_lot::{Condvar, Mutex};

use crate::clog::{Clog, XidStatus};
use crate::snapshot::Snapshot;

const XID_BATCH: u64 = 1 << 16;

struct ProcArray {
    next_xid: Xid,
    xid_limit: Xid,
    running: BTreeSet<Xid>,
}

pub struct TransactionManager {
    clog: Clog,
    limit_path: PathBuf,
    procarray: Mutex<ProcArray>,
    /// Signalled whenever a transaction ends (waiters for a row's writer).
    ended: Condvar,
    completed: AtomicU64,
}

impl TransactionManager {
    pub fn open(data_dir: &std::path::Path) -> std::io::Result<TransactionManager> {
        let clog = Clog::open(data_dir.join("pg_xact"))?;
        let limit_path = data_dir.join("global").join("pg_xid_limit");
        let next = match std::fs::read_to_string(&limit_path) {
            Ok(s) => s.trim().parse().unwrap_or(FIRST_NORMAL_XID),
            Err(_) => FIRST_NORMAL_XID,
        };
        let tm = TransactionManager {
            clog,
            limit_path,
            procarray: Mutex::new(ProcArray {
                next_xid: next,
                xid_limit: next,
                running: BTreeSet::new(),
            }),
            ended: Condvar::new(),
            completed: AtomicU64::new(0),
        };
        Ok(tm)
    }

    pub fn clog(&self) -> &Clog {
        &self.clog
    }

    fn write_limit(&self, limit: Xid) -> std::io::Result<()> {
        let tmp = self.limit_path.with_extension("tmp");
        std::fs::write(&tmp, format!("{limit}\n"))?;
        std::fs::File::open(&tmp)?.sync_all()?;
        std::fs::rename(&tmp, &self.limit_path)
    }

    /// Starts a transaction: a new xid, registered as running.
    pub fn begin(&self) -> std::io::Result<Xid> {
        let mut pa = self.procarray.lock();
        if pa.next_xid >= pa.xid_limit {
            let limit = pa.next_xid + XID_BATCH;
            self.write_limit(limit)?;
            pa.xid_limit = limit;
        }
        let xid = pa.next_xid;
        pa.next_xid += 1;
        pa.running.insert(xid);
        Ok(xid)
    }

    /// Ends `xid` as committed or aborted.
    pub fn end(&self, xid: Xid, commit: bool) {
        let status = if commit {
            XidStatus::Committed
        } else {
            XidStatus::Aborted
        };
        // Status first, then leave the running set, so a snapshot never sees
        // the transaction as neither running nor finished.
        self.clog.set_status(xid, status);
        let mut pa = self.procarray.lock();
        pa.running.remove(&xid);
        self.completed.fetch_add(1, Ordering::Relaxed);
        drop(pa);
        self.ended.notify_all();
    }

    pub fn snapshot(&self, own_xid: Xid, command_id: u32) -> Snapshot {
        let pa = self.procarray.lock();
        let running: Vec<Xid> = pa
            .running
            .iter()
            .copied()
            .filter(|&x| x != own_xid)
            .collect();
        Snapshot {
            xmin: running.first().copied().unwrap_or(pa.next_xid),
            xmax: pa.next_xid,
            running,
            own_xid,
            command_id,
            last_lookup: std::cell::Cell::new((0, false)),
        }
    }

    pub fn is_running(&self, xid: Xid) -> bool {
        self.procarray.lock().running.contains(&xid)
    }

    /// Status of a finished or crashed transaction; running ones report InProgress.
    pub fn status(&self, xid: Xid) -> XidStatus {
        match self.clog.status(xid) {
            XidStatus::InProgress if !self.is_running(xid) => XidStatus::Aborted,
            s => s,
        }
    }

    /// Blocks until `xid` is no longer running (a row's other writer), or the
    /// `cancelled` check says to stop. Returns its final status.
    pub fn wait_for(&self, xid: Xid, cancelled: &dyn Fn() -> bool) -> Option<XidStatus> {
        let mut pa = self.procarray.lock();
        while pa.running.contains(&xid) {
            if cancelled() {
                return None;
            }
            self.ended
                .wait_for(&mut pa, std::time::Duration::from_millis(100));
        }
        drop(pa);
        Some(self.status(xid))
    }

    /// Persists the commit log (checkpoint, shutdown).
    pub fn flush(&self) -> std::io::Result<()> {
        self.clog.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snapshot_visibility() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("global")).unwrap();
        let tm = TransactionManager::open(dir.path()).unwrap();
        let a = tm.begin().unwrap();
        let b = tm.begin().unwrap();
        tm.end(a, true);
        let snap = tm.snapshot(0, 0);
        assert!(snap.tuple_visible(a, 0, 0, 0, &tm));
        assert!(!snap.tuple_visible(b, 0, 0, 0, &tm));
        tm.end(b, false);
        assert!(!tm.snapshot(0, 0).tuple_visible(b, 0, 0, 0, &tm));
        // deleted by a committed transaction
        let c = tm.begin().unwrap();
        tm.end(c, true);
        assert!(!tm.snapshot(0, 0).tuple_visible(a, 0, c, 0, &tm));
        // own changes: visible to later commands only
        let d = tm.begin().unwrap();
        let s = tm.snapshot(d, 1);
        assert!(s.tuple_visible(d, 0, 0, 0, &tm));
        assert!(!s.tuple_visible(d, 1, 0, 0, &tm));
        assert!(!s.tuple_visible(a, 0, d, 0, &tm));
        // xids survive a restart without reuse
        drop(tm);
        let tm2 = TransactionManager::open(dir.path()).unwrap();
        assert!(tm2.begin().unwrap() > d);
    }
}
