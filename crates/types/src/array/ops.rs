//! Array operators and functions: subscripts and slices, containment and
//! overlap, concatenation, and the array functions of PostgreSQL's
//! arrayfuncs.c / array_userfuncs.c.

use std::cmp::Ordering;

use common::{PgError, PgResult, SqlState};

use super::{ArrayValue, Dim};
use crate::ops::compare_typed;
use crate::{TypeId, Value};

fn equal(elem: TypeId, a: &Value, b: &Value) -> bool {
    compare_typed(elem, a, b) == Ordering::Equal
}

/// `a IS NOT DISTINCT FROM b` on elements.
fn not_distinct(elem: TypeId, a: &Value, b: &Value) -> bool {
    match (a.is_null(), b.is_null()) {
        (true, true) => true,
        (false, false) => equal(elem, a, b),
        _ => false,
    }
}

fn array_arg(args: &[Value], i: usize) -> PgResult<&ArrayValue> {
    args.get(i)
        .and_then(Value::as_array)
        .ok_or_else(|| PgError::internal("array function called without an array"))
}

fn int_arg(args: &[Value], i: usize) -> PgResult<i32> {
    match args.get(i) {
        Some(Value::Int4(n)) => Ok(*n),
        _ => Err(PgError::internal(
            "array function called without an integer",
        )),
    }
}

/// The element type of an array argument, or of the element argument
/// when the array is NULL.
fn elem_of(arr: Option<&Value>, elem: &Value) -> TypeId {
    match arr {
        Some(Value::Array(a)) => a.elem,
        _ => elem.type_id().unwrap_or(TypeId::Text),
    }
}

// ----- subscripts -----

/// One subscript of `a[...]`: an index, or a slice with optional bounds.
#[derive(Debug, Clone, PartialEq)]
pub enum Subscript {
    Index(Value),
    Slice(Option<Value>, Option<Value>),
}

fn sub_int(v: &Value) -> Option<i32> {
    match v {
        Value::Int4(i) => Some(*i),
        _ => None,
    }
}

/// `a[i][j]...` (no slices): the element, NULL out of range or when the
/// number of subscripts is not the number of dimensions.
pub fn subscript(a: &ArrayValue, subs: &[Value]) -> Value {
    if subs.len() != a.dims.len() {
        return Value::Null;
    }
    let mut offset = 0usize;
    for (d, s) in a.dims.iter().zip(subs) {
        let Some(i) = sub_int(s) else {
            return Value::Null;
        };
        if i < d.lower || i > d.upper() {
            return Value::Null;
        }
        offset = offset * d.len as usize + (i - d.lower) as usize;
    }
    a.items[offset].clone()
}

/// `a[lo:hi]...`: the slice with lower bounds 1, clipped to the array; a
/// plain index `i` among slices means `1:i`. None when a bound is NULL.
pub fn slice(a: &ArrayValue, subs: &[Subscript]) -> Option<ArrayValue> {
    if a.is_empty() || subs.len() > a.dims.len() {
        return Some(ArrayValue::empty(a.elem));
    }
    let mut ranges = Vec::with_capacity(a.dims.len());
    for (k, d) in a.dims.iter().enumerate() {
        let (lo, hi) = match subs.get(k) {
            None => (d.lower, d.upper()),
            Some(Subscript::Index(i)) => (1, sub_int(i)?),
            Some(Subscript::Slice(lo, hi)) => (
                match lo {
                    None => d.lower,
                    Some(v) => sub_int(v)?,
                },
                match hi {
                    None => d.upper(),
                    Some(v) => sub_int(v)?,
                },
            ),
        };
        let (lo, hi) = (lo.max(d.lower), hi.min(d.upper()));
        if lo > hi {
            return Some(ArrayValue::empty(a.elem));
        }
        ranges.push((lo, hi));
    }
    let mut items = Vec::new();
    collect_slice(a, &ranges, 0, 0, &mut items);
    let dims = ranges
        .iter()
        .map(|(lo, hi)| Dim {
            len: hi - lo + 1,
            lower: 1,
        })
        .collect();
    Some(ArrayValue {
        elem: a.elem,
        dims,
        items,
    })
}

