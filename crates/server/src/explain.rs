//! EXPLAIN [ANALYZE]: prints the plan (sql::plan::explain) and, for
//! ANALYZE, runs it first with per-node counters (exec::Instrumentation),
//! discarding its rows as PostgreSQL does.

use std::time::{Duration, Instant};

use catalog::Table;
use common::{PgError, PgResult};
use exec::ExecEnv;
use sql::plan::explain::{buffer_fields, buffers_text, explain_json, explain_plan, quote_ident, J};
use sql::plan::{BoundStatement, ExplainFormat, ExplainOptions, Plan, PlannerSettings};
use storage::buffer::BufferPool;
use types::{TypeId, Value};

use crate::session_api::{ColumnDesc, ResultSink};

/// Relation sizes for the planner, read through `access`.
/// Relation sizes for one planning, each asked of `access` once: the join
/// search estimates the same relations again for every candidate.
pub(crate) struct PoolSizes<'c> {
    pool: &'static BufferPool,
    /// The catalog the statement was bound against (its tables' indexes).
    catalog: &'c catalog::CatalogData,
    known: std::cell::RefCell<Vec<(common::RelFileLocator, u64)>>,
}

impl<'c> PoolSizes<'c> {
    pub fn new(pool: &'static BufferPool, catalog: &'c catalog::CatalogData) -> Self {
        PoolSizes {
            pool,
            catalog,
            known: Default::default(),
        }
    }
}

impl sql::plan::RelationSizes for PoolSizes<'_> {
    fn catalog(&self) -> Option<&catalog::CatalogData> {
        Some(self.catalog)
    }

    fn indexes(&self, table: &Table) -> Vec<sql::plan::IndexInfo> {
        // A partitioned table's own (empty) indexes are never read.
        if table.is_partitioned() {
            return Vec::new();
        }
        self.catalog
            .indexes_of(table.oid)
            .map(|i| sql::plan::IndexInfo {
                pages: access::heap::relation_blocks(self.pool, i.locator()),
                height: access::btree::tree_height(self.pool, i.locator()).unwrap_or(0),
                index: std::sync::Arc::new(i.clone()),
            })
            .collect()
    }

    fn index_defs(&self, table: &Table) -> Vec<std::sync::Arc<catalog::Index>> {
        if table.is_partitioned() {
            return Vec::new();
        }
        self.catalog
            .indexes_of(table.oid)
            .map(|i| std::sync::Arc::new(i.clone()))
            .collect()
    }

    fn blocks(&self, table: &Table) -> u64 {
        if table.is_partitioned() {
            // Its rows are its leaves'.
            return self
                .catalog
                .leaf_partitions(table.oid)
                .into_iter()
                .map(|leaf| self.blocks(leaf))
                .sum();
        }
        let rel = table.locator();
        if let Some(&(_, n)) = self.known.borrow().iter().find(|(r, _)| *r == rel) {
            return n;
        }
        let n = access::heap::relation_blocks(self.pool, rel);
        self.known.borrow_mut().push((rel, n));
        n
    }
}

fn ms(d: Duration) -> String {
    format!("{:.3} ms", d.as_secs_f64() * 1000.0)
}

pub(crate) fn run_explain(
    statement: &BoundStatement,
    options: &ExplainOptions,
    settings: &PlannerSettings,
    planning_time: Duration,
    pool: &'static BufferPool,
    env: &mut ExecEnv,
    sink: &mut dyn ResultSink,
) -> PgResult<()> {
    let lines = explain_lines(statement, options, settings, planning_time, pool, env)?;
    sink.columns(&[ColumnDesc {
        name: "QUERY PLAN".into(),
        table_oid: 0,
        column_id: 0,
        type_oid: TypeId::Text.oid(),
        type_len: -1,
        type_mod: -1,
    }])?;
    for l in lines {
        sink.row(&[Value::Text(l)])?;
    }
    sink.complete("EXPLAIN")
}

