//! Errors carry PostgreSQL's SQLSTATEs, through the simple and the extended
//! protocol and through psql, and the session keeps working after each.

mod support;

use postgres::error::ErrorPosition;
use support::TestServer;

const SETUP: &str = "create table ec (id int not null, v varchar(3))";

/// (what, SQL, expected SQLSTATE)
const CASES: &[(&str, &str, &str)] = &[
    ("syntax error", "selec 1", "42601"),
    ("unknown table", "select * from no_such_table", "42P01"),
    ("unknown column", "select no_such_column from ec", "42703"),
    ("invalid integer text", "select 'abc'::int", "22P02"),
    ("division by zero", "select 1/0", "22012"),
    (
        "too long for varchar(3)",
        "insert into ec values (1, 'abcd')",
        "22001",
    ),
    (
        "NULL into NOT NULL column",
        "insert into ec values (null, 'ab')",
        "23502",
    ),
    ("table already exists", "create table ec (id int)", "42P07"),
];

fn describe(e: &postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => format!("{} {}: {}", db.severity(), db.code().code(), db.message()),
        None => format!("not a server error: {e:?}"),
    }
}

/// Runs `sql`, expecting SQLSTATE `code`, then checks that the session still
/// answers a query. Returns a description of what went wrong, if anything.
fn check_case(
    c: &mut postgres::Client,
    protocol: &str,
    what: &str,
    sql: &str,
    code: &str,
) -> Option<String> {
    let result = if protocol == "simple" {
        c.batch_execute(sql).map(|_| ())
    } else {
        c.query(sql, &[]).map(|_| ())
    };
    let mut problem = None;
    match result {
        Ok(()) => problem = Some(format!("succeeded, expected SQLSTATE {code}")),
        Err(e) => {
            let got = e.code().map(|c| c.code().to_string());
            if got.as_deref() != Some(code) {
                problem = Some(format!("expected SQLSTATE {code}, got {}", describe(&e)));
            } else if let Some(db) = e.as_db_error() {
                if db.severity() != "ERROR" {
                    problem = Some(format!("severity {:?}, expected ERROR", db.severity()));
                }
            }
        }
    }
    // The same session must work afterwards.
    let after = if protocol == "simple" {
        c.simple_query("select 7").map(|_| ())
    } else {
        c.query_one("select 7", &[]).map(|_| ())
    };
    if let Err(e) = after {
        let msg = format!("the next query in the same session failed: {e:?}");
        problem = Some(match problem {
            Some(p) => format!("{p}; {msg}"),
            None => msg,
        });
    }
    problem.map(|p| format!("{what} (`{sql}`, {protocol} protocol): {p}"))
}

#[test]
fn errors_have_postgres_sqlstates() {
    let s = TestServer::start();
    let mut c = s.connect();
    c.batch_execute(SETUP).expect("create the test table");
    let mut problems = Vec::new();
    for protocol in ["simple", "extended"] {
        for (what, sql, code) in CASES {
            if let Some(p) = check_case(&mut c, protocol, what, sql, code) {
                problems.push(p);
            }
        }
    }
    let count: i64 = c.query_one("select count(*) from ec", &[]).unwrap().get(0);
    if count != 0 {
        problems.push(format!("the failed inserts left {count} rows in ec"));
    }
    assert!(
        problems.is_empty(),
        "wrong errors:\n  {}",
        problems.join("\n  ")
    );
}

#[test]
fn syntax_error_has_a_position() {
    let s = TestServer::start();
    let mut c = s.connect();
    for (sql, expected) in [("selec 1", Some(1u32)), ("select (1 + 2", None)] {
        let err = c.batch_execute(sql).expect_err("a syntax error must fail");
        let db = err
            .as_db_error()
            .unwrap_or_else(|| panic!("`{sql}`: not a server error: {err:?}"));
        assert_eq!(db.code().code(), "42601", "`{sql}`: {}", db.message());
        match (db.position(), expected) {
            (Some(ErrorPosition::Original(p)), Some(want)) => {
                assert_eq!(*p, want, "error position (1-based character) for `{sql}`")
            }
            (Some(ErrorPosition::Original(p)), None) => assert!(
                *p >= 1 && *p as usize <= sql.chars().count() + 1,
                "error position {p} is outside `{sql}`"
            ),
            (other, _) => {
                panic!("syntax error for `{sql}` should carry a position (P field), got {other:?}")
            }
        }
        c.simple_query("select 1")
            .expect("a query after the syntax error");
    }
}

