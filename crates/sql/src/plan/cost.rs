//! PostgreSQL's cost model (`costsize.c`, `selfuncs.c`): row estimates from
//! relation sizes and default selectivities, and costs in units of one
//! sequential page fetch. The join search (`joins.rs`) and EXPLAIN both read
//! estimates from here, so what EXPLAIN prints is what the planner compared.
//!
//! A relation's tuple count is its current page count times the tuple
//! density ANALYZE saw (reltuples / relpages); a never-analysed relation's
//! density comes from its rows' estimated width, and one of fewer than 10
//! pages is taken to have 10 (PostgreSQL 14's rule, so a new table is not
//! planned as empty). Selectivities come from `selfuncs.rs`: the column's
//! statistics when ANALYZE made some, PostgreSQL's defaults otherwise.

use catalog::Table;
use types::ops::BinaryOp;
use types::{DataType, TypeId, Value};

use super::selfuncs::{self, SelCtx, VarInfo, DEFAULT_NUM_DISTINCT};
use super::{JoinKind, Plan};
use crate::expr::Expr;

/// What planning may ask of the storage layer.
pub trait RelationSizes {
    /// The relation's main-fork size in blocks.
    fn blocks(&self, table: &Table) -> u64;
    /// The catalog the statement was bound against (partitioned tables'
    /// partitions), when planning has one.
    fn catalog(&self) -> Option<&catalog::CatalogData> {
        None
    }
    /// The table's indexes, with their sizes.
    fn indexes(&self, table: &Table) -> Vec<super::IndexInfo> {
        let _ = table;
        Vec::new()
    }
    /// The table's indexes as the catalog defines them, without reading
    /// their sizes (a cheap look before `indexes`).
    fn index_defs(&self, table: &Table) -> Vec<std::sync::Arc<catalog::Index>> {
        self.indexes(table).into_iter().map(|i| i.index).collect()
    }
    /// The estimated rows of RecursiveUnion `id`'s working table, while its
    /// recursive term is planned or estimated (`WorkTableSizes`).
    fn worktable_rows(&self, id: usize) -> Option<f64> {
        let _ = id;
        None
    }
}

/// The sizes seen from inside recursive terms: the working table of each
/// RecursiveUnion in `tables` (id, rows) is guessed at ten times its
/// non-recursive term's rows, as PostgreSQL's set_cte_size_estimates does
/// for a self-reference; all else comes from `inner`.
pub struct WorkTableSizes<'a> {
    pub inner: &'a dyn RelationSizes,
    pub tables: Vec<(usize, f64)>,
}

/// The working table's estimated rows for a non-recursive term of `base_rows`.
pub fn worktable_rows(base_rows: f64) -> f64 {
    clamp_rows(10.0 * base_rows)
}

impl WorkTableSizes<'_> {
    /// Inside RecursiveUnion `id` whose non-recursive term has `base_rows`.
    pub fn new(inner: &dyn RelationSizes, id: usize, base_rows: f64) -> WorkTableSizes<'_> {
        WorkTableSizes {
            inner,
            tables: vec![(id, worktable_rows(base_rows))],
        }
    }
}

impl RelationSizes for WorkTableSizes<'_> {
    fn blocks(&self, table: &Table) -> u64 {
        self.inner.blocks(table)
    }
    fn catalog(&self) -> Option<&catalog::CatalogData> {
        self.inner.catalog()
    }
    fn indexes(&self, table: &Table) -> Vec<super::IndexInfo> {
        self.inner.indexes(table)
    }
    fn index_defs(&self, table: &Table) -> Vec<std::sync::Arc<catalog::Index>> {
        self.inner.index_defs(table)
    }
    fn worktable_rows(&self, id: usize) -> Option<f64> {
        match self.tables.iter().find(|(t, _)| *t == id) {
            Some(&(_, rows)) => Some(rows),
            None => self.inner.worktable_rows(id),
        }
    }
}

/// Planner settings, parsed once from the session's GUCs.
#[derive(Debug, Clone, PartialEq)]
pub struct PlannerSettings {
    pub enable_seqscan: bool,
    pub enable_indexscan: bool,
    pub enable_indexonlyscan: bool,
    pub enable_bitmapscan: bool,
    pub enable_hashjoin: bool,
    pub enable_nestloop: bool,
    pub enable_sort: bool,
    pub enable_hashagg: bool,
    pub enable_material: bool,
    pub seq_page_cost: f64,
    pub random_page_cost: f64,
    pub cpu_tuple_cost: f64,
    pub cpu_index_tuple_cost: f64,
    pub cpu_operator_cost: f64,
    /// In pages.
    pub effective_cache_size: f64,
    pub join_collapse_limit: usize,
    pub from_collapse_limit: usize,
    pub work_mem_kb: u64,
    pub plan_cache_mode: PlanCacheMode,
    /// max_parallel_workers_per_gather (older name max_parallel_degree).
    pub max_parallel_workers_per_gather: usize,
    pub parallel_setup_cost: f64,
    pub parallel_tuple_cost: f64,
    /// min_parallel_table_scan_size, in blocks.
    pub min_parallel_table_scan_blocks: f64,
    pub parallel_leader_participation: bool,
    /// debug_parallel_query (older name force_parallel_mode) on or
    /// regress: a parallel plan wherever one is possible, whatever it costs.
    pub debug_parallel_query: bool,
}

