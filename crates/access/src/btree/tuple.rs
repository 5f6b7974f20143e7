//! Index tuples: key values and the heap tid (README rule 19).
//!
//! ```text
//! key tuple (a leaf item, a high key's key, a pivot's key):
//! 0..4    heap block   } the heap tid, the last key column: entries are
//! 4..6    heap offset  } unique and sort by it after the key values
//! 6       flags (HAS_NULLS, MINUS_INFINITY)
//! 7       reserved
//! 8..     null bitmap (1 bit per column, 1 = not null) when HAS_NULLS,
//!         then the non-null values, unaligned: fixed-width types
//!         little-endian at their width, others with a 1-byte header
//!         `(len << 1) | 1` below 128 bytes, else 4 bytes `len << 1`
//! ```
//! Internal pages put the child's block number in front of the key tuple
//! (`page::child`). The first data item of an internal page is "minus
//! infinity": MINUS_INFINITY set, no tid, no values.
//!
//! Comparisons read the stored values in place (no allocation for the
//! fixed-width and text types), with the semantics of
//! `types::ops::compare_typed` and the column's DESC / NULLS FIRST.

use std::cmp::Ordering;

use common::{PgError, PgResult, SqlState};
use types::{TypeId, Value};

use super::{IndexDesc, KeyColumn};
use crate::heap::Tid;

pub(crate) const KEY_HEADER: usize = 8;
const HAS_NULLS: u8 = 0x01;
const MINUS_INFINITY: u8 = 0x02;

/// Largest leaf tuple (PostgreSQL's btree version 4 maximum): three fit on
/// a page with their pivots, so a split always succeeds.
pub const MAX_TUPLE_SIZE: usize = 2704;

fn fixed_width(ty: TypeId) -> Option<usize> {
    match ty {
        TypeId::Bool => Some(1),
        TypeId::Int2 => Some(2),
        TypeId::Int4 | TypeId::Float4 | TypeId::Date | TypeId::Oid => Some(4),
        t if t.is_reg() => Some(4),
        // An enum's label oid, as PostgreSQL stores it.
        TypeId::Enum(_) => Some(4),
        TypeId::Int8 | TypeId::Float8 | TypeId::Timestamp | TypeId::Timestamptz => Some(8),
        TypeId::Uuid => Some(16),
        TypeId::Interval => Some(16),
        TypeId::MacAddr => Some(6),
        TypeId::MacAddr8 | TypeId::Money => Some(8),
        _ => None,
    }
}

fn int_of(v: &Value) -> Option<i64> {
    match v {
        Value::Int2(x) => Some(*x as i64),
        Value::Int4(x) => Some(*x as i64),
        Value::Int8(x) => Some(*x),
        Value::Oid(x) => Some(*x as i64),
        _ => None,
    }
}

fn mismatch(ty: TypeId, v: &Value) -> PgError {
    PgError::internal(format!(
        "cannot store {v:?} in a B-tree key column of type {ty:?}"
    ))
}

fn out_of_range(ty: TypeId) -> PgError {
    PgError::new(
        SqlState::NUMERIC_VALUE_OUT_OF_RANGE,
        format!("value out of range for a B-tree key column of type {ty:?}"),
    )
}

fn put_varlena(out: &mut Vec<u8>, bytes: &[u8]) {
    if bytes.len() < 128 {
        out.push(((bytes.len() as u8) << 1) | 1);
    } else {
        out.extend_from_slice(&((bytes.len() as u32) << 1).to_le_bytes());
    }
    out.extend_from_slice(bytes);
}

