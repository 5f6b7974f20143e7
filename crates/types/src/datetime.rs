//! `date`, `timestamp` and `timestamptz`: calendar arithmetic and text
//! input (in the session's DateStyle field order); output is datestyle.rs.
//!
//! Dates are days since 2000-01-01; timestamps microseconds since
//! 2000-01-01 00:00:00 (timestamptz in UTC). ±infinity are the extreme values.

use common::{PgError, PgResult, SqlState};

pub use super::timezone::TimeZone;
pub use crate::datestyle::{DateOrder, DateStyle};

pub const DATE_NOBEGIN: i32 = i32::MIN;
pub const DATE_NOEND: i32 = i32::MAX;
pub const TIMESTAMP_NOBEGIN: i64 = i64::MIN;
pub const TIMESTAMP_NOEND: i64 = i64::MAX;
pub const USECS_PER_SEC: i64 = 1_000_000;
pub const USECS_PER_DAY: i64 = 86_400 * USECS_PER_SEC;
/// Julian day number of 2000-01-01.
pub const POSTGRES_EPOCH_JDATE: i64 = 2_451_545;
/// Days from 1970-01-01 to 2000-01-01.
pub const UNIX_EPOCH_OFFSET_DAYS: i64 = 10_957;
/// First valid date: 4714-11-24 BC (Julian day 0).
pub const MIN_DATE: i32 = -2_451_545;
/// First date past the end of the date range (5874898-01-01).
pub const END_DATE: i32 = 2_147_483_494 - 2_451_545;
/// First valid timestamp: 4714-11-24 00:00:00 BC.
pub const MIN_TIMESTAMP: i64 = -211_813_488_000_000_000;
/// First timestamp past the range (294277-01-01 00:00:00).
pub const END_TIMESTAMP: i64 = 9_223_371_331_200_000_000;

/// Days since 1970-01-01 of a proleptic Gregorian date (year 0 = 1 BC).
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m as i64 + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// Days since 2000-01-01 of year/month/day (astronomical year: 0 = 1 BC).
pub fn date_from_ymd(year: i64, month: u32, day: u32) -> i64 {
    days_from_civil(year, month, day) - UNIX_EPOCH_OFFSET_DAYS
}

/// (year, month, day) of days since 2000-01-01 (astronomical year).
pub fn ymd_from_date(days: i64) -> (i64, u32, u32) {
    civil_from_days(days + UNIX_EPOCH_OFFSET_DAYS)
}

pub fn is_leap(y: i64) -> bool {
    (y % 4 == 0 && y % 100 != 0) || y % 400 == 0
}

pub fn days_in_month(y: i64, m: u32) -> u32 {
    match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        _ => {
            if is_leap(y) {
                29
            } else {
                28
            }
        }
    }
}

/// Broken-down timestamp fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DateTimeFields {
    /// Astronomical year (0 = 1 BC).
    pub year: i64,
    pub month: u32,
    pub day: u32,
    pub hour: u32,
    pub minute: u32,
    pub second: u32,
    pub usec: u32,
}

/// Splits a finite timestamp into fields.
pub fn timestamp_to_fields(us: i64) -> DateTimeFields {
    let days = us.div_euclid(USECS_PER_DAY);
    let t = us.rem_euclid(USECS_PER_DAY);
    let (year, month, day) = ymd_from_date(days);
    let secs = t / USECS_PER_SEC;
    DateTimeFields {
        year,
        month,
        day,
        hour: (secs / 3600) as u32,
        minute: (secs / 60 % 60) as u32,
        second: (secs % 60) as u32,
        usec: (t % USECS_PER_SEC) as u32,
    }
}

/// Builds a timestamp from fields; None if outside the timestamp range.
pub fn timestamp_from_fields(f: &DateTimeFields) -> Option<i64> {
    let days = date_from_ymd(f.year, f.month, f.day) as i128;
    let t = days * USECS_PER_DAY as i128
        + ((f.hour as i64 * 3600 + f.minute as i64 * 60 + f.second as i64) * USECS_PER_SEC
            + f.usec as i64) as i128;
    (t >= MIN_TIMESTAMP as i128 && t < END_TIMESTAMP as i128).then_some(t as i64)
}

/// A date as a timestamp at midnight (infinities map to infinities);
/// 22008 "date out of range for timestamp" if it does not fit.
pub fn date_to_timestamp(d: i32) -> PgResult<i64> {
    match d {
        DATE_NOBEGIN => Ok(TIMESTAMP_NOBEGIN),
        DATE_NOEND => Ok(TIMESTAMP_NOEND),
        _ => {
            let t = (d as i64).saturating_mul(USECS_PER_DAY);
            if !(MIN_TIMESTAMP..END_TIMESTAMP).contains(&t) {
                return Err(PgError::new(
                    SqlState::DATETIME_FIELD_OVERFLOW,
                    "date out of range for timestamp",
                ));
            }
            Ok(t)
        }
    }
}

