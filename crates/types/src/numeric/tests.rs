use super::*;

fn n(s: &str) -> Numeric {
    Numeric::parse(s).unwrap()
}

fn t(v: PgResult<Numeric>) -> String {
    match v {
        Ok(v) => v.to_string(),
        Err(e) => format!("ERROR {}: {}", e.code.0, e.message),
    }
}

#[test]
fn parse_and_format() {
    for (i, o) in [
        ("1.50", "1.50"),
        ("1.5e3", "1500"),
        ("1e-3", "0.001"),
        (" -0.00 ", "0.00"),
        ("inf", "Infinity"),
        ("-Infinity", "-Infinity"),
        ("nan", "NaN"),
        ("+.5", "0.5"),
        ("5.", "5"),
        ("007.250", "7.250"),
        (
            "-12345678901234567890123456789012345678901234567890.5",
            "-12345678901234567890123456789012345678901234567890.5",
        ),
        ("1.5E+2", "150"),
        ("0.000", "0.000"),
        ("12e-1", "1.2"),
        (
            "170141183460469231731687303715884105727",
            "170141183460469231731687303715884105727",
        ),
        (
            "170141183460469231731687303715884105728",
            "170141183460469231731687303715884105728",
        ),
        (
            "-170141183460469231731687303715884105729",
            "-170141183460469231731687303715884105729",
        ),
        (
            "1.7014118346046923173168730371588410572e5",
            "170141.18346046923173168730371588410572",
        ),
        (
            "99999999999999999999999999999999999999e10",
            "999999999999999999999999999999999999990000000000",
        ),
    ] {
        assert_eq!(n(i).to_string(), o, "input {i}");
    }
    for bad in [
        "abc", "", " ", ".", "1e", "1.2.3", "--1", "1 2", "e5", "1e+",
    ] {
        let e = Numeric::parse(bad).unwrap_err();
        assert_eq!(e.code, SqlState::INVALID_TEXT_REPRESENTATION);
        assert_eq!(
            e.message,
            format!("invalid input syntax for type numeric: \"{bad}\"")
        );
    }
    assert_eq!(
        t(Numeric::parse("1e-20000")),
        "ERROR 22003: value overflows numeric format"
    );
    assert_eq!(n("1e1001").to_string().len(), 1002);
}

#[test]
fn arithmetic_scales() {
    let cases: &[(&str, &str, &str, &str)] = &[
        ("1", "/", "3", "0.33333333333333333333"),
        ("10", "/", "4", "2.5000000000000000"),
        ("1", "/", "7000", "0.00014285714285714286"),
        ("12345678", "/", "3", "4115226.000000000000"),
        ("0.000001", "/", "3", "0.000000333333333333333333"),
        ("-1", "/", "3", "-0.33333333333333333333"),
        ("2", "/", "3", "0.66666666666666666667"),
        ("100", "*", "1.10", "110.00"),
        ("1.5", "+", "2.25", "3.75"),
        ("1.5", "-", "2.25", "-0.75"),
        ("7.5", "%", "2", "1.5"),
        ("-7.5", "%", "2", "-1.5"),
        ("1", "/", "0", "ERROR 22012: division by zero"),
        ("1", "%", "0", "ERROR 22012: division by zero"),
        ("Infinity", "-", "Infinity", "NaN"),
        ("Infinity", "*", "0", "NaN"),
        ("-Infinity", "*", "-2", "Infinity"),
        ("5", "/", "Infinity", "0"),
        ("Infinity", "/", "0", "ERROR 22012: division by zero"),
        ("NaN", "+", "1", "NaN"),
        (
            "99999999999999999999999999999999999999",
            "+",
            "1",
            "100000000000000000000000000000000000000",
        ),
        (
            "99999999999999999999999999999999999999",
            "*",
            "99999999999999999999999999999999999999",
            "9999999999999999999999999999999999999800000000000000000000000000000000000001",
        ),
        (
            "170141183460469231731687303715884105727",
            "/",
            "0.5",
            "340282366920938463463374607431768211454.0",
        ),
    ];
    for (a, op, b, want) in cases {
        let (a, b) = (n(a), n(b));
        let got = match *op {
            "+" => a.add(&b),
            "-" => a.sub(&b),
            "*" => a.mul(&b),
            "/" => a.div(&b),
            "%" => a.rem(&b),
            _ => unreachable!(),
        };
        assert_eq!(t(got), *want, "{a} {op} {b}");
    }
}

