//! Set-returning functions (`sql::srf`): FunctionScan runs calls in FROM,
//! ProjectSet in a select list. Calls run in lockstep; one that is done
//! reads NULL until all are.

use std::cmp::Ordering;

use common::{PgError, PgResult, SqlState};
use sql::expr::Expr;
use sql::srf::{SetFunction, SrfCall};
use types::numeric::Numeric;
use types::ops::{compare, eval_binary_op, BinaryOp};
use types::{DataType, TypeId, Value};

use crate::eval::eval;
use crate::ops::Operator;
use crate::{ExecEnv, Row};

/// One running call.
enum CallState {
    Series { series: Series, ty: DataType },
    Values(std::vec::IntoIter<Value>),
    Rows(std::vec::IntoIter<Row>),
    Done,
}

impl CallState {
    /// Starts `call` with its arguments evaluated over `row`. Every function
    /// here is strict: a NULL argument yields no rows.
    fn start(call: &SrfCall, row: &[Value], env: &mut ExecEnv) -> PgResult<CallState> {
        let mut args = Vec::with_capacity(call.args.len());
        for a in &call.args {
            args.push(eval(a, row, env)?);
        }
        if args.iter().any(Value::is_null) {
            return Ok(CallState::Done);
        }
        Ok(match call.func {
            SetFunction::Series => {
                let ty = call.value_type();
                CallState::Series {
                    series: Series::new(&args, ty, &env.io)?,
                    ty,
                }
            }
            SetFunction::Unnest => {
                let items = args[0].as_array().map_or(Vec::new(), |a| a.items.clone());
                CallState::Values(items.into_iter())
            }
            SetFunction::Json { func, json } => {
                CallState::Rows(types::json::ops::srf_rows(func, json, &args[0])?.into_iter())
            }
            SetFunction::RegexpMatches => {
                CallState::Values(types::functions::regexp_matches(&args)?.into_iter())
            }
            SetFunction::RegexpSplitToTable => {
                CallState::Values(types::functions::regexp_split_to_table(&args)?.into_iter())
            }
            SetFunction::Empty => CallState::Done,
        })
    }

    /// Appends the call's next row (`width` columns) to `out`; false, and
    /// NULLs appended, once it is done.
    fn next_into(&mut self, width: usize, out: &mut Row) -> PgResult<bool> {
        let got = match self {
            CallState::Series { series, ty } => series.next(*ty)?.map(|v| vec![v]),
            CallState::Values(it) => it.next().map(|v| vec![v]),
            CallState::Rows(it) => it.next(),
            CallState::Done => None,
        };
        match got {
            Some(r) => {
                debug_assert_eq!(r.len(), width, "a set-returning call's row width");
                out.extend(r);
                Ok(true)
            }
            None => {
                *self = CallState::Done;
                out.extend(std::iter::repeat_n(Value::Null, width));
                Ok(false)
            }
        }
    }
}

/// Advances every call by one row into `out`; false when all are done (and
/// `out` is then to be discarded).
fn next_in_lockstep(calls: &[SrfCall], states: &mut [CallState], out: &mut Row) -> PgResult<bool> {
    let mut any = false;
    for (call, state) in calls.iter().zip(states.iter_mut()) {
        any |= state.next_into(call.columns.len(), out)?;
    }
    Ok(any)
}

fn start_all(calls: &[SrfCall], row: &[Value], env: &mut ExecEnv) -> PgResult<Vec<CallState>> {
    calls
        .iter()
        .map(|c| CallState::start(c, row, env))
        .collect()
}

/// Function Scan: the calls' rows side by side, then the ordinality.
pub(crate) struct FunctionScanOp<'p> {
    calls: &'p [SrfCall],
    ordinality: bool,
    states: Vec<CallState>,
    produced: i64,
}

impl<'p> FunctionScanOp<'p> {
    /// Starts the calls (their arguments read no input row; a LATERAL
    /// reference reads the outer row the caller pushed).
    pub(crate) fn new(
        calls: &'p [SrfCall],
        ordinality: bool,
        env: &mut ExecEnv,
    ) -> PgResult<FunctionScanOp<'p>> {
        Ok(FunctionScanOp {
            calls,
            ordinality,
            states: start_all(calls, &[], env)?,
            produced: 0,
        })
    }
}

impl Operator for FunctionScanOp<'_> {
    fn next(&mut self, env: &mut ExecEnv) -> PgResult<Option<Row>> {
        if self.produced % 4096 == 4095 {
            env.check_cancel()?;
        }
        let mut row =
            Vec::with_capacity(sql::srf::function_scan_width(self.calls, self.ordinality));
        if !next_in_lockstep(self.calls, &mut self.states, &mut row)? {
            return Ok(None);
        }
        self.produced += 1;
        if self.ordinality {
            row.push(Value::Int8(self.produced));
        }
        Ok(Some(row))
    }
}

/// ProjectSet: for each input row, the calls in lockstep, then `exprs`
/// over the input row followed by the calls' values.
pub(crate) struct ProjectSetOp<'p> {
    input: Box<dyn Operator + 'p>,
    srfs: &'p [SrfCall],
    exprs: &'p [Expr],
    /// The input row (then the calls' current values, rewritten for each
    /// output row) and the running calls.
    current: Option<(Row, usize, Vec<CallState>)>,
}

impl<'p> ProjectSetOp<'p> {
    pub(crate) fn new(
        input: Box<dyn Operator + 'p>,
        srfs: &'p [SrfCall],
        exprs: &'p [Expr],
    ) -> Self {
        ProjectSetOp {
            input,
            srfs,
            exprs,
            current: None,
        }
    }
}

