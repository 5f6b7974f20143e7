//! Buffered blocking I/O on the client stream: message framing on the read
//! side (with length limits checked before anything is allocated) and a send
//! buffer that is written out only when the client waits or it grows large.

use std::io::{ErrorKind, Read, Write};

use common::PgError;

use super::codec::{protocol_violation, MessageBuf};
use super::transport::Transport;

const READ_BUF_SIZE: usize = 16 * 1024;
/// The send buffer is written out once it holds this much, so a large result
/// streams with bounded memory.
const SPILL_AT: usize = 64 * 1024;
/// PostgreSQL's PQ_SMALL_MESSAGE_LIMIT, for messages that never carry data.
const SMALL_MESSAGE_LIMIT: usize = 10_000;

/// Why no message could be read.
#[derive(Debug)]
pub(crate) enum ReadError {
    /// The client closed the connection (possibly mid-message).
    Eof,
    /// The socket failed.
    Io,
    /// Malformed framing: report it (FATAL) and close.
    Fatal(PgError),
}

/// Frontend message types accepted after startup.
fn is_valid_type(ty: u8) -> bool {
    matches!(
        ty,
        b'Q' | b'P'
            | b'B'
            | b'D'
            | b'E'
            | b'C'
            | b'H'
            | b'S'
            | b'X'
            | b'F'
            | b'd'
            | b'c'
            | b'f'
            | b'p'
    )
}

/// Types that may carry a large body (query text, parameter values, copy data).
fn is_large_type(ty: u8) -> bool {
    matches!(ty, b'Q' | b'P' | b'B' | b'F' | b'd')
}

pub(crate) struct Conn<S: Read + Write> {
    pub(crate) stream: Transport<S>,
    rbuf: Box<[u8]>,
    rpos: usize,
    rend: usize,
    pub(crate) out: MessageBuf,
    /// Set once a write failed; nothing more is sent and the connection ends.
    pub(crate) broken: bool,
    /// COPY FROM STDIN data in an encoding other than UTF8: its converter.
    pub(crate) copy_decoder: Option<super::encoding::Decoder>,
    /// What COPY TO STDOUT data is sent in.
    pub(crate) copy_out_encoding: super::encoding::ClientEncoding,
}

impl<S: Read + Write> Conn<S> {
    pub(crate) fn new(stream: S) -> Self {
        Conn {
            stream: Transport::Plain(stream),
            rbuf: vec![0; READ_BUF_SIZE].into_boxed_slice(),
            rpos: 0,
            rend: 0,
            out: MessageBuf::default(),
            broken: false,
            copy_decoder: None,
            copy_out_encoding: super::encoding::ClientEncoding::UTF8,
        }
    }

    /// Whether bytes were received that no message has consumed yet.
    pub(crate) fn has_buffered_input(&self) -> bool {
        self.rpos < self.rend
    }

    /// Whether the next read can be answered without the socket: bytes
    /// buffered here or decrypted by TLS.
    pub(crate) fn has_input_without_socket(&mut self) -> bool {
        self.has_buffered_input() || self.stream.has_pending_plaintext()
    }

    fn fill(&mut self) -> Result<(), ReadError> {
        if self.rpos < self.rend {
            return Ok(());
        }
        loop {
            match self.stream.read(&mut self.rbuf) {
                Ok(0) => return Err(ReadError::Eof),
                Ok(n) => {
                    self.rpos = 0;
                    self.rend = n;
                    return Ok(());
                }
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) if e.kind() == ErrorKind::UnexpectedEof => return Err(ReadError::Eof),
                Err(_) => return Err(ReadError::Io),
            }
        }
    }

    fn read_array<const N: usize>(&mut self) -> Result<[u8; N], ReadError> {
        let mut out = [0u8; N];
        let mut got = 0;
        while got < N {
            self.fill()?;
            let n = (N - got).min(self.rend - self.rpos);
            out[got..got + n].copy_from_slice(&self.rbuf[self.rpos..self.rpos + n]);
            self.rpos += n;
            got += n;
        }
        Ok(out)
    }

    /// Replaces `out` with the next `n` bytes. The buffer grows only as data
    /// actually arrives, so a lying length costs nothing until it is sent.
    fn read_body(&mut self, out: &mut Vec<u8>, n: usize) -> Result<(), ReadError> {
        out.clear();
        if out.capacity() > 4 * SPILL_AT && n < SPILL_AT {
            out.shrink_to(SPILL_AT);
        }
        while out.len() < n {
            self.fill()?;
            let take = (n - out.len()).min(self.rend - self.rpos);
            out.extend_from_slice(&self.rbuf[self.rpos..self.rpos + take]);
            self.rpos += take;
        }
        Ok(())
    }

    /// Reads a startup-phase packet (length word, then body) into `out`.
    pub(crate) fn read_startup_packet(
        &mut self,
        max_len: usize,
        out: &mut Vec<u8>,
    ) -> Result<(), ReadError> {
        let len = i32::from_be_bytes(self.read_array()?);
        if len < 8 || len as usize > max_len {
            return Err(ReadError::Fatal(protocol_violation(
                "invalid length of startup packet",
            )));
        }
        self.read_body(out, len as usize - 4)
    }

    /// Reads one regular message: returns its type byte and leaves the body in `out`.
    pub(crate) fn read_message(
        &mut self,
        max_len: usize,
        out: &mut Vec<u8>,
    ) -> Result<u8, ReadError> {
        let [ty] = self.read_array()?;
        if !is_valid_type(ty) {
            return Err(ReadError::Fatal(protocol_violation(format!(
                "invalid frontend message type {ty}"
            ))));
        }
        let len = i32::from_be_bytes(self.read_array()?);
        let limit = if is_large_type(ty) {
            max_len
        } else {
            max_len.min(SMALL_MESSAGE_LIMIT)
        };
        if len < 4 || len as usize - 4 > limit {
            return Err(ReadError::Fatal(protocol_violation(
                "invalid message length",
            )));
        }
        self.read_body(out, len as usize - 4)?;
        Ok(ty)
    }

    /// Writes the buffered output to the socket (no flush of the socket itself).
    fn write_out(&mut self) {
        if !self.broken && !self.out.buf.is_empty() && self.stream.write_all(&self.out.buf).is_err()
        {
            self.broken = true;
        }
        self.out.buf.clear();
        if self.out.buf.capacity() > 16 * SPILL_AT {
            self.out.buf.shrink_to(2 * SPILL_AT);
        }
    }

    /// Writes out the send buffer if it has grown large (during big results).
    pub(crate) fn spill_if_needed(&mut self) {
        if self.out.buf.len() >= SPILL_AT {
            self.write_out();
        }
    }

    /// After queueing output for a sink: spills a large buffer, and reports a
    /// failed socket so the statement stops producing rows for nobody.
    pub(crate) fn check_sink(&mut self) -> common::PgResult<()> {
        self.spill_if_needed();
        if self.broken {
            Err(super::connection::connection_lost())
        } else {
            Ok(())
        }
    }

    /// Sends everything buffered: the client is about to wait for it.
    pub(crate) fn flush(&mut self) {
        self.write_out();
        if !self.broken && self.stream.flush().is_err() {
            self.broken = true;
        }
    }
}
