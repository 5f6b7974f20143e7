//! Arbitrary-precision `numeric` with PostgreSQL's semantics (utils/adt/numeric.c):
//! a signed decimal coefficient with a display scale (`dscale`), plus NaN and
//! ±Infinity. Values whose coefficient fits in an `i128` avoid heap allocation.

use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};

use num_bigint::BigInt;
use num_integer::Integer;
use num_traits::{Signed, ToPrimitive, Zero};

use common::{PgError, PgResult, SqlState};

mod binary;
mod math;
#[cfg(test)]
mod tests;

/// Largest precision of `numeric(p,s)`.
pub const NUMERIC_MAX_PRECISION: i32 = 1000;
/// Scale limits of `numeric(p,s)` (PostgreSQL 15 allows negative scales).
pub const NUMERIC_MIN_SCALE: i32 = -1000;
pub const NUMERIC_MAX_SCALE: i32 = 1000;
/// Largest scale a computed result gets automatically.
pub const NUMERIC_MAX_DISPLAY_SCALE: i32 = 1000;
/// Least significant digits of inexact results (division, sqrt, ...).
pub const NUMERIC_MIN_SIG_DIGITS: i32 = 16;
/// Limit of the scale argument of round()/trunc().
pub const NUMERIC_MAX_RESULT_SCALE: i32 = 2000;
/// Largest display scale a value can have.
pub const NUMERIC_DSCALE_MAX: i32 = 0x3FFF;
/// Most decimal digits before the decimal point.
const MAX_INT_DIGITS: i64 = 131072;

/// Builds the typmod of `numeric(precision, scale)`.
pub fn numeric_typmod(precision: i32, scale: i32) -> i32 {
    ((precision << 16) | (scale & 0x7ff)) + 4
}

/// Decodes a numeric typmod into (precision, scale); None for -1 (unconstrained).
pub fn numeric_typmod_precision_scale(typmod: i32) -> Option<(i32, i32)> {
    if typmod < 4 {
        return None;
    }
    let t = typmod - 4;
    let precision = (t >> 16) & 0xffff;
    let scale = ((t & 0x7ff) ^ 1024) - 1024;
    Some((precision, scale))
}

/// A PostgreSQL `numeric` value. Equality, ordering and hashing are by value
/// (`1.0 == 1.00`); NaN equals NaN and sorts above +Infinity.
#[derive(Clone)]
pub struct Numeric(Repr);

#[derive(Clone)]
enum Repr {
    /// Coefficient and display scale: value = coef * 10^-scale.
    Small(i128, u16),
    /// Same, for coefficients that do not fit in i128 (invariant).
    Big(BigInt, u16),
    NaN,
    PosInf,
    NegInf,
}

/// A borrowed view of a finite coefficient.
#[derive(Clone, Copy)]
enum Coef<'a> {
    S(i128),
    B(&'a BigInt),
}

impl Coef<'_> {
    fn to_big(self) -> BigInt {
        match self {
            Coef::S(v) => BigInt::from(v),
            Coef::B(b) => b.clone(),
        }
    }
    fn signum(self) -> i32 {
        match self {
            Coef::S(v) => v.signum() as i32,
            Coef::B(b) => {
                if b.is_negative() {
                    -1
                } else if b.is_zero() {
                    0
                } else {
                    1
                }
            }
        }
    }
}

pub(crate) const POW10_I128: [i128; 39] = {
    let mut t = [1i128; 39];
    let mut i = 1;
    while i < 39 {
        t[i] = t[i - 1] * 10;
        i += 1;
    }
    t
};

pub(crate) fn pow10_big(n: u32) -> BigInt {
    if (n as usize) < POW10_I128.len() {
        BigInt::from(POW10_I128[n as usize])
    } else {
        num_traits::pow(BigInt::from(10u32), n as usize)
    }
}

/// c * 10^k, None on overflow.
fn scale_up_i128(c: i128, k: u32) -> Option<i128> {
    if k == 0 {
        return Some(c);
    }
    if c == 0 {
        return Some(0);
    }
    POW10_I128.get(k as usize).and_then(|p| c.checked_mul(*p))
}

/// Number of decimal digits of |c| (1 for zero).
fn ndigits_u128(c: u128) -> u32 {
    if c == 0 {
        1
    } else {
        c.ilog10() + 1
    }
}

fn ndigits_big(b: &BigInt) -> u64 {
    let bits = b.bits();
    if bits <= 127 {
        return ndigits_u128(b.magnitude().to_u128().unwrap_or(0)) as u64;
    }
    let est = ((bits - 1) as f64 * std::f64::consts::LOG10_2).floor() as u64 + 1;
    if b.magnitude() >= pow10_big(est as u32).magnitude() {
        est + 1
    } else {
        est
    }
}

