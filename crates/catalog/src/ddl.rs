//! Catalog changes inside a transaction.
//!
//! A transaction's first catalog change (made under the catalog-change
//! lock, see `Catalog::begin`) takes a private copy of the committed
//! relcache (`CatalogTxn`); each change writes its
//! catalog rows under the transaction's xid and edits the private copy, which
//! the transaction's own statements bind against. At commit the copy becomes
//! the committed relcache (the lock guarantees nobody else changed it
//! meanwhile); at rollback it is dropped and the rows stay invisible.
//!
//! Relation files follow PostgreSQL's pending-delete rule: a file created
//! by the transaction is removed if it rolls back, a file it drops is
//! removed only once it has committed (`Catalog::end`).

use std::sync::Arc;

use access::heap;
use common::{Oid, PgError, PgResult, RelFileLocator, SqlState, Xid};

use crate::model::{CatalogData, Column, Database, Namespace, Sequence, Table, View};
use crate::relations::{
    self, RowWriter, PG_ATTRIBUTE, PG_AUTHID, PG_CLASS, PG_DATABASE, PG_NAMESPACE, PG_REWRITE,
    PG_SEQUENCE, PG_STATISTIC,
};
use crate::stats::ColumnStats;
use crate::{Catalog, BOOTSTRAP_SUPERUSER};

/// Storage the transaction's end decides about.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Pending {
    /// A file it created: removed if it rolls back.
    Created(RelFileLocator),
    /// A file it dropped: removed once it commits.
    Dropped(RelFileLocator),
    /// A database it dropped: its directory goes once it commits.
    DatabaseDropped(Oid),
}

/// A transaction's catalog changes: it holds the catalog-change lock until
/// it ends.
pub struct CatalogTxn {
    /// The top-level transaction (it holds the catalog-change lock).
    pub(crate) xid: Xid,
    /// The (sub-)transaction catalog rows are written under now.
    pub(crate) write_xid: Xid,
    pub(crate) working: Arc<CatalogData>,
    /// The committed catalog the transaction started from.
    base: Arc<CatalogData>,
    pub(crate) pending: Vec<Pending>,
}

/// Where a savepoint found a transaction's catalog changes, to go back to
/// at ROLLBACK TO SAVEPOINT.
#[derive(Clone)]
pub struct CatalogMark {
    working: Arc<CatalogData>,
    pending: usize,
}

impl CatalogTxn {
    /// The catalog as this transaction sees it (its own changes included).
    pub fn catalog(&self) -> &Arc<CatalogData> {
        &self.working
    }
    /// A table as this transaction's catalog has it (a copy to change).
    pub(crate) fn working_table(&self, oid: Oid) -> PgResult<Table> {
        self.working
            .tables
            .get(&oid)
            .cloned()
            .ok_or_else(|| vanished(oid))
    }

    pub fn xid(&self) -> Xid {
        self.xid
    }
    /// Rows from now on are written under `xid` (the current
    /// sub-transaction, or the top-level transaction itself).
    pub fn set_write_xid(&mut self, xid: Xid) {
        debug_assert!(xid >= self.xid);
        self.write_xid = xid;
    }
    /// The state before the transaction's first catalog change.
    pub fn initial_mark(&self) -> CatalogMark {
        CatalogMark {
            working: self.base.clone(),
            pending: 0,
        }
    }
    /// The state a savepoint returns to.
    pub fn mark(&self) -> CatalogMark {
        CatalogMark {
            working: self.working.clone(),
            pending: self.pending.len(),
        }
    }
}

/// The names of the system columns every table has (ctid, xmin, ...),
/// which no user column may take.
pub const SYSTEM_COLUMN_NAMES: [&str; 6] = ["ctid", "xmin", "cmin", "xmax", "cmax", "tableoid"];

