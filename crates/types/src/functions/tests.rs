use super::*;
use crate::io::to_text;
use crate::numeric::Numeric as Num;
use TypeId::*;

const UTC: crate::IoSettings = crate::IoSettings::UTC;

fn t(s: &str) -> Value {
    Value::Text(s.to_string())
}

fn num(s: &str) -> Value {
    Value::Numeric(Box::new(Num::parse(s).unwrap()))
}

/// Looks up `name` for the values' natural types and calls it with the
/// arguments cast to the declared types.
fn call(name: &str, args: &[Value]) -> String {
    let types: Vec<TypeId> = args
        .iter()
        .map(|a| a.type_id().unwrap_or(Unknown))
        .collect();
    let f = match lookup_function(name, &types) {
        Ok(f) => f,
        Err(e) => return format!("ERROR {}: {}", e.code.0, e.message),
    };
    let cast: Vec<Value> = args
        .iter()
        .enumerate()
        .map(|(i, a)| {
            let decl = f.arg_type(i).unwrap();
            let from = a.type_id().unwrap_or(decl);
            crate::cast::cast_value(a.clone(), from, decl.into(), CastContext::Implicit, &UTC)
                .unwrap()
        })
        .collect();
    match f.call(&cast, &UTC) {
        Ok(Value::Null) => "NULL".to_string(),
        Ok(v) => to_text(&v, f.ret, &UTC),
        Err(e) => format!("ERROR {}: {}", e.code.0, e.message),
    }
}

#[test]
fn lookup() {
    assert_eq!(lookup_function("abs", &[Int4]).unwrap().ret, Int4);
    assert_eq!(lookup_function("abs", &[Int2]).unwrap().ret, Int2);
    assert_eq!(lookup_function("abs", &[Float4]).unwrap().ret, Float4);
    assert_eq!(
        lookup_function("round", &[Int4]).unwrap().arg_types,
        &[Float8]
    );
    assert_eq!(
        lookup_function("round", &[Numeric, Int4]).unwrap().ret,
        Numeric
    );
    assert_eq!(
        lookup_function("round", &[Int4, Int4]).unwrap().ret,
        Numeric
    );
    assert_eq!(
        lookup_function("length", &[Varchar]).unwrap().arg_types,
        &[Text]
    );
    assert_eq!(
        lookup_function("length", &[Bpchar]).unwrap().arg_types,
        &[Bpchar]
    );
    assert_eq!(
        lookup_function("length", &[Unknown]).unwrap().arg_types,
        &[Text]
    );
    assert_eq!(
        lookup_function("sqrt", &[Unknown]).unwrap().arg_types,
        &[Float8]
    );
    assert_eq!(lookup_function("power", &[Int4, Int4]).unwrap().ret, Float8);
    assert_eq!(
        lookup_function("power", &[Numeric, Int4]).unwrap().ret,
        Numeric
    );
    assert_eq!(lookup_function("mod", &[Int2, Int4]).unwrap().ret, Int4);
    assert_eq!(
        lookup_function("date_trunc", &[Unknown, Date]).unwrap().ret,
        Timestamptz
    );
    assert_eq!(
        lookup_function("date_trunc", &[Unknown, Timestamp])
            .unwrap()
            .ret,
        Timestamp
    );
    assert_eq!(
        lookup_function("date_part", &[Text, Date])
            .unwrap()
            .arg_types,
        &[Text, Date]
    );
    assert_eq!(
        lookup_function("concat", &[Int4, Bool, Unknown])
            .unwrap()
            .name,
        "concat"
    );
    assert_eq!(lookup_function("NOW", &[]).unwrap().ret, Timestamptz);
    let e = lookup_function("foo", &[Int4]).unwrap_err();
    assert_eq!(e.code, SqlState::UNDEFINED_FUNCTION);
    assert_eq!(e.message, "function foo(integer) does not exist");
    assert_eq!(
        e.hint.as_deref(),
        Some("No function matches the given name and argument types. You might need to add explicit type casts.")
    );
    assert_eq!(
        lookup_function("concat", &[]).unwrap_err().message,
        "function concat() does not exist"
    );
    assert_eq!(
        lookup_function("length", &[Int4]).unwrap_err().message,
        "function length(integer) does not exist"
    );
    assert_eq!(
        lookup_function("substr", &[Text, Int8])
            .unwrap_err()
            .message,
        "function substr(text, bigint) does not exist"
    );
    // Checked against PostgreSQL 15.
    assert_eq!(lookup_function("abs", &[Unknown]).unwrap().ret, Float8);
    assert_eq!(lookup_function("round", &[Unknown]).unwrap().ret, Float8);
    assert_eq!(lookup_function("round", &[Int4]).unwrap().ret, Float8);
    assert_eq!(
        lookup_function("substr", &[Unknown, Unknown])
            .unwrap()
            .arg_types,
        &[Text, Int4]
    );
    assert_eq!(
        lookup_function("mod", &[Int4, Numeric]).unwrap().ret,
        Numeric
    );
    assert_eq!(
        lookup_function("power", &[Numeric, Int4]).unwrap().ret,
        Numeric
    );
    assert_eq!(lookup_function("trunc", &[Float4]).unwrap().ret, Float8);
    assert_eq!(lookup_function("abs", &[Int8]).unwrap().ret, Int8);
    assert_eq!(lookup_function("exp", &[Int8]).unwrap().ret, Float8);
    assert_eq!(lookup_function("div", &[Int4, Int4]).unwrap().ret, Numeric);
    assert_eq!(
        lookup_function("date_part", &[Unknown, Date]).unwrap().ret,
        Float8
    );
    for (name, args) in [("gcd", vec![Int2, Int2]), ("to_hex", vec![Int2])] {
        let e = lookup_function(name, &args).unwrap_err();
        assert_eq!(e.code, SqlState::AMBIGUOUS_FUNCTION, "{name}");
    }
    assert_eq!(
        lookup_function("gcd", &[Int2, Int2]).unwrap_err().message,
        "function gcd(smallint, smallint) is not unique"
    );
    assert_eq!(
        lookup_function("concat_ws", &[Int4, Int4])
            .unwrap_err()
            .message,
        "function concat_ws(integer, integer) does not exist"
    );
    for f in builtins() {
        assert!(!f.name.is_empty());
    }
}

