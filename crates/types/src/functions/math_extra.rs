//! More math functions: hyperbolic, cotangent, trigonometry in degrees
//! (computed as PostgreSQL's float.c does, so sind(30) is exactly 0.5),
//! width_bucket, factorial and the numeric scale functions.

use common::{PgError, PgResult, SqlState};

use super::{f, BuiltinFunction};
use crate::numeric::Numeric;
use crate::{TypeId, Value};

use TypeId::{Float8, Int4, Int8, Numeric as NumericT};

pub(super) static BUILTINS: &[BuiltinFunction] = &[
    f("sinh", &[Float8], Float8, |a| unary(a, f64::sinh)),
    f("cosh", &[Float8], Float8, |a| unary(a, f64::cosh)),
    f("tanh", &[Float8], Float8, |a| unary(a, f64::tanh)),
    f("asinh", &[Float8], Float8, |a| unary(a, f64::asinh)),
    f("acosh", &[Float8], Float8, |a| {
        checked(a, f64::acosh, |x| x >= 1.0)
    }),
    f("atanh", &[Float8], Float8, |a| {
        checked(a, f64::atanh, |x| (-1.0..=1.0).contains(&x))
    }),
    f("cot", &[Float8], Float8, |a| {
        checked(a, |x| 1.0 / x.tan(), f64::is_finite)
    }),
    f("sind", &[Float8], Float8, |a| {
        checked(a, sind, f64::is_finite)
    }),
    f("cosd", &[Float8], Float8, |a| {
        checked(a, cosd, f64::is_finite)
    }),
    f("tand", &[Float8], Float8, |a| {
        checked(a, tand, f64::is_finite)
    }),
    f("cotd", &[Float8], Float8, |a| {
        checked(a, cotd, f64::is_finite)
    }),
    f("asind", &[Float8], Float8, |a| {
        checked(a, asind, |x| (-1.0..=1.0).contains(&x))
    }),
    f("acosd", &[Float8], Float8, |a| {
        checked(a, acosd, |x| (-1.0..=1.0).contains(&x))
    }),
    f("atand", &[Float8], Float8, |a| {
        unary(a, |x| x.atan() / 1f64.atan() * 45.0)
    }),
    f("atan2d", &[Float8, Float8], Float8, |a| {
        let (y, x) = (float(a, 0)?, float(a, 1)?);
        Ok(Value::Float8(y.atan2(x) / 1f64.atan() * 45.0))
    }),
    f(
        "width_bucket",
        &[Float8, Float8, Float8, Int4],
        Int4,
        width_bucket_float,
    ),
    f(
        "width_bucket",
        &[NumericT, NumericT, NumericT, Int4],
        Int4,
        width_bucket_numeric,
    ),
    f("factorial", &[Int8], NumericT, factorial),
    f("scale", &[NumericT], Int4, |a| {
        let n = numeric(a, 0)?;
        Ok(if n.is_finite() {
            Value::Int4(i32::from(n.scale()))
        } else {
            Value::Null
        })
    }),
    f("min_scale", &[NumericT], Int4, |a| {
        let n = numeric(a, 0)?;
        Ok(if n.is_finite() {
            Value::Int4(min_scale(n))
        } else {
            Value::Null
        })
    }),
    f("trim_scale", &[NumericT], NumericT, |a| {
        let n = numeric(a, 0)?;
        Ok(Value::numeric(if n.is_finite() {
            n.round(min_scale(n))
        } else {
            n.clone()
        }))
    }),
];

fn float(args: &[Value], i: usize) -> PgResult<f64> {
    match args.get(i) {
        Some(Value::Float8(v)) => Ok(*v),
        other => Err(PgError::internal(format!("expected float8, got {other:?}"))),
    }
}

fn numeric(args: &[Value], i: usize) -> PgResult<&Numeric> {
    match args.get(i) {
        Some(Value::Numeric(n)) => Ok(n),
        other => Err(PgError::internal(format!(
            "expected numeric, got {other:?}"
        ))),
    }
}

fn unary(args: &[Value], f: impl Fn(f64) -> f64) -> PgResult<Value> {
    Ok(Value::Float8(f(float(args, 0)?)))
}

fn out_of_range() -> PgError {
    PgError::new(
        SqlState::NUMERIC_VALUE_OUT_OF_RANGE,
        "input is out of range",
    )
}

