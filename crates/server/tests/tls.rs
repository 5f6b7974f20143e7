//! TLS (`ssl = on`) with psql: sslmode require/verify-full/disable/prefer,
//! hostssl rules, pg_stat_ssl, client certificates, refusing to start
//! without the files, SIGHUP reload, and a large COPY over TLS.
//! Certificates are made here with rcgen: no openssl command needed.

mod support;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::thread;
use std::time::{Duration, Instant};

use support::TestServer;

/// A CA, a server certificate for localhost and 127.0.0.1, and a client
/// certificate for "postgres", all signed by the CA, as PEM files in `dir`.
struct Certs {
    dir: PathBuf,
}

impl Certs {
    fn make(dir: &Path, ca_name: &str) -> Certs {
        use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, KeyPair, SanType};
        std::fs::create_dir_all(dir).unwrap();
        let ca_key = KeyPair::generate().unwrap();
        let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
        ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        ca_params
            .distinguished_name
            .push(DnType::CommonName, ca_name);
        let ca = ca_params.self_signed(&ca_key).unwrap();
        let key = KeyPair::generate().unwrap();
        let mut params = CertificateParams::new(vec!["localhost".into()]).unwrap();
        params
            .subject_alt_names
            .push(SanType::IpAddress("127.0.0.1".parse().unwrap()));
        let cert = params.signed_by(&key, &ca, &ca_key).unwrap();
        let client_key = KeyPair::generate().unwrap();
        let mut client_params = CertificateParams::new(Vec::<String>::new()).unwrap();
        client_params.distinguished_name = rcgen::DistinguishedName::new();
        client_params
            .distinguished_name
            .push(DnType::CommonName, "postgres");
        client_params.serial_number = Some(rcgen::SerialNumber::from_slice(&[0x30, 0x39]));
        let client = client_params.signed_by(&client_key, &ca, &ca_key).unwrap();
        let write = |name: &str, pem: String, mode: u32| {
            let p = dir.join(name);
            std::fs::write(&p, pem).unwrap();
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode)).unwrap();
        };
        write("ca.crt", ca.pem(), 0o644);
        write("server.crt", cert.pem(), 0o644);
        write("server.key", key.serialize_pem(), 0o600);
        write("client.crt", client.pem(), 0o644);
        write("client.key", client_key.serialize_pem(), 0o600);
        Certs {
            dir: dir.to_path_buf(),
        }
    }

    fn path(&self, name: &str) -> String {
        self.dir.join(name).display().to_string()
    }

    /// `-c` settings for a server using these files (absolute paths).
    fn settings(&self) -> Vec<(String, String)> {
        vec![
            ("ssl".into(), "on".into()),
            ("ssl_cert_file".into(), self.path("server.crt")),
            ("ssl_key_file".into(), self.path("server.key")),
        ]
    }
}

fn start_tls(certs: &Certs, extra: &[(&str, &str)]) -> TestServer {
    let owned = certs.settings();
    let mut settings: Vec<(&str, &str)> = owned
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    settings.extend_from_slice(extra);
    TestServer::start_with(&settings)
}

/// psql over TCP with libpq SSL settings (PGSSLMODE=..., etc.) in `env`.
fn psql_ssl(s: &TestServer, host: &str, env: &[(&str, &str)], sql: &str) -> Output {
    let mut cmd: Command = s.psql_command_host(host);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.arg("-c").arg(sql);
    s.run_psql(cmd)
}

