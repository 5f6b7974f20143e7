//! The buffer pool seen through SQL: a big sequential scan must not flush a
//! prewarmed hot table (scan rings), statistics views must move, and
//! pg_prewarm's modes must work.

mod support;

use support::TestServer;

/// 8 MB of shared buffers = 1024 buffers; a row of (int, char(1000)) takes
/// about 1 kB, so 7 rows fill a page.
fn pages(s: &TestServer, table: &str) -> i64 {
    s.psql(&format!("select pg_relation_size('{table}') / 8192"))
        .trim()
        .parse()
        .unwrap()
}

#[test]
fn big_scans_leave_a_prewarmed_hot_table_resident() {
    let s = TestServer::start_with(&[("shared_buffers", "8MB")]);
    s.psql("create extension if not exists pg_prewarm");
    s.psql("create extension if not exists pg_buffercache");
    // Hot table: a quarter of shared_buffers (256 pages).
    s.psql("create table hot(id int, pad char(1000))");
    s.psql("insert into hot select g, 'h' from generate_series(1, 1792) g");
    // Big table: 4x shared_buffers (4096 pages).
    s.psql("create table big(id int, pad char(1000))");
    s.psql("insert into big select g, 'b' from generate_series(1, 28672) g");
    let hot_pages = pages(&s, "hot");
    let big_pages = pages(&s, "big");
    assert!(
        (250..=260).contains(&hot_pages),
        "hot has {hot_pages} pages"
    );
    assert!(big_pages >= 4000, "big has {big_pages} pages");

    let warmed: i64 = s.psql("select pg_prewarm('hot')").trim().parse().unwrap();
    assert_eq!(warmed, hot_pages);
    for _ in 0..2 {
        assert_eq!(s.psql("select count(*) from big").trim(), "28672");
    }
    let resident: i64 = s
        .psql(
            "select count(*) from pg_buffercache b join pg_class c on b.relfilenode = c.relfilenode \
             where c.relname = 'hot'",
        )
        .trim()
        .parse()
        .unwrap();
    assert!(
        resident * 10 >= hot_pages * 9,
        "only {resident} of {hot_pages} hot pages stayed resident after two big scans"
    );
}

#[test]
fn statistics_views_move() {
    let s = TestServer::start();
    s.psql("select pg_stat_lwlock_reset()");
    s.psql("create table t(a int)");
    s.psql("insert into t select g from generate_series(1, 1000) g");
    assert_eq!(s.psql("select count(*) from t").trim(), "1000");
    let mapping: i64 = s
        .psql("select shared_acquires + exclusive_acquires from pg_stat_lwlock where tranche = 'BufferMapping'")
        .trim()
        .parse()
        .unwrap();
    assert!(mapping > 0, "no BufferMapping acquisitions counted");
    let hits: i64 = s
        .psql("select blks_hit from pg_stat_database where datname = current_database()")
        .trim()
        .parse()
        .unwrap();
    assert!(hits > 0, "pg_stat_database.blks_hit did not move");
    let alloc: i64 = s
        .psql("select buffers_alloc from pg_stat_bgwriter")
        .trim()
        .parse()
        .unwrap();
    assert!(alloc > 0, "pg_stat_bgwriter.buffers_alloc did not move");
    let me =
        s.psql("select state || ' ' || query from pg_stat_activity where pid = pg_backend_pid()");
    assert!(
        me.starts_with("active select state"),
        "pg_stat_activity shows {me:?}"
    );
}

#[test]
fn prewarm_modes_and_errors() {
    let s = TestServer::start();
    s.psql("create table t(a int, pad char(500))");
    s.psql("insert into t select g, 'x' from generate_series(1, 500) g");
    let n = pages(&s, "t");
    for mode in ["prefetch", "read", "buffer"] {
        let got: i64 = s
            .psql(&format!("select pg_prewarm('t', '{mode}')"))
            .trim()
            .parse()
            .unwrap();
        assert_eq!(got, n, "mode {mode}");
    }
    assert_eq!(
        s.psql("select pg_prewarm('t', 'buffer', 'main', 1, 1)")
            .trim(),
        "1"
    );
    let err = s.psql_err("select pg_prewarm('t', 'bogus')");
    assert!(err.contains("invalid prewarm type"), "{err}");
    let err = s.psql_err("select pg_prewarm('nosuch')");
    assert!(err.contains("does not exist"), "{err}");
}
