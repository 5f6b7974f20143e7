//! B-tree indexes through crashes: the server is SIGKILLed while four clients
//! insert rows fast enough to split index pages (random keys, long text keys,
//! single rows and 20-row transactions), with a small buffer pool so index
//! pages are written and evicted between checkpoints. After each restart:
//! every acknowledged row is there (and nothing never inserted, and no
//! transaction half there), amcheck's `bt_index_check` and
//! `bt_index_parent_check` pass on every index, and forced index scans agree
//! with forced sequential scans (counts, sums, per-key lookups of a sample).
//!
//! Checked against PostgreSQL 15 with
//! `SCALEGRES_TEST_BIN=crates/server/tests/support/postgres_as_scalegres.sh`.

mod support;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use postgres::Client;
use support::{test_seed, TestRng, TestServer};

const CLIENTS: usize = 4;
const ROUNDS: usize = 3;
const BATCH: i64 = 20;
const INDEXES: [&str; 3] = ["t_pkey", "t_k_idx", "t_s_idx"];
/// Keys of `k` repeat: the k index holds many duplicates.
const K_RANGE: i64 = 50_000;

const INDEX_PATHS: &str = "set enable_seqscan = off; set enable_bitmapscan = off; \
     set enable_indexscan = on; set enable_indexonlyscan = on";
const SEQ_ONLY: &str = "set enable_seqscan = on; set enable_bitmapscan = off; \
     set enable_indexscan = off; set enable_indexonlyscan = off";

/// What one client had acknowledged, and what it was doing when the server died.
#[derive(Default)]
struct Acked {
    ids: BTreeSet<i64>,
    /// A statement or transaction in progress at the kill: all of these ids
    /// are there, or none.
    in_flight: Vec<i64>,
}

fn long_text(rng: &mut TestRng) -> String {
    let word = format!("{:016x}", rng.next_u64());
    word.repeat(rng.range(3, 10) as usize)
}

fn client_work(
    cfg: postgres::Config,
    seed: u64,
    client: usize,
    round: usize,
    acked: Arc<Mutex<Acked>>,
    stop: Arc<AtomicBool>,
) {
    let Ok(mut c) = cfg.connect(postgres::NoTls) else {
        return;
    };
    let Ok(insert) = c.prepare("insert into t values ($1, $2, $3, $4)") else {
        return;
    };
    let mut rng = TestRng::new(seed ^ (((round * CLIENTS + client) as u64) << 32));
    let base = ((round * CLIENTS + client) as i64) * 1_000_000_000;
    let mut n: i64 = 0;
    while !stop.load(Ordering::Relaxed) {
        if n % 5 == 4 {
            // A 20-row transaction.
            let ids: Vec<i64> = (n..n + BATCH).map(|i| base + i).collect();
            n += BATCH;
            let rows: Vec<String> = ids
                .iter()
                .map(|id| {
                    format!(
                        "({id}, {}, '{}', {client})",
                        rng.range(0, K_RANGE),
                        long_text(&mut rng)
                    )
                })
                .collect();
            acked.lock().unwrap().in_flight = ids.clone();
            let sql = format!("begin; insert into t values {}; commit", rows.join(", "));
            if c.batch_execute(&sql).is_err() {
                return;
            }
            let mut a = acked.lock().unwrap();
            a.in_flight.clear();
            a.ids.extend(ids);
        } else {
            let id = base + n;
            n += 1;
            let k = rng.range(0, K_RANGE);
            let s = long_text(&mut rng);
            acked.lock().unwrap().in_flight = vec![id];
            if c.execute(&insert, &[&id, &k, &s, &(client as i32)])
                .is_err()
            {
                return;
            }
            let mut a = acked.lock().unwrap();
            a.in_flight.clear();
            a.ids.insert(id);
        }
    }
}

type Row = (i64, i64, String);

fn rows(c: &mut Client, settings: &str, sql: &str) -> Vec<Row> {
    c.batch_execute(settings).unwrap();
    c.query(sql, &[])
        .unwrap_or_else(|e| panic!("{sql} under `{settings}`: {e:?}"))
        .iter()
        .map(|r| (r.get(0), r.get(1), r.get(2)))
        .collect()
}

/// Up to 10 ids of rows in sorted `a` beyond those in sorted `b` (duplicates
/// counted), each with how often `b` has it.
fn multiset_minus(a: &[Row], b: &[Row]) -> Vec<(i64, usize)> {
    let (mut i, mut j, mut out) = (0, 0, Vec::new());
    while i < a.len() && out.len() < 10 {
        if j < b.len() && a[i] == b[j] {
            i += 1;
            j += 1;
        } else if j < b.len() && b[j] < a[i] {
            j += 1;
        } else {
            out.push((a[i].0, b.iter().filter(|r| r.0 == a[i].0).count()));
            i += 1;
        }
    }
    out
}

