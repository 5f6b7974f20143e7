//! The session's named prepared statements: one namespace for the
//! protocol's Parse and SQL's PREPARE, as in PostgreSQL, so `EXECUTE` runs
//! a statement a driver prepared (`_pg3_0`) and `DEALLOCATE ALL` drops
//! both kinds. The unnamed statement ("") lives here too but is never
//! listed, and SQL cannot name it.

use std::collections::HashMap;
use std::rc::Rc;

use common::{PgError, PgResult, SqlState};

use crate::session_api::PreparedStatement;

/// A named statement and what pg_prepared_statements shows of it.
pub struct NamedStatement {
    pub stmt: Rc<PreparedStatement>,
    /// The text it was prepared from: the PREPARE's whole query string, or
    /// Parse's statement.
    pub source_text: String,
    /// timestamptz microseconds.
    pub prepare_time: i64,
    pub from_sql: bool,
}

#[derive(Default)]
pub struct StatementRegistry {
    by_name: HashMap<String, NamedStatement>,
}

pub(crate) fn no_such_statement(name: &str) -> PgError {
    PgError::new(
        SqlState::INVALID_SQL_STATEMENT_NAME,
        format!("prepared statement \"{name}\" does not exist"),
    )
}

impl StatementRegistry {
    pub fn get(&self, name: &str) -> Option<&Rc<PreparedStatement>> {
        self.by_name.get(name).map(|n| &n.stmt)
    }

    /// Stores a statement; a named one must be new (42P05), the unnamed one
    /// is replaced.
    pub fn insert(&mut self, name: &str, stmt: PreparedStatement, from_sql: bool) -> PgResult<()> {
        if !name.is_empty() && self.by_name.contains_key(name) {
            return Err(PgError::new(
                SqlState::DUPLICATE_PREPARED_STATEMENT,
                format!("prepared statement \"{name}\" already exists"),
            ));
        }
        let source_text = stmt.sql.clone();
        self.by_name.insert(
            name.to_string(),
            NamedStatement {
                stmt: Rc::new(stmt),
                source_text,
                prepare_time: types::datetime::now_timestamp(),
                from_sql,
            },
        );
        Ok(())
    }

    /// Whether a named statement exists (the unnamed one does not count).
    pub fn contains(&self, name: &str) -> bool {
        !name.is_empty() && self.by_name.contains_key(name)
    }

    /// Drops a statement; false if there was none.
    pub fn remove(&mut self, name: &str) -> bool {
        self.by_name.remove(name).is_some()
    }

    /// DEALLOCATE ALL: every named statement (the unnamed one stays, as
    /// PostgreSQL's DropAllPreparedStatements leaves it).
    pub fn remove_all_named(&mut self) {
        self.by_name.retain(|name, _| name.is_empty());
    }

    /// The named statements, unnamed one left out.
    pub fn named(&self) -> impl Iterator<Item = (&String, &NamedStatement)> {
        self.by_name.iter().filter(|(name, _)| !name.is_empty())
    }
}
