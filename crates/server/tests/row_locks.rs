//! Row-level locks between sessions: SELECT ... FOR UPDATE / NO KEY UPDATE /
//! SHARE / KEY SHARE with NOWAIT and SKIP LOCKED, UPDATE and DELETE waiting
//! for lockers, READ COMMITTED re-checks, rollback and crash. Results and
//! messages are PostgreSQL 15's.
//!
//! A statement that must wait is shown to wait in two ways: a NOWAIT probe
//! fails with 55P03, and the statement itself under a short
//! statement_timeout is cancelled (57014) instead of succeeding.

mod support;

use std::time::Duration;

use postgres::Client;
use support::TestServer;

fn code_and_message(err: postgres::Error) -> (String, String) {
    let db = err.as_db_error().expect("a server error");
    (db.code().code().to_string(), db.message().to_string())
}

/// Runs `sql` with a 300 ms statement_timeout and says whether it had to
/// be cancelled (it was waiting for a lock) rather than finishing.
fn waits(c: &mut Client, sql: &str) -> bool {
    c.batch_execute("set statement_timeout = '300ms'").unwrap();
    let r = c.batch_execute(sql);
    c.batch_execute("reset statement_timeout").unwrap();
    match r {
        Ok(()) => false,
        Err(e) => {
            let (code, msg) = code_and_message(e);
            assert_eq!(
                (code.as_str(), msg.as_str()),
                ("57014", "canceling statement due to statement timeout")
            );
            true
        }
    }
}

fn nowait_error(c: &mut Client, sql: &str) -> (String, String) {
    code_and_message(c.batch_execute(sql).expect_err("the row is locked"))
}

fn ints(c: &mut Client, sql: &str) -> Vec<i32> {
    c.query(sql, &[])
        .unwrap()
        .iter()
        .map(|r| r.get::<_, i32>(0))
        .collect()
}

fn setup(s: &TestServer) {
    s.psql("create table acct(id int, v int)");
    s.psql("insert into acct values (1, 0), (2, 0), (3, 0)");
}

#[test]
fn for_update_blocks_writers_and_lockers_until_commit() {
    let s = TestServer::start();
    setup(&s);
    let mut a = s.connect();
    let mut b = s.connect();
    a.batch_execute("begin").unwrap();
    assert_eq!(
        ints(&mut a, "select v from acct where id = 1 for update"),
        [0]
    );

    // Every other request on row 1 conflicts; row 2 is free.
    assert_eq!(
        nowait_error(
            &mut b,
            "select * from acct where id = 1 for key share nowait"
        ),
        (
            "55P03".into(),
            "could not obtain lock on row in relation \"acct\"".into()
        )
    );
    assert!(waits(&mut b, "update acct set v = v + 10 where id = 1"));
    assert!(waits(&mut b, "delete from acct where id = 1"));
    assert!(waits(&mut b, "select * from acct where id = 1 for share"));
    assert_eq!(
        ints(&mut b, "select id from acct where id = 2 for update nowait"),
        [2]
    );

    // A waiting updater goes on once the lock holder commits, on top of
    // what the holder wrote (no lost update).
    let cfg = s.config();
    let writer = std::thread::spawn(move || {
        let mut b = cfg.connect(postgres::NoTls).unwrap();
        b.execute("update acct set v = v + 10 where id = 1", &[])
            .unwrap()
    });
    std::thread::sleep(Duration::from_millis(300));
    assert!(!writer.is_finished(), "the updater must wait for the lock");
    // The holder writes what it computed from the value it locked.
    a.batch_execute("update acct set v = 0 + 1 where id = 1; commit")
        .unwrap();
    assert_eq!(writer.join().unwrap(), 1);
    assert_eq!(ints(&mut b, "select v from acct where id = 1"), [11]);
}

