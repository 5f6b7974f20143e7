//! `real` / `double precision` text I/O as PostgreSQL 15 (extra_float_digits = 1:
//! shortest digits that round-trip, `%g`-style layout) and the float error helpers.

use std::fmt::Write as _;

use common::{PgError, PgResult, SqlState};

/// A small fixed buffer implementing `fmt::Write`, to format without allocating.
pub(crate) struct StackBuf<const N: usize> {
    buf: [u8; N],
    len: usize,
}

impl<const N: usize> StackBuf<N> {
    pub(crate) fn new() -> Self {
        StackBuf {
            buf: [0; N],
            len: 0,
        }
    }
    pub(crate) fn as_str(&self) -> &str {
        std::str::from_utf8(&self.buf[..self.len]).unwrap_or("")
    }
}

impl<const N: usize> std::fmt::Write for StackBuf<N> {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        let b = s.as_bytes();
        if self.len + b.len() > N {
            return Err(std::fmt::Error);
        }
        self.buf[self.len..self.len + b.len()].copy_from_slice(b);
        self.len += b.len();
        Ok(())
    }
}

/// Appends PostgreSQL's output of a double.
pub fn write_f64(v: f64, out: &mut String) {
    if let Some(s) = special(v) {
        out.push_str(s);
        return;
    }
    let mut buf = ryu::Buffer::new();
    let d = Decimal::parse(buf.format_finite(v));
    let d = fix_shortest(d, v.abs().to_bits(), 52, 1075, |p| {
        let mut c = StackBuf::<48>::new();
        let _ = write!(c, "{:.p$e}", v.abs());
        (
            Decimal::parse(c.as_str()),
            c.as_str().parse::<f64>().ok() == Some(v.abs()),
        )
    });
    layout(v < 0.0, &d, 15, out);
}

/// Appends PostgreSQL's output of a real.
pub fn write_f32(v: f32, out: &mut String) {
    if let Some(s) = special(v as f64) {
        out.push_str(s);
        return;
    }
    let mut buf = ryu::Buffer::new();
    let d = Decimal::parse(buf.format_finite(v));
    let d = fix_shortest(d, v.abs().to_bits() as u64, 23, 150, |p| {
        let mut c = StackBuf::<48>::new();
        let _ = write!(c, "{:.p$e}", v.abs());
        (
            Decimal::parse(c.as_str()),
            c.as_str().parse::<f32>().ok() == Some(v.abs()),
        )
    });
    layout(v < 0.0, &d, 6, out);
}

/// A positive decimal: significant digits (no leading/trailing zeros) and the
/// power of ten of the first digit.
#[derive(Clone, Copy)]
struct Decimal {
    digits: [u8; 24],
    len: usize,
    exp: i32,
}

impl Decimal {
    /// Parses Rust / ryu float output: `123.45`, `1.5e-7`, `1e20`, `0.0001`.
    fn parse(s: &str) -> Decimal {
        let s = s.trim_start_matches('-');
        let (mant, e) = match s.find(['e', 'E']) {
            Some(i) => (&s[..i], s[i + 1..].parse::<i32>().unwrap_or(0)),
            None => (s, 0),
        };
        let int_len = mant.find('.').unwrap_or(mant.len()) as i32;
        let mut d = Decimal {
            digits: [0; 24],
            len: 0,
            exp: 0,
        };
        let mut leading = 0i32;
        for c in mant.bytes().filter(u8::is_ascii_digit) {
            if d.len == 0 && c == b'0' {
                leading += 1;
                continue;
            }
            if d.len < d.digits.len() {
                d.digits[d.len] = c;
                d.len += 1;
            }
        }
        while d.len > 1 && d.digits[d.len - 1] == b'0' {
            d.len -= 1;
        }
        d.exp = e + int_len - 1 - leading;
        d
    }
    fn digits(&self) -> &str {
        std::str::from_utf8(&self.digits[..self.len]).unwrap_or("0")
    }
    /// (integer of the digits, power of ten of the last digit).
    fn int_and_k(&self) -> Option<(u64, i32)> {
        if self.len > 19 {
            return None;
        }
        let v = self.digits().parse().ok()?;
        Some((v, self.exp - (self.len as i32 - 1)))
    }
}

