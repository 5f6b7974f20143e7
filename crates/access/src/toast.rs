//! TOAST: values too large to keep a row on one page (PostgreSQL's "The
//! Oversized-Attribute Storage Technique", `src/backend/access/common/README`
//! and the TOAST chapter of its documentation).
//!
//! A varlena attribute is stored in one of three forms (the headers are in
//! `tuple.rs`): inline as written; compressed inline; or as a pointer to the
//! table's TOAST relation, where the (possibly compressed) bytes lie in
//! chunks. Which attributes are compressed and moved out, and in what order,
//! follows PostgreSQL's `heap_toast_insert_or_update`: a row over
//! `TOAST_TUPLE_THRESHOLD` is worked on, largest attribute first, until it
//! fits `TOAST_TUPLE_TARGET` (see `form_tuple_toasted`), honouring each
//! column's storage (`Storage`).
//!
//! Rules:
//! 1. Chunks are written before the row that points at them, under the same
//!    transaction, and never changed afterwards: they live and die with the
//!    rows that reference them by MVCC alone. A row's deleter (or an updater
//!    that replaces the value) deletes its chunks too (`delete_value`), so a
//!    chunk is dead to everyone only once every row version pointing at it
//!    is, and VACUUM of the TOAST relation removes it like any dead tuple.
//!    Chunks of a row that never became visible (an aborted insert, a crash)
//!    have an aborted xmin and go the same way.
//! 2. So a reader that can see a row can read its chunks without looking at
//!    their visibility: they cannot have been pruned (their xmax, if any, is
//!    the row's deleter, which the reader's snapshot does not see as
//!    committed-and-old). `fetch` checks each chunk's value id and sequence
//!    number and reports a mismatch as corruption.
//! 3. Chunks are found through a chain of tids, not PostgreSQL's index on
//!    (chunk_id, chunk_seq): the pointer holds the first chunk's tid and each
//!    chunk the next one's (written last to first so each knows its
//!    successor). No index to maintain, one page visit per chunk, and a
//!    prefix is read without touching the rest. A chunk fills a page.
//! 4. Readers of a row's chunks may hold the row's page share lock while they
//!    read TOAST pages (scans decode under the page lock). Writers never
//!    hold a heap page lock while touching the TOAST relation (chunks are
//!    written before the row, deleted after it), so the order heap page ->
//!    TOAST page is the only one and cannot deadlock.

use std::borrow::Cow;
use std::sync::atomic::{AtomicU64, Ordering};

use common::{PgError, PgResult, RelFileLocator, SqlState, Xid};
use storage::buffer::{BufferPool, ReadMode};
use storage::{page, ForkNumber};
use txn::TransactionManager;
use types::{DataType, TypeId, Value};

use crate::heap::{self, InsertTarget, ModifyResult, Requester, Tid, WaitForXid};
use crate::tuple;

/// A row longer than this is toasted (PostgreSQL's TOAST_TUPLE_THRESHOLD
/// for 8 KB pages).
pub const TOAST_TUPLE_THRESHOLD: usize = 2032;
/// Toasting stops once the row is this short.
pub const TOAST_TUPLE_TARGET: usize = 2032;
/// The largest value a field can hold (PostgreSQL's 1 GB varlena limit).
pub const MAX_VALUE_SIZE: usize = 0x3FFF_FFFF;

/// Bytes of a chunk tuple besides its data: the tuple header, value id,
/// sequence number, next chunk's block and offset, the bytea's header.
const CHUNK_OVERHEAD: usize = tuple::HEADER_SIZE + 8 + 4 + 4 + 2 + 4;
/// One chunk's data: the chunk tuple fills an empty page (tuples take
/// 8-byte-aligned space).
pub const CHUNK_SIZE: usize = (page::MAX_ITEM_SIZE & !7) - CHUNK_OVERHEAD;
/// Column types of a chunk tuple.
const CHUNK_TYPES: [DataType; 5] = [
    DataType::new(TypeId::Int8),
    DataType::new(TypeId::Int4),
    DataType::new(TypeId::Int4),
    DataType::new(TypeId::Int2),
    DataType::new(TypeId::Bytea),
];

