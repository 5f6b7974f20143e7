//! Parallel plans (PostgreSQL's partial paths and Gather, allpaths.c and
//! planner.c), chosen after the rest of the query is planned.
//!
//! A *parallel chain* is a Seq Scan (read in full, no row locks, no system
//! columns) under any number of Filters and Projects, every expression of
//! which is parallel safe. Such a chain can run below a Gather, its scan a
//! Parallel Seq Scan; an Aggregate over a chain, with only aggregates whose
//! states combine (count, sum, avg, min, max, bool_and, bool_or, without
//! DISTINCT or ORDER BY) and no grouping sets, can run as a Partial
//! Aggregate in every participant below the Gather and a Finalize
//! Aggregate above it.
//!
//! Each chain found walking down from the top is replaced by its parallel
//! form when that costs less where it stands: under a LIMIT only the
//! fraction of the rows the LIMIT reads is costed (the Gather's startup
//! cost then usually keeps the plan serial). With debug_parallel_query the
//! parallel form is taken wherever it is possible.

use std::sync::Arc;

use catalog::Table;

use super::cost::{estimate, Estimate, PlannerSettings};
use super::planner::PlannerContext;
use super::Plan;
use crate::expr::{AggCall, AggFunc, Expr, ParallelSafety};
use crate::parallel_safety::{max_parallel_hazard, plan_parallel_hazard};

/// The worst label in `e` for running it in a worker: the functions'
/// own labels (`parallel_safety`), and restricted for what only the leader
/// has: session state behind `Sys` functions, enclosing queries' rows, and
/// subqueries (their scans must not join the participants' shared scan).
pub fn expr_hazard(e: &Expr) -> ParallelSafety {
    let mut worst = max_parallel_hazard(e);
    e.visit(&mut |x| {
        let leader_only = match x {
            Expr::Sys { func, .. } => !func.is_pure(),
            Expr::OuterColumn { .. } => true,
            x => x.is_subquery(),
        };
        if leader_only {
            worst = worst.max(ParallelSafety::Restricted);
        }
    });
    worst
}

/// Plans Gathers into a planned query tree where they pay.
pub(crate) fn apply(plan: Plan, cx: &PlannerContext) -> Plan {
    let s = cx.settings;
    if s.max_parallel_workers_per_gather == 0 && !s.debug_parallel_query {
        return plan;
    }
    if plan_parallel_hazard(&plan) == ParallelSafety::Unsafe {
        return plan;
    }
    walk(plan, 1.0, cx)
}

/// `plan` with its chains made parallel where that is cheaper; `fraction`
/// is the share of its rows the nodes above read.
fn walk(plan: Plan, fraction: f64, cx: &PlannerContext) -> Plan {
    if let Some(table) = chain_table(&plan) {
        let table = table.clone();
        return choose(plan, &table, fraction, cx, |p, workers| Plan::Gather {
            input: Box::new(p),
            workers,
        });
    }
    if let Some(table) = partial_aggregate_table(&plan) {
        let table = table.clone();
        return choose(plan, &table, fraction, cx, finalize_over_gather);
    }
    let all = |p: Box<Plan>| Box::new(walk(*p, 1.0, cx));
    let same = |p: Box<Plan>| Box::new(walk(*p, fraction, cx));
    match plan {
        Plan::Project { input, exprs } => Plan::Project {
            input: same(input),
            exprs,
        },
        Plan::Filter { input, qual } => Plan::Filter {
            input: same(input),
            qual,
        },
        Plan::Limit {
            input,
            limit,
            offset,
            ties,
        } => {
            let rows = estimate(&input, cx.sizes, cx.settings).rows;
            let share = limit_share(&limit, &offset, rows);
            Plan::Limit {
                input: Box::new(walk(*input, fraction * share, cx)),
                limit,
                offset,
                ties,
            }
        }
        // A sort over a chain may sort in every participant under a
        // Gather Merge.
        Plan::Sort { input, keys } => match chain_table(&input).cloned() {
            Some(table) => {
                let sort = Plan::Sort { input, keys };
                choose(sort, &table, fraction, cx, |p, workers| Plan::Gather {
                    input: Box::new(p),
                    workers,
                })
            }
            None => Plan::Sort {
                input: all(input),
                keys,
            },
        },
        Plan::Aggregate {
            input,
            keys,
            aggs,
            sets,
        } => Plan::Aggregate {
            input: all(input),
            keys,
            aggs,
            sets,
        },
        Plan::WindowAgg {
            input,
            partition,
            order,
            frame,
            funcs,
        } => Plan::WindowAgg {
            input: all(input),
            partition,
            order,
            frame,
            funcs,
        },
        Plan::Distinct { input } => Plan::Distinct { input: all(input) },
        // The hash join reads its right input whole, once.
        Plan::HashJoin {
            left,
            right,
            kind,
            hash_cond,
            join_filter,
            right_width,
            left_width,
        } => Plan::HashJoin {
            left: all(left),
            right: all(right),
            kind,
            hash_cond,
            join_filter,
            right_width,
            left_width,
        },
        // A nested loop's right side runs again per left row: only its
        // left side may gather.
        Plan::NestedLoop {
            left,
            right,
            kind,
            on,
            right_width,
            left_width,
        } => Plan::NestedLoop {
            left: all(left),
            right,
            kind,
            on,
            right_width,
            left_width,
        },
        Plan::SetOp {
            left,
            right,
            op,
            all: every,
        } => Plan::SetOp {
            left: all(left),
            right: all(right),
            op,
            all: every,
        },
        other => other,
    }
}

