//! The system catalog: databases, schemas, tables and their columns, roles.
//!
//! Stored durably by the server in `global/pg_catalog.json`, rewritten
//! atomically (write, fsync, rename, fsync directory) on every DDL. Readers
//! take a cheap `Arc` snapshot of the whole catalog, so a statement sees one
//! consistent version even while DDL runs. DDL is not transactional yet: it
//! takes effect at once, even inside a transaction block that later rolls back.
//!
//! Lock order: `Catalog::ddl` (serialises writers) before `Catalog::current`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use common::ids::{DEFAULT_TABLESPACE_OID, GLOBAL_TABLESPACE_OID};
use common::{Oid, PgError, PgResult, RelFileLocator, SqlState};
use parking_lot::{Mutex, RwLock};
use serde::{Deserialize, Serialize};
use types::{DataType, TypeId};

pub mod stats;

pub const PG_CATALOG_NAMESPACE: Oid = 11;
pub const PUBLIC_NAMESPACE: Oid = 2200;
pub const INFORMATION_SCHEMA_NAMESPACE: Oid = 13000;
pub const BOOTSTRAP_SUPERUSER: Oid = 10;
pub const TEMPLATE1_OID: Oid = 1;
pub const POSTGRES_DB_OID: Oid = 5;
pub const FIRST_NORMAL_OID: Oid = 16384;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Column {
    pub name: String,
    pub type_oid: Oid,
    pub typmod: i32,
    pub not_null: bool,
    /// DEFAULT expression as SQL text.
    pub default: Option<String>,
}

impl Column {
    pub fn data_type(&self) -> DataType {
        DataType::with_typmod(
            TypeId::from_oid(self.type_oid).expect("catalog holds known types"),
            self.typmod,
        )
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Table {
    pub oid: Oid,
    pub name: String,
    pub namespace: Oid,
    pub db_oid: Oid,
    pub relfilenode: Oid,
    pub columns: Vec<Column>,
    /// pg_class.reltuples: rows counted (or extrapolated) by the last ANALYZE,
    /// -1 when never analysed (PostgreSQL 14's convention).
    #[serde(default = "never_analysed")]
    pub reltuples: f64,
    /// pg_class.relpages: the main fork's blocks at the last ANALYZE.
    #[serde(default)]
    pub relpages: u32,
    /// pg_statistic rows of this table, one per analysed column, by attnum.
    /// Shared: binding clones the table for every statement that names it.
    #[serde(default, skip_serializing_if = "stats::none", with = "stats::shared")]
    pub statistics: Arc<Vec<stats::ColumnStats>>,
}

fn never_analysed() -> f64 {
    -1.0
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
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Database {
    pub oid: Oid,
    pub name: String,
    pub owner: Oid,
    pub allow_connections: bool,
    pub is_template: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Namespace {
    pub oid: Oid,
    pub name: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Role {
    pub oid: Oid,
    pub name: String,
    pub superuser: bool,
    /// rolpassword: a `SCRAM-SHA-256$...` or `md5...` verifier, never plaintext.
    #[serde(default)]
    pub password: Option<String>,
}

/// One consistent version of the whole catalog.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CatalogData {
    /// The next OID to hand out; only `assign_oid` (inside `Catalog::modify`,
    /// so the change is written with the DDL that used it) advances it.
    pub next_oid: Oid,
    pub databases: BTreeMap<Oid, Database>,
    pub namespaces: BTreeMap<Oid, Namespace>,
    pub roles: BTreeMap<Oid, Role>,
    pub tables: BTreeMap<Oid, Table>,
}

impl CatalogData {
    /// A fresh cluster's catalog: template1, postgres, the built-in schemas
    /// and the bootstrap superuser.
    pub fn bootstrap() -> Self {
        let mut d = CatalogData {
            next_oid: FIRST_NORMAL_OID,
            databases: BTreeMap::new(),
            namespaces: BTreeMap::new(),
            roles: BTreeMap::new(),
            tables: BTreeMap::new(),
        };
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
            },
        );
        d
    }

    pub fn database_by_name(&self, name: &str) -> Option<&Database> {
        self.databases.values().find(|d| d.name == name)
    }
    pub fn namespace_by_name(&self, name: &str) -> Option<&Namespace> {
        self.namespaces.values().find(|n| n.name == name)
    }
    pub fn role_by_name(&self, name: &str) -> Option<&Role> {
        self.roles.values().find(|r| r.name == name)
    }
    pub fn table(&self, db: Oid, namespace: Oid, name: &str) -> Option<&Table> {
        self.tables
            .values()
            .find(|t| t.db_oid == db && t.namespace == namespace && t.name == name)
    }
    pub fn table_by_oid(&self, oid: Oid) -> Option<&Table> {
        self.tables.get(&oid)
    }
    /// Hands out a new OID. Only on the copy a DDL edits (`Catalog::modify`):
    /// the advanced counter is written durably with the object that uses it.
    pub fn assign_oid(&mut self) -> Oid {
        let o = self.next_oid;
        self.next_oid += 1;
        o
    }
}

pub struct Catalog {
    path: PathBuf,
    ddl: Mutex<()>,
    current: RwLock<Arc<CatalogData>>,
    /// Where each new version is logged before the file is replaced.
    wal: std::sync::OnceLock<&'static wal::Wal>,
}

/// The catalog's log record: the whole new catalog (rmgr CATALOG).
pub const CATALOG_IMAGE: u8 = 0x00;

fn io_error(what: &str, path: &Path, e: std::io::Error) -> PgError {
    PgError::new(
        SqlState::IO_ERROR,
        format!("could not {what} \"{}\": {e}", path.display()),
    )
}

impl Catalog {
    /// Opens the catalog of `data_dir`, creating the bootstrap catalog if absent.
    pub fn open(data_dir: &Path) -> PgResult<Catalog> {
        let path = catalog_path(data_dir);
        let data = match std::fs::read(&path) {
            Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| {
                PgError::new(
                    SqlState::DATA_CORRUPTED,
                    format!("catalog file is corrupt: {e}"),
                )
            })?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let d = CatalogData::bootstrap();
                write_atomically(&path, &serde_json::to_vec(&d).expect("catalog serialises"))?;
                d
            }
            Err(e) => return Err(io_error("read", &path, e)),
        };
        Ok(Catalog {
            path,
            ddl: Mutex::new(()),
            current: RwLock::new(Arc::new(data)),
            wal: std::sync::OnceLock::new(),
        })
    }

