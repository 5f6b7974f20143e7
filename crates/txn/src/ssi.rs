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
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Weak};

use common::{Oid, PgError, SqlState, Xid};
use parking_lot::Mutex;

use crate::snapshot::SnapshotData;

/// What a SIREAD lock covers: a sequential scan locks the relation, an
/// index scan the B-tree leaf pages it reads (so the gaps between keys are
/// covered) and the heap tuples it fetches; tuple locks are promoted to a
/// page lock and page or tuple locks to a relation lock past the limits
/// (`Limits`). Writers check every granularity that covers what they change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum PredicateTarget {
    Relation {
        db: Oid,
        rel: Oid,
    },
    Page {
        db: Oid,
        rel: Oid,
        block: u32,
    },
    Tuple {
        db: Oid,
        rel: Oid,
        block: u32,
        offset: u16,
    },
}

impl PredicateTarget {
    /// The database and relation it is in.
    pub fn relation(&self) -> (Oid, Oid) {
        match *self {
            PredicateTarget::Relation { db, rel }
            | PredicateTarget::Page { db, rel, .. }
            | PredicateTarget::Tuple { db, rel, .. } => (db, rel),
        }
    }

    /// Whether `coarse` covers this (strictly finer) target.
    fn covered_by(&self, coarse: &PredicateTarget) -> bool {
        match (*self, *coarse) {
            (PredicateTarget::Relation { .. }, _) => false,
            (t, PredicateTarget::Relation { db, rel }) => t.relation() == (db, rel),
            (PredicateTarget::Tuple { db, rel, block, .. }, PredicateTarget::Page { .. }) => {
                *coarse == PredicateTarget::Page { db, rel, block }
            }
            _ => false,
        }
    }

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
    /// Set (under the SSI mutex) when the transaction must fail: another
    /// marked it doomed, or one of its reads found a reason. Relaxed: only
    /// a fast check before the mutex is taken; the commit-time test reads
    /// the state under the mutex.
    failing: AtomicBool,
    /// Relations this transaction already holds a relation SIREAD lock on:
    /// a scan asks here before taking the SSI mutex. Only the owning
    /// session touches it, and the SSI code under the SSI mutex.
    locked: Mutex<Vec<(Oid, Oid)>>,
    manager: PredicateLockManager,
}

impl SerXact {
    pub fn id(&self) -> u64 {
        self.id
    }

    /// The manager the transaction is registered with.
    pub fn manager(&self) -> &PredicateLockManager {
        &self.manager
    }

    fn holds_relation(&self, db: Oid, rel: Oid) -> bool {
        self.locked.lock().contains(&(db, rel))
    }
}

/// Promotion limits (PostgreSQL's max_pred_locks_per_relation and
/// max_pred_locks_per_page; max_pred_locks_per_transaction sizes the
/// default of the former).
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// More tuple locks than this on one page become a page lock.
    pub per_page: u32,
    /// More page and tuple locks than this in one relation become a
    /// relation lock.
    pub per_relation: u32,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits::from_settings(64, -2, 2)
    }
}

impl Limits {
    /// From the three settings as PostgreSQL reads them: a negative
    /// per-relation value `-n` means max_pred_locks_per_transaction / n.
    pub fn from_settings(per_transaction: i32, per_relation: i32, per_page: i32) -> Limits {
        let per_relation = if per_relation < 0 {
            per_transaction / -per_relation
        } else {
            per_relation
        };
        Limits {
            per_page: per_page.max(0) as u32,
            per_relation: per_relation.max(0) as u32,
        }
    }
}

/// One serializable transaction as the SSI state knows it (PostgreSQL's
/// SERIALIZABLEXACT).
#[derive(Debug, Default)]
struct Sxact {
    /// The session's handle (its `doomed` flag is set with ours).
    handle: Weak<SerXact>,
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
    /// Tuple locks per heap page and page-or-tuple locks per relation
    /// (promotion).
    per_page: HashMap<(Oid, Oid, u32), u32>,
    per_relation: HashMap<(Oid, Oid), u32>,
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
    /// Backends waiting for a safe snapshot (READ ONLY DEFERRABLE).
    safe_waiters: Vec<i32>,
}

/// The SSI state of the server (`TransactionManager::predicate`); a
/// cheap handle on it (each `SerXact` keeps one).
#[derive(Default, Clone)]
pub struct PredicateLockManager {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for PredicateLockManager {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PredicateLockManager")
    }
}

