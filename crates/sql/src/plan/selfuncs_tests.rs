//! The selectivity functions on hand-made statistics, with the figures
//! PostgreSQL's formulas give for them.

use super::*;
use types::DataType;

fn int(i: i32) -> Value {
    Value::Int4(i)
}

fn col() -> Expr {
    Expr::Column(0, DataType::new(TypeId::Int4))
}

fn konst(v: Value) -> Expr {
    let ty = DataType::new(v.type_id().unwrap_or(TypeId::Int4));
    Expr::Const(v, ty)
}

fn bin(op: BinaryOp, l: Expr, r: Expr) -> Expr {
    Expr::Binary {
        op,
        left: Box::new(l),
        right: Box::new(r),
        ty: DataType::new(TypeId::Bool),
    }
}

/// 1000 rows: 10% nulls, MCVs 1 (30%) and 2 (10%), n_distinct 52 and a
/// histogram 0, 10, ..., 100 over the other values.
fn stats() -> ColumnStats {
    ColumnStats {
        attnum: 1,
        data_type: DataType::new(TypeId::Int4),
        null_frac: 0.1,
        avg_width: 4,
        n_distinct: 52.0,
        mcv: vec![int(1), int(2)],
        mcv_freqs: vec![0.3, 0.1],
        histogram: (0..=10).map(|i| int(i * 10)).collect(),
        correlation: Some(1.0),
    }
}

fn sel_with(e: &Expr, s: Option<&ColumnStats>) -> f64 {
    let lookup = |_: usize| {
        Some(VarInfo {
            stats: s,
            tuples: 1000.0,
            rel: 1,
            attno: 0,
        })
    };
    clause_selectivity(
        e,
        &SelCtx {
            lookup: &lookup,
            rows: 1000.0,
        },
    )
}

fn close(a: f64, b: f64) {
    assert!((a - b).abs() < 1e-6, "{a} != {b}");
}

#[test]
fn equality_uses_mcvs_then_spreads_the_rest() {
    let s = stats();
    close(
        sel_with(&bin(BinaryOp::Eq, col(), konst(int(1))), Some(&s)),
        0.3,
    );
    // (1 - 0.4 - 0.1) / (52 - 2), below the least MCV's 0.1.
    close(
        sel_with(&bin(BinaryOp::Eq, col(), konst(int(7))), Some(&s)),
        0.01,
    );
    // <>: 1 - eq - nullfrac.
    close(
        sel_with(&bin(BinaryOp::NotEq, col(), konst(int(1))), Some(&s)),
        0.6,
    );
    // Constant on the left, and NULL.
    close(
        sel_with(&bin(BinaryOp::Eq, konst(int(2)), col()), Some(&s)),
        0.1,
    );
    close(
        sel_with(&bin(BinaryOp::Eq, col(), konst(Value::Null)), Some(&s)),
        0.0,
    );
    // Without statistics: 1/200 of a 1000-row table.
    close(
        sel_with(&bin(BinaryOp::Eq, col(), konst(int(1))), None),
        0.005,
    );
}

#[test]
fn inequalities_interpolate_in_the_histogram() {
    let s = stats();
    // x < 45: MCVs 1 and 2 qualify (0.4); histogram: 4 full bins + 0.5 of
    // the fifth, less eq_selec 1/50 for "<", over 10 bins.
    let hist = (4.5 / 10.0) - 1.0 / 50.0;
    let expect = (1.0 - 0.1 - 0.4) * hist + 0.4;
    close(
        sel_with(&bin(BinaryOp::Lt, col(), konst(int(45))), Some(&s)),
        expect,
    );
    // x > 45: no MCV; 1 - (x <= 45).
    let expect = (1.0 - 0.1 - 0.4) * (1.0 - 4.5 / 10.0);
    close(
        sel_with(&bin(BinaryOp::Gt, col(), konst(int(45))), Some(&s)),
        expect,
    );
    // Beyond the histogram: clamped at a hundredth of a bin.
    let expect = (1.0 - 0.1 - 0.4) * 0.001;
    close(
        sel_with(&bin(BinaryOp::Gt, col(), konst(int(500))), Some(&s)),
        expect,
    );
    close(
        sel_with(&bin(BinaryOp::Lt, col(), konst(int(45))), None),
        DEFAULT_INEQ_SEL,
    );
}

