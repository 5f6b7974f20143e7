//! UPDATE, DELETE and INSERT ... SELECT stream their input (modify a page's
//! matches before scanning on) yet never see the versions they write
//! themselves: the Halloween problem, avoided by the command id.

mod support;

use support::TestServer;

fn scalar(c: &mut postgres::Client, sql: &str) -> i64 {
    c.query_one(sql, &[]).unwrap().get(0)
}

/// Rows of mixed sizes: every page ends with some room left (a big row did
/// not fit), so an UPDATE's new versions fill the page they came from and
/// then go, through the free space map, to pages further on that the scan
/// has not reached yet.
fn load_mixed(c: &mut postgres::Client, rows: i64) {
    c.batch_execute(&format!(
        "create table t(a int8, pad text);
         insert into t select g, case when g % 40 = 0 then repeat('x', 5000) else 'y' end
           from generate_series(1, {rows}) g"
    ))
    .unwrap();
}

#[test]
fn update_changes_each_row_exactly_once_on_a_multi_page_table() {
    let s = TestServer::start();
    let mut c = s.connect();
    let rows = 20_000;
    load_mixed(&mut c, rows);
    let pages = scalar(&mut c, "select pg_relation_size('t') / 8192");
    assert!(pages > 100, "the table spans many pages ({pages})");
    let sum = scalar(&mut c, "select sum(a)::int8 from t");

    assert_eq!(
        c.execute("update t set a = a + 1", &[]).unwrap(),
        rows as u64
    );
    assert_eq!(scalar(&mut c, "select count(*) from t"), rows);
    assert_eq!(scalar(&mut c, "select sum(a)::int8 from t"), sum + rows);
    assert_eq!(scalar(&mut c, "select min(a) from t"), 2);
    assert_eq!(scalar(&mut c, "select max(a) from t"), rows + 1);
    // Rows updated more than once would show as gaps or duplicates.
    assert_eq!(scalar(&mut c, "select count(distinct a) from t"), rows);

    // Again inside a transaction block, where later commands see earlier ones.
    c.batch_execute("begin").unwrap();
    assert_eq!(
        c.execute("update t set a = a + 1", &[]).unwrap(),
        rows as u64
    );
    assert_eq!(
        c.execute("update t set a = a * 2 where a % 2 = 0", &[])
            .unwrap(),
        (rows / 2) as u64
    );
    c.batch_execute("commit").unwrap();
    let expected: i64 = (3..rows + 3)
        .map(|a| if a % 2 == 0 { a * 2 } else { a })
        .sum();
    assert_eq!(scalar(&mut c, "select sum(a)::int8 from t"), expected);
    assert_eq!(scalar(&mut c, "select count(*) from t"), rows);
}

#[test]
fn insert_select_from_the_same_table_doubles_it_exactly() {
    let s = TestServer::start();
    let mut c = s.connect();
    let rows = 10_000;
    load_mixed(&mut c, rows);
    let sum = scalar(&mut c, "select sum(a)::int8 from t");
    assert_eq!(
        c.execute("insert into t select * from t", &[]).unwrap(),
        rows as u64
    );
    assert_eq!(scalar(&mut c, "select count(*) from t"), 2 * rows);
    assert_eq!(scalar(&mut c, "select sum(a)::int8 from t"), 2 * sum);
    assert_eq!(
        c.execute(
            "insert into t select a + 1, pad from t where a % 2 = 0",
            &[]
        )
        .unwrap(),
        rows as u64
    );
    assert_eq!(scalar(&mut c, "select count(*) from t"), 3 * rows);
}

#[test]
fn delete_and_update_stream_with_counts_and_returning() {
    let s = TestServer::start();
    let mut c = s.connect();
    load_mixed(&mut c, 5_000);
    let r = c
        .query("update t set pad = 'z' where a <= 3 returning a, pad", &[])
        .unwrap();
    let got: Vec<(i64, String)> = r.iter().map(|r| (r.get(0), r.get(1))).collect();
    assert_eq!(got, vec![(1, "z".into()), (2, "z".into()), (3, "z".into())]);
    // Growing rows move to other pages; each is still changed once.
    assert_eq!(
        c.execute("update t set pad = repeat('w', 300) where a % 7 = 0", &[])
            .unwrap(),
        714
    );
    assert_eq!(
        scalar(
            &mut c,
            "select count(*) from t where pad = repeat('w', 300)"
        ),
        714
    );
    assert_eq!(
        c.execute("delete from t where a % 2 = 1", &[]).unwrap(),
        2_500
    );
    let r = c
        .query("delete from t where a <= 4 returning a", &[])
        .unwrap();
    let mut gone: Vec<i64> = r.iter().map(|r| r.get(0)).collect();
    gone.sort();
    assert_eq!(gone, vec![2, 4]);
    assert_eq!(c.execute("delete from t", &[]).unwrap(), 2_498);
    assert_eq!(scalar(&mut c, "select count(*) from t"), 0);
}
