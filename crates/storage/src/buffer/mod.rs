//! The shared buffer pool (design.md §6). See the crate README for the rules.
//!
//! * descriptors: one atomic state word each (`state.rs`), pinned by CAS;
//! * mapping: tag -> buffer id in 128 partitions, each under its own LWLock;
//! * victims: the freelist first, then a clock sweep with an atomic hand;
//! * rings (`strategy.rs`) keep big scans and bulk writes from flushing the pool.

pub mod bgwriter;
mod freelist;
mod mapping;
pub mod state;
pub mod strategy;
pub mod stream;

use std::alloc::Layout;
use std::cell::UnsafeCell;
use std::hash::{Hash, Hasher};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use freelist::StrategyControl;
use std::sync::Arc;

use common::BufferUsage;
use common::{BlockNumber, RelFileLocator};
use crossbeam_utils::CachePadded;
use rustc_hash::FxHasher;

use crate::lwlock::{ExclusiveGuard, LwLock, SharedGuard, Tranche};
use crate::page;
use crate::smgr::Smgr;
use crate::{ForkNumber, StorageError, StorageResult, BLCKSZ};
use state::*;
pub use strategy::{BufferStrategy, StrategyKind};

pub const NUM_MAPPING_PARTITIONS: usize = 128;

thread_local! {
    /// This thread's block counts (PostgreSQL's pgBufferUsage): per thread,
    /// so counting costs no shared cache-line write; a session is one thread.
    static USAGE: std::cell::Cell<BufferUsage> = const {
        std::cell::Cell::new(BufferUsage {
            shared_hit: 0,
            shared_read: 0,
            shared_dirtied: 0,
            shared_written: 0,
            local_hit: 0,
            local_read: 0,
            local_dirtied: 0,
            local_written: 0,
            temp_read: 0,
            temp_written: 0,
        })
    };
    /// (hits, reads) at the last `take_io_counts`.
    static TAKEN: std::cell::Cell<(u64, u64)> = const { std::cell::Cell::new((0, 0)) };
}

/// Adds to this thread's counts.
#[inline]
pub(crate) fn count_usage(f: impl FnOnce(&mut BufferUsage)) {
    USAGE.with(|c| {
        let mut u = c.get();
        f(&mut u);
        c.set(u);
    });
}

#[inline]
fn count_hit() {
    count_usage(|u| u.shared_hit += 1);
}

/// This thread's block counts since it started (EXPLAIN's BUFFERS takes
/// the difference of two readings).
pub fn buffer_usage() -> BufferUsage {
    USAGE.with(|c| c.get())
}

/// Returns this thread's (blocks hit, blocks read) since the last call; the
/// session adds them to its database's pg_stat_database counters.
pub fn take_io_counts() -> (u64, u64) {
    let u = buffer_usage();
    let (h, r) = TAKEN.with(|t| t.replace((u.shared_hit, u.shared_read)));
    (u.shared_hit - h, u.shared_read - r)
}

use mapping::MappingPartition;

/// Identity of a page: relation fork and block.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct BufferTag {
    pub rel: RelFileLocator,
    pub fork: ForkNumber,
    pub block: BlockNumber,
}

impl BufferTag {
    fn hash_code(&self) -> u64 {
        let mut h = FxHasher::default();
        self.hash(&mut h);
        h.finish()
    }
}

const INVALID_TAG: BufferTag = BufferTag {
    rel: RelFileLocator {
        spc_oid: 0,
        db_oid: 0,
        rel_number: 0,
    },
    fork: ForkNumber::Main,
    block: u32::MAX,
};

#[repr(align(64))]
struct BufferDesc {
    state: AtomicU32,
    /// Written only under the header lock (state rule 2).
    tag: UnsafeCell<BufferTag>,
    content: LwLock,
    io: LwLock,
}

#[repr(C, align(4096))]
struct Frame([u8; BLCKSZ]);

/// Counters behind pg_stat_bgwriter / pg_stat_database.
#[derive(Default)]
pub struct BufferStats {
    pub buffers_alloc: AtomicU64,
    pub buffers_backend: AtomicU64,
    pub buffers_clean: AtomicU64,
    pub buffers_checkpoint: AtomicU64,
    /// Rounds the background writer stopped because it hit lru_maxpages.
    pub maxwritten_clean: AtomicU64,
    pub blks_read: AtomicU64,
}

/// How to fill a buffer that is not yet in the pool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadMode {
    /// Read it from disk (verifying the checksum).
    Normal,
    /// The block is new: zero the frame instead of reading.
    Zero,
}

pub struct BufferPool {
    descs: Box<[BufferDesc]>,
    frames: *mut Frame,
    mapping: Box<[CachePadded<MappingPartition>]>,
    lock_free_lookup: bool,
    control: StrategyControl,
    smgr: Arc<Smgr>,
    pub stats: BufferStats,
    pub bgwriter: bgwriter::BgWriterSettings,
    /// Makes the log durable up to a page's LSN before the page is written
    /// (WAL before data). Installed once by the server after recovery;
    /// until then (redo, tools) pages are written as they are.
    wal_flush: std::sync::OnceLock<WalFlushHook>,
}

