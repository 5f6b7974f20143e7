//! Date/time functions: now() and friends, date_part / extract, date_trunc.
//! Those over timestamptz, and the local-time ones, read the session's
//! TimeZone from the `IoSettings` they are called with.

use super::string::{int, text};
use crate::datetime::{
    self as dt, date_from_ymd, timestamp_from_fields, timestamp_to_fields, ymd_from_date,
    DATE_NOBEGIN, DATE_NOEND, TIMESTAMP_NOBEGIN, TIMESTAMP_NOEND, USECS_PER_DAY, USECS_PER_SEC,
};
use crate::numeric::Numeric;
use crate::timezone::TimeZone;
use crate::{IoSettings, Value};
use common::{PgError, PgResult, SqlState};

pub fn now(_: &[Value]) -> PgResult<Value> {
    Ok(Value::Timestamptz(dt::now_timestamp()))
}

/// The session's wall-clock time.
pub fn localtimestamp(_: &[Value], io: &IoSettings) -> PgResult<Value> {
    Ok(Value::Timestamp(dt::tz_to_local(
        dt::now_timestamp(),
        io.timezone,
    )))
}

/// The session's date.
pub fn current_date(_: &[Value], io: &IoSettings) -> PgResult<Value> {
    let local = dt::tz_to_local(dt::now_timestamp(), io.timezone);
    Ok(Value::Date(local.div_euclid(USECS_PER_DAY) as i32))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Unit {
    Microseconds,
    Milliseconds,
    Second,
    Minute,
    Hour,
    Day,
    Week,
    Month,
    Quarter,
    Year,
    Decade,
    Century,
    Millennium,
    Dow,
    Isodow,
    Doy,
    Isoyear,
    Epoch,
    Julian,
    Timezone,
    TimezoneHour,
    TimezoneMinute,
}

pub(super) fn parse_unit(s: &str) -> Option<Unit> {
    use Unit::*;
    let l = s.to_ascii_lowercase();
    Some(match l.as_str() {
        "microsecond" | "microseconds" | "us" | "usec" | "usecs" | "usecond" | "useconds" => {
            Microseconds
        }
        "millisecond" | "milliseconds" | "ms" | "msec" | "msecs" | "msecond" | "mseconds" => {
            Milliseconds
        }
        "second" | "seconds" | "s" | "sec" | "secs" => Second,
        "minute" | "minutes" | "m" | "min" | "mins" => Minute,
        "hour" | "hours" | "h" | "hr" | "hrs" => Hour,
        "day" | "days" | "d" => Day,
        "week" | "weeks" | "w" => Week,
        "month" | "months" | "mon" | "mons" => Month,
        "quarter" | "qtr" => Quarter,
        "year" | "years" | "y" | "yr" | "yrs" => Year,
        "decade" | "decades" | "dec" | "decs" => Decade,
        "century" | "centuries" | "c" | "cent" => Century,
        "millennium" | "millennia" | "mil" | "mils" => Millennium,
        "dow" => Dow,
        "isodow" => Isodow,
        "doy" => Doy,
        "isoyear" => Isoyear,
        "epoch" => Epoch,
        "julian" | "j" => Julian,
        "timezone" => Timezone,
        "timezone_h" | "timezone_hour" => TimezoneHour,
        "timezone_m" | "timezone_minute" => TimezoneMinute,
        _ => return None,
    })
}

pub(super) fn not_recognized(unit: &str, tname: &str) -> PgError {
    PgError::new(
        SqlState::INVALID_PARAMETER_VALUE,
        format!("unit \"{unit}\" not recognized for type {tname}"),
    )
}

pub(super) fn not_supported(unit: &str, tname: &str) -> PgError {
    PgError::new(
        SqlState::FEATURE_NOT_SUPPORTED,
        format!("unit \"{unit}\" not supported for type {tname}"),
    )
}

const TS: &str = "timestamp without time zone";
const TSTZ: &str = "timestamp with time zone";

/// ISO day of week, Monday = 1 .. Sunday = 7, of days since 2000-01-01 (a Saturday).
pub(super) fn isodow(days: i64) -> i64 {
    (days + 5).rem_euclid(7) + 1
}

/// (ISO year, ISO week) of days since 2000-01-01.
pub(super) fn iso_week(days: i64) -> (i64, i64) {
    let (y, _, _) = ymd_from_date(days);
    // Monday of week 1 of ISO year `y`: the week containing January 4th.
    let week1 = |y: i64| {
        let jan4 = date_from_ymd(y, 1, 4);
        jan4 - (isodow(jan4) - 1)
    };
    let mut iy = y;
    if days < week1(y) {
        iy = y - 1;
    } else if days >= week1(y + 1) {
        iy = y + 1;
    }
    (iy, (days - week1(iy)) / 7 + 1)
}

/// The value of `unit` for a finite timestamp, as an exact numeric
/// (PostgreSQL 14+ extract semantics; date_part converts it to float8).
fn field_numeric(unit: Unit, us: i64, unit_name: &str, tname: &str) -> PgResult<Numeric> {
    field_numeric_days(
        unit,
        us.div_euclid(USECS_PER_DAY),
        us.rem_euclid(USECS_PER_DAY),
        unit_name,
        tname,
    )
}

/// `field_numeric` for a day number and a time of day in microseconds.
fn field_numeric_days(
    unit: Unit,
    days: i64,
    time: i64,
    unit_name: &str,
    tname: &str,
) -> PgResult<Numeric> {
    let f = timestamp_to_fields(time);
    let (y, month, day) = ymd_from_date(days);
    let sec_us = f.second as i64 * USECS_PER_SEC + f.usec as i64;
    let i = |v: i64| Ok(Numeric::from_i64(v));
    match unit {
        Unit::Microseconds => i(sec_us),
        Unit::Milliseconds => Ok(Numeric::from_parts(sec_us as i128, 3)),
        Unit::Second => Ok(Numeric::from_parts(sec_us as i128, 6)),
        Unit::Minute => i(f.minute as i64),
        Unit::Hour => i(f.hour as i64),
        Unit::Day => i(day as i64),
        Unit::Month => i(month as i64),
        Unit::Quarter => i((month as i64 - 1) / 3 + 1),
        Unit::Week => i(iso_week(days).1),
        Unit::Year => i(if y > 0 { y } else { y - 1 }),
        Unit::Decade => i(if y >= 0 {
            y / 10
        } else {
            -((8 - (y - 1)) / 10)
        }),
        Unit::Century => i(if y > 0 {
            (y + 99) / 100
        } else {
            -((99 - (y - 1)) / 100)
        }),
        Unit::Millennium => i(if y > 0 {
            (y + 999) / 1000
        } else {
            -((999 - (y - 1)) / 1000)
        }),
        Unit::Dow => i(isodow(days) % 7),
        Unit::Isodow => i(isodow(days)),
        Unit::Doy => i(days - date_from_ymd(y, 1, 1) + 1),
        Unit::Isoyear => {
            let iy = iso_week(days).0;
            i(if iy <= 0 { iy - 1 } else { iy })
        }
        Unit::Epoch => {
            let e =
                (days + dt::UNIX_EPOCH_OFFSET_DAYS) as i128 * USECS_PER_DAY as i128 + time as i128;
            Ok(Numeric::from_parts(e, 6))
        }
        Unit::Julian => {
            let jd = Numeric::from_i64(days + dt::POSTGRES_EPOCH_JDATE);
            let t = Numeric::from_i64(time);
            jd.add(&t.div(&Numeric::from_i64(USECS_PER_DAY))?)
        }
        Unit::Timezone | Unit::TimezoneHour | Unit::TimezoneMinute => {
            if tname == TSTZ {
                i(0)
            } else {
                Err(not_supported(unit_name, tname))
            }
        }
    }
}

/// Units that grow with time give ±Infinity for infinite timestamps; others NULL.
fn infinite_field(unit: Unit, positive: bool) -> Option<Numeric> {
    matches!(
        unit,
        Unit::Year
            | Unit::Decade
            | Unit::Century
            | Unit::Millennium
            | Unit::Julian
            | Unit::Isoyear
            | Unit::Epoch
    )
    .then(|| {
        if positive {
            Numeric::infinity()
        } else {
            Numeric::neg_infinity()
        }
    })
}

/// `zone`: the session's, for a timestamptz argument.
fn ts_part(args: &[Value], tname: &str, zone: TimeZone) -> PgResult<Option<Numeric>> {
    let unit_name = text(args, 0)?;
    let us = match &args[1] {
        Value::Timestamp(t) => *t,
        Value::Timestamptz(t) => dt::tz_to_local(*t, zone),
        Value::Date(d) => dt::date_to_timestamp(*d)?,
        other => return Err(PgError::internal(format!("date_part of {other:?}"))),
    };
    let unit = parse_unit(unit_name).ok_or_else(|| not_recognized(unit_name, tname))?;
    if let Value::Timestamptz(t) = &args[1] {
        if *t != TIMESTAMP_NOBEGIN && *t != TIMESTAMP_NOEND {
            // The zone fields and the epoch belong to the instant, not to the
            // wall-clock time it shows in this session.
            let offset = zone.offset_at_utc(*t);
            match unit {
                Unit::Timezone => return Ok(Some(Numeric::from_i64(offset as i64))),
                Unit::TimezoneHour => return Ok(Some(Numeric::from_i64((offset / 3600) as i64))),
                Unit::TimezoneMinute => {
                    return Ok(Some(Numeric::from_i64((offset / 60 % 60) as i64)))
                }
                Unit::Epoch => return field_numeric(unit, *t, unit_name, tname).map(Some),
                _ => {}
            }
        }
    }
    if us == TIMESTAMP_NOBEGIN || us == TIMESTAMP_NOEND {
        if tname == TS
            && matches!(
                unit,
                Unit::Timezone | Unit::TimezoneHour | Unit::TimezoneMinute
            )
        {
            return Err(not_supported(unit_name, tname));
        }
        return Ok(infinite_field(unit, us == TIMESTAMP_NOEND));
    }
    field_numeric(unit, us, unit_name, tname).map(Some)
}

fn to_float(n: Option<Numeric>) -> Value {
    match n {
        Some(n) => Value::Float8(n.to_f64()),
        None => Value::Null,
    }
}

fn to_num(n: Option<Numeric>) -> Value {
    match n {
        Some(n) => Value::Numeric(Box::new(n)),
        None => Value::Null,
    }
}

// Zone-less values ignore the zone ts_part is given.
const NO_ZONE: TimeZone = TimeZone::Fixed(0);

pub fn date_part_ts(args: &[Value]) -> PgResult<Value> {
    ts_part(args, TS, NO_ZONE).map(to_float)
}

pub fn date_part_tstz(args: &[Value], io: &IoSettings) -> PgResult<Value> {
    ts_part(args, TSTZ, io.timezone).map(to_float)
}

/// date_part(text, date) is date_part(text, date::timestamp) in PostgreSQL.
pub fn date_part_date(args: &[Value]) -> PgResult<Value> {
    ts_part(args, TS, NO_ZONE).map(to_float)
}

pub fn extract_ts(args: &[Value]) -> PgResult<Value> {
    ts_part(args, TS, NO_ZONE).map(to_num)
}

pub fn extract_tstz(args: &[Value], io: &IoSettings) -> PgResult<Value> {
    ts_part(args, TSTZ, io.timezone).map(to_num)
}

/// extract(field from date): date fields only, integers.
pub fn extract_date(args: &[Value]) -> PgResult<Value> {
    let unit_name = text(args, 0)?;
    let d = match &args[1] {
        Value::Date(d) => *d,
        other => return Err(PgError::internal(format!("extract of {other:?}"))),
    };
    let unit = parse_unit(unit_name).ok_or_else(|| not_recognized(unit_name, "date"))?;
    let date_unit = matches!(
        unit,
        Unit::Day
            | Unit::Month
            | Unit::Quarter
            | Unit::Week
            | Unit::Dow
            | Unit::Isodow
            | Unit::Doy
            | Unit::Year
            | Unit::Isoyear
            | Unit::Decade
            | Unit::Century
            | Unit::Millennium
            | Unit::Julian
            | Unit::Epoch
    );
    if !date_unit {
        return Err(not_supported(unit_name, "date"));
    }
    if d == DATE_NOBEGIN || d == DATE_NOEND {
        return Ok(to_num(infinite_field(unit, d == DATE_NOEND)));
    }
    let days = d as i64;
    let v = match unit {
        Unit::Julian => Numeric::from_i64(days + dt::POSTGRES_EPOCH_JDATE),
        Unit::Epoch => Numeric::from_i64((days + dt::UNIX_EPOCH_OFFSET_DAYS) * 86_400),
        _ => field_numeric_days(unit, days, 0, unit_name, "date")?,
    };
    Ok(to_num(Some(v)))
}

fn trunc_fields(unit: Unit, us: i64, unit_name: &str, tname: &str) -> PgResult<i64> {
    let mut f = timestamp_to_fields(us);
    if unit == Unit::Week {
        let days = us.div_euclid(USECS_PER_DAY);
        let monday = days - (isodow(days) - 1);
        return Ok(monday * USECS_PER_DAY);
    }
    let lvl = |u: Unit| match u {
        Unit::Millennium => 12,
        Unit::Century => 11,
        Unit::Decade => 10,
        Unit::Year => 9,
        Unit::Quarter => 8,
        Unit::Month => 7,
        Unit::Day => 6,
        Unit::Hour => 5,
        Unit::Minute => 4,
        Unit::Second => 3,
        Unit::Milliseconds => 2,
        Unit::Microseconds => 1,
        _ => 0,
    };
    let l = lvl(unit);
    if l == 0 {
        return Err(not_supported(unit_name, tname));
    }
    let y = f.year;
    match unit {
        Unit::Millennium => {
            f.year = if y > 0 {
                (y + 999) / 1000 * 1000 - 999
            } else {
                -((999 - (y - 1)) / 1000) * 1000 + 1
            }
        }
        Unit::Century => {
            f.year = if y > 0 {
                (y + 99) / 100 * 100 - 99
            } else {
                -((99 - (y - 1)) / 100) * 100 + 1
            }
        }
        Unit::Decade => {
            f.year = if y > 0 {
                y / 10 * 10
            } else {
                -((8 - (y - 1)) / 10) * 10
            }
        }
        _ => {}
    }
    if l >= 9 {
        f.month = 1;
    }
    if l >= 8 {
        f.month = 3 * ((f.month - 1) / 3) + 1;
    }
    if l >= 7 {
        f.day = 1;
    }
    if l >= 6 {
        f.hour = 0;
    }
    if l >= 5 {
        f.minute = 0;
    }
    if l >= 4 {
        f.second = 0;
    }
    if l >= 3 {
        f.usec = 0;
    }
    if l == 2 {
        f.usec = f.usec / 1000 * 1000;
    }
    timestamp_from_fields(&f)
        .ok_or_else(|| PgError::new(SqlState::DATETIME_FIELD_OVERFLOW, "timestamp out of range"))
}

fn date_trunc(args: &[Value], tname: &str) -> PgResult<i64> {
    let unit_name = text(args, 0)?;
    let us = match &args[1] {
        Value::Timestamp(t) | Value::Timestamptz(t) => *t,
        other => return Err(PgError::internal(format!("date_trunc of {other:?}"))),
    };
    let unit = parse_unit(unit_name).ok_or_else(|| not_recognized(unit_name, tname))?;
    if us == TIMESTAMP_NOBEGIN || us == TIMESTAMP_NOEND {
        return Ok(us);
    }
    trunc_fields(unit, us, unit_name, tname)
}

pub fn date_trunc_ts(args: &[Value]) -> PgResult<Value> {
    date_trunc(args, TS).map(Value::Timestamp)
}

/// The zone named in `AT TIME ZONE` or `timezone(zone, …)`.
fn conversion_zone(args: &[Value]) -> PgResult<dt::TimeZone> {
    let name = text(args, 0)?;
    dt::TimeZone::parse_for_conversion(name).ok_or_else(|| {
        PgError::new(
            SqlState::INVALID_PARAMETER_VALUE,
            format!("time zone \"{name}\" not recognized"),
        )
    })
}

/// timezone(zone, timestamptz): the wall-clock time `zone` shows at the instant.
pub fn timezone_tstz(args: &[Value]) -> PgResult<Value> {
    let zone = conversion_zone(args)?;
    let Value::Timestamptz(t) = args[1] else {
        return Err(PgError::internal("timezone() of a non-timestamptz"));
    };
    if t == TIMESTAMP_NOBEGIN || t == TIMESTAMP_NOEND {
        return Ok(Value::Timestamp(t));
    }
    Ok(Value::Timestamp(
        t + zone.offset_at_utc(t) as i64 * dt::USECS_PER_SEC,
    ))
}

/// timezone(zone, timestamp): the instant at which `zone`'s clocks show it.
pub fn timezone_ts(args: &[Value]) -> PgResult<Value> {
    let zone = conversion_zone(args)?;
    let Value::Timestamp(t) = args[1] else {
        return Err(PgError::internal("timezone() of a non-timestamp"));
    };
    if t == TIMESTAMP_NOBEGIN || t == TIMESTAMP_NOEND {
        return Ok(Value::Timestamptz(t));
    }
    Ok(Value::Timestamptz(
        t - zone.offset_for_local(t) as i64 * dt::USECS_PER_SEC,
    ))
}

pub fn date_trunc_tstz(args: &[Value], io: &IoSettings) -> PgResult<Value> {
    // Truncate the session-local wall-clock time, as PostgreSQL does.
    let mut local = args.to_vec();
    if let Some(Value::Timestamptz(t)) = local.get_mut(1) {
        *t = dt::tz_to_local(*t, io.timezone);
    }
    date_trunc(&local, TSTZ).map(|t| Value::Timestamptz(dt::local_to_tz(t, io.timezone)))
}

/// make_date(year, month, day); negative years are BC.
pub fn make_date(args: &[Value]) -> PgResult<Value> {
    let (y, m, d) = (int(args, 0)?, int(args, 1)?, int(args, 2)?);
    let bad = || {
        PgError::new(
            SqlState::DATETIME_FIELD_OVERFLOW,
            format!("date field value out of range: {y}-{m:02}-{d:02}"),
        )
    };
    if y == 0 || !(1..=12).contains(&m) || d < 1 {
        return Err(bad());
    }
    let year = if y < 0 { y + 1 } else { y };
    if d > dt::days_in_month(year, m as u32) as i64 {
        return Err(bad());
    }
    let days = date_from_ymd(year, m as u32, d as u32);
    if days < dt::MIN_DATE as i64 || days >= dt::END_DATE as i64 {
        return Err(PgError::new(
            SqlState::DATETIME_FIELD_OVERFLOW,
            format!("date out of range: {y}-{m:02}-{d:02}"),
        ));
    }
    Ok(Value::Date(days as i32))
}

/// to_timestamp(double precision): seconds since the Unix epoch.
pub fn to_timestamp(args: &[Value]) -> PgResult<Value> {
    let secs = match &args[0] {
        Value::Float8(f) => *f,
        other => return Err(PgError::internal(format!("to_timestamp of {other:?}"))),
    };
    if secs.is_nan() {
        return Err(PgError::new(
            SqlState::DATETIME_FIELD_OVERFLOW,
            "timestamp cannot be NaN",
        ));
    }
    if secs.is_infinite() {
        return Ok(Value::Timestamptz(if secs > 0.0 {
            TIMESTAMP_NOEND
        } else {
            TIMESTAMP_NOBEGIN
        }));
    }
    let us =
        (secs * 1e6).round_ties_even() - dt::UNIX_EPOCH_OFFSET_DAYS as f64 * USECS_PER_DAY as f64;
    if !(dt::MIN_TIMESTAMP as f64..dt::END_TIMESTAMP as f64).contains(&us) {
        return Err(PgError::new(
            SqlState::DATETIME_FIELD_OVERFLOW,
            format!("timestamp out of range: \"{}\"", secs),
        ));
    }
    Ok(Value::Timestamptz(us as i64))
}