/// The share of `rows` input rows a LIMIT reads: a constant count's, else
/// PostgreSQL's guess of a tenth.
fn limit_share(limit: &Option<Expr>, offset: &Option<Expr>, rows: f64) -> f64 {
    if matches!(limit, None | Some(Expr::Const(types::Value::Null, _))) {
        return 1.0;
    }
    super::cost::limit_bound(limit, offset).map_or(0.1, |b| (b / rows.max(1.0)).min(1.0))
}

/// The Finalize Aggregate over a Gather over `partial` (an Aggregate over
/// a chain): its keys are the partial rows' key columns.
fn finalize_over_gather(partial: Plan, workers: usize) -> Plan {
    let Plan::Aggregate { keys, aggs, .. } = &partial else {
        unreachable!("checked by partial_aggregate_table")
    };
    let final_keys = keys
        .iter()
        .enumerate()
        .map(|(i, k)| Expr::Column(i, k.data_type()))
        .collect();
    let aggs = aggs.clone();
    Plan::Aggregate {
        input: Box::new(Plan::Gather {
            input: Box::new(partial),
            workers,
        }),
        keys: final_keys,
        aggs,
        sets: None,
    }
}

/// Keeps `plan` or its parallel form (`parallel(plan, workers)`),
/// whichever costs less for the `fraction` of rows read.
fn choose(
    plan: Plan,
    table: &Arc<Table>,
    fraction: f64,
    cx: &PlannerContext,
    parallel: impl FnOnce(Plan, usize) -> Plan,
) -> Plan {
    let s = cx.settings;
    let workers = workers_for(cx.sizes.blocks(table) as f64, s);
    if workers == 0 {
        return plan;
    }
    let serial = estimate(&plan, cx.sizes, s);
    let candidate = parallel(plan, workers);
    if s.debug_parallel_query {
        return candidate;
    }
    let cost = |e: &Estimate| e.startup + (e.total - e.startup) * fraction;
    if cost(&estimate(&candidate, cx.sizes, s)) < cost(&serial) {
        candidate
    } else {
        undo(candidate)
    }
}

/// The serial plan a parallel candidate was made from.
fn undo(candidate: Plan) -> Plan {
    match candidate {
        Plan::Gather { input, .. } => *input,
        Plan::Aggregate { input, .. } => match *input {
            Plan::Gather { input, .. } => *input,
            _ => unreachable!("a candidate aggregate is over a Gather"),
        },
        _ => unreachable!("a candidate is a Gather or an Aggregate"),
    }
}

/// Workers for a scan of `pages` blocks (PostgreSQL's
/// compute_parallel_worker): none below min_parallel_table_scan_size, then
/// one more each time the table triples, at most
/// max_parallel_workers_per_gather.
pub fn workers_for(pages: f64, s: &PlannerSettings) -> usize {
    let max = s.max_parallel_workers_per_gather;
    let threshold = s.min_parallel_table_scan_blocks.max(1.0);
    if pages < threshold {
        return if s.debug_parallel_query {
            max.min(1)
        } else {
            0
        };
    }
    let mut workers = 1;
    let mut step = threshold;
    while pages >= step * 3.0 {
        workers += 1;
        step *= 3.0;
    }
    workers.min(max)
}

/// The table at the bottom of a parallel chain, if `plan` is one.
fn chain_table(plan: &Plan) -> Option<&Arc<Table>> {
    match plan {
        Plan::SeqScan {
            table,
            qual,
            tid: false,
            system,
            index: None,
            ..
        } if system.is_empty() && qual.iter().all(safe) => Some(table),
        Plan::Filter { input, qual } if safe(qual) => chain_table(input),
        Plan::Project { input, exprs } if exprs.iter().all(safe) => chain_table(input),
        _ => None,
    }
}

/// The table under an Aggregate that can be split into partial and
/// finalize steps over a parallel chain, if `plan` is one.
fn partial_aggregate_table(plan: &Plan) -> Option<&Arc<Table>> {
    match plan {
        Plan::Aggregate {
            input,
            keys,
            aggs,
            sets: None,
        } if keys.iter().all(safe) && aggs.iter().all(combinable) => chain_table(input),
        _ => None,
    }
}

fn safe(e: &Expr) -> bool {
    expr_hazard(e) == ParallelSafety::Safe
}

/// Whether partial states of `call` combine (exec's `AggAccumulator::combine`).
pub fn combinable(call: &AggCall) -> bool {
    use AggFunc::*;
    let func_ok = matches!(
        call.func,
        CountStar | Count | Sum | Avg | Min | Max | BoolAnd | BoolOr
    );
    func_ok
        && !call.distinct
        && call.order.is_empty()
        && call.args.iter().chain(&call.filter).all(safe)
}
