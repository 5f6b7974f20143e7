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

/// The lines of `explain (analyze, buffers, costs off, timing off, summary
/// off) SQL`, run through psql unaligned.
fn explain_buffers(s: &TestServer, setup: &str, sql: &str) -> Vec<String> {
    let out = s.psql(&format!(
        "{setup}explain (analyze, buffers, costs off, timing off, summary off) {sql}"
    ));
    out.lines().map(|l| l.trim().to_string()).collect()
}

#[test]
fn explain_buffers_counts_reads_hits_and_temp_blocks() {
    let mut s = TestServer::start();
    s.psql(
        "create table big (id int, pad text); \
         insert into big select g, repeat('x', 200) from generate_series(1, 2000) g",
    );
    let pages: u64 = s
        .psql("select pg_relation_size('big') / 8192")
        .lines()
        .find_map(|l| l.trim().parse().ok())
        .unwrap();
    assert!(pages > 10, "{pages} pages");
    // A fresh server has none of the table's pages in shared buffers: the
    // scan reads every one, and the count above it includes its input's.
    s.restart();
    let sql = "select count(*) from big";
    let first = explain_buffers(&s, "", sql);
    let want = format!("Buffers: shared read={pages}");
    assert_eq!(
        first.iter().filter(|l| **l == want).count(),
        2,
        "{first:#?}"
    );
    assert!(first.iter().any(|l| l.starts_with("->  Seq Scan on big")));
    // The second run finds them all in the pool.
    let second = explain_buffers(&s, "", sql);
    let want = format!("Buffers: shared hit={pages}");
    assert_eq!(
        second.iter().filter(|l| **l == want).count(),
        2,
        "{second:#?}"
    );
    // A sort over work_mem writes and reads temporary blocks.
    let sorted = explain_buffers(
        &s,
        "set work_mem = '64kB'; ",
        "select * from big order by pad, id",
    );
    let line = sorted
        .iter()
        .find(|l| l.starts_with("Buffers: shared hit=") && l.contains(", temp read="))
        .unwrap_or_else(|| panic!("{sorted:#?}"));
    let temp = |what: &str| -> u64 {
        line.split(' ')
            .find_map(|p| p.strip_prefix(what))
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("{what} in {line}"))
    };
    assert!(temp("read=") > 0 && temp("written=") > 0, "{line}");
    // Without ANALYZE no node line appears, and planning reads nothing.
    let plain = s.psql("explain (buffers, costs off) select count(*) from big");
    assert!(!plain.contains("Buffers:"), "{plain}");
    // FORMAT JSON carries all ten counters for every node and the planning.
    let json = s.psql(&format!(
        "explain (analyze, buffers, format json, costs off, timing off) {sql}"
    ));
    assert_eq!(json.matches("\"Shared Hit Blocks\": ").count(), 3, "{json}");
    assert!(
        json.contains(&format!("\"Shared Hit Blocks\": {pages},")),
        "{json}"
    );
    assert!(json.contains("\"Temp Written Blocks\": 0"), "{json}");
    assert!(json.contains("\"Planning\": {"), "{json}");
    assert!(json.contains("\"Execution Time\": "), "{json}");
}
