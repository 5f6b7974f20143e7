//! INSERT, UPDATE and DELETE against heap tables.

use access::heap::{self, HeapScan, InsertTarget, ModifyResult, Tid};
use access::tuple::deform_tuple;
use catalog::triggers::{TRIGGER_TYPE_DELETE, TRIGGER_TYPE_INSERT, TRIGGER_TYPE_UPDATE};
use catalog::Table;
use common::{PgError, PgResult, SqlState};
use sql::expr::Expr;
use sql::plan::{BoundStatement, IndexPath, OnConflict, Plan};
use types::Value;

use crate::eval::{eval, eval_qual, value_to_text};
use crate::indexscan::{fetch_visible, IndexTids};
use crate::ops::build;
use crate::ri::RiQueue;
use crate::table_stats::PendingCounts;
use crate::triggers::TableTriggers;
use crate::upsert::{Upsert, Upserter};
use crate::writer::TableWriter;
use crate::{ExecEnv, Row};

/// Rows produced by RETURNING, if requested.
pub type Returning = Vec<Row>;

/// `(1, null, x)`: a row as PostgreSQL's "Failing row contains" shows it.
pub(crate) fn failing_row(table: &Table, row: &[Value], io: &types::IoSettings) -> String {
    let shown: Vec<String> = row
        .iter()
        .zip(&table.columns)
        .map(|(v, c)| value_to_text(v, c.data_type().id, io))
        .collect();
    format!("({})", shown.join(", "))
}

/// 23502 for a NULL in a NOT NULL column (`schema` is the table's, for
/// the error's fields).
pub(crate) fn check_not_null(
    table: &Table,
    schema: &str,
    row: &[Value],
    io: &types::IoSettings,
) -> PgResult<()> {
    for (c, v) in table.columns.iter().zip(row) {
        if c.not_null && v.is_null() {
            return Err(PgError::new(
                SqlState::NOT_NULL_VIOLATION,
                format!(
                    "null value in column \"{}\" of relation \"{}\" violates not-null constraint",
                    c.name, table.name
                ),
            )
            .with_detail(format!(
                "Failing row contains {}.",
                failing_row(table, row, io)
            ))
            .with_column(schema, &table.name, &c.name));
        }
    }
    Ok(())
}

/// The name of schema `namespace` (an error's schema field).
pub(crate) fn schema_name(catalog: &catalog::CatalogData, namespace: common::Oid) -> String {
    catalog
        .namespaces
        .get(&namespace)
        .map_or_else(String::new, |n| n.name.clone())
}

pub(crate) fn project_returning(
    returning: Option<&[Expr]>,
    row: &[Value],
    env: &mut ExecEnv,
    out: &mut Returning,
) -> PgResult<()> {
    if let Some(exprs) = returning {
        out.push(
            exprs
                .iter()
                .map(|e| eval(e, row, env))
                .collect::<PgResult<_>>()?,
        );
    }
    Ok(())
}

/// RETURNING's expressions, if any.
fn exprs<C>(returning: &Option<(Vec<Expr>, C)>) -> Option<&[Expr]> {
    returning.as_ref().map(|r| r.0.as_slice())
}

