//! Pull-based operators (PostgreSQL's executor nodes), built from a `Plan`.

use std::cmp::Ordering;
use std::collections::{HashMap, HashSet, VecDeque};

use access::heap::HeapScan;
use access::tuple::Deformer;
use common::{PgError, PgResult, SqlState};
use sql::expr::Expr;
use sql::plan::explain::node_key;
use sql::plan::{JoinKind, Plan, SetOpKind, SortKey};
use types::ops::compare;
use types::{DataType, Value};

use crate::agg::GroupKey;
use crate::eval::{eval, eval_qual};
use crate::{ExecEnv, Row};

pub trait Operator {
    fn next(&mut self, env: &mut ExecEnv) -> PgResult<Option<Row>>;
}

pub use sql::plan::needed::Needed;
use sql::plan::needed::{mark, needed_with, split_needed};

/// One past the last column a mask marks (the row length a scan emits).
fn mask_len(mask: &[bool]) -> usize {
    mask.iter().rposition(|b| *b).map_or(0, |i| i + 1)
}

/// Builds the operator tree for a parent that reads the columns `needed`
/// marks (None: all; a client, DML and subqueries read all): scans decode
/// only those (and what their quals read), joins keep only those. Under
/// EXPLAIN ANALYZE every operator is wrapped to count its rows, loops and
/// time.
pub fn build<'p>(
    plan: &'p Plan,
    env: &mut ExecEnv,
    needed: Needed,
) -> PgResult<Box<dyn Operator + 'p>> {
    build_bounded(plan, env, needed, None)
}

/// `build`, telling a sort below (through projections) that its parent reads
/// at most `bound` rows (PostgreSQL's ExecSetTupleBound), so it keeps only
/// those in a heap.
pub(crate) fn build_bounded<'p>(
    plan: &'p Plan,
    env: &mut ExecEnv,
    needed: Needed,
    bound: Option<usize>,
) -> PgResult<Box<dyn Operator + 'p>> {
    let op = build_node(plan, env, needed, bound)?;
    match env.instrument.as_mut() {
        None => Ok(op),
        Some(ins) => {
            let key = node_key(plan);
            ins.stats.entry(key).or_default().loops += 1;
            Ok(Box::new(Instrumented {
                inner: op,
                key,
                elapsed: std::time::Duration::ZERO,
                rows: 0,
            }))
        }
    }
}

/// Counts an operator's rows and time for EXPLAIN ANALYZE.
struct Instrumented<'p> {
    inner: Box<dyn Operator + 'p>,
    key: usize,
    /// Time spent in this loop so far.
    elapsed: std::time::Duration,
    /// Rows returned in this loop so far.
    rows: u64,
}

impl Operator for Instrumented<'_> {
    fn next(&mut self, env: &mut ExecEnv) -> PgResult<Option<Row>> {
        let (timing, buffers) = env
            .instrument
            .as_ref()
            .map_or((false, false), |i| (i.timing, i.buffers));
        let start = timing.then(std::time::Instant::now);
        // Counts include the inputs' (they run inside this call), as
        // PostgreSQL's instrumentation counts them.
        let before = buffers.then(storage::buffer::buffer_usage);
        let r = self.inner.next(env)?;
        let dt = start.map(|s| s.elapsed()).unwrap_or_default();
        self.elapsed += dt;
        if let Some(st) = env
            .instrument
            .as_mut()
            .and_then(|i| i.stats.get_mut(&self.key))
        {
            if let Some(b) = before {
                st.buffers += storage::buffer::buffer_usage() - b;
            }
            st.total += dt;
            if r.is_some() {
                if self.rows == 0 {
                    st.first_row += self.elapsed;
                }
                self.rows += 1;
                st.rows += 1;
            }
        }
        Ok(r)
    }
}

/// Adds rows a node's filter rejected to its EXPLAIN ANALYZE counters.
pub(crate) fn count_removed(env: &mut ExecEnv, key: usize, n: u64) {
    if n > 0 {
        if let Some(st) = env.instrument.as_mut().and_then(|i| i.stats.get_mut(&key)) {
            st.removed_by_filter += n;
        }
    }
}

