//! Fetching a row from an index entry's tid (PostgreSQL's
//! heap_hot_search_buffer): the entry points at a HOT chain's root, a
//! version that is not heap-only or the redirect pruning left in its place;
//! the chain's members follow on the same page through ctid, each a
//! heap-only version whose xmin is the prior member's xmax. Walked under the
//! page's share lock, so pruning (exclusive) never runs beside a walk.
//!
//! A walk stops where the chain does: at a pointer that is not normal, at a
//! member that is not heap-only (or one that is, where a root should be: the
//! root's slot was reused), at an xmin that is not the prior xmax (an
//! aborted updater's new version was pruned and its slot reused), or at a
//! version that was not HOT-updated.

use common::{PgResult, RelFileLocator, Xid};
use storage::buffer::{BufferPool, ReadMode};
use storage::page::{self, OffsetNumber};
use storage::ForkNumber;
use txn::{OwnXids, Snapshot, TransactionManager, XidStatus};

use super::Tid;
use crate::btree::KeyHolder;
use crate::tuple;

/// Calls `visit` on each member of the HOT chain whose root is at `root`
/// on page `pg` (block `block`), in chain order, until it returns Some.
fn walk_chain<R>(
    pg: &[u8],
    block: u32,
    root: OffsetNumber,
    mut visit: impl FnMut(OffsetNumber, &[u8]) -> Option<R>,
) -> Option<R> {
    let n = page::item_count(pg);
    let mut off = root;
    let mut at_root = true;
    if let Some(target) = page::redirect_target(pg, root) {
        off = target;
        at_root = false;
    }
    let mut prior_xmax: Option<Xid> = None;
    // A chain has at most one member per pointer; more steps would be a
    // cycle through reused slots.
    for _ in 0..n {
        let t = page::item(pg, off)?;
        if tuple::is_heap_only(t) == at_root {
            return None;
        }
        if prior_xmax.is_some_and(|x| tuple::xmin(t) != x) {
            return None;
        }
        if let Some(r) = visit(off, t) {
            return Some(r);
        }
        if !tuple::is_hot_updated(t) {
            return None;
        }
        let (next_block, next_off) = tuple::ctid(t);
        if next_block != block {
            return None;
        }
        prior_xmax = Some(tuple::xmax(t));
        off = next_off;
        at_root = false;
    }
    None
}

/// For each offset of page `pg` (block `block`), the root of the HOT chain
/// whose member it is (PostgreSQL's heap_get_root_tuples): a version that
/// is not heap-only is its own root; a heap-only one has the offset of the
/// root (tuple or redirect) its chain starts at; 0 for pointers that hold
/// no version and heap-only versions no chain reaches. Indexed by offset.
pub fn chain_roots(pg: &[u8], block: u32) -> Vec<OffsetNumber> {
    let n = page::item_count(pg);
    let mut roots = vec![0; n as usize + 1];
    for off in 1..=n {
        let is_root = match page::item_id(pg, off).0 {
            page::ItemState::Redirect => true,
            page::ItemState::Normal => page::item(pg, off).is_some_and(|t| !tuple::is_heap_only(t)),
            _ => false,
        };
        if is_root {
            walk_chain(pg, block, off, |member, _| {
                roots[member as usize] = off;
                None::<()>
            });
        }
    }
    roots
}

/// Reads the page of `tid` under its share lock and walks the chain there;
/// None when the block is past the end (cut off by VACUUM after the entry
/// was read) or the offset is no pointer.
fn with_chain<R>(
    pool: &'static BufferPool,
    rel: RelFileLocator,
    tid: Tid,
    visit: impl FnMut(OffsetNumber, &[u8]) -> Option<R>,
) -> PgResult<Option<R>> {
    if tid.offset == 0 || tid.block >= pool.smgr().nblocks(rel, ForkNumber::Main)? {
        return Ok(None);
    }
    let buf = pool.read_buffer(rel, ForkNumber::Main, tid.block, ReadMode::Normal, None)?;
    let pg = buf.read();
    Ok(walk_chain(&pg, tid.block, tid.offset, visit))
}

