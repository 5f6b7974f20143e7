//! String functions. Case mapping is ASCII-only, as PostgreSQL's under the C locale.

use std::fmt::Write as _;

use crate::io;
use crate::{IoSettings, Value};
use common::{PgError, PgResult, SqlState};

/// Text of argument `i` (strings are `Value::Text`).
pub(super) fn text(args: &[Value], i: usize) -> PgResult<&str> {
    match args.get(i) {
        Some(Value::Text(s)) => Ok(s),
        other => Err(PgError::internal(format!(
            "expected text argument, got {other:?}"
        ))),
    }
}

pub(super) fn int(args: &[Value], i: usize) -> PgResult<i64> {
    match args.get(i) {
        Some(Value::Int2(v)) => Ok(*v as i64),
        Some(Value::Int4(v)) => Ok(*v as i64),
        Some(Value::Int8(v)) => Ok(*v),
        other => Err(PgError::internal(format!(
            "expected integer argument, got {other:?}"
        ))),
    }
}

fn char_len(s: &str) -> usize {
    if s.is_ascii() {
        s.len()
    } else {
        s.chars().count()
    }
}

/// Byte offset of character `n` (or the end).
fn byte_at_char(s: &str, n: usize) -> usize {
    if s.is_ascii() {
        return n.min(s.len());
    }
    s.char_indices().nth(n).map_or(s.len(), |(i, _)| i)
}

pub fn length(args: &[Value]) -> PgResult<Value> {
    Ok(Value::Int4(char_len(text(args, 0)?) as i32))
}

pub fn bpchar_length(args: &[Value]) -> PgResult<Value> {
    Ok(Value::Int4(char_len(io::bpchar_trim(text(args, 0)?)) as i32))
}

pub fn octet_length(args: &[Value]) -> PgResult<Value> {
    Ok(Value::Int4(text(args, 0)?.len() as i32))
}

pub fn bit_length(args: &[Value]) -> PgResult<Value> {
    Ok(Value::Int4(text(args, 0)?.len() as i32 * 8))
}

pub fn lower(args: &[Value]) -> PgResult<Value> {
    Ok(Value::Text(text(args, 0)?.to_ascii_lowercase()))
}

pub fn upper(args: &[Value]) -> PgResult<Value> {
    Ok(Value::Text(text(args, 0)?.to_ascii_uppercase()))
}

pub fn initcap(args: &[Value]) -> PgResult<Value> {
    let s = text(args, 0)?;
    let mut out = String::with_capacity(s.len());
    let mut in_word = false;
    for c in s.chars() {
        if in_word {
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c.to_ascii_uppercase());
        }
        in_word = c.is_ascii_alphanumeric();
    }
    Ok(Value::Text(out))
}

/// substr(text, start [, count]) with PostgreSQL's semantics for starts < 1.
pub fn substr(args: &[Value]) -> PgResult<Value> {
    let s = text(args, 0)?;
    let start = int(args, 1)?;
    let end = if args.len() > 2 {
        let len = int(args, 2)?;
        if len < 0 {
            return Err(PgError::new(
                SqlState("22011"),
                "negative substring length not allowed",
            ));
        }
        Some(start.saturating_add(len))
    } else {
        None
    };
    let from = (start.max(1) - 1) as usize;
    let r = match end {
        Some(e) if e <= 1 => "",
        Some(e) => {
            let to = (e - 1) as usize;
            let b0 = byte_at_char(s, from);
            let b1 = byte_at_char(s, to.max(from));
            &s[b0..b1.max(b0)]
        }
        None => &s[byte_at_char(s, from)..],
    };
    Ok(Value::Text(r.to_string()))
}

/// overlay(string placing replacement from start [for count]), in characters.
pub fn overlay(args: &[Value]) -> PgResult<Value> {
    let (s, repl) = (text(args, 0)?, text(args, 1)?);
    let start = int(args, 2)?;
    let count = if args.len() > 3 {
        int(args, 3)?
    } else {
        char_len(repl) as i64
    };
    let head = substr(&[
        Value::Text(s.to_string()),
        Value::Int8(1),
        Value::Int8(start - 1),
    ])?;
    let tail = substr(&[
        Value::Text(s.to_string()),
        Value::Int8(start.saturating_add(count)),
    ])?;
    let (Value::Text(head), Value::Text(tail)) = (head, tail) else {
        return Err(PgError::internal("substr returned a non-text value"));
    };
    Ok(Value::Text(head + repl + &tail))
}

fn strpos_in(s: &str, sub: &str) -> i32 {
    match memchr::memmem::find(s.as_bytes(), sub.as_bytes()) {
        Some(b) => (char_len(&s[..b]) + 1) as i32,
        None => 0,
    }
}

