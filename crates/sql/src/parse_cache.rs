//! A per-session cache of parsed statements, for clients that send the same
//! statement again and again with different constants (pgbench's default
//! simple protocol, ORMs that inline values).
//!
//! The key is the statement text with the characters of each numeric and
//! standard string literal masked, so `select f('big', 17)` and
//! `select f('abc', 99)` share one entry. A hit clones the cached syntax tree
//! and writes the new literals into it.
//!
//! Rules:
//! 1. Two texts with the same key differ only inside literals of the same
//!    kind, at the same line and column; so sqlparser makes the same tokens
//!    of them, and the same tree apart from those literals' values.
//! 2. Literals are matched to tree values by their source position (line,
//!    column), never by visiting order, which is not always the order of the
//!    text (`trim(both 'x' from 'y')` keeps 'y' first).
//! 3. A tree is cached only if every literal the masking lexer found is a
//!    value in the tree, at its position, with the same contents (a
//!    `char(10)` length, a typed literal, adjacent strings that sqlparser
//!    joins: all fail this and are parsed every time).
//! 4. Anything the masking lexer does not handle exactly (comments, `$`
//!    other than a parameter such as `$1`,
//!    prefixed strings such as E'..', backslashes in strings, numbers glued
//!    to letters or dots) makes the text uncacheable: it is parsed as usual.
//! 5. Parse errors are never cached; utility statements never reach here.

use std::collections::HashMap;
use std::ops::ControlFlow;

use common::PgResult;
use sqlparser::ast::{Statement, Value, ValueWithSpan, Visit, VisitMut, Visitor, VisitorMut};

use crate::parse::{parse_sql, parse_utility, ParsedStatement, SourceMap, StatementText};

/// Entries kept per session; the least recently used goes first.
const CAPACITY: usize = 256;
/// Longer texts (bulk INSERTs) are unlikely to repeat; not worth the memory.
const MAX_TEXT_LEN: usize = 4096;

const NUMBER_MASK: char = '\u{1}';
const STRING_MASK: char = '\u{2}';

#[derive(Debug, Clone, PartialEq, Eq)]
enum LiteralValue {
    /// The number as written.
    Number(String),
    /// The string's contents, quotes removed and `''` made `'`.
    Str(String),
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Literal {
    /// 1-based line and column (in characters) of the literal's first character.
    line: u64,
    column: u64,
    value: LiteralValue,
}

struct Entry {
    /// None: this shape is known not to be cacheable (rule 3).
    tree: Option<Box<Statement>>,
    last_use: u64,
}

#[derive(Default)]
pub struct ParseCache {
    entries: HashMap<String, Entry>,
    tick: u64,
}

/// Longest statement text the cache keeps a tree for.
const MAX_CACHED_TEXT: usize = 16 * 1024;

impl ParseCache {
    pub fn new() -> Self {
        Self::default()
    }

    /// Parses one statement as `parse::parse_statement` does, reusing a cached
    /// tree when only literals differ from an earlier statement.
    pub fn parse(&mut self, full: &str, stmt: &StatementText<'_>) -> PgResult<ParsedStatement> {
        if let Some(u) = parse_utility(stmt.text) {
            return Ok(ParsedStatement::Utility(u));
        }
        if crate::copy::is_copy(stmt.text) {
            return crate::copy::parse_copy(full, stmt).map(|c| ParsedStatement::Copy(Box::new(c)));
        }
        // Long statements are not worth caching, and a clone of a deep tree
        // would recurse once per level.
        if stmt.text.len() > MAX_CACHED_TEXT {
            return parse_sql(full, stmt);
        }
        let Some((key, literals)) = mask_literals(stmt.text) else {
            return parse_sql(full, stmt);
        };
        self.tick += 1;
        if let Some(entry) = self.entries.get_mut(&key) {
            entry.last_use = self.tick;
            let Some(tree) = &entry.tree else {
                return parse_sql(full, stmt);
            };
            let mut tree = tree.clone();
            if substitute(&mut tree, &literals) {
                return Ok(ParsedStatement::Sql(tree, SourceMap::new(full, stmt)));
            }
            debug_assert!(false, "cached tree lost a literal: {key:?}");
            return parse_sql(full, stmt);
        }
        let parsed = parse_sql(full, stmt)?;
        let tree = match &parsed {
            ParsedStatement::Sql(tree, _) if literals_in_tree(tree, &literals) => {
                Some(tree.clone())
            }
            _ => None,
        };
        self.insert(key, tree);
        Ok(parsed)
    }