#[test]
fn strings() {
    assert_eq!(call("length", &[t("héllo")]), "5");
    assert_eq!(call("octet_length", &[t("héllo")]), "6");
    assert_eq!(call("lower", &[t("HeLLo É")]), "hello É");
    assert_eq!(call("upper", &[t("hello")]), "HELLO");
    assert_eq!(
        call("initcap", &[t("hello wORLD foo_bar 1a")]),
        "Hello World Foo_Bar 1a"
    );
    assert_eq!(
        call("substr", &[t("hello"), Value::Int4(0), Value::Int4(3)]),
        "he"
    );
    assert_eq!(call("substr", &[t("hello"), Value::Int4(-1)]), "hello");
    assert_eq!(call("substr", &[t("hello"), Value::Int4(2)]), "ello");
    assert_eq!(
        call("substr", &[t("héllo"), Value::Int4(2), Value::Int4(2)]),
        "él"
    );
    assert_eq!(
        call("substr", &[t("hello"), Value::Int4(2), Value::Int4(-1)]),
        "ERROR 22011: negative substring length not allowed"
    );
    assert_eq!(call("lpad", &[t("hello"), Value::Int4(3)]), "hel");
    assert_eq!(call("lpad", &[t("hi"), Value::Int4(5), t("xy")]), "xyxhi");
    assert_eq!(call("lpad", &[t("hi"), Value::Int4(5), t("")]), "hi");
    assert_eq!(call("rpad", &[t("hi"), Value::Int4(4)]), "hi  ");
    assert_eq!(call("rpad", &[t("hi"), Value::Int4(-1)]), "");
    assert_eq!(
        call("split_part", &[t("a,b,c"), t(","), Value::Int4(-1)]),
        "c"
    );
    assert_eq!(
        call("split_part", &[t("a,b,c"), t(","), Value::Int4(2)]),
        "b"
    );
    assert_eq!(
        call("split_part", &[t("a,b,c"), t(","), Value::Int4(5)]),
        ""
    );
    assert_eq!(
        call("split_part", &[t("a,b,c"), t(","), Value::Int4(0)]),
        "ERROR 22023: field position must not be zero"
    );
    assert_eq!(
        call("split_part", &[t("a,b,c"), t(""), Value::Int4(1)]),
        "a,b,c"
    );
    assert_eq!(call("left", &[t("hello"), Value::Int4(-2)]), "hel");
    assert_eq!(call("right", &[t("hello"), Value::Int4(-2)]), "llo");
    assert_eq!(call("right", &[t("hello"), Value::Int4(2)]), "lo");
    assert_eq!(call("repeat", &[t("ab"), Value::Int4(3)]), "ababab");
    assert_eq!(call("repeat", &[t("ab"), Value::Int4(-1)]), "");
    assert_eq!(call("reverse", &[t("abc")]), "cba");
    assert_eq!(call("md5", &[t("abc")]), "900150983cd24fb0d6963f7d28e17f72");
    assert_eq!(call("chr", &[Value::Int4(65)]), "A");
    assert_eq!(
        call("chr", &[Value::Int4(0)]),
        "ERROR 54000: null character not permitted"
    );
    assert_eq!(
        call("chr", &[Value::Int4(-1)]),
        "ERROR 22023: character number must be positive"
    );
    assert_eq!(
        call("chr", &[Value::Int4(55296)]),
        "ERROR 54000: requested character not valid for encoding: 55296"
    );
    assert_eq!(call("ascii", &[t("")]), "0");
    assert_eq!(call("ascii", &[t("é")]), "233");
    assert_eq!(call("to_hex", &[Value::Int4(-1)]), "ffffffff");
    assert_eq!(call("to_hex", &[Value::Int8(-1)]), "ffffffffffffffff");
    assert_eq!(call("to_hex", &[Value::Int4(255)]), "ff");
    assert_eq!(call("strpos", &[t("héllo"), t("ll")]), "3");
    assert_eq!(call("strpos", &[t("hello"), t("z")]), "0");
    assert_eq!(call("position", &[t("hello"), t("ll")]), "3");
    assert_eq!(call("btrim", &[t("xxhixx"), t("x")]), "hi");
    assert_eq!(call("ltrim", &[t("  hi ")]), "hi ");
    assert_eq!(call("rtrim", &[t("  hi ")]), "  hi");
    assert_eq!(call("replace", &[t("abcabc"), t("b"), t("")]), "acac");
    assert_eq!(call("translate", &[t("abc"), t("ab"), t("x")]), "xc");
    assert_eq!(call("concat", &[t("a"), Value::Null, Value::Int4(1)]), "a1");
    assert_eq!(
        call("concat_ws", &[t(","), t("a"), Value::Null, t("b")]),
        "a,b"
    );
    assert_eq!(call("starts_with", &[t("hello"), t("he")]), "t");
    let f = lookup_function("length", &[Bpchar]).unwrap();
    assert_eq!(f.call(&[t("ab ")], &UTC).unwrap(), Value::Int4(2));
    let f = lookup_function("concat_ws", &[Text, Text]).unwrap();
    assert_eq!(f.call(&[Value::Null, t("a")], &UTC).unwrap(), Value::Null);
}

