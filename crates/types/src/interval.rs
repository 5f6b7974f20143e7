//! `interval` (PostgreSQL's utils/adt/timestamp.c interval parts and
//! datetime.c's DecodeInterval/EncodeInterval): months, days and microseconds
//! kept apart, as PostgreSQL stores them, because a month and a day have no
//! fixed length once they meet a calendar or a time zone.

use std::cmp::Ordering;
use std::fmt::Write as _;

use crate::datetime::{self, TimeZone, USECS_PER_DAY, USECS_PER_SEC};
use common::{PgError, PgResult, SqlState};

pub const USECS_PER_HOUR: i64 = 3600 * USECS_PER_SEC;
pub const USECS_PER_MINUTE: i64 = 60 * USECS_PER_SEC;
/// The month length comparison, justify_days and fractional input assume.
pub const DAYS_PER_MONTH: i64 = 30;
pub const MONTHS_PER_YEAR: i64 = 12;

/// An interval value: three fields that never borrow from one another
/// except where an operation says so (justify_*, comparison).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Interval {
    pub months: i32,
    pub days: i32,
    pub micros: i64,
}

/// `IntervalStyle`: how interval text output looks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum IntervalStyle {
    #[default]
    Postgres,
    PostgresVerbose,
    SqlStandard,
    Iso8601,
}

impl IntervalStyle {
    pub fn parse(s: &str) -> Option<IntervalStyle> {
        Some(match s.to_ascii_lowercase().as_str() {
            "postgres" => IntervalStyle::Postgres,
            "postgres_verbose" => IntervalStyle::PostgresVerbose,
            "sql_standard" => IntervalStyle::SqlStandard,
            "iso_8601" => IntervalStyle::Iso8601,
            _ => return None,
        })
    }
}

pub fn interval_out_of_range() -> PgError {
    PgError::new(SqlState::DATETIME_FIELD_OVERFLOW, "interval out of range")
}

fn bad_syntax(input: &str) -> PgError {
    PgError::new(
        SqlState::INVALID_DATETIME_FORMAT,
        format!("invalid input syntax for type interval: \"{input}\""),
    )
}

fn field_overflow(input: &str) -> PgError {
    PgError::new(
        SqlState("22015"),
        format!("interval field value out of range: \"{input}\""),
    )
}

impl Interval {
    pub const ZERO: Interval = Interval {
        months: 0,
        days: 0,
        micros: 0,
    };

    pub fn new(months: i32, days: i32, micros: i64) -> Interval {
        Interval {
            months,
            days,
            micros,
        }
    }

    /// The span comparison and hashing use: months as 30 days, days as 24 hours
    /// (PostgreSQL's interval_cmp_value, in 128 bits so nothing overflows).
    pub fn span(&self) -> i128 {
        (self.months as i128 * DAYS_PER_MONTH as i128 + self.days as i128) * USECS_PER_DAY as i128
            + self.micros as i128
    }

    pub fn cmp_span(&self, other: &Interval) -> Ordering {
        self.span().cmp(&other.span())
    }

    pub fn checked_add(&self, o: &Interval) -> PgResult<Interval> {
        Ok(Interval {
            months: self
                .months
                .checked_add(o.months)
                .ok_or_else(interval_out_of_range)?,
            days: self
                .days
                .checked_add(o.days)
                .ok_or_else(interval_out_of_range)?,
            micros: self
                .micros
                .checked_add(o.micros)
                .ok_or_else(interval_out_of_range)?,
        })
    }

    pub fn checked_neg(&self) -> PgResult<Interval> {
        Ok(Interval {
            months: self
                .months
                .checked_neg()
                .ok_or_else(interval_out_of_range)?,
            days: self.days.checked_neg().ok_or_else(interval_out_of_range)?,
            micros: self
                .micros
                .checked_neg()
                .ok_or_else(interval_out_of_range)?,
        })
    }

    pub fn checked_sub(&self, o: &Interval) -> PgResult<Interval> {
        self.checked_add(&o.checked_neg()?)
    }

    /// interval * float8 (PostgreSQL's interval_mul): the fractional months
    /// spill into days (30 per month), the fractional days into time.
    pub fn mul_f64(&self, factor: f64) -> PgResult<Interval> {
        if factor.is_nan() {
            return Err(interval_out_of_range());
        }
        let month_f = self.months as f64 * factor;
        if !month_f.is_finite()
            || month_f.trunc() < i32::MIN as f64
            || month_f.trunc() > i32::MAX as f64
        {
            return Err(interval_out_of_range());
        }
        let months = month_f.trunc() as i32;
        let day_f = self.days as f64 * factor;
        if !day_f.is_finite() || day_f.trunc() < i32::MIN as f64 || day_f.trunc() > i32::MAX as f64
        {
            return Err(interval_out_of_range());
        }
        let mut days = day_f.trunc() as i32;
        // Cascade fractions down: month -> days (keeping whole days), then the rest to time.
        let month_remainder_days = (month_f - months as f64) * DAYS_PER_MONTH as f64;
        let whole = month_remainder_days.trunc();
        let mut sec_remainder = (day_f - days as f64 + month_remainder_days - whole) * 86_400.0;
        // Keep sub-day remainders below a day, as PostgreSQL's TSROUND does.
        sec_remainder = (sec_remainder * 1e6).round() / 1e6;
        if sec_remainder.abs() >= 86_400.0 {
            let extra = (sec_remainder / 86_400.0).trunc();
            days = days
                .checked_add(extra as i32)
                .ok_or_else(interval_out_of_range)?;
            sec_remainder -= extra * 86_400.0;
        }
        days = days
            .checked_add(whole as i32)
            .ok_or_else(interval_out_of_range)?;
        let micros_f = (self.micros as f64 * factor + sec_remainder * 1e6).round();
        if !micros_f.is_finite() || micros_f < i64::MIN as f64 || micros_f >= i64::MAX as f64 {
            return Err(interval_out_of_range());
        }
        Ok(Interval {
            months,
            days,
            micros: micros_f as i64,
        })
    }

