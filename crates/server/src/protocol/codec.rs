//! Message encoding and decoding.
//!
//! This is a small hand-written codec rather than `pgwire::messages`: the
//! blocking state machine needs to borrow fields straight out of a reused
//! receive buffer, write DataRows into a reused send buffer without per-value
//! allocations, and report each kind of malformed input with PostgreSQL's own
//! SQLSTATE and message, which is simpler to get right with a few dozen lines
//! of explicit code.

use std::borrow::Cow;

use common::error::Severity;
use common::{PgError, PgResult, SqlState};
use types::io::{format_binary, format_text};
use types::{IoSettings, TypeId, Value};

use super::encoding::{ClientEncoding, EncodingError};
use crate::session_api::ColumnDesc;

pub(crate) const PROTOCOL_VIOLATION: SqlState = SqlState::PROTOCOL_VIOLATION;
pub(crate) const CHARACTER_NOT_IN_REPERTOIRE: SqlState = SqlState("22021");

/// A FATAL protocol violation (08P01): the connection is closed after it is sent.
pub(crate) fn protocol_violation(message: impl Into<String>) -> PgError {
    PgError::fatal(PROTOCOL_VIOLATION, message)
}

/// The types whose binary form is their text, which PostgreSQL's send and
/// receive functions convert like text (`pq_sendtext`, `pq_getmsgtext`);
/// jsonb's text follows a version byte.
fn binary_text_offset(ty: TypeId) -> Option<usize> {
    match ty {
        TypeId::Text | TypeId::Unknown | TypeId::Varchar | TypeId::Bpchar | TypeId::Name => Some(0),
        TypeId::Json => Some(0),
        TypeId::Jsonb => Some(1),
        _ => None,
    }
}

/// Converts one piece of text into `out`.
type TextConversion<'f> = &'f dyn Fn(&[u8], &mut Vec<u8>) -> Result<(), EncodingError>;

/// The binary value of `ty` with the text inside converted by `convert`:
/// a text type's, or each element's of an array of one (as `array_send`
/// and `array_recv` call the element's functions). None when `ty` carries
/// no text; an array whose layout is broken is left for its reader to refuse.
fn convert_binary_text(
    ty: TypeId,
    bytes: &[u8],
    convert: TextConversion<'_>,
) -> Option<Result<Vec<u8>, EncodingError>> {
    let one = |bytes: &[u8], at: usize, out: &mut Vec<u8>| {
        let at = at.min(bytes.len());
        out.extend_from_slice(&bytes[..at]);
        convert(&bytes[at..], out)
    };
    if let Some(at) = binary_text_offset(ty) {
        let mut out = Vec::with_capacity(bytes.len());
        return Some(one(bytes, at, &mut out).map(|()| out));
    }
    let at = ty.array_element().and_then(binary_text_offset)?;
    let word = |i: usize| {
        bytes
            .get(i..i + 4)
            .map(|b| i32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    };
    let ndim = usize::try_from(word(0)?).ok()?;
    let header = 12 + 8 * ndim;
    let mut out = bytes.get(..header)?.to_vec();
    let mut pos = header;
    while pos < bytes.len() {
        let len = word(pos)?;
        pos += 4;
        let Ok(n) = usize::try_from(len) else {
            out.extend_from_slice(&len.to_be_bytes());
            continue;
        };
        let element = bytes.get(pos..pos + n)?;
        pos += n;
        let len_at = out.len();
        out.extend_from_slice(&[0; 4]);
        if let Err(e) = one(element, at, &mut out) {
            return Some(Err(e));
        }
        let new_len = (out.len() - len_at - 4) as u32;
        out[len_at..len_at + 4].copy_from_slice(&new_len.to_be_bytes());
    }
    Some(Ok(out))
}

/// A binary parameter in the client encoding with its text as UTF8.
pub(crate) fn binary_param_to_server(
    ty: TypeId,
    bytes: &[u8],
    encoding: ClientEncoding,
) -> PgResult<Cow<'_, [u8]>> {
    if encoding.is_utf8() {
        return Ok(Cow::Borrowed(bytes));
    }
    let to_server = |text: &[u8], out: &mut Vec<u8>| {
        out.extend_from_slice(encoding.to_server(text)?.as_bytes());
        Ok(())
    };
    match convert_binary_text(ty, bytes, &to_server) {
        None => Ok(Cow::Borrowed(bytes)),
        Some(converted) => Ok(Cow::Owned(converted?)),
    }
}

/// Reads the fields of one frontend message body.
pub(crate) struct MsgReader<'a> {
    buf: &'a [u8],
    pos: usize,
    /// What strings are converted from.
    encoding: ClientEncoding,
}

