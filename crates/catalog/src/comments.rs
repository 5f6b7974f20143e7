//! Comments (COMMENT ON): pg_description's rows.
//!
//! One heap relation (relfilenode 2609, pg_description's oid) holds the
//! comments of every object, shared ones (databases, roles) included:
//! PostgreSQL keeps those in pg_shdescription, but all catalog rows here
//! live in shared relations anyway, and the class oid tells the two apart,
//! so the pg_shdescription view is the rows of pg_database and pg_authid
//! objects. A comment is keyed by PostgreSQL's object address (class oid,
//! object oid, sub-id: the column's attnum for column comments, else 0),
//! so the SQL-visible views show PostgreSQL's classoids.
//!
//! Like every catalog change a comment is written under the transaction's
//! xid and edits its private relcache; dropping an object drops its
//! comments in the same transaction (called from `ddl.rs`).

use std::sync::Arc;

use access::heap::Tid;
use common::{Oid, PgResult};
use storage::buffer::BufferPool;
use txn::TransactionManager;
use types::{TypeId, Value};

use crate::ddl::CatalogTxn;
use crate::model::CatalogData;
use crate::relations::{self, RowWriter, SystemRelation};
use crate::{Catalog, PG_CATALOG_NAMESPACE, POSTGRES_DB_OID, PUBLIC_NAMESPACE, TEMPLATE1_OID};

/// pg_class's oid: the classoid of table, view and column comments.
pub const PG_CLASS_OID: Oid = 1259;
/// pg_namespace's oid: the classoid of schema comments.
pub const PG_NAMESPACE_OID: Oid = 2615;
/// pg_database's oid: the classoid of database comments (shared).
pub const PG_DATABASE_OID: Oid = 1262;
/// pg_authid's oid: the classoid of role comments (shared).
pub const PG_AUTHID_OID: Oid = 1260;

/// objoid, classoid, objsubid, description (pg_description's columns).
pub(crate) const PG_DESCRIPTION: SystemRelation = SystemRelation {
    name: "pg_description",
    rel_number: 2609,
    columns: &[TypeId::Oid, TypeId::Oid, TypeId::Int4, TypeId::Text],
};

/// What a comment is on, as PostgreSQL's ObjectAddress names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ObjectAddress {
    pub classoid: Oid,
    pub objoid: Oid,
    /// A column's attnum for column comments, 0 for the object itself.
    pub objsubid: i32,
}

impl ObjectAddress {
    pub fn new(classoid: Oid, objoid: Oid, objsubid: i32) -> Self {
        ObjectAddress {
            classoid,
            objoid,
            objsubid,
        }
    }
    /// Whether the object is shared by all databases (pg_shdescription's).
    pub fn is_shared(&self) -> bool {
        matches!(self.classoid, PG_DATABASE_OID | PG_AUTHID_OID)
    }
}

fn description_row(a: &ObjectAddress, text: &str) -> Vec<Value> {
    vec![
        Value::Oid(a.objoid),
        Value::Oid(a.classoid),
        Value::Int4(a.objsubid),
        Value::Text(text.to_string()),
    ]
}

/// The comments PostgreSQL 15's initdb puts on the objects a fresh cluster
/// has (psql's `\l+` and `\dn+` show them).
const BOOTSTRAP_COMMENTS: &[(Oid, Oid, &str)] = &[
    (
        PG_DATABASE_OID,
        TEMPLATE1_OID,
        "default template for new databases",
    ),
    (
        PG_DATABASE_OID,
        POSTGRES_DB_OID,
        "default administrative connection database",
    ),
    (
        PG_NAMESPACE_OID,
        PG_CATALOG_NAMESPACE,
        "system catalog schema",
    ),
    (PG_NAMESPACE_OID, PUBLIC_NAMESPACE, "standard public schema"),
];

/// Writes the bootstrap comments (inside the bootstrap transaction).
pub(crate) fn bootstrap(w: &RowWriter<'_>) -> PgResult<()> {
    for (class, obj, text) in BOOTSTRAP_COMMENTS {
        w.insert(
            &PG_DESCRIPTION,
            &description_row(&ObjectAddress::new(*class, *obj, 0), text),
        )?;
    }
    Ok(())
}

