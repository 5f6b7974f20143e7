//! System views are scans read when the plan runs: a prepared statement (its
//! custom plans and its cached generic plan) over pg_class or pg_stats sees
//! the catalog as it is at each execution, as one over pg_stat_activity sees
//! the running server (planner.rs).

mod support;

use support::TestServer;

fn names(c: &mut postgres::Client, st: &postgres::Statement) -> Vec<String> {
    c.query(st, &[]).unwrap().iter().map(|r| r.get(0)).collect()
}

#[test]
fn a_prepared_pg_class_query_sees_new_tables() {
    let s = TestServer::start();
    let mut c = s.connect();
    let st = c
        .prepare("select relname from pg_class where relname like 'tv%' order by 1")
        .unwrap();
    assert!(names(&mut c, &st).is_empty());
    c.batch_execute("create table tv1 (a int)").unwrap();
    assert_eq!(names(&mut c, &st), ["tv1"]);
    // Past the five custom plans: the cached generic plan is in use.
    for _ in 0..6 {
        assert_eq!(names(&mut c, &st), ["tv1"]);
    }
    // Another session's DDL, then this one's.
    let mut other = s.connect();
    other.batch_execute("create table tv2 (b text)").unwrap();
    assert_eq!(names(&mut c, &st), ["tv1", "tv2"]);
    c.batch_execute("drop table tv1").unwrap();
    for _ in 0..7 {
        assert_eq!(names(&mut c, &st), ["tv2"]);
    }

    // With a parameter, under each plan_cache_mode.
    let st = c
        .prepare("select relname from pg_class where relname like $1 order by 1")
        .unwrap();
    for (i, mode) in ["force_generic_plan", "auto", "force_custom_plan"]
        .iter()
        .enumerate()
    {
        c.batch_execute(&format!("set plan_cache_mode = {mode}"))
            .unwrap();
        let before: Vec<String> = (0..7)
            .map(|_| c.query(&st, &[&"tm%"]).unwrap().len().to_string())
            .collect();
        assert_eq!(before, vec![i.to_string(); 7], "{mode}");
        c.batch_execute(&format!("create table tm{i} (a int)"))
            .unwrap();
        let rows = c.query(&st, &[&"tm%"]).unwrap();
        assert_eq!(rows.len(), i + 1, "{mode}");
        let last: String = rows[i].get(0);
        assert_eq!(last, format!("tm{i}"));
    }

    // pg_attribute and information_schema follow ALTER TABLE.
    let cols = c
        .prepare(
            "select column_name from information_schema.columns \
             where table_name = 'tv2' order by ordinal_position",
        )
        .unwrap();
    assert_eq!(names(&mut c, &cols), ["b"]);
    c.batch_execute("alter table tv2 add column c int").unwrap();
    assert_eq!(names(&mut c, &cols), ["b", "c"]);
}

#[test]
fn a_prepared_pg_stats_query_sees_each_analyze() {
    let s = TestServer::start();
    let mut c = s.connect();
    c.batch_execute(
        "set plan_cache_mode = force_generic_plan; \
         create table ts (a int, b text); \
         insert into ts select g % 3, 'x' from generate_series(1, 300) g",
    )
    .unwrap();
    let st = c
        .prepare(
            "select attname, n_distinct from pg_stats \
             where tablename = $1 order by attname",
        )
        .unwrap();
    let stats = |c: &mut postgres::Client| -> Vec<(String, f32)> {
        c.query(&st, &[&"ts"])
            .unwrap()
            .iter()
            .map(|r| (r.get(0), r.get(1)))
            .collect()
    };
    assert!(stats(&mut c).is_empty());
    c.batch_execute("analyze ts").unwrap();
    assert_eq!(
        stats(&mut c),
        [("a".to_string(), 3.0), ("b".to_string(), 1.0)]
    );
    c.batch_execute("insert into ts select 10 + g, 'y' from generate_series(1, 300) g; analyze ts")
        .unwrap();
    let after = stats(&mut c);
    assert_eq!(after.len(), 2);
    assert!(after[0].1 < 0.0, "a's n_distinct after ANALYZE: {after:?}");
    assert_eq!(after[1], ("b".to_string(), 2.0));
    for _ in 0..6 {
        assert_eq!(stats(&mut c), after);
    }
}

#[test]
fn system_views_explain_as_scans() {
    let s = TestServer::start();
    let mut c = s.connect();
    let plan = |c: &mut postgres::Client, q: &str| -> Vec<String> {
        c.query(&format!("explain (costs off) {q}"), &[])
            .unwrap()
            .iter()
            .map(|r| r.get(0))
            .collect()
    };
    assert_eq!(
        plan(&mut c, "select relname from pg_class"),
        ["Seq Scan on pg_class"]
    );
    assert_eq!(
        plan(&mut c, "select pid from pg_stat_activity"),
        ["Function Scan on pg_stat_get_activity"]
    );
    let join = plan(
        &mut c,
        "select c.relname, n.nspname from pg_catalog.pg_class c \
         join pg_namespace n on n.oid = c.relnamespace",
    );
    assert!(
        join.iter().any(|l| l.contains("Seq Scan on pg_class c")),
        "{join:?}"
    );
    assert!(
        join.iter()
            .any(|l| l.contains("Seq Scan on pg_namespace n")),
        "{join:?}"
    );
}
