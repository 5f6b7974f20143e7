//! pg_stat_all_tables, pg_stat_user_tables and pg_stat_sys_tables: each
//! table of the database with its cumulative statistics
//! (`crate::table_stats`, through `ServerState::table_counters`). There are
//! no indexes: idx_scan and idx_tup_fetch are NULL, as PostgreSQL shows
//! them for a table without any. Our catalog relations keep no counters,
//! so pg_stat_sys_tables has no rows yet.

use std::sync::atomic::Ordering::Relaxed;

use types::TypeId::*;
use types::Value;

use super::catalog::{namespace_name, tables};
use super::{text, Schema, Source, ViewContext, ViewDef};
use crate::Row;

const COLUMNS: &[(&str, types::TypeId)] = &[
    ("relid", Oid),
    ("schemaname", Name),
    ("relname", Name),
    ("seq_scan", Int8),
    ("seq_tup_read", Int8),
    ("idx_scan", Int8),
    ("idx_tup_fetch", Int8),
    ("n_tup_ins", Int8),
    ("n_tup_upd", Int8),
    ("n_tup_del", Int8),
    ("n_tup_hot_upd", Int8),
    ("n_live_tup", Int8),
    ("n_dead_tup", Int8),
    ("n_mod_since_analyze", Int8),
    ("n_ins_since_vacuum", Int8),
    ("last_vacuum", Timestamptz),
    ("last_autovacuum", Timestamptz),
    ("last_analyze", Timestamptz),
    ("last_autoanalyze", Timestamptz),
    ("vacuum_count", Int8),
    ("autovacuum_count", Int8),
    ("analyze_count", Int8),
    ("autoanalyze_count", Int8),
];

pub(super) static VIEWS: &[ViewDef] = &[
    ViewDef {
        schema: Schema::PgCatalog,
        name: "pg_stat_all_tables",
        source: Source::Relation("pg_class"),
        columns: COLUMNS,
        rows: |cx| rows(cx, |_| true),
    },
    ViewDef {
        schema: Schema::PgCatalog,
        name: "pg_stat_user_tables",
        source: Source::Relation("pg_class"),
        columns: COLUMNS,
        rows: |cx| rows(cx, |s| !is_system_schema(s)),
    },
    ViewDef {
        schema: Schema::PgCatalog,
        name: "pg_stat_sys_tables",
        source: Source::Relation("pg_class"),
        columns: COLUMNS,
        rows: |cx| rows(cx, is_system_schema),
    },
];

fn is_system_schema(s: &str) -> bool {
    s == "pg_catalog" || s == "information_schema" || s.starts_with("pg_toast")
}

fn rows(cx: &ViewContext<'_>, schema_wanted: fn(&str) -> bool) -> Vec<Row> {
    let int = |v: u64| Value::Int8(v as i64);
    let time = |v: i64| {
        if v == 0 {
            Value::Null
        } else {
            Value::Timestamptz(v)
        }
    };
    tables(cx)
        .filter(|t| schema_wanted(namespace_name(cx.catalog, t.namespace)))
        .map(|t| {
            let c = cx
                .server
                .table_counters(cx.db_oid, t.oid)
                .unwrap_or_default();
            let has_index = cx.catalog.indexes_of(t.oid).next().is_some();
            vec![
                Value::Oid(t.oid),
                text(namespace_name(cx.catalog, t.namespace)),
                text(&t.name),
                int(c.seq_scan.load(Relaxed)),
                int(c.seq_tup_read.load(Relaxed)),
                // PostgreSQL shows NULL for a table without indexes.
                if has_index {
                    int(c.idx_scan.load(Relaxed))
                } else {
                    Value::Null
                },
                if has_index {
                    int(c.idx_tup_fetch.load(Relaxed))
                } else {
                    Value::Null
                },
                int(c.n_tup_ins.load(Relaxed)),
                int(c.n_tup_upd.load(Relaxed)),
                int(c.n_tup_del.load(Relaxed)),
                int(c.n_tup_hot_upd.load(Relaxed)),
                Value::Int8(c.n_live_tup.load(Relaxed)),
                Value::Int8(c.n_dead_tup.load(Relaxed)),
                Value::Int8(c.n_mod_since_analyze.load(Relaxed)),
                Value::Int8(c.n_ins_since_vacuum.load(Relaxed)),
                time(c.last_vacuum.load(Relaxed)),
                time(c.last_autovacuum.load(Relaxed)),
                time(c.last_analyze.load(Relaxed)),
                time(c.last_autoanalyze.load(Relaxed)),
                int(c.vacuum_count.load(Relaxed)),
                int(c.autovacuum_count.load(Relaxed)),
                int(c.analyze_count.load(Relaxed)),
                int(c.autoanalyze_count.load(Relaxed)),
            ]
        })
        .collect()
}
