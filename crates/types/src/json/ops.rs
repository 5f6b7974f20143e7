//! jsonb operators and path functions (PostgreSQL's jsonfuncs.c and
//! jsonb_op.c): extraction, containment, existence, concatenation,
//! deletion, `jsonb_set`/`jsonb_insert`, `jsonb_strip_nulls`; and the
//! extraction operators over `json` texts, which return sub-texts verbatim.

use common::{stack_depth, PgError, PgResult, SqlState};

use super::parse::{parse_json_spans, JsonNode};
use super::Jsonb;

fn err(code: SqlState, msg: impl Into<String>) -> PgError {
    PgError::new(code, msg)
}

/// A path element as an array index (strtoint: optional sign, digits, no
/// blanks), None if it is not one.
pub(crate) fn path_index(s: &str) -> Option<i64> {
    let digits = s.strip_prefix(['-', '+']).unwrap_or(s);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse::<i32>().ok().map(i64::from)
}

/// `#>`: the value at `path` (NULL elements or a missing step give None).
pub fn get_path<'a>(v: &'a Jsonb, path: &[Option<String>]) -> Option<&'a Jsonb> {
    let mut cur = v;
    for step in path {
        let step = step.as_deref()?;
        cur = match cur {
            Jsonb::Object(_) => cur.get_key(step)?,
            Jsonb::Array(_) => cur.get_index(path_index(step)?)?,
            _ => return None,
        };
    }
    Some(cur)
}

/// `#>` on a stored value: walks the bytes, decodes nothing.
pub fn get_path_stored<'a>(
    v: super::stored::StoredValue<'a>,
    path: &[Option<String>],
) -> PgResult<Option<super::stored::StoredValue<'a>>> {
    let mut cur = v;
    for step in path {
        let Some(step) = step.as_deref() else {
            return Ok(None);
        };
        let next = if cur.is_object() {
            cur.get_key(step)?
        } else if cur.is_array() {
            match path_index(step) {
                Some(i) => cur.get_index(i)?,
                None => None,
            }
        } else {
            None
        };
        match next {
            Some(n) => cur = n,
            None => return Ok(None),
        }
    }
    Ok(Some(cur))
}

/// Whether `a` contains `b` (`@>`, JsonbDeepContains with PostgreSQL's
/// raw-scalar rule at the top: an array contains a scalar it has as an
/// element, a scalar contains no array).
pub fn contains(a: &Jsonb, b: &Jsonb) -> bool {
    match (a, b) {
        (Jsonb::Object(_), Jsonb::Object(_)) => contains_nested(a, b),
        (Jsonb::Object(_), _) | (_, Jsonb::Object(_)) => false,
        (Jsonb::Array(x), Jsonb::Array(y)) => array_contains(x, y),
        (Jsonb::Array(x), scalar) => array_contains(x, std::slice::from_ref(scalar)),
        (_, Jsonb::Array(_)) => false,
        (x, y) => x == y,
    }
}

fn contains_nested(a: &Jsonb, b: &Jsonb) -> bool {
    match (a, b) {
        (Jsonb::Object(x), Jsonb::Object(y)) => {
            y.len() <= x.len()
                && y.iter().all(|(k, want)| match a.get_key(k) {
                    Some(have) if want.is_scalar() => have == want,
                    Some(have) => same_container(have, want) && contains_nested(have, want),
                    None => false,
                })
        }
        (Jsonb::Array(x), Jsonb::Array(y)) => array_contains(x, y),
        _ => false,
    }
}

fn same_container(a: &Jsonb, b: &Jsonb) -> bool {
    matches!(
        (a, b),
        (Jsonb::Array(_), Jsonb::Array(_)) | (Jsonb::Object(_), Jsonb::Object(_))
    )
}

fn array_contains(have: &[Jsonb], want: &[Jsonb]) -> bool {
    want.iter().all(|w| {
        if w.is_scalar() {
            have.iter().any(|h| h == w)
        } else {
            have.iter()
                .any(|h| same_container(h, w) && contains_nested(h, w))
        }
    })
}

