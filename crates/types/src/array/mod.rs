//! Arrays (PostgreSQL's arrayfuncs.c): `Value::Array` holds an
//! `ArrayValue`, the element type, the dimensions with their lower bounds
//! and the elements in row-major order, NULLs included.
//!
//! - `text.rs`: array_in / array_out (quoting, NULL, `[2:3]=` decorations,
//!   nesting, PostgreSQL's "malformed array literal" DETAILs);
//! - `binary.rs`: array_send / array_recv;
//! - `storage.rs`: the compact form arrays take in heap and index tuples;
//! - `ops.rs`: subscripts and slices, `@>`, `<@`, `&&`, `||`, and the array
//!   functions (array_length, array_position, string_to_array, ...).
//!
//! An empty array has no dimensions. Every array is rectangular:
//! `items.len()` is the product of the dimension lengths.

pub mod binary;
pub mod ops;
pub mod storage;
pub mod text;

use std::cmp::Ordering;

use common::{PgError, PgResult, SqlState};

use crate::{TypeId, Value};

/// PostgreSQL's MAXDIM.
pub const MAX_DIMS: usize = 6;

/// One dimension: its length and lower bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Dim {
    pub len: i32,
    pub lower: i32,
}

impl Dim {
    pub fn upper(&self) -> i32 {
        self.lower + self.len - 1
    }
}

/// An array value (see the module comment).
#[derive(Debug, Clone, PartialEq)]
pub struct ArrayValue {
    /// The element type. The static type of the expression decides the
    /// array's type; this says which element type the items were made as.
    pub elem: TypeId,
    /// Outermost first; empty for an empty array.
    pub dims: Vec<Dim>,
    /// Row-major; `Value::Null` for a NULL element.
    pub items: Vec<Value>,
}

impl ArrayValue {
    /// The empty array of `elem`.
    pub fn empty(elem: TypeId) -> Self {
        ArrayValue {
            elem,
            dims: Vec::new(),
            items: Vec::new(),
        }
    }

    /// A one-dimensional array with lower bound 1 (empty if `items` is).
    pub fn from_items(elem: TypeId, items: Vec<Value>) -> Self {
        let dims = if items.is_empty() {
            Vec::new()
        } else {
            vec![Dim {
                len: items.len() as i32,
                lower: 1,
            }]
        };
        ArrayValue { elem, dims, items }
    }

    /// An array of the given shape; checks that the shape holds `items`.
    pub fn with_dims(elem: TypeId, dims: Vec<Dim>, items: Vec<Value>) -> PgResult<Self> {
        if dims.len() > MAX_DIMS {
            return Err(too_many_dims(dims.len()));
        }
        let n = item_count(&dims)?;
        if n != items.len() {
            return Err(PgError::internal("array shape does not match its items"));
        }
        if n == 0 {
            return Ok(ArrayValue::empty(elem));
        }
        Ok(ArrayValue { elem, dims, items })
    }

    pub fn ndims(&self) -> usize {
        self.dims.len()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    pub fn has_nulls(&self) -> bool {
        self.items.iter().any(Value::is_null)
    }

    /// Whether every lower bound is 1 (the text form needs no decoration).
    pub fn default_bounds(&self) -> bool {
        self.dims.iter().all(|d| d.lower == 1)
    }
}

/// The number of items of `dims` (22023 / 54000 past PostgreSQL's limits).
pub fn item_count(dims: &[Dim]) -> PgResult<usize> {
    let mut n: i64 = if dims.is_empty() { 0 } else { 1 };
    for d in dims {
        if d.len < 0 {
            return Err(PgError::new(
                SqlState::INVALID_PARAMETER_VALUE,
                "array size exceeds the maximum allowed",
            ));
        }
        n = n.saturating_mul(d.len as i64);
        if n > MAX_ITEMS {
            return Err(size_exceeded());
        }
        // The upper bound must fit an int4.
        if (d.lower as i64) + (d.len as i64) - 1 > i32::MAX as i64 {
            return Err(PgError::new(
                SqlState::PROGRAM_LIMIT_EXCEEDED,
                "array upper bound is too large",
            ));
        }
    }
    Ok(n as usize)
}

/// PostgreSQL's MaxArraySize.
const MAX_ITEMS: i64 = 0x3fff_ffff / 16;

pub(crate) fn size_exceeded() -> PgError {
    PgError::new(
        SqlState::PROGRAM_LIMIT_EXCEEDED,
        format!("array size exceeds the maximum allowed ({MAX_ITEMS})"),
    )
}

pub(crate) fn too_many_dims(n: usize) -> PgError {
    PgError::new(
        SqlState::PROGRAM_LIMIT_EXCEEDED,
        format!("number of array dimensions ({n}) exceeds the maximum allowed ({MAX_DIMS})"),
    )
}

/// PostgreSQL's btree order on arrays (array_cmp): element by element
/// (NULLs after non-NULLs, equal to each other), then the one with fewer
/// elements first, then fewer dimensions, then by dimension lengths, then
/// by lower bounds.
pub fn compare(a: &ArrayValue, b: &ArrayValue) -> Ordering {
    let elem = a.elem;
    for (x, y) in a.items.iter().zip(&b.items) {
        let o = match (x.is_null(), y.is_null()) {
            (true, true) => Ordering::Equal,
            (true, false) => Ordering::Greater,
            (false, true) => Ordering::Less,
            (false, false) => crate::ops::compare_typed(elem, x, y),
        };
        if o != Ordering::Equal {
            return o;
        }
    }
    a.items
        .len()
        .cmp(&b.items.len())
        .then(a.dims.len().cmp(&b.dims.len()))
        .then_with(|| {
            let lens = |v: &ArrayValue| v.dims.iter().map(|d| d.len).collect::<Vec<_>>();
            lens(a).cmp(&lens(b))
        })
        .then_with(|| {
            let lowers = |v: &ArrayValue| v.dims.iter().map(|d| d.lower).collect::<Vec<_>>();
            lowers(a).cmp(&lowers(b))
        })
}

/// Hashes consistently with `compare` equality.
pub fn hash<H: std::hash::Hasher>(a: &ArrayValue, state: &mut H) {
    state.write_usize(a.items.len());
    for d in &a.dims {
        state.write_i32(d.len);
        state.write_i32(d.lower);
    }
    for v in &a.items {
        crate::ops::hash_value_typed(a.elem, v, state);
    }
}
