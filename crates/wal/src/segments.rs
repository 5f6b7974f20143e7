//! Segment files: `pg_wal/<timeline><log><seg>`, each SEGMENT_SIZE bytes,
//! created zero-filled (so a later fdatasync need not update the size) and
//! recycled by renaming once a checkpoint no longer needs them.

use std::fs::{File, OpenOptions};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use crate::{segment_file_name, WalError, WalResult, SEGMENT_SIZE};

/// Opens segment `segno` for writing, creating it zero-filled if missing.
/// `sync_flags`: O_DSYNC/O_SYNC for the open_* sync methods.
pub(crate) fn open_for_write(
    dir: &Path,
    segno: u64,
    sync_flags: i32,
    fsync: bool,
) -> WalResult<File> {
    let path = dir.join(segment_file_name(segno));
    if !path.exists() {
        let tmp = dir.join(format!("xlogtemp.{}", std::process::id()));
        let f = File::create(&tmp).map_err(|e| WalError::io("create", &tmp, e))?;
        let zeros = vec![0u8; 1 << 20];
        use std::io::Write;
        let mut w = &f;
        for _ in 0..SEGMENT_SIZE / zeros.len() as u64 {
            w.write_all(&zeros)
                .map_err(|e| WalError::io("write", &tmp, e))?;
        }
        if fsync {
            f.sync_all().map_err(|e| WalError::io("fsync", &tmp, e))?;
        }
        std::fs::rename(&tmp, &path).map_err(|e| WalError::io("rename", &tmp, e))?;
        if fsync {
            sync_dir(dir)?;
        }
    }
    OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(sync_flags)
        .open(&path)
        .map_err(|e| WalError::io("open", &path, e))
}

pub(crate) fn sync_dir(dir: &Path) -> WalResult<()> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| WalError::io("fsync", dir, e))
}

/// Segment numbers of the files in `dir`, ascending.
pub(crate) fn list(dir: &Path) -> WalResult<Vec<u64>> {
    let mut out = Vec::new();
    let rd = std::fs::read_dir(dir).map_err(|e| WalError::io("read directory", dir, e))?;
    for entry in rd.flatten() {
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        if name.len() != 24 || !name.bytes().all(|b| b.is_ascii_hexdigit()) {
            continue;
        }
        let per_id = 0x1_0000_0000 / SEGMENT_SIZE;
        let (Ok(log), Ok(seg)) = (
            u64::from_str_radix(&name[8..16], 16),
            u64::from_str_radix(&name[16..24], 16),
        ) else {
            continue;
        };
        out.push(log * per_id + seg);
    }
    out.sort_unstable();
    Ok(out)
}

/// After a checkpoint whose redo starts in segment `keep_from`: segments
/// before it are renamed to future numbers (up to `recycle` of them ahead
/// of `current`) or removed. Returns (removed, recycled).
pub(crate) fn remove_old(
    dir: &Path,
    keep_from: u64,
    current: u64,
    recycle: u64,
) -> WalResult<(u64, u64)> {
    let all = list(dir)?;
    let mut future = all.iter().filter(|&&s| s > current).count() as u64;
    let mut next_name = all.last().copied().unwrap_or(current).max(current) + 1;
    let (mut removed, mut recycled) = (0, 0);
    for &seg in all.iter().filter(|&&s| s < keep_from) {
        let path = dir.join(segment_file_name(seg));
        if future < recycle {
            let to = dir.join(segment_file_name(next_name));
            std::fs::rename(&path, &to).map_err(|e| WalError::io("rename", &path, e))?;
            next_name += 1;
            future += 1;
            recycled += 1;
        } else {
            std::fs::remove_file(&path).map_err(|e| WalError::io("remove", &path, e))?;
            removed += 1;
        }
    }
    Ok((removed, recycled))
}
