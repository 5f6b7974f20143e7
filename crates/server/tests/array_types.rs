//! Arrays through the extended protocol with the `postgres` crate, which
//! asks for binary results and sends binary parameters: array_send and
//! array_recv (ndim, has-null flag, element oid, dimensions with lower
//! bounds, then each element), the array types' oids in RowDescription,
//! and array columns written and read back.

mod support;

use std::error::Error;

use postgres::types::{FromSql, Type};
use support::TestServer;

/// An array value as its raw binary wire bytes.
#[derive(Debug, PartialEq)]
struct Wire(Vec<u8>);

impl<'a> FromSql<'a> for Wire {
    fn from_sql(_: &Type, raw: &'a [u8]) -> Result<Self, Box<dyn Error + Sync + Send>> {
        Ok(Wire(raw.to_vec()))
    }
    fn accepts(ty: &Type) -> bool {
        matches!(ty.kind(), postgres::types::Kind::Array(_))
    }
}

fn be(words: &[i32]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_be_bytes()).collect()
}

#[test]
fn arrays_read_in_binary() {
    let s = TestServer::start();
    let mut c = s.connect();
    let row = c
        .query_one(
            "select '{1,2,3}'::int4[], '{a,NULL,\"b c\"}'::text[], '{}'::int8[], ARRAY[1.5, 2]::float8[]",
            &[],
        )
        .unwrap();
    assert_eq!(row.columns()[0].type_(), &Type::INT4_ARRAY);
    assert_eq!(row.columns()[1].type_(), &Type::TEXT_ARRAY);
    assert_eq!(row.columns()[2].type_(), &Type::INT8_ARRAY);
    assert_eq!(row.columns()[3].type_(), &Type::FLOAT8_ARRAY);
    assert_eq!(row.get::<_, Vec<i32>>(0), vec![1, 2, 3]);
    assert_eq!(
        row.get::<_, Vec<Option<String>>>(1),
        vec![Some("a".to_string()), None, Some("b c".to_string())]
    );
    assert_eq!(row.get::<_, Vec<i64>>(2), Vec::<i64>::new());
    assert_eq!(row.get::<_, Vec<f64>>(3), vec![1.5, 2.0]);

    // Two dimensions with a lower bound of 0: array_send's layout.
    let row = c
        .query_one("select '[0:1][1:2]={{1,NULL},{3,4}}'::int4[]", &[])
        .unwrap();
    let mut want = be(&[2, 1, 23, 2, 0, 2, 1]);
    want.extend(be(&[4, 1, -1, 4, 3, 4, 4]));
    assert_eq!(row.get::<_, Wire>(0), Wire(want));
    // The empty array: no dimensions.
    let row = c.query_one("select '{}'::text[]", &[]).unwrap();
    assert_eq!(row.get::<_, Wire>(0), Wire(be(&[0, 0, 25])));
}

#[test]
fn array_columns_written_with_binary_parameters() {
    let s = TestServer::start();
    let mut c = s.connect();
    c.batch_execute("create table t (id int, a int4[], b text[], n int8[])")
        .unwrap();
    let ints: Vec<i32> = vec![3, -1, i32::MAX];
    let texts: Vec<Option<&str>> = vec![Some("x"), None, Some(""), Some("q\"uote")];
    let nullable: Vec<Option<i64>> = vec![None, Some(7)];
    c.execute(
        "insert into t values (1, $1, $2, $3)",
        &[&ints, &texts, &nullable],
    )
    .unwrap();
    c.execute(
        "insert into t values (2, $1, $2, NULL)",
        &[&Vec::<i32>::new(), &Vec::<Option<&str>>::new()],
    )
    .unwrap();
    let row = c
        .query_one("select a, b, n from t where id = 1", &[])
        .unwrap();
    assert_eq!(row.get::<_, Vec<i32>>(0), ints);
    assert_eq!(
        row.get::<_, Vec<Option<String>>>(1),
        vec![
            Some("x".to_string()),
            None,
            Some(String::new()),
            Some("q\"uote".to_string())
        ]
    );
    assert_eq!(row.get::<_, Vec<Option<i64>>>(2), nullable);
    // The text forms are array_out's.
    let row = c
        .query_one("select a::text, b::text, n::text from t where id = 1", &[])
        .unwrap();
    assert_eq!(row.get::<_, String>(0), "{3,-1,2147483647}");
    assert_eq!(row.get::<_, String>(1), r#"{x,NULL,"","q\"uote"}"#);
    assert_eq!(row.get::<_, String>(2), "{NULL,7}");
    let row = c.query_one("select a, n from t where id = 2", &[]).unwrap();
    assert_eq!(row.get::<_, Vec<i32>>(0), Vec::<i32>::new());
    assert_eq!(row.get::<_, Option<Vec<i64>>>(1), None);

    // Parameters in ANY and array functions.
    let ids: Vec<i32> = vec![2, 9];
    let rows = c
        .query("select id from t where id = any($1) order by id", &[&ids])
        .unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].get::<_, i32>(0), 2);
    let row = c
        .query_one("select array_length($1::int4[], 1)", &[&ids])
        .unwrap();
    assert_eq!(row.get::<_, i32>(0), 2);

    // An array of another element type than the parameter's is refused.
    let err = c
        .query_one("select $1::int4[]", &[&vec![1i64]])
        .unwrap_err();
    assert!(err.to_string().contains("error serializing") || err.as_db_error().is_some());
}
