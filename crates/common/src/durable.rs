//! Replacing a small file so that a crash leaves either the old or the new
//! contents: write a temporary file beside it, fsync it, rename it over the
//! old one, fsync the directory (control file, catalog, xid limit, clog).

use std::path::Path;

/// Replaces `path` with `bytes` atomically; with `fsync` false (tests,
/// `fsync = off`) the syncs are skipped but the rename still makes the
/// replacement all-or-nothing. On error, the failed step and the file.
pub fn replace_file(
    path: &Path,
    bytes: &[u8],
    fsync: bool,
) -> Result<(), (&'static str, std::path::PathBuf, std::io::Error)> {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, bytes).map_err(|e| ("write", tmp.clone(), e))?;
    if fsync {
        std::fs::File::open(&tmp)
            .and_then(|f| f.sync_all())
            .map_err(|e| ("fsync", tmp.clone(), e))?;
    }
    std::fs::rename(&tmp, path).map_err(|e| ("rename", tmp.clone(), e))?;
    if fsync {
        let dir = path.parent().unwrap_or(Path::new("."));
        std::fs::File::open(dir)
            .and_then(|d| d.sync_all())
            .map_err(|e| ("fsync", dir.to_path_buf(), e))?;
    }
    Ok(())
}
