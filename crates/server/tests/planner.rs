//! The planner stage through real clients: joins written in WHERE are
//! planned as joins (no cross products), the join search handles larger
//! comma joins, EXPLAIN works through the extended protocol, and a running
//! join can be stopped by statement_timeout, a cancel, or a vanished client.
//! Plan shapes against PostgreSQL 15 are in `tests/explain/` (explain.rs).

mod support;

use std::process::Stdio;
use std::thread;
use std::time::{Duration, Instant};

use support::TestServer;

fn plan_of(c: &mut postgres::Client, sql: &str) -> String {
    c.query(&format!("explain (costs off) {sql}"), &[])
        .unwrap()
        .iter()
        .map(|r| r.get::<_, String>(0))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn comma_joins_are_joined_on_their_where_equalities() {
    let s = TestServer::start();
    let mut c = s.connect();
    for i in 1..=6 {
        c.batch_execute(&format!(
            "create table t{i} (a int, b int);
             insert into t{i} select g, g % 5 from generate_series(1, 10) g;"
        ))
        .unwrap();
    }
    // Five relations: dynamic programming over every subset.
    let five = "select count(*) from t1, t2, t3, t4, t5 \
                where t1.a = t2.a and t2.a = t3.a and t3.a = t4.a and t4.a = t5.a";
    let plan = plan_of(&mut c, five);
    assert_eq!(plan.matches("Hash Join").count(), 4, "{plan}");
    assert!(!plan.contains("Nested Loop"), "{plan}");
    let started = Instant::now();
    let n: i64 = c.query_one(five, &[]).unwrap().get(0);
    assert_eq!(n, 10);
    // Generous: a cross product of five 10-row tables with these
    // filters took seconds; a hash-join plan takes milliseconds.
    assert!(started.elapsed() < Duration::from_secs(5));
    // Six relations with join_collapse_limit below that: the greedy search.
    c.batch_execute("set join_collapse_limit = 3").unwrap();
    let six = "select count(*) from t6, t5, t4, t3, t2, t1 \
               where t1.a = t2.a and t2.b = t3.b and t3.a = t4.a and t4.a = t5.a \
               and t5.a = t6.a and t1.a < 8";
    let plan = plan_of(&mut c, six);
    assert_eq!(plan.matches("Hash Join").count(), 5, "{plan}");
    let greedy: i64 = c.query_one(six, &[]).unwrap().get(0);
    c.batch_execute("reset join_collapse_limit").unwrap();
    let dp: i64 = c.query_one(six, &[]).unwrap().get(0);
    // The same answer whatever the order, and the one a cross product
    // filtered by every condition gives.
    c.batch_execute("set enable_hashjoin = off").unwrap();
    let nested: i64 = c.query_one(six, &[]).unwrap().get(0);
    assert_eq!((greedy, dp), (nested, nested));
    assert!(nested > 0);
}

#[test]
fn reordered_joins_keep_the_written_column_order() {
    let s = TestServer::start();
    let mut c = s.connect();
    c.batch_execute(
        "create table big (id int, k int, note text);
         insert into big select g, g % 3, 'n' || g from generate_series(1, 3000) g;
         create table small (k int, label text);
         insert into small values (0, 'zero'), (1, 'one');
         create table mid (id int, flag bool);
         insert into mid select g, g % 2 = 0 from generate_series(1, 300) g;",
    )
    .unwrap();
    let rows = c
        .query(
            "select * from small, big, mid where big.k = small.k and mid.id = big.id \
             and mid.flag and big.id < 7 order by big.id",
            &[],
        )
        .unwrap();
    let got: Vec<(i32, String, i32, i32, String, i32, bool)> = rows
        .iter()
        .map(|r| {
            (
                r.get(0),
                r.get(1),
                r.get(2),
                r.get(3),
                r.get(4),
                r.get(5),
                r.get(6),
            )
        })
        .collect();
    assert_eq!(
        got,
        vec![
            (1, "one".into(), 4, 1, "n4".into(), 4, true),
            (0, "zero".into(), 6, 0, "n6".into(), 6, true),
        ]
    );
    // Outer joins keep their meaning when their inputs are swapped.
    let n: i64 = c
        .query_one(
            "select count(*) from small left join big on big.k = small.k and big.id < 10",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(n, 6);
    let rows = c
        .query(
            "select s.label, b.id from big b right join small s on b.k = s.k and b.id < 4 \
             order by 1, 2",
            &[],
        )
        .unwrap();
    let got: Vec<(String, i32)> = rows.iter().map(|r| (r.get(0), r.get(1))).collect();
    assert_eq!(got, vec![("one".into(), 1), ("zero".into(), 3)]);
}

#[test]
fn explain_through_the_extended_protocol() {
    let s = TestServer::start();
    let mut c = s.connect();
    c.batch_execute("create table e (a int)").unwrap();
    let stmt = c.prepare("explain select * from e where a = $1").unwrap();
    assert_eq!(stmt.columns()[0].name(), "QUERY PLAN");
    let lines: Vec<String> = c
        .query(&stmt, &[&5i32])
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert_eq!(
        lines[0],
        "Seq Scan on e  (cost=0.00..41.88 rows=13 width=4)"
    );
    // The first executions get custom plans, the value written in (as
    // PostgreSQL's EXPLAIN EXECUTE shows).
    assert_eq!(lines[1], "  Filter: (a = 5)");
    let analyze: Vec<String> = c
        .query("explain analyze select * from e", &[])
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert!(analyze[0].contains("(actual time="), "{analyze:?}");
    assert!(analyze.iter().any(|l| l.starts_with("Planning Time: ")));
    assert!(analyze.iter().any(|l| l.starts_with("Execution Time: ")));
}

const CROSS_JOIN: &str = "select count(*) from generate_series(1, 100000) a, \
                          generate_series(1, 100000) b where a.a + b.b < 0";

#[test]
fn statement_timeout_and_cancel_stop_a_cross_join() {
    let s = TestServer::start();
    let mut c = s.connect();
    c.batch_execute("set statement_timeout = '1s'").unwrap();
    let started = Instant::now();
    let err = c.query_one(CROSS_JOIN, &[]).unwrap_err();
    assert_eq!(err.code().map(|c| c.code()), Some("57014"), "{err:?}");
    assert!(
        started.elapsed() < Duration::from_secs(4),
        "took {:?}",
        started.elapsed()
    );
    c.batch_execute("reset statement_timeout").unwrap();
    let cancel = c.cancel_token();
    let canceller = thread::spawn(move || {
        thread::sleep(Duration::from_millis(300));
        cancel.cancel_query(postgres::NoTls).unwrap();
    });
    let started = Instant::now();
    let err = c.query_one(CROSS_JOIN, &[]).unwrap_err();
    canceller.join().unwrap();
    assert_eq!(err.code().map(|c| c.code()), Some("57014"), "{err:?}");
    assert!(started.elapsed() < Duration::from_secs(4));
}

#[test]
fn a_vanished_client_stops_its_cross_join() {
    let s = TestServer::start_with(&[("client_connection_check_interval", "100ms")]);
    let mut psql = s.psql_command();
    psql.arg("-c")
        .arg(CROSS_JOIN)
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let mut child = psql.spawn().unwrap();
    let mut monitor = s.connect();
    let running = |c: &mut postgres::Client| -> i64 {
        c.query_one(
            "select count(*) from pg_stat_activity where state = 'active' \
             and query like 'select count(*) from generate_series%'",
            &[],
        )
        .unwrap()
        .get(0)
    };
    let deadline = Instant::now() + Duration::from_secs(20);
    while running(&mut monitor) == 0 {
        assert!(Instant::now() < deadline, "the join never started");
        thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let killed = Instant::now();
    while running(&mut monitor) > 0 {
        assert!(
            killed.elapsed() < Duration::from_secs(5),
            "the join of a vanished client still runs after {:?}",
            killed.elapsed()
        );
        thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_prepared_system_view_reads_fresh_rows() {
    let s = TestServer::start();
    let mut c = s.connect();
    // Counted by pid: the server's readiness probe may still be leaving.
    let stmt = c
        .prepare("select count(*) from pg_stat_activity where pid = $1")
        .unwrap();
    let mut other = s.connect();
    let pid: i32 = other
        .query_one("select pg_backend_pid()", &[])
        .unwrap()
        .get(0);
    let during: i64 = c.query_one(&stmt, &[&pid]).unwrap().get(0);
    assert_eq!(during, 1);
    drop(other);
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let after: i64 = c.query_one(&stmt, &[&pid]).unwrap().get(0);
        if after == 0 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the ended session is still shown"
        );
        thread::sleep(Duration::from_millis(20));
    }
    // pg_settings shows the session's current values at each execution.
    let show = c
        .prepare("select setting from pg_settings where name = 'enable_hashjoin'")
        .unwrap();
    let v: String = c.query_one(&show, &[]).unwrap().get(0);
    assert_eq!(v, "on");
    c.batch_execute("set enable_hashjoin = off").unwrap();
    let v: String = c.query_one(&show, &[]).unwrap().get(0);
    assert_eq!(v, "off");
}

/// The plan each execution of a prepared EXPLAIN ran with (its Filter line).
fn prepared_filters(c: &mut postgres::Client, runs: usize) -> Vec<String> {
    let st = c
        .prepare("explain (costs off) select a from pc where a = $1")
        .unwrap();
    (0..runs)
        .map(|_| {
            let rows = c.query(&st, &[&42i32]).unwrap();
            rows.iter()
                .map(|r| r.get::<_, String>(0))
                .find(|l| l.contains("Filter"))
                .unwrap()
                .trim()
                .to_string()
        })
        .collect()
}

#[test]
fn prepared_statements_get_custom_plans_then_a_cached_generic_plan() {
    let s = TestServer::start();
    let mut c = s.connect();
    c.batch_execute(
        "create table pc (a int, b int); insert into pc select g, g from generate_series(1, 100) g",
    )
    .unwrap();
    let custom = "Filter: (a = 42)".to_string();
    let generic = "Filter: (a = $1)".to_string();
    // PostgreSQL's auto mode: five custom plans, then the generic plan,
    // which costs no more here (the same estimate without re-planning).
    let mut want = vec![custom.clone(); 5];
    want.extend(vec![generic.clone(); 3]);
    assert_eq!(prepared_filters(&mut c, 8), want);
    c.batch_execute("set plan_cache_mode = force_custom_plan")
        .unwrap();
    assert_eq!(prepared_filters(&mut c, 7), vec![custom; 7]);
    c.batch_execute("set plan_cache_mode = force_generic_plan")
        .unwrap();
    assert_eq!(prepared_filters(&mut c, 2), vec![generic; 2]);
    let err = c
        .batch_execute("set plan_cache_mode = sometimes")
        .unwrap_err();
    assert_eq!(
        err.code(),
        Some(&postgres::error::SqlState::INVALID_PARAMETER_VALUE)
    );
    // Every mode returns the same rows, and a cached statement is bound
    // again after DDL changes its table.
    let st = c.prepare("select b from pc where a = $1").unwrap();
    for mode in ["auto", "force_custom_plan", "force_generic_plan"] {
        c.batch_execute(&format!("set plan_cache_mode = {mode}"))
            .unwrap();
        for _ in 0..7 {
            let b: i32 = c.query_one(&st, &[&42i32]).unwrap().get(0);
            assert_eq!(b, 42);
        }
    }
    c.batch_execute("alter table pc add column c int; update pc set b = -b")
        .unwrap();
    let b: i32 = c.query_one(&st, &[&42i32]).unwrap().get(0);
    assert_eq!(b, -42);
}