    /// From now on every catalog version is logged (after recovery).
    pub fn attach_wal(&self, wal: &'static wal::Wal) {
        let _ = self.wal.set(wal);
    }

    /// The current catalog version.
    pub fn snapshot(&self) -> Arc<CatalogData> {
        self.current.read().clone()
    }

    /// Applies a DDL change: `f` edits a copy, which is written durably and
    /// then published. An error from `f` leaves the catalog unchanged.
    pub fn modify<R>(&self, f: impl FnOnce(&mut CatalogData) -> PgResult<R>) -> PgResult<R> {
        let _ddl = self.ddl.lock();
        let mut copy = (**self.current.read()).clone();
        let r = f(&mut copy)?;
        let bytes = serde_json::to_vec(&copy).expect("catalog serialises");
        if let Some(wal) = self.wal.get() {
            let mut rec = wal::RecordBuilder::new(wal::rmgr::CATALOG, CATALOG_IMAGE, 0);
            rec.main_data().extend_from_slice(&bytes);
            let end = wal.insert(&rec)?;
            wal.flush(end)?;
        }
        write_atomically(&self.path, &bytes)?;
        *self.current.write() = Arc::new(copy);
        Ok(r)
    }

    /// Creates a table; returns it. Errors: 42P07 if it exists.
    pub fn create_table(
        &self,
        db: Oid,
        namespace: Oid,
        name: &str,
        columns: Vec<Column>,
    ) -> PgResult<Table> {
        self.modify(|c| {
            if c.table(db, namespace, name).is_some() {
                return Err(PgError::new(
                    SqlState::DUPLICATE_TABLE,
                    format!("relation \"{name}\" already exists"),
                ));
            }
            let oid = c.assign_oid();
            let t = Table {
                oid,
                name: name.to_owned(),
                namespace,
                db_oid: db,
                relfilenode: oid,
                columns,
                reltuples: -1.0,
                relpages: 0,
                statistics: Arc::default(),
            };
            c.tables.insert(oid, t.clone());
            Ok(t)
        })
    }

