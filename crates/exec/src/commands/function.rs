//! CREATE [OR REPLACE] FUNCTION, ALTER FUNCTION and DROP FUNCTION.

use std::sync::Arc;

use catalog::functions::Function;
use common::PgResult;

use super::{CommandContext, Notices};
use crate::ExecEnv;

pub(super) fn create(
    cx: &mut CommandContext,
    env: &ExecEnv,
    function: &Function,
    replace: bool,
) -> PgResult<String> {
    let catalog = cx.catalog;
    catalog.create_function(cx.changes(env)?, env.cid, function.clone(), replace)?;
    Ok("CREATE FUNCTION".into())
}

pub(super) fn alter(
    cx: &mut CommandContext,
    env: &ExecEnv,
    function: &Function,
) -> PgResult<String> {
    let catalog = cx.catalog;
    catalog.alter_function(cx.changes(env)?, env.cid, function.clone())?;
    Ok("ALTER FUNCTION".into())
}

pub(super) fn drop(
    cx: &mut CommandContext,
    env: &ExecEnv,
    notices: &mut Notices,
    functions: &[Arc<Function>],
    missing: &[String],
) -> PgResult<String> {
    super::notice_missing(notices, "function", missing)?;
    for f in functions {
        // pg_depend's rule for the one dependency recorded: a trigger's function.
        if let Some(t) = env.catalog.triggers_calling(f.oid).next() {
            let table = env
                .catalog
                .table_by_oid(t.table)
                .map_or_else(String::new, |r| r.name.clone());
            return Err(common::PgError::new(
                common::SqlState::DEPENDENT_OBJECTS_STILL_EXIST,
                format!(
                    "cannot drop function {}() because other objects depend on it",
                    f.name
                ),
            )
            .with_detail(format!(
                "trigger {} on table {table} depends on function {}()",
                t.name, f.name
            ))
            .with_hint("Use DROP ... CASCADE to drop the dependent objects too."));
        }
    }
    let catalog = cx.catalog;
    for f in functions {
        catalog.drop_function(cx.changes(env)?, env.cid, f.oid)?;
    }
    Ok("DROP FUNCTION".into())
}
