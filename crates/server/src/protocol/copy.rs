//! The COPY sub-protocol: CopyInResponse then the client's CopyData until
//! CopyDone or CopyFail (Flush and Sync are ignored meanwhile, as the
//! protocol says); CopyOutResponse, CopyData rows and CopyDone the other way.
//! Only the text formats are offered (overall format 0).

use std::io::{Read, Write};

use common::{PgError, PgResult, SqlState};

use super::codec::{protocol_violation, MsgReader};
use super::connection::connection_lost;
use super::stream::{Conn, ReadError};

/// Largest CopyData message accepted (PostgreSQL's limit for any message).
const MAX_COPY_DATA: usize = 1 << 30;

impl<S: Read + Write> Conn<S> {
    fn copy_response(&mut self, ty: u8, columns: usize) {
        self.out.begin(ty);
        self.out.put_u8(0);
        self.out.put_i16(columns as i16);
        for _ in 0..columns {
            self.out.put_i16(0);
        }
        self.out.end();
    }

    /// CopyInResponse, flushed: the client starts sending data.
    pub(crate) fn copy_in_start(&mut self, columns: usize) -> PgResult<()> {
        self.copy_response(b'G', columns);
        self.flush();
        self.check_sink()
    }

    /// The next CopyData payload into `out`; false at CopyDone. CopyFail is
    /// an error (57014), as PostgreSQL reports it.
    pub(crate) fn copy_in_next(&mut self, out: &mut Vec<u8>) -> PgResult<bool> {
        loop {
            let ty = match self.read_message(MAX_COPY_DATA, out) {
                Ok(ty) => ty,
                Err(ReadError::Eof | ReadError::Io) => return Err(connection_lost()),
                Err(ReadError::Fatal(e)) => return Err(e),
            };
            match ty {
                b'd' => return Ok(true),
                b'c' => return Ok(false),
                b'f' => {
                    let mut r = MsgReader::new(out);
                    let msg = r.cstr().unwrap_or("").to_string();
                    return Err(PgError::new(
                        SqlState::QUERY_CANCELED,
                        format!("COPY from stdin failed: {msg}"),
                    ));
                }
                b'H' | b'S' => continue,
                other => {
                    return Err(protocol_violation(format!(
                        "unexpected message type 0x{other:02X} during COPY from stdin"
                    )))
                }
            }
        }
    }

    /// CopyOutResponse.
    pub(crate) fn copy_out_start(&mut self, columns: usize) -> PgResult<()> {
        self.copy_response(b'H', columns);
        self.check_sink()
    }

    pub(crate) fn copy_out_data(&mut self, data: &[u8]) -> PgResult<()> {
        self.out.begin(b'd');
        self.out.buf.extend_from_slice(data);
        self.out.end();
        self.check_sink()
    }

    pub(crate) fn copy_out_done(&mut self) -> PgResult<()> {
        self.out.begin(b'c');
        self.out.end();
        self.check_sink()
    }
}
