//! Serializable snapshot isolation (SSI): SIREAD predicate locks,
//! rw-antidependencies between concurrent SERIALIZABLE transactions and
//! the dangerous-structure test, after PostgreSQL's predicate.c and
//! `src/backend/storage/lmgr/README-SSI` (Cahill's SSI as Ports and
//! Grittner adapted it). The rules are in the crate README, section
//! "Serializable snapshot isolation".
//!
//! Everything shared lives in one `SsiState` behind one mutex: the
//! serializable transactions (`Sxact`), which of them wrote which xid, and
//! the predicate-lock table (target -> holders). Only SERIALIZABLE
//! transactions ever reach this module: a snapshot without a `SerXact`
//! (READ COMMITTED, REPEATABLE READ, a safe read-only snapshot) skips it.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use common::{Oid, PgError, SqlState, Xid};
use parking_lot::Mutex;

use crate::snapshot::SnapshotData;

/// What a SIREAD lock covers. Reads take relation-granularity locks (a
/// sequential scan as in PostgreSQL; an index scan too, until B-tree leaf
/// pages are locked), and writers check every granularity that covers the
/// version they change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum PredicateTarget {
    Relation { db: Oid, rel: Oid },
    Page { db: Oid, rel: Oid, block: u32 },
    Tuple { db: Oid, rel: Oid, block: u32, offset: u16 },
}

impl PredicateTarget {
    /// pg_locks' locktype.
    pub fn locktype(&self) -> &'static str {
        match self {
            PredicateTarget::Relation { .. } => "relation",
            PredicateTarget::Page { .. } => "page",
            PredicateTarget::Tuple { .. } => "tuple",
        }
    }
}

/// Why a serializable transaction must fail: PostgreSQL's reason codes.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SsiError {
    #[error("could not serialize access due to read/write dependencies among transactions")]
    Conflict {
        /// The text after "Reason code: " in the DETAIL.
        reason: String,
    },
}

impl SsiError {
    fn pivot(during: &str) -> SsiError {
        SsiError::Conflict {
            reason: format!("Canceled on identification as a pivot, during {during}."),
        }
    }
}

impl From<SsiError> for PgError {
    fn from(e: SsiError) -> PgError {
        let message = e.to_string();
        let SsiError::Conflict { reason } = e;
        PgError::new(SqlState::SERIALIZATION_FAILURE, message)
            .with_detail(format!("Reason code: {reason}"))
            .with_hint("The transaction might succeed if retried.")
    }
}

/// A session's handle on its serializable transaction, carried by its
/// snapshots (`Snapshot::ssi`).
#[derive(Debug)]
pub struct SerXact {
    id: u64,
    /// Set (under the SSI mutex) when another transaction marks this one
    /// to fail. Relaxed: only a fast check before the mutex is taken; the
    /// commit-time test reads the flag under the mutex.
    doomed: AtomicBool,
    /// Relations this transaction already holds a relation SIREAD lock on:
    /// a scan asks here before taking the SSI mutex. Only the owning
    /// session touches it.
    locked: Mutex<Vec<(Oid, Oid)>>,
}

impl SerXact {
    pub fn id(&self) -> u64 {
        self.id
    }
}

/// One serializable transaction as the SSI state knows it (PostgreSQL's
/// SERIALIZABLEXACT).
#[derive(Debug, Default)]
struct Sxact {
    /// The session's handle (its `doomed` flag is set with ours).
    handle: Option<Arc<SerXact>>,
    pid: i32,
    /// Its xids (top-level and sub-transactions) registered so far.
    xids: Vec<Xid>,
    read_only: bool,
    /// The commit counter when its snapshot was taken: a transaction with a
    /// commit number at or below it committed before the snapshot.
    snap_seq: u64,
    /// Set at the commit test (PostgreSQL's prepareSeqNo); from then on it
    /// cannot be doomed any more.
    prepare_seq: Option<u64>,
    /// Set once its commit is in the clog.
    commit_seq: Option<u64>,
    doomed: bool,
    /// A reason to fail found while it read (a conflict out to a pivot that
    /// had already prepared): raised at its next check.
    pending: Option<String>,
    /// Transactions with an rw-antidependency to this one (they read what
    /// it wrote over): `in_conf` are T with T ->rw self.
    in_conf: HashSet<u64>,
    /// Transactions it has an rw-antidependency to (self ->rw T).
    out_conf: HashSet<u64>,
    /// An in-conflict from a committed transaction since forgotten.
    summary_in: bool,
    /// The earliest prepare number of out-conflict targets since forgotten
    /// (committed ones).
    summary_out: Option<u64>,
    /// SIREAD locks it holds.
    locks: HashSet<PredicateTarget>,
}

