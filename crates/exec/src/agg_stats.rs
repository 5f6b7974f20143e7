//! Transition states and final functions of the statistical aggregates
//! (variance and standard deviation, bit_and/or/xor, covariance, correlation
//! and the regr_* family) and of the ordered-set aggregates (percentile_cont,
//! percentile_disc, mode), computed as PostgreSQL's float.c and numeric.c
//! compute them so results agree to the last digit.

use common::{PgError, PgResult, SqlState};
use sql::expr::RegrFunc;
use types::numeric::Numeric;
use types::ops::{compare, eval_binary_op, BinaryOp};
use types::{DataType, TypeId, Value};

/// var_* / stddev_* over numeric (integer inputs count as numeric): exact
/// sums, as PostgreSQL's NumericAggState.
#[derive(Default, Clone)]
pub struct NumericMoments {
    n: i64,
    sum: Option<Numeric>,
    sum_squares: Option<Numeric>,
}

impl NumericMoments {
    pub fn add(&mut self, v: &Value) -> PgResult<()> {
        let x = match v {
            Value::Numeric(n) => (**n).clone(),
            Value::Int2(i) => Numeric::from_i64(*i as i64),
            Value::Int4(i) => Numeric::from_i64(*i as i64),
            Value::Int8(i) => Numeric::from_i64(*i),
            _ => return Ok(()),
        };
        let sq = x.mul(&x)?;
        self.n += 1;
        self.sum = Some(match self.sum.take() {
            None => x,
            Some(s) => s.add(&x)?,
        });
        self.sum_squares = Some(match self.sum_squares.take() {
            None => sq,
            Some(s) => s.add(&sq)?,
        });
        Ok(())
    }

    /// PostgreSQL's numeric_stddev_internal: (N·Σx² − (Σx)²) / (N·(N−1))
    /// (or N² for the population), rounded to the division's scale, and
    /// its square root at that same scale.
    pub fn finish(self, sample: bool, root: bool) -> PgResult<Value> {
        let (Some(sum), Some(sum_squares)) = (self.sum, self.sum_squares) else {
            return Ok(Value::Null);
        };
        if sample && self.n <= 1 {
            return Ok(Value::Null);
        }
        if sum.is_nan() || sum_squares.is_nan() || !sum.is_finite() {
            return Ok(Value::numeric(Numeric::nan()));
        }
        let n = Numeric::from_i64(self.n);
        let numerator = n.mul(&sum_squares)?.sub(&sum.mul(&sum)?)?;
        if numerator.is_zero() || numerator.is_negative() {
            return Ok(Value::numeric(Numeric::ZERO));
        }
        let denominator = if sample {
            n.mul(&Numeric::from_i64(self.n - 1))?
        } else {
            n.mul(&n)?
        };
        let variance = numerator.div(&denominator)?;
        Ok(Value::numeric(if root {
            variance.sqrt_at(u32::from(variance.scale()))?
        } else {
            variance
        }))
    }
}

/// var_* / stddev_* over double precision: the Youngs-Cramer algorithm of
/// PostgreSQL's float8_accum (N, Σx and the running sum of squared
/// deviations).
#[derive(Default, Clone)]
pub struct FloatMoments {
    n: f64,
    sx: f64,
    sxx: f64,
}

impl FloatMoments {
    pub fn add(&mut self, v: &Value) {
        let x = match v {
            Value::Float8(f) => *f,
            Value::Float4(f) => *f as f64,
            _ => return,
        };
        let old_n = self.n;
        self.n += 1.0;
        self.sx += x;
        if old_n > 0.0 {
            let tmp = x * self.n - self.sx;
            self.sxx += tmp * tmp / (self.n * old_n);
            if self.sx.is_infinite() || self.sxx.is_infinite() {
                self.sxx = f64::NAN;
            }
        } else if !x.is_finite() {
            self.sxx = f64::NAN;
        }
    }

    pub fn finish(self, sample: bool, root: bool) -> Value {
        let divisor = if sample { self.n - 1.0 } else { self.n };
        if divisor <= 0.0 {
            return Value::Null;
        }
        let variance = self.sxx / divisor;
        Value::Float8(if root { variance.sqrt() } else { variance })
    }
}

/// bit_and / bit_or / bit_xor: the running result over non-NULL inputs.
pub fn fold_bits(acc: &mut Option<i64>, v: &Value, and: bool, xor: bool) {
    let x = match v {
        Value::Int2(i) => *i as i64,
        Value::Int4(i) => *i as i64,
        Value::Int8(i) => *i,
        _ => return,
    };
    *acc = Some(match *acc {
        None => x,
        Some(a) if and => a & x,
        Some(a) if xor => a ^ x,
        Some(a) => a | x,
    });
}

pub fn bits_value(acc: Option<i64>, ty: TypeId) -> Value {
    match (acc, ty) {
        (None, _) => Value::Null,
        (Some(x), TypeId::Int2) => Value::Int2(x as i16),
        (Some(x), TypeId::Int4) => Value::Int4(x as i32),
        (Some(x), _) => Value::Int8(x),
    }
}

/// The state PostgreSQL's float8_regr_accum keeps for every two-argument
/// statistic: N, Σx, Sxx, Σy, Syy, Sxy (the sums of squared and crossed
/// deviations, updated as in Youngs-Cramer).
#[derive(Default, Clone)]
pub struct Regression {
    n: f64,
    sx: f64,
    sxx: f64,
    sy: f64,
    syy: f64,
    sxy: f64,
}

