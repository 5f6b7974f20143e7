//! Large values (TOAST): text, bytea and jsonb of 0 B to 100 MB through the
//! extended protocol (binary), the simple protocol (text) and COPY, byte
//! for byte; an UPDATE of another column keeps the out-of-line value
//! without writing it again; deleted values' chunks go with VACUUM; a
//! crash in the middle of a large insert leaves nothing half there and no
//! chunk behind after VACUUM; column storage and compression settings.

mod support;

use std::io::{Read, Write};

use support::TestServer;

/// Deterministic bytes that do not compress (an LCG's high bits).
fn noise(len: usize, seed: u64) -> Vec<u8> {
    let mut x = seed.wrapping_mul(2_862_933_555_777_941_757).wrapping_add(3);
    (0..len)
        .map(|_| {
            x = x
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (x >> 56) as u8
        })
        .collect()
}

/// Text that does not compress: letters and digits drawn from `noise`.
fn noisy_text(len: usize, seed: u64) -> String {
    const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    noise(len, seed)
        .into_iter()
        .map(|b| ALPHABET[b as usize % ALPHABET.len()] as char)
        .collect()
}

fn toast_size(c: &mut postgres::Client, table: &str) -> i64 {
    c.query_one(
        "select pg_relation_size(reltoastrelid) from pg_class where relname = $1",
        &[&table],
    )
    .unwrap()
    .get(0)
}

fn hex(b: &[u8]) -> String {
    let mut s = String::with_capacity(2 + b.len() * 2);
    s.push_str("\\x");
    for x in b {
        s.push_str(&format!("{x:02x}"));
    }
    s
}

