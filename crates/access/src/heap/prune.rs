//! On-page pruning (PostgreSQL's pruneheap.c): versions dead to every
//! transaction are removed from a page, HOT chains are shortened, and the
//! page is compacted, under its exclusive content lock, with one PRUNE
//! record (README.md rules 12-15).
//!
//! A version is dead when its inserter aborted, or when a committed
//! transaction older than the horizon (`TransactionManager::global_xmin`)
//! deleted or updated it. An xmax marked lock-only (SELECT ... FOR UPDATE)
//! deletes nothing.
//!
//! Index entries point at line pointers, so a removed version's pointer is
//! kept as long as an index may point at it. A chain's root (a version that
//! is not heap-only, or a redirect) becomes a redirect to the chain's first
//! surviving member, or LP_DEAD when the whole chain is dead; dead heap-only
//! members become unused at once, since no index points at them. LP_DEAD
//! pointers become unused only in VACUUM's second pass, after its index
//! pass removed the entries pointing at them (`vacuum.rs`), or at once when
//! the table has no indexes (`DeadPointers::Unused`).

use common::{RelFileLocator, Xid};
use storage::buffer::PageWrite;
use storage::page::{self, ItemState, OffsetNumber};
use txn::{TransactionManager, XidStatus};

use super::log;
use crate::tuple;

/// What a version is to VACUUM (PostgreSQL's HTSV_Result).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VersionState {
    /// Visible to every new snapshot.
    Live,
    /// Invisible to everyone, now and later: removable.
    Dead,
    /// Deleted by a committed transaction that some snapshot may not see
    /// yet: kept.
    RecentlyDead,
    InsertInProgress,
    DeleteInProgress,
}

/// Whether `t`'s xmax stands for a deletion or update (not a row lock).
pub fn xmax_deletes(t: &[u8]) -> bool {
    tuple::xmax(t) != 0 && tuple::infomask(t) & tuple::XMAX_LOCK_ONLY == 0
}

/// The state of version `t` against `horizon`: versions deleted by a
/// transaction that committed below it are dead.
pub fn version_state(t: &[u8], horizon: Xid, tm: &TransactionManager) -> VersionState {
    let xmin = tuple::xmin(t);
    if xmin != common::ids::BOOTSTRAP_XID {
        match tm.status(xmin) {
            XidStatus::InProgress => return VersionState::InsertInProgress,
            XidStatus::Aborted => return VersionState::Dead,
            XidStatus::Committed => {}
        }
    }
    if !xmax_deletes(t) {
        return VersionState::Live;
    }
    let xmax = tuple::xmax(t);
    match tm.status(xmax) {
        XidStatus::InProgress => VersionState::DeleteInProgress,
        XidStatus::Aborted => VersionState::Live,
        XidStatus::Committed if xmax < horizon => VersionState::Dead,
        XidStatus::Committed => VersionState::RecentlyDead,
    }
}

/// What becomes of a pointer whose versions are all gone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeadPointers {
    /// LP_DEAD, for VACUUM's index pass to clean up after (the table has
    /// indexes, or the caller does not know).
    Keep,
    /// Unused at once, LP_DEAD pointers already there too: the table has
    /// no indexes (VACUUM says so).
    Unused,
}

/// What one prune of one page found and did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct PruneResult {
    /// Versions removed (their storage freed).
    pub removed: usize,
    /// LP_DEAD pointers made unused (`DeadPointers::Unused` only), those
    /// this prune would have left dead included.
    pub dead_made_unused: usize,
    /// Versions kept that new snapshots see (a delete in progress included).
    pub live: usize,
    /// Versions whose inserter is still running (not counted as live).
    pub inserting: usize,
    /// Versions kept because some snapshot may still see them.
    pub recently_dead: usize,
    /// Free bytes after the prune.
    pub free: usize,
}

/// The pointer changes one prune makes, as the PRUNE record carries them.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct PrunePlan {
    /// (root, first surviving member of its chain).
    pub redirected: Vec<(OffsetNumber, OffsetNumber)>,
    pub dead: Vec<OffsetNumber>,
    pub unused: Vec<OffsetNumber>,
}

impl PrunePlan {
    pub fn is_empty(&self) -> bool {
        self.redirected.is_empty() && self.dead.is_empty() && self.unused.is_empty()
    }
}

