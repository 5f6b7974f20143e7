//! The system views: every view's name, columns (PostgreSQL 15's names, types
//! and order) and row producer, in one registry.
//!
//! The binder looks a view's columns up through `sql::SystemViews` (which
//! `Registry` implements) and plans a `Plan::SystemView` node; the node's rows
//! are produced here each time the plan runs, from the statement's catalog
//! snapshot (`catalog.rs`, `stats.rs`, `information_schema.rs`) or from the
//! running server (`server.rs`) and the session's own cursors and prepared
//! statements (`session_objects.rs`) and the tables' cumulative statistics
//! (`table_stats.rs`), all through the `ServerState` the
//! session implements. A cached plan over pg_class, pg_stats or pg_stat_activity
//! therefore reads the state of each execution, never of its binding.

mod catalog;
mod describe;
pub(crate) mod indexes;
mod information_schema;
mod locks;
mod roles;
mod server;
mod session_objects;
mod stats;
mod table_stats;
pub(crate) mod triggers;
mod user_types;

use common::{Oid, PgError, PgResult};
use sql::plan::{OutputColumn, ViewScan};
use sql::SystemViewDesc;
use storage::buffer::BufferPool;
use types::{TypeId, Value};

use crate::Row;

pub(crate) use describe::{PG_EXTENSION_CLASS, PLPGSQL_COMMENT, PLPGSQL_EXTENSION};
pub use server::{BackendInfo, CheckpointStats, DatabaseStats, ServerState, SettingInfo, SslInfo};
pub use session_objects::{CursorInfo, PreparedStatementInfo};
pub use stats::array_literal;

/// Which schema a view is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Schema {
    PgCatalog,
    InformationSchema,
}

/// What a view's rows come from, as EXPLAIN names its scan.
#[derive(Debug, Clone, Copy)]
pub enum Source {
    /// A catalog relation (`Seq Scan on pg_class`).
    Relation(&'static str),
    /// A set-returning function (`Function Scan on pg_stat_get_activity`).
    Function(&'static str),
}

/// Everything a view's rows may be made from.
pub struct ViewContext<'a> {
    /// The statement's catalog snapshot.
    pub catalog: &'a ::catalog::CatalogData,
    /// The session's database.
    pub db_oid: Oid,
    pub db_name: &'a str,
    pub pool: &'static BufferPool,
    /// The transaction manager (and through it the WAL's counters).
    pub tm: &'a txn::TransactionManager,
    /// The running server's state (activity, settings, counters).
    pub server: &'a dyn ServerState,
    /// The session's TimeZone (pg_stats shows timestamptz bounds in it).
    pub io: &'a types::IoSettings,
}

/// One system view.
pub struct ViewDef {
    pub schema: Schema,
    pub name: &'static str,
    pub source: Source,
    pub columns: &'static [(&'static str, TypeId)],
    pub rows: fn(&ViewContext<'_>) -> Vec<Row>,
}

impl ViewDef {
    /// The key plans carry: the name, qualified outside pg_catalog.
    pub fn key(&self) -> String {
        match self.schema {
            Schema::PgCatalog => self.name.to_string(),
            Schema::InformationSchema => format!("information_schema.{}", self.name),
        }
    }

    fn matches_key(&self, key: &str) -> bool {
        match self.schema {
            Schema::PgCatalog => key == self.name,
            Schema::InformationSchema => key
                .strip_prefix("information_schema.")
                .is_some_and(|n| n == self.name),
        }
    }

    /// The relation's oid: PostgreSQL's for pg_catalog relations, 0 for others.
    pub fn oid(&self) -> Oid {
        match self.schema {
            Schema::PgCatalog => RELATION_OIDS
                .iter()
                .find(|(n, _)| *n == self.name)
                .map_or(0, |(_, o)| *o),
            Schema::InformationSchema => 0,
        }
    }

    pub fn output_columns(&self) -> Vec<OutputColumn> {
        self.columns
            .iter()
            .map(|(n, t)| OutputColumn::new(n, *t))
            .collect()
    }
}

/// Every system view, by family.
fn families() -> [&'static [ViewDef]; 12] {
    [
        user_types::VIEWS,
        catalog::VIEWS,
        describe::VIEWS,
        indexes::VIEWS,
        stats::VIEWS,
        information_schema::VIEWS,
        server::VIEWS,
        locks::VIEWS,
        session_objects::VIEWS,
        roles::VIEWS,
        table_stats::VIEWS,
        triggers::VIEWS,
    ]
}