    /// interval / float8 (22012 on zero).
    pub fn div_f64(&self, divisor: f64) -> PgResult<Interval> {
        if divisor == 0.0 {
            return Err(PgError::new(SqlState::DIVISION_BY_ZERO, "division by zero"));
        }
        self.mul_f64(1.0 / divisor)
    }

    /// justify_hours: whole days out of the time part, signs made to agree.
    pub fn justify_hours(&self) -> PgResult<Interval> {
        let mut days = self.days as i64 + self.micros / USECS_PER_DAY;
        let mut micros = self.micros % USECS_PER_DAY;
        if days > 0 && micros < 0 {
            micros += USECS_PER_DAY;
            days -= 1;
        } else if days < 0 && micros > 0 {
            micros -= USECS_PER_DAY;
            days += 1;
        }
        Ok(Interval {
            months: self.months,
            days: i32::try_from(days).map_err(|_| interval_out_of_range())?,
            micros,
        })
    }

    /// justify_days: whole 30-day months out of the days, signs made to agree.
    pub fn justify_days(&self) -> PgResult<Interval> {
        let mut months = self.months as i64 + self.days as i64 / DAYS_PER_MONTH;
        let mut days = self.days as i64 % DAYS_PER_MONTH;
        if months > 0 && days < 0 {
            days += DAYS_PER_MONTH;
            months -= 1;
        } else if months < 0 && days > 0 {
            days -= DAYS_PER_MONTH;
            months += 1;
        }
        Ok(Interval {
            months: i32::try_from(months).map_err(|_| interval_out_of_range())?,
            days: days as i32,
            micros: self.micros,
        })
    }

    /// justify_interval: both of the above, with one sign throughout.
    pub fn justify_interval(&self) -> PgResult<Interval> {
        let mut months = self.months as i64;
        let mut days = self.days as i64 + self.micros / USECS_PER_DAY;
        let mut micros = self.micros % USECS_PER_DAY;
        months += days / DAYS_PER_MONTH;
        days %= DAYS_PER_MONTH;
        if months > 0 && (days < 0 || (days == 0 && micros < 0)) {
            days += DAYS_PER_MONTH;
            months -= 1;
        } else if months < 0 && (days > 0 || (days == 0 && micros > 0)) {
            days -= DAYS_PER_MONTH;
            months += 1;
        }
        if days > 0 && micros < 0 {
            micros += USECS_PER_DAY;
            days -= 1;
        } else if days < 0 && micros > 0 {
            micros -= USECS_PER_DAY;
            days += 1;
        }
        Ok(Interval {
            months: i32::try_from(months).map_err(|_| interval_out_of_range())?,
            days: days as i32,
            micros,
        })
    }
}

// ----- text input -----

/// The field a unit word names, with how many of the base unit it holds.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Unit {
    /// Microseconds per unit.
    Time(i64),
    /// Days per unit.
    Days(i64),
    /// Months per unit.
    Months(i64),
}

fn unit_of(word: &str) -> Option<Unit> {
    use Unit::*;
    Some(match word.to_ascii_lowercase().as_str() {
        "microsecond" | "microseconds" | "us" | "usec" | "usecs" | "usecond" | "useconds" => {
            Time(1)
        }
        "millisecond" | "milliseconds" | "ms" | "msec" | "msecs" | "msecond" | "mseconds" => {
            Time(1000)
        }
        "second" | "seconds" | "s" | "sec" | "secs" => Time(USECS_PER_SEC),
        "minute" | "minutes" | "m" | "min" | "mins" => Time(USECS_PER_MINUTE),
        "hour" | "hours" | "h" | "hr" | "hrs" => Time(USECS_PER_HOUR),
        "day" | "days" | "d" => Days(1),
        "week" | "weeks" | "w" => Days(7),
        "month" | "months" | "mon" | "mons" => Months(1),
        "year" | "years" | "y" | "yr" | "yrs" => Months(12),
        "decade" | "decades" | "dec" | "decs" => Months(120),
        "century" | "centuries" | "c" | "cent" | "cents" => Months(1200),
        "millennium" | "millennia" | "mil" | "mils" => Months(12000),
        _ => return None,
    })
}

