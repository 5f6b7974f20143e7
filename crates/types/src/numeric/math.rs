//! Transcendental functions on `numeric` (sqrt, exp, ln, log, power), with
//! PostgreSQL's choice of result scale. Computed in fixed-point BigInt
//! arithmetic with guard digits and rounded half away from zero.

use num_bigint::BigInt;
use num_traits::{Signed, ToPrimitive, Zero};

use super::{
    pow10_big, round_div_big, round_quotient_big, Numeric, Repr, NUMERIC_MAX_DISPLAY_SCALE,
    NUMERIC_MIN_SIG_DIGITS,
};
use common::{PgError, PgResult, SqlState};

const LOG10_E: f64 = std::f64::consts::LOG10_E;

fn log_error(msg: &str) -> PgError {
    PgError::new(SqlState::INVALID_ARGUMENT_FOR_LOG, msg)
}

fn power_error(msg: &str) -> PgError {
    PgError::new(SqlState::INVALID_ARGUMENT_FOR_POWER, msg)
}

fn clamp_rscale(r: i64) -> i64 {
    r.clamp(0, NUMERIC_MAX_DISPLAY_SCALE as i64)
}

/// Finite value as a fixed-point integer with `p` fractional digits (truncated).
fn to_fixed(n: &Numeric, p: u32) -> BigInt {
    let (c, s) = n.coef().expect("finite");
    let c = c.to_big();
    let s = s as u32;
    if p >= s {
        c * pow10_big(p - s)
    } else {
        c / pow10_big(s - p)
    }
}

/// Rounds a fixed-point value at scale `p` to a numeric with `rscale` digits.
fn from_fixed(v: &BigInt, p: u32, rscale: u32) -> PgResult<Numeric> {
    if p >= rscale {
        Numeric::finite(round_div_big(v, p - rscale), rscale as u16)
    } else {
        Numeric::finite(v * pow10_big(rscale - p), rscale as u16)
    }
}

fn zero_at(rscale: i64) -> Numeric {
    Numeric(Repr::Small(0, rscale as u16))
}

/// e^y for a small fixed-point y (|y| ≲ 0.01) at scale p, by Taylor series.
fn exp_small_fixed(y: &BigInt, p: u32) -> BigInt {
    let one = pow10_big(p);
    let mut sum = one.clone();
    let mut term = one.clone();
    let mut n = 1u32;
    loop {
        term = (&term * y) / &one / n;
        if term.is_zero() {
            break;
        }
        sum += &term;
        n += 1;
    }
    sum
}

/// ln(z) for a fixed-point z > 0 of moderate size (about 0.01 .. 100) at scale p.
fn ln_fixed(z: &BigInt, p: u32) -> BigInt {
    let guard = 6;
    let wp = p + guard;
    let one = pow10_big(wp);
    let mut z = z * pow10_big(guard);
    let threshold = &one / 100u32;
    let mut k = 0u32;
    while (&z - &one).abs() > threshold {
        z = (&z * &one).sqrt();
        k += 1;
    }
    // ln(z) = 2 atanh(t), t = (z - 1) / (z + 1)
    let t = (&z - &one) * &one / (&z + &one);
    let t2 = &t * &t / &one;
    let mut sum = t.clone();
    let mut pw = t;
    let mut n = 3u32;
    loop {
        pw = &pw * &t2 / &one;
        let term = &pw / n;
        if term.is_zero() {
            break;
        }
        sum += term;
        n += 2;
    }
    let r: BigInt = sum << (k + 1);
    round_div_big(&r, guard)
}

/// ln(x) of a finite positive numeric as fixed point at scale p.
fn ln_numeric_fixed(x: &Numeric, p: u32) -> BigInt {
    let e = x.leading_exponent();
    let guard = 4 + (e.unsigned_abs().max(1) as f64).log10().ceil() as u32;
    let wp = p + guard;
    // m = x / 10^e in [1, 10)
    let (c, s) = x.coef().expect("finite");
    let shift = wp as i64 - s as i64 - e;
    let m = if shift >= 0 {
        c.to_big() * pow10_big(shift as u32)
    } else {
        c.to_big() / pow10_big((-shift) as u32)
    };
    let mut r = ln_fixed(&m, wp);
    if e != 0 {
        let ln10 = ln_fixed(&(BigInt::from(10) * pow10_big(wp)), wp);
        r += ln10 * e;
    }
    round_div_big(&r, guard)
}