impl<'a> MsgReader<'a> {
    /// A reader of UTF8 strings.
    pub(crate) fn new(buf: &'a [u8]) -> Self {
        Self::with_encoding(buf, ClientEncoding::UTF8)
    }

    /// A reader whose strings are in the client's `encoding`.
    pub(crate) fn with_encoding(buf: &'a [u8], encoding: ClientEncoding) -> Self {
        MsgReader {
            buf,
            pos: 0,
            encoding,
        }
    }

    pub(crate) fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    pub(crate) fn bytes(&mut self, n: usize) -> PgResult<&'a [u8]> {
        if n > self.remaining() {
            return Err(protocol_violation("insufficient data left in message"));
        }
        let out = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(out)
    }

    fn array<const N: usize>(&mut self) -> PgResult<[u8; N]> {
        let b = self.bytes(N)?;
        let mut out = [0u8; N];
        out.copy_from_slice(b);
        Ok(out)
    }

    pub(crate) fn u8(&mut self) -> PgResult<u8> {
        Ok(self.array::<1>()?[0])
    }

    pub(crate) fn i16(&mut self) -> PgResult<i16> {
        Ok(i16::from_be_bytes(self.array()?))
    }

    pub(crate) fn u16(&mut self) -> PgResult<u16> {
        Ok(u16::from_be_bytes(self.array()?))
    }

    pub(crate) fn i32(&mut self) -> PgResult<i32> {
        Ok(i32::from_be_bytes(self.array()?))
    }

    pub(crate) fn u32(&mut self) -> PgResult<u32> {
        Ok(u32::from_be_bytes(self.array()?))
    }

    /// A NUL-terminated string's bytes (without the NUL).
    pub(crate) fn cstr_bytes(&mut self) -> PgResult<&'a [u8]> {
        let rest = &self.buf[self.pos..];
        match rest.iter().position(|&b| b == 0) {
            Some(n) => {
                self.pos += n + 1;
                Ok(&rest[..n])
            }
            None => Err(protocol_violation("invalid string in message")),
        }
    }

    /// A NUL-terminated string in the reader's encoding, as UTF8 (borrowed
    /// when it was UTF8). An encoding error is a plain ERROR (22021, 22P05),
    /// after which the caller may keep going; framing errors are FATAL.
    pub(crate) fn cstr(&mut self) -> PgResult<Cow<'a, str>> {
        let bytes = self.cstr_bytes()?;
        Ok(self.encoding.to_server(bytes)?)
    }

    /// Checks that the whole body was consumed.
    pub(crate) fn finish(&self) -> PgResult<()> {
        if self.pos == self.buf.len() {
            Ok(())
        } else {
            Err(protocol_violation("invalid message format"))
        }
    }
}

/// How one result column is sent: its type (for the output function) and
/// whether in binary.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct ColFmt {
    pub ty: Option<TypeId>,
    pub binary: bool,
}

impl ColFmt {
    pub(crate) fn for_columns(
        columns: &[ColumnDesc],
        binary: impl Fn(usize) -> bool,
    ) -> Vec<ColFmt> {
        columns
            .iter()
            .enumerate()
            .map(|(i, c)| ColFmt {
                ty: TypeId::from_oid(c.type_oid),
                binary: binary(i),
            })
            .collect()
    }
}

/// Backend messages, appended to a reusable send buffer.
#[derive(Default)]
pub(crate) struct MessageBuf {
    pub buf: Vec<u8>,
    /// The client encoding text is converted to.
    pub encoding: ClientEncoding,
    /// Scratch space for text output, reused across values.
    scratch: String,
    /// Start of the message being written, so a panic mid-message can drop it.
    open: Option<usize>,
}

impl MessageBuf {
    pub(crate) fn begin(&mut self, ty: u8) {
        self.open = Some(self.buf.len());
        self.buf.push(ty);
        self.buf.extend_from_slice(&[0; 4]);
    }

    pub(crate) fn end(&mut self) {
        if let Some(start) = self.open.take() {
            let len = (self.buf.len() - start - 1) as u32;
            self.buf[start + 1..start + 5].copy_from_slice(&len.to_be_bytes());
        }
    }

    /// Drops a partially written message (after a panic).
    pub(crate) fn abort_partial(&mut self) {
        if let Some(start) = self.open.take() {
            self.buf.truncate(start);
        }
    }

