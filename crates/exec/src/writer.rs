//! What writing a row to a table involves besides the heap, for one
//! statement: NOT NULL and CHECK before the row is stored, index entries
//! after it, and the foreign keys' events (its own keys to check, and keys
//! other tables reference going away: `ri`). INSERT, UPDATE, DELETE, COPY
//! and the referential actions that change other tables all go through it.

use std::sync::Arc;

use access::heap::{self, Tid};
use access::toast::{self, ColumnToast, ToastPointer, ToastTarget};
use access::tuple;
use catalog::Table;
use common::{Oid, PgResult};
use types::{DataType, Value};

use crate::checks::TableChecks;
use crate::dml::{check_not_null, schema_name};
use crate::index::TableIndexes;
use crate::ri::{ForeignKey, KeyRemoved, RiEvent, RiQueue};
use crate::upsert::Conflict;
use crate::ExecEnv;

/// Encoded pointers an update keeps, by column (`toast::form_tuple_toasted`'s
/// `reuse`).
type KeptPointers = Vec<Option<Vec<u8>>>;

pub(crate) struct TableWriter {
    pub table: Table,
    /// The table's column types (forming new versions).
    types: Vec<DataType>,
    /// The table's schema, for errors' fields.
    schema: String,
    checks: TableChecks,
    indexes: TableIndexes,
    /// Foreign keys of this table (the keys its rows reference).
    outgoing: Vec<Arc<ForeignKey>>,
    /// Foreign keys referencing this table.
    incoming: Vec<Arc<ForeignKey>>,
    /// Columns of the table's unique indexes: an UPDATE changing one is a
    /// key update (`access::heap::update`'s `keys_updated`).
    key_columns: Vec<usize>,
    /// How each column's values are toasted (`access::toast`).
    toast_columns: Vec<ColumnToast>,
    /// Where the statement's chunks go in the TOAST relation.
    toast_insert: heap::InsertTarget,
    /// A partition's partition constraint (its bound and its ancestors').
    pub partition: Option<crate::partition::PartitionConstraint>,
}

/// Whether two values are the same for a foreign key's change test (NULL
/// the same as NULL).
fn same(a: &Value, b: &Value) -> bool {
    match (a.is_null(), b.is_null()) {
        (true, true) => true,
        (false, false) => types::ops::compare(a, b) == std::cmp::Ordering::Equal,
        _ => false,
    }
}

impl TableWriter {
    /// Looks up (and binds) everything for writing `table` in this statement.
    pub fn new(env: &ExecEnv, table: &Table) -> PgResult<TableWriter> {
        let (outgoing, incoming) = ForeignKey::of_table(env.catalog, table.oid);
        let mut key_columns: Vec<usize> = Vec::new();
        for i in env.catalog.indexes_of(table.oid).filter(|i| i.unique) {
            for k in &i.keys {
                let c = k.attnum as usize - 1;
                if !key_columns.contains(&c) {
                    key_columns.push(c);
                }
            }
        }
        Ok(TableWriter {
            schema: schema_name(env.catalog, table.namespace),
            checks: TableChecks::of(env, table)?,
            indexes: TableIndexes::of(env, table),
            outgoing,
            incoming,
            key_columns,
            types: table.column_types(),
            toast_columns: table.column_toast(env.settings.default_toast_compression),
            toast_insert: heap::InsertTarget::new(),
            partition: crate::partition::PartitionConstraint::of(env, table)?,
            table: table.clone(),
        })
    }

    /// Forms the tuple of `row` into `buf`, compressing values and moving
    /// them to the TOAST relation as its length requires; `reuse` holds
    /// pointers an update keeps (`toast::form_tuple_toasted`). Returns the
    /// values written out of line, which the caller takes back
    /// (`discard_toasted`) if the tuple is not stored after all.
    pub fn form(
        &mut self,
        env: &ExecEnv,
        row: &[Value],
        reuse: &[Option<Vec<u8>>],
        buf: &mut Vec<u8>,
    ) -> PgResult<Vec<ToastPointer>> {
        let (xid, cid) = (env.xid, env.cid);
        let Some(rel) = self.table.toast_locator() else {
            let cols = &self.toast_columns;
            return toast::form_tuple_toasted(&self.types, row, cols, &[], None, xid, cid, buf);
        };
        let mut target = ToastTarget {
            pool: env.pool,
            tm: env.tm,
            rel,
            insert: std::mem::take(&mut self.toast_insert),
        };
        let cols = &self.toast_columns;
        let r = toast::form_tuple_toasted(
            &self.types,
            row,
            cols,
            reuse,
            Some(&mut target),
            xid,
            cid,
            buf,
        );
        self.toast_insert = target.insert;
        r
    }

    /// Deletes values written out of line for a tuple that was not stored.
    pub fn discard_toasted(&self, env: &mut ExecEnv, written: &[ToastPointer]) -> PgResult<()> {
        self.delete_values(env, written)
    }