/// Counts an index-only scan's visit to the heap (EXPLAIN ANALYZE's
/// Heap Fetches).
pub(crate) fn count_heap_fetch(env: &mut ExecEnv, key: usize) {
    if let Some(st) = env.instrument.as_mut().and_then(|i| i.stats.get_mut(&key)) {
        st.heap_fetches += 1;
    }
}

fn build_node<'p>(
    plan: &'p Plan,
    env: &mut ExecEnv,
    needed: Needed,
    bound: Option<usize>,
) -> PgResult<Box<dyn Operator + 'p>> {
    Ok(match plan {
        Plan::SeqScan {
            table,
            qual,
            index: Some(path),
            ..
        } if path.index_only => Box::new(crate::indexscan::IndexOnlyScanOp {
            tids: crate::indexscan::IndexTids::new(table, path, env)?,
            table,
            qual,
            key_columns: path
                .index
                .keys
                .iter()
                .map(|k| k.attnum as usize - 1)
                .collect(),
            map: access::heap::visibilitymap::MapReader::new(table.locator()),
            keys: Vec::new(),
            key: node_key(plan),
            counters: env.hooks.counters_to_update(table.oid),
            fetched: 0,
        }),
        Plan::SeqScan {
            table,
            qual,
            tid,
            system,
            index: Some(path),
            ..
        } => Box::new(crate::indexscan::IndexScanOp {
            tids: crate::indexscan::IndexTids::new(table, path, env)?,
            table,
            types: table.column_types(),
            qual,
            with_tid: *tid,
            system,
            key: node_key(plan),
            counters: env.hooks.counters_to_update(table.oid),
            fetched: 0,
        }),
        Plan::SeqScan {
            table,
            qual,
            tid,
            system,
            ..
        } => {
            let width = table.columns.len();
            let quals_refs: Vec<&Expr> = qual.iter().collect();
            // System columns come from the raw version and quals may read
            // them: such a scan decodes every column and evaluates its
            // quals on the whole row (the late path).
            let mask = needed_with(needed, &quals_refs).filter(|_| system.is_empty());
            let full = width + *tid as usize + system.len();
            let out = mask.as_deref().map_or(full, mask_len).min(full);
            let quals = qual
                .iter()
                .map(|q| {
                    (
                        q,
                        if q.has_subquery() {
                            width
                        } else {
                            q.columns_needed()
                        },
                    )
                })
                .collect();
            let late_quals = !qual.iter().all(Expr::safe_under_page_lock) || !system.is_empty();
            Box::new(SeqScanOp {
                table,
                with_tid: *tid,
                system,
                late_quals,
                late: Vec::new(),
                counters: env.hooks.counters_to_update(table.oid),
                tuples: 0,
                scan: match &env.parallel_scan {
                    Some(blocks) => HeapScan::parallel(env.pool, table.locator(), blocks.clone()),
                    None => HeapScan::new(env.pool, table.locator())?,
                },
                toast: table.toast_source(env.pool),
                types: table.column_types(),
                quals,
                out,
                mask,
                buffered: VecDeque::new(),
                key: node_key(plan),
            })
        }
        Plan::LockRows { input, marks } => Box::new(crate::lockrows::LockRowsOp::new(
            build(input, env, None)?,
            input,
            marks,
        )),
        Plan::Values { rows, .. } => Box::new(ValuesOp { rows, next: 0 }),
        Plan::SystemView { name, .. } => {
            let cx = crate::system_views::ViewContext {
                catalog: env.catalog,
                db_oid: env.db_oid,
                db_name: env.db_name,
                pool: env.pool,
                tm: env.tm,
                server: &*env.hooks,
                io: &env.io,
            };
            Box::new(RowsOp {
                rows: crate::system_views::rows(name, &cx)?.into_iter(),
            })
        }
        Plan::Filter { input, qual } => {
            let n = needed_with(needed, &[qual]);
            Box::new(FilterOp {
                input: build(input, env, n)?,
                qual,
                key: node_key(plan),
            })
        }
        Plan::Project { input, exprs } => {
            let refs: Vec<&Expr> = exprs.iter().collect();
            let n = needed_with(Some(Vec::new()), &refs);
            Box::new(ProjectOp {
                input: build_bounded(input, env, n, bound)?,
                exprs,
            })
        }
        Plan::ProjectSet { input, srfs, exprs } => Box::new(crate::srf::ProjectSetOp::new(
            build(input, env, None)?,
            srfs,
            exprs,
        )),
        Plan::FunctionScan {
            calls, ordinality, ..
        } => Box::new(crate::srf::FunctionScanOp::new(calls, *ordinality, env)?),
        Plan::LateralJoin {
            left,
            right,
            kind,
            on,
            left_width,
            right_width,
        } => {
            // The right side reads the whole left row as its outer row.
            let all = needed_with(needed, &on.iter().collect::<Vec<_>>());
            let (_, rn) = split_needed(&all, *left_width);
            Box::new(crate::lateral::LateralJoinOp::new(
                build(left, env, None)?,
                (right, rn),
                *kind,
                on.as_ref(),
                *right_width,
            ))
        }
        Plan::NestedLoop {
            left,
            right,
            kind,
            on,
            left_width,
            right_width,
        } => {
            let all = needed_with(needed, &on.iter().collect::<Vec<_>>());
            let (ln, rn) = split_needed(&all, *left_width);
            Box::new(NestedLoopOp::new(
                build(left, env, ln)?,
                (right, rn),
                *kind,
                on.iter().collect(),
                (*left_width, *right_width),
                node_key(plan),
            ))
        }
        Plan::HashJoin {
            left,
            right,
            kind,
            hash_cond,
            join_filter,
            left_width,
            right_width,
        } => {
            let mut refs: Vec<&Expr> = hash_cond.iter().collect();
            refs.extend(join_filter.iter());
            // The hash keys are evaluated before rows are kept: the right
            // rows keep only what the parent and the join filter read.
            let filter: Vec<&Expr> = join_filter.iter().collect();
            let kept = needed_with(needed.clone(), &filter);
            let all = needed_with(needed, &refs);
            let (ln, rn) = split_needed(&all, *left_width);
            let (_, rkept) = split_needed(&kept, *left_width);
            Box::new(crate::join::HashJoinOp::new(
                build(left, env, ln)?,
                (right, rn, rkept),
                *kind,
                // Table matches satisfy the hash clauses (join.rs).
                join_filter.iter().collect(),
                crate::join::hash_keys(hash_cond, *left_width),
                (*left_width, *right_width),
                node_key(plan),
            ))
        }
        Plan::Aggregate { input, .. } if matches!(**input, Plan::Gather { .. }) => {
            let Plan::Gather {
                input: partial,
                workers,
            } = &**input
            else {
                unreachable!("matched above")
            };
            Box::new(crate::parallel::FinalizeAggregateOp::new(
                input, partial, *workers,
            ))
        }
        Plan::Gather { input, workers } => match &**input {
            Plan::Sort { keys, .. } => Box::new(crate::parallel::GatherMergeOp::new(
                plan, input, keys, *workers, needed, bound,
            )),
            _ => {
                debug_assert!(!matches!(**input, Plan::Aggregate { .. }));
                Box::new(crate::parallel::GatherOp::new(
                    plan, input, *workers, needed,
                ))
            }
        },
        Plan::Aggregate {
            input,
            keys,
            aggs,
            sets,
        } => {
            let mut refs: Vec<&Expr> = keys.iter().collect();
            for a in aggs {
                refs.extend(a.input_exprs());
            }
            let n = needed_with(Some(Vec::new()), &refs);
            Box::new(crate::hashagg::AggregateOp::new(
                build(input, env, n)?,
                keys,
                aggs,
                sets.as_deref(),
                node_key(plan),
            ))
        }
        Plan::WindowAgg {
            input,
            partition,
            order,
            frame,
            funcs,
        } => {
            let n =
                sql::plan::needed::window_needed(needed, input.width(), partition, order, funcs);
            Box::new(crate::window::WindowAggOp::new(
                build(input, env, n)?,
                partition,
                order,
                frame,
                funcs,
                input.width(),
            ))
        }
        Plan::Sort { input, keys } => Box::new(crate::sort::SortOp::new(
            build(
                input,
                env,
                needed.map(|mut m| {
                    keys.iter().for_each(|k| mark(&mut m, k.column));
                    m
                }),
            )?,
            keys,
            bound,
            node_key(plan),
        )),
        Plan::Limit {
            input,
            limit,
            offset,
            ties,
        } => {
            let empty: Row = Vec::new();
            let count =
                |e: &Option<Expr>, env: &mut ExecEnv, what: &str, code| -> PgResult<Option<i64>> {
                    match e {
                        None => Ok(None),
                        Some(e) => match eval(e, &empty, env)? {
                            Value::Null => Ok(None),
                            Value::Int8(n) if n < 0 => {
                                Err(PgError::new(code, format!("{what} must not be negative")))
                            }
                            Value::Int8(n) => Ok(Some(n)),
                            _ => Err(PgError::internal("LIMIT is not bigint")),
                        },
                    }
                };
            let limit = count(limit, env, "LIMIT", SqlState::INVALID_ROW_COUNT_IN_LIMIT)?;
            let offset =
                count(offset, env, "OFFSET", SqlState::INVALID_ROW_COUNT_IN_OFFSET)?.unwrap_or(0);
            // With ties the sort cannot stop at the count: the rows tied
            // with the last one come after it.
            let bound = match ties.is_empty() {
                true => limit.map(|l| l.saturating_add(offset) as usize),
                false => None,
            };
            let needed = needed.map(|mut m| {
                ties.iter().for_each(|k| mark(&mut m, k.column));
                m
            });
            Box::new(LimitOp {
                input: build_bounded(input, env, needed, bound)?,
                remaining: limit,
                skip: offset,
                ties,
                last: None,
            })
        }
        Plan::Distinct { input } => Box::new(DistinctOp {
            input: build(input, env, None)?,
            seen: HashSet::new(),
        }),
        Plan::CteScan {
            id,
            plan,
            shared,
            outer_rows,
            ..
        } => Box::new(crate::cte::CteScanOp::new(
            *id,
            plan,
            shared.then_some(*outer_rows),
            env,
        )?),
        Plan::RecursiveUnion {
            id,
            base,
            recursive,
            distinct,
            ..
        } => Box::new(crate::cte::RecursiveUnionOp::new(
            *id, base, recursive, *distinct, env,
        )?),
        Plan::WorkTableScan { id, .. } => Box::new(crate::cte::WorkTableScanOp::new(*id, env)),
        Plan::ModifyingCteRows { id, .. } => Box::new(crate::cte::ModifyingCteRowsOp::new(*id)),
        Plan::SetOp {
            left,
            right,
            op,
            all,
        } => Box::new(SetOpOp {
            left: Some(build(left, env, None)?),
            right: Some(build(right, env, None)?),
            op: *op,
            all: *all,
            output: None,
        }),
    })
}

