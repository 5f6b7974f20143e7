//! INSERT … ON CONFLICT, as PostgreSQL's speculative insertion does it: a
//! row first looks for a conflicting key in the arbiter indexes (waiting
//! for a transaction still deciding about one); with none it is stored and
//! its entries made, the arbiters' without raising 23505; when a concurrent
//! insert got there first after all, the stored version is taken back
//! (`heap::kill_speculative`, dead to everyone at once) and the row starts
//! over. A conflict found does nothing (DO NOTHING) or locks the existing
//! row and updates it (DO UPDATE); a conflicting row changed meanwhile
//! makes the row start over too (READ COMMITTED) or fails (REPEATABLE READ).

use access::heap::{self, InsertTarget, LockResult, ModifyResult, RowLockMode, Tid, WaitPolicy};
use access::tuple;
use common::{PgError, PgResult, SqlState};
use sql::plan::{ConflictAction, OnConflict};
use types::Value;

use crate::dml::{serialization_check, wait_error};
use crate::eval::{eval, eval_qual};
use crate::ri::RiQueue;
use crate::triggers::TableTriggers;
use crate::writer::TableWriter;
use crate::{ExecEnv, Row};

/// What became of one proposed row.
pub(crate) enum Upsert {
    /// Stored as a new row.
    Inserted,
    /// The conflicting row was updated to this (heap-only: a HOT update).
    Updated { row: Row, heap_only: bool },
    /// DO NOTHING, or DO UPDATE's WHERE said no.
    Skipped,
}

/// The existing version a proposed row's key conflicts with.
pub(crate) struct Conflict {
    pub tid: Tid,
    pub bytes: Vec<u8>,
}

/// Per statement: the clause and the buffers reused across rows.
pub(crate) struct Upserter<'p> {
    pub clause: &'p OnConflict,
    /// The row lock DO UPDATE takes: FOR UPDATE's when it sets a column of a
    /// unique index, else FOR NO KEY UPDATE's (PostgreSQL's
    /// ExecUpdateLockMode).
    lock_mode: RowLockMode,
    buf: Vec<u8>,
    target: InsertTarget,
    /// DO UPDATE's UPDATE triggers (row ones fire here).
    pub update_triggers: Option<TableTriggers>,
}