/// PostgreSQL's error for a user column named like a system column.
fn check_not_system_name(name: &str) -> PgResult<()> {
    if SYSTEM_COLUMN_NAMES.contains(&name) {
        return Err(PgError::new(
            SqlState::DUPLICATE_COLUMN,
            format!("column name \"{name}\" conflicts with a system column name"),
        ));
    }
    Ok(())
}

pub(crate) fn vanished(oid: Oid) -> PgError {
    PgError::internal(format!("catalog entry {oid} vanished"))
}

impl Catalog {
    /// Starts `xid`'s private catalog version. The caller holds the
    /// catalog-change lock (`txn::lock::CATALOG_CHANGE`, AccessExclusive)
    /// for `xid`'s transaction, so catalog changes are serial and the
    /// version builds on the latest committed one.
    /// `write_xid` is the (sub-)transaction the first rows are written under.
    pub fn begin(&self, xid: Xid, write_xid: Xid) -> CatalogTxn {
        debug_assert_ne!(xid, 0, "catalog changes need an xid");
        let base = self.snapshot();
        CatalogTxn {
            xid,
            write_xid,
            working: base.clone(),
            base,
            pending: Vec::new(),
        }
    }

    /// ROLLBACK TO SAVEPOINT: the catalog as the savepoint found it. The
    /// rolled-back sub-transactions' rows are invisible already (their xids
    /// aborted); files they created are removed now, files they dropped stay.
    pub fn rollback_to(&self, txn: &mut CatalogTxn, mark: CatalogMark) -> PgResult<()> {
        if !Arc::ptr_eq(&txn.working, &mark.working) {
            self.republish_types(&mark.working);
        }
        txn.working = mark.working;
        let wal = self.tm.wal();
        let mut result = Ok(());
        for p in txn.pending.drain(mark.pending..) {
            if let Pending::Created(rel) = p {
                let r = heap::drop_storage(self.pool, wal, rel);
                if result.is_ok() {
                    result = r;
                }
            }
        }
        result
    }

    /// Ends the transaction's catalog changes once `tm` has committed or
    /// aborted it: publishes or discards its catalog version and removes the
    /// files the outcome leaves unused. The caller releases the
    /// catalog-change lock after this. An error here comes after the
    /// outcome is settled (a file left behind).
    pub fn end(&self, txn: CatalogTxn, committed: bool) -> PgResult<()> {
        if committed {
            *self.committed.write() = txn.working;
        } else if txn.working.user_types != txn.base.user_types {
            self.republish_types(&txn.base);
        }
        let wal = self.tm.wal();
        let mut result = Ok(());
        for p in txn.pending {
            let r = match (p, committed) {
                (Pending::Dropped(rel), true) | (Pending::Created(rel), false) => {
                    heap::drop_storage(self.pool, wal, rel)
                }
                (Pending::DatabaseDropped(db), true) => {
                    heap::drop_database_storage(self.pool, wal, db)
                }
                _ => Ok(()),
            };
            if result.is_ok() {
                result = r;
            }
        }
        result
    }

