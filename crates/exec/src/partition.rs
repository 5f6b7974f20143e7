//! Rows and partitions: routing a row inserted into a partitioned table to
//! its leaf partition (PostgreSQL's ExecFindPartition), and checking a row
//! stored in a partition against its partition constraint (its bound and
//! its ancestors' bounds, ExecPartitionCheck).
//!
//! Partitions match their parent's columns by name, so a partition's
//! column order may differ: each step maps the row into the next table's
//! order (PostgreSQL's tuple conversion maps).

use std::sync::Arc;

use catalog::partition::PartitionKey;
use catalog::Table;
use common::{PgError, PgResult, SqlState};
use sql::expr::Expr;
use sql::partition::{bound_accepts, ordered_partitions, ResolvedBound};
use types::{DataType, Value};

use crate::dml::failing_row;
use crate::eval::{eval, value_to_text};
use crate::ExecEnv;

/// `to[i] = from[map[i]]` (NULL where the column has no match).
pub(crate) type ColumnMap = Vec<Option<usize>>;

/// For each column of `to`, the column of `from` of the same name.
pub(crate) fn column_map(from: &Table, to: &Table) -> ColumnMap {
    to.columns
        .iter()
        .map(|c| from.columns.iter().position(|f| f.name == c.name))
        .collect()
}

pub(crate) fn map_row(row: &[Value], map: &ColumnMap) -> Vec<Value> {
    map.iter()
        .map(|m| m.map_or(Value::Null, |i| row[i].clone()))
        .collect()
}

/// Whether the map is the identity (same columns in the same order).
pub(crate) fn is_identity(map: &ColumnMap, width: usize) -> bool {
    map.len() == width && map.iter().enumerate().all(|(i, m)| *m == Some(i))
}

/// A partitioned table's key, ready to compute from its rows.
struct KeyEval {
    parts: Vec<KeyPart>,
    types: Vec<DataType>,
    /// Each part's label in errors: the column name or `(expr)`.
    labels: Vec<String>,
}

enum KeyPart {
    Column(usize),
    Expr(Expr),
}

impl KeyEval {
    fn of(env: &ExecEnv, table: &Table, key: &PartitionKey) -> PgResult<KeyEval> {
        let mut parts = Vec::new();
        let mut labels = Vec::new();
        for p in &key.parts {
            if p.attnum > 0 {
                parts.push(KeyPart::Column(p.attnum as usize - 1));
                labels.push(table.columns[p.attnum as usize - 1].name.clone());
            } else {
                let text = p.expr.as_deref().unwrap_or("NULL");
                let e = crate::checks::with_stored_text_binder(env, |ctx| {
                    sql::bind::partition::bind_partition_expr(ctx, table, text)
                })?;
                parts.push(KeyPart::Expr(e));
                labels.push(text.to_owned());
            }
        }
        Ok(KeyEval {
            parts,
            types: key.parts.iter().map(|p| p.data_type()).collect(),
            labels,
        })
    }

    fn compute(&self, row: &[Value], env: &mut ExecEnv) -> PgResult<Vec<Value>> {
        self.parts
            .iter()
            .map(|p| match p {
                KeyPart::Column(i) => Ok(row[*i].clone()),
                KeyPart::Expr(e) => eval(e, row, env),
            })
            .collect()
    }

    /// `(a, b) = (1, x)`, as the "Partition key of the failing row" detail.
    fn describe(&self, key: &[Value], env: &ExecEnv) -> String {
        let values: Vec<String> = key
            .iter()
            .zip(&self.types)
            .map(|(v, t)| value_to_text(v, t.id, &env.io))
            .collect();
        format!("({}) = ({})", self.labels.join(", "), values.join(", "))
    }
}

