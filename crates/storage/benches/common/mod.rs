//! Shared set-up and workloads for the buffer-pool benchmarks (`buffer.rs`,
//! criterion; `scaling.rs`, a plain runner printing markdown tables).
//!
//! Pools are leaked `'static` by `BufferPool::with_options`, so each bench
//! binary builds only a handful of them. Pools that read the same relation
//! share one `Smgr` (one directory): every page is flushed before the pools
//! read it, so they only ever see complete, checksummed pages.

#![allow(dead_code)] // each bench binary uses a different subset

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Barrier};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use common::RelFileLocator;
use storage::buffer::{BufferPool, PoolOptions, ReadMode};
use storage::lwlock::{tranche_stats, Tranche};
use storage::page;
use storage::smgr::Smgr;
use storage::ForkNumber;

pub const REL: RelFileLocator = RelFileLocator {
    spc_oid: common::ids::DEFAULT_TABLESPACE_OID,
    db_oid: 5,
    rel_number: 16384,
};

/// Cached-lookup workload: every block stays resident. The main figure uses
/// PostgreSQL's default shared_buffers (128 MB) filled with one relation;
/// the small pool keeps every descriptor in one core's L2 cache, where the
/// cost of moving a descriptor's line between cores shows most.
pub const CACHED_NBUFFERS: usize = 16384;
pub const CACHED_BLOCKS: u32 = 16384;
pub const SMALL_CACHED_NBUFFERS: usize = 4096;
pub const SMALL_CACHED_BLOCKS: u32 = 2048;
/// Eviction workload: a working set 4x the pool.
pub const EVICT_NBUFFERS: usize = 1024;
pub const EVICT_BLOCKS: u32 = 4096;
/// bgwriter_delay for the "bgwriter on" runs (ms).
pub const BGWRITER_DELAY_MS: u64 = 10;
/// bgwriter_lru_maxpages for the "bgwriter on" runs (PostgreSQL's default).
pub const BGWRITER_MAXPAGES: u32 = 100;
/// bgwriter_lru_maxpages for write-heavy runs, where 100 pages per round
/// would cap the writer far below the backends' allocation rate.
pub const BGWRITER_MAXPAGES_HEAVY: u32 = 2000;

/// A relation of `nblocks` initialised pages in its own directory.
pub struct Data {
    pub smgr: Arc<Smgr>,
    pub nblocks: u32,
    _dir: tempfile::TempDir,
}

/// Creates the relation through a throw-away-sized pool of `nbuffers` built
/// with `opts` (that pool is returned so it can be measured too), writes every
/// page through `read_buffer(Zero) + write() + mark_dirty()` and flushes.
pub fn make_data(opts: PoolOptions, nblocks: u32) -> (Data, &'static BufferPool) {
    let dir = tempfile::tempdir().expect("tempdir");
    let smgr = Arc::new(Smgr::new(dir.path()));
    smgr.create(REL, ForkNumber::Main).expect("create relation");
    let first = smgr.extend(REL, ForkNumber::Main, nblocks).expect("extend");
    assert_eq!(first, 0);
    let pool = BufferPool::with_options(opts, smgr.clone());
    for b in 0..nblocks {
        let buf = pool
            .read_buffer(REL, ForkNumber::Main, b, ReadMode::Zero, None)
            .expect("read_buffer(Zero)");
        let mut p = buf.write();
        page::init(&mut p, 0);
        p[4000..4008].copy_from_slice(&(b as u64).to_le_bytes());
        p.mark_dirty();
    }
    pool.flush_all().expect("flush_all");
    (
        Data {
            smgr,
            nblocks,
            _dir: dir,
        },
        pool,
    )
}

/// Another pool over existing data (the data is clean on disk).
pub fn pool_over(data: &Data, opts: PoolOptions) -> &'static BufferPool {
    let pool = BufferPool::with_options(opts, data.smgr.clone());
    pool.bgwriter.lru_maxpages.store(0, Ordering::Relaxed);
    pool
}

pub fn opts(nbuffers: usize, mapping_partitions: usize, global_victim_lock: bool) -> PoolOptions {
    PoolOptions {
        mapping_partitions,
        global_victim_lock,
        ..PoolOptions::new(nbuffers)
    }
}

/// Options for the ablation that takes the partition lock on every lookup.
pub fn locked_lookup_opts(nbuffers: usize, mapping_partitions: usize) -> PoolOptions {
    PoolOptions {
        mapping_partitions,
        lock_free_lookup: false,
        ..PoolOptions::new(nbuffers)
    }
}

