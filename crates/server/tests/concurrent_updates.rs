//! Concurrent writers of the same row under READ COMMITTED: the second waits
//! for the first, then works on the newest version (PostgreSQL's
//! EvalPlanQual) instead of losing the first update or failing.

mod support;

use std::time::Duration;

use support::TestServer;

#[test]
fn second_updater_waits_and_applies_to_the_new_version() {
    let s = TestServer::start();
    s.psql("create table acct(id int, v int)");
    s.psql("insert into acct values (1, 0), (2, 0)");
    let mut a = s.connect();
    a.batch_execute("begin; update acct set v = v + 1 where id = 1")
        .unwrap();
    let cfg = s.config();
    let b = std::thread::spawn(move || {
        let mut b = cfg.connect(postgres::NoTls).unwrap();
        b.execute("update acct set v = v + 10 where id = 1", &[])
            .unwrap()
    });
    std::thread::sleep(Duration::from_millis(300));
    assert!(
        !b.is_finished(),
        "the second updater must wait for the first"
    );
    a.batch_execute("commit").unwrap();
    assert_eq!(b.join().unwrap(), 1);
    assert_eq!(s.psql("select v from acct where id = 1").trim(), "11");

    // A concurrent delete: the waiting updater finds nothing left to update.
    a.batch_execute("begin; delete from acct where id = 2")
        .unwrap();
    let cfg = s.config();
    let b = std::thread::spawn(move || {
        let mut b = cfg.connect(postgres::NoTls).unwrap();
        b.execute("update acct set v = v + 10 where id = 2", &[])
            .unwrap()
    });
    std::thread::sleep(Duration::from_millis(200));
    a.batch_execute("commit").unwrap();
    assert_eq!(b.join().unwrap(), 0);

    // An update that makes the row stop matching: the re-check skips it.
    s.psql("insert into acct values (3, 0)");
    a.batch_execute("begin; update acct set v = 5 where id = 3")
        .unwrap();
    let cfg = s.config();
    let b = std::thread::spawn(move || {
        let mut b = cfg.connect(postgres::NoTls).unwrap();
        b.execute("update acct set v = 100 where id = 3 and v = 0", &[])
            .unwrap()
    });
    std::thread::sleep(Duration::from_millis(200));
    a.batch_execute("commit").unwrap();
    assert_eq!(b.join().unwrap(), 0);
    assert_eq!(s.psql("select v from acct where id = 3").trim(), "5");
}

#[test]
fn many_clients_incrementing_one_row_lose_nothing() {
    let s = TestServer::start();
    s.psql("create table counter(id int, n int)");
    s.psql("insert into counter values (1, 0)");
    let threads: Vec<_> = (0..4)
        .map(|_| {
            let cfg = s.config();
            std::thread::spawn(move || {
                let mut c = cfg.connect(postgres::NoTls).unwrap();
                for _ in 0..50 {
                    c.execute("update counter set n = n + 1 where id = 1", &[])
                        .unwrap();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    assert_eq!(s.psql("select n from counter").trim(), "200");
}

#[test]
fn statement_timeout_cancels_a_waiting_or_sleeping_statement() {
    let s = TestServer::start();
    let mut c = s.connect();
    c.batch_execute("set statement_timeout = '200ms'").unwrap();
    let err = c.batch_execute("select pg_sleep(5)").unwrap_err();
    let db = err.as_db_error().expect("server error");
    assert_eq!(db.code().code(), "57014");
    assert_eq!(db.message(), "canceling statement due to statement timeout");
    // A row lock wait is cut short too, and the session goes on.
    c.batch_execute("create table t(a int); insert into t values (1)")
        .unwrap();
    let mut holder = s.connect();
    holder.batch_execute("begin; update t set a = 2").unwrap();
    let started = std::time::Instant::now();
    assert!(c.batch_execute("update t set a = 3").is_err());
    assert!(started.elapsed() < Duration::from_secs(3));
    holder.batch_execute("rollback").unwrap();
    c.batch_execute("reset statement_timeout").unwrap();
    c.batch_execute("update t set a = 4").unwrap();
}
