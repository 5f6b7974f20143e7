//! EXPLAIN's text format, laid out as PostgreSQL's `explain.c` does: node
//! lines with `->  ` arrows, details six columns further in, costs from
//! `cost.rs`, actual figures from the executor's per-node counters, and
//! expressions deparsed as `ruleutils.c` prints them (columns qualified by
//! their relation when the query reads more than one).
//!
//! Plan nodes PostgreSQL does not show (projections) are looked through; a
//! hash join's build side is shown under a `Hash` node and a nested loop's
//! inner side under `Materialize`, which is what the executor does with them.

mod json;

use std::collections::HashMap;
use std::fmt::Write;

pub use super::walk::children;
pub use json::{buffer_fields, J};
use std::time::Duration;

use types::io::to_text;
use types::{IoSettings, TypeId, Value};

use super::cost::{estimate, Estimate, PlannerSettings, RelationSizes};
use super::{ExplainOptions, JoinKind, Plan, SetOpKind, SortKey, SystemColumn, ViewScan};
use crate::expr::{AggCall, AggFunc, Expr, SysFunc};

/// What the executor counted for one plan node (EXPLAIN ANALYZE).
#[derive(Debug, Clone, Default)]
pub struct NodeStats {
    /// Times the node was started.
    pub loops: u64,
    /// Rows it returned, over all loops.
    pub rows: u64,
    /// Time to its first row, summed over loops.
    pub first_row: Duration,
    /// Time inside the node (its inputs included), summed over loops.
    pub total: Duration,
    /// Rows its filter rejected.
    pub removed_by_filter: u64,
    /// Index-only scans: entries whose heap page was visited.
    pub heap_fetches: u64,
    /// Lines the executor adds under the node (`Sort Method`, ...), in order.
    pub details: Vec<(String, String)>,
    /// Lines for the node's Hash line (a hash join's `Buckets`).
    pub inner_details: Vec<(String, String)>,
    /// Blocks the node and its inputs touched (EXPLAIN's BUFFERS).
    pub buffers: common::BufferUsage,
}

impl NodeStats {
    /// Adds another participant's counts of the same node (a parallel
    /// worker's): rows, loops and times add up, as PostgreSQL sums its
    /// workers' instrumentation into the leader's.
    pub fn add(&mut self, other: &NodeStats) {
        self.loops += other.loops;
        self.rows += other.rows;
        self.first_row += other.first_row;
        self.total += other.total;
        self.removed_by_filter += other.removed_by_filter;
        self.heap_fetches += other.heap_fetches;
        self.buffers += other.buffers;
        if self.details.is_empty() {
            self.details = other.details.clone();
        }
    }

    /// Rows removed by a filter, per loop, as PostgreSQL prints them (a
    /// Parallel Seq Scan's loops are its participants).
    pub fn removed_per_loop(&self) -> String {
        format!(
            "{:.0}",
            self.removed_by_filter as f64 / self.loops.max(1) as f64
        )
    }
}

/// Per-node counters keyed by the node's address (`node_key`).
pub type PlanStats = HashMap<usize, NodeStats>;

/// The key of a plan node in `PlanStats`.
pub fn node_key(p: &Plan) -> usize {
    p as *const Plan as usize
}

pub struct Explainer<'a> {
    pub options: &'a ExplainOptions,
    pub sizes: &'a dyn RelationSizes,
    pub settings: &'a PlannerSettings,
    pub stats: Option<&'a PlanStats>,
    /// How constants print (a timestamptz in the session's TimeZone).
    pub io: &'a IoSettings,
    /// Qualify column names (the query reads more than one relation).
    prefix: bool,
    /// Each scan's name in the output: its alias, made unique as
    /// ruleutils does (`pair`, `pair_1`).
    names: HashMap<usize, String>,
    lines: Vec<String>,
    /// The working tables of the RecursiveUnions being printed, with their
    /// estimated rows (`cost::WorkTableSizes`).
    worktables: std::cell::RefCell<Vec<(usize, f64)>>,
    /// Inside a Gather: its participants' share of the work
    /// (`cost::parallel_divisor`), so nodes below print one participant's
    /// estimate, as PostgreSQL prints partial paths.
    parallel: std::cell::Cell<Option<f64>>,
    /// Below a LIMIT with a constant count: the rows a Sort there keeps
    /// (PostgreSQL costs it as a bounded heap).
    bound: std::cell::Cell<Option<f64>>,
    /// Extra indentation of a CTE's plan under its `CTE name` line.
    shift: usize,
    /// The statement's CTEs were printed (under its top node).
    ctes_printed: bool,
}

fn assign_names(p: &Plan, used: &mut Vec<String>, names: &mut HashMap<usize, String>) {
    assign_names_in(p, used, names, &mut Vec::new());
}

/// `assign_names`, `ctes` holding each CTE's first copy: the copies in its
/// other references get the same names (EXPLAIN shows one of them).
fn assign_names_in<'p>(
    p: &'p Plan,
    used: &mut Vec<String>,
    names: &mut HashMap<usize, String>,
    ctes: &mut Vec<(usize, &'p Plan)>,
) {
    let base = match p {
        Plan::SeqScan { table, alias, .. } => Some(alias.as_ref().unwrap_or(&table.name)),
        Plan::SystemView { scan, alias, .. } => Some(alias.as_ref().unwrap_or(scan.source())),
        Plan::CteScan { name, alias, .. } | Plan::WorkTableScan { name, alias, .. } => {
            Some(alias.as_ref().unwrap_or(name))
        }
        _ => None,
    };
    if let Some(base) = base {
        let base = base.clone();
        let mut name = base.clone();
        let mut n = 0;
        while used.contains(&name) {
            n += 1;
            name = format!("{base}_{n}");
        }
        used.push(name.clone());
        names.insert(node_key(p), name);
    }
    if let Plan::CteScan { id, plan, .. } = p {
        if let Some((_, first)) = ctes.iter().find(|(i, _)| i == id) {
            mirror_names(first, plan, names);
        } else {
            ctes.push((*id, plan));
            assign_names_in(plan, used, names, ctes);
        }
        return;
    }
    for c in children(p) {
        assign_names_in(c, used, names, ctes);
    }
}

/// Gives `copy`'s nodes the names of `first`'s (the same plan).
fn mirror_names(first: &Plan, copy: &Plan, names: &mut HashMap<usize, String>) {
    if let Some(n) = names.get(&node_key(first)).cloned() {
        names.insert(node_key(copy), n);
    }
    for (a, b) in children(first).into_iter().zip(children(copy)) {
        mirror_names(a, b, names);
    }
}

