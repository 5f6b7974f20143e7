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

use support::{first_differences, TestServer};

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
        let actual = s.psql_echo_file(&dir, &name);
        let expected = std::fs::read_to_string(dir.join(format!("{name}.out"))).unwrap();
        if actual != expected {
            failures.push(format!(
                "{name}: output differs ({} expected lines, {} actual)\n{}\n--- actual output ---\n{actual}",
                expected.lines().count(),
                actual.lines().count(),
                first_differences(&expected, &actual)
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
