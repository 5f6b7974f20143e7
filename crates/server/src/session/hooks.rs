//! What statements reach of their session through `exec::SessionHooks`:
//! settings, the backend's identity, sequence values, the server's state.

use common::PgResult;
use exec::SessionHooks;

use super::{sql_cursors, sql_prepared};
use crate::auth::password::{encrypt_password, PasswordEncryption};
use crate::context::SharedContext;
use crate::gucs::{self, Settings};

pub(super) struct Hooks<'a> {
    pub(super) ctx: &'a SharedContext,
    pub(super) cursors: &'a sql_cursors::SqlCursors,
    pub(super) statements: &'a crate::session_api::StatementRegistry,
    pub(super) settings: &'a mut Settings,
    /// What RESET and set_config's DEFAULT return to: the configuration
    /// files' values with the startup packet's on top.
    pub(super) defaults: &'a Settings,
    /// The configuration files' values (pg_settings' source and
    /// pending_restart compare with them).
    pub(super) files: &'a Settings,
    pub(super) changed: &'a mut Vec<(String, String)>,
    /// set_config() changes are undone with the transaction.
    pub(super) settings_undo: &'a mut super::settings_undo::SettingsUndo,
    pub(super) pid: i32,
    pub(super) superuser: bool,
    pub(super) user: &'a str,
    pub(super) session_user: &'a str,
    pub(super) sequences: &'a mut SequenceValues,
    pub(super) db_oid: common::Oid,
    /// The open transaction's row changes by table (applied at its end).
    pub(super) table_counts: &'a mut exec::table_stats::PendingTableCounts,
    /// This session is an autovacuum worker.
    pub(super) autovacuum: bool,
    /// The session's heavyweight locks (advisory-lock functions), how it
    /// waits for them, and when its statement times out.
    pub(super) locks: &'a mut txn::lock::LockOwner,
    pub(super) lock_settings: txn::lock::LockSettings,
    pub(super) interrupts: &'a common::interrupt::Interrupts,
    pub(super) deadline: Option<std::time::Instant>,
    /// WARNINGs and NOTICEs raised by functions, sent after the statement.
    pub(super) notices: &'a mut Vec<common::PgError>,
    /// Deferred constraints and command ids (`session/deferred.rs`).
    pub(super) ri: &'a mut super::deferred::ConstraintState,
    /// The transaction's pending LISTEN/NOTIFY (pg_notify).
    pub(super) notify: &'a mut crate::notify::PendingNotify,
}

/// The values nextval()/setval() gave this session (currval, lastval).
#[derive(Default)]
pub(super) struct SequenceValues {
    last: std::collections::HashMap<common::Oid, i64>,
    latest: Option<common::Oid>,
    /// The end of the last sequence record this transaction's nextval()
    /// calls logged (0: none): its commit flushes it.
    pub flush_at_commit: u64,
}