/// c / 10^k rounded half away from zero.
fn round_div_i128(c: i128, k: u32) -> i128 {
    if k == 0 {
        return c;
    }
    let Some(&d) = POW10_I128.get(k as usize) else {
        return 0;
    };
    let q = c / d;
    let r = (c % d).unsigned_abs();
    if r >= d.unsigned_abs() - r {
        q + c.signum()
    } else {
        q
    }
}

fn round_div_big(c: &BigInt, k: u32) -> BigInt {
    if k == 0 {
        return c.clone();
    }
    let d = pow10_big(k);
    let (q, r) = c.div_rem(&d);
    let r2 = r.abs() * 2u32;
    if r2 >= d {
        if c.is_negative() {
            q - 1
        } else {
            q + 1
        }
    } else {
        q
    }
}

/// Quotient num/den rounded half away from zero.
pub(crate) fn round_quotient_big(num: &BigInt, den: &BigInt) -> BigInt {
    let (q, r) = num.div_rem(den);
    if r.is_zero() {
        return q;
    }
    let r2 = r.abs() * 2u32;
    if r2 >= den.abs() {
        if num.is_negative() != den.is_negative() {
            q - 1
        } else {
            q + 1
        }
    } else {
        q
    }
}

fn overflow_error() -> PgError {
    PgError::new(
        SqlState::NUMERIC_VALUE_OUT_OF_RANGE,
        "value overflows numeric format",
    )
}

fn div_zero_error() -> PgError {
    PgError::new(SqlState::DIVISION_BY_ZERO, "division by zero")
}

impl Numeric {
    // ----- construction -----

    pub const ZERO: Numeric = Numeric(Repr::Small(0, 0));

    pub fn nan() -> Self {
        Numeric(Repr::NaN)
    }
    pub fn infinity() -> Self {
        Numeric(Repr::PosInf)
    }
    pub fn neg_infinity() -> Self {
        Numeric(Repr::NegInf)
    }
    /// `coef * 10^-scale`; `scale` is the display scale (≤ 16383).
    pub fn from_parts(coef: i128, scale: u16) -> Self {
        Numeric(Repr::Small(coef, scale))
    }
    /// Same as `from_parts` for a big coefficient.
    pub fn from_big_parts(coef: BigInt, scale: u16) -> Self {
        match coef.to_i128() {
            Some(v) => Numeric(Repr::Small(v, scale)),
            None => Numeric(Repr::Big(coef, scale)),
        }
    }
    pub fn from_i64(v: i64) -> Self {
        Numeric(Repr::Small(v as i128, 0))
    }

    fn finite(c: BigInt, scale: u16) -> PgResult<Self> {
        let n = Numeric::from_big_parts(c, scale);
        if let Repr::Big(b, s) = &n.0 {
            if ndigits_big(b) as i64 - *s as i64 > MAX_INT_DIGITS {
                return Err(overflow_error());
            }
        }
        Ok(n)
    }

    /// Like `finite`, rounding away digits beyond NUMERIC_DSCALE_MAX.
    fn finite_capped(c: BigInt, scale: u32) -> PgResult<Self> {
        if scale > NUMERIC_DSCALE_MAX as u32 {
            let c = round_div_big(&c, scale - NUMERIC_DSCALE_MAX as u32);
            Numeric::finite(c, NUMERIC_DSCALE_MAX as u16)
        } else {
            Numeric::finite(c, scale as u16)
        }
    }

    // ----- inspection -----

