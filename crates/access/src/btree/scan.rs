//! Range scans (README rule 21): the first leaf is found by descent, then
//! each leaf's entries in range are copied out under its share lock and
//! the lock released; the walk goes on through the sibling link read
//! under that lock. Forward, entries that a later split moves right were
//! copied already and the remembered link passes them by. Backward, the
//! left sibling may have split since it was named: the walk locks it and
//! moves right until it finds the page whose right link is the page it
//! came from (nbtree's _bt_walk_left).

use std::cmp::Ordering;
use std::sync::Arc;

use common::{BlockNumber, PgResult, RelFileLocator};
use storage::buffer::{BufferPool, OwnedPageRead};
use storage::page::OffsetNumber;
use types::Value;

use super::page::{self as bp, NONE};
use super::search::{corrupt, descend_read, lock, Goal};
use super::tuple::{self, compare_prefix, SearchKey};
use super::{IndexDesc, ScanBound, ScanRange};
use crate::heap::Tid;

enum State {
    Start,
    /// The next leaf to read, and the one read last.
    Next {
        block: BlockNumber,
        came_from: BlockNumber,
    },
    Done,
}

/// The entries of one leaf, copied out.
struct Batch {
    tids: Vec<Tid>,
    keys: Vec<Value>,
    with_keys: bool,
}

impl Batch {
    fn push(&mut self, desc: &IndexDesc, kt: &[u8]) -> PgResult<()> {
        self.tids.push(tuple::tid(kt));
        if self.with_keys {
            tuple::decode(desc, kt, &mut self.keys)?;
        }
        Ok(())
    }
}

/// Whether an entry is past `bound` on the far side (above an upper
/// bound, or below a lower one when `below` is set).
#[inline]
fn outside(desc: &IndexDesc, kt: &[u8], bound: &Option<ScanBound>, below: bool) -> bool {
    let Some(b) = bound else {
        return false;
    };
    let o = compare_prefix(desc, kt, &b.prefix);
    let o = if below { o.reverse() } else { o };
    o == Ordering::Greater || (o == Ordering::Equal && !b.inclusive)
}

/// Copies a leaf's entries in range going right from `start`; the next
/// state: the right sibling, or Done when the upper bound was passed here
/// or by the high key (everything right of it is past the bound too).
fn collect_forward(
    desc: &IndexDesc,
    range: &ScanRange,
    pg: &OwnedPageRead,
    start: OffsetNumber,
    out: &mut Batch,
) -> PgResult<State> {
    for off in start..=bp::max_offset(pg) {
        let kt = bp::key(pg, off);
        if outside(desc, kt, &range.upper, false) {
            return Ok(State::Done);
        }
        out.push(desc, kt)?;
    }
    match bp::high_key(pg) {
        None => Ok(State::Done),
        Some(hk) if outside(desc, hk, &range.upper, false) => Ok(State::Done),
        Some(_) => Ok(State::Next {
            block: bp::next(pg),
            came_from: pg.block(),
        }),
    }
}

/// Copies a leaf's entries in range going left from `start` (below the
/// first data item: none).
fn collect_backward(
    desc: &IndexDesc,
    range: &ScanRange,
    pg: &OwnedPageRead,
    start: OffsetNumber,
    out: &mut Batch,
) -> PgResult<State> {
    let first = bp::first_data(pg);
    let mut off = start;
    while off >= first {
        let kt = bp::key(pg, off);
        if outside(desc, kt, &range.lower, true) {
            return Ok(State::Done);
        }
        out.push(desc, kt)?;
        off -= 1;
    }
    Ok(match bp::prev(pg) {
        NONE => State::Done,
        block => State::Next {
            block,
            came_from: pg.block(),
        },
    })
}

/// What `IndexScan::next` returns: a heap tid and, for index-only scans,
/// the entry's key values.
pub type ScanEntry<'a> = (Tid, Option<&'a [Value]>);

/// A range scan. Each leaf page's matching entries are copied out under
/// its share lock, so no lock is held between calls.
pub struct IndexScan {
    pool: &'static BufferPool,
    rel: RelFileLocator,
    desc: Arc<IndexDesc>,
    range: ScanRange,
    state: State,
    batch: Batch,
    pos: usize,
    /// SERIALIZABLE: the transaction whose SIREAD locks cover the leaves read.
    predicate: Option<std::sync::Arc<txn::ssi::SerXact>>,
}

impl IndexScan {
    /// `with_keys`: return each entry's key values (index-only scans).
    pub fn new(
        pool: &'static BufferPool,
        rel: RelFileLocator,
        desc: Arc<IndexDesc>,
        range: ScanRange,
        with_keys: bool,
    ) -> PgResult<IndexScan> {
        Ok(IndexScan {
            pool,
            rel,
            desc,
            range,
            state: State::Start,
            batch: Batch {
                tids: Vec::new(),
                keys: Vec::new(),
                with_keys,
            },
            pos: 0,
            predicate: None,
        })
    }

    /// Under SERIALIZABLE (`sx`), each leaf page is SIREAD-locked while it
    /// is read, under its share lock (PostgreSQL's PredicateLockPage): an
    /// insert into the page's key range, gaps included, finds the lock.
    pub fn with_predicate_locks(mut self, sx: Option<std::sync::Arc<txn::ssi::SerXact>>) -> Self {
        self.predicate = sx;
        self
    }

    fn lock_leaf(&self, block: BlockNumber) {
        if let Some(sx) = &self.predicate {
            let target = txn::ssi::PredicateTarget::Page {
                db: self.rel.db_oid,
                rel: self.rel.rel_number,
                block,
            };
            sx.manager().lock(sx, target);
        }
    }