/// The `CTE name` blocks of a statement's data-modifying WITH queries
/// (text format, no ANALYZE), spliced under its top node as PostgreSQL
/// prints its ModifyTable subplans: before the top node's children and
/// the other CTEs' blocks.
fn with_modifying_lines(
    ctes: &[std::sync::Arc<sql::plan::ModifyingCte>],
    statement: &BoundStatement,
    options: &ExplainOptions,
    settings: &PlannerSettings,
    planning_time: Duration,
    pool: &'static BufferPool,
    env: &mut ExecEnv,
) -> PgResult<Vec<String>> {
    if options.analyze || options.format == ExplainFormat::Json {
        return Err(PgError::unsupported(
            "EXPLAIN ANALYZE or FORMAT JSON of a WITH holding data-modifying statements is not supported yet",
        ));
    }
    let mut lines = explain_lines(statement, options, settings, planning_time, pool, env)?;
    let mut blocks = Vec::new();
    let inner_options = ExplainOptions {
        summary: false,
        ..options.clone()
    };
    for c in ctes {
        blocks.push(format!("  CTE {}", quote_ident(&c.name)));
        let inner = explain_lines(
            &c.statement,
            &inner_options,
            settings,
            planning_time,
            pool,
            env,
        )?;
        for l in inner {
            blocks.push(if l.starts_with(' ') {
                format!("        {l}")
            } else {
                format!("    ->  {l}")
            });
        }
    }
    // The plan's lines are indented after the first; the summary's not.
    let plan_end = 1 + lines
        .iter()
        .skip(1)
        .take_while(|l| l.starts_with(' '))
        .count();
    let at = lines[..plan_end]
        .iter()
        .skip(1)
        .position(|l| l.starts_with("  ->  ") || l.starts_with("  CTE "))
        .map_or(plan_end, |i| i + 1);
    lines.splice(at..at, blocks);
    Ok(lines)
}

/// EXPLAIN's lines for `statement`.
fn explain_lines(
    statement: &BoundStatement,
    options: &ExplainOptions,
    settings: &PlannerSettings,
    planning_time: Duration,
    pool: &'static BufferPool,
    env: &mut ExecEnv,
) -> PgResult<Vec<String>> {
    if let BoundStatement::WithModifying { ctes, statement } = statement {
        return with_modifying_lines(ctes, statement, options, settings, planning_time, pool, env);
    }
    let json = options.format == ExplainFormat::Json;
    let sizes = PoolSizes::new(pool, env.catalog);
    let mut lines = Vec::new();
    // Binding and planning read no buffers (the catalog is an in-memory
    // snapshot, relation sizes come from smgr): their counts are zero.
    let planning_buffers = common::BufferUsage::default();
    match statement {
        BoundStatement::Query { plan, .. } => {
            let mut stats = None;
            let mut execution = Duration::ZERO;
            if options.analyze {
                let started = Instant::now();
                env.instrument = Some(exec::Instrumentation::new(options.timing, options.buffers));
                let run = drain(plan, env);
                let ins = env.instrument.take();
                run?;
                execution = started.elapsed();
                stats = ins.map(exec::Instrumentation::into_stats);
            }
            if json {
                let root = explain_json(plan, options, &sizes, settings, stats.as_ref(), &env.io);
                lines.push(json_document(
                    root,
                    options,
                    planning_time,
                    planning_buffers,
                    execution,
                ));
            } else {
                lines = explain_plan(plan, options, &sizes, settings, stats.as_ref(), &env.io);
                if options.buffers {
                    if let Some(b) = buffers_text(&planning_buffers) {
                        lines.push("Planning:".into());
                        lines.push(format!("  {b}"));
                    }
                }
                if options.summary {
                    lines.push(format!("Planning Time: {}", ms(planning_time)));
                }
                if options.analyze && options.summary {
                    lines.push(format!("Execution Time: {}", ms(execution)));
                }
            }
        }
        BoundStatement::Insert { .. }
        | BoundStatement::Update { .. }
        | BoundStatement::Delete { .. } => {
            if options.analyze {
                return Err(PgError::unsupported(
                    "EXPLAIN ANALYZE of INSERT, UPDATE or DELETE is not supported yet",
                ));
            }
            // UPDATE and DELETE read their rows through a scan of the table.
            let scan;
            let mut alias = None;
            let (verb, table, source) = match statement {
                BoundStatement::Insert { table, source, .. } => ("Insert", table, source),
                // UPDATE ... FROM / DELETE ... USING read the join.
                BoundStatement::Update {
                    table,
                    alias: a,
                    join: Some(j),
                    ..
                } => {
                    alias = a.as_deref();
                    ("Update", table, &j.plan)
                }
                BoundStatement::Delete {
                    table,
                    alias: a,
                    join: Some(j),
                    ..
                } => {
                    alias = a.as_deref();
                    ("Delete", table, &j.plan)
                }
                BoundStatement::Update {
                    table,
                    alias: a,
                    qual,
                    index,
                    ..
                }
                | BoundStatement::Delete {
                    table,
                    alias: a,
                    qual,
                    index,
                    ..
                } => {
                    alias = a.as_deref();
                    // The index conditions are not repeated as a filter.
                    let filter = qual
                        .iter()
                        .filter(|q| {
                            !index
                                .as_ref()
                                .is_some_and(|p| p.conds.iter().any(|c| &c.clause == *q))
                        })
                        .cloned()
                        .collect();
                    scan = Plan::SeqScan {
                        table: table.clone(),
                        qual: filter,
                        alias: a.clone(),
                        tid: false,
                        system: Vec::new(),
                        index: index.clone(),
                    };
                    let verb = if matches!(statement, BoundStatement::Update { .. }) {
                        "Update"
                    } else {
                        "Delete"
                    };
                    (verb, table, &scan)
                }
                _ => unreachable!("matched above"),
            };
            if json {
                let root = modify_json(
                    verb,
                    (table, alias),
                    source,
                    options,
                    &sizes,
                    settings,
                    &env.io,
                );
                lines.push(json_document(
                    root,
                    options,
                    planning_time,
                    planning_buffers,
                    execution_none(),
                ));
            } else {
                lines = modify_lines(
                    verb,
                    (table, alias),
                    source,
                    options,
                    &sizes,
                    settings,
                    &env.io,
                );
                if let BoundStatement::Insert {
                    on_conflict: Some(oc),
                    ..
                } = statement
                {
                    let details =
                        conflict_lines(oc, table, options, &sizes, settings, &env.io, env);
                    lines.splice(1..1, details);
                }
            }
        }
        _ => unreachable!("the binder explains only queries and DML"),
    }
    Ok(lines)
}

