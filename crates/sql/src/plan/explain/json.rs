//! EXPLAIN (FORMAT JSON): the same nodes, details and figures as the text
//! format, laid out as PostgreSQL 15's `explain.c` writes its JSON — one
//! object per node with "Node Type" first and its inputs under "Plans",
//! two spaces of indentation per level, arrays of names on one line.

use std::fmt::Write;

use common::BufferUsage;

use super::{Child, Detail, Explainer, NodeStats};
use crate::plan::cost::Estimate;
use crate::plan::{JoinKind, Plan, SetOpKind};

/// A JSON value as EXPLAIN writes it.
pub enum J {
    Str(String),
    /// A number or boolean, already formatted.
    Raw(String),
    /// An array of strings, written on one line.
    Names(Vec<String>),
    Obj(Vec<(String, J)>),
    /// An array of objects, one per line group.
    List(Vec<J>),
}

fn esc(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

impl J {
    /// Writes the value; `indent` is the column of the line it starts on.
    pub fn render(&self, indent: usize, out: &mut String) {
        match self {
            J::Str(s) => esc(s, out),
            J::Raw(s) => out.push_str(s),
            J::Names(v) => {
                out.push('[');
                for (i, s) in v.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    esc(s, out);
                }
                out.push(']');
            }
            J::Obj(fields) => {
                out.push_str("{\n");
                for (i, (k, v)) in fields.iter().enumerate() {
                    if i > 0 {
                        out.push_str(",\n");
                    }
                    out.push_str(&" ".repeat(indent + 2));
                    esc(k, out);
                    out.push_str(": ");
                    v.render(indent + 2, out);
                }
                out.push('\n');
                out.push_str(&" ".repeat(indent));
                out.push('}');
            }
            J::List(items) => {
                out.push_str("[\n");
                for (i, v) in items.iter().enumerate() {
                    if i > 0 {
                        out.push_str(",\n");
                    }
                    out.push_str(&" ".repeat(indent + 2));
                    v.render(indent + 2, out);
                }
                if !items.is_empty() {
                    out.push('\n');
                }
                out.push_str(&" ".repeat(indent));
                out.push(']');
            }
        }
    }
}

fn raw(v: impl ToString) -> J {
    J::Raw(v.to_string())
}

/// The ten counters of BufferUsage, as EXPLAIN's JSON names them.
pub fn buffer_fields(b: &BufferUsage, out: &mut Vec<(String, J)>) {
    for (k, v) in [
        ("Shared Hit Blocks", b.shared_hit),
        ("Shared Read Blocks", b.shared_read),
        ("Shared Dirtied Blocks", b.shared_dirtied),
        ("Shared Written Blocks", b.shared_written),
        ("Local Hit Blocks", b.local_hit),
        ("Local Read Blocks", b.local_read),
        ("Local Dirtied Blocks", b.local_dirtied),
        ("Local Written Blocks", b.local_written),
        ("Temp Read Blocks", b.temp_read),
        ("Temp Written Blocks", b.temp_written),
    ] {
        out.push((k.into(), raw(v)));
    }
}

/// The number in `Memory: 25kB`-style text.
fn kb(s: &str) -> String {
    s.trim().trim_end_matches("kB").trim().to_string()
}