pub fn strpos(args: &[Value]) -> PgResult<Value> {
    Ok(Value::Int4(strpos_in(text(args, 0)?, text(args, 1)?)))
}

/// position(string, substring): the function behind `position(sub IN string)`.
pub fn position(args: &[Value]) -> PgResult<Value> {
    strpos(args)
}

fn trim_impl(args: &[Value], left: bool, right: bool) -> PgResult<Value> {
    let s = text(args, 0)?;
    let set = if args.len() > 1 { text(args, 1)? } else { " " };
    let in_set = |c: char| set.contains(c);
    let mut r = s;
    if left {
        r = r.trim_start_matches(in_set);
    }
    if right {
        r = r.trim_end_matches(in_set);
    }
    Ok(Value::Text(r.to_string()))
}

pub fn btrim(args: &[Value]) -> PgResult<Value> {
    trim_impl(args, true, true)
}

pub fn ltrim(args: &[Value]) -> PgResult<Value> {
    trim_impl(args, true, false)
}

pub fn rtrim(args: &[Value]) -> PgResult<Value> {
    trim_impl(args, false, true)
}

fn pad(args: &[Value], left: bool) -> PgResult<Value> {
    let s = text(args, 0)?;
    let len = int(args, 1)?.max(0) as usize;
    let fill = if args.len() > 2 { text(args, 2)? } else { " " };
    let slen = char_len(s);
    if slen >= len {
        return Ok(Value::Text(s[..byte_at_char(s, len)].to_string()));
    }
    if fill.is_empty() {
        return Ok(Value::Text(s.to_string()));
    }
    check_length(len.saturating_mul(4))?;
    let mut padding = String::with_capacity(len - slen);
    for c in fill.chars().cycle().take(len - slen) {
        padding.push(c);
    }
    Ok(Value::Text(if left {
        padding + s
    } else {
        let mut r = s.to_string();
        r.push_str(&padding);
        r
    }))
}

pub fn lpad(args: &[Value]) -> PgResult<Value> {
    pad(args, true)
}

pub fn rpad(args: &[Value]) -> PgResult<Value> {
    pad(args, false)
}

pub fn replace(args: &[Value]) -> PgResult<Value> {
    let s = text(args, 0)?;
    let from = text(args, 1)?;
    let to = text(args, 2)?;
    if from.is_empty() {
        return Ok(Value::Text(s.to_string()));
    }
    Ok(Value::Text(s.replace(from, to)))
}

pub fn translate(args: &[Value]) -> PgResult<Value> {
    let s = text(args, 0)?;
    let from: Vec<char> = text(args, 1)?.chars().collect();
    let to: Vec<char> = text(args, 2)?.chars().collect();
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match from.iter().position(|f| *f == c) {
            Some(i) => {
                if let Some(t) = to.get(i) {
                    out.push(*t);
                }
            }
            None => out.push(c),
        }
    }
    Ok(Value::Text(out))
}

fn push_value(out: &mut String, v: &Value, settings: &IoSettings) {
    match v {
        Value::Text(s) => out.push_str(s),
        Value::Null => {}
        other => io::format_text(
            other,
            other.type_id().unwrap_or(crate::TypeId::Text),
            settings,
            out,
        ),
    }
}

/// concat(VARIADIC "any"): NULLs are skipped.
pub fn concat(args: &[Value], settings: &IoSettings) -> PgResult<Value> {
    let mut out = String::new();
    for a in args {
        push_value(&mut out, a, settings);
    }
    Ok(Value::Text(out))
}

/// concat_ws(sep, VARIADIC "any"): NULL separator gives NULL; NULL args skipped.
pub fn concat_ws(args: &[Value], settings: &IoSettings) -> PgResult<Value> {
    let sep = match args.first() {
        Some(Value::Null) | None => return Ok(Value::Null),
        Some(_) => text(args, 0)?,
    };
    let mut out = String::new();
    let mut first = true;
    for a in &args[1..] {
        if a.is_null() {
            continue;
        }
        if !first {
            out.push_str(sep);
        }
        first = false;
        push_value(&mut out, a, settings);
    }
    Ok(Value::Text(out))
}

pub fn left(args: &[Value]) -> PgResult<Value> {
    let s = text(args, 0)?;
    let n = int(args, 1)?;
    let len = char_len(s) as i64;
    let take = if n >= 0 { n.min(len) } else { (len + n).max(0) };
    Ok(Value::Text(s[..byte_at_char(s, take as usize)].to_string()))
}

