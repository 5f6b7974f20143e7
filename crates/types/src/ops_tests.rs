use super::*;
use crate::io::to_text;
use BinaryOp::*;
use TypeId::*;

fn r(op: BinaryOp, l: TypeId, rt: TypeId) -> Option<(TypeId, TypeId, TypeId)> {
    resolve_binary_op(op, l, rt).map(|x| (x.left, x.right, x.result))
}

fn ev(op: BinaryOp, l: Value, rv: Value) -> String {
    match eval_binary_op(op, &l, &rv) {
        Ok(v) => to_text(&v, v.type_id().unwrap_or(Text), &crate::IoSettings::UTC),
        Err(e) => format!("ERROR {}: {}", e.code.0, e.message),
    }
}

fn num(s: &str) -> Value {
    Value::Numeric(Box::new(crate::numeric::Numeric::parse(s).unwrap()))
}

#[test]
fn resolution() {
    assert_eq!(r(Add, Int2, Int2), Some((Int2, Int2, Int2)));
    assert_eq!(r(Add, Int2, Int4), Some((Int4, Int4, Int4)));
    assert_eq!(r(Add, Int8, Int4), Some((Int8, Int8, Int8)));
    assert_eq!(r(Add, Int4, Numeric), Some((Numeric, Numeric, Numeric)));
    assert_eq!(r(Add, Int4, Float4), Some((Float8, Float8, Float8)));
    assert_eq!(r(Add, Float4, Float4), Some((Float4, Float4, Float4)));
    assert_eq!(r(Add, Numeric, Float4), Some((Float8, Float8, Float8)));
    assert_eq!(r(Pow, Int4, Int4), Some((Float8, Float8, Float8)));
    assert_eq!(r(Pow, Numeric, Int4), Some((Numeric, Numeric, Numeric)));
    assert_eq!(r(Mod, Int2, Int2), Some((Int2, Int2, Int2)));
    assert_eq!(r(Mod, Float8, Int4), None);
    assert_eq!(r(Add, Unknown, Int4), Some((Int4, Int4, Int4)));
    assert_eq!(r(Add, Unknown, Unknown), None);
    assert_eq!(r(Eq, Unknown, Unknown), Some((Text, Text, Bool)));
    assert_eq!(r(Concat, Int4, Unknown), Some((Text, Text, Text)));
    assert_eq!(r(Concat, Varchar, Varchar), Some((Text, Text, Text)));
    assert_eq!(r(Concat, Text, Bool), Some((Text, Text, Text)));
    assert_eq!(r(Concat, Int4, Int4), None);
    assert_eq!(r(Eq, Bpchar, Bpchar), Some((Text, Text, Bool)));
    assert_eq!(r(Lt, Varchar, Text), Some((Text, Text, Bool)));
    assert_eq!(r(Eq, Name, Name), Some((Name, Name, Bool)));
    assert_eq!(r(Eq, Int4, Float8), Some((Float8, Float8, Bool)));
    assert_eq!(r(Eq, Numeric, Float8), Some((Float8, Float8, Bool)));
    assert_eq!(r(Eq, Date, Timestamp), Some((Timestamp, Timestamp, Bool)));
    assert_eq!(
        r(Eq, Date, Timestamptz),
        Some((Timestamptz, Timestamptz, Bool))
    );
    assert_eq!(r(Lt, Unknown, Date), Some((Date, Date, Bool)));
    assert_eq!(r(Sub, Date, Date), Some((Date, Date, Int4)));
    assert_eq!(r(Add, Date, Int2), Some((Date, Int4, Date)));
    assert_eq!(r(Add, Int4, Date), Some((Int4, Date, Date)));
    assert_eq!(r(Add, Date, Int8), None);
    assert_eq!(r(Eq, Oid, Int4), Some((Oid, Oid, Bool)));
    assert_eq!(r(Add, Oid, Int4), None);
    assert_eq!(r(Eq, Bool, Int4), None);
    assert_eq!(r(Eq, Text, Int4), None);
}

#[test]
fn integer_arith() {
    assert_eq!(
        ev(Add, Value::Int4(i32::MAX), Value::Int4(1)),
        "ERROR 22003: integer out of range"
    );
    assert_eq!(
        ev(Div, Value::Int4(1), Value::Int4(0)),
        "ERROR 22012: division by zero"
    );
    assert_eq!(
        ev(Div, Value::Int4(i32::MIN), Value::Int4(-1)),
        "ERROR 22003: integer out of range"
    );
    assert_eq!(
        ev(Div, Value::Int2(i16::MIN), Value::Int2(-1)),
        "ERROR 22003: smallint out of range"
    );
    assert_eq!(ev(Mod, Value::Int8(i64::MIN), Value::Int8(-1)), "0");
    assert_eq!(
        ev(Mod, Value::Int4(5), Value::Int4(0)),
        "ERROR 22012: division by zero"
    );
    assert_eq!(ev(Mod, Value::Int4(-7), Value::Int4(3)), "-1");
    assert_eq!(ev(Div, Value::Int4(-7), Value::Int4(2)), "-3");
    assert_eq!(
        ev(Mul, Value::Int8(i64::MAX), Value::Int8(2)),
        "ERROR 22003: bigint out of range"
    );
    assert_eq!(ev(Add, Value::Int2(1), Value::Int4(2)), "3");
    assert_eq!(ev(Pow, Value::Int4(2), Value::Int4(10)), "1024");
    assert_eq!(
        negate(&Value::Int2(i16::MIN)).unwrap_err().message,
        "smallint out of range"
    );
    assert_eq!(negate(&Value::Int4(5)).unwrap(), Value::Int4(-5));
}