    pub fn is_nan(&self) -> bool {
        matches!(self.0, Repr::NaN)
    }
    /// ±Infinity.
    pub fn is_infinite(&self) -> bool {
        matches!(self.0, Repr::PosInf | Repr::NegInf)
    }
    pub fn is_finite(&self) -> bool {
        matches!(self.0, Repr::Small(..) | Repr::Big(..))
    }
    pub fn is_zero(&self) -> bool {
        matches!(self.0, Repr::Small(0, _))
    }
    /// -1, 0 or 1 (NaN: 0, ±Infinity: ±1).
    pub fn signum(&self) -> i32 {
        match &self.0 {
            Repr::Small(c, _) => c.signum() as i32,
            Repr::Big(b, _) => Coef::B(b).signum(),
            Repr::NaN => 0,
            Repr::PosInf => 1,
            Repr::NegInf => -1,
        }
    }
    pub fn is_negative(&self) -> bool {
        self.signum() < 0
    }
    /// Display scale (digits after the decimal point); 0 for NaN and infinities.
    pub fn scale(&self) -> u16 {
        match &self.0 {
            Repr::Small(_, s) | Repr::Big(_, s) => *s,
            _ => 0,
        }
    }
    fn coef(&self) -> Option<(Coef<'_>, u16)> {
        match &self.0 {
            Repr::Small(c, s) => Some((Coef::S(*c), *s)),
            Repr::Big(b, s) => Some((Coef::B(b), *s)),
            _ => None,
        }
    }
    /// Coefficient at scale `s` (≥ own scale) as BigInt.
    fn big_at(&self, s: u16) -> BigInt {
        let (c, own) = self.coef().expect("finite");
        let c = c.to_big();
        if s > own {
            c * pow10_big((s - own) as u32)
        } else {
            c
        }
    }
    /// Coefficient at scale `s` (≥ own scale) as i128 if it fits.
    fn small_at(&self, s: u16) -> Option<i128> {
        match &self.0 {
            Repr::Small(c, own) => scale_up_i128(*c, (s - own) as u32),
            _ => None,
        }
    }
    /// (coefficient, scale) with trailing fractional zeros removed.
    fn normalized_small(c: i128, s: u16) -> (i128, u16) {
        let (mut c, mut s) = (c, s);
        if c == 0 {
            return (0, 0);
        }
        while s > 0 && c % 10 == 0 {
            c /= 10;
            s -= 1;
        }
        (c, s)
    }
    /// Decimal exponent of the leading digit (floor(log10|x|)) of a finite nonzero value.
    fn leading_exponent(&self) -> i64 {
        match &self.0 {
            Repr::Small(c, s) => ndigits_u128(c.unsigned_abs()) as i64 - 1 - *s as i64,
            Repr::Big(b, s) => ndigits_big(b) as i64 - 1 - *s as i64,
            _ => 0,
        }
    }
    /// The first `n` significant decimal digits of |x| as an integer (zero-padded)
    /// for a finite value.
    fn leading_digits(&self, n: u32) -> u64 {
        match &self.0 {
            Repr::Small(c, _) => {
                let a = c.unsigned_abs();
                let nd = ndigits_u128(a);
                if nd >= n {
                    (a / 10u128.pow(nd - n)) as u64
                } else {
                    (a * 10u128.pow(n - nd)) as u64
                }
            }
            Repr::Big(b, _) => {
                let nd = ndigits_big(b) as u32;
                let a = b.abs();
                if nd >= n {
                    (a / pow10_big(nd - n)).to_u64().unwrap_or(0)
                } else {
                    (a * pow10_big(n - nd)).to_u64().unwrap_or(0)
                }
            }
            _ => 0,
        }
    }
    /// PostgreSQL's (weight, first base-10000 digit) of a finite value; (0, 0) for zero.
    fn nbase_weight_first(&self) -> (i64, u64) {
        if self.is_zero() {
            return (0, 0);
        }
        let e = self.leading_exponent();
        let w = e.div_euclid(4);
        let r = e.rem_euclid(4) as u32;
        (w, self.leading_digits(r + 1))
    }

    // ----- arithmetic -----

    pub fn neg(&self) -> Numeric {
        Numeric(match &self.0 {
            Repr::Small(c, s) => match c.checked_neg() {
                Some(v) => Repr::Small(v, *s),
                None => Repr::Big(-BigInt::from(*c), *s),
            },
            Repr::Big(b, s) => return Numeric::from_big_parts(-b, *s),
            Repr::NaN => Repr::NaN,
            Repr::PosInf => Repr::NegInf,
            Repr::NegInf => Repr::PosInf,
        })
    }

    pub fn abs(&self) -> Numeric {
        if self.signum() < 0 {
            self.neg()
        } else {
            self.clone()
        }
    }

    pub fn add(&self, other: &Numeric) -> PgResult<Numeric> {
        match (&self.0, &other.0) {
            (Repr::NaN, _) | (_, Repr::NaN) => return Ok(Numeric::nan()),
            (Repr::PosInf, Repr::NegInf) | (Repr::NegInf, Repr::PosInf) => {
                return Ok(Numeric::nan())
            }
            (Repr::PosInf | Repr::NegInf, _) => return Ok(self.clone()),
            (_, Repr::PosInf | Repr::NegInf) => return Ok(other.clone()),
            _ => {}
        }
        let s = self.scale().max(other.scale());
        if let (Some(a), Some(b)) = (self.small_at(s), other.small_at(s)) {
            if let Some(c) = a.checked_add(b) {
                return Ok(Numeric(Repr::Small(c, s)));
            }
        }
        Numeric::finite(self.big_at(s) + other.big_at(s), s)
    }

    pub fn sub(&self, other: &Numeric) -> PgResult<Numeric> {
        self.add(&other.neg())
    }

    pub fn mul(&self, other: &Numeric) -> PgResult<Numeric> {
        match (&self.0, &other.0) {
            (Repr::NaN, _) | (_, Repr::NaN) => return Ok(Numeric::nan()),
            (Repr::PosInf | Repr::NegInf, _) | (_, Repr::PosInf | Repr::NegInf) => {
                let sign = self.signum() * other.signum();
                return Ok(match sign {
                    0 => Numeric::nan(),
                    1 => Numeric::infinity(),
                    _ => Numeric::neg_infinity(),
                });
            }
            (Repr::Small(a, sa), Repr::Small(b, sb)) => {
                let s = *sa as u32 + *sb as u32;
                if s <= NUMERIC_DSCALE_MAX as u32 {
                    if let Some(c) = a.checked_mul(*b) {
                        return Ok(Numeric(Repr::Small(c, s as u16)));
                    }
                }
            }
            _ => {}
        }
        let (a, sa) = self.coef().expect("finite");
        let (b, sb) = other.coef().expect("finite");
        Numeric::finite_capped(a.to_big() * b.to_big(), sa as u32 + sb as u32)
    }