/// Appends one non-null value in column type `ty`'s stored form.
fn put_value(out: &mut Vec<u8>, ty: TypeId, v: &Value) -> PgResult<()> {
    match ty {
        TypeId::Bool => match v {
            Value::Bool(b) => out.push(*b as u8),
            _ => return Err(mismatch(ty, v)),
        },
        TypeId::Int2 => {
            let x = int_of(v).ok_or_else(|| mismatch(ty, v))?;
            let x = i16::try_from(x).map_err(|_| out_of_range(ty))?;
            out.extend_from_slice(&x.to_le_bytes());
        }
        TypeId::Int4 => {
            let x = int_of(v).ok_or_else(|| mismatch(ty, v))?;
            let x = i32::try_from(x).map_err(|_| out_of_range(ty))?;
            out.extend_from_slice(&x.to_le_bytes());
        }
        TypeId::Int8 => {
            let x = int_of(v).ok_or_else(|| mismatch(ty, v))?;
            out.extend_from_slice(&x.to_le_bytes());
        }
        t if t == TypeId::Oid || t.is_reg() => {
            let x = int_of(v).ok_or_else(|| mismatch(ty, v))?;
            let x = u32::try_from(x).map_err(|_| out_of_range(ty))?;
            out.extend_from_slice(&x.to_le_bytes());
        }
        TypeId::Enum(_) => match v {
            Value::Enum(d) => out.extend_from_slice(&d.oid.to_le_bytes()),
            _ => return Err(mismatch(ty, v)),
        },
        TypeId::Date => match v {
            Value::Date(d) => out.extend_from_slice(&d.to_le_bytes()),
            _ => return Err(mismatch(ty, v)),
        },
        TypeId::Timestamp | TypeId::Timestamptz => match v {
            Value::Timestamp(t) | Value::Timestamptz(t) => out.extend_from_slice(&t.to_le_bytes()),
            _ => return Err(mismatch(ty, v)),
        },
        TypeId::Float4 => {
            let x = match v {
                Value::Float4(x) => *x,
                Value::Float8(x) => *x as f32,
                _ => int_of(v).ok_or_else(|| mismatch(ty, v))? as f32,
            };
            out.extend_from_slice(&x.to_le_bytes());
        }
        TypeId::Float8 => {
            let x = match v {
                Value::Float8(x) => *x,
                Value::Float4(x) => *x as f64,
                _ => int_of(v).ok_or_else(|| mismatch(ty, v))? as f64,
            };
            out.extend_from_slice(&x.to_le_bytes());
        }
        TypeId::Bytea => match v {
            Value::Bytea(b) => put_varlena(out, b),
            _ => return Err(mismatch(ty, v)),
        },
        TypeId::Uuid => match v {
            Value::Uuid(u) => out.extend_from_slice(u),
            _ => return Err(mismatch(ty, v)),
        },
        TypeId::Interval => match v {
            Value::Interval(iv) => crate::tuple::put_interval(out, iv),
            _ => return Err(mismatch(ty, v)),
        },
        TypeId::MacAddr => match v {
            Value::MacAddr(m) => out.extend_from_slice(m),
            _ => return Err(mismatch(ty, v)),
        },
        TypeId::MacAddr8 => match v {
            Value::MacAddr8(m) => out.extend_from_slice(m),
            _ => return Err(mismatch(ty, v)),
        },
        TypeId::Money => match v {
            Value::Money(m) => out.extend_from_slice(&m.to_le_bytes()),
            _ => return Err(mismatch(ty, v)),
        },
        TypeId::Inet | TypeId::Cidr => match v {
            Value::Inet(n) => {
                let mut stored = Vec::with_capacity(18);
                n.encode(&mut stored);
                put_varlena(out, &stored);
            }
            _ => return Err(mismatch(ty, v)),
        },
        TypeId::Numeric => match v {
            Value::Numeric(n) => {
                let mut s = String::new();
                n.write_text(&mut s);
                put_varlena(out, s.as_bytes());
            }
            _ => {
                let x = int_of(v).ok_or_else(|| mismatch(ty, v))?;
                put_varlena(out, x.to_string().as_bytes());
            }
        },
        t if t.is_array() => match v {
            Value::Array(a) => {
                let mut stored = Vec::new();
                let elem = t.array_element().unwrap_or(a.elem);
                types::array::storage::encode(a, elem, &mut stored);
                put_varlena(out, &stored);
            }
            _ => return Err(mismatch(ty, v)),
        },
        TypeId::Jsonb => match v {
            Value::Jsonb(j) => {
                let mut doc = Vec::new();
                j.encode(&mut doc);
                put_varlena(out, &doc);
            }
            _ => return Err(mismatch(ty, v)),
        },
        _ => match v {
            Value::Text(s) => put_varlena(out, s.as_bytes()),
            _ => return Err(mismatch(ty, v)),
        },
    }
    Ok(())
}

