//! Which columns of a node's rows its parent reads, as the executor's
//! projection pushdown decodes them and the planner's index-only pass
//! predicts it: the two must agree, so both use these.

use crate::expr::Expr;

/// Which columns of a node's rows its parent reads: None, all of them. A
/// column no one reads may be NULL in the rows, and rows may end after the
/// last one read.
pub type Needed = Option<Vec<bool>>;

/// `base` plus the columns `exprs` read; None (all) when `base` is None or
/// an expression holds a subquery (which may read the whole row as its
/// outer row).
pub fn needed_with(base: Needed, exprs: &[&Expr]) -> Needed {
    let mut mask = base?;
    for e in exprs {
        if e.has_subquery() {
            return None;
        }
        e.visit(&mut |x| {
            if let Expr::Column(i, _) = x {
                mark(&mut mask, *i);
            }
        });
    }
    Some(mask)
}

/// Marks column `i` read.
pub fn mark(mask: &mut Vec<bool>, i: usize) {
    if mask.len() <= i {
        mask.resize(i + 1, false);
    }
    mask[i] = true;
}

/// A join's needed columns split into its left and right inputs'.
pub fn split_needed(all: &Needed, left_width: usize) -> (Needed, Needed) {
    match all {
        None => (None, None),
        Some(m) => (
            Some(m[..m.len().min(left_width)].to_vec()),
            Some(m.get(left_width..).unwrap_or(&[]).to_vec()),
        ),
    }
}

/// What a WindowAgg's input must provide: the parent's columns among the
/// input's (the rest are the calls' results), the partition and order
/// keys, and what the calls' arguments read.
pub fn window_needed(
    needed: Needed,
    input_width: usize,
    partition: &[usize],
    order: &[crate::plan::SortKey],
    funcs: &[crate::expr::WindowCall],
) -> Needed {
    let mut mask = needed?;
    mask.truncate(input_width);
    for &c in partition.iter().chain(order.iter().map(|k| &k.column)) {
        mark(&mut mask, c);
    }
    let args: Vec<&Expr> = funcs.iter().flat_map(|f| f.arguments()).collect();
    needed_with(Some(mask), &args)
}
