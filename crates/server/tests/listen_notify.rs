//! LISTEN / NOTIFY / UNLISTEN and pg_notify() through real clients: the
//! `postgres` crate (NotificationResponse while idle, after commits only,
//! duplicates folded, savepoints, databases kept apart) and psql (libpq
//! reports a notification after the command that received it).

mod support;

use std::time::Duration;

use postgres::error::SqlState;
use postgres::fallible_iterator::FallibleIterator;
use postgres::{Client, Notification};
use support::TestServer;

/// The notifications `client` receives within `wait`.
fn received(client: &mut Client, wait: Duration) -> Vec<(i32, String, String)> {
    let mut out = Vec::new();
    let mut notes = client.notifications();
    let mut it = notes.timeout_iter(wait);
    while let Some(n) = it.next().expect("reading notifications") {
        let n: Notification = n;
        out.push((
            n.process_id(),
            n.channel().to_string(),
            n.payload().to_string(),
        ));
    }
    out
}

fn pid(client: &mut Client) -> i32 {
    client
        .query_one("select pg_backend_pid()", &[])
        .unwrap()
        .get(0)
}

fn payloads(notes: &[(i32, String, String)]) -> Vec<&str> {
    notes.iter().map(|n| n.2.as_str()).collect()
}

const SHORT: Duration = Duration::from_millis(300);
const LONG: Duration = Duration::from_secs(3);

#[test]
fn notifications_reach_idle_listeners_after_commit_only() {
    let s = TestServer::start();
    let mut listener = s.connect();
    let mut sender = s.connect();
    let sender_pid = pid(&mut sender);
    listener.batch_execute("LISTEN jobs").unwrap();

    // Outside a block: delivered while the listener sits idle.
    sender.batch_execute("NOTIFY jobs, 'one'").unwrap();
    let got = received(&mut listener, LONG);
    assert_eq!(got, vec![(sender_pid, "jobs".into(), "one".into())]);

    // In a block: nothing until COMMIT; duplicates folded, order kept.
    sender.batch_execute("BEGIN").unwrap();
    sender
        .batch_execute(
            "NOTIFY jobs, 'a'; NOTIFY jobs, 'a'; SELECT pg_notify('jobs', 'b'); NOTIFY other, 'x'",
        )
        .unwrap();
    assert!(received(&mut listener, SHORT).is_empty());
    sender.batch_execute("COMMIT").unwrap();
    assert_eq!(payloads(&received(&mut listener, LONG)), ["a", "b"]);

    // A rollback, and a savepoint rolled back to, send nothing.
    sender
        .batch_execute("BEGIN; NOTIFY jobs, 'lost'; ROLLBACK")
        .unwrap();
    sender
        .batch_execute(
            "BEGIN; NOTIFY jobs, 'kept'; SAVEPOINT s; NOTIFY jobs, 'undone'; \
             ROLLBACK TO SAVEPOINT s; COMMIT",
        )
        .unwrap();
    assert_eq!(payloads(&received(&mut listener, LONG)), ["kept"]);

    // NOTIFY without payload; a quoted channel keeps its case.
    sender.batch_execute("NOTIFY jobs").unwrap();
    sender.batch_execute("NOTIFY \"Jobs\", 'case'").unwrap();
    assert_eq!(payloads(&received(&mut listener, LONG)), [""]);

    // UNLISTEN stops delivery; UNLISTEN * too.
    listener.batch_execute("UNLISTEN jobs").unwrap();
    sender.batch_execute("NOTIFY jobs, 'gone'").unwrap();
    assert!(received(&mut listener, SHORT).is_empty());
    listener
        .batch_execute("LISTEN a; LISTEN b; UNLISTEN *")
        .unwrap();
    sender.batch_execute("NOTIFY a; NOTIFY b").unwrap();
    assert!(received(&mut listener, SHORT).is_empty());
}

#[test]
fn listen_takes_effect_at_commit_and_a_session_hears_itself() {
    let s = TestServer::start();
    let mut a = s.connect();
    let mut b = s.connect();
    let a_pid = pid(&mut a);
    // A LISTEN rolled back never happened.
    a.batch_execute("BEGIN; LISTEN c; ROLLBACK").unwrap();
    b.batch_execute("NOTIFY c, 'x'").unwrap();
    assert!(received(&mut a, SHORT).is_empty());

    // Listening and notifying in one transaction: the session hears itself
    // once the block commits, not before.
    a.batch_execute("BEGIN; LISTEN c; NOTIFY c, 'self'")
        .unwrap();
    assert!(received(&mut a, SHORT).is_empty());
    a.batch_execute("COMMIT").unwrap();
    assert_eq!(
        received(&mut a, LONG),
        vec![(a_pid, "c".into(), "self".into())]
    );

    // While the listener is inside a block, delivery waits for its end.
    a.batch_execute("BEGIN").unwrap();
    b.batch_execute("NOTIFY c, 'later'").unwrap();
    a.batch_execute("SELECT 1").unwrap();
    a.batch_execute("COMMIT").unwrap();
    assert_eq!(payloads(&received(&mut a, LONG)), ["later"]);
}

