//! Hash join: the planner's hash clauses (equalities of an expression of the
//! left input with one of the right input) let the join probe a table of the
//! right rows instead of scanning them all.
//!
//! The table is bounded by work_mem × hash_mem_multiplier, as PostgreSQL's
//! hybrid hash join (nodeHash.c): when the right rows outgrow it, the number
//! of batches doubles and the rows whose key hashes to another batch go to
//! that batch's temporary file; batch 0 stays in memory. Left rows of other
//! batches are written to their batch's file while batch 0 is probed; then
//! each batch's right rows are loaded (growing the batch count again if
//! needed: a row read back whose batch moved is written on to its new,
//! later batch) and its left rows probed. Unmatched right rows are emitted
//! per batch (RIGHT/FULL), unmatched left rows as they are probed (LEFT/FULL).
//! Right rows with a NULL key match nothing; RIGHT/FULL emits them at the end.
//!
//! A candidate found through the table satisfies every hash clause: `=`
//! evaluates `types::ops::compare(a, b) == Equal` on operands the binder
//! cast to one type, `GroupKey` equality is that same comparison (and its
//! hash agrees with it, as GROUP BY needs), and NULL keys are never entered
//! or probed. So only the join filter is checked per pair.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};

use common::PgResult;
use sql::expr::Expr;
use sql::plan::{JoinKind, Plan};
use types::ops::BinaryOp;
use types::Value;

use crate::agg::GroupKey;
use crate::eval::{eval, eval_qual};
use crate::ops::{build, count_removed, Operator};
use crate::spill::{row_size, RowFile, ROWS_PER_CHECK};
use crate::{ExecEnv, Row};

/// Left and right key expressions of the hash clauses, each over its own
/// input's row.
pub(crate) struct HashKeys<'p> {
    left: Vec<&'p Expr>,
    right: Vec<Expr>,
}

/// Whether `e` reads only columns below `left_width`.
fn reads_left(e: &Expr, left_width: usize) -> bool {
    let mut left = true;
    e.visit(&mut |x| {
        if let Expr::Column(i, _) = x {
            left &= *i < left_width;
        }
    });
    left
}

/// Moves an expression over the joined row onto the right input's row.
fn onto_right(e: &Expr, left_width: usize) -> Expr {
    e.clone()
        .transform(&mut |x| {
            Ok(match x {
                Expr::Column(i, t) => Expr::Column(i - left_width, t),
                other => other,
            })
        })
        .expect("moving columns cannot fail")
}

/// The hash keys of a hash join's `hash_cond`, as the planner wrote them:
/// each an equality with its left (outer) expression first.
pub(crate) fn hash_keys(conds: &[Expr], left_width: usize) -> HashKeys<'_> {
    let mut keys = HashKeys {
        left: Vec::new(),
        right: Vec::new(),
    };
    for c in conds {
        let Expr::Binary {
            op: BinaryOp::Eq,
            left,
            right,
            ..
        } = c
        else {
            panic!("a hash clause that is not an equality");
        };
        debug_assert!(reads_left(left, left_width) && !reads_left(right, left_width));
        keys.left.push(left);
        keys.right.push(onto_right(right, left_width));
    }
    keys
}

/// A row's key values, or None if any is NULL (NULL never equals anything).
fn key_of<'e>(
    exprs: impl Iterator<Item = &'e Expr>,
    row: &[Value],
    env: &mut ExecEnv,
) -> PgResult<Option<GroupKey>> {
    let mut vals = Vec::new();
    for e in exprs {
        let v = eval(e, row, env)?;
        if v.is_null() {
            return Ok(None);
        }
        vals.push(v);
    }
    Ok(Some(GroupKey(vals)))
}

/// A key's hash for choosing its batch: fixed (not the table's random
/// state), so a row read back from a file lands in the same batch again.
pub(crate) fn batch_hash(k: &GroupKey, seed: u64) -> u64 {
    #[allow(deprecated)]
    let mut h = std::hash::SipHasher::new_with_keys(seed, 0x5ca1_e9e5);
    k.hash(&mut h);
    h.finish()
}

/// Right rows by key: each key's bucket of row indices.
#[derive(Default)]
struct HashTable {
    map: HashMap<GroupKey, usize>,
    buckets: Vec<Vec<usize>>,
}

/// Bytes a new key costs in the table beyond its row (map entry, bucket).
const KEY_OVERHEAD: usize = 64;

