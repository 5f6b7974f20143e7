//! Operators on built-in types: resolution of operand types (PostgreSQL's
//! operator lookup with implicit casts) and evaluation.

use std::cmp::Ordering;

use crate::datetime::{self, DATE_NOBEGIN, DATE_NOEND};
use crate::float::{check_f32, check_f64};
use crate::numeric::Numeric;
use crate::TypeId;
use crate::Value;
use common::{PgError, PgResult, SqlState};

pub use crate::like::LikePattern;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BinaryOp {
    Add,
    Sub,
    Mul,
    Div,
    Mod,
    Pow,
    Concat,
    /// `&`, `|`, `#` on integers.
    BitAnd,
    BitOr,
    BitXor,
    /// `<<`, `>>`: integer shifted by an int4 count.
    Shl,
    Shr,
    Eq,
    NotEq,
    Lt,
    LtEq,
    Gt,
    GtEq,
}

impl BinaryOp {
    /// The operator's SQL spelling (for "operator does not exist: a + b").
    pub fn symbol(self) -> &'static str {
        match self {
            BinaryOp::Add => "+",
            BinaryOp::Sub => "-",
            BinaryOp::Mul => "*",
            BinaryOp::Div => "/",
            BinaryOp::Mod => "%",
            BinaryOp::Pow => "^",
            BinaryOp::Concat => "||",
            BinaryOp::BitAnd => "&",
            BinaryOp::BitOr => "|",
            BinaryOp::BitXor => "#",
            BinaryOp::Shl => "<<",
            BinaryOp::Shr => ">>",
            BinaryOp::Eq => "=",
            BinaryOp::NotEq => "<>",
            BinaryOp::Lt => "<",
            BinaryOp::LtEq => "<=",
            BinaryOp::Gt => ">",
            BinaryOp::GtEq => ">=",
        }
    }

    pub fn is_comparison(self) -> bool {
        matches!(
            self,
            BinaryOp::Eq
                | BinaryOp::NotEq
                | BinaryOp::Lt
                | BinaryOp::LtEq
                | BinaryOp::Gt
                | BinaryOp::GtEq
        )
    }
}

/// The operand types both sides are cast to, and the result type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpResolution {
    pub left: TypeId,
    pub right: TypeId,
    pub result: TypeId,
}

/// 42883 "operator does not exist: integer || integer" with PostgreSQL's hint.
pub fn operator_not_exist_error(op: BinaryOp, left: TypeId, right: TypeId) -> PgError {
    // Two untyped literals fit every numeric (or bit-string) variant of
    // these operators alike: PostgreSQL finds several and picks none (^ has
    // a preferred float8 variant).
    let arithmetic = !matches!(
        op,
        BinaryOp::Pow
            | BinaryOp::Concat
            | BinaryOp::Eq
            | BinaryOp::NotEq
            | BinaryOp::Lt
            | BinaryOp::LtEq
            | BinaryOp::Gt
            | BinaryOp::GtEq
    );
    if arithmetic && left == TypeId::Unknown && right == TypeId::Unknown {
        return PgError::new(
            SqlState::AMBIGUOUS_FUNCTION,
            format!("operator is not unique: unknown {} unknown", op.symbol()),
        )
        .with_hint(
            "Could not choose a best candidate operator. You might need to add explicit type casts.",
        );
    }
    PgError::new(
        SqlState::UNDEFINED_FUNCTION,
        format!(
            "operator does not exist: {} {} {}",
            left.display_name(),
            op.symbol(),
            right.display_name()
        ),
    )
    .with_hint(
        "No operator matches the given name and argument types. You might need to add explicit type casts.",
    )
}

fn int_rank(t: TypeId) -> u8 {
    match t {
        TypeId::Int2 => 1,
        TypeId::Int4 => 2,
        _ => 3,
    }
}

/// The common type of two numeric-family types for arithmetic / comparison.
fn numeric_common(l: TypeId, r: TypeId) -> TypeId {
    use TypeId::*;
    if l.is_integer() && r.is_integer() {
        return if int_rank(l) >= int_rank(r) { l } else { r };
    }
    if l == Float4 && r == Float4 {
        return Float4;
    }
    if matches!(l, Float4 | Float8) || matches!(r, Float4 | Float8) {
        return Float8;
    }
    Numeric
}

fn res(left: TypeId, right: TypeId, result: TypeId) -> Option<OpResolution> {
    Some(OpResolution {
        left,
        right,
        result,
    })
}

