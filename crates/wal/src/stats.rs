//! pg_stat_wal's counters. Records and images are counted per insertion
//! slot (under its lock); writes and syncs under the WALWrite lock.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use crate::insert::Inserter;

#[derive(Default)]
pub(crate) struct WalStats {
    pub(crate) buffers_full: AtomicU64,
    writes: AtomicU64,
    syncs: AtomicU64,
    write_us: AtomicU64,
    sync_us: AtomicU64,
    /// Where the log stood when the server started (wal_bytes counts from it).
    pub(crate) start_lsn: AtomicU64,
}

/// What pg_stat_wal shows.
#[derive(Debug, Clone, Copy, Default)]
pub struct WalStatsSnapshot {
    pub records: u64,
    pub fpi: u64,
    pub bytes: u64,
    pub buffers_full: u64,
    pub write: u64,
    pub sync: u64,
    pub write_time_ms: f64,
    pub sync_time_ms: f64,
}

impl WalStats {
    pub(crate) fn record_write(&self, t: Duration) {
        self.writes.fetch_add(1, Ordering::Relaxed);
        self.write_us
            .fetch_add(t.as_micros() as u64, Ordering::Relaxed);
    }
    pub(crate) fn record_sync(&self, t: Duration) {
        self.syncs.fetch_add(1, Ordering::Relaxed);
        self.sync_us
            .fetch_add(t.as_micros() as u64, Ordering::Relaxed);
    }

    pub(crate) fn snapshot(&self, ins: &Inserter) -> WalStatsSnapshot {
        let o = Ordering::Relaxed;
        let mut s = WalStatsSnapshot {
            bytes: ins.reserved().saturating_sub(self.start_lsn.load(o)),
            buffers_full: self.buffers_full.load(o),
            write: self.writes.load(o),
            sync: self.syncs.load(o),
            write_time_ms: self.write_us.load(o) as f64 / 1000.0,
            sync_time_ms: self.sync_us.load(o) as f64 / 1000.0,
            ..Default::default()
        };
        for slot in ins.slots() {
            s.records += slot.records.load(o);
            s.fpi += slot.images.load(o);
        }
        s
    }
}
