//! Firing one event: a referencing key's check, or what a referenced key's
//! deletion or change does to the rows referencing it (NO ACTION and
//! RESTRICT refuse it while any is left, CASCADE deletes or re-keys them,
//! SET NULL and SET DEFAULT change their key).

use access::heap::{self, ModifyResult, Tid};
use access::tuple::deform_tuple;
use catalog::{ReferentialAction, Table};
use common::PgResult;
use sql::expr::Expr;
use txn::lock::LockMode;
use types::cast::{cast_value, CastContext};
use types::Value;

use super::keys::{
    find_referenced, find_referencing, live_to_self, lock_key_share, references,
    serialization_failure, to_parent_types, Referencing,
};
use super::{in_command, ForeignKey, RiContext, RiQueue};
use crate::dml::wait_error;
use crate::eval::eval;
use crate::table_stats::PendingCounts;
use crate::triggers::TableTriggers;
use crate::writer::TableWriter;
use crate::ExecEnv;
use catalog::triggers::{TRIGGER_TYPE_DELETE, TRIGGER_TYPE_UPDATE};

impl RiContext {
    /// A referencing row version written at `tid`: if it is still live,
    /// its key must be in the referenced table (its row locked FOR KEY
    /// SHARE there).
    pub(super) fn fire_check(
        &mut self,
        fk: &ForeignKey,
        tid: Tid,
        env: &mut ExecEnv,
    ) -> PgResult<()> {
        let Some(t) = heap::fetch_any(env.pool, fk.child.locator(), tid)? else {
            return Ok(());
        };
        if !live_to_self(&t, env) {
            return Ok(()); // deleted or updated since: that change decides
        }
        let mut row = Vec::new();
        let toast = fk.child.toast_source(env.pool);
        deform_tuple(&t, &fk.child.column_types(), toast, &mut row)?;
        let key = fk.child_key(&row);
        if !fk.key_to_check(&key)? {
            return Ok(());
        }
        self.lock(env, fk.parent.oid, LockMode::RowShare)?;
        let Some(parent_key) = to_parent_types(fk, &key, &env.io) else {
            return Err(fk.missing_key_error(&key, &env.io));
        };
        let snapshot = self.snapshot(env, true);
        let found = in_command(env, &snapshot, self.cid, |env| {
            find_referenced(fk, &parent_key, true, env)
        })?;
        if !found {
            return Err(fk.missing_key_error(&key, &env.io));
        }
        Ok(())
    }

    /// A referenced key `old` deleted (`new` None) or changed to `new`.
    pub(super) fn fire_removed(
        &mut self,
        fk: &ForeignKey,
        old: Vec<Value>,
        new: Option<Vec<Value>>,
        queue: &mut RiQueue,
        env: &mut ExecEnv,
    ) -> PgResult<()> {
        let action = if new.is_some() {
            fk.on_update
        } else {
            fk.on_delete
        };
        match action {
            ReferentialAction::NoAction | ReferentialAction::Restrict => {
                self.refuse_if_referenced(fk, &old, action == ReferentialAction::NoAction, env)
            }
            ReferentialAction::Cascade
            | ReferentialAction::SetNull
            | ReferentialAction::SetDefault => {
                self.lock(env, fk.child.oid, LockMode::RowExclusive)?;
                let values: Option<Vec<Value>> = match (action, &new) {
                    (ReferentialAction::Cascade, None) => None,
                    (ReferentialAction::Cascade, Some(new)) => Some(
                        fk.child_cols
                            .iter()
                            .zip(fk.parent_cols.iter().zip(new))
                            .map(|(&c, (&p, v))| {
                                let from = fk.parent.columns[p].data_type().id;
                                let to = fk.child.columns[c].data_type();
                                cast_value(v.clone(), from, to, CastContext::Assignment, &env.io)
                            })
                            .collect::<PgResult<_>>()?,
                    ),
                    (ReferentialAction::SetNull, _) => Some(vec![Value::Null; fk.child_cols.len()]),
                    _ => Some(self.defaults(fk, env)?),
                };
                self.change_referencing(fk, &old, values, queue, env)?;
                if action == ReferentialAction::SetDefault {
                    // Rows whose default is the key just removed still
                    // reference it (PostgreSQL checks again, as NO ACTION).
                    self.cid = env.hooks.next_command_id();
                    self.wrote = false;
                    return self.refuse_if_referenced(fk, &old, true, env);
                }
                Ok(())
            }
        }
    }

