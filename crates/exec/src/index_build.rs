//! CREATE INDEX's build (PostgreSQL's tuplesort feeding nbtsort): every
//! version of the table not dead to everyone gets an entry; the entries are
//! collected in runs of fixed size (no reallocation of one huge vector,
//! whose fresh pages cost a fault each), the runs sorted side by side in up
//! to 1 + max_parallel_maintenance_workers threads comparing abbreviated
//! keys first, and merged as `btree::build` consumes them.

use std::cmp::Ordering;
use std::sync::atomic::{AtomicUsize, Ordering as AtomicOrdering};

use access::btree::{self, IndexDesc};
use access::heap::{prune, IndexBuildScan, Tid};
use access::tuple;
use catalog::{Index, Table};
use common::{PgError, PgResult, SqlState};
use smallvec::SmallVec;
use types::Value;

use crate::index::{key_description, name_oversized_entry};
use crate::ExecEnv;

/// Entries per run: 16 MB of entries.
const RUN_ENTRIES: usize = 256 * 1024;

/// A key's values, in the entry itself for a one-column key: the merge
/// reads entries in key order, far from where they were made, and a
/// separate allocation per key would be a cache miss each.
type KeyValues = SmallVec<[Value; 1]>;

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
/// deleted one), sorted and built bottom-up. For a unique index, two
/// entries with equal keys among rows that are still live fail the build
/// as PostgreSQL's "could not create unique index".
pub(crate) fn build_index(env: &ExecEnv, table: &Table, index: &Index) -> PgResult<u64> {
    let desc = index.desc(table);
    let types = table.column_types();
    let toast = table.toast_source(env.pool);
    let columns: Vec<usize> = index.keys.iter().map(|k| k.attnum as usize - 1).collect();
    // Only the key's columns are decoded.
    let decode = columns.iter().max().map_or(0, |&c| c + 1);
    let horizon = env.tm.global_xmin();
    let tm = env.tm;
    let own = env.snapshot.own.clone();
    let mut runs: Vec<Vec<BuildEntry>> = Vec::new();
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
            if !live && tuple::infomask(t) & tuple::HAS_EXTERNAL != 0 {
                // Its values may be vacuumed out of the TOAST relation
                // already; a dead version needs no entry.
                return Ok(());
            }
            tuple::Deformer::new(t, toast).deform_masked(&types, decode, None, &mut row)?;
            let key: KeyValues = columns.iter().map(|&c| row[c].clone()).collect();
            if runs.last().is_none_or(|r| r.len() == RUN_ENTRIES) {
                runs.push(Vec::with_capacity(RUN_ENTRIES));
            }
            let run = runs.last_mut().expect("pushed above");
            run.push(BuildEntry {
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
    sort_runs(&mut runs, &desc, threads);
    if index.unique {
        check_duplicates(env, table, index, &desc, Merge::new(&runs, &desc))?;
    }
    let n = runs.iter().map(Vec::len).sum::<usize>() as u64;
    let mut sorted = Merge::new(&runs, &desc).map(|e| Ok((e.key.as_slice(), e.tid)));
    btree::build(env.pool, env.tm.wal(), index.locator(), &desc, &mut sorted)
        .map_err(|e| name_oversized_entry(e, index, table))?;
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

/// Sorts each run, `threads` at a time (each thread takes the next unsorted
/// run).
fn sort_runs(runs: &mut [Vec<BuildEntry>], desc: &IndexDesc, threads: usize) {
    let exact = desc.abbreviation_is_exact();
    let threads = threads.clamp(1, runs.len().max(1));
    let sort =
        |run: &mut Vec<BuildEntry>| run.sort_unstable_by(|a, b| entry_order(desc, exact, a, b));
    if threads == 1 {
        runs.iter_mut().for_each(sort);
        return;
    }
    // Each run goes to exactly one thread: the next index handed out.
    let next = AtomicUsize::new(0);
    let cells: Vec<parking_lot::Mutex<&mut Vec<BuildEntry>>> =
        runs.iter_mut().map(parking_lot::Mutex::new).collect();
    let work = || loop {
        let i = next.fetch_add(1, AtomicOrdering::Relaxed);
        let Some(cell) = cells.get(i) else { break };
        sort(&mut cell.lock());
    };
    std::thread::scope(|s| {
        for _ in 1..threads {
            s.spawn(work);
        }
        work();
    });
}

/// The entries of sorted runs in index order: a binary min-heap of the
/// runs' heads.
struct Merge<'r> {
    runs: &'r [Vec<BuildEntry>],
    /// Next position in each run.
    next: Vec<usize>,
    /// Runs with entries left, ordered as a heap by their head.
    heap: Vec<usize>,
    desc: &'r IndexDesc,
    exact: bool,
}

impl<'r> Merge<'r> {
    fn new(runs: &'r [Vec<BuildEntry>], desc: &'r IndexDesc) -> Merge<'r> {
        let mut m = Merge {
            runs,
            next: vec![0; runs.len()],
            heap: Vec::with_capacity(runs.len()),
            desc,
            exact: desc.abbreviation_is_exact(),
        };
        for (i, r) in runs.iter().enumerate() {
            if !r.is_empty() {
                m.heap.push(i);
                m.sift_up(m.heap.len() - 1);
            }
        }
        m
    }

    fn head(&self, run: usize) -> &'r BuildEntry {
        &self.runs[run][self.next[run]]
    }

    fn less(&self, a: usize, b: usize) -> bool {
        entry_order(self.desc, self.exact, self.head(a), self.head(b)) == Ordering::Less
    }

    fn sift_up(&mut self, mut i: usize) {
        while i > 0 {
            let parent = (i - 1) / 2;
            if !self.less(self.heap[i], self.heap[parent]) {
                break;
            }
            self.heap.swap(i, parent);
            i = parent;
        }
    }

    fn sift_down(&mut self, mut i: usize) {
        loop {
            let (l, r) = (2 * i + 1, 2 * i + 2);
            let mut min = i;
            if l < self.heap.len() && self.less(self.heap[l], self.heap[min]) {
                min = l;
            }
            if r < self.heap.len() && self.less(self.heap[r], self.heap[min]) {
                min = r;
            }
            if min == i {
                break;
            }
            self.heap.swap(i, min);
            i = min;
        }
    }
}

impl<'r> Iterator for Merge<'r> {
    type Item = &'r BuildEntry;

    fn next(&mut self) -> Option<&'r BuildEntry> {
        let &run = self.heap.first()?;
        let e = self.head(run);
        self.next[run] += 1;
        if self.next[run] == self.runs[run].len() {
            let last = self.heap.pop().expect("not empty");
            if !self.heap.is_empty() {
                self.heap[0] = last;
            }
        }
        if !self.heap.is_empty() {
            self.sift_down(0);
        }
        Some(e)
    }
}

/// Two live rows with one key (none of its values NULL) fail a unique
/// build; `sorted` gives the entries in index order.
fn check_duplicates<'r>(
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