/// Reads every block once (twice for usage counts), so a cached workload
/// finds everything resident.
pub fn warm(pool: &'static BufferPool, nblocks: u32) {
    for _ in 0..2 {
        for b in 0..nblocks {
            drop(
                pool.read_buffer(REL, ForkNumber::Main, b, ReadMode::Normal, None)
                    .expect("warm read"),
            );
        }
    }
}

/// What a thread does per operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// read_buffer + drop (pin/unpin only; the lookup may miss and evict).
    Pin,
    /// read_buffer + shared content lock + read a word + drop.
    Read,
    /// As Read, but one op in `n` takes the exclusive content lock and
    /// dirties the page (so evictions must write).
    ReadDirty(u32),
    /// read_buffer(ReadMode::Zero) + drop: a miss zero-fills the frame instead
    /// of reading it, so this measures replacement itself (victim selection,
    /// mapping changes, pins) without the cost of the read. Use it on a pool
    /// of its own: the zeroed pages stay in that pool (they are never dirty).
    Replace,
}

#[inline]
fn xorshift(x: &mut u64) -> u64 {
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    *x
}

/// One thread's loop: `ops` operations on random blocks of `0..nblocks`.
#[inline(never)]
pub fn worker(pool: &'static BufferPool, nblocks: u32, op: Op, seed: u64, ops: u64) -> u64 {
    let mut x = 0x9E37_79B9_7F4A_7C15u64 ^ (seed.wrapping_mul(0x2545_F491_4F6C_DD1D) | 1);
    let mut sink = 0u64;
    for _ in 0..ops {
        let r = xorshift(&mut x);
        let b = (r % nblocks as u64) as u32;
        let mode = if op == Op::Replace {
            ReadMode::Zero
        } else {
            ReadMode::Normal
        };
        let buf = pool
            .read_buffer(REL, ForkNumber::Main, b, mode, None)
            .expect("read_buffer");
        match op {
            Op::Pin | Op::Replace => sink = sink.wrapping_add(buf.id() as u64),
            Op::Read => {
                let p = buf.read();
                sink = sink.wrapping_add(p[4000] as u64);
            }
            Op::ReadDirty(n) => {
                if (r >> 40).is_multiple_of(n as u64) {
                    let mut p = buf.write();
                    p[4100] = p[4100].wrapping_add(1);
                    p.mark_dirty();
                } else {
                    let p = buf.read();
                    sink = sink.wrapping_add(p[4000] as u64);
                }
            }
        }
    }
    sink
}

/// Runs `threads` scoped threads doing `ops_per_thread` ops each, started
/// together; returns the wall time from the common start to the last join.
pub fn run_fixed_ops(
    pool: &'static BufferPool,
    nblocks: u32,
    op: Op,
    threads: usize,
    ops_per_thread: u64,
    seed: u64,
) -> Duration {
    let barrier = Barrier::new(threads + 1);
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let barrier = &barrier;
                s.spawn(move || {
                    barrier.wait();
                    std::hint::black_box(worker(
                        pool,
                        nblocks,
                        op,
                        seed.wrapping_mul(1000) + t as u64,
                        ops_per_thread,
                    ))
                })
            })
            .collect();
        barrier.wait();
        let start = Instant::now();
        for h in handles {
            h.join().expect("worker panicked");
        }
        start.elapsed()
    })
}

/// Runs `threads` threads for about `dur`, in chunks of ops, and returns total
/// operations per second.
pub fn run_for(
    pool: &'static BufferPool,
    nblocks: u32,
    op: Op,
    threads: usize,
    dur: Duration,
    seed: u64,
) -> f64 {
    const CHUNK: u64 = 2048;
    let stop = AtomicBool::new(false);
    let barrier = Barrier::new(threads + 1);
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let (barrier, stop) = (&barrier, &stop);
                s.spawn(move || {
                    barrier.wait();
                    let mut done = 0u64;
                    let mut i = 0u64;
                    while !stop.load(Ordering::Relaxed) {
                        std::hint::black_box(worker(
                            pool,
                            nblocks,
                            op,
                            seed.wrapping_mul(1_000_003) + (t as u64) * 7919 + i,
                            CHUNK,
                        ));
                        done += CHUNK;
                        i += 1;
                    }
                    done
                })
            })
            .collect();
        barrier.wait();
        let start = Instant::now();
        std::thread::sleep(dur);
        stop.store(true, Ordering::Relaxed);
        let total: u64 = handles
            .into_iter()
            .map(|h| h.join().expect("worker panicked"))
            .sum();
        total as f64 / start.elapsed().as_secs_f64()
    })
}

