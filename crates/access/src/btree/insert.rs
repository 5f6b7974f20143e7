//! Inserting an entry (README rules 21–23): descend to the leaf holding
//! it (exclusively locked), for a unique index check the equal keys first,
//! then add the entry, splitting the leaf and as many parents as overflow.
//!
//! Split protocol: every page a split changes stays locked until the one
//! record describing the whole insert is written — the split page, its new
//! right sibling, the old right sibling (its left link), the parent that
//! gets the downlink (itself possibly split, and so on up), and for a root
//! split the new root and the metapage. Pages are locked in the order
//! (level, position in the level) ascending, which every writer follows,
//! so this cannot deadlock; readers never wait holding a lock. A crash
//! therefore never leaves a split without its downlink, and there is no
//! incomplete-split state to finish later.

use std::cmp::Ordering;

use common::{BlockNumber, PgError, PgResult, RelFileLocator, Xid};
use storage::buffer::{BufferPool, OwnedPageRead, OwnedPageWrite, ReadMode};
use storage::page::OffsetNumber;
use storage::ForkNumber;
use txn::TransactionManager;
use types::Value;

use super::delete;
use super::log::{apply_and_log, Change, Step, BTREE_INSERT_LEAF, BTREE_NEWROOT, BTREE_SPLIT};
use super::page::{self as bp, META_BLOCK, NONE};
use super::search::{self, corrupt, descend_write, leaf_search, leftmost_at_level, lock, Stack};
use super::split;
use super::tuple::{self, compare_prefix, compare_search, SearchKey};
use super::{IndexDesc, InsertOutcome, KeyHolder, UniqueCheck};
use crate::heap::Tid;

#[allow(clippy::too_many_arguments)]
pub(crate) fn insert(
    pool: &'static BufferPool,
    tm: &TransactionManager,
    rel: RelFileLocator,
    desc: &IndexDesc,
    key: &[Value],
    tid: Tid,
    unique: Option<UniqueCheck<'_>>,
    ssi: Option<&txn::ssi::SerXact>,
) -> PgResult<InsertOutcome> {
    // SERIALIZABLE: after the entry is in (or a duplicate is found), the
    // leaf's SIREAD holders get an rw-antidependency to the inserter
    // (PostgreSQL's CheckForSerializableConflictIn on the page). A reader
    // locks a leaf under its share lock, so it either locked first or
    // reads the new entry (and meets its writer through the heap).
    let conflict_in = |block: BlockNumber| -> PgResult<()> {
        if let Some(sx) = ssi {
            let (db, rel) = (rel.db_oid, rel.rel_number);
            let targets = [
                txn::ssi::PredicateTarget::Page { db, rel, block },
                txn::ssi::PredicateTarget::Relation { db, rel },
            ];
            sx.manager().conflict_in(sx, &targets)?;
        }
        Ok(())
    };
    let mut item = Vec::with_capacity(64);
    tuple::encode(desc, key, tid, &mut item)?;
    tuple::check_size(item.len(), tid)?;
    let entry = SearchKey::entry(key, tid);
    // A key with a NULL equals nothing, so it never conflicts.
    let mut unique = unique.filter(|_| !key.iter().any(Value::is_null));
    let mut stack = Stack::with_capacity(8);
    loop {
        let leaf = match unique.as_mut() {
            None => descend_write(pool, rel, desc, &entry, &mut stack)?,
            Some(check) => {
                let first = descend_write(pool, rel, desc, &SearchKey::before(key), &mut stack)?;
                let first_block = first.block();
                match check_unique(pool, rel, desc, first, key, check)? {
                    Unique::Clear(first) => step_right(pool, rel, desc, first, &entry)?,
                    Unique::Duplicate(t) => {
                        // A reader of the key's range fails us with 40001
                        // rather than 23505, as in PostgreSQL.
                        conflict_in(first_block)?;
                        return Ok(InsertOutcome::Duplicate(t));
                    }
                    Unique::Wait(xid) => {
                        // Every index lock is released: wait, then look again.
                        (check.wait)(xid)?;
                        continue;
                    }
                }
            }
        };
        let leaf_block = leaf.block();
        place(
            pool,
            tm,
            rel,
            desc,
            leaf,
            std::mem::take(&mut item),
            &entry,
            &mut stack,
        )?;
        conflict_in(leaf_block)?;
        return Ok(InsertOutcome::Inserted);
    }
}