/// First payload byte of a special varlena: what follows.
const TAG_COMPRESSED: u8 = 1;
const TAG_EXTERNAL: u8 = 2;
/// Payload of an external pointer: tag, method, raw and stored lengths,
/// value id, first chunk's block and offset.
const POINTER_PAYLOAD: usize = 1 + 1 + 4 + 4 + 8 + 4 + 2;
/// An external pointer as it sits in a row (4-byte header and payload).
pub const POINTER_SIZE: usize = 4 + POINTER_PAYLOAD;
/// Payload bytes of a compressed inline value before its data.
const COMPRESSED_PREFIX: usize = 1 + 1 + 4;

/// A column's storage strategy (pg_attribute.attstorage).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Storage {
    /// Inline and uncompressed (every fixed-width type).
    Plain,
    /// Compressed inline; moved out only if the row cannot fit otherwise.
    Main,
    /// Moved out uncompressed (fast substrings of long values).
    External,
    /// Compressed, then moved out (every varlena type's default).
    Extended,
}

impl Storage {
    pub fn code(self) -> char {
        match self {
            Storage::Plain => 'p',
            Storage::Main => 'm',
            Storage::External => 'e',
            Storage::Extended => 'x',
        }
    }
    pub fn from_code(c: char) -> Option<Storage> {
        Some(match c {
            'p' => Storage::Plain,
            'm' => Storage::Main,
            'e' => Storage::External,
            'x' => Storage::Extended,
            _ => return None,
        })
    }
    /// As `ALTER TABLE ... SET STORAGE` and `\d+` spell it.
    pub fn name(self) -> &'static str {
        match self {
            Storage::Plain => "plain",
            Storage::Main => "main",
            Storage::External => "external",
            Storage::Extended => "extended",
        }
    }
    pub fn from_name(s: &str) -> Option<Storage> {
        Some(match s.to_ascii_lowercase().as_str() {
            "plain" => Storage::Plain,
            "main" => Storage::Main,
            "external" => Storage::External,
            "extended" => Storage::Extended,
            _ => return None,
        })
    }
    /// The type's default (pg_type.typstorage): plain for fixed-width
    /// types, main for numeric, extended for the other variable-width ones.
    pub fn default_for(ty: TypeId) -> Storage {
        if ty == TypeId::Numeric {
            Storage::Main
        } else if is_varlena(ty) {
            Storage::Extended
        } else {
            Storage::Plain
        }
    }
}

/// Whether values of `ty` are stored as varlenas (and so can be toasted).
pub fn is_varlena(ty: TypeId) -> bool {
    tuple::fixed_width(ty).is_none()
}

/// A compression method (pg_attribute.attcompression).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compression {
    /// PostgreSQL's own LZ format (`pglz.rs`).
    Pglz,
    Lz4,
}

impl Compression {
    pub fn code(self) -> char {
        match self {
            Compression::Pglz => 'p',
            Compression::Lz4 => 'l',
        }
    }
    pub fn from_code(c: char) -> Option<Compression> {
        Some(match c {
            'p' => Compression::Pglz,
            'l' => Compression::Lz4,
            _ => return None,
        })
    }
    pub fn name(self) -> &'static str {
        match self {
            Compression::Pglz => "pglz",
            Compression::Lz4 => "lz4",
        }
    }
    pub fn from_name(s: &str) -> Option<Compression> {
        Some(match s.to_ascii_lowercase().as_str() {
            "pglz" => Compression::Pglz,
            "lz4" => Compression::Lz4,
            _ => return None,
        })
    }
    fn tag(self) -> u8 {
        match self {
            Compression::Pglz => 1,
            Compression::Lz4 => 2,
        }
    }
    fn from_tag(t: u8) -> PgResult<Option<Compression>> {
        match t {
            0 => Ok(None),
            1 => Ok(Some(Compression::Pglz)),
            2 => Ok(Some(Compression::Lz4)),
            _ => Err(corrupt(format!("unknown compression method {t}"))),
        }
    }
}

fn corrupt(what: String) -> PgError {
    PgError::new(SqlState::DATA_CORRUPTED, what)
}