impl Operator for ProjectSetOp<'_> {
    fn next(&mut self, env: &mut ExecEnv) -> PgResult<Option<Row>> {
        loop {
            if let Some((row, input_width, states)) = &mut self.current {
                row.truncate(*input_width);
                if next_in_lockstep(self.srfs, states, row)? {
                    let mut out = Vec::with_capacity(self.exprs.len());
                    for e in self.exprs {
                        out.push(eval(e, row, env)?);
                    }
                    return Ok(Some(out));
                }
            }
            let Some(row) = self.input.next(env)? else {
                self.current = None;
                return Ok(None);
            };
            let states = start_all(self.srfs, &row, env)?;
            let input_width = row.len();
            self.current = Some((row, input_width, states));
        }
    }
}

/// generate_series state.
pub(crate) enum Series {
    Int {
        next: i64,
        stop: i64,
        step: i64,
    },
    Numeric {
        next: Value,
        stop: Value,
        step: Value,
        ascending: bool,
    },
    /// Timestamps stepped by an interval; a timestamptz steps the wall
    /// clock of the session's zone (`zone` set), as `+` does.
    Time {
        next: i64,
        stop: i64,
        step: types::interval::Interval,
        zone: Option<types::timezone::TimeZone>,
        ascending: bool,
    },
    Empty,
}

impl Series {
    fn new(vals: &[Value], ty: DataType, io: &types::IoSettings) -> PgResult<Series> {
        if vals.iter().any(Value::is_null) {
            return Ok(Series::Empty);
        }
        let zero_step = || {
            PgError::new(
                SqlState::INVALID_PARAMETER_VALUE,
                "step size cannot equal zero",
            )
        };
        if let (
            Value::Timestamp(a) | Value::Timestamptz(a),
            Value::Timestamp(b) | Value::Timestamptz(b),
            Some(Value::Interval(step)),
        ) = (&vals[0], &vals[1], vals.get(2))
        {
            let zero = types::interval::Interval::ZERO;
            let ord = step.cmp_span(&zero);
            if ord == Ordering::Equal {
                return Err(zero_step());
            }
            return Ok(Series::Time {
                next: *a,
                stop: *b,
                step: *step,
                zone: (ty.id == TypeId::Timestamptz).then_some(io.timezone),
                ascending: ord == Ordering::Greater,
            });
        }
        let as_i64 = |v: &Value| match v {
            Value::Int4(x) => *x as i64,
            Value::Int8(x) => *x,
            Value::Int2(x) => *x as i64,
            _ => 0,
        };
        if ty.id == TypeId::Numeric {
            let step = vals
                .get(2)
                .cloned()
                .unwrap_or_else(|| Value::numeric(Numeric::from_i64(1)));
            // NaN and infinite bounds would never end (PostgreSQL refuses them).
            for (v, what) in [
                (&vals[0], "start value"),
                (&vals[1], "stop value"),
                (&step, "step size"),
            ] {
                if let Value::Numeric(n) = v {
                    let special = if n.is_nan() {
                        Some("NaN")
                    } else if n.is_infinite() {
                        Some("infinity")
                    } else {
                        None
                    };
                    if let Some(special) = special {
                        return Err(PgError::new(
                            SqlState::INVALID_PARAMETER_VALUE,
                            format!("{what} cannot be {special}"),
                        ));
                    }
                }
            }
            let zero = Value::numeric(Numeric::from_i64(0));
            let ord = compare(&step, &zero);
            if ord == Ordering::Equal {
                return Err(zero_step());
            }
            return Ok(Series::Numeric {
                next: vals[0].clone(),
                stop: vals[1].clone(),
                step,
                ascending: ord == Ordering::Greater,
            });
        }
        let step = vals.get(2).map(as_i64).unwrap_or(1);
        if step == 0 {
            return Err(zero_step());
        }
        Ok(Series::Int {
            next: as_i64(&vals[0]),
            stop: as_i64(&vals[1]),
            step,
        })
    }

    fn next(&mut self, ty: DataType) -> PgResult<Option<Value>> {
        match self {
            Series::Empty => Ok(None),
            Series::Int { next, stop, step } => {
                if (*step > 0 && *next > *stop) || (*step < 0 && *next < *stop) {
                    return Ok(None);
                }
                let v = *next;
                match next.checked_add(*step) {
                    Some(n) => *next = n,
                    None => *self = Series::Empty,
                }
                Ok(Some(if ty.id == TypeId::Int4 {
                    Value::Int4(v as i32)
                } else {
                    Value::Int8(v)
                }))
            }
            Series::Numeric {
                next,
                stop,
                step,
                ascending,
            } => {
                let o = compare(next, stop);
                if (*ascending && o == Ordering::Greater) || (!*ascending && o == Ordering::Less) {
                    return Ok(None);
                }
                let v = next.clone();
                *next = eval_binary_op(BinaryOp::Add, next, step)?;
                Ok(Some(v))
            }
            Series::Time {
                next,
                stop,
                step,
                zone,
                ascending,
            } => {
                if (*ascending && next > stop) || (!*ascending && next < stop) {
                    return Ok(None);
                }
                let v = *next;
                let moved = match zone {
                    Some(z) => types::interval::timestamptz_plus(v, step, *z),
                    None => types::interval::timestamp_plus(v, step),
                };
                match moved {
                    Ok(n) if n != v => *next = n,
                    // Past the end of the range (or stuck at infinity): stop after this one.
                    _ => *self = Series::Empty,
                }
                Ok(Some(if ty.id == TypeId::Timestamptz {
                    Value::Timestamptz(v)
                } else {
                    Value::Timestamp(v)
                }))
            }
        }
    }
}