#[test]
fn notifications_stay_in_their_database() {
    let s = TestServer::start();
    s.psql("create database other");
    let mut here = s.connect();
    let mut there = {
        let mut c = s.config();
        c.dbname("other");
        c.connect(postgres::NoTls).unwrap()
    };
    here.batch_execute("LISTEN c").unwrap();
    there.batch_execute("LISTEN c").unwrap();
    let mut sender = s.connect();
    sender.batch_execute("NOTIFY c, 'postgres db'").unwrap();
    assert_eq!(payloads(&received(&mut here, LONG)), ["postgres db"]);
    assert!(received(&mut there, SHORT).is_empty());
}

#[test]
fn bad_arguments_fail_as_in_postgresql() {
    let s = TestServer::start();
    let mut c = s.connect();
    let cases = [
        ("select pg_notify('', 'x')", "channel name cannot be empty"),
        (
            "select pg_notify(NULL, 'x')",
            "channel name cannot be empty",
        ),
        (
            "select pg_notify(repeat('c', 64), 'x')",
            "channel name too long",
        ),
        (
            "select pg_notify('c', repeat('p', 8000))",
            "payload string too long",
        ),
    ];
    for (sql, message) in cases {
        let e = c.batch_execute(sql).unwrap_err();
        let db = e.as_db_error().unwrap_or_else(|| panic!("{sql}: {e}"));
        assert_eq!(db.code(), &SqlState::INVALID_PARAMETER_VALUE, "{sql}");
        assert_eq!(db.message(), message, "{sql}");
    }
    // The longest payload passes; a NULL payload is an empty one.
    c.batch_execute("select pg_notify('c', repeat('p', 7999)); select pg_notify('c', NULL)")
        .unwrap();
    let usage: f64 = c
        .query_one("select pg_notification_queue_usage()", &[])
        .unwrap()
        .get(0);
    assert!((0.0..1.0).contains(&usage));
    // DISCARD ALL is refused in a block, as PostgreSQL does.
    c.batch_execute("BEGIN").unwrap();
    let e = c.batch_execute("DISCARD ALL").unwrap_err();
    assert_eq!(e.code(), Some(&SqlState::ACTIVE_SQL_TRANSACTION));
    c.batch_execute("ROLLBACK").unwrap();
    c.batch_execute("DISCARD ALL").unwrap();
    // After a ROLLBACK in a multi-statement Query the rest is an implicit
    // block again, which DISCARD ALL refuses, as PostgreSQL does.
    let e = c.batch_execute("ROLLBACK; DISCARD ALL").unwrap_err();
    assert_eq!(e.code(), Some(&SqlState::ACTIVE_SQL_TRANSACTION));
}

#[test]
fn psql_reports_notifications_as_libpq_receives_them() {
    let s = TestServer::start();
    let mut cmd = s.psql_command();
    cmd.args(["-c", "LISTEN c", "-c", "NOTIFY c, 'hello'"]);
    let out = s.run_psql(cmd);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(
        stdout.contains("Asynchronous notification \"c\" with payload \"hello\" received from server process with PID"),
        "{stdout}"
    );
}

#[test]
fn an_idle_listener_still_ends_on_terminate_and_shutdown() {
    let mut s = TestServer::start();
    let mut listener = s.connect();
    let listener_pid = pid(&mut listener);
    listener.batch_execute("LISTEN c").unwrap();
    let mut other = s.connect_unix();
    other.batch_execute("LISTEN c").unwrap();
    // pg_terminate_backend reaches a session waiting for input or a
    // notification.
    let mut admin = s.connect();
    let done: bool = admin
        .query_one("select pg_terminate_backend($1)", &[&listener_pid])
        .unwrap()
        .get(0);
    assert!(done);
    // The session goes at its next safe point: wait for it to be gone, as
    // a client would see it, then the listener's connection is closed.
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    loop {
        let n: i64 = admin
            .query_one(
                "select count(*) from pg_stat_activity where pid = $1",
                &[&listener_pid],
            )
            .unwrap()
            .get(0);
        if n == 0 {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "terminated listener still there"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let e = listener.batch_execute("select 1").unwrap_err();
    assert!(listener.is_closed() || e.code().is_some(), "{e}");
    // A fast shutdown ends the Unix-socket listener too.
    drop(admin);
    s.stop_clean();
    assert!(other.batch_execute("select 1").is_err());
}
