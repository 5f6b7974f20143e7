//! MVCC snapshots and tuple visibility (PostgreSQL's HeapTupleSatisfiesMVCC).

use std::sync::Arc;

use common::Xid;

use crate::clog::XidStatus;
use crate::manager::TransactionManager;

/// Which transactions had finished when a snapshot was taken: every xid
/// below `xmax` that is not in `running`. Shared between the statements
/// (and sessions) that reuse it.
#[derive(Debug)]
pub struct SnapshotData {
    pub xmin: Xid,
    pub xmax: Xid,
    /// Transactions running when the snapshot was taken, below xmax (sorted).
    pub running: Vec<Xid>,
}

/// The xids of the session's own transaction: the top-level one and its
/// live sub-transactions (aborted ones excluded), whose changes follow the
/// command-id rule instead of the commit log.
#[derive(Debug, Clone, Default)]
pub struct OwnXids {
    /// The top-level xid (0 if none is assigned yet).
    pub top: Xid,
    /// Sub-transaction xids, sorted.
    pub subs: Vec<Xid>,
}

impl OwnXids {
    pub fn top(top: Xid) -> OwnXids {
        OwnXids {
            top,
            subs: Vec::new(),
        }
    }
    /// Whether `xid` is the top-level transaction or one of its live
    /// sub-transactions.
    pub fn contains(&self, xid: Xid) -> bool {
        xid == self.top || (!self.subs.is_empty() && self.subs.binary_search(&xid).is_ok())
    }
}

/// What a statement may see: transactions committed before the snapshot
/// was taken, plus its own transaction's changes made by earlier commands.
#[derive(Debug, Clone)]
pub struct Snapshot {
    pub data: Arc<SnapshotData>,
    pub own: OwnXids,
    /// Commands of the own transaction before this one are visible.
    pub command_id: u32,
    /// The SERIALIZABLE transaction's SSI handle: reads through this
    /// snapshot report rw-antidependencies (`crate::ssi`). None for every
    /// other isolation level, which so pays nothing for SSI.
    pub ssi: Option<Arc<crate::ssi::SerXact>>,
    /// Last xid looked up in the commit log and whether it committed: a scan
    /// meets the same xid on tuple after tuple (PostgreSQL's cachedFetchXid).
    last_lookup: std::cell::Cell<(Xid, bool)>,
}

impl Snapshot {
    pub fn new(data: Arc<SnapshotData>, own: OwnXids, command_id: u32) -> Snapshot {
        Snapshot {
            data,
            own,
            command_id,
            ssi: None,
            last_lookup: std::cell::Cell::new((0, false)),
        }
    }

    /// The same snapshot for another command of the own transaction (a
    /// function's statement), still reporting to its SERIALIZABLE handle.
    pub fn for_command(&self, command_id: u32) -> Snapshot {
        Snapshot::new(self.data.clone(), self.own.clone(), command_id).with_ssi(self.ssi.clone())
    }

    /// This snapshot, reporting to the serializable transaction `ssi`.
    pub fn with_ssi(mut self, ssi: Option<Arc<crate::ssi::SerXact>>) -> Snapshot {
        self.ssi = ssi;
        self
    }

    pub fn xmin(&self) -> Xid {
        self.data.xmin
    }

    /// Whether `xid` is one of the session's own live transaction ids.
    pub fn is_own(&self, xid: Xid) -> bool {
        xid != 0 && self.own.contains(xid)
    }

    /// Whether `xid`'s effects are visible to this snapshot, for xids other
    /// than our own.
    fn committed_before(&self, xid: Xid, tm: &TransactionManager) -> bool {
        let d = &*self.data;
        if xid >= d.xmax {
            return false;
        }
        if xid >= d.xmin && d.running.binary_search(&xid).is_ok() {
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

    /// Whether a committed change by `xid` happened after this snapshot
    /// was taken (REPEATABLE READ's write-conflict test).
    pub fn sees_as_running(&self, xid: Xid) -> bool {
        let d = &*self.data;
        xid >= d.xmax || d.running.binary_search(&xid).is_ok()
    }

    /// Visibility of a tuple version with header fields xmin/cmin and xmax/cmax.
    /// Under SERIALIZABLE, a version written by a transaction concurrent
    /// with the snapshot (an invisible insert, or a visible version's
    /// deleter) is reported as an rw-antidependency from this transaction
    /// (PostgreSQL's CheckForSerializableConflictOut).
    pub fn tuple_visible(
        &self,
        xmin: Xid,
        cid: u32,
        xmax: Xid,
        xmax_cid: u32,
        tm: &TransactionManager,
    ) -> bool {
        let visible = self.mvcc_visible(xmin, cid, xmax, xmax_cid, tm);
        if let Some(sx) = &self.ssi {
            self.conflict_out(sx, visible, xmin, xmax, tm);
        }
        visible
    }

    #[cold]
    fn conflict_out(
        &self,
        sx: &crate::ssi::SerXact,
        visible: bool,
        xmin: Xid,
        xmax: Xid,
        tm: &TransactionManager,
    ) {
        let writer = if !visible {
            // Invisible: an insert the snapshot does not see yet, unless
            // it was inserted and deleted before the snapshot (or by us).
            if self.own.contains(xmin)
                || xmin == common::ids::BOOTSTRAP_XID
                || self.committed_before(xmin, tm)
            {
                return;
            }
            xmin
        } else {
            // Visible with a deleter: one the snapshot does not see.
            if xmax == 0 || self.own.contains(xmax) {
                return;
            }
            xmax
        };
        if tm.status(writer) == XidStatus::Aborted {
            return;
        }
        tm.predicate().conflict_out(sx, writer);
    }

    fn mvcc_visible(
        &self,
        xmin: Xid,
        cid: u32,
        xmax: Xid,
        xmax_cid: u32,
        tm: &TransactionManager,
    ) -> bool {
        if self.own.contains(xmin) {
            if cid >= self.command_id {
                return false; // inserted by this or a later command
            }
        } else if xmin != common::ids::BOOTSTRAP_XID && !self.committed_before(xmin, tm) {
            return false;
        }
        if xmax == 0 {
            return true;
        }
        if self.own.contains(xmax) {
            return xmax_cid >= self.command_id;
        }
        !self.committed_before(xmax, tm)
    }
}
