//! The compact form of an array in heap and index tuples and spill files.
//! It is not PostgreSQL's on-disk array; only the text and send/recv forms
//! are PostgreSQL's.
//!
//! ```text
//! array    := elem_oid:u32 ndim:u8 flags:u8 dims nulls? elements
//! flags    := bit 0: some element is NULL
//! dims     := ndim × (length:i32 lower_bound:i32)
//! nulls    := ceil(n / 8) bytes, bit i set when element i is NULL
//! elements := each non-NULL element in row-major order:
//!   bool 1 byte; int2 2; int4, oid, date, float4 4; int8, float8,
//!   timestamp(tz) 8; uuid 16; interval 16 (micros, days, months);
//!   macaddr 6; macaddr8 8; money 8; inet/cidr: len:varint + family,
//!   bits and the address bytes (`network::Inet::encode`);
//!   numeric: len:varint + its binary send form; jsonb: len:varint + its
//!   stored form (json/storage.rs); every other type: len:varint + UTF-8
//!   text (bytea: its bytes)
//! varint   := unsigned LEB128
//! ```
//! Integers are little-endian. Decoding checks every length, so a corrupt
//! array is an error (XX001), never a panic.

use common::{PgError, PgResult, SqlState};

use super::{ArrayValue, Dim, MAX_DIMS};
use crate::numeric::Numeric;
use crate::{TypeId, Value};

fn put_varint(out: &mut Vec<u8>, mut v: usize) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn put_bytes(out: &mut Vec<u8>, b: &[u8]) {
    put_varint(out, b.len());
    out.extend_from_slice(b);
}

fn int_of(v: &Value) -> i64 {
    v.as_i64().unwrap_or(0)
}

/// Appends the stored form of `a`; `elem` is the column's element type.
pub fn encode(a: &ArrayValue, elem: TypeId, out: &mut Vec<u8>) {
    out.extend_from_slice(&elem.oid().to_le_bytes());
    out.push(a.dims.len() as u8);
    let has_nulls = a.has_nulls();
    out.push(has_nulls as u8);
    for d in &a.dims {
        out.extend_from_slice(&d.len.to_le_bytes());
        out.extend_from_slice(&d.lower.to_le_bytes());
    }
    if has_nulls {
        let start = out.len();
        out.resize(start + a.items.len().div_ceil(8), 0);
        for (i, v) in a.items.iter().enumerate() {
            if v.is_null() {
                out[start + i / 8] |= 1 << (i % 8);
            }
        }
    }
    let mut scratch = String::new();
    for v in a.items.iter().filter(|v| !v.is_null()) {
        put_element(elem, v, out, &mut scratch);
    }
}

