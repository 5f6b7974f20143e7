//! One server per data directory and per socket: the interlocks PostgreSQL
//! keeps in `postmaster.pid` and `.s.PGSQL.<port>.lock`.
//!
//! The authoritative interlock is an exclusive `flock(2)` on the data
//! directory itself, held through an open descriptor for the server's whole
//! life: the directory is never unlinked, so two servers can never both hold
//! it, however their starts interleave, and the kernel drops it when the
//! process dies, however it dies. `postmaster.pid` is then created with
//! O_CREAT|O_EXCL as PostgreSQL does; a leftover one whose PID is no longer
//! running is stale and replaced. Socket lock files follow PostgreSQL's rule
//! (O_EXCL, stale when the PID recorded in them is gone) plus a `flock` on the
//! lock file for the server's life.

use std::fs::{File, OpenOptions};
use std::io::{ErrorKind, Write};
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// Why the server may not start on this directory or socket.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    #[error("lock file \"{path}\" already exists")]
    InUse {
        path: PathBuf,
        /// PostgreSQL's HINT naming the other server.
        hint: String,
    },
    #[error("could not create lock file \"{path}\": {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

impl LockError {
    pub fn hint(&self) -> Option<&str> {
        match self {
            LockError::InUse { hint, .. } => Some(hint),
            LockError::Io { .. } => None,
        }
    }
}

/// The data directory's interlock; released (and `postmaster.pid` removed)
/// on drop.
pub struct DataDirLock {
    /// Holds the directory's flock.
    _dir: File,
    pidfile: PathBuf,
    _pid_handle: File,
}

impl DataDirLock {
    pub fn pidfile(&self) -> &Path {
        &self.pidfile
    }

    /// Adds lines to postmaster.pid after startup, as PostgreSQL records the
    /// port, socket directory and listen address there.
    pub fn append(&self, lines: &str) -> std::io::Result<()> {
        let mut f = OpenOptions::new().append(true).open(&self.pidfile)?;
        f.write_all(lines.as_bytes())?;
        f.sync_all()
    }
}

impl Drop for DataDirLock {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.pidfile);
    }
}

fn try_flock(f: &File) -> std::io::Result<bool> {
    // SAFETY: flock on an open descriptor we own.
    let r = unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
    if r == 0 {
        return Ok(true);
    }
    let e = std::io::Error::last_os_error();
    if e.kind() == ErrorKind::WouldBlock {
        Ok(false)
    } else {
        Err(e)
    }
}

fn pid_is_running(pid: i32) -> bool {
    if pid <= 0 {
        return false;
    }
    // SAFETY: signal 0 only checks that the process exists.
    let r = unsafe { libc::kill(pid, 0) };
    r == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

fn recorded_pid(path: &Path) -> Option<i32> {
    std::fs::read_to_string(path)
        .ok()?
        .lines()
        .next()?
        .trim()
        .parse()
        .ok()
}

/// Creates `path` exclusively with `contents`, replacing a stale file (one
/// whose recorded PID is not running, or an empty one) up to a few times.
/// `in_use_hint` builds the HINT from the other server's PID.
fn create_exclusive(
    path: &Path,
    contents: &str,
    in_use_hint: &dyn Fn(i32) -> String,
) -> Result<File, LockError> {
    let io = |source| LockError::Io {
        path: path.to_path_buf(),
        source,
    };
    for _ in 0..100 {
        match OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(path)
        {
            Ok(mut f) => {
                f.write_all(contents.as_bytes()).map_err(io)?;
                f.sync_all().map_err(io)?;
                return Ok(f);
            }
            Err(e) if e.kind() == ErrorKind::AlreadyExists => {
                match recorded_pid(path) {
                    Some(pid) if pid != std::process::id() as i32 && pid_is_running(pid) => {
                        return Err(LockError::InUse {
                            path: path.to_path_buf(),
                            hint: in_use_hint(pid),
                        });
                    }
                    _ => {}
                }
                // Stale: its server is gone. Remove it and try again.
                match std::fs::remove_file(path) {
                    Ok(()) => {}
                    Err(e) if e.kind() == ErrorKind::NotFound => {}
                    Err(e) => return Err(io(e)),
                }
            }
            Err(e) => return Err(io(e)),
        }
    }
    Err(io(std::io::Error::other(
        "gave up after 100 attempts to replace a stale lock file",
    )))
}

/// Takes the data directory for this process: the directory flock, then
/// `postmaster.pid` with the PID and the directory on its first two lines.
pub fn lock_data_dir(dir: &Path) -> Result<DataDirLock, LockError> {
    let pidfile = dir.join("postmaster.pid");
    let io = |source| LockError::Io {
        path: pidfile.clone(),
        source,
    };
    let dir_handle = File::open(dir).map_err(io)?;
    if !try_flock(&dir_handle).map_err(io)? {
        let hint = match recorded_pid(&pidfile) {
            Some(pid) => format!(
                "Is another postmaster (PID {pid}) running in data directory \"{}\"?",
                dir.display()
            ),
            None => format!(
                "Is another postmaster running in data directory \"{}\"?",
                dir.display()
            ),
        };
        return Err(LockError::InUse {
            path: pidfile,
            hint,
        });
    }
    let contents = format!("{}\n{}\n", std::process::id(), dir.display());
    let hint = |pid: i32| {
        format!(
            "Is another postmaster (PID {pid}) running in data directory \"{}\"?",
            dir.display()
        )
    };
    let handle = create_exclusive(&pidfile, &contents, &hint)?;
    Ok(DataDirLock {
        _dir: dir_handle,
        pidfile,
        _pid_handle: handle,
    })
}

/// The lock file of one Unix socket; removed with the socket on drop.
pub struct SocketLock {
    lockfile: PathBuf,
    socket: PathBuf,
    _handle: File,
}

impl Drop for SocketLock {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.socket);
        let _ = std::fs::remove_file(&self.lockfile);
    }
}

