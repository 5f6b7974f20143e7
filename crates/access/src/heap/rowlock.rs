//! Row-level locks (SELECT ... FOR UPDATE / NO KEY UPDATE / SHARE / KEY
//! SHARE) and the conflict check UPDATE and DELETE share with them
//! (PostgreSQL's README.tuplock, README.md rules 8-11).
//!
//! A version's xmax holds one transaction: its updater or deleter if it has
//! one, else a locker (`tuple::XMAX_LOCK_ONLY` and the strength bits). Other
//! transactions holding locks on the same version at the same time (several
//! FOR SHARE, or FOR KEY SHARE beside a non-key UPDATE) are kept in the
//! locker table below, in memory only: a locker's lock ends with its
//! transaction, and after a crash every transaction has ended. The tuple's
//! `XMAX_HAS_LOCKERS` bit says the table may hold lockers of it, so tuples
//! without it never touch the table.
//!
//! The table's entry for a version is read and written only under that
//! version's page content lock (exclusive), so it changes together with the
//! tuple's xmax. Entries of ended transactions mean nothing: they are dropped
//! whenever their entry is looked at, and swept when the table is full.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::LazyLock;

use common::{PgError, PgResult, RelFileLocator, SqlState, Xid};
use parking_lot::Mutex;
use storage::buffer::{BufferPool, PageWrite, ReadMode};
use storage::page;
use storage::ForkNumber;
use txn::{TransactionManager, XidStatus};

use super::{log, Tid};
use crate::tuple;

/// The four row-lock strengths, weakest first. Each conflicts with a
/// superset of what the weaker ones conflict with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum RowLockMode {
    /// FOR KEY SHARE.
    KeyShare,
    /// FOR SHARE.
    Share,
    /// FOR NO KEY UPDATE, and what an UPDATE takes (every UPDATE is a
    /// non-key update while there are no unique indexes).
    NoKeyExclusive,
    /// FOR UPDATE, and what a DELETE takes.
    Exclusive,
}

impl RowLockMode {
    /// PostgreSQL's conflict table ("Conflicting Row-Level Locks").
    pub fn conflicts_with(self, other: RowLockMode) -> bool {
        use RowLockMode::*;
        match (self.min(other), self.max(other)) {
            (KeyShare, Exclusive) => true,
            (KeyShare, _) | (Share, Share) => false,
            _ => true,
        }
    }

    /// The infomask bits of a lock-only xmax holding this lock.
    pub fn lock_bits(self) -> u16 {
        tuple::XMAX_LOCK_ONLY
            | match self {
                RowLockMode::KeyShare => tuple::XMAX_KEYSHR_LOCK,
                RowLockMode::Share => tuple::XMAX_SHR_LOCK,
                RowLockMode::NoKeyExclusive => tuple::XMAX_EXCL_LOCK,
                RowLockMode::Exclusive => tuple::XMAX_EXCL_LOCK | tuple::KEYS_UPDATED,
            }
    }

    /// What xmax holds on a version with infomask `mask` (xmax set).
    pub fn of_xmax(mask: u16) -> RowLockMode {
        let keys = mask & tuple::KEYS_UPDATED != 0;
        if mask & tuple::XMAX_LOCK_ONLY == 0 {
            // An updater or deleter.
            return if keys {
                RowLockMode::Exclusive
            } else {
                RowLockMode::NoKeyExclusive
            };
        }
        match mask & tuple::XMAX_SHR_LOCK {
            tuple::XMAX_SHR_LOCK => RowLockMode::Share,
            tuple::XMAX_KEYSHR_LOCK => RowLockMode::KeyShare,
            _ if keys => RowLockMode::Exclusive,
            _ => RowLockMode::NoKeyExclusive,
        }
    }
}

/// What a request does when the row is locked or being changed by another
/// transaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum WaitPolicy {
    /// Wait for it to end.
    Block,
    /// SKIP LOCKED: give the row up.
    Skip,
    /// NOWAIT: fail.
    Error,
}

