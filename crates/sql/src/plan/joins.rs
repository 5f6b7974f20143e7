//! Join planning: a tree of inner joins and the filter over it is flattened
//! into relations and conjuncts, wherever they were written (WHERE or ON);
//! each conjunct runs at the lowest place that has all its columns (a scan's
//! qual, a join condition), and the join order and method are chosen by cost:
//! dynamic programming over subsets up to `join_collapse_limit` relations
//! (PostgreSQL's standard join search, without GEQO), greedy pairing above it.
//! Cartesian products are considered for a set of relations only when no
//! join clause connects any split of it.
//!
//! The joined row is the member relations' columns in join order; a final
//! projection restores the bound layout when the order differs.

use types::ops::BinaryOp;
use types::{DataType, TypeId};

use super::cost::{self, sides, Estimate, JoinMethod};
use super::planner::{
    and_of, has_subquery, into_conjuncts, plan_expr, plan_tree, simplify_not, PlannerContext,
};
use super::{indexpath, JoinKind, Plan};
use crate::expr::Expr;

/// One relation of a join problem.
struct Rel {
    plan: Plan,
    /// First column in the bound layout.
    offset: usize,
    width: usize,
    types: Vec<DataType>,
    est: Estimate,
}

/// A conjunct that references two or more relations.
struct JoinClause {
    expr: Expr,
    mask: u64,
}

/// A planned set of relations.
#[derive(Clone)]
struct Joined {
    plan: Plan,
    /// Member relations, in the order their columns appear.
    order: Vec<usize>,
    est: Estimate,
}

/// Collects the relations and quals of an inner join tree. `base` is where
/// `p`'s columns start in the whole tree's row: the quals of a join nested
/// on a right side are written over its own row, and are shifted to the
/// whole row. A nested tree whose quals hold subqueries (whose correlated
/// references read its own row) stays one relation, planned by itself.
fn flatten(
    p: Plan,
    base: usize,
    cx: &PlannerContext,
    rels: &mut Vec<(Plan, usize)>,
    quals: &mut Vec<Expr>,
) {
    let to_whole = |e: Expr| {
        let e = simplify_not(plan_expr(e, cx));
        if base == 0 {
            e
        } else {
            shift(e, &|i| i + base)
        }
    };
    match p {
        p if base > 0 && quals_read_subqueries(&p) => {
            let width = p.width();
            rels.push((plan_tree(p, cx), width));
        }
        Plan::Filter { input, qual } => {
            flatten(*input, base, cx, rels, quals);
            into_conjuncts(to_whole(qual), quals);
        }
        Plan::NestedLoop {
            left,
            right,
            kind: JoinKind::Inner,
            on,
            left_width,
            ..
        } => {
            flatten(*left, base, cx, rels, quals);
            flatten(*right, base + left_width, cx, rels, quals);
            if let Some(on) = on {
                into_conjuncts(to_whole(on), quals);
            }
        }
        // Planned once its quals are known (`plan_lateral`).
        lateral @ Plan::LateralJoin { .. } => {
            let width = lateral.width();
            rels.push((lateral, width));
        }
        other => {
            let width = other.width();
            rels.push((plan_tree(other, cx), width));
        }
    }
}

/// Whether an inner join tree's quals (those `flatten` would collect)
/// hold a subquery.
fn quals_read_subqueries(p: &Plan) -> bool {
    match p {
        Plan::Filter { input, qual } => has_subquery(qual) || quals_read_subqueries(input),
        Plan::NestedLoop {
            left,
            right,
            kind: JoinKind::Inner,
            on,
            ..
        } => {
            on.as_ref().is_some_and(has_subquery)
                || quals_read_subqueries(left)
                || quals_read_subqueries(right)
        }
        _ => false,
    }
}