/// The date part of a timestamp (infinities map to infinities).
pub fn timestamp_to_date(t: i64) -> PgResult<i32> {
    match t {
        TIMESTAMP_NOBEGIN => Ok(DATE_NOBEGIN),
        TIMESTAMP_NOEND => Ok(DATE_NOEND),
        _ => Ok(t.div_euclid(USECS_PER_DAY) as i32),
    }
}

/// Current time as microseconds since 2000-01-01 UTC.
pub fn now_timestamp() -> i64 {
    let d = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    d.as_micros() as i64 - UNIX_EPOCH_OFFSET_DAYS * USECS_PER_DAY
}

/// Current date (UTC).
pub fn today() -> i32 {
    now_timestamp().div_euclid(USECS_PER_DAY) as i32
}

// ----- output (in each DateStyle: see datestyle.rs) -----

pub use crate::datestyle::{write_date, write_timestamp, write_timestamptz};

/// Local wall-clock microseconds of a timestamptz in zone `tz`.
pub fn tz_to_local(us: i64, tz: TimeZone) -> i64 {
    if us == TIMESTAMP_NOBEGIN || us == TIMESTAMP_NOEND {
        return us;
    }
    us + tz.offset_at_utc(us) as i64 * USECS_PER_SEC
}

/// The timestamptz of a local wall-clock time in zone `tz`.
pub fn local_to_tz(us: i64, tz: TimeZone) -> i64 {
    if us == TIMESTAMP_NOBEGIN || us == TIMESTAMP_NOEND {
        return us;
    }
    us - tz.offset_for_local(us) as i64 * USECS_PER_SEC
}

/// Rounds a timestamp to `typmod` fractional digits (timestamp(p)). Rounding
/// up past the last representable instant is 22008 "timestamp out of range",
/// as PostgreSQL's AdjustTimestampForTypmod: the value could not be printed.
pub fn adjust_timestamp_typmod(us: i64, typmod: i32) -> PgResult<i64> {
    if !(0..6).contains(&typmod) || us == TIMESTAMP_NOBEGIN || us == TIMESTAMP_NOEND {
        return Ok(us);
    }
    let scale = 10i64.pow(6 - typmod as u32);
    let offset = scale / 2;
    let rounded = if us >= 0 {
        (us + offset) / scale * scale
    } else {
        -((-us + offset) / scale * scale)
    };
    if (MIN_TIMESTAMP..END_TIMESTAMP).contains(&rounded) {
        Ok(rounded)
    } else {
        Err(PgError::new(
            SqlState::DATETIME_FIELD_OVERFLOW,
            "timestamp out of range",
        ))
    }
}

// ----- input -----

/// What the parser is reading, for error messages and range checks.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Target {
    Date,
    Timestamp,
    Timestamptz,
}

impl Target {
    fn type_name(self) -> &'static str {
        match self {
            Target::Date => "date",
            Target::Timestamp => "timestamp",
            Target::Timestamptz => "timestamp with time zone",
        }
    }
}

