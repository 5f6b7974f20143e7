//! The `pg_stats` view over the statistics ANALYZE stored (PostgreSQL 15's
//! columns). We have no array types yet: the array-valued columns are text
//! in PostgreSQL's array literal form (`{1,2,3}`, elements quoted as
//! array_out quotes them).

use catalog::stats::ColumnStats;
use catalog::CatalogData;
use types::{DataType, TypeId, Value};

use crate::plan::OutputColumn;

type Row = Vec<(Value, DataType)>;

pub(crate) fn columns() -> Vec<OutputColumn> {
    use TypeId::*;
    [
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
    ]
    .into_iter()
    .map(|(n, t)| OutputColumn::new(n, t))
    .collect()
}

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

fn text_or_null(s: Option<String>) -> (Value, DataType) {
    (
        s.map_or(Value::Null, Value::Text),
        DataType::new(TypeId::Text),
    )
}

fn float4(v: Option<f32>) -> (Value, DataType) {
    (
        v.map_or(Value::Null, Value::Float4),
        DataType::new(TypeId::Float4),
    )
}

fn values_literal(v: &[Value], s: &ColumnStats) -> Option<String> {
    (!v.is_empty()).then(|| array_literal(v.iter().map(|x| types::io::to_text(x, s.data_type.id))))
}

pub(crate) fn rows(cat: &CatalogData, db: u32) -> Vec<Row> {
    let name = |s: &str| (Value::Text(s.to_string()), DataType::new(TypeId::Name));
    let mut out = Vec::new();
    for t in cat.tables.values().filter(|t| t.db_oid == db) {
        let ns = cat
            .namespaces
            .get(&t.namespace)
            .map_or("", |n| n.name.as_str());
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
                name(ns),
                name(&t.name),
                name(&col.name),
                (Value::Bool(false), DataType::new(TypeId::Bool)),
                float4(Some(s.null_frac)),
                (Value::Int4(s.avg_width), DataType::new(TypeId::Int4)),
                float4(Some(s.n_distinct)),
                text_or_null(values_literal(&s.mcv, s)),
                text_or_null(freqs),
                text_or_null(values_literal(&s.histogram, s)),
                float4(s.correlation),
                text_or_null(None),
                text_or_null(None),
                text_or_null(None),
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