#[test]
fn math() {
    assert_eq!(
        call("abs", &[Value::Int2(-32768)]),
        "ERROR 22003: smallint out of range"
    );
    assert_eq!(
        call("abs", &[Value::Int4(i32::MIN)]),
        "ERROR 22003: integer out of range"
    );
    assert_eq!(call("abs", &[num("-1.50")]), "1.50");
    assert_eq!(call("round", &[Value::Float8(2.5)]), "2");
    assert_eq!(call("round", &[num("-2.5")]), "-3");
    assert_eq!(call("round", &[num("1234.5678"), Value::Int4(-2)]), "1200");
    assert_eq!(call("round", &[num("123.456"), Value::Int4(1)]), "123.5");
    assert_eq!(call("trunc", &[num("-1.57"), Value::Int4(1)]), "-1.5");
    assert_eq!(call("trunc", &[Value::Float8(-1.5)]), "-1");
    assert_eq!(call("ceil", &[num("-1.5")]), "-1");
    assert_eq!(call("floor", &[Value::Float8(-1.5)]), "-2");
    assert_eq!(call("sign", &[num("-0.0")]), "0");
    assert_eq!(call("sign", &[Value::Float8(-3.2)]), "-1");
    assert_eq!(call("mod", &[Value::Int4(-7), Value::Int4(3)]), "-1");
    assert_eq!(call("mod", &[num("7.5"), Value::Int4(2)]), "1.5");
    assert_eq!(call("div", &[num("-7.5"), Value::Int4(2)]), "-3");
    assert_eq!(call("gcd", &[Value::Int4(12), Value::Int4(18)]), "6");
    assert_eq!(
        call("gcd", &[Value::Int4(i32::MIN), Value::Int4(0)]),
        "ERROR 22003: integer out of range"
    );
    assert_eq!(call("lcm", &[Value::Int8(4), Value::Int4(6)]), "12");
    assert_eq!(call("gcd", &[num("1.5"), num("0.6")]), "0.3");
    assert_eq!(call("lcm", &[num("1.5"), num("0.6")]), "3.0");
    assert_eq!(call("power", &[Value::Int4(2), Value::Int4(10)]), "1024");
    assert_eq!(
        call("power", &[Value::Int4(0), Value::Int4(-1)]),
        "ERROR 2201F: zero raised to a negative power is undefined"
    );
    assert_eq!(
        call("ln", &[Value::Int4(0)]),
        "ERROR 2201E: cannot take logarithm of zero"
    );
    assert_eq!(
        call("sqrt", &[Value::Int4(-1)]),
        "ERROR 2201F: cannot take square root of a negative number"
    );
    assert_eq!(call("sqrt", &[num("2")]), "1.414213562373095");
    assert_eq!(call("exp", &[Value::Int4(1)]), "2.718281828459045");
    assert_eq!(call("pi", &[]), "3.141592653589793");
    assert_eq!(call("log", &[num("100")]), "2.0000000000000000");
    assert_eq!(call("log", &[Value::Float8(100.0)]), "2");
    assert_eq!(call("log", &[num("2"), num("8")]), "3.0000000000000000");
    let r = lookup_function("random", &[]).unwrap();
    assert!(r.volatile);
    for _ in 0..100 {
        match r.call(&[], &UTC).unwrap() {
            Value::Float8(v) => assert!((0.0..1.0).contains(&v)),
            other => panic!("{other:?}"),
        }
    }
}

