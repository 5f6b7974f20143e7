//! Heap tuple format.
//!
//! ```text
//! 0..8    xmin      (64-bit xid that inserted this version)
//! 8..16   xmax      (64-bit xid that deleted/updated it, or 0)
//! 16..20  cmin      (command id within xmin's transaction)
//! 20..24  cmax      (command id within xmax's transaction)
//! 24..28  ctid block  } forward link to the newer version after an update;
//! 28..30  ctid offset } points at itself otherwise
//! 30..32  infomask
//! 32..34  natts
//! 34..    null bitmap (1 bit per attribute, 1 = not null) when HAS_NULLS
//! hoff..  attribute data, unaligned
//! ```
//! Fixed-width types are stored little-endian at their natural width.
//! Variable-width values (varlenas) have a 1-byte header `(len << 1) | 1`
//! when shorter than 128 bytes, else a 4-byte header `len << 1`. Their
//! bytes are the text form, but for jsonb: its compact binary form
//! (`types::json::storage`). A 4-byte header with bit 31 set
//! (`VARLENA_SPECIAL`) holds a TOAST form instead, compressed or a pointer
//! out of line, which `toast.rs` reads (a plain value is under 1 GB, so
//! bit 31 of its header is clear).

use common::{PgResult, Xid};
use types::numeric::Numeric;
use types::{DataType, TypeId, Value};

pub const HEADER_SIZE: usize = 34;
pub const HAS_NULLS: u16 = 0x0001;
/// xmax updated this version: ctid points at the newer one.
pub const UPDATED: u16 = 0x0002;
/// xmax only locks the row (SELECT ... FOR UPDATE/SHARE): no deletion.
pub const XMAX_LOCK_ONLY: u16 = 0x0004;
/// With XMAX_LOCK_ONLY, the strength of xmax's lock (PostgreSQL's bits):
/// KEYSHR alone FOR KEY SHARE, KEYSHR|EXCL FOR SHARE, EXCL FOR NO KEY
/// UPDATE, EXCL with KEYS_UPDATED FOR UPDATE.
pub const XMAX_KEYSHR_LOCK: u16 = 0x0008;
pub const XMAX_EXCL_LOCK: u16 = 0x0010;
pub const XMAX_SHR_LOCK: u16 = XMAX_KEYSHR_LOCK | XMAX_EXCL_LOCK;
/// xmax deleted the row or changed its key (a DELETE; every UPDATE is a
/// non-key update until unique indexes exist), or locks it FOR UPDATE.
pub const KEYS_UPDATED: u16 = 0x0020;
/// Transactions besides xmax may hold locks on this version: they are in
/// the in-memory locker table (`heap::rowlock`). A hint: set when a locker
/// is added there, so a tuple without it is never looked up.
pub const XMAX_HAS_LOCKERS: u16 = 0x0040;
/// With UPDATED: the newer version is a heap-only tuple on the same page
/// (PostgreSQL's HEAP_HOT_UPDATED), so an index search that reaches this
/// version goes on along ctid. Describes xmax's update, so it goes with the
/// other xmax bits when xmax changes (a lock after an aborted HOT update).
pub const HOT_UPDATED: u16 = 0x0080;
/// This version has no index entries of its own (PostgreSQL's
/// HEAP_ONLY_TUPLE): indexes reach it through its HOT chain's root. Set
/// when the version is formed by a HOT update, never changed after.
pub const HEAP_ONLY: u16 = 0x0100;
/// Some attribute is a pointer into the TOAST relation (PostgreSQL's
/// HEAP_HASEXTERNAL): its deleter has chunks to delete.
pub const HAS_EXTERNAL: u16 = 0x0200;
/// Bit 31 of a 4-byte varlena header: a TOAST form (see the module doc).
pub const VARLENA_SPECIAL: u32 = 0x8000_0000;
/// Every bit that describes xmax.
pub const XMAX_BITS: u16 =
    UPDATED | XMAX_LOCK_ONLY | XMAX_SHR_LOCK | KEYS_UPDATED | XMAX_HAS_LOCKERS | HOT_UPDATED;

/// Whether this version is a heap-only tuple (see `HEAP_ONLY`).
pub fn is_heap_only(t: &[u8]) -> bool {
    infomask(t) & HEAP_ONLY != 0
}

