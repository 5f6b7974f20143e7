//! CREATE INDEX, DROP INDEX, REINDEX, and table constraints (PRIMARY KEY
//! and UNIQUE own an index), with names chosen as PostgreSQL chooses them.

use std::sync::Arc;

use catalog::{CatalogData, Constraint, ConstraintKind, Index, IndexKey, Table};
use common::{PgError, PgResult, SqlState};
use sql::plan::{ConstraintSpec, ConstraintSpecKind, IndexSpec};

use super::{CommandContext, Notices};
use crate::index_build::build_index;
use crate::ExecEnv;

/// NAMEDATALEN - 1: the longest name PostgreSQL keeps.
const MAX_NAME_BYTES: usize = 63;

/// Cuts `s` to at most `max` bytes on a character boundary.
fn truncate_name(s: &str, max: usize) -> &str {
    let mut end = s.len().min(max);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// PostgreSQL's makeObjectName: `name1_name2_label`, the longer of name1
/// and name2 shortened first until it fits in 63 bytes.
fn make_object_name(name1: &str, name2: Option<&str>, label: &str) -> String {
    let overhead = label.len() + 1 + usize::from(name2.is_some());
    let avail = MAX_NAME_BYTES.saturating_sub(overhead);
    let (mut n1, mut n2) = (name1.len(), name2.map_or(0, str::len));
    while n1 + n2 > avail {
        if n1 > n2 {
            n1 -= 1;
        } else {
            n2 -= 1;
        }
    }
    let mut out = truncate_name(name1, n1).to_string();
    if let Some(n) = name2 {
        out.push('_');
        out.push_str(truncate_name(n, n2));
    }
    out.push('_');
    out.push_str(label);
    out
}

/// PostgreSQL's ChooseRelationName: the first of `t_a_label`, `t_a_label1`,
/// `t_a_label2`, ... that `taken` does not hold.
pub(super) fn choose_name(
    name1: &str,
    name2: Option<&str>,
    label: &str,
    taken: impl Fn(&str) -> bool,
) -> String {
    let mut pass = 0;
    loop {
        let l = if pass == 0 {
            label.to_string()
        } else {
            format!("{label}{pass}")
        };
        let name = make_object_name(name1, name2, &l);
        if !taken(&name) {
            return name;
        }
        pass += 1;
    }
}

/// The key columns' names joined by `_` (ChooseIndexNameAddition).
pub(super) fn column_names(table: &Table, attnums: impl IntoIterator<Item = i16>) -> String {
    let mut out = String::new();
    for a in attnums {
        if !out.is_empty() {
            out.push('_');
        }
        out.push_str(&table.columns[a as usize - 1].name);
        if out.len() >= MAX_NAME_BYTES {
            break;
        }
    }
    out
}

fn relation_taken<'c>(catalog: &'c CatalogData, table: &Table) -> impl Fn(&str) -> bool + 'c {
    let (db, ns) = (table.db_oid, table.namespace);
    move |n: &str| catalog.relation_exists(db, ns, n)
}

/// A constraint's index name avoids the schema's constraint names too
/// (ChooseRelationName's isconstraint).
fn constraint_index_taken<'c>(
    catalog: &'c CatalogData,
    table: &Table,
) -> impl Fn(&str) -> bool + 'c {
    let (db, ns) = (table.db_oid, table.namespace);
    move |n: &str| catalog.relation_exists(db, ns, n) || catalog.constraint_name_used(ns, n)
}

/// Creates and builds an index on `table`.
fn make_index(
    cx: &mut CommandContext,
    env: &ExecEnv,
    table: &Table,
    name: String,
    keys: Vec<IndexKey>,
    unique: bool,
    primary: bool,
) -> PgResult<Index> {
    let catalog = cx.catalog;
    let index = catalog.create_index(
        cx.changes(env)?,
        env.cid,
        Index {
            oid: 0,
            name,
            namespace: table.namespace,
            db_oid: table.db_oid,
            relfilenode: 0,
            table: table.oid,
            keys,
            unique,
            primary,
        },
    )?;
    build_index(env, table, &index)?;
    Ok(index)
}