/// `?`: a key of the top-level object, or a string element of the array
/// (or the scalar string itself).
pub fn exists(v: &Jsonb, key: &str) -> bool {
    match v {
        Jsonb::Object(_) => v.get_key(key).is_some(),
        Jsonb::Array(items) => items
            .iter()
            .any(|i| matches!(i, Jsonb::String(s) if s == key)),
        Jsonb::String(s) => s == key,
        _ => false,
    }
}

/// `||`: objects merge (the right side's keys win); otherwise both sides
/// are taken as arrays (a scalar or object as one element) and joined.
pub fn concat(a: &Jsonb, b: &Jsonb) -> Jsonb {
    match (a, b) {
        (Jsonb::Object(x), Jsonb::Object(y)) => {
            let mut pairs = x.clone();
            pairs.extend(y.iter().cloned());
            Jsonb::object_from_pairs(pairs)
        }
        _ => {
            let mut items = match a {
                Jsonb::Array(x) => x.clone(),
                other => vec![other.clone()],
            };
            match b {
                Jsonb::Array(y) => items.extend(y.iter().cloned()),
                other => items.push(other.clone()),
            }
            Jsonb::Array(items)
        }
    }
}

fn delete_from_scalar() -> PgError {
    err(
        SqlState::INVALID_PARAMETER_VALUE,
        "cannot delete from scalar",
    )
}

/// `- text` / `- text[]`: removes these keys of an object, or the string
/// elements equal to them of an array.
pub fn delete_keys(v: &Jsonb, keys: &[&str]) -> PgResult<Jsonb> {
    Ok(match v {
        Jsonb::Object(pairs) => Jsonb::Object(
            pairs
                .iter()
                .filter(|(k, _)| !keys.contains(&k.as_str()))
                .cloned()
                .collect(),
        ),
        Jsonb::Array(items) => Jsonb::Array(
            items
                .iter()
                .filter(|i| !matches!(i, Jsonb::String(s) if keys.contains(&s.as_str())))
                .cloned()
                .collect(),
        ),
        _ => return Err(delete_from_scalar()),
    })
}

/// `- integer`: removes an array element (negative counts from the end).
pub fn delete_index(v: &Jsonb, index: i64) -> PgResult<Jsonb> {
    match v {
        Jsonb::Array(items) => {
            let n = items.len() as i64;
            let i = if index < 0 { n + index } else { index };
            let mut items = items.clone();
            if (0..n).contains(&i) {
                items.remove(i as usize);
            }
            Ok(Jsonb::Array(items))
        }
        Jsonb::Object(_) => Err(err(
            SqlState::INVALID_PARAMETER_VALUE,
            "cannot delete from object using integer index",
        )),
        _ => Err(delete_from_scalar()),
    }
}

/// What `set_path` does at the end of the path (PostgreSQL's JB_PATH_*).
#[derive(Clone, Copy, PartialEq)]
pub enum PathOp {
    /// jsonb_set(..., create_missing => true).
    Create,
    /// jsonb_set(..., create_missing => false).
    Replace,
    Delete,
    InsertBefore,
    InsertAfter,
}

impl PathOp {
    fn creates(self) -> bool {
        matches!(
            self,
            PathOp::Create | PathOp::InsertBefore | PathOp::InsertAfter
        )
    }
}

/// `jsonb_set`, `jsonb_insert` and `#-` (setPath): the document with the
/// value at `path` replaced, created, inserted beside or deleted.
pub fn set_path(
    v: &Jsonb,
    path: &[Option<String>],
    new: Option<&Jsonb>,
    op: PathOp,
) -> PgResult<Jsonb> {
    if v.is_scalar() {
        let what = if op == PathOp::Delete {
            "cannot delete path in scalar"
        } else {
            "cannot set path in scalar"
        };
        return Err(err(SqlState::INVALID_PARAMETER_VALUE, what));
    }
    if path.is_empty() {
        return Ok(v.clone());
    }
    set_path_at(v, path, 0, new, op)
}