/// Takes `<socket>.lock` for this process. Only with it held may a leftover
/// socket file at `socket` be removed and bound again.
pub fn lock_socket(socket: &Path, data_dir: &Path) -> Result<SocketLock, LockError> {
    let mut name = socket.as_os_str().to_owned();
    name.push(".lock");
    let lockfile = PathBuf::from(name);
    let contents = format!("{}\n{}\n", std::process::id(), data_dir.display());
    let hint = |pid: i32| {
        format!(
            "Is another postmaster (PID {pid}) using socket file \"{}\"?",
            socket.display()
        )
    };
    let handle = create_exclusive(&lockfile, &contents, &hint)?;
    let held = try_flock(&handle).map_err(|source| LockError::Io {
        path: lockfile.clone(),
        source,
    })?;
    if !held {
        // Another server replaced the same stale file between our checks.
        return Err(LockError::InUse {
            path: lockfile,
            hint: format!(
                "Is another postmaster using socket file \"{}\"?",
                socket.display()
            ),
        });
    }
    Ok(SocketLock {
        lockfile,
        socket: socket.to_path_buf(),
        _handle: handle,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn second_lock_on_a_directory_fails_and_release_allows_another() {
        let dir = tempfile::tempdir().unwrap();
        let first = lock_data_dir(dir.path()).unwrap();
        let err = lock_data_dir(dir.path())
            .err()
            .expect("second lock must fail");
        assert!(matches!(err, LockError::InUse { .. }), "{err}");
        assert!(err
            .hint()
            .unwrap()
            .contains(&std::process::id().to_string()));
        drop(first);
        assert!(!dir.path().join("postmaster.pid").exists());
        let again = lock_data_dir(dir.path()).unwrap();
        drop(again);
    }

    #[test]
    fn stale_pidfile_is_replaced() {
        let dir = tempfile::tempdir().unwrap();
        // A PID far above pid_max cannot be running.
        std::fs::write(dir.path().join("postmaster.pid"), "999999999\n/x\n").unwrap();
        let lock = lock_data_dir(dir.path()).unwrap();
        let text = std::fs::read_to_string(lock.pidfile()).unwrap();
        assert!(text.starts_with(&format!("{}\n", std::process::id())));
    }

    #[test]
    fn socket_lock_refuses_a_live_owner() {
        let dir = tempfile::tempdir().unwrap();
        let sock = dir.path().join(".s.PGSQL.5999");
        let lockfile = dir.path().join(".s.PGSQL.5999.lock");
        // PID 1 is always running.
        std::fs::write(&lockfile, "1\n/other\n").unwrap();
        let err = lock_socket(&sock, dir.path()).err().expect("must refuse");
        assert!(err.hint().unwrap().contains("PID 1"), "{err:?}");
        std::fs::write(&lockfile, "999999999\n/other\n").unwrap();
        let lock = lock_socket(&sock, dir.path()).unwrap();
        drop(lock);
        assert!(!lockfile.exists());
    }
}