    pub(crate) fn put_u8(&mut self, v: u8) {
        self.buf.push(v);
    }
    pub(crate) fn put_i16(&mut self, v: i16) {
        self.buf.extend_from_slice(&v.to_be_bytes());
    }
    pub(crate) fn put_i32(&mut self, v: i32) {
        self.buf.extend_from_slice(&v.to_be_bytes());
    }
    pub(crate) fn put_u32(&mut self, v: u32) {
        self.buf.extend_from_slice(&v.to_be_bytes());
    }
    /// A NUL-terminated string; anything after an embedded NUL is dropped.
    pub(crate) fn put_cstr(&mut self, s: &str) {
        let bytes = s.as_bytes();
        let n = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
        self.buf.extend_from_slice(&bytes[..n]);
        self.buf.push(0);
    }

    /// A NUL-terminated string in the client encoding; nothing is appended
    /// if a character has no equivalent there.
    fn put_text(&mut self, s: &str) -> Result<(), EncodingError> {
        let n = s.find('\0').unwrap_or(s.len());
        self.encoding.encode_into(&s[..n], &mut self.buf)?;
        self.buf.push(0);
        Ok(())
    }

    /// As `put_text`, with '?' for characters the client encoding lacks:
    /// for messages sent where no error can be reported.
    fn put_text_lossy(&mut self, s: &str) {
        let n = s.find('\0').unwrap_or(s.len());
        let converted = self.encoding.to_client_lossy(&s[..n]);
        self.buf.extend_from_slice(&converted);
        self.buf.push(0);
    }

    fn simple(&mut self, ty: u8) {
        self.begin(ty);
        self.end();
    }

    pub(crate) fn auth_ok(&mut self) {
        self.begin(b'R');
        self.put_i32(0);
        self.end();
    }

    pub(crate) fn parameter_status(&mut self, name: &str, value: &str) {
        self.begin(b'S');
        self.put_cstr(name);
        self.put_text_lossy(value);
        self.end();
    }

    /// NotificationResponse: a committed NOTIFY on a channel we listen to.
    pub(crate) fn notification(&mut self, pid: i32, channel: &str, payload: &str) {
        self.begin(b'A');
        self.put_i32(pid);
        self.put_text_lossy(channel);
        self.put_text_lossy(payload);
        self.end();
    }

    pub(crate) fn backend_key_data(&mut self, pid: i32, secret: i32) {
        self.begin(b'K');
        self.put_i32(pid);
        self.put_i32(secret);
        self.end();
    }

    pub(crate) fn negotiate_protocol_version(&mut self, minor: i32, unrecognized: &[String]) {
        self.begin(b'v');
        self.put_i32(minor);
        self.put_i32(unrecognized.len() as i32);
        for opt in unrecognized {
            self.put_cstr(opt);
        }
        self.end();
    }

    pub(crate) fn ready_for_query(&mut self, status: u8) {
        self.begin(b'Z');
        self.put_u8(status);
        self.end();
    }

    pub(crate) fn command_complete(&mut self, tag: &str) {
        self.begin(b'C');
        self.put_text_lossy(tag);
        self.end();
    }

    pub(crate) fn empty_query(&mut self) {
        self.simple(b'I');
    }
    pub(crate) fn parse_complete(&mut self) {
        self.simple(b'1');
    }
    pub(crate) fn bind_complete(&mut self) {
        self.simple(b'2');
    }
    pub(crate) fn close_complete(&mut self) {
        self.simple(b'3');
    }
    pub(crate) fn no_data(&mut self) {
        self.simple(b'n');
    }
    pub(crate) fn portal_suspended(&mut self) {
        self.simple(b's');
    }

    pub(crate) fn parameter_description(&mut self, oids: &[u32]) {
        self.begin(b't');
        self.buf
            .extend_from_slice(&(oids.len() as u16).to_be_bytes());
        for &oid in oids {
            self.put_u32(oid);
        }
        self.end();
    }

    /// RowDescription; column `i` is announced in binary if `binary(i)`.
    /// A column name the client encoding lacks a character of is an error.
    pub(crate) fn row_description(
        &mut self,
        columns: &[ColumnDesc],
        binary: impl Fn(usize) -> bool,
    ) -> PgResult<()> {
        self.begin(b'T');
        self.buf
            .extend_from_slice(&(columns.len() as u16).to_be_bytes());
        for (i, c) in columns.iter().enumerate() {
            if let Err(e) = self.put_text(&c.name) {
                self.abort_partial();
                return Err(e.into());
            }
            self.put_u32(c.table_oid);
            self.put_i16(c.column_id);
            self.put_u32(c.type_oid);
            self.put_i16(c.type_len);
            self.put_i32(c.type_mod);
            self.put_i16(i16::from(binary(i)));
        }
        self.end();
        Ok(())
    }