/// Adds the comments a fresh snapshot sees to the relcache being loaded.
pub(crate) fn load(
    pool: &'static BufferPool,
    tm: &TransactionManager,
    d: &mut CatalogData,
) -> PgResult<()> {
    for (tid, r) in relations::scan(pool, tm, &PG_DESCRIPTION)? {
        let (Value::Oid(objoid), Value::Oid(classoid), Value::Int4(sub), Value::Text(text)) =
            (&r[0], &r[1], &r[2], &r[3])
        else {
            return Err(relations::corrupt(&PG_DESCRIPTION, "null column"));
        };
        let a = ObjectAddress::new(*classoid, *objoid, *sub);
        d.rows.comments.insert(a, tid);
        d.comments.insert(a, text.clone());
    }
    Ok(())
}

impl CatalogData {
    /// The comment on `a`, if any.
    pub fn comment(&self, a: ObjectAddress) -> Option<&str> {
        self.comments.get(&a).map(String::as_str)
    }
}

impl Catalog {
    fn comment_writer(&self, txn: &CatalogTxn, cid: u32) -> RowWriter<'_> {
        RowWriter {
            pool: self.pool,
            tm: self.tm,
            xid: txn.write_xid,
            cid,
        }
    }

    /// COMMENT ON: sets the comment on `a`, or removes it when `text` is
    /// None or empty (PostgreSQL treats `IS ''` as `IS NULL`). The caller
    /// has checked that the object exists.
    pub fn set_comment(
        &self,
        txn: &mut CatalogTxn,
        cid: u32,
        a: ObjectAddress,
        text: Option<&str>,
    ) -> PgResult<()> {
        let text = text.filter(|t| !t.is_empty());
        let w = self.comment_writer(txn, cid);
        let d = Arc::make_mut(&mut txn.working);
        let old = d.rows.comments.remove(&a);
        let tid: Option<Tid> = match (old, text) {
            (Some(old), Some(t)) => {
                Some(w.replace(&PG_DESCRIPTION, old, &description_row(&a, t))?)
            }
            (None, Some(t)) => Some(w.insert(&PG_DESCRIPTION, &description_row(&a, t))?),
            (Some(old), None) => {
                w.delete(&PG_DESCRIPTION, old)?;
                None
            }
            (None, None) => None,
        };
        match (tid, text) {
            (Some(tid), Some(t)) => {
                d.rows.comments.insert(a, tid);
                d.comments.insert(a, t.to_string());
            }
            _ => {
                d.comments.remove(&a);
            }
        }
        Ok(())
    }

    /// Deletes the comments on object `objoid` of class `classoid`, its
    /// columns' included (PostgreSQL's DeleteComments/DeleteSharedComments,
    /// which dropping any object calls).
    pub fn drop_comments(
        &self,
        txn: &mut CatalogTxn,
        cid: u32,
        classoid: Oid,
        objoid: Oid,
    ) -> PgResult<()> {
        let gone: Vec<ObjectAddress> = txn
            .working
            .comments
            .range(ObjectAddress::new(classoid, objoid, i32::MIN)..)
            .take_while(|(a, _)| a.classoid == classoid && a.objoid == objoid)
            .map(|(a, _)| *a)
            .collect();
        if gone.is_empty() {
            return Ok(());
        }
        let w = self.comment_writer(txn, cid);
        let d = Arc::make_mut(&mut txn.working);
        for a in gone {
            if let Some(tid) = d.rows.comments.remove(&a) {
                w.delete(&PG_DESCRIPTION, tid)?;
            }
            d.comments.remove(&a);
        }
        Ok(())
    }

    /// Deletes the comments on database `db` and on the objects in it
    /// that dropping it removes (its schemas and views; its tables' go with
    /// them, see `remove_table`).
    pub(crate) fn drop_database_comments(
        &self,
        txn: &mut CatalogTxn,
        cid: u32,
        db: Oid,
    ) -> PgResult<()> {
        let c = &txn.working;
        let mut objects = vec![(PG_DATABASE_OID, db)];
        objects.extend(
            c.namespaces
                .values()
                .filter(|n| n.db_oid == db)
                .map(|n| (PG_NAMESPACE_OID, n.oid)),
        );
        objects.extend(
            c.views
                .values()
                .filter(|v| v.db_oid == db)
                .map(|v| (PG_CLASS_OID, v.oid)),
        );
        for (class, obj) in objects {
            self.drop_comments(txn, cid, class, obj)?;
        }
        Ok(())
    }
}
