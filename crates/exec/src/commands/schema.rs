//! CREATE SCHEMA and DROP SCHEMA [CASCADE | RESTRICT].

use catalog::Namespace;
use common::{PgError, PgResult, SqlState};

use super::{CommandContext, Notices};
use crate::ExecEnv;

pub(super) fn create(
    cx: &mut CommandContext,
    env: &ExecEnv,
    notices: &mut Notices,
    name: &str,
    if_not_exists: bool,
) -> PgResult<String> {
    if if_not_exists && env.catalog.namespace_by_name(cx.db_oid, name).is_some() {
        notices(&PgError::new(
            SqlState::DUPLICATE_SCHEMA,
            format!("schema \"{name}\" already exists, skipping"),
        ))?;
        return Ok("CREATE SCHEMA".into());
    }
    let (catalog, db) = (cx.catalog, cx.db_oid);
    catalog.create_namespace(cx.changes(env)?, env.cid, db, name)?;
    Ok("CREATE SCHEMA".into())
}

/// The relations in `ns` that DROP SCHEMA would take with it, as
/// PostgreSQL's dependency messages name them, in creation order.
fn dependents(env: &ExecEnv, ns: &Namespace) -> Vec<String> {
    let cat = env.catalog;
    let mut found: Vec<(u32, String)> = Vec::new();
    let mut add = |oid, kind, name: &str| found.push((oid, format!("{kind} {}.{name}", ns.name)));
    for t in cat.tables.values().filter(|t| t.namespace == ns.oid) {
        add(t.oid, "table", &t.name);
    }
    for v in cat.views.values().filter(|v| v.namespace == ns.oid) {
        add(v.oid, "view", &v.name);
    }
    // A serial column's sequence goes with its table, unnamed (an automatic
    // dependency in PostgreSQL).
    for q in cat
        .sequences
        .values()
        .filter(|q| q.namespace == ns.oid && q.owned_by.is_none())
    {
        add(q.oid, "sequence", &q.name);
    }
    found.sort();
    found.into_iter().map(|(_, d)| d).collect()
}

pub(super) fn drop(
    cx: &mut CommandContext,
    env: &ExecEnv,
    notices: &mut Notices,
    schemas: &[Namespace],
    missing: &[String],
    cascade: bool,
) -> PgResult<String> {
    super::notice_missing(notices, "schema", missing)?;
    for ns in schemas {
        if ns.db_oid == 0 {
            // The built-in schemas are shared by every database here.
            return Err(PgError::new(
                SqlState::DEPENDENT_OBJECTS_STILL_EXIST,
                format!(
                    "cannot drop schema {} because it is required by the database system",
                    ns.name
                ),
            ));
        }
        let deps = dependents(env, ns);
        if deps.is_empty() {
            continue;
        }
        if !cascade {
            let detail = deps
                .iter()
                .map(|d| format!("{d} depends on schema {}", ns.name))
                .collect::<Vec<_>>()
                .join("\n");
            return Err(PgError::new(
                SqlState::DEPENDENT_OBJECTS_STILL_EXIST,
                format!(
                    "cannot drop schema {} because other objects depend on it",
                    ns.name
                ),
            )
            .with_detail(detail)
            .with_hint("Use DROP ... CASCADE to drop the dependent objects too."));
        }
        let notice = if let [one] = deps.as_slice() {
            PgError::new(
                SqlState::SUCCESSFUL_COMPLETION,
                format!("drop cascades to {one}"),
            )
        } else {
            PgError::new(
                SqlState::SUCCESSFUL_COMPLETION,
                format!("drop cascades to {} other objects", deps.len()),
            )
            .with_detail(
                deps.iter()
                    .map(|d| format!("drop cascades to {d}"))
                    .collect::<Vec<_>>()
                    .join("\n"),
            )
        };
        notices(&notice)?;
    }
    let catalog = cx.catalog;
    for ns in schemas {
        catalog.drop_namespace(cx.changes(env)?, env.cid, ns.oid)?;
    }
    Ok("DROP SCHEMA".into())
}