/// Builds the key tuple of (`values`, `tid`) into `out`.
pub(crate) fn encode(
    desc: &IndexDesc,
    values: &[Value],
    tid: Tid,
    out: &mut Vec<u8>,
) -> PgResult<()> {
    if values.len() != desc.columns.len() {
        return Err(PgError::internal(format!(
            "B-tree key has {} values for {} columns",
            values.len(),
            desc.columns.len()
        )));
    }
    out.clear();
    out.extend_from_slice(&tid.block.to_le_bytes());
    out.extend_from_slice(&tid.offset.to_le_bytes());
    let has_nulls = values.iter().any(Value::is_null);
    out.push(if has_nulls { HAS_NULLS } else { 0 });
    out.push(0);
    if has_nulls {
        let start = out.len();
        out.resize(start + values.len().div_ceil(8), 0);
        for (i, v) in values.iter().enumerate() {
            if !v.is_null() {
                out[start + i / 8] |= 1 << (i % 8);
            }
        }
    }
    for (col, v) in desc.columns.iter().zip(values) {
        if !v.is_null() {
            put_value(out, col.ty.id, v)?;
        }
    }
    Ok(())
}

/// The "minus infinity" key: sorts before everything (an internal page's
/// first data item).
pub(crate) fn minus_infinity(out: &mut Vec<u8>) {
    out.extend_from_slice(&[0, 0, 0, 0, 0, 0, MINUS_INFINITY, 0]);
}

pub(crate) fn is_minus_infinity(kt: &[u8]) -> bool {
    kt[6] & MINUS_INFINITY != 0
}

pub(crate) fn tid(kt: &[u8]) -> Tid {
    Tid {
        block: u32::from_le_bytes(kt[0..4].try_into().unwrap()),
        offset: u16::from_le_bytes([kt[4], kt[5]]),
    }
}

/// An error for a key too large to index (54000), as PostgreSQL words it.
/// 54000 for an entry too large for a page (its size rounded up to 8 as
/// PostgreSQL's MAXALIGN). The DETAIL names the heap tuple; the caller,
/// which knows them, adds the index's and the table's names
/// (`exec::index`).
pub(crate) fn check_size(len: usize, tid: Tid) -> PgResult<()> {
    let len = len.next_multiple_of(8);
    if len > MAX_TUPLE_SIZE {
        return Err(PgError::new(
            SqlState::PROGRAM_LIMIT_EXCEEDED,
            format!("index row size {len} exceeds btree version 4 maximum {MAX_TUPLE_SIZE}"),
        )
        .with_detail(format!(
            "Index row references tuple ({},{}).",
            tid.block, tid.offset
        ))
        .with_hint(
            "Values larger than 1/3 of a buffer page cannot be indexed.\n\
             Consider a function index of an MD5 hash of the value, or use full text indexing.",
        ));
    }
    Ok(())
}

/// One stored column value, borrowed from the page.
#[derive(Debug, Clone, Copy)]
enum Stored<'a> {
    Null,
    Fixed(&'a [u8]),
    Var(&'a [u8]),
}

/// Walks a key tuple's columns in order.
struct Columns<'a> {
    kt: &'a [u8],
    nulls: Option<&'a [u8]>,
    at: usize,
    i: usize,
}

impl<'a> Columns<'a> {
    fn new(kt: &'a [u8], ncols: usize) -> Self {
        let (nulls, at) = if kt[6] & HAS_NULLS != 0 {
            let n = ncols.div_ceil(8);
            (Some(&kt[KEY_HEADER..KEY_HEADER + n]), KEY_HEADER + n)
        } else {
            (None, KEY_HEADER)
        };
        Columns {
            kt,
            nulls,
            at,
            i: 0,
        }
    }