impl Regression {
    /// One (Y, X) pair; pairs with a NULL are skipped (the functions are strict).
    pub fn add(&mut self, y: &Value, x: &Value) {
        let (Value::Float8(y), Value::Float8(x)) = (y, x) else {
            return;
        };
        let (x, y) = (*x, *y);
        let old_n = self.n;
        self.n += 1.0;
        self.sx += x;
        self.sy += y;
        if old_n > 0.0 {
            let tx = x * self.n - self.sx;
            let ty = y * self.n - self.sy;
            let scale = 1.0 / (self.n * old_n);
            self.sxx += tx * tx * scale;
            self.syy += ty * ty * scale;
            self.sxy += tx * ty * scale;
        } else {
            if !x.is_finite() {
                self.sxx = f64::NAN;
                self.sxy = f64::NAN;
            }
            if !y.is_finite() {
                self.syy = f64::NAN;
                self.sxy = f64::NAN;
            }
        }
    }

    pub fn finish(self, f: RegrFunc) -> Value {
        use RegrFunc::*;
        let n = self.n;
        if f == Count {
            return Value::Int8(n as i64);
        }
        let needs = if f == CovarSamp { 2.0 } else { 1.0 };
        if n < needs {
            return Value::Null;
        }
        let flat_x = self.sxx == 0.0;
        let r = match f {
            CovarPop => self.sxy / n,
            CovarSamp => self.sxy / (n - 1.0),
            Sxx => self.sxx,
            Syy => self.syy,
            Sxy => self.sxy,
            AvgX => self.sx / n,
            AvgY => self.sy / n,
            Corr if flat_x || self.syy == 0.0 => return Value::Null,
            Corr => self.sxy / (self.sxx * self.syy).sqrt(),
            R2 | Slope | Intercept if flat_x => return Value::Null,
            R2 if self.syy == 0.0 => 1.0,
            R2 => (self.sxy * self.sxy) / (self.sxx * self.syy),
            Slope => self.sxy / self.sxx,
            Intercept => (self.sy - self.sx * self.sxy / self.sxx) / n,
            Count => unreachable!("handled above"),
        };
        Value::Float8(r)
    }
}

/// The sorted inputs of an ordered-set aggregate (NULL values left out) and
/// its direct argument, the fraction(s), taken from the first input.
#[derive(Default, Clone)]
pub struct OrderedInputs {
    values: Vec<Value>,
    fraction: Option<Value>,
}

impl OrderedInputs {
    /// Inputs arrive in the WITHIN GROUP order.
    pub fn add(&mut self, args: &[Value]) {
        if self.fraction.is_none() {
            self.fraction = Some(args.get(1).cloned().unwrap_or(Value::Null));
        }
        if !args[0].is_null() {
            self.values.push(args[0].clone());
        }
    }

    pub fn percentile(self, continuous: bool, result: DataType) -> PgResult<Value> {
        if self.values.is_empty() {
            return Ok(Value::Null);
        }
        match self.fraction.unwrap_or(Value::Null) {
            Value::Null => Ok(Value::Null),
            Value::Array(fractions) => {
                let elem = result.id.array_element().unwrap_or(TypeId::Float8);
                let mut out = fractions.as_ref().clone();
                out.elem = elem;
                for item in &mut out.items {
                    if let Value::Float8(p) = item {
                        *item = pick(&self.values, *p, continuous)?;
                    }
                }
                Ok(Value::array(out))
            }
            Value::Float8(p) => pick(&self.values, p, continuous),
            other => Err(PgError::internal(format!(
                "percentile fraction of type {:?}",
                other.type_id()
            ))),
        }
    }

    /// The most frequent value; among equally frequent ones the first in
    /// the sort order.
    pub fn mode(self) -> Value {
        let mut best: Option<(&Value, usize)> = None;
        let mut i = 0;
        while i < self.values.len() {
            let mut j = i + 1;
            while j < self.values.len()
                && compare(&self.values[i], &self.values[j]) == std::cmp::Ordering::Equal
            {
                j += 1;
            }
            if best.is_none_or(|(_, count)| j - i > count) {
                best = Some((&self.values[i], j - i));
            }
            i = j;
        }
        best.map_or(Value::Null, |(v, _)| v.clone())
    }
}

/// One percentile of the sorted `values` (not empty).
fn pick(values: &[Value], p: f64, continuous: bool) -> PgResult<Value> {
    if !(0.0..=1.0).contains(&p) || p.is_nan() {
        return Err(PgError::new(
            SqlState::NUMERIC_VALUE_OUT_OF_RANGE,
            format!("percentile value {} is not between 0 and 1", {
                let mut t = String::new();
                types::float::write_f64(p, &mut t);
                t
            }),
        ));
    }
    let n = values.len();
    if !continuous {
        // The first value whose position reaches the fraction.
        let row = (p * n as f64).ceil() as usize;
        return Ok(values[row.max(1) - 1].clone());
    }
    let position = p * (n - 1) as f64;
    let (first, second) = (position.floor() as usize, position.ceil() as usize);
    let lower = &values[first];
    if first == second {
        return Ok(lower.clone());
    }
    let upper = &values[second];
    let step = eval_binary_op(BinaryOp::Sub, upper, lower)?;
    let step = eval_binary_op(
        BinaryOp::Mul,
        &step,
        &Value::Float8(position - first as f64),
    )?;
    eval_binary_op(BinaryOp::Add, lower, &step)
}