/// The `"Plan"` object of EXPLAIN (FORMAT JSON) for a plan.
pub fn explain_json(
    plan: &Plan,
    options: &ExplainOptions,
    sizes: &dyn RelationSizes,
    settings: &PlannerSettings,
    stats: Option<&PlanStats>,
    io: &IoSettings,
) -> J {
    let mut names = HashMap::new();
    assign_names(plan, &mut Vec::new(), &mut names);
    let e = Explainer {
        options,
        sizes,
        settings,
        stats,
        io,
        prefix: count_relations(plan) > 1,
        names,
        lines: Vec::new(),
        worktables: Default::default(),
        parallel: Default::default(),
        bound: Default::default(),
        shift: 0,
        ctes_printed: false,
    };
    e.json_node(plan, None, Vec::new())
}

/// EXPLAIN's text line of buffer counts (`Buffers: shared hit=4 read=2,
/// temp read=3 written=3`, parts with only zeros left out), or None when
/// every count is zero, as PostgreSQL's show_buffer_usage prints it.
pub fn buffers_text(b: &common::BufferUsage) -> Option<String> {
    let group = |name: &str, parts: &[(&str, u64)]| {
        let mut s = format!(" {name}");
        for (k, v) in parts {
            if *v > 0 {
                let _ = write!(s, " {k}={v}");
            }
        }
        parts.iter().any(|(_, v)| *v > 0).then_some(s)
    };
    let groups: Vec<String> = [
        group(
            "shared",
            &[
                ("hit", b.shared_hit),
                ("read", b.shared_read),
                ("dirtied", b.shared_dirtied),
                ("written", b.shared_written),
            ],
        ),
        group(
            "local",
            &[
                ("hit", b.local_hit),
                ("read", b.local_read),
                ("dirtied", b.local_dirtied),
                ("written", b.local_written),
            ],
        ),
        group(
            "temp",
            &[("read", b.temp_read), ("written", b.temp_written)],
        ),
    ]
    .into_iter()
    .flatten()
    .collect();
    (!groups.is_empty()).then(|| format!("Buffers:{}", groups.join(",")))
}

/// Lines of EXPLAIN output for a plan.
pub fn explain_plan(
    plan: &Plan,
    options: &ExplainOptions,
    sizes: &dyn RelationSizes,
    settings: &PlannerSettings,
    stats: Option<&PlanStats>,
    io: &IoSettings,
) -> Vec<String> {
    let mut names = HashMap::new();
    assign_names(plan, &mut Vec::new(), &mut names);
    let mut e = Explainer {
        options,
        sizes,
        settings,
        stats,
        io,
        prefix: count_relations(plan) > 1,
        names,
        lines: Vec::new(),
        worktables: Default::default(),
        parallel: Default::default(),
        bound: Default::default(),
        shift: 0,
        ctes_printed: false,
    };
    e.node(plan, 0, Vec::new());
    e.lines
}

/// Quals as EXPLAIN prints a filter (`(a > 1)`), their columns named by
/// `labels` (ModifyTable's `Conflict Filter`).
pub fn qual_text(
    quals: &[Expr],
    labels: &[String],
    options: &ExplainOptions,
    sizes: &dyn RelationSizes,
    settings: &PlannerSettings,
    io: &IoSettings,
) -> String {
    let e = Explainer {
        options,
        sizes,
        settings,
        stats: None,
        io,
        prefix: true,
        names: HashMap::new(),
        lines: Vec::new(),
        worktables: Default::default(),
        parallel: Default::default(),
        bound: Default::default(),
        shift: 0,
        ctes_printed: true,
    };
    e.qual_text(&quals.iter().collect::<Vec<_>>(), labels)
}

fn count_relations(p: &Plan) -> usize {
    let own = match p {
        Plan::SeqScan { .. }
        | Plan::FunctionScan { .. }
        | Plan::SystemView { .. }
        | Plan::CteScan { .. }
        | Plan::WorkTableScan { .. } => 1,
        Plan::ModifyingCteRows { .. } => 0,
        Plan::Values { rows, width } if !(rows.len() == 1 && *width == 0) => 1,
        _ => 0,
    };
    if matches!(p, Plan::CteScan { .. }) {
        // The CTE's own relations are another query's.
        return own;
    }
    own + children(p)
        .iter()
        .map(|c| count_relations(c))
        .sum::<usize>()
}

/// The inputs of a UNION ALL chain, nested ones flattened.
fn append_inputs<'p>(p: &'p Plan, out: &mut Vec<&'p Plan>) {
    match p {
        Plan::SetOp {
            left,
            right,
            op: SetOpKind::Union,
            all: true,
        } => {
            append_inputs(left, out);
            append_inputs(right, out);
        }
        other => out.push(other),
    }
}

/// The CTEs computed apart that `root` reads, in the order they were
/// written, each once: every reference carries the CTE's plan, and the one
/// shown is the copy that ran (under ANALYZE a shared CTE runs in whichever
/// reference is read first), else the first reference's.
pub(crate) fn statement_ctes<'p>(
    root: &'p Plan,
    stats: Option<&PlanStats>,
) -> Vec<(&'p str, &'p Plan)> {
    fn collect<'p>(p: &'p Plan, out: &mut Vec<(usize, &'p str, &'p Plan)>) {
        if let Plan::CteScan { id, name, plan, .. } = p {
            out.push((*id, name, plan));
        }
        for c in children(p) {
            collect(c, out);
        }
    }
    let ran = |p: &Plan| stats.is_some_and(|s| s.contains_key(&node_key(first_shown(p))));
    let mut all = Vec::new();
    collect(root, &mut all);
    let mut ctes: Vec<(usize, &str, &Plan)> = Vec::new();
    for (id, name, plan) in all {
        match ctes.iter_mut().find(|(i, _, _)| *i == id) {
            Some(seen) if !ran(seen.2) && ran(plan) => seen.2 = plan,
            Some(_) => {}
            None => ctes.push((id, name, plan)),
        }
    }
    ctes.sort_by_key(|(id, _, _)| *id);
    // A data-modifying WITH query is its statement's: EXPLAIN prints it
    // from the BoundStatement.
    ctes.into_iter()
        .filter(|(_, _, p)| !matches!(p, Plan::ModifyingCteRows { .. }))
        .map(|(_, n, p)| (n, p))
        .collect()
}

