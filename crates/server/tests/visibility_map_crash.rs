//! The visibility map through crashes: a table is vacuumed (every page
//! all-visible), then the server is SIGKILLed while clients update rows
//! (heap-only and cold updates, which clear pages' all-visible state), a
//! session keeps a transaction of inserts, updates and deletes open, and
//! another runs VACUUM over and over (setting bits again, logged), with a
//! small buffer pool so heap and map pages are written and evicted between
//! checkpoints. After each restart, index-only scans, which trust the map
//! for every page whose bit is set, must agree with sequential scans: a bit
//! set on a page holding a version some snapshot must not see (the open
//! transaction's, rolled back by the crash) or missing the newest version
//! of a row would show as a difference. Every acknowledged increment is
//! there too.

mod support;

use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use postgres::Client;
use support::{test_seed, TestRng, TestServer};

const ROWS: i64 = 20_000;
const UPDATERS: usize = 3;
const ROUNDS: usize = 3;

const INDEX_ONLY: &str = "set enable_seqscan = off; set enable_bitmapscan = off; \
     set enable_indexscan = on; set enable_indexonlyscan = on";
const SEQ_ONLY: &str = "set enable_seqscan = on; set enable_bitmapscan = off; \
     set enable_indexscan = off; set enable_indexonlyscan = off";

/// Single-statement increments of `v` (acknowledged ones counted), moving
/// `k` now and then (a cold update: `k` is indexed).
fn updater(cfg: postgres::Config, seed: u64, acked: Arc<AtomicI64>, stop: Arc<AtomicBool>) {
    let Ok(mut c) = cfg.connect(postgres::NoTls) else {
        return;
    };
    let mut rng = TestRng::new(seed);
    while !stop.load(Ordering::Relaxed) {
        let id = rng.range(1, ROWS);
        let sql = if rng.chance(20) {
            format!(
                "update t set v = v + 1, k = {} where id = {id}",
                rng.range(0, 1000)
            )
        } else {
            format!("update t set v = v + 1 where id = {id}")
        };
        match c.execute(sql.as_str(), &[]) {
            Ok(1) => {}
            Ok(n) => panic!("`{sql}` updated {n} rows"),
            Err(_) => return,
        }
        acked.fetch_add(1, Ordering::Relaxed);
    }
}

