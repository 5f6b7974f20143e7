//! Aggregation, grouped by hashing (PostgreSQL's HashAggregate with the
//! spilling of PostgreSQL 13, nodeAgg.c): groups live in a table bounded by
//! work_mem × hash_mem_multiplier. Once it is full, a row of a group already
//! in the table is still folded in, and a row of a new group is written to
//! one of `PARTITIONS` temporary files chosen by its key's hash. When the
//! input ends the table's groups are emitted, and each file is aggregated
//! the same way in turn (hashing with another seed, so a partition that
//! overflows again splits differently). Each pass admits at least one
//! group, so this always ends.
//!
//! Grouping sets share the one table (PostgreSQL's hashed grouping sets,
//! one table per set, under one memory limit): each input row is folded
//! into a group of every set, keyed by the set's number and its keys (the
//! others NULL). A spilled row carries its set's number as an extra last
//! column, so a partition feeds only that set. An empty set `()` is one
//! group, emitted even when the input is empty.

use std::collections::HashMap;

use common::PgResult;
use sql::expr::{AggCall, Expr};
use sql::plan::GroupingSets;
use types::Value;

use crate::agg::{AggAccumulator, GroupKey, KeyHashBuilder, KeyView, SetKey};
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
    /// Grouping sets, each with which keys it has.
    sets: Option<(&'p GroupingSets, Vec<Vec<bool>>)>,
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
        sets: Option<&'p GroupingSets>,
        node: usize,
    ) -> Self {
        let sets = sets.map(|g| {
            let members = g
                .sets
                .iter()
                .map(|s| (0..keys.len()).map(|k| s.contains(&k)).collect())
                .collect();
            (g, members)
        });
        AggregateOp {
            input,
            keys,
            aggs,
            sets,
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
        let mut index: HashMap<GroupKey, usize, KeyHashBuilder> = HashMap::default();
        let mut groups: Vec<(Row, Vec<AggAccumulator>)> = Vec::new();
        let mut parts: Vec<Option<RowFile>> = (0..PARTITIONS).map(|_| None).collect();
        let mut mem = 0usize;
        let mut args = Vec::new();
        let mut n = 0u64;
        if let Some(f) = &mut file {
            f.rewind()?;
        }
        let nsets = self.sets.as_ref().map_or(1, |(g, _)| g.sets.len());
        loop {
            let r = match &mut file {
                Some(f) => f.read(env)?,
                None => self.input.next(env)?,
            };
            let Some(mut r) = r else { break };
            n += 1;
            if n.is_multiple_of(ROWS_PER_CHECK) {
                env.check_cancel()?;
            }
            // A spilled row of a grouping set carries the set's number.
            let only_set = match (&file, &self.sets) {
                (Some(_), Some(_)) => match r.pop() {
                    Some(Value::Int4(s)) => Some(s as usize),
                    _ => return Err(common::PgError::internal("spilled row lost its set")),
                },
                _ => None,
            };
            let mut values: Vec<Value> = self
                .keys
                .iter()
                .map(|k| eval(k, &r, env))
                .collect::<PgResult<_>>()?;
            let set_range = match only_set {
                Some(s) => s..s + 1,
                None => 0..nsets,
            };
            // A row feeding several grouping sets has its aggregates'
            // arguments evaluated once.
            let prepared = match set_range.len() > 1 {
                true => self
                    .aggs
                    .iter()
                    .map(|call| AggAccumulator::prepare(call, &r, env))
                    .collect::<PgResult<Vec<_>>>()?,
                false => Vec::new(),
            };
            for set in set_range {
                // Probed in place; the key is copied only for a new group.
                let found = match &self.sets {
                    // Without grouping sets this runs once per row: the
                    // row's key values move into the key.
                    None => {
                        let key = GroupKey(std::mem::take(&mut values));
                        index.get(&key).copied().ok_or(key)
                    }
                    Some((_, members)) => {
                        let probe = SetKey {
                            set: Value::Int4(set as i32),
                            values: &values,
                            members: &members[set],
                        };
                        index
                            .get(&probe as &dyn KeyView)
                            .copied()
                            .ok_or_else(|| probe.to_group_key())
                    }
                };
                let g = match found {
                    Ok(g) => g,
                    Err(key) => {
                        if mem < limit || groups.is_empty() {
                            mem += 2 * row_size(&key.0)
                                + GROUP_OVERHEAD
                                + self.aggs.len() * std::mem::size_of::<AggAccumulator>();
                            groups.push((
                                key.0.clone(),
                                self.aggs.iter().map(AggAccumulator::new).collect(),
                            ));
                            index.insert(key, groups.len() - 1);
                            groups.len() - 1
                        } else {
                            let p = batch_hash(&key, depth + 1) as usize % PARTITIONS;
                            if parts[p].is_none() {
                                parts[p] = Some(RowFile::create(env)?);
                            }
                            let part = parts[p].as_mut().expect("just created");
                            if self.sets.is_some() {
                                r.push(Value::Int4(set as i32));
                                part.write(&r, env)?;
                                r.pop();
                            } else {
                                part.write(&r, env)?;
                            }
                            continue;
                        }
                    }
                };
                if prepared.is_empty() {
                    for (acc, call) in groups[g].1.iter_mut().zip(self.aggs) {
                        acc.feed(call, &r, env, &mut args)?;
                    }
                } else {
                    for ((acc, call), args) in groups[g].1.iter_mut().zip(self.aggs).zip(&prepared)
                    {
                        if let Some(args) = args {
                            acc.feed_prepared(call, args, &r, env)?;
                        }
                    }
                }
            }
        }
        if n == 0 && file.is_none() {
            // No input: each empty grouping set still has its one group.
            if let Some((g, _)) = &self.sets {
                for (set, _) in g.sets.iter().enumerate().filter(|(_, s)| s.is_empty()) {
                    let mut key = vec![Value::Int4(set as i32)];
                    key.extend(self.keys.iter().map(|_| Value::Null));
                    groups.push((key, self.aggs.iter().map(AggAccumulator::new).collect()));
                }
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
            if let Some((g, _)) = &self.sets {
                // [set, keys...] becomes [keys..., GROUPING() values...].
                let Value::Int4(set) = row.remove(0) else {
                    unreachable!("a grouping set's key starts with its number")
                };
                row.extend(
                    (0..g.calls.len()).map(|c| Value::Int4(g.grouping_value(c, set as usize))),
                );
            }
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
                if self.keys.is_empty() && self.sets.is_none() {
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
