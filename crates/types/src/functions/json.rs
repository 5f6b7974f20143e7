//! json and jsonb functions, and the functions behind their operators
//! (`->` is jsonb_object_field / jsonb_array_element, `@>` jsonb_contains,
//! ... as in pg_operator.oprcode).

use std::sync::Arc;

use common::{PgError, PgResult, SqlState};

use crate::json::build::{jsonb_value, to_json_text, to_jsonb};
use crate::json::ops::{self as jops, PathOp};
use crate::json::stored::{self, StoredValue};
use crate::json::{escape_string, Jsonb, JsonbDoc};
use crate::{IoSettings, TypeId, Value};

fn doc_arg(v: &Value) -> PgResult<&JsonbDoc> {
    match v {
        Value::Jsonb(j) => Ok(j),
        _ => Err(PgError::internal("jsonb function on a non-jsonb value")),
    }
}

/// The argument as a tree (decoding a stored document once).
fn jsonb_arg(v: &Value) -> PgResult<&Jsonb> {
    doc_arg(v).map(JsonbDoc::tree)
}

/// A stored sub-value as a jsonb result (its bytes copied, not decoded).
fn stored_jsonb(v: Option<StoredValue<'_>>) -> Value {
    v.map_or(Value::Null, |v| Value::Jsonb(Arc::new(v.to_doc())))
}

/// A stored sub-value as `->>`'s text.
fn stored_text(v: Option<StoredValue<'_>>) -> PgResult<Value> {
    Ok(match v {
        Some(v) => opt_text(v.to_text_unquoted()?),
        None => Value::Null,
    })
}

fn text_arg(v: &Value) -> PgResult<&str> {
    v.as_str()
        .ok_or_else(|| PgError::internal("text argument expected"))
}

fn int_arg(v: &Value) -> PgResult<i64> {
    v.as_i64()
        .ok_or_else(|| PgError::internal("integer argument expected"))
}

/// A text[] argument's elements (NULL elements as None).
fn path_arg(v: &Value) -> PgResult<Vec<Option<String>>> {
    let Value::Array(a) = v else {
        return Err(PgError::internal("text[] argument expected"));
    };
    Ok(a.items
        .iter()
        .map(|i| match i {
            Value::Text(s) => Some(s.clone()),
            _ => None,
        })
        .collect())
}

fn opt_jsonb(j: Option<&Jsonb>) -> Value {
    j.map_or(Value::Null, |j| jsonb_value(j.clone()))
}

fn opt_text(s: Option<String>) -> Value {
    s.map_or(Value::Null, Value::Text)
}

// ----- jsonb operators -----

pub fn jsonb_object_field(a: &[Value]) -> PgResult<Value> {
    if let Some(v) = doc_arg(&a[0])?.stored() {
        return Ok(stored_jsonb(v.get_key(text_arg(&a[1])?)?));
    }
    Ok(opt_jsonb(jsonb_arg(&a[0])?.get_key(text_arg(&a[1])?)))
}

pub fn jsonb_array_element(a: &[Value]) -> PgResult<Value> {
    if let Some(v) = doc_arg(&a[0])?.stored() {
        return Ok(stored_jsonb(v.get_index(int_arg(&a[1])?)?));
    }
    Ok(opt_jsonb(jsonb_arg(&a[0])?.get_index(int_arg(&a[1])?)))
}

pub fn jsonb_object_field_text(a: &[Value]) -> PgResult<Value> {
    if let Some(v) = doc_arg(&a[0])?.stored() {
        return stored_text(v.get_key(text_arg(&a[1])?)?);
    }
    let j = jsonb_arg(&a[0])?.get_key(text_arg(&a[1])?);
    Ok(opt_text(j.and_then(Jsonb::to_text_unquoted)))
}

pub fn jsonb_array_element_text(a: &[Value]) -> PgResult<Value> {
    if let Some(v) = doc_arg(&a[0])?.stored() {
        return stored_text(v.get_index(int_arg(&a[1])?)?);
    }
    let j = jsonb_arg(&a[0])?.get_index(int_arg(&a[1])?);
    Ok(opt_text(j.and_then(Jsonb::to_text_unquoted)))
}

