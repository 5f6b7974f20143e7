//! The values of one window call over one partition (PostgreSQL's
//! windowfuncs.c and the aggregate half of nodeWindowAgg.c).

use common::{PgError, PgResult, SqlState};
use sql::expr::{AggCall, WindowCall, WindowFunc};
use types::{TypeId, Value};

use super::frames::Frames;
use crate::agg::AggAccumulator;
use crate::eval::eval;
use crate::{ExecEnv, Row};

/// The call's value for each row of the partition, in order.
pub(super) fn evaluate(
    call: &WindowCall,
    rows: &[Row],
    frames: &Frames,
    env: &mut ExecEnv,
) -> PgResult<Vec<Value>> {
    let n = rows.len();
    let rank = |i: usize| frames.group_start[frames.group_of[i]] as i64 + 1;
    Ok(match &call.func {
        WindowFunc::RowNumber => (1..=n as i64).map(Value::Int8).collect(),
        WindowFunc::Rank => (0..n).map(|i| Value::Int8(rank(i))).collect(),
        WindowFunc::DenseRank => (0..n)
            .map(|i| Value::Int8(frames.group_of[i] as i64 + 1))
            .collect(),
        WindowFunc::PercentRank => (0..n)
            .map(|i| {
                Value::Float8(if n > 1 {
                    (rank(i) - 1) as f64 / (n - 1) as f64
                } else {
                    0.0
                })
            })
            .collect(),
        WindowFunc::CumeDist => (0..n)
            .map(|i| Value::Float8(frames.group_end[frames.group_of[i]] as f64 / n as f64))
            .collect(),
        WindowFunc::Ntile => ntile(&call.args[0], rows, env)?,
        WindowFunc::Lag | WindowFunc::Lead => {
            let lead = matches!(call.func, WindowFunc::Lead);
            let mut out = Vec::with_capacity(n);
            for i in 0..n {
                let offset = match call.args.get(1) {
                    Some(e) => match eval(e, &rows[i], env)? {
                        Value::Int4(k) => k as i64,
                        _ => {
                            out.push(Value::Null);
                            continue;
                        }
                    },
                    None => 1,
                };
                let target = if lead {
                    i as i64 + offset
                } else {
                    i as i64 - offset
                };
                out.push(if (0..n as i64).contains(&target) {
                    eval(&call.args[0], &rows[target as usize], env)?
                } else {
                    match call.args.get(2) {
                        Some(d) => eval(d, &rows[i], env)?,
                        None => Value::Null,
                    }
                });
            }
            out
        }
        WindowFunc::FirstValue | WindowFunc::LastValue | WindowFunc::NthValue => {
            let mut out = Vec::with_capacity(n);
            for i in 0..n {
                let ranges = frames.ranges(i)?;
                let pick = match call.func {
                    WindowFunc::FirstValue => ranges.first().map(|r| r.0),
                    WindowFunc::LastValue => ranges.last().map(|r| r.1 - 1),
                    _ => match eval(&call.args[1], &rows[i], env)? {
                        Value::Int4(k) if k <= 0 => {
                            return Err(PgError::new(
                                SqlState::INVALID_ARGUMENT_FOR_NTH_VALUE,
                                "argument of nth_value must be greater than zero",
                            ))
                        }
                        Value::Int4(k) => nth(&ranges, k as usize - 1),
                        _ => None,
                    },
                };
                out.push(match pick {
                    Some(j) => eval(&call.args[0], &rows[j], env)?,
                    None => Value::Null,
                });
            }
            out
        }
        WindowFunc::Agg(agg) => aggregate(agg, rows, frames, env)?,
    })
}

/// Whether an aggregate's result is the same whatever order its inputs
/// come in, exactly (float sums are not: rounding follows the order; nor
/// is the min or max of values that are equal but print differently, such
/// as 0.5 and 0.50: the last one fed wins).
fn order_insensitive(agg: &AggCall) -> bool {
    use sql::expr::AggFunc::*;
    match agg.func {
        CountStar | Count | BoolAnd | BoolOr => true,
        Min | Max => !matches!(
            agg.arg_type,
            TypeId::Numeric | TypeId::Float4 | TypeId::Float8 | TypeId::Interval
        ),
        Sum | Avg => !matches!(agg.arg_type, TypeId::Float4 | TypeId::Float8),
        _ => false,
    }
}

/// The `k`th (0-based) position of a frame's ranges.
fn nth(ranges: &[(usize, usize)], mut k: usize) -> Option<usize> {
    for &(s, e) in ranges {
        if k < e - s {
            return Some(s + k);
        }
        k -= e - s;
    }
    None
}

