//! LockRows: SELECT ... FOR UPDATE / NO KEY UPDATE / SHARE / KEY SHARE
//! (PostgreSQL's nodeLockRows.c).
//!
//! Each row from the input carries its tables' row-version tids (columns
//! the binder added, see `sql::plan::RowMark`). Every named table's version
//! is locked through `access::heap::lock_tuple`, which waits for a
//! conflicting holder unless the clause said NOWAIT (55P03) or SKIP LOCKED
//! (the row is left out). When a version turns out updated by a transaction
//! that committed meanwhile, READ COMMITTED locks the newest version and
//! re-checks the query on it (EvalPlanQual: the input plan runs again with
//! each table's scan reduced to the one version the row is made of); a
//! deleted row is left out. With a transaction snapshot (REPEATABLE READ)
//! either is a serialization failure.

use access::heap::{self, LockResult, RowLockMode, Tid, WaitPolicy};
use access::tuple::deform_tuple;
use common::{PgError, PgResult, SqlState};
use sql::expr::Expr;
use sql::plan::{LockStrength, LockWait, Plan, RowMark, SystemColumn};
use types::Value;

use crate::ops::{build, Operator};
use crate::{ExecEnv, Row};

/// A tid as the scans emit it: `(block << 16) | offset` in an int8.
pub(crate) fn tid_value(tid: Tid) -> Value {
    Value::Int8(((tid.block as i64) << 16) | tid.offset as i64)
}

pub(crate) fn tid_of(v: &Value) -> Option<Tid> {
    match v {
        Value::Int8(x) => Some(Tid {
            block: (*x >> 16) as u32,
            offset: (*x & 0xffff) as u16,
        }),
        _ => None,
    }
}

fn lock_mode(s: LockStrength) -> RowLockMode {
    match s {
        LockStrength::KeyShare => RowLockMode::KeyShare,
        LockStrength::Share => RowLockMode::Share,
        LockStrength::NoKeyUpdate => RowLockMode::NoKeyExclusive,
        LockStrength::Update => RowLockMode::Exclusive,
    }
}

fn wait_policy(w: LockWait) -> WaitPolicy {
    match w {
        LockWait::Block => WaitPolicy::Block,
        LockWait::Skip => WaitPolicy::Skip,
        LockWait::Error => WaitPolicy::Error,
    }
}

fn serialization_failure() -> PgError {
    PgError::new(
        SqlState::SERIALIZATION_FAILURE,
        "could not serialize access due to concurrent update",
    )
}

pub(crate) struct LockRowsOp<'p> {
    input: Box<dyn Operator + 'p>,
    /// The input's plan, run again for re-checks.
    input_plan: &'p Plan,
    marks: &'p [RowMark],
}

impl<'p> LockRowsOp<'p> {
    pub(crate) fn new(
        input: Box<dyn Operator + 'p>,
        input_plan: &'p Plan,
        marks: &'p [RowMark],
    ) -> Self {
        LockRowsOp {
            input,
            input_plan,
            marks,
        }
    }

    /// Locks the versions `row` names. None: leave the row out (skipped,
    /// deleted, or no longer passing the query on its newest versions).
    fn lock_row(&self, mut row: Row, env: &mut ExecEnv) -> PgResult<Option<Row>> {
        let mut moved = false;
        for mark in self.marks {
            let Some((strength, wait)) = mark.lock else {
                continue;
            };
            let Some(mut tid) = tid_of(&row[mark.tid_column]) else {
                continue; // an outer join's missing side
            };
            loop {
                let who = env.requester();
                let (pool, tm) = (env.pool, env.tm);
                let hooks = &mut *env.hooks;
                let r = heap::lock_tuple(
                    pool,
                    mark.table.locator(),
                    tid,
                    who,
                    lock_mode(strength),
                    wait_policy(wait),
                    tm,
                    &mut |x| hooks.wait_for_transaction(x),
                )
                .map_err(|e| crate::dml::wait_error(env, e))?;
                match r {
                    LockResult::Locked => break,
                    LockResult::WouldBlock if wait == LockWait::Skip => return Ok(None),
                    LockResult::WouldBlock => {
                        return Err(PgError::new(
                            SqlState::LOCK_NOT_AVAILABLE,
                            format!(
                                "could not obtain lock on row in relation \"{}\"",
                                mark.table.name
                            ),
                        ))
                    }
                    // Changed by this transaction since the snapshot: not
                    // ours to return (PostgreSQL skips it too).
                    LockResult::SelfModified => return Ok(None),
                    LockResult::Updated(_) if env.isolation.uses_transaction_snapshot() => {
                        return Err(serialization_failure())
                    }
                    LockResult::Updated(None) => return Ok(None),
                    LockResult::Updated(Some((next, updater))) => {
                        // The slot may have been pruned and reused by an
                        // unrelated tuple: then the row is gone.
                        if heap::fetch_version(env.pool, mark.table.locator(), next, updater)?
                            .is_none()
                        {
                            return Ok(None);
                        }
                        tid = next;
                        moved = true;
                        row[mark.tid_column] = tid_value(next);
                    }
                }
            }
        }
        if !moved {
            return Ok(Some(row));
        }
        self.recheck(&row, env)
    }

    /// EvalPlanQual: the input plan again over just the versions `row`
    /// names (the newest ones for the tables that moved), each table's scan
    /// replaced by its version's values under the scan's quals. The row
    /// that names exactly those versions is the re-checked row, if any.
    fn recheck(&self, row: &Row, env: &mut ExecEnv) -> PgResult<Option<Row>> {
        let mut versions: Vec<(Tid, Value, &RowMark)> = Vec::new();
        for m in self.marks {
            if let Some(tid) = tid_of(&row[m.tid_column]) {
                versions.push((tid, row[m.tid_column].clone(), m));
            }
        }
        let plan = pin_scans(self.input_plan.clone(), &versions, env)?;
        let found = self.first_same_row(&plan, row, env);
        // The copy's subquery answers are keyed by addresses it frees.
        env.subplans.clear();
        found
    }

