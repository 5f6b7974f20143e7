use std::sync::Arc;

use super::support::*;
use crate::btree::{self, IndexScan, InsertOutcome, ScanBound, ScanRange};

#[test]
fn inserts_split_and_scan_in_order() {
    let e = env(64);
    let desc = int_desc();
    btree::create_empty(e.pool, e.tm.wal(), REL).unwrap();
    let n = 20_000u64;
    // A scattered order: many splits in the middle of pages.
    for i in 0..n {
        let k = ((i * 7919) % n) as i32;
        let r = btree::insert(e.pool, &e.tm, REL, &desc, &int(k), tid(i), None).unwrap();
        assert_eq!(r, InsertOutcome::Inserted);
    }
    btree::check(e.pool, REL, &desc, true).unwrap();
    assert!(btree::tree_height(e.pool, REL).unwrap() >= 1);
    let mut scan = IndexScan::new(
        e.pool,
        REL,
        Arc::new(desc.clone()),
        ScanRange::default(),
        true,
    )
    .unwrap();
    let mut last: Option<types::Value> = None;
    let mut count = 0;
    while let Some((_, keys)) = scan.next().unwrap() {
        let k = keys.unwrap()[0].clone();
        if let Some(l) = &last {
            assert!(desc
                .compare_prefix(std::slice::from_ref(l), std::slice::from_ref(&k))
                .is_lt());
        }
        last = Some(k);
        count += 1;
    }
    assert_eq!(count, n);
    let range = ScanRange {
        lower: Some(ScanBound {
            prefix: int(100),
            inclusive: false,
        }),
        upper: Some(ScanBound {
            prefix: int(200),
            inclusive: true,
        }),
        backward: true,
    };
    let mut scan = IndexScan::new(e.pool, REL, Arc::new(desc.clone()), range, true).unwrap();
    let mut got = Vec::new();
    while let Some((_, keys)) = scan.next().unwrap() {
        got.push(keys.unwrap()[0].clone());
    }
    let want: Vec<_> = (101..=200).rev().map(types::Value::Int4).collect();
    assert_eq!(got, want);
    assert_eq!(
        btree::find_equal(e.pool, REL, &desc, &int(5))
            .unwrap()
            .len(),
        1
    );
}
