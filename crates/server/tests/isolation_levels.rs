//! The classic anomalies under each isolation level, as Hermitage tests
//! them (github.com/ept/hermitage), with what PostgreSQL 15 does: READ
//! COMMITTED prevents dirty writes and reads (G0, G1a, G1b, G1c); REPEATABLE
//! READ also prevents observed-transaction-vanishes, predicate-many-preceders,
//! lost updates (40001) and read skew, and allows write skew, which
//! SERIALIZABLE (serializable snapshot isolation) fails with 40001.
//! Savepoints' sub-transactions are checked from a second session too.

mod support;

use std::thread::JoinHandle;
use std::time::Duration;

use postgres::Client;
use support::TestServer;

fn setup(s: &TestServer) {
    s.psql("drop table if exists test; create table test (id int, value int); insert into test values (1, 10), (2, 20)");
}

fn begin(s: &TestServer, level: &str) -> Client {
    let mut c = s.connect();
    c.batch_execute(&format!("begin isolation level {level}"))
        .unwrap();
    c
}

fn rows(c: &mut Client, sql: &str) -> Vec<(i32, i32)> {
    c.query(sql, &[])
        .unwrap()
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect()
}

fn all(c: &mut Client) -> Vec<(i32, i32)> {
    rows(c, "select id, value from test order by id")
}

/// Runs `sql` in `c` on another thread; the statement must block there.
fn blocked(mut c: Client, sql: &'static str) -> JoinHandle<(Client, Result<u64, postgres::Error>)> {
    let h = std::thread::spawn(move || {
        let r = c.execute(sql, &[]);
        (c, r)
    });
    std::thread::sleep(Duration::from_millis(300));
    assert!(!h.is_finished(), "`{sql}` must wait for the other writer");
    h
}

fn message(e: &postgres::Error) -> String {
    e.as_db_error()
        .map(|d| d.message().to_string())
        .unwrap_or_default()
}

fn sqlstate(e: &postgres::Error) -> String {
    e.code().map(|c| c.code().to_string()).unwrap_or_default()
}

#[test]
fn read_committed_prevents_dirty_writes_and_reads() {
    let s = TestServer::start();
    // G0: write cycles.
    setup(&s);
    let mut t1 = begin(&s, "read committed");
    let t2 = begin(&s, "read committed");
    t1.execute("update test set value = 11 where id = 1", &[])
        .unwrap();
    let h = blocked(t2, "update test set value = 12 where id = 1");
    t1.execute("update test set value = 21 where id = 2", &[])
        .unwrap();
    t1.batch_execute("commit").unwrap();
    let (mut t2, r) = h.join().unwrap();
    assert_eq!(r.unwrap(), 1);
    t2.execute("update test set value = 22 where id = 2", &[])
        .unwrap();
    t2.batch_execute("commit").unwrap();
    assert_eq!(all(&mut s.connect()), vec![(1, 12), (2, 22)]);

    // G1a: aborted reads.
    setup(&s);
    let mut t1 = begin(&s, "read committed");
    let mut t2 = begin(&s, "read committed");
    t1.execute("update test set value = 101 where id = 1", &[])
        .unwrap();
    assert_eq!(all(&mut t2), vec![(1, 10), (2, 20)]);
    t1.batch_execute("abort").unwrap();
    assert_eq!(all(&mut t2), vec![(1, 10), (2, 20)]);
    t2.batch_execute("commit").unwrap();

    // G1b: intermediate reads.
    setup(&s);
    let mut t1 = begin(&s, "read committed");
    let mut t2 = begin(&s, "read committed");
    t1.execute("update test set value = 101 where id = 1", &[])
        .unwrap();
    assert_eq!(all(&mut t2), vec![(1, 10), (2, 20)]);
    t1.execute("update test set value = 11 where id = 1", &[])
        .unwrap();
    t1.batch_execute("commit").unwrap();
    assert_eq!(all(&mut t2), vec![(1, 11), (2, 20)]);
    t2.batch_execute("commit").unwrap();

    // G1c: circular information flow.
    setup(&s);
    let mut t1 = begin(&s, "read committed");
    let mut t2 = begin(&s, "read committed");
    t1.execute("update test set value = 11 where id = 1", &[])
        .unwrap();
    t2.execute("update test set value = 22 where id = 2", &[])
        .unwrap();
    assert_eq!(
        rows(&mut t1, "select id, value from test where id = 2"),
        vec![(2, 20)]
    );
    assert_eq!(
        rows(&mut t2, "select id, value from test where id = 1"),
        vec![(1, 10)]
    );
    t1.batch_execute("commit").unwrap();
    t2.batch_execute("commit").unwrap();
}