/// Resolves `left op right` as PostgreSQL would (Unknown = untyped literal).
/// None: no such operator (the caller reports 42883).
///
/// String comparisons resolve to text (char(n) operands are cast to text, which
/// drops their trailing blanks, so char(n) compares blank-insensitively).
pub fn resolve_binary_op(op: BinaryOp, left: TypeId, right: TypeId) -> Option<OpResolution> {
    use TypeId::*;
    if left == Void || right == Void {
        return None;
    }
    if op == BinaryOp::Concat {
        // bytea || bytea (an untyped literal taking the bytea side's type).
        let bytea_or_unknown = |t: TypeId| t == Bytea || t == Unknown;
        if (left == Bytea || right == Bytea) && bytea_or_unknown(left) && bytea_or_unknown(right) {
            return res(Bytea, Bytea, Bytea);
        }
        // text || text, text || anynonarray, anynonarray || text.
        let stringy = |t: TypeId| t.is_string();
        return if stringy(left) || stringy(right) {
            res(Text, Text, Text)
        } else {
            None
        };
    }
    if let Some(r) = resolve_interval_op(op, left, right) {
        return r;
    }
    // An untyped literal takes the other side's type.
    let (l, r) = match (left, right) {
        (Unknown, Unknown) => {
            return if op.is_comparison() {
                res(Text, Text, Bool)
            } else {
                None
            }
        }
        (Unknown, t) => (t, t),
        (t, Unknown) => (t, t),
        lr => lr,
    };
    if let Some(r) = resolve_net_money_op(op, l, r) {
        return r;
    }
    let cmp = op.is_comparison();
    let result = |t: TypeId| if cmp { Bool } else { t };
    if matches!(op, BinaryOp::Shl | BinaryOp::Shr) {
        return if l.is_integer() && r.is_integer() {
            res(l, Int4, l)
        } else {
            None
        };
    }
    if matches!(op, BinaryOp::BitAnd | BinaryOp::BitOr | BinaryOp::BitXor) {
        return if l.is_integer() && r.is_integer() {
            let t = numeric_common(l, r);
            res(t, t, t)
        } else {
            None
        };
    }
    if l.is_numeric_family() && r.is_numeric_family() {
        return match op {
            BinaryOp::Pow => {
                let t = numeric_common(l, r);
                let t = if t == Numeric { Numeric } else { Float8 };
                res(t, t, t)
            }
            BinaryOp::Mod => {
                let t = numeric_common(l, r);
                if matches!(t, Float4 | Float8) {
                    None
                } else {
                    res(t, t, t)
                }
            }
            _ => {
                let t = numeric_common(l, r);
                res(t, t, result(t))
            }
        };
    }
    if cmp {
        if l.is_string() && r.is_string() {
            if l == r && l == Name {
                return res(Name, Name, Bool);
            }
            return res(Text, Text, Bool);
        }
        let dt = |t: TypeId| matches!(t, Date | Timestamp | Timestamptz);
        if dt(l) && dt(r) {
            let t = if l == r {
                l
            } else if l == Timestamptz || r == Timestamptz {
                Timestamptz
            } else {
                Timestamp
            };
            return res(t, t, Bool);
        }
        let oid_like = |t: TypeId| t == Oid || t.is_reg();
        let oidish = |t: TypeId| oid_like(t) || matches!(t, Int2 | Int4 | Int8);
        if (oid_like(l) || oid_like(r)) && oidish(l) && oidish(r) {
            // Two values of one reg* type compare as that type, others as oid.
            let t = if l == r { l } else { Oid };
            return res(t, t, Bool);
        }
        if l == r && l.array_element().is_some() {
            return res(l, l, Bool);
        }
        if l == r && matches!(l, Bool | Bytea | Uuid | Interval | Jsonb | Tid | Enum(_)) {
            return res(l, l, Bool);
        }
        // xid and cid have only equality (xideq, xidneq, cideq).
        if l == r
            && matches!(
                (l, op),
                (Xid, BinaryOp::Eq | BinaryOp::NotEq) | (Cid, BinaryOp::Eq)
            )
        {
            return res(l, l, Bool);
        }
        return None;
    }
    match (op, l, r) {
        (BinaryOp::Add | BinaryOp::Sub, Date, Int2 | Int4) => res(Date, Int4, Date),
        (BinaryOp::Add, Int2 | Int4, Date) => res(Int4, Date, Date),
        (BinaryOp::Sub, Date, Date) => res(Date, Date, Int4),
        _ => None,
    }
}

