//! Indexes (pg_class rows of relkind `i` with a pg_index row) and
//! constraints (pg_constraint rows): what they are, how their rows look,
//! and the DDL that creates and drops them.
//!
//! An index belongs to one table and names its key columns by attnum; a
//! PRIMARY KEY or UNIQUE constraint owns the index that enforces it (the
//! two share a name, as in PostgreSQL) and dropping the constraint drops
//! the index. Dropping a table drops its indexes and constraints.

use std::sync::Arc;

use access::btree;
use common::{Oid, PgError, PgResult, RelFileLocator, SqlState};
use types::Value;

use crate::ddl::{vanished, CatalogTxn, Pending};
use crate::model::{CatalogData, Table};
use crate::relations::{self, SystemRelation, PG_CLASS};
use crate::Catalog;

use common::ids::DEFAULT_TABLESPACE_OID;
use types::TypeId::{Bool, Name, Oid as OidT, Text};

/// One key column of an index: the table's column (1-based attnum) and
/// its order (pg_index.indoption's DESC and NULLS_FIRST bits).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IndexKey {
    pub attnum: i16,
    pub descending: bool,
    pub nulls_first: bool,
}

impl IndexKey {
    /// ASC NULLS LAST, PostgreSQL's default order.
    pub fn asc(attnum: i16) -> Self {
        IndexKey {
            attnum,
            descending: false,
            nulls_first: false,
        }
    }
    fn option_bits(&self) -> i16 {
        i16::from(self.descending) | (i16::from(self.nulls_first) << 1)
    }
}

/// A B-tree index.
#[derive(Debug, Clone, PartialEq)]
pub struct Index {
    pub oid: Oid,
    pub name: String,
    pub namespace: Oid,
    pub db_oid: Oid,
    pub relfilenode: Oid,
    /// The indexed table.
    pub table: Oid,
    pub keys: Vec<IndexKey>,
    pub unique: bool,
    pub primary: bool,
}

impl Index {
    pub fn locator(&self) -> RelFileLocator {
        RelFileLocator {
            spc_oid: DEFAULT_TABLESPACE_OID,
            db_oid: self.db_oid,
            rel_number: self.relfilenode,
        }
    }
    /// The access method's view of the key, from the table's column types.
    pub fn desc(&self, table: &Table) -> btree::IndexDesc {
        btree::IndexDesc {
            columns: self
                .keys
                .iter()
                .map(|k| btree::KeyColumn {
                    ty: table.columns[k.attnum as usize - 1].data_type(),
                    descending: k.descending,
                    nulls_first: k.nulls_first,
                })
                .collect(),
        }
    }
}

/// ON DELETE / ON UPDATE of a foreign key (pg_constraint.confdeltype's letters).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReferentialAction {
    NoAction,
    Restrict,
    Cascade,
    SetNull,
    SetDefault,
}

impl ReferentialAction {
    pub fn code(self) -> char {
        match self {
            ReferentialAction::NoAction => 'a',
            ReferentialAction::Restrict => 'r',
            ReferentialAction::Cascade => 'c',
            ReferentialAction::SetNull => 'n',
            ReferentialAction::SetDefault => 'd',
        }
    }
    pub fn from_code(c: char) -> Self {
        match c {
            'r' => ReferentialAction::Restrict,
            'c' => ReferentialAction::Cascade,
            'n' => ReferentialAction::SetNull,
            'd' => ReferentialAction::SetDefault,
            _ => ReferentialAction::NoAction,
        }
    }
}

/// What a constraint requires.
#[derive(Debug, Clone, PartialEq)]
pub enum ConstraintKind {
    /// CHECK (expr): the expression as SQL text over the table's columns.
    Check { expr: String },
    /// PRIMARY KEY: enforced by `index` (unique, its columns NOT NULL).
    PrimaryKey { index: Oid },
    /// UNIQUE: enforced by `index`.
    Unique { index: Oid },
    /// FOREIGN KEY (columns) REFERENCES ref_table (ref_columns), checked
    /// through the referenced table's unique `ref_index`.
    ForeignKey {
        ref_table: Oid,
        ref_columns: Vec<i16>,
        ref_index: Oid,
        on_delete: ReferentialAction,
        on_update: ReferentialAction,
        match_full: bool,
    },
}

