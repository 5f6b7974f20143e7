//! Index maintenance and builds: every row a statement adds to a table gets
//! an entry in each of the table's indexes (unique ones checked first, as
//! PostgreSQL's executor does after the heap insert), and CREATE INDEX
//! builds a tree from the table's rows.

use std::cmp::Ordering;

use smallvec::SmallVec;

use access::btree::{self, IndexDesc, InsertOutcome, KeyHolder, UniqueCheck};
use access::heap::{prune, IndexBuildScan, Tid};
use access::tuple;
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

fn insert_entry(
    env: &mut ExecEnv,
    table: &Table,
    t: &Target,
    key: &[Value],
    tid: Tid,
) -> PgResult<InsertOutcome> {
    let (pool, tm) = (env.pool, env.tm);
    let rel = table.locator();
    if !t.index.unique {
        return btree::insert(pool, tm, t.index.locator(), &t.desc, key, tid, None);
    }
    // The snapshot is borrowed for the statement, not from `env`.
    let snapshot = env.snapshot;
    let mut holder = |other: Tid| access::heap::key_holder(pool, tm, rel, other, &snapshot.own);
    let hooks = &mut *env.hooks;
    let mut wait = |x| hooks.wait_for_transaction(x);
    let r = btree::insert(
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
    );
    r.map_err(|e| wait_error(env, e))
}

/// `(a, b)=(1, 2)`, as PostgreSQL's BuildIndexValueDescription writes a key.
fn key_description(env: &ExecEnv, table: &Table, index: &Index, key: &[Value]) -> String {
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

/// A key's values, in the entry itself for one or two columns: the merge
/// reads entries in key order, far from where they were made, and a
/// separate allocation per key would be a cache miss each.
type KeyValues = SmallVec<[Value; 2]>;

/// One entry of an index build.
struct BuildEntry {
    abbrev: btree::Abbreviation,
    key: KeyValues,
    tid: Tid,
    /// A live row: a unique index must not repeat its key.
    live: bool,
}

/// Fills a new, empty index from the table's rows: every version not dead
/// to everyone gets an entry (an old snapshot may still need a recently
/// deleted one), sorted and built bottom-up. The sort compares abbreviated
/// keys first and runs in up to 1 + max_parallel_maintenance_workers
/// threads, whose sorted runs are merged as the build consumes them. For a
/// unique index, two entries with equal keys among rows that are still
/// live fail the build as PostgreSQL's "could not create unique index".
pub(crate) fn build_index(env: &ExecEnv, table: &Table, index: &Index) -> PgResult<u64> {
    let desc = index.desc(table);
    let types = table.column_types();
    let columns: Vec<usize> = index.keys.iter().map(|k| k.attnum as usize - 1).collect();
    // Only the key's columns are decoded.
    let decode = columns.iter().max().map_or(0, |&c| c + 1);
    let horizon = env.tm.global_xmin();
    let tm = env.tm;
    let own = env.snapshot.own.clone();
    let mut entries: Vec<BuildEntry> = Vec::new();
    // Versions the index must cover, under their HOT chain's root tid.
    let mut scan = IndexBuildScan::new(env.pool, tm, table.locator())?;
    let mut row = Vec::with_capacity(decode);
    loop {
        env.check_cancel()?;
        let more = scan.next_page(tm, |tid, t| {
            let live = match prune::version_state(t, horizon, tm) {
                prune::VersionState::Dead => false,
                prune::VersionState::RecentlyDead => false,
                prune::VersionState::DeleteInProgress => !own.contains(tuple::xmax(t)),
                _ => true,
            };
            row.clear();
            tuple::Deformer::new(t).deform_masked(&types, decode, None, &mut row)?;
            let key: KeyValues = columns.iter().map(|&c| row[c].clone()).collect();
            entries.push(BuildEntry {
                abbrev: desc.abbreviate(&key),
                key,
                tid,
                live,
            });
            Ok(())
        })?;
        if !more {
            break;
        }
    }
    let threads = 1 + env.settings.max_parallel_maintenance_workers as usize;
    let runs = sort_in_runs(entries, &desc, threads);
    if index.unique {
        check_build_duplicates(env, table, index, &desc, MergedRuns::new(&runs, &desc))?;
    }
    let n = runs.iter().map(Vec::len).sum::<usize>() as u64;
    let mut sorted = MergedRuns::new(&runs, &desc).map(|e| Ok((e.key.as_slice(), e.tid)));
    btree::build(env.pool, env.tm.wal(), index.locator(), &desc, &mut sorted)?;
    Ok(n)
}

/// Index order: abbreviation, then the full key when the abbreviation
/// cannot tell, then tid.
fn entry_order(desc: &IndexDesc, exact: bool, a: &BuildEntry, b: &BuildEntry) -> Ordering {
    a.abbrev
        .cmp(&b.abbrev)
        .then_with(|| {
            if exact {
                Ordering::Equal
            } else {
                desc.compare_prefix(&a.key, &b.key)
            }
        })
        .then(a.tid.cmp(&b.tid))
}

/// Sorts `entries` as up to `threads` runs sorted side by side (one when
/// there are few entries).
fn sort_in_runs(
    mut entries: Vec<BuildEntry>,
    desc: &IndexDesc,
    threads: usize,
) -> Vec<Vec<BuildEntry>> {
    const MIN_PER_THREAD: usize = 64 * 1024;
    let exact = desc.abbreviation_is_exact();
    let threads = threads.clamp(1, (entries.len() / MIN_PER_THREAD).max(1));
    let chunk = entries.len().div_ceil(threads);
    let mut runs = Vec::with_capacity(threads);
    while entries.len() > chunk {
        let rest = entries.split_off(chunk);
        runs.push(std::mem::replace(&mut entries, rest));
    }
    runs.push(entries);
    std::thread::scope(|s| {
        let (first, rest) = runs.split_first_mut().expect("one run at least");
        for run in rest {
            s.spawn(move || run.sort_unstable_by(|a, b| entry_order(desc, exact, a, b)));
        }
        first.sort_unstable_by(|a, b| entry_order(desc, exact, a, b));
    });
    runs
}

/// The entries of sorted runs in index order (a merge of few runs: the
/// smallest head is found by a linear look).
struct MergedRuns<'r> {
    runs: &'r [Vec<BuildEntry>],
    next: Vec<usize>,
    desc: &'r IndexDesc,
    exact: bool,
}