/// Flushes the write-ahead log up to an LSN (see `BufferPool::set_wal_flush`).
pub type WalFlushHook = Box<dyn Fn(u64) -> Result<(), String> + Send + Sync>;

/// How to build a pool; the non-default values exist for ablation benchmarks.
#[derive(Debug, Clone)]
pub struct PoolOptions {
    pub nbuffers: usize,
    /// Buffer-mapping partitions (PostgreSQL: 128).
    pub mapping_partitions: usize,
    /// One lock around freelist and clock sweep (pre-9.5 PostgreSQL).
    pub global_victim_lock: bool,
    /// Look hits up without the partition lock (mapping.rs rule 2); false
    /// takes it in shared mode for every lookup, as PostgreSQL does.
    pub lock_free_lookup: bool,
}

impl PoolOptions {
    pub fn new(nbuffers: usize) -> Self {
        PoolOptions {
            nbuffers,
            mapping_partitions: NUM_MAPPING_PARTITIONS,
            global_victim_lock: false,
            lock_free_lookup: true,
        }
    }
}

// SAFETY: frames are accessed only under the owning descriptor's content lock
// (or by the thread holding its I/O lock while the buffer is not yet valid).
unsafe impl Send for BufferPool {}
unsafe impl Sync for BufferPool {}

/// Snapshot of one descriptor, for pg_buffercache.
#[derive(Debug, Clone)]
pub struct BufferInfo {
    pub buffer_id: u32,
    pub tag: Option<BufferTag>,
    pub dirty: bool,
    pub usage_count: u32,
    pub pin_count: u32,
}