impl ConstraintKind {
    /// pg_constraint.contype.
    pub fn code(&self) -> char {
        match self {
            ConstraintKind::Check { .. } => 'c',
            ConstraintKind::PrimaryKey { .. } => 'p',
            ConstraintKind::Unique { .. } => 'u',
            ConstraintKind::ForeignKey { .. } => 'f',
        }
    }
    /// The index a PRIMARY KEY or UNIQUE constraint owns (or a foreign
    /// key relies on, conindid).
    pub fn index(&self) -> Option<Oid> {
        match self {
            ConstraintKind::PrimaryKey { index } | ConstraintKind::Unique { index } => Some(*index),
            ConstraintKind::ForeignKey { ref_index, .. } => Some(*ref_index),
            ConstraintKind::Check { .. } => None,
        }
    }
}

/// A table constraint (pg_constraint).
#[derive(Debug, Clone, PartialEq)]
pub struct Constraint {
    pub oid: Oid,
    pub name: String,
    pub namespace: Oid,
    pub table: Oid,
    /// conkey: the constrained columns (1-based); for CHECK the columns
    /// its expression reads.
    pub columns: Vec<i16>,
    pub kind: ConstraintKind,
    pub deferrable: bool,
    pub deferred: bool,
    /// False for a NOT VALID constraint not yet validated.
    pub validated: bool,
}

/// indexrelid, indrelid, indisunique, indisprimary, indkey (attnums as
/// int2vector text), indoption (as int2vector text).
pub(crate) const PG_INDEX: SystemRelation = SystemRelation {
    name: "pg_index",
    rel_number: 2610,
    columns: &[OidT, OidT, Bool, Bool, Text, Text],
};

/// oid, conname, connamespace, contype, condeferrable, condeferred,
/// convalidated, conrelid, conindid, confrelid, confupdtype, confdeltype,
/// confmatchtype, conkey, confkey (int2vector text), the CHECK expression,
/// contypid (a domain's CHECK: `user_types.rs` loads those; NULL in rows
/// written before domains existed).
pub(crate) const PG_CONSTRAINT: SystemRelation = SystemRelation {
    name: "pg_constraint",
    rel_number: 2606,
    columns: &[
        OidT, Name, OidT, Text, Bool, Bool, Bool, OidT, OidT, OidT, Text, Text, Text, Text, Text,
        Text, OidT,
    ],
};

/// pg_constraint's contypid column.
pub(crate) const CONTYPID: usize = 16;

fn text(s: impl Into<String>) -> Value {
    Value::Text(s.into())
}

/// "1 3 2", as an int2vector prints.
pub fn int2vector_text(v: &[i16]) -> String {
    v.iter().map(i16::to_string).collect::<Vec<_>>().join(" ")
}

fn parse_int2vector(s: &str) -> Vec<i16> {
    s.split_whitespace()
        .filter_map(|x| x.parse().ok())
        .collect()
}

pub(crate) fn index_class_row(i: &Index) -> Vec<Value> {
    vec![
        Value::Oid(i.oid),
        text(&i.name),
        Value::Oid(i.namespace),
        Value::Oid(i.db_oid),
        Value::Oid(i.relfilenode),
        text("i"),
        Value::Float8(-1.0),
        Value::Int4(0),
        Value::Int4(0),
        Value::Oid(0),
        Value::Oid(0),
    ]
}

pub(crate) fn index_row(i: &Index) -> Vec<Value> {
    let attnums: Vec<i16> = i.keys.iter().map(|k| k.attnum).collect();
    let options: Vec<i16> = i.keys.iter().map(IndexKey::option_bits).collect();
    vec![
        Value::Oid(i.oid),
        Value::Oid(i.table),
        Value::Bool(i.unique),
        Value::Bool(i.primary),
        text(int2vector_text(&attnums)),
        text(int2vector_text(&options)),
    ]
}

pub(crate) fn constraint_row(c: &Constraint) -> Vec<Value> {
    let (ref_table, ref_columns, upd, del, matching) = match &c.kind {
        ConstraintKind::ForeignKey {
            ref_table,
            ref_columns,
            on_delete,
            on_update,
            match_full,
            ..
        } => (
            *ref_table,
            int2vector_text(ref_columns),
            on_update.code().to_string(),
            on_delete.code().to_string(),
            if *match_full { "f" } else { "s" }.to_string(),
        ),
        _ => (0, String::new(), " ".into(), " ".into(), " ".into()),
    };
    vec![
        Value::Oid(c.oid),
        text(&c.name),
        Value::Oid(c.namespace),
        text(c.kind.code().to_string()),
        Value::Bool(c.deferrable),
        Value::Bool(c.deferred),
        Value::Bool(c.validated),
        Value::Oid(c.table),
        Value::Oid(c.kind.index().unwrap_or(0)),
        Value::Oid(ref_table),
        text(upd),
        text(del),
        text(matching),
        text(int2vector_text(&c.columns)),
        text(ref_columns),
        match &c.kind {
            ConstraintKind::Check { expr } => text(expr.clone()),
            _ => Value::Null,
        },
        Value::Oid(0),
    ]
}

