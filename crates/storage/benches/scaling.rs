//! Standalone runner (no criterion) that prints compact markdown tables of
//! buffer-pool throughput by thread count, ready for docs/benchmarks.md:
//!
//! ```sh
//! cargo bench -p storage --bench scaling
//! BUF_BENCH_SECS=2 BUF_BENCH_REPS=5 BUF_BENCH_THREADS=1,2,4 cargo bench -p storage --bench scaling
//! ```
//!
//! Each point runs its threads for `BUF_BENCH_SECS` (default 0.5 s) and is
//! repeated `BUF_BENCH_REPS` times (default 3), the variants of one table
//! interleaved round by round so drift hits them alike; the tables show the
//! median. Workloads are those of `buffer.rs` (see there and `common/mod.rs`).

mod common;

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use storage::buffer::BufferPool;

use common::*;

struct Variant {
    label: String,
    pool: &'static BufferPool,
    nblocks: u32,
    op: Op,
    threads: usize,
    /// The background writer's lru_maxpages, or None for no writer.
    bgwriter: Option<u32>,
}

struct Measured {
    ops_s: f64,
    counters: Counters,
    /// ops over all repetitions, for per-op counters
    ops_total: f64,
}

fn env_f64(name: &str, default: f64) -> f64 {
    std::env::var(name)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// Measures every variant `reps` times, interleaved; returns medians.
fn measure(variants: &[Variant], dur: Duration, reps: usize) -> Vec<Measured> {
    let mut samples = vec![Vec::new(); variants.len()];
    let mut counters = vec![Counters::default(); variants.len()];
    let mut ops_total = vec![0f64; variants.len()];
    for rep in 0..reps {
        for (i, v) in variants.iter().enumerate() {
            let bg = v
                .bgwriter
                .map(|maxpages| BgWriter::start_with(v.pool, BGWRITER_DELAY_MS, maxpages));
            let before = Counters::read(v.pool);
            let t0 = Instant::now();
            let ops_s = run_for(v.pool, v.nblocks, v.op, v.threads, dur, rep as u64 + 1);
            let secs = t0.elapsed().as_secs_f64();
            let d = Counters::read(v.pool).delta(&before);
            drop(bg);
            v.pool.bgwriter.lru_maxpages.store(0, Ordering::Relaxed);
            if matches!(v.op, Op::ReadDirty(_)) {
                // Leave the shared files clean for the other pools.
                v.pool.flush_all().expect("flush_all");
            }
            samples[i].push(ops_s);
            ops_total[i] += ops_s * secs;
            let c = &mut counters[i];
            c.alloc += d.alloc;
            c.backend += d.backend;
            c.clean += d.clean;
            c.blks_read += d.blks_read;
            c.mapping_excl += d.mapping_excl;
            c.mapping_blocks += d.mapping_blocks;
            c.content_blocks += d.content_blocks;
            c.io_blocks += d.io_blocks;
        }
    }
    samples
        .iter_mut()
        .zip(counters)
        .zip(ops_total)
        .map(|((s, c), o)| Measured {
            ops_s: median(s),
            counters: c,
            ops_total: o,
        })
        .collect()
}

fn mops(x: f64) -> String {
    format!("{:.2}", x / 1e6)
}

fn main() {
    // `cargo bench` passes `--bench`; a filter argument is not supported.
    let dur = Duration::from_secs_f64(env_f64("BUF_BENCH_SECS", 0.5));
    let reps = env_f64("BUF_BENCH_REPS", 3.0).max(1.0) as usize;
    let threads = thread_counts();
    let contended = (*threads.iter().max().unwrap()).max(2);
    let cpus = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(0);
    let cpu_model = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|m| m.trim().to_string())
        })
        .unwrap_or_else(|| "?".into());

    println!("## Buffer pool micro-benchmarks (crates/storage/benches/scaling.rs)");
    println!();
    println!(
        "{cpus} CPUs ({cpu_model}); each point: {reps} runs of {:.1} s, median; \
         Mops/s = million operations per second over all threads.",
        dur.as_secs_f64()
    );
    println!();

    // --- a. cached lookups ----------------------------------------------------
    let (cached, cached_pool) = make_data(opts(CACHED_NBUFFERS, 128, false), CACHED_BLOCKS);
    cached_pool
        .bgwriter
        .lru_maxpages
        .store(0, Ordering::Relaxed);
    warm(cached_pool, cached.nblocks);
    if section_enabled("cached") {
        let (small, small_pool) =
            make_data(opts(SMALL_CACHED_NBUFFERS, 128, false), SMALL_CACHED_BLOCKS);
        small_pool.bgwriter.lru_maxpages.store(0, Ordering::Relaxed);
        warm(small_pool, small.nblocks);
        let configs = [
            (
                cached_pool,
                cached.nblocks,
                format!(
                    "{} buffers (128 MB, the default shared_buffers), {} resident blocks",
                    CACHED_NBUFFERS, CACHED_BLOCKS
                ),
            ),
            (
                small_pool,
                small.nblocks,
                format!(
                    "{} buffers (32 MB: every descriptor fits one core's L2), {} resident blocks",
                    SMALL_CACHED_NBUFFERS, SMALL_CACHED_BLOCKS
                ),
            ),
        ];
        let mut variants = Vec::new();
        for (pool, nblocks, _) in &configs {
            for &t in &threads {
                variants.push(Variant {
                    label: format!("{t}"),
                    pool,
                    nblocks: *nblocks,
                    op: Op::Pin,
                    threads: t,
                    bgwriter: None,
                });
            }
        }
        let m = measure(&variants, dur, reps);
        println!("### Cached lookup + pin + unpin (random blocks)");
        println!();
        println!("| pool | threads | Mops/s | per thread | vs 1 thread |");
        println!("| --- | ---: | ---: | ---: | ---: |");
        for (c, (_, _, name)) in configs.iter().enumerate() {
            let rows = c * threads.len()..(c + 1) * threads.len();
            let base = m[rows.start].ops_s;
            for i in rows {
                println!(
                    "| {name} | {} | {} | {} | {:.2} |",
                    variants[i].label,
                    mops(m[i].ops_s),
                    mops(m[i].ops_s / variants[i].threads as f64),
                    m[i].ops_s / base
                );
            }
        }
        println!();
    }

    // --- b. eviction-heavy reads ---------------------------------------------
    let (evict, evict_pool) = make_data(opts(EVICT_NBUFFERS, 128, false), EVICT_BLOCKS);
    evict_pool.bgwriter.lru_maxpages.store(0, Ordering::Relaxed);
    if section_enabled("evict") {
        eviction_table(evict_pool, evict.nblocks, &threads, dur, reps);
    }

    // --- c. ablations -----------------------------------------------------------
    if section_enabled("ablation") {
        let pools = AblationPools {
            cached: (cached_pool, cached.nblocks),
            cached_locked: warmed(pool_over(&cached, locked_lookup_opts(CACHED_NBUFFERS, 128))),
            cached_locked_p1: warmed(pool_over(&cached, locked_lookup_opts(CACHED_NBUFFERS, 1))),
            cached_p1: warmed(pool_over(&cached, opts(CACHED_NBUFFERS, 1, false))),
            evict: (evict_pool, evict.nblocks),
            evict_p1: pool_over(&evict, opts(EVICT_NBUFFERS, 1, false)),
            evict_global: pool_over(&evict, opts(EVICT_NBUFFERS, 128, true)),
            replace: pool_over(&evict, opts(EVICT_NBUFFERS, 128, false)),
            replace_p1: pool_over(&evict, opts(EVICT_NBUFFERS, 1, false)),
            replace_global: pool_over(&evict, opts(EVICT_NBUFFERS, 128, true)),
        };
        ablations(&pools, contended, cpus, dur, reps);
    }
}