/// Whether this version was HOT-updated: its ctid leads to the next member
/// of its HOT chain, on the same page (see `HOT_UPDATED`).
pub fn is_hot_updated(t: &[u8]) -> bool {
    infomask(t) & HOT_UPDATED != 0
}

pub fn xmin(t: &[u8]) -> Xid {
    u64::from_le_bytes(t[0..8].try_into().unwrap())
}
pub fn xmax(t: &[u8]) -> Xid {
    u64::from_le_bytes(t[8..16].try_into().unwrap())
}
/// The xmax a snapshot judges the version by: 0 when xmax only locks it
/// (a locker deletes nothing).
pub fn deleting_xmax(t: &[u8]) -> Xid {
    if infomask(t) & XMAX_LOCK_ONLY != 0 {
        0
    } else {
        xmax(t)
    }
}
pub fn cmin(t: &[u8]) -> u32 {
    u32::from_le_bytes(t[16..20].try_into().unwrap())
}
pub fn cmax(t: &[u8]) -> u32 {
    u32::from_le_bytes(t[20..24].try_into().unwrap())
}
pub fn ctid(t: &[u8]) -> (u32, u16) {
    (
        u32::from_le_bytes(t[24..28].try_into().unwrap()),
        u16::from_le_bytes(t[28..30].try_into().unwrap()),
    )
}
pub fn infomask(t: &[u8]) -> u16 {
    u16::from_le_bytes(t[30..32].try_into().unwrap())
}
pub fn natts(t: &[u8]) -> usize {
    u16::from_le_bytes(t[32..34].try_into().unwrap()) as usize
}
pub fn set_xmin(t: &mut [u8], xid: Xid) {
    t[0..8].copy_from_slice(&xid.to_le_bytes());
}
pub fn set_xmax(t: &mut [u8], xid: Xid, cid: u32) {
    t[8..16].copy_from_slice(&xid.to_le_bytes());
    t[20..24].copy_from_slice(&cid.to_le_bytes());
}
pub fn set_ctid(t: &mut [u8], block: u32, off: u16) {
    t[24..28].copy_from_slice(&block.to_le_bytes());
    t[28..30].copy_from_slice(&off.to_le_bytes());
}
pub fn set_infomask(t: &mut [u8], mask: u16) {
    t[30..32].copy_from_slice(&mask.to_le_bytes());
}

fn bitmap_len(natts: usize) -> usize {
    natts.div_ceil(8)
}

fn hoff(t: &[u8]) -> usize {
    if infomask(t) & HAS_NULLS != 0 {
        HEADER_SIZE + bitmap_len(natts(t))
    } else {
        HEADER_SIZE
    }
}

