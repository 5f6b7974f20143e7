//! Tests of the protocol layer against a mock session, over socket pairs.

mod clients;
mod extended;
mod malformed;
mod simple;
mod startup;
mod tls;

use common::interrupt::Interrupts;
use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use common::error::Severity;
use common::{PgError, PgResult, SqlState};
use types::Value;

use super::{serve_connection, BackendRegistry, ProtocolLimits};
use crate::session_api::{
    ColumnDesc, PreparedStatement, ResultSink, SessionFactory, SessionHandler, StartupParams,
};

// ---------------------------------------------------------------- mock session

/// Records what sessions saw, for assertions.
#[derive(Default)]
pub(super) struct MockLog {
    pub startups: Vec<StartupParams>,
    pub events: Vec<String>,
}

#[derive(Default)]
pub(super) struct MockFactory {
    pub log: Arc<Mutex<MockLog>>,
    /// Offered to SSLRequests from TCP clients.
    pub tls: Option<Arc<rustls::ServerConfig>>,
}

impl SessionFactory for MockFactory {
    fn tls(&self) -> Option<Arc<rustls::ServerConfig>> {
        self.tls.clone()
    }

    fn open(
        &self,
        params: &StartupParams,
        _pid: i32,
        cancel: Arc<Interrupts>,
    ) -> PgResult<Box<dyn SessionHandler>> {
        self.log.lock().unwrap().startups.push(params.clone());
        if params.database == "nodb" {
            return Err(PgError::new(
                SqlState::INVALID_CATALOG_NAME,
                "database \"nodb\" does not exist",
            ));
        }
        Ok(Box::new(MockSession {
            cancel,
            status: b'I',
            changed: Vec::new(),
            log: self.log.clone(),
            statements: Default::default(),
            encoding: Default::default(),
        }))
    }
}

struct MockSession {
    cancel: Arc<Interrupts>,
    status: u8,
    changed: Vec<(String, String)>,
    log: Arc<Mutex<MockLog>>,
    statements: crate::session_api::StatementRegistry,
    /// Set to LATIN1 by the statement `latin1`.
    encoding: super::ClientEncoding,
}

fn col(name: &str, type_oid: u32) -> ColumnDesc {
    ColumnDesc {
        name: name.into(),
        table_oid: 0,
        column_id: 0,
        type_oid,
        type_len: if type_oid == 23 { 4 } else { -1 },
        type_mod: -1,
    }
}

/// Result columns of a mock statement, or None if it returns no rows.
fn mock_columns(sql: &str, param_types: &[u32]) -> Option<Vec<ColumnDesc>> {
    let word = sql.split_whitespace().next().unwrap_or("");
    match word {
        "select" => Some(vec![col("a", 23), col("b", 25)]),
        "gen" => Some(vec![col("n", 23)]),
        "echo" => Some(
            param_types
                .iter()
                .enumerate()
                .map(|(i, &t)| col(&format!("p{}", i + 1), t))
                .collect(),
        ),
        "wait" | "panic" => Some(vec![col("x", 23)]),
        _ => None,
    }
}

impl MockSession {
    fn run(&mut self, sql: &str, params: &[Value], sink: &mut dyn ResultSink) -> PgResult<()> {
        let mut words = sql.split_whitespace();
        let word = words.next().unwrap_or("").to_ascii_lowercase();
        let word = word.as_str();
        if self.status == b'E' && word != "rollback" {
            return Err(PgError::new(
                SqlState::IN_FAILED_SQL_TRANSACTION,
                "current transaction is aborted, commands ignored until end of transaction block",
            ));
        }
        match word {
            "select" => {
                sink.columns(&mock_columns(sql, &[]).unwrap())?;
                sink.row(&[Value::Int4(1), Value::Text("one".into())])?;
                sink.row(&[Value::Int4(2), Value::Null])?;
                sink.complete("SELECT 2")
            }
            "gen" => {
                let n: i32 = words
                    .next()
                    .and_then(|w| w.parse().ok())
                    .unwrap_or(0)
                    .min(200_000);
                sink.columns(&mock_columns(sql, &[]).unwrap())?;
                for i in 1..=n {
                    sink.row(&[Value::Int4(i)])?;
                }
                sink.complete(&format!("SELECT {n}"))
            }
            "echo" => {
                let types: Vec<u32> = params
                    .iter()
                    .map(|v| v.type_id().map_or(25, |t| t.oid()))
                    .collect();
                sink.columns(&mock_columns(sql, &types).unwrap())?;
                sink.row(params)?;
                sink.complete("SELECT 1")
            }
            "notice" => {
                let mut n = PgError::new(SqlState::SUCCESSFUL_COMPLETION, "hello");
                n.severity = Severity::Notice;
                sink.notice(&n)?;
                sink.complete("DO")
            }
            "set" => {
                self.changed.push(("x".into(), "on".into()));
                sink.complete("SET")
            }
            "latin1" => {
                self.encoding =
                    super::ClientEncoding::new(types::encoding::PgEncoding::Latin1).unwrap();
                self.changed
                    .push(("client_encoding".into(), "LATIN1".into()));
                sink.complete("SET")
            }
            "begin" | "start" => {
                self.status = b'T';
                sink.complete("BEGIN")
            }
            "commit" | "rollback" => {
                self.status = b'I';
                sink.complete(if word == "commit" {
                    "COMMIT"
                } else {
                    "ROLLBACK"
                })
            }
            "insert" => sink.complete("INSERT 0 1"),
            "wait" => {
                let start = Instant::now();
                while !self.cancel.cancel_pending() {
                    if start.elapsed() > Duration::from_secs(20) {
                        return Err(PgError::internal("never cancelled"));
                    }
                    std::thread::sleep(Duration::from_millis(2));
                }
                Err(PgError::new(
                    SqlState::QUERY_CANCELED,
                    "canceling statement due to user request",
                ))
            }
            "panic" => panic!("mock session panic"),
            "fatal" => Err(PgError::fatal(
                SqlState::ADMIN_SHUTDOWN,
                "terminating connection due to administrator command",
            )),
            _ => {
                if self.status == b'T' {
                    self.status = b'E';
                }
                Err(
                    PgError::syntax(format!("syntax error at or near \"{word}\""))
                        .with_position(1)
                        .with_hint("try select"),
                )
            }
        }
    }
}