/// What a bare number (no unit) means: seconds unless the typmod's range
/// names another last field (`interval '2' hour`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IntervalField {
    Year,
    Month,
    Day,
    Hour,
    Minute,
    Second,
}

/// Accumulates the fields of one input, in 128 bits so that overflow is
/// detected once at the end with PostgreSQL's message.
#[derive(Default)]
struct Acc {
    months: i128,
    days: i128,
    micros: i128,
}

impl Acc {
    /// Adds `value` (integer part `whole`, signed fraction `frac`) of `unit`,
    /// spilling fractions downward as PostgreSQL's AdjustFract* do.
    fn add(&mut self, whole: i128, frac: f64, unit: Unit) {
        match unit {
            Unit::Time(us) => {
                self.micros = self
                    .micros
                    .saturating_add(whole.saturating_mul(us as i128))
                    .saturating_add((frac * us as f64).round() as i128);
            }
            Unit::Days(d) => {
                self.days = self.days.saturating_add(whole.saturating_mul(d as i128));
                self.add_fraction_days(frac * d as f64);
            }
            Unit::Months(m) => {
                self.months = self.months.saturating_add(whole.saturating_mul(m as i128));
                if m >= 12 {
                    // Fractional years become whole months only.
                    self.months = self
                        .months
                        .saturating_add((frac * m as f64).round() as i128);
                } else {
                    self.add_fraction_days(frac * m as f64 * DAYS_PER_MONTH as f64);
                }
            }
        }
    }

    fn add_fraction_days(&mut self, days: f64) {
        let whole = days.trunc();
        self.days = self.days.saturating_add(whole as i128);
        self.micros = self
            .micros
            .saturating_add(((days - whole) * USECS_PER_DAY as f64).round() as i128);
    }

    fn finish(self, input: &str, negate: bool) -> PgResult<Interval> {
        let sign = if negate { -1 } else { 1 };
        let months = i32::try_from(self.months * sign).map_err(|_| field_overflow(input))?;
        let days = i32::try_from(self.days * sign).map_err(|_| field_overflow(input))?;
        let micros = i64::try_from(self.micros * sign).map_err(|_| field_overflow(input))?;
        Ok(Interval::new(months, days, micros))
    }
}

/// Splits `12.5` / `-3` / `+.5` into (whole, signed fraction); None if not a number.
fn split_number(s: &str) -> Option<(i128, f64)> {
    let (neg, digits) = match s.as_bytes().first()? {
        b'-' => (true, &s[1..]),
        b'+' => (false, &s[1..]),
        _ => (false, s),
    };
    let (int_part, frac_part) = match digits.find('.') {
        Some(i) => (&digits[..i], Some(&digits[i + 1..])),
        None => (digits, None),
    };
    if int_part.is_empty() && frac_part.is_none_or(str::is_empty) {
        return None;
    }
    if !int_part.bytes().all(|b| b.is_ascii_digit())
        || !frac_part.unwrap_or("").bytes().all(|b| b.is_ascii_digit())
    {
        return None;
    }
    let whole: i128 = if int_part.is_empty() {
        0
    } else {
        int_part.parse().ok()?
    };
    let frac: f64 = match frac_part {
        Some(f) if !f.is_empty() => format!("0.{f}").parse().ok()?,
        _ => 0.0,
    };
    Some(if neg { (-whole, -frac) } else { (whole, frac) })
}

/// `[-]h:m[:s[.f]]` as signed microseconds.
fn parse_time(tok: &str) -> Option<i128> {
    let (neg, body) = match tok.as_bytes().first()? {
        b'-' => (true, &tok[1..]),
        b'+' => (false, &tok[1..]),
        _ => (false, tok),
    };
    let parts: Vec<&str> = body.split(':').collect();
    if parts.len() < 2 || parts.len() > 3 {
        return None;
    }
    let int = |s: &str| -> Option<i128> {
        (!s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))
            .then(|| s.parse().ok())
            .flatten()
    };
    let hours = int(parts[0])?;
    let minutes = int(parts[1])?;
    if minutes > 59 {
        return None;
    }
    let mut us = hours
        .saturating_mul(USECS_PER_HOUR as i128)
        .saturating_add(minutes * USECS_PER_MINUTE as i128);
    if let Some(sec) = parts.get(2) {
        let (w, f) = split_number(sec)?;
        if sec.starts_with(['-', '+']) || w > 60 {
            return None;
        }
        us = us.saturating_add(w * USECS_PER_SEC as i128 + (f * 1e6).round() as i128);
    }
    Some(if neg { -us } else { us })
}

/// `[-]y-m`: years and months (SQL standard year-month literal).
fn parse_year_month(tok: &str) -> Option<i128> {
    let (neg, body) = match tok.as_bytes().first()? {
        b'-' => (true, &tok[1..]),
        b'+' => (false, &tok[1..]),
        _ => (false, tok),
    };
    let (y, m) = body.split_once('-')?;
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !digits(y) || !digits(m) {
        return None;
    }
    let (y, m): (i128, i128) = (y.parse().ok()?, m.parse().ok()?);
    if m > 11 {
        return None;
    }
    let months = y.saturating_mul(12).saturating_add(m);
    Some(if neg { -months } else { months })
}

