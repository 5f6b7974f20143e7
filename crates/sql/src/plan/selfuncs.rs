//! PostgreSQL's selectivity functions (selfuncs.c, clausesel.c) over the
//! statistics ANALYZE stored: eqsel/var_eq_const, scalarineqsel with
//! histogram interpolation, patternsel/prefix_selectivity for LIKE,
//! nulltestsel, scalararraysel for IN lists, clauselist_selectivity's
//! pairing of range clauses, eqjoinsel_inner with MCV matching and
//! estimate_num_groups. Without statistics each falls back to the default
//! PostgreSQL uses for a never-analysed table.

use std::cmp::Ordering;

use catalog::stats::ColumnStats;
use types::ops::BinaryOp;
use types::ops::LikePattern;
use types::{TypeId, Value};

use super::cost::clamp_rows;
use crate::expr::Expr;

pub const DEFAULT_EQ_SEL: f64 = 0.005;
pub const DEFAULT_INEQ_SEL: f64 = 1.0 / 3.0;
pub const DEFAULT_RANGE_INEQ_SEL: f64 = 0.005;
pub const DEFAULT_MATCH_SEL: f64 = 0.005;
pub const DEFAULT_UNK_SEL: f64 = 0.005;
pub const DEFAULT_NUM_DISTINCT: f64 = 200.0;
const FIXED_CHAR_SEL: f64 = 0.20;
const ANY_CHAR_SEL: f64 = 0.9;
const FULL_WILDCARD_SEL: f64 = 5.0;

/// What is known of a column: its base relation's tuple count, its
/// statistics if analysed, and an identity (relation oid, column) so that
/// the same variable is recognised in two clauses.
#[derive(Clone, Copy)]
pub struct VarInfo<'a> {
    pub stats: Option<&'a ColumnStats>,
    /// The base relation's estimated tuples (rel->tuples).
    pub tuples: f64,
    pub rel: u32,
    pub attno: usize,
}

/// Resolves a column of the input the clauses run over.
pub type Lookup<'a> = dyn Fn(usize) -> Option<VarInfo<'a>> + 'a;

/// Where clauses are estimated: how their columns resolve, and the input's
/// rows (the fallback tuple count of a column that resolves to nothing).
pub struct SelCtx<'a, 'b> {
    pub lookup: &'b Lookup<'a>,
    pub rows: f64,
}

fn clamp_prob(p: f64) -> f64 {
    if p.is_nan() {
        0.0
    } else {
        p.clamp(0.0, 1.0)
    }
}

fn strip(e: &Expr) -> &Expr {
    match e {
        Expr::Cast {
            expr,
            explicit: false,
            ..
        } => strip(expr),
        other => other,
    }
}

/// A plain column (under implicit casts) and what is known of it.
fn examine<'a>(e: &Expr, cx: &SelCtx<'a, '_>) -> Option<Var<'a>> {
    match strip(e) {
        Expr::Column(i, _) => Some(Var {
            info: (cx.lookup)(*i),
            is_bool: e.type_id() == TypeId::Bool,
            fallback_tuples: cx.rows,
        }),
        _ => None,
    }
}

struct Var<'a> {
    info: Option<VarInfo<'a>>,
    is_bool: bool,
    fallback_tuples: f64,
}

impl<'a> Var<'a> {
    fn stats(&self) -> Option<&'a ColumnStats> {
        self.info.and_then(|i| i.stats)
    }
    fn null_frac(&self) -> f64 {
        self.stats().map_or(0.0, |s| s.null_frac as f64)
    }
    fn tuples(&self) -> f64 {
        self.info.map_or(self.fallback_tuples, |i| i.tuples)
    }
    /// get_variable_numdistinct: (estimate, whether it is a default).
    fn numdistinct(&self) -> (f64, bool) {
        let stadistinct = self.stats().map_or(0.0, |s| s.n_distinct as f64);
        if stadistinct == 0.0 && self.is_bool {
            return (2.0, false);
        }
        if stadistinct > 0.0 {
            return (clamp_rows(stadistinct), false);
        }
        let ntuples = self.tuples();
        if ntuples <= 0.0 {
            return (DEFAULT_NUM_DISTINCT, true);
        }
        if stadistinct < 0.0 {
            return (clamp_rows(-stadistinct * ntuples), false);
        }
        if ntuples < DEFAULT_NUM_DISTINCT {
            return (clamp_rows(ntuples), false);
        }
        (DEFAULT_NUM_DISTINCT, true)
    }
}

