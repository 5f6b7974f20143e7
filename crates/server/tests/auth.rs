//! Client authentication: pg_hba.conf methods and rules, passwords stored
//! with ALTER ROLE, SIGHUP reload. Messages as PostgreSQL 15 words them.

mod support;

use std::process::Output;
use std::thread;
use std::time::{Duration, Instant};

use support::TestServer;

fn write_hba(s: &TestServer, text: &str) {
    std::fs::write(s.data_dir().join("pg_hba.conf"), text).unwrap();
}

/// Rewrites pg_hba.conf, sends SIGHUP and waits until a probe connection
/// over TCP as `probe_user` gives the expected outcome.
fn reload_until(s: &TestServer, text: &str, ready: impl Fn(&TestServer) -> bool) {
    write_hba(s, text);
    s.reload();
    let deadline = Instant::now() + Duration::from_secs(10);
    while !ready(s) {
        assert!(
            Instant::now() < deadline,
            "pg_hba.conf reload not seen\n{}",
            s.log_tail(20)
        );
        thread::sleep(Duration::from_millis(50));
    }
}

fn psql_as(s: &TestServer, user: &str, password: Option<&str>, sql: &str) -> Output {
    let mut cmd = s.psql_command();
    cmd.args(["-U", user, "-c", sql]);
    match password {
        Some(p) => cmd.env("PGPASSWORD", p),
        None => cmd.arg("-w"),
    };
    s.run_psql(cmd)
}

fn connect_err(cfg: &postgres::Config) -> postgres::Error {
    match cfg.connect(postgres::NoTls) {
        Ok(_) => panic!("connection should have been refused"),
        Err(e) => e,
    }
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn default_hba_is_initdb_trust_on_local_and_loopback() {
    let s = TestServer::start();
    let hba = std::fs::read_to_string(s.data_dir().join("pg_hba.conf")).unwrap();
    let rules: Vec<Vec<&str>> = hba
        .lines()
        .filter(|l| !l.trim_start().starts_with('#') && !l.trim().is_empty())
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(
        rules,
        vec![
            vec!["local", "all", "all", "trust"],
            vec!["host", "all", "all", "127.0.0.1/32", "trust"],
            vec!["host", "all", "all", "::1/128", "trust"],
        ]
    );
    assert_eq!(s.psql("select 1"), "1");
    assert_eq!(s.psql_unix("select 1"), "1");
}

#[test]
fn scram_password_over_psql_and_wrong_password() {
    let s = TestServer::start();
    s.psql("alter role postgres password 'sekret'");
    let stored = s.psql("select 1");
    assert_eq!(stored, "1");
    reload_until(
        &s,
        "local all all trust\nhost all all 127.0.0.1/32 scram-sha-256\n",
        |s| !psql_as(s, "postgres", None, "select 1").status.success(),
    );
    let ok = psql_as(&s, "postgres", Some("sekret"), "select 'in'");
    assert!(ok.status.success(), "{}", stderr(&ok));
    assert_eq!(String::from_utf8_lossy(&ok.stdout).trim(), "in");

    let bad = psql_as(&s, "postgres", Some("wrong"), "select 1");
    assert!(!bad.status.success());
    assert!(
        stderr(&bad).contains("FATAL:  password authentication failed for user \"postgres\""),
        "{}",
        stderr(&bad)
    );
    // The postgres crate sees the SQLSTATE.
    let mut cfg = s.config();
    cfg.password("wrong");
    let e = connect_err(&cfg);
    assert_eq!(e.code().map(|c| c.code()), Some("28P01"), "{e:?}");
    cfg.password("sekret");
    let mut c = cfg.connect(postgres::NoTls).unwrap();
    assert_eq!(c.query_one("select 7", &[]).unwrap().get::<_, i32>(0), 7);

    // A role that does not exist fails the same way, not with "does not exist".
    let mut cfg = s.config();
    cfg.user("nobody").password("x");
    let e = connect_err(&cfg);
    assert_eq!(e.code().map(|c| c.code()), Some("28P01"), "{e:?}");

    // The Unix socket is still trust; the password survives a restart.
    assert_eq!(s.psql_unix("select 2"), "2");
}

#[test]
fn stored_password_is_durable_across_restart() {
    let mut s = TestServer::start();
    s.psql("alter role postgres with password 'a'");
    s.restart();
    write_hba(&s, "host all all 127.0.0.1/32 password\n");
    s.reload();
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let o = psql_as(&s, "postgres", Some("a"), "select 'ok'");
        if o.status.success() {
            break;
        }
        assert!(Instant::now() < deadline, "{}", stderr(&o));
        thread::sleep(Duration::from_millis(50));
    }
    let bad = psql_as(&s, "postgres", Some("b"), "select 1");
    assert!(stderr(&bad).contains("password authentication failed for user \"postgres\""));
}