#[test]
fn share_locks_coexist_and_an_update_waits_for_every_holder() {
    let s = TestServer::start();
    setup(&s);
    let (mut a, mut b, mut c) = (s.connect(), s.connect(), s.connect());
    a.batch_execute("begin").unwrap();
    b.batch_execute("begin").unwrap();
    assert_eq!(
        ints(&mut a, "select id from acct where id = 1 for share"),
        [1]
    );
    assert_eq!(
        ints(&mut b, "select id from acct where id = 1 for share nowait"),
        [1]
    );
    // A third share lock and a key-share lock join them; FOR NO KEY UPDATE
    // and writers do not.
    assert_eq!(
        ints(&mut c, "select id from acct where id = 1 for share nowait"),
        [1]
    );
    assert_eq!(
        ints(
            &mut c,
            "select id from acct where id = 1 for key share nowait"
        ),
        [1]
    );
    assert_eq!(
        nowait_error(
            &mut c,
            "select id from acct where id = 1 for no key update nowait"
        )
        .0,
        "55P03"
    );
    assert!(waits(&mut c, "update acct set v = 1 where id = 1"));

    a.batch_execute("commit").unwrap();
    // b still holds its share lock.
    assert!(waits(&mut c, "update acct set v = 1 where id = 1"));
    assert_eq!(
        nowait_error(&mut c, "select id from acct where id = 1 for update nowait").0,
        "55P03"
    );
    // An upgrade by b waits for nobody else now.
    assert_eq!(
        ints(&mut b, "select id from acct where id = 1 for update nowait"),
        [1]
    );
    b.batch_execute("update acct set v = 5 where id = 1; commit")
        .unwrap();
    c.batch_execute("update acct set v = v + 1 where id = 1")
        .unwrap();
    assert_eq!(ints(&mut c, "select v from acct where id = 1"), [6]);
}

#[test]
fn key_share_does_not_block_a_non_key_update() {
    let s = TestServer::start();
    setup(&s);
    let (mut a, mut b, mut c) = (s.connect(), s.connect(), s.connect());
    a.batch_execute("begin").unwrap();
    assert_eq!(
        ints(&mut a, "select id from acct where id = 1 for key share"),
        [1]
    );
    // Every UPDATE is a non-key update (there are no unique indexes).
    b.batch_execute("set statement_timeout = '5s'; begin")
        .unwrap();
    assert_eq!(
        b.execute("update acct set v = 7 where id = 1", &[])
            .unwrap(),
        1
    );
    assert_eq!(
        ints(
            &mut c,
            "select id from acct where id = 2 for no key update nowait"
        ),
        [2]
    );
    b.batch_execute("commit").unwrap();
    // The key-share lock now also covers the new version: deleting it, or
    // locking it FOR UPDATE, waits for a.
    assert_eq!(
        nowait_error(&mut c, "select id from acct where id = 1 for update nowait").0,
        "55P03"
    );
    assert!(waits(&mut c, "delete from acct where id = 1"));
    assert_eq!(
        ints(
            &mut c,
            "select v from acct where id = 1 for no key update nowait"
        ),
        [7]
    );
    a.batch_execute("commit").unwrap();
    assert_eq!(c.execute("delete from acct where id = 1", &[]).unwrap(), 1);
}

#[test]
fn skip_locked_lets_two_workers_take_different_rows() {
    // The shape of PostgreSQL's isolation/specs/skip-locked.spec: two
    // sessions take the first unlocked row of a queue.
    let s = TestServer::start();
    s.psql("create table queue(id int, data text, status text)");
    s.psql("insert into queue values (1, 'foo', 'NEW'), (2, 'bar', 'NEW')");
    let (mut w1, mut w2) = (s.connect(), s.connect());
    let take = "select id from queue order by id for update skip locked limit 1";
    w1.batch_execute("begin").unwrap();
    w2.batch_execute("begin").unwrap();
    assert_eq!(ints(&mut w1, take), [1]);
    assert_eq!(ints(&mut w2, take), [2]);
    // A third taker finds nothing left.
    let mut w3 = s.connect();
    assert_eq!(ints(&mut w3, take), Vec::<i32>::new());
    w1.batch_execute("update queue set status = 'OK' where id = 1; commit")
        .unwrap();
    w2.batch_execute("update queue set status = 'OK' where id = 2; rollback")
        .unwrap();
    // Row 1 is free again, row 2 was never changed.
    let rows = w3
        .query(
            "select id, status from queue order by id for update nowait",
            &[],
        )
        .unwrap();
    let got: Vec<(i32, String)> = rows.iter().map(|r| (r.get(0), r.get(1))).collect();
    assert_eq!(got, [(1, "OK".to_string()), (2, "NEW".to_string())]);
}

