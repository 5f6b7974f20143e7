use super::*;

#[test]
fn parse_describe_bind_execute_unnamed() {
    let server = Server::new();
    let mut c = server.login();
    c.parse("", "select", &[]);
    c.describe(b'S', "");
    c.bind("", "", &[], &[], &[]);
    c.describe(b'P', "");
    c.execute("", 0);
    c.sync();
    assert_eq!(
        c.until_ready(),
        v(&[
            "1",
            "t()",
            "T(a:23,b:25)",
            "2",
            "T(a:23,b:25)",
            "D(1,one)",
            "D(2,NULL)",
            "C(SELECT 2)",
            "Z(I)"
        ])
    );
    let events = server.factory.log.lock().unwrap().events.clone();
    assert_eq!(events, v(&["execute select", "sync"]));
}

#[test]
fn execute_with_max_rows_suspends() {
    let server = Server::new();
    let mut c = server.login();
    c.parse("s1", "gen 5", &[]);
    c.bind("p1", "s1", &[], &[], &[]);
    c.execute("p1", 2);
    c.execute("p1", 2);
    c.execute("p1", 2);
    c.execute("p1", 2);
    c.sync();
    assert_eq!(
        c.until_ready(),
        v(&[
            "1",
            "2",
            "D(1)",
            "D(2)",
            "s",
            "D(3)",
            "D(4)",
            "s",
            "D(5)",
            "C(SELECT 1)",
            "C(SELECT 0)",
            "Z(I)"
        ])
    );
    // The portal ended with the implicit transaction; the statement lives on.
    c.execute("p1", 0);
    c.sync();
    assert_eq!(
        c.until_ready(),
        v(&["E(ERROR:34000:portal \"p1\" does not exist)", "Z(I)"])
    );
    // Exactly max_rows rows: suspended (as PostgreSQL), then an empty batch.
    c.bind("", "s1", &[], &[], &[]);
    c.execute("", 5);
    c.execute("", 5);
    c.sync();
    assert_eq!(
        c.until_ready(),
        v(&[
            "2",
            "D(1)",
            "D(2)",
            "D(3)",
            "D(4)",
            "D(5)",
            "s",
            "C(SELECT 0)",
            "Z(I)"
        ])
    );
    // Unlimited after a partial fetch sends the rest.
    c.bind("", "s1", &[], &[], &[]);
    c.execute("", 1);
    c.execute("", 0);
    c.sync();
    assert_eq!(
        c.until_ready(),
        v(&[
            "2",
            "D(1)",
            "s",
            "D(2)",
            "D(3)",
            "D(4)",
            "D(5)",
            "C(SELECT 4)",
            "Z(I)"
        ])
    );
}

#[test]
fn portal_survives_sync_inside_a_transaction_block() {
    let server = Server::new();
    let mut c = server.login();
    c.query("begin");
    assert_eq!(c.until_ready(), v(&["C(BEGIN)", "Z(T)"]));
    c.parse("", "gen 3", &[]);
    c.bind("cur", "", &[], &[], &[]);
    c.execute("cur", 2);
    c.sync();
    assert_eq!(c.until_ready(), v(&["1", "2", "D(1)", "D(2)", "s", "Z(T)"]));
    c.execute("cur", 2);
    c.sync();
    assert_eq!(c.until_ready(), v(&["D(3)", "C(SELECT 1)", "Z(T)"]));
    c.query("commit");
    assert_eq!(c.until_ready(), v(&["C(COMMIT)", "Z(I)"]));
    c.execute("cur", 2);
    c.sync();
    assert_eq!(
        c.until_ready(),
        v(&["E(ERROR:34000:portal \"cur\" does not exist)", "Z(I)"])
    );
}

#[test]
fn text_and_binary_parameters_and_results() {
    let server = Server::new();
    let mut c = server.login();
    c.parse("e", "echo $1 $2", &[23, 0]);
    c.describe(b'S', "e");
    c.bind("", "e", &[0], &[Some(b"42"), None], &[]);
    c.execute("", 0);
    c.bind(
        "",
        "e",
        &[1, 0],
        &[Some(&7i32.to_be_bytes()), Some(b"x")],
        &[1],
    );
    c.describe(b'P', "");
    c.execute("", 0);
    c.bind("", "e", &[], &[Some(b"5"), Some(b"y")], &[1, 0]);
    c.describe(b'P', "");
    c.execute("", 0);
    c.sync();
    assert_eq!(
        c.until_ready(),
        v(&[
            "1",
            "t(23,25)",
            "T(p1:23,p2:25)",
            "2",
            "D(42,NULL)",
            "C(SELECT 1)",
            "2",
            "T(p1:23b,p2:25b)",
            "D([0, 0, 0, 7],x)",
            "C(SELECT 1)",
            "2",
            "T(p1:23b,p2:25)",
            "D([0, 0, 0, 5],y)",
            "C(SELECT 1)",
            "Z(I)"
        ])
    );
}

