//! Transaction blocks: BEGIN / COMMIT / ROLLBACK with isolation levels and
//! read-only mode, SAVEPOINT / RELEASE / ROLLBACK TO as sub-transactions,
//! SET TRANSACTION, and the xids and snapshot each statement runs with.
//!
//! Rules:
//! 1. Xids are assigned at a block's first write, outermost first: the
//!    top-level xid, then one per open savepoint level that writes, so a
//!    sub-transaction's xid is always newer than its parent's.
//! 2. Every xid of the block that has not been rolled back (the top-level
//!    one, released sub-transactions, open levels) is "own" to the block's
//!    snapshots: its changes follow the command-id rule.
//! 3. ROLLBACK TO aborts the xids of the named level and every level inside
//!    it (released ones included), restores the catalog as the savepoint
//!    found it, and starts the level afresh; COMMIT commits the top-level
//!    xid with every remaining sub-transaction xid in one record.
//! 4. REPEATABLE READ and SERIALIZABLE take one snapshot at the block's
//!    first statement that needs one and keep it; READ COMMITTED takes one
//!    per statement. A session advertises its oldest snapshot's xmin until
//!    its transaction ends (`Proc::clear_xmin`), keeping VACUUM's horizon
//!    behind every version its statements or portals may still read.

use std::sync::Arc;

use catalog::CatalogMark;
use common::{PgError, PgResult, SqlState, Xid};
use sql::plan::{BoundStatement, TransactionModes, TransactionOp};
use txn::{IsolationLevel, OwnXids, Snapshot, SnapshotData};

use super::{no_transaction_warning, Session, TxnState};
use crate::gucs::{self, Settings};
use crate::session_api::ResultSink;

/// An open transaction block (explicit, or implicit: several statements of
/// one Query, or extended-protocol messages up to Sync).
pub(super) struct Transaction {
    pub top: Option<Xid>,
    pub cid: u32,
    pub failed: bool,
    /// Opened by an extended-protocol Execute or a multi-statement Query
    /// outside BEGIN: it lasts until the next Sync or the Query's end.
    pub implicit: bool,
    /// An implicit block one extended-protocol Execute opened and no other
    /// statement has joined yet (no pipelining): commands that cannot run
    /// in a transaction block may run in it, as in PostgreSQL.
    pub lone_execute: bool,
    pub isolation: IsolationLevel,
    pub read_only: bool,
    pub deferrable: bool,
    /// REPEATABLE READ and above: the snapshot of the block's first
    /// statement that took one.
    pub snapshot: Option<Arc<SnapshotData>>,
    /// Sub-transaction xids released into the top level.
    pub subxids: Vec<Xid>,
    pub savepoints: Vec<Savepoint>,
}

/// One SAVEPOINT level.
pub(super) struct Savepoint {
    pub name: String,
    /// Its own xid, assigned at its first write.
    pub xid: Option<Xid>,
    /// Its xid and those of sub-transactions released into it.
    pub xids: Vec<Xid>,
    /// The catalog changes as the savepoint found them (None: none yet).
    pub catalog: Option<CatalogMark>,
    /// The heavyweight locks as the savepoint found them: ROLLBACK TO
    /// releases those taken since.
    pub locks: txn::lock::ReleaseMark,
    /// How many deferred constraint events were queued when it began:
    /// ROLLBACK TO drops those queued since.
    pub deferred_events: usize,
    /// Where the transaction's pending LISTEN/NOTIFY stood when it began.
    pub notify: (usize, usize),
    /// The block's READ ONLY mode when it began: SET TRANSACTION in the
    /// savepoint lasts until it is released or rolled back to, as
    /// PostgreSQL restores XactReadOnly at the end of a subtransaction.
    pub read_only: bool,
}