    fn delete_values(&self, env: &mut ExecEnv, values: &[ToastPointer]) -> PgResult<()> {
        let Some(source) = self.table.toast_source(env.pool) else {
            return Ok(());
        };
        for p in values {
            let (cid, tm) = (env.cid, env.tm);
            let who = env.requester();
            let hooks = &mut *env.hooks;
            toast::delete_value(source, tm, p, who, cid, &mut |x| {
                hooks.wait_for_transaction(x)
            })
            .map_err(|e| crate::dml::wait_error(env, e))?;
        }
        Ok(())
    }

    /// The out-of-line values of the stored version at `tid`: those an
    /// update from `old` to `new` leaves as they were, by column, to keep;
    /// and the others, to delete once the version is replaced.
    fn toasted_in_version(
        &self,
        env: &ExecEnv,
        tid: Tid,
        update: Option<(&[Value], &[Value])>,
    ) -> PgResult<(KeptPointers, Vec<ToastPointer>)> {
        let mut keep = Vec::new();
        let mut gone = Vec::new();
        if self.table.toast.is_none() {
            return Ok((keep, gone));
        }
        let Some(stored) = heap::fetch_any(env.pool, self.table.locator(), tid)? else {
            return Ok((keep, gone));
        };
        for (col, p) in toast::external_pointers(&stored, &self.types)? {
            // The same bytes, not merely equal values (numeric 1.0 = 1.00).
            let unchanged = update.is_some_and(|(old, new)| {
                let ty = &self.types[col];
                let was = tuple::varlena_payload(ty, &old[col]);
                was.is_some() && was == tuple::varlena_payload(ty, &new[col])
            });
            if unchanged {
                keep.resize(self.types.len(), None);
                keep[col] = Some(p.encoded());
            } else {
                gone.push(p);
            }
        }
        Ok((keep, gone))
    }

    /// Whether `inserted` does anything (index entries, foreign key checks).
    pub fn acts_after_insert(&self) -> bool {
        !self.indexes.is_empty() || !self.outgoing.is_empty()
    }

    /// NOT NULL, then the CHECK constraints, then a partition's partition
    /// constraint, on a row about to be stored.
    pub fn check_row(&self, row: &[Value], env: &mut ExecEnv) -> PgResult<()> {
        check_not_null(&self.table, &self.schema, row, &env.io)?;
        if !self.checks.is_empty() {
            self.checks.check(&self.table, &self.schema, row, env)?;
        }
        if let Some(p) = &self.partition {
            p.check(&self.table, &self.schema, row, env)?;
        }
        Ok(())
    }

    /// Stores `new` as the next version of the row at `tid` (`old`): NOT
    /// NULL and CHECK first, then `heap::update`, heap-only when no indexed
    /// column changed and with a key update's lock when a unique column
    /// did. `buf` and `target` are the caller's, reused across rows; what
    /// follows a `Done`/`HeapOnly` is `updated`'s.
    pub fn store_update(
        &mut self,
        env: &mut ExecEnv,
        tid: Tid,
        old: &[Value],
        new: &[Value],
        buf: &mut Vec<u8>,
        target: &mut heap::InsertTarget,
    ) -> PgResult<heap::ModifyResult> {
        self.check_row(new, env)?;
        let (keep, gone) = self.toasted_in_version(env, tid, Some((old, new)))?;
        let written = self.form(env, new, &keep, buf)?;
        let hot_allowed = self.hot_allowed(old, new);
        let keys_updated = self.keys_changed(old, new);
        let (pool, cid, tm) = (env.pool, env.cid, env.tm);
        let who = env.requester();
        let hooks = &mut *env.hooks;
        let r = heap::update(
            pool,
            self.table.locator(),
            tid,
            buf,
            hot_allowed,
            keys_updated,
            who,
            cid,
            tm,
            target,
            &mut |x| hooks.wait_for_transaction(x),
        )
        .map_err(|e| crate::dml::wait_error(env, e))?;
        env.predicate_write(self.table.locator(), Some(tid))?;
        match r {
            heap::ModifyResult::Done(_) | heap::ModifyResult::HeapOnly(_) => {
                self.delete_values(env, &gone)?
            }
            _ => self.delete_values(env, &written)?,
        }
        Ok(r)
    }

    /// Whether an update from `old` to `new` leaves every indexed column as
    /// it was: the new version may then be heap-only (HOT).
    pub fn hot_allowed(&self, old: &[Value], new: &[Value]) -> bool {
        self.indexes.key_columns_unchanged(old, new)
    }

    /// Whether an update from `old` to `new` changes a unique index's column.
    pub fn keys_changed(&self, old: &[Value], new: &[Value]) -> bool {
        self.key_columns.iter().any(|&c| !same(&old[c], &new[c]))
    }

    /// The table's column types.
    pub fn types(&self) -> &[DataType] {
        &self.types
    }

    /// Whether column `c` (0-based) is a column of a unique index.
    pub fn is_key_column(&self, c: usize) -> bool {
        self.key_columns.contains(&c)
    }

    /// ON CONFLICT's look for an existing row holding `row`'s key in one of
    /// the `arbiters` indexes.
    pub fn find_conflict(
        &self,
        env: &mut ExecEnv,
        row: &[Value],
        arbiters: &[Oid],
    ) -> PgResult<Option<Conflict>> {
        self.indexes.find_conflict(env, &self.table, row, arbiters)
    }

