//! User-defined types: enums (CREATE TYPE ... AS ENUM) and domains
//! (CREATE DOMAIN, `domains.rs`), pg_type's and pg_enum's rows.
//!
//! Two heap relations hold them, written under the changing transaction's
//! xid like every catalog row: 1247 (pg_type's oid), one row per type, and
//! 3501 (pg_enum's oid), one row per label. A type's array type (`_mood`)
//! has no row of its own: its oid is kept on the type's row, as typarray.
//!
//! Values of an enum are turned from label oids into text and back through
//! `types::enums`' process-wide registry; every catalog version that
//! becomes current for enum DDL (load, a change, ROLLBACK TO, abort) is
//! published there (`publish`).

use std::collections::HashMap;
use std::sync::Arc;

use access::heap::Tid;
use common::{Oid, PgError, PgResult, SqlState};
use storage::buffer::BufferPool;
use txn::TransactionManager;
use types::enums::EnumLabel;
use types::{TypeId, Value};

use crate::ddl::CatalogTxn;
use crate::model::CatalogData;
use crate::relations::{self, RowWriter, SystemRelation};
use crate::Catalog;

/// pg_type's oid (the classoid of type comments).
pub const PG_TYPE_OID: Oid = 1247;
/// pg_enum's oid.
pub const PG_ENUM_OID: Oid = 3501;

/// Longest enum label in bytes (NAMEDATALEN - 1).
const MAX_LABEL_BYTES: usize = 63;

/// oid, typname, typnamespace, database, typtype, typarray, and a
/// domain's typbasetype, typtypmod, typnotnull, typdefault (NULL for an
/// enum, and in rows written before domains existed).
pub(crate) const PG_TYPE: SystemRelation = SystemRelation {
    name: "pg_type",
    rel_number: PG_TYPE_OID,
    columns: &[
        TypeId::Oid,
        TypeId::Name,
        TypeId::Oid,
        TypeId::Oid,
        TypeId::Text,
        TypeId::Oid,
        TypeId::Oid,
        TypeId::Int4,
        TypeId::Bool,
        TypeId::Text,
    ],
};

/// oid, enumtypid, enumsortorder, enumlabel.
pub(crate) const PG_ENUM: SystemRelation = SystemRelation {
    name: "pg_enum",
    rel_number: PG_ENUM_OID,
    columns: &[TypeId::Oid, TypeId::Oid, TypeId::Float8, TypeId::Name],
};

/// One user-defined type.
#[derive(Debug, Clone, PartialEq)]
pub struct UserType {
    pub oid: Oid,
    pub name: String,
    pub namespace: Oid,
    pub db_oid: Oid,
    /// typarray: the oid of `_name`.
    pub array_oid: Oid,
    /// The labels, in sort order (none for a domain).
    pub labels: Vec<EnumLabel>,
    /// Set for a domain (typtype 'd').
    pub domain: Option<crate::domains::Domain>,
}

impl UserType {
    /// The type as `TypeId` names it: a domain is its base type.
    pub fn type_id(&self) -> TypeId {
        match &self.domain {
            Some(d) => TypeId::from_oid(d.base_oid).expect("a domain's base type is known"),
            None => TypeId::Enum(self.oid),
        }
    }
    pub fn label(&self, label: &str) -> Option<&EnumLabel> {
        self.labels.iter().find(|l| l.label == label)
    }
}

/// Where the rows of types and labels are.
#[derive(Debug, Clone, Default)]
pub(crate) struct UserTypeRows {
    pub(crate) types: HashMap<Oid, Tid>,
    labels: HashMap<Oid, Tid>,
    /// A domain's CHECK constraints' pg_constraint rows.
    pub(crate) domain_checks: HashMap<Oid, Tid>,
}

pub(crate) fn type_row(t: &UserType) -> Vec<Value> {
    let mut row = vec![
        Value::Oid(t.oid),
        Value::Text(t.name.clone()),
        Value::Oid(t.namespace),
        Value::Oid(t.db_oid),
        Value::Text(if t.domain.is_some() { "d" } else { "e" }.into()),
        Value::Oid(t.array_oid),
    ];
    match &t.domain {
        Some(d) => row.extend([
            Value::Oid(d.base_oid),
            Value::Int4(d.base_typmod),
            Value::Bool(d.not_null),
            d.default.clone().map_or(Value::Null, Value::Text),
        ]),
        None => row.extend([Value::Null, Value::Null, Value::Null, Value::Null]),
    }
    row
}

