//! What the catalog describes: databases, schemas, roles, tables and their
//! columns, as the relcache holds them.

use std::collections::BTreeMap;
use std::sync::Arc;

use access::toast::{ColumnToast, Compression, Storage, ToastSource};
use common::ids::DEFAULT_TABLESPACE_OID;
use common::{Oid, RelFileLocator};
use types::{DataType, TypeId};

use crate::relations::RowIndex;
use crate::stats;
use crate::{
    BOOTSTRAP_SUPERUSER, INFORMATION_SCHEMA_NAMESPACE, PG_CATALOG_NAMESPACE, POSTGRES_DB_OID,
    PUBLIC_NAMESPACE, TEMPLATE1_OID,
};

#[derive(Debug, Clone, PartialEq)]
pub struct Column {
    pub name: String,
    pub type_oid: Oid,
    pub typmod: i32,
    pub not_null: bool,
    /// DEFAULT expression as SQL text.
    pub default: Option<String>,
    /// pg_attribute.attstorage when set apart from the type's default
    /// (`SET STORAGE`, `CREATE TABLE ... STORAGE`).
    pub storage: Option<Storage>,
    /// pg_attribute.attcompression (None: default_toast_compression).
    pub compression: Option<Compression>,
    /// pg_attribute.attidentity: an identity column takes its values from
    /// the sequence it owns, through `default` (nextval, as a serial
    /// column's), which the catalog views do not show as a default.
    pub identity: Option<Identity>,
}

/// GENERATED { ALWAYS | BY DEFAULT } AS IDENTITY.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Identity {
    /// Values given in INSERT or UPDATE are refused (428C9) unless
    /// OVERRIDING SYSTEM VALUE.
    Always,
    ByDefault,
}

impl Identity {
    /// pg_attribute.attidentity's code.
    pub fn code(self) -> char {
        match self {
            Identity::Always => 'a',
            Identity::ByDefault => 'd',
        }
    }
    pub fn from_code(c: char) -> Option<Identity> {
        match c {
            'a' => Some(Identity::Always),
            'd' => Some(Identity::ByDefault),
            _ => None,
        }
    }
}

impl Column {
    /// A column of the type's defaults (no default value, nullable).
    pub fn new(name: &str, type_oid: Oid, typmod: i32) -> Column {
        Column {
            name: name.to_owned(),
            type_oid,
            typmod,
            not_null: false,
            default: None,
            storage: None,
            compression: None,
            identity: None,
        }
    }
    /// The storage its values are written with.
    pub fn effective_storage(&self) -> Storage {
        self.storage
            .unwrap_or_else(|| Storage::default_for(self.data_type().id))
    }
    pub fn data_type(&self) -> DataType {
        DataType::with_typmod(
            TypeId::from_oid(self.type_oid).expect("catalog holds known types"),
            self.typmod,
        )
    }
}

/// pg_class's size figures, as VACUUM and ANALYZE store them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ClassSizes {
    pub reltuples: f64,
    pub relpages: u32,
    pub relallvisible: u32,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    pub oid: Oid,
    pub name: String,
    pub namespace: Oid,
    pub db_oid: Oid,
    pub relfilenode: Oid,
    pub columns: Vec<Column>,
    /// pg_class.reltuples: rows counted (or extrapolated) by the last ANALYZE,
    /// -1 when never analysed (PostgreSQL 14's convention).
    pub reltuples: f64,
    /// pg_class.relpages: the main fork's blocks at the last ANALYZE.
    pub relpages: u32,
    /// pg_class.relallvisible: pages the visibility map called all-visible
    /// at the last VACUUM or ANALYZE (index-only scans' heap fetch estimate).
    pub relallvisible: u32,
    /// pg_statistic rows of this table, one per analysed column, by attnum.
    /// Shared: binding clones the table for every statement that names it.
    pub statistics: Arc<Vec<stats::ColumnStats>>,
    /// Its TOAST relation (pg_class.reltoastrelid), made with the table
    /// when a column's values can be toasted.
    pub toast: Option<ToastRelation>,
    /// PARTITION BY's key: the table is partitioned (relkind 'p'), its rows
    /// live in its partitions (its own file stays empty).
    pub partition_key: Option<Arc<crate::partition::PartitionKey>>,
    /// PARTITION OF: the parent and bound of a partition (relispartition).
    pub partition_of: Option<Arc<crate::partition::PartitionOf>>,
}

