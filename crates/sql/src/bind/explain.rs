//! EXPLAIN: its options (both the parenthesised list and the old
//! `EXPLAIN ANALYZE VERBOSE` keywords) and the statement it explains.

use common::{PgError, PgResult, SqlState};
use sqlparser::ast;

use super::{ident_name, Binder};
use crate::plan::{BoundStatement, ExplainFormat, ExplainOptions};

fn option_error(msg: String) -> PgError {
    PgError::new(SqlState::SYNTAX_ERROR, msg)
}

/// A boolean option's value as PostgreSQL's defGetBoolean reads it.
fn bool_arg(name: &str, arg: &Option<ast::Expr>) -> PgResult<bool> {
    let Some(arg) = arg else {
        return Ok(true);
    };
    let text = match arg {
        ast::Expr::Value(v) => match &v.value {
            ast::Value::Boolean(b) => return Ok(*b),
            ast::Value::Number(n, _) => n.clone(),
            ast::Value::SingleQuotedString(s) => s.clone(),
            other => other.to_string(),
        },
        ast::Expr::Identifier(i) => ident_name(i),
        other => other.to_string(),
    };
    match text.to_ascii_lowercase().as_str() {
        "true" | "on" | "1" => Ok(true),
        "false" | "off" | "0" => Ok(false),
        _ => Err(option_error(format!("{name} requires a Boolean value"))),
    }
}

impl Binder<'_, '_> {
    pub(crate) fn bind_explain(
        &mut self,
        analyze: bool,
        verbose: bool,
        statement: &ast::Statement,
        format: Option<&ast::AnalyzeFormatKind>,
        options: Option<&[ast::UtilityOption]>,
    ) -> PgResult<BoundStatement> {
        let mut o = ExplainOptions {
            analyze,
            verbose,
            costs: true,
            buffers: false,
            timing: true,
            summary: false,
            format: ExplainFormat::Text,
        };
        let mut timing_set = false;
        let mut summary_set = false;
        if let Some(ast::AnalyzeFormatKind::Keyword(f) | ast::AnalyzeFormatKind::Assignment(f)) =
            format
        {
            o.format = parse_format(&f.to_string())?;
        }
        for opt in options.unwrap_or_default() {
            let name = ident_name(&opt.name);
            match name.as_str() {
                "analyze" => o.analyze = bool_arg(&name, &opt.arg)?,
                "verbose" => o.verbose = bool_arg(&name, &opt.arg)?,
                "costs" => o.costs = bool_arg(&name, &opt.arg)?,
                "buffers" => o.buffers = bool_arg(&name, &opt.arg)?,
                "timing" => {
                    timing_set = true;
                    o.timing = bool_arg(&name, &opt.arg)?
                }
                "summary" => {
                    summary_set = true;
                    o.summary = bool_arg(&name, &opt.arg)?
                }
                // Accepted: we never show settings or WAL figures yet.
                "settings" | "wal" => {
                    bool_arg(&name, &opt.arg)?;
                }
                "format" => {
                    let v = match &opt.arg {
                        Some(ast::Expr::Identifier(i)) => ident_name(i),
                        Some(ast::Expr::Value(v)) => match &v.value {
                            ast::Value::SingleQuotedString(s) => s.clone(),
                            other => other.to_string(),
                        },
                        Some(other) => other.to_string(),
                        None => return Err(option_error("format requires a parameter".into())),
                    };
                    o.format = parse_format(&v).map_err(|e| self.at(e, opt.name.span))?;
                }
                _ => {
                    let err = option_error(format!("unrecognized EXPLAIN option \"{name}\""));
                    return Err(self.at(err, opt.name.span));
                }
            }
        }
        if timing_set && o.timing && !o.analyze {
            return Err(PgError::new(
                SqlState::INVALID_PARAMETER_VALUE,
                "EXPLAIN option TIMING requires ANALYZE",
            ));
        }
        if !timing_set {
            o.timing = o.analyze;
        }
        if !summary_set {
            o.summary = o.analyze;
        }
        let inner = self.bind_sql(statement)?;
        match inner {
            // EXPLAIN EXECUTE: the session finds the statement's plan.
            BoundStatement::Query { .. }
            | BoundStatement::WithModifying { .. }
            | BoundStatement::Insert { .. }
            | BoundStatement::Update { .. }
            | BoundStatement::Delete { .. }
            | BoundStatement::ExecutePrepared { .. } => Ok(BoundStatement::Explain {
                statement: Box::new(inner),
                options: o,
                settings: Box::default(),
                planning_time: std::time::Duration::ZERO,
            }),
            _ => Err(PgError::syntax(
                "EXPLAIN of this statement is not supported",
            )),
        }
    }
}

fn parse_format(v: &str) -> PgResult<ExplainFormat> {
    match v.to_ascii_lowercase().as_str() {
        "text" => Ok(ExplainFormat::Text),
        "json" => Ok(ExplainFormat::Json),
        "xml" | "yaml" => Err(PgError::unsupported(format!(
            "EXPLAIN format {} is not supported",
            v.to_ascii_uppercase()
        ))),
        _ => Err(PgError::new(
            SqlState::INVALID_PARAMETER_VALUE,
            format!("unrecognized value for EXPLAIN option \"format\": \"{v}\""),
        )),
    }
}
