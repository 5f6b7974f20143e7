//! Aggregation: transition states for count/sum/avg/min/max/bool_and/bool_or/
//! string_agg, and grouping keys hashed consistently with SQL equality.

use std::cmp::Ordering;
use std::collections::HashSet;
use std::hash::{BuildHasherDefault, Hash, Hasher};

use common::{PgError, PgResult, SqlState};
use sql::expr::{AggCall, AggFunc};
use sql::plan::SortKey;
use types::ops::{compare, eval_binary_op, hash_value, BinaryOp};
use types::{TypeId, Value};

use crate::agg_stats::{
    bits_value, fold_bits, FloatMoments, NumericMoments, OrderedInputs, Regression,
};
use crate::eval::eval;
use crate::ops::compare_rows;
use crate::{ExecEnv, Row};

/// A multiplicative hasher for in-memory hash tables (FxHash's scheme):
/// keys are trusted values, not attacker-chosen network input, and SipHash
/// was a tenth of a hash join's time.
#[derive(Default)]
pub(crate) struct KeyHasher(u64);

const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

impl Hasher for KeyHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            self.write_u64(u64::from_le_bytes(c.try_into().expect("8 bytes")));
        }
        for b in chunks.remainder() {
            self.write_u64(*b as u64);
        }
    }
    fn write_u64(&mut self, x: u64) {
        self.0 = (self.0.rotate_left(5) ^ x).wrapping_mul(SEED);
    }
    fn write_i64(&mut self, x: i64) {
        self.write_u64(x as u64);
    }
    fn write_u8(&mut self, x: u8) {
        self.write_u64(x as u64);
    }
    fn finish(&self) -> u64 {
        // hashbrown takes its control byte from the top bits and the slot
        // from the low ones: fold the well-mixed high half down as well.
        self.0 ^ (self.0 >> 29)
    }
}

pub(crate) type KeyHashBuilder = BuildHasherDefault<KeyHasher>;

/// A row of values usable as a hash key (NULLs group together).
#[derive(Clone, Debug)]
pub struct GroupKey(pub Vec<Value>);

impl Hash for GroupKey {
    fn hash<H: Hasher>(&self, state: &mut H) {
        (self as &dyn KeyView).hash(state)
    }
}
impl PartialEq for GroupKey {
    fn eq(&self, other: &Self) -> bool {
        (self as &dyn KeyView) == (other as &dyn KeyView)
    }
}
impl Eq for GroupKey {}

/// A group key's values read in place: a map of `GroupKey`s is probed with
/// a view (`Borrow`), so a row's key is copied only when it starts a group.
/// A view hashes and compares as the `GroupKey` of the same values.
pub(crate) trait KeyView {
    fn key_len(&self) -> usize;
    fn key_value(&self, i: usize) -> &Value;
}

impl KeyView for GroupKey {
    fn key_len(&self) -> usize {
        self.0.len()
    }
    fn key_value(&self, i: usize) -> &Value {
        &self.0[i]
    }
}

static NULL: Value = Value::Null;

/// A grouping set's key: the set's number, then the row's key values with
/// those not in the set NULL.
pub(crate) struct SetKey<'a> {
    /// `Value::Int4` of the set's number.
    pub set: Value,
    pub values: &'a [Value],
    pub members: &'a [bool],
}

impl SetKey<'_> {
    pub(crate) fn to_group_key(&self) -> GroupKey {
        GroupKey(
            (0..self.key_len())
                .map(|i| self.key_value(i).clone())
                .collect(),
        )
    }
}

impl KeyView for SetKey<'_> {
    fn key_len(&self) -> usize {
        1 + self.values.len()
    }
    fn key_value(&self, i: usize) -> &Value {
        match i {
            0 => &self.set,
            _ if self.members[i - 1] => &self.values[i - 1],
            _ => &NULL,
        }
    }
}