struct SeqScanOp<'p> {
    /// The table's statistics, told the scan and its tuples when the
    /// operator is dropped (None: track_counts is off).
    counters: Option<std::sync::Arc<crate::table_stats::TableCounters>>,
    /// Visible tuples the heap scan returned (seq_tup_read).
    tuples: u64,
    scan: HeapScan,
    types: Vec<DataType>,
    quals: Vec<(&'p Expr, usize)>,
    /// Columns emitted: one past the table's is the tid (`Plan::SeqScan::tid`).
    out: usize,
    /// The columns decoded (None: all up to `out`); the rest stay NULL.
    mask: Option<Vec<bool>>,
    buffered: VecDeque<Row>,
    /// The plan node (EXPLAIN ANALYZE's rows removed by the filter).
    key: usize,
    /// A qual may wait or read other pages (`Expr::safe_under_page_lock`):
    /// the page's rows are decoded under its lock and the quals evaluated
    /// after it is released, through `late`.
    late_quals: bool,
    late: Vec<(access::heap::Tid, Row)>,
    /// The table's TOAST relation, for values moved out of line.
    toast: Option<access::toast::ToastSource>,
    table: &'p catalog::Table,
    /// Whether `out` counts the locking tid (`Plan::SeqScan::tid`).
    with_tid: bool,
    /// Emitted after the columns and tid; when any, only the late path
    /// runs, with every column decoded.
    system: &'p [sql::plan::SystemColumn],
}

