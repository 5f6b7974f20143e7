//! bytea and uuid through the `postgres` crate, which sends parameters and
//! reads results in binary: round trips of `Vec<u8>` and `uuid::Uuid`
//! through parameters, table columns, indexes and results, the types'
//! oids in RowDescription and inferred parameter types, and the text
//! forms the simple protocol shows.

mod support;

use postgres::types::Type;
use postgres::SimpleQueryMessage;
use support::TestServer;

fn simple_values(client: &mut postgres::Client, sql: &str) -> Vec<Option<String>> {
    client
        .simple_query(sql)
        .unwrap()
        .into_iter()
        .filter_map(|m| match m {
            SimpleQueryMessage::Row(r) => Some(r.get(0).map(str::to_string)),
            _ => None,
        })
        .collect()
}

#[test]
fn bytea_round_trips_in_binary() {
    let server = TestServer::start();
    let mut client = server.connect();
    client
        .batch_execute(
            "create table blobs (id int primary key, b bytea); create index on blobs (b)",
        )
        .unwrap();
    let all_bytes: Vec<u8> = (0..=255).collect();
    let values: Vec<Option<Vec<u8>>> = vec![
        Some(vec![]),
        Some(vec![0]),
        Some(all_bytes.clone()),
        Some(b"\\x41 not hex".to_vec()),
        Some((0..2000).map(|i| (i * 7) as u8).collect()),
        None,
    ];
    let insert = client.prepare("insert into blobs values ($1, $2)").unwrap();
    assert_eq!(insert.params(), &[Type::INT4, Type::BYTEA]);
    for (i, v) in values.iter().enumerate() {
        client.execute(&insert, &[&(i as i32), v]).unwrap();
    }
    let select = client.prepare("select b from blobs where id = $1").unwrap();
    assert_eq!(select.columns()[0].type_(), &Type::BYTEA);
    for (i, v) in values.iter().enumerate() {
        let row = client.query_one(&select, &[&(i as i32)]).unwrap();
        assert_eq!(&row.get::<_, Option<Vec<u8>>>(0), v, "row {i}");
    }
    // The index finds each value by equality, parameters in binary.
    let by_value = client.prepare("select id from blobs where b = $1").unwrap();
    assert_eq!(by_value.params(), &[Type::BYTEA]);
    for (i, v) in values.iter().enumerate().filter(|(_, v)| v.is_some()) {
        let row = client.query_one(&by_value, &[v]).unwrap();
        assert_eq!(row.get::<_, i32>(0), i as i32);
    }
    // Results computed in the query, and a parameter echoed back.
    let row = client
        .query_one(
            "select $1::bytea || '\\x00ff'::bytea, sha256($1), length($1)",
            &[&all_bytes],
        )
        .unwrap();
    let mut joined = all_bytes.clone();
    joined.extend_from_slice(&[0, 0xff]);
    assert_eq!(row.get::<_, Vec<u8>>(0), joined);
    assert_eq!(row.get::<_, Vec<u8>>(1).len(), 32);
    assert_eq!(row.get::<_, i32>(2), 256);

    // bytea_output shapes the text form only.
    assert_eq!(
        simple_values(&mut client, "select b from blobs where id = 1"),
        vec![Some("\\x00".to_string())]
    );
    client.batch_execute("set bytea_output = escape").unwrap();
    assert_eq!(
        simple_values(&mut client, "select b from blobs where id = 1"),
        vec![Some("\\000".to_string())]
    );
    let row = client.query_one(&select, &[&1i32]).unwrap();
    assert_eq!(row.get::<_, Vec<u8>>(0), vec![0]);
}

#[test]
fn uuid_round_trips_in_binary() {
    let server = TestServer::start();
    let mut client = server.connect();
    client
        .batch_execute("create table things (id uuid primary key default gen_random_uuid(), n int)")
        .unwrap();
    let fixed = uuid::Uuid::parse_str("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11").unwrap();
    let insert = client
        .prepare("insert into things values ($1, $2)")
        .unwrap();
    assert_eq!(insert.params(), &[Type::UUID, Type::INT4]);
    client.execute(&insert, &[&fixed, &1i32]).unwrap();
    client
        .execute(&insert, &[&uuid::Uuid::max(), &2i32])
        .unwrap();
    let generated: Vec<uuid::Uuid> = client
        .query(
            "insert into things (n) select g from generate_series(3, 20) g returning id",
            &[],
        )
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert_eq!(generated.len(), 18);
    for u in &generated {
        assert_eq!(u.get_version_num(), 4, "{u}");
        assert_eq!(u.get_variant(), uuid::Variant::RFC4122, "{u}");
    }
    let by_id = client
        .prepare("select n, id from things where id = $1")
        .unwrap();
    assert_eq!(by_id.params(), &[Type::UUID]);
    assert_eq!(by_id.columns()[1].type_(), &Type::UUID);
    let row = client.query_one(&by_id, &[&fixed]).unwrap();
    assert_eq!(row.get::<_, i32>(0), 1);
    assert_eq!(row.get::<_, uuid::Uuid>(1), fixed);
    for (i, u) in generated.iter().enumerate() {
        let row = client.query_one(&by_id, &[u]).unwrap();
        assert_eq!(row.get::<_, i32>(0), i as i32 + 3);
    }
    // Ordered as their bytes: the all-ones uuid last.
    let last: uuid::Uuid = client
        .query_one("select id from things order by id desc limit 1", &[])
        .unwrap()
        .get(0);
    assert_eq!(last, uuid::Uuid::max());
    // The text form is the canonical lower-case one.
    let text: String = client
        .query_one("select $1::uuid::text", &[&fixed])
        .unwrap()
        .get(0);
    assert_eq!(text, "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11");
    let err = client.execute(&insert, &[&fixed, &99i32]).unwrap_err();
    assert_eq!(
        err.code(),
        Some(&postgres::error::SqlState::UNIQUE_VIOLATION)
    );
}

/// A bytea wider than a page is stored (TOASTed) and read back whole in
/// binary, as a text one is.
#[test]
fn wide_bytea_round_trips_like_wide_text() {
    let server = TestServer::start();
    let mut client = server.connect();
    client
        .batch_execute("create table wide (b bytea, t text)")
        .unwrap();
    let big: Vec<u8> = (0..100_000u32).map(|i| (i * 7919 % 251) as u8).collect();
    let text = "x".repeat(100_000);
    client
        .execute("insert into wide values ($1, $2)", &[&big, &text])
        .unwrap();
    let row = client.query_one("select b, t from wide", &[]).unwrap();
    assert!(row.get::<_, Vec<u8>>(0) == big);
    assert!(row.get::<_, String>(1) == text);
}
