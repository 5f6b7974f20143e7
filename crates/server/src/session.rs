//! A SQL session: settings, transaction state, statement execution. SQL
//! cursors and PREPARE/EXECUTE are in `sql_cursors.rs` and `sql_prepared.rs`,
//! what statements reach of the session (`SessionHooks`) in `hooks.rs`.

mod deferred;
mod factory;
mod fetch;
mod held_completion;
mod hooks;
mod locks;
mod notify;
mod roles;
mod settings_undo;
mod sql_cursors;
mod sql_prepared;
mod temp;
mod transaction;

use common::interrupt::Interrupts;
use std::sync::Arc;

use common::{PgError, PgResult, SqlState, Xid};
use exec::ExecEnv;
use held_completion::HeldCompletion;
use hooks::{Hooks, SequenceValues};
use sql::parse::{is_blank, split_statements, ParsedStatement, StatementText};
use sql::plan::{BoundStatement, OutputColumn, TransactionOp};
use sql::BindContext;
use types::{IoSettings, TypeId, Value};

use crate::context::SharedContext;
use crate::gucs::{self, Settings};
use crate::plan_cache::{PlanCache, Planning};
use crate::query_cursor::{QueryCursor, RunningPlan};
use crate::session_api::{ColumnDesc, PreparedStatement, ResultSink, SessionHandler};

pub use factory::Factory;

enum TxnState {
    Idle,
    Block(transaction::Transaction),
}

struct Prepared {
    parsed: Option<ParsedStatement>,
    param_types: Vec<Option<TypeId>>,
    plans: parking_lot::Mutex<Option<PlanCache>>,
}

impl Drop for Prepared {
    fn drop(&mut self) {
        if let Some(p) = self.parsed.take() {
            sql::parse::drop_parsed(p);
        }
    }
}

/// PostgreSQL's WARNING for COMMIT or ROLLBACK outside a transaction block.
fn no_transaction_warning() -> PgError {
    PgError {
        severity: common::error::Severity::Warning,
        ..PgError::new(
            SqlState::NO_ACTIVE_SQL_TRANSACTION,
            "there is no transaction in progress",
        )
    }
}

/// Settings as last set, and what they parse to.
#[derive(Default)]
struct ThreadSettings {
    /// The conversion settings and the settings generation they were parsed from.
    io: Option<(u64, IoSettings)>,
    stack_setting: String,
    stack_kb: u64,
    /// The planner's settings and the settings generation they were parsed from.
    planner: Option<(u64, std::rc::Rc<sql::plan::PlannerSettings>)>,
    /// The executor's settings and the generation they were parsed from.
    exec: Option<(u64, exec::ExecSettings)>,
    sync_commit: Option<(u64, txn::SyncCommit)>,
    locks: Option<(u64, txn::lock::LockSettings)>,
    /// The socket settings and the generation they were parsed from.
    socket: Option<(u64, crate::connections::SocketSettings)>,
    /// client_encoding typed, and the generation it was parsed from.
    encoding: Option<(u64, crate::protocol::ClientEncoding)>,
}

/// Rows sent between interrupt checks, for plans whose operators never check
/// (a projection over generate_series can run for hours).
const ROWS_PER_INTERRUPT_CHECK: u64 = 256;

pub struct Session {
    ctx: SharedContext,
    db_oid: u32,
    db_name: String,
    /// The current role (current_user), which SET ROLE changes.
    user: String,
    /// session_user, which SET SESSION AUTHORIZATION changes.
    session_user: String,
    /// The role the connection logged in as: whether it is a superuser
    /// decides who SET SESSION AUTHORIZATION may become.
    authenticated_user: String,
    /// SET ROLE's role, None for NONE (current_user is then session_user).
    set_role: Option<String>,
    /// Whether the current role is a superuser (SET of superuser settings).
    superuser: bool,
    settings: Settings,
    changed: Vec<(String, String)>,
    /// What undoes the open transaction's setting changes.
    settings_undo: settings_undo::SettingsUndo,
    txn: TxnState,
    /// This session in the ProcArray (its xid and advertised snapshot xmin).
    proc: txn::Proc,
    /// The open transaction's catalog changes (it holds the catalog-change
    /// lock).
    catalog_changes: Option<catalog::CatalogTxn>,
    /// The session's heavyweight locks (`session/locks.rs`).
    locks: txn::lock::LockOwner,
    /// Notices raised by functions during the statement (`Hooks::notice`).
    pending_notices: Vec<PgError>,
    /// The SERIALIZABLE transaction's SSI handle, from its snapshot to its
    /// end (`txn::ssi`); None at other levels and for a safe snapshot.
    ssi: Option<Arc<txn::ssi::SerXact>>,
    sequences: SequenceValues,
    pid: i32,
    interrupts: Arc<Interrupts>,
    status: Arc<crate::activity::BackendStatus>,
    db_counters: Arc<crate::activity::DatabaseCounters>,
    /// Where this session's sorts and hash tables spill.
    temp: Arc<storage::temp_file::TempSpace>,
    /// Parsed statements by their text with literals masked (sql::parse_cache).
    parse_cache: sql::parse_cache::ParseCache,
    /// Settings as last read, with their parsed forms (parsed again only
    /// after a change); max_stack_depth is the one the thread takes.
    thread_settings: std::cell::RefCell<ThreadSettings>,
    /// The configuration files' settings this session started from, and the
    /// server's reload count when it took them.
    base: Arc<Settings>,
    seen_reloads: u64,
    /// What RESET returns to: `base` with the startup packet's settings
    /// (PGDATESTYLE's DateStyle stays after RESET, as in PostgreSQL).
    reset: Arc<Settings>,
    /// Named prepared statements (Parse and PREPARE share them).
    statements: crate::session_api::StatementRegistry,
    /// Cursors opened by DECLARE.
    cursors: sql_cursors::SqlCursors,
    /// The open transaction's row changes by table, for the tables'
    /// statistics at its end.
    table_counts: exec::table_stats::PendingTableCounts,
    /// An autovacuum worker's session (`crate::autovacuum`).
    autovacuum: bool,
    /// Deferred constraint events and modes of the open transaction, and
    /// the command ids referential actions take (`session/deferred.rs`).
    ri: deferred::ConstraintState,
    /// The open transaction's LISTEN/UNLISTEN/NOTIFY (`crate::notify`).
    notify: crate::notify::PendingNotify,
    /// This session's LISTEN registration, from its first committed LISTEN.
    listener: Option<Arc<crate::notify::Listener>>,
    /// Whether this session made its temporary schema (`session/temp.rs`):
    /// one it did not make is a crashed server's leftover.
    temp_schema_taken: bool,
    /// Temporary tables with ON COMMIT DELETE ROWS or DROP (`session/temp.rs`).
    on_commit: Vec<(u32, sql::plan::OnCommit)>,
}

