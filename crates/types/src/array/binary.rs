//! Array binary send/receive (PostgreSQL's array_send and array_recv):
//! ndim, a has-null flag, the element type's oid, (length, lower bound) per
//! dimension, then each element as a length (-1 for NULL) and its send form.

use common::{PgError, PgResult, SqlState};

use super::{ArrayValue, Dim, MAX_DIMS};
use crate::io::{format_binary, parse_binary};
use crate::{DataType, TypeId, Value};

/// array_send; `elem` is the static element type.
pub fn write(a: &ArrayValue, elem: TypeId, out: &mut Vec<u8>) {
    out.extend_from_slice(&(a.dims.len() as i32).to_be_bytes());
    out.extend_from_slice(&i32::from(a.has_nulls()).to_be_bytes());
    out.extend_from_slice(&elem.oid().to_be_bytes());
    for d in &a.dims {
        out.extend_from_slice(&d.len.to_be_bytes());
        out.extend_from_slice(&d.lower.to_be_bytes());
    }
    for v in &a.items {
        if v.is_null() {
            out.extend_from_slice(&(-1i32).to_be_bytes());
            continue;
        }
        let at = out.len();
        out.extend_from_slice(&0i32.to_be_bytes());
        format_binary(v, elem, out);
        let len = (out.len() - at - 4) as i32;
        out[at..at + 4].copy_from_slice(&len.to_be_bytes());
    }
}

fn bad(detail: &str) -> PgError {
    PgError::new(SqlState::INVALID_BINARY_REPRESENTATION, detail.to_string())
}

fn take_i32(rest: &mut &[u8]) -> PgResult<i32> {
    let (head, tail) = rest
        .split_first_chunk::<4>()
        .ok_or_else(|| bad("insufficient data left in message"))?;
    *rest = tail;
    Ok(i32::from_be_bytes(*head))
}

/// array_recv of an array of `elem` (its typmod applies to each element).
pub fn read(elem: DataType, bytes: &[u8]) -> PgResult<ArrayValue> {
    let mut rest = bytes;
    let ndim = take_i32(&mut rest)?;
    let flags = take_i32(&mut rest)?;
    let elem_oid = take_i32(&mut rest)? as u32;
    if ndim < 0 {
        return Err(bad(&format!("invalid number of dimensions: {ndim}")));
    }
    if ndim as usize > MAX_DIMS {
        return Err(super::too_many_dims(ndim as usize));
    }
    if flags != 0 && flags != 1 {
        return Err(bad("invalid array flags"));
    }
    if elem_oid != elem.id.oid() {
        return Err(PgError::new(
            SqlState::DATATYPE_MISMATCH,
            format!(
                "binary data has array element type {elem_oid} ({}) instead of expected {} ({})",
                TypeId::from_oid(elem_oid).map_or("-", |t| t.display_name()),
                elem.id.oid(),
                elem.id.display_name()
            ),
        ));
    }
    let mut dims = Vec::with_capacity(ndim as usize);
    for _ in 0..ndim {
        let len = take_i32(&mut rest)?;
        let lower = take_i32(&mut rest)?;
        dims.push(Dim { len, lower });
    }
    let count = super::item_count(&dims)?;
    let mut items = Vec::with_capacity(count.min(4096));
    for _ in 0..count {
        let len = take_i32(&mut rest)?;
        if len == -1 {
            items.push(Value::Null);
            continue;
        }
        let len = usize::try_from(len)
            .ok()
            .filter(|l| *l <= rest.len())
            .ok_or_else(|| bad("insufficient data left in message"))?;
        let (item, tail) = rest.split_at(len);
        items.push(parse_binary(elem, item)?);
        rest = tail;
    }
    if !rest.is_empty() {
        return Err(bad("incorrect binary data format in array element"));
    }
    if count == 0 {
        return Ok(ArrayValue::empty(elem.id));
    }
    ArrayValue::with_dims(elem.id, dims, items)
}