impl Hash for dyn KeyView + '_ {
    fn hash<H: Hasher>(&self, state: &mut H) {
        for i in 0..self.key_len() {
            let v = self.key_value(i);
            if v.is_null() {
                0u8.hash(state);
            } else {
                1u8.hash(state);
                hash_value(v, state);
            }
        }
    }
}
impl PartialEq for dyn KeyView + '_ {
    fn eq(&self, other: &Self) -> bool {
        self.key_len() == other.key_len()
            && (0..self.key_len()).all(|i| {
                let (a, b) = (self.key_value(i), other.key_value(i));
                match (a.is_null(), b.is_null()) {
                    (true, true) => true,
                    (false, false) => compare(a, b) == Ordering::Equal,
                    _ => false,
                }
            })
    }
}
impl Eq for dyn KeyView + '_ {}

impl<'a> std::borrow::Borrow<dyn KeyView + 'a> for GroupKey {
    fn borrow(&self) -> &(dyn KeyView + 'a) {
        self
    }
}

fn numeric_of(i: i128) -> PgResult<Value> {
    Ok(Value::numeric(types::numeric::Numeric::parse(
        &i.to_string(),
    )?))
}

#[derive(Clone)]
pub enum AggState {
    Count(i64),
    SumInt(Option<i128>),
    SumFloat(Option<f64>),
    SumNumeric(Option<Value>),
    AvgInt(i128, i64),
    AvgFloat(f64, i64),
    AvgNumeric(Option<Value>, i64),
    MinMax(Option<Value>),
    Bool(Option<bool>),
    StringAgg(Option<String>),
    /// string_agg over bytea.
    ByteaAgg(Option<Vec<u8>>),
    /// json_agg: the array text so far; jsonb_agg: the elements.
    JsonAgg(Option<String>),
    /// jsonb_agg's elements are appended in their stored form (nothing decoded).
    JsonbAgg(Option<types::json::stored::ArrayBuilder>),
    /// json_object_agg: the object text so far; jsonb_object_agg: the pairs.
    JsonObjectAgg(Option<String>),
    JsonbObjectAgg(Option<Vec<(String, types::json::Jsonb)>>),
    /// array_agg: the inputs so far (None before the first).
    ArrayAgg(Option<Vec<Value>>),
    NumericMoments(NumericMoments),
    FloatMoments(FloatMoments),
    Bits(Option<i64>),
    Regression(Regression),
    Ordered(OrderedInputs),
}

/// Clone: a window's running aggregate is finished from a copy.
#[derive(Clone)]
pub struct AggAccumulator {
    pub state: AggState,
    seen: Option<HashSet<GroupKey>>,
    /// Inputs held back until the group ends, for a call whose result
    /// depends on the order they arrive in.
    held: Option<Held>,
}

/// Whether feeding the same inputs in another order can change the result:
/// only then do ORDER BY (and DISTINCT, which PostgreSQL runs by sorting)
/// make a call sort its inputs.
fn order_sensitive(call: &AggCall) -> bool {
    use AggFunc::*;
    match call.func {
        StringAgg | ArrayAgg | JsonAgg | JsonbAgg | JsonObjectAgg | JsonbObjectAgg => true,
        PercentileCont | PercentileDisc | Mode => true,
        // Floating-point sums round differently in another order.
        Sum | Avg | Variance { .. } => matches!(call.arg_type, TypeId::Float4 | TypeId::Float8),
        Regr(_) => true,
        CountStar | Count | Min | Max | BoolAnd | BoolOr | BitAnd | BitOr | BitXor => false,
    }
}

/// A group's held inputs: each row is the call's arguments followed by the
/// ORDER BY keys that are not arguments themselves (`ORDER BY x` in
/// `string_agg(x, ',' ORDER BY x)` or a percentile's sorted value is read
/// from the argument, not evaluated twice).
#[derive(Clone)]
struct Held {
    rows: Vec<Row>,
    /// How the rows sort: the call's ORDER BY, or for DISTINCT without one
    /// its arguments ascending.
    keys: Vec<SortKey>,
    /// The ORDER BY keys evaluated per row, in their columns' order.
    extra: Vec<usize>,
}

