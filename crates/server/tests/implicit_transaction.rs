//! Extended-protocol statements between two Syncs form one implicit
//! transaction, as in PostgreSQL: an error rolls back the earlier ones, and a
//! successful batch commits at Sync. Spoken with raw protocol messages, since
//! client libraries send a Sync after every statement.

mod support;

use std::io::{Read, Write};
use std::net::TcpStream;

use support::TestServer;

fn msg(tag: u8, body: &[u8]) -> Vec<u8> {
    let mut m = vec![tag];
    m.extend_from_slice(&((body.len() + 4) as i32).to_be_bytes());
    m.extend_from_slice(body);
    m
}

fn cstr(s: &str) -> Vec<u8> {
    let mut v = s.as_bytes().to_vec();
    v.push(0);
    v
}

/// Parse + Bind + Execute of one parameterless statement on the unnamed portal.
fn statement(sql: &str) -> Vec<u8> {
    let mut out = Vec::new();
    let mut parse = cstr("");
    parse.extend(cstr(sql));
    parse.extend_from_slice(&0i16.to_be_bytes());
    out.extend(msg(b'P', &parse));
    let mut bind = cstr("");
    bind.extend(cstr(""));
    bind.extend_from_slice(&[0, 0, 0, 0, 0, 0]);
    out.extend(msg(b'B', &bind));
    let mut exec = cstr("");
    exec.extend_from_slice(&0i32.to_be_bytes());
    out.extend(msg(b'E', &exec));
    out
}

/// Reads messages until ReadyForQuery; returns the message tags seen.
fn until_ready(s: &mut TcpStream) -> Vec<u8> {
    let mut tags = Vec::new();
    loop {
        let mut head = [0u8; 5];
        s.read_exact(&mut head).expect("read message header");
        let len = i32::from_be_bytes(head[1..5].try_into().unwrap()) as usize - 4;
        let mut body = vec![0u8; len];
        s.read_exact(&mut body).expect("read message body");
        tags.push(head[0]);
        if head[0] == b'Z' {
            return tags;
        }
    }
}

fn connect(server: &TestServer) -> TcpStream {
    let mut s = TcpStream::connect(("127.0.0.1", server.port())).unwrap();
    let mut startup = 196608i32.to_be_bytes().to_vec();
    for kv in ["user", "postgres", "database", "postgres"] {
        startup.extend(cstr(kv));
    }
    startup.push(0);
    let mut packet = ((startup.len() + 4) as i32).to_be_bytes().to_vec();
    packet.extend(startup);
    s.write_all(&packet).unwrap();
    until_ready(&mut s);
    s
}

#[test]
fn statements_before_a_sync_commit_or_roll_back_together() {
    let server = TestServer::start();
    server.psql("create table t(a int)");
    let mut s = connect(&server);

    // An error in the batch: the insert before it is rolled back.
    let mut batch = statement("insert into t values (1)");
    batch.extend(statement("select 1/0"));
    batch.extend(msg(b'S', &[]));
    s.write_all(&batch).unwrap();
    let tags = until_ready(&mut s);
    assert!(
        tags.contains(&b'E'),
        "expected an ErrorResponse, got {tags:?}"
    );
    assert_eq!(server.psql("select count(*) from t").trim(), "0");

    // A clean batch commits at Sync.
    let mut batch = statement("insert into t values (2)");
    batch.extend(statement("insert into t values (3)"));
    batch.extend(msg(b'S', &[]));
    s.write_all(&batch).unwrap();
    let tags = until_ready(&mut s);
    assert!(!tags.contains(&b'E'), "unexpected error: {tags:?}");
    assert_eq!(server.psql("select sum(a) from t").trim(), "5");
    s.write_all(&msg(b'X', &[])).unwrap();
}

/// A simple Query with several statements is one implicit transaction too:
/// an error anywhere rolls back the statements before it.
#[test]
fn multi_statement_query_is_atomic() {
    let server = TestServer::start();
    let mut c = server.connect();
    c.batch_execute("create table t(a int)").unwrap();
    let err = c
        .batch_execute("insert into t values (1); insert into t values (2); select nosuch")
        .unwrap_err();
    assert_eq!(err.code().map(|c| c.code()), Some("42703"), "{err}");
    assert_eq!(server.psql("select count(*) from t").trim(), "0");
    c.batch_execute("insert into t values (1); insert into t values (2)")
        .unwrap();
    assert_eq!(server.psql("select sum(a) from t").trim(), "3");
    // A COMMIT inside ends the implicit block: what came before it stays.
    let err = c
        .batch_execute("insert into t values (10); commit; select 1/0")
        .unwrap_err();
    assert_eq!(err.code().map(|c| c.code()), Some("22012"), "{err}");
    assert_eq!(server.psql("select sum(a) from t").trim(), "13");
    // The statements after a COMMIT run in a new implicit block: an error
    // after it rolls them back.
    let err = c
        .batch_execute("insert into t values (7); commit; insert into t values (8); select 1/0")
        .unwrap_err();
    assert_eq!(err.code().map(|c| c.code()), Some("22012"), "{err}");
    assert_eq!(server.psql("select sum(a) from t").trim(), "20");
    // ... and that block is a transaction block: VACUUM refuses it.
    let err = c.batch_execute("select 1; commit; vacuum t").unwrap_err();
    assert_eq!(err.code().map(|c| c.code()), Some("25001"), "{err}");
    // BEGIN inside makes it explicit: the block stays open after the string.
    c.batch_execute("insert into t values (100); begin; insert into t values (1000)")
        .unwrap();
    c.batch_execute("rollback").unwrap();
    assert_eq!(server.psql("select sum(a) from t").trim(), "20");
}

/// SET TRANSACTION READ ONLY in a savepoint lasts until the savepoint is
/// released or rolled back to; a cursor declared in a savepoint that is
/// rolled back to is closed (PostgreSQL's AtSubAbort_Portals).
#[test]
fn savepoints_scope_read_only_and_cursors() {
    let server = TestServer::start();
    let mut c = server.connect();
    let read_only = |c: &mut postgres::Client| -> String {
        c.query_one("show transaction_read_only", &[])
            .unwrap()
            .get(0)
    };
    c.batch_execute("begin; savepoint x; set transaction read only")
        .unwrap();
    assert_eq!(read_only(&mut c), "on");
    c.batch_execute("rollback to savepoint x").unwrap();
    assert_eq!(read_only(&mut c), "off");
    c.batch_execute("savepoint y; set transaction read only; release savepoint y")
        .unwrap();
    assert_eq!(read_only(&mut c), "off");
    c.batch_execute("declare kept_c cursor for select 3")
        .unwrap();
    c.batch_execute("savepoint z; declare inner_c cursor for select 1")
        .unwrap();
    c.batch_execute("rollback to savepoint z").unwrap();
    let kept: i32 = c.query_one("fetch kept_c", &[]).unwrap().get(0);
    assert_eq!(kept, 3);
    let err = c.batch_execute("fetch inner_c").unwrap_err();
    assert_eq!(err.code().map(|c| c.code()), Some("34000"), "{err}");
    c.batch_execute("rollback").unwrap();
}