impl SeqScanOp<'_> {
    /// One page with the quals evaluated after its lock is released.
    fn next_page_late(&mut self, env: &mut ExecEnv) -> PgResult<bool> {
        let (snapshot, tm) = (env.snapshot, env.tm);
        let types = &self.types;
        let mask = self.mask.as_deref();
        let columns_out = self.out.min(types.len());
        let decode = self
            .quals
            .iter()
            .map(|(_, need)| *need)
            .max()
            .unwrap_or(0)
            .max(columns_out);
        let late = &mut self.late;
        let tuples = &mut self.tuples;
        let toast = self.toast;
        let (table, with_tid, system) = (self.table, self.with_tid, self.system);
        let more = self.scan.next_page(snapshot, tm, |tid, t| {
            *tuples += 1;
            let mut row = Vec::with_capacity(decode + 1 + system.len());
            Deformer::new(t, toast).deform_masked(types, decode, mask, &mut row)?;
            if !system.is_empty() {
                row.resize(types.len(), Value::Null);
                if with_tid {
                    row.push(crate::lockrows::tid_value(tid));
                }
                crate::system_columns::push_values(system, tid, t, table, types, &mut row)?;
            }
            late.push((tid, row));
            Ok(())
        })?;
        let mut removed = 0u64;
        let rows = std::mem::take(&mut self.late);
        'rows: for (tid, mut row) in rows {
            for (q, _) in &self.quals {
                if !eval_qual(q, &row, env)? {
                    removed += 1;
                    continue 'rows;
                }
            }
            if self.system.is_empty() {
                row.truncate(columns_out);
                if self.out > columns_out {
                    row.push(crate::lockrows::tid_value(tid));
                }
            }
            self.buffered.push_back(row);
        }
        if env.instrument.is_some() {
            count_removed(env, self.key, removed);
        }
        Ok(more)
    }
}

