//! The extended query protocol through the `postgres` crate, which sends
//! parameters and receives results in binary format: parameter type inference,
//! value round trips, prepared statement reuse, and errors.

mod support;

use std::error::Error;

use bytes::{BufMut, BytesMut};
use postgres::error::SqlState;
use postgres::types::{to_sql_checked, FromSql, IsNull, ToSql, Type};
use support::TestServer;

type BoxError = Box<dyn Error + Sync + Send>;

// --- date: binary format is i32 days since 2000-01-01 ------------------------------

/// A date in PostgreSQL's binary format (the postgres crate has no date type
/// without its chrono/time features).
#[derive(Debug, Clone, Copy, PartialEq)]
struct PgDate(i32);

/// Days since 1970-01-01 of a proleptic Gregorian date.
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146097 + doe - 719468
}

impl PgDate {
    fn ymd(y: i64, m: i64, d: i64) -> PgDate {
        PgDate((days_from_civil(y, m, d) - days_from_civil(2000, 1, 1)) as i32)
    }
}

impl ToSql for PgDate {
    fn to_sql(&self, _: &Type, out: &mut BytesMut) -> Result<IsNull, BoxError> {
        out.put_i32(self.0);
        Ok(IsNull::No)
    }
    fn accepts(ty: &Type) -> bool {
        *ty == Type::DATE
    }
    to_sql_checked!();
}

impl<'a> FromSql<'a> for PgDate {
    fn from_sql(_: &Type, raw: &'a [u8]) -> Result<PgDate, BoxError> {
        let b: [u8; 4] = raw
            .try_into()
            .map_err(|_| format!("date of {} bytes", raw.len()))?;
        Ok(PgDate(i32::from_be_bytes(b)))
    }
    fn accepts(ty: &Type) -> bool {
        *ty == Type::DATE
    }
}

// --- numeric: binary format is ndigits, weight, sign, dscale, base-10000 digits ----

/// A numeric value carried as its decimal text, converted to and from
/// PostgreSQL's binary numeric format.
#[derive(Debug, Clone, PartialEq)]
struct PgNumeric(String);

fn encode_numeric(s: &str) -> Result<Vec<u8>, BoxError> {
    let (neg, body) = match s.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, s),
    };
    let (int, frac) = body.split_once('.').unwrap_or((body, ""));
    if int.is_empty() || !int.bytes().chain(frac.bytes()).all(|b| b.is_ascii_digit()) {
        return Err(format!("not a plain decimal: {s:?}").into());
    }
    let dscale = frac.len() as u16;
    let int_pad = (4 - int.len() % 4) % 4;
    let int_digits = format!("{}{}", "0".repeat(int_pad), int);
    let frac_pad = (4 - frac.len() % 4) % 4;
    let frac_digits = format!("{}{}", frac, "0".repeat(frac_pad));
    let group = |chunk: &[u8]| std::str::from_utf8(chunk).unwrap().parse::<i16>().unwrap();
    let mut digits: Vec<i16> = int_digits.as_bytes().chunks(4).map(group).collect();
    let mut weight = digits.len() as i16 - 1;
    digits.extend(frac_digits.as_bytes().chunks(4).map(group));
    while digits.first() == Some(&0) {
        digits.remove(0);
        weight -= 1;
    }
    while digits.last() == Some(&0) {
        digits.pop();
    }
    let (sign, weight) = if digits.is_empty() {
        (0u16, 0i16)
    } else {
        (if neg { 0x4000u16 } else { 0 }, weight)
    };
    let mut out = Vec::new();
    out.extend((digits.len() as i16).to_be_bytes());
    out.extend(weight.to_be_bytes());
    out.extend(sign.to_be_bytes());
    out.extend(dscale.to_be_bytes());
    for d in digits {
        out.extend(d.to_be_bytes());
    }
    Ok(out)
}