/// The ON CONFLICT lines under `Insert on t`, as PostgreSQL prints them.
fn conflict_lines(
    oc: &sql::plan::OnConflict,
    table: &Table,
    options: &ExplainOptions,
    sizes: &PoolSizes,
    settings: &PlannerSettings,
    io: &types::IoSettings,
    env: &exec::ExecEnv,
) -> Vec<String> {
    let mut lines = Vec::new();
    let (resolution, qual) = match &oc.action {
        sql::plan::ConflictAction::Nothing => ("NOTHING", None),
        sql::plan::ConflictAction::Update { qual, .. } => ("UPDATE", Some(qual)),
    };
    lines.push(format!("  Conflict Resolution: {resolution}"));
    if oc.explicit {
        let names: Vec<String> = oc
            .arbiters
            .iter()
            .filter_map(|oid| env.catalog.indexes.get(oid))
            .map(|i| quote_ident(&i.name))
            .collect();
        lines.push(format!("  Conflict Arbiter Indexes: {}", names.join(", ")));
    }
    if let Some(qual) = qual.filter(|q| !q.is_empty()) {
        let own = |n: &str| format!("{}.{}", quote_ident(&table.name), quote_ident(n));
        let mut labels: Vec<String> = table.columns.iter().map(|c| own(&c.name)).collect();
        labels.extend(
            table
                .columns
                .iter()
                .map(|c| format!("excluded.{}", quote_ident(&c.name))),
        );
        let text = sql::plan::explain::qual_text(qual, &labels, options, sizes, settings, io);
        lines.push(format!("  Conflict Filter: {text}"));
    }
    lines
}

