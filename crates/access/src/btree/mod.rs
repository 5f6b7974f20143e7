//! B-tree indexes: a Lehman–Yao B-link tree as PostgreSQL's nbtree (see
//! README.md, rules 18–). Every entry is (key values, heap tid) and the tid
//! is the last key column, so entries are unique and a deletion finds its
//! entry exactly; readers hold one page lock at a time and move right past
//! concurrent splits.
//!
//! This file is the interface the executor and the catalog build on; the
//! pages (`page.rs`), tuples (`tuple.rs`), descent (`search.rs`), inserts
//! and splits (`insert.rs`, `split.rs`), scans (`scan.rs`), the bottom-up
//! build (`build.rs`), VACUUM (`vacuum.rs`), page deletion and reuse
//! (`delete.rs`), amcheck (`check.rs`) and the log records (`log.rs`) are
//! in their own files.

use std::cmp::Ordering;

use common::{PgResult, RelFileLocator, Xid};
use storage::buffer::{BufferPool, ReadMode};
use storage::ForkNumber;
use txn::TransactionManager;
use types::{DataType, Value};
use wal::Wal;

use crate::heap::{Tid, WaitForXid};

mod build;
mod check;
mod delete;
mod insert;
pub mod log;
mod page;
mod scan;
mod search;
mod split;
#[cfg(test)]
mod tests;
mod tuple;
mod vacuum;

pub use scan::{IndexScan, ScanEntry};
pub use tuple::MAX_TUPLE_SIZE;

/// What an index's key looks like: one entry per key column.
#[derive(Debug, Clone, PartialEq)]
pub struct IndexDesc {
    pub columns: Vec<KeyColumn>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct KeyColumn {
    pub ty: DataType,
    /// DESC: larger values first.
    pub descending: bool,
    /// NULLS FIRST (PostgreSQL's default is NULLS LAST for ASC, FIRST for DESC).
    pub nulls_first: bool,
}

impl IndexDesc {
    /// Compares two key prefixes column by column in index order (DESC and
    /// NULLS FIRST applied, NULL a value like any other); a shorter prefix
    /// that matches the longer one's start is Equal.
    pub fn compare_prefix(&self, a: &[Value], b: &[Value]) -> Ordering {
        for ((col, x), y) in self.columns.iter().zip(a).zip(b) {
            let ord = match (x.is_null(), y.is_null()) {
                (true, true) => Ordering::Equal,
                (true, false) if col.nulls_first => Ordering::Less,
                (true, false) => Ordering::Greater,
                (false, true) if col.nulls_first => Ordering::Greater,
                (false, true) => Ordering::Less,
                (false, false) => {
                    let o = types::ops::compare_typed(col.ty.id, x, y);
                    if col.descending {
                        o.reverse()
                    } else {
                        o
                    }
                }
            };
            if ord != Ordering::Equal {
                return ord;
            }
        }
        Ordering::Equal
    }
}

/// An order-preserving summary of a key's first column for sorting many
/// keys (PostgreSQL's abbreviated keys): keys whose abbreviations differ
/// compare as the abbreviations do; keys with equal ones must be compared
/// in full, unless `IndexDesc::abbreviation_is_exact`. The high half ranks
/// NULL before or after every value, the low half holds the value's bits:
/// integers with the sign flipped, text's first eight bytes (C order),
/// inverted for DESC; types without a summary (floats, numeric, char(n))
/// have 0, so every such key is compared in full.
pub type Abbreviation = u128;

impl IndexDesc {
    pub fn abbreviate(&self, key: &[Value]) -> Abbreviation {
        let (Some(col), Some(v)) = (self.columns.first(), key.first()) else {
            return 0;
        };
        if v.is_null() {
            let rank: u128 = if col.nulls_first { 0 } else { 2 };
            return rank << 64;
        }
        let bits = abbreviated_bits(col.ty.id, v).unwrap_or(0);
        let bits = if col.descending { !bits } else { bits };
        (1u128 << 64) | bits as u128
    }

