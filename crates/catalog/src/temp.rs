//! Temporary schemas (`pg_temp_N`) a stopped server left behind.

use common::{Oid, PgError, PgResult};

use crate::Catalog;

impl Catalog {
    /// At startup, before any session exists: drops every temporary schema
    /// with its relations (their files go at commit). Their sessions are
    /// gone, so nobody can use them again; PostgreSQL leaves them until the
    /// schema is next taken, which would let other sessions see them in
    /// pg_class meanwhile. Returns how many were dropped.
    pub fn drop_leftover_temp_schemas(&self) -> PgResult<usize> {
        let leftovers: Vec<Oid> = self
            .snapshot()
            .namespaces
            .values()
            .filter(|n| n.is_temp())
            .map(|n| n.oid)
            .collect();
        if leftovers.is_empty() {
            return Ok(0);
        }
        let xid = self
            .tm
            .begin()
            .map_err(|e| PgError::io("could not assign a transaction id", e))?;
        let mut txn = self.begin(xid, xid);
        let dropped = leftovers
            .iter()
            .try_for_each(|&oid| self.drop_namespace(&mut txn, 0, oid));
        match dropped {
            Ok(()) => {
                self.tm
                    .commit(xid, txn::SyncCommit::On)
                    .map_err(PgError::from)?;
                self.end(txn, true)?;
                Ok(leftovers.len())
            }
            Err(e) => {
                self.tm.abort(xid);
                self.end(txn, false)?;
                Err(e)
            }
        }
    }
}
