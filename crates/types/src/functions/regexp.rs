//! The regexp_* functions (PostgreSQL's regexp.c): regexp_replace,
//! regexp_match, regexp_split_to_array, regexp_count, regexp_instr,
//! regexp_substr and regexp_like, and the `~` operators' matching.
//!
//! Patterns are read by the `regex` crate configured as PostgreSQL's
//! advanced regular expressions behave by default: `.` and bracket
//! expressions match a newline, `^` and `$` anchor the whole string; the
//! flags string switches these as PostgreSQL's does. Back-references are
//! not supported (the crate has none). Positions are in characters, from 1.

use std::rc::Rc;

use common::{PgError, PgResult, SqlState};
use regex::{Captures, Regex, RegexBuilder};

use super::string::{int, text};
use super::{f, BuiltinFunction};
use crate::array::ArrayValue;
use crate::{TypeId, Value};

use TypeId::{Bool, Int4, Text, TextArray};

pub(super) static BUILTINS: &[BuiltinFunction] = &[
    f("regexp_replace", &[Text, Text, Text], Text, regexp_replace),
    f(
        "regexp_replace",
        &[Text, Text, Text, Text],
        Text,
        regexp_replace,
    ),
    f(
        "regexp_replace",
        &[Text, Text, Text, Int4],
        Text,
        regexp_replace_from,
    ),
    f(
        "regexp_replace",
        &[Text, Text, Text, Int4, Int4],
        Text,
        regexp_replace_from,
    ),
    f(
        "regexp_replace",
        &[Text, Text, Text, Int4, Int4, Text],
        Text,
        regexp_replace_from,
    ),
    f("regexp_match", &[Text, Text], TextArray, regexp_match),
    f("regexp_match", &[Text, Text, Text], TextArray, regexp_match),
    f(
        "regexp_split_to_array",
        &[Text, Text],
        TextArray,
        regexp_split_to_array,
    ),
    f(
        "regexp_split_to_array",
        &[Text, Text, Text],
        TextArray,
        regexp_split_to_array,
    ),
    f("regexp_count", &[Text, Text], Int4, regexp_count),
    f("regexp_count", &[Text, Text, Int4], Int4, regexp_count),
    f(
        "regexp_count",
        &[Text, Text, Int4, Text],
        Int4,
        regexp_count,
    ),
    f("regexp_instr", &[Text, Text], Int4, regexp_instr),
    f("regexp_instr", &[Text, Text, Int4], Int4, regexp_instr),
    f(
        "regexp_instr",
        &[Text, Text, Int4, Int4],
        Int4,
        regexp_instr,
    ),
    f(
        "regexp_instr",
        &[Text, Text, Int4, Int4, Int4],
        Int4,
        regexp_instr,
    ),
    f(
        "regexp_instr",
        &[Text, Text, Int4, Int4, Int4, Text],
        Int4,
        regexp_instr,
    ),
    f(
        "regexp_instr",
        &[Text, Text, Int4, Int4, Int4, Text, Int4],
        Int4,
        regexp_instr,
    ),
    f("regexp_substr", &[Text, Text], Text, regexp_substr),
    f("regexp_substr", &[Text, Text, Int4], Text, regexp_substr),
    f(
        "regexp_substr",
        &[Text, Text, Int4, Int4],
        Text,
        regexp_substr,
    ),
    f(
        "regexp_substr",
        &[Text, Text, Int4, Int4, Text],
        Text,
        regexp_substr,
    ),
    f(
        "regexp_substr",
        &[Text, Text, Int4, Int4, Text, Int4],
        Text,
        regexp_substr,
    ),
    f("regexp_like", &[Text, Text], Bool, regexp_like),
    f("regexp_like", &[Text, Text, Text], Bool, regexp_like),
];

/// What a flags string asks for.
#[derive(Clone, Copy, PartialEq, Eq, Default)]
struct Flags {
    global: bool,
    case_insensitive: bool,
    /// `.` does not match a newline (flags n, p).
    dot_stops_at_newline: bool,
    /// `^` and `$` match at line boundaries (flags n, w).
    line_anchors: bool,
    expanded: bool,
    literal: bool,
}