/// `plan_cache_mode`: how a prepared statement with parameters is planned.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PlanCacheMode {
    /// Custom plans for the first five executions, then the generic plan
    /// if it costs no more than the custom plans did on average.
    #[default]
    Auto,
    ForceGenericPlan,
    ForceCustomPlan,
}

impl PlanCacheMode {
    pub fn parse(value: &str) -> Option<Self> {
        match value.trim().to_ascii_lowercase().as_str() {
            "auto" => Some(PlanCacheMode::Auto),
            "force_generic_plan" => Some(PlanCacheMode::ForceGenericPlan),
            "force_custom_plan" => Some(PlanCacheMode::ForceCustomPlan),
            _ => None,
        }
    }
}

impl Default for PlannerSettings {
    fn default() -> Self {
        PlannerSettings {
            enable_seqscan: true,
            enable_indexscan: true,
            enable_indexonlyscan: true,
            enable_bitmapscan: true,
            enable_hashjoin: true,
            enable_nestloop: true,
            enable_sort: true,
            enable_hashagg: true,
            enable_material: true,
            seq_page_cost: 1.0,
            random_page_cost: 4.0,
            cpu_tuple_cost: 0.01,
            cpu_index_tuple_cost: 0.005,
            cpu_operator_cost: 0.0025,
            effective_cache_size: 524_288.0,
            join_collapse_limit: 8,
            from_collapse_limit: 8,
            work_mem_kb: 4096,
            plan_cache_mode: PlanCacheMode::Auto,
            max_parallel_workers_per_gather: 2,
            parallel_setup_cost: 1000.0,
            parallel_tuple_cost: 0.1,
            min_parallel_table_scan_blocks: 1024.0,
            parallel_leader_participation: true,
            debug_parallel_query: false,
        }
    }
}

/// PostgreSQL's cost added to a path whose kind is disabled by `enable_*`:
/// disabled methods are still used when nothing else can run the query.
pub const DISABLE_COST: f64 = 1.0e10;

/// Operators a subquery is counted as in a qual (it runs a plan per row).
const SUBPLAN_OPERATORS: f64 = 1000.0;
/// Rows assumed for a server-state view (PostgreSQL's estimate for the
/// functions behind pg_stat_activity and friends).
const SYSTEM_VIEW_ROWS: f64 = 100.0;
/// Rows assumed for a set-returning function whose size is unknown.
const DEFAULT_FUNCTION_ROWS: f64 = 1000.0;

const BLCKSZ: f64 = 8192.0;
const PAGE_HEADER: f64 = 24.0;
/// MAXALIGN(SizeofHeapTupleHeader) + sizeof(ItemIdData).
const TUPLE_OVERHEAD: f64 = 24.0 + 4.0;

/// A plan node's estimate, as EXPLAIN prints it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Estimate {
    pub startup: f64,
    pub total: f64,
    pub rows: f64,
    pub width: usize,
}

/// clamp_row_est: at least one row, a whole number.
pub fn clamp_rows(r: f64) -> f64 {
    if r.is_nan() || r <= 1.0 {
        1.0
    } else {
        // rint(): halves to even.
        r.round_ties_even()
    }
}

/// Average stored width of a value of the type (get_typavgwidth).
pub fn type_width(t: DataType) -> usize {
    match t.id {
        TypeId::Bool => 1,
        TypeId::Int2 => 2,
        TypeId::Int4 | TypeId::Float4 | TypeId::Date | TypeId::Oid => 4,
        t if t.is_reg() => 4,
        TypeId::Int8 | TypeId::Float8 | TypeId::Timestamp | TypeId::Timestamptz => 8,
        TypeId::Interval => 16,
        TypeId::Name => 64,
        TypeId::Uuid => 16,
        TypeId::MacAddr => 6,
        TypeId::MacAddr8 | TypeId::Money => 8,
        // varchar(n)/bpchar(n): PostgreSQL assumes a bit over half the limit
        // for long limits; short ones are taken at their limit.
        TypeId::Varchar | TypeId::Bpchar if t.typmod > 4 => {
            let n = (t.typmod - 4) as usize;
            if n <= 32 {
                n
            } else {
                32 + (n - 32) / 2
            }
        }
        _ => 32,
    }
}

pub fn row_width(types: impl IntoIterator<Item = DataType>) -> usize {
    types.into_iter().map(type_width).sum()
}

pub fn exprs_width(exprs: &[Expr]) -> usize {
    row_width(exprs.iter().map(Expr::data_type))
}

/// A projection's row width: a column passed through keeps the width it
/// has below (a table column's average width from ANALYZE), anything else
/// its type's, as PostgreSQL sizes a target list of Vars.
pub fn project_width(exprs: &[Expr], input: &Plan) -> usize {
    exprs
        .iter()
        .map(|e| match e {
            Expr::Column(i, t) => column_width(input, *i).unwrap_or_else(|| type_width(*t)),
            other => type_width(other.data_type()),
        })
        .sum()
}

/// The width of `plan`'s output column `col` where it comes from a table.
fn column_width(plan: &Plan, col: usize) -> Option<usize> {
    match plan {
        Plan::SeqScan { table, .. } => {
            let c = table.columns.get(col)?;
            Some(match table.column_stats(col) {
                Some(s) if s.avg_width > 0 => s.avg_width as usize,
                _ => type_width(c.data_type()),
            })
        }
        Plan::Project { input, exprs } => match exprs.get(col)? {
            Expr::Column(i, _) => column_width(input, *i),
            _ => None,
        },
        Plan::Filter { input, .. }
        | Plan::Sort { input, .. }
        | Plan::Limit { input, .. }
        | Plan::Gather { input, .. } => column_width(input, col),
        _ => None,
    }
}

