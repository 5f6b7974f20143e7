//! The system catalog: databases, schemas, roles, tables and their columns,
//! ANALYZE's statistics (see README.md).
//!
//! The catalog's rows live in heap relations (`relations.rs`), written
//! under the changing transaction's xid, so DDL commits or rolls back with
//! its transaction and is WAL-logged and recovered like any heap change.
//! In front of them is the relcache: one immutable `CatalogData` per
//! committed catalog version, shared through an `Arc`, so statements bind
//! against a consistent version without reading catalog pages. A
//! transaction that changes the catalog works on a private version
//! (`ddl.rs`) published when it commits.
//!
//! Lock order: the catalog-change lock (`txn::lock::CATALOG_CHANGE`, a
//! heavyweight lock the session takes in AccessExclusive before a statement
//! that changes the catalog and holds to its transaction's end) before
//! `Catalog::committed` (held only to swap or clone the `Arc`); catalog heap
//! pages are locked by `access` under both.

use std::path::Path;
use std::sync::Arc;

use common::ids::GLOBAL_TABLESPACE_OID;
use common::{Oid, PgError, PgResult};
use parking_lot::RwLock;
use storage::buffer::BufferPool;
use txn::TransactionManager;

mod columns;
pub mod comments;
mod ddl;
pub mod domains;
pub mod functions;
pub mod indexes;
mod model;
mod oids;
pub mod partition;
mod relations;
mod roles;
pub mod stats;
mod temp;
pub mod triggers;
pub mod user_types;

pub use access::toast::{Compression, Storage};
pub use comments::ObjectAddress;
pub use ddl::{CatalogMark, CatalogTxn, SYSTEM_COLUMN_NAMES};
pub use indexes::{Constraint, ConstraintKind, Index, IndexKey, ReferentialAction};
pub use model::{
    is_temp_schema_name, needs_toast, CatalogData, ClassSizes, Column, Database, Identity,
    Namespace, Role, RoleAttributes, Sequence, Table, ToastRelation, View,
};

pub const PG_CATALOG_NAMESPACE: Oid = 11;
pub const PUBLIC_NAMESPACE: Oid = 2200;
pub const INFORMATION_SCHEMA_NAMESPACE: Oid = 13000;
pub const BOOTSTRAP_SUPERUSER: Oid = 10;
pub const TEMPLATE1_OID: Oid = 1;
pub const POSTGRES_DB_OID: Oid = 5;
pub const FIRST_NORMAL_OID: Oid = 16384;

/// Tablespace oid of shared catalogs (for pg_relation_filepath of those).
pub const GLOBAL_TABLESPACE: Oid = GLOBAL_TABLESPACE_OID;

pub struct Catalog {
    pool: &'static BufferPool,
    tm: &'static TransactionManager,
    /// The relcache: the latest committed catalog version.
    committed: RwLock<Arc<CatalogData>>,
    oids: oids::OidCounter,
}

impl Catalog {
    /// Opens the catalog of `data_dir` after recovery: loads the relcache
    /// from the catalog relations, first writing the bootstrap catalog
    /// (template1, postgres, the built-in schemas, the bootstrap superuser)
    /// if there is none.
    pub fn open(
        data_dir: &Path,
        pool: &'static BufferPool,
        tm: &'static TransactionManager,
        fsync: bool,
    ) -> PgResult<Catalog> {
        for rel in relations::ALL {
            if !pool.smgr().exists(rel.locator(), storage::ForkNumber::Main) {
                access::heap::create_storage(pool, tm.wal(), rel.locator())?;
            }
        }
        let mut data = relations::load(pool, tm)?;
        if data.databases.is_empty() {
            bootstrap(pool, tm)?;
            data = relations::load(pool, tm)?;
        }
        Ok(Catalog {
            pool,
            tm,
            committed: RwLock::new(Arc::new(data)),
            oids: oids::OidCounter::open(data_dir, fsync)?,
        })
    }

    /// The latest committed catalog version.
    pub fn snapshot(&self) -> Arc<CatalogData> {
        self.committed.read().clone()
    }
}

