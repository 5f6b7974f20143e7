//! Settings as PostgreSQL shows and keeps them: pg_settings' columns in each
//! setting's own unit, ALTER SYSTEM into postgresql.auto.conf (kept across a
//! restart, applied by pg_reload_conf() for reloadable settings).

mod support;

use std::time::{Duration, Instant};

use support::TestServer;

#[test]
fn pg_settings_has_postgresqls_columns_and_units() {
    let s = TestServer::start();
    let mut c = s.connect();
    let row = c
        .query_one(
            "select setting, unit, category, vartype, context, min_val, max_val, boot_val, \
             source from pg_settings where name = 'work_mem'",
            &[],
        )
        .unwrap();
    let got: Vec<Option<String>> = (0..9).map(|i| row.get(i)).collect();
    let want = [
        "4096",
        "kB",
        "Resource Usage / Memory",
        "integer",
        "user",
        "64",
        "2147483647",
        "4096",
        "default",
    ];
    assert_eq!(
        got,
        want.iter().map(|s| Some(s.to_string())).collect::<Vec<_>>()
    );
    c.batch_execute("set work_mem = '8MB'").unwrap();
    let (setting, source): (String, String) = {
        let r = c
            .query_one(
                "select setting, source from pg_settings where name = 'work_mem'",
                &[],
            )
            .unwrap();
        (r.get(0), r.get(1))
    };
    assert_eq!((setting.as_str(), source.as_str()), ("8192", "session"));
    let r = c
        .query_one(
            "select vartype, enumvals, setting from pg_settings where name = 'password_encryption'",
            &[],
        )
        .unwrap();
    assert_eq!(r.get::<_, String>(0), "enum");
    assert_eq!(r.get::<_, String>(1), "{md5,scram-sha-256}");
    // Test servers run with shared_buffers = 16MB: 2048 blocks of 8kB.
    let r = c
        .query_one(
            "select setting, unit from pg_settings where name = 'shared_buffers'",
            &[],
        )
        .unwrap();
    assert_eq!(
        (r.get::<_, String>(0), r.get::<_, String>(1)),
        ("2048".into(), "8kB".into())
    );
}

#[test]
fn alter_system_survives_a_restart_and_reloads() {
    let mut s = TestServer::start();
    let mut c = s.connect();
    c.batch_execute("alter system set work_mem = '8MB'")
        .unwrap();
    c.batch_execute("alter system set enable_hashjoin to off")
        .unwrap();
    let err = c
        .batch_execute("alter system set work_mem = 'lots'")
        .unwrap_err();
    assert_eq!(err.code().unwrap().code(), "22023");
    let err = c
        .batch_execute("alter system set server_version = '1'")
        .unwrap_err();
    assert_eq!(err.code().unwrap().code(), "55P02");
    let err = c
        .batch_execute("alter system set no_such_setting = 1")
        .unwrap_err();
    assert_eq!(err.code().unwrap().code(), "42704");
    c.batch_execute("begin").unwrap();
    let err = c
        .batch_execute("alter system set work_mem = '1MB'")
        .unwrap_err();
    assert_eq!(err.code().unwrap().code(), "25001");
    c.batch_execute("rollback").unwrap();
    let auto = std::fs::read_to_string(s.data_dir().join("postgresql.auto.conf")).unwrap();
    assert!(auto.contains("work_mem = '8MB'"), "{auto}");
    // A user setting changed only in the file: this session keeps its value.
    let wm: String = c.query_one("show work_mem", &[]).unwrap().get(0);
    assert_eq!(wm, "4MB");
    drop(c);
    s.restart();
    let mut c = s.connect();
    let wm: String = c.query_one("show work_mem", &[]).unwrap().get(0);
    assert_eq!(wm, "8MB");
    let hj: String = c.query_one("show enable_hashjoin", &[]).unwrap().get(0);
    assert_eq!(hj, "off");
    c.batch_execute("alter system reset enable_hashjoin")
        .unwrap();
    c.batch_execute("alter system reset all").unwrap();
    let auto = std::fs::read_to_string(s.data_dir().join("postgresql.auto.conf")).unwrap();
    assert!(!auto.contains("work_mem"), "{auto}");
    // pg_reload_conf() signals the server, which reloads its files.
    c.batch_execute("alter system set ssl_min_protocol_version = 'TLSv1.3'")
        .unwrap();
    let reloads = |s: &TestServer| s.log_tail(10_000).matches("received SIGHUP").count();
    let before = reloads(&s);
    let ok: bool = c.query_one("select pg_reload_conf()", &[]).unwrap().get(0);
    assert!(ok);
    let deadline = Instant::now() + Duration::from_secs(10);
    while reloads(&s) == before {
        assert!(
            Instant::now() < deadline,
            "no reload logged:\n{}",
            s.log_tail(20)
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    s.assert_running("after pg_reload_conf()");
}
