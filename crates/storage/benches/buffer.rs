//! Criterion micro-benchmarks of the shared buffer pool (issue 3, "Buffer
//! manager that scales"). Run with
//!
//! ```sh
//! cargo bench -p storage --bench buffer            # all groups
//! cargo bench -p storage --bench buffer -- cached  # one group (filter)
//! ```
//!
//! Groups (throughput is total operations per second over all threads):
//!
//! * `cached_lookup/threads/N`: `read_buffer` of a resident page + drop
//!   (mapping lookup, pin, unpin) on random blocks, from N threads;
//! * `evict_read/bgwriter_{off,on}/N`: random reads (shared content lock)
//!   of a relation 4x the pool (1024 buffers, 4096 blocks), background
//!   writer off (`lru_maxpages = 0`) or on (delay 10 ms); the pool counters
//!   (buffers_alloc, buffers_backend, buffers_clean) are printed per bench;
//! * `ablation/*`: the same workloads at the highest thread count (at least
//!   2) with one mapping partition instead of 128, lookups under the
//!   partition's shared lock instead of lock-free, one global victim lock,
//!   and the background writer against a workload that dirties 1 page in 10.
//!
//! `BUF_BENCH_THREADS=1,2,4` overrides the thread counts. For a compact table
//! of the same figures (and the ablation ratios) run the `scaling` bench.

mod common;

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use storage::buffer::BufferPool;

use common::*;

/// Operations per thread in one criterion iteration.
const CACHED_OPS: u64 = 1000;
const EVICT_OPS: u64 = 200;

fn config() -> Criterion {
    Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
}

/// A pool and what the threads do on it.
#[derive(Clone, Copy)]
struct Workload {
    pool: &'static BufferPool,
    nblocks: u32,
    op: Op,
    /// Operations per thread in one criterion iteration.
    ops_per_iter: u64,
    /// Print the pool counters (evictions) after the benchmark.
    counters: bool,
}

impl Workload {
    fn cached(pool: &'static BufferPool, nblocks: u32) -> Self {
        Workload {
            pool,
            nblocks,
            op: Op::Pin,
            ops_per_iter: CACHED_OPS,
            counters: false,
        }
    }
    fn evict(pool: &'static BufferPool, nblocks: u32, op: Op) -> Self {
        Workload {
            pool,
            nblocks,
            op,
            ops_per_iter: EVICT_OPS,
            counters: true,
        }
    }
}

type Group<'a> = criterion::BenchmarkGroup<'a, criterion::measurement::WallTime>;

/// Benchmarks one (workload, threads) point and prints the pool counters per
/// operation over everything the benchmark ran.
fn bench_point(group: &mut Group<'_>, name: &str, threads: usize, w: Workload) {
    let total_ops = AtomicU64::new(0);
    let before = Counters::read(w.pool);
    group.throughput(Throughput::Elements(threads as u64 * w.ops_per_iter));
    group.bench_with_input(BenchmarkId::new(name, threads), &threads, |b, &t| {
        let mut seed = 0u64;
        b.iter_custom(|iters| {
            seed += 1;
            let per_thread = iters * w.ops_per_iter;
            total_ops.fetch_add(per_thread * t as u64, Ordering::Relaxed);
            run_fixed_ops(w.pool, w.nblocks, w.op, t, per_thread, seed)
        })
    });
    if w.counters {
        let d = Counters::read(w.pool).delta(&before);
        let ops = total_ops.load(Ordering::Relaxed).max(1) as f64;
        eprintln!(
            "    counters {name}/{threads}: ops={ops:.0} buffers_alloc/op={:.3} \
             buffers_backend/op={:.4} buffers_clean/op={:.4} (alloc={} backend={} clean={})",
            d.alloc as f64 / ops,
            d.backend as f64 / ops,
            d.clean as f64 / ops,
            d.alloc,
            d.backend,
            d.clean
        );
    }
}

fn benches(c: &mut Criterion) {
    let threads = thread_counts();
    let contended = (*threads.iter().max().unwrap()).max(2);

    // --- a. cached lookup + pin + unpin ------------------------------------
    let (cached, cached_pool) = make_data(opts(CACHED_NBUFFERS, 128, false), CACHED_BLOCKS);
    cached_pool
        .bgwriter
        .lru_maxpages
        .store(0, Ordering::Relaxed);
    warm(cached_pool, cached.nblocks);
    let cached_w = Workload::cached(cached_pool, cached.nblocks);
    {
        let mut g = c.benchmark_group("cached_lookup");
        for &t in &threads {
            bench_point(&mut g, "threads", t, cached_w);
        }
        g.finish();
    }

    // --- b. eviction-heavy reads, bgwriter off / on -------------------------
    let (evict, evict_pool) = make_data(opts(EVICT_NBUFFERS, 128, false), EVICT_BLOCKS);
    evict_pool.bgwriter.lru_maxpages.store(0, Ordering::Relaxed);
    let evict_w = Workload::evict(evict_pool, evict.nblocks, Op::Read);
    {
        let mut g = c.benchmark_group("evict_read");
        for &t in &threads {
            bench_point(&mut g, "bgwriter_off", t, evict_w);
        }
        {
            let _bg = BgWriter::start(evict_pool, BGWRITER_DELAY_MS);
            for &t in &threads {
                bench_point(&mut g, "bgwriter_on", t, evict_w);
            }
        }
        evict_pool.bgwriter.lru_maxpages.store(0, Ordering::Relaxed);
        g.finish();
    }

    // --- c. ablations under contention -------------------------------------
    let cached_p1 = pool_over(&cached, opts(CACHED_NBUFFERS, 1, false));
    warm(cached_p1, cached.nblocks);
    let cached_locked = pool_over(&cached, locked_lookup_opts(CACHED_NBUFFERS, 128));
    warm(cached_locked, cached.nblocks);
    let evict_p1 = pool_over(&evict, opts(EVICT_NBUFFERS, 1, false));
    let evict_global = pool_over(&evict, opts(EVICT_NBUFFERS, 128, true));
    let dirty_w = Workload::evict(evict_pool, evict.nblocks, Op::ReadDirty(10));
    {
        let mut g = c.benchmark_group("ablation");
        let t = contended;
        bench_point(&mut g, "cached_partitions_128", t, cached_w);
        bench_point(
            &mut g,
            "cached_partitions_1",
            t,
            Workload::cached(cached_p1, cached.nblocks),
        );
        bench_point(
            &mut g,
            "cached_locked_lookup",
            t,
            Workload::cached(cached_locked, cached.nblocks),
        );
        bench_point(&mut g, "evict_partitions_128", t, evict_w);
        let w = Workload::evict(evict_p1, evict.nblocks, Op::Read);
        bench_point(&mut g, "evict_partitions_1", t, w);
        let w = Workload::evict(evict_global, evict.nblocks, Op::Read);
        bench_point(&mut g, "evict_victim_lock_global", t, w);
        bench_point(&mut g, "evict_dirty_bgwriter_off", t, dirty_w);
        {
            let _bg = BgWriter::start(evict_pool, BGWRITER_DELAY_MS);
            bench_point(&mut g, "evict_dirty_bgwriter_on", t, dirty_w);
        }
        evict_pool.bgwriter.lru_maxpages.store(0, Ordering::Relaxed);
        evict_pool.flush_all().expect("flush_all");
        g.finish();
    }
}

criterion_group! {
    name = buffer;
    config = config();
    targets = benches
}
criterion_main!(buffer);