impl SessionHooks for Hooks<'_> {
    fn counters_to_update(
        &self,
        table: common::Oid,
    ) -> Option<std::sync::Arc<exec::table_stats::TableCounters>> {
        let on = self
            .settings
            .get("track_counts")
            .ok()
            .and_then(gucs::parse_bool)
            .unwrap_or(true);
        on.then(|| self.ctx.table_stats.get(self.db_oid, table))
    }
    fn count_table_changes(
        &mut self,
        table: common::Oid,
        counts: exec::table_stats::PendingCounts,
    ) {
        self.table_counts.add(table, counts);
    }
    fn is_autovacuum(&self) -> bool {
        self.autovacuum
    }
    fn search_path(&self) -> Vec<String> {
        let raw = self.settings.get("search_path").unwrap_or("public");
        raw.split(',')
            .map(|s| s.trim().trim_matches('"').to_string())
            .map(|s| {
                if s == "$user" {
                    self.user.to_string()
                } else {
                    s
                }
            })
            .filter(|s| !s.is_empty())
            .collect()
    }
    fn plan_function_statement(
        &self,
        stmt: sql::plan::BoundStatement,
        catalog: &catalog::CatalogData,
    ) -> sql::plan::BoundStatement {
        let settings = gucs::planner_settings(self.settings);
        let sizes = crate::explain::PoolSizes::new(self.ctx.pool, catalog);
        let cx = sql::plan::PlannerContext {
            settings: &settings,
            sizes: &sizes,
        };
        sql::plan::plan_statement(stmt, &cx)
    }
    fn next_command_id(&mut self) -> u32 {
        self.ri.next_command_id()
    }
    fn constraint_deferred(&self, constraint: common::Oid, initially_deferred: bool) -> bool {
        self.ri.is_deferred(constraint, initially_deferred)
    }
    fn defer_ri_event(&mut self, event: exec::ri::RiEvent) {
        self.ri.deferred.push(event);
    }
    fn take_deferred_events(&mut self) -> Vec<exec::ri::RiEvent> {
        std::mem::take(&mut self.ri.deferred)
    }
    fn notify(&mut self, channel: &str, payload: &str) -> PgResult<()> {
        super::notify::queue_notification(&self.ctx.notify, self.notify, channel, payload)
    }

    fn notification_queue_usage(&self) -> f64 {
        self.ctx.notify.usage()
    }

    fn lock_relation(&mut self, rel: common::Oid, mode: txn::lock::LockMode) -> PgResult<()> {
        use txn::lock::{LockError, LockScope, LockTag, WaitContext};
        let tag = LockTag::Relation {
            db: self.db_oid,
            rel,
        };
        // Most requests are granted at once (held already by the statement).
        match self.locks.acquire(tag, mode, LockScope::Transaction, None) {
            Err(LockError::NotAvailable) => {}
            r => return r.map_err(|e| e.into_pg(|| unreachable!("no wait"))),
        }
        let (interrupts, deadline) = (self.interrupts, self.deadline);
        let mut check = || super::locks::wait_check(interrupts, deadline);
        let mut ctx = WaitContext {
            settings: self.lock_settings,
            check: &mut check,
        };
        self.locks
            .acquire(tag, mode, LockScope::Transaction, Some(&mut ctx))
            .map_err(|e| e.into_pg(|| unreachable!("the wait was allowed")))
    }
    fn flush_at_commit(&mut self, lsn: u64) {
        self.sequences.flush_at_commit = self.sequences.flush_at_commit.max(lsn);
    }
    fn sequence_value_used(&mut self, seq: common::Oid, value: i64) {
        self.sequences.last.insert(seq, value);
        self.sequences.latest = Some(seq);
    }
    fn sequence_last_value(&self, seq: Option<common::Oid>) -> Option<i64> {
        let seq = seq.or(self.sequences.latest)?;
        self.sequences.last.get(&seq).copied()
    }
    fn current_setting(&mut self, name: &str, missing_ok: bool) -> PgResult<Option<String>> {
        match self.settings.get(name) {
            Ok(v) => Ok(Some(v.to_string())),
            Err(_) if missing_ok => Ok(None),
            Err(e) => Err(e),
        }
    }
    fn set_config(&mut self, name: &str, value: &str, is_local: bool) -> PgResult<String> {
        if gucs::lookup(name).is_some_and(|d| d.name == "role") {
            let catalog = self.ctx.catalog.snapshot();
            super::roles::check_set_role(&catalog, self.session_user, value)?;
        }
        let (defaults, superuser) = (self.defaults, self.superuser);
        let canonical = self.settings_undo.change(self.settings, is_local, |s| {
            s.set_user(name, Some(value), defaults, superuser)
        })?;
        // The value as stored: DateStyle, TimeZone and others are canonicalised.
        let stored = self.settings.get(canonical)?.to_string();
        if gucs::lookup(canonical).is_some_and(|d| d.reported) {
            self.changed.push((canonical.to_string(), stored.clone()));
        }
        Ok(stored)
    }
    fn backend_pid(&self) -> i32 {
        self.pid
    }
    fn is_backend_blocked(&self, pid: i32, by: &[i32]) -> bool {
        // A READ ONLY DEFERRABLE transaction waiting for a safe snapshot
        // counts as blocked too, as in PostgreSQL.
        self.blocking_pids(pid).iter().any(|b| by.contains(b))
            || self
                .ctx
                .tm
                .predicate()
                .safe_snapshot_blocking_pids(pid)
                .iter()
                .any(|b| by.contains(b))
    }
    fn blocking_pids(&self, pid: i32) -> Vec<i32> {
        self.locks.manager().blocking_pids(pid)
    }
    fn advisory_lock(
        &mut self,
        call: sql::expr::AdvisoryCall,
        key: txn::lock::AdvisoryKey,
    ) -> PgResult<bool> {
        use sql::expr::AdvisoryOp;
        use txn::lock::{LockError, LockMode, LockScope, LockTag, WaitContext};
        let tag = LockTag::Advisory {
            db: self.db_oid,
            key,
        };
        let mode = if call.shared {
            LockMode::Share
        } else {
            LockMode::Exclusive
        };
        let scope = if call.xact {
            LockScope::Transaction
        } else {
            LockScope::Session
        };
        match call.op {
            AdvisoryOp::Unlock => {
                let released = self.locks.release(tag, mode, scope);
                if !released {
                    self.notices.push(common::PgError {
                        severity: common::error::Severity::Warning,
                        ..common::PgError::new(
                            common::SqlState::WARNING,
                            format!("you don't own a lock of type {}", mode.name()),
                        )
                    });
                }
                Ok(released)
            }
            AdvisoryOp::TryLock => match self.locks.acquire(tag, mode, scope, None) {
                Ok(()) => Ok(true),
                Err(LockError::NotAvailable) => Ok(false),
                Err(e) => Err(e.into_pg(|| unreachable!())),
            },
            AdvisoryOp::Lock => {
                let (interrupts, deadline) = (self.interrupts, self.deadline);
                let mut check = || super::locks::wait_check(interrupts, deadline);
                let mut ctx = WaitContext {
                    settings: self.lock_settings,
                    check: &mut check,
                };
                self.locks
                    .acquire(tag, mode, scope, Some(&mut ctx))
                    .map_err(|e| e.into_pg(|| unreachable!("the wait was allowed")))?;
                Ok(true)
            }
        }
    }
    fn wait_for_transaction(&mut self, xid: common::Xid) -> PgResult<txn::XidStatus> {
        let (interrupts, deadline) = (self.interrupts, self.deadline);
        let mut check = || super::locks::wait_check(interrupts, deadline);
        let mut ctx = txn::lock::WaitContext {
            settings: self.lock_settings,
            check: &mut check,
        };
        self.ctx
            .tm
            .wait_for_locked(xid, self.locks, &mut ctx)
            .map_err(|e| e.into_pg(|| unreachable!("the wait was allowed")))
    }
    fn advisory_unlock_all(&mut self) {
        self.locks.release_session_locks();
    }
    fn notice(&mut self, notice: common::PgError) {
        self.notices.push(notice);
    }
    fn signal_backend(&mut self, pid: i32, terminate: bool) -> common::PgResult<bool> {
        let target = self
            .ctx
            .activity
            .backends()
            .into_iter()
            .find(|b| b.pid == pid);
        let Some(target) = target else {
            self.notices.push(common::PgError {
                severity: common::error::Severity::Warning,
                ..common::PgError::new(
                    common::SqlState::WARNING,
                    format!("PID {pid} is not a PostgreSQL backend process"),
                )
            });
            return Ok(false);
        };
        if !self.superuser && target.usename != self.user {
            let target_is_superuser = self
                .ctx
                .catalog
                .snapshot()
                .roles
                .values()
                .any(|r| r.name == target.usename && r.superuser);
            let message = match (target_is_superuser, terminate) {
                (true, true) => "must be a superuser to terminate superuser process",
                (true, false) => "must be a superuser to cancel superuser query",
                (false, true) => "must be a member of the role whose process is being terminated or member of pg_signal_backend",
                (false, false) => "must be a member of the role whose query is being canceled or member of pg_signal_backend",
            };
            return Err(common::PgError::new(
                common::SqlState::INSUFFICIENT_PRIVILEGE,
                message,
            ));
        }
        Ok(if terminate {
            self.ctx.registry.terminate_backend(pid)
        } else {
            self.ctx.registry.cancel_backend(pid)
        })
    }
    fn reload_conf(&mut self) -> bool {
        // The postmaster's SIGHUP handler reloads, as PostgreSQL's does.
        // SAFETY: kill(2) on our own pid with a handled signal.
        unsafe { libc::kill(libc::getpid(), libc::SIGHUP) == 0 }
    }
    fn encrypt_password(&mut self, role: &str, password: &str) -> PgResult<String> {
        let setting = self
            .current_setting("password_encryption", false)?
            .unwrap_or_default();
        let method =
            PasswordEncryption::parse(&setting).expect("password_encryption is validated when set");
        Ok(encrypt_password(method, role, password))
    }
    fn backends_in_database(&self, db_oid: u32) -> usize {
        self.ctx
            .activity
            .backends()
            .iter()
            .filter(|b| b.db_oid == db_oid)
            .count()
    }
    fn current_user(&self) -> String {
        self.user.to_string()
    }
    fn session_user(&self) -> String {
        self.session_user.to_string()
    }
}

