//! SQL behaviour pinned against what PostgreSQL 15 answers (found with the
//! sqllogictest and pg_regress conformance material): NULL folding, degenerate
//! HAVING, bitwise operators, concat's output conversion, USING/NATURAL joins,
//! output column names and error positions.

mod support;

use postgres::error::ErrorPosition;
use postgres::{Client, SimpleQueryMessage};
use support::TestServer;

/// Column names and rows (text, None = NULL) of a single-statement query.
fn query(c: &mut Client, sql: &str) -> (Vec<String>, Vec<Vec<Option<String>>>) {
    let msgs = c
        .simple_query(sql)
        .unwrap_or_else(|e| panic!("{sql}: {e:?}"));
    let mut names = Vec::new();
    let mut rows = Vec::new();
    for m in msgs {
        if let SimpleQueryMessage::Row(r) = m {
            if names.is_empty() {
                names = r.columns().iter().map(|c| c.name().to_string()).collect();
            }
            rows.push((0..r.len()).map(|i| r.get(i).map(str::to_string)).collect());
        }
    }
    (names, rows)
}

fn rows(c: &mut Client, sql: &str) -> Vec<Vec<Option<String>>> {
    query(c, sql).1
}

fn one(c: &mut Client, sql: &str) -> Vec<Option<String>> {
    let r = rows(c, sql);
    assert_eq!(r.len(), 1, "{sql}: {r:?}");
    r.into_iter().next().unwrap()
}

fn s(v: &str) -> Option<String> {
    Some(v.to_string())
}

/// The SQLSTATE and 1-based position of the error `sql` raises.
fn error_at(c: &mut Client, sql: &str) -> (String, Option<u32>) {
    let e = c
        .simple_query(sql)
        .err()
        .unwrap_or_else(|| panic!("{sql} should fail"));
    let db = e
        .as_db_error()
        .unwrap_or_else(|| panic!("{sql}: not a server error: {e:?}"));
    let pos = match db.position() {
        Some(ErrorPosition::Original(p)) => Some(*p),
        _ => None,
    };
    (db.code().code().to_string(), pos)
}

#[test]
fn sql_semantics() {
    let server = TestServer::start();
    let mut c = server.connect();
    c.batch_execute(
        "create table t (a int, b int);
         insert into t values (1, 10), (0, 20), (null, 30);",
    )
    .unwrap();

    // A strict operator with a NULL constant operand is NULL without
    // evaluating the other side (no division by zero).
    assert!(rows(&mut c, "select * from t where (+a) / - + 0 = null").is_empty());
    assert_eq!(one(&mut c, "select 1 / 0 + null"), vec![None]);
    // ... but an aggregate under it keeps the query an aggregate.
    assert_eq!(
        one(&mut c, "select cast(null as int) * - count(*) from t"),
        vec![None]
    );

    // HAVING without GROUP BY or aggregates: one group, input not scanned.
    assert_eq!(
        rows(
            &mut c,
            "select 1 as one from t where 1 / a = 1 having 1 < 2"
        ),
        vec![vec![s("1")]]
    );
    assert!(rows(&mut c, "select 1 as one from t having 1 > 2").is_empty());
    let (code, pos) = error_at(&mut c, "select 1 as one from t having a > 1");
    assert_eq!((code.as_str(), pos), ("42803", Some(31)));
    let (code, pos) = error_at(&mut c, "select a from t having min(a) < max(a)");
    assert_eq!((code.as_str(), pos), ("42803", Some(8)));

    // Integer bitwise operators, shifts wrapping as C's.
    assert_eq!(
        one(
            &mut c,
            "select (-1::int4 << 31)::text, 5 & 3, 5 | 3, 5 # 3, 1::int8 << 40, 256 >> 4"
        ),
        vec![
            s("-2147483648"),
            s("1"),
            s("7"),
            s("6"),
            s("1099511627776"),
            s("16")
        ]
    );
    let (names, _) = query(&mut c, "select (-1::int4 << 31)::text");
    assert_eq!(names, vec!["text"]);

    // IS [NOT] UNKNOWN and the boolean comparison functions.
    assert_eq!(
        one(
            &mut c,
            "select null::bool is unknown, true is not unknown, booleq(true, false), boolne(true, false)"
        ),
        vec![s("t"), s("t"), s("f"), s("t")]
    );

    // concat/concat_ws take any type, converted by its output function.
    assert_eq!(
        one(
            &mut c,
            "select concat(1, 2.5, true, null, 'x'), concat_ws(',', 10, 20, null, 30), true || 'x'"
        ),
        vec![s("12.5tx"), s("10,20,30"), s("truex")]
    );

    // USING merges the join columns; NATURAL joins on the common ones.
    let (names, r) = query(
        &mut c,
        "select * from (values (1, 2)) a(x, y) join (values (1, 3)) b(x, z) using (x)",
    );
    assert_eq!(names, vec!["x", "y", "z"]);
    assert_eq!(r, vec![vec![s("1"), s("2"), s("3")]]);
    assert_eq!(
        rows(
            &mut c,
            "select x, a.x, b.x from (values (1, 2)) a(x, y) \
             full join (values (5, 3)) b(x, z) using (x) order by 1"
        ),
        vec![vec![s("1"), s("1"), None], vec![s("5"), None, s("5")]]
    );
    let (names, r) = query(
        &mut c,
        "select * from (values (1, 2)) a(x, y) natural left join (values (1, 3), (2, 4)) b(x, z)",
    );
    assert_eq!(names, vec!["x", "y", "z"]);
    assert_eq!(r, vec![vec![s("1"), s("2"), s("3")]]);
    assert_eq!(
        rows(
            &mut c,
            "select * from (values (1, 2)) a(x, y) natural join (values (7, 3)) b(q, z)"
        ),
        vec![vec![s("1"), s("2"), s("7"), s("3")]]
    );
    let (code, _) = error_at(&mut c, "select * from t join t u using (nope)");
    assert_eq!(code, "42703");

    // Output column names as PostgreSQL's FigureColname.
    let (names, _) = query(
        &mut c,
        "select (select max(a) from t), timestamp '2020-01-01', 'a'::text, 1::int4, \
         cast(1 as int8), true, -1, a::text from t limit 1",
    );
    assert_eq!(
        names,
        vec![
            "max",
            "timestamp",
            "text",
            "int4",
            "int8",
            "?column?",
            "?column?",
            "a"
        ]
    );

    // Error positions (1-based characters in the query string).
    let cases: &[(&str, &str, u32)] = &[
        ("select nosuch from t", "42703", 8),
        ("select 1,\n  t.nosuch from t", "42703", 13),
        ("select bool 'foo'", "22P02", 13),
        ("select 1 + 'x'::int", "22P02", 12),
        ("select 3 || 4.0", "42883", 10),
        ("select nosuch_fn(1)", "42883", 8),
        ("insert into t (a) values ('34.5')", "22P02", 27),
        ("insert into t (a) values ('1000000000000')", "22003", 27),
        ("insert into t (a) values (1, 2)", "42601", 30),
        ("insert into t (a, nosuch) values (1, 2)", "42703", 19),
        ("select 1; select nosuch from t", "42703", 18),
    ];
    for (sql, code, pos) in cases {
        let (got_code, got_pos) = error_at(&mut c, sql);
        assert_eq!(
            (got_code.as_str(), got_pos),
            (*code, Some(*pos)),
            "error for {sql:?}"
        );
    }
    // A cast of a text value (not a literal) reports no position.
    assert_eq!(
        error_at(&mut c, "select 'x'::text::bool"),
        ("22P02".to_string(), None)
    );
}
