//! Startup: read the control file, find the last checkpoint, replay the log
//! from its redo pointer to the end of the valid log through the resource
//! managers' [`Redo`] handlers, and position insertion after it.

use std::time::{Duration, Instant};

use crate::control::{ControlFile, DbState};
use crate::reader::{ReadEnd, WalReader};
use crate::record::{Record, RecordBuilder};
use crate::{
    format_lsn, rmgr, segment_of, segments, Lsn, Wal, WalError, WalResult, FIRST_LSN, SEGMENT_SIZE,
};

/// A resource manager's redo: applies one record to the pages, files or
/// other state it changed. Registered per rmgr id; `wal` knows nothing of
/// what the records mean (design.md §2).
pub trait Redo: Sync {
    fn redo(&self, rec: &Record<'_>) -> Result<(), RedoError>;
}

#[derive(Debug, thiserror::Error)]
#[error("redo of {rmgr} record at {lsn} failed: {message}")]
pub struct RedoError {
    pub rmgr: &'static str,
    pub lsn: String,
    pub message: String,
}

impl RedoError {
    pub fn new(rec: &Record<'_>, message: impl Into<String>) -> Self {
        RedoError {
            rmgr: rmgr::name(rec.rmid),
            lsn: format_lsn(rec.lsn),
            message: message.into(),
        }
    }
}

/// What startup did.
#[derive(Debug, Clone)]
pub struct RecoveryReport {
    /// The previous run did not end with a shutdown checkpoint.
    pub crashed: bool,
    pub redo_from: Lsn,
    pub end: Lsn,
    pub records: u64,
    pub elapsed: Duration,
    /// Why replay stopped (the torn or missing tail).
    pub stop_reason: String,
    pub next_xid: u64,
    /// No control file was found: a new cluster.
    pub initialised: bool,
}

/// The body of a checkpoint record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CheckpointInfo {
    pub redo: Lsn,
    pub next_xid: u64,
    pub time: i64,
}

impl CheckpointInfo {
    pub fn encode(&self) -> Vec<u8> {
        let mut b = Vec::with_capacity(24);
        b.extend_from_slice(&self.redo.to_le_bytes());
        b.extend_from_slice(&self.next_xid.to_le_bytes());
        b.extend_from_slice(&self.time.to_le_bytes());
        b
    }
    pub fn decode(b: &[u8]) -> Option<Self> {
        if b.len() != 24 {
            return None;
        }
        let at = |i: usize| u64::from_le_bytes(b[i..i + 8].try_into().unwrap());
        Some(CheckpointInfo {
            redo: at(0),
            next_xid: at(8),
            time: at(16) as i64,
        })
    }
}

fn unix_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}

impl Wal {
    /// Brings the log up: a new cluster gets its first checkpoint; otherwise
    /// the log is replayed from the last checkpoint's redo pointer through
    /// `handlers` (indexed by rmgr id). Afterwards records can be inserted.
    /// The caller then runs a checkpoint if the report says it replayed.
    pub fn startup(
        &self,
        data_dir: &std::path::Path,
        handlers: &[Option<&dyn Redo>],
    ) -> WalResult<RecoveryReport> {
        let started = Instant::now();
        let Some(control) = ControlFile::read(data_dir)? else {
            return self.initialise(data_dir, started);
        };
        let mut reader = WalReader::new(&self.dir, control.checkpoint);
        let checkpoint = match reader.next_record() {
            Ok(r) if r.rmid == rmgr::XLOG => CheckpointInfo::decode(r.main),
            _ => None,
        }
        .ok_or_else(|| {
            WalError::Control(format!(
                "could not locate a valid checkpoint record at {}",
                format_lsn(control.checkpoint)
            ))
        })?;
        let crashed = control.state != DbState::ShutDown;
        if crashed {
            let mut c = control;
            c.state = DbState::InCrashRecovery;
            c.time = unix_now();
            c.write(data_dir, self.settings.fsync())?;
        }
        let mut reader = WalReader::new(&self.dir, checkpoint.redo);
        let mut records = 0u64;
        let mut last = (checkpoint.redo, 0);
        let stop_reason = loop {
            match reader.next_record() {
                Ok(rec) => {
                    last = (rec.end, rec.lsn);
                    if rec.rmid != rmgr::XLOG {
                        let h = handlers
                            .get(rec.rmid as usize)
                            .copied()
                            .flatten()
                            .ok_or_else(|| {
                                RedoError::new(&rec, "no redo for this resource manager")
                            })?;
                        h.redo(&rec)?;
                        records += 1;
                    }
                }
                Err(ReadEnd::Missing(at)) => break format!("no log beyond {}", format_lsn(at)),
                Err(e @ ReadEnd::Invalid(..)) => break e.to_string(),
            }
        };
        let (end, prev) = last;
        if end < control.checkpoint {
            return Err(WalError::Control(format!(
                "the log ends at {} before its last checkpoint at {}",
                format_lsn(end),
                format_lsn(control.checkpoint)
            )));
        }
        if crashed {
            self.discard_tail(end)?;
        }
        self.position(end, prev, checkpoint.redo);
        Ok(RecoveryReport {
            crashed,
            redo_from: checkpoint.redo,
            end,
            records,
            elapsed: started.elapsed(),
            stop_reason,
            next_xid: checkpoint.next_xid,
            initialised: false,
        })
    }

