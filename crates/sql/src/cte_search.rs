//! WITH RECURSIVE's SEARCH and CYCLE clauses (PostgreSQL 14+), after a
//! CTE's parenthesised query:
//!
//! ```text
//! SEARCH { DEPTH | BREADTH } FIRST BY col [, ...] SET seq_col
//! CYCLE col [, ...] SET mark_col [ TO value DEFAULT value ] USING path_col
//! ```
//!
//! sqlparser has neither. `rewrite_search_cycle` removes them from the
//! tokens before parsing and keeps each as a marker column at the end of
//! the CTE's column list (a quoted identifier starting with U+0001, added
//! with the parentheses where the CTE has no list); `split_alias` takes
//! them out again for the binder (`bind/cte_search.rs`).

use sqlparser::ast;
use sqlparser::keywords::Keyword;
use sqlparser::tokenizer::{Token, TokenWithSpan, Word};

use crate::tokens::Solid;

const SEARCH_MARK: &str = "\u{1}SEARCH";
const CYCLE_MARK: &str = "\u{1}CYCLE";
/// Separates a marker's parts, and the names of a column list.
const PART: char = '\u{2}';
const ITEM: char = '\u{3}';

/// A SEARCH clause.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchClause {
    pub breadth_first: bool,
    pub columns: Vec<String>,
    pub sequence_column: String,
}

/// A CYCLE clause; the mark values as written (None: TRUE and FALSE).
#[derive(Debug, Clone, PartialEq)]
pub struct CycleClause {
    pub columns: Vec<String>,
    pub mark_column: String,
    pub mark_values: Option<(String, String)>,
    pub path_column: String,
}

fn word_token(value: String) -> Token {
    Token::Word(Word {
        value,
        quote_style: Some('"'),
        keyword: Keyword::NoKeyword,
    })
}

/// A column name token's name: folded to lower case unless quoted.
fn name_of(t: Option<&Token>) -> Option<String> {
    match t {
        Some(Token::Word(w)) if w.quote_style.is_some() => Some(w.value.clone()),
        Some(Token::Word(w)) => Some(w.value.to_lowercase()),
        _ => None,
    }
}

/// Reads `col [, col ...]` from `k`; the names and where the list ends.
fn name_list(solid: &Solid<'_>, mut k: usize) -> Option<(Vec<String>, usize)> {
    let mut names = vec![name_of(solid.token(k))?];
    k += 1;
    while solid.is(k, &Token::Comma) {
        names.push(name_of(solid.token(k + 1))?);
        k += 2;
    }
    Some((names, k))
}

/// The SEARCH clause at `k`, its marker text and the token after it.
fn search_at(solid: &Solid<'_>, k: usize) -> Option<(String, usize)> {
    if solid.word(k) != "SEARCH" || solid.word(k + 2) != "FIRST" || solid.word(k + 3) != "BY" {
        return None;
    }
    let kind = solid.word(k + 1);
    if kind != "DEPTH" && kind != "BREADTH" {
        return None;
    }
    let (cols, next) = name_list(solid, k + 4)?;
    if solid.word(next) != "SET" {
        return None;
    }
    let seq = name_of(solid.token(next + 1))?;
    let text = [SEARCH_MARK, &kind, &cols.join(&ITEM.to_string()), &seq].join(&PART.to_string());
    Some((text, next + 2))
}

/// The CYCLE clause at `k`, its marker text and the token after it.
fn cycle_at(solid: &Solid<'_>, k: usize, tokens: &[TokenWithSpan]) -> Option<(String, usize)> {
    if solid.word(k) != "CYCLE" {
        return None;
    }
    let (cols, next) = name_list(solid, k + 1)?;
    if solid.word(next) != "SET" {
        return None;
    }
    let mark = name_of(solid.token(next + 1))?;
    let mut k = next + 2;
    let mut values = (String::new(), String::new());
    if solid.word(k) == "TO" {
        let default_at = (k + 1..solid.len()).find(|&j| solid.word(j) == "DEFAULT")?;
        let using_at = (default_at + 1..solid.len()).find(|&j| solid.word(j) == "USING")?;
        let text = |from: usize, to: usize| {
            tokens[solid.position(from)..solid.position(to)]
                .iter()
                .map(|t| t.token.to_string())
                .collect::<String>()
                .trim()
                .to_string()
        };
        values = (text(k + 1, default_at), text(default_at + 1, using_at));
        k = using_at;
    }
    if solid.word(k) != "USING" {
        return None;
    }
    let path = name_of(solid.token(k + 1))?;
    let text = [
        CYCLE_MARK,
        &cols.join(&ITEM.to_string()),
        &mark,
        &values.0,
        &values.1,
        &path,
    ]
    .join(&PART.to_string());
    Some((text, k + 2))
}

/// Where the CTE whose query's `(` is the `open`th token lists its columns:
/// the `)` of its column list, or its name (no list).
fn cte_columns_at(solid: &Solid<'_>, open: usize) -> Option<(usize, bool)> {
    let mut j = open.checked_sub(1)?;
    if solid.word(j) == "MATERIALIZED" {
        j = j.checked_sub(1)?;
        if solid.word(j) == "NOT" {
            j = j.checked_sub(1)?;
        }
    }
    if solid.word(j) != "AS" {
        return None;
    }
    let before = j.checked_sub(1)?;
    Some((before, solid.is(before, &Token::RParen)))
}

