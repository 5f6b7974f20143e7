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

/// With `SQL_FILES_REFERENCE` set to a connection string of another server
/// (PostgreSQL 15), the files run there instead, each in a database made
/// and dropped for it: how their expected results are checked.
fn run_against_reference(conn: &str, files: &[PathBuf]) {
    let mut admin = postgres::Client::connect(conn, postgres::NoTls).expect("reference server");
    let mut failures = Vec::new();
    for (i, file) in files.iter().enumerate() {
        let db = format!("sqlfile_ref{i}");
        for sql in [
            format!("drop database if exists {db}"),
            format!("create database {db}"),
        ] {
            admin.batch_execute(&sql).unwrap();
        }
        let conn = format!("{conn} dbname={db}");
        let mut runner = Runner::new(move || {
            let conn = conn.clone();
            async move {
                Ok(Pg(
                    postgres::Client::connect(&conn, postgres::NoTls).map_err(PgError)?
                ))
            }
        });
        if let Err(e) = runner.run_file(file) {
            failures.push(format!("{}:\n{e}", file.display()));
        }
        drop(runner);
        admin.batch_execute(&format!("drop database {db}")).unwrap();
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn sql_files_pass() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/sql");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("tests/sql exists")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "slt"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no .slt files in {}", dir.display());
    if let Ok(only) = std::env::var("SQL_FILES_ONLY") {
        files.retain(|f| f.file_stem().is_some_and(|s| s == only.as_str()));
        assert!(!files.is_empty(), "no file {only}.slt");
    }
    if let Ok(conn) = std::env::var("SQL_FILES_REFERENCE") {
        return run_against_reference(&conn, &files);
    }
    let s = TestServer::start();
    let mut failures = Vec::new();
    for (i, file) in files.iter().enumerate() {
        let db = format!("sqlfile{i}");
        s.psql(&format!("create database {db}"));
        let cfg = s.config().dbname(&db).to_owned();
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
