//! CREATE [OR REPLACE] VIEW and DROP VIEW.

use std::sync::Arc;

use catalog::{Column, View};
use common::{Oid, PgResult};

use super::{CommandContext, Notices};
use crate::ExecEnv;

pub(super) fn create(
    cx: &mut CommandContext,
    env: &ExecEnv,
    name: &str,
    namespace: Oid,
    query: &str,
    columns: &[Column],
    replace: bool,
) -> PgResult<String> {
    let (catalog, db) = (cx.catalog, cx.db_oid);
    catalog.create_view(
        cx.changes(env)?,
        env.cid,
        db,
        namespace,
        name,
        query.to_string(),
        columns.to_vec(),
        replace,
    )?;
    Ok("CREATE VIEW".into())
}

pub(super) fn drop(
    cx: &mut CommandContext,
    env: &ExecEnv,
    notices: &mut Notices,
    views: &[Arc<View>],
    missing: &[String],
) -> PgResult<String> {
    super::notice_missing(notices, "view", missing)?;
    let catalog = cx.catalog;
    for v in views {
        catalog.drop_view(cx.changes(env)?, env.cid, v.oid)?;
    }
    Ok("DROP VIEW".into())
}

/// Views a CASCADE drop or change takes along (`sql::bind::view_deps`
/// found them, each before the views reading it): dropped with PostgreSQL's
/// NOTICE, the views reading others first.
pub(super) fn drop_dependents(
    cx: &mut CommandContext,
    env: &ExecEnv,
    notices: &mut Notices,
    views: &[Arc<View>],
) -> PgResult<()> {
    if views.is_empty() {
        return Ok(());
    }
    let names: Vec<String> = views.iter().map(|v| format!("view {}", v.name)).collect();
    notices(&super::constraint::cascade_notice(&names))?;
    let catalog = cx.catalog;
    for v in views.iter().rev() {
        catalog.drop_view(cx.changes(env)?, env.cid, v.oid)?;
    }
    Ok(())
}

/// Views whose query a rename rewrote: the new text, same columns.
pub(super) fn rewrite_queries(
    cx: &mut CommandContext,
    env: &ExecEnv,
    views: &[(Arc<View>, String)],
) -> PgResult<()> {
    let catalog = cx.catalog;
    for (v, query) in views {
        if *query == v.query {
            continue;
        }
        catalog.create_view(
            cx.changes(env)?,
            env.cid,
            v.db_oid,
            v.namespace,
            &v.name,
            query.clone(),
            v.columns.clone(),
            true,
        )?;
    }
    Ok(())
}