fn column_desc(c: &OutputColumn) -> ColumnDesc {
    let ty = c.ty.id;
    ColumnDesc {
        name: c.name.clone(),
        table_oid: c.table_oid,
        column_id: c.column_id,
        type_oid: ty.oid(),
        type_len: ty.typlen(),
        type_mod: c.ty.typmod,
    }
}

fn text_column(name: &str) -> ColumnDesc {
    ColumnDesc {
        name: name.into(),
        table_oid: 0,
        column_id: 0,
        type_oid: 25,
        type_len: -1,
        type_mod: -1,
    }
}

impl Session {
    /// Takes what a configuration reload (SIGHUP, pg_reload_conf()) changed,
    /// between statements as a PostgreSQL backend does.
    fn absorb_reload(&mut self) {
        if let Some((count, new)) = self.ctx.reloaded_settings(self.seen_reloads) {
            self.settings.absorb_reload(&self.base, &new);
            Arc::make_mut(&mut self.reset).absorb_reload(&self.base, &new);
            self.base = new;
            self.seen_reloads = count;
        }
    }

    fn search_path(&self) -> Vec<String> {
        let raw = self
            .settings
            .get("search_path")
            .unwrap_or("public")
            .to_string();
        let raw = raw
            .split(',')
            .map(|s| s.trim().trim_matches('"').to_string())
            .map(|s| if s == "$user" { self.user.clone() } else { s })
            .filter(|s| !s.is_empty())
            .collect::<Vec<_>>();
        self.with_temp_schema(raw)
    }

    /// PostgreSQL's rule: the session's temporary schema is searched first
    /// for relations, or where the path names `pg_temp`.
    fn with_temp_schema(&self, mut path: Vec<String>) -> Vec<String> {
        if self.temp_namespace().is_some() {
            let name = self.temp_schema_name();
            match path.iter().position(|s| s == "pg_temp") {
                Some(i) => path[i] = name,
                None => path.insert(0, name),
            }
        }
        path
    }

    /// Makes this thread's analysis obey the session's max_stack_depth (a
    /// limit on the stack of the thread running the session's statements).
    fn apply_stack_depth(&self) {
        let mut cache = self.thread_settings.borrow_mut();
        // Validated when set; parsed once per change, not per statement.
        let depth = self.settings.get("max_stack_depth").unwrap_or("2MB");
        if cache.stack_setting != depth {
            cache.stack_kb = gucs::max_stack_depth_kb(depth).unwrap_or(2048);
            cache.stack_setting = depth.to_string();
        }
        common::stack_depth::set_max_stack_depth_kb(cache.stack_kb);
    }

    /// The settings values are converted with (TimeZone), handed explicitly
    /// to binding, execution and the protocol's output.
    /// Tells `sink` how reg* result values print (with the catalog as of
    /// now), for statements whose result has such columns.
    fn send_reg_names(&self, stmt: &BoundStatement, sink: &mut dyn ResultSink) {
        let has_reg = stmt
            .columns()
            .is_some_and(|cols| cols.iter().any(|c| c.ty.id.is_reg()));
        if has_reg {
            sink.output_names(Arc::new(crate::reg_output::CatalogNames {
                catalog: self.ctx.catalog.snapshot(),
                db_oid: self.db_oid,
                search_path: self.search_path(),
            }));
        }
    }

    /// The session's conversion settings, typed once per change of the settings.
    fn io(&self) -> IoSettings {
        let mut cache = self.thread_settings.borrow_mut();
        let generation = self.settings.generation();
        match cache.io {
            Some((g, io)) if g == generation => io,
            _ => {
                let io = gucs::io_settings(&self.settings);
                cache.io = Some((generation, io));
                io
            }
        }
    }

    /// client_encoding, typed once per change of the settings (validated
    /// when set, so UTF8 only stands in for a value that cannot be there).
    fn client_encoding(&self) -> crate::protocol::ClientEncoding {
        let mut cache = self.thread_settings.borrow_mut();
        let generation = self.settings.generation();
        match cache.encoding {
            Some((g, e)) if g == generation => e,
            _ => {
                let e = self
                    .settings
                    .get("client_encoding")
                    .ok()
                    .and_then(|v| gucs::client_encoding(v).ok())
                    .unwrap_or_default();
                cache.encoding = Some((generation, e));
                e
            }
        }
    }

    fn bind(
        &self,
        parsed: &ParsedStatement,
        param_types: &mut Vec<Option<TypeId>>,
    ) -> PgResult<BoundStatement> {
        let started = std::time::Instant::now();
        let bound = self.bind_only(parsed, param_types)?;
        Ok(self.plan_bound(bound, started))
    }

    /// Names and types resolved, the physical plan not yet chosen.
    fn bind_only(
        &self,
        parsed: &ParsedStatement,
        param_types: &mut Vec<Option<TypeId>>,
    ) -> PgResult<BoundStatement> {
        self.apply_stack_depth();
        let catalog = self.catalog_version();
        let path = self.search_path();
        let mut bctx = BindContext {
            catalog: &catalog,
            db_oid: self.db_oid,
            db_name: &self.db_name,
            user: &self.user,
            session_user: &self.session_user,
            search_path: path,
            temp_namespace: self.temp_namespace().map(|n| n.oid),
            param_types: std::mem::take(param_types),
            server_version: gucs::SERVER_VERSION,
            // Constants are folded while binding: they read the session's zone.
            io: self.io(),
            system_views: Some(&exec::system_views::Registry),
            param_names: Vec::new(),
        };
        let r = sql::bind_statement(&mut bctx, parsed);
        *param_types = bctx.param_types;
        r
    }