impl Held {
    fn new(call: &AggCall) -> Held {
        let ascending = |column| SortKey {
            column,
            descending: false,
            nulls_first: false,
        };
        if call.order.is_empty() {
            return Held {
                rows: Vec::new(),
                keys: (0..call.args.len()).map(ascending).collect(),
                extra: Vec::new(),
            };
        }
        let mut extra = Vec::new();
        let keys = call
            .order
            .iter()
            .enumerate()
            .map(|(i, o)| {
                let column = call
                    .args
                    .iter()
                    .position(|a| *a == o.expr)
                    .unwrap_or_else(|| {
                        extra.push(i);
                        call.args.len() + extra.len() - 1
                    });
                SortKey {
                    column,
                    descending: o.descending,
                    nulls_first: o.nulls_first,
                }
            })
            .collect();
        Held {
            rows: Vec::new(),
            keys,
            extra,
        }
    }
}

impl AggAccumulator {
    pub fn new(call: &AggCall) -> Self {
        use AggFunc::*;
        let t = call.arg_type;
        let state = match call.func {
            CountStar | Count => AggState::Count(0),
            Sum => match t {
                TypeId::Int2 | TypeId::Int4 | TypeId::Int8 => AggState::SumInt(None),
                TypeId::Float4 | TypeId::Float8 => AggState::SumFloat(None),
                _ => AggState::SumNumeric(None),
            },
            Avg => match t {
                TypeId::Int2 | TypeId::Int4 | TypeId::Int8 => AggState::AvgInt(0, 0),
                TypeId::Float4 | TypeId::Float8 => AggState::AvgFloat(0.0, 0),
                _ => AggState::AvgNumeric(None, 0),
            },
            Min | Max => AggState::MinMax(None),
            BoolAnd | BoolOr => AggState::Bool(None),
            StringAgg if t == TypeId::Bytea => AggState::ByteaAgg(None),
            StringAgg => AggState::StringAgg(None),
            JsonAgg => AggState::JsonAgg(None),
            JsonbAgg => AggState::JsonbAgg(None),
            JsonObjectAgg => AggState::JsonObjectAgg(None),
            JsonbObjectAgg => AggState::JsonbObjectAgg(None),
            ArrayAgg => AggState::ArrayAgg(None),
            Variance { .. } if t == TypeId::Float8 => AggState::FloatMoments(Default::default()),
            Variance { .. } => AggState::NumericMoments(Default::default()),
            BitAnd | BitOr | BitXor => AggState::Bits(None),
            Regr(_) => AggState::Regression(Default::default()),
            PercentileCont | PercentileDisc | Mode => AggState::Ordered(Default::default()),
        };
        let hold = (call.distinct || !call.order.is_empty()) && order_sensitive(call);
        AggAccumulator {
            state,
            seen: call.distinct.then(HashSet::new),
            held: hold.then(|| Held::new(call)),
        }
    }

    /// Folds one input row: evaluates the filter, the arguments and (when
    /// the inputs are held for sorting) the ORDER BY keys. `args` is scratch.
    pub(crate) fn feed(
        &mut self,
        call: &AggCall,
        row: &Row,
        env: &mut ExecEnv,
        args: &mut Row,
    ) -> PgResult<()> {
        if let Some(f) = &call.filter {
            if !matches!(eval(f, row, env)?, Value::Bool(true)) {
                return Ok(());
            }
        }
        args.clear();
        for a in &call.args {
            args.push(eval(a, row, env)?);
        }
        match &mut self.held {
            None => self.accumulate(call, args),
            Some(held) => {
                let mut input = std::mem::take(args);
                for &i in &held.extra {
                    input.push(eval(&call.order[i].expr, row, env)?);
                }
                held.rows.push(input);
                Ok(())
            }
        }
    }

    /// A call's arguments for one row, evaluated once for all the grouping
    /// sets the row feeds; None when the call's FILTER drops the row.
    pub(crate) fn prepare(call: &AggCall, row: &Row, env: &mut ExecEnv) -> PgResult<Option<Row>> {
        if let Some(f) = &call.filter {
            if !matches!(eval(f, row, env)?, Value::Bool(true)) {
                return Ok(None);
            }
        }
        call.args
            .iter()
            .map(|a| eval(a, row, env))
            .collect::<PgResult<Row>>()
            .map(Some)
    }

