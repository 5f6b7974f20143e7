//! Triggers at run time, as PostgreSQL's trigger.c fires them.
//!
//! A statement looks up its table's enabled triggers for its event once
//! (`TableTriggers::for_event`; None, and nothing more to pay, when there
//! are none). BEFORE STATEMENT triggers run before the first row; BEFORE
//! ROW triggers run, in name order, before each row is checked and
//! written, each seeing the row the previous one returned: the row the
//! last returns is what is stored, and a NULL skips the row (not written,
//! not counted). AFTER ROW and AFTER STATEMENT triggers are queued with
//! the statement's foreign-key events (`RiEvent::Trigger`) and fire when
//! the statement ends, in the order queued, so they see all its rows.
//! WHEN conditions are evaluated with OLD and NEW when a row trigger would
//! fire (for AFTER triggers, when the event is queued, as PostgreSQL does).
//!
//! Rules:
//! 1. A trigger function's statements run as any PL/pgSQL function's do:
//!    each in a new command of the transaction (`functions::run_statement`),
//!    so they see the rows written before them and later statements see
//!    theirs.
//! 2. Each firing enters `common::stack_depth` levels (`call_trigger`), so a
//!    trigger whose function writes to its own table recurses until 54001,
//!    never past the thread's stack.

use std::sync::Arc;

use catalog::functions::{Function, Volatility};
use catalog::triggers::{
    Trigger, TRIGGER_TYPE_DELETE, TRIGGER_TYPE_INSERT, TRIGGER_TYPE_TRUNCATE, TRIGGER_TYPE_UPDATE,
};
use catalog::Table;
use common::{PgError, PgResult, SqlState};
use sql::plan::BoundStatement;
use types::Value;

use crate::functions::{call_trigger, run_statement, with_function_binder, TriggerCall};
use crate::ri::{RiEvent, RiQueue};
use crate::{ExecEnv, Row};

/// A trigger with its function, resolved for one statement.
#[derive(Debug)]
struct Resolved {
    trigger: Arc<Trigger>,
    function: Arc<Function>,
}

/// What the triggers of a statement's table share, and queued events
/// point at.
#[derive(Debug)]
pub(crate) struct FiringTable {
    table: Table,
    schema: String,
    op: &'static str,
}

/// The enabled triggers of one table for one statement's event.
pub(crate) struct TableTriggers {
    shared: Arc<FiringTable>,
    before_row: Vec<Resolved>,
    after_row: Vec<Arc<Resolved>>,
    before_statement: Vec<Resolved>,
    after_statement: Vec<Arc<Resolved>>,
}

/// An AFTER trigger's firing, queued until the statement ends.
#[derive(Debug, Clone)]
pub struct AfterTriggerEvent {
    shared: Arc<FiringTable>,
    resolved: Arc<Resolved>,
    old: Option<Row>,
    new: Option<Row>,
}

fn op_name(event: i16) -> &'static str {
    match event {
        TRIGGER_TYPE_INSERT => "INSERT",
        TRIGGER_TYPE_UPDATE => "UPDATE",
        TRIGGER_TYPE_DELETE => "DELETE",
        _ => "TRUNCATE",
    }
}

impl TableTriggers {
    /// The enabled triggers of `table` firing on `event` (a
    /// `TRIGGER_TYPE_*` bit); `updated` are the columns (0-based) an
    /// UPDATE assigns, which UPDATE OF triggers need one of. None when no
    /// trigger fires.
    pub fn for_event(
        env: &ExecEnv,
        table: &Table,
        event: i16,
        updated: Option<&[usize]>,
    ) -> PgResult<Option<TableTriggers>> {
        if !env.fire_triggers || env.catalog.triggers.is_empty() {
            return Ok(None);
        }
        let mut found = TableTriggers {
            shared: Arc::new(FiringTable {
                table: table.clone(),
                schema: crate::dml::schema_name(env.catalog, table.namespace),
                op: op_name(event),
            }),
            before_row: Vec::new(),
            after_row: Vec::new(),
            before_statement: Vec::new(),
            after_statement: Vec::new(),
        };
        let mut any = false;
        for t in env.catalog.triggers_of(table.oid) {
            if !t.is_enabled() || !t.fires_on(event) {
                continue;
            }
            if event == TRIGGER_TYPE_UPDATE && !t.columns.is_empty() {
                let assigned = updated.unwrap_or(&[]);
                if !t
                    .columns
                    .iter()
                    .any(|a| assigned.contains(&(*a as usize - 1)))
                {
                    continue;
                }
            }
            let Some(function) = env.catalog.function_by_oid(t.function).cloned() else {
                return Err(PgError::new(
                    SqlState::UNDEFINED_FUNCTION,
                    format!("function with OID {} does not exist", t.function),
                ));
            };
            any = true;
            let r = Resolved {
                trigger: t,
                function,
            };
            match (r.trigger.is_row(), r.trigger.is_before()) {
                (true, true) => found.before_row.push(r),
                (true, false) => found.after_row.push(Arc::new(r)),
                (false, true) => found.before_statement.push(r),
                (false, false) => found.after_statement.push(Arc::new(r)),
            }
        }
        Ok(any.then_some(found))
    }

    pub fn has_before_row(&self) -> bool {
        !self.before_row.is_empty()
    }

    pub fn has_after_row(&self) -> bool {
        !self.after_row.is_empty()
    }

    /// BEFORE STATEMENT triggers.
    pub fn before_statement(&self, env: &mut ExecEnv) -> PgResult<()> {
        for r in &self.before_statement {
            self.call(r, None, None, env)?;
        }
        Ok(())
    }

