//! A page whose checksum does not match is an error naming the relation and
//! block (SQLSTATE XX001), never silently returned data; other tables and the
//! session keep working.

mod support;

use support::TestServer;

#[test]
fn corrupt_page_is_reported_not_returned() {
    let mut s = TestServer::start();
    s.psql("create table victim(id int, pad text)");
    s.psql("insert into victim select g, repeat('v', 200) from generate_series(1, 2000) g");
    s.psql("create table bystander(a int)");
    s.psql("insert into bystander values (1), (2)");
    let path = s
        .psql("select pg_relation_filepath('victim')")
        .trim()
        .to_string();
    s.stop_clean();
    let file = s.data_dir().join(&path);
    let mut bytes = std::fs::read(&file).unwrap();
    assert!(bytes.len() >= 3 * 8192, "victim should span several pages");
    // Flip a byte in the middle of block 2's tuple data.
    bytes[2 * 8192 + 6000] ^= 0x5a;
    std::fs::write(&file, bytes).unwrap();
    s.start_again();

    let mut c = s.connect();
    let err = c.query("select count(*) from victim", &[]).unwrap_err();
    let db = err.as_db_error().expect("a server error");
    assert_eq!(db.code().code(), "XX001", "{db:?}");
    assert!(
        db.message().contains("block 2") && db.message().contains(&path),
        "message should name the block and relation: {}",
        db.message()
    );
    // The session and the rest of the database are fine.
    let n: i64 = c
        .query_one("select count(*) from bystander", &[])
        .unwrap()
        .get(0);
    assert_eq!(n, 2);
}
