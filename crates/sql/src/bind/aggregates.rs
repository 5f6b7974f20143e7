//! Aggregate calls in the binder: the built-in aggregates and their
//! argument and result types, the clauses a call may carry besides its
//! arguments (`FILTER (WHERE ...)` and `ORDER BY` inside the parentheses,
//! PostgreSQL's transformAggregateCall, refused with PostgreSQL's errors on a
//! function that is not an aggregate), and the ordered-set aggregates with
//! `WITHIN GROUP (ORDER BY ...)`.

use common::{PgError, PgResult, SqlState};
use sqlparser::ast;

use types::cast::CastContext;
use types::TypeId;

use super::{Binder, Scope};
use crate::expr::{AggCall, AggFunc, AggOrder, Expr, RegrFunc};

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
            let descending = super::query::descending(&o.options)?;
            agg.order.push(AggOrder {
                expr: e,
                descending,
                nulls_first: o.options.nulls_first.unwrap_or(descending),
            });
        }
        Ok(Expr::Agg(agg))
    }

    pub(super) fn bind_aggregate(
        &mut self,
        name: &str,
        args: Vec<Expr>,
        distinct: bool,
        star: bool,
    ) -> PgResult<Option<Expr>> {
        let func = match (name, args.len(), star) {
            ("count", 0, true) => AggFunc::CountStar,
            ("count", 1, false) => AggFunc::Count,
            ("sum", 1, _) => AggFunc::Sum,
            ("avg", 1, _) => AggFunc::Avg,
            ("min", 1, _) => AggFunc::Min,
            ("max", 1, _) => AggFunc::Max,
            ("bool_and" | "every", 1, _) => AggFunc::BoolAnd,
            ("bool_or", 1, _) => AggFunc::BoolOr,
            ("string_agg", 2, _) => AggFunc::StringAgg,
            ("var_pop", 1, _) => AggFunc::Variance {
                sample: false,
                root: false,
            },
            ("var_samp" | "variance", 1, _) => AggFunc::Variance {
                sample: true,
                root: false,
            },
            ("stddev_pop", 1, _) => AggFunc::Variance {
                sample: false,
                root: true,
            },
            ("stddev_samp" | "stddev", 1, _) => AggFunc::Variance {
                sample: true,
                root: true,
            },
            ("bit_and", 1, _) => AggFunc::BitAnd,
            ("bit_or", 1, _) => AggFunc::BitOr,
            ("bit_xor", 1, _) => AggFunc::BitXor,
            (n, 2, false) => match RegrFunc::from_name(n) {
                Some(r) => AggFunc::Regr(r),
                None => return Ok(None),
            },
            _ => return Ok(None),
        };
        if args.iter().any(Expr::contains_agg) {
            return Err(PgError::new(
                SqlState::GROUPING_ERROR,
                "aggregate function calls cannot be nested",
            ));
        }
        let mut args = args;
        let arg_type = args.first().map(Expr::type_id).unwrap_or(TypeId::Int8);
        let (arg_type, result) = match func {
            AggFunc::CountStar | AggFunc::Count => (arg_type, TypeId::Int8),
            AggFunc::Sum => match arg_type {
                TypeId::Int2 | TypeId::Int4 => (arg_type, TypeId::Int8),
                TypeId::Int8 | TypeId::Numeric => (arg_type, TypeId::Numeric),
                TypeId::Float4 => (arg_type, TypeId::Float4),
                TypeId::Float8 | TypeId::Unknown => (TypeId::Float8, TypeId::Float8),
                TypeId::Interval => (TypeId::Interval, TypeId::Interval),
                TypeId::Money => (TypeId::Money, TypeId::Money),
                t => return Err(no_agg(name, t)),
            },
            AggFunc::Avg => match arg_type {
                TypeId::Int2 | TypeId::Int4 | TypeId::Int8 | TypeId::Numeric => {
                    (arg_type, TypeId::Numeric)
                }
                TypeId::Float4 | TypeId::Float8 | TypeId::Unknown => {
                    (TypeId::Float8, TypeId::Float8)
                }
                TypeId::Interval => (TypeId::Interval, TypeId::Interval),
                t => return Err(no_agg(name, t)),
            },
            AggFunc::Min | AggFunc::Max => match arg_type {
                TypeId::Unknown => (TypeId::Text, TypeId::Text),
                // PostgreSQL 15 has no min/max over these.
                t @ (TypeId::Bool
                | TypeId::Bytea
                | TypeId::Uuid
                | TypeId::MacAddr
                | TypeId::MacAddr8) => return Err(no_agg(name, t)),
                // cidr has no min/max of its own: inet's.
                TypeId::Cidr => (TypeId::Inet, TypeId::Inet),
                t => (t, t),
            },
            AggFunc::BoolAnd | AggFunc::BoolOr => (TypeId::Bool, TypeId::Bool),
            // string_agg(bytea, bytea) or string_agg(text, text).
            AggFunc::StringAgg if arg_type == TypeId::Bytea => (TypeId::Bytea, TypeId::Bytea),
            AggFunc::StringAgg => (TypeId::Text, TypeId::Text),
            // Bound by bind_json_aggregate.
            AggFunc::JsonAgg | AggFunc::JsonObjectAgg => (TypeId::Json, TypeId::Json),
            AggFunc::JsonbAgg | AggFunc::JsonbObjectAgg => (TypeId::Jsonb, TypeId::Jsonb),
            // Bound by bind_array_agg.
            AggFunc::ArrayAgg => (arg_type, arg_type),
            AggFunc::Variance { .. } => match arg_type {
                TypeId::Int2 | TypeId::Int4 | TypeId::Int8 | TypeId::Numeric => {
                    (arg_type, TypeId::Numeric)
                }
                TypeId::Float4 | TypeId::Float8 | TypeId::Unknown => {
                    (TypeId::Float8, TypeId::Float8)
                }
                t => return Err(no_agg(name, t)),
            },
            AggFunc::BitAnd | AggFunc::BitOr | AggFunc::BitXor => match arg_type {
                t @ (TypeId::Int2 | TypeId::Int4 | TypeId::Int8) => (t, t),
                t => return Err(no_agg(name, t)),
            },
            AggFunc::Regr(r) => {
                for a in &args {
                    let t = a.type_id();
                    if !types::cast::can_cast(t, TypeId::Float8, CastContext::Implicit) {
                        let types: Vec<&str> =
                            args.iter().map(|a| a.type_id().display_name()).collect();
                        return Err(PgError::new(
                            SqlState::UNDEFINED_FUNCTION,
                            format!("function {name}({}) does not exist", types.join(", ")),
                        )
                        .with_hint("No function matches the given name and argument types. You might need to add explicit type casts."));
                    }
                }
                let result = if r == RegrFunc::Count {
                    TypeId::Int8
                } else {
                    TypeId::Float8
                };
                (TypeId::Float8, result)
            }
            AggFunc::PercentileCont | AggFunc::PercentileDisc | AggFunc::Mode => {
                unreachable!("ordered-set aggregates are bound by bind_ordered_set")
            }
        };
        if func != AggFunc::CountStar && func != AggFunc::Count {
            let a0 = args.remove(0);
            let a0 = self.coerce(a0, arg_type.into(), CastContext::Implicit)?;
            args.insert(0, a0);
            if matches!(func, AggFunc::StringAgg | AggFunc::Regr(_)) {
                let sep = args.remove(1);
                args.push(self.coerce(sep, arg_type.into(), CastContext::Implicit)?);
            }
        }
        let result = if matches!(func, AggFunc::Min | AggFunc::Max) {
            args[0].data_type()
        } else {
            result.into()
        };
        Ok(Some(Expr::Agg(Box::new(AggCall::new(
            func, args, distinct, arg_type, result,
        )))))
    }
}

