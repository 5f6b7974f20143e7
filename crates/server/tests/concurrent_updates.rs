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
