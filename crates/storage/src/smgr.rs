//! Storage manager: relation forks as files of 8 KB blocks, split into 1 GB
//! segments (`base/<db>/<relfilenode>[_fork][.<segment>]`), read and written
//! with positioned I/O so no file-position lock is needed.
//!
//! Relation size is cached per fork; extension reserves block numbers under a
//! per-fork mutex (RelationExtension) and the new block reaches the file when
//! its buffer is first written. Reading past the end of the file yields zeroes.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use common::ids::{DEFAULT_TABLESPACE_OID, GLOBAL_TABLESPACE_OID};
use common::{BlockNumber, RelFileLocator};
use parking_lot::{Mutex, RwLock};

use crate::{ForkNumber, StorageError, StorageResult, BLCKSZ, RELSEG_BLOCKS};

/// Open files and cached size of one relation fork.
pub struct ForkFiles {
    base_path: PathBuf,
    segments: RwLock<Vec<Arc<File>>>,
    nblocks: AtomicU32,
    extension: Mutex<()>,
}

impl ForkFiles {
    fn segment_path(&self, seg: usize) -> PathBuf {
        if seg == 0 {
            self.base_path.clone()
        } else {
            let mut s = self.base_path.clone().into_os_string();
            s.push(format!(".{seg}"));
            PathBuf::from(s)
        }
    }

    fn io_err(&self, op: &'static str, e: std::io::Error) -> StorageError {
        StorageError::Io {
            op,
            path: self.base_path.display().to_string(),
            source: e,
        }
    }

    fn segment(&self, seg: usize, create: bool) -> StorageResult<Option<Arc<File>>> {
        if let Some(f) = self.segments.read().get(seg) {
            return Ok(Some(f.clone()));
        }
        let mut segs = self.segments.write();
        while segs.len() <= seg {
            let path = self.segment_path(segs.len());
            let f = OpenOptions::new()
                .read(true)
                .write(true)
                .create(create)
                .truncate(false)
                .open(&path);
            match f {
                Ok(f) => segs.push(Arc::new(f)),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound && !create => return Ok(None),
                Err(e) => return Err(self.io_err("open", e)),
            }
        }
        Ok(Some(segs[seg].clone()))
    }
}

pub struct Smgr {
    data_dir: PathBuf,
    forks: RwLock<HashMap<(RelFileLocator, ForkNumber), Arc<ForkFiles>>>,
}

impl Smgr {
    pub fn new(data_dir: impl Into<PathBuf>) -> Self {
        Smgr {
            data_dir: data_dir.into(),
            forks: RwLock::new(HashMap::new()),
        }
    }

    pub fn data_dir(&self) -> &Path {
        &self.data_dir
    }

    /// Path of a fork's first segment, relative to the data directory
    /// (what `pg_relation_filepath` returns).
    pub fn relative_path(rel: RelFileLocator, fork: ForkNumber) -> String {
        let base = match rel.spc_oid {
            GLOBAL_TABLESPACE_OID => format!("global/{}", rel.rel_number),
            DEFAULT_TABLESPACE_OID => format!("base/{}/{}", rel.db_oid, rel.rel_number),
            spc => format!("pg_tblspc/{spc}/{}/{}", rel.db_oid, rel.rel_number),
        };
        format!("{base}{}", fork.suffix())
    }

    fn fork(&self, rel: RelFileLocator, fork: ForkNumber) -> StorageResult<Arc<ForkFiles>> {
        if let Some(f) = self.forks.read().get(&(rel, fork)) {
            return Ok(f.clone());
        }
        let mut map = self.forks.write();
        if let Some(f) = map.get(&(rel, fork)) {
            return Ok(f.clone());
        }
        let files = ForkFiles {
            base_path: self.data_dir.join(Self::relative_path(rel, fork)),
            segments: RwLock::new(Vec::new()),
            nblocks: AtomicU32::new(0),
            extension: Mutex::new(()),
        };
        // Size from the files present: full segments plus the last one.
        let mut nblocks = 0u32;
        let mut seg = 0usize;
        while let Some(f) = files.segment(seg, false)? {
            let len = f.metadata().map_err(|e| files.io_err("stat", e))?.len();
            let blocks = len.div_ceil(BLCKSZ as u64) as u32;
            nblocks = seg as u32 * RELSEG_BLOCKS + blocks;
            if blocks < RELSEG_BLOCKS {
                break;
            }
            seg += 1;
        }
        files.nblocks.store(nblocks, Ordering::Relaxed);
        let files = Arc::new(files);
        map.insert((rel, fork), files.clone());
        Ok(files)
    }

