//! The COPY sub-protocol: CopyInResponse then the client's CopyData until
//! CopyDone or CopyFail (Flush and Sync are ignored meanwhile, as the
//! protocol says); CopyOutResponse, CopyData rows and CopyDone the other way.
//! Only the text formats are offered (overall format 0).

use std::io::{Read, Write};

use common::{PgError, PgResult, SqlState};

use types::encoding::PgEncoding;

use super::codec::{protocol_violation, MsgReader};
use super::connection::connection_lost;
use super::encoding::{ClientEncoding, Decoder};
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

    /// The encoding COPY data is in: COPY's ENCODING option, else the client's.
    fn copy_encoding(&self, option: Option<PgEncoding>) -> PgResult<ClientEncoding> {
        match option {
            None => Ok(self.out.encoding),
            Some(e) => Ok(ClientEncoding::new(e)?),
        }
    }

    /// CopyInResponse, flushed: the client starts sending data (in
    /// `encoding`, else the client encoding).
    pub(crate) fn copy_in_start(
        &mut self,
        columns: usize,
        encoding: Option<PgEncoding>,
    ) -> PgResult<()> {
        let encoding = self.copy_encoding(encoding)?;
        // UTF8 data goes to COPY's parser as it came; it validates it.
        self.copy_decoder = (!encoding.is_utf8()).then(|| Decoder::new(encoding));
        self.copy_response(b'G', columns);
        self.flush();
        self.check_sink()
    }

    /// The next CopyData payload into `out`, as UTF8; false at CopyDone.
    /// CopyFail is an error (57014), as PostgreSQL reports it. After a
    /// conversion error `out` holds the payload's bytes before the bad ones.
    pub(crate) fn copy_in_next(&mut self, out: &mut Vec<u8>) -> PgResult<bool> {
        loop {
            let ty = match self.read_message(MAX_COPY_DATA, out) {
                Ok(ty) => ty,
                Err(ReadError::Eof | ReadError::Io) => return Err(connection_lost()),
                Err(ReadError::Fatal(e)) => return Err(e),
            };
            match ty {
                b'd' => {
                    if let Some(decoder) = &mut self.copy_decoder {
                        let mut text = String::with_capacity(out.len());
                        if let Err(e) = decoder.decode(out, false, &mut text) {
                            // What came before the bad bytes, so COPY can
                            // tell their line.
                            out.truncate(decoder.failed_at());
                            return Err(e.into());
                        }
                        *out = text.into_bytes();
                    }
                    return Ok(true);
                }
                b'c' => {
                    // A character cut off at the end of the data is invalid.
                    if let Some(mut decoder) = self.copy_decoder.take() {
                        decoder.decode(&[], true, &mut String::new())?;
                    }
                    return Ok(false);
                }
                b'f' => {
                    let mut r = MsgReader::with_encoding(out, self.out.encoding);
                    let msg = r.cstr().map(|m| m.into_owned()).unwrap_or_default();
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

    /// CopyOutResponse; the data follows in `encoding`, else the client
    /// encoding.
    pub(crate) fn copy_out_start(
        &mut self,
        columns: usize,
        encoding: Option<PgEncoding>,
    ) -> PgResult<()> {
        self.copy_out_encoding = self.copy_encoding(encoding)?;
        self.copy_response(b'H', columns);
        self.check_sink()
    }

    /// One CopyData message of server (UTF8) text.
    pub(crate) fn copy_out_data(&mut self, data: &[u8]) -> PgResult<()> {
        self.out.begin(b'd');
        let encoding = self.copy_out_encoding;
        if encoding.is_utf8() {
            self.out.buf.extend_from_slice(data);
        } else {
            let text = std::str::from_utf8(data).unwrap_or_default();
            if let Err(e) = encoding.encode_into(text, &mut self.out.buf) {
                self.out.abort_partial();
                return Err(e.into());
            }
        }
        self.out.end();
        self.check_sink()
    }

    pub(crate) fn copy_out_done(&mut self) -> PgResult<()> {
        self.out.begin(b'c');
        self.out.end();
        self.check_sink()
    }
}