#[test]
fn read_committed_rechecks_the_newest_version() {
    let s = TestServer::start();
    setup(&s);
    s.psql("create table owner(acct int, name text)");
    s.psql("insert into owner values (1, 'ann'), (2, 'bob')");
    let mut a = s.connect();

    // The row moves out of the WHERE clause: the locker gets nothing.
    a.batch_execute("begin; update acct set v = v + 1 where id = 1")
        .unwrap();
    let cfg = s.config();
    let locker = std::thread::spawn(move || {
        let mut b = cfg.connect(postgres::NoTls).unwrap();
        b.query(
            "select id, v from acct where v = 0 order by id for update",
            &[],
        )
        .unwrap()
        .iter()
        .map(|r| (r.get::<_, i32>(0), r.get::<_, i32>(1)))
        .collect::<Vec<_>>()
    });
    std::thread::sleep(Duration::from_millis(300));
    assert!(
        !locker.is_finished(),
        "the locker must wait for the updater"
    );
    a.batch_execute("commit").unwrap();
    assert_eq!(locker.join().unwrap(), [(2, 0), (3, 0)]);

    // The row still qualifies: the locker returns and locks the new version,
    // joined again with the other table's row.
    a.batch_execute("begin; update acct set v = 100 where id = 2")
        .unwrap();
    let cfg = s.config();
    let locker = std::thread::spawn(move || {
        let mut b = cfg.connect(postgres::NoTls).unwrap();
        b.batch_execute("begin").unwrap();
        let rows: Vec<(i32, i32, String)> = b
            .query(
                "select a.id, a.v, o.name from acct a join owner o on o.acct = a.id \
                 where a.id >= 2 order by a.id for update of a",
                &[],
            )
            .unwrap()
            .iter()
            .map(|r| (r.get(0), r.get(1), r.get(2)))
            .collect();
        (b, rows)
    });
    std::thread::sleep(Duration::from_millis(300));
    assert!(
        !locker.is_finished(),
        "the locker must wait for the updater"
    );
    a.batch_execute("commit").unwrap();
    let (mut b, rows) = locker.join().unwrap();
    assert_eq!(rows, [(2, 100, "bob".to_string())]);
    // It holds the lock on the newest version.
    assert!(waits(&mut a, "update acct set v = 0 where id = 2"));
    b.batch_execute("commit").unwrap();

    // A deleted row is left out.
    a.batch_execute("begin; delete from acct where id = 3")
        .unwrap();
    let cfg = s.config();
    let locker = std::thread::spawn(move || {
        let mut b = cfg.connect(postgres::NoTls).unwrap();
        b.query("select id from acct where id = 3 for share", &[])
            .unwrap()
            .len()
    });
    std::thread::sleep(Duration::from_millis(300));
    a.batch_execute("commit").unwrap();
    assert_eq!(locker.join().unwrap(), 0);
}

#[test]
fn a_rolled_back_lock_leaves_the_row_free() {
    let s = TestServer::start();
    setup(&s);
    let (mut a, mut b) = (s.connect(), s.connect());
    a.batch_execute("begin").unwrap();
    assert_eq!(
        ints(&mut a, "select id from acct order by id for update"),
        [1, 2, 3]
    );
    assert_eq!(
        nowait_error(&mut b, "select * from acct for share nowait").0,
        "55P03"
    );
    a.batch_execute("rollback").unwrap();
    assert_eq!(
        ints(&mut b, "select id from acct order by id for update nowait"),
        [1, 2, 3]
    );
    // A lock taken in an autocommit statement ends with it.
    assert_eq!(b.execute("update acct set v = 3", &[]).unwrap(), 3);
    assert_eq!(
        ints(&mut a, "select v from acct order by id for update nowait"),
        [3, 3, 3]
    );
}

#[test]
fn a_cursor_locks_the_rows_it_has_fetched() {
    let s = TestServer::start();
    setup(&s);
    let (mut a, mut b) = (s.connect(), s.connect());
    a.batch_execute("begin; declare c cursor for select id from acct order by id for update")
        .unwrap();
    assert_eq!(ints(&mut a, "fetch 1 from c"), [1]);
    assert_eq!(
        nowait_error(&mut b, "select * from acct where id = 1 for share nowait").0,
        "55P03"
    );
    assert_eq!(
        ints(&mut b, "select id from acct where id = 3 for update nowait"),
        [3]
    );
    a.batch_execute("commit").unwrap();
    assert_eq!(
        ints(&mut b, "select id from acct where id = 1 for update nowait"),
        [1]
    );
}