/// Splits the input into words, separating a number from a unit written
/// against it (`10min`, `1day`).
fn tokenize(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    for word in s.split_whitespace() {
        let b = word.as_bytes();
        let starts_numeric = b[0].is_ascii_digit() || matches!(b[0], b'-' | b'+' | b'.');
        if !starts_numeric {
            out.push(word.to_string());
            continue;
        }
        let split = b
            .iter()
            .position(|c| c.is_ascii_alphabetic())
            .unwrap_or(b.len());
        if split > 0 {
            out.push(word[..split].to_string());
        }
        if split < b.len() {
            out.push(word[split..].to_string());
        }
    }
    out
}

/// PostgreSQL's interval_in for every input style: `1 day 02:03:04`,
/// `1 year 2 mons`, `@ 1 hour ago`, `-1 day +2 hours`, `1.5 days`, `1-2`,
/// `P1Y2M3DT4H5M6S` and `P0001-02-03T04:05:06`. Under IntervalStyle
/// sql_standard a leading minus applies to every field when no other field
/// has a sign (`-1 2:00:00` is minus one day and two hours).
pub fn parse_interval(input: &str, style: IntervalStyle) -> PgResult<Interval> {
    parse_interval_with(input, IntervalField::Second, style)
}

/// `parse_interval` with a bare trailing number meaning `bare` (the last field
/// of an `interval '...' hour` style literal).
pub fn parse_interval_with(
    input: &str,
    bare: IntervalField,
    style: IntervalStyle,
) -> PgResult<Interval> {
    let s = input.trim();
    if s.is_empty() {
        return Err(bad_syntax(input));
    }
    if s.starts_with(['P', 'p']) {
        return parse_iso8601(input, &s[1..]);
    }
    let mut tokens = tokenize(s);
    if tokens.first().is_some_and(|t| t == "@") {
        tokens.remove(0);
    }
    let mut negate = false;
    if tokens.last().is_some_and(|t| t.eq_ignore_ascii_case("ago")) {
        negate = true;
        tokens.pop();
    }
    if tokens.is_empty() {
        return Err(bad_syntax(input));
    }
    if style == IntervalStyle::SqlStandard
        && tokens[0].len() > 1
        && tokens[0].starts_with('-')
        && !tokens[1..].iter().any(|t| t.starts_with(['-', '+']))
    {
        // Every field negative: read them unsigned, then negate the whole.
        tokens[0].remove(0);
        negate = !negate;
    }
    let mut acc = Acc::default();
    let mut i = 0;
    let mut seen_time = false;
    let mut seen_any = false;
    while i < tokens.len() {
        let tok = tokens[i].as_str();
        i += 1;
        if tok.contains(':') {
            if seen_time {
                return Err(bad_syntax(input));
            }
            seen_time = true;
            let us = parse_time(tok).ok_or_else(|| bad_syntax(input))?;
            acc.micros = acc.micros.saturating_add(us);
            seen_any = true;
            continue;
        }
        if tok.as_bytes().iter().skip(1).any(|b| *b == b'-') && !tok.contains('.') {
            let months = parse_year_month(tok).ok_or_else(|| bad_syntax(input))?;
            acc.months = acc.months.saturating_add(months);
            seen_any = true;
            continue;
        }
        let Some((whole, frac)) = split_number(tok) else {
            return Err(bad_syntax(input));
        };
        match tokens.get(i).and_then(|t| unit_of(t)) {
            Some(unit) => {
                i += 1;
                acc.add(whole, frac, unit);
            }
            None => {
                // A bare number before a time is days (`1 02:00:00`); a
                // bare number at the end is the range's last field.
                let before_time = tokens.get(i).is_some_and(|t| t.contains(':'));
                if before_time {
                    acc.add(whole, frac, Unit::Days(1));
                } else if i == tokens.len() {
                    let unit = match bare {
                        IntervalField::Year => Unit::Months(12),
                        IntervalField::Month => Unit::Months(1),
                        IntervalField::Day => Unit::Days(1),
                        IntervalField::Hour => Unit::Time(USECS_PER_HOUR),
                        IntervalField::Minute => Unit::Time(USECS_PER_MINUTE),
                        IntervalField::Second => Unit::Time(USECS_PER_SEC),
                    };
                    acc.add(whole, frac, unit);
                } else {
                    return Err(bad_syntax(input));
                }
            }
        }
        seen_any = true;
    }
    if !seen_any {
        return Err(bad_syntax(input));
    }
    acc.finish(input, negate)
}

