//! Sort, as PostgreSQL's tuplesort: rows are sorted in memory while they fit
//! in work_mem (counted by `spill::row_size`); beyond it, sorted runs of
//! work_mem each are written to temporary files and merged with a heap —
//! in one pass when the runs fit the merge order, else in passes that
//! merge groups of runs into longer ones. ORDER BY ... LIMIT n (a bound)
//! keeps the n first rows in a heap instead and never spills.
//!
//! Every method is stable (ties keep their input order: runs are cut in
//! input order and the merge prefers the earlier run, the top-N heap the
//! earlier row), so all three give the same rows in the same order.

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;

use common::PgResult;
use sql::plan::SortKey;

use crate::ops::{compare_rows, Operator};
use crate::spill::{row_size, RowFile, ROWS_PER_CHECK};
use crate::{ExecEnv, Row};

/// A row in a heap, ordered by the sort keys, then by `tie` (its input
/// position, or the run it came from).
struct Item<'k> {
    row: Row,
    tie: u64,
    keys: &'k [SortKey],
}

impl Ord for Item<'_> {
    fn cmp(&self, other: &Self) -> Ordering {
        compare_rows(&self.row, &other.row, self.keys).then(self.tie.cmp(&other.tie))
    }
}
impl PartialOrd for Item<'_> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl PartialEq for Item<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Item<'_> {}

/// Runs merged at once, at least 6 as PostgreSQL's minimum merge order:
/// each input run holds a read buffer, and they share work_mem.
fn merge_order(work_mem: usize) -> usize {
    (work_mem / (2 * storage::temp_file::TEMP_BUFFER)).clamp(6, 512)
}

/// Merges sorted runs (earlier runs first among ties).
struct Merger<'k> {
    runs: Vec<RowFile>,
    heap: BinaryHeap<Reverse<Item<'k>>>,
    since_check: u64,
}

impl<'k> Merger<'k> {
    fn new(mut runs: Vec<RowFile>, keys: &'k [SortKey], env: &ExecEnv) -> PgResult<Self> {
        let mut heap = BinaryHeap::with_capacity(runs.len());
        for (i, r) in runs.iter_mut().enumerate() {
            r.rewind()?;
            if let Some(row) = r.read(env)? {
                heap.push(Reverse(Item {
                    row,
                    tie: i as u64,
                    keys,
                }));
            }
        }
        Ok(Merger {
            runs,
            heap,
            since_check: 0,
        })
    }

    fn next(&mut self, env: &ExecEnv) -> PgResult<Option<Row>> {
        self.since_check += 1;
        if self.since_check >= ROWS_PER_CHECK {
            self.since_check = 0;
            env.check_cancel()?;
        }
        let Some(mut top) = self.heap.peek_mut() else {
            return Ok(None);
        };
        let run = top.0.tie as usize;
        Ok(Some(match self.runs[run].read(env)? {
            // Replace the top in place: one sift instead of a pop and a push.
            Some(next) => std::mem::replace(&mut top.0.row, next),
            None => std::collections::binary_heap::PeekMut::pop(top).0.row,
        }))
    }
}

enum Output<'k> {
    NotStarted,
    Memory(std::vec::IntoIter<Row>),
    Merge(Merger<'k>),
}

pub(crate) struct SortOp<'p> {
    input: Box<dyn Operator + 'p>,
    keys: &'p [SortKey],
    /// Rows the parent reads at most (LIMIT + OFFSET above the sort).
    bound: Option<usize>,
    /// The plan node (EXPLAIN ANALYZE's Sort Method).
    node: usize,
    output: Output<'p>,
}

impl<'p> SortOp<'p> {
    pub(crate) fn new(
        input: Box<dyn Operator + 'p>,
        keys: &'p [SortKey],
        bound: Option<usize>,
        node: usize,
    ) -> Self {
        SortOp {
            input,
            keys,
            bound: bound.map(|b| b.max(1)),
            node,
            output: Output::NotStarted,
        }
    }

    fn write_run(&self, rows: &mut Vec<Row>, env: &ExecEnv) -> PgResult<RowFile> {
        let keys = self.keys;
        rows.sort_by(|a, b| compare_rows(a, b, keys));
        let mut f = RowFile::create(env)?;
        for r in rows.drain(..) {
            f.write(&r, env)?;
        }
        Ok(f)
    }

