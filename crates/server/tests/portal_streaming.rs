//! Portals executed with a row limit (JDBC's setFetchSize, psycopg's named
//! cursors) stream from a suspended plan: the server's memory stays flat over
//! a result of two billion rows, and a cancel reaches the running batch.

mod support;

use std::thread;
use std::time::{Duration, Instant};

use postgres::error::SqlState;
use postgres::NoTls;
use support::TestServer;

fn resident_kb(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmRSS in /proc/PID/status")
}

#[test]
fn fetch_size_cursor_over_two_billion_rows_keeps_memory_flat() {
    let server = TestServer::start();
    let mut client = server.connect();
    let mut tx = client.transaction().unwrap();
    let started = Instant::now();
    let portal = tx
        .bind(
            "select g, g * 2 as twice from generate_series(1::bigint, 2000000000::bigint) g",
            &[],
        )
        .unwrap();
    let mut next = 1i64;
    let mut baseline = 0;
    for batch in 0..300 {
        let rows = tx.query_portal(&portal, 1000).unwrap();
        assert_eq!(rows.len(), 1000);
        for r in &rows {
            let (g, twice): (i64, i64) = (r.get(0), r.get(1));
            assert_eq!((g, twice), (next, next * 2));
            next += 1;
        }
        if batch == 10 {
            baseline = resident_kb(server.pid());
        }
    }
    let grown = resident_kb(server.pid()).saturating_sub(baseline);
    assert!(
        grown < 32 * 1024,
        "server grew by {grown} kB over 290 batches of a streaming portal"
    );
    assert!(
        started.elapsed() < Duration::from_secs(60),
        "300 batches took {:?}",
        started.elapsed()
    );
    drop(portal);
    tx.commit().unwrap();
}

#[test]
fn portal_batches_then_completion_match_the_whole_result() {
    let server = TestServer::start();
    let mut client = server.connect();
    client
        .batch_execute("create table t (a int, b text); insert into t select g, 'r' || g from generate_series(1, 10) g")
        .unwrap();
    let mut tx = client.transaction().unwrap();
    let portal = tx
        .bind("select a, b from t where a > $1 order by a", &[&2i32])
        .unwrap();
    let mut seen = Vec::new();
    for want in [3, 3, 2, 0, 0] {
        let rows = tx.query_portal(&portal, 3).unwrap();
        assert_eq!(rows.len(), want);
        seen.extend(
            rows.iter()
                .map(|r| (r.get::<_, i32>(0), r.get::<_, String>(1))),
        );
    }
    let expected: Vec<(i32, String)> = (3..=10).map(|i| (i, format!("r{i}"))).collect();
    assert_eq!(seen, expected);
    // A second portal on the same statement, fetched to the end in one go.
    let portal = tx.bind("select a from t order by a", &[]).unwrap();
    assert_eq!(tx.query_portal(&portal, 4).unwrap().len(), 4);
    assert_eq!(tx.query_portal(&portal, 0).unwrap().len(), 6);
    tx.commit().unwrap();
}

#[test]
fn cancel_reaches_a_streaming_portal() {
    let server = TestServer::start();
    let mut client = server.connect();
    let token = client.cancel_token();
    let mut tx = client.transaction().unwrap();
    let portal = tx
        .bind(
            "select g from generate_series(1::bigint, 2000000000::bigint) g",
            &[],
        )
        .unwrap();
    assert_eq!(tx.query_portal(&portal, 10).unwrap().len(), 10);
    let canceller = thread::spawn(move || {
        thread::sleep(Duration::from_millis(500));
        token.cancel_query(NoTls).unwrap();
    });
    // Fetch everything that is left: only a cancel can end this.
    let started = Instant::now();
    let err = tx
        .query_portal(&portal, 0)
        .expect_err("cancel must stop the fetch");
    canceller.join().unwrap();
    assert_eq!(err.code(), Some(&SqlState::QUERY_CANCELED), "{err}");
    assert!(started.elapsed() < Duration::from_secs(20));
    tx.rollback().unwrap();
    let v: i32 = client.query_one("select 41 + 1", &[]).unwrap().get(0);
    assert_eq!(v, 42);
}
