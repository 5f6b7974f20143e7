//! Declarative partitioning: a partitioned table's key (pg_partitioned_table)
//! and a partition's parent and bound (pg_inherits, pg_class.relpartbound).
//!
//! One heap relation (relfilenode 3350, pg_partitioned_table's oid) holds
//! one row per table that is partitioned or is a partition: its oid and, as
//! JSON, its key and/or its parent with the bound. Bound values are kept as
//! the key type's text output (ISO date styles), so a row reads back without
//! the binder; `sql::partition` turns them into values to route rows.

use std::sync::Arc;

use common::{Oid, PgResult};
use serde::{Deserialize, Serialize};
use txn::TransactionManager;
use types::{TypeId, Value};

use crate::ddl::CatalogTxn;
use crate::model::{CatalogData, Table};
use crate::relations::{self, SystemRelation};
use crate::Catalog;

/// pg_partitioned_table's oid.
pub const PG_PARTITIONED_TABLE_OID: Oid = 3350;

/// relid, the partitioning as JSON (`PartitionInfo`).
pub(crate) const PG_PARTITION: SystemRelation = SystemRelation {
    name: "pg_partitioned_table",
    rel_number: PG_PARTITIONED_TABLE_OID,
    columns: &[TypeId::Oid, TypeId::Text],
};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum PartitionStrategy {
    Range,
    List,
    Hash,
}

impl PartitionStrategy {
    /// pg_partitioned_table.partstrat.
    pub fn code(self) -> char {
        match self {
            PartitionStrategy::Range => 'r',
            PartitionStrategy::List => 'l',
            PartitionStrategy::Hash => 'h',
        }
    }
    pub fn keyword(self) -> &'static str {
        match self {
            PartitionStrategy::Range => "RANGE",
            PartitionStrategy::List => "LIST",
            PartitionStrategy::Hash => "HASH",
        }
    }
}

/// One column (or expression) of a partition key.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PartitionKeyPart {
    /// The column (1-based attnum), or 0 for an expression.
    pub attnum: i16,
    /// The expression's SQL text, over the table's columns.
    pub expr: Option<String>,
    /// The key's type: what bound values are parsed as.
    pub type_oid: Oid,
    pub typmod: i32,
}

impl PartitionKeyPart {
    pub fn data_type(&self) -> types::DataType {
        types::DataType::with_typmod(
            TypeId::from_oid(self.type_oid).unwrap_or(TypeId::Text),
            self.typmod,
        )
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PartitionKey {
    pub strategy: PartitionStrategy,
    pub parts: Vec<PartitionKeyPart>,
}

/// A range bound's datum: a value, or one of the infinities.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum RangeDatum {
    MinValue,
    /// The key type's text output.
    Value(String),
    MaxValue,
}

/// A partition's bound (FOR VALUES ...). Values are text of the key type;
/// a list value of None is NULL.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum PartitionBound {
    Range {
        from: Vec<RangeDatum>,
        to: Vec<RangeDatum>,
    },
    List(Vec<Option<String>>),
    Hash {
        modulus: u32,
        remainder: u32,
    },
    Default,
}

/// A partition's place: its parent and bound.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PartitionOf {
    pub parent: Oid,
    pub bound: PartitionBound,
}

/// What a pg_partitioned_table row holds.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct PartitionInfo {
    pub key: Option<PartitionKey>,
    pub partition_of: Option<PartitionOf>,
}

impl PartitionInfo {
    pub fn of(t: &Table) -> PartitionInfo {
        PartitionInfo {
            key: t.partition_key.as_deref().cloned(),
            partition_of: t.partition_of.as_deref().cloned(),
        }
    }
    fn is_empty(&self) -> bool {
        self.key.is_none() && self.partition_of.is_none()
    }
}

pub(crate) fn load(
    pool: &'static storage::buffer::BufferPool,
    tm: &TransactionManager,
    d: &mut CatalogData,
) -> PgResult<()> {
    for (tid, r) in relations::scan(pool, tm, &PG_PARTITION)? {
        let Value::Oid(rel) = r[0] else {
            return Err(relations::corrupt(&PG_PARTITION, "no relid"));
        };
        let Value::Text(json) = &r[1] else {
            return Err(relations::corrupt(&PG_PARTITION, "no partitioning"));
        };
        let info: PartitionInfo = serde_json::from_str(json)
            .map_err(|e| relations::corrupt(&PG_PARTITION, &e.to_string()))?;
        let Some(t) = d.tables.get_mut(&rel) else {
            return Err(relations::corrupt(
                &PG_PARTITION,
                &format!("partitioning of missing table {rel}"),
            ));
        };
        t.partition_key = info.key.map(Arc::new);
        t.partition_of = info.partition_of.map(Arc::new);
        d.rows.partitions.insert(rel, tid);
    }
    Ok(())
}

