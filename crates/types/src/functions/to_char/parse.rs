//! The reverse of to_char: to_date, to_timestamp(text, text) and
//! to_number read a string by a template (PostgreSQL's DCH_from_char and
//! NUM_processor). Outside FX mode a separator in the template matches any
//! one separator in the input or nothing, spaces match any run of spaces,
//! and a numeric field reads its digits up to the next non-digit (exactly
//! its width when the next template item is another field, as in
//! YYYYMMDD). Fields left out default as PostgreSQL's: year 1 BC, January,
//! the 1st, midnight.

use common::{PgError, PgResult, SqlState};

use super::datetime::{match_pattern, MONTHS};
use crate::datetime::{days_in_month, timestamp_from_fields, DateTimeFields};
use crate::numeric::Numeric;

/// The fields a template read.
#[derive(Default)]
pub struct Parsed {
    year: Option<i64>,
    /// How many digits the year was written with (YY, YYY, Y widen it).
    year_digits: usize,
    century: Option<i64>,
    bc: bool,
    month: Option<i64>,
    day: Option<i64>,
    day_of_year: Option<i64>,
    julian: Option<i64>,
    hour: i64,
    twelve_hour: bool,
    pm: Option<bool>,
    minute: i64,
    second: i64,
    usec: i64,
    /// Seconds east of UTC, when the input named an offset or zone.
    pub offset: Option<i32>,
}

fn invalid_value(text: &str, pattern: &str, detail: &str) -> PgError {
    PgError::new(
        SqlState::INVALID_DATETIME_FORMAT,
        format!("invalid value \"{text}\" for \"{pattern}\""),
    )
    .with_detail(detail)
}

fn out_of_range(input: &str) -> PgError {
    PgError::new(
        SqlState::DATETIME_FIELD_OVERFLOW,
        format!("date/time field value out of range: \"{input}\""),
    )
}

fn is_separator(c: char) -> bool {
    !c.is_alphanumeric()
}

/// The digits a field of `width` takes: a numeric pattern's width.
fn field_width(pattern: &str) -> Option<usize> {
    Some(match pattern {
        "YYYY" | "IYYY" => 4,
        "YYY" | "IYY" | "DDD" | "IDDD" | "MS" => 3,
        "YY" | "IY" | "MM" | "DD" | "HH" | "HH12" | "HH24" | "MI" | "SS" | "CC" | "WW" | "IW" => 2,
        "Y" | "I" | "D" | "ID" | "W" | "Q" => 1,
        "US" => 6,
        "SSSS" | "SSSSS" => 5,
        "J" => 9,
        p if p.starts_with("FF") => p[2..].parse().ok()?,
        _ => return None,
    })
}