/// estimate_hash_bucket_stats: the fraction of a hash table's rows in the
/// bucket an outer row probes, for the inner key `info` on an inner input of
/// `inner_rows` rows. Skew counts: a most common value above the average
/// frequency makes its bucket that much fuller.
pub fn hash_bucket_fraction(info: Option<VarInfo>, is_bool: bool, inner_rows: f64) -> f64 {
    let var = Var {
        info,
        is_bool,
        fallback_tuples: 0.0,
    };
    // ExecChooseHashTableSize's bucket count, before any memory limit.
    let nbuckets = inner_rows.max(1024.0).log2().ceil().exp2();
    let (mut ndistinct, is_default) = var.numdistinct();
    if is_default {
        return (1.0 / nbuckets).max(0.1);
    }
    let avgfreq = (1.0 - var.null_frac()) / ndistinct;
    // Restrictions on the key's relation leave fewer distinct values.
    let tuples = var.tuples();
    if tuples > 0.0 {
        ndistinct = clamp_rows(ndistinct * (inner_rows / tuples).min(1.0));
    }
    let mut fraction = if ndistinct > nbuckets {
        1.0 / nbuckets
    } else {
        1.0 / ndistinct
    };
    let mcv_freq = var
        .stats()
        .and_then(|s| s.mcv_freqs.first())
        .map_or(0.0, |&f| f as f64);
    if avgfreq > 0.0 && mcv_freq > avgfreq {
        fraction *= mcv_freq / avgfreq;
    }
    fraction.clamp(1.0e-6, 1.0)
}

fn const_value(e: &Expr) -> Option<&Value> {
    match strip(e) {
        Expr::Const(v, _) => Some(v),
        _ => None,
    }
}

fn cmp(a: &Value, b: &Value) -> Ordering {
    types::ops::compare(a, b)
}

/// eqsel's var_eq_const; `negate` gives neqsel.
fn var_eq_const(var: &Var, c: &Value, negate: bool) -> f64 {
    if c.is_null() {
        return 0.0;
    }
    let nullfrac = var.null_frac();
    let selec = match var.stats() {
        Some(s) => {
            if let Some(i) = s.mcv.iter().position(|m| cmp(m, c) == Ordering::Equal) {
                s.mcv_freqs[i] as f64
            } else {
                let sumcommon: f64 = s.mcv_freqs.iter().map(|&f| f as f64).sum();
                let mut selec = clamp_prob(1.0 - sumcommon - nullfrac);
                let otherdistinct = var.numdistinct().0 - s.mcv.len() as f64;
                if otherdistinct > 1.0 {
                    selec /= otherdistinct;
                }
                if let Some(&least) = s.mcv_freqs.last() {
                    selec = selec.min(least as f64);
                }
                selec
            }
        }
        None => 1.0 / var.numdistinct().0,
    };
    equality_or_negation(selec, nullfrac, negate)
}

/// An equality's selectivity, or its negation's (neqsel: neither equal nor
/// null).
fn equality_or_negation(selec: f64, nullfrac: f64, negate: bool) -> f64 {
    let selec = clamp_prob(selec);
    if negate {
        clamp_prob(1.0 - selec - nullfrac)
    } else {
        selec
    }
}

/// var_eq_non_const: equality with something unknown at plan time.
fn var_eq_non_const(var: &Var, negate: bool) -> f64 {
    let nullfrac = var.null_frac();
    let selec = match var.stats() {
        Some(s) => {
            let nd = var.numdistinct().0;
            let mut selec = 1.0 - nullfrac;
            if nd > 1.0 {
                selec /= nd;
            }
            if let Some(&first) = s.mcv_freqs.first() {
                selec = selec.min(first as f64);
            }
            selec
        }
        None => 1.0 / var.numdistinct().0,
    };
    equality_or_negation(selec, nullfrac, negate)
}

/// Sum of the MCV frequencies whose value satisfies `pred`, and of all.
fn mcv_selectivity(s: &ColumnStats, pred: impl Fn(&Value) -> bool) -> (f64, f64) {
    let mut sel = 0.0;
    let mut sum = 0.0;
    for (v, &f) in s.mcv.iter().zip(&s.mcv_freqs) {
        if pred(v) {
            sel += f as f64;
        }
        sum += f as f64;
    }
    (sel, sum)
}

