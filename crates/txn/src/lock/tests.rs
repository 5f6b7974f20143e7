use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Arc, Barrier};
use std::thread;
use std::time::Duration;

use super::*;

const DB: u32 = 5;

fn rel(oid: u32) -> LockTag {
    LockTag::Relation { db: DB, rel: oid }
}

fn obj(n: u32) -> LockTag {
    LockTag::Object {
        db: DB,
        class: 1259,
        objid: n,
        subid: 0,
    }
}

fn settings(deadlock_ms: u64, lock_timeout_ms: Option<u64>) -> LockSettings {
    LockSettings {
        deadlock_timeout: Duration::from_millis(deadlock_ms),
        lock_timeout: lock_timeout_ms.map(Duration::from_millis),
    }
}

/// Takes `mode` on `tag` for the transaction, waiting as `s` says.
fn take(o: &mut LockOwner, tag: LockTag, mode: LockMode, s: LockSettings) -> Result<(), LockError> {
    let mut check = || Ok(());
    let mut ctx = WaitContext {
        settings: s,
        check: &mut check,
    };
    o.acquire(tag, mode, LockScope::Transaction, Some(&mut ctx))
}

fn try_take(o: &mut LockOwner, tag: LockTag, mode: LockMode) -> Result<(), LockError> {
    o.acquire(tag, mode, LockScope::Transaction, None)
}

/// Waits (without a time limit) until `pid` is queued for a lock.
fn until_waiting(mgr: &LockManager, pid: i32) {
    while !mgr.is_waiting(pid) {
        thread::sleep(Duration::from_millis(1));
    }
}

#[test]
fn compatible_modes_share_and_conflicting_ones_refuse() {
    let mgr = Arc::new(LockManager::new());
    let mut a = LockOwner::new(mgr.clone(), 1, DB);
    let mut b = LockOwner::new(mgr.clone(), 2, DB);
    for (held, wanted) in [
        (LockMode::RowExclusive, LockMode::RowExclusive),
        (LockMode::AccessShare, LockMode::Exclusive),
        (LockMode::Share, LockMode::Share),
    ] {
        try_take(&mut a, obj(1), held).unwrap();
        let r = try_take(&mut b, obj(1), wanted);
        assert_eq!(
            r.is_ok(),
            !held.conflicts_with(wanted),
            "{held:?} {wanted:?}"
        );
        a.release_transaction();
        b.release_transaction();
    }
    // The same through the fast path: relation locks.
    try_take(&mut a, rel(10), LockMode::RowExclusive).unwrap();
    assert!(matches!(
        try_take(&mut b, rel(10), LockMode::Share),
        Err(LockError::NotAvailable)
    ));
    try_take(&mut b, rel(10), LockMode::AccessShare).unwrap();
    a.release_transaction();
    try_take(&mut b, rel(10), LockMode::Share).unwrap();
    assert!(matches!(
        try_take(&mut a, rel(10), LockMode::RowExclusive),
        Err(LockError::NotAvailable)
    ));
    b.release_transaction();
    try_take(&mut a, rel(10), LockMode::RowExclusive).unwrap();
}

#[test]
fn a_later_request_waits_behind_a_conflicting_waiter() {
    let mgr = Arc::new(LockManager::new());
    let mut reader = LockOwner::new(mgr.clone(), 1, DB);
    try_take(&mut reader, obj(1), LockMode::AccessShare).unwrap();
    let order = Arc::new(parking_lot::Mutex::new(Vec::new()));
    let exclusive = {
        let (mgr, order) = (mgr.clone(), order.clone());
        thread::spawn(move || {
            let mut o = LockOwner::new(mgr, 2, DB);
            take(
                &mut o,
                obj(1),
                LockMode::AccessExclusive,
                settings(60_000, None),
            )
            .unwrap();
            order.lock().push("exclusive");
            o.release_transaction();
        })
    };
    until_waiting(&mgr, 2);
    // AccessShare is compatible with what is granted, but not with the
    // AccessExclusive already waiting: it queues behind it.
    let mut other = LockOwner::new(mgr.clone(), 3, DB);
    assert!(matches!(
        try_take(&mut other, obj(1), LockMode::AccessShare),
        Err(LockError::NotAvailable)
    ));
    let late = {
        let (mgr, order) = (mgr.clone(), order.clone());
        thread::spawn(move || {
            let mut o = LockOwner::new(mgr, 4, DB);
            take(
                &mut o,
                obj(1),
                LockMode::AccessShare,
                settings(60_000, None),
            )
            .unwrap();
            order.lock().push("share");
        })
    };
    until_waiting(&mgr, 4);
    assert_eq!(mgr.blocking_pids(2), vec![1]);
    assert_eq!(mgr.blocking_pids(4), vec![2]);
    // The holder itself may take more: it goes ahead of the waiter that
    // waits for it, rather than deadlocking with it.
    try_take(&mut reader, obj(1), LockMode::RowShare).unwrap_err();
    take(&mut reader, obj(1), LockMode::Share, settings(60_000, None)).unwrap();
    reader.release_transaction();
    exclusive.join().unwrap();
    late.join().unwrap();
    assert_eq!(*order.lock(), vec!["exclusive", "share"]);
}

