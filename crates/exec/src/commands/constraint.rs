//! CHECK and FOREIGN KEY constraints: adding them (existing rows checked
//! unless NOT VALID), VALIDATE CONSTRAINT, and the foreign keys that go
//! with a dropped table or unique constraint (refused without CASCADE,
//! dropped with a NOTICE with it, as PostgreSQL's dependency machinery).

use std::sync::Arc;

use catalog::{CatalogData, Constraint, ConstraintKind, Index, Table};
use common::{Oid, PgError, PgResult, SqlState};
use sql::plan::{ConstraintSpec, ConstraintSpecKind};
use types::TypeId;

use super::index::{choose_name, column_names};
use super::{CommandContext, Notices};
use crate::ri::ForeignKey;
use crate::ExecEnv;

/// Names a generated constraint name must avoid: every constraint's in the
/// schema (PostgreSQL's ChooseConstraintName).
fn constraint_taken(catalog: &CatalogData, namespace: Oid) -> impl Fn(&str) -> bool + '_ {
    move |n: &str| catalog.constraint_name_used(namespace, n)
}

/// 42710 for an explicit name the table's constraints already use (CREATE
/// TABLE's duplicate CHECK names are worded as PostgreSQL words them).
fn refuse_duplicate(
    catalog: &CatalogData,
    table: &Table,
    name: &str,
    creating: bool,
) -> PgResult<()> {
    match catalog.constraint_by_name(table.oid, name) {
        Some(c) if creating && matches!(c.kind, ConstraintKind::Check { .. }) => Err(PgError::new(
            SqlState::DUPLICATE_OBJECT,
            format!("check constraint \"{name}\" already exists"),
        )),
        Some(_) => Err(PgError::new(
            SqlState::DUPLICATE_OBJECT,
            format!(
                "constraint \"{name}\" for relation \"{}\" already exists",
                table.name
            ),
        )),
        None => Ok(()),
    }
}

/// ADD CONSTRAINT ... CHECK (or CREATE TABLE's): named `t_a_check` when it
/// reads one column, `t_check` otherwise.
pub(super) fn add_check(
    cx: &mut CommandContext,
    env: &mut ExecEnv,
    table: &Table,
    spec: &ConstraintSpec,
    creating: bool,
) -> PgResult<()> {
    let ConstraintSpecKind::Check { expr, columns, .. } = &spec.kind else {
        unreachable!("a CHECK constraint");
    };
    let current = Arc::clone(cx.changes(env)?.catalog());
    let name = match &spec.name {
        Some(n) => {
            refuse_duplicate(&current, table, n, creating)?;
            n.clone()
        }
        None => {
            let column = match columns.as_slice() {
                [c] => Some(table.columns[*c].name.as_str()),
                _ => None,
            };
            choose_name(
                &table.name,
                column,
                "check",
                constraint_taken(&current, table.namespace),
            )
        }
    };
    if !spec.not_valid {
        let bound = crate::checks::bind(env, table, expr)?;
        crate::checks::validate(env, table, &name, &bound)?;
    }
    let catalog = cx.catalog;
    catalog.add_constraint(
        cx.changes(env)?,
        env.cid,
        Constraint {
            oid: 0,
            name,
            namespace: table.namespace,
            table: table.oid,
            columns: columns.iter().map(|&c| c as i16 + 1).collect(),
            kind: ConstraintKind::Check { expr: expr.clone() },
            deferrable: false,
            deferred: false,
            validated: !spec.not_valid,
        },
    )?;
    Ok(())
}

/// Whether referencing column type `fk` can reference `pk` (PostgreSQL's
/// test: an equality operator of the referenced index's operator family
/// takes both, or `fk` converts to `pk` implicitly).
fn comparable(fk: TypeId, pk: TypeId) -> bool {
    use TypeId::*;
    let family = |t: TypeId| match t {
        Int2 | Int4 | Int8 => 1,
        Float4 | Float8 => 2,
        Date | Timestamp | Timestamptz => 3,
        Text | Varchar | Name => 4,
        Bytea => 5,
        Uuid => 6,
        Inet | Cidr => 7,
        _ => 0,
    };
    fk == pk
        || (family(fk) != 0 && family(fk) == family(pk))
        || types::cast::can_cast(fk, pk, types::cast::CastContext::Implicit)
}

