//! `bytea`: binary strings (PostgreSQL's varlena.c byteain/byteaout and
//! encode.c). Values are `Value::Bytea`; they compare as memcmp, then by
//! length (which is the order of Rust's byte slices).

use common::{PgError, PgResult, SqlState};

/// How bytea values print (the `bytea_output` setting).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ByteaOutput {
    /// `\x` followed by two lower-case hex digits a byte.
    #[default]
    Hex,
    /// Printable ASCII as is, `\\` for a backslash, `\ooo` octal for the rest.
    Escape,
}

impl ByteaOutput {
    /// The setting's value (`hex` or `escape`, case-insensitive).
    pub fn parse(setting: &str) -> Option<ByteaOutput> {
        if setting.eq_ignore_ascii_case("hex") {
            Some(ByteaOutput::Hex)
        } else if setting.eq_ignore_ascii_case("escape") {
            Some(ByteaOutput::Escape)
        } else {
            None
        }
    }
}

fn invalid_parameter(msg: impl Into<String>) -> PgError {
    PgError::new(SqlState::INVALID_PARAMETER_VALUE, msg)
}

fn invalid_syntax() -> PgError {
    PgError::new(
        SqlState::INVALID_TEXT_REPRESENTATION,
        "invalid input syntax for type bytea",
    )
}

/// The character starting at byte `at` of `s`, whole (for messages quoting one).
fn char_at(s: &str, at: usize) -> &str {
    let end = (at + 1..=s.len())
        .find(|e| s.is_char_boundary(*e))
        .unwrap_or(s.len());
    &s[at..end]
}

fn hex_value(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

/// Hex digits to bytes; blanks may separate the pairs (encode.c's hex_decode).
pub fn hex_decode(s: &str) -> PgResult<Vec<u8>> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len() / 2);
    let digit = |at: usize| {
        hex_value(b[at]).ok_or_else(|| {
            invalid_parameter(format!("invalid hexadecimal digit: \"{}\"", char_at(s, at)))
        })
    };
    let mut i = 0;
    while i < b.len() {
        if matches!(b[i], b' ' | b'\n' | b'\t' | b'\r') {
            i += 1;
            continue;
        }
        let high = digit(i)?;
        if i + 1 >= b.len() {
            return Err(invalid_parameter(
                "invalid hexadecimal data: odd number of digits",
            ));
        }
        let low = digit(i + 1)?;
        out.push(high << 4 | low);
        i += 2;
    }
    Ok(out)
}

/// Appends the lower-case hex digits of `bytes`.
pub fn hex_encode(bytes: &[u8], out: &mut String) {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    out.reserve(bytes.len() * 2);
    for b in bytes {
        out.push(DIGITS[(b >> 4) as usize] as char);
        out.push(DIGITS[(b & 15) as usize] as char);
    }
}

fn is_octal(b: Option<&u8>, max: u8) -> bool {
    b.is_some_and(|b| (b'0'..=max).contains(b))
}

/// The escape format's input: `\\` is a backslash, `\ooo` (first digit 0-3)
/// an octal byte, any other backslash an error; other bytes stand for
/// themselves (byteain's and decode(..., 'escape')'s rules).
fn escape_decode(s: &str) -> PgResult<Vec<u8>> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'\\' {
            out.push(b[i]);
            i += 1;
        } else if b.get(i + 1) == Some(&b'\\') {
            out.push(b'\\');
            i += 2;
        } else if is_octal(b.get(i + 1), b'3')
            && is_octal(b.get(i + 2), b'7')
            && is_octal(b.get(i + 3), b'7')
        {
            out.push((b[i + 1] - b'0') << 6 | (b[i + 2] - b'0') << 3 | (b[i + 3] - b'0'));
            i += 4;
        } else {
            return Err(invalid_syntax());
        }
    }
    Ok(out)
}

fn push_octal(b: u8, out: &mut String) {
    out.push('\\');
    out.push((b'0' + (b >> 6)) as char);
    out.push((b'0' + ((b >> 3) & 7)) as char);
    out.push((b'0' + (b & 7)) as char);
}

/// byteain: `\x` hex, or the escape format.
pub fn parse(s: &str) -> PgResult<Vec<u8>> {
    match s.strip_prefix("\\x") {
        Some(hex) => hex_decode(hex),
        None => escape_decode(s),
    }
}

