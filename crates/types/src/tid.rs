//! The system column types: `tid` (a row version's address), `xid` and
//! `cid` (transaction and command ids), with PostgreSQL 15's text forms.
//!
//! A tid is held as an int8 `(block << 16) | offset`, so comparing two
//! held values orders them by block, then offset, as PostgreSQL's tid
//! operators do. xid and cid are held as `Value::Oid`.

use common::{PgError, PgResult, SqlState};

/// The held form of tid (block, offset).
pub fn pack(block: u32, offset: u16) -> i64 {
    ((block as i64) << 16) | offset as i64
}

/// (block, offset) of a held tid.
pub fn unpack(v: i64) -> (u32, u16) {
    ((v >> 16) as u32, (v & 0xffff) as u16)
}

/// Text output: `(block,offset)`.
pub fn format(v: i64, out: &mut String) {
    let (block, offset) = unpack(v);
    out.push('(');
    out.push_str(itoa::Buffer::new().format(block));
    out.push(',');
    out.push_str(itoa::Buffer::new().format(offset));
    out.push(')');
}

fn tid_syntax(s: &str) -> PgError {
    PgError::new(
        SqlState::INVALID_TEXT_REPRESENTATION,
        format!("invalid input syntax for type tid: \"{s}\""),
    )
}

/// Where C's strtol starts reading digits in `b` (after leading
/// whitespace and a sign), and whether the sign was `-`.
fn blanks_and_sign(b: &[u8]) -> (usize, bool) {
    let mut i = 0;
    while i < b.len() && b[i].is_ascii_whitespace() {
        i += 1;
    }
    match b.get(i) {
        Some(b'-') => (i + 1, true),
        Some(b'+') => (i + 1, false),
        _ => (i, false),
    }
}

/// C's strtol/strtoul in base 10 over `b`: leading whitespace, a sign,
/// digits; the value (None on overflow of i128, far past any use) and
/// where it stopped (at the start when there are no digits).
fn strtol10(b: &[u8]) -> (Option<i128>, usize) {
    let (mut i, neg) = blanks_and_sign(b);
    let start = i;
    let mut v: Option<i128> = Some(0);
    while i < b.len() && b[i].is_ascii_digit() {
        v = v
            .and_then(|v| v.checked_mul(10))
            .and_then(|v| v.checked_add((b[i] - b'0') as i128))
            .filter(|v| *v <= u64::MAX as i128);
        i += 1;
    }
    if i == start {
        return (Some(0), 0);
    }
    (v.map(|v| if neg { -v } else { v }), i)
}

/// tidin: `(block,offset)`; text before the `(` and after the `)` is
/// ignored, as PostgreSQL's parser does, but not blanks inside.
pub fn parse(s: &str) -> PgResult<i64> {
    let b = s.as_bytes();
    let mut coords = Vec::with_capacity(2);
    for (i, &c) in b.iter().enumerate() {
        if c == b')' || coords.len() == 2 {
            break;
        }
        if c == b',' || (c == b'(' && coords.is_empty()) {
            coords.push(i + 1);
        }
    }
    if coords.len() < 2 {
        return Err(tid_syntax(s));
    }
    let (block, end) = strtol10(&b[coords[0]..]);
    if b.get(coords[0] + end) != Some(&b',') {
        return Err(tid_syntax(s));
    }
    // strtoul: a negative value wraps; one that fits neither u32 nor i32
    // is refused.
    let block = match block {
        Some(v) if (0..=u32::MAX as i128).contains(&v) => v as u32,
        Some(v) if (i32::MIN as i128..0).contains(&v) => v as i32 as u32,
        _ => return Err(tid_syntax(s)),
    };
    let (offset, end) = strtol10(&b[coords[1]..]);
    if b.get(coords[1] + end) != Some(&b')') {
        return Err(tid_syntax(s));
    }
    match offset {
        Some(o) if (0..=u16::MAX as i128).contains(&o) => Ok(pack(block, o as u16)),
        _ => Err(tid_syntax(s)),
    }
}

/// xidin / cidin (PostgreSQL 15): C's strtoul in base 0 (hex after `0x`,
/// octal after `0`), stopping at the first character it cannot read and
/// never failing; the low 32 bits of the result.
pub fn parse_xid(s: &str) -> u32 {
    let b = s.as_bytes();
    let (mut i, neg) = blanks_and_sign(b);
    let mut radix = 10;
    if b.get(i) == Some(&b'0') {
        if matches!(b.get(i + 1), Some(b'x' | b'X'))
            && b.get(i + 2).is_some_and(|c| c.is_ascii_hexdigit())
        {
            radix = 16;
            i += 2;
        } else {
            radix = 8;
        }
    }
    let mut v: u64 = 0;
    let mut overflow = false;
    while let Some(d) = b.get(i).and_then(|c| (*c as char).to_digit(radix)) {
        match v
            .checked_mul(radix as u64)
            .and_then(|v| v.checked_add(d as u64))
        {
            Some(n) => v = n,
            None => overflow = true,
        }
        i += 1;
    }
    if overflow {
        return u32::MAX;
    }
    (if neg { v.wrapping_neg() } else { v }) as u32
}

/// The 32 bits PostgreSQL would show of one of our 64-bit xids.
pub fn xid_shown(xid: u64) -> u32 {
    xid as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(s: &str) -> PgResult<String> {
        parse(s).map(|v| {
            let mut out = String::new();
            format(v, &mut out);
            out
        })
    }

    #[test]
    fn tid_text_forms() {
        assert_eq!(text("(0,1)").unwrap(), "(0,1)");
        assert_eq!(text(" (0,1) ").unwrap(), "(0,1)");
        assert_eq!(text("(-1,1)").unwrap(), "(4294967295,1)");
        assert_eq!(text("(4294967295,65535)").unwrap(), "(4294967295,65535)");
        for bad in ["x", "( 0 , 1 )", "(1,65536)", "(1,-1)", "(0,1", "0,1)"] {
            let e = text(bad).unwrap_err();
            assert_eq!(e.code, SqlState::INVALID_TEXT_REPRESENTATION, "{bad}");
        }
        assert!(pack(0, 2) < pack(1, 1));
    }

    #[test]
    fn xid_text_forms() {
        assert_eq!(parse_xid("12"), 12);
        assert_eq!(parse_xid("-1"), u32::MAX);
        assert_eq!(parse_xid("-5"), 4294967291);
        assert_eq!(parse_xid("x"), 0);
        assert_eq!(parse_xid("0x10"), 16);
        assert_eq!(parse_xid("010"), 8);
        assert_eq!(parse_xid("12abc"), 12);
    }
}
