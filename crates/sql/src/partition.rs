//! Partition bounds as values: which partition a key belongs to, whether
//! two bounds overlap, and which partitions a scan's quals can skip
//! (plan-time pruning). The catalog keeps bounds as text
//! (`catalog::partition`); `ResolvedBound` holds them parsed as the key's
//! types.

use std::cmp::Ordering;
use std::hash::Hasher;

use catalog::partition::{PartitionBound, PartitionKey, PartitionStrategy, RangeDatum};
use catalog::{CatalogData, Table};
use common::{PgError, PgResult, SqlState};
use types::ops::BinaryOp;
use types::{DataType, Value};

use crate::expr::Expr;

/// A range bound's datum as a value.
#[derive(Debug, Clone, PartialEq)]
pub enum RangeValue {
    Min,
    Value(Value),
    Max,
}

/// A bound with its values parsed.
#[derive(Debug, Clone, PartialEq)]
pub enum ResolvedBound {
    Range {
        from: Vec<RangeValue>,
        to: Vec<RangeValue>,
    },
    /// The values (a NULL among them accepts NULL keys).
    List(Vec<Value>),
    Hash {
        modulus: u32,
        remainder: u32,
    },
    Default,
}

fn parse(text: &str, ty: DataType) -> PgResult<Value> {
    types::io::parse_text(ty, text, &types::IoSettings::default())
}

/// A stored bound's values read as the key's types.
pub fn resolve(bound: &PartitionBound, key: &PartitionKey) -> PgResult<ResolvedBound> {
    let ty = |i: usize| {
        key.parts
            .get(i)
            .map_or(DataType::new(types::TypeId::Text), |p| p.data_type())
    };
    let range = |ds: &[RangeDatum]| -> PgResult<Vec<RangeValue>> {
        ds.iter()
            .enumerate()
            .map(|(i, d)| {
                Ok(match d {
                    RangeDatum::MinValue => RangeValue::Min,
                    RangeDatum::MaxValue => RangeValue::Max,
                    RangeDatum::Value(t) => RangeValue::Value(parse(t, ty(i))?),
                })
            })
            .collect()
    };
    Ok(match bound {
        PartitionBound::Range { from, to } => ResolvedBound::Range {
            from: range(from)?,
            to: range(to)?,
        },
        PartitionBound::List(values) => ResolvedBound::List(
            values
                .iter()
                .map(|v| v.as_deref().map_or(Ok(Value::Null), |t| parse(t, ty(0))))
                .collect::<PgResult<_>>()?,
        ),
        PartitionBound::Hash { modulus, remainder } => ResolvedBound::Hash {
            modulus: *modulus,
            remainder: *remainder,
        },
        PartitionBound::Default => ResolvedBound::Default,
    })
}

/// A range bound against a key: Less when the bound is below it.
pub fn compare_bound_to_key(bound: &[RangeValue], key: &[Value], types: &[DataType]) -> Ordering {
    for (i, (b, k)) in bound.iter().zip(key).enumerate() {
        match b {
            RangeValue::Min => return Ordering::Less,
            RangeValue::Max => return Ordering::Greater,
            RangeValue::Value(v) => {
                let ty = types.get(i).map_or(types::TypeId::Text, |t| t.id);
                match types::ops::compare_typed(ty, v, k) {
                    Ordering::Equal => {}
                    other => return other,
                }
            }
        }
    }
    Ordering::Equal
}

/// Two range bounds' order (MINVALUE below every value, MAXVALUE above).
pub fn compare_bounds(a: &[RangeValue], b: &[RangeValue], types: &[DataType]) -> Ordering {
    let rank = |v: &RangeValue| match v {
        RangeValue::Min => 0,
        RangeValue::Value(_) => 1,
        RangeValue::Max => 2,
    };
    for (i, (x, y)) in a.iter().zip(b).enumerate() {
        let c = match (x, y) {
            (RangeValue::Value(x), RangeValue::Value(y)) => {
                let ty = types.get(i).map_or(types::TypeId::Text, |t| t.id);
                types::ops::compare_typed(ty, x, y)
            }
            // Past an infinity the remaining datums do not matter.
            _ if rank(x) == rank(y) => return Ordering::Equal,
            _ => rank(x).cmp(&rank(y)),
        };
        if c != Ordering::Equal {
            return c;
        }
    }
    Ordering::Equal
}

