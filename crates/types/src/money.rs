//! `money` (PostgreSQL's cash.c) under lc_monetary C: an int8 count of
//! cents, `$` as the currency symbol, `,` grouping by three, `.` before two
//! fraction digits, `-` for negatives, `(...)` accepted on input.

use common::{PgError, PgResult, SqlState};

use crate::numeric::Numeric;

fn out_of_range() -> PgError {
    PgError::new(SqlState::NUMERIC_VALUE_OUT_OF_RANGE, "money out of range")
}

/// cash_in.
pub fn parse(input: &str) -> PgResult<i64> {
    let range = || {
        PgError::new(
            SqlState::NUMERIC_VALUE_OUT_OF_RANGE,
            format!("value \"{input}\" is out of range for type money"),
        )
    };
    let s = input.as_bytes();
    let mut i = 0;
    let skip_blanks = |i: &mut usize| {
        while s.get(*i).is_some_and(u8::is_ascii_whitespace) {
            *i += 1;
        }
    };
    let skip_symbol = |i: &mut usize| {
        if s.get(*i) == Some(&b'$') {
            *i += 1;
        }
    };
    skip_blanks(&mut i);
    skip_symbol(&mut i);
    skip_blanks(&mut i);
    let mut negative = false;
    match s.get(i) {
        Some(b'-') | Some(b'(') => {
            negative = true;
            i += 1;
        }
        Some(b'+') => i += 1,
        _ => {}
    }
    skip_blanks(&mut i);
    skip_symbol(&mut i);
    skip_blanks(&mut i);
    // Built negative, as PostgreSQL does, so the most negative value fits.
    let mut value: i64 = 0;
    let mut seen_dot = false;
    let mut decimals = 0;
    while let Some(&c) = s.get(i) {
        if c.is_ascii_digit() && (!seen_dot || decimals < 2) {
            value = value
                .checked_mul(10)
                .and_then(|v| v.checked_sub((c - b'0') as i64))
                .ok_or_else(range)?;
            if seen_dot {
                decimals += 1;
            }
        } else if c == b'.' && !seen_dot {
            seen_dot = true;
        } else if c != b',' {
            break;
        }
        i += 1;
    }
    // Round on the next digit.
    if s.get(i).is_some_and(|c| (b'5'..=b'9').contains(c)) {
        value = value.checked_sub(1).ok_or_else(range)?;
    }
    for _ in decimals..2 {
        value = value.checked_mul(10).ok_or_else(range)?;
    }
    while s.get(i).is_some_and(u8::is_ascii_digit) {
        i += 1;
    }
    while let Some(&c) = s.get(i) {
        match c {
            b')' => {}
            b'-' => negative = true,
            b'+' | b'$' => {}
            c if c.is_ascii_whitespace() => {}
            _ => {
                return Err(PgError::new(
                    SqlState::INVALID_TEXT_REPRESENTATION,
                    format!("invalid input syntax for type money: \"{input}\""),
                ))
            }
        }
        i += 1;
    }
    if negative {
        Ok(value)
    } else {
        value.checked_neg().ok_or_else(range)
    }
}