impl Sxact {
    fn committed(&self) -> bool {
        self.commit_seq.is_some()
    }
}

#[derive(Default)]
struct SsiState {
    next_id: u64,
    /// PostgreSQL's LastSxactCommitSeqNo: raised at each prepare and commit.
    seq: u64,
    xacts: HashMap<u64, Sxact>,
    by_xid: HashMap<Xid, u64>,
    targets: HashMap<PredicateTarget, Vec<u64>>,
    /// Serializable transactions neither committed nor aborted.
    active: usize,
    /// Of those, the ones not declared READ ONLY.
    active_rw: usize,
}

/// The SSI state of the server (`TransactionManager::predicate`).
#[derive(Default)]
pub struct PredicateLockManager {
    state: Mutex<SsiState>,
}

/// A SIREAD lock for pg_locks.
#[derive(Debug, Clone)]
pub struct SireadLock {
    pub target: PredicateTarget,
    pub pid: i32,
    /// The holder's top-level xid (0: none assigned).
    pub xid: Xid,
}

impl PredicateLockManager {
    /// Registers a serializable transaction and takes its snapshot with
    /// `take_snapshot` under the SSI mutex, so the commit counter it
    /// records is not past any commit the snapshot misses. Returns None
    /// for a READ ONLY transaction with no read-write serializable
    /// transaction running: its snapshot is safe and it needs no SSI at all.
    pub fn register(
        &self,
        pid: i32,
        read_only: bool,
        take_snapshot: impl FnOnce() -> Arc<SnapshotData>,
    ) -> (Arc<SnapshotData>, Option<Arc<SerXact>>) {
        let mut st = self.state.lock();
        let snap_seq = st.seq;
        let data = take_snapshot();
        if read_only && st.active_rw == 0 {
            return (data, None);
        }
        st.next_id += 1;
        let id = st.next_id;
        st.active += 1;
        if !read_only {
            st.active_rw += 1;
        }
        let sx = Arc::new(SerXact {
            id,
            doomed: AtomicBool::new(false),
            locked: Mutex::new(Vec::new()),
        });
        st.xacts.insert(
            id,
            Sxact {
                handle: Some(sx.clone()),
                pid,
                read_only,
                snap_seq,
                ..Default::default()
            },
        );
        (data, Some(sx))
    }

    /// Whether a READ ONLY DEFERRABLE transaction may start now with a safe
    /// snapshot: no read-write serializable transaction is running.
    pub fn no_read_write_running(&self) -> bool {
        self.state.lock().active_rw == 0
    }

    /// Records that `sx` writes under `xids` (its top-level xid and
    /// sub-transaction xids, as they are assigned).
    pub fn register_xids(&self, sx: &SerXact, xids: &[Xid]) {
        let mut st = self.state.lock();
        for &x in xids {
            if x == 0 || st.by_xid.contains_key(&x) {
                continue;
            }
            st.by_xid.insert(x, sx.id);
            if let Some(s) = st.xacts.get_mut(&sx.id) {
                s.xids.push(x);
            }
        }
    }

