//! Reading the log back (recovery, waldump): records one after another,
//! across segment boundaries, each checked for length, CRC and its link to
//! the one before. The first record that fails is the end of the log.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use crate::record::{self, align, DecodeError, Record, HEADER_SIZE};
use crate::{segment_file_name, segment_of, Lsn, SEGMENT_SIZE};

pub struct WalReader {
    dir: PathBuf,
    open: Option<(u64, File)>,
    buf: Vec<u8>,
    /// Where the next record is read and the start of the one before.
    pub next: Lsn,
    pub prev: Option<Lsn>,
}

/// Why reading stopped.
#[derive(Debug, thiserror::Error)]
pub enum ReadEnd {
    #[error("invalid record at {lsn}: {0}", lsn = crate::format_lsn(*.1))]
    Invalid(DecodeError, Lsn),
    #[error("no more log at {}", crate::format_lsn(*.0))]
    Missing(Lsn),
}

impl WalReader {
    /// Reads `pg_wal` (the directory itself) from `start`.
    pub fn new(wal_dir: &Path, start: Lsn) -> Self {
        WalReader {
            dir: wal_dir.to_path_buf(),
            open: None,
            buf: Vec::new(),
            next: start,
            prev: None,
        }
    }

    /// Reads `out.len()` bytes at `pos`; false if the log has no such bytes.
    fn read_at(&mut self, mut pos: Lsn, out: &mut [u8]) -> bool {
        let mut filled = 0;
        while filled < out.len() {
            let segno = segment_of(pos);
            if self.open.as_ref().map(|o| o.0) != Some(segno) {
                match File::open(self.dir.join(segment_file_name(segno))) {
                    Ok(f) => self.open = Some((segno, f)),
                    Err(_) => return false,
                }
            }
            let file = &self.open.as_ref().expect("opened").1;
            let in_seg = (SEGMENT_SIZE - pos % SEGMENT_SIZE) as usize;
            let want = (out.len() - filled).min(in_seg);
            if file
                .read_exact_at(&mut out[filled..filled + want], pos % SEGMENT_SIZE)
                .is_err()
            {
                return false;
            }
            filled += want;
            pos += want as u64;
        }
        true
    }

    /// The next valid record, or why the log ends here.
    pub fn next_record(&mut self) -> Result<Record<'_>, ReadEnd> {
        let at = self.next;
        let mut header = [0u8; HEADER_SIZE];
        if !self.read_at(at, &mut header) {
            return Err(ReadEnd::Missing(at));
        }
        let len = record::header_length(&header).map_err(|e| ReadEnd::Invalid(e, at))?;
        let mut buf = std::mem::take(&mut self.buf);
        buf.resize(len, 0);
        buf[..HEADER_SIZE].copy_from_slice(&header);
        if !self.read_at(at + HEADER_SIZE as u64, &mut buf[HEADER_SIZE..]) {
            self.buf = buf;
            return Err(ReadEnd::Missing(at));
        }
        self.buf = buf;
        let rec = record::decode(&self.buf, at, self.prev).map_err(|e| ReadEnd::Invalid(e, at))?;
        self.prev = Some(at);
        self.next = align(at + len as u64);
        Ok(rec)
    }
}