    /// `feed` with the arguments `prepare` gave for `row`.
    pub(crate) fn feed_prepared(
        &mut self,
        call: &AggCall,
        args: &[Value],
        row: &Row,
        env: &mut ExecEnv,
    ) -> PgResult<()> {
        match &mut self.held {
            None => self.accumulate(call, args),
            Some(held) => {
                let mut input = args.to_vec();
                for &i in &held.extra {
                    input.push(eval(&call.order[i].expr, row, env)?);
                }
                held.rows.push(input);
                Ok(())
            }
        }
    }

    /// Folds in another participant's state of the same call over other
    /// rows (a Finalize Aggregate combining Partial Aggregates'; PostgreSQL's
    /// combine functions). Only for the calls `sql::plan::parallel::combinable`
    /// admits: no DISTINCT, no ORDER BY.
    pub fn combine(&mut self, other: AggAccumulator, call: &AggCall) -> PgResult<()> {
        debug_assert!(self.seen.is_none() && self.held.is_none());
        let add = |a: Value, b: &Value| -> PgResult<Value> { eval_binary_op(BinaryOp::Add, &a, b) };
        match (&mut self.state, other.state) {
            (AggState::Count(a), AggState::Count(b)) => *a += b,
            (AggState::SumInt(a), AggState::SumInt(b)) => {
                *a = match (*a, b) {
                    (Some(x), Some(y)) => Some(x + y),
                    (x, y) => x.or(y),
                }
            }
            (AggState::SumFloat(a), AggState::SumFloat(b)) => {
                *a = match (*a, b) {
                    (Some(x), Some(y)) => Some(x + y),
                    (x, y) => x.or(y),
                }
            }
            (AggState::SumNumeric(a), AggState::SumNumeric(b)) => {
                *a = match (a.take(), b) {
                    (Some(x), Some(y)) => Some(add(x, &y)?),
                    (x, y) => x.or(y),
                }
            }
            (AggState::AvgInt(s, n), AggState::AvgInt(s2, n2)) => {
                *s += s2;
                *n += n2;
            }
            (AggState::AvgFloat(s, n), AggState::AvgFloat(s2, n2)) => {
                *s += s2;
                *n += n2;
            }
            (AggState::AvgNumeric(s, n), AggState::AvgNumeric(s2, n2)) => {
                *s = match (s.take(), s2) {
                    (Some(x), Some(y)) => Some(add(x, &y)?),
                    (x, y) => x.or(y),
                };
                *n += n2;
            }
            // The other's extreme or truth value folds in as an input would.
            (AggState::MinMax(_), AggState::MinMax(Some(v))) => self.accumulate(call, &[v])?,
            (AggState::Bool(_), AggState::Bool(Some(b))) => {
                self.accumulate(call, &[Value::Bool(b)])?
            }
            (AggState::MinMax(_), AggState::MinMax(None))
            | (AggState::Bool(_), AggState::Bool(None)) => {}
            _ => {
                return Err(PgError::internal(format!(
                    "aggregate {:?} has no combine function",
                    call.func
                )))
            }
        }
        Ok(())
    }