    /// Fails if `sx` has been marked to fail: PostgreSQL checks this before
    /// each read and write of a serializable transaction.
    pub fn check(&self, sx: &SerXact, during: &str) -> Result<(), SsiError> {
        // Relaxed: a fast path; a mark set meanwhile is seen at the next
        // check or, at the latest, by the commit test under the mutex.
        if !sx.doomed.load(Ordering::Relaxed) {
            let st = self.state.lock();
            if let Some(reason) = st.xacts.get(&sx.id).and_then(|s| s.pending.clone()) {
                return Err(SsiError::Conflict { reason });
            }
            return Ok(());
        }
        Err(SsiError::pivot(during))
    }

    /// Takes a relation SIREAD lock for `sx` (a scan of the relation).
    pub fn lock_relation(&self, sx: &SerXact, db: Oid, rel: Oid) -> Result<(), SsiError> {
        self.check(sx, "conflict out checking")?;
        {
            let mut locked = sx.locked.lock();
            if locked.contains(&(db, rel)) {
                return Ok(());
            }
            locked.push((db, rel));
        }
        let target = PredicateTarget::Relation { db, rel };
        let mut st = self.state.lock();
        let Some(s) = st.xacts.get_mut(&sx.id) else {
            return Ok(());
        };
        if s.locks.insert(target) {
            st.targets.entry(target).or_default().push(sx.id);
        }
        Ok(())
    }

    /// A write by `sx` to `rel` (at `tid` for an update or delete, None
    /// for an insert): every concurrent serializable transaction holding a
    /// SIREAD lock that covers it gets an rw-antidependency to `sx`
    /// (PostgreSQL's CheckForSerializableConflictIn).
    pub fn conflict_in(
        &self,
        sx: &SerXact,
        db: Oid,
        rel: Oid,
        tid: Option<(u32, u16)>,
    ) -> Result<(), SsiError> {
        self.check(sx, "conflict in checking")?;
        let mut targets = vec![PredicateTarget::Relation { db, rel }];
        if let Some((block, offset)) = tid {
            targets.push(PredicateTarget::Page { db, rel, block });
            targets.push(PredicateTarget::Tuple {
                db,
                rel,
                block,
                offset,
            });
        }
        let mut st = self.state.lock();
        let Some(me) = st.xacts.get(&sx.id) else {
            return Ok(());
        };
        let my_snap = me.snap_seq;
        let mut readers: Vec<u64> = Vec::new();
        for t in &targets {
            for &h in st.targets.get(t).into_iter().flatten() {
                if h == sx.id || readers.contains(&h) {
                    continue;
                }
                let Some(r) = st.xacts.get(&h) else { continue };
                if r.doomed || r.commit_seq.is_some_and(|c| c <= my_snap) {
                    continue;
                }
                if r.out_conf.contains(&sx.id) {
                    continue;
                }
                readers.push(h);
            }
        }
        for r in readers {
            flag_rw_conflict(&mut st, r, sx.id, sx.id)?;
        }
        Ok(())
    }

    /// A read by `sx` met a version written by `writer_xid` that its
    /// snapshot does not see as committed (an invisible new version, or
    /// a visible one with a concurrent deleter): `sx` ->rw writer, if the
    /// writer is serializable (PostgreSQL's CheckForSerializableConflictOut).
    /// A reason to fail is kept for `check` (a read cannot fail here).
    pub fn conflict_out(&self, sx: &SerXact, writer_xid: Xid) {
        let mut st = self.state.lock();
        let Some(&w) = st.by_xid.get(&writer_xid) else {
            return;
        };
        if w == sx.id {
            return;
        }
        let Some(me) = st.xacts.get(&sx.id) else {
            return;
        };
        if me.out_conf.contains(&w) {
            return;
        }
        if st.xacts.get(&w).is_none_or(|x| x.doomed) {
            return;
        }
        if let Err(SsiError::Conflict { reason }) = flag_rw_conflict(&mut st, sx.id, w, sx.id) {
            if let Some(me) = st.xacts.get_mut(&sx.id) {
                me.pending.get_or_insert(reason);
            }
        }
    }

