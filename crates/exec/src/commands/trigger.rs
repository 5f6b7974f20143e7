//! CREATE [OR REPLACE] TRIGGER, DROP TRIGGER and ALTER TABLE ...
//! ENABLE/DISABLE TRIGGER.

use std::sync::Arc;

use catalog::triggers::Trigger;
use common::{PgError, PgResult, SqlState};

use super::{CommandContext, Notices};
use crate::ExecEnv;

pub(super) fn create(
    cx: &mut CommandContext,
    env: &ExecEnv,
    trigger: &Trigger,
    replace: bool,
) -> PgResult<String> {
    let catalog = cx.catalog;
    catalog.create_trigger(cx.changes(env)?, env.cid, trigger.clone(), replace)?;
    Ok("CREATE TRIGGER".into())
}

pub(super) fn drop(
    cx: &mut CommandContext,
    env: &ExecEnv,
    notices: &mut Notices,
    trigger: Option<&Arc<Trigger>>,
    missing: Option<&str>,
) -> PgResult<String> {
    if let Some(m) = missing {
        notices(&PgError::new(SqlState::SUCCESSFUL_COMPLETION, m))?;
    }
    if let Some(t) = trigger {
        let catalog = cx.catalog;
        catalog.drop_trigger(cx.changes(env)?, env.cid, t.oid)?;
    }
    Ok("DROP TRIGGER".into())
}

pub(super) fn set_enabled(
    cx: &mut CommandContext,
    env: &ExecEnv,
    triggers: &[Arc<Trigger>],
    enabled: char,
) -> PgResult<String> {
    let catalog = cx.catalog;
    for t in triggers {
        let mut t = Trigger::clone(t);
        t.enabled = enabled;
        catalog.alter_trigger(cx.changes(env)?, env.cid, t)?;
    }
    Ok("ALTER TABLE".into())
}