/// The executor's detail lines (text format) as JSON properties.
fn exec_detail(name: &str, value: &str, out: &mut Vec<(String, J)>) {
    let parts: Vec<&str> = value.split("  ").collect();
    match name {
        // show_gather's order: Planned, Launched, then Single Copy.
        "Workers Launched" => {
            out.push((name.into(), J::Raw(value.into())));
            out.push(("Single Copy".into(), J::Raw("false".into())));
        }
        "Sort Method" => {
            out.push(("Sort Method".into(), J::Str(parts[0].into())));
            if let Some((ty, used)) = parts.get(1).and_then(|p| p.split_once(':')) {
                out.push(("Sort Space Used".into(), J::Raw(kb(used))));
                out.push(("Sort Space Type".into(), J::Str(ty.trim().into())));
            }
        }
        "Batches" => {
            // HashAggregate: `N  Memory Usage: MkB[  Disk Usage: DkB]`.
            out.push(("Planned Partitions".into(), raw(0)));
            out.push(("HashAgg Batches".into(), J::Raw(parts[0].trim().into())));
            let mut disk = "0".to_string();
            for p in &parts[1..] {
                match p.split_once(':') {
                    Some(("Memory Usage", m)) => {
                        out.push(("Peak Memory Usage".into(), J::Raw(kb(m))))
                    }
                    Some(("Disk Usage", d)) => disk = kb(d),
                    _ => {}
                }
            }
            out.push(("Disk Usage".into(), J::Raw(disk)));
        }
        "Buckets" => {
            // Hash: `B  Batches: N  Memory Usage: MkB`.
            let b = parts[0].trim().to_string();
            out.push(("Hash Buckets".into(), J::Raw(b.clone())));
            out.push(("Original Hash Buckets".into(), J::Raw(b)));
            for p in &parts[1..] {
                match p.split_once(':') {
                    Some(("Batches", n)) => {
                        out.push(("Hash Batches".into(), J::Raw(n.trim().into())));
                        out.push(("Original Hash Batches".into(), raw(1)));
                    }
                    Some(("Memory Usage", m)) => {
                        out.push(("Peak Memory Usage".into(), J::Raw(kb(m))))
                    }
                    _ => {}
                }
            }
        }
        _ => out.push((name.into(), J::Str(value.into()))),
    }
}

