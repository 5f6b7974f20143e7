use super::*;

#[test]
fn login_sends_parameters_key_and_ready() {
    let server = Server::new();
    let mut c = server.connect();
    c.startup(&[("user", "alice"), ("database", "db")]);
    assert_eq!(
        c.until_ready(),
        v(&[
            "R(0)",
            "S(server_version=17.0)",
            "S(client_encoding=UTF8)",
            "S(integer_datetimes=on)",
            "K",
            "Z(I)"
        ])
    );
    assert!(c.pid > 0);
    assert_eq!(server.registry.count(), 1);
    assert_eq!(server.registry.pids(), vec![c.pid]);
    c.send(b'X', &[]);
    assert_eq!(c.until_eof(), Vec::<String>::new());
    assert_eq!(server.registry.count(), 0);
}

#[test]
fn ssl_and_gss_requests_are_refused_then_startup_continues() {
    let server = Server::new();
    let mut c = server.connect();
    c.send_packet(&80877104u32.to_be_bytes());
    assert_eq!(c.recv_byte(), b'N');
    c.send_packet(&80877103u32.to_be_bytes());
    assert_eq!(c.recv_byte(), b'N');
    c.startup(&[("user", "alice")]);
    let msgs = c.until_ready();
    assert_eq!(msgs.first().unwrap(), "R(0)");
    assert_eq!(msgs.last().unwrap(), "Z(I)");
    c.query("select");
    assert_eq!(c.until_ready().len(), 5);
}

#[test]
fn repeated_ssl_request_is_an_unsupported_protocol() {
    let server = Server::new();
    let mut c = server.connect();
    c.send_packet(&80877103u32.to_be_bytes());
    assert_eq!(c.recv_byte(), b'N');
    c.send_packet(&80877103u32.to_be_bytes());
    assert_eq!(
        c.until_eof(),
        v(&["E(FATAL:0A000:unsupported frontend protocol 1234.5679: server supports 3.0 to 3.0)"])
    );
}

#[test]
fn startup_parameters_and_options_reach_the_factory() {
    let server = Server::new();
    let mut c = server.connect();
    c.startup(&[
        ("user", "bob"),
        ("application_name", "app"),
        (
            "options",
            r"-c search_path=s1 --work-mem=1MB -c application_name=my\ name",
        ),
    ]);
    assert_eq!(c.until_ready().last().unwrap(), "Z(I)");
    let log = server.factory.log.lock().unwrap();
    let p = &log.startups[0];
    assert_eq!(p.user, "bob");
    assert_eq!(p.database, "bob");
    let settings: Vec<(&str, &str)> = p
        .settings
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    assert_eq!(
        settings,
        vec![
            ("search_path", "s1"),
            ("work_mem", "1MB"),
            ("application_name", "my name"),
            ("application_name", "app"),
        ]
    );
}

#[test]
fn bad_options_are_fatal() {
    let server = Server::new();
    let mut c = server.connect();
    c.startup(&[("user", "bob"), ("options", "-c foo")]);
    assert_eq!(
        c.until_eof(),
        v(&["E(FATAL:42601:-c foo requires a value)"])
    );
}

#[test]
fn unsupported_protocol_version() {
    let server = Server::new();
    let mut c = server.connect();
    let mut body = (2u32 << 16).to_be_bytes().to_vec();
    body.extend_from_slice(b"user\0x\0\0");
    c.send_packet(&body);
    assert_eq!(
        c.until_eof(),
        v(&["E(FATAL:0A000:unsupported frontend protocol 2.0: server supports 3.0 to 3.0)"])
    );
}

#[test]
fn newer_minor_version_is_negotiated_down() {
    let server = Server::new();
    let mut c = server.connect();
    let mut body = ((3u32 << 16) | 2).to_be_bytes().to_vec();
    body.extend_from_slice(b"user\0x\0_pq_.foo\0bar\0\0");
    c.send_packet(&body);
    let (ty, nbody) = c.recv().unwrap();
    assert_eq!(ty, b'v');
    assert_eq!(nbody, b"\0\0\0\0\0\0\0\x01_pq_.foo\0");
    assert_eq!(c.until_ready().last().unwrap(), "Z(I)");
}

#[test]
fn missing_user_is_fatal() {
    let server = Server::new();
    let mut c = server.connect();
    c.startup(&[("database", "db")]);
    assert_eq!(
        c.until_eof(),
        v(&["E(FATAL:28000:no PostgreSQL user name specified in startup packet)"])
    );
}

#[test]
fn session_open_failure_is_fatal() {
    let server = Server::new();
    let mut c = server.connect();
    c.startup(&[("user", "alice"), ("database", "nodb")]);
    assert_eq!(
        c.until_eof(),
        v(&["E(FATAL:3D000:database \"nodb\" does not exist)"])
    );
    assert_eq!(server.registry.count(), 0);
}

#[test]
fn eof_during_startup_is_silent() {
    let server = Server::new();
    let mut c = server.connect();
    c.send_raw(&[0, 0]);
    c.s.shutdown(std::net::Shutdown::Write).unwrap();
    assert_eq!(c.until_eof(), Vec::<String>::new());
}

#[test]
fn cancel_request_sets_flag_of_the_right_backend() {
    let server = Server::new();
    let mut a = server.login();
    a.query("wait");
    // A wrong key does nothing.
    let mut bad = server.connect();
    let mut body = 80877102u32.to_be_bytes().to_vec();
    body.extend_from_slice(&a.pid.to_be_bytes());
    body.extend_from_slice(&a.secret.wrapping_add(1).to_be_bytes());
    bad.send_packet(&body);
    assert_eq!(bad.until_eof(), Vec::<String>::new());
    std::thread::sleep(Duration::from_millis(50));
    // The right one cancels the running query.
    let mut good = server.connect();
    let mut body = 80877102u32.to_be_bytes().to_vec();
    body.extend_from_slice(&a.pid.to_be_bytes());
    body.extend_from_slice(&a.secret.to_be_bytes());
    good.send_packet(&body);
    assert_eq!(good.until_eof(), Vec::<String>::new());
    assert_eq!(
        a.until_ready(),
        v(&[
            "E(ERROR:57014:canceling statement due to user request)",
            "Z(I)"
        ])
    );
    // The flag is reset before the next query.
    a.query("select");
    assert_eq!(a.until_ready().last().unwrap(), "Z(I)");
    assert_eq!(server.registry.count(), 1);
}
