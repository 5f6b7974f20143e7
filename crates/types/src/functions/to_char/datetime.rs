//! to_char over timestamps, dates and intervals: PostgreSQL's DCH template
//! patterns (formatting.c) with the FM and TH modifiers, quoted literals and
//! backslash escapes. Names are English, as under the C locale.

use std::cell::RefCell;
use std::fmt::Write;

use crate::datetime::{date_from_ymd, timestamp_to_fields, DateTimeFields, USECS_PER_DAY};

use super::super::datetime::{iso_week, isodow};

pub(super) const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];
const DAYS: [&str; 7] = [
    "Sunday",
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
];
const ROMAN_MONTHS: [&str; 12] = [
    "I", "II", "III", "IV", "V", "VI", "VII", "VIII", "IX", "X", "XI", "XII",
];

/// The patterns, longest first where one is a prefix of another.
const PATTERNS: &[&str] = &[
    "A.D.", "A.M.", "AD", "AM", "B.C.", "BC", "CC", "DAY", "DDD", "DD", "DY", "D", "FF1", "FF2",
    "FF3", "FF4", "FF5", "FF6", "FX", "HH24", "HH12", "HH", "IDDD", "ID", "IW", "IYYY", "IYY",
    "IY", "I", "J", "MI", "MM", "MONTH", "MON", "MS", "OF", "P.M.", "PM", "Q", "RM", "SSSSS",
    "SSSS", "SS", "TZH", "TZM", "TZ", "US", "WW", "W", "Y,YYY", "YYYY", "YYY", "YY", "Y",
];

/// How a name pattern was written: `MONTH`, `Month` or `month`.
#[derive(Clone, Copy, PartialEq)]
pub(super) enum Case {
    Upper,
    Capitalized,
    Lower,
}

/// What the fields of one value are, as to_char reads them.
pub struct Moment {
    pub fields: DateTimeFields,
    /// Days since 2000-01-01 (for weekdays, ISO weeks and Julian days).
    pub days: i64,
    /// Seconds east of UTC and the zone's abbreviation; None for values
    /// without a time zone.
    pub zone: Option<(i32, String)>,
    /// Interval: fields are not calendar fields (no weekday, day of year).
    pub interval: bool,
}

impl Moment {
    pub fn of_timestamp(local_us: i64, zone: Option<(i32, String)>) -> Moment {
        Moment {
            fields: timestamp_to_fields(local_us),
            days: local_us.div_euclid(USECS_PER_DAY),
            zone,
            interval: false,
        }
    }
}

/// One piece of a compiled template: text copied as is, or a field.
enum Item {
    Literal(String),
    Field {
        pattern: &'static str,
        case: Case,
        /// FM: no padding.
        fill: bool,
        /// TH (true) / th (false): the ordinal suffix.
        ordinal: Option<bool>,
    },
}

/// A template read into its pieces once (PostgreSQL's DCH cache): a query
/// formats row after row with the same template.
fn compile(template: &str) -> Vec<Item> {
    let mut items = Vec::new();
    let mut literal = String::new();
    let chars: Vec<char> = template.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        // Prefix modifiers.
        let mut fill = false;
        loop {
            if starts_with_ci(&chars[i..], "FM") {
                fill = true;
                i += 2;
            } else if starts_with_ci(&chars[i..], "TM") || starts_with_ci(&chars[i..], "FX") {
                i += 2;
            } else {
                break;
            }
        }
        if i >= chars.len() {
            break;
        }
        let Some((pattern, case, len)) = match_pattern(&chars[i..]) else {
            match chars[i] {
                '"' => {
                    i += 1;
                    while i < chars.len() && chars[i] != '"' {
                        if chars[i] == '\\' && i + 1 < chars.len() {
                            i += 1;
                        }
                        literal.push(chars[i]);
                        i += 1;
                    }
                    i += 1;
                }
                '\\' if i + 1 < chars.len() => {
                    literal.push(chars[i + 1]);
                    i += 2;
                }
                c => {
                    literal.push(c);
                    i += 1;
                }
            }
            continue;
        };
        i += len;
        // Suffixes: TH / th give the ordinal suffix, SP is accepted.
        let mut ordinal = None;
        if starts_with_ci(&chars[i..], "TH") {
            ordinal = Some(chars[i] == 'T');
            i += 2;
        }
        if starts_with_ci(&chars[i..], "SP") {
            i += 2;
        }
        if !literal.is_empty() {
            items.push(Item::Literal(std::mem::take(&mut literal)));
        }
        items.push(Item::Field {
            pattern,
            case,
            fill,
            ordinal,
        });
    }
    if !literal.is_empty() {
        items.push(Item::Literal(literal));
    }
    items
}