/// The operators of inet/cidr, macaddr(8) and money; Some(None) where the
/// operand types can only mean one of them that does not exist. None: not
/// such a case.
fn resolve_net_money_op(op: BinaryOp, l: TypeId, r: TypeId) -> Option<Option<OpResolution>> {
    use BinaryOp::{Add, BitAnd, BitOr, Div, Mul, Sub};
    use TypeId::*;
    let net = |t: TypeId| matches!(t, Inet | Cidr);
    let int = |t: TypeId| t.is_integer();
    // money * numeric is money * float8 (numeric casts to float8 implicitly).
    let scalar = |t: TypeId| if int(t) { t } else { Float8 };
    if ![l, r]
        .iter()
        .any(|t| matches!(t, Inet | Cidr | MacAddr | MacAddr8 | Money))
    {
        return None;
    }
    Some(match (op, l, r) {
        // cidr is binary-coercible to inet: cidr with cidr compares as
        // itself, mixed as inet.
        (o, a, b) if o.is_comparison() && net(a) && net(b) => {
            let t = if a == b { a } else { Inet };
            res(t, t, Bool)
        }
        (o, a, b) if o.is_comparison() && a == b => res(a, a, Bool),
        (Add, a, b) if net(a) && int(b) => res(Inet, Int8, Inet),
        (Add, a, b) if int(a) && net(b) => res(Int8, Inet, Inet),
        (Sub, a, b) if net(a) && int(b) => res(Inet, Int8, Inet),
        (Sub, a, b) if net(a) && net(b) => res(Inet, Inet, Int8),
        (BitAnd | BitOr, a, b) if net(a) && net(b) => res(Inet, Inet, Inet),
        (Add | Sub, Money, Money) => res(Money, Money, Money),
        (Div, Money, Money) => res(Money, Money, Float8),
        (Mul | Div, Money, t) if t.is_numeric_family() => res(Money, scalar(t), Money),
        (Mul, t, Money) if t.is_numeric_family() => res(scalar(t), Money, Money),
        _ => None,
    })
}

/// Arithmetic on inet and money values.
fn net_money_arith(op: BinaryOp, left: &Value, right: &Value) -> Option<PgResult<Value>> {
    use crate::money;
    use crate::network as net;
    use BinaryOp::{Add, BitAnd, BitOr, Div, Mul, Sub};
    Some(match (op, left, right) {
        (Add, Value::Inet(a), n) | (Add, n, Value::Inet(a)) if int_value(n).is_some() => {
            net::plus(a, int_value(n)?.0).map(Value::Inet)
        }
        (Sub, Value::Inet(a), n) if int_value(n).is_some() => {
            net::minus_int(a, int_value(n)?.0).map(Value::Inet)
        }
        (Sub, Value::Inet(a), Value::Inet(b)) => net::minus(a, b).map(Value::Int8),
        (BitAnd | BitOr, Value::Inet(a), Value::Inet(b)) => {
            net::and_or(a, b, op == BitOr).map(Value::Inet)
        }
        (Add, Value::Money(a), Value::Money(b)) => money::add(*a, *b).map(Value::Money),
        (Sub, Value::Money(a), Value::Money(b)) => money::sub(*a, *b).map(Value::Money),
        (Div, Value::Money(a), Value::Money(b)) => money::div_money(*a, *b).map(Value::Float8),
        (Mul, Value::Money(a), n) | (Mul, n, Value::Money(a)) => match int_value(n) {
            Some((i, _)) => money::mul_int(*a, i),
            None => money::mul_float(*a, float_value(n)?),
        }
        .map(Value::Money),
        (Div, Value::Money(a), n) => match int_value(n) {
            Some((i, _)) => money::div_int(*a, i),
            None => money::div_float(*a, float_value(n)?),
        }
        .map(Value::Money),
        _ => return None,
    })
}

/// The interval operators and the date/time arithmetic that yields or takes
/// an interval; Some(None) where the operand types can only mean an interval
/// operator that does not exist. None: not an interval case.
fn resolve_interval_op(op: BinaryOp, left: TypeId, right: TypeId) -> Option<Option<OpResolution>> {
    use BinaryOp::{Add, Div, Mul, Sub};
    use TypeId::*;
    let num = |t: TypeId| t.is_numeric_family() || t == Unknown;
    let datetime = |t: TypeId| matches!(t, Date | Timestamp | Timestamptz);
    // date + interval is a timestamp.
    let shifted = |t: TypeId| if t == Date { Timestamp } else { t };
    Some(match (op, left, right) {
        (Add | Sub, Interval, Interval | Unknown) | (Add | Sub, Unknown, Interval) => {
            res(Interval, Interval, Interval)
        }
        (Mul | Div, Interval, t) if num(t) => res(Interval, Float8, Interval),
        (Mul, t, Interval) if num(t) => res(Float8, Interval, Interval),
        (Add | Sub, t, Interval) if datetime(t) => res(t, Interval, shifted(t)),
        (Add, Interval, t) if datetime(t) => res(Interval, t, shifted(t)),
        // timestamp + 'literal' can only mean an interval.
        (Add, t, Unknown) if matches!(t, Timestamp | Timestamptz) => res(t, Interval, t),
        (Add, Unknown, t) if matches!(t, Timestamp | Timestamptz) => res(Interval, t, t),
        (Sub, Timestamp, Timestamp | Unknown) | (Sub, Unknown, Timestamp) => {
            res(Timestamp, Timestamp, Interval)
        }
        (Sub, Timestamptz, Timestamptz | Unknown) | (Sub, Unknown, Timestamptz) => {
            res(Timestamptz, Timestamptz, Interval)
        }
        (Sub, Timestamp, Timestamptz) | (Sub, Timestamptz, Timestamp) => {
            res(Timestamptz, Timestamptz, Interval)
        }
        (Sub, Date, Timestamp) | (Sub, Timestamp, Date) => res(Timestamp, Timestamp, Interval),
        (Sub, Date, Timestamptz) | (Sub, Timestamptz, Date) => {
            res(Timestamptz, Timestamptz, Interval)
        }
        (_, Interval, _) | (_, _, Interval) if !op.is_comparison() => None,
        _ => return None,
    })
}