/// PostgreSQL's shortest output (Ryu without STRICTLY_SHORTEST) never picks a
/// decimal lying exactly halfway to a neighbouring float, and breaks ties
/// between equally short candidates toward an even last digit. `exact(p)`
/// formats with p digits after the first, and says whether that round-trips.
fn fix_shortest(
    d: Decimal,
    bits: u64,
    mant_bits: u32,
    bias: i32,
    exact: impl Fn(usize) -> (Decimal, bool),
) -> Decimal {
    let Some((digits, k)) = d.int_and_k() else {
        return d;
    };
    if on_boundary(digits, k, bits, mant_bits, bias) {
        for p in d.len..=17 {
            let (c, round_trips) = exact(p);
            let ok = round_trips
                && c.int_and_k()
                    .is_some_and(|(cd, ck)| !on_boundary(cd, ck, bits, mant_bits, bias));
            if ok {
                return c;
            }
        }
        return d;
    }
    if digits % 2 == 0 {
        return d;
    }
    let (m, e, _) = float_parts(bits, mant_bits, bias);
    if m == 0 {
        return d;
    }
    // Is 2v = m * 2^(e+1) equal to (2*digits ± 1) * 10^k?
    let (mv, ev) = (m >> m.trailing_zeros(), e + 1 + m.trailing_zeros() as i32);
    for (t, alt) in [
        (2 * digits as u128 + 1, digits + 1),
        (2 * digits as u128 - 1, digits - 1),
    ] {
        if alt != 0 && odd_dyadic(t, k) == Some((mv, ev)) {
            let mut c = StackBuf::<24>::new();
            let _ = write!(c, "{alt}");
            let mut r = Decimal::parse(c.as_str());
            r.exp = k + c.as_str().len() as i32 - 1;
            return r;
        }
    }
    d
}

/// `t * 10^k` as (odd a, b) with value a * 2^b; None when that cannot equal a
/// float midpoint (not dyadic, or far too many bits).
fn odd_dyadic(t: u128, k: i32) -> Option<(u128, i32)> {
    if t == 0 {
        return None;
    }
    let (mut a, mut b) = if k >= 0 {
        if k > 26 {
            return None;
        }
        (t.checked_mul(5u128.pow(k as u32))?, k)
    } else {
        if -k > 27 {
            return None;
        }
        let p = 5u64.pow((-k) as u32);
        // u64 arithmetic when possible: u128 division is slow.
        match u64::try_from(t) {
            Ok(t) if t % p != 0 => return None,
            Ok(t) => ((t / p) as u128, k),
            Err(_) if !t.is_multiple_of(p as u128) => return None,
            Err(_) => (t / p as u128, k),
        }
    };
    let tz = a.trailing_zeros();
    a >>= tz;
    b += tz as i32;
    Some((a, b))
}

/// The float with these bits as (m, e, just above a power of two): value m * 2^e.
fn float_parts(bits: u64, mant_bits: u32, bias: i32) -> (u128, i32, bool) {
    let exp_bits = (bits >> mant_bits) as i32;
    let frac = bits & ((1u64 << mant_bits) - 1);
    if exp_bits == 0 {
        (frac as u128, 1 - bias, false)
    } else {
        (
            (frac | (1u64 << mant_bits)) as u128,
            exp_bits - bias,
            frac == 0 && exp_bits > 1,
        )
    }
}

/// Whether digits * 10^k lies exactly halfway between the float with bits
/// `bits` and a neighbour.
fn on_boundary(digits: u64, k: i32, bits: u64, mant_bits: u32, bias: i32) -> bool {
    let Some((a, b)) = odd_dyadic(digits as u128, k) else {
        return false;
    };
    let (m, e, pow2) = float_parts(bits, mant_bits, bias);
    if (a == 2 * m + 1 || a + 1 == 2 * m) && b == e - 1 {
        return true;
    }
    // Below a power of two the lower neighbour is twice as close.
    pow2 && a + 1 == 4 * m && b == e - 2
}

fn special(v: f64) -> Option<&'static str> {
    if v.is_nan() {
        Some("NaN")
    } else if v == f64::INFINITY {
        Some("Infinity")
    } else if v == f64::NEG_INFINITY {
        Some("-Infinity")
    } else if v == 0.0 {
        Some(if v.is_sign_negative() { "-0" } else { "0" })
    } else {
        None
    }
}

