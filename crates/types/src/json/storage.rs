//! The compact binary form of jsonb in heap and index tuples (and spill
//! files). It is not PostgreSQL's on-disk jsonb; only the text and the
//! send/recv forms are PostgreSQL's.
//!
//! ```text
//! document := version:u8 (= 1) value
//! value    := tag:u8 payload
//!   0 null | 1 false | 2 true
//!   3 number: len:varint, numeric in PostgreSQL's binary send form
//!   4 string: len:varint, UTF-8 bytes
//!   5 array:  count:varint, count values
//!   6 object: count:varint, count × (key len:varint, key bytes, value),
//!             keys unique and in jsonb key order (as the tree keeps them)
//! varint   := unsigned LEB128
//! ```
//! Decoding checks every length and tag, so a corrupt document is an error
//! (XX001), never a panic.
//!
//! Reads need not decode: `stored.rs` walks this form in place (an object's
//! keys are in key order, so a lookup stops at the first key past the one
//! sought; containers carry no byte length, so skipping one walks it, which
//! for documents of a few hundred bytes costs less than one allocation).
//! A `JsonbDoc` built from stored bytes (`doc.rs`) is validated once
//! (`validate`: tags, lengths, UTF-8, numbers) and then read by those walks
//! without further checks failing; its tree is decoded only when an
//! operation needs one. A sub-value's stored form is the version byte
//! followed by the value's bytes, so `->` copies a slice and decodes nothing.

use common::{stack_depth, PgError, PgResult, SqlState};

use super::Jsonb;
use crate::numeric::Numeric;

pub(crate) const VERSION: u8 = 1;

pub(crate) fn put_varint(out: &mut Vec<u8>, mut v: usize) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Appends the stored form of `v`.
pub fn encode(v: &Jsonb, out: &mut Vec<u8>) {
    out.push(VERSION);
    encode_value(v, out);
}

pub(crate) fn encode_value(v: &Jsonb, out: &mut Vec<u8>) {
    match v {
        Jsonb::Null => out.push(0),
        Jsonb::Bool(false) => out.push(1),
        Jsonb::Bool(true) => out.push(2),
        Jsonb::Number(n) => {
            out.push(3);
            let mut b = Vec::new();
            n.write_binary(&mut b);
            put_varint(out, b.len());
            out.extend_from_slice(&b);
        }
        Jsonb::String(s) => {
            out.push(4);
            put_varint(out, s.len());
            out.extend_from_slice(s.as_bytes());
        }
        Jsonb::Array(items) => {
            out.push(5);
            put_varint(out, items.len());
            for i in items {
                encode_value(i, out);
            }
        }
        Jsonb::Object(pairs) => {
            out.push(6);
            put_varint(out, pairs.len());
            for (k, v) in pairs {
                put_varint(out, k.len());
                out.extend_from_slice(k.as_bytes());
                encode_value(v, out);
            }
        }
    }
}

pub(crate) fn corrupt() -> PgError {
    PgError::new(SqlState::DATA_CORRUPTED, "invalid stored jsonb value")
}

pub(crate) struct Reader<'a> {
    pub(crate) b: &'a [u8],
    pub(crate) at: usize,
}

impl<'a> Reader<'a> {
    pub(crate) fn byte(&mut self) -> PgResult<u8> {
        let v = *self.b.get(self.at).ok_or_else(corrupt)?;
        self.at += 1;
        Ok(v)
    }

    pub(crate) fn varint(&mut self) -> PgResult<usize> {
        let mut v = 0usize;
        for shift in (0..64).step_by(7) {
            let b = self.byte()?;
            v |= ((b & 0x7f) as usize) << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(corrupt())
    }

    pub(crate) fn bytes(&mut self) -> PgResult<&'a [u8]> {
        let n = self.varint()?;
        let end = self.at.checked_add(n).ok_or_else(corrupt)?;
        let s = self.b.get(self.at..end).ok_or_else(corrupt)?;
        self.at = end;
        Ok(s)
    }

    fn string(&mut self) -> PgResult<String> {
        let b = self.bytes()?;
        std::str::from_utf8(b)
            .map(str::to_owned)
            .map_err(|_| corrupt())
    }

    /// Checks the value at the cursor and moves past it, building nothing
    /// (numbers are read to check them).
    fn check_value(&mut self) -> PgResult<()> {
        match self.byte()? {
            0..=2 => {}
            3 => {
                Numeric::read_binary(self.bytes()?).map_err(|_| corrupt())?;
            }
            4 => {
                std::str::from_utf8(self.bytes()?).map_err(|_| corrupt())?;
            }
            5 => {
                let _depth = stack_depth::enter()?;
                for _ in 0..self.varint()? {
                    self.check_value()?;
                }
            }
            6 => {
                let _depth = stack_depth::enter()?;
                for _ in 0..self.varint()? {
                    std::str::from_utf8(self.bytes()?).map_err(|_| corrupt())?;
                    self.check_value()?;
                }
            }
            _ => return Err(corrupt()),
        }
        Ok(())
    }

    pub(crate) fn value(&mut self) -> PgResult<Jsonb> {
        Ok(match self.byte()? {
            0 => Jsonb::Null,
            1 => Jsonb::Bool(false),
            2 => Jsonb::Bool(true),
            3 => Jsonb::Number(Numeric::read_binary(self.bytes()?).map_err(|_| corrupt())?),
            4 => Jsonb::String(self.string()?),
            5 => {
                let _depth = stack_depth::enter()?;
                let n = self.varint()?;
                // Every element takes a byte at least: a bound on a corrupt count.
                let mut items = Vec::with_capacity(n.min(self.b.len() - self.at));
                for _ in 0..n {
                    items.push(self.value()?);
                }
                Jsonb::Array(items)
            }
            6 => {
                let _depth = stack_depth::enter()?;
                let n = self.varint()?;
                let mut pairs = Vec::with_capacity(n.min(self.b.len() - self.at));
                for _ in 0..n {
                    let k = self.string()?;
                    pairs.push((k, self.value()?));
                }
                Jsonb::Object(pairs)
            }
            _ => return Err(corrupt()),
        })
    }
}

/// Reads a stored document written by `encode`.
pub fn decode(bytes: &[u8]) -> PgResult<Jsonb> {
    let mut r = Reader { b: bytes, at: 0 };
    if r.byte()? != VERSION {
        return Err(corrupt());
    }
    let v = r.value()?;
    if r.at != bytes.len() {
        return Err(corrupt());
    }
    Ok(v)
}

/// Checks a stored document as `decode` would, without building its tree.
pub fn validate(bytes: &[u8]) -> PgResult<()> {
    let mut r = Reader { b: bytes, at: 0 };
    if r.byte()? != VERSION {
        return Err(corrupt());
    }
    r.check_value()?;
    if r.at != bytes.len() {
        return Err(corrupt());
    }
    Ok(())
}