fn collect_slice(
    a: &ArrayValue,
    ranges: &[(i32, i32)],
    depth: usize,
    base: usize,
    out: &mut Vec<Value>,
) {
    let d = a.dims[depth];
    let (lo, hi) = ranges[depth];
    for i in lo..=hi {
        let offset = base * d.len as usize + (i - d.lower) as usize;
        if depth + 1 == a.dims.len() {
            out.push(a.items[offset].clone());
        } else {
            collect_slice(a, ranges, depth + 1, offset, out);
        }
    }
}

// ----- containment -----

/// `a @> b`: every element of `b` equals some element of `a` (a NULL in `b`
/// never matches).
pub fn contains(a: &ArrayValue, b: &ArrayValue) -> bool {
    b.items
        .iter()
        .all(|x| !x.is_null() && a.items.iter().any(|y| !y.is_null() && equal(a.elem, x, y)))
}

/// `a && b`: some element is in both.
pub fn overlaps(a: &ArrayValue, b: &ArrayValue) -> bool {
    a.items
        .iter()
        .any(|x| !x.is_null() && b.items.iter().any(|y| !y.is_null() && equal(a.elem, x, y)))
}

/// arraycontains (`@>`).
pub fn arraycontains(args: &[Value]) -> PgResult<Value> {
    Ok(Value::Bool(contains(
        array_arg(args, 0)?,
        array_arg(args, 1)?,
    )))
}

/// arraycontained (`<@`).
pub fn arraycontained(args: &[Value]) -> PgResult<Value> {
    Ok(Value::Bool(contains(
        array_arg(args, 1)?,
        array_arg(args, 0)?,
    )))
}

/// arrayoverlap (`&&`).
pub fn arrayoverlap(args: &[Value]) -> PgResult<Value> {
    Ok(Value::Bool(overlaps(
        array_arg(args, 0)?,
        array_arg(args, 1)?,
    )))
}

// ----- concatenation -----

fn incompatible(detail: String) -> PgError {
    PgError::new(
        SqlState::ARRAY_SUBSCRIPT_ERROR,
        "cannot concatenate incompatible arrays",
    )
    .with_detail(detail)
}

/// array_cat / `array || array`.
pub fn concat(a: &ArrayValue, b: &ArrayValue) -> PgResult<ArrayValue> {
    if b.is_empty() {
        return Ok(a.clone());
    }
    if a.is_empty() {
        return Ok(ArrayValue {
            elem: a.elem,
            ..b.clone()
        });
    }
    let (na, nb) = (a.dims.len(), b.dims.len());
    let mut dims;
    if na == nb {
        if a.dims[1..] != b.dims[1..] {
            return Err(incompatible(
                "Arrays with differing element dimensions are not compatible for concatenation."
                    .into(),
            ));
        }
        dims = a.dims.clone();
        dims[0].len += b.dims[0].len;
    } else if na + 1 == nb {
        if a.dims[..] != b.dims[1..] {
            return Err(incompatible(
                "Arrays with differing dimensions are not compatible for concatenation.".into(),
            ));
        }
        dims = b.dims.clone();
        dims[0].len += 1;
    } else if na == nb + 1 {
        if a.dims[1..] != b.dims[..] {
            return Err(incompatible(
                "Arrays with differing dimensions are not compatible for concatenation.".into(),
            ));
        }
        dims = a.dims.clone();
        dims[0].len += 1;
    } else {
        return Err(incompatible(format!(
            "Arrays of {na} and {nb} dimensions are not compatible for concatenation."
        )));
    }
    super::item_count(&dims)?;
    let mut items = Vec::with_capacity(a.items.len() + b.items.len());
    items.extend_from_slice(&a.items);
    items.extend_from_slice(&b.items);
    Ok(ArrayValue {
        elem: a.elem,
        dims,
        items,
    })
}

fn one_dimensional(a: &ArrayValue) -> PgResult<()> {
    if a.dims.len() > 1 {
        return Err(PgError::new(
            SqlState("22000"),
            "argument must be empty or one-dimensional array",
        ));
    }
    Ok(())
}

/// array_append(anyarray, anyelement): a NULL array counts as empty.
pub fn array_append(args: &[Value]) -> PgResult<Value> {
    let elem = elem_of(args.first(), &args[1]);
    let mut a = match &args[0] {
        Value::Array(a) => ArrayValue::clone(a),
        _ => ArrayValue::empty(elem),
    };
    one_dimensional(&a)?;
    a.items.push(args[1].clone());
    match a.dims.first_mut() {
        Some(d) => d.len += 1,
        None => a.dims.push(Dim { len: 1, lower: 1 }),
    }
    Ok(Value::array(a))
}

