//! client_encoding other than UTF8: psql and the `postgres` crate send and
//! read text in LATIN1, WIN1252, EUC_JP and SJIS; the server stores UTF8.
//! Expected bytes and messages are PostgreSQL 15's for the same input.

mod support;

use std::error::Error;
use std::process::Output;

use postgres::types::{FromSql, IsNull, ToSql, Type};
use support::TestServer;

/// Runs `script` (raw bytes, in `encoding`) with `psql -X -At -f`, without
/// stopping at errors; returns (stdout bytes, stderr).
fn psql_bytes(server: &TestServer, encoding: &str, script: &[u8]) -> (Vec<u8>, String) {
    let path = server.temp_dir().join("encoded.sql");
    std::fs::write(&path, script).unwrap();
    let mut cmd = server.psql_command_aligned();
    cmd.env("PGCLIENTENCODING", encoding)
        .arg("-At")
        .arg("-f")
        .arg(&path);
    let Output { stdout, stderr, .. } = server.run_psql(cmd);
    (stdout, String::from_utf8_lossy(&stderr).into_owned())
}

/// The UTF8 view of the same data.
fn psql_utf8(server: &TestServer, sql: &str) -> String {
    server.psql(sql)
}

#[test]
fn psql_latin1_round_trip_and_errors() {
    let server = TestServer::start();
    server.psql("create table enc_t (id int, v text)");
    let (out, err) = psql_bytes(
        &server,
        "LATIN1",
        b"show client_encoding;\n\
          insert into enc_t values (1, '\xe9t\xe9'), (2, 'na\xefve \xff');\n\
          select v, length(v) from enc_t order by id;\n\
          select 1 as \"c\xf6l\";\n\
          select 1 as \"c\xf6l\" \\gdesc\n\
          select U&'\\20AC';\n\
          select 'still here';\n\
          select chr(8364)::int;\n\
          select pg_client_encoding(), getdatabaseencoding();\n\
          \\encoding WIN1252\n\
          select '\x80' = U&'\\20AC', U&'\\20AC';\n\
          select 'a\x81b';\n\
          set names 'unicode';\n\
          show client_encoding;\n",
    );
    assert_eq!(
        out,
        b"LATIN1\nINSERT 0 2\n\xe9t\xe9|3\nna\xefve \xff|7\n1\nc\xf6l|integer\nstill here\nLATIN1|UTF8\n\
          t|\x80\nSET\nUTF8\n"
            .to_vec(),
        "stdout as text: {}\nstderr: {err}",
        String::from_utf8_lossy(&out)
    );
    let untranslatable = "ERROR:  character with byte sequence 0xe2 0x82 0xac in encoding \
                          \"UTF8\" has no equivalent in encoding \"LATIN1\"";
    assert_eq!(err.matches(untranslatable).count(), 2, "stderr: {err}");
    assert!(
        err.contains(
            "ERROR:  character with byte sequence 0x81 in encoding \"WIN1252\" has no \
             equivalent in encoding \"UTF8\""
        ),
        "stderr: {err}"
    );
    // Stored as UTF8.
    assert_eq!(
        psql_utf8(&server, "select v from enc_t order by id"),
        "\u{e9}t\u{e9}\nna\u{ef}ve \u{ff}"
    );
}