#[test]
fn transcendental() {
    assert_eq!(t(n("2").sqrt()), "1.414213562373095");
    assert_eq!(t(n("100").sqrt()), "10.000000000000000");
    assert_eq!(
        t(n("-1").sqrt()),
        "ERROR 2201F: cannot take square root of a negative number"
    );
    assert_eq!(t(n("1").exp()), "2.7182818284590452");
    assert_eq!(
        t(n("100").exp()),
        "26881171418161354484126255515800135873611119"
    );
    assert_eq!(t(n("2").ln()), "0.6931471805599453");
    assert_eq!(t(n("0").ln()), "ERROR 2201E: cannot take logarithm of zero");
    assert_eq!(t(n("100").log10()), "2.0000000000000000");
    assert_eq!(t(n("2").log(&n("8"))), "3.0000000000000000");
    assert_eq!(t(n("2").pow(&n("3"))), "8.0000000000000000");
    assert_eq!(t(n("2").pow(&n("-3"))), "0.1250000000000000");
    assert_eq!(t(n("2").pow(&n("0.5"))), "1.4142135623730950");
    assert_eq!(t(n("1.5").pow(&n("2.5"))), "2.7556759606310754");
    assert_eq!(t(n("1.5").pow(&n("2.5000"))), "2.7556759606310754");
    assert_eq!(t(n("2").pow(&n("3.0"))), "8.0000000000000000");
    assert_eq!(
        t(n("1.5").pow(&n("100"))),
        "406561177535215237.3972797075670417"
    );
    assert_eq!(t(n("0.5").pow(&n("100"))), "0.0000000000000000");
    assert_eq!(t(n("1.1").pow(&n("-10"))), "0.3855432894295317");
    assert_eq!(t(n("0").sqrt()), "0.000000000000000");
    assert_eq!(t(n("0").exp()), "1.0000000000000000");
    assert_eq!(t(n("1.0000001").ln()), "0.00000009999999500000033");
    assert_eq!(
        t(n("-100").exp()),
        "0.00000000000000000000000000000000000000000003720075976020836"
    );
    assert_eq!(t(n("-1.5").exp()), "0.2231301601484298");
    assert_eq!(t(n("0.001").exp()), "1.0010005001667083");
    assert_eq!(t(n("50.5").exp()), "8548134287298057692257.9");
    assert_eq!(t(n("1e-100").ln()), "-230.2585092994045684017991454684364207601101488628772976033327900967572609677352480235997205089598298342");
    assert_eq!(t(n("123456.789").ln()), "11.723646487185881");
    assert_eq!(t(n("0.000000000035406").ln()), "-24.064139818625461");
    assert_eq!(t(n("2.0").log(&n("3.00"))), "1.5849625007211562");
    assert_eq!(t(n("-8").pow(&n("3"))), "-512.0000000000000000");
    assert_eq!(t(n("0").pow(&n("0"))), "1.0000000000000000");
    assert_eq!(
        t(n("0").pow(&n("-1"))),
        "ERROR 2201F: zero raised to a negative power is undefined"
    );
    assert_eq!(
        t(n("-8").pow(&n("0.3333"))),
        "ERROR 2201F: a negative number raised to a non-integer power yields a complex result"
    );
}

#[test]
fn rounding_and_typmod() {
    assert_eq!(n("2.5").to_i32().unwrap(), 3);
    assert_eq!(n("-2.5").to_i32().unwrap(), -3);
    assert_eq!(t(n("1234.5678").round(-2).into_ok()), "1200");
    assert_eq!(t(n("1.5").round(3).into_ok()), "1.500");
    assert_eq!(t(n("-1.57").trunc(1).into_ok()), "-1.5");
    assert_eq!(t(n("123.456").trunc(-1).into_ok()), "120");
    assert_eq!(t(n("-1.5").ceil().into_ok()), "-1");
    assert_eq!(t(n("-0.5").floor().into_ok()), "-1");
    assert_eq!(t(n("1.0000001").ceil().into_ok()), "2");
    let tm = numeric_typmod(5, 2);
    assert_eq!(t(n("123.456").apply_typmod(tm)), "123.46");
    let e = n("1234.5").apply_typmod(tm).unwrap_err();
    assert_eq!(e.message, "numeric field overflow");
    assert_eq!(
        e.detail.as_deref(),
        Some("A field with precision 5, scale 2 must round to an absolute value less than 10^3.")
    );
    assert_eq!(
        n("Infinity")
            .apply_typmod(tm)
            .unwrap_err()
            .detail
            .as_deref(),
        Some("A field with precision 5, scale 2 cannot hold an infinite value.")
    );
    assert_eq!(
        numeric_typmod_precision_scale(numeric_typmod(2, -3)),
        Some((2, -3))
    );
    assert_eq!(t(n("12345").apply_typmod(numeric_typmod(2, -3))), "12000");
    assert_eq!(t(n("0.5").apply_typmod(numeric_typmod(2, 2))), "0.50");
    assert_eq!(
        n("1")
            .apply_typmod(numeric_typmod(2, 2))
            .unwrap_err()
            .detail
            .as_deref(),
        Some("A field with precision 2, scale 2 must round to an absolute value less than 1.")
    );
    assert_eq!(
        n("nan").to_i32().unwrap_err().message,
        "cannot convert NaN to integer"
    );
    assert_eq!(
        n("inf").to_i64().unwrap_err().message,
        "cannot convert infinity to bigint"
    );
    assert_eq!(
        n("40000").to_i16().unwrap_err().message,
        "smallint out of range"
    );
}