#[track_caller]
fn ok(o: Output) -> String {
    assert!(
        o.status.success(),
        "psql failed: {}\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).trim_end().to_string()
}

#[track_caller]
fn err(o: Output) -> String {
    assert!(
        !o.status.success(),
        "psql should have failed: {}",
        String::from_utf8_lossy(&o.stdout)
    );
    String::from_utf8_lossy(&o.stderr).into_owned()
}

const MY_SSL: &str = "select ssl, version from pg_stat_ssl where pid = pg_backend_pid()";

#[test]
fn sslmode_require_verify_full_and_disable() {
    let tmp = tempfile::tempdir().unwrap();
    let certs = Certs::make(tmp.path(), "Scalegres test CA");
    let s = start_tls(&certs, &[]);
    let out = ok(psql_ssl(
        &s,
        "127.0.0.1",
        &[("PGSSLMODE", "require")],
        MY_SSL,
    ));
    assert!(
        out == "t|TLSv1.3" || out == "t|TLSv1.2",
        "pg_stat_ssl: {out}"
    );
    let ca = certs.path("ca.crt");
    let verify = [("PGSSLMODE", "verify-full"), ("PGSSLROOTCERT", ca.as_str())];
    assert_eq!(ok(psql_ssl(&s, "localhost", &verify, MY_SSL)), "t|TLSv1.3");
    assert_eq!(ok(psql_ssl(&s, "127.0.0.1", &verify, "select 1")), "1");
    // A host name the certificate does not name: verify-full refuses it.
    let mut wrong = verify.to_vec();
    wrong.push(("PGHOSTADDR", "127.0.0.1"));
    let e = err(psql_ssl(&s, "wrong.example", &wrong, "select 1"));
    assert!(
        e.contains("does not match host name \"wrong.example\""),
        "{e}"
    );
    assert_eq!(
        ok(psql_ssl(
            &s,
            "127.0.0.1",
            &[("PGSSLMODE", "disable")],
            MY_SSL
        )),
        "f|"
    );
    // Unix sockets never use SSL; psql's default (prefer) goes on without it.
    assert_eq!(s.psql_unix(MY_SSL), "f|");
    let details = ok(psql_ssl(
        &s,
        "127.0.0.1",
        &[("PGSSLMODE", "require")],
        "select bits >= 128, cipher like 'TLS_%', client_dn is null \
         from pg_stat_ssl where pid = pg_backend_pid()",
    ));
    assert_eq!(details, "t|t|t");
    // PostgreSQL's column names and types.
    let stmt = s.connect().prepare("select * from pg_stat_ssl").unwrap();
    let cols: Vec<String> = stmt
        .columns()
        .iter()
        .map(|c| format!("{} {}", c.name(), c.type_().name()))
        .collect();
    assert_eq!(
        cols,
        [
            "pid int4",
            "ssl bool",
            "version text",
            "cipher text",
            "bits int4",
            "client_dn text",
            "client_serial numeric",
            "issuer_dn text"
        ]
    );
    assert_eq!(s.psql("show ssl"), "on");
    let e = s.psql_err("set ssl = off");
    assert!(e.contains("parameter \"ssl\" cannot be changed now"), "{e}");
}

#[test]
fn hostssl_rules_need_tls() {
    let tmp = tempfile::tempdir().unwrap();
    let certs = Certs::make(tmp.path(), "Scalegres test CA");
    let s = start_tls(&certs, &[]);
    std::fs::write(
        s.data_dir().join("pg_hba.conf"),
        "local all all trust\nhostssl all all 127.0.0.1/32 trust\n",
    )
    .unwrap();
    s.reload();
    let deadline = Instant::now() + Duration::from_secs(10);
    let refusal = loop {
        let o = psql_ssl(&s, "127.0.0.1", &[("PGSSLMODE", "disable")], "select 1");
        if !o.status.success() {
            break String::from_utf8_lossy(&o.stderr).into_owned();
        }
        assert!(Instant::now() < deadline, "pg_hba.conf reload not seen");
        thread::sleep(Duration::from_millis(50));
    };
    assert!(
        refusal.contains(
            "no pg_hba.conf entry for host \"127.0.0.1\", user \"postgres\", database \"postgres\", no encryption"
        ),
        "{refusal}"
    );
    assert_eq!(
        ok(psql_ssl(
            &s,
            "127.0.0.1",
            &[("PGSSLMODE", "require")],
            "select 1"
        )),
        "1"
    );
    // hostnossl: the other way round.
    std::fs::write(
        s.data_dir().join("pg_hba.conf"),
        "local all all trust\nhostnossl all all 127.0.0.1/32 trust\n",
    )
    .unwrap();
    s.reload();
    let deadline = Instant::now() + Duration::from_secs(10);
    let refusal = loop {
        let o = psql_ssl(&s, "127.0.0.1", &[("PGSSLMODE", "require")], "select 1");
        if !o.status.success() {
            break String::from_utf8_lossy(&o.stderr).into_owned();
        }
        assert!(Instant::now() < deadline, "pg_hba.conf reload not seen");
        thread::sleep(Duration::from_millis(50));
    };
    assert!(refusal.contains("SSL encryption"), "{refusal}");
}

#[test]
fn ssl_off_require_fails_and_prefer_falls_back() {
    let s = TestServer::start();
    let e = err(psql_ssl(
        &s,
        "127.0.0.1",
        &[("PGSSLMODE", "require")],
        "select 1",
    ));
    assert!(e.contains("server does not support SSL"), "{e}");
    assert_eq!(
        ok(psql_ssl(
            &s,
            "127.0.0.1",
            &[("PGSSLMODE", "prefer")],
            MY_SSL
        )),
        "f|"
    );
}

#[test]
fn server_refuses_to_start_without_its_files() {
    let e = match TestServer::try_start_with(&[("ssl", "on")]) {
        Ok(_) => panic!("started without server.crt"),
        Err(e) => e,
    };
    assert!(
        e.contains(
            "FATAL:  could not load server certificate file \"server.crt\": No such file or directory"
        ),
        "{e}"
    );
    // A key others may read is refused, as PostgreSQL does.
    let tmp = tempfile::tempdir().unwrap();
    let certs = Certs::make(tmp.path(), "Scalegres test CA");
    let key = certs.dir.join("server.key");
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o644)).unwrap();
    let owned = certs.settings();
    let settings: Vec<(&str, &str)> = owned
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    let e = match TestServer::try_start_with(&settings) {
        Ok(_) => panic!("started with a world-readable key"),
        Err(e) => e,
    };
    assert!(e.contains("has group or world access"), "{e}");
    assert!(
        e.contains("DETAIL:  File must have permissions u=rw (0600)"),
        "{e}"
    );
}