impl HashTable {
    /// Files row `i` under `k`; returns the memory it added.
    fn insert(&mut self, k: GroupKey, i: usize) -> usize {
        let next = self.buckets.len();
        let mut added = std::mem::size_of::<usize>();
        let b = match self.map.get(&k) {
            Some(b) => *b,
            None => {
                added += KEY_OVERHEAD + row_size(&k.0);
                self.map.insert(k, next);
                self.buckets.push(Vec::with_capacity(1));
                next
            }
        };
        self.buckets[b].push(i);
        added
    }
}

impl HashKeys<'_> {
    fn right_key(&self, row: &[Value], env: &mut ExecEnv) -> PgResult<Option<GroupKey>> {
        key_of(self.right.iter(), row, env)
    }

    fn left_key(&self, row: &[Value], env: &mut ExecEnv) -> PgResult<Option<GroupKey>> {
        key_of(self.left.iter().copied(), row, env)
    }
}

#[derive(Clone, Copy)]
enum Phase {
    /// Probing the current batch's table with left rows.
    Probe,
    /// Emitting the batch's unmatched right rows from this index.
    Tail(usize),
    /// Loading the next batch.
    NextBatch,
    /// Emitting the right rows with NULL keys.
    NullTail,
    Done,
}

pub(crate) struct HashJoinOp<'p> {
    left: Box<dyn Operator + 'p>,
    right_plan: &'p Plan,
    kind: JoinKind,
    /// The join filter, checked on every candidate pair.
    quals: Vec<&'p Expr>,
    keys: HashKeys<'p>,
    left_width: usize,
    right_width: usize,
    /// The plan node (EXPLAIN ANALYZE).
    node: usize,
    started: bool,
    phase: Phase,
    /// Batches (a power of two) and the one in memory.
    nbatch: usize,
    batch: usize,
    /// Whether doubling the batches may still help (a split that moved no
    /// row, or all of them, shows a skewed key: growing stops).
    grow: bool,
    /// The current batch's right rows, their matched flags, their table.
    rows: Vec<Row>,
    matched: Vec<bool>,
    table: HashTable,
    mem: usize,
    limit: usize,
    right_files: Vec<Option<RowFile>>,
    left_files: Vec<Option<RowFile>>,
    /// Left rows of the current batch > 0 (batch 0 reads `left`).
    left_file: Option<RowFile>,
    /// Right rows with a NULL key (RIGHT/FULL), in memory until the first
    /// split, then in a file.
    null_rows: Vec<Row>,
    null_file: Option<RowFile>,
    /// The left row being probed, its bucket, the next candidate.
    current: Option<Row>,
    bucket: Option<usize>,
    pos: usize,
    current_matched: bool,
    since_check: u32,
    /// For EXPLAIN ANALYZE: the most memory and keys a batch held.
    peak_mem: usize,
    peak_keys: usize,
}

/// Pairs a join tries between interrupt checks.
const PAIRS_PER_CHECK: u32 = 4096;

/// At most this many batches: each has two files open with a buffer of
/// `BATCH_BUFFER` (4 MB in all at the cap). Past it a batch may exceed
/// its memory, as when a key is skewed.
const MAX_BATCHES: usize = 256;
const BATCH_BUFFER: usize = 8 * 1024;

impl<'p> HashJoinOp<'p> {
    pub(crate) fn new(
        left: Box<dyn Operator + 'p>,
        right_plan: &'p Plan,
        kind: JoinKind,
        quals: Vec<&'p Expr>,
        keys: HashKeys<'p>,
        (left_width, right_width): (usize, usize),
        node: usize,
    ) -> Self {
        HashJoinOp {
            left,
            right_plan,
            kind,
            quals,
            keys,
            left_width,
            right_width,
            node,
            started: false,
            phase: Phase::Probe,
            nbatch: 1,
            batch: 0,
            grow: true,
            rows: Vec::new(),
            matched: Vec::new(),
            table: HashTable::default(),
            mem: 0,
            limit: 0,
            right_files: vec![None],
            left_files: vec![None],
            left_file: None,
            null_rows: Vec::new(),
            null_file: None,
            current: None,
            bucket: None,
            pos: 0,
            current_matched: false,
            since_check: 0,
            peak_mem: 0,
            peak_keys: 0,
        }
    }

    fn keeps_right(&self) -> bool {
        matches!(self.kind, JoinKind::Right | JoinKind::Full)
    }

    fn keeps_left(&self) -> bool {
        matches!(self.kind, JoinKind::Left | JoinKind::Full)
    }

    fn batch_of(&self, k: &GroupKey) -> usize {
        if self.nbatch == 1 {
            0
        } else {
            batch_hash(k, 0) as usize & (self.nbatch - 1)
        }
    }