    /// Plans a bound statement; `started` is when its binding began
    /// (EXPLAIN's Planning Time covers both).
    fn plan_bound(&self, bound: BoundStatement, started: std::time::Instant) -> BoundStatement {
        let settings = self.planner_settings();
        let catalog = self.catalog_version();
        let sizes = crate::explain::PoolSizes::new(self.ctx.pool, &catalog);
        let cx = sql::plan::PlannerContext {
            settings: &settings,
            sizes: &sizes,
        };
        let mut planned = sql::plan::plan_statement(bound, &cx);
        if let BoundStatement::Explain { planning_time, .. } = &mut planned {
            *planning_time = started.elapsed();
        }
        planned
    }

    /// The planner's settings, parsed again only after a setting changed.
    fn planner_settings(&self) -> std::rc::Rc<sql::plan::PlannerSettings> {
        let mut cache = self.thread_settings.borrow_mut();
        let generation = self.settings.generation();
        match &cache.planner {
            Some((g, p)) if *g == generation => p.clone(),
            _ => {
                let p = std::rc::Rc::new(gucs::planner_settings(&self.settings));
                cache.planner = Some((generation, p.clone()));
                p
            }
        }
    }

    /// synchronous_commit, parsed again only after a setting changed.
    fn sync_commit(&self) -> txn::SyncCommit {
        let mut cache = self.thread_settings.borrow_mut();
        let generation = self.settings.generation();
        match cache.sync_commit {
            Some((g, s)) if g == generation => s,
            _ => {
                let s = self
                    .settings
                    .get("synchronous_commit")
                    .ok()
                    .and_then(txn::SyncCommit::parse)
                    .unwrap_or(txn::SyncCommit::On);
                cache.sync_commit = Some((generation, s));
                s
            }
        }
    }

    /// The executor's settings, parsed again only after a setting changed.
    fn exec_settings(&self) -> exec::ExecSettings {
        let mut cache = self.thread_settings.borrow_mut();
        let generation = self.settings.generation();
        match cache.exec {
            Some((g, e)) if g == generation => e,
            _ => {
                let e = gucs::exec_settings(&self.settings);
                cache.exec = Some((generation, e));
                e
            }
        }
    }

    fn check_failed(&self, stmt: &BoundStatement) -> PgResult<()> {
        let ends_failure = matches!(
            stmt,
            BoundStatement::Transaction(
                TransactionOp::Commit { .. }
                    | TransactionOp::Rollback { .. }
                    | TransactionOp::RollbackTo(_)
            )
        );
        if self.in_failed_block() && !ends_failure {
            return Err(PgError::new(
                SqlState::IN_FAILED_SQL_TRANSACTION,
                "current transaction is aborted, commands ignored until end of transaction block",
            ));
        }
        Ok(())
    }

    fn in_failed_block(&self) -> bool {
        matches!(&self.txn, TxnState::Block(t) if t.failed)
    }

    /// Whether a command that cannot run inside a transaction block
    /// (CREATE DATABASE, VACUUM) must fail: in an explicit block, in a
    /// multi-statement Query, in an extended-protocol pipeline.
    fn block_forbids_utility(&self) -> bool {
        match &self.txn {
            TxnState::Idle => false,
            TxnState::Block(t) => !(t.implicit && t.lone_execute),
        }
    }

    fn in_implicit_block(&self) -> bool {
        matches!(&self.txn, TxnState::Block(t) if t.implicit)
    }

    /// Marks the open block failed (after an error). Outside savepoints the
    /// transaction rolls back now, as PostgreSQL's AbortTransaction at the
    /// error: its writes and catalog changes are undone and its locks
    /// released, so whoever waits for them goes on (a deadlock's survivor
    /// among them); the block then only waits for its ROLLBACK. Inside a
    /// savepoint the writes are rolled back at ROLLBACK TO SAVEPOINT or at
    /// the block's end, and the locks are kept until then.
    fn fail(&mut self) {
        let TxnState::Block(t) = &mut self.txn else {
            return;
        };
        t.failed = true;
        if !t.savepoints.is_empty() {
            return;
        }
        self.end_settings(false);
        let TxnState::Block(t) = &mut self.txn else {
            unreachable!("matched above");
        };
        let subxids = std::mem::take(&mut t.subxids);
        if let Some(x) = t.top.take() {
            // A rollback cannot fail: only a commit's log flush can.
            let _ = self.end_transaction(x, &subxids, false);
        }
        self.ssi_release(false);
        self.release_transaction_locks();
    }

    fn end_block(&mut self, commit: bool) {
        self.ri.end_transaction();
        if let TxnState::Block(t) = std::mem::replace(&mut self.txn, TxnState::Idle) {
            let mut committed = commit && !t.failed;
            if let Some(x) = t.top {
                let subxids = t.all_subxids();
                committed = self.end_transaction(x, &subxids, committed).is_ok() && committed;
            }
            self.ssi_release(committed);
            self.end_notify(committed);
            self.close_cursors_at_transaction_end(committed);
            if let Err(e) = self.flush_sequence_records(committed) {
                crate::log(&format!("could not flush a sequence's log: {}", e.message));
            }
            self.count_xact(committed);
            self.end_settings(committed);
            if !t.implicit {
                self.sync_transaction_settings();
            }
        }
        self.proc.clear_xmin();
        self.release_transaction_locks();
    }

    /// Commits (logging the commit, durable unless synchronous_commit is
    /// off) or rolls back `xid` with its sub-transactions `subxids`.
    /// The transaction's catalog changes are published or discarded after.
    fn end_transaction(&mut self, xid: Xid, subxids: &[Xid], commit: bool) -> PgResult<()> {
        let result = if commit {
            let sync = self.sync_commit();
            self.ctx
                .tm
                .commit_tree(xid, subxids, sync)
                .map_err(PgError::from)
        } else {
            self.ctx.tm.abort_tree(xid, subxids);
            Ok(())
        };
        self.proc.set_xid(0);
        if let Some(changes) = self.catalog_changes.take() {
            debug_assert_eq!(changes.xid(), xid);
            if let Err(e) = self.ctx.catalog.end(changes, commit && result.is_ok()) {
                crate::log(&format!(
                    "could not remove a relation file after the transaction ended: {}",
                    e.message
                ));
            }
        }
        result
    }