/// Asserts that EXPLAIN of `sql` under the forced index settings uses `index`.
fn assert_uses_index(c: &mut Client, sql: &str, index: &str) {
    c.batch_execute(INDEX_PATHS).unwrap();
    let plan: Vec<String> = c
        .simple_query(&format!("explain (costs off) {sql}"))
        .unwrap()
        .into_iter()
        .filter_map(|m| match m {
            postgres::SimpleQueryMessage::Row(r) => Some(r.get(0).unwrap_or("").to_string()),
            _ => None,
        })
        .collect();
    let plan = plan.join("\n");
    assert!(
        plan.contains(&format!("using {index} on t")),
        "the forced plan does not read {index}:\n{plan}"
    );
}

fn check_after_restart(server: &TestServer, all: &[Arc<Mutex<Acked>>], seed: u64, round: usize) {
    let ctx = format!("seed {seed} (INDEX_CRASH_SEED replays it), round {round}");
    let mut c = server.connect();
    for index in INDEXES {
        for check in ["bt_index_check", "bt_index_parent_check"] {
            if let Err(e) = c.batch_execute(&format!("select {check}('{index}')")) {
                panic!("{ctx}: {check}('{index}') failed after the crash: {e:?}");
            }
        }
    }

    // The table through a sequential scan: the reference.
    let heap = rows(&mut c, SEQ_ONLY, "select id, k, s from t");
    let by_id: BTreeMap<i64, (i64, String)> = heap
        .iter()
        .map(|(id, k, s)| (*id, (*k, s.clone())))
        .collect();
    assert_eq!(by_id.len(), heap.len(), "{ctx}: an id is there twice");

    // Durability and atomicity.
    for a in all {
        let a = a.lock().unwrap();
        for id in &a.ids {
            assert!(by_id.contains_key(id), "{ctx}: acknowledged row {id} lost");
        }
        let present = a
            .in_flight
            .iter()
            .filter(|id| by_id.contains_key(id))
            .count();
        assert!(
            present == 0 || present == a.in_flight.len(),
            "{ctx}: {present} of the {} rows of an interrupted transaction are there",
            a.in_flight.len()
        );
    }
    for id in by_id.keys() {
        let known = all.iter().any(|a| {
            let a = a.lock().unwrap();
            a.ids.contains(id) || a.in_flight.contains(id)
        });
        assert!(known, "{ctx}: row {id} was never inserted");
    }

    // Each index, read in full through a forced index scan, gives the table.
    let full_scans = [
        ("t_pkey", "select id, k, s from t where id >= 0 order by id"),
        ("t_k_idx", "select id, k, s from t where k >= 0 order by k"),
        ("t_s_idx", "select id, k, s from t where s >= '' order by s"),
    ];
    let mut sorted_heap = heap.clone();
    sorted_heap.sort();
    for (index, sql) in full_scans {
        assert_uses_index(&mut c, sql, index);
        let mut via_index = rows(&mut c, INDEX_PATHS, sql);
        via_index.sort();
        if via_index != sorted_heap {
            panic!(
                "{ctx}: a full scan of {index} finds {} rows, the table has {}\n\
                 ids the index gives more often than the table, with how often the \
                 table has them (first 10): {:?}\n\
                 ids the table has more often than the index, with how often the index \
                 gives them (first 10): {:?}",
                via_index.len(),
                sorted_heap.len(),
                multiset_minus(&via_index, &sorted_heap),
                multiset_minus(&sorted_heap, &via_index),
            );
        }
    }
    let totals =
        "select count(*), coalesce(sum(k), 0)::int8, count(distinct s) from t where k >= 0";
    c.batch_execute(INDEX_PATHS).unwrap();
    let a = c.query_one(totals, &[]).unwrap();
    c.batch_execute(SEQ_ONLY).unwrap();
    let b = c.query_one(totals, &[]).unwrap();
    let get = |r: &postgres::Row| (r.get::<_, i64>(0), r.get::<_, i64>(1), r.get::<_, i64>(2));
    assert_eq!(
        get(&a),
        get(&b),
        "{ctx}: count, sum and distinct through t_k_idx vs the table"
    );

    // Point lookups of a sample through each index.
    let mut rng = TestRng::new(seed + round as u64);
    let ids: Vec<i64> = by_id.keys().copied().collect();
    c.batch_execute(INDEX_PATHS).unwrap();
    assert_uses_index(&mut c, "select k, s from t where id = 1", "t_pkey");
    let by_pk = c.prepare("select k, s from t where id = $1").unwrap();
    let by_k = c
        .prepare("select id from t where k = $1 order by id")
        .unwrap();
    let by_s = c
        .prepare("select id from t where s = $1 order by id")
        .unwrap();
    for _ in 0..200.min(ids.len()) {
        let id = *rng.pick(&ids);
        let (k, s) = &by_id[&id];
        let got = c.query(&by_pk, &[&id]).unwrap();
        assert_eq!(got.len(), 1, "{ctx}: lookup of id {id} through t_pkey");
        assert_eq!(
            (got[0].get::<_, i64>(0), got[0].get::<_, String>(1)),
            (*k, s.clone())
        );
        let want_k: Vec<i64> = by_id
            .iter()
            .filter(|(_, v)| v.0 == *k)
            .map(|(i, _)| *i)
            .collect();
        let got_k: Vec<i64> = c
            .query(&by_k, &[k])
            .unwrap()
            .iter()
            .map(|r| r.get(0))
            .collect();
        assert_eq!(got_k, want_k, "{ctx}: lookup of k = {k} through t_k_idx");
        let want_s: Vec<i64> = by_id
            .iter()
            .filter(|(_, v)| &v.1 == s)
            .map(|(i, _)| *i)
            .collect();
        let got_s: Vec<i64> = c
            .query(&by_s, &[s])
            .unwrap()
            .iter()
            .map(|r| r.get(0))
            .collect();
        assert_eq!(got_s, want_s, "{ctx}: lookup of s = {s:?} through t_s_idx");
    }
    // Keys that are not there are not found either.
    for id in [-1_i64, 999_999_999, i64::MAX] {
        assert!(
            c.query(&by_pk, &[&id]).unwrap().is_empty(),
            "{ctx}: id {id} found"
        );
    }
    c.batch_execute("reset all").unwrap();
}

