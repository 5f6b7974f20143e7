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

use std::collections::hash_map::Entry;
use std::collections::HashMap;
use std::hash::{Hash, Hasher};

use common::PgResult;
use sql::expr::Expr;
use sql::plan::{JoinKind, Plan};
use types::ops::BinaryOp;
use types::{TypeId, Value};

use crate::agg::{GroupKey, KeyHashBuilder};
use crate::eval::{eval, eval_qual};
use crate::ops::{build, count_removed, Needed, Operator};
use crate::spill::{row_size, value_heap, RowFile, ROWS_PER_CHECK};
use crate::{ExecEnv, Row};

/// A join key: a single integer key as itself (no allocation, one
/// comparison), any other key as a `GroupKey`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum JoinKey {
    Int(i64),
    General(GroupKey),
}

type KeyMap = HashMap<JoinKey, (u32, u32), KeyHashBuilder>;

/// Left and right key expressions of the hash clauses, each over its own
/// input's row.
pub(crate) struct HashKeys<'p> {
    left: Vec<&'p Expr>,
    right: Vec<Expr>,
    /// One key of an integer type on both sides: `JoinKey::Int`.
    int: bool,
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

fn is_int(e: &Expr) -> bool {
    matches!(e.data_type().id, TypeId::Int2 | TypeId::Int4 | TypeId::Int8)
}

/// The hash keys of a hash join's `hash_cond`, as the planner wrote them:
/// each an equality with its left (outer) expression first.
pub(crate) fn hash_keys(conds: &[Expr], left_width: usize) -> HashKeys<'_> {
    let mut keys = HashKeys {
        left: Vec::new(),
        right: Vec::new(),
        int: false,
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
    keys.int = keys.left.len() == 1 && is_int(keys.left[0]) && is_int(&keys.right[0]);
    keys
}

fn int_of(v: &Value) -> Option<i64> {
    match v {
        Value::Int2(x) => Some(*x as i64),
        Value::Int4(x) => Some(*x as i64),
        Value::Int8(x) => Some(*x),
        _ => None,
    }
}

/// A row's key, or None if any value is NULL (NULL never equals anything).
fn key_of<E: std::borrow::Borrow<Expr>>(
    exprs: &[E],
    int: bool,
    row: &[Value],
    env: &mut ExecEnv,
) -> PgResult<Option<JoinKey>> {
    if int {
        // The binder typed both sides as integers: no other value occurs.
        let k = match exprs[0].borrow() {
            Expr::Column(i, _) => row.get(*i).and_then(int_of),
            e => int_of(&eval(e, row, env)?),
        };
        return Ok(k.map(JoinKey::Int));
    }
    let mut vals = Vec::with_capacity(exprs.len());
    for e in exprs {
        let v = match e.borrow() {
            Expr::Column(i, _) => row.get(*i).cloned().unwrap_or(Value::Null),
            e => eval(e, row, env)?,
        };
        if v.is_null() {
            return Ok(None);
        }
        vals.push(v);
    }
    Ok(Some(JoinKey::General(GroupKey(vals))))
}

/// A key's hash for choosing its batch: fixed (not the table's random
/// state), so a row read back from a file lands in the same batch again.
pub(crate) fn batch_hash(k: &GroupKey, seed: u64) -> u64 {
    #[allow(deprecated)]
    let mut h = std::hash::SipHasher::new_with_keys(seed, 0x5ca1_e9e5);
    k.hash(&mut h);
    h.finish()
}

fn join_batch_hash(k: &JoinKey) -> u64 {
    match k {
        // splitmix64's finaliser: unrelated to the table's hash.
        JoinKey::Int(x) => {
            let mut z = (*x as u64).wrapping_add(0x9e37_79b9_7f4a_7c15);
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        }
        JoinKey::General(g) => batch_hash(g, 0),
    }
}

/// A key as values in a batch file record (ahead of the row's).
fn key_values(k: &JoinKey, out: &mut Vec<Value>) {
    match k {
        JoinKey::Int(x) => out.push(Value::Int8(*x)),
        JoinKey::General(g) => out.extend(g.0.iter().cloned()),
    }
}

/// Right rows by key: rows live side by side in one vector (`stride`
/// values each, only the columns the join's parent and filter read); each
/// key maps to the first and last row of its chain, `next` links a chain
/// in arrival order.
struct HashTable {
    map: KeyMap,
    next: Vec<u32>,
    values: Vec<Value>,
    stride: usize,
}

const END: u32 = u32::MAX;

impl HashTable {
    fn new(stride: usize) -> Self {
        HashTable {
            map: KeyMap::default(),
            next: Vec::new(),
            values: Vec::new(),
            stride,
        }
    }

    fn rows(&self) -> usize {
        self.next.len()
    }

    fn row(&self, i: usize) -> &[Value] {
        &self.values[i * self.stride..(i + 1) * self.stride]
    }

