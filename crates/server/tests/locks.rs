//! Heavyweight locks over the protocol: LOCK TABLE and NOWAIT, DDL waiting
//! for readers, the opposite-order update deadlock, advisory locks, pg_locks,
//! and PostgreSQL 15's own isolation tester.

mod support;

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use postgres::error::SqlState;
use postgres::Client;
use support::{run_with_timeout, TestServer};

fn code(e: &postgres::Error) -> String {
    e.code().map(|c| c.code().to_string()).unwrap_or_default()
}

fn message(e: &postgres::Error) -> String {
    e.as_db_error()
        .map(|d| d.message().to_string())
        .unwrap_or_default()
}

/// Waits, without a time limit of its own, until `sql` (one boolean) is true.
fn until(c: &mut Client, sql: &str) {
    loop {
        if c.query_one(sql, &[]).unwrap().get::<_, bool>(0) {
            return;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Waits until backend `pid` waits for a heavyweight lock of kind `event`.
fn until_waiting(c: &mut Client, pid: i32, event: &str) {
    until(
        c,
        &format!(
            "select count(*) = 1 from pg_stat_activity where pid = {pid} \
             and wait_event_type = 'Lock' and wait_event = '{event}'"
        ),
    );
}

fn pid(c: &mut Client) -> i32 {
    c.query_one("select pg_backend_pid()", &[]).unwrap().get(0)
}

#[test]
fn lock_table_modes_conflicts_and_nowait() {
    let s = TestServer::start();
    s.psql("create table t(x int); create view v as select x from t; create sequence q");
    let mut a = s.connect();
    let mut b = s.connect();
    let e = a.batch_execute("lock t").unwrap_err();
    assert_eq!(code(&e), "25P01");
    assert_eq!(
        message(&e),
        "LOCK TABLE can only be used in transaction blocks"
    );
    // In a multi-statement query's implicit block it is allowed.
    a.batch_execute("lock t; select 1").unwrap();

    a.batch_execute("begin; lock table only t in share mode")
        .unwrap();
    b.batch_execute("begin").unwrap();
    let e = b
        .batch_execute("lock t in row exclusive mode nowait")
        .unwrap_err();
    assert_eq!(code(&e), "55P03");
    assert_eq!(message(&e), "could not obtain lock on relation \"t\"");
    b.batch_execute(
        "rollback; begin; lock t in access share mode nowait; lock t in share mode nowait",
    )
    .unwrap();
    b.batch_execute("commit").unwrap();
    // lock_timeout ends a wait with 55P03 too; statement_timeout with 57014.
    b.batch_execute("set lock_timeout = 50").unwrap();
    let e = b.batch_execute("insert into t values (1)").unwrap_err();
    assert_eq!(code(&e), "55P03");
    assert_eq!(message(&e), "canceling statement due to lock timeout");
    b.batch_execute("set lock_timeout = 0; set statement_timeout = 50")
        .unwrap();
    let e = b.batch_execute("delete from t").unwrap_err();
    assert_eq!(code(&e), "57014");
    b.batch_execute("reset statement_timeout").unwrap();
    a.batch_execute("commit").unwrap();
    b.batch_execute("insert into t values (1)").unwrap();

    // A view locks its base tables too; sequences cannot be locked.
    a.batch_execute("begin; lock v").unwrap();
    let modes = b
        .query(
            "select relation::regclass::text, mode from pg_locks \
             where locktype = 'relation' and granted order by 1",
            &[],
        )
        .unwrap();
    let modes: Vec<(String, String)> = modes.iter().map(|r| (r.get(0), r.get(1))).collect();
    assert_eq!(
        modes,
        vec![
            ("t".into(), "AccessExclusiveLock".into()),
            ("v".into(), "AccessExclusiveLock".into())
        ]
    );
    a.batch_execute("rollback").unwrap();
    let e = a.batch_execute("begin; lock q").unwrap_err();
    assert_eq!(code(&e), "42809");
    assert_eq!(message(&e), "cannot lock relation \"q\"");
    a.batch_execute("rollback").unwrap();
    let e = a
        .batch_execute("begin; lock t in exclusive share mode")
        .unwrap_err();
    assert_eq!(e.code(), Some(&SqlState::SYNTAX_ERROR));
    a.batch_execute("rollback").unwrap();
    let e = a.batch_execute("begin; lock nosuch").unwrap_err();
    assert_eq!(code(&e), "42P01");
}

#[test]
fn ddl_waits_for_a_readers_transaction_and_later_readers_bind_again() {
    let s = TestServer::start();
    s.psql("create table t(x int); insert into t values (1)");
    let mut reader = s.connect();
    let mut watcher = s.connect();
    reader.batch_execute("begin; select * from t").unwrap();
    let cfg = s.config();
    let drop = std::thread::spawn(move || {
        let mut c = cfg.connect(postgres::NoTls).unwrap();
        let pid = pid(&mut c);
        (pid, c.batch_execute("drop table t"))
    });
    until(
        &mut watcher,
        "select count(*) = 1 from pg_stat_activity where query = 'drop table t' \
         and wait_event_type = 'Lock' and wait_event = 'relation'",
    );
    // A later reader queues behind the DROP's AccessExclusive request.
    let cfg = s.config();
    let late = std::thread::spawn(move || {
        let mut c = cfg.connect(postgres::NoTls).unwrap();
        c.query("select * from t", &[]).map(|rows| rows.len())
    });
    until(
        &mut watcher,
        "select count(*) = 2 from pg_locks where relation = 't'::regclass and not granted",
    );
    // The reader's own transaction goes on reading while it holds its lock.
    assert_eq!(reader.query("select * from t", &[]).unwrap().len(), 1);
    reader.batch_execute("commit").unwrap();
    let (_, dropped) = drop.join().unwrap();
    dropped.unwrap();
    let e = late.join().unwrap().unwrap_err();
    assert_eq!(code(&e), "42P01");
    assert_eq!(message(&e), "relation \"t\" does not exist");
}

#[test]
fn opposite_order_updates_deadlock_and_one_goes_on() {
    let s = TestServer::start();
    s.psql("create table r(id int, v int); insert into r values (1, 0), (2, 0)");
    let mut a = s.connect();
    let mut b = s.connect();
    let mut watcher = s.connect();
    let a_pid = pid(&mut a);
    let b_pid = pid(&mut b);
    a.batch_execute("set deadlock_timeout = '50ms'; begin; update r set v = 1 where id = 1")
        .unwrap();
    b.batch_execute("set deadlock_timeout = '50ms'; begin; update r set v = 2 where id = 2")
        .unwrap();
    let a_second = std::thread::spawn(move || {
        let r = a.batch_execute("update r set v = 1 where id = 2");
        (a, r)
    });
    until_waiting(&mut watcher, a_pid, "transactionid");
    // a waits for b's transaction: visible as a ShareLock request on its xid.
    let blockers: String = watcher
        .query_one(&format!("select pg_blocking_pids({a_pid})::text"), &[])
        .unwrap()
        .get(0);
    assert_eq!(blockers, format!("{{{b_pid}}}"));
    let b_result = b.batch_execute("update r set v = 2 where id = 1");
    let (mut a, a_result) = a_second.join().unwrap();
    let (loser, winner_pid) = match (&a_result, &b_result) {
        (Err(e), Ok(())) => (e, b_pid),
        (Ok(()), Err(e)) => (e, a_pid),
        other => panic!("exactly one side must fail: {other:?}"),
    };
    assert_eq!(code(loser), "40P01");
    let db = loser.as_db_error().unwrap();
    assert_eq!(db.message(), "deadlock detected");
    assert_eq!(db.hint(), Some("See server log for query details."));
    let detail = db.detail().unwrap();
    let lines: Vec<&str> = detail.lines().collect();
    assert_eq!(lines.len(), 2, "{detail}");
    for l in lines {
        assert!(
            l.starts_with("Process ") && l.contains(" waits for ShareLock on transaction "),
            "{l}"
        );
    }
    // The survivor's update went through; it commits, the loser rolls back.
    a.batch_execute("commit").unwrap();
    b.batch_execute("commit").unwrap();
    let v = if winner_pid == a_pid { 1 } else { 2 };
    let rows = watcher
        .query("select v from r order by id", &[])
        .unwrap()
        .iter()
        .map(|r| r.get::<_, i32>(0))
        .collect::<Vec<_>>();
    assert_eq!(rows, vec![v, v]);
}

#[test]
fn advisory_locks_by_session_and_transaction() {
    let s = TestServer::start();
    let mut a = s.connect();
    let mut b = s.connect();
    let a_pid = pid(&mut a);
    let try_lock = |c: &mut Client, sql: &str| -> bool { c.query_one(sql, &[]).unwrap().get(0) };
    // Session level: survives the transaction, counted per acquisition.
    a.batch_execute("begin; select pg_advisory_lock(42); select pg_advisory_lock(42); commit")
        .unwrap();
    assert!(!try_lock(&mut b, "select pg_try_advisory_lock(42)"));
    assert!(try_lock(&mut a, "select pg_advisory_unlock(42)"));
    assert!(!try_lock(&mut b, "select pg_try_advisory_lock_shared(42)"));
    assert!(try_lock(&mut a, "select pg_advisory_unlock(42)"));
    assert!(try_lock(&mut b, "select pg_try_advisory_lock_shared(42)"));
    // Shared holders share; unlocking what one does not hold warns.
    assert!(try_lock(&mut a, "select pg_try_advisory_lock_shared(42)"));
    let mut psql = s.psql_command();
    psql.arg("-c").arg("select pg_advisory_unlock(42)");
    let out = s.run_psql(psql);
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "f");
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("WARNING:  you don't own a lock of type ExclusiveLock"),
        "{out:?}"
    );
    // (int, int) keys are other locks than a bigint key.
    assert!(try_lock(&mut a, "select pg_try_advisory_lock(0, 42)"));
    let keys = b
        .query(
            "select classid::int8, objid::int8, objsubid::int4, mode from pg_locks \
             where locktype = 'advisory' order by pid, mode",
            &[],
        )
        .unwrap();
    assert_eq!(keys.len(), 3);
    assert!(keys
        .iter()
        .any(|r| (r.get::<_, i64>(0), r.get::<_, i64>(1), r.get::<_, i32>(2)) == (0, 42, 2)));
    a.batch_execute("select pg_advisory_unlock_all()").unwrap();
    // A waiting pg_advisory_lock shows as an advisory wait and is granted
    // when the holder's transaction ends (transaction-level lock).
    b.batch_execute("select pg_advisory_unlock_all(); begin; select pg_advisory_xact_lock(7)")
        .unwrap();
    assert!(!try_lock(&mut a, "select pg_try_advisory_xact_lock(7)"));
    let cfg = s.config();
    let waiter = std::thread::spawn(move || {
        a.batch_execute("select pg_advisory_lock(7)").unwrap();
        a
    });
    let mut watcher = s.connect();
    until_waiting(&mut watcher, a_pid, "advisory");
    b.batch_execute("commit").unwrap();
    let a = waiter.join().unwrap();
    assert!(!try_lock(&mut b, "select pg_try_advisory_lock(7)"));
    // Session-level locks go when the session ends.
    drop(a);
    let mut c = cfg.connect(postgres::NoTls).unwrap();
    until(&mut c, "select pg_try_advisory_lock(7)");
}

#[test]
fn pg_locks_shows_fast_path_table_and_waiting_locks() {
    let s = TestServer::start();
    s.psql("create table t(x int)");
    let mut a = s.connect();
    let mut b = s.connect();
    let a_pid = pid(&mut a);
    let b_pid = pid(&mut b);
    a.batch_execute("begin; select * from t; insert into t values (1)")
        .unwrap();
    let rows = |c: &mut Client, who: i32| -> Vec<String> {
        c.query(
            &format!(
                "select locktype || ' ' || coalesce(relation::regclass::text, '-') || ' ' || mode \
                 || ' ' || granted || ' ' || fastpath || ' ' || (waitstart is null) \
                 from pg_locks where pid = {who} order by 1"
            ),
            &[],
        )
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect()
    };
    assert_eq!(
        rows(&mut b, a_pid),
        vec![
            "relation t AccessShareLock true true true",
            "relation t RowExclusiveLock true true true",
            "transactionid - ExclusiveLock true false true",
        ]
    );
    // A strong lock moves the relation's fast-path locks into the table.
    a.batch_execute("lock t in share mode").unwrap();
    assert_eq!(
        rows(&mut b, a_pid),
        vec![
            "relation t AccessShareLock true false true",
            "relation t RowExclusiveLock true false true",
            "relation t ShareLock true false true",
            "transactionid - ExclusiveLock true false true",
        ]
    );
    let cfg = s.config();
    let waiter = std::thread::spawn(move || {
        b.batch_execute("delete from t").unwrap();
        b
    });
    let mut watcher = cfg.connect(postgres::NoTls).unwrap();
    until_waiting(&mut watcher, b_pid, "relation");
    assert_eq!(
        rows(&mut watcher, b_pid),
        vec!["relation t RowExclusiveLock false false false"]
    );
    let blocked = format!(
        "select pg_blocking_pids({b_pid})::text, \
         pg_isolation_test_session_is_blocked({b_pid}, '{{{a_pid}}}'), \
         pg_isolation_test_session_is_blocked({b_pid}, '{{1}}'), \
         pg_isolation_test_session_is_blocked({a_pid}, '{{{b_pid}}}')"
    );
    let r = watcher.query_one(&blocked, &[]).unwrap();
    assert_eq!(r.get::<_, String>(0), format!("{{{a_pid}}}"));
    assert!(r.get::<_, bool>(1));
    assert!(!r.get::<_, bool>(2));
    assert!(!r.get::<_, bool>(3));
    a.batch_execute("commit").unwrap();
    waiter.join().unwrap();
    assert_eq!(rows(&mut watcher, b_pid), Vec::<String>::new());
}

/// The isolation specs (PostgreSQL 15.18's `src/test/isolation`, in
/// tests/isolation/) that pass now. Not yet: update-locked-tuple (a FOR KEY
/// SHARE lock, a foreign key's check, waits for a running non-key update of
/// the row; PostgreSQL lets it through); of the SERIALIZABLE ones,
/// ri-trigger and partial-index need triggers and partial indexes.
const ISOLATION_SPECS: &[&str] = &[
    "deadlock-simple",
    "nowait",
    "skip-locked",
    "delete-abort-savept",
    "insert-conflict-do-nothing",
    "insert-conflict-do-update",
    "tuplelock-update",
    // Serializable snapshot isolation (txn::ssi).
    "simple-write-skew",
    "read-only-anomaly",
    "read-only-anomaly-2",
    "read-only-anomaly-3",
    "read-write-unique",
    "read-write-unique-2",
    "read-write-unique-3",
    "read-write-unique-4",
    "referential-integrity",
    "predicate-lock-hot-tuple",
    "two-ids",
    "total-cash",
    "receipt-report",
    "project-manager",
    "classroom-scheduling",
    "multiple-row-versions",
    "temporal-range-integrity",
    "update-conflict-out",
    "index-only-scan",
    // A trigger-based foreign key (PL/pgSQL triggers, exec::triggers).
    "ri-trigger",
];

const ISOLATION_REGRESS: &str =
    "/usr/lib/postgresql/15/lib/pgxs/src/test/isolation/pg_isolation_regress";

#[test]
fn postgresql_isolation_tester() {
    assert!(
        Path::new(ISOLATION_REGRESS).is_file(),
        "{ISOLATION_REGRESS} not found: install PostgreSQL 15's server package \
         (apt-get install postgresql-15)"
    );
    let s = TestServer::start();
    s.psql("create database iso");
    let out = tempfile::tempdir().unwrap();
    let input = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/isolation");
    let mut cmd = Command::new(ISOLATION_REGRESS);
    cmd.env("PGHOST", "127.0.0.1")
        .env("PGPORT", s.port().to_string())
        .env("PGUSER", "postgres")
        .arg("--use-existing")
        .arg("--dbname=iso")
        .arg(format!("--inputdir={}", input.display()))
        .arg(format!("--outputdir={}", out.path().display()))
        .args(ISOLATION_SPECS);
    let result = run_with_timeout(&mut cmd, Duration::from_secs(240));
    let diffs = std::fs::read_to_string(out.path().join("regression.diffs")).unwrap_or_default();
    assert!(
        result.status.success(),
        "pg_isolation_regress failed:\n{}\n{}\n{diffs}",
        String::from_utf8_lossy(&result.stdout),
        String::from_utf8_lossy(&result.stderr)
    );
}

#[test]
fn rollback_to_savepoint_releases_the_sub_transactions_locks() {
    let s = TestServer::start();
    s.psql("create table t(x int); create table u(x int)");
    let mut a = s.connect();
    let mut b = s.connect();
    a.batch_execute("begin; lock u in share mode; savepoint s1; lock t")
        .unwrap();
    let e = b
        .batch_execute("begin; lock t in access share mode nowait")
        .unwrap_err();
    assert_eq!(code(&e), "55P03");
    b.batch_execute("rollback").unwrap();
    a.batch_execute("rollback to savepoint s1").unwrap();
    // t's lock went with the savepoint; u's, taken before it, stays.
    b.batch_execute("begin; lock t in access share mode nowait; rollback")
        .unwrap();
    let e = b
        .batch_execute("begin; lock u in row exclusive mode nowait")
        .unwrap_err();
    assert_eq!(code(&e), "55P03");
    b.batch_execute("rollback").unwrap();
    // Catalog changes begun inside the savepoint go with its catalog-change
    // lock; another session's DDL then commits, and ours builds on it.
    a.batch_execute("savepoint s2; create table x(y int); rollback to savepoint s2")
        .unwrap();
    b.batch_execute("create table y(z int)").unwrap();
    a.batch_execute("create table z(w int); commit").unwrap();
    let names: Vec<String> = b
        .query(
            "select relname::text from pg_class where relname in ('x', 'y', 'z') order by 1",
            &[],
        )
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert_eq!(names, vec!["y", "z"]);
}

#[test]
fn for_update_opens_its_tables_in_row_share_and_its_waits_are_lock_waits() {
    let s = TestServer::start();
    s.psql("create table t(id int, v int); insert into t values (1, 0)");
    let mut a = s.connect();
    let mut b = s.connect();
    let mut watcher = s.connect();
    let b_pid = pid(&mut b);
    a.batch_execute("begin; select * from t for update")
        .unwrap();
    let modes: Vec<String> = watcher
        .query(
            "select mode from pg_locks where relation = 't'::regclass order by 1",
            &[],
        )
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert_eq!(modes, vec!["RowShareLock"]);
    let waiter = std::thread::spawn(move || {
        let r = b.batch_execute("set lock_timeout = '60s'; select * from t for share");
        (b, r)
    });
    // b waits for a's transaction (its row lock), as a lock wait.
    until_waiting(&mut watcher, b_pid, "transactionid");
    a.batch_execute("commit").unwrap();
    let (_, r) = waiter.join().unwrap();
    r.unwrap();
}