#[test]
fn indexes_survive_kills_during_page_splits() {
    let seed = test_seed("INDEX_CRASH_SEED", 13);
    eprintln!("index_crash: seed {seed} (set INDEX_CRASH_SEED to replay another)");
    // A small pool: index pages are evicted and written while the clients run.
    let mut server = TestServer::start_with(&[("shared_buffers", "1MB")]);
    server.psql_script(
        "create extension if not exists amcheck;
         create table t (id int8 primary key, k int8, s text, client int4);
         create index t_k_idx on t (k);
         create index t_s_idx on t (s);",
    );
    let mut all: Vec<Arc<Mutex<Acked>>> = Vec::new();
    for round in 0..ROUNDS {
        let stop = Arc::new(AtomicBool::new(false));
        let acked: Vec<Arc<Mutex<Acked>>> = (0..CLIENTS).map(|_| Arc::default()).collect();
        let threads: Vec<_> = (0..CLIENTS)
            .map(|client| {
                let (cfg, a, s) = (server.config(), acked[client].clone(), stop.clone());
                std::thread::spawn(move || client_work(cfg, seed, client, round, a, s))
            })
            .collect();
        if round == 1 {
            // Some index pages on disk from a checkpoint, later changes only in the log.
            std::thread::sleep(Duration::from_millis(500));
            server.psql("checkpoint");
        }
        // Kill at a different moment each round.
        std::thread::sleep(Duration::from_millis(1_200 + 500 * round as u64));
        server.kill();
        stop.store(true, Ordering::Relaxed);
        for t in threads {
            t.join().unwrap();
        }
        all.extend(acked);
        server.start_again();
        check_after_restart(&server, &all, seed, round);
        // What was in flight is settled now: there, or never will be.
        let present: BTreeSet<i64> = server
            .connect()
            .query("select id from t", &[])
            .unwrap()
            .iter()
            .map(|r| r.get(0))
            .collect();
        for a in &all {
            let mut a = a.lock().unwrap();
            let flight = std::mem::take(&mut a.in_flight);
            a.ids
                .extend(flight.into_iter().filter(|id| present.contains(id)));
        }
    }
    // The clients split pages: each index is well past its root page.
    let mut c = server.connect();
    for index in INDEXES {
        let pages: i64 = c
            .query_one(&format!("select pg_relation_size('{index}') / 8192"), &[])
            .unwrap()
            .get(0);
        assert!(pages >= 20, "seed {seed}: {index} has only {pages} pages");
    }
    let rows: i64 = c.query_one("select count(*) from t", &[]).unwrap().get(0);
    eprintln!("index_crash: {rows} rows after {ROUNDS} crashes");
    // A clean restart after all that: still sound.
    drop(c);
    server.restart();
    check_after_restart(&server, &all, seed, ROUNDS);
}
