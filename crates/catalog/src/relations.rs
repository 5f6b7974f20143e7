//! The catalog's rows in heap relations.
//!
//! Every database, role, schema, table, column and pg_statistic entry is a
//! row version in one of the shared heap relations below (in `global/`,
//! relfilenodes as PostgreSQL's catalog OIDs). They are written with the
//! DDL transaction's xid like any heap tuple, so WAL, crash recovery and
//! MVCC visibility are the heap's: a rolled-back or crashed DDL leaves row
//! versions nobody sees. The relcache (`CatalogData`) is built from the rows
//! visible to a fresh snapshot; the SQL-visible pg_catalog relations are
//! views over the relcache (`exec::system_views`).
//!
//! The rows keep what the relcache needs, in PostgreSQL's column names where
//! one exists. All catalog rows live in these shared relations, so pg_class
//! and pg_namespace rows carry the database they belong to (`reldatabase`,
//! `nspdatabase`; 0 for the built-in schemas every database has).

use std::collections::HashMap;
use std::sync::Arc;

use access::heap::{self, HeapScan, InsertTarget, ModifyResult, Tid};
use access::tuple;
use common::ids::GLOBAL_TABLESPACE_OID;
use common::{Oid, PgError, PgResult, RelFileLocator, Xid};
use storage::buffer::BufferPool;
use txn::TransactionManager;
use types::{DataType, TypeId, Value};

use crate::model::{
    CatalogData, Column, Database, Namespace, Role, RoleAttributes, Sequence, Table, View,
};
use crate::stats::ColumnStats;

/// One catalog relation: its relfilenode and its columns' types.
pub(crate) struct SystemRelation {
    pub name: &'static str,
    pub rel_number: Oid,
    pub columns: &'static [TypeId],
}

impl SystemRelation {
    pub fn locator(&self) -> RelFileLocator {
        RelFileLocator {
            spc_oid: GLOBAL_TABLESPACE_OID,
            db_oid: 0,
            rel_number: self.rel_number,
        }
    }
    fn types(&self) -> Vec<DataType> {
        self.columns.iter().map(|t| DataType::new(*t)).collect()
    }
}

use TypeId::{Bool, Float8, Int2, Int4, Int8, Name, Oid as OidT, Text, Timestamptz};

/// oid, datname, datdba, datistemplate, datallowconn.
pub(crate) const PG_DATABASE: SystemRelation = SystemRelation {
    name: "pg_database",
    rel_number: 1262,
    columns: &[OidT, Name, OidT, Bool, Bool],
};
/// oid, rolname, rolsuper, rolpassword, rolinherit, rolcreaterole,
/// rolcreatedb, rolcanlogin, rolreplication, rolbypassrls, rolconnlimit,
/// rolvaliduntil (the first four were the first version's row).
pub(crate) const PG_AUTHID: SystemRelation = SystemRelation {
    name: "pg_authid",
    rel_number: 1260,
    columns: &[
        OidT,
        Name,
        Bool,
        Text,
        Bool,
        Bool,
        Bool,
        Bool,
        Bool,
        Bool,
        Int4,
        Timestamptz,
    ],
};
/// oid, nspname, nspowner, nspdatabase.
pub(crate) const PG_NAMESPACE: SystemRelation = SystemRelation {
    name: "pg_namespace",
    rel_number: 2615,
    columns: &[OidT, Name, OidT, OidT],
};
/// oid, relname, relnamespace, reldatabase, relfilenode, relkind, reltuples, relpages,
/// relallvisible, reltoastrelid and the TOAST relation's relfilenode (rows
/// written before TOAST end after relallvisible: no TOAST relation).
pub(crate) const PG_CLASS: SystemRelation = SystemRelation {
    name: "pg_class",
    rel_number: 1259,
    columns: &[
        OidT, Name, OidT, OidT, OidT, Text, Float8, Int4, Int4, OidT, OidT,
    ],
};
/// attrelid, attnum, attname, atttypid, atttypmod, attnotnull, the default's SQL text,
/// attstorage and attcompression when set (NULL: the defaults), attidentity.
pub(crate) const PG_ATTRIBUTE: SystemRelation = SystemRelation {
    name: "pg_attribute",
    rel_number: 1249,
    columns: &[OidT, Int2, Name, OidT, Int4, Bool, Text, Text, Text, Text],
};
/// starelid, staattnum, the column's statistics (JSON, see `stats.rs`).
pub(crate) const PG_STATISTIC: SystemRelation = SystemRelation {
    name: "pg_statistic",
    rel_number: 2619,
    columns: &[OidT, Int2, Text],
};