    /// AFTER STATEMENT triggers, queued behind the statement's row events.
    pub fn queue_after_statement(&self, env: &mut ExecEnv, queue: &mut RiQueue) {
        for r in &self.after_statement {
            queue.push_trigger(
                env,
                RiEvent::Trigger(Box::new(AfterTriggerEvent {
                    shared: self.shared.clone(),
                    resolved: r.clone(),
                    old: None,
                    new: None,
                })),
            );
        }
    }

    /// BEFORE ROW triggers on a row about to be written: `old` for UPDATE
    /// and DELETE, `new` for INSERT and UPDATE. The row to write (for a
    /// DELETE, the old row: go on), or None to skip it.
    pub fn before_row(
        &self,
        env: &mut ExecEnv,
        old: Option<&[Value]>,
        new: Option<Row>,
    ) -> PgResult<Option<Row>> {
        let mut current = new;
        for r in &self.before_row {
            if !self.when_passes(r, env, old, current.as_deref())? {
                continue;
            }
            let returned = self.call(r, old, current.as_deref(), env)?;
            let Some(row) = returned else {
                return Ok(None);
            };
            if row.len() != self.shared.table.columns.len() {
                return Err(PgError::new(
                    SqlState::DATATYPE_MISMATCH,
                    "returned row structure does not match the structure of the triggering table",
                ));
            }
            if current.is_some() {
                current = Some(row);
            }
        }
        Ok(Some(match current {
            Some(row) => row,
            None => old.map(<[Value]>::to_vec).unwrap_or_default(),
        }))
    }

    /// AFTER ROW triggers of a row written: queued (when their WHEN holds)
    /// to fire when the statement ends.
    pub fn queue_after_row(
        &self,
        env: &mut ExecEnv,
        queue: &mut RiQueue,
        old: Option<&[Value]>,
        new: Option<&[Value]>,
    ) -> PgResult<()> {
        for r in &self.after_row {
            if !self.when_passes(r, env, old, new)? {
                continue;
            }
            queue.push_trigger(
                env,
                RiEvent::Trigger(Box::new(AfterTriggerEvent {
                    shared: self.shared.clone(),
                    resolved: r.clone(),
                    old: old.map(<[Value]>::to_vec),
                    new: new.map(<[Value]>::to_vec),
                })),
            );
        }
        Ok(())
    }

    fn call(
        &self,
        r: &Resolved,
        old: Option<&[Value]>,
        new: Option<&[Value]>,
        env: &mut ExecEnv,
    ) -> PgResult<Option<Row>> {
        fire(&self.shared, r, old, new, env)
    }

    /// Whether trigger `r`'s WHEN condition holds for this row (no
    /// condition: it does). Bound once per statement.
    fn when_passes(
        &self,
        r: &Resolved,
        env: &mut ExecEnv,
        old: Option<&[Value]>,
        new: Option<&[Value]>,
    ) -> PgResult<bool> {
        let Some(when) = &r.trigger.when else {
            return Ok(true);
        };
        let table = &self.shared.table;
        let stmt = match env.functions.trigger_conditions.get(&r.trigger.oid) {
            Some(s) => s.clone(),
            None => {
                let (names, types) = sql::bind::triggers::when_parameters(table);
                let bound = with_function_binder(env, &r.function, &names, &types, |ctx| {
                    sql::bind::triggers::bind_when(ctx, table, when)
                })?;
                let planned: Arc<BoundStatement> =
                    Arc::new(env.hooks.plan_function_statement(bound, env.catalog));
                env.functions
                    .trigger_conditions
                    .insert(r.trigger.oid, planned.clone());
                planned
            }
        };
        let width = table.columns.len();
        let mut params = Vec::with_capacity(2 * width);
        for row in [old, new] {
            match row {
                Some(r) => params.extend_from_slice(r),
                None => params.extend(std::iter::repeat_n(Value::Null, width)),
            }
        }
        let (_, rows) = run_statement(&stmt, &params, env, Some(1), Volatility::Stable)?;
        Ok(matches!(
            rows.first().and_then(|r| r.first()),
            Some(Value::Bool(true))
        ))
    }
}

fn fire(
    shared: &FiringTable,
    r: &Resolved,
    old: Option<&[Value]>,
    new: Option<&[Value]>,
    env: &mut ExecEnv,
) -> PgResult<Option<Row>> {
    let call = TriggerCall {
        trigger: &r.trigger,
        table: &shared.table,
        schema: &shared.schema,
        op: shared.op,
        old,
        new,
    };
    call_trigger(&r.function, &call, env)
}

/// Fires a queued AFTER trigger (its result is ignored).
pub(crate) fn fire_after(event: AfterTriggerEvent, env: &mut ExecEnv) -> PgResult<()> {
    fire(
        &event.shared,
        &event.resolved,
        event.old.as_deref(),
        event.new.as_deref(),
        env,
    )?;
    Ok(())
}

/// TRUNCATE's statement triggers on `table`: BEFORE ones now; AFTER ones
/// returned, to fire once the table is emptied.
pub(crate) fn truncate_triggers(env: &ExecEnv, table: &Table) -> PgResult<Option<TableTriggers>> {
    TableTriggers::for_event(env, table, TRIGGER_TYPE_TRUNCATE, None)
}

impl TableTriggers {
    /// Fires the AFTER STATEMENT triggers now (TRUNCATE has no queue).
    pub fn after_statement_now(&self, env: &mut ExecEnv) -> PgResult<()> {
        for r in &self.after_statement {
            fire(&self.shared, r, None, None, env)?;
        }
        Ok(())
    }
}