/// A stable 64-bit FNV-1a hasher: hash partitions place rows by it, so it
/// must never change between versions.
struct StableHasher(u64);

impl Hasher for StableHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 ^= u64::from(*b);
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
}

/// The row hash a hash partition's remainder is taken of (NULL keys
/// contribute nothing, as in PostgreSQL).
pub fn hash_key(key: &[Value], types: &[DataType]) -> u64 {
    let mut row = 0u64;
    for (i, v) in key.iter().enumerate() {
        if v.is_null() {
            continue;
        }
        let mut h = StableHasher(0xcbf2_9ce4_8422_2325);
        let ty = types.get(i).map_or(types::TypeId::Text, |t| t.id);
        types::ops::hash_value_typed(ty, v, &mut h);
        // hash_combine64's mixing, so column order matters.
        row ^= h
            .finish()
            .wrapping_add(0x49a0_f4dd_15e5_a8e3)
            .wrapping_add(row << 54)
            .wrapping_add(row >> 7);
    }
    row
}

/// Whether a key belongs to a (non-default) bound.
pub fn bound_accepts(bound: &ResolvedBound, key: &[Value], types: &[DataType]) -> bool {
    match bound {
        ResolvedBound::Range { from, to } => {
            // Range partitions take no NULL keys (only a default does).
            !key.iter().any(Value::is_null)
                && compare_bound_to_key(from, key, types) != Ordering::Greater
                && compare_bound_to_key(to, key, types) == Ordering::Greater
        }
        ResolvedBound::List(values) => {
            let k = &key[0];
            let ty = types.first().map_or(types::TypeId::Text, |t| t.id);
            values.iter().any(|v| match (v.is_null(), k.is_null()) {
                (true, true) => true,
                (false, false) => types::ops::compare_typed(ty, v, k) == Ordering::Equal,
                _ => false,
            })
        }
        ResolvedBound::Hash { modulus, remainder } => {
            hash_key(key, types) % u64::from(*modulus) == u64::from(*remainder)
        }
        ResolvedBound::Default => false,
    }
}

/// Whether two bounds of one parent share a key.
pub fn bounds_overlap(a: &ResolvedBound, b: &ResolvedBound, types: &[DataType]) -> bool {
    match (a, b) {
        (ResolvedBound::Range { from: f1, to: t1 }, ResolvedBound::Range { from: f2, to: t2 }) => {
            compare_bounds(f1, t2, types) == Ordering::Less
                && compare_bounds(f2, t1, types) == Ordering::Less
        }
        (ResolvedBound::List(x), ResolvedBound::List(y)) => {
            let ty = types.first().map_or(types::TypeId::Text, |t| t.id);
            x.iter().any(|v| {
                y.iter().any(|w| match (v.is_null(), w.is_null()) {
                    (true, true) => true,
                    (false, false) => types::ops::compare_typed(ty, v, w) == Ordering::Equal,
                    _ => false,
                })
            })
        }
        (
            ResolvedBound::Hash {
                modulus: m1,
                remainder: r1,
            },
            ResolvedBound::Hash {
                modulus: m2,
                remainder: r2,
            },
        ) => {
            let (small_m, small_r, big_r) = if m1 <= m2 { (m1, r1, r2) } else { (m2, r2, r1) };
            big_r % small_m == *small_r
        }
        (ResolvedBound::Default, ResolvedBound::Default) => true,
        _ => false,
    }
}

