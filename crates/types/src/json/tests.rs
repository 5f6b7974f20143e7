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

fn stored_doc(v: &Jsonb) -> JsonbDoc {
    let mut buf = Vec::new();
    storage::encode(v, &mut buf);
    JsonbDoc::from_stored(&buf).unwrap()
}

/// Reads on stored bytes agree with the same reads on the decoded tree.
#[test]
fn stored_reads_match_tree() {
    let docs = [
        "null",
        "\"a\"",
        "1.50",
        "true",
        "[]",
        "{}",
        r#"[1, "b", null, [2, "x"], {"k": false}]"#,
        r#"{"id": 7, "aa": "q\n\"", "name": "u7", "tags": ["alpha", "beta"], "group": "g42",
            "score": 7.5, "address": {"zip": "10007", "city": "c7"}, "n": null}"#,
    ];
    let keys = [
        "", "a", "id", "aa", "n", "name", "tags", "group", "score", "address", "zzzzz", "k",
    ];
    let probes = [
        "1",
        "\"b\"",
        "[1]",
        "[[2]]",
        "[{\"k\": false}]",
        "{\"group\": \"g42\"}",
        "{\"score\": 7.50}",
        "{\"address\": {\"city\": \"c7\"}}",
        "{\"address\": {\"city\": \"c8\"}}",
        "{\"tags\": [\"beta\"]}",
        "{}",
        "[]",
        "null",
    ];
    for d in docs {
        let tree = j(d);
        let doc = stored_doc(&tree);
        let sv = doc.stored().unwrap();
        assert_eq!(doc.to_text(), tree.to_text());
        assert_eq!(sv.type_name(), tree.type_name());
        assert_eq!(sv.decode().unwrap(), tree);
        for k in keys {
            let got = sv.get_key(k).unwrap().map(|v| v.decode().unwrap());
            assert_eq!(got.as_ref(), tree.get_key(k), "{d} -> {k}");
            assert_eq!(sv.exists(k).unwrap(), ops::exists(&tree, k), "{d} ? {k}");
        }
        for i in -7..7 {
            let got = sv.get_index(i).unwrap();
            assert_eq!(got.map(|v| v.decode().unwrap()).as_ref(), tree.get_index(i));
            if let Some(v) = got {
                let want = tree.get_index(i).unwrap();
                assert_eq!(v.to_text_unquoted().unwrap(), want.to_text_unquoted());
                assert_eq!(*v.to_doc(), *want);
            }
        }
        let path = |s: &[&str]| s.iter().map(|x| Some(x.to_string())).collect::<Vec<_>>();
        for p in [
            path(&["address", "zip"]),
            path(&["tags", "-1"]),
            path(&["3", "1"]),
            path(&["4", "k"]),
            path(&["x"]),
            vec![None],
        ] {
            let got = ops::get_path_stored(sv, &p).unwrap();
            assert_eq!(
                got.map(|v| v.decode().unwrap()).as_ref(),
                ops::get_path(&tree, &p)
            );
        }
        for other in docs.iter().chain(&probes) {
            let b = j(other);
            assert_eq!(
                stored::compare(sv, &b).unwrap(),
                compare(&tree, &b),
                "{d} cmp {other}"
            );
            let both = compare_docs(&doc, &stored_doc(&b));
            assert_eq!(both, compare(&tree, &b), "{d} cmp stored {other}");
        }
        for probe in probes {
            let b = j(probe);
            assert_eq!(
                stored::contains(sv, &b).unwrap(),
                ops::contains(&tree, &b),
                "{d} @> {probe}"
            );
        }
    }
}

#[test]
fn stored_documents_are_checked_and_built() {
    assert!(JsonbDoc::from_stored(&[1, 4, 5, b'a']).is_err());
    assert!(JsonbDoc::from_stored(&[1, 4, 1, 0xff]).is_err());
    assert!(JsonbDoc::from_stored(&[1, 0, 0]).is_err());
    assert!(JsonbDoc::from_stored(&[2, 0]).is_err());
    let mut agg = stored::ArrayBuilder::default();
    agg.push(&stored_doc(&j(r#"{"a": [1, "x"]}"#)));
    agg.push_null();
    agg.push(&JsonbDoc::from(j("2.50")));
    let doc = agg.finish();
    assert_eq!(doc.to_text(), r#"[{"a": [1, "x"]}, null, 2.50]"#);
    assert_eq!(*doc, j(r#"[{"a": [1, "x"]}, null, 2.50]"#));
    assert_eq!(doc.stored().unwrap().len().unwrap(), Some(3));
}
