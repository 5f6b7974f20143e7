//! Calls with `VARIADIC arr` as their last argument (the keyword arrives as
//! a marker, see `crate::variadic`), as PostgreSQL's ParseFuncOrColumn
//! resolves them without expanding the variadic parameter: the array is the
//! variadic parameter itself. Built-ins whose variadic part is `"any"` or
//! typed get a `VariadicSpread` (the elements become separate arguments when
//! the call runs); user functions take the array as their last argument
//! (`functions.rs`). A function that is not variadic gets the array as a
//! plain argument, as in PostgreSQL (`pg_typeof(VARIADIC arr)`).

use common::{PgError, PgResult, SqlState};
use sqlparser::ast;
use types::cast::CastContext;
use types::{DataType, TypeId};

use super::Binder;
use crate::expr::{Builtin, Expr, VariadicSpread};

/// Whether the call's last argument is `VARIADIC arr`. The keyword before
/// another argument is the syntax error PostgreSQL's grammar gives.
pub(super) fn has_variadic_arg(f: &ast::Function) -> PgResult<bool> {
    let ast::FunctionArguments::List(list) = &f.args else {
        return Ok(false);
    };
    let marked = list
        .args
        .iter()
        .position(|a| crate::variadic::variadic_arg(a).is_some());
    match marked {
        None => Ok(false),
        Some(i) if i + 1 == list.args.len() && list.clauses.is_empty() => Ok(true),
        Some(_) => Err(PgError::syntax(
            "syntax error: VARIADIC must come before the last argument",
        )),
    }
}

/// 42804, as PostgreSQL for a `VARIADIC` argument of no array type where
/// the function's variadic part is `"any"`.
fn not_an_array() -> PgError {
    PgError::new(
        SqlState::DATATYPE_MISMATCH,
        "VARIADIC argument must be an array",
    )
}

fn json_builder(name: &str) -> Option<bool> {
    match name {
        "json_build_array" | "json_build_object" => Some(false),
        "jsonb_build_array" | "jsonb_build_object" => Some(true),
        _ => None,
    }
}

impl Binder<'_, '_> {
    /// `name(fixed..., VARIADIC arr)` of a variadic built-in; None when no
    /// built-in of that name is variadic (the call binds as an ordinary one).
    pub(super) fn bind_variadic_builtin(
        &mut self,
        name: &str,
        args: &[Expr],
    ) -> PgResult<Option<Expr>> {
        let (array, fixed) = args.split_last().expect("VARIADIC is an argument");
        let mut variadic = types::functions::builtins()
            .filter(|f| f.name == name && f.variadic)
            .peekable();
        if variadic.peek().is_none() {
            return Ok(None);
        }
        // The array stands for the variadic parameter: the other arguments
        // fill the parameters before it.
        let Some(func) = variadic.find(|f| f.arg_types.len() == fixed.len() + 1) else {
            return Err(no_such_function(name, args));
        };
        let last = fixed.len();
        let any = json_builder(name).is_some() || types::functions::accepts_any(func, last);
        let array = if any {
            if !array.type_id().is_array() {
                return Err(not_an_array());
            }
            array.clone()
        } else {
            let want = func.arg_types[last]
                .array_type()
                .ok_or_else(|| no_such_function(name, args))?;
            let t = array.type_id();
            if t != TypeId::Unknown && !types::cast::can_cast(t, want, CastContext::Implicit) {
                return Err(no_such_function(name, args));
            }
            self.coerce(array.clone(), want.into(), CastContext::Implicit)?
        };
        let elem = array.type_id().array_element().expect("an array type");
        let item = Expr::Column(0, DataType::new(elem));
        let element = match json_builder(name) {
            Some(jsonb) => self.json_arg(item, jsonb)?,
            None if any => self.output_text(item)?,
            None => item,
        };
        let mut bound = Vec::with_capacity(args.len());
        for (i, a) in fixed.iter().enumerate() {
            bound.push(if types::functions::accepts_any(func, i) {
                self.output_text(a.clone())?
            } else {
                self.coerce(a.clone(), func.arg_types[i].into(), CastContext::Implicit)?
            });
        }
        bound.push(array);
        Ok(Some(Expr::VariadicSpread(Box::new(VariadicSpread {
            func: Builtin(func),
            args: bound,
            element,
            // format() reads a NULL array as no arguments (text_format).
            null_is_empty: name == "format",
        }))))
    }
}

/// 42883 naming the call's argument types, the array's as written.
pub(super) fn no_such_function(name: &str, args: &[Expr]) -> PgError {
    let types: Vec<String> = args.iter().map(|a| a.data_type().display_name()).collect();
    PgError::new(
        SqlState::UNDEFINED_FUNCTION,
        format!("function {name}({}) does not exist", types.join(", ")),
    )
    .with_hint(
        "No function matches the given name and argument types. You might need to add explicit type casts.",
    )
}