/// array_prepend(anyelement, anyarray).
pub fn array_prepend(args: &[Value]) -> PgResult<Value> {
    let elem = elem_of(args.get(1), &args[0]);
    let mut a = match &args[1] {
        Value::Array(a) => ArrayValue::clone(a),
        _ => ArrayValue::empty(elem),
    };
    one_dimensional(&a)?;
    a.items.insert(0, args[0].clone());
    match a.dims.first_mut() {
        Some(d) => d.len += 1,
        None => a.dims.push(Dim { len: 1, lower: 1 }),
    }
    Ok(Value::array(a))
}

/// array_cat(anyarray, anyarray): a NULL side counts as empty.
pub fn array_cat(args: &[Value]) -> PgResult<Value> {
    Ok(match (&args[0], &args[1]) {
        (Value::Array(a), Value::Array(b)) => Value::array(concat(a, b)?),
        (Value::Array(_), _) => args[0].clone(),
        (_, Value::Array(_)) => args[1].clone(),
        _ => Value::Null,
    })
}

// ----- searching and editing -----

/// array_remove(anyarray, anyelement): every element not distinct from the
/// value removed (one-dimensional arrays only).
pub fn array_remove(args: &[Value]) -> PgResult<Value> {
    let Value::Array(a) = &args[0] else {
        return Ok(Value::Null);
    };
    if a.dims.len() > 1 {
        return Err(PgError::new(
            SqlState::FEATURE_NOT_SUPPORTED,
            "removing elements from multidimensional arrays is not supported",
        ));
    }
    let kept: Vec<Value> = a
        .items
        .iter()
        .filter(|v| !not_distinct(a.elem, v, &args[1]))
        .cloned()
        .collect();
    if kept.len() == a.items.len() {
        return Ok(args[0].clone());
    }
    let lower = a.dims.first().map_or(1, |d| d.lower);
    let mut r = ArrayValue::from_items(a.elem, kept);
    if let Some(d) = r.dims.first_mut() {
        d.lower = lower;
    }
    Ok(Value::array(r))
}

/// array_replace(anyarray, anyelement, anyelement).
pub fn array_replace(args: &[Value]) -> PgResult<Value> {
    let Value::Array(a) = &args[0] else {
        return Ok(Value::Null);
    };
    let mut r = ArrayValue::clone(a);
    for v in &mut r.items {
        if not_distinct(a.elem, v, &args[1]) {
            *v = args[2].clone();
        }
    }
    Ok(Value::array(r))
}

fn search_one_dimensional(a: &ArrayValue) -> PgResult<()> {
    if a.dims.len() > 1 {
        return Err(PgError::new(
            SqlState::FEATURE_NOT_SUPPORTED,
            "searching for elements in multidimensional arrays is not supported",
        ));
    }
    Ok(())
}

/// array_position(anyarray, anyelement [, int]): the first subscript (from
/// the start subscript) whose element is not distinct from the value.
pub fn array_position(args: &[Value]) -> PgResult<Value> {
    let Value::Array(a) = &args[0] else {
        return Ok(Value::Null);
    };
    search_one_dimensional(a)?;
    let lower = a.dims.first().map_or(1, |d| d.lower);
    let start = match args.get(2) {
        None => lower,
        Some(Value::Int4(s)) => *s,
        Some(_) => {
            return Err(PgError::new(
                SqlState::NULL_VALUE_NOT_ALLOWED,
                "initial position must not be null",
            ))
        }
    };
    for (i, v) in a.items.iter().enumerate() {
        let sub = lower + i as i32;
        if sub >= start && not_distinct(a.elem, v, &args[1]) {
            return Ok(Value::Int4(sub));
        }
    }
    Ok(Value::Null)
}

