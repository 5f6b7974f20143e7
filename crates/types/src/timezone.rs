//! Time zones for `timestamptz`: fixed offsets and the IANA database (through
//! `chrono-tz`), with PostgreSQL's rules for naming them and for resolving
//! wall-clock times that a transition skips or repeats.
//!
//! Offsets are seconds east of UTC, as in the rest of this crate; instants are
//! microseconds since 2000-01-01 00:00 UTC.

use std::str::FromStr;

use chrono::{NaiveDateTime, Offset, TimeZone as _};
use chrono_tz::{OffsetComponents, OffsetName, Tz};

use super::datetime::USECS_PER_SEC;

/// Seconds between 1970-01-01 and 2000-01-01.
const UNIX_TO_PG_EPOCH_SECS: i64 = 946_684_800;

/// A session's TimeZone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeZone {
    /// A constant offset, seconds east of UTC: a number of hours as set
    /// ('+02', '<+02>-02'), UTC where no session applies, and the fixed
    /// zones of conversions. Its abbreviation is the offset (`+02`).
    Fixed(i32),
    /// A constant offset set in the POSIX form with minutes ('-03:30',
    /// seconds east): PostgreSQL gives such a zone an empty abbreviation.
    Posix(i32),
    /// A zone of the IANA database.
    Named(Tz),
}

impl Default for TimeZone {
    fn default() -> Self {
        TimeZone::Fixed(0)
    }
}

/// `[+-]h[:mm]` with at most `max_hours` hours: (sign, seconds, whether
/// minutes were written).
fn signed_hours_minutes(v: &str, max_hours: i32) -> Option<(i32, i32, bool)> {
    let (sign, rest) = match v.as_bytes().first()? {
        b'+' => (1, &v[1..]),
        b'-' => (-1, &v[1..]),
        _ => (1, v),
    };
    if !rest.starts_with(|c: char| c.is_ascii_digit()) {
        return None;
    }
    let mut parts = rest.split(':');
    let h: i32 = parts.next()?.parse().ok()?;
    let minutes = parts.next();
    let m: i32 = minutes.map_or(Some(0), |m| m.parse().ok())?;
    if parts.next().is_some() || !(0..=max_hours).contains(&h) || !(0..60).contains(&m) {
        return None;
    }
    Some((sign, h * 3600 + m * 60, minutes.is_some()))
}

/// A fixed offset as PostgreSQL reads a TimeZone setting: a bare number
/// ('+02', '-8'; '5.5' is not accepted) counts hours east, while a form with
/// minutes ('-03:30') is POSIX-style and counts west.
fn parse_fixed_offset(v: &str) -> Option<TimeZone> {
    let (sign, secs, posix) = signed_hours_minutes(v, 15)?;
    Some(if posix {
        TimeZone::Posix(-sign * secs)
    } else {
        TimeZone::Fixed(sign * secs)
    })
}

/// A POSIX offset, `[+-]hh[:mm]`, which counts west of UTC; returns seconds east.
fn parse_posix_offset(v: &str) -> Option<i32> {
    let (sign, secs, _) = signed_hours_minutes(v, 167)?;
    Some(-sign * secs)
}

impl TimeZone {
    /// Parses a TimeZone setting: any IANA zone name in any letter case (as
    /// PostgreSQL's lookup is), or a fixed offset.
    pub fn parse(value: &str) -> Option<TimeZone> {
        let v = value.trim();
        if v.is_empty() {
            return None;
        }
        if let Some(posix) = v.strip_prefix('<') {
            // `<+02>-02`, as canonical_name writes a bare number of hours.
            let (_, offset) = posix.split_once('>')?;
            return parse_posix_offset(offset).map(TimeZone::Fixed);
        }
        lookup_name(v)
            .map(TimeZone::Named)
            .or_else(|| parse_fixed_offset(v))
    }

