//! Foreign keys at run time, as PostgreSQL's RI triggers do it.
//!
//! Writing a row queues events (`RiEvent`): a referencing row inserted or
//! its key changed must find its key in the referenced table (`Check`); a
//! referenced row deleted or its key changed takes its referencing rows
//! with it as the constraint's ON DELETE / ON UPDATE says (`Removed`). The
//! events fire when the statement ends (`RiQueue::run`), so rows the
//! statement wrote are seen (`INSERT ... VALUES (2, 1), (1, NULL)` into a
//! self-referencing table works); a deferred constraint's events go to the
//! session and fire at commit or at SET CONSTRAINTS ... IMMEDIATE
//! (`fire_deferred`). Only NO ACTION's `Removed` events and `Check` events
//! can be deferred (PostgreSQL's action triggers are never deferrable).
//!
//! Rules:
//! 1. Events fire in later commands of the statement's transaction (a
//!    command id from `SessionHooks::next_command_id`, and a snapshot
//!    seeing every command before it): the statement's own changes are
//!    visible, and a referential action's own writes are not visible to
//!    its own scan (the Halloween problem). An event that wrote rows ends
//!    its command; the next event runs in a new one.
//! 2. Lookups in READ COMMITTED use a snapshot taken when the events start
//!    firing. In REPEATABLE READ a referenced row is looked up with the
//!    transaction's snapshot, and referencing rows with a fresh one: a row
//!    committed since the transaction began is found (a NO ACTION
//!    violation), and a referential action that would change such a row
//!    fails with 40001 (PostgreSQL's crosscheck snapshot).
//! 3. A referenced row found for a check is locked FOR KEY SHARE
//!    (`access::heap::lock_tuple`), waiting for a transaction deleting it
//!    or changing its key; deleting or re-keying a referenced row takes
//!    the FOR UPDATE lock that conflicts with it. So a referencing insert
//!    and a delete of its referenced row never both commit: the delete
//!    waits for the inserter and then finds its row, or the insert waits
//!    for the deleter and then finds the key gone.
//! 4. Referencing rows found by a NO ACTION or RESTRICT event are locked
//!    FOR KEY SHARE before the violation is reported, so a transaction
//!    deleting them is waited for.
//! 5. Tables reached only through foreign keys are locked when first
//!    reached (RowShare to look up, RowExclusive to change), through
//!    `SessionHooks::lock_relation`.

mod actions;
mod keys;

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

use access::btree::IndexDesc;
use access::heap::Tid;
use catalog::{CatalogData, Constraint, ConstraintKind, Index, ReferentialAction, Table};
use common::{Oid, PgError, PgResult, SqlState};
use txn::lock::LockMode;
use txn::{Snapshot, SnapshotData};
use types::Value;

use crate::eval::value_to_text;
use crate::writer::TableWriter;
use crate::ExecEnv;

/// A foreign key resolved against the statement's catalog.
pub(crate) struct ForeignKey {
    pub oid: Oid,
    pub name: String,
    pub deferrable: bool,
    pub initially_deferred: bool,
    /// The referencing table, its schema (for errors' fields) and its key
    /// columns (0-based).
    pub child: Table,
    pub child_schema: String,
    pub child_cols: Vec<usize>,
    /// The referenced table and its key columns, in the constraint's order.
    pub parent: Table,
    pub parent_cols: Vec<usize>,
    /// The referenced table's unique index the key is looked up in.
    pub index: Index,
    pub desc: IndexDesc,
    /// For each key column of `index`, its position in `parent_cols`.
    pub index_order: Vec<usize>,
    pub on_delete: ReferentialAction,
    pub on_update: ReferentialAction,
    pub match_full: bool,
}

impl ForeignKey {
    /// None for another kind of constraint, or one whose tables or index
    /// are gone (a deferred event of a constraint dropped since).
    pub fn resolve(catalog: &CatalogData, c: &Constraint) -> Option<ForeignKey> {
        let ConstraintKind::ForeignKey {
            ref_table,
            ref_columns,
            ref_index,
            on_delete,
            on_update,
            match_full,
        } = &c.kind
        else {
            return None;
        };
        let child = catalog.table_by_oid(c.table)?.clone();
        let parent = catalog.table_by_oid(*ref_table)?.clone();
        let index = catalog.indexes.get(ref_index)?.clone();
        let parent_cols: Vec<usize> = ref_columns.iter().map(|a| *a as usize - 1).collect();
        let index_order = index
            .keys
            .iter()
            .map(|k| parent_cols.iter().position(|&p| p + 1 == k.attnum as usize))
            .collect::<Option<Vec<_>>>()?;
        Some(ForeignKey {
            child_schema: crate::dml::schema_name(catalog, child.namespace),
            oid: c.oid,
            name: c.name.clone(),
            deferrable: c.deferrable,
            initially_deferred: c.deferred,
            child_cols: c.columns.iter().map(|a| *a as usize - 1).collect(),
            desc: index.desc(&parent),
            child,
            parent,
            parent_cols,
            index,
            index_order,
            on_delete: *on_delete,
            on_update: *on_update,
            match_full: *match_full,
        })
    }