/// The node EXPLAIN prints for `p` (projections and filters looked through).
fn first_shown(p: &Plan) -> &Plan {
    match p {
        Plan::Project { input, .. } | Plan::Filter { input, .. } => first_shown(input),
        other => other,
    }
}

/// A detail line under a node: `Filter: (a > 1)`.
struct Detail(String, String);

impl Explainer<'_> {
    /// `p`'s estimate, a working table being read inside its recursive term.
    fn estimate(&self, p: &Plan) -> Estimate {
        let bound = self.bound.get();
        if let Some(divisor) = self.parallel.get() {
            return super::cost::partial_estimate(p, divisor, bound, self.sizes, self.settings);
        }
        if bound.is_some() && self.worktables.borrow().is_empty() {
            return super::cost::estimate_bounded(p, bound, self.sizes, self.settings);
        }
        let tables = self.worktables.borrow();
        if tables.is_empty() {
            return estimate(p, self.sizes, self.settings);
        }
        let sizes = super::cost::WorkTableSizes {
            inner: self.sizes,
            tables: tables.clone(),
        };
        estimate(p, &sizes, self.settings)
    }

    /// Before printing `p`'s inputs: a RecursiveUnion's working table gets
    /// its estimate (popped after them when this returns true).
    fn enter_recursion(&self, p: &Plan) -> bool {
        let Plan::RecursiveUnion { id, base, .. } = p else {
            return false;
        };
        let rows = super::cost::worktable_rows(self.estimate(base).rows);
        self.worktables.borrow_mut().push((*id, rows));
        true
    }

    /// Before printing `p`'s inputs: below a Gather they estimate as one
    /// participant; below a LIMIT a Sort (through a Gather Merge) is
    /// bounded. Returns the settings to restore after them (`leave`).
    fn enter_children(&self, p: &Plan) -> (Option<f64>, Option<f64>) {
        let outside = (self.parallel.get(), self.bound.get());
        if let Plan::Gather { workers, .. } = p {
            let leader = self.settings.parallel_leader_participation;
            let divisor = super::cost::parallel_divisor(*workers, leader);
            self.parallel.set(Some(divisor));
        }
        self.bound.set(match p {
            Plan::Limit { limit, offset, .. } => super::cost::limit_bound(limit, offset),
            Plan::Gather { .. } => outside.1,
            _ => None,
        });
        outside
    }

    /// Restores what `enter_children` changed.
    fn leave(&self, outside: (Option<f64>, Option<f64>)) {
        self.parallel.set(outside.0);
        self.bound.set(outside.1);
    }

    fn indent(&self, depth: usize) -> String {
        " ".repeat(self.shift + if depth == 0 { 0 } else { 6 * (depth - 1) + 2 })
    }

    /// Prints `p` (looking through projections and upper filters, whose
    /// quals become `extra` details of the node below).
    fn node(&mut self, p: &Plan, depth: usize, mut extra: Vec<Detail>) {
        match p {
            Plan::Project { input, .. } => return self.node(input, depth, extra),
            Plan::Filter { input, qual } => {
                let labels = self.labels(input);
                let text = self.qual_text(&[qual], &labels);
                let mut d = vec![Detail("Filter".into(), text)];
                if let Some(st) = self.stats.and_then(|s| s.get(&node_key(p))) {
                    d.push(Detail(
                        "Rows Removed by Filter".into(),
                        st.removed_per_loop(),
                    ));
                }
                d.extend(extra);
                extra = d;
                return self.node(input, depth, extra);
            }
            _ => {}
        }
        let (name, mut details, kids) = self.describe(p);
        details.extend(extra);
        let est = self.estimate(p);
        let stats = self.stats.map(|s| s.get(&node_key(p)));
        if let Some(Some(st)) = stats {
            details.extend(st.details.iter().map(|(k, v)| Detail(k.clone(), v.clone())));
        }
        self.line(depth, &name, &est, stats);
        let pad = " ".repeat(self.shift + 6 * depth + 2);
        for Detail(k, v) in details {
            self.lines.push(format!("{pad}{k}: {v}"));
        }
        self.buffers_line(&pad, stats.flatten());
        if depth == 0 && !self.ctes_printed {
            self.ctes_printed = true;
            self.cte_blocks(p, &pad);
        }
        let in_recursion = self.enter_recursion(p);
        let outside = self.enter_children(p);
        for k in kids {
            match k {
                Child::Plain(c) => self.node(c, depth + 1, Vec::new()),
                Child::Wrapped(label, c, st) => {
                    // Hash / Materialize: shown with the figures of what they hold.
                    let est = self.estimate(c);
                    let est = Estimate {
                        startup: est.total,
                        ..est
                    };
                    let stats = self.stats.map(|_| st.as_deref());
                    self.line(depth + 1, label, &est, stats);
                    let pad = " ".repeat(self.shift + 6 * (depth + 1) + 2);
                    for (k, v) in st.iter().flat_map(|s| &s.inner_details) {
                        self.lines.push(format!("{pad}{k}: {v}"));
                    }
                    self.buffers_line(&pad, st.as_deref());
                    self.node(c, depth + 2, Vec::new());
                }
            }
        }
        if in_recursion {
            self.worktables.borrow_mut().pop();
        }
        self.leave(outside);
    }

    /// The `CTE name` blocks of the CTEs computed apart (as PostgreSQL
    /// prints their subplans under the query's top node), in the order
    /// they were written; each plan printed where its first reference is.
    fn cte_blocks(&mut self, root: &Plan, pad: &str) {
        for (name, plan) in statement_ctes(root, self.stats) {
            self.lines.push(format!("{pad}CTE {}", quote_ident(name)));
            let saved = self.shift;
            self.shift = pad.len();
            self.node(plan, 1, Vec::new());
            self.shift = saved;
        }
    }

    /// The node's `Buffers:` line (EXPLAIN (ANALYZE, BUFFERS)).
    fn buffers_line(&mut self, pad: &str, stats: Option<&NodeStats>) {
        if let Some(st) = stats.filter(|_| self.options.buffers) {
            if let Some(text) = buffers_text(&st.buffers) {
                self.lines.push(format!("{pad}{text}"));
            }
        }
    }

    fn line(
        &mut self,
        depth: usize,
        name: &str,
        est: &Estimate,
        stats: Option<Option<&NodeStats>>,
    ) {
        let mut s = self.indent(depth);
        if depth > 0 {
            s.push_str("->  ");
        }
        s.push_str(name);
        if self.options.costs {
            let _ = write!(
                s,
                "  (cost={:.2}..{:.2} rows={:.0} width={})",
                est.startup, est.total, est.rows, est.width
            );
        }
        if let Some(st) = stats {
            s.push(' ');
            match st {
                None => s.push_str("(never executed)"),
                Some(st) => {
                    let loops = st.loops.max(1) as f64;
                    let rows = st.rows as f64 / loops;
                    if self.options.timing {
                        let ms = |d: Duration| d.as_secs_f64() * 1000.0 / loops;
                        let _ = write!(
                            s,
                            "(actual time={:.3}..{:.3} rows={:.0} loops={})",
                            ms(st.first_row),
                            ms(st.total),
                            rows,
                            st.loops
                        );
                    } else {
                        let _ = write!(s, "(actual rows={:.0} loops={})", rows, st.loops);
                    }
                }
            }
        }
        self.lines.push(s);
    }

    fn describe<'p>(&self, p: &'p Plan) -> (String, Vec<Detail>, Vec<Child<'p>>) {
        let removed = |d: &mut Vec<Detail>| {
            if let Some(st) = self.stats.and_then(|s| s.get(&node_key(p))) {
                d.push(Detail(
                    "Rows Removed by Filter".into(),
                    st.removed_per_loop(),
                ));
            }
        };
        match p {
            Plan::SeqScan {
                table,
                qual,
                tid,
                system,
                index: Some(path),
                ..
            } => {
                let dir = if path.backward { " Backward" } else { "" };
                let only = if path.index_only { " Only" } else { "" };
                let mut name = format!(
                    "Index{only} Scan{dir} using {} on {}",
                    quote_ident(&path.index.name),
                    quote_ident(&table.name)
                );
                if let Some(a) = self.names.get(&node_key(p)).filter(|a| **a != table.name) {
                    let _ = write!(name, " {}", quote_ident(a));
                }
                let labels = scan_labels(table, *tid, system);
                let conds: Vec<&Expr> = path.conds.iter().map(|c| &c.clause).collect();
                let mut d = Vec::new();
                if !conds.is_empty() {
                    d.push(Detail("Index Cond".into(), self.qual_text(&conds, &labels)));
                }
                if !qual.is_empty() {
                    let refs: Vec<&Expr> = qual.iter().collect();
                    d.push(Detail("Filter".into(), self.qual_text(&refs, &labels)));
                    removed(&mut d);
                }
                if path.index_only {
                    if let Some(st) = self.stats.and_then(|s| s.get(&node_key(p))) {
                        d.push(Detail("Heap Fetches".into(), st.heap_fetches.to_string()));
                    }
                }
                (name, d, Vec::new())
            }
            Plan::SeqScan {
                table,
                qual,
                tid,
                system,
                ..
            } => {
                let parallel = if self.parallel.get().is_some() {
                    "Parallel "
                } else {
                    ""
                };
                let mut name = format!("{parallel}Seq Scan on {}", quote_ident(&table.name));
                if let Some(a) = self.names.get(&node_key(p)).filter(|a| **a != table.name) {
                    let _ = write!(name, " {}", quote_ident(a));
                }
                let mut d = Vec::new();
                if !qual.is_empty() {
                    let labels = scan_labels(table, *tid, system);
                    let refs: Vec<&Expr> = qual.iter().collect();
                    d.push(Detail("Filter".into(), self.qual_text(&refs, &labels)));
                    removed(&mut d);
                }
                (name, d, Vec::new())
            }
            Plan::Values { rows, .. } => {
                // PostgreSQL plans a one-row VALUES as a Result.
                if rows.len() == 1 {
                    ("Result".into(), Vec::new(), Vec::new())
                } else {
                    ("Values Scan on \"*VALUES*\"".into(), Vec::new(), Vec::new())
                }
            }
            Plan::FunctionScan { calls, alias, .. } => {
                let source = match calls.as_slice() {
                    [one] => one.name.as_str(),
                    _ => "\"ROWS FROM\"",
                };
                let mut name = format!("Function Scan on {source}");
                if let Some(a) = alias.as_deref().filter(|a| *a != source) {
                    let _ = write!(name, " {}", quote_ident(a));
                }
                (name, Vec::new(), Vec::new())
            }
            Plan::SystemView { scan, .. } => {
                let (kind, source) = match scan {
                    ViewScan::Relation(r) => ("Seq Scan", r),
                    ViewScan::Function(f) => ("Function Scan", f),
                };
                let mut name = format!("{kind} on {}", quote_ident(source));
                if let Some(a) = self.names.get(&node_key(p)).filter(|a| *a != source) {
                    let _ = write!(name, " {}", quote_ident(a));
                }
                (name, Vec::new(), Vec::new())
            }
            Plan::ProjectSet { input, .. } => {
                ("ProjectSet".into(), Vec::new(), vec![Child::Plain(input)])
            }
            Plan::NestedLoop {
                left,
                right,
                kind,
                on,
                ..
            } => {
                let d = self.nested_loop_details(p, left, right, on.as_ref());
                let name = format!("Nested Loop{}", join_suffix(*kind));
                // The materialised rows are read again for every outer row.
                let mat = self.stat(right).map(|r| {
                    let outer = self.stat(left).map_or(0, |l| l.rows);
                    NodeStats {
                        loops: outer,
                        rows: r.rows * outer,
                        inner_details: Vec::new(),
                        ..r.clone()
                    }
                });
                (
                    name,
                    d,
                    vec![
                        Child::Plain(left),
                        Child::Wrapped("Materialize", right, mat.map(Box::new)),
                    ],
                )
            }
            // The right side runs again for each left row: no Materialize.
            Plan::LateralJoin {
                left,
                right,
                kind,
                on,
                ..
            } => {
                let d = self.nested_loop_details(p, left, right, on.as_ref());
                let name = format!("Nested Loop{}", join_suffix(*kind));
                (name, d, vec![Child::Plain(left), Child::Plain(right)])
            }
            Plan::HashJoin {
                left,
                right,
                kind,
                hash_cond,
                join_filter,
                ..
            } => {
                let labels = self.join_labels(left, right);
                let refs: Vec<&Expr> = hash_cond.iter().collect();
                let mut d = vec![Detail("Hash Cond".into(), self.qual_text(&refs, &labels))];
                if let Some(f) = join_filter {
                    d.push(Detail("Join Filter".into(), self.qual_text(&[f], &labels)));
                    self.removed_by_join_filter(p, &mut d);
                }
                let name = match kind {
                    JoinKind::Inner => "Hash Join".to_string(),
                    k => format!("Hash{}", join_suffix(*k)),
                };
                // The Hash line: the inner input's figures, the join's table.
                let hash = self.stat(right).map(|r| NodeStats {
                    inner_details: self
                        .stat(p)
                        .map(|j| j.inner_details.clone())
                        .unwrap_or_default(),
                    ..r.clone()
                });
                (
                    name,
                    d,
                    vec![
                        Child::Plain(left),
                        Child::Wrapped("Hash", right, hash.map(Box::new)),
                    ],
                )
            }
            Plan::Aggregate {
                input, keys, sets, ..
            } => {
                let labels = self.labels(input);
                let text: Vec<String> = keys.iter().map(|k| self.deparse(k, &labels)).collect();
                let (name, lines) = aggregate_shape(&text, sets.as_deref());
                let details = lines
                    .into_iter()
                    .map(|(label, keys)| Detail(label.into(), keys.join(", ")))
                    .collect();
                let phase = if self.parallel.get().is_some() {
                    "Partial "
                } else if matches!(**input, Plan::Gather { .. }) {
                    "Finalize "
                } else {
                    ""
                };
                (format!("{phase}{name}"), details, vec![Child::Plain(input)])
            }
            Plan::Gather { input, workers } => (
                if matches!(**input, Plan::Sort { .. }) {
                    "Gather Merge".into()
                } else {
                    "Gather".into()
                },
                vec![Detail("Workers Planned".into(), workers.to_string())],
                vec![Child::Plain(input)],
            ),
            Plan::LockRows { input, .. } => {
                ("LockRows".into(), Vec::new(), vec![Child::Plain(input)])
            }
            Plan::Distinct { input } => {
                let labels = self.labels(input);
                (
                    "HashAggregate".into(),
                    vec![Detail("Group Key".into(), labels.join(", "))],
                    vec![Child::Plain(input)],
                )
            }
            Plan::Sort { input, keys } => {
                let labels = self.labels(input);
                let text: Vec<String> = keys.iter().map(|k| sort_key_text(k, &labels)).collect();
                (
                    "Sort".into(),
                    vec![Detail("Sort Key".into(), text.join(", "))],
                    vec![Child::Plain(input)],
                )
            }
            Plan::Limit { input, .. } => ("Limit".into(), Vec::new(), vec![Child::Plain(input)]),
            Plan::WindowAgg { input, .. } => {
                ("WindowAgg".into(), Vec::new(), vec![Child::Plain(input)])
            }
            Plan::SetOp {
                left,
                right,
                op,
                all,
                ..
            } => {
                let name = match (op, all) {
                    (SetOpKind::Union, true) => "Append".to_string(),
                    (SetOpKind::Union, false) => "HashAggregate".to_string(),
                    (SetOpKind::Intersect, a) => {
                        format!("HashSetOp Intersect{}", if *a { " All" } else { "" })
                    }
                    (SetOpKind::Except, a) => {
                        format!("HashSetOp Except{}", if *a { " All" } else { "" })
                    }
                };
                let children = if matches!((op, all), (SetOpKind::Union, true)) {
                    // Nested UNION ALLs are one Append, as PostgreSQL flattens them.
                    let mut inputs = Vec::new();
                    append_inputs(left, &mut inputs);
                    append_inputs(right, &mut inputs);
                    inputs.into_iter().map(Child::Plain).collect()
                } else {
                    vec![Child::Plain(left), Child::Plain(right)]
                };
                (name, Vec::new(), children)
            }
            Plan::CteScan { name, .. } | Plan::WorkTableScan { name, .. } => {
                let kind = if matches!(p, Plan::CteScan { .. }) {
                    "CTE Scan"
                } else {
                    "WorkTable Scan"
                };
                let mut text = format!("{kind} on {}", quote_ident(name));
                if let Some(a) = self.names.get(&node_key(p)).filter(|a| *a != name) {
                    let _ = write!(text, " {}", quote_ident(a));
                }
                (text, Vec::new(), Vec::new())
            }
            Plan::RecursiveUnion {
                base, recursive, ..
            } => (
                "Recursive Union".into(),
                Vec::new(),
                vec![Child::Plain(base), Child::Plain(recursive)],
            ),
            // Printed from its statement (`statement_ctes` leaves it out).
            Plan::ModifyingCteRows { .. } => ("ModifyTable".into(), Vec::new(), Vec::new()),
            Plan::Filter { .. } | Plan::Project { .. } => unreachable!("looked through"),
        }
    }

    fn removed_by_join_filter(&self, p: &Plan, d: &mut Vec<Detail>) {
        if let Some(st) = self.stat(p) {
            d.push(Detail(
                "Rows Removed by Join Filter".into(),
                st.removed_per_loop(),
            ));
        }
    }

    fn stat(&self, p: &Plan) -> Option<&NodeStats> {
        self.stats.and_then(|s| s.get(&node_key(p)))
    }

    fn join_labels(&self, left: &Plan, right: &Plan) -> Vec<String> {
        let mut l = self.labels(left);
        l.extend(self.labels(right));
        l
    }

    /// How each output column of `p` is printed.
    fn labels(&self, p: &Plan) -> Vec<String> {
        match p {
            Plan::SeqScan {
                table, tid, system, ..
            } => {
                let q = quote_ident(self.names.get(&node_key(p)).unwrap_or(&table.name));
                let labels = scan_labels(table, *tid, system);
                if !self.prefix {
                    return labels;
                }
                // Qualified, but not inside a stored form's call.
                let own = table.columns.len() + *tid as usize;
                let mut out: Vec<String> =
                    labels[..own].iter().map(|c| format!("{q}.{c}")).collect();
                for (c, l) in system.iter().zip(&labels[own..]) {
                    out.push(match c {
                        SystemColumn::StoredSize(i) => format!("pg_column_size({})", out[*i]),
                        SystemColumn::StoredCompression(i) => {
                            format!("pg_column_compression({})", out[*i])
                        }
                        _ => format!("{q}.{l}"),
                    });
                }
                out
            }
            Plan::Values { width, .. } => (1..=*width)
                .map(|i| {
                    if self.prefix {
                        format!("\"*VALUES*\".column{i}")
                    } else {
                        format!("column{i}")
                    }
                })
                .collect(),
            Plan::FunctionScan {
                calls,
                ordinality,
                alias,
            } => {
                let q = alias.as_deref().unwrap_or(&calls[0].name);
                crate::srf::column_names(calls, *ordinality, alias.as_deref())
                    .into_iter()
                    .map(|c| {
                        if self.prefix {
                            format!("{}.{}", quote_ident(q), quote_ident(&c))
                        } else {
                            quote_ident(&c)
                        }
                    })
                    .collect()
            }
            Plan::SystemView { scan, columns, .. } => columns
                .iter()
                .map(|c| {
                    if self.prefix {
                        let q = self.names.get(&node_key(p)).unwrap_or(scan.source());
                        format!("{}.{}", quote_ident(q), quote_ident(&c.name))
                    } else {
                        quote_ident(&c.name)
                    }
                })
                .collect(),
            Plan::Project { input, exprs } | Plan::ProjectSet { input, exprs, .. } => {
                let labels = self.labels(input);
                exprs.iter().map(|e| self.deparse(e, &labels)).collect()
            }
            Plan::NestedLoop { .. } | Plan::HashJoin { .. } | Plan::LateralJoin { .. } => {
                let (left, right, left_width) = p.join_inputs().expect("a join");
                let mut l = self.labels(left);
                l.resize(left_width, "?".into());
                l.extend(self.labels(right));
                l
            }
            // A Finalize Aggregate's columns are its Partial Aggregate's.
            Plan::Aggregate { input, .. } if matches!(**input, Plan::Gather { .. }) => {
                self.labels(input)
            }
            Plan::Aggregate {
                input,
                keys,
                aggs,
                sets,
            } => {
                let labels = self.labels(input);
                let keys: Vec<String> = keys.iter().map(|k| self.deparse(k, &labels)).collect();
                let calls = sets.iter().flat_map(|g| &g.calls).map(|args| {
                    let args: Vec<&str> = args.iter().map(|&k| keys[k].as_str()).collect();
                    format!("GROUPING({})", args.join(", "))
                });
                let calls: Vec<String> = calls.collect();
                keys.iter()
                    .cloned()
                    .chain(calls)
                    .chain(aggs.iter().map(|a| self.agg_text(a, &labels)))
                    .collect()
            }
            Plan::WindowAgg { input, funcs, .. } => {
                let mut labels = self.labels(input);
                let calls: Vec<String> =
                    funcs.iter().map(|f| self.window_text(f, &labels)).collect();
                labels.extend(calls);
                labels
            }
            Plan::Filter { input, .. }
            | Plan::Sort { input, .. }
            | Plan::Limit { input, .. }
            | Plan::LockRows { input, .. }
            | Plan::Gather { input, .. }
            | Plan::Distinct { input } => self.labels(input),
            Plan::SetOp { left, .. } => self.labels(left),
            Plan::RecursiveUnion { base, .. } => self.labels(base),
            Plan::ModifyingCteRows { types, .. } => {
                (1..=types.len()).map(|i| format!("column{i}")).collect()
            }
            Plan::CteScan { name, columns, .. } | Plan::WorkTableScan { name, columns, .. } => {
                let q = quote_ident(self.names.get(&node_key(p)).unwrap_or(name));
                columns
                    .iter()
                    .map(|c| {
                        let c = quote_ident(c);
                        if self.prefix {
                            format!("{q}.{c}")
                        } else {
                            c
                        }
                    })
                    .collect()
            }
        }
    }

    /// A qual list as one expression: `(a > 1)`, `((a > 1) AND (b < 2))`.
    fn qual_text(&self, quals: &[&Expr], labels: &[String]) -> String {
        let mut flat = Vec::new();
        for q in quals {
            match q {
                Expr::And(v) => flat.extend(v.iter()),
                other => flat.push(other),
            }
        }
        let parts: Vec<String> = flat.iter().map(|q| self.deparse(q, labels)).collect();
        if parts.len() == 1 {
            parts.into_iter().next().unwrap()
        } else {
            format!("({})", parts.join(" AND "))
        }
    }

    fn agg_text(&self, a: &AggCall, labels: &[String]) -> String {
        let mut text = self.agg_call_text(a, labels);
        if let Some(w) = &a.filter {
            text.push_str(&format!(" FILTER (WHERE {})", self.deparse(w, labels)));
        }
        text
    }

    fn agg_call_text(&self, a: &AggCall, labels: &[String]) -> String {
        if a.func == AggFunc::CountStar {
            return "count(*)".into();
        }
        let name = a.func.name();
        let args: Vec<String> = a.args.iter().map(|x| self.deparse(x, labels)).collect();
        let order: Vec<String> = a
            .order
            .iter()
            .map(|o| {
                let mut k = self.deparse(&o.expr, labels);
                match (o.descending, o.nulls_first) {
                    (false, true) => k.push_str(" NULLS FIRST"),
                    (true, false) => k.push_str(" DESC NULLS LAST"),
                    (true, true) => k.push_str(" DESC"),
                    (false, false) => {}
                }
                k
            })
            .collect();
        if a.func.is_ordered_set() {
            return format!(
                "{name}({}) WITHIN GROUP (ORDER BY {})",
                args[1..].join(", "),
                order.join(", ")
            );
        }
        format!(
            "{name}({}{}{}{})",
            if a.distinct { "DISTINCT " } else { "" },
            args.join(", "),
            if order.is_empty() { "" } else { " ORDER BY " },
            order.join(", ")
        )
    }

    /// A window call as EXPLAIN VERBOSE prints it: `sum(a) OVER (?)`.
    fn window_text(&self, w: &crate::expr::WindowCall, labels: &[String]) -> String {
        use crate::expr::WindowFunc;
        let call = match &w.func {
            WindowFunc::Agg(a) => self.agg_text(a, labels),
            f => {
                let args: Vec<String> = w.args.iter().map(|x| self.deparse(x, labels)).collect();
                format!("{}({})", f.name(), args.join(", "))
            }
        };
        format!("{call} OVER (?)")
    }

    /// A nested loop's Join Filter line and the rows it removed.
    fn nested_loop_details(
        &self,
        p: &Plan,
        left: &Plan,
        right: &Plan,
        on: Option<&Expr>,
    ) -> Vec<Detail> {
        let mut d = Vec::new();
        if let Some(on) = on {
            let labels = self.join_labels(left, right);
            d.push(Detail("Join Filter".into(), self.qual_text(&[on], &labels)));
            self.removed_by_join_filter(p, &mut d);
        }
        d
    }

    /// An expression as ruleutils prints it in EXPLAIN (every operator
    /// parenthesised).
    fn deparse(&self, e: &Expr, labels: &[String]) -> String {
        let d = |x: &Expr| self.deparse(x, labels);
        match e {
            Expr::Column(i, _) => labels.get(*i).cloned().unwrap_or_else(|| format!("${i}")),
            Expr::OuterColumn { index, .. } => format!("$outer{index}"),
            Expr::Param(i, _) => format!("${}", i + 1),
            Expr::Const(v, t) => const_text(v, t.id, &t.display_name(), self.io),
            Expr::Binary {
                op, left, right, ..
            } => format!("({} {} {})", d(left), op.symbol(), d(right)),
            Expr::Neg(x, _) => format!("(- {})", d(x)),
            Expr::And(v) => format!("({})", v.iter().map(d).collect::<Vec<_>>().join(" AND ")),
            Expr::Or(v) => format!("({})", v.iter().map(d).collect::<Vec<_>>().join(" OR ")),
            Expr::Not(x) => format!("(NOT {})", d(x)),
            Expr::IsNull { expr, negated } => {
                format!(
                    "({} IS {}NULL)",
                    d(expr),
                    if *negated { "NOT " } else { "" }
                )
            }
            Expr::IsBool {
                expr,
                value,
                negated,
            } => format!(
                "({} IS {}{})",
                d(expr),
                if *negated { "NOT " } else { "" },
                if *value { "TRUE" } else { "FALSE" }
            ),
            Expr::IsDistinctFrom {
                left,
                right,
                negated,
            } => {
                let s = format!("({} IS DISTINCT FROM {})", d(left), d(right));
                if *negated {
                    format!("(NOT {s})")
                } else {
                    s
                }
            }
            Expr::LikeConst {
                expr,
                pattern,
                negated,
            } => {
                let op = like_op(pattern.0.is_case_insensitive(), *negated);
                format!("({} {op} {})", d(expr), literal(pattern.0.source(), "text"))
            }
            Expr::Like {
                expr,
                pattern,
                case_insensitive,
                negated,
            } => format!(
                "({} {} {})",
                d(expr),
                like_op(*case_insensitive, *negated),
                d(pattern)
            ),
            // ruleutils always parenthesises a cast's operand: (a)::bigint.
            Expr::Cast { expr, to, .. } => format!("({})::{}", d(expr), to.display_name()),
            Expr::Func { func, args } => {
                format!(
                    "{}({})",
                    func.0.name,
                    args.iter().map(d).collect::<Vec<_>>().join(", ")
                )
            }
            Expr::Sys {
                func: SysFunc::ArrayConstruct | SysFunc::ArrayConstructNested,
                args,
                ..
            } => format!(
                "ARRAY[{}]",
                args.iter().map(d).collect::<Vec<_>>().join(", ")
            ),
            Expr::Sys {
                func: SysFunc::ArraySubscript,
                args,
                ..
            } if !args.is_empty() => format!(
                "({}){}",
                d(&args[0]),
                args[1..]
                    .iter()
                    .map(|a| format!("[{}]", d(a)))
                    .collect::<String>()
            ),
            Expr::Sys { func, args, .. } => {
                format!(
                    "{}({})",
                    sys_name(*func),
                    args.iter().map(d).collect::<Vec<_>>().join(", ")
                )
            }
            Expr::Case {
                operand,
                whens,
                else_,
                ..
            } => {
                let mut s = "CASE".to_string();
                if let Some(o) = operand {
                    let _ = write!(s, " {}", d(o));
                }
                for (w, t) in whens {
                    let _ = write!(s, " WHEN {} THEN {}", d(w), d(t));
                }
                if let Some(e) = else_ {
                    let _ = write!(s, " ELSE {}", d(e));
                }
                s.push_str(" END");
                s
            }
            Expr::Coalesce(v, _) => format!(
                "COALESCE({})",
                v.iter().map(d).collect::<Vec<_>>().join(", ")
            ),
            Expr::NullIf(a, b, _) => format!("NULLIF({}, {})", d(a), d(b)),
            Expr::MinMax { args, greatest, .. } => format!(
                "{}({})",
                if *greatest { "GREATEST" } else { "LEAST" },
                args.iter().map(d).collect::<Vec<_>>().join(", ")
            ),
            Expr::InList {
                expr,
                list,
                negated,
            } => {
                let ty = expr.data_type();
                let all_const = list.iter().all(|x| matches!(x, Expr::Const(..)));
                let (op, quant) = if *negated {
                    ("<>", "ALL")
                } else {
                    ("=", "ANY")
                };
                if all_const {
                    let items: Vec<String> = list
                        .iter()
                        .map(|x| match x {
                            Expr::Const(Value::Null, _) => "NULL".to_string(),
                            Expr::Const(v, t) => array_item(&to_text(v, t.id, self.io)),
                            _ => unreachable!(),
                        })
                        .collect();
                    format!(
                        "({} {op} {quant} ('{{{}}}'::{}[]))",
                        d(expr),
                        items.join(","),
                        ty.display_name()
                    )
                } else {
                    format!(
                        "({} {op} {quant} (ARRAY[{}]))",
                        d(expr),
                        list.iter().map(d).collect::<Vec<_>>().join(", ")
                    )
                }
            }
            Expr::ScalarSubquery(..) | Expr::Exists { .. } => "(SubPlan)".into(),
            Expr::ArraySubquery(..) => "(ARRAY(SubPlan))".into(),
            Expr::ArrayCompare {
                expr,
                op,
                array,
                all,
            } => format!(
                "({} {} {} ({}))",
                d(expr),
                op.symbol(),
                if *all { "ALL" } else { "ANY" },
                d(array)
            ),
            Expr::InSubquery { expr, negated, .. } => {
                if *negated {
                    format!("(NOT (SubPlan {}))", d(expr))
                } else {
                    format!("(SubPlan {})", d(expr))
                }
            }
            Expr::Agg(a) => self.agg_text(a, labels),
            Expr::Window(w) => self.window_text(w, labels),
            Expr::Srf(c) => format!(
                "{}({})",
                c.name,
                c.args.iter().map(d).collect::<Vec<_>>().join(", ")
            ),
            Expr::RegClassName(oid) => format!("'{oid}'::regclass"),
            Expr::UserFunc(c) => format!(
                "{}({})",
                c.function.name,
                c.args.iter().map(d).collect::<Vec<_>>().join(", ")
            ),
            // PostgreSQL's CoerceToDomain prints as its argument.
            Expr::DomainCheck(c) => d(&c.arg),
            Expr::VariadicSpread(v) => {
                let (array, fixed) = v.args.split_last().expect("the array is last");
                let fixed: String = fixed.iter().map(|a| format!("{}, ", d(a))).collect();
                format!("{}({fixed}VARIADIC {})", v.func.0.name, d(array))
            }
        }
    }
}