/// Writes the bootstrap catalog's rows in one transaction, so a crash
/// before it commits leaves no catalog and the next start writes it again.
fn bootstrap(pool: &'static BufferPool, tm: &TransactionManager) -> PgResult<()> {
    let d = CatalogData::bootstrap();
    let xid = tm
        .begin()
        .map_err(|e| PgError::io("could not assign a transaction id", e))?;
    let w = relations::RowWriter {
        pool,
        tm,
        xid,
        cid: 0,
    };
    for db in d.databases.values() {
        w.insert(&relations::PG_DATABASE, &relations::database_row(db))?;
    }
    for r in d.roles.values() {
        w.insert(&relations::PG_AUTHID, &relations::role_row(r))?;
    }
    for n in d.namespaces.values() {
        w.insert(&relations::PG_NAMESPACE, &relations::namespace_row(n))?;
    }
    comments::bootstrap(&w)?;
    tm.commit(xid, txn::SyncCommit::On).map_err(PgError::from)
}

#[cfg(test)]
mod tests {
    use super::*;
    use common::SqlState;
    use storage::smgr::Smgr;
    use types::{DataType, TypeId};

    struct Fixture {
        dir: tempfile::TempDir,
        pool: &'static BufferPool,
        tm: &'static TransactionManager,
    }