/// A table's TOAST relation: no pg_class row of its own here (the table's
/// row holds both numbers); SQL sees one as `pg_toast.pg_toast_<table oid>`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ToastRelation {
    pub oid: Oid,
    pub relfilenode: Oid,
}

/// Whether a table with these columns needs a TOAST relation.
pub fn needs_toast(columns: &[Column]) -> bool {
    columns
        .iter()
        .any(|c| access::toast::is_varlena(c.data_type().id))
}

impl Table {
    pub fn locator(&self) -> RelFileLocator {
        RelFileLocator {
            spc_oid: DEFAULT_TABLESPACE_OID,
            db_oid: self.db_oid,
            rel_number: self.relfilenode,
        }
    }
    pub fn column_types(&self) -> Vec<DataType> {
        self.columns.iter().map(Column::data_type).collect()
    }
    pub fn toast_locator(&self) -> Option<RelFileLocator> {
        self.toast.map(|t| RelFileLocator {
            spc_oid: DEFAULT_TABLESPACE_OID,
            db_oid: self.db_oid,
            rel_number: t.relfilenode,
        })
    }
    /// Where its values moved out of line are read from.
    pub fn toast_source(&self, pool: &'static storage::buffer::BufferPool) -> Option<ToastSource> {
        self.toast_locator().map(|rel| ToastSource { pool, rel })
    }
    /// How each column's values are toasted, `default` being
    /// default_toast_compression.
    pub fn column_toast(&self, default: Compression) -> Vec<ColumnToast> {
        self.columns
            .iter()
            .map(|c| ColumnToast {
                storage: c.effective_storage(),
                compression: c.compression.unwrap_or(default),
            })
            .collect()
    }
    pub fn column_index(&self, name: &str) -> Option<usize> {
        self.columns.iter().position(|c| c.name == name)
    }
    /// The statistics of column `index` (0-based), if ANALYZE made some.
    pub fn column_stats(&self, index: usize) -> Option<&stats::ColumnStats> {
        self.statistics
            .iter()
            .find(|s| s.attnum as usize == index + 1)
    }
    /// Whether ANALYZE has run on the table (reltuples is known).
    pub fn analysed(&self) -> bool {
        self.reltuples >= 0.0
    }
    /// Whether it is a partitioned table (relkind 'p').
    pub fn is_partitioned(&self) -> bool {
        self.partition_key.is_some()
    }
    /// pg_class.relkind: 'p' for a partitioned table, else 'r'.
    pub fn relkind(&self) -> char {
        if self.is_partitioned() {
            'p'
        } else {
            'r'
        }
    }
}

/// A view: its query's SQL text, expanded by the binder where the view is
/// named, and its output columns (names and types; no defaults).
#[derive(Debug, Clone, PartialEq)]
pub struct View {
    pub oid: Oid,
    pub name: String,
    pub namespace: Oid,
    pub db_oid: Oid,
    pub query: String,
    pub columns: Vec<Column>,
}

/// A sequence: a relation of kind `S` whose one page holds its state
/// (`access::sequence`), with CREATE SEQUENCE's parameters.
#[derive(Debug, Clone, PartialEq)]
pub struct Sequence {
    pub oid: Oid,
    pub name: String,
    pub namespace: Oid,
    pub db_oid: Oid,
    pub relfilenode: Oid,
    /// int2, int4 or int8: bounds the default min and max.
    pub type_oid: Oid,
    pub start: i64,
    pub increment: i64,
    pub min: i64,
    pub max: i64,
    pub cache: i64,
    pub cycle: bool,
    /// The column it belongs to (serial, OWNED BY): dropped with its table.
    pub owned_by: Option<(Oid, i16)>,
}

impl Sequence {
    pub fn locator(&self) -> RelFileLocator {
        RelFileLocator {
            spc_oid: DEFAULT_TABLESPACE_OID,
            db_oid: self.db_oid,
            rel_number: self.relfilenode,
        }
    }
}

#[derive(Debug, Clone)]
pub struct Database {
    pub oid: Oid,
    pub name: String,
    pub owner: Oid,
    pub allow_connections: bool,
    pub is_template: bool,
}

