//! Finding a key's leaf (README rules 20–21): from the root (its block
//! cached in memory, checked against the page's ROOT flag), binary search
//! on each internal page for the child, and a move right whenever the key
//! is at or past a page's high key (the page split since its parent was
//! read). Readers hold one page lock at a time; nothing allocates per level.

use std::cmp::Ordering;
use std::sync::atomic::{AtomicU64, Ordering as AtomicOrdering};

use common::{BlockNumber, PgError, PgResult, RelFileLocator, SqlState};
use storage::buffer::{Buffer, BufferPool, OwnedPageRead, OwnedPageWrite, ReadMode};
use storage::page::OffsetNumber;
use storage::ForkNumber;

use super::page::{self as bp, META_BLOCK, NONE};
use super::tuple::{compare_search, SearchKey};
use super::IndexDesc;

/// A locked page that descent code is generic over (shared or exclusive).
pub(crate) trait Latch: std::ops::Deref<Target = [u8]> + Sized {
    fn take(buf: Buffer) -> Self;
    fn block(&self) -> BlockNumber;
}

impl Latch for OwnedPageRead {
    fn take(buf: Buffer) -> Self {
        buf.into_read()
    }
    fn block(&self) -> BlockNumber {
        OwnedPageRead::block(self)
    }
}

impl Latch for OwnedPageWrite {
    fn take(buf: Buffer) -> Self {
        buf.into_write()
    }
    fn block(&self) -> BlockNumber {
        OwnedPageWrite::block(self)
    }
}

/// Pins and locks block `blk` of the index, which a link or downlink
/// named: anything but an initialised B-tree page there is corruption.
#[inline]
pub(crate) fn lock<L: Latch>(
    pool: &'static BufferPool,
    rel: RelFileLocator,
    blk: BlockNumber,
) -> PgResult<L> {
    let buf = pool.read_buffer(rel, ForkNumber::Main, blk, ReadMode::Normal, None)?;
    let pg = L::take(buf);
    if !bp::is_btree_page(&pg) {
        return Err(corrupt(format!(
            "block {blk} of index {} is not a B-tree page",
            rel.rel_number
        )));
    }
    Ok(pg)
}

pub(crate) fn corrupt(message: impl Into<String>) -> PgError {
    PgError::new(SqlState::INDEX_CORRUPTED, message)
}

// The root cache: one word per slot, (tag << 32) | root block, for
// (pool, relation) pairs hashed into a fixed table. A hint only: the page
// it names is used as the root only if it carries the ROOT flag (only the
// current root does), so a stale or colliding entry costs one metapage
// read. Hence Relaxed loads and stores.
const ROOT_SLOTS: usize = 1024;
static ROOTS: [AtomicU64; ROOT_SLOTS] = [const { AtomicU64::new(0) }; ROOT_SLOTS];

fn root_slot(pool: &BufferPool, rel: RelFileLocator) -> (usize, u64) {
    let h = (pool as *const BufferPool as u64)
        ^ (rel.rel_number as u64).rotate_left(7)
        ^ (rel.db_oid as u64).rotate_left(29)
        ^ (rel.spc_oid as u64).rotate_left(47);
    let h = h.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    ((h >> 40) as usize % ROOT_SLOTS, h & 0xffff_ffff)
}

fn cached_root(pool: &BufferPool, rel: RelFileLocator) -> Option<BlockNumber> {
    let (slot, tag) = root_slot(pool, rel);
    let v = ROOTS[slot].load(AtomicOrdering::Relaxed);
    (v >> 32 == tag && v as u32 != NONE).then_some(v as u32)
}

pub(crate) fn remember_root(pool: &BufferPool, rel: RelFileLocator, root: BlockNumber) {
    let (slot, tag) = root_slot(pool, rel);
    ROOTS[slot].store((tag << 32) | root as u64, AtomicOrdering::Relaxed);
}

/// The root's block and level from the metapage.
pub(crate) fn read_meta(
    pool: &'static BufferPool,
    rel: RelFileLocator,
) -> PgResult<(BlockNumber, u32)> {
    let pg: OwnedPageRead = lock(pool, rel, META_BLOCK)?;
    match bp::meta_root(&pg) {
        Some((root, level)) if root != NONE => Ok((root, level)),
        _ => Err(corrupt(format!("index {} is not a btree", rel.rel_number))),
    }
}