impl Hooks<'_> {
    fn server_view(&self) -> crate::server_state::ServerView<'_> {
        crate::server_state::ServerView {
            ctx: self.ctx,
            settings: self.settings,
            base: self.files,
        }
    }
}

impl exec::system_views::ServerState for Hooks<'_> {
    fn current_user_is_superuser(&self) -> bool {
        self.superuser
    }
    fn table_counters(
        &self,
        db: common::Oid,
        table: common::Oid,
    ) -> Option<std::sync::Arc<exec::table_stats::TableCounters>> {
        Some(self.ctx.table_stats.get(db, table))
    }
    fn backends(&self) -> Vec<exec::system_views::BackendInfo> {
        self.server_view().backends()
    }
    fn database_stats(&self, db: u32) -> exec::system_views::DatabaseStats {
        self.server_view().database_stats(db)
    }
    fn checkpoints(&self) -> exec::system_views::CheckpointStats {
        self.server_view().checkpoints()
    }
    fn start_time(&self) -> i64 {
        self.ctx.start_time
    }
    fn settings(&self) -> Vec<exec::system_views::SettingInfo> {
        self.server_view().settings()
    }
    fn cursors(&self) -> Vec<exec::system_views::CursorInfo> {
        self.cursors.infos()
    }
    fn prepared_statements(&self) -> Vec<exec::system_views::PreparedStatementInfo> {
        sql_prepared::prepared_infos(self.statements)
    }
}
