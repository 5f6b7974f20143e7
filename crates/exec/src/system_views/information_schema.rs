//! `information_schema.tables`, `.columns` and `.schemata` for this database.
//! PostgreSQL's domains over these columns (sql_identifier, character_data,
//! yes_or_no) are their base types here.

use types::TypeId::*;
use types::{TypeId, Value};

use super::catalog::{namespace_name, namespace_owner, tables, user_columns};
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
            ("table_type", Text),
            ("self_referencing_column_name", Name),
            ("reference_generation", Text),
            ("user_defined_type_catalog", Name),
            ("user_defined_type_schema", Name),
            ("user_defined_type_name", Name),
            ("is_insertable_into", Varchar),
            ("is_typed", Varchar),
            ("commit_action", Text),
        ],
        rows: is_tables,
    },
    ViewDef {
        schema: Schema::InformationSchema,
        name: "schemata",
        source: Source::Relation("pg_namespace"),
        columns: &[
            ("catalog_name", Name),
            ("schema_name", Name),
            ("schema_owner", Name),
            ("default_character_set_catalog", Name),
            ("default_character_set_schema", Name),
            ("default_character_set_name", Name),
            ("sql_path", Text),
        ],
        rows: is_schemata,
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
            ("is_identity", Text),
            ("identity_generation", Text),
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
                Value::Null,
                Value::Null,
                Value::Null,
                Value::Null,
                Value::Null,
                text("YES"),
                text("NO"),
                Value::Null,
            ]
        })
        .collect()
}

fn is_schemata(cx: &ViewContext<'_>) -> Vec<Row> {
    cx.catalog
        .namespaces
        .values()
        .map(|n| {
            let owner = sql::reg::role_name(cx.catalog, namespace_owner(n.oid)).unwrap_or("");
            vec![
                text(cx.db_name),
                text(&n.name),
                text(owner),
                Value::Null,
                Value::Null,
                Value::Null,
                Value::Null,
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
                c.default
                    .as_deref()
                    .filter(|_| c.identity.is_none())
                    .map_or(Value::Null, text),
                text(if c.not_null { "NO" } else { "YES" }),
                text(ty.id.display_name()),
                opt_int(ty.char_length().map(|n| n as i32)),
                opt_int(precision),
                opt_int(scale),
                text(if c.identity.is_some() { "YES" } else { "NO" }),
                match c.identity {
                    Some(::catalog::Identity::Always) => text("ALWAYS"),
                    Some(::catalog::Identity::ByDefault) => text("BY DEFAULT"),
                    None => Value::Null,
                },
            ]
        })
        .collect()
}