#[test]
fn locks_are_gone_after_a_crash() {
    let mut s = TestServer::start();
    setup(&s);
    s.psql("checkpoint");
    let (mut a, mut b) = (s.connect(), s.connect());
    a.batch_execute("begin").unwrap();
    b.batch_execute("begin").unwrap();
    assert_eq!(
        ints(&mut a, "select id from acct where id = 1 for update"),
        [1]
    );
    assert_eq!(
        ints(&mut a, "select id from acct where id = 2 for share"),
        [2]
    );
    assert_eq!(
        ints(&mut b, "select id from acct where id = 2 for share"),
        [2]
    );
    assert_eq!(
        ints(&mut b, "select id from acct where id = 3 for key share"),
        [3]
    );
    // Make sure the lock records reach the log's disk copy before the crash.
    let mut c = s.connect();
    c.batch_execute("create table flush_marker(a int)").unwrap();
    s.kill();
    drop((a, b, c));
    s.start_again();
    let mut c = s.connect();
    assert_eq!(
        ints(&mut c, "select id from acct order by id for update nowait"),
        [1, 2, 3]
    );
    assert_eq!(c.execute("update acct set v = 9", &[]).unwrap(), 3);
    assert_eq!(ints(&mut c, "select v from acct order by id"), [9, 9, 9]);
}

#[test]
fn savepoints_share_their_transactions_locks() {
    let s = TestServer::start();
    setup(&s);
    let (mut a, mut b) = (s.connect(), s.connect());
    a.batch_execute("begin").unwrap();
    assert_eq!(
        ints(&mut a, "select id from acct where id = 1 for share"),
        [1]
    );
    // A savepoint's update of a row its transaction locked does not wait
    // for itself.
    a.batch_execute("savepoint s; set statement_timeout = '5s'")
        .unwrap();
    assert_eq!(
        a.execute("update acct set v = 1 where id = 1", &[])
            .unwrap(),
        1
    );
    // Rolled back, the update's lock goes; the transaction's share lock stays.
    a.batch_execute("rollback to s; reset statement_timeout")
        .unwrap();
    assert_eq!(
        ints(&mut b, "select id from acct where id = 1 for share nowait"),
        [1]
    );
    assert_eq!(
        nowait_error(&mut b, "select id from acct where id = 1 for update nowait").0,
        "55P03"
    );
    // The same for a stronger lock taken in a savepoint.
    assert_eq!(
        ints(&mut a, "select id from acct where id = 2 for share"),
        [2]
    );
    a.batch_execute("savepoint t").unwrap();
    assert_eq!(
        ints(&mut a, "select id from acct where id = 2 for update"),
        [2]
    );
    assert_eq!(
        nowait_error(&mut b, "select id from acct where id = 2 for share nowait").0,
        "55P03"
    );
    a.batch_execute("rollback to t").unwrap();
    assert_eq!(
        ints(&mut b, "select id from acct where id = 2 for share nowait"),
        [2]
    );
    assert_eq!(
        nowait_error(&mut b, "select id from acct where id = 2 for update nowait").0,
        "55P03"
    );
    a.batch_execute("commit").unwrap();
    assert_eq!(
        ints(&mut b, "select v from acct order by id for update nowait"),
        [0, 0, 0]
    );
}

#[test]
fn repeatable_read_and_read_only_transactions() {
    let s = TestServer::start();
    setup(&s);
    let (mut a, mut b) = (s.connect(), s.connect());
    // A row changed after the transaction's snapshot cannot be locked.
    a.batch_execute("begin isolation level repeatable read")
        .unwrap();
    assert_eq!(ints(&mut a, "select count(*)::int from acct"), [3]);
    b.batch_execute("update acct set v = 5 where id = 3")
        .unwrap();
    let err = a
        .batch_execute("select * from acct where id = 3 for update")
        .unwrap_err();
    assert_eq!(
        code_and_message(err),
        (
            "40001".into(),
            "could not serialize access due to concurrent update".into()
        )
    );
    a.batch_execute("rollback").unwrap();
    // Unchanged rows lock fine, and the lock holds.
    a.batch_execute("begin isolation level repeatable read")
        .unwrap();
    assert_eq!(
        ints(&mut a, "select id from acct where id = 1 for update"),
        [1]
    );
    assert!(waits(&mut b, "update acct set v = 1 where id = 1"));
    a.batch_execute("commit").unwrap();

    a.batch_execute("begin transaction read only").unwrap();
    let err = a
        .batch_execute("select * from acct for no key update")
        .unwrap_err();
    assert_eq!(
        code_and_message(err),
        (
            "25006".into(),
            "cannot execute SELECT FOR NO KEY UPDATE in a read-only transaction".into()
        )
    );
    a.batch_execute("rollback").unwrap();
}