impl Flags {
    fn parse(flags: &str) -> PgResult<Flags> {
        let mut f = Flags::default();
        for c in flags.chars() {
            match c {
                'g' => f.global = true,
                'i' => f.case_insensitive = true,
                'c' => f.case_insensitive = false,
                'n' | 'm' => {
                    f.dot_stops_at_newline = true;
                    f.line_anchors = true;
                }
                's' => {
                    f.dot_stops_at_newline = false;
                    f.line_anchors = false;
                }
                'p' => {
                    f.dot_stops_at_newline = true;
                    f.line_anchors = false;
                }
                'w' => {
                    f.dot_stops_at_newline = false;
                    f.line_anchors = true;
                }
                'x' => f.expanded = true,
                't' => f.expanded = false,
                'q' => f.literal = true,
                other => {
                    return Err(PgError::new(
                        SqlState::INVALID_PARAMETER_VALUE,
                        format!("invalid regular expression option: \"{other}\""),
                    ))
                }
            }
        }
        Ok(f)
    }

    /// The flags of a function that has no global mode.
    fn parse_not_global(flags: &str, function: &str) -> PgResult<Flags> {
        let f = Flags::parse(flags)?;
        if f.global {
            let e = PgError::new(
                SqlState::INVALID_PARAMETER_VALUE,
                format!("{function}() does not support the \"global\" option"),
            );
            return Err(if function == "regexp_match" {
                e.with_hint("Use the regexp_matches function instead.")
            } else {
                e
            });
        }
        Ok(f)
    }
}

thread_local! {
    /// Compiled patterns of this thread's recent calls: a query applies the
    /// same pattern to row after row.
    /// Shared by `Rc`, not cloned: a cloned `Regex` starts with empty
    /// search caches, which every row would then pay to fill.
    static CACHE: std::cell::RefCell<Vec<(String, Flags, Rc<Regex>)>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

const CACHE_SIZE: usize = 32;

/// `pattern` compiled with `flags` (the global flag does not matter here).
fn compile(pattern: &str, flags: Flags) -> PgResult<Rc<Regex>> {
    let key = Flags {
        global: false,
        ..flags
    };
    CACHE.with(|cache| {
        let mut cache = cache.borrow_mut();
        if let Some((_, _, re)) = cache.iter().find(|(p, f, _)| p == pattern && *f == key) {
            return Ok(Rc::clone(re));
        }
        let source = if key.literal {
            regex::escape(pattern)
        } else {
            pattern.to_string()
        };
        let re = Rc::new(
            RegexBuilder::new(&source)
                .case_insensitive(key.case_insensitive)
                .dot_matches_new_line(!key.dot_stops_at_newline)
                .multi_line(key.line_anchors)
                .ignore_whitespace(key.expanded)
                .build()
                .map_err(|e| {
                    PgError::new(
                        SqlState::INVALID_REGULAR_EXPRESSION,
                        format!("invalid regular expression: {}", first_line(&e.to_string())),
                    )
                })?,
        );
        if cache.len() >= CACHE_SIZE {
            cache.remove(0);
        }
        cache.push((pattern.to_string(), key, Rc::clone(&re)));
        Ok(re)
    })
}

fn first_line(s: &str) -> &str {
    s.lines()
        .rfind(|l| l.starts_with("error:"))
        .map_or(s, |l| l.trim_start_matches("error:").trim())
}

/// `text ~ pattern` and `~*` (textregexeq, texticregexeq).
pub fn regex_is_match(s: &str, pattern: &str, case_insensitive: bool) -> PgResult<bool> {
    let flags = Flags {
        case_insensitive,
        ..Flags::default()
    };
    Ok(compile(pattern, flags)?.is_match(s))
}

fn optional_text(args: &[Value], i: usize) -> PgResult<&str> {
    if args.len() > i {
        text(args, i)
    } else {
        Ok("")
    }
}

fn parameter_error(name: &str, value: i64) -> PgError {
    PgError::new(
        SqlState::INVALID_PARAMETER_VALUE,
        format!("invalid value for parameter \"{name}\": {value}"),
    )
}

/// The byte offset of 1-based character position `start` (past the end:
/// the string's length).
fn start_offset(s: &str, start: i64) -> PgResult<usize> {
    if start <= 0 {
        return Err(parameter_error("start", start));
    }
    Ok(s.char_indices()
        .nth((start - 1) as usize)
        .map_or(s.len(), |(i, _)| i))
}

fn char_position(s: &str, byte: usize) -> i64 {
    s[..byte].chars().count() as i64 + 1
}

/// Appends `replacement` for one match: `\1`..`\9` a group, `\&` the whole
/// match, `\\` one backslash; any other backslash is kept as written.
fn expand_replacement(caps: &Captures<'_>, replacement: &str, out: &mut String) {
    let mut chars = replacement.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.peek().copied() {
            Some(d @ '1'..='9') => {
                chars.next();
                let group = d.to_digit(10).expect("a digit") as usize;
                if let Some(m) = caps.get(group) {
                    out.push_str(m.as_str());
                }
            }
            Some('&') => {
                chars.next();
                out.push_str(caps.get(0).map_or("", |m| m.as_str()));
            }
            Some('\\') => {
                chars.next();
                out.push('\\');
            }
            _ => out.push('\\'),
        }
    }
}

