//! The planner stage's entry: walks a bound statement, plans every query
//! tree in it (subqueries inside expressions included) and leaves the rest
//! as bound.
//!
//! Rule kept throughout: a planned subtree produces rows in the same column
//! layout as the bound subtree it replaces, so expressions above it (and
//! correlated subqueries that read its rows as their outer row) stay valid.

use super::cost::{PlannerSettings, RelationSizes};
use super::{joins, BoundStatement, JoinKind, Plan};
use crate::expr::Expr;

/// What planning reads: settings and relation sizes.
pub struct PlannerContext<'a> {
    pub settings: &'a PlannerSettings,
    pub sizes: &'a dyn RelationSizes,
}

/// Plans every query tree of a bound statement.
pub fn plan_statement(stmt: BoundStatement, cx: &PlannerContext) -> BoundStatement {
    use BoundStatement as B;
    match stmt {
        B::WithModifying { ctes, statement } => B::WithModifying {
            ctes: ctes
                .into_iter()
                .map(|c| c.map_statement(|s| plan_statement(s, cx)))
                .collect(),
            statement: Box::new(plan_statement(*statement, cx)),
        },
        B::Explain {
            statement,
            options,
            planning_time,
            ..
        } => B::Explain {
            statement: Box::new(plan_statement(*statement, cx)),
            options,
            settings: Box::new(cx.settings.clone()),
            planning_time,
        },
        // Only a query read to its end in one go runs in parallel (a
        // cursor's rows may be fetched a few at a time, as PostgreSQL's
        // CURSOR_OPT_PARALLEL_OK is left off for them).
        B::Query { plan, columns } => B::Query {
            plan: super::parallel::apply(plan_query(plan, cx), cx),
            columns,
        },
        B::Insert {
            table,
            source,
            returning,
            bulk,
            on_conflict,
        } => B::Insert {
            table,
            source: plan_query(source, cx),
            returning: returning.map(|(e, c)| (plan_exprs(e, cx), c)),
            bulk,
            on_conflict: on_conflict.map(|oc| Box::new(oc.map_exprs(&mut |e| plan_expr(e, cx)))),
        },
        B::Update {
            table,
            alias,
            qual,
            assignments,
            returning,
            index: _,
            join,
        } => B::Update {
            alias,
            index: join
                .is_none()
                .then(|| modify_access(&table, &qual, cx))
                .flatten(),
            join: join.map(|j| plan_join(*j, cx)),
            table,
            qual: plan_exprs(qual, cx),
            assignments: assignments
                .into_iter()
                .map(|(i, e)| (i, plan_expr(e, cx)))
                .collect(),
            returning: returning.map(|(e, c)| (plan_exprs(e, cx), c)),
        },
        B::Delete {
            table,
            alias,
            qual,
            returning,
            index: _,
            join,
        } => B::Delete {
            alias,
            index: join
                .is_none()
                .then(|| modify_access(&table, &qual, cx))
                .flatten(),
            join: join.map(|j| plan_join(*j, cx)),
            table,
            qual: plan_exprs(qual, cx),
            returning: returning.map(|(e, c)| (plan_exprs(e, cx), c)),
        },
        B::CreateTable {
            name,
            namespace,
            columns,
            if_not_exists,
            source,
            sequences,
            constraints,
            on_commit,
            partitioning,
        } => B::CreateTable {
            name,
            namespace,
            columns,
            if_not_exists,
            source: source.map(|(p, c)| (plan_query(p, cx), c)),
            sequences,
            constraints,
            on_commit,
            partitioning,
        },
        B::CopyTo(mut c) => {
            let plan = std::mem::replace(
                &mut c.plan,
                Plan::Values {
                    rows: Vec::new(),
                    width: 0,
                },
            );
            c.plan = plan_query(plan, cx);
            B::CopyTo(c)
        }
        B::DeclareCursor {
            name,
            options,
            query,
        } => {
            let serial = PlannerSettings {
                max_parallel_workers_per_gather: 0,
                debug_parallel_query: false,
                ..cx.settings.clone()
            };
            let cx = PlannerContext {
                settings: &serial,
                sizes: cx.sizes,
            };
            B::DeclareCursor {
                name,
                options,
                query: Box::new(plan_statement(*query, &cx)),
            }
        }
        other => other,
    }
}

/// The conjuncts of a qual (an AND's members, else the qual itself).
pub(crate) fn conjuncts(e: &Expr) -> Vec<&Expr> {
    match e {
        Expr::And(v) => v.iter().flat_map(conjuncts).collect(),
        other => vec![other],
    }
}

/// Pushes NOT down as PostgreSQL's negate_clause does: `NOT (a < b)` is
/// `a >= b`, De Morgan through AND and OR, and negatable tests flip (all
/// equivalent in three-valued logic).
pub(crate) fn simplify_not(e: Expr) -> Expr {
    e.transform(&mut |x| {
        Ok(match x {
            Expr::Not(inner) => negate(*inner),
            other => other,
        })
    })
    .expect("simplifying NOT cannot fail")
}