fn interval_arith(op: BinaryOp, left: &Value, right: &Value) -> Option<PgResult<Value>> {
    use crate::interval as iv;
    let f = |v: &Value| float_value(v);
    Some(match (op, left, right) {
        (BinaryOp::Add, Value::Interval(a), Value::Interval(b)) => {
            a.checked_add(b).map(Value::Interval)
        }
        (BinaryOp::Sub, Value::Interval(a), Value::Interval(b)) => {
            a.checked_sub(b).map(Value::Interval)
        }
        (BinaryOp::Mul, Value::Interval(a), n) if f(n).is_some() => {
            a.mul_f64(f(n).unwrap_or(0.0)).map(Value::Interval)
        }
        (BinaryOp::Mul, n, Value::Interval(a)) if f(n).is_some() => {
            a.mul_f64(f(n).unwrap_or(0.0)).map(Value::Interval)
        }
        (BinaryOp::Div, Value::Interval(a), n) if f(n).is_some() => {
            a.div_f64(f(n).unwrap_or(0.0)).map(Value::Interval)
        }
        (BinaryOp::Add | BinaryOp::Sub, t, Value::Interval(i))
        | (BinaryOp::Add, Value::Interval(i), t) => {
            let i = if op == BinaryOp::Sub {
                match i.checked_neg() {
                    Ok(i) => i,
                    Err(e) => return Some(Err(e)),
                }
            } else {
                *i
            };
            match t {
                Value::Timestamp(ts) => iv::timestamp_plus(*ts, &i).map(Value::Timestamp),
                Value::Date(d) => datetime::date_to_timestamp(*d)
                    .and_then(|ts| iv::timestamp_plus(ts, &i))
                    .map(Value::Timestamp),
                // The binder sends timestamptz arithmetic to the session-aware
                // functions; here it can only be UTC.
                Value::Timestamptz(ts) => {
                    iv::timestamptz_plus(*ts, &i, datetime::TimeZone::Fixed(0))
                        .map(Value::Timestamptz)
                }
                _ => return None,
            }
        }
        (
            BinaryOp::Sub,
            Value::Timestamp(a) | Value::Timestamptz(a),
            Value::Timestamp(b) | Value::Timestamptz(b),
        ) => iv::timestamp_diff(*a, *b).map(Value::Interval),
        _ => return None,
    })
}

fn int_overflow(t: TypeId) -> PgError {
    let name = match t {
        TypeId::Int2 => "smallint",
        TypeId::Int4 => "integer",
        _ => "bigint",
    };
    PgError::new(
        SqlState::NUMERIC_VALUE_OUT_OF_RANGE,
        format!("{name} out of range"),
    )
}

fn div_zero() -> PgError {
    PgError::new(SqlState::DIVISION_BY_ZERO, "division by zero")
}

fn pow_error(msg: &str) -> PgError {
    PgError::new(SqlState::INVALID_ARGUMENT_FOR_POWER, msg)
}

fn wrap_int(v: i64, t: TypeId) -> Value {
    match t {
        TypeId::Int2 => Value::Int2(v as i16),
        TypeId::Int4 => Value::Int4(v as i32),
        _ => Value::Int8(v),
    }
}

/// Integer arithmetic in type `t` (values already within it).
fn int_arith(op: BinaryOp, a: i64, b: i64, t: TypeId) -> PgResult<Value> {
    let (min, max) = match t {
        TypeId::Int2 => (i16::MIN as i64, i16::MAX as i64),
        TypeId::Int4 => (i32::MIN as i64, i32::MAX as i64),
        _ => (i64::MIN, i64::MAX),
    };
    let r = match op {
        BinaryOp::Add => a.checked_add(b),
        BinaryOp::Sub => a.checked_sub(b),
        BinaryOp::Mul => a.checked_mul(b),
        BinaryOp::Div => {
            if b == 0 {
                return Err(div_zero());
            }
            if b == -1 && a == min {
                return Err(int_overflow(t));
            }
            Some(a / b)
        }
        BinaryOp::Mod => {
            if b == 0 {
                return Err(div_zero());
            }
            if b == -1 {
                return Ok(wrap_int(0, t));
            }
            Some(a % b)
        }
        BinaryOp::Pow => return float_arith(op, a as f64, b as f64),
        BinaryOp::BitAnd => Some(a & b),
        BinaryOp::BitOr => Some(a | b),
        BinaryOp::BitXor => Some(a ^ b),
        _ => return Err(PgError::internal("bad integer operator")),
    };
    match r {
        Some(v) if v >= min && v <= max => Ok(wrap_int(v, t)),
        _ => Err(int_overflow(t)),
    }
}