/// Plans a LATERAL join `flatten` left as bound, with `quals` over its
/// output: those reading only left columns go below it into the left input
/// (as PostgreSQL pushes restrictions below a nested loop, so the right
/// side runs for fewer rows); the rest are returned.
fn plan_lateral(plan: Plan, quals: Vec<Expr>, cx: &PlannerContext) -> (Plan, Vec<Expr>) {
    let Plan::LateralJoin {
        left,
        right,
        kind,
        on,
        left_width,
        right_width,
    } = plan
    else {
        return (plan, quals);
    };
    let (below, rest): (Vec<Expr>, Vec<Expr>) = quals
        .into_iter()
        .partition(|q| q.columns_needed() <= left_width);
    // Quals on the right columns alone filter an inner join's right side;
    // above a LEFT join they must see its NULL-extended rows.
    let reads_left = |q: &Expr| {
        let mut any = false;
        q.visit(&mut |x| any |= matches!(x, Expr::Column(i, _) if *i < left_width));
        any
    };
    let (right_only, above): (Vec<Expr>, Vec<Expr>) = rest
        .into_iter()
        .partition(|q| kind == JoinKind::Inner && !reads_left(q) && !has_subquery(q));
    let left = match and_of(below) {
        Some(qual) => Plan::Filter { input: left, qual },
        None => *left,
    };
    let right_quals: Vec<Expr> = right_only
        .into_iter()
        .map(|q| shift(q, &|i| i - left_width))
        .collect();
    let right = match and_of(right_quals) {
        Some(qual) => Plan::Filter { input: right, qual },
        None => *right,
    };
    let on = on
        .map(|e| plan_expr(e, cx))
        .filter(|e| !matches!(e, Expr::Const(types::Value::Bool(true), _)));
    let planned = Plan::LateralJoin {
        left: Box::new(plan_tree(left, cx)),
        right: Box::new(plan_tree(right, cx)),
        kind,
        on,
        left_width,
        right_width,
    };
    (planned, above)
}

/// Shifts column references by `delta` (negative: towards 0).
fn shift(e: Expr, map: &dyn Fn(usize) -> usize) -> Expr {
    e.transform(&mut |x| {
        Ok(match x {
            Expr::Column(i, t) => Expr::Column(map(i), t),
            other => other,
        })
    })
    .expect("remapping columns cannot fail")
}

/// The relation that bound-layout column `i` belongs to.
fn rel_of(rels: &[Rel], i: usize) -> usize {
    rels.iter()
        .position(|r| i >= r.offset && i < r.offset + r.width)
        .expect("a column of the join problem")
}

fn column_mask(e: &Expr, rels: &[Rel]) -> u64 {
    let mut mask = 0u64;
    e.visit(&mut |x| {
        if let Expr::Column(i, _) = x {
            mask |= 1 << rel_of(rels, *i);
        }
    });
    mask
}

/// Adds quals of one relation to its plan: into a scan, else as a filter.
/// Cheaper quals run first (order_qual_clauses; stable, so equal costs keep
/// their written order).
fn attach_quals(plan: Plan, quals: Vec<Expr>, cx: &PlannerContext) -> Plan {
    let (plan, mut quals) = plan_lateral(plan, quals, cx);
    if quals.is_empty() {
        return plan;
    }
    if quals.len() > 1 {
        let mut costed: Vec<(f64, Expr)> = quals
            .into_iter()
            .map(|q| (cost::qual_cost(std::slice::from_ref(&q), cx.settings), q))
            .collect();
        costed.sort_by(|a, b| a.0.total_cmp(&b.0));
        quals = costed.into_iter().map(|(_, q)| q).collect();
    }
    match plan {
        Plan::SeqScan {
            table,
            mut qual,
            alias,
            tid,
            system,
            index: None,
        } => {
            qual.extend(quals);
            choose_access(
                Plan::SeqScan {
                    table,
                    qual,
                    alias,
                    tid,
                    system,
                    index: None,
                },
                cx,
            )
        }
        other => Plan::Filter {
            input: Box::new(other),
            qual: and_of(quals).unwrap(),
        },
    }
}