    /// PostgreSQL's select_div_scale.
    fn div_scale(&self, other: &Numeric) -> u16 {
        let (w1, f1) = self.nbase_weight_first();
        let (w2, f2) = other.nbase_weight_first();
        let mut qweight = w1 - w2;
        if f1 <= f2 {
            qweight -= 1;
        }
        let rscale = (NUMERIC_MIN_SIG_DIGITS as i64 - qweight * 4)
            .max(self.scale() as i64)
            .max(other.scale() as i64)
            .clamp(0, NUMERIC_MAX_DISPLAY_SCALE as i64);
        rscale as u16
    }

    /// `self / other` with PostgreSQL's result scale.
    pub fn div(&self, other: &Numeric) -> PgResult<Numeric> {
        if let Some(r) = self.div_special(other)? {
            return Ok(r);
        }
        let rscale = self.div_scale(other);
        self.div_round(other, rscale as i64)
    }

    /// Handles NaN / infinity / zero divisor cases of division.
    fn div_special(&self, other: &Numeric) -> PgResult<Option<Numeric>> {
        match (&self.0, &other.0) {
            (Repr::NaN, _) | (_, Repr::NaN) => Ok(Some(Numeric::nan())),
            (Repr::PosInf | Repr::NegInf, Repr::PosInf | Repr::NegInf) => Ok(Some(Numeric::nan())),
            (Repr::PosInf | Repr::NegInf, _) => {
                if other.is_zero() {
                    return Err(div_zero_error());
                }
                Ok(Some(if self.signum() * other.signum() > 0 {
                    Numeric::infinity()
                } else {
                    Numeric::neg_infinity()
                }))
            }
            (_, Repr::PosInf | Repr::NegInf) => Ok(Some(Numeric::ZERO)),
            _ => {
                if other.is_zero() {
                    return Err(div_zero_error());
                }
                Ok(None)
            }
        }
    }

    /// Finite quotient rounded (half away from zero) to `rscale` digits.
    pub(crate) fn div_round(&self, other: &Numeric, rscale: i64) -> PgResult<Numeric> {
        let (sa, sb) = (self.scale() as i64, other.scale() as i64);
        let k = rscale - sa + sb;
        let rs = rscale.max(0) as u16;
        if let (Repr::Small(a, _), Repr::Small(b, _)) = (&self.0, &other.0) {
            let (num, den) = if k >= 0 {
                (scale_up_i128(*a, k as u32), Some(*b))
            } else {
                (Some(*a), scale_up_i128(*b, (-k) as u32))
            };
            if let (Some(num), Some(den)) = (num, den) {
                let q = num / den;
                let r = (num % den).unsigned_abs();
                let q = if r >= den.unsigned_abs() - r {
                    q + if (num < 0) != (den < 0) { -1 } else { 1 }
                } else {
                    q
                };
                return Ok(Numeric(Repr::Small(q, rs)));
            }
        }
        let (a, _) = self.coef().expect("finite");
        let (b, _) = other.coef().expect("finite");
        let (num, den) = if k >= 0 {
            (a.to_big() * pow10_big(k as u32), b.to_big())
        } else {
            (a.to_big(), b.to_big() * pow10_big((-k) as u32))
        };
        Numeric::finite(round_quotient_big(&num, &den), rs)
    }

    /// Quotient truncated toward zero to an integer (PostgreSQL's `div()`).
    pub fn div_trunc(&self, other: &Numeric) -> PgResult<Numeric> {
        if let Some(r) = self.div_special(other)? {
            return Ok(r);
        }
        let s = self.scale().max(other.scale());
        if let (Some(a), Some(b)) = (self.small_at(s), other.small_at(s)) {
            if let Some(q) = a.checked_div(b) {
                return Ok(Numeric(Repr::Small(q, 0)));
            }
        }
        Numeric::finite(self.big_at(s) / other.big_at(s), 0)
    }

    /// Remainder with the sign of the dividend (PostgreSQL's `%` / `mod()`).
    pub fn rem(&self, other: &Numeric) -> PgResult<Numeric> {
        match (&self.0, &other.0) {
            (Repr::NaN, _) | (_, Repr::NaN) => return Ok(Numeric::nan()),
            (Repr::PosInf | Repr::NegInf, _) => {
                if other.is_zero() {
                    return Err(div_zero_error());
                }
                return Ok(Numeric::nan());
            }
            (_, Repr::PosInf | Repr::NegInf) => return Ok(self.clone()),
            _ => {}
        }
        if other.is_zero() {
            return Err(div_zero_error());
        }
        let s = self.scale().max(other.scale());
        if let (Some(a), Some(b)) = (self.small_at(s), other.small_at(s)) {
            if let Some(r) = a.checked_rem(b) {
                return Ok(Numeric(Repr::Small(r, s)));
            }
        }
        Numeric::finite(self.big_at(s) % other.big_at(s), s)
    }

