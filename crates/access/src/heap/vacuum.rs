//! VACUUM of one heap (PostgreSQL's lazy vacuum): pass 1 prunes every page
//! the visibility map does not call all-visible under its exclusive lock
//! and collects the LP_DEAD pointers left on it; the index pass removes the
//! index entries pointing at them; pass 2 makes them unused (README rules
//! 16-17). A table without indexes has its dead pointers made unused in
//! pass 1. A page left with only versions every snapshot sees is marked
//! all-visible (rule 28). Free space goes to the FSM, and empty pages at
//! the end of the relation are cut off.

use common::{BlockNumber, PgResult, RelFileLocator, Xid};
use storage::buffer::{Buffer, BufferPool, BufferStrategy, PageWrite, ReadMode, StrategyKind};
use storage::page::{self, ItemState, OffsetNumber};
use storage::{fsm, ForkNumber};
use txn::{TransactionManager, XidStatus};

use super::prune::{self, DeadPointers, VersionState};
use super::visibilitymap::{self, MapReader};
use super::{log, Tid};
use crate::tuple;

/// What one VACUUM of a heap found and did (VACUUM VERBOSE's figures).
#[derive(Debug, Default, Clone, PartialEq)]
pub struct VacuumStats {
    /// Pages before the scan, and after truncation.
    pub pages_before: BlockNumber,
    pub pages_after: BlockNumber,
    pub pages_scanned: BlockNumber,
    /// Pages not visited because the visibility map calls them all-visible
    /// (their tuples are not counted in `live`).
    pub pages_skipped: BlockNumber,
    /// Pages marked all-visible by this VACUUM.
    pub pages_set_all_visible: BlockNumber,
    /// Pages all-visible at the end (pg_class.relallvisible).
    pub all_visible: BlockNumber,
    /// Pages on which versions were removed.
    pub pages_pruned: BlockNumber,
    pub tuples_removed: u64,
    /// Versions new snapshots see (reltuples, n_live_tup).
    pub live: u64,
    /// Dead versions some snapshot may still see (n_dead_tup).
    pub recently_dead: u64,
    /// Versions of transactions still running.
    pub inserting: u64,
    /// The horizon below which deleters' versions were removed.
    pub horizon: Xid,
    /// Rounds of index pass and pass 2 (more than one when the dead tids
    /// outgrew their memory).
    pub index_scans: u32,
    /// Pages that had LP_DEAD pointers after pruning, and how many there
    /// were: all made unused by the end.
    pub pages_with_dead_items: BlockNumber,
    pub dead_items: u64,
}

/// VACUUM's index pass: called once per round with the test "is this tid
/// dead" (a tid collected in pass 1); removes the entries whose tid it
/// says is dead from every index of the table.
pub type IndexPass<'a> = dyn FnMut(&dyn Fn(Tid) -> bool) -> PgResult<()> + 'a;

/// Bytes one collected dead tid costs (maintenance_work_mem's unit).
pub const DEAD_TID_BYTES: usize = std::mem::size_of::<Tid>();

/// Most LP_DEAD pointers one page can hold: a round runs before a page
/// once the store might not take all of that page's.
const MAX_DEAD_PER_PAGE: usize =
    (storage::BLCKSZ - page::PAGE_HEADER_SIZE) / page::LINE_POINTER_SIZE;

/// Truncation is tried when at least this many pages, or a sixteenth of the
/// relation, are empty at its end (PostgreSQL's REL_TRUNCATE_MINIMUM and
/// REL_TRUNCATE_FRACTION).
const TRUNCATE_MINIMUM: BlockNumber = 1000;
const TRUNCATE_FRACTION: BlockNumber = 16;

/// Most pages one truncation round holds locked (and pinned) at once.
const TRUNCATE_BATCH: BlockNumber = 256;

/// What VACUUM's options ask of the heap pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HeapVacuumOptions {
    /// Cut empty pages off the end (VACUUM's TRUNCATE option).
    pub truncate: bool,
    /// Visit all-visible pages too (DISABLE_PAGE_SKIPPING, FREEZE).
    pub scan_all: bool,
}

