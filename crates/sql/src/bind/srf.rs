//! Set-returning function calls (`crate::srf`). In FROM a call, or `ROWS
//! FROM (f(...), g(...))`, becomes a Function Scan whose columns take the
//! alias list; another function in FROM yields its one value as a row. In
//! a select list a call becomes `Expr::Srf`, which the SELECT's ProjectSet
//! runs (`query.rs`); elsewhere PostgreSQL's placement errors apply.

use common::{PgError, PgResult, SqlState};
use sqlparser::ast;
use types::cast::CastContext;
use types::json::ops::JsonSrf;
use types::{DataType, TypeId};

use super::{ident_name, object_name_parts, Binder, Scope, ScopeColumn};
use crate::expr::Expr;
use crate::plan::Plan;
use crate::srf::{SetFunction, SrfCall, SrfColumn};

/// The name `ROWS FROM (...)` is rewritten to before sqlparser sees it
/// (`crate::parse`): a function call in FROM whose arguments are the calls.
pub(crate) const ROWS_FROM_MARK: &str = "ROWS FROM";

/// Whether `name` is a set-returning function we run.
pub(crate) fn is_srf_name(name: &str) -> bool {
    matches!(
        name,
        "generate_series"
            | "generate_subscripts"
            | "unnest"
            | "regexp_matches"
            | "regexp_split_to_table"
            | "pg_partition_ancestors"
    ) || JsonSrf::from_name(name).is_some()
}

fn no_such_function(name: &str, args: &[Expr]) -> PgError {
    let types: Vec<&str> = args.iter().map(|a| a.type_id().display_name()).collect();
    PgError::new(
        SqlState::UNDEFINED_FUNCTION,
        format!("function {name}({}) does not exist", types.join(", ")),
    )
    .with_hint(
        "No function matches the given name and argument types. You might need to add explicit type casts.",
    )
}

fn not_allowed(context: &str) -> PgError {
    PgError::new(
        SqlState::FEATURE_NOT_SUPPORTED,
        format!("set-returning functions are not allowed in {context}"),
    )
}

fn not_top_level_in_from() -> PgError {
    PgError::new(
        SqlState::FEATURE_NOT_SUPPORTED,
        "set-returning functions must appear at top level of FROM",
    )
}

/// The error for a set-returning call inside an aggregate's arguments.
pub(super) fn srf_in_aggregate() -> PgError {
    PgError::new(
        SqlState::FEATURE_NOT_SUPPORTED,
        "aggregate function calls cannot contain set-returning function calls",
    )
    .with_hint("You might be able to move the set-returning function into a LATERAL FROM item.")
}

/// The error for a set-returning call in a conditional expression (`what`:
/// CASE, COALESCE), which would run it for only some rows.
pub(super) fn srf_in_conditional(what: &str) -> PgError {
    not_allowed(what)
        .with_hint("You might be able to move the set-returning function into a LATERAL FROM item.")
}

fn one_column(ty: DataType) -> Vec<SrfColumn> {
    vec![SrfColumn {
        name: String::new(),
        ty,
    }]
}

/// A function named in FROM: its name and arguments.
pub(super) struct FromCall<'a> {
    pub name: String,
    pub args: &'a [ast::FunctionArg],
}

impl Binder<'_, '_> {
    pub(super) fn series_args(&mut self, exprs: Vec<Expr>) -> PgResult<(Vec<Expr>, DataType)> {
        if !(2..=3).contains(&exprs.len()) {
            return Err(PgError::new(
                SqlState::UNDEFINED_FUNCTION,
                "function generate_series with these arguments does not exist",
            ));
        }
        if exprs.len() == 3 && matches!(exprs[2].type_id(), TypeId::Interval | TypeId::Unknown) {
            let bounds = self.common_type(
                &exprs[..2].iter().map(Expr::data_type).collect::<Vec<_>>(),
                "generate_series",
            )?;
            // generate_series(timestamp[tz], timestamp[tz], interval); dates
            // and untyped bounds go as timestamptz, PostgreSQL's preferred type.
            let ty = match bounds.id {
                TypeId::Timestamp => Some(TypeId::Timestamp),
                TypeId::Timestamptz | TypeId::Date => Some(TypeId::Timestamptz),
                TypeId::Text | TypeId::Unknown if exprs[2].type_id() == TypeId::Interval => {
                    Some(TypeId::Timestamptz)
                }
                _ => None,
            };
            if let Some(ty) = ty {
                let mut it = exprs.into_iter();
                let mut args = Vec::with_capacity(3);
                for _ in 0..2 {
                    let e = it.next().expect("three arguments");
                    args.push(self.coerce(e, ty.into(), CastContext::Implicit)?);
                }
                let step = it.next().expect("three arguments");
                args.push(self.coerce(step, TypeId::Interval.into(), CastContext::Implicit)?);
                return Ok((args, ty.into()));
            }
        }
        let ty = self.common_type(
            &exprs.iter().map(Expr::data_type).collect::<Vec<_>>(),
            "generate_series",
        )?;
        let ty = match ty.id {
            TypeId::Int2 | TypeId::Int4 | TypeId::Unknown => TypeId::Int4,
            TypeId::Int8 => TypeId::Int8,
            TypeId::Numeric => TypeId::Numeric,
            t => {
                return Err(PgError::new(
                    SqlState::UNDEFINED_FUNCTION,
                    format!(
                        "function generate_series({0}, {0}) does not exist",
                        t.display_name()
                    ),
                ))
            }
        };
        let args = exprs
            .into_iter()
            .map(|e| self.coerce(e, ty.into(), CastContext::Implicit))
            .collect::<PgResult<_>>()?;
        Ok((args, ty.into()))
    }

