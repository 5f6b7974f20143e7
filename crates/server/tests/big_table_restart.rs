//! A table several times larger than shared_buffers: load, aggregate, update,
//! delete, roll back, then a clean shutdown (SIGTERM) and a restart on the same
//! data directory must give back every row unchanged.

mod support;

use std::collections::BTreeMap;

use support::TestServer;

/// Smallest shared_buffers first; the first one the server accepts is used.
const SHARED_BUFFERS: &[(&str, usize)] = &[("1MB", 1), ("2MB", 2), ("4MB", 4), ("8MB", 8)];
/// Rows per MB of shared_buffers: a row of (int, char(1000)) takes over 1 kB, so
/// this makes the table about 5x shared_buffers.
const ROWS_PER_MB: i32 = 5000;

/// What the table should hold: id -> pad with trailing blanks trimmed.
type Model = BTreeMap<i32, String>;

fn start_small() -> (TestServer, &'static str, i32) {
    let mut rejected = Vec::new();
    for (sb, mb) in SHARED_BUFFERS {
        match TestServer::try_start_with(&[("shared_buffers", sb)]) {
            Ok(s) => return (s, sb, ROWS_PER_MB * *mb as i32),
            Err(e) => rejected.push(format!("shared_buffers={sb}: {e}")),
        }
    }
    panic!(
        "the server started with none of the small shared_buffers values:\n{}",
        rejected.join("\n")
    );
}

/// Compares the whole table and its aggregates with the model.
fn verify(c: &mut postgres::Client, model: &Model, when: &str) {
    let row = c
        .query_one("select count(*), sum(id), min(id), max(id) from big", &[])
        .unwrap_or_else(|e| panic!("{when}: aggregate query failed: {e:?}"));
    let count: i64 = row.get(0);
    let sum: Option<i64> = row.get(1);
    let min: Option<i32> = row.get(2);
    let max: Option<i32> = row.get(3);
    let want_sum: i64 = model.keys().map(|&k| k as i64).sum();
    assert_eq!(count, model.len() as i64, "{when}: count(*)");
    assert_eq!(sum, Some(want_sum), "{when}: sum(id)");
    assert_eq!(min, model.keys().next().copied(), "{when}: min(id)");
    assert_eq!(max, model.keys().next_back().copied(), "{when}: max(id)");

    let rows = c
        .query("select id, pad from big order by id", &[])
        .unwrap_or_else(|e| panic!("{when}: select id, pad ... order by id failed: {e:?}"));
    assert_eq!(rows.len(), model.len(), "{when}: rows returned by select");
    for (row, (id, pad)) in rows.iter().zip(model.iter()) {
        let got_id: i32 = row.get(0);
        let got_pad: String = row.get(1);
        assert_eq!(got_id, *id, "{when}: ids in order (first difference)");
        assert_eq!(
            got_pad.chars().count(),
            1000,
            "{when}: char(1000) value of id {id} must be blank-padded to 1000 characters"
        );
        assert_eq!(got_pad.trim_end(), pad, "{when}: pad of id {id}");
    }
}

#[test]
fn big_table_survives_dml_and_restart() {
    let (mut s, sb, n) = start_small();
    let mut c = s.connect();
    let shown: String = c.query_one("show shared_buffers", &[]).unwrap().get(0);
    assert_eq!(
        shown, sb,
        "show shared_buffers (started with -c shared_buffers={sb})"
    );

    c.batch_execute("create table big (id int, pad char(1000))")
        .expect("create table big");
    let loaded = c
        .execute(
            &format!("insert into big select g, g::text from generate_series(1, {n}) g"),
            &[],
        )
        .expect("load with generate_series");
    assert_eq!(loaded, n as u64, "rows reported by the INSERT ... SELECT");
    let mut model: Model = (1..=n).map(|i| (i, i.to_string())).collect();
    verify(&mut c, &model, "after the load");

    // UPDATE a fifth of the rows (moves them to new versions) and re-check.
    let (lo, hi) = (n / 5, 2 * n / 5);
    let updated = c
        .execute(
            &format!(
                "update big set id = id + 1000000, pad = 'updated' where id > {lo} and id <= {hi}"
            ),
            &[],
        )
        .expect("update a subset");
    assert_eq!(updated, (hi - lo) as u64, "rows reported by the UPDATE");
    for id in lo + 1..=hi {
        model.remove(&id);
        model.insert(id + 1_000_000, "updated".into());
    }
    verify(&mut c, &model, "after the update");

    // DELETE another fifth and re-check.
    let (lo, hi) = (3 * n / 5, 4 * n / 5);
    let deleted = c
        .execute(
            &format!("delete from big where id > {lo} and id <= {hi}"),
            &[],
        )
        .expect("delete a subset");
    assert_eq!(deleted, (hi - lo) as u64, "rows reported by the DELETE");
    for id in lo + 1..=hi {
        model.remove(&id);
    }
    verify(&mut c, &model, "after the delete");

    // A rolled-back transaction changes nothing.
    c.batch_execute("begin; delete from big where id <= 100; update big set pad = 'zzz'; rollback")
        .expect("begin; delete; update; rollback");
    verify(&mut c, &model, "after a rolled-back delete and update");

    // A dropped table stays dropped.
    c.batch_execute("create table gone (x int); insert into gone values (1); drop table gone")
        .expect("create, fill and drop a second table");
    drop(c);

    s.stop_clean();
    s.start_again();
    let mut c = s.connect();
    verify(
        &mut c,
        &model,
        "after SIGTERM and restart on the same data directory",
    );
    let err = c
        .query("select * from gone", &[])
        .expect_err("a table dropped before the restart must stay dropped");
    assert_eq!(err.code().map(|c| c.code()), Some("42P01"), "{err:?}");

    // The restarted server still writes.
    c.execute("insert into big values (-1, 'after restart')", &[])
        .expect("insert after restart");
    model.insert(-1, "after restart".into());
    verify(&mut c, &model, "after an insert following the restart");
    drop(c);

    // And a second restart keeps that too.
    s.restart();
    let mut c = s.connect();
    verify(&mut c, &model, "after a second restart");
}
