//! On-page pruning (PostgreSQL's pruneheap.c, without HOT chains): versions
//! dead to every transaction are removed from a page and the page is
//! compacted, under its exclusive content lock, with one PRUNE record.
//!
//! A version is dead when its inserter aborted, or when a committed
//! transaction older than the horizon (`TransactionManager::global_xmin`)
//! deleted or updated it. An xmax marked lock-only (SELECT ... FOR UPDATE)
//! deletes nothing. There are no indexes, so a removed version's line
//! pointer becomes unused at once and may be reused by an unrelated tuple:
//! whoever follows a ctid checks that the next version's xmin is the prior
//! version's xmax (`super::fetch_version`). See README.md rules 12-14.

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

/// What one prune of one page found and did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct PruneResult {
    /// Versions removed.
    pub removed: usize,
    /// Versions kept that new snapshots see (a delete in progress included).
    pub live: usize,
    /// Versions whose inserter is still running (not counted as live).
    pub inserting: usize,
    /// Versions kept because some snapshot may still see them.
    pub recently_dead: usize,
    /// Free bytes after the prune.
    pub free: usize,
}

/// Removes the dead versions of the page `pg` (block `block` of `rel`),
/// compacts it and logs the change. The caller holds the exclusive content
/// lock; no code keeps a pointer into a page once it released that lock
/// (every reader copies what it needs), so no cleanup lock is needed.
pub fn prune_page(
    pg: &mut PageWrite<'_>,
    rel: RelFileLocator,
    block: u32,
    horizon: Xid,
    tm: &TransactionManager,
) -> PruneResult {
    let mut res = PruneResult::default();
    let mut unused: Vec<OffsetNumber> = Vec::new();
    for off in 1..=page::item_count(pg) {
        match page::item_id(pg, off).0 {
            ItemState::Unused => {}
            // No indexes point at line pointers: dead and redirect
            // pointers are not kept (none are made yet).
            ItemState::Dead | ItemState::Redirect => unused.push(off),
            ItemState::Normal => {
                let t = page::item(pg, off).expect("normal item");
                match version_state(t, horizon, tm) {
                    VersionState::Dead => unused.push(off),
                    VersionState::RecentlyDead => res.recently_dead += 1,
                    VersionState::InsertInProgress => res.inserting += 1,
                    VersionState::Live | VersionState::DeleteInProgress => res.live += 1,
                }
            }
        }
    }
    if !unused.is_empty() {
        apply_prune(pg, &unused);
        pg.mark_dirty();
        log::log_prune(tm.wal(), rel, block, pg, &unused);
    }
    res.removed = unused.len();
    res.free = page::free_space(pg);
    res
}

/// Marks `unused` unused and compacts the page: the forward path's change,
/// repeated by redo.
pub(crate) fn apply_prune(pg: &mut [u8], unused: &[OffsetNumber]) {
    for &off in unused {
        page::set_item_unused(pg, off);
    }
    page::repair_fragmentation(pg);
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
    use types::{DataType, TypeId, Value};

    use super::*;
    use crate::heap::{self, HeapScan, InsertTarget, ModifyResult, Tid};

    const REL: RelFileLocator = RelFileLocator {
        spc_oid: common::ids::DEFAULT_TABLESPACE_OID,
        db_oid: 5,
        rel_number: 16390,
    };
    const TYPES: [DataType; 2] = [DataType::new(TypeId::Int8), DataType::new(TypeId::Text)];

    fn form(a: i64, pad: usize, xid: Xid, cid: u32) -> Vec<u8> {
        let mut out = Vec::new();
        let row = [Value::Int8(a), Value::Text("x".repeat(pad))];
        tuple::form_tuple(&TYPES, &row, xid, cid, &mut out);
        out
    }

    fn visible(pool: &'static BufferPool, tm: &TransactionManager) -> Vec<i64> {
        let snap = tm.snapshot(0, 0);
        let mut scan = HeapScan::new(pool, REL).unwrap();
        let mut seen = Vec::new();
        while scan
            .next_page(&snap, tm, |_, t| {
                let mut row = Vec::new();
                tuple::deform_tuple(t, &TYPES, &mut row)?;
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
    fn prune_removes_dead_versions_reuses_slots_and_replays() {
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
            plain(x3),
            0,
            &tm,
            &mut target,
            &mut never,
        );
        let ModifyResult::Done(t3) = r.unwrap() else {
            panic!()
        };
        tm.commit(x3, txn::SyncCommit::On).unwrap();
        let x4 = tm.begin().unwrap();
        let r = heap::update(
            pool,
            REL,
            t3,
            &mut form(31, 300, x4, 0),
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
        let res = {
            let mut pg = buf.write();
            prune_page(&mut pg, REL, 0, x3, &tm)
        };
        // Only the aborted insert is dead below x3's horizon.
        assert_eq!((res.removed, res.recently_dead), (1, 3));
        let res = {
            let mut pg = buf.write();
            prune_page(&mut pg, REL, 0, tm.global_xmin(), &tm)
        };
        assert_eq!((res.removed, res.recently_dead, res.live), (3, 0, 9));
        assert_eq!(visible(pool, &tm), before);
        // The freed slots are reused by the next insert; a chain that led to
        // a reused slot is not followed into the unrelated tuple.
        let x5 = tm.begin().unwrap();
        let reused = heap::insert(pool, &tm, REL, &mut form(50, 10, x5, 0), &mut target).unwrap();
        assert_eq!(reused.block, 0);
        assert!(reused.offset <= 11, "slot {reused:?} not reused");
        assert!(heap::fetch_version(pool, REL, reused, x4)
            .unwrap()
            .is_none());
        assert!(heap::fetch_version(pool, REL, reused, x5)
            .unwrap()
            .is_some());
        tm.commit(x5, txn::SyncCommit::On).unwrap();
        let after = visible(pool, &tm);

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
        assert_eq!(page::item_count(&b2.read()), page::item_count(&b1));
        assert_eq!(page::free_space(&b2.read()), page::free_space(&b1));
        let _ = Tid {
            block: 0,
            offset: 1,
        };
    }

    #[test]
    fn repair_fragmentation_keeps_offsets_and_truncates_the_pointer_array() {
        let mut pg = vec![0u8; storage::BLCKSZ];
        for i in 0..5u8 {
            page::add_item(&mut pg, &[i; 100]).unwrap();
        }
        let full = page::free_space(&pg);
        apply_prune(&mut pg, &[2, 5]);
        assert_eq!(page::item_count(&pg), 4);
        assert_eq!(page::item(&pg, 3).unwrap(), &[2u8; 100][..]);
        assert!(page::item(&pg, 2).is_none());
        assert!(page::item(&pg, 5).is_none());
        assert_eq!(page::free_space(&pg), full + 2 * 104 + 4);
        // Slot 2 is reused, then a new pointer is added at the end.
        assert_eq!(page::add_item(&mut pg, &[7; 10]), Some(2));
        assert_eq!(page::add_item(&mut pg, &[8; 10]), Some(5));
        assert_eq!(page::item(&pg, 4).unwrap(), &[3u8; 100][..]);
    }
}