/// PostgreSQL's dpow.
pub fn float_pow(a: f64, b: f64) -> PgResult<f64> {
    if a == 0.0 && b < 0.0 {
        return Err(pow_error("zero raised to a negative power is undefined"));
    }
    if a < 0.0 && b.is_finite() && b.floor() != b {
        return Err(pow_error(
            "a negative number raised to a non-integer power yields a complex result",
        ));
    }
    if a.is_nan() {
        return Ok(if b == 0.0 { 1.0 } else { f64::NAN });
    }
    if b.is_nan() {
        return Ok(if a == 1.0 { 1.0 } else { f64::NAN });
    }
    let r = a.powf(b);
    let finite_in = a.is_finite() && b.is_finite();
    check_f64(r, !finite_in, !finite_in || a == 0.0)
}

fn float_arith(op: BinaryOp, a: f64, b: f64) -> PgResult<Value> {
    let inf_in = a.is_infinite() || b.is_infinite();
    let r = match op {
        BinaryOp::Add => check_f64(a + b, inf_in, true)?,
        BinaryOp::Sub => check_f64(a - b, inf_in, true)?,
        BinaryOp::Mul => check_f64(a * b, inf_in, a == 0.0 || b == 0.0)?,
        BinaryOp::Div => {
            if b == 0.0 && !a.is_nan() {
                return Err(div_zero());
            }
            check_f64(a / b, inf_in, a == 0.0 || b.is_infinite())?
        }
        BinaryOp::Pow => float_pow(a, b)?,
        _ => return Err(operator_not_exist_error(op, TypeId::Float8, TypeId::Float8)),
    };
    Ok(Value::Float8(r))
}

fn float4_arith(op: BinaryOp, a: f32, b: f32) -> PgResult<Value> {
    let inf_in = a.is_infinite() || b.is_infinite();
    let r = match op {
        BinaryOp::Add => check_f32(a + b, inf_in, true)?,
        BinaryOp::Sub => check_f32(a - b, inf_in, true)?,
        BinaryOp::Mul => check_f32(a * b, inf_in, a == 0.0 || b == 0.0)?,
        BinaryOp::Div => {
            if b == 0.0 && !a.is_nan() {
                return Err(div_zero());
            }
            check_f32(a / b, inf_in, a == 0.0 || b.is_infinite())?
        }
        _ => return float_arith(op, a as f64, b as f64),
    };
    Ok(Value::Float4(r))
}

fn numeric_arith(op: BinaryOp, a: &Numeric, b: &Numeric) -> PgResult<Value> {
    let r = match op {
        BinaryOp::Add => a.add(b)?,
        BinaryOp::Sub => a.sub(b)?,
        BinaryOp::Mul => a.mul(b)?,
        BinaryOp::Div => a.div(b)?,
        BinaryOp::Mod => a.rem(b)?,
        BinaryOp::Pow => a.pow(b)?,
        _ => return Err(PgError::internal("bad numeric operator")),
    };
    Ok(Value::Numeric(Box::new(r)))
}

fn date_out_of_range() -> PgError {
    PgError::new(SqlState::DATETIME_FIELD_OVERFLOW, "date out of range")
}

fn date_plus(d: i32, days: i64) -> PgResult<Value> {
    if d == DATE_NOBEGIN || d == DATE_NOEND {
        return Ok(Value::Date(d));
    }
    let r = d as i64 + days;
    if r < datetime::MIN_DATE as i64 || r >= datetime::END_DATE as i64 {
        return Err(date_out_of_range());
    }
    Ok(Value::Date(r as i32))
}

fn int_value(v: &Value) -> Option<(i64, TypeId)> {
    match v {
        Value::Int2(i) => Some((*i as i64, TypeId::Int2)),
        Value::Int4(i) => Some((*i as i64, TypeId::Int4)),
        Value::Int8(i) => Some((*i, TypeId::Int8)),
        _ => None,
    }
}

fn float_value(v: &Value) -> Option<f64> {
    match v {
        Value::Int2(i) => Some(*i as f64),
        Value::Int4(i) => Some(*i as f64),
        Value::Int8(i) => Some(*i as f64),
        Value::Float4(f) => Some(*f as f64),
        Value::Float8(f) => Some(*f),
        Value::Numeric(n) => Some(n.to_f64()),
        _ => None,
    }
}

fn numeric_value(v: &Value) -> Option<std::borrow::Cow<'_, Numeric>> {
    match v {
        Value::Numeric(n) => Some(std::borrow::Cow::Borrowed(n)),
        _ => int_value(v).map(|(i, _)| std::borrow::Cow::Owned(Numeric::from_i64(i))),
    }
}