#[test]
fn upgrades_from_both_sides_fail_at_once_for_the_second() {
    // deadlock-simple: both hold AccessShare, both want AccessExclusive.
    let mgr = Arc::new(LockManager::new());
    let mut s2 = LockOwner::new(mgr.clone(), 2, DB);
    let barrier = Arc::new(Barrier::new(2));
    let s1 = {
        let (mgr, barrier) = (mgr.clone(), barrier.clone());
        thread::spawn(move || {
            let mut o = LockOwner::new(mgr, 1, DB);
            take(
                &mut o,
                rel(7),
                LockMode::AccessShare,
                settings(60_000, None),
            )
            .unwrap();
            barrier.wait();
            take(
                &mut o,
                rel(7),
                LockMode::AccessExclusive,
                settings(60_000, None),
            )
        })
    };
    take(
        &mut s2,
        rel(7),
        LockMode::AccessShare,
        settings(60_000, None),
    )
    .unwrap();
    barrier.wait();
    until_waiting(&mgr, 1);
    let err = take(
        &mut s2,
        rel(7),
        LockMode::AccessExclusive,
        settings(60_000, None),
    )
    .unwrap_err();
    let LockError::Deadlock(report) = err else {
        panic!("{err:?}")
    };
    assert_eq!(
        report.detail(),
        "Process 2 waits for AccessExclusiveLock on relation 7 of database 5; blocked by process 1.\n\
         Process 1 waits for AccessExclusiveLock on relation 7 of database 5; blocked by process 2."
    );
    s2.release_transaction();
    s1.join().unwrap().unwrap();
}

/// Runs `n` owners in a cycle: owner i holds Exclusive on object i, then
/// waits for object i+1. Returns how many failed with a deadlock.
fn cycle(n: u32) -> usize {
    let mgr = Arc::new(LockManager::new());
    let barrier = Arc::new(Barrier::new(n as usize));
    let threads: Vec<_> = (0..n)
        .map(|i| {
            let (mgr, barrier) = (mgr.clone(), barrier.clone());
            thread::spawn(move || {
                let mut o = LockOwner::new(mgr, 100 + i as i32, DB);
                take(&mut o, obj(i), LockMode::Exclusive, settings(20, None)).unwrap();
                barrier.wait();
                let r = take(
                    &mut o,
                    obj((i + 1) % n),
                    LockMode::Exclusive,
                    settings(20, None),
                );
                // Holds both (or gives up) until its transaction ends.
                o.release_transaction();
                r
            })
        })
        .collect();
    let results: Vec<_> = threads.into_iter().map(|t| t.join().unwrap()).collect();
    let mut deadlocks = 0;
    for r in results {
        match r {
            Ok(()) => {}
            Err(LockError::Deadlock(report)) => {
                deadlocks += 1;
                assert_eq!(report.edges.len(), n as usize);
                for (k, e) in report.edges.iter().enumerate() {
                    // Each waits for the next one's object, which that one holds.
                    let next = &report.edges[(k + 1) % report.edges.len()];
                    assert_eq!(e.blocker, next.pid);
                    assert_eq!(e.mode, LockMode::Exclusive);
                }
            }
            Err(e) => panic!("{e:?}"),
        }
    }
    deadlocks
}

#[test]
fn two_and_three_cycles_end_with_one_victim() {
    // Each victim breaks the cycle; two checks may overlap only in time,
    // never both find the cycle (the check holds every partition).
    assert_eq!(cycle(2), 1);
    assert_eq!(cycle(3), 1);
}