    /// Reads the whole input and sorts it (or cuts it into runs).
    fn load(&mut self, env: &mut ExecEnv) -> PgResult<Output<'p>> {
        let keys = self.keys;
        let limit = env.settings.work_mem();
        let mut rows: Vec<Row> = Vec::new();
        let mut mem = 0usize;
        let mut peak = 0usize;
        let mut runs: Vec<RowFile> = Vec::new();
        let mut heap: Option<BinaryHeap<Item<'p>>> = None;
        let mut n = 0u64;
        while let Some(r) = self.input.next(env)? {
            n += 1;
            if n.is_multiple_of(ROWS_PER_CHECK) {
                env.check_cancel()?;
            }
            if let Some(h) = &mut heap {
                let item = Item {
                    row: r,
                    tie: n,
                    keys,
                };
                let mut top = h.peek_mut().expect("a bounded heap is never empty");
                if item < *top {
                    mem = mem + row_size(&item.row) - row_size(&top.row);
                    *top = item;
                }
                peak = peak.max(mem);
                continue;
            }
            mem += row_size(&r);
            rows.push(r);
            peak = peak.max(mem);
            if let Some(b) = self.bound {
                // PostgreSQL's switch to a bounded heap: past twice the
                // bound, or out of memory with more rows than the bound.
                if runs.is_empty() && (rows.len() > 2 * b || (mem > limit && rows.len() > b)) {
                    let mut h: BinaryHeap<Item<'p>> = rows
                        .drain(..)
                        .enumerate()
                        .map(|(i, row)| Item {
                            row,
                            tie: i as u64 + 1,
                            keys,
                        })
                        .collect();
                    while h.len() > b {
                        h.pop();
                    }
                    mem = h.iter().map(|i| row_size(&i.row)).sum();
                    heap = Some(h);
                    continue;
                }
            }
            if mem > limit {
                runs.push(self.write_run(&mut rows, env)?);
                mem = 0;
            }
        }
        let kb = |b: usize| b.div_ceil(1024);
        if let Some(h) = heap {
            env.node_detail(
                self.node,
                false,
                "Sort Method",
                format!("top-N heapsort  Memory: {}kB", kb(peak)),
            );
            let sorted: Vec<Row> = h.into_sorted_vec().into_iter().map(|i| i.row).collect();
            return Ok(Output::Memory(sorted.into_iter()));
        }
        if runs.is_empty() {
            rows.sort_by(|a, b| compare_rows(a, b, keys));
            env.node_detail(
                self.node,
                false,
                "Sort Method",
                format!("quicksort  Memory: {}kB", kb(peak)),
            );
            return Ok(Output::Memory(rows.into_iter()));
        }
        if !rows.is_empty() {
            runs.push(self.write_run(&mut rows, env)?);
        }
        drop(rows);
        let disk: u64 = runs.iter().map(RowFile::size).sum();
        env.node_detail(
            self.node,
            false,
            "Sort Method",
            format!("external merge  Disk: {}kB", kb(disk as usize)),
        );
        let order = merge_order(limit);
        while runs.len() > order {
            // A pass: each group of adjacent runs becomes one longer run
            // (adjacent, so ties keep their input order).
            let mut merged = Vec::with_capacity(runs.len().div_ceil(order));
            let mut rest = runs.into_iter();
            loop {
                let group: Vec<RowFile> = rest.by_ref().take(order).collect();
                if group.is_empty() {
                    break;
                }
                let mut m = Merger::new(group, keys, env)?;
                let mut out = RowFile::create(env)?;
                while let Some(r) = m.next(env)? {
                    out.write(&r, env)?;
                }
                merged.push(out);
            }
            runs = merged;
        }
        Ok(Output::Merge(Merger::new(runs, keys, env)?))
    }
}

impl Operator for SortOp<'_> {
    fn next(&mut self, env: &mut ExecEnv) -> PgResult<Option<Row>> {
        if matches!(self.output, Output::NotStarted) {
            self.output = self.load(env)?;
        }
        match &mut self.output {
            Output::Memory(it) => Ok(it.next()),
            Output::Merge(m) => {
                let r = m.next(env)?;
                if r.is_none() {
                    // Done: delete the run files now, not when the plan ends.
                    self.output = Output::Memory(Vec::new().into_iter());
                }
                Ok(r)
            }
            Output::NotStarted => unreachable!(),
        }
    }
}
