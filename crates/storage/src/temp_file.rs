//! Temporary files for operators that spill (sorts, hash joins, hash
//! aggregation), as PostgreSQL's `fd.c` temporary files: they live in
//! `base/pgsql_tmp` of the data directory, are named `pgsql_tmpPID.N`, are
//! written and read through buffers with no fsync (nothing survives a crash),
//! and are deleted when dropped — on success, error and cancel alike. The
//! directory is emptied at server start (files of a killed server).
//!
//! A file is written once, then rewound and read from the start; it holds
//! length-prefixed records whose content is the caller's business.

use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use common::{PgError, PgResult, SqlState};

/// Buffer of each open temporary file (a merge holds one per input run).
pub const TEMP_BUFFER: usize = 32 * 1024;

/// The server's temporary-file directory.
#[derive(Debug)]
pub struct TempDir {
    path: PathBuf,
    /// Suffix of the next file name (unique within the server's life).
    next: AtomicU64,
}

impl TempDir {
    /// `base/pgsql_tmp` under `data_dir`, created if missing and emptied.
    pub fn open(data_dir: &Path) -> std::io::Result<Arc<TempDir>> {
        let path = data_dir.join("base").join("pgsql_tmp");
        std::fs::create_dir_all(&path)?;
        for e in std::fs::read_dir(&path)? {
            let e = e?;
            if e.file_type()?.is_dir() {
                std::fs::remove_dir_all(e.path())?;
            } else {
                std::fs::remove_file(e.path())?;
            }
        }
        Ok(Arc::new(TempDir {
            path,
            next: AtomicU64::new(0),
        }))
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// Files and bytes of temporary files (pg_stat_database's temp_files and
/// temp_bytes), counted when a file is deleted as PostgreSQL does.
#[derive(Debug, Default)]
pub struct TempCounters {
    pub files: AtomicU64,
    pub bytes: AtomicU64,
}

/// One session's temporary space: where its files go, whom they are
/// counted to, and how much they hold now (for temp_file_limit).
#[derive(Debug)]
pub struct TempSpace {
    dir: Arc<TempDir>,
    pid: i32,
    counters: Arc<TempCounters>,
    /// Bytes in this session's temporary files now.
    used: AtomicU64,
}

impl TempSpace {
    pub fn new(dir: Arc<TempDir>, pid: i32, counters: Arc<TempCounters>) -> Arc<TempSpace> {
        Arc::new(TempSpace {
            dir,
            pid,
            counters,
            used: AtomicU64::new(0),
        })
    }

    /// Bytes in this session's temporary files now.
    pub fn used_bytes(&self) -> u64 {
        self.used.load(Ordering::Relaxed)
    }
}

enum Mode {
    Writing(BufWriter<Counted>),
    Reading(BufReader<Counted>),
}

/// The file under the buffer: each physical read or write counts its
/// BLCKSZ blocks in the thread's temp block counts (EXPLAIN's BUFFERS).
struct Counted(File);

impl Write for Counted {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.0.write(buf)?;
        crate::buffer::count_usage(|u| u.temp_written += n.div_ceil(crate::BLCKSZ) as u64);
        Ok(n)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush()
    }
}

impl Read for Counted {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.0.read(buf)?;
        crate::buffer::count_usage(|u| u.temp_read += n.div_ceil(crate::BLCKSZ) as u64);
        Ok(n)
    }
}

/// One temporary file, deleted on drop.
pub struct TempFile {
    space: Arc<TempSpace>,
    path: PathBuf,
    mode: Mode,
    /// Bytes of its read or write buffer.
    buffer: usize,
    size: u64,
    /// temp_file_limit in kB, or None (-1: no limit).
    limit_kb: Option<u64>,
}

impl std::fmt::Debug for TempFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TempFile")
            .field("path", &self.path)
            .finish()
    }
}

fn io_error(op: &str, path: &Path, e: std::io::Error) -> PgError {
    PgError::io(
        format!("could not {op} temporary file \"{}\"", path.display()),
        e,
    )
}

impl TempFile {
    /// A new empty file, open for writing. `limit_kb`: temp_file_limit
    /// (None for no limit), checked against all of the session's files.
    pub fn create(space: &Arc<TempSpace>, limit_kb: Option<u64>) -> PgResult<TempFile> {
        Self::with_buffer(space, limit_kb, TEMP_BUFFER)
    }