fn decode_numeric(raw: &[u8]) -> Result<String, BoxError> {
    let word = |i: usize| -> Result<i16, BoxError> {
        raw.get(i * 2..i * 2 + 2)
            .map(|b| i16::from_be_bytes([b[0], b[1]]))
            .ok_or_else(|| format!("numeric value truncated: {raw:?}").into())
    };
    let ndigits = word(0)? as usize;
    let weight = word(1)? as i64;
    let sign = word(2)? as u16;
    let dscale = word(3)? as u16 as usize;
    if raw.len() != 8 + 2 * ndigits {
        return Err(format!("numeric with {ndigits} digits has {} bytes", raw.len()).into());
    }
    match sign {
        0xC000 => return Ok("NaN".into()),
        0x0000 | 0x4000 => {}
        other => return Err(format!("bad numeric sign word {other:#x}").into()),
    }
    let digits: Vec<i16> = (0..ndigits)
        .map(|i| word(4 + i))
        .collect::<Result<_, _>>()?;
    let digit_at = |i: i64| -> i16 {
        if i >= 0 && (i as usize) < digits.len() {
            digits[i as usize]
        } else {
            0
        }
    };
    let mut s = String::new();
    if sign == 0x4000 && !digits.is_empty() {
        s.push('-');
    }
    if weight < 0 {
        s.push('0');
    } else {
        s.push_str(&digit_at(0).to_string());
        for i in 1..=weight {
            s.push_str(&format!("{:04}", digit_at(i)));
        }
    }
    if dscale > 0 {
        let mut frac = String::new();
        let mut i = weight + 1;
        while frac.len() < dscale {
            frac.push_str(&format!("{:04}", digit_at(i)));
            i += 1;
        }
        frac.truncate(dscale);
        s.push('.');
        s.push_str(&frac);
    }
    Ok(s)
}

impl ToSql for PgNumeric {
    fn to_sql(&self, _: &Type, out: &mut BytesMut) -> Result<IsNull, BoxError> {
        out.extend_from_slice(&encode_numeric(&self.0)?);
        Ok(IsNull::No)
    }
    fn accepts(ty: &Type) -> bool {
        *ty == Type::NUMERIC
    }
    to_sql_checked!();
}

impl<'a> FromSql<'a> for PgNumeric {
    fn from_sql(_: &Type, raw: &'a [u8]) -> Result<PgNumeric, BoxError> {
        Ok(PgNumeric(decode_numeric(raw)?))
    }
    fn accepts(ty: &Type) -> bool {
        *ty == Type::NUMERIC
    }
}

#[test]
fn numeric_codec_round_trips() {
    // The test's own codec, checked without a server.
    for v in [
        "0",
        "1",
        "-1.5",
        "12345.6789",
        "0.0001",
        "10000",
        "-0.00012300",
        "100000000000000000000.000001",
        "99999999.99",
    ] {
        let enc = encode_numeric(v).unwrap();
        assert_eq!(
            decode_numeric(&enc).unwrap(),
            v,
            "numeric codec round trip of {v}"
        );
    }
}

// --- tests against the server --------------------------------------------------------

fn code_of(e: &postgres::Error) -> String {
    e.code()
        .map(|c| c.code().to_string())
        .unwrap_or_else(|| format!("no SQLSTATE ({e:?})"))
}

#[test]
fn binary_parameters_and_results_round_trip() {
    let s = TestServer::start();
    let mut c = s.connect();

    // Casts give the parameter types.
    let row = c
        .query_one(
            "select $1::int4, $2::int8, $3::text, $4::float8, $5::bool, $6::date",
            &[
                &i32::MIN,
                &i64::MAX,
                &"héllo wörld ✓",
                &-2.5e-3f64,
                &true,
                &PgDate::ymd(2024, 2, 29),
            ],
        )
        .expect("select of cast parameters");
    let types: Vec<Type> = row.columns().iter().map(|c| c.type_().clone()).collect();
    assert_eq!(
        types,
        vec![
            Type::INT4,
            Type::INT8,
            Type::TEXT,
            Type::FLOAT8,
            Type::BOOL,
            Type::DATE
        ],
        "result column types of `select $1::int4, ..., $6::date`"
    );
    assert_eq!(row.get::<_, i32>(0), i32::MIN);
    assert_eq!(row.get::<_, i64>(1), i64::MAX);
    assert_eq!(row.get::<_, String>(2), "héllo wörld ✓");
    assert_eq!(row.get::<_, f64>(3), -2.5e-3);
    assert!(row.get::<_, bool>(4));
    assert_eq!(row.get::<_, PgDate>(5), PgDate::ymd(2024, 2, 29));

    // Binary date parameter, text output of the date.
    let text: String = c
        .query_one("select $1::date::text", &[&PgDate::ymd(1999, 12, 31)])
        .expect("select $1::date::text")
        .get(0);
    assert_eq!(text, "1999-12-31", "date sent in binary, cast to text");

    // Numeric as text, cast on the server; result in binary.
    let n: PgNumeric = c
        .query_one("select ($1::text)::numeric * 2", &[&"1234.5678"])
        .expect("select ($1::text)::numeric * 2")
        .get(0);
    assert_eq!(
        n,
        PgNumeric("2469.1356".into()),
        "numeric computed from a text parameter"
    );
}

