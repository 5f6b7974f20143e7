//! Column defaults as PostgreSQL's `pg_get_expr(adbin, adrelid, true)`
//! prints them (pg_attrdef.adbin holds this text here).
//!
//! PostgreSQL stores a default after coercing it to the column's type: an
//! untyped literal becomes a constant of that type (`'x'::character
//! varying`), other expressions keep an implicit cast that the pretty
//! printer hides (`0` for a numeric column). Defaults are stored as SQL
//! text here, so their parse tree is printed with those rules.

use catalog::Column;
use sqlparser::ast::{self, Expr as E};
use sqlparser::dialect::PostgreSqlDialect;
use sqlparser::parser::Parser;
use types::{DataType, TypeId};

use crate::bind::format_type;

/// The default of `column` as pg_get_expr prints it; None without one.
pub fn default_sql(column: &Column) -> Option<String> {
    // An identity column's nextval is no default to SQL (pg_attrdef).
    if column.identity.is_some() {
        return None;
    }
    let text = column.default.as_deref()?;
    let parsed = Parser::new(&PostgreSqlDialect {})
        .try_with_sql(text)
        .and_then(|mut p| p.parse_expr());
    Some(match parsed {
        Ok(e) => expr_sql(&e, Some(column.data_type().id)),
        Err(_) => text.to_string(),
    })
}

fn quoted(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

/// `e` printed as ruleutils would; `target` is the type an untyped literal
/// at the top takes.
fn expr_sql(e: &E, target: Option<TypeId>) -> String {
    match e {
        E::Value(v) => value_sql(&v.value, target),
        E::Nested(inner) => expr_sql(inner, target),
        E::UnaryOp {
            op: ast::UnaryOperator::Minus,
            expr,
        } if matches!(**expr, E::Value(_)) => {
            // PostgreSQL folds a negated number into one negative constant,
            // which it prints in parentheses when it carries no cast.
            let inner = expr_sql(expr, target);
            if inner.starts_with('\'') {
                return inner.replacen('\'', "'-", 1);
            }
            let own_type = if inner.parse::<i32>().is_ok() {
                TypeId::Int4
            } else {
                TypeId::Numeric
            };
            format!("'-{inner}'::{}", type_label(own_type))
        }
        E::Cast {
            expr, data_type, ..
        } => {
            let to = crate::bind::parse_type_name(&data_type.to_string())
                .map(format_type)
                .unwrap_or_else(|_| data_type.to_string());
            match &**expr {
                // A cast literal is one constant of the cast's type:
                // `'s_seq'::regclass`, not `'s_seq'::text::regclass`.
                E::Value(v) if is_string(&v.value) => {
                    let (ast::Value::SingleQuotedString(s) | ast::Value::EscapedStringLiteral(s)) =
                        &v.value
                    else {
                        unreachable!("is_string")
                    };
                    format!("{}::{to}", quoted(s))
                }
                _ => format!("({})::{to}", expr_sql(expr, None)),
            }
        }
        E::Function(f) => {
            let args = match &f.args {
                ast::FunctionArguments::List(list) => list
                    .args
                    .iter()
                    .map(|a| match a {
                        ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(x)) => {
                            expr_sql(x, None)
                        }
                        other => other.to_string(),
                    })
                    .collect::<Vec<_>>()
                    .join(", "),
                ast::FunctionArguments::None => return f.name.to_string().to_uppercase(),
                other => other.to_string(),
            };
            format!("{}({args})", f.name.to_string().to_lowercase())
        }
        E::BinaryOp { left, op, right } => {
            format!("({} {op} {})", expr_sql(left, None), expr_sql(right, None))
        }
        other => other.to_string(),
    }
}

fn is_string(v: &ast::Value) -> bool {
    matches!(
        v,
        ast::Value::SingleQuotedString(_) | ast::Value::EscapedStringLiteral(_)
    )
}

fn type_label(t: TypeId) -> String {
    format_type(DataType::new(t))
}

fn value_sql(v: &ast::Value, target: Option<TypeId>) -> String {
    match v {
        ast::Value::SingleQuotedString(s) | ast::Value::EscapedStringLiteral(s) => {
            let ty = target.unwrap_or(TypeId::Text);
            format!("{}::{}", quoted(s), type_label(ty))
        }
        ast::Value::Number(n, _) => {
            let integral = n.parse::<i32>().is_ok();
            let float_like = n.contains(['.', 'e', 'E']);
            if integral || float_like {
                n.clone()
            } else if n.parse::<i64>().is_ok() {
                format!("'{n}'::bigint")
            } else {
                format!("'{n}'::numeric")
            }
        }
        ast::Value::Boolean(b) => b.to_string(),
        ast::Value::Null => match target {
            Some(t) => format!("NULL::{}", type_label(t)),
            None => "NULL".into(),
        },
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn col(ty: DataType, default: &str) -> Column {
        Column {
            name: "c".into(),
            type_oid: ty.id.oid(),
            typmod: ty.typmod,
            not_null: false,
            default: Some(default.into()),
            storage: None,
            compression: None,
            identity: None,
        }
    }

    #[test]
    fn defaults_print_as_postgres_does() {
        assert_eq!(
            default_sql(&col(DataType::varchar(20), "'x'")).unwrap(),
            "'x'::character varying"
        );
        assert_eq!(
            default_sql(&col(DataType::numeric(10, 2), "0")).unwrap(),
            "0"
        );
        assert_eq!(
            default_sql(&col(TypeId::Timestamptz.into(), "now()")).unwrap(),
            "now()"
        );
        assert_eq!(
            default_sql(&col(TypeId::Text.into(), "'a'")).unwrap(),
            "'a'::text"
        );
        assert_eq!(
            default_sql(&col(TypeId::Int4.into(), "1 + 2")).unwrap(),
            "(1 + 2)"
        );
        assert_eq!(
            default_sql(&col(TypeId::Int8.into(), "5000000000")).unwrap(),
            "'5000000000'::bigint"
        );
        assert_eq!(
            default_sql(&col(TypeId::Int4.into(), "nextval('s_seq'::regclass)")).unwrap(),
            "nextval('s_seq'::regclass)"
        );
    }
}
