//! Aggregation, grouped by hashing (PostgreSQL's HashAggregate with the
//! spilling of PostgreSQL 13, nodeAgg.c): groups live in a table bounded by
//! work_mem × hash_mem_multiplier. Once it is full, a row of a group already
//! in the table is still folded in, and a row of a new group is written to
//! one of `PARTITIONS` temporary files chosen by its key's hash. When the
//! input ends the table's groups are emitted, and each file is aggregated
//! the same way in turn (hashing with another seed, so a partition that
//! overflows again splits differently). Each pass admits at least one
//! group, so this always ends.

use std::collections::HashMap;

use common::PgResult;
use sql::expr::{AggCall, Expr};

use crate::agg::{AggAccumulator, GroupKey};
use crate::eval::eval;
use crate::join::batch_hash;
use crate::ops::Operator;
use crate::spill::{row_size, RowFile, ROWS_PER_CHECK};
use crate::{ExecEnv, Row};

/// Files a full table's new groups are spread over.
const PARTITIONS: usize = 8;

/// Bytes a group costs beyond its key (map entry, accumulator states).
const GROUP_OVERHEAD: usize = 64;

pub(crate) struct AggregateOp<'p> {
    input: Box<dyn Operator + 'p>,
    keys: &'p [Expr],
    aggs: &'p [AggCall],
    node: usize,
    started: bool,
    output: std::vec::IntoIter<Row>,
    /// Spilled partitions still to aggregate, with the pass that wrote them.
    pending: Vec<(RowFile, u64)>,
    /// EXPLAIN ANALYZE: passes run, the most memory one used, bytes spilled.
    batches: u64,
    peak_mem: usize,
    disk: u64,
}

impl<'p> AggregateOp<'p> {
    pub(crate) fn new(
        input: Box<dyn Operator + 'p>,
        keys: &'p [Expr],
        aggs: &'p [AggCall],
        node: usize,
    ) -> Self {
        AggregateOp {
            input,
            keys,
            aggs,
            node,
            started: false,
            output: Vec::new().into_iter(),
            pending: Vec::new(),
            batches: 0,
            peak_mem: 0,
            disk: 0,
        }
    }

    fn plain(&mut self, env: &mut ExecEnv) -> PgResult<Vec<Row>> {
        // One group, no hashing per row.
        let mut accs: Vec<AggAccumulator> = self.aggs.iter().map(AggAccumulator::new).collect();
        let mut args = Vec::new();
        let mut n = 0u64;
        while let Some(r) = self.input.next(env)? {
            n += 1;
            if n.is_multiple_of(ROWS_PER_CHECK) {
                env.check_cancel()?;
            }
            for (acc, call) in accs.iter_mut().zip(self.aggs) {
                acc.feed(call, &r, env, &mut args)?;
            }
        }
        let row = accs
            .into_iter()
            .zip(self.aggs)
            .map(|(acc, call)| acc.finish(call))
            .collect::<PgResult<Row>>()?;
        Ok(vec![row])
    }

    /// One pass over the input (`file` None) or a spilled partition.
    fn pass(
        &mut self,
        mut file: Option<RowFile>,
        depth: u64,
        env: &mut ExecEnv,
    ) -> PgResult<Vec<Row>> {
        let limit = env.settings.hash_mem();
        let mut index: HashMap<GroupKey, usize> = HashMap::new();
        let mut groups: Vec<(Row, Vec<AggAccumulator>)> = Vec::new();
        let mut parts: Vec<Option<RowFile>> = (0..PARTITIONS).map(|_| None).collect();
        let mut mem = 0usize;
        let mut args = Vec::new();
        let mut n = 0u64;
        if let Some(f) = &mut file {
            f.rewind()?;
        }
        loop {
            let r = match &mut file {
                Some(f) => f.read(env)?,
                None => self.input.next(env)?,
            };
            let Some(r) = r else { break };
            n += 1;
            if n.is_multiple_of(ROWS_PER_CHECK) {
                env.check_cancel()?;
            }
            let key = GroupKey(
                self.keys
                    .iter()
                    .map(|k| eval(k, &r, env))
                    .collect::<PgResult<_>>()?,
            );
            let g = match index.get(&key) {
                Some(&g) => g,
                None if mem < limit || groups.is_empty() => {
                    mem += 2 * row_size(&key.0)
                        + GROUP_OVERHEAD
                        + self.aggs.len() * std::mem::size_of::<AggAccumulator>();
                    groups.push((
                        key.0.clone(),
                        self.aggs.iter().map(AggAccumulator::new).collect(),
                    ));
                    index.insert(key, groups.len() - 1);
                    groups.len() - 1
                }
                None => {
                    let p = batch_hash(&key, depth + 1) as usize % PARTITIONS;
                    if parts[p].is_none() {
                        parts[p] = Some(RowFile::create(env)?);
                    }
                    parts[p].as_mut().expect("just created").write(&r, env)?;
                    continue;
                }
            };
            for (acc, call) in groups[g].1.iter_mut().zip(self.aggs) {
                acc.feed(call, &r, env, &mut args)?;
            }
        }
        drop(file);
        drop(index);
        self.batches += 1;
        self.peak_mem = self.peak_mem.max(mem);
        for f in parts.into_iter().flatten() {
            self.disk += f.size();
            self.pending.push((f, depth + 1));
        }
        if env.instrument.is_some() {
            let mut text = format!(
                "{}  Memory Usage: {}kB",
                self.batches + self.pending.len() as u64,
                self.peak_mem.div_ceil(1024)
            );
            if self.disk > 0 {
                text.push_str(&format!("  Disk Usage: {}kB", self.disk.div_ceil(1024)));
            }
            env.node_detail(self.node, false, "Batches", text);
        }
        let mut out = Vec::with_capacity(groups.len());
        for (mut row, accs) in groups {
            for (acc, call) in accs.into_iter().zip(self.aggs) {
                row.push(acc.finish(call)?);
            }
            out.push(row);
        }
        Ok(out)
    }
}

impl Operator for AggregateOp<'_> {
    fn next(&mut self, env: &mut ExecEnv) -> PgResult<Option<Row>> {
        loop {
            if let Some(r) = self.output.next() {
                return Ok(Some(r));
            }
            let rows = if !self.started {
                self.started = true;
                if self.keys.is_empty() {
                    self.plain(env)?
                } else {
                    self.pass(None, 0, env)?
                }
            } else if let Some((f, depth)) = self.pending.pop() {
                self.pass(Some(f), depth, env)?
            } else {
                return Ok(None);
            };
            self.output = rows.into_iter();
        }
    }
}
