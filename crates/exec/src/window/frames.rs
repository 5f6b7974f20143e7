//! Peer groups and frames over one partition (nodeWindowAgg.c's
//! update_frameheadpos / update_frametailpos): every frame is a half-open
//! range of partition positions, less the rows EXCLUDE removes.

use std::cmp::Ordering;

use common::{PgError, PgResult, SqlState};
use sql::expr::{FrameBound, FrameExclusion, FrameUnits, WindowFrame};
use sql::plan::SortKey;
use types::ops::{compare, eval_binary_op, BinaryOp};
use types::Value;

use crate::eval::eval;
use crate::ops::compare_rows;
use crate::{ExecEnv, Row};

/// One side of a frame with its offset evaluated.
#[derive(Clone, Copy, PartialEq)]
enum Bound<'v> {
    UnboundedPreceding,
    Preceding(&'v Value),
    CurrentRow,
    Following(&'v Value),
    UnboundedFollowing,
}

/// A RANGE bound's key value: `key ± offset`, or past every value when
/// the sum overflows (PostgreSQL's in_range treats that as infinite).
enum RangeKey {
    Value(Value),
    BelowAll,
    AboveAll,
}

pub(super) struct Frames<'a> {
    rows: usize,
    /// Each row's peer group (rows equal in the ORDER BY keys; with no
    /// ORDER BY the whole partition is one group).
    pub group_of: Vec<usize>,
    /// Each group's first position and one past its last.
    pub group_start: Vec<usize>,
    pub group_end: Vec<usize>,
    units: FrameUnits,
    exclusion: FrameExclusion,
    start: FrameBound,
    end: FrameBound,
    start_offset: Value,
    end_offset: Value,
    order: &'a [SortKey],
    /// The RANGE key of each row (with offsets only).
    keys: Vec<Value>,
    /// The session's TimeZone: timestamptz keys move by days and months
    /// on its wall clock, as timestamptz + interval does.
    zone: types::datetime::TimeZone,
}

/// A frame offset, checked as PostgreSQL checks it once per partition.
fn offset(b: &FrameBound, units: FrameUnits, which: &str, env: &mut ExecEnv) -> PgResult<Value> {
    let (FrameBound::Preceding(e) | FrameBound::Following(e)) = b else {
        return Ok(Value::Null);
    };
    let v = eval(e, &[], env)?;
    if v.is_null() {
        return Err(PgError::new(
            SqlState::NULL_VALUE_NOT_ALLOWED,
            format!("frame {which} offset must not be null"),
        ));
    }
    let negative = match &v {
        Value::Int8(n) => *n < 0,
        Value::Float8(f) => *f < 0.0,
        Value::Interval(_) | Value::Numeric(_) => {
            let zero = eval_binary_op(BinaryOp::Sub, &v, &v)?;
            compare(&v, &zero) == Ordering::Less
        }
        _ => false,
    };
    if negative {
        let msg = match units {
            FrameUnits::Range => "invalid preceding or following size in window function".into(),
            _ => format!("frame {which} offset must not be negative"),
        };
        return Err(PgError::new(
            SqlState::INVALID_PRECEDING_OR_FOLLOWING_SIZE,
            msg,
        ));
    }
    Ok(v)
}

impl<'a> Frames<'a> {
    /// `peers`: whether any call reads peer groups or frames; when none
    /// does (row_number, ntile, lag, lead), the rows are not compared and
    /// the partition is left as one group.
    pub(super) fn new(
        rows: &[Row],
        order: &'a [SortKey],
        frame: &WindowFrame,
        peers: bool,
        env: &mut ExecEnv,
    ) -> PgResult<Self> {
        let mut group_of = Vec::with_capacity(if peers { rows.len() } else { 0 });
        let mut group_start = Vec::new();
        let mut group_end = Vec::new();
        for (i, r) in rows.iter().enumerate().take_while(|_| peers) {
            let new_group = i == 0 || compare_rows(&rows[i - 1], r, order) != Ordering::Equal;
            if new_group {
                if i > 0 {
                    group_end.push(i);
                }
                group_start.push(i);
            }
            group_of.push(group_start.len() - 1);
        }
        if !peers {
            group_of = vec![0; rows.len()];
            group_start.push(0);
        }
        group_end.push(rows.len());
        let start_offset = offset(&frame.start, frame.units, "starting", env)?;
        let end_offset = offset(&frame.end, frame.units, "ending", env)?;
        let with_offset =
            |b: &FrameBound| matches!(b, FrameBound::Preceding(_) | FrameBound::Following(_));
        let keys = if frame.units == FrameUnits::Range
            && (with_offset(&frame.start) || with_offset(&frame.end))
        {
            rows.iter().map(|r| r[order[0].column].clone()).collect()
        } else {
            Vec::new()
        };
        Ok(Frames {
            rows: rows.len(),
            group_of,
            group_start,
            group_end,
            units: frame.units,
            exclusion: frame.exclusion,
            start: frame.start.clone(),
            end: frame.end.clone(),
            start_offset,
            end_offset,
            order,
            keys,
            zone: env.io.timezone,
        })
    }