/// Lays out shortest digits as PostgreSQL does: fixed notation when
/// -4 <= exponent < `fixed_limit`, else `d.ddde+XX`.
fn layout(neg: bool, d: &Decimal, fixed_limit: i32, out: &mut String) {
    let digits = d.digits();
    let exp = d.exp;
    if neg {
        out.push('-');
    }
    if (-4..fixed_limit).contains(&exp) {
        if exp >= 0 {
            let int_len = exp as usize + 1;
            if digits.len() <= int_len {
                out.push_str(digits);
                for _ in digits.len()..int_len {
                    out.push('0');
                }
            } else {
                out.push_str(&digits[..int_len]);
                out.push('.');
                out.push_str(&digits[int_len..]);
            }
        } else {
            out.push_str("0.");
            for _ in 0..(-exp - 1) {
                out.push('0');
            }
            out.push_str(digits);
        }
    } else {
        out.push_str(&digits[..1]);
        if digits.len() > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        out.push('e');
        out.push(if exp < 0 { '-' } else { '+' });
        let a = exp.unsigned_abs();
        if a < 10 {
            out.push('0');
        }
        let _ = write!(out, "{a}");
    }
}

fn is_pg_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r' | '\x0b' | '\x0c')
}

/// Splits off surrounding whitespace as PostgreSQL's isspace() does.
pub(crate) fn trim_pg(s: &str) -> &str {
    s.trim_matches(is_pg_space)
}

fn float_syntax_error(type_name: &str, input: &str) -> PgError {
    PgError::new(
        SqlState::INVALID_TEXT_REPRESENTATION,
        format!("invalid input syntax for type {type_name}: \"{input}\""),
    )
}

fn float_range_error(type_name: &str, input: &str) -> PgError {
    PgError::new(
        SqlState::NUMERIC_VALUE_OUT_OF_RANGE,
        format!("\"{input}\" is out of range for type {type_name}"),
    )
}

/// Whether a decimal literal's mantissa has a nonzero digit.
fn mantissa_nonzero(s: &str) -> bool {
    s.bytes()
        .take_while(|b| *b != b'e' && *b != b'E')
        .any(|b| (b'1'..=b'9').contains(&b))
}

fn is_infinity_literal(s: &str) -> bool {
    let s = s.strip_prefix(['+', '-']).unwrap_or(s);
    s.eq_ignore_ascii_case("infinity") || s.eq_ignore_ascii_case("inf")
}

fn valid_float_syntax(s: &str) -> bool {
    // Rust accepts the forms strtod accepts for decimals, plus inf/nan words;
    // reject its extras ("infinity" variants are fine, "nan" with sign is not PG).
    let body = s.strip_prefix(['+', '-']).unwrap_or(s);
    !(body.eq_ignore_ascii_case("nan") && body.len() != s.len())
}

/// Parses `double precision` input (22P02 / 22003 as PostgreSQL).
pub fn parse_f64(input: &str) -> PgResult<f64> {
    let s = trim_pg(input);
    if s.is_empty() || !valid_float_syntax(s) {
        return Err(float_syntax_error("double precision", input));
    }
    let v: f64 = s
        .parse()
        .map_err(|_| float_syntax_error("double precision", input))?;
    if (v.is_infinite() && !is_infinity_literal(s)) || (v == 0.0 && mantissa_nonzero(s)) {
        return Err(float_range_error("double precision", s));
    }
    Ok(v)
}

/// Parses `real` input.
pub fn parse_f32(input: &str) -> PgResult<f32> {
    let s = trim_pg(input);
    if s.is_empty() || !valid_float_syntax(s) {
        return Err(float_syntax_error("real", input));
    }
    let v: f32 = s.parse().map_err(|_| float_syntax_error("real", input))?;
    if (v.is_infinite() && !is_infinity_literal(s)) || (v == 0.0 && mantissa_nonzero(s)) {
        return Err(float_range_error("real", s));
    }
    Ok(v)
}

/// 22003 "value out of range: overflow".
pub fn overflow_error() -> PgError {
    PgError::new(
        SqlState::NUMERIC_VALUE_OUT_OF_RANGE,
        "value out of range: overflow",
    )
}

/// 22003 "value out of range: underflow".
pub fn underflow_error() -> PgError {
    PgError::new(
        SqlState::NUMERIC_VALUE_OUT_OF_RANGE,
        "value out of range: underflow",
    )
}