    /// The row of `plan` naming the same versions as `row`, if any.
    fn first_same_row(&self, plan: &Plan, row: &Row, env: &mut ExecEnv) -> PgResult<Option<Row>> {
        let mut op = build(plan, env, None)?;
        while let Some(r) = op.next(env)? {
            let same = self
                .marks
                .iter()
                .all(|m| r.get(m.tid_column) == Some(&row[m.tid_column]));
            if same {
                return Ok(Some(r));
            }
        }
        Ok(None)
    }
}

/// `plan` with every tid-emitting scan replaced by the versions of its
/// table in `versions`, as constant rows under the scan's quals.
pub(crate) fn pin_scans(
    plan: Plan,
    versions: &[(Tid, Value, &RowMark)],
    env: &mut ExecEnv,
) -> PgResult<Plan> {
    let mut err = None;
    let plan = map_scans(plan, &mut |table, qual, system| {
        let width = table.columns.len() + 1 + system.len();
        let mut rows = Vec::new();
        for (tid, value, m) in versions {
            if m.table.oid != table.oid {
                continue;
            }
            let bytes = match heap::fetch_any(env.pool, table.locator(), *tid) {
                Ok(Some(b)) => b,
                Ok(None) => continue,
                Err(e) => {
                    err = Some(e);
                    continue;
                }
            };
            let mut values = Vec::new();
            let toast = table.toast_source(env.pool);
            if let Err(e) = deform_tuple(&bytes, &table.column_types(), toast, &mut values) {
                err = Some(e);
                continue;
            }
            let types = table.column_types();
            let mut exprs: Vec<Expr> = values
                .into_iter()
                .zip(types.iter().copied())
                .map(|(v, t)| Expr::Const(v, t))
                .collect();
            exprs.push(Expr::Const(
                value.clone(),
                types::DataType::new(types::TypeId::Int8),
            ));
            // The newest version's system columns, as a scan emits them.
            let mut row = Vec::with_capacity(width);
            if let Err(e) = deform_tuple(&bytes, &types, toast, &mut row) {
                err = Some(e);
                continue;
            }
            row.resize(types.len(), Value::Null);
            let mut extra = Vec::new();
            let pushed =
                crate::system_columns::push_values(system, *tid, &bytes, table, &types, &mut row);
            if let Err(e) = pushed {
                err = Some(e);
                continue;
            }
            extra.extend(row.drain(types.len()..));
            for (v, c) in extra.into_iter().zip(system) {
                exprs.push(Expr::Const(v, c.data_type()));
            }
            rows.push(exprs);
        }
        let values = Plan::Values { rows, width };
        let qual = match qual.len() {
            0 => return values,
            1 => qual.into_iter().next().expect("one qual"),
            _ => Expr::And(qual),
        };
        Plan::Filter {
            input: Box::new(values),
            qual,
        }
    });
    match err {
        Some(e) => Err(e),
        None => Ok(plan),
    }
}

/// What replaces a tid-emitting scan: given its table, quals and system
/// columns.
type ScanRewrite<'a> = dyn FnMut(&catalog::Table, Vec<Expr>, &[SystemColumn]) -> Plan + 'a;

/// Rebuilds `plan` with `f` applied to each tid-emitting scan (its table,
/// quals and width).
fn map_scans(plan: Plan, f: &mut ScanRewrite) -> Plan {
    let go = |p: Box<Plan>, f: &mut ScanRewrite| Box::new(map_scans(*p, f));
    match plan {
        Plan::SeqScan {
            table,
            mut qual,
            tid: true,
            system,
            index,
            ..
        } => {
            // An index scan's conditions are quals too: the newest version
            // must still pass them.
            if let Some(path) = index {
                qual.extend(path.conds.into_iter().map(|c| c.clause));
            }
            f(&table, qual, &system)
        }
        Plan::Filter { input, qual } => Plan::Filter {
            input: go(input, f),
            qual,
        },
        Plan::Project { input, exprs } => Plan::Project {
            input: go(input, f),
            exprs,
        },
        Plan::Sort { input, keys } => Plan::Sort {
            input: go(input, f),
            keys,
        },
        Plan::NestedLoop {
            left,
            right,
            kind,
            on,
            left_width,
            right_width,
        } => Plan::NestedLoop {
            left: go(left, f),
            right: go(right, f),
            kind,
            on,
            left_width,
            right_width,
        },
        Plan::LateralJoin {
            left,
            right,
            kind,
            on,
            left_width,
            right_width,
        } => Plan::LateralJoin {
            left: go(left, f),
            right: go(right, f),
            kind,
            on,
            left_width,
            right_width,
        },
        Plan::HashJoin {
            left,
            right,
            kind,
            hash_cond,
            join_filter,
            left_width,
            right_width,
        } => Plan::HashJoin {
            left: go(left, f),
            right: go(right, f),
            kind,
            hash_cond,
            join_filter,
            left_width,
            right_width,
        },
        other => other,
    }
}

impl Operator for LockRowsOp<'_> {
    fn next(&mut self, env: &mut ExecEnv) -> PgResult<Option<Row>> {
        while let Some(row) = self.input.next(env)? {
            if let Some(r) = self.lock_row(row, env)? {
                return Ok(Some(r));
            }
        }
        Ok(None)
    }
}
