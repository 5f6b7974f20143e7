//! Tests of the heap's side of indexes: HOT chains, pruning to redirects
//! and dead pointers, fetches through chains, unique-check classification,
//! VACUUM's two passes, and redo of all of it.

use std::collections::BTreeSet;
use std::sync::Arc;

use common::{PgResult, RelFileLocator, Xid};
use storage::buffer::{BufferPool, ReadMode};
use storage::page::{self, ItemState};
use storage::smgr::Smgr;
use storage::ForkNumber;
use txn::{OwnXids, Snapshot, TransactionManager, XidStatus};
use types::Value;

use super::prune::{prune_page, DeadPointers};
use super::test_rows::{form, TYPES};
use super::vacuum::{vacuum_heap, HeapVacuumOptions, IndexPass};
use super::visibilitymap::{self, MapReader};
use super::*;
use crate::btree::KeyHolder;

const VACUUM_TRUNCATE: HeapVacuumOptions = HeapVacuumOptions {
    truncate: true,
    scan_all: false,
};

const REL: RelFileLocator = RelFileLocator {
    spc_oid: common::ids::DEFAULT_TABLESPACE_OID,
    db_oid: 5,
    rel_number: 16500,
};

struct Fixture {
    dir: tempfile::TempDir,
    tm: TransactionManager,
    pool: &'static BufferPool,
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("global")).unwrap();
    let tm = TransactionManager::open(dir.path(), txn::test_wal(dir.path())).unwrap();
    let pool = BufferPool::new(64, Arc::new(Smgr::new(dir.path())));
    create_storage(pool, tm.wal(), REL).unwrap();
    Fixture { dir, tm, pool }
}

fn value_of(t: &[u8]) -> i64 {
    let mut row = Vec::new();
    tuple::deform_tuple(t, &TYPES, None, &mut row).unwrap();
    match row[0] {
        Value::Int8(a) => a,
        _ => unreachable!(),
    }
}

/// Nobody else writes in these tests: a wait would be a bug.
fn never(x: Xid) -> PgResult<XidStatus> {
    panic!("waited for {x}")
}

impl Fixture {
    fn insert(&self, a: i64, pad: usize, xid: Xid) -> Tid {
        insert(
            self.pool,
            &self.tm,
            REL,
            &mut form(a, pad, xid, 0),
            &mut InsertTarget::new(),
        )
        .unwrap()
    }

    fn insert_committed(&self, a: i64, pad: usize) -> Tid {
        let x = self.tm.begin().unwrap();
        let tid = self.insert(a, pad, x);
        self.commit(x);
        tid
    }

    fn commit(&self, x: Xid) {
        self.tm.commit(x, txn::SyncCommit::Off).unwrap();
    }

    fn update(&self, tid: Tid, a: i64, pad: usize, xid: Xid, hot: bool) -> ModifyResult {
        update(
            self.pool,
            REL,
            tid,
            &mut form(a, pad, xid, 0),
            hot,
            false,
            Requester::plain(xid),
            0,
            &self.tm,
            &mut InsertTarget::new(),
            &mut never,
        )
        .unwrap()
    }

    /// A committed HOT update; returns the new version's tid.
    fn hot_update(&self, tid: Tid, a: i64) -> Tid {
        let x = self.tm.begin().unwrap();
        let ModifyResult::HeapOnly(new) = self.update(tid, a, 10, x, true) else {
            panic!("not a HOT update");
        };
        self.commit(x);
        new
    }

    fn delete(&self, tid: Tid, xid: Xid) {
        let r = delete(
            self.pool,
            REL,
            tid,
            Requester::plain(xid),
            0,
            &self.tm,
            &mut never,
        );
        assert_eq!(r.unwrap(), ModifyResult::Done(tid));
    }

    fn prune(&self, block: u32, horizon: Xid) -> prune::PruneResult {
        let buf = self.read(block);
        let mut pg = buf.write();
        prune_page(&mut pg, REL, block, horizon, &self.tm, DeadPointers::Keep)
    }

    fn read(&self, block: u32) -> storage::buffer::Buffer {
        self.pool
            .read_buffer(REL, ForkNumber::Main, block, ReadMode::Normal, None)
            .unwrap()
    }