fn negate(e: Expr) -> Expr {
    use types::ops::BinaryOp as Op;
    match e {
        Expr::Binary {
            op,
            left,
            right,
            ty,
        } if matches!(
            op,
            Op::Eq | Op::NotEq | Op::Lt | Op::LtEq | Op::Gt | Op::GtEq
        ) =>
        {
            let op = match op {
                Op::Eq => Op::NotEq,
                Op::NotEq => Op::Eq,
                Op::Lt => Op::GtEq,
                Op::LtEq => Op::Gt,
                Op::Gt => Op::LtEq,
                _ => Op::Lt,
            };
            Expr::Binary {
                op,
                left,
                right,
                ty,
            }
        }
        Expr::Not(inner) => *inner,
        Expr::And(v) => Expr::Or(v.into_iter().map(negate).collect()),
        Expr::Or(v) => Expr::And(v.into_iter().map(negate).collect()),
        Expr::IsNull { expr, negated } => Expr::IsNull {
            expr,
            negated: !negated,
        },
        Expr::IsBool {
            expr,
            value,
            negated,
        } => Expr::IsBool {
            expr,
            value,
            negated: !negated,
        },
        Expr::LikeConst {
            expr,
            pattern,
            negated,
        } => Expr::LikeConst {
            expr,
            pattern,
            negated: !negated,
        },
        Expr::InList {
            expr,
            list,
            negated,
        } => Expr::InList {
            expr,
            list,
            negated: !negated,
        },
        other => Expr::Not(Box::new(other)),
    }
}

pub(crate) fn into_conjuncts(e: Expr, out: &mut Vec<Expr>) {
    match e {
        Expr::And(v) => v.into_iter().for_each(|x| into_conjuncts(x, out)),
        other => out.push(other),
    }
}

pub(crate) fn and_of(mut v: Vec<Expr>) -> Option<Expr> {
    match v.len() {
        0 => None,
        1 => v.pop(),
        _ => Some(Expr::And(v)),
    }
}

/// Whether the expression holds a subquery (whose correlated references
/// read the row it is evaluated on, in the bound layout).
pub(crate) fn has_subquery(e: &Expr) -> bool {
    e.has_subquery()
}

fn plan_exprs(v: Vec<Expr>, cx: &PlannerContext) -> Vec<Expr> {
    v.into_iter().map(|e| plan_expr(e, cx)).collect()
}

/// Plans the subqueries inside an expression.
pub(crate) fn plan_expr(e: Expr, cx: &PlannerContext) -> Expr {
    if !has_subquery(&e) {
        return e;
    }
    let r = e.transform(&mut |x| {
        Ok(match x {
            Expr::ScalarSubquery(p, t) => Expr::ScalarSubquery(Box::new(plan_query(*p, cx)), t),
            Expr::ArraySubquery(p, t) => Expr::ArraySubquery(Box::new(plan_query(*p, cx)), t),
            Expr::Exists { plan, negated } => Expr::Exists {
                plan: Box::new(plan_query(*plan, cx)),
                negated,
            },
            Expr::InSubquery {
                expr,
                plan,
                negated,
            } => Expr::InSubquery {
                expr,
                plan: Box::new(plan_query(*plan, cx)),
                negated,
            },
            other => other,
        })
    });
    r.expect("planning subqueries cannot fail")
}

/// UPDATE ... FROM / DELETE ... USING: the join planned as a query's (its
/// layout, and so the marks' columns, kept).
fn plan_join(j: super::ModifyJoin, cx: &PlannerContext) -> Box<super::ModifyJoin> {
    Box::new(super::ModifyJoin {
        plan: plan_query(j.plan, cx),
        marks: j.marks,
        target_system: j.target_system,
    })
}

/// The index UPDATE or DELETE finds its rows through, if one beats the
/// sequential scan.
fn modify_access(
    table: &std::sync::Arc<catalog::Table>,
    qual: &[Expr],
    cx: &PlannerContext,
) -> Option<Box<super::IndexPath>> {
    let scan = joins::choose_access(
        Plan::SeqScan {
            table: table.clone(),
            qual: qual.to_vec(),
            alias: None,
            tid: false,
            system: Vec::new(),
            index: None,
        },
        cx,
    );
    match scan {
        Plan::SeqScan { index, .. } => index,
        _ => None,
    }
}

/// Plans a whole query tree (a statement's, a subquery's): its shape,
/// then index-only scans where its columns allow (`indexonly.rs`).
pub(crate) fn plan_query(plan: Plan, cx: &PlannerContext) -> Plan {
    super::partitions::expand(super::indexonly::apply(plan_tree(plan, cx), cx), cx)
}

/// Plans a query tree.
fn plan_calls(calls: Vec<crate::srf::SrfCall>, cx: &PlannerContext) -> Vec<crate::srf::SrfCall> {
    calls
        .into_iter()
        .map(|c| {
            c.map_args(&mut |e| Ok(plan_expr(e, cx)))
                .expect("planning an expression does not fail")
        })
        .collect()
}