pub fn jsonb_extract_path_op(a: &[Value]) -> PgResult<Value> {
    if let Some(v) = doc_arg(&a[0])?.stored() {
        return Ok(stored_jsonb(jops::get_path_stored(v, &path_arg(&a[1])?)?));
    }
    Ok(opt_jsonb(jops::get_path(
        jsonb_arg(&a[0])?,
        &path_arg(&a[1])?,
    )))
}

pub fn jsonb_extract_path_text_op(a: &[Value]) -> PgResult<Value> {
    let path = path_arg(&a[1])?;
    if let Some(v) = doc_arg(&a[0])?.stored() {
        return stored_text(jops::get_path_stored(v, &path)?);
    }
    let j = jops::get_path(jsonb_arg(&a[0])?, &path);
    Ok(opt_text(j.and_then(Jsonb::to_text_unquoted)))
}

/// The variadic path of jsonb_extract_path(j, VARIADIC text[]).
fn variadic_path(a: &[Value]) -> Vec<Option<String>> {
    a.iter().map(|v| v.as_str().map(str::to_owned)).collect()
}

pub fn jsonb_extract_path(a: &[Value]) -> PgResult<Value> {
    if a[0].is_null() {
        return Ok(Value::Null);
    }
    if let Some(v) = doc_arg(&a[0])?.stored() {
        return Ok(stored_jsonb(jops::get_path_stored(
            v,
            &variadic_path(&a[1..]),
        )?));
    }
    Ok(opt_jsonb(jops::get_path(
        jsonb_arg(&a[0])?,
        &variadic_path(&a[1..]),
    )))
}

pub fn jsonb_extract_path_text(a: &[Value]) -> PgResult<Value> {
    if a[0].is_null() {
        return Ok(Value::Null);
    }
    let path = variadic_path(&a[1..]);
    if let Some(v) = doc_arg(&a[0])?.stored() {
        return stored_text(jops::get_path_stored(v, &path)?);
    }
    let j = jops::get_path(jsonb_arg(&a[0])?, &path);
    Ok(opt_text(j.and_then(Jsonb::to_text_unquoted)))
}

pub fn jsonb_contains(a: &[Value]) -> PgResult<Value> {
    if let Some(v) = doc_arg(&a[0])?.stored() {
        return Ok(Value::Bool(stored::contains(v, jsonb_arg(&a[1])?)?));
    }
    Ok(Value::Bool(jops::contains(
        jsonb_arg(&a[0])?,
        jsonb_arg(&a[1])?,
    )))
}

pub fn jsonb_contained(a: &[Value]) -> PgResult<Value> {
    if let Some(v) = doc_arg(&a[1])?.stored() {
        return Ok(Value::Bool(stored::contains(v, jsonb_arg(&a[0])?)?));
    }
    Ok(Value::Bool(jops::contains(
        jsonb_arg(&a[1])?,
        jsonb_arg(&a[0])?,
    )))
}

pub fn jsonb_exists(a: &[Value]) -> PgResult<Value> {
    if let Some(v) = doc_arg(&a[0])?.stored() {
        return Ok(Value::Bool(v.exists(text_arg(&a[1])?)?));
    }
    Ok(Value::Bool(jops::exists(
        jsonb_arg(&a[0])?,
        text_arg(&a[1])?,
    )))
}

pub fn jsonb_exists_any(a: &[Value]) -> PgResult<Value> {
    if let Some(v) = doc_arg(&a[0])?.stored() {
        for k in path_arg(&a[1])?.iter().flatten() {
            if v.exists(k)? {
                return Ok(Value::Bool(true));
            }
        }
        return Ok(Value::Bool(false));
    }
    let j = jsonb_arg(&a[0])?;
    let keys = path_arg(&a[1])?;
    Ok(Value::Bool(
        keys.iter().flatten().any(|k| jops::exists(j, k)),
    ))
}

