//! psycopg 3, the Python driver, against the server: connect, parameterised
//! queries, `cursor.copy()` in both directions and a rejected COPY
//! (`tests/clients/psycopg_check.py`). Needs a Python with psycopg; the
//! test installs nothing: without one it says so and passes (the same COPY
//! paths are covered through the postgres crate in tests/copy.rs).
//! `SCALEGRES_TEST_PYTHON` names the interpreter (default `python3`), e.g.
//! a venv made with `python3 -m venv V && V/bin/pip install "psycopg[binary]"`.

mod support;

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use support::{run_with_timeout, TestServer};

fn python() -> String {
    std::env::var("SCALEGRES_TEST_PYTHON").unwrap_or_else(|_| "python3".into())
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