/// Who asks for a version: the (sub)transaction whose xid a lock or change
/// stamps, and its snapshot, whose own xids (the enclosing transaction and
/// savepoints) never conflict with it.
#[derive(Clone, Copy)]
pub struct Requester<'a> {
    pub xid: Xid,
    pub snapshot: Option<&'a txn::Snapshot>,
}

impl Requester<'_> {
    /// A transaction without savepoints.
    pub fn plain(xid: Xid) -> Requester<'static> {
        Requester {
            xid,
            snapshot: None,
        }
    }

    /// An enclosing transaction or savepoint of the requester.
    fn is_ancestor(&self, x: Xid) -> bool {
        x != self.xid && self.snapshot.is_some_and(|s| s.is_own(x))
    }
}

/// What a caller wants of a version.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Intent {
    Lock(RowLockMode),
    Update,
    /// An update changing a unique index's column.
    KeyUpdate,
    Delete,
}

impl Intent {
    fn mode(self) -> RowLockMode {
        match self {
            Intent::Lock(m) => m,
            Intent::Update => RowLockMode::NoKeyExclusive,
            Intent::KeyUpdate | Intent::Delete => RowLockMode::Exclusive,
        }
    }
}

/// Outcome of `lock_tuple`.
#[derive(Debug, PartialEq, Eq)]
pub enum LockResult {
    /// We hold the lock (now, or already did at that strength or stronger).
    Locked,
    /// This transaction updated or deleted the version.
    SelfModified,
    /// A concurrent transaction committed an update (Some: the newer
    /// version and its expected xmin, as `ModifyResult::Updated`) or a
    /// delete (None) of this version.
    Updated(Option<(Tid, Xid)>),
    /// Held by a conflicting transaction, and the policy said not to wait.
    WouldBlock,
}

/// Identifies a version across server instances in one process (tests run
/// several): each instance has its own, never freed, buffer pool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct LockerKey {
    pool: usize,
    rel: RelFileLocator,
    tid: Tid,
}

type Lockers = Vec<(Xid, RowLockMode)>;

/// Most extra lockers (beyond each version's xmax) at once, in all.
pub const MAX_EXTRA_LOCKERS: usize = 1 << 20;
const SHARDS: usize = 64;

/// The extra lockers of every version that has some, in shards by relation
/// (an update's old and new versions are in one shard).
struct LockerTable {
    shards: Vec<Mutex<HashMap<LockerKey, Lockers>>>,
    /// Lockers held in all shards (Relaxed: only the capacity check reads
    /// it, and a sweep corrects any overshoot).
    count: AtomicUsize,
}

static LOCKERS: LazyLock<LockerTable> = LazyLock::new(|| LockerTable {
    shards: (0..SHARDS).map(|_| Mutex::new(HashMap::new())).collect(),
    count: AtomicUsize::new(0),
});

impl LockerTable {
    fn shard(&self, key: &LockerKey) -> &Mutex<HashMap<LockerKey, Lockers>> {
        let h = key.pool ^ (key.rel.rel_number as usize).wrapping_mul(0x9E37_79B9);
        let h = h ^ (key.rel.db_oid as usize).wrapping_mul(31);
        &self.shards[h % SHARDS]
    }

    /// The live lockers of `key` (ended ones dropped from the table).
    fn live(&self, key: &LockerKey, tm: &TransactionManager) -> Lockers {
        let mut shard = self.shard(key).lock();
        let Some(v) = shard.get_mut(key) else {
            return Vec::new();
        };
        let before = v.len();
        v.retain(|(x, _)| tm.is_running(*x));
        self.count.fetch_sub(before - v.len(), Ordering::Relaxed);
        let out = v.clone();
        if v.is_empty() {
            shard.remove(key);
        }
        out
    }

