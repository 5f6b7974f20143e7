//! VACUUM's index pass (README rule 25): every leaf in physical order,
//! each under its exclusive lock, loses the entries whose heap tid the
//! caller says is gone; one VACUUM record per changed page. Emptied pages
//! stay in the tree (their high key still bounds their key range): pages
//! are neither deleted nor reused yet.
//!
//! A split during the pass moves entries only to a block it adds at the
//! end (pages are never reused), so the pass goes on until it has visited
//! every block the index has when it gets there: an entry moved off a page
//! not yet visited lands on a block visited later. (A split that reserved
//! a block holds its left page locked until the new one is written, so the
//! pass cannot pass that page first and the new block empty.) Reusing
//! pages will need nbtree's split cycle ids instead.

use common::{PgResult, RelFileLocator};
use storage::buffer::{BufferPool, BufferStrategy, ReadMode, StrategyKind};
use storage::page::OffsetNumber;
use storage::ForkNumber;
use wal::Wal;

use super::log::{apply_and_log, Change, Step, BTREE_VACUUM};
use super::page as bp;
use super::tuple;
use super::BulkDeleteStats;
use crate::heap::Tid;

pub(crate) fn bulk_delete(
    pool: &'static BufferPool,
    wal: &Wal,
    rel: RelFileLocator,
    dead: &dyn Fn(Tid) -> bool,
) -> PgResult<BulkDeleteStats> {
    let mut stats = BulkDeleteStats::default();
    let mut ring = BufferStrategy::new(StrategyKind::Vacuum, pool.nbuffers());
    let mut next = 1;
    loop {
        let nblocks = pool.smgr().nblocks(rel, ForkNumber::Main)?;
        stats.pages = nblocks;
        if next >= nblocks {
            break;
        }
        let blk = next;
        next += 1;
        let buf = pool.read_buffer(
            rel,
            ForkNumber::Main,
            blk,
            ReadMode::Normal,
            Some(&mut ring),
        )?;
        let pg = buf.into_write();
        // Internal pages, and blocks a split reserved but never linked in.
        if !bp::is_btree_page(&pg) || !bp::is_leaf(&pg) {
            continue;
        }
        let (first, max) = (bp::first_data(&pg), bp::max_offset(&pg));
        let doomed: Vec<OffsetNumber> = (first..=max)
            .filter(|&o| dead(tuple::tid(bp::key(&pg, o))))
            .collect();
        let entries = (max + 1 - first) as u64;
        stats.removed += doomed.len() as u64;
        stats.remaining += entries - doomed.len() as u64;
        if doomed.is_empty() {
            continue;
        }
        let mut steps = [Step {
            page: pg,
            change: Change::Delete(doomed),
        }];
        apply_and_log(wal, rel, BTREE_VACUUM, &mut steps);
    }
    Ok(stats)
}
