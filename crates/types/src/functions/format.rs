//! format() (PostgreSQL's text_format), quote_literal and quote_nullable,
//! num_nulls and num_nonnulls, unistr. Their `"any"` arguments arrive as text (the
//! caller casts them, see `accepts_any`); a NULL stays NULL.

use common::{PgError, PgResult, SqlState};

use super::{f, nonstrict, BuiltinFunction};
use crate::{TypeId, Value};

use TypeId::{Int4, Text};

pub(super) static BUILTINS: &[BuiltinFunction] = &[
    BuiltinFunction {
        variadic: true,
        ..nonstrict(f("format", &[Text, Text], Text, format))
    },
    nonstrict(f("format", &[Text], Text, format)),
    f("quote_literal", &[Text], Text, quote_literal),
    nonstrict(f("quote_nullable", &[Text], Text, quote_nullable)),
    BuiltinFunction {
        variadic: true,
        ..nonstrict(f("num_nulls", &[Text], Int4, num_nulls))
    },
    BuiltinFunction {
        variadic: true,
        ..nonstrict(f("num_nonnulls", &[Text], Int4, num_nonnulls))
    },
    f("unistr", &[Text], Text, unistr),
];

fn format_error(message: impl Into<String>) -> PgError {
    PgError::new(SqlState::INVALID_PARAMETER_VALUE, message)
}

/// A string as an SQL literal: quotes doubled, and with backslashes doubled
/// under an `E` prefix when there are any.
fn literal(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 3);
    if s.contains('\\') {
        out.push('E');
    }
    out.push('\'');
    for c in s.chars() {
        if c == '\'' || c == '\\' {
            out.push(c);
        }
        out.push(c);
    }
    out.push('\'');
    out
}

fn quote_literal(args: &[Value]) -> PgResult<Value> {
    Ok(Value::Text(literal(super::string::text(args, 0)?)))
}

fn quote_nullable(args: &[Value]) -> PgResult<Value> {
    Ok(Value::Text(match &args[0] {
        Value::Text(s) => literal(s),
        _ => "NULL".to_string(),
    }))
}

fn num_nulls(args: &[Value]) -> PgResult<Value> {
    Ok(Value::Int4(
        args.iter().filter(|v| v.is_null()).count() as i32
    ))
}

fn num_nonnulls(args: &[Value]) -> PgResult<Value> {
    Ok(Value::Int4(
        args.iter().filter(|v| !v.is_null()).count() as i32
    ))
}

/// Reads a decimal number at the front of `chars`.
fn read_number(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) -> PgResult<Option<usize>> {
    let mut n: Option<usize> = None;
    while let Some(d) = chars.peek().and_then(|c| c.to_digit(10)) {
        chars.next();
        n = Some(
            n.unwrap_or(0)
                .checked_mul(10)
                .and_then(|x| x.checked_add(d as usize))
                .filter(|x| *x <= i32::MAX as usize)
                .ok_or_else(|| format_error("number is out of range"))?,
        );
    }
    Ok(n)
}