impl<'p> Upserter<'p> {
    pub fn new(clause: &'p OnConflict, writer: &TableWriter) -> Upserter<'p> {
        let sets_key = match &clause.action {
            ConflictAction::Nothing => false,
            ConflictAction::Update { assignments, .. } => {
                assignments.iter().any(|(c, _)| writer.is_key_column(*c))
            }
        };
        Upserter {
            clause,
            lock_mode: if sets_key {
                RowLockMode::Exclusive
            } else {
                RowLockMode::NoKeyExclusive
            },
            buf: Vec::new(),
            target: InsertTarget::new(),
            update_triggers: None,
        }
    }

    /// Inserts `row` or resolves its conflict. NOT NULL and CHECK are
    /// checked on the proposed row first, conflict or not, as PostgreSQL
    /// does.
    pub fn insert(
        &mut self,
        writer: &mut TableWriter,
        row: &[Value],
        queue: &mut RiQueue,
        env: &mut ExecEnv,
    ) -> PgResult<Upsert> {
        writer.check_row(row, env)?;
        let rel = writer.table.locator();
        loop {
            env.check_cancel()?;
            if let Some(conflict) = writer.find_conflict(env, row, &self.clause.arbiters)? {
                match &self.clause.action {
                    ConflictAction::Nothing => {
                        check_visible(env, &conflict.bytes)?;
                        return Ok(Upsert::Skipped);
                    }
                    ConflictAction::Update { assignments, qual } => {
                        let update = ConflictUpdate { assignments, qual };
                        match self.update(writer, &update, conflict, row, queue, env)? {
                            Some(done) => return Ok(done),
                            None => continue,
                        }
                    }
                }
            }
            let written = writer.form(env, row, &[], &mut self.buf)?;
            let tid = heap::insert(env.pool, env.tm, rel, &mut self.buf, &mut self.target)?;
            env.predicate_write(rel, None)?;
            if writer.inserted_unless_conflict(env, row, tid, queue, &self.clause.arbiters)? {
                return Ok(Upsert::Inserted);
            }
            heap::kill_speculative(env.pool, rel, tid, env.xid, env.tm)?;
            writer.discard_toasted(env, &written)?;
        }
    }

    /// DO UPDATE on the conflicting version: lock it, then update it if
    /// WHERE passes. None: it changed before we locked it, start over.
    fn update(
        &mut self,
        writer: &mut TableWriter,
        action: &ConflictUpdate<'_>,
        conflict: Conflict,
        proposed: &[Value],
        queue: &mut RiQueue,
        env: &mut ExecEnv,
    ) -> PgResult<Option<Upsert>> {
        let t = &conflict.bytes;
        if env.snapshot.own.contains(tuple::xmin(t)) && tuple::cmin(t) == env.cid {
            return Err(PgError::new(
                SqlState::CARDINALITY_VIOLATION,
                "ON CONFLICT DO UPDATE command cannot affect row a second time",
            )
            .with_hint(
                "Ensure that no rows proposed for insertion within the same command have duplicate constrained values.",
            ));
        }
        let rel = writer.table.locator();
        let (pool, tm) = (env.pool, env.tm);
        let who = env.requester();
        let hooks = &mut *env.hooks;
        let locked = heap::lock_tuple(
            pool,
            rel,
            conflict.tid,
            who,
            self.lock_mode,
            WaitPolicy::Block,
            tm,
            &mut |x| hooks.wait_for_transaction(x),
        )
        .map_err(|e| wait_error(env, e))?;
        match locked {
            LockResult::Locked => {}
            LockResult::Updated(next) => {
                serialization_check(env, if next.is_some() { "update" } else { "delete" })?;
                return Ok(None);
            }
            LockResult::SelfModified | LockResult::WouldBlock => {
                return Err(PgError::internal("unexpected self-updated tuple"));
            }
        }
        let Some(bytes) = heap::fetch_any(pool, rel, conflict.tid)? else {
            return Err(PgError::internal("locked row is gone"));
        };
        check_visible(env, &bytes)?;
        let types = writer.types();
        let mut both = Vec::with_capacity(types.len() * 2);
        let toast = writer.table.toast_source(env.pool);
        tuple::deform_tuple(&bytes, types, toast, &mut both)?;
        let existing: Row = both.clone();
        both.extend_from_slice(proposed);
        for q in action.qual {
            if !eval_qual(q, &both, env)? {
                return Ok(Some(Upsert::Skipped));
            }
        }
        let mut new = existing.clone();
        for (i, e) in action.assignments {
            new[*i] = eval(e, &both, env)?;
        }
        if let Some(trig) = self.update_triggers.as_ref().filter(|t| t.has_before_row()) {
            match trig.before_row(env, Some(&existing), Some(new))? {
                Some(r) => new = r,
                None => return Ok(Some(Upsert::Skipped)),
            }
        }
        let r = writer.store_update(
            env,
            conflict.tid,
            &existing,
            &new,
            &mut self.buf,
            &mut self.target,
        )?;
        let (new_tid, heap_only) = match r {
            ModifyResult::Done(t) => (t, false),
            ModifyResult::HeapOnly(t) => (t, true),
            // We hold the row's lock: nobody else changed it.
            ModifyResult::Updated(_) | ModifyResult::SelfModified => {
                return Err(PgError::internal("locked row changed under its lock"));
            }
        };
        writer.updated(
            env,
            (conflict.tid, &existing),
            (new_tid, &new),
            heap_only,
            queue,
        )?;
        if let Some(trig) = self.update_triggers.as_ref().filter(|t| t.has_after_row()) {
            trig.queue_after_row(env, queue, Some(&existing), Some(&new))?;
        }
        Ok(Some(Upsert::Updated {
            row: new,
            heap_only,
        }))
    }
}

struct ConflictUpdate<'a> {
    assignments: &'a [(usize, sql::expr::Expr)],
    qual: &'a [sql::expr::Expr],
}

/// REPEATABLE READ may only act on a conflicting row its snapshot sees
/// (or that its own transaction wrote): one committed since would be a
/// change it cannot account for.
fn check_visible(env: &ExecEnv, t: &[u8]) -> PgResult<()> {
    if !env.isolation.uses_transaction_snapshot() || env.snapshot.own.contains(tuple::xmin(t)) {
        return Ok(());
    }
    let visible = env.snapshot.tuple_visible(
        tuple::xmin(t),
        tuple::cmin(t),
        tuple::deleting_xmax(t),
        tuple::cmax(t),
        env.tm,
    );
    if visible {
        return Ok(());
    }
    Err(PgError::new(
        SqlState::SERIALIZATION_FAILURE,
        "could not serialize access due to concurrent update",
    ))
}