/// Reads `input` by `template`.
pub fn parse(input: &str, template: &str) -> PgResult<Parsed> {
    let tpl: Vec<char> = template.chars().collect();
    let src: Vec<char> = input.chars().collect();
    let (mut i, mut at) = (0usize, 0usize);
    let mut fx = false;
    let mut p = Parsed::default();
    while i < tpl.len() {
        loop {
            let rest: String = tpl[i..]
                .iter()
                .take(2)
                .collect::<String>()
                .to_ascii_uppercase();
            match rest.as_str() {
                "FM" | "TM" => i += 2,
                "FX" => {
                    fx = true;
                    i += 2
                }
                _ => break,
            }
        }
        if i >= tpl.len() {
            break;
        }
        let Some((pattern, _, len)) = match_pattern(&tpl[i..]) else {
            let c = tpl[i];
            i += 1;
            match c {
                '"' => {
                    while i < tpl.len() && tpl[i] != '"' {
                        i += 1;
                        at = (at + 1).min(src.len());
                    }
                    i += 1;
                }
                ' ' if !fx => {
                    while at < src.len() && src[at] == ' ' {
                        at += 1;
                    }
                }
                c if !fx && is_separator(c) => {
                    if at < src.len() && is_separator(src[at]) && src[at] != ' ' {
                        at += 1;
                    }
                }
                _ => at = (at + 1).min(src.len()),
            }
            continue;
        };
        i += len;
        // TH after a field is ordinal text in the input.
        let ordinal = tpl.len() >= i + 2
            && tpl[i..i + 2]
                .iter()
                .collect::<String>()
                .eq_ignore_ascii_case("th");
        if ordinal {
            i += 2;
        }
        if !fx {
            while at < src.len() && src[at] == ' ' {
                at += 1;
            }
        }
        if at >= src.len() {
            break;
        }
        if let Some(width) = field_width(pattern) {
            let adjacent = i < tpl.len()
                && match_pattern(&tpl[i..]).is_some_and(|(q, _, _)| field_width(q).is_some());
            let negative = src[at] == '-' && matches!(pattern, "YYYY" | "J");
            let start = at + usize::from(negative);
            let mut end = start;
            while end < src.len() && src[end].is_ascii_digit() && (!adjacent || end - start < width)
            {
                end += 1;
            }
            let digits: String = src[start..end].iter().collect();
            if digits.is_empty() {
                let shown: String = src[at..].iter().take(width).collect();
                return Err(invalid_value(&shown, pattern, "Value must be an integer."));
            }
            let mut v: i64 = digits.parse().map_err(|_| {
                invalid_value(
                    &digits,
                    pattern,
                    "Value must be in the range -2147483648 to 2147483647.",
                )
            })?;
            if negative {
                v = -v;
            }
            at = end;
            if ordinal {
                while at < src.len() && src[at].is_alphabetic() {
                    at += 1;
                }
            }
            match pattern {
                "YYYY" | "YYY" | "YY" | "Y" | "IYYY" | "IYY" | "IY" | "I" => {
                    p.year = Some(v);
                    p.year_digits = if pattern.ends_with("YYYY") {
                        4
                    } else {
                        digits.len()
                    };
                }
                "CC" => p.century = Some(v),
                "MM" => p.month = Some(v),
                "DD" => p.day = Some(v),
                "DDD" | "IDDD" => p.day_of_year = Some(v),
                "J" => p.julian = Some(v),
                "HH" | "HH12" => {
                    p.hour = v;
                    p.twelve_hour = true;
                }
                "HH24" => p.hour = v,
                "MI" => p.minute = v,
                "SS" => p.second = v,
                "SSSS" | "SSSSS" => {
                    p.hour = v / 3600;
                    p.minute = v / 60 % 60;
                    p.second = v % 60;
                }
                "MS" => p.usec = v * 10i64.pow(3 - digits.len().min(3) as u32) * 1000,
                "US" => p.usec = v * 10i64.pow(6 - digits.len().min(6) as u32),
                f if f.starts_with("FF") => p.usec = v * 10i64.pow(6 - digits.len().min(6) as u32),
                // Weekday, week and quarter numbers do not place a date.
                _ => {}
            }
            continue;
        }
        let rest: String = src[at..].iter().collect();
        let upper = rest.to_ascii_uppercase();
        let take_word = |words: &[&str]| {
            words
                .iter()
                .position(|w| upper.starts_with(&w.to_ascii_uppercase()))
        };
        match pattern {
            "MONTH" | "MON" => {
                let names: Vec<String> = MONTHS
                    .iter()
                    .map(|m| {
                        if pattern == "MON" {
                            m[..3].to_string()
                        } else {
                            m.to_string()
                        }
                    })
                    .collect();
                let refs: Vec<&str> = names.iter().map(String::as_str).collect();
                let Some(k) = take_word(&refs) else {
                    return Err(invalid_value(
                        &rest,
                        if pattern == "MON" { "Mon" } else { "Month" },
                        "The given value did not match any of the allowed values for this field.",
                    ));
                };
                p.month = Some(k as i64 + 1);
                at += refs[k].chars().count();
            }
            "DAY" | "DY" => {
                while at < src.len() && src[at].is_alphabetic() {
                    at += 1;
                }
            }
            "AM" | "PM" | "A.M." | "P.M." => {
                let (am, pm) = if pattern.contains('.') {
                    ("A.M.", "P.M.")
                } else {
                    ("AM", "PM")
                };
                match take_word(&[am, pm]) {
                    Some(k) => {
                        p.pm = Some(k == 1);
                        at += am.len();
                    }
                    None => return Err(invalid_value(
                        &rest,
                        pattern,
                        "The given value did not match any of the allowed values for this field.",
                    )),
                }
            }
            "AD" | "BC" | "A.D." | "B.C." => {
                let (ad, bc) = if pattern.contains('.') {
                    ("A.D.", "B.C.")
                } else {
                    ("AD", "BC")
                };
                if let Some(k) = take_word(&[ad, bc]) {
                    p.bc = k == 1;
                    at += ad.len();
                }
            }
            "TZH" | "OF" => {
                let sign = match src[at] {
                    '-' => -1,
                    '+' => 1,
                    _ => 1,
                };
                if matches!(src[at], '+' | '-') {
                    at += 1;
                }
                let mut end = at;
                while end < src.len() && src[end].is_ascii_digit() && end - at < 2 {
                    end += 1;
                }
                let h: i32 = src[at..end].iter().collect::<String>().parse().unwrap_or(0);
                at = end;
                let mut m = 0;
                if pattern == "OF" && at < src.len() && src[at] == ':' {
                    let digits: String = src[at + 1..]
                        .iter()
                        .take_while(|c| c.is_ascii_digit())
                        .take(2)
                        .collect();
                    at += 1 + digits.len();
                    m = digits.parse().unwrap_or(0);
                }
                p.offset = Some(sign * (h * 3600 + m * 60) + p.offset.map_or(0, |o| o % 3600));
            }
            "TZM" => {
                let digits: String = src[at..]
                    .iter()
                    .take_while(|c| c.is_ascii_digit())
                    .take(2)
                    .collect();
                at += digits.len();
                let m: i32 = digits.parse().unwrap_or(0);
                let base = p.offset.unwrap_or(0);
                p.offset = Some(base + if base < 0 { -m * 60 } else { m * 60 });
            }
            // PostgreSQL 15 reads zone names only in to_char.
            "TZ" => {
                return Err(PgError::new(
                    SqlState::FEATURE_NOT_SUPPORTED,
                    "formatting field \"TZ\" is only supported in to_char",
                ))
            }
            "RM" => {
                while at < src.len() && src[at].is_alphabetic() {
                    at += 1;
                }
            }
            _ => {}
        }
    }
    Ok(p)
}