#[test]
fn parameter_types_are_inferred_from_columns() {
    let s = TestServer::start();
    let mut c = s.connect();
    c.batch_execute(
        "create table p (i int4, b int8, t text, f float8, ok bool, d date, n numeric)",
    )
    .expect("create table p");
    let ins = c
        .prepare("insert into p values ($1, $2, $3, $4, $5, $6, $7)")
        .expect("prepare insert with 7 parameters");
    assert_eq!(
        ins.params(),
        &[
            Type::INT4,
            Type::INT8,
            Type::TEXT,
            Type::FLOAT8,
            Type::BOOL,
            Type::DATE,
            Type::NUMERIC
        ],
        "parameter types inferred from the target columns"
    );
    assert!(
        ins.columns().is_empty(),
        "an INSERT returns no columns (NoData)"
    );

    let numerics = [
        "0",
        "-1.5",
        "12345.6789",
        "0.0001",
        "100000000000000000000.000001",
    ];
    for (k, n) in numerics.iter().enumerate() {
        let k = k as i32;
        let affected = c
            .execute(
                &ins,
                &[
                    &k,
                    &(k as i64 * 1_000_000_000_000),
                    &format!("row {k}"),
                    &(k as f64 / 4.0),
                    &(k % 2 == 0),
                    &PgDate::ymd(1970 + k as i64, 1 + k as i64, 1),
                    &PgNumeric(n.to_string()),
                ],
            )
            .expect("execute prepared insert");
        assert_eq!(affected, 1, "rows affected by one INSERT");
    }
    // All NULLs.
    let none: [&(dyn ToSql + Sync); 7] = [
        &None::<i32>,
        &None::<i64>,
        &None::<String>,
        &None::<f64>,
        &None::<bool>,
        &None::<PgDate>,
        &None::<PgNumeric>,
    ];
    c.execute(&ins, &none).expect("insert of NULL parameters");

    let sel = c
        .prepare("select i, b, t, f, ok, d, n, n::text from p where i = $1")
        .expect("prepare select with an inferred parameter");
    assert_eq!(
        sel.params(),
        &[Type::INT4],
        "type of $1 in `where i = $1` (i is int4)"
    );
    for (k, n) in numerics.iter().enumerate() {
        let k = k as i32;
        let row = c.query_one(&sel, &[&k]).expect("query prepared select");
        assert_eq!(row.get::<_, i32>(0), k);
        assert_eq!(row.get::<_, i64>(1), k as i64 * 1_000_000_000_000);
        assert_eq!(row.get::<_, String>(2), format!("row {k}"));
        assert_eq!(row.get::<_, f64>(3), k as f64 / 4.0);
        assert_eq!(row.get::<_, bool>(4), k % 2 == 0);
        assert_eq!(
            row.get::<_, PgDate>(5),
            PgDate::ymd(1970 + k as i64, 1 + k as i64, 1)
        );
        assert_eq!(
            row.get::<_, PgNumeric>(6).0,
            *n,
            "numeric read back in binary"
        );
        assert_eq!(row.get::<_, String>(7), *n, "numeric read back as text");
    }
    let row = c
        .query_one("select i, b, t, f, ok, d, n from p where i is null", &[])
        .expect("select the NULL row");
    assert_eq!(row.get::<_, Option<i32>>(0), None);
    assert_eq!(row.get::<_, Option<i64>>(1), None);
    assert_eq!(row.get::<_, Option<String>>(2), None);
    assert_eq!(row.get::<_, Option<f64>>(3), None);
    assert_eq!(row.get::<_, Option<bool>>(4), None);
    assert_eq!(row.get::<_, Option<PgDate>>(5), None);
    assert_eq!(row.get::<_, Option<PgNumeric>>(6), None);
}