pub fn fixed_width(ty: TypeId) -> Option<usize> {
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

/// An interval as PostgreSQL lays it out: time (8), days (4), months (4).
pub fn put_interval(out: &mut Vec<u8>, iv: &types::interval::Interval) {
    out.extend_from_slice(&iv.micros.to_le_bytes());
    out.extend_from_slice(&iv.days.to_le_bytes());
    out.extend_from_slice(&iv.months.to_le_bytes());
}

/// The inverse of `put_interval` (16 bytes).
pub fn get_interval(b: &[u8]) -> types::interval::Interval {
    let i32_at = |o: usize| i32::from_le_bytes(b[o..o + 4].try_into().unwrap());
    types::interval::Interval::new(
        i32_at(12),
        i32_at(8),
        i64::from_le_bytes(b[0..8].try_into().unwrap()),
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

/// The header of a TOAST form with `payload_len` bytes after it.
pub(crate) fn put_special_header(out: &mut Vec<u8>, payload_len: usize) {
    out.extend_from_slice(&(VARLENA_SPECIAL | ((payload_len as u32) << 1)).to_le_bytes());
}

/// The bytes a plain varlena of `payload_len` bytes takes in a row.
pub fn varlena_len(payload_len: usize) -> usize {
    if payload_len < 128 {
        1 + payload_len
    } else {
        4 + payload_len
    }
}

/// The varlena at `o`: its header's length, its payload's length, and
/// whether it is a TOAST form.
#[inline]
pub fn varlena_header(t: &[u8], o: usize) -> (usize, usize, bool) {
    if t[o] & 1 == 1 {
        (1, (t[o] >> 1) as usize, false)
    } else {
        let h = u32::from_le_bytes(t[o..o + 4].try_into().unwrap());
        (
            4,
            ((h & !VARLENA_SPECIAL) >> 1) as usize,
            h & VARLENA_SPECIAL != 0,
        )
    }
}

/// The bytes a varlena value is stored as (None for NULL and fixed-width
/// values): what TOAST compresses or moves out.
pub fn varlena_payload<'v>(ty: &DataType, v: &'v Value) -> Option<std::borrow::Cow<'v, [u8]>> {
    use std::borrow::Cow;
    Some(match v {
        Value::Text(s) => Cow::Borrowed(s.as_bytes()),
        Value::Bytea(b) => Cow::Borrowed(&b[..]),
        Value::Numeric(n) => {
            let mut s = String::new();
            n.write_text(&mut s);
            Cow::Owned(s.into_bytes())
        }
        Value::Jsonb(j) => {
            let mut doc = Vec::new();
            j.encode(&mut doc);
            Cow::Owned(doc)
        }
        Value::Array(a) => {
            let mut stored = Vec::new();
            let elem = ty.id.array_element().unwrap_or(a.elem);
            types::array::storage::encode(a, elem, &mut stored);
            Cow::Owned(stored)
        }
        Value::Inet(n) => {
            let mut stored = Vec::new();
            n.encode(&mut stored);
            Cow::Owned(stored)
        }
        _ => return None,
    })
}

/// Calls `f(column, payload, is_toast_form)` for each non-null varlena
/// attribute of a tuple.
pub fn for_each_varlena(
    t: &[u8],
    types: &[DataType],
    mut f: impl FnMut(usize, &[u8], bool) -> PgResult<()>,
) -> PgResult<()> {
    let n = natts(t).min(types.len());
    let nulls =
        (infomask(t) & HAS_NULLS != 0).then(|| &t[HEADER_SIZE..HEADER_SIZE + bitmap_len(natts(t))]);
    let mut o = hoff(t);
    for (i, ty) in types.iter().enumerate().take(n) {
        if nulls.is_some_and(|b| b[i / 8] & (1 << (i % 8)) == 0) {
            continue;
        }
        match fixed_width(ty.id) {
            Some(w) => o += w,
            None => {
                let (hdr, len, special) = varlena_header(t, o);
                f(i, &t[o + hdr..o + hdr + len], special)?;
                o += hdr + len;
            }
        }
    }
    Ok(())
}

/// Builds a tuple from values already coerced to the column types.
pub fn form_tuple(types: &[DataType], values: &[Value], xmin: Xid, cid: u32, out: &mut Vec<u8>) {
    form_tuple_encoded(types, values, &[], xmin, cid, out)
}

/// `form_tuple`, with attribute i written as `encoded[i]` (header and all)
/// where that is set: a TOAST form `toast::form_tuple_toasted` chose.
pub(crate) fn form_tuple_encoded(
    types: &[DataType],
    values: &[Value],
    encoded: &[Option<Vec<u8>>],
    xmin: Xid,
    cid: u32,
    out: &mut Vec<u8>,
) {
    debug_assert_eq!(types.len(), values.len());
    out.clear();
    let has_nulls = values.iter().any(Value::is_null);
    let has_external = encoded
        .iter()
        .flatten()
        .any(|e| crate::toast::is_external_encoding(e));
    let mask = if has_nulls { HAS_NULLS } else { 0 } | if has_external { HAS_EXTERNAL } else { 0 };
    out.extend_from_slice(&xmin.to_le_bytes());
    out.extend_from_slice(&0u64.to_le_bytes());
    out.extend_from_slice(&cid.to_le_bytes());
    out.extend_from_slice(&0u32.to_le_bytes());
    out.extend_from_slice(&[0u8; 6]);
    out.extend_from_slice(&mask.to_le_bytes());
    out.extend_from_slice(&(values.len() as u16).to_le_bytes());
    if has_nulls {
        let start = out.len();
        out.resize(start + bitmap_len(values.len()), 0);
        for (i, v) in values.iter().enumerate() {
            if !v.is_null() {
                out[start + i / 8] |= 1 << (i % 8);
            }
        }
    }
    let mut scratch = String::new();
    for (i, (ty, v)) in types.iter().zip(values).enumerate() {
        if let Some(Some(e)) = encoded.get(i) {
            out.extend_from_slice(e);
            continue;
        }
        match v {
            Value::Null => {}
            Value::Bool(b) => out.push(*b as u8),
            Value::Int2(x) => out.extend_from_slice(&x.to_le_bytes()),
            Value::Int4(x) | Value::Date(x) => out.extend_from_slice(&x.to_le_bytes()),
            Value::Oid(x) => out.extend_from_slice(&x.to_le_bytes()),
            Value::Enum(d) => out.extend_from_slice(&d.oid.to_le_bytes()),
            Value::Int8(x) | Value::Timestamp(x) | Value::Timestamptz(x) => {
                out.extend_from_slice(&x.to_le_bytes())
            }
            Value::Float4(x) => out.extend_from_slice(&x.to_le_bytes()),
            Value::Float8(x) => out.extend_from_slice(&x.to_le_bytes()),
            Value::Interval(iv) => put_interval(out, iv),
            Value::Text(s) => put_varlena(out, s.as_bytes()),
            Value::Bytea(b) => put_varlena(out, b),
            Value::Uuid(u) => out.extend_from_slice(u),
            Value::MacAddr(m) => out.extend_from_slice(m),
            Value::MacAddr8(m) => out.extend_from_slice(m),
            Value::Money(m) => out.extend_from_slice(&m.to_le_bytes()),
            Value::Inet(n) => {
                let mut stored = Vec::with_capacity(18);
                n.encode(&mut stored);
                put_varlena(out, &stored);
            }
            Value::Numeric(n) => {
                scratch.clear();
                n.write_text(&mut scratch);
                put_varlena(out, scratch.as_bytes());
            }
            Value::Jsonb(j) => {
                let mut doc = Vec::new();
                j.encode(&mut doc);
                put_varlena(out, &doc);
            }
            Value::Array(a) => {
                let mut stored = Vec::new();
                let elem = ty.id.array_element().unwrap_or(a.elem);
                types::array::storage::encode(a, elem, &mut stored);
                put_varlena(out, &stored);
            }
        }
    }
}

/// Incremental decoder of one tuple's attributes (PostgreSQL's slot_deform_tuple):
/// decodes columns in order, remembering where it stopped.
pub struct Deformer<'t> {
    tuple: &'t [u8],
    /// Where the relation's out-of-line values are (None: it has none).
    toast: Option<crate::toast::ToastSource>,
    natts: usize,
    nulls: Option<&'t [u8]>,
    offset: usize,
    next: usize,
}