    /// Whether every frame starts at the partition's first row and holds
    /// all rows up to its end (running aggregates can then add rows as the
    /// end advances).
    pub(super) fn grows_from_start(&self) -> bool {
        self.start == FrameBound::UnboundedPreceding && self.exclusion == FrameExclusion::NoOthers
    }

    /// Whether every frame ends at the partition's last row and holds all
    /// rows from its start (frames then grow as the start moves back).
    pub(super) fn reaches_end(&self) -> bool {
        self.end == FrameBound::UnboundedFollowing && self.exclusion == FrameExclusion::NoOthers
    }

    fn bound<'s>(b: &FrameBound, offset: &'s Value) -> Bound<'s> {
        match b {
            FrameBound::UnboundedPreceding => Bound::UnboundedPreceding,
            FrameBound::Preceding(_) => Bound::Preceding(offset),
            FrameBound::CurrentRow => Bound::CurrentRow,
            FrameBound::Following(_) => Bound::Following(offset),
            FrameBound::UnboundedFollowing => Bound::UnboundedFollowing,
        }
    }

    /// Row `i`'s frame before exclusion: `[start, end)`.
    pub(super) fn bounds(&self, i: usize) -> PgResult<(usize, usize)> {
        let start = self.position(i, Self::bound(&self.start, &self.start_offset), true)?;
        let end = self.position(i, Self::bound(&self.end, &self.end_offset), false)?;
        Ok((start, end.max(start)))
    }

    /// Row `i`'s frame as ordered, disjoint ranges of positions.
    pub(super) fn ranges(&self, i: usize) -> PgResult<Vec<(usize, usize)>> {
        let (s, e) = self.bounds(i)?;
        let g = self.group_of[i];
        let (gs, ge) = (self.group_start[g], self.group_end[g]);
        let cut: Vec<(usize, usize)> = match self.exclusion {
            FrameExclusion::NoOthers => vec![(s, e)],
            FrameExclusion::CurrentRow => vec![(s, e.min(i)), (s.max(i + 1), e)],
            FrameExclusion::Group => vec![(s, e.min(gs)), (s.max(ge), e)],
            FrameExclusion::Ties => vec![(s, e.min(gs)), (s.max(i), e.min(i + 1)), (s.max(ge), e)],
        };
        Ok(cut.into_iter().filter(|(a, b)| a < b).collect())
    }

    /// Where a frame bound falls for row `i`: the first position in the
    /// frame (`start`) or one past the last (end).
    fn position(&self, i: usize, b: Bound, start: bool) -> PgResult<usize> {
        let n = self.rows;
        let count = |v: &Value| match v {
            Value::Int8(k) => *k as u64 as usize,
            _ => 0,
        };
        Ok(match (self.units, b) {
            (_, Bound::UnboundedPreceding) => 0,
            (_, Bound::UnboundedFollowing) => n,
            (FrameUnits::Rows, Bound::CurrentRow) => i + usize::from(!start),
            (FrameUnits::Rows, Bound::Preceding(k)) => {
                (i + usize::from(!start)).saturating_sub(count(k))
            }
            (FrameUnits::Rows, Bound::Following(k)) => {
                (i + usize::from(!start)).saturating_add(count(k)).min(n)
            }
            (_, Bound::CurrentRow) => {
                let g = self.group_of[i];
                if start {
                    self.group_start[g]
                } else {
                    self.group_end[g]
                }
            }
            (FrameUnits::Groups, Bound::Preceding(k) | Bound::Following(k)) => {
                let g = self.group_of[i] as i128;
                let k = count(k) as i128;
                let target = if matches!(b, Bound::Preceding(_)) {
                    g - k
                } else {
                    g + k
                };
                let groups = self.group_start.len() as i128;
                match (start, target) {
                    (true, t) if t < 0 => 0,
                    (true, t) if t >= groups => n,
                    (true, t) => self.group_start[t as usize],
                    (false, t) if t < 0 => 0,
                    (false, t) if t >= groups => n,
                    (false, t) => self.group_end[t as usize],
                }
            }
            (FrameUnits::Range, Bound::Preceding(off) | Bound::Following(off)) => {
                self.range_position(i, off, matches!(b, Bound::Preceding(_)), start)?
            }
        })
    }

    /// A RANGE offset bound: rows whose key lies within `offset` of the
    /// current row's, in the direction of the ORDER BY. NULL keys are
    /// peers of each other and beyond every offset from a value.
    fn range_position(
        &self,
        i: usize,
        off: &Value,
        preceding: bool,
        start: bool,
    ) -> PgResult<usize> {
        let key = &self.order[0];
        let cur = &self.keys[i];
        if cur.is_null() {
            let g = self.group_of[i];
            return Ok(if start {
                self.group_start[g]
            } else {
                self.group_end[g]
            });
        }
        // Toward the partition's start is subtraction when ascending.
        let subtract = preceding != key.descending;
        let bound = range_key(cur, off, subtract, self.zone)?;
        // In sort order, whether a row lies before the bound (start) or
        // not after it (end); rows are sorted so the test flips once.
        let before = |v: &Value| -> bool {
            if v.is_null() {
                return key.nulls_first;
            }
            let o = match &bound {
                RangeKey::BelowAll => Ordering::Greater,
                RangeKey::AboveAll => Ordering::Less,
                RangeKey::Value(b) => compare(v, b),
            };
            let o = if key.descending { o.reverse() } else { o };
            if start {
                o == Ordering::Less
            } else {
                o != Ordering::Greater
            }
        };
        Ok(self.keys.partition_point(before))
    }
}

