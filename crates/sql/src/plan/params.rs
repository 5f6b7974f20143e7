//! Custom plans: a bound statement with its parameters' values written in as
//! constants, so the planner estimates `a = 42` instead of `a = $1`.
//!
//! PostgreSQL plans a prepared statement's first executions this way and
//! keeps a generic plan (parameters left as `$n`) only once it costs no more
//! than the custom plans did (`plan_cache_mode`, `choose_custom_plan`).

use types::{DataType, TypeId, Value};

use super::cost::{estimate, seq_scan, PlannerSettings, RelationSizes};
use super::{BoundStatement, Plan};
use crate::expr::Expr;

/// A planned statement's estimated total cost and the number of relations
/// it scans (what re-planning it would cost grows with them); None for
/// statements the planner does not plan.
pub fn statement_cost(
    stmt: &BoundStatement,
    sizes: &dyn RelationSizes,
    s: &PlannerSettings,
) -> Option<(f64, usize)> {
    use BoundStatement as B;
    match stmt {
        B::Explain { statement, .. }
        | B::DeclareCursor {
            query: statement, ..
        } => statement_cost(statement, sizes, s),
        B::WithModifying { ctes, statement } => {
            let mut total = statement_cost(statement, sizes, s)?;
            for c in ctes {
                let (cost, n) = statement_cost(&c.statement, sizes, s)?;
                total = (total.0 + cost, total.1 + n);
            }
            Some(total)
        }
        B::Query { plan, .. } | B::Insert { source: plan, .. } => {
            Some((estimate(plan, sizes, s).total, scans(plan)))
        }
        B::Update { join: Some(j), .. } | B::Delete { join: Some(j), .. } => {
            Some((estimate(&j.plan, sizes, s).total, scans(&j.plan)))
        }
        B::Update {
            index: Some(path), ..
        }
        | B::Delete {
            index: Some(path), ..
        } => Some((path.estimate.total, 1)),
        B::Update { table, qual, .. } | B::Delete { table, qual, .. } => {
            Some((seq_scan(table, sizes, qual, s).total, 1))
        }
        _ => None,
    }
}

fn scans(plan: &Plan) -> usize {
    match plan {
        Plan::SeqScan { .. } | Plan::SystemView { .. } | Plan::FunctionScan { .. } => 1,
        Plan::Values { .. } | Plan::WorkTableScan { .. } | Plan::ModifyingCteRows { .. } => 0,
        Plan::CteScan { plan, .. } => 1 + scans(plan),
        Plan::RecursiveUnion {
            base, recursive, ..
        } => scans(base) + scans(recursive),
        Plan::Filter { input, .. }
        | Plan::Project { input, .. }
        | Plan::ProjectSet { input, .. }
        | Plan::Aggregate { input, .. }
        | Plan::WindowAgg { input, .. }
        | Plan::Sort { input, .. }
        | Plan::Limit { input, .. }
        | Plan::LockRows { input, .. }
        | Plan::Gather { input, .. }
        | Plan::Distinct { input } => scans(input),
        Plan::NestedLoop { left, right, .. }
        | Plan::HashJoin { left, right, .. }
        | Plan::LateralJoin { left, right, .. }
        | Plan::SetOp { left, right, .. } => scans(left) + scans(right),
    }
}

/// `stmt` with every `$n` replaced by the constant `params[n - 1]`.
pub fn substitute_params(stmt: BoundStatement, params: &[Value]) -> BoundStatement {
    let mut f = |e: Expr| substitute_expr(e, params);
    map_statement(stmt, &mut f)
}

fn substitute_expr(e: Expr, params: &[Value]) -> Expr {
    let r = e.transform(&mut |x| {
        Ok(match x {
            Expr::Param(i, ty) => match params.get(i) {
                Some(v) => Expr::Const(v.clone(), ty),
                None => Expr::Param(i, ty),
            },
            Expr::ScalarSubquery(p, t) => Expr::ScalarSubquery(
                Box::new(map_plan(*p, &mut |e| substitute_expr(e, params))),
                t,
            ),
            Expr::ArraySubquery(p, t) => Expr::ArraySubquery(
                Box::new(map_plan(*p, &mut |e| substitute_expr(e, params))),
                t,
            ),
            Expr::Exists { plan, negated } => Expr::Exists {
                plan: Box::new(map_plan(*plan, &mut |e| substitute_expr(e, params))),
                negated,
            },
            Expr::InSubquery {
                expr,
                plan,
                negated,
            } => Expr::InSubquery {
                expr,
                plan: Box::new(map_plan(*plan, &mut |e| substitute_expr(e, params))),
                negated,
            },
            other => other,
        })
    });
    r.expect("substituting parameters cannot fail")
}