impl<'r> MergedRuns<'r> {
    fn new(runs: &'r [Vec<BuildEntry>], desc: &'r IndexDesc) -> MergedRuns<'r> {
        MergedRuns {
            runs,
            next: vec![0; runs.len()],
            desc,
            exact: desc.abbreviation_is_exact(),
        }
    }
}

impl<'r> Iterator for MergedRuns<'r> {
    type Item = &'r BuildEntry;

    fn next(&mut self) -> Option<&'r BuildEntry> {
        let mut best: Option<(usize, &'r BuildEntry)> = None;
        for (i, run) in self.runs.iter().enumerate() {
            let Some(e) = run.get(self.next[i]) else {
                continue;
            };
            let better = match best {
                None => true,
                Some((_, b)) => entry_order(self.desc, self.exact, e, b) == Ordering::Less,
            };
            if better {
                best = Some((i, e));
            }
        }
        let (i, e) = best?;
        self.next[i] += 1;
        Some(e)
    }
}

/// Two live rows with one key (none of its values NULL) fail a unique
/// build; `sorted` gives the entries in index order.
fn check_build_duplicates<'r>(
    env: &ExecEnv,
    table: &Table,
    index: &Index,
    desc: &IndexDesc,
    sorted: impl Iterator<Item = &'r BuildEntry>,
) -> PgResult<()> {
    // The first live entry of the current key.
    let mut live_of_key: Option<&BuildEntry> = None;
    for e in sorted {
        if !e.live || e.key.iter().any(Value::is_null) {
            continue;
        }
        if let Some(prev) = live_of_key {
            if prev.abbrev == e.abbrev && desc.compare_prefix(&prev.key, &e.key) == Ordering::Equal
            {
                return Err(PgError::new(
                    SqlState::UNIQUE_VIOLATION,
                    format!("could not create unique index \"{}\"", index.name),
                )
                .with_detail(format!(
                    "Key {} is duplicated.",
                    key_description(env, table, index, &e.key)
                )));
            }
        }
        live_of_key = Some(e);
    }
    Ok(())
}