fn label_row(type_oid: Oid, l: &EnumLabel) -> Vec<Value> {
    vec![
        Value::Oid(l.oid),
        Value::Oid(type_oid),
        Value::Float8(l.sort_order as f64),
        Value::Text(l.label.clone()),
    ]
}

/// Adds the types a fresh snapshot sees to the relcache being loaded, and
/// publishes them. Runs before columns load: a column's type must be known.
pub(crate) fn load(
    pool: &'static BufferPool,
    tm: &TransactionManager,
    d: &mut CatalogData,
) -> PgResult<()> {
    let oid = |rel: &SystemRelation, v: &Value| match v {
        Value::Oid(o) => Ok(*o),
        _ => Err(relations::corrupt(rel, "oid column")),
    };
    let text = |rel: &SystemRelation, v: &Value| match v {
        Value::Text(s) => Ok(s.clone()),
        _ => Err(relations::corrupt(rel, "text column")),
    };
    let mut types = HashMap::new();
    for (tid, r) in relations::scan(pool, tm, &PG_TYPE)? {
        let t = UserType {
            oid: oid(&PG_TYPE, &r[0])?,
            name: text(&PG_TYPE, &r[1])?,
            namespace: oid(&PG_TYPE, &r[2])?,
            db_oid: oid(&PG_TYPE, &r[3])?,
            array_oid: oid(&PG_TYPE, &r[5])?,
            labels: Vec::new(),
            domain: crate::domains::domain_of_row(&r)?,
        };
        d.rows.user_types.types.insert(t.oid, tid);
        types.insert(t.oid, t);
    }
    for (tid, r) in relations::scan(pool, tm, &PG_ENUM)? {
        let type_oid = oid(&PG_ENUM, &r[1])?;
        let sort_order = match r[2] {
            Value::Float8(f) => f as f32,
            _ => return Err(relations::corrupt(&PG_ENUM, "enumsortorder")),
        };
        let l = EnumLabel {
            oid: oid(&PG_ENUM, &r[0])?,
            sort_order,
            label: text(&PG_ENUM, &r[3])?,
        };
        d.rows.user_types.labels.insert(l.oid, tid);
        types
            .get_mut(&type_oid)
            .ok_or_else(|| relations::corrupt(&PG_ENUM, "label of a missing type"))?
            .labels
            .push(l);
    }
    crate::domains::load_checks(pool, tm, d, &mut types)?;
    for (oid, mut t) in types {
        sort_labels(&mut t.labels);
        d.user_types.insert(oid, Arc::new(t));
    }
    publish(d);
    Ok(())
}

fn sort_labels(labels: &mut [EnumLabel]) {
    labels.sort_by(|a, b| a.sort_order.total_cmp(&b.sort_order));
}

/// Makes `d`'s enum types the ones values are read and written with.
pub(crate) fn publish(d: &CatalogData) {
    types::domains::publish(
        d.user_types
            .values()
            .filter_map(|t| Some((t.oid, t.domain.as_ref()?.base_oid))),
    );
    types::enums::publish(
        d.user_types
            .values()
            .filter(|t| t.domain.is_none())
            .map(|t| (t.name.clone(), t.oid, t.array_oid, t.labels.clone())),
    );
}

impl CatalogData {
    /// The type `name` in schema `namespace` of database `db`.
    pub fn user_type_by_name(&self, db: Oid, namespace: Oid, name: &str) -> Option<&Arc<UserType>> {
        self.user_types
            .values()
            .find(|t| t.db_oid == db && t.namespace == namespace && t.name == name)
    }

    pub fn user_type(&self, oid: Oid) -> Option<&Arc<UserType>> {
        self.user_types.get(&oid)
    }

    /// The user types of `db` (for the pg_type and pg_enum views).
    pub fn user_types_of(&self, db: Oid) -> impl Iterator<Item = &Arc<UserType>> + '_ {
        self.user_types.values().filter(move |t| t.db_oid == db)
    }
}

fn invalid_label(label: &str) -> PgError {
    PgError::new(
        SqlState::INVALID_PARAMETER_VALUE,
        format!("invalid enum label \"{label}\""),
    )
    .with_detail("Labels must be 63 bytes or less.")
}

fn check_label(label: &str) -> PgResult<()> {
    if label.len() > MAX_LABEL_BYTES {
        return Err(invalid_label(label));
    }
    Ok(())
}

/// Where ALTER TYPE ... ADD VALUE puts the new label.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LabelPosition {
    Last,
    Before(String),
    After(String),
}