impl Transaction {
    /// A new block with the session's default modes.
    pub fn new(settings: &Settings, implicit: bool) -> Transaction {
        let flag = |name: &str| {
            settings
                .get(name)
                .ok()
                .and_then(gucs::parse_bool)
                .unwrap_or(false)
        };
        Transaction {
            top: None,
            cid: 0,
            failed: false,
            implicit,
            lone_execute: false,
            isolation: default_isolation(settings),
            read_only: flag("default_transaction_read_only"),
            deferrable: flag("default_transaction_deferrable"),
            snapshot: None,
            subxids: Vec::new(),
            savepoints: Vec::new(),
        }
    }

    /// Every live sub-transaction xid (released and open levels), sorted.
    pub fn all_subxids(&self) -> Vec<Xid> {
        let mut all = self.subxids.clone();
        for s in &self.savepoints {
            all.extend_from_slice(&s.xids);
        }
        all.sort_unstable();
        all
    }

    pub fn own_xids(&self) -> OwnXids {
        OwnXids {
            top: self.top.unwrap_or(0),
            subs: self.all_subxids(),
        }
    }

    /// The xid deferred constraint checks lock rows under: the innermost
    /// level's, else the nearest enclosing one that has an xid.
    pub(super) fn locking_xid(&self) -> Xid {
        self.savepoints
            .iter()
            .rev()
            .find_map(|s| s.xid)
            .or(self.top)
            .unwrap_or(0)
    }

    /// The xid writes go under now: the innermost level's (0: none yet).
    fn write_xid(&self) -> Xid {
        match self.savepoints.last() {
            Some(s) => s.xid.unwrap_or(0),
            None => self.top.unwrap_or(0),
        }
    }

    fn find_savepoint(&self, name: &str) -> PgResult<usize> {
        self.savepoints
            .iter()
            .rposition(|s| s.name == name)
            .ok_or_else(|| {
                PgError::new(
                    SqlState::INVALID_SAVEPOINT_SPECIFICATION,
                    format!("savepoint \"{name}\" does not exist"),
                )
            })
    }
}

/// `default_transaction_isolation` as a level.
pub(super) fn default_isolation(settings: &Settings) -> IsolationLevel {
    settings
        .get("default_transaction_isolation")
        .ok()
        .and_then(IsolationLevel::parse)
        .unwrap_or_default()
}

/// The xids, command id, snapshot and isolation a statement runs with.
pub(super) struct StatementTxn {
    /// The (sub-)transaction it writes under (0: it does not write).
    pub xid: Xid,
    pub cid: u32,
    pub snapshot: Snapshot,
    pub isolation: IsolationLevel,
}