    /// The foreign keys of `table` (it references) and those referencing it.
    pub fn of_table(catalog: &CatalogData, table: Oid) -> (Vec<Arc<Self>>, Vec<Arc<Self>>) {
        let outgoing = catalog
            .constraints_of(table)
            .filter_map(|c| ForeignKey::resolve(catalog, c))
            .map(Arc::new)
            .collect();
        let incoming = catalog
            .foreign_keys_referencing(table)
            .filter_map(|c| ForeignKey::resolve(catalog, c))
            .map(Arc::new)
            .collect();
        (outgoing, incoming)
    }

    pub fn child_key(&self, row: &[Value]) -> Vec<Value> {
        self.child_cols.iter().map(|&c| row[c].clone()).collect()
    }

    pub fn parent_key(&self, row: &[Value]) -> Vec<Value> {
        self.parent_cols.iter().map(|&c| row[c].clone()).collect()
    }

    /// `(a, b)=(1, 2)` over the child's (`child`) or the parent's columns.
    fn describe_key(&self, child: bool, key: &[Value], io: &types::IoSettings) -> String {
        let (table, cols) = if child {
            (&self.child, &self.child_cols)
        } else {
            (&self.parent, &self.parent_cols)
        };
        let names: Vec<&str> = cols
            .iter()
            .map(|&c| table.columns[c].name.as_str())
            .collect();
        let values: Vec<String> = cols
            .iter()
            .zip(key)
            .map(|(&c, v)| value_to_text(v, table.columns[c].data_type().id, io))
            .collect();
        format!("({})=({})", names.join(", "), values.join(", "))
    }

    /// 23503 for a referencing key not found in the referenced table.
    fn missing_key_error(&self, key: &[Value], io: &types::IoSettings) -> PgError {
        PgError::new(
            SqlState::FOREIGN_KEY_VIOLATION,
            format!(
                "insert or update on table \"{}\" violates foreign key constraint \"{}\"",
                self.child.name, self.name
            ),
        )
        .with_detail(format!(
            "Key {} is not present in table \"{}\".",
            self.describe_key(true, key, io),
            self.parent.name
        ))
        .with_constraint(&self.child_schema, &self.child.name, &self.name)
    }

    /// 23503 for MATCH FULL's mixed NULL and non-NULL key.
    fn match_full_error(&self) -> PgError {
        PgError::new(
            SqlState::FOREIGN_KEY_VIOLATION,
            format!(
                "insert or update on table \"{}\" violates foreign key constraint \"{}\"",
                self.child.name, self.name
            ),
        )
        .with_detail("MATCH FULL does not allow mixing of null and nonnull key values.")
        .with_constraint(&self.child_schema, &self.child.name, &self.name)
    }

    /// 23503 for a referenced key still referenced (NO ACTION, RESTRICT).
    fn still_referenced_error(&self, key: &[Value], io: &types::IoSettings) -> PgError {
        PgError::new(
            SqlState::FOREIGN_KEY_VIOLATION,
            format!(
                "update or delete on table \"{}\" violates foreign key constraint \"{}\" on table \"{}\"",
                self.parent.name, self.name, self.child.name
            ),
        )
        .with_detail(format!(
            "Key {} is still referenced from table \"{}\".",
            self.describe_key(false, key, io),
            self.child.name
        ))
        .with_constraint(&self.child_schema, &self.child.name, &self.name)
    }

    /// Whether a referencing key is checked: MATCH SIMPLE skips a key with
    /// any NULL, MATCH FULL one that is all NULL and fails a mixed one.
    pub fn key_to_check(&self, key: &[Value]) -> PgResult<bool> {
        let nulls = key.iter().filter(|v| v.is_null()).count();
        if nulls == 0 {
            return Ok(true);
        }
        if self.match_full && nulls < key.len() {
            return Err(self.match_full_error());
        }
        Ok(false)
    }
}

