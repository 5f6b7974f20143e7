//! `json` and `jsonb` (PostgreSQL's utils/adt/json*.c).
//!
//! `json` values are `Value::Text` holding the input text exactly as given
//! (validated on input); the operators parse it again when they need to.
//! `jsonb` values are `Value::Jsonb`, a parsed and normalised tree:
//! object keys are unique (the last duplicate wins) and sorted as
//! PostgreSQL stores them (shorter keys first, then bytewise), numbers are
//! `numeric`s (so `1.50` keeps its scale and big integers stay exact).
//!
//! - `parse.rs`: the JSON lexer and parser, with PostgreSQL's error details;
//! - `storage.rs`: the compact binary form jsonb takes in heap and index tuples;
//! - `doc.rs`: `JsonbDoc`, what `Value::Jsonb` holds: a tree, or stored bytes
//!   decoded lazily; `stored.rs`: reads (`->`, `?`, `@>`, text) on those bytes;
//! - `ops.rs`: the operators (`->`, `@>`, `||`, `#-`, ...) and path functions;
//! - `build.rs`: conversion of SQL values to JSON (`to_jsonb`, the builders).

pub mod build;
pub mod doc;
pub mod ops;
pub mod parse;
pub mod storage;
pub mod stored;

pub use doc::JsonbDoc;

use std::cmp::Ordering;
use std::hash::{Hash, Hasher};

use crate::numeric::Numeric;

/// A jsonb value. Objects keep their pairs in `key_order`, without duplicates.
#[derive(Debug, Clone, PartialEq)]
pub enum Jsonb {
    Null,
    Bool(bool),
    Number(Numeric),
    String(String),
    Array(Vec<Jsonb>),
    Object(Vec<(String, Jsonb)>),
}

/// PostgreSQL's jsonb key order: shorter keys first, then bytewise.
pub fn key_order(a: &str, b: &str) -> Ordering {
    a.len()
        .cmp(&b.len())
        .then_with(|| a.as_bytes().cmp(b.as_bytes()))
}

impl Jsonb {
    /// An object from pairs in any order: sorted into `key_order`, and of
    /// duplicate keys the last one kept (as jsonb input does).
    pub fn object_from_pairs(mut pairs: Vec<(String, Jsonb)>) -> Jsonb {
        // A stable sort keeps duplicates in input order; keep the last of each run.
        pairs.sort_by(|a, b| key_order(&a.0, &b.0));
        let mut out: Vec<(String, Jsonb)> = Vec::with_capacity(pairs.len());
        for p in pairs {
            match out.last_mut() {
                Some(last) if last.0 == p.0 => *last = p,
                _ => out.push(p),
            }
        }
        Jsonb::Object(out)
    }

    /// The value of `key` in an object.
    pub fn get_key(&self, key: &str) -> Option<&Jsonb> {
        match self {
            Jsonb::Object(pairs) => pairs
                .binary_search_by(|(k, _)| key_order(k, key))
                .ok()
                .map(|i| &pairs[i].1),
            _ => None,
        }
    }

    /// Element `index` of an array; negative indexes count from the end.
    pub fn get_index(&self, index: i64) -> Option<&Jsonb> {
        match self {
            Jsonb::Array(items) => {
                let i = if index < 0 {
                    items.len() as i64 + index
                } else {
                    index
                };
                usize::try_from(i).ok().and_then(|i| items.get(i))
            }
            _ => None,
        }
    }

    /// `jsonb_typeof`.
    pub fn type_name(&self) -> &'static str {
        match self {
            Jsonb::Null => "null",
            Jsonb::Bool(_) => "boolean",
            Jsonb::Number(_) => "number",
            Jsonb::String(_) => "string",
            Jsonb::Array(_) => "array",
            Jsonb::Object(_) => "object",
        }
    }

    pub fn is_scalar(&self) -> bool {
        !matches!(self, Jsonb::Array(_) | Jsonb::Object(_))
    }

    /// The text form (`jsonb_out`): `{"a": 1, "b": [1, 2]}`.
    pub fn to_text(&self) -> String {
        let mut s = String::new();
        self.write_text(&mut s);
        s
    }

    pub fn write_text(&self, out: &mut String) {
        match self {
            Jsonb::Null => out.push_str("null"),
            Jsonb::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Jsonb::Number(n) => n.write_text(out),
            Jsonb::String(s) => escape_string(s, out),
            Jsonb::Array(items) => {
                out.push('[');
                for (i, v) in items.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    v.write_text(out);
                }
                out.push(']');
            }
            Jsonb::Object(pairs) => {
                out.push('{');
                for (i, (k, v)) in pairs.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    escape_string(k, out);
                    out.push_str(": ");
                    v.write_text(out);
                }
                out.push('}');
            }
        }
    }

    /// `->>`'s text: strings unquoted, null as SQL NULL (None), the rest
    /// in their text form.
    pub fn to_text_unquoted(&self) -> Option<String> {
        match self {
            Jsonb::Null => None,
            Jsonb::String(s) => Some(s.clone()),
            other => Some(other.to_text()),
        }
    }

    /// `jsonb_pretty`: four-space indentation, one element per line.
    pub fn to_pretty(&self) -> String {
        let mut out = String::new();
        self.write_pretty(&mut out, 0);
        out
    }

    fn write_pretty(&self, out: &mut String, level: usize) {
        let indent = |out: &mut String, n: usize| {
            for _ in 0..n {
                out.push_str("    ");
            }
        };
        match self {
            Jsonb::Array(items) => {
                out.push('[');
                for (i, v) in items.iter().enumerate() {
                    out.push_str(if i > 0 { ",\n" } else { "\n" });
                    indent(out, level + 1);
                    v.write_pretty(out, level + 1);
                }
                // PostgreSQL puts even an empty container's close on its own line.
                out.push('\n');
                indent(out, level);
                out.push(']');
            }
            Jsonb::Object(pairs) => {
                out.push('{');
                for (i, (k, v)) in pairs.iter().enumerate() {
                    out.push_str(if i > 0 { ",\n" } else { "\n" });
                    indent(out, level + 1);
                    escape_string(k, out);
                    out.push_str(": ");
                    v.write_pretty(out, level + 1);
                }
                out.push('\n');
                indent(out, level);
                out.push('}');
            }
            other => other.write_text(out),
        }
    }

    /// Rank of the kind in PostgreSQL's jsonb order: null < string < number
    /// < boolean < array < object.
    pub(crate) fn kind_rank(&self) -> u8 {
        match self {
            Jsonb::Null => 0,
            Jsonb::String(_) => 1,
            Jsonb::Number(_) => 2,
            Jsonb::Bool(_) => 3,
            Jsonb::Array(_) => 4,
            Jsonb::Object(_) => 5,
        }
    }
}