/// The referenced table's unique index for `columns` (0-based, any order)
/// that a foreign key can use: PostgreSQL's transformFkeyCheckAttrs.
fn referenced_index<'c>(
    catalog: &'c CatalogData,
    parent: &Table,
    columns: &[usize],
) -> PgResult<&'c Index> {
    let mut deferrable = false;
    for i in catalog.indexes_of(parent.oid).filter(|i| i.unique) {
        let same = i.keys.len() == columns.len()
            && i.keys
                .iter()
                .all(|k| columns.contains(&(k.attnum as usize - 1)));
        if !same {
            continue;
        }
        if catalog
            .constraint_of_index(i.oid)
            .is_some_and(|c| c.deferrable)
        {
            deferrable = true;
            continue;
        }
        return Ok(i);
    }
    if deferrable {
        return Err(PgError::new(
            SqlState::OBJECT_NOT_IN_PREREQUISITE_STATE,
            format!(
                "cannot use a deferrable unique constraint for referenced table \"{}\"",
                parent.name
            ),
        ));
    }
    Err(PgError::new(
        SqlState::INVALID_FOREIGN_KEY,
        format!(
            "there is no unique constraint matching given keys for referenced table \"{}\"",
            parent.name
        ),
    ))
}

/// ADD CONSTRAINT ... FOREIGN KEY (or CREATE TABLE's REFERENCES): the
/// referenced key (the primary key when no columns are named) needs a
/// unique index and comparable types; named `t_a_b_fkey`.
pub(super) fn add_foreign_key(
    cx: &mut CommandContext,
    env: &mut ExecEnv,
    table: &Table,
    spec: &ConstraintSpec,
    creating: bool,
) -> PgResult<()> {
    let ConstraintSpecKind::ForeignKey {
        columns,
        ref_table,
        ref_columns,
        on_delete,
        on_update,
        match_full,
    } = &spec.kind
    else {
        unreachable!("a FOREIGN KEY constraint");
    };
    let current = Arc::clone(cx.changes(env)?.catalog());
    let parent = match *ref_table {
        0 => table.clone(),
        oid => current
            .table_by_oid(oid)
            .cloned()
            .ok_or_else(|| PgError::internal("referenced table vanished"))?,
    };
    let (index, ref_cols): (&Index, Vec<usize>) = if ref_columns.is_empty() {
        let Some(pk) = current.indexes_of(parent.oid).find(|i| i.primary) else {
            return Err(PgError::new(
                SqlState::UNDEFINED_OBJECT,
                format!(
                    "there is no primary key for referenced table \"{}\"",
                    parent.name
                ),
            ));
        };
        if current
            .constraint_of_index(pk.oid)
            .is_some_and(|c| c.deferrable)
        {
            return Err(PgError::new(
                SqlState::OBJECT_NOT_IN_PREREQUISITE_STATE,
                format!(
                    "cannot use a deferrable primary key for referenced table \"{}\"",
                    parent.name
                ),
            ));
        }
        let cols = pk.keys.iter().map(|k| k.attnum as usize - 1).collect();
        (pk, cols)
    } else {
        (
            referenced_index(&current, &parent, ref_columns)?,
            ref_columns.clone(),
        )
    };
    if columns.len() != ref_cols.len() {
        return Err(PgError::new(
            SqlState::INVALID_FOREIGN_KEY,
            "number of referencing and referenced columns for foreign key disagree",
        ));
    }
    let name = match &spec.name {
        Some(n) => {
            refuse_duplicate(&current, table, n, creating)?;
            n.clone()
        }
        None => {
            let cols = column_names(table, columns.iter().map(|&c| c as i16 + 1));
            choose_name(
                &table.name,
                Some(&cols),
                "fkey",
                constraint_taken(&current, table.namespace),
            )
        }
    };
    for (&c, &p) in columns.iter().zip(&ref_cols) {
        let (fk_type, pk_type) = (table.columns[c].data_type(), parent.columns[p].data_type());
        if !comparable(fk_type.id, pk_type.id) {
            return Err(PgError::new(
                SqlState::DATATYPE_MISMATCH,
                format!("foreign key constraint \"{name}\" cannot be implemented"),
            )
            .with_detail(format!(
                "Key columns \"{}\" and \"{}\" are of incompatible types: {} and {}.",
                table.columns[c].name,
                parent.columns[p].name,
                sql::bind::format_type(fk_type),
                sql::bind::format_type(pk_type),
            )));
        }
    }
    let constraint = Constraint {
        oid: 0,
        name,
        namespace: table.namespace,
        table: table.oid,
        columns: columns.iter().map(|&c| c as i16 + 1).collect(),
        kind: ConstraintKind::ForeignKey {
            ref_table: parent.oid,
            ref_columns: ref_cols.iter().map(|&c| c as i16 + 1).collect(),
            ref_index: index.oid,
            on_delete: *on_delete,
            on_update: *on_update,
            match_full: *match_full,
        },
        deferrable: spec.deferrable,
        deferred: spec.deferred,
        validated: !spec.not_valid,
    };
    if !spec.not_valid {
        let fk = ForeignKey::resolve(&current, &constraint)
            .ok_or_else(|| PgError::internal("foreign key does not resolve"))?;
        crate::ri::validate_foreign_key(&fk, env)?;
    }
    let catalog = cx.catalog;
    catalog.add_constraint(cx.changes(env)?, env.cid, constraint)?;
    Ok(())
}

