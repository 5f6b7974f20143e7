//! `DateStyle`: the session setting (an output format and the field order
//! for reading ambiguous dates), typed once where it is set, and the text
//! output of `date`, `timestamp` and `timestamptz` in each format, as
//! PostgreSQL's EncodeDateOnly/EncodeDateTime write them.

use std::fmt::Write as _;

use crate::datetime::{
    timestamp_to_fields, ymd_from_date, DATE_NOBEGIN, DATE_NOEND, TIMESTAMP_NOBEGIN,
    TIMESTAMP_NOEND, USECS_PER_DAY, USECS_PER_SEC,
};
use crate::timezone::TimeZone;

/// How dates and times print (DateStyle's first part).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum DateOutput {
    /// `2003-01-02 04:05:06-08`
    #[default]
    Iso,
    /// `01/02/2003 04:05:06 PST`
    Sql,
    /// `Thu Jan 02 04:05:06 2003 PST`
    Postgres,
    /// `02.01.2003 04:05:06 PST`
    German,
}

/// The order of day, month and year in dates (DateStyle's second part):
/// how an ambiguous input like `01/02/2003` reads, and the order SQL and
/// Postgres output put day and month in.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum DateOrder {
    #[default]
    Mdy,
    Dmy,
    Ymd,
}

/// The DateStyle setting, both parts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DateStyle {
    pub output: DateOutput,
    pub order: DateOrder,
}

impl DateStyle {
    /// `ISO, MDY`, the default (and the form that depends on no session).
    pub const ISO_MDY: DateStyle = DateStyle {
        output: DateOutput::Iso,
        order: DateOrder::Mdy,
    };

    /// Reads a DateStyle setting as PostgreSQL's check hook does: a list of
    /// key words, each naming a format or an order; the part a value does
    /// not name is kept from `current` (German alone also means DMY), and
    /// `DEFAULT` stands for `reset`'s parts. The error is the DETAIL line
    /// of PostgreSQL's 22023.
    pub fn parse_setting(
        value: &str,
        current: DateStyle,
        reset: DateStyle,
    ) -> Result<DateStyle, String> {
        let words = split_identifier_list(value).ok_or("List syntax is invalid.")?;
        let mut style = current;
        let (mut have_output, mut have_order, mut conflict) = (false, false, false);
        for word in &words {
            let w = word.to_ascii_lowercase();
            let output = match w.as_str() {
                "iso" => Some(DateOutput::Iso),
                "sql" => Some(DateOutput::Sql),
                "german" => Some(DateOutput::German),
                _ if w.starts_with("postgres") => Some(DateOutput::Postgres),
                _ => None,
            };
            let order = match w.as_str() {
                "ymd" => Some(DateOrder::Ymd),
                "dmy" => Some(DateOrder::Dmy),
                "mdy" | "us" => Some(DateOrder::Mdy),
                _ if w.starts_with("euro") => Some(DateOrder::Dmy),
                _ if w.starts_with("noneuro") => Some(DateOrder::Mdy),
                _ => None,
            };
            if let Some(output) = output {
                conflict |= have_output && style.output != output;
                style.output = output;
                have_output = true;
                // German means DMY unless the value names an order first.
                if output == DateOutput::German && !have_order {
                    style.order = DateOrder::Dmy;
                }
            } else if let Some(order) = order {
                conflict |= have_order && style.order != order;
                style.order = order;
                have_order = true;
            } else if w == "default" {
                if !have_output {
                    style.output = reset.output;
                }
                if !have_order {
                    style.order = reset.order;
                }
            } else {
                return Err(format!("Unrecognized key word: \"{word}\"."));
            }
        }
        if conflict {
            return Err("Conflicting \"datestyle\" specifications.".into());
        }
        Ok(style)
    }

    /// The setting as SHOW and ParameterStatus print it (`Postgres, MDY`).
    pub fn canonical_name(self) -> String {
        let output = match self.output {
            DateOutput::Iso => "ISO",
            DateOutput::Sql => "SQL",
            DateOutput::Postgres => "Postgres",
            DateOutput::German => "German",
        };
        let order = match self.order {
            DateOrder::Mdy => "MDY",
            DateOrder::Dmy => "DMY",
            DateOrder::Ymd => "YMD",
        };
        format!("{output}, {order}")
    }
}

