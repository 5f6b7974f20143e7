use super::*;

#[test]
fn several_results_notices_and_parameter_status() {
    let server = Server::new();
    let mut c = server.login();
    c.query("select; insert; notice; set");
    assert_eq!(
        c.until_ready(),
        v(&[
            "T(a:23,b:25)",
            "D(1,one)",
            "D(2,NULL)",
            "C(SELECT 2)",
            "C(INSERT 0 1)",
            "N(NOTICE:00000:hello)",
            "C(DO)",
            "C(SET)",
            "S(x=on)",
            "Z(I)"
        ])
    );
}

#[test]
fn error_stops_the_query_string() {
    let server = Server::new();
    let mut c = server.login();
    c.query("select; bogus; select");
    assert_eq!(
        c.until_ready(),
        v(&[
            "T(a:23,b:25)",
            "D(1,one)",
            "D(2,NULL)",
            "C(SELECT 2)",
            "E(ERROR:42601:syntax error at or near \"bogus\")",
            "Z(I)"
        ])
    );
    // Position and hint fields are sent too.
    c.query("bogus");
    let (ty, body) = c.recv().unwrap();
    assert_eq!(ty, b'E');
    assert!(body.windows(3).any(|w| w == b"P1\0"), "{body:?}");
    assert!(body.windows(12).any(|w| w == b"Htry select\0"), "{body:?}");
    assert_eq!(c.until_ready(), v(&["Z(I)"]));
}

#[test]
fn empty_query() {
    let server = Server::new();
    let mut c = server.login();
    c.query("");
    assert_eq!(c.until_ready(), v(&["I", "Z(I)"]));
    c.query(" ; ;");
    assert_eq!(c.until_ready(), v(&["I", "Z(I)"]));
}

#[test]
fn transaction_status_in_ready_for_query() {
    let server = Server::new();
    let mut c = server.login();
    c.query("begin");
    assert_eq!(c.until_ready(), v(&["C(BEGIN)", "Z(T)"]));
    c.query("bogus");
    assert_eq!(c.until_ready().last().unwrap(), "Z(E)");
    c.query("rollback");
    assert_eq!(c.until_ready(), v(&["C(ROLLBACK)", "Z(I)"]));
}

#[test]
fn large_result_streams() {
    let server = Server::new();
    let mut c = server.login();
    c.query("gen 100000");
    let msgs = c.until_ready();
    assert_eq!(msgs.len(), 100_003);
    assert_eq!(msgs[0], "T(n:23)");
    assert_eq!(msgs[100_000], "D(100000)");
    assert_eq!(msgs[100_001], "C(SELECT 100000)");
}

#[test]
fn session_panic_is_reported_and_closes() {
    let server = Server::new();
    let mut c = server.login();
    c.query("panic");
    let msgs = c.until_eof();
    assert_eq!(msgs.len(), 1);
    assert!(msgs[0].starts_with("E(FATAL:XX000:"), "{msgs:?}");
    assert_eq!(server.registry.count(), 0);
}

#[test]
fn fatal_session_error_closes() {
    let server = Server::new();
    let mut c = server.login();
    c.query("fatal");
    assert_eq!(
        c.until_eof(),
        v(&["E(FATAL:57P01:terminating connection due to administrator command)"])
    );
}

#[test]
fn copy_messages_ignored_and_function_call_refused() {
    let server = Server::new();
    let mut c = server.login();
    c.send(b'd', b"data");
    c.send(b'c', &[]);
    c.send(b'f', b"oops\0");
    c.send(b'F', &[0, 0, 0, 1, 0, 0, 0, 0, 0, 0]);
    assert_eq!(
        c.until_ready(),
        v(&[
            "E(ERROR:0A000:function call protocol is not supported)",
            "Z(I)"
        ])
    );
    c.query("insert");
    assert_eq!(c.until_ready(), v(&["C(INSERT 0 1)", "Z(I)"]));
}

#[test]
fn invalid_utf8_query_is_an_error_not_fatal() {
    let server = Server::new();
    let mut c = server.login();
    c.send(b'Q', b"select \xff\0");
    assert_eq!(
        c.until_ready(),
        v(&[
            "E(ERROR:22021:invalid byte sequence for encoding \"UTF8\": 0xff)",
            "Z(I)"
        ])
    );
    c.query("insert");
    assert_eq!(c.until_ready(), v(&["C(INSERT 0 1)", "Z(I)"]));
}

#[test]
fn terminate_closes() {
    let server = Server::new();
    let mut c = server.login();
    c.send(b'X', &[]);
    assert_eq!(c.until_eof(), Vec::<String>::new());
}