/// A table scan read through an index instead, when one of the table's
/// indexes serves its quals more cheaply (`indexpath.rs`).
pub(super) fn choose_access(scan: Plan, cx: &PlannerContext) -> Plan {
    let Plan::SeqScan {
        table,
        qual,
        alias,
        tid,
        system,
        index: None,
    } = scan
    else {
        return scan;
    };
    if !qual.is_empty() {
        let indexes = cx.sizes.indexes(&table);
        if !indexes.is_empty() {
            let seq = cost::seq_scan(&table, cx.sizes, &qual, cx.settings);
            if let Some((path, filter, _)) =
                indexpath::best_index_path(&table, &qual, &indexes, cx.sizes, cx.settings, &seq)
            {
                return Plan::SeqScan {
                    table,
                    qual: filter,
                    alias,
                    tid,
                    system,
                    index: Some(Box::new(path)),
                };
            }
        }
    }
    Plan::SeqScan {
        table,
        qual,
        alias,
        tid,
        system,
        index: None,
    }
}

pub(super) fn plan_join_problem(p: Plan, cx: &PlannerContext) -> Plan {
    let mut parts = Vec::new();
    let mut quals = Vec::new();
    flatten(p, 0, cx, &mut parts, &mut quals);
    if parts.len() == 1 {
        let (plan, _) = parts.pop().unwrap();
        return attach_quals(plan, quals, cx);
    }
    let mut rels = Vec::with_capacity(parts.len());
    let mut offset = 0;
    for (plan, width) in parts {
        let mut types = plan.column_types();
        types.resize(width, DataType::new(TypeId::Text));
        rels.push(Rel {
            plan,
            offset,
            width,
            types,
            est: Estimate {
                startup: 0.0,
                total: 0.0,
                rows: 0.0,
                width: 0,
            },
        });
        offset += width;
    }
    if rels.len() > 64 {
        // More relations than a mask holds: keep the written order.
        for rel in &mut rels {
            let plan = std::mem::replace(
                &mut rel.plan,
                Plan::Values {
                    rows: Vec::new(),
                    width: 0,
                },
            );
            rel.plan = plan_lateral(plan, Vec::new(), cx).0;
        }
        return written_order(rels, quals);
    }
    // Sort the conjuncts: per relation, across relations, or above all.
    let mut per_rel: Vec<Vec<Expr>> = (0..rels.len()).map(|_| Vec::new()).collect();
    let mut clauses = Vec::new();
    let mut top = Vec::new();
    for q in quals {
        let mask = column_mask(&q, &rels);
        if has_subquery(&q) || mask == 0 {
            top.push(q);
        } else if mask.count_ones() == 1 {
            let r = mask.trailing_zeros() as usize;
            let off = rels[r].offset;
            per_rel[r].push(shift(q, &|i| i - off));
        } else {
            clauses.push(JoinClause { expr: q, mask });
        }
    }
    for (rel, q) in rels.iter_mut().zip(per_rel) {
        let plan = std::mem::replace(
            &mut rel.plan,
            Plan::Values {
                rows: Vec::new(),
                width: 0,
            },
        );
        rel.plan = attach_quals(plan, q, cx);
        rel.est = cost::estimate(&rel.plan, cx.sizes, cx.settings);
    }
    let best = if rels.len() <= cx.settings.join_collapse_limit.max(1) {
        dynamic_search(&rels, &clauses, cx)
    } else {
        greedy_search(&rels, &clauses, cx)
    };
    finish(best, &rels, top)
}

/// Restores the bound column layout and adds the quals that run on top.
fn finish(best: Joined, rels: &[Rel], top: Vec<Expr>) -> Plan {
    let mut plan = best.plan;
    if best.order.windows(2).any(|w| w[0] > w[1]) {
        let mut start = vec![0; rels.len()];
        let mut pos = 0;
        for &r in &best.order {
            start[r] = pos;
            pos += rels[r].width;
        }
        let start = &start;
        let exprs = rels
            .iter()
            .enumerate()
            .flat_map(|(r, rel)| {
                rel.types
                    .iter()
                    .enumerate()
                    .map(move |(j, t)| (start[r] + j, *t))
            })
            .map(|(i, t)| Expr::Column(i, t))
            .collect();
        plan = Plan::Project {
            input: Box::new(plan),
            exprs,
        };
    }
    match and_of(top) {
        Some(q) => Plan::Filter {
            input: Box::new(plan),
            qual: q,
        },
        None => plan,
    }
}

