//! ALTER ROLE ... PASSWORD.

use common::{PgError, PgResult, SqlState};

use super::{CommandContext, Notices};
use crate::ExecEnv;

/// Sets or clears a role's password. The verifier is computed by the session
/// (`SessionHooks::encrypt_password`: authentication belongs to the server);
/// an empty password clears it, with PostgreSQL's notice.
pub(super) fn alter_password(
    cx: &mut CommandContext,
    env: &mut ExecEnv,
    notices: &mut Notices,
    name: &str,
    password: Option<&str>,
) -> PgResult<String> {
    let verifier = match password.filter(|p| !p.is_empty()) {
        Some(p) => Some(env.hooks.encrypt_password(name, p)?),
        None => None,
    };
    if password == Some("") {
        notices(&PgError::new(
            SqlState::SUCCESSFUL_COMPLETION,
            "empty string is not a valid password, clearing password",
        ))?;
    }
    let catalog = cx.catalog;
    catalog.set_role_password(cx.changes(env)?, env.cid, name, verifier)?;
    Ok("ALTER ROLE".into())
}
