//! Page deletion and reuse (README rule 27a), as nbtree's
//! `_bt_pagedel` and `_bt_getbuf`'s recycling in a simpler safe subset.
//!
//! Deletion: VACUUM unlinks an empty leaf that is neither the rightmost
//! page of its level nor the rightmost child of its parent. It locks the
//! left sibling, the leaf and its right sibling exclusively (left to
//! right), then finds and locks the parent (child before parent), and
//! changes the four pages in one UNLINK record: the left sibling's right
//! link skips the leaf, the right sibling's left link skips it, the
//! parent's downlink to the leaf now points at the right sibling and the
//! right sibling's own downlink goes (its key space grows left to the
//! leaf's separator), and the leaf becomes DELETED, keeping both links so
//! a reader that still reaches it moves on. Internal pages are never
//! deleted: each keeps at least its rightmost child.
//!
//! Reuse: the deleted page records the next xid at deletion (`safexid`).
//! A reader or writer on its way to the page read a link to it before the
//! deletion, inside a statement whose snapshot (or transaction) was then
//! already advertised, at or below `safexid`; so once `global_xmin` is
//! above `safexid`, no one can still arrive there. VACUUM puts deleted
//! pages in the index's free space map at once and again on each later
//! pass (the map is not logged); a split that wants a page takes one from
//! the map, locks it without waiting, and uses it only if it is DELETED
//! and past its `safexid`, else it extends the file.
//!
//! While VACUUM's index pass runs, splits do not reuse pages: the pass
//! visits blocks in physical order and a split that moved entries from a
//! block not yet visited to a recycled block already visited would hide
//! them (nbtree's split cycle ids solve the same problem). A split reads
//! the count of running passes with the recycled page locked; a pass
//! counts itself before it locks any page, so if it visited that block
//! already, the lock hand-over makes the count visible.

use std::sync::atomic::{AtomicU32, Ordering};

use common::{BlockNumber, PgResult, RelFileLocator};
use storage::buffer::{BufferPool, OwnedPageRead, OwnedPageWrite, ReadMode};
use storage::page::OffsetNumber;
use storage::{fsm, ForkNumber, BLCKSZ};
use txn::TransactionManager;
use types::Value;

use super::log::{apply_and_log, Change, Step, BTREE_UNLINK};
use super::page::{self as bp, META_BLOCK, NONE};
use super::search::{leftmost_at_level, lock, path_to_parent_level};
use super::tuple::{self, SearchKey};
use super::IndexDesc;

// Index passes running, per (pool, relation) hashed into a fixed table. A
// collision only makes a split extend the file instead of reusing a page.
const PASS_SLOTS: usize = 256;
static PASSES: [AtomicU32; PASS_SLOTS] = [const { AtomicU32::new(0) }; PASS_SLOTS];

fn pass_slot(pool: &BufferPool, rel: RelFileLocator) -> usize {
    let h = (pool as *const BufferPool as u64)
        ^ (rel.rel_number as u64).rotate_left(11)
        ^ (rel.db_oid as u64).rotate_left(31)
        ^ (rel.spc_oid as u64).rotate_left(49);
    (h.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 48) as usize % PASS_SLOTS
}

/// Marks an index pass running on the index until dropped.
pub(crate) struct PassGuard(usize);

impl PassGuard {
    pub(crate) fn enter(pool: &BufferPool, rel: RelFileLocator) -> PassGuard {
        let slot = pass_slot(pool, rel);
        // Relaxed: a split reads the count under a page lock this pass
        // takes later (module comment), which orders the two.
        PASSES[slot].fetch_add(1, Ordering::Relaxed);
        PassGuard(slot)
    }
}

impl Drop for PassGuard {
    fn drop(&mut self) {
        // Relaxed: a split that still sees the pass only extends the file.
        PASSES[self.0].fetch_sub(1, Ordering::Relaxed);
    }
}

fn pass_running(pool: &BufferPool, rel: RelFileLocator) -> bool {
    PASSES[pass_slot(pool, rel)].load(Ordering::Relaxed) != 0
}