/// Runs an INSERT, UPDATE or DELETE statement: the rows it changed and
/// its RETURNING rows (the caller fires the statement's deferred checks).
pub fn run_statement(stmt: &BoundStatement, env: &mut ExecEnv) -> PgResult<(u64, Returning)> {
    match stmt {
        BoundStatement::Insert {
            table,
            source,
            returning,
            bulk,
            on_conflict,
        } => insert(
            table,
            source,
            *bulk,
            on_conflict.as_deref(),
            exprs(returning),
            env,
        ),
        BoundStatement::Update {
            table,
            qual,
            assignments,
            returning,
            index,
            join,
            ..
        } => match join {
            Some(_) if table.is_partitioned() => Err(PgError::unsupported(
                "UPDATE of a partitioned table with FROM or system columns is not supported",
            )),
            Some(j) => crate::dml_join::update_join(table, j, assignments, exprs(returning), env),
            None if table.is_partitioned() => crate::partition_dml::update_partitioned(
                table,
                qual,
                assignments,
                exprs(returning),
                env,
            ),
            None => update(
                table,
                qual,
                index.as_deref(),
                assignments,
                exprs(returning),
                env,
            ),
        },
        BoundStatement::Delete {
            table,
            qual,
            returning,
            index,
            join,
            ..
        } => match join {
            Some(_) if table.is_partitioned() => Err(PgError::unsupported(
                "DELETE from a partitioned table with USING or system columns is not supported",
            )),
            Some(j) => crate::dml_join::delete_join(table, j, exprs(returning), env),
            None if table.is_partitioned() => {
                crate::partition_dml::delete_partitioned(table, qual, exprs(returning), env)
            }
            None => delete(table, qual, index.as_deref(), exprs(returning), env),
        },
        _ => Err(PgError::internal("not an INSERT, UPDATE or DELETE")),
    }
}

pub fn insert(
    table: &Table,
    source: &Plan,
    bulk: bool,
    on_conflict: Option<&OnConflict>,
    returning: Option<&[Expr]>,
    env: &mut ExecEnv,
) -> PgResult<(u64, Returning)> {
    if table.is_partitioned() {
        if on_conflict.is_some() {
            return Err(PgError::unsupported(
                "INSERT ... ON CONFLICT into a partitioned table is not supported",
            ));
        }
        return crate::partition_dml::insert_routed(table, source, bulk, returning, env);
    }
    if let Some(clause) = on_conflict {
        return insert_on_conflict(table, source, clause, returning, env);
    }
    let mut target = if bulk {
        InsertTarget::bulk(env.pool)
    } else {
        InsertTarget::new()
    };
    let triggers = TableTriggers::for_event(env, table, TRIGGER_TYPE_INSERT, None)?;
    if let Some(t) = &triggers {
        t.before_statement(env)?;
    }
    let mut op = build(source, env, None)?;
    let mut writer = TableWriter::new(env, table)?;
    let mut queue = RiQueue::default();
    let mut buf = Vec::new();
    let width = table.columns.len();
    let reads_system = returning.is_some_and(|r| r.iter().any(|e| e.columns_needed() > width));
    let mut n = 0u64;
    let mut out = Vec::new();
    let r: PgResult<()> = (|| {
        while let Some(mut row) = op.next(env)? {
            if let Some(t) = triggers.as_ref().filter(|t| t.has_before_row()) {
                match t.before_row(env, None, Some(row))? {
                    Some(r) => row = r,
                    None => continue,
                }
            }
            writer.check_row(&row, env)?;
            writer.form(env, &row, &[], &mut buf)?;
            let tid = heap::insert(env.pool, env.tm, table.locator(), &mut buf, &mut target)?;
            env.predicate_write(table.locator(), None)?;
            writer.inserted(env, &row, tid, &mut queue)?;
            if let Some(t) = triggers.as_ref().filter(|t| t.has_after_row()) {
                t.queue_after_row(env, &mut queue, None, Some(&row))?;
            }
            n += 1;
            if n.is_multiple_of(4096) {
                env.check_cancel()?;
            }
            if reads_system {
                // RETURNING names system columns (after the table's).
                let mut row = row;
                crate::system_columns::push_written(env, table, tid, &mut row)?;
                project_returning(returning, &row, env, &mut out)?;
            } else {
                project_returning(returning, &row, env, &mut out)?;
            }
        }
        Ok(())
    })();
    drop(op);
    // Counted on failure too: the rows inserted so far are dead tuples.
    let c = PendingCounts {
        inserted: n,
        ..Default::default()
    };
    count_changes(env, table, c);
    r?;
    if let Some(t) = &triggers {
        t.queue_after_statement(env, &mut queue);
    }
    queue.run(env)?;
    Ok((n, out))
}