/// Splits a comma-separated list of identifiers as PostgreSQL's
/// SplitIdentifierString does: unquoted names are lowercased and end at
/// whitespace or a comma, double-quoted ones keep their case (`""` is a
/// quote); None where the syntax is invalid (an empty element, a missing
/// comma, an unterminated quote). An empty or blank value is an empty list.
fn split_identifier_list(value: &str) -> Option<Vec<String>> {
    let mut out = Vec::new();
    let mut chars = value.chars().peekable();
    let skip_blanks = |chars: &mut std::iter::Peekable<std::str::Chars<'_>>| {
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
    };
    skip_blanks(&mut chars);
    if chars.peek().is_none() {
        return Some(out);
    }
    loop {
        let mut name = String::new();
        if chars.peek() == Some(&'"') {
            chars.next();
            loop {
                match chars.next()? {
                    '"' if chars.peek() == Some(&'"') => {
                        chars.next();
                        name.push('"');
                    }
                    '"' => break,
                    c => name.push(c),
                }
            }
        } else {
            while let Some(&c) = chars.peek() {
                if c == ',' || c.is_whitespace() {
                    break;
                }
                name.push(c.to_ascii_lowercase());
                chars.next();
            }
            if name.is_empty() {
                return None;
            }
        }
        out.push(name);
        skip_blanks(&mut chars);
        match chars.next() {
            None => return Some(out),
            Some(',') => skip_blanks(&mut chars),
            Some(_) => return None,
        }
    }
}

const MONTH_ABBREVS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];
const DAY_ABBREVS: [&str; 7] = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];

/// A year as printed: at least four digits, BC years counted from 1.
fn era_year(year: i64) -> i64 {
    if year > 0 {
        year
    } else {
        1 - year
    }
}

/// Day, month and year in the style's separators and order.
fn write_numeric_date(out: &mut String, style: DateStyle, year: i64, month: u32, day: u32) {
    let y = era_year(year);
    let (first, second) = if style.order == DateOrder::Dmy {
        (day, month)
    } else {
        (month, day)
    };
    let _ = match style.output {
        DateOutput::Iso => write!(out, "{y:04}-{month:02}-{day:02}"),
        DateOutput::Sql => write!(out, "{first:02}/{second:02}/{y:04}"),
        DateOutput::German => write!(out, "{day:02}.{month:02}.{y:04}"),
        DateOutput::Postgres => write!(out, "{first:02}-{second:02}-{y:04}"),
    };
}

/// Appends a date (`2003-01-02`, `01/02/2003`, `02.01.2003`, `01-02-2003`;
/// ` BC` after years before 1; `infinity`, `-infinity`).
pub fn write_date(days: i32, style: DateStyle, out: &mut String) {
    match days {
        DATE_NOBEGIN => out.push_str("-infinity"),
        DATE_NOEND => out.push_str("infinity"),
        _ => {
            let (y, m, d) = ymd_from_date(days as i64);
            write_numeric_date(out, style, y, m, d);
            if y <= 0 {
                out.push_str(" BC");
            }
        }
    }
}

/// Seconds with the fraction's trailing zeros dropped (`05`, `05.78`).
fn write_seconds(out: &mut String, second: u32, usec: u32) {
    let _ = write!(out, "{second:02}");
    if usec != 0 {
        let mut frac = usec;
        let mut width = 6;
        while frac.is_multiple_of(10) {
            frac /= 10;
            width -= 1;
        }
        let _ = write!(out, ".{frac:0width$}");
    }
}

/// A UTC offset as ISO output writes it: `+02`, `-03:30`, `-07:52:58`.
fn write_iso_offset(out: &mut String, offset: i32) {
    let (sign, a) = if offset < 0 {
        ('-', -offset)
    } else {
        ('+', offset)
    };
    let _ = write!(out, "{sign}{:02}", a / 3600);
    if a % 3600 != 0 {
        let _ = write!(out, ":{:02}", a % 3600 / 60);
    }
    if a % 60 != 0 {
        let _ = write!(out, ":{:02}", a % 60);
    }
}

/// `zone`: None for a timestamp, the zone to show a timestamptz in.
fn write_ts(us: i64, zone: Option<TimeZone>, style: DateStyle, out: &mut String) {
    if us == TIMESTAMP_NOBEGIN {
        return out.push_str("-infinity");
    }
    if us == TIMESTAMP_NOEND {
        return out.push_str("infinity");
    }
    let offset = zone.map_or(0, |z| z.offset_at_utc(us));
    let local = us + offset as i64 * USECS_PER_SEC;
    let f = timestamp_to_fields(local);
    if style.output == DateOutput::Postgres {
        // 2000-01-01, day 0 of the timestamp epoch, was a Saturday.
        let weekday = (local.div_euclid(USECS_PER_DAY) + 6).rem_euclid(7) as usize;
        let month = MONTH_ABBREVS[f.month as usize - 1];
        out.push_str(DAY_ABBREVS[weekday]);
        let _ = if style.order == DateOrder::Dmy {
            write!(out, " {:02} {month}", f.day)
        } else {
            write!(out, " {month} {:02}", f.day)
        };
        let _ = write!(out, " {:02}:{:02}:", f.hour, f.minute);
        write_seconds(out, f.second, f.usec);
        let _ = write!(out, " {:04}", era_year(f.year));
    } else {
        write_numeric_date(out, style, f.year, f.month, f.day);
        let _ = write!(out, " {:02}:{:02}:", f.hour, f.minute);
        write_seconds(out, f.second, f.usec);
    }
    if let Some(zone) = zone {
        if style.output == DateOutput::Iso {
            write_iso_offset(out, offset);
        } else {
            out.push(' ');
            out.push_str(&zone.display_abbreviation(us));
        }
    }
    if f.year <= 0 {
        out.push_str(" BC");
    }
}

