//! Functions over intervals: extract / date_part, date_trunc, justify_*,
//! make_interval, age, and the session-aware timestamptz +/- interval the
//! binder sends those operators to.

use super::datetime::{not_recognized, not_supported, parse_unit, Unit};
use crate::datetime::{self as dt, USECS_PER_DAY, USECS_PER_SEC};
use crate::interval::{
    self as iv, Interval, DAYS_PER_MONTH, MONTHS_PER_YEAR, USECS_PER_HOUR, USECS_PER_MINUTE,
};
use crate::numeric::Numeric;
use crate::{IoSettings, Value};
use common::{PgError, PgResult};

const TNAME: &str = "interval";

fn arg_interval(v: &Value) -> PgResult<Interval> {
    match v {
        Value::Interval(i) => Ok(*i),
        _ => Err(PgError::internal("interval function given a non-interval")),
    }
}

fn unit_arg(v: &Value) -> PgResult<(String, Option<Unit>)> {
    let s = v.as_str().unwrap_or_default().to_string();
    let u = parse_unit(&s);
    Ok((s, u))
}

/// `v / 10^scale` as a numeric with exactly `scale` fraction digits.
fn scaled(v: i128, scale: u32) -> Numeric {
    let neg = v < 0;
    let abs = v.unsigned_abs();
    let div = 10u128.pow(scale);
    let text = if scale == 0 {
        format!("{}{}", if neg { "-" } else { "" }, abs)
    } else {
        format!(
            "{}{}.{:0width$}",
            if neg { "-" } else { "" },
            abs / div,
            abs % div,
            width = scale as usize
        )
    };
    Numeric::parse(&text).unwrap_or_else(|_| Numeric::from_i64(0))
}

/// interval_part: the field of `i` named by `unit`, as a numeric.
fn interval_field(unit_name: &str, unit: Option<Unit>, i: &Interval) -> PgResult<Numeric> {
    let Some(unit) = unit else {
        return Err(not_recognized(unit_name, TNAME));
    };
    let months = i.months as i128;
    let year = months / MONTHS_PER_YEAR as i128;
    let sec_us = (i.micros % USECS_PER_MINUTE) as i128;
    Ok(match unit {
        Unit::Microseconds => scaled(sec_us, 0),
        Unit::Milliseconds => scaled(sec_us, 3),
        Unit::Second => scaled(sec_us, 6),
        Unit::Minute => scaled(((i.micros / USECS_PER_MINUTE) % 60) as i128, 0),
        Unit::Hour => scaled((i.micros / USECS_PER_HOUR) as i128, 0),
        Unit::Day => scaled(i.days as i128, 0),
        Unit::Month => scaled(months % 12, 0),
        Unit::Quarter => scaled((months % 12) / 3 + 1, 0),
        Unit::Year => scaled(year, 0),
        Unit::Decade => scaled(year / 10, 0),
        Unit::Century => scaled(year / 100, 0),
        Unit::Millennium => scaled(year / 1000, 0),
        Unit::Epoch => {
            // Years count 365.25 days, months 30, in quarter days so the
            // arithmetic stays integral.
            let quarter_days =
                1461 * year + 4 * DAYS_PER_MONTH as i128 * (months % 12) + 4 * i.days as i128;
            let us = quarter_days * (USECS_PER_DAY as i128 / 4) + i.micros as i128;
            scaled(us, 6)
        }
        _ => return Err(not_supported(unit_name, TNAME)),
    })
}

pub fn extract_interval(args: &[Value]) -> PgResult<Value> {
    let (name, unit) = unit_arg(&args[0])?;
    let n = interval_field(&name, unit, &arg_interval(&args[1])?)?;
    Ok(Value::Numeric(Box::new(n)))
}

pub fn date_part_interval(args: &[Value]) -> PgResult<Value> {
    let (name, unit) = unit_arg(&args[0])?;
    let n = interval_field(&name, unit, &arg_interval(&args[1])?)?;
    Ok(Value::Float8(n.to_f64()))
}