/// byteaout in the given style.
pub fn format(bytes: &[u8], style: ByteaOutput, out: &mut String) {
    match style {
        ByteaOutput::Hex => {
            out.push_str("\\x");
            hex_encode(bytes, out);
        }
        ByteaOutput::Escape => {
            for &b in bytes {
                match b {
                    b'\\' => out.push_str("\\\\"),
                    0x20..=0x7e => out.push(b as char),
                    _ => push_octal(b, out),
                }
            }
        }
    }
}

const BASE64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
/// encode(..., 'base64') breaks its output into lines this long.
const BASE64_LINE: usize = 76;

fn base64_encode(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4 + bytes.len() / 57 + 1);
    let mut line_end = BASE64_LINE;
    for chunk in bytes.chunks(3) {
        let n = chunk.len();
        let buf = (chunk[0] as u32) << 16
            | (chunk.get(1).copied().unwrap_or(0) as u32) << 8
            | chunk.get(2).copied().unwrap_or(0) as u32;
        out.push(BASE64[(buf >> 18) as usize & 63] as char);
        out.push(BASE64[(buf >> 12) as usize & 63] as char);
        out.push(if n > 1 {
            BASE64[(buf >> 6) as usize & 63] as char
        } else {
            '='
        });
        out.push(if n > 2 {
            BASE64[buf as usize & 63] as char
        } else {
            '='
        });
        // PostgreSQL breaks the line after a full group that reaches the
        // line length, even the last one.
        if n == 3 && out.len() >= line_end {
            out.push('\n');
            line_end = out.len() + BASE64_LINE;
        }
    }
    out
}

fn base64_decode(s: &str) -> PgResult<Vec<u8>> {
    let mut out = Vec::with_capacity(s.len() / 4 * 3);
    let (mut buf, mut pos, mut end) = (0u32, 0, 0);
    for (at, c) in s.bytes().enumerate() {
        if matches!(c, b' ' | b'\t' | b'\n' | b'\r') {
            continue;
        }
        let b = if c == b'=' {
            if end == 0 {
                end = match pos {
                    2 => 1,
                    3 => 2,
                    _ => {
                        return Err(invalid_parameter(
                            "unexpected \"=\" while decoding base64 sequence",
                        ))
                    }
                };
            }
            0
        } else {
            match BASE64.iter().position(|x| *x == c) {
                Some(v) => v as u32,
                None => {
                    return Err(invalid_parameter(format!(
                        "invalid symbol \"{}\" found while decoding base64 sequence",
                        char_at(s, at)
                    )))
                }
            }
        };
        buf = (buf << 6) + b;
        pos += 1;
        if pos == 4 {
            out.push((buf >> 16) as u8);
            if end == 0 || end > 1 {
                out.push((buf >> 8) as u8);
            }
            if end == 0 || end > 2 {
                out.push(buf as u8);
            }
            buf = 0;
            pos = 0;
        }
    }
    if pos != 0 {
        return Err(invalid_parameter("invalid base64 end sequence")
            .with_hint("Input data is missing padding, is truncated, or is otherwise corrupted."));
    }
    Ok(out)
}

fn unrecognized_encoding(format: &str) -> PgError {
    invalid_parameter(format!("unrecognized encoding: \"{format}\""))
}

/// encode(bytea, format): hex, base64 or escape.
pub fn encode(bytes: &[u8], format: &str) -> PgResult<String> {
    Ok(match format.to_ascii_lowercase().as_str() {
        "hex" => {
            let mut s = String::new();
            hex_encode(bytes, &mut s);
            s
        }
        "base64" => base64_encode(bytes),
        "escape" => {
            let mut s = String::with_capacity(bytes.len());
            for &b in bytes {
                match b {
                    b'\\' => s.push_str("\\\\"),
                    0 | 0x80..=0xff => push_octal(b, &mut s),
                    _ => s.push(b as char),
                }
            }
            s
        }
        _ => return Err(unrecognized_encoding(format)),
    })
}

/// decode(text, format): the inverse of `encode`.
pub fn decode(s: &str, format: &str) -> PgResult<Vec<u8>> {
    match format.to_ascii_lowercase().as_str() {
        "hex" => hex_decode(s),
        "base64" => base64_decode(s),
        "escape" => escape_decode(s),
        _ => Err(unrecognized_encoding(format)),
    }
}

