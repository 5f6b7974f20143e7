//! The control file, `global/pg_control`: where the last checkpoint is and
//! whether the server stopped cleanly. Written whole and atomically (write
//! a temporary file, fsync, rename, fsync the directory), with a CRC.

use std::path::{Path, PathBuf};

use crate::{Lsn, WalError, WalResult};

const MAGIC: u32 = 0x5343_4743; // "SCGC"
const VERSION: u32 = 1;
const SIZE: usize = 64;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DbState {
    ShutDown = 1,
    InProduction = 2,
    InCrashRecovery = 3,
}

impl DbState {
    pub fn name(self) -> &'static str {
        match self {
            DbState::ShutDown => "shut down",
            DbState::InProduction => "in production",
            DbState::InCrashRecovery => "in crash recovery",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ControlFile {
    pub state: DbState,
    /// The last checkpoint record's start.
    pub checkpoint: Lsn,
    /// Where redo starts for that checkpoint.
    pub redo: Lsn,
    /// The next transaction id at the checkpoint.
    pub next_xid: u64,
    /// When the control file was written, seconds since the Unix epoch.
    pub time: i64,
}

pub fn path(data_dir: &Path) -> PathBuf {
    data_dir.join("global").join("pg_control")
}

impl ControlFile {
    fn encode(&self) -> [u8; SIZE] {
        let mut b = [0u8; SIZE];
        b[0..4].copy_from_slice(&MAGIC.to_le_bytes());
        b[4..8].copy_from_slice(&VERSION.to_le_bytes());
        b[8..12].copy_from_slice(&(self.state as u32).to_le_bytes());
        b[16..24].copy_from_slice(&self.checkpoint.to_le_bytes());
        b[24..32].copy_from_slice(&self.redo.to_le_bytes());
        b[32..40].copy_from_slice(&self.next_xid.to_le_bytes());
        b[40..48].copy_from_slice(&self.time.to_le_bytes());
        let crc = crc32c::crc32c(&b[..SIZE - 4]);
        b[SIZE - 4..].copy_from_slice(&crc.to_le_bytes());
        b
    }

    fn decode(b: &[u8]) -> Result<ControlFile, String> {
        if b.len() != SIZE {
            return Err(format!("size {} instead of {SIZE}", b.len()));
        }
        let u32_at = |at: usize| u32::from_le_bytes(b[at..at + 4].try_into().unwrap());
        let u64_at = |at: usize| u64::from_le_bytes(b[at..at + 8].try_into().unwrap());
        if u32_at(0) != MAGIC || u32_at(4) != VERSION {
            return Err("unknown format".into());
        }
        if crc32c::crc32c(&b[..SIZE - 4]) != u32_at(SIZE - 4) {
            return Err("incorrect checksum in control file".into());
        }
        let state = match u32_at(8) {
            1 => DbState::ShutDown,
            2 => DbState::InProduction,
            3 => DbState::InCrashRecovery,
            s => return Err(format!("unknown state {s}")),
        };
        Ok(ControlFile {
            state,
            checkpoint: u64_at(16),
            redo: u64_at(24),
            next_xid: u64_at(32),
            time: u64_at(40) as i64,
        })
    }

    /// Reads the control file; None when there is none yet (a new cluster).
    pub fn read(data_dir: &Path) -> WalResult<Option<ControlFile>> {
        let p = path(data_dir);
        match std::fs::read(&p) {
            Ok(b) => ControlFile::decode(&b).map(Some).map_err(WalError::Control),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(WalError::io("read", &p, e)),
        }
    }

    pub fn write(&self, data_dir: &Path, fsync: bool) -> WalResult<()> {
        common::durable::replace_file(&path(data_dir), &self.encode(), fsync)
            .map_err(|(op, file, e)| WalError::io(op, &file, e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_corruption() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("global")).unwrap();
        assert_eq!(ControlFile::read(dir.path()).unwrap(), None);
        let c = ControlFile {
            state: DbState::InProduction,
            checkpoint: 0x1000028,
            redo: 0x1000000,
            next_xid: 700,
            time: 1234,
        };
        c.write(dir.path(), true).unwrap();
        assert_eq!(ControlFile::read(dir.path()).unwrap(), Some(c));
        let p = path(dir.path());
        let mut b = std::fs::read(&p).unwrap();
        b[20] ^= 1;
        std::fs::write(&p, b).unwrap();
        assert!(ControlFile::read(dir.path()).is_err());
    }
}
