//! Temporary tables across sessions: each session's are its own (same names
//! do not collide, another session's cannot be reached), shadow permanent
//! tables, and go when the session ends however it ends (a clean exit, a
//! client vanishing without a word, pg_terminate_backend) and with a
//! server crash; ON COMMIT through the extended protocol.

mod support;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use postgres::error::SqlState;
use support::TestServer;

/// How many temporary relations named `name` the catalog holds.
fn temp_relations(c: &mut postgres::Client, name: &str) -> i64 {
    c.query_one(
        "select count(*) from pg_class where relname = $1 and relpersistence = 't'",
        &[&name],
    )
    .unwrap()
    .get(0)
}

/// Waits (a session's end is handled after its client is gone) until no
/// temporary relation is named `name`.
#[track_caller]
fn wait_gone(c: &mut postgres::Client, name: &str) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while temp_relations(c, name) != 0 {
        assert!(
            Instant::now() < deadline,
            "temporary table {name} outlived its session"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn same_named_temp_tables_are_each_sessions_own() {
    let server = TestServer::start();
    let mut a = server.connect();
    let mut b = server.connect();
    a.batch_execute("create temp table work (v text); insert into work values ('a')")
        .unwrap();
    b.batch_execute("create temp table work (v text); insert into work values ('b'), ('b')")
        .unwrap();
    let v: String = a.query_one("select v from work", &[]).unwrap().get(0);
    assert_eq!(v, "a");
    let n: i64 = b
        .query_one("select count(*) from work", &[])
        .unwrap()
        .get(0);
    assert_eq!(n, 2);
    assert_eq!(temp_relations(&mut a, "work"), 2);

    // B's schema, named: PostgreSQL's 0A000.
    let b_schema: String = b
        .query_one(
            "select n.nspname::text from pg_class c join pg_namespace n on n.oid = c.relnamespace \
             where c.relname = 'work' and n.oid = pg_my_temp_schema()",
            &[],
        )
        .or_else(|_| b.query_one("select (current_schemas(true))[1]::text", &[]))
        .unwrap()
        .get(0);
    assert!(b_schema.starts_with("pg_temp_"), "{b_schema}");
    let err = a
        .batch_execute(&format!("select * from {b_schema}.work"))
        .unwrap_err();
    assert_eq!(err.code(), Some(&SqlState::FEATURE_NOT_SUPPORTED), "{err}");

    // A temporary table shadows a permanent one only in its session.
    a.batch_execute("create table shared (v text); insert into shared values ('permanent')")
        .unwrap();
    a.batch_execute("create temp table shared (v text); insert into shared values ('temp')")
        .unwrap();
    let seen: String = a.query_one("select v from shared", &[]).unwrap().get(0);
    assert_eq!(seen, "temp");
    let seen: String = b.query_one("select v from shared", &[]).unwrap().get(0);
    assert_eq!(seen, "permanent");
    let seen: String = a
        .query_one("select v from public.shared", &[])
        .unwrap()
        .get(0);
    assert_eq!(seen, "permanent");
}

#[test]
fn temp_tables_go_when_the_session_ends() {
    let server = TestServer::start();
    let mut watcher = server.connect();

    // A clean exit (Terminate).
    let mut clean = server.connect();
    clean
        .batch_execute("create temp table gone_clean (id serial primary key)")
        .unwrap();
    assert_eq!(temp_relations(&mut watcher, "gone_clean"), 1);
    drop(clean);
    wait_gone(&mut watcher, "gone_clean");
    wait_gone(&mut watcher, "gone_clean_pkey");
    wait_gone(&mut watcher, "gone_clean_id_seq");

    // A client that vanishes without a word (its socket closed mid-session).
    raw_session_vanishing(server.port(), "create temp table gone_abruptly (a int)");
    wait_gone(&mut watcher, "gone_abruptly");

    // pg_terminate_backend.
    let mut victim = server.connect();
    victim
        .batch_execute("create temp table gone_terminated (a int)")
        .unwrap();
    let pid: i32 = victim
        .query_one("select pg_backend_pid()", &[])
        .unwrap()
        .get(0);
    watcher
        .query_one("select pg_terminate_backend($1)", &[&pid])
        .unwrap();
    wait_gone(&mut watcher, "gone_terminated");
    assert!(victim.batch_execute("select 1").is_err());

    let schemas: i64 = watcher
        .query_one(
            "select count(*) from pg_namespace where nspname like 'pg_temp%'",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(schemas, 0, "temporary schemas left behind");
}

/// Logs in over the wire protocol by hand, runs `sql` and closes the socket
/// without a Terminate message, as a crashed client does.
fn raw_session_vanishing(port: u16, sql: &str) {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let mut body = Vec::new();
    body.extend_from_slice(&196608i32.to_be_bytes());
    for part in ["user", "postgres", "database", "postgres", ""] {
        body.extend_from_slice(part.as_bytes());
        body.push(0);
    }
    let mut startup = ((body.len() + 4) as i32).to_be_bytes().to_vec();
    startup.extend_from_slice(&body);
    s.write_all(&startup).unwrap();
    read_until_ready(&mut s);
    let mut query = vec![b'Q'];
    query.extend_from_slice(&((sql.len() + 5) as i32).to_be_bytes());
    query.extend_from_slice(sql.as_bytes());
    query.push(0);
    s.write_all(&query).unwrap();
    read_until_ready(&mut s);
    drop(s);
}

/// Reads messages up to ReadyForQuery; an ErrorResponse fails the test.
fn read_until_ready(s: &mut TcpStream) {
    loop {
        let mut head = [0u8; 5];
        s.read_exact(&mut head).unwrap();
        let len = i32::from_be_bytes([head[1], head[2], head[3], head[4]]) as usize;
        let mut rest = vec![0u8; len - 4];
        s.read_exact(&mut rest).unwrap();
        match head[0] {
            b'E' => panic!("error from the server: {}", String::from_utf8_lossy(&rest)),
            b'R' => assert_eq!(&rest[..4], &0i32.to_be_bytes(), "only trust login here"),
            b'Z' => return,
            _ => {}
        }
    }
}

fn count(c: &mut impl postgres::GenericClient, t: &str) -> i64 {
    c.query_one(&format!("select count(*) from {t}"), &[])
        .unwrap()
        .get(0)
}

#[test]
fn on_commit_through_the_extended_protocol() {
    let server = TestServer::start();
    let mut c = server.connect();
    c.execute(
        "create temp table keep (a int) on commit preserve rows",
        &[],
    )
    .unwrap();
    c.execute(
        "create temp table emptied (a int) on commit delete rows",
        &[],
    )
    .unwrap();
    c.execute("insert into keep values (1)", &[]).unwrap();
    c.execute("insert into emptied values (1)", &[]).unwrap();
    assert_eq!(count(&mut c, "keep"), 1);
    assert_eq!(count(&mut c, "emptied"), 0);
    let mut t = c.transaction().unwrap();
    t.execute("insert into emptied values (1), (2)", &[])
        .unwrap();
    t.execute("create temp table dropped (a int) on commit drop", &[])
        .unwrap();
    t.execute("insert into dropped values (1)", &[]).unwrap();
    assert_eq!(count(&mut t, "emptied"), 2);
    assert_eq!(count(&mut t, "dropped"), 1);
    t.commit().unwrap();
    assert_eq!(count(&mut c, "emptied"), 0);
    let err = c
        .query_one("select count(*) from dropped", &[])
        .unwrap_err();
    assert_eq!(err.code(), Some(&SqlState::UNDEFINED_TABLE), "{err}");
    let err = c
        .execute("create table not_temp (a int) on commit drop", &[])
        .unwrap_err();
    assert_eq!(
        err.code(),
        Some(&SqlState::INVALID_TABLE_DEFINITION),
        "{err}"
    );
}

#[test]
fn nothing_temporary_survives_a_server_crash() {
    let mut server = TestServer::start();
    let mut c = server.connect();
    c.batch_execute(
        "create temp table survivor (id serial primary key, v text); \
         insert into survivor (v) select 'row ' || g from generate_series(1, 500) g; \
         create table lasting (a int); insert into lasting values (1); checkpoint",
    )
    .unwrap();
    let files: Vec<String> = c
        .query(
            "select relfilenode::text from pg_class where relpersistence = 't' and relkind in ('r', 'i', 'S')",
            &[],
        )
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert_eq!(files.len(), 3);
    // Killed while the session is still open: a clean disconnect would drop
    // the tables itself and race the kill.
    server.kill();
    drop(c);
    server.start_again();
    let mut c = server.connect();
    assert_eq!(temp_relations(&mut c, "survivor"), 0);
    let left: i64 = c
        .query_one(
            "select count(*) from pg_class where relpersistence = 't'",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(left, 0);
    let schemas: i64 = c
        .query_one(
            "select count(*) from pg_namespace where nspname like 'pg_temp%'",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(schemas, 0);
    let n: i64 = c
        .query_one("select count(*) from lasting", &[])
        .unwrap()
        .get(0);
    assert_eq!(n, 1);
    // Their files went with them.
    let db_dirs: Vec<_> = std::fs::read_dir(server.data_dir().join("base"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    for f in &files {
        for d in &db_dirs {
            assert!(
                !d.join(f).exists(),
                "file {f} of a temporary relation left in {d:?}"
            );
        }
    }
    // The session can make a temporary table of the same name again.
    c.batch_execute("create temp table survivor (a int); insert into survivor values (1)")
        .unwrap();
}