    #[inline]
    fn next(&mut self, ty: TypeId) -> Stored<'a> {
        let i = self.i;
        self.i += 1;
        if self.nulls.is_some_and(|b| b[i / 8] & (1 << (i % 8)) == 0) {
            return Stored::Null;
        }
        let (t, o) = (self.kt, self.at);
        if let Some(w) = fixed_width(ty) {
            self.at += w;
            return Stored::Fixed(&t[o..o + w]);
        }
        let (len, hdr) = if t[o] & 1 == 1 {
            ((t[o] >> 1) as usize, 1)
        } else {
            (
                (u32::from_le_bytes(t[o..o + 4].try_into().unwrap()) >> 1) as usize,
                4,
            )
        };
        self.at += hdr + len;
        Stored::Var(&t[o + hdr..o + hdr + len])
    }
}

fn le<const N: usize>(b: &[u8]) -> [u8; N] {
    b.try_into().unwrap()
}

/// The Value of a stored non-null column of type `ty`.
fn to_value(ty: TypeId, s: Stored<'_>) -> PgResult<Value> {
    Ok(match s {
        Stored::Null => Value::Null,
        Stored::Fixed(b) => match ty {
            TypeId::Bool => Value::Bool(b[0] != 0),
            TypeId::Int2 => Value::Int2(i16::from_le_bytes(le(b))),
            TypeId::Int4 => Value::Int4(i32::from_le_bytes(le(b))),
            TypeId::Date => Value::Date(i32::from_le_bytes(le(b))),
            t if t == TypeId::Oid || t.is_reg() => Value::Oid(u32::from_le_bytes(le(b))),
            TypeId::Enum(_) => types::enums::datum(u32::from_le_bytes(le(b))),
            TypeId::Float4 => Value::Float4(f32::from_le_bytes(le(b))),
            TypeId::Int8 => Value::Int8(i64::from_le_bytes(le(b))),
            TypeId::Float8 => Value::Float8(f64::from_le_bytes(le(b))),
            TypeId::Timestamp => Value::Timestamp(i64::from_le_bytes(le(b))),
            TypeId::Uuid => Value::Uuid(le(b)),
            TypeId::Interval => Value::Interval(crate::tuple::get_interval(b)),
            TypeId::MacAddr => Value::MacAddr(le(b)),
            TypeId::MacAddr8 => Value::MacAddr8(le(b)),
            TypeId::Money => Value::Money(i64::from_le_bytes(le(b))),
            _ => Value::Timestamptz(i64::from_le_bytes(le(b))),
        },
        Stored::Var(b) if matches!(ty, TypeId::Inet | TypeId::Cidr) => {
            Value::Inet(types::network::Inet::decode(b).ok_or_else(|| {
                PgError::new(SqlState::INDEX_CORRUPTED, "invalid inet in an index tuple")
            })?)
        }
        Stored::Var(b) if ty == TypeId::Bytea => Value::Bytea(b.to_vec()),
        Stored::Var(b) if ty.is_array() => {
            Value::array(types::array::storage::decode(b).map_err(|_| {
                PgError::new(SqlState::INDEX_CORRUPTED, "invalid array in an index tuple")
            })?)
        }
        Stored::Var(b) if ty == TypeId::Jsonb => Value::Jsonb(std::sync::Arc::new(
            types::json::JsonbDoc::from_stored(b).map_err(|_| {
                PgError::new(SqlState::INDEX_CORRUPTED, "invalid jsonb in an index tuple")
            })?,
        )),
        Stored::Var(b) => {
            let s = std::str::from_utf8(b).map_err(|_| {
                PgError::new(SqlState::INDEX_CORRUPTED, "invalid UTF-8 in an index tuple")
            })?;
            if ty == TypeId::Numeric {
                Value::Numeric(Box::new(types::numeric::Numeric::parse(s)?))
            } else {
                Value::Text(s.to_owned())
            }
        }
    })
}