    fn state(&self, tid: Tid) -> ItemState {
        page::item_id(&self.read(tid.block).read(), tid.offset).0
    }

    fn redirect(&self, tid: Tid) -> Option<u16> {
        page::redirect_target(&self.read(tid.block).read(), tid.offset)
    }

    fn header(&self, tid: Tid) -> u16 {
        tuple::infomask(&fetch_any(self.pool, REL, tid).unwrap().unwrap())
    }

    /// What `snap` sees through the index entry `root`: the member's tid
    /// and value.
    fn fetch(&self, root: Tid, snap: &Snapshot) -> Option<(Tid, i64)> {
        fetch_visible(self.pool, REL, root, snap, &self.tm, |tid, t| {
            (tid, value_of(t))
        })
        .unwrap()
    }

    fn holder(&self, root: Tid, own: Xid) -> KeyHolder {
        key_holder(self.pool, &self.tm, REL, root, &OwnXids::top(own)).unwrap()
    }

    fn fresh(&self) -> Snapshot {
        self.tm.snapshot(0, 0)
    }

    /// Replays the whole log into a new pool over the same files and checks
    /// every page comes out as the forward path left it (LSN and checksum
    /// aside).
    fn replay_matches(&self) {
        self.tm.wal().flush_all().unwrap();
        let dir = self.dir.path();
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
        let pool2 = BufferPool::new(64, Arc::new(Smgr::new(dir)));
        let redo = log::HeapRedo { pool: pool2 };
        let mut handlers: Vec<Option<&dyn wal::Redo>> = vec![None; wal::rmgr::COUNT];
        handlers[wal::rmgr::HEAP as usize] = Some(&redo);
        handlers[wal::rmgr::SMGR as usize] = Some(&redo);
        handlers[wal::rmgr::XACT as usize] = Some(&tm2);
        wal2.startup(dir, &handlers).unwrap();
        let n = self.pool.smgr().nblocks(REL, ForkNumber::Main).unwrap();
        assert_eq!(pool2.smgr().nblocks(REL, ForkNumber::Main).unwrap(), n);
        for block in 0..n {
            let b1 = self.read(block);
            let b2 = pool2
                .read_buffer(REL, ForkNumber::Main, block, ReadMode::Normal, None)
                .unwrap();
            assert!(b1.read()[12..] == b2.read()[12..], "block {block} differs");
        }
        // The visibility map comes back with the same bits, and a bit is
        // set only for a page whose every version was committed (by then)
        // and carries PD_ALL_VISIBLE.
        let (mut m1, mut m2) = (MapReader::new(REL), MapReader::new(REL));
        for block in 0..n {
            let bits = m2.status(pool2, block).unwrap();
            assert_eq!(
                m1.status(self.pool, block).unwrap(),
                bits,
                "map bits of {block}"
            );
            if bits & visibilitymap::ALL_VISIBLE != 0 {
                let buf = pool2
                    .read_buffer(REL, ForkNumber::Main, block, ReadMode::Normal, None)
                    .unwrap();
                let pg = buf.read();
                assert!(visibilitymap::page_all_visible(&pg), "flag of {block}");
                for off in 1..=page::item_count(&pg) {
                    if let Some(t) = page::item(&pg, off) {
                        assert_eq!(tm2.status(tuple::xmin(t)), XidStatus::Committed);
                        assert!(
                            !prune::xmax_deletes(t)
                                || tm2.status(tuple::xmax(t)) == XidStatus::Aborted
                        );
                    }
                }
            }
        }
    }

    fn all_visible(&self, block: u32) -> (bool, bool) {
        let flag = visibilitymap::page_all_visible(&self.read(block).read());
        let bit = MapReader::new(REL).all_visible(self.pool, block).unwrap();
        (flag, bit)
    }
}

