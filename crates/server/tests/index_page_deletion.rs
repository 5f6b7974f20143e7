//! B-tree page deletion and reuse over the protocol (access README rule
//! 27a): VACUUM unlinks the leaves it empties, inserts after it reuse them
//! so an index with most of its rows deleted and inserted again stops
//! growing, index scans (forward, backward, ranges, unique checks) agree
//! with sequential scans, scans and inserts running while VACUUM deletes
//! pages see every live row once, and a SIGKILL after VACUUM deleted pages
//! leaves a consistent index after recovery.

mod support;

use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::Arc;

use postgres::Client;
use support::TestServer;

const INDEX_PATHS: &str = "set enable_seqscan = off; set enable_bitmapscan = off; \
     set enable_indexscan = on; set enable_indexonlyscan = on";
const SEQ_ONLY: &str = "set enable_seqscan = on; set enable_bitmapscan = off; \
     set enable_indexscan = off; set enable_indexonlyscan = off";
const INDEXES: [&str; 2] = ["t_pkey", "t_k_idx"];

fn size(c: &mut Client, rel: &str) -> i64 {
    c.query_one("select pg_relation_size($1::text::regclass)", &[&rel])
        .unwrap()
        .get(0)
}

fn amcheck(c: &mut Client, ctx: &str) {
    for index in INDEXES {
        for check in ["bt_index_check", "bt_index_parent_check"] {
            if let Err(e) = c.batch_execute(&format!("select {check}('{index}')")) {
                panic!("{ctx}: {check}('{index}'): {e:?}");
            }
        }
    }
}

fn ids(c: &mut Client, settings: &str, sql: &str) -> Vec<i64> {
    c.batch_execute(settings).unwrap();
    let out = c
        .query(sql, &[])
        .unwrap_or_else(|e| panic!("{sql} under `{settings}`: {e:?}"))
        .iter()
        .map(|r| r.get(0))
        .collect();
    c.batch_execute("reset all").unwrap();
    out
}

/// Asserts that `sql` reads `index` when index paths are forced.
fn assert_uses_index(c: &mut Client, sql: &str, index: &str) {
    c.batch_execute(INDEX_PATHS).unwrap();
    let plan: Vec<String> = c
        .query(&format!("explain (costs off) {sql}"), &[])
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    c.batch_execute("reset all").unwrap();
    let plan = plan.join("\n");
    assert!(plan.contains(index), "{sql} does not read {index}:\n{plan}");
}

/// Index scans of both indexes, forward, backward and over ranges, give
/// what sequential scans give.
fn index_agrees_with_table(c: &mut Client, ctx: &str) {
    let queries = [
        ("t_pkey", "select id from t where id >= 0 order by id"),
        ("t_pkey", "select id from t where id >= 0 order by id desc"),
        ("t_k_idx", "select id from t where k >= 0 order by k, id"),
        (
            "t_k_idx",
            "select id from t where k >= 0 order by k desc, id desc",
        ),
    ];
    for (index, sql) in queries {
        assert_uses_index(c, sql, index);
        let want = ids(c, SEQ_ONLY, sql);
        let got = ids(c, INDEX_PATHS, sql);
        assert_eq!(got.len(), want.len(), "{ctx}: {sql}");
        assert!(got == want, "{ctx}: {sql} through {index} differs");
    }
    for (lo, hi) in [
        (0, 1000),
        (940, 1060),
        (150_000, 151_999),
        (199_990, 250_000),
    ] {
        for sql in [
            format!("select id from t where id between {lo} and {hi} order by id"),
            format!("select id from t where id > {lo} and id < {hi} order by id desc"),
            format!(
                "select id from t where k between {} and {} order by k, id",
                lo / 4,
                hi / 4
            ),
        ] {
            let want = ids(c, SEQ_ONLY, &sql);
            let got = ids(c, INDEX_PATHS, &sql);
            assert_eq!(got, want, "{ctx}: {sql}");
        }
    }
}