/// Whether the locked DELETED page can no longer be reached by anyone.
pub(crate) fn recyclable(pg: &[u8], global_xmin: u64) -> bool {
    bp::is_btree_page(pg) && bp::is_deleted(pg) && bp::safexid(pg) < global_xmin
}

/// A deleted page no one can reach any more, exclusively locked, taken
/// off the free space map; None if there is none at hand (the caller
/// extends the file).
pub(crate) fn take_recycled(
    pool: &'static BufferPool,
    tm: &TransactionManager,
    rel: RelFileLocator,
) -> PgResult<Option<OwnedPageWrite>> {
    if pass_running(pool, rel) {
        return Ok(None);
    }
    for _ in 0..8 {
        let Some(blk) = fsm::search(pool, rel, 1)? else {
            return Ok(None);
        };
        if blk == META_BLOCK || blk >= pool.smgr().nblocks(rel, ForkNumber::Main)? {
            fsm::record_free_space(pool, rel, blk, 0)?;
            continue;
        }
        let buf = pool.read_buffer(rel, ForkNumber::Main, blk, ReadMode::Normal, None)?;
        // Never wait: whoever holds it may wait for a page we hold.
        let Ok(pg) = buf.try_into_write() else {
            return Ok(None);
        };
        if !bp::is_btree_page(&pg) || !bp::is_deleted(&pg) {
            // Reused already, or the map outlived a crash that lost the
            // deletion: forget it and look again.
            drop(pg);
            fsm::record_free_space(pool, rel, blk, 0)?;
            continue;
        }
        if pass_running(pool, rel) {
            return Ok(None);
        }
        if !recyclable(&pg, tm.global_xmin()) {
            // Not yet (an older snapshot runs): out of the map until the
            // next index pass offers it again, as nbtree does; try another.
            drop(pg);
            fsm::record_free_space(pool, rel, blk, 0)?;
            continue;
        }
        fsm::record_free_space(pool, rel, blk, 0)?;
        return Ok(Some(pg));
    }
    Ok(None)
}

/// Ends a pass that deleted pages by using up one xid (begun and rolled
/// back at once): a snapshot taken after the pass then has its xmin above
/// every `safexid` the pass wrote, so the pages are reusable as soon as
/// the statements that were running during the pass are gone, the
/// statement right after VACUUM included. Without it that statement's
/// xmin could equal the `safexid` and hold the pages off.
pub(crate) fn pass_horizon(tm: &TransactionManager) -> PgResult<()> {
    let xid = tm
        .begin()
        .map_err(|e| common::PgError::internal(format!("could not assign an xid: {e}")))?;
    tm.abort(xid);
    Ok(())
}

/// Offers a deleted page to splits (it is checked again when taken).
pub(crate) fn offer(
    pool: &'static BufferPool,
    rel: RelFileLocator,
    blk: BlockNumber,
) -> PgResult<()> {
    Ok(fsm::record_free_space(pool, rel, blk, BLCKSZ)?)
}

/// Whether the page may be unlinked: an empty live leaf, not the root and
/// not the rightmost page of its level.
fn deletable(pg: &[u8]) -> bool {
    bp::is_btree_page(pg) && bp::is_empty_leaf(pg) && !bp::is_root(pg) && !bp::is_rightmost(pg)
}

