//! UPDATE ... FROM and DELETE ... USING: the target rows come from a join
//! (`sql::plan::ModifyJoin`) whose rows carry the target version's tid.
//!
//! A target row the join yields several times is changed by its first
//! match only: the later ones find the version already replaced by this
//! command (SelfModified) and are skipped, as PostgreSQL does. A version a
//! transaction that committed meanwhile updated is, under READ COMMITTED,
//! re-checked by running the join again over the newest target version and
//! the same versions of the other tables (EvalPlanQual, `lockrows.rs`).

use std::sync::Arc;

use access::heap::{self, InsertTarget, ModifyResult, Tid};
use catalog::Table;
use common::{PgResult, Xid};
use sql::expr::Expr;
use sql::plan::ModifyJoin;

use crate::dml::{count_changes, project_returning, serialization_check, wait_error, Returning};
use crate::eval::eval;
use crate::lockrows::{pin_scans, tid_of, tid_value};
use crate::ops::build;
use crate::ri::RiQueue;
use crate::table_stats::PendingCounts;
use crate::triggers::TableTriggers;
use crate::writer::TableWriter;
use crate::{ExecEnv, Row};
use catalog::triggers::{TRIGGER_TYPE_DELETE, TRIGGER_TYPE_UPDATE};

/// What to do with a target row after trying to change it.
enum Next {
    Done,
    /// Updated concurrently: try again on this re-checked join row.
    Retry(Row, Tid),
}

/// READ COMMITTED after a concurrent update: the join row made of the
/// newest target version at `next` and the other tables' versions in
/// `row`, if it still passes the join and WHERE. Of several (a FROM item
/// that is not a table is run again whole), the one with the same values
/// in the other items' columns, else the first.
fn recheck(
    join: &ModifyJoin,
    table: &Arc<Table>,
    row: &Row,
    (next, updater): (Tid, Xid),
    env: &mut ExecEnv,
) -> PgResult<Option<Row>> {
    // A slot pruned and reused since: the row is gone.
    if heap::fetch_version(env.pool, table.locator(), next, updater)?.is_none() {
        return Ok(None);
    }
    let tid_column = join.tid_column();
    let mut want = row.clone();
    want[tid_column] = tid_value(next);
    let versions: Vec<_> = join
        .marks
        .iter()
        .filter_map(|m| {
            let v = &want[m.tid_column];
            tid_of(v).map(|tid| (tid, v.clone(), m))
        })
        .collect();
    let plan = pin_scans(join.plan.clone(), &versions, env)?;
    let mut op = build(&plan, env, None)?;
    let mut first = None;
    while let Some(r) = op.next(env)? {
        let same_versions = join
            .marks
            .iter()
            .all(|m| r.get(m.tid_column) == Some(&want[m.tid_column]));
        if !same_versions {
            continue;
        }
        if r.get(tid_column + 1..) == want.get(tid_column + 1..) {
            return Ok(Some(r));
        }
        first.get_or_insert(r);
    }
    Ok(first)
}

/// The tid of the join row's target version (None: no row, which an inner
/// join never yields).
fn target_tid(join: &ModifyJoin, row: &Row) -> Option<Tid> {
    row.get(join.tid_column()).and_then(tid_of)
}