/// Whether every version on the pruned page `pg` is visible to every
/// snapshot, now and later: no dead pointers, each inserter committed below
/// `horizon` (the oldest xmin), no deleter (an aborted one deletes nothing)
/// and no locker that may still run. Empty pages are not marked.
fn page_is_all_visible(pg: &[u8], horizon: Xid, tm: &TransactionManager) -> bool {
    let n = page::item_count(pg);
    let mut any = false;
    for off in 1..=n {
        match page::item_id(pg, off).0 {
            ItemState::Dead => return false,
            ItemState::Unused | ItemState::Redirect => continue,
            ItemState::Normal => {}
        }
        let t = page::item(pg, off).expect("a normal item");
        if prune::version_state(t, horizon, tm) != VersionState::Live {
            return false;
        }
        let xmin = tuple::xmin(t);
        if xmin != common::ids::BOOTSTRAP_XID && xmin >= horizon {
            return false;
        }
        let xmax = tuple::xmax(t);
        if xmax != 0
            && (tuple::infomask(t) & tuple::XMAX_HAS_LOCKERS != 0
                || (!prune::xmax_deletes(t) && tm.status(xmax) == XidStatus::InProgress))
        {
            return false;
        }
        any = true;
    }
    any
}

/// The map page for `block`'s bits, pinned before the heap page is locked
/// (reusing `cached` when it is that page).
fn map_page_for(
    pool: &'static BufferPool,
    rel: RelFileLocator,
    block: BlockNumber,
    cached: &mut Option<Buffer>,
) -> PgResult<()> {
    let want = block / visibilitymap::HEAP_BLOCKS_PER_PAGE;
    if cached.as_ref().map(Buffer::block) != Some(want) {
        *cached = None;
        *cached = Some(visibilitymap::pin_for_set(pool, rel, block)?);
    }
    Ok(())
}

/// With the pruned heap page `pg` locked exclusively: marks it all-visible
/// when it is and is not marked yet (or its map bit was lost), or takes a
/// mark off a page that is not (the horizon went back: unlogged, as only
/// makes the map more careful). Returns whether this set the mark.
fn update_all_visible(
    tm: &TransactionManager,
    pg: &mut PageWrite<'_>,
    rel: RelFileLocator,
    block: BlockNumber,
    horizon: Xid,
    map: &Buffer,
) -> bool {
    let flagged = visibilitymap::page_all_visible(pg);
    if page_is_all_visible(pg, horizon, tm) {
        if flagged && visibilitymap::bit_set_on(map, block) {
            return false;
        }
        visibilitymap::set_all_visible(tm.wal(), pg, rel, block, map);
        return true;
    }
    if flagged {
        visibilitymap::clear_for_change(pg, rel, block);
        pg.mark_dirty();
    }
    false
}

