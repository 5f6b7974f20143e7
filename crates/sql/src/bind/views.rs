//! `pg_catalog` relations, built from the catalog snapshot as constant rows.

use catalog::{BOOTSTRAP_SUPERUSER, PG_CATALOG_NAMESPACE};
use common::PgResult;
use types::{DataType, TypeId, Value};

use super::Binder;
use crate::plan::{const_row, OutputColumn, Plan};

fn col(name: &str, ty: TypeId) -> OutputColumn {
    OutputColumn::new(name, ty)
}

fn name(s: &str) -> (Value, DataType) {
    (Value::Text(s.to_string()), TypeId::Name.into())
}
fn oid(o: u32) -> (Value, DataType) {
    (Value::Oid(o), TypeId::Oid.into())
}
fn int2(v: i16) -> (Value, DataType) {
    (Value::Int2(v), TypeId::Int2.into())
}
fn int4(v: i32) -> (Value, DataType) {
    (Value::Int4(v), TypeId::Int4.into())
}
fn boolean(v: bool) -> (Value, DataType) {
    (Value::Bool(v), TypeId::Bool.into())
}
fn text(s: &str) -> (Value, DataType) {
    (Value::Text(s.to_string()), TypeId::Text.into())
}

impl Binder<'_, '_> {
    /// The rows of a pg_catalog relation named by `parts`, if it is one.
    pub(crate) fn catalog_view(
        &self,
        parts: &[String],
    ) -> PgResult<Option<(Plan, Vec<OutputColumn>)>> {
        let relname = match parts {
            [n] => n.as_str(),
            [s, n] if s == "pg_catalog" => n.as_str(),
            [s, n] if s == "information_schema" => return Ok(self.information_schema(n)),
            _ => return Ok(None),
        };
        if let Some(cols) = self.ctx.runtime_views.and_then(|v| v.columns(relname)) {
            let plan = Plan::SystemView {
                name: relname.to_string(),
                columns: cols.clone(),
            };
            return Ok(Some((plan, cols)));
        }
        let cat = self.ctx.catalog;
        let db = self.ctx.db_oid;
        let (cols, rows): (Vec<OutputColumn>, Vec<Vec<(Value, DataType)>>) = match relname {
            "pg_namespace" => (
                vec![
                    col("oid", TypeId::Oid),
                    col("nspname", TypeId::Name),
                    col("nspowner", TypeId::Oid),
                ],
                cat.namespaces
                    .values()
                    .map(|n| vec![oid(n.oid), name(&n.name), oid(BOOTSTRAP_SUPERUSER)])
                    .collect(),
            ),
            "pg_database" => (
                vec![
                    col("oid", TypeId::Oid),
                    col("datname", TypeId::Name),
                    col("datdba", TypeId::Oid),
                    col("encoding", TypeId::Int4),
                    col("datistemplate", TypeId::Bool),
                    col("datallowconn", TypeId::Bool),
                ],
                cat.databases
                    .values()
                    .map(|d| {
                        vec![
                            oid(d.oid),
                            name(&d.name),
                            oid(d.owner),
                            int4(6),
                            boolean(d.is_template),
                            boolean(d.allow_connections),
                        ]
                    })
                    .collect(),
            ),
            "pg_class" => (
                vec![
                    col("oid", TypeId::Oid),
                    col("relname", TypeId::Name),
                    col("relnamespace", TypeId::Oid),
                    col("relowner", TypeId::Oid),
                    col("relfilenode", TypeId::Oid),
                    col("reltablespace", TypeId::Oid),
                    col("relkind", TypeId::Text),
                    col("relpersistence", TypeId::Text),
                    col("relnatts", TypeId::Int2),
                    col("relhasindex", TypeId::Bool),
                    col("relam", TypeId::Oid),
                    col("relchecks", TypeId::Int2),
                    col("relhasrules", TypeId::Bool),
                    col("relhastriggers", TypeId::Bool),
                    col("relrowsecurity", TypeId::Bool),
                    col("relforcerowsecurity", TypeId::Bool),
                    col("relispartition", TypeId::Bool),
                    col("reltoastrelid", TypeId::Oid),
                    col("reloftype", TypeId::Oid),
                    col("relreplident", TypeId::Text),
                    col("relpages", TypeId::Int4),
                    col("reltuples", TypeId::Float4),
                ],
                cat.tables
                    .values()
                    .filter(|t| t.db_oid == db)
                    .map(|t| {
                        vec![
                            oid(t.oid),
                            name(&t.name),
                            oid(t.namespace),
                            oid(BOOTSTRAP_SUPERUSER),
                            oid(t.relfilenode),
                            oid(0),
                            text("r"),
                            text("p"),
                            int2(t.columns.len() as i16),
                            boolean(false),
                            oid(2),
                            int2(0),
                            boolean(false),
                            boolean(false),
                            boolean(false),
                            boolean(false),
                            boolean(false),
                            oid(0),
                            oid(0),
                            text("d"),
                            int4(t.relpages as i32),
                            (Value::Float4(t.reltuples as f32), TypeId::Float4.into()),
                        ]
                    })
                    .collect(),
            ),
            "pg_stats" => (super::pg_stats::columns(), super::pg_stats::rows(cat, db)),
            "pg_am" => (
                vec![
                    col("oid", TypeId::Oid),
                    col("amname", TypeId::Name),
                    col("amtype", TypeId::Text),
                ],
                vec![
                    vec![oid(2), name("heap"), text("t")],
                    vec![oid(403), name("btree"), text("i")],
                ],
            ),
            "pg_tables" => (
                vec![
                    col("schemaname", TypeId::Name),
                    col("tablename", TypeId::Name),
                    col("tableowner", TypeId::Name),
                ],
                cat.tables
                    .values()
                    .filter(|t| t.db_oid == db)
                    .map(|t| {
                        let ns = cat
                            .namespaces
                            .get(&t.namespace)
                            .map(|n| n.name.as_str())
                            .unwrap_or("");
                        vec![name(ns), name(&t.name), name("postgres")]
                    })
                    .collect(),
            ),
            "pg_attribute" => (
                vec![
                    col("attrelid", TypeId::Oid),
                    col("attname", TypeId::Name),
                    col("atttypid", TypeId::Oid),
                    col("attlen", TypeId::Int2),
                    col("attnum", TypeId::Int2),
                    col("atttypmod", TypeId::Int4),
                    col("attnotnull", TypeId::Bool),
                    col("atthasdef", TypeId::Bool),
                    col("attisdropped", TypeId::Bool),
                ],
                user_columns(cat, db)
                    .map(|(t, i, c)| {
                        let ty = c.data_type();
                        vec![
                            oid(t.oid),
                            name(&c.name),
                            oid(c.type_oid),
                            int2(ty.id.typlen()),
                            int2(i as i16 + 1),
                            int4(c.typmod),
                            boolean(c.not_null),
                            boolean(c.default.is_some()),
                            boolean(false),
                        ]
                    })
                    .collect(),
            ),
            "pg_type" => (
                vec![
                    col("oid", TypeId::Oid),
                    col("typname", TypeId::Name),
                    col("typnamespace", TypeId::Oid),
                    col("typlen", TypeId::Int2),
                    col("typtype", TypeId::Text),
                ],
                TypeId::ALL
                    .iter()
                    .map(|t| {
                        vec![
                            oid(t.oid()),
                            name(t.name()),
                            oid(PG_CATALOG_NAMESPACE),
                            int2(t.typlen()),
                            text(if *t == TypeId::Unknown { "p" } else { "b" }),
                        ]
                    })
                    .collect(),
            ),
            _ => return Ok(None),
        };
        let width = cols.len();
        let rows = rows.into_iter().map(const_row).collect();
        Ok(Some((Plan::Values { rows, width }, cols)))
    }
}