#[test]
fn floats() {
    assert_eq!(Numeric::from_f64(0.1).to_string(), "0.1");
    assert_eq!(
        Numeric::from_f64(1.234_567_890_123_456_7).to_string(),
        "1.23456789012346"
    );
    assert_eq!(Numeric::from_f64(1e20).to_string(), "100000000000000000000");
    assert_eq!(Numeric::from_f32(1.5).to_string(), "1.5");
    assert_eq!(Numeric::from_f32(0.1).to_string(), "0.1");
    assert_eq!(Numeric::from_f64(f64::NAN).to_string(), "NaN");
    assert_eq!(n("0.1").to_f64(), 0.1);
    assert_eq!(n("1e400").to_f64(), f64::INFINITY);
    assert_eq!(
        n("123456789012345678901234567890").to_f64(),
        1.2345678901234568e29
    );
}

#[test]
fn ordering_and_hash() {
    use std::collections::hash_map::DefaultHasher;
    let h = |v: &Numeric| {
        let mut s = DefaultHasher::new();
        v.hash(&mut s);
        s.finish()
    };
    assert_eq!(n("1.0"), n("1.00"));
    assert_eq!(h(&n("1.0")), h(&n("1.00")));
    assert_eq!(h(&n("0")), h(&n("0.000")));
    let big = n("123456789012345678901234567890123456789012.000");
    assert_eq!(h(&big), h(&n("123456789012345678901234567890123456789012")));
    let mut v = [
        n("NaN"),
        n("Infinity"),
        n("1"),
        n("-Infinity"),
        n("-5.5"),
        n("0.5"),
    ];
    v.sort();
    let s: Vec<String> = v.iter().map(|x| x.to_string()).collect();
    assert_eq!(s, ["-Infinity", "-5.5", "0.5", "1", "Infinity", "NaN"]);
}

#[test]
fn binary_roundtrip() {
    let cases: &[(&str, &[u8])] = &[
        ("0", &[0, 0, 0, 0, 0, 0, 0, 0]),
        ("1.50", &[0, 2, 0, 0, 0, 0, 0, 2, 0, 1, 19, 136]),
        ("0.00", &[0, 0, 0, 0, 0, 0, 0, 2]),
        (
            "-12345.678",
            &[0, 3, 0, 1, 0x40, 0, 0, 3, 0, 1, 9, 41, 26, 124],
        ),
        ("0.001", &[0, 1, 255, 255, 0, 0, 0, 3, 0, 10]),
        ("10000", &[0, 1, 0, 1, 0, 0, 0, 0, 0, 1]),
        ("NaN", &[0, 0, 0, 0, 0xC0, 0, 0, 0]),
    ];
    for (s, bytes) in cases {
        let mut out = Vec::new();
        n(s).write_binary(&mut out);
        assert_eq!(&out[..], *bytes, "{s}");
        let back = Numeric::read_binary(bytes).unwrap();
        assert_eq!(back.to_string(), *s);
    }
}

#[test]
fn gcd_lcm_div() {
    assert_eq!(n("1.5").gcd(&n("0.6")).to_string(), "0.3");
    assert_eq!(t(n("1.5").lcm(&n("0.6"))), "3.0");
    assert_eq!(t(n("7.5").div_trunc(&n("2"))), "3");
    assert_eq!(t(n("-7.5").div_trunc(&n("2"))), "-3");
}

trait IntoOk {
    fn into_ok(self) -> PgResult<Numeric>;
}
impl IntoOk for Numeric {
    fn into_ok(self) -> PgResult<Numeric> {
        Ok(self)
    }
}
