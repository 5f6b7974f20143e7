//! PostgreSQL's "Perhaps you meant to reference the column ..." hint for a
//! column that does not exist (parse_relation.c's fuzzy matching): the
//! in-scope columns nearest by Levenshtein distance, within 3 edits
//! (counting, for a qualified reference, the edits from the qualifier to
//! the relation's alias) and changing no more than half the name.

use super::ScopeColumn;

/// PostgreSQL's MAX_FUZZY_DISTANCE.
const MAX_DISTANCE: usize = 3;

fn levenshtein(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = (diagonal + usize::from(ca != cb))
                .min(above + 1)
                .min(row[j] + 1);
            diagonal = above;
        }
    }
    row[b.len()]
}

/// The hint for column `name` (qualified by `qualifier`) not found among
/// `columns` (every scope, innermost first), if one is close enough.
pub(super) fn missing_column_hint<'a>(
    name: &str,
    qualifier: Option<&str>,
    columns: impl Iterator<Item = &'a ScopeColumn>,
) -> Option<String> {
    // (distance, relation, column) of the best and a second equally good.
    let mut best: Option<usize> = None;
    let mut first: Option<(&str, &str)> = None;
    let mut second: Option<(&str, &str)> = None;
    let name_len = name.chars().count();
    for c in columns {
        let Some(rel) = c.qualifier.as_deref() else {
            continue;
        };
        if c.hidden {
            continue;
        }
        let penalty = qualifier.map_or(0, |q| levenshtein(q, rel));
        if penalty > MAX_DISTANCE {
            continue;
        }
        let d = levenshtein(&c.name, name);
        if d > name_len / 2 {
            continue;
        }
        let d = d + penalty;
        let bar = best.unwrap_or(MAX_DISTANCE + 1);
        if d < bar {
            best = Some(d);
            first = Some((rel, &c.name));
            second = None;
        } else if d == bar && best.is_some() {
            if second.is_some() {
                // Too many at this distance: none of them is a useful hint,
                // and only a closer one may still be.
                first = None;
                second = None;
            } else if first.is_some_and(|(r, _)| r != rel) {
                second = Some((rel, &c.name));
            } else if first.is_some() {
                // Two candidates in one relation: no hint at this distance.
                first = None;
            }
        }
    }
    match (first, second) {
        (Some((r1, c1)), Some((r2, c2))) => Some(format!(
            "Perhaps you meant to reference the column \"{r1}.{c1}\" or the column \"{r2}.{c2}\"."
        )),
        (Some((r, c)), None) => Some(format!(
            "Perhaps you meant to reference the column \"{r}.{c}\"."
        )),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use types::TypeId;

    fn col(rel: &str, name: &str) -> ScopeColumn {
        ScopeColumn {
            qualifier: Some(rel.into()),
            name: name.into(),
            ty: TypeId::Int4.into(),
            table_oid: 0,
            attnum: 0,
            hidden: false,
        }
    }

    #[test]
    fn distances_and_hints() {
        assert_eq!(levenshtein("name", "nme"), 1);
        assert_eq!(levenshtein("", "abc"), 3);
        let cols = [col("customers", "id"), col("customers", "name")];
        assert_eq!(
            missing_column_hint("nme", None, cols.iter()).as_deref(),
            Some("Perhaps you meant to reference the column \"customers.name\".")
        );
        // More than half the letters wrong: no hint.
        assert_eq!(missing_column_hint("xy", None, cols.iter()), None);
        // Qualified: the qualifier's distance to the alias counts.
        let aliased = [col("c", "name")];
        assert!(missing_column_hint("nam", Some("c"), aliased.iter()).is_some());
        assert!(missing_column_hint("nam", Some("zzzzz"), aliased.iter()).is_none());
        // Equally near in two relations: both named.
        let two = [col("a", "name"), col("b", "name")];
        assert_eq!(
            missing_column_hint("nme", None, two.iter()).as_deref(),
            Some("Perhaps you meant to reference the column \"a.name\" or the column \"b.name\".")
        );
    }
}