/// ISO 8601 durations after the `P`: designators (`1Y2M3DT4H5M6.5S`, `2W`)
/// or the alternative form (`0001-02-03T04:05:06`).
fn parse_iso8601(input: &str, body: &str) -> PgResult<Interval> {
    if body.is_empty() {
        return Err(bad_syntax(input));
    }
    let mut acc = Acc::default();
    let (date_part, time_part) = match body.find(['T', 't']) {
        Some(i) => (&body[..i], Some(&body[i + 1..])),
        None => (body, None),
    };
    if time_part.is_some_and(str::is_empty) {
        return Err(bad_syntax(input));
    }
    let alternative = date_part.contains('-')
        && date_part
            .bytes()
            .skip(1)
            .all(|b| b.is_ascii_digit() || b == b'-');
    if alternative {
        let parts: Vec<&str> = date_part.split('-').collect();
        let num = |s: &str| s.parse::<i128>().map_err(|_| bad_syntax(input));
        match parts.as_slice() {
            [y, m, d] => {
                acc.months = num(y)?.saturating_mul(12).saturating_add(num(m)?);
                acc.days = num(d)?;
            }
            [y, m] => acc.months = num(y)?.saturating_mul(12).saturating_add(num(m)?),
            _ => return Err(bad_syntax(input)),
        }
        if let Some(t) = time_part {
            acc.micros = parse_time(t).ok_or_else(|| bad_syntax(input))?;
        }
        return acc.finish(input, false);
    }
    let mut designated = |part: &str, time: bool| -> PgResult<()> {
        let mut rest = part;
        while !rest.is_empty() {
            let end = rest
                .find(|c: char| c.is_ascii_alphabetic())
                .ok_or_else(|| bad_syntax(input))?;
            let (whole, frac) = split_number(&rest[..end]).ok_or_else(|| bad_syntax(input))?;
            let unit = match (rest.as_bytes()[end].to_ascii_uppercase(), time) {
                (b'Y', false) => Unit::Months(12),
                (b'M', false) => Unit::Months(1),
                (b'W', false) => Unit::Days(7),
                (b'D', false) => Unit::Days(1),
                (b'H', true) => Unit::Time(USECS_PER_HOUR),
                (b'M', true) => Unit::Time(USECS_PER_MINUTE),
                (b'S', true) => Unit::Time(USECS_PER_SEC),
                _ => return Err(bad_syntax(input)),
            };
            acc.add(whole, frac, unit);
            rest = &rest[end + 1..];
        }
        Ok(())
    };
    designated(date_part, false)?;
    if let Some(t) = time_part {
        designated(t, true)?;
    }
    acc.finish(input, false)
}

/// Applies an `interval` range typmod's last field: the fields below it are
/// dropped (`interval '1 day 02:03:04' hour to minute` is `1 day 02:03:00`).
pub fn truncate_to_field(iv: Interval, last: IntervalField) -> Interval {
    let trunc = |us: i64, unit: i64| us - us % unit;
    match last {
        IntervalField::Year => Interval::new(iv.months - iv.months % 12, 0, 0),
        IntervalField::Month => Interval::new(iv.months, 0, 0),
        IntervalField::Day => Interval::new(iv.months, iv.days, 0),
        IntervalField::Hour => Interval::new(iv.months, iv.days, trunc(iv.micros, USECS_PER_HOUR)),
        IntervalField::Minute => {
            Interval::new(iv.months, iv.days, trunc(iv.micros, USECS_PER_MINUTE))
        }
        IntervalField::Second => iv,
    }
}

// ----- text output -----

/// Seconds and fraction as PostgreSQL prints them: `05`, `05.5`, `-0.000001`
/// (two integer digits when `pad`, trailing fraction zeros trimmed).
fn push_seconds(out: &mut String, us: i64, pad: bool) {
    let neg = us < 0;
    let abs = us.unsigned_abs();
    let (sec, frac) = (abs / 1_000_000, abs % 1_000_000);
    if neg {
        out.push('-');
    }
    if pad {
        let _ = write!(out, "{sec:02}");
    } else {
        let _ = write!(out, "{sec}");
    }
    if frac != 0 {
        let f = format!("{frac:06}");
        out.push('.');
        out.push_str(f.trim_end_matches('0'));
    }
}

/// The broken-down fields EncodeInterval prints: years and months from the
/// months (truncating, so they share its sign), hours, minutes and
/// microseconds of the minute from the time.
struct Parts {
    year: i64,
    mon: i64,
    day: i64,
    hour: i64,
    min: i64,
    /// Microseconds within the minute, signed like the time.
    sec_us: i64,
}

fn parts(iv: &Interval) -> Parts {
    let m = iv.months as i64;
    let t = iv.micros;
    Parts {
        year: m / 12,
        mon: m % 12,
        day: iv.days as i64,
        hour: t / USECS_PER_HOUR,
        min: (t / USECS_PER_MINUTE) % 60,
        sec_us: t % USECS_PER_MINUTE,
    }
}

/// Appends PostgreSQL's interval_out in `style`.
pub fn write_interval(iv: &Interval, style: IntervalStyle, out: &mut String) {
    let p = parts(iv);
    match style {
        IntervalStyle::Postgres => write_postgres(&p, out),
        IntervalStyle::PostgresVerbose => write_verbose(&p, out),
        IntervalStyle::SqlStandard => write_sql_standard(&p, out),
        IntervalStyle::Iso8601 => write_iso(&p, out),
    }
}