    // ----- rounding -----

    /// Rounds half away from zero to `scale` digits after the point (negative:
    /// before it); the result's display scale is max(scale, 0) (PostgreSQL's round).
    pub fn round(&self, scale: i32) -> Numeric {
        self.round_mode(scale, true)
    }

    /// Truncates toward zero to `scale` digits (PostgreSQL's trunc).
    pub fn trunc(&self, scale: i32) -> Numeric {
        self.round_mode(scale, false)
    }

    fn round_mode(&self, scale: i32, round: bool) -> Numeric {
        let scale = scale.clamp(-NUMERIC_MAX_RESULT_SCALE, NUMERIC_MAX_RESULT_SCALE);
        let Some((c, own)) = self.coef() else {
            return self.clone();
        };
        let own = own as i32;
        let rs = scale.max(0) as u16;
        if scale >= own {
            let k = (scale - own) as u32;
            if let Coef::S(v) = c {
                if let Some(x) = scale_up_i128(v, k) {
                    return Numeric(Repr::Small(x, rs));
                }
            }
            return Numeric::from_big_parts(c.to_big() * pow10_big(k), rs);
        }
        let k = (own - scale) as u32;
        let back = if scale < 0 { (-scale) as u32 } else { 0 };
        if let Coef::S(v) = c {
            let q = if round {
                round_div_i128(v, k)
            } else {
                POW10_I128.get(k as usize).map_or(0, |d| v / d)
            };
            if let Some(x) = scale_up_i128(q, back) {
                return Numeric(Repr::Small(x, rs));
            }
            return Numeric::from_big_parts(BigInt::from(q) * pow10_big(back), rs);
        }
        let b = c.to_big();
        let q = if round {
            round_div_big(&b, k)
        } else {
            b / pow10_big(k)
        };
        let q = if back > 0 { q * pow10_big(back) } else { q };
        Numeric::from_big_parts(q, rs)
    }

    /// Smallest integer ≥ self (scale 0).
    pub fn ceil(&self) -> Numeric {
        let t = self.trunc(0);
        if self.is_finite() && self.signum() > 0 && t != *self {
            t.add(&Numeric::from_i64(1)).unwrap_or(t)
        } else {
            t
        }
    }

    /// Largest integer ≤ self (scale 0).
    pub fn floor(&self) -> Numeric {
        let t = self.trunc(0);
        if self.is_finite() && self.signum() < 0 && t != *self {
            t.sub(&Numeric::from_i64(1)).unwrap_or(t)
        } else {
            t
        }
    }

    /// Sign as a numeric: -1, 0, 1 (NaN stays NaN).
    pub fn sign(&self) -> Numeric {
        if self.is_nan() {
            Numeric::nan()
        } else {
            Numeric::from_i64(self.signum() as i64)
        }
    }

    /// Whether a finite value has no fractional part.
    pub fn is_integral(&self) -> bool {
        match &self.0 {
            Repr::Small(c, s) => {
                *s == 0 || *c == 0 || POW10_I128.get(*s as usize).is_some_and(|d| c % d == 0)
            }
            Repr::Big(b, s) => *s == 0 || (b % pow10_big(*s as u32)).is_zero(),
            _ => false,
        }
    }

    /// Value rounded half away from zero to an integer, if finite and it fits in i128.
    pub fn to_i128_round(&self) -> Option<i128> {
        match &self.0 {
            Repr::Small(c, s) => Some(round_div_i128(*c, *s as u32)),
            Repr::Big(b, s) => round_div_big(b, *s as u32).to_i128(),
            _ => None,
        }
    }

    fn to_int_checked(&self, type_name: &str, min: i128, max: i128) -> PgResult<i128> {
        match &self.0 {
            Repr::NaN => Err(PgError::new(
                SqlState::FEATURE_NOT_SUPPORTED,
                format!("cannot convert NaN to {type_name}"),
            )),
            Repr::PosInf | Repr::NegInf => Err(PgError::new(
                SqlState::FEATURE_NOT_SUPPORTED,
                format!("cannot convert infinity to {type_name}"),
            )),
            _ => match self.to_i128_round() {
                Some(v) if v >= min && v <= max => Ok(v),
                _ => Err(PgError::new(
                    SqlState::NUMERIC_VALUE_OUT_OF_RANGE,
                    format!("{type_name} out of range"),
                )),
            },
        }
    }