pub(crate) fn plan_tree(plan: Plan, cx: &PlannerContext) -> Plan {
    match plan {
        // A join tree, or a filter over one: a join problem.
        p @ (Plan::Filter { .. }
        | Plan::NestedLoop {
            kind: JoinKind::Inner,
            ..
        }) => joins::plan_join_problem(p, cx),
        Plan::NestedLoop {
            left,
            right,
            kind,
            on,
            left_width,
            right_width,
        } => joins::plan_outer_join(
            plan_tree(*left, cx),
            plan_tree(*right, cx),
            kind,
            on.map(|e| plan_expr(e, cx)),
            left_width,
            right_width,
            cx,
        ),
        Plan::HashJoin { .. } => unreachable!("the binder emits no hash joins"),
        Plan::SeqScan {
            table,
            qual,
            alias,
            tid,
            system,
            index,
        } => joins::choose_access(
            Plan::SeqScan {
                table,
                qual: plan_exprs(qual, cx),
                alias,
                tid,
                system,
                index,
            },
            cx,
        ),
        Plan::Values { rows, width } => Plan::Values {
            rows: rows.into_iter().map(|r| plan_exprs(r, cx)).collect(),
            width,
        },
        Plan::Project { input, exprs } => Plan::Project {
            input: Box::new(plan_tree(*input, cx)),
            exprs: plan_exprs(exprs, cx),
        },
        Plan::ProjectSet { input, srfs, exprs } => Plan::ProjectSet {
            input: Box::new(plan_tree(*input, cx)),
            srfs: plan_calls(srfs, cx),
            exprs: plan_exprs(exprs, cx),
        },
        p @ Plan::SystemView { .. } => p,
        Plan::FunctionScan {
            calls,
            ordinality,
            alias,
        } => Plan::FunctionScan {
            calls: plan_calls(calls, cx),
            ordinality,
            alias,
        },
        // Fixed in place: the right side reads the left row.
        Plan::LateralJoin {
            left,
            right,
            kind,
            on,
            right_width,
            left_width,
        } => Plan::LateralJoin {
            left: Box::new(plan_tree(*left, cx)),
            right: Box::new(plan_tree(*right, cx)),
            kind,
            on: on.map(|e| plan_expr(e, cx)),
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
            input: Box::new(plan_tree(*input, cx)),
            keys: plan_exprs(keys, cx),
            aggs: aggs
                .into_iter()
                .map(|a| {
                    a.map_input_exprs(&mut |e| Ok(plan_expr(e, cx)))
                        .expect("planning an expression does not fail")
                })
                .collect(),
        },
        Plan::WindowAgg {
            input,
            partition,
            order,
            frame,
            funcs,
        } => {
            let input = Box::new(plan_tree(*input, cx));
            let (frame, funcs) =
                crate::window::map_window_node(frame, funcs, &mut |e| plan_expr(e, cx));
            Plan::WindowAgg {
                input,
                partition,
                order,
                frame,
                funcs,
            }
        }
        // A scan already read through an index in the sort's order (or
        // its reverse) needs no Sort; a new index path for the order alone
        // is chosen only under a LIMIT (below).
        Plan::Sort { input, keys } => super::indexpath::sort_by_index(
            Plan::Sort {
                input: Box::new(plan_tree(*input, cx)),
                keys,
            },
            false,
            cx,
        ),
        Plan::Limit {
            input,
            limit,
            offset,
            ties,
        } => {
            let input = plan_tree(*input, cx);
            // ORDER BY ... LIMIT: an index in the sort's order returns the
            // first rows without reading and sorting the rest.
            let input = if limit.is_some() {
                super::indexpath::sort_by_index(input, true, cx)
            } else {
                input
            };
            Plan::Limit {
                input: Box::new(input),
                limit,
                offset,
                ties,
            }
        }
        Plan::Distinct { input } => Plan::Distinct {
            input: Box::new(plan_tree(*input, cx)),
        },
        Plan::LockRows { input, marks } => Plan::LockRows {
            input: Box::new(plan_tree(*input, cx)),
            marks,
        },
        Plan::Gather { .. } => unreachable!("Gather is planned after the query tree"),
        Plan::SetOp {
            left,
            right,
            op,
            all,
        } => Plan::SetOp {
            left: Box::new(plan_tree(*left, cx)),
            right: Box::new(plan_tree(*right, cx)),
            op,
            all,
        },
        // A CTE computed apart is a query tree of its own.
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
            plan: Box::new(plan_query(*plan, cx)),
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
        } => {
            let base = plan_tree(*base, cx);
            let base_rows = super::cost::estimate(&base, cx.sizes, cx.settings).rows;
            let sizes = super::cost::WorkTableSizes::new(cx.sizes, id, base_rows);
            let recursive_cx = PlannerContext {
                settings: cx.settings,
                sizes: &sizes,
            };
            Plan::RecursiveUnion {
                id,
                base: Box::new(base),
                recursive: Box::new(plan_tree(*recursive, &recursive_cx)),
                distinct,
                width,
            }
        }
        p @ (Plan::WorkTableScan { .. } | Plan::ModifyingCteRows { .. }) => p,
    }
}