#[test]
fn datetimes() {
    let ts = |s: &str| {
        Value::Timestamp(
            crate::datetime::parse_timestamp(s, crate::datetime::DateOrder::Mdy).unwrap(),
        )
    };
    let d = |s: &str| {
        Value::Date(crate::datetime::parse_date(s, crate::datetime::DateOrder::Mdy).unwrap())
    };
    assert_eq!(
        call("date_part", &[t("epoch"), ts("2024-01-02 03:04:05.5")]),
        "1704164645.5"
    );
    assert_eq!(
        call("date_part", &[t("second"), ts("2024-01-02 03:04:05.5")]),
        "5.5"
    );
    assert_eq!(
        call("date_part", &[t("julian"), ts("2024-01-02 12:00")]),
        "2460312.5"
    );
    assert_eq!(call("date_part", &[t("dow"), d("2024-01-07")]), "0");
    assert_eq!(call("date_part", &[t("week"), d("2024-01-01")]), "1");
    assert_eq!(call("date_part", &[t("isoyear"), d("2024-12-30")]), "2025");
    assert_eq!(call("date_part", &[t("century"), d("2000-01-01")]), "20");
    assert_eq!(call("date_part", &[t("millennium"), d("2001-01-01")]), "3");
    assert_eq!(call("date_part", &[t("decade"), d("0005-01-01 BC")]), "-1");
    assert_eq!(call("date_part", &[t("year"), d("0005-01-01 BC")]), "-5");
    assert_eq!(call("date_part", &[t("doy"), d("2024-12-31")]), "366");
    assert_eq!(call("date_part", &[t("YEAR"), ts("infinity")]), "Infinity");
    assert_eq!(call("date_part", &[t("hour"), ts("infinity")]), "NULL");
    assert_eq!(
        call("date_part", &[t("foo"), ts("2024-01-01")]),
        "ERROR 22023: unit \"foo\" not recognized for type timestamp without time zone"
    );
    assert_eq!(
        call("date_part", &[t("timezone"), ts("2024-01-01")]),
        "ERROR 0A000: unit \"timezone\" not supported for type timestamp without time zone"
    );
    let tz = Value::Timestamptz(0);
    assert_eq!(call("date_part", &[t("timezone"), tz.clone()]), "0");
    assert_eq!(
        call("date_part", &[t("foo"), tz]),
        "ERROR 22023: unit \"foo\" not recognized for type timestamp with time zone"
    );
    assert_eq!(
        call("extract", &[t("epoch"), ts("2024-01-02 03:04:05.5")]),
        "1704164645.500000"
    );
    assert_eq!(
        call("extract", &[t("second"), ts("2024-01-02 03:04:05.5")]),
        "5.500000"
    );
    assert_eq!(
        call("extract", &[t("julian"), ts("2024-01-02 12:00")]),
        "2460312.50000000000000000000"
    );
    assert_eq!(
        call("extract", &[t("milliseconds"), ts("2024-01-02 03:04:05.5")]),
        "5500.000"
    );
    assert_eq!(call("extract", &[t("year"), d("2024-01-02")]), "2024");
    assert_eq!(
        call("extract", &[t("epoch"), d("2024-01-02")]),
        "1704153600"
    );
    assert_eq!(
        call("extract", &[t("hour"), d("2024-01-02")]),
        "ERROR 0A000: unit \"hour\" not supported for type date"
    );
    assert_eq!(
        call("date_trunc", &[t("week"), ts("2024-01-03 05:00")]),
        "2024-01-01 00:00:00"
    );
    assert_eq!(
        call("date_trunc", &[t("quarter"), ts("2024-05-03 05:00")]),
        "2024-04-01 00:00:00"
    );
    assert_eq!(
        call("date_trunc", &[t("decade"), ts("2024-05-03 05:00")]),
        "2020-01-01 00:00:00"
    );
    assert_eq!(
        call("date_trunc", &[t("century"), ts("2000-05-03 05:00")]),
        "1901-01-01 00:00:00"
    );
    assert_eq!(
        call("date_trunc", &[t("millennium"), ts("2000-05-03 05:00")]),
        "1001-01-01 00:00:00"
    );
    assert_eq!(
        call("date_trunc", &[t("century"), ts("0050-05-03 BC")]),
        "0100-01-01 00:00:00 BC"
    );
    assert_eq!(
        call(
            "date_trunc",
            &[t("milliseconds"), ts("2024-05-03 05:00:01.123456")]
        ),
        "2024-05-03 05:00:01.123"
    );
    assert_eq!(call("date_trunc", &[t("day"), ts("infinity")]), "infinity");
    assert_eq!(
        call("date_trunc", &[t("day"), d("2024-01-02")]),
        "2024-01-02 00:00:00+00"
    );
    assert_eq!(
        call("date_trunc", &[t("foo"), ts("2024-01-01")]),
        "ERROR 22023: unit \"foo\" not recognized for type timestamp without time zone"
    );
    assert_eq!(
        call(
            "make_date",
            &[Value::Int4(2024), Value::Int4(2), Value::Int4(29)]
        ),
        "2024-02-29"
    );
    assert_eq!(
        call("to_timestamp", &[Value::Float8(0.0)]),
        "1970-01-01 00:00:00+00"
    );
    let now = lookup_function("now", &[]).unwrap();
    assert!(matches!(now.call(&[], &UTC).unwrap(), Value::Timestamptz(v) if v > 0));
}
