//! CREATE INDEX's pass over a heap (PostgreSQL's
//! heapam_index_build_range_scan, for a build that holds ShareLock on the
//! table, so no other transaction writes it meanwhile): which versions get
//! entries, and at which tid.
//!
//! An entry names the root of its version's HOT chain (`chain_roots`), as
//! all entries of a chain do (README.HOT, "CREATE INDEX"). Every version
//! some snapshot may still see gets one, except a HOT-updated version that
//! is recently dead or being deleted by the building transaction: its
//! chain's later member carries the row's entry, at the same root tid. Such
//! a chain is "broken" for the new index (its older members may have other
//! values in the new index's columns), so snapshots older than the build
//! must not use the index (PostgreSQL's indcheckxmin): `broken_hot_chain`.

use common::{PgResult, RelFileLocator, Xid};
use storage::buffer::BufferPool;
use storage::page;
use txn::{TransactionManager, XidStatus};

use super::fetch::chain_roots;
use super::prune::{version_state, xmax_deletes, VersionState};
use super::{HeapScan, Tid};
use crate::tuple;

/// A pass over every page of a heap for an index build.
pub struct IndexBuildScan {
    scan: HeapScan,
    /// Versions deleted below it are dead to everyone (taken at the start).
    horizon: Xid,
    broken_hot_chain: bool,
}

impl IndexBuildScan {
    pub fn new(
        pool: &'static BufferPool,
        tm: &TransactionManager,
        rel: RelFileLocator,
    ) -> PgResult<IndexBuildScan> {
        Ok(IndexBuildScan {
            scan: HeapScan::new(pool, rel)?,
            horizon: tm.global_xmin(),
            broken_hot_chain: false,
        })
    }

    /// Calls `f`, under the next page's share lock, with the tid the entry
    /// names (the chain's root) and the bytes of each version of the page
    /// the index must cover. Ok(false) when the scan is done.
    pub fn next_page(
        &mut self,
        tm: &TransactionManager,
        mut f: impl FnMut(Tid, &[u8]) -> PgResult<()>,
    ) -> PgResult<bool> {
        let Some(buf) = self.scan.stream.next_buffer()? else {
            return Ok(false);
        };
        let block = buf.block();
        let pg = buf.read();
        let roots = chain_roots(&pg, block);
        for off in 1..=page::item_count(&pg) {
            let Some(t) = page::item(&pg, off) else {
                continue;
            };
            let root = roots[off as usize];
            if root == 0 {
                continue; // a heap-only version outside any chain: dead
            }
            let index_it = match version_state(t, self.horizon, tm) {
                VersionState::Dead => false,
                VersionState::Live => true,
                // Inserted by the building transaction, and perhaps
                // deleted or updated by it since (an aborted
                // sub-transaction's xmax deletes nothing).
                VersionState::InsertInProgress
                    if !xmax_deletes(t) || tm.status(tuple::xmax(t)) == XidStatus::Aborted =>
                {
                    true
                }
                VersionState::InsertInProgress
                | VersionState::RecentlyDead
                | VersionState::DeleteInProgress => {
                    let hot = tuple::is_hot_updated(t);
                    self.broken_hot_chain |= hot;
                    !hot
                }
            };
            if index_it {
                let root = Tid {
                    block,
                    offset: root,
                };
                f(root, t)?;
            }
        }
        Ok(true)
    }

    /// Whether a HOT-updated version some snapshot may still see was left
    /// out: transactions whose snapshots are older than the build must not
    /// use the index.
    pub fn broken_hot_chain(&self) -> bool {
        self.broken_hot_chain
    }
}