impl Binder<'_, '_> {
    /// `information_schema.tables` and `.columns` for this database's tables.
    fn information_schema(&self, view: &str) -> Option<(Plan, Vec<OutputColumn>)> {
        let cat = self.ctx.catalog;
        let db = self.ctx.db_oid;
        let schema_of = |ns: u32| {
            cat.namespaces
                .get(&ns)
                .map(|n| n.name.as_str())
                .unwrap_or("")
        };
        let opt_int = |v: Option<i32>| match v {
            Some(i) => (Value::Int4(i), DataType::new(TypeId::Int4)),
            None => (Value::Null, DataType::new(TypeId::Int4)),
        };
        let (cols, rows): (Vec<OutputColumn>, Vec<Vec<(Value, DataType)>>) = match view {
            "tables" => (
                ["table_catalog", "table_schema", "table_name", "table_type"]
                    .iter()
                    .map(|c| col(c, TypeId::Name))
                    .collect(),
                cat.tables
                    .values()
                    .filter(|t| t.db_oid == db)
                    .map(|t| {
                        vec![
                            name(self.ctx.db_name),
                            name(schema_of(t.namespace)),
                            name(&t.name),
                            text("BASE TABLE"),
                        ]
                    })
                    .collect(),
            ),
            "columns" => (
                vec![
                    col("table_catalog", TypeId::Name),
                    col("table_schema", TypeId::Name),
                    col("table_name", TypeId::Name),
                    col("column_name", TypeId::Name),
                    col("ordinal_position", TypeId::Int4),
                    col("column_default", TypeId::Text),
                    col("is_nullable", TypeId::Text),
                    col("data_type", TypeId::Text),
                    col("character_maximum_length", TypeId::Int4),
                    col("numeric_precision", TypeId::Int4),
                    col("numeric_scale", TypeId::Int4),
                ],
                user_columns(cat, db)
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
                            name(self.ctx.db_name),
                            name(schema_of(t.namespace)),
                            name(&t.name),
                            name(&c.name),
                            opt_int(Some(i as i32 + 1)),
                            match &c.default {
                                Some(d) => text(d),
                                None => (Value::Null, DataType::new(TypeId::Text)),
                            },
                            text(if c.not_null { "NO" } else { "YES" }),
                            text(ty.id.display_name()),
                            opt_int(ty.char_length().map(|n| n as i32)),
                            opt_int(precision),
                            opt_int(scale),
                        ]
                    })
                    .collect(),
            ),
            _ => return None,
        };
        let width = cols.len();
        let rows = rows.into_iter().map(const_row).collect();
        Some((Plan::Values { rows, width }, cols))
    }
}

/// Every column of this database's tables: (table, 0-based position, column).
fn user_columns(
    cat: &catalog::CatalogData,
    db: u32,
) -> impl Iterator<Item = (&catalog::Table, usize, &catalog::Column)> {
    cat.tables
        .values()
        .filter(move |t| t.db_oid == db)
        .flat_map(|t| t.columns.iter().enumerate().map(move |(i, c)| (t, i, c)))
}