impl SessionHandler for MockSession {
    fn statements(&mut self) -> &mut crate::session_api::StatementRegistry {
        &mut self.statements
    }
    fn startup_parameters(&self) -> Vec<(String, String)> {
        vec![
            ("server_version".into(), "17.0".into()),
            ("client_encoding".into(), "UTF8".into()),
            ("integer_datetimes".into(), "on".into()),
        ]
    }
    fn take_changed_parameters(&mut self) -> Vec<(String, String)> {
        std::mem::take(&mut self.changed)
    }
    fn transaction_status(&self) -> u8 {
        self.status
    }
    fn simple_query(&mut self, sql: &str, sink: &mut dyn ResultSink) -> PgResult<bool> {
        let stmts: Vec<&str> = sql
            .split(';')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .collect();
        for stmt in &stmts {
            self.run(stmt, &[], sink)?;
        }
        Ok(!stmts.is_empty())
    }
    fn prepare(&mut self, sql: &str, param_types: &[u32]) -> PgResult<PreparedStatement> {
        let sql = sql.trim();
        let word = sql.split_whitespace().next().unwrap_or("");
        if !sql.is_empty()
            && !matches!(
                word,
                "select"
                    | "gen"
                    | "echo"
                    | "notice"
                    | "set"
                    | "begin"
                    | "commit"
                    | "rollback"
                    | "insert"
                    | "wait"
                    | "panic"
                    | "fatal"
            )
        {
            return Err(PgError::syntax(format!(
                "syntax error at or near \"{word}\""
            )));
        }
        let param_types: Vec<u32> = param_types
            .iter()
            .map(|&t| if t == 0 { 25 } else { t })
            .collect();
        Ok(PreparedStatement {
            sql: sql.to_string(),
            columns: if sql.is_empty() {
                None
            } else {
                mock_columns(sql, &param_types)
            },
            param_types,
            inner: Arc::new(()),
        })
    }
    fn execute(
        &mut self,
        stmt: &PreparedStatement,
        params: &[Value],
        sink: &mut dyn ResultSink,
    ) -> PgResult<()> {
        self.log
            .lock()
            .unwrap()
            .events
            .push(format!("execute {}", stmt.sql));
        self.run(&stmt.sql, params, sink)
    }
    fn on_extended_error(&mut self) {
        if self.status == b'T' {
            self.status = b'E';
        }
        self.log.lock().unwrap().events.push("ext_error".into());
    }
    fn sync(&mut self) -> PgResult<()> {
        self.log.lock().unwrap().events.push("sync".into());
        Ok(())
    }
    fn io_settings(&self) -> types::IoSettings {
        types::IoSettings::UTC
    }
    fn client_encoding(&self) -> super::ClientEncoding {
        self.encoding
    }
}

// ---------------------------------------------------------------- test client

pub(super) struct Server {
    pub factory: Arc<MockFactory>,
    pub registry: Arc<BackendRegistry>,
    pub limits: ProtocolLimits,
}

impl Server {
    pub fn new() -> Self {
        Self::with_limits(ProtocolLimits::default())
    }
    pub fn with_limits(limits: ProtocolLimits) -> Self {
        Server {
            factory: Arc::new(MockFactory::default()),
            registry: Arc::new(BackendRegistry::new()),
            limits,
        }
    }

