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