/// A partitioned table's direct partitions with their bounds, in
/// PostgreSQL's bound order (range by lower bound, list by smallest value,
/// hash by modulus and remainder, the default partition last): the order
/// an Append over them scans.
pub fn ordered_partitions<'c>(
    catalog: &'c CatalogData,
    parent: &Table,
) -> PgResult<Vec<(&'c Table, ResolvedBound)>> {
    let Some(key) = parent.partition_key.as_deref() else {
        return Ok(Vec::new());
    };
    let types: Vec<DataType> = key.parts.iter().map(|p| p.data_type()).collect();
    let mut out = Vec::new();
    for child in catalog.partitions_of(parent.oid) {
        let of = child.partition_of.as_deref().expect("a partition");
        out.push((child, resolve(&of.bound, key)?));
    }
    out.sort_by(|(_, a), (_, b)| order_key_cmp(a, b, &types));
    Ok(out)
}

fn order_key_cmp(a: &ResolvedBound, b: &ResolvedBound, types: &[DataType]) -> Ordering {
    let rank = |x: &ResolvedBound| match x {
        ResolvedBound::Default => 1,
        _ => 0,
    };
    match (a, b) {
        (ResolvedBound::Range { from: x, .. }, ResolvedBound::Range { from: y, .. }) => {
            compare_bounds(x, y, types)
        }
        (ResolvedBound::List(x), ResolvedBound::List(y)) => {
            let ty = types.first().map_or(types::TypeId::Text, |t| t.id);
            let least = |l: &[Value]| -> Option<Value> {
                l.iter()
                    .filter(|v| !v.is_null())
                    .min_by(|p, q| types::ops::compare_typed(ty, p, q))
                    .cloned()
            };
            match (least(x), least(y)) {
                (Some(p), Some(q)) => types::ops::compare_typed(ty, &p, &q),
                (Some(_), None) => Ordering::Less,
                (None, Some(_)) => Ordering::Greater,
                (None, None) => Ordering::Equal,
            }
        }
        (
            ResolvedBound::Hash {
                modulus: m1,
                remainder: r1,
            },
            ResolvedBound::Hash {
                modulus: m2,
                remainder: r2,
            },
        ) => (m1, r1).cmp(&(m2, r2)),
        _ => rank(a).cmp(&rank(b)),
    }
}

/// What quals say about one key column: values it must equal (None: any),
/// and lower/upper limits (value, inclusive).
#[derive(Debug, Default, Clone)]
struct ColumnLimits {
    equals: Option<Vec<Value>>,
    lower: Option<(Value, bool)>,
    upper: Option<(Value, bool)>,
}

fn column_of(e: &Expr) -> Option<usize> {
    match e {
        Expr::Column(i, _) => Some(*i),
        Expr::Cast { expr, .. } => column_of(expr),
        _ => None,
    }
}

fn constant_of(e: &Expr) -> Option<&Value> {
    match e {
        Expr::Const(v, _) => Some(v),
        _ => None,
    }
}

fn flip(op: BinaryOp) -> BinaryOp {
    match op {
        BinaryOp::Lt => BinaryOp::Gt,
        BinaryOp::LtEq => BinaryOp::GtEq,
        BinaryOp::Gt => BinaryOp::Lt,
        BinaryOp::GtEq => BinaryOp::LtEq,
        other => other,
    }
}