    /// `create` with a `buffer`-byte buffer (many files open at once).
    pub fn with_buffer(
        space: &Arc<TempSpace>,
        limit_kb: Option<u64>,
        buffer: usize,
    ) -> PgResult<TempFile> {
        // Relaxed: only uniqueness matters.
        let n = space.dir.next.fetch_add(1, Ordering::Relaxed);
        let path = space.dir.path.join(format!("pgsql_tmp{}.{n}", space.pid));
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&path)
            .map_err(|e| io_error("create", &path, e))?;
        Ok(TempFile {
            space: space.clone(),
            path,
            mode: Mode::Writing(BufWriter::with_capacity(buffer, Counted(file))),
            buffer,
            size: 0,
            limit_kb,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Bytes written.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// Appends one record (a u32 length, then the bytes).
    pub fn write_record(&mut self, bytes: &[u8]) -> PgResult<()> {
        let n = 4 + bytes.len() as u64;
        if let Some(limit) = self.limit_kb {
            let used = self.space.used.load(Ordering::Relaxed) + n;
            if used > limit * 1024 {
                return Err(PgError::new(
                    SqlState::CONFIGURATION_LIMIT_EXCEEDED,
                    format!("temporary file size exceeds temp_file_limit ({limit}kB)"),
                ));
            }
        }
        let Mode::Writing(w) = &mut self.mode else {
            return Err(PgError::internal("temporary file written after rewind"));
        };
        let len = u32::try_from(bytes.len())
            .map_err(|_| PgError::internal("temporary file record too large"))?;
        w.write_all(&len.to_le_bytes())
            .and_then(|_| w.write_all(bytes))
            .map_err(|e| io_error("write to", &self.path, e))?;
        self.size += n;
        // Relaxed: a per-session figure read by the session's own thread.
        self.space.used.fetch_add(n, Ordering::Relaxed);
        Ok(())
    }

    /// Ends writing; reads start from the first record.
    pub fn rewind(&mut self) -> PgResult<()> {
        let file = match &mut self.mode {
            Mode::Writing(w) => {
                w.flush().map_err(|e| io_error("write to", &self.path, e))?;
                w.get_ref()
                    .0
                    .try_clone()
                    .map_err(|e| io_error("reopen", &self.path, e))?
            }
            Mode::Reading(r) => r
                .get_ref()
                .0
                .try_clone()
                .map_err(|e| io_error("reopen", &self.path, e))?,
        };
        let mut file = file;
        file.seek(SeekFrom::Start(0))
            .map_err(|e| io_error("seek in", &self.path, e))?;
        self.mode = Mode::Reading(BufReader::with_capacity(self.buffer, Counted(file)));
        Ok(())
    }

    /// Reads the next record into `buf`; false at the end of the file.
    pub fn read_record(&mut self, buf: &mut Vec<u8>) -> PgResult<bool> {
        let Mode::Reading(r) = &mut self.mode else {
            return Err(PgError::internal("temporary file read before rewind"));
        };
        let mut len = [0u8; 4];
        match r.read_exact(&mut len) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(false),
            Err(e) => return Err(io_error("read from", &self.path, e)),
        }
        buf.clear();
        buf.resize(u32::from_le_bytes(len) as usize, 0);
        r.read_exact(buf)
            .map_err(|e| io_error("read from", &self.path, e))?;
        Ok(true)
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
        // Relaxed: statistics and a per-session figure; no data is published.
        self.space.used.fetch_sub(self.size, Ordering::Relaxed);
        self.space.counters.files.fetch_add(1, Ordering::Relaxed);
        self.space
            .counters
            .bytes
            .fetch_add(self.size, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn space(dir: &Path) -> Arc<TempSpace> {
        TempSpace::new(TempDir::open(dir).unwrap(), 42, Default::default())
    }

    #[test]
    fn records_round_trip_and_file_is_deleted_on_drop() {
        let d = tempfile::tempdir().unwrap();
        let s = space(d.path());
        let mut f = TempFile::create(&s, None).unwrap();
        assert!(f
            .path()
            .file_name()
            .unwrap()
            .to_str()
            .unwrap()
            .starts_with("pgsql_tmp42."));
        for i in 0..10_000u32 {
            f.write_record(&i.to_le_bytes()[..(i % 5) as usize])
                .unwrap();
        }
        f.rewind().unwrap();
        let mut buf = Vec::new();
        for i in 0..10_000u32 {
            assert!(f.read_record(&mut buf).unwrap());
            assert_eq!(&buf[..], &i.to_le_bytes()[..(i % 5) as usize]);
        }
        assert!(!f.read_record(&mut buf).unwrap());
        let path = f.path().to_path_buf();
        assert!(s.used_bytes() > 0);
        drop(f);
        assert!(!path.exists());
        assert_eq!(s.used_bytes(), 0);
        assert_eq!(s.counters.files.load(Ordering::Relaxed), 1);
    }

    #[test]
    fn limit_counts_all_of_the_sessions_files() {
        let d = tempfile::tempdir().unwrap();
        let s = space(d.path());
        let mut a = TempFile::create(&s, Some(1)).unwrap();
        a.write_record(&[0; 600]).unwrap();
        let mut b = TempFile::create(&s, Some(1)).unwrap();
        let e = b.write_record(&[0; 600]).unwrap_err();
        assert_eq!(e.code, SqlState::CONFIGURATION_LIMIT_EXCEEDED);
        assert_eq!(
            e.message,
            "temporary file size exceeds temp_file_limit (1kB)"
        );
    }

    #[test]
    fn open_empties_the_directory() {
        let d = tempfile::tempdir().unwrap();
        let t = TempDir::open(d.path()).unwrap();
        std::fs::write(t.path().join("pgsql_tmp1.0"), b"x").unwrap();
        let t = TempDir::open(d.path()).unwrap();
        assert_eq!(std::fs::read_dir(t.path()).unwrap().count(), 0);
    }
}
