//! CREATE TYPE ... AS ENUM, ALTER TYPE (ADD VALUE, RENAME VALUE) and DROP TYPE.

use std::sync::Arc;

use catalog::user_types::UserType;
use common::{Oid, PgError, PgResult, SqlState};
use sql::plan::EnumAlteration;

use super::{CommandContext, Notices};
use crate::ExecEnv;

pub(super) fn create_enum(
    cx: &mut CommandContext,
    env: &ExecEnv,
    namespace: Oid,
    name: &str,
    labels: &[String],
) -> PgResult<String> {
    let catalog = cx.catalog;
    let db = cx.db_oid;
    catalog.create_enum_type(cx.changes(env)?, env.cid, name, namespace, db, labels)?;
    Ok("CREATE TYPE".into())
}

pub(super) fn alter_enum(
    cx: &mut CommandContext,
    env: &ExecEnv,
    notices: &mut Notices,
    type_oid: Oid,
    alteration: &EnumAlteration,
) -> PgResult<String> {
    let catalog = cx.catalog;
    let txn = cx.changes(env)?;
    match alteration {
        EnumAlteration::AddValue {
            label,
            position,
            if_not_exists,
        } => {
            let added =
                catalog.add_enum_label(txn, env.cid, type_oid, label, position, *if_not_exists)?;
            if !added {
                notices(&PgError::new(
                    SqlState::DUPLICATE_OBJECT,
                    format!("enum label \"{label}\" already exists, skipping"),
                ))?;
            }
        }
        EnumAlteration::RenameValue { from, to } => {
            catalog.rename_enum_label(txn, env.cid, type_oid, from, to)?
        }
    }
    Ok("ALTER TYPE".into())
}

pub(super) fn drop(
    cx: &mut CommandContext,
    env: &ExecEnv,
    notices: &mut Notices,
    types: &[Arc<UserType>],
    missing: &[String],
    cascade: bool,
    domain: bool,
) -> PgResult<String> {
    super::notice_missing(notices, "type", missing)?;
    let catalog = cx.catalog;
    let txn = cx.changes(env)?;
    for t in types {
        // No pg_depend: the columns of the catalog are the dependents.
        let cat = txn.catalog().clone();
        let domains = cat
            .user_types
            .values()
            .filter(|d| d.domain.as_ref().is_some_and(|d| d.base_oid == t.oid))
            .map(|d| format!("type {} depends on type {}", d.name, t.name));
        let users: Vec<String> = domains
            .chain(cat.tables.values().flat_map(|table| {
                table
                    .columns
                    .iter()
                    .filter(|c| c.type_oid == t.oid || c.type_oid == t.array_oid)
                    .map(move |c| {
                        format!(
                            "column {} of table {} depends on type {}",
                            c.name, table.name, t.name
                        )
                    })
            }))
            .collect();
        if !users.is_empty() {
            if cascade {
                return Err(PgError::unsupported(
                    "DROP TYPE ... CASCADE of a type columns use is not supported",
                ));
            }
            return Err(PgError::new(
                SqlState::DEPENDENT_OBJECTS_STILL_EXIST,
                format!(
                    "cannot drop type {} because other objects depend on it",
                    t.name
                ),
            )
            .with_detail(users.join("\n"))
            .with_hint("Use DROP ... CASCADE to drop the dependent objects too."));
        }
        catalog.drop_user_type(txn, env.cid, t.oid)?;
    }
    Ok(if domain { "DROP DOMAIN" } else { "DROP TYPE" }.into())
}
