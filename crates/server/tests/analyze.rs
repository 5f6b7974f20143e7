//! ANALYZE against PostgreSQL 15. `analyze/stats.sql` is run through
//! `psql -X -a -q` and must print `stats.out`, PostgreSQL 15's output for
//! the same file in a C-locale cluster (its tables are under 30,000 rows,
//! so the sample is the whole table and the statistics are deterministic).
//! Regenerate from `crates/server/tests/analyze` with
//! `psql -X -a -q -h HOST -p PORT -U postgres -d NEWDB -f stats.sql > stats.out 2>&1`.
//! The EXPLAIN row estimates below are PostgreSQL 15's for the same data.

mod support;

use std::path::Path;

use support::{first_differences, TestServer};

fn dir() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/analyze")
}

#[test]
fn pg_stats_matches_postgresql() {
    let s = TestServer::start();
    let actual = s.psql_echo_file(&dir(), "stats");
    let expected = std::fs::read_to_string(dir().join("stats.out")).unwrap();
    if actual != expected {
        panic!(
            "stats.out differs:\n{}\n--- actual ---\n{actual}",
            first_differences(&expected, &actual)
        );
    }
}

/// The top plan node's row estimate.
fn rows(c: &mut postgres::Client, q: &str) -> f64 {
    let plan = c.query(&format!("EXPLAIN {q}"), &[]).unwrap();
    let top: String = plan[0].get(0);
    let at = top.find("rows=").unwrap() + 5;
    let n: String = top[at..].chars().take_while(char::is_ascii_digit).collect();
    n.parse().unwrap()
}

/// PostgreSQL 15's estimates after ANALYZE of stats.sql's tables.
const PG15_ROWS: &[(f64, &str)] = &[
    (1000.0, "SELECT * FROM t WHERE grp = 3"),
    (9000.0, "SELECT * FROM t WHERE grp <> 3"),
    (850.0, "SELECT * FROM t WHERE val < 100"),
    (867.0, "SELECT * FROM t WHERE val <= 100"),
    (852.0, "SELECT * FROM t WHERE val > 900"),
    (861.0, "SELECT * FROM t WHERE val >= 900"),
    (1729.0, "SELECT * FROM t WHERE val BETWEEN 100 AND 300"),
    (852.0, "SELECT * FROM t WHERE val > 500 AND val <= 600"),
    (1999.0, "SELECT * FROM t WHERE id < 2000"),
    (99.0, "SELECT * FROM t WHERE id > 2000 AND id < 2100"),
    (4103.0, "SELECT * FROM t WHERE name LIKE 'n1%'"),
    (712.0, "SELECT * FROM t WHERE name LIKE 'n14%'"),
    (67.0, "SELECT * FROM t WHERE name = 'n5'"),
    (1428.0, "SELECT * FROM t WHERE val IS NULL"),
    (8572.0, "SELECT * FROM t WHERE val IS NOT NULL"),
    (4060.0, "SELECT * FROM t WHERE grp = 1 OR skew = 0"),
    (340.0, "SELECT * FROM t WHERE grp = 1 AND skew = 0"),
    (9000.0, "SELECT * FROM t WHERE NOT (grp = 1)"),
    (3000.0, "SELECT * FROM t WHERE grp IN (1, 2, 3)"),
    (7000.0, "SELECT * FROM t WHERE grp NOT IN (1, 2, 3)"),
    (3.0, "SELECT * FROM t WHERE id IN (5, 10, 15)"),
    (3400.0, "SELECT * FROM t WHERE skew = 0"),
    (34.0, "SELECT * FROM t WHERE skew = 97"),
    (5834.0, "SELECT * FROM t WHERE skew < 50"),
    (1.0, "SELECT * FROM t WHERE id = 77"),
    (79000.0, "SELECT * FROM t JOIN u ON t.grp = u.k"),
    (38331.0, "SELECT * FROM t JOIN u ON t.skew = u.k"),
    (8572.0, "SELECT * FROM t a JOIN t b ON a.id = b.val"),
    (10.0, "SELECT grp, count(*) FROM t GROUP BY grp"),
    (150.0, "SELECT DISTINCT name FROM t"),
    (1000.0, "SELECT grp, skew FROM t GROUP BY grp, skew"),
];

fn load_stats_tables(s: &TestServer) {
    let sql = std::fs::read_to_string(dir().join("stats.sql")).unwrap();
    // The file's statements up to its error cases.
    let body = sql.split("ANALYZE u (nosuch);").next().unwrap();
    s.psql_script(body);
}

#[test]
fn explain_estimates_follow_postgresql_after_analyze() {
    let s = TestServer::start();
    load_stats_tables(&s);
    let mut c = s.connect();
    let mut report = Vec::new();
    let mut worst = 1.0f64;
    for &(pg, q) in PG15_ROWS {
        let ours = rows(&mut c, q);
        let ratio = (ours / pg).max(pg / ours);
        worst = worst.max(ratio);
        report.push(format!("{ratio:6.3}  pg {pg:>6}  ours {ours:>6}  {q}"));
    }
    let exact = report.iter().filter(|r| r.starts_with(" 1.000")).count();
    println!(
        "{}\n{exact} of {} exact",
        report.join("\n"),
        PG15_ROWS.len()
    );
    // The sample is the whole table, so every estimate is PostgreSQL's own.
    assert!(
        worst == 1.0,
        "an estimate differs from PostgreSQL's:\n{}",
        report.join("\n")
    );
}

