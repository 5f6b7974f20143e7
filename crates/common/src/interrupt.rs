//! Interrupt requests to a backend (PostgreSQL's InterruptPending flags):
//! cancel the running statement, terminate the session, or the client has gone.
//!
//! Other threads raise them (a CancelRequest, a shutdown, the connection
//! watchdog); the backend's own thread notices them at its interrupt points
//! (`Interrupts::check`: once per page or every few thousand rows, and
//! between messages) and turns them into an error.

use std::sync::atomic::{AtomicU8, Ordering};

use crate::{PgError, PgResult, SqlState};

const CANCEL: u8 = 1;
const TERMINATE: u8 = 2;
const CLIENT_LOST: u8 = 4;

/// Pending interrupt requests of one backend, as one atomic bit set so the
/// hot path's check is a single relaxed load.
#[derive(Debug, Default)]
pub struct Interrupts {
    pending: AtomicU8,
}

impl Interrupts {
    pub fn new() -> Self {
        Self::default()
    }

    /// Asks the running statement to stop with 57014.
    pub fn request_cancel(&self) {
        // Relaxed: a request; the backend seeing it one interrupt point late is fine.
        self.pending.fetch_or(CANCEL, Ordering::Relaxed);
    }

    /// Asks the session to end at its next interrupt point with FATAL 57P01.
    pub fn request_terminate(&self) {
        self.pending.fetch_or(TERMINATE, Ordering::Relaxed);
    }

    /// Records that the client's socket has hung up: the statement stops with
    /// FATAL 08006 and the session ends.
    pub fn report_client_lost(&self) {
        self.pending.fetch_or(CLIENT_LOST, Ordering::Relaxed);
    }

    /// Forgets a cancel request left over from an earlier statement (a cancel
    /// only ever applies to the statement running when it arrives).
    pub fn clear_cancel(&self) {
        self.pending.fetch_and(!CANCEL, Ordering::Relaxed);
    }

    /// Whether any interrupt is pending (for waits that poll).
    pub fn any_pending(&self) -> bool {
        self.pending.load(Ordering::Relaxed) != 0
    }

    pub fn cancel_pending(&self) -> bool {
        self.pending.load(Ordering::Relaxed) & CANCEL != 0
    }

    pub fn terminate_pending(&self) -> bool {
        self.pending.load(Ordering::Relaxed) & TERMINATE != 0
    }

    /// The error that ends the session, if termination or a lost client is pending.
    pub fn session_ending_error(&self) -> Option<PgError> {
        let p = self.pending.load(Ordering::Relaxed);
        if p & TERMINATE != 0 {
            Some(terminated_error())
        } else if p & CLIENT_LOST != 0 {
            Some(PgError::fatal(
                SqlState::CONNECTION_FAILURE,
                "connection to client lost",
            ))
        } else {
            None
        }
    }

    /// An interrupt point: turns a pending request into its error. A cancel
    /// request is consumed; termination and a lost client stay pending so
    /// the connection loop ends the session too.
    #[inline]
    pub fn check(&self) -> PgResult<()> {
        if self.pending.load(Ordering::Relaxed) == 0 {
            return Ok(());
        }
        self.check_slow()
    }

    #[cold]
    fn check_slow(&self) -> PgResult<()> {
        if let Some(e) = self.session_ending_error() {
            return Err(e);
        }
        if self.pending.fetch_and(!CANCEL, Ordering::Relaxed) & CANCEL != 0 {
            return Err(PgError::new(
                SqlState::QUERY_CANCELED,
                "canceling statement due to user request",
            ));
        }
        Ok(())
    }
}

/// FATAL 57P01, as PostgreSQL reports a fast shutdown or pg_terminate_backend.
pub fn terminated_error() -> PgError {
    PgError::fatal(
        SqlState::ADMIN_SHUTDOWN,
        "terminating connection due to administrator command",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cancel_is_consumed_terminate_stays() {
        let i = Interrupts::new();
        assert!(i.check().is_ok());
        i.request_cancel();
        assert_eq!(i.check().unwrap_err().code, SqlState::QUERY_CANCELED);
        assert!(i.check().is_ok());
        i.request_cancel();
        i.clear_cancel();
        assert!(i.check().is_ok());
        i.request_terminate();
        i.request_cancel();
        for _ in 0..2 {
            let e = i.check().unwrap_err();
            assert_eq!(e.code, SqlState::ADMIN_SHUTDOWN);
            assert_eq!(e.severity, crate::error::Severity::Fatal);
        }
    }

    #[test]
    fn client_lost_is_fatal() {
        let i = Interrupts::new();
        i.report_client_lost();
        let e = i.check().unwrap_err();
        assert_eq!(e.code, SqlState::CONNECTION_FAILURE);
        assert!(i.session_ending_error().is_some());
    }
}