/// e^x rounded to `rscale` digits (x finite). Errors on overflow like PostgreSQL.
fn exp_numeric(x: &Numeric, rscale: i64) -> PgResult<Numeric> {
    if x.is_zero() {
        return Ok(Numeric(Repr::Small(1, 0)).round(rscale as i32));
    }
    let xf = x.to_f64();
    if xf.abs() >= 6000.0 {
        if xf > 0.0 {
            return Err(super::overflow_error());
        }
        return Ok(zero_at(rscale));
    }
    let neg = x.is_negative();
    let a = x.abs();
    let af = xf.abs();
    let m = af * LOG10_E;
    let k = if af > 0.01 {
        (af / 0.01).log2().ceil() as u32
    } else {
        0
    };
    let guard = 12 + k / 3;
    let p = if neg {
        ((rscale as f64 + 3.0 - m).max(0.0)).ceil() as u32 + guard
    } else {
        rscale as u32 + m.ceil() as u32 + guard
    };
    let one = pow10_big(p);
    let y: BigInt = to_fixed(&a, p) >> k;
    let mut e = exp_small_fixed(&y, p);
    for _ in 0..k {
        e = &e * &e / &one;
    }
    if neg {
        let num = pow10_big(rscale as u32 + p);
        Numeric::finite(round_quotient_big(&num, &e), rscale as u16)
    } else {
        from_fixed(&e, p, rscale as u32)
    }
}

/// PostgreSQL's estimate_ln_dweight: decimal weight of ln(x).
fn estimate_ln_dweight(x: &Numeric) -> i64 {
    if x.signum() <= 0 || !x.is_finite() {
        return 0;
    }
    let lo = Numeric(Repr::Small(9, 1));
    let hi = Numeric(Repr::Small(11, 1));
    if *x >= lo && *x <= hi {
        let d = x.sub(&Numeric(Repr::Small(1, 0))).unwrap_or_default();
        if d.is_zero() {
            0
        } else {
            d.leading_exponent()
        }
    } else {
        let (w, _) = x.nbase_weight_first();
        let e = x.leading_exponent();
        let r = e.rem_euclid(4) as u32;
        let digits = x.leading_digits(r + 1 + 4) as f64;
        let dweight = (w - 1) * 4;
        let ln_var = digits.ln() + dweight as f64 * std::f64::consts::LN_10;
        ln_var.abs().log10() as i64
    }
}

impl Numeric {
    /// Square root with PostgreSQL's result scale.
    pub fn sqrt(&self) -> PgResult<Numeric> {
        match &self.0 {
            Repr::NaN | Repr::PosInf => return Ok(self.clone()),
            Repr::NegInf => {
                return Err(power_error("cannot take square root of a negative number"))
            }
            _ => {}
        }
        if self.is_negative() {
            return Err(power_error("cannot take square root of a negative number"));
        }
        let (w, _) = self.nbase_weight_first();
        let sweight = (w + 1) * 4 / 2 - 1;
        let rscale =
            clamp_rscale((NUMERIC_MIN_SIG_DIGITS as i64 - sweight).max(self.scale() as i64)) as u32;
        self.sqrt_at(rscale)
    }

    /// The square root of a finite, non-negative value to `rscale`
    /// fractional digits (stddev takes the scale of the variance under it).
    pub fn sqrt_at(&self, rscale: u32) -> PgResult<Numeric> {
        debug_assert!(self.is_finite() && !self.is_negative());
        // floor(sqrt(x * 10^(2(rscale+1)))) has rscale+1 fractional digits.
        let p = 2 * (rscale + 1);
        let y = to_fixed(self, p);
        let q = y.sqrt();
        Numeric::finite(round_div_big(&q, 1), rscale as u16)
    }

    /// e^x with PostgreSQL's result scale.
    pub fn exp(&self) -> PgResult<Numeric> {
        match &self.0 {
            Repr::NaN | Repr::PosInf => return Ok(self.clone()),
            Repr::NegInf => return Ok(Numeric::ZERO),
            _ => {}
        }
        let val = (self.to_f64() * LOG10_E).clamp(-2000.0, 2000.0);
        let rscale =
            clamp_rscale((NUMERIC_MIN_SIG_DIGITS as i64 - val as i64).max(self.scale() as i64));
        exp_numeric(self, rscale)
    }

    fn check_log_arg(&self) -> PgResult<()> {
        match self.signum() {
            0 => Err(log_error("cannot take logarithm of zero")),
            s if s < 0 => Err(log_error("cannot take logarithm of a negative number")),
            _ => Ok(()),
        }
    }