    /// Cast to smallint (rounds half away from zero; PostgreSQL's errors).
    pub fn to_i16(&self) -> PgResult<i16> {
        self.to_int_checked("smallint", i16::MIN as i128, i16::MAX as i128)
            .map(|v| v as i16)
    }
    /// Cast to integer.
    pub fn to_i32(&self) -> PgResult<i32> {
        self.to_int_checked("integer", i32::MIN as i128, i32::MAX as i128)
            .map(|v| v as i32)
    }
    /// Cast to bigint.
    pub fn to_i64(&self) -> PgResult<i64> {
        self.to_int_checked("bigint", i64::MIN as i128, i64::MAX as i128)
            .map(|v| v as i64)
    }

    /// Nearest double (NaN and infinities map to theirs).
    pub fn to_f64(&self) -> f64 {
        match &self.0 {
            Repr::NaN => f64::NAN,
            Repr::PosInf => f64::INFINITY,
            Repr::NegInf => f64::NEG_INFINITY,
            Repr::Small(c, s) if c.unsigned_abs() <= (1u128 << 53) && *s <= 22 => {
                *c as f64 / 10f64.powi(*s as i32)
            }
            _ => self.to_string().parse().unwrap_or(f64::NAN),
        }
    }

    /// Nearest float.
    pub fn to_f32(&self) -> f32 {
        match &self.0 {
            Repr::NaN => f32::NAN,
            Repr::PosInf => f32::INFINITY,
            Repr::NegInf => f32::NEG_INFINITY,
            Repr::Small(c, s) if c.unsigned_abs() <= (1u128 << 24) && *s <= 10 => {
                *c as f32 / 10f32.powi(*s as i32)
            }
            _ => self.to_string().parse().unwrap_or(f32::NAN),
        }
    }

    /// PostgreSQL's float8 → numeric: 15 significant digits (DBL_DIG).
    pub fn from_f64(v: f64) -> Numeric {
        Numeric::from_float_digits(v, 15)
    }

    /// PostgreSQL's float4 → numeric: 6 significant digits (FLT_DIG).
    pub fn from_f32(v: f32) -> Numeric {
        Numeric::from_float_digits(v as f64, 6)
    }

    fn from_float_digits(v: f64, digits: usize) -> Numeric {
        if v.is_nan() {
            return Numeric::nan();
        }
        if v.is_infinite() {
            return if v > 0.0 {
                Numeric::infinity()
            } else {
                Numeric::neg_infinity()
            };
        }
        if v == 0.0 {
            return Numeric::ZERO;
        }
        // Like printf("%.*g"): `digits` significant digits, trailing zeros dropped.
        let s = format!("{:.*e}", digits - 1, v);
        let (mant, exp) = s.split_once('e').unwrap_or((&s, "0"));
        let mant = if mant.contains('.') {
            mant.trim_end_matches('0').trim_end_matches('.')
        } else {
            mant
        };
        Numeric::parse(&format!("{mant}e{exp}")).unwrap_or(Numeric::ZERO)
    }

    // ----- text I/O -----