/// INSERT … ON CONFLICT: each row inserted or its conflict resolved
/// (`upsert`). The count is of rows inserted or updated, as PostgreSQL's.
fn insert_on_conflict(
    table: &Table,
    source: &Plan,
    clause: &OnConflict,
    returning: Option<&[Expr]>,
    env: &mut ExecEnv,
) -> PgResult<(u64, Returning)> {
    let insert_triggers = TableTriggers::for_event(env, table, TRIGGER_TYPE_INSERT, None)?;
    let update_triggers = match &clause.action {
        sql::plan::ConflictAction::Update { assignments, .. } => {
            let assigned: Vec<usize> = assignments.iter().map(|(i, _)| *i).collect();
            TableTriggers::for_event(env, table, TRIGGER_TYPE_UPDATE, Some(&assigned))?
        }
        sql::plan::ConflictAction::Nothing => None,
    };
    for t in insert_triggers.iter().chain(&update_triggers) {
        t.before_statement(env)?;
    }
    let mut op = build(source, env, None)?;
    let mut writer = TableWriter::new(env, table)?;
    let mut upserter = Upserter::new(clause, &writer);
    upserter.update_triggers = update_triggers;
    let mut queue = RiQueue::default();
    let mut counts = PendingCounts::default();
    let mut out = Vec::new();
    let r: PgResult<()> = (|| {
        while let Some(mut row) = op.next(env)? {
            if let Some(t) = insert_triggers.as_ref().filter(|t| t.has_before_row()) {
                match t.before_row(env, None, Some(row))? {
                    Some(r) => row = r,
                    None => continue,
                }
            }
            match upserter.insert(&mut writer, &row, &mut queue, env)? {
                Upsert::Inserted => {
                    counts.inserted += 1;
                    if let Some(t) = insert_triggers.as_ref().filter(|t| t.has_after_row()) {
                        t.queue_after_row(env, &mut queue, None, Some(&row))?;
                    }
                    project_returning(returning, &row, env, &mut out)?;
                }
                Upsert::Updated { row, heap_only } => {
                    counts.updated += 1;
                    counts.hot_updated += u64::from(heap_only);
                    project_returning(returning, &row, env, &mut out)?;
                }
                Upsert::Skipped => {}
            }
        }
        Ok(())
    })();
    drop(op);
    let n = counts.inserted + counts.updated;
    count_changes(env, table, counts);
    r?;
    for t in upserter.update_triggers.iter().chain(&insert_triggers) {
        t.queue_after_statement(env, &mut queue);
    }
    queue.run(env)?;
    Ok((n, out))
}

/// Tells the session the statement's row changes to `table` (applied to
/// its statistics at transaction end).
pub(crate) fn count_changes(env: &mut ExecEnv, table: &Table, c: PendingCounts) {
    if c.inserted + c.updated + c.deleted > 0 {
        env.hooks.count_table_changes(table.oid, c);
    }
}

