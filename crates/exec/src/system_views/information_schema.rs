//! `information_schema.tables` and `.columns` for this database's tables.

use types::TypeId::*;
use types::{TypeId, Value};

use super::catalog::{namespace_name, tables, user_columns};
use super::{text, Schema, Source, ViewContext, ViewDef};
use crate::Row;

pub(super) static VIEWS: &[ViewDef] = &[
    ViewDef {
        schema: Schema::InformationSchema,
        name: "tables",
        source: Source::Relation("pg_class"),
        columns: &[
            ("table_catalog", Name),
            ("table_schema", Name),
            ("table_name", Name),
            ("table_type", Name),
        ],
        rows: is_tables,
    },
    ViewDef {
        schema: Schema::InformationSchema,
        name: "columns",
        source: Source::Relation("pg_attribute"),
        columns: &[
            ("table_catalog", Name),
            ("table_schema", Name),
            ("table_name", Name),
            ("column_name", Name),
            ("ordinal_position", Int4),
            ("column_default", Text),
            ("is_nullable", Text),
            ("data_type", Text),
            ("character_maximum_length", Int4),
            ("numeric_precision", Int4),
            ("numeric_scale", Int4),
        ],
        rows: is_columns,
    },
];

fn is_tables(cx: &ViewContext<'_>) -> Vec<Row> {
    tables(cx)
        .map(|t| {
            vec![
                text(cx.db_name),
                text(namespace_name(cx.catalog, t.namespace)),
                text(&t.name),
                text("BASE TABLE"),
            ]
        })
        .collect()
}

fn opt_int(v: Option<i32>) -> Value {
    v.map_or(Value::Null, Value::Int4)
}

fn is_columns(cx: &ViewContext<'_>) -> Vec<Row> {
    user_columns(cx)
        .map(|(t, i, c)| {
            let ty = c.data_type();
            let (precision, scale) = match ty.id {
                TypeId::Int2 => (Some(16), Some(0)),
                TypeId::Int4 => (Some(32), Some(0)),
                TypeId::Int8 => (Some(64), Some(0)),
                TypeId::Float4 => (Some(24), None),
                TypeId::Float8 => (Some(53), None),
                TypeId::Numeric if ty.typmod >= 4 => {
                    (Some((ty.typmod - 4) >> 16), Some((ty.typmod - 4) & 0xffff))
                }
                _ => (None, None),
            };
            vec![
                text(cx.db_name),
                text(namespace_name(cx.catalog, t.namespace)),
                text(&t.name),
                text(&c.name),
                opt_int(Some(i as i32 + 1)),
                c.default.as_deref().map_or(Value::Null, text),
                text(if c.not_null { "NO" } else { "YES" }),
                text(ty.id.display_name()),
                opt_int(ty.char_length().map(|n| n as i32)),
                opt_int(precision),
                opt_int(scale),
            ]
        })
        .collect()
}
