//! VACUUM's index pass (README rules 25 and 27a): every leaf in physical
//! order, each under its exclusive lock, loses the entries whose heap tid
//! the caller says is gone; one VACUUM record per changed page. A leaf
//! left empty is then unlinked (`delete::unlink_leaf`) when the rules
//! allow, and offered for reuse through the free space map, as is every
//! deleted page the pass meets.
//!
//! A split during the pass moves entries only to a block it adds at the
//! end: splits reuse no page while a pass runs (`delete::PassGuard`). So
//! the pass goes on until it has visited every block the index has when
//! it gets there: an entry moved off a page not yet visited lands on a
//! block visited later. (A split that reserved a block holds its left page
//! locked until the new one is written, so the pass cannot pass that page
//! first and the new block empty.)

use common::{PgResult, RelFileLocator};
use storage::buffer::{BufferPool, BufferStrategy, ReadMode, StrategyKind};
use storage::page::OffsetNumber;
use storage::ForkNumber;
use txn::TransactionManager;

use super::delete::{self, PassGuard};
use super::log::{apply_and_log, Change, Step, BTREE_VACUUM};
use super::page as bp;
use super::tuple;
use super::{BulkDeleteStats, IndexDesc};
use crate::heap::Tid;

pub(crate) fn bulk_delete(
    pool: &'static BufferPool,
    tm: &TransactionManager,
    rel: RelFileLocator,
    desc: &IndexDesc,
    dead: &dyn Fn(Tid) -> bool,
) -> PgResult<BulkDeleteStats> {
    let _pass = PassGuard::enter(pool, rel);
    let mut stats = BulkDeleteStats::default();
    let mut ring = BufferStrategy::new(StrategyKind::Vacuum, pool.nbuffers());
    let global_xmin = tm.global_xmin();
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
        // Blocks a split reserved but never linked in.
        if !bp::is_btree_page(&pg) {
            continue;
        }
        if bp::is_deleted(&pg) {
            stats.pages_deleted += 1;
            let reusable = delete::recyclable(&pg, global_xmin);
            drop(pg);
            // The map is not logged: offer it again (a split checks).
            delete::offer(pool, rel, blk)?;
            if reusable {
                stats.pages_free += 1;
            }
            continue;
        }
        if !bp::is_leaf(&pg) {
            continue;
        }
        let (first, max) = (bp::first_data(&pg), bp::max_offset(&pg));
        let doomed: Vec<OffsetNumber> = (first..=max)
            .filter(|&o| dead(tuple::tid(bp::key(&pg, o))))
            .collect();
        let entries = (max + 1 - first) as u64;
        stats.removed += doomed.len() as u64;
        stats.remaining += entries - doomed.len() as u64;
        let now_empty = entries == doomed.len() as u64;
        if !doomed.is_empty() {
            let mut steps = [Step {
                page: pg,
                change: Change::Delete(doomed),
            }];
            apply_and_log(tm.wal(), rel, BTREE_VACUUM, &mut steps);
        } else {
            drop(pg);
        }
        if now_empty && delete::unlink_leaf(pool, tm, rel, desc, blk)? {
            stats.pages_newly_deleted += 1;
            stats.pages_deleted += 1;
            delete::offer(pool, rel, blk)?;
        }
    }
    if stats.pages_newly_deleted > 0 {
        delete::pass_horizon(tm)?;
    }
    Ok(stats)
}
