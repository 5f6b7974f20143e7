//! DECLARE, CLOSE, PREPARE, EXECUTE and DEALLOCATE: the statements that
//! name a session's cursors and prepared statements. The binder checks and
//! types what they carry; the session keeps the named objects.

use common::{PgError, PgResult, SqlState};
use sqlparser::ast;
use types::cast::{can_cast, cast_value, CastContext};
use types::io::parse_text;
use types::{DataType, IoSettings, TypeId, Value};

use super::{ident_name, object_name_parts, Binder};
use crate::cursor::CursorOptions;
use crate::expr::Expr;
use crate::parse::ParsedStatement;
use crate::plan::BoundStatement;

impl Binder<'_, '_> {
    pub(crate) fn bind_declare(&mut self, stmts: &[ast::Declare]) -> PgResult<BoundStatement> {
        let [d] = stmts else {
            return Err(PgError::syntax("syntax error at or near \",\""));
        };
        let (Some(query), [name], Some(ast::DeclareType::Cursor)) =
            (&d.for_query, d.names.as_slice(), &d.declare_type)
        else {
            return Err(PgError::syntax("syntax error at or near \"DECLARE\""));
        };
        if super::cte::with_modifies(query) {
            return Err(PgError::new(
                SqlState::FEATURE_NOT_SUPPORTED,
                "DECLARE CURSOR must not contain data-modifying statements in WITH",
            ));
        }
        let (plan, columns) = self.bind_query(query)?;
        if plan.locks_rows() {
            // transformDeclareCursorStmt: a cursor that locks rows reads
            // only forward and ends with its transaction.
            let strength = query.locks.first().map_or("FOR UPDATE", |l| {
                crate::locking::clause(l).strength.as_sql()
            });
            let refuse = |what: &str, detail: &str| {
                PgError::new(
                    SqlState::FEATURE_NOT_SUPPORTED,
                    format!("DECLARE {what} ... {strength} is not supported"),
                )
                .with_detail(detail)
            };
            if d.hold == Some(true) {
                return Err(refuse(
                    "CURSOR WITH HOLD",
                    "Holdable cursors must be READ ONLY.",
                ));
            }
            if d.scroll == Some(true) {
                return Err(refuse(
                    "SCROLL CURSOR",
                    "Scrollable cursors must be READ ONLY.",
                ));
            }
        }
        Ok(BoundStatement::DeclareCursor {
            name: ident_name(name),
            options: CursorOptions {
                binary: d.binary == Some(true),
                scroll: d.scroll,
                hold: d.hold == Some(true),
            },
            query: Box::new(BoundStatement::Query { plan, columns }),
        })
    }

    /// PREPARE: the statement is bound now with the declared parameter
    /// types, so its errors and inferred types show at PREPARE as in
    /// PostgreSQL; its own `$n` are not the outer statement's.
    pub(crate) fn bind_prepare(
        &mut self,
        name: &ast::Ident,
        data_types: &[ast::DataType],
        statement: &ast::Statement,
    ) -> PgResult<BoundStatement> {
        use ast::Statement as S;
        if !matches!(
            statement,
            S::Query(_) | S::Insert(_) | S::Update(_) | S::Delete(_)
        ) {
            let word = statement
                .to_string()
                .split_whitespace()
                .next()
                .unwrap_or_default()
                .to_lowercase();
            return Err(PgError::syntax(format!(
                "syntax error at or near \"{word}\""
            )));
        }
        let declared = data_types
            .iter()
            .map(|t| super::types::parse_type_name(&t.to_string()).map(|t| Some(t.id)))
            .collect::<PgResult<Vec<_>>>()?;
        let outer = std::mem::replace(&mut self.ctx.param_types, declared);
        let bound = self.bind_sql(statement);
        let param_types = std::mem::replace(&mut self.ctx.param_types, outer);
        let src = self.src.clone().unwrap_or_default();
        Ok(BoundStatement::Prepare {
            name: ident_name(name),
            statement: Box::new(ParsedStatement::Sql(Box::new(statement.clone()), src)),
            param_types,
            bound: Box::new(bound?),
        })
    }

    pub(crate) fn bind_execute(
        &mut self,
        name: Option<&ast::ObjectName>,
        parameters: &[ast::Expr],
        immediate: bool,
        using: &[ast::ExprWithAlias],
        into: &[ast::Ident],
    ) -> PgResult<BoundStatement> {
        let name = match name.map(object_name_parts).transpose()? {
            Some(parts)
                if parts.len() == 1 && !immediate && using.is_empty() && into.is_empty() =>
            {
                parts.into_iter().next().expect("one part")
            }
            _ => return Err(PgError::syntax("syntax error at or near \"EXECUTE\"")),
        };
        let scope = Vec::new();
        let args = parameters
            .iter()
            .map(|e| self.bind_expr(e, &scope))
            .collect::<PgResult<Vec<_>>>()?;
        Ok(BoundStatement::ExecutePrepared { name, args })
    }
}

/// CLOSE name | CLOSE ALL.
pub(crate) fn bind_close(cursor: &ast::CloseCursor) -> BoundStatement {
    match cursor {
        ast::CloseCursor::All => BoundStatement::CloseCursor(None),
        ast::CloseCursor::Specific { name } => BoundStatement::CloseCursor(Some(ident_name(name))),
    }
}

/// DEALLOCATE [PREPARE] name | ALL.
pub(crate) fn bind_deallocate(name: &ast::Ident) -> BoundStatement {
    if name.quote_style.is_none() && name.value.eq_ignore_ascii_case("all") {
        BoundStatement::Deallocate(None)
    } else {
        BoundStatement::Deallocate(Some(ident_name(name)))
    }
}

/// Coerces EXECUTE's argument `index` (from 0) to its parameter's type as
/// an assignment would (PostgreSQL's EvaluateParams): untyped literals are
/// read as the type, other types need an assignment cast.
pub fn coerce_execute_arg(arg: Expr, to: TypeId, index: usize, io: &IoSettings) -> PgResult<Expr> {
    let target = DataType::new(to);
    let from = arg.type_id();
    match arg {
        Expr::Const(Value::Null, _) => return Ok(Expr::Const(Value::Null, target)),
        Expr::Const(Value::Text(ref s), t) if t.id == TypeId::Unknown => {
            return Ok(Expr::Const(parse_text(target, s, io)?, target));
        }
        _ => {}
    }
    if from == to {
        return Ok(arg);
    }
    if from == TypeId::Unknown || !can_cast(from, to, CastContext::Assignment) {
        return Err(PgError::new(
            SqlState::DATATYPE_MISMATCH,
            format!(
                "parameter ${} of type {} cannot be coerced to the expected type {}",
                index + 1,
                from.display_name(),
                to.display_name()
            ),
        )
        .with_hint("You will need to rewrite or cast the expression."));
    }
    if let Expr::Const(v, _) = &arg {
        let v = cast_value(v.clone(), from, target, CastContext::Assignment, io)?;
        return Ok(Expr::Const(v, target));
    }
    Ok(Expr::Cast {
        expr: Box::new(arg),
        from,
        to: target,
        explicit: false,
    })
}
