//! Index paths for a base table (PostgreSQL's indxpath.c and cost_index, in
//! small): which quals an index's key can serve as bounds, what walking
//! the index and fetching the heap rows would cost, and whether that beats
//! the sequential scan.
//!
//! A qual is an index condition when it compares a key column with a value
//! known before the scan starts (a constant or a parameter): `=`, `<`,
//! `<=`, `>`, `>=`, `IS NULL`, `IN (list)`. The scan's bounds come from an
//! equality prefix of the key plus at most one range column; other quals
//! stay as the scan's filter.

use std::sync::Arc;

use catalog::{Index, Table};
use types::ops::BinaryOp;
use types::TypeId;

use super::cost::{self, Estimate, PlannerSettings, RelationSizes, DISABLE_COST};
use super::selfuncs::{self, SelCtx};
use super::Plan;
use crate::expr::Expr;

/// What the planner knows of one index of a table.
#[derive(Debug, Clone)]
pub struct IndexInfo {
    pub index: Arc<Index>,
    /// Main-fork blocks of the index.
    pub pages: u64,
    /// Levels above the leaves.
    pub height: u32,
}

/// How one index condition bounds its key column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IndexOp {
    Eq,
    Lt,
    Le,
    Gt,
    Ge,
    IsNull,
    /// `= ANY (list)`: one equality scan per distinct value.
    In,
}

/// One index condition: key position `key` compared by `op` with `values`
/// (one, or the IN list; none for IS NULL). `clause` is the qual as
/// written, for EXPLAIN's `Index Cond`.
#[derive(Debug, Clone, PartialEq)]
pub struct IndexCond {
    pub key: usize,
    pub op: IndexOp,
    pub values: Vec<Expr>,
    pub clause: Expr,
}

/// An index scan chosen for a table scan: the index, the conditions that
/// bound it (in key order), and the direction.
#[derive(Debug, Clone, PartialEq)]
pub struct IndexPath {
    pub index: Arc<Index>,
    pub conds: Vec<IndexCond>,
    pub backward: bool,
    /// An Index Only Scan (`indexonly.rs`): every column the scan's parent,
    /// filter and conditions read is a key column, so rows are made from
    /// the index entries and the heap is visited only for pages the
    /// visibility map does not call all-visible.
    pub index_only: bool,
    /// The scan's estimate when it was chosen (EXPLAIN prints it).
    pub estimate: Estimate,
}

/// A value the scan can compute before it starts: constants and
/// parameters under operators and casts (`$1 + 100`), never a column, a
/// subquery or a function call (which may be volatile).
fn is_pseudo_constant(e: &Expr) -> bool {
    match e {
        Expr::Const(..) | Expr::Param(..) => true,
        Expr::Cast { expr, .. } | Expr::Neg(expr, _) => is_pseudo_constant(expr),
        Expr::Binary { left, right, .. } => is_pseudo_constant(left) && is_pseudo_constant(right),
        _ => false,
    }
}

/// Types whose values `types::ops::compare` orders as SQL's comparison
/// operators do, so an index over one can be searched with the other.
fn comparable(column: TypeId, value: TypeId) -> bool {
    use TypeId::*;
    let numeric = |t| matches!(t, Int2 | Int4 | Int8 | Numeric);
    let text = |t| matches!(t, Text | Varchar | Name);
    column == value
        || (numeric(column) && numeric(value))
        || (text(column) && text(value))
        || (matches!(column, Float4 | Float8) && matches!(value, Float4 | Float8))
}

fn commute(op: BinaryOp) -> Option<BinaryOp> {
    Some(match op {
        BinaryOp::Eq => BinaryOp::Eq,
        BinaryOp::Lt => BinaryOp::Gt,
        BinaryOp::LtEq => BinaryOp::GtEq,
        BinaryOp::Gt => BinaryOp::Lt,
        BinaryOp::GtEq => BinaryOp::LtEq,
        _ => return None,
    })
}