/// Compresses `raw`; None when that does not make it smaller.
pub fn compress(method: Compression, raw: &[u8]) -> Option<Vec<u8>> {
    // PostgreSQL's pglz does not try values under 32 bytes either.
    if raw.len() < 32 {
        return None;
    }
    let out = match method {
        Compression::Lz4 => lz4_flex::block::compress(raw),
        Compression::Pglz => crate::pglz::compress(raw)?,
    };
    (out.len() + COMPRESSED_PREFIX + 2 < raw.len()).then_some(out)
}

/// The inverse of `compress`: `raw_len` bytes.
pub fn decompress(method: Compression, data: &[u8], raw_len: usize) -> PgResult<Vec<u8>> {
    let out = match method {
        Compression::Lz4 => lz4_flex::block::decompress(data, raw_len)
            .map_err(|e| corrupt(format!("compressed lz4 data is corrupt: {e}")))?,
        Compression::Pglz => crate::pglz::decompress(data, raw_len)
            .ok_or_else(|| corrupt("compressed pglz data is corrupt".into()))?,
    };
    if out.len() != raw_len {
        return Err(corrupt("compressed data is corrupt".into()));
    }
    Ok(out)
}

/// Where a value moved out of its row lies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ToastPointer {
    /// How the stored bytes are compressed (None: they are the value).
    pub method: Option<Compression>,
    /// The value's length.
    pub raw_len: u32,
    /// The bytes in the chunks.
    pub stored_len: u32,
    pub value_id: u64,
    /// The first chunk (rule 3).
    pub first: Tid,
}

impl ToastPointer {
    fn encode(&self, out: &mut Vec<u8>) {
        tuple::put_special_header(out, POINTER_PAYLOAD);
        out.push(TAG_EXTERNAL);
        out.push(self.method.map_or(0, Compression::tag));
        out.extend_from_slice(&self.raw_len.to_le_bytes());
        out.extend_from_slice(&self.stored_len.to_le_bytes());
        out.extend_from_slice(&self.value_id.to_le_bytes());
        out.extend_from_slice(&self.first.block.to_le_bytes());
        out.extend_from_slice(&self.first.offset.to_le_bytes());
    }

    fn decode(p: &[u8]) -> PgResult<ToastPointer> {
        if p.len() != POINTER_PAYLOAD {
            return Err(corrupt("malformed TOAST pointer".into()));
        }
        let u32_at = |o: usize| u32::from_le_bytes(p[o..o + 4].try_into().unwrap());
        Ok(ToastPointer {
            method: Compression::from_tag(p[1])?,
            raw_len: u32_at(2),
            stored_len: u32_at(6),
            value_id: u64::from_le_bytes(p[10..18].try_into().unwrap()),
            first: Tid {
                block: u32_at(18),
                offset: u16::from_le_bytes(p[22..24].try_into().unwrap()),
            },
        })
    }
}

/// A special varlena's payload (after its header), decoded.
#[derive(Debug)]
pub enum Special<'a> {
    Compressed {
        method: Compression,
        raw_len: usize,
        data: &'a [u8],
    },
    External(ToastPointer),
}