    /// The catalog this session's statements see: its transaction's own
    /// version once it has changed the catalog, else the committed one.
    fn catalog_version(&self) -> Arc<catalog::CatalogData> {
        match &self.catalog_changes {
            Some(c) => c.catalog().clone(),
            None => self.ctx.catalog.snapshot(),
        }
    }

    /// Counts a transaction's end, and applies its row changes to the
    /// tables' statistics.
    /// At a transaction's end: a commit flushes the sequence records its
    /// nextval() calls logged (unless synchronous_commit is off).
    fn flush_sequence_records(&mut self, committed: bool) -> PgResult<()> {
        let lsn = std::mem::take(&mut self.sequences.flush_at_commit);
        if lsn == 0 || !committed || self.sync_commit() == txn::SyncCommit::Off {
            return Ok(());
        }
        self.ctx.tm.wal().flush(lsn).map_err(PgError::from)
    }

    fn count_xact(&mut self, committed: bool) {
        let c = if committed {
            &self.db_counters.xact_commit
        } else {
            &self.db_counters.xact_rollback
        };
        c.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        self.table_counts
            .apply(&self.ctx.table_stats, self.db_oid, committed);
    }

    /// Publishes what the session does now (pg_stat_activity).
    fn set_activity(&self, state: &'static str, query: Option<&str>) {
        let mut f = self.status.fields.lock();
        f.state = state;
        if let Some(q) = query {
            f.query = q.to_string();
            f.query_start = Some(types::datetime::now_timestamp());
        }
        if let Ok(app) = self.settings.get("application_name") {
            if f.application_name != app {
                f.application_name = app.to_string();
            }
        }
    }

    /// Adds this thread's buffer hits and reads to the database's counters.
    fn flush_io_counts(&self) {
        let (hits, reads) = storage::buffer::take_io_counts();
        let c = &self.db_counters;
        c.blks_hit
            .fetch_add(hits, std::sync::atomic::Ordering::Relaxed);
        c.blks_read
            .fetch_add(reads, std::sync::atomic::Ordering::Relaxed);
    }

