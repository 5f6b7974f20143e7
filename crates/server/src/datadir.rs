//! The data directory's access rules, as PostgreSQL's: the directory is
//! owned by the server's user and is 0700 (or 0750 with group access);
//! everything the server creates in it is private to that user (0600, or
//! 0640 with group access). The server refuses to start on a directory
//! anyone else could read.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;

/// Directory mode without group access.
pub const PG_DIR_MODE_OWNER: u32 = 0o700;
/// Directory mode with group read access (`initdb -g`).
pub const PG_DIR_MODE_GROUP: u32 = 0o750;

/// Why the server may not use a data directory.
#[derive(Debug, thiserror::Error)]
pub enum DataDirError {
    #[error("could not stat data directory \"{dir}\": {source}")]
    Stat { dir: String, source: std::io::Error },
    #[error("data directory \"{dir}\" has wrong ownership")]
    WrongOwner { dir: String },
    #[error("data directory \"{dir}\" has invalid permissions")]
    InvalidPermissions { dir: String },
}

impl DataDirError {
    pub fn detail(&self) -> Option<&'static str> {
        match self {
            DataDirError::InvalidPermissions { .. } => {
                Some("Permissions should be u=rwx (0700) or u=rwx,g=rx (0750).")
            }
            _ => None,
        }
    }

    pub fn hint(&self) -> Option<&'static str> {
        match self {
            DataDirError::WrongOwner { .. } => {
                Some("The server must be started by the user that owns the data directory.")
            }
            _ => None,
        }
    }
}

/// Sets the process umask so new files and directories are private to the
/// owner (or group-readable when `group_access`). Call before creating
/// anything, the data directory included.
pub fn set_private_umask(group_access: bool) {
    let mask = if group_access { 0o027 } else { 0o077 };
    // SAFETY: umask only changes this process's file-creation mask.
    unsafe {
        libc::umask(mask);
    }
}

/// Checks the data directory's owner and mode. Returns the mode
/// (`data_directory_mode`): 0700, or 0750 when group access is allowed.
pub fn check_data_dir(dir: &Path) -> Result<u32, DataDirError> {
    let name = || dir.display().to_string();
    let meta = std::fs::metadata(dir).map_err(|source| DataDirError::Stat {
        dir: name(),
        source,
    })?;
    // SAFETY: geteuid has no preconditions.
    let euid = unsafe { libc::geteuid() };
    if meta.uid() != euid {
        return Err(DataDirError::WrongOwner { dir: name() });
    }
    let mode = meta.permissions().mode() & 0o777;
    // As PostgreSQL: nothing for others, and the group may at most read and enter.
    if mode & 0o027 != 0 {
        return Err(DataDirError::InvalidPermissions { dir: name() });
    }
    Ok(if mode & 0o050 != 0 {
        PG_DIR_MODE_GROUP
    } else {
        PG_DIR_MODE_OWNER
    })
}

/// Gives a data directory that initialisation is about to fill the mode
/// PostgreSQL's initdb gives it.
pub fn make_private(dir: &Path, group_access: bool) -> std::io::Result<()> {
    let mode = if group_access {
        PG_DIR_MODE_GROUP
    } else {
        PG_DIR_MODE_OWNER
    };
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(mode))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path();
        for (mode, ok) in [
            (0o700, Some(PG_DIR_MODE_OWNER)),
            (0o750, Some(PG_DIR_MODE_GROUP)),
            (0o710, Some(PG_DIR_MODE_GROUP)),
            (0o755, None),
            (0o770, None),
            (0o701, None),
        ] {
            std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
            match (check_data_dir(p), ok) {
                (Ok(m), Some(want)) => assert_eq!(m, want, "{mode:o}"),
                (Err(DataDirError::InvalidPermissions { .. }), None) => {}
                (r, want) => panic!("{mode:o}: {r:?} vs {want:?}"),
            }
        }
    }
}