/// Moves SEARCH and CYCLE clauses into their CTE's column list (see the
/// module comment).
pub(crate) fn rewrite_search_cycle(tokens: Vec<TokenWithSpan>) -> Vec<TokenWithSpan> {
    let solid = Solid::new(&tokens);
    // (token position, tokens to put before it) and removed ranges.
    let mut inserts: Vec<(usize, Vec<Token>)> = Vec::new();
    let mut removed: Vec<std::ops::Range<usize>> = Vec::new();
    for k in 0..solid.len() {
        if !solid.is(k, &Token::RParen) {
            continue;
        }
        let mut marks = Vec::new();
        let mut next = k + 1;
        if let Some((m, n)) = search_at(&solid, next) {
            marks.push(m);
            next = n;
        }
        if let Some((m, n)) = cycle_at(&solid, next, &tokens) {
            marks.push(m);
            next = n;
        }
        if marks.is_empty() {
            continue;
        }
        // The query's opening parenthesis.
        let mut depth = 0usize;
        let Some(open) = (0..k).rev().find(|&j| match solid.token(j) {
            Some(Token::RParen) => {
                depth += 1;
                false
            }
            Some(Token::LParen) if depth == 0 => true,
            Some(Token::LParen) => {
                depth -= 1;
                false
            }
            _ => false,
        }) else {
            continue;
        };
        let Some((at, has_list)) = cte_columns_at(&solid, open) else {
            continue;
        };
        let mut added = Vec::new();
        if !has_list {
            added.push(Token::LParen);
        }
        for (i, m) in marks.into_iter().enumerate() {
            if has_list || i > 0 {
                added.push(Token::Comma);
            }
            added.push(word_token(m));
        }
        if has_list {
            inserts.push((solid.position(at), added));
        } else {
            added.push(Token::RParen);
            inserts.push((solid.position(at) + 1, added));
        }
        let end = if next < solid.len() {
            solid.position(next)
        } else {
            tokens.len()
        };
        removed.push(solid.position(k) + 1..end);
    }
    if inserts.is_empty() {
        return tokens;
    }
    let mut out = Vec::with_capacity(tokens.len() + 8);
    for (i, t) in tokens.into_iter().enumerate() {
        for (_, added) in inserts.iter().filter(|(at, _)| *at == i) {
            out.extend(added.iter().map(|a| TokenWithSpan {
                token: a.clone(),
                span: t.span,
            }));
        }
        if !removed.iter().any(|r| r.contains(&i)) {
            out.push(t);
        }
    }
    out
}

/// The CTE's column list without the markers, and its clauses.
pub(crate) fn split_alias(
    alias: &ast::TableAlias,
) -> (ast::TableAlias, Option<SearchClause>, Option<CycleClause>) {
    let mut plain = alias.clone();
    plain.columns.clear();
    let (mut search, mut cycle) = (None, None);
    let list = |s: &str| s.split(ITEM).map(str::to_string).collect::<Vec<_>>();
    for c in &alias.columns {
        let parts: Vec<&str> = c.name.value.split(PART).collect();
        match parts.as_slice() {
            [SEARCH_MARK, kind, cols, seq] => {
                search = Some(SearchClause {
                    breadth_first: *kind == "BREADTH",
                    columns: list(cols),
                    sequence_column: seq.to_string(),
                })
            }
            [CYCLE_MARK, cols, mark, to, default, path] => {
                cycle = Some(CycleClause {
                    columns: list(cols),
                    mark_column: mark.to_string(),
                    mark_values: (!to.is_empty()).then(|| (to.to_string(), default.to_string())),
                    path_column: path.to_string(),
                })
            }
            _ => plain.columns.push(c.clone()),
        }
    }
    (plain, search, cycle)
}

#[cfg(test)]
mod tests {
    use super::*;
    use sqlparser::dialect::PostgreSqlDialect;
    use sqlparser::parser::Parser;
    use sqlparser::tokenizer::Tokenizer;

    fn first_cte(sql: &str) -> (ast::TableAlias, Option<SearchClause>, Option<CycleClause>) {
        let tokens = Tokenizer::new(&PostgreSqlDialect {}, sql)
            .tokenize_with_location()
            .unwrap();
        let s = Parser::new(&PostgreSqlDialect {})
            .with_tokens_with_locations(rewrite_search_cycle(tokens))
            .parse_statements()
            .unwrap();
        let ast::Statement::Query(q) = &s[0] else {
            panic!("{s:?}")
        };
        split_alias(&q.with.as_ref().unwrap().cte_tables[0].alias)
    }

    #[test]
    fn clauses_are_kept_aside() {
        let (alias, search, cycle) = first_cte(
            "with recursive t(a, b) as (select 1, 2 union all select a, b from t) \
             search depth first by a, B set o cycle a set c to 'Y' default 'N' using p \
             select * from t",
        );
        assert_eq!(alias.columns.len(), 2);
        let search = search.unwrap();
        assert!(!search.breadth_first);
        assert_eq!(search.columns, ["a", "b"]);
        assert_eq!(search.sequence_column, "o");
        let cycle = cycle.unwrap();
        assert_eq!(cycle.columns, ["a"]);
        assert_eq!(cycle.mark_values, Some(("'Y'".into(), "'N'".into())));
        assert_eq!(cycle.path_column, "p");
    }

    #[test]
    fn a_cte_without_a_column_list() {
        let (alias, search, cycle) = first_cte(
            "with recursive t as materialized (select 1 as a union select a from t) \
             cycle a set c using p select * from t",
        );
        assert!(alias.columns.is_empty());
        assert!(search.is_none());
        assert_eq!(cycle.unwrap().mark_column, "c");
    }
}
