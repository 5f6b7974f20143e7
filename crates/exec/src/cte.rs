//! WITH queries: CTE Scan, Recursive Union and WorkTable Scan (PostgreSQL's
//! nodeCtescan.c, nodeRecursiveunion.c, nodeWorktablescan.c, in our terms).
//!
//! A shared CTE (`Plan::CteScan::shared`, referenced more than once or from
//! a subquery) runs once per statement: its first reader runs it to the end
//! and leaves the rows in `ExecEnv::ctes`, where every reference reads them.
//! An unshared one streams its rows to its only reference, so a reader
//! stopping early (LIMIT over an endless recursion) stops the CTE too.
//! Rows are kept in memory (not spilled past work_mem yet).
//!
//! A data-modifying WITH query (`sql::plan::ModifyingCte`) is shared: its
//! first reader runs the statement to the end (`ModifyingCteRowsOp`) and
//! keeps the RETURNING rows; `finish_modifying` runs the ones nothing read
//! once the main statement is done. All run with the statement's snapshot
//! and command id, so none sees the others' changes.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use common::PgResult;
use sql::plan::{ModifyingCte, Plan};

use crate::agg::GroupKey;
use crate::ops::{build, Operator};
use crate::{ExecEnv, Row};

/// Rows of the statement's WITH queries, by CTE id.
#[derive(Default)]
pub struct CteStore {
    /// Shared CTEs already run, with the enclosing queries' rows they ran
    /// for (empty for a CTE that reads none).
    results: HashMap<usize, (Vec<Row>, Arc<Vec<Row>>)>,
    /// Each running RecursiveUnion's working table: the rows its previous
    /// round produced.
    worktables: HashMap<usize, Arc<Vec<Row>>>,
    /// The statement's data-modifying WITH queries, by CTE id.
    modifying: HashMap<usize, Arc<ModifyingCte>>,
    /// While such a statement runs: the foreign-key events its parts
    /// queued, fired when all are done (PostgreSQL fires AFTER triggers
    /// at the end of the whole statement, not of each part).
    held_ri: Option<Vec<crate::ri::RiEvent>>,
}

impl CteStore {
    /// Makes a statement's data-modifying WITH queries runnable by their
    /// references.
    pub fn register_modifying(&mut self, ctes: &[Arc<ModifyingCte>]) {
        for c in ctes {
            self.modifying.insert(c.id, c.clone());
        }
        self.held_ri = Some(Vec::new());
    }

    pub(crate) fn held_ri_events(&mut self) -> Option<&mut Vec<crate::ri::RiEvent>> {
        self.held_ri.as_mut()
    }
}

/// Runs the data-modifying WITH queries of `ctes` that no reference has
/// run, in the order written (PostgreSQL's ExecPostprocessPlan), then the
/// foreign-key events the whole statement queued.
pub fn finish_modifying(ctes: &[Arc<ModifyingCte>], env: &mut ExecEnv) -> PgResult<()> {
    for c in ctes {
        if !env.ctes.results.contains_key(&c.id) {
            let rows = run_modifying(c, env)?;
            env.ctes.results.insert(c.id, (Vec::new(), Arc::new(rows)));
        }
    }
    let events = env.ctes.held_ri.take().unwrap_or_default();
    crate::ri::RiQueue::from_events(events).run(env)
}

/// Runs a data-modifying WITH query: its RETURNING rows.
fn run_modifying(c: &ModifyingCte, env: &mut ExecEnv) -> PgResult<Vec<Row>> {
    // It belongs to the top level, whatever query level reads it first.
    let outer = std::mem::take(&mut env.outer);
    let r = crate::dml::run_statement(&c.statement, env);
    env.outer = outer;
    Ok(r?.1)
}

/// `Plan::ModifyingCteRows`: runs the statement on the first call. Its
/// CTE Scan is shared, so this runs once per statement.
pub(crate) struct ModifyingCteRowsOp {
    id: usize,
    rows: Option<std::vec::IntoIter<Row>>,
}

impl ModifyingCteRowsOp {
    pub(crate) fn new(id: usize) -> Self {
        ModifyingCteRowsOp { id, rows: None }
    }
}

impl Operator for ModifyingCteRowsOp {
    fn next(&mut self, env: &mut ExecEnv) -> PgResult<Option<Row>> {
        if self.rows.is_none() {
            let Some(c) = env.ctes.modifying.get(&self.id).cloned() else {
                return Err(common::PgError::internal(
                    "data-modifying WITH query not registered",
                ));
            };
            self.rows = Some(run_modifying(&c, env)?.into_iter());
        }
        Ok(self.rows.as_mut().and_then(|r| r.next()))
    }
}