    fn insert(&mut self, key: String, tree: Option<Box<Statement>>) {
        if self.entries.len() >= CAPACITY {
            if let Some(oldest) = self
                .entries
                .iter()
                .min_by_key(|(_, e)| e.last_use)
                .map(|(k, _)| k.clone())
            {
                self.entries.remove(&oldest);
            }
        }
        self.entries.insert(
            key,
            Entry {
                tree,
                last_use: self.tick,
            },
        );
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

fn is_ident_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_' || !c.is_ascii()
}

fn is_ident_char(c: char) -> bool {
    is_ident_start(c) || c.is_ascii_digit() || c == '$'
}

/// The cache key of `text` and its literals, or None if the text uses
/// anything this lexer does not handle exactly (rule 4).
fn mask_literals(text: &str) -> Option<(String, Vec<Literal>)> {
    if text.len() > MAX_TEXT_LEN {
        return None;
    }
    let chars: Vec<char> = text.chars().collect();
    let mut key = String::with_capacity(text.len());
    let mut literals = Vec::new();
    let (mut line, mut column) = (1u64, 1u64);
    let mut i = 0;
    // Advances over chars[i], keeping line and column as sqlparser counts them.
    let step = |c: char, line: &mut u64, column: &mut u64| {
        if c == '\n' {
            *line += 1;
            *column = 1;
        } else {
            *column += 1;
        }
    };
    while i < chars.len() {
        let c = chars[i];
        let prev = if i > 0 { Some(chars[i - 1]) } else { None };
        match c {
            // A parameter ($1): kept in the key as written, so a statement
            // the extended protocol parses again and again is parsed once.
            '$' if chars.get(i + 1).is_some_and(|d| d.is_ascii_digit()) => {
                let mut j = i + 1;
                while chars.get(j).is_some_and(|d| d.is_ascii_digit()) {
                    j += 1;
                }
                // `$1$` would open a dollar-quoted string; `$1abc` is not a parameter.
                if chars.get(j).is_some_and(|&d| is_ident_char(d)) {
                    return None;
                }
                for &d in &chars[i..j] {
                    key.push(d);
                    column += 1;
                }
                i = j;
            }
            NUMBER_MASK | STRING_MASK | '$' | '\\' => return None,
            '-' if chars.get(i + 1) == Some(&'-') => return None,
            '/' if chars.get(i + 1) == Some(&'*') => return None,
            '"' => {
                // A quoted identifier: part of the key as written.
                key.push(c);
                step(c, &mut line, &mut column);
                i += 1;
                loop {
                    let &d = chars.get(i)?;
                    key.push(d);
                    step(d, &mut line, &mut column);
                    i += 1;
                    if d == '"' {
                        if chars.get(i) == Some(&'"') {
                            key.push('"');
                            step('"', &mut line, &mut column);
                            i += 1;
                        } else {
                            break;
                        }
                    }
                }
            }
            '\'' => {
                // E'..', B'..', X'..', N'..', U&'..' and the like are not plain strings.
                if prev.is_some_and(|p| is_ident_char(p) || p == '&' || p == '\'') {
                    return None;
                }
                let (start_line, start_column) = (line, column);
                key.push('\'');
                step(c, &mut line, &mut column);
                i += 1;
                let mut contents = String::new();
                loop {
                    let &d = chars.get(i)?;
                    if d == '\'' {
                        if chars.get(i + 1) == Some(&'\'') {
                            contents.push('\'');
                            key.push(STRING_MASK);
                            key.push(STRING_MASK);
                            step(d, &mut line, &mut column);
                            step(d, &mut line, &mut column);
                            i += 2;
                            continue;
                        }
                        key.push('\'');
                        step(d, &mut line, &mut column);
                        i += 1;
                        break;
                    }
                    if d == '\\' || d == NUMBER_MASK || d == STRING_MASK {
                        return None;
                    }
                    contents.push(d);
                    key.push(if d == '\n' { '\n' } else { STRING_MASK });
                    step(d, &mut line, &mut column);
                    i += 1;
                }
                if chars.get(i) == Some(&'\'') {
                    return None;
                }
                literals.push(Literal {
                    line: start_line,
                    column: start_column,
                    value: LiteralValue::Str(contents),
                });
            }
            '0'..='9' => {
                if prev.is_some_and(|p| is_ident_char(p) || p == '.') {
                    // Part of an identifier such as t1 is consumed below with
                    // it; anything else glued to a number is not handled.
                    return None;
                }
                let start = i;
                while chars.get(i).is_some_and(|d| d.is_ascii_digit()) {
                    i += 1;
                }
                if chars.get(i) == Some(&'.') {
                    i += 1;
                    while chars.get(i).is_some_and(|d| d.is_ascii_digit()) {
                        i += 1;
                    }
                }
                if matches!(chars.get(i), Some('e' | 'E')) {
                    let mut j = i + 1;
                    if matches!(chars.get(j), Some('+' | '-')) {
                        j += 1;
                    }
                    if !chars.get(j).is_some_and(|d| d.is_ascii_digit()) {
                        return None;
                    }
                    i = j;
                    while chars.get(i).is_some_and(|d| d.is_ascii_digit()) {
                        i += 1;
                    }
                }
                if chars
                    .get(i)
                    .is_some_and(|&d| is_ident_char(d) || d == '.' || d == '\'')
                {
                    return None;
                }
                let raw: String = chars[start..i].iter().collect();
                literals.push(Literal {
                    line,
                    column,
                    value: LiteralValue::Number(raw),
                });
                for _ in start..i {
                    key.push(NUMBER_MASK);
                    column += 1;
                }
            }
            _ if is_ident_start(c) => {
                while chars.get(i).is_some_and(|&d| is_ident_char(d)) {
                    key.push(chars[i]);
                    column += 1;
                    i += 1;
                }
            }
            _ => {
                key.push(c);
                step(c, &mut line, &mut column);
                i += 1;
            }
        }
    }
    Some((key, literals))
}

fn literal_at<'a>(literals: &'a [Literal], v: &ValueWithSpan) -> Option<(usize, &'a Literal)> {
    let start = v.span.start;
    literals
        .binary_search_by(|l| (l.line, l.column).cmp(&(start.line, start.column)))
        .ok()
        .map(|i| (i, &literals[i]))
}

fn same_value(l: &LiteralValue, v: &Value) -> bool {
    match (l, v) {
        (LiteralValue::Number(a), Value::Number(b, false)) => a == b,
        (LiteralValue::Str(a), Value::SingleQuotedString(b)) => a == b,
        _ => false,
    }
}

/// Rule 3: every literal appears in the tree, at its position, unchanged.
fn literals_in_tree(tree: &Statement, literals: &[Literal]) -> bool {
    struct Check<'a> {
        literals: &'a [Literal],
        seen: Vec<bool>,
    }
    impl Visitor for Check<'_> {
        type Break = ();
        fn pre_visit_value(&mut self, v: &ValueWithSpan) -> ControlFlow<()> {
            if let Some((i, l)) = literal_at(self.literals, v) {
                if self.seen[i] || !same_value(&l.value, &v.value) {
                    return ControlFlow::Break(());
                }
                self.seen[i] = true;
            }
            ControlFlow::Continue(())
        }
    }
    let mut check = Check {
        literals,
        seen: vec![false; literals.len()],
    };
    tree.visit(&mut check).is_continue() && check.seen.iter().all(|&s| s)
}