fn oid_of(v: &Value) -> Oid {
    match v {
        Value::Oid(o) => *o,
        _ => 0,
    }
}
fn str_of(v: &Value) -> &str {
    match v {
        Value::Text(s) => s,
        _ => "",
    }
}
fn bool_of(v: &Value) -> bool {
    matches!(v, Value::Bool(true))
}

/// Adds the indexes (whose pg_class rows `classes` holds, by oid) and the
/// constraints to the relcache being loaded.
pub(crate) fn load(
    pool: &'static storage::buffer::BufferPool,
    tm: &txn::TransactionManager,
    d: &mut CatalogData,
    mut classes: std::collections::HashMap<Oid, (access::heap::Tid, Vec<Value>)>,
) -> PgResult<()> {
    for (tid, r) in relations::scan(pool, tm, &PG_INDEX)? {
        let oid = oid_of(&r[0]);
        let Some((class_tid, c)) = classes.remove(&oid) else {
            return Err(relations::corrupt(
                &PG_INDEX,
                &format!("index {oid} has no pg_class row"),
            ));
        };
        let attnums = parse_int2vector(str_of(&r[4]));
        let options = parse_int2vector(str_of(&r[5]));
        let keys = attnums
            .iter()
            .enumerate()
            .map(|(i, &attnum)| {
                let bits = options.get(i).copied().unwrap_or(0);
                IndexKey {
                    attnum,
                    descending: bits & 1 != 0,
                    nulls_first: bits & 2 != 0,
                }
            })
            .collect();
        let index = Index {
            oid,
            name: str_of(&c[1]).to_string(),
            namespace: oid_of(&c[2]),
            db_oid: oid_of(&c[3]),
            relfilenode: oid_of(&c[4]),
            table: oid_of(&r[1]),
            keys,
            unique: bool_of(&r[2]),
            primary: bool_of(&r[3]),
        };
        d.rows.classes.insert(oid, class_tid);
        d.rows.indexes.insert(oid, tid);
        d.indexes.insert(oid, index);
    }
    if let Some(oid) = classes.keys().next() {
        return Err(relations::corrupt(
            &PG_CLASS,
            &format!("index {oid} has no pg_index row"),
        ));
    }
    for (tid, r) in relations::scan(pool, tm, &PG_CONSTRAINT)? {
        if matches!(r[CONTYPID], Value::Oid(o) if o != 0) {
            continue; // a domain's, loaded with its type
        }
        let code = str_of(&r[3]).chars().next().unwrap_or(' ');
        let kind = match code {
            'c' => ConstraintKind::Check {
                expr: str_of(&r[15]).to_string(),
            },
            'p' => ConstraintKind::PrimaryKey {
                index: oid_of(&r[8]),
            },
            'u' => ConstraintKind::Unique {
                index: oid_of(&r[8]),
            },
            'f' => ConstraintKind::ForeignKey {
                ref_table: oid_of(&r[9]),
                ref_columns: parse_int2vector(str_of(&r[14])),
                ref_index: oid_of(&r[8]),
                on_update: ReferentialAction::from_code(
                    str_of(&r[10]).chars().next().unwrap_or('a'),
                ),
                on_delete: ReferentialAction::from_code(
                    str_of(&r[11]).chars().next().unwrap_or('a'),
                ),
                match_full: str_of(&r[12]) == "f",
            },
            other => {
                return Err(relations::corrupt(
                    &PG_CONSTRAINT,
                    &format!("unknown constraint type {other:?}"),
                ))
            }
        };
        let c = Constraint {
            oid: oid_of(&r[0]),
            name: str_of(&r[1]).to_string(),
            namespace: oid_of(&r[2]),
            deferrable: bool_of(&r[4]),
            deferred: bool_of(&r[5]),
            validated: bool_of(&r[6]),
            table: oid_of(&r[7]),
            columns: parse_int2vector(str_of(&r[13])),
            kind,
        };
        d.rows.constraints.insert(c.oid, tid);
        d.constraints.insert(c.oid, c);
    }
    Ok(())
}

