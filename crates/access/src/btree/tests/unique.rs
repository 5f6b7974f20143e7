//! Unique checks with a fake heap: what `holder` says about each equal
//! entry decides between inserting, waiting and reporting a duplicate.

use std::collections::HashMap;
use std::sync::Mutex;

use common::{PgResult, Xid};
use txn::XidStatus;
use types::Value;

use super::support::*;
use crate::btree::{self, InsertOutcome, KeyHolder, ScanRange, UniqueCheck};
use crate::heap::Tid;

fn never_wait(x: Xid) -> PgResult<XidStatus> {
    panic!("waited for {x}")
}

#[test]
fn live_dead_and_running_holders() {
    let e = env(64);
    let desc = int_desc();
    btree::create_empty(e.pool, e.tm.wal(), REL).unwrap();
    let (a, b, c, d) = (tid(1), tid(2), tid(3), tid(4));
    let insert =
        |t: Tid, holder: &mut dyn FnMut(Tid) -> PgResult<KeyHolder>, waited: &mut Vec<Xid>| {
            let mut wait = |x: Xid| -> PgResult<XidStatus> {
                waited.push(x);
                Ok(XidStatus::Committed)
            };
            let check = UniqueCheck {
                holder,
                wait: &mut wait,
            };
            btree::insert(e.pool, &e.tm, REL, &desc, &int(5), t, Some(check)).unwrap()
        };
    let mut waited = Vec::new();
    // Nothing there yet.
    let r = insert(a, &mut |t| panic!("asked about {t:?}"), &mut waited);
    assert_eq!(r, InsertOutcome::Inserted);
    // A live holder: a duplicate, nothing inserted.
    let r = insert(b, &mut |_| Ok(KeyHolder::Live), &mut waited);
    assert_eq!(r, InsertOutcome::Duplicate(a));
    assert_eq!(
        btree::find_equal(e.pool, REL, &desc, &int(5)).unwrap(),
        vec![a]
    );
    // A dead one: inserted beside it.
    let r = insert(b, &mut |_| Ok(KeyHolder::Dead), &mut waited);
    assert_eq!(r, InsertOutcome::Inserted);
    // A running one: waited for, then looked at again (now aborted).
    let mut calls = HashMap::new();
    let mut holder = |t: Tid| {
        let n = calls.entry(t).or_insert(0);
        *n += 1;
        Ok(if t == b && *n == 1 {
            KeyHolder::InProgress(77)
        } else {
            KeyHolder::Dead
        })
    };
    let r = insert(c, &mut holder, &mut waited);
    assert_eq!(r, InsertOutcome::Inserted);
    assert_eq!(waited, vec![77]);
    assert_eq!(calls[&a], 2, "the check starts over after the wait");
    // Running, then committed and live: a duplicate after the wait.
    let mut first = true;
    let mut holder = |t: Tid| {
        Ok(match (t == c, std::mem::replace(&mut first, false)) {
            (_, true) => KeyHolder::Dead,
            (true, _) => KeyHolder::Live,
            _ => KeyHolder::Dead,
        })
    };
    let r = insert(d, &mut holder, &mut waited);
    assert_eq!(r, InsertOutcome::Duplicate(c));
    let mut all = btree::find_equal(e.pool, REL, &desc, &int(5)).unwrap();
    all.sort();
    assert_eq!(all, vec![a, b, c]);

    // A key with a NULL never conflicts: the holder is never asked.
    for t in [tid(10), tid(11)] {
        let mut holder = |t: Tid| -> PgResult<KeyHolder> { panic!("asked about {t:?}") };
        let check = UniqueCheck {
            holder: &mut holder,
            wait: &mut never_wait,
        };
        let r = btree::insert(e.pool, &e.tm, REL, &desc, &[Value::Null], t, Some(check)).unwrap();
        assert_eq!(r, InsertOutcome::Inserted);
    }
    btree::check(e.pool, REL, &desc, true).unwrap();
}

#[test]
fn a_run_of_equal_keys_over_several_pages_is_checked_to_its_end() {
    let e = env(64);
    let desc = text_desc();
    btree::create_empty(e.pool, e.tm.wal(), REL).unwrap();
    for i in 0..50 {
        btree::insert(e.pool, &e.tm, REL, &desc, &wide(i), tid(i), None).unwrap();
        btree::insert(e.pool, &e.tm, REL, &desc, &wide(99), tid(1000 + i), None).unwrap();
        btree::insert(
            e.pool,
            &e.tm,
            REL,
            &desc,
            &wide(200 + i),
            tid(2000 + i),
            None,
        )
        .unwrap();
    }
    assert!(btree::tree_height(e.pool, REL).unwrap() >= 1);
    // Every copy of 99 is dead except the last (in tid order).
    let last = tid(1049);
    let mut asked = Vec::new();
    let mut holder = |t: Tid| {
        asked.push(t);
        Ok(if t == last {
            KeyHolder::Live
        } else {
            KeyHolder::Dead
        })
    };
    let check = UniqueCheck {
        holder: &mut holder,
        wait: &mut never_wait,
    };
    let r = btree::insert(e.pool, &e.tm, REL, &desc, &wide(99), tid(5000), Some(check)).unwrap();
    assert_eq!(r, InsertOutcome::Duplicate(last));
    assert_eq!(asked, (1000..1050).map(tid).collect::<Vec<_>>());
    // All dead: it goes in, after the others.
    let mut holder = |_| Ok(KeyHolder::Dead);
    let check = UniqueCheck {
        holder: &mut holder,
        wait: &mut never_wait,
    };
    let r = btree::insert(e.pool, &e.tm, REL, &desc, &wide(99), tid(5000), Some(check)).unwrap();
    assert_eq!(r, InsertOutcome::Inserted);
    assert_eq!(
        btree::find_equal(e.pool, REL, &desc, &wide(99))
            .unwrap()
            .len(),
        51
    );
    btree::check(e.pool, REL, &desc, true).unwrap();
}

#[test]
fn four_sessions_inserting_the_same_keys_insert_each_once() {
    let e = env(128);
    let desc = text_desc();
    btree::create_empty(e.pool, e.tm.wal(), REL).unwrap();
    const KEYS: u64 = 1500;
    // The heap, as far as the holders care: every entry is a committed row.
    let wins = Mutex::new(Vec::new());
    let (pool, tm, desc_ref, wins_ref) = (e.pool, &e.tm, &desc, &wins);
    std::thread::scope(|s| {
        for session in 0..4u64 {
            s.spawn(move || {
                let mut rng = Rng(session + 1);
                let mut order: Vec<u64> = (0..KEYS).collect();
                for i in (1..order.len()).rev() {
                    order.swap(i, rng.below(i as u64 + 1) as usize);
                }
                for k in order {
                    let t = tid(session * 10_000 + k);
                    let mut holder = |_| Ok(KeyHolder::Live);
                    let check = UniqueCheck {
                        holder: &mut holder,
                        wait: &mut never_wait,
                    };
                    match btree::insert(pool, tm, REL, desc_ref, &wide(k), t, Some(check)).unwrap()
                    {
                        InsertOutcome::Inserted => wins_ref.lock().unwrap().push(k),
                        InsertOutcome::Duplicate(_) => {}
                    }
                }
            });
        }
    });
    let mut wins = wins.into_inner().unwrap();
    wins.sort();
    assert_eq!(
        wins,
        (0..KEYS).collect::<Vec<_>>(),
        "each key inserted exactly once"
    );
    btree::check(e.pool, REL, &desc, true).unwrap();
    assert_eq!(
        scan_all(e.pool, &desc, ScanRange::default()).len() as u64,
        KEYS
    );
}
