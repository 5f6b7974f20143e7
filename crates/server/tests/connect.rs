//! Connecting with psql over TCP and over the Unix socket.

mod support;

use support::TestServer;

#[test]
fn psql_over_tcp_runs_select_1() {
    let s = TestServer::start();
    assert_eq!(s.psql("select 1"), "1", "`select 1` over TCP");
    assert_eq!(
        s.psql("select 1 + 2 as three, 'x' as letter"),
        "3|x",
        "a row with two columns (psql -At separates them with |)"
    );
}

#[test]
fn psql_over_unix_socket_runs_select_1() {
    let s = TestServer::start();
    let socket = s.socket_dir().join(format!(".s.PGSQL.{}", s.port()));
    assert!(
        socket.exists(),
        "no Unix socket at {} (started with -c unix_socket_directories={})",
        socket.display(),
        s.socket_dir().display()
    );
    assert_eq!(
        s.psql_unix("select 1"),
        "1",
        "`select 1` over the Unix socket"
    );
    // The postgres crate over the socket too.
    let mut c = s.connect_unix();
    let v: i32 = c
        .query_one("select 41 + 1", &[])
        .expect("select over the Unix socket with the postgres crate")
        .get(0);
    assert_eq!(v, 42);
}

#[test]
fn server_version_is_15() {
    let s = TestServer::start();
    let v = s.psql("show server_version");
    assert!(
        v.starts_with("15"),
        "`show server_version` should start with 15 (clients check it), got {v:?}"
    );
    let shared_buffers = s.psql("show shared_buffers");
    assert_eq!(
        shared_buffers,
        support::DEFAULT_SHARED_BUFFERS,
        "`show shared_buffers` should report the -c shared_buffers value the server was started with"
    );
}

#[test]
fn psql_runs_a_script_file() {
    let s = TestServer::start();
    let out = s.psql_script(
        "create table script_t (id int, name text);\n\
         insert into script_t values (1, 'one'), (2, 'two'), (3, 'three');\n\
         select id, name from script_t where id >= 2 order by id;\n\
         select count(*) from script_t;\n",
    );
    // -At prints command tags only without -q; keep just the query rows.
    let rows: Vec<&str> = out
        .lines()
        .filter(|l| !l.starts_with("CREATE") && !l.starts_with("INSERT"))
        .collect();
    assert_eq!(
        rows,
        vec!["2|two", "3|three", "3"],
        "output of the script (full psql output:\n{out})"
    );
}

/// pg_regress and the isolation tester set PGTZ=America/Los_Angeles, and JDBC
/// sends the JVM's zone as the startup TimeZone: any IANA name is accepted
/// at startup and reported back in its canonical spelling.
#[test]
fn named_time_zone_at_startup() {
    let s = TestServer::start();
    let mut cmd = s.psql_command();
    cmd.env("PGTZ", "america/los_angeles")
        .arg("-c")
        .arg("select current_setting('TimeZone'), '2024-07-01 12:00+00'::timestamptz");
    let out = s.run_psql(cmd);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "America/Los_Angeles|2024-07-01 05:00:00-07"
    );
    let mut config = s.config();
    config.options("-c TimeZone=Europe/Paris");
    let mut c = config.connect(postgres::NoTls).unwrap();
    let row = c
        .query_one("select '2024-01-01 12:00+00'::timestamptz::text", &[])
        .unwrap();
    assert_eq!(row.get::<_, String>(0), "2024-01-01 13:00:00+01");
}

/// `listen_addresses = 'localhost'` (the default) listens on both loopbacks.
#[test]
fn localhost_means_ipv4_and_ipv6() {
    let s = TestServer::start();
    if std::net::TcpListener::bind("[::1]:0").is_err() {
        eprintln!("no IPv6 loopback on this machine; skipping the ::1 check");
        return;
    }
    let out = s.run_psql({
        let mut cmd = s.psql_command_host("::1");
        cmd.arg("-c").arg("select 1");
        cmd
    });
    assert!(
        out.status.success(),
        "psql -h ::1 failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "1");
}