/// Which child of a partitioned table takes a key, if any.
fn find_child(
    children: &[(ResolvedBound, usize)],
    default: Option<usize>,
    key: &[Value],
    types: &[DataType],
) -> Option<usize> {
    children
        .iter()
        .find(|(b, _)| bound_accepts(b, key, types))
        .map(|(_, i)| *i)
        .or(default)
}

enum Target {
    Leaf(Arc<Table>),
    Partitioned(Box<RouteNode>),
}

struct Child {
    map: ColumnMap,
    identity: bool,
    target: Target,
}

struct RouteNode {
    table: Arc<Table>,
    key: KeyEval,
    /// Non-default bounds with their child's index.
    bounds: Vec<(ResolvedBound, usize)>,
    default: Option<usize>,
    children: Vec<Child>,
}

impl RouteNode {
    fn build(env: &ExecEnv, table: &Table) -> PgResult<RouteNode> {
        let key = table
            .partition_key
            .as_deref()
            .ok_or_else(|| PgError::internal("routing through a table that is not partitioned"))?;
        let catalog = env.catalog.clone();
        let mut bounds = Vec::new();
        let mut default = None;
        let mut children = Vec::new();
        for (child, bound) in ordered_partitions(&catalog, table)? {
            let idx = children.len();
            if bound == ResolvedBound::Default {
                default = Some(idx);
            } else {
                bounds.push((bound, idx));
            }
            let map = column_map(table, child);
            let target = if child.is_partitioned() {
                Target::Partitioned(Box::new(RouteNode::build(env, child)?))
            } else {
                Target::Leaf(Arc::new(child.clone()))
            };
            children.push(Child {
                identity: is_identity(&map, table.columns.len()),
                map,
                target,
            });
        }
        Ok(RouteNode {
            table: Arc::new(table.clone()),
            key: KeyEval::of(env, table, key)?,
            bounds,
            default,
            children,
        })
    }
}

/// Routes rows of a partitioned table to its leaf partitions.
pub(crate) struct PartitionRouter {
    root: RouteNode,
}

impl PartitionRouter {
    pub fn new(env: &ExecEnv, root: &Table) -> PgResult<PartitionRouter> {
        Ok(PartitionRouter {
            root: RouteNode::build(env, root)?,
        })
    }

    /// The leaf partition taking `row` (in the root's column order) and the
    /// row in the leaf's column order; 23514 when no partition takes it.
    pub fn route(&self, row: Vec<Value>, env: &mut ExecEnv) -> PgResult<(Arc<Table>, Vec<Value>)> {
        let mut node = &self.root;
        let mut row = row;
        loop {
            let key = node.key.compute(&row, env)?;
            let Some(i) = find_child(&node.bounds, node.default, &key, &node.key.types) else {
                let schema = crate::dml::schema_name(env.catalog, node.table.namespace);
                return Err(sql::partition::no_partition_error(
                    &node.table,
                    &node.key.describe(&key, env),
                )
                .with_table(&schema, &node.table.name));
            };
            let child = &node.children[i];
            if !child.identity {
                row = map_row(&row, &child.map);
            }
            match &child.target {
                Target::Leaf(t) => return Ok((t.clone(), row)),
                Target::Partitioned(n) => node = n,
            }
        }
    }
}

/// One step of a partition constraint: the parent's key over the row
/// mapped into the parent's columns must fall in the child's bound.
struct ConstraintLevel {
    map: ColumnMap,
    key: KeyEval,
    bound: ResolvedBound,
    /// For a default partition: the siblings' bounds, none of which may
    /// take the key.
    siblings: Vec<ResolvedBound>,
}

/// A partition's partition constraint, ready to check rows against.
pub(crate) struct PartitionConstraint {
    levels: Vec<ConstraintLevel>,
}