#[derive(Debug)]
enum Tok<'a> {
    Num(&'a str),
    Date(&'a str),
    Time(&'a str),
    Word(String),
    Tz(&'a str),
}

fn tokenize(s: &str) -> Option<Vec<Tok<'_>>> {
    let b = s.as_bytes();
    let mut toks = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() || c == b',' {
            i += 1;
        } else if c.is_ascii_digit() {
            let start = i;
            while i < b.len() && b[i].is_ascii_digit() {
                i += 1;
            }
            if i < b.len() && b[i] == b':' {
                while i < b.len() && (b[i].is_ascii_digit() || b[i] == b':' || b[i] == b'.') {
                    i += 1;
                }
                toks.push(Tok::Time(&s[start..i]));
            } else if i < b.len() && matches!(b[i], b'-' | b'/' | b'.') {
                while i < b.len()
                    && (b[i].is_ascii_alphanumeric() || matches!(b[i], b'-' | b'/' | b'.'))
                {
                    // ISO 8601 "T" separating date and time.
                    if (b[i] == b'T' || b[i] == b't')
                        && b[i - 1].is_ascii_digit()
                        && b.get(i + 1).is_some_and(|n| n.is_ascii_digit())
                    {
                        break;
                    }
                    i += 1;
                }
                let tok = &s[start..i];
                if tok
                    .bytes()
                    .filter(|c| !c.is_ascii_digit())
                    .all(|c| c == b'.')
                    && tok.matches('.').count() == 1
                {
                    toks.push(Tok::Num(tok));
                } else {
                    toks.push(Tok::Date(tok));
                }
            } else {
                toks.push(Tok::Num(&s[start..i]));
            }
        } else if c.is_ascii_alphabetic() {
            let start = i;
            while i < b.len() && b[i].is_ascii_alphabetic() {
                i += 1;
            }
            if i + 1 < b.len() && matches!(b[i], b'-' | b'/' | b'.') && b[i + 1].is_ascii_digit() {
                while i < b.len()
                    && (b[i].is_ascii_alphanumeric() || matches!(b[i], b'-' | b'/' | b'.'))
                {
                    i += 1;
                }
                toks.push(Tok::Date(&s[start..i]));
            } else if (i - start == 1) && (b[start] == b'T' || b[start] == b't') {
                // "T" separator: skip.
            } else {
                toks.push(Tok::Word(s[start..i].to_ascii_lowercase()));
            }
        } else if c == b'+' || c == b'-' {
            let start = i;
            i += 1;
            if i < b.len() && b[i].is_ascii_alphabetic() {
                while i < b.len() && b[i].is_ascii_alphabetic() {
                    i += 1;
                }
                toks.push(Tok::Word(s[start..i].to_ascii_lowercase()));
            } else {
                while i < b.len() && (b[i].is_ascii_digit() || b[i] == b':') {
                    i += 1;
                }
                toks.push(Tok::Tz(&s[start..i]));
            }
        } else {
            return None;
        }
    }
    Some(toks)
}

fn month_from_name(w: &str) -> Option<u32> {
    const NAMES: [&str; 12] = [
        "january",
        "february",
        "march",
        "april",
        "may",
        "june",
        "july",
        "august",
        "september",
        "october",
        "november",
        "december",
    ];
    if w == "sept" {
        return Some(9);
    }
    if w.len() < 3 {
        return None;
    }
    NAMES
        .iter()
        .position(|n| *n == w || (w.len() == 3 && n.starts_with(w)))
        .map(|p| p as u32 + 1)
}

fn is_day_name(w: &str) -> bool {
    const DAYS: [&str; 7] = [
        "sunday",
        "monday",
        "tuesday",
        "wednesday",
        "thursday",
        "friday",
        "saturday",
    ];
    DAYS.iter()
        .any(|d| *d == w || (w.len() >= 3 && d.starts_with(w)))
}

/// A zone abbreviation in the input ("PST", "CEST"), from the same set
/// that AT TIME ZONE knows.
fn tz_abbrev(w: &str) -> Option<i32> {
    super::timezone::abbreviation_offset(w)
}

#[derive(Default)]
struct Fields {
    year: Option<i64>,
    year_digits: usize,
    month: Option<u32>,
    day: Option<u32>,
    time: Option<(u32, u32, u32, i64)>,
    tz: Option<i32>,
    bc: bool,
    pm: Option<bool>,
    /// The month was named ("Jan"), which settles how numbers around it read.
    text_month: bool,
    /// DateStyle's field order, for numbers that could be any field.
    order: DateOrder,
}

enum DtErr {
    Format,
    Field,
    /// A month or day out of range: perhaps read in the wrong field order.
    MdField,
    Tz,
}

fn parse_u(s: &str) -> Result<i64, DtErr> {
    if s.is_empty() || s.len() > 10 || !s.bytes().all(|b| b.is_ascii_digit()) {
        return Err(DtErr::Format);
    }
    s.parse().map_err(|_| DtErr::Format)
}

fn set_year(f: &mut Fields, s: &str) -> Result<(), DtErr> {
    if f.year.is_some() {
        return Err(DtErr::Format);
    }
    f.year = Some(parse_u(s)?);
    f.year_digits = s.len();
    Ok(())
}

fn set_month(f: &mut Fields, m: i64) -> Result<(), DtErr> {
    if f.month.is_some() {
        return Err(DtErr::Format);
    }
    f.month = Some(m.clamp(0, 1000) as u32);
    Ok(())
}

fn set_day(f: &mut Fields, d: i64) -> Result<(), DtErr> {
    if f.day.is_some() {
        return Err(DtErr::Format);
    }
    f.day = Some(d.clamp(0, 1000) as u32);
    Ok(())
}

/// A date written as one token (`2003-01-02`, `01/02/03`, `02-Jan-2003`):
/// a month name first, then the numbers in order, as PostgreSQL's DecodeDate.
fn decode_date_token(f: &mut Fields, tok: &str) -> Result<(), DtErr> {
    let parts: Vec<&str> = tok.split(['-', '/', '.']).collect();
    if parts.len() != 3 || parts.iter().any(|p| p.is_empty()) {
        return Err(DtErr::Format);
    }
    let month_pos = parts
        .iter()
        .position(|p| p.bytes().all(|b| b.is_ascii_alphabetic()));
    // A month name inside this token settles only this token's numbers.
    let outer_text_month = f.text_month;
    if let Some(mp) = month_pos {
        let m = month_from_name(&parts[mp].to_ascii_lowercase()).ok_or(DtErr::Format)?;
        set_month(f, m as i64)?;
        f.text_month = true;
    }
    for (i, part) in parts.iter().enumerate() {
        if Some(i) != month_pos {
            decode_date_number(f, part)?;
        }
    }
    f.text_month = outer_text_month;
    Ok(())
}

/// One number of a date, placed as PostgreSQL's DecodeNumber places it: by
/// the fields already read, its width (three or more digits is a year), a
/// month name nearby, and DateStyle's order where nothing else decides.
fn decode_date_number(f: &mut Fields, tok: &str) -> Result<(), DtErr> {
    let val = parse_u(tok)?;
    let wide = tok.len() >= 3;
    match (f.year.is_some(), f.month.is_some(), f.day.is_some()) {
        (false, false, false) => match f.order {
            _ if wide => set_year(f, tok),
            DateOrder::Ymd => set_year(f, tok),
            DateOrder::Dmy => set_day(f, val),
            DateOrder::Mdy => set_month(f, val),
        },
        (true, false, false) | (false, false, true) => set_month(f, val),
        (false, true, false) if f.text_month && (wide || f.order == DateOrder::Ymd) => {
            set_year(f, tok)
        }
        (false, true, false) => set_day(f, val),
        (true, true, false) if f.text_month && wide && f.year_digits <= 2 => {
            // DD-MON-YYYY even under YMD: the short first number was the day.
            let day = f.year.take().unwrap_or(0);
            set_day(f, day)?;
            set_year(f, tok)
        }
        (true, true, false) => set_day(f, val),
        (false, true, true) => set_year(f, tok),
        _ => Err(DtErr::Format),
    }
}

fn decode_time(f: &mut Fields, tok: &str) -> Result<(), DtErr> {
    if f.time.is_some() {
        return Err(DtErr::Format);
    }
    let mut parts = tok.split(':');
    let h = parse_u(parts.next().unwrap_or(""))?;
    let m = parse_u(parts.next().ok_or(DtErr::Format)?)?;
    let (s, us) = match parts.next() {
        None => (0, 0),
        Some(sec) => {
            let (whole, frac) = match sec.split_once('.') {
                Some((w, fr)) => (w, fr),
                None => (sec, ""),
            };
            let s = parse_u(whole)?;
            let mut us = 0i64;
            if !frac.is_empty() {
                if !frac.bytes().all(|b| b.is_ascii_digit()) {
                    return Err(DtErr::Format);
                }
                let v: f64 = format!("0.{frac}").parse().map_err(|_| DtErr::Format)?;
                us = (v * 1e6).round_ties_even() as i64;
            }
            (s, us)
        }
    };
    if parts.next().is_some() {
        return Err(DtErr::Format);
    }
    if m > 59 || s > 60 || h > 24 || (h == 24 && (m != 0 || s != 0 || us != 0)) {
        return Err(DtErr::Field);
    }
    f.time = Some((h as u32, m as u32, s as u32, us));
    Ok(())
}

fn decode_tz(tok: &str) -> Result<i32, DtErr> {
    let neg = tok.starts_with('-');
    let body = &tok[1..];
    let (h, m, s) = if body.contains(':') {
        let mut p = body.split(':');
        let h = parse_u(p.next().unwrap_or(""))?;
        let m = parse_u(p.next().unwrap_or(""))?;
        let s = match p.next() {
            Some(x) => parse_u(x)?,
            None => 0,
        };
        if p.next().is_some() {
            return Err(DtErr::Format);
        }
        (h, m, s)
    } else {
        match body.len() {
            1 | 2 => (parse_u(body)?, 0, 0),
            3 | 4 => {
                let v = parse_u(body)?;
                (v / 100, v % 100, 0)
            }
            5 | 6 => {
                let v = parse_u(body)?;
                (v / 10000, v / 100 % 100, v % 100)
            }
            _ => return Err(DtErr::Format),
        }
    };
    if h > 15 {
        return Err(DtErr::Tz);
    }
    if m > 59 || s > 59 {
        return Err(DtErr::Field);
    }
    let secs = (h * 3600 + m * 60 + s) as i32;
    Ok(if neg { -secs } else { secs })
}

fn decode_number(f: &mut Fields, tok: &str) -> Result<(), DtErr> {
    if tok.contains('.') {
        return Err(DtErr::Format);
    }
    let have_date = f.year.is_some() && f.month.is_some() && f.day.is_some();
    if !have_date && f.year.is_none() && f.month.is_none() && f.day.is_none() {
        if tok.len() == 8 {
            set_year(f, &tok[..4])?;
            set_month(f, parse_u(&tok[4..6])?)?;
            return set_day(f, parse_u(&tok[6..])?);
        }
        if tok.len() == 6 {
            set_year(f, &tok[..2])?;
            set_month(f, parse_u(&tok[2..4])?)?;
            return set_day(f, parse_u(&tok[4..])?);
        }
    }
    if have_date && f.time.is_none() && (tok.len() == 6 || tok.len() == 4) {
        let v = parse_u(tok)?;
        let t = if tok.len() == 6 {
            format!("{}:{}:{}", v / 10000, v / 100 % 100, v % 100)
        } else {
            format!("{}:{}", v / 100, v % 100)
        };
        return decode_time(f, &t);
    }
    if have_date {
        return Err(DtErr::Format);
    }
    decode_date_number(f, tok)
}

fn decode(
    s: &str,
    target: Target,
    zone: TimeZone,
    order: DateOrder,
) -> Result<Result<i64, Special>, DtErr> {
    let toks = tokenize(s).ok_or(DtErr::Format)?;
    if toks.len() == 1 {
        if let Tok::Word(w) = &toks[0] {
            let sp = match w.as_str() {
                "infinity" | "+infinity" => Some(Special::PosInf),
                "-infinity" => Some(Special::NegInf),
                "epoch" => Some(Special::Epoch),
                "now" => Some(Special::Now),
                "today" => Some(Special::Today(0)),
                "tomorrow" => Some(Special::Today(1)),
                "yesterday" => Some(Special::Today(-1)),
                _ => None,
            };
            if let Some(sp) = sp {
                return Ok(Err(sp));
            }
        }
    }
    let mut f = Fields {
        order,
        ..Fields::default()
    };
    for tok in &toks {
        match tok {
            Tok::Date(d) => decode_date_token(&mut f, d)?,
            Tok::Time(t) => decode_time(&mut f, t)?,
            Tok::Num(n) => decode_number(&mut f, n)?,
            Tok::Tz(z) => {
                if f.tz.is_some() || f.time.is_none() && f.year.is_none() {
                    return Err(DtErr::Format);
                }
                f.tz = Some(decode_tz(z)?);
            }
            Tok::Word(w) => {
                if let Some(m) = month_from_name(w) {
                    // "2 January": the number read as a month was the day.
                    if let (Some(numeric @ 1..=31), None, false) = (f.month, f.day, f.text_month) {
                        f.month = None;
                        f.day = Some(numeric);
                    }
                    set_month(&mut f, m as i64)?;
                    f.text_month = true;
                } else if w == "bc" {
                    f.bc = true;
                } else if w == "ad" || is_day_name(w) {
                } else if w == "am" || w == "pm" {
                    f.pm = Some(w == "pm");
                } else if w == "allballs" {
                    decode_time(&mut f, "00:00:00")?;
                } else if let Some(z) = tz_abbrev(w) {
                    if f.tz.is_some() {
                        return Err(DtErr::Format);
                    }
                    f.tz = Some(z);
                } else {
                    return Err(DtErr::Format);
                }
            }
        }
    }
    let (Some(mut year), Some(month), Some(day)) = (f.year, f.month, f.day) else {
        return Err(DtErr::Format);
    };
    if f.year_digits <= 2 && !f.bc {
        year += if year < 70 { 2000 } else { 1900 };
    }
    if year == 0 {
        return Err(DtErr::Field);
    }
    if f.bc {
        year = 1 - year;
    }
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) {
        return Err(DtErr::MdField);
    }
    if day > days_in_month(year, month) {
        return Err(DtErr::Field);
    }
    let (mut h, mi, sec, us) = f.time.unwrap_or((0, 0, 0, 0));
    if let Some(pm) = f.pm {
        if h > 12 || f.time.is_none() {
            return Err(DtErr::Field);
        }
        if pm && h < 12 {
            h += 12;
        } else if !pm && h == 12 {
            h = 0;
        }
    }
    // Julian-day range check (4714-11-24 BC .. 5874897-12-31).
    let valid_julian = (year > -4713
        || (year == -4713 && (month > 11 || (month == 11 && day >= 24))))
        && year < 5_874_898;
    if !valid_julian {
        return Ok(Err(Special::OutOfRange));
    }
    let days = date_from_ymd(year, month, day);
    if target == Target::Date {
        return Ok(Ok(days));
    }
    let local = days as i128 * USECS_PER_DAY as i128
        + ((h as i64 * 3600 + mi as i64 * 60 + sec as i64) * USECS_PER_SEC + us) as i128;
    let t = local
        - if target == Target::Timestamptz {
            let offset = f.tz.unwrap_or_else(|| {
                let clamped = local.clamp(i64::MIN as i128 / 2, i64::MAX as i128 / 2) as i64;
                zone.offset_for_local(clamped)
            });
            offset as i128 * USECS_PER_SEC as i128
        } else {
            0
        };
    if t < MIN_TIMESTAMP as i128 || t >= END_TIMESTAMP as i128 {
        return Ok(Err(Special::OutOfRange));
    }
    Ok(Ok(t as i64))
}

