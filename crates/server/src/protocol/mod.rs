//! PostgreSQL frontend/backend protocol 3.0, server side, over blocking I/O
//! (one thread per connection).
//!
//! [`serve_connection`] runs the whole life of one client connection: startup
//! (SSL/GSSAPI encryption requests are refused with 'N', cancel requests are
//! routed through the [`BackendRegistry`], authentication as pg_hba.conf says:
//! see `authenticate.rs`), then the
//! simple and extended query protocols on top of a
//! [`SessionHandler`](crate::session_api::SessionHandler).
//!
//! The codec is hand-written (see `codec.rs` for why `pgwire::messages` is not
//! used). Output is buffered and written out only when the client waits for it
//! (ReadyForQuery, Flush, end of connection) or when the buffer grows large.
//!
//! Malformed framing (bad lengths, unknown message types, truncated fields)
//! gets a FATAL 08P01 ErrorResponse and closes only that connection; EOF closes
//! it silently. A panic anywhere below (session or value output) is caught and
//! reported as a FATAL XX000 error on that connection.

mod authenticate;
mod codec;
mod connection;
mod copy;
pub(crate) mod encoding;
mod extended;
mod registry;
mod startup;
mod stream;
mod transport;

#[cfg(test)]
mod tests;

use std::io::{Read, Write};
use std::panic::{catch_unwind, AssertUnwindSafe};

use common::error::Severity;
use common::{PgError, SqlState};

pub use encoding::ClientEncoding;
pub use registry::{BackendGuard, BackendRegistry};

use crate::auth::ClientAddr;
use crate::connections::ConnectionShared;
use crate::session_api::SessionFactory;
use connection::Connection;
use startup::Startup;
use stream::Conn;

/// Size limits on what a client may send.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProtocolLimits {
    /// Largest body of a regular message (Query, Parse, Bind, ...). Messages
    /// that never carry data are also held to PostgreSQL's 10000-byte limit.
    pub max_message_len: usize,
    /// Largest startup packet (StartupMessage, SSLRequest, CancelRequest),
    /// length word included.
    pub max_startup_packet_len: usize,
}

impl Default for ProtocolLimits {
    fn default() -> Self {
        ProtocolLimits {
            max_message_len: 1 << 30,
            max_startup_packet_len: 10_000,
        }
    }
}

/// Serves one client connection until it ends (Terminate, EOF, a FATAL
/// error, a socket error, or an interrupt in `shared` that ends the session).
/// Never panics. The listener may shut the socket down to end the
/// connection; a failed read ends it.
pub fn serve_connection<S: Read + Write>(
    stream: S,
    factory: &dyn SessionFactory,
    registry: &BackendRegistry,
    limits: &ProtocolLimits,
    shared: &ConnectionShared,
) {
    serve_client(stream, ClientAddr::Local, factory, registry, limits, shared)
}

/// [`serve_connection`] for a client at `addr`, which pg_hba.conf matches.
pub fn serve_client<S: Read + Write>(
    stream: S,
    addr: ClientAddr,
    factory: &dyn SessionFactory,
    registry: &BackendRegistry,
    limits: &ProtocolLimits,
    shared: &ConnectionShared,
) {
    let mut conn = Conn::new(stream);
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        serve(&mut conn, addr, factory, registry, limits, shared)
    }));
    if outcome.is_err() {
        conn.out.abort_partial();
        conn.out.error(&PgError::fatal(
            SqlState::INTERNAL_ERROR,
            "internal error: unexpected failure while processing a message",
        ));
    }
    // Best effort: the client may already be gone.
    let _ = catch_unwind(AssertUnwindSafe(|| {
        conn.flush();
        conn.stream.close();
    }));
}

fn serve<S: Read + Write>(
    conn: &mut Conn<S>,
    addr: ClientAddr,
    factory: &dyn SessionFactory,
    registry: &BackendRegistry,
    limits: &ProtocolLimits,
    shared: &ConnectionShared,
) {
    // As PostgreSQL: no SSL over Unix-domain sockets.
    let tls = match addr {
        ClientAddr::Host(_) => factory.tls(),
        ClientAddr::Local => None,
    };
    let mut params = match startup::read_startup(conn, registry, limits, tls) {
        Startup::Session(params) => params,
        Startup::Close => return,
    };
    params.ssl = conn.stream.ssl_info();
    match authenticate::authenticate(conn, factory, addr, conn.stream.is_tls(), &params) {
        Ok(()) => {}
        Err(authenticate::AuthFailure::Error(e)) => {
            conn.out.error(&e);
            return;
        }
        Err(authenticate::AuthFailure::Closed) => return,
    }
    let backend = registry.register(shared.interrupts.clone());
    let mut session = match factory.open(&params, backend.pid(), shared.interrupts.clone()) {
        Ok(session) => session,
        Err(e) => {
            conn.out.error(&PgError {
                severity: Severity::Fatal,
                ..e
            });
            return;
        }
    };
    shared.mark_session_started();
    conn.out.encoding = session.client_encoding();
    conn.out.auth_ok();
    for (name, value) in session.startup_parameters() {
        conn.out.parameter_status(&name, &value);
    }
    // The values just sent are current; nothing is "changed" yet.
    let _ = session.take_changed_parameters();
    conn.out.backend_key_data(backend.pid(), backend.secret());
    conn.out.ready_for_query(session.transaction_status());
    conn.flush();
    if conn.broken {
        return;
    }
    Connection::new(conn, session, limits, shared).run();
}
