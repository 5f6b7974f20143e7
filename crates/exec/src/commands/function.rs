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
    let catalog = cx.catalog;
    for f in functions {
        catalog.drop_function(cx.changes(env)?, env.cid, f.oid)?;
    }
    Ok("DROP FUNCTION".into())
}
