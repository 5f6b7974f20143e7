//! Heap relations: unordered tuple versions in slotted pages (design.md §5).
//!
//! Rules:
//! 1. A tuple's bytes are read or changed only under its page's content lock
//!    (shared to read, exclusive to set xmax/ctid or add tuples).
//! 2. Updates set xmax on the old version, add the new one and point the old
//!    ctid at it, in one call (`modify::update`); the old version stays until
//!    it is dead to everyone and pruned (`prune.rs`), by VACUUM or by a
//!    writer or scan that finds its page short of space. An update that
//!    changes no indexed column and fits on the old page is a HOT update:
//!    the new version is heap-only, found from the chain's root
//!    (`fetch.rs`), and gets no index entries.
//! 3. A writer that finds xmax set by a running transaction waits for it; if
//!    that transaction committed, it reports where the row went (`Updated`)
//!    and the executor re-checks the newest version (READ COMMITTED).

use common::Xid;
use common::{BlockNumber, PgError, PgResult, RelFileLocator, SqlState};
use storage::buffer::stream::ReadStream;
use storage::buffer::{Buffer, BufferPool, BufferStrategy, ReadMode, StrategyKind};
use storage::page::{self, OffsetNumber};
use storage::{fsm, ForkNumber};
use txn::{Snapshot, TransactionManager};
use wal::Wal;

use crate::tuple;

mod fetch;
#[cfg(test)]
mod hot_tests;
mod index_build;
pub mod log;
mod modify;
pub mod parallel;
pub mod prune;
pub mod rowlock;
pub mod sample;
#[cfg(test)]
mod test_rows;
pub mod vacuum;
pub mod visibilitymap;
pub use fetch::{chain_roots, fetch_visible, key_holder, key_holding_version};
pub use index_build::IndexBuildScan;
pub use modify::{delete, kill_speculative, update, ModifyResult, WaitForXid};
pub use rowlock::{lock_tuple, LockResult, Requester, RowLockMode, WaitPolicy};

/// A tuple's address: block and 1-based offset.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Tid {
    pub block: BlockNumber,
    pub offset: OffsetNumber,
}

/// Where inserts go: the last block used (PostgreSQL's rd_targblock) and,
/// for bulk loads, the pinned buffer and a ring.
pub struct InsertTarget {
    current: Option<Buffer>,
    strategy: Option<BufferStrategy>,
}

impl InsertTarget {
    pub fn new() -> Self {
        InsertTarget {
            current: None,
            strategy: None,
        }
    }
    /// For loads big enough to flush the pool (INSERT ... SELECT, COPY).
    pub fn bulk(pool: &BufferPool) -> Self {
        InsertTarget {
            current: None,
            strategy: Some(BufferStrategy::new(
                StrategyKind::BulkWrite,
                pool.nbuffers(),
            )),
        }
    }
}

impl Default for InsertTarget {
    fn default() -> Self {
        Self::new()
    }
}

fn check_tuple_size(tuple_bytes: &[u8]) -> PgResult<()> {
    if tuple_bytes.len() > page::MAX_ITEM_SIZE {
        return Err(PgError::new(
            SqlState::PROGRAM_LIMIT_EXCEEDED,
            format!(
                "row is too big: size {}, maximum size {}",
                tuple_bytes.len(),
                page::MAX_ITEM_SIZE
            ),
        ));
    }
    Ok(())
}

/// Space a tuple takes on a page, as the free-space check counts it.
fn aligned_len(tuple_bytes: &[u8]) -> usize {
    (tuple_bytes.len() + 7) & !7
}

/// Whether `block` still belongs to the relation: VACUUM may have cut it
/// off since the caller chose it. Checked with the page's content lock
/// held, which the truncation held too (README rule 17).
fn block_exists(pool: &BufferPool, rel: RelFileLocator, block: BlockNumber) -> PgResult<bool> {
    Ok(block < pool.smgr().nblocks(rel, ForkNumber::Main)?)
}