    /// Parses the zone of `AT TIME ZONE` and `timezone(zone, …)`: a zone
    /// name, a common abbreviation (a fixed offset, as PostgreSQL's default
    /// abbreviation set gives it), or a POSIX offset such as '+02' or
    /// '-05:30', which counts hours west of UTC.
    pub fn parse_for_conversion(value: &str) -> Option<TimeZone> {
        let v = value.trim();
        // Abbreviations first, as PostgreSQL: 'CET' is +01 all year here.
        if let Some(secs) = abbreviation_offset(v) {
            return Some(TimeZone::Fixed(secs));
        }
        if let Some(tz) = lookup_name(v) {
            return Some(TimeZone::Named(tz));
        }
        parse_posix_offset(v).map(TimeZone::Fixed)
    }

    /// The offset in force at a UTC instant.
    pub fn offset_at_utc(self, utc_us: i64) -> i32 {
        match self {
            TimeZone::Fixed(secs) | TimeZone::Posix(secs) => secs,
            TimeZone::Named(tz) => {
                let t = to_naive(utc_us);
                tz.offset_from_utc_datetime(&t).fix().local_minus_utc()
            }
        }
    }

    /// The offset that makes a wall-clock time an instant, by PostgreSQL's
    /// rule: a time that a transition skips takes the offset from before the
    /// transition, and a time it repeats takes the offset from after it
    /// (for daylight saving in either hemisphere: standard time).
    pub fn offset_for_local(self, local_us: i64) -> i32 {
        match self {
            TimeZone::Fixed(secs) | TimeZone::Posix(secs) => secs,
            TimeZone::Named(tz) => {
                let t = to_naive(local_us);
                match tz.offset_from_local_datetime(&t) {
                    chrono::LocalResult::Single(o) => o.fix().local_minus_utc(),
                    chrono::LocalResult::Ambiguous(_, later) => later.fix().local_minus_utc(),
                    chrono::LocalResult::None => {
                        // Skipped: no real offset is more than 15 hours, so an
                        // instant that far before this wall time is before the
                        // transition.
                        self.offset_at_utc(local_us - 15 * 3600 * USECS_PER_SEC)
                    }
                }
            }
        }
    }

    /// Whether daylight saving time is in force at a UTC instant.
    pub fn is_dst_at_utc(self, utc_us: i64) -> bool {
        match self {
            TimeZone::Fixed(_) | TimeZone::Posix(_) => false,
            TimeZone::Named(tz) => {
                let o = tz.offset_from_utc_datetime(&to_naive(utc_us));
                !o.dst_offset().is_zero()
            }
        }
    }

    /// The abbreviation in force at a UTC instant ("CET", "EDT"), if the zone
    /// has one.
    pub fn abbreviation_at_utc(self, utc_us: i64) -> Option<String> {
        match self {
            TimeZone::Fixed(_) | TimeZone::Posix(_) => None,
            TimeZone::Named(tz) => {
                let o = tz.offset_from_utc_datetime(&to_naive(utc_us));
                o.abbreviation().map(str::to_string)
            }
        }
    }

    /// The abbreviation timestamptz output shows at a UTC instant in the
    /// SQL, Postgres and German DateStyles, as PostgreSQL's zone database
    /// gives it: the zone's letters ("PST", "LMT"), else the offset in the
    /// database's numeric form ("-03", "+0545"); empty for a POSIX offset.
    pub fn display_abbreviation(self, utc_us: i64) -> String {
        if let TimeZone::Posix(_) = self {
            return String::new();
        }
        if let Some(letters) = self.abbreviation_at_utc(utc_us) {
            return letters;
        }
        let offset = self.offset_at_utc(utc_us);
        let a = offset.unsigned_abs();
        let mut s = format!("{}{:02}", if offset < 0 { '-' } else { '+' }, a / 3600);
        if !a.is_multiple_of(3600) {
            s.push_str(&format!("{:02}", a % 3600 / 60));
        }
        if !a.is_multiple_of(60) {
            s.push_str(&format!("{:02}", a % 60));
        }
        s
    }

    /// The zone's canonical name, for SHOW and ParameterStatus, as
    /// PostgreSQL writes it: the database's spelling of a name; a bare number
    /// of hours as the POSIX zone `<+02>-02`; a POSIX offset as given.
    pub fn canonical_name(self, as_set: &str) -> String {
        match self {
            TimeZone::Named(tz) => tz.name().to_string(),
            TimeZone::Fixed(secs) => {
                let (sign, posix_sign, a) = if secs < 0 {
                    ('-', '+', -secs)
                } else {
                    ('+', '-', secs)
                };
                let hm = if a % 3600 == 0 {
                    format!("{:02}", a / 3600)
                } else {
                    format!("{:02}:{:02}", a / 3600, a % 3600 / 60)
                };
                format!("<{sign}{hm}>{posix_sign}{hm}")
            }
            TimeZone::Posix(_) => as_set.trim().to_string(),
        }
    }
}