fn written_order(rels: Vec<Rel>, quals: Vec<Expr>) -> Plan {
    let mut it = rels.into_iter();
    let first = it.next().unwrap();
    let mut width = first.width;
    let mut plan = first.plan;
    for r in it {
        plan = Plan::NestedLoop {
            left: Box::new(plan),
            right: Box::new(r.plan),
            kind: JoinKind::Inner,
            on: None,
            left_width: width,
            right_width: r.width,
        };
        width += r.width;
    }
    match and_of(quals) {
        Some(q) => Plan::Filter {
            input: Box::new(plan),
            qual: q,
        },
        None => plan,
    }
}

fn mask_of(order: &[usize]) -> u64 {
    order.iter().fold(0, |m, &r| m | 1 << r)
}

/// Whether a join clause connects the two sets.
fn connected(l: u64, r: u64, clauses: &[JoinClause]) -> bool {
    clauses
        .iter()
        .any(|c| c.mask & !(l | r) == 0 && c.mask & l != 0 && c.mask & r != 0)
}

fn dynamic_search(rels: &[Rel], clauses: &[JoinClause], cx: &PlannerContext) -> Joined {
    let n = rels.len();
    let full = (1u64 << n) - 1;
    let mut best: Vec<Option<Joined>> = vec![None; 1 << n];
    for (i, r) in rels.iter().enumerate() {
        best[1 << i] = Some(Joined {
            plan: r.plan.clone(),
            order: vec![i],
            est: r.est,
        });
    }
    // Subsets in order of size, so both halves of a split are done first.
    let mut masks: Vec<u64> = (1..=full).filter(|m| m.count_ones() >= 2).collect();
    masks.sort_by_key(|m| m.count_ones());
    for mask in masks {
        for cartesian in [false, true] {
            let mut paths: Vec<(u64, u64, JoinMethod, Estimate)> = Vec::new();
            // Each split once: the half with the lowest member is `l`.
            let low = mask & mask.wrapping_neg();
            let mut sub = (mask - 1) & mask;
            while sub != 0 {
                if sub & low != 0 {
                    let other = mask & !sub;
                    if cartesian || connected(sub, other, clauses) {
                        if let (Some(a), Some(b)) = (&best[sub as usize], &best[other as usize]) {
                            for (o, i, om, im) in [(a, b, sub, other), (b, a, other, sub)] {
                                for (method, est) in join_choices(o, i, rels, clauses, cx) {
                                    add_path(&mut paths, (om, im, method, est), |p| p.3);
                                }
                            }
                        }
                    }
                }
                sub = (sub - 1) & mask;
            }
            // Only the cheapest way gets a plan: candidates are costed
            // without copying their inputs' plans.
            if let Some((om, im, method, est)) = cheapest(paths, |p| p.3) {
                let (o, i) = (&best[om as usize], &best[im as usize]);
                let found = build_joined(
                    o.as_ref().expect("costed above"),
                    i.as_ref().expect("costed above"),
                    (method, est),
                    rels,
                    clauses,
                );
                best[mask as usize] = Some(found);
                break;
            }
        }
    }
    best[full as usize]
        .take()
        .expect("every set of relations can be joined")
}

