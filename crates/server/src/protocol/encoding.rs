//! Conversion between the client encoding and the server's UTF8, at the
//! protocol's edge: query strings, names and text parameters on the way in;
//! row values, column names, messages and ParameterStatus on the way out;
//! COPY data both ways (PostgreSQL's mbutils.c `pg_client_to_server` and
//! `pg_server_to_client`).
//!
//! UTF8 and SQL_ASCII clients cost nothing: input is only validated as UTF8
//! (a SQL_ASCII client's too, as PostgreSQL checks it against the server
//! encoding) and output is borrowed as it is. LATIN1 and LATIN5 are mapped
//! here byte for byte, because `encoding_rs` follows the WHATWG standard,
//! where the label ISO-8859-1 means windows-1252 and ISO-8859-9 windows-1254;
//! the other encodings go through `encoding_rs`.

use std::borrow::Cow;

use common::{PgError, SqlState};
use encoding_rs::{DecoderResult, EncoderResult, Encoding};
use types::encoding::PgEncoding;

/// Why a conversion failed, as PostgreSQL words it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum EncodingError {
    /// Bytes that are not a character of their encoding (22021).
    #[error("invalid byte sequence for encoding \"{}\": {}", .encoding.name(), hex(.bytes))]
    InvalidBytes {
        encoding: PgEncoding,
        bytes: Vec<u8>,
    },
    /// A character the target encoding lacks (22P05).
    #[error(
        "character with byte sequence {} in encoding \"{}\" has no equivalent in encoding \"{}\"",
        hex(.bytes), .from.name(), .to.name()
    )]
    Untranslatable {
        bytes: Vec<u8>,
        from: PgEncoding,
        to: PgEncoding,
    },
    /// A client encoding PostgreSQL knows that is not converted here (0A000).
    #[error("conversion between {} and UTF8 is not supported", .0.name())]
    Unsupported(PgEncoding),
}

fn hex(bytes: &[u8]) -> String {
    let parts: Vec<String> = bytes.iter().map(|b| format!("0x{b:02x}")).collect();
    parts.join(" ")
}

impl From<EncodingError> for PgError {
    fn from(e: EncodingError) -> PgError {
        let code = match e {
            EncodingError::InvalidBytes { .. } => super::codec::CHARACTER_NOT_IN_REPERTOIRE,
            EncodingError::Untranslatable { .. } => SqlState("22P05"),
            EncodingError::Unsupported(_) => SqlState::FEATURE_NOT_SUPPORTED,
        };
        PgError::new(code, e.to_string())
    }
}

type Result<T> = std::result::Result<T, EncodingError>;

/// How one client encoding is converted.
#[derive(Debug, Clone, Copy)]
enum Converter {
    /// UTF8 and SQL_ASCII: validation only.
    Utf8,
    /// ISO-8859-1: byte = code point.
    Latin1,
    /// ISO-8859-9: Latin-1 with six Turkish letters.
    Latin5,
    Rs {
        encoding: &'static Encoding,
        /// windows-125x/874: WHATWG decodes their unassigned bytes as C1
        /// controls; PostgreSQL's tables have no mapping for them.
        c1_unassigned: bool,
        /// EUC_KR and EUC_CN: the EUC subset of the UHC/GBK codec,
        /// both bytes of a character in 0xa1..=0xfe.
        euc_only: bool,
    },
}

/// The session's client encoding, typed once when `client_encoding` changes;
/// only encodings that can be converted are representable.
#[derive(Debug, Clone, Copy)]
pub struct ClientEncoding {
    encoding: PgEncoding,
    converter: Converter,
}

impl PartialEq for ClientEncoding {
    fn eq(&self, other: &Self) -> bool {
        self.encoding == other.encoding
    }
}

impl Eq for ClientEncoding {}

impl Default for ClientEncoding {
    fn default() -> Self {
        ClientEncoding::UTF8
    }
}

/// ISO-8859-9's differences from ISO-8859-1: (byte, code point).
const LATIN5_LETTERS: [(u8, char); 6] = [
    (0xd0, '\u{011e}'),
    (0xdd, '\u{0130}'),
    (0xde, '\u{015e}'),
    (0xf0, '\u{011f}'),
    (0xfd, '\u{0131}'),
    (0xfe, '\u{015f}'),
];