impl Binder<'_, '_> {
    /// An ordered-set aggregate call (`percentile_cont(0.5) WITHIN GROUP
    /// (ORDER BY x)`), or None for any other function without WITHIN GROUP.
    pub(super) fn bind_ordered_set(
        &mut self,
        name: &str,
        f: &ast::Function,
        scope: &Scope,
    ) -> PgResult<Option<Expr>> {
        let func = match name {
            "percentile_cont" => Some(AggFunc::PercentileCont),
            "percentile_disc" => Some(AggFunc::PercentileDisc),
            "mode" => Some(AggFunc::Mode),
            _ if f.within_group.is_empty() => return Ok(None),
            // PostgreSQL looks for a function taking the sorted arguments too.
            _ => None,
        };
        let (direct, distinct, star) = self.function_args(f, scope)?;
        let mut sorted = Vec::new();
        for o in &f.within_group {
            sorted.push(self.bind_expr(&o.expr, scope)?);
        }
        let Some(func) = func else {
            return Err(no_such_function(name, &direct, &sorted));
        };
        let wants_fraction = func != AggFunc::Mode;
        if distinct || star || sorted.len() != 1 || direct.len() != usize::from(wants_fraction) {
            return Err(no_such_function(name, &direct, &sorted));
        }
        if direct.iter().chain(&sorted).any(Expr::contains_agg) {
            return Err(PgError::new(
                SqlState::GROUPING_ERROR,
                "aggregate function calls cannot be nested",
            ));
        }
        let mut value = sorted.pop().expect("one sorted argument");
        if value.type_id() == TypeId::Unknown {
            value = self.coerce(value, TypeId::Text.into(), CastContext::Implicit)?;
        }
        if func == AggFunc::PercentileCont {
            let target = if value.type_id() == TypeId::Interval {
                TypeId::Interval
            } else if types::cast::can_cast(value.type_id(), TypeId::Float8, CastContext::Implicit)
            {
                TypeId::Float8
            } else {
                return Err(no_such_function(name, &direct, &[value]));
            };
            value = self.coerce(value, target.into(), CastContext::Implicit)?;
        }
        let mut args = vec![value.clone()];
        let mut result = value.data_type();
        if let Some(fraction) = direct.into_iter().next() {
            // A fraction or an array of fractions, giving an array of results.
            let many = fraction.type_id().is_array();
            let want = if many {
                TypeId::Float8.array_type()
            } else {
                Some(TypeId::Float8)
            };
            let elem_array = value.type_id().array_type();
            match (want, many, elem_array) {
                (Some(want), true, Some(arr)) => {
                    args.push(self.coerce(fraction, want.into(), CastContext::Implicit)?);
                    result = arr.into();
                }
                (Some(want), false, _) => {
                    args.push(self.coerce(fraction, want.into(), CastContext::Implicit)?)
                }
                _ => return Err(no_such_function(name, &[fraction], &[value])),
            }
        }
        let o = &f.within_group[0];
        let descending = super::query::descending(&o.options)?;
        let mut call = AggCall::new(func, args, false, value.type_id(), result);
        call.order.push(AggOrder {
            expr: value,
            descending,
            nulls_first: o.options.nulls_first.unwrap_or(descending),
        });
        Ok(Some(Expr::Agg(Box::new(call))))
    }
}