impl<'a> Special<'a> {
    pub fn parse(payload: &'a [u8]) -> PgResult<Special<'a>> {
        match payload.first() {
            Some(&TAG_COMPRESSED) if payload.len() >= COMPRESSED_PREFIX => {
                let method = Compression::from_tag(payload[1])?
                    .ok_or_else(|| corrupt("compressed value without a method".into()))?;
                let raw_len = u32::from_le_bytes(payload[2..6].try_into().unwrap()) as usize;
                Ok(Special::Compressed {
                    method,
                    raw_len,
                    data: &payload[COMPRESSED_PREFIX..],
                })
            }
            Some(&TAG_EXTERNAL) => Ok(Special::External(ToastPointer::decode(payload)?)),
            _ => Err(corrupt("unknown TOAST form".into())),
        }
    }

    /// The compression method, if the value is compressed.
    pub fn method(&self) -> Option<Compression> {
        match self {
            Special::Compressed { method, .. } => Some(*method),
            Special::External(p) => p.method,
        }
    }
}

/// A table's TOAST relation, for reading its values.
#[derive(Clone, Copy)]
pub struct ToastSource {
    pub pool: &'static BufferPool,
    pub rel: RelFileLocator,
}

/// The value a special varlena stands for (rule 2): decompressed, fetched
/// from `source` when external.
pub fn detoast(payload: &[u8], source: Option<ToastSource>) -> PgResult<Vec<u8>> {
    match Special::parse(payload)? {
        Special::Compressed {
            method,
            raw_len,
            data,
        } => decompress(method, data, raw_len),
        Special::External(p) => {
            let source = source.ok_or_else(|| {
                PgError::internal("an external TOAST pointer in a relation without TOAST")
            })?;
            let stored = fetch(source, &p, p.stored_len as usize)?;
            match p.method {
                None => Ok(stored),
                Some(m) => decompress(m, &stored, p.raw_len as usize),
            }
        }
    }
}

/// A chunk tuple's fields: value id, sequence number, next chunk, data.
fn parse_chunk(t: &[u8]) -> PgResult<(u64, u32, Option<Tid>, &[u8])> {
    let o = tuple::HEADER_SIZE;
    if tuple::natts(t) != CHUNK_TYPES.len() || t.len() < CHUNK_OVERHEAD - 3 {
        return Err(corrupt("malformed TOAST chunk".into()));
    }
    let value_id = u64::from_le_bytes(t[o..o + 8].try_into().unwrap());
    let seq = u32::from_le_bytes(t[o + 8..o + 12].try_into().unwrap());
    let block = u32::from_le_bytes(t[o + 12..o + 16].try_into().unwrap());
    let offset = u16::from_le_bytes(t[o + 16..o + 18].try_into().unwrap());
    let (hdr, len, special) = tuple::varlena_header(t, o + 18);
    let data = t
        .get(o + 18 + hdr..o + 18 + hdr + len)
        .filter(|_| !special)
        .ok_or_else(|| corrupt("malformed TOAST chunk".into()))?;
    let next = (offset != 0).then_some(Tid { block, offset });
    Ok((value_id, seq, next, data))
}

/// The first `want` stored bytes of the value at `p` (all of them when
/// `want` is its stored length): its chunks in order, checked (rule 2).
pub fn fetch(source: ToastSource, p: &ToastPointer, want: usize) -> PgResult<Vec<u8>> {
    let want = want.min(p.stored_len as usize);
    let mut out = Vec::with_capacity(want);
    let mut at = Some(p.first);
    let mut seq = 0u32;
    let missing = |seq: u32| {
        corrupt(format!(
            "missing chunk number {seq} for toast value {} in TOAST relation {}",
            p.value_id, source.rel.rel_number
        ))
    };
    while out.len() < want {
        let tid = at.ok_or_else(|| missing(seq))?;
        at = with_chunk(source, tid, |t| {
            let (value_id, chunk_seq, next, data) = parse_chunk(t)?;
            if value_id != p.value_id || chunk_seq != seq {
                return Err(missing(seq));
            }
            let take = data.len().min(want - out.len());
            out.extend_from_slice(&data[..take]);
            Ok(next)
        })?
        .ok_or_else(|| missing(seq))?;
        seq += 1;
    }
    Ok(out)
}

/// `f` of the chunk tuple at `tid`, under its page's share lock; None when
/// the slot holds none (or lies past the relation's end).
fn with_chunk<R>(
    source: ToastSource,
    tid: Tid,
    f: impl FnOnce(&[u8]) -> PgResult<R>,
) -> PgResult<Option<R>> {
    if tid.block >= source.pool.smgr().nblocks(source.rel, ForkNumber::Main)? {
        return Ok(None);
    }
    let buf = source.pool.read_buffer(
        source.rel,
        ForkNumber::Main,
        tid.block,
        ReadMode::Normal,
        None,
    )?;
    let pg = buf.read();
    page::item(&pg, tid.offset).map(f).transpose()
}

/// Value ids: unique enough to tell one value's chunks from another's
/// (chunks are found by tid; the id only checks them). The inserting xid
/// goes in the high bits, so ids never repeat across restarts.
static NEXT_VALUE: AtomicU64 = AtomicU64::new(0);

fn new_value_id(xid: Xid) -> u64 {
    (xid << 24) | (NEXT_VALUE.fetch_add(1, Ordering::Relaxed) & 0xFF_FFFF)
}

/// Where a table's values go when they are moved out of their rows, for
/// one statement.
pub struct ToastTarget<'a> {
    pub pool: &'static BufferPool,
    pub tm: &'a TransactionManager,
    pub rel: RelFileLocator,
    pub insert: InsertTarget,
}

