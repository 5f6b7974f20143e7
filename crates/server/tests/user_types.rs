//! User-defined enum types through a real driver and across a restart: the
//! `postgres` crate reads an enum column in binary (enum_send: the label's
//! text), looks the type up by its RowDescription oid in pg_type and
//! pg_enum (its labels in sort order), and sends an enum parameter in
//! binary (enum_recv); an enum type, its labels (one added BEFORE another)
//! and the column values survive a restart. Domains: COPY FROM checks a
//! domain column's values, and a domain (its NOT NULL, DEFAULT and CHECKs)
//! survives a restart.

mod support;

use std::error::Error;

use postgres::types::{FromSql, IsNull, Kind, ToSql, Type};
use support::TestServer;

/// An enum value as its label, in either direction.
#[derive(Debug, PartialEq)]
struct Label(String);

impl<'a> FromSql<'a> for Label {
    fn from_sql(_: &Type, raw: &'a [u8]) -> Result<Label, Box<dyn Error + Sync + Send>> {
        Ok(Label(std::str::from_utf8(raw)?.to_string()))
    }
    fn accepts(ty: &Type) -> bool {
        matches!(ty.kind(), Kind::Enum(_))
    }
}

impl ToSql for Label {
    fn to_sql(
        &self,
        _: &Type,
        out: &mut bytes::BytesMut,
    ) -> Result<IsNull, Box<dyn Error + Sync + Send>> {
        out.extend_from_slice(self.0.as_bytes());
        Ok(IsNull::No)
    }
    fn accepts(ty: &Type) -> bool {
        matches!(ty.kind(), Kind::Enum(_))
    }
    postgres::types::to_sql_checked!();
}

#[test]
fn enum_column_reads_and_writes_in_binary() {
    let server = TestServer::start();
    let mut client = server.connect();
    client
        .batch_execute(
            "create type mood as enum ('sad', 'ok', 'happy');
             alter type mood add value 'meh' before 'ok';
             create table person (id int, m mood);
             insert into person values (1, 'happy'), (2, 'sad'), (3, null)",
        )
        .unwrap();
    let rows = client
        .query("select id, m from person order by m", &[])
        .unwrap();
    let ty = rows[0].columns()[1].type_();
    assert_eq!(ty.name(), "mood");
    assert_eq!(ty.schema(), "public");
    match ty.kind() {
        Kind::Enum(labels) => assert_eq!(labels, &["sad", "meh", "ok", "happy"]),
        other => panic!("mood is not an enum to the driver: {other:?}"),
    }
    let got: Vec<(i32, Option<Label>)> = rows.iter().map(|r| (r.get(0), r.get(1))).collect();
    assert_eq!(
        got,
        vec![
            (2, Some(Label("sad".into()))),
            (1, Some(Label("happy".into()))),
            (3, None)
        ]
    );
    // A binary parameter of the enum type, inferred from the column.
    client
        .execute("insert into person values (4, $1)", &[&Label("meh".into())])
        .unwrap();
    let row = client
        .query_one(
            "select id from person where m = $1",
            &[&Label("meh".into())],
        )
        .unwrap();
    assert_eq!(row.get::<_, i32>(0), 4);
    let err = client
        .execute(
            "insert into person values (5, $1)",
            &[&Label("angry".into())],
        )
        .unwrap_err();
    assert_eq!(err.code().map(|c| c.code()), Some("22P02"));
}

#[test]
fn enum_type_survives_restart() {
    let mut server = TestServer::start();
    let mut client = server.connect();
    client
        .batch_execute(
            "create type color as enum ('red', 'green');
             alter type color add value 'blue' before 'green';
             create table paint (c color primary key);
             insert into paint values ('green'), ('red'), ('blue')",
        )
        .unwrap();
    drop(client);
    server.restart();
    let mut client = server.connect();
    let labels: Vec<String> = client
        .simple_query("select c from paint order by c")
        .unwrap()
        .into_iter()
        .filter_map(|m| match m {
            postgres::SimpleQueryMessage::Row(r) => r.get(0).map(str::to_string),
            _ => None,
        })
        .collect();
    assert_eq!(labels, ["red", "blue", "green"]);
    client
        .batch_execute("alter type color add value 'yellow'; insert into paint values ('yellow')")
        .unwrap();
    let n: i64 = client
        .query_one("select count(*) from paint where c > 'blue'", &[])
        .unwrap()
        .get(0);
    assert_eq!(n, 2);
}

#[test]
fn copy_from_checks_domain_columns() {
    use std::io::Write;
    let server = TestServer::start();
    let mut c = server.connect();
    c.batch_execute(
        "create domain posint as int check (value > 0);
         create table counts (id int, n posint)",
    )
    .unwrap();
    let mut w = c.copy_in("copy counts from stdin").unwrap();
    w.write_all(b"1\t5\n2\t-1\n").unwrap();
    let err = w
        .finish()
        .expect_err("a value the domain rejects fails the COPY");
    let db = err.as_db_error().expect("a server error");
    assert_eq!(db.code().code(), "23514");
    assert_eq!(
        db.message(),
        "value for domain posint violates check constraint \"posint_check\""
    );
    assert_eq!(db.where_(), Some("COPY counts, line 2, column n: \"-1\""));
    let mut w = c.copy_in("copy counts from stdin").unwrap();
    w.write_all(b"1\t5\n2\t\\N\n").unwrap();
    assert_eq!(w.finish().unwrap(), 2);
}

#[test]
fn domain_survives_restart() {
    let mut server = TestServer::start();
    let mut client = server.connect();
    client
        .batch_execute(
            "create domain code as text not null default 'none'
                 constraint code_short check (length(value) < 5);
             alter domain code add check (value <> 'bad');
             create table items (id int, c code);
             insert into items (id) values (1)",
        )
        .unwrap();
    drop(client);
    server.restart();
    let mut client = server.connect();
    let code = |client: &mut postgres::Client, sql: &str| {
        client
            .batch_execute(sql)
            .unwrap_err()
            .code()
            .map(|c| c.code().to_string())
    };
    assert_eq!(
        code(&mut client, "insert into items values (2, 'toolong')").as_deref(),
        Some("23514")
    );
    assert_eq!(
        code(&mut client, "insert into items values (2, 'bad')").as_deref(),
        Some("23514")
    );
    assert_eq!(
        code(&mut client, "insert into items values (2, null)").as_deref(),
        Some("23502")
    );
    client
        .batch_execute("insert into items (id) values (3)")
        .unwrap();
    let rows: Vec<String> = client
        .query("select c from items order by id", &[])
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert_eq!(rows, ["none", "none"]);
    let checks: i64 = client
        .query_one(
            "select count(*) from pg_constraint where contypid = 'code'::regtype",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(checks, 2);
}