#[test]
fn values_round_trip_through_both_protocols_and_copy() {
    let server = TestServer::start();
    let mut c = server.connect();
    c.batch_execute("create table docs (id int, t text, b bytea, j jsonb)")
        .unwrap();
    let sizes = [0usize, 2 << 10, 8 << 10, 1 << 20, 100 << 20];
    let mut expected = Vec::new();
    for (i, &n) in sizes.iter().enumerate() {
        let id = i as i32;
        // Odd rows compress (a repeated pattern), even ones do not.
        let t = if i % 2 == 1 {
            "0123456789abcdef".repeat(n / 16 + 1)[..n].to_string()
        } else {
            noisy_text(n, i as u64)
        };
        let b = if n <= 1 << 20 {
            noise(n, 100 + i as u64)
        } else {
            Vec::new()
        };
        let j = format!(
            r#"{{"id": {id}, "body": "{}"}}"#,
            noisy_text(n.min(1 << 20), 7)
        );
        c.execute(
            "insert into docs values ($1, $2, $3, $4::text::jsonb)",
            &[&id, &t, &b, &j],
        )
        .unwrap();
        expected.push((id, t, b, j));
    }
    // Extended protocol, binary results.
    for (id, t, b, j) in &expected {
        let row = c
            .query_one("select t, b, j::text from docs where id = $1", &[id])
            .unwrap();
        assert!(row.get::<_, String>(0) == *t, "text of row {id} differs");
        assert!(row.get::<_, Vec<u8>>(1) == *b, "bytea of row {id} differs");
        assert!(row.get::<_, String>(2) == *j, "jsonb of row {id} differs");
    }
    // Simple protocol, text results.
    for (id, t, b, _) in &expected {
        let rows = c
            .simple_query(&format!("select t, b from docs where id = {id}"))
            .unwrap();
        let row = rows
            .iter()
            .find_map(|m| match m {
                postgres::SimpleQueryMessage::Row(r) => Some(r),
                _ => None,
            })
            .expect("a row");
        assert!(row.get(0) == Some(t.as_str()), "text of row {id} differs");
        assert!(
            row.get(1) == Some(hex(b).as_str()),
            "bytea of row {id} differs"
        );
    }
    // COPY out, then in to another table: the same values.
    let mut out = Vec::new();
    c.copy_out("copy docs to stdout")
        .unwrap()
        .read_to_end(&mut out)
        .unwrap();
    c.batch_execute("create table docs2 (like docs)").unwrap();
    let mut w = c.copy_in("copy docs2 from stdin").unwrap();
    w.write_all(&out).unwrap();
    w.finish().unwrap();
    let same: i64 = c
        .query_one(
            "select count(*) from docs a join docs2 b using (id)
             where a.t = b.t and a.b = b.b and a.j = b.j",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(same, sizes.len() as i64);
    assert!(toast_size(&mut c, "docs") > 100 << 20);
}

#[test]
fn update_of_another_column_keeps_the_value_and_vacuum_removes_chunks() {
    let server = TestServer::start_with(&[("autovacuum", "off")]);
    let mut c = server.connect();
    c.batch_execute("create table t (id int, note text, body text)")
        .unwrap();
    let body = noisy_text(1 << 20, 1);
    c.execute("insert into t values (1, 'a', $1)", &[&body])
        .unwrap();
    let size = toast_size(&mut c, "t");
    assert!(size >= 1 << 20, "the value went out of line: {size}");
    for note in ["b", "c", "d"] {
        c.execute("update t set note = $1 where id = 1", &[&note])
            .unwrap();
    }
    assert_eq!(toast_size(&mut c, "t"), size, "no chunk written again");
    let row = c.query_one("select note, body from t", &[]).unwrap();
    assert_eq!(row.get::<_, &str>(0), "d");
    assert!(row.get::<_, String>(1) == body);
    // Changing the value writes it anew, and the old chunks die.
    c.execute("update t set body = body || 'x'", &[]).unwrap();
    assert!(toast_size(&mut c, "t") > size);
    c.execute("delete from t", &[]).unwrap();
    c.batch_execute("vacuum t").unwrap();
    assert_eq!(toast_size(&mut c, "t"), 0, "every chunk vacuumed away");
}

#[test]
fn crash_during_a_large_insert_leaves_no_half_value_nor_chunks() {
    let mut server = TestServer::start_with(&[("autovacuum", "off")]);
    let committed = noisy_text(3 << 20, 2);
    {
        let mut c = server.connect();
        c.batch_execute("create table t (id int, body text)")
            .unwrap();
        c.execute("insert into t values (1, $1)", &[&committed])
            .unwrap();
    }
    let before = {
        let mut c = server.connect();
        toast_size(&mut c, "t")
    };
    // A second session writes a 20 MB value and never commits.
    let cfg = server.config();
    let writer = std::thread::spawn(move || {
        let mut c = cfg.connect(postgres::NoTls).unwrap();
        let mut tx = c.transaction().unwrap();
        let big = noisy_text(20 << 20, 3);
        let _ = tx.execute("insert into t values (2, $1)", &[&big]);
        std::thread::sleep(std::time::Duration::from_secs(30));
    });
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let mut c = server.connect();
        if toast_size(&mut c, "t") > before + (4 << 20) {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the insert never got going"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    server.kill();
    let _ = writer.join();
    server.start_again();
    let mut c = server.connect();
    let rows = c.query("select id, body from t", &[]).unwrap();
    assert_eq!(rows.len(), 1, "only the committed row");
    assert!(rows[0].get::<_, String>(1) == committed);
    c.batch_execute("vacuum t").unwrap();
    assert_eq!(
        toast_size(&mut c, "t"),
        before,
        "the dead value's chunks are gone"
    );
}

#[test]
fn storage_and_compression_settings() {
    let server = TestServer::start();
    let mut c = server.connect();
    c.batch_execute(
        "create table s (id int, x text, y text);
         alter table s alter column x set storage external;
         alter table only s alter column y set compression pglz, alter column y set storage main",
    )
    .unwrap();
    let attrs: Vec<(String, String)> = c
        .query(
            "select attstorage::text, attcompression::text from pg_attribute
             where attrelid = 's'::regclass and attnum > 0 order by attnum",
            &[],
        )
        .unwrap()
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect();
    let pair = |a: &str, b: &str| (a.to_string(), b.to_string());
    assert_eq!(attrs, vec![pair("p", ""), pair("e", ""), pair("m", "p")]);
    // External: out of line, not compressed. Main: compressed in the row.
    let pattern = "abcdefgh".repeat(1 << 14);
    c.execute("insert into s values (1, $1, null)", &[&pattern])
        .unwrap();
    assert!(toast_size(&mut c, "s") >= 1 << 17);
    c.execute("truncate s", &[]).unwrap();
    c.execute("insert into s values (1, null, $1)", &[&pattern])
        .unwrap();
    assert_eq!(toast_size(&mut c, "s"), 0, "a main value stays in its row");
    let back: String = c.query_one("select y from s", &[]).unwrap().get(0);
    assert!(back == pattern);
    // pglz as the default method, then plain storage: too big for a row.
    c.batch_execute("set default_toast_compression = pglz; create table p (v text)")
        .unwrap();
    c.execute("insert into p values ($1)", &[&pattern]).unwrap();
    let back: String = c.query_one("select v from p", &[]).unwrap().get(0);
    assert!(back == pattern);
    c.batch_execute("alter table p alter column v set storage plain")
        .unwrap();
    let err = c
        .execute("insert into p values ($1)", &[&noisy_text(20_000, 5)])
        .unwrap_err();
    assert_eq!(err.code().unwrap().code(), "54000", "{err:?}");
    for (sql, code) in [
        (
            "alter table s alter column id set storage external",
            "0A000",
        ),
        ("alter table s alter column id set compression lz4", "0A000"),
        ("alter table s alter column x set storage fast", "22023"),
        ("alter table s alter column x set compression zstd", "22023"),
        ("alter table s alter column nope set storage main", "42703"),
        ("set default_toast_compression = zstd", "22023"),
    ] {
        let err = c.batch_execute(sql).unwrap_err();
        assert_eq!(err.code().unwrap().code(), code, "{sql}: {err:?}");
    }
}
