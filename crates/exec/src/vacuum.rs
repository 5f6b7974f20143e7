//! VACUUM [ANALYZE]: each table's heap is vacuumed through `access`
//! (pruning, dead line pointers cleaned up after an index pass over the
//! table's indexes, free space, truncation), its pg_class
//! reltuples/relpages and cumulative statistics updated, then ANALYZE runs
//! on it when asked. VERBOSE prints PostgreSQL 15's INFO lines with our
//! figures.

use std::time::Instant;

use access::btree::BulkDeleteStats;
use access::heap::vacuum::{
    vacuum_heap, HeapVacuumOptions, IndexPass, VacuumStats, DEAD_TID_BYTES,
};
use access::heap::Tid;
use catalog::Table;
use common::{PgError, PgResult, RelFileLocator, SqlState};

use crate::analyze::AnalyzeTarget;
use crate::ExecEnv;

/// VACUUM's options that change what it does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VacuumOptions {
    pub verbose: bool,
    pub analyze: bool,
    /// TRUNCATE: cut empty pages off the end (default on).
    pub truncate: bool,
    /// Visit all-visible pages too (DISABLE_PAGE_SKIPPING, FREEZE).
    pub scan_all: bool,
}

fn info_msg(msg: String) -> PgError {
    PgError::new(SqlState::SUCCESSFUL_COMPLETION, msg).with_severity_info()
}

/// Runs VACUUM over `targets`; `info` receives VERBOSE's INFO messages.
pub fn vacuum(
    targets: &[AnalyzeTarget],
    opts: VacuumOptions,
    cx: &mut crate::commands::CommandContext,
    env: &mut ExecEnv,
    info: &mut dyn FnMut(PgError) -> PgResult<()>,
) -> PgResult<()> {
    for t in targets {
        env.check_cancel()?;
        let indexes = table_indexes(env.catalog, &t.0);
        vacuum_table(&t.0, &indexes, opts, cx, env, info)?;
        if let Some(rel) = t.0.toast_locator() {
            vacuum_toast(&t.0, rel, opts, env, info)?;
        }
        if opts.analyze {
            crate::analyze::analyze(std::slice::from_ref(t), opts.verbose, cx, env, info)?;
        }
    }
    Ok(())
}

/// An index VACUUM cleans up along with its table's heap.
#[derive(Debug, Clone)]
pub struct VacuumIndex {
    pub name: String,
    pub rel: RelFileLocator,
    pub desc: access::btree::IndexDesc,
}

/// The indexes of `table` whose entries for dead heap tuples VACUUM's
/// index pass removes.
fn table_indexes(catalog: &catalog::CatalogData, table: &Table) -> Vec<VacuumIndex> {
    catalog
        .indexes_of(table.oid)
        .map(|i| VacuumIndex {
            name: i.name.clone(),
            rel: i.locator(),
            desc: i.desc(table),
        })
        .collect()
}

