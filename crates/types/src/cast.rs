//! Casts between built-in types, with PostgreSQL's implicit / assignment /
//! explicit contexts (pg_cast.castcontext).

use crate::datetime;
use crate::io::{self, enforce_string_typmod, truncate_name};
use crate::numeric::Numeric as Num;
use crate::{DataType, TypeId};
use crate::{IoSettings, Value};
use common::{PgError, PgResult, SqlState};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum CastContext {
    Implicit,
    Assignment,
    Explicit,
}

/// The least context in which a cast from `from` to `to` is allowed
/// (pg_cast plus PostgreSQL's automatic I/O conversion casts); None: no cast.
pub fn cast_context(from: TypeId, to: TypeId) -> Option<CastContext> {
    use CastContext::{Assignment as A, Explicit as E, Implicit as I};
    use TypeId::*;
    if from == to {
        return Some(I);
    }
    if from == Void || to == Void || to == Unknown {
        return None;
    }
    if from == Unknown {
        return Some(I);
    }
    let c = match (from, to) {
        (Bool, Int4) => E,
        (Bool, Text | Bpchar | Varchar) => A,
        (Name, Text) => I,
        // "char" (pg_type.typtype and friends) compares as text.
        (Char, Text) => I,
        (Name, Bpchar | Varchar) => A,
        (Int8, Int2 | Int4) => A,
        // pg_cast: integers and oid convert to every reg* type implicitly,
        // reg* types to integers in assignment, text only to regclass.
        (Int8 | Int2 | Int4 | Oid, t) if t.is_reg() => I,
        (t, Int8 | Int4) if t.is_reg() => A,
        (t, Oid) if t.is_reg() => I,
        (RegProc, RegProcedure) | (RegProcedure, RegProc) => I,
        (Int8, Oid | Float4 | Float8 | Numeric) => I,
        (Int2, Int8 | Int4 | Oid | Float4 | Float8 | Numeric) => I,
        (Int4, Bool) => E,
        (Int4, Int2) => A,
        (Int4, Int8 | Oid | Float4 | Float8 | Numeric) => I,
        (Text, Name | Bpchar | Varchar | RegClass) => I,
        (Oid, Int8 | Int4) => A,
        (Float4, Int8 | Int2 | Int4 | Numeric) => A,
        (Float4, Float8) => I,
        (Float8, Int8 | Int2 | Int4 | Float4 | Numeric) => A,
        (Bpchar, Name | Text | Varchar) => I,
        (Varchar, Name | Text | Bpchar | RegClass) => I,
        (Date, Timestamp | Timestamptz) => I,
        (Timestamp, Date) => A,
        (Timestamp, Timestamptz) => I,
        (Timestamptz, Date | Timestamp) => A,
        (Numeric, Int8 | Int2 | Int4) => A,
        (Numeric, Float4 | Float8) => I,
        (Json, Jsonb) | (Jsonb, Json) => A,
        (Cidr, Inet) => I,
        (Inet, Cidr) => A,
        (MacAddr, MacAddr8) | (MacAddr8, MacAddr) => I,
        (Money, Numeric) | (Numeric | Int4 | Int8, Money) => A,
        (Jsonb, Bool | Numeric | Int2 | Int4 | Int8 | Float4 | Float8) => E,
        // Arrays convert element by element, in the elements' context.
        _ if from.is_array() && to.is_array() => {
            return cast_context(from.array_element()?, to.array_element()?)
        }
        // Automatic I/O conversion casts: to string types in assignment,
        // from string types explicitly.
        _ if to.is_string() => A,
        _ if from.is_string() => E,
        _ => return None,
    };
    Some(c)
}

/// Whether a cast from `from` to `to` exists in `context`.
pub fn can_cast(from: TypeId, to: TypeId, context: CastContext) -> bool {
    cast_context(from, to).is_some_and(|c| c <= context)
}

fn out_of_range(what: &str) -> PgError {
    PgError::new(
        SqlState::NUMERIC_VALUE_OUT_OF_RANGE,
        format!("{what} out of range"),
    )
}