/// Moves right to the page for `key` holding each page until the next is
/// locked: the unique check's first page stays covered until the insert's
/// page is locked, so a concurrent inserter of the same key, which must
/// pass the same pages, sees our entry or waits for it.
fn step_right(
    pool: &'static BufferPool,
    rel: RelFileLocator,
    desc: &IndexDesc,
    mut pg: OwnedPageWrite,
    key: &SearchKey<'_>,
) -> PgResult<OwnedPageWrite> {
    // A page we hold cannot lose its right sibling to page deletion (which
    // locks the left sibling first), but its sibling may be a page
    // deleted before we came: pass it like any page left of the key.
    while bp::is_deleted(&pg)
        || bp::high_key(&pg).is_some_and(|hk| compare_search(desc, key, hk) != Ordering::Less)
    {
        let next: OwnedPageWrite = lock(pool, rel, bp::next(&pg))?;
        pg = next;
    }
    Ok(pg)
}

enum Unique {
    /// No live or running holder: the first page, still locked.
    Clear(OwnedPageWrite),
    Duplicate(Tid),
    Wait(Xid),
}

enum Run {
    /// A holder that decides: duplicate or wait.
    Found(Unique),
    /// The equal keys end here; Some: they may go on in this right sibling.
    End(Option<BlockNumber>),
}

/// Asks `holder` about each entry equal to `key` from `start` on.
fn scan_equal(
    desc: &IndexDesc,
    pg: &[u8],
    start: OffsetNumber,
    key: &[Value],
    check: &mut UniqueCheck<'_>,
) -> PgResult<Run> {
    for off in start..=bp::max_offset(pg) {
        let kt = bp::key(pg, off);
        if compare_prefix(desc, kt, key) != Ordering::Equal {
            return Ok(Run::End(None));
        }
        let t = tuple::tid(kt);
        match (check.holder)(t)? {
            KeyHolder::Dead => {}
            KeyHolder::Live => return Ok(Run::Found(Unique::Duplicate(t))),
            KeyHolder::InProgress(xid) => return Ok(Run::Found(Unique::Wait(xid))),
        }
    }
    Ok(match bp::high_key(pg) {
        Some(hk) if compare_prefix(desc, hk, key) == Ordering::Equal => {
            Run::End(Some(bp::next(pg)))
        }
        _ => Run::End(None),
    })
}

/// The unique check, under the exclusive lock of the first page that can
/// hold `key` (every inserter of that key locks it first, so checks and
/// inserts of one key are serialised there). Later pages of a run of equal
/// keys are share-locked one at a time. `holder` reads the heap: heap
/// page locks come after index page locks.
fn check_unique(
    pool: &'static BufferPool,
    rel: RelFileLocator,
    desc: &IndexDesc,
    first: OwnedPageWrite,
    key: &[Value],
    check: &mut UniqueCheck<'_>,
) -> PgResult<Unique> {
    let start = leaf_search(&first, desc, &SearchKey::before(key));
    let mut next = match scan_equal(desc, &first, start, key, check)? {
        Run::Found(u) => return Ok(u),
        Run::End(next) => next,
    };
    while let Some(blk) = next {
        let pg: OwnedPageRead = lock(pool, rel, blk)?;
        if bp::is_deleted(&pg) {
            // Unlinked (empty) since its left sibling was read: go on.
            next = Some(bp::next(&pg));
            continue;
        }
        next = match scan_equal(desc, &pg, bp::first_data(&pg), key, check)? {
            Run::Found(u) => return Ok(u),
            Run::End(next) => next,
        };
    }
    Ok(Unique::Clear(first))
}

/// Adds `item` to the locked leaf for `key`, splitting as needed.
#[allow(clippy::too_many_arguments)]
fn place(
    pool: &'static BufferPool,
    tm: &TransactionManager,
    rel: RelFileLocator,
    desc: &IndexDesc,
    leaf: OwnedPageWrite,
    item: Vec<u8>,
    key: &SearchKey<'_>,
    stack: &mut Stack,
) -> PgResult<()> {
    let off = leaf_search(&leaf, desc, key);
    if off <= bp::max_offset(&leaf)
        && compare_search(desc, key, bp::key(&leaf, off)) == Ordering::Equal
    {
        // The same (key, tid) is there already: nothing to add.
        debug_assert!(false, "B-tree entry inserted twice");
        return Ok(());
    }
    if bp::fits(&leaf, item.len()) {
        let mut steps = [Step {
            page: leaf,
            change: Change::Insert(off, item),
        }];
        apply_and_log(tm.wal(), rel, BTREE_INSERT_LEAF, &mut steps);
        return Ok(());
    }
    split_and_insert(pool, tm, rel, leaf, off, item, stack)
}

/// A block for a split, exclusively locked (nobody else knows of it
/// until a logged split links it in): a deleted page no one can still
/// reach (`delete::take_recycled`), else a fresh block at the end.
fn new_page(
    pool: &'static BufferPool,
    tm: &TransactionManager,
    rel: RelFileLocator,
) -> PgResult<OwnedPageWrite> {
    if let Some(pg) = delete::take_recycled(pool, tm, rel)? {
        return Ok(pg);
    }
    let blk = pool.smgr().extend(rel, ForkNumber::Main, 1)?;
    let buf = pool.read_buffer(rel, ForkNumber::Main, blk, ReadMode::Zero, None)?;
    Ok(buf.into_write())
}