/// Vacuums `rel`: prunes every page not all-visible, records free space,
/// cleans up dead pointers, marks pages all-visible, truncates empty pages
/// at the end when `opts.truncate`. `index_pass` is None when the table has no indexes;
/// otherwise it runs whenever `max_dead_tids` (at least one page's worth)
/// dead tids are collected, and at the end. `check` is called once per
/// page (cancellation).
pub fn vacuum_heap(
    pool: &'static BufferPool,
    tm: &TransactionManager,
    rel: RelFileLocator,
    opts: HeapVacuumOptions,
    mut index_pass: Option<&mut IndexPass<'_>>,
    max_dead_tids: usize,
    mut check: impl FnMut() -> PgResult<()>,
) -> PgResult<VacuumStats> {
    let horizon = tm.global_xmin();
    let nblocks = pool.smgr().nblocks(rel, ForkNumber::Main)?;
    let mut stats = VacuumStats {
        pages_before: nblocks,
        pages_after: nblocks,
        horizon,
        ..Default::default()
    };
    let mode = if index_pass.is_some() {
        DeadPointers::Keep
    } else {
        DeadPointers::Unused
    };
    let mut ring = BufferStrategy::new(StrategyKind::Vacuum, pool.nbuffers());
    let mut dead: Vec<Tid> = Vec::new();
    // One past the last page that holds anything once dead pointers are gone.
    let mut nonempty_end = 0;
    let mut reader = MapReader::new(rel);
    let mut map: Option<Buffer> = None;
    for block in 0..nblocks {
        check()?;
        if let Some(pass) = index_pass.as_deref_mut() {
            if !dead.is_empty() && dead.len() + MAX_DEAD_PER_PAGE > max_dead_tids {
                vacuum_round(pool, tm, rel, &mut dead, pass, &mut ring, &mut stats)?;
            }
        }
        // Nothing on an all-visible page is dead (rule 28): skip it.
        if !opts.scan_all && reader.all_visible(pool, block)? {
            stats.pages_skipped += 1;
            nonempty_end = block + 1;
            continue;
        }
        map_page_for(pool, rel, block, &mut map)?;
        let buf = pool.read_buffer(
            rel,
            ForkNumber::Main,
            block,
            ReadMode::Normal,
            Some(&mut ring),
        )?;
        let (res, has_tuples, dead_here) = {
            let mut pg = buf.write();
            if page::is_new(&pg) {
                let res = prune::PruneResult {
                    free: page::MAX_ITEM_SIZE,
                    ..Default::default()
                };
                (res, false, 0)
            } else {
                let r = prune::prune_page(&mut pg, rel, block, horizon, tm, mode);
                let map = map.as_ref().expect("pinned above");
                if update_all_visible(tm, &mut pg, rel, block, horizon, map) {
                    stats.pages_set_all_visible += 1;
                }
                let before = dead.len();
                let mut has_tuples = false;
                for off in 1..=page::item_count(&pg) {
                    match page::item_id(&pg, off).0 {
                        ItemState::Dead => dead.push(Tid { block, offset: off }),
                        ItemState::Normal | ItemState::Redirect => has_tuples = true,
                        ItemState::Unused => {}
                    }
                }
                let dead_here = dead.len() - before + r.dead_made_unused;
                (r, has_tuples, dead_here)
            }
        };
        drop(buf);
        stats.pages_scanned += 1;
        if res.removed > 0 {
            stats.pages_pruned += 1;
        }
        if dead_here > 0 {
            stats.pages_with_dead_items += 1;
            stats.dead_items += dead_here as u64;
        }
        stats.tuples_removed += res.removed as u64;
        stats.live += res.live as u64;
        stats.recently_dead += res.recently_dead as u64;
        stats.inserting += res.inserting as u64;
        if has_tuples {
            nonempty_end = block + 1;
        }
        fsm::record_free_space(pool, rel, block, res.free)?;
    }
    drop(map);
    if let Some(pass) = index_pass {
        if !dead.is_empty() {
            vacuum_round(pool, tm, rel, &mut dead, pass, &mut ring, &mut stats)?;
        }
    }
    let freeable = nblocks - nonempty_end;
    if opts.truncate
        && freeable > 0
        && (freeable >= TRUNCATE_MINIMUM || freeable >= nblocks / TRUNCATE_FRACTION)
    {
        stats.pages_after = truncate_empty_end(pool, tm, rel)?;
    }
    stats.all_visible = visibilitymap::count_all_visible(pool, rel, stats.pages_after)?;
    Ok(stats)
}

