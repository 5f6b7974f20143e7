//! DateStyle from the startup packet (what PGDATESTYLE makes libpq send, as
//! pg_regress does with `Postgres, MDY`) and from `options`, the errors'
//! DETAIL and HINT lines, and the binary format, which no DateStyle touches.
//! The text results are PostgreSQL 15's.

mod support;

use postgres::SimpleQueryMessage;
use support::TestServer;

/// The first row of a simple query, each column as text.
fn first_row(c: &mut postgres::Client, q: &str) -> Vec<String> {
    c.simple_query(q)
        .unwrap()
        .into_iter()
        .find_map(|m| match m {
            SimpleQueryMessage::Row(r) => Some(
                (0..r.len())
                    .map(|i| r.get(i).unwrap_or("NULL").to_string())
                    .collect(),
            ),
            _ => None,
        })
        .expect("a row")
}

/// A binary result as its bytes.
struct Raw(Vec<u8>);

impl<'a> postgres::types::FromSql<'a> for Raw {
    fn from_sql(
        _: &postgres::types::Type,
        raw: &'a [u8],
    ) -> Result<Self, Box<dyn std::error::Error + Sync + Send>> {
        Ok(Raw(raw.to_vec()))
    }

    fn accepts(_: &postgres::types::Type) -> bool {
        true
    }
}

const SAMPLE: &str = "select '2026-11-24 12:00'::timestamptz, '2026-11-24'::date, \
     '2026-11-24 12:00:00.5'::timestamp, '01/02/2003'::date::text";

#[test]
fn psql_with_pgdatestyle_gets_postgres_style() {
    let s = TestServer::start();
    let mut cmd = s.psql_command();
    cmd.env("PGDATESTYLE", "Postgres, MDY")
        .env("PGTZ", "America/Los_Angeles")
        .args(["-q", "-F", "|", "-c", "show datestyle", "-c", SAMPLE])
        // The startup value is what RESET and DEFAULT return to.
        .args(["-c", "set datestyle = 'iso, dmy'", "-c", "reset datestyle"])
        .args(["-c", "show datestyle", "-c", "set datestyle = 'sql, ymd'"])
        .args([
            "-c",
            "set datestyle = 'german, default'",
            "-c",
            "show datestyle",
        ])
        .args(["-c", "set datestyle to default", "-c", "show datestyle"])
        .args([
            "-c",
            "set datestyle = iso",
            "-c",
            "reset all",
            "-c",
            "show datestyle",
        ])
        .args(["-c", "select set_config('datestyle', 'sql', false)"]);
    let out = s.run_psql(cmd);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "Postgres, MDY\n\
         Tue Nov 24 12:00:00 2026 PST|11-24-2026|Tue Nov 24 12:00:00.5 2026|01-02-2003\n\
         Postgres, MDY\n\
         German, MDY\n\
         Postgres, MDY\n\
         Postgres, MDY\n\
         SQL, MDY\n"
    );
}

#[test]
fn a_bad_startup_datestyle_is_fatal_with_the_reason() {
    let s = TestServer::start();
    let mut cmd = s.psql_command();
    cmd.env("PGDATESTYLE", "Postgres, Bogus")
        .args(["-c", "select 1"]);
    let out = s.run_psql(cmd);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("FATAL:  invalid value for parameter \"DateStyle\": \"Postgres, Bogus\"")
            && err.contains("DETAIL:  Unrecognized key word: \"bogus\"."),
        "{err}"
    );
}

#[test]
fn options_set_the_style_and_binary_output_ignores_it() {
    let s = TestServer::start();
    let mut cfg = s.config();
    cfg.options("-c DateStyle=SQL,\\ DMY -c TimeZone=Europe/Paris");
    let mut c = cfg.connect(postgres::NoTls).unwrap();
    assert_eq!(
        first_row(&mut c, "show datestyle"),
        ["SQL, DMY"],
        "the canonical form"
    );
    assert_eq!(
        first_row(&mut c, SAMPLE),
        [
            "24/11/2026 12:00:00 CET",
            "24/11/2026",
            "24/11/2026 12:00:00.5",
            "01/02/2003"
        ]
    );
    // The extended protocol's binary results are the values, whatever the style.
    let row = c
        .query_one(
            "select '02/01/2003'::date, '02/01/2003 04:05:06'::timestamp",
            &[],
        )
        .unwrap();
    let (d, ts): (Raw, Raw) = (row.get(0), row.get(1));
    // Days and microseconds since 2000-01-01: 2003-01-02 and 04:05:06 on it.
    assert_eq!(d.0, 1097i32.to_be_bytes());
    assert_eq!(ts.0, 94_795_506_000_000i64.to_be_bytes());
    // A style change is reported to the client (DateStyle is GUC_REPORT).
    c.batch_execute("set datestyle = german").unwrap();
    assert_eq!(
        first_row(&mut c, "select '2003-01-02'::date"),
        ["02.01.2003"]
    );
}

#[test]
fn errors_carry_postgresql_detail_and_hint() {
    let s = TestServer::start();
    let mut c = s.connect();
    let e = c.batch_execute("set datestyle = 'iso, sql'").unwrap_err();
    let db = e.as_db_error().unwrap();
    assert_eq!(db.code().code(), "22023");
    assert_eq!(
        db.message(),
        "invalid value for parameter \"DateStyle\": \"iso, sql\""
    );
    assert_eq!(
        db.detail(),
        Some("Conflicting \"datestyle\" specifications.")
    );
    let e = c.batch_execute("set datestyle = 'iso dmy'").unwrap_err();
    assert_eq!(
        e.as_db_error().unwrap().detail(),
        Some("List syntax is invalid.")
    );
    // A month or day out of range hints at the field order; Feb 30 does not.
    let e = c.batch_execute("select '13/01/2003'::date").unwrap_err();
    let db = e.as_db_error().unwrap();
    assert_eq!(db.code().code(), "22008");
    assert_eq!(
        db.hint(),
        Some("Perhaps you need a different \"datestyle\" setting.")
    );
    c.batch_execute("set datestyle = dmy").unwrap();
    assert_eq!(
        first_row(&mut c, "select '13/01/2003'::date"),
        ["2003-01-13"]
    );
    let e = c.batch_execute("select '30/02/2003'::date").unwrap_err();
    let db = e.as_db_error().unwrap();
    assert_eq!(
        db.message(),
        "date/time field value out of range: \"30/02/2003\""
    );
    assert_eq!(db.hint(), None);
}