fn cannot_cast(from: TypeId, to: TypeId) -> PgError {
    PgError::new(
        SqlState::CANNOT_COERCE,
        format!(
            "cannot cast type {} to {}",
            from.display_name(),
            to.display_name()
        ),
    )
}

/// Integer value of an integer-like Value.
fn int_of(v: &Value) -> Option<i64> {
    match v {
        Value::Int2(i) => Some(*i as i64),
        Value::Int4(i) => Some(*i as i64),
        Value::Int8(i) => Some(*i),
        _ => None,
    }
}

/// float8 → integer with rint and PostgreSQL's range test.
pub fn f64_to_int(v: f64, to: TypeId) -> PgResult<Value> {
    let r = v.round_ties_even();
    let ok = |lo: f64, hi: f64| !r.is_nan() && r >= lo && r < hi;
    match to {
        TypeId::Int2 => {
            if ok(-32768.0, 32768.0) {
                Ok(Value::Int2(r as i16))
            } else {
                Err(out_of_range("smallint"))
            }
        }
        TypeId::Int4 => {
            if ok(-2147483648.0, 2147483648.0) {
                Ok(Value::Int4(r as i32))
            } else {
                Err(out_of_range("integer"))
            }
        }
        _ => {
            if ok(-9223372036854775808.0, 9223372036854775808.0) {
                Ok(Value::Int8(r as i64))
            } else {
                Err(out_of_range("bigint"))
            }
        }
    }
}

/// float4 → integer (rint in single precision, as PostgreSQL).
fn f32_to_int(v: f32, to: TypeId) -> PgResult<Value> {
    f64_to_int(v.round_ties_even() as f64, to)
}

/// Integer → integer type with range check.
pub fn int_to_int(v: i64, to: TypeId) -> PgResult<Value> {
    match to {
        TypeId::Int2 => i16::try_from(v)
            .map(Value::Int2)
            .map_err(|_| out_of_range("smallint")),
        TypeId::Int4 => i32::try_from(v)
            .map(Value::Int4)
            .map_err(|_| out_of_range("integer")),
        _ => Ok(Value::Int8(v)),
    }
}

/// Converts non-null `v` of type `from` to `to`, applying `to.typmod`.
/// Explicit casts to varchar(n)/char(n) truncate; assignment raises 22001.
/// Casts between zoned and zone-less date/times, and to and from text, use
/// the session's `io` settings.
pub fn cast_value(
    v: Value,
    from: TypeId,
    to: DataType,
    context: CastContext,
    io: &IoSettings,
) -> PgResult<Value> {
    if v.is_null() {
        return Ok(Value::Null);
    }
    let explicit = context == CastContext::Explicit;
    let converted = convert(v, from, to, io)?;
    apply_typmod(converted, to, explicit)
}

/// jsonb to json, a string type, or (from a jsonb number or boolean of the
/// right kind) a numeric type or boolean.
fn jsonb_to_scalar(doc: &crate::json::JsonbDoc, to: DataType, io: &IoSettings) -> PgResult<Value> {
    use crate::json::Jsonb;
    let target = to.id;
    if target == TypeId::Json || target.is_string() {
        // From the stored bytes when the document has them.
        let text = doc.to_text();
        return Ok(Value::Text(if target == TypeId::Name {
            truncate_name(&text).to_string()
        } else {
            text
        }));
    }
    let j = doc.tree();
    match (j, target) {
        (Jsonb::Bool(b), TypeId::Bool) => Ok(Value::Bool(*b)),
        (Jsonb::Number(n), t) if t.is_numeric_family() => {
            convert(Value::Numeric(Box::new(n.clone())), TypeId::Numeric, to, io)
        }
        _ => Err(PgError::new(
            SqlState::INVALID_PARAMETER_VALUE,
            format!(
                "cannot cast jsonb {} to type {}",
                match j {
                    Jsonb::Number(_) => "numeric",
                    other => other.type_name(),
                },
                target.display_name()
            ),
        )),
    }
}