/// Writes `stored` as chunks, last first (rule 3), and returns the pointer.
fn write_value(
    target: &mut ToastTarget<'_>,
    stored: &[u8],
    method: Option<Compression>,
    raw_len: usize,
    xid: Xid,
    cid: u32,
) -> PgResult<ToastPointer> {
    let value_id = new_value_id(xid);
    let n = stored.len().div_ceil(CHUNK_SIZE).max(1);
    let mut next: Option<Tid> = None;
    let mut bytes = Vec::with_capacity(CHUNK_SIZE + CHUNK_OVERHEAD);
    for seq in (0..n).rev() {
        let data = &stored[seq * CHUNK_SIZE..((seq + 1) * CHUNK_SIZE).min(stored.len())];
        let next_at = next.unwrap_or(Tid {
            block: 0,
            offset: 0,
        });
        let values = [
            Value::Int8(value_id as i64),
            Value::Int4(seq as i32),
            Value::Int4(next_at.block as i32),
            Value::Int2(next_at.offset as i16),
            Value::Bytea(data.to_vec()),
        ];
        tuple::form_tuple(&CHUNK_TYPES, &values, xid, cid, &mut bytes);
        next = Some(heap::insert(
            target.pool,
            target.tm,
            target.rel,
            &mut bytes,
            &mut target.insert,
        )?);
    }
    Ok(ToastPointer {
        method,
        raw_len: raw_len as u32,
        stored_len: stored.len() as u32,
        value_id,
        first: next.expect("at least one chunk"),
    })
}

/// Deletes the chunks of the value at `p` (a row's deleter or replacer,
/// rule 1). A chunk this transaction already deleted, or that another
/// one did, is left as it is.
pub fn delete_value(
    source: ToastSource,
    tm: &TransactionManager,
    p: &ToastPointer,
    who: Requester<'_>,
    cid: u32,
    wait: &mut WaitForXid<'_>,
) -> PgResult<()> {
    let mut at = Some(p.first);
    while let Some(tid) = at {
        let chunk = with_chunk(source, tid, |t| Ok(parse_chunk(t).ok().map(|c| (c.0, c.2))))?;
        at = match chunk.flatten() {
            Some((value_id, next)) if value_id == p.value_id => next,
            _ => return Ok(()),
        };
        let who = Requester {
            xid: who.xid,
            snapshot: who.snapshot,
        };
        match heap::delete(source.pool, source.rel, tid, who, cid, tm, wait)? {
            ModifyResult::Done(_)
            | ModifyResult::HeapOnly(_)
            | ModifyResult::SelfModified
            | ModifyResult::Updated(_) => {}
        }
    }
    Ok(())
}

/// The external pointers in a row, by column (what its deleter deletes).
pub fn external_pointers(t: &[u8], types: &[DataType]) -> PgResult<Vec<(usize, ToastPointer)>> {
    let mut out = Vec::new();
    if tuple::infomask(t) & tuple::HAS_EXTERNAL == 0 {
        return Ok(out);
    }
    tuple::for_each_varlena(t, types, |i, payload, special| {
        if special {
            if let Special::External(p) = Special::parse(payload)? {
                out.push((i, p));
            }
        }
        Ok(())
    })?;
    Ok(out)
}

/// How a table's columns are toasted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ColumnToast {
    pub storage: Storage,
    pub compression: Compression,
}

/// An attribute's state while a row is toasted.
#[derive(Default)]
struct Attr {
    /// Encoded bytes replacing the plain form (header included).
    encoded: Option<Vec<u8>>,
    size: usize,
    compressed: bool,
    external: bool,
    /// Compression was tried and did not pay, or is not to be tried.
    incompressible: bool,
}