/// Unique checks through t_pkey: every present id is a duplicate, a
/// deleted one is not (and is taken back out).
fn unique_checks(c: &mut Client, ctx: &str) {
    let present: Vec<i64> = ids(
        c,
        SEQ_ONLY,
        "select id from t where id % 997 = 3 order by id",
    );
    for id in present.iter().take(50) {
        let err = c
            .execute("insert into t values ($1, 0, 'dup')", &[id])
            .expect_err("duplicate accepted");
        assert_eq!(
            err.code(),
            Some(&postgres::error::SqlState::UNIQUE_VIOLATION),
            "{ctx}: id {id}"
        );
    }
    let mut tx = c.transaction().unwrap();
    tx.execute("insert into t values (-5, 0, 'new')", &[])
        .unwrap();
    tx.rollback().unwrap();
}

const ROWS: i64 = 200_000;
/// 95% of the rows, in runs of 950 consecutive ids.
const DOOMED: &str = "id % 1000 < 950";

fn setup(c: &mut Client) {
    c.batch_execute(&format!(
        "create extension if not exists amcheck;
         create table t (id int8 primary key, k int4, s text);
         create index t_k_idx on t (k);
         insert into t select g, g / 4, 'row ' || g from generate_series(1, {ROWS}) g;"
    ))
    .unwrap();
}

fn reinsert(c: &mut Client) {
    c.batch_execute(&format!(
        "insert into t select g, g / 4, 'again ' || g from generate_series(1, {ROWS}) g \
         where g % 1000 < 950"
    ))
    .unwrap();
}

#[test]
fn emptied_index_pages_are_deleted_and_reused() {
    // No autovacuum: the VACUUMs here are the ones that delete pages.
    let server = TestServer::start_with(&[("autovacuum", "off")]);
    let mut c = server.connect();
    setup(&mut c);
    let sizes = |c: &mut Client| (size(c, "t_pkey"), size(c, "t_k_idx"));
    let built = sizes(&mut c);

    let mut after_reinsert = Vec::new();
    for cycle in 0..3 {
        c.batch_execute(&format!("delete from t where {DOOMED}"))
            .unwrap();
        c.batch_execute("vacuum t").unwrap();
        let ctx = format!("cycle {cycle} after vacuum");
        amcheck(&mut c, &ctx);
        index_agrees_with_table(&mut c, &ctx);
        let n: i64 = c.query_one("select count(*) from t", &[]).unwrap().get(0);
        assert_eq!(n, ROWS / 20);
        reinsert(&mut c);
        let ctx = format!("cycle {cycle} after re-insert");
        amcheck(&mut c, &ctx);
        index_agrees_with_table(&mut c, &ctx);
        unique_checks(&mut c, &ctx);
        after_reinsert.push(sizes(&mut c));
    }
    eprintln!("index sizes (t_pkey, t_k_idx) in bytes: built {built:?}, after each delete/vacuum/re-insert cycle {after_reinsert:?}");
    // Re-inserted runs split pages in the middle (half full), so the first
    // cycle may grow the index; later cycles reuse the pages VACUUM freed.
    let (first, last) = (after_reinsert[0], after_reinsert[2]);
    for (a, b, name) in [(first.0, last.0, "t_pkey"), (first.1, last.1, "t_k_idx")] {
        assert!(
            b <= a + a / 50,
            "{name} kept growing: {a} bytes after the first cycle, {b} after the third"
        );
    }

    // VACUUM VERBOSE reports the deleted pages, as PostgreSQL words it.
    c.batch_execute(&format!("delete from t where {DOOMED}"))
        .unwrap();
    let newly = verbose_vacuum(&server);
    assert!(newly.iter().all(|&n| n > 0), "{newly:?}");
}

