//! psycopg 3, the Python driver, against the server: connect, parameterised
//! queries, `cursor.copy()` in both directions and a rejected COPY
//! (`tests/clients/psycopg_check.py`). Needs a Python with psycopg:
//! `tests/clients/setup.sh` (run by `.ci/run`) installs one in
//! `target/clients/venv`, used by default; `SCALEGRES_TEST_PYTHON` names
//! another. Without one the test says so and passes (the same COPY paths are
//! covered through the postgres crate in tests/copy.rs).

mod support;

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use support::{run_with_timeout, TestServer};

fn python() -> String {
    let venv = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/clients/venv/bin/python");
    std::env::var("SCALEGRES_TEST_PYTHON").unwrap_or_else(|_| {
        if venv.exists() {
            venv.to_string_lossy().into_owned()
        } else {
            "python3".into()
        }
    })
}

fn has_psycopg(python: &str) -> bool {
    Command::new(python)
        .args(["-c", "import psycopg"])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false)
}

#[test]
fn psycopg_queries_and_copy() {
    let python = python();
    if !has_psycopg(&python) {
        eprintln!(
            "skipped: `{python}` cannot import psycopg (set SCALEGRES_TEST_PYTHON to a Python \
             with psycopg 3)"
        );
        return;
    }
    let s = TestServer::start();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/clients/psycopg_check.py");
    let mut cmd = Command::new(&python);
    cmd.arg(&script).arg(s.port().to_string());
    let out = run_with_timeout(&mut cmd, Duration::from_secs(120));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.trim() == "ok",
        "psycopg check failed ({})\nstdout:\n{stdout}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
}