/// Prunes a page that is short of `needed` bytes; returns the free space
/// after, and whether versions were removed (the caller then records the
/// free space in the FSM once the page is unlocked, so others find it).
fn prune_for_space(
    pg: &mut storage::buffer::PageWrite<'_>,
    rel: RelFileLocator,
    block: BlockNumber,
    needed: usize,
    tm: &TransactionManager,
) -> (usize, bool) {
    let free = page::free_space(pg);
    if free >= needed || page::item_count(pg) == 0 {
        return (free, false);
    }
    let r = prune::prune_page(
        pg,
        rel,
        block,
        tm.global_xmin(),
        tm,
        prune::DeadPointers::Keep,
    );
    (r.free, r.removed > 0)
}

/// Adds `tuple_bytes` to the locked page at the offset `page::next_offset`
/// picks (its ctid set first) and logs it. The caller checked the space.
fn place_tuple(
    wal: &Wal,
    rel: RelFileLocator,
    block: BlockNumber,
    pg: &mut storage::buffer::PageWrite<'_>,
    tuple_bytes: &mut [u8],
) -> Tid {
    let was_empty = page::item_count(pg) == 0;
    let off = page::next_offset(pg);
    tuple::set_ctid(tuple_bytes, block, off);
    assert!(page::add_item_at(pg, off, tuple_bytes), "space checked");
    // Dirty before the record is reserved, so a checkpoint whose redo
    // pointer follows the record finds the page dirty.
    pg.mark_dirty();
    log::log_insert(wal, rel, block, pg, off, was_empty);
    Tid { block, offset: off }
}

/// Inserts a formed tuple (header already stamped with xmin/cmin). A
/// target page short of space is pruned before it is given up.
pub fn insert(
    pool: &'static BufferPool,
    tm: &TransactionManager,
    rel: RelFileLocator,
    tuple_bytes: &mut [u8],
    target: &mut InsertTarget,
) -> PgResult<Tid> {
    check_tuple_size(tuple_bytes)?;
    let needed = aligned_len(tuple_bytes);
    loop {
        if let Some(buf) = &target.current {
            let block = buf.block();
            let mut pg = buf.write();
            if !block_exists(pool, rel, block)? {
                drop(pg);
                target.current = None;
                continue;
            }
            if prune_for_space(&mut pg, rel, block, needed, tm).0 >= needed {
                return Ok(place_tuple(tm.wal(), rel, block, &mut pg, tuple_bytes));
            }
            let free = page::free_space(&pg);
            drop(pg);
            target.current = None;
            fsm::record_free_space(pool, rel, block, free)?;
        }
        next_target_page(pool, rel, needed, 1, target)?;
    }
}

/// Most blocks one batch extends a relation by at once.
const MAX_EXTEND_BLOCKS: usize = 64;

/// Inserts formed tuples in order (COPY): each page is filled with as many
/// as fit under one content-lock acquisition and marked dirty once, and when
/// the relation must grow it grows by as many blocks as the rest of the
/// batch needs, so concurrent loaders do not queue on extension block by
/// block. The spare new blocks are offered to others through the FSM.
pub fn insert_batch(
    pool: &'static BufferPool,
    tm: &TransactionManager,
    rel: RelFileLocator,
    tuples: &mut [Vec<u8>],
    target: &mut InsertTarget,
) -> PgResult<()> {
    for t in tuples.iter() {
        check_tuple_size(t)?;
    }
    let mut i = 0;
    while i < tuples.len() {
        if let Some(buf) = &target.current {
            let block = buf.block();
            let mut pg = buf.write();
            if !block_exists(pool, rel, block)? {
                drop(pg);
                target.current = None;
                continue;
            }
            prune_for_space(&mut pg, rel, block, aligned_len(&tuples[i]), tm);
            let was_empty = page::item_count(&pg) == 0;
            let mut offsets = Vec::new();
            while i < tuples.len() && page::free_space(&pg) >= aligned_len(&tuples[i]) {
                let off = page::next_offset(&mut pg);
                tuple::set_ctid(&mut tuples[i], block, off);
                assert!(page::add_item_at(&mut pg, off, &tuples[i]), "space checked");
                offsets.push(off);
                i += 1;
            }
            if !offsets.is_empty() {
                pg.mark_dirty();
                log::log_multi_insert(tm.wal(), rel, block, &mut pg, &offsets, was_empty);
            }
            if i == tuples.len() {
                return Ok(());
            }
            let free = page::free_space(&pg);
            drop(pg);
            target.current = None;
            fsm::record_free_space(pool, rel, block, free)?;
        }
        let rest: usize = tuples[i..].iter().map(|t| aligned_len(t) + 4).sum();
        let blocks = (rest / page::MAX_ITEM_SIZE + 1).min(MAX_EXTEND_BLOCKS);
        next_target_page(pool, rel, aligned_len(&tuples[i]), blocks as u32, target)?;
    }
    Ok(())
}

