//! `interval` in binary through the `postgres` crate (which sends parameters
//! and reads results in binary): PostgreSQL's interval_send/interval_recv
//! layout (microseconds int8, days int4, months int4), the type's OID in
//! RowDescription, round trips through a table and an index, and text output
//! under each IntervalStyle.

mod support;

use std::error::Error;

use bytes::{BufMut, BytesMut};
use postgres::types::{to_sql_checked, FromSql, IsNull, ToSql, Type};
use support::TestServer;

type BoxError = Box<dyn Error + Sync + Send>;

/// An interval decoded by hand from PostgreSQL's binary format.
#[derive(Debug, Clone, Copy, PartialEq)]
struct PgInterval {
    months: i32,
    days: i32,
    micros: i64,
}

impl<'a> FromSql<'a> for PgInterval {
    fn from_sql(_: &Type, raw: &'a [u8]) -> Result<PgInterval, BoxError> {
        let b: [u8; 16] = raw
            .try_into()
            .map_err(|_| format!("interval of {} bytes", raw.len()))?;
        Ok(PgInterval {
            micros: i64::from_be_bytes(b[0..8].try_into()?),
            days: i32::from_be_bytes(b[8..12].try_into()?),
            months: i32::from_be_bytes(b[12..16].try_into()?),
        })
    }
    fn accepts(ty: &Type) -> bool {
        *ty == Type::INTERVAL
    }
}

impl ToSql for PgInterval {
    fn to_sql(&self, _: &Type, out: &mut BytesMut) -> Result<IsNull, BoxError> {
        out.put_i64(self.micros);
        out.put_i32(self.days);
        out.put_i32(self.months);
        Ok(IsNull::No)
    }
    fn accepts(ty: &Type) -> bool {
        *ty == Type::INTERVAL
    }
    to_sql_checked!();
}

fn iv(months: i32, days: i32, micros: i64) -> PgInterval {
    PgInterval {
        months,
        days,
        micros,
    }
}

#[test]
fn interval_binary_results_and_parameters() {
    let s = TestServer::start();
    let mut c = s.connect();

    let stmt = c
        .prepare("select interval '1 year 2 mons 3 days 04:05:06.5'")
        .unwrap();
    assert_eq!(stmt.columns()[0].type_().oid(), 1186);
    let row = c.query_one(&stmt, &[]).unwrap();
    let v: PgInterval = row.get(0);
    assert_eq!(v, iv(14, 3, 4 * 3_600_000_000 + 5 * 60_000_000 + 6_500_000));

    // A parameter whose type is inferred as interval, sent in binary.
    let row = c
        .query_one(
            "select $1 + interval '1 day', ($1)::text",
            &[&iv(-1, 2, -1)],
        )
        .unwrap();
    let sum: PgInterval = row.get(0);
    let text: String = row.get(1);
    assert_eq!(sum, iv(-1, 3, -1));
    assert_eq!(text, "-1 mons +2 days -00:00:00.000001");

    // Stored, indexed, and compared by span: '1 mon' = '30 days'.
    c.batch_execute(
        "create table spans (id int primary key, d interval);
         create index spans_d on spans (d)",
    )
    .unwrap();
    for (id, v) in [(1, iv(1, 0, 0)), (2, iv(0, 30, 0)), (3, iv(0, 0, -1))] {
        c.execute("insert into spans values ($1, $2)", &[&id, &v])
            .unwrap();
    }
    let rows = c
        .query(
            "select id, d from spans where d = $1 order by id",
            &[&iv(0, 0, 30 * 86_400_000_000)],
        )
        .unwrap();
    let got: Vec<(i32, PgInterval)> = rows.iter().map(|r| (r.get(0), r.get(1))).collect();
    assert_eq!(got, vec![(1, iv(1, 0, 0)), (2, iv(0, 30, 0))]);
}

#[test]
fn interval_text_follows_interval_style() {
    let s = TestServer::start();
    let mut c = s.connect();
    let show = |c: &mut postgres::Client| -> String {
        c.simple_query("select interval '-1 year -2 mons 3 days 04:05:06'")
            .unwrap()
            .into_iter()
            .find_map(|m| match m {
                postgres::SimpleQueryMessage::Row(r) => r.get(0).map(str::to_string),
                _ => None,
            })
            .unwrap()
    };
    assert_eq!(show(&mut c), "-1 years -2 mons +3 days 04:05:06");
    for (style, want) in [
        ("iso_8601", "P-1Y-2M3DT4H5M6S"),
        ("sql_standard", "-1-2 +3 +4:05:06"),
        (
            "postgres_verbose",
            "@ 1 year 2 mons -3 days -4 hours -5 mins -6 secs ago",
        ),
    ] {
        c.batch_execute(&format!("set intervalstyle = {style}"))
            .unwrap();
        assert_eq!(show(&mut c), want, "IntervalStyle {style}");
    }
}