/// Most line pointers a page can have.
const MAX_ITEMS: usize = (storage::BLCKSZ - page::PAGE_HEADER_SIZE) / page::LINE_POINTER_SIZE;

/// Per-offset bookkeeping of one prune: each normal version's state, and
/// whether a chain walk (or the orphan sweep) already took the offset.
struct Scratch {
    state: [Option<VersionState>; MAX_ITEMS + 1],
    visited: [bool; MAX_ITEMS + 1],
}

/// Removes the dead versions of the page `pg` (block `block` of `rel`),
/// shortens its HOT chains, compacts it and logs the change. The caller
/// holds the exclusive content lock; no code keeps a pointer into a page
/// once it released that lock (every reader copies what it needs), so no
/// cleanup lock is needed.
pub fn prune_page(
    pg: &mut PageWrite<'_>,
    rel: RelFileLocator,
    block: u32,
    horizon: Xid,
    tm: &TransactionManager,
    mode: DeadPointers,
) -> PruneResult {
    let mut res = PruneResult::default();
    let plan = plan_prune(pg, block, horizon, tm, mode, &mut res);
    if !plan.is_empty() {
        apply_prune(pg, &plan);
        pg.mark_dirty();
        log::log_prune(tm.wal(), rel, block, pg, &plan);
    }
    res.free = page::free_space(pg);
    res
}

/// Decides what a prune changes (PostgreSQL's heap_prune_chain from every
/// root, then the heap-only versions no chain reached) and fills `res`'s
/// counts.
fn plan_prune(
    pg: &[u8],
    block: u32,
    horizon: Xid,
    tm: &TransactionManager,
    mode: DeadPointers,
    res: &mut PruneResult,
) -> PrunePlan {
    let n = page::item_count(pg);
    let mut plan = PrunePlan::default();
    let mut scratch = Scratch {
        state: [None; MAX_ITEMS + 1],
        visited: [false; MAX_ITEMS + 1],
    };
    for off in 1..=n {
        if let Some(t) = page::item(pg, off) {
            scratch.state[off as usize] = Some(version_state(t, horizon, tm));
        }
    }
    let mut chain: Vec<OffsetNumber> = Vec::new();
    for root in 1..=n {
        match page::item_id(pg, root).0 {
            ItemState::Unused => {}
            ItemState::Dead => {
                if mode == DeadPointers::Unused {
                    plan.unused.push(root);
                    res.dead_made_unused += 1;
                }
            }
            ItemState::Normal if tuple::is_heap_only(page::item(pg, root).expect("normal")) => {
                // A chain member: taken from its root, or below.
            }
            ItemState::Normal | ItemState::Redirect => {
                if prune_chain(pg, block, root, &mut scratch, &mut chain, &mut plan) {
                    match mode {
                        DeadPointers::Keep => plan.dead.push(root),
                        DeadPointers::Unused => {
                            plan.unused.push(root);
                            res.dead_made_unused += 1;
                        }
                    }
                }
            }
        }
    }
    // Heap-only versions no chain reached: a dead one is an aborted
    // update's new version (its parent's xmax aborted, so no walk leads to
    // it), removable at once since no index points at it.
    for off in 1..=n {
        if !scratch.visited[off as usize]
            && scratch.state[off as usize] == Some(VersionState::Dead)
            && page::item(pg, off).is_some_and(tuple::is_heap_only)
        {
            plan.unused.push(off);
        }
    }
    // Count what stays, by state; a removed version's state is forgotten.
    let removed = plan
        .redirected
        .iter()
        .map(|r| r.0)
        .chain(plan.dead.iter().copied())
        .chain(plan.unused.iter().copied());
    for off in removed {
        if scratch.state[off as usize].take().is_some() {
            res.removed += 1;
        }
    }
    for state in scratch.state[1..=n as usize].iter().flatten() {
        // A dead version is always removed: it is a root, in a chain up to
        // its last dead member, or an orphan.
        debug_assert_ne!(*state, VersionState::Dead, "dead version kept");
        match state {
            VersionState::Dead => {}
            VersionState::RecentlyDead => res.recently_dead += 1,
            VersionState::InsertInProgress => res.inserting += 1,
            VersionState::Live | VersionState::DeleteInProgress => res.live += 1,
        }
    }
    plan
}

