//! COPY through real clients: psql's COPY FROM STDIN and \copy, the postgres
//! crate's copy_in/copy_out. A table of every supported type with NULLs,
//! delimiters, quotes, backslashes and newlines survives TO then FROM in text
//! and CSV; a malformed line rejects the whole COPY and leaves the table as it
//! was; errors carry PostgreSQL's CONTEXT.

mod support;

use std::io::{Read, Write};

use support::TestServer;

const CREATE: &str = "create table src (
    id int not null, b bool, s smallint, i bigint, r real, f double precision,
    n numeric(12,3), t text, v varchar(20), c char(4), d date, ts timestamp,
    tz timestamptz)";

const ROWS: &str = "insert into src values
    (1, true, 1, 9000000000, 1.5, 2.25, 12.5, 'plain', 'v', 'ab', '2024-02-29',
     '2024-01-01 12:00:00', '2024-01-01 12:00:00+00'),
    (2, null, null, null, null, null, null, null, null, null, null, null, null),
    (3, false, -32768, -1, -0.5, 1e300, -0.001, e'tab\\there, comma', 'a,\"q\"', 'x',
     '0001-01-01', '2000-02-29 23:59:59.999999', '1999-12-31 23:59:59+00'),
    (4, true, 0, 0, 0, 0, 0, e'back\\\\slash \\\\N \\\\. and\\nnew\\r\\nlines', '', '',
     '2038-01-19', '1970-01-01 00:00:00', '2038-01-19 03:14:07+00'),
    (5, false, 7, 7, 7, 7, 7, '\\N', 'NULL', '\"', '2024-01-01', '2024-01-01', '2024-01-01 00:00+00'),
    (6, true, 1, 1, 1, 1, 1, '\\.', ' lead', '  ', '2024-01-01', '2024-01-01', '2024-01-01 00:00+00')";

fn checksum(c: &mut postgres::Client, table: &str) -> String {
    let cols = [
        "id", "b", "s", "i", "r", "f", "n", "t", "v", "c", "d", "ts", "tz",
    ]
    .map(|c| format!("coalesce({c}::text, '<NULL>')"))
    .join(" || '~' || ");
    c.query_one(
        &format!(
            "select count(*)::text || ':' || md5(string_agg({cols}, '|' order by id)) from {table}"
        ),
        &[],
    )
    .unwrap()
    .get(0)
}

#[test]
fn round_trip_every_type_in_text_and_csv() {
    let server = TestServer::start();
    let mut c = server.connect();
    c.batch_execute(CREATE).unwrap();
    c.batch_execute(ROWS).unwrap();
    let want = checksum(&mut c, "src");
    for (i, (options, in_options)) in [
        ("", ""),
        ("(format csv)", "(format csv)"),
        (
            "(format csv, header, force_quote *)",
            "(format csv, header match)",
        ),
        (
            "(delimiter '|', null '<null>')",
            "(delimiter '|', null '<null>')",
        ),
    ]
    .iter()
    .enumerate()
    {
        let mut data = Vec::new();
        c.copy_out(&format!("copy src to stdout {options}"))
            .unwrap()
            .read_to_end(&mut data)
            .unwrap();
        let dst = format!("dst{i}");
        c.batch_execute(&format!("drop table if exists {dst}"))
            .unwrap();
        c.batch_execute(&CREATE.replace("src", &dst)).unwrap();
        let mut w = c
            .copy_in(&format!("copy {dst} from stdin {in_options}"))
            .unwrap();
        // Odd chunk sizes: records and escapes split across CopyData messages.
        for chunk in data.chunks(7) {
            w.write_all(chunk).unwrap();
        }
        let n = w.finish().unwrap();
        assert_eq!(n, 6, "rows loaded with options {options:?}");
        assert_eq!(
            checksum(&mut c, &dst),
            want,
            "round trip with options {options:?}; data:\n{}",
            String::from_utf8_lossy(&data)
        );
    }
}

#[test]
fn a_bad_line_rejects_the_whole_copy() {
    let server = TestServer::start();
    let mut c = server.connect();
    c.batch_execute("create table t (a int not null, b text); insert into t values (0, 'kept')")
        .unwrap();
    for (data, code, context) in [
        (
            "1\tone\n2\ttwo\nx\tbad\n",
            "22P02",
            "COPY t, line 3, column a: \"x\"",
        ),
        ("1\tone\n2\n", "22P04", "COPY t, line 2: \"2\""),
        ("1\tone\t3\n", "22P04", "COPY t, line 1: \"1\tone\t3\""),
        (
            "1\tone\n\\N\tnull\n",
            "23502",
            "COPY t, line 2: \"\\N\tnull\"",
        ),
    ] {
        let mut w = c.copy_in("copy t from stdin").unwrap();
        w.write_all(data.as_bytes()).unwrap();
        let err = w.finish().expect_err("bad data must fail the COPY");
        let db = err.as_db_error().expect("a server error");
        assert_eq!(db.code().code(), code, "{data:?}: {db:?}");
        assert_eq!(db.where_(), Some(context), "{data:?}");
        let n: i64 = c.query_one("select count(*) from t", &[]).unwrap().get(0);
        assert_eq!(n, 1, "a failed COPY left rows behind ({data:?})");
    }
    // The session goes on.
    let mut w = c.copy_in("copy t from stdin with (format csv)").unwrap();
    w.write_all(b"5,\"five, quoted\"\n").unwrap();
    assert_eq!(w.finish().unwrap(), 1);
}

