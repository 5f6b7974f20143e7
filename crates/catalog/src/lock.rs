//! The DDL lock: one transaction at a time may change the catalog, from
//! its first catalog change until it commits or rolls back. It stands in
//! for PostgreSQL's per-object locks until the lock manager exists (the
//! transactions issue): it makes catalog changes serial, so a transaction's
//! private catalog version (`CatalogTxn`) only ever builds on the latest
//! committed one, and two transactions cannot both create "t".
//!
//! Waiting is interruptible: `acquire` polls the caller's cancel check
//! (cancel, statement_timeout, termination) every 100 ms.

use std::time::Duration;

use common::{PgResult, Xid};
use parking_lot::{Condvar, Mutex};

#[derive(Default)]
pub(crate) struct DdlLock {
    /// The transaction that holds it.
    holder: Mutex<Option<Xid>>,
    released: Condvar,
}

impl DdlLock {
    /// Waits until no other transaction holds the lock, then takes it for
    /// `xid`. Returns the error `check` returns to stop waiting.
    pub fn acquire(&self, xid: Xid, check: &mut dyn FnMut() -> PgResult<()>) -> PgResult<()> {
        let mut holder = self.holder.lock();
        loop {
            match *holder {
                None => {
                    *holder = Some(xid);
                    return Ok(());
                }
                Some(h) if h == xid => return Ok(()),
                Some(_) => {
                    check()?;
                    self.released
                        .wait_for(&mut holder, Duration::from_millis(100));
                }
            }
        }
    }

    pub fn release(&self, xid: Xid) {
        let mut holder = self.holder.lock();
        debug_assert_eq!(*holder, Some(xid), "DDL lock released by a non-holder");
        *holder = None;
        self.released.notify_one();
    }
}