#[test]
fn prepared_statements_are_reused() {
    let s = TestServer::start();
    let mut c = s.connect();
    c.batch_execute("create table kv (k int, v text)")
        .expect("create table kv");
    let ins = c
        .prepare("insert into kv values ($1, $2)")
        .expect("prepare insert");
    for k in 0..100i32 {
        let n = c
            .execute(&ins, &[&k, &format!("v{k}")])
            .unwrap_or_else(|e| panic!("execution {k} of the prepared insert: {e:?}"));
        assert_eq!(
            n, 1,
            "rows affected by execution {k} of the prepared insert"
        );
    }
    let sel = c
        .prepare("select v from kv where k = $1")
        .expect("prepare select");
    let upd = c
        .prepare("update kv set v = $2 where k = $1")
        .expect("prepare update");
    for k in (0..100i32).step_by(7) {
        let v: String = c.query_one(&sel, &[&k]).expect("prepared select").get(0);
        assert_eq!(v, format!("v{k}"));
        assert_eq!(
            c.execute(&upd, &[&k, &"changed"]).expect("prepared update"),
            1
        );
        let v: String = c
            .query_one(&sel, &[&k])
            .expect("prepared select after update")
            .get(0);
        assert_eq!(v, "changed", "value of k={k} after the prepared update");
    }
    let count: i64 = c.query_one("select count(*) from kv", &[]).unwrap().get(0);
    assert_eq!(count, 100, "count(*) after 100 prepared inserts");

    // Statements stay valid across transactions.
    let mut tx = c.transaction().expect("begin");
    tx.execute(&ins, &[&1000i32, &"in tx"])
        .expect("prepared insert inside a transaction");
    tx.rollback().expect("rollback");
    assert!(
        c.query_opt(&sel, &[&1000i32])
            .expect("prepared select after rollback")
            .is_none(),
        "a rolled-back insert must not be visible"
    );
    let mut tx = c.transaction().expect("begin");
    tx.execute(&ins, &[&1001i32, &"committed"])
        .expect("prepared insert inside a transaction");
    tx.commit().expect("commit");
    let v: String = c
        .query_one(&sel, &[&1001i32])
        .expect("select committed row")
        .get(0);
    assert_eq!(v, "committed");

    // Many short-lived statements (each is closed when dropped).
    for i in 0..200i32 {
        let st = c
            .prepare("select $1::int4 + 1")
            .expect("prepare short-lived statement");
        let v: i32 = c
            .query_one(&st, &[&i])
            .expect("run short-lived statement")
            .get(0);
        assert_eq!(v, i + 1);
    }
    // Unnamed statements through query() with parameters.
    for i in 0..50i64 {
        let v: i64 = c.query_one("select $1::int8 * 2", &[&i]).unwrap().get(0);
        assert_eq!(v, i * 2);
    }
}

