//! Deferred constraints and SET CONSTRAINTS: the foreign key events a
//! transaction's statements deferred (`exec::ri`), fired at its commit (an
//! error there rolls it back, as PostgreSQL's COMMIT does) or when SET
//! CONSTRAINTS ... IMMEDIATE makes their constraint immediate; and the
//! command ids referential actions take after their statement's.
//!
//! Rules:
//! 1. The events live with the transaction: its end drops them, ROLLBACK
//!    TO SAVEPOINT drops those queued since the savepoint.
//! 2. A constraint's mode is SET CONSTRAINTS' for it (a later ALL
//!    overrides every earlier name), else its INITIALLY DEFERRED.
//! 3. A statement's next command id starts after its own; a transaction
//!    block's next statement starts after the last one handed out.

use std::collections::HashMap;

use common::{Oid, PgError, PgResult, SqlState, Xid};
use exec::ri::RiEvent;
use txn::{IsolationLevel, OwnXids, Snapshot};

use super::{Session, TxnState};
use crate::session_api::ResultSink;

/// The open transaction's deferred constraints (rule 1) and modes (rule 2).
#[derive(Default)]
pub(super) struct ConstraintState {
    pub deferred: Vec<RiEvent>,
    /// SET CONSTRAINTS ALL's mode (true: deferred), if given.
    all: Option<bool>,
    /// SET CONSTRAINTS name's modes since the last ALL.
    named: HashMap<Oid, bool>,
    /// The command id `Hooks::next_command_id` hands out next (rule 3).
    pub next_cid: u32,
}

impl ConstraintState {
    pub fn is_deferred(&self, constraint: Oid, initially_deferred: bool) -> bool {
        self.named
            .get(&constraint)
            .copied()
            .or(self.all)
            .unwrap_or(initially_deferred)
    }

    pub fn next_command_id(&mut self) -> u32 {
        let c = self.next_cid;
        self.next_cid += 1;
        c
    }

    /// The transaction ended: nothing of it stays.
    pub fn end_transaction(&mut self) {
        self.deferred.clear();
        self.all = None;
        self.named.clear();
    }
}

impl Session {
    /// Fires `events` (deferred ones now due) in the open transaction:
    /// `xid` writes (locks), `own` are its xids.
    fn fire_events(
        &mut self,
        events: Vec<RiEvent>,
        xid: Xid,
        own: OwnXids,
        isolation: IsolationLevel,
    ) -> PgResult<()> {
        if events.is_empty() {
            return Ok(());
        }
        let data = match &self.txn {
            TxnState::Block(t) if isolation.uses_transaction_snapshot() => t
                .snapshot
                .clone()
                .unwrap_or_else(|| self.ctx.tm.snapshot_data(Some(&self.proc))),
            _ => self.ctx.tm.snapshot_data(Some(&self.proc)),
        };
        let cid = self.ri.next_command_id();
        let snapshot = Snapshot::new(data, own, cid).with_ssi(self.ssi.clone());
        let catalog = self.catalog_version();
        self.with_env(&catalog, &snapshot, xid, cid, &[], |env| {
            env.isolation = isolation;
            exec::ri::fire_deferred(events, env)
        })
    }

    /// At the commit of the open block: its deferred events fire.
    pub(super) fn fire_deferred_at_commit(&mut self) -> PgResult<()> {
        let events = std::mem::take(&mut self.ri.deferred);
        let TxnState::Block(t) = &self.txn else {
            debug_assert!(events.is_empty(), "deferred events outside a block");
            return Ok(());
        };
        if t.failed {
            return Ok(());
        }
        let (xid, own, isolation) = (t.locking_xid(), t.own_xids(), t.isolation);
        self.fire_events(events, xid, own, isolation)
    }

    /// At the commit of a lone statement's transaction `top`.
    pub(super) fn fire_deferred_of_statement(&mut self, top: Xid) -> PgResult<()> {
        let events = std::mem::take(&mut self.ri.deferred);
        let isolation = self.current_isolation();
        self.fire_events(events, top, OwnXids::top(top), isolation)
    }

    /// Ends an implicit block (several statements in one Query, or
    /// extended-protocol messages up to Sync): committed, its deferred
    /// events fired first, unless `ok` is false or they fail.
    pub(super) fn end_implicit_block(&mut self, ok: bool) -> PgResult<()> {
        let fired = if ok {
            self.fire_deferred_at_commit()
                .and_then(|()| self.ssi_pre_commit())
        } else {
            Ok(())
        };
        self.end_block(ok && fired.is_ok());
        fired
    }

    /// SET CONSTRAINTS: outside a transaction block only a WARNING; made
    /// IMMEDIATE, a constraint's deferred events fire now.
    pub(super) fn set_constraints(
        &mut self,
        constraints: &Result<Option<Vec<Oid>>, PgError>,
        deferred: bool,
        sink: &mut dyn ResultSink,
    ) -> PgResult<()> {
        let in_block = matches!(self.txn, TxnState::Block(_));
        if !in_block {
            sink.notice(&PgError {
                severity: common::error::Severity::Warning,
                ..PgError::new(
                    SqlState::NO_ACTIVE_SQL_TRANSACTION,
                    "SET CONSTRAINTS can only be used in transaction blocks",
                )
            })?;
        }
        let constraints = constraints.as_ref().map_err(Clone::clone)?.as_deref();
        if !in_block {
            return sink.complete("SET CONSTRAINTS");
        }
        match constraints {
            None => {
                self.ri.all = Some(deferred);
                self.ri.named.clear();
            }
            Some(list) => {
                for &c in list {
                    self.ri.named.insert(c, deferred);
                }
            }
        }
        if !deferred {
            let (due, kept): (Vec<RiEvent>, Vec<RiEvent>) = std::mem::take(&mut self.ri.deferred)
                .into_iter()
                .partition(|e| constraints.is_none_or(|l| l.contains(&e.constraint())));
            self.ri.deferred = kept;
            if let TxnState::Block(t) = &self.txn {
                let (xid, own, isolation) = (t.locking_xid(), t.own_xids(), t.isolation);
                self.fire_events(due, xid, own, isolation)?;
            }
        }
        sink.complete("SET CONSTRAINTS")
    }
}