type ExprMap<'a> = dyn FnMut(Expr) -> Expr + 'a;

fn map_vec(v: Vec<Expr>, f: &mut ExprMap) -> Vec<Expr> {
    v.into_iter().map(&mut *f).collect()
}

/// Applies `f` to every top-level expression of the statement's plans
/// (`f` itself descends into subqueries).
fn map_statement(stmt: BoundStatement, f: &mut ExprMap) -> BoundStatement {
    use BoundStatement as B;
    let returning = |r: Option<(Vec<Expr>, _)>, f: &mut ExprMap| r.map(|(e, c)| (map_vec(e, f), c));
    match stmt {
        B::WithModifying { ctes, statement } => B::WithModifying {
            ctes: ctes
                .into_iter()
                .map(|c| c.map_statement(|s| map_statement(s, f)))
                .collect(),
            statement: Box::new(map_statement(*statement, f)),
        },
        B::Explain {
            statement,
            options,
            settings,
            planning_time,
        } => B::Explain {
            statement: Box::new(map_statement(*statement, f)),
            options,
            settings,
            planning_time,
        },
        B::Query { plan, columns } => B::Query {
            plan: map_plan(plan, f),
            columns,
        },
        B::Insert {
            table,
            source,
            returning: r,
            bulk,
            on_conflict,
        } => B::Insert {
            table,
            source: map_plan(source, f),
            returning: returning(r, f),
            bulk,
            on_conflict: on_conflict.map(|oc| Box::new(oc.map_exprs(&mut |e| f(e)))),
        },
        B::Update {
            table,
            alias,
            qual,
            assignments,
            returning: r,
            index,
            join,
        } => B::Update {
            alias,
            index: index.map(|p| map_index_path(p, f)),
            table,
            qual: map_vec(qual, f),
            assignments: assignments.into_iter().map(|(i, e)| (i, f(e))).collect(),
            returning: returning(r, f),
            join: join.map(|j| map_join(*j, f)),
        },
        B::Delete {
            table,
            alias,
            qual,
            returning: r,
            index,
            join,
        } => B::Delete {
            alias,
            index: index.map(|p| map_index_path(p, f)),
            table,
            qual: map_vec(qual, f),
            returning: returning(r, f),
            join: join.map(|j| map_join(*j, f)),
        },
        B::CopyTo(mut c) => {
            let empty = Plan::Values {
                rows: Vec::new(),
                width: 0,
            };
            c.plan = map_plan(std::mem::replace(&mut c.plan, empty), f);
            B::CopyTo(c)
        }
        B::DeclareCursor {
            name,
            options,
            query,
        } => B::DeclareCursor {
            name,
            options,
            query: Box::new(map_statement(*query, f)),
        },
        B::ExecutePrepared { name, args } => B::ExecutePrepared {
            name,
            args: map_vec(args, f),
        },
        other => other,
    }
}

/// Applies `f` to an index path's condition values and clauses.
fn map_join(j: super::ModifyJoin, f: &mut ExprMap) -> Box<super::ModifyJoin> {
    Box::new(super::ModifyJoin {
        plan: map_plan(j.plan, f),
        marks: j.marks,
        target_system: j.target_system,
    })
}

fn map_index_path(mut p: Box<super::IndexPath>, f: &mut ExprMap) -> Box<super::IndexPath> {
    for c in &mut p.conds {
        c.values = map_vec(std::mem::take(&mut c.values), f);
        let placeholder = Expr::Const(Value::Null, DataType::new(TypeId::Bool));
        let clause = std::mem::replace(&mut c.clause, placeholder);
        c.clause = f(clause);
    }
    p
}