/// The command name for "cannot execute %s in a read-only transaction" if
/// `stmt` changes data or the catalog (and so needs an xid), else None.
pub(super) fn write_command(stmt: &BoundStatement) -> Option<&'static str> {
    use sql::role::RoleStatement;
    Some(match stmt {
        // PostgreSQL names the main statement (SELECT for a query).
        BoundStatement::WithModifying { statement, .. } => {
            write_command(statement).unwrap_or("SELECT")
        }
        BoundStatement::Insert { .. } => "INSERT",
        BoundStatement::Update { .. } => "UPDATE",
        BoundStatement::Delete { .. } => "DELETE",
        BoundStatement::CopyFrom(_) => "COPY FROM",
        BoundStatement::CreateTable {
            source: Some(_), ..
        } => "CREATE TABLE AS",
        BoundStatement::CreateTable { .. } => "CREATE TABLE",
        BoundStatement::CreateIndex { .. } => "CREATE INDEX",
        BoundStatement::DropIndex { .. } => "DROP INDEX",
        BoundStatement::Reindex { .. } => "REINDEX",
        BoundStatement::DropTable { .. } => "DROP TABLE",
        BoundStatement::Truncate { .. } => "TRUNCATE TABLE",
        BoundStatement::AddColumn { .. } | BoundStatement::AlterTable { .. } => "ALTER TABLE",
        BoundStatement::CreateSchema { .. } => "CREATE SCHEMA",
        BoundStatement::CreateView { .. } => "CREATE VIEW",
        BoundStatement::CreateSequence { .. } => "CREATE SEQUENCE",
        BoundStatement::DropSequence { .. } => "DROP SEQUENCE",
        BoundStatement::AlterSequenceOwnedBy { .. } => "ALTER SEQUENCE",
        BoundStatement::DropView { .. } => "DROP VIEW",
        BoundStatement::CreateFunction { .. } => "CREATE FUNCTION",
        BoundStatement::CreateEnumType { .. } => "CREATE TYPE",
        BoundStatement::AlterEnumType { .. } => "ALTER TYPE",
        BoundStatement::DropType { domain: false, .. } => "DROP TYPE",
        BoundStatement::DropType { domain: true, .. } => "DROP DOMAIN",
        BoundStatement::CreateDomain { .. } => "CREATE DOMAIN",
        BoundStatement::AlterDomain { .. } => "ALTER DOMAIN",
        BoundStatement::DropFunction { .. } => "DROP FUNCTION",
        BoundStatement::AlterFunction { .. } => "ALTER FUNCTION",
        BoundStatement::CreateTrigger { .. } => "CREATE TRIGGER",
        BoundStatement::DropTrigger { .. } => "DROP TRIGGER",
        BoundStatement::SetTriggersEnabled { .. } => "ALTER TABLE",
        BoundStatement::DropSchema { .. } => "DROP SCHEMA",
        BoundStatement::Comment { .. } => "COMMENT",
        BoundStatement::CreateDatabase { .. } => "CREATE DATABASE",
        BoundStatement::DropDatabase { .. } => "DROP DATABASE",
        // Statistics are not user data: PostgreSQL allows ANALYZE in a
        // read-only transaction.
        BoundStatement::Analyze { .. } | BoundStatement::Vacuum { .. } => "",
        // SELECT ... FOR UPDATE (also under DECLARE or EXPLAIN ANALYZE).
        _ if stmt.locks_rows() => stmt.row_lock_command(),
        BoundStatement::Role(r) if r.writes_catalog() => match r {
            RoleStatement::Create { .. } => "CREATE ROLE",
            RoleStatement::Drop { .. } => "DROP ROLE",
            _ => "ALTER ROLE",
        },
        _ => return None,
    })
}

/// `write_command`, but "" (a write a read-only transaction allows) for
/// INSERT, UPDATE and DELETE of a temporary table: PostgreSQL's
/// ExecCheckXactReadOnly lets those through.
pub(super) fn write_command_in(
    stmt: &BoundStatement,
    catalog: &catalog::CatalogData,
) -> Option<&'static str> {
    let Some(command) = write_command(stmt) else {
        // A query calling a VOLATILE user function may write through it:
        // it gets an xid (without the read-only check a write would make).
        return match stmt {
            BoundStatement::Query { plan, .. }
                if sql::parallel_safety::plan_calls_volatile_user_function(plan) =>
            {
                Some("")
            }
            BoundStatement::Do { .. } => Some(""),
            _ => None,
        };
    };
    let target = match stmt {
        BoundStatement::Insert { table, .. }
        | BoundStatement::Update { table, .. }
        | BoundStatement::Delete { table, .. } => Some(table),
        _ => None,
    };
    Some(match target {
        Some(t) if catalog.is_temp_namespace(t.namespace) => "",
        _ => command,
    })
}

fn read_only_error(command: &str) -> PgError {
    PgError::new(
        SqlState::READ_ONLY_SQL_TRANSACTION,
        format!("cannot execute {command} in a read-only transaction"),
    )
}

fn outside_block(what: &str) -> PgError {
    PgError::new(
        SqlState::NO_ACTIVE_SQL_TRANSACTION,
        format!("{what} can only be used in transaction blocks"),
    )
}

