//! No statement can overflow a stack: every recursive construct, generated
//! at depth 10, 1,000 and 100,000, either runs with the right answer or fails
//! with 54001 (stack depth limit exceeded) as PostgreSQL does, through both
//! the simple and the extended protocol, and the server and the session go
//! on. Where PostgreSQL 15 runs a construct at a depth (AND/OR chains and IN
//! lists at any depth, everything at 1,000), so do we.
//!
//! PostgreSQL 15 with max_stack_depth = 2MB, for reference: `+` chains run at
//! 3,000 and fail at 5,000; UNION ALL runs at 5,000 and fails at 10,000;
//! nested parentheses, subqueries, function calls and CASE run at 1,000 and
//! fail at 10,000 (a syntax error, "memory exhausted", from its parser);
//! AND, OR and IN run at 100,000.
//! Wide results: more than 1,664 result columns is 54011, as PostgreSQL.

mod support;

use postgres::SimpleQueryMessage;
use support::TestServer;

/// How a construct must behave at a depth.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Expect {
    /// Runs and its single value is this.
    Value(&'static str),
    /// Runs, or fails with 54001.
    ValueOrTooDeep(&'static str),
}

struct Construct {
    name: &'static str,
    sql: fn(usize) -> String,
    expect: fn(usize) -> Expect,
}

fn plus(n: usize) -> String {
    format!("select {}", vec!["1"; n].join("+"))
}
fn and_chain(n: usize) -> String {
    format!("select 1 where {}", vec!["true"; n].join(" and "))
}
fn or_chain(n: usize) -> String {
    let mut terms: Vec<String> = (1..n).map(|i| format!("a = {i}")).collect();
    terms.push("a = 0".into());
    format!(
        "select count(*) from (select 0 as a) s where {}",
        terms.join(" or ")
    )
}
fn in_list(n: usize) -> String {
    let list: Vec<String> = (0..n).map(|i| i.to_string()).collect();
    format!("select 1 where {} in ({})", n - 1, list.join(","))
}
fn cast_chain(n: usize) -> String {
    format!("select 1{}", "::int".repeat(n))
}
fn parens(n: usize) -> String {
    format!("select {}1{}", "(".repeat(n), ")".repeat(n))
}
fn subqueries(n: usize) -> String {
    format!("select {}1{}", "(select ".repeat(n), ")".repeat(n))
}
fn union_all(n: usize) -> String {
    format!(
        "select count(*) from ({}) s",
        vec!["select 1"; n].join(" union all ")
    )
}
fn functions(n: usize) -> String {
    format!("select {}-1{}", "abs(".repeat(n), ")".repeat(n))
}
fn cases(n: usize) -> String {
    format!(
        "select {}1{}",
        "case when true then ".repeat(n),
        " end".repeat(n)
    )
}
fn negations(n: usize) -> String {
    format!("select {}1", "- ".repeat(n))
}
fn nots(n: usize) -> String {
    format!("select {}true", "not ".repeat(n))
}
fn concat(n: usize) -> String {
    format!("select length({})", vec!["'a'"; n].join("||"))
}

fn up_to_1000(v: &'static str) -> fn(usize) -> Expect {
    // Function pointers cannot capture; one per value.
    match v {
        "1" => |n| {
            if n <= 1000 {
                Expect::Value("1")
            } else {
                Expect::ValueOrTooDeep("1")
            }
        },
        "t" => |n| {
            if n <= 1000 {
                Expect::Value("t")
            } else {
                Expect::ValueOrTooDeep("t")
            }
        },
        _ => unreachable!(),
    }
}

fn constructs() -> Vec<Construct> {
    vec![
        Construct {
            name: "+ chain",
            sql: plus,
            expect: |n| match n {
                10 => Expect::Value("10"),
                1000 => Expect::Value("1000"),
                _ => Expect::ValueOrTooDeep("100000"),
            },
        },
        Construct {
            name: "AND chain",
            sql: and_chain,
            expect: |_| Expect::Value("1"),
        },
        Construct {
            name: "OR chain",
            sql: or_chain,
            expect: |_| Expect::Value("1"),
        },
        Construct {
            name: "IN list",
            sql: in_list,
            expect: |_| Expect::Value("1"),
        },
        Construct {
            name: "cast chain",
            sql: cast_chain,
            expect: up_to_1000("1"),
        },
        Construct {
            name: "parentheses",
            sql: parens,
            expect: up_to_1000("1"),
        },
        Construct {
            name: "nested subqueries",
            sql: subqueries,
            expect: up_to_1000("1"),
        },
        Construct {
            name: "UNION ALL",
            sql: union_all,
            expect: |n| match n {
                10 => Expect::Value("10"),
                1000 => Expect::Value("1000"),
                _ => Expect::ValueOrTooDeep("100000"),
            },
        },
        Construct {
            name: "nested function calls",
            sql: functions,
            expect: up_to_1000("1"),
        },
        Construct {
            name: "nested CASE",
            sql: cases,
            expect: up_to_1000("1"),
        },
        Construct {
            name: "unary minus chain",
            sql: negations,
            // An even count of minus signs.
            expect: |n| {
                if n <= 1000 {
                    Expect::Value("1")
                } else {
                    Expect::ValueOrTooDeep("1")
                }
            },
        },
        Construct {
            name: "NOT chain",
            sql: nots,
            expect: up_to_1000("t"),
        },
        Construct {
            name: "|| chain",
            sql: concat,
            expect: |n| match n {
                10 => Expect::Value("10"),
                1000 => Expect::Value("1000"),
                _ => Expect::ValueOrTooDeep("100000"),
            },
        },
    ]
}

/// Runs one statement through the simple protocol: its single value, or
/// the SQLSTATE it failed with.
fn simple(c: &mut postgres::Client, sql: &str) -> Result<String, String> {
    match c.simple_query(sql) {
        Ok(msgs) => msgs
            .iter()
            .find_map(|m| match m {
                SimpleQueryMessage::Row(r) => Some(r.get(0).unwrap_or("NULL").to_string()),
                _ => None,
            })
            .ok_or_else(|| "no row".to_string()),
        Err(e) => Err(e
            .code()
            .map(|c| c.code().to_string())
            .unwrap_or(e.to_string())),
    }
}

/// The same through the extended protocol (Parse/Bind/Execute), text result.
fn extended(c: &mut postgres::Client, sql: &str) -> Result<String, String> {
    let wrapped = format!("select (v)::text from ({sql}) as q(v)");
    match c.query_one(&wrapped, &[]) {
        // A boolean cast to text reads "true"; the simple protocol sends "t".
        Ok(row) => Ok(match row.get::<_, Option<String>>(0).as_deref() {
            Some("true") => "t".into(),
            Some("false") => "f".into(),
            Some(v) => v.into(),
            None => "NULL".into(),
        }),
        Err(e) => Err(e
            .code()
            .map(|c| c.code().to_string())
            .unwrap_or(e.to_string())),
    }
}

fn check(name: &str, n: usize, how: &str, got: Result<String, String>, want: Expect) {
    match (want, got) {
        (Expect::Value(v) | Expect::ValueOrTooDeep(v), Ok(g)) => {
            assert_eq!(g, v, "{name} at depth {n} ({how})")
        }
        (Expect::ValueOrTooDeep(_), Err(code)) => assert_eq!(
            code, "54001",
            "{name} at depth {n} ({how}) must run or fail with 54001"
        ),
        (Expect::Value(_), Err(code)) => {
            panic!("{name} at depth {n} ({how}) must run, as in PostgreSQL; failed with {code}")
        }
    }
}

#[test]
fn every_construct_at_every_depth_runs_or_fails_cleanly() {
    let mut server = TestServer::start();
    let mut c = server.connect();
    for construct in constructs() {
        for n in [10, 1000, 100_000] {
            let sql = (construct.sql)(n);
            let want = (construct.expect)(n);
            check(construct.name, n, "simple", simple(&mut c, &sql), want);
            // The extended protocol wraps the statement as a subquery, one
            // level deeper; at 100,000 only the outcome's kind matters.
            if n <= 1000 || matches!(want, Expect::ValueOrTooDeep(_)) {
                check(construct.name, n, "extended", extended(&mut c, &sql), want);
            }
            server.assert_running(&format!("after {} at depth {n}", construct.name));
        }
    }
    // The session is still usable.
    let v: i32 = c.query_one("select 40 + 2", &[]).unwrap().get(0);
    assert_eq!(v, 42);
}

#[test]
fn max_stack_depth_is_a_setting_with_postgresqls_bounds() {
    let mut server = TestServer::start();
    let mut c = server.connect();
    let deep = plus(6000);
    assert_eq!(simple(&mut c, &deep).unwrap_err(), "54001");
    c.batch_execute("set max_stack_depth = '8MB'").unwrap();
    assert_eq!(simple(&mut c, &deep).unwrap(), "6000");
    let err = c.batch_execute("set max_stack_depth = '64MB'").unwrap_err();
    assert_eq!(err.code().unwrap().code(), "22023");
    c.batch_execute("reset max_stack_depth").unwrap();
    let err = c.simple_query(&deep).unwrap_err();
    let db = err.as_db_error().unwrap();
    assert_eq!(db.message(), "stack depth limit exceeded");
    assert_eq!(
        db.hint(),
        Some(
            "Increase the configuration parameter \"max_stack_depth\" (currently 2048kB), \
             after ensuring the platform's stack depth limit is adequate."
        )
    );
    server.assert_running("after max_stack_depth changes");
}

#[test]
fn a_huge_left_deep_statement_does_not_take_the_server_down() {
    let mut server = TestServer::start();
    let mut c = server.connect();
    // 2 MB of `1+1+...`: a million levels, parsed without recursion; the
    // tree is dropped on a stack of its own.
    assert_eq!(simple(&mut c, &plus(1_000_000)).unwrap_err(), "54001");
    server.assert_running("after a million-level statement");
    assert_eq!(simple(&mut c, "select 1").unwrap(), "1");
}

#[test]
fn result_width_is_bounded_as_in_postgresql() {
    let server = TestServer::start();
    let mut c = server.connect();
    let cols = |n: usize| (0..n).map(|i| format!("{i}")).collect::<Vec<_>>().join(",");
    let msgs = c.simple_query(&format!("select {}", cols(1664))).unwrap();
    assert!(msgs
        .iter()
        .any(|m| matches!(m, SimpleQueryMessage::Row(r) if r.len() == 1664)));
    for sql in [
        format!("select {}", cols(1665)),
        format!("select {}", cols(40000)),
        format!("values ({})", cols(1665)),
    ] {
        let Err(err) = c.simple_query(&sql) else {
            panic!("{} columns were accepted", sql.matches(',').count() + 1);
        };
        let db = err.as_db_error().unwrap();
        assert_eq!(db.code().code(), "54011");
        assert_eq!(db.message(), "target lists can have at most 1664 entries");
    }
    let defs = (0..1601)
        .map(|i| format!("c{i} int"))
        .collect::<Vec<_>>()
        .join(",");
    let err = c
        .batch_execute(&format!("create table wide ({defs})"))
        .unwrap_err();
    let db = err.as_db_error().unwrap();
    assert_eq!(
        (db.code().code(), db.message()),
        ("54011", "tables can have at most 1600 columns")
    );
    assert_eq!(simple(&mut c, "select 1").unwrap(), "1");
}