    /// Folds one input; `args` are the evaluated arguments.
    pub fn accumulate(&mut self, call: &AggCall, args: &[Value]) -> PgResult<()> {
        if call.func == AggFunc::CountStar {
            if let AggState::Count(n) = &mut self.state {
                *n += 1;
            }
            return Ok(());
        }
        if matches!(
            call.func,
            AggFunc::JsonAgg | AggFunc::JsonbAgg | AggFunc::JsonObjectAgg | AggFunc::JsonbObjectAgg
        ) {
            return self.accumulate_json(args);
        }
        match &mut self.state {
            AggState::Ordered(inputs) => {
                inputs.add(args);
                return Ok(());
            }
            AggState::Regression(r) => {
                r.add(&args[0], &args[1]);
                return Ok(());
            }
            _ => {}
        }
        if let AggState::ArrayAgg(items) = &mut self.state {
            // NULL inputs are kept (array_agg is not strict).
            if let Some(seen) = &mut self.seen {
                if !seen.insert(GroupKey(vec![args[0].clone()])) {
                    return Ok(());
                }
            }
            if call.arg_type.is_array() {
                match &args[0] {
                    Value::Null => {
                        return Err(PgError::new(
                            SqlState::NULL_VALUE_NOT_ALLOWED,
                            "cannot accumulate null arrays",
                        ))
                    }
                    Value::Array(a) if a.is_empty() => {
                        return Err(PgError::new(
                            SqlState::ARRAY_SUBSCRIPT_ERROR,
                            "cannot accumulate empty arrays",
                        ))
                    }
                    Value::Array(a) => {
                        if let Some(Value::Array(first)) = items.as_ref().and_then(|i| i.first()) {
                            if first.dims != a.dims {
                                return Err(PgError::new(
                                    SqlState::ARRAY_SUBSCRIPT_ERROR,
                                    "cannot accumulate arrays of different dimensionality",
                                ));
                            }
                        }
                    }
                    _ => {}
                }
            }
            items.get_or_insert_with(Vec::new).push(args[0].clone());
            return Ok(());
        }
        let v = &args[0];
        if v.is_null() {
            return Ok(());
        }
        if let Some(seen) = &mut self.seen {
            if !seen.insert(GroupKey(vec![v.clone()])) {
                return Ok(());
            }
        }
        let int_of = |v: &Value| -> i128 {
            match v {
                Value::Int2(x) => *x as i128,
                Value::Int4(x) => *x as i128,
                Value::Int8(x) => *x as i128,
                _ => 0,
            }
        };
        let float_of = |v: &Value| -> f64 {
            match v {
                Value::Float4(x) => *x as f64,
                Value::Float8(x) => *x,
                _ => 0.0,
            }
        };
        match &mut self.state {
            AggState::Count(n) => *n += 1,
            AggState::SumInt(s) => *s = Some(s.unwrap_or(0) + int_of(v)),
            // The first input is the sum (PostgreSQL's float8pl starts from
            // it, not from 0): sum of -0 alone is -0.
            AggState::SumFloat(s) => {
                *s = Some(match *s {
                    None => float_of(v),
                    Some(acc) => acc + float_of(v),
                })
            }
            AggState::SumNumeric(s) => match (s.as_mut(), v) {
                // Added in place: no new numeric per input row.
                (Some(Value::Numeric(acc)), Value::Numeric(n)) => **acc = acc.add(n)?,
                _ => {
                    *s = Some(match s.take() {
                        None => v.clone(),
                        Some(acc) => eval_binary_op(BinaryOp::Add, &acc, v)?,
                    })
                }
            },
            AggState::AvgInt(s, n) => {
                *s += int_of(v);
                *n += 1;
            }
            AggState::AvgFloat(s, n) => {
                *s += float_of(v);
                *n += 1;
            }
            AggState::AvgNumeric(s, n) => {
                *s = Some(match s.take() {
                    None => v.clone(),
                    Some(acc) => eval_binary_op(BinaryOp::Add, &acc, v)?,
                });
                *n += 1;
            }
            AggState::MinMax(cur) => {
                let replace = match cur {
                    None => true,
                    // A value equal to the current one replaces it, as
                    // PostgreSQL's numeric_smaller/larger (and the other
                    // types') do: min(x) of 0.5 then 0.50 is 0.50.
                    Some(c) => {
                        let o = compare(v, c);
                        if call.func == AggFunc::Min {
                            o != Ordering::Greater
                        } else {
                            o != Ordering::Less
                        }
                    }
                };
                if replace {
                    *cur = Some(v.clone());
                }
            }
            AggState::Bool(b) => {
                let x = matches!(v, Value::Bool(true));
                *b = Some(match (*b, call.func) {
                    (None, _) => x,
                    (Some(p), AggFunc::BoolAnd) => p && x,
                    (Some(p), _) => p || x,
                });
            }
            AggState::NumericMoments(m) => m.add(v)?,
            AggState::FloatMoments(m) => m.add(v),
            AggState::Bits(acc) => fold_bits(
                acc,
                v,
                call.func == AggFunc::BitAnd,
                call.func == AggFunc::BitXor,
            ),
            AggState::Regression(_) | AggState::Ordered(_) => {
                unreachable!("folded before NULL inputs are skipped")
            }
            AggState::ArrayAgg(_)
            | AggState::JsonAgg(_)
            | AggState::JsonbAgg(_)
            | AggState::JsonObjectAgg(_)
            | AggState::JsonbObjectAgg(_) => {}
            AggState::StringAgg(s) => {
                let Value::Text(t) = v else { return Ok(()) };
                match s {
                    None => *s = Some(t.clone()),
                    Some(acc) => {
                        if let Some(Value::Text(sep)) = args.get(1) {
                            acc.push_str(sep);
                        }
                        acc.push_str(t);
                    }
                }
            }
            AggState::ByteaAgg(s) => {
                let Value::Bytea(b) = v else { return Ok(()) };
                match s {
                    None => *s = Some(b.clone()),
                    Some(acc) => {
                        if let Some(Value::Bytea(sep)) = args.get(1) {
                            acc.extend_from_slice(sep);
                        }
                        acc.extend_from_slice(b);
                    }
                }
            }
        }
        Ok(())
    }

