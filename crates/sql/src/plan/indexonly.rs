//! Index-only scans (PostgreSQL's check_index_only and the index-only
//! flavour of cost_index): once a query tree is planned, a walk from its
//! root works out which columns each table scan's parent reads, exactly as
//! the executor's projection pushdown will (`plan::needed`, which the executor uses too: a column
//! no one reads may be NULL in the rows). A scan whose needed columns,
//! filter and index conditions are all key columns of an index may read
//! its rows from the index entries, visiting the heap only for pages the
//! visibility map does not call all-visible: an index scan over such an
//! index becomes index-only, and a sequential scan becomes an index-only
//! scan of the cheapest covering index when that costs less (heap fetches
//! estimated as 1 - relallvisible / relpages of the index scan's).
//! `enable_indexonlyscan = off` leaves plans as they are.

use std::sync::Arc;

use catalog::{Index, Table};

use super::indexpath::{estimate_path, split_quals, IndexInfo};
use super::needed::{mark, needed_with, split_needed, Needed};
use super::{cost, IndexPath, Plan, PlannerContext};
use crate::expr::Expr;

/// Makes the scans of a planned query tree index-only where they can be;
/// its parent (a client, DML, a subquery's user) reads every column.
pub(crate) fn apply(plan: Plan, cx: &PlannerContext) -> Plan {
    if !cx.settings.enable_indexonlyscan {
        return plan;
    }
    walk(plan, None, cx)
}

fn walk(plan: Plan, needed: Needed, cx: &PlannerContext) -> Plan {
    let bx = |p: Box<Plan>, n: Needed| Box::new(walk(*p, n, cx));
    match plan {
        p @ Plan::SeqScan { .. } => scan(p, needed, cx),
        Plan::Filter { input, qual } => {
            let n = needed_with(needed, &[&qual]);
            Plan::Filter {
                input: bx(input, n),
                qual,
            }
        }
        Plan::Project { input, exprs } => {
            let refs: Vec<&Expr> = exprs.iter().collect();
            let n = needed_with(Some(Vec::new()), &refs);
            Plan::Project {
                input: bx(input, n),
                exprs,
            }
        }
        Plan::ProjectSet { input, srfs, exprs } => Plan::ProjectSet {
            input: bx(input, None),
            srfs,
            exprs,
        },
        // The right side reads the whole left row as its outer row.
        Plan::LateralJoin {
            left,
            right,
            kind,
            on,
            right_width,
            left_width,
        } => {
            let all = needed_with(needed, &on.iter().collect::<Vec<_>>());
            let (_, rn) = split_needed(&all, left_width);
            Plan::LateralJoin {
                left: bx(left, None),
                right: bx(right, rn),
                kind,
                on,
                right_width,
                left_width,
            }
        }
        Plan::NestedLoop {
            left,
            right,
            kind,
            on,
            right_width,
            left_width,
        } => {
            let all = needed_with(needed, &on.iter().collect::<Vec<_>>());
            let (ln, rn) = split_needed(&all, left_width);
            Plan::NestedLoop {
                left: bx(left, ln),
                right: bx(right, rn),
                kind,
                on,
                right_width,
                left_width,
            }
        }
        Plan::HashJoin {
            left,
            right,
            kind,
            hash_cond,
            join_filter,
            right_width,
            left_width,
        } => {
            let mut refs: Vec<&Expr> = hash_cond.iter().collect();
            refs.extend(join_filter.iter());
            let all = needed_with(needed, &refs);
            let (ln, rn) = split_needed(&all, left_width);
            Plan::HashJoin {
                left: bx(left, ln),
                right: bx(right, rn),
                kind,
                hash_cond,
                join_filter,
                right_width,
                left_width,
            }
        }
        Plan::Aggregate {
            input,
            keys,
            aggs,
            sets,
        } => {
            let mut refs: Vec<&Expr> = keys.iter().collect();
            for a in &aggs {
                refs.extend(a.input_exprs());
            }
            let n = needed_with(Some(Vec::new()), &refs);
            Plan::Aggregate {
                input: bx(input, n),
                keys,
                aggs,
                sets,
            }
        }
        Plan::WindowAgg {
            input,
            partition,
            order,
            frame,
            funcs,
        } => {
            let n = crate::plan::needed::window_needed(
                needed,
                input.width(),
                &partition,
                &order,
                &funcs,
            );
            Plan::WindowAgg {
                input: bx(input, n),
                partition,
                order,
                frame,
                funcs,
            }
        }
        Plan::Sort { input, keys } => {
            let n = needed.map(|mut m| {
                keys.iter().for_each(|k| mark(&mut m, k.column));
                m
            });
            Plan::Sort {
                input: bx(input, n),
                keys,
            }
        }
        Plan::Limit {
            input,
            limit,
            offset,
            ties,
        } => Plan::Limit {
            input: bx(input, needed),
            limit,
            offset,
            ties,
        },
        Plan::Distinct { input } => Plan::Distinct {
            input: bx(input, None),
        },
        Plan::LockRows { input, marks } => Plan::LockRows {
            input: bx(input, None),
            marks,
        },
        Plan::Gather { input, workers } => Plan::Gather {
            input: bx(input, needed),
            workers,
        },
        Plan::SetOp {
            left,
            right,
            op,
            all,
        } => Plan::SetOp {
            left: bx(left, None),
            right: bx(right, None),
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
            plan: bx(plan, None),
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
            base: bx(base, None),
            recursive: bx(recursive, None),
            distinct,
            width,
        },
        other @ (Plan::Values { .. }
        | Plan::WorkTableScan { .. }
        | Plan::ModifyingCteRows { .. }
        | Plan::SystemView { .. }
        | Plan::FunctionScan { .. }) => other,
    }
}

