//! DO: an anonymous PL/pgSQL block, run once as a function of no arguments
//! returning void (PostgreSQL's `inline_code_block`).

use common::{PgError, PgResult, SqlState};
use sqlparser::dialect::PostgreSqlDialect;
use sqlparser::tokenizer::{Token, Tokenizer};

/// `DO [LANGUAGE name] code` (the LANGUAGE clause may also follow the code).
#[derive(Debug, Clone, PartialEq)]
pub struct DoBlock {
    pub body: String,
}

/// Whether `text` is a DO statement; its parse (PostgreSQL's errors for a
/// missing body, an unknown or unsupported language) if so.
pub(crate) fn parse(text: &str) -> Option<PgResult<DoBlock>> {
    let tokens = Tokenizer::new(&PostgreSqlDialect {}, text)
        .tokenize()
        .ok()?;
    let mut solid = tokens
        .into_iter()
        .filter(|t| !matches!(t, Token::Whitespace(_) | Token::SemiColon));
    match solid.next()? {
        Token::Word(w) if w.quote_style.is_none() && w.value.eq_ignore_ascii_case("do") => {}
        _ => return None,
    }
    let mut body = None;
    let mut language = None;
    let rest: Vec<Token> = solid.collect();
    let mut i = 0;
    while i < rest.len() {
        match &rest[i] {
            Token::Word(w)
                if w.quote_style.is_none() && w.value.eq_ignore_ascii_case("language") =>
            {
                let name = match rest.get(i + 1) {
                    Some(Token::Word(w)) => w.value.to_lowercase(),
                    Some(Token::SingleQuotedString(s)) => s.to_lowercase(),
                    _ => return Some(Err(PgError::syntax("syntax error at end of input"))),
                };
                if language.replace(name).is_some() {
                    return Some(Err(PgError::syntax("conflicting or redundant options")));
                }
                i += 2;
            }
            Token::SingleQuotedString(s) | Token::EscapedStringLiteral(s) => {
                if body.replace(s.clone()).is_some() {
                    return Some(Err(PgError::syntax("conflicting or redundant options")));
                }
                i += 1;
            }
            Token::DollarQuotedString(s) => {
                if body.replace(s.value.clone()).is_some() {
                    return Some(Err(PgError::syntax("conflicting or redundant options")));
                }
                i += 1;
            }
            t => {
                return Some(Err(PgError::syntax(format!(
                    "syntax error at or near \"{t}\""
                ))))
            }
        }
    }
    let Some(body) = body else {
        return Some(Err(PgError::syntax("no inline code specified")));
    };
    match language.as_deref().unwrap_or("plpgsql") {
        "plpgsql" => Some(Ok(DoBlock { body })),
        "sql" | "c" | "internal" => Some(Err(PgError::new(
            SqlState::FEATURE_NOT_SUPPORTED,
            format!(
                "language \"{}\" does not support inline code execution",
                language.unwrap_or_default()
            ),
        ))),
        other => Some(Err(PgError::new(
            SqlState::UNDEFINED_OBJECT,
            format!("language \"{other}\" does not exist"),
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_body_and_language_in_either_order() {
        let ok = |t: &str| parse(t).unwrap().unwrap().body;
        assert_eq!(ok("do $$ begin null; end $$"), " begin null; end ");
        assert_eq!(ok("DO LANGUAGE plpgsql 'begin end'"), "begin end");
        assert_eq!(ok("do $x$begin end$x$ language plpgsql;"), "begin end");
        assert!(parse("select 1").is_none());
        let err = |t: &str| parse(t).unwrap().unwrap_err().code;
        assert_eq!(err("do"), SqlState::SYNTAX_ERROR);
        assert_eq!(
            err("do language sql 'select 1'"),
            SqlState::FEATURE_NOT_SUPPORTED
        );
        assert_eq!(err("do language nope 'x'"), SqlState::UNDEFINED_OBJECT);
    }
}