impl Catalog {
    /// Sets table `oid`'s partition key and place (None: none), writing,
    /// replacing or deleting its pg_partitioned_table row.
    pub fn set_partitioning(
        &self,
        txn: &mut CatalogTxn,
        cid: u32,
        oid: Oid,
        key: Option<PartitionKey>,
        partition_of: Option<PartitionOf>,
    ) -> PgResult<Table> {
        let mut t = txn.working_table(oid)?;
        t.partition_key = key.map(Arc::new);
        t.partition_of = partition_of.map(Arc::new);
        let info = PartitionInfo::of(&t);
        let w = self.writer(txn, cid);
        let d = Arc::make_mut(&mut txn.working);
        if let Some(old) = d.rows.partitions.remove(&oid) {
            w.delete(&PG_PARTITION, old)?;
        }
        if !info.is_empty() {
            let json = serde_json::to_string(&info).expect("partitioning serialises");
            let tid = w.insert(&PG_PARTITION, &[Value::Oid(oid), Value::Text(json)])?;
            d.rows.partitions.insert(oid, tid);
        }
        d.tables.insert(oid, t.clone());
        Ok(t)
    }

    /// Deletes a dropped table's pg_partitioned_table row, if it has one.
    pub(crate) fn drop_partitioning(
        &self,
        txn: &mut CatalogTxn,
        cid: u32,
        oid: Oid,
    ) -> PgResult<()> {
        let w = self.writer(txn, cid);
        let d = Arc::make_mut(&mut txn.working);
        if let Some(old) = d.rows.partitions.remove(&oid) {
            w.delete(&PG_PARTITION, old)?;
        }
        Ok(())
    }
}

impl CatalogData {
    /// The direct partitions of `parent`, in oid order.
    pub fn partitions_of(&self, parent: Oid) -> impl Iterator<Item = &Table> {
        self.tables
            .values()
            .filter(move |t| t.partition_of.as_ref().is_some_and(|p| p.parent == parent))
    }

    /// The leaf partitions under `table` (itself when it is not partitioned),
    /// in oid order.
    pub fn leaf_partitions(&self, table: Oid) -> Vec<&Table> {
        let mut out = Vec::new();
        let mut stack = vec![table];
        while let Some(oid) = stack.pop() {
            let Some(t) = self.tables.get(&oid) else {
                continue;
            };
            if t.partition_key.is_some() {
                let mut children: Vec<Oid> = self.partitions_of(oid).map(|c| c.oid).collect();
                children.reverse();
                stack.extend(children);
            } else {
                out.push(t);
            }
        }
        out
    }

    /// `table` and its ancestors, nearest first.
    pub fn partition_ancestors(&self, table: Oid) -> Vec<&Table> {
        let mut out = Vec::new();
        let mut next = Some(table);
        while let Some(oid) = next {
            let Some(t) = self.tables.get(&oid) else {
                break;
            };
            out.push(t);
            next = t.partition_of.as_ref().map(|p| p.parent);
        }
        out
    }
}

/// A bound value as pg_get_expr prints a constant: numbers and booleans
/// bare (negative numbers quoted, as PostgreSQL's get_const_expr does
/// without a type label), everything else as a quoted literal.
pub fn bound_literal(text: &str, ty: TypeId) -> String {
    let numeric = matches!(
        ty,
        TypeId::Int2
            | TypeId::Int4
            | TypeId::Int8
            | TypeId::Numeric
            | TypeId::Float4
            | TypeId::Float8
            | TypeId::Oid
    );
    if numeric && !text.starts_with('-') && text.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
        return text.to_owned();
    }
    if ty == TypeId::Bool {
        return if text == "t" || text == "true" {
            "true"
        } else {
            "false"
        }
        .to_owned();
    }
    let escaped = text.replace('\'', "''");
    if escaped.contains('\\') {
        format!("E'{}'", escaped.replace('\\', "\\\\"))
    } else {
        format!("'{escaped}'")
    }
}