/// regexp_replace(source, pattern, replacement [, start [, n]] [, flags]):
/// replaces the n-th match from `start` (every match from there when n is
/// 0 or the flags say g; the first otherwise).
fn replace(
    source: &str,
    pattern: &str,
    replacement: &str,
    start: i64,
    n: Option<i64>,
    flags: &str,
) -> PgResult<Value> {
    let flags = Flags::parse(flags)?;
    let re = compile(pattern, flags)?;
    let from = start_offset(source, start)?;
    let n = match n {
        Some(n) if n < 0 => return Err(parameter_error("n", n)),
        Some(n) => n,
        None if flags.global => 0,
        None => 1,
    };
    let mut out = String::with_capacity(source.len());
    let mut copied = 0;
    for (k, caps) in re.captures_iter(&source[from..]).enumerate() {
        let whole = caps.get(0).expect("group 0 always matches");
        if n != 0 && (k as i64) + 1 < n {
            continue;
        }
        out.push_str(&source[copied..from + whole.start()]);
        expand_replacement(&caps, replacement, &mut out);
        copied = from + whole.end();
        if n != 0 {
            break;
        }
    }
    out.push_str(&source[copied..]);
    Ok(Value::Text(out))
}

pub fn regexp_replace(args: &[Value]) -> PgResult<Value> {
    let (s, p, r) = (text(args, 0)?, text(args, 1)?, text(args, 2)?);
    replace(s, p, r, 1, None, optional_text(args, 3)?)
}

/// regexp_replace(source, pattern, replacement, start [, n [, flags]]).
pub fn regexp_replace_from(args: &[Value]) -> PgResult<Value> {
    let (s, p, r) = (text(args, 0)?, text(args, 1)?, text(args, 2)?);
    let start = int(args, 3)?;
    let n = if args.len() > 4 {
        Some(int(args, 4)?)
    } else {
        None
    };
    // With a start but no n, only the first match is replaced unless g.
    replace(s, p, r, start, n, optional_text(args, 5)?)
}

/// regexp_match(string, pattern [, flags]): the first match's groups (or
/// the whole match when the pattern has none) as text[]; NULL if none.
pub fn regexp_match(args: &[Value]) -> PgResult<Value> {
    let (s, p) = (text(args, 0)?, text(args, 1)?);
    let flags = Flags::parse_not_global(optional_text(args, 2)?, "regexp_match")?;
    let re = compile(p, flags)?;
    Ok(re
        .captures(s)
        .map_or(Value::Null, |caps| match_groups(&caps)))
}

/// The groups of one match as text[] (the whole match when the pattern
/// has no groups), as regexp_match and regexp_matches return them.
fn match_groups(caps: &Captures<'_>) -> Value {
    let items: Vec<Value> = if caps.len() == 1 {
        vec![Value::Text(caps[0].to_string())]
    } else {
        (1..caps.len())
            .map(|g| {
                caps.get(g)
                    .map_or(Value::Null, |m| Value::Text(m.as_str().to_string()))
            })
            .collect()
    };
    Value::array(ArrayValue::from_items(TypeId::Text, items))
}

/// regexp_matches(string, pattern [, flags]), a set-returning function:
/// one text[] per match, every match with the g flag, else the first.
pub fn regexp_matches(args: &[Value]) -> PgResult<Vec<Value>> {
    let (s, p) = (text(args, 0)?, text(args, 1)?);
    let flags = Flags::parse(optional_text(args, 2)?)?;
    let re = compile(p, flags)?;
    let mut out = Vec::new();
    for caps in re.captures_iter(s) {
        out.push(match_groups(&caps));
        if !flags.global {
            break;
        }
    }
    Ok(out)
}

/// The pieces regexp_split_to_table and _array return. As PostgreSQL's
/// split, an empty match at either end of the string or right after the
/// previous separator is no separator.
fn split_pieces(args: &[Value], function: &str) -> PgResult<Vec<Value>> {
    let (s, p) = (text(args, 0)?, text(args, 1)?);
    let flags = Flags::parse_not_global(optional_text(args, 2)?, function)?;
    let re = compile(p, flags)?;
    let mut items = Vec::new();
    let mut piece_start = 0;
    for m in re.find_iter(s) {
        if m.start() >= s.len() || m.end() <= piece_start {
            continue;
        }
        items.push(Value::Text(s[piece_start..m.start()].to_string()));
        piece_start = m.end();
    }
    items.push(Value::Text(s[piece_start..].to_string()));
    Ok(items)
}