/// `a << n` / `a >> n` as C does it in the operand's width (PostgreSQL's
/// int4shl etc.: the count is taken modulo the width, the result wraps).
fn int_shift(op: BinaryOp, left: &Value, right: &Value) -> PgResult<Value> {
    let Some((n, _)) = int_value(right) else {
        return Err(PgError::internal("bad shift count"));
    };
    let n = n as u32;
    let left_shift = op == BinaryOp::Shl;
    Ok(match left {
        Value::Int2(a) => {
            // int2 shifts in int arithmetic, then truncates to 16 bits.
            let a = *a as i32;
            let r = if left_shift {
                a.wrapping_shl(n)
            } else {
                a.wrapping_shr(n)
            };
            Value::Int2(r as i16)
        }
        Value::Int4(a) => Value::Int4(if left_shift {
            a.wrapping_shl(n)
        } else {
            a.wrapping_shr(n)
        }),
        Value::Int8(a) => Value::Int8(if left_shift {
            a.wrapping_shl(n)
        } else {
            a.wrapping_shr(n)
        }),
        _ => return Err(PgError::internal("bad shift operand")),
    })
}

/// Evaluates `op` on non-null operands already cast per `resolve_binary_op`.
pub fn eval_binary_op(op: BinaryOp, left: &Value, right: &Value) -> PgResult<Value> {
    if op.is_comparison() {
        let o = compare(left, right);
        return Ok(Value::Bool(match op {
            BinaryOp::Eq => o == Ordering::Equal,
            BinaryOp::NotEq => o != Ordering::Equal,
            BinaryOp::Lt => o == Ordering::Less,
            BinaryOp::LtEq => o != Ordering::Greater,
            BinaryOp::Gt => o == Ordering::Greater,
            _ => o != Ordering::Less,
        }));
    }
    if matches!(op, BinaryOp::Shl | BinaryOp::Shr) {
        return int_shift(op, left, right);
    }
    if let Some(r) = interval_arith(op, left, right) {
        return r;
    }
    if let Some(r) = net_money_arith(op, left, right) {
        return r;
    }
    match (left, right) {
        (Value::Int4(a), Value::Int4(b)) => int_arith(op, *a as i64, *b as i64, TypeId::Int4),
        (Value::Int8(a), Value::Int8(b)) => int_arith(op, *a, *b, TypeId::Int8),
        (Value::Float8(a), Value::Float8(b)) => float_arith(op, *a, *b),
        (Value::Numeric(a), Value::Numeric(b)) => numeric_arith(op, a, b),
        // The binder casts a non-string side of `||` to text (with the
        // session's settings), so both sides are text here.
        (Value::Text(a), Value::Text(b)) if op == BinaryOp::Concat => {
            let mut s = String::with_capacity(a.len() + b.len());
            s.push_str(a);
            s.push_str(b);
            Ok(Value::Text(s))
        }
        (Value::Bytea(a), Value::Bytea(b)) if op == BinaryOp::Concat => {
            let mut r = Vec::with_capacity(a.len() + b.len());
            r.extend_from_slice(a);
            r.extend_from_slice(b);
            Ok(Value::Bytea(r))
        }
        (Value::Float4(a), Value::Float4(b)) => float4_arith(op, *a, *b),
        (Value::Date(d), Value::Date(e)) if op == BinaryOp::Sub => {
            if [*d, *e]
                .iter()
                .any(|x| *x == DATE_NOBEGIN || *x == DATE_NOEND)
            {
                return Err(PgError::new(
                    SqlState::DATETIME_FIELD_OVERFLOW,
                    "cannot subtract infinite dates",
                ));
            }
            Ok(Value::Int4((*d as i64 - *e as i64) as i32))
        }
        (Value::Date(d), n) if int_value(n).is_some() => {
            let days = int_value(n).map(|x| x.0).unwrap_or(0);
            match op {
                BinaryOp::Add => date_plus(*d, days),
                BinaryOp::Sub => date_plus(*d, -days),
                _ => Err(operator_not_exist_error(op, TypeId::Date, TypeId::Int4)),
            }
        }
        (n, Value::Date(d)) if int_value(n).is_some() && op == BinaryOp::Add => {
            date_plus(*d, int_value(n).map(|x| x.0).unwrap_or(0))
        }
        _ => eval_mixed(op, left, right),
    }
}

/// Arithmetic on operands of different (numeric-family) types: widened as
/// resolve_binary_op would have cast them.
fn eval_mixed(op: BinaryOp, left: &Value, right: &Value) -> PgResult<Value> {
    if let (Some((a, ta)), Some((b, tb))) = (int_value(left), int_value(right)) {
        let t = if int_rank(ta) >= int_rank(tb) { ta } else { tb };
        return int_arith(op, a, b, t);
    }
    let is_float = |v: &Value| matches!(v, Value::Float4(_) | Value::Float8(_));
    if is_float(left) || is_float(right) {
        if let (Some(a), Some(b)) = (float_value(left), float_value(right)) {
            return float_arith(op, a, b);
        }
    }
    if let (Some(a), Some(b)) = (numeric_value(left), numeric_value(right)) {
        return numeric_arith(op, &a, &b);
    }
    let lt = left.type_id().unwrap_or(TypeId::Unknown);
    let rt = right.type_id().unwrap_or(TypeId::Unknown);
    Err(operator_not_exist_error(op, lt, rt))
}

