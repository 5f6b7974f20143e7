//! pg_catalog's relations over the catalog snapshot: pg_namespace,
//! pg_database, pg_class, pg_am, pg_tables, pg_attribute, pg_type.
//! Columns are a prefix or subset of PostgreSQL 15's, in its order.

use ::catalog::{CatalogData, Column, Table, BOOTSTRAP_SUPERUSER, PG_CATALOG_NAMESPACE};
use types::TypeId::{self, *};
use types::Value;

use super::{text, Schema, Source, ViewContext, ViewDef};
use crate::Row;

pub(super) static VIEWS: &[ViewDef] = &[
    ViewDef {
        schema: Schema::PgCatalog,
        name: "pg_namespace",
        source: Source::Relation("pg_namespace"),
        columns: &[("oid", Oid), ("nspname", Name), ("nspowner", Oid)],
        rows: pg_namespace,
    },
    ViewDef {
        schema: Schema::PgCatalog,
        name: "pg_database",
        source: Source::Relation("pg_database"),
        columns: &[
            ("oid", Oid),
            ("datname", Name),
            ("datdba", Oid),
            ("encoding", Int4),
            ("datistemplate", Bool),
            ("datallowconn", Bool),
        ],
        rows: pg_database,
    },
    ViewDef {
        schema: Schema::PgCatalog,
        name: "pg_class",
        source: Source::Relation("pg_class"),
        columns: &[
            ("oid", Oid),
            ("relname", Name),
            ("relnamespace", Oid),
            ("relowner", Oid),
            ("relfilenode", Oid),
            ("reltablespace", Oid),
            ("relkind", Text),
            ("relpersistence", Text),
            ("relnatts", Int2),
            ("relhasindex", Bool),
            ("relam", Oid),
            ("relchecks", Int2),
            ("relhasrules", Bool),
            ("relhastriggers", Bool),
            ("relrowsecurity", Bool),
            ("relforcerowsecurity", Bool),
            ("relispartition", Bool),
            ("reltoastrelid", Oid),
            ("reloftype", Oid),
            ("relreplident", Text),
            ("relpages", Int4),
            ("reltuples", Float4),
        ],
        rows: pg_class,
    },
    ViewDef {
        schema: Schema::PgCatalog,
        name: "pg_am",
        source: Source::Relation("pg_am"),
        columns: &[("oid", Oid), ("amname", Name), ("amtype", Text)],
        rows: pg_am,
    },
    ViewDef {
        schema: Schema::PgCatalog,
        name: "pg_tables",
        source: Source::Relation("pg_class"),
        columns: &[
            ("schemaname", Name),
            ("tablename", Name),
            ("tableowner", Name),
        ],
        rows: pg_tables,
    },
    ViewDef {
        schema: Schema::PgCatalog,
        name: "pg_attribute",
        source: Source::Relation("pg_attribute"),
        columns: &[
            ("attrelid", Oid),
            ("attname", Name),
            ("atttypid", Oid),
            ("attlen", Int2),
            ("attnum", Int2),
            ("atttypmod", Int4),
            ("attnotnull", Bool),
            ("atthasdef", Bool),
            ("attisdropped", Bool),
        ],
        rows: pg_attribute,
    },
    ViewDef {
        schema: Schema::PgCatalog,
        name: "pg_type",
        source: Source::Relation("pg_type"),
        columns: &[
            ("oid", Oid),
            ("typname", Name),
            ("typnamespace", Oid),
            ("typlen", Int2),
            ("typtype", Text),
        ],
        rows: pg_type,
    },
];

/// This database's tables.
pub(super) fn tables<'a>(cx: &'a ViewContext<'_>) -> impl Iterator<Item = &'a Table> {
    let db = cx.db_oid;
    cx.catalog.tables.values().filter(move |t| t.db_oid == db)
}

/// Every column of this database's tables: (table, 0-based position, column).
pub(super) fn user_columns<'a>(
    cx: &'a ViewContext<'_>,
) -> impl Iterator<Item = (&'a Table, usize, &'a Column)> {
    tables(cx).flat_map(|t| t.columns.iter().enumerate().map(move |(i, c)| (t, i, c)))
}

/// The name of namespace `oid` ("" if it is gone).
pub(super) fn namespace_name(cat: &CatalogData, oid: u32) -> &str {
    cat.namespaces.get(&oid).map_or("", |n| n.name.as_str())
}

fn pg_namespace(cx: &ViewContext<'_>) -> Vec<Row> {
    cx.catalog
        .namespaces
        .values()
        .filter(|n| n.in_database(cx.db_oid))
        .map(|n| {
            vec![
                Value::Oid(n.oid),
                text(&n.name),
                Value::Oid(BOOTSTRAP_SUPERUSER),
            ]
        })
        .collect()
}

fn pg_database(cx: &ViewContext<'_>) -> Vec<Row> {
    cx.catalog
        .databases
        .values()
        .map(|d| {
            vec![
                Value::Oid(d.oid),
                text(&d.name),
                Value::Oid(d.owner),
                // UTF8
                Value::Int4(6),
                Value::Bool(d.is_template),
                Value::Bool(d.allow_connections),
            ]
        })
        .collect()
}

fn pg_class(cx: &ViewContext<'_>) -> Vec<Row> {
    tables(cx)
        .map(|t| {
            vec![
                Value::Oid(t.oid),
                text(&t.name),
                Value::Oid(t.namespace),
                Value::Oid(BOOTSTRAP_SUPERUSER),
                Value::Oid(t.relfilenode),
                Value::Oid(0),
                text("r"),
                text("p"),
                Value::Int2(t.columns.len() as i16),
                Value::Bool(false),
                // heap
                Value::Oid(2),
                Value::Int2(0),
                Value::Bool(false),
                Value::Bool(false),
                Value::Bool(false),
                Value::Bool(false),
                Value::Bool(false),
                Value::Oid(0),
                Value::Oid(0),
                text("d"),
                Value::Int4(t.relpages as i32),
                Value::Float4(t.reltuples as f32),
            ]
        })
        .collect()
}

fn pg_am(_: &ViewContext<'_>) -> Vec<Row> {
    vec![
        vec![Value::Oid(2), text("heap"), text("t")],
        vec![Value::Oid(403), text("btree"), text("i")],
    ]
}

fn pg_tables(cx: &ViewContext<'_>) -> Vec<Row> {
    tables(cx)
        .map(|t| {
            vec![
                text(namespace_name(cx.catalog, t.namespace)),
                text(&t.name),
                text("postgres"),
            ]
        })
        .collect()
}

fn pg_attribute(cx: &ViewContext<'_>) -> Vec<Row> {
    user_columns(cx)
        .map(|(t, i, c)| {
            vec![
                Value::Oid(t.oid),
                text(&c.name),
                Value::Oid(c.type_oid),
                Value::Int2(c.data_type().id.typlen()),
                Value::Int2(i as i16 + 1),
                Value::Int4(c.typmod),
                Value::Bool(c.not_null),
                Value::Bool(c.default.is_some()),
                Value::Bool(false),
            ]
        })
        .collect()
}

fn pg_type(_: &ViewContext<'_>) -> Vec<Row> {
    TypeId::ALL
        .iter()
        .map(|t| {
            vec![
                Value::Oid(t.oid()),
                text(t.name()),
                Value::Oid(PG_CATALOG_NAMESPACE),
                Value::Int2(t.typlen()),
                text(if *t == TypeId::Unknown { "p" } else { "b" }),
            ]
        })
        .collect()
}