impl ClientEncoding {
    pub const UTF8: ClientEncoding = ClientEncoding {
        encoding: PgEncoding::Utf8,
        converter: Converter::Utf8,
    };

    pub(crate) fn new(encoding: PgEncoding) -> Result<ClientEncoding> {
        use PgEncoding as E;
        let rs = |encoding: &'static Encoding| Converter::Rs {
            encoding,
            c1_unassigned: false,
            euc_only: false,
        };
        let windows = |encoding: &'static Encoding| Converter::Rs {
            encoding,
            c1_unassigned: true,
            euc_only: false,
        };
        let euc = |encoding: &'static Encoding| Converter::Rs {
            encoding,
            c1_unassigned: false,
            euc_only: true,
        };
        let converter = match encoding {
            E::Utf8 | E::SqlAscii => Converter::Utf8,
            E::Latin1 => Converter::Latin1,
            E::Latin5 => Converter::Latin5,
            E::Latin2 => rs(encoding_rs::ISO_8859_2),
            E::Latin3 => rs(encoding_rs::ISO_8859_3),
            E::Latin4 => rs(encoding_rs::ISO_8859_4),
            E::Latin6 => rs(encoding_rs::ISO_8859_10),
            E::Latin7 => rs(encoding_rs::ISO_8859_13),
            E::Latin8 => rs(encoding_rs::ISO_8859_14),
            E::Latin9 => rs(encoding_rs::ISO_8859_15),
            E::Latin10 => rs(encoding_rs::ISO_8859_16),
            E::Iso8859_5 => rs(encoding_rs::ISO_8859_5),
            E::Iso8859_6 => rs(encoding_rs::ISO_8859_6),
            E::Iso8859_7 => rs(encoding_rs::ISO_8859_7),
            E::Iso8859_8 => rs(encoding_rs::ISO_8859_8),
            E::Win866 => rs(encoding_rs::IBM866),
            E::Koi8R => rs(encoding_rs::KOI8_R),
            E::Koi8U => rs(encoding_rs::KOI8_U),
            E::Win874 => windows(encoding_rs::WINDOWS_874),
            E::Win1250 => windows(encoding_rs::WINDOWS_1250),
            E::Win1251 => windows(encoding_rs::WINDOWS_1251),
            E::Win1252 => windows(encoding_rs::WINDOWS_1252),
            E::Win1253 => windows(encoding_rs::WINDOWS_1253),
            E::Win1254 => windows(encoding_rs::WINDOWS_1254),
            E::Win1255 => windows(encoding_rs::WINDOWS_1255),
            E::Win1256 => windows(encoding_rs::WINDOWS_1256),
            E::Win1257 => windows(encoding_rs::WINDOWS_1257),
            E::Win1258 => windows(encoding_rs::WINDOWS_1258),
            E::EucJp => rs(encoding_rs::EUC_JP),
            E::Sjis => rs(encoding_rs::SHIFT_JIS),
            E::Big5 => rs(encoding_rs::BIG5),
            E::Gbk => rs(encoding_rs::GBK),
            E::Gb18030 => rs(encoding_rs::GB18030),
            // encoding_rs's EUC-KR is Microsoft's UHC (code page 949).
            E::Uhc => rs(encoding_rs::EUC_KR),
            E::EucKr => euc(encoding_rs::EUC_KR),
            E::EucCn => euc(encoding_rs::GBK),
            E::EucTw | E::EucJis2004 | E::ShiftJis2004 | E::Johab | E::MuleInternal => {
                return Err(EncodingError::Unsupported(encoding))
            }
        };
        Ok(ClientEncoding {
            encoding,
            converter,
        })
    }

    pub(crate) fn encoding(self) -> PgEncoding {
        self.encoding
    }

    /// Whether text passes unchanged (UTF8, SQL_ASCII).
    pub(crate) fn is_utf8(self) -> bool {
        matches!(self.converter, Converter::Utf8)
    }

    /// The length PostgreSQL assumes for the character starting with `b`
    /// (`pg_encoding_mblen`), for the bytes an error shows.
    fn char_len(self, b: u8, next: Option<u8>) -> usize {
        use PgEncoding as E;
        let high = b >= 0x80;
        match self.encoding {
            E::Utf8 | E::SqlAscii => utf8_char_len(b),
            E::EucJp if b == 0x8f => 3,
            E::EucJp | E::EucKr | E::EucCn | E::Big5 | E::Gbk | E::Uhc if high => 2,
            E::Sjis if (0xa1..=0xdf).contains(&b) => 1,
            E::Sjis if high => 2,
            E::Gb18030 if high && next.is_some_and(|n| n.is_ascii_digit()) => 4,
            E::Gb18030 if high => 2,
            _ => 1,
        }
    }

    fn invalid_at(self, bytes: &[u8], at: usize) -> EncodingError {
        let at = at.min(bytes.len().saturating_sub(1));
        let len = self.char_len(bytes[at], bytes.get(at + 1).copied());
        let reported = if self.is_utf8() {
            PgEncoding::Utf8
        } else {
            self.encoding
        };
        EncodingError::InvalidBytes {
            encoding: reported,
            bytes: bytes[at..(at + len).min(bytes.len())].to_vec(),
        }
    }

    /// Client bytes as server text. Free for UTF8; NUL is never valid.
    pub(crate) fn to_server<'a>(self, bytes: &'a [u8]) -> Result<Cow<'a, str>> {
        if let Converter::Utf8 = self.converter {
            return validate_utf8(bytes).map(Cow::Borrowed);
        }
        let mut out = String::new();
        let mut decoder = Decoder::new(self);
        decoder.decode(bytes, true, &mut out)?;
        Ok(Cow::Owned(out))
    }

    /// Server text as client bytes. Free for UTF8.
    pub(crate) fn to_client(self, text: &str) -> Result<Cow<'_, [u8]>> {
        if let Converter::Utf8 = self.converter {
            return Ok(Cow::Borrowed(text.as_bytes()));
        }
        let mut out = Vec::with_capacity(text.len());
        self.encode_into(text, &mut out)?;
        Ok(Cow::Owned(out))
    }

    /// Appends `text` in the client encoding to `out`; nothing is appended
    /// on failure.
    pub(crate) fn encode_into(self, text: &str, out: &mut Vec<u8>) -> Result<()> {
        let start = out.len();
        let r = self.encode_unchecked(text, out);
        if r.is_err() {
            out.truncate(start);
        }
        r
    }

    fn encode_unchecked(self, text: &str, out: &mut Vec<u8>) -> Result<()> {
        let untranslatable = |c: char| EncodingError::Untranslatable {
            bytes: c.to_string().into_bytes(),
            from: PgEncoding::Utf8,
            to: self.encoding,
        };
        match self.converter {
            Converter::Utf8 => out.extend_from_slice(text.as_bytes()),
            Converter::Latin1 => {
                for c in text.chars() {
                    out.push(u8::try_from(u32::from(c)).map_err(|_| untranslatable(c))?);
                }
            }
            Converter::Latin5 => {
                for c in text.chars() {
                    let b = match LATIN5_LETTERS.iter().find(|(_, l)| *l == c) {
                        Some((b, _)) => *b,
                        None => match u8::try_from(u32::from(c)) {
                            Ok(b) if !LATIN5_LETTERS.iter().any(|(l, _)| *l == b) => b,
                            _ => return Err(untranslatable(c)),
                        },
                    };
                    out.push(b);
                }
            }
            Converter::Rs {
                encoding,
                c1_unassigned,
                euc_only,
            } => {
                if c1_unassigned {
                    if let Some(c) = text.chars().find(|c| ('\u{80}'..='\u{9f}').contains(c)) {
                        return Err(untranslatable(c));
                    }
                }
                let mut encoder = encoding.new_encoder();
                if euc_only {
                    // Character by character, to find one outside the EUC subset.
                    let mut buf = [0u8; 4];
                    let mut tmp = [0u8; 8];
                    for c in text.chars() {
                        let (result, _, written) = encoder.encode_from_utf8_without_replacement(
                            c.encode_utf8(&mut buf),
                            &mut tmp,
                            false,
                        );
                        let bytes = &tmp[..written];
                        let in_subset = c.is_ascii()
                            || (written == 2 && bytes.iter().all(|b| (0xa1..=0xfe).contains(b)));
                        if result != EncoderResult::InputEmpty || !in_subset {
                            return Err(untranslatable(c));
                        }
                        out.extend_from_slice(bytes);
                    }
                    return Ok(());
                }
                let mut src = text;
                loop {
                    let need = encoder
                        .max_buffer_length_from_utf8_without_replacement(src.len())
                        .unwrap_or(src.len() * 4 + 16);
                    let at = out.len();
                    out.resize(at + need, 0);
                    let (result, read, written) =
                        encoder.encode_from_utf8_without_replacement(src, &mut out[at..], true);
                    out.truncate(at + written);
                    src = &src[read..];
                    match result {
                        EncoderResult::InputEmpty => break,
                        EncoderResult::OutputFull => continue,
                        EncoderResult::Unmappable(c) => return Err(untranslatable(c)),
                    }
                }
            }
        }
        Ok(())
    }

    /// `text` in the client encoding, with characters it lacks as '?': for
    /// what is sent while no error can be reported (notifications).
    pub(crate) fn to_client_lossy(self, text: &str) -> Cow<'_, [u8]> {
        if let Ok(converted) = self.to_client(text) {
            return converted;
        }
        let mut out = Vec::with_capacity(text.len());
        let mut buf = [0u8; 4];
        for c in text.chars() {
            if self.encode_into(c.encode_utf8(&mut buf), &mut out).is_err() {
                out.push(b'?');
            }
        }
        Cow::Owned(out)
    }
}

