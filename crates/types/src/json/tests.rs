use super::parse::{parse_jsonb, validate_json};
use super::*;

fn j(s: &str) -> Jsonb {
    parse_jsonb(s).unwrap()
}

#[test]
fn normalises_like_postgres() {
    assert_eq!(
        j(r#"{"b": [1, 2], "a": 1.50, "aa": null, "a": 2}"#).to_text(),
        r#"{"a": 2, "b": [1, 2], "aa": null}"#
    );
    assert_eq!(
        j("12345678901234567890123").to_text(),
        "12345678901234567890123"
    );
    assert_eq!(j(r#""\u00e9\n\"""#).to_text(), "\"é\\n\\\"\"");
    assert_eq!(j(r#""\ud83d\ude00""#), Jsonb::String("😀".into()));
}

#[test]
fn errors_carry_postgres_details() {
    let detail = |s: &str| validate_json(s).unwrap_err().detail.unwrap().to_string();
    assert_eq!(detail("{\"a\":}"), "Expected JSON value, but found \"}\".");
    assert_eq!(detail("[1 2]"), "Expected \",\" or \"]\", but found \"2\".");
    assert_eq!(detail("tru"), "Token \"tru\" is invalid.");
    assert_eq!(detail("{\"a\":1"), "The input string ended unexpectedly.");
    assert_eq!(detail("01"), "Token \"01\" is invalid.");
    assert_eq!(detail("\"\\x\""), "Escape sequence \"\\x\" is invalid.");
    assert!(validate_json("\"\\u0000\"").is_ok());
    assert_eq!(parse_jsonb("\"\\u0000\"").unwrap_err().code.0, "22P05");
}

#[test]
fn order_and_storage() {
    let docs = [
        "null",
        "\"a\"",
        "1",
        "true",
        "[]",
        "[1]",
        "[1, 2]",
        "{}",
        "{\"a\": 1}",
        "[[1], {\"b\": [true, 1.5]}]",
    ];
    for d in docs {
        let v = j(d);
        let mut buf = Vec::new();
        storage::encode(&v, &mut buf);
        assert_eq!(storage::decode(&buf).unwrap(), v);
    }
    assert_eq!(compare(&j("1"), &j("[]")), Ordering::Greater);
    assert_eq!(compare(&j("1"), &j("[0]")), Ordering::Less);
    assert_eq!(compare(&j("{}"), &j("[1, 2]")), Ordering::Greater);
    assert_eq!(compare(&j("1.0"), &j("1")), Ordering::Equal);
}

#[test]
fn containment_and_paths() {
    use super::ops::*;
    assert!(contains(&j("[1, 2]"), &j("1")));
    assert!(!contains(&j("1"), &j("[1]")));
    assert!(contains(
        &j(r#"{"a": {"b": 1, "c": 2}}"#),
        &j(r#"{"a": {"b": 1}}"#)
    ));
    assert!(!contains(&j(r#"{"a": [1, 2]}"#), &j(r#"{"a": 1}"#)));
    let p = |s: &[&str]| s.iter().map(|x| Some(x.to_string())).collect::<Vec<_>>();
    let v = j(r#"{"a": [1, 2, 3]}"#);
    assert_eq!(
        set_path(&v, &p(&["a", "-1"]), Some(&j("9")), PathOp::InsertAfter)
            .unwrap()
            .to_text(),
        r#"{"a": [1, 2, 3, 9]}"#
    );
    assert_eq!(
        set_path(&v, &p(&["a", "0"]), Some(&j("9")), PathOp::Create)
            .unwrap()
            .to_text(),
        r#"{"a": [9, 2, 3]}"#
    );
    assert_eq!(
        set_path(&v, &p(&["b"]), Some(&j("9")), PathOp::Create)
            .unwrap()
            .to_text(),
        r#"{"a": [1, 2, 3], "b": 9}"#
    );
}