#[test]
fn psql_copy_and_backslash_copy() {
    let server = TestServer::start();
    server.psql("create table t (a int, b text)");
    let file = server.write_file("in.csv", "a,b\n1,one\n2,\"two\nlines\"\n3,\n");
    let out = server.psql(&format!(
        "\\copy t from '{}' with (format csv, header match)",
        file.display()
    ));
    assert_eq!(out.trim(), "COPY 3");
    // Server-side files, absolute paths.
    let dump = server.temp_dir().join("t.txt");
    server.psql(&format!("copy t to '{}'", dump.display()));
    let text = std::fs::read_to_string(&dump).unwrap();
    assert_eq!(text, "1\tone\n2\ttwo\\nlines\n3\t\\N\n");
    server.psql(&format!("copy t from '{}'", dump.display()));
    assert_eq!(server.psql("select count(*), count(b) from t"), "6|4");
    let err = server.psql_err("copy t to 'relative.txt'");
    assert!(
        err.contains("relative path not allowed for COPY to file"),
        "{err}"
    );
    // A query's result, and the old option syntax.
    let out = server.psql("copy (select a, b from t where a = 2 order by a limit 1) to stdout with csv header force quote *");
    assert_eq!(out, "a,b\n\"2\",\"two\nlines\"");
}

#[test]
fn big_load_through_stdin() {
    let server = TestServer::start();
    let mut c = server.connect();
    c.batch_execute("create table big (id int, filler text)")
        .unwrap();
    let mut w = c.copy_in("copy big from stdin").unwrap();
    let mut buf = String::new();
    for i in 0..200_000 {
        buf.push_str(&format!("{i}\t{}\n", "x".repeat(i % 50)));
        if buf.len() > 60_000 {
            w.write_all(buf.as_bytes()).unwrap();
            buf.clear();
        }
    }
    w.write_all(buf.as_bytes()).unwrap();
    assert_eq!(w.finish().unwrap(), 200_000);
    let row = c
        .query_one(
            "select count(*), sum(id), sum(length(filler)) from big",
            &[],
        )
        .unwrap();
    let (n, s, l): (i64, i64, i64) = (row.get(0), row.get(1), row.get(2));
    assert_eq!((n, s), (200_000, 199_999 * 200_000 / 2));
    assert_eq!(l, (0..200_000i64).map(|i| i % 50).sum::<i64>());
}

/// COPY FROM fires the table's triggers as INSERT does: BEFORE ROW ones may
/// change or skip rows (a skipped row is not counted), AFTER ROW and
/// statement ones fire once the rows are in (checked against PostgreSQL 15).
#[test]
fn copy_from_fires_triggers() {
    let server = TestServer::start();
    let mut c = server.connect();
    c.batch_execute(
        "create table t (a int, b text);
         create table log (what text, n bigint);
         create function t_before() returns trigger language plpgsql as $$
         begin
           if new.a < 0 then return null; end if;
           new.b := upper(new.b);
           return new;
         end $$;
         create function t_after() returns trigger language plpgsql as $$
         begin
           insert into log select tg_level || ' ' || coalesce(new.b, ''), count(*) from t;
           return null;
         end $$;
         create trigger t_b before insert on t for each row execute function t_before();
         create trigger t_a after insert on t for each row execute function t_after();
         create trigger t_s after insert on t for each statement execute function t_after();",
    )
    .unwrap();
    let mut w = c.copy_in("copy t from stdin").unwrap();
    w.write_all(b"1\tone\n-1\tskipped\n2\ttwo\n").unwrap();
    assert_eq!(w.finish().unwrap(), 2);
    let rows: Vec<(i32, String)> = c
        .query("select a, b from t order by a", &[])
        .unwrap()
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect();
    assert_eq!(rows, vec![(1, "ONE".to_string()), (2, "TWO".to_string())]);
    let log: Vec<(String, i64)> = c
        .query("select what, n from log order by what", &[])
        .unwrap()
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect();
    let expected = [("ROW ONE", 2), ("ROW TWO", 2), ("STATEMENT ", 2)];
    let expected: Vec<(String, i64)> = expected.iter().map(|(w, n)| (w.to_string(), *n)).collect();
    assert_eq!(log, expected);
}