    /// Adds a right row of the current batch to the table, splitting the
    /// batch when the table outgrows its memory.
    fn insert(&mut self, r: Row, k: GroupKey, env: &mut ExecEnv) -> PgResult<()> {
        self.mem += row_size(&r) + self.table.insert(k, self.rows.len());
        self.rows.push(r);
        if self.mem > self.limit && self.grow {
            self.split(env)?;
        }
        Ok(())
    }

    /// Doubles the batches and writes the current batch's rows that now
    /// belong to another batch to its file.
    fn split(&mut self, env: &mut ExecEnv) -> PgResult<()> {
        self.nbatch *= 2;
        if self.nbatch >= MAX_BATCHES {
            self.grow = false;
        }
        self.right_files.resize_with(self.nbatch, || None);
        self.left_files.resize_with(self.nbatch, || None);
        if !self.null_rows.is_empty() {
            for r in std::mem::take(&mut self.null_rows) {
                write_to(&mut self.null_file, &r, env)?;
            }
        }
        let rows = std::mem::take(&mut self.rows);
        let total = rows.len();
        self.table = HashTable::default();
        self.mem = 0;
        let mut moved = 0;
        for r in rows {
            let k = self
                .keys
                .right_key(&r, env)?
                .expect("NULL keys are not in the table");
            let b = self.batch_of(&k);
            if b == self.batch {
                self.mem += row_size(&r) + self.table.insert(k, self.rows.len());
                self.rows.push(r);
            } else {
                write_to(&mut self.right_files[b], &r, env)?;
                moved += 1;
            }
        }
        if moved == 0 || moved == total {
            self.grow = false;
        }
        Ok(())
    }

    /// Reads the right input: batch 0 into the table, the rest to files.
    fn build_first(&mut self, env: &mut ExecEnv) -> PgResult<()> {
        self.limit = env.settings.hash_mem();
        let mut op = build(self.right_plan, env, None)?;
        let mut n = 0u64;
        while let Some(r) = op.next(env)? {
            n += 1;
            if n.is_multiple_of(ROWS_PER_CHECK) {
                env.check_cancel()?;
            }
            match self.keys.right_key(&r, env)? {
                None if self.keeps_right() => {
                    if self.nbatch > 1 {
                        write_to(&mut self.null_file, &r, env)?;
                    } else {
                        self.mem += row_size(&r);
                        self.null_rows.push(r);
                    }
                }
                None => {}
                Some(k) => match self.batch_of(&k) {
                    0 => self.insert(r, k, env)?,
                    b => write_to(&mut self.right_files[b], &r, env)?,
                },
            }
        }
        self.batch_loaded(env);
        Ok(())
    }

    /// Notes a loaded batch's figures (EXPLAIN ANALYZE's Hash line).
    fn batch_loaded(&mut self, env: &mut ExecEnv) {
        self.matched = vec![false; self.rows.len()];
        self.peak_mem = self.peak_mem.max(self.mem);
        self.peak_keys = self.peak_keys.max(self.table.buckets.len());
        if env.instrument.is_some() {
            let buckets = self.peak_keys.next_power_of_two().max(1024);
            env.node_detail(
                self.node,
                true,
                "Buckets",
                format!(
                    "{buckets}  Batches: {}  Memory Usage: {}kB",
                    self.nbatch,
                    self.peak_mem.div_ceil(1024)
                ),
            );
        }
    }

    /// Moves to the next batch with rows; false when there is none.
    fn next_batch(&mut self, env: &mut ExecEnv) -> PgResult<bool> {
        self.rows.clear();
        self.matched.clear();
        self.table = HashTable::default();
        self.mem = 0;
        self.left_file = None;
        loop {
            self.batch += 1;
            if self.batch >= self.nbatch {
                return Ok(false);
            }
            let right = self.right_files[self.batch].take();
            let left = self.left_files[self.batch].take();
            let needed = left.is_some() || (right.is_some() && self.keeps_right());
            if !needed {
                continue;
            }
            if let Some(mut f) = right {
                f.rewind()?;
                while let Some(r) = f.read(env)? {
                    let k = self
                        .keys
                        .right_key(&r, env)?
                        .expect("NULL keys are not batched");
                    match self.batch_of(&k) {
                        b if b == self.batch => self.insert(r, k, env)?,
                        b => write_to(&mut self.right_files[b], &r, env)?,
                    }
                }
            }
            if let Some(mut f) = left {
                f.rewind()?;
                self.left_file = Some(f);
            }
            self.batch_loaded(env);
            return Ok(true);
        }
    }