fn vacuum_table(
    table: &Table,
    indexes: &[VacuumIndex],
    opts: VacuumOptions,
    cx: &mut crate::commands::CommandContext,
    env: &mut ExecEnv,
    info: &mut dyn FnMut(PgError) -> PgResult<()>,
) -> PgResult<()> {
    let schema = env
        .catalog
        .namespaces
        .get(&table.namespace)
        .map_or("public", |n| n.name.as_str());
    let full_name = format!("{}.{schema}.{}", env.db_name, table.name);
    if opts.verbose {
        info(info_msg(format!("vacuuming \"{full_name}\"")))?;
    }
    let start = Start::now(env);
    let env_ref: &ExecEnv = env;
    let (pool, tm) = (env_ref.pool, env_ref.tm);
    let mut index_stats = vec![BulkDeleteStats::default(); indexes.len()];
    let mut index_pass = |dead: &dyn Fn(Tid) -> bool| -> PgResult<()> {
        for (index, total) in indexes.iter().zip(index_stats.iter_mut()) {
            env_ref.check_cancel()?;
            let s = access::btree::bulk_delete(pool, tm, index.rel, &index.desc, dead)?;
            *total = BulkDeleteStats {
                removed: total.removed + s.removed,
                pages_newly_deleted: total.pages_newly_deleted + s.pages_newly_deleted,
                ..s
            };
        }
        Ok(())
    };
    let index_pass: Option<&mut IndexPass<'_>> = if indexes.is_empty() {
        None
    } else {
        Some(&mut index_pass)
    };
    let max_dead_tids = env_ref.settings.maintenance_work_mem() / DEAD_TID_BYTES;
    let stats = vacuum_heap(
        pool,
        env_ref.tm,
        table.locator(),
        HeapVacuumOptions {
            truncate: opts.truncate,
            scan_all: opts.scan_all,
        },
        index_pass,
        max_dead_tids,
        || env_ref.check_cancel(),
    )?;
    if opts.verbose && stats.pages_after < stats.pages_before {
        info(info_msg(format!(
            "table \"{}\": truncated {} to {} pages",
            table.name, stats.pages_before, stats.pages_after
        )))?;
    }
    let reltuples = estimate_reltuples(table, &stats);
    let catalog = cx.catalog;
    let sizes = catalog::ClassSizes {
        reltuples,
        relpages: stats.pages_after,
        relallvisible: stats.all_visible,
    };
    catalog.update_statistics(cx.changes(env)?, env.cid, table.oid, sizes, Vec::new())?;
    if let Some(c) = env.hooks.counters_to_update(table.oid) {
        let autovacuum = env.hooks.is_autovacuum();
        c.report_vacuum(
            reltuples as u64,
            stats.recently_dead,
            autovacuum,
            types::datetime::now_timestamp(),
        );
    }
    if opts.verbose {
        let figures = start.figures(env, stats.horizon);
        let index_lines: Vec<(&str, BulkDeleteStats)> = indexes
            .iter()
            .map(|i| i.name.as_str())
            .zip(index_stats)
            .collect();
        info(info_msg(finished_message(
            &full_name,
            &stats,
            &index_lines,
            &figures,
        )))?;
    }
    Ok(())
}

/// VACUUM of a table's TOAST relation, after the table's: chunks of
/// values whose rows are gone (`access::toast` rule 1) are dead tuples like
/// any other. There is no index to clean (chunks are found by tid).
fn vacuum_toast(
    table: &Table,
    rel: RelFileLocator,
    opts: VacuumOptions,
    env: &mut ExecEnv,
    info: &mut dyn FnMut(PgError) -> PgResult<()>,
) -> PgResult<()> {
    let full_name = format!("{}.pg_toast.pg_toast_{}", env.db_name, table.oid);
    if opts.verbose {
        info(info_msg(format!("vacuuming \"{full_name}\"")))?;
    }
    let start = Start::now(env);
    let env_ref: &ExecEnv = env;
    let max_dead_tids = env_ref.settings.maintenance_work_mem() / DEAD_TID_BYTES;
    let stats = vacuum_heap(
        env_ref.pool,
        env_ref.tm,
        rel,
        HeapVacuumOptions {
            truncate: opts.truncate,
            scan_all: opts.scan_all,
        },
        None,
        max_dead_tids,
        || env_ref.check_cancel(),
    )?;
    if opts.verbose {
        if stats.pages_after < stats.pages_before {
            info(info_msg(format!(
                "table \"pg_toast_{}\": truncated {} to {} pages",
                table.oid, stats.pages_before, stats.pages_after
            )))?;
        }
        let figures = start.figures(env, stats.horizon);
        info(info_msg(finished_message(
            &full_name,
            &stats,
            &[],
            &figures,
        )))?;
    }
    Ok(())
}

/// The table's rows after a VACUUM that skipped all-visible pages: those
/// it counted, plus the skipped pages at the density pg_class knew before
/// (PostgreSQL's vac_estimate_reltuples).
fn estimate_reltuples(table: &Table, stats: &VacuumStats) -> f64 {
    if stats.pages_skipped == 0 {
        return stats.live as f64;
    }
    if stats.pages_scanned == 0 && table.analysed() {
        return table.reltuples;
    }
    let density = if table.analysed() && table.relpages > 0 {
        table.reltuples / f64::from(table.relpages)
    } else {
        0.0
    };
    (stats.live as f64 + density * f64::from(stats.pages_skipped)).round()
}

/// What VERBOSE reports beyond the heap's figures.
/// Where the counters stood when a relation's VACUUM began.
struct Start {
    at: Instant,
    buffers: common::BufferUsage,
    wal: wal::WalStatsSnapshot,
}