/// Whether an encoding name (as convert_to/convert_from take it) is UTF-8,
/// or its ASCII subset; the only server encoding here.
pub fn is_utf8_name(name: &str) -> bool {
    let n: String = name
        .chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .map(|c| c.to_ascii_uppercase())
        .collect();
    matches!(n.as_str(), "UTF8" | "UNICODE" | "SQLASCII")
}

/// Whether `name` is an encoding PostgreSQL knows but we cannot convert.
pub fn is_other_encoding_name(name: &str) -> bool {
    let n: String = name
        .chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .map(|c| c.to_ascii_uppercase())
        .collect();
    n.starts_with("LATIN")
        || n.starts_with("WIN")
        || n.starts_with("ISO8859")
        || n.starts_with("EUC")
        || n.starts_with("KOI8")
        || matches!(
            n.as_str(),
            "SJIS" | "BIG5" | "GBK" | "UHC" | "GB18030" | "JOHAB" | "MULEINTERNAL" | "SHIFTJIS2004"
        )
}

/// UTF-8 bytes as a string, with PostgreSQL's 22021 for invalid input.
pub fn utf8_text(bytes: &[u8]) -> PgResult<&str> {
    crate::io::utf8_text(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn out(bytes: &[u8], style: ByteaOutput) -> String {
        let mut s = String::new();
        format(bytes, style, &mut s);
        s
    }

    #[test]
    fn text_io() {
        assert_eq!(parse("\\x01 ff\n0A").unwrap(), vec![1, 0xff, 10]);
        assert_eq!(parse("a\\000b\\\\").unwrap(), b"a\0b\\".to_vec());
        assert_eq!(parse("").unwrap(), Vec::<u8>::new());
        assert_eq!(
            parse("\\x0g").unwrap_err().message,
            "invalid hexadecimal digit: \"g\""
        );
        assert_eq!(
            parse("\\x é").unwrap_err().message,
            "invalid hexadecimal digit: \"é\""
        );
        assert_eq!(
            parse("\\x012").unwrap_err().message,
            "invalid hexadecimal data: odd number of digits"
        );
        assert_eq!(
            parse("a\\b").unwrap_err().code,
            SqlState::INVALID_TEXT_REPRESENTATION
        );
        assert_eq!(
            parse("\\400").unwrap_err().code,
            SqlState::INVALID_TEXT_REPRESENTATION
        );
        let all: Vec<u8> = (0..=255).collect();
        for style in [ByteaOutput::Hex, ByteaOutput::Escape] {
            assert_eq!(parse(&out(&all, style)).unwrap(), all);
        }
        assert_eq!(out(b"a\\\x01\xff", ByteaOutput::Escape), "a\\\\\\001\\377");
        assert_eq!(out(b"a\\", ByteaOutput::Hex), "\\x615c");
    }

    #[test]
    fn encodings() {
        assert_eq!(
            encode(b"\0\xff\\A\n", "escape").unwrap(),
            "\\000\\377\\\\A\n"
        );
        assert_eq!(encode(b"abcd", "base64").unwrap(), "YWJjZA==");
        assert_eq!(decode("YWJj ZA==", "base64").unwrap(), b"abcd");
        let long = vec![b'a'; 57];
        let enc = encode(&long, "base64").unwrap();
        assert_eq!(enc.len(), 77);
        assert_eq!(decode(&enc, "base64").unwrap(), long);
        assert_eq!(
            decode("aaa", "base64").unwrap_err().message,
            "invalid base64 end sequence"
        );
        assert_eq!(
            decode("a=b=", "base64").unwrap_err().message,
            "unexpected \"=\" while decoding base64 sequence"
        );
        assert_eq!(
            decode("a!", "base64").unwrap_err().message,
            "invalid symbol \"!\" found while decoding base64 sequence"
        );
        assert_eq!(decode("\\\\001\\\\\\\\a", "escape").unwrap(), b"\\001\\\\a");
        assert_eq!(
            encode(b"", "foo").unwrap_err().message,
            "unrecognized encoding: \"foo\""
        );
    }
}
