//! SELECT's locking clause: `FOR UPDATE | FOR NO KEY UPDATE | FOR SHARE |
//! FOR KEY SHARE [OF table [, ...]] [NOWAIT | SKIP LOCKED]`, several
//! allowed.
//!
//! sqlparser knows only FOR UPDATE and FOR SHARE, each with at most one OF
//! name. `rewrite_tokens` turns the full grammar into that before it
//! parses: one clause per OF name, and the strength of FOR NO KEY UPDATE
//! and FOR KEY SHARE carried by a marker first part of the OF name (a
//! quoted identifier starting with U+0001, which `strength_of` recognises).
//! Clauses sqlparser already reads are left alone.

use sqlparser::ast;
use sqlparser::keywords::Keyword;
use sqlparser::tokenizer::{Token, TokenWithSpan, Word};

use crate::plan::{LockStrength, LockWait};

const KEY_SHARE_MARK: &str = "\u{1}KEY SHARE";
const NO_KEY_UPDATE_MARK: &str = "\u{1}NO KEY UPDATE";

fn is_blank(t: &Token) -> bool {
    matches!(t, Token::Whitespace(_))
}

fn keyword(t: &Token) -> Option<Keyword> {
    match t {
        Token::Word(w) if w.quote_style.is_none() => Some(w.keyword),
        _ => None,
    }
}

fn marker(value: &str) -> Token {
    Token::Word(Word {
        value: value.to_string(),
        quote_style: Some('"'),
        keyword: Keyword::NoKeyword,
    })
}

/// Rewrites locking clauses sqlparser cannot read (see the module comment).
pub(crate) fn rewrite_tokens(tokens: Vec<TokenWithSpan>) -> Vec<TokenWithSpan> {
    // Positions of the non-blank tokens: clauses are matched over these.
    let solid: Vec<usize> = (0..tokens.len())
        .filter(|&i| !is_blank(&tokens[i].token))
        .collect();
    let kw = |k: usize| solid.get(k).and_then(|&i| keyword(&tokens[i].token));
    let mut out = Vec::with_capacity(tokens.len());
    let mut copied = 0; // tokens[..copied] are in `out`
    let mut k = 0;
    while k < solid.len() {
        if kw(k) != Some(Keyword::FOR) {
            k += 1;
            continue;
        }
        let (mark, base, mut next) = match (kw(k + 1), kw(k + 2), kw(k + 3)) {
            (Some(Keyword::NO), Some(Keyword::KEY), Some(Keyword::UPDATE)) => {
                (Some(NO_KEY_UPDATE_MARK), Keyword::UPDATE, k + 4)
            }
            (Some(Keyword::KEY), Some(Keyword::SHARE), _) => {
                (Some(KEY_SHARE_MARK), Keyword::SHARE, k + 3)
            }
            (Some(Keyword::UPDATE), ..) => (None, Keyword::UPDATE, k + 2),
            (Some(Keyword::SHARE), ..) => (None, Keyword::SHARE, k + 2),
            _ => {
                k += 1;
                continue;
            }
        };
        // OF name [, name ...], each name words joined by periods.
        let mut names: Vec<Vec<TokenWithSpan>> = Vec::new();
        if kw(next) == Some(Keyword::OF) {
            next += 1;
            loop {
                let mut name: Vec<TokenWithSpan> = Vec::new();
                while let Some(&i) = solid.get(next) {
                    let after_period = name.last().map(|t| &t.token) == Some(&Token::Period);
                    match &tokens[i].token {
                        Token::Word(_) if name.is_empty() || after_period => {}
                        Token::Period if !name.is_empty() && !after_period => {}
                        _ => break,
                    }
                    name.push(tokens[i].clone());
                    next += 1;
                }
                if name.is_empty() {
                    break;
                }
                names.push(name);
                match solid.get(next).map(|&i| &tokens[i].token) {
                    Some(Token::Comma) => next += 1,
                    _ => break,
                }
            }
        }
        let wait: Vec<Token> = match (kw(next), kw(next + 1)) {
            (Some(Keyword::NOWAIT), _) => {
                next += 1;
                vec![Token::make_keyword("NOWAIT")]
            }
            (Some(Keyword::SKIP), Some(Keyword::LOCKED)) => {
                next += 2;
                vec![Token::make_keyword("SKIP"), Token::make_keyword("LOCKED")]
            }
            _ => Vec::new(),
        };
        if mark.is_none() && names.len() <= 1 {
            k = next;
            continue;
        }
        let span = tokens[solid[k]].span;
        out.extend(tokens[copied..solid[k]].iter().cloned());
        let emit = |out: &mut Vec<TokenWithSpan>, t: Token| {
            out.push(TokenWithSpan::new(t, span));
            out.push(TokenWithSpan::new(Token::Whitespace(ws()), span));
        };
        let targets: Vec<Option<&Vec<TokenWithSpan>>> = if names.is_empty() {
            vec![None]
        } else {
            names.iter().map(Some).collect()
        };
        for name in targets {
            emit(&mut out, Token::make_keyword("FOR"));
            emit(&mut out, Token::make_keyword(&format!("{base:?}")));
            if mark.is_some() || name.is_some() {
                emit(&mut out, Token::make_keyword("OF"));
            }
            if let Some(m) = mark {
                out.push(TokenWithSpan::new(marker(m), span));
                if name.is_some() {
                    out.push(TokenWithSpan::new(Token::Period, span));
                }
            }
            // The names keep their places in the text (error positions).
            out.extend(name.into_iter().flatten().cloned());
            out.push(TokenWithSpan::new(Token::Whitespace(ws()), span));
            for t in &wait {
                emit(&mut out, t.clone());
            }
        }
        copied = solid.get(next).copied().unwrap_or(tokens.len());
        k = next;
    }
    if copied == 0 {
        return tokens;
    }
    out.extend(tokens[copied..].iter().cloned());
    out
}

