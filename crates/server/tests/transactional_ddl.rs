//! DDL commits and rolls back with its transaction: the catalog's rows are
//! MVCC heap rows, relation files created by a rolled-back transaction are
//! removed and files dropped by a committed one go only at commit; other
//! sessions see a change only once it commits; concurrent DDL waits for the
//! DDL lock; a crash in the middle of a DDL transaction leaves none of it.

mod support;

use std::path::Path;
use std::time::Duration;

use support::TestServer;

/// The relation files of database postgres (oid 5).
fn relation_files(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir.join("base/5"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

fn code(e: &postgres::Error) -> String {
    e.code()
        .map_or_else(|| e.to_string(), |c| c.code().to_string())
}

#[test]
fn rolled_back_ddl_leaves_no_trace_on_disk_or_in_the_catalog() {
    let server = TestServer::start();
    let mut c = server.connect();
    c.batch_execute("create table kept (a int); insert into kept values (1), (2)")
        .unwrap();
    let files_before = relation_files(&server.data_dir());
    c.batch_execute(
        "begin;
         create table made (x int);
         insert into made values (1);
         alter table kept add column b text;
         truncate kept;
         drop table kept;
         rollback",
    )
    .unwrap();
    assert_eq!(relation_files(&server.data_dir()), files_before);
    let rows = c.query("select * from kept order by a", &[]).unwrap();
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0].columns().len(), 1, "the added column is gone");
    let err = c.query("select * from made", &[]).unwrap_err();
    assert_eq!(code(&err), "42P01");
    let n: i64 = c
        .query_one(
            "select count(*) from pg_class where relname in ('kept', 'made')",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(n, 1);

    // The same changes committed: the old files go at commit, not before.
    c.batch_execute("begin; create table made (x int); truncate kept")
        .unwrap();
    let during = relation_files(&server.data_dir());
    assert_eq!(during.len(), files_before.len() + 2, "{during:?}");
    c.batch_execute("commit").unwrap();
    assert_eq!(
        relation_files(&server.data_dir()).len(),
        files_before.len() + 1
    );
    c.batch_execute("drop table made; drop table kept").unwrap();
    assert!(relation_files(&server.data_dir()).is_empty());
}

#[test]
fn other_sessions_see_ddl_only_after_commit_and_concurrent_ddl_waits() {
    let server = TestServer::start();
    let mut a = server.connect();
    let mut b = server.connect();
    a.batch_execute("begin; create table t (x int); insert into t values (7)")
        .unwrap();
    assert_eq!(code(&b.query("select * from t", &[]).unwrap_err()), "42P01");
    // DDL of another transaction waits for the DDL lock, cancellable by
    // statement_timeout.
    b.batch_execute("set statement_timeout = 300").unwrap();
    let err = b.batch_execute("create table u (y int)").unwrap_err();
    assert_eq!(code(&err), "57014");
    b.batch_execute("set statement_timeout = 0").unwrap();
    let cfg = server.config();
    let waiter = std::thread::spawn(move || {
        let mut c = cfg.connect(postgres::NoTls).unwrap();
        c.batch_execute("create table t (x int)")
            .map_err(|e| code(&e))
    });
    std::thread::sleep(Duration::from_millis(300));
    assert!(!waiter.is_finished(), "the second CREATE waits");
    a.batch_execute("commit").unwrap();
    assert_eq!(waiter.join().unwrap(), Err("42P07".to_string()));
    let x: i32 = b.query_one("select x from t", &[]).unwrap().get(0);
    assert_eq!(x, 7);
}

#[test]
fn commands_that_cannot_run_in_a_block_say_so() {
    let server = TestServer::start();
    let mut c = server.connect();
    c.batch_execute("begin").unwrap();
    let err = c.batch_execute("create database d").unwrap_err();
    assert_eq!(code(&err), "25001");
    c.batch_execute("rollback").unwrap();
    let err = c
        .simple_query("select 1; drop database postgres")
        .unwrap_err();
    assert_eq!(code(&err), "25001");
    c.batch_execute("create database d").unwrap();
    let n: i64 = c
        .query_one("select count(*) from pg_database where datname = 'd'", &[])
        .unwrap()
        .get(0);
    assert_eq!(n, 1);
}

#[test]
fn a_crash_in_the_middle_of_ddl_leaves_a_consistent_catalog() {
    let mut server = TestServer::start();
    let mut c = server.connect();
    c.batch_execute(
        "create table before_crash (a int, b text default 'x');
         insert into before_crash values (1);
         analyze before_crash",
    )
    .unwrap();
    let mut open = server.connect();
    open.batch_execute(
        "begin;
         create table never (x int);
         insert into never values (1);
         alter table before_crash add column c int;
         drop table before_crash",
    )
    .unwrap();
    server.kill();
    drop(open);
    drop(c);
    server.start_again();
    let mut c = server.connect();
    let rows = c.query("select a, b from before_crash", &[]).unwrap();
    assert_eq!(rows.len(), 1);
    let cols: i64 = c
        .query_one(
            "select count(*) from pg_attribute a join pg_class c on c.oid = a.attrelid
             where c.relname = 'before_crash'",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(cols, 2);
    let tuples: f32 = c
        .query_one(
            "select reltuples from pg_class where relname = 'before_crash'",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(tuples, 1.0);
    assert_eq!(
        code(&c.query("select * from never", &[]).unwrap_err()),
        "42P01"
    );
    // The name is free and DDL works after recovery.
    c.batch_execute("create table never (y int); drop table before_crash")
        .unwrap();
}

#[test]
fn sequence_values_handed_out_before_a_crash_are_not_handed_out_again() {
    let mut server = TestServer::start();
    let mut c = server.connect();
    c.batch_execute("create sequence q; create table t (id serial, v int)")
        .unwrap();
    let next = |c: &mut postgres::Client| -> i64 {
        c.query_one("select nextval('q')", &[]).unwrap().get(0)
    };
    let mut seen = 0;
    for round in 0..3 {
        for _ in 0..5 {
            let v = next(&mut c);
            assert!(v > seen, "round {round}: {v} after {seen}");
            seen = v;
        }
        c.batch_execute("insert into t (v) values (1)").unwrap();
        // A checkpoint between log records: redo starts after it, so the
        // values handed out since must be covered by a later record.
        c.batch_execute("checkpoint").unwrap();
        let v = next(&mut c);
        assert!(v > seen);
        seen = v;
        server.kill();
        server.start_again();
        c = server.connect();
    }
    let v = next(&mut c);
    assert!(v > seen, "{v} after {seen}");
    let ids: Vec<i32> = c
        .query("select id from t order by id", &[])
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert_eq!(ids.len(), 3);
    assert!(ids.windows(2).all(|w| w[0] < w[1]), "{ids:?}");
}