enum Child<'p> {
    Plain(&'p Plan),
    /// Shown under a node of this name that the executor folds into its
    /// parent, with the figures that node would have.
    Wrapped(&'static str, &'p Plan, Option<Box<NodeStats>>),
}

fn join_suffix(kind: JoinKind) -> &'static str {
    match kind {
        JoinKind::Inner => "",
        JoinKind::Left => " Left Join",
        JoinKind::Right => " Right Join",
        JoinKind::Full => " Full Join",
    }
}

fn like_op(ci: bool, negated: bool) -> &'static str {
    match (ci, negated) {
        (false, false) => "~~",
        (false, true) => "!~~",
        (true, false) => "~~*",
        (true, true) => "!~~*",
    }
}

fn sys_name(f: crate::expr::SysFunc) -> String {
    let s = format!("{f:?}");
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

fn sort_key_text(k: &SortKey, labels: &[String]) -> String {
    let mut s = labels.get(k.column).cloned().unwrap_or_else(|| "?".into());
    if k.descending {
        s.push_str(" DESC");
        if !k.nulls_first {
            s.push_str(" NULLS LAST");
        }
    } else if k.nulls_first {
        s.push_str(" NULLS FIRST");
    }
    s
}

/// `'text'::type`, with quotes doubled.
fn literal(text: &str, ty: &str) -> String {
    format!("'{}'::{ty}", text.replace('\'', "''"))
}

fn array_item(s: &str) -> String {
    let plain = !s.is_empty()
        && !s.eq_ignore_ascii_case("null")
        && !s
            .chars()
            .any(|c| matches!(c, '{' | '}' | ',' | '"' | '\\' | ' ' | '\''));
    if plain {
        s.to_string()
    } else {
        format!(
            "\"{}\"",
            s.replace('\\', "\\\\")
                .replace('"', "\\\"")
                .replace('\'', "''")
        )
    }
}

/// A constant as get_const_expr prints it: integers and plain numerics bare
/// (unless negative), booleans as words, everything else as a typed literal.
fn const_text(v: &Value, ty: TypeId, type_name: &str, io: &IoSettings) -> String {
    if v.is_null() {
        return format!("NULL::{type_name}");
    }
    let text = to_text(v, ty, io);
    match ty {
        TypeId::Bool => text.replace('t', "true").replace('f', "false"),
        TypeId::Int4 if !text.starts_with('-') => text,
        TypeId::Numeric
            if !text.starts_with('-')
                && text.chars().all(|c| c.is_ascii_digit() || c == '.')
                && text.contains('.') =>
        {
            text
        }
        TypeId::Numeric if !text.starts_with('-') && text.chars().all(|c| c.is_ascii_digit()) => {
            format!("'{text}'::numeric")
        }
        _ => literal(&text, type_name),
    }
}

/// PostgreSQL's quote_identifier: lower-case names of plain characters
/// stay bare.
pub fn quote_ident(s: &str) -> String {
    let plain = s
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_lowercase() || c == '_')
        && s.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if plain {
        s.to_string()
    } else {
        format!("\"{}\"", s.replace('"', "\"\""))
    }
}