    /// Replaces the lockers of `key`. Fails with 53200 when the table is
    /// full of live lockers.
    fn set(&self, key: LockerKey, lockers: Lockers, tm: &TransactionManager) -> PgResult<()> {
        let old = self.shard(&key).lock().get(&key).map_or(0, Vec::len);
        if lockers.len() > old
            && self.count.load(Ordering::Relaxed) + lockers.len() - old > MAX_EXTRA_LOCKERS
        {
            self.sweep(key.pool, tm);
            if self.count.load(Ordering::Relaxed) + lockers.len() - old > MAX_EXTRA_LOCKERS {
                return Err(
                    PgError::new(SqlState::OUT_OF_MEMORY, "out of shared memory")
                        .with_hint("Fewer rows can be locked by several transactions at once."),
                );
            }
        }
        let mut shard = self.shard(&key).lock();
        let old = if lockers.is_empty() {
            shard.remove(&key)
        } else {
            shard.insert(key, lockers.clone())
        };
        let old = old.map_or(0, |v| v.len());
        if lockers.len() >= old {
            self.count.fetch_add(lockers.len() - old, Ordering::Relaxed);
        } else {
            self.count.fetch_sub(old - lockers.len(), Ordering::Relaxed);
        }
        Ok(())
    }

    /// Drops the lockers of ended transactions of one server instance.
    fn sweep(&self, pool: usize, tm: &TransactionManager) {
        for s in &self.shards {
            let mut shard = s.lock();
            let mut dropped = 0;
            shard.retain(|k, v| {
                if k.pool != pool {
                    return true;
                }
                let before = v.len();
                v.retain(|(x, _)| tm.is_running(*x));
                dropped += before - v.len();
                !v.is_empty()
            });
            self.count.fetch_sub(dropped, Ordering::Relaxed);
        }
    }
}

fn key(pool: &BufferPool, rel: RelFileLocator, tid: Tid) -> LockerKey {
    LockerKey {
        pool: pool as *const BufferPool as usize,
        rel,
        tid,
    }
}

/// What stands on a version, read under its page lock by `inspect`.
pub(crate) enum Verdict {
    /// Nothing conflicts: `apply_lock` or an update/delete may go ahead.
    Proceed(Holders),
    /// This transaction updated or deleted the version.
    SelfModified,
    /// A committed transaction updated (Some: where to) or deleted it.
    Updated(Option<Tid>),
    /// A running transaction holds a conflicting lock or is changing it.
    Wait(Xid),
}

/// The running holders of a version other than its xmax's updater.
pub(crate) struct Holders {
    /// A running locker in the xmax slot that is not us.
    pub slot_locker: Option<(Xid, RowLockMode)>,
    /// Our own lock in the xmax slot, if any.
    pub own_slot: Option<RowLockMode>,
    /// Live lockers in the table besides us.
    pub others: Lockers,
    /// Our own lock in the table, if any.
    pub own_extra: Option<RowLockMode>,
}

impl Holders {
    fn own(&self) -> Option<RowLockMode> {
        self.own_slot.max(self.own_extra)
    }
}

