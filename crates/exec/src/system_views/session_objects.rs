//! Views of the session's own named objects: pg_cursors (its open SQL
//! cursors) and pg_prepared_statements (statements prepared by SQL PREPARE
//! or the protocol's Parse). The session lists them through `ServerState`.

use types::TypeId::*;
use types::Value;

use super::{text, Schema, Source, ViewContext, ViewDef};
use crate::Row;

/// One open cursor, as pg_cursors shows it.
#[derive(Debug, Clone)]
pub struct CursorInfo {
    pub name: String,
    /// The whole query string that declared it.
    pub statement: String,
    pub is_holdable: bool,
    pub is_binary: bool,
    pub is_scrollable: bool,
    /// timestamptz microseconds.
    pub creation_time: i64,
}

/// One named prepared statement, as pg_prepared_statements shows it.
#[derive(Debug, Clone)]
pub struct PreparedStatementInfo {
    pub name: String,
    pub statement: String,
    /// timestamptz microseconds.
    pub prepare_time: i64,
    /// The parameters' type names (regtype[] in PostgreSQL, shown as its text).
    pub parameter_types: Vec<String>,
    /// Made by SQL PREPARE rather than the protocol's Parse.
    pub from_sql: bool,
    pub generic_plans: i64,
    pub custom_plans: i64,
}

pub(super) static VIEWS: &[ViewDef] = &[
    ViewDef {
        schema: Schema::PgCatalog,
        name: "pg_cursors",
        source: Source::Function("pg_cursor"),
        columns: &[
            ("name", Text),
            ("statement", Text),
            ("is_holdable", Bool),
            ("is_binary", Bool),
            ("is_scrollable", Bool),
            ("creation_time", Timestamptz),
        ],
        rows: cursors,
    },
    ViewDef {
        schema: Schema::PgCatalog,
        name: "pg_prepared_statements",
        source: Source::Function("pg_prepared_statement"),
        columns: &[
            ("name", Text),
            ("statement", Text),
            ("prepare_time", Timestamptz),
            ("parameter_types", Text),
            ("from_sql", Bool),
            ("generic_plans", Int8),
            ("custom_plans", Int8),
        ],
        rows: prepared_statements,
    },
];

fn cursors(cx: &ViewContext<'_>) -> Vec<Row> {
    cx.server
        .cursors()
        .into_iter()
        .map(|c| {
            vec![
                Value::Text(c.name),
                Value::Text(c.statement),
                Value::Bool(c.is_holdable),
                Value::Bool(c.is_binary),
                Value::Bool(c.is_scrollable),
                Value::Timestamptz(c.creation_time),
            ]
        })
        .collect()
}

fn prepared_statements(cx: &ViewContext<'_>) -> Vec<Row> {
    cx.server
        .prepared_statements()
        .into_iter()
        .map(|p| {
            vec![
                Value::Text(p.name),
                Value::Text(p.statement),
                Value::Timestamptz(p.prepare_time),
                text(&super::array_literal(p.parameter_types)),
                Value::Bool(p.from_sql),
                Value::Int8(p.generic_plans),
                Value::Int8(p.custom_plans),
            ]
        })
        .collect()
}