/// The snapshot of a SERIALIZABLE transaction and its SSI handle (None for
/// a safe snapshot: READ ONLY with no read-write serializable transaction
/// running). READ ONLY DEFERRABLE waits until such a safe snapshot can be
/// had, as PostgreSQL's GetSafeSnapshot (more simply: it waits for a moment
/// with no read-write serializable transaction running at all).
fn serializable_snapshot(
    tm: &txn::TransactionManager,
    proc: &txn::Proc,
    read_only: bool,
    deferrable: bool,
    interrupts: &common::interrupt::Interrupts,
) -> PgResult<(Arc<SnapshotData>, Option<Arc<txn::ssi::SerXact>>)> {
    let ssi = tm.predicate();
    if read_only && deferrable {
        ssi.wait_for_safe_snapshot(proc.pid(), || interrupts.check())?;
    }
    Ok(ssi.register(proc.pid(), read_only, || tm.snapshot_data(Some(proc))))
}

impl Session {
    /// The block's isolation level, or the default for a lone statement.
    pub(super) fn current_isolation(&self) -> IsolationLevel {
        match &self.txn {
            TxnState::Block(t) => t.isolation,
            TxnState::Idle => default_isolation(&self.settings),
        }
    }

    /// A new xid, with the session holding its xid lock (`txn::lock`).
    fn assign_xid(&mut self) -> PgResult<Xid> {
        self.ctx
            .tm
            .begin_locked(&mut self.locks)
            .map_err(|e| PgError::io("could not assign a transaction id", e))
    }

    /// The xids, snapshot and command id for the next statement; `writes`
    /// (a command name, see `write_command`) assigns xids as rule 1 says.
    /// Does not advance the command id.
    pub(super) fn statement_txn(&mut self, writes: Option<&str>) -> PgResult<StatementTxn> {
        let tm = self.ctx.tm;
        match &mut self.txn {
            TxnState::Block(t) => {
                if let Some(command) = writes {
                    if t.read_only && !command.is_empty() {
                        return Err(read_only_error(command));
                    }
                    if t.top.is_none() {
                        let x = tm
                            .begin_locked(&mut self.locks)
                            .map_err(|e| PgError::io("could not assign a transaction id", e))?;
                        t.top = Some(x);
                        self.proc.set_xid(x);
                    }
                    for s in &mut t.savepoints {
                        if s.xid.is_none() {
                            // Its xid lock goes with the level's other
                            // locks (`LockOwner::release_since`).
                            let x = tm
                                .begin_locked(&mut self.locks)
                                .map_err(|e| PgError::io("could not assign a transaction id", e))?;
                            s.xid = Some(x);
                            s.xids.push(x);
                        }
                    }
                }
                let data = match &t.snapshot {
                    Some(data) if t.isolation.uses_transaction_snapshot() => data.clone(),
                    None if t.isolation == IsolationLevel::Serializable => {
                        let (data, sx) = serializable_snapshot(
                            tm,
                            &self.proc,
                            t.read_only,
                            t.deferrable,
                            &self.interrupts,
                        )?;
                        self.ssi = sx;
                        t.snapshot = Some(data.clone());
                        data
                    }
                    None if t.isolation.uses_transaction_snapshot() => {
                        let data = tm.snapshot_data(Some(&self.proc));
                        t.snapshot = Some(data.clone());
                        data
                    }
                    _ => tm.snapshot_data(Some(&self.proc)),
                };
                let own = t.own_xids();
                if let (Some(sx), Some(_)) = (&self.ssi, writes) {
                    let mut xids = own.subs.clone();
                    xids.push(own.top);
                    tm.predicate().register_xids(sx, &xids);
                }
                Ok(StatementTxn {
                    xid: t.write_xid(),
                    cid: t.cid,
                    snapshot: Snapshot::new(data, own, t.cid).with_ssi(self.ssi.clone()),
                    isolation: t.isolation,
                })
            }
            TxnState::Idle => {
                // A lone statement's serializable transaction ended with it
                // (`ssi_release`); one left over read only, and commits.
                if let Some(sx) = self.ssi.take() {
                    tm.predicate().release(&sx, true);
                }
                let mut xid = 0;
                if let Some(command) = writes {
                    let read_only = self
                        .settings
                        .get("default_transaction_read_only")
                        .ok()
                        .and_then(gucs::parse_bool)
                        .unwrap_or(false);
                    if read_only && !command.is_empty() {
                        return Err(read_only_error(command));
                    }
                    xid = self.assign_xid()?;
                    self.proc.set_xid(xid);
                }
                let isolation = default_isolation(&self.settings);
                let data = if isolation == IsolationLevel::Serializable {
                    let flag = |name: &str| {
                        self.settings
                            .get(name)
                            .ok()
                            .and_then(gucs::parse_bool)
                            .unwrap_or(false)
                    };
                    let read_only = flag("default_transaction_read_only");
                    let deferrable = flag("default_transaction_deferrable");
                    let (data, sx) = serializable_snapshot(
                        tm,
                        &self.proc,
                        read_only,
                        deferrable,
                        &self.interrupts,
                    )?;
                    if let Some(sx) = &sx {
                        tm.predicate().register_xids(sx, &[xid]);
                    }
                    self.ssi = sx;
                    data
                } else {
                    tm.snapshot_data(Some(&self.proc))
                };
                Ok(StatementTxn {
                    xid,
                    cid: 0,
                    snapshot: Snapshot::new(data, OwnXids::top(xid), 0).with_ssi(self.ssi.clone()),
                    isolation,
                })
            }
        }
    }