/// The version of the row an index entry at `tid` leads to that `snapshot`
/// sees: the chain from `tid` is walked and `f` is called, under the page's
/// share lock, with the first visible member's own tid and bytes (an MVCC
/// snapshot sees at most one member of a chain). None when no member is
/// visible.
pub fn fetch_visible<R>(
    pool: &'static BufferPool,
    rel: RelFileLocator,
    tid: Tid,
    snapshot: &Snapshot,
    tm: &TransactionManager,
    f: impl FnOnce(Tid, &[u8]) -> R,
) -> PgResult<Option<R>> {
    let mut f = Some(f);
    with_chain(pool, rel, tid, |off, t| {
        let visible = snapshot.tuple_visible(
            tuple::xmin(t),
            tuple::cmin(t),
            tuple::deleting_xmax(t),
            tuple::cmax(t),
            tm,
        );
        // SERIALIZABLE: the version read is SIREAD-locked under its page's
        // share lock (`txn::ssi::PredicateLockManager::lock`), unless we
        // wrote it: our write lock covers it (PostgreSQL's PredicateLockTID).
        if visible && snapshot.ssi.is_some() && !snapshot.own.contains(tuple::xmin(t)) {
            super::predicate_lock_tuple(snapshot, rel, tid.block, off);
        }
        let f = if visible { f.take() } else { None };
        f.map(|f| {
            f(
                Tid {
                    block: tid.block,
                    offset: off,
                },
                t,
            )
        })
    })
    .and_then(|found| {
        if let Some(sx) = &snapshot.ssi {
            sx.manager().check(sx, "conflict out checking")?;
        }
        Ok(found)
    })
}

/// What one version is to a unique check (PostgreSQL's SnapshotDirty):
/// Some when it holds its key, now (Live) or maybe (InProgress: its
/// inserter or deleter is still running); None when it does not (its
/// inserter aborted, or a committed transaction or we deleted it).
fn dirty_holder(t: &[u8], tm: &TransactionManager, own: &OwnXids) -> Option<KeyHolder> {
    let xmin = tuple::xmin(t);
    if !own.contains(xmin) && xmin != common::ids::BOOTSTRAP_XID {
        match tm.status_settled(xmin) {
            XidStatus::InProgress => return Some(KeyHolder::InProgress(xmin)),
            XidStatus::Aborted => return None,
            XidStatus::Committed => {}
        }
    }
    let xmax = tuple::deleting_xmax(t);
    if xmax == 0 {
        return Some(KeyHolder::Live);
    }
    if own.contains(xmax) {
        return None;
    }
    match tm.status_settled(xmax) {
        XidStatus::InProgress => Some(KeyHolder::InProgress(xmax)),
        XidStatus::Aborted => Some(KeyHolder::Live),
        XidStatus::Committed => None,
    }
}

/// Whether the row an index entry at `tid` leads to holds the entry's key,
/// for a unique check by the transaction whose xids are `own`: the first
/// chain member that does decides (Live: a duplicate; InProgress: wait for
/// that transaction and look again), and with none the entry is Dead.
/// The members of one chain share the indexed columns (HOT), so any member
/// holding the row holds the key.
pub fn key_holder(
    pool: &'static BufferPool,
    tm: &TransactionManager,
    rel: RelFileLocator,
    tid: Tid,
    own: &OwnXids,
) -> PgResult<KeyHolder> {
    Ok(with_chain(pool, rel, tid, |_, t| dirty_holder(t, tm, own))?.unwrap_or(KeyHolder::Dead))
}

/// The chain member `key_holder` decides by, for ON CONFLICT: its own tid,
/// what it is to a unique check and a copy of its bytes. None when no
/// member holds the key (the entry is dead).
pub fn key_holding_version(
    pool: &'static BufferPool,
    tm: &TransactionManager,
    rel: RelFileLocator,
    tid: Tid,
    own: &OwnXids,
) -> PgResult<Option<(Tid, KeyHolder, Vec<u8>)>> {
    with_chain(pool, rel, tid, |off, t| {
        dirty_holder(t, tm, own).map(|h| {
            let member = Tid {
                block: tid.block,
                offset: off,
            };
            (member, h, t.to_vec())
        })
    })
}