fn put_element(elem: TypeId, v: &Value, out: &mut Vec<u8>, scratch: &mut String) {
    match elem {
        TypeId::Bool => out.push(matches!(v, Value::Bool(true)) as u8),
        TypeId::Int2 => out.extend_from_slice(&(int_of(v) as i16).to_le_bytes()),
        TypeId::Int4 => out.extend_from_slice(&(int_of(v) as i32).to_le_bytes()),
        TypeId::Int8 => out.extend_from_slice(&int_of(v).to_le_bytes()),
        t if t == TypeId::Oid || t.is_reg() => {
            out.extend_from_slice(&(int_of(v) as u32).to_le_bytes())
        }
        TypeId::Enum(_) => match v {
            Value::Enum(d) => out.extend_from_slice(&d.oid.to_le_bytes()),
            _ => out.extend_from_slice(&0u32.to_le_bytes()),
        },
        TypeId::Float4 => out.extend_from_slice(&(v.as_f64().unwrap_or(0.0) as f32).to_le_bytes()),
        TypeId::Float8 => out.extend_from_slice(&v.as_f64().unwrap_or(0.0).to_le_bytes()),
        TypeId::Date => match v {
            Value::Date(d) => out.extend_from_slice(&d.to_le_bytes()),
            _ => out.extend_from_slice(&0i32.to_le_bytes()),
        },
        TypeId::Timestamp | TypeId::Timestamptz => match v {
            Value::Timestamp(t) | Value::Timestamptz(t) => out.extend_from_slice(&t.to_le_bytes()),
            _ => out.extend_from_slice(&0i64.to_le_bytes()),
        },
        TypeId::Uuid => match v {
            Value::Uuid(u) => out.extend_from_slice(u),
            _ => out.extend_from_slice(&[0; 16]),
        },
        TypeId::Interval => {
            let iv = match v {
                Value::Interval(iv) => *iv,
                _ => crate::interval::Interval::new(0, 0, 0),
            };
            out.extend_from_slice(&iv.micros.to_le_bytes());
            out.extend_from_slice(&iv.days.to_le_bytes());
            out.extend_from_slice(&iv.months.to_le_bytes());
        }
        TypeId::MacAddr => match v {
            Value::MacAddr(m) => out.extend_from_slice(m),
            _ => out.extend_from_slice(&[0; 6]),
        },
        TypeId::MacAddr8 => match v {
            Value::MacAddr8(m) => out.extend_from_slice(m),
            _ => out.extend_from_slice(&[0; 8]),
        },
        TypeId::Money => match v {
            Value::Money(m) => out.extend_from_slice(&m.to_le_bytes()),
            _ => out.extend_from_slice(&0i64.to_le_bytes()),
        },
        TypeId::Inet | TypeId::Cidr => {
            let mut b = Vec::with_capacity(18);
            if let Value::Inet(n) = v {
                n.encode(&mut b);
            }
            put_bytes(out, &b);
        }
        _ => match v {
            Value::Numeric(n) => {
                let mut b = Vec::new();
                n.write_binary(&mut b);
                put_bytes(out, &b);
            }
            Value::Jsonb(j) => {
                let mut b = Vec::new();
                crate::json::storage::encode(j, &mut b);
                put_bytes(out, &b);
            }
            Value::Bytea(b) => put_bytes(out, b),
            Value::Text(s) => put_bytes(out, s.as_bytes()),
            other => {
                scratch.clear();
                crate::io::format_text(other, elem, &crate::IoSettings::UTC, scratch);
                put_bytes(out, scratch.as_bytes());
            }
        },
    }
}

fn corrupt() -> PgError {
    PgError::new(SqlState::DATA_CORRUPTED, "invalid stored array")
}

struct Reader<'a> {
    rest: &'a [u8],
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> PgResult<&'a [u8]> {
        if n > self.rest.len() {
            return Err(corrupt());
        }
        let (head, tail) = self.rest.split_at(n);
        self.rest = tail;
        Ok(head)
    }

    fn fixed<const N: usize>(&mut self) -> PgResult<[u8; N]> {
        Ok(self.take(N)?.try_into().expect("N bytes"))
    }

    fn varint(&mut self) -> PgResult<usize> {
        let mut v: usize = 0;
        for shift in (0..64).step_by(7) {
            let [b] = self.fixed::<1>()?;
            v |= ((b & 0x7f) as usize) << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(corrupt())
    }

    fn bytes(&mut self) -> PgResult<&'a [u8]> {
        let n = self.varint()?;
        self.take(n)
    }
}

/// Decodes a stored array.
pub fn decode(bytes: &[u8]) -> PgResult<ArrayValue> {
    let mut r = Reader { rest: bytes };
    let elem = TypeId::from_oid(u32::from_le_bytes(r.fixed::<4>()?)).ok_or_else(corrupt)?;
    let [ndim] = r.fixed::<1>()?;
    let [flags] = r.fixed::<1>()?;
    if ndim as usize > MAX_DIMS {
        return Err(corrupt());
    }
    let mut dims = Vec::with_capacity(ndim as usize);
    for _ in 0..ndim {
        let len = i32::from_le_bytes(r.fixed::<4>()?);
        let lower = i32::from_le_bytes(r.fixed::<4>()?);
        dims.push(Dim { len, lower });
    }
    let n = super::item_count(&dims).map_err(|_| corrupt())?;
    let nulls = if flags & 1 != 0 {
        Some(r.take(n.div_ceil(8))?)
    } else {
        None
    };
    let mut items = Vec::with_capacity(n);
    for i in 0..n {
        if nulls.is_some_and(|b| b[i / 8] & (1 << (i % 8)) != 0) {
            items.push(Value::Null);
            continue;
        }
        items.push(read_element(elem, &mut r)?);
    }
    if !r.rest.is_empty() {
        return Err(corrupt());
    }
    Ok(ArrayValue { elem, dims, items })
}