/// The index condition `q` is for `index`, if it is one.
fn match_cond(q: &Expr, table: &Table, index: &Index) -> Option<IndexCond> {
    let key_of = |col: usize| index.keys.iter().position(|k| k.attnum as usize == col + 1);
    let column_type = |col: usize| table.columns.get(col).map(|c| c.data_type().id);
    match q {
        Expr::Binary {
            op, left, right, ..
        } => {
            let (col, value, op) = match (&**left, &**right) {
                (Expr::Column(c, _), v) if is_pseudo_constant(v) => (*c, v, *op),
                (v, Expr::Column(c, _)) if is_pseudo_constant(v) => (*c, v, commute(*op)?),
                _ => return None,
            };
            let op = match op {
                BinaryOp::Eq => IndexOp::Eq,
                BinaryOp::Lt => IndexOp::Lt,
                BinaryOp::LtEq => IndexOp::Le,
                BinaryOp::Gt => IndexOp::Gt,
                BinaryOp::GtEq => IndexOp::Ge,
                _ => return None,
            };
            if !comparable(column_type(col)?, value.data_type().id) {
                return None;
            }
            Some(IndexCond {
                key: key_of(col)?,
                op,
                values: vec![value.clone()],
                clause: q.clone(),
            })
        }
        Expr::IsNull {
            expr,
            negated: false,
        } => match &**expr {
            Expr::Column(c, _) => Some(IndexCond {
                key: key_of(*c)?,
                op: IndexOp::IsNull,
                values: Vec::new(),
                clause: q.clone(),
            }),
            _ => None,
        },
        Expr::InList {
            expr,
            list,
            negated: false,
        } => match &**expr {
            Expr::Column(c, _)
                if list.iter().all(|v| {
                    is_pseudo_constant(v)
                        && column_type(*c).is_some_and(|t| comparable(t, v.data_type().id))
                }) =>
            {
                Some(IndexCond {
                    key: key_of(*c)?,
                    op: IndexOp::In,
                    values: list.clone(),
                    clause: q.clone(),
                })
            }
            _ => None,
        },
        _ => None,
    }
}

/// The conditions that bound a scan of `index`, with the indexes into
/// `quals` they came from: an equality (or IS NULL, or one IN list) per key
/// column from the first, then the range conditions of the next column.
fn bounding_conds(quals: &[Expr], table: &Table, index: &Index) -> Vec<(usize, IndexCond)> {
    let matched: Vec<(usize, IndexCond)> = quals
        .iter()
        .enumerate()
        .filter_map(|(i, q)| match_cond(q, table, index).map(|c| (i, c)))
        .collect();
    let mut out = Vec::new();
    let mut used_in = false;
    for key in 0..index.keys.len() {
        let here: Vec<&(usize, IndexCond)> = matched.iter().filter(|(_, c)| c.key == key).collect();
        let eq = here.iter().find(|(_, c)| {
            matches!(c.op, IndexOp::Eq | IndexOp::IsNull) || (c.op == IndexOp::In && !used_in)
        });
        if let Some((i, c)) = eq {
            used_in |= c.op == IndexOp::In;
            out.push((*i, c.clone()));
            continue;
        }
        let lower = here
            .iter()
            .find(|(_, c)| matches!(c.op, IndexOp::Gt | IndexOp::Ge));
        let upper = here
            .iter()
            .find(|(_, c)| matches!(c.op, IndexOp::Lt | IndexOp::Le));
        out.extend(lower.into_iter().chain(upper).map(|(i, c)| (*i, c.clone())));
        break;
    }
    out
}

/// Pages fetched to read `tuples` random rows of a `pages`-page table with
/// `cache` pages of cache (Mackert and Lohman, as index_pages_fetched).
fn pages_fetched(tuples: f64, pages: f64, cache: f64) -> f64 {
    let t = pages.max(1.0);
    let b = cache.max(1.0);
    let n = tuples;
    let pf = if t <= b {
        (2.0 * t * n / (2.0 * t + n)).min(t)
    } else {
        let lim = 2.0 * t * b / (2.0 * t - b);
        if n <= lim {
            2.0 * t * n / (2.0 * t + n)
        } else {
            b + (n - lim) * (t - b) / t
        }
    };
    pf.ceil()
}