#[test]
fn client_certificate_in_pg_stat_ssl() {
    let tmp = tempfile::tempdir().unwrap();
    let certs = Certs::make(tmp.path(), "Scalegres test CA");
    let ca = certs.path("ca.crt");
    let s = start_tls(&certs, &[("ssl_ca_file", ca.as_str())]);
    let (crt, key) = (certs.path("client.crt"), certs.path("client.key"));
    let env = [
        ("PGSSLMODE", "verify-ca"),
        ("PGSSLROOTCERT", ca.as_str()),
        ("PGSSLCERT", crt.as_str()),
        ("PGSSLKEY", key.as_str()),
    ];
    let sql =
        "select client_dn, client_serial, issuer_dn from pg_stat_ssl where pid = pg_backend_pid()";
    assert_eq!(
        ok(psql_ssl(&s, "127.0.0.1", &env, sql)),
        "/CN=postgres|12345|/CN=Scalegres test CA"
    );
    // Without a client certificate: still in (no `cert` rule), no names.
    let env = [("PGSSLMODE", "require"), ("PGSSLCERT", "/nonexistent")];
    assert_eq!(ok(psql_ssl(&s, "127.0.0.1", &env, sql)), "||");
    // A certificate from another CA is refused in the handshake.
    let other = Certs::make(&tmp.path().join("other"), "Another CA");
    let (crt, key) = (other.path("client.crt"), other.path("client.key"));
    let env = [
        ("PGSSLMODE", "require"),
        ("PGSSLCERT", crt.as_str()),
        ("PGSSLKEY", key.as_str()),
    ];
    err(psql_ssl(&s, "127.0.0.1", &env, "select 1"));
    assert!(
        s.log_tail(20).contains("could not accept SSL connection: "),
        "{}",
        s.log_tail(20)
    );
    assert_eq!(s.psql("select 1"), "1");
}