pub fn jsonb_exists_all(a: &[Value]) -> PgResult<Value> {
    if let Some(v) = doc_arg(&a[0])?.stored() {
        for k in path_arg(&a[1])?.iter().flatten() {
            if !v.exists(k)? {
                return Ok(Value::Bool(false));
            }
        }
        return Ok(Value::Bool(true));
    }
    let j = jsonb_arg(&a[0])?;
    let keys = path_arg(&a[1])?;
    Ok(Value::Bool(
        keys.iter().flatten().all(|k| jops::exists(j, k)),
    ))
}

pub fn jsonb_concat(a: &[Value]) -> PgResult<Value> {
    Ok(jsonb_value(jops::concat(
        jsonb_arg(&a[0])?,
        jsonb_arg(&a[1])?,
    )))
}

pub fn jsonb_delete_key(a: &[Value]) -> PgResult<Value> {
    Ok(jsonb_value(jops::delete_keys(
        jsonb_arg(&a[0])?,
        &[text_arg(&a[1])?],
    )?))
}

pub fn jsonb_delete_keys(a: &[Value]) -> PgResult<Value> {
    let keys = path_arg(&a[1])?;
    let keys: Vec<&str> = keys.iter().flatten().map(String::as_str).collect();
    Ok(jsonb_value(jops::delete_keys(jsonb_arg(&a[0])?, &keys)?))
}

pub fn jsonb_delete_index(a: &[Value]) -> PgResult<Value> {
    Ok(jsonb_value(jops::delete_index(
        jsonb_arg(&a[0])?,
        int_arg(&a[1])?,
    )?))
}

pub fn jsonb_delete_path(a: &[Value]) -> PgResult<Value> {
    let path = path_arg(&a[1])?;
    Ok(jsonb_value(jops::set_path(
        jsonb_arg(&a[0])?,
        &path,
        None,
        PathOp::Delete,
    )?))
}

/// jsonb_set and jsonb_insert: (target, path, new value [, flag]), the
/// optional flag choosing between `ops` (default `default_flag`).
fn put_at_path(a: &[Value], default_flag: bool, ops: [PathOp; 2]) -> PgResult<Value> {
    let flag = a.get(3).and_then(Value::as_bool).unwrap_or(default_flag);
    let path = path_arg(&a[1])?;
    let [if_true, if_false] = ops;
    let op = if flag { if_true } else { if_false };
    Ok(jsonb_value(jops::set_path(
        jsonb_arg(&a[0])?,
        &path,
        Some(jsonb_arg(&a[2])?),
        op,
    )?))
}

pub fn jsonb_set(a: &[Value]) -> PgResult<Value> {
    put_at_path(a, true, [PathOp::Create, PathOp::Replace])
}

pub fn jsonb_insert(a: &[Value]) -> PgResult<Value> {
    put_at_path(a, false, [PathOp::InsertAfter, PathOp::InsertBefore])
}

pub fn jsonb_strip_nulls(a: &[Value]) -> PgResult<Value> {
    Ok(jsonb_value(jops::strip_nulls(jsonb_arg(&a[0])?)))
}

pub fn jsonb_pretty(a: &[Value]) -> PgResult<Value> {
    Ok(Value::Text(jsonb_arg(&a[0])?.to_pretty()))
}

pub fn jsonb_typeof(a: &[Value]) -> PgResult<Value> {
    if let Some(v) = doc_arg(&a[0])?.stored() {
        return Ok(Value::text(v.type_name()));
    }
    Ok(Value::text(jsonb_arg(&a[0])?.type_name()))
}