    /// SERIALIZABLE's commit test (`txn::ssi`), before the commit is
    /// logged: a transaction marked to fail, or one whose commit would
    /// complete a dangerous structure it is the pivot of, fails with 40001.
    /// Nothing for a failed block (it rolls back) or other levels.
    pub(super) fn ssi_pre_commit(&mut self) -> PgResult<()> {
        if matches!(&self.txn, TxnState::Block(t) if t.failed) {
            return Ok(());
        }
        match &self.ssi {
            Some(sx) => Ok(self.ctx.tm.predicate().pre_commit(sx)?),
            None => Ok(()),
        }
    }

    /// The serializable transaction ended (after its commit or abort
    /// reached the clog): its SSI state is released or kept (`txn::ssi`).
    pub(super) fn ssi_release(&mut self, committed: bool) {
        if let Some(sx) = self.ssi.take() {
            self.ctx.tm.predicate().release(&sx, committed);
        }
    }

    /// Starts an explicit block with `modes` over the session's defaults.
    fn begin_block(&mut self, modes: &TransactionModes) {
        let mut t = Transaction::new(&self.settings, false);
        apply_modes(&mut t, modes);
        self.txn = TxnState::Block(t);
        self.sync_transaction_settings();
    }

    /// transaction_isolation / transaction_read_only / transaction_deferrable
    /// as SHOW and current_setting() report them: the block's, else the
    /// defaults.
    pub(super) fn sync_transaction_settings(&mut self) {
        let (iso, ro, def) = match &self.txn {
            TxnState::Block(t) if !t.implicit => (t.isolation, t.read_only, t.deferrable),
            _ => {
                let t = Transaction::new(&self.settings, true);
                (t.isolation, t.read_only, t.deferrable)
            }
        };
        let on_off = |b: bool| if b { "on" } else { "off" };
        for (name, value) in [
            ("transaction_isolation", iso.name()),
            ("transaction_read_only", on_off(ro)),
            ("transaction_deferrable", on_off(def)),
        ] {
            if self.settings.get(name).is_ok_and(|v| v != value) {
                // Valid by construction.
                let _ = self.settings.set_startup(name, value);
            }
        }
    }

