//! `scalegres stop -D DIR [-m smart|fast|immediate]`: signals the server that
//! holds a data directory and waits for it to exit, as `pg_ctl stop` does.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::shutdown::ShutdownMode;

#[derive(Debug, thiserror::Error)]
pub enum StopError {
    #[error("PID file \"{0}\" does not exist\nIs server running?")]
    NotRunning(PathBuf),
    #[error("invalid data in PID file \"{0}\"")]
    BadPidFile(PathBuf),
    #[error("could not send stop signal (PID: {pid}): {source}")]
    Signal { pid: i32, source: std::io::Error },
    #[error("server does not shut down")]
    Timeout,
}

/// Sends `mode`'s signal to the server recorded in `DIR/postmaster.pid` and
/// waits up to `timeout` for it to exit.
pub fn stop_server(dir: &Path, mode: ShutdownMode, timeout: Duration) -> Result<(), StopError> {
    let pidfile = dir.join("postmaster.pid");
    let text =
        std::fs::read_to_string(&pidfile).map_err(|_| StopError::NotRunning(pidfile.clone()))?;
    let pid: i32 = text
        .lines()
        .next()
        .and_then(|l| l.trim().parse().ok())
        .filter(|&p| p > 0)
        .ok_or_else(|| StopError::BadPidFile(pidfile.clone()))?;
    // SAFETY: kill with a positive pid and a standard signal.
    if unsafe { libc::kill(pid, mode.signal()) } != 0 {
        return Err(StopError::Signal {
            pid,
            source: std::io::Error::last_os_error(),
        });
    }
    print!("waiting for server to shut down...");
    let deadline = Instant::now() + timeout;
    loop {
        // SAFETY: signal 0 only checks that the process exists.
        let alive = unsafe { libc::kill(pid, 0) } == 0;
        if !alive || !pidfile.exists() {
            println!(" done\nserver stopped");
            return Ok(());
        }
        if Instant::now() >= deadline {
            println!(" failed");
            return Err(StopError::Timeout);
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}