/// Trailing blanks of a char(n) value do not count.
fn bpchar_trim(b: &[u8]) -> &[u8] {
    let mut end = b.len();
    while end > 0 && b[end - 1] == b' ' {
        end -= 1;
    }
    &b[..end]
}

/// Stored value against a search value, in the type's order (not yet
/// DESC-reversed); neither is NULL.
#[inline]
fn compare_raw(ty: TypeId, s: Stored<'_>, v: &Value) -> Ordering {
    match (s, v) {
        (Stored::Fixed(b), _) if matches!(ty, TypeId::Int4 | TypeId::Int8 | TypeId::Int2) => {
            let x = match b.len() {
                4 => i32::from_le_bytes(le(b)) as i64,
                8 => i64::from_le_bytes(le(b)),
                _ => i16::from_le_bytes(le(b)) as i64,
            };
            match v {
                Value::Int4(y) => x.cmp(&(*y as i64)),
                Value::Int8(y) => x.cmp(y),
                Value::Int2(y) => x.cmp(&(*y as i64)),
                _ => slow_compare(ty, s, v),
            }
        }
        // bytea and uuid: memcmp, then length (byteacmp, uuid_cmp).
        (Stored::Var(b), Value::Bytea(x)) => b.cmp(x.as_slice()),
        (Stored::Fixed(b), Value::Uuid(x)) => b.cmp(x.as_slice()),
        (Stored::Var(b), Value::Text(t)) if ty != TypeId::Numeric && ty != TypeId::Jsonb => {
            if ty == TypeId::Bpchar {
                bpchar_trim(b).cmp(bpchar_trim(t.as_bytes()))
            } else {
                b.cmp(t.as_bytes())
            }
        }
        _ => slow_compare(ty, s, v),
    }
}

fn slow_compare(ty: TypeId, s: Stored<'_>, v: &Value) -> Ordering {
    match to_value(ty, s) {
        Ok(stored) => types::ops::compare_typed(ty, &stored, v),
        // A value that does not decode sorts as its bytes would: only a
        // corrupt page has one, and `check` reports that.
        Err(_) => Ordering::Less,
    }
}

/// One column: stored value against search value in index order.
#[inline]
fn compare_column(col: &KeyColumn, s: Stored<'_>, v: &Value) -> Ordering {
    match (matches!(s, Stored::Null), v.is_null()) {
        (true, true) => Ordering::Equal,
        (true, false) if col.nulls_first => Ordering::Less,
        (true, false) => Ordering::Greater,
        (false, true) if col.nulls_first => Ordering::Greater,
        (false, true) => Ordering::Less,
        (false, false) => {
            let o = compare_raw(col.ty.id, s, v);
            if col.descending {
                o.reverse()
            } else {
                o
            }
        }
    }
}

/// The stored key's first `prefix.len()` columns against `prefix`, in
/// index order (`IndexDesc::compare_prefix` with the stored key on the
/// left). Not for the minus-infinity key.
#[inline]
pub(crate) fn compare_prefix(desc: &IndexDesc, kt: &[u8], prefix: &[Value]) -> Ordering {
    debug_assert!(!is_minus_infinity(kt));
    let mut cols = Columns::new(kt, desc.columns.len());
    for (col, v) in desc.columns.iter().zip(prefix) {
        let s = cols.next(col.ty.id);
        let o = compare_column(col, s, v);
        if o != Ordering::Equal {
            return o;
        }
    }
    Ordering::Equal
}

/// Where a search lands: a key prefix, and either the heap tid (a whole
/// entry, for inserts) or which side of the entries equal to the prefix.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SearchKey<'a> {
    pub values: &'a [Value],
    pub tid: Option<Tid>,
    /// Without a tid: true places the search after every entry equal to
    /// the prefix, false before them.
    pub after_equal: bool,
    /// A one-value prefix that is an integer: compared without decoding
    /// when the stored first column is a non-null integer (the common
    /// point lookup).
    int: Option<i64>,
}

