//! json and jsonb through the extended protocol with the `postgres` crate,
//! which asks for binary results: jsonb_send (version byte 1, then the
//! text) and jsonb_recv for parameters, the types' oids in RowDescription,
//! and input errors with PostgreSQL's DETAIL and CONTEXT.

mod support;

use std::error::Error;

use postgres::types::{to_sql_checked, FromSql, IsNull, ToSql, Type};
use support::TestServer;

/// A json or jsonb value as its raw binary wire bytes.
#[derive(Debug, PartialEq)]
struct Wire(Vec<u8>);

impl<'a> FromSql<'a> for Wire {
    fn from_sql(_: &Type, raw: &'a [u8]) -> Result<Self, Box<dyn Error + Sync + Send>> {
        Ok(Wire(raw.to_vec()))
    }
    fn accepts(ty: &Type) -> bool {
        *ty == Type::JSON || *ty == Type::JSONB
    }
}

impl ToSql for Wire {
    fn to_sql(
        &self,
        _: &Type,
        out: &mut bytes::BytesMut,
    ) -> Result<IsNull, Box<dyn Error + Sync + Send>> {
        out.extend_from_slice(&self.0);
        Ok(IsNull::No)
    }
    fn accepts(ty: &Type) -> bool {
        *ty == Type::JSON || *ty == Type::JSONB
    }
    to_sql_checked!();
}

/// jsonb_send's form of a text.
fn jsonb(text: &str) -> Wire {
    let mut b = vec![1];
    b.extend_from_slice(text.as_bytes());
    Wire(b)
}

#[test]
fn jsonb_in_binary_both_ways() {
    let s = TestServer::start();
    let mut c = s.connect();
    let row = c
        .query_one(
            r#"select '{"b": [1, 2.50], "a": "x", "a": "y"}'::jsonb, '{"k" :  1}'::json"#,
            &[],
        )
        .unwrap();
    assert_eq!(row.columns()[0].type_(), &Type::JSONB);
    assert_eq!(row.columns()[1].type_(), &Type::JSON);
    assert_eq!(
        row.get::<_, Wire>(0),
        jsonb(r#"{"a": "y", "b": [1, 2.50]}"#)
    );
    // json's binary form is its text, exactly as written.
    assert_eq!(row.get::<_, Wire>(1), Wire(br#"{"k" :  1}"#.to_vec()));

    c.batch_execute("create table j(id int, doc jsonb)")
        .unwrap();
    let insert = c.prepare("insert into j values ($1, $2)").unwrap();
    assert_eq!(insert.params()[1], Type::JSONB);
    for (i, doc) in [
        r#"{"n": 2, "tags": ["x"]}"#,
        r#"{"n": 1}"#,
        "[1, 2]",
        "null",
    ]
    .iter()
    .enumerate()
    {
        c.execute(&insert, &[&(i as i32), &jsonb(doc)]).unwrap();
    }
    let rows = c
        .query(
            "select doc, doc ->> 'n' from j where doc @> $1 order by doc",
            &[&jsonb("{}")],
        )
        .unwrap();
    let got: Vec<(Wire, Option<String>)> = rows.iter().map(|r| (r.get(0), r.get(1))).collect();
    assert_eq!(
        got,
        vec![
            (jsonb(r#"{"n": 1}"#), Some("1".into())),
            (jsonb(r#"{"n": 2, "tags": ["x"]}"#), Some("2".into())),
        ]
    );
    let agg: Wire = c
        .query_one("select jsonb_agg(doc) from j where id = 2", &[])
        .unwrap()
        .get(0);
    assert_eq!(agg, jsonb("[[1, 2]]"));

    // A version other than 1 is refused, as jsonb_recv does.
    let err = c
        .execute(&insert, &[&9i32, &Wire(b"\x02{}".to_vec())])
        .unwrap_err();
    let db = err.as_db_error().expect("a server error");
    assert_eq!(db.code().code(), "22P03");
    assert_eq!(db.message(), "unsupported jsonb version number 2");
}

#[test]
fn json_input_errors_carry_detail_and_context() {
    let s = TestServer::start();
    let mut c = s.connect();
    let err = c
        .query_one("select '{\"a\": 1,\n \"b\":}'::jsonb", &[])
        .unwrap_err();
    let db = err.as_db_error().expect("a server error");
    assert_eq!(db.code().code(), "22P02");
    assert_eq!(db.message(), "invalid input syntax for type json");
    assert_eq!(db.detail(), Some("Expected JSON value, but found \"}\"."));
    assert_eq!(db.where_(), Some("JSON data, line 2:  \"b\":}"));

    let err = c.query_one("select '\"\\u0000\"'::jsonb", &[]).unwrap_err();
    let db = err.as_db_error().expect("a server error");
    assert_eq!(db.code().code(), "22P05");
    assert_eq!(db.detail(), Some("\\u0000 cannot be converted to text."));
}