/// The root page, share-locked.
pub(crate) fn root_page(pool: &'static BufferPool, rel: RelFileLocator) -> PgResult<OwnedPageRead> {
    if let Some(blk) = cached_root(pool, rel) {
        let pg: OwnedPageRead = lock(pool, rel, blk)?;
        if bp::is_btree_page(&pg) && bp::is_root(&pg) {
            return Ok(pg);
        }
    }
    // The metapage and the root change together under both locks, so a
    // miss here means another root split came between: look again.
    for _ in 0..100 {
        let (blk, _) = read_meta(pool, rel)?;
        let pg: OwnedPageRead = lock(pool, rel, blk)?;
        if bp::is_btree_page(&pg) && bp::is_root(&pg) {
            remember_root(pool, rel, blk);
            return Ok(pg);
        }
    }
    Err(corrupt(format!(
        "the metapage of index {} does not point at its root",
        rel.rel_number
    )))
}

/// What a descent looks for.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Goal<'a> {
    Key(SearchKey<'a>),
    Leftmost,
    Rightmost,
}

/// Whether the goal lies right of this page (at or past its high key).
#[inline]
fn beyond(desc: &IndexDesc, pg: &[u8], goal: &Goal<'_>) -> bool {
    match goal {
        Goal::Key(k) => {
            bp::high_key(pg).is_some_and(|hk| compare_search(desc, k, hk) != Ordering::Less)
        }
        Goal::Leftmost => false,
        Goal::Rightmost => !bp::is_rightmost(pg),
    }
}