/// Maps a value and a histogram bin's bounds to one numeric scale
/// (convert_to_scalar), or None for types it does not handle.
fn convert_to_scalar(v: &Value, lo: &Value, hi: &Value) -> Option<(f64, f64, f64)> {
    fn num(v: &Value) -> Option<f64> {
        Some(match v {
            Value::Bool(b) => *b as i32 as f64,
            Value::Int2(i) => *i as f64,
            Value::Int4(i) => *i as f64,
            Value::Int8(i) => *i as f64,
            Value::Float4(f) => *f as f64,
            Value::Float8(f) => *f,
            Value::Oid(o) => *o as f64,
            Value::Numeric(n) => n.to_string().parse().ok()?,
            Value::Date(d) => *d as f64 * 86_400_000_000.0,
            Value::Timestamp(t) | Value::Timestamptz(t) => *t as f64,
            _ => return None,
        })
    }
    if let (Value::Text(a), Value::Text(b), Value::Text(c)) = (v, lo, hi) {
        return Some(convert_string_to_scalar(
            a.as_bytes(),
            b.as_bytes(),
            c.as_bytes(),
        ));
    }
    Some((num(v)?, num(lo)?, num(hi)?))
}

/// convert_string_to_scalar: the three strings as fractions in a base
/// covering the characters seen, after their common prefix.
fn convert_string_to_scalar(value: &[u8], lo: &[u8], hi: &[u8]) -> (f64, f64, f64) {
    let (mut rangelo, mut rangehi) = match hi.first() {
        Some(&c) => (c as i32, c as i32),
        None => (0, 0),
    };
    for &c in lo.iter().chain(hi) {
        rangelo = rangelo.min(c as i32);
        rangehi = rangehi.max(c as i32);
    }
    for (a, z) in [(b'A', b'Z'), (b'a', b'z'), (b'0', b'9')] {
        if rangelo <= z as i32 && rangehi >= a as i32 {
            rangelo = rangelo.min(a as i32);
            rangehi = rangehi.max(z as i32);
        }
    }
    if rangehi - rangelo < 9 {
        rangelo = b' ' as i32;
        rangehi = 127;
    }
    let mut k = 0;
    while k < lo.len() && k < hi.len() && k < value.len() && lo[k] == hi[k] && lo[k] == value[k] {
        k += 1;
    }
    let conv = |s: &[u8]| {
        let base = (rangehi - rangelo + 1) as f64;
        let mut num = 0.0;
        let mut denom = base;
        for &c in s.iter().take(12) {
            let ch = (c as i32).clamp(rangelo - 1, rangehi + 1);
            num += (ch - rangelo) as f64 / denom;
            denom *= base;
        }
        num
    };
    (conv(&value[k..]), conv(&lo[k..]), conv(&hi[k..]))
}

/// ineq_histogram_selectivity: the fraction of the histogram population
/// satisfying `var OP c` (`isgt`: > or >=, `iseq`: <= or >=); -1 without a
/// histogram.
fn ineq_histogram_selectivity(var: &Var, c: &Value, isgt: bool, iseq: bool) -> f64 {
    let Some(s) = var.stats() else {
        return -1.0;
    };
    let h = &s.histogram;
    if h.len() <= 1 {
        return -1.0;
    }
    // The operator applied as the histogram probe does.
    let op = |v: &Value| {
        let o = cmp(v, c);
        match (isgt, iseq) {
            (false, false) => o == Ordering::Less,
            (false, true) => o != Ordering::Greater,
            (true, false) => o == Ordering::Greater,
            (true, true) => o != Ordering::Less,
        }
    };
    let (mut lo, mut hi) = (0usize, h.len());
    while lo < hi {
        let probe = (lo + hi) / 2;
        let mut ltcmp = op(&h[probe]);
        if isgt {
            ltcmp = !ltcmp;
        }
        if ltcmp {
            lo = probe + 1;
        } else {
            hi = probe;
        }
    }
    let histfrac = if lo == 0 {
        0.0
    } else if lo >= h.len() {
        1.0
    } else {
        let i = lo;
        let mut eq_selec = 0.0;
        if i == 1 || isgt == iseq {
            let otherdistinct = var.numdistinct().0 - s.mcv_freqs.len() as f64;
            if otherdistinct > 1.0 {
                eq_selec = 1.0 / otherdistinct;
            }
        }
        let binfrac = match convert_to_scalar(c, &h[i - 1], &h[i]) {
            Some((val, low, high)) => {
                if high <= low {
                    0.5
                } else if val <= low {
                    0.0
                } else if val >= high {
                    1.0
                } else {
                    let b = (val - low) / (high - low);
                    if b.is_nan() || !(0.0..=1.0).contains(&b) {
                        0.5
                    } else {
                        b
                    }
                }
            }
            None => 0.5,
        };
        let mut histfrac = ((i - 1) as f64 + binfrac) / (h.len() - 1) as f64;
        if i == 1 {
            histfrac += eq_selec * (1.0 - binfrac);
        }
        if isgt == iseq {
            histfrac -= eq_selec;
        }
        histfrac
    };
    let hist_selec = if isgt { 1.0 - histfrac } else { histfrac };
    let cutoff = 0.01 / (h.len() - 1) as f64;
    hist_selec.clamp(cutoff, 1.0 - cutoff)
}