/// Walks the HOT chain from `root` (a version that is not heap-only, or a
/// redirect) and records what becomes of its pointers: the members up to
/// the last dead one are removed, heap-only ones unused, and the root
/// redirects to the first survivor. Returns true when there is none: the
/// root's pointer is then dead (the caller records it). A member is
/// followed only while the versions before it are dead or recently dead
/// (a version dead to everyone has only such predecessors: its inserter
/// committed before anything that still sees them began), and only if its
/// xmin is the prior version's xmax (an aborted updater's slot may hold
/// another tuple).
fn prune_chain(
    pg: &[u8],
    block: u32,
    root: OffsetNumber,
    scratch: &mut Scratch,
    chain: &mut Vec<OffsetNumber>,
    plan: &mut PrunePlan,
) -> bool {
    let n = page::item_count(pg);
    chain.clear();
    let mut off = root;
    let redirect = page::redirect_target(pg, root);
    if let Some(target) = redirect {
        chain.push(root);
        off = target;
    }
    let mut prior_xmax: Option<Xid> = None;
    let mut latest_dead: Option<usize> = None;
    loop {
        if off == 0 || off > n || scratch.visited[off as usize] {
            break;
        }
        let Some(t) = page::item(pg, off) else {
            break;
        };
        if !chain.is_empty() && !tuple::is_heap_only(t) {
            break;
        }
        if prior_xmax.is_some_and(|x| tuple::xmin(t) != x) {
            break;
        }
        chain.push(off);
        scratch.visited[off as usize] = true;
        match scratch.state[off as usize] {
            Some(VersionState::Dead) => latest_dead = Some(chain.len() - 1),
            Some(VersionState::RecentlyDead) => {}
            _ => break,
        }
        if !tuple::is_hot_updated(t) {
            break;
        }
        let (next_block, next_off) = tuple::ctid(t);
        if next_block != block {
            break;
        }
        prior_xmax = Some(tuple::xmax(t));
        off = next_off;
    }
    scratch.visited[root as usize] = true;
    match latest_dead {
        Some(last) => {
            plan.unused.extend_from_slice(&chain[1..=last]);
            match chain.get(last + 1) {
                Some(&survivor) => {
                    plan.redirected.push((root, survivor));
                    false
                }
                None => true,
            }
        }
        // A redirect whose chain has no member left leads nowhere.
        None => redirect.is_some() && chain.len() < 2,
    }
}

/// Applies a prune's pointer changes and compacts the page: the forward
/// path's change, repeated by redo.
pub(crate) fn apply_prune(pg: &mut [u8], plan: &PrunePlan) {
    for &(root, target) in &plan.redirected {
        page::set_item_redirect(pg, root, target);
    }
    for &off in &plan.dead {
        page::set_item_dead(pg, off);
    }
    for &off in &plan.unused {
        page::set_item_unused(pg, off);
    }
    page::repair_fragmentation(pg);
}

/// VACUUM's second pass on one page: the LP_DEAD pointers at `offsets`
/// (whose index entries are gone) become unused and the page is compacted.
/// Pointers no longer dead are left alone. Returns how many changed; the
/// forward path's change, repeated by redo.
pub(crate) fn apply_vacuum(pg: &mut [u8], offsets: &[OffsetNumber]) -> usize {
    let mut changed = 0;
    for &off in offsets {
        if page::item_id(pg, off).0 == ItemState::Dead {
            page::set_item_unused(pg, off);
            changed += 1;
        }
    }
    page::repair_fragmentation(pg);
    changed
}