/// A Sort over a table scan (through a projection of plain columns) that
/// an index of the table already returns in order: the scan is made an
/// index scan in that order (backward when every key is reversed) and the
/// Sort dropped. Only scans without a filter, or already bounded by that
/// index, are changed: a filter that rejects most rows could make the
/// walk long (PostgreSQL decides that by cost). `new_path`: a scan of the
/// whole index may replace a sequential scan (under a LIMIT, where the
/// first rows are what counts); otherwise only an index path already
/// chosen is turned around.
pub(crate) fn sort_by_index(plan: Plan, new_path: bool, cx: &super::PlannerContext) -> Plan {
    if !cx.settings.enable_indexscan {
        return plan;
    }
    let Plan::Sort { input, keys } = plan else {
        return plan;
    };
    let (scan, exprs) = match *input {
        Plan::Project { input, exprs } => (*input, Some(exprs)),
        other => (other, None),
    };
    let table_column = |c: usize| match &exprs {
        None => Some(c),
        Some(e) => match e.get(c) {
            Some(Expr::Column(i, _)) => Some(*i),
            _ => None,
        },
    };
    let rebuild = |scan: Plan, exprs: Option<Vec<Expr>>, keys| {
        let input = match exprs {
            Some(exprs) => Plan::Project {
                input: Box::new(scan),
                exprs,
            },
            None => scan,
        };
        Plan::Sort {
            input: Box::new(input),
            keys,
        }
    };
    let Plan::SeqScan {
        table,
        qual,
        alias,
        tid,
        system,
        index,
    } = scan
    else {
        return rebuild(scan, exprs, keys);
    };
    let wanted: Option<Vec<(usize, bool, bool)>> = keys
        .iter()
        .map(|k| table_column(k.column).map(|c| (c, k.descending, k.nulls_first)))
        .collect();
    let candidates: Vec<IndexInfo> = cx.sizes.indexes(&table);
    let direction = |i: &Index| -> Option<bool> {
        let wanted = wanted.as_ref()?;
        if wanted.len() > i.keys.len() {
            return None;
        }
        let mut backward = None;
        for (k, (c, desc, nulls_first)) in i.keys.iter().zip(wanted) {
            if k.attnum as usize != c + 1 {
                return None;
            }
            let same = k.descending == *desc && k.nulls_first == *nulls_first;
            let reversed = k.descending != *desc && k.nulls_first != *nulls_first;
            let b = match (same, reversed) {
                (true, _) => false,
                (_, true) => true,
                _ => return None,
            };
            if *backward.get_or_insert(b) != b {
                return None;
            }
        }
        backward
    };
    let chosen = match &index {
        Some(path) => direction(&path.index).map(|b| {
            let mut p = path.clone();
            p.backward = b;
            p
        }),
        None if new_path && qual.is_empty() => candidates.iter().find_map(|info| {
            direction(&info.index).map(|b| Box::new(full_index_path(&table, info, b, cx)))
        }),
        None => None,
    };
    match chosen {
        Some(path) => {
            let scan = Plan::SeqScan {
                table,
                qual,
                alias,
                tid,
                system,
                index: Some(path),
            };
            match exprs {
                Some(exprs) => Plan::Project {
                    input: Box::new(scan),
                    exprs,
                },
                None => scan,
            }
        }
        None => rebuild(
            Plan::SeqScan {
                table,
                qual,
                alias,
                tid,
                system,
                index,
            },
            exprs,
            keys,
        ),
    }
}

/// A scan of the whole index in order (no conditions), costed as reading
/// every entry and a random heap page per row.
fn full_index_path(
    table: &Table,
    info: &IndexInfo,
    backward: bool,
    cx: &super::PlannerContext,
) -> IndexPath {
    IndexPath {
        index: Arc::clone(&info.index),
        conds: Vec::new(),
        backward,
        index_only: false,
        estimate: estimate_path(table, info, &[], &[], cx.sizes, cx.settings, false),
    }
}

/// The fraction of the table's pages the visibility map called
/// all-visible when VACUUM or ANALYZE last looked (PostgreSQL's allvisfrac).
fn all_visible_fraction(table: &Table) -> f64 {
    if table.relpages == 0 {
        return 0.0;
    }
    (f64::from(table.relallvisible) / f64::from(table.relpages)).min(1.0)
}

/// How closely the index's order follows the heap's: ANALYZE's
/// correlation of the first key column, three quarters of it for a
/// multi-column index (btcostestimate's rule); 0 without statistics.
fn index_correlation(table: &Table, index: &Index) -> f64 {
    let Some(first) = index.keys.first() else {
        return 0.0;
    };
    let c = table
        .column_stats(first.attnum as usize - 1)
        .and_then(|st| st.correlation)
        .map_or(0.0, f64::from);
    if index.keys.len() > 1 {
        c * 0.75
    } else {
        c
    }
}

