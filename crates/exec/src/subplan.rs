//! Subqueries in expressions. One that reads no outer row gives the same
//! answer every time in a statement, so it runs once (PostgreSQL's InitPlan)
//! and its answer is kept here by plan node; `IN (subquery)` keeps its rows
//! hashed (PostgreSQL's hashed SubPlan). A correlated one runs per row.
//!
//! Keys are plan node addresses: the statement's plan outlives the
//! `ExecEnv`, and the one plan built and dropped during a statement (a
//! locking query's re-check, `lockrows.rs`) clears the cache after it.

use std::collections::{HashMap, HashSet};

use common::PgResult;
use sql::plan::walk::reads_outer_rows;
use sql::Plan;
use types::Value;

use crate::agg::GroupKey;
use crate::{ExecEnv, Row};

/// The rows of an uncorrelated `IN (subquery)`, hashed.
pub(crate) struct InSet {
    values: HashSet<GroupKey>,
    has_null: bool,
    empty: bool,
}

impl InSet {
    fn new(rows: Vec<Row>) -> InSet {
        let empty = rows.is_empty();
        let mut has_null = false;
        let mut values = HashSet::with_capacity(rows.len());
        for r in rows {
            let v = r.into_iter().next().unwrap_or(Value::Null);
            if v.is_null() {
                has_null = true;
            } else {
                values.insert(GroupKey(vec![v]));
            }
        }
        InSet {
            values,
            has_null,
            empty,
        }
    }

    /// `x IN (rows)` with SQL's NULL rules (`negated`: NOT IN).
    pub(crate) fn test(&self, x: &Value, negated: bool) -> Value {
        if self.empty {
            return Value::Bool(negated);
        }
        if x.is_null() {
            return Value::Null;
        }
        if self.values.contains(&GroupKey(vec![x.clone()])) {
            return Value::Bool(!negated);
        }
        if self.has_null {
            Value::Null
        } else {
            Value::Bool(negated)
        }
    }
}

#[derive(Default)]
pub struct SubplanCache {
    correlated: HashMap<usize, bool>,
    values: HashMap<usize, Value>,
    in_sets: HashMap<usize, std::rc::Rc<InSet>>,
}

fn key(plan: &Plan) -> usize {
    plan as *const Plan as usize
}

impl SubplanCache {
    /// Forgets everything (a plan node's address may now name another).
    pub(crate) fn clear(&mut self) {
        *self = SubplanCache::default();
    }
}

fn is_correlated(plan: &Plan, env: &mut ExecEnv) -> bool {
    *env.subplans
        .correlated
        .entry(key(plan))
        .or_insert_with(|| reads_outer_rows(plan))
}

/// The value of a subquery expression over `plan`: computed once per
/// statement when the subquery reads no outer row, else every time.
pub(crate) fn value(
    plan: &Plan,
    env: &mut ExecEnv,
    compute: impl FnOnce(&mut ExecEnv) -> PgResult<Value>,
) -> PgResult<Value> {
    if is_correlated(plan, env) {
        return compute(env);
    }
    if let Some(v) = env.subplans.values.get(&key(plan)) {
        return Ok(v.clone());
    }
    let v = compute(env)?;
    env.subplans.values.insert(key(plan), v.clone());
    Ok(v)
}

/// The hashed rows of an uncorrelated `IN (subquery)`; None if correlated.
pub(crate) fn in_set(
    plan: &Plan,
    env: &mut ExecEnv,
    compute: impl FnOnce(&mut ExecEnv) -> PgResult<Vec<Row>>,
) -> PgResult<Option<std::rc::Rc<InSet>>> {
    if is_correlated(plan, env) {
        return Ok(None);
    }
    if let Some(s) = env.subplans.in_sets.get(&key(plan)) {
        return Ok(Some(s.clone()));
    }
    let set = std::rc::Rc::new(InSet::new(compute(env)?));
    env.subplans.in_sets.insert(key(plan), set.clone());
    Ok(Some(set))
}