    fn position(&self, end: Lsn, prev: Lsn, redo: Lsn) {
        self.insert.position(end, prev, redo);
        self.write.position(end);
        // Relaxed: startup, before other threads run.
        self.last_redo
            .store(redo, std::sync::atomic::Ordering::Relaxed);
        self.stats
            .start_lsn
            .store(end, std::sync::atomic::Ordering::Relaxed);
    }

    /// After a crash the bytes past the end of the valid log may hold
    /// pieces of records that never completed: zero the rest of the last
    /// segment and drop later ones, so new records never chain onto them.
    fn discard_tail(&self, end: Lsn) -> WalResult<()> {
        let segno = segment_of(end);
        let path = self.dir.join(crate::segment_file_name(segno));
        if let Ok(f) = std::fs::OpenOptions::new().write(true).open(&path) {
            use std::os::unix::fs::FileExt;
            let zeros = vec![0u8; 1 << 20];
            let mut pos = end % SEGMENT_SIZE;
            while pos < SEGMENT_SIZE {
                let n = (SEGMENT_SIZE - pos).min(zeros.len() as u64) as usize;
                f.write_all_at(&zeros[..n], pos)
                    .map_err(|e| WalError::io("write to", &path, e))?;
                pos += n as u64;
            }
            if self.settings.fsync() {
                f.sync_all().map_err(|e| WalError::io("fsync", &path, e))?;
            }
        }
        for later in segments::list(&self.dir)?
            .into_iter()
            .filter(|&s| s > segno)
        {
            let p = self.dir.join(crate::segment_file_name(later));
            std::fs::remove_file(&p).map_err(|e| WalError::io("remove", &p, e))?;
        }
        Ok(())
    }

    fn initialise(
        &self,
        data_dir: &std::path::Path,
        started: Instant,
    ) -> WalResult<RecoveryReport> {
        self.position(FIRST_LSN, 0, FIRST_LSN);
        let info = CheckpointInfo {
            redo: FIRST_LSN,
            next_xid: 0,
            time: unix_now(),
        };
        let lsn = self.insert_checkpoint(&info, true)?;
        ControlFile {
            state: DbState::InProduction,
            checkpoint: lsn,
            redo: FIRST_LSN,
            next_xid: 0,
            time: unix_now(),
        }
        .write(data_dir, self.settings.fsync())?;
        Ok(RecoveryReport {
            crashed: false,
            redo_from: FIRST_LSN,
            end: self.insert_lsn(),
            records: 0,
            elapsed: started.elapsed(),
            stop_reason: String::new(),
            next_xid: 0,
            initialised: true,
        })
    }

    /// Writes a checkpoint record and flushes it; returns its start.
    fn insert_checkpoint(&self, info: &CheckpointInfo, shutdown: bool) -> WalResult<Lsn> {
        let mut rec = RecordBuilder::new(
            rmgr::XLOG,
            if shutdown {
                crate::XLOG_CHECKPOINT_SHUTDOWN
            } else {
                crate::XLOG_CHECKPOINT_ONLINE
            },
            0,
        );
        rec.main_data().extend_from_slice(&info.encode());
        let (start, end) = self.insert_record(&rec)?;
        self.flush(end)?;
        Ok(start)
    }

    /// Starts a checkpoint: from now on pages get a full image at their
    /// first change. Returns the redo pointer.
    pub fn begin_checkpoint(&self) -> Lsn {
        self.insert.begin_checkpoint()
    }

    /// Ends a checkpoint whose dirty pages and commit log are on disk:
    /// writes its record and the control file, and recycles segments the
    /// next recovery no longer needs. Returns (removed, recycled) segments.
    pub fn finish_checkpoint(
        &self,
        data_dir: &std::path::Path,
        redo: Lsn,
        next_xid: u64,
        shutdown: bool,
    ) -> WalResult<(u64, u64)> {
        let info = CheckpointInfo {
            redo,
            next_xid,
            time: unix_now(),
        };
        let lsn = self.insert_checkpoint(&info, shutdown)?;
        ControlFile {
            state: if shutdown {
                DbState::ShutDown
            } else {
                DbState::InProduction
            },
            checkpoint: lsn,
            redo,
            next_xid,
            time: unix_now(),
        }
        .write(data_dir, self.settings.fsync())?;
        // Relaxed: only paces checkpoint requests.
        self.last_redo
            .store(redo, std::sync::atomic::Ordering::Relaxed);
        let keep = (self.settings.min_wal_size() / SEGMENT_SIZE).max(2);
        segments::remove_old(
            &self.dir,
            segment_of(redo),
            segment_of(self.insert_lsn()),
            keep,
        )
    }

    /// Marks the control file "in production" after a clean start.
    pub fn mark_in_production(&self, data_dir: &std::path::Path) -> WalResult<()> {
        if let Some(mut c) = ControlFile::read(data_dir)? {
            if c.state != DbState::InProduction {
                c.state = DbState::InProduction;
                c.time = unix_now();
                c.write(data_dir, self.settings.fsync())?;
            }
        }
        Ok(())
    }
}