/// scalarineqsel for `var OP c`.
fn scalarineqsel(var: &Var, c: &Value, isgt: bool, iseq: bool) -> f64 {
    if c.is_null() {
        return 0.0;
    }
    let Some(s) = var.stats() else {
        return DEFAULT_INEQ_SEL;
    };
    let (mcv_selec, sumcommon) = mcv_selectivity(s, |v| {
        let o = cmp(v, c);
        match (isgt, iseq) {
            (false, false) => o == Ordering::Less,
            (false, true) => o != Ordering::Greater,
            (true, false) => o == Ordering::Greater,
            (true, true) => o != Ordering::Less,
        }
    });
    let hist = ineq_histogram_selectivity(var, c, isgt, iseq);
    let mut selec = 1.0 - s.null_frac as f64 - sumcommon;
    selec *= if hist >= 0.0 { hist } else { 0.5 };
    clamp_prob(selec + mcv_selec)
}

/// The literal prefix of a LIKE pattern, whether it is the whole pattern,
/// and the rest of the pattern from its first wildcard.
fn like_prefix(p: &str) -> (String, bool, &str) {
    let mut prefix = String::new();
    let mut it = p.char_indices();
    while let Some((i, c)) = it.next() {
        match c {
            '%' | '_' => return (prefix, false, &p[i..]),
            '\\' => match it.next() {
                Some((_, n)) => prefix.push(n),
                None => break,
            },
            c => prefix.push(c),
        }
    }
    (prefix, true, "")
}

/// like_selectivity of the pattern after its fixed prefix.
fn like_rest_selectivity(rest: &str) -> f64 {
    let mut sel = 1.0;
    let b: Vec<char> = rest.chars().collect();
    let mut pos = b.iter().take_while(|&&c| c == '%' || c == '_').count();
    while pos < b.len() {
        match b[pos] {
            '%' => sel *= FULL_WILDCARD_SEL,
            '_' => sel *= ANY_CHAR_SEL,
            '\\' => {
                pos += 1;
                if pos >= b.len() {
                    break;
                }
                sel *= FIXED_CHAR_SEL;
            }
            _ => sel *= FIXED_CHAR_SEL,
        }
        pos += 1;
    }
    sel.min(1.0)
}

/// The least string greater than every string starting with `prefix`
/// (make_greater_string in the C collation).
fn greater_string(prefix: &str) -> Option<String> {
    let mut chars: Vec<char> = prefix.chars().collect();
    while let Some(last) = chars.pop() {
        if let Some(n) = (last as u32 + 1..=0x10FFFF).find_map(char::from_u32) {
            chars.push(n);
            return Some(chars.into_iter().collect());
        }
    }
    None
}

/// prefix_selectivity: `var >= prefix AND var < greater(prefix)`.
fn prefix_selectivity(var: &Var, prefix: &str) -> f64 {
    let pv = Value::Text(prefix.to_string());
    let mut sel = ineq_histogram_selectivity(var, &pv, true, true);
    if sel < 0.0 {
        return DEFAULT_MATCH_SEL;
    }
    if let Some(g) = greater_string(prefix) {
        let top = ineq_histogram_selectivity(var, &Value::Text(g), false, false);
        sel = top + sel - 1.0;
    }
    sel.max(var_eq_const(var, &pv, false))
}