/// Runs `modify` on each visible row of `table` passing `qual`, streaming: a
/// page's matches are gathered under its share lock (whole rows decoded),
/// the lock is released and each is modified before the scan goes on. New
/// versions carry this command's id, so the scan never sees them, on this
/// page or on one it has yet to reach (the Halloween problem): the snapshot
/// hides tuples of the current command (`Snapshot::tuple_visible`).
fn for_each_match(
    table: &Table,
    qual: &[Expr],
    index: Option<&IndexPath>,
    env: &mut ExecEnv,
    mut modify: impl FnMut(Tid, Row, &mut ExecEnv) -> PgResult<()>,
) -> PgResult<()> {
    debug_assert_eq!(env.snapshot.command_id, env.cid);
    if let Some(path) = index {
        return for_each_index_match(table, qual, path, env, modify);
    }
    let types = table.column_types();
    let toast = table.toast_source(env.pool);
    let mut scan = HeapScan::new(env.pool, table.locator())?;
    let mut page = Vec::new();
    let (snapshot, tm) = (env.snapshot, env.tm);
    let counters = env.hooks.counters_to_update(table.oid);
    let mut tuples = 0u64;
    // Quals that may wait or read pages run after the page lock is let go.
    let late = !qual.iter().all(Expr::safe_under_page_lock);
    let r = loop {
        if let Err(e) = env.check_cancel() {
            break Err(e);
        }
        let more = scan.next_page(snapshot, tm, |tid, t| {
            tuples += 1;
            let mut row = Vec::with_capacity(types.len());
            deform_tuple(t, &types, toast, &mut row)?;
            if !late {
                for q in qual {
                    if !eval_qual(q, &row, env)? {
                        return Ok(());
                    }
                }
            }
            page.push((tid, row));
            Ok(())
        });
        let more = match more {
            Ok(m) => m,
            Err(e) => break Err(e),
        };
        let r = page.drain(..).try_for_each(|(tid, row)| {
            if late {
                for q in qual {
                    if !eval_qual(q, &row, env)? {
                        return Ok(());
                    }
                }
            }
            modify(tid, row, env)
        });
        if let Err(e) = r {
            break Err(e);
        }
        if !more {
            break Ok(());
        }
    };
    if let Some(c) = counters {
        c.count_seq_scan(tuples);
    }
    r
}

/// `for_each_match` through an index: each tid the index gives is fetched
/// (copied, no lock held) and modified before the next is looked up.
fn for_each_index_match(
    table: &Table,
    qual: &[Expr],
    path: &IndexPath,
    env: &mut ExecEnv,
    mut modify: impl FnMut(Tid, Row, &mut ExecEnv) -> PgResult<()>,
) -> PgResult<()> {
    let types = table.column_types();
    let mut tids = IndexTids::new(table, path, env)?;
    let mut fetched = 0u64;
    let counters = env.hooks.counters_to_update(table.oid);
    let r = (|| {
        while let Some(tid) = tids.next(env)? {
            env.check_cancel()?;
            // The chain's visible member is the version to change.
            let Some((tid, row)) = fetch_visible(env, table, &types, tid, false, &[])? else {
                continue;
            };
            fetched += 1;
            let mut pass = true;
            for q in qual {
                if !eval_qual(q, &row, env)? {
                    pass = false;
                    break;
                }
            }
            if pass {
                modify(tid, row, env)?;
            }
        }
        Ok(())
    })();
    if let Some(c) = counters {
        c.count_index_scan(fetched);
    }
    r
}

/// A wait given up because the session is ending reports that, not a cancel.
/// A cancelled wait reports why: statement_timeout or the interrupt.
pub(crate) fn wait_error(env: &ExecEnv, e: PgError) -> PgError {
    if let Some(ending) = env.interrupts.session_ending_error() {
        return ending;
    }
    if e.code != SqlState::QUERY_CANCELED {
        return e;
    }
    if env.timed_out() {
        return PgError::new(
            SqlState::QUERY_CANCELED,
            "canceling statement due to statement timeout",
        );
    }
    env.interrupts.check().err().unwrap_or(e)
}

/// A row this statement wants to change was updated or deleted by a
/// transaction that committed after the statement's snapshot: READ
/// COMMITTED goes on with the newest version (or skips a deleted row);
/// REPEATABLE READ cannot, its snapshot would not see what it overwrites.
pub(crate) fn serialization_check(env: &ExecEnv, change: &str) -> PgResult<()> {
    if env.isolation.uses_transaction_snapshot() {
        return Err(PgError::new(
            common::SqlState::SERIALIZATION_FAILURE,
            format!("could not serialize access due to concurrent {change}"),
        ));
    }
    Ok(())
}

