//! Connections that misbehave cannot take the server down or lock others
//! out: a connection that never finishes startup is closed after
//! `authentication_timeout`; with more silent sockets than file descriptors
//! the accept loop neither spins nor refuses real clients; a client that
//! vanishes during a long statement is noticed (`client_connection_check_interval`).

mod support;

use std::io::Read;
use std::net::{SocketAddr, TcpStream};
use std::process::Stdio;
use std::thread;
use std::time::{Duration, Instant};

use support::TestServer;

/// Sends half a startup packet, then nothing; returns how long the server
/// took to close the connection (failing if it sent anything or waited 20 s).
fn time_until_silent_startup_is_closed(port: u16) -> Duration {
    let mut silent = TcpStream::connect(("127.0.0.1", port)).unwrap();
    silent
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    use std::io::Write;
    silent.write_all(&[0, 0, 0, 40, 0, 3]).unwrap();
    let started = Instant::now();
    let mut buf = [0u8; 64];
    let n = silent.read(&mut buf).unwrap_or(0);
    assert_eq!(n, 0, "expected the server to close the connection");
    started.elapsed()
}

#[test]
fn silent_connection_is_closed_after_authentication_timeout() {
    let server = TestServer::start_with(&[("authentication_timeout", "1s")]);
    let waited = time_until_silent_startup_is_closed(server.port());
    assert!(
        waited >= Duration::from_millis(500) && waited < Duration::from_secs(5),
        "closed after {waited:?}"
    );
    // Real clients are unaffected.
    assert_eq!(server.psql("select 1").trim(), "1");
}

/// CPU seconds (user + system) the process has used.
fn cpu_seconds(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    // Fields after the command name, which is in parentheses.
    let rest = &stat[stat.rfind(')').unwrap() + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks: f64 = f[11].parse::<f64>().unwrap() + f[12].parse::<f64>().unwrap();
    // SAFETY: sysconf has no preconditions.
    ticks / unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64
}

#[test]
fn more_silent_sockets_than_descriptors_do_not_lock_out_clients() {
    let mut server = TestServer::start();
    server.restart_with_nofile_limit(1100);
    let addr: SocketAddr = format!("127.0.0.1:{}", server.port()).parse().unwrap();
    let mut silent = Vec::new();
    for _ in 0..1200 {
        if let Ok(s) = TcpStream::connect_timeout(&addr, Duration::from_secs(2)) {
            silent.push(s);
        }
    }
    assert!(silent.len() >= 1100, "only {} sockets opened", silent.len());
    thread::sleep(Duration::from_millis(500));
    server.assert_running("with 1,200 silent sockets");
    for attempt in 0..3 {
        let started = Instant::now();
        let mut c = server.connect();
        let v: i32 = c.query_one("select 1 + $1", &[&attempt]).unwrap().get(0);
        assert_eq!(v, 1 + attempt);
        let took = started.elapsed();
        assert!(
            took < Duration::from_secs(1),
            "a real client took {took:?} to be served"
        );
    }
    // The accept loop is not spinning on EMFILE.
    let pid = server.pid();
    let before = cpu_seconds(pid);
    thread::sleep(Duration::from_secs(1));
    let used = cpu_seconds(pid) - before;
    assert!(
        used < 0.5,
        "server used {used:.2} s of CPU in 1 s while idle"
    );
    drop(silent);
    server.stop_clean();
}

#[test]
fn vanished_client_is_noticed_during_a_long_statement() {
    let server = TestServer::start_with(&[("client_connection_check_interval", "100ms")]);
    let mut psql = server.psql_command();
    psql.arg("-c")
        .arg("select pg_sleep(60)")
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let mut child = psql.spawn().unwrap();
    let mut monitor = server.connect();
    let count_sleepers = |c: &mut postgres::Client| -> i64 {
        c.query_one(
            "select count(*) from pg_stat_activity where query like 'select pg_sleep(60)%'",
            &[],
        )
        .unwrap()
        .get(0)
    };
    let deadline = Instant::now() + Duration::from_secs(20);
    while count_sleepers(&mut monitor) == 0 {
        assert!(Instant::now() < deadline, "the statement never started");
        thread::sleep(Duration::from_millis(20));
    }
    // The client process dies; its socket closes under the running statement.
    child.kill().unwrap();
    child.wait().unwrap();
    let killed = Instant::now();
    while count_sleepers(&mut monitor) > 0 {
        assert!(
            killed.elapsed() < Duration::from_secs(5),
            "session of a vanished client still running after {:?}",
            killed.elapsed()
        );
        thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_reload_reaches_sighup_settings_and_sessions_unless_they_set_them() {
    let server = TestServer::start();
    let mut c = server.connect();
    // sighup settings, as in PostgreSQL: not per session.
    let err = c.batch_execute("set bgwriter_delay = '10ms'").unwrap_err();
    assert_eq!(
        err.code(),
        Some(&postgres::error::SqlState::CANT_CHANGE_RUNTIME_PARAM)
    );
    let contexts: Vec<String> = c
        .query(
            "select context from pg_settings where name in \
             ('authentication_timeout', 'bgwriter_delay', 'bgwriter_lru_maxpages', \
              'bgwriter_lru_multiplier')",
            &[],
        )
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert_eq!(contexts, ["sighup"; 4]);
    c.batch_execute("alter system set authentication_timeout = '1s'")
        .unwrap();
    c.batch_execute("alter system set bgwriter_delay = '10ms'")
        .unwrap();
    let ok: bool = c.query_one("select pg_reload_conf()", &[]).unwrap().get(0);
    assert!(ok);
    // The listener applies a reload at its next wake-up (at most 100 ms).
    std::thread::sleep(Duration::from_millis(500));
    let waited = time_until_silent_startup_is_closed(server.port());
    assert!(
        waited < Duration::from_secs(5),
        "closed after {waited:?}: the reloaded authentication_timeout was not applied"
    );
    let delay: String = c
        .query_one(
            "select setting from pg_settings where name = 'bgwriter_delay'",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(delay, "10");
    // A postmaster setting changed in the files waits for a restart.
    c.batch_execute("alter system set max_connections = 50")
        .unwrap();
    c.query_one("select pg_reload_conf()", &[]).unwrap();
    std::thread::sleep(Duration::from_millis(500));
    let r = c
        .query_one(
            "select setting, pending_restart from pg_settings where name = 'max_connections'",
            &[],
        )
        .unwrap();
    assert_eq!(
        (r.get::<_, String>(0), r.get::<_, bool>(1)),
        ("100".into(), true)
    );
    // A user setting follows the files unless the session SET it.
    let mut other = server.connect();
    other.batch_execute("set work_mem = '2MB'").unwrap();
    c.batch_execute("alter system set work_mem = '8MB'")
        .unwrap();
    c.query_one("select pg_reload_conf()", &[]).unwrap();
    std::thread::sleep(Duration::from_millis(500));
    let show =
        |c: &mut postgres::Client| -> String { c.query_one("show work_mem", &[]).unwrap().get(0) };
    assert_eq!(show(&mut c), "8MB");
    assert_eq!(show(&mut other), "2MB");
    other.batch_execute("reset work_mem").unwrap();
    assert_eq!(show(&mut other), "8MB");
}