/// A running background writer that stops (and is joined) on drop.
pub struct BgWriter {
    flag: Arc<AtomicBool>,
    handle: Option<JoinHandle<()>>,
}

impl BgWriter {
    /// Turns the pool's writer on with a short delay and PostgreSQL's default
    /// bgwriter_lru_maxpages (100) and starts its thread.
    pub fn start(pool: &'static BufferPool, delay_ms: u64) -> BgWriter {
        Self::start_with(pool, delay_ms, BGWRITER_MAXPAGES)
    }

    pub fn start_with(pool: &'static BufferPool, delay_ms: u64, lru_maxpages: u32) -> BgWriter {
        pool.bgwriter.delay_ms.store(delay_ms, Ordering::Relaxed);
        pool.bgwriter
            .lru_maxpages
            .store(lru_maxpages, Ordering::Relaxed);
        let flag = Arc::new(AtomicBool::new(false));
        let handle = pool.start_bgwriter(flag.clone());
        BgWriter {
            flag,
            handle: Some(handle),
        }
    }
}

impl Drop for BgWriter {
    fn drop(&mut self) {
        self.flag.store(true, Ordering::Relaxed);
        if let Some(h) = self.handle.take() {
            h.join().expect("bgwriter panicked");
        }
    }
}

/// The pool's counters (pg_stat_bgwriter) plus mapping-lock counters.
#[derive(Clone, Copy, Debug, Default)]
pub struct Counters {
    pub alloc: u64,
    pub backend: u64,
    pub clean: u64,
    pub blks_read: u64,
    pub mapping_excl: u64,
    pub mapping_blocks: u64,
    pub content_blocks: u64,
    pub io_blocks: u64,
}

impl Counters {
    pub fn read(pool: &BufferPool) -> Counters {
        let st = &pool.stats;
        let m = tranche_stats(Tranche::BufferMapping);
        Counters {
            alloc: st.buffers_alloc.load(Ordering::Relaxed),
            backend: st.buffers_backend.load(Ordering::Relaxed),
            clean: st.buffers_clean.load(Ordering::Relaxed),
            blks_read: st.blks_read.load(Ordering::Relaxed),
            mapping_excl: m.exclusive_acquires,
            mapping_blocks: m.blocks,
            content_blocks: tranche_stats(Tranche::BufferContent).blocks,
            io_blocks: tranche_stats(Tranche::BufferIO).blocks,
        }
    }

    pub fn delta(&self, before: &Counters) -> Counters {
        Counters {
            alloc: self.alloc - before.alloc,
            backend: self.backend - before.backend,
            clean: self.clean - before.clean,
            blks_read: self.blks_read - before.blks_read,
            mapping_excl: self.mapping_excl.saturating_sub(before.mapping_excl),
            mapping_blocks: self.mapping_blocks.saturating_sub(before.mapping_blocks),
            content_blocks: self.content_blocks.saturating_sub(before.content_blocks),
            io_blocks: self.io_blocks.saturating_sub(before.io_blocks),
        }
    }
}

/// Whether `BUF_BENCH_SECTIONS` (a comma list; default all) names `section`.
pub fn section_enabled(section: &str) -> bool {
    match std::env::var("BUF_BENCH_SECTIONS") {
        Ok(s) => s.split(',').any(|x| x.trim() == section),
        Err(_) => true,
    }
}

/// Thread counts to measure: 1, 2, then doubling up to the machine's
/// parallelism (at least 2, so contention is always measured).
/// `BUF_BENCH_THREADS=1,2,4` overrides.
pub fn thread_counts() -> Vec<usize> {
    if let Ok(s) = std::env::var("BUF_BENCH_THREADS") {
        let v: Vec<usize> = s
            .split(',')
            .filter_map(|t| t.trim().parse().ok())
            .filter(|&t| t > 0)
            .collect();
        if !v.is_empty() {
            return v;
        }
    }
    let max = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(2)
        .max(2);
    let mut v = vec![1];
    let mut t = 2;
    while t <= max {
        v.push(t);
        t *= 2;
    }
    if *v.last().unwrap() != max {
        v.push(max);
    }
    v
}
