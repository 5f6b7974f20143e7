//! User-defined enum types (CREATE TYPE ... AS ENUM), PostgreSQL's enum.c.
//!
//! A value is its label's pg_enum oid, as PostgreSQL stores it; at run time
//! it also carries the label's sort order (`EnumDatum`), so comparisons,
//! sorts and index searches need no lookup. Turning a stored oid back into
//! a datum, and a label into an oid or an oid into its text, goes through
//! the process-wide registry here: the catalog publishes every enum type
//! into it when it loads and whenever enum DDL changes one (see the catalog
//! README). Built-in types never touch it.

use std::collections::HashMap;
use std::sync::{Arc, LazyLock, RwLock};

use common::{Oid, PgError, PgResult, SqlState};

use crate::Value;

/// An enum value: its label's oid and that label's enumsortorder.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EnumDatum {
    pub oid: Oid,
    pub sort_order: f32,
}

/// One pg_enum row.
#[derive(Debug, Clone, PartialEq)]
pub struct EnumLabel {
    pub oid: Oid,
    pub sort_order: f32,
    pub label: String,
}

/// An enum type as the registry knows it.
#[derive(Debug, Clone, PartialEq)]
pub struct EnumType {
    pub oid: Oid,
    pub array_oid: Oid,
    /// pg_type.typname; leaked once per published name so `TypeId` can
    /// hand out `&'static str` names like the built-in types do.
    pub name: &'static str,
    /// `_name` and `name[]`, leaked alike.
    pub array_name: &'static str,
    pub array_display_name: &'static str,
    /// Ordered by sort order.
    pub labels: Vec<EnumLabel>,
}

#[derive(Default)]
struct Registry {
    types: HashMap<Oid, Arc<EnumType>>,
    /// Array type oid -> element type oid.
    arrays: HashMap<Oid, Oid>,
    /// Label oid -> (type oid, sort order).
    labels: HashMap<Oid, (Oid, f32)>,
    names: HashMap<String, &'static str>,
}

static REGISTRY: LazyLock<RwLock<Registry>> = LazyLock::new(Default::default);

fn read() -> std::sync::RwLockReadGuard<'static, Registry> {
    REGISTRY.read().unwrap_or_else(|e| e.into_inner())
}

/// Replaces every registered enum type with `types` (name, oid, array oid,
/// labels in any order).
pub fn publish(types: impl IntoIterator<Item = (String, Oid, Oid, Vec<EnumLabel>)>) {
    let mut r = REGISTRY.write().unwrap_or_else(|e| e.into_inner());
    r.types.clear();
    r.arrays.clear();
    r.labels.clear();
    for (name, oid, array_oid, mut labels) in types {
        labels.sort_by(|a, b| crate::ops::cmp_f64(a.sort_order as f64, b.sort_order as f64));
        let mut intern = |s: String| -> &'static str {
            match r.names.get(&s) {
                Some(n) => n,
                None => {
                    let leaked: &'static str = Box::leak(s.clone().into_boxed_str());
                    r.names.insert(s, leaked);
                    leaked
                }
            }
        };
        let array_name = intern(format!("_{name}"));
        let array_display_name = intern(format!("{name}[]"));
        let name = intern(name);
        for l in &labels {
            r.labels.insert(l.oid, (oid, l.sort_order));
        }
        r.arrays.insert(array_oid, oid);
        r.types.insert(
            oid,
            Arc::new(EnumType {
                oid,
                array_oid,
                name,
                array_name,
                array_display_name,
                labels,
            }),
        );
    }
}

/// The registered enum type of oid `oid`.
pub fn lookup(oid: Oid) -> Option<Arc<EnumType>> {
    read().types.get(&oid).cloned()
}

/// Whether `oid` is an enum type (Some(false)) or an array over one
/// (Some(true)); the element type's oid.
pub fn classify(oid: Oid) -> Option<(Oid, bool)> {
    let r = read();
    if r.types.contains_key(&oid) {
        return Some((oid, false));
    }
    r.arrays.get(&oid).map(|e| (*e, true))
}

