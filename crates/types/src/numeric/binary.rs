//! PostgreSQL's binary send/receive format of `numeric`: int16 ndigits,
//! int16 weight, uint16 sign, uint16 dscale, then ndigits base-10000 digits.

use num_bigint::BigInt;
use num_traits::Zero;

use super::{pow10_big, Numeric, Repr, MAX_INT_DIGITS, NUMERIC_DSCALE_MAX};
use common::{PgError, PgResult, SqlState};

const NUMERIC_POS: u16 = 0x0000;
const NUMERIC_NEG: u16 = 0x4000;
const NUMERIC_NAN: u16 = 0xC000;
const NUMERIC_PINF: u16 = 0xD000;
const NUMERIC_NINF: u16 = 0xF000;

fn bad(what: &str) -> PgError {
    PgError::new(
        SqlState::INVALID_BINARY_REPRESENTATION,
        format!("invalid {what} in external \"numeric\" value"),
    )
}

impl Numeric {
    /// Appends PostgreSQL's binary send format.
    pub fn write_binary(&self, out: &mut Vec<u8>) {
        let header = |out: &mut Vec<u8>, nd: i16, w: i16, sign: u16, dscale: u16| {
            out.extend_from_slice(&nd.to_be_bytes());
            out.extend_from_slice(&w.to_be_bytes());
            out.extend_from_slice(&sign.to_be_bytes());
            out.extend_from_slice(&dscale.to_be_bytes());
        };
        let (neg, digits, scale) = match &self.0 {
            Repr::NaN => return header(out, 0, 0, NUMERIC_NAN, 0),
            Repr::PosInf => return header(out, 0, 0, NUMERIC_PINF, 0),
            Repr::NegInf => return header(out, 0, 0, NUMERIC_NINF, 0),
            Repr::Small(c, s) => (*c < 0, c.unsigned_abs().to_string(), *s as usize),
            Repr::Big(b, s) => (
                b.sign() == num_bigint::Sign::Minus,
                b.magnitude().to_str_radix(10),
                *s as usize,
            ),
        };
        let sign = if neg { NUMERIC_NEG } else { NUMERIC_POS };
        if self.is_zero() {
            return header(out, 0, 0, NUMERIC_POS, scale as u16);
        }
        let frac_pad = (4 - scale % 4) % 4;
        let len = digits.len() + frac_pad;
        let left_pad = (4 - len % 4) % 4;
        let mut padded = Vec::with_capacity(len + left_pad);
        padded.extend(std::iter::repeat_n(0u8, left_pad));
        padded.extend(digits.bytes().map(|b| b - b'0'));
        padded.extend(std::iter::repeat_n(0u8, frac_pad));
        let mut groups: Vec<i16> = padded
            .chunks(4)
            .map(|c| c.iter().fold(0i16, |acc, d| acc * 10 + *d as i16))
            .collect();
        let frac_groups = (scale + frac_pad) / 4;
        let mut weight = groups.len() as i64 - frac_groups as i64 - 1;
        let lead = groups.iter().take_while(|g| **g == 0).count();
        groups.drain(..lead);
        weight -= lead as i64;
        while groups.last() == Some(&0) {
            groups.pop();
        }
        header(out, groups.len() as i16, weight as i16, sign, scale as u16);
        for g in groups {
            out.extend_from_slice(&g.to_be_bytes());
        }
    }

    /// Parses PostgreSQL's binary numeric format (digits hidden by dscale are
    /// truncated away, as numeric_recv does).
    pub fn read_binary(bytes: &[u8]) -> PgResult<Numeric> {
        let insufficient = || {
            PgError::new(
                SqlState::INVALID_BINARY_REPRESENTATION,
                "insufficient data left in message",
            )
        };
        if bytes.len() < 8 {
            return Err(insufficient());
        }
        let rd = |i: usize| u16::from_be_bytes([bytes[i], bytes[i + 1]]);
        let ndigits = rd(0) as i16;
        let weight = rd(2) as i16 as i64;
        let sign = rd(4);
        let dscale = rd(6);
        if ndigits < 0 {
            return Err(bad("length"));
        }
        let ndigits = ndigits as usize;
        if bytes.len() < 8 + 2 * ndigits {
            return Err(insufficient());
        }
        if bytes.len() > 8 + 2 * ndigits {
            return Err(PgError::new(
                SqlState::INVALID_BINARY_REPRESENTATION,
                "incorrect binary data format",
            ));
        }
        match sign {
            NUMERIC_POS | NUMERIC_NEG => {}
            NUMERIC_NAN => return Ok(Numeric::nan()),
            NUMERIC_PINF => return Ok(Numeric::infinity()),
            NUMERIC_NINF => return Ok(Numeric::neg_infinity()),
            _ => return Err(bad("sign")),
        }
        if dscale as i32 > NUMERIC_DSCALE_MAX {
            return Err(bad("scale"));
        }
        let mut coef = BigInt::zero();
        for i in 0..ndigits {
            let d = rd(8 + 2 * i);
            if d >= 10000 {
                return Err(bad("digit"));
            }
            coef = coef * 10000u32 + d;
        }
        if (weight + 1) * 4 > MAX_INT_DIGITS + 4 {
            return Err(super::overflow_error());
        }
        // value = coef * 10^(4 * (weight - ndigits + 1))
        let exp10 = 4 * (weight - ndigits as i64 + 1);
        let dscale_i = dscale as i64;
        let coef = if exp10 >= 0 {
            coef * pow10_big((exp10 + dscale_i) as u32)
        } else {
            let frac = -exp10;
            if dscale_i >= frac {
                coef * pow10_big((dscale_i - frac) as u32)
            } else {
                coef / pow10_big((frac - dscale_i) as u32)
            }
        };
        let coef = if sign == NUMERIC_NEG { -coef } else { coef };
        Numeric::finite(coef, dscale)
    }
}