/// ev_class, ev_action: a view's query as SQL text (PostgreSQL keeps a
/// parse tree; the text is what this binder reads).
pub(crate) const PG_REWRITE: SystemRelation = SystemRelation {
    name: "pg_rewrite",
    rel_number: 2618,
    columns: &[OidT, Text],
};

/// seqrelid, seqtypid, seqstart, seqincrement, seqmax, seqmin, seqcache,
/// seqcycle, and the owning column (PostgreSQL keeps that in pg_depend).
pub(crate) const PG_SEQUENCE: SystemRelation = SystemRelation {
    name: "pg_sequence",
    rel_number: 2224,
    columns: &[OidT, OidT, Int8, Int8, Int8, Int8, Int8, Bool, OidT, Int2],
};

pub(crate) const ALL: [&SystemRelation; 16] = [
    &PG_DATABASE,
    &PG_AUTHID,
    &PG_NAMESPACE,
    &PG_CLASS,
    &PG_ATTRIBUTE,
    &PG_STATISTIC,
    &PG_REWRITE,
    &PG_SEQUENCE,
    &crate::comments::PG_DESCRIPTION,
    &crate::indexes::PG_INDEX,
    &crate::indexes::PG_CONSTRAINT,
    &crate::functions::PG_PROC,
    &crate::triggers::PG_TRIGGER,
    &crate::user_types::PG_TYPE,
    &crate::user_types::PG_ENUM,
    &crate::partition::PG_PARTITION,
];

/// Where each object's current row version is, so DDL can delete or
/// replace exactly it.
#[derive(Debug, Clone, Default)]
pub(crate) struct RowIndex {
    pub databases: HashMap<Oid, Tid>,
    pub roles: HashMap<Oid, Tid>,
    pub namespaces: HashMap<Oid, Tid>,
    pub classes: HashMap<Oid, Tid>,
    pub attributes: HashMap<(Oid, i16), Tid>,
    pub statistics: HashMap<(Oid, i16), Tid>,
    pub rewrites: HashMap<Oid, Tid>,
    pub sequences: HashMap<Oid, Tid>,
    pub comments: HashMap<crate::comments::ObjectAddress, Tid>,
    pub indexes: HashMap<Oid, Tid>,
    pub constraints: HashMap<Oid, Tid>,
    pub functions: crate::functions::FunctionRows,
    pub triggers: crate::triggers::TriggerRows,
    pub user_types: crate::user_types::UserTypeRows,
    pub partitions: HashMap<Oid, Tid>,
}

// Rows of each relation.

fn text(s: &str) -> Value {
    Value::Text(s.to_string())
}

pub(crate) fn database_row(d: &Database) -> Vec<Value> {
    vec![
        Value::Oid(d.oid),
        text(&d.name),
        Value::Oid(d.owner),
        Value::Bool(d.is_template),
        Value::Bool(d.allow_connections),
    ]
}

pub(crate) fn role_row(r: &Role) -> Vec<Value> {
    vec![
        Value::Oid(r.oid),
        text(&r.name),
        Value::Bool(r.superuser),
        r.password.as_deref().map_or(Value::Null, text),
        Value::Bool(r.attrs.inherit),
        Value::Bool(r.attrs.create_role),
        Value::Bool(r.attrs.create_db),
        Value::Bool(r.attrs.can_login),
        Value::Bool(r.attrs.replication),
        Value::Bool(r.attrs.bypass_rls),
        Value::Int4(r.attrs.conn_limit),
        r.attrs.valid_until.map_or(Value::Null, Value::Timestamptz),
    ]
}