fn write_postgres(p: &Parts, out: &mut String) {
    let mut is_zero = true;
    let mut is_before = false;
    for (value, unit) in [(p.year, "year"), (p.mon, "mon"), (p.day, "day")] {
        if value == 0 {
            continue;
        }
        let _ = write!(
            out,
            "{}{}{} {}{}",
            if is_zero { "" } else { " " },
            if is_before && value > 0 { "+" } else { "" },
            value,
            unit,
            if value != 1 { "s" } else { "" }
        );
        is_before = value < 0;
        is_zero = false;
    }
    if is_zero || p.hour != 0 || p.min != 0 || p.sec_us != 0 {
        let minus = p.hour < 0 || p.min < 0 || p.sec_us < 0;
        let _ = write!(
            out,
            "{}{}{:02}:{:02}:",
            if is_zero { "" } else { " " },
            if minus {
                "-"
            } else if is_before {
                "+"
            } else {
                ""
            },
            p.hour.unsigned_abs(),
            p.min.unsigned_abs()
        );
        push_seconds(out, p.sec_us.abs(), true);
    }
}

fn write_verbose(p: &Parts, out: &mut String) {
    out.push('@');
    let mut is_zero = true;
    let mut is_before = false;
    let mut part = |out: &mut String, value: i64, unit: &str| {
        if value == 0 {
            return;
        }
        let shown = if is_zero {
            is_before = value < 0;
            value.abs()
        } else if is_before {
            -value
        } else {
            value
        };
        let _ = write!(out, " {shown} {unit}{}", if shown != 1 { "s" } else { "" });
        is_zero = false;
    };
    part(out, p.year, "year");
    part(out, p.mon, "mon");
    part(out, p.day, "day");
    part(out, p.hour, "hour");
    part(out, p.min, "min");
    if p.sec_us != 0 {
        let mut sec_us = p.sec_us;
        if is_zero {
            is_before = sec_us < 0;
            sec_us = sec_us.abs();
        } else if is_before {
            sec_us = -sec_us;
        }
        out.push(' ');
        push_seconds(out, sec_us, false);
        let _ = write!(
            out,
            " sec{}",
            if sec_us.abs() != USECS_PER_SEC {
                "s"
            } else {
                ""
            }
        );
        is_zero = false;
    }
    if is_zero {
        out.push_str(" 0");
    }
    if is_before {
        out.push_str(" ago");
    }
}

fn write_sql_standard(p: &Parts, out: &mut String) {
    let fields = [p.year, p.mon, p.day, p.hour, p.min, p.sec_us];
    let has_negative = fields.iter().any(|v| *v < 0);
    let has_positive = fields.iter().any(|v| *v > 0);
    let has_year_month = p.year != 0 || p.mon != 0;
    let has_day_time = p.day != 0 || p.hour != 0 || p.min != 0 || p.sec_us != 0;
    let standard = !((has_negative && has_positive) || (has_year_month && has_day_time));
    let sign = if has_negative && standard { -1 } else { 1 };
    let [year, mon, day, hour, min, sec_us] = fields.map(|v| v * sign);
    if sign < 0 {
        out.push('-');
    }
    if !has_negative && !has_positive {
        out.push('0');
    } else if !standard {
        let ym_sign = if year < 0 || mon < 0 { '-' } else { '+' };
        let day_sign = if day < 0 { '-' } else { '+' };
        let time_sign = if hour < 0 || min < 0 || sec_us < 0 {
            '-'
        } else {
            '+'
        };
        let _ = write!(
            out,
            "{ym_sign}{}-{} {day_sign}{} {time_sign}{}:{:02}:",
            year.unsigned_abs(),
            mon.unsigned_abs(),
            day.unsigned_abs(),
            hour.unsigned_abs(),
            min.unsigned_abs()
        );
        push_seconds(out, sec_us.abs(), true);
    } else if has_year_month {
        let _ = write!(out, "{year}-{mon}");
    } else if day != 0 {
        let _ = write!(out, "{day} {hour}:{min:02}:");
        push_seconds(out, sec_us, true);
    } else {
        let _ = write!(out, "{hour}:{min:02}:");
        push_seconds(out, sec_us, true);
    }
}

fn write_iso(p: &Parts, out: &mut String) {
    if [p.year, p.mon, p.day, p.hour, p.min, p.sec_us]
        .iter()
        .all(|v| *v == 0)
    {
        out.push_str("PT0S");
        return;
    }
    out.push('P');
    for (v, c) in [(p.year, 'Y'), (p.mon, 'M'), (p.day, 'D')] {
        if v != 0 {
            let _ = write!(out, "{v}{c}");
        }
    }
    if p.hour != 0 || p.min != 0 || p.sec_us != 0 {
        out.push('T');
        for (v, c) in [(p.hour, 'H'), (p.min, 'M')] {
            if v != 0 {
                let _ = write!(out, "{v}{c}");
            }
        }
        if p.sec_us != 0 {
            push_seconds(out, p.sec_us, false);
            out.push('S');
        }
    }
}

/// Text output in the default style.
pub fn interval_to_string(iv: &Interval, style: IntervalStyle) -> String {
    let mut s = String::new();
    write_interval(iv, style, &mut s);
    s
}

// ----- binary I/O -----