/// `f(x)` for x in `domain`; NaN passes through.
fn checked(
    args: &[Value],
    f: impl Fn(f64) -> f64,
    domain: impl Fn(f64) -> bool,
) -> PgResult<Value> {
    let x = float(args, 0)?;
    if x.is_nan() {
        return Ok(Value::Float8(x));
    }
    if !domain(x) {
        return Err(out_of_range());
    }
    Ok(Value::Float8(f(x)))
}

// The degree functions reduce the angle to the first quadrant and scale
// the radian result by the value at a landmark angle, so 30, 45, 60 and 90
// degrees give exact results.
const RADIANS_PER_DEGREE: f64 = 0.017_453_292_519_943_295;

fn sind_0_to_30(x: f64) -> f64 {
    let sin_30 = (30.0 * RADIANS_PER_DEGREE).sin();
    ((x * RADIANS_PER_DEGREE).sin() / sin_30) / 2.0
}

fn cosd_0_to_60(x: f64) -> f64 {
    let one_minus_cos_60 = 1.0 - (60.0 * RADIANS_PER_DEGREE).cos();
    let one_minus_cos_x = 1.0 - (x * RADIANS_PER_DEGREE).cos();
    1.0 - (one_minus_cos_x / one_minus_cos_60) / 2.0
}

fn sind_q1(x: f64) -> f64 {
    if x <= 30.0 {
        sind_0_to_30(x)
    } else {
        cosd_0_to_60(90.0 - x)
    }
}

fn cosd_q1(x: f64) -> f64 {
    if x <= 60.0 {
        cosd_0_to_60(x)
    } else {
        sind_0_to_30(90.0 - x)
    }
}

fn sind(x: f64) -> f64 {
    let (mut x, mut sign) = (x % 360.0, 1.0);
    if x < 0.0 {
        x = -x;
        sign = -sign;
    }
    if x > 180.0 {
        x -= 180.0;
        sign = -sign;
    }
    if x > 90.0 {
        x = 180.0 - x;
    }
    sign * sind_q1(x)
}

fn cosd(x: f64) -> f64 {
    let (mut x, mut sign) = ((x % 360.0).abs(), 1.0);
    if x > 180.0 {
        x = 360.0 - x;
    }
    if x > 90.0 {
        x = 180.0 - x;
        sign = -sign;
    }
    sign * cosd_q1(x)
}

/// The first-quadrant angle and the sign tand and cotd give it.
fn tan_quadrant(x: f64) -> (f64, f64) {
    let (mut x, mut sign) = (x % 360.0, 1.0);
    if x < 0.0 {
        x = -x;
        sign = -sign;
    }
    if x > 180.0 {
        x -= 180.0;
        sign = -sign;
    }
    if x > 90.0 {
        x = 180.0 - x;
        sign = -sign;
    }
    (x, sign)
}

fn tand(x: f64) -> f64 {
    tan_or_cot(x, false)
}

fn cotd(x: f64) -> f64 {
    tan_or_cot(x, true)
}

/// tand, or with `cot` cotd: the first-quadrant ratio scaled by its value
/// at 45 degrees so that it is exactly 1 there.
fn tan_or_cot(x: f64, cot: bool) -> f64 {
    let (x, sign) = tan_quadrant(x);
    let ratio = |x: f64| {
        if cot {
            cosd_q1(x) / sind_q1(x)
        } else {
            sind_q1(x) / cosd_q1(x)
        }
    };
    let r = sign * (ratio(x) / ratio(45.0));
    // No negative zero.
    if r == 0.0 {
        0.0
    } else {
        r
    }
}

fn asind_q1(x: f64) -> f64 {
    if x <= 0.5 {
        (x.asin() / 0.5f64.asin()) * 30.0
    } else {
        90.0 - (x.acos() / 0.5f64.acos()) * 60.0
    }
}

fn acosd_q1(x: f64) -> f64 {
    if x <= 0.5 {
        90.0 - (x.asin() / 0.5f64.asin()) * 30.0
    } else {
        (x.acos() / 0.5f64.acos()) * 60.0
    }
}

fn asind(x: f64) -> f64 {
    if x >= 0.0 {
        asind_q1(x)
    } else {
        -asind_q1(-x)
    }
}

fn acosd(x: f64) -> f64 {
    if x >= 0.0 {
        acosd_q1(x)
    } else {
        90.0 + asind_q1(-x)
    }
}

fn bucket_error(message: &str) -> PgError {
    PgError::new(SqlState("2201G"), message)
}