#[derive(Debug, Clone)]
pub struct Namespace {
    pub oid: Oid,
    pub name: String,
    /// The database it belongs to; 0 for the built-in schemas, which every
    /// database has.
    pub db_oid: Oid,
}

impl Namespace {
    /// Whether the schema is visible from database `db`.
    pub fn in_database(&self, db: Oid) -> bool {
        self.db_oid == 0 || self.db_oid == db
    }

    /// Whether this is a session's temporary schema (`pg_temp_N`).
    pub fn is_temp(&self) -> bool {
        is_temp_schema_name(&self.name)
    }
}

/// Whether `name` is a session's temporary schema: `pg_temp_` and a number,
/// as PostgreSQL names them (`pg_temp` alone is an alias, not a schema).
pub fn is_temp_schema_name(name: &str) -> bool {
    name.strip_prefix("pg_temp_")
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

#[derive(Debug, Clone)]
pub struct Role {
    pub oid: Oid,
    pub name: String,
    pub superuser: bool,
    /// rolpassword: a `SCRAM-SHA-256$...` or `md5...` verifier, never plaintext.
    pub password: Option<String>,
    /// The other pg_authid attributes (CREATE/ALTER ROLE options).
    pub attrs: RoleAttributes,
}

/// pg_authid's attributes besides rolsuper and rolpassword, PostgreSQL's
/// names in the comments. Kept apart from `Role` so a role is built with
/// `RoleAttributes::default()` (PostgreSQL's CREATE ROLE defaults).
#[derive(Debug, Clone, PartialEq)]
pub struct RoleAttributes {
    /// rolinherit
    pub inherit: bool,
    /// rolcreaterole
    pub create_role: bool,
    /// rolcreatedb
    pub create_db: bool,
    /// rolcanlogin
    pub can_login: bool,
    /// rolreplication
    pub replication: bool,
    /// rolbypassrls
    pub bypass_rls: bool,
    /// rolconnlimit: -1 for no limit.
    pub conn_limit: i32,
    /// rolvaliduntil: microseconds since 2000-01-01 UTC (timestamptz).
    pub valid_until: Option<i64>,
}

impl Default for RoleAttributes {
    /// CREATE ROLE's defaults: INHERIT, nothing else, no limit.
    fn default() -> Self {
        RoleAttributes {
            inherit: true,
            create_role: false,
            create_db: false,
            can_login: false,
            replication: false,
            bypass_rls: false,
            conn_limit: -1,
            valid_until: None,
        }
    }
}

impl RoleAttributes {
    /// What initdb gives the bootstrap superuser: every attribute.
    pub fn all() -> Self {
        RoleAttributes {
            inherit: true,
            create_role: true,
            create_db: true,
            can_login: true,
            replication: true,
            bypass_rls: true,
            conn_limit: -1,
            valid_until: None,
        }
    }
}

/// One consistent version of the whole catalog: what the relcache holds
/// (built from the catalog relations' rows, see `relations.rs`).
#[derive(Debug, Clone, Default)]
pub struct CatalogData {
    pub databases: BTreeMap<Oid, Database>,
    pub namespaces: BTreeMap<Oid, Namespace>,
    pub roles: BTreeMap<Oid, Role>,
    pub tables: BTreeMap<Oid, Table>,
    pub views: BTreeMap<Oid, View>,
    pub sequences: BTreeMap<Oid, Sequence>,
    pub indexes: BTreeMap<Oid, crate::indexes::Index>,
    pub constraints: BTreeMap<Oid, crate::indexes::Constraint>,
    /// COMMENT ON's comments by object (`comments.rs`).
    pub comments: BTreeMap<crate::comments::ObjectAddress, String>,
    /// User-defined functions by oid (`functions.rs`).
    pub functions: BTreeMap<Oid, Arc<crate::functions::Function>>,
    /// Triggers by oid (`triggers.rs`).
    pub triggers: BTreeMap<Oid, Arc<crate::triggers::Trigger>>,
    /// User-defined types by oid (`user_types.rs`).
    pub user_types: BTreeMap<Oid, Arc<crate::user_types::UserType>>,
    /// Where each object's current row version is (to delete or replace it).
    pub(crate) rows: RowIndex,
}

impl CatalogData {
    /// A fresh cluster's catalog: template1, postgres, the built-in schemas
    /// and the bootstrap superuser.
    pub fn bootstrap() -> Self {
        let mut d = CatalogData::default();
        for (oid, name, template) in [
            (TEMPLATE1_OID, "template1", true),
            (POSTGRES_DB_OID, "postgres", false),
        ] {
            d.databases.insert(
                oid,
                Database {
                    oid,
                    name: name.into(),
                    owner: BOOTSTRAP_SUPERUSER,
                    allow_connections: true,
                    is_template: template,
                },
            );
        }
        for (oid, name) in [
            (PG_CATALOG_NAMESPACE, "pg_catalog"),
            (PUBLIC_NAMESPACE, "public"),
            (INFORMATION_SCHEMA_NAMESPACE, "information_schema"),
        ] {
            d.namespaces.insert(
                oid,
                Namespace {
                    oid,
                    name: name.into(),
                    db_oid: 0,
                },
            );
        }
        d.roles.insert(
            BOOTSTRAP_SUPERUSER,
            Role {
                oid: BOOTSTRAP_SUPERUSER,
                name: "postgres".into(),
                superuser: true,
                password: None,
                attrs: RoleAttributes::all(),
            },
        );
        d
    }

    pub fn database_by_name(&self, name: &str) -> Option<&Database> {
        self.databases.values().find(|d| d.name == name)
    }
    /// Schema `name` of database `db`.
    /// Whether `oid` is a temporary schema (its relations are temporary).
    pub fn is_temp_namespace(&self, oid: Oid) -> bool {
        self.namespaces.get(&oid).is_some_and(Namespace::is_temp)
    }
    pub fn namespace_by_name(&self, db: Oid, name: &str) -> Option<&Namespace> {
        self.namespaces
            .values()
            .find(|n| n.name == name && n.in_database(db))
    }
    pub fn role_by_name(&self, name: &str) -> Option<&Role> {
        self.roles.values().find(|r| r.name == name)
    }
    /// The databases role `oid` owns (what DROP ROLE refuses to orphan).
    pub fn databases_owned_by(&self, oid: Oid) -> impl Iterator<Item = &Database> {
        self.databases.values().filter(move |d| d.owner == oid)
    }
    pub fn table(&self, db: Oid, namespace: Oid, name: &str) -> Option<&Table> {
        self.tables
            .values()
            .find(|t| t.db_oid == db && t.namespace == namespace && t.name == name)
    }
    pub fn view(&self, db: Oid, namespace: Oid, name: &str) -> Option<&View> {
        self.views
            .values()
            .find(|v| v.db_oid == db && v.namespace == namespace && v.name == name)
    }
    pub fn sequence(&self, db: Oid, namespace: Oid, name: &str) -> Option<&Sequence> {
        self.sequences
            .values()
            .find(|s| s.db_oid == db && s.namespace == namespace && s.name == name)
    }
    /// The oid of the relation (table, view or sequence) of that name in the schema.
    pub fn relation_oid(&self, db: Oid, namespace: Oid, name: &str) -> Option<Oid> {
        self.table(db, namespace, name)
            .map(|t| t.oid)
            .or_else(|| self.view(db, namespace, name).map(|v| v.oid))
            .or_else(|| self.sequence(db, namespace, name).map(|s| s.oid))
            .or_else(|| self.index(db, namespace, name).map(|i| i.oid))
    }
    /// Whether a relation of that name is in the schema.
    pub fn relation_exists(&self, db: Oid, namespace: Oid, name: &str) -> bool {
        self.relation_oid(db, namespace, name).is_some()
    }
    /// A relation's name, schema and database by oid.
    pub fn relation_by_oid(&self, oid: Oid) -> Option<(&str, Oid, Oid)> {
        if let Some(t) = self.tables.get(&oid) {
            return Some((&t.name, t.namespace, t.db_oid));
        }
        if let Some(v) = self.views.get(&oid) {
            return Some((&v.name, v.namespace, v.db_oid));
        }
        if let Some(i) = self.indexes.get(&oid) {
            return Some((&i.name, i.namespace, i.db_oid));
        }
        self.sequences
            .get(&oid)
            .map(|s| (s.name.as_str(), s.namespace, s.db_oid))
    }
    pub fn table_by_oid(&self, oid: Oid) -> Option<&Table> {
        self.tables.get(&oid)
    }
}