impl PartitionConstraint {
    /// The constraint of `table` (None when it is not a partition).
    pub fn of(env: &ExecEnv, table: &Table) -> PgResult<Option<PartitionConstraint>> {
        if table.partition_of.is_none() {
            return Ok(None);
        }
        let catalog = env.catalog.clone();
        let mut levels = Vec::new();
        for child in catalog.partition_ancestors(table.oid) {
            let Some(of) = child.partition_of.as_deref() else {
                break;
            };
            let Some(parent) = catalog.tables.get(&of.parent) else {
                break;
            };
            let Some(key) = parent.partition_key.as_deref() else {
                break;
            };
            let mut bound = None;
            let mut siblings = Vec::new();
            for (t, b) in ordered_partitions(&catalog, parent)? {
                if t.oid == child.oid {
                    bound = Some(b);
                } else if b != ResolvedBound::Default {
                    siblings.push(b);
                }
            }
            levels.push(ConstraintLevel {
                map: column_map(table, parent),
                key: KeyEval::of(env, parent, key)?,
                bound: bound.unwrap_or(ResolvedBound::Default),
                siblings,
            });
        }
        Ok(Some(PartitionConstraint { levels }))
    }

    /// Whether `row` (in the partition's column order) belongs in it.
    pub fn accepts(&self, row: &[Value], env: &mut ExecEnv) -> PgResult<bool> {
        for level in &self.levels {
            let parent_row = map_row(row, &level.map);
            let key = level.key.compute(&parent_row, env)?;
            let ok = match &level.bound {
                ResolvedBound::Default => !level
                    .siblings
                    .iter()
                    .any(|b| bound_accepts(b, &key, &level.key.types)),
                b => bound_accepts(b, &key, &level.key.types),
            };
            if !ok {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// 23514 unless `row` belongs in `table`.
    pub fn check(
        &self,
        table: &Table,
        schema: &str,
        row: &[Value],
        env: &mut ExecEnv,
    ) -> PgResult<()> {
        if self.accepts(row, env)? {
            return Ok(());
        }
        Err(violation(table, schema, row, env))
    }
}

pub(crate) fn violation(table: &Table, schema: &str, row: &[Value], env: &ExecEnv) -> PgError {
    PgError::new(
        SqlState::CHECK_VIOLATION,
        format!(
            "new row for relation \"{}\" violates partition constraint",
            table.name
        ),
    )
    .with_detail(format!(
        "Failing row contains {}.",
        failing_row(table, row, &env.io)
    ))
    .with_table(schema, &table.name)
}

/// A partitioned table's key, computed from rows in its column order.
pub(crate) struct KeyOfParent(KeyEval);

impl KeyOfParent {
    pub fn new(env: &ExecEnv, parent: &Table) -> PgResult<KeyOfParent> {
        let key = parent
            .partition_key
            .as_deref()
            .ok_or_else(|| PgError::internal("not a partitioned table"))?;
        Ok(KeyOfParent(KeyEval::of(env, parent, key)?))
    }
    pub fn compute(&self, row: &[Value], env: &mut ExecEnv) -> PgResult<Vec<Value>> {
        self.0.compute(row, env)
    }
}

/// Calls `f` with each row of `table` the statement sees until it returns
/// false (evaluated outside the page lock: `f` may call anything).
pub(crate) fn for_each_visible_row(
    env: &mut ExecEnv,
    table: &Table,
    mut f: impl FnMut(&[Value], &mut ExecEnv) -> PgResult<bool>,
) -> PgResult<()> {
    let types = table.column_types();
    let mut scan = access::heap::HeapScan::new(env.pool, table.locator())?;
    let mut rows: Vec<Vec<Value>> = Vec::new();
    loop {
        env.check_cancel()?;
        let more = scan.next_page(env.snapshot, env.tm, |_, t| {
            let mut row = Vec::with_capacity(types.len());
            access::tuple::deform_tuple(t, &types, table.toast_source(env.pool), &mut row)?;
            rows.push(row);
            Ok(())
        })?;
        for row in rows.drain(..) {
            if !f(&row, env)? {
                return Ok(());
            }
        }
        if !more {
            return Ok(());
        }
    }
}
