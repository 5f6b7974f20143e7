//! The client byte stream: plain, or TLS after an SSLRequest was accepted.
//! Everything above (`stream.rs` and up) reads and writes through it
//! unaware of which. The socket stays owned by the caller's stream `S`
//! (a `&mut TcpStream` in the server), so the connection table's
//! `shutdown(2)` and `poll(2)` on its descriptor work the same on both:
//! a shut-down read side makes the TLS read see end of file.

use std::io::{self, Read, Write};
use std::sync::Arc;

use rustls::{ServerConfig, ServerConnection, StreamOwned};

use crate::tls::SslInfo;

pub(crate) enum Transport<S: Read + Write> {
    Plain(S),
    Tls(Box<StreamOwned<ServerConnection, S>>),
    /// After a failed handshake: every read and write fails.
    Closed,
}

fn closed() -> io::Error {
    io::Error::new(io::ErrorKind::NotConnected, "connection closed")
}

impl<S: Read + Write> Transport<S> {
    pub(crate) fn is_tls(&self) -> bool {
        matches!(self, Transport::Tls(_))
    }

    /// Runs the server side of the TLS handshake on the plain stream. On
    /// failure the transport is closed; the error is for the server log.
    pub(crate) fn start_tls(&mut self, config: Arc<ServerConfig>) -> io::Result<()> {
        let Transport::Plain(mut sock) = std::mem::replace(self, Transport::Closed) else {
            return Err(closed());
        };
        let mut tls = ServerConnection::new(config).map_err(io::Error::other)?;
        while tls.is_handshaking() {
            // complete_io sends our alert itself when the client's messages
            // are rejected, and reports end of file mid-handshake.
            tls.complete_io(&mut sock)?;
        }
        *self = Transport::Tls(Box::new(StreamOwned::new(tls, sock)));
        Ok(())
    }

    /// Whether TLS has decrypted bytes the reader has not taken yet: a
    /// poll(2) on the socket would not see them.
    pub(crate) fn has_pending_plaintext(&mut self) -> bool {
        match self {
            Transport::Tls(s) => s
                .conn
                .process_new_packets()
                .is_ok_and(|io| io.plaintext_bytes_to_read() > 0),
            _ => false,
        }
    }

    pub(crate) fn ssl_info(&self) -> Option<SslInfo> {
        match self {
            Transport::Tls(s) => Some(SslInfo::of(&s.conn)),
            _ => None,
        }
    }

    /// Best effort at the end of a connection: a TLS close_notify, so the
    /// client sees a clean end rather than a truncated stream.
    pub(crate) fn close(&mut self) {
        if let Transport::Tls(s) = self {
            s.conn.send_close_notify();
            let _ = s.conn.complete_io(&mut s.sock);
        }
    }
}

impl<S: Read + Write> Read for Transport<S> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Transport::Plain(s) => s.read(buf),
            Transport::Tls(s) => s.read(buf),
            Transport::Closed => Err(closed()),
        }
    }
}

impl<S: Read + Write> Write for Transport<S> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Transport::Plain(s) => s.write(buf),
            Transport::Tls(s) => s.write(buf),
            Transport::Closed => Err(closed()),
        }
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        match self {
            Transport::Plain(s) => s.write_all(buf),
            Transport::Tls(s) => s.write_all(buf),
            Transport::Closed => Err(closed()),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Transport::Plain(s) => s.flush(),
            Transport::Tls(s) => s.flush(),
            Transport::Closed => Err(closed()),
        }
    }
}
