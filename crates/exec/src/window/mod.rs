//! WindowAgg (PostgreSQL's nodeWindowAgg.c): window functions over input
//! sorted by the partition keys then the window's ORDER BY. One partition
//! is buffered in memory at a time (no spilling beyond work_mem); each row
//! leaves with one more column per call.
//!
//! - `frames.rs`: peer groups and each row's frame (ROWS, RANGE with
//!   offsets, GROUPS; EXCLUDE) as ranges of partition positions;
//! - `functions.rs`: the calls' values over a partition: ranking
//!   functions, lag/lead, first/last/nth_value, and aggregates over frames
//!   (running, O(n), when the frame starts at the partition's start).

mod frames;
mod functions;

use std::cmp::Ordering;

use common::PgResult;
use sql::expr::{WindowCall, WindowFrame, WindowFunc};
use sql::plan::SortKey;

use crate::ops::{compare_rows, Operator};
use crate::{ExecEnv, Row};

pub(crate) struct WindowAggOp<'p> {
    input: Box<dyn Operator + 'p>,
    /// Partition columns as ascending sort keys (NULLs equal).
    partition: Vec<SortKey>,
    order: &'p [SortKey],
    frame: &'p WindowFrame,
    funcs: &'p [WindowCall],
    /// The input's width: rows may come shorter (columns no one reads are
    /// left off) and are padded so the results land at their columns.
    input_width: usize,
    /// The first row of the next partition, read while finding this one's end.
    lookahead: Option<Row>,
    output: std::vec::IntoIter<Row>,
    done: bool,
}

impl<'p> WindowAggOp<'p> {
    pub(crate) fn new(
        input: Box<dyn Operator + 'p>,
        partition: &[usize],
        order: &'p [SortKey],
        frame: &'p WindowFrame,
        funcs: &'p [WindowCall],
        input_width: usize,
    ) -> Self {
        WindowAggOp {
            input,
            partition: partition
                .iter()
                .map(|&column| SortKey {
                    column,
                    descending: false,
                    nulls_first: false,
                })
                .collect(),
            order,
            frame,
            funcs,
            input_width,
            lookahead: None,
            output: Vec::new().into_iter(),
            done: false,
        }
    }

    /// The next partition's rows; empty at the end of the input.
    fn read_partition(&mut self, env: &mut ExecEnv) -> PgResult<Vec<Row>> {
        let first = match self.lookahead.take() {
            Some(r) => r,
            None => match self.input.next(env)? {
                Some(r) => r,
                None => return Ok(Vec::new()),
            },
        };
        let mut rows = vec![first];
        while let Some(r) = self.input.next(env)? {
            if compare_rows(&rows[0], &r, &self.partition) == Ordering::Equal {
                rows.push(r);
            } else {
                self.lookahead = Some(r);
                break;
            }
        }
        Ok(rows)
    }
}

impl Operator for WindowAggOp<'_> {
    fn next(&mut self, env: &mut ExecEnv) -> PgResult<Option<Row>> {
        loop {
            if let Some(r) = self.output.next() {
                return Ok(Some(r));
            }
            if self.done {
                return Ok(None);
            }
            let mut rows = self.read_partition(env)?;
            if rows.is_empty() {
                self.done = true;
                continue;
            }
            let peers = self.funcs.iter().any(|f| {
                !matches!(
                    f.func,
                    WindowFunc::RowNumber | WindowFunc::Ntile | WindowFunc::Lag | WindowFunc::Lead
                )
            });
            let frames = frames::Frames::new(&rows, self.order, self.frame, peers, env)?;
            let mut results = Vec::with_capacity(self.funcs.len());
            for f in self.funcs {
                results.push(functions::evaluate(f, &rows, &frames, env)?);
            }
            for (i, row) in rows.iter_mut().enumerate() {
                row.resize(self.input_width, types::Value::Null);
                row.extend(
                    results
                        .iter_mut()
                        .map(|r| std::mem::replace(&mut r[i], types::Value::Null)),
                );
            }
            self.output = rows.into_iter();
        }
    }
}