fn lookup_name(v: &str) -> Option<Tz> {
    Tz::from_str(v)
        .or_else(|_| Tz::from_str_insensitive(v))
        .ok()
}

/// Common time zone abbreviations and their offsets (seconds east), a subset
/// of PostgreSQL's default `timezone_abbreviations` set.
pub const ABBREVIATIONS: &[(&str, i32, bool)] = &[
    ("ACDT", 37800, true),
    ("ACST", 34200, false),
    ("AEDT", 39600, true),
    ("AEST", 36000, false),
    ("AKDT", -28800, true),
    ("AKST", -32400, false),
    ("AWST", 28800, false),
    ("BST", 3600, true),
    ("CDT", -18000, true),
    ("CEST", 7200, true),
    ("CET", 3600, false),
    ("CST", -21600, false),
    ("EDT", -14400, true),
    ("EEST", 10800, true),
    ("EET", 7200, false),
    ("EST", -18000, false),
    ("GMT", 0, false),
    ("HST", -36000, false),
    ("IST", 7200, false),
    ("JST", 32400, false),
    ("KST", 32400, false),
    ("MDT", -21600, true),
    ("MSK", 10800, false),
    ("MST", -25200, false),
    ("NZDT", 46800, true),
    ("NZST", 43200, false),
    ("PDT", -25200, true),
    ("PST", -28800, false),
    ("UCT", 0, false),
    ("UT", 0, false),
    ("UTC", 0, false),
    ("WEST", 3600, true),
    ("WET", 0, false),
    ("Z", 0, false),
    ("ZULU", 0, false),
];

/// The fixed offset of a time zone abbreviation, in any letter case.
pub fn abbreviation_offset(v: &str) -> Option<i32> {
    ABBREVIATIONS
        .iter()
        .find(|(a, _, _)| a.eq_ignore_ascii_case(v))
        .map(|&(_, secs, _)| secs)
}

/// Every zone name of the database, for pg_timezone_names.
pub fn all_zone_names() -> impl Iterator<Item = &'static str> {
    chrono_tz::TZ_VARIANTS.iter().map(|tz| tz.name())
}