#[derive(Default)]
struct Shared {
    state: Mutex<SsiState>,
    /// How many serializable transactions the state holds, stored under
    /// the mutex. Relaxed: B-tree page splits read it while holding the
    /// split pages' exclusive locks; a SIREAD page lock is taken under the
    /// page's share lock, so the buffer lock orders its store before the
    /// splitter's load.
    registered: AtomicUsize,
    limits: Mutex<Limits>,
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
        let mut st = self.shared.state.lock();
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
            failing: AtomicBool::new(false),
            locked: Mutex::new(Vec::new()),
            manager: self.clone(),
        });
        st.xacts.insert(
            id,
            Sxact {
                handle: Arc::downgrade(&sx),
                pid,
                read_only,
                snap_seq,
                ..Default::default()
            },
        );
        self.shared
            .registered
            .store(st.xacts.len(), Ordering::Relaxed);
        (data, Some(sx))
    }

    /// Sets the promotion limits (from the settings, at start and reload).
    pub fn set_limits(&self, limits: Limits) {
        *self.shared.limits.lock() = limits;
    }

    /// Waits until a READ ONLY DEFERRABLE transaction may take a safe
    /// snapshot: no read-write serializable transaction is running (every
    /// snapshot taken then is safe). `check` runs between looks (cancel,
    /// termination). While it waits, `safe_snapshot_blocking_pids` names
    /// the transactions it waits for.
    pub fn wait_for_safe_snapshot(
        &self,
        pid: i32,
        mut check: impl FnMut() -> Result<(), PgError>,
    ) -> Result<(), PgError> {
        {
            let mut st = self.shared.state.lock();
            if st.active_rw == 0 {
                return Ok(());
            }
            st.safe_waiters.push(pid);
        }
        let result = loop {
            if let Err(e) = check() {
                break Err(e);
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
            if self.shared.state.lock().active_rw == 0 {
                break Ok(());
            }
        };
        self.shared.state.lock().safe_waiters.retain(|&p| p != pid);
        result
    }

    /// The backends whose read-write serializable transactions backend
    /// `pid` waits for to end before it takes a safe snapshot (PostgreSQL's
    /// GetSafeSnapshotBlockingPids); empty when it does not wait.
    pub fn safe_snapshot_blocking_pids(&self, pid: i32) -> Vec<i32> {
        let st = self.shared.state.lock();
        if !st.safe_waiters.contains(&pid) {
            return Vec::new();
        }
        st.xacts
            .values()
            .filter(|x| !x.read_only && !x.committed() && x.pid != pid)
            .map(|x| x.pid)
            .collect()
    }

    /// Records that `sx` writes under `xids` (its top-level xid and
    /// sub-transaction xids, as they are assigned).
    pub fn register_xids(&self, sx: &SerXact, xids: &[Xid]) {
        let mut st = self.shared.state.lock();
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
        if !sx.failing.load(Ordering::Relaxed) {
            return Ok(());
        }
        let st = self.shared.state.lock();
        match st.xacts.get(&sx.id) {
            Some(x) if x.doomed => Err(SsiError::pivot(during)),
            Some(x) => match &x.pending {
                Some(reason) => Err(SsiError::Conflict {
                    reason: reason.clone(),
                }),
                None => Ok(()),
            },
            None => Ok(()),
        }
    }

    /// Takes a relation SIREAD lock for `sx` (a scan of the relation).
    pub fn lock_relation(&self, sx: &SerXact, db: Oid, rel: Oid) -> Result<(), SsiError> {
        self.check(sx, "conflict out checking")?;
        self.lock(sx, PredicateTarget::Relation { db, rel });
        Ok(())
    }

    /// Takes the SIREAD lock `target` for `sx`, unless a coarser one it
    /// holds covers it; promotes past the limits (PostgreSQL's
    /// PredicateLockAcquire with CheckAndPromotePredicateLockRequest). A
    /// B-tree leaf page is locked under the page's share lock, a heap
    /// tuple under its page's share lock: a writer checks after changing
    /// the page, so either it finds the lock or the reader saw its change.
    pub fn lock(&self, sx: &SerXact, target: PredicateTarget) {
        let (db, rel) = target.relation();
        if sx.holds_relation(db, rel) {
            return;
        }
        let limits = *self.shared.limits.lock();
        let mut st = self.shared.state.lock();
        let Some(x) = st.xacts.get_mut(&sx.id) else {
            return;
        };
        if x.locks.contains(&target) {
            return;
        }
        let mut grant = vec![target];
        let mut drop_finer: Option<PredicateTarget> = None;
        match target {
            PredicateTarget::Tuple { block, .. } => {
                let page = PredicateTarget::Page { db, rel, block };
                if x.locks.contains(&page) {
                    return;
                }
                let n = x.per_page.entry((db, rel, block)).or_insert(0);
                *n += 1;
                if *n > limits.per_page {
                    grant = vec![page];
                    drop_finer = Some(page);
                }
            }
            PredicateTarget::Page { .. } => {}
            PredicateTarget::Relation { .. } => drop_finer = Some(target),
        }
        if let Some(PredicateTarget::Page { .. }) | None = drop_finer {
            let n = x.per_relation.entry((db, rel)).or_insert(0);
            *n += 1;
            if *n > limits.per_relation {
                let whole = PredicateTarget::Relation { db, rel };
                grant = vec![whole];
                drop_finer = Some(whole);
            }
        }
        let mut released = Vec::new();
        if let Some(coarse) = drop_finer {
            x.locks.retain(|t| {
                let covered = t.covered_by(&coarse);
                if covered {
                    released.push(*t);
                }
                !covered
            });
            if let PredicateTarget::Relation { .. } = coarse {
                x.per_page.retain(|&(d, r, _), _| (d, r) != (db, rel));
                x.per_relation.remove(&(db, rel));
                sx.locked.lock().push((db, rel));
            } else if let PredicateTarget::Page { block, .. } = coarse {
                x.per_page.remove(&(db, rel, block));
            }
        }
        for g in &grant {
            x.locks.insert(*g);
        }
        for t in released {
            unhold(&mut st, sx.id, t);
        }
        for g in grant {
            st.targets.entry(g).or_default().push(sx.id);
        }
    }

    /// A B-tree leaf `left` of index `rel` split, moving keys to the new
    /// page `right`: whoever holds a SIREAD lock on `left` gets one on
    /// `right` too (PostgreSQL's PredicateLockPageSplit). Called with both
    /// pages exclusively locked.
    pub fn page_split(&self, db: Oid, rel: Oid, left: u32, right: u32) {
        self.copy_page_locks(db, rel, left, right, false);
    }

    /// VACUUM unlinked the empty leaf `gone`; its key range joins `into`
    /// (PostgreSQL's PredicateLockPageCombine).
    pub fn page_combine(&self, db: Oid, rel: Oid, gone: u32, into: u32) {
        self.copy_page_locks(db, rel, gone, into, true);
    }

    fn copy_page_locks(&self, db: Oid, rel: Oid, from: u32, to: u32, remove_from: bool) {
        // Relaxed: see `Shared::registered`.
        if self.shared.registered.load(Ordering::Relaxed) == 0 {
            return;
        }
        let mut st = self.shared.state.lock();
        let from_t = PredicateTarget::Page {
            db,
            rel,
            block: from,
        };
        let to_t = PredicateTarget::Page { db, rel, block: to };
        let holders = match remove_from {
            true => st.targets.remove(&from_t).unwrap_or_default(),
            false => st.targets.get(&from_t).cloned().unwrap_or_default(),
        };
        for h in holders {
            let Some(x) = st.xacts.get_mut(&h) else {
                continue;
            };
            if remove_from {
                x.locks.remove(&from_t);
            }
            if x.locks.insert(to_t) {
                st.targets.entry(to_t).or_default().push(h);
            }
        }
    }

    /// A write by `sx` covered by `targets` (a heap tuple with its page
    /// and relation, a relation for a heap insert, a B-tree leaf page with
    /// its index): every concurrent serializable transaction holding one of
    /// those SIREAD locks gets an rw-antidependency to `sx` (PostgreSQL's
    /// CheckForSerializableConflictIn). Called after the change is made, so
    /// a reader either locked first or sees the change.
    pub fn conflict_in(&self, sx: &SerXact, targets: &[PredicateTarget]) -> Result<(), SsiError> {
        self.check(sx, "conflict in checking")?;
        let mut st = self.shared.state.lock();
        let Some(me) = st.xacts.get(&sx.id) else {
            return Ok(());
        };
        let my_snap = me.snap_seq;
        let mut readers: Vec<u64> = Vec::new();
        for t in targets {
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

    /// `sx` is about to write the tuple `target` it SIREAD-locked when it
    /// read it: its write lock covers the tuple from now on, so the SIREAD
    /// lock goes (PostgreSQL's CheckTargetForConflictsIn does the same;
    /// not inside a subtransaction, whose rollback would leave no lock).
    pub fn release_written_tuple(&self, sx: &SerXact, target: PredicateTarget) {
        let PredicateTarget::Tuple { db, rel, block, .. } = target else {
            return;
        };
        let mut st = self.shared.state.lock();
        let Some(x) = st.xacts.get_mut(&sx.id) else {
            return;
        };
        if !x.locks.remove(&target) {
            return;
        }
        if let Some(n) = x.per_page.get_mut(&(db, rel, block)) {
            *n = n.saturating_sub(1);
        }
        if let Some(n) = x.per_relation.get_mut(&(db, rel)) {
            *n = n.saturating_sub(1);
        }
        unhold(&mut st, sx.id, target);
    }

    /// A read by `sx` met a version written by `writer_xid` that its
    /// snapshot does not see as committed (an invisible new version, or
    /// a visible one with a concurrent deleter): `sx` ->rw writer, if the
    /// writer is serializable (PostgreSQL's CheckForSerializableConflictOut).
    /// A reason to fail is kept for `check` (a read cannot fail here).
    pub fn conflict_out(&self, sx: &SerXact, writer_xid: Xid) {
        let mut st = self.shared.state.lock();
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
            // Relaxed: see `SerXact::failing`.
            sx.failing.store(true, Ordering::Relaxed);
        }
    }

    /// The commit test of `sx` (PostgreSQL's
    /// PreCommit_CheckForSerializationFailure): fails a doomed transaction;
    /// marks to fail each pivot T0 with T0 ->rw sx and some running
    /// read-write T ->rw T0, since sx is about to commit first; then marks
    /// sx prepared (it can no longer be doomed).
    pub fn pre_commit(&self, sx: &SerXact) -> Result<(), SsiError> {
        let mut st = self.shared.state.lock();
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
        let mut st = self.shared.state.lock();
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
        self.shared
            .registered
            .store(st.xacts.len(), Ordering::Relaxed);
    }

    /// Every SIREAD lock held, for pg_locks.
    pub fn locks(&self) -> Vec<SireadLock> {
        // Relaxed: see `Shared::registered`; pg_locks may miss a lock
        // taken meanwhile as it may miss any.
        if self.shared.registered.load(Ordering::Relaxed) == 0 {
            return Vec::new();
        }
        let st = self.shared.state.lock();
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
        let st = self.shared.state.lock();
        let locks = st.targets.values().map(Vec::len).sum();
        (st.xacts.len(), locks)
    }
}

fn doom(st: &mut SsiState, id: u64) {
    if let Some(x) = st.xacts.get_mut(&id) {
        x.doomed = true;
        if let Some(h) = x.handle.upgrade() {
            // Relaxed: see `SerXact::doomed`.
            h.failing.store(true, Ordering::Relaxed);
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
    // t2 prepared is enough: it passed its commit test, so if it commits
    // first the structure is real and only the writer or reader can go.
    // Failing now, at the write, spares the readers that would otherwise
    // meet the writer once it prepares.
    let mut failure = w.summary_out.is_some_and(t2_dangerous)
        || w.out_conf.iter().any(|t2| {
            st.xacts
                .get(t2)
                .is_some_and(|t| t.prepare_seq.is_some_and(t2_dangerous))
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

/// Takes `id` off the holders of `t`.
fn unhold(st: &mut SsiState, id: u64, t: PredicateTarget) {
    if let Some(h) = st.targets.get_mut(&t) {
        h.retain(|&o| o != id);
        if h.is_empty() {
            st.targets.remove(&t);
        }
    }
}

/// Drops `id` with its locks; its conflicts go, or (`summarise`, for a
/// committed transaction) stay as summaries on the other ends.
fn remove(st: &mut SsiState, id: u64, summarise: bool) {
    let Some(x) = st.xacts.remove(&id) else {
        return;
    };
    for t in &x.locks {
        unhold(st, id, *t);
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

#[cfg(test)]
mod tests {
    use super::*;

    fn data() -> Arc<SnapshotData> {
        Arc::new(SnapshotData {
            xmin: 10,
            xmax: 10,
            running: Vec::new(),
        })
    }

    fn begin(m: &PredicateLockManager, pid: i32) -> Arc<SerXact> {
        m.register(pid, false, data)
            .1
            .expect("read-write is registered")
    }

    fn rel(r: Oid) -> PredicateTarget {
        PredicateTarget::Relation { db: 1, rel: r }
    }

    #[test]
    fn tuple_locks_promote_to_page_then_relation() {
        let m = PredicateLockManager::default();
        let a = begin(&m, 1);
        for offset in 1..=3 {
            m.lock(
                &a,
                PredicateTarget::Tuple {
                    db: 1,
                    rel: 5,
                    block: 0,
                    offset,
                },
            );
        }
        let kinds: Vec<_> = m.locks().iter().map(|l| l.target.locktype()).collect();
        assert_eq!(kinds, ["page"]);
        for block in 1..=40 {
            m.lock(
                &a,
                PredicateTarget::Page {
                    db: 1,
                    rel: 5,
                    block,
                },
            );
        }
        let locks = m.locks();
        assert_eq!(locks.len(), 1);
        assert_eq!(locks[0].target, rel(5));
        m.release(&a, true);
        assert_eq!(m.counts(), (0, 0));
    }

    #[test]
    fn write_skew_dooms_the_pivot_and_the_first_committer_goes_on() {
        let m = PredicateLockManager::default();
        let (a, b) = (begin(&m, 1), begin(&m, 2));
        m.lock_relation(&a, 1, 5).unwrap();
        m.lock_relation(&b, 1, 5).unwrap();
        m.conflict_in(&a, &[rel(5)]).unwrap();
        m.conflict_in(&b, &[rel(5)]).unwrap();
        m.pre_commit(&a).unwrap();
        m.release(&a, true);
        let e = m.pre_commit(&b).unwrap_err();
        let SsiError::Conflict { reason } = e;
        assert_eq!(
            reason,
            "Canceled on identification as a pivot, during commit attempt."
        );
        m.release(&b, false);
        assert_eq!(m.counts(), (0, 0));
    }

    /// r ->rw w ->rw t2 with t2 prepared but not yet committed: t2 can no
    /// longer fail, so w's write that completes the structure must.
    #[test]
    fn a_write_completing_a_structure_with_a_prepared_t2_fails() {
        let m = PredicateLockManager::default();
        let (r, w, t2) = (begin(&m, 1), begin(&m, 2), begin(&m, 3));
        // w reads relation 6, which t2 writes: w ->rw t2.
        m.lock_relation(&w, 1, 6).unwrap();
        m.conflict_in(&t2, &[rel(6)]).unwrap();
        m.pre_commit(&t2).unwrap();
        // r reads relation 5, which w then writes: r ->rw w ->rw t2.
        m.lock_relation(&r, 1, 5).unwrap();
        let SsiError::Conflict { reason } = m.conflict_in(&w, &[rel(5)]).unwrap_err();
        assert_eq!(
            reason,
            "Canceled on identification as a pivot, during write."
        );
        m.release(&w, false);
        m.release(&t2, true);
        m.release(&r, true);
        assert_eq!(m.counts(), (0, 0));
    }

    #[test]
    fn committed_transactions_stay_while_an_overlapping_one_runs() {
        let m = PredicateLockManager::default();
        let (a, b) = (begin(&m, 1), begin(&m, 2));
        m.lock_relation(&a, 1, 5).unwrap();
        m.pre_commit(&a).unwrap();
        m.release(&a, true);
        // b's snapshot predates a's commit: a's lock still matters.
        assert_eq!(m.counts(), (2, 1));
        let c = begin(&m, 3);
        m.pre_commit(&b).unwrap();
        m.release(&b, true);
        // c began after a committed, before b did: a is forgotten.
        assert_eq!(m.counts(), (2, 0));
        m.release(&c, false);
        assert_eq!(m.counts(), (0, 0));
    }

    #[test]
    fn read_only_without_read_write_ones_needs_no_ssi() {
        let m = PredicateLockManager::default();
        assert!(m.register(1, true, data).1.is_none());
        let w = begin(&m, 2);
        assert!(m.register(3, true, data).1.is_some());
        m.release(&w, false);
    }
}
