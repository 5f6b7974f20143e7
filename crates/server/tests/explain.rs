//! EXPLAIN output as files: each `tests/explain/NAME.sql` is run through
//! `psql -X -a -q` (statements echoed, errors inline) and its output must
//! equal `NAME.out`, which is what PostgreSQL 15 prints for the same file
//! (pg_regress's method). To regenerate an expected file, run from
//! `crates/server/tests/explain` against a PostgreSQL 15 server started with
//! `-c autovacuum=off` (no table may have statistics):
//!
//! ```sh
//! psql -X -a -q -h HOST -p PORT -U postgres -d NEWDB -f NAME.sql > NAME.out 2>&1
//! ```

mod support;

use std::path::Path;
use std::process::Command;

use support::{pg_tool, run_with_timeout, TestServer};

fn run_file(s: &TestServer, dir: &Path, name: &str) -> String {
    let script = format!(
        "{} -X -a -q -h 127.0.0.1 -p {} -U postgres -d postgres -f {name}.sql 2>&1",
        pg_tool("psql").display(),
        s.port()
    );
    let mut cmd = Command::new("sh");
    for (k, _) in std::env::vars_os() {
        if k.to_string_lossy().starts_with("PG") {
            cmd.env_remove(k);
        }
    }
    cmd.arg("-c").arg(script).current_dir(dir);
    cmd.stdin(std::process::Stdio::null());
    let out = run_with_timeout(&mut cmd, std::time::Duration::from_secs(120));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn explain_files_match_postgresql() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/explain");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| {
            let p = e.unwrap().path();
            (p.extension()? == "sql").then(|| p.file_stem().unwrap().to_string_lossy().into_owned())
        })
        .collect();
    names.sort();
    assert!(!names.is_empty());
    let mut failures = Vec::new();
    for name in names {
        let s = TestServer::start();
        let actual = run_file(&s, &dir, &name);
        let expected = std::fs::read_to_string(dir.join(format!("{name}.out"))).unwrap();
        if actual != expected {
            let diff: Vec<String> = expected
                .lines()
                .zip(actual.lines())
                .enumerate()
                .filter(|(_, (e, a))| e != a)
                .take(10)
                .map(|(i, (e, a))| format!("line {}:\n  expected: {e}\n  actual:   {a}", i + 1))
                .collect();
            failures.push(format!(
                "{name}: output differs ({} expected lines, {} actual)\n{}\n--- actual output ---\n{actual}",
                expected.lines().count(),
                actual.lines().count(),
                diff.join("\n")
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