/// VACUUM (VERBOSE) t on a new connection: how many pages it newly
/// deleted in t_pkey and t_k_idx, from PostgreSQL's INFO lines.
fn verbose_vacuum(server: &TestServer) -> [i64; 2] {
    let notices = Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let mut cfg = server.config();
    let sink = notices.clone();
    cfg.notice_callback(move |n| sink.lock().unwrap().push(n.message().to_string()));
    let mut v = cfg.connect(postgres::NoTls).unwrap();
    v.batch_execute("vacuum (verbose) t").unwrap();
    let text = notices.lock().unwrap().join("\n");
    INDEXES.map(|index| {
        let line = text
            .lines()
            .find(|l| l.starts_with(&format!("index \"{index}\": pages:")))
            .unwrap_or_else(|| panic!("no {index} line in:\n{text}"));
        line.split(", ")
            .nth(1)
            .and_then(|p| p.strip_suffix(" newly deleted"))
            .unwrap_or_else(|| panic!("{line}"))
            .parse()
            .unwrap()
    })
}

#[test]
fn scans_and_inserts_while_vacuum_deletes_pages() {
    // No autovacuum: the VACUUMs here are the ones that delete pages.
    let server = TestServer::start_with(&[("autovacuum", "off")]);
    let mut c = server.connect();
    setup(&mut c);
    // Rows with id % 1000 = 0 stay throughout; scanners find each once.
    let stable: Vec<i64> = (1..=ROWS).filter(|i| i % 1000 == 0).collect();
    let stop = Arc::new(AtomicBool::new(false));
    let scans = Arc::new(AtomicI64::new(0));
    let mut threads = Vec::new();
    let queries = [
        (
            "t_pkey",
            "select id from t where id >= 0 and id <= 200000 and id % 1000 = 0 order by id",
        ),
        (
            "t_pkey",
            "select id from t where id >= 0 and id <= 200000 and id % 1000 = 0 order by id desc",
        ),
        (
            "t_k_idx",
            "select id from t where k >= 0 and id % 1000 = 0 order by k",
        ),
        (
            "t_k_idx",
            "select id from t where k >= 0 and id % 1000 = 0 order by k desc",
        ),
    ];
    for (index, sql) in queries {
        assert_uses_index(&mut c, sql, index);
    }
    // Each round deletes, waits until every scanner has begun a scan after
    // the delete (an older snapshot keeps the rows VACUUM must remove, as
    // it should), then VACUUMs while the scanners go on.
    let epoch = Arc::new(AtomicI64::new(0));
    let started: Arc<Vec<AtomicI64>> =
        Arc::new(queries.iter().map(|_| AtomicI64::new(0)).collect());
    for (slot, (_, sql)) in queries.into_iter().enumerate() {
        let (cfg, stop, scans, stable) =
            (server.config(), stop.clone(), scans.clone(), stable.clone());
        let (epoch, started) = (epoch.clone(), started.clone());
        threads.push(std::thread::spawn(move || {
            let mut c = cfg.connect(postgres::NoTls).unwrap();
            c.batch_execute(INDEX_PATHS).unwrap();
            let backward = sql.ends_with("desc");
            while !stop.load(Ordering::Relaxed) {
                // SeqCst: the main thread reads these in the other order.
                started[slot].store(epoch.load(Ordering::SeqCst), Ordering::SeqCst);
                let got: Vec<i64> = c
                    .query(sql, &[])
                    .unwrap()
                    .iter()
                    .map(|r| r.get(0))
                    .filter(|&id: &i64| id <= ROWS)
                    .collect();
                let mut want = stable.clone();
                if backward {
                    want.reverse();
                }
                assert!(
                    got == want,
                    "{sql}: {} rows, {} stable ones",
                    got.len(),
                    want.len()
                );
                scans.fetch_add(1, Ordering::Relaxed);
            }
        }));
    }
    // An inserter: new ids above the table's range, keys of t_k_idx in the
    // ranges being emptied.
    {
        let (cfg, stop) = (server.config(), stop.clone());
        threads.push(std::thread::spawn(move || {
            let mut c = cfg.connect(postgres::NoTls).unwrap();
            let mut base = ROWS + 1;
            while !stop.load(Ordering::Relaxed) {
                c.execute(
                    "insert into t select g, ((g * 7919) % 200000) / 4, 'new' \
                     from generate_series($1::int8, $1::int8 + 99) g",
                    &[&base],
                )
                .unwrap();
                base += 100;
            }
        }));
    }
    let rounds = [
        "id % 1000 between 1 and 499",
        "id % 1000 between 500 and 999",
        "id > 200000",
    ];
    for (round, doomed) in rounds.iter().enumerate() {
        c.batch_execute(&format!("delete from t where {doomed}"))
            .unwrap();
        let now = round as i64 + 1;
        epoch.store(now, Ordering::SeqCst);
        while started.iter().any(|s| s.load(Ordering::SeqCst) < now) {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        let newly = verbose_vacuum(&server);
        eprintln!("round {round}: pages newly deleted (t_pkey, t_k_idx): {newly:?}");
        if round < 2 {
            assert!(newly[0] > 0, "round {round}: {newly:?}");
        }
        // The parent check wants writers kept out: only the light one here.
        for index in INDEXES {
            c.batch_execute(&format!("select bt_index_check('{index}')"))
                .unwrap_or_else(|e| panic!("round {round}: {index}: {e:?}"));
        }
    }
    stop.store(true, Ordering::Relaxed);
    for t in threads {
        t.join().unwrap();
    }
    let scans = scans.load(Ordering::Relaxed);
    eprintln!("{scans} scans checked while VACUUM deleted pages");
    assert!(scans >= 8, "{scans}");
    amcheck(&mut c, "after concurrent vacuum");
    index_agrees_with_table(&mut c, "after concurrent vacuum");
}

#[test]
fn index_is_consistent_after_a_kill_following_page_deletion() {
    let mut server = TestServer::start_with(&[("shared_buffers", "2MB"), ("autovacuum", "off")]);
    let mut c = server.connect();
    setup(&mut c);
    c.batch_execute("checkpoint").unwrap();
    c.batch_execute(&format!("delete from t where {DOOMED}"))
        .unwrap();
    c.batch_execute("vacuum t").unwrap();
    // Some reuse of the deleted pages, then the kill: all of it is redone.
    c.batch_execute(
        "insert into t select g, g / 4, 'again' from generate_series(1, 60000) g where g % 1000 < 950",
    )
    .unwrap();
    let before: Vec<i64> = ids(&mut c, SEQ_ONLY, "select id from t order by id");
    let sizes = (size(&mut c, "t_pkey"), size(&mut c, "t_k_idx"));
    drop(c);
    server.kill();
    server.start_again();
    let mut c = server.connect();
    amcheck(&mut c, "after the kill");
    let after: Vec<i64> = ids(&mut c, SEQ_ONLY, "select id from t order by id");
    assert_eq!(after, before, "rows after recovery");
    index_agrees_with_table(&mut c, "after the kill");
    unique_checks(&mut c, "after the kill");
    assert_eq!((size(&mut c, "t_pkey"), size(&mut c, "t_k_idx")), sizes);
    // The recovered index keeps deleting and reusing pages.
    reinsert_rest(&mut c);
    c.batch_execute(&format!("delete from t where {DOOMED}"))
        .unwrap();
    c.batch_execute("vacuum t").unwrap();
    amcheck(&mut c, "vacuum after recovery");
    index_agrees_with_table(&mut c, "vacuum after recovery");
}

fn reinsert_rest(c: &mut Client) {
    c.batch_execute(&format!(
        "insert into t select g, g / 4, 'again' from generate_series(60001, {ROWS}) g \
         where g % 1000 < 950"
    ))
    .unwrap();
}