/// `Insert on t` over the plan of its rows, as PostgreSQL's ModifyTable.
fn modify_lines(
    verb: &str,
    (table, alias): (&Table, Option<&str>),
    input: &Plan,
    options: &ExplainOptions,
    sizes: &PoolSizes,
    settings: &PlannerSettings,
    io: &types::IoSettings,
) -> Vec<String> {
    let mut lines = Vec::new();
    let est = sql::plan::cost::estimate(input, sizes, settings);
    let mut head = format!("{verb} on {}", quote_ident(&table.name));
    if let Some(a) = alias {
        head.push_str(&format!(" {}", quote_ident(a)));
    }
    if options.costs {
        head.push_str(&format!(
            "  (cost={:.2}..{:.2} rows=0 width=0)",
            est.startup, est.total
        ));
    }
    lines.push(head);
    for l in explain_plan(input, options, sizes, settings, None, io) {
        // The input is the ModifyTable node's child.
        let child = if l.starts_with(' ') {
            format!("      {l}")
        } else {
            format!("  ->  {l}")
        };
        lines.push(child);
    }
    lines
}

fn execution_none() -> Duration {
    Duration::ZERO
}

/// The whole JSON document: one array holding the statement's object
/// (`"Plan"`, then the planning and execution summary as PostgreSQL 15
/// orders them), printed as one row.
fn json_document(
    root: J,
    options: &ExplainOptions,
    planning_time: Duration,
    planning_buffers: common::BufferUsage,
    execution: Duration,
) -> String {
    let mut top = vec![("Plan".to_string(), root)];
    if options.buffers {
        let mut b = Vec::new();
        buffer_fields(&planning_buffers, &mut b);
        top.push(("Planning".into(), J::Obj(b)));
    }
    let msf = |d: Duration| J::Raw(format!("{:.3}", d.as_secs_f64() * 1000.0));
    if options.summary {
        top.push(("Planning Time".into(), msf(planning_time)));
    }
    if options.analyze {
        top.push(("Triggers".into(), J::List(Vec::new())));
        if options.summary {
            top.push(("Execution Time".into(), msf(execution)));
        }
    }
    let mut out = String::new();
    J::List(vec![J::Obj(top)]).render(0, &mut out);
    out
}

/// A ModifyTable node over the plan of its rows, as JSON.
fn modify_json(
    verb: &str,
    (table, alias): (&Table, Option<&str>),
    input: &Plan,
    options: &ExplainOptions,
    sizes: &PoolSizes,
    settings: &PlannerSettings,
    io: &types::IoSettings,
) -> J {
    let s = |x: &str| J::Str(x.to_string());
    let mut f = vec![
        ("Node Type".to_string(), s("ModifyTable")),
        ("Operation".into(), s(verb)),
        ("Parallel Aware".into(), J::Raw("false".into())),
        ("Async Capable".into(), J::Raw("false".into())),
        ("Relation Name".into(), s(&table.name)),
        ("Alias".into(), s(alias.unwrap_or(&table.name))),
    ];
    if options.costs {
        let est = sql::plan::cost::estimate(input, sizes, settings);
        f.push(("Startup Cost".into(), J::Raw(format!("{:.2}", est.startup))));
        f.push(("Total Cost".into(), J::Raw(format!("{:.2}", est.total))));
        f.push(("Plan Rows".into(), J::Raw("0".into())));
        f.push(("Plan Width".into(), J::Raw("0".into())));
    }
    let mut child = explain_json(input, options, sizes, settings, None, io);
    if let J::Obj(fields) = &mut child {
        let at = fields
            .iter()
            .position(|(k, _)| k == "Parallel Aware")
            .unwrap_or(1);
        fields.insert(at, ("Parent Relationship".into(), s("Outer")));
    }
    f.push(("Plans".into(), J::List(vec![child])));
    J::Obj(f)
}

/// Runs the plan to the end, discarding rows.
fn drain(plan: &Plan, env: &mut ExecEnv) -> PgResult<()> {
    let mut op = exec::build(plan, env, None)?;
    let mut n = 0u64;
    while op.next(env)?.is_some() {
        n += 1;
        if n.is_multiple_of(256) {
            env.check_cancel()?;
        }
    }
    Ok(())
}
