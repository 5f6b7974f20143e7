//! SQL cursors: DECLARE, FETCH, MOVE, CLOSE and their life across
//! transactions, as PostgreSQL 15 has them.
//!
//! How a cursor keeps its rows depends on how it may move:
//! - NO SCROLL (or a plan that cannot run backwards): the operator tree stays
//!   suspended between FETCHes, as a protocol portal with a row limit does,
//!   and nothing is kept, however large the result.
//! - SCROLL: rows are kept as they are first read (PostgreSQL's tuplestore),
//!   so going back re-reads them.
//! - Neither, over a plan PostgreSQL could run backwards (a scan, a sort):
//!   such cursors may scroll but drivers almost only read them forwards
//!   (psycopg's named cursors), so nothing is kept; going back runs the plan
//!   again from its start under the DECLARE's snapshot.
//!
//! A WITH HOLD cursor is read to its end when its transaction commits (at
//! DECLARE when there is no transaction block) and survives from the kept
//! rows; a rollback drops the cursors its transaction declared.

use std::collections::HashMap;
use std::sync::Arc;

use catalog::CatalogData;
use common::{PgError, PgResult, SqlState, Xid};
use exec::system_views::CursorInfo;
use exec::Row;
use sql::cursor::{supports_backward_scan, CursorOptions, FetchStmt};
use sql::plan::BoundStatement;
use txn::Snapshot;
use types::Value;

use super::fetch::{Fetcher, Position, RowReader};
use super::{column_desc, Session, TxnState, ROWS_PER_INTERRUPT_CHECK};
use crate::query_cursor::RunningPlan;
use crate::session_api::{ColumnDesc, ResultSink};

/// The session's open cursors.
#[derive(Default)]
pub(super) struct SqlCursors {
    open: HashMap<String, SqlCursor>,
    /// A multi-statement simple query is running: its implicit block is a
    /// transaction block for DECLARE (not so the extended protocol's).
    pub in_multi_statement_query: bool,
}

struct SqlCursor {
    info: CursorInfo,
    columns: Vec<ColumnDesc>,
    /// Declared in the transaction still open: a rollback drops it.
    declared_in_open_transaction: bool,
    /// How many savepoints were open at its DECLARE: rolling back to one
    /// of those (0-based index below this) closes it, as PostgreSQL's
    /// AtSubAbort_Portals; releasing one moves it out to the parent.
    savepoint_depth: usize,
    /// Its rows are all kept (WITH HOLD after its commit).
    persisted: bool,
    /// An error happened while it ran (PostgreSQL's failed portal).
    failed: bool,
    pos: Position,
    /// Taken out while a FETCH runs, so the session can be borrowed.
    rows: Option<CursorRows>,
}

/// What a cursor's query runs under, owned for the cursor's life.
struct CursorQuery {
    bound: Arc<BoundStatement>,
    catalog: Arc<CatalogData>,
    snapshot: Snapshot,
    xid: Xid,
    cid: u32,
    params: Vec<Value>,
}

/// A cursor's source of rows: kept rows, then the live plan.
struct CursorRows {
    /// None once all rows are kept (a persisted WITH HOLD cursor).
    query: Option<CursorQuery>,
    live: Option<RunningPlan>,
    /// Rows the live plan has produced since it was (re)started.
    produced: u64,
    /// The number of rows, once the plan ran out.
    total: Option<u64>,
    /// Whether rows are kept as they are produced.
    keep: bool,
    kept: Vec<Row>,
    /// The row number of `kept[0]`.
    kept_from: u64,
}

fn no_such_cursor(name: &str) -> PgError {
    PgError::new(
        SqlState::INVALID_CURSOR_NAME,
        format!("cursor \"{name}\" does not exist"),
    )
}

impl CursorRows {
    fn stored(&self, k: u64) -> Option<&Row> {
        k.checked_sub(self.kept_from)
            .and_then(|i| self.kept.get(usize::try_from(i).ok()?))
    }
}