fn set_path_at(
    v: &Jsonb,
    path: &[Option<String>],
    level: usize,
    new: Option<&Jsonb>,
    op: PathOp,
) -> PgResult<Jsonb> {
    let _depth = stack_depth::enter()?;
    let Some(step) = path[level].as_deref() else {
        return Err(err(
            SqlState::NULL_VALUE_NOT_ALLOWED,
            format!("path element at position {} is null", level + 1),
        ));
    };
    let last = level + 1 == path.len();
    match v {
        Jsonb::Object(pairs) => {
            let mut out = Vec::with_capacity(pairs.len() + 1);
            let mut found = false;
            for (k, val) in pairs {
                if !found && k == step {
                    found = true;
                    if last {
                        if matches!(op, PathOp::InsertBefore | PathOp::InsertAfter) {
                            return Err(err(
                                SqlState::INVALID_PARAMETER_VALUE,
                                "cannot replace existing key",
                            )
                            .with_hint("Try using the function jsonb_set to replace key value."));
                        }
                        if op != PathOp::Delete {
                            out.push((k.clone(), new.cloned().unwrap_or(Jsonb::Null)));
                        }
                    } else {
                        out.push((k.clone(), set_path_at(val, path, level + 1, new, op)?));
                    }
                } else {
                    out.push((k.clone(), val.clone()));
                }
            }
            if !found && last && op.creates() {
                out.push((step.to_string(), new.cloned().unwrap_or(Jsonb::Null)));
                return Ok(Jsonb::object_from_pairs(out));
            }
            Ok(Jsonb::Object(out))
        }
        Jsonb::Array(items) => {
            let n = items.len() as i64;
            let Some(mut idx) = path_index(step) else {
                return Err(err(
                    SqlState::INVALID_TEXT_REPRESENTATION,
                    format!(
                        "path element at position {} is not an integer: \"{step}\"",
                        level + 1
                    ),
                ));
            };
            // Below the first element: prepend (when creating).
            let before_all = idx < 0 && -idx > n;
            if idx < 0 && !before_all {
                idx += n;
            }
            if idx > n {
                idx = n;
            }
            let new_value = || new.cloned().unwrap_or(Jsonb::Null);
            let mut out = Vec::with_capacity(items.len() + 1);
            let mut done = false;
            if (before_all || n == 0) && last && op.creates() {
                out.push(new_value());
                done = true;
            }
            for (i, item) in items.iter().enumerate() {
                if !before_all && i as i64 == idx {
                    if last {
                        if matches!(op, PathOp::InsertBefore | PathOp::Create) {
                            out.push(new_value());
                        }
                        if matches!(op, PathOp::InsertBefore | PathOp::InsertAfter) {
                            out.push(item.clone());
                        }
                        if matches!(op, PathOp::InsertAfter | PathOp::Replace) {
                            out.push(new_value());
                        }
                        done = true;
                    } else {
                        out.push(set_path_at(item, path, level + 1, new, op)?);
                    }
                } else {
                    out.push(item.clone());
                }
            }
            if op.creates() && !done && last {
                out.push(new_value());
            }
            Ok(Jsonb::Array(out))
        }
        scalar => Ok(scalar.clone()),
    }
}

/// `jsonb_strip_nulls`: object fields whose value is null removed, at
/// every level (array elements stay).
pub fn strip_nulls(v: &Jsonb) -> Jsonb {
    match v {
        Jsonb::Object(pairs) => Jsonb::Object(
            pairs
                .iter()
                .filter(|(_, v)| *v != Jsonb::Null)
                .map(|(k, v)| (k.clone(), strip_nulls(v)))
                .collect(),
        ),
        Jsonb::Array(items) => Jsonb::Array(items.iter().map(strip_nulls).collect()),
        other => other.clone(),
    }
}

// ----- json (text) extraction -----