/// One round: the index pass over the collected dead tids (sorted, as
/// pass 1 walks blocks and offsets in order), then pass 2 makes them
/// unused page by page, each page logged; empties `dead`.
fn vacuum_round(
    pool: &'static BufferPool,
    tm: &TransactionManager,
    rel: RelFileLocator,
    dead: &mut Vec<Tid>,
    index_pass: &mut IndexPass<'_>,
    ring: &mut BufferStrategy,
    stats: &mut VacuumStats,
) -> PgResult<()> {
    debug_assert!(dead.windows(2).all(|w| w[0] < w[1]));
    {
        let sorted: &[Tid] = dead;
        index_pass(&|tid| sorted.binary_search(&tid).is_ok())?;
    }
    stats.index_scans += 1;
    let mut offsets: Vec<OffsetNumber> = Vec::new();
    let mut map: Option<Buffer> = None;
    for page_tids in dead.chunk_by(|a, b| a.block == b.block) {
        let block = page_tids[0].block;
        map_page_for(pool, rel, block, &mut map)?;
        let buf = pool.read_buffer(rel, ForkNumber::Main, block, ReadMode::Normal, Some(ring))?;
        let free = {
            let mut pg = buf.write();
            // Only VACUUM makes dead pointers unused, and one VACUUM of a
            // table runs at a time: they are all still dead.
            offsets.clear();
            offsets.extend(
                page_tids
                    .iter()
                    .map(|t| t.offset)
                    .filter(|&o| page::item_id(&pg, o).0 == ItemState::Dead),
            );
            debug_assert_eq!(offsets.len(), page_tids.len());
            if !offsets.is_empty() {
                prune::apply_vacuum(&mut pg, &offsets);
                pg.mark_dirty();
                log::log_vacuum(tm.wal(), rel, block, &mut pg, &offsets);
            }
            // With its dead pointers gone the page may be all-visible now.
            let map = map.as_ref().expect("pinned above");
            if update_all_visible(tm, &mut pg, rel, block, stats.horizon, map) {
                stats.pages_set_all_visible += 1;
            }
            page::free_space(&pg)
        };
        drop(buf);
        fsm::record_free_space(pool, rel, block, free)?;
    }
    dead.clear();
    Ok(())
}

/// Cuts off the empty pages at the end of `rel`, a batch at a time from
/// the end; returns the new size. Under the relation's extension lock, the
/// batch's pages are locked exclusively in ascending order (the lock order
/// of updates) and checked empty; the size is lowered while they are held,
/// so a writer that pinned one of them earlier finds it past the end once
/// it gets the lock (`heap::block_exists`) and goes elsewhere.
fn truncate_empty_end(
    pool: &'static BufferPool,
    tm: &TransactionManager,
    rel: RelFileLocator,
) -> PgResult<BlockNumber> {
    loop {
        let n = pool.smgr().nblocks(rel, ForkNumber::Main)?;
        if n == 0 {
            return Ok(0);
        }
        let first = n.saturating_sub(TRUNCATE_BATCH);
        let bufs = (first..n)
            .map(|b| pool.read_buffer(rel, ForkNumber::Main, b, ReadMode::Normal, None))
            .collect::<Result<Vec<_>, _>>()?;
        let cut = pool.smgr().truncate_with(rel, ForkNumber::Main, |now| {
            if now != n {
                return None; // extended meanwhile: someone is using it
            }
            let guards: Vec<_> = bufs.iter().map(|b| b.write()).collect();
            let new_end = guards
                .iter()
                .rposition(|pg| !page::is_new(pg) && page::item_count(pg) > 0)
                .map_or(first, |i| first + i as BlockNumber + 1);
            if new_end == n {
                return None;
            }
            // The cut blocks' map bits go first: a block extended again
            // after the cut must not start out all-visible.
            if visibilitymap::truncate(pool, rel, new_end).is_err() {
                return None;
            }
            let lsn = log::log_truncate(tm.wal(), rel, new_end);
            if let Err(e) = tm.wal().flush(lsn) {
                panic!("PANIC: could not flush the write-ahead log: {e}");
            }
            Some((new_end, guards))
        })?;
        let was_cut = cut.is_some();
        drop(cut);
        drop(bufs);
        if !was_cut {
            return Ok(pool.smgr().nblocks(rel, ForkNumber::Main)?);
        }
        let new_end = pool.smgr().nblocks(rel, ForkNumber::Main)?;
        pool.drop_buffers_from(rel, ForkNumber::Main, new_end);
        for block in new_end..n {
            fsm::record_free_space(pool, rel, block, 0)?;
        }
        if new_end > first {
            return Ok(new_end);
        }
    }
}