/// Applies `f` to every expression of `plan`'s nodes.
pub(crate) fn map_plan(plan: Plan, f: &mut ExprMap) -> Plan {
    let bx = |p: Box<Plan>, f: &mut ExprMap| Box::new(map_plan(*p, f));
    match plan {
        Plan::SeqScan {
            table,
            qual,
            alias,
            tid,
            system,
            index,
        } => Plan::SeqScan {
            table,
            qual: map_vec(qual, f),
            alias,
            tid,
            system,
            index: index.map(|p| map_index_path(p, f)),
        },
        Plan::Values { rows, width } => Plan::Values {
            rows: rows.into_iter().map(|r| map_vec(r, f)).collect(),
            width,
        },
        Plan::Filter { input, qual } => Plan::Filter {
            input: bx(input, f),
            qual: f(qual),
        },
        Plan::Project { input, exprs } => Plan::Project {
            input: bx(input, f),
            exprs: map_vec(exprs, f),
        },
        Plan::ProjectSet { input, srfs, exprs } => Plan::ProjectSet {
            input: bx(input, f),
            srfs: srfs
                .into_iter()
                .map(|c| c.map_args(&mut |e| Ok(f(e))).expect("infallible"))
                .collect(),
            exprs: map_vec(exprs, f),
        },
        p @ Plan::SystemView { .. } => p,
        Plan::FunctionScan {
            calls,
            ordinality,
            alias,
        } => Plan::FunctionScan {
            calls: calls
                .into_iter()
                .map(|c| c.map_args(&mut |e| Ok(f(e))).expect("infallible"))
                .collect(),
            ordinality,
            alias,
        },
        Plan::LateralJoin {
            left,
            right,
            kind,
            on,
            right_width,
            left_width,
        } => Plan::LateralJoin {
            left: bx(left, f),
            right: bx(right, f),
            kind,
            on: on.map(&mut *f),
            right_width,
            left_width,
        },
        Plan::NestedLoop {
            left,
            right,
            kind,
            on,
            right_width,
            left_width,
        } => Plan::NestedLoop {
            left: bx(left, f),
            right: bx(right, f),
            kind,
            on: on.map(&mut *f),
            right_width,
            left_width,
        },
        Plan::HashJoin {
            left,
            right,
            kind,
            hash_cond,
            join_filter,
            right_width,
            left_width,
        } => Plan::HashJoin {
            left: bx(left, f),
            right: bx(right, f),
            kind,
            hash_cond: map_vec(hash_cond, f),
            join_filter: join_filter.map(&mut *f),
            right_width,
            left_width,
        },
        Plan::Aggregate {
            input,
            keys,
            aggs,
            sets,
        } => Plan::Aggregate {
            sets,
            input: bx(input, f),
            keys: map_vec(keys, f),
            aggs: aggs
                .into_iter()
                .map(|a| {
                    a.map_input_exprs(&mut |e| Ok(f(e)))
                        .expect("mapping parameters does not fail")
                })
                .collect(),
        },
        Plan::Sort { input, keys } => Plan::Sort {
            input: bx(input, f),
            keys,
        },
        Plan::WindowAgg {
            input,
            partition,
            order,
            frame,
            funcs,
        } => {
            let input = bx(input, f);
            let (frame, funcs) = crate::window::map_window_node(frame, funcs, f);
            Plan::WindowAgg {
                input,
                partition,
                order,
                frame,
                funcs,
            }
        }
        Plan::Limit {
            input,
            limit,
            offset,
            ties,
        } => Plan::Limit {
            input: bx(input, f),
            limit: limit.map(&mut *f),
            offset: offset.map(&mut *f),
            ties,
        },
        Plan::Distinct { input } => Plan::Distinct {
            input: bx(input, f),
        },
        Plan::LockRows { input, marks } => Plan::LockRows {
            input: bx(input, f),
            marks,
        },
        Plan::Gather { input, workers } => Plan::Gather {
            input: bx(input, f),
            workers,
        },
        Plan::SetOp {
            left,
            right,
            op,
            all,
        } => Plan::SetOp {
            left: bx(left, f),
            right: bx(right, f),
            op,
            all,
        },
        Plan::CteScan {
            id,
            name,
            alias,
            plan,
            shared,
            outer_rows,
            columns,
        } => Plan::CteScan {
            id,
            name,
            alias,
            plan: bx(plan, f),
            shared,
            outer_rows,
            columns,
        },
        Plan::RecursiveUnion {
            id,
            base,
            recursive,
            distinct,
            width,
        } => Plan::RecursiveUnion {
            id,
            base: bx(base, f),
            recursive: bx(recursive, f),
            distinct,
            width,
        },
        p @ (Plan::WorkTableScan { .. } | Plan::ModifyingCteRows { .. }) => p,
    }
}