#[test]
fn sighup_turns_tls_on_and_keeps_it_when_a_reload_fails() {
    let s = TestServer::start();
    let data = s.data_dir();
    // Default file names, relative to the data directory.
    let certs = Certs::make(&data, "First CA");
    let conf = data.join("postgresql.conf");
    let mut text = std::fs::read_to_string(&conf).unwrap();
    text.push_str("ssl = on\n");
    std::fs::write(&conf, &text).unwrap();
    s.reload();
    let require = [("PGSSLMODE", "require")];
    let deadline = Instant::now() + Duration::from_secs(10);
    while !psql_ssl(&s, "127.0.0.1", &require, "select 1")
        .status
        .success()
    {
        assert!(Instant::now() < deadline, "ssl = on not applied by SIGHUP");
        thread::sleep(Duration::from_millis(50));
    }
    let ca = certs.path("ca.crt");
    let verify = [("PGSSLMODE", "verify-full"), ("PGSSLROOTCERT", ca.as_str())];
    assert_eq!(ok(psql_ssl(&s, "localhost", &verify, "select 1")), "1");
    // A missing key: logged, and the old configuration stays in force.
    std::fs::rename(data.join("server.key"), data.join("moved.key")).unwrap();
    s.reload();
    let deadline = Instant::now() + Duration::from_secs(10);
    while !s
        .log_tail(10)
        .contains("SSL configuration was not reloaded")
    {
        assert!(Instant::now() < deadline, "failed reload not logged");
        thread::sleep(Duration::from_millis(50));
    }
    assert!(s
        .log_tail(10)
        .contains("could not access private key file \"server.key\": No such file or directory"));
    assert_eq!(ok(psql_ssl(&s, "localhost", &verify, "select 1")), "1");
}

#[test]
fn large_copy_and_result_over_tls_are_byte_exact() {
    let tmp = tempfile::tempdir().unwrap();
    let certs = Certs::make(tmp.path(), "Scalegres test CA");
    let s = start_tls(&certs, &[]);
    let require = [("PGSSLMODE", "require")];
    let mut data = String::new();
    for i in 0..100_000 {
        data.push_str(&format!("{i}\trow {i} {}\n", "é".repeat(i % 7)));
    }
    let file = s.write_file("in.tsv", &data);
    ok(psql_ssl(
        &s,
        "127.0.0.1",
        &require,
        "create table t (a int, b text)",
    ));
    let out = ok(psql_ssl(
        &s,
        "127.0.0.1",
        &require,
        &format!("\\copy t from '{}'", file.display()),
    ));
    assert_eq!(out, "COPY 100000");
    let o = psql_ssl(&s, "127.0.0.1", &require, "copy t to stdout");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(o.stdout == data.as_bytes(), "COPY TO over TLS differs");
    let o = psql_ssl(&s, "127.0.0.1", &require, "select a, b from t order by a");
    assert!(o.status.success());
    let expected: String = data.replace('\t', "|");
    assert!(o.stdout == expected.as_bytes(), "SELECT over TLS differs");
}

#[test]
fn fast_shutdown_reaches_tls_sessions() {
    let tmp = tempfile::tempdir().unwrap();
    let certs = Certs::make(tmp.path(), "Scalegres test CA");
    let mut s = start_tls(&certs, &[]);
    let with_ssl = |args: &[&str]| {
        let mut cmd = s.psql_command();
        cmd.env("PGSSLMODE", "require").args(args);
        cmd
    };
    let mut running = with_ssl(&["-c", "select pg_sleep(60)"]);
    // Idle between two statements while the shell command runs.
    let mut idle = with_ssl(&["-c", "select 1", "-c", "\\! sleep 3", "-c", "select 2"]);
    let running =
        thread::spawn(move || support::run_with_timeout(&mut running, support::CLIENT_TIMEOUT));
    let idle = thread::spawn(move || support::run_with_timeout(&mut idle, support::CLIENT_TIMEOUT));
    thread::sleep(Duration::from_millis(1000));
    let started = Instant::now();
    s.signal(libc::SIGINT);
    let status = s
        .wait_exit(Duration::from_secs(20))
        .expect("fast shutdown did not finish");
    assert!(status.success());
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "fast shutdown took {:?}",
        started.elapsed()
    );
    let e = err(running.join().unwrap());
    assert!(
        e.contains("terminating connection due to administrator command"),
        "{e}"
    );
    let o = idle.join().unwrap();
    assert!(!o.status.success());
}