/// Unary minus on a non-null numeric-family value (22003 on overflow).
pub fn negate(v: &Value) -> PgResult<Value> {
    Ok(match v {
        Value::Int2(i) => Value::Int2(i.checked_neg().ok_or_else(|| int_overflow(TypeId::Int2))?),
        Value::Int4(i) => Value::Int4(i.checked_neg().ok_or_else(|| int_overflow(TypeId::Int4))?),
        Value::Int8(i) => Value::Int8(i.checked_neg().ok_or_else(|| int_overflow(TypeId::Int8))?),
        Value::Float4(f) => Value::Float4(-f),
        Value::Float8(f) => Value::Float8(-f),
        Value::Numeric(n) => Value::Numeric(Box::new(n.neg())),
        Value::Interval(iv) => Value::Interval(iv.checked_neg()?),
        Value::Null => Value::Null,
        other => {
            return Err(PgError::new(
                SqlState::UNDEFINED_FUNCTION,
                format!(
                    "operator does not exist: - {}",
                    other.type_id().map_or("unknown", |t| t.display_name())
                ),
            ))
        }
    })
}

/// Total order on doubles as PostgreSQL's float8 btree: NaN equals NaN and
/// sorts above everything; -0 equals 0.
#[inline]
pub fn cmp_f64(a: f64, b: f64) -> Ordering {
    match (a.is_nan(), b.is_nan()) {
        (false, false) => a.partial_cmp(&b).unwrap_or(Ordering::Equal),
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Greater,
        (false, true) => Ordering::Less,
    }
}

fn variant_rank(v: &Value) -> u8 {
    match v {
        Value::Bool(_) => 0,
        Value::Int2(_) | Value::Int4(_) | Value::Int8(_) => 1,
        Value::Float4(_) | Value::Float8(_) => 1,
        Value::Numeric(_) => 1,
        Value::Text(_) => 2,
        Value::Oid(_) => 3,
        Value::Date(_) | Value::Timestamp(_) | Value::Timestamptz(_) => 4,
        Value::Bytea(_) => 5,
        Value::Uuid(_) => 6,
        Value::Interval(_) => 7,
        Value::Jsonb(_) => 8,
        Value::Array(_) => 9,
        Value::Inet(_) => 11,
        Value::MacAddr(_) => 12,
        Value::MacAddr8(_) => 13,
        Value::Money(_) => 14,
        Value::Enum(_) => 15,
        Value::Null => 10,
    }
}

fn date_as_ts(d: i32) -> i64 {
    match d {
        DATE_NOBEGIN => i64::MIN,
        DATE_NOEND => i64::MAX,
        _ => (d as i64).saturating_mul(datetime::USECS_PER_DAY),
    }
}

/// Total order of two non-null values of the same type (NaN sorts above all numbers).
/// Strings compare bytewise (C collation). Mixed numeric types compare by value.
pub fn compare(left: &Value, right: &Value) -> Ordering {
    match (left, right) {
        (Value::Int4(a), Value::Int4(b)) => a.cmp(b),
        (Value::Int8(a), Value::Int8(b)) => a.cmp(b),
        (Value::Text(a), Value::Text(b)) => a.as_bytes().cmp(b.as_bytes()),
        (Value::Float8(a), Value::Float8(b)) => cmp_f64(*a, *b),
        (Value::Numeric(a), Value::Numeric(b)) => a.cmp(b),
        (Value::Int2(a), Value::Int2(b)) => a.cmp(b),
        (Value::Float4(a), Value::Float4(b)) => cmp_f64(*a as f64, *b as f64),
        (Value::Bool(a), Value::Bool(b)) => a.cmp(b),
        (Value::Oid(a), Value::Oid(b)) => a.cmp(b),
        (Value::Date(a), Value::Date(b)) => a.cmp(b),
        (
            Value::Timestamp(a) | Value::Timestamptz(a),
            Value::Timestamp(b) | Value::Timestamptz(b),
        ) => a.cmp(b),
        (Value::Date(a), Value::Timestamp(b) | Value::Timestamptz(b)) => date_as_ts(*a).cmp(b),
        (Value::Timestamp(a) | Value::Timestamptz(a), Value::Date(b)) => a.cmp(&date_as_ts(*b)),
        // memcmp over the common length, then the shorter first (byteacmp).
        (Value::Bytea(a), Value::Bytea(b)) => a.as_slice().cmp(b.as_slice()),
        (Value::Uuid(a), Value::Uuid(b)) => a.cmp(b),
        (Value::Interval(a), Value::Interval(b)) => a.cmp_span(b),
        (Value::Jsonb(a), Value::Jsonb(b)) => crate::json::compare_docs(a, b),
        (Value::Array(a), Value::Array(b)) => crate::array::compare(a, b),
        (Value::Inet(a), Value::Inet(b)) => crate::network::compare(a, b),
        (Value::MacAddr(a), Value::MacAddr(b)) => a.cmp(b),
        (Value::MacAddr8(a), Value::MacAddr8(b)) => a.cmp(b),
        (Value::Money(a), Value::Money(b)) => a.cmp(b),
        // enum_cmp: by enumsortorder.
        (Value::Enum(a), Value::Enum(b)) => cmp_f64(a.sort_order as f64, b.sort_order as f64),
        (Value::Null, Value::Null) => Ordering::Equal,
        _ => compare_mixed(left, right),
    }
}