pub fn jsonb_array_length(a: &[Value]) -> PgResult<Value> {
    if let Some(v) = doc_arg(&a[0])?.stored() {
        if v.is_array() {
            return Ok(Value::Int4(v.len()?.unwrap_or(0) as i32));
        }
    }
    match jsonb_arg(&a[0])? {
        Jsonb::Array(items) => Ok(Value::Int4(items.len() as i32)),
        Jsonb::Object(_) => Err(PgError::new(
            SqlState::INVALID_PARAMETER_VALUE,
            "cannot get array length of a non-array",
        )),
        _ => Err(PgError::new(
            SqlState::INVALID_PARAMETER_VALUE,
            "cannot get array length of a scalar",
        )),
    }
}

// ----- json (text) functions -----

pub fn json_object_field(a: &[Value]) -> PgResult<Value> {
    let path = [Some(text_arg(&a[1])?.to_string())];
    Ok(opt_text(jops::json_extract(
        text_arg(&a[0])?,
        &path,
        false,
    )?))
}

pub fn json_object_field_text(a: &[Value]) -> PgResult<Value> {
    let path = [Some(text_arg(&a[1])?.to_string())];
    Ok(opt_text(jops::json_extract(text_arg(&a[0])?, &path, true)?))
}

fn json_index_path(v: &Value) -> PgResult<[Option<String>; 1]> {
    Ok([Some(int_arg(v)?.to_string())])
}

pub fn json_array_element(a: &[Value]) -> PgResult<Value> {
    let text = text_arg(&a[0])?;
    let root = crate::json::parse::parse_json_spans(text)?;
    // Only arrays have elements (a number-like key of an object is no index).
    if !matches!(root, crate::json::parse::JsonNode::Array { .. }) {
        return Ok(Value::Null);
    }
    Ok(opt_text(jops::json_extract(
        text,
        &json_index_path(&a[1])?,
        false,
    )?))
}

pub fn json_array_element_text(a: &[Value]) -> PgResult<Value> {
    let text = text_arg(&a[0])?;
    let root = crate::json::parse::parse_json_spans(text)?;
    if !matches!(root, crate::json::parse::JsonNode::Array { .. }) {
        return Ok(Value::Null);
    }
    Ok(opt_text(jops::json_extract(
        text,
        &json_index_path(&a[1])?,
        true,
    )?))
}

pub fn json_extract_path_op(a: &[Value]) -> PgResult<Value> {
    let path = path_arg(&a[1])?;
    Ok(opt_text(jops::json_extract(
        text_arg(&a[0])?,
        &path,
        false,
    )?))
}

pub fn json_extract_path_text_op(a: &[Value]) -> PgResult<Value> {
    let path = path_arg(&a[1])?;
    Ok(opt_text(jops::json_extract(text_arg(&a[0])?, &path, true)?))
}

pub fn json_typeof(a: &[Value]) -> PgResult<Value> {
    let root = crate::json::parse::parse_json_spans(text_arg(&a[0])?)?;
    Ok(Value::text(root.type_name()))
}

pub fn json_array_length(a: &[Value]) -> PgResult<Value> {
    match crate::json::parse::parse_json_spans(text_arg(&a[0])?)? {
        crate::json::parse::JsonNode::Array { items, .. } => Ok(Value::Int4(items.len() as i32)),
        crate::json::parse::JsonNode::Object { .. } => Err(PgError::new(
            SqlState::INVALID_PARAMETER_VALUE,
            "cannot get array length of a non-array",
        )),
        _ => Err(PgError::new(
            SqlState::INVALID_PARAMETER_VALUE,
            "cannot get array length of a scalar",
        )),
    }
}

// ----- conversion and construction -----

/// `to_jsonb(x)` / `to_json(x)` for an argument of type `ty`.
pub fn to_jsonb_of(a: &[Value], ty: TypeId, io: &IoSettings) -> PgResult<Value> {
    if let Value::Jsonb(_) = &a[0] {
        // A document is its own jsonb: shared, not rebuilt.
        return Ok(a[0].clone());
    }
    Ok(jsonb_value(to_jsonb(&a[0], ty, io)?))
}

pub fn to_json_of(a: &[Value], ty: TypeId, io: &IoSettings) -> PgResult<Value> {
    Ok(Value::Text(to_json_text(&a[0], ty, io)?))
}

