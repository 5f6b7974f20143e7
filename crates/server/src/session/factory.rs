//! Opening sessions: the login and database checks, the startup
//! settings, and a session's initial state (clients and autovacuum workers).

use std::sync::Arc;

use common::interrupt::Interrupts;
use common::{PgError, PgResult, SqlState};

use super::*;
use crate::context::SharedContext;
use crate::gucs;
use crate::session_api::{SessionFactory, SessionHandler, StartupParams};

/// Opens sessions against a server context.
pub struct Factory {
    pub ctx: SharedContext,
}

impl SessionFactory for Factory {
    fn hba(&self) -> Option<Arc<crate::auth::hba::HbaConfig>> {
        Some(self.ctx.hba.current())
    }

    fn tls(&self) -> Option<Arc<rustls::ServerConfig>> {
        self.ctx.tls.current()
    }

    fn role_password(&self, user: &str) -> Option<String> {
        self.ctx
            .catalog
            .snapshot()
            .role_by_name(user)?
            .password
            .clone()
    }

    fn open(
        &self,
        params: &StartupParams,
        pid: i32,
        interrupts: Arc<Interrupts>,
    ) -> PgResult<Box<dyn SessionHandler>> {
        let s = self.open_session(params, pid, interrupts, false)?;
        Ok(Box::new(s))
    }
}

impl Factory {
    /// An autovacuum worker's session on database `db_name`, as the
    /// bootstrap superuser, outside the client connection limits.
    pub fn open_autovacuum(
        &self,
        db_name: &str,
        pid: i32,
        interrupts: Arc<Interrupts>,
    ) -> PgResult<Box<dyn SessionHandler>> {
        let user = self
            .ctx
            .catalog
            .snapshot()
            .roles
            .get(&catalog::BOOTSTRAP_SUPERUSER)
            .map(|r| r.name.clone())
            .unwrap_or_else(|| "postgres".into());
        let params = StartupParams {
            user,
            database: db_name.to_string(),
            ..Default::default()
        };
        let s = self.open_session(&params, pid, interrupts, true)?;
        Ok(Box::new(s))
    }

    fn open_session(
        &self,
        params: &StartupParams,
        pid: i32,
        interrupts: Arc<Interrupts>,
        autovacuum: bool,
    ) -> PgResult<Session> {
        if self.ctx.is_shutting_down() {
            return Err(PgError::fatal(
                SqlState::CANNOT_CONNECT_NOW,
                "the database system is shutting down",
            ));
        }
        let catalog = self.ctx.catalog.snapshot();
        let role = roles::check_login(&catalog, &params.user)?;
        let superuser = role.superuser;
        let db = catalog.database_by_name(&params.database).ok_or_else(|| {
            PgError::fatal(
                SqlState::INVALID_CATALOG_NAME,
                format!("database \"{}\" does not exist", params.database),
            )
        })?;
        if !db.allow_connections {
            return Err(PgError::fatal(
                SqlState::OBJECT_NOT_IN_PREREQUISITE_STATE,
                format!(
                    "database \"{}\" is not currently accepting connections",
                    db.name
                ),
            ));
        }
        // The count first: a reload between the two reads is then seen again.
        let seen_reloads = self
            .ctx
            .settings_reloads
            .load(std::sync::atomic::Ordering::Acquire);
        let base = self.ctx.file_settings.read().clone();
        let mut settings = (*base).clone();
        for (k, v) in &params.settings {
            let settable = |d: &gucs::GucDef| match d.context {
                gucs::GucContext::User => true,
                gucs::GucContext::Superuser => superuser,
                _ => false,
            };
            if gucs::lookup(k).is_some_and(settable) {
                settings
                    .set_user(k, Some(v), &base, superuser)
                    // FATAL, keeping the DETAIL and HINT (DateStyle's say why).
                    .map_err(|e| PgError {
                        severity: common::error::Severity::Fatal,
                        ..e
                    })?;
            }
        }
        settings
            .set_startup("session_authorization", &params.user)
            .ok();
        settings
            .set_startup("is_superuser", if superuser { "on" } else { "off" })
            .ok();
        let limits = &self.ctx.connection_settings;
        let free = limits.max_connections.saturating_sub(
            self.ctx
                .activity
                .backends()
                .iter()
                .filter(|b| !b.autovacuum)
                .count(),
        );
        if free == 0 && !autovacuum {
            return Err(PgError::fatal(
                SqlState::TOO_MANY_CONNECTIONS,
                "sorry, too many clients already",
            ));
        }
        if !superuser && free <= limits.superuser_reserved_connections && !autovacuum {
            return Err(PgError::fatal(
                SqlState::TOO_MANY_CONNECTIONS,
                "remaining connection slots are reserved for non-replication superuser connections",
            ));
        }
        let app = settings.get("application_name").unwrap_or("").to_string();
        let status = self.ctx.activity.register(
            pid,
            db.oid,
            &db.name,
            &params.user,
            &app,
            params.ssl.clone(),
            autovacuum,
        );
        // Counted once registered, this backend included, as PostgreSQL's
        // CountUserBackends: two racing connections may then both fail, but
        // never both pass the limit.
        let limit = role.attrs.conn_limit;
        if limit >= 0 && !superuser {
            let mine = self
                .ctx
                .activity
                .backends()
                .iter()
                .filter(|b| b.usename == params.user)
                .count();
            if mine > limit as usize {
                self.ctx.activity.unregister(pid);
                return Err(PgError::fatal(
                    SqlState::TOO_MANY_CONNECTIONS,
                    format!("too many connections for role \"{}\"", params.user),
                ));
            }
        }
        // This connection's thread publishes its lock waits into its status.
        storage::lwlock::set_wait_event_slot(Some(status.wait_event));
        let db_counters = self.ctx.activity.database(db.oid);
        let temp = storage::temp_file::TempSpace::new(
            self.ctx.temp_dir.clone(),
            pid,
            db_counters.temp.clone(),
        );
        Ok(Session {
            temp,
            ctx: self.ctx.clone(),
            db_oid: db.oid,
            db_name: db.name.clone(),
            user: params.user.clone(),
            session_user: params.user.clone(),
            authenticated_user: params.user.clone(),
            set_role: None,
            superuser,
            changed: Vec::new(),
            settings_undo: Default::default(),
            txn: TxnState::Idle,
            proc: self.ctx.tm.register_proc(pid),
            catalog_changes: None,
            locks: txn::lock::LockOwner::new(self.ctx.tm.locks().clone(), pid, db.oid),
            pending_notices: Vec::new(),
            ssi: None,
            sequences: SequenceValues::default(),
            pid,
            interrupts,
            status,
            db_counters,
            parse_cache: sql::parse_cache::ParseCache::new(),
            thread_settings: Default::default(),
            reset: Arc::new(settings.clone()),
            settings,
            base,
            seen_reloads,
            statements: Default::default(),
            cursors: Default::default(),
            table_counts: Default::default(),
            ri: Default::default(),
            notify: Default::default(),
            listener: None,
            temp_schema_taken: false,
            on_commit: Vec::new(),
            autovacuum,
        })
    }
}
