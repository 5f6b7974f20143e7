//! The clauses an aggregate call may carry besides its arguments:
//! `FILTER (WHERE ...)` and `ORDER BY` inside the parentheses (PostgreSQL's
//! transformAggregateCall). They are bound in the scope of the arguments and
//! refused, with PostgreSQL's errors, on a function that is not an aggregate.

use common::{PgError, PgResult, SqlState};
use sqlparser::ast;

use super::{Binder, Scope};
use crate::expr::{AggOrder, Expr};

/// The clauses of one call as written, before binding.
pub(super) struct CallClauses<'a> {
    filter: Option<&'a ast::Expr>,
    order: &'a [ast::OrderByExpr],
    distinct: bool,
}

impl<'a> CallClauses<'a> {
    pub(super) fn of(f: &'a ast::Function) -> PgResult<CallClauses<'a>> {
        let mut order: &[ast::OrderByExpr] = &[];
        let mut distinct = false;
        if let ast::FunctionArguments::List(list) = &f.args {
            distinct = matches!(
                list.duplicate_treatment,
                Some(ast::DuplicateTreatment::Distinct)
            );
            for c in &list.clauses {
                match c {
                    ast::FunctionArgumentClause::OrderBy(keys) => order = keys,
                    other => {
                        return Err(PgError::syntax(format!(
                            "syntax error at or near \"{}\"",
                            other.to_string().split_whitespace().next().unwrap_or("")
                        )))
                    }
                }
            }
        }
        Ok(CallClauses {
            filter: f.filter.as_deref(),
            order,
            distinct,
        })
    }

    fn is_empty(&self) -> bool {
        self.filter.is_none() && self.order.is_empty() && !self.distinct
    }
}

impl Binder<'_, '_> {
    /// Attaches `clauses` to the bound call `call` of function `name`.
    pub(super) fn apply_call_clauses(
        &mut self,
        name: &str,
        call: Expr,
        clauses: CallClauses<'_>,
        scope: &Scope,
    ) -> PgResult<Expr> {
        if clauses.is_empty() {
            return Ok(call);
        }
        let Expr::Agg(mut agg) = call else {
            let what = if clauses.distinct {
                "DISTINCT"
            } else if clauses.filter.is_some() {
                "FILTER"
            } else {
                "ORDER BY"
            };
            return Err(PgError::new(
                SqlState::WRONG_OBJECT_TYPE,
                format!("{what} specified, but {name} is not an aggregate function"),
            ));
        };
        if let Some(w) = clauses.filter {
            let e = self.bind_expr(w, scope)?;
            if e.contains_agg() {
                return Err(PgError::new(
                    SqlState::GROUPING_ERROR,
                    "aggregate functions are not allowed in FILTER",
                ));
            }
            agg.filter = Some(self.coerce_bool(e, "FILTER")?);
        }
        for o in clauses.order {
            let e = self.bind_expr(&o.expr, scope)?;
            if e.contains_agg() {
                return Err(PgError::new(
                    SqlState::GROUPING_ERROR,
                    "aggregate function calls cannot be nested",
                ));
            }
            let e = if e.type_id() == types::TypeId::Unknown {
                self.coerce(
                    e,
                    types::TypeId::Text.into(),
                    types::cast::CastContext::Implicit,
                )?
            } else {
                e
            };
            // DISTINCT compares whole inputs, so the order may only use them.
            let in_args = agg
                .args
                .iter()
                .any(|a| a == &e || matches!(a, Expr::Cast { expr, .. } if **expr == e));
            if agg.distinct && !in_args {
                return Err(PgError::new(
                    SqlState::INVALID_COLUMN_REFERENCE,
                    "in an aggregate with DISTINCT, ORDER BY expressions must appear in argument list",
                ));
            }
            let descending = matches!(o.options.sort, Some(ast::OrderBySort::Desc));
            agg.order.push(AggOrder {
                expr: e,
                descending,
                nulls_first: o.options.nulls_first.unwrap_or(descending),
            });
        }
        Ok(Expr::Agg(agg))
    }
}