    /// SET transaction_isolation / transaction_read_only /
    /// transaction_deferrable: as SET TRANSACTION with that one mode.
    pub(super) fn set_transaction_setting(
        &mut self,
        name: &str,
        value: Option<&str>,
        sink: &mut dyn ResultSink,
    ) -> PgResult<()> {
        let bad = |v: &str| {
            PgError::new(
                SqlState::INVALID_PARAMETER_VALUE,
                format!("invalid value for parameter \"{name}\": \"{v}\""),
            )
        };
        let mut modes = TransactionModes::default();
        match (name, value) {
            (_, None) => return sink.complete("RESET"),
            ("transaction_isolation", Some(v)) => {
                modes.isolation = Some(IsolationLevel::parse(v).ok_or_else(|| bad(v))?)
            }
            ("transaction_read_only", Some(v)) => {
                modes.read_only = Some(gucs::parse_bool(v).ok_or_else(|| bad(v))?)
            }
            (_, Some(v)) => modes.deferrable = Some(gucs::parse_bool(v).ok_or_else(|| bad(v))?),
        }
        if let TxnState::Block(t) = &self.txn {
            if !t.implicit {
                self.set_transaction(&modes)?;
            }
        }
        sink.complete("SET")
    }

    /// SET TRANSACTION inside a block: PostgreSQL's checks, then the modes.
    fn set_transaction(&mut self, modes: &TransactionModes) -> PgResult<()> {
        let TxnState::Block(t) = &mut self.txn else {
            unreachable!("callers check for a block");
        };
        if let Some(level) = modes.isolation {
            if level != t.isolation {
                if t.snapshot.is_some() || t.cid > 0 {
                    return Err(PgError::new(
                        SqlState::ACTIVE_SQL_TRANSACTION,
                        "SET TRANSACTION ISOLATION LEVEL must be called before any query",
                    ));
                }
                if !t.savepoints.is_empty() {
                    return Err(PgError::new(
                        SqlState::ACTIVE_SQL_TRANSACTION,
                        "SET TRANSACTION ISOLATION LEVEL must not be called in a subtransaction",
                    ));
                }
            }
        }
        if modes.read_only == Some(false) && t.read_only {
            if !t.savepoints.is_empty() {
                return Err(PgError::new(
                    SqlState::ACTIVE_SQL_TRANSACTION,
                    "cannot set transaction read-write mode inside a read-only transaction",
                ));
            }
            if t.cid > 0 || t.snapshot.is_some() {
                return Err(PgError::new(
                    SqlState::ACTIVE_SQL_TRANSACTION,
                    "transaction read-write mode must be set before any query",
                ));
            }
        }
        if modes.deferrable.is_some() && (t.cid > 0 || t.snapshot.is_some()) {
            return Err(PgError::new(
                SqlState::ACTIVE_SQL_TRANSACTION,
                "SET TRANSACTION [NOT] DEFERRABLE must be called before any query",
            ));
        }
        apply_modes(t, modes);
        self.sync_transaction_settings();
        Ok(())
    }