/// What a statement leaves for its end (or, for a deferred constraint,
/// for commit).
#[derive(Debug, Clone)]
pub enum RiEvent {
    /// A referencing row version was written at `tid` (an INSERT, or an
    /// UPDATE that changed its key): its key must be in the referenced
    /// table, if that version is still live when the event fires.
    Check { constraint: Oid, tid: Tid },
    /// A referenced row's key went (boxed: a statement may queue millions
    /// of `Check` events, which stay small).
    Removed(Box<KeyRemoved>),
    /// An AFTER trigger to fire (`crate::triggers`), queued with the
    /// foreign keys' events so all fire in order when the statement ends.
    Trigger(Box<crate::triggers::AfterTriggerEvent>),
}

/// A referenced row with key `old` (the referenced columns' values) was
/// deleted, or updated to key `new`.
#[derive(Debug, Clone)]
pub struct KeyRemoved {
    pub constraint: Oid,
    pub old: Vec<Value>,
    pub new: Option<Vec<Value>>,
}

impl RiEvent {
    pub fn constraint(&self) -> Oid {
        match self {
            RiEvent::Check { constraint, .. } => *constraint,
            RiEvent::Removed(r) => r.constraint,
            RiEvent::Trigger(_) => 0,
        }
    }
}

/// The events a statement queued, fired when it ends.
#[derive(Default)]
pub(crate) struct RiQueue {
    events: VecDeque<RiEvent>,
    /// Firing deferred events (at commit): none is deferred again.
    immediate: bool,
}

impl RiQueue {
    /// A statement's events, queued before (not deferred ones).
    pub(crate) fn from_events(events: Vec<RiEvent>) -> Self {
        RiQueue {
            events: events.into(),
            immediate: false,
        }
    }

    /// Queues `event` of foreign key `fk`, or hands it to the session when
    /// the constraint is deferred (a `Removed` event only under NO ACTION).
    pub fn push(&mut self, env: &mut ExecEnv, fk: &ForeignKey, event: RiEvent) {
        let deferrable = match &event {
            RiEvent::Check { .. } => true,
            RiEvent::Trigger(_) => false,
            RiEvent::Removed(r) => {
                let action = if r.new.is_some() {
                    fk.on_update
                } else {
                    fk.on_delete
                };
                action == ReferentialAction::NoAction
            }
        };
        if !self.immediate
            && deferrable
            && fk.deferrable
            && env.hooks.constraint_deferred(fk.oid, fk.initially_deferred)
        {
            env.hooks.defer_ri_event(event);
        } else {
            self.events.push_back(event);
        }
    }

    /// Queues an AFTER trigger's event (never deferred).
    pub fn push_trigger(&mut self, _env: &mut ExecEnv, event: RiEvent) {
        self.events.push_back(event);
    }

    /// Fires the queued events, and those their actions queue, in order.
    pub fn run(&mut self, env: &mut ExecEnv) -> PgResult<()> {
        if self.events.is_empty() {
            return Ok(());
        }
        // A statement with data-modifying WITH queries fires every part's
        // events once all have run (`cte::finish_modifying`).
        if let Some(held) = env.ctes.held_ri_events() {
            held.extend(self.events.drain(..));
            return Ok(());
        }
        let mut cx = RiContext::new(env);
        while let Some(event) = self.events.pop_front() {
            env.check_cancel()?;
            cx.fire(event, self, env)?;
        }
        Ok(())
    }
}

/// Fires a transaction's deferred events (at commit, or at SET CONSTRAINTS
/// ... IMMEDIATE for theirs).
pub fn fire_deferred(events: Vec<RiEvent>, env: &mut ExecEnv) -> PgResult<()> {
    let mut q = RiQueue {
        events: events.into(),
        immediate: true,
    };
    q.run(env)
}

/// A statement outside a transaction block commits when it ends: its
/// deferred events fire before its command completes, so their error
/// replaces its completion, as PostgreSQL's commit before EndCommand.
pub fn fire_statement_deferred(env: &mut ExecEnv) -> PgResult<()> {
    let events = env.hooks.take_deferred_events();
    fire_deferred(events, env)
}

/// What firing a statement's events keeps between them.
pub(crate) struct RiContext {
    /// The snapshot data lookups start from (rule 2): taken when the
    /// events start firing.
    latest: Arc<SnapshotData>,
    /// The current command (rule 1) and whether it wrote anything.
    cid: u32,
    wrote: bool,
    foreign_keys: HashMap<Oid, Option<Arc<ForeignKey>>>,
    writers: HashMap<Oid, TableWriter>,
    locked: Vec<(Oid, LockMode)>,
}