impl<'t> Deformer<'t> {
    pub fn new(tuple: &'t [u8], toast: Option<crate::toast::ToastSource>) -> Self {
        let n = natts(tuple);
        let nulls = (infomask(tuple) & HAS_NULLS != 0)
            .then(|| &tuple[HEADER_SIZE..HEADER_SIZE + bitmap_len(n)]);
        Deformer {
            tuple,
            toast,
            natts: n,
            nulls,
            offset: hoff(tuple),
            next: 0,
        }
    }

    /// Number of attributes decoded so far.
    pub fn decoded(&self) -> usize {
        self.next
    }

    /// Decodes attributes up to (excluding) `upto` into `out`. Attributes
    /// missing from the tuple (added by ALTER TABLE ADD COLUMN later) are NULL.
    pub fn deform_until(
        &mut self,
        types: &[DataType],
        upto: usize,
        out: &mut Vec<Value>,
    ) -> PgResult<()> {
        self.deform_masked(types, upto, None, out)
    }

    /// `deform_until`, but attributes whose `wanted` entry is false (or
    /// beyond it) are skipped over and stand as NULL in `out`: nothing is
    /// built for a column no one reads (projection pushdown).
    pub fn deform_masked(
        &mut self,
        types: &[DataType],
        upto: usize,
        wanted: Option<&[bool]>,
        out: &mut Vec<Value>,
    ) -> PgResult<()> {
        while self.next < upto {
            let i = self.next;
            self.next += 1;
            if i >= self.natts || self.nulls.is_some_and(|b| b[i / 8] & (1 << (i % 8)) == 0) {
                out.push(Value::Null);
                continue;
            }
            let ty = types[i];
            let t = self.tuple;
            let o = self.offset;
            if wanted.is_some_and(|w| !w.get(i).copied().unwrap_or(false)) {
                self.offset += match fixed_width(ty.id) {
                    Some(w) => w,
                    None => {
                        let (hdr, len, _) = varlena_header(t, o);
                        hdr + len
                    }
                };
                out.push(Value::Null);
                continue;
            }
            let v = if let Some(w) = fixed_width(ty.id) {
                self.offset += w;
                let b = &t[o..o + w];
                match ty.id {
                    TypeId::Bool => Value::Bool(b[0] != 0),
                    TypeId::Int2 => Value::Int2(i16::from_le_bytes(b.try_into().unwrap())),
                    TypeId::Int4 => Value::Int4(i32::from_le_bytes(b.try_into().unwrap())),
                    TypeId::Date => Value::Date(i32::from_le_bytes(b.try_into().unwrap())),
                    t if t == TypeId::Oid || t.is_reg() => {
                        Value::Oid(u32::from_le_bytes(b.try_into().unwrap()))
                    }
                    TypeId::Enum(_) => {
                        types::enums::datum(u32::from_le_bytes(b.try_into().unwrap()))
                    }
                    TypeId::Float4 => Value::Float4(f32::from_le_bytes(b.try_into().unwrap())),
                    TypeId::Int8 => Value::Int8(i64::from_le_bytes(b.try_into().unwrap())),
                    TypeId::Float8 => Value::Float8(f64::from_le_bytes(b.try_into().unwrap())),
                    TypeId::Timestamp => {
                        Value::Timestamp(i64::from_le_bytes(b.try_into().unwrap()))
                    }
                    TypeId::Uuid => Value::Uuid(b.try_into().unwrap()),
                    TypeId::Interval => Value::Interval(get_interval(b)),
                    TypeId::MacAddr => Value::MacAddr(b.try_into().unwrap()),
                    TypeId::MacAddr8 => Value::MacAddr8(b.try_into().unwrap()),
                    TypeId::Money => Value::Money(i64::from_le_bytes(b.try_into().unwrap())),
                    _ => Value::Timestamptz(i64::from_le_bytes(b.try_into().unwrap())),
                }
            } else {
                let (hdr, len, special) = varlena_header(t, o);
                let stored = &t[o + hdr..o + hdr + len];
                self.offset += hdr + len;
                let mut detoasted = None;
                let bytes = if special {
                    let v = crate::toast::detoast(stored, self.toast)?;
                    // Large text and bytea move into the value: no second copy.
                    if ty.id == TypeId::Bytea {
                        out.push(Value::Bytea(v));
                        continue;
                    }
                    if ty.id == TypeId::Text {
                        out.push(Value::Text(String::from_utf8(v).map_err(|_| {
                            common::PgError::new(
                                common::SqlState::DATA_CORRUPTED,
                                "invalid UTF-8 in stored tuple",
                            )
                        })?));
                        continue;
                    }
                    &detoasted.insert(v)[..]
                } else {
                    stored
                };
                if ty.id == TypeId::Bytea {
                    out.push(Value::Bytea(bytes.to_vec()));
                    continue;
                }
                if ty.id == TypeId::Jsonb {
                    // Kept as stored bytes: operators read them in place.
                    out.push(Value::Jsonb(std::sync::Arc::new(
                        types::json::JsonbDoc::from_stored(bytes)?,
                    )));
                    continue;
                }
                if ty.id.is_array() {
                    out.push(Value::array(types::array::storage::decode(bytes)?));
                    continue;
                }
                if matches!(ty.id, TypeId::Inet | TypeId::Cidr) {
                    out.push(Value::Inet(
                        types::network::Inet::decode(bytes).ok_or_else(|| {
                            common::PgError::new(
                                common::SqlState::DATA_CORRUPTED,
                                "invalid inet in stored tuple",
                            )
                        })?,
                    ));
                    continue;
                }
                let s = std::str::from_utf8(bytes).map_err(|_| {
                    common::PgError::new(
                        common::SqlState::DATA_CORRUPTED,
                        "invalid UTF-8 in stored tuple",
                    )
                })?;
                if ty.id == TypeId::Numeric {
                    Value::Numeric(Box::new(Numeric::parse(s)?))
                } else {
                    Value::Text(s.to_owned())
                }
            };
            out.push(v);
        }
        Ok(())
    }
}

/// Decodes all `types.len()` attributes.
pub fn deform_tuple(
    tuple: &[u8],
    types: &[DataType],
    toast: Option<crate::toast::ToastSource>,
    out: &mut Vec<Value>,
) -> PgResult<()> {
    out.clear();
    Deformer::new(tuple, toast).deform_until(types, types.len(), out)
}
