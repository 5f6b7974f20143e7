//! Checkpoints and the threads that keep the log moving (design.md §9):
//! the checkpointer (every `checkpoint_timeout`, when `max_wal_size` worth
//! of log has been written since the last redo pointer, on CHECKPOINT, at
//! shutdown and after crash recovery) and the WAL writer (flushes the log
//! every `wal_writer_delay`, so asynchronous commits become durable).
//!
//! A checkpoint: take the redo pointer (from now on first changes of pages
//! log full images), write every dirty buffer (spread over
//! `checkpoint_completion_target` of the interval unless someone waits),
//! fsync the data files, write the commit log (after the log is flushed
//! past its statuses), then the checkpoint record, the control file, and
//! recycle segments older than the redo pointer.

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{PgError, PgResult};
use parking_lot::Mutex;

use crate::context::{ServerContext, SharedContext};
use crate::gucs::{self, Settings};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CheckpointKind {
    /// The last act of a clean stop: the control file says "shut down".
    Shutdown,
    /// After replaying a crash's log, before accepting connections.
    EndOfRecovery,
    /// CHECKPOINT: as fast as possible.
    Requested,
    /// checkpoint_timeout or max_wal_size: spread out.
    Background { timed: bool },
}

impl CheckpointKind {
    fn immediate(self) -> bool {
        !matches!(self, CheckpointKind::Background { .. })
    }
}

/// Checkpoint settings (reloadable) and counters (pg_stat_bgwriter).
#[derive(Default)]
pub struct Checkpointer {
    /// One checkpoint at a time.
    running: Mutex<()>,
    /// Someone waits for a checkpoint: stop spreading the current one.
    hurry: AtomicBool,
    timeout_ms: AtomicU64,
    /// checkpoint_completion_target × 1000.
    completion_target_milli: AtomicU32,
    pub timed: AtomicU64,
    pub requested: AtomicU64,
    pub write_time_us: AtomicU64,
    pub sync_time_us: AtomicU64,
}

impl Checkpointer {
    pub fn new(settings: &Settings) -> Self {
        let c = Checkpointer::default();
        c.apply(settings);
        c
    }

    /// Takes the checkpoint settings (start and SIGHUP).
    pub fn apply(&self, settings: &Settings) {
        let timeout = settings
            .get("checkpoint_timeout")
            .ok()
            .and_then(|v| gucs::parse_duration_ms(v, 1000))
            .unwrap_or(300_000);
        let target: f64 = settings
            .get("checkpoint_completion_target")
            .ok()
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(0.9);
        // Relaxed: read at the next checkpoint.
        self.timeout_ms.store(timeout.max(1000), Ordering::Relaxed);
        self.completion_target_milli
            .store((target.clamp(0.0, 1.0) * 1000.0) as u32, Ordering::Relaxed);
    }

    fn timeout(&self) -> Duration {
        Duration::from_millis(self.timeout_ms.load(Ordering::Relaxed))
    }
}

/// The log's reloadable settings, typed from the configuration.
pub fn wal_reloadable(s: &Settings) -> wal::settings::WalReloadable {
    let d = wal::settings::WalReloadable::default();
    let get = |n: &str| s.get(n).ok();
    let mb = |n: &str, dflt: u64| {
        get(n)
            .and_then(gucs::parse_memory_kb)
            .map(|kb| kb * 1024)
            .unwrap_or(dflt)
    };
    let num = |n: &str, dflt: u32| get(n).and_then(|v| v.trim().parse().ok()).unwrap_or(dflt);
    wal::settings::WalReloadable {
        fsync: get("fsync").and_then(gucs::parse_bool).unwrap_or(d.fsync),
        full_page_writes: get("full_page_writes")
            .and_then(gucs::parse_bool)
            .unwrap_or(d.full_page_writes),
        sync_method: get("wal_sync_method")
            .and_then(|v| wal::SyncMethod::parse(v.trim()))
            .unwrap_or(d.sync_method),
        commit_delay_us: num("commit_delay", d.commit_delay_us),
        commit_siblings: num("commit_siblings", d.commit_siblings),
        max_wal_size: mb("max_wal_size", d.max_wal_size),
        min_wal_size: mb("min_wal_size", d.min_wal_size),
        writer_delay_ms: get("wal_writer_delay")
            .and_then(|v| gucs::parse_duration_ms(v, 1))
            .map(|ms| ms as u32)
            .unwrap_or(d.writer_delay_ms),
    }
}