    fn idle_state(&self) -> &'static str {
        match &self.txn {
            TxnState::Idle => "idle",
            TxnState::Block(t) if t.failed => "idle in transaction (aborted)",
            TxnState::Block(_) => "idle in transaction",
        }
    }

    fn run(
        &mut self,
        stmt: &BoundStatement,
        params: &[Value],
        sink: &mut dyn ResultSink,
    ) -> PgResult<()> {
        self.apply_stack_depth();
        sink.output_settings(&self.io());
        sink.output_encoding(self.client_encoding());
        self.send_reg_names(stmt, sink);
        self.check_failed(stmt)?;
        match stmt {
            BoundStatement::Transaction(op) => {
                let r = self.run_transaction(op, sink);
                return r.and(self.run_on_commit_actions());
            }
            BoundStatement::Set {
                name,
                value,
                local,
                reset,
            } => return self.run_set(name, value.as_deref(), *local, *reset, sink),
            BoundStatement::Role(sql::role::RoleStatement::SetRole { role, local }) => {
                return self.set_role(role.as_deref(), *local, sink);
            }
            BoundStatement::Role(sql::role::RoleStatement::SetSessionAuthorization {
                role,
                local,
            }) => {
                return self.set_session_authorization(role.as_deref(), *local, sink);
            }
            BoundStatement::Show { name } => {
                let name = match name.as_str() {
                    "transactionisolationlevel" => "transaction_isolation",
                    n => n,
                };
                let canonical = gucs::lookup(name).map(|d| d.name).unwrap_or(name);
                let v = self.settings.get(name)?.to_string();
                sink.columns(&[text_column(canonical)])?;
                sink.row(&[Value::Text(v)])?;
                return sink.complete("SHOW");
            }
            BoundStatement::ShowAll => {
                sink.columns(&[
                    text_column("name"),
                    text_column("setting"),
                    text_column("description"),
                ])?;
                for d in gucs::GUCS {
                    let v = self.settings.get(d.name)?.to_string();
                    sink.row(&[
                        Value::Text(d.name.into()),
                        Value::Text(v),
                        Value::Text(d.description.into()),
                    ])?;
                }
                return sink.complete("SHOW");
            }
            BoundStatement::NoOp(tag) if tag == "DISCARD ALL" => {
                if self.block_forbids_utility() {
                    return Err(PgError::new(
                        SqlState::ACTIVE_SQL_TRANSACTION,
                        "DISCARD ALL cannot run inside a transaction block",
                    ));
                }
                self.unlisten_all_now();
                self.drop_temp_schema()?;
                return sink.complete(tag);
            }
            BoundStatement::NoOp(tag) if tag == "DISCARD TEMP" => {
                self.drop_temp_schema()?;
                return sink.complete(tag);
            }
            BoundStatement::NoOp(tag) => return sink.complete(tag),
            BoundStatement::SetConstraints {
                constraints,
                deferred,
            } => return self.set_constraints(constraints, *deferred, sink),
            BoundStatement::AlterSystem { name, value } => {
                if self.block_forbids_utility() {
                    return Err(PgError::new(
                        SqlState::ACTIVE_SQL_TRANSACTION,
                        "ALTER SYSTEM cannot run inside a transaction block",
                    ));
                }
                gucs::alter_system(&self.ctx.data_dir, name.as_deref(), value.as_deref())?;
                return sink.complete("ALTER SYSTEM");
            }
            BoundStatement::Vacuum { .. } if self.block_forbids_utility() => {
                return Err(PgError::new(
                    SqlState::ACTIVE_SQL_TRANSACTION,
                    "VACUUM cannot run inside a transaction block",
                ));
            }
            BoundStatement::Listen(_)
            | BoundStatement::Unlisten(_)
            | BoundStatement::Notify { .. } => return self.run_notify_statement(stmt, sink),
            BoundStatement::Checkpoint => {
                self.ctx
                    .checkpoint(crate::checkpointer::CheckpointKind::Requested)?;
                return sink.complete("CHECKPOINT");
            }
            BoundStatement::DeclareCursor { .. }
            | BoundStatement::Fetch(_)
            | BoundStatement::CloseCursor(_) => {
                self.lock_statement(stmt)?;
                return self.run_cursor_command(stmt, params, sink);
            }
            BoundStatement::Lock {
                relations,
                mode,
                nowait,
            } => {
                self.run_lock_table(relations, *mode, *nowait)?;
                return sink.complete("LOCK TABLE");
            }
            BoundStatement::Prepare { .. }
            | BoundStatement::ExecutePrepared { .. }
            | BoundStatement::Deallocate(_) => {
                return self.run_prepared_command(stmt, params, sink);
            }
            BoundStatement::Explain {
                statement,
                options,
                settings,
                planning_time,
            } if matches!(**statement, BoundStatement::ExecutePrepared { .. }) => {
                let BoundStatement::ExecutePrepared { name, args } = &**statement else {
                    unreachable!("matched above")
                };
                return self.explain_prepared(
                    name,
                    args,
                    (options, settings, *planning_time),
                    params,
                    sink,
                );
            }
            _ => {}
        }
        let implicit = matches!(self.txn, TxnState::Idle);
        if let Err(e) = self.lock_statement(stmt) {
            self.release_locks_if_idle();
            return Err(e);
        }
        // Catalog changes are writes too: their rows carry the xid.
        let catalog = self.catalog_version();
        let st = self.statement_txn(transaction::write_command_in(stmt, &catalog))?;
        let top = st.snapshot.own.top;
        self.ri.next_cid = st.cid + 1;
        let generation = self.settings.generation();
        let mut result = self.execute_dml_or_query(stmt, params, sink, &st);
        // set_config('role', …) changes who the session is.
        if self.settings.generation() != generation {
            self.sync_identity();
        }
        if result.is_ok() {
            self.note_on_commit(stmt);
        }
        for n in std::mem::take(&mut self.pending_notices) {
            if let Err(e) = sink.notice(&n) {
                result = result.and(Err(e));
            }
        }
        if let TxnState::Block(t) = &mut self.txn {
            // Past the command ids its referential actions took.
            t.cid = self.ri.next_cid.max(t.cid + 1);
        }
        if implicit {
            if top != 0 && result.is_ok() {
                result = self.fire_deferred_of_statement(top);
            }
            if result.is_ok() {
                result = self.ssi_pre_commit();
            }
            if top != 0 {
                if let Err(e) = self.end_transaction(top, &[], result.is_ok()) {
                    result = Err(e);
                }
            }
            self.ssi_release(result.is_ok());
            self.end_notify(result.is_ok());
            self.ri.end_transaction();
            self.proc.clear_xmin();
            if let Err(e) = self.flush_sequence_records(result.is_ok()) {
                result = Err(e);
            }
            self.count_xact(result.is_ok());
            self.end_settings(result.is_ok());
            self.release_transaction_locks();
            let actions = self.run_on_commit_actions();
            result = result.and(actions);
        }
        result
    }

    /// The plan for one execution of a prepared statement: its cached
    /// binding for the current catalog version (bound again after DDL or
    /// ANALYZE), planned as `plan_cache_mode` chooses (`plan_cache.rs`).
    fn current_plan(
        &mut self,
        p: &Prepared,
        parsed: &ParsedStatement,
        params: &[Value],
    ) -> PgResult<Arc<BoundStatement>> {
        let current = self.catalog_version();
        let mut plans = p.plans.lock();
        if !plans.as_ref().is_some_and(|c| c.is_current(&current)) {
            let mut types = p.param_types.clone();
            let bound = self.bind_only(parsed, &mut types)?;
            *plans = Some(PlanCache::rebind(plans.as_ref(), current, bound)?);
        }
        let settings = self.planner_settings();
        let cache = plans.as_mut().expect("filled above");
        Ok(cache.plan_for(params, &settings, &SessionPlanning(self)))
    }

    /// A query's xid, command id and snapshot in the open block (queries
    /// assign an xid only when they lock rows); takes the block's next
    /// command id, so later statements' changes stay invisible to it.
    fn query_txn(&mut self, query: &BoundStatement) -> PgResult<(Xid, u32, txn::Snapshot)> {
        let st = self.statement_txn(transaction::write_command(query))?;
        if let TxnState::Block(t) = &mut self.txn {
            t.cid += 1;
        }
        Ok((st.xid, st.cid, st.snapshot))
    }

    /// Starts a query whose rows will be fetched in batches: sends its row
    /// description, takes its snapshot and builds its operators.
    fn open_cursor(
        &mut self,
        bound: Arc<BoundStatement>,
        params: &[Value],
        sql: &str,
        sink: &mut dyn ResultSink,
    ) -> PgResult<QueryCursor> {
        self.apply_stack_depth();
        sink.output_settings(&self.io());
        sink.output_encoding(self.client_encoding());
        self.send_reg_names(&bound, sink);
        self.check_failed(&bound)?;
        let BoundStatement::Query { columns, .. } = &*bound else {
            unreachable!("only queries run as cursors");
        };
        sink.columns(&columns.iter().map(column_desc).collect::<Vec<_>>())?;
        // Queries assign no xid unless they lock rows; they run in the
        // open block's command.
        let (xid, cid, snapshot) = self.query_txn(&bound)?;
        let catalog = self.catalog_version();
        let params = params.to_vec();
        let plan = self.with_env(&catalog, &snapshot, xid, cid, &params, |env| {
            RunningPlan::try_new(bound, |b| match &**b {
                BoundStatement::Query { plan, .. } => exec::build(plan, env, None),
                _ => unreachable!("checked above"),
            })
        })?;
        Ok(QueryCursor {
            plan,
            catalog,
            snapshot,
            xid,
            cid,
            params,
            sql: sql.to_string(),
        })
    }

    /// Sends up to `max_rows` more rows of `cursor`; CommandComplete when it
    /// runs out. Returns whether rows may remain. Stops at the limit without
    /// looking ahead, as PostgreSQL does (a later batch may be empty).
    fn fetch_rows(
        &mut self,
        cursor: &mut QueryCursor,
        sink: &mut dyn ResultSink,
        max_rows: usize,
    ) -> PgResult<bool> {
        self.apply_stack_depth();
        sink.output_settings(&self.io());
        sink.output_encoding(self.client_encoding());
        let QueryCursor {
            plan,
            catalog,
            snapshot,
            xid,
            cid,
            params,
            ..
        } = cursor;
        self.with_env(catalog, snapshot, *xid, *cid, params, |env| {
            let mut sent = 0usize;
            while max_rows == 0 || sent < max_rows {
                match plan.with_dependent_mut(|_, op| op.next(env))? {
                    Some(row) => {
                        sink.row(&row)?;
                        sent += 1;
                        if (sent as u64).is_multiple_of(ROWS_PER_INTERRUPT_CHECK) {
                            env.check_cancel()?;
                        }
                    }
                    None => {
                        sink.complete(&format!("SELECT {sent}"))?;
                        return Ok(false);
                    }
                }
            }
            Ok(true)
        })
    }

    fn execute_dml_or_query(
        &mut self,
        stmt: &BoundStatement,
        params: &[Value],
        sink: &mut dyn ResultSink,
        st: &transaction::StatementTxn,
    ) -> PgResult<()> {
        let ctx = self.ctx.clone();
        let (snapshot, xid, cid) = (&st.snapshot, st.xid, st.cid);
        let catalog = self.catalog_version();
        let db_oid = self.db_oid;
        let in_block = self.block_forbids_utility();
        let mut changes = self.catalog_changes.take();
        let r = self.with_env(&catalog, snapshot, xid, cid, params, |env| {
            env.isolation = st.isolation;
            Self::execute_in(stmt, sink, &ctx, db_oid, &mut changes, in_block, env)
        });
        self.catalog_changes = changes;
        r
    }

    /// Lends `f` an execution environment over the session's settings, with
    /// statement_timeout counted from now.
    fn with_env<R>(
        &mut self,
        catalog: &Arc<catalog::CatalogData>,
        snapshot: &txn::Snapshot,
        xid: Xid,
        cid: u32,
        params: &[Value],
        f: impl FnOnce(&mut ExecEnv) -> R,
    ) -> R {
        let ctx = self.ctx.clone();
        let exec_settings = self.exec_settings();
        let io = self.io();
        let deadline = self.statement_deadline();
        let lock_settings = self.lock_settings();
        let base = self.reset.clone();
        let files = self.base.clone();
        let snapshot_isolation = self.current_isolation();
        let mut hooks = Hooks {
            ctx: &ctx,
            cursors: &self.cursors,
            statements: &self.statements,
            settings: &mut self.settings,
            defaults: &base,
            files: &files,
            changed: &mut self.changed,
            settings_undo: &mut self.settings_undo,
            pid: self.pid,
            superuser: self.superuser,
            sequences: &mut self.sequences,
            user: &self.user,
            session_user: &self.session_user,
            db_oid: self.db_oid,
            table_counts: &mut self.table_counts,
            autovacuum: self.autovacuum,
            locks: &mut self.locks,
            lock_settings,
            interrupts: &self.interrupts,
            deadline,
            notices: &mut self.pending_notices,
            ri: &mut self.ri,
            notify: &mut self.notify,
        };
        let mut env = ExecEnv {
            pool: ctx.pool,
            tm: ctx.tm,
            catalog,
            db_oid: self.db_oid,
            db_name: &self.db_name,
            snapshot,
            xid,
            cid,
            isolation: snapshot_isolation,
            params,
            interrupts: &self.interrupts,
            hooks: &mut hooks,
            outer: Vec::new(),
            deadline,
            checks: Default::default(),
            instrument: None,
            settings: exec_settings,
            io,
            temp: &self.temp,
            ctes: Default::default(),
            subplans: Default::default(),
            parallel_scan: None,
            functions: Default::default(),
            fire_triggers: true,
        };
        f(&mut env)
    }

    /// Runs a DML statement, query or DDL to completion.
    fn execute_in(
        stmt: &BoundStatement,
        sink: &mut dyn ResultSink,
        ctx: &SharedContext,
        db_oid: u32,
        changes: &mut Option<catalog::CatalogTxn>,
        in_block: bool,
        env: &mut ExecEnv,
    ) -> PgResult<()> {
        let mut cx = exec::commands::CommandContext {
            catalog: &ctx.catalog,
            changes,
            db_oid,
            in_block,
        };
        match stmt {
            BoundStatement::Explain {
                statement,
                options,
                settings,
                planning_time,
            } => crate::explain::run_explain(
                statement,
                options,
                settings,
                *planning_time,
                ctx.pool,
                env,
                sink,
            ),
            BoundStatement::Query { plan, columns } => {
                sink.columns(&columns.iter().map(column_desc).collect::<Vec<_>>())?;
                let mut op = exec::build(plan, env, None)?;
                let mut n = 0u64;
                while let Some(row) = op.next(env)? {
                    sink.row(&row)?;
                    n += 1;
                    if n.is_multiple_of(ROWS_PER_INTERRUPT_CHECK) {
                        env.check_cancel()?;
                    }
                }
                sink.complete(&format!("SELECT {n}"))
            }
            BoundStatement::Do { plan } => {
                let mut op = exec::build(plan, env, None)?;
                while op.next(env)?.is_some() {}
                sink.complete("DO")
            }
            BoundStatement::WithModifying { ctes, statement } => {
                env.ctes.register_modifying(ctes);
                // The main statement's completion waits for the WITH
                // queries no reference ran, and its deferred checks for
                // theirs (`in_block` keeps them queued).
                let mut held = HeldCompletion { sink, tag: None };
                Self::execute_in(statement, &mut held, ctx, db_oid, changes, true, env)?;
                exec::cte::finish_modifying(ctes, env)?;
                if !in_block {
                    exec::ri::fire_statement_deferred(env)?;
                }
                match held.tag {
                    Some(tag) => sink.complete(&tag),
                    None => Ok(()),
                }
            }
            BoundStatement::Insert { returning, .. }
            | BoundStatement::Update { returning, .. }
            | BoundStatement::Delete { returning, .. } => {
                if let Some((_, cols)) = returning {
                    sink.columns(&cols.iter().map(column_desc).collect::<Vec<_>>())?;
                }
                let (n, rows) = exec::dml::run_statement(stmt, env)?;
                for r in rows {
                    sink.row(&r)?;
                }
                if !in_block {
                    exec::ri::fire_statement_deferred(env)?;
                }
                sink.complete(&match stmt {
                    BoundStatement::Insert { .. } => format!("INSERT 0 {n}"),
                    BoundStatement::Update { .. } => format!("UPDATE {n}"),
                    _ => format!("DELETE {n}"),
                })
            }
            BoundStatement::CopyFrom(target) => {
                crate::copy_session::copy_from(target, sink, env, &ctx.data_dir, in_block)
            }
            BoundStatement::CopyTo(source) => {
                crate::copy_session::copy_to(source, sink, env, &ctx.data_dir)
            }
            BoundStatement::Analyze {
                targets,
                verbose,
                vacuum,
            } => {
                exec::analyze::analyze(targets, *verbose, &mut cx, env, &mut |n| sink.notice(&n))?;
                sink.complete(if *vacuum { "VACUUM" } else { "ANALYZE" })
            }
            BoundStatement::Vacuum {
                targets,
                verbose,
                analyze,
                truncate,
                scan_all,
            } => {
                let opts = exec::vacuum::VacuumOptions {
                    verbose: *verbose,
                    analyze: *analyze,
                    truncate: *truncate,
                    scan_all: *scan_all,
                };
                exec::vacuum::vacuum(targets, opts, &mut cx, env, &mut |n| sink.notice(&n))?;
                sink.complete("VACUUM")
            }
            _ => match exec::commands::run(stmt, &mut cx, env, &mut |n| sink.notice(n))? {
                Some(tag) => sink.complete(&tag),
                None => Err(PgError::internal("statement kind handled elsewhere")),
            },
        }
    }

    fn run_parsed(
        &mut self,
        full: &str,
        st: &StatementText<'_>,
        sink: &mut dyn ResultSink,
    ) -> PgResult<()> {
        let parsed = self.parse_cache.parse(full, st)?;
        let mut params = Vec::new();
        let bound = self.bind_locked(&parsed, &mut params);
        sql::parse::drop_parsed(parsed);
        let bound = bound?;
        if !params.is_empty() {
            return Err(PgError::new(
                SqlState::UNDEFINED_PARAMETER,
                "there is no parameter $1",
            ));
        }
        self.run(&bound, &[], sink)
    }
}

