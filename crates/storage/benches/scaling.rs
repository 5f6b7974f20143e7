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
    bgwriter: bool,
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
                .then(|| BgWriter::start(v.pool, BGWRITER_DELAY_MS));
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
    let cached_p1 = pool_over(&cached, opts(CACHED_NBUFFERS, 1, false));
    warm(cached_p1, cached.nblocks);
    let variants: Vec<Variant> = threads
        .iter()
        .map(|&t| Variant {
            label: format!("{t}"),
            pool: cached_pool,
            nblocks: cached.nblocks,
            op: Op::Pin,
            threads: t,
            bgwriter: false,
        })
        .collect();
    let m = measure(&variants, dur, reps);
    println!(
        "### Cached lookup + pin + unpin ({} buffers, {} resident blocks, random)",
        CACHED_NBUFFERS, CACHED_BLOCKS
    );
    println!();
    println!("| threads | Mops/s | per thread | vs 1 thread |");
    println!("| ---: | ---: | ---: | ---: |");
    let base = m[0].ops_s;
    for (v, r) in variants.iter().zip(&m) {
        println!(
            "| {} | {} | {} | {:.2} |",
            v.label,
            mops(r.ops_s),
            mops(r.ops_s / v.threads as f64),
            r.ops_s / base
        );
    }
    println!();

    // --- b. eviction-heavy reads ---------------------------------------------
    let (evict, evict_pool) = make_data(opts(EVICT_NBUFFERS, 128, false), EVICT_BLOCKS);
    evict_pool.bgwriter.lru_maxpages.store(0, Ordering::Relaxed);
    let mut variants = Vec::new();
    for (op, opname) in [
        (Op::Read, "read"),
        (Op::ReadDirty(10), "read, 1 in 10 dirtied"),
    ] {
        for bg in [false, true] {
            for &t in &threads {
                variants.push(Variant {
                    label: format!("{opname} | {} | {t}", if bg { "on" } else { "off" }),
                    pool: evict_pool,
                    nblocks: evict.nblocks,
                    op,
                    threads: t,
                    bgwriter: bg,
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

    // --- c. ablations -----------------------------------------------------------
    let evict_p1 = pool_over(&evict, opts(EVICT_NBUFFERS, 1, false));
    let evict_global = pool_over(&evict, opts(EVICT_NBUFFERS, 128, true));
    let t = contended;
    let v = |label: &str, pool, nblocks, op, bgwriter| Variant {
        label: label.to_string(),
        pool,
        nblocks,
        op,
        threads: t,
        bgwriter,
    };
    let dirty = Op::ReadDirty(10);
    let variants = vec![
        v(
            "cached, 128 partitions",
            cached_pool,
            cached.nblocks,
            Op::Pin,
            false,
        ),
        v(
            "cached, 1 partition",
            cached_p1,
            cached.nblocks,
            Op::Pin,
            false,
        ),
        v(
            "evict, 128 partitions",
            evict_pool,
            evict.nblocks,
            Op::Read,
            false,
        ),
        v(
            "evict, 1 partition",
            evict_p1,
            evict.nblocks,
            Op::Read,
            false,
        ),
        v(
            "evict, global victim lock",
            evict_global,
            evict.nblocks,
            Op::Read,
            false,
        ),
        v(
            "evict, bgwriter on",
            evict_pool,
            evict.nblocks,
            Op::Read,
            true,
        ),
        v(
            "evict 1/10 dirty, bgwriter off",
            evict_pool,
            evict.nblocks,
            dirty,
            false,
        ),
        v(
            "evict 1/10 dirty, bgwriter on",
            evict_pool,
            evict.nblocks,
            dirty,
            true,
        ),
    ];
    let m = measure(&variants, dur, reps);
    let ops = |i: usize| m[i].ops_s;
    println!("### Ablations at {t} threads (ratio = default design / ablated; > 1 means the design helps)");
    println!();
    println!("| ablation | workload | design Mops/s | ablated Mops/s | ratio | BufferMapping blocks (design / ablated) |");
    println!("| --- | --- | ---: | ---: | ---: | ---: |");
    let row = |name: &str, wl: &str, d: usize, a: usize| {
        println!(
            "| {name} | {wl} | {} | {} | {:.2} | {} / {} |",
            mops(ops(d)),
            mops(ops(a)),
            ops(d) / ops(a),
            m[d].counters.mapping_blocks,
            m[a].counters.mapping_blocks
        );
    };
    row("mapping partitions 128 vs 1", "cached lookup", 0, 1);
    row("mapping partitions 128 vs 1", "eviction reads", 2, 3);
    row(
        "victim selection: clock (atomic hand) vs global lock",
        "eviction reads",
        2,
        4,
    );
    row("bgwriter on vs off", "eviction reads", 5, 2);
    row(
        "bgwriter on vs off",
        "eviction reads, 1 in 10 dirtied",
        7,
        6,
    );
    println!();
    for (i, name) in [(6, "dirty, bgwriter off"), (7, "dirty, bgwriter on")] {
        let c = &m[i].counters;
        let o = m[i].ops_total.max(1.0);
        println!(
            "- {name}: buffers_backend/op {:.4}, buffers_clean/op {:.4}",
            c.backend as f64 / o,
            c.clean as f64 / o
        );
    }
}