impl Catalog {
    pub(crate) fn type_writer(&self, txn: &CatalogTxn, cid: u32) -> RowWriter<'_> {
        RowWriter {
            pool: self.pool,
            tm: self.tm,
            xid: txn.write_xid,
            cid,
        }
    }

    /// CREATE TYPE name AS ENUM (labels). The caller checked that no type
    /// of the name exists in the schema.
    pub fn create_enum_type(
        &self,
        txn: &mut CatalogTxn,
        cid: u32,
        name: &str,
        namespace: Oid,
        db_oid: Oid,
        labels: &[String],
    ) -> PgResult<Oid> {
        for l in labels {
            check_label(l)?;
        }
        let oid = self.oids.next()?;
        let array_oid = self.oids.next()?;
        let mut t = UserType {
            oid,
            name: name.to_string(),
            namespace,
            db_oid,
            array_oid,
            labels: Vec::new(),
            domain: None,
        };
        let w = self.type_writer(txn, cid);
        let type_tid = w.insert(&PG_TYPE, &type_row(&t))?;
        let mut label_tids = Vec::new();
        for (i, l) in labels.iter().enumerate() {
            if t.labels.iter().any(|e| &e.label == l) {
                return Err(PgError::new(
                    SqlState::UNIQUE_VIOLATION,
                    "duplicate key value violates unique constraint \"pg_enum_typid_label_index\"",
                )
                .with_detail(format!(
                    "Key (enumtypid, enumlabel)=({oid}, {l}) already exists."
                )));
            }
            let label = EnumLabel {
                oid: self.oids.next()?,
                sort_order: (i + 1) as f32,
                label: l.clone(),
            };
            label_tids.push((label.oid, w.insert(&PG_ENUM, &label_row(oid, &label))?));
            t.labels.push(label);
        }
        let d = Arc::make_mut(&mut txn.working);
        d.rows.user_types.types.insert(oid, type_tid);
        d.rows.user_types.labels.extend(label_tids);
        d.user_types.insert(oid, Arc::new(t));
        publish(d);
        Ok(oid)
    }

    /// ALTER TYPE ... ADD VALUE [IF NOT EXISTS] label [BEFORE|AFTER other].
    /// False: the label existed and `if_not_exists` was given.
    pub fn add_enum_label(
        &self,
        txn: &mut CatalogTxn,
        cid: u32,
        type_oid: Oid,
        label: &str,
        position: &LabelPosition,
        if_not_exists: bool,
    ) -> PgResult<bool> {
        let mut t = crate::user_types::working_type(txn, type_oid)?;
        check_label(label)?;
        if t.label(label).is_some() {
            if if_not_exists {
                return Ok(false);
            }
            return Err(PgError::new(
                SqlState::DUPLICATE_OBJECT,
                format!("enum label \"{label}\" already exists"),
            ));
        }
        let neighbour = |n: &str| {
            t.labels.iter().position(|l| l.label == n).ok_or_else(|| {
                PgError::new(
                    SqlState::INVALID_PARAMETER_VALUE,
                    format!("\"{n}\" is not an existing enum label"),
                )
            })
        };
        // A float between the neighbours, as PostgreSQL, so no row is renumbered.
        let (index, sort_order) = match position {
            LabelPosition::Last => (
                t.labels.len(),
                t.labels.last().map_or(1.0, |l| l.sort_order + 1.0),
            ),
            LabelPosition::After(n) => {
                let i = neighbour(n)?;
                let lo = t.labels[i].sort_order;
                let order = match t.labels.get(i + 1) {
                    Some(next) => midpoint(lo, next.sort_order)?,
                    None => lo + 1.0,
                };
                (i + 1, order)
            }
            LabelPosition::Before(n) => {
                let i = neighbour(n)?;
                let hi = t.labels[i].sort_order;
                let order = match i.checked_sub(1) {
                    Some(p) => midpoint(t.labels[p].sort_order, hi)?,
                    None => hi - 1.0,
                };
                (i, order)
            }
        };
        let new = EnumLabel {
            oid: self.oids.next()?,
            sort_order,
            label: label.to_string(),
        };
        let w = self.type_writer(txn, cid);
        let tid = w.insert(&PG_ENUM, &label_row(type_oid, &new))?;
        t.labels.insert(index, new.clone());
        let d = Arc::make_mut(&mut txn.working);
        d.rows.user_types.labels.insert(new.oid, tid);
        d.user_types.insert(type_oid, Arc::new(t));
        publish(d);
        Ok(true)
    }

    /// ALTER TYPE ... RENAME VALUE old TO new.
    pub fn rename_enum_label(
        &self,
        txn: &mut CatalogTxn,
        cid: u32,
        type_oid: Oid,
        old: &str,
        new: &str,
    ) -> PgResult<()> {
        let mut t = crate::user_types::working_type(txn, type_oid)?;
        check_label(new)?;
        let Some(i) = t.labels.iter().position(|l| l.label == old) else {
            return Err(PgError::new(
                SqlState::INVALID_PARAMETER_VALUE,
                format!("\"{old}\" is not an existing enum label"),
            ));
        };
        if t.label(new).is_some() {
            return Err(PgError::new(
                SqlState::DUPLICATE_OBJECT,
                format!("enum label \"{new}\" already exists"),
            ));
        }
        t.labels[i].label = new.to_string();
        let l = t.labels[i].clone();
        let row = txn.working.rows.user_types.labels.get(&l.oid).copied();
        let row = row.ok_or_else(|| relations::corrupt(&PG_ENUM, "no row"))?;
        let w = self.type_writer(txn, cid);
        let tid = w.replace(&PG_ENUM, row, &label_row(type_oid, &l))?;
        let d = Arc::make_mut(&mut txn.working);
        d.rows.user_types.labels.insert(l.oid, tid);
        d.user_types.insert(type_oid, Arc::new(t));
        publish(d);
        Ok(())
    }

    /// DROP TYPE: deletes the type's rows and its comments. The caller
    /// checked that no column uses it.
    pub fn drop_user_type(&self, txn: &mut CatalogTxn, cid: u32, type_oid: Oid) -> PgResult<()> {
        let w = self.type_writer(txn, cid);
        let d = Arc::make_mut(&mut txn.working);
        if let Some(t) = d.user_types.remove(&type_oid) {
            for l in &t.labels {
                if let Some(tid) = d.rows.user_types.labels.remove(&l.oid) {
                    w.delete(&PG_ENUM, tid)?;
                }
            }
            for c in t.domain.iter().flat_map(|d| &d.checks) {
                if let Some(tid) = d.rows.user_types.domain_checks.remove(&c.oid) {
                    w.delete(&crate::indexes::PG_CONSTRAINT, tid)?;
                }
            }
        }
        if let Some(tid) = d.rows.user_types.types.remove(&type_oid) {
            w.delete(&PG_TYPE, tid)?;
        }
        publish(d);
        self.drop_comments(txn, cid, PG_TYPE_OID, type_oid)
    }

    /// DROP SCHEMA's part: drops the schema's types once its relations are
    /// gone; 2BP01 while a column elsewhere still uses one (there is no
    /// pg_depend to cascade through).
    pub(crate) fn drop_namespace_types(
        &self,
        txn: &mut CatalogTxn,
        cid: u32,
        namespace: Oid,
    ) -> PgResult<()> {
        let mut types: Vec<Arc<UserType>> = txn
            .working
            .user_types
            .values()
            .filter(|t| t.namespace == namespace)
            .cloned()
            .collect();
        // A domain goes before the types it is based on (a domain's base
        // always has the lower oid).
        types.sort_by_key(|t| std::cmp::Reverse(t.oid));
        for t in types {
            let used = txn.working.tables.values().any(|table| {
                table
                    .columns
                    .iter()
                    .any(|c| c.type_oid == t.oid || c.type_oid == t.array_oid)
            }) || txn
                .working
                .user_types
                .values()
                .any(|d| d.domain.as_ref().is_some_and(|d| d.base_oid == t.oid));
            if used {
                return Err(PgError::new(
                    SqlState::DEPENDENT_OBJECTS_STILL_EXIST,
                    format!(
                        "cannot drop type {} because other objects depend on it",
                        t.name
                    ),
                ));
            }
            self.drop_user_type(txn, cid, t.oid)?;
        }
        Ok(())
    }

    /// Publishes the enum types of the catalog version a transaction's
    /// changes were rolled back to (or of the committed one).
    pub(crate) fn republish_types(&self, d: &CatalogData) {
        publish(d);
    }
}

/// A sort order strictly between `lo` and `hi` (float4, as enumsortorder).
fn midpoint(lo: f32, hi: f32) -> PgResult<f32> {
    let mid = lo + (hi - lo) / 2.0;
    if mid <= lo || mid >= hi {
        // PostgreSQL renumbers here; ours would need every label's row rewritten.
        return Err(PgError::unsupported(
            "too many enum labels were added between these two labels",
        ));
    }
    Ok(mid)
}

/// A copy of the user type `type_oid` as the transaction's catalog has it,
/// to change and write back.
pub(crate) fn working_type(txn: &CatalogTxn, type_oid: Oid) -> PgResult<UserType> {
    txn.working
        .user_types
        .get(&type_oid)
        .map(|t| (**t).clone())
        .ok_or_else(|| crate::ddl::vanished(type_oid))
}