/// Forms a row as `tuple::form_tuple` does, compressing values and moving
/// them to `target` (when the table has a TOAST relation) while it is over
/// `TOAST_TUPLE_THRESHOLD`, in PostgreSQL's order: extended columns'
/// values compressed, largest first, any that alone exceeds the target
/// moved out at once; then extended and external columns moved out; then
/// main columns compressed; then main columns moved out if the row still
/// does not fit a page. `reuse[i]`, when set, is column i's encoded
/// pointer from the version this one replaces, holding the same value (an
/// UPDATE that did not change it): it is kept, not written again.
/// Returns the values written to `target` (the caller deletes them if the
/// row is not stored after all).
#[allow(clippy::too_many_arguments)]
pub fn form_tuple_toasted(
    types: &[DataType],
    values: &[Value],
    columns: &[ColumnToast],
    reuse: &[Option<Vec<u8>>],
    mut target: Option<&mut ToastTarget<'_>>,
    xmin: Xid,
    cid: u32,
    out: &mut Vec<u8>,
) -> PgResult<Vec<ToastPointer>> {
    tuple::form_tuple(types, values, xmin, cid, out);
    let reusing = reuse.iter().any(Option::is_some);
    if out.len() <= TOAST_TUPLE_THRESHOLD && !reusing {
        return Ok(Vec::new());
    }
    let mut payloads: Vec<Option<Cow<'_, [u8]>>> = Vec::with_capacity(values.len());
    let mut attrs: Vec<Attr> = Vec::with_capacity(values.len());
    let mut total = out.len();
    for (i, (ty, v)) in types.iter().zip(values).enumerate() {
        let payload = tuple::varlena_payload(ty, v);
        let mut a = Attr::default();
        if let Some(p) = &payload {
            if p.len() > MAX_VALUE_SIZE {
                return Err(PgError::new(
                    SqlState::PROGRAM_LIMIT_EXCEEDED,
                    format!(
                        "value too large: {} bytes exceeds the maximum of {MAX_VALUE_SIZE}",
                        p.len()
                    ),
                ));
            }
            a.size = tuple::varlena_len(p.len());
            if let Some(Some(kept)) = reuse.get(i) {
                total = total - a.size + kept.len();
                a.size = kept.len();
                a.encoded = Some(kept.clone());
                a.external = true;
                a.compressed = true;
            }
        }
        payloads.push(payload);
        attrs.push(a);
    }
    let storage = |i: usize| columns.get(i).map_or(Storage::Extended, |c| c.storage);
    let method = |i: usize| columns.get(i).map_or(Compression::Lz4, |c| c.compression);
    // The largest attribute with one of `kinds`, still inline (and, for
    // compression, not yet compressed), bigger than a pointer.
    let biggest = |attrs: &[Attr], kinds: &[Storage], for_compression: bool| {
        attrs
            .iter()
            .enumerate()
            .filter(|(i, a)| {
                payloads[*i].is_some()
                    && kinds.contains(&storage(*i))
                    && !a.external
                    && !(for_compression && (a.compressed || a.incompressible))
                    && a.size > POINTER_SIZE
            })
            .max_by_key(|(i, a)| (a.size, usize::MAX - i))
            .map(|(i, _)| i)
    };
    let mut written = Vec::new();
    let xid = xmin;
    let try_compress = |i: usize, attrs: &mut [Attr], total: &mut usize| {
        let raw = payloads[i]
            .as_deref()
            .expect("chosen attributes are varlenas");
        let m = method(i);
        match compress(m, raw) {
            Some(c) => {
                let mut enc = Vec::with_capacity(c.len() + COMPRESSED_PREFIX + 4);
                tuple::put_special_header(&mut enc, COMPRESSED_PREFIX + c.len());
                enc.push(TAG_COMPRESSED);
                enc.push(m.tag());
                enc.extend_from_slice(&(raw.len() as u32).to_le_bytes());
                enc.extend_from_slice(&c);
                *total = *total - attrs[i].size + enc.len();
                attrs[i].size = enc.len();
                attrs[i].encoded = Some(enc);
                attrs[i].compressed = true;
            }
            None => attrs[i].incompressible = true,
        }
    };
    let mut externalize = |i: usize,
                           attrs: &mut [Attr],
                           total: &mut usize,
                           target: &mut ToastTarget<'_>|
     -> PgResult<()> {
        let raw = payloads[i]
            .as_deref()
            .expect("chosen attributes are varlenas");
        let p = match attrs[i].encoded.as_deref().filter(|_| attrs[i].compressed) {
            Some(enc) => {
                let Special::Compressed { method, data, .. } = Special::parse(&enc[4..])? else {
                    unreachable!("an inline value is compressed, not external")
                };
                write_value(target, data, Some(method), raw.len(), xid, cid)?
            }
            None => write_value(target, raw, None, raw.len(), xid, cid)?,
        };
        let mut enc = Vec::with_capacity(POINTER_SIZE);
        p.encode(&mut enc);
        *total = *total - attrs[i].size + enc.len();
        attrs[i].size = enc.len();
        attrs[i].encoded = Some(enc);
        attrs[i].external = true;
        written.push(p);
        Ok(())
    };
    let over = |total: usize| total > TOAST_TUPLE_TARGET;
    // 1: compress extended values; one that alone is over the target goes out.
    while over(total) {
        let Some(i) = biggest(&attrs, &[Storage::Extended, Storage::External], true) else {
            break;
        };
        if storage(i) == Storage::Extended {
            try_compress(i, &mut attrs, &mut total);
        } else {
            attrs[i].incompressible = true;
        }
        if attrs[i].size > TOAST_TUPLE_TARGET {
            if let Some(t) = target.as_deref_mut() {
                externalize(i, &mut attrs, &mut total, t)?;
            }
        }
    }
    // 2: move extended and external values out.
    if let Some(t) = target.as_deref_mut() {
        while over(total) {
            let Some(i) = biggest(&attrs, &[Storage::Extended, Storage::External], false) else {
                break;
            };
            externalize(i, &mut attrs, &mut total, t)?;
        }
    }
    // 3: compress main values.
    while over(total) {
        let Some(i) = biggest(&attrs, &[Storage::Main], true) else {
            break;
        };
        try_compress(i, &mut attrs, &mut total);
    }
    // 4: move main values out only if the row cannot fit a page otherwise.
    if let Some(t) = target {
        while total > page::MAX_ITEM_SIZE & !7 {
            let Some(i) = biggest(&attrs, &[Storage::Main], false) else {
                break;
            };
            externalize(i, &mut attrs, &mut total, t)?;
        }
    }
    let encoded: Vec<Option<Vec<u8>>> = attrs.into_iter().map(|a| a.encoded).collect();
    tuple::form_tuple_encoded(types, values, &encoded, xmin, cid, out);
    Ok(written)
}