fn ws() -> sqlparser::tokenizer::Whitespace {
    sqlparser::tokenizer::Whitespace::Space
}

/// One locking clause as the binder applies it: its strength, wait policy
/// and the relation it names (None: every relation in FROM).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct LockingClause {
    pub strength: LockStrength,
    pub wait: LockWait,
    pub of: Option<ast::ObjectName>,
}

/// Reads a clause sqlparser parsed (after `rewrite_tokens`).
pub(crate) fn clause(lock: &ast::LockClause) -> LockingClause {
    let mut strength = match lock.lock_type {
        ast::LockType::Update => LockStrength::Update,
        ast::LockType::Share => LockStrength::Share,
    };
    let mut of = lock.of.clone();
    if let Some(name) = &mut of {
        let first = name.0.first().and_then(|p| p.as_ident());
        let mark = first
            .filter(|i| i.quote_style == Some('"'))
            .map(|i| i.value.as_str());
        let key = match mark {
            Some(KEY_SHARE_MARK) => Some(LockStrength::KeyShare),
            Some(NO_KEY_UPDATE_MARK) => Some(LockStrength::NoKeyUpdate),
            _ => None,
        };
        if let Some(s) = key {
            strength = s;
            name.0.remove(0);
            if name.0.is_empty() {
                of = None;
            }
        }
    }
    let wait = match lock.nonblock {
        None => LockWait::Block,
        Some(ast::NonBlock::Nowait) => LockWait::Error,
        Some(ast::NonBlock::SkipLocked) => LockWait::Skip,
    };
    LockingClause { strength, wait, of }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn clauses(sql: &str) -> Vec<LockingClause> {
        let dialect = sqlparser::dialect::PostgreSqlDialect {};
        let tokens = sqlparser::tokenizer::Tokenizer::new(&dialect, sql)
            .tokenize_with_location()
            .unwrap();
        let stmt = sqlparser::parser::Parser::new(&dialect)
            .with_tokens_with_locations(rewrite_tokens(tokens))
            .parse_statement()
            .unwrap();
        let ast::Statement::Query(q) = stmt else {
            panic!("not a query")
        };
        q.locks.iter().map(clause).collect()
    }

    fn name(c: &LockingClause) -> Option<String> {
        c.of.as_ref().map(|n| n.to_string())
    }

    #[test]
    fn every_strength_and_of_list_reads_as_postgresql_means_it() {
        let c = clauses("select * from a, b for no key update of a, b skip locked");
        assert_eq!(c.len(), 2);
        assert!(c
            .iter()
            .all(|c| c.strength == LockStrength::NoKeyUpdate && c.wait == LockWait::Skip));
        assert_eq!(name(&c[0]).as_deref(), Some("a"));
        assert_eq!(name(&c[1]).as_deref(), Some("b"));

        let c = clauses("select * from a for key share nowait");
        assert_eq!(c.len(), 1);
        assert_eq!(
            (c[0].strength, c[0].wait, name(&c[0])),
            (LockStrength::KeyShare, LockWait::Error, None)
        );

        let c = clauses("select * from a for update for share of a limit 1");
        assert_eq!(c.len(), 2);
        assert_eq!((c[0].strength, name(&c[0])), (LockStrength::Update, None));
        assert_eq!(
            (c[1].strength, name(&c[1]).as_deref()),
            (LockStrength::Share, Some("a"))
        );

        // FOR elsewhere is untouched.
        let c = clauses("select substring('abc' from 1 for 2) from a for share");
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].strength, LockStrength::Share);
    }
}