    /// The next entry in range: its heap tid and, if asked for, its key.
    // Not an Iterator: the key borrows the scan, and each step can fail.
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> PgResult<Option<ScanEntry<'_>>> {
        while self.pos >= self.batch.tids.len() {
            self.batch.tids.clear();
            self.batch.keys.clear();
            self.pos = 0;
            self.state = match self.state {
                State::Done => return Ok(None),
                State::Start => self.first_leaf()?,
                State::Next { block, came_from } => self.next_leaf(block, came_from)?,
            };
        }
        let i = self.pos;
        self.pos += 1;
        let keys = self.batch.with_keys.then(|| {
            let n = self.desc.columns.len();
            &self.batch.keys[i * n..(i + 1) * n]
        });
        Ok(Some((self.batch.tids[i], keys)))
    }

    fn first_leaf(&mut self) -> PgResult<State> {
        let desc = &*self.desc;
        let range = &self.range;
        if !range.backward {
            let goal = match &range.lower {
                None => Goal::Leftmost,
                Some(b) if b.inclusive => Goal::Key(SearchKey::before(&b.prefix)),
                Some(b) => Goal::Key(SearchKey::after(&b.prefix)),
            };
            let (pg, start) = descend_read(self.pool, self.rel, desc, &goal)?;
            self.lock_leaf(pg.block());
            collect_forward(desc, range, &pg, start, &mut self.batch)
        } else {
            let goal = match &range.upper {
                None => Goal::Rightmost,
                Some(b) if b.inclusive => Goal::Key(SearchKey::after(&b.prefix)),
                Some(b) => Goal::Key(SearchKey::before(&b.prefix)),
            };
            // The last entry before the position found.
            let (pg, off) = descend_read(self.pool, self.rel, desc, &goal)?;
            self.lock_leaf(pg.block());
            collect_backward(desc, range, &pg, off - 1, &mut self.batch)
        }
    }

    fn next_leaf(&mut self, block: BlockNumber, came_from: BlockNumber) -> PgResult<State> {
        let desc = &*self.desc;
        if !self.range.backward {
            let mut pg: OwnedPageRead = lock(self.pool, self.rel, block)?;
            // A page VACUUM unlinked since its link was read is empty and
            // keeps its right link: go on to the page after it.
            while bp::is_deleted(&pg) {
                let next = bp::next(&pg);
                drop(pg);
                pg = lock(self.pool, self.rel, next)?;
            }
            let start = bp::first_data(&pg);
            self.lock_leaf(pg.block());
            return collect_forward(desc, &self.range, &pg, start, &mut self.batch);
        }
        // Walk left: the named page, or a page it split off since, is the
        // one whose right link is where we came from. A deleted page on
        // the way (the left link was read before VACUUM unlinked it) sends
        // the walk to its own left sibling as of the deletion, which is at
        // or left of the page we look for; past the leftmost page of the
        // level, we came from the leftmost page and are done.
        let mut blk = block;
        let mut came_from = came_from;
        let mut origin_checked = false;
        let mut steps = 0u64;
        loop {
            steps += 1;
            if steps > 1_000_000 {
                return Err(corrupt(format!(
                    "could not find the left sibling of block {came_from} in index {}",
                    self.rel.rel_number
                )));
            }
            let pg: OwnedPageRead = lock(self.pool, self.rel, blk)?;
            if bp::is_deleted(&pg) {
                blk = match bp::prev(&pg) {
                    NONE => bp::next(&pg),
                    left => left,
                };
                continue;
            }
            if blk == came_from {
                // Every page that was left of it is gone.
                if bp::prev(&pg) == NONE {
                    return Ok(State::Done);
                }
                blk = bp::prev(&pg);
                continue;
            }
            if bp::next(&pg) == came_from {
                let start = bp::max_offset(&pg);
                self.lock_leaf(pg.block());
                return collect_backward(desc, &self.range, &pg, start, &mut self.batch);
            }
            if !origin_checked {
                // The page we came from may have been emptied and unlinked
                // since: then we look for the left sibling of the first
                // live page after it, and start over.
                origin_checked = true;
                drop(pg);
                let mut origin: OwnedPageRead = lock(self.pool, self.rel, came_from)?;
                while bp::is_deleted(&origin) {
                    came_from = bp::next(&origin);
                    drop(origin);
                    origin = lock(self.pool, self.rel, came_from)?;
                }
                blk = block;
                continue;
            }
            if bp::is_rightmost(&pg) {
                return Err(corrupt(format!(
                    "could not find the left sibling of block {came_from} in index {}",
                    self.rel.rel_number
                )));
            }
            blk = bp::next(&pg);
        }
    }
}

/// The heap tids of entries whose key equals `key`.
pub(crate) fn find_equal(
    pool: &'static BufferPool,
    rel: RelFileLocator,
    desc: &IndexDesc,
    key: &[Value],
) -> PgResult<Vec<Tid>> {
    let (mut pg, mut start) = descend_read(pool, rel, desc, &Goal::Key(SearchKey::before(key)))?;
    let mut out = Vec::new();
    loop {
        for off in start..=bp::max_offset(&pg) {
            let kt = bp::key(&pg, off);
            if compare_prefix(desc, kt, key) != Ordering::Equal {
                return Ok(out);
            }
            out.push(tuple::tid(kt));
        }
        match bp::high_key(&pg) {
            Some(hk) if compare_prefix(desc, hk, key) == Ordering::Equal => {
                let mut next = bp::next(&pg);
                drop(pg);
                pg = lock(pool, rel, next)?;
                while bp::is_deleted(&pg) {
                    next = bp::next(&pg);
                    drop(pg);
                    pg = lock(pool, rel, next)?;
                }
                start = bp::first_data(&pg);
            }
            _ => return Ok(out),
        }
    }
}