#[test]
fn read_committed_allows_what_postgresql_allows() {
    let s = TestServer::start();
    // PMP: a later statement sees a concurrently inserted row.
    setup(&s);
    let mut t1 = begin(&s, "read committed");
    let mut t2 = begin(&s, "read committed");
    assert!(rows(&mut t1, "select id, value from test where value = 30").is_empty());
    t2.execute("insert into test values (3, 30)", &[]).unwrap();
    t2.batch_execute("commit").unwrap();
    assert_eq!(
        rows(&mut t1, "select id, value from test where value % 3 = 0"),
        vec![(3, 30)]
    );
    t1.batch_execute("commit").unwrap();

    // PMP with a write: the waiting DELETE re-checks its predicate on the
    // newest version and finds nothing.
    setup(&s);
    let mut t1 = begin(&s, "read committed");
    let t2 = begin(&s, "read committed");
    t1.execute("update test set value = value + 10", &[])
        .unwrap();
    let h = blocked(t2, "delete from test where value = 20");
    t1.batch_execute("commit").unwrap();
    let (mut t2, r) = h.join().unwrap();
    assert_eq!(r.unwrap(), 0);
    t2.batch_execute("commit").unwrap();

    // P4: a lost update (both read 10, both write 11).
    setup(&s);
    let mut t1 = begin(&s, "read committed");
    let mut t2 = begin(&s, "read committed");
    assert_eq!(
        rows(&mut t1, "select id, value from test where id = 1"),
        vec![(1, 10)]
    );
    assert_eq!(
        rows(&mut t2, "select id, value from test where id = 1"),
        vec![(1, 10)]
    );
    t1.execute("update test set value = 11 where id = 1", &[])
        .unwrap();
    let h = blocked(t2, "update test set value = 11 where id = 1");
    t1.batch_execute("commit").unwrap();
    let (mut t2, r) = h.join().unwrap();
    assert_eq!(r.unwrap(), 1);
    t2.batch_execute("commit").unwrap();

    // G-single: read skew.
    setup(&s);
    let mut t1 = begin(&s, "read committed");
    let mut t2 = begin(&s, "read committed");
    assert_eq!(
        rows(&mut t1, "select id, value from test where id = 1"),
        vec![(1, 10)]
    );
    t2.batch_execute(
        "update test set value = 12 where id = 1; update test set value = 18 where id = 2; commit",
    )
    .unwrap();
    assert_eq!(
        rows(&mut t1, "select id, value from test where id = 2"),
        vec![(2, 18)]
    );
    t1.batch_execute("commit").unwrap();
}