/// READ COMMITTED's re-check after a concurrent update committed first:
/// the newer version at `next`, written by `updater`, if it still passes
/// `qual` (else false: skip). A slot that no longer holds `updater`'s
/// version was pruned and reused: the row is gone.
fn recheck(
    table: &Table,
    qual: &[Expr],
    (next, updater): (Tid, common::Xid),
    row: &mut Row,
    env: &mut ExecEnv,
) -> PgResult<bool> {
    let Some(bytes) = heap::fetch_version(env.pool, table.locator(), next, updater)? else {
        return Ok(false);
    };
    row.clear();
    deform_tuple(
        &bytes,
        &table.column_types(),
        table.toast_source(env.pool),
        row,
    )?;
    for q in qual {
        if !eval_qual(q, row, env)? {
            return Ok(false);
        }
    }
    Ok(true)
}

pub fn delete(
    table: &Table,
    qual: &[Expr],
    index: Option<&IndexPath>,
    returning: Option<&[Expr]>,
    env: &mut ExecEnv,
) -> PgResult<(u64, Returning)> {
    let mut n = 0;
    let mut out = Vec::new();
    let rel = table.locator();
    let triggers = TableTriggers::for_event(env, table, TRIGGER_TYPE_DELETE, None)?;
    if let Some(t) = &triggers {
        t.before_statement(env)?;
    }
    let writer = TableWriter::new(env, table)?;
    let mut queue = RiQueue::default();
    let r = for_each_match(table, qual, index, env, |mut tid, mut row, env| loop {
        if let Some(t) = triggers.as_ref().filter(|t| t.has_before_row()) {
            if t.before_row(env, Some(&row), None)?.is_none() {
                return Ok(());
            }
        }
        let (pool, cid, tm) = (env.pool, env.cid, env.tm);
        let who = env.requester();
        let hooks = &mut *env.hooks;
        let r = heap::delete(pool, rel, tid, who, cid, tm, &mut |x| {
            hooks.wait_for_transaction(x)
        })
        .map_err(|e| wait_error(env, e))?;
        env.predicate_write(rel, Some(tid))?;
        match r {
            ModifyResult::Done(_) | ModifyResult::HeapOnly(_) => {
                n += 1;
                writer.deleted(env, tid, &row, &mut queue)?;
                if let Some(t) = triggers.as_ref().filter(|t| t.has_after_row()) {
                    t.queue_after_row(env, &mut queue, Some(&row), None)?;
                }
                return project_returning(returning, &row, env, &mut out);
            }
            ModifyResult::SelfModified => return Ok(()),
            ModifyResult::Updated(None) => return serialization_check(env, "delete"),
            ModifyResult::Updated(Some(next)) => {
                serialization_check(env, "update")?;
                if !recheck(table, qual, next, &mut row, env)? {
                    return Ok(());
                }
                tid = next.0;
            }
        }
    });
    let c = PendingCounts {
        deleted: n,
        ..Default::default()
    };
    count_changes(env, table, c);
    r?;
    if let Some(t) = &triggers {
        t.queue_after_statement(env, &mut queue);
    }
    queue.run(env)?;
    Ok((n, out))
}

pub fn update(
    table: &Table,
    qual: &[Expr],
    index: Option<&IndexPath>,
    assignments: &[(usize, Expr)],
    returning: Option<&[Expr]>,
    env: &mut ExecEnv,
) -> PgResult<(u64, Returning)> {
    update_moving(table, qual, index, assignments, returning, None, env)
}