/// regexp_split_to_table(string, pattern [, flags]), a set-returning function.
pub fn regexp_split_to_table(args: &[Value]) -> PgResult<Vec<Value>> {
    split_pieces(args, "regexp_split_to_table")
}

/// regexp_split_to_array(string, pattern [, flags]).
pub fn regexp_split_to_array(args: &[Value]) -> PgResult<Value> {
    let items = split_pieces(args, "regexp_split_to_array")?;
    Ok(Value::array(ArrayValue::from_items(TypeId::Text, items)))
}

/// regexp_count(string, pattern [, start [, flags]]).
pub fn regexp_count(args: &[Value]) -> PgResult<Value> {
    let (s, p) = (text(args, 0)?, text(args, 1)?);
    let start = if args.len() > 2 { int(args, 2)? } else { 1 };
    let flags = Flags::parse_not_global(optional_text(args, 3)?, "regexp_count")?;
    let from = start_offset(s, start)?;
    let re = compile(p, flags)?;
    Ok(Value::Int4(re.find_iter(&s[from..]).count() as i32))
}

/// The n-th match (from 1) at or after `start`, with its groups.
fn nth_match<'s>(
    re: &Regex,
    s: &'s str,
    start: i64,
    n: i64,
) -> PgResult<Option<(usize, Captures<'s>)>> {
    let from = start_offset(s, start)?;
    if n <= 0 {
        return Err(parameter_error("n", n));
    }
    Ok(re
        .captures_iter(&s[from..])
        .nth((n - 1) as usize)
        .map(|c| (from, c)))
}

fn subexpr_arg(args: &[Value], i: usize) -> PgResult<usize> {
    let sub = if args.len() > i { int(args, i)? } else { 0 };
    if sub < 0 {
        return Err(parameter_error("subexpr", sub));
    }
    Ok(sub as usize)
}

/// regexp_instr(string, pattern [, start [, n [, endoption [, flags [, subexpr]]]]]):
/// where the match (or its group) starts, or just after it ends; 0 if none.
pub fn regexp_instr(args: &[Value]) -> PgResult<Value> {
    let (s, p) = (text(args, 0)?, text(args, 1)?);
    let start = if args.len() > 2 { int(args, 2)? } else { 1 };
    let n = if args.len() > 3 { int(args, 3)? } else { 1 };
    let end = if args.len() > 4 { int(args, 4)? } else { 0 };
    if end != 0 && end != 1 {
        return Err(parameter_error("endoption", end));
    }
    let flags = Flags::parse_not_global(optional_text(args, 5)?, "regexp_instr")?;
    let sub = subexpr_arg(args, 6)?;
    let re = compile(p, flags)?;
    let found = nth_match(&re, s, start, n)?;
    let Some(m) =
        found.and_then(|(from, caps)| caps.get(sub).map(|m| (from + m.start(), from + m.end())))
    else {
        return Ok(Value::Int4(0));
    };
    let byte = if end == 1 { m.1 } else { m.0 };
    Ok(Value::Int4(char_position(s, byte) as i32))
}

/// regexp_substr(string, pattern [, start [, n [, flags [, subexpr]]]]).
pub fn regexp_substr(args: &[Value]) -> PgResult<Value> {
    let (s, p) = (text(args, 0)?, text(args, 1)?);
    let start = if args.len() > 2 { int(args, 2)? } else { 1 };
    let n = if args.len() > 3 { int(args, 3)? } else { 1 };
    let flags = Flags::parse_not_global(optional_text(args, 4)?, "regexp_substr")?;
    let sub = subexpr_arg(args, 5)?;
    let re = compile(p, flags)?;
    Ok(nth_match(&re, s, start, n)?
        .and_then(|(_, caps)| caps.get(sub).map(|m| Value::Text(m.as_str().to_string())))
        .unwrap_or(Value::Null))
}

/// regexp_like(string, pattern [, flags]).
pub fn regexp_like(args: &[Value]) -> PgResult<Value> {
    let (s, p) = (text(args, 0)?, text(args, 1)?);
    let flags = Flags::parse_not_global(optional_text(args, 2)?, "regexp_like")?;
    Ok(Value::Bool(compile(p, flags)?.is_match(s)))
}