impl Operator for SeqScanOp<'_> {
    fn next(&mut self, env: &mut ExecEnv) -> PgResult<Option<Row>> {
        loop {
            if let Some(r) = self.buffered.pop_front() {
                return Ok(Some(r));
            }
            env.check_cancel()?;
            if self.late_quals {
                if !self.next_page_late(env)? && self.buffered.is_empty() {
                    return Ok(None);
                }
                continue;
            }
            let (snapshot, tm) = (env.snapshot, env.tm);
            let types = &self.types;
            let quals = &self.quals;
            let out = self.out;
            let mask = self.mask.as_deref();
            let buffered = &mut self.buffered;
            // Decode lazily: each qual only as far as it reads, the rest
            // only for rows that pass (a page's tuples in one tight loop).
            // One row buffer for the page: only rows that pass are moved out.
            let mut row = Vec::new();
            let mut removed = 0u64;
            let columns_out = out.min(types.len());
            let tuples = &mut self.tuples;
            let toast = self.toast;
            // count(*) reads no column: leave the tuple's bytes untouched.
            let reads_columns = !quals.is_empty() || columns_out > 0;
            let more = self.scan.next_page(snapshot, tm, |tid, t| {
                *tuples += 1;
                row.clear();
                if !reads_columns {
                    if out > columns_out {
                        row.push(crate::lockrows::tid_value(tid));
                    }
                    buffered.push_back(std::mem::replace(&mut row, Vec::with_capacity(out)));
                    return Ok(());
                }
                let mut d = Deformer::new(t, toast);
                for (q, need) in quals {
                    if d.decoded() < *need {
                        d.deform_masked(types, *need, mask, &mut row)?;
                    }
                    if !eval_qual(q, &row, env)? {
                        removed += 1;
                        return Ok(());
                    }
                }
                if d.decoded() < columns_out {
                    d.deform_masked(types, columns_out, mask, &mut row)?;
                }
                if out > columns_out {
                    row.truncate(columns_out);
                    row.push(crate::lockrows::tid_value(tid));
                }
                buffered.push_back(std::mem::replace(&mut row, Vec::with_capacity(out)));
                Ok(())
            })?;
            if env.instrument.is_some() {
                count_removed(env, self.key, removed);
            }
            if !more {
                return Ok(None);
            }
        }
    }
}