/// A table's row width: each column's average width from ANALYZE, else
/// its type's (set_rel_width with get_attavgwidth).
pub fn table_width(table: &Table) -> usize {
    table
        .columns
        .iter()
        .enumerate()
        .map(|(i, c)| match table.column_stats(i) {
            Some(s) if s.avg_width > 0 => s.avg_width as usize,
            _ => type_width(c.data_type()),
        })
        .sum()
}

/// Pages and tuples of a table (estimate_rel_size): the current page count
/// at the density ANALYZE measured, or, never analysed, at the density its
/// rows' estimated width gives (and at least 10 pages).
pub fn table_size(table: &Table, blocks: u64) -> (f64, f64) {
    if table.analysed() && blocks == 0 {
        return (0.0, 0.0);
    }
    let pages = if blocks < 10 && !table.analysed() {
        10.0
    } else {
        blocks as f64
    };
    let density = if table.analysed() && table.relpages > 0 {
        table.reltuples / table.relpages as f64
    } else {
        let width = row_width(table.columns.iter().map(|c| c.data_type())) as f64;
        ((BLCKSZ - PAGE_HEADER) / (width + TUPLE_OVERHEAD)).floor()
    };
    (pages, (density * pages).round())
}

/// What is known of column `col` of a base table.
pub fn table_var<'a>(table: &'a Table, col: usize, sizes: &dyn RelationSizes) -> VarInfo<'a> {
    VarInfo {
        stats: table.column_stats(col),
        tuples: table_size(table, sizes.blocks(table)).1,
        rel: table.oid,
        attno: col,
    }
}

/// PostgreSQL's default procost for functions not written in C.
const USER_FUNCTION_COST: f64 = 100.0;

/// Per-row cost of evaluating quals: one `cpu_operator_cost` per operator
/// or built-in function call (cost_qual_eval with their procost 1), 100
/// per user-defined function.
pub fn qual_cost(quals: &[Expr], s: &PlannerSettings) -> f64 {
    let mut ops = 0.0f64;
    for q in quals {
        q.visit(&mut |e| {
            if let Expr::UserFunc(_) = e {
                // pg_proc.procost of a LANGUAGE sql or plpgsql function
                // (we take no COST clause): evaluated after cheap quals.
                ops += USER_FUNCTION_COST;
            } else if let Expr::InList { list, .. } = e {
                // ScalarArrayOpExpr: half the elements compared on average.
                ops += 0.5 * list.len() as f64;
            } else if matches!(
                e,
                Expr::ScalarSubquery(..)
                    | Expr::ArraySubquery(..)
                    | Expr::Exists { .. }
                    | Expr::InSubquery { .. }
            ) {
                // A subplan runs a query per row: dearer than any operator.
                ops += SUBPLAN_OPERATORS;
            } else if matches!(
                e,
                Expr::Binary { .. }
                    | Expr::Func { .. }
                    | Expr::Sys { .. }
                    | Expr::LikeConst { .. }
                    | Expr::Like { .. }
                    | Expr::IsDistinctFrom { .. }
                    | Expr::NullIf(..)
            ) || matches!(e, Expr::Cast { explicit: true, .. })
            {
                ops += 1.0;
            }
        });
    }
    ops * s.cpu_operator_cost
}

/// The base-table column a plan's output column is, if it is one (through
/// joins, projections of plain columns, filters, sorts, limits): its
/// statistics and its relation's tuples.
pub fn column_origin<'a>(
    p: &'a Plan,
    col: usize,
    sizes: &dyn RelationSizes,
) -> Option<VarInfo<'a>> {
    if let Some((left, right, left_width)) = p.join_inputs() {
        return if col < left_width {
            column_origin(left, col, sizes)
        } else {
            column_origin(right, col - left_width, sizes)
        };
    }
    match p {
        Plan::SeqScan { table, .. } => Some(table_var(table, col, sizes)),
        Plan::Project { input, exprs } => match exprs.get(col) {
            Some(Expr::Column(i, _)) => column_origin(input, *i, sizes),
            _ => None,
        },
        Plan::Filter { input, .. }
        | Plan::Sort { input, .. }
        | Plan::Limit { input, .. }
        | Plan::Gather { input, .. } => column_origin(input, col, sizes),
        _ => None,
    }
}

/// Selectivity of clauses over `plan`'s output of `rows` rows.
pub fn plan_clauses_selectivity(
    quals: &[&Expr],
    plan: &Plan,
    rows: f64,
    sizes: &dyn RelationSizes,
) -> f64 {
    let lookup = |i: usize| column_origin(plan, i, sizes);
    selfuncs::clauselist_selectivity(
        quals,
        &SelCtx {
            lookup: &lookup,
            rows,
        },
    )
}