    /// NO ACTION (`no_action`: a row holding `old` again is enough) and
    /// RESTRICT: 23503 while a referencing row holds `old`.
    fn refuse_if_referenced(
        &mut self,
        fk: &ForeignKey,
        old: &[Value],
        no_action: bool,
        env: &mut ExecEnv,
    ) -> PgResult<()> {
        self.lock(env, fk.child.oid, LockMode::RowShare)?;
        let snapshot = self.snapshot(env, false);
        if no_action {
            self.lock(env, fk.parent.oid, LockMode::RowShare)?;
            let back = in_command(env, &snapshot, self.cid, |env| {
                find_referenced(fk, old, true, env)
            })?;
            if back {
                return Ok(());
            }
        }
        let referenced = in_command(env, &snapshot, self.cid, |env| {
            let rows = find_referencing(fk, old, None, env)?;
            let types = fk.child.column_types();
            for r in rows {
                let matches = |row: &[Value]| references(fk, row, old);
                if lock_key_share(env, &fk.child, &types, r.tid, &matches)?.is_some() {
                    return Ok(true);
                }
            }
            Ok::<_, common::PgError>(false)
        })?;
        if referenced {
            return Err(fk.still_referenced_error(old, &env.io));
        }
        Ok(())
    }

    /// The referencing table's DEFAULTs of the key's columns (SET DEFAULT),
    /// evaluated once per referenced key (a default may call nextval()).
    fn defaults(&mut self, fk: &ForeignKey, env: &mut ExecEnv) -> PgResult<Vec<Value>> {
        let exprs: Vec<Expr> = crate::checks::with_stored_text_binder(env, |ctx| {
            fk.child_cols
                .iter()
                .map(|&c| sql::bind::bind_column_default(ctx, &fk.child, c))
                .collect::<PgResult<_>>()
        })?;
        exprs.iter().map(|e| eval(e, &[], env)).collect()
    }

    /// CASCADE (`values` None deletes; else the new key), SET NULL and SET
    /// DEFAULT on every row referencing `old`.
    fn change_referencing(
        &mut self,
        fk: &ForeignKey,
        old: &[Value],
        values: Option<Vec<Value>>,
        queue: &mut RiQueue,
        env: &mut ExecEnv,
    ) -> PgResult<()> {
        let snapshot = self.snapshot(env, false);
        let crosscheck = env
            .isolation
            .uses_transaction_snapshot()
            .then(|| self.snapshot(env, true));
        let rows = in_command(env, &snapshot, self.cid, |env| {
            find_referencing(fk, old, crosscheck.as_ref(), env)
        })?;
        if rows.is_empty() {
            return Ok(());
        }
        self.wrote = true;
        let mut writer = match self.writers.remove(&fk.child.oid) {
            Some(w) => w,
            None => TableWriter::new(env, &fk.child)?,
        };
        // The referencing table's row triggers fire for the rows an action
        // changes, as for PostgreSQL's RI queries (not its statement ones).
        let (event, assigned) = match &values {
            None => (TRIGGER_TYPE_DELETE, None),
            Some(_) => (TRIGGER_TYPE_UPDATE, Some(fk.child_cols.as_slice())),
        };
        let triggers = TableTriggers::for_event(env, &fk.child, event, assigned)?;
        let triggers = triggers.as_ref();
        let cid = self.cid;
        let r = in_command(env, &snapshot, cid, |env| {
            let mut counts = PendingCounts::default();
            for r in rows {
                if !r.seen_before {
                    return Err(serialization_failure());
                }
                let changed = match &values {
                    None => delete_referencing(fk, &mut writer, r, old, triggers, queue, env)?,
                    Some(v) => {
                        update_referencing(fk, &mut writer, r, (old, v), triggers, queue, env)?
                    }
                };
                if changed {
                    match values {
                        None => counts.deleted += 1,
                        Some(_) => counts.updated += 1,
                    }
                }
            }
            if counts.deleted + counts.updated > 0 {
                env.hooks.count_table_changes(fk.child.oid, counts);
            }
            Ok(())
        });
        self.writers.insert(fk.child.oid, writer);
        r
    }
}