impl Drop for SeqScanOp<'_> {
    fn drop(&mut self) {
        if let Some(c) = &self.counters {
            c.count_seq_scan(self.tuples);
        }
    }
}

struct ValuesOp<'p> {
    rows: &'p [Vec<Expr>],
    next: usize,
}
impl Operator for ValuesOp<'_> {
    fn next(&mut self, env: &mut ExecEnv) -> PgResult<Option<Row>> {
        let Some(exprs) = self.rows.get(self.next) else {
            return Ok(None);
        };
        self.next += 1;
        let empty: Row = Vec::new();
        Ok(Some(
            exprs
                .iter()
                .map(|e| eval(e, &empty, env))
                .collect::<PgResult<_>>()?,
        ))
    }
}

/// Rows computed when the operator was built.
struct RowsOp {
    rows: std::vec::IntoIter<Row>,
}

impl Operator for RowsOp {
    fn next(&mut self, _env: &mut ExecEnv) -> PgResult<Option<Row>> {
        Ok(self.rows.next())
    }
}

struct FilterOp<'p> {
    input: Box<dyn Operator + 'p>,
    qual: &'p Expr,
    key: usize,
}
impl Operator for FilterOp<'_> {
    fn next(&mut self, env: &mut ExecEnv) -> PgResult<Option<Row>> {
        while let Some(r) = self.input.next(env)? {
            if eval_qual(self.qual, &r, env)? {
                return Ok(Some(r));
            }
            if env.instrument.is_some() {
                count_removed(env, self.key, 1);
            }
        }
        Ok(None)
    }
}

struct ProjectOp<'p> {
    input: Box<dyn Operator + 'p>,
    exprs: &'p [Expr],
}
impl Operator for ProjectOp<'_> {
    fn next(&mut self, env: &mut ExecEnv) -> PgResult<Option<Row>> {
        let Some(r) = self.input.next(env)? else {
            return Ok(None);
        };
        Ok(Some(
            self.exprs
                .iter()
                .map(|e| eval(e, &r, env))
                .collect::<PgResult<_>>()?,
        ))
    }
}

/// Nested loop: the right input is read once into memory, then every right
/// row is tried with each left row (hash joins are in join.rs).
struct NestedLoopOp<'p> {
    left: Box<dyn Operator + 'p>,
    right_plan: &'p Plan,
    /// The right input's columns the join reads.
    right_needed: Needed,
    right_rows: Option<Vec<Row>>,
    right_matched: Vec<bool>,
    kind: JoinKind,
    /// Checked on every candidate pair.
    quals: Vec<&'p Expr>,
    left_width: usize,
    right_width: usize,
    current: Option<Row>,
    pos: usize,
    matched: bool,
    tail: Option<usize>,
    /// Pairs tried since the last interrupt check.
    since_check: u32,
    /// The plan node (EXPLAIN ANALYZE).
    key: usize,
}