/// The session reading a cursor's rows.
struct SessionReader<'s> {
    session: &'s mut Session,
    rows: &'s mut CursorRows,
}

impl RowReader for SessionReader<'_> {
    fn read(
        &mut self,
        from: u64,
        max: u64,
        mut emit: Option<&mut dyn FnMut(Row) -> PgResult<()>>,
    ) -> PgResult<u64> {
        let rows = &mut *self.rows;
        let mut k = from;
        let mut n = 0;
        while n < max {
            let Some(row) = rows.stored(k) else { break };
            if let Some(e) = emit.as_mut() {
                e(row.clone())?;
            }
            k += 1;
            n += 1;
        }
        if n == max || rows.total.is_some_and(|t| k > t) {
            return Ok(n);
        }
        let Some(query) = &rows.query else {
            return Ok(n);
        };
        // Row k was produced but not kept: run the plan again from its start.
        if rows.produced >= k || rows.live.is_none() {
            rows.live = Some(self.session.start_plan(query)?);
            rows.produced = 0;
        }
        let CursorRows {
            query,
            live,
            produced,
            total,
            keep,
            kept,
            kept_from,
        } = rows;
        let query = query.as_ref().expect("checked above");
        let plan = live.as_mut().expect("started above");
        let mut ended = false;
        self.session.with_env(
            &query.catalog,
            &query.snapshot,
            query.xid,
            query.cid,
            &query.params,
            |env| -> PgResult<()> {
                while n < max {
                    let Some(row) = plan.with_dependent_mut(|_, op| op.next(env))? else {
                        ended = true;
                        break;
                    };
                    *produced += 1;
                    if (*produced).is_multiple_of(ROWS_PER_INTERRUPT_CHECK) {
                        env.check_cancel()?;
                    }
                    // Kept rows stay one contiguous run.
                    if *keep && *produced == *kept_from + kept.len() as u64 {
                        kept.push(row.clone());
                    }
                    if *produced >= k {
                        k += 1;
                        n += 1;
                        if let Some(e) = emit.as_mut() {
                            e(row)?;
                        }
                    }
                }
                Ok(())
            },
        )?;
        if ended {
            *total = Some(*produced);
            *live = None;
        }
        Ok(n)
    }
}

impl Session {
    /// Builds the operator tree of a cursor's query under its snapshot.
    fn start_plan(&mut self, q: &CursorQuery) -> PgResult<RunningPlan> {
        let bound = q.bound.clone();
        self.with_env(&q.catalog, &q.snapshot, q.xid, q.cid, &q.params, |env| {
            RunningPlan::try_new(bound, |b| match &**b {
                BoundStatement::Query { plan, .. } => exec::build(plan, env, None),
                _ => Err(PgError::internal("a cursor's statement is a query")),
            })
        })
    }

    /// Whether DECLARE without HOLD may run now: inside BEGIN, or in the
    /// implicit block of a multi-statement simple query.
    fn in_transaction_block(&self) -> bool {
        match &self.txn {
            TxnState::Block(t) => !t.implicit || self.cursors.in_multi_statement_query,
            TxnState::Idle => false,
        }
    }

    pub(super) fn run_cursor_command(
        &mut self,
        stmt: &BoundStatement,
        params: &[Value],
        sink: &mut dyn ResultSink,
    ) -> PgResult<()> {
        match stmt {
            BoundStatement::DeclareCursor {
                name,
                options,
                query,
            } => {
                self.declare_cursor(name, *options, query, params)?;
                sink.complete("DECLARE CURSOR")
            }
            BoundStatement::Fetch(f) => self.fetch_cursor(f, sink),
            BoundStatement::CloseCursor(Some(name)) => {
                self.cursors
                    .open
                    .remove(name)
                    .ok_or_else(|| no_such_cursor(name))?;
                sink.complete("CLOSE CURSOR")
            }
            BoundStatement::CloseCursor(None) => {
                self.cursors.open.clear();
                sink.complete("CLOSE CURSOR ALL")
            }
            _ => Err(PgError::internal("not a cursor statement")),
        }
    }

