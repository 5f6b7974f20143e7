//! Runtime values of SQL expressions and table columns.

use crate::numeric::Numeric;
use crate::TypeId;

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
    /// `bytea`.
    Bytea(Vec<u8>),
    /// `uuid`, its 16 bytes in order (big-endian as printed).
    Uuid([u8; 16]),
    Interval(crate::interval::Interval),
    /// `inet` or `cidr` (the static type says which; see `network.rs`).
    Inet(crate::network::Inet),
    /// `macaddr`, its 6 bytes.
    MacAddr([u8; 6]),
    /// `macaddr8`, its 8 bytes.
    MacAddr8([u8; 8]),
    /// `money`: cents (lc_monetary C: two fraction digits).
    Money(i64),
    /// A jsonb document, shared: values are cloned often and documents are big.
    /// A tree, or the stored bytes decoded on demand (`json::JsonbDoc`).
    Jsonb(std::sync::Arc<crate::json::JsonbDoc>),
    /// An array of any element type and any number of dimensions, shared
    /// (see `array/`).
    Array(std::sync::Arc<crate::array::ArrayValue>),
    /// A user-defined enum's value (see `enums.rs`); the static type names the enum.
    Enum(crate::enums::EnumDatum),
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
            Value::Bytea(_) => TypeId::Bytea,
            Value::Uuid(_) => TypeId::Uuid,
            Value::Interval(_) => TypeId::Interval,
            Value::Inet(_) => TypeId::Inet,
            Value::MacAddr(_) => TypeId::MacAddr,
            Value::MacAddr8(_) => TypeId::MacAddr8,
            Value::Money(_) => TypeId::Money,
            Value::Jsonb(_) => TypeId::Jsonb,
            Value::Array(a) => a.elem.array_type().unwrap_or(TypeId::TextArray),
            Value::Enum(d) => TypeId::Enum(crate::enums::type_of_label(d.oid)?),
        })
    }
}

impl Value {
    /// A text value.
    pub fn text(s: impl Into<String>) -> Value {
        Value::Text(s.into())
    }

    /// A numeric value.
    pub fn numeric(n: Numeric) -> Value {
        Value::Numeric(Box::new(n))
    }

    /// An array value.
    pub fn array(a: crate::array::ArrayValue) -> Value {
        Value::Array(std::sync::Arc::new(a))
    }

    /// The array of an `Array` value.
    pub fn as_array(&self) -> Option<&crate::array::ArrayValue> {
        match self {
            Value::Array(a) => Some(a),
            _ => None,
        }
    }

    /// The string of a `Text` value.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::Text(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Value::Bool(b) => Some(*b),
            _ => None,
        }
    }

    /// Integer value of int2/int4/int8/oid.
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Value::Int2(v) => Some(*v as i64),
            Value::Int4(v) => Some(*v as i64),
            Value::Int8(v) => Some(*v),
            Value::Oid(v) => Some(*v as i64),
            _ => None,
        }
    }

    /// Value of a numeric-family value as a double.
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Value::Int2(v) => Some(*v as f64),
            Value::Int4(v) => Some(*v as f64),
            Value::Int8(v) => Some(*v as f64),
            Value::Float4(v) => Some(*v as f64),
            Value::Float8(v) => Some(*v),
            Value::Numeric(n) => Some(n.to_f64()),
            _ => None,
        }
    }

    /// PostgreSQL's text output of a non-null value as type `ty`
    /// (see `types::io::format_text`).
    pub fn to_pg_text(&self, ty: TypeId, io: &crate::IoSettings) -> String {
        crate::io::to_text(self, ty, io)
    }
}