impl<'a> SearchKey<'a> {
    fn new(values: &'a [Value], tid: Option<Tid>, after_equal: bool) -> Self {
        let int = match values {
            [Value::Int4(x)] => Some(*x as i64),
            [Value::Int8(x)] => Some(*x),
            [Value::Int2(x)] => Some(*x as i64),
            _ => None,
        };
        SearchKey {
            values,
            tid,
            after_equal,
            int,
        }
    }
    pub fn before(values: &'a [Value]) -> Self {
        Self::new(values, None, false)
    }
    pub fn after(values: &'a [Value]) -> Self {
        Self::new(values, None, true)
    }
    pub fn entry(values: &'a [Value], tid: Tid) -> Self {
        Self::new(values, Some(tid), false)
    }
}

/// The stored first column as an integer, if it is a non-null integer
/// (Oid included: `compare_typed` compares it with integers by value).
#[inline]
fn first_int(desc: &IndexDesc, kt: &[u8]) -> Option<i64> {
    if kt[6] != 0 {
        return None; // NULLs, or minus infinity
    }
    let b = &kt[KEY_HEADER..];
    Some(match desc.columns[0].ty.id {
        TypeId::Int4 => i32::from_le_bytes(le(&b[..4])) as i64,
        TypeId::Int8 => i64::from_le_bytes(le(&b[..8])),
        TypeId::Int2 => i16::from_le_bytes(le(&b[..2])) as i64,
        t if t == TypeId::Oid || t.is_reg() => u32::from_le_bytes(le(&b[..4])) as i64,
        _ => return None,
    })
}

/// The search key against a stored key: Equal only for the same entry.
#[inline]
pub(crate) fn compare_search(desc: &IndexDesc, key: &SearchKey<'_>, kt: &[u8]) -> Ordering {
    let prefix = match key.int.and_then(|y| Some((first_int(desc, kt)?, y))) {
        Some((x, y)) => {
            let o = x.cmp(&y);
            if desc.columns[0].descending {
                o.reverse()
            } else {
                o
            }
        }
        None => {
            if is_minus_infinity(kt) {
                return Ordering::Greater;
            }
            compare_prefix(desc, kt, key.values)
        }
    };
    if prefix != Ordering::Equal {
        return prefix.reverse();
    }
    match key.tid {
        Some(t) if key.values.len() == desc.columns.len() => t.cmp(&tid(kt)),
        _ if key.after_equal => Ordering::Greater,
        _ => Ordering::Less,
    }
}

/// Two stored keys in index order, the tid last (`check`; allocates).
pub(crate) fn compare_keys(desc: &IndexDesc, a: &[u8], b: &[u8]) -> PgResult<Ordering> {
    match (is_minus_infinity(a), is_minus_infinity(b)) {
        (true, true) => return Ok(Ordering::Equal),
        (true, false) => return Ok(Ordering::Less),
        (false, true) => return Ok(Ordering::Greater),
        (false, false) => {}
    }
    let mut values = Vec::with_capacity(desc.columns.len());
    decode(desc, b, &mut values)?;
    Ok(match compare_prefix(desc, a, &values) {
        Ordering::Equal => tid(a).cmp(&tid(b)),
        o => o,
    })
}

