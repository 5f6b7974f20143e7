//! COMMENT ON ... IS 'text' | NULL.

use catalog::ObjectAddress;
use common::error::Severity;
use common::{PgError, PgResult, SqlState};

use super::{CommandContext, Notices};
use crate::ExecEnv;

pub(super) fn comment(
    cx: &mut CommandContext,
    env: &ExecEnv,
    notices: &mut Notices,
    object: Option<ObjectAddress>,
    name: &str,
    text: Option<&str>,
) -> PgResult<String> {
    let Some(object) = object else {
        // PostgreSQL warns instead of failing so that a dump's COMMENT ON
        // DATABASE restores into a database of another name.
        notices(&PgError {
            severity: Severity::Warning,
            ..PgError::new(
                SqlState::INVALID_CATALOG_NAME,
                format!("database \"{name}\" does not exist"),
            )
        })?;
        return Ok("COMMENT".into());
    };
    let catalog = cx.catalog;
    catalog.set_comment(cx.changes(env)?, env.cid, object, text)?;
    Ok("COMMENT".into())
}