#[test]
fn psql_euc_jp_and_sjis() {
    let server = TestServer::start();
    server.psql("create table jp (id int, v text)");
    // こんにちは in EUC_JP, then read back in SJIS and UTF8.
    let (out, err) = psql_bytes(
        &server,
        "EUC_JP",
        b"insert into jp values (1, '\xa4\xb3\xa4\xf3\xa4\xcb\xa4\xc1\xa4\xcf');\n\
          select 'x\xa4 y';\n\
          select 'x\xff\xff';\n\
          select v, length(v) from jp;\n",
    );
    assert_eq!(
        out,
        b"INSERT 0 1\n\xa4\xb3\xa4\xf3\xa4\xcb\xa4\xc1\xa4\xcf|5\n".to_vec(),
        "stderr: {err}"
    );
    assert!(
        err.contains("ERROR:  invalid byte sequence for encoding \"EUC_JP\": 0xa4 0x20"),
        "stderr: {err}"
    );
    assert!(
        err.contains("ERROR:  invalid byte sequence for encoding \"EUC_JP\": 0xff 0xff"),
        "stderr: {err}"
    );
    let (out, err) = psql_bytes(
        &server,
        "SJIS",
        b"select v from jp;\nselect '\x82\xa0\xb1' = U&'\\3042\\FF71';\nselect 'x\xa0';\n",
    );
    assert_eq!(
        out,
        b"\x82\xb1\x82\xf1\x82\xc9\x82\xbf\x82\xcd\nt\n".to_vec(),
        "stderr: {err}"
    );
    assert!(
        err.contains("ERROR:  invalid byte sequence for encoding \"SJIS\": 0xa0 0x27"),
        "stderr: {err}"
    );
    // Bad bytes in COPY data: the error names their line; the session goes on.
    let (out, err) = psql_bytes(
        &server,
        "EUC_JP",
        b"copy jp from stdin;\n2\t\xa4\xb3\n3\tx\xa4 y\n\\.\nselect count(*) from jp;\n",
    );
    assert_eq!(out, b"1\n".to_vec(), "stderr: {err}");
    assert!(
        err.contains(
            "ERROR:  invalid byte sequence for encoding \"EUC_JP\": 0xa4 0x20\n\
             CONTEXT:  COPY jp, line 2"
        ),
        "stderr: {err}"
    );
    assert_eq!(
        psql_utf8(&server, "select v from jp"),
        "\u{3053}\u{3093}\u{306b}\u{3061}\u{306f}"
    );
}

#[test]
fn copy_in_latin1() {
    let server = TestServer::start();
    server.psql("create table cp (id int, v text)");
    let (out, err) = psql_bytes(
        &server,
        "LATIN1",
        b"copy cp from stdin;\n1\t\xe9l\xe8ve\n2\tgar\xe7on\n\\.\n\
          copy cp to stdout;\n\
          copy (select U&'\\20AC') to stdout;\n\
          select 1;\n",
    );
    assert_eq!(
        out,
        b"COPY 2\n1\t\xe9l\xe8ve\n2\tgar\xe7on\n1\n".to_vec(),
        "stdout as text: {}\nstderr: {err}",
        String::from_utf8_lossy(&out)
    );
    assert!(
        err.contains("has no equivalent in encoding \"LATIN1\""),
        "stderr: {err}"
    );
    // COPY's ENCODING option overrides the (UTF8) client encoding.
    let (out, err) = psql_bytes(
        &server,
        "UTF8",
        b"copy cp from stdin (encoding 'latin1');\n3\tna\xeff\n\\.\n\
          copy (select v from cp where id = 3) to stdout (encoding 'LATIN1');\n\
          copy cp to stdout (encoding 'mule_internal');\n\
          copy cp to stdout (encoding 'bogus');\n",
    );
    assert_eq!(out, b"COPY 1\nna\xeff\n".to_vec(), "stderr: {err}");
    assert!(
        err.contains("ERROR:  argument to option \"encoding\" must be a valid encoding name"),
        "stderr: {err}"
    );
    assert_eq!(
        psql_utf8(&server, "select v from cp order by id"),
        "\u{e9}l\u{e8}ve\ngar\u{e7}on\nna\u{ef}f"
    );
}

#[test]
fn copy_server_file_with_encoding() {
    let server = TestServer::start();
    let path = server.temp_dir().join("latin1.txt");
    std::fs::write(&path, b"1\t\xe9t\xe9\n2\tna\xefve\n").unwrap();
    let path = path.display();
    server.psql("create table cf (id int, v text)");
    assert_eq!(
        server.psql(&format!("copy cf from '{path}' (encoding 'LATIN1')")),
        "COPY 2"
    );
    assert_eq!(
        server.psql("select v from cf order by id"),
        "\u{e9}t\u{e9}\nna\u{ef}ve"
    );
    // In the data directory: the server's user may write there.
    let out = server.data_dir().join("win1252.txt");
    server.psql(&format!(
        "copy (select v || U&'\\20AC' from cf order by id) to '{}' (encoding 'win1252')",
        out.display()
    ));
    assert_eq!(
        std::fs::read(&out).unwrap(),
        b"\xe9t\xe9\x80\nna\xefve\x80\n"
    );
}