impl SessionHandler for Session {
    fn startup_parameters(&self) -> Vec<(String, String)> {
        gucs::GUCS
            .iter()
            .filter(|d| d.reported)
            .map(|d| {
                (
                    d.name.to_string(),
                    self.settings.get(d.name).unwrap_or("").to_string(),
                )
            })
            .collect()
    }

    fn take_changed_parameters(&mut self) -> Vec<(String, String)> {
        std::mem::take(&mut self.changed)
    }

    fn transaction_status(&self) -> u8 {
        match &self.txn {
            TxnState::Idle => b'I',
            TxnState::Block(t) if t.implicit => b'I',
            TxnState::Block(t) if t.failed => b'E',
            TxnState::Block(_) => b'T',
        }
    }

    fn simple_query(&mut self, sql: &str, sink: &mut dyn ResultSink) -> PgResult<bool> {
        self.absorb_reload();
        // A Query message ends an implicit block left open without a Sync.
        if self.in_implicit_block() {
            self.end_implicit_block(true)?;
        }
        let stmts = split_statements(sql);
        if stmts.is_empty() {
            return Ok(false);
        }
        // Parsing already obeys max_stack_depth.
        self.apply_stack_depth();
        self.set_activity("active", Some(sql));
        // Several statements in one Query run in one implicit transaction, as
        // PostgreSQL's: an error rolls back the whole string (unless a COMMIT
        // in it ended the block first), and BEGIN in it makes the block explicit.
        // A COMMIT or ROLLBACK in the string ends the block; the statements
        // after it run in a new implicit one.
        let mut result = Ok(true);
        self.cursors.in_multi_statement_query = stmts.len() > 1;
        for st in &stmts {
            if stmts.len() > 1 && matches!(self.txn, TxnState::Idle) {
                self.txn = TxnState::Block(transaction::Transaction::new(&self.settings, true));
            }
            if let Err(e) = self.run_parsed(sql, st, sink) {
                self.fail();
                result = Err(e);
                break;
            }
        }
        self.cursors.in_multi_statement_query = false;
        if self.in_implicit_block() {
            if let Err(e) = self.end_implicit_block(result.is_ok()) {
                result = Err(e);
            }
        }
        self.release_locks_if_idle();
        self.flush_io_counts();
        self.set_activity(self.idle_state(), None);
        result
    }