/// Decides what `intent` by `xid` may do with the version at `tid`.
/// Requires its page's exclusive content lock (the guard the caller holds).
pub(crate) fn inspect(
    pg: &PageWrite<'_>,
    pool: &BufferPool,
    rel: RelFileLocator,
    tid: Tid,
    who: Requester<'_>,
    intent: Intent,
    tm: &TransactionManager,
) -> PgResult<Verdict> {
    let xid = who.xid;
    let t = page::item(pg, tid.offset).ok_or_else(|| super::modify::vanished(tid))?;
    let xmax = tuple::xmax(t);
    let mask = tuple::infomask(t);
    let mode = intent.mode();
    let mut holders = Holders {
        slot_locker: None,
        own_slot: None,
        others: Vec::new(),
        own_extra: None,
    };
    if xmax != 0 {
        let held = RowLockMode::of_xmax(mask);
        if mask & tuple::XMAX_LOCK_ONLY == 0 {
            if xmax == xid || who.is_ancestor(xmax) {
                return Ok(Verdict::SelfModified);
            }
            match tm.status_settled(xmax) {
                XidStatus::Committed => {
                    let (block, offset) = tuple::ctid(t);
                    let next = Tid { block, offset };
                    let updated = mask & tuple::UPDATED != 0 && next != tid;
                    return Ok(Verdict::Updated(updated.then_some(next)));
                }
                // A running updater blocks every request, FOR KEY SHARE
                // too (PostgreSQL lets that one through and locks the
                // newer versions as well; waiting is the simpler safe way).
                XidStatus::InProgress => return Ok(Verdict::Wait(xmax)),
                XidStatus::Aborted => {}
            }
        } else if xmax == xid {
            holders.own_slot = Some(held);
        } else if who.is_ancestor(xmax) {
            // Our enclosing transaction's lock: kept beside ours, so it
            // survives a rollback of this savepoint.
            holders.slot_locker = Some((xmax, held));
        } else if tm.status(xmax) == XidStatus::InProgress {
            if held.conflicts_with(mode) {
                return Ok(Verdict::Wait(xmax));
            }
            holders.slot_locker = Some((xmax, held));
        }
    }
    if mask & tuple::XMAX_HAS_LOCKERS != 0 {
        for (x, m) in LOCKERS.live(&key(pool, rel, tid), tm) {
            if x == xid {
                holders.own_extra = Some(m);
            } else if m.conflicts_with(mode) && !who.is_ancestor(x) {
                return Ok(Verdict::Wait(x));
            } else {
                holders.others.push((x, m));
            }
        }
    }
    Ok(Verdict::Proceed(holders))
}

/// Takes lock `mode` for `xid` on version `tid` (which `inspect` let
/// through with `holders`), logging the change of its header.
#[allow(clippy::too_many_arguments)]
fn apply_lock(
    pg: &mut PageWrite<'_>,
    pool: &BufferPool,
    rel: RelFileLocator,
    tid: Tid,
    xid: Xid,
    mode: RowLockMode,
    holders: Holders,
    tm: &TransactionManager,
) -> PgResult<()> {
    if holders.own().is_some_and(|m| m >= mode) {
        return Ok(());
    }
    let mode = holders.own().map_or(mode, |m| m.max(mode));
    let t = page::item_mut(pg, tid.offset).expect("inspected");
    let (new_xmax, mut bits) = match holders.slot_locker {
        // The slot is free or ours: the lock goes there.
        None => {
            if holders.own_extra.is_some() {
                LOCKERS.set(key(pool, rel, tid), holders.others.clone(), tm)?;
            }
            let lockers = if holders.others.is_empty() {
                0
            } else {
                tuple::XMAX_HAS_LOCKERS
            };
            (xid, mode.lock_bits() | lockers)
        }
        // Another running locker has the slot: we join the table.
        Some(_) => {
            let mut all = holders.others;
            all.push((xid, mode));
            LOCKERS.set(key(pool, rel, tid), all, tm)?;
            let mask = tuple::infomask(t) & tuple::XMAX_BITS;
            if mask & tuple::XMAX_HAS_LOCKERS != 0 {
                return Ok(()); // the page does not change
            }
            (tuple::xmax(t), mask | tuple::XMAX_HAS_LOCKERS)
        }
    };
    bits &= tuple::XMAX_BITS;
    stamp_lock(t, tid, new_xmax, bits);
    pg.mark_dirty();
    log::log_lock(
        tm.wal(),
        rel,
        tid.block,
        pg,
        xid,
        log::LockStamp {
            offset: tid.offset,
            xmax: new_xmax,
            bits,
        },
    );
    Ok(())
}

/// Sets a lock-only xmax and its bits (a lock never updates: ctid points
/// at the version itself again, clearing what an aborted updater left).
pub(crate) fn stamp_lock(t: &mut [u8], tid: Tid, xmax: Xid, bits: u16) {
    let cmax = tuple::cmax(t);
    tuple::set_xmax(t, xmax, cmax);
    tuple::set_ctid(t, tid.block, tid.offset);
    tuple::set_infomask(t, (tuple::infomask(t) & !tuple::XMAX_BITS) | bits);
}