impl RiContext {
    fn new(env: &mut ExecEnv) -> RiContext {
        RiContext {
            latest: env.tm.snapshot_data(None),
            cid: env.hooks.next_command_id(),
            wrote: false,
            foreign_keys: HashMap::new(),
            writers: HashMap::new(),
            locked: Vec::new(),
        }
    }

    fn foreign_key(&mut self, env: &ExecEnv, oid: Oid) -> Option<Arc<ForeignKey>> {
        self.foreign_keys
            .entry(oid)
            .or_insert_with(|| {
                env.catalog
                    .constraints
                    .get(&oid)
                    .and_then(|c| ForeignKey::resolve(env.catalog, c))
                    .map(Arc::new)
            })
            .clone()
    }

    /// Rule 5: a table reached through a foreign key, locked once.
    fn lock(&mut self, env: &mut ExecEnv, rel: Oid, mode: LockMode) -> PgResult<()> {
        if self.locked.iter().any(|&(r, m)| r == rel && m >= mode) {
            return Ok(());
        }
        env.hooks.lock_relation(rel, mode)?;
        self.locked.push((rel, mode));
        Ok(())
    }

    /// The snapshot an event's lookups see through (rules 1 and 2):
    /// `transaction` asks for the transaction's own in REPEATABLE READ.
    fn snapshot(&self, env: &ExecEnv, transaction: bool) -> Snapshot {
        let data = if transaction && env.isolation.uses_transaction_snapshot() {
            Arc::clone(&env.snapshot.data)
        } else {
            Arc::clone(&self.latest)
        };
        Snapshot::new(data, env.snapshot.own.clone(), self.cid).with_ssi(env.snapshot.ssi.clone())
    }

    fn fire(&mut self, event: RiEvent, queue: &mut RiQueue, env: &mut ExecEnv) -> PgResult<()> {
        if let RiEvent::Trigger(t) = event {
            // Its function's statements take commands of their own; a
            // foreign key event after it starts a new one to see them.
            self.wrote = true;
            return crate::triggers::fire_after(*t, env);
        }
        let Some(fk) = self.foreign_key(env, event.constraint()) else {
            return Ok(());
        };
        if self.wrote {
            self.cid = env.hooks.next_command_id();
            self.wrote = false;
        }
        match event {
            RiEvent::Check { tid, .. } => self.fire_check(&fk, tid, env),
            RiEvent::Removed(r) => self.fire_removed(&fk, r.old, r.new, queue, env),
            RiEvent::Trigger(_) => Ok(()),
        }
    }
}

/// Runs `f` in command `cid` of the statement's transaction, seeing rows
/// through `snapshot` (rule 1).
fn in_command<R>(
    env: &mut ExecEnv,
    snapshot: &Snapshot,
    cid: u32,
    f: impl FnOnce(&mut ExecEnv<'_>) -> R,
) -> R {
    let checks = env.checks.get();
    let mut sub = env.nested(snapshot, cid, &[]);
    sub.checks.set(checks);
    f(&mut sub)
}

/// ADD CONSTRAINT ... FOREIGN KEY and VALIDATE CONSTRAINT: every
/// referencing row the statement sees must find its key (PostgreSQL's
/// RI_Initial_Check). No row is locked: both tables are locked against
/// writers by the statement.
pub(crate) fn validate_foreign_key(fk: &ForeignKey, env: &mut ExecEnv) -> PgResult<()> {
    let types = fk.child.column_types();
    let toast = fk.child.toast_source(env.pool);
    let mut scan = access::heap::HeapScan::new(env.pool, fk.child.locator())?;
    let mut page_keys: Vec<Vec<Value>> = Vec::new();
    loop {
        env.check_cancel()?;
        let more = scan.next_page(env.snapshot, env.tm, |_, t| {
            let mut row = Vec::with_capacity(types.len());
            access::tuple::deform_tuple(t, &types, toast, &mut row)?;
            page_keys.push(fk.child_key(&row));
            Ok(())
        })?;
        for key in page_keys.drain(..) {
            if !fk.key_to_check(&key)? {
                continue;
            }
            let found = match keys::to_parent_types(fk, &key, &env.io) {
                Some(k) => keys::find_referenced(fk, &k, false, env)?,
                None => false,
            };
            if !found {
                return Err(fk.missing_key_error(&key, &env.io));
            }
        }
        if !more {
            return Ok(());
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn queued_checks_stay_small() {
        // A COPY of millions of referencing rows queues one per row.
        assert!(std::mem::size_of::<super::RiEvent>() <= 16);
    }
}