impl<'p> NestedLoopOp<'p> {
    fn new(
        left: Box<dyn Operator + 'p>,
        (right_plan, right_needed): (&'p Plan, Needed),
        kind: JoinKind,
        quals: Vec<&'p Expr>,
        (left_width, right_width): (usize, usize),
        key: usize,
    ) -> Self {
        NestedLoopOp {
            key,
            left,
            right_plan,
            right_needed,
            right_rows: None,
            right_matched: Vec::new(),
            kind,
            quals,
            left_width,
            right_width,
            current: None,
            pos: 0,
            matched: false,
            tail: None,
            since_check: 0,
        }
    }
}

/// Pairs a join tries between interrupt checks: a cross join of two large
/// inputs must still notice a cancel or timeout within milliseconds.
const PAIRS_PER_CHECK: u32 = 4096;

impl Operator for NestedLoopOp<'_> {
    fn next(&mut self, env: &mut ExecEnv) -> PgResult<Option<Row>> {
        if self.right_rows.is_none() {
            let mut op = build(self.right_plan, env, self.right_needed.take())?;
            let mut rows = Vec::new();
            while let Some(r) = op.next(env)? {
                rows.push(r);
                if rows.len().is_multiple_of(PAIRS_PER_CHECK as usize) {
                    env.check_cancel()?;
                }
            }
            self.right_matched = vec![false; rows.len()];
            self.right_rows = Some(rows);
        }
        loop {
            if let Some(t) = &mut self.tail {
                // Unmatched right rows for RIGHT/FULL joins.
                let rows = self.right_rows.as_ref().unwrap();
                while *t < rows.len() {
                    let i = *t;
                    *t += 1;
                    if !self.right_matched[i] {
                        return Ok(Some(joined_row(None, self.left_width, &rows[i])));
                    }
                }
                return Ok(None);
            }
            if self.current.is_none() {
                match self.left.next(env)? {
                    Some(r) => {
                        self.current = Some(r);
                        self.pos = 0;
                        self.matched = false;
                    }
                    None => {
                        if matches!(self.kind, JoinKind::Right | JoinKind::Full) {
                            self.tail = Some(0);
                            continue;
                        }
                        return Ok(None);
                    }
                }
            }
            let left = self.current.as_ref().unwrap();
            let rows = self.right_rows.as_ref().unwrap();
            while self.pos < rows.len() {
                self.since_check += 1;
                if self.since_check >= PAIRS_PER_CHECK {
                    self.since_check = 0;
                    env.check_cancel()?;
                }
                let i = self.pos;
                self.pos += 1;
                let out = joined_row(Some(left), self.left_width, &rows[i]);
                let mut ok = true;
                for q in &self.quals {
                    if !eval_qual(q, &out, env)? {
                        ok = false;
                        if env.instrument.is_some() {
                            count_removed(env, self.key, 1);
                        }
                        break;
                    }
                }
                if ok {
                    self.matched = true;
                    self.right_matched[i] = true;
                    return Ok(Some(out));
                }
            }
            let left = self.current.take().unwrap();
            if !self.matched && matches!(self.kind, JoinKind::Left | JoinKind::Full) {
                let mut out = left;
                out.resize(self.left_width + self.right_width, Value::Null);
                return Ok(Some(out));
            }
        }
    }
}

/// A joined row: the left row (or NULLs) padded to `left_width` (a pruned
/// input's rows may end early), then the right row's values.
pub(crate) fn joined_row(left: Option<&Row>, left_width: usize, right: &[Value]) -> Row {
    let mut out = Vec::with_capacity(left_width + right.len());
    if let Some(l) = left {
        out.extend(l.iter().cloned());
    }
    out.resize(left_width, Value::Null);
    out.extend(right.iter().cloned());
    out
}

/// Orders rows by sort keys (NULLs last ascending, first descending, unless given).
pub fn compare_rows(a: &Row, b: &Row, keys: &[SortKey]) -> Ordering {
    for k in keys {
        let (x, y) = (&a[k.column], &b[k.column]);
        let o = match (x.is_null(), y.is_null()) {
            (true, true) => Ordering::Equal,
            (true, false) => {
                if k.nulls_first {
                    Ordering::Less
                } else {
                    Ordering::Greater
                }
            }
            (false, true) => {
                if k.nulls_first {
                    Ordering::Greater
                } else {
                    Ordering::Less
                }
            }
            _ => {
                let o = compare(x, y);
                if k.descending {
                    o.reverse()
                } else {
                    o
                }
            }
        };
        if o != Ordering::Equal {
            return o;
        }
    }
    Ordering::Equal
}

