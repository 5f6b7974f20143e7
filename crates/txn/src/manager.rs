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

use wal::{rmgr, RecordBuilder, Wal};

use crate::clog::{Clog, XidStatus};
use crate::snapshot::Snapshot;

const XID_BATCH: u64 = 1 << 16;

struct ProcArray {
    next_xid: Xid,
    xid_limit: Xid,
    running: BTreeSet<Xid>,
    /// PLACEHOLDER until the ProcArray advertises per-session xmins: for
    /// each running xid, the oldest xid running (or the next xid) when it
    /// began, a lower bound of every snapshot it takes (`global_xmin`).
    begin_xmin: std::collections::BTreeMap<Xid, Xid>,
}

/// `synchronous_commit` as a commit sees it (`remote_*` act as `on`: there
/// are no standbys).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SyncCommit {
    Off,
    Local,
    On,
}

impl SyncCommit {
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s.to_ascii_lowercase().as_str() {
            "off" | "false" | "no" | "0" => SyncCommit::Off,
            "local" => SyncCommit::Local,
            "on" | "true" | "yes" | "1" | "remote_write" | "remote_apply" => SyncCommit::On,
            _ => return None,
        })
    }
}

/// Transaction record kinds (rmgr XACT).
pub const XACT_COMMIT: u8 = 0x00;
pub const XACT_ABORT: u8 = 0x20;

pub struct TransactionManager {
    wal: &'static Wal,
    clog: Clog,
    limit_path: PathBuf,
    procarray: Mutex<ProcArray>,
    /// Signalled whenever a transaction ends (waiters for a row's writer).
    ended: Condvar,
    completed: AtomicU64,
}

impl TransactionManager {
    pub fn open(
        data_dir: &std::path::Path,
        wal: &'static Wal,
    ) -> std::io::Result<TransactionManager> {
        let clog = Clog::open(data_dir.join("pg_xact"))?;
        let limit_path = data_dir.join("global").join("pg_xid_limit");
        let next = match std::fs::read_to_string(&limit_path) {
            Ok(s) => s.trim().parse().unwrap_or(FIRST_NORMAL_XID),
            Err(_) => FIRST_NORMAL_XID,
        };
        let tm = TransactionManager {
            wal,
            clog,
            limit_path,
            procarray: Mutex::new(ProcArray {
                next_xid: next,
                xid_limit: next,
                running: BTreeSet::new(),
                begin_xmin: Default::default(),
            }),
            ended: Condvar::new(),
            completed: AtomicU64::new(0),
        };
        Ok(tm)
    }

    pub fn clog(&self) -> &Clog {
        &self.clog
    }