#[test]
fn repeatable_read_keeps_its_snapshot_and_refuses_lost_updates() {
    let s = TestServer::start();
    // PMP: the concurrent insert stays invisible.
    setup(&s);
    let mut t1 = begin(&s, "repeatable read");
    let mut t2 = begin(&s, "repeatable read");
    assert!(rows(&mut t1, "select id, value from test where value = 30").is_empty());
    t2.execute("insert into test values (3, 30)", &[]).unwrap();
    t2.batch_execute("commit").unwrap();
    assert!(rows(&mut t1, "select id, value from test where value % 3 = 0").is_empty());
    let n: i64 = t1
        .query_one("select count(*) from test", &[])
        .unwrap()
        .get(0);
    assert_eq!(n, 2);
    t1.batch_execute("commit").unwrap();

    // PMP with a write: 40001 instead of a re-check.
    setup(&s);
    let mut t1 = begin(&s, "repeatable read");
    let mut t2 = begin(&s, "repeatable read");
    assert_eq!(all(&mut t2).len(), 2);
    t1.execute("update test set value = value + 10", &[])
        .unwrap();
    let h = blocked(t2, "delete from test where value = 20");
    t1.batch_execute("commit").unwrap();
    let (mut t2, r) = h.join().unwrap();
    let e = r.unwrap_err();
    assert_eq!(sqlstate(&e), "40001");
    assert!(message(&e).contains("could not serialize access due to concurrent update"));
    t2.batch_execute("abort").unwrap();

    // P4: the second updater fails instead of losing the first update.
    setup(&s);
    let mut t1 = begin(&s, "repeatable read");
    let mut t2 = begin(&s, "repeatable read");
    assert_eq!(
        rows(&mut t1, "select id, value from test where id = 1"),
        vec![(1, 10)]
    );
    assert_eq!(
        rows(&mut t2, "select id, value from test where id = 1"),
        vec![(1, 10)]
    );
    t1.execute("update test set value = 11 where id = 1", &[])
        .unwrap();
    let h = blocked(t2, "update test set value = 11 where id = 1");
    t1.batch_execute("commit").unwrap();
    let (mut t2, r) = h.join().unwrap();
    assert_eq!(sqlstate(&r.unwrap_err()), "40001");
    // The block is aborted now.
    let e = t2.execute("select 1", &[]).unwrap_err();
    assert_eq!(sqlstate(&e), "25P02");
    t2.batch_execute("abort").unwrap();

    // A concurrent delete: "concurrent delete".
    setup(&s);
    let mut t1 = begin(&s, "repeatable read");
    let mut t2 = begin(&s, "repeatable read");
    assert_eq!(all(&mut t2).len(), 2);
    t1.execute("delete from test where id = 1", &[]).unwrap();
    t1.batch_execute("commit").unwrap();
    let e = t2
        .execute("update test set value = 0 where id = 1", &[])
        .unwrap_err();
    assert_eq!(sqlstate(&e), "40001");
    assert!(message(&e).contains("concurrent delete"));
    t2.batch_execute("abort").unwrap();

    // An updater that rolled back is no conflict.
    setup(&s);
    let mut t1 = begin(&s, "repeatable read");
    let mut t2 = begin(&s, "repeatable read");
    assert_eq!(all(&mut t2).len(), 2);
    t1.execute("update test set value = 11 where id = 1", &[])
        .unwrap();
    let h = blocked(t2, "update test set value = 12 where id = 1");
    t1.batch_execute("rollback").unwrap();
    let (mut t2, r) = h.join().unwrap();
    assert_eq!(r.unwrap(), 1);
    t2.batch_execute("commit").unwrap();
    assert_eq!(all(&mut s.connect()), vec![(1, 12), (2, 20)]);

    // G-single: no read skew.
    setup(&s);
    let mut t1 = begin(&s, "repeatable read");
    let mut t2 = begin(&s, "repeatable read");
    assert_eq!(
        rows(&mut t1, "select id, value from test where id = 1"),
        vec![(1, 10)]
    );
    t2.batch_execute(
        "update test set value = 12 where id = 1; update test set value = 18 where id = 2; commit",
    )
    .unwrap();
    assert_eq!(
        rows(&mut t1, "select id, value from test where id = 2"),
        vec![(2, 20)]
    );
    t1.batch_execute("commit").unwrap();

    // OTV: an observed transaction does not vanish.
    setup(&s);
    let mut t1 = begin(&s, "repeatable read");
    let t2 = begin(&s, "repeatable read");
    let mut t3 = begin(&s, "repeatable read");
    t1.batch_execute(
        "update test set value = 11 where id = 1; update test set value = 19 where id = 2",
    )
    .unwrap();
    let h = blocked(t2, "update test set value = 12 where id = 1");
    t1.batch_execute("commit").unwrap();
    let (mut t2, r) = h.join().unwrap();
    assert_eq!(sqlstate(&r.unwrap_err()), "40001");
    t2.batch_execute("abort").unwrap();
    assert_eq!(all(&mut t3), vec![(1, 11), (2, 19)]);
    t3.batch_execute("commit").unwrap();

    // The snapshot is taken by the first query, not by BEGIN.
    setup(&s);
    let mut t1 = begin(&s, "repeatable read");
    s.psql("insert into test values (3, 30)");
    assert_eq!(all(&mut t1).len(), 3);
    s.psql("insert into test values (4, 40)");
    assert_eq!(all(&mut t1).len(), 3);
    // Its own changes are visible to it.
    t1.execute("insert into test values (5, 50)", &[]).unwrap();
    assert_eq!(all(&mut t1).len(), 4);
    t1.batch_execute("commit").unwrap();
}

