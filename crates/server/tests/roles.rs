//! Roles at connection time and across restarts: a startup naming a role
//! that does not exist, or one without LOGIN, fails with 28000; CONNECTION
//! LIMIT is enforced (53300); roles and their attributes survive a restart
//! and a rolled-back CREATE ROLE leaves nothing; psql's `\du` prints what
//! PostgreSQL 15 prints for the same roles (`tests/roles/du.out`, captured
//! from PostgreSQL 15.18 after `tests/roles/setup.sql`, psql under PGTZ=UTC).

mod support;

use std::path::PathBuf;

use support::{first_differences, TestServer};

fn connect_as(s: &TestServer, user: &str) -> Result<postgres::Client, postgres::Error> {
    s.config().user(user).connect(postgres::NoTls)
}

fn sqlstate(e: &postgres::Error) -> String {
    e.code().map(|c| c.code().to_string()).unwrap_or_default()
}

fn message(e: &postgres::Error) -> String {
    e.as_db_error()
        .map(|d| d.message().to_string())
        .unwrap_or_else(|| e.to_string())
}

fn roles_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/roles")
}

#[test]
fn startup_checks_the_role_and_its_connection_limit() {
    let s = TestServer::start();
    let mut admin = s.connect();
    admin
        .batch_execute(
            "create role r_nologin; create user r_two connection limit 2; \
             create user r_none connection limit 0; create user r_super superuser connection limit 0",
        )
        .unwrap();

    let e = connect_as(&s, "r_missing")
        .err()
        .expect("unknown role refused");
    assert_eq!(sqlstate(&e), "28000");
    assert_eq!(message(&e), "role \"r_missing\" does not exist");

    let e = connect_as(&s, "r_nologin").err().expect("NOLOGIN refused");
    assert_eq!(sqlstate(&e), "28000");
    assert_eq!(message(&e), "role \"r_nologin\" is not permitted to log in");

    let e = s
        .config()
        .dbname("no_such_db")
        .connect(postgres::NoTls)
        .err()
        .expect("unknown database refused");
    assert_eq!(sqlstate(&e), "3D000");

    // Two connections are allowed, the third is not; one ending frees a slot.
    let mut first = connect_as(&s, "r_two").unwrap();
    let second = connect_as(&s, "r_two").unwrap();
    let e = connect_as(&s, "r_two").err().expect("third refused");
    assert_eq!(sqlstate(&e), "53300");
    assert_eq!(message(&e), "too many connections for role \"r_two\"");
    let row = first
        .query_one("select current_user::text, session_user::text", &[])
        .unwrap();
    assert_eq!(row.get::<_, String>(0), "r_two");
    assert_eq!(row.get::<_, String>(1), "r_two");
    drop(second);
    let mut third = None;
    for _ in 0..50 {
        match connect_as(&s, "r_two") {
            Ok(c) => {
                third = Some(c);
                break;
            }
            // The ended session may not have unregistered yet.
            Err(_) => std::thread::sleep(std::time::Duration::from_millis(100)),
        }
    }
    assert!(third.is_some(), "a slot is free once a connection ends");

    let e = connect_as(&s, "r_none").err().expect("limit 0 refuses all");
    assert_eq!(sqlstate(&e), "53300");
    // Superusers are not limited, as in PostgreSQL.
    connect_as(&s, "r_super").unwrap();

    // Once allowed to log in, the role can connect; the server is still fine.
    admin.batch_execute("alter role r_nologin login").unwrap();
    connect_as(&s, "r_nologin").unwrap();
    admin.batch_execute("select 1").unwrap();
}

#[test]
fn roles_survive_restart_and_roll_back() {
    let mut s = TestServer::start();
    let mut c = s.connect();
    c.batch_execute(
        "create user r_kept createdb connection limit 7 valid until '2031-05-06 07:08:09+00' password 'pw'",
    )
    .unwrap();
    // Separate queries: a BEGIN in the same query string would take the
    // CREATE USER into its block.
    c.batch_execute("begin; create role r_gone login; alter role r_kept nocreatedb")
        .unwrap();
    c.batch_execute("rollback").unwrap();
    drop(c);
    s.restart();
    let mut c = s.connect();
    let rows = c
        .query(
            "select rolname::text, rolcreatedb, rolcanlogin, rolconnlimit, \
             rolvaliduntil::text, rolpassword like 'SCRAM-SHA-256$%' \
             from pg_authid where rolname like 'r\\_%' order by 1",
            &[],
        )
        .unwrap();
    assert_eq!(rows.len(), 1, "only the committed role is there");
    let r = &rows[0];
    assert_eq!(r.get::<_, String>(0), "r_kept");
    assert!(r.get::<_, bool>(1), "the rolled-back NOCREATEDB is undone");
    assert!(r.get::<_, bool>(2));
    assert_eq!(r.get::<_, i32>(3), 7);
    assert!(r.get::<_, String>(4).starts_with("2031-05-06"));
    assert!(r.get::<_, bool>(5));
    // The restarted server lets it log in.
    let mut k = connect_as(&s, "r_kept").unwrap();
    let who: String = k
        .query_one("select current_user::text", &[])
        .unwrap()
        .get(0);
    assert_eq!(who, "r_kept");
    // A dropped role is gone after a restart too.
    drop(k);
    c.batch_execute("drop role r_kept").unwrap();
    drop(c);
    s.restart();
    let e = connect_as(&s, "r_kept")
        .err()
        .expect("dropped role refused");
    assert_eq!(sqlstate(&e), "28000");
}

#[test]
fn du_prints_what_postgres_15_prints() {
    let s = TestServer::start();
    let setup = std::fs::read_to_string(roles_dir().join("setup.sql")).unwrap();
    s.connect().batch_execute(&setup).unwrap();
    let mut cmd = s.psql_command_aligned();
    cmd.env("PGTZ", "UTC").arg("-c").arg("\\du");
    let out = s.run_psql(cmd);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let actual = String::from_utf8_lossy(&out.stdout);
    let expected = std::fs::read_to_string(roles_dir().join("du.out")).unwrap();
    assert!(
        actual == expected,
        "\\du differs from PostgreSQL 15's:\n{}",
        first_differences(&expected, &actual)
    );
}