#[test]
fn md5_and_password_methods_and_password_encryption() {
    let s = TestServer::start();
    // md5-stored password via password_encryption, and an already-hashed md5 string kept as is.
    s.psql("set password_encryption = 'md5'; alter role postgres password 'm5'");
    let e = s.psql_err("set password_encryption = 'des'");
    assert!(
        e.contains("invalid value for parameter \"password_encryption\""),
        "{e}"
    );
    reload_until(&s, "host all all 127.0.0.1/32 md5\n", |s| {
        !psql_as(s, "postgres", None, "select 1").status.success()
    });
    let mut cfg = s.config();
    cfg.password("m5");
    let mut c = cfg
        .connect(postgres::NoTls)
        .expect("md5 auth with the postgres crate");
    // 'md5' || md5('m5' || 'postgres') computed by the server itself.
    let hashed: String = c
        .query_one("select 'md5' || md5('m5postgres')", &[])
        .unwrap()
        .get(0);
    c.batch_execute(&format!("alter role postgres password '{hashed}'"))
        .unwrap();
    drop(c);
    let ok = psql_as(&s, "postgres", Some("m5"), "select 1");
    assert!(
        ok.status.success(),
        "pre-hashed md5 kept as is: {}",
        stderr(&ok)
    );
    cfg.password("m6");
    let e = connect_err(&cfg);
    assert_eq!(e.code().map(|c| c.code()), Some("28P01"));

    // md5 method with a SCRAM-stored password runs SCRAM, as PostgreSQL.
    let mut c = s.config();
    c.password("m5");
    c.connect(postgres::NoTls)
        .unwrap()
        .batch_execute(
            "set password_encryption = 'scram-sha-256'; alter role postgres password 'sc'",
        )
        .unwrap();
    let mut cfg = s.config();
    cfg.password("sc");
    cfg.connect(postgres::NoTls)
        .expect("md5 line, SCRAM secret");

    // Cleartext password method.
    reload_until(&s, "host all all 127.0.0.1/32 password\n", |s| {
        psql_as(s, "postgres", Some("sc"), "select 1")
            .status
            .success()
            && !psql_as(s, "postgres", Some("md5"), "select 1")
                .status
                .success()
    });
    cfg.password("nope");
    let e = connect_err(&cfg);
    assert_eq!(e.code().map(|c| c.code()), Some("28P01"));

    // PASSWORD NULL: no password can match any more.
    psql_as(
        &s,
        "postgres",
        Some("sc"),
        "alter role postgres password null",
    );
    let o = psql_as(&s, "postgres", Some("sc"), "select 1");
    assert!(
        stderr(&o).contains("password authentication failed"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn reject_and_no_entry_messages_and_reload() {
    let s = TestServer::start();
    reload_until(
        &s,
        "local all all trust\nhost postgres postgres 127.0.0.1/32 reject\nhost all all 127.0.0.1/32 trust\n",
        |s| !psql_as(s, "postgres", None, "select 1").status.success(),
    );
    let o = psql_as(&s, "postgres", None, "select 1");
    assert!(
        stderr(&o).contains(
            "FATAL:  pg_hba.conf rejects connection for host \"127.0.0.1\", user \"postgres\", database \"postgres\", no encryption"
        ),
        "{}",
        stderr(&o)
    );
    let e = connect_err(&s.config());
    assert_eq!(e.code().map(|c| c.code()), Some("28000"));
    // A later line still admits another database (first match wins per connection).
    let mut cfg = s.config();
    cfg.dbname("template1");
    cfg.connect(postgres::NoTls)
        .expect("template1 falls through to trust");

    reload_until(&s, "local all all trust\n", |s| {
        stderr(&psql_as(s, "postgres", None, "select 1")).contains("no pg_hba.conf entry")
    });
    let o = psql_as(&s, "postgres", None, "select 1");
    assert!(
        stderr(&o).contains(
            "FATAL:  no pg_hba.conf entry for host \"127.0.0.1\", user \"postgres\", database \"postgres\", no encryption"
        ),
        "{}",
        stderr(&o)
    );

    // A broken file at reload is logged and the old rules stay.
    write_hba(&s, "host all all 127.0.0.1/32 bogus\n");
    s.reload();
    let deadline = Instant::now() + Duration::from_secs(10);
    while !s
        .log_tail(50)
        .contains("invalid authentication method \"bogus\"")
    {
        assert!(Instant::now() < deadline, "{}", s.log_tail(20));
        thread::sleep(Duration::from_millis(50));
    }
    assert!(stderr(&psql_as(&s, "postgres", None, "select 1")).contains("no pg_hba.conf entry"));
    assert_eq!(s.psql_unix("select 1"), "1");
}

#[test]
fn bad_hba_at_startup_is_fatal() {
    let mut s = TestServer::start();
    s.stop_clean();
    write_hba(&s, "host all all 1.2.3.4/40 trust\n");
    assert!(
        s.try_start_again().is_err(),
        "server started with a bad pg_hba.conf"
    );
    assert!(
        s.log_tail(10).contains("invalid CIDR mask"),
        "{}",
        s.log_tail(10)
    );
}