    pub fn drop_table(&self, oid: Oid) -> PgResult<Option<Table>> {
        self.modify(|c| Ok(c.tables.remove(&oid)))
    }

    /// Gives the table a new, empty relfilenode (TRUNCATE); returns the old locator.
    pub fn new_relfilenode(&self, oid: Oid) -> PgResult<(RelFileLocator, Table)> {
        self.modify(|c| {
            let node = c.assign_oid();
            let t = c
                .tables
                .get_mut(&oid)
                .ok_or_else(|| PgError::internal("table vanished"))?;
            let old = t.locator();
            t.relfilenode = node;
            Ok((old, t.clone()))
        })
    }

    /// Stores what ANALYZE found (pg_class.reltuples/relpages and the
    /// pg_statistic rows of the analysed columns, replacing theirs): a DDL
    /// write, so the catalog version changes and cached plans are made again.
    pub fn update_statistics(
        &self,
        oid: Oid,
        reltuples: f64,
        relpages: u32,
        columns: Vec<stats::ColumnStats>,
    ) -> PgResult<()> {
        self.modify(|c| {
            let Some(t) = c.tables.get_mut(&oid) else {
                // Dropped while ANALYZE ran: nothing to keep.
                return Ok(());
            };
            t.reltuples = reltuples;
            t.relpages = relpages;
            let all = Arc::make_mut(&mut t.statistics);
            for s in columns {
                all.retain(|o| o.attnum != s.attnum);
                all.push(s);
            }
            all.sort_by_key(|s| s.attnum);
            Ok(())
        })
    }

    pub fn add_column(&self, oid: Oid, column: Column) -> PgResult<Table> {
        self.modify(|c| {
            let t = c
                .tables
                .get_mut(&oid)
                .ok_or_else(|| PgError::internal("table vanished"))?;
            if t.column_index(&column.name).is_some() {
                return Err(PgError::new(
                    SqlState::DUPLICATE_COLUMN,
                    format!(
                        "column \"{}\" of relation \"{}\" already exists",
                        column.name, t.name
                    ),
                ));
            }
            t.columns.push(column);
            Ok(t.clone())
        })
    }

    /// Creates a database owned by the bootstrap superuser. Errors: 42P04 if
    /// the name is taken.
    pub fn create_database(&self, name: &str) -> PgResult<Database> {
        self.modify(|c| {
            if c.database_by_name(name).is_some() {
                return Err(PgError::new(
                    SqlState::DUPLICATE_DATABASE,
                    format!("database \"{name}\" already exists"),
                ));
            }
            let oid = c.assign_oid();
            let db = Database {
                oid,
                name: name.to_owned(),
                owner: BOOTSTRAP_SUPERUSER,
                allow_connections: true,
                is_template: false,
            };
            c.databases.insert(oid, db.clone());
            Ok(db)
        })
    }

    /// Removes a database and its tables' entries; returns those tables
    /// (their storage is the caller's to drop).
    pub fn drop_database(&self, oid: Oid) -> PgResult<Vec<Table>> {
        self.modify(|c| {
            c.databases.remove(&oid);
            let tables: Vec<Oid> = c
                .tables
                .values()
                .filter(|t| t.db_oid == oid)
                .map(|t| t.oid)
                .collect();
            Ok(tables.iter().filter_map(|t| c.tables.remove(t)).collect())
        })
    }

    /// Sets (or with None clears) a role's password verifier. Errors: 42704
    /// if there is no such role.
    pub fn set_role_password(&self, name: &str, verifier: Option<String>) -> PgResult<()> {
        self.modify(|c| {
            let role = c
                .roles
                .values_mut()
                .find(|r| r.name == name)
                .ok_or_else(|| {
                    PgError::new(
                        SqlState::UNDEFINED_OBJECT,
                        format!("role \"{name}\" does not exist"),
                    )
                })?;
            role.password = verifier;
            Ok(())
        })
    }
}

/// The catalog file of a data directory.
pub fn catalog_path(data_dir: &Path) -> PathBuf {
    data_dir.join("global").join("pg_catalog.json")
}

/// Redo of catalog records: the logged version replaces the file, so after
/// replay the file holds the last version logged.
pub struct CatalogRedo {
    pub path: PathBuf,
}