/// patternsel for LIKE (case-sensitive) with a constant pattern.
fn like_selectivity(var: &Var, pattern: &LikePattern, negated: bool) -> f64 {
    if pattern.is_case_insensitive() {
        let s = DEFAULT_MATCH_SEL;
        return if negated { 1.0 - s } else { s };
    }
    let nullfrac = var.null_frac();
    let (prefix, exact, rest) = like_prefix(pattern.source());
    let result = if exact {
        var_eq_const(var, &Value::Text(prefix), false)
    } else {
        let matches = |v: &Value| matches!(v, Value::Text(s) if pattern.matches(s));
        let (mut selec, hist_size) = match var.stats() {
            Some(s) if s.histogram.len() >= 10 => {
                let inner = &s.histogram[1..s.histogram.len() - 1];
                let n = inner.iter().filter(|v| matches(v)).count();
                (n as f64 / inner.len() as f64, s.histogram.len())
            }
            Some(s) => (-1.0, s.histogram.len()),
            None => (-1.0, 0),
        };
        if hist_size < 100 {
            let prefixsel = if prefix.is_empty() {
                1.0
            } else {
                prefix_selectivity(var, &prefix)
            };
            let heursel = prefixsel * like_rest_selectivity(rest);
            selec = if selec < 0.0 {
                heursel
            } else {
                let w = hist_size as f64 / 100.0;
                selec * w + heursel * (1.0 - w)
            };
        }
        selec = selec.clamp(0.0001, 0.9999);
        let (mcv_selec, sumcommon) = var
            .stats()
            .map_or((0.0, 0.0), |s| mcv_selectivity(s, matches));
        selec *= 1.0 - nullfrac - sumcommon;
        selec + mcv_selec
    };
    let result = clamp_prob(result);
    if negated {
        clamp_prob(1.0 - result - nullfrac)
    } else {
        result
    }
}

/// Selectivity of `left op right`, one side a column.
fn binary_selectivity(op: BinaryOp, left: &Expr, right: &Expr, cx: &SelCtx) -> f64 {
    let (var, other, op) = match (examine(left, cx), examine(right, cx)) {
        (Some(v), _) => (Some(v), right, op),
        (None, Some(v)) => (Some(v), left, commute(op)),
        _ => (None, right, op),
    };
    let konst = const_value(other);
    match (op, var) {
        (BinaryOp::Eq, Some(v)) => match konst {
            Some(c) => var_eq_const(&v, c, false),
            None => var_eq_non_const(&v, false),
        },
        (BinaryOp::NotEq, Some(v)) => match konst {
            Some(c) => var_eq_const(&v, c, true),
            None => var_eq_non_const(&v, true),
        },
        (BinaryOp::Eq, None) => DEFAULT_EQ_SEL,
        (BinaryOp::NotEq, None) => 1.0 - DEFAULT_EQ_SEL,
        (BinaryOp::Lt | BinaryOp::LtEq | BinaryOp::Gt | BinaryOp::GtEq, Some(v)) => match konst {
            Some(c) => scalarineqsel(
                &v,
                c,
                matches!(op, BinaryOp::Gt | BinaryOp::GtEq),
                matches!(op, BinaryOp::LtEq | BinaryOp::GtEq),
            ),
            None => DEFAULT_INEQ_SEL,
        },
        (BinaryOp::Lt | BinaryOp::LtEq | BinaryOp::Gt | BinaryOp::GtEq, None) => DEFAULT_INEQ_SEL,
        _ => 0.5,
    }
}

fn commute(op: BinaryOp) -> BinaryOp {
    match op {
        BinaryOp::Lt => BinaryOp::Gt,
        BinaryOp::LtEq => BinaryOp::GtEq,
        BinaryOp::Gt => BinaryOp::Lt,
        BinaryOp::GtEq => BinaryOp::LtEq,
        other => other,
    }
}