/// Selectivity of a join's clauses: equalities of a left and a right
/// column by eqjoinsel (with the columns' statistics), others as
/// restrictions over the joined row.
pub fn join_selectivity(
    quals: &[Expr],
    left: &Plan,
    right: &Plan,
    left_width: usize,
    sizes: &dyn RelationSizes,
    l: &Estimate,
    r: &Estimate,
) -> f64 {
    let side_of = |e: &Expr| sides(e, left_width);
    let lookup = |i: usize| {
        if i < left_width {
            column_origin(left, i, sizes)
        } else {
            column_origin(right, i - left_width, sizes)
        }
    };
    let cx = SelCtx {
        lookup: &lookup,
        rows: l.rows * r.rows,
    };
    let mut sel = 1.0;
    let mut rest: Vec<&Expr> = Vec::new();
    for q in quals {
        if let Expr::Binary {
            op: BinaryOp::Eq,
            left: a,
            right: b,
            ..
        } = q
        {
            let (a, b) = match (side_of(a), side_of(b)) {
                ((true, false), (false, true)) => (a, b),
                ((false, true), (true, false)) => (b, a),
                _ => {
                    rest.push(q);
                    continue;
                }
            };
            // A key that is no base column has no relation to count
            // (tuples 0): its distinct values are the default.
            let (va, vb) = (
                key_origin(a, 0, left, sizes),
                key_origin(b, left_width, right, sizes),
            );
            let bools = a.type_id() == TypeId::Bool;
            sel *= selfuncs::eqjoinsel(va, vb, 0.0, 0.0, bools);
        } else {
            rest.push(q);
        }
    }
    if !rest.is_empty() {
        sel *= selfuncs::clauselist_selectivity(&rest, &cx);
    }
    sel
}

fn key_origin<'a>(
    e: &Expr,
    base: usize,
    side: &'a Plan,
    sizes: &dyn RelationSizes,
) -> Option<VarInfo<'a>> {
    match strip(e) {
        Expr::Column(i, _) => column_origin(side, i - base, sizes),
        _ => None,
    }
}

fn strip(e: &Expr) -> &Expr {
    match e {
        Expr::Cast { expr, .. } => strip(expr),
        other => other,
    }
}

/// Which inputs of a join a join-level expression reads: (left, right).
pub(super) fn sides(e: &Expr, left_width: usize) -> (bool, bool) {
    let (mut l, mut r) = (false, false);
    e.visit(&mut |x| {
        if let Expr::Column(i, _) = x {
            if *i < left_width {
                l = true;
            } else {
                r = true;
            }
        }
    });
    (l, r)
}

/// Which join algorithm a join uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JoinMethod {
    NestedLoop,
    Hash,
}

/// Rows a join emits, before its kind's null-extended rows.
pub fn join_rows(kind: JoinKind, l: &Estimate, r: &Estimate, sel: f64) -> f64 {
    let inner = l.rows * r.rows * sel;
    clamp_rows(match kind {
        JoinKind::Inner => inner,
        JoinKind::Left => inner.max(l.rows),
        JoinKind::Right => inner.max(r.rows),
        JoinKind::Full => inner.max(l.rows).max(r.rows),
    })
}

/// The fraction of the inner rows in the bucket an outer row probes: the
/// smallest over the hash clauses (final_cost_hashjoin's innerbucketsize).
/// `hash` may have either side first; the inner side reads only columns at
/// or past `left_width`.
pub fn inner_bucket_fraction(
    hash: &[Expr],
    right: &Plan,
    left_width: usize,
    sizes: &dyn RelationSizes,
    inner_rows: f64,
) -> f64 {
    let inner_side = |e: &Expr| !sides(e, left_width).0;
    hash.iter()
        .map(|h| {
            let Expr::Binary { left, right: r, .. } = h else {
                return 1.0;
            };
            let key = if inner_side(r) { r } else { left };
            let info = key_origin(key, left_width, right, sizes);
            selfuncs::hash_bucket_fraction(info, key.type_id() == TypeId::Bool, inner_rows)
        })
        .fold(1.0, f64::min)
}

/// Cost of a join of `l` (outer) and `r` (inner): `hash` are the hash
/// clauses (empty for a nested loop), `other` the clauses checked on each
/// pair that gets that far, `sel` the selectivity of all of them
/// (initial_cost_hashjoin/final_cost_hashjoin, and a nested loop over a
/// Materialize node as final_cost_nestloop and cost_material price it).
#[allow(clippy::too_many_arguments)]
pub fn join_cost(
    method: JoinMethod,
    kind: JoinKind,
    l: &Estimate,
    r: &Estimate,
    hash: &[Expr],
    other: &[Expr],
    sel: f64,
    bucket_fraction: f64,
    s: &PlannerSettings,
) -> Estimate {
    let rows = join_rows(kind, l, r, sel);
    let (startup, total) = match method {
        JoinMethod::Hash => {
            let nhash = hash.len() as f64;
            let mut startup = l.startup + r.total;
            startup += (s.cpu_operator_cost * nhash + s.cpu_tuple_cost) * r.rows;
            let mut run = (l.total - l.startup) + s.cpu_operator_cost * nhash * l.rows;
            // Each outer row compares its hash clauses with half a bucket.
            run +=
                s.cpu_operator_cost * nhash * l.rows * clamp_rows(r.rows * bucket_fraction) * 0.5;
            run += (s.cpu_tuple_cost + qual_cost(other, s)) * rows;
            if !s.enable_hashjoin {
                startup += DISABLE_COST;
            }
            (startup, startup + run)
        }
        JoinMethod::NestedLoop => {
            let materialize = r.total + 2.0 * s.cpu_operator_cost * r.rows;
            let startup = l.startup + r.startup;
            let rescans = (l.rows - 1.0).max(0.0) * s.cpu_operator_cost * r.rows;
            let pairs = l.rows * r.rows;
            let mut total = l.total
                + materialize
                + rescans
                + (s.cpu_tuple_cost + qual_cost(hash, s) + qual_cost(other, s)) * pairs;
            if !s.enable_nestloop {
                total += DISABLE_COST;
            }
            (startup, total)
        }
    };
    Estimate {
        startup,
        total,
        rows,
        width: l.width + r.width,
    }
}