fn bucket_count(args: &[Value]) -> PgResult<i32> {
    match args.get(3) {
        Some(Value::Int4(c)) if *c > 0 => Ok(*c),
        Some(Value::Int4(_)) => Err(bucket_error("count must be greater than zero")),
        other => Err(PgError::internal(format!("expected int4, got {other:?}"))),
    }
}

fn past_last(count: i32) -> PgResult<Value> {
    count
        .checked_add(1)
        .map(Value::Int4)
        .ok_or_else(|| PgError::new(SqlState::NUMERIC_VALUE_OUT_OF_RANGE, "integer out of range"))
}

/// width_bucket(operand, low, high, count) over double precision.
fn width_bucket_float(args: &[Value]) -> PgResult<Value> {
    let (x, b1, b2) = (float(args, 0)?, float(args, 1)?, float(args, 2)?);
    let count = bucket_count(args)?;
    if x.is_nan() || b1.is_nan() || b2.is_nan() {
        return Err(bucket_error(
            "operand, lower bound, and upper bound cannot be NaN",
        ));
    }
    if !b1.is_finite() || !b2.is_finite() {
        return Err(bucket_error("lower and upper bounds must be finite"));
    }
    let fraction = if b1 < b2 {
        if x < b1 {
            return Ok(Value::Int4(0));
        }
        if x >= b2 {
            return past_last(count);
        }
        (x - b1) / (b2 - b1)
    } else if b1 > b2 {
        if x > b1 {
            return Ok(Value::Int4(0));
        }
        if x <= b2 {
            return past_last(count);
        }
        (b1 - x) / (b1 - b2)
    } else {
        return Err(bucket_error("lower bound cannot equal upper bound"));
    };
    let bucket = ((count as f64 * fraction) as i32).min(count - 1);
    Ok(Value::Int4(bucket + 1))
}

/// width_bucket over numeric, exact.
fn width_bucket_numeric(args: &[Value]) -> PgResult<Value> {
    let (x, b1, b2) = (numeric(args, 0)?, numeric(args, 1)?, numeric(args, 2)?);
    let count = bucket_count(args)?;
    if x.is_nan() || b1.is_nan() || b2.is_nan() {
        return Err(bucket_error(
            "operand, lower bound, and upper bound cannot be NaN",
        ));
    }
    if !b1.is_finite() || !b2.is_finite() {
        return Err(bucket_error("lower and upper bounds must be finite"));
    }
    let (lo, hi, ascending) = match b1.cmp(b2) {
        std::cmp::Ordering::Less => (b1, b2, true),
        std::cmp::Ordering::Greater => (b2, b1, false),
        std::cmp::Ordering::Equal => {
            return Err(bucket_error("lower bound cannot equal upper bound"))
        }
    };
    let below = if ascending {
        x.cmp(lo).is_lt()
    } else {
        x.cmp(hi).is_gt()
    };
    let beyond = if ascending {
        x.cmp(hi).is_ge()
    } else {
        x.cmp(lo).is_le()
    };
    if below {
        return Ok(Value::Int4(0));
    }
    if beyond {
        return past_last(count);
    }
    let distance = if ascending { x.sub(lo)? } else { hi.sub(x)? };
    let bucket = distance
        .mul(&Numeric::from_i64(count as i64))?
        .div_trunc(&hi.sub(lo)?)?
        .to_i32()?;
    Ok(Value::Int4(bucket.min(count - 1) + 1))
}

fn factorial(args: &[Value]) -> PgResult<Value> {
    let n = match args.first() {
        Some(Value::Int8(n)) => *n,
        other => return Err(PgError::internal(format!("expected int8, got {other:?}"))),
    };
    if n < 0 {
        return Err(PgError::new(
            SqlState::NUMERIC_VALUE_OUT_OF_RANGE,
            "factorial of a negative number is undefined",
        ));
    }
    // PostgreSQL's numeric holds 131072 digits before the point.
    if n > 32_177 {
        return Err(PgError::new(
            SqlState::NUMERIC_VALUE_OUT_OF_RANGE,
            "value overflows numeric format",
        ));
    }
    let mut result = Numeric::from_i64(1);
    for k in 2..=n {
        result = result.mul(&Numeric::from_i64(k))?;
    }
    Ok(Value::numeric(result))
}

/// The fewest fractional digits that represent `n` exactly.
fn min_scale(n: &Numeric) -> i32 {
    let mut text = String::new();
    n.write_text(&mut text);
    match text.split_once('.') {
        Some((_, fraction)) => fraction.trim_end_matches('0').len() as i32,
        None => 0,
    }
}