#[test]
fn a_soft_cycle_is_broken_by_reordering_the_queue() {
    // H holds AccessShare on L; W1 waits for AccessExclusive on L; W2,
    // which holds Exclusive on M, waits for AccessShare on L behind W1; H
    // then waits for M. W2 going ahead of W1 ends the cycle: no victim.
    let mgr = Arc::new(LockManager::new());
    let (l, m) = (obj(1), obj(2));
    let mut h = LockOwner::new(mgr.clone(), 1, DB);
    take(&mut h, l, LockMode::AccessShare, settings(20, None)).unwrap();
    let w1 = {
        let mgr = mgr.clone();
        thread::spawn(move || {
            let mut o = LockOwner::new(mgr, 2, DB);
            let r = take(&mut o, l, LockMode::AccessExclusive, settings(20, None));
            o.release_transaction();
            r
        })
    };
    until_waiting(&mgr, 2);
    let (held_m, go) = (Arc::new(Barrier::new(2)), Arc::new(Barrier::new(2)));
    let w2 = {
        let (mgr, held_m, go) = (mgr.clone(), held_m.clone(), go.clone());
        thread::spawn(move || {
            let mut o = LockOwner::new(mgr, 3, DB);
            take(&mut o, m, LockMode::Exclusive, settings(20, None)).unwrap();
            held_m.wait();
            go.wait();
            let r = take(&mut o, l, LockMode::AccessShare, settings(20, None));
            o.release_transaction();
            r
        })
    };
    held_m.wait();
    go.wait();
    until_waiting(&mgr, 3);
    take(&mut h, m, LockMode::AccessShare, settings(20, None)).unwrap();
    h.release_transaction();
    w1.join().unwrap().unwrap();
    w2.join().unwrap().unwrap();
}

#[test]
fn lock_timeout_and_interrupts_end_a_wait() {
    let mgr = Arc::new(LockManager::new());
    let mut a = LockOwner::new(mgr.clone(), 1, DB);
    let mut b = LockOwner::new(mgr.clone(), 2, DB);
    take(
        &mut a,
        rel(3),
        LockMode::AccessExclusive,
        settings(1000, None),
    )
    .unwrap();
    let r = take(
        &mut b,
        rel(3),
        LockMode::AccessShare,
        settings(60_000, Some(10)),
    );
    assert!(matches!(r, Err(LockError::Timeout)), "{r:?}");
    let e = r.unwrap_err().into_pg(|| unreachable!());
    assert_eq!(e.code, common::SqlState::LOCK_NOT_AVAILABLE);
    assert_eq!(e.message, "canceling statement due to lock timeout");
    let mut calls = 0;
    let mut check = || {
        calls += 1;
        if calls < 3 {
            Ok(())
        } else {
            Err(common::PgError::new(
                common::SqlState::QUERY_CANCELED,
                "canceling statement due to user request",
            ))
        }
    };
    let mut ctx = WaitContext {
        settings: settings(60_000, None),
        check: &mut check,
    };
    let r = b.acquire(
        rel(3),
        LockMode::AccessShare,
        LockScope::Transaction,
        Some(&mut ctx),
    );
    assert!(matches!(r, Err(LockError::Interrupted(_))), "{r:?}");
    // Nobody is left queued behind the holder.
    assert!(mgr.status().iter().all(|s| s.granted));
    a.release_transaction();
    try_take(&mut b, rel(3), LockMode::AccessShare).unwrap();
}

#[test]
fn fast_path_locks_move_to_the_table_for_a_strong_locker() {
    let mgr = Arc::new(LockManager::new());
    let mut a = LockOwner::new(mgr.clone(), 1, DB);
    try_take(&mut a, rel(20), LockMode::AccessShare).unwrap();
    try_take(&mut a, rel(20), LockMode::RowExclusive).unwrap();
    assert_eq!(mgr.fast_path_entries(), 1);
    let rows = mgr.status();
    assert!(rows.iter().all(|r| r.fast_path && r.granted && r.pid == 1));
    assert_eq!(rows.len(), 2);
    let mut b = LockOwner::new(mgr.clone(), 2, DB);
    assert!(matches!(
        try_take(&mut b, rel(20), LockMode::Share),
        Err(LockError::NotAvailable)
    ));
    // The failed strong request moved a's locks into the table.
    assert_eq!(mgr.fast_path_entries(), 0);
    assert!(mgr.status().iter().all(|r| !r.fast_path && r.granted));
    a.release_transaction();
    assert!(mgr.status().is_empty());
    // A full set of slots spills into the table.
    for i in 0..(status::slots_per_owner() as u32 + 3) {
        try_take(&mut a, rel(1000 + i), LockMode::AccessShare).unwrap();
    }
    assert_eq!(mgr.fast_path_entries(), status::slots_per_owner());
    assert_eq!(mgr.status().len(), status::slots_per_owner() + 3);
    a.release_transaction();
    assert!(mgr.status().is_empty());
}