/// cash_out: `$1,234.56`, `-$1.00`.
pub fn format(v: i64, out: &mut String) {
    if v < 0 {
        out.push('-');
    }
    out.push('$');
    let u = v.unsigned_abs();
    let digits = (u / 100).to_string();
    let first = digits.len() % 3;
    for (k, c) in digits.chars().enumerate() {
        if k > 0 && (k + 3 - first).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out.push('.');
    let cents = u % 100;
    out.push((b'0' + (cents / 10) as u8) as char);
    out.push((b'0' + (cents % 10) as u8) as char);
}

/// The text form as a String.
pub fn to_string(v: i64) -> String {
    let mut s = String::new();
    format(v, &mut s);
    s
}

/// money + money, money - money.
pub fn add(a: i64, b: i64) -> PgResult<i64> {
    a.checked_add(b).ok_or_else(out_of_range)
}

pub fn sub(a: i64, b: i64) -> PgResult<i64> {
    a.checked_sub(b).ok_or_else(out_of_range)
}

/// money * integer.
pub fn mul_int(a: i64, n: i64) -> PgResult<i64> {
    a.checked_mul(n).ok_or_else(out_of_range)
}

/// money / integer: truncating; i64::MIN / -1 traps as PostgreSQL's does.
pub fn div_int(a: i64, n: i64) -> PgResult<i64> {
    if n == 0 {
        return Err(PgError::new(SqlState::DIVISION_BY_ZERO, "division by zero"));
    }
    a.checked_div(n).ok_or_else(|| {
        PgError::new(SqlState("22P01"), "floating-point exception").with_detail(
            "An invalid floating-point operation was signaled. This probably means an out-of-range result or an invalid operation, such as division by zero.",
        )
    })
}

/// A double rounded (rint) to cents, 22003 outside int8.
fn from_f64(r: f64) -> PgResult<i64> {
    let r = r.round_ties_even();
    if r.is_nan() || !(-9223372036854775808.0..9223372036854775808.0).contains(&r) {
        return Err(out_of_range());
    }
    Ok(r as i64)
}

/// money * float8.
pub fn mul_float(a: i64, f: f64) -> PgResult<i64> {
    from_f64(a as f64 * f)
}

/// money / float8.
pub fn div_float(a: i64, f: f64) -> PgResult<i64> {
    if f == 0.0 {
        return Err(PgError::new(SqlState::DIVISION_BY_ZERO, "division by zero"));
    }
    from_f64(a as f64 / f)
}

/// money / money, a double.
pub fn div_money(a: i64, b: i64) -> PgResult<f64> {
    if b == 0 {
        return Err(PgError::new(SqlState::DIVISION_BY_ZERO, "division by zero"));
    }
    Ok(a as f64 / b as f64)
}

/// money → numeric, with two fraction digits.
pub fn to_numeric(v: i64) -> PgResult<Numeric> {
    Numeric::from_i64(v)
        .div(&Numeric::from_i64(100))?
        .apply_typmod(crate::numeric::numeric_typmod(40, 2))
}

/// numeric → money: times 100, rounded half away from zero (22003
/// "bigint out of range" beyond int8, as numeric_int8 reports).
pub fn from_numeric(n: &Numeric) -> PgResult<i64> {
    n.mul(&Numeric::from_i64(100))?.to_i64()
}

/// int4 / int8 → money.
pub fn from_int(n: i64) -> PgResult<i64> {
    n.checked_mul(100)
        .ok_or_else(|| PgError::new(SqlState::NUMERIC_VALUE_OUT_OF_RANGE, "bigint out of range"))
}

/// cash_words: the amount in English words.
pub fn words(v: i64) -> String {
    fn small(n: u64, out: &mut String) {
        const ONES: [&str; 20] = [
            "zero",
            "one",
            "two",
            "three",
            "four",
            "five",
            "six",
            "seven",
            "eight",
            "nine",
            "ten",
            "eleven",
            "twelve",
            "thirteen",
            "fourteen",
            "fifteen",
            "sixteen",
            "seventeen",
            "eighteen",
            "nineteen",
        ];
        const TENS: [&str; 10] = [
            "", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety",
        ];
        let (h, rest) = (n / 100, n % 100);
        let mut parts = Vec::new();
        if h > 0 {
            parts.push(format!("{} hundred", ONES[h as usize]));
        }
        if rest >= 20 {
            if rest % 10 == 0 {
                parts.push(TENS[(rest / 10) as usize].to_string());
            } else {
                parts.push(format!(
                    "{} {}",
                    TENS[(rest / 10) as usize],
                    ONES[(rest % 10) as usize]
                ));
            }
        } else if rest > 0 || h == 0 {
            parts.push(ONES[rest as usize].to_string());
        }
        out.push_str(&parts.join(" "));
    }
    let mut out = String::new();
    if v < 0 {
        out.push_str("minus ");
    }
    let u = v.unsigned_abs();
    let dollars = u / 100;
    let cents = u % 100;
    let scales = [
        (1_000_000_000_000_000u64, "quadrillion"),
        (1_000_000_000_000, "trillion"),
        (1_000_000_000, "billion"),
        (1_000_000, "million"),
        (1_000, "thousand"),
    ];
    let mut rest = dollars;
    let mut any = false;
    for (unit, name) in scales {
        let q = rest / unit;
        if q > 0 {
            if any {
                out.push(' ');
            }
            if q >= 1000 {
                // More than 999 quadrillion: PostgreSQL prints the count whole.
                out.push_str(&q.to_string());
            } else {
                small(q, &mut out);
            }
            out.push(' ');
            out.push_str(name);
            any = true;
        }
        rest %= unit;
    }
    if rest > 0 || !any {
        if any {
            out.push(' ');
        }
        small(rest, &mut out);
    }
    out.push_str(if dollars == 1 {
        " dollar and "
    } else {
        " dollars and "
    });
    small(cents, &mut out);
    out.push_str(if cents == 1 { " cent" } else { " cents" });
    // Capitalise the first letter.
    let mut c = out.chars();
    match c.next() {
        Some(f) => f.to_uppercase().collect::<String>() + c.as_str(),
        None => out,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> String {
        match parse(s) {
            Ok(v) => to_string(v),
            Err(e) => format!("ERROR {}: {}", e.code.0, e.message),
        }
    }

    #[test]
    fn input_output() {
        assert_eq!(p(""), "$0.00");
        assert_eq!(p("  $ -1,234.567 "), "-$1,234.57");
        assert_eq!(p("(1.00)"), "-$1.00");
        assert_eq!(p("1.00-"), "-$1.00");
        assert_eq!(p("$-1"), "-$1.00");
        assert_eq!(p("12.3$"), "$12.30");
        assert_eq!(p("1,,2"), "$12.00");
        assert_eq!(p("92233720368547758.07"), "$92,233,720,368,547,758.07");
        assert_eq!(p("-92233720368547758.08"), "-$92,233,720,368,547,758.08");
        assert_eq!(
            p("92233720368547758.08"),
            "ERROR 22003: value \"92233720368547758.08\" is out of range for type money"
        );
        assert_eq!(
            p("-92233720368547758.085"),
            "ERROR 22003: value \"-92233720368547758.085\" is out of range for type money"
        );
        assert_eq!(
            p("1.2.3"),
            "ERROR 22P02: invalid input syntax for type money: \"1.2.3\""
        );
        assert_eq!(p("1000"), "$1,000.00");
        assert_eq!(p("100"), "$100.00");
        assert_eq!(p("0.05"), "$0.05");
    }

    #[test]
    fn arithmetic() {
        assert_eq!(div_int(100, 3).unwrap(), 33);
        assert_eq!(div_int(-100, 3).unwrap(), -33);
        assert_eq!(div_int(i64::MIN, -1).unwrap_err().code.0, "22P01");
        assert_eq!(mul_float(200, 1.5).unwrap(), 300);
        assert_eq!(add(i64::MAX, 1).unwrap_err().message, "money out of range");
        assert_eq!(div_money(1000, 300).unwrap(), 1000.0 / 300.0);
        assert_eq!(
            from_numeric(&Numeric::parse("1.005").unwrap()).unwrap(),
            101
        );
        assert_eq!(to_numeric(1234).unwrap().to_string(), "12.34");
    }

    #[test]
    fn in_words() {
        assert_eq!(
            words(123456),
            "One thousand two hundred thirty four dollars and fifty six cents"
        );
        assert_eq!(words(101), "One dollar and one cent");
        assert_eq!(words(0), "Zero dollars and zero cents");
    }
}
