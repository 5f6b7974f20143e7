//! INSERT, UPDATE and DELETE against heap tables.

use access::heap::{self, HeapScan, InsertTarget, ModifyResult, Tid};
use access::tuple::{self, deform_tuple};
use catalog::Table;
use common::{PgError, PgResult, SqlState};
use sql::expr::Expr;
use sql::plan::Plan;
use types::{DataType, Value};

use crate::eval::{eval, eval_qual, value_to_text};
use crate::ops::build;
use crate::{ExecEnv, Row};

/// Rows produced by RETURNING, if requested.
pub type Returning = Vec<Row>;

pub(crate) fn check_not_null(table: &Table, row: &[Value]) -> PgResult<()> {
    for (c, v) in table.columns.iter().zip(row) {
        if c.not_null && v.is_null() {
            let shown: Vec<String> = row
                .iter()
                .zip(&table.columns)
                .map(|(v, c)| value_to_text(v, c.data_type().id))
                .collect();
            return Err(PgError::new(
                SqlState::NOT_NULL_VIOLATION,
                format!(
                    "null value in column \"{}\" of relation \"{}\" violates not-null constraint",
                    c.name, table.name
                ),
            )
            .with_detail(format!("Failing row contains ({}).", shown.join(", "))));
        }
    }
    Ok(())
}

fn project_returning(
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

pub fn insert(
    table: &Table,
    source: &Plan,
    bulk: bool,
    returning: Option<&[Expr]>,
    env: &mut ExecEnv,
) -> PgResult<(u64, Returning)> {
    let types: Vec<DataType> = table.column_types();
    let mut target = if bulk {
        InsertTarget::bulk(env.pool)
    } else {
        InsertTarget::new()
    };
    let mut op = build(source, env, None)?;
    let mut buf = Vec::new();
    let mut n = 0u64;
    let mut out = Vec::new();
    while let Some(row) = op.next(env)? {
        check_not_null(table, &row)?;
        tuple::form_tuple(&types, &row, env.xid, env.cid, &mut buf);
        heap::insert(env.pool, table.locator(), &mut buf, &mut target)?;
        n += 1;
        if n.is_multiple_of(4096) {
            env.check_cancel()?;
        }
        project_returning(returning, &row, env, &mut out)?;
    }
    Ok((n, out))
}

/// Visible rows of `table` passing `qual`, with their tids (whole rows decoded).
fn matching_rows(table: &Table, qual: &[Expr], env: &mut ExecEnv) -> PgResult<Vec<(Tid, Row)>> {
    let types = table.column_types();
    let mut scan = HeapScan::new(env.pool, table.locator())?;
    let mut found = Vec::new();
    let (snapshot, tm) = (env.snapshot, env.tm);
    loop {
        env.check_cancel()?;
        let more = scan.next_page(snapshot, tm, |tid, t| {
            let mut row = Vec::with_capacity(types.len());
            deform_tuple(t, &types, &mut row)?;
            for q in qual {
                if !eval_qual(q, &row, env)? {
                    return Ok(());
                }
            }
            found.push((tid, row));
            Ok(())
        })?;
        if !more {
            return Ok(found);
        }
    }
}

/// Takes the row at `tid` for update or delete (sets our xmax). If a
/// concurrent transaction updated it and committed first, follows the update
/// chain to the newest version and re-checks `qual` on it (READ COMMITTED's
/// EvalPlanQual); returns the version that was taken, or None to skip the row.
fn take_row(
    table: &Table,
    qual: &[Expr],
    tid: Tid,
    row: Row,
    env: &mut ExecEnv,
) -> PgResult<Option<(Tid, Row)>> {
    let types = table.column_types();
    let (mut tid, mut row) = (tid, row);
    loop {
        let interrupts = env.interrupts;
        let deadline = env.deadline;
        let r = heap::mark_deleted(
            env.pool,
            table.locator(),
            tid,
            env.xid,
            env.cid,
            env.tm,
            &|| {
                interrupts.any_pending() || deadline.is_some_and(|d| std::time::Instant::now() >= d)
            },
        )
        // A wait given up because the session is ending reports that, not a cancel.
        .map_err(|e| interrupts.session_ending_error().unwrap_or(e))?;
        match r {
            ModifyResult::Done => return Ok(Some((tid, row))),
            ModifyResult::SelfModified | ModifyResult::Updated(None) => return Ok(None),
            ModifyResult::Updated(Some(next)) => {
                let Some(bytes) = heap::fetch_any(env.pool, table.locator(), next)? else {
                    return Ok(None);
                };
                row.clear();
                deform_tuple(&bytes, &types, &mut row)?;
                for q in qual {
                    if !eval_qual(q, &row, env)? {
                        return Ok(None);
                    }
                }
                tid = next;
            }
        }
    }
}

pub fn delete(
    table: &Table,
    qual: &[Expr],
    returning: Option<&[Expr]>,
    env: &mut ExecEnv,
) -> PgResult<(u64, Returning)> {
    let rows = matching_rows(table, qual, env)?;
    let mut n = 0;
    let mut out = Vec::new();
    for (tid, row) in rows {
        if let Some((_, row)) = take_row(table, qual, tid, row, env)? {
            n += 1;
            project_returning(returning, &row, env, &mut out)?;
        }
    }
    Ok((n, out))
}

pub fn update(
    table: &Table,
    qual: &[Expr],
    assignments: &[(usize, Expr)],
    returning: Option<&[Expr]>,
    env: &mut ExecEnv,
) -> PgResult<(u64, Returning)> {
    let types = table.column_types();
    let rows = matching_rows(table, qual, env)?;
    let mut target = InsertTarget::new();
    let mut buf = Vec::new();
    let mut n = 0;
    let mut out = Vec::new();
    for (tid, old) in rows {
        let Some((tid, old)) = take_row(table, qual, tid, old, env)? else {
            continue;
        };
        let mut new = old.clone();
        for (i, e) in assignments {
            new[*i] = eval(e, &old, env)?;
        }
        check_not_null(table, &new)?;
        tuple::form_tuple(&types, &new, env.xid, env.cid, &mut buf);
        let new_tid = heap::insert(env.pool, table.locator(), &mut buf, &mut target)?;
        heap::link_update(env.pool, table.locator(), tid, new_tid)?;
        n += 1;
        project_returning(returning, &new, env, &mut out)?;
    }
    Ok((n, out))
}