/// Makes `target.current` a page with at least `needed` bytes free: one the
/// FSM knows of, else the first of `extend_by` new blocks (the others are
/// initialised and recorded in the FSM).
fn next_target_page(
    pool: &'static BufferPool,
    rel: RelFileLocator,
    needed: usize,
    extend_by: u32,
    target: &mut InsertTarget,
) -> PgResult<()> {
    let mut tried_last = false;
    loop {
        match fsm::search(pool, rel, needed)? {
            Some(block) if block < pool.smgr().nblocks(rel, ForkNumber::Main)? => {
                let b = pool.read_buffer(
                    rel,
                    ForkNumber::Main,
                    block,
                    ReadMode::Normal,
                    target.strategy.as_mut(),
                )?;
                let free = page::free_space(&b.read());
                if free < needed {
                    fsm::record_free_space(pool, rel, block, free)?;
                    continue;
                }
                target.current = Some(b);
                return Ok(());
            }
            _ if !tried_last => {
                // The FSM knows of no page: try the last one before
                // extending (as PostgreSQL does), whose space is recorded
                // only once someone gives up on it.
                tried_last = true;
                let n = pool.smgr().nblocks(rel, ForkNumber::Main)?;
                if n == 0 {
                    continue;
                }
                let b = pool.read_buffer(
                    rel,
                    ForkNumber::Main,
                    n - 1,
                    ReadMode::Normal,
                    target.strategy.as_mut(),
                )?;
                // A new (all-zero) page may have just been reserved by an
                // extender that is about to initialise it, wiping anything
                // added meanwhile: only an initialised page will do.
                let usable = {
                    let pg = b.read();
                    !page::is_new(&pg) && page::free_space(&pg) >= needed
                };
                if usable {
                    target.current = Some(b);
                    return Ok(());
                }
            }
            _ => {
                let count = extend_by.max(1);
                let first = pool.smgr().extend(rel, ForkNumber::Main, count)?;
                for block in first..first + count {
                    let b = pool.read_buffer(
                        rel,
                        ForkNumber::Main,
                        block,
                        ReadMode::Zero,
                        target.strategy.as_mut(),
                    )?;
                    let free = {
                        let mut pg = b.write();
                        page::init(&mut pg, 0);
                        pg.mark_dirty();
                        page::free_space(&pg)
                    };
                    if block == first {
                        target.current = Some(b);
                    } else {
                        fsm::record_free_space(pool, rel, block, free)?;
                    }
                }
                return Ok(());
            }
        }
    }
}

