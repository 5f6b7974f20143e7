//! Page deletion and reuse (README rule 27a): VACUUM unlinks emptied
//! leaves, scans and inserts pass deleted pages, splits reuse them once no
//! one can reach them, and all of it survives a crash.

use std::collections::{BTreeSet, HashSet};

use storage::ForkNumber;

use super::support::*;
use crate::btree::{self, ScanBound, ScanRange};
use crate::heap::Tid;

fn nblocks(e: &Env) -> u32 {
    e.pool.smgr().nblocks(REL, ForkNumber::Main).unwrap()
}

fn key_no(v: &types::Value) -> u64 {
    match v {
        types::Value::Text(s) => s.parse().unwrap(),
        _ => unreachable!(),
    }
}

/// Keys 0..n (wide: about 30 a leaf), tid n for key n.
fn fill(e: &Env, keys: impl Iterator<Item = u64>) {
    let desc = text_desc();
    for k in keys {
        btree::insert(e.pool, &e.tm, REL, &desc, &wide(k), tid(k), None).unwrap();
    }
}

fn live_keys(e: &Env, range: ScanRange) -> Vec<u64> {
    scan_all(e.pool, &text_desc(), range)
        .iter()
        .map(|(_, k)| key_no(&k[0]))
        .collect()
}

fn doomed_by_ranges(k: u64) -> bool {
    // 95% gone, in runs: the first 95 of every 100 keys.
    k % 100 < 95
}

#[test]
fn vacuum_unlinks_empty_leaves_and_scans_pass_them() {
    let e = env(512);
    let desc = text_desc();
    btree::create_empty(e.pool, e.tm.wal(), REL).unwrap();
    const N: u64 = 6000;
    fill(&e, 0..N);
    let pages_before = nblocks(&e);
    let stats = btree::bulk_delete(e.pool, &e.tm, REL, &desc, &|t: Tid| {
        doomed_by_ranges(t.block as u64 * 100 + t.offset as u64 - 1)
    })
    .unwrap();
    assert_eq!(stats.removed, N * 95 / 100);
    assert!(
        stats.pages_newly_deleted as u64 > pages_before as u64 / 2,
        "{stats:?} of {pages_before} pages"
    );
    assert_eq!(stats.pages_deleted, stats.pages_newly_deleted);
    btree::check(e.pool, REL, &desc, false).unwrap();
    btree::check(e.pool, REL, &desc, true).unwrap();

    let model: BTreeSet<u64> = (0..N).filter(|&k| !doomed_by_ranges(k)).collect();
    assert_eq!(
        live_keys(&e, ScanRange::default()),
        model.iter().copied().collect::<Vec<_>>()
    );
    let backward = ScanRange {
        backward: true,
        ..Default::default()
    };
    assert_eq!(
        live_keys(&e, backward),
        model.iter().rev().copied().collect::<Vec<_>>()
    );
    let mut rng = Rng(17);
    for _ in 0..200 {
        let (a, b) = (rng.below(N + 10), rng.below(N + 10));
        let (lo, hi) = (a.min(b), a.max(b));
        let backward = rng.below(2) == 0;
        let range = ScanRange {
            lower: Some(ScanBound {
                prefix: wide(lo),
                inclusive: true,
            }),
            upper: Some(ScanBound {
                prefix: wide(hi),
                inclusive: false,
            }),
            backward,
        };
        let mut want: Vec<u64> = model.range(lo..hi).copied().collect();
        if backward {
            want.reverse();
        }
        assert_eq!(
            live_keys(&e, range),
            want,
            "[{lo}, {hi}) backward={backward}"
        );
    }
    for k in [0, 95, 96, 1234, 5999] {
        let want: Vec<Tid> = model.contains(&k).then(|| tid(k)).into_iter().collect();
        assert_eq!(
            btree::find_equal(e.pool, REL, &desc, &wide(k)).unwrap(),
            want
        );
    }

    // A second pass finds the deleted pages, reusable at once (the first
    // pass used up an xid), and no more.
    let again = btree::bulk_delete(e.pool, &e.tm, REL, &desc, &|_| false).unwrap();
    assert_eq!(again.pages_newly_deleted, 0);
    assert_eq!(again.pages_deleted, stats.pages_deleted);
    assert_eq!(again.pages_free, stats.pages_deleted);
}