/// Whether every column `mask` marks is a key column of `index`.
fn covers(index: &Index, mask: &[bool]) -> bool {
    mask.iter()
        .enumerate()
        .filter(|(_, read)| **read)
        .all(|(c, _)| index.keys.iter().any(|k| k.attnum as usize == c + 1))
}

/// The columns of `table` a scan reads: its parent's, its filter's.
fn scan_columns(table: &Table, needed: Needed, qual: &[Expr]) -> Vec<bool> {
    let refs: Vec<&Expr> = qual.iter().collect();
    let mut mask = needed_with(needed, &refs).unwrap_or_else(|| vec![true; table.columns.len()]);
    mask.truncate(table.columns.len());
    mask
}

fn scan(plan: Plan, needed: Needed, cx: &PlannerContext) -> Plan {
    let Plan::SeqScan {
        table,
        qual,
        alias,
        tid,
        system,
        index,
    } = plan
    else {
        unreachable!("called on scans")
    };
    // A locking scan hands its rows' tids to LockRows, system columns come
    // from the row versions: they read the heap.
    if tid || !system.is_empty() {
        return Plan::SeqScan {
            table,
            qual,
            alias,
            tid,
            system,
            index,
        };
    }
    let mask = scan_columns(&table, needed, &qual);
    let (s, sizes) = (cx.settings, cx.sizes);
    let infos = || sizes.indexes(&table);
    let (qual, index) = match index {
        Some(path) if !path.index_only && covers(&path.index, &mask) => {
            match infos().into_iter().find(|i| i.index.oid == path.index.oid) {
                Some(info) => {
                    let estimate = estimate_path(&table, &info, &path.conds, &qual, sizes, s, true);
                    let path = IndexPath {
                        index_only: true,
                        estimate,
                        ..*path
                    };
                    (qual, Some(Box::new(path)))
                }
                None => (qual, Some(path)),
            }
        }
        Some(path) => (qual, Some(path)),
        // Index sizes are read only when some index could do.
        None if !sizes.index_defs(&table).iter().any(|i| covers(i, &mask)) => (qual, None),
        None => match cheapest_covering(&table, &qual, &mask, &infos(), cx) {
            Some((path, filter)) => (filter, Some(Box::new(path))),
            None => (qual, None),
        },
    };
    Plan::SeqScan {
        table,
        qual,
        alias,
        tid,
        system,
        index,
    }
}

/// The cheapest index-only scan of an index covering `mask` (bounded by
/// the quals it can serve, else over the whole index), if it costs less
/// than the sequential scan; with the quals left as its filter.
fn cheapest_covering(
    table: &Arc<Table>,
    quals: &[Expr],
    mask: &[bool],
    infos: &[IndexInfo],
    cx: &PlannerContext,
) -> Option<(IndexPath, Vec<Expr>)> {
    let (s, sizes) = (cx.settings, cx.sizes);
    let seq = cost::seq_scan(table, sizes, quals, s);
    let mut best: Option<(IndexPath, Vec<Expr>)> = None;
    for info in infos.iter().filter(|i| covers(&i.index, mask)) {
        let (conds, filter) =
            split_quals(quals, table, info).unwrap_or_else(|| (Vec::new(), quals.to_vec()));
        let estimate = estimate_path(table, info, &conds, &filter, sizes, s, true);
        let cheapest = best.as_ref().map_or(seq.total, |b| b.0.estimate.total);
        if estimate.total < cheapest {
            let path = IndexPath {
                index: Arc::clone(&info.index),
                conds,
                backward: false,
                index_only: true,
                estimate,
            };
            best = Some((path, filter));
        }
    }
    best
}
