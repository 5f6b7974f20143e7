//! inet, cidr, macaddr, macaddr8 and money in binary through the `postgres`
//! crate (which reads results and sends parameters in binary): PostgreSQL's
//! send/recv layouts (inet: family 2/3, bits, is_cidr, length, address;
//! money: int8 cents), the types' OIDs in RowDescription, recv's checks, and
//! round trips through a table with an index.

mod support;

use std::error::Error;

use bytes::{BufMut, BytesMut};
use postgres::types::{to_sql_checked, FromSql, IsNull, ToSql, Type};
use support::TestServer;

type BoxError = Box<dyn Error + Sync + Send>;

/// A value's binary form as sent, of any type.
#[derive(Debug, Clone, PartialEq)]
struct Raw(Vec<u8>);

impl<'a> FromSql<'a> for Raw {
    fn from_sql(_: &Type, raw: &'a [u8]) -> Result<Raw, BoxError> {
        Ok(Raw(raw.to_vec()))
    }
    fn accepts(_: &Type) -> bool {
        true
    }
}

impl ToSql for Raw {
    fn to_sql(&self, _: &Type, out: &mut BytesMut) -> Result<IsNull, BoxError> {
        out.put_slice(&self.0);
        Ok(IsNull::No)
    }
    fn accepts(_: &Type) -> bool {
        true
    }
    to_sql_checked!();
}

fn one(c: &mut postgres::Client, sql: &str) -> (u32, Vec<u8>) {
    let stmt = c.prepare(sql).unwrap();
    let oid = stmt.columns()[0].type_().oid();
    let row = c.query_one(&stmt, &[]).unwrap();
    let v: Raw = row.get(0);
    (oid, v.0)
}

#[test]
fn network_and_money_binary_results() {
    let s = TestServer::start();
    let mut c = s.connect();
    assert_eq!(
        one(&mut c, "select '192.168.1.5/24'::inet"),
        (869, vec![2, 24, 0, 4, 192, 168, 1, 5])
    );
    assert_eq!(
        one(&mut c, "select '10.0.0.0/8'::cidr"),
        (650, vec![2, 8, 1, 4, 10, 0, 0, 0])
    );
    let mut v6 = vec![3, 128, 0, 16];
    v6.extend_from_slice(&[0; 15]);
    v6.push(1);
    assert_eq!(one(&mut c, "select '::1'::inet"), (869, v6));
    // cidr cast to inet sends is_cidr 0, as PostgreSQL's inet_send.
    assert_eq!(
        one(&mut c, "select '10.0.0.0/8'::cidr::inet"),
        (869, vec![2, 8, 0, 4, 10, 0, 0, 0])
    );
    assert_eq!(
        one(&mut c, "select '08:00:2b:01:02:03'::macaddr"),
        (829, vec![8, 0, 0x2b, 1, 2, 3])
    );
    assert_eq!(
        one(&mut c, "select '08:00:2b:01:02:03'::macaddr8"),
        (774, vec![8, 0, 0x2b, 0xff, 0xfe, 1, 2, 3])
    );
    assert_eq!(
        one(&mut c, "select '-$1.23'::money"),
        (790, (-123i64).to_be_bytes().to_vec())
    );
    let (oid, _) = one(&mut c, "select array['1.2.3.4'::inet]");
    assert_eq!(oid, 1041);
    for (sql, oid) in [
        ("select array['10'::cidr]", 651),
        ("select array['08:00:2b:01:02:03'::macaddr]", 1040),
        ("select array['08:00:2b:01:02:03'::macaddr8]", 775),
        ("select array['$1'::money]", 791),
    ] {
        assert_eq!(one(&mut c, sql).0, oid, "{sql}");
    }
}

#[test]
fn network_and_money_binary_parameters() {
    let s = TestServer::start();
    let mut c = s.connect();
    c.batch_execute(
        "create table t (a inet, n cidr, m macaddr, m8 macaddr8, p money);
         create index t_a on t (a)",
    )
    .unwrap();
    let ins = c
        .prepare("insert into t values ($1, $2, $3, $4, $5)")
        .unwrap();
    let params: [Raw; 5] = [
        Raw(vec![2, 24, 0, 4, 192, 168, 1, 5]),
        Raw(vec![2, 16, 1, 4, 192, 168, 0, 0]),
        Raw(vec![8, 0, 0x2b, 1, 2, 3]),
        // macaddr8_recv takes six bytes too.
        Raw(vec![8, 0, 0x2b, 1, 2, 3]),
        Raw(250i64.to_be_bytes().to_vec()),
    ];
    let refs: Vec<&(dyn ToSql + Sync)> = params.iter().map(|p| p as _).collect();
    c.execute(&ins, &refs).unwrap();
    let row = c
        .query_one(
            "select a::text, n::text, m::text, m8::text, p::text from t where a = '192.168.1.5/24'",
            &[],
        )
        .unwrap();
    let texts: Vec<String> = (0..5).map(|i| row.get(i)).collect();
    assert_eq!(
        texts,
        [
            "192.168.1.5/24",
            "192.168.0.0/16",
            "08:00:2b:01:02:03",
            "08:00:2b:ff:fe:01:02:03",
            "$2.50"
        ]
    );
    // Binary out equals binary in.
    let row = c.query_one("select a, n, m, p from t", &[]).unwrap();
    for (i, k) in [0, 1, 2, 4].iter().enumerate() {
        let v: Raw = row.get(i);
        assert_eq!(v, params[*k]);
    }

    // recv's checks (22P03).
    let sel = c.prepare("select $1::cidr::text").unwrap();
    let err = c
        .query_one(&sel, &[&Raw(vec![2, 8, 1, 4, 10, 1, 0, 0])])
        .unwrap_err();
    let db = err.as_db_error().unwrap();
    assert_eq!(db.code().code(), "22P03");
    assert_eq!(db.message(), "invalid external \"cidr\" value");
    let sel = c.prepare("select $1::inet::text").unwrap();
    for (bad, msg) in [
        (
            vec![9, 8, 0, 4, 10, 0, 0, 0],
            "invalid address family in external \"inet\" value",
        ),
        (
            vec![2, 33, 0, 4, 10, 0, 0, 0],
            "invalid bits in external \"inet\" value",
        ),
        (
            vec![2, 8, 0, 16, 10, 0, 0, 0],
            "invalid length in external \"inet\" value",
        ),
    ] {
        let err = c.query_one(&sel, &[&Raw(bad)]).unwrap_err();
        let db = err.as_db_error().unwrap();
        assert_eq!((db.code().code(), db.message()), ("22P03", msg));
    }
    let row = c
        .query_one(&sel, &[&Raw(vec![2, 8, 0, 4, 10, 1, 0, 0])])
        .unwrap();
    assert_eq!(row.get::<_, String>(0), "10.1.0.0/8");
}