/// Estimates a plan node and, recursively, its inputs.
pub fn estimate(plan: &Plan, sizes: &dyn RelationSizes, s: &PlannerSettings) -> Estimate {
    match plan {
        Plan::SeqScan {
            index: Some(path), ..
        } => path.estimate,
        Plan::SeqScan { table, qual, .. } => seq_scan(table, sizes, qual, s),
        Plan::Values { rows, width } => {
            let n = rows.len() as f64;
            let w = rows.first().map_or(0, |r| exprs_width(r));
            let _ = width;
            if n == 1.0 && w == 0 {
                // Result (SELECT without FROM).
                return Estimate {
                    startup: 0.0,
                    total: s.cpu_tuple_cost,
                    rows: 1.0,
                    width: 0,
                };
            }
            Estimate {
                startup: 0.0,
                total: n * (s.cpu_operator_cost + s.cpu_tuple_cost),
                rows: clamp_rows(n),
                width: w,
            }
        }
        Plan::Filter { input, qual } => {
            filter_estimate(estimate(input, sizes, s), input, qual, sizes, s)
        }
        Plan::Project { input, exprs } => {
            let e = estimate(input, sizes, s);
            Estimate {
                width: project_width(exprs, input),
                ..e
            }
        }
        Plan::ProjectSet { input, exprs, srfs } => {
            let e = estimate(input, sizes, s);
            let n = srfs.iter().map(call_rows).fold(1.0, f64::max);
            Estimate {
                total: e.total + s.cpu_tuple_cost * e.rows * n,
                rows: clamp_rows(e.rows * n),
                width: exprs_width(exprs),
                ..e
            }
        }
        Plan::SystemView { columns, .. } => Estimate {
            startup: 0.0,
            total: SYSTEM_VIEW_ROWS * s.cpu_tuple_cost,
            rows: SYSTEM_VIEW_ROWS,
            width: row_width(columns.iter().map(|c| c.ty)),
        },
        Plan::FunctionScan { calls, .. } => {
            let n = calls.iter().map(call_rows).fold(0.0, f64::max).max(1.0);
            Estimate {
                startup: s.cpu_operator_cost,
                total: s.cpu_operator_cost + s.cpu_tuple_cost * n,
                rows: n,
                width: row_width(calls.iter().flat_map(|c| c.columns.iter().map(|c| c.ty))),
            }
        }
        // The right input runs once per left row.
        Plan::LateralJoin {
            left,
            right,
            on,
            left_width,
            ..
        } => {
            let (l, r) = (estimate(left, sizes, s), estimate(right, sizes, s));
            let quals: Vec<Expr> = on.iter().cloned().collect();
            let sel = join_selectivity(&quals, left, right, *left_width, sizes, &l, &r);
            Estimate {
                startup: l.startup + r.startup,
                total: l.total + l.rows * r.total,
                rows: clamp_rows(l.rows * r.rows * sel),
                width: l.width + r.width,
            }
        }
        Plan::NestedLoop {
            left,
            right,
            kind,
            on,
            left_width,
            ..
        } => {
            let (l, r) = (estimate(left, sizes, s), estimate(right, sizes, s));
            let quals: Vec<Expr> = on.iter().cloned().collect();
            let sel = join_selectivity(&quals, left, right, *left_width, sizes, &l, &r);
            join_cost(
                JoinMethod::NestedLoop,
                *kind,
                &l,
                &r,
                &[],
                &quals,
                sel,
                1.0,
                s,
            )
        }
        Plan::HashJoin {
            left,
            right,
            kind,
            hash_cond,
            join_filter,
            left_width,
            ..
        } => {
            let (l, r) = (estimate(left, sizes, s), estimate(right, sizes, s));
            let other: Vec<Expr> = join_filter.iter().cloned().collect();
            let mut quals = hash_cond.clone();
            quals.extend(other.iter().cloned());
            let sel = join_selectivity(&quals, left, right, *left_width, sizes, &l, &r);
            let bucket = inner_bucket_fraction(hash_cond, right, *left_width, sizes, r.rows);
            join_cost(
                JoinMethod::Hash,
                *kind,
                &l,
                &r,
                hash_cond,
                &other,
                sel,
                bucket,
                s,
            )
        }
        Plan::Aggregate {
            input,
            keys,
            aggs,
            sets,
        } => {
            if let Plan::Gather { input: partial, .. } = &**input {
                // Finalize Aggregate: the participants' groups combined
                // into the groups a serial aggregate would make.
                let e = estimate(input, sizes, s);
                let groups = estimate(partial, sizes, s).rows;
                let per_row = s.cpu_operator_cost * (keys.len() + aggs.len()) as f64;
                let startup = e.total + per_row * e.rows;
                return Estimate {
                    startup,
                    total: startup + s.cpu_tuple_cost * groups,
                    rows: groups,
                    width: exprs_width(keys)
                        + aggs.iter().map(|a| type_width(a.result)).sum::<usize>(),
                };
            }
            aggregate_estimate(estimate(input, sizes, s), input, keys, aggs, sets, sizes, s)
        }
        Plan::Gather { input, workers } if matches!(**input, Plan::Sort { .. }) => {
            gather_merge_estimate(input, *workers, None, sizes, s)
        }
        Plan::Gather { input, workers } => {
            let d = parallel_divisor(*workers, s.parallel_leader_participation);
            let e = partial_estimate(input, d, None, sizes, s);
            // A scan brings up the relation's rows; a Partial Aggregate,
            // each worker's groups (PostgreSQL counts the leader's out).
            let rows = match &**input {
                Plan::Aggregate { .. } => clamp_rows(e.rows * (*workers).max(1) as f64),
                _ => estimate(input, sizes, s).rows,
            };
            Estimate {
                startup: e.startup + s.parallel_setup_cost,
                total: e.total + s.parallel_setup_cost + s.parallel_tuple_cost * rows,
                rows,
                width: e.width,
            }
        }
        Plan::WindowAgg { input, funcs, .. } => {
            // PostgreSQL's cost_windowagg: each call and each key per row.
            let e = estimate(input, sizes, s);
            let per_row = s.cpu_operator_cost * funcs.len() as f64 + s.cpu_tuple_cost;
            Estimate {
                startup: e.startup,
                total: e.total + per_row * e.rows,
                rows: e.rows,
                width: e.width + funcs.iter().map(|f| type_width(f.result)).sum::<usize>(),
            }
        }
        Plan::Sort { input, .. } => sort_estimate(estimate(input, sizes, s), s),
        Plan::Limit {
            input,
            limit,
            offset,
            ..
        } => {
            let e = estimate_bounded(input, limit_bound(limit, offset), sizes, s);
            let count = |x: &Option<Expr>| match x {
                Some(Expr::Const(Value::Int8(n), _)) => Some(*n as f64),
                Some(Expr::Const(Value::Null, _)) | None => None,
                Some(_) => Some(e.rows * 0.1),
            };
            let skip = count(offset).unwrap_or(0.0).min(e.rows);
            let rows = count(limit).map_or(e.rows - skip, |l| l.min(e.rows - skip));
            let run = e.total - e.startup;
            let frac = |r: f64| if e.rows > 0.0 { r / e.rows } else { 0.0 };
            Estimate {
                startup: e.startup + run * frac(skip),
                total: e.startup + run * frac(skip + rows),
                rows: clamp_rows(rows),
                width: e.width,
            }
        }
        Plan::LockRows { input, .. } => {
            // cost_rows of create_lockrows_path: a tuple's CPU per row.
            let e = estimate(input, sizes, s);
            Estimate {
                total: e.total + s.cpu_tuple_cost * e.rows,
                ..e
            }
        }
        Plan::Distinct { input } => {
            let e = estimate(input, sizes, s);
            let keys: Vec<Expr> = input
                .column_types()
                .into_iter()
                .enumerate()
                .map(|(i, t)| Expr::Column(i, t))
                .collect();
            let lookup = |i: usize| column_origin(input, i, sizes);
            let cx = SelCtx {
                lookup: &lookup,
                rows: e.rows,
            };
            let groups = selfuncs::estimate_num_groups(&keys, e.rows, &cx);
            let startup = e.total + s.cpu_operator_cost * e.rows;
            Estimate {
                startup,
                total: startup + s.cpu_tuple_cost * groups,
                rows: clamp_rows(groups),
                width: e.width,
            }
        }
        Plan::SetOp {
            left, right, all, ..
        } => {
            let (l, r) = (estimate(left, sizes, s), estimate(right, sizes, s));
            let rows = l.rows + r.rows;
            let rows = if *all {
                rows
            } else {
                DEFAULT_NUM_DISTINCT.min(rows)
            };
            Estimate {
                startup: l.startup,
                total: l.total + r.total + s.cpu_operator_cost * (l.rows + r.rows),
                rows: clamp_rows(rows),
                width: l.width.max(r.width),
            }
        }
        // cost_ctescan: a tuple's CPU per row read, the CTE's own cost
        // counted where it runs.
        Plan::CteScan { plan, .. } => {
            let e = estimate(plan, sizes, s);
            Estimate {
                startup: e.startup,
                total: e.total + s.cpu_tuple_cost * e.rows,
                ..e
            }
        }
        // cost_recursive_union: ten rounds of the recursive term.
        Plan::RecursiveUnion {
            id,
            base,
            recursive,
            ..
        } => {
            let b = estimate(base, sizes, s);
            let r = estimate(recursive, &WorkTableSizes::new(sizes, *id, b.rows), s);
            let rows = b.rows + 10.0 * r.rows;
            Estimate {
                startup: b.startup,
                total: b.total + 10.0 * r.total + s.cpu_tuple_cost * rows,
                rows: clamp_rows(rows),
                width: b.width.max(r.width),
            }
        }
        // The working table's size is not known when planning: ten times
        // the non-recursive term's (`WorkTableSizes`); 100 outside its
        // RecursiveUnion (never planned so).
        Plan::WorkTableScan { id, types, .. } => {
            let rows = sizes.worktable_rows(*id).unwrap_or(100.0);
            Estimate {
                startup: 0.0,
                total: s.cpu_tuple_cost * rows,
                rows,
                width: types.iter().map(|t| type_width(*t)).sum(),
            }
        }
        // RETURNING rows: no estimate (PostgreSQL's 1000 for a CTE Scan
        // over a ModifyTable comes from its subplan's guess).
        Plan::ModifyingCteRows { types, .. } => Estimate {
            startup: 0.0,
            total: s.cpu_tuple_cost * 100.0,
            rows: 100.0,
            width: types.iter().map(|t| type_width(*t)).sum(),
        },
    }
}