/// format(formatstr, args...): `%s`, `%I`, `%L` and `%%`, with an optional
/// argument position `n$` and width (`-` to left-align, `*` or `*n$` to
/// take it from an argument).
fn format(args: &[Value]) -> PgResult<Value> {
    let fmt = match args.first() {
        Some(Value::Text(s)) => s.as_str(),
        _ => return Ok(Value::Null),
    };
    let values = &args[1..];
    let arg_text = |i: usize| -> PgResult<Option<&str>> {
        match values.get(i) {
            None => Err(format_error("too few arguments for format()")),
            Some(Value::Text(s)) => Ok(Some(s.as_str())),
            Some(_) => Ok(None),
        }
    };
    let mut out = String::with_capacity(fmt.len());
    let mut next_arg = 0usize;
    let mut chars = fmt.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        if chars.peek() == Some(&'%') {
            chars.next();
            out.push('%');
            continue;
        }
        // [n$][flags][width][type]
        let mut position = None;
        let mut left = false;
        let mut width: Option<i64> = None;
        let n = read_number(&mut chars)?;
        if chars.peek() == Some(&'$') {
            chars.next();
            position = Some(n.filter(|n| *n > 0).ok_or_else(|| {
                format_error("format specifies argument 0, but arguments are numbered from 1")
            })?);
        } else if let Some(n) = n {
            width = Some(n as i64);
        }
        if width.is_none() {
            while chars.peek() == Some(&'-') {
                chars.next();
                left = true;
            }
            if chars.peek() == Some(&'*') {
                chars.next();
                let n = read_number(&mut chars)?;
                let index = if chars.peek() == Some(&'$') {
                    chars.next();
                    let index = n.filter(|n| *n > 0).ok_or_else(|| {
                        format_error(
                            "format specifies argument 0, but arguments are numbered from 1",
                        )
                    })? - 1;
                    // A value without a position follows its width's argument.
                    next_arg = index + 1;
                    index
                } else {
                    let i = next_arg;
                    next_arg += 1;
                    i
                };
                width = Some(match values.get(index) {
                    None => return Err(format_error("too few arguments for format()")),
                    Some(Value::Text(s)) => s.trim().parse::<i64>().map_err(|_| {
                        format_error(format!("invalid input syntax for type integer: \"{s}\""))
                    })?,
                    Some(_) => 0,
                });
            } else if let Some(n) = read_number(&mut chars)? {
                width = Some(n as i64);
            }
        }
        let Some(kind) = chars.next() else {
            return Err(format_error("unterminated format() type specifier")
                .with_hint("For a single \"%\" use \"%%\"."));
        };
        if !matches!(kind, 's' | 'I' | 'L') {
            return Err(
                format_error(format!("unrecognized format() type specifier \"{kind}\""))
                    .with_hint("For a single \"%\" use \"%%\"."),
            );
        }
        let index = match position {
            Some(p) => p - 1,
            None => next_arg,
        };
        next_arg = index + 1;
        let value = arg_text(index)?;
        let text = match (kind, value) {
            ('s', Some(s)) => s.to_string(),
            ('s', None) => String::new(),
            ('I', Some(s)) => super::catalog::quote_ident_text(s),
            ('I', None) => {
                return Err(PgError::new(
                    SqlState::NULL_VALUE_NOT_ALLOWED,
                    "null values cannot be formatted as an SQL identifier",
                ))
            }
            (_, Some(s)) => literal(s),
            (_, None) => "NULL".to_string(),
        };
        match width {
            Some(w) if w != 0 => {
                let pad = (w.unsigned_abs() as usize).saturating_sub(text.chars().count());
                if left || w < 0 {
                    out.push_str(&text);
                    out.extend(std::iter::repeat_n(' ', pad));
                } else {
                    out.extend(std::iter::repeat_n(' ', pad));
                    out.push_str(&text);
                }
            }
            _ => out.push_str(&text),
        }
    }
    Ok(Value::Text(out))
}

fn bad_escape() -> PgError {
    PgError::new(SqlState::SYNTAX_ERROR, "invalid Unicode escape")
        .with_hint("Unicode escapes must be \\XXXX, \\+XXXXXX, \\uXXXX, or \\UXXXXXXXX.")
}

/// unistr(text): `\XXXX`, `\+XXXXXX`, `\uXXXX` and `\UXXXXXXXX` escapes
/// decoded (UTF-16 surrogate pairs joined), `\\` a backslash.
fn unistr(args: &[Value]) -> PgResult<Value> {
    let s = super::string::text(args, 0)?;
    let chars: Vec<char> = s.chars().collect();
    let mut out = String::with_capacity(s.len());
    let mut pending_high: Option<u32> = None;
    let mut i = 0;
    while i < chars.len() {
        if chars[i] != '\\' {
            if pending_high.is_some() {
                return Err(surrogate_error());
            }
            out.push(chars[i]);
            i += 1;
            continue;
        }
        if chars.get(i + 1) == Some(&'\\') {
            if pending_high.is_some() {
                return Err(surrogate_error());
            }
            out.push('\\');
            i += 2;
            continue;
        }
        let (skip, digits) = match chars.get(i + 1) {
            Some('+') => (2, 6),
            Some('u') => (2, 4),
            Some('U') => (2, 8),
            _ => (1, 4),
        };
        let hex: String = chars.iter().skip(i + skip).take(digits).collect();
        if hex.chars().count() != digits || !hex.chars().all(|c| c.is_ascii_hexdigit()) {
            return Err(bad_escape());
        }
        let code = u32::from_str_radix(&hex, 16).map_err(|_| bad_escape())?;
        i += skip + digits;
        match (pending_high.take(), code) {
            (None, 0xD800..=0xDBFF) => pending_high = Some(code),
            (Some(high), 0xDC00..=0xDFFF) => {
                let c = 0x10000 + ((high - 0xD800) << 10) + (code - 0xDC00);
                out.push(char::from_u32(c).ok_or_else(surrogate_error)?);
            }
            (Some(_), _) | (None, 0xDC00..=0xDFFF) => return Err(surrogate_error()),
            (None, c) => match char::from_u32(c).filter(|c| *c != '\0') {
                Some(c) => out.push(c),
                None => {
                    return Err(PgError::new(
                        SqlState::INVALID_PARAMETER_VALUE,
                        format!("invalid Unicode code point: {c:04X}"),
                    ))
                }
            },
        }
    }
    if pending_high.is_some() {
        return Err(surrogate_error());
    }
    Ok(Value::Text(out))
}

fn surrogate_error() -> PgError {
    PgError::new(SqlState::SYNTAX_ERROR, "invalid Unicode surrogate pair")
}