/// The node at `path` of a json text (object steps take the last of
/// duplicate keys, as PostgreSQL's json functions do).
pub fn json_get_path<'a>(root: &'a JsonNode, path: &[Option<String>]) -> Option<&'a JsonNode> {
    let mut cur = root;
    for step in path {
        let step = step.as_deref()?;
        cur = match cur {
            JsonNode::Object { pairs, .. } => &pairs.iter().rev().find(|(k, _)| k == step)?.1,
            JsonNode::Array { items, .. } => {
                let i = path_index(step)?;
                let i = if i < 0 { items.len() as i64 + i } else { i };
                items.get(usize::try_from(i).ok()?)?
            }
            _ => return None,
        };
    }
    Some(cur)
}

/// The text of a node: verbatim, or for `->>` strings unquoted and null as None.
pub fn json_node_text(text: &str, node: &JsonNode, unquote: bool) -> Option<String> {
    if unquote {
        if let JsonNode::Scalar { string, kind, .. } = node {
            if *kind == "null" {
                return None;
            }
            if let Some(s) = string {
                return Some(s.clone());
            }
        }
    }
    let (a, b) = node.span();
    Some(text[a..b].to_string())
}

/// `json -> text/int`, `json ->> ...`, `json #> path`, `json #>> path`.
pub fn json_extract(
    text: &str,
    path: &[Option<String>],
    unquote: bool,
) -> PgResult<Option<String>> {
    let root = parse_json_spans(text)?;
    if path.is_empty() && !unquote {
        return Ok(Some(text.to_string()));
    }
    Ok(json_get_path(&root, path).and_then(|n| json_node_text(text, n, unquote)))
}

// ----- set-returning functions -----

/// The json/jsonb set-returning functions (used in FROM).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JsonSrf {
    ArrayElements,
    ArrayElementsText,
    Each,
    EachText,
    ObjectKeys,
}

impl JsonSrf {
    pub fn from_name(name: &str) -> Option<(JsonSrf, bool)> {
        let (json, rest) = if let Some(r) = name.strip_prefix("jsonb_") {
            (false, r)
        } else {
            (true, name.strip_prefix("json_")?)
        };
        let f = match rest {
            "array_elements" => JsonSrf::ArrayElements,
            "array_elements_text" => JsonSrf::ArrayElementsText,
            "each" => JsonSrf::Each,
            "each_text" => JsonSrf::EachText,
            "object_keys" => JsonSrf::ObjectKeys,
            _ => return None,
        };
        Some((f, json))
    }

    /// Output columns (name, type) for a json (`json`) or jsonb argument.
    pub fn columns(self, json: bool) -> Vec<(&'static str, crate::TypeId)> {
        use crate::TypeId::{Json, Jsonb, Text};
        let doc = if json { Json } else { Jsonb };
        match self {
            JsonSrf::ArrayElements => vec![("value", doc)],
            JsonSrf::ArrayElementsText => vec![("value", Text)],
            JsonSrf::Each => vec![("key", Text), ("value", doc)],
            JsonSrf::EachText => vec![("key", Text), ("value", Text)],
            JsonSrf::ObjectKeys => vec![("", Text)],
        }
    }

    fn name(self, json: bool) -> String {
        let base = match self {
            JsonSrf::ArrayElements => "array_elements",
            JsonSrf::ArrayElementsText => "array_elements_text",
            JsonSrf::Each => "each",
            JsonSrf::EachText => "each_text",
            JsonSrf::ObjectKeys => "object_keys",
        };
        format!("{}_{base}", if json { "json" } else { "jsonb" })
    }
}

fn srf_error(msg: impl Into<String>) -> PgError {
    err(SqlState::INVALID_PARAMETER_VALUE, msg)
}