    /// After the heap insert of `row` at `tid`: its index entries, and a
    /// check of each foreign key whose key it sets.
    pub fn inserted(
        &mut self,
        env: &mut ExecEnv,
        row: &[Value],
        tid: Tid,
        queue: &mut RiQueue,
    ) -> PgResult<()> {
        if !self.indexes.is_empty() {
            self.indexes.insert(env, &self.table, row, tid)?;
        }
        self.queue_checks(env, row, tid, queue);
        Ok(())
    }

    /// `inserted` for ON CONFLICT's speculative insertion: false, with
    /// nothing queued, when an `arbiters` index already holds the key (a
    /// concurrent insert got there first); the caller takes the version
    /// back.
    pub fn inserted_unless_conflict(
        &mut self,
        env: &mut ExecEnv,
        row: &[Value],
        tid: Tid,
        queue: &mut RiQueue,
        arbiters: &[Oid],
    ) -> PgResult<bool> {
        if !self
            .indexes
            .insert_arbitrated(env, &self.table, row, tid, arbiters)?
        {
            return Ok(false);
        }
        self.queue_checks(env, row, tid, queue);
        Ok(true)
    }

    /// The checks of the foreign keys whose key the new row at `tid` sets.
    fn queue_checks(&self, env: &mut ExecEnv, row: &[Value], tid: Tid, queue: &mut RiQueue) {
        for fk in &self.outgoing {
            if needs_check(fk, &fk.child_key(row)) {
                let event = RiEvent::Check {
                    constraint: fk.oid,
                    tid,
                };
                queue.push(env, fk, event);
            }
        }
    }

    /// After the heap update of the version at `old_tid` (`old`) to `new`
    /// at `new_tid`: the new version's index entries (none for a
    /// `heap_only` one); a check of each foreign key whose key changed (or
    /// whose old version this transaction wrote: its own check finds that
    /// version dead and passes, PostgreSQL's rule); and the referenced keys
    /// that changed.
    pub fn updated(
        &mut self,
        env: &mut ExecEnv,
        (old_tid, old): (Tid, &[Value]),
        (new_tid, new): (Tid, &[Value]),
        heap_only: bool,
        queue: &mut RiQueue,
    ) -> PgResult<()> {
        if !heap_only && !self.indexes.is_empty() {
            self.indexes.insert(env, &self.table, new, new_tid)?;
        }
        let mut own_old: Option<bool> = None;
        for fk in &self.outgoing {
            let key = fk.child_key(new);
            if !needs_check(fk, &key) {
                continue;
            }
            let unchanged = fk.child_key(old).iter().zip(&key).all(|(a, b)| same(a, b));
            if unchanged {
                let own = match own_old {
                    Some(o) => o,
                    None => {
                        let t = heap::fetch_any(env.pool, self.table.locator(), old_tid)?;
                        let o = t.is_some_and(|t| env.snapshot.own.contains(tuple::xmin(&t)));
                        own_old = Some(o);
                        o
                    }
                };
                if !own {
                    continue;
                }
            }
            let event = RiEvent::Check {
                constraint: fk.oid,
                tid: new_tid,
            };
            queue.push(env, fk, event);
        }
        for fk in &self.incoming {
            let was = fk.parent_key(old);
            if was.iter().any(Value::is_null) {
                continue; // nothing can reference a key with a NULL
            }
            let now = fk.parent_key(new);
            if was.iter().zip(&now).all(|(a, b)| same(a, b)) {
                continue;
            }
            let event = RiEvent::Removed(Box::new(KeyRemoved {
                constraint: fk.oid,
                old: was,
                new: Some(now),
            }));
            queue.push(env, fk, event);
        }
        Ok(())
    }

    /// After the heap delete of `old`: the referenced keys that went.
    /// After the heap delete of `old` at `tid`: its out-of-line values go
    /// too (`access::toast` rule 1), and the referenced keys it held.
    pub fn deleted(
        &self,
        env: &mut ExecEnv,
        tid: Tid,
        old: &[Value],
        queue: &mut RiQueue,
    ) -> PgResult<()> {
        let (_, gone) = self.toasted_in_version(env, tid, None)?;
        self.delete_values(env, &gone)?;
        for fk in &self.incoming {
            let was = fk.parent_key(old);
            if was.iter().any(Value::is_null) {
                continue;
            }
            let event = RiEvent::Removed(Box::new(KeyRemoved {
                constraint: fk.oid,
                old: was,
                new: None,
            }));
            queue.push(env, fk, event);
        }
        Ok(())
    }
}

/// Whether a referencing key needs looking up: MATCH SIMPLE's with no
/// NULL, MATCH FULL's with any non-NULL (a mixed one fails when checked).
fn needs_check(fk: &ForeignKey, key: &[Value]) -> bool {
    if fk.match_full {
        key.iter().any(|v| !v.is_null())
    } else {
        key.iter().all(|v| !v.is_null())
    }
}