#[test]
fn same_page_updates_make_a_hot_chain() {
    let f = fixture();
    let root = f.insert_committed(1, 10);
    let v2 = f.hot_update(root, 2);
    let v3 = f.hot_update(v2, 3);
    assert_eq!((v2.block, v3.block), (0, 0));
    for (old, new) in [(root, v2), (v2, v3)] {
        let m = f.header(old);
        assert_ne!(m & tuple::HOT_UPDATED, 0);
        assert_ne!(m & tuple::UPDATED, 0);
        assert_ne!(f.header(new) & tuple::HEAP_ONLY, 0);
    }
    assert_eq!(f.header(root) & tuple::HEAP_ONLY, 0);
    assert_eq!(f.header(v3) & tuple::HOT_UPDATED, 0);
    // Scans see every version as a tuple of its own; the index entry
    // leads to the newest one.
    assert_eq!(f.fetch(root, &f.fresh()), Some((v3, 3)));
    // A HOT update is not allowed (an indexed column changed): the chain
    // ends, and the new version is a root of its own.
    let x = f.tm.begin().unwrap();
    let ModifyResult::Done(v4) = f.update(v3, 4, 10, x, false) else {
        panic!("HOT update where none was allowed");
    };
    f.commit(x);
    assert_eq!(v4.block, 0);
    assert_eq!(f.header(v3) & tuple::HOT_UPDATED, 0);
    assert_eq!(f.header(v4) & tuple::HEAP_ONLY, 0);
    assert_eq!(f.fetch(root, &f.fresh()), None);
    assert_eq!(f.fetch(v4, &f.fresh()), Some((v4, 4)));
    // Allowed but not fitting on the page: a cold update to another page.
    f.insert_committed(0, 7000);
    let x = f.tm.begin().unwrap();
    let ModifyResult::Done(v5) = f.update(v4, 5, 2000, x, true) else {
        panic!("HOT update across pages");
    };
    f.commit(x);
    assert_ne!(v5.block, 0);
    assert_eq!(f.header(v4) & tuple::HOT_UPDATED, 0);
    f.replay_matches();
}

#[test]
fn pruning_redirects_the_root_and_frees_heap_only_members() {
    let f = fixture();
    let root = f.insert_committed(1, 10);
    let other = f.insert_committed(100, 10);
    let v2 = f.hot_update(root, 2);
    let v3 = f.hot_update(v2, 3);
    let v4 = f.hot_update(v3, 4);
    let r = f.prune(0, f.tm.global_xmin());
    assert_eq!((r.removed, r.live), (3, 2));
    // The root's pointer leads to the survivor; the dead heap-only
    // members' pointers are free at once (no index points at them).
    assert_eq!(f.redirect(root), Some(v4.offset));
    assert_eq!(f.state(v2), ItemState::Unused);
    assert_eq!(f.state(v3), ItemState::Unused);
    assert_eq!(f.fetch(root, &f.fresh()), Some((v4, 4)));
    assert_eq!(f.holder(root, 0), KeyHolder::Live);
    // The next HOT update reuses a freed slot; the chain goes on from the
    // redirect.
    let v5 = f.hot_update(v4, 5);
    assert_eq!(v5, v2);
    assert_eq!(f.fetch(root, &f.fresh()), Some((v5, 5)));
    let r = f.prune(0, f.tm.global_xmin());
    assert_eq!(r.removed, 1);
    assert_eq!(f.redirect(root), Some(v5.offset));
    assert_eq!(f.state(v4), ItemState::Unused);
    // A row deleted for good: the redirect becomes a dead pointer, kept
    // for VACUUM's index pass; the last member is freed.
    let x = f.tm.begin().unwrap();
    f.delete(v5, x);
    f.commit(x);
    let r = f.prune(0, f.tm.global_xmin());
    assert_eq!(r.removed, 1);
    assert_eq!(f.state(root), ItemState::Dead);
    assert_eq!(f.state(v5), ItemState::Unused);
    assert_eq!(f.fetch(root, &f.fresh()), None);
    assert_eq!(f.holder(root, 0), KeyHolder::Dead);
    // A plain delete leaves a dead pointer too.
    let x = f.tm.begin().unwrap();
    f.delete(other, x);
    f.commit(x);
    f.prune(0, f.tm.global_xmin());
    assert_eq!(f.state(other), ItemState::Dead);
    // Dead pointers are never reused by inserts.
    let t = f.insert_committed(7, 10);
    assert!(t.offset != root.offset && t.offset != other.offset);
    f.replay_matches();
}

