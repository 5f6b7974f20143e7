//! Mathematical functions on integers, floats and numerics.

use std::cell::Cell;

use super::string::int;
use crate::float::{check_f64, overflow_error, underflow_error};
use crate::numeric::Numeric;
use crate::ops::{eval_binary_op, float_pow, BinaryOp};
use crate::Value;
use common::{PgError, PgResult, SqlState};

fn num(args: &[Value], i: usize) -> PgResult<&Numeric> {
    match args.get(i) {
        Some(Value::Numeric(n)) => Ok(n),
        other => Err(PgError::internal(format!(
            "expected numeric argument, got {other:?}"
        ))),
    }
}

fn f8(args: &[Value], i: usize) -> PgResult<f64> {
    match args.get(i) {
        Some(Value::Float8(v)) => Ok(*v),
        Some(Value::Float4(v)) => Ok(*v as f64),
        other => Err(PgError::internal(format!(
            "expected double precision argument, got {other:?}"
        ))),
    }
}

fn nv(n: Numeric) -> Value {
    Value::Numeric(Box::new(n))
}

fn out_of_range(t: &str) -> PgError {
    PgError::new(
        SqlState::NUMERIC_VALUE_OUT_OF_RANGE,
        format!("{t} out of range"),
    )
}

pub fn abs(args: &[Value]) -> PgResult<Value> {
    Ok(match &args[0] {
        Value::Int2(v) => Value::Int2(v.checked_abs().ok_or_else(|| out_of_range("smallint"))?),
        Value::Int4(v) => Value::Int4(v.checked_abs().ok_or_else(|| out_of_range("integer"))?),
        Value::Int8(v) => Value::Int8(v.checked_abs().ok_or_else(|| out_of_range("bigint"))?),
        Value::Float4(v) => Value::Float4(v.abs()),
        Value::Float8(v) => Value::Float8(v.abs()),
        Value::Numeric(n) => nv(n.abs()),
        other => return Err(PgError::internal(format!("abs of {other:?}"))),
    })
}

fn scale_arg(args: &[Value]) -> PgResult<i32> {
    Ok(if args.len() > 1 {
        int(args, 1)? as i32
    } else {
        0
    })
}

pub fn round(args: &[Value]) -> PgResult<Value> {
    match &args[0] {
        Value::Numeric(n) => Ok(nv(n.round(scale_arg(args)?))),
        _ => Ok(Value::Float8(f8(args, 0)?.round_ties_even())),
    }
}

pub fn trunc(args: &[Value]) -> PgResult<Value> {
    match &args[0] {
        Value::Numeric(n) => Ok(nv(n.trunc(scale_arg(args)?))),
        _ => Ok(Value::Float8(f8(args, 0)?.trunc())),
    }
}

pub fn ceil(args: &[Value]) -> PgResult<Value> {
    match &args[0] {
        Value::Numeric(n) => Ok(nv(n.ceil())),
        _ => Ok(Value::Float8(f8(args, 0)?.ceil())),
    }
}

pub fn floor(args: &[Value]) -> PgResult<Value> {
    match &args[0] {
        Value::Numeric(n) => Ok(nv(n.floor())),
        _ => Ok(Value::Float8(f8(args, 0)?.floor())),
    }
}

pub fn sign(args: &[Value]) -> PgResult<Value> {
    match &args[0] {
        Value::Numeric(n) => Ok(nv(n.sign())),
        _ => {
            let v = f8(args, 0)?;
            Ok(Value::Float8(if v > 0.0 {
                1.0
            } else if v < 0.0 {
                -1.0
            } else {
                0.0
            }))
        }
    }
}

pub fn sqrt(args: &[Value]) -> PgResult<Value> {
    match &args[0] {
        Value::Numeric(n) => Ok(nv(n.sqrt()?)),
        _ => {
            let v = f8(args, 0)?;
            if v < 0.0 {
                return Err(PgError::new(
                    SqlState::INVALID_ARGUMENT_FOR_POWER,
                    "cannot take square root of a negative number",
                ));
            }
            Ok(Value::Float8(v.sqrt()))
        }
    }
}

pub fn cbrt(args: &[Value]) -> PgResult<Value> {
    Ok(Value::Float8(f8(args, 0)?.cbrt()))
}

pub fn power(args: &[Value]) -> PgResult<Value> {
    match (&args[0], &args[1]) {
        (Value::Numeric(a), Value::Numeric(b)) => Ok(nv(a.pow(b)?)),
        _ => Ok(Value::Float8(float_pow(f8(args, 0)?, f8(args, 1)?)?)),
    }
}

pub fn exp(args: &[Value]) -> PgResult<Value> {
    match &args[0] {
        Value::Numeric(n) => Ok(nv(n.exp()?)),
        _ => {
            let v = f8(args, 0)?;
            if v.is_nan() {
                return Ok(Value::Float8(v));
            }
            if v.is_infinite() {
                return Ok(Value::Float8(if v > 0.0 { v } else { 0.0 }));
            }
            let r = v.exp();
            if r.is_infinite() {
                return Err(overflow_error());
            }
            if r == 0.0 {
                return Err(underflow_error());
            }
            Ok(Value::Float8(r))
        }
    }
}

fn check_log_arg(v: f64) -> PgResult<()> {
    if v == 0.0 {
        return Err(PgError::new(
            SqlState::INVALID_ARGUMENT_FOR_LOG,
            "cannot take logarithm of zero",
        ));
    }
    if v < 0.0 {
        return Err(PgError::new(
            SqlState::INVALID_ARGUMENT_FOR_LOG,
            "cannot take logarithm of a negative number",
        ));
    }
    Ok(())
}