/// On an internal page: the last data item whose key is at or before the
/// search key (the first data item is minus infinity, so there is one).
#[inline]
pub(crate) fn internal_search(pg: &[u8], desc: &IndexDesc, key: &SearchKey<'_>) -> OffsetNumber {
    let first = bp::first_data(pg);
    let (mut lo, mut hi) = (first + 1, bp::max_offset(pg) + 1);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if compare_search(desc, key, bp::key_of(false, bp::item(pg, mid))) == Ordering::Less {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    lo - 1
}

/// On a leaf: the first data item at or after the search key
/// (`max_offset + 1` when there is none).
#[inline]
pub(crate) fn leaf_search(pg: &[u8], desc: &IndexDesc, key: &SearchKey<'_>) -> OffsetNumber {
    let (mut lo, mut hi) = (bp::first_data(pg), bp::max_offset(pg) + 1);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if compare_search(desc, key, bp::key_of(true, bp::item(pg, mid))) == Ordering::Greater {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo
}

/// On a locked page: the offset the goal leads to (internal: the downlink
/// to follow; leaf: the first entry at or after the goal, `max_offset + 1`
/// past the last), after moving right while the goal is beyond the page
/// (Lehman & Yao: each page is released before its right sibling is
/// locked). The high key is read only when the search ends at an internal
/// page's last item or past a leaf's last entry: otherwise a later item
/// bounds the goal, and every item sorts below the high key, which saves a
/// cache miss per level.
#[inline]
pub(crate) fn locate<L: Latch>(
    pool: &'static BufferPool,
    rel: RelFileLocator,
    desc: &IndexDesc,
    mut pg: L,
    goal: &Goal<'_>,
) -> PgResult<(L, OffsetNumber)> {
    loop {
        if bp::is_deleted(&pg) {
            // VACUUM unlinked it after our link to it was read; its key
            // space went to its right sibling (rule 27a).
            let next = bp::next(&pg);
            drop(pg);
            pg = lock(pool, rel, next)?;
            continue;
        }
        let leaf = bp::is_leaf(&pg);
        let max = bp::max_offset(&pg);
        let (off, bounded) = match goal {
            Goal::Key(k) if leaf => {
                let off = leaf_search(&pg, desc, k);
                (off, off <= max)
            }
            Goal::Key(k) => {
                let off = internal_search(&pg, desc, k);
                (off, off < max)
            }
            Goal::Leftmost => (bp::first_data(&pg), true),
            Goal::Rightmost => (if leaf { max + 1 } else { max }, false),
        };
        if bounded || !beyond(desc, &pg, goal) {
            return Ok((pg, off));
        }
        let next = bp::next(&pg);
        drop(pg);
        pg = lock(pool, rel, next)?;
    }
}

/// The leaf holding the goal, share-locked, and the offset `locate` found
/// on it.
pub(crate) fn descend_read(
    pool: &'static BufferPool,
    rel: RelFileLocator,
    desc: &IndexDesc,
    goal: &Goal<'_>,
) -> PgResult<(OwnedPageRead, OffsetNumber)> {
    let mut pg = root_page(pool, rel)?;
    loop {
        let (page, off) = locate(pool, rel, desc, pg, goal)?;
        if bp::is_leaf(&page) {
            return Ok((page, off));
        }
        let child = bp::child(bp::item(&page, off));
        drop(page);
        pg = lock(pool, rel, child)?;
    }
}

/// The path a writer's descent took: (internal block, downlink offset)
/// from the root down, where a split looks for the parent.
pub(crate) type Stack = Vec<(BlockNumber, OffsetNumber)>;

/// The leaf for `key`, exclusively locked, with the path in `stack`.
/// Internal pages are share-locked one at a time; the leaf is locked
/// exclusively straight from its parent (a root that is a leaf is
/// relocked).
pub(crate) fn descend_write(
    pool: &'static BufferPool,
    rel: RelFileLocator,
    desc: &IndexDesc,
    key: &SearchKey<'_>,
    stack: &mut Stack,
) -> PgResult<OwnedPageWrite> {
    stack.clear();
    let goal = Goal::Key(*key);
    let mut pg = root_page(pool, rel)?;
    loop {
        if bp::is_leaf(&pg) {
            // The root is a leaf; it may split while unlocked: move right.
            let w = pg.unlock().into_write();
            return Ok(locate(pool, rel, desc, w, &goal)?.0);
        }
        let (page, off) = locate(pool, rel, desc, pg, &goal)?;
        let child = bp::child(bp::item(&page, off));
        stack.push((Latch::block(&page), off));
        let level = bp::level(&page);
        drop(page);
        if level == 1 {
            let w: OwnedPageWrite = lock(pool, rel, child)?;
            return Ok(locate(pool, rel, desc, w, &goal)?.0);
        }
        pg = lock(pool, rel, child)?;
    }
}

/// The path to the level-1 page whose downlink covers `key`, share-locking
/// one internal page at a time and no leaf (page deletion holds the leaves
/// it changes exclusively while it looks for their parent). Empty when the
/// root is a leaf.
pub(crate) fn path_to_parent_level(
    pool: &'static BufferPool,
    rel: RelFileLocator,
    desc: &IndexDesc,
    key: &SearchKey<'_>,
) -> PgResult<Stack> {
    let goal = Goal::Key(*key);
    let mut stack = Stack::new();
    let mut pg = root_page(pool, rel)?;
    while !bp::is_leaf(&pg) {
        let (page, off) = locate(pool, rel, desc, pg, &goal)?;
        stack.push((Latch::block(&page), off));
        if bp::level(&page) == 1 {
            break;
        }
        let child = bp::child(bp::item(&page, off));
        drop(page);
        pg = lock(pool, rel, child)?;
    }
    Ok(stack)
}

/// The leftmost page at `level`, share-locked (finding a parent whose
/// child was the root when the path was recorded).
pub(crate) fn leftmost_at_level(
    pool: &'static BufferPool,
    rel: RelFileLocator,
    level: u32,
) -> PgResult<BlockNumber> {
    let mut pg = root_page(pool, rel)?;
    loop {
        let l = bp::level(&pg);
        if l == level {
            return Ok(Latch::block(&pg));
        }
        if l < level {
            return Err(corrupt(format!(
                "index {} has no level {level}",
                rel.rel_number
            )));
        }
        let child = bp::child(bp::item(&pg, bp::first_data(&pg)));
        drop(pg);
        pg = lock(pool, rel, child)?;
    }
}