#[test]
fn float_and_numeric_arith() {
    assert_eq!(
        ev(Add, Value::Float8(0.1), Value::Float8(0.2)),
        "0.30000000000000004"
    );
    assert_eq!(
        ev(Div, Value::Float8(1.0), Value::Float8(0.0)),
        "ERROR 22012: division by zero"
    );
    assert_eq!(
        ev(Mul, Value::Float8(1.5e300), Value::Float8(1e10)),
        "ERROR 22003: value out of range: overflow"
    );
    assert_eq!(
        ev(Mul, Value::Float8(1e-300), Value::Float8(1e-300)),
        "ERROR 22003: value out of range: underflow"
    );
    assert_eq!(
        ev(Add, Value::Float8(f64::INFINITY), Value::Float8(1.0)),
        "Infinity"
    );
    assert_eq!(
        ev(Pow, Value::Float8(2.0), Value::Float8(1024.0)),
        "ERROR 22003: value out of range: overflow"
    );
    assert_eq!(
        ev(Pow, Value::Float8(0.0), Value::Float8(-1.0)),
        "ERROR 2201F: zero raised to a negative power is undefined"
    );
    assert_eq!(
        ev(Pow, Value::Float8(-8.0), Value::Float8(0.5)),
        "ERROR 2201F: a negative number raised to a non-integer power yields a complex result"
    );
    assert_eq!(ev(Div, num("1"), num("3")), "0.33333333333333333333");
    assert_eq!(
        ev(Div, num("1.0"), num("0")),
        "ERROR 22012: division by zero"
    );
    assert_eq!(ev(Mul, num("100"), num("1.10")), "110.00");
    assert_eq!(ev(Pow, num("2"), num("3")), "8.0000000000000000");
    assert_eq!(ev(Add, Value::Float4(1.5), Value::Float4(1.25)), "2.75");
    assert_eq!(ev(Add, Value::Int4(1), num("1.5")), "2.5");
}

#[test]
fn dates_and_concat() {
    assert_eq!(ev(Sub, Value::Date(60), Value::Date(0)), "60");
    assert_eq!(ev(Add, Value::Date(0), Value::Int4(30)), "2000-01-31");
    assert_eq!(ev(Sub, Value::Date(0), Value::Int4(1)), "1999-12-31");
    assert_eq!(ev(Add, Value::Int4(1), Value::Date(0)), "2000-01-02");
    assert_eq!(ev(Add, Value::Date(i32::MAX), Value::Int4(1)), "infinity");
    assert_eq!(
        ev(Add, Value::Date(datetime::END_DATE - 1), Value::Int4(1)),
        "ERROR 22008: date out of range"
    );
    assert_eq!(
        ev(Concat, Value::Text("a".into()), Value::Text("b".into())),
        "ab"
    );
}

#[test]
fn comparisons() {
    assert_eq!(
        ev(Eq, Value::Float8(f64::NAN), Value::Float8(f64::NAN)),
        "t"
    );
    assert_eq!(
        ev(Gt, Value::Float8(f64::NAN), Value::Float8(f64::INFINITY)),
        "t"
    );
    assert_eq!(ev(Eq, Value::Float8(-0.0), Value::Float8(0.0)), "t");
    assert_eq!(ev(Gt, num("NaN"), num("Infinity")), "t");
    assert_eq!(ev(Eq, num("1.0"), num("1.00")), "t");
    assert_eq!(
        ev(Lt, Value::Text("a".into()), Value::Text("b".into())),
        "t"
    );
    assert_eq!(
        ev(Lt, Value::Text("B".into()), Value::Text("a".into())),
        "t"
    );
    assert_eq!(ev(Eq, Value::Int4(1), Value::Int8(1)), "t");
    assert_eq!(ev(Lt, Value::Int4(1), num("1.5")), "t");
    assert_eq!(ev(Eq, Value::Date(0), Value::Timestamp(0)), "t");
    assert_eq!(ev(NotEq, Value::Bool(true), Value::Bool(false)), "t");
    assert_eq!(
        compare_typed(
            Bpchar,
            &Value::Text("ab  ".into()),
            &Value::Text("ab".into())
        ),
        Ordering::Equal
    );
    let mut v = [
        Value::Float8(f64::NAN),
        Value::Float8(1.0),
        Value::Float8(-1.0),
    ];
    v.sort_by(compare);
    assert_eq!(v[2].type_id(), Some(Float8));
    assert!(matches!(v[2], Value::Float8(f) if f.is_nan()));
}

#[test]
fn hashing() {
    use std::collections::hash_map::DefaultHasher;
    use std::hash::Hasher;
    let h = |v: &Value| {
        let mut s = DefaultHasher::new();
        hash_value(v, &mut s);
        s.finish()
    };
    assert_eq!(h(&num("1.0")), h(&num("1.00")));
    assert_eq!(h(&Value::Int4(7)), h(&Value::Int8(7)));
    assert_eq!(h(&Value::Float8(0.0)), h(&Value::Float8(-0.0)));
    assert_ne!(h(&Value::Text("ab".into())), h(&Value::Text("a".into())));
    let ht = |v: &Value| {
        let mut s = DefaultHasher::new();
        hash_value_typed(Bpchar, v, &mut s);
        s.finish()
    };
    assert_eq!(ht(&Value::Text("a  ".into())), ht(&Value::Text("a".into())));
}
