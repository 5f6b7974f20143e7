//! Array expressions over the text-form arrays (`types::array`):
//! `ARRAY(subquery)`, `x op ANY/ALL (array)`, `array[i]`, `array || array`,
//! `unnest(array)` in FROM and `current_schemas(bool)`.

use ::types::cast::CastContext;
use ::types::ops::BinaryOp;
use ::types::{DataType, TypeId, Value};
use common::{PgError, PgResult, SqlState};
use sqlparser::ast;

use super::{Binder, Scope};
use crate::expr::{Expr, SysFunc};
use crate::plan::Plan;

fn comparison_op(op: &ast::BinaryOperator) -> PgResult<BinaryOp> {
    use ast::BinaryOperator as B;
    Ok(match op {
        B::Eq => BinaryOp::Eq,
        B::NotEq => BinaryOp::NotEq,
        B::Lt => BinaryOp::Lt,
        B::LtEq => BinaryOp::LtEq,
        B::Gt => BinaryOp::Gt,
        B::GtEq => BinaryOp::GtEq,
        other => {
            return Err(PgError::unsupported(format!(
                "operator {other} with ANY/ALL is not supported yet"
            )))
        }
    })
}

fn not_an_array(ty: TypeId, what: &str) -> PgError {
    PgError::new(
        SqlState::DATATYPE_MISMATCH,
        format!("{what} must yield an array, not type {}", ty.display_name()),
    )
}

impl Binder<'_, '_> {
    /// `ARRAY(subquery)`: the subquery's one column collected into an array.
    pub(super) fn bind_array_subquery(&mut self, q: &ast::Query, scope: &Scope) -> PgResult<Expr> {
        let (plan, cols) = self.bind_subquery(q, scope)?;
        if cols.len() != 1 {
            return Err(PgError::syntax("subquery must return only one column"));
        }
        let elem = match cols[0].ty.id {
            TypeId::Unknown => TypeId::Text,
            t => t,
        };
        let array = elem.array_type().ok_or_else(|| {
            PgError::unsupported(format!(
                "arrays of type {} are not supported yet",
                elem.display_name()
            ))
        })?;
        Ok(Expr::ArraySubquery(Box::new(plan), array.into()))
    }

    /// `left op ANY (array)` (`all`: ALL).
    pub(super) fn bind_array_compare(
        &mut self,
        left: &ast::Expr,
        op: &ast::BinaryOperator,
        right: &ast::Expr,
        all: bool,
        scope: &Scope,
    ) -> PgResult<Expr> {
        let op = comparison_op(op)?;
        if let ast::Expr::Subquery(_) = right {
            return Err(PgError::unsupported(
                "ANY/ALL (subquery) is not supported yet",
            ));
        }
        let mut x = self.bind_expr(left, scope)?;
        let mut array = self.bind_expr(right, scope)?;
        if array.type_id() == TypeId::Unknown {
            if x.type_id() == TypeId::Unknown {
                x = self.coerce(x, TypeId::Text.into(), CastContext::Implicit)?;
            }
            let ty = x
                .type_id()
                .array_type()
                .ok_or_else(|| not_an_array(x.type_id(), "op ANY/ALL (array)"))?;
            array = self.coerce(array, ty.into(), CastContext::Implicit)?;
        }
        let elem = array
            .type_id()
            .array_element()
            .ok_or_else(|| not_an_array(array.type_id(), "op ANY/ALL (array)"))?;
        // Resolve the comparison as `x op element` would be.
        let probe = self.bind_binary(op, x, Expr::Const(Value::Null, elem.into()))?;
        let Expr::Binary { left, right, .. } = probe else {
            return Err(PgError::internal("comparison bound to a non-binary"));
        };
        if right.type_id() != elem {
            return Err(PgError::new(
                SqlState::UNDEFINED_FUNCTION,
                format!(
                    "operator does not exist: {} {} {}",
                    left.type_id().display_name(),
                    op.symbol(),
                    elem.display_name()
                ),
            ));
        }
        Ok(Expr::ArrayCompare {
            expr: left,
            op,
            array: Box::new(array),
            all,
        })
    }

    /// `array[i]` (one subscript; slices and nesting are not supported).
    pub(super) fn bind_subscript(
        &mut self,
        root: &ast::Expr,
        chain: &[ast::AccessExpr],
        scope: &Scope,
    ) -> PgResult<Expr> {
        let [ast::AccessExpr::Subscript(ast::Subscript::Index { index })] = chain else {
            return Err(PgError::unsupported(
                "only a single array subscript is supported",
            ));
        };
        let array = self.bind_expr(root, scope)?;
        let elem = array.type_id().array_element().ok_or_else(|| {
            PgError::new(
                SqlState::DATATYPE_MISMATCH,
                format!(
                    "cannot subscript type {} because it does not support subscripting",
                    array.type_id().display_name()
                ),
            )
        })?;
        let index = self.bind_expr(index, scope)?;
        let index = self.coerce(index, TypeId::Int4.into(), CastContext::Implicit)?;
        Ok(Expr::Sys {
            func: SysFunc::ArraySubscript,
            args: vec![array, index],
            ty: elem.into(),
        })
    }

    /// `a || b` where a side is an array: array_cat (an untyped literal
    /// side is read as an array of the other side's type).
    pub(super) fn bind_array_concat(&mut self, l: Expr, r: Expr) -> PgResult<Expr> {
        self.call_builtin_exprs("array_cat", vec![l, r])
    }

    /// current_schemas(include_implicit): the search path's existing
    /// schemas, pg_catalog first when implicit schemas are asked for.
    pub(super) fn current_schemas(&mut self, arg: Expr) -> PgResult<Expr> {
        let arg = self.coerce(arg, TypeId::Bool.into(), CastContext::Implicit)?;
        let implicit = match arg {
            Expr::Const(Value::Bool(b), _) => b,
            Expr::Const(Value::Null, _) => {
                return Ok(Expr::Const(Value::Null, TypeId::NameArray.into()))
            }
            _ => {
                return Err(PgError::unsupported(
                    "current_schemas with a non-constant argument",
                ))
            }
        };
        let mut names: Vec<String> = Vec::new();
        if implicit && !self.ctx.search_path.iter().any(|s| s == "pg_catalog") {
            names.push("pg_catalog".into());
        }
        for s in &self.ctx.search_path {
            if self
                .ctx
                .catalog
                .namespace_by_name(self.ctx.db_oid, s)
                .is_some()
                && !names.contains(s)
            {
                names.push(s.clone());
            }
        }
        let text = ::types::array::format_elements(names.iter().map(Some));
        Ok(Expr::Const(Value::Text(text), TypeId::NameArray.into()))
    }

    /// `unnest(array)` in FROM: one row per element.
    pub(super) fn bind_unnest(&mut self, args: Vec<Expr>) -> PgResult<(Plan, DataType)> {
        let [array] = <[Expr; 1]>::try_from(args).map_err(|_| {
            PgError::unsupported("unnest with other than one argument is not supported yet")
        })?;
        let array = if array.type_id() == TypeId::Unknown {
            self.coerce(array, TypeId::TextArray.into(), CastContext::Implicit)?
        } else {
            array
        };
        let elem = array.type_id().array_element().ok_or_else(|| {
            PgError::new(
                SqlState::UNDEFINED_FUNCTION,
                format!(
                    "function unnest({}) does not exist",
                    array.type_id().display_name()
                ),
            )
        })?;
        Ok((
            Plan::UnnestScan {
                array,
                ty: elem.into(),
            },
            elem.into(),
        ))
    }
}