    /// DataRow; value `i` is output as `fmts[i]` says (text, by the value's own
    /// type, when the column is unknown), in the client encoding: a
    /// character it lacks is an error and no row is sent.
    pub(crate) fn data_row(
        &mut self,
        row: &[Value],
        fmts: &[ColFmt],
        io: &IoSettings,
    ) -> PgResult<()> {
        let r = self.data_row_values(row, fmts, io);
        if self.scratch.capacity() > 1 << 20 {
            self.scratch = String::new();
        }
        match r {
            Ok(()) => {
                self.end();
                Ok(())
            }
            Err(e) => {
                self.abort_partial();
                Err(e.into())
            }
        }
    }

    fn data_row_values(
        &mut self,
        row: &[Value],
        fmts: &[ColFmt],
        io: &IoSettings,
    ) -> Result<(), EncodingError> {
        self.begin(b'D');
        self.buf
            .extend_from_slice(&(row.len() as u16).to_be_bytes());
        for (i, v) in row.iter().enumerate() {
            let fmt = fmts.get(i);
            let Some(ty) = fmt.and_then(|f| f.ty).or_else(|| v.type_id()) else {
                // Only NULL has no type of its own.
                self.put_i32(-1);
                continue;
            };
            if v.is_null() {
                self.put_i32(-1);
            } else if fmt.is_some_and(|f| f.binary) {
                let at = self.buf.len();
                self.put_i32(0);
                format_binary(v, ty, &mut self.buf);
                if !self.encoding.is_utf8() {
                    let encoding = self.encoding;
                    let to_client = |text: &[u8], out: &mut Vec<u8>| {
                        encoding.encode_into(std::str::from_utf8(text).unwrap_or_default(), out)
                    };
                    let value = &self.buf[at + 4..];
                    if let Some(converted) = convert_binary_text(ty, value, &to_client) {
                        let converted = converted?;
                        self.buf.truncate(at + 4);
                        self.buf.extend_from_slice(&converted);
                    }
                }
                let len = (self.buf.len() - at - 4) as u32;
                self.buf[at..at + 4].copy_from_slice(&len.to_be_bytes());
            } else {
                self.scratch.clear();
                format_text(v, ty, io, &mut self.scratch);
                let at = self.buf.len();
                self.put_u32(0);
                self.encoding.encode_into(&self.scratch, &mut self.buf)?;
                let len = (self.buf.len() - at - 4) as u32;
                self.buf[at..at + 4].copy_from_slice(&len.to_be_bytes());
            }
        }
        Ok(())
    }

    fn error_fields(&mut self, e: &PgError, severity: Severity) -> Result<(), EncodingError> {
        let sev = severity.as_str();
        self.put_u8(b'S');
        self.put_cstr(sev);
        self.put_u8(b'V');
        self.put_cstr(sev);
        self.put_u8(b'C');
        self.put_cstr(e.code.0);
        self.put_u8(b'M');
        self.put_text(&e.message)?;
        if let Some(d) = &e.detail {
            self.put_u8(b'D');
            self.put_text(d)?;
        }
        if let Some(h) = &e.hint {
            self.put_u8(b'H');
            self.put_text(h)?;
        }
        if let Some(p) = e.position {
            self.put_u8(b'P');
            self.put_cstr(&p.to_string());
        }
        if let Some(w) = &e.context {
            self.put_u8(b'W');
            self.put_text(w)?;
        }
        if let Some(o) = &e.object {
            self.put_u8(b's');
            self.put_text(&o.schema)?;
            self.put_u8(b't');
            self.put_text(&o.table)?;
            if let Some(c) = &o.column {
                self.put_u8(b'c');
                self.put_text(c)?;
            }
            if let Some(n) = &o.constraint {
                self.put_u8(b'n');
                self.put_text(n)?;
            }
        }
        self.put_u8(0);
        Ok(())
    }

    /// An ErrorResponse or NoticeResponse. A message the client encoding
    /// cannot show is replaced by the conversion's own error (ASCII), as
    /// PostgreSQL reports the failure to convert it instead.
    fn report(&mut self, ty: u8, e: &PgError, severity: Severity) {
        self.begin(ty);
        if let Err(conversion) = self.error_fields(e, severity) {
            self.abort_partial();
            self.begin(ty);
            let mut replacement = PgError::from(conversion);
            replacement.severity = e.severity;
            let saved = std::mem::replace(&mut self.encoding, ClientEncoding::UTF8);
            let _ = self.error_fields(&replacement, severity);
            self.encoding = saved;
        }
        self.end();
    }