/// What a scan of `info` bounded by `conds`, checking `filter` on each row,
/// costs (PostgreSQL's cost_index with genericcostestimate, in small): a
/// descent per equality scan, the leaf pages in range read at random, a
/// random heap page per row fetched as Mackert and Lohman estimate them,
/// and CPU per entry and row. An index-only scan fetches only the part of
/// those heap pages that is not all-visible.
pub(crate) fn estimate_path(
    table: &Table,
    info: &IndexInfo,
    conds: &[IndexCond],
    filter: &[Expr],
    sizes: &dyn RelationSizes,
    s: &PlannerSettings,
    index_only: bool,
) -> Estimate {
    let (heap_pages, tuples) = cost::table_size(table, sizes.blocks(table));
    let lookup = |i: usize| Some(cost::table_var(table, i, sizes));
    let ctx = SelCtx {
        lookup: &lookup,
        rows: tuples,
    };
    let clauses: Vec<&Expr> = conds.iter().map(|c| &c.clause).collect();
    let index_sel = selfuncs::clauselist_selectivity(&clauses, &ctx);
    let all: Vec<&Expr> = clauses.iter().copied().chain(filter).collect();
    let rows = cost::clamp_rows(tuples * selfuncs::clauselist_selectivity(&all, &ctx));
    // A unique index with equality on every column returns one row.
    let exact = info.index.unique
        && conds.len() == info.index.keys.len()
        && conds.iter().all(|c| c.op == IndexOp::Eq);
    let index_tuples = if exact {
        1.0
    } else {
        (index_sel * tuples).max(1.0)
    };
    let scans = conds
        .iter()
        .find(|c| c.op == IndexOp::In)
        .map_or(1.0, |c| c.values.len().max(1) as f64);
    let index_pages = info.pages.max(1) as f64;
    let descent =
        (tuples.max(2.0).log2().ceil() + f64::from(info.height + 1) * 50.0) * s.cpu_operator_cost;
    let leaf_pages = (index_sel * index_pages).ceil().max(1.0);
    let index_cost = scans * descent
        + leaf_pages * s.random_page_cost
        + index_tuples * (s.cpu_index_tuple_cost + s.cpu_operator_cost * conds.len() as f64);
    // The heap pages: at worst one random read per row as Mackert and
    // Lohman count them, at best the pages in range read in order; the
    // square of the key's physical-order correlation says where between.
    let mut max_pages = pages_fetched(index_tuples, heap_pages, s.effective_cache_size);
    let mut min_pages = (index_sel * heap_pages).ceil();
    if index_only {
        let fetched = 1.0 - all_visible_fraction(table);
        max_pages = (max_pages * fetched).ceil();
        min_pages = (min_pages * fetched).ceil();
    }
    let max_io = max_pages * s.random_page_cost;
    let min_io = if min_pages > 0.0 {
        s.random_page_cost + (min_pages - 1.0).max(0.0) * s.seq_page_cost
    } else {
        0.0
    };
    let correlation = index_correlation(table, &info.index);
    let heap_io = max_io + correlation * correlation * (min_io - max_io);
    let heap_cost = heap_io + index_tuples * (s.cpu_tuple_cost + cost::qual_cost(filter, s));
    let mut total = index_cost + heap_cost;
    let mut startup = scans * descent;
    if !s.enable_indexscan {
        total += DISABLE_COST;
        startup += DISABLE_COST;
    }
    Estimate {
        startup,
        total,
        rows,
        width: cost::table_width(table),
    }
}

/// The best index path for a scan of `table` filtered by `quals`, with its
/// estimate, if one is cheaper than `seq` (the sequential scan's).
pub fn best_index_path(
    table: &Table,
    quals: &[Expr],
    indexes: &[IndexInfo],
    sizes: &dyn RelationSizes,
    s: &PlannerSettings,
    seq: &Estimate,
) -> Option<(IndexPath, Vec<Expr>, Estimate)> {
    let mut best: Option<(IndexPath, Vec<Expr>, Estimate)> = None;
    for info in indexes {
        let Some((conds, filter)) = split_quals(quals, table, info) else {
            continue;
        };
        let est = estimate_path(table, info, &conds, &filter, sizes, s, false);
        if best.as_ref().is_none_or(|b| est.total < b.2.total) {
            let path = IndexPath {
                index: Arc::clone(&info.index),
                conds,
                backward: false,
                index_only: false,
                estimate: est,
            };
            best = Some((path, filter, est));
        }
    }
    best.filter(|b| b.2.total < seq.total)
}

/// `quals` split into the conditions that bound a scan of `info` (in key
/// order) and the rest, the scan's filter; None when none bounds it.
pub(crate) fn split_quals(
    quals: &[Expr],
    table: &Table,
    info: &IndexInfo,
) -> Option<(Vec<IndexCond>, Vec<Expr>)> {
    let conds = bounding_conds(quals, table, &info.index);
    if conds.is_empty() {
        return None;
    }
    let used: Vec<usize> = conds.iter().map(|(i, _)| *i).collect();
    let filter: Vec<Expr> = quals
        .iter()
        .enumerate()
        .filter(|(i, _)| !used.contains(i))
        .map(|(_, q)| q.clone())
        .collect();
    Some((conds.into_iter().map(|(_, c)| c).collect(), filter))
}