/// The bytes of the tuple at `tid` whatever its visibility, for a version
/// the caller knows is there (one it holds a row lock on, so it cannot be
/// pruned). Following a ctid to a newer version takes `fetch_version`.
pub fn fetch_any(
    pool: &'static BufferPool,
    rel: RelFileLocator,
    tid: Tid,
) -> PgResult<Option<Vec<u8>>> {
    if tid.block >= pool.smgr().nblocks(rel, ForkNumber::Main)? || tid.offset == 0 {
        return Ok(None);
    }
    let buf = pool.read_buffer(rel, ForkNumber::Main, tid.block, ReadMode::Normal, None)?;
    let pg = buf.read();
    Ok(page::item(&pg, tid.offset).map(<[u8]>::to_vec))
}

/// The bytes of the version at `tid` whatever its visibility, if it is the
/// one `inserter` wrote (following an update chain: `inserter` is the prior
/// version's xmax, `tid` the prior version's ctid, which names the newer
/// version's own pointer, never a HOT chain's root). None when the slot is
/// not a normal one or holds another tuple: the version was pruned (a
/// redirect or dead pointer is left where a root was, an unused one where a
/// heap-only version was, perhaps reused since), so the row is gone.
pub fn fetch_version(
    pool: &'static BufferPool,
    rel: RelFileLocator,
    tid: Tid,
    inserter: Xid,
) -> PgResult<Option<Vec<u8>>> {
    if tid.block >= pool.smgr().nblocks(rel, ForkNumber::Main)? || tid.offset == 0 {
        return Ok(None);
    }
    let buf = pool.read_buffer(rel, ForkNumber::Main, tid.block, ReadMode::Normal, None)?;
    let pg = buf.read();
    Ok(page::item(&pg, tid.offset)
        .filter(|t| tuple::xmin(t) == inserter)
        .map(<[u8]>::to_vec))
}

/// Sequential scan over the visible tuples of a heap, a page at a time.
/// A page short of space with versions that look dead is pruned after the
/// scan has read it, if its exclusive lock is free at once.
pub struct HeapScan {
    pool: &'static BufferPool,
    stream: ReadStream,
    nblocks: BlockNumber,
    rel: RelFileLocator,
    /// The pruning horizon, taken at the first page (an older horizon is
    /// only more careful).
    horizon: Option<Xid>,
    /// A participant of a Parallel Seq Scan: the shared allocator its
    /// chunks come from, and its current chunk size.
    parallel: Option<(std::sync::Arc<parallel::ParallelBlocks>, u64)>,
    /// A SERIALIZABLE scan's relation SIREAD lock is taken.
    predicate_locked: bool,
}

/// Under SERIALIZABLE, takes `snapshot`'s transaction's SIREAD lock on the
/// relation `rel` (PostgreSQL's PredicateLockRelation): a sequential scan
/// reads every row and every gap. Fails if the transaction was marked to
/// fail.
pub fn predicate_lock_relation(
    snapshot: &Snapshot,
    tm: &TransactionManager,
    rel: RelFileLocator,
) -> PgResult<()> {
    if let Some(sx) = &snapshot.ssi {
        tm.predicate()
            .lock_relation(sx, rel.db_oid, rel.rel_number)?;
    }
    Ok(())
}

/// Under SERIALIZABLE, SIREAD-locks the version at (`block`, `offset`) of
/// `rel` that `snapshot` read (PostgreSQL's PredicateLockTID).
pub fn predicate_lock_tuple(snapshot: &Snapshot, rel: RelFileLocator, block: u32, offset: u16) {
    if let Some(sx) = &snapshot.ssi {
        let target = txn::ssi::PredicateTarget::Tuple {
            db: rel.db_oid,
            rel: rel.rel_number,
            block,
            offset,
        };
        sx.manager().lock(sx, target);
    }
}

impl HeapScan {
    pub fn new(pool: &'static BufferPool, rel: RelFileLocator) -> PgResult<Self> {
        let nblocks = pool.smgr().nblocks(rel, ForkNumber::Main)?;
        // Tables over a quarter of the pool scan through a ring (seed 003),
        // read ahead by an I/O worker.
        let large = nblocks as usize > pool.nbuffers() / 4;
        let strategy = large.then(|| BufferStrategy::new(StrategyKind::BulkRead, pool.nbuffers()));
        Ok(HeapScan {
            pool,
            stream: ReadStream::new(pool, rel, ForkNumber::Main, 0, nblocks, strategy, large),
            nblocks,
            rel,
            horizon: None,
            parallel: None,
            predicate_locked: false,
        })
    }