/// UTF8 characters' length by their first byte (`pg_utf_mblen`).
fn utf8_char_len(b: u8) -> usize {
    match b {
        _ if b & 0x80 == 0 => 1,
        _ if b & 0xe0 == 0xc0 => 2,
        _ if b & 0xf0 == 0xe0 => 3,
        _ if b & 0xf8 == 0xf0 => 4,
        _ => 1,
    }
}

/// Checks UTF8 input: valid and without NUL, with PostgreSQL's error.
pub(crate) fn validate_utf8(bytes: &[u8]) -> Result<&str> {
    let (valid, bad) = match std::str::from_utf8(bytes) {
        Ok(s) => (s, None),
        Err(e) => (
            // Safe to slice: `valid_up_to` is a character boundary.
            std::str::from_utf8(&bytes[..e.valid_up_to()]).unwrap_or_default(),
            Some(e.valid_up_to()),
        ),
    };
    // The first bad byte wins, as PostgreSQL scans: a NUL before it.
    let at = match valid.bytes().position(|b| b == 0).or(bad) {
        None => return Ok(valid),
        Some(at) => at,
    };
    Err(ClientEncoding::UTF8.invalid_at(bytes, at))
}

/// Converts client bytes to UTF8 a piece at a time (COPY data, where a
/// character may be split between two CopyData messages).
pub(crate) struct Decoder {
    encoding: ClientEncoding,
    rs: Option<encoding_rs::Decoder>,
    /// EUC_KR/EUC_CN: the last piece ended inside a two-byte character.
    euc_pending: bool,
    /// Where in its piece the last failed `decode` found the bad bytes.
    failed_at: usize,
}

