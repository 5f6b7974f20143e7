//! CREATE DATABASE and DROP DATABASE.

use access::heap;
use common::{PgError, PgResult, SqlState};

use super::{CommandContext, Notices};
use crate::ExecEnv;

pub(super) fn create(cx: &CommandContext, name: &str) -> PgResult<String> {
    cx.catalog.create_database(name)?;
    Ok("CREATE DATABASE".into())
}

pub(super) fn drop(
    cx: &CommandContext,
    env: &mut ExecEnv,
    notices: &mut Notices,
    name: &str,
    if_exists: bool,
) -> PgResult<String> {
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
    for t in cx.catalog.drop_database(db.oid)? {
        heap::drop_storage(env.pool, env.tm.wal(), t.locator())?;
    }
    heap::drop_database_storage(env.pool, env.tm.wal(), db.oid)?;
    Ok("DROP DATABASE".into())
}