/// A transaction left open until the crash rolls it back.
fn open_transaction(cfg: postgres::Config, round: usize, stop: Arc<AtomicBool>) {
    let Ok(mut c) = cfg.connect(postgres::NoTls) else {
        return;
    };
    let first = 1_000_000 * (round as i64 + 1);
    let sql = format!(
        "begin;
         insert into t select g, g % 1000, 0, 'in flight' from generate_series({first}, {first} + 499) g;
         delete from t where id % 97 = {round};
         update t set k = k + 1 where id % 89 = {round};"
    );
    if c.batch_execute(&sql).is_err() {
        return;
    }
    while !stop.load(Ordering::Relaxed) {
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// VACUUM over and over: all-visible bits set again between the changes.
fn vacuumer(cfg: postgres::Config, stop: Arc<AtomicBool>) {
    let Ok(mut c) = cfg.connect(postgres::NoTls) else {
        return;
    };
    while !stop.load(Ordering::Relaxed) {
        if c.batch_execute("vacuum t").is_err() {
            return;
        }
    }
}

fn one_row(c: &mut Client, settings: &str, sql: &str) -> (i64, i64) {
    c.batch_execute(settings).unwrap();
    let r = c
        .query_one(sql, &[])
        .unwrap_or_else(|e| panic!("{sql} under `{settings}`: {e:?}"));
    (r.get(0), r.get(1))
}

fn ids(c: &mut Client, settings: &str, sql: &str) -> Vec<i64> {
    c.batch_execute(settings).unwrap();
    c.query(sql, &[])
        .unwrap_or_else(|e| panic!("{sql} under `{settings}`: {e:?}"))
        .iter()
        .map(|r| r.get(0))
        .collect()
}

fn plan(c: &mut Client, sql: &str) -> String {
    c.batch_execute(INDEX_ONLY).unwrap();
    c.simple_query(&format!("explain (costs off) {sql}"))
        .unwrap()
        .into_iter()
        .filter_map(|m| match m {
            postgres::SimpleQueryMessage::Row(r) => Some(r.get(0).unwrap_or("").to_string()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Index-only scans of both indexes against the table, whole and in ranges.
fn check_agreement(c: &mut Client, rng: &mut TestRng, ctx: &str) {
    let whole_pk = "select id from t order by id";
    let whole_k = "select k from t where k >= 0 order by k";
    for (sql, index) in [(whole_pk, "t_pkey"), (whole_k, "t_k_idx")] {
        let p = plan(c, sql);
        assert!(
            p.contains(&format!("Index Only Scan using {index} on t")),
            "{ctx}: not an index-only scan of {index}:\n{p}"
        );
        let via_index = ids(c, INDEX_ONLY, sql);
        let via_heap = ids(c, SEQ_ONLY, sql);
        assert_eq!(
            via_index.len(),
            via_heap.len(),
            "{ctx}: {index} returns {} rows, the table has {}",
            via_index.len(),
            via_heap.len()
        );
        assert!(via_index == via_heap, "{ctx}: {index} and the table differ");
    }
    for _ in 0..40 {
        let lo = rng.range(-10, ROWS + 10);
        let hi = lo + rng.range(0, 3000);
        let sql = format!(
            "select count(*), coalesce(sum(id), 0)::int8 from t where id between {lo} and {hi}"
        );
        assert_eq!(
            one_row(c, INDEX_ONLY, &sql),
            one_row(c, SEQ_ONLY, &sql),
            "{ctx}: {sql}"
        );
        let (klo, khi) = (lo % 1000, lo % 1000 + rng.range(0, 200));
        let sql = format!(
            "select count(*), coalesce(sum(k), 0)::int8 from t where k between {klo} and {khi}"
        );
        assert_eq!(
            one_row(c, INDEX_ONLY, &sql),
            one_row(c, SEQ_ONLY, &sql),
            "{ctx}: {sql}"
        );
    }
    c.batch_execute("reset all").unwrap();
}

#[test]
fn index_only_scans_agree_with_the_heap_after_kills() {
    let seed = test_seed("VM_CRASH_SEED", 29);
    eprintln!("visibility_map_crash: seed {seed} (set VM_CRASH_SEED to replay another)");
    let mut server = TestServer::start_with(&[("shared_buffers", "1MB")]);
    server.psql_script(&format!(
        "create table t (id int8 primary key, k int8, v int8, pad text);
         insert into t select g, g % 1000, 0, repeat('x', 40) from generate_series(1, {ROWS}) g;
         create index t_k_idx on t (k);
         vacuum analyze t;"
    ));
    let sizes = server
        .connect()
        .query_one(
            "select relallvisible, relpages from pg_class where relname = 't'",
            &[],
        )
        .unwrap();
    let (all_visible, pages): (i32, i32) = (sizes.get(0), sizes.get(1));
    assert!(
        pages > 0 && all_visible == pages,
        "VACUUM left pages not all-visible: {all_visible} of {pages}"
    );
    let mut rng = TestRng::new(seed);
    let mut acked_total = 0i64;
    for round in 0..ROUNDS {
        let ctx = format!("seed {seed} (VM_CRASH_SEED replays it), round {round}");
        let stop = Arc::new(AtomicBool::new(false));
        let acked = Arc::new(AtomicI64::new(0));
        let mut threads = Vec::new();
        for u in 0..UPDATERS {
            let (cfg, a, s) = (server.config(), acked.clone(), stop.clone());
            let useed = seed ^ ((round * UPDATERS + u) as u64) << 20;
            threads.push(std::thread::spawn(move || updater(cfg, useed, a, s)));
        }
        let (cfg, s) = (server.config(), stop.clone());
        threads.push(std::thread::spawn(move || open_transaction(cfg, round, s)));
        let (cfg, s) = (server.config(), stop.clone());
        threads.push(std::thread::spawn(move || vacuumer(cfg, s)));
        if round == 1 {
            std::thread::sleep(Duration::from_millis(400));
            server.psql("checkpoint");
        }
        std::thread::sleep(Duration::from_millis(1_000 + 400 * round as u64));
        server.kill();
        stop.store(true, Ordering::Relaxed);
        for t in threads {
            t.join().unwrap();
        }
        server.start_again();
        let mut c = server.connect();
        // Acknowledged increments survive; at most one in flight per updater.
        let acked_now = acked.load(Ordering::Relaxed);
        acked_total += acked_now;
        let v: i64 = c
            .query_one("select coalesce(sum(v), 0)::int8 from t", &[])
            .unwrap()
            .get(0);
        assert!(
            v >= acked_total && v <= acked_total + UPDATERS as i64,
            "{ctx}: sum(v) = {v}, acknowledged {acked_total}"
        );
        acked_total = v;
        let in_flight: i64 = c
            .query_one("select count(*) from t where id > 1000000", &[])
            .unwrap()
            .get(0);
        assert_eq!(in_flight, 0, "{ctx}: the open transaction's rows are there");
        check_agreement(&mut c, &mut rng, &ctx);
        // Marked again after the crash: the rolled-back versions are dead now.
        c.batch_execute("vacuum t").unwrap();
        check_agreement(&mut c, &mut rng, &format!("{ctx}, vacuumed after restart"));
        eprintln!("visibility_map_crash: round {round}: {acked_now} increments acknowledged");
    }
}
