//! CREATE DATABASE and DROP DATABASE.

use common::{PgError, PgResult, SqlState};

use super::{CommandContext, Notices};
use crate::ExecEnv;

pub(super) fn create(cx: &mut CommandContext, env: &ExecEnv, name: &str) -> PgResult<String> {
    cx.prevent_in_block("CREATE DATABASE")?;
    let creator = env.catalog.role_by_name(&env.hooks.current_user());
    if !creator.is_some_and(|r| r.superuser || r.attrs.create_db) {
        return Err(PgError::new(
            SqlState::INSUFFICIENT_PRIVILEGE,
            "permission denied to create database",
        ));
    }
    let catalog = cx.catalog;
    let db = catalog.create_database(cx.changes(env)?, env.cid, name)?;
    // The creating role owns it (what DROP ROLE then refuses to orphan).
    let owner = creator.map(|r| r.oid);
    if let Some(owner) = owner.filter(|o| *o != db.owner) {
        catalog.set_database_owner(cx.changes(env)?, env.cid, db.oid, owner)?;
    }
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
    // As PostgreSQL's CountOtherDBBackends: sessions just closed by their
    // clients get up to 5 seconds to finish exiting.
    let mut others = env.hooks.backends_in_database(db.oid);
    for _ in 0..50 {
        if others == 0 {
            break;
        }
        env.check_cancel()?;
        std::thread::sleep(std::time::Duration::from_millis(100));
        others = env.hooks.backends_in_database(db.oid);
    }
    if others > 0 {
        let detail = if others == 1 {
            "There is 1 other session using the database.".to_string()
        } else {
            format!("There are {others} other sessions using the database.")
        };
        return Err(PgError::new(
            SqlState::OBJECT_IN_USE,
            format!("database \"{name}\" is being accessed by other users"),
        )
        .with_detail(detail));
    }
    let catalog = cx.catalog;
    catalog.drop_database(cx.changes(env)?, env.cid, db.oid)?;
    Ok("DROP DATABASE".into())
}
