//! UNIQUE under concurrency and MVCC, as PostgreSQL's nbtree enforces it.
//!
//! Four clients insert the same 1,500 keys, each in its own random order:
//! exactly one insert of each key succeeds, every other one fails with 23505
//! and PostgreSQL's message, DETAIL and error fields, and amcheck finds the
//! index sound. Then the MVCC cases: an insert of a key that an open
//! transaction inserted (or deleted) waits for that transaction, and then
//! succeeds or fails by how it ended.
//!
//! Checked against PostgreSQL 15 with
//! `SCALEGRES_TEST_BIN=crates/server/tests/support/postgres_as_scalegres.sh`.

mod support;

use std::collections::BTreeSet;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use postgres::error::SqlState;
use postgres::Client;
use support::{test_seed, TestRng, TestServer};

const KEYS: i32 = 1_500;
const CLIENTS: usize = 4;

/// Asserts that `e` is PostgreSQL's unique violation of `t_k_key` for `key`.
#[track_caller]
fn assert_duplicate(e: &postgres::Error, key: i32, what: &str) {
    let db = e
        .as_db_error()
        .unwrap_or_else(|| panic!("{what}: not a server error: {e:?}"));
    assert_eq!(db.code(), &SqlState::UNIQUE_VIOLATION, "{what}: {db:?}");
    assert_eq!(
        db.message(),
        "duplicate key value violates unique constraint \"t_k_key\"",
        "{what}"
    );
    assert_eq!(
        db.detail(),
        Some(format!("Key (k)=({key}) already exists.").as_str()),
        "{what}"
    );
}

fn setup(s: &TestServer) {
    s.psql_script(
        "create extension if not exists amcheck;
         create table t (k int unique, client int);",
    );
}

/// Runs amcheck on the index and checks that a forced index scan and a
/// sequential scan see the same keys.
fn check_index(c: &mut Client) {
    c.batch_execute("select bt_index_check('t_k_key'); select bt_index_parent_check('t_k_key')")
        .unwrap();
    let keys = |c: &mut Client, settings: &str| -> Vec<Option<i32>> {
        c.batch_execute(settings).unwrap();
        let rows = c
            .query("select k from t where k > -2147483648 order by k", &[])
            .unwrap();
        rows.iter().map(|r| r.get(0)).collect()
    };
    let by_index = keys(
        c,
        "set enable_seqscan = off; set enable_bitmapscan = off; set enable_indexscan = on",
    );
    let by_heap = keys(
        c,
        "set enable_seqscan = on; set enable_bitmapscan = off; set enable_indexscan = off; \
         set enable_indexonlyscan = off",
    );
    c.batch_execute("reset all").unwrap();
    assert_eq!(by_index, by_heap, "the index and the table disagree");
}

#[test]
fn four_clients_insert_the_same_keys() {
    let seed = test_seed("UNIQUE_SEED", 1_500);
    let s = TestServer::start();
    setup(&s);
    let threads: Vec<JoinHandle<(BTreeSet<i32>, usize)>> = (0..CLIENTS)
        .map(|client| {
            let cfg = s.config();
            std::thread::spawn(move || {
                let mut keys: Vec<i32> = (1..=KEYS).collect();
                TestRng::new(seed + client as u64).shuffle(&mut keys);
                let mut c = cfg.connect(postgres::NoTls).unwrap();
                let insert = c.prepare("insert into t values ($1, $2)").unwrap();
                let mut won = BTreeSet::new();
                let mut lost = 0;
                for k in keys {
                    match c.execute(&insert, &[&k, &(client as i32)]) {
                        Ok(n) => {
                            assert_eq!(n, 1);
                            won.insert(k);
                        }
                        Err(e) => {
                            let what = format!("seed {seed}, client {client}, key {k}");
                            assert_duplicate(&e, k, &what);
                            lost += 1;
                        }
                    }
                }
                (won, lost)
            })
        })
        .collect();
    let mut all_won = BTreeSet::new();
    let mut total_won = 0;
    let mut total_lost = 0;
    for t in threads {
        let (won, lost) = t.join().expect("a client failed");
        total_won += won.len();
        total_lost += lost;
        all_won.extend(won);
    }
    assert_eq!(total_won, KEYS as usize, "seed {seed}: successful inserts");
    assert_eq!(
        total_lost,
        (CLIENTS - 1) * KEYS as usize,
        "seed {seed}: failed inserts"
    );
    assert_eq!(all_won, (1..=KEYS).collect(), "seed {seed}: keys won");
    assert_eq!(
        s.psql("select count(*), count(distinct k), min(k), max(k) from t"),
        format!("{KEYS}|{KEYS}|1|{KEYS}")
    );
    check_index(&mut s.connect());
}

