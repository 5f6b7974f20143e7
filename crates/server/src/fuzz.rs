//! Fuzz target for the wire protocol: a client's whole byte stream (startup
//! packet, then frontend messages) fed through `serve_connection` in memory,
//! against a session that accepts every statement and echoes its bound
//! parameters (so Bind's text and binary parameter decoding and DataRow
//! encoding run on fuzzed values too).
//!
//! Checked on every input: no panic (a panic below the protocol layer is
//! caught there and shows up as FATAL XX000, which fails the target), the
//! output is a well-framed sequence of backend messages, every ErrorResponse
//! carries a five-character SQLSTATE, and the connection ends.
//!
//! The same message generator feeds the end-to-end `fuzz_memory` test, which
//! sends it to a real server over TCP.

use std::io::{self, Read, Write};
use std::sync::Arc;

use common::fuzz::{Mutator, Rng};
use common::interrupt::Interrupts;
use common::{PgError, PgResult, SqlState};
use types::{TypeId, Value};

use crate::connections::ConnectionShared;
use crate::protocol::{serve_connection, BackendRegistry, ProtocolLimits};
use crate::session_api::{
    ColumnDesc, PreparedStatement, ResultSink, SessionFactory, SessionHandler, StartupParams,
};

/// Output beyond this ends the connection as a vanished client would: the
/// session stops producing rows for nobody.
const MAX_OUTPUT: usize = 8 << 20;

/// Input byte 0: bit 0 set sends a valid startup packet before the rest, so
/// most inputs reach the message loop; clear, the rest is the startup phase.
pub fn fuzz_one(data: &[u8]) {
    let output = serve_in_memory(data);
    check_backend_stream(&output);
}

/// Serves one connection whose client sends `data` (see `fuzz_one`) and
/// returns what the server sent back.
fn serve_in_memory(data: &[u8]) -> Vec<u8> {
    let Some((&flags, rest)) = data.split_first() else {
        return Vec::new();
    };
    let mut input = Vec::with_capacity(rest.len() + 64);
    if flags & 1 == 1 {
        input.extend_from_slice(&startup_packet("fuzz", "fuzz"));
    }
    input.extend_from_slice(rest);
    let mut stream = MemoryStream {
        input: &input,
        pos: 0,
        output: Vec::new(),
    };
    let limits = ProtocolLimits {
        max_message_len: 1 << 16,
        ..ProtocolLimits::default()
    };
    let registry = BackendRegistry::new();
    let shared = ConnectionShared::default();
    serve_connection(&mut stream, &EchoFactory, &registry, &limits, &shared);
    assert_eq!(registry.count(), 0, "the backend stayed registered");
    stream.output
}

/// The client side in memory: reads come from the input, writes are kept.
struct MemoryStream<'a> {
    input: &'a [u8],
    pos: usize,
    output: Vec<u8>,
}