#[test]
fn fetch_visible_finds_each_snapshots_member_through_redirects() {
    let f = fixture();
    let x1 = f.tm.begin().unwrap();
    let root = f.insert(1, 10, x1);
    let mine = f.tm.snapshot(x1, 1);
    assert_eq!(f.fetch(root, &mine), Some((root, 1)));
    assert_eq!(f.fetch(root, &f.fresh()), None);
    f.commit(x1);
    let s1 = f.fresh();
    let v2 = f.hot_update(root, 2);
    let s2 = f.fresh();
    let x3 = f.tm.begin().unwrap();
    let ModifyResult::HeapOnly(v3) = f.update(v2, 3, 10, x3, true) else {
        panic!("not HOT")
    };
    let s3 = f.tm.snapshot(x3, 1);
    assert_eq!(f.fetch(root, &s1), Some((root, 1)));
    assert_eq!(f.fetch(root, &s2), Some((v2, 2)));
    assert_eq!(f.fetch(root, &s3), Some((v3, 3)));
    assert_eq!(f.fetch(root, &f.fresh()), Some((v2, 2)));
    // Pruned below a horizon past x1's update's committer (s1's rows are
    // gone, as if s1 had ended): the root redirects to v2, which x3 is
    // still updating.
    let r = f.prune(0, v2_inserter(&f, v2) + 1);
    assert_eq!((r.removed, r.live, r.inserting), (1, 1, 1));
    assert_eq!(f.redirect(root), Some(v2.offset));
    assert_eq!(f.fetch(root, &s2), Some((v2, 2)));
    assert_eq!(f.fetch(root, &s3), Some((v3, 3)));
    // An index entry never names a heap-only member directly, nor does a
    // walk start at one.
    assert_eq!(f.fetch(v2, &s2), None);
    // x3 aborts: its version is dead, nothing leads to it any more (v2's
    // xmax aborted) and pruning frees it; v2 is the row again.
    f.tm.abort(x3);
    assert_eq!(f.fetch(root, &f.fresh()), Some((v2, 2)));
    let r = f.prune(0, f.tm.global_xmin());
    assert_eq!((r.removed, r.live), (1, 1));
    assert_eq!(f.state(v3), ItemState::Unused);
    // The freed slot goes to an unrelated row. v2 still names it (its
    // xmax, aborted, is HOT-updated), but a walk that gets past v2 stops
    // there: the tuple is no heap-only member.
    let unrelated = f.insert_committed(9, 10);
    assert_eq!(unrelated, v3);
    assert_eq!(f.fetch(root, &s1), None);
    assert_eq!(f.fetch(unrelated, &f.fresh()), Some((unrelated, 9)));
    // The chain goes on from v2 past the aborted update.
    let v4 = f.hot_update(v2, 4);
    assert_eq!(f.fetch(root, &f.fresh()), Some((v4, 4)));
    assert_eq!(f.fetch(root, &s2), Some((v2, 2)));
    assert_eq!(f.holder(root, 0), KeyHolder::Live);
    f.replay_matches();
}

/// The transaction that inserted the version at `tid`.
fn v2_inserter(f: &Fixture, tid: Tid) -> Xid {
    tuple::xmin(&fetch_any(f.pool, REL, tid).unwrap().unwrap())
}