    /// Files a row (its kept values) under `k`; returns the memory it added.
    fn insert(&mut self, k: JoinKey, vals: impl Iterator<Item = Value>) -> usize {
        let i = self.next.len() as u32;
        let before = self.values.len();
        self.values.extend(vals);
        debug_assert_eq!(self.values.len() - before, self.stride);
        let mut added = self.stride * std::mem::size_of::<Value>()
            + std::mem::size_of::<u32>()
            + 1
            + self.values[before..].iter().map(value_heap).sum::<usize>();
        self.next.push(END);
        match self.map.entry(k) {
            Entry::Occupied(mut e) => {
                let tail = e.get().1;
                self.next[tail as usize] = i;
                e.get_mut().1 = i;
            }
            Entry::Vacant(e) => {
                added += KEY_OVERHEAD
                    + match e.key() {
                        JoinKey::Int(_) => 0,
                        JoinKey::General(g) => row_size(&g.0),
                    };
                e.insert((i, i));
            }
        }
        added
    }
}

/// Bytes a new key costs in the table beyond its row (map slot, spare
/// capacity).
const KEY_OVERHEAD: usize = 2 * std::mem::size_of::<(JoinKey, (u32, u32))>();

impl HashKeys<'_> {
    fn right_key(&self, row: &[Value], env: &mut ExecEnv) -> PgResult<Option<JoinKey>> {
        key_of(&self.right, self.int, row, env)
    }

    fn left_key(&self, row: &[Value], env: &mut ExecEnv) -> PgResult<Option<JoinKey>> {
        key_of(&self.left, self.int, row, env)
    }

    /// Values a key takes in a batch file record.
    fn stored(&self) -> usize {
        if self.int {
            1
        } else {
            self.left.len()
        }
    }

    fn stored_key(&self, vals: &[Value]) -> JoinKey {
        if self.int {
            JoinKey::Int(int_of(&vals[0]).expect("a stored integer key"))
        } else {
            JoinKey::General(GroupKey(vals.to_vec()))
        }
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
    /// What the right input must produce (keys, kept columns).
    right_needed: Needed,
    /// The right columns the table keeps (what the parent and the join
    /// filter read) and the length of the right part of an output row.
    right_cols: Vec<usize>,
    right_len: usize,
    kind: JoinKind,
    /// The join filter, checked on every candidate pair.
    quals: Vec<&'p Expr>,
    keys: HashKeys<'p>,
    left_width: usize,
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
    /// The current batch's table of right rows and their matched flags.
    table: HashTable,
    matched: Vec<bool>,
    mem: usize,
    limit: usize,
    /// Batch files: right records are the key's values then the kept
    /// values; left records are the left rows.
    right_files: Vec<Option<RowFile>>,
    left_files: Vec<Option<RowFile>>,
    /// Left rows of the current batch > 0 (batch 0 reads `left`).
    left_file: Option<RowFile>,
    /// Kept values of right rows with a NULL key (RIGHT/FULL), in memory
    /// until the first split, then in a file.
    null_rows: Vec<Row>,
    null_file: Option<RowFile>,
    /// The left row being probed and its next candidate in the chain.
    current: Option<Row>,
    cursor: u32,
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
    /// `right`: the inner plan, the columns the join reads of it (None:
    /// all) and those it keeps in its table (None: all).
    pub(crate) fn new(
        left: Box<dyn Operator + 'p>,
        (right_plan, right_needed, right_kept): (&'p Plan, Needed, Needed),
        kind: JoinKind,
        quals: Vec<&'p Expr>,
        keys: HashKeys<'p>,
        (left_width, right_width): (usize, usize),
        node: usize,
    ) -> Self {
        let right_cols: Vec<usize> = match &right_kept {
            None => (0..right_width).collect(),
            Some(m) => (0..m.len().min(right_width)).filter(|&c| m[c]).collect(),
        };
        let right_len = match right_kept {
            None => right_width,
            Some(_) => right_cols.last().map_or(0, |c| c + 1),
        };
        HashJoinOp {
            left,
            right_plan,
            right_needed,
            table: HashTable::new(right_cols.len()),
            right_cols,
            right_len,
            kind,
            quals,
            keys,
            left_width,
            node,
            started: false,
            phase: Phase::Probe,
            nbatch: 1,
            batch: 0,
            grow: true,
            matched: Vec::new(),
            mem: 0,
            limit: 0,
            right_files: vec![None],
            left_files: vec![None],
            left_file: None,
            null_rows: Vec::new(),
            null_file: None,
            current: None,
            cursor: END,
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

    fn batch_of(&self, k: &JoinKey) -> usize {
        if self.nbatch == 1 {
            0
        } else {
            join_batch_hash(k) as usize & (self.nbatch - 1)
        }
    }

    /// The values of a right row the table keeps (moved out of it).
    fn kept(&self, mut r: Row) -> Row {
        self.right_cols
            .iter()
            .map(|&c| {
                r.get_mut(c)
                    .map(|v| std::mem::replace(v, Value::Null))
                    .unwrap_or(Value::Null)
            })
            .collect()
    }

    /// An output row: the left row (or NULLs) and the kept right values
    /// (or NULLs) at their columns.
    fn emit(&self, left: Option<&Row>, right: Option<&[Value]>) -> Row {
        let lw = self.left_width;
        let mut out = Vec::with_capacity(lw + self.right_len);
        if let Some(l) = left {
            out.extend(l.iter().cloned());
        }
        out.resize(lw + self.right_len, Value::Null);
        if let Some(r) = right {
            for (v, &c) in r.iter().zip(&self.right_cols) {
                out[lw + c] = v.clone();
            }
        }
        out
    }

    /// Adds a right row of the current batch to the table, splitting the
    /// batch when the table outgrows its memory.
    fn insert(&mut self, k: JoinKey, vals: Row, env: &mut ExecEnv) -> PgResult<()> {
        self.mem += self.table.insert(k, vals.into_iter());
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
        let stride = self.table.stride;
        let mut old = std::mem::replace(&mut self.table, HashTable::new(stride));
        let total = old.rows();
        self.mem = 0;
        let mut moved = 0;
        let mut record = Vec::new();
        for (k, (head, _)) in std::mem::take(&mut old.map) {
            let b = self.batch_of(&k);
            let mut i = head;
            while i != END {
                let vals = old.values[i as usize * stride..(i as usize + 1) * stride]
                    .iter_mut()
                    .map(|v| std::mem::replace(v, Value::Null));
                if b == self.batch {
                    self.mem += self.table.insert(k.clone(), vals);
                } else {
                    record.clear();
                    key_values(&k, &mut record);
                    record.extend(vals);
                    write_to(&mut self.right_files[b], &record, env)?;
                    moved += 1;
                }
                i = old.next[i as usize];
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
        let mut op = build(self.right_plan, env, self.right_needed.take())?;
        let mut n = 0u64;
        let mut record = Vec::new();
        while let Some(r) = op.next(env)? {
            n += 1;
            if n.is_multiple_of(ROWS_PER_CHECK) {
                env.check_cancel()?;
            }
            match self.keys.right_key(&r, env)? {
                None if self.keeps_right() => {
                    let r = self.kept(r);
                    if self.nbatch > 1 {
                        write_to(&mut self.null_file, &r, env)?;
                    } else {
                        self.mem += row_size(&r);
                        self.null_rows.push(r);
                    }
                }
                None => {}
                Some(k) => match self.batch_of(&k) {
                    0 => {
                        let r = self.kept(r);
                        self.insert(k, r, env)?
                    }
                    b => {
                        record.clear();
                        key_values(&k, &mut record);
                        let r = self.kept(r);
                        record.extend(r);
                        write_to(&mut self.right_files[b], &record, env)?
                    }
                },
            }
        }
        self.batch_loaded(env);
        Ok(())
    }

    /// Notes a loaded batch's figures (EXPLAIN ANALYZE's Hash line).
    fn batch_loaded(&mut self, env: &mut ExecEnv) {
        self.matched = vec![false; self.table.rows()];
        self.peak_mem = self.peak_mem.max(self.mem);
        self.peak_keys = self.peak_keys.max(self.table.map.len());
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
        self.matched.clear();
        self.table = HashTable::new(self.table.stride);
        self.mem = 0;
        self.left_file = None;
        let nk = self.keys.stored();
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
                while let Some(mut rec) = f.read(env)? {
                    let k = self.keys.stored_key(&rec[..nk]);
                    match self.batch_of(&k) {
                        b if b == self.batch => {
                            let vals = rec.split_off(nk);
                            self.insert(k, vals, env)?
                        }
                        b => write_to(&mut self.right_files[b], &rec, env)?,
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
        self.cursor = END;
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
                if let Some(&(head, _)) = self.table.map.get(&k) {
                    self.cursor = head;
                }
                if self.cursor != END || self.keeps_left() {
                    self.current = Some(r);
                }
            }
        }
        Ok(())
    }

    /// The next pair of the current left row that passes the join filter.
    fn next_pair(&mut self, env: &mut ExecEnv) -> PgResult<Option<Row>> {
        let Some(left) = &self.current else {
            return Ok(None);
        };
        while self.cursor != END {
            self.since_check += 1;
            if self.since_check >= PAIRS_PER_CHECK {
                self.since_check = 0;
                env.check_cancel()?;
            }
            let i = self.cursor as usize;
            self.cursor = self.table.next[i];
            let out = self.emit(Some(left), Some(self.table.row(i)));
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
                            return Ok(Some(self.emit(Some(&left), None)));
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
                Phase::Tail(from) => match (from..self.table.rows()).find(|&i| !self.matched[i]) {
                    Some(i) => {
                        self.phase = Phase::Tail(i + 1);
                        return Ok(Some(self.emit(None, Some(self.table.row(i)))));
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
                        Some(r) => return Ok(Some(self.emit(None, Some(&r)))),
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