fn compare_mixed(left: &Value, right: &Value) -> Ordering {
    if let (Some((a, _)), Some((b, _))) = (int_value(left), int_value(right)) {
        return a.cmp(&b);
    }
    let (rl, rr) = (variant_rank(left), variant_rank(right));
    if rl == 1 && rr == 1 {
        let is_float = |v: &Value| matches!(v, Value::Float4(_) | Value::Float8(_));
        if is_float(left) || is_float(right) {
            return cmp_f64(
                float_value(left).unwrap_or(f64::NAN),
                float_value(right).unwrap_or(f64::NAN),
            );
        }
        if let (Some(a), Some(b)) = (numeric_value(left), numeric_value(right)) {
            return a.as_ref().cmp(b.as_ref());
        }
    }
    if let (Value::Oid(a), Some((b, _))) = (left, int_value(right)) {
        return (*a as i64).cmp(&b);
    }
    if let (Some((a, _)), Value::Oid(b)) = (int_value(left), right) {
        return a.cmp(&(*b as i64));
    }
    rl.cmp(&rr)
}

/// `compare` with the semantics of operand type `ty`: char(n) (Bpchar) values
/// compare without their trailing blanks.
pub fn compare_typed(ty: TypeId, left: &Value, right: &Value) -> Ordering {
    if ty == TypeId::Bpchar {
        if let (Value::Text(a), Value::Text(b)) = (left, right) {
            return super::io::bpchar_trim(a).cmp(super::io::bpchar_trim(b));
        }
    }
    compare(left, right)
}

/// Hashes a non-null value consistently with `compare` equality.
/// Integers of all widths hash alike; float -0 and 0 (and all NaNs) hash alike;
/// numerics hash by value (1.0 and 1.00 alike).
pub fn hash_value<H: std::hash::Hasher>(v: &Value, state: &mut H) {
    match v {
        Value::Null => state.write_u8(0),
        Value::Bool(b) => state.write_u8(*b as u8 + 1),
        Value::Int2(i) => state.write_i64(*i as i64),
        Value::Int4(i) => state.write_i64(*i as i64),
        Value::Int8(i) => state.write_i64(*i),
        Value::Float4(f) => hash_f64(*f as f64, state),
        Value::Float8(f) => hash_f64(*f, state),
        Value::Numeric(n) => std::hash::Hash::hash(n.as_ref(), state),
        Value::Text(s) => {
            state.write(s.as_bytes());
            state.write_u8(0xff);
        }
        Value::Oid(o) => state.write_u32(*o),
        Value::Date(d) => state.write_i32(*d),
        Value::Timestamp(t) | Value::Timestamptz(t) => state.write_i64(*t),
        Value::Bytea(b) => {
            state.write_usize(b.len());
            state.write(b);
        }
        Value::Uuid(u) => state.write(u),
        // By span, as compare: '1 mon' and '30 days' are equal.
        Value::Interval(iv) => state.write_i128(iv.span()),
        Value::Jsonb(j) => crate::json::hash(j, state),
        Value::Array(a) => crate::array::hash(a, state),
        Value::Inet(n) => std::hash::Hash::hash(n, state),
        Value::MacAddr(m) => state.write(m),
        Value::MacAddr8(m) => state.write(m),
        Value::Money(m) => state.write_i64(*m),
        Value::Enum(d) => state.write_u32(d.oid),
    }
}

/// `hash_value` with the semantics of type `ty` (char(n): trailing blanks ignored).
pub fn hash_value_typed<H: std::hash::Hasher>(ty: TypeId, v: &Value, state: &mut H) {
    if let (TypeId::Bpchar, Value::Text(s)) = (ty, v) {
        state.write(super::io::bpchar_trim(s).as_bytes());
        state.write_u8(0xff);
        return;
    }
    hash_value(v, state)
}

#[inline]
fn hash_f64<H: std::hash::Hasher>(f: f64, state: &mut H) {
    let bits = if f == 0.0 {
        0
    } else if f.is_nan() {
        f64::NAN.to_bits()
    } else {
        f.to_bits()
    };
    state.write_u64(bits);
}

#[cfg(test)]
#[path = "ops_tests.rs"]
mod tests;