impl CatalogData {
    pub fn index(&self, db: Oid, namespace: Oid, name: &str) -> Option<&Index> {
        self.indexes
            .values()
            .find(|i| i.db_oid == db && i.namespace == namespace && i.name == name)
    }
    /// The table's indexes, in oid (creation) order.
    pub fn indexes_of(&self, table: Oid) -> impl Iterator<Item = &Index> {
        self.indexes.values().filter(move |i| i.table == table)
    }
    /// The table's constraints, in oid (creation) order.
    pub fn constraints_of(&self, table: Oid) -> impl Iterator<Item = &Constraint> {
        self.constraints.values().filter(move |c| c.table == table)
    }
    pub fn constraint_by_name(&self, table: Oid, name: &str) -> Option<&Constraint> {
        self.constraints_of(table).find(|c| c.name == name)
    }
    /// Whether any constraint in schema `namespace` is called `name` (a
    /// generated name avoids them all, as PostgreSQL's ChooseConstraintName).
    pub fn constraint_name_used(&self, namespace: Oid, name: &str) -> bool {
        self.constraints
            .values()
            .any(|c| c.namespace == namespace && c.name == name)
    }
    /// The constraint that owns index `index` (PRIMARY KEY or UNIQUE).
    pub fn constraint_of_index(&self, index: Oid) -> Option<&Constraint> {
        self.constraints.values().find(|c| {
            matches!(c.kind, ConstraintKind::PrimaryKey { index: i } | ConstraintKind::Unique { index: i } if i == index)
        })
    }
    /// Foreign keys of other tables (or this one) that reference `table`.
    pub fn foreign_keys_referencing(&self, table: Oid) -> impl Iterator<Item = &Constraint> {
        self.constraints.values().filter(move |c| {
            matches!(c.kind, ConstraintKind::ForeignKey { ref_table, .. } if ref_table == table)
        })
    }
}

impl Catalog {
    /// Creates an index's catalog rows and its empty tree (storage removed
    /// if the transaction rolls back). Building it from the table's rows
    /// is the caller's (`exec`), which sees the heap and sorts.
    pub fn create_index(
        &self,
        txn: &mut CatalogTxn,
        cid: u32,
        mut index: Index,
    ) -> PgResult<Index> {
        if txn
            .working
            .relation_exists(index.db_oid, index.namespace, &index.name)
        {
            return Err(PgError::new(
                SqlState::DUPLICATE_TABLE,
                format!("relation \"{}\" already exists", index.name),
            ));
        }
        index.oid = self.oids.next()?;
        index.relfilenode = index.oid;
        let w = self.writer(txn, cid);
        let class = w.insert(&PG_CLASS, &index_class_row(&index))?;
        let row = w.insert(&PG_INDEX, &index_row(&index))?;
        txn.pending.push(Pending::Created(index.locator()));
        btree::create_empty(self.pool, self.tm.wal(), index.locator())?;
        let d = Arc::make_mut(&mut txn.working);
        d.rows.classes.insert(index.oid, class);
        d.rows.indexes.insert(index.oid, row);
        d.indexes.insert(index.oid, index.clone());
        Ok(index)
    }

    /// Drops an index's rows (and the constraint owning it, if any); its
    /// file goes at commit.
    pub fn drop_index(&self, txn: &mut CatalogTxn, cid: u32, oid: Oid) -> PgResult<()> {
        if let Some(c) = txn.working.constraint_of_index(oid).map(|c| c.oid) {
            self.remove_constraint_row(txn, cid, c)?;
        }
        let w = self.writer(txn, cid);
        let d = Arc::make_mut(&mut txn.working);
        let index = d.indexes.remove(&oid).ok_or_else(|| vanished(oid))?;
        let class = d.rows.classes.remove(&oid).ok_or_else(|| vanished(oid))?;
        w.delete(&PG_CLASS, class)?;
        let row = d.rows.indexes.remove(&oid).ok_or_else(|| vanished(oid))?;
        w.delete(&PG_INDEX, row)?;
        txn.pending.push(Pending::Dropped(index.locator()));
        self.drop_comments(txn, cid, crate::comments::PG_CLASS_OID, oid)?;
        Ok(())
    }