/// VALIDATE CONSTRAINT: a NOT VALID constraint's existing rows are checked
/// and it is marked validated; others are valid already.
pub(super) fn validate(
    cx: &mut CommandContext,
    env: &mut ExecEnv,
    table: &Table,
    name: &str,
) -> PgResult<()> {
    let current = Arc::clone(cx.changes(env)?.catalog());
    let Some(c) = current.constraint_by_name(table.oid, name) else {
        return Err(PgError::new(
            SqlState::UNDEFINED_OBJECT,
            format!(
                "constraint \"{name}\" of relation \"{}\" does not exist",
                table.name
            ),
        ));
    };
    if c.validated {
        return Ok(());
    }
    match &c.kind {
        ConstraintKind::Check { expr } => {
            let bound = crate::checks::bind(env, table, expr)?;
            crate::checks::validate(env, table, &c.name, &bound)?;
        }
        ConstraintKind::ForeignKey { .. } => {
            let fk = ForeignKey::resolve(&current, c)
                .ok_or_else(|| PgError::internal("foreign key does not resolve"))?;
            crate::ri::validate_foreign_key(&fk, env)?;
        }
        _ => {}
    }
    let mut c = c.clone();
    c.validated = true;
    let catalog = cx.catalog;
    catalog.replace_constraint(cx.changes(env)?, env.cid, c)
}

/// A renamed column or table in the text of the table's CHECK constraints.
pub(super) fn rename_in_checks(
    cx: &mut CommandContext,
    env: &ExecEnv,
    table: Oid,
    rename: &sql::bind::Rename<'_>,
) -> PgResult<()> {
    let current = Arc::clone(cx.changes(env)?.catalog());
    for c in current.constraints_of(table) {
        let ConstraintKind::Check { expr } = &c.kind else {
            continue;
        };
        if let Some(text) = sql::bind::rename_in_check(expr, rename)? {
            let mut c = c.clone();
            c.kind = ConstraintKind::Check { expr: text };
            let catalog = cx.catalog;
            catalog.replace_constraint(cx.changes(env)?, env.cid, c)?;
        }
    }
    Ok(())
}

/// `constraint c_p_fkey on table c`, as PostgreSQL names a dependent.
fn describe(catalog: &CatalogData, c: &Constraint) -> String {
    let table = catalog
        .table_by_oid(c.table)
        .map_or("", |t| t.name.as_str());
    format!("constraint {} on table {table}", c.name)
}

/// The NOTICE for objects dropped along (one named, several counted).
pub(super) fn cascade_notice(dropped: &[String]) -> PgError {
    match dropped {
        [one] => PgError::new(
            SqlState::SUCCESSFUL_COMPLETION,
            format!("drop cascades to {one}"),
        ),
        many => PgError::new(
            SqlState::SUCCESSFUL_COMPLETION,
            format!("drop cascades to {} other objects", many.len()),
        )
        .with_detail(
            many.iter()
                .map(|d| format!("drop cascades to {d}"))
                .collect::<Vec<_>>()
                .join("\n"),
        ),
    }
}