thread_local! {
    static TEMPLATES: super::TemplateCache<Vec<Item>> = const { RefCell::new(Vec::new()) };
}

/// `template` applied to `m`.
pub fn format(m: &Moment, template: &str) -> String {
    let items = super::cached(&TEMPLATES, template, compile);
    let mut out = String::with_capacity(template.len() + 16);
    for item in items.iter() {
        match item {
            Item::Literal(text) => out.push_str(text),
            Item::Field {
                pattern,
                case,
                fill,
                ordinal,
            } => render(m, pattern, *case, *fill, *ordinal, &mut out),
        }
    }
    out
}

fn starts_with_ci(chars: &[char], s: &str) -> bool {
    chars.len() >= s.len()
        && chars
            .iter()
            .zip(s.chars())
            .all(|(a, b)| a.eq_ignore_ascii_case(&b))
}

/// The pattern at the front of `chars`, how it is cased, and its length.
pub(super) fn match_pattern(chars: &[char]) -> Option<(&'static str, Case, usize)> {
    let p = PATTERNS.iter().find(|p| starts_with_ci(chars, p))?;
    let written: String = chars[..p.len()].iter().collect();
    let letters: Vec<char> = written
        .chars()
        .filter(|c| c.is_ascii_alphabetic())
        .collect();
    let case = if letters.iter().all(|c| c.is_ascii_uppercase()) {
        Case::Upper
    } else if letters.iter().all(|c| c.is_ascii_lowercase()) {
        Case::Lower
    } else if letters[0].is_ascii_uppercase() && letters[1..].iter().all(|c| c.is_ascii_lowercase())
    {
        Case::Capitalized
    } else {
        return None;
    };
    Some((p, case, p.len()))
}

fn cased(name: &str, case: Case) -> String {
    match case {
        Case::Upper => name.to_ascii_uppercase(),
        Case::Lower => name.to_ascii_lowercase(),
        Case::Capitalized => name.to_string(),
    }
}

/// `name` as `case` asks, appended to `out`.
fn push_cased(name: &str, case: Case, out: &mut String) {
    match case {
        Case::Upper => out.extend(name.chars().map(|c| c.to_ascii_uppercase())),
        Case::Lower => out.extend(name.chars().map(|c| c.to_ascii_lowercase())),
        Case::Capitalized => out.push_str(name),
    }
}

/// The English ordinal suffix of `n` (`st`, `nd`, `rd`, `th`; upper case
/// for TH).
pub(super) fn ordinal_suffix(n: i64, upper: bool) -> &'static str {
    let n = n.abs();
    let s = if (11..=13).contains(&(n % 100)) {
        "th"
    } else {
        match n % 10 {
            1 => "st",
            2 => "nd",
            3 => "rd",
            _ => "th",
        }
    };
    match (upper, s) {
        (false, s) => s,
        (true, "st") => "ST",
        (true, "nd") => "ND",
        (true, "rd") => "RD",
        (true, _) => "TH",
    }
}

