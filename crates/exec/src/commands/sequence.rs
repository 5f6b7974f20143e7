//! CREATE SEQUENCE and DROP SEQUENCE.

use std::sync::Arc;

use catalog::Sequence;
use common::{PgError, PgResult, SqlState};

use super::{CommandContext, Notices};
use crate::ExecEnv;

pub(super) fn create(
    cx: &mut CommandContext,
    env: &ExecEnv,
    notices: &mut Notices,
    seq: &Sequence,
    if_not_exists: bool,
) -> PgResult<String> {
    if if_not_exists
        && env
            .catalog
            .relation_exists(seq.db_oid, seq.namespace, &seq.name)
    {
        notices(&PgError::new(
            SqlState::DUPLICATE_TABLE,
            format!("relation \"{}\" already exists, skipping", seq.name),
        ))?;
        return Ok("CREATE SEQUENCE".into());
    }
    let catalog = cx.catalog;
    catalog.create_sequence(cx.changes(env)?, env.cid, seq.clone())?;
    Ok("CREATE SEQUENCE".into())
}

pub(super) fn drop(
    cx: &mut CommandContext,
    env: &ExecEnv,
    notices: &mut Notices,
    sequences: &[Arc<Sequence>],
    missing: &[String],
) -> PgResult<String> {
    super::notice_missing(notices, "sequence", missing)?;
    let catalog = cx.catalog;
    for q in sequences {
        catalog.drop_sequence(cx.changes(env)?, env.cid, q.oid)?;
    }
    Ok("DROP SEQUENCE".into())
}
