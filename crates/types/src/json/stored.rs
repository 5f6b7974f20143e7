//! Reads of a jsonb value in its stored form (`storage.rs`), in place: the
//! operators find a key or an element by walking the bytes and decode only
//! what they return. The bytes were validated when the `JsonbDoc` holding
//! them was made, so these walks do not find corruption; they still return
//! errors rather than panic if they did.

use std::cmp::Ordering;

use common::{stack_depth, PgResult};

use super::storage::{corrupt, Reader, VERSION};
use super::{escape_string, Jsonb, JsonbDoc};
use crate::numeric::Numeric;

const TAG_NULL: u8 = 0;
const TAG_FALSE: u8 = 1;
const TAG_TRUE: u8 = 2;
const TAG_NUMBER: u8 = 3;
const TAG_STRING: u8 = 4;
const TAG_ARRAY: u8 = 5;
const TAG_OBJECT: u8 = 6;

impl<'b> Reader<'b> {
    /// Moves past the value at the cursor.
    fn skip_value(&mut self) -> PgResult<()> {
        match self.byte()? {
            TAG_NULL..=TAG_TRUE => {}
            TAG_NUMBER | TAG_STRING => {
                self.bytes()?;
            }
            TAG_ARRAY => {
                for _ in 0..self.varint()? {
                    self.skip_value()?;
                }
            }
            TAG_OBJECT => {
                for _ in 0..self.varint()? {
                    self.bytes()?;
                    self.skip_value()?;
                }
            }
            _ => return Err(corrupt()),
        }
        Ok(())
    }

    /// The value at the cursor as a slice, moving past it.
    fn value_slice(&mut self) -> PgResult<StoredValue<'b>> {
        let start = self.at;
        self.skip_value()?;
        Ok(StoredValue {
            b: &self.b[start..self.at],
        })
    }
}

/// One stored value: its tag byte and payload, exactly.
#[derive(Clone, Copy, Debug)]
pub struct StoredValue<'a> {
    b: &'a [u8],
}

fn utf8(b: &[u8]) -> PgResult<&str> {
    std::str::from_utf8(b).map_err(|_| corrupt())
}

impl<'a> StoredValue<'a> {
    /// The value of a whole stored document (after its version byte).
    pub(crate) fn of_document(doc: &'a [u8]) -> StoredValue<'a> {
        debug_assert_eq!(doc.first(), Some(&VERSION));
        StoredValue { b: &doc[1..] }
    }

    fn tag(&self) -> u8 {
        self.b[0]
    }

    /// A reader just past the tag.
    fn payload(&self) -> Reader<'a> {
        Reader { b: self.b, at: 1 }
    }

    pub fn is_array(&self) -> bool {
        self.tag() == TAG_ARRAY
    }

    pub fn is_object(&self) -> bool {
        self.tag() == TAG_OBJECT
    }

    pub fn is_scalar(&self) -> bool {
        !self.is_array() && !self.is_object()
    }