/// DROP TABLE: other tables' foreign keys referencing the dropped ones
/// refuse the drop (2BP01), or with CASCADE go first with a NOTICE.
pub(super) fn drop_referencing_foreign_keys(
    cx: &mut CommandContext,
    env: &ExecEnv,
    notices: &mut Notices,
    tables: &[Arc<Table>],
    cascade: bool,
) -> PgResult<()> {
    let current = Arc::clone(cx.changes(env)?.catalog());
    let dropped = |oid: Oid| tables.iter().any(|t| t.oid == oid);
    let mut deps: Vec<(&Constraint, &Table)> = Vec::new();
    for t in tables {
        for fk in current.foreign_keys_referencing(t.oid) {
            if !dropped(fk.table) {
                deps.push((fk, t));
            }
        }
    }
    if deps.is_empty() {
        return Ok(());
    }
    if !cascade {
        let message = match tables {
            [one] => format!(
                "cannot drop table {} because other objects depend on it",
                one.name
            ),
            _ => "cannot drop desired object(s) because other objects depend on them".into(),
        };
        let detail = deps
            .iter()
            .map(|(c, t)| format!("{} depends on table {}", describe(&current, c), t.name))
            .collect::<Vec<_>>()
            .join("\n");
        return Err(
            PgError::new(SqlState::DEPENDENT_OBJECTS_STILL_EXIST, message)
                .with_detail(detail)
                .with_hint("Use DROP ... CASCADE to drop the dependent objects too."),
        );
    }
    let names: Vec<String> = deps.iter().map(|(c, _)| describe(&current, c)).collect();
    notices(&cascade_notice(&names))?;
    let catalog = cx.catalog;
    for (c, _) in deps {
        catalog.drop_constraint(cx.changes(env)?, env.cid, c.oid)?;
    }
    Ok(())
}

/// Dropping a unique index (`dropped`: `index u_idx`, or the PRIMARY KEY
/// or UNIQUE constraint owning it, `constraint t_pkey on table t`) that
/// foreign keys rely on: refused (2BP01), or with CASCADE they go first.
pub(super) fn drop_foreign_keys_on_index(
    cx: &mut CommandContext,
    env: &ExecEnv,
    notices: &mut Notices,
    index: Oid,
    dropped: &str,
    cascade: bool,
) -> PgResult<()> {
    let current = Arc::clone(cx.changes(env)?.catalog());
    let deps: Vec<&Constraint> = current
        .constraints
        .values()
        .filter(|c| {
            matches!(c.kind, ConstraintKind::ForeignKey { ref_index, .. } if ref_index == index)
        })
        .collect();
    if deps.is_empty() {
        return Ok(());
    }
    let index_name = current.indexes.get(&index).map_or("", |i| i.name.as_str());
    let names: Vec<String> = deps.iter().map(|c| describe(&current, c)).collect();
    if !cascade {
        return Err(PgError::new(
            SqlState::DEPENDENT_OBJECTS_STILL_EXIST,
            format!("cannot drop {dropped} because other objects depend on it"),
        )
        .with_detail(
            names
                .iter()
                .map(|n| format!("{n} depends on index {index_name}"))
                .collect::<Vec<_>>()
                .join("\n"),
        )
        .with_hint("Use DROP ... CASCADE to drop the dependent objects too."));
    }
    notices(&cascade_notice(&names))?;
    let catalog = cx.catalog;
    for c in deps {
        catalog.drop_constraint(cx.changes(env)?, env.cid, c.oid)?;
    }
    Ok(())
}

/// TRUNCATE: a table referenced by a foreign key of a table not emptied
/// with it is refused (0A000), as PostgreSQL's heap_truncate_check_FKs.
pub(super) fn refuse_truncate_referenced(
    catalog: &CatalogData,
    tables: &[Arc<Table>],
) -> PgResult<()> {
    let truncated = |oid: Oid| tables.iter().any(|t| t.oid == oid);
    for t in tables {
        if let Some(fk) = catalog
            .foreign_keys_referencing(t.oid)
            .find(|c| !truncated(c.table))
        {
            let child = catalog
                .table_by_oid(fk.table)
                .map_or("", |c| c.name.as_str());
            return Err(PgError::new(
                SqlState::FEATURE_NOT_SUPPORTED,
                "cannot truncate a table referenced in a foreign key constraint",
            )
            .with_detail(format!("Table \"{child}\" references \"{}\".", t.name))
            .with_hint(format!(
                "Truncate table \"{child}\" at the same time, or use TRUNCATE ... CASCADE."
            )));
        }
    }
    Ok(())
}