impl Explainer<'_> {
    /// The node object of `p` (looking through projections and upper
    /// filters as the text format does).
    pub(super) fn json_node(
        &self,
        p: &Plan,
        relationship: Option<&str>,
        mut extra: Vec<Detail>,
    ) -> J {
        match p {
            Plan::Project { input, .. } => return self.json_node(input, relationship, extra),
            Plan::Filter { input, qual } => {
                let labels = self.labels(input);
                let mut d = vec![Detail("Filter".into(), self.qual_text(&[qual], &labels))];
                if let Some(st) = self.stat(p) {
                    d.push(Detail(
                        "Rows Removed by Filter".into(),
                        st.removed_per_loop(),
                    ));
                }
                d.extend(extra);
                extra = d;
                return self.json_node(input, relationship, extra);
            }
            _ => {}
        }
        let (_, mut details, kids) = self.describe(p);
        details.extend(extra);
        let mut f: Vec<(String, J)> = Vec::new();
        let s = |x: &str| J::Str(x.to_string());
        let (node_type, strategy) = match p {
            Plan::SeqScan {
                index: Some(path), ..
            } if path.index_only => ("Index Only Scan", None),
            Plan::SeqScan { index: Some(_), .. } => ("Index Scan", None),
            Plan::SeqScan { .. } => ("Seq Scan", None),
            Plan::Values { rows, .. } if rows.len() == 1 => ("Result", None),
            Plan::Values { .. } => ("Values Scan", None),
            Plan::FunctionScan { .. } | Plan::SystemView { .. } => ("Function Scan", None),
            Plan::ProjectSet { .. } => ("ProjectSet", None),
            Plan::NestedLoop { .. } | Plan::LateralJoin { .. } => ("Nested Loop", None),
            Plan::HashJoin { .. } => ("Hash Join", None),
            Plan::Aggregate { keys, sets, .. } if sets.is_some() => {
                let names: Vec<String> = keys.iter().map(|_| String::new()).collect();
                match super::aggregate_shape(&names, sets.as_deref()).0 {
                    "MixedAggregate" => ("Aggregate", Some("Mixed")),
                    "HashAggregate" => ("Aggregate", Some("Hashed")),
                    _ => ("Aggregate", Some("Plain")),
                }
            }
            Plan::Aggregate { keys, .. } if keys.is_empty() => ("Aggregate", Some("Plain")),
            Plan::Aggregate { .. } | Plan::Distinct { .. } => ("Aggregate", Some("Hashed")),
            Plan::Sort { .. } => ("Sort", None),
            Plan::WindowAgg { .. } => ("WindowAgg", None),
            Plan::Limit { .. } => ("Limit", None),
            Plan::LockRows { .. } => ("LockRows", None),
            Plan::SetOp {
                op: SetOpKind::Union,
                all: true,
                ..
            } => ("Append", None),
            Plan::SetOp {
                op: SetOpKind::Union,
                ..
            } => ("Aggregate", Some("Hashed")),
            Plan::SetOp { .. } => ("SetOp", Some("Hashed")),
            Plan::CteScan { .. } => ("CTE Scan", None),
            Plan::RecursiveUnion { .. } => ("Recursive Union", None),
            Plan::WorkTableScan { .. } => ("WorkTable Scan", None),
            Plan::ModifyingCteRows { .. } => ("ModifyTable", None),
            Plan::Gather { input, .. } if matches!(**input, Plan::Sort { .. }) => {
                ("Gather Merge", None)
            }
            Plan::Gather { .. } => ("Gather", None),
            Plan::Filter { .. } | Plan::Project { .. } => unreachable!("looked through"),
        };
        f.push(("Node Type".into(), s(node_type)));
        if let Some(st) = strategy {
            f.push(("Strategy".into(), s(st)));
            if node_type == "Aggregate" {
                let mode = match p {
                    _ if self.parallel.get().is_some() => "Partial",
                    Plan::Aggregate { input, .. } if matches!(**input, Plan::Gather { .. }) => {
                        "Finalize"
                    }
                    _ => "Simple",
                };
                f.push(("Partial Mode".into(), s(mode)));
            }
        }
        if let Some(r) = relationship {
            f.push(("Parent Relationship".into(), s(r)));
        }
        let parallel_scan =
            self.parallel.get().is_some() && matches!(p, Plan::SeqScan { index: None, .. });
        f.push(("Parallel Aware".into(), raw(parallel_scan)));
        f.push(("Async Capable".into(), raw(false)));
        match p {
            Plan::SeqScan { table, index, .. } => {
                if let Some(path) = index {
                    let dir = if path.backward { "Backward" } else { "Forward" };
                    f.push(("Scan Direction".into(), s(dir)));
                    f.push(("Index Name".into(), s(&path.index.name)));
                }
                f.push(("Relation Name".into(), s(&table.name)));
                let alias = self.names.get(&super::node_key(p)).unwrap_or(&table.name);
                f.push(("Alias".into(), s(alias)));
            }
            Plan::Values { rows, .. } if rows.len() != 1 => {
                f.push(("Alias".into(), s("*VALUES*")));
            }
            Plan::FunctionScan { calls, alias, .. } => {
                if let [one] = calls.as_slice() {
                    f.push(("Function Name".into(), s(&one.name)));
                }
                f.push((
                    "Alias".into(),
                    s(alias.as_deref().unwrap_or(&calls[0].name)),
                ));
            }
            Plan::SystemView { name, .. } => {
                f.push(("Function Name".into(), s(name)));
                f.push(("Alias".into(), s(name)));
            }
            Plan::CteScan { name, .. } | Plan::WorkTableScan { name, .. } => {
                f.push(("CTE Name".into(), s(name)));
                let alias = self.names.get(&super::node_key(p)).unwrap_or(name);
                f.push(("Alias".into(), s(alias)));
            }
            Plan::NestedLoop { kind, .. } | Plan::HashJoin { kind, .. } => {
                let k = match kind {
                    JoinKind::Inner => "Inner",
                    JoinKind::Left => "Left",
                    JoinKind::Right => "Right",
                    JoinKind::Full => "Full",
                };
                f.push(("Join Type".into(), s(k)));
            }
            Plan::SetOp { op, all, .. } if *op != SetOpKind::Union => {
                let c = if *op == SetOpKind::Intersect {
                    "Intersect"
                } else {
                    "Except"
                };
                let c = if *all {
                    format!("{c} All")
                } else {
                    c.to_string()
                };
                f.push(("Command".into(), J::Str(c)));
            }
            _ => {}
        }
        let est = self.estimate(p);
        self.figures(&est, self.stats.map(|_| self.stat(p)), &mut f);
        if matches!(p, Plan::NestedLoop { .. } | Plan::HashJoin { .. }) {
            f.push(("Inner Unique".into(), raw(false)));
        }
        let lists = self.key_lists(p);
        let details = self.grouping_sets(p, details, &mut f);
        for Detail(k, v) in details {
            if k == "Workers Planned" {
                f.push((k, J::Raw(v)));
                if self.stat(p).is_none() {
                    f.push(("Single Copy".into(), raw(false)));
                }
            } else if k.starts_with("Rows Removed") || k == "Heap Fetches" {
                f.push((k, J::Raw(v)));
            } else if let Some(names) = lists.iter().find(|(n, _)| *n == k).map(|(_, l)| l.clone())
            {
                f.push((k, J::Names(names)));
            } else {
                f.push((k, J::Str(v)));
            }
        }
        if let Some(st) = self.stat(p) {
            for (k, v) in &st.details {
                exec_detail(k, v, &mut f);
            }
            if self.options.buffers {
                buffer_fields(&st.buffers, &mut f);
            }
        }
        let single = kids.len() == 1;
        let member = matches!(p, Plan::SetOp { .. });
        let mut plans = Vec::new();
        if relationship.is_none() {
            // The statement's CTEs, as PostgreSQL lists their subplans.
            for (name, plan) in super::statement_ctes(p, self.stats) {
                let mut node = self.json_node(plan, Some("InitPlan"), Vec::new());
                if let J::Obj(fields) = &mut node {
                    let at = fields
                        .iter()
                        .position(|(k, _)| k == "Parent Relationship")
                        .map_or(fields.len(), |i| i + 1);
                    fields.insert(at, ("Subplan Name".into(), J::Str(format!("CTE {name}"))));
                }
                plans.push(node);
            }
        }
        let in_recursion = self.enter_recursion(p);
        let outside = self.enter_children(p);
        for (i, k) in kids.into_iter().enumerate() {
            let rel = if member {
                "Member"
            } else if single || i == 0 {
                "Outer"
            } else {
                "Inner"
            };
            plans.push(match k {
                Child::Plain(c) => self.json_node(c, Some(rel), Vec::new()),
                Child::Wrapped(label, c, st) => {
                    let est = self.estimate(c);
                    let est = Estimate {
                        startup: est.total,
                        ..est
                    };
                    let mut w = vec![
                        ("Node Type".to_string(), s(label)),
                        ("Parent Relationship".into(), s(rel)),
                        ("Parallel Aware".into(), raw(false)),
                        ("Async Capable".into(), raw(false)),
                    ];
                    self.figures(&est, self.stats.map(|_| st.as_deref()), &mut w);
                    if let Some(st) = &st {
                        for (k, v) in &st.inner_details {
                            exec_detail(k, v, &mut w);
                        }
                        if self.options.buffers {
                            buffer_fields(&st.buffers, &mut w);
                        }
                    }
                    w.push((
                        "Plans".into(),
                        J::List(vec![self.json_node(c, Some("Outer"), Vec::new())]),
                    ));
                    J::Obj(w)
                }
            });
        }
        if in_recursion {
            self.worktables.borrow_mut().pop();
        }
        self.leave(outside);
        if !plans.is_empty() {
            f.push(("Plans".into(), J::List(plans)));
        }
        J::Obj(f)
    }

    /// Estimated and (under ANALYZE) actual figures.
    fn figures(&self, est: &Estimate, stats: Option<Option<&NodeStats>>, f: &mut Vec<(String, J)>) {
        if self.options.costs {
            f.push(("Startup Cost".into(), J::Raw(format!("{:.2}", est.startup))));
            f.push(("Total Cost".into(), J::Raw(format!("{:.2}", est.total))));
            f.push(("Plan Rows".into(), J::Raw(format!("{:.0}", est.rows))));
            f.push(("Plan Width".into(), raw(est.width)));
        }
        let Some(st) = stats else { return };
        let (first, total, rows, loops) = match st {
            None => (0.0, 0.0, 0.0, 0),
            Some(st) => {
                let loops = st.loops.max(1) as f64;
                let ms = |d: std::time::Duration| d.as_secs_f64() * 1000.0 / loops;
                (
                    ms(st.first_row),
                    ms(st.total),
                    st.rows as f64 / loops,
                    st.loops,
                )
            }
        };
        if self.options.timing {
            f.push(("Actual Startup Time".into(), J::Raw(format!("{first:.3}"))));
            f.push(("Actual Total Time".into(), J::Raw(format!("{total:.3}"))));
        }
        f.push(("Actual Rows".into(), J::Raw(format!("{rows:.0}"))));
        f.push(("Actual Loops".into(), raw(loops)));
    }

    /// An Aggregate over grouping sets lists its sets under "Grouping
    /// Sets" (each hashed set apart, the empty ones together) in place of
    /// its key lines; the other details are returned.
    fn grouping_sets(
        &self,
        p: &Plan,
        details: Vec<Detail>,
        f: &mut Vec<(String, J)>,
    ) -> Vec<Detail> {
        let Plan::Aggregate {
            input,
            keys,
            sets: Some(sets),
            ..
        } = p
        else {
            return details;
        };
        let labels = self.labels(input);
        let names: Vec<String> = keys.iter().map(|k| self.deparse(k, &labels)).collect();
        let (_, lines) = super::aggregate_shape(&names, Some(sets));
        if lines.iter().all(|(label, _)| *label == "Group Key")
            && lines.len() == 1
            && !sets.sets[0].is_empty()
        {
            return details;
        }
        let owned = |keys: Vec<&str>| J::Names(keys.into_iter().map(String::from).collect());
        let mut groups = Vec::new();
        let mut empties = Vec::new();
        for (label, keys) in lines {
            if label == "Hash Key" {
                groups.push(J::Obj(vec![(
                    "Hash Keys".into(),
                    J::List(vec![owned(keys)]),
                )]));
            } else {
                empties.push(owned(Vec::new()));
            }
        }
        if !empties.is_empty() {
            groups.push(J::Obj(vec![("Group Keys".into(), J::List(empties))]));
        }
        f.push(("Grouping Sets".into(), J::List(groups)));
        details
            .into_iter()
            .filter(|Detail(k, _)| k != "Hash Key" && k != "Group Key")
            .collect()
    }

    /// Details that are lists in JSON: sort and group keys, one name each.
    fn key_lists(&self, p: &Plan) -> Vec<(String, Vec<String>)> {
        match p {
            Plan::Sort { input, keys } => {
                let labels = self.labels(input);
                vec![(
                    "Sort Key".into(),
                    keys.iter()
                        .map(|k| super::sort_key_text(k, &labels))
                        .collect(),
                )]
            }
            Plan::Aggregate { input, keys, .. } => {
                let labels = self.labels(input);
                vec![(
                    "Group Key".into(),
                    keys.iter().map(|k| self.deparse(k, &labels)).collect(),
                )]
            }
            Plan::Distinct { input } => vec![("Group Key".into(), self.labels(input))],
            _ => Vec::new(),
        }
    }
}