#[test]
fn error_skips_until_sync() {
    let server = Server::new();
    let mut c = server.login();
    c.parse("", "bogus", &[]);
    c.bind("", "", &[], &[], &[]);
    c.execute("", 0);
    c.query("insert");
    c.sync();
    c.parse("", "insert", &[]);
    c.bind("", "", &[], &[], &[]);
    c.execute("", 0);
    c.sync();
    assert_eq!(
        c.until_ready(),
        v(&["E(ERROR:42601:syntax error at or near \"bogus\")", "Z(I)"])
    );
    assert_eq!(c.until_ready(), v(&["1", "2", "C(INSERT 0 1)", "Z(I)"]));
    let events = server.factory.log.lock().unwrap().events.clone();
    assert_eq!(events, v(&["ext_error", "sync", "execute insert", "sync"]));
}

#[test]
fn error_in_transaction_block_fails_it() {
    let server = Server::new();
    let mut c = server.login();
    c.query("begin");
    c.until_ready();
    c.parse("", "insert", &[]);
    c.bind("", "", &[], &[], &[]);
    c.execute("nope", 0);
    c.execute("", 0);
    c.sync();
    assert_eq!(
        c.until_ready(),
        v(&[
            "1",
            "2",
            "E(ERROR:34000:portal \"nope\" does not exist)",
            "Z(E)"
        ])
    );
}

