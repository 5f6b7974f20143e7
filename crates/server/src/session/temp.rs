//! The session's temporary schema (`pg_temp_N`, N the backend pid, unique
//! among live sessions): created by the session's first statement that
//! creates a temporary relation, searched first for relations (the search
//! path the binder gets names it), dropped with everything in it by DISCARD
//! TEMP / DISCARD ALL and when the session ends, however it ends.
//!
//! The schema is an ordinary catalog row, so its creation is transactional:
//! whether the session has one is read from the catalog version its
//! statements see, never cached, and a rolled-back creation leaves none.
//! A schema of the same name found at first use is a leftover of a server
//! that stopped before its session could drop it (PostgreSQL's rule too):
//! it is emptied first.

use sql::parse::ParsedStatement;
use sql::plan::{BoundStatement, OnCommit};
use sqlparser::ast::{SetExpr, Statement};

use common::PgResult;

use super::Session;
use crate::autovacuum::DiscardSink;

/// Whether `parsed` creates a temporary relation (it needs the schema
/// before it is bound).
fn creates_temp_relation(parsed: &ParsedStatement) -> bool {
    match parsed {
        ParsedStatement::Sql(stmt, _) => {
            matches!(&**stmt, Statement::CreateTable(ct) if ct.temporary)
                || matches!(&**stmt, Statement::Query(q)
                    if matches!(q.body.as_ref(), SetExpr::Select(s)
                        if s.into.as_ref().is_some_and(|i| i.temporary)))
        }
        _ => false,
    }
}

impl Session {
    pub(super) fn temp_schema_name(&self) -> String {
        format!("pg_temp_{}", self.pid)
    }

    /// The session's temporary schema in the catalog its statements see.
    pub(super) fn temp_namespace(&self) -> Option<catalog::Namespace> {
        self.catalog_version()
            .namespace_by_name(self.db_oid, &self.temp_schema_name())
            .cloned()
    }

    /// Before binding `parsed`: the temporary schema it creates into.
    pub(super) fn prepare_temp_creation(&mut self, parsed: &ParsedStatement) -> PgResult<()> {
        if !creates_temp_relation(parsed) || self.in_failed_block() {
            return Ok(());
        }
        let existing = self.temp_namespace();
        if existing.is_some() && self.temp_schema_taken {
            return Ok(());
        }
        if existing.is_some() {
            // A crashed server's leftover: its relations are garbage.
            self.drop_temp_schema()?;
        }
        let create = BoundStatement::CreateSchema {
            name: self.temp_schema_name(),
            if_not_exists: false,
        };
        self.run(&create, &[], &mut DiscardSink)?;
        self.temp_schema_taken = true;
        Ok(())
    }

    /// Drops the temporary schema and every relation in it, if there is one.
    pub(super) fn drop_temp_schema(&mut self) -> PgResult<()> {
        let Some(ns) = self.temp_namespace() else {
            return Ok(());
        };
        let drop = BoundStatement::DropSchema {
            schemas: vec![ns],
            missing: Vec::new(),
            cascade: true,
        };
        self.on_commit.clear();
        self.run(&drop, &[], &mut DiscardSink)
    }

    /// At session end (the open transaction already rolled back): the
    /// temporary relations go, even when a terminate request ended it.
    pub(super) fn drop_temp_schema_at_exit(&mut self) {
        if self.temp_namespace().is_none() {
            return;
        }
        // The session's own interrupt flags (a terminate request, a lost
        // client) would stop the drop at its first check: it runs under
        // fresh ones, nobody else's to set.
        self.interrupts = std::sync::Arc::new(common::interrupt::Interrupts::new());
        if let Err(e) = self.drop_temp_schema() {
            crate::log(&format!(
                "could not drop temporary schema {}: {}",
                self.temp_schema_name(),
                e.message
            ));
        }
    }
}

/// An identifier as SQL text, quoted.
fn quote_ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

impl Session {
    /// After a statement ran: a temporary table created with ON COMMIT
    /// DELETE ROWS or DROP is remembered (by oid: a rolled-back creation or
    /// a later DROP leaves an entry that finds no table and goes).
    pub(super) fn note_on_commit(&mut self, stmt: &BoundStatement) {
        if let BoundStatement::WithModifying { statement, .. } = stmt {
            return self.note_on_commit(statement);
        }
        let BoundStatement::CreateTable {
            name,
            namespace,
            on_commit,
            ..
        } = stmt
        else {
            return;
        };
        if *on_commit == OnCommit::PreserveRows {
            return;
        }
        if let Some(t) = self.catalog_version().table(self.db_oid, *namespace, name) {
            if !self.on_commit.iter().any(|(oid, _)| *oid == t.oid) {
                self.on_commit.push((t.oid, *on_commit));
            }
        }
    }

    /// Once no transaction is open: ON COMMIT DROP tables are dropped and ON
    /// COMMIT DELETE ROWS tables emptied. PostgreSQL does both inside the
    /// committing transaction; here each runs just after it, in a
    /// transaction of its own, which nobody can tell apart: only this
    /// session sees its temporary tables, and a crash in between leaves
    /// them to be dropped at the next start anyway. After a rollback the
    /// same steps find nothing to undo (the rows and a table created in it
    /// are invisible already).
    pub(super) fn run_on_commit_actions(&mut self) -> PgResult<()> {
        if self.on_commit.is_empty() || !matches!(self.txn, super::TxnState::Idle) {
            return Ok(());
        }
        // Taken while they run: the statements below end transactions too.
        let actions = std::mem::take(&mut self.on_commit);
        let mut kept = Vec::new();
        let mut result = Ok(());
        for (oid, action) in actions {
            let catalog = self.catalog_version();
            let Some(table) = catalog.tables.get(&oid) else {
                continue;
            };
            let Some(ns) = catalog.namespaces.get(&table.namespace) else {
                continue;
            };
            let qualified = format!("{}.{}", quote_ident(&ns.name), quote_ident(&table.name));
            let sql = match action {
                OnCommit::Drop => format!("DROP TABLE {qualified}"),
                _ => {
                    kept.push((oid, action));
                    format!("DELETE FROM {qualified}")
                }
            };
            if result.is_ok() {
                result = self.run_internal_sql(&sql);
            }
        }
        kept.append(&mut self.on_commit);
        self.on_commit = kept;
        result
    }

    fn run_internal_sql(&mut self, sql: &str) -> PgResult<()> {
        let stmts = sql::parse::split_statements(sql);
        self.run_parsed(sql, &stmts[0], &mut DiscardSink)
    }
}
