//! Rough timings (ignored; run with --ignored --nocapture).

use std::sync::Arc;
use std::time::Instant;

use super::support::*;
use crate::btree::{self, IndexScan, ScanBound, ScanRange};

#[test]
#[ignore]
fn point_lookups_and_inserts() {
    let e = env(16384);
    let desc = int_desc();
    btree::create_empty(e.pool, e.tm.wal(), REL).unwrap();
    const N: i32 = 1_000_000;
    let t = Instant::now();
    let mut it = (0..N).map(|i| Ok((int(i), tid(i as u64))));
    btree::build(e.pool, e.tm.wal(), REL, &desc, &mut it).unwrap();
    eprintln!("build {N}: {:?}", t.elapsed());
    let d = Arc::new(desc.clone());
    let mut rng = Rng(1);
    let t = Instant::now();
    let q: usize = std::env::var("BTREE_PERF_Q")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000_000);
    for _ in 0..q {
        let k = rng.below(N as u64) as i32;
        let range = ScanRange {
            lower: Some(ScanBound {
                prefix: int(k),
                inclusive: true,
            }),
            upper: Some(ScanBound {
                prefix: int(k),
                inclusive: true,
            }),
            backward: false,
        };
        let mut s = IndexScan::new(e.pool, REL, d.clone(), range, false).unwrap();
        assert!(s.next().unwrap().is_some());
        assert!(s.next().unwrap().is_none());
    }
    eprintln!(
        "{q} point scans: {:?} ({:?} each)",
        t.elapsed(),
        t.elapsed() / q as u32
    );
    let t = Instant::now();
    for i in 0..200_000u64 {
        let k = ((i * 7919) % N as u64) as i32;
        btree::insert(e.pool, &e.tm, REL, &desc, &int(k), tid(2_000_000 + i), None).unwrap();
    }
    eprintln!("200k random inserts: {:?}", t.elapsed());
}
