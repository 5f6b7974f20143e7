//! One-dimensional arrays, carried as their canonical text form.
//!
//! Scalegres has no array storage type yet; arrays exist for the system
//! catalogs' array columns (reloptions, datacl, polroles ...) and for the
//! array expressions clients wrap around them (`ARRAY(subquery)`,
//! `x = ANY(arr)`, `unnest(arr)`, `arr[i]`, `array_to_string`). A value of an
//! array type is a `Value::Text` holding PostgreSQL's text output of the
//! array (`{a,"b c",NULL}`), so text output is the string itself and two
//! arrays of one element type compare equal exactly when their texts do.

use common::{PgError, PgResult, SqlState};

use crate::io::{format_text, parse_text};
use crate::{IoSettings, TypeId, Value};

fn malformed(s: &str, detail: &str) -> PgError {
    PgError::new(
        SqlState::INVALID_TEXT_REPRESENTATION,
        format!("malformed array literal: \"{s}\""),
    )
    .with_detail(detail.to_string())
}

/// The elements of a one-dimensional array literal, None for NULL
/// (PostgreSQL's array_in, without dimension decorations or nesting).
pub fn parse_elements(s: &str) -> PgResult<Vec<Option<String>>> {
    let body = s.trim();
    let Some(inner) = body.strip_prefix('{').and_then(|b| b.strip_suffix('}')) else {
        return Err(malformed(
            s,
            "Array value must start with \"{\" or dimension information.",
        ));
    };
    let mut out = Vec::new();
    if inner.trim().is_empty() {
        return Ok(out);
    }
    let mut chars = inner.chars().peekable();
    loop {
        while chars.peek().is_some_and(|c| c.is_ascii_whitespace()) {
            chars.next();
        }
        let mut item = String::new();
        let mut quoted = false;
        let mut trailing_space = 0;
        while let Some(&c) = chars.peek() {
            match c {
                ',' => break,
                '{' | '}' => {
                    return Err(malformed(
                        s,
                        "Multidimensional arrays are not supported here.",
                    ))
                }
                '"' => {
                    quoted = true;
                    chars.next();
                    loop {
                        match chars.next() {
                            Some('"') => break,
                            Some('\\') => item.extend(chars.next()),
                            Some(c) => item.push(c),
                            None => return Err(malformed(s, "Unexpected end of input.")),
                        }
                    }
                    trailing_space = 0;
                    continue;
                }
                '\\' => {
                    chars.next();
                    item.extend(chars.next());
                    trailing_space = 0;
                    continue;
                }
                c if c.is_ascii_whitespace() => trailing_space += 1,
                _ => trailing_space = 0,
            }
            item.push(c);
            chars.next();
        }
        item.truncate(item.len() - trailing_space.min(item.len()));
        if !quoted && item.is_empty() {
            return Err(malformed(s, "Unexpected \",\" character."));
        }
        out.push((quoted || !item.eq_ignore_ascii_case("NULL")).then_some(item));
        if chars.next().is_none() {
            return Ok(out);
        }
    }
}

/// PostgreSQL's array_out for one dimension: elements quoted where needed.
pub fn format_elements<I, S>(elements: I) -> String
where
    I: IntoIterator<Item = Option<S>>,
    S: AsRef<str>,
{
    let mut out = String::from("{");
    for (i, e) in elements.into_iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        let Some(e) = e else {
            out.push_str("NULL");
            continue;
        };
        let e = e.as_ref();
        let needs_quotes = e.is_empty()
            || e.eq_ignore_ascii_case("NULL")
            || e.chars()
                .any(|c| matches!(c, '{' | '}' | ',' | '"' | '\\') || c.is_ascii_whitespace());
        if needs_quotes {
            out.push('"');
            for c in e.chars() {
                if c == '"' || c == '\\' {
                    out.push('\\');
                }
                out.push(c);
            }
            out.push('"');
        } else {
            out.push_str(e);
        }
    }
    out.push('}');
    out
}

/// Array input: checks each element as `elem` and returns the canonical text.
pub fn parse_array(elem: TypeId, s: &str, io: &IoSettings) -> PgResult<String> {
    let values = parse_elements(s)?
        .into_iter()
        .map(|e| match e {
            Some(t) => parse_text(elem.into(), &t, io),
            None => Ok(Value::Null),
        })
        .collect::<PgResult<Vec<_>>>()?;
    Ok(from_values(elem, &values, io))
}

/// The array of `values` (element type `elem`) in its text form.
pub fn from_values(elem: TypeId, values: &[Value], io: &IoSettings) -> String {
    format_elements(values.iter().map(|v| {
        (!v.is_null()).then(|| {
            let mut s = String::new();
            format_text(v, elem, io, &mut s);
            s
        })
    }))
}

/// The elements of an array value as values of its element type.
pub fn to_values(array_type: TypeId, text: &str, io: &IoSettings) -> PgResult<Vec<Value>> {
    let elem = array_type.array_element().unwrap_or(TypeId::Text);
    parse_elements(text)?
        .into_iter()
        .map(|e| match e {
            Some(t) => parse_text(elem.into(), &t, io),
            None => Ok(Value::Null),
        })
        .collect()
}