/// Checks a float8 result as PostgreSQL's float_overflow/underflow checks do:
/// infinite result from finite inputs overflows; zero result when
/// `zero_ok` is false underflows.
pub fn check_f64(result: f64, inf_ok: bool, zero_ok: bool) -> PgResult<f64> {
    if result.is_infinite() && !inf_ok {
        return Err(overflow_error());
    }
    if result == 0.0 && !zero_ok {
        return Err(underflow_error());
    }
    Ok(result)
}

/// Same as `check_f64` for float4.
pub fn check_f32(result: f32, inf_ok: bool, zero_ok: bool) -> PgResult<f32> {
    if result.is_infinite() && !inf_ok {
        return Err(overflow_error());
    }
    if result == 0.0 && !zero_ok {
        return Err(underflow_error());
    }
    Ok(result)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f8(v: f64) -> String {
        let mut s = String::new();
        write_f64(v, &mut s);
        s
    }
    fn f4(v: f32) -> String {
        let mut s = String::new();
        write_f32(v, &mut s);
        s
    }

    #[test]
    fn output() {
        assert_eq!(f8(1e20), "1e+20");
        assert_eq!(f8(1e-5), "1e-05");
        assert_eq!(f8(0.0001), "0.0001");
        assert_eq!(f8(123456789012345.0), "123456789012345");
        assert_eq!(f8(1234567890123456.0), "1.234567890123456e+15");
        assert_eq!(f8(1e15), "1e+15");
        assert_eq!(f8(0.1 + 0.2), "0.30000000000000004");
        assert_eq!(f8(1.5e-7), "1.5e-07");
        assert_eq!(f8(-0.0), "-0");
        assert_eq!(f8(1e100), "1e+100");
        assert_eq!(f8(-2.5), "-2.5");
        assert_eq!(f8(100.0), "100");
        assert_eq!(f8(f64::NAN), "NaN");
        assert_eq!(f8(f64::NEG_INFINITY), "-Infinity");
        assert_eq!(f8(1.7976931348623157e308), "1.7976931348623157e+308");
        assert_eq!(f8(5e-324), "5e-324");
        assert_eq!(f4(1e6), "1e+06");
        assert_eq!(f4(123456.0), "123456");
        assert_eq!(f4(1234567.0), "1.234567e+06");
        assert_eq!(f4(0.1), "0.1");
        assert_eq!(f4(1.5), "1.5");
        assert_eq!(f4(38546992.0), "3.8546992e+07");
        assert_eq!(f4(2_386_501.2), "2.3865012e+06");
        assert_eq!(f4(371_756.63), "371756.62");
        assert_eq!(f4(-214_920.13), "-214920.12");
    }

    #[test]
    fn input() {
        assert_eq!(parse_f64(" 1.5 ").unwrap(), 1.5);
        assert_eq!(parse_f64("infinity").unwrap(), f64::INFINITY);
        assert_eq!(parse_f64("-Infinity").unwrap(), f64::NEG_INFINITY);
        assert!(parse_f64(" nan ").unwrap().is_nan());
        assert_eq!(parse_f64(".5").unwrap(), 0.5);
        assert_eq!(parse_f64("5.").unwrap(), 5.0);
        assert_eq!(parse_f64("1e5").unwrap(), 1e5);
        assert_eq!(parse_f64("-0").unwrap().to_bits(), (-0.0f64).to_bits());
        let e = parse_f64("1e400").unwrap_err();
        assert_eq!(e.code, SqlState::NUMERIC_VALUE_OUT_OF_RANGE);
        assert_eq!(
            e.message,
            "\"1e400\" is out of range for type double precision"
        );
        assert_eq!(
            parse_f64("1e-400").unwrap_err().message,
            "\"1e-400\" is out of range for type double precision"
        );
        let e = parse_f64("abc").unwrap_err();
        assert_eq!(e.code, SqlState::INVALID_TEXT_REPRESENTATION);
        assert_eq!(
            e.message,
            "invalid input syntax for type double precision: \"abc\""
        );
        assert!(parse_f64("").is_err());
        assert!(parse_f64("1e").is_err());
        assert_eq!(
            parse_f32("1e39").unwrap_err().message,
            "\"1e39\" is out of range for type real"
        );
        assert_eq!(parse_f32("-inf").unwrap(), f32::NEG_INFINITY);
        assert_eq!(parse_f64("0.0e10").unwrap(), 0.0);
    }
}