/// Whether `name` is an aggregate (its arguments may hold no window call):
/// every name the binders in this file, `bind_json_aggregate` and
/// `bind_array_agg` accept.
pub(super) fn is_aggregate_name(name: &str) -> bool {
    matches!(
        name,
        "count"
            | "sum"
            | "avg"
            | "min"
            | "max"
            | "bool_and"
            | "bool_or"
            | "every"
            | "string_agg"
            | "array_agg"
            | "json_agg"
            | "jsonb_agg"
            | "json_object_agg"
            | "jsonb_object_agg"
            | "var_pop"
            | "var_samp"
            | "variance"
            | "stddev_pop"
            | "stddev_samp"
            | "stddev"
            | "bit_and"
            | "bit_or"
            | "bit_xor"
            | "covar_pop"
            | "covar_samp"
            | "corr"
            | "regr_count"
            | "regr_sxx"
            | "regr_syy"
            | "regr_sxy"
            | "regr_avgx"
            | "regr_avgy"
            | "regr_r2"
            | "regr_slope"
            | "regr_intercept"
            | "percentile_cont"
            | "percentile_disc"
            | "mode"
    )
}

/// PostgreSQL's 42883 for a call no function matches, naming the types of
/// the direct and the sorted arguments.
fn no_such_function(name: &str, direct: &[Expr], sorted: &[Expr]) -> PgError {
    let types: Vec<String> = direct
        .iter()
        .chain(sorted)
        .map(|e| e.data_type().display_name())
        .collect();
    PgError::new(
        SqlState::UNDEFINED_FUNCTION,
        format!("function {name}({}) does not exist", types.join(", ")),
    )
    .with_hint("No function matches the given name and argument types. You might need to add explicit type casts.")
}

fn no_agg(name: &str, t: TypeId) -> PgError {
    PgError::new(SqlState::UNDEFINED_FUNCTION, format!("function {name}({}) does not exist", t.display_name()))
        .with_hint("No function matches the given name and argument types. You might need to add explicit type casts.")
}