    /// The json aggregates keep NULL inputs (as json null).
    fn accumulate_json(&mut self, args: &[Value]) -> PgResult<()> {
        use types::json::Jsonb;
        if let Some(seen) = &mut self.seen {
            if !seen.insert(GroupKey(args.to_vec())) {
                return Ok(());
            }
        }
        let jsonb = |v: &Value| match v {
            Value::Jsonb(j) => Jsonb::clone(j),
            _ => Jsonb::Null,
        };
        let json_text = |v: &Value| v.as_str().unwrap_or("null").to_string();
        let null_key = || {
            PgError::new(
                SqlState::INVALID_PARAMETER_VALUE,
                "field name must not be null",
            )
        };
        match &mut self.state {
            AggState::JsonbAgg(items) => {
                let items = items.get_or_insert_with(Default::default);
                match &args[0] {
                    Value::Jsonb(j) => items.push(j),
                    _ => items.push_null(),
                }
            }
            AggState::JsonAgg(text) => {
                let t = text.get_or_insert_with(|| "[".to_string());
                if t.len() > 1 {
                    t.push_str(", ");
                }
                t.push_str(&json_text(&args[0]));
            }
            AggState::JsonbObjectAgg(pairs) => {
                let key = match &args[0] {
                    Value::Jsonb(k) => match k.tree() {
                        Jsonb::String(s) => s.clone(),
                        Jsonb::Array(_) | Jsonb::Object(_) => {
                            return Err(PgError::new(
                                SqlState::INVALID_PARAMETER_VALUE,
                                "key value must be scalar, not array, composite, or json",
                            ))
                        }
                        other => other.to_text(),
                    },
                    _ => return Err(null_key()),
                };
                pairs
                    .get_or_insert_with(Vec::new)
                    .push((key, jsonb(&args[1])));
            }
            AggState::JsonObjectAgg(text) => {
                let key = match &args[0] {
                    Value::Text(k) => k,
                    _ => return Err(null_key()),
                };
                let t = text.get_or_insert_with(|| "{ ".to_string());
                if t.len() > 2 {
                    t.push_str(", ");
                }
                // A string key as written; other keys quoted as text.
                if key.starts_with('"') {
                    t.push_str(key);
                } else {
                    types::json::escape_string(key, t);
                }
                t.push_str(" : ");
                t.push_str(&json_text(&args[1]));
            }
            _ => {}
        }
        Ok(())
    }