    /// A raw connection (no startup sent yet).
    pub fn connect(&self) -> Client {
        self.connect_from(crate::auth::ClientAddr::Local)
    }

    /// A raw connection the server takes as coming from `addr` (a TCP
    /// client for `ClientAddr::Host`, though it is a socket pair).
    pub fn connect_from(&self, addr: crate::auth::ClientAddr) -> Client {
        let (a, b) = UnixStream::pair().unwrap();
        a.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
        let factory = self.factory.clone();
        let registry = self.registry.clone();
        let limits = self.limits.clone();
        let thread = std::thread::spawn(move || {
            let shared = crate::connections::ConnectionShared::default();
            super::serve_client(b, addr, &*factory, &registry, &limits, &shared);
        });
        Client {
            s: a,
            thread: Some(thread),
            pid: 0,
            secret: 0,
        }
    }

    /// A connection through startup, up to the first ReadyForQuery.
    pub fn login(&self) -> Client {
        let mut c = self.connect();
        c.startup(&[("user", "alice"), ("database", "db")]);
        let msgs = c.until_ready();
        assert_eq!(msgs.first().map(String::as_str), Some("R(0)"), "{msgs:?}");
        assert_eq!(msgs.last().map(String::as_str), Some("Z(I)"), "{msgs:?}");
        c
    }
}

pub(super) struct Client {
    pub s: UnixStream,
    thread: Option<JoinHandle<()>>,
    pub pid: i32,
    pub secret: i32,
}

fn cstr(out: &mut Vec<u8>, s: &str) {
    out.extend_from_slice(s.as_bytes());
    out.push(0);
}

fn take<const N: usize>(b: &mut &[u8]) -> [u8; N] {
    let (head, rest) = b.split_at(N);
    *b = rest;
    head.try_into().unwrap()
}

fn take_cstr(b: &mut &[u8]) -> String {
    let n = b.iter().position(|&c| c == 0).expect("unterminated string");
    let s = String::from_utf8(b[..n].to_vec()).unwrap();
    *b = &b[n + 1..];
    s
}

/// A compact rendering of a backend message, for readable assertions.
fn render(ty: u8, body: &[u8]) -> String {
    let mut b = body;
    match ty {
        b'R' => format!("R({})", i32::from_be_bytes(take(&mut b))),
        b'S' => {
            let name = take_cstr(&mut b);
            format!("S({name}={})", take_cstr(&mut b))
        }
        b'K' => "K".into(),
        b'Z' => format!("Z({})", b[0] as char),
        b'T' => {
            let n = u16::from_be_bytes(take(&mut b));
            let cols: Vec<String> = (0..n)
                .map(|_| {
                    let name = take_cstr(&mut b);
                    let _table: [u8; 6] = take(&mut b);
                    let oid = u32::from_be_bytes(take(&mut b));
                    let _len: [u8; 6] = take(&mut b);
                    let fmt = i16::from_be_bytes(take(&mut b));
                    format!("{name}:{oid}{}", if fmt == 1 { "b" } else { "" })
                })
                .collect();
            format!("T({})", cols.join(","))
        }
        b'D' => {
            let n = u16::from_be_bytes(take(&mut b));
            let vals: Vec<String> = (0..n)
                .map(|_| {
                    let len = i32::from_be_bytes(take(&mut b));
                    if len < 0 {
                        return "NULL".to_string();
                    }
                    let (v, rest) = b.split_at(len as usize);
                    b = rest;
                    match std::str::from_utf8(v) {
                        Ok(s) if s.bytes().all(|c| (b' '..=b'~').contains(&c)) => s.to_string(),
                        _ => format!("{v:?}"),
                    }
                })
                .collect();
            format!("D({})", vals.join(","))
        }
        b'C' => format!("C({})", take_cstr(&mut b)),
        b'E' | b'N' => {
            let mut fields = Vec::new();
            while b[0] != 0 {
                let [f] = take(&mut b);
                let v = take_cstr(&mut b);
                if matches!(f, b'S' | b'C' | b'M') {
                    fields.push(v);
                }
            }
            format!("{}({})", ty as char, fields.join(":"))
        }
        b't' => {
            let n = u16::from_be_bytes(take(&mut b));
            let oids: Vec<String> = (0..n)
                .map(|_| u32::from_be_bytes(take(&mut b)).to_string())
                .collect();
            format!("t({})", oids.join(","))
        }
        b'v' => "v".into(),
        other => (other as char).to_string(),
    }
}

impl Client {
    pub fn send_raw(&mut self, bytes: &[u8]) {
        self.s.write_all(bytes).unwrap();
    }