/// Takes back values written for a row that was not stored after all.
pub fn discard_values(
    source: ToastSource,
    tm: &TransactionManager,
    values: &[ToastPointer],
    who: Requester<'_>,
    cid: u32,
    wait: &mut WaitForXid<'_>,
) -> PgResult<()> {
    for p in values {
        let who = Requester {
            xid: who.xid,
            snapshot: who.snapshot,
        };
        delete_value(source, tm, p, who, cid, wait)?;
    }
    Ok(())
}

/// How a stored attribute is held, for pg_column_size and
/// pg_column_compression: its bytes in the row (or in the chunks, when
/// external, as PostgreSQL counts it) and its compression method.
pub fn stored_form(payload: &[u8], special: bool) -> PgResult<(usize, Option<Compression>)> {
    if !special {
        return Ok((tuple::varlena_len(payload.len()), None));
    }
    Ok(match Special::parse(payload)? {
        Special::Compressed { method, .. } => (4 + payload.len(), Some(method)),
        Special::External(p) => (p.stored_len as usize, p.method),
    })
}

/// Whether an attribute's encoded bytes (header and all) are an external
/// pointer.
pub(crate) fn is_external_encoding(e: &[u8]) -> bool {
    e.len() == POINTER_SIZE && e[0] & 1 == 0 && e[4] == TAG_EXTERNAL && {
        let h = u32::from_le_bytes(e[0..4].try_into().unwrap());
        h & tuple::VARLENA_SPECIAL != 0
    }
}

impl ToastPointer {
    /// The pointer as it sits in a row (header and payload).
    pub fn encoded(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(POINTER_SIZE);
        self.encode(&mut out);
        out
    }
}