pub(crate) enum CteScanOp<'p> {
    /// A shared CTE, run on the first call.
    Shared {
        id: usize,
        plan: &'p Plan,
        /// How many enclosing queries' rows its result depends on.
        outer_rows: usize,
        rows: Option<Arc<Vec<Row>>>,
        next: usize,
    },
    Streamed(Box<dyn Operator + 'p>),
}

impl<'p> CteScanOp<'p> {
    pub(crate) fn new(
        id: usize,
        plan: &'p Plan,
        shared: Option<usize>,
        env: &mut ExecEnv,
    ) -> PgResult<Self> {
        Ok(match shared {
            Some(outer_rows) => CteScanOp::Shared {
                id,
                plan,
                outer_rows,
                rows: None,
                next: 0,
            },
            None => CteScanOp::Streamed(build(plan, env, None)?),
        })
    }
}

impl Operator for CteScanOp<'_> {
    fn next(&mut self, env: &mut ExecEnv) -> PgResult<Option<Row>> {
        match self {
            CteScanOp::Streamed(op) => op.next(env),
            CteScanOp::Shared {
                id,
                plan,
                outer_rows,
                rows,
                next,
            } => {
                if rows.is_none() {
                    let outer = &env.outer[..(*outer_rows).min(env.outer.len())];
                    let stored = env
                        .ctes
                        .results
                        .get(id)
                        .filter(|(ran_for, _)| ran_for.as_slice() == outer)
                        .map(|(_, r)| r.clone());
                    let outer = outer.to_vec();
                    *rows = Some(match stored {
                        Some(r) => r,
                        None => {
                            let mut op = build(plan, env, None)?;
                            let mut all = Vec::new();
                            while let Some(r) = op.next(env)? {
                                all.push(r);
                            }
                            let all = Arc::new(all);
                            env.ctes.results.insert(*id, (outer, all.clone()));
                            all
                        }
                    });
                }
                let rows = rows.as_ref().expect("filled above");
                let r = rows.get(*next).cloned();
                *next += 1;
                Ok(r)
            }
        }
    }
}

pub(crate) struct RecursiveUnionOp<'p> {
    id: usize,
    recursive: &'p Plan,
    /// The term producing rows now: the non-recursive one, then each round
    /// of the recursive one.
    current: Option<Box<dyn Operator + 'p>>,
    /// Rows produced in this round (the next round's working table).
    produced: Vec<Row>,
    /// UNION (not ALL): every row produced so far.
    seen: Option<HashSet<GroupKey>>,
}

impl<'p> RecursiveUnionOp<'p> {
    pub(crate) fn new(
        id: usize,
        base: &'p Plan,
        recursive: &'p Plan,
        distinct: bool,
        env: &mut ExecEnv,
    ) -> PgResult<Self> {
        Ok(RecursiveUnionOp {
            id,
            recursive,
            current: Some(build(base, env, None)?),
            produced: Vec::new(),
            seen: distinct.then(HashSet::new),
        })
    }
}

impl Operator for RecursiveUnionOp<'_> {
    fn next(&mut self, env: &mut ExecEnv) -> PgResult<Option<Row>> {
        loop {
            let Some(op) = self.current.as_mut() else {
                return Ok(None);
            };
            env.check_cancel()?;
            match op.next(env)? {
                Some(row) => {
                    if let Some(seen) = &mut self.seen {
                        if !seen.insert(GroupKey(row.clone())) {
                            continue;
                        }
                    }
                    self.produced.push(row.clone());
                    return Ok(Some(row));
                }
                None => {
                    self.current = None;
                    if self.produced.is_empty() {
                        env.ctes.worktables.remove(&self.id);
                        return Ok(None);
                    }
                    // The next round reads what this one produced.
                    let work = Arc::new(std::mem::take(&mut self.produced));
                    env.ctes.worktables.insert(self.id, work);
                    self.current = Some(build(self.recursive, env, None)?);
                }
            }
        }
    }
}

/// Reads the working table its RecursiveUnion set before building this
/// round's operators.
pub(crate) struct WorkTableScanOp {
    rows: Arc<Vec<Row>>,
    next: usize,
}

impl WorkTableScanOp {
    pub(crate) fn new(id: usize, env: &ExecEnv) -> Self {
        WorkTableScanOp {
            rows: env.ctes.worktables.get(&id).cloned().unwrap_or_default(),
            next: 0,
        }
    }
}

impl Operator for WorkTableScanOp {
    fn next(&mut self, _env: &mut ExecEnv) -> PgResult<Option<Row>> {
        let r = self.rows.get(self.next).cloned();
        self.next += 1;
        Ok(r)
    }
}