    /// One participant's scan of the blocks `blocks` hands out: its chunks
    /// are read in order, through its own ring when the table is large.
    pub fn parallel(
        pool: &'static BufferPool,
        rel: RelFileLocator,
        blocks: std::sync::Arc<parallel::ParallelBlocks>,
    ) -> HeapScan {
        let nblocks = blocks.nblocks();
        let large = nblocks as usize > pool.nbuffers() / 4;
        let strategy = large.then(|| BufferStrategy::new(StrategyKind::BulkRead, pool.nbuffers()));
        let chunk = blocks.initial_chunk();
        HeapScan {
            pool,
            // Empty: the first chunk is taken at the first page.
            stream: ReadStream::combined(pool, rel, ForkNumber::Main, 0, 0, strategy),
            nblocks,
            rel,
            horizon: None,
            parallel: Some((blocks, chunk)),
            predicate_locked: false,
        }
    }

    /// The next pinned page: the stream's, or for a parallel participant
    /// the first of its next chunk.
    fn next_buffer(&mut self) -> PgResult<Option<Buffer>> {
        loop {
            if let Some(buf) = self.stream.next_buffer()? {
                return Ok(Some(buf));
            }
            let Some((blocks, chunk)) = &mut self.parallel else {
                return Ok(None);
            };
            let Some((start, end)) = blocks.next_range(chunk) else {
                return Ok(None);
            };
            let empty = ReadStream::new(self.pool, self.rel, ForkNumber::Main, 0, 0, None, false);
            let strategy = std::mem::replace(&mut self.stream, empty).into_strategy();
            // Reads within a chunk are combined; no read-ahead threads per
            // chunk (the participants themselves read in parallel).
            self.stream =
                ReadStream::combined(self.pool, self.rel, ForkNumber::Main, start, end, strategy);
        }
    }

    pub fn nblocks(&self) -> BlockNumber {
        self.nblocks
    }

    /// Calls `f` for each visible tuple of the next page, under its share
    /// lock. Returns Ok(false) when the scan is done.
    pub fn next_page(
        &mut self,
        snapshot: &Snapshot,
        tm: &TransactionManager,
        mut f: impl FnMut(Tid, &[u8]) -> PgResult<()>,
    ) -> PgResult<bool> {
        if !self.predicate_locked {
            predicate_lock_relation(snapshot, tm, self.rel)?;
            self.predicate_locked = true;
        }
        let Some(buf) = self.next_buffer()? else {
            return Ok(false);
        };
        let block = buf.block();
        let horizon = *self.horizon.get_or_insert_with(|| tm.global_xmin());
        let pg = buf.read();
        // An all-visible page holds only versions every snapshot sees (its
        // flag is cleared under this lock by any change): as PostgreSQL's
        // heapgetpage, skip the headers. SERIALIZABLE still reads them, for
        // its conflict-out checks.
        if snapshot.ssi.is_none() && visibilitymap::page_all_visible(&pg) {
            for off in 1..=page::item_count(&pg) {
                if let Some(t) = page::item(&pg, off) {
                    f(Tid { block, offset: off }, t)?;
                }
            }
            return Ok(true);
        }
        // Invisible versions whose xmax (or, without one, xmin) is below
        // the horizon: probably dead, worth a prune if space is short.
        let mut maybe_dead = 0usize;
        for off in 1..=page::item_count(&pg) {
            let Some(t) = page::item(&pg, off) else {
                continue;
            };
            let (xmin, xmax) = (tuple::xmin(t), tuple::deleting_xmax(t));
            if snapshot.tuple_visible(xmin, tuple::cmin(t), xmax, tuple::cmax(t), tm) {
                f(Tid { block, offset: off }, t)?;
            } else if (xmax != 0 && xmax < horizon) || (xmax == 0 && xmin < horizon) {
                maybe_dead += 1;
            }
        }
        let short = page::free_space(&pg) < prune::PRUNE_FREE_THRESHOLD;
        drop(pg);
        if let Some(sx) = &snapshot.ssi {
            // A reason to fail found on the page (a conflict out to a
            // committing pivot), or a mark by another: fail now.
            sx.manager().check(sx, "conflict out checking")?;
        }
        if maybe_dead > 0 && short {
            let pruned = buf.try_write().and_then(|mut pg| {
                let keep = prune::DeadPointers::Keep;
                let r = prune::prune_page(&mut pg, self.rel, block, horizon, tm, keep);
                (r.removed > 0).then_some(r.free)
            });
            drop(buf);
            if let Some(free) = pruned {
                fsm::record_free_space(self.pool, self.rel, block, free)?;
            }
        }
        Ok(true)
    }
}

