//! EXPLAIN [ANALYZE]: prints the plan (sql::plan::explain) and, for
//! ANALYZE, runs it first with per-node counters (exec::Instrumentation),
//! discarding its rows as PostgreSQL does.

use std::time::{Duration, Instant};

use catalog::Table;
use common::{PgError, PgResult};
use exec::ExecEnv;
use sql::plan::explain::{explain_plan, quote_ident};
use sql::plan::{BoundStatement, ExplainFormat, ExplainOptions, Plan, PlannerSettings};
use storage::buffer::BufferPool;
use types::{TypeId, Value};

use crate::session_api::{ColumnDesc, ResultSink};

/// Relation sizes for the planner, read through `access`.
/// Relation sizes for one planning, each asked of `access` once: the join
/// search estimates the same relations again for every candidate.
pub(crate) struct PoolSizes {
    pool: &'static BufferPool,
    known: std::cell::RefCell<Vec<(common::RelFileLocator, u64)>>,
}

impl PoolSizes {
    pub fn new(pool: &'static BufferPool) -> Self {
        PoolSizes {
            pool,
            known: Default::default(),
        }
    }
}

impl sql::plan::RelationSizes for PoolSizes {
    fn blocks(&self, table: &Table) -> u64 {
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
    if options.format != ExplainFormat::Text {
        return Err(PgError::unsupported(
            "EXPLAIN (FORMAT JSON) is not supported yet",
        ));
    }
    let sizes = PoolSizes::new(pool);
    let mut lines = Vec::new();
    match statement {
        BoundStatement::Query { plan, .. } => {
            let mut stats = None;
            let mut execution = Duration::ZERO;
            if options.analyze {
                let started = Instant::now();
                env.instrument = Some(exec::Instrumentation {
                    stats: Default::default(),
                    timing: options.timing,
                });
                let run = drain(plan, env);
                let ins = env.instrument.take();
                run?;
                execution = started.elapsed();
                stats = ins.map(|i| i.stats);
            }
            lines = explain_plan(plan, options, &sizes, settings, stats.as_ref());
            if options.summary {
                lines.push(format!("Planning Time: {}", ms(planning_time)));
            }
            if options.analyze && options.summary {
                lines.push(format!("Execution Time: {}", ms(execution)));
            }
        }
        BoundStatement::Insert { table, source, .. } => {
            if options.analyze {
                return Err(PgError::unsupported(
                    "EXPLAIN ANALYZE of INSERT, UPDATE or DELETE is not supported yet",
                ));
            }
            modify_lines(
                &mut lines, "Insert", table, source, options, &sizes, settings,
            );
        }
        BoundStatement::Update { table, qual, .. } | BoundStatement::Delete { table, qual, .. } => {
            if options.analyze {
                return Err(PgError::unsupported(
                    "EXPLAIN ANALYZE of INSERT, UPDATE or DELETE is not supported yet",
                ));
            }
            let scan = Plan::SeqScan {
                table: table.clone(),
                qual: qual.clone(),
                alias: None,
            };
            let verb = if matches!(statement, BoundStatement::Update { .. }) {
                "Update"
            } else {
                "Delete"
            };
            modify_lines(&mut lines, verb, table, &scan, options, &sizes, settings);
        }
        _ => unreachable!("the binder explains only queries and DML"),
    }
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

/// `Insert on t` over the plan of its rows, as PostgreSQL's ModifyTable.
fn modify_lines(
    lines: &mut Vec<String>,
    verb: &str,
    table: &Table,
    input: &Plan,
    options: &ExplainOptions,
    sizes: &PoolSizes,
    settings: &PlannerSettings,
) {
    let est = sql::plan::cost::estimate(input, sizes, settings);
    let mut head = format!("{verb} on {}", quote_ident(&table.name));
    if options.costs {
        head.push_str(&format!(
            "  (cost={:.2}..{:.2} rows=0 width=0)",
            est.startup, est.total
        ));
    }
    lines.push(head);
    for l in explain_plan(input, options, sizes, settings, None) {
        // The input is the ModifyTable node's child.
        let child = if l.starts_with(' ') {
            format!("      {l}")
        } else {
            format!("  ->  {l}")
        };
        lines.push(child);
    }
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