impl BufferPool {
    /// Creates the pool for the server's life (it is never freed: every pin
    /// handle refers to it as `&'static`).
    pub fn new(nbuffers: usize, smgr: Arc<Smgr>) -> &'static BufferPool {
        Self::with_options(PoolOptions::new(nbuffers), smgr)
    }

    pub fn with_options(opts: PoolOptions, smgr: Arc<Smgr>) -> &'static BufferPool {
        let nbuffers = opts.nbuffers;
        assert!(nbuffers >= 16, "shared_buffers too small");
        assert!(opts.mapping_partitions >= 1);
        let descs: Box<[BufferDesc]> = (0..nbuffers)
            .map(|_| BufferDesc {
                // Every buffer starts on the freelist.
                state: AtomicU32::new(ON_FREELIST),
                tag: UnsafeCell::new(INVALID_TAG),
                content: LwLock::new(Tranche::BufferContent),
                io: LwLock::new(Tranche::BufferIO),
            })
            .collect();
        let layout = Layout::array::<Frame>(nbuffers).unwrap();
        // SAFETY: non-zero layout; zeroed memory is a valid Frame.
        let frames = unsafe { std::alloc::alloc_zeroed(layout) } as *mut Frame;
        assert!(!frames.is_null(), "could not allocate shared buffers");
        // Each partition sized 8x its share of the buffers (mapping.rs rule 4).
        let per_partition = 8 * nbuffers.div_ceil(opts.mapping_partitions);
        let mapping = (0..opts.mapping_partitions)
            .map(|_| MappingPartition::new(per_partition))
            .collect();
        Box::leak(Box::new(BufferPool {
            descs,
            frames,
            mapping,
            lock_free_lookup: opts.lock_free_lookup,
            control: StrategyControl::new(nbuffers, opts.global_victim_lock),
            smgr,
            stats: BufferStats::default(),
            bgwriter: bgwriter::BgWriterSettings::default(),
            wal_flush: std::sync::OnceLock::new(),
        }))
    }

    /// Installs the log flush every page write waits for (rule 13).
    pub fn set_wal_flush(&self, hook: WalFlushHook) {
        if self.wal_flush.set(hook).is_err() {
            panic!("WAL flush hook installed twice");
        }
    }

    pub fn nbuffers(&self) -> usize {
        self.descs.len()
    }

    pub fn smgr(&self) -> &Arc<Smgr> {
        &self.smgr
    }

    /// Buffers on the freelist now (pg_stat_bgwriter.buffers_freelist).
    pub fn freelist_len(&self) -> usize {
        self.control.len()
    }

    /// Freelist (low, high) watermarks of this pool.
    pub fn freelist_watermarks(&self) -> (usize, usize) {
        (self.control.low, self.control.high)
    }

    #[inline]
    fn frame_ptr(&self, id: u32) -> *mut u8 {
        debug_assert!((id as usize) < self.descs.len());
        // SAFETY: id is in range of the allocation.
        unsafe { (*self.frames.add(id as usize)).0.as_mut_ptr() }
    }

    #[inline]
    fn partition(&self, hash: u64) -> usize {
        (hash % self.mapping.len() as u64) as usize
    }

    /// Pins a buffer found through the mapping (partition lock held by caller).
    #[inline]
    fn pin_found(&self, id: u32, strategy: bool) {
        update(&self.descs[id as usize].state, |s| {
            let mut n = s + 1;
            let u = usage(s);
            // Ring (strategy) accesses only make a buffer count as used once.
            if (!strategy && u < MAX_USAGE) || (strategy && u == 0) {
                n += USAGE_ONE;
            }
            Some(n)
        });
    }

    #[inline]
    fn unpin(&self, id: u32) {
        let (old, _) = update(&self.descs[id as usize].state, |s| {
            debug_assert!(refcount(s) > 0);
            Some(s - 1)
        });
        debug_assert!(refcount(old) > 0, "unpin of an unpinned buffer");
    }

    /// Finds `tag`'s buffer and pins it: first without any lock (mapping.rs
    /// rule 2, checked against the pinned descriptor's tag), then under the
    /// partition's shared lock.
    #[inline]
    fn lookup_and_pin(
        &self,
        part: &MappingPartition,
        tag: &BufferTag,
        hash: u64,
        strategy: bool,
    ) -> Option<u32> {
        let hint = if self.lock_free_lookup {
            part.lookup_optimistic(tag, hash)
        } else {
            None
        };
        if let Some(id) = hint {
            if let Some(desc) = self.descs.get(id as usize) {
                let (old, new) = update_expecting(&desc.state, CACHED_UNPINNED, |s| {
                    (s & TAG_VALID != 0).then_some(s + 1)
                });
                if old != new {
                    // SAFETY: pinned, so the tag cannot change any more (state rule 2);
                    // the pin's Acquire makes the last tag write visible.
                    if unsafe { *desc.tag.get() } == *tag {
                        self.count_use(id, strategy);
                        return Some(id);
                    }
                    self.unpin(id);
                }
            }
        }
        let g = part.shared();
        part.lookup(&g, tag, hash)
            .inspect(|&id| self.pin_found(id, strategy))
    }

    /// Bumps the usage count of a buffer we pinned (as `pin_found` would have).
    #[inline]
    fn count_use(&self, id: u32, strategy: bool) {
        let s = self.descs[id as usize].state.load(Ordering::Relaxed);
        let u = usage(s);
        if (!strategy && u < MAX_USAGE) || (strategy && u == 0) {
            update(&self.descs[id as usize].state, |s| {
                let u = usage(s);
                ((!strategy && u < MAX_USAGE) || (strategy && u == 0)).then_some(s + USAGE_ONE)
            });
        }
    }

    /// Pins the page `tag`, reading it into the pool if needed.
    pub fn read_buffer(
        &'static self,
        rel: RelFileLocator,
        fork: ForkNumber,
        block: BlockNumber,
        mode: ReadMode,
        strategy: Option<&mut BufferStrategy>,
    ) -> StorageResult<Buffer> {
        let tag = BufferTag { rel, fork, block };
        let hash = tag.hash_code();
        let part = &self.mapping[self.partition(hash)];
        let mut strategy = strategy;
        loop {
            let found = self.lookup_and_pin(part, &tag, hash, strategy.is_some());
            if let Some(id) = found {
                let buf = Buffer { pool: self, id };
                if self.descs[id as usize].state.load(Ordering::Acquire) & VALID != 0 {
                    count_hit();
                    return Ok(buf);
                }
                // Someone is reading it in: wait for their I/O, then re-check.
                drop(self.descs[id as usize].io.shared());
                if self.descs[id as usize].state.load(Ordering::Acquire) & VALID != 0 {
                    count_hit();
                    return Ok(buf);
                }
                continue; // their read failed; try ourselves
            }
            match self.alloc_buffer(tag, hash, strategy.as_deref_mut())? {
                Alloc::Found(id) => {
                    let buf = Buffer { pool: self, id };
                    if self.descs[id as usize].state.load(Ordering::Acquire) & VALID != 0 {
                        return Ok(buf);
                    }
                    continue;
                }
                Alloc::New(id, io_guard) => {
                    return self.fill_new_buffer(tag, hash, id, io_guard, mode);
                }
            }
        }
    }

    fn fill_new_buffer(
        &'static self,
        tag: BufferTag,
        hash: u64,
        id: u32,
        io_guard: ExclusiveGuard<'static>,
        mode: ReadMode,
    ) -> StorageResult<Buffer> {
        // SAFETY: the buffer is not VALID, so nobody else touches the frame while
        // we hold its I/O lock exclusively.
        let frame = unsafe { std::slice::from_raw_parts_mut(self.frame_ptr(id), BLCKSZ) };
        let result = match mode {
            ReadMode::Zero => {
                frame.fill(0);
                Ok(())
            }
            ReadMode::Normal => self.smgr.read_block(tag.rel, tag.fork, tag.block, frame),
        };
        self.finish_read(tag, hash, id, io_guard, result, mode == ReadMode::Normal)
    }

    /// Completes a read into a newly mapped buffer: verifies the checksum and
    /// marks it VALID, or forgets the mapping so the next reader retries.
    fn finish_read(
        &'static self,
        tag: BufferTag,
        hash: u64,
        id: u32,
        io_guard: ExclusiveGuard<'static>,
        read: StorageResult<()>,
        from_disk: bool,
    ) -> StorageResult<Buffer> {
        let result = read.and_then(|_| {
            if !from_disk {
                return Ok(());
            }
            self.stats.blks_read.fetch_add(1, Ordering::Relaxed);
            count_usage(|u| u.shared_read += 1);
            // SAFETY: as in fill_new_buffer: I/O lock held, buffer not VALID.
            let frame = unsafe { std::slice::from_raw_parts(self.frame_ptr(id), BLCKSZ) };
            if page::verify_checksum(frame, tag.block) {
                Ok(())
            } else {
                Err(StorageError::Corrupt {
                    block: tag.block,
                    path: Smgr::relative_path(tag.rel, tag.fork),
                })
            }
        });
        let desc = &self.descs[id as usize];
        match result {
            Ok(()) => {
                update(&desc.state, |s| Some(s | VALID));
                drop(io_guard);
                Ok(Buffer { pool: self, id })
            }
            Err(e) => {
                {
                    let part = &self.mapping[self.partition(hash)];
                    let g = part.exclusive();
                    part.remove(&g, &tag, hash, id);
                    let s = lock_header(&desc.state);
                    unlock_header(&desc.state, (s & !(TAG_VALID | VALID | DIRTY)) | IO_ERROR);
                }
                drop(io_guard);
                self.unpin(id);
                Err(e)
            }
        }
    }

    /// Pins `count` consecutive blocks from `first`, reading the missing ones
    /// with one vectored read per contiguous run (PostgreSQL 17's combined
    /// reads), which saves a system call and a page-cache lookup per block.
    pub fn read_buffers(
        &'static self,
        rel: RelFileLocator,
        fork: ForkNumber,
        first: BlockNumber,
        count: u32,
        mut strategy: Option<&mut BufferStrategy>,
    ) -> StorageResult<Vec<Buffer>> {
        struct Pending {
            index: usize,
            tag: BufferTag,
            hash: u64,
            id: u32,
            io: ExclusiveGuard<'static>,
        }
        let mut out: Vec<Option<Buffer>> = Vec::with_capacity(count as usize);
        let mut pending: Vec<Pending> = Vec::new();
        for i in 0..count {
            let tag = BufferTag {
                rel,
                fork,
                block: first + i,
            };
            let hash = tag.hash_code();
            let part = &self.mapping[self.partition(hash)];
            let found = self.lookup_and_pin(part, &tag, hash, strategy.is_some());
            let found = match found {
                Some(id) => Some(id),
                None => match self.alloc_buffer(tag, hash, strategy.as_deref_mut())? {
                    Alloc::Found(id) => Some(id),
                    Alloc::New(id, io) => {
                        pending.push(Pending {
                            index: out.len(),
                            tag,
                            hash,
                            id,
                            io,
                        });
                        None
                    }
                },
            };
            match found {
                Some(id) if self.descs[id as usize].state.load(Ordering::Acquire) & VALID != 0 => {
                    count_hit();
                    out.push(Some(Buffer { pool: self, id }));
                }
                Some(id) => {
                    // Being read by someone else: take it the ordinary way below.
                    self.unpin(id);
                    out.push(None);
                }
                None => out.push(None),
            }
        }
        let mut first_error = None;
        let mut rest = pending.into_iter().peekable();
        while let Some(p) = rest.next() {
            let mut run = vec![p];
            while let Some(next) = rest.peek() {
                let last = run.last().unwrap().tag.block;
                let same_segment =
                    next.tag.block / crate::RELSEG_BLOCKS == last / crate::RELSEG_BLOCKS;
                if next.tag.block == last + 1 && same_segment {
                    run.push(rest.next().unwrap());
                } else {
                    break;
                }
            }
            // SAFETY: each frame belongs to a distinct buffer that is not VALID
            // and whose I/O lock we hold, so nobody else touches it.
            let mut frames: Vec<&mut [u8]> = run
                .iter()
                .map(|p| unsafe { std::slice::from_raw_parts_mut(self.frame_ptr(p.id), BLCKSZ) })
                .collect();
            let read = self
                .smgr
                .read_blocks(rel, fork, run[0].tag.block, &mut frames);
            drop(frames);
            for p in run {
                let r = match &read {
                    Ok(()) => Ok(()),
                    Err(e) => Err(StorageError::Io {
                        op: "read",
                        path: Smgr::relative_path(rel, fork),
                        source: std::io::Error::other(e.to_string()),
                    }),
                };
                match self.finish_read(p.tag, p.hash, p.id, p.io, r, true) {
                    Ok(b) => out[p.index] = Some(b),
                    Err(e) => {
                        first_error.get_or_insert(e);
                    }
                }
            }
        }
        if let Some(e) = first_error {
            return Err(e);
        }
        let mut result = Vec::with_capacity(out.len());
        for (i, b) in out.into_iter().enumerate() {
            result.push(match b {
                Some(b) => b,
                None => self.read_buffer(
                    rel,
                    fork,
                    first + i as u32,
                    ReadMode::Normal,
                    strategy.as_deref_mut(),
                )?,
            });
        }
        Ok(result)
    }

    /// Finds a victim and, holding the mapping locks, either discovers that
    /// someone else mapped `tag` meanwhile or maps the victim to `tag`.
    fn alloc_buffer(
        &'static self,
        tag: BufferTag,
        hash: u64,
        mut strategy: Option<&mut BufferStrategy>,
    ) -> StorageResult<Alloc> {
        self.stats.buffers_alloc.fetch_add(1, Ordering::Relaxed);
        loop {
            let victim = self.get_victim(strategy.as_deref_mut())?;
            let desc = &self.descs[victim as usize];
            let s = desc.state.load(Ordering::Acquire);
            if s & DIRTY != 0 {
                if let Err(e) = self.flush_buffer(victim) {
                    self.unpin(victim);
                    return Err(e);
                }
                self.stats.buffers_backend.fetch_add(1, Ordering::Relaxed);
            }
            let s = desc.state.load(Ordering::Acquire);
            // SAFETY: we hold a pin, so the tag cannot change under us (rule 2).
            let old_tag = (s & TAG_VALID != 0).then(|| unsafe { *desc.tag.get() });
            let new_part = self.partition(hash);
            let old_part = old_tag.map(|t| self.partition(t.hash_code()));
            // Lock partitions in number order (crate README, lock order rule).
            let (first, second) = match old_part {
                Some(op) if op != new_part => (op.min(new_part), Some(op.max(new_part))),
                _ => (new_part, None),
            };
            let g1 = self.mapping[first].exclusive();
            let g2 = second.map(|p| self.mapping[p].exclusive());
            let guard_of = |p: usize| {
                if p == first {
                    &g1
                } else {
                    g2.as_ref().unwrap()
                }
            };
            let new_map = &self.mapping[new_part];
            if let Some(existing) = new_map.lookup(guard_of(new_part), &tag, hash) {
                self.pin_found(existing, strategy.is_some());
                drop(g2);
                drop(g1);
                self.unpin(victim);
                return Ok(Alloc::Found(existing));
            }
            let s = lock_header(&desc.state);
            if refcount(s) != 1 || s & DIRTY != 0 {
                // Pinned or re-dirtied by someone else since we chose it.
                unlock_header(&desc.state, s);
                drop(g2);
                drop(g1);
                self.unpin(victim);
                continue;
            }
            new_map.insert(guard_of(new_part), &tag, hash, victim);
            if let (Some(ot), Some(op)) = (old_tag, old_part) {
                self.mapping[op].remove(guard_of(op), &ot, ot.hash_code(), victim);
            }
            // SAFETY: header lock held, refcount is our pin only (rule 2).
            unsafe { *desc.tag.get() = tag };
            let io = desc.io.exclusive();
            unlock_header(&desc.state, 1 | USAGE_ONE | TAG_VALID);
            drop(g2);
            drop(g1);
            if let Some(st) = strategy.as_deref_mut() {
                st.remember(victim);
            }
            // SAFETY: the guard borrows a descriptor of a 'static pool.
            let io: ExclusiveGuard<'static> = unsafe { std::mem::transmute(io) };
            return Ok(Alloc::New(victim, io));
        }
    }

    /// Returns a pinned buffer with refcount 1 (ours) that nobody else uses.
    fn get_victim(&self, strategy: Option<&mut BufferStrategy>) -> StorageResult<u32> {
        if let Some(st) = strategy {
            if let Some(id) = st.current() {
                let desc = &self.descs[id as usize];
                let (old, new) = update(&desc.state, |s| {
                    (refcount(s) == 0 && usage(s) <= 1).then_some(s + 1)
                });
                if old != new {
                    return Ok(id);
                }
            }
        }
        let _global = self.control.global_lock.as_ref().map(|l| l.exclusive());
        while let Some(id) = self.control.pop() {
            let desc = &self.descs[id as usize];
            let (old, new) = update(&desc.state, |s| {
                let s = s & !ON_FREELIST;
                Some(if refcount(s) == 0 && usage(s) == 0 {
                    s + 1
                } else {
                    s
                })
            });
            if refcount(new) == refcount(old) + 1 {
                return Ok(id);
            }
        }
        let n = self.descs.len() as u64;
        let mut tries = n * (MAX_USAGE as u64 + 1);
        loop {
            if let Some(id) = self.clock_tick(n, true) {
                return Ok(id);
            }
            tries -= 1;
            if tries == 0 {
                return Err(StorageError::NoFreeBuffers);
            }
        }
    }

    /// Advances the clock hand one buffer, decrementing its usage count. If
    /// the buffer is unpinned with usage zero, pins it (`pin`) and returns it;
    /// without `pin` returns it unpinned (the background writer's probe).
    fn clock_tick(&self, n: u64, pin: bool) -> Option<u32> {
        let hand = self.control.hand.fetch_add(1, Ordering::Relaxed) % n;
        let desc = &self.descs[hand as usize];
        let (old, new) = update(&desc.state, |s| {
            if refcount(s) != 0 {
                None
            } else if usage(s) > 0 {
                Some(s - USAGE_ONE)
            } else if pin {
                Some(s + 1)
            } else {
                None
            }
        });
        let found = refcount(new) == 0 && usage(new) == 0 && usage(old) == 0;
        if pin && old != new && refcount(new) == 1 {
            return Some(hand as u32);
        }
        (!pin && found).then_some(hand as u32)
    }

    /// Writes a dirty buffer out. The caller holds a pin.
    fn flush_buffer(&self, id: u32) -> StorageResult<()> {
        let desc = &self.descs[id as usize];
        let _content = desc.content.shared();
        let _io = desc.io.exclusive();
        let (old, _) = update(&desc.state, |s| {
            (s & DIRTY != 0 && s & VALID != 0).then_some(s & !JUST_DIRTIED)
        });
        if old & DIRTY == 0 || old & VALID == 0 {
            return Ok(());
        }
        // SAFETY: pinned, tag stable.
        let tag = unsafe { *desc.tag.get() };
        let mut copy = Box::new(Frame([0; BLCKSZ]));
        // SAFETY: content lock held in shared mode: nobody modifies the frame.
        unsafe { std::ptr::copy_nonoverlapping(self.frame_ptr(id), copy.0.as_mut_ptr(), BLCKSZ) };
        if let Some(flush) = self.wal_flush.get() {
            let lsn = page::lsn(&copy.0);
            if lsn != 0 {
                flush(lsn).map_err(|message| StorageError::WalFlush { message })?;
            }
        }
        page::set_checksum(&mut copy.0, tag.block);
        self.smgr
            .write_block(tag.rel, tag.fork, tag.block, &copy.0)?;
        count_usage(|u| u.shared_written += 1);
        update(&desc.state, |s| {
            Some(if s & JUST_DIRTIED == 0 { s & !DIRTY } else { s })
        });
        Ok(())
    }

    /// Writes every dirty buffer and fsyncs the files (shutdown, checkpoint).
    pub fn flush_all(&'static self) -> StorageResult<()> {
        self.write_dirty(&mut |_, _| {})?;
        self.smgr.sync_all()
    }

    /// A checkpoint's write phase: writes every buffer dirty when it starts
    /// (and any dirtied meanwhile that the scan reaches), calling `pace`
    /// after each write with (written so far, dirty at the start) so the
    /// caller can spread the writes. Returns the number written.
    pub fn write_dirty(&'static self, pace: &mut dyn FnMut(usize, usize)) -> StorageResult<usize> {
        let total = self
            .descs
            .iter()
            .filter(|d| d.state.load(Ordering::Relaxed) & DIRTY != 0)
            .count();
        let mut written = 0;
        for id in 0..self.descs.len() as u32 {
            let desc = &self.descs[id as usize];
            // Acquire pairs with the CAS that set DIRTY (`mark_dirty`), made
            // before the change's log record was reserved: a page changed
            // by a record before the checkpoint's redo pointer is seen dirty.
            if desc.state.load(Ordering::Acquire) & DIRTY == 0 {
                continue;
            }
            let (old, new) = update(&desc.state, |s| (s & VALID != 0).then_some(s + 1));
            if old == new {
                continue;
            }
            let r = self.flush_buffer(id);
            self.unpin(id);
            r?;
            self.stats
                .buffers_checkpoint
                .fetch_add(1, Ordering::Relaxed);
            written += 1;
            pace(written, total.max(written));
        }
        Ok(written)
    }

    /// Forgets every buffer of `rel` without writing it (DROP/TRUNCATE).
    pub fn drop_relation_buffers(&self, rel: RelFileLocator) {
        let dropped = self.drop_buffers_where(rel, |_| true, false);
        debug_assert!(dropped, "dropping a pinned buffer of {rel:?}");
    }

    /// Forgets the buffers of `rel`'s `fork` at or past block `first`
    /// without writing them (VACUUM's truncation). A pinned one is left
    /// alone (its holder finds the block past the end and lets go): false
    /// if there was one.
    pub fn drop_buffers_from(
        &self,
        rel: RelFileLocator,
        fork: ForkNumber,
        first: BlockNumber,
    ) -> bool {
        self.drop_buffers_where(rel, |t| t.fork == fork && t.block >= first, true)
    }

    fn drop_buffers_where(
        &self,
        rel: RelFileLocator,
        which: impl Fn(&BufferTag) -> bool,
        skip_pinned: bool,
    ) -> bool {
        let mut all = true;
        for id in 0..self.descs.len() as u32 {
            let desc = &self.descs[id as usize];
            loop {
                // SAFETY: racy peek, only to choose the partition; re-checked
                // under the partition and header locks below.
                let peek = unsafe { *desc.tag.get() };
                if peek.rel != rel
                    || !which(&peek)
                    || desc.state.load(Ordering::Acquire) & TAG_VALID == 0
                {
                    break;
                }
                let hash = peek.hash_code();
                let part = &self.mapping[self.partition(hash)];
                let g = part.exclusive();
                let s = lock_header(&desc.state);
                // SAFETY: header lock held.
                let tag = unsafe { *desc.tag.get() };
                if s & TAG_VALID == 0 || tag != peek {
                    // Remapped since the peek: look again.
                    unlock_header(&desc.state, s);
                    continue;
                }
                if refcount(s) != 0 {
                    unlock_header(&desc.state, s);
                    all = false;
                    if skip_pinned {
                        break;
                    }
                }
                part.remove(&g, &tag, hash, id);
                unlock_header(
                    &desc.state,
                    s & !(TAG_VALID | VALID | DIRTY | JUST_DIRTIED) & !USAGE_MASK,
                );
                drop(g);
                self.push_free(id);
                break;
            }
        }
        all
    }

    /// Puts an unpinned buffer on the freelist unless it is already there.
    fn push_free(&self, id: u32) -> bool {
        let (old, new) = update(&self.descs[id as usize].state, |s| {
            (s & ON_FREELIST == 0).then_some(s | ON_FREELIST)
        });
        if old != new {
            self.control.push(id);
        }
        old != new
    }

    /// Descriptor snapshots for pg_buffercache.
    pub fn buffer_infos(&self) -> Vec<BufferInfo> {
        self.descs
            .iter()
            .enumerate()
            .map(|(i, d)| {
                let s = lock_header(&d.state);
                // SAFETY: header lock held.
                let tag = unsafe { *d.tag.get() };
                unlock_header(&d.state, s);
                BufferInfo {
                    buffer_id: i as u32,
                    tag: (s & VALID != 0).then_some(tag),
                    dirty: s & DIRTY != 0,
                    usage_count: usage(s),
                    pin_count: refcount(s),
                }
            })
            .collect()
    }
}