pub fn ln(args: &[Value]) -> PgResult<Value> {
    match &args[0] {
        Value::Numeric(n) => Ok(nv(n.ln()?)),
        _ => {
            let v = f8(args, 0)?;
            check_log_arg(v)?;
            Ok(Value::Float8(v.ln()))
        }
    }
}

pub fn log10(args: &[Value]) -> PgResult<Value> {
    match &args[0] {
        Value::Numeric(n) => Ok(nv(n.log10()?)),
        _ => {
            let v = f8(args, 0)?;
            check_log_arg(v)?;
            Ok(Value::Float8(v.log10()))
        }
    }
}

/// log(base, x).
pub fn log(args: &[Value]) -> PgResult<Value> {
    Ok(nv(num(args, 0)?.log(num(args, 1)?)?))
}

pub fn modulo(args: &[Value]) -> PgResult<Value> {
    eval_binary_op(BinaryOp::Mod, &args[0], &args[1])
}

pub fn div(args: &[Value]) -> PgResult<Value> {
    Ok(nv(num(args, 0)?.div_trunc(num(args, 1)?)?))
}

fn gcd_u(mut a: u128, mut b: u128) -> u128 {
    while b != 0 {
        let t = a % b;
        a = b;
        b = t;
    }
    a
}

fn int_args(args: &[Value]) -> PgResult<(i64, i64, &'static str, i128)> {
    Ok(match &args[0] {
        Value::Int4(_) => (int(args, 0)?, int(args, 1)?, "integer", i32::MAX as i128),
        _ => (int(args, 0)?, int(args, 1)?, "bigint", i64::MAX as i128),
    })
}

fn wrap(v: i128, name: &str) -> Value {
    if name == "integer" {
        Value::Int4(v as i32)
    } else {
        Value::Int8(v as i64)
    }
}

pub fn gcd(args: &[Value]) -> PgResult<Value> {
    if let Value::Numeric(a) = &args[0] {
        return Ok(nv(a.gcd(num(args, 1)?)));
    }
    let (a, b, name, max) = int_args(args)?;
    let g = gcd_u(a.unsigned_abs() as u128, b.unsigned_abs() as u128) as i128;
    if g > max {
        return Err(out_of_range(name));
    }
    Ok(wrap(g, name))
}

pub fn lcm(args: &[Value]) -> PgResult<Value> {
    if let Value::Numeric(a) = &args[0] {
        return Ok(nv(a.lcm(num(args, 1)?)?));
    }
    let (a, b, name, max) = int_args(args)?;
    if a == 0 || b == 0 {
        return Ok(wrap(0, name));
    }
    let g = gcd_u(a.unsigned_abs() as u128, b.unsigned_abs() as u128) as i128;
    let l = (a as i128 / g * b as i128).abs();
    if l > max {
        return Err(out_of_range(name));
    }
    Ok(wrap(l, name))
}

pub fn pi(_: &[Value]) -> PgResult<Value> {
    Ok(Value::Float8(std::f64::consts::PI))
}

thread_local! {
    static RNG: Cell<u64> = const { Cell::new(0) };
}

/// random(): uniform in [0, 1), from a per-thread xorshift generator seeded
/// from the clock.
pub fn random(_: &[Value]) -> PgResult<Value> {
    let x = RNG.with(|c| {
        let mut x = c.get();
        if x == 0 {
            let t = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos() as u64)
                .unwrap_or(0x9E37_79B9_7F4A_7C15);
            x = (t ^ (c as *const _ as u64).rotate_left(32)) | 1;
        }
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        c.set(x);
        x
    });
    Ok(Value::Float8((x >> 11) as f64 / (1u64 << 53) as f64))
}

fn unary(args: &[Value], f: impl Fn(f64) -> f64) -> PgResult<Value> {
    let v = f8(args, 0)?;
    Ok(Value::Float8(f(v)))
}

pub fn degrees(args: &[Value]) -> PgResult<Value> {
    let v = f8(args, 0)?;
    Ok(Value::Float8(check_f64(
        v.to_degrees(),
        v.is_infinite(),
        true,
    )?))
}

pub fn radians(args: &[Value]) -> PgResult<Value> {
    unary(args, f64::to_radians)
}

fn trig_checked(
    args: &[Value],
    f: impl Fn(f64) -> f64,
    domain: impl Fn(f64) -> bool,
) -> PgResult<Value> {
    let v = f8(args, 0)?;
    if v.is_nan() {
        return Ok(Value::Float8(v));
    }
    if !domain(v) {
        return Err(PgError::new(
            SqlState::NUMERIC_VALUE_OUT_OF_RANGE,
            "input is out of range",
        ));
    }
    Ok(Value::Float8(f(v)))
}

pub fn sin(args: &[Value]) -> PgResult<Value> {
    trig_checked(args, f64::sin, f64::is_finite)
}

pub fn cos(args: &[Value]) -> PgResult<Value> {
    trig_checked(args, f64::cos, f64::is_finite)
}

pub fn tan(args: &[Value]) -> PgResult<Value> {
    trig_checked(args, f64::tan, f64::is_finite)
}

pub fn asin(args: &[Value]) -> PgResult<Value> {
    trig_checked(args, f64::asin, |v| (-1.0..=1.0).contains(&v))
}

pub fn acos(args: &[Value]) -> PgResult<Value> {
    trig_checked(args, f64::acos, |v| (-1.0..=1.0).contains(&v))
}

pub fn atan(args: &[Value]) -> PgResult<Value> {
    unary(args, f64::atan)
}

pub fn atan2(args: &[Value]) -> PgResult<Value> {
    Ok(Value::Float8(f8(args, 0)?.atan2(f8(args, 1)?)))
}