impl Parsed {
    /// The local date and time the fields name (22008 if out of range).
    pub fn fields(&self, input: &str) -> PgResult<DateTimeFields> {
        let mut year = match (self.year, self.century) {
            (Some(y), _) => match self.year_digits {
                // Two-digit years are 1970-2069, as PostgreSQL reads them.
                1 => 2000 + y,
                2 if y < 70 => 2000 + y,
                2 => 1900 + y,
                3 if y < 100 => 2000 + y,
                3 => 1000 + y,
                _ => y,
            },
            (None, Some(cc)) if cc > 0 => (cc - 1) * 100 + 1,
            (None, Some(cc)) => cc * 100,
            // No year at all: 1 BC, as PostgreSQL.
            (None, None) => 0,
        };
        if self.bc && self.year.is_some() {
            year = 1 - year;
        }
        let (mut month, mut day) = (self.month.unwrap_or(1), self.day.unwrap_or(1));
        if let Some(j) = self.julian {
            let (y, m, d) = crate::datetime::ymd_from_date(j - 2_451_545);
            (year, month, day) = (y, m as i64, d as i64);
        } else if let (Some(doy), None) = (self.day_of_year, self.month) {
            let days = crate::datetime::date_from_ymd(year, 1, 1) + doy - 1;
            let (y, m, d) = crate::datetime::ymd_from_date(days);
            (year, month, day) = (y, m as i64, d as i64);
        }
        let mut hour = self.hour;
        if self.twelve_hour || self.pm.is_some() {
            if !(1..=12).contains(&hour) && self.twelve_hour {
                return Err(PgError::new(
                    SqlState::INVALID_DATETIME_FORMAT,
                    format!("hour \"{hour}\" is invalid for the 12-hour clock"),
                )
                .with_hint("Use the 24-hour clock, or give an hour between 1 and 12."));
            }
            match self.pm {
                Some(true) if hour < 12 => hour += 12,
                Some(false) if hour == 12 => hour = 0,
                _ => {}
            }
        }
        if !(1..=12).contains(&month)
            || day < 1
            || day > days_in_month(year, month as u32) as i64
            || !(0..24).contains(&hour)
            || !(0..60).contains(&self.minute)
            || !(0..=60).contains(&self.second)
        {
            return Err(out_of_range(input));
        }
        Ok(DateTimeFields {
            year,
            month: month as u32,
            day: day as u32,
            hour: hour as u32,
            minute: self.minute as u32,
            second: self.second as u32,
            usec: self.usec as u32,
        })
    }