/// Microseconds since 2000-01-01 as a chrono date-time, clamped to chrono's
/// range (PostgreSQL's timestamps reach a little further; the zone's rules at
/// chrono's limits apply beyond them).
fn to_naive(us: i64) -> NaiveDateTime {
    let secs = us.div_euclid(USECS_PER_SEC) + UNIX_TO_PG_EPOCH_SECS;
    let min = NaiveDateTime::MIN.and_utc().timestamp();
    let max = NaiveDateTime::MAX.and_utc().timestamp();
    chrono::DateTime::from_timestamp(secs.clamp(min, max), 0)
        .map(|d| d.naive_utc())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Microseconds since 2000-01-01 of a UTC (or wall-clock) date and time.
    fn at(y: i32, mo: u32, d: u32, h: u32, mi: u32) -> i64 {
        let t = chrono::NaiveDate::from_ymd_opt(y, mo, d)
            .unwrap()
            .and_hms_opt(h, mi, 0)
            .unwrap();
        (t.and_utc().timestamp() - UNIX_TO_PG_EPOCH_SECS) * USECS_PER_SEC
    }

    #[test]
    fn names_offsets_and_aliases() {
        let utc = TimeZone::parse("utc").unwrap();
        assert_eq!(utc.canonical_name("utc"), "UTC");
        assert_eq!(utc.offset_at_utc(0), 0);
        assert_eq!(
            TimeZone::parse("zulu").unwrap().canonical_name("zulu"),
            "Zulu"
        );
        assert_eq!(TimeZone::parse("+02"), Some(TimeZone::Fixed(7200)));
        assert_eq!(TimeZone::Fixed(7200).canonical_name("+02"), "<+02>-02");
        assert_eq!(TimeZone::parse("<+02>-02"), Some(TimeZone::Fixed(7200)));
        assert_eq!(TimeZone::parse("<-05>+05"), Some(TimeZone::Fixed(-18000)));
        assert_eq!(TimeZone::Fixed(-5 * 3600).canonical_name("-5"), "<-05>+05");
        assert_eq!(TimeZone::parse("-03:30"), Some(TimeZone::Posix(12600)));
        assert_eq!(TimeZone::Posix(12600).canonical_name("-03:30"), "-03:30");
        // What timestamptz output shows in the non-ISO DateStyles.
        assert_eq!(TimeZone::Fixed(7200).display_abbreviation(0), "+02");
        assert_eq!(TimeZone::Fixed(-8 * 3600).display_abbreviation(0), "-08");
        assert_eq!(TimeZone::Posix(12600).display_abbreviation(0), "");
        let kathmandu = TimeZone::parse("Asia/Kathmandu").unwrap();
        assert_eq!(kathmandu.display_abbreviation(100_000_000_000_000), "+0545");
        // Conversions read numbers the POSIX way (west) and know abbreviations.
        assert_eq!(
            TimeZone::parse_for_conversion("+02"),
            Some(TimeZone::Fixed(-7200))
        );
        assert_eq!(
            TimeZone::parse_for_conversion("pst"),
            Some(TimeZone::Fixed(-28800))
        );
        assert_eq!(
            TimeZone::parse_for_conversion("CET"),
            Some(TimeZone::Fixed(3600))
        );
        let paris = TimeZone::parse("europe/paris").unwrap();
        assert_eq!(paris.canonical_name("europe/paris"), "Europe/Paris");
        assert_eq!(TimeZone::parse("Mars/Olympus"), None);
        assert_eq!(TimeZone::parse(""), None);
        assert!(all_zone_names().any(|n| n == "America/Los_Angeles"));
    }

    #[test]
    fn new_york_transitions_as_postgresql() {
        let ny = TimeZone::parse("America/New_York").unwrap();
        // Winter and summer.
        assert_eq!(ny.offset_at_utc(at(2018, 1, 15, 12, 0)), -5 * 3600);
        assert_eq!(ny.offset_at_utc(at(2018, 7, 15, 12, 0)), -4 * 3600);
        assert!(ny.is_dst_at_utc(at(2018, 7, 15, 12, 0)));
        assert_eq!(
            ny.abbreviation_at_utc(at(2018, 7, 15, 12, 0)).as_deref(),
            Some("EDT")
        );
        // 02:30 on 2018-03-11 does not exist: read as standard time (-05).
        assert_eq!(ny.offset_for_local(at(2018, 3, 11, 2, 30)), -5 * 3600);
        // 01:30 on 2018-11-04 happens twice: standard time (-05) again.
        assert_eq!(ny.offset_for_local(at(2018, 11, 4, 1, 30)), -5 * 3600);
        assert_eq!(ny.offset_for_local(at(2018, 11, 4, 3, 30)), -5 * 3600);
        assert_eq!(ny.offset_for_local(at(2018, 11, 3, 3, 30)), -4 * 3600);
    }

    #[test]
    fn southern_hemisphere_transitions() {
        // Sydney: clocks go forward on 2018-10-07 02:00 and back on 2018-04-01 03:00.
        let syd = TimeZone::parse("Australia/Sydney").unwrap();
        // Skipped 02:30: the offset before the transition, +10.
        assert_eq!(syd.offset_for_local(at(2018, 10, 7, 2, 30)), 10 * 3600);
        // Repeated 02:30: the offset after the transition, +10.
        assert_eq!(syd.offset_for_local(at(2018, 4, 1, 2, 30)), 10 * 3600);
    }

    #[test]
    fn far_instants_do_not_panic() {
        let ny = TimeZone::parse("America/New_York").unwrap();
        for us in [
            i64::MIN / 2,
            -211_813_488_000_000_000,
            9_223_371_331_200_000_000,
        ] {
            let _ = ny.offset_at_utc(us);
            let _ = ny.offset_for_local(us);
        }
    }
}