    /// The commit test of `sx` (PostgreSQL's
    /// PreCommit_CheckForSerializationFailure): fails a doomed transaction;
    /// marks to fail each pivot T0 with T0 ->rw sx and some running
    /// read-write T ->rw T0, since sx is about to commit first; then marks
    /// sx prepared (it can no longer be doomed).
    pub fn pre_commit(&self, sx: &SerXact) -> Result<(), SsiError> {
        let mut st = self.state.lock();
        let Some(me) = st.xacts.get(&sx.id) else {
            return Ok(());
        };
        if me.doomed {
            return Err(SsiError::pivot("commit attempt"));
        }
        if let Some(reason) = me.pending.clone() {
            return Err(SsiError::Conflict { reason });
        }
        let near: Vec<u64> = me.in_conf.iter().copied().collect();
        for t0 in near {
            let Some(pivot) = st.xacts.get(&t0) else {
                continue;
            };
            if pivot.committed() || pivot.doomed {
                continue;
            }
            let dangerous = pivot.in_conf.iter().any(|&tx| {
                tx == sx.id
                    || st
                        .xacts
                        .get(&tx)
                        .is_some_and(|t| !t.committed() && !t.read_only && !t.doomed)
            });
            if !dangerous {
                continue;
            }
            if pivot.prepare_seq.is_some() {
                return Err(SsiError::Conflict {
                    reason: "Canceled on commit attempt with conflict in from prepared pivot."
                        .into(),
                });
            }
            doom(&mut st, t0);
        }
        st.seq += 1;
        let seq = st.seq;
        if let Some(me) = st.xacts.get_mut(&sx.id) {
            me.prepare_seq = Some(seq);
        }
        Ok(())
    }

    /// The transaction of `sx` ended. An aborted one is forgotten with its
    /// locks and conflicts; a committed one keeps them while a transaction
    /// that overlapped it runs. Then every committed transaction no running
    /// serializable transaction overlaps is forgotten, its conflicts kept
    /// as summaries on the transactions they link it to.
    pub fn release(&self, sx: &SerXact, committed: bool) {
        let mut st = self.state.lock();
        let Some(me) = st.xacts.get_mut(&sx.id) else {
            return;
        };
        let read_only = me.read_only;
        if committed {
            let seq = st.seq + 1;
            st.seq = seq;
            if let Some(me) = st.xacts.get_mut(&sx.id) {
                me.prepare_seq.get_or_insert(seq);
                me.commit_seq = Some(seq);
            }
        } else {
            remove(&mut st, sx.id, false);
        }
        st.active -= 1;
        if !read_only {
            st.active_rw -= 1;
        }
        forget_old_committed(&mut st);
    }

    /// Every SIREAD lock held, for pg_locks.
    pub fn locks(&self) -> Vec<SireadLock> {
        let st = self.state.lock();
        let mut out = Vec::new();
        for (target, holders) in &st.targets {
            for h in holders {
                if let Some(x) = st.xacts.get(h) {
                    out.push(SireadLock {
                        target: *target,
                        pid: x.pid,
                        xid: x.xids.first().copied().unwrap_or(0),
                    });
                }
            }
        }
        out.sort_by_key(|l| (l.target, l.pid));
        out
    }

    /// How many serializable transactions (running or kept after commit)
    /// and SIREAD locks the state holds (tests of the bounds).
    pub fn counts(&self) -> (usize, usize) {
        let st = self.state.lock();
        let locks = st.targets.values().map(Vec::len).sum();
        (st.xacts.len(), locks)
    }
}

fn doom(st: &mut SsiState, id: u64) {
    if let Some(x) = st.xacts.get_mut(&id) {
        x.doomed = true;
        if let Some(h) = &x.handle {
            // Relaxed: see `SerXact::doomed`.
            h.doomed.store(true, Ordering::Relaxed);
        }
    }
}

