//! Transaction manager: hands out 64-bit xids, tracks running transactions
//! (the ProcArray), records commits and aborts, and builds snapshots.
//!
//! Xids are reserved in batches by raising a limit stored durably in
//! `global/pg_xid_limit`, so xids are never reused after a crash.
//!
//! Lock order: `procarray` before the clog's page lock; nothing else is held
//! while taking `procarray`.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use common::ids::FIRST_NORMAL_XID;
use common::Xid;
use parking_lot::{Condvar, Mutex};

use wal::{rmgr, RecordBuilder, Wal};

use crate::clog::{Clog, XidStatus};
use crate::procarray::{Proc, ProcArray, ProcShared};
use crate::snapshot::{OwnXids, Snapshot, SnapshotData};

const XID_BATCH: u64 = 1 << 16;

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
    /// Ending transactions waiting to leave the ProcArray together.
    clear_group: ClearGroup,
    /// Whether ends are grouped when the ProcArray mutex is busy
    /// (`procarray_group_clear`; off only to measure what grouping gains).
    group_clear: AtomicBool,
    /// Signalled whenever a transaction ends (waiters for a row's writer).
    ended: Condvar,
    /// The heavyweight lock manager (`crate::lock`).
    locks: Arc<crate::lock::LockManager>,
    /// Serializable snapshot isolation's state (`crate::ssi`).
    predicate: crate::ssi::PredicateLockManager,
}

/// One ending transaction's xids, queued for a group leader to clear.
struct ClearRequest {
    xids: Vec<Xid>,
    /// Set by the leader once the xids are gone from the ProcArray.
    done: AtomicBool,
    waiter: std::thread::Thread,
}

