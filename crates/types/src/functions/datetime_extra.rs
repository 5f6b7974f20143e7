//! More date/time functions: isfinite, make_timestamp / make_timestamptz,
//! date_bin and timeofday.

use common::{PgError, PgResult, SqlState};

use super::string::{int, text};
use super::{f, fs, volatile, BuiltinFunction};
use crate::datetime::{
    self as dt, timestamp_from_fields, timestamp_to_fields, DateTimeFields, DATE_NOBEGIN,
    DATE_NOEND, TIMESTAMP_NOBEGIN, TIMESTAMP_NOEND, USECS_PER_DAY,
};
use crate::timezone::TimeZone;
use crate::{IoSettings, TypeId, Value};

use TypeId::{Bool, Date, Float8, Int4, Interval, Text, Timestamp, Timestamptz};

pub(super) static BUILTINS: &[BuiltinFunction] = &[
    f("isfinite", &[Date], Bool, |a| {
        Ok(Value::Bool(!matches!(
            a[0],
            Value::Date(DATE_NOBEGIN | DATE_NOEND)
        )))
    }),
    f("isfinite", &[Timestamp], Bool, |a| {
        Ok(Value::Bool(finite_timestamp(&a[0])))
    }),
    f("isfinite", &[Timestamptz], Bool, |a| {
        Ok(Value::Bool(finite_timestamp(&a[0])))
    }),
    // PostgreSQL 15 has no infinite intervals.
    f("isfinite", &[Interval], Bool, |_| Ok(Value::Bool(true))),
    f(
        "make_timestamp",
        &[Int4, Int4, Int4, Int4, Int4, Float8],
        Timestamp,
        |a| make_local(a).map(Value::Timestamp),
    ),
    fs(
        "make_timestamptz",
        &[Int4, Int4, Int4, Int4, Int4, Float8],
        Timestamptz,
        |a, io| make_local(a).map(|t| Value::Timestamptz(dt::local_to_tz(t, io.timezone))),
    ),
    f(
        "make_timestamptz",
        &[Int4, Int4, Int4, Int4, Int4, Float8, Text],
        Timestamptz,
        |a| {
            let local = make_local(a)?;
            let name = text(a, 6)?;
            let zone = TimeZone::parse_for_conversion(name).ok_or_else(|| {
                PgError::new(
                    SqlState::INVALID_PARAMETER_VALUE,
                    format!("time zone \"{name}\" not recognized"),
                )
            })?;
            Ok(Value::Timestamptz(dt::local_to_tz(local, zone)))
        },
    ),
    f(
        "date_bin",
        &[Interval, Timestamp, Timestamp],
        Timestamp,
        |a| date_bin(a).map(Value::Timestamp),
    ),
    f(
        "date_bin",
        &[Interval, Timestamptz, Timestamptz],
        Timestamptz,
        |a| date_bin(a).map(Value::Timestamptz),
    ),
    volatile(fs("timeofday", &[], Text, timeofday)),
];

fn finite_timestamp(v: &Value) -> bool {
    !matches!(
        v,
        Value::Timestamp(TIMESTAMP_NOBEGIN | TIMESTAMP_NOEND)
            | Value::Timestamptz(TIMESTAMP_NOBEGIN | TIMESTAMP_NOEND)
    )
}

fn micros_of(v: &Value) -> PgResult<i64> {
    match v {
        Value::Timestamp(t) | Value::Timestamptz(t) => Ok(*t),
        other => Err(PgError::internal(format!(
            "expected a timestamp, got {other:?}"
        ))),
    }
}

