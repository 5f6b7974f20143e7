//! Index scans: the planner's index conditions turned into key ranges, the
//! tree walked for heap tids, and each tid's row fetched if the statement's
//! snapshot sees it. Index-only scans make the row from the entry's key
//! values and visit the heap only when the visibility map does not call
//! the entry's heap page all-visible (access README rule 30).

use std::collections::VecDeque;

use access::btree::{IndexDesc, IndexScan, ScanBound, ScanRange};
use access::heap::visibilitymap::MapReader;
use access::heap::{self, Tid};
use access::tuple;
use catalog::Table;
use common::PgResult;
use sql::expr::Expr;
use sql::plan::{IndexOp, IndexPath};
use types::{DataType, Value};

use crate::eval::{eval, eval_qual};
use crate::{ExecEnv, Operator, Row};

/// The key ranges `path`'s conditions select, in index order. Empty when a
/// condition can match nothing (a comparison with NULL).
pub(crate) fn ranges(
    path: &IndexPath,
    desc: &IndexDesc,
    env: &mut ExecEnv,
) -> PgResult<Vec<ScanRange>> {
    let none = Vec::new();
    let empty_row: Row = Vec::new();
    let mut prefix: Vec<Value> = Vec::new();
    // The IN list's values and where in the prefix they go.
    let mut in_list: Option<(usize, Vec<Value>)> = None;
    let mut lower: Option<(Value, bool)> = None;
    let mut upper: Option<(Value, bool)> = None;
    let mut range_key = None;
    for c in &path.conds {
        let value = match c.values.first() {
            Some(e) if c.op != IndexOp::In => Some(eval(e, &empty_row, env)?),
            _ => None,
        };
        if value.as_ref().is_some_and(Value::is_null) {
            return Ok(none);
        }
        match c.op {
            IndexOp::Eq => prefix.push(value.expect("one value")),
            IndexOp::IsNull => prefix.push(Value::Null),
            IndexOp::In => {
                let col = &desc.columns[c.key];
                let mut values = Vec::with_capacity(c.values.len());
                for e in &c.values {
                    let v = eval(e, &empty_row, env)?;
                    if !v.is_null() {
                        values.push(v);
                    }
                }
                values.sort_by(|a, b| {
                    let o = types::ops::compare_typed(col.ty.id, a, b);
                    if col.descending {
                        o.reverse()
                    } else {
                        o
                    }
                });
                values.dedup_by(|a, b| types::ops::compare_typed(col.ty.id, a, b).is_eq());
                if values.is_empty() {
                    return Ok(none);
                }
                in_list = Some((prefix.len(), values));
                prefix.push(Value::Null);
            }
            IndexOp::Gt | IndexOp::Ge => {
                range_key = Some(c.key);
                lower = Some((value.expect("one value"), c.op == IndexOp::Ge));
            }
            IndexOp::Lt | IndexOp::Le => {
                range_key = Some(c.key);
                upper = Some((value.expect("one value"), c.op == IndexOp::Le));
            }
        }
    }
    let make = |prefix: &[Value]| -> ScanRange {
        let bound = |end: Option<(Value, bool)>| match end {
            Some((v, inclusive)) => {
                let mut p = prefix.to_vec();
                p.push(v);
                Some(ScanBound {
                    prefix: p,
                    inclusive,
                })
            }
            None if prefix.is_empty() => None,
            None => Some(ScanBound {
                prefix: prefix.to_vec(),
                inclusive: true,
            }),
        };
        let (mut lo, mut hi) = (lower.clone(), upper.clone());
        if let Some(k) = range_key {
            let col = &desc.columns[k];
            if col.descending {
                std::mem::swap(&mut lo, &mut hi);
            }
            // NULLs sort at one end of the column: a range stops short of them.
            if col.nulls_first && lo.is_none() {
                lo = Some((Value::Null, false));
            } else if !col.nulls_first && hi.is_none() {
                hi = Some((Value::Null, false));
            }
        }
        ScanRange {
            lower: bound(lo),
            upper: bound(hi),
            backward: path.backward,
        }
    };
    Ok(match in_list {
        None => vec![make(&prefix)],
        Some((at, values)) => {
            let mut out = Vec::with_capacity(values.len());
            for v in values {
                prefix[at] = v;
                out.push(make(&prefix));
            }
            if path.backward {
                out.reverse();
            }
            out
        }
    })
}