/// Selectivity of one boolean clause (clause_selectivity).
pub fn clause_selectivity(e: &Expr, cx: &SelCtx) -> f64 {
    let s = match e {
        Expr::Const(Value::Bool(true), _) => 1.0,
        Expr::Const(..) => 0.0,
        Expr::And(v) => clauselist_selectivity(&v.iter().collect::<Vec<_>>(), cx),
        Expr::Or(v) => v.iter().fold(0.0, |acc, x| {
            let s2 = clause_selectivity(x, cx);
            acc + s2 - acc * s2
        }),
        Expr::Not(x) => 1.0 - clause_selectivity(x, cx),
        Expr::Binary {
            op, left, right, ..
        } => binary_selectivity(*op, left, right, cx),
        Expr::IsNull { expr, negated } => match examine(expr, cx) {
            Some(v) if v.stats().is_some() => {
                let nf = v.null_frac();
                if *negated {
                    1.0 - nf
                } else {
                    nf
                }
            }
            _ if *negated => 1.0 - DEFAULT_UNK_SEL,
            _ => DEFAULT_UNK_SEL,
        },
        Expr::LikeConst {
            expr,
            pattern,
            negated,
        } => match examine(expr, cx) {
            Some(v) => like_selectivity(&v, &pattern.0, *negated),
            None if *negated => 1.0 - DEFAULT_MATCH_SEL,
            None => DEFAULT_MATCH_SEL,
        },
        Expr::Like { negated, .. } => {
            if *negated {
                1.0 - DEFAULT_MATCH_SEL
            } else {
                DEFAULT_MATCH_SEL
            }
        }
        Expr::InList {
            expr,
            list,
            negated,
        } => in_list_selectivity(expr, list, *negated, cx),
        Expr::Column(..) if e.type_id() == TypeId::Bool => match examine(e, cx) {
            // boolvarsel: `WHERE flag` is `flag = true`.
            Some(v) if v.stats().is_some() => var_eq_const(&v, &Value::Bool(true), false),
            _ => 0.5,
        },
        _ => 0.5,
    };
    clamp_prob(s)
}

/// scalararraysel for `x IN (...)` (= ANY) and `x NOT IN (...)` (<> ALL):
/// element selectivities summed when they are disjoint, else combined as
/// independent events.
fn in_list_selectivity(expr: &Expr, list: &[Expr], negated: bool, cx: &SelCtx) -> f64 {
    let var = examine(expr, cx);
    let (mut s1, mut disjoint) = if negated { (1.0, 1.0) } else { (0.0, 0.0) };
    for el in list {
        let s2 = match (&var, const_value(el)) {
            (Some(v), Some(c)) => var_eq_const(v, c, negated),
            (Some(v), None) => var_eq_non_const(v, negated),
            (None, _) if negated => 1.0 - DEFAULT_EQ_SEL,
            (None, _) => DEFAULT_EQ_SEL,
        };
        if negated {
            s1 *= s2;
            disjoint += s2 - 1.0;
        } else {
            s1 = s1 + s2 - s1 * s2;
            disjoint += s2;
        }
    }
    if (0.0..=1.0).contains(&disjoint) {
        disjoint
    } else {
        s1
    }
}

/// A `var < const`-like clause: its variable's identity, whether it is a
/// lower bound, and its selectivity.
fn range_clause(e: &Expr, cx: &SelCtx) -> Option<(VarKey, bool)> {
    let Expr::Binary {
        op, left, right, ..
    } = e
    else {
        return None;
    };
    let lower = match op {
        BinaryOp::Gt | BinaryOp::GtEq => true,
        BinaryOp::Lt | BinaryOp::LtEq => false,
        _ => return None,
    };
    let key = |x: &Expr| match strip(x) {
        Expr::Column(i, _) => Some(match (cx.lookup)(*i) {
            Some(v) => (v.rel, v.attno, usize::MAX),
            None => (0, 0, *i),
        }),
        _ => None,
    };
    let pseudo_const = |x: &Expr| {
        let mut c = true;
        x.visit(&mut |y| {
            c &= !matches!(
                y,
                Expr::Column(..)
                    | Expr::ScalarSubquery(..)
                    | Expr::ArraySubquery(..)
                    | Expr::Exists { .. }
                    | Expr::InSubquery { .. }
                    | Expr::Agg(_)
            )
        });
        c
    };
    if let (Some(k), true) = (key(left), pseudo_const(right)) {
        Some((k, lower))
    } else if let (Some(k), true) = (key(right), pseudo_const(left)) {
        Some((k, !lower))
    } else {
        None
    }
}

