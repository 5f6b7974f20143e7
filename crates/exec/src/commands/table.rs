//! CREATE TABLE (and CREATE TABLE AS), DROP TABLE, TRUNCATE, ALTER TABLE.

use std::sync::Arc;

use access::heap::HeapScan;
use catalog::{Column, Table};
use common::{Oid, PgError, PgResult, SqlState};
use sql::plan::{AlterTableAction, ConstraintSpec, ConstraintSpecKind, Plan};

use super::{CommandContext, Notices};
use crate::ExecEnv;

pub(super) struct CreateTable<'s> {
    pub name: &'s str,
    pub namespace: Oid,
    pub columns: &'s [Column],
    pub if_not_exists: bool,
    /// CREATE TABLE AS's query.
    pub source: Option<&'s Plan>,
    /// Serial columns' sequences (owned by table 0, filled in here).
    pub sequences: &'s [catalog::Sequence],
    pub constraints: &'s [sql::plan::ConstraintSpec],
    /// PARTITION BY / PARTITION OF.
    pub partitioning: Option<&'s sql::bind::partition::PartitionSpec>,
}

pub(super) fn create_table(
    cx: &mut CommandContext,
    env: &mut ExecEnv,
    notices: &mut Notices,
    stmt: CreateTable,
) -> PgResult<String> {
    let name = stmt.name;
    if stmt.if_not_exists && env.catalog.table(cx.db_oid, stmt.namespace, name).is_some() {
        notices(&PgError::new(
            SqlState::DUPLICATE_TABLE,
            format!("relation \"{name}\" already exists, skipping"),
        ))?;
        return Ok("CREATE TABLE".into());
    }
    let (catalog, db) = (cx.catalog, cx.db_oid);
    let table = catalog.create_table(
        cx.changes(env)?,
        env.cid,
        db,
        stmt.namespace,
        name,
        stmt.columns.to_vec(),
    )?;
    for seq in stmt.sequences {
        let mut seq = seq.clone();
        seq.owned_by = seq.owned_by.map(|(_, attnum)| (table.oid, attnum));
        catalog.create_sequence(cx.changes(env)?, env.cid, seq)?;
    }
    // PostgreSQL's order, which decides generated names: CHECKs with the
    // table, then the indexes of PRIMARY KEY and UNIQUE, then FOREIGN KEYs.
    let rank = |c: &&ConstraintSpec| match c.kind {
        ConstraintSpecKind::Check { .. } => 0,
        ConstraintSpecKind::PrimaryKey { .. } | ConstraintSpecKind::Unique { .. } => 1,
        ConstraintSpecKind::ForeignKey { .. } => 2,
    };
    let mut ordered: Vec<&ConstraintSpec> = stmt.constraints.iter().collect();
    ordered.sort_by_key(rank);
    let mut table = table;
    if let Some(spec) = stmt.partitioning {
        table = super::partition::apply(cx, env, notices, table, spec)?;
    }
    for c in ordered {
        table = super::index::add_constraint(cx, env, &table, c, true)?;
    }
    if let Some(plan) = stmt.source {
        let (n, _) = crate::dml::insert(&table, plan, true, None, None, env)?;
        return Ok(format!("SELECT {n}"));
    }
    Ok("CREATE TABLE".into())
}

pub(super) fn drop_tables(
    cx: &mut CommandContext,
    env: &ExecEnv,
    notices: &mut Notices,
    tables: &[Arc<Table>],
    missing: &[String],
    cascade: bool,
) -> PgResult<String> {
    super::notice_missing(notices, "table", missing)?;
    super::constraint::drop_referencing_foreign_keys(cx, env, notices, tables, cascade)?;
    let catalog = cx.catalog;
    for t in tables {
        catalog.drop_table(cx.changes(env)?, env.cid, t.oid)?;
    }
    Ok("DROP TABLE".into())
}

