//! Shutdown modes (issue: never lose an acknowledged commit): smart (SIGTERM)
//! waits for sessions to end and refuses new ones, fast (SIGINT) ends them at a
//! safe point, immediate (SIGQUIT) quits at once; `scalegres stop` signals the
//! server of a data directory and waits. Under insert load, every commit
//! acknowledged before the shutdown is there after the restart.

mod support;

use std::collections::HashSet;
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Barrier};
use std::thread;
use std::time::{Duration, Instant};

use postgres::error::SqlState;
use support::TestServer;

const CLIENTS: i32 = 4;

/// Rows each client saw acknowledged, and the one it sent last without an
/// answer (a commit in flight when its session ended).
struct ClientOutcome {
    acked: Vec<i32>,
    in_flight: Option<i32>,
}

/// Runs CLIENTS autocommit inserters until `stop` is set or their session
/// ends; signals the server with `signal` once all are connected and busy.
fn insert_through_shutdown(
    server: &mut TestServer,
    round: i32,
    signal: libc::c_int,
) -> Vec<ClientOutcome> {
    let stop = Arc::new(AtomicBool::new(false));
    let ready = Arc::new(Barrier::new(CLIENTS as usize + 1));
    let mut handles = Vec::new();
    for client in 0..CLIENTS {
        let config = server.config();
        let (stop, ready) = (stop.clone(), ready.clone());
        handles.push(thread::spawn(move || {
            let mut c = config.connect(postgres::NoTls).expect("connect");
            let stmt = c
                .prepare("insert into acked values ($1, $2, $3)")
                .expect("prepare");
            ready.wait();
            let mut out = ClientOutcome {
                acked: Vec::new(),
                in_flight: None,
            };
            let mut seq = 0;
            while !stop.load(Ordering::SeqCst) {
                match c.execute(&stmt, &[&round, &client, &seq]) {
                    Ok(1) => out.acked.push(seq),
                    Ok(n) => panic!("insert reported {n} rows"),
                    Err(_) => {
                        out.in_flight = Some(seq);
                        break;
                    }
                }
                seq += 1;
            }
            out
        }));
    }
    ready.wait();
    thread::sleep(Duration::from_millis(150));
    server.signal(signal);
    if signal == libc::SIGTERM {
        // Smart: sessions go on until their clients leave.
        thread::sleep(Duration::from_millis(150));
        assert!(server.is_running(), "smart shutdown must wait for sessions");
        stop.store(true, Ordering::SeqCst);
    }
    let outcomes: Vec<ClientOutcome> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    let status = server
        .wait_exit(Duration::from_secs(30))
        .expect("server did not exit after its sessions ended");
    assert!(status.success(), "shutdown exit status {status}");
    outcomes
}

/// Every acknowledged row of `round` is there; besides them, at most the one
/// in-flight row per client.
fn check_round(server: &TestServer, round: i32, outcomes: &[ClientOutcome]) -> usize {
    let mut c = server.connect();
    let rows = c
        .query("select client, seq from acked where round = $1", &[&round])
        .unwrap();
    let present: HashSet<(i32, i32)> = rows.iter().map(|r| (r.get(0), r.get(1))).collect();
    let mut lost = 0;
    let mut acked_total = 0;
    for (client, o) in outcomes.iter().enumerate() {
        for &seq in &o.acked {
            acked_total += 1;
            if !present.contains(&(client as i32, seq)) {
                lost += 1;
            }
        }
    }
    assert_eq!(
        lost, 0,
        "round {round}: {lost} of {acked_total} acknowledged rows lost"
    );
    let allowed: usize = outcomes.iter().filter(|o| o.in_flight.is_some()).count();
    assert!(
        present.len() <= acked_total + allowed,
        "round {round}: {} rows present, {acked_total} acknowledged, {allowed} in flight",
        present.len()
    );
    acked_total
}