fn greedy_search(rels: &[Rel], clauses: &[JoinClause], cx: &PlannerContext) -> Joined {
    let mut parts: Vec<Joined> = rels
        .iter()
        .enumerate()
        .map(|(i, r)| Joined {
            plan: r.plan.clone(),
            order: vec![i],
            est: r.est,
        })
        .collect();
    while parts.len() > 1 {
        let mut choice: Option<(bool, f64, usize, usize)> = None;
        for a in 0..parts.len() {
            for b in 0..parts.len() {
                if a == b {
                    continue;
                }
                let conn = connected(mask_of(&parts[a].order), mask_of(&parts[b].order), clauses);
                let (_, est) = best_choice(&parts[a], &parts[b], rels, clauses, cx);
                let better = match choice {
                    None => true,
                    Some((c, cost, ..)) => (conn && !c) || (conn == c && est.total < cost),
                };
                if better {
                    choice = Some((conn, est.total, a, b));
                }
            }
        }
        let (_, _, a, b) = choice.unwrap();
        let choice = best_choice(&parts[a], &parts[b], rels, clauses, cx);
        let j = build_joined(&parts[a], &parts[b], choice, rels, clauses);
        let (hi, lo) = (a.max(b), a.min(b));
        parts.remove(hi);
        parts.remove(lo);
        parts.push(j);
    }
    parts.pop().unwrap()
}

/// The cheapest way to join `outer` and `inner`, and its estimate.
fn best_choice(
    outer: &Joined,
    inner: &Joined,
    rels: &[Rel],
    clauses: &[JoinClause],
    cx: &PlannerContext,
) -> (JoinMethod, Estimate) {
    let mut paths = Vec::new();
    for c in join_choices(outer, inner, rels, clauses, cx) {
        add_path(&mut paths, c, |p| p.1);
    }
    cheapest(paths, |p| p.1).expect("a nested loop is always possible")
}

/// Whether `e` is an equality of a left and a right expression, usable as a
/// hash clause.
pub(super) fn is_hash_clause(e: &Expr, left_width: usize) -> bool {
    match e {
        Expr::Binary {
            op: BinaryOp::Eq,
            left,
            right,
            ..
        } => {
            let (a, b) = (sides(left, left_width), sides(right, left_width));
            !has_subquery(e)
                && matches!(
                    (a, b),
                    ((true, false), (false, true)) | ((false, true), (true, false))
                )
        }
        _ => false,
    }
}

/// The joined row of `outer` then `inner`: member order, the join clauses
/// that connect them (shifted to that row), and each side's width.
fn join_layout(
    outer: &Joined,
    inner: &Joined,
    rels: &[Rel],
    clauses: &[JoinClause],
) -> (Vec<usize>, Vec<Expr>, usize, usize) {
    let (lm, rm) = (mask_of(&outer.order), mask_of(&inner.order));
    let mut order = outer.order.clone();
    order.extend(&inner.order);
    let mut start = vec![0; rels.len()];
    let mut pos = 0;
    for &r in &order {
        start[r] = pos;
        pos += rels[r].width;
    }
    let left_width: usize = outer.order.iter().map(|&r| rels[r].width).sum();
    let right_width: usize = inner.order.iter().map(|&r| rels[r].width).sum();
    let map = |i: usize| {
        let r = rel_of(rels, i);
        start[r] + i - rels[r].offset
    };
    let quals: Vec<Expr> = clauses
        .iter()
        .filter(|c| c.mask & !(lm | rm) == 0 && c.mask & lm != 0 && c.mask & rm != 0)
        .map(|c| shift(c.expr.clone(), &map))
        .collect();
    (order, quals, left_width, right_width)
}

/// The ways to join `outer` and `inner` (a hash join, a nested loop), costed.
fn join_choices(
    outer: &Joined,
    inner: &Joined,
    rels: &[Rel],
    clauses: &[JoinClause],
    cx: &PlannerContext,
) -> Vec<(JoinMethod, Estimate)> {
    let (_, quals, left_width, _) = join_layout(outer, inner, rels, clauses);
    join_costs(
        &outer.plan,
        &outer.est,
        &inner.plan,
        &inner.est,
        JoinKind::Inner,
        &quals,
        left_width,
        cx,
    )
}

