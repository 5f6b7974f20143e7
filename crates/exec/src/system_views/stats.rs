//! The `pg_stats` view over the statistics ANALYZE stored (PostgreSQL 15's
//! columns). The anyarray columns (most_common_vals, histogram_bounds) are
//! text in PostgreSQL's array literal form (`{1,2,3}`, elements quoted as
//! array_out quotes them): their element type varies by row.

use ::catalog::stats::ColumnStats;
use types::TypeId::*;
use types::Value;

use super::catalog::{namespace_name, tables};
use super::{text, Schema, Source, ViewContext, ViewDef};
use crate::Row;

pub(super) static VIEWS: &[ViewDef] = &[ViewDef {
    schema: Schema::PgCatalog,
    name: "pg_stats",
    source: Source::Relation("pg_statistic"),
    columns: &[
        ("schemaname", Name),
        ("tablename", Name),
        ("attname", Name),
        ("inherited", Bool),
        ("null_frac", Float4),
        ("avg_width", Int4),
        ("n_distinct", Float4),
        ("most_common_vals", Text),
        ("most_common_freqs", Text),
        ("histogram_bounds", Text),
        ("correlation", Float4),
        ("most_common_elems", Text),
        ("most_common_elem_freqs", Text),
        ("elem_count_histogram", Text),
    ],
    rows: pg_stats,
}];

/// One array element as array_out writes it: quoted when empty, "NULL",
/// or holding a delimiter, brace, quote, backslash or white space.
fn push_element(s: &str, out: &mut String) {
    let quote = s.is_empty()
        || s.eq_ignore_ascii_case("null")
        || s.chars()
            .any(|c| matches!(c, '"' | '\\' | '{' | '}' | ',') || c.is_ascii_whitespace());
    if !quote {
        out.push_str(s);
        return;
    }
    out.push('"');
    for c in s.chars() {
        if c == '"' || c == '\\' {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
}

/// `{a,b,...}` of the elements' text forms.
pub fn array_literal(elems: impl IntoIterator<Item = String>) -> String {
    let mut out = String::from("{");
    for (i, e) in elems.into_iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        push_element(&e, &mut out);
    }
    out.push('}');
    out
}

fn text_or_null(s: Option<String>) -> Value {
    s.map_or(Value::Null, Value::Text)
}

fn values_literal(v: &[Value], s: &ColumnStats, io: &types::IoSettings) -> Option<String> {
    (!v.is_empty())
        .then(|| array_literal(v.iter().map(|x| types::io::to_text(x, s.data_type.id, io))))
}

fn pg_stats(cx: &ViewContext<'_>) -> Vec<Row> {
    let mut out = Vec::new();
    for t in tables(cx) {
        let ns = namespace_name(cx.catalog, t.namespace);
        for s in t.statistics.iter() {
            let Some(col) = t.columns.get(s.attnum as usize - 1) else {
                continue;
            };
            let freqs = (!s.mcv_freqs.is_empty()).then(|| {
                array_literal(s.mcv_freqs.iter().map(|f| {
                    let mut x = String::new();
                    types::float::write_f32(*f, &mut x);
                    x
                }))
            });
            out.push(vec![
                text(ns),
                text(&t.name),
                text(&col.name),
                Value::Bool(false),
                Value::Float4(s.null_frac),
                Value::Int4(s.avg_width),
                Value::Float4(s.n_distinct),
                text_or_null(values_literal(&s.mcv, s, cx.io)),
                text_or_null(freqs),
                text_or_null(values_literal(&s.histogram, s, cx.io)),
                s.correlation.map_or(Value::Null, Value::Float4),
                Value::Null,
                Value::Null,
                Value::Null,
            ]);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn elements_are_quoted_as_array_out_does() {
        let v = ["a", "b c", "", "NULL", "x\"y", "{", "1,2", "back\\slash"];
        assert_eq!(
            array_literal(v.iter().map(|s| s.to_string())),
            r#"{a,"b c","","NULL","x\"y","{","1,2","back\\slash"}"#
        );
        assert_eq!(array_literal(Vec::<String>::new()), "{}");
    }
}