impl Decoder {
    pub(crate) fn new(encoding: ClientEncoding) -> Decoder {
        let rs = match encoding.converter {
            Converter::Rs { encoding, .. } => Some(encoding.new_decoder_without_bom_handling()),
            _ => None,
        };
        Decoder {
            encoding,
            rs,
            euc_pending: false,
            failed_at: 0,
        }
    }

    /// The offset in its piece of what the last failed `decode` reported
    /// (for COPY's line number).
    pub(crate) fn failed_at(&self) -> usize {
        self.failed_at
    }

    /// Appends the UTF8 of `src` to `out`; `last` at the end of the input.
    pub(crate) fn decode(&mut self, src: &[u8], last: bool, out: &mut String) -> Result<()> {
        let enc = self.encoding;
        if let Some(at) = src.iter().position(|&b| b == 0) {
            self.failed_at = at;
            return Err(enc.invalid_at(src, at));
        }
        match enc.converter {
            Converter::Utf8 => out.push_str(validate_utf8(src)?),
            Converter::Latin1 => out.extend(src.iter().map(|&b| char::from(b))),
            Converter::Latin5 => out.extend(src.iter().map(|&b| {
                LATIN5_LETTERS
                    .iter()
                    .find(|(l, _)| *l == b)
                    .map_or(char::from(b), |(_, c)| *c)
            })),
            Converter::Rs {
                c1_unassigned,
                euc_only,
                ..
            } => {
                if euc_only {
                    self.check_euc_input(src, last)?;
                }
                let decoder = self.rs.as_mut().expect("an encoding_rs decoder");
                let start = out.len();
                let mut rest = src;
                loop {
                    let need = decoder
                        .max_utf8_buffer_length_without_replacement(rest.len())
                        .unwrap_or(rest.len() * 3 + 16);
                    out.reserve(need);
                    let (result, read) =
                        decoder.decode_to_string_without_replacement(rest, out, last);
                    match result {
                        DecoderResult::InputEmpty => break,
                        DecoderResult::OutputFull => rest = &rest[read..],
                        DecoderResult::Malformed(bad, after) => {
                            let consumed = src.len() - rest.len() + read;
                            let at = consumed.saturating_sub(usize::from(bad) + usize::from(after));
                            self.failed_at = at;
                            return Err(enc.invalid_at(src, at));
                        }
                    }
                }
                if c1_unassigned {
                    // Single-byte: the n-th character came from the n-th byte.
                    if let Some(i) = out[start..]
                        .chars()
                        .position(|c| ('\u{80}'..='\u{9f}').contains(&c))
                    {
                        self.failed_at = i;
                        return Err(EncodingError::Untranslatable {
                            bytes: vec![src[i]],
                            from: enc.encoding,
                            to: PgEncoding::Utf8,
                        });
                    }
                }
            }
        }
        Ok(())
    }