/// Free space below which a page is pruned when a scan or a writer finds
/// dead versions on it (PostgreSQL's heap_page_prune_opt: a tenth of the
/// page, with the default fillfactor).
pub const PRUNE_FREE_THRESHOLD: usize = storage::BLCKSZ / 10;

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use storage::buffer::{BufferPool, ReadMode};
    use storage::smgr::Smgr;
    use storage::ForkNumber;
    use types::Value;

    use super::*;
    use crate::heap::test_rows::{form, TYPES};
    use crate::heap::{self, HeapScan, InsertTarget, ModifyResult, Tid};

    const REL: RelFileLocator = RelFileLocator {
        spc_oid: common::ids::DEFAULT_TABLESPACE_OID,
        db_oid: 5,
        rel_number: 16390,
    };

    fn visible(pool: &'static BufferPool, tm: &TransactionManager) -> Vec<i64> {
        let snap = tm.snapshot(0, 0);
        let mut scan = HeapScan::new(pool, REL).unwrap();
        let mut seen = Vec::new();
        while scan
            .next_page(&snap, tm, |_, t| {
                let mut row = Vec::new();
                tuple::deform_tuple(t, &TYPES, None, &mut row)?;
                if let Value::Int8(a) = row[0] {
                    seen.push(a);
                }
                Ok(())
            })
            .unwrap()
        {}
        seen.sort();
        seen
    }

    #[test]
    fn prune_leaves_dead_pointers_that_vacuum_frees_and_replays() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("global")).unwrap();
        let tm = TransactionManager::open(dir.path(), txn::test_wal(dir.path())).unwrap();
        let pool = BufferPool::new(32, Arc::new(Smgr::new(dir.path())));
        heap::create_storage(pool, tm.wal(), REL).unwrap();
        let mut never = |x: Xid| -> common::PgResult<txn::XidStatus> { panic!("waited for {x}") };
        let plain = crate::heap::Requester::plain;

        // Ten rows; an aborted insert; then row 3 updated twice and row 5
        // deleted, all committed.
        let x1 = tm.begin().unwrap();
        let mut target = InsertTarget::new();
        let mut tids = Vec::new();
        for a in 0..10 {
            tids.push(heap::insert(pool, &tm, REL, &mut form(a, 300, x1, 0), &mut target).unwrap());
        }
        tm.commit(x1, txn::SyncCommit::On).unwrap();
        let x2 = tm.begin().unwrap();
        heap::insert(pool, &tm, REL, &mut form(99, 300, x2, 0), &mut target).unwrap();
        tm.abort(x2);
        let x3 = tm.begin().unwrap();
        let r = heap::update(
            pool,
            REL,
            tids[3],
            &mut form(30, 300, x3, 0),
            false,
            false,
            plain(x3),
            0,
            &tm,
            &mut target,
            &mut never,
        );
        let ModifyResult::Done(t3) = r.unwrap() else {
            panic!()
        };
        assert_eq!(t3.offset, 12);
        tm.commit(x3, txn::SyncCommit::On).unwrap();
        let x4 = tm.begin().unwrap();
        let r = heap::update(
            pool,
            REL,
            t3,
            &mut form(31, 300, x4, 0),
            false,
            false,
            plain(x4),
            0,
            &tm,
            &mut target,
            &mut never,
        );
        assert!(matches!(r.unwrap(), ModifyResult::Done(_)));
        assert_eq!(
            heap::delete(pool, REL, tids[5], plain(x4), 0, &tm, &mut never).unwrap(),
            ModifyResult::Done(tids[5])
        );
        tm.commit(x4, txn::SyncCommit::On).unwrap();
        let before = visible(pool, &tm);
        assert_eq!(before, vec![0, 1, 2, 4, 6, 7, 8, 9, 31]);

        // A running transaction whose horizon is older keeps the versions
        // its snapshots may see.
        let buf = pool
            .read_buffer(REL, ForkNumber::Main, 0, ReadMode::Normal, None)
            .unwrap();
        let keep = DeadPointers::Keep;
        let res = {
            let mut pg = buf.write();
            prune_page(&mut pg, REL, 0, x3, &tm, keep)
        };
        // Only the aborted insert is dead below x3's horizon.
        assert_eq!((res.removed, res.recently_dead), (1, 3));
        let res = {
            let mut pg = buf.write();
            prune_page(&mut pg, REL, 0, tm.global_xmin(), &tm, keep)
        };
        assert_eq!((res.removed, res.recently_dead, res.live), (3, 0, 9));
        assert_eq!(visible(pool, &tm), before);
        // The removed versions' pointers stay dead (an index may point at
        // them): a new tuple takes a new pointer.
        {
            let pg = buf.read();
            for off in [tids[3].offset, tids[5].offset, t3.offset, 11] {
                assert_eq!(page::item_id(&pg, off).0, ItemState::Dead, "{off}");
            }
        }
        let x5 = tm.begin().unwrap();
        let fresh = heap::insert(pool, &tm, REL, &mut form(50, 10, x5, 0), &mut target).unwrap();
        assert_eq!(
            fresh,
            Tid {
                block: 0,
                offset: 14
            }
        );
        tm.commit(x5, txn::SyncCommit::On).unwrap();
        // VACUUM of a table without indexes makes them unused; the next
        // insert reuses one, and a chain that led to it is not followed
        // into the unrelated tuple.
        let stats = super::super::vacuum::vacuum_heap(
            pool,
            &tm,
            REL,
            super::super::vacuum::HeapVacuumOptions {
                truncate: false,
                scan_all: false,
            },
            None,
            1000,
            || Ok(()),
        )
        .unwrap();
        assert_eq!((stats.dead_items, stats.index_scans), (4, 0));
        let x6 = tm.begin().unwrap();
        let reused = heap::insert(pool, &tm, REL, &mut form(60, 10, x6, 0), &mut target).unwrap();
        assert_eq!(reused, tids[3]);
        assert!(heap::fetch_version(pool, REL, reused, x1)
            .unwrap()
            .is_none());
        assert!(heap::fetch_version(pool, REL, reused, x6)
            .unwrap()
            .is_some());
        tm.commit(x6, txn::SyncCommit::On).unwrap();
        let after = visible(pool, &tm);
        assert_eq!(after, vec![0, 1, 2, 4, 6, 7, 8, 9, 31, 50, 60]);

        // Crash: replaying the log (prune records included) rebuilds the
        // same rows.
        let wal2 = wal::Wal::open(
            dir.path(),
            wal::WalSettings::new(
                1 << 20,
                wal::settings::WalReloadable {
                    fsync: false,
                    ..Default::default()
                },
            ),
        )
        .unwrap();
        let tm2 = TransactionManager::open(dir.path(), wal2).unwrap();
        let pool2 = BufferPool::new(64, Arc::new(Smgr::new(dir.path())));
        let heap_redo = heap::log::HeapRedo { pool: pool2 };
        let mut handlers: Vec<Option<&dyn wal::Redo>> = vec![None; wal::rmgr::COUNT];
        handlers[wal::rmgr::HEAP as usize] = Some(&heap_redo);
        handlers[wal::rmgr::SMGR as usize] = Some(&heap_redo);
        handlers[wal::rmgr::XACT as usize] = Some(&tm2);
        wal2.startup(dir.path(), &handlers).unwrap();
        assert_eq!(visible(pool2, &tm2), after);
        let b2 = pool2
            .read_buffer(REL, ForkNumber::Main, 0, ReadMode::Normal, None)
            .unwrap();
        let b1 = buf.read();
        assert_eq!(b2.read()[12..], b1[12..]);
    }

    #[test]
    fn repair_fragmentation_keeps_offsets_and_truncates_the_pointer_array() {
        let mut pg = vec![0u8; storage::BLCKSZ];
        for i in 0..5u8 {
            page::add_item(&mut pg, &[i; 100]).unwrap();
        }
        let full = page::free_space(&pg);
        let plan = PrunePlan {
            unused: vec![2, 5],
            ..Default::default()
        };
        apply_prune(&mut pg, &plan);
        assert_eq!(page::item_count(&pg), 4);
        assert_eq!(page::item(&pg, 3).unwrap(), &[2u8; 100][..]);
        assert!(page::item(&pg, 2).is_none());
        assert!(page::item(&pg, 5).is_none());
        assert_eq!(page::free_space(&pg), full + 2 * 104 + 4);
        // Slot 2 is reused, then a new pointer is added at the end.
        assert_eq!(page::add_item(&mut pg, &[7; 10]), Some(2));
        assert_eq!(page::add_item(&mut pg, &[8; 10]), Some(5));
        assert_eq!(page::item(&pg, 4).unwrap(), &[3u8; 100][..]);
        // A redirect and a dead pointer keep their slots but no storage;
        // only VACUUM's pass makes the dead one unused.
        let plan = PrunePlan {
            redirected: vec![(1, 3)],
            dead: vec![4],
            ..Default::default()
        };
        apply_prune(&mut pg, &plan);
        assert_eq!(page::redirect_target(&pg, 1), Some(3));
        assert_eq!(page::item_id(&pg, 4).0, ItemState::Dead);
        assert_eq!(page::add_item(&mut pg, &[9; 10]), Some(6));
        assert_eq!(apply_vacuum(&mut pg, &[4, 3]), 1);
        assert_eq!(page::item_id(&pg, 4).0, ItemState::Unused);
        assert_eq!(page::item(&pg, 3).unwrap(), &[2u8; 100][..]);
        assert_eq!(page::add_item(&mut pg, &[9; 10]), Some(4));
    }
}