#[test]
fn errors_have_sqlstates_and_the_connection_survives() {
    let s = TestServer::start();
    let mut c = s.connect();
    c.batch_execute("create table e (id int not null)")
        .expect("create table e");

    // Error at Parse.
    let err = c
        .query("select * from no_such_table", &[])
        .expect_err("unknown table must fail");
    assert_eq!(
        err.code(),
        Some(&SqlState::UNDEFINED_TABLE),
        "unknown table: {err:?}"
    );
    assert_eq!(
        c.query_one("select 1", &[]).unwrap().get::<_, i32>(0),
        1,
        "after 42P01"
    );

    let err = c
        .prepare("selec 1")
        .expect_err("syntax error must fail at prepare");
    assert_eq!(code_of(&err), "42601", "syntax error at Parse: {err:?}");
    assert_eq!(
        c.query_one("select 2", &[]).unwrap().get::<_, i32>(0),
        2,
        "after 42601"
    );

    // Error at Execute, with a parameter.
    let div = c.prepare("select 10 / $1::int4").expect("prepare division");
    let err = c
        .query_one(&div, &[&0i32])
        .expect_err("division by zero must fail");
    assert_eq!(
        err.code(),
        Some(&SqlState::DIVISION_BY_ZERO),
        "10 / 0: {err:?}"
    );
    let v: i32 = c
        .query_one(&div, &[&5i32])
        .expect("same statement after its error")
        .get(0);
    assert_eq!(v, 2);

    let err = c
        .execute("insert into e values ($1)", &[&None::<i32>])
        .expect_err("NULL into a NOT NULL column must fail");
    assert_eq!(
        err.code(),
        Some(&SqlState::NOT_NULL_VIOLATION),
        "NOT NULL: {err:?}"
    );
    let count: i64 = c.query_one("select count(*) from e", &[]).unwrap().get(0);
    assert_eq!(
        count, 0,
        "the failed insert must not have inserted anything"
    );

    // In a transaction block an error aborts the block until ROLLBACK.
    let mut tx = c.transaction().expect("begin");
    tx.execute("insert into e values (1)", &[])
        .expect("insert in transaction");
    let err = tx
        .query("select * from no_such_table", &[])
        .expect_err("error inside a block");
    assert_eq!(err.code(), Some(&SqlState::UNDEFINED_TABLE), "{err:?}");
    let err = tx
        .query("select 1", &[])
        .expect_err("a statement after an error in a transaction block must fail");
    assert_eq!(
        err.code(),
        Some(&SqlState::IN_FAILED_SQL_TRANSACTION),
        "statement in a failed transaction block: {err:?}"
    );
    tx.rollback().expect("rollback of the failed block");
    let count: i64 = c.query_one("select count(*) from e", &[]).unwrap().get(0);
    assert_eq!(count, 0, "the insert of the rolled-back block must be gone");
    c.execute("insert into e values (2)", &[])
        .expect("insert after the rollback");
    let count: i64 = c.query_one("select count(*) from e", &[]).unwrap().get(0);
    assert_eq!(count, 1);
}

/// A WITH holding data-modifying statements, prepared with parameters:
/// Describe reports the main statement's columns, each sub-statement runs
/// once (also when nothing reads it), the command tag is the main one's.
#[test]
fn data_modifying_with_runs_through_the_extended_protocol() {
    let s = TestServer::start();
    let mut c = s.connect();
    c.batch_execute(
        "create table q (id int primary key, v text);
         insert into q values (1, 'a'), (2, 'b'), (3, 'c');
         create table q_log (id int, v text)",
    )
    .expect("setup");
    let moved = c
        .prepare("with d as (delete from q where id >= $1 returning id, v) insert into q_log select * from d")
        .expect("prepare WITH DELETE ... INSERT");
    assert!(
        moved.columns().is_empty(),
        "an INSERT without RETURNING has no columns"
    );
    assert_eq!(
        c.execute(&moved, &[&2i32]).expect("run it"),
        2,
        "rows inserted"
    );
    let changed = c
        .prepare("with u as (update q set v = $1 returning id, v) select id, v from u")
        .expect("prepare WITH UPDATE ... SELECT");
    assert_eq!(changed.columns().len(), 2, "the main query's columns");
    let rows = c.query(&changed, &[&"z"]).expect("run it");
    let got: Vec<(i32, String)> = rows.iter().map(|r| (r.get(0), r.get(1))).collect();
    assert_eq!(got, vec![(1, "z".to_string())]);
    let before: i64 = c
        .query_one(
            "with d as (delete from q_log) select count(*) from q_log",
            &[],
        )
        .expect("unread DELETE in WITH")
        .get(0);
    assert_eq!(before, 2, "the main query sees the table as it was");
    let after: i64 = c
        .query_one("select count(*) from q_log", &[])
        .unwrap()
        .get(0);
    assert_eq!(after, 0, "the unread DELETE ran all the same");
}
