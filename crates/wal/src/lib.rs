//! The write-ahead log (design.md §9): records, parallel insertion into the
//! WAL buffers, group flush, segment files in `pg_wal/`, the control file,
//! and the redo loop that resource managers plug into through [`Redo`].
//! See README.md for the rules and the lock order.

pub mod control;
mod insert;
pub mod reader;
pub mod record;
pub mod recovery;
mod segments;
pub mod settings;
mod stats;
mod write;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, AtomicU64};

use parking_lot::{Condvar, Mutex};

pub use control::{ControlFile, DbState};
pub use insert::INSERT_LOCKS;
pub use record::{BlockRef, BlockTag, Record, RecordBuilder};
pub use recovery::{CheckpointInfo, RecoveryReport, Redo, RedoError};
pub use settings::{SyncMethod, WalSettings};
pub use stats::WalStatsSnapshot;

/// A position in the log: a byte offset from the log's beginning.
pub type Lsn = u64;

/// Bytes per segment file.
pub const SEGMENT_SIZE: u64 = 16 << 20;
/// The first record of a new cluster starts here, so 0 is never an LSN.
pub const FIRST_LSN: Lsn = SEGMENT_SIZE;

/// Resource manager ids.
pub mod rmgr {
    /// Checkpoints and other records of the log itself.
    pub const XLOG: u8 = 0;
    pub const XACT: u8 = 1;
    pub const SMGR: u8 = 2;
    pub const HEAP: u8 = 10;
    /// Sequence pages (access::sequence).
    pub const SEQ: u8 = 11;
    /// B-tree indexes (access::btree).
    pub const BTREE: u8 = 12;
    /// Number of ids a redo table has.
    pub const COUNT: usize = 16;

    pub fn name(id: u8) -> &'static str {
        match id {
            XLOG => "XLOG",
            XACT => "Transaction",
            SMGR => "Storage",
            HEAP => "Heap",
            SEQ => "Sequence",
            BTREE => "Btree",
            _ => "Unknown",
        }
    }
}

/// XLOG record kinds.
pub const XLOG_CHECKPOINT_SHUTDOWN: u8 = 0x00;
pub const XLOG_CHECKPOINT_ONLINE: u8 = 0x10;

/// PostgreSQL's text form of an LSN: `16/B374D848`.
pub fn format_lsn(lsn: Lsn) -> String {
    format!("{:X}/{:X}", lsn >> 32, lsn as u32)
}

/// Parses `X/Y` (pg_lsn input).
pub fn parse_lsn(s: &str) -> Option<Lsn> {
    let (hi, lo) = s.split_once('/')?;
    let hi = u32::from_str_radix(hi, 16).ok()?;
    let lo = u32::from_str_radix(lo, 16).ok()?;
    Some(((hi as u64) << 32) | lo as u64)
}

/// The file name of the segment holding `lsn` (timeline 1), as
/// `pg_walfile_name` prints it.
pub fn segment_file_name(segno: u64) -> String {
    let per_id = 0x1_0000_0000 / SEGMENT_SIZE;
    format!("{:08X}{:08X}{:08X}", 1, segno / per_id, segno % per_id)
}

pub fn segment_of(lsn: Lsn) -> u64 {
    lsn / SEGMENT_SIZE
}

/// Errors of log I/O. A failed write or fsync of the log cannot be retried
/// safely (PostgreSQL PANICs); callers that acknowledge commits stop.
#[derive(Debug, thiserror::Error)]
pub enum WalError {
    #[error("could not {op} file \"{path}\": {source}")]
    Io {
        op: &'static str,
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("invalid control file: {0}")]
    Control(String),
    #[error("{0}")]
    Redo(#[from] RedoError),
}

impl WalError {
    pub(crate) fn io(op: &'static str, path: &Path, source: std::io::Error) -> Self {
        WalError::Io {
            op,
            path: path.display().to_string(),
            source,
        }
    }
}

impl From<WalError> for common::PgError {
    fn from(e: WalError) -> Self {
        let code = match &e {
            WalError::Io { .. } => common::SqlState::IO_ERROR,
            WalError::Control(_) | WalError::Redo(_) => common::SqlState::DATA_CORRUPTED,
        };
        common::PgError::new(code, e.to_string())
    }
}

pub type WalResult<T> = Result<T, WalError>;

/// The log of one server. Shared by every thread (`&'static`).
pub struct Wal {
    dir: PathBuf,
    pub settings: WalSettings,
    insert: insert::Inserter,
    write: write::Writer,
    /// A checkpoint is wanted (max_wal_size reached); the checkpointer
    /// waits on `checkpoint_wanted`.
    checkpoint_requested: Mutex<bool>,
    checkpoint_wanted: Condvar,
    /// Where the last checkpoint's redo starts (for max_wal_size).
    last_redo: AtomicU64,
    /// Open transactions, kept by the transaction manager (commit_siblings).
    pub active_transactions: AtomicU32,
    stats: stats::WalStats,
}

impl Wal {
    /// Opens `pg_wal` under `data_dir`. Nothing can be inserted before
    /// [`Wal::startup`] has found the end of the log.
    pub fn open(data_dir: &Path, settings: WalSettings) -> WalResult<&'static Wal> {
        let dir = data_dir.join("pg_wal");
        std::fs::create_dir_all(&dir).map_err(|e| WalError::io("create directory", &dir, e))?;
        let ring = settings.buffer_bytes;
        let wal = Box::leak(Box::new(Wal {
            insert: insert::Inserter::new(ring, settings.insert_locks),
            write: write::Writer::new(dir.clone()),
            dir,
            settings,
            checkpoint_requested: Mutex::new(false),
            checkpoint_wanted: Condvar::new(),
            last_redo: AtomicU64::new(0),
            active_transactions: AtomicU32::new(0),
            stats: stats::WalStats::default(),
        }));
        Ok(wal)
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Waits until a checkpoint is requested by log volume, or `timeout`.
    /// Returns whether one was requested.
    pub fn wait_checkpoint_request(&self, timeout: std::time::Duration) -> bool {
        let mut req = self.checkpoint_requested.lock();
        if !*req {
            self.checkpoint_wanted.wait_for(&mut req, timeout);
        }
        std::mem::take(&mut *req)
    }

    /// Asks the checkpointer to run now (CHECKPOINT, max_wal_size).
    pub fn request_checkpoint(&self) {
        *self.checkpoint_requested.lock() = true;
        self.checkpoint_wanted.notify_all();
    }

    pub fn stats(&self) -> WalStatsSnapshot {
        self.stats.snapshot(&self.insert)
    }
}

#[cfg(test)]
mod tests;