    pub(crate) fn writer(&self, txn: &CatalogTxn, cid: u32) -> RowWriter<'_> {
        RowWriter {
            pool: self.pool,
            tm: self.tm,
            xid: txn.write_xid,
            cid,
        }
    }

    /// Creates a table and its (empty) file. Errors: 42P07 if it exists.
    pub fn create_table(
        &self,
        txn: &mut CatalogTxn,
        cid: u32,
        db: Oid,
        namespace: Oid,
        name: &str,
        columns: Vec<Column>,
    ) -> PgResult<Table> {
        for c in &columns {
            check_not_system_name(&c.name)?;
        }
        if txn.working.relation_exists(db, namespace, name) {
            return Err(PgError::new(
                SqlState::DUPLICATE_TABLE,
                format!("relation \"{name}\" already exists"),
            ));
        }
        let oid = self.oids.next()?;
        let mut t = Table {
            oid,
            name: name.to_owned(),
            namespace,
            db_oid: db,
            relfilenode: oid,
            columns,
            reltuples: -1.0,
            relpages: 0,
            relallvisible: 0,
            statistics: Arc::default(),
            toast: None,
            partition_key: None,
            partition_of: None,
        };
        if crate::model::needs_toast(&t.columns) {
            self.create_toast_relation(txn, &mut t)?;
        }
        let w = self.writer(txn, cid);
        let class_tid = w.insert(&PG_CLASS, &relations::class_row(&t))?;
        let mut attr_tids = Vec::with_capacity(t.columns.len());
        for (i, c) in t.columns.iter().enumerate() {
            let attnum = i as i16 + 1;
            attr_tids.push((
                attnum,
                w.insert(&PG_ATTRIBUTE, &relations::attribute_row(oid, attnum, c))?,
            ));
        }
        txn.pending.push(Pending::Created(t.locator()));
        heap::create_storage(self.pool, self.tm.wal(), t.locator())?;
        let d = Arc::make_mut(&mut txn.working);
        d.rows.classes.insert(oid, class_tid);
        for (attnum, tid) in attr_tids {
            d.rows.attributes.insert((oid, attnum), tid);
        }
        d.tables.insert(oid, t.clone());
        Ok(t)
    }

    /// Gives `t` a TOAST relation: a new, empty file, gone at rollback. The
    /// caller writes `t`'s pg_class row.
    pub(crate) fn create_toast_relation(
        &self,
        txn: &mut CatalogTxn,
        t: &mut Table,
    ) -> PgResult<()> {
        let oid = self.oids.next()?;
        t.toast = Some(crate::model::ToastRelation {
            oid,
            relfilenode: oid,
        });
        let rel = t.toast_locator().expect("just set");
        txn.pending.push(Pending::Created(rel));
        heap::create_storage(self.pool, self.tm.wal(), rel)
    }

    /// Deletes a table's rows (class, columns, statistics); its file goes at commit.
    fn remove_table(&self, txn: &mut CatalogTxn, cid: u32, oid: Oid) -> PgResult<Option<Table>> {
        let Some(t) = txn.working.tables.get(&oid).cloned() else {
            return Ok(None);
        };
        self.drop_table_dependents(txn, cid, oid)?;
        self.drop_partitioning(txn, cid, oid)?;
        let w = self.writer(txn, cid);
        let d = Arc::make_mut(&mut txn.working);
        let class = d.rows.classes.remove(&oid).ok_or_else(|| vanished(oid))?;
        w.delete(&PG_CLASS, class)?;
        for attnum in 1..=t.columns.len() as i16 {
            if let Some(tid) = d.rows.attributes.remove(&(oid, attnum)) {
                w.delete(&PG_ATTRIBUTE, tid)?;
            }
        }
        for s in t.statistics.iter() {
            if let Some(tid) = d.rows.statistics.remove(&(oid, s.attnum)) {
                w.delete(&PG_STATISTIC, tid)?;
            }
        }
        d.tables.remove(&oid);
        txn.pending.push(Pending::Dropped(t.locator()));
        if let Some(toast) = t.toast_locator() {
            txn.pending.push(Pending::Dropped(toast));
        }
        let owned: Vec<Oid> = txn
            .working
            .sequences
            .values()
            .filter(|q| q.owned_by.is_some_and(|(rel, _)| rel == oid))
            .map(|q| q.oid)
            .collect();
        for q in owned {
            self.drop_sequence(txn, cid, q)?;
        }
        self.drop_comments(txn, cid, crate::comments::PG_CLASS_OID, oid)?;
        Ok(Some(t))
    }

    pub fn drop_table(&self, txn: &mut CatalogTxn, cid: u32, oid: Oid) -> PgResult<Option<Table>> {
        self.remove_table(txn, cid, oid)
    }

    pub(crate) fn replace_class_row(
        &self,
        txn: &mut CatalogTxn,
        cid: u32,
        t: &Table,
    ) -> PgResult<()> {
        let w = self.writer(txn, cid);
        let d = Arc::make_mut(&mut txn.working);
        let old = d
            .rows
            .classes
            .get(&t.oid)
            .copied()
            .ok_or_else(|| vanished(t.oid))?;
        let new = w.replace(&PG_CLASS, old, &relations::class_row(t))?;
        d.rows.classes.insert(t.oid, new);
        d.tables.insert(t.oid, t.clone());
        Ok(())
    }

    /// Gives the table a new, empty file (TRUNCATE): the old file goes at
    /// commit, the new one at rollback. Returns the table as it is now.
    pub fn new_relfilenode(&self, txn: &mut CatalogTxn, cid: u32, oid: Oid) -> PgResult<Table> {
        let mut t = txn.working_table(oid)?;
        let old = t.locator();
        t.relfilenode = self.oids.next()?;
        txn.pending.push(Pending::Created(t.locator()));
        heap::create_storage(self.pool, self.tm.wal(), t.locator())?;
        let old_toast = t.toast_locator();
        if let Some(toast) = &mut t.toast {
            toast.relfilenode = self.oids.next()?;
            let rel = t.toast_locator().expect("has one");
            txn.pending.push(Pending::Created(rel));
            heap::create_storage(self.pool, self.tm.wal(), rel)?;
        }
        self.replace_class_row(txn, cid, &t)?;
        txn.pending.push(Pending::Dropped(old));
        if let Some(rel) = old_toast {
            txn.pending.push(Pending::Dropped(rel));
        }
        let indexes: Vec<Oid> = txn.working.indexes_of(oid).map(|i| i.oid).collect();
        for i in indexes {
            self.new_index_relfilenode(txn, cid, i)?;
        }
        Ok(t)
    }

    /// Stores what VACUUM or ANALYZE found (pg_class.reltuples, relpages,
    /// relallvisible and the pg_statistic rows of the analysed columns,
    /// replacing theirs).
    pub fn update_statistics(
        &self,
        txn: &mut CatalogTxn,
        cid: u32,
        oid: Oid,
        sizes: crate::ClassSizes,
        columns: Vec<ColumnStats>,
    ) -> PgResult<()> {
        let Some(mut t) = txn.working.tables.get(&oid).cloned() else {
            // Dropped while ANALYZE ran: nothing to keep.
            return Ok(());
        };
        t.reltuples = sizes.reltuples;
        t.relpages = sizes.relpages;
        t.relallvisible = sizes.relallvisible;
        let w = self.writer(txn, cid);
        {
            let d = Arc::make_mut(&mut txn.working);
            for s in &columns {
                let row = relations::statistic_row(oid, s);
                let tid = match d.rows.statistics.get(&(oid, s.attnum)) {
                    Some(&old) => w.replace(&PG_STATISTIC, old, &row)?,
                    None => w.insert(&PG_STATISTIC, &row)?,
                };
                d.rows.statistics.insert((oid, s.attnum), tid);
            }
        }
        let all = Arc::make_mut(&mut t.statistics);
        for s in columns {
            all.retain(|o| o.attnum != s.attnum);
            all.push(s);
        }
        all.sort_by_key(|s| s.attnum);
        self.replace_class_row(txn, cid, &t)
    }

    /// Adds a column at the end. Errors: 42701 if the name is taken.
    pub fn add_column(
        &self,
        txn: &mut CatalogTxn,
        cid: u32,
        oid: Oid,
        column: Column,
    ) -> PgResult<Table> {
        let mut t = txn.working_table(oid)?;
        check_not_system_name(&column.name)?;
        if t.column_index(&column.name).is_some() {
            return Err(PgError::new(
                SqlState::DUPLICATE_COLUMN,
                format!(
                    "column \"{}\" of relation \"{}\" already exists",
                    column.name, t.name
                ),
            ));
        }
        let attnum = t.columns.len() as i16 + 1;
        let tid = self.writer(txn, cid).insert(
            &PG_ATTRIBUTE,
            &relations::attribute_row(oid, attnum, &column),
        )?;
        t.columns.push(column);
        let d = Arc::make_mut(&mut txn.working);
        d.rows.attributes.insert((oid, attnum), tid);
        d.tables.insert(oid, t.clone());
        if t.toast.is_none() && crate::model::needs_toast(&t.columns) {
            self.create_toast_relation(txn, &mut t)?;
            self.replace_class_row(txn, cid, &t)?;
        }
        Ok(t)
    }

    /// Creates a database owned by the bootstrap superuser. Errors: 42P04
    /// if the name is taken.
    pub fn create_database(
        &self,
        txn: &mut CatalogTxn,
        cid: u32,
        name: &str,
    ) -> PgResult<Database> {
        if txn.working.database_by_name(name).is_some() {
            return Err(PgError::new(
                SqlState::DUPLICATE_DATABASE,
                format!("database \"{name}\" already exists"),
            ));
        }
        let db = Database {
            oid: self.oids.next()?,
            name: name.to_owned(),
            owner: BOOTSTRAP_SUPERUSER,
            allow_connections: true,
            is_template: false,
        };
        let tid = self
            .writer(txn, cid)
            .insert(&PG_DATABASE, &relations::database_row(&db))?;
        let d = Arc::make_mut(&mut txn.working);
        d.rows.databases.insert(db.oid, tid);
        d.databases.insert(db.oid, db.clone());
        Ok(db)
    }

    /// Drops every table, view and sequence whose (database, schema)
    /// `belongs` selects: what DROP SCHEMA CASCADE and DROP DATABASE take.
    fn drop_relations(
        &self,
        txn: &mut CatalogTxn,
        cid: u32,
        belongs: impl Fn(Oid, Oid) -> bool,
    ) -> PgResult<()> {
        let w = &txn.working;
        let tables: Vec<Oid> = w
            .tables
            .values()
            .filter(|t| belongs(t.db_oid, t.namespace))
            .map(|t| t.oid)
            .collect();
        let views: Vec<Oid> = w
            .views
            .values()
            .filter(|v| belongs(v.db_oid, v.namespace))
            .map(|v| v.oid)
            .collect();
        let sequences: Vec<Oid> = w
            .sequences
            .values()
            .filter(|q| belongs(q.db_oid, q.namespace))
            .map(|q| q.oid)
            .collect();
        for t in tables {
            self.remove_table(txn, cid, t)?;
        }
        for v in views {
            self.drop_view(txn, cid, v)?;
        }
        for q in sequences {
            // A serial column's sequence went with its table.
            if txn.working.sequences.contains_key(&q) {
                self.drop_sequence(txn, cid, q)?;
            }
        }
        Ok(())
    }

    /// Removes a database and its relations; their files and its directory
    /// go at commit.
    pub fn drop_database(&self, txn: &mut CatalogTxn, cid: u32, oid: Oid) -> PgResult<()> {
        self.drop_database_comments(txn, cid, oid)?;
        self.drop_relations(txn, cid, |db, _| db == oid)?;
        let w = self.writer(txn, cid);
        let d = Arc::make_mut(&mut txn.working);
        if let Some(tid) = d.rows.databases.remove(&oid) {
            w.delete(&PG_DATABASE, tid)?;
        }
        d.databases.remove(&oid);
        txn.pending.push(Pending::DatabaseDropped(oid));
        Ok(())
    }

    /// Sets (or with None clears) a role's password verifier. Errors: 42704
    /// if there is no such role.
    pub fn set_role_password(
        &self,
        txn: &mut CatalogTxn,
        cid: u32,
        name: &str,
        verifier: Option<String>,
    ) -> PgResult<()> {
        let mut role = txn.working.role_by_name(name).cloned().ok_or_else(|| {
            PgError::new(
                SqlState::UNDEFINED_OBJECT,
                format!("role \"{name}\" does not exist"),
            )
        })?;
        role.password = verifier;
        let w = self.writer(txn, cid);
        let d = Arc::make_mut(&mut txn.working);
        let old = d
            .rows
            .roles
            .get(&role.oid)
            .copied()
            .ok_or_else(|| vanished(role.oid))?;
        let tid = w.replace(&PG_AUTHID, old, &relations::role_row(&role))?;
        d.rows.roles.insert(role.oid, tid);
        d.roles.insert(role.oid, role);
        Ok(())
    }

    /// Renames a table. Errors: 42P07 if its schema has a relation by that name.
    pub fn rename_table(
        &self,
        txn: &mut CatalogTxn,
        cid: u32,
        oid: Oid,
        name: &str,
    ) -> PgResult<Table> {
        let mut t = txn.working_table(oid)?;
        if txn.working.relation_exists(t.db_oid, t.namespace, name) {
            return Err(PgError::new(
                SqlState::DUPLICATE_TABLE,
                format!("relation \"{name}\" already exists"),
            ));
        }
        t.name = name.to_owned();
        self.replace_class_row(txn, cid, &t)?;
        Ok(t)
    }

    /// Replaces column `index` (0-based) of a table: a new name, default or
    /// NOT NULL. Errors: 42701 if a renamed column's name is taken.
    pub fn replace_column(
        &self,
        txn: &mut CatalogTxn,
        cid: u32,
        oid: Oid,
        index: usize,
        column: Column,
    ) -> PgResult<Table> {
        let mut t = txn.working_table(oid)?;
        if t.columns[index].name != column.name {
            check_not_system_name(&column.name)?;
        }
        if t.columns[index].name != column.name && t.column_index(&column.name).is_some() {
            return Err(PgError::new(
                SqlState::DUPLICATE_COLUMN,
                format!(
                    "column \"{}\" of relation \"{}\" already exists",
                    column.name, t.name
                ),
            ));
        }
        let attnum = index as i16 + 1;
        let w = self.writer(txn, cid);
        let d = Arc::make_mut(&mut txn.working);
        let old = d
            .rows
            .attributes
            .get(&(oid, attnum))
            .copied()
            .ok_or_else(|| vanished(oid))?;
        let tid = w.replace(
            &PG_ATTRIBUTE,
            old,
            &relations::attribute_row(oid, attnum, &column),
        )?;
        d.rows.attributes.insert((oid, attnum), tid);
        t.columns[index] = column;
        d.tables.insert(oid, t.clone());
        Ok(t)
    }

    /// Creates a schema in database `db`. Errors: 42P06 if it exists.
    pub fn create_namespace(
        &self,
        txn: &mut CatalogTxn,
        cid: u32,
        db: Oid,
        name: &str,
    ) -> PgResult<Namespace> {
        if txn.working.namespace_by_name(db, name).is_some() {
            return Err(PgError::new(
                SqlState::DUPLICATE_SCHEMA,
                format!("schema \"{name}\" already exists"),
            ));
        }
        let ns = Namespace {
            oid: self.oids.next()?,
            name: name.to_owned(),
            db_oid: db,
        };
        let tid = self
            .writer(txn, cid)
            .insert(&PG_NAMESPACE, &relations::namespace_row(&ns))?;
        let d = Arc::make_mut(&mut txn.working);
        d.rows.namespaces.insert(ns.oid, tid);
        d.namespaces.insert(ns.oid, ns.clone());
        Ok(ns)
    }

    /// Drops a schema and the tables in it (the caller has decided whether
    /// CASCADE allows that); their files go at commit.
    pub fn drop_namespace(&self, txn: &mut CatalogTxn, cid: u32, oid: Oid) -> PgResult<()> {
        self.drop_relations(txn, cid, |_, ns| ns == oid)?;
        let functions: Vec<Oid> = txn
            .working
            .functions
            .values()
            .filter(|f| f.namespace == oid)
            .map(|f| f.oid)
            .collect();
        for f in functions {
            self.drop_function(txn, cid, f)?;
        }
        self.drop_namespace_types(txn, cid, oid)?;
        let w = self.writer(txn, cid);
        let d = Arc::make_mut(&mut txn.working);
        let tid = d
            .rows
            .namespaces
            .remove(&oid)
            .ok_or_else(|| vanished(oid))?;
        w.delete(&PG_NAMESPACE, tid)?;
        d.namespaces.remove(&oid);
        self.drop_comments(txn, cid, crate::comments::PG_NAMESPACE_OID, oid)
    }

    /// Creates a view, or with `replace` replaces the query of an existing
    /// one whose columns the new ones extend (PostgreSQL's rule for CREATE
    /// OR REPLACE VIEW). Errors: 42P07 if a relation has the name, 42P16 if
    /// the replacement drops, renames or retypes a column.
    #[allow(clippy::too_many_arguments)]
    pub fn create_view(
        &self,
        txn: &mut CatalogTxn,
        cid: u32,
        db: Oid,
        namespace: Oid,
        name: &str,
        query: String,
        columns: Vec<Column>,
        replace: bool,
    ) -> PgResult<View> {
        let existing = txn.working.view(db, namespace, name).cloned();
        let oid = match &existing {
            Some(old) if replace => {
                check_view_replacement(old, &columns)?;
                // The view stays the same object: its comments stay too.
                self.remove_view(txn, cid, old.oid)?;
                old.oid
            }
            _ => {
                if txn.working.relation_exists(db, namespace, name) {
                    return Err(PgError::new(
                        SqlState::DUPLICATE_TABLE,
                        format!("relation \"{name}\" already exists"),
                    ));
                }
                self.oids.next()?
            }
        };
        let v = View {
            oid,
            name: name.to_owned(),
            namespace,
            db_oid: db,
            query,
            columns,
        };
        let w = self.writer(txn, cid);
        let class = w.insert(&PG_CLASS, &relations::view_class_row(&v))?;
        let rewrite = w.insert(&PG_REWRITE, &relations::rewrite_row(&v))?;
        let mut attrs = Vec::new();
        for (i, c) in v.columns.iter().enumerate() {
            let attnum = i as i16 + 1;
            attrs.push((
                attnum,
                w.insert(&PG_ATTRIBUTE, &relations::attribute_row(oid, attnum, c))?,
            ));
        }
        let d = Arc::make_mut(&mut txn.working);
        d.rows.classes.insert(oid, class);
        d.rows.rewrites.insert(oid, rewrite);
        for (attnum, tid) in attrs {
            d.rows.attributes.insert((oid, attnum), tid);
        }
        d.views.insert(oid, v.clone());
        Ok(v)
    }

    /// Drops a view's rows and its comments.
    pub fn drop_view(&self, txn: &mut CatalogTxn, cid: u32, oid: Oid) -> PgResult<()> {
        self.remove_view(txn, cid, oid)?;
        self.drop_comments(txn, cid, crate::comments::PG_CLASS_OID, oid)
    }

    /// Deletes a view's rows (class, rule, columns).
    fn remove_view(&self, txn: &mut CatalogTxn, cid: u32, oid: Oid) -> PgResult<()> {
        let w = self.writer(txn, cid);
        let d = Arc::make_mut(&mut txn.working);
        let v = d.views.remove(&oid).ok_or_else(|| vanished(oid))?;
        let class = d.rows.classes.remove(&oid).ok_or_else(|| vanished(oid))?;
        w.delete(&PG_CLASS, class)?;
        let rewrite = d.rows.rewrites.remove(&oid).ok_or_else(|| vanished(oid))?;
        w.delete(&PG_REWRITE, rewrite)?;
        for attnum in 1..=v.columns.len() as i16 {
            if let Some(tid) = d.rows.attributes.remove(&(oid, attnum)) {
                w.delete(&PG_ATTRIBUTE, tid)?;
            }
        }
        Ok(())
    }

    /// Creates a sequence and its page (access::sequence). `seq.oid` and
    /// `seq.relfilenode` are assigned here. Errors: 42P07.
    pub fn create_sequence(
        &self,
        txn: &mut CatalogTxn,
        cid: u32,
        mut seq: Sequence,
    ) -> PgResult<Sequence> {
        if txn
            .working
            .relation_exists(seq.db_oid, seq.namespace, &seq.name)
        {
            return Err(PgError::new(
                SqlState::DUPLICATE_TABLE,
                format!("relation \"{}\" already exists", seq.name),
            ));
        }
        seq.oid = self.oids.next()?;
        seq.relfilenode = seq.oid;
        let w = self.writer(txn, cid);
        let class = w.insert(&PG_CLASS, &relations::sequence_class_row(&seq))?;
        let params = w.insert(&PG_SEQUENCE, &relations::sequence_row(&seq))?;
        txn.pending.push(Pending::Created(seq.locator()));
        access::sequence::create(self.pool, self.tm.wal(), seq.locator(), seq.start)?;
        let d = Arc::make_mut(&mut txn.working);
        d.rows.classes.insert(seq.oid, class);
        d.rows.sequences.insert(seq.oid, params);
        d.sequences.insert(seq.oid, seq.clone());
        Ok(seq)
    }

    /// ALTER SEQUENCE ... OWNED BY: the column (table oid, attnum) the
    /// sequence is dropped with, or none; its pg_sequence row is replaced.
    pub fn set_sequence_owned_by(
        &self,
        txn: &mut CatalogTxn,
        cid: u32,
        oid: Oid,
        owned_by: Option<(Oid, i16)>,
    ) -> PgResult<()> {
        let w = self.writer(txn, cid);
        let d = Arc::make_mut(&mut txn.working);
        let q = d.sequences.get_mut(&oid).ok_or_else(|| vanished(oid))?;
        q.owned_by = owned_by;
        let old = *d.rows.sequences.get(&oid).ok_or_else(|| vanished(oid))?;
        let tid = w.replace(&PG_SEQUENCE, old, &relations::sequence_row(q))?;
        d.rows.sequences.insert(oid, tid);
        Ok(())
    }

    /// Drops a sequence's rows; its file goes at commit.
    pub fn drop_sequence(&self, txn: &mut CatalogTxn, cid: u32, oid: Oid) -> PgResult<()> {
        let w = self.writer(txn, cid);
        let d = Arc::make_mut(&mut txn.working);
        let q = d.sequences.remove(&oid).ok_or_else(|| vanished(oid))?;
        let class = d.rows.classes.remove(&oid).ok_or_else(|| vanished(oid))?;
        w.delete(&PG_CLASS, class)?;
        let params = d.rows.sequences.remove(&oid).ok_or_else(|| vanished(oid))?;
        w.delete(&PG_SEQUENCE, params)?;
        txn.pending.push(Pending::Dropped(q.locator()));
        Ok(())
    }
}

fn check_view_replacement(old: &View, new: &[Column]) -> PgResult<()> {
    let invalid = |msg: String| PgError::new(SqlState::INVALID_TABLE_DEFINITION, msg);
    if new.len() < old.columns.len() {
        return Err(invalid("cannot drop columns from view".into()));
    }
    for (o, n) in old.columns.iter().zip(new) {
        if o.name != n.name {
            return Err(invalid(format!(
                "cannot change name of view column \"{}\" to \"{}\"",
                o.name, n.name
            ))
            .with_hint(
                "Use ALTER VIEW ... RENAME COLUMN ... to change name of view column instead.",
            ));
        }
        if (o.type_oid, o.typmod) != (n.type_oid, n.typmod) {
            return Err(invalid(format!(
                "cannot change data type of view column \"{}\" from {} to {}",
                o.name,
                o.data_type().display_name(),
                n.data_type().display_name()
            )));
        }
    }
    Ok(())
}