/// The newer version of a referencing row a committed transaction updated
/// (READ COMMITTED follows it while it still references `old`).
fn follow(
    table: &Table,
    (next, updater): (Tid, common::Xid),
    fk: &ForeignKey,
    old: &[Value],
    env: &ExecEnv,
) -> PgResult<Option<Vec<Value>>> {
    if env.isolation.uses_transaction_snapshot() {
        return Err(serialization_failure());
    }
    let Some(bytes) = heap::fetch_version(env.pool, table.locator(), next, updater)? else {
        return Ok(None);
    };
    let mut row = Vec::new();
    let toast = table.toast_source(env.pool);
    deform_tuple(&bytes, &table.column_types(), toast, &mut row)?;
    Ok(references(fk, &row, old).then_some(row))
}

/// ON DELETE CASCADE of one referencing row; whether it was deleted.
fn delete_referencing(
    fk: &ForeignKey,
    writer: &mut TableWriter,
    r: Referencing,
    old: &[Value],
    triggers: Option<&TableTriggers>,
    queue: &mut RiQueue,
    env: &mut ExecEnv,
) -> PgResult<bool> {
    let rel = fk.child.locator();
    let Referencing {
        mut tid, mut row, ..
    } = r;
    loop {
        if let Some(t) = triggers.filter(|t| t.has_before_row()) {
            if t.before_row(env, Some(&row), None)?.is_none() {
                return Ok(false);
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
                writer.deleted(env, tid, &row, queue)?;
                if let Some(t) = triggers.filter(|t| t.has_after_row()) {
                    t.queue_after_row(env, queue, Some(&row), None)?;
                }
                return Ok(true);
            }
            ModifyResult::SelfModified | ModifyResult::Updated(None) => {
                if matches!(r, ModifyResult::Updated(None))
                    && env.isolation.uses_transaction_snapshot()
                {
                    return Err(serialization_failure());
                }
                return Ok(false);
            }
            ModifyResult::Updated(Some(next)) => {
                let Some(newer) = follow(&fk.child, next, fk, old, env)? else {
                    return Ok(false);
                };
                tid = next.0;
                row = newer;
            }
        }
    }
}

/// ON UPDATE CASCADE, SET NULL and SET DEFAULT of one referencing row: its
/// key columns set to `values`; whether it was updated.
fn update_referencing(
    fk: &ForeignKey,
    writer: &mut TableWriter,
    r: Referencing,
    (old, values): (&[Value], &[Value]),
    triggers: Option<&TableTriggers>,
    queue: &mut RiQueue,
    env: &mut ExecEnv,
) -> PgResult<bool> {
    let mut target = heap::InsertTarget::new();
    let mut buf = Vec::new();
    let Referencing {
        mut tid, mut row, ..
    } = r;
    loop {
        let mut new = row.clone();
        for (&c, v) in fk.child_cols.iter().zip(values) {
            new[c] = v.clone();
        }
        if let Some(t) = triggers.filter(|t| t.has_before_row()) {
            match t.before_row(env, Some(&row), Some(new))? {
                Some(r) => new = r,
                None => return Ok(false),
            }
        }
        let r = writer.store_update(env, tid, &row, &new, &mut buf, &mut target)?;
        match r {
            ModifyResult::Done(new_tid) | ModifyResult::HeapOnly(new_tid) => {
                let heap_only = matches!(r, ModifyResult::HeapOnly(_));
                writer.updated(env, (tid, &row), (new_tid, &new), heap_only, queue)?;
                if let Some(t) = triggers.filter(|t| t.has_after_row()) {
                    t.queue_after_row(env, queue, Some(&row), Some(&new))?;
                }
                return Ok(true);
            }
            ModifyResult::SelfModified | ModifyResult::Updated(None) => {
                if matches!(r, ModifyResult::Updated(None))
                    && env.isolation.uses_transaction_snapshot()
                {
                    return Err(serialization_failure());
                }
                return Ok(false);
            }
            ModifyResult::Updated(Some(next)) => {
                let Some(newer) = follow(&fk.child, next, fk, old, env)? else {
                    return Ok(false);
                };
                tid = next.0;
                row = newer;
            }
        }
    }
}
