//! work_mem-bounded sorts, hash joins and hash aggregation: the same rows
//! in memory and spilled to temporary files, spilling visible in EXPLAIN
//! ANALYZE, temporary files gone afterwards (cancelled queries included),
//! temp_file_limit, and a bounded peak resident size.

mod support;

use std::time::{Duration, Instant};

use postgres::{Client, SimpleQueryMessage};
use support::TestServer;

fn rows(c: &mut Client, sql: &str) -> Vec<Vec<Option<String>>> {
    c.simple_query(sql)
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
        .into_iter()
        .filter_map(|m| match m {
            SimpleQueryMessage::Row(r) => {
                Some((0..r.len()).map(|i| r.get(i).map(str::to_string)).collect())
            }
            _ => None,
        })
        .collect()
}

fn explain(c: &mut Client, sql: &str) -> String {
    rows(
        c,
        &format!("explain (analyze, costs off, timing off, summary off) {sql}"),
    )
    .into_iter()
    .map(|r| r[0].clone().unwrap())
    .collect::<Vec<_>>()
    .join("\n")
}

/// The hash join's batch count in an EXPLAIN ANALYZE.
fn batches(plan: &str) -> usize {
    plan.split("Batches: ")
        .nth(1)
        .and_then(|x| x.split_whitespace().next())
        .and_then(|x| x.parse().ok())
        .unwrap_or_else(|| panic!("no batches in {plan}"))
}

/// Runs `sql` at a large and a tiny work_mem; the rows must be equal, and
/// only the tiny one's plan may show it `spilled`.
fn same_both_ways(c: &mut Client, sql: &str, spilled: &dyn Fn(&str) -> bool) -> usize {
    c.batch_execute("set work_mem = '64MB'").unwrap();
    let big = rows(c, sql);
    let plan = explain(c, sql);
    assert!(!spilled(&plan), "{sql} spilled at 64MB:\n{plan}");
    c.batch_execute("set work_mem = '64kB'").unwrap();
    let small = rows(c, sql);
    let plan = explain(c, sql);
    assert!(spilled(&plan), "{sql} did not spill:\n{plan}");
    assert_eq!(big.len(), small.len(), "{sql}");
    assert!(big == small, "{sql}: rows differ in and out of memory");
    big.len()
}

fn setup(c: &mut Client) {
    c.batch_execute(
        "create table t (a int, b text, c int);
         insert into t select case when g % 97 = 0 then null else g % 1000 end,
                'text ' || (g * 7919 % 20000), case when g % 13 = 0 then null else g % 17 end
           from generate_series(1, 20000) g;
         create table l (k int, v text);
         insert into l select case when g % 50 = 0 then null else g % 6000 end, 'l' || g
           from generate_series(1, 12000) g;
         create table r (k int, w text);
         insert into r select case when g % 40 = 0 then null else (g * 3) % 9000 end, 'r' || g
           from generate_series(1, 12000) g;",
    )
    .unwrap();
}