#[test]
fn write_skew_is_allowed_in_repeatable_read_and_fails_in_serializable() {
    let s = TestServer::start();
    for level in ["repeatable read", "serializable"] {
        setup(&s);
        let mut t1 = begin(&s, level);
        let mut t2 = begin(&s, level);
        assert_eq!(all(&mut t1).len(), 2);
        assert_eq!(all(&mut t2).len(), 2);
        t1.execute("update test set value = 11 where id = 1", &[])
            .unwrap();
        t2.execute("update test set value = 21 where id = 2", &[])
            .unwrap();
        t1.batch_execute("commit").unwrap();
        if level == "repeatable read" {
            t2.batch_execute("commit").unwrap();
            assert_eq!(all(&mut s.connect()), vec![(1, 11), (2, 21)]);
            continue;
        }
        // G2-item (Hermitage): t2 is the pivot of t1 ->rw t2 ->rw t1 and
        // t1 committed first, so t2's commit fails as in PostgreSQL.
        let e = t2.batch_execute("commit").unwrap_err();
        assert_eq!(sqlstate(&e), "40001");
        let db = e.as_db_error().unwrap();
        assert_eq!(
            db.message(),
            "could not serialize access due to read/write dependencies among transactions"
        );
        assert_eq!(
            db.detail(),
            Some("Reason code: Canceled on identification as a pivot, during commit attempt.")
        );
        assert_eq!(db.hint(), Some("The transaction might succeed if retried."));
        assert_eq!(all(&mut s.connect()), vec![(1, 11), (2, 20)]);
    }
}

#[test]
fn savepoints_are_subtransactions_other_sessions_can_see_end() {
    let s = TestServer::start();
    setup(&s);
    // A row updated in a rolled-back savepoint is free again at once.
    let mut t1 = begin(&s, "read committed");
    t1.batch_execute("savepoint a; update test set value = 11 where id = 1; rollback to a")
        .unwrap();
    let mut t2 = s.connect();
    t2.batch_execute("set statement_timeout = '5s'").unwrap();
    assert_eq!(
        t2.execute("update test set value = 12 where id = 1", &[])
            .unwrap(),
        1
    );
    // A released savepoint's changes are the transaction's: others wait
    // for its end and see them after commit.
    t1.batch_execute("savepoint b; update test set value = 21 where id = 2; release b")
        .unwrap();
    let h = blocked(t2, "update test set value = value + 1 where id = 2");
    assert_eq!(all(&mut s.connect()), vec![(1, 12), (2, 20)]);
    t1.batch_execute("commit").unwrap();
    let (_, r) = h.join().unwrap();
    assert_eq!(r.unwrap(), 1);
    assert_eq!(all(&mut s.connect()), vec![(1, 12), (2, 22)]);

    // Rows a transaction changed before a savepoint can be changed again
    // inside it, and rolling back to it keeps the earlier change.
    let mut t1 = begin(&s, "repeatable read");
    t1.batch_execute(
        "update test set value = 1 where id = 1; savepoint c; update test set value = 2 where id = 1; \
         delete from test where id = 2; rollback to c; update test set value = value + 100 where id = 1; commit",
    )
    .unwrap();
    assert_eq!(all(&mut s.connect()), vec![(1, 101), (2, 22)]);
}