    /// ErrorResponse with the error's own severity (ERROR or FATAL).
    pub(crate) fn error(&mut self, e: &PgError) {
        let severity = match e.severity {
            Severity::Fatal => Severity::Fatal,
            _ => Severity::Error,
        };
        self.report(b'E', e, severity);
    }

    /// NoticeResponse (NOTICE, WARNING or INFO).
    pub(crate) fn notice(&mut self, e: &PgError) {
        let severity = match e.severity {
            Severity::Warning => Severity::Warning,
            Severity::Info => Severity::Info,
            _ => Severity::Notice,
        };
        self.report(b'N', e, severity);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reader_fields() {
        let body = b"ab\0\x00\x01\xff\xff\xff\xfe";
        let mut r = MsgReader::new(body);
        assert_eq!(r.cstr().unwrap(), "ab");
        assert_eq!(r.i16().unwrap(), 1);
        assert_eq!(r.i32().unwrap(), -2);
        r.finish().unwrap();
        assert!(r.u8().is_err());
    }

    #[test]
    fn reader_errors() {
        let mut r = MsgReader::new(b"abc");
        let e = r.cstr().unwrap_err();
        assert_eq!(e.code, PROTOCOL_VIOLATION);
        assert_eq!(e.severity, Severity::Fatal);
        let mut r = MsgReader::new(b"\xc3\x28\0");
        let e = r.cstr().unwrap_err();
        assert_eq!(e.code, CHARACTER_NOT_IN_REPERTOIRE);
        assert_eq!(e.severity, Severity::Error);
        // As PostgreSQL: as many bytes as the first one says the character has.
        assert_eq!(
            e.message,
            "invalid byte sequence for encoding \"UTF8\": 0xc3 0x28"
        );
        let mut r = MsgReader::new(b"\x00\x01x");
        r.i16().unwrap();
        assert_eq!(r.finish().unwrap_err().message, "invalid message format");
        assert!(super::super::encoding::validate_utf8(b"a\0b").is_err());
        assert!(r.bytes(usize::MAX).is_err());
    }

    #[test]
    fn message_framing() {
        let mut m = MessageBuf::default();
        m.command_complete("SELECT 1");
        m.ready_for_query(b'I');
        assert_eq!(m.buf, b"C\0\0\0\x0dSELECT 1\0Z\0\0\0\x05I".to_vec());
        m.begin(b'D');
        m.put_i32(7);
        m.abort_partial();
        assert_eq!(m.buf.len(), 20);
        m.buf.clear();
        let e = PgError::syntax("bad").with_position(3).with_hint("h");
        m.error(&e);
        assert_eq!(
            m.buf,
            b"E\0\0\0\x25SERROR\0VERROR\0C42601\0Mbad\0Hh\0P3\0\0".to_vec()
        );
    }

    #[test]
    fn output_in_the_client_encoding() {
        let latin1 = ClientEncoding::new(types::encoding::PgEncoding::Latin1).unwrap();
        let mut m = MessageBuf {
            encoding: latin1,
            ..MessageBuf::default()
        };
        let text = [ColFmt {
            ty: Some(TypeId::Text),
            binary: false,
        }];
        let binary = [ColFmt {
            ty: Some(TypeId::Text),
            binary: true,
        }];
        let io = IoSettings::default();
        m.data_row(&[Value::Text("\u{e9}t\u{e9}".into())], &text, &io)
            .unwrap();
        m.data_row(&[Value::Text("\u{e9}".into())], &binary, &io)
            .unwrap();
        assert_eq!(
            m.buf,
            b"D\0\0\0\x0d\0\x01\0\0\0\x03\xe9t\xe9D\0\0\0\x0b\0\x01\0\0\0\x01\xe9".to_vec()
        );
        // A character LATIN1 lacks: an error, and no partial row.
        m.buf.clear();
        let e = m
            .data_row(&[Value::Text("\u{20ac}".into())], &text, &io)
            .unwrap_err();
        assert_eq!(e.code, SqlState("22P05"));
        assert!(m.buf.is_empty());
        // An error message LATIN1 cannot show is replaced by the conversion's error.
        m.error(&PgError::syntax("caf\u{e9}"));
        assert!(m.buf.windows(5).any(|w| w == b"caf\xe9\0"));
        m.buf.clear();
        m.error(&PgError::syntax("\u{20ac}"));
        let sent = String::from_utf8_lossy(&m.buf);
        assert!(sent.contains("C22P05\0"), "{sent}");
        assert!(
            sent.contains("has no equivalent in encoding \"LATIN1\""),
            "{sent}"
        );
    }
}
