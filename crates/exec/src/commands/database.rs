//! CREATE DATABASE and DROP DATABASE.

use common::{PgError, PgResult, SqlState};

use super::{CommandContext, Notices};
use crate::ExecEnv;

pub(super) fn create(cx: &mut CommandContext, env: &ExecEnv, name: &str) -> PgResult<String> {
    cx.prevent_in_block("CREATE DATABASE")?;
    let catalog = cx.catalog;
    catalog.create_database(cx.changes(env)?, env.cid, name)?;
    Ok("CREATE DATABASE".into())
}

pub(super) fn drop(
    cx: &mut CommandContext,
    env: &mut ExecEnv,
    notices: &mut Notices,
    name: &str,
    if_exists: bool,
) -> PgResult<String> {
    cx.prevent_in_block("DROP DATABASE")?;
    let Some(db) = env.catalog.database_by_name(name).cloned() else {
        if if_exists {
            notices(&PgError::new(
                SqlState::SUCCESSFUL_COMPLETION,
                format!("database \"{name}\" does not exist, skipping"),
            ))?;
            return Ok("DROP DATABASE".into());
        }
        return Err(PgError::new(
            SqlState::INVALID_CATALOG_NAME,
            format!("database \"{name}\" does not exist"),
        ));
    };
    if db.oid == cx.db_oid {
        return Err(PgError::new(
            SqlState::OBJECT_IN_USE,
            "cannot drop the currently open database",
        ));
    }
    if db.is_template {
        return Err(PgError::new(
            SqlState::OBJECT_IN_USE,
            "cannot drop a template database",
        ));
    }
    if env.hooks.backends_in_database(db.oid) > 0 {
        return Err(PgError::new(
            SqlState::OBJECT_IN_USE,
            format!("database \"{name}\" is being accessed by other users"),
        ));
    }
    let catalog = cx.catalog;
    catalog.drop_database(cx.changes(env)?, env.cid, db.oid)?;
    Ok("DROP DATABASE".into())
}