pub fn update_join(
    table: &Arc<Table>,
    join: &ModifyJoin,
    assignments: &[(usize, Expr)],
    returning: Option<&[Expr]>,
    env: &mut ExecEnv,
) -> PgResult<(u64, Returning)> {
    let width = table.columns.len();
    let mut target = InsertTarget::new();
    let mut buf = Vec::new();
    let mut counts = PendingCounts::default();
    let mut out = Vec::new();
    let assigned: Vec<usize> = assignments.iter().map(|(i, _)| *i).collect();
    let triggers = TableTriggers::for_event(env, table, TRIGGER_TYPE_UPDATE, Some(&assigned))?;
    if let Some(t) = &triggers {
        t.before_statement(env)?;
    }
    let mut writer = TableWriter::new(env, table)?;
    let mut queue = RiQueue::default();
    let mut op = build(&join.plan, env, None)?;
    let mut update_one = |mut row: Row, env: &mut ExecEnv| -> PgResult<()> {
        let Some(mut tid) = target_tid(join, &row) else {
            return Ok(());
        };
        loop {
            let mut new = row[..width].to_vec();
            for (i, e) in assignments {
                new[*i] = eval(e, &row, env)?;
            }
            let old = &row[..width];
            if let Some(t) = triggers.as_ref().filter(|t| t.has_before_row()) {
                match t.before_row(env, Some(old), Some(new))? {
                    Some(r) => new = r,
                    None => return Ok(()),
                }
            }
            let r = writer.store_update(env, tid, old, &new, &mut buf, &mut target)?;
            let next = match r {
                ModifyResult::Done(new_tid) | ModifyResult::HeapOnly(new_tid) => {
                    let heap_only = matches!(r, ModifyResult::HeapOnly(_));
                    counts.updated += 1;
                    counts.hot_updated += u64::from(heap_only);
                    writer.updated(env, (tid, old), (new_tid, &new), heap_only, &mut queue)?;
                    if let Some(t) = triggers.as_ref().filter(|t| t.has_after_row()) {
                        t.queue_after_row(env, &mut queue, Some(old), Some(&new))?;
                    }
                    // RETURNING sees the new target row beside the others.
                    row.splice(..width, new);
                    crate::system_columns::refresh(env, table, join, new_tid, &mut row)?;
                    project_returning(returning, &row, env, &mut out)?;
                    Next::Done
                }
                ModifyResult::SelfModified => Next::Done,
                ModifyResult::Updated(None) => {
                    serialization_check(env, "delete")?;
                    Next::Done
                }
                ModifyResult::Updated(Some(next)) => {
                    serialization_check(env, "update")?;
                    match recheck(join, table, &row, next, env)? {
                        Some(r) => Next::Retry(r, next.0),
                        None => Next::Done,
                    }
                }
            };
            match next {
                Next::Done => return Ok(()),
                Next::Retry(r, t) => (row, tid) = (r, t),
            }
        }
    };
    let r = for_each_row(&mut *op, env, &mut update_one);
    drop(op);
    count_changes(env, table, counts);
    r?;
    if let Some(t) = &triggers {
        t.queue_after_statement(env, &mut queue);
    }
    queue.run(env)?;
    Ok((counts.updated, out))
}

pub fn delete_join(
    table: &Arc<Table>,
    join: &ModifyJoin,
    returning: Option<&[Expr]>,
    env: &mut ExecEnv,
) -> PgResult<(u64, Returning)> {
    let width = table.columns.len();
    let rel = table.locator();
    let mut n = 0;
    let mut out = Vec::new();
    let triggers = TableTriggers::for_event(env, table, TRIGGER_TYPE_DELETE, None)?;
    if let Some(t) = &triggers {
        t.before_statement(env)?;
    }
    let writer = TableWriter::new(env, table)?;
    let mut queue = RiQueue::default();
    let mut op = build(&join.plan, env, None)?;
    let mut delete_one = |mut row: Row, env: &mut ExecEnv| -> PgResult<()> {
        let Some(mut tid) = target_tid(join, &row) else {
            return Ok(());
        };
        loop {
            if let Some(t) = triggers.as_ref().filter(|t| t.has_before_row()) {
                if t.before_row(env, Some(&row[..width]), None)?.is_none() {
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
                    writer.deleted(env, tid, &row[..width], &mut queue)?;
                    if let Some(t) = triggers.as_ref().filter(|t| t.has_after_row()) {
                        t.queue_after_row(env, &mut queue, Some(&row[..width]), None)?;
                    }
                    crate::system_columns::refresh(env, table, join, tid, &mut row)?;
                    return project_returning(returning, &row, env, &mut out);
                }
                ModifyResult::SelfModified => return Ok(()),
                ModifyResult::Updated(None) => return serialization_check(env, "delete"),
                ModifyResult::Updated(Some(next)) => {
                    serialization_check(env, "update")?;
                    match recheck(join, table, &row, next, env)? {
                        Some(r) => (row, tid) = (r, next.0),
                        None => return Ok(()),
                    }
                }
            }
        }
    };
    let r = for_each_row(&mut *op, env, &mut delete_one);
    drop(op);
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

/// Feeds each join row to `change`, checking for cancels as it goes.
fn for_each_row(
    op: &mut dyn crate::ops::Operator,
    env: &mut ExecEnv,
    change: &mut dyn FnMut(Row, &mut ExecEnv) -> PgResult<()>,
) -> PgResult<()> {
    let mut seen = 0u64;
    while let Some(row) = op.next(env)? {
        seen += 1;
        if seen.is_multiple_of(1024) {
            env.check_cancel()?;
        }
        change(row, env)?;
    }
    Ok(())
}