/// How many owners are inside each mode on the contended relation.
#[derive(Default)]
struct Inside([AtomicI32; 9]);

impl Inside {
    fn enter(&self, mode: LockMode) {
        self.0[mode as usize].fetch_add(1, Ordering::SeqCst);
        for other in LockMode::ALL {
            if mode.conflicts_with(other) {
                let me = i32::from(other == mode);
                let n = self.0[other as usize].load(Ordering::SeqCst);
                assert_eq!(n, me, "{mode:?} with {other:?}");
            }
        }
    }
    fn leave(&self, mode: LockMode) {
        self.0[mode as usize].fetch_sub(1, Ordering::SeqCst);
    }
}

#[test]
fn fast_path_never_lets_a_weak_lock_overlap_a_strong_one() {
    let mgr = Arc::new(LockManager::new());
    let inside = Arc::new(Inside::default());
    let run = |pid: i32, modes: [LockMode; 2], rounds: usize| {
        let (mgr, inside) = (mgr.clone(), inside.clone());
        thread::spawn(move || {
            let mut o = LockOwner::new(mgr, pid, DB);
            for i in 0..rounds {
                let mode = modes[i % 2];
                take(&mut o, rel(42), mode, settings(60_000, None)).unwrap();
                inside.enter(mode);
                inside.leave(mode);
                o.release_transaction();
            }
        })
    };
    let mut threads: Vec<_> = (0..3)
        .map(|t| {
            run(
                10 + t,
                [LockMode::AccessShare, LockMode::RowExclusive],
                2000,
            )
        })
        .collect();
    threads.push(run(99, [LockMode::Share, LockMode::AccessExclusive], 300));
    for t in threads {
        t.join().unwrap();
    }
    assert!(mgr.status().is_empty());
    assert_eq!(mgr.fast_path_entries(), 0);
}

#[test]
fn savepoint_marks_and_session_counts() {
    let mgr = Arc::new(LockManager::new());
    let mut o = LockOwner::new(mgr.clone(), 1, DB);
    try_take(&mut o, obj(1), LockMode::Exclusive).unwrap();
    let mark = o.mark();
    try_take(&mut o, obj(1), LockMode::Exclusive).unwrap();
    try_take(&mut o, obj(2), LockMode::Exclusive).unwrap();
    try_take(&mut o, rel(5), LockMode::AccessShare).unwrap();
    o.release_since(mark);
    assert!(o.holds(&obj(1), LockMode::Exclusive));
    assert!(!o.holds(&obj(2), LockMode::Exclusive));
    assert!(!o.holds(&rel(5), LockMode::AccessShare));
    assert_eq!(mgr.status().len(), 1);
    // Session-level locks count acquisitions and outlive the transaction.
    let adv = LockTag::Advisory {
        db: DB,
        key: AdvisoryKey::BigInt(7),
    };
    for _ in 0..2 {
        o.acquire(adv, LockMode::Exclusive, LockScope::Session, None)
            .unwrap();
    }
    o.release_transaction();
    assert!(o.holds(&adv, LockMode::Exclusive));
    assert!(o.release(adv, LockMode::Exclusive, LockScope::Session));
    assert!(o.holds(&adv, LockMode::Exclusive));
    assert!(!o.release(adv, LockMode::Exclusive, LockScope::Transaction));
    assert!(o.release(adv, LockMode::Exclusive, LockScope::Session));
    assert!(!o.release(adv, LockMode::Exclusive, LockScope::Session));
    assert!(mgr.status().is_empty());
    o.acquire(adv, LockMode::Share, LockScope::Session, None)
        .unwrap();
    drop(o);
    assert!(mgr.status().is_empty());
}

#[test]
fn advisory_keys_encode_as_postgresql_does() {
    assert_eq!(AdvisoryKey::BigInt(1).fields(), (0, 1, 1));
    assert_eq!(AdvisoryKey::BigInt(-1).fields(), (u32::MAX, u32::MAX, 1));
    assert_eq!(AdvisoryKey::BigInt(1 << 32).fields(), (1, 0, 1));
    assert_eq!(AdvisoryKey::IntPair(3, -1).fields(), (3, u32::MAX, 2));
    let t = LockTag::Advisory {
        db: 5,
        key: AdvisoryKey::IntPair(1, 2),
    };
    assert_eq!(t.describe(), "advisory lock [5,1,2,2]");
}