#[test]
fn key_holder_classifies_a_chain_for_unique_checks() {
    let f = fixture();
    // Committed and live.
    let live = f.insert_committed(1, 10);
    assert_eq!(f.holder(live, 0), KeyHolder::Live);
    // Inserted by a running transaction: wait for it; our own: live.
    let x = f.tm.begin().unwrap();
    let ins = f.insert(2, 10, x);
    assert_eq!(f.holder(ins, 0), KeyHolder::InProgress(x));
    assert_eq!(f.holder(ins, x), KeyHolder::Live);
    f.tm.abort(x);
    assert_eq!(f.holder(ins, 0), KeyHolder::Dead);
    // Being deleted: wait for the deleter; deleted by us or committed: dead.
    let del = f.insert_committed(3, 10);
    let d = f.tm.begin().unwrap();
    f.delete(del, d);
    assert_eq!(f.holder(del, 0), KeyHolder::InProgress(d));
    assert_eq!(f.holder(del, d), KeyHolder::Dead);
    f.commit(d);
    assert_eq!(f.holder(del, 0), KeyHolder::Dead);
    // HOT-updated by a running transaction: the root's deleter decides;
    // the updater itself holds the key in its new version.
    let row = f.insert_committed(4, 10);
    let u = f.tm.begin().unwrap();
    let ModifyResult::HeapOnly(_) = f.update(row, 4, 10, u, true) else {
        panic!("not HOT")
    };
    assert_eq!(f.holder(row, 0), KeyHolder::InProgress(u));
    assert_eq!(f.holder(row, u), KeyHolder::Live);
    f.commit(u);
    assert_eq!(f.holder(row, 0), KeyHolder::Live);
    // An aborted HOT update leaves the root holding the key.
    let row2 = f.insert_committed(5, 10);
    let a = f.tm.begin().unwrap();
    let ModifyResult::HeapOnly(_) = f.update(row2, 5, 10, a, true) else {
        panic!("not HOT")
    };
    f.tm.abort(a);
    assert_eq!(f.holder(row2, 0), KeyHolder::Live);
    // A row lock deletes nothing.
    let locked = f.insert_committed(6, 10);
    let l = f.tm.begin().unwrap();
    let r = lock_tuple(
        f.pool,
        REL,
        locked,
        Requester::plain(l),
        RowLockMode::Exclusive,
        WaitPolicy::Error,
        &f.tm,
        &mut never,
    );
    assert_eq!(r.unwrap(), LockResult::Locked);
    assert_eq!(f.holder(locked, 0), KeyHolder::Live);
    // After pruning, through the redirect.
    f.prune(0, f.tm.global_xmin());
    assert!(f.redirect(row).is_some());
    assert_eq!(f.holder(row, 0), KeyHolder::Live);
    assert_eq!(f.state(del), ItemState::Dead);
    assert_eq!(f.holder(del, 0), KeyHolder::Dead);
}

/// A fake index over the heap's roots: VACUUM's index pass removes the
/// entries whose tid it is told is dead.
#[derive(Default)]
struct FakeIndex {
    entries: BTreeSet<Tid>,
    passes: u32,
    asked_at_most: usize,
}