    /// Whether equal abbreviations mean equal keys: a one-column key of an
    /// integer-like type.
    pub fn abbreviation_is_exact(&self) -> bool {
        match self.columns.as_slice() {
            [col] => integer_like(col.ty.id),
            _ => false,
        }
    }
}

fn integer_like(ty: types::TypeId) -> bool {
    use types::TypeId as T;
    matches!(
        ty,
        T::Bool | T::Int2 | T::Int4 | T::Int8 | T::Oid | T::Date | T::Timestamp | T::Timestamptz
    ) || ty.is_reg()
}

/// The summary bits of a non-null value of a column of type `ty` (None: no
/// summary for the type).
fn abbreviated_bits(ty: types::TypeId, v: &Value) -> Option<u64> {
    use types::TypeId as T;
    const SIGN: u64 = 1 << 63;
    if integer_like(ty) {
        let x: i64 = match v {
            Value::Bool(b) => *b as i64,
            Value::Int2(x) => *x as i64,
            Value::Int4(x) => *x as i64,
            Value::Int8(x) => *x,
            Value::Oid(x) => *x as i64,
            Value::Date(d) => *d as i64,
            Value::Timestamp(t) | Value::Timestamptz(t) => *t,
            _ => return None,
        };
        return Some(x as u64 ^ SIGN);
    }
    match (ty, v) {
        (T::Text | T::Varchar | T::Name, Value::Text(s)) => {
            let mut b = [0u8; 8];
            let n = s.len().min(8);
            b[..n].copy_from_slice(&s.as_bytes()[..n]);
            Some(u64::from_be_bytes(b))
        }
        (T::Bytea, Value::Bytea(s)) => {
            let mut b = [0u8; 8];
            let n = s.len().min(8);
            b[..n].copy_from_slice(&s[..n]);
            Some(u64::from_be_bytes(b))
        }
        (T::Uuid, Value::Uuid(u)) => Some(u64::from_be_bytes(u[..8].try_into().unwrap())),
        _ => None,
    }
}

/// One end of a scan's range, a key prefix in index order.
#[derive(Debug, Clone, PartialEq)]
pub struct ScanBound {
    pub prefix: Vec<Value>,
    pub inclusive: bool,
}

/// The entries a scan returns: those between `lower` and `upper` in index
/// order (None: unbounded), walked forward or backward.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ScanRange {
    pub lower: Option<ScanBound>,
    pub upper: Option<ScanBound>,
    pub backward: bool,
}

/// Who holds a key that a unique insert found already in the index: what
/// the caller learns from the heap tuple an equal entry points at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyHolder {
    /// The tuple is dead to everyone or its inserter aborted: no conflict.
    Dead,
    /// Inserted by a committed transaction (or our own) and not deleted by
    /// a committed one: a duplicate.
    Live,
    /// Inserted, or being deleted, by a transaction still running: wait
    /// for it and look again.
    InProgress(Xid),
}

/// A unique index's check during insert: `holder` tells what an equal
/// entry's heap tuple is, `wait` waits for a running transaction.
pub struct UniqueCheck<'a> {
    pub holder: &'a mut dyn FnMut(Tid) -> PgResult<KeyHolder>,
    pub wait: &'a mut WaitForXid<'a>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum InsertOutcome {
    Inserted,
    /// A unique index already holds a live entry with this key (its heap
    /// tid); nothing was inserted.
    Duplicate(Tid),
}

/// Counts for VACUUM VERBOSE and pg_stat.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct BulkDeleteStats {
    pub removed: u64,
    pub remaining: u64,
    pub pages: u32,
    /// Leaves this pass unlinked.
    pub pages_newly_deleted: u32,
    /// Deleted pages in the index (these included).
    pub pages_deleted: u32,
    /// Deleted pages no one can reach any more, free for splits.
    pub pages_free: u32,
}

/// Creates the index's storage with an empty tree (a metapage), logged.
/// The file is created (after a logged SMGR CREATE) if it does not exist;
/// block 0 becomes the metapage and block 1 an empty root leaf, in one
/// CREATE record.
pub fn create_empty(pool: &'static BufferPool, wal: &Wal, rel: RelFileLocator) -> PgResult<()> {
    if !pool.smgr().exists(rel, ForkNumber::Main) {
        crate::heap::create_storage(pool, wal, rel)?;
    }
    let smgr = pool.smgr();
    if smgr.nblocks(rel, ForkNumber::Main)? != 0 {
        return Err(common::PgError::internal(format!(
            "index storage {} is not empty",
            rel.rel_number
        )));
    }
    let meta_blk = smgr.extend(rel, ForkNumber::Main, 2)?;
    debug_assert_eq!(meta_blk, page::META_BLOCK);
    let mut meta = vec![0u8; storage::BLCKSZ].into_boxed_slice();
    page::init_meta(&mut meta, build::FIRST_LEAF, 0);
    let mut root = vec![0u8; storage::BLCKSZ].into_boxed_slice();
    page::init(
        &mut root,
        0,
        page::LEAF | page::ROOT,
        page::NONE,
        page::NONE,
    );
    let mut steps = Vec::with_capacity(2);
    for (blk, img) in [(page::META_BLOCK, meta), (build::FIRST_LEAF, root)] {
        let buf = pool.read_buffer(rel, ForkNumber::Main, blk, ReadMode::Zero, None)?;
        steps.push(log::Step {
            page: buf.into_write(),
            change: log::Change::Whole(img),
        });
    }
    log::apply_and_log(wal, rel, log::BTREE_CREATE, &mut steps);
    drop(steps);
    search::remember_root(pool, rel, build::FIRST_LEAF);
    Ok(())
}