/// A role's attributes from its pg_authid row. A row of the first version
/// (four columns, the rest read as NULL) was written when every role could
/// log in and a superuser had every attribute.
fn role_attributes(r: &[Value]) -> RoleAttributes {
    if r.get(4).is_none_or(|v| matches!(v, Value::Null)) {
        let superuser = boolean(&r[2]);
        return RoleAttributes {
            can_login: true,
            ..if superuser {
                RoleAttributes::all()
            } else {
                RoleAttributes::default()
            }
        };
    }
    RoleAttributes {
        inherit: boolean(&r[4]),
        create_role: boolean(&r[5]),
        create_db: boolean(&r[6]),
        can_login: boolean(&r[7]),
        replication: boolean(&r[8]),
        bypass_rls: boolean(&r[9]),
        conn_limit: match r[10] {
            Value::Int4(x) => x,
            _ => -1,
        },
        valid_until: match r[11] {
            Value::Timestamptz(x) => Some(x),
            _ => None,
        },
    }
}

pub(crate) fn namespace_row(n: &Namespace) -> Vec<Value> {
    vec![
        Value::Oid(n.oid),
        text(&n.name),
        Value::Oid(crate::BOOTSTRAP_SUPERUSER),
        Value::Oid(n.db_oid),
    ]
}

pub(crate) fn class_row(t: &Table) -> Vec<Value> {
    vec![
        Value::Oid(t.oid),
        text(&t.name),
        Value::Oid(t.namespace),
        Value::Oid(t.db_oid),
        Value::Oid(t.relfilenode),
        text(&t.relkind().to_string()),
        Value::Float8(t.reltuples),
        Value::Int4(t.relpages as i32),
        Value::Int4(t.relallvisible as i32),
        Value::Oid(t.toast.map_or(0, |r| r.oid)),
        Value::Oid(t.toast.map_or(0, |r| r.relfilenode)),
    ]
}

pub(crate) fn view_class_row(v: &View) -> Vec<Value> {
    vec![
        Value::Oid(v.oid),
        text(&v.name),
        Value::Oid(v.namespace),
        Value::Oid(v.db_oid),
        Value::Oid(0),
        text("v"),
        Value::Float8(-1.0),
        Value::Int4(0),
        Value::Int4(0),
        Value::Oid(0),
        Value::Oid(0),
    ]
}

pub(crate) fn sequence_class_row(q: &Sequence) -> Vec<Value> {
    vec![
        Value::Oid(q.oid),
        text(&q.name),
        Value::Oid(q.namespace),
        Value::Oid(q.db_oid),
        Value::Oid(q.relfilenode),
        text("S"),
        Value::Float8(1.0),
        Value::Int4(1),
        Value::Int4(0),
        Value::Oid(0),
        Value::Oid(0),
    ]
}

pub(crate) fn sequence_row(q: &Sequence) -> Vec<Value> {
    let (rel, col) = q.owned_by.unwrap_or((0, 0));
    vec![
        Value::Oid(q.oid),
        Value::Oid(q.type_oid),
        Value::Int8(q.start),
        Value::Int8(q.increment),
        Value::Int8(q.max),
        Value::Int8(q.min),
        Value::Int8(q.cache),
        Value::Bool(q.cycle),
        Value::Oid(rel),
        Value::Int2(col),
    ]
}

pub(crate) fn rewrite_row(v: &View) -> Vec<Value> {
    vec![Value::Oid(v.oid), text(&v.query)]
}

pub(crate) fn attribute_row(rel: Oid, attnum: i16, c: &Column) -> Vec<Value> {
    vec![
        Value::Oid(rel),
        Value::Int2(attnum),
        text(&c.name),
        Value::Oid(c.type_oid),
        Value::Int4(c.typmod),
        Value::Bool(c.not_null),
        c.default.as_deref().map_or(Value::Null, text),
        c.storage
            .map_or(Value::Null, |s| Value::Text(s.code().to_string())),
        c.compression
            .map_or(Value::Null, |m| Value::Text(m.code().to_string())),
        c.identity
            .map_or(Value::Null, |i| Value::Text(i.code().to_string())),
    ]
}