pub fn seq_scan(
    table: &Table,
    sizes: &dyn RelationSizes,
    qual: &[Expr],
    s: &PlannerSettings,
) -> Estimate {
    parallel_seq_scan(table, sizes, qual, s, 1.0)
}

/// One participant's share of a Parallel Seq Scan by `divisor`
/// participants' worth of work (1: a plain Seq Scan). As PostgreSQL 15's
/// cost_seqscan: the CPU cost and the rows are divided, the pages are not
/// (every page is still read once, by someone).
pub fn parallel_seq_scan(
    table: &Table,
    sizes: &dyn RelationSizes,
    qual: &[Expr],
    s: &PlannerSettings,
    divisor: f64,
) -> Estimate {
    let (pages, tuples) = table_size(table, sizes.blocks(table));
    let quals: Vec<&Expr> = qual.iter().collect();
    let lookup = |i: usize| Some(table_var(table, i, sizes));
    let sel = selfuncs::clauselist_selectivity(
        &quals,
        &SelCtx {
            lookup: &lookup,
            rows: tuples,
        },
    );
    let cpu = (s.cpu_tuple_cost + qual_cost(qual, s)) * tuples / divisor;
    let mut total = s.seq_page_cost * pages + cpu;
    if !s.enable_seqscan {
        total += DISABLE_COST;
    }
    Estimate {
        startup: if s.enable_seqscan { 0.0 } else { DISABLE_COST },
        total,
        rows: clamp_rows(tuples * sel / divisor),
        width: table_width(table),
    }
}