#[test]
fn subtransactions_survive_a_crash_as_their_parent_did() {
    let mut s = TestServer::start();
    setup(&s);
    let mut c = s.connect();
    c.batch_execute(
        "begin; insert into test values (3, 30); savepoint a; insert into test values (4, 40); \
         savepoint b; insert into test values (5, 50); rollback to b; release a; commit",
    )
    .unwrap();
    c.batch_execute("begin; savepoint a; insert into test values (6, 60); release a")
        .unwrap();
    s.kill();
    s.start_again();
    assert_eq!(
        all(&mut s.connect()),
        vec![(1, 10), (2, 20), (3, 30), (4, 40)]
    );
}

#[test]
fn pg_stat_activity_shows_transaction_ids_and_snapshot_horizons() {
    let s = TestServer::start();
    setup(&s);
    let mut writer = s.connect();
    let pid: i32 = writer
        .query_one("select pg_backend_pid()", &[])
        .unwrap()
        .get(0);
    let mut watcher = s.connect();
    let state = |w: &mut Client| -> (Option<i64>, Option<i64>, String) {
        let r = w
            .query_one(
                "select backend_xid, backend_xmin, state from pg_stat_activity where pid = $1",
                &[&pid],
            )
            .unwrap();
        (r.get(0), r.get(1), r.get(2))
    };
    assert_eq!(state(&mut watcher), (None, None, "idle".to_string()));
    writer
        .batch_execute("begin isolation level repeatable read; select * from test")
        .unwrap();
    let (xid, xmin, st) = state(&mut watcher);
    assert_eq!((xid, st.as_str()), (None, "idle in transaction"));
    let xmin = xmin.expect("a repeatable read snapshot holds the horizon");
    writer
        .batch_execute("insert into test values (3, 30)")
        .unwrap();
    let (xid, _, _) = state(&mut watcher);
    assert!(xid.expect("a writing transaction has an xid") >= xmin);
    writer.batch_execute("commit").unwrap();
    assert_eq!(state(&mut watcher), (None, None, "idle".to_string()));
}

#[test]
fn backends_can_be_cancelled_by_pid() {
    let s = TestServer::start();
    let mut sleeper = s.connect();
    let pid: i32 = sleeper
        .query_one("select pg_backend_pid()", &[])
        .unwrap()
        .get(0);
    let h = std::thread::spawn(move || {
        let r = sleeper.batch_execute("select pg_sleep(60)");
        (sleeper, r)
    });
    std::thread::sleep(Duration::from_millis(300));
    let mut admin = s.connect();
    let ok: bool = admin
        .query_one("select pg_cancel_backend($1)", &[&pid])
        .unwrap()
        .get(0);
    assert!(ok);
    let (mut sleeper, r) = h.join().unwrap();
    assert_eq!(sqlstate(&r.unwrap_err()), "57014");
    // The session goes on after a cancel.
    sleeper.batch_execute("select 1").unwrap();
    // pg_terminate_backend finds the backend (how soon an idle one goes
    // is not checked here: an idle session notices at its next message).
    let ok: bool = admin
        .query_one("select pg_terminate_backend($1)", &[&pid])
        .unwrap()
        .get(0);
    assert!(ok);
    // A pid that is no backend: false (with a WARNING).
    let ok: bool = admin
        .query_one("select pg_cancel_backend(1)", &[])
        .unwrap()
        .get(0);
    assert!(!ok);
}