    fn declare_cursor(
        &mut self,
        name: &str,
        options: CursorOptions,
        query: &BoundStatement,
        params: &[Value],
    ) -> PgResult<()> {
        let explicit_block = matches!(&self.txn, TxnState::Block(t) if !t.implicit);
        if !options.hold && !self.in_transaction_block() {
            return Err(PgError::new(
                SqlState::NO_ACTIVE_SQL_TRANSACTION,
                "DECLARE CURSOR can only be used in transaction blocks",
            ));
        }
        if self.cursors.open.contains_key(name) {
            return Err(PgError::new(
                SqlState::DUPLICATE_CURSOR,
                format!("cursor \"{name}\" already exists"),
            ));
        }
        let BoundStatement::Query { plan, columns } = query else {
            return Err(PgError::internal("DECLARE of a statement that is no query"));
        };
        let scrollable = options
            .scroll
            .unwrap_or_else(|| supports_backward_scan(plan));
        // The cursor runs in the command it was declared in: later
        // statements of the transaction do not change what it sees.
        // FOR UPDATE: rows are locked as they are fetched, by this xid.
        let (xid, cid, snapshot) = self.query_txn(query)?;
        let query = CursorQuery {
            bound: Arc::new(query.clone()),
            catalog: self.catalog_version(),
            snapshot,
            xid,
            cid,
            params: params.to_vec(),
        };
        let live = self.start_plan(&query)?;
        let mut rows = CursorRows {
            query: Some(query),
            live: Some(live),
            produced: 0,
            total: None,
            keep: options.scroll == Some(true),
            kept: Vec::new(),
            kept_from: 1,
        };
        let mut persisted = false;
        // Outside BEGIN the transaction ends with this statement: a held
        // cursor is read to its end now, as PostgreSQL does at that commit.
        if options.hold && !explicit_block {
            self.persist_rows(&mut rows, scrollable, Position::default())?;
            persisted = true;
        }
        let cursor = SqlCursor {
            info: CursorInfo {
                name: name.to_string(),
                statement: self.status.fields.lock().query.clone(),
                is_holdable: options.hold,
                is_binary: options.binary,
                is_scrollable: scrollable,
                creation_time: types::datetime::now_timestamp(),
            },
            columns: columns.iter().map(column_desc).collect(),
            declared_in_open_transaction: !persisted,
            savepoint_depth: match &self.txn {
                TxnState::Block(t) => t.savepoints.len(),
                TxnState::Idle => 0,
            },
            persisted,
            failed: false,
            pos: Position::default(),
            rows: Some(rows),
        };
        self.cursors.open.insert(name.to_string(), cursor);
        Ok(())
    }

    /// Reads a cursor's remaining rows into memory and lets go of its plan
    /// and snapshot: all rows of a scrollable cursor, those after `pos` of
    /// another.
    fn persist_rows(
        &mut self,
        rows: &mut CursorRows,
        scrollable: bool,
        pos: Position,
    ) -> PgResult<()> {
        let first = if scrollable { 1 } else { pos.cur + 1 };
        if !rows.keep || rows.kept_from > first {
            rows.kept.clear();
            rows.kept_from = first;
            rows.keep = true;
        }
        if rows.total.is_none_or(|t| t >= first) {
            let mut reader = SessionReader {
                session: self,
                rows: &mut *rows,
            };
            reader.read(first, u64::MAX, None)?;
        }
        rows.live = None;
        rows.query = None;
        Ok(())
    }