/// The plan of joining `outer` and `inner` by the chosen method, whose
/// estimate was made when the candidates were costed.
fn build_joined(
    outer: &Joined,
    inner: &Joined,
    (method, est): (JoinMethod, Estimate),
    rels: &[Rel],
    clauses: &[JoinClause],
) -> Joined {
    let (order, quals, left_width, right_width) = join_layout(outer, inner, rels, clauses);
    Joined {
        plan: build_join(
            method,
            outer.plan.clone(),
            inner.plan.clone(),
            JoinKind::Inner,
            quals,
            left_width,
            right_width,
        ),
        order,
        est,
    }
}

/// The costs of the ways to join two planned inputs under `quals`: a hash
/// join when some clause is an equality of the two sides, and a nested loop.
#[allow(clippy::too_many_arguments)]
fn join_costs(
    left: &Plan,
    l: &Estimate,
    right: &Plan,
    r: &Estimate,
    kind: JoinKind,
    quals: &[Expr],
    left_width: usize,
    cx: &PlannerContext,
) -> Vec<(JoinMethod, Estimate)> {
    let s = cx.settings;
    let sel = cost::join_selectivity(quals, left, right, left_width, cx.sizes, l, r);
    let (hash, filter): (Vec<Expr>, Vec<Expr>) = quals
        .iter()
        .cloned()
        .partition(|q| is_hash_clause(q, left_width));
    let mut costs = Vec::with_capacity(2);
    if !hash.is_empty() {
        costs.push((JoinMethod::Hash, {
            let bucket = cost::inner_bucket_fraction(&hash, right, left_width, cx.sizes, r.rows);
            cost::join_cost(JoinMethod::Hash, kind, l, r, &hash, &filter, sel, bucket, s)
        }));
    }
    costs.push((
        JoinMethod::NestedLoop,
        cost::join_cost(JoinMethod::NestedLoop, kind, l, r, &[], quals, sel, 1.0, s),
    ));
    costs
}

/// A join node of two planned inputs.
fn build_join(
    method: JoinMethod,
    left: Plan,
    right: Plan,
    kind: JoinKind,
    quals: Vec<Expr>,
    left_width: usize,
    right_width: usize,
) -> Plan {
    match method {
        JoinMethod::Hash => {
            let (hash, filter): (Vec<Expr>, Vec<Expr>) = quals
                .into_iter()
                .partition(|q| is_hash_clause(q, left_width));
            Plan::HashJoin {
                left: Box::new(left),
                right: Box::new(right),
                kind,
                hash_cond: hash
                    .into_iter()
                    .map(|h| outer_first(h, left_width))
                    .collect(),
                join_filter: and_of(filter),
                left_width,
                right_width,
            }
        }
        JoinMethod::NestedLoop => Plan::NestedLoop {
            left: Box::new(left),
            right: Box::new(right),
            kind,
            on: and_of(quals),
            left_width,
            right_width,
        },
    }
}

/// The ways to join the two planned inputs under `quals`, as plans.
#[allow(clippy::too_many_arguments)]
fn join_paths(
    left: Plan,
    l: &Estimate,
    right: Plan,
    r: &Estimate,
    kind: JoinKind,
    quals: Vec<Expr>,
    left_width: usize,
    right_width: usize,
    cx: &PlannerContext,
) -> Vec<(Plan, Estimate)> {
    join_costs(&left, l, &right, r, kind, &quals, left_width, cx)
        .into_iter()
        .map(|(method, est)| {
            let plan = build_join(
                method,
                left.clone(),
                right.clone(),
                kind,
                quals.clone(),
                left_width,
                right_width,
            );
            (plan, est)
        })
        .collect()
}

/// PostgreSQL's fuzz factor for comparing path costs (add_path).
const FUZZ: f64 = 1.01;

