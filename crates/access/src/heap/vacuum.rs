//! VACUUM of one heap (PostgreSQL's lazy vacuum, without indexes or a
//! visibility map): every page is pruned under its exclusive lock, its free
//! space goes to the FSM, and empty pages at the end of the relation are cut
//! off (README rule 15).

use common::{BlockNumber, PgResult, RelFileLocator, Xid};
use storage::buffer::{BufferPool, BufferStrategy, ReadMode, StrategyKind};
use storage::page;
use storage::{fsm, ForkNumber};
use txn::TransactionManager;

use super::{log, prune};

/// What one VACUUM of a heap found and did (VACUUM VERBOSE's figures).
#[derive(Debug, Default, Clone, PartialEq)]
pub struct VacuumStats {
    /// Pages before the scan, and after truncation.
    pub pages_before: BlockNumber,
    pub pages_after: BlockNumber,
    pub pages_scanned: BlockNumber,
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
}

/// Truncation is tried when at least this many pages, or a sixteenth of the
/// relation, are empty at its end (PostgreSQL's REL_TRUNCATE_MINIMUM and
/// REL_TRUNCATE_FRACTION).
const TRUNCATE_MINIMUM: BlockNumber = 1000;
const TRUNCATE_FRACTION: BlockNumber = 16;

/// Most pages one truncation round holds locked (and pinned) at once.
const TRUNCATE_BATCH: BlockNumber = 256;

/// Vacuums `rel`: prunes every page, records free space, truncates empty
/// pages at the end when `truncate` (VACUUM's TRUNCATE option). `check` is
/// called once per page (cancellation).
pub fn vacuum_heap(
    pool: &'static BufferPool,
    tm: &TransactionManager,
    rel: RelFileLocator,
    truncate: bool,
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
    let mut ring = BufferStrategy::new(StrategyKind::Vacuum, pool.nbuffers());
    // One past the last page that holds anything.
    let mut nonempty_end = 0;
    for block in 0..nblocks {
        check()?;
        let buf = pool.read_buffer(
            rel,
            ForkNumber::Main,
            block,
            ReadMode::Normal,
            Some(&mut ring),
        )?;
        let (res, empty) = {
            let mut pg = buf.write();
            if page::is_new(&pg) {
                (
                    prune::PruneResult {
                        free: page::MAX_ITEM_SIZE,
                        ..Default::default()
                    },
                    true,
                )
            } else {
                let r = prune::prune_page(&mut pg, rel, block, horizon, tm);
                (r, page::item_count(&pg) == 0)
            }
        };
        drop(buf);
        stats.pages_scanned += 1;
        if res.removed > 0 {
            stats.pages_pruned += 1;
        }
        stats.tuples_removed += res.removed as u64;
        stats.live += res.live as u64;
        stats.recently_dead += res.recently_dead as u64;
        stats.inserting += res.inserting as u64;
        if !empty {
            nonempty_end = block + 1;
        }
        fsm::record_free_space(pool, rel, block, res.free)?;
    }
    let freeable = nblocks - nonempty_end;
    if truncate
        && freeable > 0
        && (freeable >= TRUNCATE_MINIMUM || freeable >= nblocks / TRUNCATE_FRACTION)
    {
        stats.pages_after = truncate_empty_end(pool, tm, rel)?;
    }
    Ok(stats)
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