/// Applies `ty`'s typmod to a value already of type `ty.id`.
pub fn apply_typmod(v: Value, ty: DataType, explicit: bool) -> PgResult<Value> {
    match (ty.id, v) {
        (TypeId::Varchar | TypeId::Bpchar, Value::Text(s)) if ty.typmod >= 4 => {
            Ok(Value::Text(enforce_string_typmod(s, ty, explicit)?))
        }
        (TypeId::Numeric, Value::Numeric(n)) if ty.typmod >= 4 => {
            Ok(Value::Numeric(Box::new(n.apply_typmod(ty.typmod)?)))
        }
        (TypeId::Timestamp, Value::Timestamp(t)) if ty.typmod >= 0 => Ok(Value::Timestamp(
            datetime::adjust_timestamp_typmod(t, ty.typmod)?,
        )),
        (TypeId::Timestamptz, Value::Timestamptz(t)) if ty.typmod >= 0 => Ok(Value::Timestamptz(
            datetime::adjust_timestamp_typmod(t, ty.typmod)?,
        )),
        (t, Value::Array(a)) if t.is_array() && ty.typmod >= 0 => {
            let elem = DataType::with_typmod(t.array_element().unwrap_or(a.elem), ty.typmod);
            let items = a
                .items
                .iter()
                .map(|v| apply_typmod(v.clone(), elem, explicit))
                .collect::<PgResult<Vec<_>>>()?;
            Ok(Value::array(crate::array::ArrayValue {
                items,
                ..crate::array::ArrayValue::clone(&a)
            }))
        }
        (_, v) => Ok(v),
    }
}

/// An array cast element by element (the target's typmod applies to
/// each element).
fn convert_array(
    a: &crate::array::ArrayValue,
    from: TypeId,
    to: DataType,
    io: &IoSettings,
) -> PgResult<Value> {
    let from_elem = from.array_element().unwrap_or(a.elem);
    let to_elem = DataType::with_typmod(to.id.array_element().unwrap_or(TypeId::Text), to.typmod);
    let items = a
        .items
        .iter()
        .map(|v| cast_value(v.clone(), from_elem, to_elem, CastContext::Explicit, io))
        .collect::<PgResult<Vec<_>>>()?;
    Ok(Value::array(crate::array::ArrayValue {
        elem: to_elem.id,
        dims: a.dims.clone(),
        items,
    }))
}