/// PostgreSQL's ProcArrayGroupClearXid: when the ProcArray mutex is busy, an
/// ending transaction queues its xids; the one that finds the queue empty
/// leads: it takes the mutex once, removes every queued request's xids and
/// wakes their owners, so N commits cost one acquisition instead of N.
#[derive(Default)]
struct ClearGroup {
    queue: Mutex<Vec<Arc<ClearRequest>>>,
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
            procarray: Mutex::new(ProcArray::new(next)),
            clear_group: ClearGroup::default(),
            group_clear: AtomicBool::new(true),
            ended: Condvar::new(),
            locks: Default::default(),
            predicate: Default::default(),
        };
        Ok(tm)
    }

    /// The heavyweight lock manager.
    pub fn locks(&self) -> &Arc<crate::lock::LockManager> {
        &self.locks
    }

    /// SERIALIZABLE transactions' predicate locks and conflicts.
    pub fn predicate(&self) -> &crate::ssi::PredicateLockManager {
        &self.predicate
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

    /// Registers a session (its advertised snapshot xmin and xid).
    pub fn register_proc(&self, pid: i32) -> Proc {
        self.procarray.lock().register(pid)
    }

    /// Starts a transaction or sub-transaction: a new xid, registered as
    /// running. A sub-transaction's xid is always newer than its parent's.
    pub fn begin(&self) -> std::io::Result<Xid> {
        let mut pa = self.procarray.lock();
        if pa.next_xid >= pa.xid_limit {
            let limit = pa.next_xid + XID_BATCH;
            self.write_limit(limit)?;
            pa.xid_limit = limit;
        }
        let xid = pa.next_xid;
        pa.next_xid += 1;
        pa.add_running(xid);
        self.publish_running(&pa);
        Ok(xid)
    }

    /// Starts a transaction for a session: its xid, with the session
    /// holding ExclusiveLock on it until the transaction ends, so others
    /// wait for it through the lock manager (`wait_for_locked`). The lock
    /// goes with the session's other transaction locks, after `commit` or
    /// `abort` took the xid out of the running set.
    pub fn begin_locked(&self, owner: &mut crate::lock::LockOwner) -> std::io::Result<Xid> {
        let xid = self.begin()?;
        owner
            .acquire(
                crate::lock::LockTag::Transaction(xid),
                crate::lock::LockMode::Exclusive,
                crate::lock::LockScope::Transaction,
                None,
            )
            .expect("nobody else can hold a lock on a new xid");
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
        self.commit_tree(xid, &[], sync)
    }

    /// Commits `xid` with its committed sub-transactions `subxids`, all
    /// atomically: one commit record lists them.
    pub fn commit_tree(
        &self,
        xid: Xid,
        subxids: &[Xid],
        sync: SyncCommit,
    ) -> Result<(), wal::WalError> {
        let mut rec = RecordBuilder::new(rmgr::XACT, XACT_COMMIT, xid);
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_micros() as i64)
            .unwrap_or(0);
        rec.main_data().extend_from_slice(&now.to_le_bytes());
        put_subxids(rec.main_data(), subxids);
        let end = match self.wal.insert(&rec) {
            Ok(end) => end,
            Err(e) => {
                self.finish(xid, subxids, XidStatus::Aborted, 0);
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
        self.finish(xid, subxids, XidStatus::Committed, end);
        Ok(())
    }

    /// Rolls `xid` back. The abort record needs no flush: a transaction
    /// without a commit record is aborted after a crash anyway.
    pub fn abort(&self, xid: Xid) {
        self.abort_tree(xid, &[]);
    }

    /// Rolls back `xid` and `subxids` (a transaction with its
    /// sub-transactions, or a sub-transaction with its children at
    /// ROLLBACK TO SAVEPOINT).
    pub fn abort_tree(&self, xid: Xid, subxids: &[Xid]) {
        let mut rec = RecordBuilder::new(rmgr::XACT, XACT_ABORT, xid);
        put_subxids(rec.main_data(), subxids);
        let end = self.wal.insert(&rec).unwrap_or(0);
        self.finish(xid, subxids, XidStatus::Aborted, end);
    }

    fn finish(&self, xid: Xid, subxids: &[Xid], status: XidStatus, lsn: u64) {
        // Status first, then leave the running set, so a snapshot never sees
        // the transaction as neither running nor finished. Sub-transactions
        // first: a reader that sees the top-level xid committed finds its
        // sub-transactions committed too.
        for &s in subxids {
            self.clog.set_status_logged(s, status, lsn);
        }
        self.clog.set_status_logged(xid, status, lsn);
        let mut xids = Vec::with_capacity(1 + subxids.len());
        xids.push(xid);
        xids.extend_from_slice(subxids);
        if let Some(mut pa) = self.procarray.try_lock() {
            pa.remove_running(&xids);
            self.publish_running(&pa);
        } else if self.group_clear.load(Ordering::Relaxed) {
            self.clear_in_group(xids);
        } else {
            let mut pa = self.procarray.lock();
            pa.remove_running(&xids);
            self.publish_running(&pa);
        }
        self.ended.notify_all();
    }

    /// Leaves the ProcArray as part of a group (see `ClearGroup`).
    fn clear_in_group(&self, xids: Vec<Xid>) {
        let me = Arc::new(ClearRequest {
            xids,
            done: AtomicBool::new(false),
            waiter: std::thread::current(),
        });
        let leader = {
            let mut q = self.clear_group.queue.lock();
            q.push(me.clone());
            q.len() == 1
        };
        if !leader {
            // Acquire pairs with the leader's Release store: once done, our
            // xids are out of the ProcArray.
            while !me.done.load(Ordering::Acquire) {
                std::thread::park();
            }
            return;
        }
        let mut pa = self.procarray.lock();
        // Taken only now: requests queued while we waited for the mutex
        // join this group; later ones find the queue empty and lead the next.
        let group = std::mem::take(&mut *self.clear_group.queue.lock());
        for r in &group {
            pa.remove_running(&r.xids);
        }
        self.publish_running(&pa);
        drop(pa);
        for r in group {
            // Release pairs with the Acquire in the follower's wait loop.
            r.done.store(true, Ordering::Release);
            r.waiter.unpark();
        }
    }

    /// `procarray_group_clear`: whether transaction ends are grouped.
    pub fn set_group_clear(&self, on: bool) {
        self.group_clear.store(on, Ordering::Relaxed);
    }

    /// The next xid to be handed out (checkpoint records).
    pub fn next_xid(&self) -> Xid {
        self.procarray.lock().next_xid
    }

    /// A snapshot for a statement of the transaction `own_xid` (0: none)
    /// that advertises no xmin (catalog loads, tests).
    pub fn snapshot(&self, own_xid: Xid, command_id: u32) -> Snapshot {
        Snapshot::new(self.snapshot_data(None), OwnXids::top(own_xid), command_id)
    }

    /// Which transactions have finished now; `proc` advertises the
    /// snapshot's xmin until it clears it (`Proc::clear_xmin`).
    pub fn snapshot_data(&self, proc: Option<&Proc>) -> Arc<SnapshotData> {
        self.procarray.lock().snapshot(proc)
    }

    /// The oldest xid some running transaction or live snapshot may still
    /// see as running: a version deleted by a transaction that committed
    /// below it is invisible to everyone (VACUUM's horizon).
    pub fn global_xmin(&self) -> Xid {
        self.procarray.lock().global_xmin()
    }

    /// The registered sessions' pid, xid and advertised xmin.
    pub fn proc_states(&self) -> Vec<(i32, Xid, Xid)> {
        self.procarray
            .lock()
            .procs()
            .map(|p: &Arc<ProcShared>| (p.pid, p.xid(), p.xmin()))
            .collect()
    }

    pub fn is_running(&self, xid: Xid) -> bool {
        self.procarray.lock().is_running(xid)
    }

    /// Status of a finished or crashed transaction; running ones report InProgress.
    pub fn status(&self, xid: Xid) -> XidStatus {
        if xid == common::ids::INVALID_XID {
            // The xmin of a version ON CONFLICT took back at once
            // (`access::heap::kill_speculative`): never committed.
            return XidStatus::Aborted;
        }
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

    /// Status as PostgreSQL's TransactionIdIsInProgress-then-DidCommit
    /// order decides it: a transaction that has set its final status but
    /// not yet left the running set is still InProgress. Code that acts on
    /// another writer having finished (following its update, taking its
    /// key) uses this, so every snapshot taken afterwards sees it finished
    /// too; `status` alone could let a later snapshot still count it as
    /// running and miss the versions it made.
    pub fn status_settled(&self, xid: Xid) -> XidStatus {
        match self.clog.status(xid) {
            XidStatus::InProgress => self.status(xid),
            _ if self.is_running(xid) => XidStatus::InProgress,
            s => s,
        }
    }

    /// Blocks until `xid` is no longer running (a row's other writer), or the
    /// `cancelled` check says to stop. Returns its final status.
    pub fn wait_for(&self, xid: Xid, cancelled: &dyn Fn() -> bool) -> Option<XidStatus> {
        let mut pa = self.procarray.lock();
        while pa.is_running(xid) {
            if cancelled() {
                return None;
            }
            self.ended
                .wait_for(&mut pa, std::time::Duration::from_millis(100));
        }
        drop(pa);
        Some(self.status(xid))
    }

    /// Blocks until `xid` has ended, waiting through the lock manager as
    /// PostgreSQL's XactLockTableWait: ShareLock on the xid (granted when
    /// its transaction's ExclusiveLock goes), released at once. The wait
    /// is then visible to the deadlock check, pg_locks and
    /// pg_blocking_pids. An xid nobody holds a lock on (a transaction
    /// begun without a lock owner) is waited for on the running set.
    pub fn wait_for_locked(
        &self,
        xid: Xid,
        owner: &mut crate::lock::LockOwner,
        ctx: &mut crate::lock::WaitContext<'_>,
    ) -> Result<XidStatus, crate::lock::LockError> {
        use crate::lock::{LockMode, LockScope, LockTag};
        let tag = LockTag::Transaction(xid);
        loop {
            let held = owner.holds(&tag, LockMode::Share);
            owner.acquire(tag, LockMode::Share, LockScope::Transaction, Some(ctx))?;
            if !held {
                owner.release(tag, LockMode::Share, LockScope::Transaction);
            }
            if !self.is_running(xid) {
                return Ok(self.status(xid));
            }
            let mut pa = self.procarray.lock();
            if pa.is_running(xid) {
                self.ended
                    .wait_for(&mut pa, std::time::Duration::from_millis(10));
            }
            drop(pa);
            (ctx.check)().map_err(crate::lock::LockError::Interrupted)?;
        }
    }

    /// Persists the commit log (checkpoint, shutdown).
    pub fn flush(&self) -> std::io::Result<()> {
        self.clog
            .flush(&|lsn| self.wal.flush(lsn).map_err(std::io::Error::other))
    }
}

/// Appends a sub-transaction list (count, then xids) to a record body.
fn put_subxids(body: &mut Vec<u8>, subxids: &[Xid]) {
    if subxids.is_empty() {
        return;
    }
    body.extend_from_slice(&(subxids.len() as u32).to_le_bytes());
    for s in subxids {
        body.extend_from_slice(&s.to_le_bytes());
    }
}

/// The sub-transaction list `put_subxids` wrote (empty body: none).
fn get_subxids(body: &[u8]) -> Option<Vec<Xid>> {
    if body.is_empty() {
        return Some(Vec::new());
    }
    let n = u32::from_le_bytes(body.get(..4)?.try_into().ok()?) as usize;
    let list = body.get(4..4 + n * 8)?;
    Some(
        list.chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")))
            .collect(),
    )
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
        let skip = if rec.info == XACT_COMMIT { 8 } else { 0 };
        let subxids = get_subxids(rec.main.get(skip..).unwrap_or(&[]))
            .ok_or_else(|| wal::RedoError::new(rec, "truncated sub-transaction list"))?;
        for s in subxids {
            self.clog.set_status_logged(s, status, rec.end);
        }
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

    #[test]
    fn subtransactions_commit_and_abort_with_their_parent() {
        let dir = tempfile::tempdir().unwrap();
        let tm = TransactionManager::open(dir.path(), crate::test_wal(dir.path())).unwrap();
        let top = tm.begin().unwrap();
        let kept = tm.begin().unwrap();
        let rolled_back = tm.begin().unwrap();
        assert!(top < kept && kept < rolled_back);
        tm.abort_tree(rolled_back, &[]);
        assert_eq!(tm.status(rolled_back), XidStatus::Aborted);
        // Running sub-transactions are running to others.
        let other = tm.snapshot(0, 0);
        assert!(!other.tuple_visible(kept, 0, 0, 0, &tm));
        // And own to their transaction's snapshots.
        let own = Snapshot::new(
            tm.snapshot_data(None),
            OwnXids {
                top,
                subs: vec![kept],
            },
            1,
        );
        assert!(own.tuple_visible(kept, 0, 0, 0, &tm));
        assert!(!own.tuple_visible(rolled_back, 0, 0, 0, &tm));
        assert!(own.tuple_visible(top, 0, rolled_back, 0, &tm));
        tm.commit_tree(top, &[kept], SyncCommit::On).unwrap();
        assert_eq!(tm.status(kept), XidStatus::Committed);
        assert!(tm.snapshot(0, 0).tuple_visible(kept, 0, 0, 0, &tm));

        // (Redo of the lists: server test isolation_levels, crash case.)
    }

    #[test]
    fn snapshots_are_reused_until_a_transaction_ends() {
        let dir = tempfile::tempdir().unwrap();
        let tm = TransactionManager::open(dir.path(), crate::test_wal(dir.path())).unwrap();
        let a = tm.begin().unwrap();
        let s1 = tm.snapshot_data(None);
        let b = tm.begin().unwrap();
        let s2 = tm.snapshot_data(None);
        // Starting a transaction does not invalidate it: b is above xmax.
        assert!(Arc::ptr_eq(&s1, &s2));
        assert!(b >= s2.xmax);
        tm.commit(a, SyncCommit::Off).unwrap();
        let s3 = tm.snapshot_data(None);
        assert!(!Arc::ptr_eq(&s2, &s3));
        assert!(s3.xmax > a && s3.running.is_empty() || s3.running == vec![b]);
        tm.abort(b);
    }

    #[test]
    fn the_horizon_waits_for_running_transactions_and_advertised_snapshots() {
        let dir = tempfile::tempdir().unwrap();
        let tm = TransactionManager::open(dir.path(), crate::test_wal(dir.path())).unwrap();
        let reader = tm.register_proc(1);
        let a = tm.begin().unwrap();
        assert_eq!(tm.global_xmin(), a);
        tm.commit(a, SyncCommit::Off).unwrap();
        assert_eq!(tm.global_xmin(), a + 1);
        let b = tm.begin().unwrap();
        // The reader's snapshot still sees b running.
        let snap = tm.snapshot_data(Some(&reader));
        assert_eq!(snap.xmin, b);
        tm.commit(b, SyncCommit::Off).unwrap();
        assert_eq!(tm.global_xmin(), b);
        reader.clear_xmin();
        assert_eq!(tm.global_xmin(), b + 1);
        // A snapshot taken now advertises the new horizon.
        let _ = tm.snapshot_data(Some(&reader));
        assert_eq!(reader.xmin(), b + 1);
        reader.unregister();
        assert_eq!(tm.proc_states().len(), 0);
    }

    #[test]
    fn grouped_exits_leave_nothing_running() {
        let dir = tempfile::tempdir().unwrap();
        let tm = TransactionManager::open(dir.path(), crate::test_wal(dir.path())).unwrap();
        for group in [true, false] {
            tm.set_group_clear(group);
            let ended: Vec<Xid> = std::thread::scope(|s| {
                let handles: Vec<_> = (0..8)
                    .map(|i| {
                        let tm = &tm;
                        s.spawn(move || {
                            let mut mine = Vec::new();
                            for n in 0..500 {
                                let x = tm.begin().unwrap();
                                if (n + i) % 3 == 0 {
                                    tm.abort(x);
                                } else {
                                    tm.commit(x, SyncCommit::Off).unwrap();
                                }
                                mine.push(x);
                            }
                            mine
                        })
                    })
                    .collect();
                handles
                    .into_iter()
                    .flat_map(|h| h.join().unwrap())
                    .collect()
            });
            assert_eq!(ended.len(), 4000);
            assert!(ended.iter().all(|&x| !tm.is_running(x)));
            let data = tm.snapshot_data(None);
            assert!(data.running.is_empty());
            assert_eq!(data.xmax, ended.iter().max().unwrap() + 1);
            assert_eq!(tm.global_xmin(), data.xmax);
        }
    }
}