    /// Natural logarithm with PostgreSQL's result scale.
    pub fn ln(&self) -> PgResult<Numeric> {
        if self.is_nan() {
            return Ok(Numeric::nan());
        }
        self.check_log_arg()?;
        if self.is_infinite() {
            return Ok(Numeric::infinity());
        }
        let rscale = clamp_rscale(
            (NUMERIC_MIN_SIG_DIGITS as i64 - estimate_ln_dweight(self)).max(self.scale() as i64),
        ) as u32;
        // Ten guard digits make double rounding at the final step negligible.
        let p = rscale + 10;
        from_fixed(&ln_numeric_fixed(self, p), p, rscale)
    }

    /// Logarithm of `x` to base `self` (PostgreSQL's log(b, x)).
    pub fn log(&self, x: &Numeric) -> PgResult<Numeric> {
        if self.is_nan() || x.is_nan() {
            return Ok(Numeric::nan());
        }
        let (s1, s2) = (self.signum(), x.signum());
        if s1 < 0 || s2 < 0 {
            return Err(log_error("cannot take logarithm of a negative number"));
        }
        if s1 == 0 || s2 == 0 {
            return Err(log_error("cannot take logarithm of zero"));
        }
        if self.is_infinite() {
            return Ok(if x.is_infinite() {
                Numeric::nan()
            } else {
                Numeric::ZERO
            });
        }
        if x.is_infinite() {
            return Ok(Numeric::infinity());
        }
        let db = estimate_ln_dweight(self);
        let dn = estimate_ln_dweight(x);
        let result_dweight = dn - db;
        let rscale = clamp_rscale(
            (NUMERIC_MIN_SIG_DIGITS as i64 - result_dweight)
                .max(self.scale() as i64)
                .max(x.scale() as i64),
        );
        let wp = (rscale + 10 + result_dweight.abs() + db.abs() + dn.abs()) as u32;
        let ln_b = ln_numeric_fixed(self, wp);
        if ln_b.is_zero() {
            return Err(super::div_zero_error());
        }
        let ln_x = ln_numeric_fixed(x, wp);
        let num = ln_x * pow10_big(rscale as u32);
        Numeric::finite(round_quotient_big(&num, &ln_b), rscale as u16)
    }

    /// Base-10 logarithm (PostgreSQL's log(numeric) = log(10, x)).
    pub fn log10(&self) -> PgResult<Numeric> {
        Numeric(Repr::Small(10, 0)).log(self)
    }

    /// `self ^ exp` with PostgreSQL's special cases and result scale.
    pub fn pow(&self, exp: &Numeric) -> PgResult<Numeric> {
        let one = Numeric(Repr::Small(1, 0));
        if self.is_nan() {
            return Ok(if exp.is_zero() { one } else { Numeric::nan() });
        }
        if exp.is_nan() {
            return Ok(if *self == one { one } else { Numeric::nan() });
        }
        if !self.is_finite() || !exp.is_finite() {
            return self.pow_special(exp);
        }
        if self.is_zero() && exp.is_negative() {
            return Err(power_error("zero raised to a negative power is undefined"));
        }
        if exp.is_integral() {
            if let Some(n) = exp.to_i128_round().filter(|n| i32::try_from(*n).is_ok()) {
                let rscale = clamp_rscale((NUMERIC_MIN_SIG_DIGITS as i64).max(self.scale() as i64));
                return self.pow_int(n as i64, rscale);
            }
        }
        if self.is_zero() {
            return Ok(zero_at(NUMERIC_MIN_SIG_DIGITS as i64));
        }
        let mut base = self.clone();
        let mut negate = false;
        if self.is_negative() {
            if !exp.is_integral() {
                return Err(power_error(
                    "a negative number raised to a non-integer power yields a complex result",
                ));
            }
            base = self.abs();
            negate = exp.trunc(0).rem(&Numeric(Repr::Small(2, 0)))?.signum() != 0;
        }
        // Low-precision estimate of exp * ln(base).
        let ln_dweight = estimate_ln_dweight(&base);
        let local = (8 - ln_dweight).max(0) as u32;
        let ln_est = from_fixed(&ln_numeric_fixed(&base, local + 2), local + 2, local)?;
        let val = ln_est.mul(exp)?.to_f64();
        if val.abs() > 2000.0 * 3.01 {
            if val > 0.0 {
                return Err(super::overflow_error());
            }
            return Ok(zero_at(NUMERIC_MAX_DISPLAY_SCALE as i64));
        }
        let dec = val * LOG10_E;
        let rscale = clamp_rscale(
            (NUMERIC_MIN_SIG_DIGITS as i64 - dec as i64)
                .max(base.scale() as i64)
                .max(exp.scale() as i64),
        );
        let r = self.pow_via_ln(&base, exp, dec, rscale)?;
        Ok(if negate { r.neg() } else { r })
    }