/// Text as raw bytes in the client encoding, in binary format.
#[derive(Debug)]
struct RawText(Vec<u8>);

impl<'a> FromSql<'a> for RawText {
    fn from_sql(_: &Type, raw: &'a [u8]) -> Result<Self, Box<dyn Error + Sync + Send>> {
        Ok(RawText(raw.to_vec()))
    }
    fn accepts(ty: &Type) -> bool {
        *ty == Type::TEXT
    }
}

impl ToSql for RawText {
    fn to_sql(
        &self,
        _: &Type,
        out: &mut bytes::BytesMut,
    ) -> Result<IsNull, Box<dyn Error + Sync + Send>> {
        out.extend_from_slice(&self.0);
        Ok(IsNull::No)
    }
    fn accepts(ty: &Type) -> bool {
        *ty == Type::TEXT
    }
    postgres::types::to_sql_checked!();
}

#[test]
fn postgres_crate_set_client_encoding() {
    let server = TestServer::start();
    let mut client = server.connect();
    client
        .batch_execute("create table pc (v text); set client_encoding to 'latin-1'")
        .unwrap();
    let show = client.query_one("show client_encoding", &[]).unwrap();
    assert_eq!(show.get::<_, String>(0), "LATIN1");
    // Binary text parameters and results are converted too (textrecv/textsend).
    client
        .execute(
            "insert into pc values ($1)",
            &[&RawText(b"\xe9t\xe9".to_vec())],
        )
        .unwrap();
    let row = client
        .query_one("select v, length(v) from pc", &[])
        .unwrap();
    assert_eq!(row.get::<_, RawText>(0).0, b"\xe9t\xe9");
    assert_eq!(row.get::<_, i32>(1), 3);
    // So are the elements of text arrays in binary (array_send/array_recv).
    let row = client
        .query_one(
            "select $1::text[]",
            &[&vec![RawText(b"\xe0".to_vec()), RawText(b"b\xe8".to_vec())]],
        )
        .unwrap();
    let back: Vec<RawText> = row.get(0);
    assert_eq!(back[0].0, b"\xe0");
    assert_eq!(back[1].0, b"b\xe8");
    let row = client
        .query_one(
            "select array_to_string($1::text[], ',')",
            &[&vec![RawText(b"\xe0".to_vec())]],
        )
        .unwrap();
    assert_eq!(row.get::<_, RawText>(0).0, b"\xe0");
    // An unconvertible value is 22P05 and the session goes on.
    let e = client.query("select U&'\\20AC'::text", &[]).unwrap_err();
    assert_eq!(e.code().unwrap().code(), "22P05");
    let e = client
        .batch_execute("set client_encoding to 'bogus'")
        .unwrap_err();
    let db = e.as_db_error().unwrap();
    assert_eq!(db.code().code(), "22023");
    assert_eq!(
        db.message(),
        "invalid value for parameter \"client_encoding\": \"bogus\""
    );
    let e = client
        .batch_execute("set client_encoding to 'mule_internal'")
        .unwrap_err();
    let db = e.as_db_error().unwrap();
    assert_eq!(db.code().code(), "0A000");
    assert_eq!(
        db.detail(),
        Some("Conversion between MULE_INTERNAL and UTF8 is not supported.")
    );
    let row = client
        .query_one(
            "select pg_char_to_encoding('latin1'), pg_char_to_encoding('bogus'), \
             pg_encoding_to_char(35)::text",
            &[],
        )
        .unwrap();
    assert_eq!(row.get::<_, i32>(0), 8);
    assert_eq!(row.get::<_, i32>(1), -1);
    assert_eq!(row.get::<_, String>(2), "SJIS");
    client.batch_execute("reset client_encoding").unwrap();
    let row = client.query_one("select v from pc", &[]).unwrap();
    assert_eq!(row.get::<_, String>(0), "\u{e9}t\u{e9}");
}

#[test]
fn bad_name_at_startup_is_fatal() {
    let server = TestServer::start();
    let mut cmd = server.psql_command_aligned();
    cmd.env("PGCLIENTENCODING", "bogus")
        .args(["-c", "select 1"]);
    let out = server.run_psql(cmd);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("FATAL:  invalid value for parameter \"client_encoding\": \"bogus\""),
        "stderr: {err}"
    );
}