impl HeapScan {
    /// Calls `f` for every tuple version of the next page whatever its
    /// visibility, under the page's share lock (CREATE INDEX decides which
    /// versions to index). Returns Ok(false) when the scan is done.
    pub fn next_page_any(
        &mut self,
        mut f: impl FnMut(Tid, &[u8]) -> PgResult<()>,
    ) -> PgResult<bool> {
        let Some(buf) = self.stream.next_buffer()? else {
            return Ok(false);
        };
        let block = buf.block();
        let pg = buf.read();
        for off in 1..=page::item_count(&pg) {
            if let Some(t) = page::item(&pg, off) {
                f(Tid { block, offset: off }, t)?;
            }
        }
        Ok(true)
    }
}

/// The relation's main-fork size in blocks (0 if it has no storage), for
/// the planner's estimates.
pub fn relation_blocks(pool: &BufferPool, rel: RelFileLocator) -> u64 {
    pool.smgr()
        .nblocks(rel, ForkNumber::Main)
        .map(u64::from)
        .unwrap_or(0)
}

/// Creates the relation's main fork file (logged first, so redo of the
/// records that fill it finds the file).
pub fn create_storage(pool: &'static BufferPool, wal: &Wal, rel: RelFileLocator) -> PgResult<()> {
    log::log_smgr(wal, log::SMGR_CREATE, rel);
    pool.smgr().create(rel, ForkNumber::Main)?;
    Ok(())
}

/// Drops the relation's buffers and files. The drop is logged and flushed
/// first: redo of earlier records recreates the file, and the drop record
/// must then remove it again.
pub fn drop_storage(pool: &'static BufferPool, wal: &Wal, rel: RelFileLocator) -> PgResult<()> {
    let lsn = log::log_smgr(wal, log::SMGR_DROP, rel);
    wal.flush(lsn)?;
    pool.drop_relation_buffers(rel);
    pool.smgr().unlink(rel);
    Ok(())
}

/// Removes what is left of a dropped database's directory (its relations'
/// files were dropped one by one through `drop_storage`).
pub fn drop_database_storage(
    pool: &'static BufferPool,
    wal: &Wal,
    db_oid: common::Oid,
) -> PgResult<()> {
    let rel = RelFileLocator {
        spc_oid: common::ids::DEFAULT_TABLESPACE_OID,
        db_oid,
        rel_number: 0,
    };
    let lsn = log::log_smgr(wal, log::SMGR_DROP_DATABASE, rel);
    wal.flush(lsn)?;
    remove_database_dir(pool, db_oid);
    Ok(())
}

fn remove_database_dir(pool: &BufferPool, db_oid: common::Oid) {
    let dir = pool.smgr().data_dir().join("base").join(db_oid.to_string());
    let _ = std::fs::remove_dir_all(dir);
}