/// Folds one qual into the limits of the key columns it constrains.
fn note_qual(
    q: &Expr,
    key_columns: &[Option<usize>],
    limits: &mut [ColumnLimits],
    ty: &[DataType],
) {
    let part_of =
        |e: &Expr| column_of(e).and_then(|c| key_columns.iter().position(|k| *k == Some(c)));
    match q {
        Expr::Binary {
            op, left, right, ..
        } => {
            let (part, value, op) = match (
                part_of(left),
                constant_of(right),
                part_of(right),
                constant_of(left),
            ) {
                (Some(p), Some(v), _, _) => (p, v, *op),
                (_, _, Some(p), Some(v)) => (p, v, flip(*op)),
                _ => return,
            };
            if value.is_null() {
                return;
            }
            let t = ty[part].id;
            let l = &mut limits[part];
            match op {
                BinaryOp::Eq => l.equals = Some(vec![value.clone()]),
                BinaryOp::Gt | BinaryOp::GtEq => {
                    let incl = op == BinaryOp::GtEq;
                    let tighter = l.lower.as_ref().is_none_or(|(v, _)| {
                        types::ops::compare_typed(t, value, v) == Ordering::Greater
                    });
                    if tighter {
                        l.lower = Some((value.clone(), incl));
                    }
                }
                BinaryOp::Lt | BinaryOp::LtEq => {
                    let incl = op == BinaryOp::LtEq;
                    let tighter = l.upper.as_ref().is_none_or(|(v, _)| {
                        types::ops::compare_typed(t, value, v) == Ordering::Less
                    });
                    if tighter {
                        l.upper = Some((value.clone(), incl));
                    }
                }
                _ => {}
            }
        }
        Expr::InList {
            expr,
            list,
            negated: false,
        } => {
            let Some(p) = part_of(expr) else { return };
            let values: Option<Vec<Value>> = list.iter().map(|e| constant_of(e).cloned()).collect();
            if let Some(values) = values {
                limits[p].equals = Some(values.into_iter().filter(|v| !v.is_null()).collect());
            }
        }
        Expr::ArrayCompare {
            expr,
            op: BinaryOp::Eq,
            array,
            all: false,
        } => {
            let Some(p) = part_of(expr) else { return };
            if let Some(Value::Array(a)) = constant_of(array) {
                let values: Vec<Value> = a.items.iter().filter(|v| !v.is_null()).cloned().collect();
                limits[p].equals = Some(values);
            }
        }
        _ => {}
    }
}

/// Whether a partition with this bound can hold a row passing quals that
/// imply `limits` (false only when the bound contradicts them).
fn may_match(
    bound: &ResolvedBound,
    limits: &[ColumnLimits],
    types: &[DataType],
    strategy: PartitionStrategy,
) -> bool {
    match bound {
        ResolvedBound::Default => {
            // Kept unless every candidate key is an equality some other
            // partition takes (decided by the caller).
            true
        }
        ResolvedBound::List(values) => {
            let l = &limits[0];
            let ty = types[0].id;
            if let Some(eq) = &l.equals {
                return eq.iter().any(|v| {
                    values.iter().any(|w| {
                        !w.is_null() && types::ops::compare_typed(ty, v, w) == Ordering::Equal
                    })
                });
            }
            values.iter().any(|w| {
                !w.is_null()
                    && l.lower.as_ref().is_none_or(|(v, incl)| {
                        let c = types::ops::compare_typed(ty, w, v);
                        c == Ordering::Greater || (*incl && c == Ordering::Equal)
                    })
                    && l.upper.as_ref().is_none_or(|(v, incl)| {
                        let c = types::ops::compare_typed(ty, w, v);
                        c == Ordering::Less || (*incl && c == Ordering::Equal)
                    })
            })
        }
        ResolvedBound::Range { from, to } => {
            // Only the first key column's limits prune a range partition,
            // plus full equality on every column.
            if limits
                .iter()
                .all(|l| l.equals.as_ref().is_some_and(|e| e.len() == 1))
            {
                let key: Vec<Value> = limits
                    .iter()
                    .map(|l| l.equals.as_ref().unwrap()[0].clone())
                    .collect();
                return bound_accepts(bound, &key, types);
            }
            let l = &limits[0];
            let ty = types[0].id;
            let (lo, hi) = (&from[0], &to[0]);
            let candidates: Vec<(Value, bool, Value, bool)> = match &l.equals {
                Some(eq) => eq
                    .iter()
                    .map(|v| (v.clone(), true, v.clone(), true))
                    .collect(),
                None => {
                    let lower = l.lower.clone();
                    let upper = l.upper.clone();
                    // No limits at all: keep.
                    if lower.is_none() && upper.is_none() {
                        return true;
                    }
                    return range_may_overlap(
                        lo,
                        hi,
                        lower.as_ref(),
                        upper.as_ref(),
                        ty,
                        from.len() > 1,
                    );
                }
            };
            candidates.iter().any(|(a, ai, b, bi)| {
                range_may_overlap(
                    lo,
                    hi,
                    Some(&(a.clone(), *ai)),
                    Some(&(b.clone(), *bi)),
                    ty,
                    from.len() > 1,
                )
            })
        }
        ResolvedBound::Hash { modulus, remainder } => {
            if strategy != PartitionStrategy::Hash
                || !limits
                    .iter()
                    .all(|l| l.equals.as_ref().is_some_and(|e| e.len() == 1))
            {
                return true;
            }
            let key: Vec<Value> = limits
                .iter()
                .map(|l| l.equals.as_ref().unwrap()[0].clone())
                .collect();
            hash_key(&key, types) % u64::from(*modulus) == u64::from(*remainder)
        }
    }
}

