//! `VARIADIC` before a call's last argument (`concat(VARIADIC arr)`,
//! `f(1, VARIADIC array[2, 3])`): the array is passed as the variadic
//! parameter itself instead of being collected from separate arguments.
//!
//! sqlparser reads `VARIADIC` as a column name and then fails on what
//! follows. `rewrite_variadic_args` turns the keyword, before parsing, into
//! a named-argument marker: `"\u{1}VARIADIC" => arr`, which sqlparser reads as
//! a named argument (`FunctionArg::ExprNamed`) and `variadic_arg` recognises.
//! Argument lists of function signatures (`CREATE FUNCTION f(VARIADIC b
//! int[])`, DROP/ALTER/COMMENT ON FUNCTION) keep the keyword: sqlparser reads
//! it there as an argument mode.

use sqlparser::ast;
use sqlparser::keywords::Keyword;
use sqlparser::tokenizer::{Token, TokenWithSpan, Word};

use crate::tokens::Solid;

/// The marker standing for `VARIADIC` in a call's argument list.
pub(crate) const VARIADIC_MARK: &str = "\u{1}VARIADIC";

/// Rewrites `VARIADIC` in call arguments (see the module comment).
pub(crate) fn rewrite_variadic_args(tokens: Vec<TokenWithSpan>) -> Vec<TokenWithSpan> {
    let solid = Solid::new(&tokens);
    let mut marks = Vec::new();
    for k in 1..solid.len() {
        if solid.word(k) == "VARIADIC"
            && (solid.is(k - 1, &Token::LParen) || solid.is(k - 1, &Token::Comma))
            && !in_signature(&solid, k)
        {
            marks.push(solid.position(k));
        }
    }
    if marks.is_empty() {
        return tokens;
    }
    let mut out = Vec::with_capacity(tokens.len() + marks.len());
    for (i, t) in tokens.into_iter().enumerate() {
        if marks.contains(&i) {
            let span = t.span;
            out.push(TokenWithSpan {
                token: Token::Word(Word {
                    value: VARIADIC_MARK.to_string(),
                    quote_style: Some('"'),
                    keyword: Keyword::NoKeyword,
                }),
                span,
            });
            out.push(TokenWithSpan {
                token: Token::RArrow,
                span,
            });
        } else {
            out.push(t);
        }
    }
    out
}

/// Whether the argument list holding the `k`th token is a function
/// signature: its `(` follows `FUNCTION|PROCEDURE|ROUTINE|AGGREGATE [IF
/// EXISTS] name` (the name possibly qualified).
fn in_signature(solid: &Solid<'_>, k: usize) -> bool {
    let mut depth = 0usize;
    let mut open = None;
    for j in (0..k).rev() {
        match solid.token(j) {
            Some(Token::RParen) => depth += 1,
            Some(Token::LParen) if depth == 0 => {
                open = Some(j);
                break;
            }
            Some(Token::LParen) => depth -= 1,
            _ => {}
        }
    }
    // Back over the name, `schema .` and IF EXISTS to the keyword.
    let Some(mut j) = open.and_then(|o| o.checked_sub(2)) else {
        return false;
    };
    if j >= 2 && solid.is(j, &Token::Period) {
        j -= 2;
    }
    if j >= 2 && solid.word(j) == "EXISTS" && solid.word(j - 1) == "IF" {
        j -= 2;
    }
    matches!(
        solid.word(j).as_str(),
        "FUNCTION" | "PROCEDURE" | "ROUTINE" | "AGGREGATE"
    )
}

/// The array of a `VARIADIC arr` argument, if `a` is one.
pub(crate) fn variadic_arg(a: &ast::FunctionArg) -> Option<&ast::Expr> {
    match a {
        ast::FunctionArg::ExprNamed {
            name: ast::Expr::Identifier(id),
            arg: ast::FunctionArgExpr::Expr(e),
            operator: ast::FunctionArgOperator::RightArrow,
        } if id.value == VARIADIC_MARK => Some(e),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use sqlparser::dialect::PostgreSqlDialect;
    use sqlparser::parser::Parser;
    use sqlparser::tokenizer::Tokenizer;

    fn parse(sql: &str) -> String {
        let tokens = Tokenizer::new(&PostgreSqlDialect {}, sql)
            .tokenize_with_location()
            .unwrap();
        Parser::new(&PostgreSqlDialect {})
            .with_tokens_with_locations(super::rewrite_variadic_args(tokens))
            .parse_statements()
            .map(|s| format!("{:?}", s[0]))
            .unwrap_or_else(|e| e.to_string())
    }

    #[test]
    fn call_arguments_get_the_marker() {
        let s = parse("select concat_ws(',', variadic array[1, 2])");
        assert!(s.contains("ExprNamed"), "{s}");
        assert!(s.contains("\\u{1}VARIADIC"), "{s}");
    }

    #[test]
    fn signatures_keep_the_keyword() {
        for sql in [
            "create function f(a int, variadic b int[]) returns int as 'select 1' language sql",
            "create function s.f(variadic b int[]) returns int as 'select 1' language sql",
            "drop function if exists s.f(int, variadic int[])",
        ] {
            let s = parse(sql);
            assert!(s.contains("Variadic"), "{s}");
            assert!(!s.contains("\\u{1}VARIADIC"), "{s}");
        }
    }

    #[test]
    fn a_column_named_variadic_is_left_alone() {
        let s = parse("select variadic from t");
        assert!(!s.contains("\\u{1}VARIADIC"), "{s}");
    }
}