fn read_element(elem: TypeId, r: &mut Reader<'_>) -> PgResult<Value> {
    Ok(match elem {
        TypeId::Bool => Value::Bool(r.fixed::<1>()?[0] != 0),
        TypeId::Int2 => Value::Int2(i16::from_le_bytes(r.fixed()?)),
        TypeId::Int4 => Value::Int4(i32::from_le_bytes(r.fixed()?)),
        TypeId::Int8 => Value::Int8(i64::from_le_bytes(r.fixed()?)),
        t if t == TypeId::Oid || t.is_reg() => Value::Oid(u32::from_le_bytes(r.fixed()?)),
        TypeId::Enum(_) => crate::enums::datum(u32::from_le_bytes(r.fixed()?)),
        TypeId::Float4 => Value::Float4(f32::from_le_bytes(r.fixed()?)),
        TypeId::Float8 => Value::Float8(f64::from_le_bytes(r.fixed()?)),
        TypeId::Date => Value::Date(i32::from_le_bytes(r.fixed()?)),
        TypeId::Timestamp => Value::Timestamp(i64::from_le_bytes(r.fixed()?)),
        TypeId::Timestamptz => Value::Timestamptz(i64::from_le_bytes(r.fixed()?)),
        TypeId::Uuid => Value::Uuid(r.fixed()?),
        TypeId::Interval => {
            let micros = i64::from_le_bytes(r.fixed()?);
            let days = i32::from_le_bytes(r.fixed()?);
            let months = i32::from_le_bytes(r.fixed()?);
            Value::Interval(crate::interval::Interval::new(months, days, micros))
        }
        TypeId::Numeric => Value::Numeric(Box::new(
            Numeric::read_binary(r.bytes()?).map_err(|_| corrupt())?,
        )),
        TypeId::Jsonb => crate::json::build::jsonb_value(
            crate::json::storage::decode(r.bytes()?).map_err(|_| corrupt())?,
        ),
        TypeId::Bytea => Value::Bytea(r.bytes()?.to_vec()),
        TypeId::MacAddr => Value::MacAddr(r.fixed()?),
        TypeId::MacAddr8 => Value::MacAddr8(r.fixed()?),
        TypeId::Money => Value::Money(i64::from_le_bytes(r.fixed()?)),
        TypeId::Inet | TypeId::Cidr => {
            Value::Inet(crate::network::Inet::decode(r.bytes()?).ok_or_else(corrupt)?)
        }
        _ => Value::Text(
            std::str::from_utf8(r.bytes()?)
                .map_err(|_| corrupt())?
                .to_owned(),
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::IoSettings;

    #[test]
    fn stored_form_round_trips() {
        let io = IoSettings::UTC;
        for (elem, text) in [
            (TypeId::Int4, "{{1,NULL},{3,4}}"),
            (TypeId::Text, r#"[0:2]={"a b",NULL,""}"#),
            (TypeId::Numeric, "{1.50,NaN,-3}"),
            (TypeId::Bool, "{t,f,NULL}"),
            (TypeId::Interval, "{\"1 day\"}"),
            (TypeId::Jsonb, r#"{"{\"a\": 1}",null}"#),
            (TypeId::Int8, "{}"),
        ] {
            let a = super::super::text::parse(elem.into(), text, &io).unwrap();
            let mut b = Vec::new();
            encode(&a, elem, &mut b);
            assert_eq!(decode(&b).unwrap(), a, "{text}");
            assert!(decode(&b[..b.len().saturating_sub(1)]).is_err() || b.len() <= 6);
        }
    }
}