    pub fn send(&mut self, ty: u8, body: &[u8]) {
        let mut m = vec![ty];
        m.extend_from_slice(&(body.len() as u32 + 4).to_be_bytes());
        m.extend_from_slice(body);
        self.send_raw(&m);
    }

    pub fn startup(&mut self, params: &[(&str, &str)]) {
        let mut body = 196608u32.to_be_bytes().to_vec();
        for (k, v) in params {
            cstr(&mut body, k);
            cstr(&mut body, v);
        }
        body.push(0);
        self.send_packet(&body);
    }

    /// A startup-phase packet: length word, then body.
    pub fn send_packet(&mut self, body: &[u8]) {
        let mut m = (body.len() as u32 + 4).to_be_bytes().to_vec();
        m.extend_from_slice(body);
        self.send_raw(&m);
    }

    pub fn query(&mut self, sql: &str) {
        let mut b = Vec::new();
        cstr(&mut b, sql);
        self.send(b'Q', &b);
    }

    pub fn parse(&mut self, name: &str, sql: &str, types: &[u32]) {
        let mut b = Vec::new();
        cstr(&mut b, name);
        cstr(&mut b, sql);
        b.extend_from_slice(&(types.len() as u16).to_be_bytes());
        for t in types {
            b.extend_from_slice(&t.to_be_bytes());
        }
        self.send(b'P', &b);
    }

    pub fn bind(
        &mut self,
        portal: &str,
        stmt: &str,
        pformats: &[i16],
        params: &[Option<&[u8]>],
        rformats: &[i16],
    ) {
        let mut b = Vec::new();
        cstr(&mut b, portal);
        cstr(&mut b, stmt);
        b.extend_from_slice(&(pformats.len() as u16).to_be_bytes());
        for f in pformats {
            b.extend_from_slice(&f.to_be_bytes());
        }
        b.extend_from_slice(&(params.len() as u16).to_be_bytes());
        for p in params {
            match p {
                None => b.extend_from_slice(&(-1i32).to_be_bytes()),
                Some(v) => {
                    b.extend_from_slice(&(v.len() as i32).to_be_bytes());
                    b.extend_from_slice(v);
                }
            }
        }
        b.extend_from_slice(&(rformats.len() as u16).to_be_bytes());
        for f in rformats {
            b.extend_from_slice(&f.to_be_bytes());
        }
        self.send(b'B', &b);
    }

    pub fn describe(&mut self, kind: u8, name: &str) {
        let mut b = vec![kind];
        cstr(&mut b, name);
        self.send(b'D', &b);
    }

    pub fn execute(&mut self, portal: &str, max_rows: i32) {
        let mut b = Vec::new();
        cstr(&mut b, portal);
        b.extend_from_slice(&max_rows.to_be_bytes());
        self.send(b'E', &b);
    }

    pub fn close(&mut self, kind: u8, name: &str) {
        let mut b = vec![kind];
        cstr(&mut b, name);
        self.send(b'C', &b);
    }

    pub fn sync(&mut self) {
        self.send(b'S', &[]);
    }

    /// The next backend message, or None at EOF.
    pub fn recv(&mut self) -> Option<(u8, Vec<u8>)> {
        let mut head = [0u8; 5];
        match self.s.read_exact(&mut head) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return None,
            Err(e) => panic!("read failed: {e}"),
        }
        let len = u32::from_be_bytes(head[1..].try_into().unwrap()) as usize;
        let mut body = vec![0; len - 4];
        self.s.read_exact(&mut body).unwrap();
        if head[0] == b'K' {
            self.pid = i32::from_be_bytes(body[..4].try_into().unwrap());
            self.secret = i32::from_be_bytes(body[4..].try_into().unwrap());
        }
        Some((head[0], body))
    }

    /// Rendered messages up to and including ReadyForQuery (or EOF).
    pub fn until_ready(&mut self) -> Vec<String> {
        let mut out = Vec::new();
        while let Some((ty, body)) = self.recv() {
            out.push(render(ty, &body));
            if ty == b'Z' {
                break;
            }
        }
        out
    }

    /// Everything up to EOF; then the server thread must have ended cleanly.
    pub fn until_eof(&mut self) -> Vec<String> {
        let mut out = Vec::new();
        while let Some((ty, body)) = self.recv() {
            out.push(render(ty, &body));
        }
        self.join();
        out
    }

    /// Waits for the server thread; panics if it panicked.
    pub fn join(&mut self) {
        if let Some(t) = self.thread.take() {
            t.join().expect("serve_connection panicked");
        }
    }

    /// Reads one raw byte (the answer to SSLRequest).
    pub fn recv_byte(&mut self) -> u8 {
        let mut b = [0u8; 1];
        self.s.read_exact(&mut b).unwrap();
        b[0]
    }
}

/// Strings for assertions.
pub(super) fn v(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| s.to_string()).collect()
}
