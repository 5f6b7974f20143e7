//! SQL values as JSON (PostgreSQL's datum_to_json / datum_to_jsonb):
//! numbers stay numbers (NaN and infinities become strings), booleans
//! booleans, date/times ISO 8601 strings (`2024-01-01T10:00:00+00:00`),
//! arrays JSON arrays, json and jsonb themselves, the rest strings of
//! their text output.

use std::sync::Arc;

use common::PgResult;

use super::{escape_string, parse, Jsonb};
use crate::numeric::Numeric;
use crate::{io, IoSettings, TypeId, Value};

/// Appends `v` of type `ty` as JSON text (`to_json`).
pub fn write_json(v: &Value, ty: TypeId, settings: &IoSettings, out: &mut String) -> PgResult<()> {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Int2(_) | Value::Int4(_) | Value::Int8(_) => io::format_text(v, ty, settings, out),
        Value::Numeric(n) if n.is_finite() => n.write_text(out),
        Value::Float4(f) if f.is_finite() => io::format_text(v, ty, settings, out),
        Value::Float8(f) if f.is_finite() => io::format_text(v, ty, settings, out),
        Value::Numeric(_) | Value::Float4(_) | Value::Float8(_) => {
            escape_string(&io::to_text(v, ty, settings), out)
        }
        Value::Jsonb(j) => j.write_text(out),
        Value::Text(s) if ty == TypeId::Json => out.push_str(s),
        Value::Array(a) => {
            let elem = ty.array_element().unwrap_or(a.elem);
            if a.is_empty() {
                out.push_str("[]");
            } else {
                let mut next = 0;
                write_json_level(a, elem, 0, &mut next, settings, out)?;
            }
        }
        Value::Date(_) | Value::Timestamp(_) | Value::Timestamptz(_) => {
            escape_string(&iso_datetime(v, ty, settings), out)
        }
        _ => escape_string(&io::to_text(v, ty, settings), out),
    }
    Ok(())
}

/// One dimension of an array as a JSON array (nested for inner dimensions).
fn write_json_level(
    a: &crate::array::ArrayValue,
    elem: TypeId,
    depth: usize,
    next: &mut usize,
    settings: &IoSettings,
    out: &mut String,
) -> PgResult<()> {
    out.push('[');
    for i in 0..a.dims[depth].len {
        if i > 0 {
            out.push(',');
        }
        if depth + 1 < a.dims.len() {
            write_json_level(a, elem, depth + 1, next, settings, out)?;
        } else {
            write_json(&a.items[*next], elem, settings, out)?;
            *next += 1;
        }
    }
    out.push(']');
    Ok(())
}

/// `to_json`'s text of a value.
pub fn to_json_text(v: &Value, ty: TypeId, settings: &IoSettings) -> PgResult<String> {
    let mut s = String::new();
    write_json(v, ty, settings, &mut s)?;
    Ok(s)
}

/// `to_jsonb` of a value.
pub fn to_jsonb(v: &Value, ty: TypeId, settings: &IoSettings) -> PgResult<Jsonb> {
    Ok(match v {
        Value::Null => Jsonb::Null,
        Value::Jsonb(j) => Jsonb::clone(j),
        Value::Bool(b) => Jsonb::Bool(*b),
        Value::Int2(x) => Jsonb::Number(Numeric::from(*x)),
        Value::Int4(x) => Jsonb::Number(Numeric::from(*x)),
        Value::Int8(x) => Jsonb::Number(Numeric::from(*x)),
        Value::Numeric(n) if n.is_finite() => Jsonb::Number(Numeric::clone(n)),
        Value::Text(s) if ty == TypeId::Json => parse::parse_jsonb(s)?,
        Value::Text(s) => Jsonb::String(s.clone()),
        // Floats and arrays go through their JSON text, which keeps the
        // float's shortest round-trip digits.
        _ => parse::parse_jsonb(&to_json_text(v, ty, settings)?)?,
    })
}

/// A jsonb SQL value.
pub fn jsonb_value(j: Jsonb) -> Value {
    Value::Jsonb(Arc::new(j.into()))
}

/// JSON's date/time text: ISO 8601 with a `T`, and a `+HH:MM` offset for
/// timestamptz; infinities as `infinity`.
fn iso_datetime(v: &Value, ty: TypeId, settings: &IoSettings) -> String {
    // ISO whatever the session's DateStyle, as PostgreSQL's JSON output.
    let iso = IoSettings {
        date_style: crate::datestyle::DateStyle::ISO_MDY,
        ..*settings
    };
    let text = io::to_text(v, ty, &iso);
    if matches!(v, Value::Date(_)) || text.ends_with("infinity") {
        return text;
    }
    let (body, era) = match text.strip_suffix(" BC") {
        Some(b) => (b, " BC"),
        None => (text.as_str(), ""),
    };
    let mut s = body.replacen(' ', "T", 1);
    let is_tz =
        ty == TypeId::Timestamptz || matches!(v, Value::Timestamptz(_)) && ty != TypeId::Timestamp;
    if is_tz {
        // The offset follows the time: "+05", "-03:30", "+01:02:03".
        if let Some(pos) = s.rfind(['+', '-']).filter(|p| *p > 10) {
            if s[pos..].len() == 3 {
                s.push_str(":00");
            }
        }
    }
    s.push_str(era);
    s
}