/// array_positions(anyarray, anyelement): every matching subscript.
pub fn array_positions(args: &[Value]) -> PgResult<Value> {
    let Value::Array(a) = &args[0] else {
        return Ok(Value::Null);
    };
    search_one_dimensional(a)?;
    let lower = a.dims.first().map_or(1, |d| d.lower);
    let subs = a
        .items
        .iter()
        .enumerate()
        .filter(|(_, v)| not_distinct(a.elem, v, &args[1]))
        .map(|(i, _)| Value::Int4(lower + i as i32))
        .collect();
    Ok(Value::array(ArrayValue::from_items(TypeId::Int4, subs)))
}

// ----- shape -----

fn dim_of(a: &ArrayValue, n: i32) -> Option<Dim> {
    usize::try_from(n - 1)
        .ok()
        .and_then(|k| a.dims.get(k))
        .copied()
}

/// array_length(anyarray, int).
pub fn array_length(args: &[Value]) -> PgResult<Value> {
    let a = array_arg(args, 0)?;
    Ok(dim_of(a, int_arg(args, 1)?).map_or(Value::Null, |d| Value::Int4(d.len)))
}

/// array_lower(anyarray, int).
pub fn array_lower(args: &[Value]) -> PgResult<Value> {
    let a = array_arg(args, 0)?;
    Ok(dim_of(a, int_arg(args, 1)?).map_or(Value::Null, |d| Value::Int4(d.lower)))
}

/// array_upper(anyarray, int).
pub fn array_upper(args: &[Value]) -> PgResult<Value> {
    let a = array_arg(args, 0)?;
    Ok(dim_of(a, int_arg(args, 1)?).map_or(Value::Null, |d| Value::Int4(d.upper())))
}

/// array_ndims(anyarray): NULL for an empty array.
pub fn array_ndims(args: &[Value]) -> PgResult<Value> {
    let a = array_arg(args, 0)?;
    Ok(if a.is_empty() {
        Value::Null
    } else {
        Value::Int4(a.dims.len() as i32)
    })
}

/// array_dims(anyarray): `[1:3][0:1]`, NULL for an empty array.
pub fn array_dims(args: &[Value]) -> PgResult<Value> {
    let a = array_arg(args, 0)?;
    if a.is_empty() {
        return Ok(Value::Null);
    }
    Ok(Value::Text(
        a.dims
            .iter()
            .map(|d| format!("[{}:{}]", d.lower, d.upper()))
            .collect(),
    ))
}

/// cardinality(anyarray): the number of elements.
pub fn cardinality(args: &[Value]) -> PgResult<Value> {
    Ok(Value::Int4(array_arg(args, 0)?.items.len() as i32))
}

/// array_fill(anyelement, int[] [, int[]]).
pub fn array_fill(args: &[Value]) -> PgResult<Value> {
    let bad = |m: &str| PgError::new(SqlState::NULL_VALUE_NOT_ALLOWED, m.to_string());
    let Value::Array(lens) = &args[1] else {
        return Err(bad("dimension array or low bound array cannot be null"));
    };
    let lowers = match args.get(2) {
        None => None,
        Some(Value::Array(l)) => Some(l),
        Some(_) => return Err(bad("dimension array or low bound array cannot be null")),
    };
    if lens.dims.len() > 1 || lowers.is_some_and(|l| l.dims.len() > 1) {
        return Err(PgError::new(
            SqlState::ARRAY_SUBSCRIPT_ERROR,
            "wrong number of array subscripts",
        )
        .with_detail("Dimension array must be one dimensional."));
    }
    if lowers.is_some_and(|l| l.items.len() != lens.items.len()) {
        return Err(PgError::new(
            SqlState::ARRAY_SUBSCRIPT_ERROR,
            "wrong number of array subscripts",
        )
        .with_detail("Low bound array has different size than dimensions array."));
    }
    if lens.items.iter().any(Value::is_null) || lowers.is_some_and(|l| l.has_nulls()) {
        return Err(bad("dimension values cannot be null"));
    }
    let elem = args[0].type_id().unwrap_or(TypeId::Text);
    if lens.items.len() > super::MAX_DIMS {
        return Err(super::too_many_dims(lens.items.len()));
    }
    let dims: Vec<Dim> = lens
        .items
        .iter()
        .enumerate()
        .map(|(i, l)| Dim {
            len: sub_int(l).unwrap_or(0),
            lower: lowers.map_or(1, |lo| sub_int(&lo.items[i]).unwrap_or(1)),
        })
        .collect();
    if dims.iter().any(|d| d.len == 0) || dims.is_empty() {
        return Ok(Value::array(ArrayValue::empty(elem)));
    }
    let n = super::item_count(&dims)?;
    Ok(Value::array(ArrayValue::with_dims(
        elem,
        dims,
        vec![args[0].clone(); n],
    )?))
}