/// Splits `cur` to make room for `item` at `off`, and inserts the new
/// downlink in the parent the same way, up to a page with room or a new
/// root. Everything is planned with all those pages locked and applied and
/// logged at once; an error while planning (reading a parent) leaves every
/// page as it was (a block reserved for a right half stays unused).
fn split_and_insert(
    pool: &'static BufferPool,
    tm: &TransactionManager,
    rel: RelFileLocator,
    mut cur: OwnedPageWrite,
    mut off: OffsetNumber,
    mut item: Vec<u8>,
    stack: &mut Stack,
) -> PgResult<()> {
    let mut steps: Vec<Step> = Vec::with_capacity(5);
    let mut new_root = None;
    loop {
        if bp::fits(&cur, item.len()) {
            steps.push(Step {
                page: cur,
                change: Change::Insert(off, item),
            });
            break;
        }
        let right = new_page(pool, tm, rel)?;
        let (left_blk, right_blk) = (cur.block(), right.block());
        let level = bp::level(&cur);
        let was_root = bp::is_root(&cur);
        let old_next = bp::next(&cur);
        let images = split::split_images(&cur, off, &item, left_blk, right_blk);
        if level == 0 {
            // SERIALIZABLE readers of the leaf cover its right half too.
            tm.predicate()
                .page_split(rel.db_oid, rel.rel_number, left_blk, right_blk);
        }
        // Left before right: the old right sibling's left link.
        let sibling = match old_next {
            NONE => None,
            blk => Some(lock::<OwnedPageWrite>(pool, rel, blk)?),
        };
        steps.push(Step {
            page: cur,
            change: Change::Whole(images.left),
        });
        steps.push(Step {
            page: right,
            change: Change::Whole(images.right),
        });
        if let Some(page) = sibling {
            steps.push(Step {
                page,
                change: Change::Prev(right_blk),
            });
        }
        if was_root {
            let root = new_page(pool, tm, rel)?;
            let root_blk = root.block();
            let img = split::root_image(level + 1, left_blk, right_blk, &images.separator);
            // The metapage last: it is locked after every tree page.
            let meta: OwnedPageWrite = lock(pool, rel, META_BLOCK)?;
            steps.push(Step {
                page: root,
                change: Change::Whole(img),
            });
            steps.push(Step {
                page: meta,
                change: Change::Meta(root_blk, level + 1),
            });
            new_root = Some(root_blk);
            break;
        }
        let (parent, downlink) = find_parent(pool, rel, stack, left_blk, level)?;
        item = bp::pivot(right_blk, &images.separator);
        off = downlink + 1;
        cur = parent;
    }
    let info = if new_root.is_some() {
        BTREE_NEWROOT
    } else {
        BTREE_SPLIT
    };
    apply_and_log(tm.wal(), rel, info, &mut steps);
    drop(steps);
    if let Some(root) = new_root {
        search::remember_root(pool, rel, root);
    }
    Ok(())
}

/// The parent of `child` (at `child_level`), exclusively locked, and the
/// offset of its downlink: where the descent saw it, or further right if
/// the parent split since; from the leftmost page of the parent level if
/// the path ran out (`child` was the root when the descent passed).
fn find_parent(
    pool: &'static BufferPool,
    rel: RelFileLocator,
    stack: &mut Stack,
    child: BlockNumber,
    child_level: u32,
) -> PgResult<(OwnedPageWrite, OffsetNumber)> {
    let (mut blk, mut hint) = match stack.pop() {
        Some(entry) => entry,
        None => (leftmost_at_level(pool, rel, child_level + 1)?, 0),
    };
    loop {
        let pg: OwnedPageWrite = lock(pool, rel, blk)?;
        if bp::level(&pg) != child_level + 1 {
            return Err(corrupt(format!(
                "block {blk} of index {} is not at level {}",
                rel.rel_number,
                child_level + 1
            )));
        }
        let (first, max) = (bp::first_data(&pg), bp::max_offset(&pg));
        if (first..=max).contains(&hint) && bp::child(bp::item(&pg, hint)) == child {
            return Ok((pg, hint));
        }
        // A downlink only moves right: past inserts on this page, or to a
        // right sibling when the page split.
        let from = hint.clamp(first, max + 1);
        if let Some(off) = (from..=max)
            .chain(first..from)
            .find(|&o| bp::child(bp::item(&pg, o)) == child)
        {
            return Ok((pg, off));
        }
        if bp::is_rightmost(&pg) {
            return Err(PgError::internal(format!(
                "failed to re-find parent key in index {} for split pages {child}",
                rel.rel_number
            )));
        }
        blk = bp::next(&pg);
        hint = 0;
    }
}