/// ntile(buckets): the bucket count is read from the partition's first
/// row; the first `rows % buckets` buckets hold one row more. A NULL count
/// gives NULL and is read again from the next row (as PostgreSQL does):
/// the numbering then starts at the first row with a count, still sized
/// by the whole partition.
fn ntile(arg: &sql::expr::Expr, rows: &[Row], env: &mut ExecEnv) -> PgResult<Vec<Value>> {
    let n = rows.len();
    let mut out = Vec::with_capacity(n);
    let mut buckets = 0;
    for row in rows {
        match eval(arg, row, env)? {
            Value::Int4(k) if k <= 0 => {
                return Err(PgError::new(
                    SqlState::INVALID_ARGUMENT_FOR_NTILE,
                    "argument of ntile must be greater than zero",
                ))
            }
            Value::Int4(k) => {
                buckets = k as usize;
                break;
            }
            _ => out.push(Value::Null),
        }
    }
    if buckets == 0 {
        return Ok(out);
    }
    let per = n / buckets;
    let larger = n % buckets;
    let in_larger = larger * (per + 1);
    let first = out.len();
    out.extend((0..n - first).map(|i| {
        let b = if i < in_larger {
            i / (per + 1)
        } else {
            larger + (i - in_larger) / per
        };
        Value::Int4(b as i32 + 1)
    }));
    Ok(out)
}

/// An aggregate over each row's frame. A frame that grows from the
/// partition's start is accumulated once, row by row (running totals in
/// O(n)); any other frame is aggregated afresh unless it equals the
/// previous row's.
fn aggregate(
    agg: &AggCall,
    rows: &[Row],
    frames: &Frames,
    env: &mut ExecEnv,
) -> PgResult<Vec<Value>> {
    let n = rows.len();
    // Each row's arguments; None for a row its FILTER leaves out (the
    // arguments of such a row are not evaluated, as in PostgreSQL).
    let mut args: Vec<Option<Vec<Value>>> = Vec::with_capacity(n);
    for r in rows {
        if let Some(f) = &agg.filter {
            if !matches!(eval(f, r, env)?, Value::Bool(true)) {
                args.push(None);
                continue;
            }
        }
        args.push(Some(
            agg.args
                .iter()
                .map(|a| eval(a, r, env))
                .collect::<PgResult<_>>()?,
        ));
    }
    let accumulate = |acc: &mut AggAccumulator, input: &Option<Vec<Value>>| match input {
        Some(a) => acc.accumulate(agg, a),
        None => Ok(()),
    };
    let mut out: Vec<Value> = Vec::with_capacity(n);
    if frames.grows_from_start() {
        let mut acc = AggAccumulator::new(agg);
        let mut added = 0;
        let mut last_end = None;
        for i in 0..n {
            let (_, end) = frames.bounds(i)?;
            if last_end == Some(end) {
                let v = out[i - 1].clone();
                out.push(v);
                continue;
            }
            while added < end {
                accumulate(&mut acc, &args[added])?;
                added += 1;
            }
            out.push(acc.clone().finish(agg)?);
            last_end = Some(end);
        }
        return Ok(out);
    }
    if frames.reaches_end() && order_insensitive(agg) {
        // Frames that run to the partition's end, accumulated from the end
        // backward: only for aggregates whose result does not depend on
        // the order of their inputs.
        let mut out = vec![Value::Null; n];
        let mut acc = AggAccumulator::new(agg);
        let mut added = n;
        let mut last_start = None;
        for i in (0..n).rev() {
            let (start, _) = frames.bounds(i)?;
            if last_start == Some(start) {
                out[i] = out[i + 1].clone();
                continue;
            }
            while added > start {
                added -= 1;
                accumulate(&mut acc, &args[added])?;
            }
            out[i] = acc.clone().finish(agg)?;
            last_start = Some(start);
        }
        return Ok(out);
    }
    let mut last: Option<Vec<(usize, usize)>> = None;
    for i in 0..n {
        let ranges = frames.ranges(i)?;
        if last.as_ref() == Some(&ranges) {
            let v = out[i - 1].clone();
            out.push(v);
            continue;
        }
        let mut acc = AggAccumulator::new(agg);
        for &(s, e) in &ranges {
            for a in &args[s..e] {
                accumulate(&mut acc, a)?;
            }
        }
        out.push(acc.finish(agg)?);
        last = Some(ranges);
    }
    Ok(out)
}
