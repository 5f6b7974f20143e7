//! A plain-format pg_dump of a PostgreSQL 15 database (tables, sequences,
//! a serial column, constraints, an index, a comment, rows of every
//! supported type) restores into Scalegres with `psql -v ON_ERROR_STOP=1`,
//! and the row counts, checksums and sequence positions match PostgreSQL's.
//! The source is a throwaway PostgreSQL 15 started by
//! `support/postgres_as_scalegres.sh` (as the `postgres` user when root).

mod support;

use std::path::Path;
use std::time::Duration;

use support::reference::{client, start_postgres};
use support::{run_with_timeout, TestServer};

#[track_caller]
fn psql(port: u16, db: &str, args: &[&str]) -> String {
    let mut cmd = client("psql");
    cmd.args(["-X", "-At", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1"])
        .args(["-p", &port.to_string(), "-U", "postgres", "-d", db])
        .args(args);
    let out = run_with_timeout(&mut cmd, Duration::from_secs(120));
    assert!(
        out.status.success(),
        "psql {args:?} on port {port} failed\nstdout:\n{}\nstderr:\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim_end().to_string()
}

/// Row count and checksum of each table (concat_ws prints each value with
/// its type's output function), then where each sequence stands.
const CHECKS: &[&str] = &[
    "select count(*) || ':' || md5(string_agg(concat_ws('|', id, b, s, i, big, r, f, n, n2, t, \
     v, c, d, ts, tz), ',' order by id)) from typed",
    "select count(*) || ':' || md5(string_agg(concat_ws('|', id, typed_id, note), ',' order by \
     id)) from child",
    "select count(*) || ':' || md5(string_agg(concat_ws('|', a, b), ',' order by a, b)) from \
     plain_nokey",
    "select nextval('standalone_seq') || ',' || nextval('typed_id_seq')",
];

#[test]
fn plain_pg_dump_of_postgres_restores_with_the_same_checksums() {
    let dir = tempfile::Builder::new()
        .prefix("scalegres-pgdump-")
        .tempdir()
        .unwrap();
    let pg = start_postgres(dir.path());
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/clients/pg_dump_source.sql");
    psql(pg.port, "postgres", &["-q", "-f", source.to_str().unwrap()]);
    let dump = dir.path().join("dump.sql");
    let mut cmd = client("pg_dump");
    cmd.args([
        "-h",
        "127.0.0.1",
        "-p",
        &pg.port.to_string(),
        "-U",
        "postgres",
    ])
    .args(["-d", "postgres", "-f"])
    .arg(&dump);
    let out = run_with_timeout(&mut cmd, Duration::from_secs(120));
    assert!(
        out.status.success(),
        "pg_dump: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let want: Vec<String> = CHECKS
        .iter()
        .map(|q| psql(pg.port, "postgres", &["-c", q]))
        .collect();
    drop(pg);

    let s = TestServer::start();
    s.psql("create database restored");
    psql(s.port(), "restored", &["-q", "-f", dump.to_str().unwrap()]);
    let got: Vec<String> = CHECKS
        .iter()
        .map(|q| psql(s.port(), "restored", &["-c", q]))
        .collect();
    assert_eq!(got, want, "Scalegres after the restore vs PostgreSQL");
    // The restored constraints hold.
    let mut cmd = client("psql");
    cmd.args([
        "-X",
        "-h",
        "127.0.0.1",
        "-p",
        &s.port().to_string(),
        "-U",
        "postgres",
    ])
    .args([
        "-d",
        "restored",
        "-c",
        "insert into child values (0, 1, 'x')",
    ]);
    let out = run_with_timeout(&mut cmd, Duration::from_secs(60));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("child_id_check"),
        "the restored CHECK constraint must hold: {err}"
    );
}