/// interval_send: microseconds (int8), days (int4), months (int4), big-endian.
pub fn write_binary(iv: &Interval, out: &mut Vec<u8>) {
    out.extend_from_slice(&iv.micros.to_be_bytes());
    out.extend_from_slice(&iv.days.to_be_bytes());
    out.extend_from_slice(&iv.months.to_be_bytes());
}

/// interval_recv.
pub fn read_binary(bytes: &[u8]) -> Option<Interval> {
    let b: &[u8; 16] = bytes.try_into().ok()?;
    Some(Interval {
        micros: i64::from_be_bytes(b[0..8].try_into().ok()?),
        days: i32::from_be_bytes(b[8..12].try_into().ok()?),
        months: i32::from_be_bytes(b[12..16].try_into().ok()?),
    })
}

// ----- date/time arithmetic -----

fn timestamp_out_of_range() -> PgError {
    PgError::new(SqlState::DATETIME_FIELD_OVERFLOW, "timestamp out of range")
}

fn is_infinite(ts: i64) -> bool {
    ts == datetime::TIMESTAMP_NOBEGIN || ts == datetime::TIMESTAMP_NOEND
}

/// Adds months then days to a wall-clock timestamp, clamping the day to the
/// end of a shorter month (Jan 31 + 1 month = Feb 28/29).
fn add_calendar(local: i64, months: i32, days: i32) -> PgResult<i64> {
    let mut t = local;
    if months != 0 {
        let mut f = datetime::timestamp_to_fields(t);
        let total = f.year * 12 + (f.month as i64 - 1) + months as i64;
        f.year = total.div_euclid(12);
        f.month = (total.rem_euclid(12) + 1) as u32;
        f.day = f.day.min(datetime::days_in_month(f.year, f.month));
        t = datetime::timestamp_from_fields(&f).ok_or_else(timestamp_out_of_range)?;
    }
    if days != 0 {
        t = t
            .checked_add(days as i64 * USECS_PER_DAY)
            .ok_or_else(timestamp_out_of_range)?;
    }
    Ok(t)
}

fn check_timestamp(t: i64) -> PgResult<i64> {
    if (datetime::MIN_TIMESTAMP..datetime::END_TIMESTAMP).contains(&t) {
        Ok(t)
    } else {
        Err(timestamp_out_of_range())
    }
}

/// timestamp + interval (timestamp_pl_interval).
pub fn timestamp_plus(ts: i64, iv: &Interval) -> PgResult<i64> {
    if is_infinite(ts) {
        return Ok(ts);
    }
    let t = add_calendar(ts, iv.months, iv.days)?;
    check_timestamp(
        t.checked_add(iv.micros)
            .ok_or_else(timestamp_out_of_range)?,
    )
}

/// timestamptz + interval: months and days move the wall clock of `zone`
/// (so `+ 1 day` keeps the local time across a DST change), the time part
/// moves the instant.
pub fn timestamptz_plus(ts: i64, iv: &Interval, zone: TimeZone) -> PgResult<i64> {
    if is_infinite(ts) {
        return Ok(ts);
    }
    let mut t = ts;
    if iv.months != 0 || iv.days != 0 {
        let local = datetime::tz_to_local(t, zone);
        let moved = add_calendar(local, iv.months, iv.days)?;
        t = datetime::local_to_tz(moved, zone);
    }
    check_timestamp(
        t.checked_add(iv.micros)
            .ok_or_else(timestamp_out_of_range)?,
    )
}

/// timestamp - timestamp (timestamp_mi): the difference as time, with whole
/// days split out by justify_hours.
pub fn timestamp_diff(a: i64, b: i64) -> PgResult<Interval> {
    if is_infinite(a) || is_infinite(b) {
        return Err(PgError::new(
            SqlState::DATETIME_FIELD_OVERFLOW,
            "cannot subtract infinite timestamps",
        ));
    }
    let us = a.checked_sub(b).ok_or_else(interval_out_of_range)?;
    Interval::new(0, 0, us).justify_hours()
}