/// PostgreSQL's jsonb B-tree order (compareJsonbContainers). A top-level
/// scalar is stored as a one-element "raw scalar" array, so it compares
/// with arrays as one: below a non-empty array, above an empty one.
pub fn compare(a: &Jsonb, b: &Jsonb) -> Ordering {
    match (a.is_scalar(), b) {
        (true, Jsonb::Array(items)) => {
            return if items.is_empty() {
                Ordering::Greater
            } else {
                Ordering::Less
            }
        }
        (false, _) if b.is_scalar() => {
            if let Jsonb::Array(items) = a {
                return if items.is_empty() {
                    Ordering::Less
                } else {
                    Ordering::Greater
                };
            }
        }
        _ => {}
    }
    compare_nested(a, b)
}

/// `compare` of two documents, reading a stored side in place (only a
/// stored-against-stored pair with different bytes decodes one of them).
pub fn compare_docs(a: &JsonbDoc, b: &JsonbDoc) -> Ordering {
    let validated = "stored jsonb was validated when read";
    match (a.stored(), b.stored()) {
        (Some(x), Some(y)) if x.value_bytes() == y.value_bytes() => Ordering::Equal,
        (Some(x), _) => stored::compare(x, b.tree()).expect(validated),
        (None, Some(y)) => stored::compare(y, a.tree()).expect(validated).reverse(),
        (None, None) => compare(a.tree(), b.tree()),
    }
}

/// Order of values below the top level, where scalars are plain elements.
fn compare_nested(a: &Jsonb, b: &Jsonb) -> Ordering {
    match (a, b) {
        (Jsonb::Null, Jsonb::Null) => Ordering::Equal,
        (Jsonb::String(x), Jsonb::String(y)) => x.as_bytes().cmp(y.as_bytes()),
        (Jsonb::Number(x), Jsonb::Number(y)) => x.cmp(y),
        (Jsonb::Bool(x), Jsonb::Bool(y)) => x.cmp(y),
        // Longer containers sort after shorter ones, then element by element.
        (Jsonb::Array(x), Jsonb::Array(y)) => x.len().cmp(&y.len()).then_with(|| {
            x.iter()
                .zip(y)
                .map(|(p, q)| compare_nested(p, q))
                .find(|o| o.is_ne())
                .unwrap_or(Ordering::Equal)
        }),
        (Jsonb::Object(x), Jsonb::Object(y)) => x.len().cmp(&y.len()).then_with(|| {
            x.iter()
                .zip(y)
                .map(|((kp, vp), (kq, vq))| {
                    kp.as_bytes()
                        .cmp(kq.as_bytes())
                        .then_with(|| compare_nested(vp, vq))
                })
                .find(|o| o.is_ne())
                .unwrap_or(Ordering::Equal)
        }),
        _ => a.kind_rank().cmp(&b.kind_rank()),
    }
}

/// Hashes consistently with `compare` (equal numbers hash alike whatever
/// their scale).
pub fn hash<H: Hasher>(v: &Jsonb, state: &mut H) {
    state.write_u8(v.kind_rank());
    match v {
        Jsonb::Null => {}
        Jsonb::Bool(b) => state.write_u8(*b as u8),
        Jsonb::Number(n) => n.hash(state),
        Jsonb::String(s) => state.write(s.as_bytes()),
        Jsonb::Array(items) => {
            state.write_usize(items.len());
            for i in items {
                hash(i, state);
            }
        }
        Jsonb::Object(pairs) => {
            state.write_usize(pairs.len());
            for (k, v) in pairs {
                state.write(k.as_bytes());
                state.write_u8(0xff);
                hash(v, state);
            }
        }
    }
}

/// Appends `s` as a JSON string literal with PostgreSQL's escapes
/// (escape_json): `"`, `\`, the named control escapes, `\u00XX` for the
/// other control characters; everything else as it is.
pub fn escape_string(s: &str, out: &mut String) {
    out.push('"');
    let bytes = s.as_bytes();
    let mut start = 0;
    for (i, &b) in bytes.iter().enumerate() {
        let esc: Option<&str> = match b {
            b'"' => Some("\\\""),
            b'\\' => Some("\\\\"),
            b'\n' => Some("\\n"),
            b'\r' => Some("\\r"),
            b'\t' => Some("\\t"),
            0x08 => Some("\\b"),
            0x0c => Some("\\f"),
            0..=0x1f => None,
            _ => continue,
        };
        out.push_str(&s[start..i]);
        match esc {
            Some(e) => out.push_str(e),
            None => {
                use std::fmt::Write;
                let _ = write!(out, "\\u{b:04x}");
            }
        }
        start = i + 1;
    }
    out.push_str(&s[start..]);
    out.push('"');
}

#[cfg(test)]
mod tests;