pub(crate) fn statistic_row(rel: Oid, s: &ColumnStats) -> Vec<Value> {
    vec![
        Value::Oid(rel),
        Value::Int2(s.attnum),
        Value::Text(serde_json::to_string(s).expect("statistics serialise")),
    ]
}

/// Writes catalog rows for one DDL command of transaction `xid`.
pub(crate) struct RowWriter<'a> {
    pub pool: &'static BufferPool,
    pub tm: &'a TransactionManager,
    pub xid: Xid,
    pub cid: u32,
}

impl RowWriter<'_> {
    pub fn insert(&self, rel: &SystemRelation, values: &[Value]) -> PgResult<Tid> {
        let mut bytes = Vec::new();
        tuple::form_tuple(&rel.types(), values, self.xid, self.cid, &mut bytes);
        heap::insert(
            self.pool,
            self.tm,
            rel.locator(),
            &mut bytes,
            &mut InsertTarget::new(),
        )
    }

    /// Deletes the row version at `tid`. The catalog-change lock is held, so no other
    /// transaction can be changing catalog rows.
    pub fn delete(&self, rel: &SystemRelation, tid: Tid) -> PgResult<()> {
        match heap::delete(
            self.pool,
            rel.locator(),
            tid,
            heap::Requester::plain(self.xid),
            self.cid,
            self.tm,
            // Nobody else changes catalog rows (the catalog-change lock).
            &mut |x| {
                self.tm
                    .wait_for(x, &|| false)
                    .ok_or_else(|| PgError::internal("catalog row wait ended"))
            },
        )? {
            ModifyResult::Done(_) => Ok(()),
            other => panic!(
                "catalog row {tid:?} of {} changed under the catalog-change lock: {other:?}",
                rel.name
            ),
        }
    }

    /// Replaces the row version at `tid` with `values`; returns the new one's tid.
    pub fn replace(&self, rel: &SystemRelation, tid: Tid, values: &[Value]) -> PgResult<Tid> {
        self.delete(rel, tid)?;
        self.insert(rel, values)
    }
}

/// The rows of `rel` visible to a fresh snapshot, with their tids.
pub(crate) fn scan(
    pool: &'static BufferPool,
    tm: &TransactionManager,
    rel: &SystemRelation,
) -> PgResult<Vec<(Tid, Vec<Value>)>> {
    let types = rel.types();
    let snapshot = tm.snapshot(0, 0);
    let mut rows = Vec::new();
    let mut scan = HeapScan::new(pool, rel.locator())?;
    while scan.next_page(&snapshot, tm, |tid, t| {
        let mut values = Vec::with_capacity(types.len());
        tuple::deform_tuple(t, &types, None, &mut values)?;
        rows.push((tid, values));
        Ok(())
    })? {}
    Ok(rows)
}

pub(crate) fn corrupt(rel: &SystemRelation, what: &str) -> PgError {
    PgError::new(
        common::SqlState::DATA_CORRUPTED,
        format!("catalog relation {} holds a bad row: {what}", rel.name),
    )
}

fn oid(v: &Value) -> Oid {
    match v {
        Value::Oid(o) => *o,
        _ => 0,
    }
}
fn string(v: &Value) -> String {
    match v {
        Value::Text(s) => s.clone(),
        _ => String::new(),
    }
}
fn opt_string(v: &Value) -> Option<String> {
    match v {
        Value::Text(s) => Some(s.clone()),
        _ => None,
    }
}
fn boolean(v: &Value) -> bool {
    matches!(v, Value::Bool(true))
}
fn int2(v: &Value) -> i16 {
    match v {
        Value::Int2(x) => *x,
        _ => 0,
    }
}