fn temp_files(s: &TestServer) -> Vec<String> {
    std::fs::read_dir(s.data_dir().join("base/pgsql_tmp"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect()
}

#[test]
fn sorts_give_the_same_rows_in_memory_and_spilled() {
    let s = TestServer::start();
    let mut c = s.connect();
    setup(&mut c);
    for sql in [
        "select * from t order by a, c desc nulls first, b",
        "select * from t order by b nulls first",
        "select * from t order by c desc",
        // Ties: only `a` orders; equal `a`s keep their input order both ways.
        "select * from t order by a nulls first",
        "select a, c from t order by c nulls last, a desc nulls last",
    ] {
        assert_eq!(
            same_both_ways(&mut c, sql, &|p| p.contains("external merge")),
            20000
        );
    }
    let plan = explain(&mut c, "select * from t order by a, b");
    assert!(plan.contains("Sort Key: a, b"), "{plan}");
    assert!(
        plan.contains("Sort Method: external merge  Disk: "),
        "{plan}"
    );
    c.batch_execute("set work_mem = '64MB'").unwrap();
    let plan = explain(&mut c, "select * from t order by a, b");
    assert!(plan.contains("Sort Method: quicksort  Memory: "), "{plan}");
    // Top-N: a bounded heap, never spilling, the same first rows.
    c.batch_execute("set work_mem = '64kB'").unwrap();
    let sql = "select * from t order by b desc, a limit 25 offset 5";
    let plan = explain(&mut c, sql);
    assert!(
        plan.contains("Sort Method: top-N heapsort  Memory: "),
        "{plan}"
    );
    let top = rows(&mut c, sql);
    let all = rows(&mut c, "select * from t order by b desc, a");
    assert_eq!(top, all[5..30].to_vec());
    assert!(temp_files(&s).is_empty(), "{:?}", temp_files(&s));
    // pg_stat_database counts the deleted files.
    let st = rows(
        &mut c,
        "select temp_files, temp_bytes from pg_stat_database where datname = current_database()",
    );
    let files: i64 = st[0][0].as_deref().unwrap().parse().unwrap();
    let bytes: i64 = st[0][1].as_deref().unwrap().parse().unwrap();
    assert!(files > 5 && bytes > 100_000, "{st:?}");
}

#[test]
fn hash_joins_give_the_same_rows_in_memory_and_in_batches() {
    let s = TestServer::start();
    let mut c = s.connect();
    setup(&mut c);
    c.batch_execute("set enable_nestloop = off; set enable_mergejoin = off")
        .unwrap();
    for kind in ["join", "left join", "right join", "full join"] {
        for filter in ["", " and length(l.v) + length(r.w) < 11"] {
            let sql = format!(
                "select l.k, l.v, r.k, r.w from l {kind} r on l.k = r.k{filter} \
                 order by 1, 2, 3, 4"
            );
            let plan = explain(&mut c, &sql);
            assert!(plan.contains("Hash"), "{plan}");
            assert!(plan.contains("Buckets: "), "{plan}");
            same_both_ways(&mut c, &sql, &|p| batches(p) > 1);
        }
    }
    assert!(temp_files(&s).is_empty(), "{:?}", temp_files(&s));
}

#[test]
fn hash_aggregation_spills_groups_and_gives_the_same_results() {
    let s = TestServer::start();
    let mut c = s.connect();
    setup(&mut c);
    let sql = "select b, count(*), sum(a), avg(c), min(a), max(b), string_agg(a::text, ',') \
               from t group by b order by b";
    let n = same_both_ways(&mut c, sql, &|p| p.contains("Disk Usage: "));
    assert!(n > 10_000, "{n}");
    let sql = "select a, c, count(*) from t group by a, c order by a, c";
    same_both_ways(&mut c, sql, &|p| p.contains("Disk Usage: "));
    assert!(temp_files(&s).is_empty(), "{:?}", temp_files(&s));
}

#[test]
fn temp_file_limit_stops_a_spilling_sort() {
    let s = TestServer::start();
    let mut c = s.connect();
    setup(&mut c);
    c.batch_execute("set work_mem = '64kB'; set temp_file_limit = '100kB'")
        .unwrap();
    let e = c
        .simple_query("select * from t order by b")
        .expect_err("over temp_file_limit");
    let db = e.as_db_error().unwrap();
    assert_eq!(db.code().code(), "53400");
    assert_eq!(
        db.message(),
        "temporary file size exceeds temp_file_limit (100kB)"
    );
    assert!(temp_files(&s).is_empty(), "{:?}", temp_files(&s));
    c.batch_execute("reset temp_file_limit").unwrap();
    assert_eq!(rows(&mut c, "select * from t order by b").len(), 20000);
}

#[test]
fn a_spilling_sort_join_and_aggregate_stop_promptly_on_timeout_and_leave_no_files() {
    let s = TestServer::start();
    let mut c = s.connect();
    c.batch_execute("set work_mem = '64kB'; set enable_nestloop = off")
        .unwrap();
    for sql in [
        // Runs are written, then merged: the timeout falls in either.
        "select g, md5(g::text) from generate_series(1, 100000000) g order by 2 offset 1",
        "select count(*) from generate_series(1, 100000000) a \
         join generate_series(1, 100000000) b on a = b",
        "select g, count(*) from generate_series(1, 100000000) g group by g offset 1",
    ] {
        c.batch_execute("set statement_timeout = '1500ms'").unwrap();
        let start = Instant::now();
        let e = c.simple_query(sql).expect_err("timed out");
        let took = start.elapsed();
        assert_eq!(e.as_db_error().unwrap().code().code(), "57014", "{sql}");
        assert!(
            took < Duration::from_millis(1500 + 400),
            "{sql}: stopped after {took:?}"
        );
        c.batch_execute("set statement_timeout = 0").unwrap();
        assert!(temp_files(&s).is_empty(), "{sql}: {:?}", temp_files(&s));
    }
}

fn status_kb(pid: u32, field: &str) -> u64 {
    let st = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    st.lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

#[test]
fn a_big_sort_at_small_work_mem_keeps_resident_memory_bounded() {
    let s = TestServer::start();
    let mut c = s.connect();
    // About 85 MB of rows in memory; at work_mem 1MB the sort holds ~1 MB.
    c.batch_execute(
        "create table big (a int, b text);
         insert into big select g, md5(g::text) || 'x' from generate_series(1, 500000) g;
         select count(*) from big;
         set work_mem = '1MB'",
    )
    .unwrap();
    let pid = s.pid();
    // Resets VmHWM to the current resident size (Linux's clear_refs 5).
    std::fs::write(format!("/proc/{pid}/clear_refs"), "5").unwrap();
    let before = status_kb(pid, "VmHWM:");
    let r = rows(&mut c, "select * from big order by b offset 499999");
    assert_eq!(r.len(), 1);
    let grew = status_kb(pid, "VmHWM:").saturating_sub(before);
    assert!(grew < 30 * 1024, "peak resident size grew by {grew} kB");
    assert!(temp_files(&s).is_empty());
}