/// Bounds found on one variable (clausesel.c's RangeQueryClause).
struct RangeQuery<'e> {
    key: VarKey,
    lo: Option<f64>,
    hi: Option<f64>,
    var: &'e Expr,
}

/// A variable's identity: (relation, column) when resolved, else the
/// input column in the last place.
type VarKey = (u32, usize, usize);

/// clauselist_selectivity: clauses multiply, except that lower and upper
/// bounds on one variable combine into a range (hi + lo - 1, plus the null
/// fraction they both excluded).
pub fn clauselist_selectivity(quals: &[&Expr], cx: &SelCtx) -> f64 {
    if quals.len() == 1 {
        return clause_selectivity(quals[0], cx);
    }
    let mut s1 = 1.0;
    // (variable, lower bound, upper bound, the variable's column expr)
    let mut ranges: Vec<RangeQuery> = Vec::new();
    for &q in quals {
        match range_clause(q, cx) {
            Some((key, lower)) => {
                let s2 = clause_selectivity(q, cx);
                let var_expr = match q {
                    Expr::Binary { left, right, .. } => {
                        if matches!(strip(left), Expr::Column(..)) {
                            &**left
                        } else {
                            &**right
                        }
                    }
                    _ => q,
                };
                let entry = match ranges.iter_mut().position(|r| r.key == key) {
                    Some(i) => &mut ranges[i],
                    None => {
                        ranges.push(RangeQuery {
                            key,
                            lo: None,
                            hi: None,
                            var: var_expr,
                        });
                        ranges.last_mut().expect("just pushed")
                    }
                };
                let slot = if lower { &mut entry.lo } else { &mut entry.hi };
                *slot = Some(slot.map_or(s2, |old: f64| old.min(s2)));
            }
            None => s1 *= clause_selectivity(q, cx),
        }
    }
    for RangeQuery {
        lo,
        hi,
        var: var_expr,
        ..
    } in ranges
    {
        s1 *= match (lo, hi) {
            (Some(lo), Some(hi)) => {
                if lo == DEFAULT_INEQ_SEL || hi == DEFAULT_INEQ_SEL {
                    DEFAULT_RANGE_INEQ_SEL
                } else {
                    let nullfrac = examine(var_expr, cx).map_or(DEFAULT_UNK_SEL, |v| {
                        if v.stats().is_some() {
                            v.null_frac()
                        } else {
                            DEFAULT_UNK_SEL
                        }
                    });
                    let s2 = hi + lo - 1.0 + nullfrac;
                    if s2 <= 0.0 {
                        if s2 < -0.01 {
                            DEFAULT_RANGE_INEQ_SEL
                        } else {
                            1.0e-10
                        }
                    } else {
                        s2
                    }
                }
            }
            (Some(s), None) | (None, Some(s)) => s,
            (None, None) => 1.0,
        };
    }
    s1
}