pub fn right(args: &[Value]) -> PgResult<Value> {
    let s = text(args, 0)?;
    let n = int(args, 1)?;
    let len = char_len(s) as i64;
    let skip = if n >= 0 {
        (len - n).max(0)
    } else {
        (-n).min(len)
    };
    Ok(Value::Text(s[byte_at_char(s, skip as usize)..].to_string()))
}

fn check_length(bytes: usize) -> PgResult<()> {
    if bytes > (1 << 30) - 1 {
        return Err(PgError::new(
            SqlState::PROGRAM_LIMIT_EXCEEDED,
            "requested length too large",
        ));
    }
    Ok(())
}

pub fn repeat(args: &[Value]) -> PgResult<Value> {
    let s = text(args, 0)?;
    let n = int(args, 1)?;
    if n <= 0 {
        return Ok(Value::Text(String::new()));
    }
    check_length(s.len().saturating_mul(n as usize))?;
    Ok(Value::Text(s.repeat(n as usize)))
}

pub fn reverse(args: &[Value]) -> PgResult<Value> {
    Ok(Value::Text(text(args, 0)?.chars().rev().collect()))
}

pub fn split_part(args: &[Value]) -> PgResult<Value> {
    let s = text(args, 0)?;
    let delim = text(args, 1)?;
    let n = int(args, 2)?;
    if n == 0 {
        return Err(PgError::new(
            SqlState::INVALID_PARAMETER_VALUE,
            "field position must not be zero",
        ));
    }
    if s.is_empty() {
        return Ok(Value::Text(String::new()));
    }
    if delim.is_empty() {
        return Ok(Value::Text(if n == 1 || n == -1 {
            s.to_string()
        } else {
            String::new()
        }));
    }
    let part = if n > 0 {
        s.split(delim).nth((n - 1) as usize)
    } else {
        s.rsplit(delim).nth((-n - 1) as usize)
    };
    Ok(Value::Text(part.unwrap_or("").to_string()))
}

pub fn md5(args: &[Value]) -> PgResult<Value> {
    use md5::Digest;
    let digest = md5::Md5::digest(text(args, 0)?.as_bytes());
    let mut out = String::with_capacity(32);
    for b in digest.iter() {
        let _ = write!(out, "{b:02x}");
    }
    Ok(Value::Text(out))
}

pub fn chr(args: &[Value]) -> PgResult<Value> {
    let n = int(args, 0)?;
    if n == 0 {
        return Err(PgError::new(
            SqlState::PROGRAM_LIMIT_EXCEEDED,
            "null character not permitted",
        ));
    }
    if n < 0 {
        return Err(PgError::new(
            SqlState::INVALID_PARAMETER_VALUE,
            "character number must be positive",
        ));
    }
    if n > 0x10FFFF {
        return Err(PgError::new(
            SqlState::PROGRAM_LIMIT_EXCEEDED,
            format!("requested character too large for encoding: {n}"),
        ));
    }
    match char::from_u32(n as u32) {
        Some(c) => Ok(Value::Text(c.to_string())),
        None => Err(PgError::new(
            SqlState::PROGRAM_LIMIT_EXCEEDED,
            format!("requested character not valid for encoding: {n}"),
        )),
    }
}

pub fn ascii(args: &[Value]) -> PgResult<Value> {
    Ok(Value::Int4(
        text(args, 0)?.chars().next().map_or(0, |c| c as i32),
    ))
}

pub fn to_hex(args: &[Value]) -> PgResult<Value> {
    Ok(Value::Text(match args.first() {
        Some(Value::Int8(v)) => format!("{:x}", *v as u64),
        _ => format!("{:x}", int(args, 0)? as i32 as u32),
    }))
}

pub fn starts_with(args: &[Value]) -> PgResult<Value> {
    Ok(Value::Bool(text(args, 0)?.starts_with(text(args, 1)?)))
}

fn regex_match(args: &[Value], case_insensitive: bool) -> PgResult<bool> {
    super::regexp::regex_is_match(text(args, 0)?, text(args, 1)?, case_insensitive)
}

/// `text ~ pattern` (PostgreSQL's textregexeq); see `regexp.rs` for how
/// patterns are read.
pub fn regex_eq(args: &[Value]) -> PgResult<Value> {
    Ok(Value::Bool(regex_match(args, false)?))
}

pub fn regex_ne(args: &[Value]) -> PgResult<Value> {
    Ok(Value::Bool(!regex_match(args, false)?))
}

pub fn iregex_eq(args: &[Value]) -> PgResult<Value> {
    Ok(Value::Bool(regex_match(args, true)?))
}

pub fn iregex_ne(args: &[Value]) -> PgResult<Value> {
    Ok(Value::Bool(!regex_match(args, true)?))
}
