//! CREATE TABLE (and CREATE TABLE AS), DROP TABLE, TRUNCATE, ALTER TABLE ADD COLUMN.

use std::sync::Arc;

use access::heap;
use catalog::{Column, Table};
use common::{Oid, PgError, PgResult, SqlState};
use sql::plan::Plan;

use super::{CommandContext, Notices};
use crate::ExecEnv;

pub(super) struct CreateTable<'s> {
    pub name: &'s str,
    pub namespace: Oid,
    pub columns: &'s [Column],
    pub if_not_exists: bool,
    /// CREATE TABLE AS's query.
    pub source: Option<&'s Plan>,
}

pub(super) fn create_table(
    cx: &CommandContext,
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
    let table = cx
        .catalog
        .create_table(cx.db_oid, stmt.namespace, name, stmt.columns.to_vec())?;
    heap::create_storage(env.pool, env.tm.wal(), table.locator())?;
    if let Some(plan) = stmt.source {
        let (n, _) = crate::dml::insert(&table, plan, true, None, env)?;
        return Ok(format!("SELECT {n}"));
    }
    Ok("CREATE TABLE".into())
}

pub(super) fn drop_tables(
    cx: &CommandContext,
    env: &ExecEnv,
    notices: &mut Notices,
    tables: &[Arc<Table>],
    missing: &[String],
) -> PgResult<String> {
    for m in missing {
        notices(&PgError::new(
            SqlState::SUCCESSFUL_COMPLETION,
            format!("table \"{m}\" does not exist, skipping"),
        ))?;
    }
    for t in tables {
        cx.catalog.drop_table(t.oid)?;
        heap::drop_storage(env.pool, env.tm.wal(), t.locator())?;
    }
    Ok("DROP TABLE".into())
}

/// Each table gets a new, empty relfilenode; the old files go.
pub(super) fn truncate(
    cx: &CommandContext,
    env: &ExecEnv,
    tables: &[Arc<Table>],
) -> PgResult<String> {
    for t in tables {
        let (old, new) = cx.catalog.new_relfilenode(t.oid)?;
        heap::create_storage(env.pool, env.tm.wal(), new.locator())?;
        heap::drop_storage(env.pool, env.tm.wal(), old)?;
    }
    Ok("TRUNCATE TABLE".into())
}

pub(super) fn add_column(
    cx: &CommandContext,
    notices: &mut Notices,
    table: &Table,
    column: &Column,
    if_not_exists: bool,
) -> PgResult<String> {
    if table.column_index(&column.name).is_some() && if_not_exists {
        notices(&PgError::new(
            SqlState::DUPLICATE_COLUMN,
            format!(
                "column \"{}\" of relation \"{}\" already exists, skipping",
                column.name, table.name
            ),
        ))?;
    } else {
        cx.catalog.add_column(table.oid, column.clone())?;
    }
    Ok("ALTER TABLE".into())
}