/// The rows of `f(arg)`; a NULL argument gives none.
pub fn srf_rows(f: JsonSrf, json: bool, arg: &crate::Value) -> PgResult<Vec<Vec<crate::Value>>> {
    use crate::Value;
    let text_or_null = |s: Option<String>| s.map_or(Value::Null, Value::Text);
    if json {
        let Some(text) = arg.as_str() else {
            return Ok(Vec::new());
        };
        let root = parse_json_spans(text)?;
        let verbatim = |n: &JsonNode| Value::Text(text[n.span().0..n.span().1].to_string());
        return Ok(match (f, &root) {
            (
                JsonSrf::ArrayElements | JsonSrf::ArrayElementsText,
                JsonNode::Array { items, .. },
            ) => items
                .iter()
                .map(|n| {
                    vec![if f == JsonSrf::ArrayElements {
                        verbatim(n)
                    } else {
                        text_or_null(json_node_text(text, n, true))
                    }]
                })
                .collect(),
            (JsonSrf::ArrayElements | JsonSrf::ArrayElementsText, JsonNode::Object { .. }) => {
                return Err(srf_error(format!(
                    "cannot call {} on a non-array",
                    f.name(true)
                )))
            }
            (JsonSrf::ArrayElements | JsonSrf::ArrayElementsText, _) => {
                return Err(srf_error(format!(
                    "cannot call {} on a scalar",
                    f.name(true)
                )))
            }
            (JsonSrf::Each | JsonSrf::EachText, JsonNode::Object { pairs, .. }) => pairs
                .iter()
                .map(|(k, n)| {
                    let v = if f == JsonSrf::Each {
                        verbatim(n)
                    } else {
                        text_or_null(json_node_text(text, n, true))
                    };
                    vec![Value::Text(k.clone()), v]
                })
                .collect(),
            (JsonSrf::Each | JsonSrf::EachText, JsonNode::Array { .. }) => {
                return Err(srf_error("cannot deconstruct an array as an object"))
            }
            (JsonSrf::Each | JsonSrf::EachText, _) => {
                return Err(srf_error("cannot deconstruct a scalar"))
            }
            (JsonSrf::ObjectKeys, JsonNode::Object { pairs, .. }) => pairs
                .iter()
                .map(|(k, _)| vec![Value::Text(k.clone())])
                .collect(),
            (JsonSrf::ObjectKeys, JsonNode::Array { .. }) => {
                return Err(srf_error("cannot call json_object_keys on an array"))
            }
            (JsonSrf::ObjectKeys, _) => {
                return Err(srf_error("cannot call json_object_keys on a scalar"))
            }
        });
    }
    let Value::Jsonb(doc) = arg else {
        return Ok(Vec::new());
    };
    let jsonb = |j: &Jsonb| super::build::jsonb_value(j.clone());
    Ok(match (f, doc.tree()) {
        (JsonSrf::ArrayElements, Jsonb::Array(items)) => {
            items.iter().map(|i| vec![jsonb(i)]).collect()
        }
        (JsonSrf::ArrayElementsText, Jsonb::Array(items)) => items
            .iter()
            .map(|i| vec![text_or_null(i.to_text_unquoted())])
            .collect(),
        (JsonSrf::ArrayElements | JsonSrf::ArrayElementsText, Jsonb::Object(_)) => {
            return Err(srf_error("cannot extract elements from an object"))
        }
        (JsonSrf::ArrayElements | JsonSrf::ArrayElementsText, _) => {
            return Err(srf_error("cannot extract elements from a scalar"))
        }
        (JsonSrf::Each, Jsonb::Object(pairs)) => pairs
            .iter()
            .map(|(k, v)| vec![Value::Text(k.clone()), jsonb(v)])
            .collect(),
        (JsonSrf::EachText, Jsonb::Object(pairs)) => pairs
            .iter()
            .map(|(k, v)| vec![Value::Text(k.clone()), text_or_null(v.to_text_unquoted())])
            .collect(),
        (JsonSrf::Each | JsonSrf::EachText, _) => {
            return Err(srf_error(format!(
                "cannot call {} on a non-object",
                f.name(false)
            )))
        }
        (JsonSrf::ObjectKeys, Jsonb::Object(pairs)) => pairs
            .iter()
            .map(|(k, _)| vec![Value::Text(k.clone())])
            .collect(),
        (JsonSrf::ObjectKeys, Jsonb::Array(_)) => {
            return Err(srf_error("cannot call jsonb_object_keys on an array"))
        }
        (JsonSrf::ObjectKeys, _) => {
            return Err(srf_error("cannot call jsonb_object_keys on a scalar"))
        }
    })
}