/// PostgreSQL's array_send for one dimension (lower bound 1).
pub fn write_binary(array_type: TypeId, text: &str, out: &mut Vec<u8>) {
    let elem = array_type.array_element().unwrap_or(TypeId::Text);
    let values = to_values(array_type, text, &IoSettings::UTC).unwrap_or_default();
    let has_null = values.iter().any(Value::is_null);
    let dims: i32 = if values.is_empty() { 0 } else { 1 };
    out.extend_from_slice(&dims.to_be_bytes());
    out.extend_from_slice(&i32::from(has_null).to_be_bytes());
    out.extend_from_slice(&elem.oid().to_be_bytes());
    if values.is_empty() {
        return;
    }
    out.extend_from_slice(&(values.len() as i32).to_be_bytes());
    out.extend_from_slice(&1i32.to_be_bytes());
    for v in &values {
        if v.is_null() {
            out.extend_from_slice(&(-1i32).to_be_bytes());
            continue;
        }
        let at = out.len();
        out.extend_from_slice(&0i32.to_be_bytes());
        crate::io::format_binary(v, elem, out);
        let len = (out.len() - at - 4) as i32;
        out[at..at + 4].copy_from_slice(&len.to_be_bytes());
    }
}

/// PostgreSQL's array_recv for at most one dimension: the array's text form.
pub fn read_binary(array_type: TypeId, bytes: &[u8]) -> PgResult<String> {
    let mut rest = bytes;
    let dims = take_i32(&mut rest)?;
    let flags = take_i32(&mut rest)?;
    let elem_oid = take_i32(&mut rest)? as u32;
    let elem = array_type.array_element().unwrap_or(TypeId::Text);
    if !(0..=1).contains(&dims) || !(0..=1).contains(&flags) {
        return Err(PgError::new(
            SqlState::INVALID_BINARY_REPRESENTATION,
            format!("invalid array dimensions or flags: {dims}, {flags}"),
        ));
    }
    if elem_oid != elem.oid() {
        return Err(PgError::new(
            SqlState::DATATYPE_MISMATCH,
            "binary data has array element type of the wrong type",
        ));
    }
    let count = if dims == 1 {
        let n = take_i32(&mut rest)?;
        let _lower_bound = take_i32(&mut rest)?;
        usize::try_from(n).map_err(|_| bad_binary())?
    } else {
        0
    };
    let mut values = Vec::with_capacity(count.min(1024));
    for _ in 0..count {
        let len = take_i32(&mut rest)?;
        if len == -1 {
            values.push(Value::Null);
            continue;
        }
        let len = usize::try_from(len).map_err(|_| bad_binary())?;
        if len > rest.len() {
            return Err(bad_binary());
        }
        let (item, tail) = rest.split_at(len);
        values.push(crate::io::parse_binary(elem.into(), item)?);
        rest = tail;
    }
    if !rest.is_empty() {
        return Err(bad_binary());
    }
    Ok(from_values(elem, &values, &IoSettings::UTC))
}

fn bad_binary() -> PgError {
    PgError::new(
        SqlState::INVALID_BINARY_REPRESENTATION,
        "incorrect binary data format",
    )
}

fn take_i32(rest: &mut &[u8]) -> PgResult<i32> {
    let (head, tail) = rest.split_first_chunk::<4>().ok_or_else(bad_binary)?;
    *rest = tail;
    Ok(i32::from_be_bytes(*head))
}

/// array_to_string(arr, delimiter [, null_string]): NULL elements are
/// skipped unless a null string is given.
pub fn to_string(text: &str, delimiter: &str, null_string: Option<&str>) -> PgResult<String> {
    let parts: Vec<String> = parse_elements(text)?
        .into_iter()
        .filter_map(|e| e.or_else(|| null_string.map(str::to_string)))
        .collect();
    Ok(parts.join(delimiter))
}

/// array_upper(arr, 1) / array_length(arr, 1): NULL for an empty array.
pub fn upper_bound(text: &str) -> PgResult<Option<i32>> {
    let n = parse_elements(text)?.len();
    Ok((n > 0).then_some(n as i32))
}

/// The concatenation of two arrays of one element type (`a || b`).
pub fn concat(a: &str, b: &str) -> PgResult<String> {
    let mut items = parse_elements(a)?;
    items.extend(parse_elements(b)?);
    Ok(format_elements(items))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_quotes_and_nulls() {
        let items = parse_elements(r#"{a, "b c" ,NULL,"NULL","x\"y"}"#).unwrap();
        assert_eq!(
            items,
            vec![
                Some("a".into()),
                Some("b c".into()),
                None,
                Some("NULL".into()),
                Some("x\"y".into())
            ]
        );
        assert_eq!(format_elements(items), r#"{a,"b c",NULL,"NULL","x\"y"}"#);
        assert_eq!(parse_elements("{}").unwrap(), Vec::<Option<String>>::new());
    }

    #[test]
    fn canonical_input_and_errors() {
        let io = IoSettings::UTC;
        assert_eq!(
            parse_array(TypeId::Int4, "{ 1, 02 ,3}", &io).unwrap(),
            "{1,2,3}"
        );
        assert_eq!(
            parse_array(TypeId::Int4, "1,2", &io).unwrap_err().code,
            SqlState::INVALID_TEXT_REPRESENTATION
        );
        assert!(parse_array(TypeId::Int4, "{a}", &io).is_err());
        assert_eq!(to_string("{a,NULL,b}", ", ", None).unwrap(), "a, b");
        assert_eq!(to_string("{a,NULL,b}", ",", Some("*")).unwrap(), "a,*,b");
        assert_eq!(upper_bound("{}").unwrap(), None);
        assert_eq!(concat("{a}", "{b,c}").unwrap(), "{a,b,c}");
    }
}