#[test]
fn splits_reuse_deleted_pages_once_no_one_can_reach_them() {
    let e = env(512);
    let desc = text_desc();
    btree::create_empty(e.pool, e.tm.wal(), REL).unwrap();
    const N: u64 = 6000;
    fill(&e, 0..N);
    // A transaction older than the deletions holds off reuse.
    let old = e.tm.begin().unwrap();
    let dead: HashSet<u64> = (0..N).filter(|&k| doomed_by_ranges(k)).collect();
    let stats = btree::bulk_delete(e.pool, &e.tm, REL, &desc, &|t: Tid| {
        dead.contains(&(t.block as u64 * 100 + t.offset as u64 - 1))
    })
    .unwrap();
    assert!(stats.pages_newly_deleted > 50, "{stats:?}");
    let size = nblocks(&e);
    // Re-insert the dead keys with new tids, first while `old` runs: the
    // survivors fill up and split, into new blocks only.
    let mut redo: Vec<u64> = dead.iter().copied().collect();
    redo.sort_unstable_by_key(|k| k.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    let (first, rest) = redo.split_at(3000);
    for &k in first {
        btree::insert(
            e.pool,
            &e.tm,
            REL,
            &desc,
            &wide(k),
            tid(k + 1_000_000),
            None,
        )
        .unwrap();
    }
    let grown = nblocks(&e);
    assert!(grown > size, "splits must have happened");
    let count = btree::bulk_delete(e.pool, &e.tm, REL, &desc, &|_| false).unwrap();
    assert_eq!(
        (count.pages_deleted, count.pages_free),
        (stats.pages_newly_deleted, 0),
        "no page may be reused while `old` runs"
    );
    e.tm.commit(old, txn::SyncCommit::Off).unwrap();
    // Splits dropped the pages they could not use yet from the map; the
    // next pass offers them again.
    let offered = btree::bulk_delete(e.pool, &e.tm, REL, &desc, &|_| false).unwrap();
    assert_eq!(offered.pages_free, stats.pages_newly_deleted);
    for &k in rest {
        btree::insert(
            e.pool,
            &e.tm,
            REL,
            &desc,
            &wide(k),
            tid(k + 1_000_000),
            None,
        )
        .unwrap();
    }
    let after = nblocks(&e);
    let count = btree::bulk_delete(e.pool, &e.tm, REL, &desc, &|_| false).unwrap();
    let reused = stats.pages_newly_deleted - count.pages_deleted;
    assert!(
        reused * 4 > stats.pages_newly_deleted * 3,
        "{reused} of {} deleted pages reused; {grown} -> {after} blocks",
        stats.pages_newly_deleted
    );
    btree::check(e.pool, REL, &desc, true).unwrap();
    let all = scan_all(e.pool, &desc, ScanRange::default());
    assert_eq!(all.len() as u64, N);
    for (i, (t, k)) in all.iter().enumerate() {
        assert_eq!(key_no(&k[0]), i as u64);
        let want = if dead.contains(&(i as u64)) {
            tid(i as u64 + 1_000_000)
        } else {
            tid(i as u64)
        };
        assert_eq!(*t, want);
    }
}

#[test]
fn scans_and_inserts_during_page_deletion_see_every_live_entry_once() {
    for round in 0..3u64 {
        let e = env(256);
        let desc = text_desc();
        btree::create_empty(e.pool, e.tm.wal(), REL).unwrap();
        const N: u64 = 8000;
        // Even keys; the odd ones come from inserters during VACUUM.
        for k in 0..N {
            btree::insert(e.pool, &e.tm, REL, &desc, &wide(k * 2), tid(k), None).unwrap();
        }
        let dead = move |t: Tid| {
            let n = t.block as u64 * 100 + t.offset as u64 - 1;
            n < N && (n + round * 7) % 100 < 90
        };
        let live: Vec<u64> = (0..N).filter(|&n| !dead(tid(n))).map(|n| n * 2).collect();
        let live_set: HashSet<u64> = live.iter().copied().collect();
        let (pool, tm, desc_ref, live_ref, set_ref) = (e.pool, &e.tm, &desc, &live, &live_set);
        let stop = std::sync::atomic::AtomicBool::new(false);
        let stop_ref = &stop;
        let stats = std::thread::scope(|s| {
            // Scanners: every old live key exactly once, in order, either way.
            for backward in [false, true] {
                s.spawn(move || {
                    let mut scans = 0;
                    while !stop_ref.load(std::sync::atomic::Ordering::Relaxed) || scans < 2 {
                        scans += 1;
                        let range = ScanRange {
                            backward,
                            ..Default::default()
                        };
                        let got: Vec<u64> = scan_all(pool, desc_ref, range)
                            .iter()
                            .map(|(_, k)| key_no(&k[0]))
                            .filter(|k| k % 2 == 0 && *k < N * 2)
                            .collect();
                        let mut old: Vec<u64> = got
                            .iter()
                            .copied()
                            .filter(|k| set_ref.contains(k))
                            .collect();
                        if backward {
                            old.reverse();
                        }
                        assert_eq!(&old, live_ref, "round {round} backward={backward}");
                        let mut sorted = got.clone();
                        if backward {
                            sorted.reverse();
                        }
                        assert!(sorted.windows(2).all(|w| w[0] < w[1]), "order or duplicate");
                    }
                });
            }
            // An inserter into the key space being emptied.
            s.spawn(move || {
                for i in 0..1500u64 {
                    let k = ((i * 7919) % (N / 4)) * 2 + 1;
                    btree::insert(pool, tm, REL, desc_ref, &wide(k), tid(500_000 + i), None)
                        .unwrap();
                }
            });
            let v = s.spawn(move || {
                let r = btree::bulk_delete(pool, tm, REL, desc_ref, &dead).unwrap();
                stop_ref.store(true, std::sync::atomic::Ordering::Relaxed);
                r
            });
            v.join().unwrap()
        });
        assert!(stats.pages_newly_deleted > 0, "{stats:?}");
        btree::check(e.pool, REL, &desc, true).unwrap();
        let all = scan_all(e.pool, &desc, ScanRange::default());
        assert!(all.iter().all(|(t, _)| !dead(*t)));
        assert_eq!(all.len(), live.len() + 1500);
    }
}

#[test]
fn deletions_and_reuse_replay_after_a_crash() {
    let e = env(4096);
    let desc = text_desc();
    btree::create_empty(e.pool, e.tm.wal(), REL).unwrap();
    const N: u64 = 5000;
    fill(&e, 0..N);
    // A checkpoint first, so the deletion's pages are logged with images.
    let wal = e.tm.wal();
    let redo = wal.begin_checkpoint();
    e.pool.flush_all().unwrap();
    e.tm.flush().unwrap();
    wal.finish_checkpoint(e.dir.path(), redo, e.tm.next_xid(), false)
        .unwrap();
    let stats = btree::bulk_delete(e.pool, &e.tm, REL, &desc, &|t: Tid| {
        doomed_by_ranges(t.block as u64 * 100 + t.offset as u64 - 1)
    })
    .unwrap();
    assert!(stats.pages_newly_deleted > 50);
    // Some pages reused by splits, which log them whole.
    for k in 0..400u64 {
        btree::insert(
            e.pool,
            &e.tm,
            REL,
            &desc,
            &wide(k * 12 + 1),
            tid(2_000_000 + k),
            None,
        )
        .unwrap();
    }
    wal.flush_all().unwrap();
    let before = scan_all(e.pool, &desc, ScanRange::default());
    let size = nblocks(&e);
    btree::check(e.pool, REL, &desc, true).unwrap();

    let pool2 = super::redo::replay(e.dir.path(), 4096);
    btree::check(pool2, REL, &desc, true).unwrap();
    assert_eq!(scan_all(pool2, &desc, ScanRange::default()), before);
    assert_eq!(pool2.smgr().nblocks(REL, ForkNumber::Main).unwrap(), size);
    // The replayed tree takes more inserts and another VACUUM.
    for k in 0..1000u64 {
        btree::insert(
            pool2,
            &e.tm,
            REL,
            &desc,
            &wide(k * 5 + 3),
            tid(3_000_000 + k),
            None,
        )
        .unwrap();
    }
    btree::bulk_delete(pool2, &e.tm, REL, &desc, &|t: Tid| t.block >= 30_000).unwrap();
    btree::check(pool2, REL, &desc, true).unwrap();
    let after = scan_all(pool2, &desc, ScanRange::default());
    assert_eq!(after.len(), before.len());
}

#[test]
fn unique_inserts_during_page_deletion_admit_each_key_once() {
    use crate::btree::{InsertOutcome, KeyHolder, UniqueCheck};
    use std::sync::atomic::{AtomicU64, Ordering};
    for round in 0..2u64 {
        let e = env(256);
        let desc = text_desc();
        btree::create_empty(e.pool, e.tm.wal(), REL).unwrap();
        const N: u64 = 6000;
        fill(&e, 0..N);
        let old_dead = move |t: Tid| {
            let n = t.block as u64 * 100 + t.offset as u64 - 1;
            n < N && doomed_by_ranges(n)
        };
        // Two inserters race for each doomed key (new tids); an old dead
        // entry is no conflict, anything else is.
        let inserted = AtomicU64::new(0);
        let (pool, tm, desc_ref, inserted_ref) = (e.pool, &e.tm, &desc, &inserted);
        let stats = std::thread::scope(|s| {
            for worker in 0..2u64 {
                s.spawn(move || {
                    // The head of each doomed run: the leaves after it
                    // empty and go while these inserts land around them.
                    let keys = (0..N).filter(|&k| k % 100 < 10 && k % 2 == round);
                    for k in keys {
                        let t = tid(1_000_000 + worker * 100_000 + k);
                        let mut holder = |h: Tid| {
                            Ok(if old_dead(h) {
                                KeyHolder::Dead
                            } else {
                                KeyHolder::Live
                            })
                        };
                        let mut wait = |_| panic!("nothing runs");
                        let check = UniqueCheck {
                            holder: &mut holder,
                            wait: &mut wait,
                        };
                        let r = btree::insert(pool, tm, REL, desc_ref, &wide(k), t, Some(check))
                            .unwrap();
                        if r == InsertOutcome::Inserted {
                            inserted_ref.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                });
            }
            let v =
                s.spawn(move || btree::bulk_delete(pool, tm, REL, desc_ref, &old_dead).unwrap());
            v.join().unwrap()
        });
        let want = (0..N).filter(|&k| k % 100 < 10 && k % 2 == round).count();
        assert_eq!(inserted.load(Ordering::Relaxed), want as u64);
        btree::check(e.pool, REL, &desc, true).unwrap();
        let all = scan_all(e.pool, &desc, ScanRange::default());
        assert!(all.iter().all(|(t, _)| !old_dead(*t)));
        let keys: Vec<u64> = all.iter().map(|(_, k)| key_no(&k[0])).collect();
        assert!(keys.windows(2).all(|w| w[0] < w[1]), "a key twice");
        assert_eq!(keys.len(), N as usize / 20 + want);
        assert!(stats.pages_newly_deleted > 0, "{stats:?}");
    }
}