/// Appends the stored key's values to `out`.
pub(crate) fn decode(desc: &IndexDesc, kt: &[u8], out: &mut Vec<Value>) -> PgResult<()> {
    let mut cols = Columns::new(kt, desc.columns.len());
    for col in &desc.columns {
        out.push(to_value(col.ty.id, cols.next(col.ty.id))?);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use types::DataType;

    fn col(id: TypeId, descending: bool, nulls_first: bool) -> KeyColumn {
        KeyColumn {
            ty: DataType::new(id),
            descending,
            nulls_first,
        }
    }

    #[test]
    fn stored_keys_compare_as_values_do() {
        let desc = IndexDesc {
            columns: vec![
                col(TypeId::Int4, false, false),
                col(TypeId::Text, true, true),
                col(TypeId::Numeric, false, true),
            ],
        };
        let t = Tid {
            block: 3,
            offset: 7,
        };
        let num = |s: &str| Value::Numeric(Box::new(types::numeric::Numeric::parse(s).unwrap()));
        let rows = [
            vec![Value::Int4(1), Value::text("b"), num("1.5")],
            vec![Value::Int4(1), Value::Null, num("2")],
            vec![Value::Int4(-5), Value::text("zz"), Value::Null],
            vec![Value::Null, Value::text("a"), num("-3")],
            vec![Value::Int4(1), Value::text("a"), num("1.50")],
        ];
        let mut buf = Vec::new();
        for a in &rows {
            encode(&desc, a, t, &mut buf).unwrap();
            let mut back = Vec::new();
            decode(&desc, &buf, &mut back).unwrap();
            assert_eq!(desc.compare_prefix(&back, a), Ordering::Equal);
            for b in &rows {
                for n in 0..=3 {
                    assert_eq!(
                        compare_prefix(&desc, &buf, &b[..n]),
                        desc.compare_prefix(&a[..n], &b[..n]),
                        "{a:?} vs {b:?} on {n} columns"
                    );
                }
            }
        }
        // Cross-width integers compare by value; the tid breaks ties.
        encode(&desc, &rows[0], t, &mut buf).unwrap();
        assert_eq!(
            compare_prefix(&desc, &buf, &[Value::Int8(1)]),
            Ordering::Equal
        );
        let before = SearchKey::before(&rows[0][..1]);
        let after = SearchKey::after(&rows[0][..1]);
        assert_eq!(compare_search(&desc, &before, &buf), Ordering::Less);
        assert_eq!(compare_search(&desc, &after, &buf), Ordering::Greater);
        let same = SearchKey::entry(&rows[0], t);
        assert_eq!(compare_search(&desc, &same, &buf), Ordering::Equal);
        let later = SearchKey::entry(
            &rows[0],
            Tid {
                block: 3,
                offset: 8,
            },
        );
        assert_eq!(compare_search(&desc, &later, &buf), Ordering::Greater);
        let mut mi = Vec::new();
        minus_infinity(&mut mi);
        assert_eq!(compare_search(&desc, &before, &mi), Ordering::Greater);
    }

    #[test]
    fn the_integer_fast_path_agrees_with_decoding() {
        for (id, descending) in [
            (TypeId::Int4, true),
            (TypeId::Int8, false),
            (TypeId::Oid, false),
        ] {
            let desc = IndexDesc {
                columns: vec![col(id, descending, false), col(TypeId::Text, false, false)],
            };
            let stored = |v: i64| match id {
                TypeId::Int4 => Value::Int4(v as i32),
                TypeId::Int8 => Value::Int8(v),
                _ => Value::Oid(v as u32),
            };
            let t = Tid {
                block: 1,
                offset: 1,
            };
            let mut buf = Vec::new();
            for x in [0i64, 5, 9] {
                encode(&desc, &[stored(x), Value::text("a")], t, &mut buf).unwrap();
                for y in [
                    Value::Int4(5),
                    Value::Int8(9),
                    Value::Int2(0),
                    Value::Int8(-3),
                ] {
                    let vals = [y];
                    for fast in [SearchKey::before(&vals), SearchKey::after(&vals)] {
                        assert!(fast.int.is_some());
                        let slow = SearchKey { int: None, ..fast };
                        assert_eq!(
                            compare_search(&desc, &fast, &buf),
                            compare_search(&desc, &slow, &buf)
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn oversized_keys_are_refused_with_54000() {
        let tid = Tid {
            block: 0,
            offset: 1,
        };
        let err = check_size(MAX_TUPLE_SIZE + 1, tid).unwrap_err();
        assert_eq!(err.code, SqlState::PROGRAM_LIMIT_EXCEEDED);
        assert!(check_size(MAX_TUPLE_SIZE, tid).is_ok());
    }
}