    /// The log every change of this server goes to.
    pub fn wal(&self) -> &'static Wal {
        self.wal
    }

    fn write_limit(&self, limit: Xid) -> std::io::Result<()> {
        common::durable::replace_file(&self.limit_path, format!("{limit}\n").as_bytes(), true)
            .map_err(|(_, _, e)| e)
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
        let oldest = pa.running.first().copied().unwrap_or(xid);
        pa.begin_xmin.insert(xid, oldest);
        pa.next_xid += 1;
        pa.running.insert(xid);
        self.publish_running(&pa);
        Ok(xid)
    }

    fn publish_running(&self, pa: &ProcArray) {
        // Relaxed: commit_siblings is a heuristic.
        self.wal
            .active_transactions
            .store(pa.running.len() as u32, Ordering::Relaxed);
    }

    /// Commits `xid`: its commit record goes to the log and, unless `sync`
    /// is off, is durable before the status changes and this returns.
    pub fn commit(&self, xid: Xid, sync: SyncCommit) -> Result<(), wal::WalError> {
        let mut rec = RecordBuilder::new(rmgr::XACT, XACT_COMMIT, xid);
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_micros() as i64)
            .unwrap_or(0);
        rec.main_data().extend_from_slice(&now.to_le_bytes());
        let end = match self.wal.insert(&rec) {
            Ok(end) => end,
            Err(e) => {
                self.finish(xid, XidStatus::Aborted, 0);
                return Err(e);
            }
        };
        if sync != SyncCommit::Off {
            if let Err(e) = self.wal.flush(end) {
                // The commit record may or may not be on disk: as
                // PostgreSQL, a failed log flush cannot be taken back.
                panic!("PANIC: could not flush the write-ahead log: {e}");
            }
        }
        self.finish(xid, XidStatus::Committed, end);
        Ok(())
    }

    /// Rolls `xid` back. The abort record needs no flush: a transaction
    /// without a commit record is aborted after a crash anyway.
    pub fn abort(&self, xid: Xid) {
        let rec = RecordBuilder::new(rmgr::XACT, XACT_ABORT, xid);
        let end = self.wal.insert(&rec).unwrap_or(0);
        self.finish(xid, XidStatus::Aborted, end);
    }

    fn finish(&self, xid: Xid, status: XidStatus, lsn: u64) {
        // Status first, then leave the running set, so a snapshot never sees
        // the transaction as neither running nor finished.
        self.clog.set_status_logged(xid, status, lsn);
        let mut pa = self.procarray.lock();
        pa.running.remove(&xid);
        pa.begin_xmin.remove(&xid);
        self.publish_running(&pa);
        self.completed.fetch_add(1, Ordering::Relaxed);
        drop(pa);
        self.ended.notify_all();
    }

    /// The next xid to be handed out (checkpoint records).
    pub fn next_xid(&self) -> Xid {
        self.procarray.lock().next_xid
    }

    /// The oldest xid whose effects some running transaction may still
    /// not see: a version deleted by a transaction that committed before it
    /// is dead to everyone (VACUUM's horizon).
    ///
    /// PLACEHOLDER until the ProcArray advertises per-session xmins: the
    /// oldest snapshot xmin any running *transaction with an xid* can hold.
    /// Snapshots of sessions without an xid (read-only statements) are not
    /// protected yet.
    pub fn global_xmin(&self) -> Xid {
        let pa = self.procarray.lock();
        pa.begin_xmin.values().copied().min().unwrap_or(pa.next_xid)
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
            XidStatus::InProgress if !self.is_running(xid) => {
                // It may have ended between the two reads: its status was
                // written before it left the running set, so read it again.
                match self.clog.status(xid) {
                    XidStatus::InProgress => XidStatus::Aborted,
                    s => s,
                }
            }
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
        self.clog
            .flush(&|lsn| self.wal.flush(lsn).map_err(std::io::Error::other))
    }
}

/// Redo of commit and abort records: the commit log.
impl wal::Redo for TransactionManager {
    fn redo(&self, rec: &wal::Record<'_>) -> Result<(), wal::RedoError> {
        let status = match rec.info {
            XACT_COMMIT => XidStatus::Committed,
            XACT_ABORT => XidStatus::Aborted,
            other => {
                return Err(wal::RedoError::new(
                    rec,
                    format!("unknown record kind {other:#x}"),
                ))
            }
        };
        self.clog.set_status_logged(rec.xid, status, rec.end);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snapshot_visibility() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("global")).unwrap();
        let tm = TransactionManager::open(dir.path(), crate::test_wal(dir.path())).unwrap();
        let a = tm.begin().unwrap();
        let b = tm.begin().unwrap();
        tm.commit(a, SyncCommit::On).unwrap();
        let snap = tm.snapshot(0, 0);
        assert!(snap.tuple_visible(a, 0, 0, 0, &tm));
        assert!(!snap.tuple_visible(b, 0, 0, 0, &tm));
        tm.abort(b);
        assert!(!tm.snapshot(0, 0).tuple_visible(b, 0, 0, 0, &tm));
        // deleted by a committed transaction
        let c = tm.begin().unwrap();
        tm.commit(c, SyncCommit::Off).unwrap();
        assert!(!tm.snapshot(0, 0).tuple_visible(a, 0, c, 0, &tm));
        // own changes: visible to later commands only
        let d = tm.begin().unwrap();
        let s = tm.snapshot(d, 1);
        assert!(s.tuple_visible(d, 0, 0, 0, &tm));
        assert!(!s.tuple_visible(d, 1, 0, 0, &tm));
        assert!(!s.tuple_visible(a, 0, d, 0, &tm));
        // xids survive a restart without reuse
        drop(tm);
        let other_wal = crate::test_wal(&dir.path().join("second"));
        let tm2 = TransactionManager::open(dir.path(), other_wal).unwrap();
        assert!(tm2.begin().unwrap() > d);
    }
}