/// Keeps `new` among `paths` unless one of them dominates it, and drops the
/// ones it dominates (add_path): a path is dominated when it is fuzzily no
/// cheaper in total and costlier to start; of two fuzzily equal in both,
/// the exactly cheaper one stays.
fn add_path<T>(paths: &mut Vec<T>, new: T, est: impl Fn(&T) -> Estimate) {
    let n = est(&new);
    let mut keep_new = true;
    paths.retain(|old| {
        if !keep_new {
            return true;
        }
        let o = est(old);
        let new_worse_total = n.total > o.total * FUZZ;
        let old_worse_total = o.total > n.total * FUZZ;
        let new_worse_start = n.startup > o.startup * FUZZ;
        let old_worse_start = o.startup > n.startup * FUZZ;
        if new_worse_total {
            if !old_worse_start {
                keep_new = false;
            }
            true
        } else if old_worse_total {
            // The old one survives only as the faster starter.
            new_worse_start
        } else if new_worse_start {
            keep_new = false;
            true
        } else if old_worse_start {
            false
        } else if n.total < o.total || (n.total == o.total && n.startup < o.startup) {
            // Fuzzily equal: the exactly cheaper one stays (older on a tie).
            false
        } else {
            keep_new = false;
            true
        }
    });
    if keep_new {
        paths.push(new);
    }
}

/// The cheapest in total of the surviving paths.
fn cheapest<T>(paths: Vec<T>, est: impl Fn(&T) -> Estimate) -> Option<T> {
    paths
        .into_iter()
        .min_by(|a, b| est(a).total.total_cmp(&est(b).total))
}

/// A hash clause with its outer (left input) side first, as PostgreSQL
/// prints and evaluates it.
fn outer_first(e: Expr, left_width: usize) -> Expr {
    match e {
        Expr::Binary {
            op: BinaryOp::Eq,
            left,
            right,
            ty,
        } if sides(&left, left_width) == (false, true) => Expr::Binary {
            op: BinaryOp::Eq,
            left: right,
            right: left,
            ty,
        },
        other => other,
    }
}

/// An outer join as written: its sides are planned on their own; the join
/// method is chosen here, and which side is hashed or materialised (a LEFT
/// join runs as a RIGHT join with its inputs swapped, and the other way).
pub(super) fn plan_outer_join(
    left: Plan,
    right: Plan,
    kind: JoinKind,
    on: Option<Expr>,
    left_width: usize,
    right_width: usize,
    cx: &PlannerContext,
) -> Plan {
    let l = cost::estimate(&left, cx.sizes, cx.settings);
    let r = cost::estimate(&right, cx.sizes, cx.settings);
    let mut quals = Vec::new();
    if let Some(on) = on {
        into_conjuncts(on, &mut quals);
    }
    let swapped_kind = match kind {
        JoinKind::Left => JoinKind::Right,
        JoinKind::Right => JoinKind::Left,
        other => other,
    };
    // In the swapped join the right input's columns come first.
    let swap_map = |i: usize| {
        if i < left_width {
            i + right_width
        } else {
            i - left_width
        }
    };
    let swapped_quals: Vec<Expr> = quals.iter().map(|q| shift(q.clone(), &swap_map)).collect();
    let types = {
        let mut t = left.column_types();
        t.resize(left_width, DataType::new(TypeId::Text));
        let mut rt = right.column_types();
        rt.resize(right_width, DataType::new(TypeId::Text));
        t.extend(rt);
        t
    };
    let mut paths: Vec<(Plan, Estimate, bool)> = Vec::new();
    let written = join_paths(
        left.clone(),
        &l,
        right.clone(),
        &r,
        kind,
        quals,
        left_width,
        right_width,
        cx,
    );
    let swapped = join_paths(
        right,
        &r,
        left,
        &l,
        swapped_kind,
        swapped_quals,
        right_width,
        left_width,
        cx,
    );
    for (p, e) in written {
        add_path(&mut paths, (p, e, false), |x| x.1);
    }
    for (p, e) in swapped {
        add_path(&mut paths, (p, e, true), |x| x.1);
    }
    let (plan, _, is_swapped) = cheapest(paths, |x| x.1).expect("a nested loop is always possible");
    if !is_swapped {
        return plan;
    }
    // Back to the written layout: the swapped join puts the right columns first.
    let exprs = (0..left_width + right_width)
        .map(|i| Expr::Column(swap_map(i), types[i]))
        .collect();
    Plan::Project {
        input: Box::new(plan),
        exprs,
    }
}