/// Rows of generate_series with constant integer bounds, else PostgreSQL's
/// default for a set-returning function.
/// Rows a set-returning call is expected to yield: a constant series' or
/// array's length, else PostgreSQL's `prorows` for the function.
fn call_rows(call: &crate::srf::SrfCall) -> f64 {
    use crate::srf::SetFunction as F;
    match call.func {
        F::Series => series_rows(&call.args),
        F::Unnest => match call.args.first() {
            Some(Expr::Const(v, _)) => v
                .as_array()
                .map_or(1.0, |a| clamp_rows(a.items.len() as f64)),
            _ => 100.0,
        },
        F::RegexpMatches => 10.0,
        F::RegexpSplitToTable => 1000.0,
        F::Json { .. } => 100.0,
        F::Empty => 1.0,
    }
}

fn series_rows(args: &[Expr]) -> f64 {
    let int = |e: &Expr| match e {
        Expr::Const(Value::Int4(v), _) => Some(*v as f64),
        Expr::Const(Value::Int8(v), _) => Some(*v as f64),
        _ => None,
    };
    let (Some(a), Some(b)) = (args.first().and_then(int), args.get(1).and_then(int)) else {
        return DEFAULT_FUNCTION_ROWS;
    };
    let step = match args.get(2) {
        Some(e) => match int(e) {
            Some(st) if st != 0.0 => st,
            _ => return DEFAULT_FUNCTION_ROWS,
        },
        None => 1.0,
    };
    clamp_rows(((b - a) / step).floor() + 1.0)
}

/// The share of the work the participants of a Gather with `workers`
/// planned workers do, counted in workers (PostgreSQL's
/// get_parallel_divisor): the leader counts for less the more workers
/// there are, as it also reads their rows, and for nothing from 4.
pub fn parallel_divisor(workers: usize, leader_participates: bool) -> f64 {
    let mut d = workers as f64;
    if leader_participates {
        let leader = 1.0 - 0.3 * workers as f64;
        if leader > 0.0 {
            d += leader;
        }
    }
    d
}

/// An Aggregate's estimate over input rows estimated as `e`.
fn aggregate_estimate(
    e: Estimate,
    input: &Plan,
    keys: &[Expr],
    aggs: &[crate::expr::AggCall],
    sets: &Option<Box<super::GroupingSets>>,
    sizes: &dyn RelationSizes,
    s: &PlannerSettings,
) -> Estimate {
    let lookup = |i: usize| column_origin(input, i, sizes);
    let cx = SelCtx {
        lookup: &lookup,
        rows: e.rows,
    };
    let groups_of = |keys: &[Expr]| {
        if keys.is_empty() {
            1.0
        } else {
            selfuncs::estimate_num_groups(keys, e.rows, &cx)
        }
    };
    // Grouping sets: each set's groups, its rows fed once per set.
    let (groups, passes) = match sets {
        None => (groups_of(keys), 1.0),
        Some(g) => (
            g.sets
                .iter()
                .map(|set| {
                    let ks: Vec<Expr> = set.iter().map(|&k| keys[k].clone()).collect();
                    groups_of(&ks)
                })
                .sum(),
            g.sets.len() as f64,
        ),
    };
    let per_row = s.cpu_operator_cost * passes * (keys.len() + aggs.len()) as f64;
    let startup = e.total + per_row * e.rows;
    Estimate {
        startup,
        total: startup + s.cpu_tuple_cost * groups,
        rows: groups,
        width: exprs_width(keys) + aggs.iter().map(|a| type_width(a.result)).sum::<usize>(),
    }
}