impl wal::Redo for CatalogRedo {
    fn redo(&self, rec: &wal::Record<'_>) -> Result<(), wal::RedoError> {
        if rec.info != CATALOG_IMAGE {
            return Err(wal::RedoError::new(rec, "unknown catalog record kind"));
        }
        serde_json::from_slice::<CatalogData>(rec.main)
            .map_err(|e| wal::RedoError::new(rec, format!("catalog image does not parse: {e}")))?;
        write_atomically(&self.path, rec.main).map_err(|e| wal::RedoError::new(rec, e.message))
    }
}

fn write_atomically(path: &Path, bytes: &[u8]) -> PgResult<()> {
    let dir = path.parent().expect("catalog path has a parent");
    std::fs::create_dir_all(dir).map_err(|e| io_error("create directory", dir, e))?;
    common::durable::replace_file(path, bytes, true).map_err(|(op, file, e)| io_error(op, &file, e))
}

/// Tablespace oid of shared catalogs (for pg_relation_filepath of those).
pub const GLOBAL_TABLESPACE: Oid = GLOBAL_TABLESPACE_OID;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_from_before_analyze_load_as_never_analysed() {
        let json = r#"{"oid":16384,"name":"t","namespace":2200,"db_oid":5,
            "relfilenode":16384,"columns":[]}"#;
        let t: Table = serde_json::from_str(json).unwrap();
        assert!(!t.analysed());
        assert_eq!((t.reltuples, t.relpages), (-1.0, 0));
        assert!(t.statistics.is_empty());
    }

    #[test]
    fn statistics_replace_per_column_and_change_the_version() {
        let dir = tempfile::tempdir().unwrap();
        let c = Catalog::open(dir.path()).unwrap();
        let col = |n: &str| Column {
            name: n.into(),
            type_oid: 23,
            typmod: -1,
            not_null: false,
            default: None,
        };
        let t = c
            .create_table(
                POSTGRES_DB_OID,
                PUBLIC_NAMESPACE,
                "t",
                vec![col("a"), col("b")],
            )
            .unwrap();
        let st = |attnum, nd| stats::ColumnStats {
            attnum,
            data_type: DataType::new(TypeId::Int4),
            null_frac: 0.0,
            avg_width: 4,
            n_distinct: nd,
            mcv: vec![],
            mcv_freqs: vec![],
            histogram: vec![types::Value::Int4(1), types::Value::Int4(9)],
            correlation: Some(1.0),
        };
        let before = c.snapshot();
        c.update_statistics(t.oid, 10.0, 1, vec![st(2, 5.0), st(1, 3.0)])
            .unwrap();
        c.update_statistics(t.oid, 12.0, 1, vec![st(2, 6.0)])
            .unwrap();
        assert!(!Arc::ptr_eq(&before, &c.snapshot()));
        drop(c);
        let c = Catalog::open(dir.path()).unwrap();
        let snap = c.snapshot();
        let t = snap.table_by_oid(t.oid).unwrap();
        assert_eq!(t.reltuples, 12.0);
        assert_eq!(t.column_stats(0).unwrap().n_distinct, 3.0);
        assert_eq!(t.column_stats(1).unwrap().n_distinct, 6.0);
        assert_eq!(
            t.column_stats(1).unwrap().histogram[1],
            types::Value::Int4(9)
        );
    }

    #[test]
    fn catalog_survives_reopen() {
        let dir = tempfile::tempdir().unwrap();
        let c = Catalog::open(dir.path()).unwrap();
        let col = Column {
            name: "a".into(),
            type_oid: 23,
            typmod: -1,
            not_null: true,
            default: None,
        };
        let t = c
            .create_table(POSTGRES_DB_OID, PUBLIC_NAMESPACE, "t", vec![col.clone()])
            .unwrap();
        let err = c
            .create_table(POSTGRES_DB_OID, PUBLIC_NAMESPACE, "t", vec![col])
            .unwrap_err();
        assert_eq!(err.code, SqlState::DUPLICATE_TABLE);
        drop(c);
        let c = Catalog::open(dir.path()).unwrap();
        let snap = c.snapshot();
        let t2 = snap.table(POSTGRES_DB_OID, PUBLIC_NAMESPACE, "t").unwrap();
        assert_eq!(t2.oid, t.oid);
        assert!(snap.database_by_name("template1").is_some());
    }
}