    /// BEGIN, COMMIT, ROLLBACK, SAVEPOINT, RELEASE, ROLLBACK TO and
    /// SET TRANSACTION / SESSION CHARACTERISTICS.
    pub(super) fn run_transaction(
        &mut self,
        op: &TransactionOp,
        sink: &mut dyn ResultSink,
    ) -> PgResult<()> {
        match op {
            TransactionOp::Begin(modes) => {
                match &mut self.txn {
                    // BEGIN inside an implicit block makes it an explicit one.
                    TxnState::Block(t) if t.implicit => {
                        t.implicit = false;
                        apply_modes(t, modes);
                        self.sync_transaction_settings();
                    }
                    TxnState::Block(_) => sink.notice(&PgError::new(
                        SqlState::ACTIVE_SQL_TRANSACTION,
                        "there is already a transaction in progress",
                    ))?,
                    TxnState::Idle => self.begin_block(modes),
                }
                sink.complete("BEGIN")
            }
            TransactionOp::Commit { chain } => {
                let tag = if self.in_failed_block() {
                    "ROLLBACK"
                } else {
                    "COMMIT"
                };
                let modes = self.chain_modes(*chain, "COMMIT")?;
                // An implicit block (several statements in one Query) is no
                // transaction the user began: PostgreSQL warns, then commits it.
                if matches!(&self.txn, TxnState::Idle)
                    || matches!(&self.txn, TxnState::Block(t) if t.implicit)
                {
                    sink.notice(&no_transaction_warning())?;
                }
                if tag == "COMMIT" {
                    if let Err(e) = self
                        .fire_deferred_at_commit()
                        .and_then(|()| self.persist_holdable_cursors())
                        .and_then(|()| self.ssi_pre_commit())
                    {
                        self.end_block(false);
                        return Err(e);
                    }
                }
                self.end_block(true);
                if let Some(m) = modes {
                    self.begin_block(&m);
                }
                sink.complete(tag)
            }
            TransactionOp::Rollback { chain } => {
                let modes = self.chain_modes(*chain, "ROLLBACK")?;
                if matches!(&self.txn, TxnState::Idle)
                    || matches!(&self.txn, TxnState::Block(t) if t.implicit)
                {
                    sink.notice(&no_transaction_warning())?;
                }
                self.end_block(false);
                if let Some(m) = modes {
                    self.begin_block(&m);
                }
                sink.complete("ROLLBACK")
            }
            TransactionOp::Savepoint(name) => {
                let TxnState::Block(t) = &mut self.txn else {
                    return Err(outside_block("SAVEPOINT"));
                };
                if t.implicit {
                    return Err(outside_block("SAVEPOINT"));
                }
                let catalog = self.catalog_changes.as_ref().map(|c| c.mark());
                t.savepoints.push(Savepoint {
                    name: name.clone(),
                    xid: None,
                    xids: Vec::new(),
                    catalog,
                    locks: self.locks.mark(),
                    deferred_events: self.ri.deferred.len(),
                    notify: self.notify.mark(),
                    read_only: t.read_only,
                });
                self.settings_undo.savepoint();
                sink.complete("SAVEPOINT")
            }
            TransactionOp::Release(name) => {
                let TxnState::Block(t) = &mut self.txn else {
                    return Err(outside_block("RELEASE SAVEPOINT"));
                };
                if t.implicit {
                    return Err(outside_block("RELEASE SAVEPOINT"));
                }
                let at = t.find_savepoint(name)?;
                t.read_only = t.savepoints[at].read_only;
                self.settings_undo.release(at);
                let released: Vec<Xid> = t
                    .savepoints
                    .drain(at..)
                    .flat_map(|s| s.xids.into_iter())
                    .collect();
                match t.savepoints.last_mut() {
                    Some(parent) => parent.xids.extend(released),
                    None => t.subxids.extend(released),
                }
                self.release_cursors_to(at);
                self.sync_transaction_settings();
                sink.complete("RELEASE")
            }
            TransactionOp::RollbackTo(name) => {
                self.rollback_to_savepoint(name)?;
                sink.complete("ROLLBACK")
            }
            TransactionOp::SetTransaction(modes) => {
                match &self.txn {
                    // A multi-statement Query's implicit block is a block.
                    TxnState::Block(t) if !(t.implicit && t.lone_execute) => {
                        self.set_transaction(modes)?
                    }
                    _ => sink.notice(&PgError {
                        severity: common::error::Severity::Warning,
                        ..outside_block("SET TRANSACTION")
                    })?,
                }
                sink.complete("SET")
            }
            TransactionOp::SetSessionCharacteristics(modes) => {
                let on_off = |b: bool| if b { "on" } else { "off" };
                let mut sets = Vec::new();
                if let Some(l) = modes.isolation {
                    sets.push(("default_transaction_isolation", l.name()));
                }
                if let Some(b) = modes.read_only {
                    sets.push(("default_transaction_read_only", on_off(b)));
                }
                if let Some(b) = modes.deferrable {
                    sets.push(("default_transaction_deferrable", on_off(b)));
                }
                let record = matches!(self.txn, TxnState::Block(_));
                for (name, value) in sets {
                    let (reset, superuser) = (&self.reset, self.superuser);
                    let set = |s: &mut Settings| s.set_user(name, Some(value), reset, superuser);
                    if record {
                        self.settings_undo.change(&mut self.settings, false, set)?;
                    } else {
                        set(&mut self.settings)?;
                    }
                    if gucs::lookup(name).is_some_and(|d| d.reported) {
                        self.changed.push((name.to_string(), value.to_string()));
                    }
                }
                self.sync_transaction_settings();
                sink.complete("SET")
            }
        }
    }

