//! End-to-end memory check of the fuzz corpora (issue 7, bounded memory):
//! mutated protocol message streams over real TCP connections and generated
//! and mutated SQL as simple queries go to a real server; afterwards the
//! server must be alive, its resident set must have stayed under a fixed
//! ceiling throughout, and an ordinary query must still work.
//!
//! Generated SQL nests at most `MAX_NESTING` deep here (an upper bound from
//! the text, see `sql::fuzz::nesting_bound`), so this test is about memory
//! and garbage, not stack depth; the in-process targets go deeper.
//! `SCALEGRES_FUZZ_ITERS` / `SCALEGRES_FUZZ_SECONDS` / `SCALEGRES_FUZZ_SEED`
//! make it a long run, as for the unit-test targets.

mod support;

use std::io::{ErrorKind, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::time::{Duration, Instant};

use common::fuzz::{Budget, Rng};
use server::fuzz::{frontend_messages, startup_packet};
use sql::fuzz::{corpus_statements, generate_input, nesting_bound, SqlGen};
use support::TestServer;

/// Resident set ceiling for the server with shared_buffers=16MB. Measured
/// peak of the default run: see the README's Fuzzing section; the margin is
/// for allocator slack on other machines, not for growth with the run length.
const RSS_CEILING_KB: u64 = 512 * 1024;
const MAX_NESTING: usize = 50;
/// Generated statements are kept short: nesting is bounded by the text.
const MAX_SQL_LEN: usize = 1000;

fn rss_kb(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_else(|e| panic!("read /proc/{pid}/status: {e}"));
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmRSS in /proc/PID/status")
}

/// A statement for the SQL corpus: generated or mutated, within the nesting
/// bound, valid UTF-8 without NUL (the postgres crate sends text).
fn bounded_sql(rng: &mut Rng) -> String {
    loop {
        // A third are corpus statements as they are, which mostly succeed, so
        // the executor and the rows it keeps get their share of the run.
        let sql = if rng.one_in(3) {
            rng.pick(&corpus_statements()).to_string()
        } else {
            let Ok(sql) = String::from_utf8(generate_input(rng, 6)) else {
                continue;
            };
            sql
        };
        // The postgres crate's simple_query cannot answer COPY's data
        // requests (the server would wait for data, as PostgreSQL does);
        // COPY has its own tests.
        if sql.to_ascii_lowercase().contains("copy") {
            continue;
        }
        if !sql.contains('\0') && sql.len() <= MAX_SQL_LEN && nesting_bound(&sql) <= MAX_NESTING {
            return sql;
        }
    }
}

/// Statement texts inside protocol messages: short generated statements.
fn message_sql(rng: &mut Rng) -> String {
    loop {
        let sql = SqlGen::new(rng, 4).statement();
        if nesting_bound(&sql) <= MAX_NESTING {
            return sql;
        }
    }
}

/// Sends one fuzzed message stream after a valid startup and reads whatever
/// comes back until the server closes the connection (or goes quiet).
fn protocol_connection(server: &TestServer, rng: &mut Rng) {
    let mut stream = TcpStream::connect(("127.0.0.1", server.port())).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut input = startup_packet("postgres", "postgres");
    input.extend(frontend_messages(rng, &mut message_sql));
    // Terminate, so a well-formed stream ends the connection too.
    input.extend_from_slice(&[b'X', 0, 0, 0, 4]);
    // Write from another thread: the server's answers could fill the socket.
    let mut writer = stream.try_clone().unwrap();
    let sender = std::thread::spawn(move || {
        let _ = writer.write_all(&input);
        let _ = writer.shutdown(Shutdown::Write);
    });
    let mut buf = [0u8; 64 * 1024];
    loop {
        match stream.read(&mut buf) {
            Ok(0) => break,
            Ok(_) => {}
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => break,
            Err(_) => break,
        }
    }
    let _ = stream.shutdown(Shutdown::Both);
    sender.join().unwrap();
}

#[test]
fn fuzz_corpus_runs_in_bounded_memory() {
    let mut server = TestServer::start_with(&[("statement_timeout", "2s")]);
    let pid = server.pid();
    let mut client = server.connect();
    client
        .batch_execute(
            "create table t (a int, b text, c numeric, d date, e timestamptz, f float8, \
             g bool, h varchar(10));
             create table u (a int, b text);
             create table emp (id int, name text, dept int, salary int);
             create table dept (id int, title text);
             insert into t select i, 'v' || i, i * 1.5, date '2024-01-01' + i, \
             timestamptz '2024-01-01 00:00:00+00', i / 3.0, i % 2 = 0, 'h' || i \
             from generate_series(1, 200) as i;
             insert into u select i, 'u' || i from generate_series(1, 50) as i;
             insert into emp values (1, 'ann', 10, 100), (2, 'bob', 20, 200);
             insert into dept values (10, 'eng'), (20, 'ops');
             create table witness (k int);
             insert into witness select i from generate_series(1, 100) as i;",
        )
        .expect("fixture tables");
    let baseline_kb = rss_kb(pid);

    // Iterations count rounds; each round is one fuzzed protocol connection
    // and ten SQL statements.
    let budget = Budget::from_env(0xe2e_f022, 300);
    let started = Instant::now();
    let mut peak_kb = baseline_kb;
    let (mut statements, mut errors, mut reconnects) = (0u64, 0u64, 0u64);
    let mut round = 0u64;
    while round < budget.iterations || budget.duration.is_some_and(|d| started.elapsed() < d) {
        let mut rng = Rng::new(budget.seed ^ round.wrapping_mul(0x9e37_79b9_7f4a_7c15));
        protocol_connection(&server, &mut rng);
        for _ in 0..10 {
            let sql = bounded_sql(&mut rng);
            statements += 1;
            if let Err(e) = client.simple_query(&sql) {
                errors += 1;
                // A client-side failure (COPY, a broken stream) or a FATAL
                // ends this connection: take a new one. A lost server fails.
                if e.as_db_error().is_none() || client.is_closed() {
                    server.assert_running(&format!("after {sql:?} (round {round})"));
                    client = server.connect();
                    reconnects += 1;
                } else {
                    let _ = client.simple_query("rollback");
                }
            }
        }
        server.assert_running(&format!("after fuzz round {round}"));
        let rss = rss_kb(pid);
        peak_kb = peak_kb.max(rss);
        assert!(
            rss <= RSS_CEILING_KB,
            "server resident set {rss} kB is over the {RSS_CEILING_KB} kB ceiling after round {round} (seed {})",
            budget.seed
        );
        round += 1;
    }

    server.assert_running("after the fuzz corpus");
    let mut fresh = server.connect();
    // The fuzzer never names `witness`: its rows must be intact.
    let row = fresh
        .query_one(
            "select count(*), sum(k) from witness where k > $1",
            &[&10i32],
        )
        .expect("an ordinary query after the fuzz corpus");
    let (count, sum): (i64, i64) = (row.get(0), row.get(1));
    assert_eq!(
        (count, sum),
        (90, 4995),
        "witness rows after the fuzz corpus"
    );
    let final_kb = rss_kb(pid);
    eprintln!(
        "fuzz_memory: {round} rounds, {statements} statements ({errors} errors, {reconnects} \
         reconnects) in {:.1?}; server RSS baseline {baseline_kb} kB, peak {peak_kb} kB, \
         final {final_kb} kB, ceiling {RSS_CEILING_KB} kB (seed {})",
        started.elapsed(),
        budget.seed
    );
}
