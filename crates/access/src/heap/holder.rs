//! Who holds a key that a unique index insert found (PostgreSQL's
//! SnapshotDirty as `_bt_check_unique` uses it): the heap tuple an equal
//! index entry points at is judged by its inserter and deleter as they are
//! now, not as of a snapshot.

use common::ids::BOOTSTRAP_XID;
use common::{PgResult, RelFileLocator, Xid};
use storage::buffer::{BufferPool, ReadMode};
use storage::{page, ForkNumber};
use txn::{OwnXids, TransactionManager, XidStatus};

use super::Tid;
use crate::btree::KeyHolder;
use crate::tuple;

/// What the heap tuple at `tid` says about its key, for a unique insert by
/// the transaction whose live xids are `own`:
/// - the slot is empty, dead or gone (pruned, truncated), the inserter
///   aborted, or a committed transaction (or we) deleted it: `Dead`;
/// - another transaction that inserted it, or is deleting it, is still
///   running: `InProgress(that xid)` (wait for it, then look again);
/// - otherwise (inserted by a committed transaction or by us, not deleted
///   or its deleter aborted; a row lock deletes nothing): `Live`.
///
/// Takes the heap page's share lock, so it may be called under index page
/// locks (index page locks come first) but no heap page lock may be held.
pub fn key_holder(
    pool: &'static BufferPool,
    tm: &TransactionManager,
    rel: RelFileLocator,
    tid: Tid,
    own: &OwnXids,
) -> PgResult<KeyHolder> {
    if tid.offset == 0 || tid.block >= pool.smgr().nblocks(rel, ForkNumber::Main)? {
        return Ok(KeyHolder::Dead);
    }
    let buf = pool.read_buffer(rel, ForkNumber::Main, tid.block, ReadMode::Normal, None)?;
    let (xmin, xmax) = {
        let pg = buf.read();
        match page::item(&pg, tid.offset) {
            Some(t) => (tuple::xmin(t), tuple::deleting_xmax(t)),
            None => return Ok(KeyHolder::Dead),
        }
    };
    let is_own = |x: Xid| x != 0 && own.contains(x);
    if !is_own(xmin) && xmin != BOOTSTRAP_XID {
        match tm.status(xmin) {
            XidStatus::Aborted => return Ok(KeyHolder::Dead),
            XidStatus::InProgress => return Ok(KeyHolder::InProgress(xmin)),
            XidStatus::Committed => {}
        }
    }
    if xmax == 0 {
        return Ok(KeyHolder::Live);
    }
    if is_own(xmax) {
        return Ok(KeyHolder::Dead);
    }
    Ok(match tm.status(xmax) {
        XidStatus::Committed => KeyHolder::Dead,
        XidStatus::Aborted => KeyHolder::Live,
        XidStatus::InProgress => KeyHolder::InProgress(xmax),
    })
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use storage::smgr::Smgr;
    use txn::SyncCommit;
    use types::{DataType, TypeId, Value};

    use super::*;
    use crate::heap::{self, InsertTarget, Requester, RowLockMode, WaitPolicy};

    const REL: RelFileLocator = RelFileLocator {
        spc_oid: common::ids::DEFAULT_TABLESPACE_OID,
        db_oid: 5,
        rel_number: 16420,
    };

    fn never(x: Xid) -> PgResult<XidStatus> {
        panic!("waited for {x}")
    }

    #[test]
    fn holders_as_snapshot_dirty_sees_them() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("global")).unwrap();
        let tm = TransactionManager::open(dir.path(), txn::test_wal(dir.path())).unwrap();
        let pool = BufferPool::new(32, Arc::new(Smgr::new(dir.path())));
        heap::create_storage(pool, tm.wal(), REL).unwrap();
        let types = [DataType::new(TypeId::Int4)];
        let mut target = InsertTarget::new();
        let mut row = |xid: Xid, v: i32| {
            let mut t = Vec::new();
            tuple::form_tuple(&types, &[Value::Int4(v)], xid, 0, &mut t);
            heap::insert(pool, &tm, REL, &mut t, &mut target).unwrap()
        };
        let committed = tm.begin().unwrap();
        let [live, deleted, being_deleted, delete_aborted, locked] =
            [1, 2, 3, 4, 5].map(|v| row(committed, v));
        tm.commit(committed, SyncCommit::On).unwrap();
        let aborted = tm.begin().unwrap();
        let by_aborted = row(aborted, 6);
        tm.abort(aborted);
        let running = tm.begin().unwrap();
        let by_running = row(running, 7);

        let deleter = tm.begin().unwrap();
        let del = |tid, xid| {
            heap::delete(pool, REL, tid, Requester::plain(xid), 0, &tm, &mut never).unwrap()
        };
        del(deleted, deleter);
        tm.commit(deleter, SyncCommit::On).unwrap();
        let slow = tm.begin().unwrap();
        del(being_deleted, slow);
        let undone = tm.begin().unwrap();
        del(delete_aborted, undone);
        tm.abort(undone);
        let locker = tm.begin().unwrap();
        heap::lock_tuple(
            pool,
            REL,
            locked,
            Requester::plain(locker),
            RowLockMode::Exclusive,
            WaitPolicy::Block,
            &tm,
            &mut never,
        )
        .unwrap();

        let me = tm.begin().unwrap();
        let mine = row(me, 8);
        let mine_deleted = row(me, 9);
        del(mine_deleted, me);
        let own = OwnXids::top(me);
        let h = |tid| key_holder(pool, &tm, REL, tid, &own).unwrap();
        assert_eq!(h(live), KeyHolder::Live);
        assert_eq!(h(deleted), KeyHolder::Dead);
        assert_eq!(h(being_deleted), KeyHolder::InProgress(slow));
        assert_eq!(h(delete_aborted), KeyHolder::Live);
        assert_eq!(h(locked), KeyHolder::Live, "a row lock deletes nothing");
        assert_eq!(h(by_aborted), KeyHolder::Dead);
        assert_eq!(h(by_running), KeyHolder::InProgress(running));
        assert_eq!(h(mine), KeyHolder::Live);
        assert_eq!(h(mine_deleted), KeyHolder::Dead);
        let gone = Tid {
            block: 99,
            offset: 1,
        };
        assert_eq!(h(gone), KeyHolder::Dead);
        let empty_slot = Tid {
            block: 0,
            offset: 200,
        };
        assert_eq!(h(empty_slot), KeyHolder::Dead);
        // Our own delete of someone else's row: dead to us.
        del(live, me);
        assert_eq!(h(live), KeyHolder::Dead);
    }
}