/// eqjoinsel_inner for `a = b`, a and b columns of the two inputs.
pub fn eqjoinsel(
    a: Option<VarInfo>,
    b: Option<VarInfo>,
    a_rows: f64,
    b_rows: f64,
    bools: bool,
) -> f64 {
    let va = Var {
        info: a,
        is_bool: bools,
        fallback_tuples: a_rows,
    };
    let vb = Var {
        info: b,
        is_bool: bools,
        fallback_tuples: b_rows,
    };
    let (nd1, nd2) = (va.numdistinct().0, vb.numdistinct().0);
    match (va.stats(), vb.stats()) {
        (Some(s1), Some(s2)) if !s1.mcv.is_empty() && !s2.mcv.is_empty() => {
            let (nullfrac1, nullfrac2) = (s1.null_frac as f64, s2.null_frac as f64);
            let mut hasmatch1 = vec![false; s1.mcv.len()];
            let mut hasmatch2 = vec![false; s2.mcv.len()];
            let mut matchprodfreq = 0.0;
            let mut nmatches = 0usize;
            for (i, v1) in s1.mcv.iter().enumerate() {
                for (j, v2) in s2.mcv.iter().enumerate() {
                    if !hasmatch2[j] && cmp(v1, v2) == Ordering::Equal {
                        hasmatch1[i] = true;
                        hasmatch2[j] = true;
                        matchprodfreq += s1.mcv_freqs[i] as f64 * s2.mcv_freqs[j] as f64;
                        nmatches += 1;
                        break;
                    }
                }
            }
            let matchprodfreq = clamp_prob(matchprodfreq);
            let sums = |s: &ColumnStats, m: &[bool]| {
                let (mut matched, mut unmatched) = (0.0, 0.0);
                for (f, &hit) in s.mcv_freqs.iter().zip(m) {
                    if hit {
                        matched += *f as f64;
                    } else {
                        unmatched += *f as f64;
                    }
                }
                (clamp_prob(matched), clamp_prob(unmatched))
            };
            let (matchfreq1, unmatchfreq1) = sums(s1, &hasmatch1);
            let (matchfreq2, unmatchfreq2) = sums(s2, &hasmatch2);
            let otherfreq1 = clamp_prob(1.0 - nullfrac1 - matchfreq1 - unmatchfreq1);
            let otherfreq2 = clamp_prob(1.0 - nullfrac2 - matchfreq2 - unmatchfreq2);
            let (n1, n2, nm) = (s1.mcv.len() as f64, s2.mcv.len() as f64, nmatches as f64);
            let mut totalsel1 = matchprodfreq;
            if nd2 > n2 {
                totalsel1 += unmatchfreq1 * otherfreq2 / (nd2 - n2);
            }
            if nd2 > nm {
                totalsel1 += otherfreq1 * (otherfreq2 + unmatchfreq2) / (nd2 - nm);
            }
            let mut totalsel2 = matchprodfreq;
            if nd1 > n1 {
                totalsel2 += unmatchfreq2 * otherfreq1 / (nd1 - n1);
            }
            if nd1 > nm {
                totalsel2 += otherfreq2 * (otherfreq1 + unmatchfreq1) / (nd1 - nm);
            }
            clamp_prob(totalsel1.min(totalsel2))
        }
        _ => {
            let sel = (1.0 - va.null_frac()) * (1.0 - vb.null_frac());
            clamp_prob(sel / nd1.max(nd2))
        }
    }
}

/// estimate_num_groups: distinct values per key, multiplied per base
/// relation and clamped to its tuples (to a tenth of them for several
/// keys), reduced for the relation's filtered rows, then to `input_rows`.
pub fn estimate_num_groups(keys: &[Expr], input_rows: f64, cx: &SelCtx) -> f64 {
    // (relation, its tuples, product of nd, max nd, number of vars)
    let mut rels: Vec<(u32, f64, f64, f64, usize)> = Vec::new();
    let mut seen: Vec<(u32, usize, usize)> = Vec::new();
    let mut loose = 1.0f64;
    for k in keys {
        let Some(var) = examine(k, cx) else {
            loose *= if k.type_id() == TypeId::Bool {
                2.0
            } else {
                DEFAULT_NUM_DISTINCT.min(clamp_rows(input_rows))
            };
            continue;
        };
        let id = match (var.info, strip(k)) {
            (Some(i), _) => (i.rel, i.attno, 0),
            (None, Expr::Column(c, _)) => (0, 0, *c + 1),
            _ => (0, 0, 0),
        };
        if seen.contains(&id) {
            continue;
        }
        seen.push(id);
        let nd = var.numdistinct().0;
        let (rel, tuples) = match var.info {
            Some(i) => (i.rel, i.tuples),
            None => (0, input_rows),
        };
        match rels.iter_mut().find(|r| r.0 == rel && rel != 0) {
            Some(r) => {
                r.2 *= nd;
                r.3 = r.3.max(nd);
                r.4 += 1;
            }
            None => rels.push((rel, tuples, nd, nd, 1)),
        }
    }
    let mut numdistinct = loose;
    for (_, tuples, mut reldistinct, maxnd, nvars) in rels {
        if tuples > 0.0 {
            let mut clamp = tuples;
            if nvars > 1 {
                clamp *= 0.1;
                if clamp < maxnd {
                    clamp = maxnd.min(tuples);
                }
            }
            reldistinct = reldistinct.min(clamp);
            let rows = input_rows.min(tuples);
            if reldistinct > 0.0 && rows < tuples {
                reldistinct *= 1.0 - ((tuples - rows) / tuples).powf(tuples / reldistinct);
            }
            numdistinct *= clamp_rows(reldistinct);
        } else {
            numdistinct *= reldistinct;
        }
    }
    numdistinct.ceil().min(input_rows).max(1.0)
}

#[cfg(test)]
#[path = "selfuncs_tests.rs"]
mod tests;
