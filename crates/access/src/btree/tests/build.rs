//! Bottom-up builds, then inserts and VACUUM on what they built.

use std::collections::HashSet;

use types::Value;

use super::support::*;
use crate::btree::{self, ScanBound, ScanRange};
use crate::heap::Tid;

#[test]
fn built_trees_check_and_take_inserts() {
    let e = env(256);
    let desc = int_desc();
    btree::create_empty(e.pool, e.tm.wal(), REL).unwrap();
    const N: i32 = 100_000;
    // Pairs of equal keys, tids ascending within a key.
    let mut it = (0..N).map(|i| Ok((int(i / 2), tid(i as u64))));
    assert_eq!(
        btree::build(e.pool, e.tm.wal(), REL, &desc, &mut it).unwrap(),
        N as u64
    );
    btree::check(e.pool, REL, &desc, true).unwrap();
    // 272 leaves fit under one root (about 285 downlinks at 70%).
    assert_eq!(btree::tree_height(e.pool, REL).unwrap(), 1);
    let all = scan_all(e.pool, &desc, ScanRange::default());
    assert_eq!(all.len(), N as usize);
    assert!(all
        .iter()
        .enumerate()
        .all(|(i, (t, k))| *t == tid(i as u64) && k[0] == Value::Int4(i as i32 / 2)));
    // Leaves are about 90% full: 100k entries of 20 bytes need ~272 leaves.
    let blocks = e
        .pool
        .smgr()
        .nblocks(REL, storage::ForkNumber::Main)
        .unwrap();
    assert!((270..300).contains(&blocks), "{blocks} blocks");
    assert_eq!(
        btree::find_equal(e.pool, REL, &desc, &int(777)).unwrap(),
        vec![tid(1554), tid(1555)]
    );

    // Inserts into the built tree split its full pages.
    for i in 0..20_000u64 {
        let k = ((i * 7919) % 60_000) as i32;
        btree::insert(e.pool, &e.tm, REL, &desc, &int(k), tid(1_000_000 + i), None).unwrap();
    }
    btree::check(e.pool, REL, &desc, true).unwrap();
    let range = ScanRange {
        lower: Some(ScanBound {
            prefix: int(10),
            inclusive: true,
        }),
        upper: Some(ScanBound {
            prefix: int(12),
            inclusive: false,
        }),
        backward: false,
    };
    let part: Vec<Tid> = scan_all(e.pool, &desc, range).iter().map(|x| x.0).collect();
    let mut want = vec![tid(20), tid(21), tid(22), tid(23)];
    for i in 0..20_000u64 {
        let k = (i * 7919) % 60_000;
        if (10..12).contains(&k) {
            want.push(tid(1_000_000 + i));
        }
    }
    want.sort_by_key(|t| {
        let k = if t.block >= 10_000 {
            ((t.block as u64 * 100 + t.offset as u64 - 1 - 1_000_000) * 7919) % 60_000
        } else {
            (t.block as u64 * 100 + t.offset as u64 - 1) / 2
        };
        (k, *t)
    });
    assert_eq!(part, want);

    // VACUUM removes what it is told to, counts the rest.
    let doomed: HashSet<Tid> = (0..N as u64).filter(|i| i % 3 == 0).map(tid).collect();
    let stats = btree::bulk_delete(e.pool, &e.tm, REL, &desc, &|t| doomed.contains(&t)).unwrap();
    assert_eq!(stats.removed, doomed.len() as u64);
    assert_eq!(stats.remaining, N as u64 + 20_000 - doomed.len() as u64);
    assert_eq!(
        stats.pages,
        e.pool
            .smgr()
            .nblocks(REL, storage::ForkNumber::Main)
            .unwrap()
    );
    btree::check(e.pool, REL, &desc, true).unwrap();
    assert_eq!(
        btree::find_equal(e.pool, REL, &desc, &int(777)).unwrap(),
        vec![tid(1555)]
    );
}

#[test]
fn wide_keys_build_several_levels_and_empty_input_builds_nothing() {
    let e = env(128);
    let desc = text_desc();
    btree::create_empty(e.pool, e.tm.wal(), REL).unwrap();
    let mut it = (0..6000u64).map(|i| Ok((wide(i), tid(i))));
    btree::build(e.pool, e.tm.wal(), REL, &desc, &mut it).unwrap();
    btree::check(e.pool, REL, &desc, true).unwrap();
    assert!(btree::tree_height(e.pool, REL).unwrap() >= 2);
    let back = scan_all(
        e.pool,
        &desc,
        ScanRange {
            backward: true,
            ..Default::default()
        },
    );
    assert_eq!(back.len(), 6000);
    assert_eq!(back[0].0, tid(5999));

    let rel2 = common::RelFileLocator {
        rel_number: REL.rel_number + 1,
        ..REL
    };
    btree::create_empty(e.pool, e.tm.wal(), rel2).unwrap();
    let mut none = std::iter::empty::<common::PgResult<(Vec<Value>, Tid)>>();
    assert_eq!(
        btree::build(e.pool, e.tm.wal(), rel2, &desc, &mut none).unwrap(),
        0
    );
    btree::check(e.pool, rel2, &desc, true).unwrap();
    btree::insert(e.pool, &e.tm, rel2, &desc, &wide(1), tid(1), None).unwrap();
    assert_eq!(
        btree::find_equal(e.pool, rel2, &desc, &wide(1)).unwrap(),
        vec![tid(1)]
    );
    // A build only goes into an empty tree.
    let mut more = (0..3u64).map(|i| Ok((wide(i), tid(i))));
    assert!(btree::build(e.pool, e.tm.wal(), rel2, &desc, &mut more).is_err());
}

#[test]
fn oversized_entries_are_refused() {
    let e = env(32);
    let desc = text_desc();
    btree::create_empty(e.pool, e.tm.wal(), REL).unwrap();
    let big = vec![Value::Text("x".repeat(3000))];
    let err = btree::insert(e.pool, &e.tm, REL, &desc, &big, tid(1), None).unwrap_err();
    assert_eq!(err.code, common::SqlState::PROGRAM_LIMIT_EXCEEDED);
    assert!(
        err.message
            .starts_with("index row size 3016 exceeds btree version 4 maximum 2704"),
        "{}",
        err.message
    );
    // The largest that fits goes in, many times over (three to a page, so
    // internal pages split too).
    let mut rng = Rng(3);
    for i in 0..60 {
        let k = rng.below(1000);
        let v = vec![Value::Text(format!("{k:03}{}", "y".repeat(2689)))];
        btree::insert(e.pool, &e.tm, REL, &desc, &v, tid(i), None).unwrap();
    }
    assert!(btree::tree_height(e.pool, REL).unwrap() >= 2);
    btree::check(e.pool, REL, &desc, true).unwrap();
}