    fn fixture() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let wal = txn::test_wal(dir.path());
        let pool: &'static BufferPool = Box::leak(Box::new(BufferPool::new(
            64,
            Arc::new(Smgr::new(dir.path())),
        )));
        let tm = Box::leak(Box::new(TransactionManager::open(dir.path(), wal).unwrap()));
        Fixture { dir, pool, tm }
    }

    impl Fixture {
        fn open(&self) -> Catalog {
            Catalog::open(self.dir.path(), self.pool, self.tm, false).unwrap()
        }
        /// Runs `f` as one transaction's catalog changes, committed or not.
        fn ddl<R>(
            &self,
            c: &Catalog,
            commit: bool,
            f: impl FnOnce(&mut CatalogTxn) -> PgResult<R>,
        ) -> PgResult<R> {
            let xid = self.tm.begin().unwrap();
            let mut txn = c.begin(xid, xid);
            let r = f(&mut txn);
            if commit && r.is_ok() {
                self.tm.commit(xid, txn::SyncCommit::On).unwrap();
                c.end(txn, true).unwrap();
            } else {
                self.tm.abort(xid);
                c.end(txn, false).unwrap();
            }
            r
        }
    }

    fn col(n: &str) -> Column {
        Column {
            name: n.into(),
            type_oid: 23,
            typmod: -1,
            not_null: false,
            default: Some("1".into()),
            storage: None,
            compression: None,
            identity: None,
        }
    }

    #[test]
    fn committed_tables_survive_reopen_and_names_stay_unique() {
        let f = fixture();
        let c = f.open();
        assert!(c.snapshot().database_by_name("template1").is_some());
        let t = f
            .ddl(&c, true, |x| {
                c.create_table(
                    x,
                    0,
                    POSTGRES_DB_OID,
                    PUBLIC_NAMESPACE,
                    "t",
                    vec![col("a"), col("b")],
                )
            })
            .unwrap();
        let err = f
            .ddl(&c, true, |x| {
                c.create_table(x, 0, POSTGRES_DB_OID, PUBLIC_NAMESPACE, "t", vec![col("a")])
            })
            .unwrap_err();
        assert_eq!(err.code, SqlState::DUPLICATE_TABLE);
        let c = f.open();
        let snap = c.snapshot();
        let t2 = snap.table(POSTGRES_DB_OID, PUBLIC_NAMESPACE, "t").unwrap();
        assert_eq!(t2, &t);
        assert_eq!(snap.roles.len(), 1);
        assert_eq!(snap.namespaces.len(), 3);
    }

    #[test]
    fn rolled_back_ddl_leaves_no_rows_and_no_file() {
        let f = fixture();
        let c = f.open();
        let kept = f
            .ddl(&c, true, |x| {
                c.create_table(
                    x,
                    0,
                    POSTGRES_DB_OID,
                    PUBLIC_NAMESPACE,
                    "kept",
                    vec![col("a")],
                )
            })
            .unwrap();
        let before = c.snapshot();
        let gone = f
            .ddl(&c, false, |x| {
                let t = c.create_table(
                    x,
                    0,
                    POSTGRES_DB_OID,
                    PUBLIC_NAMESPACE,
                    "gone",
                    vec![col("a")],
                )?;
                c.drop_table(x, 1, kept.oid)?;
                c.add_column(x, 1, t.oid, col("b"))?;
                assert!(x.catalog().table_by_oid(kept.oid).is_none());
                Ok(t)
            })
            .unwrap();
        assert!(Arc::ptr_eq(&before, &c.snapshot()));
        assert!(!f
            .pool
            .smgr()
            .exists(gone.locator(), storage::ForkNumber::Main));
        assert!(f
            .pool
            .smgr()
            .exists(kept.locator(), storage::ForkNumber::Main));
        let snap = f.open().snapshot();
        assert!(snap.table_by_oid(gone.oid).is_none());
        assert_eq!(snap.table_by_oid(kept.oid).unwrap().columns.len(), 1);
    }

    #[test]
    fn drop_and_truncate_remove_old_files_only_at_commit() {
        let f = fixture();
        let c = f.open();
        let t = f
            .ddl(&c, true, |x| {
                c.create_table(x, 0, POSTGRES_DB_OID, PUBLIC_NAMESPACE, "t", vec![col("a")])
            })
            .unwrap();
        let xid = f.tm.begin().unwrap();
        let mut x = c.begin(xid, xid);
        let new = c.new_relfilenode(&mut x, 0, t.oid).unwrap();
        assert!(f.pool.smgr().exists(t.locator(), storage::ForkNumber::Main));
        f.tm.commit(xid, txn::SyncCommit::On).unwrap();
        c.end(x, true).unwrap();
        assert!(!f.pool.smgr().exists(t.locator(), storage::ForkNumber::Main));
        assert_eq!(
            c.snapshot().table_by_oid(t.oid).unwrap().relfilenode,
            new.relfilenode
        );
        f.ddl(&c, true, |x| c.drop_table(x, 0, t.oid)).unwrap();
        assert!(!f
            .pool
            .smgr()
            .exists(new.locator(), storage::ForkNumber::Main));
        assert!(f.open().snapshot().tables.is_empty());
    }

    #[test]
    fn uncommitted_changes_are_invisible_to_others() {
        let f = fixture();
        let c = f.open();
        let xid = f.tm.begin().unwrap();
        let mut x = c.begin(xid, xid);
        c.create_table(
            &mut x,
            0,
            POSTGRES_DB_OID,
            PUBLIC_NAMESPACE,
            "t",
            vec![col("a")],
        )
        .unwrap();
        assert!(c.snapshot().tables.is_empty());
        // A reload (as after a crash) sees only committed rows.
        assert!(f.open().snapshot().tables.is_empty());
        f.tm.abort(xid);
        c.end(x, false).unwrap();
    }

    #[test]
    fn statistics_replace_per_column() {
        let f = fixture();
        let c = f.open();
        let t = f
            .ddl(&c, true, |x| {
                c.create_table(
                    x,
                    0,
                    POSTGRES_DB_OID,
                    PUBLIC_NAMESPACE,
                    "t",
                    vec![col("a"), col("b")],
                )
            })
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
        let sizes = |reltuples| ClassSizes {
            reltuples,
            relpages: 1,
            relallvisible: 0,
        };
        f.ddl(&c, true, |x| {
            c.update_statistics(x, 0, t.oid, sizes(10.0), vec![st(2, 5.0), st(1, 3.0)])
        })
        .unwrap();
        f.ddl(&c, true, |x| {
            c.update_statistics(x, 0, t.oid, sizes(12.0), vec![st(2, 6.0)])
        })
        .unwrap();
        assert!(!Arc::ptr_eq(&before, &c.snapshot()));
        for snap in [c.snapshot(), f.open().snapshot()] {
            let t = snap.table_by_oid(t.oid).unwrap();
            assert_eq!(t.reltuples, 12.0);
            assert_eq!(t.column_stats(0).unwrap().n_distinct, 3.0);
            assert_eq!(t.column_stats(1).unwrap().n_distinct, 6.0);
            assert_eq!(
                t.column_stats(1).unwrap().histogram[1],
                types::Value::Int4(9)
            );
        }
    }
}