#[test]
fn prepared_statement_replans_after_analyze() {
    let s = TestServer::start();
    let mut c = s.connect();
    c.batch_execute(
        "CREATE TABLE p (a int); INSERT INTO p SELECT i % 4 FROM generate_series(1, 5000) i",
    )
    .unwrap();
    let stmt = c.prepare("EXPLAIN SELECT * FROM p WHERE a = 1").unwrap();
    let top = |c: &mut postgres::Client| -> String { c.query(&stmt, &[]).unwrap()[0].get(0) };
    let before = top(&mut c);
    // Never analysed: the default 1/200 of the page-count estimate.
    assert!(!before.contains("rows=1250 "), "{before}");
    c.batch_execute("ANALYZE p").unwrap();
    let after = top(&mut c);
    assert!(after.contains("rows=1250 "), "{after}");
    let reltuples: f32 = c
        .query_one("SELECT reltuples FROM pg_class WHERE relname = 'p'", &[])
        .unwrap()
        .get(0);
    assert_eq!(reltuples, 5000.0);
}

#[test]
fn analyze_forms_and_errors() {
    let s = TestServer::start();
    let out = s.psql_script(
        "CREATE TABLE v (a int, b text);\n\
         INSERT INTO v SELECT i, 'x' FROM generate_series(1, 100) i;\n\
         ANALYZE VERBOSE v (b);\n\
         SELECT attname FROM pg_stats WHERE tablename = 'v';\n\
         ANALYZE;\n\
         SELECT count(*) FROM pg_stats WHERE tablename = 'v';\n\
         VACUUM (VERBOSE, ANALYZE) v;\n",
    );
    assert!(out.contains("ANALYZE\nb\nANALYZE\n2\nVACUUM"), "{out}");
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let mut cfg = s.config();
    let sink = seen.clone();
    cfg.notice_callback(move |n| {
        sink.lock()
            .unwrap()
            .push(format!("{}: {}", n.severity(), n.message()))
    });
    let mut c = cfg.connect(postgres::NoTls).unwrap();
    c.batch_execute("ANALYZE VERBOSE v").unwrap();
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen[0], "INFO: analyzing \"public.v\"");
    assert!(
        seen[1].ends_with("100 rows in sample, 100 estimated total rows"),
        "{seen:?}"
    );
    let err = |c: &mut postgres::Client, sql: &str| {
        let e = c.batch_execute(sql).unwrap_err();
        let db = e.as_db_error().unwrap();
        (db.code().code().to_string(), db.message().to_string())
    };
    c.batch_execute("BEGIN").unwrap();
    assert_eq!(
        err(&mut c, "VACUUM ANALYZE v"),
        (
            "25001".into(),
            "VACUUM cannot run inside a transaction block".into()
        )
    );
    c.batch_execute("ROLLBACK; BEGIN; ANALYZE v; COMMIT")
        .unwrap();
    assert_eq!(
        err(&mut c, "ANALYZE v (a, a)"),
        (
            "42701".into(),
            "column \"a\" of relation \"v\" appears more than once".into()
        )
    );
    assert_eq!(
        err(&mut c, "ANALYZE v (c)"),
        (
            "42703".into(),
            "column \"c\" of relation \"v\" does not exist".into()
        )
    );
    assert_eq!(
        err(&mut c, "ANALYZE nosuch"),
        ("42P01".into(), "relation \"nosuch\" does not exist".into())
    );
}

#[test]
fn a_sampled_table_extrapolates() {
    let s = TestServer::start();
    let mut c = s.connect();
    // Target 10: a sample of 3,000 of 60,000 rows, through the reservoir.
    c.batch_execute(
        "SET default_statistics_target = 10;
         CREATE TABLE big (id int, g int);
         INSERT INTO big SELECT i, i % 100 FROM generate_series(1, 60000) i;
         ANALYZE big",
    )
    .unwrap();
    let row = c
        .query_one("SELECT reltuples FROM pg_class WHERE relname = 'big'", &[])
        .unwrap();
    // Every block is read (fewer blocks than sample rows): the count is exact.
    assert_eq!(row.get::<_, f32>(0), 60000.0);
    let row = c
        .query_one(
            "SELECT n_distinct FROM pg_stats WHERE tablename = 'big' AND attname = 'id'",
            &[],
        )
        .unwrap();
    // A unique column sampled in part is still seen as unique.
    assert_eq!(row.get::<_, f32>(0), -1.0);
    let row = c
        .query_one(
            "SELECT n_distinct, histogram_bounds FROM pg_stats WHERE tablename = 'big' AND attname = 'g'",
            &[],
        )
        .unwrap();
    assert_eq!(row.get::<_, f32>(0), 100.0);
    // At most target + 1 bounds.
    let bounds: Option<String> = row.get(1);
    assert!(bounds.is_none_or(|b| b.split(',').count() <= 11));
    // The true counts are 600 and 30,000: sampled estimates stay close.
    let eq = rows(&mut c, "SELECT * FROM big WHERE g = 1");
    assert!((300.0..=1200.0).contains(&eq), "{eq}");
    let lt = rows(&mut c, "SELECT * FROM big WHERE id <= 30000");
    assert!((20000.0..=40000.0).contains(&lt), "{lt}");
}