/// The rows a LIMIT reads at most, when its count (and offset) are
/// constants: what a Sort below it keeps (PostgreSQL's limit_tuples).
pub fn limit_bound(limit: &Option<Expr>, offset: &Option<Expr>) -> Option<f64> {
    let Some(Expr::Const(Value::Int8(l), _)) = limit else {
        return None;
    };
    let skip = match offset {
        None | Some(Expr::Const(Value::Null, _)) => 0,
        Some(Expr::Const(Value::Int8(o), _)) => *o,
        Some(_) => return None,
    };
    Some(l.saturating_add(skip) as f64)
}

/// `plan`'s estimate when its parent reads at most `bound` rows: a Sort
/// (through projections and a Gather Merge) keeps only those, as a
/// bounded heap (cost_sort with limit_tuples).
pub fn estimate_bounded(
    plan: &Plan,
    bound: Option<f64>,
    sizes: &dyn RelationSizes,
    s: &PlannerSettings,
) -> Estimate {
    if bound.is_none() {
        return estimate(plan, sizes, s);
    }
    match plan {
        Plan::Sort { input, .. } => sort_estimate_bounded(estimate(input, sizes, s), bound, s),
        Plan::Project { input, exprs } => Estimate {
            width: project_width(exprs, input),
            ..estimate_bounded(input, bound, sizes, s)
        },
        Plan::Gather { input, workers } if matches!(**input, Plan::Sort { .. }) => {
            gather_merge_estimate(input, *workers, bound, sizes, s)
        }
        other => estimate(other, sizes, s),
    }
}

/// Gather Merge (cost_gather_merge): a heap over the participants' sorted
/// streams, each sort bounded by `bound` when a LIMIT reads that few.
fn gather_merge_estimate(
    sort: &Plan,
    workers: usize,
    bound: Option<f64>,
    sizes: &dyn RelationSizes,
    s: &PlannerSettings,
) -> Estimate {
    let d = parallel_divisor(workers, s.parallel_leader_participation);
    let e = partial_estimate(sort, d, bound, sizes, s);
    // As generate_useful_gather_paths counts a sorted partial path: each
    // planned worker's rows (the leader's share left out).
    let rows = clamp_rows(e.rows * workers as f64);
    let n = workers as f64 + 1.0;
    let compare = 2.0 * s.cpu_operator_cost;
    let startup = compare * n * n.log2() + s.parallel_setup_cost;
    let run = rows * compare * n.log2()
        + s.cpu_operator_cost * rows
        + s.parallel_tuple_cost * rows * 1.05;
    Estimate {
        startup: startup + e.startup,
        total: startup + run + e.total,
        rows,
        width: e.width,
    }
}

/// A Sort's estimate over input rows estimated as `e` (cost_sort in memory).
fn sort_estimate(e: Estimate, s: &PlannerSettings) -> Estimate {
    sort_estimate_bounded(e, None, s)
}

/// cost_sort in memory: a quicksort of every row, or a bounded heap when
/// the parent reads at most `bound` rows and there are over twice that.
fn sort_estimate_bounded(e: Estimate, bound: Option<f64>, s: &PlannerSettings) -> Estimate {
    let n = e.rows.max(2.0);
    let compare = 2.0 * s.cpu_operator_cost;
    let sorting = match bound {
        Some(b) if b > 0.0 && b < n && n > 2.0 * b => compare * n * (2.0 * b).log2(),
        _ => compare * n * n.log2(),
    };
    let startup = e.total + sorting + if s.enable_sort { 0.0 } else { DISABLE_COST };
    Estimate {
        startup,
        total: startup + s.cpu_operator_cost * e.rows,
        ..e
    }
}

/// A Filter's estimate over input rows estimated as `e`.
fn filter_estimate(
    e: Estimate,
    input: &Plan,
    qual: &Expr,
    sizes: &dyn RelationSizes,
    s: &PlannerSettings,
) -> Estimate {
    let quals = super::planner::conjuncts(qual);
    let sel = plan_clauses_selectivity(&quals, input, e.rows, sizes);
    Estimate {
        total: e.total + qual_cost(std::slice::from_ref(qual), s) * e.rows,
        rows: clamp_rows(e.rows * sel),
        ..e
    }
}

/// A node below a Gather as one participant runs it (PostgreSQL's partial
/// path): the Parallel Seq Scan at the bottom of the chain does a
/// `divisor`th of the CPU work and returns that share of the rows.
pub fn partial_estimate(
    plan: &Plan,
    divisor: f64,
    bound: Option<f64>,
    sizes: &dyn RelationSizes,
    s: &PlannerSettings,
) -> Estimate {
    match plan {
        Plan::SeqScan {
            table,
            qual,
            index: None,
            ..
        } => parallel_seq_scan(table, sizes, qual, s, divisor),
        Plan::Filter { input, qual } => filter_estimate(
            partial_estimate(input, divisor, None, sizes, s),
            input,
            qual,
            sizes,
            s,
        ),
        Plan::Project { input, exprs } => Estimate {
            width: project_width(exprs, input),
            ..partial_estimate(input, divisor, None, sizes, s)
        },
        Plan::Sort { input, .. } => {
            sort_estimate_bounded(partial_estimate(input, divisor, None, sizes, s), bound, s)
        }
        Plan::Aggregate {
            input,
            keys,
            aggs,
            sets,
        } => aggregate_estimate(
            partial_estimate(input, divisor, None, sizes, s),
            input,
            keys,
            aggs,
            sets,
            sizes,
            s,
        ),
        other => estimate(other, sizes, s),
    }
}