impl Start {
    fn now(env: &ExecEnv) -> Start {
        Start {
            at: Instant::now(),
            buffers: storage::buffer::buffer_usage(),
            wal: env.tm.wal().stats(),
        }
    }

    /// What the VACUUM did since, for VERBOSE's last lines.
    fn figures(&self, env: &ExecEnv, horizon: common::Xid) -> Figures {
        let buffers = storage::buffer::buffer_usage();
        let wal = env.tm.wal().stats();
        Figures {
            elapsed: self.at.elapsed().as_secs_f64(),
            hits: buffers.shared_hit - self.buffers.shared_hit,
            misses: buffers.shared_read - self.buffers.shared_read,
            dirtied: buffers.shared_dirtied - self.buffers.shared_dirtied,
            written: buffers.shared_written - self.buffers.shared_written,
            wal_records: wal.records.saturating_sub(self.wal.records),
            wal_fpi: wal.fpi.saturating_sub(self.wal.fpi),
            wal_bytes: wal.bytes.saturating_sub(self.wal.bytes),
            xids_since: env.tm.next_xid().saturating_sub(horizon),
        }
    }
}

struct Figures {
    elapsed: f64,
    hits: u64,
    misses: u64,
    dirtied: u64,
    written: u64,
    wal_records: u64,
    wal_fpi: u64,
    wal_bytes: u64,
    /// Xids handed out since the horizon (how old it was at the end).
    xids_since: u64,
}

fn pct(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        100.0
    } else {
        100.0 * part as f64 / whole as f64
    }
}

/// PostgreSQL 15's "finished vacuuming" message (heap_vacuum_rel), less
/// the relfrozenxid line: 64-bit xids are never frozen. `indexes`: each
/// index's name and what its index passes found: pages unlinked by this
/// VACUUM, deleted pages in the index, and those of them no snapshot can
/// still reach (reusable by splits).
fn finished_message(
    name: &str,
    s: &VacuumStats,
    indexes: &[(&str, BulkDeleteStats)],
    f: &Figures,
) -> String {
    let mb = |blocks: u64| blocks as f64 * storage::BLCKSZ as f64 / (1024.0 * 1024.0);
    let (read_rate, write_rate) = if f.elapsed > 0.0 {
        (
            mb(f.misses) / f.elapsed,
            mb(f.dirtied.max(f.written)) / f.elapsed,
        )
    } else {
        (0.0, 0.0)
    };
    let before = u64::from(s.pages_before);
    let needed = if indexes.is_empty() || s.index_scans == 0 {
        "not needed"
    } else {
        "needed"
    };
    // As PostgreSQL, a line per index that an index pass went over.
    let index_lines: String = indexes
        .iter()
        .filter(|_| s.index_scans > 0)
        .map(|(name, b)| {
            format!(
                "index \"{name}\": pages: {} in total, {} newly deleted, {} currently deleted, {} reusable\n",
                b.pages, b.pages_newly_deleted, b.pages_deleted, b.pages_free
            )
        })
        .collect();
    format!(
        "finished vacuuming \"{name}\": index scans: {}\n\
         pages: {} removed, {} remain, {} scanned ({:.2}% of total)\n\
         tuples: {} removed, {} remain, {} are dead but not yet removable\n\
         removable cutoff: {}, which was {} XIDs old when operation ended\n\
         index scan {needed}: {} pages from table ({:.2}% of total) had {} dead item identifiers removed\n\
         {index_lines}\
         avg read rate: {:.3} MB/s, avg write rate: {:.3} MB/s\n\
         buffer usage: {} hits, {} misses, {} dirtied\n\
         WAL usage: {} records, {} full page images, {} bytes\n\
         system usage: CPU: user: 0.00 s, system: 0.00 s, elapsed: {:.2} s",
        s.index_scans,
        s.pages_before - s.pages_after,
        s.pages_after,
        s.pages_scanned,
        pct(u64::from(s.pages_scanned), before),
        s.tuples_removed,
        s.live + s.recently_dead,
        s.recently_dead,
        s.horizon,
        f.xids_since,
        s.pages_with_dead_items,
        pct(u64::from(s.pages_with_dead_items), before),
        s.dead_items,
        read_rate,
        write_rate,
        f.hits,
        f.misses,
        f.dirtied,
        f.wal_records,
        f.wal_fpi,
        f.wal_bytes,
        f.elapsed,
    )
}