/// `key + offset` or `key - offset`, saturating to beyond every value.
fn range_key(
    key: &Value,
    off: &Value,
    subtract: bool,
    zone: types::datetime::TimeZone,
) -> PgResult<RangeKey> {
    let int = |k: i128| -> Option<i128> {
        let Value::Int8(o) = off else { return None };
        Some(if subtract {
            k - *o as i128
        } else {
            k + *o as i128
        })
    };
    let int_key = match key {
        Value::Int2(k) => Some(*k as i128),
        Value::Int4(k) => Some(*k as i128),
        Value::Int8(k) => Some(*k as i128),
        _ => None,
    };
    if let Some(k) = int_key.and_then(int) {
        return Ok(match i64::try_from(k) {
            Ok(v) => RangeKey::Value(Value::Int8(v)),
            Err(_) if k < 0 => RangeKey::BelowAll,
            Err(_) => RangeKey::AboveAll,
        });
    }
    let op = if subtract {
        BinaryOp::Sub
    } else {
        BinaryOp::Add
    };
    let moved = |key: &Value| match (key, off) {
        (Value::Timestamptz(t), Value::Interval(i)) => {
            let i = if subtract { i.checked_neg()? } else { *i };
            types::interval::timestamptz_plus(*t, &i, zone).map(Value::Timestamptz)
        }
        _ => eval_binary_op(op, key, off),
    };
    match (key, off) {
        (Value::Float4(k), Value::Float8(o)) => {
            let k = *k as f64;
            Ok(RangeKey::Value(Value::Float8(if subtract {
                k - o
            } else {
                k + o
            })))
        }
        (Value::Float8(k), Value::Float8(o)) => Ok(RangeKey::Value(Value::Float8(if subtract {
            k - o
        } else {
            k + o
        }))),
        _ => match moved(key) {
            Ok(v) => Ok(RangeKey::Value(v)),
            // Out of range: past every value in that direction.
            Err(e) if e.code == SqlState::DATETIME_FIELD_OVERFLOW => Ok(if subtract {
                RangeKey::BelowAll
            } else {
                RangeKey::AboveAll
            }),
            Err(e) => Err(e),
        },
    }
}
