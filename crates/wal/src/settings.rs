//! The log's settings, typed once by the server. The ones PostgreSQL lets a
//! reload change are atomics the server stores into on SIGHUP; readers use
//! Relaxed loads (a setting is a hint that takes effect "soon").

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicU8, Ordering};

/// `wal_sync_method`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SyncMethod {
    Fdatasync = 0,
    Fsync = 1,
    OpenDatasync = 2,
    OpenSync = 3,
}

impl SyncMethod {
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "fdatasync" => SyncMethod::Fdatasync,
            "fsync" => SyncMethod::Fsync,
            "open_datasync" => SyncMethod::OpenDatasync,
            "open_sync" => SyncMethod::OpenSync,
            _ => return None,
        })
    }
    fn from_u8(v: u8) -> Self {
        match v {
            1 => SyncMethod::Fsync,
            2 => SyncMethod::OpenDatasync,
            3 => SyncMethod::OpenSync,
            _ => SyncMethod::Fdatasync,
        }
    }
    /// Segment files are opened with O_DSYNC/O_SYNC: every write is durable
    /// when it returns, no separate sync.
    pub fn syncs_on_write(self) -> bool {
        matches!(self, SyncMethod::OpenDatasync | SyncMethod::OpenSync)
    }
}

#[derive(Debug)]
pub struct WalSettings {
    /// `wal_buffers`, bytes (fixed at start).
    pub buffer_bytes: usize,
    /// Insertion slots (fixed at start; 8 as PostgreSQL, 1 for ablations).
    pub insert_locks: usize,
    fsync: AtomicBool,
    full_page_writes: AtomicBool,
    sync_method: AtomicU8,
    commit_delay_us: AtomicU32,
    commit_siblings: AtomicU32,
    max_wal_size: AtomicU64,
    min_wal_size: AtomicU64,
    writer_delay_ms: AtomicU32,
}

/// The reloadable part, as the server parsed it.
#[derive(Debug, Clone, Copy)]
pub struct WalReloadable {
    pub fsync: bool,
    pub full_page_writes: bool,
    pub sync_method: SyncMethod,
    pub commit_delay_us: u32,
    pub commit_siblings: u32,
    pub max_wal_size: u64,
    pub min_wal_size: u64,
    pub writer_delay_ms: u32,
}

impl Default for WalReloadable {
    fn default() -> Self {
        WalReloadable {
            fsync: true,
            full_page_writes: true,
            sync_method: SyncMethod::Fdatasync,
            commit_delay_us: 0,
            commit_siblings: 5,
            max_wal_size: 1 << 30,
            min_wal_size: 80 << 20,
            writer_delay_ms: 200,
        }
    }
}

impl WalSettings {
    pub fn new(buffer_bytes: usize, r: WalReloadable) -> Self {
        let s = WalSettings {
            buffer_bytes: buffer_bytes.max(64 * 1024),
            insert_locks: crate::INSERT_LOCKS,
            fsync: AtomicBool::new(r.fsync),
            full_page_writes: AtomicBool::new(r.full_page_writes),
            sync_method: AtomicU8::new(r.sync_method as u8),
            commit_delay_us: AtomicU32::new(r.commit_delay_us),
            commit_siblings: AtomicU32::new(r.commit_siblings),
            max_wal_size: AtomicU64::new(r.max_wal_size),
            min_wal_size: AtomicU64::new(r.min_wal_size),
            writer_delay_ms: AtomicU32::new(r.writer_delay_ms),
        };
        s.apply(r);
        s
    }

    /// Applies settings re-read on SIGHUP.
    pub fn apply(&self, r: WalReloadable) {
        let o = Ordering::Relaxed;
        self.fsync.store(r.fsync, o);
        self.full_page_writes.store(r.full_page_writes, o);
        self.sync_method.store(r.sync_method as u8, o);
        self.commit_delay_us.store(r.commit_delay_us, o);
        self.commit_siblings.store(r.commit_siblings, o);
        self.max_wal_size.store(r.max_wal_size, o);
        self.min_wal_size.store(r.min_wal_size, o);
        self.writer_delay_ms.store(r.writer_delay_ms, o);
    }

    pub fn fsync(&self) -> bool {
        self.fsync.load(Ordering::Relaxed)
    }
    pub fn full_page_writes(&self) -> bool {
        self.full_page_writes.load(Ordering::Relaxed)
    }
    pub fn sync_method(&self) -> SyncMethod {
        SyncMethod::from_u8(self.sync_method.load(Ordering::Relaxed))
    }
    pub fn commit_delay_us(&self) -> u32 {
        self.commit_delay_us.load(Ordering::Relaxed)
    }
    pub fn commit_siblings(&self) -> u32 {
        self.commit_siblings.load(Ordering::Relaxed)
    }
    pub fn max_wal_size(&self) -> u64 {
        self.max_wal_size.load(Ordering::Relaxed)
    }
    pub fn min_wal_size(&self) -> u64 {
        self.min_wal_size.load(Ordering::Relaxed)
    }
    pub fn writer_delay_ms(&self) -> u32 {
        self.writer_delay_ms.load(Ordering::Relaxed)
    }
}