// ----- strings -----

/// array_to_string(anyarray, text [, text]): NULL elements are skipped
/// unless a null string is given.
pub fn array_to_string(args: &[Value], io: &crate::IoSettings) -> PgResult<Value> {
    let a = array_arg(args, 0)?;
    let Some(delimiter) = args[1].as_str() else {
        return Ok(Value::Null);
    };
    let null_string = args.get(2).and_then(Value::as_str);
    let mut out = String::new();
    let mut first = true;
    for v in &a.items {
        let text = if v.is_null() {
            match null_string {
                Some(n) => n.to_string(),
                None => continue,
            }
        } else {
            crate::io::to_text(v, a.elem, io)
        };
        if !first {
            out.push_str(delimiter);
        }
        first = false;
        out.push_str(&text);
    }
    Ok(Value::Text(out))
}

/// string_to_array(text, text [, text]): a NULL delimiter splits into
/// characters, an empty one keeps the string whole; fields equal to the
/// null string are NULL.
pub fn string_to_array(args: &[Value]) -> PgResult<Value> {
    let Some(s) = args[0].as_str() else {
        return Ok(Value::Null);
    };
    let null_string = args.get(2).and_then(Value::as_str);
    let field = |f: &str| {
        if null_string == Some(f) {
            Value::Null
        } else {
            Value::Text(f.to_string())
        }
    };
    if s.is_empty() {
        return Ok(Value::array(ArrayValue::empty(TypeId::Text)));
    }
    let items: Vec<Value> = match args[1].as_str() {
        None => s
            .chars()
            .map(|c| field(c.encode_utf8(&mut [0; 4])))
            .collect(),
        Some("") => vec![field(s)],
        Some(d) => s.split(d).map(field).collect(),
    };
    Ok(Value::array(ArrayValue::from_items(TypeId::Text, items)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::IoSettings;

    fn arr(s: &str) -> ArrayValue {
        super::super::text::parse(TypeId::Int4.into(), s, &IoSettings::UTC).unwrap()
    }

    fn text(a: &ArrayValue) -> String {
        super::super::text::to_text(a, TypeId::Int4, &IoSettings::UTC)
    }

    #[test]
    fn slices_and_subscripts() {
        let a = arr("{{1,2},{3,4}}");
        assert_eq!(
            subscript(&a, &[Value::Int4(2), Value::Int4(1)]),
            Value::Int4(3)
        );
        assert_eq!(subscript(&a, &[Value::Int4(2)]), Value::Null);
        let s = |subs: &[Subscript]| text(&slice(&a, subs).unwrap());
        let i = |n| Some(Value::Int4(n));
        assert_eq!(s(&[Subscript::Slice(i(2), i(2))]), "{{3,4}}");
        assert_eq!(
            s(&[
                Subscript::Slice(i(1), i(2)),
                Subscript::Index(Value::Int4(2))
            ]),
            "{{1,2},{3,4}}"
        );
        let b = arr("[0:3]={1,2,3,4}");
        assert_eq!(
            text(&slice(&b, &[Subscript::Slice(None, i(1))]).unwrap()),
            "{1,2}"
        );
        assert_eq!(
            text(&slice(&b, &[Subscript::Slice(i(7), i(9))]).unwrap()),
            "{}"
        );
    }

    #[test]
    fn concatenation_shapes() {
        let c = |a: &str, b: &str| concat(&arr(a), &arr(b)).map(|r| text(&r));
        assert_eq!(c("[3:4]={1,2}", "{7}").unwrap(), "[3:5]={1,2,7}");
        assert_eq!(c("{7}", "[3:4]={1,2}").unwrap(), "{7,1,2}");
        assert_eq!(c("{{1,2}}", "{3,4}").unwrap(), "{{1,2},{3,4}}");
        assert_eq!(c("{3,4}", "{{1,2}}").unwrap(), "{{3,4},{1,2}}");
        assert!(c("{{1,2}}", "{3}").is_err());
        assert!(c("[0:1]={3,4}", "{{1,2}}").is_err());
    }
}