struct LimitOp<'p> {
    input: Box<dyn Operator + 'p>,
    remaining: Option<i64>,
    skip: i64,
    /// WITH TIES: the sort keys, and the last row counted once the count
    /// is reached (rows equal to it on the keys follow).
    ties: &'p [SortKey],
    last: Option<Row>,
}
impl Operator for LimitOp<'_> {
    fn next(&mut self, env: &mut ExecEnv) -> PgResult<Option<Row>> {
        loop {
            if self.remaining == Some(0) {
                // FETCH FIRST 0 ROWS WITH TIES returns nothing, as
                // PostgreSQL's: only a counted row has ties.
                let Some(last) = &self.last else {
                    return Ok(None);
                };
                let Some(r) = self.input.next(env)? else {
                    return Ok(None);
                };
                let tied = self.ties.iter().all(|k| {
                    let (a, b) = (&last[k.column], &r[k.column]);
                    match (a.is_null(), b.is_null()) {
                        (true, true) => true,
                        (false, false) => compare(a, b) == Ordering::Equal,
                        _ => false,
                    }
                });
                if !tied {
                    self.last = None;
                    return Ok(None);
                }
                return Ok(Some(r));
            }
            let Some(r) = self.input.next(env)? else {
                return Ok(None);
            };
            if self.skip > 0 {
                self.skip -= 1;
                continue;
            }
            if let Some(n) = &mut self.remaining {
                *n -= 1;
                if *n == 0 && !self.ties.is_empty() {
                    self.last = Some(r.clone());
                }
            }
            return Ok(Some(r));
        }
    }
}

struct DistinctOp<'p> {
    input: Box<dyn Operator + 'p>,
    seen: HashSet<GroupKey>,
}
impl Operator for DistinctOp<'_> {
    fn next(&mut self, env: &mut ExecEnv) -> PgResult<Option<Row>> {
        while let Some(r) = self.input.next(env)? {
            if self.seen.insert(GroupKey(r.clone())) {
                return Ok(Some(r));
            }
        }
        Ok(None)
    }
}

struct SetOpOp<'p> {
    left: Option<Box<dyn Operator + 'p>>,
    right: Option<Box<dyn Operator + 'p>>,
    op: SetOpKind,
    all: bool,
    output: Option<std::vec::IntoIter<Row>>,
}
impl Operator for SetOpOp<'_> {
    fn next(&mut self, env: &mut ExecEnv) -> PgResult<Option<Row>> {
        if self.op == SetOpKind::Union && self.all {
            if let Some(l) = &mut self.left {
                if let Some(r) = l.next(env)? {
                    return Ok(Some(r));
                }
                self.left = None;
            }
            return match &mut self.right {
                Some(r) => r.next(env),
                None => Ok(None),
            };
        }
        if self.output.is_none() {
            let drain = |op: &mut Option<Box<dyn Operator + '_>>,
                         env: &mut ExecEnv|
             -> PgResult<Vec<Row>> {
                let mut v = Vec::new();
                if let Some(o) = op {
                    while let Some(r) = o.next(env)? {
                        v.push(r);
                    }
                }
                Ok(v)
            };
            let left = drain(&mut self.left, env)?;
            let right = drain(&mut self.right, env)?;
            let mut counts: HashMap<GroupKey, i64> = HashMap::new();
            let mut out = Vec::new();
            match self.op {
                SetOpKind::Union => {
                    let mut seen = HashSet::new();
                    for r in left.into_iter().chain(right) {
                        if seen.insert(GroupKey(r.clone())) {
                            out.push(r);
                        }
                    }
                }
                SetOpKind::Intersect | SetOpKind::Except => {
                    for r in right {
                        *counts.entry(GroupKey(r)).or_default() += 1;
                    }
                    let mut emitted = HashSet::new();
                    for r in left {
                        let k = GroupKey(r.clone());
                        let c = counts.get(&k).copied().unwrap_or(0);
                        let keep = match self.op {
                            SetOpKind::Intersect => c > 0,
                            _ => c == 0,
                        };
                        if self.all {
                            if self.op == SetOpKind::Intersect && c > 0 {
                                *counts.get_mut(&k).unwrap() -= 1;
                                out.push(r);
                            } else if self.op == SetOpKind::Except {
                                if c > 0 {
                                    *counts.get_mut(&k).unwrap() -= 1;
                                } else {
                                    out.push(r);
                                }
                            }
                        } else if keep && emitted.insert(k) {
                            out.push(r);
                        }
                    }
                }
            }
            self.output = Some(out.into_iter());
        }
        Ok(self.output.as_mut().unwrap().next())
    }
}