/// Writes `literals` into a cached tree of the same shape (rule 2). False if
/// some literal found no value at its position (never expected: rule 3).
fn substitute(tree: &mut Statement, literals: &[Literal]) -> bool {
    struct Write<'a> {
        literals: &'a [Literal],
        written: usize,
    }
    impl VisitorMut for Write<'_> {
        type Break = ();
        fn pre_visit_value(&mut self, v: &mut ValueWithSpan) -> ControlFlow<()> {
            if let Some((_, l)) = literal_at(self.literals, v) {
                v.value = match (&l.value, &v.value) {
                    (LiteralValue::Number(n), Value::Number(_, false)) => {
                        Value::Number(n.clone(), false)
                    }
                    (LiteralValue::Str(s), Value::SingleQuotedString(_)) => {
                        Value::SingleQuotedString(s.clone())
                    }
                    _ => return ControlFlow::Break(()),
                };
                self.written += 1;
            }
            ControlFlow::Continue(())
        }
    }
    let mut w = Write {
        literals,
        written: 0,
    };
    tree.visit(&mut w).is_continue() && w.written == literals.len()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::parse_statement;

    fn stmt(text: &str) -> StatementText<'_> {
        StatementText { text, offset: 0 }
    }

    fn tree(p: ParsedStatement) -> Box<Statement> {
        match p {
            ParsedStatement::Sql(t, _) => t,
            ParsedStatement::Utility(_) | ParsedStatement::Copy(_) => panic!("utility"),
        }
    }

    /// Parses `first` to fill the cache, then each of `rest` (same key) both
    /// through the cache and directly; the trees must be equal and print the same.
    fn check_same_shape(first: &str, rest: &[&str]) {
        let mut cache = ParseCache::new();
        cache.parse(first, &stmt(first)).unwrap();
        let key = mask_literals(first).unwrap().0;
        assert!(
            cache.entries.get(&key).is_some_and(|e| e.tree.is_some()),
            "{first} should be cached"
        );
        for text in rest {
            assert_eq!(mask_literals(text).unwrap().0, key, "{text}");
            let cached = tree(cache.parse(text, &stmt(text)).unwrap());
            let direct = tree(parse_statement(text, &stmt(text)).unwrap());
            assert_eq!(cached.to_string(), direct.to_string(), "{text}");
            assert_eq!(cached, direct, "{text}");
        }
    }

    #[test]
    fn same_shape_different_literals() {
        check_same_shape(
            "select pg_prewarm('big', 'buffer', 'main', 120, 120)",
            &[
                "select pg_prewarm('abc', 'buffer', 'main', 999, 314)",
                "select pg_prewarm('a''', 'buffer', 'main', 1.5, 3e1)",
            ],
        );
        check_same_shape(
            "select trim(both 'x' from 'x'), substring('abc' from 2 for 1)",
            &["select trim(both 'a' from 'b'), substring('xyz' from 1 for 3)"],
        );
        check_same_shape(
            "select * from t where a between 10 and 20 order by 1 limit 5 offset 7",
            &["select * from t where a between 99 and 11 order by 2 limit 9 offset 0"],
        );
        check_same_shape(
            "update t set v = v + 1, s = 'ab\ncd' where id = -3",
            &["update t set v = v + 7, s = 'xy\nzw' where id = -9"],
        );
        check_same_shape(
            "insert into t values (1, 'a'), (22, 'bb') returning \"x\"\"y\", 'k'",
            &["insert into t values (3, 'q'), (44, 'zz') returning \"x\"\"y\", 'm'"],
        );
        // A typed literal's string is a value in the tree too.
        check_same_shape("select date '2020-01-01'", &["select date '1999-12-31'"]);
        // Parameters stay parameters; literals beside them still vary.
        check_same_shape(
            "select a from t where a = $1 and b > $12 and c = 5",
            &["select a from t where a = $1 and b > $12 and c = 7"],
        );
    }

    #[test]
    fn shapes_that_are_not_cached() {
        for text in [
            "create table t (c char(10))",
            "select 'a'\n'b'",
            "select interval '1 day'",
        ] {
            let mut cache = ParseCache::new();
            let a = tree(cache.parse(text, &stmt(text)).unwrap());
            let b = tree(cache.parse(text, &stmt(text)).unwrap());
            assert_eq!(a, b);
            let key = mask_literals(text).map(|k| k.0);
            if let Some(key) = key {
                assert!(
                    cache.entries.get(&key).is_some_and(|e| e.tree.is_none())
                        || text.contains("interval"),
                    "{text} should not be cached"
                );
            }
        }
    }

    #[test]
    fn texts_the_lexer_refuses() {
        for text in [
            "select 1 -- c",
            "select /* c */ 1",
            "select $tag$x$tag$",
            "select $1$",
            "select $1abc",
            "select E'a'",
            "select 'a\\b'",
            "select 1x",
            "select 1.2.3",
            "select x'1f'",
            "select U&'a'",
            "select 'unterminated",
            "select 1e",
        ] {
            assert!(mask_literals(text).is_none(), "{text}");
        }
        let (key, lits) = mask_literals("select t1.c2, \"a'b\" from t1 where x = 'é''z'").unwrap();
        assert_eq!(lits.len(), 1);
        assert_eq!(lits[0].value, LiteralValue::Str("é'z".into()));
        assert!(key.starts_with("select t1.c2, \"a'b\" from t1 where x = '"));
    }

    #[test]
    fn errors_are_not_cached_and_capacity_holds() {
        let mut cache = ParseCache::new();
        assert!(cache.parse("selec 1", &stmt("selec 1")).is_err());
        assert!(cache.is_empty());
        for i in 0..(CAPACITY + 10) {
            let text = format!("select c{i} from t where a = 1");
            cache.parse(&text, &stmt(&text)).unwrap();
        }
        assert_eq!(cache.len(), CAPACITY);
    }
}
