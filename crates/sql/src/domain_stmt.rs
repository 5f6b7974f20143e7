//! CREATE DOMAIN and ALTER DOMAIN, parsed here: `sqlparser` requires AS,
//! lacks NOT NULL / NULL on a domain and has no ALTER DOMAIN. Its parser
//! still reads the names, the type and the expressions.

use common::{PgError, PgResult};
use sqlparser::ast;
use sqlparser::dialect::PostgreSqlDialect;
use sqlparser::keywords::Keyword;
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::Token;

/// A domain constraint as written: `[CONSTRAINT name] CHECK (expr)`.
#[derive(Debug, Clone)]
pub struct DomainCheckDef {
    pub name: Option<String>,
    pub expr: ast::Expr,
}

#[derive(Debug, Clone)]
pub enum DomainStatement {
    Create {
        name: ast::ObjectName,
        data_type: ast::DataType,
        default: Option<ast::Expr>,
        /// The last NOT NULL / NULL written, if any.
        not_null: Option<bool>,
        checks: Vec<DomainCheckDef>,
    },
    Alter {
        name: ast::ObjectName,
        action: DomainAlteration,
    },
}

#[derive(Debug, Clone)]
pub enum DomainAlteration {
    SetDefault(ast::Expr),
    DropDefault,
    SetNotNull,
    DropNotNull,
    AddCheck(DomainCheckDef),
    DropConstraint { name: String, if_exists: bool },
}

/// The statement when `text` is a CREATE DOMAIN or ALTER DOMAIN.
pub(crate) fn parse(text: &str) -> Option<PgResult<DomainStatement>> {
    let second = text.split_whitespace().nth(1)?;
    if !second.eq_ignore_ascii_case("domain") {
        return None;
    }
    let dialect = PostgreSqlDialect {};
    let mut p = Parser::new(&dialect).try_with_sql(text).ok()?;
    let create = if p.parse_keywords(&[Keyword::CREATE, Keyword::DOMAIN]) {
        true
    } else if p.parse_keywords(&[Keyword::ALTER, Keyword::DOMAIN]) {
        false
    } else {
        return None;
    };
    let parsed = if create {
        parse_create(&mut p)
    } else {
        parse_alter(&mut p)
    };
    Some(
        parsed
            .and_then(|s| {
                let _ = p.consume_token(&Token::SemiColon);
                p.expect_token(&Token::EOF)?;
                Ok(s)
            })
            .map_err(|e| {
                let msg = e.to_string();
                let msg = msg.strip_prefix("sql parser error: ").unwrap_or(&msg);
                PgError::syntax(format!("syntax error: {msg}"))
            }),
    )
}

fn parse_check(p: &mut Parser<'_>, name: Option<String>) -> Result<DomainCheckDef, ParserError> {
    p.expect_keyword_is(Keyword::CHECK)?;
    p.expect_token(&Token::LParen)?;
    let expr = p.parse_expr()?;
    p.expect_token(&Token::RParen)?;
    Ok(DomainCheckDef { name, expr })
}

fn parse_create(p: &mut Parser<'_>) -> Result<DomainStatement, ParserError> {
    let name = p.parse_object_name(false)?;
    let _ = p.parse_keyword(Keyword::AS);
    let data_type = p.parse_data_type()?;
    let (mut default, mut not_null, mut checks) = (None, None, Vec::new());
    loop {
        if p.parse_keyword(Keyword::DEFAULT) {
            if default.is_some() {
                return Err(ParserError::ParserError(
                    "multiple default expressions".into(),
                ));
            }
            default = Some(p.parse_expr()?);
            continue;
        }
        let constraint_name = if p.parse_keyword(Keyword::CONSTRAINT) {
            Some(p.parse_identifier()?.value)
        } else {
            None
        };
        if p.parse_keywords(&[Keyword::NOT, Keyword::NULL]) {
            not_null = Some(true);
        } else if p.parse_keyword(Keyword::NULL) {
            not_null = Some(false);
        } else if constraint_name.is_some()
            || matches!(p.peek_token().token, Token::Word(ref w) if w.keyword == Keyword::CHECK)
        {
            checks.push(parse_check(p, constraint_name)?);
        } else {
            break;
        }
    }
    Ok(DomainStatement::Create {
        name,
        data_type,
        default,
        not_null,
        checks,
    })
}

fn parse_alter(p: &mut Parser<'_>) -> Result<DomainStatement, ParserError> {
    let name = p.parse_object_name(false)?;
    let action = if p.parse_keywords(&[Keyword::SET, Keyword::DEFAULT]) {
        DomainAlteration::SetDefault(p.parse_expr()?)
    } else if p.parse_keywords(&[Keyword::DROP, Keyword::DEFAULT]) {
        DomainAlteration::DropDefault
    } else if p.parse_keywords(&[Keyword::SET, Keyword::NOT, Keyword::NULL]) {
        DomainAlteration::SetNotNull
    } else if p.parse_keywords(&[Keyword::DROP, Keyword::NOT, Keyword::NULL]) {
        DomainAlteration::DropNotNull
    } else if p.parse_keyword(Keyword::ADD) {
        let constraint_name = if p.parse_keyword(Keyword::CONSTRAINT) {
            Some(p.parse_identifier()?.value)
        } else {
            None
        };
        DomainAlteration::AddCheck(parse_check(p, constraint_name)?)
    } else if p.parse_keywords(&[Keyword::DROP, Keyword::CONSTRAINT]) {
        let if_exists = p.parse_keywords(&[Keyword::IF, Keyword::EXISTS]);
        let name = p.parse_identifier()?.value;
        // RESTRICT / CASCADE change nothing: no object depends on a check.
        let _ = p.parse_keyword(Keyword::RESTRICT) || p.parse_keyword(Keyword::CASCADE);
        DomainAlteration::DropConstraint { name, if_exists }
    } else {
        return Err(ParserError::ParserError(
            "ALTER DOMAIN supports SET/DROP DEFAULT, SET/DROP NOT NULL, ADD CHECK and DROP CONSTRAINT".into(),
        ));
    };
    Ok(DomainStatement::Alter { name, action })
}