enum Alloc {
    Found(u32),
    New(u32, ExclusiveGuard<'static>),
}

/// A pinned buffer. Unpinned on drop. Lock its content to read or change the page.
pub struct Buffer {
    pool: &'static BufferPool,
    id: u32,
}

impl Buffer {
    pub fn id(&self) -> u32 {
        self.id
    }

    pub fn tag(&self) -> BufferTag {
        // SAFETY: pinned, so the tag is stable.
        unsafe { *self.pool.descs[self.id as usize].tag.get() }
    }

    pub fn block(&self) -> BlockNumber {
        self.tag().block
    }

    /// Takes the content lock in shared mode.
    pub fn read(&self) -> PageRead<'_> {
        let guard = self.pool.descs[self.id as usize].content.shared();
        PageRead {
            _guard: guard,
            // SAFETY: shared content lock held for the guard's life.
            page: unsafe { std::slice::from_raw_parts(self.pool.frame_ptr(self.id), BLCKSZ) },
        }
    }

    /// Takes the content lock in exclusive mode if no one holds it
    /// (opportunistic pruning never waits).
    pub fn try_write(&self) -> Option<PageWrite<'_>> {
        let guard = self.pool.descs[self.id as usize].content.try_exclusive()?;
        Some(PageWrite {
            buffer: self,
            _guard: guard,
            // SAFETY: exclusive content lock held for the guard's life.
            page: unsafe { std::slice::from_raw_parts_mut(self.pool.frame_ptr(self.id), BLCKSZ) },
        })
    }

    /// Takes the content lock in exclusive mode.
    pub fn write(&self) -> PageWrite<'_> {
        let guard = self.pool.descs[self.id as usize].content.exclusive();
        PageWrite {
            buffer: self,
            _guard: guard,
            // SAFETY: exclusive content lock held for the guard's life.
            page: unsafe { std::slice::from_raw_parts_mut(self.pool.frame_ptr(self.id), BLCKSZ) },
        }
    }

    /// Takes the content lock in shared mode, the guard owning the pin:
    /// for code that keeps locked pages in collections or moves them
    /// between functions (a B-tree's descent and splits).
    pub fn into_read(self) -> OwnedPageRead {
        let pool = self.pool;
        let guard = pool.descs[self.id as usize].content.shared();
        OwnedPageRead {
            _guard: guard,
            // SAFETY: shared content lock held for the guard's life; the
            // frame lives as long as the (never freed) pool.
            page: unsafe { std::slice::from_raw_parts(pool.frame_ptr(self.id), BLCKSZ) },
            buffer: self,
        }
    }

    /// Takes the content lock in exclusive mode, the guard owning the pin.
    pub fn into_write(self) -> OwnedPageWrite {
        let pool = self.pool;
        let guard = pool.descs[self.id as usize].content.exclusive();
        OwnedPageWrite {
            _guard: guard,
            // SAFETY: exclusive content lock held for the guard's life.
            page: unsafe { std::slice::from_raw_parts_mut(pool.frame_ptr(self.id), BLCKSZ) },
            buffer: self,
        }
    }

    /// `into_write` if no one holds the content lock, else the pin back
    /// (a B-tree split trying a recycled page must not wait for it).
    pub fn try_into_write(self) -> Result<OwnedPageWrite, Buffer> {
        let pool = self.pool;
        match pool.descs[self.id as usize].content.try_exclusive() {
            Some(guard) => Ok(OwnedPageWrite {
                _guard: guard,
                // SAFETY: exclusive content lock held for the guard's life.
                page: unsafe { std::slice::from_raw_parts_mut(pool.frame_ptr(self.id), BLCKSZ) },
                buffer: self,
            }),
            None => Err(self),
        }
    }

    fn mark_dirty(&self) {
        let desc = &self.pool.descs[self.id as usize];
        let s = desc.state.load(Ordering::Relaxed);
        if s & (DIRTY | JUST_DIRTIED) == DIRTY | JUST_DIRTIED {
            return;
        }
        let (old, _) = update(&desc.state, |s| Some(s | DIRTY | JUST_DIRTIED));
        if old & DIRTY == 0 {
            count_usage(|u| u.shared_dirtied += 1);
        }
    }
}