    /// Binds a call of set-returning function `name` over bound `args`;
    /// unnest with several arrays (FROM only) is one call per array.
    fn srf_calls(&mut self, name: &str, args: Vec<Expr>, in_from: bool) -> PgResult<Vec<SrfCall>> {
        let call = |func, args, columns| SrfCall {
            func,
            name: name.to_string(),
            args,
            columns,
        };
        Ok(match name {
            "generate_series" | "generate_subscripts" => {
                let args = if name == "generate_subscripts" {
                    self.subscript_series(args)?
                } else {
                    args
                };
                let (args, ty) = self.series_args(args)?;
                vec![call(SetFunction::Series, args, one_column(ty))]
            }
            "unnest" => {
                if args.is_empty() || (args.len() > 1 && !in_from) {
                    return Err(no_such_function(name, &args));
                }
                let mut calls = Vec::with_capacity(args.len());
                for array in args {
                    let array = if array.type_id() == TypeId::Unknown {
                        self.coerce(array, TypeId::TextArray.into(), CastContext::Implicit)?
                    } else {
                        array
                    };
                    let ty = array.data_type();
                    let Some(elem) = ty.id.array_element() else {
                        return Err(no_such_function(name, &[array]));
                    };
                    let elem = DataType::with_typmod(elem, ty.typmod);
                    calls.push(call(SetFunction::Unnest, vec![array], one_column(elem)));
                }
                calls
            }
            "regexp_matches" | "regexp_split_to_table" => {
                if !(2..=3).contains(&args.len()) {
                    return Err(no_such_function(name, &args));
                }
                let mut text_args = Vec::with_capacity(args.len());
                for a in args {
                    text_args.push(self.coerce(a, TypeId::Text.into(), CastContext::Implicit)?);
                }
                let (func, ty) = if name == "regexp_matches" {
                    (SetFunction::RegexpMatches, TypeId::TextArray)
                } else {
                    (SetFunction::RegexpSplitToTable, TypeId::Text)
                };
                vec![call(func, text_args, one_column(ty.into()))]
            }
            "pg_partition_ancestors" => {
                let [arg] =
                    <[Expr; 1]>::try_from(args).map_err(|args| no_such_function(name, &args))?;
                let arg = self.coerce(arg, TypeId::RegClass.into(), CastContext::Implicit)?;
                let columns = vec![SrfColumn {
                    name: "relid".into(),
                    ty: TypeId::RegClass.into(),
                }];
                vec![call(SetFunction::Empty, vec![arg], columns)]
            }
            _ => {
                let (func, json) = JsonSrf::from_name(name).expect("a set-returning function");
                let [arg] =
                    <[Expr; 1]>::try_from(args).map_err(|args| no_such_function(name, &args))?;
                let want = if json { TypeId::Json } else { TypeId::Jsonb };
                let arg = self.coerce(arg, want.into(), CastContext::Implicit)?;
                let columns = func
                    .columns(json)
                    .into_iter()
                    .map(|(n, t)| SrfColumn {
                        name: n.to_string(),
                        ty: t.into(),
                    })
                    .collect();
                vec![call(SetFunction::Json { func, json }, vec![arg], columns)]
            }
        })
    }

    /// A set-returning call in an expression: allowed in a select list (or
    /// ORDER BY), where the SELECT's ProjectSet runs it.
    pub(super) fn bind_srf_expr(
        &mut self,
        f: &ast::Function,
        name: &str,
        scope: &Scope,
    ) -> PgResult<Expr> {
        match self.window.context {
            Some("functions in FROM") => return Err(not_top_level_in_from()),
            Some(context) => return Err(not_allowed(context)),
            None => {}
        }
        let (args, distinct, star) = self.function_args(f, scope)?;
        if distinct || star {
            return Err(no_such_function(name, &args));
        }
        if args.iter().any(Expr::contains_srf) {
            return Err(PgError::unsupported(
                "a set-returning function call inside another one's arguments",
            ));
        }
        let mut calls = self.srf_calls(name, args, false)?;
        match calls.pop() {
            Some(call) if calls.is_empty() && call.columns.len() == 1 => {
                Ok(Expr::Srf(Box::new(call)))
            }
            _ => Err(PgError::unsupported(format!(
                "{name}() returning a record in a select list (call it in FROM)"
            ))),
        }
    }