#[test]
fn no_acknowledged_commit_is_lost_across_smart_and_fast_shutdowns() {
    let mut server = TestServer::start();
    server.psql("create table acked (round int, client int, seq int)");
    let mut total = 0;
    for round in 0..20 {
        let signal = if round % 2 == 0 {
            libc::SIGTERM
        } else {
            libc::SIGINT
        };
        let outcomes = insert_through_shutdown(&mut server, round, signal);
        if signal == libc::SIGINT {
            assert!(
                outcomes.iter().all(|o| o.in_flight.is_some()),
                "fast shutdown must end every session"
            );
        } else {
            assert!(outcomes.iter().all(|o| o.in_flight.is_none()));
        }
        server.start_again();
        total += check_round(&server, round, &outcomes);
    }
    assert!(total > 100, "only {total} rows inserted in 20 rounds");
}

#[test]
fn smart_shutdown_refuses_new_sessions_and_waits_for_open_ones() {
    let mut server = TestServer::start();
    let mut open = server.connect();
    open.batch_execute("create table t (a int); insert into t values (1)")
        .unwrap();
    server.signal(libc::SIGTERM);
    let deadline = Instant::now() + Duration::from_secs(10);
    let err = loop {
        match server.try_connect() {
            Err(e) => break e,
            Ok(_) if Instant::now() < deadline => thread::sleep(Duration::from_millis(20)),
            Ok(_) => panic!("new sessions still accepted during smart shutdown"),
        }
    };
    assert_eq!(err.code(), Some(&SqlState::CANNOT_CONNECT_NOW), "{err}");
    // The open session is served as usual.
    open.batch_execute("insert into t values (2)").unwrap();
    assert!(server.is_running());
    drop(open);
    let status = server
        .wait_exit(Duration::from_secs(10))
        .expect("server did not exit once its last session ended");
    assert!(status.success());
    server.start_again();
    assert_eq!(server.psql("select count(*) from t").trim(), "2");
}

#[test]
fn fast_shutdown_rolls_back_open_transactions_and_ends_running_statements() {
    let mut server = TestServer::start();
    server.psql("create table t (a int)");
    let mut in_block = server.connect();
    in_block
        .batch_execute("begin; insert into t values (1)")
        .unwrap();
    let running = {
        let config = server.config();
        thread::spawn(move || {
            let mut c = config.connect(postgres::NoTls).unwrap();
            c.batch_execute("select count(*) from generate_series(1, 1000000000)")
        })
    };
    thread::sleep(Duration::from_millis(300));
    let started = Instant::now();
    server.signal(libc::SIGINT);
    let status = server
        .wait_exit(Duration::from_secs(20))
        .expect("fast shutdown did not finish");
    assert!(status.success());
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "fast shutdown took {:?}",
        started.elapsed()
    );
    let err = running
        .join()
        .unwrap()
        .expect_err("the running statement must end");
    if let Some(code) = err.code() {
        assert_eq!(code, &SqlState::ADMIN_SHUTDOWN, "{err}");
    }
    assert!(in_block.batch_execute("commit").is_err());
    server.start_again();
    assert_eq!(server.psql("select count(*) from t").trim(), "0");
}

fn run_stop(server: &TestServer, mode: &str) -> std::process::Output {
    let out = support::run_with_timeout(
        Command::new(support::server_binary())
            .arg("stop")
            .arg("-D")
            .arg(server.data_dir())
            .arg("-m")
            .arg(mode),
        Duration::from_secs(60),
    );
    assert!(
        out.status.success(),
        "scalegres stop -m {mode} failed: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

#[test]
fn stop_command_fast_and_immediate() {
    let mut server = TestServer::start();
    server.psql("create table t (a int); insert into t values (1)");
    let _idle = server.connect();
    let out = run_stop(&server, "fast");
    assert!(String::from_utf8_lossy(&out.stdout).contains("server stopped"));
    assert!(server.wait_exit(Duration::from_secs(5)).is_some());
    assert!(!server.data_dir().join("postmaster.pid").exists());

    server.start_again();
    assert_eq!(server.psql("select count(*) from t").trim(), "1");
    // Immediate: no checkpoint, but the next start finds the leftovers stale.
    run_stop(&server, "immediate");
    assert!(server.wait_exit(Duration::from_secs(5)).is_some());
    server.start_again();
    assert_eq!(server.psql("select 1").trim(), "1");

    let out = support::run_with_timeout(
        Command::new(support::server_binary())
            .args(["stop", "-m", "sideways", "-D"])
            .arg(server.data_dir()),
        Duration::from_secs(10),
    );
    assert!(!out.status.success());
}
