//! SET ROLE, SET SESSION AUTHORIZATION and the role checks of a new
//! connection. As PostgreSQL's check_role / check_session_authorization
//! hooks: a role that does not exist is 22023, one the session may not
//! become 42501. As in PostgreSQL both are settings (`role`,
//! `session_authorization`), so a rollback undoes them and SET LOCAL ROLE
//! ends with the transaction (`settings_undo.rs`); the session's identity
//! (`user`, `session_user`, `superuser`) follows the settings through
//! `sync_identity`.

use common::{PgError, PgResult, SqlState};

use super::Session;
use crate::session_api::ResultSink;

fn no_such_role(name: &str) -> PgError {
    PgError::new(
        SqlState::INVALID_PARAMETER_VALUE,
        format!("role \"{name}\" does not exist"),
    )
}

impl Session {
    fn is_superuser(&self, name: &str) -> bool {
        self.ctx
            .catalog
            .snapshot()
            .role_by_name(name)
            .is_some_and(|r| r.superuser)
    }

    /// Changes one of the identity settings (`role`, `session_authorization`),
    /// undone with the transaction when one is open, then follows it.
    fn set_identity_setting(&mut self, name: &'static str, value: &str, local: bool) {
        let set = |s: &mut crate::gucs::Settings| {
            // Valid by construction: the callers checked the role.
            s.set_startup(name, value).ok();
            Ok(name)
        };
        if matches!(self.txn, super::TxnState::Block(_)) {
            let _ = self.settings_undo.change(&mut self.settings, local, set);
        } else {
            let _ = set(&mut self.settings);
        }
        if crate::gucs::lookup(name).is_some_and(|d| d.reported) {
            self.changed.push((name.into(), value.into()));
        }
        self.sync_identity();
    }

    /// Makes the session's identity what its `session_authorization` and
    /// `role` settings say (after SET ROLE, set_config('role', …), or a
    /// rollback that undid either), reporting a change of `is_superuser`.
    pub(super) fn sync_identity(&mut self) {
        let session_user = self
            .settings
            .get("session_authorization")
            .unwrap_or_default()
            .to_string();
        let role = self.settings.get("role").unwrap_or("none");
        let set_role = (role != "none").then(|| role.to_string());
        if session_user == self.session_user && set_role == self.set_role {
            return;
        }
        self.user = set_role.clone().unwrap_or_else(|| session_user.clone());
        self.session_user = session_user;
        self.set_role = set_role;
        self.superuser = self.is_superuser(&self.user);
        let flag = if self.superuser { "on" } else { "off" };
        if self.settings.get("is_superuser").is_ok_and(|v| v != flag) {
            self.settings.set_startup("is_superuser", flag).ok();
            self.changed.push(("is_superuser".into(), flag.into()));
        }
    }

    /// SET ROLE name / NONE, RESET ROLE. Role membership does not exist
    /// yet, so a session user may become another role only as a superuser.
    pub(super) fn set_role(
        &mut self,
        role: Option<&str>,
        local: bool,
        sink: &mut dyn ResultSink,
    ) -> PgResult<()> {
        if let Some(name) = role {
            check_set_role(&self.catalog_version(), &self.session_user, name)?;
        }
        self.set_identity_setting("role", role.unwrap_or("none"), local);
        sink.complete(if role.is_some() { "SET" } else { "RESET" })
    }

    /// SET SESSION AUTHORIZATION name / DEFAULT, RESET SESSION
    /// AUTHORIZATION: only a superuser login may become another role; the
    /// current role follows (SET ROLE is reset).
    pub(super) fn set_session_authorization(
        &mut self,
        role: Option<&str>,
        local: bool,
        sink: &mut dyn ResultSink,
    ) -> PgResult<()> {
        let target = role.unwrap_or(&self.authenticated_user).to_string();
        if self.catalog_version().role_by_name(&target).is_none() {
            return Err(no_such_role(&target));
        }
        if target != self.authenticated_user && !self.is_superuser(&self.authenticated_user) {
            return Err(PgError::new(
                SqlState::INSUFFICIENT_PRIVILEGE,
                "permission denied to set session authorization",
            ));
        }
        self.set_identity_setting("role", "none", local);
        self.set_identity_setting("session_authorization", &target, local);
        sink.complete(if role.is_some() { "SET" } else { "RESET" })
    }
}

/// Whether a session whose session user is `session_user` may become `name`
/// (SET ROLE, set_config('role', …)): 22023 for a role that does not exist,
/// 42501 for one it may not become. Role membership does not exist yet, so
/// only a superuser session user may become another role.
pub(super) fn check_set_role(
    catalog: &catalog::CatalogData,
    session_user: &str,
    name: &str,
) -> PgResult<()> {
    if name == "none" {
        return Ok(());
    }
    if catalog.role_by_name(name).is_none() {
        return Err(no_such_role(name));
    }
    let superuser = catalog
        .role_by_name(session_user)
        .is_some_and(|r| r.superuser);
    if name != session_user && !superuser {
        return Err(PgError::new(
            SqlState::INSUFFICIENT_PRIVILEGE,
            format!("permission denied to set role \"{name}\""),
        ));
    }
    Ok(())
}

/// The checks of InitializeSessionUserId that need only the catalog: the
/// role exists and may log in. 28000 (FATAL) otherwise.
pub(super) fn check_login(catalog: &catalog::CatalogData, user: &str) -> PgResult<catalog::Role> {
    let role = catalog.role_by_name(user).ok_or_else(|| {
        PgError::fatal(
            SqlState::INVALID_AUTHORIZATION_SPECIFICATION,
            format!("role \"{user}\" does not exist"),
        )
    })?;
    if !role.attrs.can_login {
        return Err(PgError::fatal(
            SqlState::INVALID_AUTHORIZATION_SPECIFICATION,
            format!("role \"{user}\" is not permitted to log in"),
        ));
    }
    Ok(role.clone())
}