fn odd_arguments(name: &str) -> PgError {
    PgError::new(
        SqlState::INVALID_PARAMETER_VALUE,
        "argument list must have even number of elements",
    )
    .with_hint(format!(
        "The arguments of {name}() must consist of alternating keys and values."
    ))
}

fn null_key(i: usize) -> PgError {
    PgError::new(
        SqlState::INVALID_PARAMETER_VALUE,
        format!("argument {}: key must not be null", i + 1),
    )
}

/// The key text of a builder argument already converted to jsonb: scalars
/// only (strings unquoted).
fn builder_key(v: &Jsonb) -> PgResult<String> {
    match v {
        Jsonb::String(s) => Ok(s.clone()),
        Jsonb::Array(_) | Jsonb::Object(_) => Err(PgError::new(
            SqlState::INVALID_PARAMETER_VALUE,
            "key value must be scalar, not array, composite, or json",
        )),
        other => Ok(other.to_text()),
    }
}

/// jsonb_build_object(VARIADIC "any"): the binder converts every argument
/// with to_jsonb, so they arrive as jsonb (NULL stays NULL).
pub fn jsonb_build_object(a: &[Value]) -> PgResult<Value> {
    if !a.len().is_multiple_of(2) {
        return Err(odd_arguments("jsonb_build_object"));
    }
    let mut pairs = Vec::with_capacity(a.len() / 2);
    for (i, kv) in a.chunks(2).enumerate() {
        let key = match &kv[0] {
            Value::Null => return Err(null_key(2 * i)),
            k => builder_key(jsonb_arg(k)?)?,
        };
        let value = match &kv[1] {
            Value::Null => Jsonb::Null,
            v => jsonb_arg(v)?.clone(),
        };
        pairs.push((key, value));
    }
    Ok(jsonb_value(Jsonb::object_from_pairs(pairs)))
}

pub fn jsonb_build_array(a: &[Value]) -> PgResult<Value> {
    let items = a
        .iter()
        .map(|v| match v {
            Value::Null => Ok(Jsonb::Null),
            v => jsonb_arg(v).cloned(),
        })
        .collect::<PgResult<_>>()?;
    Ok(jsonb_value(Jsonb::Array(items)))
}

/// json_build_object: arguments arrive as json texts (to_json of each).
pub fn json_build_object(a: &[Value]) -> PgResult<Value> {
    if !a.len().is_multiple_of(2) {
        return Err(odd_arguments("json_build_object"));
    }
    let mut out = String::from("{");
    for (i, kv) in a.chunks(2).enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        let key = match &kv[0] {
            Value::Null => return Err(null_key(2 * i)),
            k => builder_key(&crate::json::parse::parse_jsonb(text_arg(k)?)?)?,
        };
        escape_string(&key, &mut out);
        out.push_str(" : ");
        match &kv[1] {
            Value::Null => out.push_str("null"),
            v => out.push_str(text_arg(v)?),
        }
    }
    out.push('}');
    Ok(Value::Text(out))
}

pub fn json_build_array(a: &[Value]) -> PgResult<Value> {
    let mut out = String::from("[");
    for (i, v) in a.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        match v {
            Value::Null => out.push_str("null"),
            v => out.push_str(text_arg(v)?),
        }
    }
    out.push(']');
    Ok(Value::Text(out))
}

/// json_build_object() / jsonb_build_object() with no arguments.
pub fn jsonb_empty_object(_: &[Value]) -> PgResult<Value> {
    Ok(jsonb_value(Jsonb::Object(Vec::new())))
}

pub fn jsonb_empty_array(_: &[Value]) -> PgResult<Value> {
    Ok(jsonb_value(Jsonb::Array(Vec::new())))
}

pub fn json_empty_object(_: &[Value]) -> PgResult<Value> {
    Ok(Value::text("{}"))
}

pub fn json_empty_array(_: &[Value]) -> PgResult<Value> {
    Ok(Value::text("[]"))
}
