//! SQL cursors and prepared statements through a real client: a cursor over
//! a table larger than shared_buffers, fetched in batches, keeps the server's
//! memory flat; DECLARE with parameters and FETCH work over the extended
//! protocol (psycopg's server-side cursors); protocol-level statements share
//! PREPARE's namespace, so psycopg's `DEALLOCATE ALL` after a rollback works.

mod support;

use postgres::error::SqlState;
use postgres::SimpleQueryMessage;
use support::TestServer;

fn resident_kb(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmRSS in /proc/PID/status")
}

/// Fetches the whole cursor `name` in batches of `batch`; returns the row
/// count, the sum of the first column and the server's largest growth in
/// resident memory after the first batches.
fn fetch_all_in_batches(
    server: &TestServer,
    tx: &mut postgres::Transaction<'_>,
    name: &str,
    batch: usize,
) -> (usize, i64, u64) {
    let (mut rows, mut sum, mut baseline, mut grown) = (0usize, 0i64, 0u64, 0u64);
    for i in 0.. {
        let got = tx
            .query(&format!("fetch {batch} from {name}"), &[])
            .unwrap();
        rows += got.len();
        sum += got
            .iter()
            .map(|r| i64::from(r.get::<_, i32>(0)))
            .sum::<i64>();
        if i == 3 {
            baseline = resident_kb(server.pid());
        } else if i > 3 {
            grown = grown.max(resident_kb(server.pid()).saturating_sub(baseline));
        }
        if got.len() < batch {
            break;
        }
    }
    (rows, sum, grown)
}

#[test]
fn cursor_over_a_large_table_streams_in_batches() {
    let server = TestServer::start();
    let mut client = server.connect();
    const N: i64 = 200_000;
    client
        .batch_execute(&format!(
            "create table big(id int, pad text);
             insert into big select g, repeat('x', 120) from generate_series(1, {N}) g"
        ))
        .unwrap();
    let expected_sum = N * (N + 1) / 2;
    // A cursor as psycopg declares it (no SCROLL option; a plan that could
    // scroll) and a NO SCROLL one: neither keeps the rows it has sent.
    for options in ["", "no scroll"] {
        let mut tx = client.transaction().unwrap();
        tx.batch_execute(&format!(
            "declare c {options} cursor for select id, pad from big"
        ))
        .unwrap();
        let (rows, sum, grown) = fetch_all_in_batches(&server, &mut tx, "c", 2000);
        assert_eq!(
            (rows, sum),
            (N as usize, expected_sum),
            "cursor {options:?}"
        );
        assert!(
            grown < 20 * 1024,
            "server grew by {grown} kB fetching a {options:?} cursor over {N} rows"
        );
        tx.commit().unwrap();
    }
}

#[test]
fn declare_with_parameters_and_fetch_over_the_extended_protocol() {
    let server = TestServer::start();
    let mut client = server.connect();
    client
        .batch_execute(
            "create table t(a int, b text);
             insert into t select g, 'r' || g from generate_series(1, 100) g",
        )
        .unwrap();
    let mut tx = client.transaction().unwrap();
    tx.execute(
        "declare \"named\" cursor for select a, b from t where a > $1 order by a",
        &[&90i32],
    )
    .unwrap();
    let rows = tx.query("fetch forward 3 from \"named\"", &[]).unwrap();
    let got: Vec<(i32, String)> = rows.iter().map(|r| (r.get(0), r.get(1))).collect();
    assert_eq!(
        got,
        vec![(91, "r91".into()), (92, "r92".into()), (93, "r93".into())]
    );
    // MOVE returns no rows; the position moved.
    assert_eq!(tx.execute("move 5 in \"named\"", &[]).unwrap(), 5);
    let rows = tx.query("fetch all from \"named\"", &[]).unwrap();
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0].get::<_, i32>(0), 99);
    let err = tx.query("fetch nosuch", &[]).unwrap_err();
    assert_eq!(err.code(), Some(&SqlState::INVALID_CURSOR_NAME));
    tx.rollback().unwrap();

    // A BINARY cursor's rows come in binary over the simple protocol.
    let mut tx = client.transaction().unwrap();
    tx.batch_execute("declare bin binary cursor for select 5::int4, 'ab'::text")
        .unwrap();
    let messages = tx.simple_query("fetch bin").unwrap();
    let row = messages
        .iter()
        .find_map(|m| match m {
            SimpleQueryMessage::Row(r) => Some(r),
            _ => None,
        })
        .expect("one row");
    assert_eq!(row.get(0), Some("\0\0\0\u{5}"));
    assert_eq!(row.get(1), Some("ab"));
    tx.rollback().unwrap();
}

#[test]
fn protocol_statements_share_prepare_namespace_and_deallocate_all_after_rollback() {
    let server = TestServer::start();
    let mut client = server.connect();
    client.batch_execute("create table t(a int)").unwrap();
    // A statement prepared by the driver (as psycopg's auto-prepare does
    // after a statement's fifth execution) is a named prepared statement.
    let stmt = client.prepare("select $1::int + 1").unwrap();
    assert_eq!(
        client.query_one(&stmt, &[&1i32]).unwrap().get::<_, i32>(0),
        2
    );
    // (The client prepares its own queries under names too: look for ours.)
    let row = client
        .query_one(
            "select name, from_sql, parameter_types from pg_prepared_statements \
             where statement = 'select $1::int + 1'",
            &[],
        )
        .unwrap();
    let name: String = row.get(0);
    assert!(!row.get::<_, bool>(1));
    assert_eq!(row.get::<_, String>(2), "{integer}");
    // SQL EXECUTE runs it, and PREPARE cannot take its name.
    let messages = client.simple_query(&format!("execute {name}(41)")).unwrap();
    assert!(messages.iter().any(|m| matches!(
        m,
        SimpleQueryMessage::Row(r) if r.get(0) == Some("42")
    )));
    let err = client
        .batch_execute(&format!("prepare {name} as select 1"))
        .unwrap_err();
    assert_eq!(err.code(), Some(&SqlState::DUPLICATE_PSTATEMENT));

    // psycopg's rollback(): ROLLBACK, then DEALLOCATE ALL.
    client.batch_execute("begin").unwrap();
    let err = client
        .execute("insert into t values (1 / 0)", &[])
        .unwrap_err();
    assert_eq!(err.code(), Some(&SqlState::DIVISION_BY_ZERO));
    // Inside the failed block it waits for the block's end, as in PostgreSQL.
    let err = client.batch_execute("deallocate all").unwrap_err();
    assert_eq!(err.code(), Some(&SqlState::IN_FAILED_SQL_TRANSACTION));
    client.batch_execute("rollback").unwrap();
    client.batch_execute("deallocate all").unwrap();
    let err = client.query_one(&stmt, &[&1i32]).unwrap_err();
    assert_eq!(err.code(), Some(&SqlState::INVALID_SQL_STATEMENT_NAME));
    let messages = client
        .simple_query("select count(*) from pg_prepared_statements")
        .unwrap();
    assert!(messages.iter().any(|m| matches!(
        m,
        SimpleQueryMessage::Row(r) if r.get(0) == Some("0")
    )));
    // The driver prepares again and goes on.
    let stmt = client.prepare("select $1::int * 2").unwrap();
    assert_eq!(
        client.query_one(&stmt, &[&21i32]).unwrap().get::<_, i32>(0),
        42
    );
}