    /// EUC_KR/EUC_CN input must be in the EUC subset of the wider codec:
    /// a byte 0xa1..=0xfe, then another.
    fn check_euc_input(&mut self, src: &[u8], last: bool) -> Result<()> {
        let in_range = |b: u8| (0xa1..=0xfe).contains(&b);
        let mut i = 0;
        if self.euc_pending {
            if let Some(&b) = src.first() {
                if !in_range(b) {
                    self.failed_at = 0;
                    return Err(self.encoding.invalid_at(src, 0));
                }
                i = 1;
            }
        }
        self.euc_pending = false;
        while i < src.len() {
            let b = src[i];
            if b < 0x80 {
                i += 1;
                continue;
            }
            let invalid = match src.get(i + 1) {
                _ if !in_range(b) => true,
                Some(&t) => !in_range(t),
                None => last,
            };
            if invalid {
                self.failed_at = i;
                return Err(self.encoding.invalid_at(src, i));
            }
            match src.get(i + 1) {
                Some(_) => i += 2,
                None => {
                    self.euc_pending = true;
                    i += 1;
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn enc(e: PgEncoding) -> ClientEncoding {
        ClientEncoding::new(e).unwrap()
    }

    fn message(r: Result<impl std::fmt::Debug>) -> String {
        r.unwrap_err().to_string()
    }

    #[test]
    fn utf8_is_borrowed() {
        let u = ClientEncoding::UTF8;
        assert!(matches!(u.to_server(b"abc").unwrap(), Cow::Borrowed("abc")));
        assert!(matches!(u.to_client("\u{20ac}").unwrap(), Cow::Borrowed(_)));
        assert_eq!(
            message(u.to_server(b"\xc3\x28\x27")),
            "invalid byte sequence for encoding \"UTF8\": 0xc3 0x28"
        );
        assert_eq!(
            message(enc(PgEncoding::SqlAscii).to_server(b"a\xe9b'")),
            "invalid byte sequence for encoding \"UTF8\": 0xe9 0x62 0x27"
        );
        assert_eq!(
            message(u.to_server(b"a\0b")),
            "invalid byte sequence for encoding \"UTF8\": 0x00"
        );
    }

    #[test]
    fn latin1_is_iso_8859_1() {
        let l = enc(PgEncoding::Latin1);
        assert_eq!(
            l.to_server(b"\xe9t\xe9\x80").unwrap(),
            "\u{e9}t\u{e9}\u{80}"
        );
        assert_eq!(&*l.to_client("\u{e9}\u{ff}").unwrap(), b"\xe9\xff");
        let e = l.to_client("a\u{20ac}").unwrap_err();
        assert_eq!(
            e.to_string(),
            "character with byte sequence 0xe2 0x82 0xac in encoding \"UTF8\" has no \
             equivalent in encoding \"LATIN1\""
        );
        assert_eq!(PgError::from(e).code, SqlState("22P05"));
        let l5 = enc(PgEncoding::Latin5);
        assert_eq!(l5.to_server(b"\xd0\xe9").unwrap(), "\u{11e}\u{e9}");
        assert_eq!(&*l5.to_client("\u{131}\u{e9}").unwrap(), b"\xfd\xe9");
        assert!(l5.to_client("\u{fd}").is_err());
    }

    #[test]
    fn windows_and_cjk() {
        let w = enc(PgEncoding::Win1252);
        assert_eq!(w.to_server(b"\x80").unwrap(), "\u{20ac}");
        assert_eq!(&*w.to_client("\u{20ac}").unwrap(), b"\x80");
        assert_eq!(
            message(w.to_server(b"a\x81b")),
            "character with byte sequence 0x81 in encoding \"WIN1252\" has no equivalent \
             in encoding \"UTF8\""
        );
        assert!(w.to_client("\u{81}").is_err());
        let j = enc(PgEncoding::EucJp);
        assert_eq!(
            j.to_server(b"\xa4\xb3\xa4\xf3").unwrap(),
            "\u{3053}\u{3093}"
        );
        assert_eq!(
            &*j.to_client("\u{3053}\u{3093}").unwrap(),
            b"\xa4\xb3\xa4\xf3"
        );
        assert_eq!(
            message(j.to_server(b"x\xa4 y")),
            "invalid byte sequence for encoding \"EUC_JP\": 0xa4 0x20"
        );
        assert_eq!(
            message(j.to_server(b"x\xff\xff")),
            "invalid byte sequence for encoding \"EUC_JP\": 0xff 0xff"
        );
        let s = enc(PgEncoding::Sjis);
        assert_eq!(s.to_server(b"\x82\xa0\xb1").unwrap(), "\u{3042}\u{ff71}");
        assert_eq!(
            message(s.to_server(b"x\xa0'")),
            "invalid byte sequence for encoding \"SJIS\": 0xa0 0x27"
        );
        let k = enc(PgEncoding::EucKr);
        assert_eq!(k.to_server(b"\xb0\xa1").unwrap(), "\u{ac00}");
        assert!(k.to_server(b"\x81\x41").is_err());
        assert!(enc(PgEncoding::Uhc).to_server(b"\x81\x41").is_ok());
        assert!(k.to_client("\u{ac02}").is_err());
        assert_eq!(
            PgError::from(ClientEncoding::new(PgEncoding::MuleInternal).unwrap_err()).code,
            SqlState::FEATURE_NOT_SUPPORTED
        );
    }

    #[test]
    fn pieces_split_inside_a_character() {
        let mut d = Decoder::new(enc(PgEncoding::EucJp));
        let mut out = String::new();
        d.decode(b"a\xa4", false, &mut out).unwrap();
        d.decode(b"\xb3b", true, &mut out).unwrap();
        assert_eq!(out, "a\u{3053}b");
        let mut d = Decoder::new(enc(PgEncoding::EucKr));
        let mut out = String::new();
        d.decode(b"\xb0", false, &mut out).unwrap();
        d.decode(b"\xa1", true, &mut out).unwrap();
        assert_eq!(out, "\u{ac00}");
    }

    #[test]
    fn lossy_output() {
        let l = enc(PgEncoding::Latin1);
        assert_eq!(&*l.to_client_lossy("\u{e9}\u{20ac}"), b"\xe9?");
    }
}