fn warmed(pool: &'static BufferPool) -> &'static BufferPool {
    warm(pool, CACHED_BLOCKS);
    pool
}

fn eviction_table(
    pool: &'static BufferPool,
    nblocks: u32,
    threads: &[usize],
    dur: Duration,
    reps: usize,
) {
    let mut variants = Vec::new();
    for (op, opname) in [
        (Op::Read, "read"),
        (Op::ReadDirty(10), "read, 1 in 10 dirtied"),
    ] {
        for bg in [false, true] {
            for &t in threads {
                variants.push(Variant {
                    label: format!("{opname} | {} | {t}", if bg { "on" } else { "off" }),
                    pool,
                    nblocks,
                    op,
                    threads: t,
                    bgwriter: bg.then_some(BGWRITER_MAXPAGES),
                });
            }
        }
    }
    let m = measure(&variants, dur, reps);
    println!(
        "### Eviction-heavy random reads ({} buffers, {} blocks: working set 4x the pool)",
        EVICT_NBUFFERS, EVICT_BLOCKS
    );
    println!();
    println!(
        "bgwriter on: delay {BGWRITER_DELAY_MS} ms, lru_maxpages 100; off: lru_maxpages 0. \
         Counters are per operation over all runs."
    );
    println!();
    println!(
        "| workload | bgwriter | threads | Mops/s | vs 1 thread | buffers_alloc/op | \
         buffers_backend/op | buffers_clean/op |"
    );
    println!("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |");
    let mut one_thread = 0.0;
    for (v, r) in variants.iter().zip(&m) {
        if v.threads == threads[0] {
            one_thread = r.ops_s;
        }
        let ops = r.ops_total.max(1.0);
        println!(
            "| {} | {} | {:.2} | {:.3} | {:.4} | {:.4} |",
            v.label,
            mops(r.ops_s),
            r.ops_s / one_thread,
            r.counters.alloc as f64 / ops,
            r.counters.backend as f64 / ops,
            r.counters.clean as f64 / ops,
        );
    }
    println!();
}

struct AblationPools {
    cached: (&'static BufferPool, u32),
    cached_locked: &'static BufferPool,
    cached_locked_p1: &'static BufferPool,
    cached_p1: &'static BufferPool,
    evict: (&'static BufferPool, u32),
    evict_p1: &'static BufferPool,
    evict_global: &'static BufferPool,
    replace: &'static BufferPool,
    replace_p1: &'static BufferPool,
    replace_global: &'static BufferPool,
}

/// Each mechanism against the same pool without it, at `t` threads; the
/// bgwriter also with the backends leaving it a core (`cpus - 1` threads).
fn ablations(p: &AblationPools, t: usize, cpus: usize, dur: Duration, reps: usize) {
    let (cached, cached_n) = p.cached;
    let (evict, evict_n) = p.evict;
    let spare = cpus.saturating_sub(1).max(1);
    let v = |label: &str, pool, nblocks, op, threads, bgwriter: Option<u32>| Variant {
        label: label.to_string(),
        pool,
        nblocks,
        op,
        threads,
        bgwriter,
    };
    let dirty = Op::ReadDirty(10);
    let all_dirty = Op::ReadDirty(1);
    let variants = vec![
        v("cached", cached, cached_n, Op::Pin, t, None),
        v("cached locked", p.cached_locked, cached_n, Op::Pin, t, None),
        v(
            "cached locked p1",
            p.cached_locked_p1,
            cached_n,
            Op::Pin,
            t,
            None,
        ),
        v("cached p1", p.cached_p1, cached_n, Op::Pin, t, None),
        v("evict", evict, evict_n, Op::Read, t, None),
        v("evict p1", p.evict_p1, evict_n, Op::Read, t, None),
        v("evict global", p.evict_global, evict_n, Op::Read, t, None),
        v("replace", p.replace, evict_n, Op::Replace, t, None),
        v("replace p1", p.replace_p1, evict_n, Op::Replace, t, None),
        v(
            "replace global",
            p.replace_global,
            evict_n,
            Op::Replace,
            t,
            None,
        ),
        v(
            "evict bgwriter",
            evict,
            evict_n,
            Op::Read,
            t,
            Some(BGWRITER_MAXPAGES),
        ),
        v("dirty off", evict, evict_n, dirty, t, None),
        v(
            "dirty on",
            evict,
            evict_n,
            dirty,
            t,
            Some(BGWRITER_MAXPAGES),
        ),
        v("all dirty off", evict, evict_n, all_dirty, spare, None),
        v(
            "all dirty on",
            evict,
            evict_n,
            all_dirty,
            spare,
            Some(BGWRITER_MAXPAGES_HEAVY),
        ),
    ];
    let m = measure(&variants, dur, reps);
    let ops = |i: usize| m[i].ops_s;
    println!("### Ablations (ratio = default design / ablated; > 1 means the design helps)");
    println!();
    println!(
        "The replacement rows read with ReadMode::Zero: a miss zero-fills the frame \
         instead of reading it, which leaves the buffer manager's own work."
    );
    println!();
    println!("| ablation | workload | threads | design Mops/s | ablated Mops/s | ratio | BufferMapping blocks (design / ablated) |");
    println!("| --- | --- | ---: | ---: | ---: | ---: | ---: |");
    let row = |name: &str, wl: &str, d: usize, a: usize| {
        println!(
            "| {name} | {wl} | {} | {} | {} | {:.2} | {} / {} |",
            variants[d].threads,
            mops(ops(d)),
            mops(ops(a)),
            ops(d) / ops(a),
            m[d].counters.mapping_blocks,
            m[a].counters.mapping_blocks
        );
    };
    row(
        "lookup without lock vs partition lock shared (128 partitions)",
        "cached lookup",
        0,
        1,
    );
    row(
        "mapping partitions 128 vs 1, lookups locked",
        "cached lookup",
        1,
        2,
    );
    row(
        "mapping partitions 128 vs 1, lookups lock-free",
        "cached lookup",
        0,
        3,
    );
    row("mapping partitions 128 vs 1", "eviction reads", 4, 5);
    row("mapping partitions 128 vs 1", "replacement, no I/O", 7, 8);
    row(
        "victim selection: clock (atomic hand) vs global lock",
        "eviction reads",
        4,
        6,
    );
    row(
        "victim selection: clock (atomic hand) vs global lock",
        "replacement, no I/O",
        7,
        9,
    );
    row("bgwriter on vs off", "eviction reads", 10, 4);
    row(
        "bgwriter on vs off",
        "eviction reads, 1 in 10 dirtied",
        12,
        11,
    );
    row(
        "bgwriter on vs off",
        "eviction reads, every page dirtied",
        14,
        13,
    );
    println!();
    for (i, name) in [
        (11, "1 in 10 dirtied, bgwriter off"),
        (12, "1 in 10 dirtied, bgwriter on"),
        (13, "every page dirtied, bgwriter off"),
        (14, "every page dirtied, bgwriter on"),
    ] {
        let c = &m[i].counters;
        let o = m[i].ops_total.max(1.0);
        println!(
            "- {name} ({} threads): buffers_backend/op {:.4}, buffers_clean/op {:.4}",
            variants[i].threads,
            c.backend as f64 / o,
            c.clean as f64 / o
        );
    }
}