/// interval_trunc: the fields below `unit` zeroed.
pub fn date_trunc_interval(args: &[Value]) -> PgResult<Value> {
    let (name, unit) = unit_arg(&args[0])?;
    let i = arg_interval(&args[1])?;
    let Some(unit) = unit else {
        return Err(not_recognized(&name, TNAME));
    };
    let year = i.months / 12;
    let mon = i.months % 12;
    let trunc = |us: i64, by: i64| us - us % by;
    let r = match unit {
        Unit::Millennium => Interval::new(year / 1000 * 1000 * 12, 0, 0),
        Unit::Century => Interval::new(year / 100 * 100 * 12, 0, 0),
        Unit::Decade => Interval::new(year / 10 * 10 * 12, 0, 0),
        Unit::Year => Interval::new(year * 12, 0, 0),
        Unit::Quarter => Interval::new(year * 12 + mon / 3 * 3, 0, 0),
        Unit::Month => Interval::new(i.months, 0, 0),
        Unit::Day => Interval::new(i.months, i.days, 0),
        Unit::Hour => Interval::new(i.months, i.days, trunc(i.micros, USECS_PER_HOUR)),
        Unit::Minute => Interval::new(i.months, i.days, trunc(i.micros, USECS_PER_MINUTE)),
        Unit::Second => Interval::new(i.months, i.days, trunc(i.micros, USECS_PER_SEC)),
        Unit::Milliseconds => Interval::new(i.months, i.days, trunc(i.micros, 1000)),
        Unit::Microseconds => i,
        _ => return Err(not_supported(&name, TNAME)),
    };
    Ok(Value::Interval(r))
}

pub fn justify_days(args: &[Value]) -> PgResult<Value> {
    Ok(Value::Interval(arg_interval(&args[0])?.justify_days()?))
}

pub fn justify_hours(args: &[Value]) -> PgResult<Value> {
    Ok(Value::Interval(arg_interval(&args[0])?.justify_hours()?))
}

pub fn justify_interval(args: &[Value]) -> PgResult<Value> {
    Ok(Value::Interval(arg_interval(&args[0])?.justify_interval()?))
}

/// make_interval(years, months, weeks, days, hours, mins, secs), every
/// argument optional from the right.
pub fn make_interval(args: &[Value]) -> PgResult<Value> {
    let int = |i: usize| -> i64 { args.get(i).and_then(Value::as_i64).unwrap_or(0) };
    let secs = args.get(6).and_then(Value::as_f64).unwrap_or(0.0);
    if secs.is_nan() || secs.is_infinite() {
        return Err(iv::interval_out_of_range());
    }
    let months = int(0)
        .checked_mul(12)
        .and_then(|y| y.checked_add(int(1)))
        .and_then(|m| i32::try_from(m).ok())
        .ok_or_else(iv::interval_out_of_range)?;
    let days = int(2)
        .checked_mul(7)
        .and_then(|w| w.checked_add(int(3)))
        .and_then(|d| i32::try_from(d).ok())
        .ok_or_else(iv::interval_out_of_range)?;
    let micros = (int(4) as i128 * USECS_PER_HOUR as i128
        + int(5) as i128 * USECS_PER_MINUTE as i128
        + (secs * 1e6).round() as i128)
        .try_into()
        .map_err(|_| iv::interval_out_of_range())?;
    Ok(Value::Interval(Interval::new(months, days, micros)))
}

fn ts_arg(v: &Value, io: &IoSettings) -> i64 {
    match v {
        Value::Timestamp(t) => *t,
        Value::Timestamptz(t) => dt::tz_to_local(*t, io.timezone),
        _ => 0,
    }
}

/// age(a, b): the calendar difference of the two (wall-clock) times.
pub fn age2(args: &[Value], io: &IoSettings) -> PgResult<Value> {
    Ok(Value::Interval(iv::age(
        ts_arg(&args[0], io),
        ts_arg(&args[1], io),
    )?))
}

/// age(t): from t to today's midnight (the session's, for timestamptz).
pub fn age1(args: &[Value], io: &IoSettings) -> PgResult<Value> {
    let local_now = dt::tz_to_local(dt::now_timestamp(), io.timezone);
    let midnight = local_now - local_now.rem_euclid(USECS_PER_DAY);
    Ok(Value::Interval(iv::age(midnight, ts_arg(&args[0], io))?))
}

pub fn timestamptz_pl_interval(args: &[Value], io: &IoSettings) -> PgResult<Value> {
    let (Value::Timestamptz(t), Value::Interval(i)) = (&args[0], &args[1]) else {
        return Err(PgError::internal("timestamptz_pl_interval arguments"));
    };
    Ok(Value::Timestamptz(iv::timestamptz_plus(
        *t,
        i,
        io.timezone,
    )?))
}

pub fn timestamptz_mi_interval(args: &[Value], io: &IoSettings) -> PgResult<Value> {
    let (Value::Timestamptz(t), Value::Interval(i)) = (&args[0], &args[1]) else {
        return Err(PgError::internal("timestamptz_mi_interval arguments"));
    };
    Ok(Value::Timestamptz(iv::timestamptz_plus(
        *t,
        &i.checked_neg()?,
        io.timezone,
    )?))
}