pub(super) fn create_index(
    cx: &mut CommandContext,
    env: &ExecEnv,
    notices: &mut Notices,
    table: &Table,
    spec: &IndexSpec,
) -> PgResult<String> {
    let current = cx
        .changes
        .as_ref()
        .map_or_else(|| Arc::clone(env.catalog), |c| Arc::clone(c.catalog()));
    let name = match &spec.name {
        Some(n) => {
            if current.relation_exists(table.db_oid, table.namespace, n) {
                if spec.if_not_exists {
                    notices(&PgError::new(
                        SqlState::DUPLICATE_TABLE,
                        format!("relation \"{n}\" already exists, skipping"),
                    ))?;
                    return Ok("CREATE INDEX".into());
                }
                return Err(PgError::new(
                    SqlState::DUPLICATE_TABLE,
                    format!("relation \"{n}\" already exists"),
                ));
            }
            n.clone()
        }
        None => {
            let cols = column_names(table, spec.keys.iter().map(|k| k.attnum));
            choose_name(
                &table.name,
                Some(&cols),
                "idx",
                relation_taken(&current, table),
            )
        }
    };
    if let (true, Some(key)) = (spec.unique, table.partition_key.as_deref()) {
        sql::bind::partition::check_index_covers_key(
            &table.name,
            key,
            &table.columns,
            spec.keys.iter().map(|k| k.attnum),
            "UNIQUE",
        )?;
    }
    make_index(cx, env, table, name, spec.keys.clone(), spec.unique, false)?;
    if table.is_partitioned() {
        // Each partition gets its own index, as partitions created later do.
        let partitions: Vec<Table> = current.partitions_of(table.oid).cloned().collect();
        for part in partitions {
            let keys = spec
                .keys
                .iter()
                .map(|k| {
                    let name = &table.columns[k.attnum as usize - 1].name;
                    let attnum = part.column_index(name).map_or(k.attnum, |i| i as i16 + 1);
                    catalog::IndexKey { attnum, ..*k }
                })
                .collect();
            let child = IndexSpec {
                name: None,
                keys,
                unique: spec.unique,
                if_not_exists: false,
            };
            create_index(cx, env, notices, &part, &child)?;
        }
    }
    Ok("CREATE INDEX".into())
}

/// Adds a constraint to `table` (CREATE TABLE's, `creating`, or ALTER
/// TABLE ADD CONSTRAINT); returns the table as it is afterwards.
pub(super) fn add_constraint(
    cx: &mut CommandContext,
    env: &mut ExecEnv,
    table: &Table,
    spec: &ConstraintSpec,
    creating: bool,
) -> PgResult<Table> {
    let current = Arc::clone(cx.changes(env)?.catalog());
    let mut table = current
        .table_by_oid(table.oid)
        .cloned()
        .unwrap_or_else(|| table.clone());
    match &spec.kind {
        ConstraintSpecKind::PrimaryKey { keys } | ConstraintSpecKind::Unique { keys } => {
            let primary = matches!(spec.kind, ConstraintSpecKind::PrimaryKey { .. });
            if primary {
                if let Some(pk) = current.indexes_of(table.oid).find(|i| i.primary) {
                    let _ = pk;
                    return Err(PgError::new(
                        SqlState::INVALID_TABLE_DEFINITION,
                        format!(
                            "multiple primary keys for table \"{}\" are not allowed",
                            table.name
                        ),
                    ));
                }
                table = set_key_columns_not_null(cx, env, table, keys)?;
            }
            let name = match &spec.name {
                Some(n) => n.clone(),
                None if primary => choose_name(
                    &table.name,
                    None,
                    "pkey",
                    constraint_index_taken(&current, &table),
                ),
                None => {
                    let cols = column_names(&table, keys.iter().map(|k| k.attnum));
                    choose_name(
                        &table.name,
                        Some(&cols),
                        "key",
                        constraint_index_taken(&current, &table),
                    )
                }
            };
            let index = make_index(cx, env, &table, name.clone(), keys.clone(), true, primary)?;
            let kind = if primary {
                ConstraintKind::PrimaryKey { index: index.oid }
            } else {
                ConstraintKind::Unique { index: index.oid }
            };
            let catalog = cx.catalog;
            catalog.add_constraint(
                cx.changes(env)?,
                env.cid,
                Constraint {
                    oid: 0,
                    name,
                    namespace: table.namespace,
                    table: table.oid,
                    columns: keys.iter().map(|k| k.attnum).collect(),
                    kind,
                    deferrable: spec.deferrable,
                    deferred: spec.deferred,
                    validated: true,
                },
            )?;
            if let Some(key) = table.partition_key.as_deref() {
                let what = if primary { "PRIMARY KEY" } else { "UNIQUE" };
                let attnums = keys.iter().map(|k| k.attnum);
                sql::bind::partition::check_index_covers_key(
                    &table.name,
                    key,
                    &table.columns,
                    attnums,
                    what,
                )?;
                // Each partition enforces the key on its own rows.
                let partitions: Vec<Table> = current.partitions_of(table.oid).cloned().collect();
                for part in partitions {
                    let keys = keys
                        .iter()
                        .map(|k| {
                            let name = &table.columns[k.attnum as usize - 1].name;
                            let attnum = part.column_index(name).map_or(k.attnum, |i| i as i16 + 1);
                            IndexKey { attnum, ..*k }
                        })
                        .collect();
                    let child = ConstraintSpec {
                        name: None,
                        kind: if primary {
                            ConstraintSpecKind::PrimaryKey { keys }
                        } else {
                            ConstraintSpecKind::Unique { keys }
                        },
                        ..spec.clone()
                    };
                    add_constraint(cx, env, &part, &child, creating)?;
                }
            }
        }
        ConstraintSpecKind::Check { .. } => {
            super::constraint::add_check(cx, env, &table, spec, creating)?
        }
        ConstraintSpecKind::ForeignKey { .. } => {
            super::constraint::add_foreign_key(cx, env, &table, spec, creating)?
        }
    }
    Ok(table)
}

