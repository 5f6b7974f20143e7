//! Functions over bytea and uuid (PostgreSQL's varlena.c, encode.c,
//! cryptohashfuncs.c, uuid.c).

use common::{PgError, PgResult, SqlState};

use super::string::{int, text};
use crate::bytea;
use crate::Value;

fn bytes(args: &[Value], i: usize) -> PgResult<&[u8]> {
    match args.get(i) {
        Some(Value::Bytea(b)) => Ok(b),
        other => Err(PgError::internal(format!(
            "expected bytea argument, got {other:?}"
        ))),
    }
}

pub fn length(args: &[Value]) -> PgResult<Value> {
    Ok(Value::Int4(bytes(args, 0)?.len() as i32))
}

pub fn bit_length(args: &[Value]) -> PgResult<Value> {
    Ok(Value::Int4((bytes(args, 0)?.len() * 8) as i32))
}

fn negative_length() -> PgError {
    PgError::new(SqlState("22011"), "negative substring length not allowed")
}

/// The 1-based substring [start, start + len) of `b`, clipped to it
/// (bytea_substring); `len` None: to the end.
fn substring(b: &[u8], start: i64, len: Option<i64>) -> PgResult<&[u8]> {
    let from = (start.max(1) - 1) as usize;
    let to = match len {
        None => b.len(),
        Some(l) if l < 0 => return Err(negative_length()),
        Some(l) => {
            let end = start.saturating_add(l);
            if end <= 1 {
                return Ok(&[]);
            }
            ((end - 1) as usize).min(b.len())
        }
    };
    let from = from.min(b.len());
    Ok(&b[from..to.max(from)])
}

pub fn substr(args: &[Value]) -> PgResult<Value> {
    let len = if args.len() > 2 {
        Some(int(args, 2)?)
    } else {
        None
    };
    Ok(Value::Bytea(
        substring(bytes(args, 0)?, int(args, 1)?, len)?.to_vec(),
    ))
}

/// position(string, substring): 1-based, 0 if absent.
pub fn position(args: &[Value]) -> PgResult<Value> {
    let (s, sub) = (bytes(args, 0)?, bytes(args, 1)?);
    Ok(Value::Int4(
        memchr::memmem::find(s, sub).map_or(0, |i| i as i32 + 1),
    ))
}

/// overlay(string placing replacement from start [for count]).
pub fn overlay(args: &[Value]) -> PgResult<Value> {
    let (s, repl) = (bytes(args, 0)?, bytes(args, 1)?);
    let start = int(args, 2)?;
    let count = if args.len() > 3 {
        int(args, 3)?
    } else {
        repl.len() as i64
    };
    let head = substring(s, 1, Some(start - 1))?;
    let tail = substring(s, start.saturating_add(count), None)?;
    Ok(Value::Bytea([head, repl, tail].concat()))
}

fn trim(args: &[Value], left: bool, right: bool) -> PgResult<Value> {
    let (mut s, set) = (bytes(args, 0)?, bytes(args, 1)?);
    if left {
        let n = s.iter().take_while(|b| set.contains(b)).count();
        s = &s[n..];
    }
    if right {
        let n = s.iter().rev().take_while(|b| set.contains(b)).count();
        s = &s[..s.len() - n];
    }
    Ok(Value::Bytea(s.to_vec()))
}

pub fn btrim(args: &[Value]) -> PgResult<Value> {
    trim(args, true, true)
}

pub fn ltrim(args: &[Value]) -> PgResult<Value> {
    trim(args, true, false)
}

pub fn rtrim(args: &[Value]) -> PgResult<Value> {
    trim(args, false, true)
}

pub fn encode(args: &[Value]) -> PgResult<Value> {
    Ok(Value::Text(bytea::encode(bytes(args, 0)?, text(args, 1)?)?))
}

pub fn decode(args: &[Value]) -> PgResult<Value> {
    Ok(Value::Bytea(bytea::decode(text(args, 0)?, text(args, 1)?)?))
}

pub fn md5(args: &[Value]) -> PgResult<Value> {
    use md5::Digest;
    let mut out = String::with_capacity(32);
    bytea::hex_encode(&md5::Md5::digest(bytes(args, 0)?), &mut out);
    Ok(Value::Text(out))
}

