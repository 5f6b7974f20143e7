//! Random inserts, VACUUM deletes and range scans against a BTreeSet.

use std::collections::{BTreeSet, HashSet};

use super::support::*;
use crate::btree::{self, ScanBound, ScanRange};
use crate::heap::Tid;

fn keys_of(entries: &[(Tid, Vec<types::Value>)]) -> Vec<(Tid, String)> {
    entries
        .iter()
        .map(|(t, k)| (*t, k[0].as_str().unwrap().to_string()))
        .collect()
}

fn model_range(
    model: &BTreeSet<(u64, Tid)>,
    lower: Option<(u64, bool)>,
    upper: Option<(u64, bool)>,
    backward: bool,
) -> Vec<(Tid, String)> {
    let mut v: Vec<(Tid, String)> = model
        .iter()
        .filter(|(k, _)| match lower {
            Some((l, true)) => *k >= l,
            Some((l, false)) => *k > l,
            None => true,
        })
        .filter(|(k, _)| match upper {
            Some((u, true)) => *k <= u,
            Some((u, false)) => *k < u,
            None => true,
        })
        .map(|(k, t)| (*t, wide(*k)[0].as_str().unwrap().to_string()))
        .collect();
    if backward {
        v.reverse();
    }
    v
}

#[test]
fn random_inserts_deletes_and_scans_match_a_model() {
    // A small pool, so pages are evicted and read back all the time.
    let e = env(48);
    let desc = text_desc();
    btree::create_empty(e.pool, e.tm.wal(), REL).unwrap();
    let mut model: BTreeSet<(u64, Tid)> = BTreeSet::new();
    let mut rng = Rng(0x5eed);
    let mut next_tid = 0u64;
    for round in 0..5 {
        for _ in 0..1200 {
            let k = rng.below(2500);
            let t = tid(next_tid);
            next_tid += 1;
            btree::insert(e.pool, &e.tm, REL, &desc, &wide(k), t, None).unwrap();
            model.insert((k, t));
        }
        let doomed: HashSet<Tid> = model
            .iter()
            .map(|(_, t)| *t)
            .filter(|t| (t.block as u64 * 7 + t.offset as u64 + round).is_multiple_of(3))
            .collect();
        let stats =
            btree::bulk_delete(e.pool, &e.tm, REL, &desc, &|t| doomed.contains(&t)).unwrap();
        model.retain(|(_, t)| !doomed.contains(t));
        assert_eq!(stats.removed, doomed.len() as u64);
        assert_eq!(stats.remaining, model.len() as u64);
        btree::check(e.pool, REL, &desc, false).unwrap();
        btree::check(e.pool, REL, &desc, true).unwrap();

        let all = scan_all(e.pool, &desc, ScanRange::default());
        assert_eq!(keys_of(&all), model_range(&model, None, None, false));
        for _ in 0..30 {
            let bound = |rng: &mut Rng| match rng.below(4) {
                0 => None,
                _ => Some((rng.below(2600), rng.below(2) == 0)),
            };
            let (lower, upper, backward) = (bound(&mut rng), bound(&mut rng), rng.below(2) == 0);
            let to_bound = |b: Option<(u64, bool)>| {
                b.map(|(k, inclusive)| ScanBound {
                    prefix: wide(k),
                    inclusive,
                })
            };
            let range = ScanRange {
                lower: to_bound(lower),
                upper: to_bound(upper),
                backward,
            };
            let got = keys_of(&scan_all(e.pool, &desc, range));
            assert_eq!(
                got,
                model_range(&model, lower, upper, backward),
                "{lower:?} {upper:?} backward {backward}"
            );
        }
        // Point probes, present and absent.
        for k in [0, 1, 777, 2499, 2500] {
            let mut got = btree::find_equal(e.pool, REL, &desc, &wide(k)).unwrap();
            got.sort();
            let want: Vec<Tid> = model
                .iter()
                .filter(|(x, _)| *x == k)
                .map(|(_, t)| *t)
                .collect();
            assert_eq!(got, want, "key {k}");
        }
    }
    assert!(btree::tree_height(e.pool, REL).unwrap() >= 2, "a deep tree");
}