/// Builds the relcache from the rows a fresh snapshot sees.
pub(crate) fn load(pool: &'static BufferPool, tm: &TransactionManager) -> PgResult<CatalogData> {
    let mut d = CatalogData::default();
    for (tid, r) in scan(pool, tm, &PG_DATABASE)? {
        let db = Database {
            oid: oid(&r[0]),
            name: string(&r[1]),
            owner: oid(&r[2]),
            is_template: boolean(&r[3]),
            allow_connections: boolean(&r[4]),
        };
        d.rows.databases.insert(db.oid, tid);
        d.databases.insert(db.oid, db);
    }
    for (tid, r) in scan(pool, tm, &PG_AUTHID)? {
        let role = Role {
            oid: oid(&r[0]),
            name: string(&r[1]),
            superuser: boolean(&r[2]),
            password: opt_string(&r[3]),
            attrs: role_attributes(&r),
        };
        d.rows.roles.insert(role.oid, tid);
        d.roles.insert(role.oid, role);
    }
    for (tid, r) in scan(pool, tm, &PG_NAMESPACE)? {
        let ns = Namespace {
            oid: oid(&r[0]),
            name: string(&r[1]),
            db_oid: oid(&r[3]),
        };
        d.rows.namespaces.insert(ns.oid, tid);
        d.namespaces.insert(ns.oid, ns);
    }
    let mut view_classes = HashMap::new();
    let mut sequence_classes = HashMap::new();
    let mut index_classes = HashMap::new();
    for (tid, r) in scan(pool, tm, &PG_CLASS)? {
        match string(&r[5]).as_str() {
            "i" => {
                index_classes.insert(oid(&r[0]), (tid, r));
                continue;
            }
            "v" => {
                view_classes.insert(oid(&r[0]), (tid, r));
                continue;
            }
            "S" => {
                sequence_classes.insert(oid(&r[0]), (tid, r));
                continue;
            }
            _ => {}
        }
        let t = Table {
            oid: oid(&r[0]),
            name: string(&r[1]),
            namespace: oid(&r[2]),
            db_oid: oid(&r[3]),
            relfilenode: oid(&r[4]),
            columns: Vec::new(),
            reltuples: match r[6] {
                Value::Float8(x) => x,
                _ => -1.0,
            },
            relpages: match r[7] {
                Value::Int4(x) => x as u32,
                _ => 0,
            },
            relallvisible: match r.get(8) {
                Some(Value::Int4(x)) => *x as u32,
                _ => 0,
            },
            statistics: Arc::default(),
            toast: match (r.get(9), r.get(10)) {
                (Some(Value::Oid(oid)), Some(Value::Oid(relfilenode))) if *oid != 0 => {
                    Some(crate::model::ToastRelation {
                        oid: *oid,
                        relfilenode: *relfilenode,
                    })
                }
                _ => None,
            },
            partition_key: None,
            partition_of: None,
        };
        d.rows.classes.insert(t.oid, tid);
        d.tables.insert(t.oid, t);
    }
    for (tid, r) in scan(pool, tm, &PG_REWRITE)? {
        let view = oid(&r[0]);
        let Some((class_tid, c)) = view_classes.remove(&view) else {
            return Err(corrupt(
                &PG_REWRITE,
                &format!("rule of missing view {view}"),
            ));
        };
        let v = View {
            oid: view,
            name: string(&c[1]),
            namespace: oid(&c[2]),
            db_oid: oid(&c[3]),
            query: string(&r[1]),
            columns: Vec::new(),
        };
        d.rows.classes.insert(view, class_tid);
        d.rows.rewrites.insert(view, tid);
        d.views.insert(view, v);
    }
    let int8 = |v: &Value| match v {
        Value::Int8(x) => *x,
        _ => 0,
    };
    for (tid, r) in scan(pool, tm, &PG_SEQUENCE)? {
        let seq = oid(&r[0]);
        let Some((class_tid, c)) = sequence_classes.remove(&seq) else {
            return Err(corrupt(
                &PG_SEQUENCE,
                &format!("parameters of missing sequence {seq}"),
            ));
        };
        let owner = oid(&r[8]);
        let q = Sequence {
            oid: seq,
            name: string(&c[1]),
            namespace: oid(&c[2]),
            db_oid: oid(&c[3]),
            relfilenode: oid(&c[4]),
            type_oid: oid(&r[1]),
            start: int8(&r[2]),
            increment: int8(&r[3]),
            max: int8(&r[4]),
            min: int8(&r[5]),
            cache: int8(&r[6]),
            cycle: boolean(&r[7]),
            owned_by: (owner != 0).then(|| (owner, int2(&r[9]))),
        };
        d.rows.classes.insert(seq, class_tid);
        d.rows.sequences.insert(seq, tid);
        d.sequences.insert(seq, q);
    }
    if let Some(seq) = sequence_classes.keys().next() {
        return Err(corrupt(
            &PG_CLASS,
            &format!("sequence {seq} has no parameters"),
        ));
    }
    if let Some(view) = view_classes.keys().next() {
        return Err(corrupt(&PG_CLASS, &format!("view {view} has no query")));
    }
    // Columns' types may be user-defined ones.
    crate::user_types::load(pool, tm, &mut d)?;
    let mut columns: HashMap<Oid, Vec<(i16, Column)>> = HashMap::new();
    for (tid, r) in scan(pool, tm, &PG_ATTRIBUTE)? {
        let rel = oid(&r[0]);
        let attnum = int2(&r[1]);
        let type_oid = oid(&r[3]);
        if TypeId::from_oid(type_oid).is_none() {
            return Err(corrupt(&PG_ATTRIBUTE, &format!("unknown type {type_oid}")));
        }
        let c = Column {
            name: string(&r[2]),
            type_oid,
            typmod: match r[4] {
                Value::Int4(x) => x,
                _ => -1,
            },
            not_null: boolean(&r[5]),
            default: opt_string(&r[6]),
            storage: r
                .get(7)
                .and_then(opt_string)
                .and_then(|s| s.chars().next())
                .and_then(access::toast::Storage::from_code),
            compression: r
                .get(8)
                .and_then(opt_string)
                .and_then(|s| s.chars().next())
                .and_then(access::toast::Compression::from_code),
            // Rows written before identity columns have no tenth column.
            identity: r
                .get(9)
                .and_then(opt_string)
                .and_then(|s| s.chars().next())
                .and_then(crate::model::Identity::from_code),
        };
        d.rows.attributes.insert((rel, attnum), tid);
        columns.entry(rel).or_default().push((attnum, c));
    }
    for (rel, mut cols) in columns {
        cols.sort_by_key(|(n, _)| *n);
        let target = match d.tables.get_mut(&rel) {
            Some(t) => &mut t.columns,
            None => match d.views.get_mut(&rel) {
                Some(v) => &mut v.columns,
                None => {
                    return Err(corrupt(
                        &PG_ATTRIBUTE,
                        &format!("columns of missing relation {rel}"),
                    ))
                }
            },
        };
        for (i, (n, _)) in cols.iter().enumerate() {
            if *n as usize != i + 1 {
                return Err(corrupt(
                    &PG_ATTRIBUTE,
                    &format!("relation {rel} lacks column {}", i + 1),
                ));
            }
        }
        *target = cols.into_iter().map(|(_, c)| c).collect();
    }
    let mut stats: HashMap<Oid, Vec<ColumnStats>> = HashMap::new();
    for (tid, r) in scan(pool, tm, &PG_STATISTIC)? {
        let rel = oid(&r[0]);
        let s: ColumnStats = serde_json::from_str(&string(&r[2]))
            .map_err(|e| corrupt(&PG_STATISTIC, &e.to_string()))?;
        d.rows.statistics.insert((rel, s.attnum), tid);
        stats.entry(rel).or_default().push(s);
    }
    for (rel, mut s) in stats {
        s.sort_by_key(|s| s.attnum);
        if let Some(t) = d.tables.get_mut(&rel) {
            t.statistics = Arc::new(s);
        }
    }
    crate::indexes::load(pool, tm, &mut d, index_classes)?;
    crate::comments::load(pool, tm, &mut d)?;
    crate::functions::load(pool, tm, &mut d)?;
    crate::triggers::load(pool, tm, &mut d)?;
    crate::partition::load(pool, tm, &mut d)?;
    Ok(d)
}
