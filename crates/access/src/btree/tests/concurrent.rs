//! Inserters and scanners at once: no entry present before the inserts
//! began is ever missed, scans stay ordered, and the tree checks after.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use super::support::*;
use crate::btree::{self, ScanBound, ScanRange};

#[test]
fn four_inserters_while_scanners_run() {
    let e = env(96);
    let desc = text_desc();
    btree::create_empty(e.pool, e.tm.wal(), REL).unwrap();
    // Even keys first: every scan must see all of them.
    const N: u64 = 4000;
    for k in (0..N).step_by(2) {
        btree::insert(e.pool, &e.tm, REL, &desc, &wide(k), tid(k), None).unwrap();
    }
    let done = AtomicBool::new(false);
    let scans = AtomicUsize::new(0);
    let (pool, tm, desc) = (e.pool, &e.tm, &desc);
    std::thread::scope(|s| {
        let inserters: Vec<_> = (0..4u64)
            .map(|t| {
                s.spawn(move || {
                    // Thread t inserts the odd keys k with k % 8 == 2t + 1,
                    // in a scattered order.
                    let mine: Vec<u64> = (0..N).filter(|k| k % 8 == 2 * t + 1).collect();
                    let len = mine.len() as u64;
                    for i in 0..len {
                        let k = mine[((i * 389) % len) as usize];
                        btree::insert(pool, tm, REL, desc, &wide(k), tid(k), None).unwrap();
                    }
                })
            })
            .collect();
        for backward in [false, true] {
            let (done, scans) = (&done, &scans);
            s.spawn(move || {
                // At least one pass, however quickly the inserters finish.
                loop {
                    let last = done.load(Ordering::Relaxed);
                    let range = ScanRange {
                        backward,
                        ..Default::default()
                    };
                    let all = scan_all(pool, desc, range);
                    let keys: Vec<&str> = all.iter().map(|(_, k)| k[0].as_str().unwrap()).collect();
                    for w in keys.windows(2) {
                        assert!(
                            if backward { w[0] > w[1] } else { w[0] < w[1] },
                            "scan out of order"
                        );
                    }
                    let evens = keys
                        .iter()
                        .filter(|k| k.parse::<u64>().unwrap() % 2 == 0)
                        .count();
                    assert_eq!(evens as u64, N / 2, "a scan missed entries");
                    // A bounded scan and probes of old keys.
                    let r = ScanRange {
                        lower: Some(ScanBound {
                            prefix: wide(1000),
                            inclusive: true,
                        }),
                        upper: Some(ScanBound {
                            prefix: wide(1100),
                            inclusive: false,
                        }),
                        backward,
                    };
                    let part = scan_all(pool, desc, r);
                    let evens = part
                        .iter()
                        .filter(|(_, k)| k[0].as_str().unwrap().parse::<u64>().unwrap() % 2 == 0)
                        .count();
                    assert_eq!(evens, 50);
                    for k in [0, 1998, 3998] {
                        assert_eq!(
                            btree::find_equal(pool, REL, desc, &wide(k)).unwrap(),
                            vec![tid(k)]
                        );
                    }
                    scans.fetch_add(1, Ordering::Relaxed);
                    if last {
                        break;
                    }
                }
            });
        }
        for h in inserters {
            h.join().unwrap();
        }
        done.store(true, Ordering::Relaxed);
    });
    assert!(scans.load(Ordering::Relaxed) > 0);
    btree::check(e.pool, REL, desc, true).unwrap();
    let all = scan_all(e.pool, desc, ScanRange::default());
    assert_eq!(all.len() as u64, N);
    for (i, (t, k)) in all.iter().enumerate() {
        assert_eq!(*t, tid(i as u64));
        assert_eq!(k[0], wide(i as u64)[0]);
    }
}

#[test]
fn vacuum_misses_no_entry_moved_by_concurrent_splits() {
    for round in 0..3u64 {
        let e = env(96);
        let desc = text_desc();
        btree::create_empty(e.pool, e.tm.wal(), REL).unwrap();
        // Old entries, every other one dead; new ones split their pages
        // while VACUUM runs.
        const OLD: u64 = 3000;
        for k in 0..OLD {
            btree::insert(e.pool, &e.tm, REL, &desc, &wide(k * 4), tid(k), None).unwrap();
        }
        let dead = |t: crate::heap::Tid| {
            let n = t.block as u64 * 100 + t.offset as u64 - 1;
            n < OLD && n % 2 == round % 2
        };
        let (pool, tm, desc_ref) = (e.pool, &e.tm, &desc);
        let removed = std::thread::scope(|s| {
            for t in 0..2u64 {
                s.spawn(move || {
                    for i in 0..1500u64 {
                        let k = (i * 2 + t) * 4 + 1 + round;
                        btree::insert(
                            pool,
                            tm,
                            REL,
                            desc_ref,
                            &wide(k % (OLD * 4)),
                            tid(100_000 + t * 10_000 + i),
                            None,
                        )
                        .unwrap();
                    }
                });
            }
            let v = s.spawn(move || btree::bulk_delete(pool, tm, REL, desc_ref, &dead).unwrap());
            v.join().unwrap().removed
        });
        assert_eq!(removed, OLD / 2);
        btree::check(e.pool, REL, &desc, true).unwrap();
        let all = scan_all(e.pool, &desc, ScanRange::default());
        assert!(
            all.iter().all(|(t, _)| !dead(*t)),
            "a dead entry survived VACUUM"
        );
        assert_eq!(all.len() as u64, OLD / 2 + 3000);
    }
}