    /// `jsonb_typeof`.
    pub fn type_name(&self) -> &'static str {
        match self.tag() {
            TAG_NULL => "null",
            TAG_FALSE | TAG_TRUE => "boolean",
            TAG_NUMBER => "number",
            TAG_STRING => "string",
            TAG_ARRAY => "array",
            _ => "object",
        }
    }

    /// The number of elements or pairs of a container.
    pub fn len(&self) -> PgResult<Option<usize>> {
        if self.is_scalar() {
            return Ok(None);
        }
        Ok(Some(self.payload().varint()?))
    }

    /// A string scalar's text.
    pub fn as_str(&self) -> PgResult<Option<&'a str>> {
        if self.tag() != TAG_STRING {
            return Ok(None);
        }
        utf8(self.payload().bytes()?).map(Some)
    }

    /// The value of `key` in an object: keys are in key order, so the walk
    /// stops at the first key past it.
    pub fn get_key(&self, key: &str) -> PgResult<Option<StoredValue<'a>>> {
        if !self.is_object() {
            return Ok(None);
        }
        let mut r = self.payload();
        let want = key.as_bytes();
        for _ in 0..r.varint()? {
            let k = r.bytes()?;
            match k.len().cmp(&want.len()).then_with(|| k.cmp(want)) {
                Ordering::Less => r.skip_value()?,
                Ordering::Equal => return r.value_slice().map(Some),
                Ordering::Greater => return Ok(None),
            }
        }
        Ok(None)
    }

    /// Element `index` of an array; negative indexes count from the end.
    pub fn get_index(&self, index: i64) -> PgResult<Option<StoredValue<'a>>> {
        if !self.is_array() {
            return Ok(None);
        }
        let mut r = self.payload();
        let n = r.varint()? as i64;
        let i = if index < 0 { n + index } else { index };
        if !(0..n).contains(&i) {
            return Ok(None);
        }
        for _ in 0..i {
            r.skip_value()?;
        }
        r.value_slice().map(Some)
    }

    /// An array's elements.
    pub fn elements(&self) -> PgResult<Vec<StoredValue<'a>>> {
        let mut r = self.payload();
        let n = r.varint()?;
        let mut out = Vec::with_capacity(n.min(self.b.len()));
        for _ in 0..n {
            out.push(r.value_slice()?);
        }
        Ok(out)
    }

    /// An object's pairs, in key order.
    pub fn pairs(&self) -> PgResult<Vec<(&'a str, StoredValue<'a>)>> {
        let mut r = self.payload();
        let n = r.varint()?;
        let mut out = Vec::with_capacity(n.min(self.b.len()));
        for _ in 0..n {
            let k = utf8(r.bytes()?)?;
            out.push((k, r.value_slice()?));
        }
        Ok(out)
    }

    /// The value as a tree.
    pub fn decode(&self) -> PgResult<Jsonb> {
        Reader { b: self.b, at: 0 }.value()
    }

    /// The value as a document of its own (its bytes copied, nothing decoded).
    pub fn to_doc(&self) -> JsonbDoc {
        let mut bytes = Vec::with_capacity(self.b.len() + 1);
        bytes.push(VERSION);
        bytes.extend_from_slice(self.b);
        JsonbDoc::from_validated(bytes.into_boxed_slice())
    }

    /// The value's bytes without the version byte (to embed in a container).
    pub(crate) fn value_bytes(&self) -> &'a [u8] {
        self.b
    }

    /// `->>`'s text: strings unquoted, null as None, the rest as text.
    pub fn to_text_unquoted(&self) -> PgResult<Option<String>> {
        Ok(match self.tag() {
            TAG_NULL => None,
            TAG_STRING => self.as_str()?.map(str::to_owned),
            _ => {
                let mut s = String::new();
                self.write_text(&mut s)?;
                Some(s)
            }
        })
    }

    /// The text form, as `Jsonb::write_text` writes the decoded tree.
    pub fn write_text(&self, out: &mut String) -> PgResult<()> {
        let mut r = Reader { b: self.b, at: 0 };
        write_value_text(&mut r, out)
    }

    /// `?` on this value: a key of an object, a string element of an array,
    /// or the string itself.
    pub fn exists(&self, key: &str) -> PgResult<bool> {
        match self.tag() {
            TAG_OBJECT => Ok(self.get_key(key)?.is_some()),
            TAG_ARRAY => {
                for e in self.elements()? {
                    if e.as_str()? == Some(key) {
                        return Ok(true);
                    }
                }
                Ok(false)
            }
            _ => Ok(self.as_str()? == Some(key)),
        }
    }
}

fn write_value_text(r: &mut Reader<'_>, out: &mut String) -> PgResult<()> {
    match r.byte()? {
        TAG_NULL => out.push_str("null"),
        TAG_FALSE => out.push_str("false"),
        TAG_TRUE => out.push_str("true"),
        TAG_NUMBER => Numeric::read_binary(r.bytes()?)
            .map_err(|_| corrupt())?
            .write_text(out),
        TAG_STRING => escape_string(utf8(r.bytes()?)?, out),
        TAG_ARRAY => {
            let _depth = stack_depth::enter()?;
            out.push('[');
            for i in 0..r.varint()? {
                if i > 0 {
                    out.push_str(", ");
                }
                write_value_text(r, out)?;
            }
            out.push(']');
        }
        TAG_OBJECT => {
            let _depth = stack_depth::enter()?;
            out.push('{');
            for i in 0..r.varint()? {
                if i > 0 {
                    out.push_str(", ");
                }
                escape_string(utf8(r.bytes()?)?, out);
                out.push_str(": ");
                write_value_text(r, out)?;
            }
            out.push('}');
        }
        _ => return Err(corrupt()),
    }
    Ok(())
}

/// `@>` with a stored left side (JsonbDeepContains, the rules of
/// `ops::contains`): only the parts of `a` that `b` names are read, and
/// scalars are decoded one at a time to compare.
pub fn contains(a: StoredValue<'_>, b: &Jsonb) -> PgResult<bool> {
    Ok(match b {
        Jsonb::Object(_) if a.is_object() => contains_nested(a, b)?,
        Jsonb::Object(_) => false,
        _ if a.is_object() => false,
        Jsonb::Array(want) if a.is_array() => array_contains(a, want)?,
        _ if a.is_array() => array_contains(a, std::slice::from_ref(b))?,
        Jsonb::Array(_) => false,
        scalar => a.decode()? == *scalar,
    })
}

fn contains_nested(a: StoredValue<'_>, b: &Jsonb) -> PgResult<bool> {
    let _depth = stack_depth::enter()?;
    match b {
        Jsonb::Object(want) if a.is_object() => {
            if want.len() > a.len()?.unwrap_or(0) {
                return Ok(false);
            }
            for (k, w) in want {
                let Some(have) = a.get_key(k)? else {
                    return Ok(false);
                };
                if !contains_element(have, w)? {
                    return Ok(false);
                }
            }
            Ok(true)
        }
        Jsonb::Array(want) if a.is_array() => array_contains(a, want),
        _ => Ok(false),
    }
}