    fn prepare(&mut self, sql: &str, param_types: &[u32]) -> PgResult<PreparedStatement> {
        self.absorb_reload();
        self.apply_stack_depth();
        let stmts = split_statements(sql);
        if stmts.is_empty() || is_blank(sql) {
            return Ok(PreparedStatement {
                sql: String::new(),
                param_types: Vec::new(),
                columns: None,
                inner: Arc::new(Prepared {
                    parsed: None,
                    param_types: Vec::new(),
                    plans: parking_lot::Mutex::new(None),
                }),
            });
        }
        if stmts.len() > 1 {
            return Err(PgError::syntax(
                "cannot insert multiple commands into a prepared statement",
            ));
        }
        let parsed = self.parse_cache.parse(sql, &stmts[0])?;
        if let Err(e) = self.prepare_temp_creation(&parsed) {
            sql::parse::drop_parsed(parsed);
            return Err(e);
        }
        let types: PgResult<Vec<Option<TypeId>>> = param_types
            .iter()
            .map(|&o| {
                if o == 0 {
                    Ok(None)
                } else {
                    TypeId::from_oid(o).map(Some).ok_or_else(|| {
                        PgError::new(
                            SqlState::UNDEFINED_OBJECT,
                            format!("type with OID {o} does not exist"),
                        )
                    })
                }
            })
            .collect::<PgResult<_>>();
        let bound = types.and_then(|mut types| {
            let b = self.bind_only(&parsed, &mut types)?;
            Ok((b, types))
        });
        let (bound, types) = match bound {
            Ok(b) => b,
            Err(e) => {
                sql::parse::drop_parsed(parsed);
                return Err(e);
            }
        };
        Ok(self.make_prepared(sql, parsed, bound, &types))
    }

