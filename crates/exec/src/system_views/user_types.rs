//! The user-defined types' rows of pg_type, and pg_enum.

use catalog::user_types::UserType;
use types::TypeId::{self, *};
use types::Value;

use super::{text, Schema, Source, ViewContext, ViewDef};
use crate::Row;

pub(super) static VIEWS: &[ViewDef] = &[ViewDef {
    schema: Schema::PgCatalog,
    name: "pg_enum",
    source: Source::Relation("pg_enum"),
    columns: &[
        ("oid", Oid),
        ("enumtypid", Oid),
        ("enumsortorder", Float4),
        ("enumlabel", Name),
    ],
    rows: pg_enum,
}];

fn pg_enum(cx: &ViewContext<'_>) -> Vec<Row> {
    cx.catalog
        .user_types_of(cx.db_oid)
        .flat_map(|t| {
            t.labels.iter().map(|l| {
                vec![
                    Value::Oid(l.oid),
                    Value::Oid(t.oid),
                    Value::Float4(l.sort_order),
                    text(&l.label),
                ]
            })
        })
        .collect()
}

/// pg_type's rows of the database's user-defined types: each type and its
/// array type, laid out as `catalog::pg_type` lays out the built-in ones.
pub(super) fn pg_type_rows(cx: &ViewContext<'_>) -> Vec<Row> {
    let mut rows = Vec::new();
    for t in cx.catalog.user_types_of(cx.db_oid) {
        if t.domain.is_some() {
            rows.push(domain_row(t));
            continue;
        }
        rows.push(type_row(t, t.type_id(), false));
        rows.push(type_row(t, TypeId::EnumArray(t.oid), true));
    }
    rows
}

fn type_row(t: &UserType, id: TypeId, array: bool) -> Row {
    let (byval, align, storage) = super::catalog::storage_of(id);
    let functions = types::io_functions::io_functions(id);
    let io = |i: usize| Value::Oid(functions.map_or(0, |f| f[i].oid));
    vec![
        Value::Oid(if array { t.array_oid } else { t.oid }),
        text(&if array {
            format!("_{}", t.name)
        } else {
            t.name.clone()
        }),
        Value::Oid(t.namespace),
        Value::Oid(catalog::BOOTSTRAP_SUPERUSER),
        Value::Int2(if array { -1 } else { 4 }),
        Value::Bool(byval),
        text(if array { "b" } else { "e" }),
        text(if array { "A" } else { "E" }),
        Value::Bool(false),
        Value::Bool(true),
        text(","),
        Value::Oid(0),
        // typsubscript: array_subscript_handler for the array type.
        Value::Oid(if array { 6179 } else { 0 }),
        Value::Oid(if array { t.oid } else { 0 }),
        Value::Oid(if array { 0 } else { t.array_oid }),
        io(0),
        io(1),
        io(2),
        io(3),
        Value::Oid(0),
        Value::Oid(0),
        Value::Oid(0),
        text(align),
        text(storage),
        Value::Bool(false),
        Value::Oid(0),
        Value::Int4(-1),
        Value::Int4(0),
        Value::Oid(0),
        Value::Null,
        Value::Null,
        Value::Null,
    ]
}

/// A domain's row: its base type's layout and output, typtype 'd',
/// domain_in/domain_recv as input functions, and the domain's own columns.
fn domain_row(t: &UserType) -> Row {
    let d = t.domain.as_ref().expect("domain_row of a domain");
    let base = t.type_id();
    let mut row = type_row(t, base, false);
    row[4] = Value::Int2(base.typlen());
    row[6] = text("d");
    row[7] = text(&base.category().to_string());
    row[14] = Value::Oid(0); // typarray: arrays of domains are not supported
    row[15] = Value::Oid(2597); // domain_in
    row[17] = Value::Oid(2598); // domain_recv
    row[24] = Value::Bool(d.not_null);
    row[25] = Value::Oid(d.base_oid);
    row[26] = Value::Int4(d.base_typmod);
    row[30] = d.default.as_deref().map_or(Value::Null, text);
    row
}