/// Each table gets a new, empty relfilenode; the old files go at commit.
/// A table other tables' foreign keys reference is refused unless those
/// are emptied too (named, or found by CASCADE: `cascaded`).
pub(super) fn truncate(
    cx: &mut CommandContext,
    env: &mut ExecEnv,
    notices: &mut Notices,
    tables: &[Arc<Table>],
    cascaded: &[Arc<Table>],
) -> PgResult<String> {
    for t in cascaded {
        notices(&PgError::new(
            SqlState::SUCCESSFUL_COMPLETION,
            format!("truncate cascades to table \"{}\"", t.name),
        ))?;
    }
    let all: Vec<Arc<Table>> = tables.iter().chain(cascaded).cloned().collect();
    super::constraint::refuse_truncate_referenced(env.catalog, &all)?;
    let mut triggers = Vec::new();
    for t in &all {
        if let Some(tr) = crate::triggers::truncate_triggers(env, t)? {
            tr.before_statement(env)?;
            triggers.push(tr);
        }
    }
    let catalog = cx.catalog;
    for t in &all {
        catalog.new_relfilenode(cx.changes(env)?, env.cid, t.oid)?;
    }
    for tr in &triggers {
        tr.after_statement_now(env)?;
    }
    Ok("TRUNCATE TABLE".into())
}

pub(super) fn add_column(
    cx: &mut CommandContext,
    env: &ExecEnv,
    notices: &mut Notices,
    table: &Table,
    column: &Column,
    if_not_exists: bool,
) -> PgResult<String> {
    add_column_to(cx, env, notices, table.clone(), column, if_not_exists)?;
    Ok("ALTER TABLE".into())
}

/// ADD COLUMN: the table with `column` added, or with IF NOT EXISTS and a
/// column of that name already there, a NOTICE and the table unchanged.
fn add_column_to(
    cx: &mut CommandContext,
    env: &ExecEnv,
    notices: &mut Notices,
    table: Table,
    column: &Column,
    if_not_exists: bool,
) -> PgResult<Table> {
    if if_not_exists && table.column_index(&column.name).is_some() {
        notices(&PgError::new(
            SqlState::DUPLICATE_COLUMN,
            format!(
                "column \"{}\" of relation \"{}\" already exists, skipping",
                column.name, table.name
            ),
        ))?;
        return Ok(table);
    }
    let catalog = cx.catalog;
    catalog.add_column(cx.changes(env)?, env.cid, table.oid, column.clone())
}

