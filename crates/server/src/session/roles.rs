//! SET ROLE, SET SESSION AUTHORIZATION and the role checks of a new
//! connection. As PostgreSQL's check_role / check_session_authorization
//! hooks: a role that does not exist is 22023, one the session may not
//! become 42501. Unlike PostgreSQL they are not undone by a rollback (SET
//! ROLE is no GUC here).

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

    /// Makes the current role `role`'s (or the session user's, for None).
    fn become_role(&mut self, role: Option<&str>) {
        self.set_role = role.map(str::to_string);
        self.user = role.unwrap_or(&self.session_user).to_string();
        self.superuser = self.is_superuser(&self.user);
    }

    /// SET ROLE name / NONE, RESET ROLE. Role membership does not exist
    /// yet, so a session user may become another role only as a superuser.
    pub(super) fn set_role(
        &mut self,
        role: Option<&str>,
        sink: &mut dyn ResultSink,
    ) -> PgResult<()> {
        if let Some(name) = role {
            let catalog = self.catalog_version();
            if catalog.role_by_name(name).is_none() {
                return Err(no_such_role(name));
            }
            if name != self.session_user && !self.is_superuser(&self.session_user) {
                return Err(PgError::new(
                    SqlState::INSUFFICIENT_PRIVILEGE,
                    format!("permission denied to set role \"{name}\""),
                ));
            }
        }
        self.become_role(role);
        sink.complete(if role.is_some() { "SET" } else { "RESET" })
    }

    /// SET SESSION AUTHORIZATION name / DEFAULT, RESET SESSION
    /// AUTHORIZATION: only a superuser login may become another role; the
    /// current role follows (SET ROLE is reset).
    pub(super) fn set_session_authorization(
        &mut self,
        role: Option<&str>,
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
        self.session_user = target;
        self.become_role(None);
        self.settings
            .set_startup("session_authorization", &self.session_user)
            .ok();
        sink.complete(if role.is_some() { "SET" } else { "RESET" })
    }
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
