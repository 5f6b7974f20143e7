//! SQL tests as files (`tests/sql/*.slt`, sqllogictest format), run against a
//! real server through the `postgres` crate's simple query protocol. Each file
//! gets a fresh database. The expected results were produced by PostgreSQL 15:
//! the same files pass there with `sqllogictest --engine postgres`.

mod support;

use std::path::PathBuf;

use postgres::SimpleQueryMessage;
use sqllogictest::{DBOutput, DefaultColumnType, Runner, DB};
use support::TestServer;

struct Pg(postgres::Client);

#[derive(Debug)]
struct PgError(postgres::Error);

impl std::fmt::Display for PgError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0.as_db_error() {
            Some(e) => write!(f, "(sqlstate {}) {}", e.code().code(), e.message()),
            None => write!(f, "{}", self.0),
        }
    }
}

impl std::error::Error for PgError {}

impl DB for Pg {
    type Error = PgError;
    type ColumnType = DefaultColumnType;

    fn run(&mut self, sql: &str) -> Result<DBOutput<DefaultColumnType>, PgError> {
        let messages = self.0.simple_query(sql).map_err(PgError)?;
        let mut rows = Vec::new();
        let mut width = None;
        let mut count = 0;
        for m in messages {
            match m {
                SimpleQueryMessage::RowDescription(cols) => width = Some(cols.len()),
                SimpleQueryMessage::Row(r) => {
                    width = Some(r.len());
                    rows.push(
                        (0..r.len())
                            .map(|i| match r.get(i) {
                                None => "NULL".to_string(),
                                Some("") => "(empty)".to_string(),
                                Some(v) => v.to_string(),
                            })
                            .collect(),
                    );
                }
                SimpleQueryMessage::CommandComplete(n) => count = n,
                _ => {}
            }
        }
        Ok(match width {
            Some(w) => DBOutput::Rows {
                types: vec![DefaultColumnType::Any; w],
                rows,
            },
            None => DBOutput::StatementComplete(count),
        })
    }

    fn error_sql_state(err: &PgError) -> Option<String> {
        err.0.code().map(|c| c.code().to_string())
    }
}

/// Where the files run: a server of our own, or, with
/// `SCALEGRES_SLT_REFERENCE=host:port`, a running PostgreSQL (user postgres,
/// no password) to check new expectations against.
enum Target {
    Own(TestServer),
    Reference(String, u16),
}

impl Target {
    fn create_database(&self, db: &str) {
        match self {
            Target::Own(s) => {
                s.psql(&format!("create database {db}"));
            }
            Target::Reference(..) => {
                let mut c = self.config("postgres").connect(postgres::NoTls).unwrap();
                c.batch_execute(&format!("drop database if exists {db}"))
                    .unwrap();
                c.batch_execute(&format!("create database {db}")).unwrap();
            }
        }
    }

    fn config(&self, db: &str) -> postgres::Config {
        match self {
            Target::Own(s) => s.config().dbname(db).to_owned(),
            Target::Reference(host, port) => {
                let mut c = postgres::Config::new();
                c.host(host).port(*port).user("postgres").dbname(db);
                c
            }
        }
    }
}

fn target() -> Target {
    match std::env::var("SCALEGRES_SLT_REFERENCE") {
        Ok(addr) => {
            let (host, port) = addr
                .rsplit_once(':')
                .expect("SCALEGRES_SLT_REFERENCE=host:port");
            Target::Reference(host.to_string(), port.parse().expect("a port number"))
        }
        Err(_) => Target::Own(TestServer::start()),
    }
}

#[test]
fn sql_files_pass() {
    let target = target();
    // SCALEGRES_SLT_FILTER=name runs only the files whose name contains it.
    let filter = std::env::var("SCALEGRES_SLT_FILTER").unwrap_or_default();
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/sql");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("tests/sql exists")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "slt"))
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().contains(&filter))
        })
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no .slt files in {}", dir.display());
    let mut failures = Vec::new();
    for (i, file) in files.iter().enumerate() {
        let db = format!("sqlfile{i}");
        target.create_database(&db);
        let cfg = target.config(&db);
        let mut runner = Runner::new(move || {
            let cfg = cfg.clone();
            async move { Ok(Pg(cfg.connect(postgres::NoTls).map_err(PgError)?)) }
        });
        if let Err(e) = runner.run_file(file) {
            failures.push(format!("{}:\n{e}", file.display()));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// The sqllogictest files of the shared conformance material (SQLite's
/// corpus prepared for PostgreSQL: `../shared/conformance/sqllogictest`
/// beside the repository, or `SCALEGRES_CONFORMANCE_DIR`), through the
/// simple protocol, labelled `postgresql` for their skipif/onlyif lines.
/// The material is not part of the repository: without it the test says so
/// and passes. Its README runs the same files through the extended
/// protocol with the `sqllogictest` binary.
#[test]
fn conformance_sqllogictest_files_pass() {
    let dir = std::env::var("SCALEGRES_CONFORMANCE_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|_| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/conformance")
        })
        .join("sqllogictest");
    if !dir.is_dir() {
        eprintln!("no conformance material at {}: skipped", dir.display());
        return;
    }
    let mut files = Vec::new();
    let mut stack = vec![dir.clone()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|e| e == "test") {
                files.push(p);
            }
        }
    }
    files.sort();
    assert!(!files.is_empty(), "no .test files in {}", dir.display());
    let target = target();
    let mut failures = Vec::new();
    for (i, file) in files.iter().enumerate() {
        let db = format!("conformance{i}");
        target.create_database(&db);
        let cfg = target.config(&db);
        let mut runner = Runner::new(move || {
            let cfg = cfg.clone();
            async move { Ok(Pg(cfg.connect(postgres::NoTls).map_err(PgError)?)) }
        });
        runner.add_label("postgresql");
        if let Err(e) = runner.run_file(file) {
            failures.push(format!("{}:\n{e}", file.display()));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