/// A pinned page under its shared content lock (`Buffer::into_read`).
/// Fields drop in order: the lock goes before the pin.
pub struct OwnedPageRead {
    _guard: SharedGuard<'static>,
    page: &'static [u8],
    buffer: Buffer,
}

impl OwnedPageRead {
    pub fn block(&self) -> BlockNumber {
        self.buffer.block()
    }
    /// Releases the lock, keeping the pin.
    pub fn unlock(self) -> Buffer {
        let OwnedPageRead { _guard, buffer, .. } = self;
        drop(_guard);
        buffer
    }
}

impl std::ops::Deref for OwnedPageRead {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        self.page
    }
}

/// A pinned page under its exclusive content lock (`Buffer::into_write`).
pub struct OwnedPageWrite {
    _guard: ExclusiveGuard<'static>,
    page: &'static mut [u8],
    buffer: Buffer,
}

impl OwnedPageWrite {
    pub fn block(&self) -> BlockNumber {
        self.buffer.block()
    }
    /// Marks the page dirty; the exclusive content lock proves we changed it.
    pub fn mark_dirty(&mut self) {
        self.buffer.mark_dirty();
    }
    /// Releases the lock, keeping the pin.
    pub fn unlock(self) -> Buffer {
        let OwnedPageWrite { _guard, buffer, .. } = self;
        drop(_guard);
        buffer
    }
}

