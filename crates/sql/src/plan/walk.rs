//! Walks over a plan: a node's inputs, and its expressions.

use super::Plan;
use crate::expr::Expr;

/// The expressions of one node (not its children's).
pub fn node_exprs(plan: &Plan) -> Vec<&Expr> {
    let mut out: Vec<&Expr> = Vec::new();
    match plan {
        Plan::SeqScan { qual, index, .. } => {
            out.extend(qual);
            if let Some(path) = index {
                for c in &path.conds {
                    out.extend(&c.values);
                    out.push(&c.clause);
                }
            }
        }
        Plan::Values { rows, .. } => out.extend(rows.iter().flatten()),
        Plan::Filter { qual, .. } => out.push(qual),
        Plan::Project { exprs, .. } => out.extend(exprs),
        Plan::ProjectSet { srfs, exprs, .. } => {
            out.extend(exprs);
            out.extend(srfs.iter().flat_map(|c| &c.args));
        }
        Plan::FunctionScan { calls, .. } => out.extend(calls.iter().flat_map(|c| &c.args)),
        Plan::NestedLoop { on, .. } | Plan::LateralJoin { on, .. } => out.extend(on),
        Plan::HashJoin {
            hash_cond,
            join_filter,
            ..
        } => out.extend(hash_cond.iter().chain(join_filter)),
        Plan::Aggregate { keys, aggs, .. } => {
            out.extend(keys.iter().chain(aggs.iter().flat_map(|a| a.input_exprs())))
        }
        Plan::WindowAgg { funcs, .. } => out.extend(funcs.iter().flat_map(|f| f.children())),
        Plan::Limit { limit, offset, .. } => out.extend(limit.iter().chain(offset)),
        Plan::SystemView { .. }
        | Plan::Sort { .. }
        | Plan::Distinct { .. }
        | Plan::LockRows { .. }
        | Plan::SetOp { .. }
        | Plan::CteScan { .. }
        | Plan::RecursiveUnion { .. }
        | Plan::WorkTableScan { .. }
        | Plan::ModifyingCteRows { .. }
        | Plan::Gather { .. } => {}
    }
    out
}

/// Whether `plan`, run as a subquery for a row, reads that row or an
/// enclosing query's: if not, every run in a statement gives the same rows
/// (PostgreSQL's InitPlan, run once).
pub fn reads_outer_rows(plan: &Plan) -> bool {
    reads_beyond(plan, 0)
}

/// Whether `plan` reads an outer row more than `levels` levels out.
fn reads_beyond(plan: &Plan, levels: usize) -> bool {
    if node_exprs(plan)
        .iter()
        .any(|e| expr_reads_beyond(e, levels))
    {
        return true;
    }
    match plan {
        // The right side runs with the left row pushed as one more level.
        Plan::LateralJoin { left, right, .. } => {
            reads_beyond(left, levels) || reads_beyond(right, levels + 1)
        }
        // A WITH query bound elsewhere counts its own outer rows.
        Plan::CteScan {
            outer_rows, plan, ..
        } => *outer_rows > 0 || reads_beyond(plan, levels),
        _ => children(plan).into_iter().any(|c| reads_beyond(c, levels)),
    }
}

fn expr_reads_beyond(e: &Expr, levels: usize) -> bool {
    let mut found = false;
    e.visit(&mut |x| {
        found |= match x {
            Expr::OuterColumn { depth, .. } => *depth > levels,
            Expr::ScalarSubquery(plan, _)
            | Expr::ArraySubquery(plan, _)
            | Expr::Exists { plan, .. }
            | Expr::InSubquery { plan, .. } => reads_beyond(plan, levels + 1),
            _ => false,
        }
    });
    found
}

/// A node's inputs, in EXPLAIN's order.
pub fn children(p: &Plan) -> Vec<&Plan> {
    match p {
        Plan::SeqScan { .. }
        | Plan::Values { .. }
        | Plan::FunctionScan { .. }
        | Plan::SystemView { .. } => Vec::new(),
        Plan::Filter { input, .. }
        | Plan::Project { input, .. }
        | Plan::ProjectSet { input, .. }
        | Plan::Aggregate { input, .. }
        | Plan::WindowAgg { input, .. }
        | Plan::Sort { input, .. }
        | Plan::Limit { input, .. }
        | Plan::LockRows { input, .. }
        | Plan::Gather { input, .. }
        | Plan::Distinct { input } => vec![input],
        Plan::NestedLoop { left, right, .. }
        | Plan::HashJoin { left, right, .. }
        | Plan::LateralJoin { left, right, .. }
        | Plan::SetOp { left, right, .. } => vec![left, right],
        Plan::CteScan { plan, .. } => vec![plan],
        Plan::RecursiveUnion {
            base, recursive, ..
        } => vec![base, recursive],
        Plan::WorkTableScan { .. } | Plan::ModifyingCteRows { .. } => Vec::new(),
    }
}

/// Mutable access to a node's inputs (those `children` lists).
pub(crate) fn children_mut(p: &mut Plan) -> Vec<&mut Plan> {
    match p {
        Plan::SeqScan { .. }
        | Plan::Values { .. }
        | Plan::FunctionScan { .. }
        | Plan::SystemView { .. }
        | Plan::WorkTableScan { .. }
        | Plan::ModifyingCteRows { .. } => Vec::new(),
        Plan::Filter { input, .. }
        | Plan::Project { input, .. }
        | Plan::ProjectSet { input, .. }
        | Plan::Aggregate { input, .. }
        | Plan::WindowAgg { input, .. }
        | Plan::Sort { input, .. }
        | Plan::Limit { input, .. }
        | Plan::LockRows { input, .. }
        | Plan::Gather { input, .. }
        | Plan::Distinct { input } => vec![input],
        Plan::NestedLoop { left, right, .. }
        | Plan::HashJoin { left, right, .. }
        | Plan::LateralJoin { left, right, .. }
        | Plan::SetOp { left, right, .. } => vec![left, right],
        Plan::CteScan { plan, .. } => vec![plan],
        Plan::RecursiveUnion {
            base, recursive, ..
        } => vec![base, recursive],
    }
}
