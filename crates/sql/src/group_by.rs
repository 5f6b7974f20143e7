//! GROUP BY's set quantifier: `GROUP BY ALL items` (the default) and
//! `GROUP BY DISTINCT items` (duplicate grouping sets removed), which
//! sqlparser cannot read (it takes `GROUP BY ALL` as Snowflake's and
//! DISTINCT not at all). `rewrite_tokens` drops ALL and turns DISTINCT into
//! a marker first item (a quoted identifier starting with U+0001) that the
//! binder recognises with `is_distinct_marker`. Also FETCH FIRST's signed
//! count (`rewrite_fetch_sign`) and GROUPING SETS nested in GROUPING SETS
//! (`flatten_nested_grouping_sets`).

use sqlparser::ast;
use sqlparser::keywords::Keyword;
use sqlparser::tokenizer::{Token, TokenWithSpan, Word};

const DISTINCT_MARK: &str = "\u{1}DISTINCT";

/// Whether a GROUP BY item is the marker GROUP BY DISTINCT left.
pub(crate) fn is_distinct_marker(e: &ast::Expr) -> bool {
    matches!(e, ast::Expr::Identifier(i) if i.value == DISTINCT_MARK && i.quote_style.is_some())
}

fn keyword(t: &Token) -> Option<Keyword> {
    match t {
        Token::Word(w) if w.quote_style.is_none() => Some(w.keyword),
        _ => None,
    }
}

/// Rewrites `GROUP BY ALL` / `GROUP BY DISTINCT` (see the module comment).
pub(crate) fn rewrite_tokens(tokens: Vec<TokenWithSpan>) -> Vec<TokenWithSpan> {
    let solid: Vec<usize> = (0..tokens.len())
        .filter(|&i| !matches!(tokens[i].token, Token::Whitespace(_)))
        .collect();
    let kw = |k: usize| solid.get(k).and_then(|&i| keyword(&tokens[i].token));
    // Token positions of the quantifiers, each with whether it is DISTINCT.
    let quantifiers: Vec<(usize, bool)> = (0..solid.len())
        .filter(|&k| kw(k) == Some(Keyword::GROUP) && kw(k + 1) == Some(Keyword::BY))
        .filter_map(|k| match kw(k + 2) {
            Some(Keyword::ALL) => Some((solid[k + 2], false)),
            Some(Keyword::DISTINCT) => Some((solid[k + 2], true)),
            _ => None,
        })
        .collect();
    if quantifiers.is_empty() {
        return tokens;
    }
    let mut out = Vec::with_capacity(tokens.len() + quantifiers.len());
    for (i, t) in tokens.into_iter().enumerate() {
        match quantifiers.iter().find(|(at, _)| *at == i) {
            Some((_, true)) => {
                let span = t.span;
                let mark = Token::Word(Word {
                    value: DISTINCT_MARK.to_string(),
                    quote_style: Some('"'),
                    keyword: Keyword::NoKeyword,
                });
                out.push(TokenWithSpan::new(mark, span));
                out.push(TokenWithSpan::new(Token::Comma, span));
            }
            Some((_, false)) => {}
            None => out.push(t),
        }
    }
    out
}

/// `FETCH FIRST -1 ROWS` / `+1`: PostgreSQL's grammar allows a signed
/// constant as the count, sqlparser a bare value only, so the sign is
/// folded into the number (a negative count is then the executor's 2201W).
pub(crate) fn rewrite_fetch_sign(tokens: Vec<TokenWithSpan>) -> Vec<TokenWithSpan> {
    let solid: Vec<usize> = (0..tokens.len())
        .filter(|&i| !matches!(tokens[i].token, Token::Whitespace(_)))
        .collect();
    let kw = |k: usize| solid.get(k).and_then(|&i| keyword(&tokens[i].token));
    // (sign token, number token, negative)
    let signs: Vec<(usize, usize, bool)> = (1..solid.len())
        .filter(|&k| {
            kw(k) == Some(Keyword::FETCH)
                && matches!(kw(k + 1), Some(Keyword::FIRST | Keyword::NEXT))
        })
        .filter_map(|k| {
            let (sign, number) = (*solid.get(k + 2)?, *solid.get(k + 3)?);
            let negative = match tokens[sign].token {
                Token::Minus => true,
                Token::Plus => false,
                _ => return None,
            };
            matches!(tokens[number].token, Token::Number(..)).then_some((sign, number, negative))
        })
        .collect();
    if signs.is_empty() {
        return tokens;
    }
    let mut out = Vec::with_capacity(tokens.len());
    for (i, mut t) in tokens.into_iter().enumerate() {
        if signs.iter().any(|&(sign, _, _)| sign == i) {
            continue;
        }
        if let Some(&(_, _, negative)) = signs.iter().find(|&&(_, number, _)| number == i) {
            if let Token::Number(n, long) = &t.token {
                let n = if negative { format!("-{n}") } else { n.clone() };
                t.token = Token::Number(n, *long);
            }
        }
        out.push(t);
    }
    out
}

/// GROUPING SETS written directly inside GROUPING SETS, which sqlparser
/// cannot read: as PostgreSQL defines it, the inner clause's elements are
/// the outer one's, so its `GROUPING SETS (` and `)` are dropped.
pub(crate) fn flatten_nested_grouping_sets(tokens: Vec<TokenWithSpan>) -> Vec<TokenWithSpan> {
    let solid: Vec<usize> = (0..tokens.len())
        .filter(|&i| !matches!(tokens[i].token, Token::Whitespace(_)))
        .collect();
    let kw = |k: usize| solid.get(k).and_then(|&i| keyword(&tokens[i].token));
    let opens_sets = |k: usize| {
        kw(k) == Some(Keyword::GROUPING)
            && kw(k + 1) == Some(Keyword::SETS)
            && solid.get(k + 2).map(|&i| &tokens[i].token) == Some(&Token::LParen)
    };
    if !(0..solid.len()).any(&opens_sets) {
        return tokens;
    }
    // Open parentheses: whether each opens a GROUPING SETS list, and
    // whether it is a nested one being dropped.
    let mut open: Vec<(bool, bool)> = Vec::new();
    let mut dropped: Vec<usize> = Vec::new();
    let mut k = 0;
    while k < solid.len() {
        if opens_sets(k) {
            let nested = open.last().is_some_and(|&(sets, _)| sets);
            if nested {
                dropped.extend([solid[k], solid[k + 1], solid[k + 2]]);
            }
            open.push((true, nested));
            k += 3;
            continue;
        }
        match tokens[solid[k]].token {
            Token::LParen => open.push((false, false)),
            Token::RParen => {
                if let Some((_, true)) = open.pop() {
                    dropped.push(solid[k]);
                }
            }
            _ => {}
        }
        k += 1;
    }
    if dropped.is_empty() {
        return tokens;
    }
    tokens
        .into_iter()
        .enumerate()
        .filter(|(i, _)| !dropped.contains(i))
        .map(|(_, t)| t)
        .collect()
}