#[test]
fn bind_errors() {
    let server = Server::new();
    let mut c = server.login();
    c.parse("two", "echo $1 $2", &[23, 23]);
    c.sync();
    assert_eq!(c.until_ready(), v(&["1", "Z(I)"]));
    type Case = (Box<dyn Fn(&mut Client)>, &'static str);
    let cases: Vec<Case> = vec![
        (
            Box::new(|c| c.bind("", "two", &[], &[Some(b"1")], &[])),
            "E(ERROR:08P01:bind message supplies 1 parameters, but prepared statement \"two\" requires 2)",
        ),
        (
            Box::new(|c| c.bind("", "x", &[], &[], &[])),
            "E(ERROR:26000:prepared statement \"x\" does not exist)",
        ),
        (
            Box::new(|c| c.bind("", "two", &[0, 0, 0], &[Some(b"1"), Some(b"2")], &[])),
            "E(ERROR:08P01:bind message has 3 parameter formats but 2 parameters)",
        ),
        (
            Box::new(|c| c.bind("", "two", &[2], &[Some(b"1"), Some(b"2")], &[])),
            "E(ERROR:22023:unsupported format code: 2)",
        ),
        (
            Box::new(|c| c.bind("", "two", &[], &[Some(b"1"), Some(b"2")], &[0, 1, 0])),
            "E(ERROR:08P01:bind message has 3 result formats but query has 2 columns)",
        ),
        (
            Box::new(|c| c.bind("", "two", &[], &[Some(b"1"), Some(b"\xc3")], &[])),
            "E(ERROR:22021:invalid byte sequence for encoding \"UTF8\": 0xc3)",
        ),
    ];
    for (send, expected) in cases {
        send(&mut c);
        c.execute("", 0);
        c.sync();
        assert_eq!(c.until_ready(), v(&[expected, "Z(I)"]));
    }
}

#[test]
fn duplicate_names() {
    let server = Server::new();
    let mut c = server.login();
    c.parse("s", "insert", &[]);
    c.parse("s", "insert", &[]);
    c.sync();
    assert_eq!(
        c.until_ready(),
        v(&[
            "1",
            "E(ERROR:42P05:prepared statement \"s\" already exists)",
            "Z(I)"
        ])
    );
    // The unnamed statement is simply replaced; so is the unnamed portal.
    c.parse("", "insert", &[]);
    c.parse("", "gen 1", &[]);
    c.bind("", "", &[], &[], &[]);
    c.bind("", "", &[], &[], &[]);
    c.bind("p", "s", &[], &[], &[]);
    c.bind("p", "s", &[], &[], &[]);
    c.sync();
    assert_eq!(
        c.until_ready(),
        v(&[
            "1",
            "1",
            "2",
            "2",
            "2",
            "E(ERROR:42P03:portal \"p\" already exists)",
            "Z(I)"
        ])
    );
}

#[test]
fn close_statement_and_portal() {
    let server = Server::new();
    let mut c = server.login();
    c.parse("s", "gen 2", &[]);
    c.bind("p", "s", &[], &[], &[]);
    c.close(b'S', "s");
    c.close(b'S', "never");
    c.close(b'P', "never");
    // The portal outlives its statement.
    c.execute("p", 0);
    c.close(b'P', "p");
    c.execute("p", 0);
    c.sync();
    assert_eq!(
        c.until_ready(),
        v(&[
            "1",
            "2",
            "3",
            "3",
            "3",
            "D(1)",
            "D(2)",
            "C(SELECT 2)",
            "3",
            "E(ERROR:34000:portal \"p\" does not exist)",
            "Z(I)"
        ])
    );
    c.bind("", "s", &[], &[], &[]);
    c.sync();
    assert_eq!(
        c.until_ready(),
        v(&[
            "E(ERROR:26000:prepared statement \"s\" does not exist)",
            "Z(I)"
        ])
    );
    c.close(b'X', "s");
    c.sync();
    assert_eq!(
        c.until_ready(),
        v(&["E(ERROR:08P01:invalid CLOSE message subtype 88)", "Z(I)"])
    );
    c.describe(b'X', "s");
    c.describe(b'S', "nope");
    c.sync();
    assert_eq!(
        c.until_ready(),
        v(&["E(ERROR:08P01:invalid DESCRIBE message subtype 88)", "Z(I)"])
    );
    c.describe(b'S', "nope");
    c.sync();
    assert_eq!(
        c.until_ready(),
        v(&[
            "E(ERROR:26000:prepared statement \"nope\" does not exist)",
            "Z(I)"
        ])
    );
}

#[test]
fn empty_statement_and_non_row_statements() {
    let server = Server::new();
    let mut c = server.login();
    c.parse("", "", &[]);
    c.describe(b'S', "");
    c.bind("", "", &[], &[], &[]);
    c.describe(b'P', "");
    c.execute("", 0);
    c.execute("", 0);
    c.parse("", "insert", &[]);
    c.bind("", "", &[], &[], &[]);
    c.describe(b'P', "");
    c.execute("", 0);
    c.execute("", 0);
    c.sync();
    assert_eq!(
        c.until_ready(),
        v(&[
            "1",
            "t()",
            "n",
            "2",
            "n",
            "I",
            "I",
            "1",
            "2",
            "n",
            "C(INSERT 0 1)",
            "E(ERROR:55000:portal \"\" cannot be run)",
            "Z(I)"
        ])
    );
}

#[test]
fn notices_and_changed_parameters_in_extended_mode() {
    let server = Server::new();
    let mut c = server.login();
    c.parse("", "notice", &[]);
    c.bind("", "", &[], &[], &[]);
    c.execute("", 0);
    c.parse("", "set", &[]);
    c.bind("", "", &[], &[], &[]);
    c.execute("", 0);
    c.sync();
    assert_eq!(
        c.until_ready(),
        v(&[
            "1",
            "2",
            "N(NOTICE:00000:hello)",
            "C(DO)",
            "1",
            "2",
            "C(SET)",
            "S(x=on)",
            "Z(I)"
        ])
    );
}

#[test]
fn flush_sends_pending_output_without_sync() {
    let server = Server::new();
    let mut c = server.login();
    c.parse("", "gen 1", &[]);
    c.bind("", "", &[], &[], &[]);
    c.execute("", 0);
    c.send(b'H', &[]);
    let mut got = Vec::new();
    for _ in 0..4 {
        let (ty, _) = c.recv().unwrap();
        got.push(ty);
    }
    assert_eq!(got, b"12DC".to_vec());
    c.sync();
    assert_eq!(c.until_ready(), v(&["Z(I)"]));
}

#[test]
fn simple_query_drops_unnamed_statement() {
    let server = Server::new();
    let mut c = server.login();
    c.parse("", "insert", &[]);
    c.query("insert");
    c.bind("", "", &[], &[], &[]);
    c.sync();
    assert_eq!(c.until_ready(), v(&["1", "C(INSERT 0 1)", "Z(I)"]));
    assert_eq!(
        c.until_ready(),
        v(&[
            "E(ERROR:26000:prepared statement \"\" does not exist)",
            "Z(I)"
        ])
    );
}

#[test]
fn errors_are_flushed_without_sync() {
    let server = Server::new();
    let mut c = server.login();
    c.parse("", "bogus", &[]);
    c.send(b'H', &[]);
    let (ty, _) = c.recv().unwrap();
    assert_eq!(ty, b'E');
    c.sync();
    assert_eq!(c.until_ready(), v(&["Z(I)"]));
}

#[test]
fn client_encoding_applies_to_parameters_and_rows() {
    let server = Server::new();
    let mut c = server.login();
    c.query("latin1");
    assert_eq!(
        c.until_ready(),
        v(&["C(SET)", "S(client_encoding=LATIN1)", "Z(I)"])
    );
    // A LATIN1 text parameter arrives as UTF8 and goes back as LATIN1, in
    // text and in binary.
    c.parse("", "echo", &[25, 25]);
    c.bind(
        "",
        "",
        &[0, 1],
        &[Some(b"\xe9t\xe9"), Some(b"\xe0")],
        &[0, 1],
    );
    c.execute("", 0);
    c.sync();
    assert_eq!(
        c.until_ready(),
        v(&["1", "2", "D([233, 116, 233],[224])", "C(SELECT 1)", "Z(I)"])
    );
    let events = server.factory.log.lock().unwrap().events.clone();
    assert!(events.contains(&"execute echo".to_string()));
}