enum Special {
    PosInf,
    NegInf,
    Epoch,
    Now,
    Today(i32),
    OutOfRange,
}

fn parse_any(input: &str, target: Target, zone: TimeZone, order: DateOrder) -> PgResult<i64> {
    let s = crate::float::trim_pg(input);
    let tname = target.type_name();
    let r = decode(s, target, zone, order).map_err(|e| match e {
        DtErr::Format => PgError::new(
            SqlState::INVALID_DATETIME_FORMAT,
            format!("invalid input syntax for type {tname}: \"{input}\""),
        ),
        DtErr::Field => PgError::new(
            SqlState::DATETIME_FIELD_OVERFLOW,
            format!("date/time field value out of range: \"{input}\""),
        ),
        DtErr::MdField => PgError::new(
            SqlState::DATETIME_FIELD_OVERFLOW,
            format!("date/time field value out of range: \"{input}\""),
        )
        .with_hint("Perhaps you need a different \"datestyle\" setting."),
        DtErr::Tz => PgError::new(
            SqlState("22009"),
            format!("time zone displacement out of range: \"{input}\""),
        ),
    })?;
    let out_of_range = || {
        let what = if target == Target::Date {
            "date"
        } else {
            "timestamp"
        };
        PgError::new(
            SqlState::DATETIME_FIELD_OVERFLOW,
            format!("{what} out of range: \"{input}\""),
        )
    };
    let date = target == Target::Date;
    match r {
        Ok(v) => {
            if date && (v < MIN_DATE as i64 || v >= END_DATE as i64) {
                return Err(out_of_range());
            }
            Ok(v)
        }
        Err(Special::OutOfRange) => Err(out_of_range()),
        Err(Special::PosInf) => Ok(if date {
            DATE_NOEND as i64
        } else {
            TIMESTAMP_NOEND
        }),
        Err(Special::NegInf) => Ok(if date {
            DATE_NOBEGIN as i64
        } else {
            TIMESTAMP_NOBEGIN
        }),
        Err(Special::Epoch) => Ok(if date {
            -UNIX_EPOCH_OFFSET_DAYS
        } else {
            -UNIX_EPOCH_OFFSET_DAYS * USECS_PER_DAY
        }),
        Err(Special::Now) => {
            let now = now_timestamp();
            Ok(if date {
                now.div_euclid(USECS_PER_DAY)
            } else {
                now
            })
        }
        Err(Special::Today(delta)) => {
            let d = today() as i64 + delta as i64;
            Ok(if date { d } else { d * USECS_PER_DAY })
        }
    }
}