/// pg_get_expr(relpartbound): `FOR VALUES FROM (1) TO (10)`, `FOR VALUES
/// IN ('a', NULL)`, `FOR VALUES WITH (modulus 4, remainder 0)`, `DEFAULT`.
pub fn bound_sql(bound: &PartitionBound, key: &PartitionKey) -> String {
    let ty = |i: usize| key.parts.get(i).map_or(TypeId::Text, |p| p.data_type().id);
    let range = |ds: &[RangeDatum]| -> String {
        ds.iter()
            .enumerate()
            .map(|(i, d)| match d {
                RangeDatum::MinValue => "MINVALUE".to_owned(),
                RangeDatum::MaxValue => "MAXVALUE".to_owned(),
                RangeDatum::Value(v) => bound_literal(v, ty(i)),
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    match bound {
        PartitionBound::Range { from, to } => {
            format!("FOR VALUES FROM ({}) TO ({})", range(from), range(to))
        }
        PartitionBound::List(values) => format!(
            "FOR VALUES IN ({})",
            values
                .iter()
                .map(|v| v
                    .as_deref()
                    .map_or("NULL".to_owned(), |v| bound_literal(v, ty(0))))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        PartitionBound::Hash { modulus, remainder } => {
            format!("FOR VALUES WITH (modulus {modulus}, remainder {remainder})")
        }
        PartitionBound::Default => "DEFAULT".to_owned(),
    }
}

/// pg_get_partkeydef: `RANGE (a, b)`, `LIST ((lower(t)))`.
pub fn partkey_sql(key: &PartitionKey, table: &Table) -> String {
    let parts: Vec<String> = key
        .parts
        .iter()
        .map(|p| match &p.expr {
            Some(e) => parenthesized_unless_call(e),
            None => table
                .columns
                .get(p.attnum as usize - 1)
                .map_or_else(|| "?".to_owned(), |c| quote_ident(&c.name)),
        })
        .collect();
    format!("{} ({})", key.strategy.keyword(), parts.join(", "))
}

/// A key expression as PostgreSQL prints it: a function call bare,
/// anything else in parentheses.
fn parenthesized_unless_call(e: &str) -> String {
    let call = e.ends_with(')')
        && e.find('(').is_some_and(|open| {
            let name = &e[..open];
            !name.is_empty()
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
                && {
                    // The first parenthesis closes at the end.
                    let mut depth = 0i32;
                    e[open..].char_indices().all(|(i, c)| {
                        match c {
                            '(' => depth += 1,
                            ')' => depth -= 1,
                            _ => {}
                        }
                        depth > 0 || open + i == e.len() - 1
                    })
                }
        });
    if call {
        e.to_owned()
    } else {
        format!("({e})")
    }
}

fn quote_ident(name: &str) -> String {
    let plain = name
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_lowercase() || c == '_')
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if plain {
        name.to_owned()
    } else {
        format!("\"{}\"", name.replace('"', "\"\""))
    }
}

/// A constant in a partition constraint as PostgreSQL deparses it:
/// integers bare, anything else a literal with its type (`'x'::text`).
fn typed_literal(text: &str, ty: types::DataType) -> String {
    if ty.id == TypeId::Int4 && !text.starts_with('-') {
        return text.to_owned();
    }
    format!("{}::{}", bound_literal_quoted(text), ty.display_name())
}

fn bound_literal_quoted(text: &str) -> String {
    let escaped = text.replace('\'', "''");
    if escaped.contains('\\') {
        format!("E'{}'", escaped.replace('\\', "\\\\"))
    } else {
        format!("'{escaped}'")
    }
}

/// The key parts' terms as written in a constraint: `a`, or `(expr)`.
fn key_terms(key: &PartitionKey, parent: &Table) -> Vec<String> {
    key.parts
        .iter()
        .map(|p| match &p.expr {
            Some(e) => parenthesized_unless_call(e),
            None => parent
                .columns
                .get(p.attnum as usize - 1)
                .map_or_else(|| "?".to_owned(), |c| quote_ident(&c.name)),
        })
        .collect()
}

fn and_of(parts: Vec<String>) -> String {
    if parts.len() == 1 {
        parts.into_iter().next().expect("one")
    } else {
        format!("({})", parts.join(" AND "))
    }
}

/// A non-default bound's conjuncts over `terms`.
fn bound_conjuncts(
    bound: &PartitionBound,
    key: &PartitionKey,
    terms: &[String],
    parent_oid: Oid,
) -> Vec<String> {
    let ty = |i: usize| key.parts[i].data_type();
    match bound {
        PartitionBound::Hash { modulus, remainder } => vec![format!(
            "satisfies_hash_partition('{parent_oid}'::oid, {modulus}, {remainder}, {})",
            terms.join(", ")
        )],
        PartitionBound::List(values) => {
            let has_null = values.iter().any(Option::is_none);
            let lits: Vec<String> = values
                .iter()
                .flatten()
                .map(|v| typed_literal(v, ty(0)))
                .collect();
            let test = match lits.len() {
                0 => None,
                1 => Some(format!("({} = {})", terms[0], lits[0])),
                _ => Some(format!("({} = ANY (ARRAY[{}]))", terms[0], lits.join(", "))),
            };
            match (has_null, test) {
                (true, Some(t)) => vec![format!("(({} IS NULL) OR {t})", terms[0])],
                (true, None) => vec![format!("({} IS NULL)", terms[0])],
                (false, Some(t)) => vec![format!("({} IS NOT NULL)", terms[0]), t],
                (false, None) => vec!["false".to_owned()],
            }
        }
        PartitionBound::Range { from, to } => {
            let mut out: Vec<String> = terms.iter().map(|t| format!("({t} IS NOT NULL)")).collect();
            if terms.len() == 1 {
                if let Some(RangeDatum::Value(v)) = from.first() {
                    out.push(format!("({} >= {})", terms[0], typed_literal(v, ty(0))));
                }
                if let Some(RangeDatum::Value(v)) = to.first() {
                    out.push(format!("({} < {})", terms[0], typed_literal(v, ty(0))));
                }
            } else {
                let row = |ds: &[RangeDatum]| -> Option<String> {
                    let vals: Vec<String> = ds
                        .iter()
                        .enumerate()
                        .map_while(|(i, d)| match d {
                            RangeDatum::Value(v) => Some(typed_literal(v, ty(i))),
                            _ => None,
                        })
                        .collect();
                    (!vals.is_empty()).then(|| {
                        format!(
                            "ROW({}) OP ROW({})",
                            terms[..vals.len()].join(", "),
                            vals.join(", ")
                        )
                    })
                };
                if let Some(r) = row(from) {
                    out.push(format!("({})", r.replace(" OP ", " >= ")));
                }
                if let Some(r) = row(to) {
                    out.push(format!("({})", r.replace(" OP ", " < ")));
                }
            }
            out
        }
        PartitionBound::Default => Vec::new(),
    }
}

/// pg_get_partition_constraintdef: the conditions a partition's rows meet,
/// its ancestors' first, as PostgreSQL deparses them (multi-column range
/// bounds as row comparisons).
pub fn partition_constraint_sql(d: &CatalogData, table: Oid) -> Option<String> {
    let mut levels = Vec::new();
    for t in d.partition_ancestors(table) {
        let Some(of) = t.partition_of.as_deref() else {
            break;
        };
        let parent = d.tables.get(&of.parent)?;
        let key = parent.partition_key.as_deref()?;
        let terms = key_terms(key, parent);
        let conjuncts = match &of.bound {
            PartitionBound::Default => {
                let mut others: Vec<Vec<String>> = Vec::new();
                let mut list_values: Vec<Option<String>> = Vec::new();
                for s in d.partitions_of(parent.oid) {
                    let Some(sof) = s.partition_of.as_deref() else {
                        continue;
                    };
                    match &sof.bound {
                        PartitionBound::Default => {}
                        PartitionBound::List(v) => list_values.extend(v.iter().cloned()),
                        b => others.push(bound_conjuncts(b, key, &terms, parent.oid)),
                    }
                }
                if key.strategy == PartitionStrategy::List {
                    let ty = key.parts[0].data_type();
                    let parsed = |s: &String| {
                        types::io::parse_text(ty, s, &types::IoSettings::default()).ok()
                    };
                    list_values.sort_by(|a, b| match (a, b) {
                        (Some(x), Some(y)) => match (parsed(x), parsed(y)) {
                            (Some(p), Some(q)) => types::ops::compare_typed(ty.id, &p, &q),
                            _ => x.cmp(y),
                        },
                        (None, Some(_)) => std::cmp::Ordering::Greater,
                        (Some(_), None) => std::cmp::Ordering::Less,
                        (None, None) => std::cmp::Ordering::Equal,
                    });
                    list_values.dedup();
                    let all = bound_conjuncts(
                        &PartitionBound::List(list_values),
                        key,
                        &terms,
                        parent.oid,
                    );
                    vec![format!("(NOT {})", and_of(all))]
                } else if others.is_empty() {
                    Vec::new()
                } else {
                    // Every sibling requires the key non-null: PostgreSQL
                    // factors that out.
                    let not_null: Vec<String> =
                        terms.iter().map(|t| format!("({t} IS NOT NULL)")).collect();
                    let ors: Vec<String> = others
                        .into_iter()
                        .map(|c| and_of(c.into_iter().filter(|x| !not_null.contains(x)).collect()))
                        .collect();
                    let mut inner = not_null;
                    inner.push(if ors.len() == 1 {
                        ors[0].clone()
                    } else {
                        format!("({})", ors.join(" OR "))
                    });
                    vec![format!("(NOT {})", and_of(inner))]
                }
            }
            b => bound_conjuncts(b, key, &terms, parent.oid),
        };
        levels.push(conjuncts);
    }
    let all: Vec<String> = levels.into_iter().rev().flatten().collect();
    if all.is_empty() {
        return None;
    }
    Some(and_of(all))
}