    pub fn finish(mut self, call: &AggCall) -> PgResult<Value> {
        if let Some(mut held) = self.held.take() {
            // Stable: inputs with equal keys keep their arrival order.
            held.rows.sort_by(|a, b| compare_rows(a, b, &held.keys));
            let n = call.args.len();
            for input in held.rows {
                self.accumulate(call, &input[..n])?;
            }
        }
        Ok(match self.state {
            AggState::Count(n) => Value::Int8(n),
            AggState::SumInt(None) | AggState::SumFloat(None) | AggState::SumNumeric(None) => {
                Value::Null
            }
            AggState::SumInt(Some(s)) => match call.result.id {
                TypeId::Int8 => Value::Int8(i64::try_from(s).map_err(|_| {
                    PgError::new(SqlState::NUMERIC_VALUE_OUT_OF_RANGE, "bigint out of range")
                })?),
                _ => numeric_of(s)?,
            },
            AggState::SumFloat(Some(s)) => match call.result.id {
                TypeId::Float4 => Value::Float4(s as f32),
                _ => Value::Float8(s),
            },
            AggState::SumNumeric(Some(v)) => v,
            AggState::AvgInt(_, 0) | AggState::AvgFloat(_, 0) | AggState::AvgNumeric(_, 0) => {
                Value::Null
            }
            AggState::AvgInt(s, n) => {
                eval_binary_op(BinaryOp::Div, &numeric_of(s)?, &numeric_of(n as i128)?)?
            }
            AggState::AvgFloat(s, n) => Value::Float8(s / n as f64),
            AggState::AvgNumeric(Some(s), n) => {
                eval_binary_op(BinaryOp::Div, &s, &numeric_of(n as i128)?)?
            }
            AggState::AvgNumeric(None, _) => Value::Null,
            AggState::MinMax(v) => v.unwrap_or(Value::Null),
            AggState::Bool(b) => b.map(Value::Bool).unwrap_or(Value::Null),
            AggState::StringAgg(s) => s.map(Value::Text).unwrap_or(Value::Null),
            AggState::ByteaAgg(s) => s.map(Value::Bytea).unwrap_or(Value::Null),
            AggState::JsonAgg(s) => s.map(|t| Value::Text(t + "]")).unwrap_or(Value::Null),
            AggState::JsonObjectAgg(s) => s.map(|t| Value::Text(t + " }")).unwrap_or(Value::Null),
            AggState::JsonbAgg(items) => items
                .map(|i| Value::Jsonb(std::sync::Arc::new(i.finish())))
                .unwrap_or(Value::Null),
            AggState::JsonbObjectAgg(pairs) => pairs
                .map(|p| types::json::build::jsonb_value(types::json::Jsonb::object_from_pairs(p)))
                .unwrap_or(Value::Null),
            AggState::NumericMoments(m) => match call.func {
                AggFunc::Variance { sample, root } => m.finish(sample, root)?,
                f => unreachable!("moments of {f:?}"),
            },
            AggState::FloatMoments(m) => match call.func {
                AggFunc::Variance { sample, root } => m.finish(sample, root),
                f => unreachable!("moments of {f:?}"),
            },
            AggState::Bits(acc) => bits_value(acc, call.result.id),
            AggState::Regression(r) => match call.func {
                AggFunc::Regr(f) => r.finish(f),
                f => unreachable!("regression state of {f:?}"),
            },
            AggState::Ordered(inputs) => match call.func {
                AggFunc::Mode => inputs.mode(),
                f => inputs.percentile(f == AggFunc::PercentileCont, call.result)?,
            },
            AggState::ArrayAgg(None) => Value::Null,
            // DISTINCT inputs were held and arrive sorted, as PostgreSQL sorts them.
            AggState::ArrayAgg(Some(items)) => {
                let elem = call.result.id.array_element().unwrap_or(TypeId::Text);
                if call.arg_type.is_array() {
                    crate::eval::stack_arrays(elem, items)?
                } else {
                    Value::array(types::array::ArrayValue::from_items(elem, items))
                }
            }
        })
    }
}