/// pg_type.typname of the enum type `oid`, or of its array type.
pub fn type_name(oid: Oid, array: bool) -> &'static str {
    read()
        .types
        .get(&oid)
        .map_or("???", |t| if array { t.array_name } else { t.name })
}

/// format_type's name of the enum type `oid`, or of its array type.
pub fn display_name(oid: Oid, array: bool) -> &'static str {
    read()
        .types
        .get(&oid)
        .map_or("???", |t| if array { t.array_display_name } else { t.name })
}

pub fn array_oid(oid: Oid) -> Oid {
    read().types.get(&oid).map_or(0, |t| t.array_oid)
}

/// A stored label oid as a datum. An oid no type lists (a label whose
/// creating transaction rolled back cannot be stored) sorts by its oid.
pub fn datum(oid: Oid) -> Value {
    let sort_order = read().labels.get(&oid).map_or(oid as f32, |l| l.1);
    debug_assert!(read().labels.contains_key(&oid), "unknown enum label {oid}");
    Value::Enum(EnumDatum { oid, sort_order })
}

/// The enum type a label belongs to.
pub fn type_of_label(oid: Oid) -> Option<Oid> {
    read().labels.get(&oid).map(|l| l.0)
}

/// The label text of a datum.
pub fn label_of(oid: Oid) -> String {
    let r = read();
    let Some((ty, _)) = r.labels.get(&oid) else {
        return oid.to_string();
    };
    r.types
        .get(ty)
        .and_then(|t| t.labels.iter().find(|l| l.oid == oid))
        .map_or_else(|| oid.to_string(), |l| l.label.clone())
}

/// enum_in: the value of label `s` of enum type `ty` (22P02 when none).
pub fn parse(ty: Oid, s: &str) -> PgResult<Value> {
    let t = lookup(ty).ok_or_else(|| unknown_type(ty))?;
    t.labels
        .iter()
        .find(|l| l.label == s)
        .map(|l| {
            Value::Enum(EnumDatum {
                oid: l.oid,
                sort_order: l.sort_order,
            })
        })
        .ok_or_else(|| {
            PgError::new(
                SqlState::INVALID_TEXT_REPRESENTATION,
                format!("invalid input value for enum {}: \"{}\"", t.name, s),
            )
        })
}

fn unknown_type(ty: Oid) -> PgError {
    PgError::new(
        SqlState::UNDEFINED_OBJECT,
        format!("cache lookup failed for type {ty}"),
    )
}

/// The datums of type `ty` in sort order, from `lower` to `upper` inclusive
/// (None: that end of the type). enum_range's core.
pub fn range(ty: Oid, lower: Option<Oid>, upper: Option<Oid>) -> PgResult<Vec<Value>> {
    let t = lookup(ty).ok_or_else(|| unknown_type(ty))?;
    let position = |oid: Option<Oid>, default: usize| match oid {
        None => Some(default),
        Some(o) => t.labels.iter().position(|l| l.oid == o),
    };
    let last = t.labels.len().saturating_sub(1);
    let (Some(from), Some(to)) = (position(lower, 0), position(upper, last)) else {
        return Ok(Vec::new());
    };
    let out = t
        .labels
        .iter()
        .enumerate()
        .filter(|(i, _)| *i >= from && *i <= to)
        .map(|(_, l)| {
            Value::Enum(EnumDatum {
                oid: l.oid,
                sort_order: l.sort_order,
            })
        })
        .collect();
    Ok(out)
}

/// enum_first/enum_last: the lowest or highest label (55000 for an
/// enum without labels, as PostgreSQL).
pub fn first_or_last(ty: Oid, last: bool) -> PgResult<Value> {
    let t = lookup(ty).ok_or_else(|| unknown_type(ty))?;
    let l = if last {
        t.labels.last()
    } else {
        t.labels.first()
    };
    l.map(|l| {
        Value::Enum(EnumDatum {
            oid: l.oid,
            sort_order: l.sort_order,
        })
    })
    .ok_or_else(|| {
        PgError::new(
            SqlState::OBJECT_NOT_IN_PREREQUISITE_STATE,
            format!("enum {} contains no values", t.name),
        )
    })
}