    /// AND CHAIN: the ending block's modes for the next one. Outside a
    /// block PostgreSQL refuses it (25P01).
    fn chain_modes(&self, chain: bool, what: &str) -> PgResult<Option<TransactionModes>> {
        if !chain {
            return Ok(None);
        }
        match &self.txn {
            TxnState::Block(t) if !t.implicit => Ok(Some(TransactionModes {
                isolation: Some(t.isolation),
                read_only: Some(t.read_only),
                deferrable: Some(t.deferrable),
            })),
            _ => Err(outside_block(&format!("{what} AND CHAIN"))),
        }
    }

    /// ROLLBACK TO SAVEPOINT (rule 3). Allowed in a failed block, which it
    /// returns to normal.
    fn rollback_to_savepoint(&mut self, name: &str) -> PgResult<()> {
        let TxnState::Block(t) = &mut self.txn else {
            return Err(outside_block("ROLLBACK TO SAVEPOINT"));
        };
        if t.implicit {
            return Err(outside_block("ROLLBACK TO SAVEPOINT"));
        }
        let at = t.find_savepoint(name)?;
        let mut aborted: Vec<Xid> = t.savepoints[at..]
            .iter()
            .flat_map(|s| s.xids.iter().copied())
            .collect();
        aborted.sort_unstable();
        if let Some((&first, rest)) = aborted.split_first() {
            self.ctx.tm.abort_tree(first, rest);
        }
        t.savepoints.truncate(at + 1);
        let level = t.savepoints.last_mut().expect("found above");
        level.xid = None;
        level.xids.clear();
        t.failed = false;
        t.read_only = level.read_only;
        let mark = level.catalog.clone();
        let locks = level.locks;
        self.ri.deferred.truncate(level.deferred_events);
        self.notify.rollback_to(level.notify);
        self.rollback_settings_to(at);
        self.sync_transaction_settings();
        self.close_cursors_after_savepoint(at);
        match (&mut self.catalog_changes, mark) {
            (Some(changes), Some(mark)) => {
                if let Err(e) = self.ctx.catalog.rollback_to(changes, mark) {
                    crate::log(&format!(
                        "could not remove a relation file at ROLLBACK TO SAVEPOINT: {}",
                        e.message
                    ));
                }
            }
            // The catalog changes began inside the savepoint: they go
            // whole, as the catalog-change lock they were made under is
            // released below; a later change starts afresh from the
            // committed catalog under the lock taken again.
            (Some(_), None) => {
                let changes = self.catalog_changes.take().expect("matched");
                if let Err(e) = self.ctx.catalog.end(changes, false) {
                    crate::log(&format!(
                        "could not remove a relation file at ROLLBACK TO SAVEPOINT: {}",
                        e.message
                    ));
                }
            }
            (None, _) => {}
        }
        // As PostgreSQL, the rolled-back sub-transactions' locks (their xid
        // locks among them) are released; locks held before stay.
        self.locks.release_since(locks);
        Ok(())
    }
}

fn apply_modes(t: &mut Transaction, modes: &TransactionModes) {
    if let Some(l) = modes.isolation {
        t.isolation = l;
    }
    if let Some(r) = modes.read_only {
        t.read_only = r;
    }
    if let Some(d) = modes.deferrable {
        t.deferrable = d;
    }
}