    fn fetch_cursor(&mut self, f: &FetchStmt, sink: &mut dyn ResultSink) -> PgResult<()> {
        let cursor = self
            .cursors
            .open
            .get_mut(&f.cursor)
            .ok_or_else(|| no_such_cursor(&f.cursor))?;
        if cursor.failed {
            return Err(PgError::new(
                SqlState::OBJECT_NOT_IN_PREREQUISITE_STATE,
                format!("portal \"{}\" cannot be run", f.cursor),
            ));
        }
        let Some(mut rows) = cursor.rows.take() else {
            return Err(PgError::internal("cursor is already running"));
        };
        let (mut pos, scrollable) = (cursor.pos, cursor.info.is_scrollable);
        let columns = cursor.columns.clone();
        let binary = cursor.info.is_binary;
        let result = (|| -> PgResult<u64> {
            let mut reader = SessionReader {
                session: self,
                rows: &mut rows,
            };
            let mut fetcher = Fetcher {
                pos,
                scrollable,
                reader: &mut reader,
            };
            let n = if f.is_move {
                fetcher.run(f.direction, f.count, None)?
            } else {
                if binary {
                    sink.binary_columns(&columns)?;
                } else {
                    sink.columns(&columns)?;
                }
                fetcher.run(f.direction, f.count, Some(&mut |row| sink.row(&row)))?
            };
            pos = fetcher.pos;
            Ok(n)
        })();
        let cursor = self
            .cursors
            .open
            .get_mut(&f.cursor)
            .expect("a FETCH cannot close its cursor");
        cursor.rows = Some(rows);
        cursor.pos = pos;
        let n = result.inspect_err(|_| cursor.failed = true)?;
        sink.complete(&format!("{} {n}", if f.is_move { "MOVE" } else { "FETCH" }))
    }

    /// COMMIT: reads every WITH HOLD cursor of the transaction to its end,
    /// so it survives; an error here makes the COMMIT fail and roll back.
    pub(super) fn persist_holdable_cursors(&mut self) -> PgResult<()> {
        let names: Vec<String> = self
            .cursors
            .open
            .iter()
            .filter(|(_, c)| c.info.is_holdable && !c.persisted && !c.failed)
            .map(|(n, _)| n.clone())
            .collect();
        for name in names {
            let cursor = self.cursors.open.get_mut(&name).expect("listed above");
            let (pos, scrollable) = (cursor.pos, cursor.info.is_scrollable);
            let mut rows = cursor.rows.take().expect("no FETCH runs now");
            let result = self.persist_rows(&mut rows, scrollable, pos);
            let cursor = self.cursors.open.get_mut(&name).expect("listed above");
            cursor.rows = Some(rows);
            result?;
            cursor.persisted = true;
        }
        Ok(())
    }

    /// The end of a transaction: a commit keeps only the persisted WITH
    /// HOLD cursors, a rollback drops those the transaction declared.
    pub(super) fn close_cursors_at_transaction_end(&mut self, committed: bool) {
        self.cursors.open.retain(|_, c| {
            if committed {
                c.persisted
            } else {
                !c.declared_in_open_transaction
            }
        });
        for c in self.cursors.open.values_mut() {
            c.declared_in_open_transaction = false;
        }
    }

    /// ROLLBACK TO the savepoint at index `at`: the cursors declared since
    /// it began are closed (their FETCHes are not undone for the others).
    pub(super) fn close_cursors_after_savepoint(&mut self, at: usize) {
        self.cursors
            .open
            .retain(|_, c| !(c.declared_in_open_transaction && c.savepoint_depth > at));
    }

    /// RELEASE of the savepoint at index `at`: its cursors belong to the
    /// savepoint (or transaction) around it now.
    pub(super) fn release_cursors_to(&mut self, at: usize) {
        for c in self.cursors.open.values_mut() {
            c.savepoint_depth = c.savepoint_depth.min(at);
        }
    }

    /// The result columns of a FETCH (for Describe); None for MOVE or an
    /// unknown cursor.
    pub(super) fn fetch_columns(&self, f: &FetchStmt) -> Option<Vec<ColumnDesc>> {
        (!f.is_move).then(|| self.cursor_columns_of(&f.cursor))?
    }

    pub(super) fn cursor_columns_of(&self, name: &str) -> Option<Vec<ColumnDesc>> {
        self.cursors.open.get(name).map(|c| c.columns.clone())
    }
}

impl SqlCursors {
    /// pg_cursors' rows.
    pub fn infos(&self) -> Vec<CursorInfo> {
        self.open.values().map(|c| c.info.clone()).collect()
    }
}