fn convert(v: Value, from: TypeId, to: DataType, io: &IoSettings) -> PgResult<Value> {
    use TypeId::*;
    let target = to.id;
    if let Value::Array(a) = &v {
        if target.is_array() {
            if target == from && to.typmod < 0 {
                return Ok(v);
            }
            return convert_array(a, from, to, io);
        }
    }
    // Strings (and untyped literals) as the source.
    if let Value::Text(s) = v {
        return match target {
            Text | Varchar | Bpchar | Unknown => {
                if from == Bpchar && target != Bpchar {
                    let mut s = s;
                    s.truncate(io::bpchar_trim(&s).len());
                    Ok(Value::Text(s))
                } else {
                    Ok(Value::Text(s))
                }
            }
            Name => {
                let t = if from == Bpchar {
                    io::bpchar_trim(&s)
                } else {
                    &s
                };
                Ok(Value::Text(truncate_name(t).to_string()))
            }
            // I/O conversion; the typmod step enforces lengths afterwards.
            _ => io::parse_text(DataType::new(target), &s, io),
        };
    }
    if target == from {
        return Ok(v);
    }
    if let Value::Jsonb(j) = &v {
        return jsonb_to_scalar(j, to, io);
    }
    match target {
        Text | Varchar | Bpchar | Name | Unknown => {
            let s = match &v {
                Value::Bool(b) if target != Name => (if *b { "true" } else { "false" }).to_string(),
                // text(inet): the mask length always shown.
                Value::Inet(n) if target != Name => crate::network::show(n),
                _ => io::to_text(&v, from, io),
            };
            return Ok(Value::Text(if target == Name {
                truncate_name(&s).to_string()
            } else {
                s
            }));
        }
        _ => {}
    }
    let r = match (&v, target) {
        (Value::Int2(_) | Value::Int4(_) | Value::Int8(_), Int2 | Int4 | Int8) => {
            int_to_int(int_of(&v).unwrap_or(0), target)?
        }
        (Value::Int2(_) | Value::Int4(_) | Value::Int8(_), Float4) => {
            Value::Float4(int_of(&v).unwrap_or(0) as f32)
        }
        (Value::Int2(_) | Value::Int4(_) | Value::Int8(_), Float8) => {
            Value::Float8(int_of(&v).unwrap_or(0) as f64)
        }
        (Value::Int2(_) | Value::Int4(_) | Value::Int8(_), Numeric) => {
            Value::Numeric(Box::new(Num::from_i64(int_of(&v).unwrap_or(0))))
        }
        (Value::Int8(i), t) if t == Oid || t.is_reg() => {
            if *i < 0 || *i > u32::MAX as i64 {
                return Err(PgError::new(
                    SqlState::NUMERIC_VALUE_OUT_OF_RANGE,
                    "OID out of range",
                ));
            }
            Value::Oid(*i as u32)
        }
        (Value::Int2(_) | Value::Int4(_), t) if t == Oid || t.is_reg() => {
            Value::Oid(int_of(&v).unwrap_or(0) as i32 as u32)
        }
        (Value::Int4(i), Bool) => Value::Bool(*i != 0),
        (Value::Bool(b), Int4) => Value::Int4(*b as i32),
        (Value::Oid(o), Int4) => Value::Int4(*o as i32),
        (Value::Oid(o), Int8) => Value::Int8(*o as i64),
        (Value::Oid(o), t) if t == Oid || t.is_reg() => Value::Oid(*o),
        (Value::Float4(f), Int2 | Int4 | Int8) => f32_to_int(*f, target)?,
        (Value::Float8(f), Int2 | Int4 | Int8) => f64_to_int(*f, target)?,
        (Value::Float4(f), Float8) => Value::Float8(*f as f64),
        (Value::Float8(f), Float4) => {
            let r = *f as f32;
            if r.is_infinite() && !f.is_infinite() {
                return Err(crate::float::overflow_error());
            }
            if r == 0.0 && *f != 0.0 {
                return Err(crate::float::underflow_error());
            }
            Value::Float4(r)
        }
        (Value::Float4(f), Numeric) => Value::Numeric(Box::new(Num::from_f32(*f))),
        (Value::Float8(f), Numeric) => Value::Numeric(Box::new(Num::from_f64(*f))),
        (Value::Numeric(n), Int2) => Value::Int2(n.to_i16()?),
        (Value::Numeric(n), Int4) => Value::Int4(n.to_i32()?),
        (Value::Numeric(n), Int8) => Value::Int8(n.to_i64()?),
        (Value::Numeric(n), Float4) => Value::Float4(n.to_f32()),
        (Value::Numeric(n), Float8) => Value::Float8(n.to_f64()),
        (Value::Inet(n), Cidr) => Value::Inet(n.network_part()),
        (Value::Inet(_), Inet) => v,
        (Value::MacAddr(m), MacAddr8) => Value::MacAddr8(crate::network::macaddr_to_macaddr8(m)),
        (Value::MacAddr8(m), MacAddr) => Value::MacAddr(crate::network::macaddr8_to_macaddr(m)?),
        (Value::Money(m), Numeric) => Value::Numeric(Box::new(crate::money::to_numeric(*m)?)),
        (Value::Numeric(n), Money) => Value::Money(crate::money::from_numeric(n)?),
        (Value::Int4(_) | Value::Int8(_), Money) => {
            Value::Money(crate::money::from_int(int_of(&v).unwrap_or(0))?)
        }
        (Value::Date(d), Timestamp) => Value::Timestamp(datetime::date_to_timestamp(*d)?),
        // Zone-less values are wall-clock times in the session's zone.
        (Value::Date(d), Timestamptz) => Value::Timestamptz(datetime::local_to_tz(
            datetime::date_to_timestamp(*d)?,
            io.timezone,
        )),
        (Value::Timestamp(t), Date) => Value::Date(datetime::timestamp_to_date(*t)?),
        (Value::Timestamptz(t), Date) => Value::Date(datetime::timestamp_to_date(
            datetime::tz_to_local(*t, io.timezone),
        )?),
        (Value::Timestamp(t), Timestamptz) => {
            Value::Timestamptz(datetime::local_to_tz(*t, io.timezone))
        }
        (Value::Timestamptz(t), Timestamptz) => Value::Timestamptz(*t),
        (Value::Timestamptz(t), Timestamp) => {
            Value::Timestamp(datetime::tz_to_local(*t, io.timezone))
        }
        (Value::Timestamp(t), Timestamp) => Value::Timestamp(*t),
        (Value::Numeric(_), Numeric)
        | (Value::Float8(_), Float8)
        | (Value::Float4(_), Float4)
        | (Value::Bool(_), Bool)
        | (Value::Date(_), Date)
        | (Value::Interval(_), Interval) => v,
        _ => return Err(cannot_cast(from, target)),
    };
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;
    use CastContext::*;

    fn c(v: Value, from: TypeId, to: DataType, ctx: CastContext) -> String {
        match cast_value(v, from, to, ctx, &IoSettings::UTC) {
            Ok(v) => io::to_text(&v, to.id, &IoSettings::UTC),
            Err(e) => format!("ERROR {}: {}", e.code.0, e.message),
        }
    }
    fn num(s: &str) -> Value {
        Value::Numeric(Box::new(Num::parse(s).unwrap()))
    }

    #[test]
    fn contexts() {
        use TypeId::*;
        assert!(can_cast(Int4, Int8, Implicit));
        assert!(!can_cast(Int8, Int4, Implicit));
        assert!(can_cast(Int8, Int4, Assignment));
        assert!(can_cast(Numeric, Int4, Assignment));
        assert!(!can_cast(Text, Int4, Assignment));
        assert!(can_cast(Text, Int4, Explicit));
        assert!(can_cast(Int4, Text, Assignment));
        assert!(!can_cast(Int4, Text, Implicit));
        assert!(can_cast(Varchar, Text, Implicit));
        assert!(can_cast(Bpchar, Varchar, Implicit));
        assert!(can_cast(Date, Timestamp, Implicit));
        assert!(can_cast(Bool, Int4, Explicit));
        assert!(!can_cast(Bool, Int4, Assignment));
        assert!(!can_cast(Bool, Int8, Explicit));
        assert!(can_cast(Unknown, Date, Implicit));
        assert!(can_cast(Int4, Float8, Implicit));
        assert!(can_cast(Numeric, Float8, Implicit));
        assert!(!can_cast(Float8, Numeric, Implicit));
        assert!(!can_cast(Date, Int4, Explicit));
        assert!(can_cast(Int4, RegClass, Implicit));
        assert!(can_cast(Timestamptz, Timestamp, Assignment));
    }

    #[test]
    fn numeric_casts() {
        use TypeId::*;
        assert_eq!(c(num("2.5"), Numeric, Int4.into(), Explicit), "3");
        assert_eq!(c(num("-2.5"), Numeric, Int4.into(), Explicit), "-3");
        assert_eq!(c(Value::Float8(2.5), Float8, Int4.into(), Explicit), "2");
        assert_eq!(c(Value::Float8(3.5), Float8, Int4.into(), Explicit), "4");
        assert_eq!(
            c(Value::Float8(3e9), Float8, Int4.into(), Explicit),
            "ERROR 22003: integer out of range"
        );
        assert_eq!(
            c(Value::Float8(f64::NAN), Float8, Int2.into(), Explicit),
            "ERROR 22003: smallint out of range"
        );
        assert_eq!(
            c(Value::Int8(1 << 40), Int8, Int4.into(), Assignment),
            "ERROR 22003: integer out of range"
        );
        assert_eq!(
            c(Value::Int4(40000), Int4, Int2.into(), Assignment),
            "ERROR 22003: smallint out of range"
        );
        assert_eq!(
            c(num("1e30"), Numeric, Int8.into(), Assignment),
            "ERROR 22003: bigint out of range"
        );
        assert_eq!(
            c(num("NaN"), Numeric, Int4.into(), Assignment),
            "ERROR 0A000: cannot convert NaN to integer"
        );
        assert_eq!(
            c(Value::Float8(0.1), Float8, Numeric.into(), Explicit),
            "0.1"
        );
        assert_eq!(
            c(
                Value::Float8(1.234_567_890_123_456_7),
                Float8,
                Numeric.into(),
                Explicit
            ),
            "1.23456789012346"
        );
        assert_eq!(
            c(num("123.456"), Numeric, DataType::numeric(5, 2), Assignment),
            "123.46"
        );
        assert_eq!(
            c(Value::Int4(1234), Int4, DataType::numeric(5, 2), Assignment),
            "ERROR 22003: numeric field overflow"
        );
        assert_eq!(
            c(Value::Float8(1e300), Float8, Float4.into(), Explicit),
            "ERROR 22003: value out of range: overflow"
        );
        assert_eq!(c(Value::Int4(-1), Int4, Oid.into(), Implicit), "4294967295");
        assert_eq!(
            c(Value::Oid(4294967295), Oid, Int4.into(), Assignment),
            "-1"
        );
        assert_eq!(
            c(Value::Int8(-1), Int8, Oid.into(), Implicit),
            "ERROR 22003: OID out of range"
        );
    }

    #[test]
    fn string_casts() {
        use TypeId::*;
        let t = |s: &str| Value::Text(s.to_string());
        assert_eq!(c(Value::Bool(true), Bool, Text.into(), Explicit), "true");
        assert_eq!(c(Value::Int4(42), Int4, Text.into(), Explicit), "42");
        assert_eq!(c(t(" 42 "), Text, Int4.into(), Explicit), "42");
        assert_eq!(
            c(t("abc"), Text, Int4.into(), Explicit),
            "ERROR 22P02: invalid input syntax for type integer: \"abc\""
        );
        assert_eq!(c(t("abcdef"), Text, DataType::varchar(3), Explicit), "abc");
        assert_eq!(
            c(t("abcdef"), Text, DataType::varchar(3), Assignment),
            "ERROR 22001: value too long for type character varying(3)"
        );
        assert_eq!(c(t("ab"), Text, DataType::bpchar(4), Assignment), "ab  ");
        assert_eq!(c(t("abcdef"), Text, DataType::bpchar(4), Explicit), "abcd");
        assert_eq!(c(t("ab  "), Bpchar, Text.into(), Implicit), "ab");
        assert_eq!(c(t("ab  "), Bpchar, Varchar.into(), Implicit), "ab");
        assert_eq!(
            c(t("2024-01-02"), Unknown, Date.into(), Implicit),
            "2024-01-02"
        );
        assert_eq!(c(Value::Date(0), Date, Text.into(), Explicit), "2000-01-01");
        assert_eq!(c(num("1.50"), Numeric, Varchar.into(), Assignment), "1.50");
        assert_eq!(
            c(Value::Int4(1), Int4, Date.into(), Explicit),
            "ERROR 42846: cannot cast type integer to date"
        );
    }

    #[test]
    fn datetime_casts() {
        use TypeId::*;
        assert_eq!(
            c(Value::Date(1), Date, Timestamp.into(), Implicit),
            "2000-01-02 00:00:00"
        );
        assert_eq!(
            c(Value::Date(1), Date, Timestamptz.into(), Implicit),
            "2000-01-02 00:00:00+00"
        );
        assert_eq!(
            c(Value::Timestamp(-1), Timestamp, Date.into(), Assignment),
            "1999-12-31"
        );
        assert_eq!(
            c(Value::Date(i32::MAX), Date, Timestamp.into(), Implicit),
            "infinity"
        );
        assert_eq!(
            c(Value::Date(110_000_000), Date, Timestamp.into(), Implicit),
            "ERROR 22008: date out of range for timestamp"
        );
    }
}