impl Read for MemoryStream<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = buf.len().min(self.input.len() - self.pos);
        buf[..n].copy_from_slice(&self.input[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

impl Write for MemoryStream<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.output.len() + buf.len() > MAX_OUTPUT {
            return Err(io::Error::new(io::ErrorKind::BrokenPipe, "client gone"));
        }
        self.output.extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Walks the backend's output: whole messages only, a valid frame each, no
/// internal error. The one-byte answers to SSLRequest/GSSENCRequest ('N')
/// may come before the first message.
fn check_backend_stream(out: &[u8]) {
    let mut rest = out;
    while let [b'N', tail @ ..] = rest {
        // 'N' is also NoticeResponse, whose length word starts with zero
        // bytes; a bare refusal byte is followed by another message type.
        match tail {
            [0, 0, ..] => break,
            _ => rest = tail,
        }
    }
    while !rest.is_empty() {
        assert!(rest.len() >= 5, "truncated message header: {rest:?}");
        let ty = rest[0];
        let len = u32::from_be_bytes([rest[1], rest[2], rest[3], rest[4]]) as usize;
        assert!(len >= 4, "message {} with length {len}", ty as char);
        assert!(
            rest.len() > len,
            "message {} cut short ({} of {len} bytes)",
            ty as char,
            rest.len() - 1
        );
        let body = &rest[5..1 + len];
        if ty == b'E' {
            check_error_fields(body);
        }
        rest = &rest[1 + len..];
    }
}

fn check_error_fields(body: &[u8]) {
    let mut fields = body;
    let mut code = None;
    while let [field, tail @ ..] = fields {
        if *field == 0 {
            break;
        }
        let end = tail
            .iter()
            .position(|&b| b == 0)
            .expect("unterminated error field");
        if *field == b'C' {
            code = Some(String::from_utf8_lossy(&tail[..end]).into_owned());
        }
        fields = &tail[end + 1..];
    }
    let code = code.expect("ErrorResponse without SQLSTATE");
    assert_eq!(code.len(), 5, "SQLSTATE {code:?}");
    assert_ne!(
        code,
        "XX000",
        "internal error (a caught panic?): {}",
        String::from_utf8_lossy(body)
    );
}

// ---------------------------------------------------------------- session

struct EchoFactory;

impl SessionFactory for EchoFactory {
    fn open(
        &self,
        params: &StartupParams,
        _pid: i32,
        _interrupts: Arc<Interrupts>,
    ) -> PgResult<Box<dyn SessionHandler>> {
        if params.database == "nodb" {
            return Err(PgError::new(
                SqlState::INVALID_CATALOG_NAME,
                "database \"nodb\" does not exist",
            ));
        }
        Ok(Box::new(EchoSession {
            status: b'I',
            statements: Default::default(),
        }))
    }
}

/// Accepts any statement: a Query's statements each return one row of text;
/// a prepared statement returns its parameters as they were bound.
struct EchoSession {
    status: u8,
    statements: crate::session_api::StatementRegistry,
}

fn column(name: &str, type_oid: u32) -> ColumnDesc {
    ColumnDesc {
        name: name.into(),
        table_oid: 0,
        column_id: 0,
        type_oid,
        type_len: -1,
        type_mod: -1,
    }
}

impl SessionHandler for EchoSession {
    fn statements(&mut self) -> &mut crate::session_api::StatementRegistry {
        &mut self.statements
    }
    fn startup_parameters(&self) -> Vec<(String, String)> {
        vec![("server_version".into(), "17.0".into())]
    }
    fn take_changed_parameters(&mut self) -> Vec<(String, String)> {
        Vec::new()
    }
    fn transaction_status(&self) -> u8 {
        self.status
    }
    fn simple_query(&mut self, sql: &str, sink: &mut dyn ResultSink) -> PgResult<bool> {
        let mut any = false;
        for stmt in sql.split(';').map(str::trim).filter(|s| !s.is_empty()) {
            any = true;
            match stmt.split_whitespace().next().unwrap_or("") {
                "begin" => self.status = b'T',
                "commit" | "rollback" => self.status = b'I',
                "error" => {
                    if self.status == b'T' {
                        self.status = b'E';
                    }
                    return Err(PgError::syntax("syntax error at or near \"error\""));
                }
                _ => {}
            }
            sink.columns(&[column("echo", TypeId::Text.oid())])?;
            sink.row(&[Value::Text(stmt.chars().take(64).collect())])?;
            sink.complete("SELECT 1")?;
        }
        Ok(any)
    }
    fn prepare(&mut self, sql: &str, param_types: &[u32]) -> PgResult<PreparedStatement> {
        if sql.starts_with("error") {
            return Err(PgError::syntax("syntax error at or near \"error\""));
        }
        let param_types: Vec<u32> = param_types
            .iter()
            .map(|&t| if t == 0 { TypeId::Text.oid() } else { t })
            .collect();
        // Unknown type oids are the client's mistake: 42704, as PostgreSQL.
        if let Some(bad) = param_types.iter().find(|&&t| TypeId::from_oid(t).is_none()) {
            return Err(PgError::new(
                SqlState("42704"),
                format!("type with OID {bad} does not exist"),
            ));
        }
        let columns = (!sql.is_empty()).then(|| {
            param_types
                .iter()
                .enumerate()
                .map(|(i, &t)| column(&format!("p{}", i + 1), t))
                .collect()
        });
        Ok(PreparedStatement {
            sql: sql.to_string(),
            param_types,
            columns,
            inner: Arc::new(()),
        })
    }
    fn execute(
        &mut self,
        stmt: &PreparedStatement,
        params: &[Value],
        sink: &mut dyn ResultSink,
    ) -> PgResult<()> {
        if let Some(columns) = &stmt.columns {
            sink.columns(columns)?;
            for _ in 0..stmt.sql.len().min(3) {
                sink.row(params)?;
            }
        }
        sink.complete("SELECT 1")
    }
    fn on_extended_error(&mut self) {
        if self.status == b'T' {
            self.status = b'E';
        }
    }
    fn sync(&mut self) -> PgResult<()> {
        Ok(())
    }
    fn io_settings(&self) -> types::IoSettings {
        types::IoSettings::UTC
    }
}

// ---------------------------------------------------------------- generation

/// A protocol 3.0 StartupMessage for `user` and `database`.
pub fn startup_packet(user: &str, database: &str) -> Vec<u8> {
    let mut body = 196_608u32.to_be_bytes().to_vec();
    for s in ["user", user, "database", database] {
        body.extend_from_slice(s.as_bytes());
        body.push(0);
    }
    body.push(0);
    let mut packet = ((body.len() + 4) as u32).to_be_bytes().to_vec();
    packet.extend_from_slice(&body);
    packet
}

fn cstr(out: &mut Vec<u8>, s: &str) {
    out.extend_from_slice(s.as_bytes());
    out.push(0);
}

/// Names the generated messages use, some of them never defined.
const BIND_STATEMENT_NAMES: &[&str] = &["", "s1", "s2", "nope"];
const OBJECT_NAMES: &[&str] = &["", "s1", "p1"];
const PORTAL_NAMES: &[&str] = &["", "p1"];
const STARTUP_DATABASES: &[&str] = &["nodb", "d", ""];
const STARTUP_USERS: &[&str] = &["u", "", "nodb"];
const STATEMENT_NAMES: &[&str] = &["", "s1", "s2"];

/// Type oids for Parse and values for Bind: every type, some unknown oids.
fn param_type(rng: &mut Rng) -> u32 {
    if rng.one_in(10) {
        rng.pick(&[0, 1, 705, 9999, u32::MAX])
    } else {
        rng.pick(&TypeId::ALL).oid()
    }
}

fn param_value(rng: &mut Rng, binary: bool) -> Option<Vec<u8>> {
    if rng.one_in(8) {
        return None;
    }
    Some(if binary {
        (0..rng.pick(&[0usize, 1, 2, 4, 8, 12, 16]))
            .map(|_| rng.next_u64() as u8)
            .collect()
    } else {
        rng.pick(types::fuzz::types_io::TEXT_SEEDS)
            .as_bytes()
            .to_vec()
    })
}

/// One well-formed frontend message, built from `sql` for the statement texts.
fn message(rng: &mut Rng, sql: &mut dyn FnMut(&mut Rng) -> String) -> Vec<u8> {
    let mut body = Vec::new();
    let ty = match rng.below(12) {
        0 | 1 => {
            cstr(&mut body, &sql(rng));
            b'Q'
        }
        2 | 3 => {
            cstr(&mut body, rng.pick(STATEMENT_NAMES));
            cstr(&mut body, &sql(rng));
            let n = rng.small(4);
            body.extend_from_slice(&(n as u16).to_be_bytes());
            for _ in 0..n {
                body.extend_from_slice(&param_type(rng).to_be_bytes());
            }
            b'P'
        }
        4 | 5 => {
            cstr(&mut body, rng.pick(PORTAL_NAMES));
            cstr(&mut body, rng.pick(BIND_STATEMENT_NAMES));
            let formats: Vec<i16> = (0..rng.small(3))
                .map(|_| rng.pick(&[0, 1, 1, 2, -1]))
                .collect();
            body.extend_from_slice(&(formats.len() as u16).to_be_bytes());
            for f in &formats {
                body.extend_from_slice(&f.to_be_bytes());
            }
            let n = rng.small(4);
            body.extend_from_slice(&(n as u16).to_be_bytes());
            for i in 0..n {
                let binary = match formats.len() {
                    0 => false,
                    1 => formats[0] == 1,
                    _ => formats.get(i).is_some_and(|&f| f == 1),
                };
                match param_value(rng, binary) {
                    None => body.extend_from_slice(&(-1i32).to_be_bytes()),
                    Some(v) => {
                        body.extend_from_slice(&(v.len() as i32).to_be_bytes());
                        body.extend_from_slice(&v);
                    }
                }
            }
            let results = rng.small(3);
            body.extend_from_slice(&(results as u16).to_be_bytes());
            for _ in 0..results {
                body.extend_from_slice(&rng.pick(&[0i16, 1, 1, 7]).to_be_bytes());
            }
            b'B'
        }
        6 => {
            body.push(rng.pick(b"SPX"));
            cstr(&mut body, rng.pick(OBJECT_NAMES));
            b'D'
        }
        7 => {
            cstr(&mut body, rng.pick(PORTAL_NAMES));
            body.extend_from_slice(&rng.pick(&[0i32, 1, 2, -1]).to_be_bytes());
            b'E'
        }
        8 => {
            body.push(rng.pick(b"SPX"));
            cstr(&mut body, rng.pick(OBJECT_NAMES));
            b'C'
        }
        9 => b'S',
        10 => b'H',
        _ => match rng.below(8) {
            0 => b'X',
            1 => {
                body.extend_from_slice(b"copy data");
                b'd'
            }
            2 => b'c',
            3 => {
                cstr(&mut body, "no copy");
                b'f'
            }
            4 => {
                body.extend_from_slice(&1234u32.to_be_bytes());
                b'F'
            }
            _ => b'S',
        },
    };
    let mut msg = vec![ty];
    msg.extend_from_slice(&((body.len() + 4) as u32).to_be_bytes());
    msg.extend_from_slice(&body);
    msg
}

/// A stream of frontend messages (after startup), mostly well formed, its
/// statement texts from `sql`; sometimes mutated at the byte level.
pub fn frontend_messages(rng: &mut Rng, sql: &mut dyn FnMut(&mut Rng) -> String) -> Vec<u8> {
    let mut stream = Vec::new();
    for _ in 0..1 + rng.small(12) {
        stream.extend(message(rng, sql));
    }
    if rng.one_in(2) {
        stream.extend(message(rng, &mut |_| String::new()));
        stream.extend_from_slice(&[b'S', 0, 0, 0, 4]);
    }
    if !rng.one_in(3) {
        Mutator {
            dictionary: PROTOCOL_DICTIONARY,
            max_len: 8192,
        }
        .mutate(rng, &mut stream, &[]);
    }
    stream
}

const PROTOCOL_DICTIONARY: &[&[u8]] = &[
    b"\0",
    b"\0\0",
    b"\0\0\0\x04",
    b"S\0\0\0\x04",
    b"H\0\0\0\x04",
    b"X\0\0\0\x04",
    b"\xff\xff",
    b"\0\x01",
    b"\0\0\x00\x17",
    b"\x7f\xff\xff\xff",
    b"select 1\0",
];

/// Statement texts for the in-process target (the echo session ignores them).
fn mock_sql(rng: &mut Rng) -> String {
    rng.pick(&[
        "select 1", "begin", "commit", "error", "", "a; b; ;", "rollback",
    ])
    .to_string()
}

/// One input for `fuzz_one`: usually a startup then messages; sometimes a
/// mutated startup phase (SSLRequest, CancelRequest, bad packets).
pub fn generate_input(rng: &mut Rng) -> Vec<u8> {
    if rng.one_in(6) {
        let mut startup = match rng.below(3) {
            0 => vec![0, 0, 0, 8, 4, 0xd2, 0x16, 0x2f],
            1 => {
                let mut cancel = vec![0, 0, 0, 16, 4, 0xd2, 0x16, 0x2e];
                cancel.extend((0..8).map(|_| rng.next_u64() as u8));
                cancel
            }
            _ => startup_packet(rng.pick(STARTUP_USERS), rng.pick(STARTUP_DATABASES)),
        };
        startup.extend(frontend_messages(rng, &mut mock_sql));
        Mutator {
            dictionary: PROTOCOL_DICTIONARY,
            max_len: 8192,
        }
        .mutate(rng, &mut startup, &[]);
        let mut input = vec![0];
        input.extend(startup);
        return input;
    }
    let mut input = vec![1];
    input.extend(frontend_messages(rng, &mut mock_sql));
    input
}

#[cfg(test)]
mod tests {
    use super::*;
    use common::fuzz::{drive, Budget};

    /// The short fixed-seed run of the test command; see the README for a long one.
    #[test]
    fn fuzz_protocol_message_loop() {
        drive(
            "protocol",
            Budget::from_env(0x9e37_79b9, 100_000),
            generate_input,
            fuzz_one,
        );
    }

    /// The target must see real traffic: a well-formed stream is answered
    /// message by message, with the echo session's rows.
    #[test]
    fn well_formed_input_reaches_the_session() {
        let mut input = vec![1];
        let mut msg = |ty: u8, body: &[u8]| {
            input.push(ty);
            input.extend_from_slice(&(body.len() as u32 + 4).to_be_bytes());
            input.extend_from_slice(body);
        };
        msg(b'Q', b"select 1\0");
        // Parse s1 with one int4 parameter; Bind it in binary (42); Execute.
        msg(b'P', b"s1\0select\0\0\x01\0\0\0\x17");
        msg(b'B', b"\0s1\0\0\x01\0\x01\0\x01\0\0\0\x04\0\0\0\x2a\0\0");
        msg(b'E', b"\0\0\0\0\0");
        msg(b'S', b"");
        let out = serve_in_memory(&input);
        check_backend_stream(&out);
        let types: Vec<u8> = message_types(&out);
        assert_eq!(
            String::from_utf8_lossy(&types),
            "RSKZTDCZ12DDDCZ",
            "{}",
            out.escape_ascii()
        );
    }

    fn message_types(mut out: &[u8]) -> Vec<u8> {
        let mut types = Vec::new();
        while out.len() >= 5 {
            let len = u32::from_be_bytes([out[1], out[2], out[3], out[4]]) as usize;
            types.push(out[0]);
            out = &out[1 + len..];
        }
        types
    }
}