    /// Creates the fork's first segment (and its directory) if missing.
    pub fn create(&self, rel: RelFileLocator, fork: ForkNumber) -> StorageResult<()> {
        let path = self.data_dir.join(Self::relative_path(rel, fork));
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| StorageError::Io {
                op: "create directory",
                path: dir.display().to_string(),
                source: e,
            })?;
        }
        self.fork(rel, fork)?.segment(0, true)?;
        Ok(())
    }

    pub fn exists(&self, rel: RelFileLocator, fork: ForkNumber) -> bool {
        self.data_dir.join(Self::relative_path(rel, fork)).exists()
    }

    pub fn nblocks(&self, rel: RelFileLocator, fork: ForkNumber) -> StorageResult<BlockNumber> {
        Ok(self.fork(rel, fork)?.nblocks.load(Ordering::Acquire))
    }

    /// Reserves `count` new blocks at the end of the fork; returns the first.
    /// The caller initialises them in buffers, which write them out later.
    pub fn extend(
        &self,
        rel: RelFileLocator,
        fork: ForkNumber,
        count: u32,
    ) -> StorageResult<BlockNumber> {
        let f = self.fork(rel, fork)?;
        let _ext = f.extension.lock();
        let first = f.nblocks.load(Ordering::Relaxed);
        // Release: a reader that sees the new size (Acquire in nblocks) may read the
        // new blocks; they read as zero pages until written.
        f.nblocks.store(first + count, Ordering::Release);
        Ok(first)
    }

    pub fn read_block(
        &self,
        rel: RelFileLocator,
        fork: ForkNumber,
        block: BlockNumber,
        buf: &mut [u8],
    ) -> StorageResult<()> {
        let f = self.fork(rel, fork)?;
        let seg = (block / RELSEG_BLOCKS) as usize;
        let offset = (block % RELSEG_BLOCKS) as u64 * BLCKSZ as u64;
        let Some(file) = f.segment(seg, false)? else {
            buf.fill(0);
            return Ok(());
        };
        let mut done = 0;
        while done < BLCKSZ {
            match file.read_at(&mut buf[done..BLCKSZ], offset + done as u64) {
                Ok(0) => {
                    buf[done..BLCKSZ].fill(0);
                    break;
                }
                Ok(n) => done += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(f.io_err("read", e)),
            }
        }
        Ok(())
    }

    /// Reads consecutive blocks `first..first + bufs.len()` (within one
    /// segment) with one vectored read; blocks past the end read as zeroes.
    pub fn read_blocks(
        &self,
        rel: RelFileLocator,
        fork: ForkNumber,
        first: BlockNumber,
        bufs: &mut [&mut [u8]],
    ) -> StorageResult<()> {
        use std::os::fd::AsRawFd;
        let f = self.fork(rel, fork)?;
        let seg = (first / RELSEG_BLOCKS) as usize;
        debug_assert!(
            (first + bufs.len() as u32 - 1) / RELSEG_BLOCKS == first / RELSEG_BLOCKS,
            "vectored read crosses a segment"
        );
        let Some(file) = f.segment(seg, false)? else {
            bufs.iter_mut().for_each(|b| b.fill(0));
            return Ok(());
        };
        let base = (first % RELSEG_BLOCKS) as u64 * BLCKSZ as u64;
        let total = bufs.len() * BLCKSZ;
        let mut done = 0usize;
        while done < total {
            let (skip_buf, skip_off) = (done / BLCKSZ, done % BLCKSZ);
            let iov: Vec<libc::iovec> = bufs[skip_buf..]
                .iter_mut()
                .enumerate()
                .map(|(i, b)| {
                    let off = if i == 0 { skip_off } else { 0 };
                    libc::iovec {
                        iov_base: b[off..].as_mut_ptr() as *mut libc::c_void,
                        iov_len: BLCKSZ - off,
                    }
                })
                .collect();
            // SAFETY: the iovecs point into distinct live buffers we borrow mutably.
            let n = unsafe {
                libc::preadv(
                    file.as_raw_fd(),
                    iov.as_ptr(),
                    iov.len().min(1024) as libc::c_int,
                    (base + done as u64) as libc::off_t,
                )
            };
            if n < 0 {
                let e = std::io::Error::last_os_error();
                if e.kind() == std::io::ErrorKind::Interrupted {
                    continue;
                }
                return Err(f.io_err("read", e));
            }
            if n == 0 {
                // End of file: the rest reads as zeroes.
                let (b, o) = (done / BLCKSZ, done % BLCKSZ);
                bufs[b][o..].fill(0);
                bufs[b + 1..].iter_mut().for_each(|x| x.fill(0));
                break;
            }
            done += n as usize;
        }
        Ok(())
    }

    pub fn write_block(
        &self,
        rel: RelFileLocator,
        fork: ForkNumber,
        block: BlockNumber,
        buf: &[u8],
    ) -> StorageResult<()> {
        let f = self.fork(rel, fork)?;
        let seg = (block / RELSEG_BLOCKS) as usize;
        // Segments before this one must exist at full length for sizing to work.
        for s in 0..seg {
            let file = f.segment(s, true)?.expect("created");
            let want = RELSEG_BLOCKS as u64 * BLCKSZ as u64;
            if file.metadata().map_err(|e| f.io_err("stat", e))?.len() < want {
                file.set_len(want).map_err(|e| f.io_err("extend", e))?;
            }
        }
        let file = f.segment(seg, true)?.expect("created");
        let offset = (block % RELSEG_BLOCKS) as u64 * BLCKSZ as u64;
        file.write_all_at(&buf[..BLCKSZ], offset)
            .map_err(|e| f.io_err("write", e))
    }

    /// Hints the kernel to read blocks ahead (pg_prewarm 'prefetch').
    pub fn prefetch(
        &self,
        rel: RelFileLocator,
        fork: ForkNumber,
        block: BlockNumber,
    ) -> StorageResult<()> {
        use std::os::fd::AsRawFd;
        let f = self.fork(rel, fork)?;
        let seg = (block / RELSEG_BLOCKS) as usize;
        if let Some(file) = f.segment(seg, false)? {
            let offset = (block % RELSEG_BLOCKS) as i64 * BLCKSZ as i64;
            // SAFETY: plain syscall on a valid descriptor.
            unsafe {
                libc::posix_fadvise(
                    file.as_raw_fd(),
                    offset,
                    BLCKSZ as i64,
                    libc::POSIX_FADV_WILLNEED,
                )
            };
        }
        Ok(())
    }

    /// Shrinks a fork (VACUUM's truncation of empty pages at the end).
    /// `decide` is called with the current size while extension is locked
    /// out, so no block is added meanwhile; it returns the new size with
    /// whatever it must hold until the files are cut (the pages' locks), or
    /// None to leave the fork alone. Segments past the new end are
    /// emptied, not removed, so open handles stay valid.
    pub fn truncate_with<R>(
        &self,
        rel: RelFileLocator,
        fork: ForkNumber,
        decide: impl FnOnce(BlockNumber) -> Option<(BlockNumber, R)>,
    ) -> StorageResult<Option<R>> {
        let f = self.fork(rel, fork)?;
        let _ext = f.extension.lock();
        let n = f.nblocks.load(Ordering::Relaxed);
        let Some((new, held)) = decide(n) else {
            return Ok(None);
        };
        if new >= n {
            return Ok(Some(held));
        }
        // Release: pairs with the Acquire in `nblocks`; a writer that
        // re-checks a block against the size after locking its page (which
        // `decide` held) sees the new size.
        f.nblocks.store(new, Ordering::Release);
        let last_seg = (n.saturating_sub(1) / RELSEG_BLOCKS) as usize;
        for seg in (new / RELSEG_BLOCKS) as usize..=last_seg {
            let keep = new
                .saturating_sub(seg as u32 * RELSEG_BLOCKS)
                .min(RELSEG_BLOCKS);
            if let Some(file) = f.segment(seg, false)? {
                file.set_len(keep as u64 * BLCKSZ as u64)
                    .map_err(|e| f.io_err("truncate", e))?;
            }
        }
        Ok(Some(held))
    }

    /// fsyncs every open segment of every fork (shutdown and checkpoints).
    pub fn sync_all(&self) -> StorageResult<()> {
        let forks: Vec<_> = self.forks.read().values().cloned().collect();
        for f in forks {
            for file in f.segments.read().iter() {
                file.sync_data().map_err(|e| f.io_err("fsync", e))?;
            }
        }
        Ok(())
    }

    /// Removes all forks' files of a relation (DROP TABLE, TRUNCATE's old file).
    /// The caller has dropped the relation's buffers first.
    pub fn unlink(&self, rel: RelFileLocator) {
        let mut map = self.forks.write();
        for fork in [ForkNumber::Main, ForkNumber::Fsm, ForkNumber::VisibilityMap] {
            map.remove(&(rel, fork));
            let base = self.data_dir.join(Self::relative_path(rel, fork));
            let _ = std::fs::remove_file(&base);
            for seg in 1.. {
                let mut s = base.clone().into_os_string();
                s.push(format!(".{seg}"));
                if std::fs::remove_file(PathBuf::from(s)).is_err() {
                    break;
                }
            }
        }
    }
}