#[test]
fn range_pairs_add_up_and_defaults_give_the_range_default() {
    let s = stats();
    let lo = bin(BinaryOp::GtEq, col(), konst(int(20)));
    let hi = bin(BinaryOp::LtEq, col(), konst(int(60)));
    let both = Expr::And(vec![lo.clone(), hi.clone()]);
    let (a, b) = (sel_with(&lo, Some(&s)), sel_with(&hi, Some(&s)));
    close(sel_with(&both, Some(&s)), a + b - 1.0 + 0.1);
    // Independent would multiply: much larger than the paired figure.
    assert!(a * b > a + b - 1.0 + 0.1);
    close(sel_with(&both, None), DEFAULT_RANGE_INEQ_SEL);
}

#[test]
fn null_tests_and_boolean_combinations() {
    let s = stats();
    let isnull = Expr::IsNull {
        expr: Box::new(col()),
        negated: false,
    };
    close(sel_with(&isnull, Some(&s)), 0.1);
    close(sel_with(&isnull, None), DEFAULT_UNK_SEL);
    let eq1 = bin(BinaryOp::Eq, col(), konst(int(1)));
    let eq2 = bin(BinaryOp::Eq, col(), konst(int(2)));
    close(
        sel_with(&Expr::Or(vec![eq1.clone(), eq2.clone()]), Some(&s)),
        0.3 + 0.1 - 0.03,
    );
    close(sel_with(&Expr::Not(Box::new(eq1)), Some(&s)), 0.7);
}

#[test]
fn in_lists_sum_disjoint_equalities() {
    let s = stats();
    let list = |negated| Expr::InList {
        expr: Box::new(col()),
        list: vec![konst(int(1)), konst(int(2)), konst(int(7))],
        negated,
    };
    close(sel_with(&list(false), Some(&s)), 0.3 + 0.1 + 0.01);
    // NOT IN: 1 + sum(neq - 1).
    let neq = [0.6, 0.8, 1.0 - 0.01 - 0.1];
    close(
        sel_with(&list(true), Some(&s)),
        1.0 + neq.iter().map(|x| x - 1.0).sum::<f64>(),
    );
}

#[test]
fn like_prefixes_and_rest_selectivity() {
    assert_eq!(like_prefix("abc%"), ("abc".to_string(), false, "%"));
    assert_eq!(like_prefix("a\\%b"), ("a%b".to_string(), true, ""));
    close(like_rest_selectivity("%"), 1.0);
    close(like_rest_selectivity("%abc"), 0.2 * 0.2 * 0.2);
    close(like_rest_selectivity("_x%"), 0.2 * 5.0);
    assert_eq!(greater_string("ab").as_deref(), Some("ac"));
    // Strings scale by their characters after the common prefix.
    let (v, lo, hi) = convert_string_to_scalar(b"abm", b"aba", b"abz");
    assert!(lo < v && v < hi);
}

#[test]
fn join_selectivity_matches_mcvs() {
    let mut a = stats();
    a.null_frac = 0.0;
    a.mcv_freqs = vec![0.5, 0.5];
    a.n_distinct = 2.0;
    a.histogram.clear();
    let b = a.clone();
    let info = |s| {
        Some(VarInfo {
            stats: Some(s),
            tuples: 100.0,
            rel: 1,
            attno: 0,
        })
    };
    // Both columns are exactly {1, 2} half and half.
    close(eqjoinsel(info(&a), info(&b), 0.0, 0.0, false), 0.5);
    // No statistics: 1/max(nd) with nd = the tuples (under 200).
    let none = Some(VarInfo {
        stats: None,
        tuples: 50.0,
        rel: 2,
        attno: 0,
    });
    close(eqjoinsel(none, none, 0.0, 0.0, false), 1.0 / 50.0);
}

#[test]
fn group_estimates_use_n_distinct_and_clamp_several_keys() {
    let s = stats();
    let lookup = |i: usize| {
        Some(VarInfo {
            stats: Some(&s),
            tuples: 1000.0,
            rel: 1,
            attno: i,
        })
    };
    let cx = SelCtx {
        lookup: &lookup,
        rows: 1000.0,
    };
    let c = |i| Expr::Column(i, DataType::new(TypeId::Int4));
    assert_eq!(estimate_num_groups(&[c(0)], 1000.0, &cx), 52.0);
    // 52 * 52 clamped to a tenth of the table.
    assert_eq!(estimate_num_groups(&[c(0), c(1)], 1000.0, &cx), 100.0);
    // The same key twice counts once.
    assert_eq!(estimate_num_groups(&[c(0), c(0)], 1000.0, &cx), 52.0);
    // Fewer input rows than the table: fewer groups survive.
    let g = estimate_num_groups(&[c(0)], 20.0, &cx);
    assert!(g < 20.0 && g > 10.0, "{g}");
}