/// Unlinks the empty leaf `blk` if the rules allow it (module comment),
/// holding no page lock on entry. True if it was deleted.
pub(crate) fn unlink_leaf(
    pool: &'static BufferPool,
    tm: &TransactionManager,
    rel: RelFileLocator,
    desc: &IndexDesc,
    blk: BlockNumber,
) -> PgResult<bool> {
    let prev = {
        let pg: OwnedPageRead = lock(pool, rel, blk)?;
        if !deletable(&pg) {
            return Ok(false);
        }
        bp::prev(&pg)
    };
    // The left sibling first; it may have split since: move right to the
    // page whose right link is the leaf.
    let left = match prev {
        NONE => None,
        mut at => {
            let mut hops = 0;
            loop {
                let l: OwnedPageWrite = lock(pool, rel, at)?;
                if bp::next(&l) == blk {
                    break Some(l);
                }
                hops += 1;
                if at == blk || bp::is_rightmost(&l) || bp::is_deleted(&l) || hops > 10_000 {
                    return Ok(false);
                }
                at = bp::next(&l);
            }
        }
    };
    let target: OwnedPageWrite = lock(pool, rel, blk)?;
    let left_blk = left.as_ref().map_or(NONE, |l| l.block());
    if !deletable(&target) || bp::prev(&target) != left_blk {
        return Ok(false);
    }
    let right_blk = bp::next(&target);
    let right: OwnedPageWrite = lock(pool, rel, right_blk)?;
    if bp::is_deleted(&right) || bp::prev(&right) != blk {
        return Ok(false);
    }
    // The parent: the page whose downlink to the right sibling carries the
    // leaf's high key; the leaf's downlink must be just before it there.
    let high_key = bp::high_key(&target).expect("not rightmost").to_vec();
    let mut values: Vec<Value> = Vec::with_capacity(desc.columns.len());
    tuple::decode(desc, &high_key, &mut values)?;
    let key = SearchKey::entry(&values, tuple::tid(&high_key));
    let stack = path_to_parent_level(pool, rel, desc, &key)?;
    let Some(&(hint, _)) = stack.last() else {
        return Ok(false);
    };
    // The descent leads to the parent or a page left of it; should it not
    // (a key that decodes to something sorting elsewhere), the level is
    // searched from its start rather than failing VACUUM.
    let found = match lock_parent(pool, rel, hint, right_blk)? {
        Some(found) => Some(found),
        None => lock_parent(pool, rel, leftmost_at_level(pool, rel, 1)?, right_blk)?,
    };
    let Some((parent, right_off)) = found else {
        return Ok(false);
    };
    if right_off <= bp::first_data(&parent) || bp::child(bp::item(&parent, right_off - 1)) != blk {
        // The rightmost child of its parent: its key space cannot move
        // into a page under another parent.
        return Ok(false);
    }
    // SERIALIZABLE readers of the leaf's key range keep covering it in the
    // right sibling that takes it over (the pages are locked).
    tm.predicate()
        .page_combine(rel.db_oid, rel.rel_number, blk, right_blk);
    let safexid = tm.next_xid();
    let mut steps = Vec::with_capacity(4);
    if let Some(page) = left {
        steps.push(Step {
            page,
            change: Change::Next(right_blk),
        });
    }
    steps.push(Step {
        page: target,
        change: Change::Whole(bp::deleted_image(left_blk, right_blk, safexid)),
    });
    steps.push(Step {
        page: right,
        change: Change::Prev(left_blk),
    });
    steps.push(Step {
        page: parent,
        change: Change::Merge(right_off - 1, right_off),
    });
    apply_and_log(tm.wal(), rel, BTREE_UNLINK, &mut steps);
    Ok(true)
}

/// The level-1 page holding the downlink to `child`, exclusively locked,
/// and the downlink's offset: from `start` rightwards (a parent only ever
/// moves right, when it splits); None if the level ends first.
fn lock_parent(
    pool: &'static BufferPool,
    rel: RelFileLocator,
    start: BlockNumber,
    child: BlockNumber,
) -> PgResult<Option<(OwnedPageWrite, OffsetNumber)>> {
    let mut blk = start;
    loop {
        let pg: OwnedPageWrite = lock(pool, rel, blk)?;
        if bp::level(&pg) != 1 || bp::is_deleted(&pg) {
            return Ok(None);
        }
        let (first, max) = (bp::first_data(&pg), bp::max_offset(&pg));
        if let Some(off) = (first..=max).find(|&o| bp::child(bp::item(&pg, o)) == child) {
            return Ok(Some((pg, off)));
        }
        if bp::is_rightmost(&pg) {
            return Ok(None);
        }
        blk = bp::next(&pg);
    }
}
