//! Index maintenance: every row a statement adds to a table gets an entry
//! in each of the table's indexes (unique ones checked first, as
//! PostgreSQL's executor does after the heap insert), and ON CONFLICT's
//! look for a conflicting key. CREATE INDEX's build is `index_build`.

use access::btree::{self, IndexDesc, InsertOutcome, KeyHolder, UniqueCheck};
use access::heap::Tid;
use catalog::{Index, Table};
use common::{Oid, PgError, PgResult, SqlState};
use types::Value;

use crate::dml::wait_error;
use crate::eval::value_to_text;
use crate::upsert::Conflict;
use crate::ExecEnv;

/// One index of the table being changed, ready for inserts.
struct Target {
    index: Index,
    desc: IndexDesc,
    /// 0-based table columns of the key.
    columns: Vec<usize>,
}

/// The indexes of one table, looked up once per statement. The statement
/// holds a lock that conflicts with CREATE and DROP INDEX (RowExclusive
/// against Share and AccessExclusive), so the set cannot change under it.
pub(crate) struct TableIndexes {
    targets: Vec<Target>,
    key: Vec<Value>,
}

impl TableIndexes {
    pub fn of(env: &ExecEnv, table: &Table) -> TableIndexes {
        let targets = env
            .catalog
            .indexes_of(table.oid)
            .map(|i| Target {
                desc: i.desc(table),
                columns: i.keys.iter().map(|k| k.attnum as usize - 1).collect(),
                index: i.clone(),
            })
            .collect();
        TableIndexes {
            targets,
            key: Vec::new(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.targets.is_empty()
    }

    /// Whether an update from `old` to `new` leaves every indexed column as
    /// it was, so the new version may be heap-only (HOT): no index then
    /// needs an entry for it.
    pub fn key_columns_unchanged(&self, old: &[Value], new: &[Value]) -> bool {
        self.targets
            .iter()
            .all(|t| t.columns.iter().all(|&c| old[c] == new[c]))
    }

    /// Adds the entries of the row just stored at `tid`. A unique index
    /// that already holds the key for a live row fails with 23505 (waiting
    /// first for a transaction still deciding about that row).
    pub fn insert(
        &mut self,
        env: &mut ExecEnv,
        table: &Table,
        row: &[Value],
        tid: Tid,
    ) -> PgResult<()> {
        for t in &self.targets {
            self.key.clear();
            self.key.extend(t.columns.iter().map(|&c| row[c].clone()));
            let outcome = insert_entry(env, table, t, &self.key, tid)?;
            if let InsertOutcome::Duplicate(_) = outcome {
                return Err(duplicate_key_error(env, table, &t.index, &self.key));
            }
        }
        Ok(())
    }
}

impl TableIndexes {
    /// `insert` for ON CONFLICT: the `arbiters` first, where a live or
    /// committed duplicate makes the result false (entries already made
    /// stay, pointing at a version the caller takes back); the other
    /// unique indexes fail with 23505 as usual.
    pub fn insert_arbitrated(
        &mut self,
        env: &mut ExecEnv,
        table: &Table,
        row: &[Value],
        tid: Tid,
        arbiters: &[Oid],
    ) -> PgResult<bool> {
        let (first, rest): (Vec<&Target>, Vec<&Target>) = self
            .targets
            .iter()
            .partition(|t| arbiters.contains(&t.index.oid));
        for t in first.into_iter().chain(rest) {
            self.key.clear();
            self.key.extend(t.columns.iter().map(|&c| row[c].clone()));
            if let InsertOutcome::Duplicate(_) = insert_entry(env, table, t, &self.key, tid)? {
                if arbiters.contains(&t.index.oid) {
                    return Ok(false);
                }
                return Err(duplicate_key_error(env, table, &t.index, &self.key));
            }
        }
        Ok(true)
    }

    /// The version holding `row`'s key in one of the `arbiters` indexes,
    /// as a unique check sees versions (PostgreSQL's SnapshotDirty): one
    /// whose inserter or deleter is still running is waited for and the
    /// look starts over.
    pub fn find_conflict(
        &self,
        env: &mut ExecEnv,
        table: &Table,
        row: &[Value],
        arbiters: &[Oid],
    ) -> PgResult<Option<Conflict>> {
        let (pool, tm) = (env.pool, env.tm);
        let rel = table.locator();
        'again: loop {
            for t in self
                .targets
                .iter()
                .filter(|t| arbiters.contains(&t.index.oid))
            {
                let key: Vec<Value> = t.columns.iter().map(|&c| row[c].clone()).collect();
                if key.iter().any(Value::is_null) {
                    continue; // NULLs never conflict
                }
                for entry in btree::find_equal(pool, t.index.locator(), &t.desc, &key)? {
                    let own = &env.snapshot.own;
                    match access::heap::key_holding_version(pool, tm, rel, entry, own)? {
                        None | Some((_, KeyHolder::Dead, _)) => {}
                        Some((tid, KeyHolder::Live, bytes)) => {
                            return Ok(Some(Conflict { tid, bytes }));
                        }
                        Some((_, KeyHolder::InProgress(x), _)) => {
                            env.hooks
                                .wait_for_transaction(x)
                                .map_err(|e| wait_error(env, e))?;
                            continue 'again;
                        }
                    }
                }
            }
            return Ok(None);
        }
    }
}

/// The access method's 54000 for an oversized entry, with the index's
/// and the table's names as PostgreSQL words it (`for index "t_v_idx"`,
/// `... in relation "t".`).
pub(crate) fn name_oversized_entry(e: PgError, index: &Index, table: &Table) -> PgError {
    if e.code != SqlState::PROGRAM_LIMIT_EXCEEDED {
        return e;
    }
    let mut e = e;
    e.message = format!("{} for index \"{}\"", e.message, index.name);
    if let Some(d) = e.detail.take() {
        let d = format!(
            "{} in relation \"{}\".",
            d.trim_end_matches('.'),
            table.name
        );
        e = e.with_detail(d);
    }
    e
}

fn insert_entry(
    env: &mut ExecEnv,
    table: &Table,
    t: &Target,
    key: &[Value],
    tid: Tid,
) -> PgResult<InsertOutcome> {
    insert_entry_unnamed(env, table, t, key, tid)
        .map_err(|e| name_oversized_entry(e, &t.index, table))
}

fn insert_entry_unnamed(
    env: &mut ExecEnv,
    table: &Table,
    t: &Target,
    key: &[Value],
    tid: Tid,
) -> PgResult<InsertOutcome> {
    let (pool, tm) = (env.pool, env.tm);
    let rel = table.locator();
    // The snapshot is borrowed for the statement, not from `env`.
    let snapshot = env.snapshot;
    let ssi = snapshot.ssi.as_deref();
    if !t.index.unique {
        let index = t.index.locator();
        return btree::insert_serializable(pool, tm, index, &t.desc, key, tid, None, ssi);
    }
    let mut holder = |other: Tid| access::heap::key_holder(pool, tm, rel, other, &snapshot.own);
    let hooks = &mut *env.hooks;
    let mut wait = |x| hooks.wait_for_transaction(x);
    let r = btree::insert_serializable(
        pool,
        tm,
        t.index.locator(),
        &t.desc,
        key,
        tid,
        Some(UniqueCheck {
            holder: &mut holder,
            wait: &mut wait,
        }),
        ssi,
    );
    r.map_err(|e| wait_error(env, e))
}

/// `(a, b)=(1, 2)`, as PostgreSQL's BuildIndexValueDescription writes a key.
pub(crate) fn key_description(
    env: &ExecEnv,
    table: &Table,
    index: &Index,
    key: &[Value],
) -> String {
    let names: Vec<&str> = index
        .keys
        .iter()
        .map(|k| table.columns[k.attnum as usize - 1].name.as_str())
        .collect();
    let values: Vec<String> = index
        .keys
        .iter()
        .zip(key)
        .map(|(k, v)| match v {
            Value::Null => "null".to_string(),
            v => value_to_text(
                v,
                table.columns[k.attnum as usize - 1].data_type().id,
                &env.io,
            ),
        })
        .collect();
    format!("({})=({})", names.join(", "), values.join(", "))
}

fn duplicate_key_error(env: &ExecEnv, table: &Table, index: &Index, key: &[Value]) -> PgError {
    PgError::new(
        SqlState::UNIQUE_VIOLATION,
        format!(
            "duplicate key value violates unique constraint \"{}\"",
            index.name
        ),
    )
    .with_detail(format!(
        "Key {} already exists.",
        key_description(env, table, index, key)
    ))
    .with_constraint(
        &crate::dml::schema_name(env.catalog, table.namespace),
        &table.name,
        &index.name,
    )
}