/// Adds reader ->rw writer and runs the dangerous-structure test on the
/// two edges it may complete (PostgreSQL's FlagRWConflict and
/// OnConflict_CheckForSerializationFailure). `me` is the transaction
/// running the test: it fails itself when it must, or marks another to.
fn flag_rw_conflict(st: &mut SsiState, reader: u64, writer: u64, me: u64) -> Result<(), SsiError> {
    if let Some(r) = st.xacts.get_mut(&reader) {
        r.out_conf.insert(writer);
    }
    if let Some(w) = st.xacts.get_mut(&writer) {
        w.in_conf.insert(reader);
    }
    let (Some(r), Some(w)) = (st.xacts.get(&reader), st.xacts.get(&writer)) else {
        return Ok(());
    };
    // The writer as pivot: reader ->rw writer ->rw t2, t2 committed first
    // (before the reader, and the writer if they committed; before a
    // read-only reader's snapshot, or the reader could come first).
    let t2_dangerous = |t2_prepare: u64| {
        r.commit_seq.is_none_or(|c| t2_prepare <= c)
            && w.commit_seq.is_none_or(|c| t2_prepare <= c)
            && (!r.read_only || t2_prepare <= r.snap_seq)
    };
    let mut failure = w.summary_out.is_some_and(t2_dangerous)
        || w.out_conf.iter().any(|t2| {
            st.xacts
                .get(t2)
                .is_some_and(|t| t.committed() && t.prepare_seq.is_some_and(t2_dangerous))
        });
    // The reader as pivot: t0 ->rw reader ->rw writer, the writer already
    // committing, t0 not committed before it.
    if !failure && !r.read_only {
        if let Some(wp) = w.prepare_seq {
            failure = r.summary_in
                || r.in_conf.iter().any(|t0| {
                    st.xacts.get(t0).is_some_and(|t| {
                        !t.doomed
                            && t.commit_seq.is_none_or(|c| c >= wp)
                            && (!t.read_only || t.snap_seq >= wp)
                    })
                });
        }
    }
    if !failure {
        return Ok(());
    }
    if me == writer {
        return Err(SsiError::pivot("write"));
    }
    if w.prepare_seq.is_some() {
        let xid = w.xids.first().copied().unwrap_or(0);
        return Err(SsiError::Conflict {
            reason: format!("Canceled on conflict out to pivot {xid}, during read."),
        });
    }
    doom(st, writer);
    Ok(())
}

/// Drops `id` with its locks; its conflicts go, or (`summarise`, for a
/// committed transaction) stay as summaries on the other ends.
fn remove(st: &mut SsiState, id: u64, summarise: bool) {
    let Some(x) = st.xacts.remove(&id) else {
        return;
    };
    for t in &x.locks {
        if let Some(h) = st.targets.get_mut(t) {
            h.retain(|&o| o != id);
            if h.is_empty() {
                st.targets.remove(t);
            }
        }
    }
    for xid in &x.xids {
        st.by_xid.remove(xid);
    }
    for r in &x.in_conf {
        if let Some(r) = st.xacts.get_mut(r) {
            r.out_conf.remove(&id);
            if summarise {
                let p = x.prepare_seq.unwrap_or(u64::MAX);
                r.summary_out = Some(r.summary_out.map_or(p, |s| s.min(p)));
            }
        }
    }
    for w in &x.out_conf {
        if let Some(w) = st.xacts.get_mut(w) {
            w.in_conf.remove(&id);
            if summarise {
                w.summary_in = true;
            }
        }
    }
}

/// Forgets committed transactions that committed before the snapshot of
/// every running serializable transaction: no running or later one can
/// be concurrent with them, so their locks cannot conflict any more.
fn forget_old_committed(st: &mut SsiState) {
    let oldest = st
        .xacts
        .values()
        .filter(|x| !x.committed())
        .map(|x| x.snap_seq)
        .min()
        .unwrap_or(u64::MAX);
    let old: Vec<u64> = st
        .xacts
        .iter()
        .filter(|(_, x)| x.commit_seq.is_some_and(|c| c <= oldest))
        .map(|(&id, _)| id)
        .collect();
    for id in old {
        remove(st, id, true);
    }
}