/// PRIMARY KEY makes its columns NOT NULL, refusing a table that holds a NULL.
fn set_key_columns_not_null(
    cx: &mut CommandContext,
    env: &ExecEnv,
    mut table: Table,
    keys: &[IndexKey],
) -> PgResult<Table> {
    let catalog = cx.catalog;
    for k in keys {
        let index = k.attnum as usize - 1;
        let c = &table.columns[index];
        if c.not_null {
            continue;
        }
        if super::table::has_null(env, &table, index)? {
            return Err(PgError::new(
                SqlState::NOT_NULL_VIOLATION,
                format!(
                    "column \"{}\" of relation \"{}\" contains null values",
                    c.name, table.name
                ),
            ));
        }
        let mut c = c.clone();
        c.not_null = true;
        table = catalog.replace_column(cx.changes(env)?, env.cid, table.oid, index, c)?;
    }
    Ok(table)
}

pub(super) fn drop_constraint(
    cx: &mut CommandContext,
    env: &ExecEnv,
    notices: &mut Notices,
    table: &Table,
    name: &str,
    if_exists: bool,
    cascade: bool,
) -> PgResult<()> {
    let current = Arc::clone(cx.changes(env)?.catalog());
    let Some(c) = current.constraint_by_name(table.oid, name) else {
        let e = PgError::new(
            SqlState::UNDEFINED_OBJECT,
            format!(
                "constraint \"{name}\" of relation \"{}\" does not exist",
                table.name
            ),
        );
        if if_exists {
            return notices(&PgError {
                code: SqlState::SUCCESSFUL_COMPLETION,
                message: format!("{}, skipping", e.message),
                ..e
            });
        }
        return Err(e);
    };
    if let (Some(index), false) = (c.kind.index(), c.kind.code() == 'f') {
        let dropped = format!("constraint {} on table {}", c.name, table.name);
        super::constraint::drop_foreign_keys_on_index(cx, env, notices, index, &dropped, cascade)?;
    }
    let catalog = cx.catalog;
    catalog.drop_constraint(cx.changes(env)?, env.cid, c.oid)
}

pub(super) fn drop_indexes(
    cx: &mut CommandContext,
    env: &ExecEnv,
    notices: &mut Notices,
    indexes: &[Arc<Index>],
    missing: &[String],
    cascade: bool,
) -> PgResult<String> {
    super::notice_missing(notices, "index", missing)?;
    let catalog = cx.catalog;
    for i in indexes {
        let dropped = format!("index {}", i.name);
        super::constraint::drop_foreign_keys_on_index(cx, env, notices, i.oid, &dropped, cascade)?;
        catalog.drop_index(cx.changes(env)?, env.cid, i.oid)?;
    }
    Ok("DROP INDEX".into())
}

/// REINDEX: each index gets a new file, built again from the table.
pub(super) fn reindex(
    cx: &mut CommandContext,
    env: &ExecEnv,
    indexes: &[Arc<Index>],
) -> PgResult<String> {
    let catalog = cx.catalog;
    for i in indexes {
        let index = catalog.new_index_relfilenode(cx.changes(env)?, env.cid, i.oid)?;
        let current = Arc::clone(cx.changes(env)?.catalog());
        let table = current
            .table_by_oid(index.table)
            .ok_or_else(|| PgError::internal("index without table"))?;
        build_index(env, table, &index)?;
    }
    Ok("REINDEX".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_chosen_and_shortened_as_postgresql_does() {
        assert_eq!(make_object_name("t", None, "pkey"), "t_pkey");
        assert_eq!(make_object_name("t", Some("a_b"), "idx"), "t_a_b_idx");
        let long = "x".repeat(70);
        let n = make_object_name(&long, Some("col"), "key");
        assert_eq!(n.len(), 63);
        assert!(n.ends_with("_col_key"));
        let taken = |n: &str| n == "t_a_idx" || n == "t_a_idx1";
        assert_eq!(choose_name("t", Some("a"), "idx", taken), "t_a_idx2");
    }
}