/// The version of the row an index entry at `tid` leads to (through its
/// HOT chain) that `env`'s snapshot sees, decoded, with its own tid: its
/// columns, then its tid if `with_tid` (row locking), then the `system`
/// columns the scan emits.
pub(crate) fn fetch_visible(
    env: &ExecEnv,
    table: &Table,
    types: &[DataType],
    tid: Tid,
    with_tid: bool,
    system: &[sql::plan::SystemColumn],
) -> PgResult<Option<(Tid, Row)>> {
    let r = heap::fetch_visible(
        env.pool,
        table.locator(),
        tid,
        env.snapshot,
        env.tm,
        |at, t| {
            let mut row = Vec::with_capacity(types.len() + 1 + system.len());
            tuple::deform_tuple(t, types, table.toast_source(env.pool), &mut row)?;
            if with_tid {
                row.push(crate::lockrows::tid_value(at));
            }
            if !system.is_empty() {
                crate::system_columns::push_values(system, at, t, table, types, &mut row)?;
            }
            Ok((at, row))
        },
    )?;
    r.transpose()
}

/// The heap tids an index path selects, range after range (with their
/// entries' key values for an index-only path).
pub(crate) struct IndexTids {
    table: std::sync::Arc<IndexDesc>,
    rel: common::RelFileLocator,
    ranges: VecDeque<ScanRange>,
    scan: Option<IndexScan>,
    with_keys: bool,
}

impl IndexTids {
    pub fn new(table: &Table, path: &IndexPath, env: &mut ExecEnv) -> PgResult<IndexTids> {
        if let Some(sx) = &env.snapshot.ssi {
            sx.manager().check(sx, "conflict out checking")?;
        }
        let desc = path.index.desc(table);
        let ranges = ranges(path, &desc, env)?.into();
        Ok(IndexTids {
            table: std::sync::Arc::new(desc),
            rel: path.index.locator(),
            ranges,
            scan: None,
            with_keys: path.index_only,
        })
    }

    pub fn next(&mut self, env: &ExecEnv) -> PgResult<Option<Tid>> {
        self.next_entry(env, None)
    }

    /// The next entry's tid; its key values go to `keys` (replacing what
    /// was there) when given, for an index-only path.
    pub fn next_entry(
        &mut self,
        env: &ExecEnv,
        mut keys: Option<&mut Vec<Value>>,
    ) -> PgResult<Option<Tid>> {
        loop {
            if let Some(scan) = self.scan.as_mut() {
                if let Some((tid, values)) = scan.next()? {
                    if let (Some(out), Some(values)) = (keys.as_deref_mut(), values) {
                        out.clear();
                        out.extend_from_slice(values);
                    }
                    return Ok(Some(tid));
                }
                self.scan = None;
            }
            let Some(range) = self.ranges.pop_front() else {
                return Ok(None);
            };
            // SERIALIZABLE: the leaves read are SIREAD-locked, gaps and all.
            self.scan = Some(
                IndexScan::new(
                    env.pool,
                    self.rel,
                    std::sync::Arc::clone(&self.table),
                    range,
                    self.with_keys,
                )?
                .with_predicate_locks(env.snapshot.ssi.clone()),
            );
        }
    }
}

