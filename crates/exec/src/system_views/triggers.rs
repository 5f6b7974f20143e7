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

/// A trigger's definition as pg_get_triggerdef prints it: `pretty` names
/// a table of a schema on the default search path (public) unqualified.
/// WHEN's condition is printed as written (PostgreSQL deparses it).
pub(crate) fn triggerdef(
    catalog: &::catalog::CatalogData,
    oid: common::Oid,
    pretty: bool,
) -> Option<String> {
    use ::catalog::triggers::{
        TRIGGER_TYPE_DELETE, TRIGGER_TYPE_INSERT, TRIGGER_TYPE_TRUNCATE, TRIGGER_TYPE_UPDATE,
    };
    use sql::plan::explain::quote_ident as quote;
    let t = catalog.triggers.get(&oid)?;
    let table = catalog.table_by_oid(t.table)?;
    let schema = super::catalog::namespace_name(catalog, table.namespace);
    let table_name = if pretty && schema == "public" {
        quote(&table.name)
    } else {
        format!("{}.{}", quote(schema), quote(&table.name))
    };
    let mut events = Vec::new();
    if t.fires_on(TRIGGER_TYPE_INSERT) {
        events.push("INSERT".to_string());
    }
    if t.fires_on(TRIGGER_TYPE_DELETE) {
        events.push("DELETE".to_string());
    }
    if t.fires_on(TRIGGER_TYPE_UPDATE) {
        let mut e = "UPDATE".to_string();
        if !t.columns.is_empty() {
            let cols: Vec<String> = t
                .columns
                .iter()
                .filter_map(|a| table.columns.get(*a as usize - 1))
                .map(|c| quote(&c.name))
                .collect();
            e.push_str(&format!(" OF {}", cols.join(", ")));
        }
        events.push(e);
    }
    if t.fires_on(TRIGGER_TYPE_TRUNCATE) {
        events.push("TRUNCATE".to_string());
    }
    let function = catalog.function_by_oid(t.function)?;
    let fschema = super::catalog::namespace_name(catalog, function.namespace);
    let fname = if fschema == "public" || fschema == "pg_catalog" {
        quote(&function.name)
    } else {
        format!("{}.{}", quote(fschema), quote(&function.name))
    };
    let args: Vec<String> = t
        .args
        .iter()
        .map(|a| format!("'{}'", a.replace('\'', "''")))
        .collect();
    let mut def = format!(
        "CREATE TRIGGER {} {} {} ON {table_name} FOR EACH {}",
        quote(&t.name),
        if t.is_before() { "BEFORE" } else { "AFTER" },
        events.join(" OR "),
        if t.is_row() { "ROW" } else { "STATEMENT" },
    );
    if let Some(w) = &t.when {
        def.push_str(&format!(" WHEN ({w})"));
    }
    def.push_str(&format!(" EXECUTE FUNCTION {fname}({})", args.join(", ")));
    Some(def)
}