/// Builds the tree bottom-up from entries already sorted in index order
/// (ties broken by tid) into storage `create_empty` made; the pages are
/// logged whole. Returns the number of entries.
pub fn build<K: AsRef<[Value]>>(
    pool: &'static BufferPool,
    wal: &Wal,
    rel: RelFileLocator,
    desc: &IndexDesc,
    sorted: &mut dyn Iterator<Item = PgResult<(K, Tid)>>,
) -> PgResult<u64> {
    build::build(pool, wal, rel, desc, sorted)
}

/// Inserts one entry. With `unique`, entries with an equal key (none of
/// its values NULL) are checked first: a running holder is waited for and
/// the check repeated, a live one makes the outcome `Duplicate`.
pub fn insert(
    pool: &'static BufferPool,
    tm: &TransactionManager,
    rel: RelFileLocator,
    desc: &IndexDesc,
    key: &[Value],
    tid: Tid,
    unique: Option<UniqueCheck<'_>>,
) -> PgResult<InsertOutcome> {
    insert::insert(pool, tm, rel, desc, key, tid, unique, None)
}

/// `insert` by a SERIALIZABLE transaction (`ssi`): the inserted-into
/// leaf's SIREAD-lock holders get an rw-antidependency to it, and leaf
/// splits carry SIREAD locks to the new page (`txn::ssi`).
#[allow(clippy::too_many_arguments)]
pub fn insert_serializable(
    pool: &'static BufferPool,
    tm: &TransactionManager,
    rel: RelFileLocator,
    desc: &IndexDesc,
    key: &[Value],
    tid: Tid,
    unique: Option<UniqueCheck<'_>>,
    ssi: Option<&txn::ssi::SerXact>,
) -> PgResult<InsertOutcome> {
    insert::insert(pool, tm, rel, desc, key, tid, unique, ssi)
}

/// The heap tids of entries whose key equals `key` (ON CONFLICT's and
/// foreign keys' probe). Takes no lock beyond a page at a time.
pub fn find_equal(
    pool: &'static BufferPool,
    rel: RelFileLocator,
    desc: &IndexDesc,
    key: &[Value],
) -> PgResult<Vec<Tid>> {
    scan::find_equal(pool, rel, desc, key)
}

/// Removes the entries whose tid `dead` says is gone (VACUUM's index pass),
/// logged per page; unlinks the leaves it leaves empty where the rules
/// allow and offers deleted pages for reuse (README rule 27a).
pub fn bulk_delete(
    pool: &'static BufferPool,
    tm: &TransactionManager,
    rel: RelFileLocator,
    desc: &IndexDesc,
    dead: &dyn Fn(Tid) -> bool,
) -> PgResult<BulkDeleteStats> {
    vacuum::bulk_delete(pool, tm, rel, desc, dead)
}

/// Levels above the leaves (0 for a tree that is one leaf), for costing.
pub fn tree_height(pool: &'static BufferPool, rel: RelFileLocator) -> PgResult<u32> {
    Ok(search::read_meta(pool, rel)?.1)
}

/// amcheck's bt_index_check (`parent == false`: order within pages, high
/// keys, sibling links) and bt_index_parent_check (also every downlink
/// agrees with its child). Corruption is an XX002 error with amcheck's
/// message.
pub fn check(
    pool: &'static BufferPool,
    rel: RelFileLocator,
    desc: &IndexDesc,
    parent: bool,
) -> PgResult<()> {
    check_named(pool, rel, desc, parent, &rel.rel_number.to_string())
}

/// `check` with the index's name in the messages, as amcheck words them
/// (`item order invariant violated for index "t_pkey"`).
pub fn check_named(
    pool: &'static BufferPool,
    rel: RelFileLocator,
    desc: &IndexDesc,
    parent: bool,
    name: &str,
) -> PgResult<()> {
    check::check(pool, rel, desc, parent, name)
}