    /// exp(y * ln(base)) rounded to rscale; `dec` estimates log10 of the result.
    fn pow_via_ln(&self, base: &Numeric, y: &Numeric, dec: f64, rscale: i64) -> PgResult<Numeric> {
        let ylog = y.abs().to_f64().max(1.0).log10().ceil() as i64;
        let p = (rscale + 6 + dec.max(0.0).ceil() as i64 + ylog).max(10) as u32;
        let ln_b = Numeric::finite(ln_numeric_fixed(base, p), p as u16)?;
        let l = ln_b.mul(y)?;
        exp_numeric(&l, rscale)
    }

    fn pow_int(&self, n: i64, rscale: i64) -> PgResult<Numeric> {
        if n == 0 {
            return Ok(Numeric(Repr::Small(1, 0)).round(rscale as i32));
        }
        if self.is_zero() {
            return Ok(zero_at(rscale));
        }
        // Estimated log10 of |result|.
        let e = self.leading_exponent();
        let lead = self.leading_digits(15) as f64 / 1e14;
        let f = n as f64 * (lead.log10() + e as f64);
        if f > 3.0 * 32767.0 * 4.0 {
            return Err(super::overflow_error());
        }
        if f + 1.0 < -(rscale as f64) {
            return Ok(zero_at(rscale));
        }
        let (c, s) = self.coef().expect("finite");
        let ndig = (e + 1 + s as i64).max(1);
        let exact_digits = ndig.saturating_mul(n.abs());
        if exact_digits <= 200_000 {
            let m = n.unsigned_abs() as usize;
            let cp = num_traits::pow(c.to_big(), m);
            let sp = s as u64 * m as u64;
            if n > 0 {
                let r = rscale as u64;
                let v = if sp > r {
                    round_div_big(&cp, (sp - r) as u32)
                } else {
                    cp * pow10_big((r - sp) as u32)
                };
                return Numeric::finite(v, rscale as u16);
            }
            // 1 / (cp * 10^-sp) = 10^sp / cp, rounded at rscale.
            let num = pow10_big((sp + rscale as u64) as u32);
            return Numeric::finite(round_quotient_big(&num, &cp), rscale as u16);
        }
        let base = self.abs();
        let y = Numeric::from_i64(n);
        let r = self.pow_via_ln(&base, &y, f, rscale)?;
        Ok(if self.is_negative() && n % 2 != 0 {
            r.neg()
        } else {
            r
        })
    }

    /// Power where base or exponent is ±Infinity (POSIX pow rules, as PostgreSQL).
    fn pow_special(&self, exp: &Numeric) -> PgResult<Numeric> {
        let one = Numeric(Repr::Small(1, 0));
        if !exp.is_finite() {
            let abs_vs_1 = if self.is_finite() {
                self.abs().cmp(&one)
            } else {
                std::cmp::Ordering::Greater
            };
            if abs_vs_1 == std::cmp::Ordering::Equal {
                return Ok(one);
            }
            let gt = abs_vs_1 == std::cmp::Ordering::Greater;
            return if exp.signum() > 0 {
                Ok(if gt {
                    Numeric::infinity()
                } else {
                    Numeric::ZERO
                })
            } else if gt {
                Ok(Numeric::ZERO)
            } else if self.is_zero() {
                Err(power_error("zero raised to a negative power is undefined"))
            } else {
                Ok(Numeric::infinity())
            };
        }
        if exp.is_zero() {
            return Ok(one);
        }
        if self.signum() > 0 {
            return Ok(if exp.signum() > 0 {
                Numeric::infinity()
            } else {
                Numeric::ZERO
            });
        }
        if exp.signum() < 0 {
            return Ok(Numeric::ZERO);
        }
        let odd = exp.is_integral()
            && !exp
                .rem(&Numeric(Repr::Small(2, 0)))
                .map(|r| r.is_zero())
                .unwrap_or(true);
        Ok(if odd {
            Numeric::neg_infinity()
        } else {
            Numeric::infinity()
        })
    }

    /// Integer value of a numeric known to be small, for callers needing an i64.
    pub fn to_i64_lossy(&self) -> Option<i64> {
        self.to_i128_round().and_then(|v| v.to_i64())
    }
}