/// An Index Scan node: rows in index order that the snapshot sees and the
/// filter passes.
pub(crate) struct IndexScanOp<'p> {
    pub tids: IndexTids,
    pub table: &'p Table,
    pub types: Vec<DataType>,
    pub qual: &'p [Expr],
    /// Emit the row's tid after its columns (LockRows above).
    pub with_tid: bool,
    /// Then these (`system_columns.rs`); quals may read them.
    pub system: &'p [sql::plan::SystemColumn],
    pub key: usize,
    pub counters: Option<std::sync::Arc<crate::table_stats::TableCounters>>,
    pub fetched: u64,
}

impl Operator for IndexScanOp<'_> {
    fn next(&mut self, env: &mut ExecEnv) -> PgResult<Option<Row>> {
        loop {
            env.check_cancel()?;
            let Some(tid) = self.tids.next(env)? else {
                return Ok(None);
            };
            let fetched = fetch_visible(
                env,
                self.table,
                &self.types,
                tid,
                self.with_tid,
                self.system,
            )?;
            let Some((_, row)) = fetched else {
                continue;
            };
            self.fetched += 1;
            if !passes_filter(self.qual, &row, env, self.key)? {
                continue;
            }
            return Ok(Some(row));
        }
    }
}

/// Whether `row` passes an index scan's filter; a row it removes is counted
/// for EXPLAIN ANALYZE's `Rows Removed by Filter` of node `key`.
fn passes_filter(qual: &[Expr], row: &[Value], env: &mut ExecEnv, key: usize) -> PgResult<bool> {
    for q in qual {
        if !eval_qual(q, row, env)? {
            if env.instrument.is_some() {
                crate::ops::count_removed(env, key, 1);
            }
            return Ok(false);
        }
    }
    Ok(true)
}

impl Drop for IndexScanOp<'_> {
    fn drop(&mut self) {
        if let Some(c) = &self.counters {
            c.count_index_scan(self.fetched);
        }
    }
}

/// An Index Only Scan node: rows made from index entries (the columns not
/// in the key stay NULL: the planner checked no one reads them), each
/// entry's heap page visited only when the visibility map does not call it
/// all-visible, to see whether the snapshot sees the row.
pub(crate) struct IndexOnlyScanOp<'p> {
    pub tids: IndexTids,
    pub table: &'p Table,
    pub qual: &'p [Expr],
    /// The table column of each key column.
    pub key_columns: Vec<usize>,
    pub map: MapReader,
    pub keys: Vec<Value>,
    pub key: usize,
    pub counters: Option<std::sync::Arc<crate::table_stats::TableCounters>>,
    pub fetched: u64,
}

impl Operator for IndexOnlyScanOp<'_> {
    fn next(&mut self, env: &mut ExecEnv) -> PgResult<Option<Row>> {
        loop {
            env.check_cancel()?;
            let Some(tid) = self.tids.next_entry(env, Some(&mut self.keys))? else {
                return Ok(None);
            };
            // SERIALIZABLE: the row is locked before the map is asked, so a
            // writer that clears the bit later finds the lock.
            heap::predicate_lock_tuple(env.snapshot, self.table.locator(), tid.block, tid.offset);
            if !self.map.all_visible(env.pool, tid.block)? {
                if env.instrument.is_some() {
                    crate::ops::count_heap_fetch(env, self.key);
                }
                let seen = heap::fetch_visible(
                    env.pool,
                    self.table.locator(),
                    tid,
                    env.snapshot,
                    env.tm,
                    |_, _| (),
                )?;
                if seen.is_none() {
                    continue;
                }
            }
            self.fetched += 1;
            let mut row = vec![Value::Null; self.table.columns.len()];
            for (k, &c) in self.key_columns.iter().enumerate() {
                row[c] = std::mem::replace(&mut self.keys[k], Value::Null);
            }
            if !passes_filter(self.qual, &row, env, self.key)? {
                continue;
            }
            return Ok(Some(row));
        }
    }
}

impl Drop for IndexOnlyScanOp<'_> {
    fn drop(&mut self) {
        if let Some(c) = &self.counters {
            c.count_index_scan(self.fetched);
        }
    }
}
