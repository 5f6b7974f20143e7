//! Session settings travel with the session: each session's TimeZone is
//! used for its casts, date/time functions, constants and output (also when
//! a SET changes it inside a query string), and the per-connection settings
//! PostgreSQL gives the user context (TCP keepalives, the hang-up check) are
//! SET per session. pg_settings.context is PostgreSQL 15's.

mod support;

use std::process::Stdio;
use std::thread;
use std::time::{Duration, Instant};

use postgres::SimpleQueryMessage;
use support::TestServer;

/// The first column of each row a simple query returns, as text.
fn simple(c: &mut postgres::Client, q: &str) -> Vec<String> {
    c.simple_query(q)
        .unwrap()
        .into_iter()
        .filter_map(|m| match m {
            SimpleQueryMessage::Row(r) => Some(r.get(0).unwrap_or("NULL").to_string()),
            _ => None,
        })
        .collect()
}

#[test]
fn each_session_converts_with_its_own_time_zone() {
    let s = TestServer::start();
    let mut india = s.connect();
    let mut utc = s.connect();
    india
        .batch_execute("set timezone = 'Asia/Kolkata'")
        .unwrap();
    let noon = "select '2024-01-01 12:00:00+00'::timestamptz";
    for _ in 0..3 {
        assert_eq!(simple(&mut india, noon), ["2024-01-01 17:30:00+05:30"]);
        assert_eq!(simple(&mut utc, noon), ["2024-01-01 12:00:00+00"]);
    }
    // Casts to text and from zone-less values, and input without a zone.
    assert_eq!(
        simple(
            &mut india,
            "select '2024-01-01 12:00:00+00'::timestamptz::text"
        ),
        ["2024-01-01 17:30:00+05:30"]
    );
    let r: String = india
        .query_one(
            "select '2024-01-01 00:00'::timestamp::timestamptz::text",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(r, "2024-01-01 00:00:00+05:30");
    let r: String = utc
        .query_one("select '2024-01-01 00:00'::timestamptz::text", &[])
        .unwrap()
        .get(0);
    assert_eq!(r, "2024-01-01 00:00:00+00");
    // Functions over timestamptz.
    assert_eq!(
        simple(
            &mut india,
            "select date_trunc('day', '2024-01-01 20:00:00+00'::timestamptz)"
        ),
        ["2024-01-02 00:00:00+05:30"]
    );
    assert_eq!(
        simple(&mut india, "select extract(timezone from now())"),
        ["19800"]
    );
    assert_eq!(
        simple(
            &mut india,
            "select date_part('hour', localtimestamp) = \
             date_part('hour', timezone('Asia/Kolkata', now()))"
        ),
        ["t"]
    );
    // A SET earlier in the same query string applies to the next statement.
    assert_eq!(
        simple(
            &mut utc,
            "set timezone = 'America/New_York'; \
             select '2024-07-01 12:00:00+00'::timestamptz"
        ),
        ["2024-07-01 08:00:00-04"]
    );
    // A text parameter of the extended protocol is read in the session's zone.
    let st = utc.prepare("select $1::text::timestamptz::text").unwrap();
    let r: String = utc.query_one(&st, &[&"2024-01-01 00:00"]).unwrap().get(0);
    assert_eq!(r, "2024-01-01 00:00:00-05");
    utc.batch_execute("set timezone = 'UTC'").unwrap();
    let r: String = utc.query_one(&st, &[&"2024-01-01 00:00"]).unwrap().get(0);
    assert_eq!(r, "2024-01-01 00:00:00+00");
}

#[test]
fn setting_contexts_are_postgresql_15s() {
    let s = TestServer::start();
    let mut c = s.connect();
    let rows = simple(
        &mut c,
        "select name || ' ' || context from pg_settings where name in \
         ('tcp_keepalives_idle', 'tcp_keepalives_interval', 'tcp_keepalives_count', \
          'client_connection_check_interval', 'lc_messages', 'max_stack_depth', \
          'temp_file_limit', 'commit_delay', 'checkpoint_timeout', 'max_wal_size', 'fsync', \
          'port') \
         order by name",
    );
    assert_eq!(
        rows,
        [
            "checkpoint_timeout sighup",
            "client_connection_check_interval user",
            "commit_delay superuser",
            "fsync sighup",
            "lc_messages superuser",
            "max_stack_depth superuser",
            "max_wal_size sighup",
            "port postmaster",
            "tcp_keepalives_count user",
            "tcp_keepalives_idle user",
            "tcp_keepalives_interval user",
            "temp_file_limit superuser",
        ]
    );
    // User settings: any session may SET them.
    c.batch_execute(
        "set tcp_keepalives_idle = 30; set tcp_keepalives_interval = 5; \
         set tcp_keepalives_count = 4; set client_connection_check_interval = '1s'",
    )
    .unwrap();
    assert_eq!(simple(&mut c, "show tcp_keepalives_idle"), ["30"]);
    assert_eq!(
        simple(&mut c, "show client_connection_check_interval"),
        ["1s"]
    );
    assert_eq!(
        simple(
            &mut c,
            "select source from pg_settings where name = 'tcp_keepalives_count'"
        ),
        ["session"]
    );
    // Superuser settings: postgres is one.
    c.batch_execute("set max_stack_depth = '1MB'; set temp_file_limit = '1GB'")
        .unwrap();
    assert_eq!(simple(&mut c, "show max_stack_depth"), ["1MB"]);
    // Sighup settings are not SET.
    let err = c
        .batch_execute("set checkpoint_timeout = '1min'")
        .unwrap_err();
    assert_eq!(
        err.code(),
        Some(&postgres::error::SqlState::CANT_CHANGE_RUNTIME_PARAM)
    );
}

#[test]
fn a_session_sets_its_own_client_connection_check_interval() {
    // The server never checks (the default, 0); the session asks for 100ms
    // in its startup options.
    let s = TestServer::start();
    let mut psql = s.psql_command();
    psql.env("PGOPTIONS", "-c client_connection_check_interval=100ms")
        .arg("-c")
        .arg(
            "select count(*) from generate_series(1, 100000) a, \
             generate_series(1, 100000) b where a.a + b.b < 0",
        )
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let mut child = psql.spawn().unwrap();
    let mut monitor = s.connect();
    let running = |c: &mut postgres::Client| -> i64 {
        c.query_one(
            "select count(*) from pg_stat_activity where state = 'active' \
             and query like 'select count(*) from generate_series%'",
            &[],
        )
        .unwrap()
        .get(0)
    };
    let deadline = Instant::now() + Duration::from_secs(20);
    while running(&mut monitor) == 0 {
        assert!(Instant::now() < deadline, "the join never started");
        thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let killed = Instant::now();
    while running(&mut monitor) > 0 {
        assert!(
            killed.elapsed() < Duration::from_secs(5),
            "the join of a vanished client still runs after {:?}",
            killed.elapsed()
        );
        thread::sleep(Duration::from_millis(20));
    }
}
