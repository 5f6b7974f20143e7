//! VACUUM [ANALYZE]: each table's heap is vacuumed through `access`
//! (pruning, free space, truncation), its pg_class reltuples/relpages and
//! cumulative statistics updated, then ANALYZE runs on it when asked.
//! VERBOSE prints PostgreSQL 15's INFO lines with our figures.

use std::time::Instant;

use access::heap::vacuum::{vacuum_heap, VacuumStats};
use catalog::Table;
use common::{PgError, PgResult, SqlState};

use crate::analyze::AnalyzeTarget;
use crate::ExecEnv;

/// VACUUM's options that change what it does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VacuumOptions {
    pub verbose: bool,
    pub analyze: bool,
    /// TRUNCATE: cut empty pages off the end (default on).
    pub truncate: bool,
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
        vacuum_table(&t.0, opts, cx, env, info)?;
        if opts.analyze {
            crate::analyze::analyze(std::slice::from_ref(t), opts.verbose, cx, env, info)?;
        }
    }
    Ok(())
}

fn vacuum_table(
    table: &Table,
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
    let started = Instant::now();
    let buffers_before = storage::buffer::buffer_usage();
    let wal_before = env.tm.wal().stats();
    let env_ref: &ExecEnv = env;
    let stats = vacuum_heap(
        env_ref.pool,
        env_ref.tm,
        table.locator(),
        opts.truncate,
        || env_ref.check_cancel(),
    )?;
    if opts.verbose && stats.pages_after < stats.pages_before {
        info(info_msg(format!(
            "table \"{}\": truncated {} to {} pages",
            table.name, stats.pages_before, stats.pages_after
        )))?;
    }
    let catalog = cx.catalog;
    catalog.update_statistics(
        cx.changes(env)?,
        env.cid,
        table.oid,
        stats.live as f64,
        stats.pages_after,
        Vec::new(),
    )?;
    if let Some(c) = env.hooks.counters_to_update(table.oid) {
        let autovacuum = env.hooks.is_autovacuum();
        c.report_vacuum(
            stats.live,
            stats.recently_dead,
            autovacuum,
            types::datetime::now_timestamp(),
        );
    }
    if opts.verbose {
        let buffers = storage::buffer::buffer_usage();
        let wal = env.tm.wal().stats();
        let figures = Figures {
            elapsed: started.elapsed().as_secs_f64(),
            hits: buffers.shared_hit - buffers_before.shared_hit,
            misses: buffers.shared_read - buffers_before.shared_read,
            dirtied: buffers.shared_dirtied - buffers_before.shared_dirtied,
            written: buffers.shared_written - buffers_before.shared_written,
            wal_records: wal.records.saturating_sub(wal_before.records),
            wal_fpi: wal.fpi.saturating_sub(wal_before.fpi),
            wal_bytes: wal.bytes.saturating_sub(wal_before.bytes),
            xids_since: env.tm.next_xid().saturating_sub(stats.horizon),
        };
        info(info_msg(finished_message(&full_name, &stats, &figures)))?;
    }
    Ok(())
}

/// What VERBOSE reports beyond the heap's figures.
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
/// the relfrozenxid line: 64-bit xids are never frozen.
fn finished_message(name: &str, s: &VacuumStats, f: &Figures) -> String {
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
    format!(
        "finished vacuuming \"{name}\": index scans: 0\n\
         pages: {} removed, {} remain, {} scanned ({:.2}% of total)\n\
         tuples: {} removed, {} remain, {} are dead but not yet removable\n\
         removable cutoff: {}, which was {} XIDs old when operation ended\n\
         index scan not needed: {} pages from table ({:.2}% of total) had {} dead item identifiers removed\n\
         avg read rate: {:.3} MB/s, avg write rate: {:.3} MB/s\n\
         buffer usage: {} hits, {} misses, {} dirtied\n\
         WAL usage: {} records, {} full page images, {} bytes\n\
         system usage: CPU: user: 0.00 s, system: 0.00 s, elapsed: {:.2} s",
        s.pages_before - s.pages_after,
        s.pages_after,
        s.pages_scanned,
        pct(u64::from(s.pages_scanned), before),
        s.tuples_removed,
        s.live + s.recently_dead,
        s.recently_dead,
        s.horizon,
        f.xids_since,
        s.pages_pruned,
        pct(u64::from(s.pages_pruned), before),
        s.tuples_removed,
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
