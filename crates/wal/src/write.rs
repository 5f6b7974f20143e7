//! Writing and flushing (PostgreSQL's XLogWrite/XLogFlush): one WALWrite
//! lock; its holder writes every finished byte of the ring to the segment
//! files and syncs them, so every commit waiting behind it returns together
//! (group commit).

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use parking_lot::Mutex;

use crate::{segment_file_name, segment_of, segments, Lsn, Wal, WalError, WalResult, SEGMENT_SIZE};

pub(crate) struct WriteState {
    dir: PathBuf,
    /// The segment last written and whether it has unsynced writes.
    open: Option<(u64, File, bool)>,
    /// The sync flags `open` was opened with (the sync method can change).
    open_flags: i32,
}

pub(crate) struct Writer {
    state: Mutex<WriteState>,
    /// Everything below is written to the files (maybe not synced).
    written: AtomicU64,
    /// Everything below is durable.
    flushed: AtomicU64,
}

impl Writer {
    pub(crate) fn new(dir: PathBuf) -> Self {
        Writer {
            state: Mutex::new(WriteState {
                dir,
                open: None,
                open_flags: 0,
            }),
            written: AtomicU64::new(0),
            flushed: AtomicU64::new(0),
        }
    }

    pub(crate) fn position(&self, end: Lsn) {
        // Release: pairs with the Acquire loads in `written`/`flushed`
        // (startup, before other threads insert).
        self.written.store(end, Ordering::Release);
        self.flushed.store(end, Ordering::Release);
    }

    pub(crate) fn written(&self) -> Lsn {
        // Acquire pairs with the Release in `write_upto`: the writer has
        // finished reading the ring below this position.
        self.written.load(Ordering::Acquire)
    }

    pub(crate) fn flushed(&self) -> Lsn {
        // Acquire pairs with the Release in `write_upto`.
        self.flushed.load(Ordering::Acquire)
    }
}

impl Wal {
    /// Makes the log durable up to `upto` (a commit's end, or a page's LSN
    /// before the page is written).
    pub fn flush(&self, upto: Lsn) -> WalResult<()> {
        if self.write.flushed() >= upto {
            return Ok(());
        }
        self.write_upto(upto, true)
    }

    /// Flushes everything inserted so far (walwriter, checkpoints).
    pub fn flush_all(&self) -> WalResult<Lsn> {
        let upto = self.insert.reserved();
        self.flush(upto)?;
        Ok(upto)
    }

    pub fn flush_lsn(&self) -> Lsn {
        self.write.flushed()
    }

    pub fn write_lsn(&self) -> Lsn {
        self.write.written()
    }

    /// Writes (and with `sync`, syncs) the log at least up to `upto`.
    pub(crate) fn write_upto(&self, upto: Lsn, sync: bool) -> WalResult<()> {
        let done = |w: &Wal| {
            if sync {
                w.write.flushed()
            } else {
                w.write.written()
            }
        };
        if done(self) >= upto {
            return Ok(());
        }
        // Never wait for insertions while holding the write lock: an
        // inserter short of ring space needs that lock to go on.
        self.insert.wait_insertions(upto);
        let mut st = self.write.state.lock();
        if done(self) >= upto {
            return Ok(());
        }
        if sync {
            let delay = self.settings.commit_delay_us();
            if delay > 0
                && self.settings.fsync()
                && self.active_siblings() >= self.settings.commit_siblings()
            {
                std::thread::sleep(std::time::Duration::from_micros(delay as u64));
            }
        }
        // Take along everything already copied: the group in group commit.
        let reach = upto.max(self.insert.finished_upto(self.insert.reserved()));
        self.write_ring(&mut st, reach)?;
        if sync {
            self.sync_open(&mut st)?;
            // Release pairs with the Acquire in `Writer::flushed`.
            self.write.flushed.store(reach, Ordering::Release);
        }
        Ok(())
    }

    /// How many transactions other threads have open (commit_siblings).
    fn active_siblings(&self) -> u32 {
        self.active_transactions
            .load(Ordering::Relaxed)
            .saturating_sub(1)
    }

    fn write_ring(&self, st: &mut WriteState, reach: Lsn) -> WalResult<()> {
        let ring_len = self.insert.ring_len() as u64;
        let mut pos = self.write.written();
        while pos < reach {
            let seg_end = (segment_of(pos) + 1) * SEGMENT_SIZE;
            let wrap = pos - pos % ring_len + ring_len;
            let to = reach.min(seg_end).min(wrap);
            let file = self.segment_for(st, segment_of(pos))?;
            // SAFETY: every insertion below `reach` has finished (waited
            // for by the caller, or `finished_upto`), and inserters reuse
            // these bytes only after `written` passes them.
            let bytes = unsafe { self.insert.ring_slice(pos, to) };
            let t = Instant::now();
            file.write_all_at(bytes, pos % SEGMENT_SIZE).map_err(|e| {
                WalError::io(
                    "write to",
                    &st.dir.join(segment_file_name(segment_of(pos))),
                    e,
                )
            })?;
            self.stats.record_write(t.elapsed());
            if let Some(open) = st.open.as_mut() {
                open.2 = true;
            }
            pos = to;
            // Release pairs with the Acquire in `Writer::written`.
            self.write.written.store(pos, Ordering::Release);
        }
        Ok(())
    }

    /// The open file of segment `segno`; the previous one is synced first
    /// when it has unsynced writes (its writes are complete).
    fn segment_for<'s>(&self, st: &'s mut WriteState, segno: u64) -> WalResult<&'s File> {
        let method = self.settings.sync_method();
        let flags = if !self.settings.fsync() || !method.syncs_on_write() {
            0
        } else if method == crate::SyncMethod::OpenSync {
            libc::O_SYNC
        } else {
            libc::O_DSYNC
        };
        let reopen = match &st.open {
            Some((n, _, _)) => *n != segno || st.open_flags != flags,
            None => true,
        };
        if reopen {
            self.sync_open(st)?;
            let f = segments::open_for_write(&st.dir, segno, flags, self.settings.fsync())?;
            st.open = Some((segno, f, false));
            st.open_flags = flags;
        }
        Ok(&st.open.as_ref().expect("opened").1)
    }

    fn sync_open(&self, st: &mut WriteState) -> WalResult<()> {
        let Some((segno, file, dirty)) = st.open.as_mut() else {
            return Ok(());
        };
        if !*dirty {
            return Ok(());
        }
        *dirty = false;
        let method = self.settings.sync_method();
        if !self.settings.fsync() || (method.syncs_on_write() && st.open_flags != 0) {
            return Ok(());
        }
        let t = Instant::now();
        let r = if method == crate::SyncMethod::Fsync {
            file.sync_all()
        } else {
            file.sync_data()
        };
        r.map_err(|e| WalError::io("fsync", &st.dir.join(segment_file_name(*segno)), e))?;
        self.stats.record_sync(t.elapsed());
        Ok(())
    }
}
