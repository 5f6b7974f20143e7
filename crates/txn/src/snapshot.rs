//! MVCC snapshots and tuple visibility (PostgreSQL's HeapTupleSatisfiesMVCC).

use common::Xid;

use crate::clog::XidStatus;
use crate::manager::TransactionManager;

/// What a statement may see: transactions committed before `xmax` and not in
/// `running`, plus its own transaction's changes made by earlier commands.
#[derive(Debug, Clone)]
pub struct Snapshot {
    pub xmin: Xid,
    pub xmax: Xid,
    /// Transactions running when the snapshot was taken (sorted).
    pub running: Vec<Xid>,
    /// The current transaction (0 if none assigned).
    pub own_xid: Xid,
    /// Commands of the own transaction before this one are visible.
    pub command_id: u32,
    /// Last xid looked up in the commit log and whether it committed: a scan
    /// meets the same xid on tuple after tuple (PostgreSQL's cachedFetchXid).
    pub(crate) last_lookup: std::cell::Cell<(Xid, bool)>,
}

impl Snapshot {
    /// Whether `xid`'s effects are visible to this snapshot, for xids other
    /// than our own.
    fn committed_before(&self, xid: Xid, tm: &TransactionManager) -> bool {
        if xid >= self.xmax {
            return false;
        }
        if xid >= self.xmin && self.running.binary_search(&xid).is_ok() {
            return false;
        }
        let (cached, committed) = self.last_lookup.get();
        if cached == xid {
            return committed;
        }
        let committed = tm.clog().status(xid) == XidStatus::Committed;
        // Only final states are cached; a snapshot never sees `xid` change
        // from committed, and an xid below xmax not running is final.
        self.last_lookup.set((xid, committed));
        committed
    }

    /// Visibility of a tuple version with header fields xmin/cmin and xmax/cmax.
    pub fn tuple_visible(
        &self,
        xmin: Xid,
        cid: u32,
        xmax: Xid,
        xmax_cid: u32,
        tm: &TransactionManager,
    ) -> bool {
        if xmin == self.own_xid {
            if cid >= self.command_id {
                return false; // inserted by this or a later command
            }
        } else if xmin != common::ids::BOOTSTRAP_XID && !self.committed_before(xmin, tm) {
            return false;
        }
        if xmax == 0 {
            return true;
        }
        if xmax == self.own_xid {
            return xmax_cid >= self.command_id;
        }
        !self.committed_before(xmax, tm)
    }
}
