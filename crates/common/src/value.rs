//! Runtime values of SQL expressions and table columns.

use crate::types::numeric::Numeric;
use crate::types::TypeId;

/// A single SQL value. Strings of every string type (text, varchar, char(n), name)
/// are `Text`; the static type says which. Dates are days since 2000-01-01,
/// timestamps microseconds since 2000-01-01 00:00:00 (timestamptz in UTC), as PostgreSQL.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Null,
    Bool(bool),
    Int2(i16),
    Int4(i32),
    Int8(i64),
    Float4(f32),
    Float8(f64),
    Numeric(Box<Numeric>),
    Text(String),
    Oid(u32),
    Date(i32),
    Timestamp(i64),
    Timestamptz(i64),
}

impl Value {
    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }

    /// The natural type of a non-null value.
    pub fn type_id(&self) -> Option<TypeId> {
        Some(match self {
            Value::Null => return None,
            Value::Bool(_) => TypeId::Bool,
            Value::Int2(_) => TypeId::Int2,
            Value::Int4(_) => TypeId::Int4,
            Value::Int8(_) => TypeId::Int8,
            Value::Float4(_) => TypeId::Float4,
            Value::Float8(_) => TypeId::Float8,
            Value::Numeric(_) => TypeId::Numeric,
            Value::Text(_) => TypeId::Text,
            Value::Oid(_) => TypeId::Oid,
            Value::Date(_) => TypeId::Date,
            Value::Timestamp(_) => TypeId::Timestamp,
            Value::Timestamptz(_) => TypeId::Timestamptz,
        })
    }
}