/// An Aggregate's node name and its key lines ("Group Key" / "Hash Key",
/// each with its keys' texts), as PostgreSQL shows its plan: every
/// non-empty grouping set is hashed and the empty ones are computed as
/// plain aggregates alongside (MixedAggregate), a single non-empty set is
/// an ordinary HashAggregate.
pub(crate) fn aggregate_shape<'a>(
    keys: &'a [String],
    sets: Option<&super::GroupingSets>,
) -> (&'static str, Vec<(&'static str, Vec<&'a str>)>) {
    let all: Vec<&str> = keys.iter().map(String::as_str).collect();
    let sets = match sets {
        None if keys.is_empty() => return ("Aggregate", Vec::new()),
        None => return ("HashAggregate", vec![("Group Key", all)]),
        Some(g) => &g.sets,
    };
    // Larger sets first, as PostgreSQL lists its rollup chains (it orders
    // the sets within a chain by size; the chains themselves are not
    // reproduced here, so a CUBE of three or more may list differently).
    let mut hashed: Vec<Vec<&str>> = sets
        .iter()
        .filter(|s| !s.is_empty())
        .map(|s| s.iter().map(|&k| keys[k].as_str()).collect())
        .collect();
    hashed.sort_by_key(|s| std::cmp::Reverse(s.len()));
    let empty = sets.len() - hashed.len();
    if hashed.len() == 1 && empty == 0 {
        let only = hashed.into_iter().next().expect("one set");
        return ("HashAggregate", vec![("Group Key", only)]);
    }
    let name = match (hashed.is_empty(), empty) {
        (true, _) => "Aggregate",
        (false, 0) => "HashAggregate",
        (false, _) => "MixedAggregate",
    };
    let mut lines: Vec<(&str, Vec<&str>)> = hashed.into_iter().map(|k| ("Hash Key", k)).collect();
    lines.extend((0..empty).map(|_| ("Group Key", vec!["()"])));
    (name, lines)
}

/// How a table scan's output columns print: its columns, the locking tid
/// as `ctid`, then its system columns, a stored form as the call it answers.
fn scan_labels(table: &catalog::Table, tid: bool, system: &[SystemColumn]) -> Vec<String> {
    let mut labels: Vec<String> = table.columns.iter().map(|c| quote_ident(&c.name)).collect();
    if tid {
        labels.push("ctid".into());
    }
    for c in system {
        let label = match *c {
            SystemColumn::StoredSize(i) => format!("pg_column_size({})", labels[i]),
            SystemColumn::StoredCompression(i) => format!("pg_column_compression({})", labels[i]),
            c => c.name().unwrap_or_default().to_string(),
        };
        labels.push(label);
    }
    labels
}