/// Appends a timestamp (`2003-01-02 04:05:06.78`, `Thu Jan 02 04:05:06.78 2003`, ...).
pub fn write_timestamp(us: i64, style: DateStyle, out: &mut String) {
    write_ts(us, None, style, out)
}

/// Appends a timestamptz as seen in `zone`: ISO with the UTC offset
/// (`2003-01-02 04:05:06-08`), the other styles with the zone's
/// abbreviation (`Thu Jan 02 04:05:06 2003 PST`).
pub fn write_timestamptz(us: i64, zone: TimeZone, style: DateStyle, out: &mut String) {
    write_ts(us, Some(zone), style, out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(v: &str) -> Result<String, String> {
        DateStyle::parse_setting(v, DateStyle::ISO_MDY, DateStyle::ISO_MDY)
            .map(DateStyle::canonical_name)
    }

    #[test]
    fn settings_as_postgresql_reads_them() {
        assert_eq!(parse("Postgres, MDY").unwrap(), "Postgres, MDY");
        assert_eq!(parse(" sql , dmy ").unwrap(), "SQL, DMY");
        assert_eq!(parse("german").unwrap(), "German, DMY");
        assert_eq!(parse("ymd, german").unwrap(), "German, YMD");
        assert_eq!(parse("euro").unwrap(), "ISO, DMY");
        assert_eq!(parse("european, postgresxyz").unwrap(), "Postgres, DMY");
        assert_eq!(parse("noneuropean").unwrap(), "ISO, MDY");
        assert_eq!(parse("\"SQL\"").unwrap(), "SQL, MDY");
        assert_eq!(parse("").unwrap(), "ISO, MDY");
        assert_eq!(parse("sql, default").unwrap(), "SQL, MDY");
        // One part alone keeps the other from the current setting.
        let current = DateStyle {
            output: DateOutput::Sql,
            order: DateOrder::Ymd,
        };
        let kept = DateStyle::parse_setting("postgres", current, DateStyle::ISO_MDY).unwrap();
        assert_eq!(kept.canonical_name(), "Postgres, YMD");
        assert_eq!(parse("Foo").unwrap_err(), "Unrecognized key word: \"foo\".");
        assert_eq!(
            parse("\"Foo\"").unwrap_err(),
            "Unrecognized key word: \"Foo\"."
        );
        for bad in ["iso,,dmy", "iso dmy", ",", "iso,", "iso, \"dmy"] {
            assert_eq!(parse(bad).unwrap_err(), "List syntax is invalid.", "{bad}");
        }
        for conflict in ["iso, sql", "euro, us", "sql, german", "iso, dmy, ymd"] {
            assert_eq!(
                parse(conflict).unwrap_err(),
                "Conflicting \"datestyle\" specifications.",
                "{conflict}"
            );
        }
    }

    #[test]
    fn output_styles() {
        let style = |output, order| DateStyle { output, order };
        let ts = crate::datetime::date_from_ymd(2003, 1, 2) * USECS_PER_DAY
            + (4 * 3600 + 5 * 60 + 6) * USECS_PER_SEC
            + 780_000;
        let cases = [
            (DateOutput::Iso, DateOrder::Dmy, "2003-01-02 04:05:06.78"),
            (DateOutput::Sql, DateOrder::Mdy, "01/02/2003 04:05:06.78"),
            (DateOutput::Sql, DateOrder::Dmy, "02/01/2003 04:05:06.78"),
            (DateOutput::German, DateOrder::Mdy, "02.01.2003 04:05:06.78"),
            (
                DateOutput::Postgres,
                DateOrder::Ymd,
                "Thu Jan 02 04:05:06.78 2003",
            ),
            (
                DateOutput::Postgres,
                DateOrder::Dmy,
                "Thu 02 Jan 04:05:06.78 2003",
            ),
        ];
        for (output, order, want) in cases {
            let mut s = String::new();
            write_timestamp(ts, style(output, order), &mut s);
            assert_eq!(s, want);
        }
        let mut s = String::new();
        let bc = crate::datetime::date_from_ymd(-43, 3, 15) as i32;
        write_date(bc, style(DateOutput::Postgres, DateOrder::Dmy), &mut s);
        assert_eq!(s, "15-03-0044 BC");
        s.clear();
        write_timestamptz(
            ts,
            TimeZone::Fixed(2 * 3600),
            style(DateOutput::Postgres, DateOrder::Mdy),
            &mut s,
        );
        assert_eq!(s, "Thu Jan 02 06:05:06.78 2003 +02");
    }
}
