//! VACUUM, on-page pruning and autovacuum over the protocol: space freed by
//! VACUUM is reused, HOT updates keep a row on its page, an update-heavy
//! workload stays bounded in size with autovacuum on (and loses no update),
//! pg_stat_user_tables counts, and a crash after or during pruning recovers
//! the same rows.

mod support;

use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use support::TestServer;

fn size(c: &mut postgres::Client, table: &str) -> i64 {
    c.query_one("select pg_relation_size($1::text::regclass)", &[&table])
        .unwrap()
        .get(0)
}

#[test]
fn vacuum_space_is_reused_and_empty_pages_are_cut_off() {
    let server = TestServer::start();
    let mut c = server.connect();
    c.batch_execute(
        "create table t (id int4, pad text);
         insert into t select g, repeat('x', 200) from generate_series(1, 4000) g;",
    )
    .unwrap();
    let full = size(&mut c, "t");
    assert!(full > 50 * 8192, "{full}");

    // Half the rows go; the same number inserted again fits in their space.
    c.batch_execute("delete from t where id % 2 = 0").unwrap();
    c.batch_execute("vacuum t").unwrap();
    assert_eq!(size(&mut c, "t"), full, "no page at the end was empty");
    c.batch_execute("insert into t select g, repeat('y', 200) from generate_series(1, 2000) g")
        .unwrap();
    assert_eq!(size(&mut c, "t"), full, "re-inserted rows grew the file");
    let n: i64 = c.query_one("select count(*) from t", &[]).unwrap().get(0);
    assert_eq!(n, 4000);

    // Everything deleted: VACUUM cuts the file to nothing; pg_class follows.
    c.batch_execute("delete from t").unwrap();
    c.batch_execute("vacuum t").unwrap();
    assert_eq!(size(&mut c, "t"), 0);
    let row = c
        .query_one(
            "select relpages, reltuples from pg_class where relname = 't'",
            &[],
        )
        .unwrap();
    assert_eq!((row.get::<_, i32>(0), row.get::<_, f32>(1)), (0, 0.0));
    c.batch_execute("insert into t select g, repeat('x', 200) from generate_series(1, 4000) g")
        .unwrap();
    assert_eq!(size(&mut c, "t"), full);

    // Statistics: every change counted, VACUUM's figures reported.
    c.batch_execute("update t set pad = 'z' where id <= 10")
        .unwrap();
    c.batch_execute("vacuum t").unwrap();
    let row = c
        .query_one(
            "select n_tup_ins, n_tup_upd, n_tup_del, n_live_tup, n_dead_tup, vacuum_count,
                    last_vacuum is not null, n_ins_since_vacuum, idx_scan is null
             from pg_stat_user_tables where relname = 't'",
            &[],
        )
        .unwrap();
    assert_eq!(row.get::<_, i64>(0), 10_000);
    assert_eq!(row.get::<_, i64>(1), 10);
    assert_eq!(row.get::<_, i64>(2), 6000);
    assert_eq!(row.get::<_, i64>(3), 4000);
    assert_eq!(row.get::<_, i64>(4), 0);
    assert_eq!(row.get::<_, i64>(5), 3);
    assert!(row.get::<_, bool>(6));
    assert_eq!(row.get::<_, i64>(7), 0);
    assert!(row.get::<_, bool>(8));

    // An aborted insert's rows are dead tuples, which VACUUM removes.
    c.batch_execute("begin; insert into t select g, 'a' from generate_series(1, 300) g; rollback;")
        .unwrap();
    let dead: i64 = c
        .query_one(
            "select n_dead_tup from pg_stat_user_tables where relname = 't'",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(dead, 300);

    let e = c.batch_execute("vacuum t; select 1").unwrap_err();
    assert_eq!(e.code().unwrap().code(), "25001");
    let e = c.batch_execute("begin; vacuum t").unwrap_err();
    assert_eq!(e.code().unwrap().code(), "25001");
}

/// After VACUUM marks every page all-visible, sequential scans skip the
/// tuple headers; a change clears the page's flag, so an uncommitted
/// delete or update stays invisible to others, its commit shows at once,
/// and a snapshot taken before it still sees the old rows.
#[test]
fn scans_of_all_visible_pages_see_later_changes() {
    let server = TestServer::start();
    let mut a = server.connect();
    let mut b = server.connect();
    a.batch_execute(
        "create table v (id int4, pad text);
         insert into v select g, repeat('v', 100) from generate_series(1, 3000) g;",
    )
    .unwrap();
    a.batch_execute("vacuum v").unwrap();
    let pages = a
        .query_one(
            "select relpages, relallvisible from pg_class where relname = 'v'",
            &[],
        )
        .unwrap();
    let (relpages, relallvisible): (i32, i32) = (pages.get(0), pages.get(1));
    assert!(
        relpages > 10 && relallvisible == relpages,
        "{relpages} {relallvisible}"
    );
    let count = |c: &mut postgres::Client| -> (i64, i64) {
        let r = c
            .query_one("select count(*), coalesce(sum(id), 0) from v", &[])
            .unwrap();
        (r.get(0), r.get(1))
    };
    let all = (3000, 3000 * 3001 / 2);
    assert_eq!(count(&mut a), all);

    let mut rr = server.connect();
    rr.batch_execute("begin isolation level repeatable read")
        .unwrap();
    assert_eq!(count(&mut rr), all);

    b.batch_execute("begin; delete from v where id % 10 = 0; update v set id = -id where id = 1")
        .unwrap();
    assert_eq!(count(&mut a), all, "an uncommitted change showed");
    b.batch_execute("commit").unwrap();
    let deleted: i64 = (1..=300).map(|k| 10 * k).sum();
    let after = (2700, all.1 - deleted - 2);
    assert_eq!(count(&mut a), after);
    assert_eq!(count(&mut rr), all, "the older snapshot lost rows");
    rr.batch_execute("commit").unwrap();

    a.batch_execute("vacuum v").unwrap();
    assert_eq!(count(&mut a), after);
    a.batch_execute("insert into v values (5000, 'x')").unwrap();
    assert_eq!(count(&mut a), (2701, after.1 + 5000));
}

/// 100 rows, 30,000 single-row updates from 4 clients, autovacuum every
/// second with low thresholds: the table stays within a few times its
/// first size, every update is there, and autovacuum's work shows in
/// pg_stat_user_tables.
/// Updates of a table without indexes are heap-only (HOT) when the new
/// version fits on the old one's page: a row updated thousands of times
/// stays on its page without VACUUM (pruning shortens its chain, leaving a
/// redirect from the chain's root), every update counts in n_tup_hot_upd,
/// and VACUUM VERBOSE reports the dead line pointer a delete leaves.
#[test]
fn hot_updates_keep_a_row_on_its_page_without_vacuum() {
    let server = TestServer::start();
    let mut c = server.connect();
    c.batch_execute(
        "create table h (id int4, n int8, pad text);
         insert into h select g, 0, repeat('p', 100) from generate_series(1, 40) g;",
    )
    .unwrap();
    assert_eq!(size(&mut c, "h"), 8192);
    for _ in 0..3000 {
        c.batch_execute("update h set n = n + 1 where id = 7")
            .unwrap();
    }
    c.batch_execute("update h set n = n + 1, pad = repeat('q', 100) where id > 30")
        .unwrap();
    assert_eq!(size(&mut c, "h"), 8192, "HOT chains outgrew their page");
    let row = c
        .query_one(
            "select n_tup_upd, n_tup_hot_upd from pg_stat_user_tables where relname = 'h'",
            &[],
        )
        .unwrap();
    assert_eq!((row.get::<_, i64>(0), row.get::<_, i64>(1)), (3010, 3010));
    let rows = c
        .query(
            "select id, n, pad from h where id = 7 or id > 38 order by id",
            &[],
        )
        .unwrap();
    let got: Vec<(i32, i64, String)> = rows
        .iter()
        .map(|r| (r.get(0), r.get(1), r.get::<_, String>(2)[..1].to_string()))
        .collect();
    assert_eq!(
        got,
        vec![
            (7, 3000, "p".into()),
            (39, 1, "q".into()),
            (40, 1, "q".into())
        ]
    );

    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let mut cfg = server.config();
    let sink = seen.clone();
    cfg.notice_callback(move |n| sink.lock().unwrap().push(n.message().to_string()));
    let mut v = cfg.connect(postgres::NoTls).unwrap();
    v.batch_execute("delete from h where id = 3").unwrap();
    v.batch_execute("vacuum (verbose) h").unwrap();
    let seen = seen.lock().unwrap().clone();
    let finished = seen
        .iter()
        .find(|m| m.starts_with("finished vacuuming"))
        .unwrap_or_else(|| panic!("{seen:?}"));
    assert!(finished.contains("index scans: 0\n"), "{finished}");
    assert!(
        finished.contains(
            "index scan not needed: 1 pages from table (100.00% of total) had 1 dead item identifiers removed"
        ),
        "{finished}"
    );
    let n: i64 = c.query_one("select count(*) from h", &[]).unwrap().get(0);
    assert_eq!(n, 39);
    let n: i64 = c
        .query_one("select n from h where id = 7", &[])
        .unwrap()
        .get(0);
    assert_eq!(n, 3000);
}

#[test]
fn update_heavy_table_stays_bounded_with_autovacuum() {
    let server = TestServer::start_with(&[
        ("autovacuum", "on"),
        ("autovacuum_naptime", "1"),
        ("autovacuum_vacuum_threshold", "50"),
        ("autovacuum_vacuum_scale_factor", "0.05"),
        ("autovacuum_analyze_threshold", "50"),
    ]);
    let mut c = server.connect();
    c.batch_execute(
        "create table acc (id int4, v int8, pad text);
         insert into acc select g, 0, repeat('p', 60) from generate_series(0, 99) g;",
    )
    .unwrap();
    let initial = size(&mut c, "acc");
    const CLIENTS: i64 = 4;
    const UPDATES: i64 = 30_000;
    let largest = Arc::new(AtomicI64::new(initial));
    let done = Arc::new(AtomicBool::new(false));
    let watcher = {
        let (largest, done, mut w) = (largest.clone(), done.clone(), server.connect());
        std::thread::spawn(move || {
            while !done.load(Ordering::Relaxed) {
                largest.fetch_max(size(&mut w, "acc"), Ordering::Relaxed);
                std::thread::sleep(Duration::from_millis(50));
            }
        })
    };
    let clients: Vec<_> = (0..CLIENTS)
        .map(|k| {
            let cfg = server.config();
            std::thread::spawn(move || {
                let mut c = cfg.connect(postgres::NoTls).unwrap();
                let st = c.prepare("update acc set v = v + 1 where id = $1").unwrap();
                let mut x: u64 = 0x9e37_79b9_7f4a_7c15 ^ k as u64;
                for _ in 0..UPDATES / CLIENTS {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    let id = (x % 100) as i32;
                    assert_eq!(c.execute(&st, &[&id]).unwrap(), 1);
                }
            })
        })
        .collect();
    for t in clients {
        t.join().unwrap();
    }
    done.store(true, Ordering::Relaxed);
    watcher.join().unwrap();
    let largest = largest.load(Ordering::Relaxed).max(size(&mut c, "acc"));
    assert!(
        largest <= 4 * initial.max(2 * 8192),
        "table grew from {initial} to {largest} bytes"
    );
    let sum: i64 = c
        .query_one("select sum(v)::int8 from acc", &[])
        .unwrap()
        .get(0);
    assert_eq!(sum, UPDATES, "updates lost");
    let n: i64 = c.query_one("select count(*) from acc", &[]).unwrap().get(0);
    assert_eq!(n, 100);

    // Autovacuum has run and left the table's counters right.
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let row = c
            .query_one(
                "select n_live_tup, n_dead_tup, last_autovacuum is not null, autovacuum_count,
                        n_tup_upd
                 from pg_stat_user_tables where relname = 'acc'",
                &[],
            )
            .unwrap();
        let (live, dead, vacuumed) = (
            row.get::<_, i64>(0),
            row.get::<_, i64>(1),
            row.get::<_, bool>(2),
        );
        assert_eq!(row.get::<_, i64>(4), UPDATES);
        // Below the vacuum threshold (50 + 0.05 × 100) no new run comes.
        if live == 100 && dead <= 55 && vacuumed {
            assert!(row.get::<_, i64>(3) >= 1);
            break;
        }
        assert!(
            Instant::now() < deadline,
            "autovacuum did not catch up: live {live}, dead {dead}, vacuumed {vacuumed}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    let workers: i64 = c
        .query_one(
            "select count(*) from pg_stat_activity where backend_type = 'autovacuum worker'",
            &[],
        )
        .unwrap()
        .get(0);
    assert!(workers <= 3);
}

fn contents(c: &mut postgres::Client) -> Vec<(i32, i64, String)> {
    c.query("select id, v, pad from r order by id", &[])
        .unwrap()
        .iter()
        .map(|r| (r.get(0), r.get(1), r.get(2)))
        .collect()
}

/// Pruning is logged: a crash after on-page pruning, VACUUM's truncation
/// and inserts into reused slots replays to the same rows; so does a crash
/// in the middle of an update workload that prunes as it goes.
#[test]
fn crash_after_and_during_pruning_recovers_the_same_rows() {
    let mut server = TestServer::start();
    let mut c = server.connect();
    c.batch_execute(
        "create table r (id int4, v int8, pad text);
         insert into r select g, 0, repeat('q', 100) from generate_series(1, 2000) g;
         checkpoint;",
    )
    .unwrap();
    // Updates that do not fit on full pages prune them first; deletes
    // and VACUUM empty the end of the table; inserts reuse freed slots.
    for _ in 0..5 {
        c.batch_execute("update r set v = v + 1 where id % 7 = 0")
            .unwrap();
    }
    c.batch_execute("delete from r where id > 1500").unwrap();
    c.batch_execute("vacuum r").unwrap();
    c.batch_execute(
        "insert into r select g, -1, repeat('n', 50) from generate_series(3001, 3300) g;
         update r set pad = 'moved' where id % 11 = 0;",
    )
    .unwrap();
    let before = contents(&mut c);
    assert_eq!(before.len(), 1800);
    drop(c);
    server.kill();
    server.start_again();
    let mut c = server.connect();
    assert_eq!(contents(&mut c), before);

    // Now a crash while clients update (and prune) concurrently: every
    // acknowledged increment is there, at most the in-flight ones extra.
    let acked = Arc::new(AtomicI64::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let base: i64 = c
        .query_one("select sum(v)::int8 from r", &[])
        .unwrap()
        .get(0);
    let clients: Vec<_> = (0..4)
        .map(|k| {
            let (cfg, acked, stop) = (server.config(), acked.clone(), stop.clone());
            std::thread::spawn(move || {
                let Ok(mut c) = cfg.connect(postgres::NoTls) else {
                    return;
                };
                let mut id = 1 + k * 97;
                while !stop.load(Ordering::Relaxed) {
                    id = id * 31 % 1499 + 1;
                    match c.execute("update r set v = v + 1 where id = $1", &[&id]) {
                        Ok(1) => {
                            acked.fetch_add(1, Ordering::Relaxed);
                        }
                        Ok(n) => panic!("updated {n} rows"),
                        Err(_) => return,
                    }
                }
            })
        })
        .collect();
    // Let the clients get some pruning done, then kill the server.
    while acked.load(Ordering::Relaxed) < 3000 {
        std::thread::sleep(Duration::from_millis(20));
    }
    server.kill();
    stop.store(true, Ordering::Relaxed);
    for t in clients {
        t.join().unwrap();
    }
    server.start_again();
    let mut c = server.connect();
    let sum: i64 = c
        .query_one("select sum(v)::int8 from r", &[])
        .unwrap()
        .get(0);
    let acked = acked.load(Ordering::Relaxed);
    assert!(
        (base + acked..=base + acked + 4).contains(&sum),
        "sum {sum}, base {base}, acknowledged {acked}"
    );
    let n: i64 = c.query_one("select count(*) from r", &[]).unwrap().get(0);
    assert_eq!(n, 1800);
    c.batch_execute("vacuum r").unwrap();
    assert_eq!(
        c.query_one("select count(*) from r", &[])
            .unwrap()
            .get::<_, i64>(0),
        1800
    );
}

/// VACUUM stores relpages/reltuples in pg_class: it must not publish a
/// catalog version older than DDL that committed while it ran (it once did,
/// without the catalog-change lock, and a later DROP TABLE found its
/// pg_class row changed under it and panicked, or waited forever).
#[test]
fn vacuum_beside_ddl_keeps_the_catalog() {
    let s = TestServer::start();
    let mut c = s.connect();
    c.batch_execute(
        "create table vac_a (id int primary key, v int);
         insert into vac_a select g, g from generate_series(1, 1000) g;",
    )
    .unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let vacuums = {
        let stop = stop.clone();
        let mut v = s.connect();
        std::thread::spawn(move || {
            let mut n = 0;
            while !stop.load(Ordering::Relaxed) {
                v.batch_execute("vacuum vac_a").unwrap();
                n += 1;
            }
            n
        })
    };
    let deadline = Instant::now() + Duration::from_secs(4);
    let mut rounds = 0;
    while Instant::now() < deadline || rounds < 20 {
        c.batch_execute(
            "create table vac_b (id int primary key, r int);
             insert into vac_b values (1, 1);
             alter table vac_b add column w int;",
        )
        .unwrap();
        c.batch_execute("drop table vac_b").unwrap();
        rounds += 1;
    }
    stop.store(true, Ordering::Relaxed);
    let n = vacuums.join().unwrap();
    assert!(n > 0, "no VACUUM ran");
    // The catalog still knows every row it wrote.
    c.batch_execute("create table vac_b (id int); drop table vac_a; drop table vac_b")
        .unwrap();
    let left: i64 = c
        .query_one(
            "select count(*) from pg_class where relname like 'vac\\_%'",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(left, 0, "after {rounds} DDL rounds beside {n} VACUUMs");
}
