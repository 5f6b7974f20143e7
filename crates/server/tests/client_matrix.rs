//! The client matrix: psycopg 3, psycopg2, node-postgres and pgJDBC each run
//! one script (`tests/clients/`) against Scalegres and against PostgreSQL 15,
//! and the two transcripts must agree line for line: every type in text and
//! binary, parameters, prepared and named statements, server-side cursors,
//! transactions and savepoints, batches, constraint errors with their fields,
//! result and database metadata.
//!
//! The drivers come from `tests/clients/setup.sh` (run by `.ci/run`) under
//! `target/clients/`, and Debian's pgJDBC; a driver that is not installed is
//! reported and its test passes without running.
//!
//! `KNOWN_GAPS` lists the lines where Scalegres still differs, each with why;
//! such a line must still differ (so a fix removes it from the list).

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use support::reference::start_postgres;
use support::{run_with_timeout, TestServer};

/// (driver, line label, why Scalegres differs there).
const KNOWN_GAPS: &[(&str, &str, &str)] = &[(
    "jdbc",
    "DatabaseMetaData.getPrimaryKeys",
    "pgJDBC's query calls information_schema._pg_expandarray(i.indkey) in the select list \
         and reads fields of its composite result ((keys).x): set-returning functions in the \
         select list and composite values are missing",
)];

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn clients_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/clients")
}

/// The installed drivers' home (`tests/clients/setup.sh`).
fn installed() -> PathBuf {
    repo_root().join("target/clients")
}

fn python() -> Option<String> {
    let venv = installed().join("venv/bin/python");
    let python = std::env::var("SCALEGRES_TEST_PYTHON")
        .ok()
        .or_else(|| venv.exists().then(|| venv.to_string_lossy().into_owned()))?;
    let ok = Command::new(&python)
        .args(["-c", "import psycopg, psycopg2"])
        .output()
        .is_ok_and(|o| o.status.success());
    ok.then_some(python)
}

/// Runs `command` with `port` appended; its stdout lines (must end "done").
fn transcript(mut command: Command, port: u16, what: &str) -> Vec<String> {
    command.arg(port.to_string());
    let out = run_with_timeout(&mut command, Duration::from_secs(180));
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success() && stdout.trim_end().ends_with("done"),
        "{what} on port {port} failed ({})\nstdout:\n{stdout}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    stdout.lines().map(str::to_string).collect()
}

/// Runs the driver's script against PostgreSQL 15 and Scalegres and
/// compares the transcripts (see `KNOWN_GAPS`).
fn compare(driver: &str, command: impl Fn() -> Command) {
    let dir = tempfile::Builder::new()
        .prefix("scalegres-matrix-")
        .tempdir()
        .unwrap();
    let expected = {
        let pg = start_postgres(dir.path());
        transcript(
            command(),
            pg.port,
            &format!("{driver} against PostgreSQL 15"),
        )
    };
    let s = TestServer::start();
    let actual = transcript(command(), s.port(), &format!("{driver} against Scalegres"));
    let label = |l: &str| l.split_once(": ").map_or(l, |(k, _)| k).to_string();
    let gaps: Vec<&str> = KNOWN_GAPS
        .iter()
        .filter(|g| g.0 == driver)
        .map(|g| g.1)
        .collect();
    let mut problems = Vec::new();
    if expected.len() != actual.len() {
        problems.push(format!(
            "{} lines from PostgreSQL, {} from Scalegres",
            expected.len(),
            actual.len()
        ));
    }
    for (e, a) in expected.iter().zip(&actual) {
        // Labels may hold ": " themselves (JSON literals): match by prefix.
        let gap = gaps.iter().find(|g| e.starts_with(&format!("{g}: ")));
        let known = gap.is_some();
        if !known && label(e) != label(a) {
            problems.push(format!(
                "out of step:\n  PostgreSQL: {e}\n  Scalegres:  {a}"
            ));
            break;
        } else if e != a && !known {
            problems.push(format!("differs:\n  PostgreSQL: {e}\n  Scalegres:  {a}"));
        } else if e == a && known {
            problems.push(format!(
                "listed in KNOWN_GAPS but now the same (remove it): {}",
                gap.unwrap_or(&"")
            ));
        }
    }
    assert!(
        problems.is_empty(),
        "{driver}: Scalegres differs from PostgreSQL 15\n{}",
        problems.join("\n")
    );
}

#[test]
fn psycopg3_matches_postgresql() {
    let Some(python) = python() else {
        eprintln!("skipped: no Python with psycopg 3 and psycopg2 (run tests/clients/setup.sh)");
        return;
    };
    compare("psycopg3", || {
        let mut c = Command::new(&python);
        c.arg(clients_dir().join("psycopg_matrix.py"));
        c
    });
}

#[test]
fn psycopg2_matches_postgresql() {
    let Some(python) = python() else {
        eprintln!("skipped: no Python with psycopg 3 and psycopg2 (run tests/clients/setup.sh)");
        return;
    };
    compare("psycopg2", || {
        let mut c = Command::new(&python);
        // The port goes last; the flag is read from any position.
        c.arg(clients_dir().join("psycopg_matrix.py"))
            .arg("--psycopg2");
        c
    });
}

#[test]
fn node_postgres_matches_postgresql() {
    let modules = installed().join("node/node_modules");
    let has_node = Command::new("node")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !has_node || !modules.join("pg").exists() {
        eprintln!("skipped: no node or node-postgres (run tests/clients/setup.sh)");
        return;
    }
    compare("node", || {
        let mut c = Command::new("node");
        c.env("NODE_PATH", &modules)
            .arg(clients_dir().join("node/matrix.js"));
        c
    });
}

#[test]
fn jdbc_matches_postgresql() {
    let jar = Path::new("/usr/share/java/postgresql.jar");
    let has_javac = Command::new("javac")
        .arg("-version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !jar.exists() || !has_javac {
        eprintln!("skipped: no javac or pgJDBC (run tests/clients/setup.sh)");
        return;
    }
    let classes = tempfile::Builder::new()
        .prefix("scalegres-jdbc-")
        .tempdir()
        .unwrap();
    let mut javac = Command::new("javac");
    javac
        .arg("-d")
        .arg(classes.path())
        .arg("-cp")
        .arg(jar)
        .arg(clients_dir().join("jdbc/Matrix.java"));
    let out = run_with_timeout(&mut javac, Duration::from_secs(120));
    assert!(
        out.status.success(),
        "javac failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let classpath = format!("{}:{}", jar.display(), classes.path().display());
    compare("jdbc", || {
        let mut c = Command::new("java");
        // A JVM zone that is not UTC: the driver sends it as TimeZone at startup.
        c.arg("-Duser.timezone=Europe/Paris")
            .arg("-cp")
            .arg(&classpath)
            .arg("Matrix");
        c
    });
}