fn render(
    m: &Moment,
    pattern: &str,
    case: Case,
    fill: bool,
    ordinal: Option<bool>,
    out: &mut String,
) {
    let f = &m.fields;
    // Years before 1 AD count backwards from 1 BC.
    let year = if f.year <= 0 { 1 - f.year } else { f.year };
    // Writing to a String cannot fail.
    let number = |value: i64, width: usize, out: &mut String| {
        if fill {
            let _ = write!(out, "{value}");
        } else if value < 0 {
            // PostgreSQL widens the field by one for the sign.
            let _ = write!(out, "-{:0width$}", -value);
        } else {
            let _ = write!(out, "{value:0width$}");
        }
        if let Some(upper) = ordinal {
            out.push_str(ordinal_suffix(value, upper));
        }
    };
    let padded = |text: String, width: usize, out: &mut String| {
        if fill {
            out.push_str(&text);
        } else {
            let _ = write!(out, "{text:<width$}");
        }
    };
    let pm = f.hour >= 12;
    let day_of_year = || m.days - date_from_ymd(f.year, 1, 1) + 1;
    let dow = (m.days + 6).rem_euclid(7) as usize; // Sunday = 0
    match pattern {
        "HH" | "HH12" => {
            let h = f.hour as i64 % 12;
            number(if h == 0 { 12 } else { h }, 2, out)
        }
        "HH24" => number(f.hour as i64, 2, out),
        "MI" => number(f.minute as i64, 2, out),
        "SS" => number(f.second as i64, 2, out),
        "MS" => number(f.usec as i64 / 1000, 3, out),
        "US" => number(f.usec as i64, 6, out),
        "FF1" | "FF2" | "FF3" | "FF4" | "FF5" | "FF6" => {
            let digits = pattern[2..].parse::<u32>().expect("FF1..FF6");
            number(f.usec as i64 / 10i64.pow(6 - digits), digits as usize, out)
        }
        "SSSS" | "SSSSS" => {
            let s = f.hour as i64 * 3600 + f.minute as i64 * 60 + f.second as i64;
            out.push_str(&s.to_string());
        }
        "AM" | "PM" => push_cased(if pm { "PM" } else { "AM" }, case, out),
        "A.M." | "P.M." => push_cased(if pm { "P.M." } else { "A.M." }, case, out),
        "AD" | "BC" => push_cased(if f.year <= 0 { "BC" } else { "AD" }, case, out),
        "A.D." | "B.C." => push_cased(if f.year <= 0 { "B.C." } else { "A.D." }, case, out),
        "Y,YYY" => {
            out.push_str(&format!("{},{:03}", year / 1000, year % 1000));
        }
        "YYYY" => number(year, 4, out),
        "YYY" => number(year % 1000, 3, out),
        "YY" => number(year % 100, 2, out),
        "Y" => number(year % 10, 1, out),
        "IYYY" | "IYY" | "IY" | "I" => {
            let iy = iso_week(m.days).0;
            let (modulus, width) = match pattern.len() {
                4 => (i64::MAX, 4),
                3 => (1000, 3),
                2 => (100, 2),
                _ => (10, 1),
            };
            number(
                if modulus == i64::MAX {
                    iy
                } else {
                    iy % modulus
                },
                width,
                out,
            )
        }
        "MONTH" => padded(cased(MONTHS[f.month as usize - 1], case), 9, out),
        "MON" => push_cased(&MONTHS[f.month as usize - 1][..3], case, out),
        "MM" => number(f.month as i64, 2, out),
        "DAY" => padded(cased(DAYS[dow], case), 9, out),
        "DY" => push_cased(&DAYS[dow][..3], case, out),
        "DDD" => number(
            if m.interval {
                f.day as i64
            } else {
                day_of_year()
            },
            3,
            out,
        ),
        "IDDD" => number((iso_week(m.days).1 - 1) * 7 + isodow(m.days), 3, out),
        "DD" => number(f.day as i64, 2, out),
        "D" => number(dow as i64 + 1, 1, out),
        "ID" => number(isodow(m.days), 1, out),
        "W" => number((f.day as i64 - 1) / 7 + 1, 1, out),
        "WW" => number((day_of_year() - 1) / 7 + 1, 2, out),
        "IW" => number(iso_week(m.days).1, 2, out),
        "CC" => {
            let cc = if f.year <= 0 {
                f.year / 100 - 1
            } else {
                (f.year - 1) / 100 + 1
            };
            number(cc, 2, out)
        }
        "J" => number(m.days + 2_451_545, 1, out),
        "Q" => number((f.month as i64 - 1) / 3 + 1, 1, out),
        "RM" => padded(cased(ROMAN_MONTHS[f.month as usize - 1], case), 4, out),
        "TZ" => {
            if let Some((_, abbrev)) = &m.zone {
                push_cased(abbrev, case, out);
            }
        }
        "OF" | "TZH" | "TZM" => {
            let offset = m.zone.as_ref().map_or(0, |z| z.0);
            let sign = if offset < 0 { '-' } else { '+' };
            let (h, mi) = (offset.abs() / 3600, offset.abs() % 3600 / 60);
            match pattern {
                "OF" if mi != 0 => out.push_str(&format!("{sign}{h:02}:{mi:02}")),
                "OF" => out.push_str(&format!("{sign}{h:02}")),
                "TZH" => out.push_str(&format!("{sign}{h:02}")),
                _ => out.push_str(&format!("{mi:02}")),
            }
        }
        // FX only matters when parsing.
        _ => {}
    }
}