/// age(a, b) on wall-clock timestamps: the difference in years, months,
/// days and time, each field borrowed from the next larger as PostgreSQL's
/// timestamp_age does (months borrow the days of the month of `b`).
pub fn age(a: i64, b: i64) -> PgResult<Interval> {
    if is_infinite(a) || is_infinite(b) {
        return Err(PgError::new(
            SqlState::DATETIME_FIELD_OVERFLOW,
            "cannot subtract infinite timestamps",
        ));
    }
    let f1 = datetime::timestamp_to_fields(a);
    let f2 = datetime::timestamp_to_fields(b);
    let time = |f: &datetime::DateTimeFields| {
        (f.hour as i64 * 3600 + f.minute as i64 * 60 + f.second as i64) * USECS_PER_SEC
            + f.usec as i64
    };
    let mut us = time(&f1) - time(&f2);
    let mut day = f1.day as i64 - f2.day as i64;
    let mut mon = f1.month as i64 - f2.month as i64;
    let mut year = f1.year - f2.year;
    // Borrow with the sign of the whole difference, as PostgreSQL flips the
    // operands when a is before b.
    let negative = a < b;
    let (sign, mut us2, mut day2, mut mon2, mut year2) = if negative {
        (-1, -us, -day, -mon, -year)
    } else {
        (1, us, day, mon, year)
    };
    while us2 < 0 {
        us2 += USECS_PER_DAY;
        day2 -= 1;
    }
    while day2 < 0 {
        // The length of the month of the earlier timestamp.
        let (y, m) = if negative {
            (f1.year, f1.month)
        } else {
            (f2.year, f2.month)
        };
        day2 += datetime::days_in_month(y, m) as i64;
        mon2 -= 1;
    }
    while mon2 < 0 {
        mon2 += 12;
        year2 -= 1;
    }
    us = us2 * sign;
    day = day2 * sign;
    mon = mon2 * sign;
    year = year2 * sign;
    let months = i32::try_from(year * 12 + mon).map_err(|_| interval_out_of_range())?;
    Ok(Interval::new(months, day as i32, us))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> Interval {
        parse_interval(s, IntervalStyle::Postgres).unwrap_or_else(|e| panic!("{s}: {e:?}"))
    }
    fn out(s: &str) -> String {
        interval_to_string(&p(s), IntervalStyle::Postgres)
    }

    #[test]
    fn input_styles() {
        assert_eq!(out("1 day 02:03:04"), "1 day 02:03:04");
        assert_eq!(out("1 year 2 mons"), "1 year 2 mons");
        assert_eq!(out("P1Y2M3DT4H5M6S"), "1 year 2 mons 3 days 04:05:06");
        assert_eq!(out("@ 1 hour ago"), "-01:00:00");
        assert_eq!(out("-1 day +2 hours"), "-1 days +02:00:00");
        assert_eq!(out("1.5 days"), "1 day 12:00:00");
        assert_eq!(out("1.5 months"), "1 mon 15 days");
        assert_eq!(out("1.5 years"), "1 year 6 mons");
        assert_eq!(out("1-2"), "1 year 2 mons");
        assert_eq!(out("10min"), "00:10:00");
        assert_eq!(out("0"), "00:00:00");
        assert_eq!(out("-00:00:01.5"), "-00:00:01.5");
        assert_eq!(out("P0001-02-03T04:05:06"), "1 year 2 mons 3 days 04:05:06");
        let parse = |s| parse_interval(s, IntervalStyle::Postgres);
        assert!(parse("foo").is_err());
        assert!(parse("").is_err());
        assert!(parse("1 fortnight").is_err());
        // sql_standard: a leading minus covers the fields without signs.
        let sql = |s| parse_interval(s, IntervalStyle::SqlStandard).unwrap();
        assert_eq!(sql("-1 2:03:04"), Interval::new(0, -1, -7_384_000_000));
        assert_eq!(sql("-1 year 2 mons"), Interval::new(-14, 0, 0));
        assert_eq!(sql("-1 day +2 hours"), parse("-1 day +2 hours").unwrap());
        assert_eq!(
            sql("-1 day 2 hours ago"),
            Interval::new(0, 1, 7_200_000_000)
        );
    }

    #[test]
    fn output_styles() {
        let iv = p("1 year 2 mons 3 days 04:05:06.5");
        let s = |st| interval_to_string(&iv, st);
        assert_eq!(s(IntervalStyle::Iso8601), "P1Y2M3DT4H5M6.5S");
        assert_eq!(s(IntervalStyle::SqlStandard), "+1-2 +3 +4:05:06.5");
        assert_eq!(
            s(IntervalStyle::PostgresVerbose),
            "@ 1 year 2 mons 3 days 4 hours 5 mins 6.5 secs"
        );
        let neg = p("-1 day");
        assert_eq!(
            interval_to_string(&neg, IntervalStyle::SqlStandard),
            "-1 0:00:00"
        );
        assert_eq!(
            interval_to_string(&neg, IntervalStyle::PostgresVerbose),
            "@ 1 day ago"
        );
    }

    #[test]
    fn comparison_and_arithmetic() {
        assert_eq!(p("1 mon").cmp_span(&p("30 days")), Ordering::Equal);
        assert_eq!(p("1 day").cmp_span(&p("24 hours")), Ordering::Equal);
        assert_eq!(
            interval_to_string(&p("1 mon").mul_f64(1.5).unwrap(), IntervalStyle::Postgres),
            "1 mon 15 days"
        );
        assert_eq!(
            interval_to_string(&p("1 day").div_f64(3.0).unwrap(), IntervalStyle::Postgres),
            "08:00:00"
        );
        assert_eq!(
            interval_to_string(
                &p("1 mon -1 hour").justify_interval().unwrap(),
                IntervalStyle::Postgres
            ),
            "29 days 23:00:00"
        );
        let jan31 = datetime::parse_timestamp("2024-01-31", datetime::DateOrder::Mdy).unwrap();
        let feb = timestamp_plus(jan31, &p("1 mon")).unwrap();
        assert_eq!(
            feb,
            datetime::parse_timestamp("2024-02-29", datetime::DateOrder::Mdy).unwrap()
        );
    }
}