/// Whether the partition's first-column interval (from `lo`, inclusive,
/// to `hi`: exclusive, inclusive when the key has more columns) meets the
/// quals' interval.
fn range_may_overlap(
    lo: &RangeValue,
    hi: &RangeValue,
    lower: Option<&(Value, bool)>,
    upper: Option<&(Value, bool)>,
    ty: types::TypeId,
    multi: bool,
) -> bool {
    if matches!(lo, RangeValue::Max) || matches!(hi, RangeValue::Min) {
        return false;
    }
    if let (Some((u, incl)), RangeValue::Value(l)) = (upper, lo) {
        match types::ops::compare_typed(ty, u, l) {
            Ordering::Less => return false,
            Ordering::Equal if !incl => return false,
            _ => {}
        }
    }
    if let (Some((w, incl)), RangeValue::Value(h)) = (lower, hi) {
        match types::ops::compare_typed(ty, w, h) {
            Ordering::Greater => return false,
            Ordering::Equal if !multi || !incl => return false,
            _ => {}
        }
    }
    true
}

/// The partitions of `parent` (ordered) that rows passing `quals` may be
/// in: quals comparing a key column (`key_columns[i]`: the scan column
/// of key part i, None for an expression) with a constant rule the others out.
pub fn prune<'c>(
    parts: Vec<(&'c Table, ResolvedBound)>,
    key: &PartitionKey,
    key_columns: &[Option<usize>],
    quals: &[Expr],
) -> Vec<(&'c Table, ResolvedBound)> {
    let types: Vec<DataType> = key.parts.iter().map(|p| p.data_type()).collect();
    let mut limits = vec![ColumnLimits::default(); key.parts.len()];
    for q in quals {
        for c in crate::bind::split_conjuncts(q.clone()) {
            note_qual(&c, key_columns, &mut limits, &types);
        }
    }
    let mut kept: Vec<(&'c Table, ResolvedBound)> = parts
        .into_iter()
        .filter(|(_, b)| may_match(b, &limits, &types, key.strategy))
        .collect();
    // A default partition is pruned when the key is pinned to values that
    // other partitions take.
    let has_default = kept.iter().any(|(_, b)| *b == ResolvedBound::Default);
    if has_default {
        let covered = match key.strategy {
            PartitionStrategy::List => limits[0].equals.as_ref().is_some_and(|eq| {
                eq.iter().all(|v| {
                    kept.iter().any(|(_, b)| {
                        *b != ResolvedBound::Default
                            && bound_accepts(b, std::slice::from_ref(v), &types)
                    })
                })
            }),
            _ => {
                let full: Option<Vec<Value>> = limits
                    .iter()
                    .map(|l| {
                        l.equals
                            .as_ref()
                            .filter(|e| e.len() == 1)
                            .map(|e| e[0].clone())
                    })
                    .collect();
                full.is_some_and(|k| {
                    kept.iter()
                        .any(|(_, b)| *b != ResolvedBound::Default && bound_accepts(b, &k, &types))
                })
            }
        };
        if covered {
            kept.retain(|(_, b)| *b != ResolvedBound::Default);
        }
    }
    kept
}

/// The 23514 error of a row no partition takes.
pub fn no_partition_error(parent: &Table, key_text: &str) -> PgError {
    PgError::new(
        SqlState::CHECK_VIOLATION,
        format!("no partition of relation \"{}\" found for row", parent.name),
    )
    .with_detail(format!(
        "Partition key of the failing row contains {key_text}."
    ))
}