/// For an update or delete `inspect` let through: the lockers that stay on
/// the old version (a locker in the xmax slot moves to the table, as the
/// updater takes the slot), written to the table. Returns them, so an
/// update can carry them to the new version. Requires the version's page
/// lock (`_page`).
pub(crate) fn lockers_after_change(
    _page: &PageWrite<'_>,
    pool: &BufferPool,
    rel: RelFileLocator,
    tid: Tid,
    holders: Holders,
    tm: &TransactionManager,
) -> PgResult<Lockers> {
    let mut stay = holders.others;
    stay.extend(holders.slot_locker);
    if holders.own_extra.is_some() || !stay.is_empty() {
        LOCKERS.set(key(pool, rel, tid), stay.clone(), tm)?;
    }
    Ok(stay)
}

/// The FOR KEY SHARE lockers of an updated row's old version also lock its
/// new version (other lockers left beside an update are the updater's own
/// enclosing transaction: the new version is ours anyway). Requires the new
/// version's page lock (`_new_page`). Returns whether any were carried.
pub(crate) fn carry_lockers(
    _new_page: &PageWrite<'_>,
    pool: &BufferPool,
    rel: RelFileLocator,
    new: Tid,
    mut lockers: Lockers,
    tm: &TransactionManager,
) -> PgResult<bool> {
    lockers.retain(|(_, m)| *m == RowLockMode::KeyShare);
    if lockers.is_empty() {
        return Ok(false);
    }
    LOCKERS.set(key(pool, rel, new), lockers, tm)?;
    Ok(true)
}

