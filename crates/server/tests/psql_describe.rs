//! psql 15's describe commands (`\l`, `\dn`, `\dt`, `\d t`, `\d+ t`, `\di`,
//! `\ds`, `\dv`, `\df`, `\du`, `\dx`; `\d` of tables with CHECK and foreign
//! key constraints) print exactly what they print against PostgreSQL 15 for
//! the same objects.
//!
//! The expected outputs in `tests/psql_describe/NAME.out` come from a real
//! PostgreSQL 15 (`tests/psql_describe/regenerate.sh`), set up with the
//! objects a fresh Scalegres cluster has (locale C, template1 and postgres)
//! plus `setup.sql`. Nothing is normalised: these outputs show no oids or
//! sizes.

mod support;

use std::path::PathBuf;

use support::{first_differences, TestServer};

fn describe_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/psql_describe")
}

/// psql's stdout and stderr (where "Did not find any relations." goes),
/// in order, as the reference outputs were captured.
fn describe(s: &TestServer, command: &str) -> String {
    let mut cmd = s.psql_command_aligned();
    cmd.arg("-c").arg(command);
    let out = s.run_psql(cmd);
    assert!(
        out.status.success(),
        "psql -c {command:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Only one of the two streams has text for a successful describe.
    let mut text = String::from_utf8_lossy(&out.stdout).into_owned();
    text.push_str(&String::from_utf8_lossy(&out.stderr));
    text
}

#[test]
fn describe_commands_print_what_postgres_15_prints() {
    let s = TestServer::start();
    s.psql_file(&describe_dir().join("setup.sql"));
    let commands = std::fs::read_to_string(describe_dir().join("commands.txt"))
        .expect("tests/psql_describe/commands.txt");
    let mut failures = Vec::new();
    for line in commands.lines().filter(|l| !l.trim().is_empty()) {
        let (name, command) = line.split_once(' ').expect("NAME COMMAND");
        let expected_path = describe_dir().join(format!("{name}.out"));
        let expected = std::fs::read_to_string(&expected_path)
            .unwrap_or_else(|e| panic!("{}: {e}", expected_path.display()));
        let actual = describe(&s, command);
        if actual != expected {
            failures.push(format!(
                "{command} differs from {}:\n{}\n--- actual ---\n{actual}",
                expected_path.display(),
                first_differences(&expected, &actual)
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// `\d` of a table with triggers lists them (pg_trigger and
/// pg_get_triggerdef), enabled and disabled apart, as PostgreSQL 15 does
/// (`d_trg.out` from PostgreSQL 15 after `triggers_setup.sql`).
#[test]
fn describe_lists_triggers() {
    let s = TestServer::start();
    s.psql_file(&describe_dir().join("triggers_setup.sql"));
    let expected = std::fs::read_to_string(describe_dir().join("d_trg.out")).expect("d_trg.out");
    let actual = describe(&s, "\\d trg");
    assert!(
        actual == expected,
        "{}\n--- actual ---\n{actual}",
        first_differences(&expected, &actual)
    );
}

#[test]
fn reg_types_print_and_read_names() {
    let s = TestServer::start();
    s.psql_file(&describe_dir().join("setup.sql"));
    assert_eq!(
        s.psql(
            "select 't'::regclass, 'int4'::regtype, 23::regtype, 'public'::regnamespace, \
             'postgres'::regrole, 'pg_class'::regclass::oid, 0::regclass"
        ),
        "t|integer|integer|public|postgres|1259|-"
    );
    assert_eq!(
        s.psql("select c.oid::regclass, c.oid = 't'::regclass from pg_class c where relname = 't'"),
        "t|t"
    );
    for (sql, code) in [
        ("select 'nope'::regclass", "42P01"),
        ("select 'nope'::regtype", "42704"),
        ("select 'nope'::regnamespace", "3F000"),
        ("select 'nope'::regrole", "42704"),
        ("select 'nope'::regproc", "42883"),
    ] {
        let mut cmd = s.psql_command();
        cmd.args(["-v", "VERBOSITY=verbose", "-c", sql]);
        let err = String::from_utf8_lossy(&s.run_psql(cmd).stderr).into_owned();
        assert!(err.contains(&format!("ERROR:  {code}")), "{sql}: {err}");
        // The error points at the literal, as PostgreSQL's does.
        assert!(err.contains("LINE 1: select 'nope'::"), "{sql}: {err}");
        assert!(err.contains("\n               ^"), "{sql}: {err}");
    }
}