/// Whether the element `have` matches `want` below the top level: equal
/// scalars, or a container of the same kind containing it.
fn contains_element(have: StoredValue<'_>, want: &Jsonb) -> PgResult<bool> {
    if want.is_scalar() {
        return Ok(have.is_scalar() && have.decode()? == *want);
    }
    let same_kind = match want {
        Jsonb::Array(_) => have.is_array(),
        _ => have.is_object(),
    };
    Ok(same_kind && contains_nested(have, want)?)
}

fn array_contains(have: StoredValue<'_>, want: &[Jsonb]) -> PgResult<bool> {
    let elements = have.elements()?;
    for w in want {
        let mut found = false;
        for h in &elements {
            if contains_element(*h, w)? {
                found = true;
                break;
            }
        }
        if !found {
            return Ok(false);
        }
    }
    Ok(true)
}

/// Builds a stored array from stored elements (jsonb_agg): each element's
/// bytes are appended as they are, so nothing is decoded or re-encoded.
#[derive(Debug, Default, Clone)]
pub struct ArrayBuilder {
    count: usize,
    body: Vec<u8>,
}

impl ArrayBuilder {
    pub fn push(&mut self, v: &JsonbDoc) {
        self.count += 1;
        v.append_value_bytes(&mut self.body);
    }

    pub fn push_null(&mut self) {
        self.count += 1;
        self.body.push(TAG_NULL);
    }

    pub fn finish(self) -> JsonbDoc {
        let mut bytes = Vec::with_capacity(self.body.len() + 11);
        bytes.push(VERSION);
        bytes.push(TAG_ARRAY);
        super::storage::put_varint(&mut bytes, self.count);
        bytes.extend_from_slice(&self.body);
        JsonbDoc::from_validated(bytes.into_boxed_slice())
    }
}

/// Rank of a stored value's kind in jsonb order (as `Jsonb::kind_rank`).
fn kind_rank(v: StoredValue<'_>) -> u8 {
    match v.tag() {
        TAG_NULL => 0,
        TAG_STRING => 1,
        TAG_NUMBER => 2,
        TAG_FALSE | TAG_TRUE => 3,
        TAG_ARRAY => 4,
        _ => 5,
    }
}

/// `json::compare` with a stored left side: the B-tree order (and so `=`)
/// read off the bytes, decoding only numbers.
pub fn compare(a: StoredValue<'_>, b: &Jsonb) -> PgResult<Ordering> {
    // The raw-scalar rule at the top level (see `json::compare`).
    match (a.is_scalar(), b) {
        (true, Jsonb::Array(items)) => {
            return Ok(if items.is_empty() {
                Ordering::Greater
            } else {
                Ordering::Less
            })
        }
        (false, _) if b.is_scalar() && a.is_array() => {
            return Ok(if a.len()? == Some(0) {
                Ordering::Less
            } else {
                Ordering::Greater
            })
        }
        _ => {}
    }
    compare_nested(a, b)
}

fn compare_nested(a: StoredValue<'_>, b: &Jsonb) -> PgResult<Ordering> {
    let _depth = stack_depth::enter()?;
    Ok(match b {
        Jsonb::Null if a.tag() == TAG_NULL => Ordering::Equal,
        Jsonb::String(y) if a.tag() == TAG_STRING => a.payload().bytes()?.cmp(y.as_bytes()),
        Jsonb::Number(y) if a.tag() == TAG_NUMBER => {
            let x = Numeric::read_binary(a.payload().bytes()?).map_err(|_| corrupt())?;
            x.cmp(y)
        }
        Jsonb::Bool(y) if matches!(a.tag(), TAG_FALSE | TAG_TRUE) => (a.tag() == TAG_TRUE).cmp(y),
        Jsonb::Array(y) if a.is_array() => {
            let mut r = a.payload();
            let n = r.varint()?;
            match n.cmp(&y.len()) {
                Ordering::Equal => {
                    for q in y {
                        let o = compare_nested(r.value_slice()?, q)?;
                        if o.is_ne() {
                            return Ok(o);
                        }
                    }
                    Ordering::Equal
                }
                o => o,
            }
        }
        Jsonb::Object(y) if a.is_object() => {
            let mut r = a.payload();
            let n = r.varint()?;
            match n.cmp(&y.len()) {
                Ordering::Equal => {
                    for (kq, vq) in y {
                        let o = r.bytes()?.cmp(kq.as_bytes());
                        if o.is_ne() {
                            return Ok(o);
                        }
                        let o = compare_nested(r.value_slice()?, vq)?;
                        if o.is_ne() {
                            return Ok(o);
                        }
                    }
                    Ordering::Equal
                }
                o => o,
            }
        }
        _ => kind_rank(a).cmp(&b.kind_rank()),
    })
}
