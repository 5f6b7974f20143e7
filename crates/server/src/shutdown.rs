//! Shutdown requests, as PostgreSQL's postmaster takes them from signals:
//! SIGTERM asks for a smart shutdown, SIGINT for a fast one, SIGQUIT for an
//! immediate one; a later, stronger request upgrades an earlier one.
//!
//! - Smart: new connections are refused (57P03); the server waits for the
//!   open sessions to end by themselves.
//! - Fast: also ends every session at its next safe point (between messages,
//!   or at an interrupt point of a running statement) with FATAL 57P01; open
//!   transactions roll back.
//! - Immediate: the process exits at once without writing anything, as after
//!   a crash.
//!
//! For smart and fast, the shutdown checkpoint runs only after the last
//! session has ended, so every commit acknowledged to a client is written
//! before the process exits, and a commit still in flight when its session
//! ended was either acknowledged (and is written) or not acknowledged.

use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};

/// How the server is asked to stop, weakest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum ShutdownMode {
    Smart = 1,
    Fast = 2,
    Immediate = 3,
}

impl ShutdownMode {
    pub fn signal(self) -> libc::c_int {
        match self {
            ShutdownMode::Smart => libc::SIGTERM,
            ShutdownMode::Fast => libc::SIGINT,
            ShutdownMode::Immediate => libc::SIGQUIT,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            ShutdownMode::Smart => "smart",
            ShutdownMode::Fast => "fast",
            ShutdownMode::Immediate => "immediate",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "s" | "smart" => Some(ShutdownMode::Smart),
            "f" | "fast" => Some(ShutdownMode::Fast),
            "i" | "immediate" => Some(ShutdownMode::Immediate),
            _ => None,
        }
    }
}

/// The strongest mode requested so far (0: none).
static REQUESTED: AtomicU8 = AtomicU8::new(0);

fn request(mode: ShutdownMode) {
    // Relaxed: the listener polls this; no data is published through it.
    REQUESTED.fetch_max(mode as u8, Ordering::Relaxed);
}

extern "C" fn on_sigterm(_: libc::c_int) {
    request(ShutdownMode::Smart);
}

extern "C" fn on_sigint(_: libc::c_int) {
    request(ShutdownMode::Fast);
}

extern "C" fn on_sigquit(_: libc::c_int) {
    request(ShutdownMode::Immediate);
}

/// SIGHUP arrived and the configuration files (pg_hba.conf) are to be re-read.
static RELOAD: AtomicBool = AtomicBool::new(false);

extern "C" fn on_sighup(_: libc::c_int) {
    // Relaxed: the listener polls the flag and re-reads the files itself.
    RELOAD.store(true, Ordering::Relaxed);
}

/// Whether a reload was requested since the last call.
pub fn take_reload_request() -> bool {
    RELOAD.swap(false, Ordering::Relaxed)
}

/// Installs the shutdown and reload (SIGHUP) signal handlers, and ignores
/// SIGPIPE: a vanished client shows up as a write error on its own connection.
pub fn install_signal_handlers() {
    // SAFETY: the handlers only do an atomic fetch_max, which is async-signal-safe.
    unsafe {
        libc::signal(libc::SIGTERM, on_sigterm as *const () as libc::sighandler_t);
        libc::signal(libc::SIGINT, on_sigint as *const () as libc::sighandler_t);
        libc::signal(libc::SIGQUIT, on_sigquit as *const () as libc::sighandler_t);
        libc::signal(libc::SIGHUP, on_sighup as *const () as libc::sighandler_t);
        libc::signal(libc::SIGPIPE, libc::SIG_IGN);
    }
}

/// The strongest shutdown requested so far, if any.
pub fn requested() -> Option<ShutdownMode> {
    match REQUESTED.load(Ordering::Relaxed) {
        0 => None,
        1 => Some(ShutdownMode::Smart),
        2 => Some(ShutdownMode::Fast),
        _ => Some(ShutdownMode::Immediate),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_order_and_parse() {
        assert!(ShutdownMode::Smart < ShutdownMode::Fast);
        assert!(ShutdownMode::Fast < ShutdownMode::Immediate);
        for m in [
            ShutdownMode::Smart,
            ShutdownMode::Fast,
            ShutdownMode::Immediate,
        ] {
            assert_eq!(ShutdownMode::parse(m.name()), Some(m));
        }
        assert_eq!(ShutdownMode::parse("x"), None);
    }
}
