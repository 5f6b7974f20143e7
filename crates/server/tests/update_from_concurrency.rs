//! UPDATE ... FROM and DELETE ... USING under READ COMMITTED when another
//! transaction changes target rows first: the statement waits, then
//! re-checks each changed row's newest version against WHERE and the join
//! with the same FROM rows (PostgreSQL's EvalPlanQual). The expected
//! results are what PostgreSQL 15 gives for the same steps.

mod support;

use std::time::Duration;

use support::TestServer;

fn rows(c: &mut postgres::Client, sql: &str) -> Vec<(i32, i32)> {
    c.query(sql, &[])
        .unwrap()
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect()
}

#[test]
fn update_from_rechecks_concurrently_updated_target_rows() {
    let s = TestServer::start();
    s.psql("create table acct(id int, v int)");
    s.psql("create table deltas(id int, delta int)");
    s.psql("insert into acct values (1, 0), (2, 0), (3, 0), (4, 0)");
    s.psql("insert into deltas values (1, 10), (2, 10), (3, 10), (4, 10)");
    let mut a = s.connect();
    // Row 1 moves on, row 2 stops passing WHERE, row 3 stops matching the
    // join, row 4 moves on.
    a.batch_execute(
        "begin; update acct set v = v + 1 where id = 1; update acct set v = 5 where id = 2; \
         update acct set id = 99 where id = 3; update acct set v = 7 where id = 4",
    )
    .unwrap();
    let cfg = s.config();
    let b = std::thread::spawn(move || {
        let mut b = cfg.connect(postgres::NoTls).unwrap();
        let mut r = rows(
            &mut b,
            "update acct set v = acct.v + d.delta from deltas d \
             where d.id = acct.id and acct.v <> 5 returning acct.id, acct.v",
        );
        r.sort();
        r
    });
    std::thread::sleep(Duration::from_millis(300));
    assert!(
        !b.is_finished(),
        "UPDATE ... FROM must wait for the first updater"
    );
    a.batch_execute("commit").unwrap();
    assert_eq!(b.join().unwrap(), vec![(1, 11), (4, 17)]);
    let mut c = s.connect();
    assert_eq!(
        rows(&mut c, "select id, v from acct order by id"),
        vec![(1, 11), (2, 5), (4, 17), (99, 0)]
    );
}

#[test]
fn delete_using_rechecks_and_repeatable_read_fails() {
    let s = TestServer::start();
    s.psql("create table acct(id int, v int)");
    s.psql("create table deltas(id int, delta int)");
    s.psql("insert into acct values (1, 0), (2, 0)");
    s.psql("insert into deltas values (1, 10), (2, 10)");
    let mut a = s.connect();
    a.batch_execute(
        "begin; update acct set v = 1 where id = 1; update acct set v = 2 where id = 2",
    )
    .unwrap();
    let cfg = s.config();
    let b = std::thread::spawn(move || {
        let mut b = cfg.connect(postgres::NoTls).unwrap();
        rows(
            &mut b,
            "delete from acct using deltas d where d.id = acct.id and acct.v < 2 \
             returning acct.id, acct.v",
        )
    });
    std::thread::sleep(Duration::from_millis(300));
    assert!(
        !b.is_finished(),
        "DELETE ... USING must wait for the updater"
    );
    a.batch_execute("commit").unwrap();
    assert_eq!(b.join().unwrap(), vec![(1, 1)]);
    let mut c = s.connect();
    assert_eq!(rows(&mut c, "select id, v from acct"), vec![(2, 2)]);

    // REPEATABLE READ cannot update a row changed after its snapshot.
    c.batch_execute("begin isolation level repeatable read; select 1")
        .unwrap();
    a.batch_execute("update acct set v = 3 where id = 2")
        .unwrap();
    let err = c
        .batch_execute("update acct set v = d.delta from deltas d where d.id = acct.id")
        .unwrap_err();
    assert_eq!(err.as_db_error().unwrap().code().code(), "40001");
    c.batch_execute("rollback").unwrap();
}

#[test]
fn recheck_applies_the_target_index_conditions() {
    let s = TestServer::start();
    s.psql("create table acct(id int primary key, v int)");
    s.psql("insert into acct select g, 0 from generate_series(1, 2000) g");
    s.psql("create table deltas(id int, delta int)");
    s.psql("insert into deltas values (1, 10)");
    s.psql("analyze acct");
    let plan = s.psql(
        "explain (costs off) update acct set v = d.delta from deltas d where acct.id = 5 and d.id = 1",
    );
    assert!(plan.contains("Index Cond: (id = 5)"), "{plan}");
    let mut a = s.connect();
    a.batch_execute("begin; update acct set id = 5000 where id = 5")
        .unwrap();
    let cfg = s.config();
    let b = std::thread::spawn(move || {
        let mut b = cfg.connect(postgres::NoTls).unwrap();
        b.execute(
            "update acct set v = d.delta from deltas d where acct.id = 5 and d.id = 1",
            &[],
        )
        .unwrap()
    });
    std::thread::sleep(Duration::from_millis(300));
    assert!(!b.is_finished(), "the update must wait for the first one");
    a.batch_execute("commit").unwrap();
    // The newest version no longer has id 5: nothing is updated.
    assert_eq!(b.join().unwrap(), 0);
    assert_eq!(s.psql("select v from acct where id = 5000").trim(), "0");
}