/// Parses `date` input (ISO, numeric in DateStyle's `order`, and textual
/// month forms; time and zone ignored).
pub fn parse_date(input: &str, order: DateOrder) -> PgResult<i32> {
    parse_any(input, Target::Date, TimeZone::Fixed(0), order).map(|v| v as i32)
}

/// Parses `timestamp` input (a zone, if given, is ignored as PostgreSQL does).
pub fn parse_timestamp(input: &str, order: DateOrder) -> PgResult<i64> {
    parse_any(input, Target::Timestamp, TimeZone::Fixed(0), order)
}

/// Parses `timestamptz` input; without a zone in the text, `zone` (the
/// session's TimeZone) applies.
pub fn parse_timestamptz(input: &str, zone: TimeZone, order: DateOrder) -> PgResult<i64> {
    parse_any(input, Target::Timestamptz, zone, order)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(s: &str) -> String {
        match parse_date(s, DateOrder::Mdy) {
            Ok(v) => {
                let mut o = String::new();
                write_date(v, DateStyle::ISO_MDY, &mut o);
                o
            }
            Err(e) => format!("ERROR {}: {}", e.code.0, e.message),
        }
    }
    fn ts(s: &str) -> String {
        match parse_timestamp(s, DateOrder::Mdy) {
            Ok(v) => {
                let mut o = String::new();
                write_timestamp(v, DateStyle::ISO_MDY, &mut o);
                o
            }
            Err(e) => format!("ERROR {}: {}", e.code.0, e.message),
        }
    }
    fn tstz(s: &str) -> String {
        match parse_timestamptz(s, TimeZone::Fixed(0), DateOrder::Mdy) {
            Ok(v) => {
                let mut o = String::new();
                write_timestamptz(v, TimeZone::Fixed(0), DateStyle::ISO_MDY, &mut o);
                o
            }
            Err(e) => format!("ERROR {}: {}", e.code.0, e.message),
        }
    }

    #[test]
    fn calendar() {
        assert_eq!(date_from_ymd(2000, 1, 1), 0);
        assert_eq!(date_from_ymd(1970, 1, 1), -10957);
        assert_eq!(ymd_from_date(-1), (1999, 12, 31));
        assert_eq!(date_from_ymd(-4713, 11, 24), MIN_DATE as i64);
        assert_eq!(date_from_ymd(5_874_898, 1, 1), END_DATE as i64);
        assert_eq!(date_from_ymd(294_277, 1, 1) * USECS_PER_DAY, END_TIMESTAMP);
        for days in [-2_451_545i64, -1000, 0, 59, 60, 366, 1_000_000] {
            let (y, m, dd) = ymd_from_date(days);
            assert_eq!(date_from_ymd(y, m, dd), days);
        }
    }

    #[test]
    fn dates() {
        assert_eq!(d("2024-01-02"), "2024-01-02");
        assert_eq!(d(" 2024-1-2 "), "2024-01-02");
        assert_eq!(d("2024-01-02 03:04:05"), "2024-01-02");
        assert_eq!(d("2024-01-02 03:04:05+02"), "2024-01-02");
        assert_eq!(d("1/2/2024"), "2024-01-02");
        assert_eq!(d("1/2/24"), "2024-01-02");
        assert_eq!(d("1/2/70"), "1970-01-02");
        assert_eq!(d("20240102"), "2024-01-02");
        assert_eq!(d("Jan 2 2024"), "2024-01-02");
        assert_eq!(d("2 January 2024"), "2024-01-02");
        assert_eq!(d("Tuesday, January 2, 2024"), "2024-01-02");
        assert_eq!(d("Jan-02-2024"), "2024-01-02");
        assert_eq!(d("02-Jan-2024"), "2024-01-02");
        assert_eq!(d("2024-Jan-02"), "2024-01-02");
        assert_eq!(d("2024.01.02"), "2024-01-02");
        assert_eq!(d("0001-01-01 BC"), "0001-01-01 BC");
        assert_eq!(d("99999-01-01"), "99999-01-01");
        assert_eq!(d("infinity"), "infinity");
        assert_eq!(d("-infinity"), "-infinity");
        assert_eq!(d("epoch"), "1970-01-01");
        assert_eq!(d("5874897-12-31"), "5874897-12-31");
        assert_eq!(d("4714-11-24 BC"), "4714-11-24 BC");
        assert_eq!(d("2024-02-29"), "2024-02-29");
        assert_eq!(
            d("2024-02-30"),
            "ERROR 22008: date/time field value out of range: \"2024-02-30\""
        );
        assert_eq!(
            d("2023-02-29"),
            "ERROR 22008: date/time field value out of range: \"2023-02-29\""
        );
        assert_eq!(
            d("2024-13-01"),
            "ERROR 22008: date/time field value out of range: \"2024-13-01\""
        );
        assert_eq!(
            d("0000-01-01"),
            "ERROR 22008: date/time field value out of range: \"0000-01-01\""
        );
        assert_eq!(
            d("-0001-01-01"),
            "ERROR 22007: invalid input syntax for type date: \"-0001-01-01\""
        );
        assert_eq!(
            d("garbage"),
            "ERROR 22007: invalid input syntax for type date: \"garbage\""
        );
        assert_eq!(
            d("2024"),
            "ERROR 22007: invalid input syntax for type date: \"2024\""
        );
        assert_eq!(
            d("2024-01"),
            "ERROR 22007: invalid input syntax for type date: \"2024-01\""
        );
        assert_eq!(
            d("5874898-01-01"),
            "ERROR 22008: date out of range: \"5874898-01-01\""
        );
        assert_eq!(
            d("4714-11-23 BC"),
            "ERROR 22008: date out of range: \"4714-11-23 BC\""
        );
        assert_eq!(
            d("2024-01-02 25:04:05"),
            "ERROR 22008: date/time field value out of range: \"2024-01-02 25:04:05\""
        );
        assert_eq!(parse_date("now", DateOrder::Mdy).unwrap(), today());
    }

    #[test]
    fn timestamps() {
        assert_eq!(ts("2024-01-02T03:04:05.123"), "2024-01-02 03:04:05.123");
        assert_eq!(
            ts("2024-01-02 03:04:05.1234567"),
            "2024-01-02 03:04:05.123457"
        );
        assert_eq!(
            ts("2024-01-02 03:04:05.123456789"),
            "2024-01-02 03:04:05.123457"
        );
        assert_eq!(ts("2024-01-02 03:04:05+02"), "2024-01-02 03:04:05");
        assert_eq!(ts("2024-01-02T03:04:05Z"), "2024-01-02 03:04:05");
        assert_eq!(ts("2024-01-02 24:00:00"), "2024-01-03 00:00:00");
        assert_eq!(ts("2024-01-02 03:04"), "2024-01-02 03:04:00");
        assert_eq!(ts("2024-01-02 03:04:60"), "2024-01-02 03:05:00");
        assert_eq!(ts("2024-01-02 3:04 pm"), "2024-01-02 15:04:00");
        assert_eq!(ts("2024-01-02 12:04 am"), "2024-01-02 00:04:00");
        assert_eq!(ts("20240102 030405"), "2024-01-02 03:04:05");
        assert_eq!(ts("1999-01-08 04:05:06 BC"), "1999-01-08 04:05:06 BC");
        assert_eq!(ts("99999-12-31 23:59:59"), "99999-12-31 23:59:59");
        assert_eq!(ts("epoch"), "1970-01-01 00:00:00");
        assert_eq!(ts("infinity"), "infinity");
        assert_eq!(
            ts("2024-01-02 25:00:00"),
            "ERROR 22008: date/time field value out of range: \"2024-01-02 25:00:00\""
        );
        assert_eq!(
            ts("2024-01-02 03:60:00"),
            "ERROR 22008: date/time field value out of range: \"2024-01-02 03:60:00\""
        );
        assert_eq!(
            ts("2024-01-02 24:00:01"),
            "ERROR 22008: date/time field value out of range: \"2024-01-02 24:00:01\""
        );
        assert_eq!(
            ts("294277-01-01"),
            "ERROR 22008: timestamp out of range: \"294277-01-01\""
        );
        assert_eq!(
            ts("2024-01-02 03"),
            "ERROR 22007: invalid input syntax for type timestamp: \"2024-01-02 03\""
        );
    }

    #[test]
    fn timestamptzs() {
        assert_eq!(tstz("2024-01-02 03:04:05+02"), "2024-01-02 01:04:05+00");
        assert_eq!(tstz("2024-01-02 03:04:05 +02"), "2024-01-02 01:04:05+00");
        assert_eq!(tstz("2024-01-02 03:04:05 -2"), "2024-01-02 05:04:05+00");
        assert_eq!(tstz("2024-01-02 03:04:05+05:30"), "2024-01-01 21:34:05+00");
        assert_eq!(tstz("2024-01-02 03:04:05+0530"), "2024-01-01 21:34:05+00");
        assert_eq!(tstz("2024-01-02 03:04:05Z"), "2024-01-02 03:04:05+00");
        assert_eq!(tstz("2024-01-02 03:04:05 UTC"), "2024-01-02 03:04:05+00");
        assert_eq!(tstz("2024-01-02 03:04:05 PST"), "2024-01-02 11:04:05+00");
        assert_eq!(
            tstz("2024-01-02 03:04:05.5-0330"),
            "2024-01-02 06:34:05.5+00"
        );
        assert_eq!(
            tstz("2024-01-02 03:04:05.5+02:30:15"),
            "2024-01-02 00:33:50.5+00"
        );
        assert_eq!(tstz("2024-01-02"), "2024-01-02 00:00:00+00");
        assert_eq!(tstz("2024-01-02 03:04:05+14:01"), "2024-01-01 13:03:05+00");
        assert_eq!(tstz("0044-03-15 BC"), "0044-03-15 00:00:00+00 BC");
        assert_eq!(
            tstz("2024-01-02 03:04:05+16"),
            "ERROR 22009: time zone displacement out of range: \"2024-01-02 03:04:05+16\""
        );
    }

    #[test]
    fn typmod_rounding() {
        let t = parse_timestamp("2024-01-02 03:04:05.9999", DateOrder::Mdy).unwrap();
        let mut o = String::new();
        write_timestamp(
            adjust_timestamp_typmod(t, 0).unwrap(),
            DateStyle::ISO_MDY,
            &mut o,
        );
        assert_eq!(o, "2024-01-02 03:04:06");
        let t = parse_timestamp("2024-01-02 03:04:05.000001", DateOrder::Mdy).unwrap();
        assert_eq!(adjust_timestamp_typmod(t, 3).unwrap() % USECS_PER_SEC, 0);
        // Found by the types_io fuzz target: rounding must not leave the range.
        let last = parse_timestamp("294276-12-31 23:59:59.999999", DateOrder::Mdy).unwrap();
        let e = adjust_timestamp_typmod(last, 1).unwrap_err();
        assert_eq!(
            (e.code.0, e.message.as_str()),
            ("22008", "timestamp out of range")
        );
    }
}