impl std::ops::Deref for OwnedPageWrite {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        self.page
    }
}
impl std::ops::DerefMut for OwnedPageWrite {
    fn deref_mut(&mut self) -> &mut [u8] {
        self.page
    }
}

impl Drop for Buffer {
    fn drop(&mut self) {
        self.pool.unpin(self.id);
    }
}

pub struct PageRead<'a> {
    _guard: SharedGuard<'a>,
    page: &'a [u8],
}
impl std::ops::Deref for PageRead<'_> {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        self.page
    }
}

pub struct PageWrite<'a> {
    buffer: &'a Buffer,
    _guard: ExclusiveGuard<'a>,
    page: &'a mut [u8],
}
impl PageWrite<'_> {
    /// Marks the page dirty; the exclusive content lock proves we changed it.
    pub fn mark_dirty(&mut self) {
        self.buffer.mark_dirty();
    }
    /// The pool the page lives in (for a change that must reach another
    /// fork of the relation while this page is locked: the visibility map).
    pub fn pool(&self) -> &'static BufferPool {
        self.buffer.pool
    }
}
impl std::ops::Deref for PageWrite<'_> {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        self.page
    }
}
impl std::ops::DerefMut for PageWrite<'_> {
    fn deref_mut(&mut self) -> &mut [u8] {
        self.page
    }
}

#[cfg(test)]
mod tests;