/// `wal_buffers` in bytes: -1 is 1/32 of shared_buffers, between 64 kB and
/// one segment, as PostgreSQL sizes it.
pub fn wal_buffer_bytes(s: &Settings, shared_buffers_kb: u64) -> usize {
    let v = s.get("wal_buffers").map(str::trim).unwrap_or("-1");
    let kb = if v == "-1" {
        (shared_buffers_kb / 32).clamp(64, 16 * 1024)
    } else {
        gucs::parse_memory_kb_unit(v, 8).unwrap_or(512).max(64)
    };
    kb as usize * 1024
}

fn io(e: wal::WalError) -> PgError {
    e.into()
}

impl ServerContext {
    /// Runs a checkpoint (see the module comment).
    pub fn checkpoint(&self, kind: CheckpointKind) -> PgResult<()> {
        let ck = &self.checkpointer;
        if kind.immediate() {
            ck.hurry.store(true, Ordering::Relaxed);
        }
        let _running = ck.running.lock();
        ck.hurry.store(false, Ordering::Relaxed);
        let wal = self.tm.wal();
        let redo = wal.begin_checkpoint();
        let started = Instant::now();
        let spread = ck
            .timeout()
            .mul_f64(ck.completion_target_milli.load(Ordering::Relaxed) as f64 / 1000.0);
        let mut pace = |done: usize, total: usize| {
            if kind.immediate() || ck.hurry.load(Ordering::Relaxed) || self.is_shutting_down() {
                return;
            }
            // Ahead of schedule: wait until the elapsed share of the spread
            // catches up with the written share of the buffers.
            let due = spread.mul_f64(done as f64 / total as f64);
            let elapsed = started.elapsed();
            if due > elapsed {
                std::thread::sleep((due - elapsed).min(Duration::from_millis(100)));
            }
        };
        self.pool.write_dirty(&mut pace)?;
        let written = started.elapsed();
        let sync_start = Instant::now();
        self.pool.smgr().sync_all()?;
        self.tm
            .flush()
            .map_err(|e| PgError::io("could not write pg_xact", e))?;
        let synced = sync_start.elapsed();
        wal.finish_checkpoint(
            &self.data_dir,
            redo,
            self.tm.next_xid(),
            kind == CheckpointKind::Shutdown,
        )
        .map_err(io)?;
        match kind {
            CheckpointKind::Background { timed: true } => &ck.timed,
            _ => &ck.requested,
        }
        .fetch_add(1, Ordering::Relaxed);
        ck.write_time_us
            .fetch_add(written.as_micros() as u64, Ordering::Relaxed);
        ck.sync_time_us
            .fetch_add(synced.as_micros() as u64, Ordering::Relaxed);
        Ok(())
    }
}

/// Starts the checkpointer and the WAL writer; they stop when `stop` is set.
pub fn start(ctx: SharedContext, stop: Arc<AtomicBool>) -> Vec<std::thread::JoinHandle<()>> {
    let mut threads = Vec::new();
    let (c, s) = (ctx.clone(), stop.clone());
    threads.push(
        std::thread::Builder::new()
            .name("checkpointer".into())
            .spawn(move || checkpointer_loop(&c, &s))
            .expect("start checkpointer"),
    );
    threads.push(
        std::thread::Builder::new()
            .name("walwriter".into())
            .spawn(move || walwriter_loop(&ctx, &stop))
            .expect("start walwriter"),
    );
    threads
}

fn checkpointer_loop(ctx: &ServerContext, stop: &AtomicBool) {
    let wal = ctx.tm.wal();
    let mut last = Instant::now();
    // Where the log stood after our last checkpoint: an idle server skips
    // timed checkpoints, as PostgreSQL does.
    let mut quiet_at = wal.insert_lsn();
    while !stop.load(Ordering::Relaxed) {
        let timeout = ctx.checkpointer.timeout();
        let left = timeout.saturating_sub(last.elapsed());
        let requested = wal.wait_checkpoint_request(left.min(Duration::from_millis(500)));
        if stop.load(Ordering::Relaxed) {
            break;
        }
        let timed = last.elapsed() >= timeout;
        if !requested && !timed {
            continue;
        }
        last = Instant::now();
        if !requested && wal.insert_lsn() == quiet_at {
            continue;
        }
        if let Err(e) = ctx.checkpoint(CheckpointKind::Background { timed: !requested }) {
            crate::log(&format!("checkpoint failed: {}", e.message));
            continue;
        }
        quiet_at = wal.insert_lsn();
    }
}

fn walwriter_loop(ctx: &ServerContext, stop: &AtomicBool) {
    let wal = ctx.tm.wal();
    while !stop.load(Ordering::Relaxed) {
        let delay = wal.settings.writer_delay_ms().max(1);
        std::thread::sleep(Duration::from_millis(delay as u64));
        if let Err(e) = wal.flush_all() {
            panic!("PANIC: could not flush the write-ahead log: {e}");
        }
    }
}