/// Misspelt columns get PostgreSQL's fuzzy-match hint, and a missing
/// relation the position of its name (messages checked against PostgreSQL 15).
#[test]
fn missing_names_get_hints_and_positions() {
    let s = TestServer::start();
    let mut c = s.connect();
    c.batch_execute(
        "create table customers (id int, name text); create table orders (id int, nme text)",
    )
    .unwrap();
    let cases: &[(&str, &str, Option<&str>, Option<u32>)] = &[
        (
            "select nme from customers",
            "42703",
            Some("Perhaps you meant to reference the column \"customers.name\"."),
            Some(8),
        ),
        (
            "select c.nam from customers c",
            "42703",
            Some("Perhaps you meant to reference the column \"c.name\"."),
            Some(8),
        ),
        (
            "select naem from customers, orders",
            "42703",
            Some(
                "Perhaps you meant to reference the column \"customers.name\" or the column \
                 \"orders.nme\".",
            ),
            Some(8),
        ),
        (
            "select idd from customers, orders",
            "42703",
            Some(
                "Perhaps you meant to reference the column \"customers.id\" or the column \
                 \"orders.id\".",
            ),
            Some(8),
        ),
        ("select zzzz from customers", "42703", None, Some(8)),
        ("select * from nosuch", "42P01", None, Some(15)),
        ("insert into nosuch values (1)", "42P01", None, Some(13)),
        ("update nosuch set a = 1", "42P01", None, Some(8)),
    ];
    for &(sql, code, hint, position) in cases {
        let err = c.batch_execute(sql).expect_err(sql);
        let db = err.as_db_error().expect("a server error");
        assert_eq!(db.code().code(), code, "{sql}: {}", db.message());
        assert_eq!(db.hint(), hint, "{sql}");
        let at = match db.position() {
            Some(ErrorPosition::Original(p)) => Some(*p),
            _ => None,
        };
        assert_eq!(at, position, "{sql}");
    }
}

#[test]
fn error_in_transaction_block_needs_rollback() {
    let s = TestServer::start();
    let mut c = s.connect();
    c.batch_execute(SETUP).expect("create the test table");
    c.batch_execute("begin").expect("begin");
    c.batch_execute("insert into ec values (1, 'a')")
        .expect("insert in the block");
    let err = c.batch_execute("select 1/0").expect_err("1/0 must fail");
    assert_eq!(
        err.code().map(|c| c.code()),
        Some("22012"),
        "{}",
        describe(&err)
    );
    let err = c
        .batch_execute("select 1")
        .expect_err("a statement in a failed transaction block must fail");
    assert_eq!(
        err.code().map(|c| c.code()),
        Some("25P02"),
        "statement in an aborted block: {}",
        describe(&err)
    );
    c.batch_execute("rollback")
        .expect("rollback of the failed block");
    let count: i64 = c.query_one("select count(*) from ec", &[]).unwrap().get(0);
    assert_eq!(count, 0, "the rolled-back insert must be gone");

    // COMMIT of a failed block rolls it back (and succeeds, as in PostgreSQL).
    c.batch_execute("begin; insert into ec values (2, 'b')")
        .expect("begin + insert");
    let _ = c
        .batch_execute("select * from no_such_table")
        .expect_err("unknown table");
    c.batch_execute("commit").expect("commit of a failed block");
    let count: i64 = c.query_one("select count(*) from ec", &[]).unwrap().get(0);
    assert_eq!(
        count, 0,
        "COMMIT of a failed block must not commit its insert"
    );
}

#[test]
fn psql_shows_sqlstate_and_keeps_the_session() {
    let s = TestServer::start();
    s.psql(SETUP);
    for (what, sql, code) in CASES {
        // Without ON_ERROR_STOP psql goes on with the next statement in the same session.
        let mut cmd = s.psql_command();
        cmd.args(["-v", "ON_ERROR_STOP=0", "-v", "VERBOSITY=verbose"])
            .arg("-f")
            .arg(s.write_file("case.sql", &format!("{sql};\nselect 'still here';\n")));
        let out = s.run_psql(cmd);
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains(&format!("ERROR:  {code}:")),
            "{what} (`{sql}`) via psql: expected `ERROR:  {code}:` in psql's stderr, got:\n{stderr}"
        );
        assert!(
            stdout.lines().any(|l| l == "still here"),
            "{what} (`{sql}`) via psql: the next statement in the session did not run; \
             stdout:\n{stdout}\nstderr:\n{stderr}"
        );
    }
}