    /// Parses PostgreSQL's numeric input syntax (surrounding whitespace allowed,
    /// exponents, NaN, Infinity / inf with optional sign).
    pub fn parse(input: &str) -> PgResult<Numeric> {
        let s = input.trim_matches(|c: char| c.is_ascii_whitespace() || c == '\x0b');
        let invalid = || {
            PgError::new(
                SqlState::INVALID_TEXT_REPRESENTATION,
                format!("invalid input syntax for type numeric: \"{input}\""),
            )
        };
        let b = s.as_bytes();
        if b.is_empty() {
            return Err(invalid());
        }
        if !b[0].is_ascii_digit() && b[0] != b'.' {
            let special = |t: &str| s.eq_ignore_ascii_case(t);
            if special("nan") {
                return Ok(Numeric::nan());
            }
            if special("infinity") || special("+infinity") || special("inf") || special("+inf") {
                return Ok(Numeric::infinity());
            }
            if special("-infinity") || special("-inf") {
                return Ok(Numeric::neg_infinity());
            }
        }
        let mut i = 0;
        let mut neg = false;
        if b[0] == b'+' || b[0] == b'-' {
            neg = b[0] == b'-';
            i = 1;
        }
        // Significant digits accumulate in an i128 while they fit.
        let mant_start = i;
        let mut acc: i128 = 0;
        let mut nsig: i64 = 0;
        let mut fits = true;
        let mut frac: i64 = 0;
        let mut seen_point = false;
        let mut any_digit = false;
        while i < b.len() {
            let ch = b[i];
            if ch.is_ascii_digit() {
                any_digit = true;
                if !(nsig == 0 && ch == b'0') {
                    nsig += 1;
                    if fits {
                        match acc
                            .checked_mul(10)
                            .and_then(|a| a.checked_add((ch - b'0') as i128))
                        {
                            Some(a) => acc = a,
                            None => fits = false,
                        }
                    }
                }
                if seen_point {
                    frac += 1;
                }
            } else if ch == b'.' && !seen_point {
                seen_point = true;
            } else {
                break;
            }
            i += 1;
        }
        if !any_digit {
            return Err(invalid());
        }
        let mant_end = i;
        let mut exp: i64 = 0;
        if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
            i += 1;
            let mut eneg = false;
            if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
                eneg = b[i] == b'-';
                i += 1;
            }
            let start = i;
            while i < b.len() && b[i].is_ascii_digit() {
                exp = (exp * 10 + (b[i] - b'0') as i64).min(i64::from(i32::MAX));
                i += 1;
            }
            if i == start {
                return Err(invalid());
            }
            if exp >= (i32::MAX / 2) as i64 {
                return Err(overflow_error());
            }
            if eneg {
                exp = -exp;
            }
        }
        if i != b.len() {
            return Err(invalid());
        }
        // value = digits * 10^(exp - frac)
        let shift = exp - frac;
        let dscale = (-shift).max(0);
        if dscale > NUMERIC_DSCALE_MAX as i64 {
            return Err(overflow_error());
        }
        let int_digits = nsig + shift;
        if nsig > 0 && int_digits > MAX_INT_DIGITS {
            return Err(overflow_error());
        }
        let up = shift.max(0) as u32;
        let small = if fits { scale_up_i128(acc, up) } else { None };
        let coef = if let Some(c) = small {
            Numeric(Repr::Small(if neg { -c } else { c }, dscale as u16))
        } else {
            let txt: Vec<u8> = b[mant_start..mant_end]
                .iter()
                .copied()
                .filter(u8::is_ascii_digit)
                .collect();
            let mut c = BigInt::parse_bytes(&txt, 10).unwrap_or_default();
            if up > 0 {
                c *= pow10_big(up);
            }
            if neg {
                c = -c;
            }
            Numeric::from_big_parts(c, dscale as u16)
        };
        Ok(coef)
    }

    /// Appends PostgreSQL's text output.
    pub fn write_text(&self, out: &mut String) {
        match &self.0 {
            Repr::NaN => out.push_str("NaN"),
            Repr::PosInf => out.push_str("Infinity"),
            Repr::NegInf => out.push_str("-Infinity"),
            Repr::Small(c, s) => {
                let mut buf = itoa::Buffer::new();
                let digits = buf.format(c.unsigned_abs());
                write_decimal(out, *c < 0, digits, *s as usize);
            }
            Repr::Big(b, s) => {
                let digits = b.magnitude().to_str_radix(10);
                write_decimal(out, b.is_negative(), &digits, *s as usize);
            }
        }
    }

    // ----- typmod -----

    /// Applies a `numeric(p,s)` typmod: rounds to the scale and raises 22003
    /// "numeric field overflow" when too many digits remain before the point.
    pub fn apply_typmod(&self, typmod: i32) -> PgResult<Numeric> {
        let Some((precision, scale)) = numeric_typmod_precision_scale(typmod) else {
            return Ok(self.clone());
        };
        match &self.0 {
            Repr::NaN => return Ok(self.clone()),
            Repr::PosInf | Repr::NegInf => {
                return Err(PgError::new(
                    SqlState::NUMERIC_VALUE_OUT_OF_RANGE,
                    "numeric field overflow",
                )
                .with_detail(format!(
                "A field with precision {precision}, scale {scale} cannot hold an infinite value."
            )))
            }
            _ => {}
        }
        let r = if self.scale() as i32 == scale {
            self.clone()
        } else {
            self.round(scale)
        };
        let maxdigits = precision - scale;
        let int_digits = if r.is_zero() {
            0
        } else {
            (r.leading_exponent() + 1).max(0)
        };
        if int_digits > maxdigits as i64 {
            let limit = if maxdigits > 0 {
                format!("10^{maxdigits}")
            } else {
                "1".to_string()
            };
            return Err(PgError::new(
                SqlState::NUMERIC_VALUE_OUT_OF_RANGE,
                "numeric field overflow",
            )
            .with_detail(format!(
                "A field with precision {precision}, scale {scale} must round to an absolute value less than {limit}."
            )));
        }
        Ok(r)
    }

    // ----- integer helpers -----

    /// Greatest common divisor (PostgreSQL's gcd(numeric, numeric)).
    pub fn gcd(&self, other: &Numeric) -> Numeric {
        if !self.is_finite() || !other.is_finite() {
            return Numeric::nan();
        }
        let s = self.scale().max(other.scale());
        if let (Some(a), Some(b)) = (self.small_at(s), other.small_at(s)) {
            let g = a.unsigned_abs().gcd(&b.unsigned_abs());
            if let Ok(g) = i128::try_from(g) {
                return Numeric(Repr::Small(g, s));
            }
        }
        Numeric::from_big_parts(self.big_at(s).gcd(&other.big_at(s)), s)
    }

    /// Least common multiple (PostgreSQL's lcm(numeric, numeric)).
    pub fn lcm(&self, other: &Numeric) -> PgResult<Numeric> {
        if !self.is_finite() || !other.is_finite() {
            return Ok(Numeric::nan());
        }
        let s = self.scale().max(other.scale());
        let (a, b) = (self.big_at(s), other.big_at(s));
        if a.is_zero() || b.is_zero() {
            return Ok(Numeric(Repr::Small(0, s)));
        }
        let l = (&a / a.gcd(&b) * &b).abs();
        Numeric::finite(l, s)
    }

    /// Conversion to the `bigdecimal` crate's type (finite values only).
    pub fn to_bigdecimal(&self) -> Option<bigdecimal::BigDecimal> {
        let (c, s) = self.coef()?;
        Some(bigdecimal::BigDecimal::new(c.to_big(), s as i64))
    }
}