fn sha<D: sha2::Digest>(args: &[Value]) -> PgResult<Value> {
    Ok(Value::Bytea(D::digest(bytes(args, 0)?).to_vec()))
}

pub fn sha224(args: &[Value]) -> PgResult<Value> {
    sha::<sha2::Sha224>(args)
}

pub fn sha256(args: &[Value]) -> PgResult<Value> {
    sha::<sha2::Sha256>(args)
}

pub fn sha384(args: &[Value]) -> PgResult<Value> {
    sha::<sha2::Sha384>(args)
}

pub fn sha512(args: &[Value]) -> PgResult<Value> {
    sha::<sha2::Sha512>(args)
}

fn index_out_of_range(n: i64, last: i64) -> PgError {
    PgError::new(
        SqlState::ARRAY_SUBSCRIPT_ERROR,
        format!("index {n} out of valid range, 0..{last}"),
    )
}

/// The byte index `n` of `b`, or 2202E.
fn byte_index(b: &[u8], n: i64) -> PgResult<usize> {
    if n < 0 || n >= b.len() as i64 {
        return Err(index_out_of_range(n, b.len() as i64 - 1));
    }
    Ok(n as usize)
}

/// The bit index `n` of `b` as (byte, bit), or 2202E.
fn bit_index(b: &[u8], n: i64) -> PgResult<(usize, u32)> {
    let bits = b.len() as i64 * 8;
    if n < 0 || n >= bits {
        return Err(index_out_of_range(n, bits - 1));
    }
    Ok(((n / 8) as usize, (n % 8) as u32))
}

pub fn get_byte(args: &[Value]) -> PgResult<Value> {
    let b = bytes(args, 0)?;
    Ok(Value::Int4(b[byte_index(b, int(args, 1)?)?] as i32))
}

pub fn set_byte(args: &[Value]) -> PgResult<Value> {
    let mut b = bytes(args, 0)?.to_vec();
    let i = byte_index(&b, int(args, 1)?)?;
    // The new value's low byte, as PostgreSQL stores it.
    b[i] = int(args, 2)? as u8;
    Ok(Value::Bytea(b))
}

pub fn get_bit(args: &[Value]) -> PgResult<Value> {
    let b = bytes(args, 0)?;
    let (byte, bit) = bit_index(b, int(args, 1)?)?;
    Ok(Value::Int4(((b[byte] >> bit) & 1) as i32))
}

pub fn set_bit(args: &[Value]) -> PgResult<Value> {
    let mut b = bytes(args, 0)?.to_vec();
    let (byte, bit) = bit_index(&b, int(args, 1)?)?;
    match int(args, 2)? {
        0 => b[byte] &= !(1 << bit),
        1 => b[byte] |= 1 << bit,
        _ => {
            return Err(PgError::new(
                SqlState::INVALID_PARAMETER_VALUE,
                "new bit must be 0 or 1",
            ))
        }
    }
    Ok(Value::Bytea(b))
}

fn encoding_error(name: &str, which: &str) -> PgError {
    if bytea::is_other_encoding_name(name) {
        PgError::new(
            SqlState::FEATURE_NOT_SUPPORTED,
            format!("conversion to or from encoding \"{name}\" is not supported"),
        )
    } else {
        PgError::new(
            SqlState::INVALID_PARAMETER_VALUE,
            format!("invalid {which} encoding name \"{name}\""),
        )
    }
}

/// convert_to(text, encoding): the string's bytes in UTF-8, the only
/// encoding here.
pub fn convert_to(args: &[Value]) -> PgResult<Value> {
    let name = text(args, 1)?;
    if !bytea::is_utf8_name(name) {
        return Err(encoding_error(name, "destination"));
    }
    Ok(Value::Bytea(text(args, 0)?.as_bytes().to_vec()))
}

/// convert_from(bytea, encoding): UTF-8 bytes as text (22021 if invalid).
pub fn convert_from(args: &[Value]) -> PgResult<Value> {
    let name = text(args, 1)?;
    if !bytea::is_utf8_name(name) {
        return Err(encoding_error(name, "source"));
    }
    Ok(Value::Text(bytea::utf8_text(bytes(args, 0)?)?.to_string()))
}

pub fn gen_random_uuid(_: &[Value]) -> PgResult<Value> {
    Ok(Value::Uuid(crate::uuid::random_v4()))
}