#[test]
fn vacuum_runs_index_passes_then_frees_dead_pointers() {
    let f = fixture();
    let mut index = FakeIndex::default();
    // About 20 rows a page over several pages.
    let mut rows = Vec::new();
    for a in 0..100 {
        let tid = f.insert_committed(a, 300);
        index.entries.insert(tid);
        rows.push(tid);
    }
    let pages = f.pool.smgr().nblocks(REL, ForkNumber::Main).unwrap();
    assert!(pages >= 4, "{pages} pages");
    // Every third row deleted, every other row HOT-updated twice (no new
    // entries); all committed.
    let x = f.tm.begin().unwrap();
    for tid in rows.iter().step_by(3) {
        f.delete(*tid, x);
    }
    f.commit(x);
    let mut latest = std::collections::BTreeMap::new();
    for (i, tid) in rows.iter().enumerate() {
        if i % 2 == 1 && i % 3 != 0 {
            let v = f.hot_update(*tid, i as i64 + 1000);
            latest.insert(*tid, f.hot_update(v, i as i64 + 2000));
        }
    }
    let deleted = rows.iter().step_by(3).count();
    // A dead-tid store of one page's worth: a round per page with dead
    // pointers.
    let mut pass = |dead: &dyn Fn(Tid) -> bool| -> PgResult<()> {
        let before = index.entries.len();
        index.entries.retain(|t| !dead(*t));
        index.passes += 1;
        index.asked_at_most = index.asked_at_most.max(before - index.entries.len());
        Ok(())
    };
    let stats = vacuum_heap(
        f.pool,
        &f.tm,
        REL,
        VACUUM_TRUNCATE,
        Some(&mut pass as &mut IndexPass<'_>),
        1,
        || Ok(()),
    )
    .unwrap();
    assert_eq!(stats.dead_items, deleted as u64);
    assert_eq!(stats.index_scans, index.passes);
    assert_eq!(stats.index_scans, stats.pages_with_dead_items);
    assert!(index.passes >= 4 && index.asked_at_most <= 8);
    // Deleted rows: versions and pointers gone, index entries too (the
    // updates pruned some of them before VACUUM came).
    assert!(stats.tuples_removed > 0);
    assert!(stats.tuples_removed <= (deleted + 2 * latest.len()) as u64);
    assert_eq!(stats.live, (rows.len() - deleted) as u64);
    assert_eq!(index.entries.len(), rows.len() - deleted);
    for (i, tid) in rows.iter().enumerate() {
        let found = f.fetch(*tid, &f.fresh());
        if i % 3 == 0 {
            assert_eq!(f.state(*tid), ItemState::Unused);
            assert!(found.is_none());
        } else if let Some(v) = latest.get(tid) {
            assert_eq!(found, Some((*v, i as i64 + 2000)));
            assert!(index.entries.contains(tid));
        } else {
            assert_eq!(found, Some((*tid, i as i64)));
        }
    }
    for block in 0..pages {
        let buf = f.read(block);
        let pg = buf.read();
        for off in 1..=page::item_count(&pg) {
            assert_ne!(page::item_id(&pg, off).0, ItemState::Dead);
        }
    }
    // One round for everything with a big enough store; nothing to do now.
    let mut pass = |_: &dyn Fn(Tid) -> bool| -> PgResult<()> { panic!("no dead tids") };
    let again = vacuum_heap(
        f.pool,
        &f.tm,
        REL,
        VACUUM_TRUNCATE,
        Some(&mut pass as &mut IndexPass<'_>),
        1 << 20,
        || Ok(()),
    )
    .unwrap();
    assert_eq!((again.index_scans, again.dead_items), (0, 0));
    // Freed slots are reused.
    let t = f.insert_committed(500, 300);
    assert!(rows.iter().step_by(3).any(|r| *r == t), "{t:?}");
    f.replay_matches();
}

#[test]
fn vacuum_without_indexes_frees_dead_pointers_in_one_pass_and_truncates() {
    let f = fixture();
    let mut rows = Vec::new();
    for a in 0..60 {
        rows.push(f.insert_committed(a, 300));
    }
    let pages = f.pool.smgr().nblocks(REL, ForkNumber::Main).unwrap();
    // Pruned earlier by someone else: dead pointers left for VACUUM.
    let x = f.tm.begin().unwrap();
    for tid in &rows {
        f.delete(*tid, x);
    }
    f.commit(x);
    f.prune(0, f.tm.global_xmin());
    assert_eq!(f.state(rows[0]), ItemState::Dead);
    let stats = vacuum_heap(f.pool, &f.tm, REL, VACUUM_TRUNCATE, None, 1, || Ok(())).unwrap();
    assert_eq!(stats.index_scans, 0);
    assert_eq!(stats.dead_items, rows.len() as u64);
    assert_eq!(stats.pages_with_dead_items, pages);
    // Every page came out empty: all cut off.
    assert_eq!(stats.pages_after, 0);
    assert_eq!(f.pool.smgr().nblocks(REL, ForkNumber::Main).unwrap(), 0);
    f.insert_committed(1, 10);
    f.replay_matches();
}

#[test]
fn update_statements_see_through_pruned_chains() {
    // The executor's EvalPlanQual path: a concurrent HOT update reported as
    // Updated(next), `fetch_version` of next, and the retry on it.
    let f = fixture();
    let root = f.insert_committed(1, 10);
    let v2 = f.hot_update(root, 2);
    let u = f.tm.begin().unwrap();
    let ModifyResult::HeapOnly(v3) = f.update(v2, 3, 10, u, true) else {
        panic!("not HOT")
    };
    let late = f.tm.begin().unwrap();
    f.commit(u);
    // `late` found v2 visible and now tries to update it.
    let r = f.update(v2, 30, 10, late, true);
    assert_eq!(r, ModifyResult::Updated(Some((v3, u))));
    // A prune meanwhile (its horizon held back by nobody here) leaves v3
    // where the ctid says.
    f.prune(0, f.tm.global_xmin());
    assert_eq!(f.redirect(root), Some(v3.offset));
    let bytes = fetch_version(f.pool, REL, v3, u).unwrap().unwrap();
    assert_eq!(value_of(&bytes), 3);
    // The root's slot is a redirect now: no version there to take.
    assert!(fetch_version(f.pool, REL, root, u).unwrap().is_none());
    let ModifyResult::HeapOnly(v4) = f.update(v3, 30, 10, late, true) else {
        panic!("not HOT")
    };
    f.commit(late);
    assert_eq!(f.fetch(root, &f.fresh()), Some((v4, 30)));
    f.replay_matches();
}

#[test]
fn index_build_names_chain_roots_and_leaves_hot_updated_old_versions_out() {
    let f = fixture();
    let a = f.insert_committed(1, 10);
    let b = f.insert_committed(2, 10);
    let c = f.insert_committed(3, 10);
    let d = f.insert_committed(4, 10);
    // a: HOT-updated twice, pruned to a redirect to its last version.
    let a2 = f.hot_update(a, 10);
    let a3 = f.hot_update(a2, 11);
    f.prune(0, f.tm.global_xmin());
    assert_eq!(f.redirect(a), Some(a3.offset));
    // What follows is recently dead to a transaction older than it.
    let old = f.tm.begin().unwrap();
    let b2 = f.hot_update(b, 20);
    let x = f.tm.begin().unwrap();
    f.delete(c, x);
    let ModifyResult::Done(d2) = f.update(d, 40, 10, x, false) else {
        panic!("HOT update where none was allowed")
    };
    f.commit(x);
    // The building transaction's own insert, HOT-updated by it.
    let build = f.tm.begin().unwrap();
    let e = f.insert(5, 10, build);
    let ModifyResult::HeapOnly(e2) = f.update(e, 50, 10, build, true) else {
        panic!("not HOT")
    };
    let roots = chain_roots(&f.read(0).read(), 0);
    assert_eq!(roots[a.offset as usize], 0, "a redirect is no version");
    assert_eq!(roots[a3.offset as usize], a.offset);
    assert_eq!(roots[b.offset as usize], b.offset);
    assert_eq!(roots[b2.offset as usize], b.offset);
    assert_eq!(roots[d2.offset as usize], d2.offset);
    assert_eq!(roots[e2.offset as usize], e.offset);

    let mut scan = IndexBuildScan::new(f.pool, &f.tm, REL).unwrap();
    let mut entries = Vec::new();
    while scan
        .next_page(&f.tm, |root, t| {
            entries.push((root, value_of(t)));
            Ok(())
        })
        .unwrap()
    {}
    entries.sort();
    let mut expected = vec![(a, 11), (b, 20), (c, 3), (d, 4), (d2, 40), (e, 50)];
    expected.sort();
    assert_eq!(entries, expected);
    // b's old version is left out though `old` may still see it.
    assert!(scan.broken_hot_chain());
    f.commit(build);
    f.commit(old);
}

#[test]
fn vacuum_sets_the_visibility_map_and_every_change_clears_it() {
    let f = fixture();
    let mut rows = Vec::new();
    for a in 0..100 {
        rows.push(f.insert_committed(a, 300));
    }
    let pages = f.pool.smgr().nblocks(REL, ForkNumber::Main).unwrap();
    assert!(pages >= 4);
    // A transaction still running keeps its page from being all-visible.
    let running = f.tm.begin().unwrap();
    let last = f.insert(1000, 10, running);
    let stats = vacuum_heap(
        f.pool,
        &f.tm,
        REL,
        VACUUM_TRUNCATE,
        None,
        1 << 20,
        || Ok(()),
    )
    .unwrap();
    assert_eq!(stats.pages_set_all_visible, pages - 1);
    assert_eq!(stats.all_visible, pages - 1);
    assert_eq!(f.all_visible(last.block), (false, false));
    for block in 0..pages - 1 {
        assert_eq!(f.all_visible(block), (true, true), "block {block}");
    }
    f.commit(running);
    // The next VACUUM skips the all-visible pages and marks the last.
    let again = vacuum_heap(
        f.pool,
        &f.tm,
        REL,
        VACUUM_TRUNCATE,
        None,
        1 << 20,
        || Ok(()),
    )
    .unwrap();
    assert_eq!((again.pages_skipped, again.pages_scanned), (pages - 1, 1));
    assert_eq!(again.all_visible, pages);
    // DISABLE_PAGE_SKIPPING visits them all and changes nothing.
    let all = HeapVacuumOptions {
        truncate: false,
        scan_all: true,
    };
    let third = vacuum_heap(f.pool, &f.tm, REL, all, None, 1 << 20, || Ok(())).unwrap();
    assert_eq!((third.pages_skipped, third.pages_set_all_visible), (0, 0));
    assert_eq!(third.live, 101);
    // A delete, a row lock, a cold update (old and new page) and an insert
    // each clear their pages' flag and bit, even before they commit.
    let x = f.tm.begin().unwrap();
    f.delete(rows[0], x);
    assert_eq!(f.all_visible(rows[0].block), (false, false));
    let y = f.tm.begin().unwrap();
    let locked = *rows.iter().find(|t| t.block == 1).unwrap();
    assert_eq!(
        lock_tuple(
            f.pool,
            REL,
            locked,
            Requester::plain(y),
            RowLockMode::KeyShare,
            WaitPolicy::Block,
            &f.tm,
            &mut never,
        )
        .unwrap(),
        LockResult::Locked
    );
    assert_eq!(f.all_visible(1), (false, false));
    let moved = *rows.iter().find(|t| t.block == 2).unwrap();
    let ModifyResult::Done(new) = f.update(moved, 5000, 4000, y, false) else {
        panic!("not a cold update");
    };
    assert_ne!(new.block, 2);
    assert_eq!(f.all_visible(2), (false, false));
    assert_eq!(f.all_visible(new.block), (false, false));
    f.commit(x);
    f.commit(y);
    let untouched: Vec<u32> = (0..pages)
        .filter(|b| ![rows[0].block, 1, 2, new.block].contains(b))
        .collect();
    for &b in &untouched {
        assert_eq!(f.all_visible(b), (true, true), "block {b}");
    }
    // Redo rebuilds the same flags and bits.
    f.replay_matches();
    let fourth = vacuum_heap(
        f.pool,
        &f.tm,
        REL,
        VACUUM_TRUNCATE,
        None,
        1 << 20,
        || Ok(()),
    )
    .unwrap();
    assert_eq!(fourth.pages_skipped as usize, untouched.len());
    assert_eq!(
        fourth.all_visible,
        f.pool.smgr().nblocks(REL, ForkNumber::Main).unwrap()
    );
    f.replay_matches();
}

#[test]
fn truncation_clears_the_map_bits_of_the_cut_pages() {
    let f = fixture();
    let mut rows = Vec::new();
    for a in 0..60 {
        rows.push(f.insert_committed(a, 300));
    }
    vacuum_heap(
        f.pool,
        &f.tm,
        REL,
        VACUUM_TRUNCATE,
        None,
        1 << 20,
        || Ok(()),
    )
    .unwrap();
    let pages = f.pool.smgr().nblocks(REL, ForkNumber::Main).unwrap();
    let x = f.tm.begin().unwrap();
    for tid in rows.iter().filter(|t| t.block > 0) {
        f.delete(*tid, x);
    }
    f.commit(x);
    let stats = vacuum_heap(
        f.pool,
        &f.tm,
        REL,
        VACUUM_TRUNCATE,
        None,
        1 << 20,
        || Ok(()),
    )
    .unwrap();
    assert_eq!(stats.pages_after, 1);
    let mut map = MapReader::new(REL);
    for block in 1..pages {
        assert!(!map.all_visible(f.pool, block).unwrap(), "block {block}");
    }
    // Pages added again start out not all-visible.
    let t = f.insert_committed(7, 4000);
    let t2 = f.insert_committed(8, 4000);
    assert!(t.block > 0 || t2.block > 0);
    assert_eq!(f.all_visible(t2.block), (false, false));
    f.replay_matches();
}