    /// Takes a left row: files it under its batch, or starts probing.
    fn start_left(&mut self, r: Row, env: &mut ExecEnv) -> PgResult<()> {
        self.bucket = None;
        self.pos = 0;
        self.current_matched = false;
        match self.keys.left_key(&r, env)? {
            None => {
                if self.keeps_left() {
                    self.current = Some(r);
                }
            }
            Some(k) => {
                let b = self.batch_of(&k);
                if b != self.batch {
                    // Batches only grow, so a row's batch is never behind.
                    debug_assert!(b > self.batch);
                    return write_to(&mut self.left_files[b], &r, env);
                }
                self.bucket = self.table.map.get(&k).copied();
                if self.bucket.is_some() || self.keeps_left() {
                    self.current = Some(r);
                }
            }
        }
        Ok(())
    }

    /// The next pair of the current left row that passes the join filter.
    fn next_pair(&mut self, env: &mut ExecEnv) -> PgResult<Option<Row>> {
        let (Some(left), Some(b)) = (&self.current, self.bucket) else {
            return Ok(None);
        };
        let bucket = &self.table.buckets[b];
        while self.pos < bucket.len() {
            self.since_check += 1;
            if self.since_check >= PAIRS_PER_CHECK {
                self.since_check = 0;
                env.check_cancel()?;
            }
            let i = bucket[self.pos];
            self.pos += 1;
            let mut out = Vec::with_capacity(self.left_width + self.right_width);
            out.extend(left.iter().cloned());
            out.extend(self.rows[i].iter().cloned());
            let mut ok = true;
            for q in &self.quals {
                if !eval_qual(q, &out, env)? {
                    ok = false;
                    if env.instrument.is_some() {
                        count_removed(env, self.node, 1);
                    }
                    break;
                }
            }
            if ok {
                self.current_matched = true;
                self.matched[i] = true;
                return Ok(Some(out));
            }
        }
        Ok(None)
    }

    fn null_left(&self, right: &Row) -> Row {
        let mut out = vec![Value::Null; self.left_width];
        out.extend(right.iter().cloned());
        out
    }
}

fn write_to(slot: &mut Option<RowFile>, r: &Row, env: &ExecEnv) -> PgResult<()> {
    if slot.is_none() {
        *slot = Some(RowFile::with_buffer(env, BATCH_BUFFER)?);
    }
    slot.as_mut().expect("just created").write(r, env)
}

impl Operator for HashJoinOp<'_> {
    fn next(&mut self, env: &mut ExecEnv) -> PgResult<Option<Row>> {
        if !self.started {
            self.started = true;
            self.build_first(env)?;
        }
        loop {
            match self.phase {
                Phase::Probe => {
                    if let Some(out) = self.next_pair(env)? {
                        return Ok(Some(out));
                    }
                    if let Some(left) = self.current.take() {
                        if !self.current_matched && self.keeps_left() {
                            let mut out = left;
                            out.extend(std::iter::repeat_n(Value::Null, self.right_width));
                            return Ok(Some(out));
                        }
                    }
                    let next = match &mut self.left_file {
                        Some(f) => f.read(env)?,
                        None if self.batch == 0 => self.left.next(env)?,
                        None => None,
                    };
                    match next {
                        Some(r) => self.start_left(r, env)?,
                        None if self.keeps_right() => self.phase = Phase::Tail(0),
                        None => self.phase = Phase::NextBatch,
                    }
                }
                Phase::Tail(from) => match (from..self.rows.len()).find(|&i| !self.matched[i]) {
                    Some(i) => {
                        self.phase = Phase::Tail(i + 1);
                        return Ok(Some(self.null_left(&self.rows[i])));
                    }
                    None => self.phase = Phase::NextBatch,
                },
                Phase::NextBatch => {
                    self.phase = if self.next_batch(env)? {
                        Phase::Probe
                    } else {
                        if let Some(f) = &mut self.null_file {
                            f.rewind()?;
                        }
                        Phase::NullTail
                    };
                }
                Phase::NullTail => {
                    let r = match &mut self.null_file {
                        Some(f) => f.read(env)?,
                        None => self.null_rows.pop(),
                    };
                    match r {
                        Some(r) => return Ok(Some(self.null_left(&r))),
                        None => {
                            self.null_file = None;
                            self.phase = Phase::Done;
                        }
                    }
                }
                Phase::Done => return Ok(None),
            }
        }
    }
}