/// `update`; with `mover` (an UPDATE of a partitioned table reaching this
/// partition), a new version outside the partition's bound moves to the
/// partition that takes it: the old version is deleted and the new row
/// routed from the statement's target (PostgreSQL 11+).
pub(crate) fn update_moving(
    table: &Table,
    qual: &[Expr],
    index: Option<&IndexPath>,
    assignments: &[(usize, Expr)],
    returning: Option<&[Expr]>,
    mut mover: Option<&mut crate::partition_dml::RowMover>,
    env: &mut ExecEnv,
) -> PgResult<(u64, Returning)> {
    let mut target = InsertTarget::new();
    let mut buf = Vec::new();
    let (mut n, mut hot) = (0, 0);
    let mut out = Vec::new();
    let assigned: Vec<usize> = assignments.iter().map(|(i, _)| *i).collect();
    let triggers = TableTriggers::for_event(env, table, TRIGGER_TYPE_UPDATE, Some(&assigned))?;
    if let Some(t) = &triggers {
        t.before_statement(env)?;
    }
    let mut writer = TableWriter::new(env, table)?;
    let mut queue = RiQueue::default();
    let r = for_each_match(table, qual, index, env, |mut tid, mut old, env| loop {
        let mut new = old.clone();
        for (i, e) in assignments {
            new[*i] = eval(e, &old, env)?;
        }
        if let Some(t) = triggers.as_ref().filter(|t| t.has_before_row()) {
            match t.before_row(env, Some(&old), Some(new))? {
                Some(r) => new = r,
                None => return Ok(()),
            }
        }
        if let Some(m) = mover.as_deref_mut() {
            if !m.stays(&writer, &new, env)? {
                let (pool, cid, tm) = (env.pool, env.cid, env.tm);
                let who = env.requester();
                let hooks = &mut *env.hooks;
                let r = heap::delete(pool, table.locator(), tid, who, cid, tm, &mut |x| {
                    hooks.wait_for_transaction(x)
                })
                .map_err(|e| wait_error(env, e))?;
                env.predicate_write(table.locator(), Some(tid))?;
                match r {
                    ModifyResult::Done(_) | ModifyResult::HeapOnly(_) => {
                        writer.deleted(env, tid, &old, &mut queue)?;
                        m.insert(env, table, &new, &mut queue)?;
                        n += 1;
                        return project_returning(returning, &new, env, &mut out);
                    }
                    ModifyResult::SelfModified => return Ok(()),
                    ModifyResult::Updated(None) => return serialization_check(env, "delete"),
                    ModifyResult::Updated(Some(next)) => {
                        serialization_check(env, "update")?;
                        if !recheck(table, qual, next, &mut old, env)? {
                            return Ok(());
                        }
                        tid = next.0;
                        continue;
                    }
                }
            }
        }
        let r = writer.store_update(env, tid, &old, &new, &mut buf, &mut target)?;
        match r {
            // `Done`'s new version needs entries in the table's indexes;
            // a heap-only one needs none.
            ModifyResult::Done(new_tid) | ModifyResult::HeapOnly(new_tid) => {
                let heap_only = matches!(r, ModifyResult::HeapOnly(_));
                n += 1;
                hot += u64::from(heap_only);
                writer.updated(env, (tid, &old), (new_tid, &new), heap_only, &mut queue)?;
                if let Some(t) = triggers.as_ref().filter(|t| t.has_after_row()) {
                    t.queue_after_row(env, &mut queue, Some(&old), Some(&new))?;
                }
                return project_returning(returning, &new, env, &mut out);
            }
            ModifyResult::SelfModified => return Ok(()),
            ModifyResult::Updated(None) => return serialization_check(env, "delete"),
            ModifyResult::Updated(Some(next)) => {
                serialization_check(env, "update")?;
                if !recheck(table, qual, next, &mut old, env)? {
                    return Ok(());
                }
                tid = next.0;
            }
        }
    });
    let c = PendingCounts {
        updated: n,
        hot_updated: hot,
        ..Default::default()
    };
    count_changes(env, table, c);
    r?;
    if let Some(t) = &triggers {
        t.queue_after_statement(env, &mut queue);
    }
    queue.run(env)?;
    Ok((n, out))
}