/// ALTER TABLE's actions, in order, each on the table as the previous left it.
pub(super) fn alter(
    cx: &mut CommandContext,
    env: &mut ExecEnv,
    notices: &mut Notices,
    table: &Table,
    actions: &[AlterTableAction],
) -> PgResult<String> {
    let catalog = cx.catalog;
    let mut table = table.clone();
    for (i, action) in actions.iter().enumerate() {
        let changes = cx.changes(env)?;
        table = match action {
            AlterTableAction::AddColumn {
                column,
                if_not_exists,
            } => add_column_to(cx, env, notices, table, column, *if_not_exists)?,
            AlterTableAction::FillColumn(update) => {
                // As PostgreSQL's table rewrite, the fill fires no trigger.
                env.fire_triggers = false;
                let filled = crate::dml::run_statement(update, env);
                env.fire_triggers = true;
                filled?;
                // The actions after it (NOT NULL, constraints) check the rows
                // it wrote: they run as the next command.
                let cid = env.hooks.next_command_id();
                let snapshot = env.snapshot.for_command(cid);
                let mut next = env.nested(&snapshot, cid, &[]);
                return alter(cx, &mut next, notices, &table, &actions[i + 1..]);
            }
            AlterTableAction::DropColumn {
                name, index: None, ..
            } => {
                notices(&PgError::new(
                    SqlState::SUCCESSFUL_COMPLETION,
                    format!(
                        "column \"{name}\" of relation \"{}\" does not exist, skipping",
                        table.name
                    ),
                ))?;
                table
            }
            AlterTableAction::DropColumn { index: Some(_), .. } => {
                let rest = &actions[i + 1..];
                return super::alter_column::drop_column(cx, env, notices, &table, action, rest);
            }
            AlterTableAction::AlterColumnType {
                index,
                column,
                using,
            } => {
                let rest = &actions[i + 1..];
                let retype = super::alter_column::Retype {
                    index: *index,
                    column,
                    using,
                };
                return super::alter_column::alter_type(cx, env, notices, &table, retype, rest);
            }
            AlterTableAction::RenameTable(name) => {
                let renamed = catalog.rename_table(changes, env.cid, table.oid, name)?;
                let rename = sql::bind::Rename::Table {
                    old: &table.name,
                    new: name,
                };
                super::constraint::rename_in_checks(cx, env, table.oid, &rename)?;
                renamed
            }
            AlterTableAction::RewriteViews(views) => {
                super::view::rewrite_queries(cx, env, views)?;
                table
            }
            AlterTableAction::RenameColumn { index, name } => {
                let mut c = table.columns[*index].clone();
                c.name = name.clone();
                let renamed = catalog.replace_column(changes, env.cid, table.oid, *index, c)?;
                let rename = sql::bind::Rename::Column {
                    old: &table.columns[*index].name,
                    new: name,
                };
                super::constraint::rename_in_checks(cx, env, table.oid, &rename)?;
                renamed
            }
            AlterTableAction::SetDefault { index, default } => {
                let mut c = table.columns[*index].clone();
                c.default = default.clone();
                catalog.replace_column(changes, env.cid, table.oid, *index, c)?
            }
            AlterTableAction::SetStorage { index, storage } => {
                let mut c = table.columns[*index].clone();
                c.storage = Some(*storage);
                catalog.replace_column(cx.changes(env)?, env.cid, table.oid, *index, c)?
            }
            AlterTableAction::SetCompression { index, compression } => {
                let mut c = table.columns[*index].clone();
                c.compression = *compression;
                catalog.replace_column(cx.changes(env)?, env.cid, table.oid, *index, c)?
            }
            AlterTableAction::SetNotNull { index, not_null } => {
                let c = &table.columns[*index];
                if *not_null && !c.not_null && has_null(env, &table, *index)? {
                    return Err(PgError::new(
                        SqlState::NOT_NULL_VIOLATION,
                        format!(
                            "column \"{}\" of relation \"{}\" contains null values",
                            c.name, table.name
                        ),
                    ));
                }
                let mut c = c.clone();
                c.not_null = *not_null;
                catalog.replace_column(cx.changes(env)?, env.cid, table.oid, *index, c)?
            }
            AlterTableAction::AddConstraint(spec) => {
                super::index::add_constraint(cx, env, &table, spec, false)?
            }
            AlterTableAction::DropConstraint {
                name,
                if_exists,
                cascade,
            } => {
                super::index::drop_constraint(
                    cx, env, notices, &table, name, *if_exists, *cascade,
                )?;
                table
            }
            AlterTableAction::ValidateConstraint(name) => {
                super::constraint::validate(cx, env, &table, name)?;
                table
            }
            AlterTableAction::OwnerUnchanged => table,
        };
    }
    Ok("ALTER TABLE".into())
}

/// Whether a row the statement can see has NULL in column `index`.
pub(super) fn has_null(env: &ExecEnv, table: &Table, index: usize) -> PgResult<bool> {
    let types = table.column_types();
    let mut scan = HeapScan::new(env.pool, table.locator())?;
    let mut values = Vec::with_capacity(types.len());
    let mut found = false;
    while !found
        && scan.next_page(env.snapshot, env.tm, |_, t| {
            access::tuple::deform_tuple(t, &types, table.toast_source(env.pool), &mut values)?;
            found |= values.get(index).is_none_or(|v| v.is_null());
            values.clear();
            Ok(())
        })?
    {
        env.check_cancel()?;
    }
    Ok(found)
}