fn all() -> impl Iterator<Item = &'static ViewDef> {
    families().into_iter().flatten()
}

/// The view `name` in `schema`.
pub fn lookup(schema: Schema, name: &str) -> Option<&'static ViewDef> {
    all().find(|v| v.schema == schema && v.name == name)
}

/// The current rows of the view a plan node names by `key`.
pub fn rows(key: &str, cx: &ViewContext<'_>) -> PgResult<Vec<Row>> {
    let view = all()
        .find(|v| v.matches_key(key))
        .ok_or_else(|| PgError::internal(format!("no system view {key}")))?;
    let mut rows = (view.rows)(cx);
    // Producers write array columns (acls, reloptions, indkey, ...) in
    // their literal form; they leave here as array values.
    for (i, (_, ty)) in view.columns.iter().enumerate() {
        if !ty.is_array() {
            continue;
        }
        for row in &mut rows {
            if let Some(Value::Text(literal)) = row.get(i) {
                let parsed = types::io::parse_text((*ty).into(), literal, &types::IoSettings::UTC)?;
                row[i] = parsed;
            }
        }
    }
    Ok(rows)
}

/// The registry as the binder sees it.
pub struct Registry;

impl sql::SystemViews for Registry {
    fn lookup(&self, schema: &str, name: &str) -> Option<SystemViewDesc> {
        let schema = match schema {
            "pg_catalog" => Schema::PgCatalog,
            "information_schema" => Schema::InformationSchema,
            _ => return None,
        };
        let v = lookup(schema, name)?;
        Some(SystemViewDesc {
            key: v.key(),
            oid: v.oid(),
            scan: match v.source {
                Source::Relation(r) => ViewScan::Relation(r.to_string()),
                Source::Function(f) => ViewScan::Function(f.to_string()),
            },
            columns: v.output_columns(),
        })
    }

    fn name_by_oid(&self, oid: Oid) -> Option<String> {
        all().find(|v| v.oid() == oid).map(|v| v.key())
    }
}

/// PostgreSQL 15's oids of the pg_catalog relations (and of the views
/// psql asks regclass about), so `'pg_class'::regclass` is 1259 here too.
const RELATION_OIDS: &[(&str, Oid)] = &[
    ("pg_type", 1247),
    ("pg_attribute", 1249),
    ("pg_proc", 1255),
    ("pg_class", 1259),
    ("pg_authid", 1260),
    ("pg_database", 1262),
    ("pg_tablespace", 1213),
    ("pg_am", 2601),
    ("pg_attrdef", 2604),
    ("pg_constraint", 2606),
    ("pg_inherits", 2611),
    ("pg_partitioned_table", 3350),
    ("pg_index", 2610),
    ("pg_operator", 2617),
    ("pg_depend", 2608),
    ("pg_description", 2609),
    ("pg_shdescription", 2396),
    ("pg_rewrite", 2618),
    ("pg_namespace", 2615),
    ("pg_trigger", 2620),
    ("pg_statistic_ext", 3381),
    ("pg_collation", 3456),
    ("pg_extension", 3079),
    ("pg_policy", 3256),
    ("pg_publication", 6104),
    ("pg_publication_rel", 6106),
    ("pg_publication_namespace", 6237),
    ("pg_sequence", 2224),
    ("pg_enum", 3501),
    ("pg_roles", 12000),
    ("pg_tables", 12033),
];

// Value helpers shared by the families.

fn text(s: &str) -> Value {
    Value::Text(s.to_string())
}

fn opt_text(s: Option<&str>) -> Value {
    s.map_or(Value::Null, text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_within_a_schema() {
        let views: Vec<_> = all().collect();
        for (i, a) in views.iter().enumerate() {
            for b in &views[i + 1..] {
                assert!(
                    !(a.schema == b.schema && a.name == b.name),
                    "{} is defined twice",
                    a.name
                );
            }
        }
    }

    #[test]
    fn keys_find_their_view() {
        for v in all() {
            assert!(all()
                .find(|w| w.matches_key(&v.key()))
                .is_some_and(|w| std::ptr::eq(w, v)));
        }
    }
}
