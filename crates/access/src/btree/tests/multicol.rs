//! Multi-column keys with DESC and NULLS FIRST/LAST.

use std::cmp::Ordering;

use types::{DataType, TypeId, Value};

use super::support::*;
use crate::btree::{self, IndexDesc, KeyColumn, ScanBound, ScanRange};
use crate::heap::Tid;

fn desc() -> IndexDesc {
    IndexDesc {
        columns: vec![
            KeyColumn {
                ty: DataType::new(TypeId::Int8),
                descending: false,
                nulls_first: true,
            },
            KeyColumn {
                ty: DataType::new(TypeId::Text),
                descending: true,
                nulls_first: false,
            },
            KeyColumn {
                ty: DataType::new(TypeId::Float8),
                descending: true,
                nulls_first: true,
            },
        ],
    }
}

fn row(rng: &mut Rng) -> Vec<Value> {
    let mut v = Vec::new();
    v.push(match rng.below(10) {
        0 => Value::Null,
        _ => Value::Int8(rng.below(20) as i64 - 10),
    });
    v.push(match rng.below(8) {
        0 => Value::Null,
        _ => Value::Text(format!(
            "s{}{}",
            rng.below(6),
            "y".repeat(rng.below(60) as usize)
        )),
    });
    v.push(match rng.below(7) {
        0 => Value::Null,
        _ => Value::Float8(rng.below(5) as f64 / 4.0),
    });
    v
}

fn sorted(desc: &IndexDesc, rows: &[(Vec<Value>, Tid)]) -> Vec<(Vec<Value>, Tid)> {
    let mut v = rows.to_vec();
    v.sort_by(|a, b| desc.compare_prefix(&a.0, &b.0).then(a.1.cmp(&b.1)));
    v
}

fn in_range(desc: &IndexDesc, k: &[Value], r: &ScanRange) -> bool {
    let lower_ok = r.lower.as_ref().is_none_or(|b| {
        let o = desc.compare_prefix(k, &b.prefix);
        o == Ordering::Greater || (o == Ordering::Equal && b.inclusive)
    });
    let upper_ok = r.upper.as_ref().is_none_or(|b| {
        let o = desc.compare_prefix(k, &b.prefix);
        o == Ordering::Less || (o == Ordering::Equal && b.inclusive)
    });
    lower_ok && upper_ok
}

#[test]
fn desc_and_nulls_order_scans_and_bounds() {
    let e = env(64);
    let d = desc();
    btree::create_empty(e.pool, e.tm.wal(), REL).unwrap();
    let mut rng = Rng(7);
    let rows: Vec<(Vec<Value>, Tid)> = (0..6000).map(|i| (row(&mut rng), tid(i))).collect();
    for (k, t) in &rows {
        btree::insert(e.pool, &e.tm, REL, &d, k, *t, None).unwrap();
    }
    btree::check(e.pool, REL, &d, true).unwrap();
    let want = sorted(&d, &rows);
    let got = scan_all(e.pool, &d, ScanRange::default());
    assert_eq!(got.len(), want.len());
    for ((gt, gk), (wk, wt)) in got.iter().zip(&want) {
        assert_eq!(gt, wt);
        assert_eq!(d.compare_prefix(gk, wk), Ordering::Equal);
    }
    // NULLS FIRST on the first column: the scan starts with the NULLs.
    assert!(got[0].1[0].is_null());

    for i in 0..200 {
        let a = &rows[rng.below(rows.len() as u64) as usize].0;
        let b = &rows[rng.below(rows.len() as u64) as usize].0;
        let (lo, hi) = if d.compare_prefix(a, b) == Ordering::Greater {
            (b, a)
        } else {
            (a, b)
        };
        let n = 1 + (i % 3);
        let range = ScanRange {
            lower: (i % 5 != 0).then(|| ScanBound {
                prefix: lo[..n].to_vec(),
                inclusive: rng.below(2) == 0,
            }),
            upper: (i % 7 != 0).then(|| ScanBound {
                prefix: hi[..(1 + (i / 3) % 3)].to_vec(),
                inclusive: rng.below(2) == 0,
            }),
            backward: rng.below(2) == 0,
        };
        let mut expect: Vec<Tid> = want
            .iter()
            .filter(|(k, _)| in_range(&d, k, &range))
            .map(|(_, t)| *t)
            .collect();
        if range.backward {
            expect.reverse();
        }
        let got: Vec<Tid> = scan_all(e.pool, &d, range.clone())
            .iter()
            .map(|x| x.0)
            .collect();
        assert_eq!(got, expect, "{range:?}");
    }

    // Equal probes with NULLs in the key find the NULL entries (a NULL is a
    // value like any other at this layer).
    let probe = rows[3].0.clone();
    let mut got = btree::find_equal(e.pool, REL, &d, &probe).unwrap();
    got.sort();
    let mut expect: Vec<Tid> = rows
        .iter()
        .filter(|(k, _)| d.compare_prefix(k, &probe) == Ordering::Equal)
        .map(|(_, t)| *t)
        .collect();
    expect.sort();
    assert_eq!(got, expect);

    // The same entries built bottom-up scan the same.
    let rel2 = common::RelFileLocator {
        rel_number: REL.rel_number + 1,
        ..REL
    };
    btree::create_empty(e.pool, e.tm.wal(), rel2).unwrap();
    let mut it = want.iter().map(|(k, t)| Ok((k.clone(), *t)));
    assert_eq!(
        btree::build(e.pool, e.tm.wal(), rel2, &d, &mut it).unwrap(),
        rows.len() as u64
    );
    btree::check(e.pool, rel2, &d, true).unwrap();
    let mut scan = btree::IndexScan::new(
        e.pool,
        rel2,
        std::sync::Arc::new(d.clone()),
        ScanRange::default(),
        false,
    )
    .unwrap();
    let mut built = Vec::new();
    while let Some((t, keys)) = scan.next().unwrap() {
        assert!(keys.is_none());
        built.push(t);
    }
    assert_eq!(built, want.iter().map(|x| x.1).collect::<Vec<_>>());
}