/// Starts `sql` on a new connection in a thread; returns the thread and the
/// connection's backend pid.
fn start_blocked(
    s: &TestServer,
    sql: &'static str,
) -> (JoinHandle<Result<u64, postgres::Error>>, i32) {
    let mut c = s.connect();
    let pid: i32 = c.query_one("select pg_backend_pid()", &[]).unwrap().get(0);
    let t = std::thread::spawn(move || c.execute(sql, &[]));
    (t, pid)
}

/// Waits until backend `pid` waits for another transaction to end (up to 10 s).
fn until_waiting_for_transaction(watcher: &mut Client, pid: i32, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let waiting: bool = watcher
            .query_one(
                "select count(*) = 1 from pg_stat_activity where pid = $1 \
                 and wait_event_type = 'Lock' and wait_event = 'transactionid'",
                &[&pid],
            )
            .unwrap()
            .get(0);
        if waiting {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{what}: the second insert does not wait for the first transaction"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn a_duplicate_waits_for_the_transaction_that_holds_the_key() {
    let s = TestServer::start();
    setup(&s);
    s.psql("insert into t select g, 0 from generate_series(1, 100) g");
    let mut a = s.connect();
    let mut watcher = s.connect();

    // Inserted by an open transaction that then rolls back: the waiter succeeds.
    a.batch_execute("begin; insert into t values (2001, 1)")
        .unwrap();
    let (b, pid) = start_blocked(&s, "insert into t values (2001, 2)");
    until_waiting_for_transaction(&mut watcher, pid, "insert, then rollback");
    assert!(!b.is_finished());
    a.batch_execute("rollback").unwrap();
    assert_eq!(b.join().unwrap().expect("insert after the rollback"), 1);

    // Inserted by an open transaction that then commits: the waiter fails.
    a.batch_execute("begin; insert into t values (2002, 1)")
        .unwrap();
    let (b, pid) = start_blocked(&s, "insert into t values (2002, 2)");
    until_waiting_for_transaction(&mut watcher, pid, "insert, then commit");
    a.batch_execute("commit").unwrap();
    let e = b.join().unwrap().expect_err("insert after the commit");
    assert_duplicate(&e, 2002, "insert after a committed insert");

    // Deleted by an open transaction that then commits: the key is free.
    a.batch_execute("begin; delete from t where k = 10")
        .unwrap();
    let (b, pid) = start_blocked(&s, "insert into t values (10, 2)");
    until_waiting_for_transaction(&mut watcher, pid, "delete, then commit");
    a.batch_execute("commit").unwrap();
    assert_eq!(b.join().unwrap().expect("insert after the delete"), 1);

    // Deleted by an open transaction that then rolls back: still taken.
    a.batch_execute("begin; delete from t where k = 11")
        .unwrap();
    let (b, pid) = start_blocked(&s, "insert into t values (11, 2)");
    until_waiting_for_transaction(&mut watcher, pid, "delete, then rollback");
    a.batch_execute("rollback").unwrap();
    let e = b
        .join()
        .unwrap()
        .expect_err("insert after the rolled back delete");
    assert_duplicate(&e, 11, "insert after a rolled back delete");

    // The same transaction twice: fails at once, and the rollback frees the key.
    a.batch_execute("begin; insert into t values (3000, 1)")
        .unwrap();
    let e = a
        .batch_execute("insert into t values (3000, 1)")
        .unwrap_err();
    assert_duplicate(&e, 3000, "a duplicate within one transaction");
    a.batch_execute("rollback").unwrap();
    a.batch_execute("insert into t values (3000, 1)").unwrap();

    // A committed delete frees the key; an UPDATE onto a taken key fails;
    // NULLs are never equal.
    a.batch_execute("delete from t where k = 12; insert into t values (12, 3)")
        .unwrap();
    let e = a
        .batch_execute("update t set k = 13 where k = 14")
        .unwrap_err();
    assert_duplicate(&e, 13, "an update onto a taken key");
    a.batch_execute("insert into t values (null, 1), (null, 2)")
        .unwrap();
    // Within one statement, a later row that repeats an earlier one fails it all.
    let e = a
        .batch_execute("insert into t values (5000, 1), (5001, 1), (5000, 2)")
        .unwrap_err();
    assert_duplicate(&e, 5000, "a duplicate within one statement");

    assert_eq!(
        s.psql(
            "select count(*), count(k), count(distinct k), sum(k) from t \
             where k is null or k between 1 and 100 or k >= 2000"
        ),
        // 1..100 (5050) + 2001 + 2002 + 3000, and two NULLs.
        "105|103|103|12053"
    );
    check_index(&mut a);
}

#[test]
fn a_unique_violation_names_its_schema_table_and_constraint() {
    // PostgreSQL sends them with 23505 (fields s, t and n), and drivers map
    // errors to models and constraints by them.
    let s = TestServer::start();
    setup(&s);
    let mut c = s.connect();
    c.batch_execute("insert into t values (5, 1)").unwrap();
    let e = c.batch_execute("insert into t values (5, 2)").unwrap_err();
    assert_duplicate(&e, 5, "a plain duplicate");
    let db = e.as_db_error().unwrap();
    assert_eq!(db.schema(), Some("public"), "{db:?}");
    assert_eq!(db.table(), Some("t"), "{db:?}");
    assert_eq!(db.constraint(), Some("t_k_key"), "{db:?}");
}

/// INSERT ... ON CONFLICT DO NOTHING from four clients, each inserting the
/// same keys in its own order: each key is inserted exactly once, nobody
/// gets an error, and the index stays sound.
#[test]
fn four_clients_insert_on_conflict_do_nothing() {
    let seed = test_seed("UNIQUE_SEED", 1_500);
    let s = TestServer::start();
    setup(&s);
    let threads: Vec<JoinHandle<u64>> = (0..CLIENTS)
        .map(|client| {
            let cfg = s.config();
            std::thread::spawn(move || {
                let mut keys: Vec<i32> = (1..=KEYS).collect();
                TestRng::new(seed + client as u64).shuffle(&mut keys);
                let mut c = cfg.connect(postgres::NoTls).unwrap();
                let insert = c
                    .prepare("insert into t values ($1, $2) on conflict (k) do nothing")
                    .unwrap();
                keys.iter()
                    .map(|k| c.execute(&insert, &[k, &(client as i32)]).unwrap())
                    .sum()
            })
        })
        .collect();
    let inserted: u64 = threads.into_iter().map(|t| t.join().unwrap()).sum();
    assert_eq!(inserted, KEYS as u64, "seed {seed}: rows inserted");
    assert_eq!(
        s.psql("select count(*), count(distinct k) from t"),
        format!("{KEYS}|{KEYS}")
    );
    check_index(&mut s.connect());
}

/// Upserts as counters: four clients each add 1 to random keys of a small
/// set, through INSERT ... ON CONFLICT DO UPDATE, in autocommit and in
/// transactions of several statements. No increment is lost or doubled,
/// and no key appears twice.
#[test]
fn concurrent_upserts_count_every_increment() {
    const ROUNDS: usize = 400;
    const KEYSPACE: i64 = 40;
    let seed = test_seed("UNIQUE_SEED", 7);
    let s = TestServer::start();
    setup(&s);
    let threads: Vec<JoinHandle<u64>> = (0..CLIENTS)
        .map(|client| {
            let cfg = s.config();
            std::thread::spawn(move || {
                let mut rng = TestRng::new(seed + client as u64);
                let mut c = cfg.connect(postgres::NoTls).unwrap();
                let upsert = c
                    .prepare(
                        "insert into t values ($1, 1) on conflict (k) \
                         do update set client = t.client + excluded.client",
                    )
                    .unwrap();
                let mut done = 0u64;
                let mut i = 0;
                while i < ROUNDS {
                    // Every fourth round: three upserts in one transaction,
                    // retried whole if it is chosen as a deadlock victim.
                    let batch = if i % 4 == 3 { 3 } else { 1 };
                    let keys: Vec<i32> = (0..batch)
                        .map(|_| rng.range(0, KEYSPACE - 1) as i32)
                        .collect();
                    let mut tx = c.transaction().unwrap();
                    let mut ok = true;
                    for k in &keys {
                        match tx.execute(&upsert, &[k]) {
                            Ok(n) => assert_eq!(n, 1),
                            Err(e) => {
                                let code = e.code().cloned();
                                assert_eq!(
                                    code,
                                    Some(SqlState::T_R_DEADLOCK_DETECTED),
                                    "seed {seed}: {e:?}"
                                );
                                ok = false;
                                break;
                            }
                        }
                    }
                    if ok {
                        tx.commit().unwrap();
                        done += batch as u64;
                        i += batch;
                    } else {
                        tx.rollback().unwrap();
                    }
                }
                done
            })
        })
        .collect();
    let total: u64 = threads.into_iter().map(|t| t.join().unwrap()).sum();
    let summary = s.psql("select sum(client), count(*) = count(distinct k) from t");
    assert_eq!(summary, format!("{total}|t"), "seed {seed}");
    check_index(&mut s.connect());
}