/// Locks the version at `tid` in `mode` for `xid` (SELECT ... FOR ...).
/// A conflicting running holder is waited for, or not, as `policy` says;
/// after a wait the version is looked at again. In READ COMMITTED the
/// caller follows `Updated(Some(next))` and locks `next` (EvalPlanQual).
#[allow(clippy::too_many_arguments)]
pub fn lock_tuple(
    pool: &'static BufferPool,
    rel: RelFileLocator,
    tid: Tid,
    who: Requester<'_>,
    mode: RowLockMode,
    policy: WaitPolicy,
    tm: &TransactionManager,
    wait: &mut super::WaitForXid<'_>,
) -> PgResult<LockResult> {
    let buf = pool.read_buffer(rel, ForkNumber::Main, tid.block, ReadMode::Normal, None)?;
    loop {
        let mut pg = buf.write();
        match inspect(&pg, pool, rel, tid, who, Intent::Lock(mode), tm)? {
            Verdict::Proceed(holders) => {
                apply_lock(&mut pg, pool, rel, tid, who.xid, mode, holders, tm)?;
                return Ok(LockResult::Locked);
            }
            Verdict::SelfModified => return Ok(LockResult::SelfModified),
            Verdict::Updated(next) => {
                return Ok(LockResult::Updated(super::modify::successor(
                    &pg, tid, next,
                )))
            }
            Verdict::Wait(holder) => {
                drop(pg);
                if policy != WaitPolicy::Block {
                    return Ok(LockResult::WouldBlock);
                }
                super::modify::wait_for(holder, wait)?;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::RowLockMode::*;
    use super::*;

    #[test]
    fn conflict_table_is_postgresqls() {
        let modes = [KeyShare, Share, NoKeyExclusive, Exclusive];
        // Rows: requested; columns: held (the docs' Table 13.3).
        let expect = [
            [false, false, false, true],
            [false, false, true, true],
            [false, true, true, true],
            [true, true, true, true],
        ];
        for (i, a) in modes.iter().enumerate() {
            for (j, b) in modes.iter().enumerate() {
                assert_eq!(a.conflicts_with(*b), expect[i][j], "{a:?} vs {b:?}");
            }
        }
    }

    #[test]
    fn lock_bits_round_trip() {
        for m in [KeyShare, Share, NoKeyExclusive, Exclusive] {
            let bits = m.lock_bits();
            assert_ne!(bits & tuple::XMAX_LOCK_ONLY, 0);
            assert_eq!(RowLockMode::of_xmax(bits), m);
            assert_eq!(bits & !tuple::XMAX_BITS, 0);
        }
        // Updaters: an UPDATE is a non-key update, a DELETE changes the key.
        assert_eq!(RowLockMode::of_xmax(tuple::UPDATED), NoKeyExclusive);
        assert_eq!(RowLockMode::of_xmax(tuple::KEYS_UPDATED), Exclusive);
    }

    use std::sync::Arc;

    use storage::smgr::Smgr;
    use types::{DataType, TypeId, Value};

    use crate::heap::{self, HeapScan, InsertTarget, ModifyResult};

    const REL: RelFileLocator = RelFileLocator {
        spc_oid: common::ids::DEFAULT_TABLESPACE_OID,
        db_oid: 5,
        rel_number: 16390,
    };
    const TYPES: [DataType; 1] = [DataType::new(TypeId::Int8)];

    struct Fixture {
        _dir: tempfile::TempDir,
        tm: TransactionManager,
        pool: &'static BufferPool,
    }

    fn fixture() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("global")).unwrap();
        let tm = TransactionManager::open(dir.path(), txn::test_wal(dir.path())).unwrap();
        let pool = BufferPool::new(16, Arc::new(Smgr::new(dir.path())));
        heap::create_storage(pool, tm.wal(), REL).unwrap();
        Fixture {
            _dir: dir,
            tm,
            pool,
        }
    }

    fn row(a: i64, xid: Xid) -> Vec<u8> {
        let mut out = Vec::new();
        tuple::form_tuple(&TYPES, &[Value::Int8(a)], xid, 0, &mut out);
        out
    }

    impl Fixture {
        fn insert_committed(&self, a: i64) -> Tid {
            let x = self.tm.begin().unwrap();
            let tid = heap::insert(
                self.pool,
                &self.tm,
                REL,
                &mut row(a, x),
                &mut InsertTarget::new(),
            )
            .unwrap();
            self.tm.commit(x, txn::SyncCommit::Off).unwrap();
            tid
        }

        fn lock(&self, tid: Tid, xid: Xid, mode: RowLockMode) -> LockResult {
            lock_tuple(
                self.pool,
                REL,
                tid,
                Requester::plain(xid),
                mode,
                WaitPolicy::Skip,
                &self.tm,
                &mut cancel_wait,
            )
            .unwrap()
        }

        /// An update that would have to wait fails at once (a wait that is
        /// cancelled as soon as it starts).
        fn update(&self, tid: Tid, xid: Xid, a: i64) -> PgResult<ModifyResult> {
            heap::update(
                self.pool,
                REL,
                tid,
                &mut row(a, xid),
                false,
                false,
                Requester::plain(xid),
                0,
                &self.tm,
                &mut InsertTarget::new(),
                &mut cancel_wait,
            )
        }

        fn delete(&self, tid: Tid, xid: Xid) -> PgResult<ModifyResult> {
            heap::delete(
                self.pool,
                REL,
                tid,
                Requester::plain(xid),
                0,
                &self.tm,
                &mut cancel_wait,
            )
        }

        fn header(&self, tid: Tid) -> (Xid, u16) {
            let t = heap::fetch_any(self.pool, REL, tid).unwrap().unwrap();
            (tuple::xmax(&t), tuple::infomask(&t) & tuple::XMAX_BITS)
        }

        fn visible_count(&self) -> usize {
            let snap = self.tm.snapshot(0, 0);
            let mut scan = HeapScan::new(self.pool, REL).unwrap();
            let mut n = 0;
            while scan
                .next_page(&snap, &self.tm, |_, _| {
                    n += 1;
                    Ok(())
                })
                .unwrap()
            {}
            n
        }
    }

    /// A wait that is cancelled as soon as it starts.
    fn cancel_wait(_: Xid) -> PgResult<txn::XidStatus> {
        Err(common::PgError::new(
            SqlState::QUERY_CANCELED,
            "canceling statement due to user request",
        ))
    }

    fn cancelled(r: PgResult<ModifyResult>) -> bool {
        matches!(r, Err(e) if e.code == SqlState::QUERY_CANCELED)
    }

    #[test]
    fn share_lockers_coexist_and_block_an_update_until_both_end() {
        let f = fixture();
        let tid = f.insert_committed(1);
        let (a, b, c) = (
            f.tm.begin().unwrap(),
            f.tm.begin().unwrap(),
            f.tm.begin().unwrap(),
        );
        assert_eq!(f.lock(tid, a, Share), LockResult::Locked);
        assert_eq!(f.header(tid), (a, Share.lock_bits()));
        assert_eq!(f.lock(tid, b, Share), LockResult::Locked);
        // b joined the locker table; the slot still names a.
        assert_eq!(
            f.header(tid),
            (a, Share.lock_bits() | tuple::XMAX_HAS_LOCKERS)
        );
        // A locked row is still there for every snapshot.
        assert_eq!(f.visible_count(), 1);
        // Conflicting requests would wait: for a, then for b.
        assert_eq!(f.lock(tid, c, Exclusive), LockResult::WouldBlock);
        assert!(cancelled(f.update(tid, c, 2)));
        f.tm.commit(a, txn::SyncCommit::Off).unwrap();
        assert!(cancelled(f.update(tid, c, 2)));
        f.tm.abort(b);
        let ModifyResult::Done(new) = f.update(tid, c, 2).unwrap() else {
            panic!("update did not go through");
        };
        assert_eq!(f.header(tid), (c, tuple::UPDATED));
        f.tm.commit(c, txn::SyncCommit::Off).unwrap();
        // A locker of the old version now learns where the row went.
        let d = f.tm.begin().unwrap();
        assert_eq!(
            f.lock(tid, d, KeyShare),
            LockResult::Updated(Some((new, c)))
        );
        assert_eq!(f.lock(new, d, KeyShare), LockResult::Locked);
    }

    #[test]
    fn key_share_lets_a_non_key_update_through_and_locks_the_new_version() {
        let f = fixture();
        let tid = f.insert_committed(1);
        let (a, b, c) = (
            f.tm.begin().unwrap(),
            f.tm.begin().unwrap(),
            f.tm.begin().unwrap(),
        );
        assert_eq!(f.lock(tid, a, KeyShare), LockResult::Locked);
        // FOR NO KEY UPDATE and a (non-key) UPDATE coexist with KEY SHARE.
        assert_eq!(f.lock(tid, b, NoKeyExclusive), LockResult::Locked);
        assert_eq!(f.lock(tid, c, NoKeyExclusive), LockResult::WouldBlock);
        f.tm.commit(b, txn::SyncCommit::Off).unwrap();
        let ModifyResult::Done(new) = f.update(tid, c, 2).unwrap() else {
            panic!("update did not go through");
        };
        // c took the slot; a moved to the table and locks both versions.
        assert_eq!(f.header(tid), (c, tuple::UPDATED | tuple::XMAX_HAS_LOCKERS));
        assert_eq!(f.header(new), (0, tuple::XMAX_HAS_LOCKERS));
        f.tm.commit(c, txn::SyncCommit::Off).unwrap();
        // Deleting the new version waits for the key-share locker...
        let d = f.tm.begin().unwrap();
        assert!(cancelled(f.delete(new, d)));
        assert_eq!(f.lock(new, d, Exclusive), LockResult::WouldBlock);
        // ...until it ends.
        f.tm.commit(a, txn::SyncCommit::Off).unwrap();
        assert_eq!(f.delete(new, d).unwrap(), ModifyResult::Done(new));
        assert_eq!(f.header(new).1, tuple::KEYS_UPDATED);
    }

    #[test]
    fn own_locks_upgrade_and_do_not_stop_own_updates() {
        let f = fixture();
        let tid = f.insert_committed(1);
        let (a, b) = (f.tm.begin().unwrap(), f.tm.begin().unwrap());
        assert_eq!(f.lock(tid, a, KeyShare), LockResult::Locked);
        // Asking again, weaker or equal, changes nothing.
        assert_eq!(f.lock(tid, a, KeyShare), LockResult::Locked);
        assert_eq!(f.lock(tid, b, Share), LockResult::Locked);
        // a's upgrade to FOR UPDATE conflicts with b's share lock.
        assert_eq!(f.lock(tid, a, Exclusive), LockResult::WouldBlock);
        f.tm.abort(b);
        assert_eq!(f.lock(tid, a, Exclusive), LockResult::Locked);
        // b's entry was dropped with b; a holds the slot with FOR UPDATE.
        assert_eq!(f.header(tid), (a, Exclusive.lock_bits()));
        // Our own lock never stops our own update.
        assert!(matches!(
            f.update(tid, a, 2).unwrap(),
            ModifyResult::Done(_)
        ));
        // A version we updated is not ours to lock again.
        assert_eq!(f.lock(tid, a, Share), LockResult::SelfModified);
        f.tm.abort(a);
        // The aborted update leaves the row free.
        let c = f.tm.begin().unwrap();
        assert_eq!(f.lock(tid, c, Exclusive), LockResult::Locked);
        assert_eq!(f.header(tid), (c, Exclusive.lock_bits()));
    }

    #[test]
    fn locks_are_logged_and_replayed() {
        let f = fixture();
        let tid = f.insert_committed(1);
        let other = f.insert_committed(2);
        let (a, b) = (f.tm.begin().unwrap(), f.tm.begin().unwrap());
        assert_eq!(f.lock(tid, a, Share), LockResult::Locked);
        assert_eq!(f.lock(tid, b, Share), LockResult::Locked);
        assert_eq!(f.lock(other, a, NoKeyExclusive), LockResult::Locked);
        let before = (f.header(tid), f.header(other));
        f.tm.wal().flush_all().unwrap();
        // Replay the log into a fresh pool over the same (never written) files.
        let dir = f._dir.path();
        let wal2 = wal::Wal::open(
            dir,
            wal::WalSettings::new(
                1 << 20,
                wal::settings::WalReloadable {
                    fsync: false,
                    ..Default::default()
                },
            ),
        )
        .unwrap();
        let tm2 = TransactionManager::open(dir, wal2).unwrap();
        let pool2 = BufferPool::new(16, Arc::new(Smgr::new(dir)));
        let redo = heap::log::HeapRedo { pool: pool2 };
        let mut handlers: Vec<Option<&dyn wal::Redo>> = vec![None; wal::rmgr::COUNT];
        handlers[wal::rmgr::HEAP as usize] = Some(&redo);
        handlers[wal::rmgr::SMGR as usize] = Some(&redo);
        handlers[wal::rmgr::XACT as usize] = Some(&tm2);
        wal2.startup(dir, &handlers).unwrap();
        let header = |tid| {
            let t = heap::fetch_any(pool2, REL, tid).unwrap().unwrap();
            (tuple::xmax(&t), tuple::infomask(&t) & tuple::XMAX_BITS)
        };
        assert_eq!((header(tid), header(other)), before);
        // After the crash a and b are gone: the rows are free.
        let c = tm2.begin().unwrap();
        assert!(c > b);
        let r = lock_tuple(
            pool2,
            REL,
            tid,
            Requester::plain(c),
            Exclusive,
            WaitPolicy::Error,
            &tm2,
            &mut cancel_wait,
        );
        assert_eq!(r.unwrap(), LockResult::Locked);
        let r = lock_tuple(
            pool2,
            REL,
            other,
            Requester::plain(c),
            Exclusive,
            WaitPolicy::Error,
            &tm2,
            &mut cancel_wait,
        );
        assert_eq!(r.unwrap(), LockResult::Locked);
    }
}
