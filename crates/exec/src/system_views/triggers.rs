//! pg_trigger: this database's triggers (`catalog::triggers`), with
//! PostgreSQL 15's columns. tgargs is bytea, each argument followed by a
//! zero byte, as in PostgreSQL. Stand-ins: tgattr int2[] (int2vector),
//! tgqual the WHEN condition's SQL text (a node tree in PostgreSQL).

use types::{TypeId, Value};

use super::{Schema, Source, ViewContext, ViewDef};
use crate::Row;

pub(super) const VIEWS: &[ViewDef] = &[ViewDef {
    schema: Schema::PgCatalog,
    name: "pg_trigger",
    source: Source::Relation("pg_trigger"),
    columns: &[
        ("oid", TypeId::Oid),
        ("tgrelid", TypeId::Oid),
        ("tgparentid", TypeId::Oid),
        ("tgname", TypeId::Name),
        ("tgfoid", TypeId::Oid),
        ("tgtype", TypeId::Int2),
        ("tgenabled", TypeId::Text),
        ("tgisinternal", TypeId::Bool),
        ("tgconstrrelid", TypeId::Oid),
        ("tgconstrindid", TypeId::Oid),
        ("tgconstraint", TypeId::Oid),
        ("tgdeferrable", TypeId::Bool),
        ("tginitdeferred", TypeId::Bool),
        ("tgnargs", TypeId::Int2),
        ("tgattr", TypeId::Int2Array),
        ("tgargs", TypeId::Bytea),
        ("tgqual", TypeId::Text),
        ("tgoldtable", TypeId::Name),
        ("tgnewtable", TypeId::Name),
    ],
    rows: pg_trigger,
}];

fn pg_trigger(cx: &ViewContext<'_>) -> Vec<Row> {
    cx.catalog
        .triggers
        .values()
        .filter(|t| {
            cx.catalog
                .table_by_oid(t.table)
                .is_some_and(|r| r.db_oid == cx.db_oid)
        })
        .map(|t| {
            let attr = types::array::ArrayValue {
                elem: TypeId::Int2,
                dims: if t.columns.is_empty() {
                    Vec::new()
                } else {
                    vec![types::array::Dim {
                        len: t.columns.len() as i32,
                        lower: 1,
                    }]
                },
                items: t.columns.iter().map(|a| Value::Int2(*a)).collect(),
            };
            let mut args = Vec::new();
            for a in &t.args {
                args.extend_from_slice(a.as_bytes());
                args.push(0);
            }
            vec![
                Value::Oid(t.oid),
                Value::Oid(t.table),
                Value::Oid(0),
                Value::Text(t.name.clone()),
                Value::Oid(t.function),
                Value::Int2(t.tgtype),
                Value::Text(t.enabled.to_string()),
                Value::Bool(false),
                Value::Oid(0),
                Value::Oid(0),
                Value::Oid(0),
                Value::Bool(false),
                Value::Bool(false),
                Value::Int2(t.args.len() as i16),
                Value::array(attr),
                Value::Bytea(args),
                t.when.clone().map_or(Value::Null, Value::Text),
                Value::Null,
                Value::Null,
            ]
        })
        .collect()
}