    /// Binds a FROM item's arguments: no aggregates, windows or nested
    /// set-returning calls; a LATERAL reference reads an outer scope.
    fn bind_from_call_args(&mut self, call: &FromCall<'_>) -> PgResult<Vec<Expr>> {
        let mut args = Vec::with_capacity(call.args.len());
        for a in call.args {
            let ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e)) = a else {
                return Err(PgError::unsupported(
                    "named arguments to a function in FROM",
                ));
            };
            let bound =
                self.in_window_context(Some("functions in FROM"), |b| b.bind_expr(e, &Vec::new()))?;
            if bound.contains_agg() {
                return Err(PgError::new(
                    SqlState::GROUPING_ERROR,
                    "aggregate functions are not allowed in functions in FROM",
                ));
            }
            if bound.contains_srf() {
                return Err(not_top_level_in_from());
            }
            args.push(bound);
        }
        Ok(args)
    }

    /// Functions in FROM: one call (`f(...) [WITH ORDINALITY] [AS a(...)]`)
    /// or `ROWS FROM (f(...), g(...))`.
    pub(super) fn bind_function_item(
        &mut self,
        from_calls: &[FromCall<'_>],
        ordinality: bool,
        alias: &Option<ast::TableAlias>,
    ) -> PgResult<(Plan, Scope)> {
        let alias_name = alias.as_ref().map(|a| ident_name(&a.name));
        let first = from_calls
            .first()
            .map_or("", |c| c.name.as_str())
            .to_string();
        let qualifier = alias_name.clone().unwrap_or_else(|| first.clone());
        self.check_lock_other(&qualifier, true)?;
        let mut calls = Vec::new();
        let mut scalar = None;
        for fc in from_calls {
            let args = self.bind_from_call_args(fc)?;
            if is_srf_name(&fc.name) {
                calls.extend(self.srf_calls(&fc.name, args, true)?);
            } else if from_calls.len() == 1 && !ordinality {
                // Any other function: its value as the one row.
                scalar = Some(self.call_builtin_exprs(&fc.name, args)?);
            } else {
                return Err(PgError::unsupported(format!(
                    "{}() in ROWS FROM or WITH ORDINALITY: it returns no set",
                    fc.name
                )));
            }
        }
        let mut columns: Vec<(String, DataType)> = Vec::new();
        if let Some(value) = &scalar {
            columns.push((alias_name.clone().unwrap_or(first), value.data_type()));
        }
        let types = calls
            .iter()
            .flat_map(|c| c.columns.iter().map(|col| col.ty))
            .chain(ordinality.then(|| TypeId::Int8.into()));
        let names = crate::srf::column_names(&calls, ordinality, alias_name.as_deref());
        columns.extend(names.into_iter().zip(types));
        let mut scope = columns
            .into_iter()
            .map(|(name, ty)| ScopeColumn::derived(Some(qualifier.clone()), name, ty))
            .collect();
        super::apply_column_aliases(&mut scope, alias)?;
        let plan = match scalar {
            Some(value) => Plan::Values {
                rows: vec![vec![value]],
                width: 1,
            },
            None => Plan::FunctionScan {
                calls,
                ordinality,
                alias: alias_name,
            },
        };
        Ok((plan, scope))
    }
}

/// The calls of a FROM item that names functions: `f(args)`, or the
/// `ROWS FROM` mark over calls; None for a plain relation.
pub(super) fn from_calls<'a>(
    name: &ast::ObjectName,
    args: &'a [ast::FunctionArg],
) -> PgResult<Vec<FromCall<'a>>> {
    let parts = object_name_parts(name)?;
    let fname = parts.last().expect("a name has parts").clone();
    if parts.len() > 1 && parts[0] != "pg_catalog" {
        return Err(PgError::new(
            SqlState::UNDEFINED_FUNCTION,
            format!("function {} does not exist", parts.join(".")),
        ));
    }
    if fname != ROWS_FROM_MARK {
        return Ok(vec![FromCall { name: fname, args }]);
    }
    let mut calls = Vec::with_capacity(args.len());
    for a in args {
        let ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(ast::Expr::Function(f))) = a
        else {
            return Err(PgError::syntax("syntax error in ROWS FROM"));
        };
        let ast::FunctionArguments::List(list) = &f.args else {
            return Err(PgError::syntax("syntax error in ROWS FROM"));
        };
        let parts = object_name_parts(&f.name)?;
        calls.push(FromCall {
            name: parts.last().expect("a name has parts").clone(),
            args: &list.args,
        });
    }
    Ok(calls)
}