/// make_timestamp's fields as a local timestamp.
fn make_local(args: &[Value]) -> PgResult<i64> {
    let (y, m, d) = (int(args, 0)?, int(args, 1)?, int(args, 2)?);
    let (h, min) = (int(args, 3)?, int(args, 4)?);
    let sec = match args[5] {
        Value::Float8(s) => s,
        _ => return Err(PgError::internal("make_timestamp seconds")),
    };
    let date_error = || {
        PgError::new(
            SqlState::DATETIME_FIELD_OVERFLOW,
            format!("date field value out of range: {y}-{m:02}-{d:02}"),
        )
    };
    if y == 0 || !(1..=12).contains(&m) || d < 1 {
        return Err(date_error());
    }
    let year = if y < 0 { y + 1 } else { y };
    if d > dt::days_in_month(year, m as u32) as i64 {
        return Err(date_error());
    }
    // 24:00:00 and a leap second (60) are accepted, as PostgreSQL's.
    if !(0..=24).contains(&h)
        || !(0..60).contains(&min)
        || !(0.0..=60.0).contains(&sec)
        || (h == 24 && (min > 0 || sec > 0.0))
    {
        return Err(PgError::new(
            SqlState::DATETIME_FIELD_OVERFLOW,
            format!(
                "time field value out of range: {h}:{min:02}:{}",
                seconds_g(sec)
            ),
        ));
    }
    let usecs = (sec * 1e6).round() as i64;
    let fields = DateTimeFields {
        year,
        month: m as u32,
        day: d as u32,
        hour: h as u32,
        minute: min as u32,
        second: (usecs / 1_000_000) as u32,
        usec: (usecs % 1_000_000) as u32,
    };
    timestamp_from_fields(&fields).ok_or_else(|| {
        PgError::new(
            SqlState::DATETIME_FIELD_OVERFLOW,
            format!("timestamp out of range: \"{y}-{m:02}-{d:02} {h}:{min:02}:{sec}\""),
        )
    })
}

/// Seconds as C's `%02g` prints them: six significant digits, no trailing
/// zeros, at least two characters.
fn seconds_g(sec: f64) -> String {
    let whole_digits = (sec.abs().max(1.0).log10().floor() as usize) + 1;
    let mut t = format!("{:.*}", 6usize.saturating_sub(whole_digits), sec);
    if t.contains('.') {
        t = t.trim_end_matches('0').trim_end_matches('.').to_string();
    }
    format!("{t:0>2}")
}

/// date_bin(stride, source, origin): the start of the stride-wide bin,
/// counted from origin, that holds source.
fn date_bin(args: &[Value]) -> PgResult<i64> {
    let Value::Interval(stride) = &args[0] else {
        return Err(PgError::internal("date_bin stride"));
    };
    let (source, origin) = (micros_of(&args[1])?, micros_of(&args[2])?);
    if !finite_timestamp(&args[1]) {
        return Ok(source);
    }
    if !finite_timestamp(&args[2]) {
        return Err(PgError::new(
            SqlState::DATETIME_FIELD_OVERFLOW,
            "origin out of range",
        ));
    }
    if stride.months != 0 {
        return Err(PgError::new(
            SqlState::FEATURE_NOT_SUPPORTED,
            "timestamps cannot be binned into intervals containing months or years",
        ));
    }
    let stride_us = (stride.days as i64)
        .checked_mul(USECS_PER_DAY)
        .and_then(|d| d.checked_add(stride.micros))
        .ok_or_else(out_of_range)?;
    if stride_us <= 0 {
        return Err(PgError::new(
            SqlState::DATETIME_FIELD_OVERFLOW,
            "stride must be greater than zero",
        ));
    }
    let diff = source.checked_sub(origin).ok_or_else(out_of_range)?;
    let mut delta = diff - diff % stride_us;
    // PostgreSQL 15 moves back one stride whenever the origin is later.
    if origin > source && stride_us > 1 {
        delta -= stride_us;
    }
    origin.checked_add(delta).ok_or_else(out_of_range)
}

fn out_of_range() -> PgError {
    PgError::new(SqlState::DATETIME_FIELD_OVERFLOW, "timestamp out of range")
}

/// timeofday(): the current time as text, `Tue Nov 24 18:13:20.123456 2026 UTC`.
fn timeofday(_: &[Value], io: &IoSettings) -> PgResult<Value> {
    const DAYS: [&str; 7] = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let now = dt::now_timestamp();
    let local = dt::tz_to_local(now, io.timezone);
    let f = timestamp_to_fields(local);
    // 2000-01-01, day 0 of the timestamp epoch, was a Saturday.
    let weekday = (local.div_euclid(USECS_PER_DAY) + 6).rem_euclid(7) as usize;
    let zone = io.timezone.display_abbreviation(now);
    Ok(Value::Text(format!(
        "{} {} {:02} {:02}:{:02}:{:02}.{:06} {} {}",
        DAYS[weekday],
        MONTHS[f.month as usize - 1],
        f.day,
        f.hour,
        f.minute,
        f.second,
        f.usec,
        f.year,
        zone
    )))
}
