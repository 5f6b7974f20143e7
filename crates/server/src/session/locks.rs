//! The session's heavyweight locks (`txn::lock`): the locks a statement
//! takes before it runs (`sql::plan::locks`), LOCK TABLE, and their
//! release when the transaction ends. A statement bound before its locks
//! were granted is bound again if a catalog change committed meanwhile
//! (PostgreSQL accepts invalidation messages after locking), so a DROP
//! TABLE that committed while we waited ends in 42P01.

use std::sync::Arc;
use std::time::Instant;

use common::{PgError, PgResult, SqlState};
use sql::parse::ParsedStatement;
use sql::plan::BoundStatement;
use txn::lock::{LockError, LockMode, LockScope, LockSettings, LockTag, WaitContext};
use types::TypeId;

use super::{Session, TxnState};
use crate::gucs;

/// What ends a lock wait early: cancel, termination, statement_timeout.
pub(super) fn wait_check(
    interrupts: &common::interrupt::Interrupts,
    deadline: Option<Instant>,
) -> PgResult<()> {
    interrupts.check()?;
    if deadline.is_some_and(|d| Instant::now() >= d) {
        return Err(PgError::new(
            SqlState::QUERY_CANCELED,
            "canceling statement due to statement timeout",
        ));
    }
    Ok(())
}

impl Session {
    /// deadlock_timeout and lock_timeout, parsed again only after a change.
    pub(super) fn lock_settings(&self) -> LockSettings {
        let mut cache = self.thread_settings.borrow_mut();
        let generation = self.settings.generation();
        match cache.locks {
            Some((g, s)) if g == generation => s,
            _ => {
                let s = gucs::lock_settings(&self.settings);
                cache.locks = Some((generation, s));
                s
            }
        }
    }

    /// When statement_timeout, counted from now, expires.
    pub(super) fn statement_deadline(&self) -> Option<Instant> {
        let ms = self
            .settings
            .get("statement_timeout")
            .ok()
            .and_then(|v| gucs::parse_duration_ms(v, 1))
            .unwrap_or(0);
        (ms > 0).then(|| Instant::now() + std::time::Duration::from_millis(ms))
    }

    /// Takes `mode` on `tag` in `scope`, waiting (interruptibly, within
    /// statement_timeout and lock_timeout) unless `nowait`.
    pub(super) fn acquire_lock(
        &mut self,
        tag: LockTag,
        mode: LockMode,
        scope: LockScope,
        nowait: bool,
    ) -> Result<(), LockError> {
        // Most requests are granted at once (held already, the fast path,
        // nobody in the way): the wait's settings only for those that wait.
        match self.locks.acquire(tag, mode, scope, None) {
            Err(LockError::NotAvailable) if !nowait => {}
            r => return r,
        }
        let settings = self.lock_settings();
        let interrupts = self.interrupts.clone();
        let deadline = self.statement_deadline();
        let mut check = move || wait_check(&interrupts, deadline);
        let mut ctx = WaitContext {
            settings,
            check: &mut check,
        };
        self.locks.acquire(tag, mode, scope, Some(&mut ctx))
    }

    /// Takes the locks `stmt` runs under, for the transaction.
    pub(super) fn lock_statement(&mut self, stmt: &BoundStatement) -> PgResult<()> {
        for (tag, mode) in sql::plan::locks::statement_locks(stmt, self.db_oid) {
            self.acquire_lock(tag, mode, LockScope::Transaction, false)
                .map_err(|e| e.into_pg(|| unreachable!("statement locks wait")))?;
        }
        Ok(())
    }

    /// Binds `parsed` and takes its locks, binding again while catalog
    /// changes committed before the locks were granted.
    pub(super) fn bind_locked(
        &mut self,
        parsed: &ParsedStatement,
        params: &mut Vec<Option<TypeId>>,
    ) -> PgResult<BoundStatement> {
        self.prepare_temp_creation(parsed)?;
        let declared = params.clone();
        loop {
            let version = self.catalog_version();
            let bound = self.bind(parsed, params)?;
            // An aborted block runs nothing but its end: it takes no locks.
            if self.in_failed_block() {
                return Ok(bound);
            }
            self.lock_statement(&bound)?;
            if Arc::ptr_eq(&version, &self.catalog_version()) {
                return Ok(bound);
            }
            *params = declared.clone();
        }
    }

    /// LOCK TABLE: each relation in turn, in the statement's mode.
    pub(super) fn run_lock_table(
        &mut self,
        relations: &[(u32, String)],
        mode: LockMode,
        nowait: bool,
    ) -> PgResult<()> {
        let in_block = match &self.txn {
            TxnState::Block(t) => !t.implicit || self.cursors.in_multi_statement_query,
            TxnState::Idle => false,
        };
        if !in_block {
            return Err(PgError::new(
                SqlState::NO_ACTIVE_SQL_TRANSACTION,
                "LOCK TABLE can only be used in transaction blocks",
            ));
        }
        for (rel, name) in relations {
            let tag = LockTag::Relation {
                db: self.db_oid,
                rel: *rel,
            };
            self.acquire_lock(tag, mode, LockScope::Transaction, nowait)
                .map_err(|e| {
                    e.into_pg(|| {
                        PgError::new(
                            SqlState::LOCK_NOT_AVAILABLE,
                            format!("could not obtain lock on relation \"{name}\""),
                        )
                    })
                })?;
        }
        Ok(())
    }

    /// Releases the transaction's locks (after its commit or rollback, and
    /// after its catalog changes were published or dropped).
    pub(super) fn release_transaction_locks(&mut self) {
        self.locks.release_transaction();
    }

    /// Outside a transaction nothing stays locked: a statement that failed
    /// before its implicit transaction began may have taken some.
    pub(super) fn release_locks_if_idle(&mut self) {
        if matches!(self.txn, TxnState::Idle) && self.locks.holds_transaction_locks() {
            self.locks.release_transaction();
        }
    }
}