    /// The local timestamp of the fields.
    pub fn local_timestamp(&self, input: &str) -> PgResult<i64> {
        let f = self.fields(input)?;
        timestamp_from_fields(&f).ok_or_else(|| {
            PgError::new(SqlState::DATETIME_FIELD_OVERFLOW, "timestamp out of range")
        })
    }
}

/// to_number(text, template): the digits, sign and decimal point the
/// template's positions read.
pub fn number(input: &str, template: &str) -> PgResult<Numeric> {
    let tpl: Vec<char> = template.to_ascii_uppercase().chars().collect();
    let src: Vec<char> = input.chars().collect();
    let (mut i, mut at) = (0usize, 0usize);
    let (mut int_digits, mut frac_digits) = (String::new(), String::new());
    let mut in_fraction = false;
    let mut negative = false;
    let mut multiplier = 0u32;
    let mut after_v = false;
    let read_sign = |at: &mut usize, negative: &mut bool| {
        if *at < src.len() {
            match src[*at] {
                '-' | '<' => {
                    *negative = true;
                    *at += 1;
                }
                '+' => *at += 1,
                _ => {}
            }
        }
    };
    while i < tpl.len() {
        let two: String = tpl[i..].iter().take(2).collect();
        match tpl[i] {
            '9' | '0' => {
                while at < src.len() && int_digits.is_empty() && !in_fraction && src[at] == ' ' {
                    at += 1;
                }
                if int_digits.is_empty() && !in_fraction {
                    read_sign(&mut at, &mut negative);
                }
                if at < src.len() && src[at].is_ascii_digit() {
                    if in_fraction {
                        frac_digits.push(src[at]);
                    } else {
                        int_digits.push(src[at]);
                    }
                    at += 1;
                }
                if after_v {
                    multiplier += 1;
                }
                i += 1;
            }
            '.' | 'D' => {
                if at < src.len() && src[at] == '.' {
                    at += 1;
                }
                in_fraction = true;
                i += 1;
            }
            ',' | 'G' => {
                if at < src.len() && src[at] == ',' {
                    at += 1;
                }
                i += 1;
            }
            'V' => {
                after_v = true;
                i += 1;
            }
            'S' | 'L' => {
                if tpl[i] == 'S' {
                    read_sign(&mut at, &mut negative);
                } else if at < src.len() && !src[at].is_ascii_digit() && src[at] != '-' {
                    at += 1;
                }
                i += 1;
            }
            _ if matches!(two.as_str(), "MI" | "PL" | "SG" | "PR") => {
                read_sign(&mut at, &mut negative);
                if two == "PR" && at < src.len() && src[at] == '>' {
                    at += 1;
                }
                i += 2;
            }
            _ if two == "FM" => i += 2,
            _ => {
                at = (at + 1).min(src.len());
                i += 1;
            }
        }
    }
    if int_digits.is_empty() && frac_digits.is_empty() {
        let shown = if negative { "-" } else { " " };
        return Err(PgError::new(
            SqlState::INVALID_TEXT_REPRESENTATION,
            format!("invalid input syntax for type numeric: \"{shown}\""),
        ));
    }
    let text = format!(
        "{}{}{}{}",
        if negative { "-" } else { "" },
        if int_digits.is_empty() {
            "0"
        } else {
            &int_digits
        },
        if frac_digits.is_empty() { "" } else { "." },
        frac_digits
    );
    let n = Numeric::parse(&text)?;
    if multiplier == 0 {
        return Ok(n);
    }
    n.div(&Numeric::parse(&format!(
        "1{}",
        "0".repeat(multiplier as usize)
    ))?)
}
