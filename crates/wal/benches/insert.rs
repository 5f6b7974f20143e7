//! WAL insertion from 1..N threads with 1 insertion slot and with 8: records
//! per second (100-byte records, no flushes; fsync off). Run with
//! `cargo bench -p wal --bench insert`; `WAL_BENCH_THREADS=1,2,4,8,16` and
//! `WAL_BENCH_RECORDS` (per thread) change the sweep.

use std::time::Instant;

use wal::settings::WalReloadable;
use wal::{RecordBuilder, Wal, WalSettings};

fn open(slots: usize) -> (&'static Wal, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("global")).unwrap();
    let mut s = WalSettings::new(
        16 << 20,
        WalReloadable {
            fsync: false,
            ..Default::default()
        },
    );
    s.insert_locks = slots;
    let wal = Wal::open(dir.path(), s).unwrap();
    wal.startup(dir.path(), &[]).unwrap();
    (wal, dir)
}

fn main() {
    let threads: Vec<usize> = std::env::var("WAL_BENCH_THREADS")
        .unwrap_or_else(|_| "1,2,4,8,16".into())
        .split(',')
        .filter_map(|t| t.trim().parse().ok())
        .collect();
    let per_thread: u64 = std::env::var("WAL_BENCH_RECORDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200_000);
    println!("| threads | 1 slot (records/s) | 8 slots (records/s) | 8 / 1 |");
    println!("| ---: | ---: | ---: | ---: |");
    for &n in &threads {
        let mut rates = Vec::new();
        for slots in [1, 8] {
            let (wal, _dir) = open(slots);
            let start = Instant::now();
            std::thread::scope(|s| {
                for t in 0..n {
                    s.spawn(move || {
                        let body = vec![t as u8; 100];
                        for _ in 0..per_thread {
                            let mut rec = RecordBuilder::new(wal::rmgr::HEAP, 0, 1);
                            rec.main_data().extend_from_slice(&body);
                            wal.insert(&rec).unwrap();
                        }
                    });
                }
            });
            let secs = start.elapsed().as_secs_f64();
            rates.push((n as u64 * per_thread) as f64 / secs);
        }
        println!(
            "| {n} | {:.0} | {:.0} | {:.2} |",
            rates[0],
            rates[1],
            rates[1] / rates[0]
        );
    }
}