    /// Gives an index a new, empty tree (TRUNCATE, REINDEX): the old file
    /// goes at commit, the new one at rollback. Returns the index as it is now.
    pub fn new_index_relfilenode(
        &self,
        txn: &mut CatalogTxn,
        cid: u32,
        oid: Oid,
    ) -> PgResult<Index> {
        let mut index = txn
            .working
            .indexes
            .get(&oid)
            .cloned()
            .ok_or_else(|| vanished(oid))?;
        let old = index.locator();
        index.relfilenode = self.oids.next()?;
        txn.pending.push(Pending::Created(index.locator()));
        btree::create_empty(self.pool, self.tm.wal(), index.locator())?;
        let w = self.writer(txn, cid);
        let d = Arc::make_mut(&mut txn.working);
        let class = d
            .rows
            .classes
            .get(&oid)
            .copied()
            .ok_or_else(|| vanished(oid))?;
        let new = w.replace(&PG_CLASS, class, &index_class_row(&index))?;
        d.rows.classes.insert(oid, new);
        d.indexes.insert(oid, index.clone());
        txn.pending.push(Pending::Dropped(old));
        Ok(index)
    }

    /// Records a constraint (its index, if it needs one, exists already).
    pub fn add_constraint(
        &self,
        txn: &mut CatalogTxn,
        cid: u32,
        mut c: Constraint,
    ) -> PgResult<Constraint> {
        if txn.working.constraint_by_name(c.table, &c.name).is_some() {
            let table = txn
                .working
                .tables
                .get(&c.table)
                .map_or("", |t| t.name.as_str());
            return Err(PgError::new(
                SqlState::DUPLICATE_OBJECT,
                format!(
                    "constraint \"{}\" for relation \"{table}\" already exists",
                    c.name
                ),
            ));
        }
        c.oid = self.oids.next()?;
        let w = self.writer(txn, cid);
        let row = w.insert(&PG_CONSTRAINT, &constraint_row(&c))?;
        let d = Arc::make_mut(&mut txn.working);
        d.rows.constraints.insert(c.oid, row);
        d.constraints.insert(c.oid, c.clone());
        Ok(c)
    }

    /// Replaces a constraint's row (VALIDATE CONSTRAINT, renames).
    pub fn replace_constraint(
        &self,
        txn: &mut CatalogTxn,
        cid: u32,
        c: Constraint,
    ) -> PgResult<()> {
        let w = self.writer(txn, cid);
        let d = Arc::make_mut(&mut txn.working);
        let old = d
            .rows
            .constraints
            .get(&c.oid)
            .copied()
            .ok_or_else(|| vanished(c.oid))?;
        let new = w.replace(&PG_CONSTRAINT, old, &constraint_row(&c))?;
        d.rows.constraints.insert(c.oid, new);
        d.constraints.insert(c.oid, c);
        Ok(())
    }

    /// Drops a constraint and the index it owns.
    pub fn drop_constraint(&self, txn: &mut CatalogTxn, cid: u32, oid: Oid) -> PgResult<()> {
        let owned = match txn.working.constraints.get(&oid).map(|c| &c.kind) {
            Some(ConstraintKind::PrimaryKey { index } | ConstraintKind::Unique { index }) => {
                Some(*index)
            }
            Some(_) => None,
            None => return Err(vanished(oid)),
        };
        match owned {
            // drop_index removes the owning constraint's row too.
            Some(index) => self.drop_index(txn, cid, index),
            None => self.remove_constraint_row(txn, cid, oid),
        }
    }

    fn remove_constraint_row(&self, txn: &mut CatalogTxn, cid: u32, oid: Oid) -> PgResult<()> {
        let w = self.writer(txn, cid);
        let d = Arc::make_mut(&mut txn.working);
        d.constraints.remove(&oid).ok_or_else(|| vanished(oid))?;
        let row = d
            .rows
            .constraints
            .remove(&oid)
            .ok_or_else(|| vanished(oid))?;
        w.delete(&PG_CONSTRAINT, row)
    }

    /// Drops what belongs to a table being dropped: its constraints, other
    /// tables' foreign keys referencing it (the caller refuses the drop or
    /// reports them first, as DROP TABLE ... CASCADE does), and its indexes.
    pub(crate) fn drop_table_dependents(
        &self,
        txn: &mut CatalogTxn,
        cid: u32,
        table: Oid,
    ) -> PgResult<()> {
        let constraints: Vec<Oid> = txn
            .working
            .foreign_keys_referencing(table)
            .chain(txn.working.constraints_of(table))
            .map(|c| c.oid)
            .collect();
        for c in constraints {
            if txn.working.constraints.contains_key(&c) {
                self.drop_constraint(txn, cid, c)?;
            }
        }
        let indexes: Vec<Oid> = txn.working.indexes_of(table).map(|i| i.oid).collect();
        for i in indexes {
            self.drop_index(txn, cid, i)?;
        }
        self.drop_triggers_of(txn, cid, table)
    }
}