    fn execute(
        &mut self,
        stmt: &PreparedStatement,
        params: &[Value],
        sink: &mut dyn ResultSink,
    ) -> PgResult<()> {
        self.execute_portal(stmt, params, sink, 0).map(|_| ())
    }

    fn execute_portal(
        &mut self,
        stmt: &PreparedStatement,
        params: &[Value],
        sink: &mut dyn ResultSink,
        max_rows: usize,
    ) -> PgResult<Option<Box<dyn std::any::Any>>> {
        let Some(p) = stmt.inner.downcast_ref::<Prepared>() else {
            return Err(PgError::internal("foreign prepared statement"));
        };
        let Some(parsed) = &p.parsed else {
            return Ok(None);
        };
        self.absorb_reload();
        match &mut self.txn {
            TxnState::Idle => {
                let mut t = transaction::Transaction::new(&self.settings, true);
                t.lone_execute = true;
                self.txn = TxnState::Block(t);
            }
            // A second Execute before Sync: a pipeline, one transaction.
            TxnState::Block(t) if t.implicit => t.lone_execute = false,
            TxnState::Block(_) => {}
        }
        let bound = loop {
            let version = self.catalog_version();
            let bound = self.current_plan(p, parsed, params)?;
            if self.in_failed_block() {
                break bound;
            }
            self.lock_statement(&bound)?;
            // Bound before a catalog change that committed while we waited
            // for the locks: bind again.
            if Arc::ptr_eq(&version, &self.catalog_version()) {
                break bound;
            }
        };
        self.set_activity("active", Some(&stmt.sql));
        let r = if max_rows > 0 && matches!(*bound, BoundStatement::Query { .. }) {
            self.open_cursor(bound, params, &stmt.sql, sink)
                .and_then(|mut cursor| {
                    let more = self.fetch_rows(&mut cursor, sink, max_rows)?;
                    Ok(more.then(|| Box::new(cursor) as Box<dyn std::any::Any>))
                })
        } else {
            self.run(&bound, params, sink).map(|()| None)
        };
        if r.is_err() {
            self.fail();
        }
        self.flush_io_counts();
        self.set_activity(self.idle_state(), None);
        r
    }

    fn fetch(
        &mut self,
        cursor: &mut dyn std::any::Any,
        sink: &mut dyn ResultSink,
        max_rows: usize,
    ) -> PgResult<bool> {
        let Some(cursor) = cursor.downcast_mut::<QueryCursor>() else {
            return Err(PgError::internal("foreign cursor"));
        };
        if self.in_failed_block() {
            return Err(PgError::new(
                SqlState::IN_FAILED_SQL_TRANSACTION,
                "current transaction is aborted, commands ignored until end of transaction block",
            ));
        }
        self.set_activity("active", Some(&cursor.sql));
        let r = self.fetch_rows(cursor, sink, max_rows);
        if r.is_err() {
            self.fail();
        }
        self.flush_io_counts();
        self.set_activity(self.idle_state(), None);
        r
    }

    fn statements(&mut self) -> &mut crate::session_api::StatementRegistry {
        &mut self.statements
    }

    fn cursor_columns(&self, name: &str) -> Option<Vec<ColumnDesc>> {
        self.cursor_columns_of(name)
    }

    fn on_extended_error(&mut self) {
        self.fail();
    }

    fn notification_listener(&self) -> Option<Arc<crate::notify::Listener>> {
        self.listener.clone()
    }

    fn sync(&mut self) -> PgResult<()> {
        // Sync ends an implicit block: commit unless a statement in it
        // failed (or its deferred constraints do now).
        let mut r = Ok(());
        if self.in_implicit_block() {
            r = self.end_implicit_block(true);
            self.set_activity(self.idle_state(), None);
        }
        self.release_locks_if_idle();
        r.and(self.run_on_commit_actions())
    }

    fn io_settings(&self) -> IoSettings {
        self.io()
    }

    fn client_encoding(&self) -> crate::protocol::ClientEncoding {
        Session::client_encoding(self)
    }

    fn socket_settings(&self) -> Option<crate::connections::SocketSettings> {
        let mut cache = self.thread_settings.borrow_mut();
        let generation = self.settings.generation();
        match cache.socket {
            Some((g, s)) if g == generation => Some(s),
            _ => {
                let s = crate::connections::SocketSettings::from_settings(&self.settings);
                cache.socket = Some((generation, s));
                Some(s)
            }
        }
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        self.end_block(false);
        self.drop_temp_schema_at_exit();
        self.proc.unregister();
        storage::lwlock::set_wait_event_slot(None);
        self.ctx.activity.unregister(self.pid);
    }
}

/// The session as the plan cache's planner.
struct SessionPlanning<'a>(&'a Session);

impl Planning for SessionPlanning<'_> {
    fn plan(&self, stmt: BoundStatement) -> BoundStatement {
        self.0.plan_bound(stmt, std::time::Instant::now())
    }

    fn cost(&self, planned: &BoundStatement) -> Option<(f64, usize)> {
        let settings = self.0.planner_settings();
        let catalog = self.0.catalog_version();
        let sizes = crate::explain::PoolSizes::new(self.0.ctx.pool, &catalog);
        sql::plan::statement_cost(planned, &sizes, &settings)
    }
}