fn write_decimal(out: &mut String, neg: bool, digits: &str, scale: usize) {
    if neg {
        out.push('-');
    }
    if scale == 0 {
        out.push_str(digits);
    } else if digits.len() > scale {
        let (i, f) = digits.split_at(digits.len() - scale);
        out.push_str(i);
        out.push('.');
        out.push_str(f);
    } else {
        out.push_str("0.");
        for _ in 0..scale - digits.len() {
            out.push('0');
        }
        out.push_str(digits);
    }
}

impl From<i16> for Numeric {
    fn from(v: i16) -> Self {
        Numeric(Repr::Small(v as i128, 0))
    }
}
impl From<i32> for Numeric {
    fn from(v: i32) -> Self {
        Numeric(Repr::Small(v as i128, 0))
    }
}
impl From<i64> for Numeric {
    fn from(v: i64) -> Self {
        Numeric(Repr::Small(v as i128, 0))
    }
}
impl From<i128> for Numeric {
    fn from(v: i128) -> Self {
        Numeric(Repr::Small(v, 0))
    }
}

impl From<&bigdecimal::BigDecimal> for Numeric {
    fn from(d: &bigdecimal::BigDecimal) -> Self {
        let (c, e) = d.as_bigint_and_exponent();
        if e >= 0 {
            Numeric::from_big_parts(c, e.min(NUMERIC_DSCALE_MAX as i64) as u16)
        } else {
            Numeric::from_big_parts(c * pow10_big((-e) as u32), 0)
        }
    }
}

impl std::str::FromStr for Numeric {
    type Err = PgError;
    fn from_str(s: &str) -> PgResult<Numeric> {
        Numeric::parse(s)
    }
}

impl fmt::Display for Numeric {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = String::new();
        self.write_text(&mut s);
        f.write_str(&s)
    }
}

impl fmt::Debug for Numeric {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Numeric({self})")
    }
}

impl Default for Numeric {
    fn default() -> Self {
        Numeric::ZERO
    }
}

fn rank(n: &Numeric) -> u8 {
    match n.0 {
        Repr::NegInf => 0,
        Repr::Small(..) | Repr::Big(..) => 1,
        Repr::PosInf => 2,
        Repr::NaN => 3,
    }
}

impl Ord for Numeric {
    fn cmp(&self, other: &Self) -> Ordering {
        let (ra, rb) = (rank(self), rank(other));
        if ra != 1 || rb != 1 {
            return ra.cmp(&rb);
        }
        if let (Repr::Small(a, sa), Repr::Small(b, sb)) = (&self.0, &other.0) {
            if sa == sb {
                return a.cmp(b);
            }
        }
        let (sa, sb) = (self.signum(), other.signum());
        if sa != sb {
            return sa.cmp(&sb);
        }
        let s = self.scale().max(other.scale());
        if let (Some(a), Some(b)) = (self.small_at(s), other.small_at(s)) {
            return a.cmp(&b);
        }
        self.big_at(s).cmp(&other.big_at(s))
    }
}

impl PartialOrd for Numeric {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Numeric {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Numeric {}

impl Hash for Numeric {
    fn hash<H: Hasher>(&self, state: &mut H) {
        match &self.0 {
            Repr::NaN => state.write_u8(3),
            Repr::PosInf => state.write_u8(2),
            Repr::NegInf => state.write_u8(0),
            Repr::Small(c, s) => {
                let (c, s) = Numeric::normalized_small(*c, *s);
                state.write_u8(1);
                state.write_i128(c);
                state.write_u16(s);
            }
            Repr::Big(b, s) => {
                let (mut b, mut s) = (b.clone(), *s);
                let ten = BigInt::from(10);
                while s > 0 {
                    let (q, r) = b.div_rem(&ten);
                    if !r.is_zero() {
                        break;
                    }
                    b = q;
                    s -= 1;
                }
                match b.to_i128() {
                    Some(c) => {
                        let (c, s) = Numeric::normalized_small(c, s);
                        state.write_u8(1);
                        state.write_i128(c);
                        state.write_u16(s);
                    }
                    None => {
                        state.write_u8(4);
                        b.hash(state);
                        state.write_u16(s);
                    }
                }
            }
        }
    }
}
