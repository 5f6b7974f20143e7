//! User-defined functions: CREATE [OR REPLACE] / ALTER / DROP FUNCTION,
//! and calls of them in expressions.
//!
//! CREATE FUNCTION checks the body as PostgreSQL does with
//! check_function_bodies on: a SQL body's statements are parsed and bound
//! with the arguments as `$n` (and by name), and the last one's first
//! column must be assignable to the return type (42P13); a PL/pgSQL body
//! is parsed (`crate::plpgsql`). A call binds to `Expr::UserFunc`, which
//! carries the function's volatility and parallel-safety labels.

use std::sync::Arc;

use catalog::functions::{Function, FunctionLanguage, ParallelSafety, Volatility};
use common::{Oid, PgError, PgResult, SqlState};
use sqlparser::ast;
use types::array::ArrayValue;
use types::cast::{can_cast, CastContext};
use types::{DataType, TypeId, Value};

use super::types::{format_type, parse_type_name};
use super::{ident_name, object_name_parts, Binder};
use crate::expr::{Expr, UserFuncCall};
use crate::plan::BoundStatement;
use catalog::triggers::TRIGGER_TYPE_OID;
use catalog::PG_CATALOG_NAMESPACE;

fn invalid_definition(msg: impl Into<String>) -> PgError {
    PgError::new(SqlState::INVALID_FUNCTION_DEFINITION, msg)
}

fn volatility_of(b: &ast::FunctionBehavior) -> Volatility {
    match b {
        ast::FunctionBehavior::Immutable => Volatility::Immutable,
        ast::FunctionBehavior::Stable => Volatility::Stable,
        ast::FunctionBehavior::Volatile => Volatility::Volatile,
    }
}

fn parallel_of(p: &ast::FunctionParallel) -> ParallelSafety {
    match p {
        ast::FunctionParallel::Safe => ParallelSafety::Safe,
        ast::FunctionParallel::Restricted => ParallelSafety::Restricted,
        ast::FunctionParallel::Unsafe => ParallelSafety::Unsafe,
    }
}

/// A type as written in a signature.
fn signature_type(t: &ast::DataType) -> PgResult<DataType> {
    let name = t.to_string();
    // A pseudo-type only a function's result may be.
    if name.eq_ignore_ascii_case("void") {
        return Ok(TypeId::Void.into());
    }
    parse_type_name(&name)
}

/// The SQL text of a function body given as a string constant.
fn body_text(e: &ast::Expr) -> PgResult<String> {
    match e {
        ast::Expr::Value(v) => match &v.value {
            ast::Value::DollarQuotedString(d) => Ok(d.value.clone()),
            ast::Value::SingleQuotedString(s) | ast::Value::EscapedStringLiteral(s) => {
                Ok(s.clone())
            }
            _ => Err(PgError::syntax(format!("syntax error at or near \"{e}\""))),
        },
        _ => Err(PgError::syntax(format!("syntax error at or near \"{e}\""))),
    }
}

impl Binder<'_, '_> {
    /// Every schema unqualified function names are looked up in, in order.
    fn function_namespaces(&self, parts: &[String]) -> PgResult<(Vec<Oid>, String)> {
        match parts {
            [name] => {
                let cat = self.ctx.catalog;
                let ns = self
                    .ctx
                    .search_path
                    .iter()
                    .filter_map(|s| cat.namespace_by_name(self.ctx.db_oid, s))
                    .map(|n| n.oid)
                    .collect();
                Ok((ns, name.clone()))
            }
            [schema, name] | [_, schema, name] => {
                let ns = self.relation_schema(schema)?.map(|n| n.oid);
                Ok((ns.into_iter().collect(), name.clone()))
            }
            _ => Err(PgError::syntax(
                "improper qualified name (too many dotted names)",
            )),
        }
    }

    /// The user functions `parts` may name.
    pub(super) fn user_functions_named(&self, parts: &[String]) -> PgResult<Vec<Arc<Function>>> {
        let (namespaces, name) = self.function_namespaces(parts)?;
        let cat = self.ctx.catalog;
        Ok(namespaces
            .iter()
            .flat_map(|ns| cat.functions_named(self.ctx.db_oid, *ns, &name).cloned())
            .collect())
    }

    /// Whether a user function of that name exists (so a call is looked
    /// up among them before the built-ins).
    pub(super) fn has_user_function(&self, parts: &[String]) -> bool {
        !self.ctx.catalog.functions.is_empty()
            && self
                .user_functions_named(parts)
                .is_ok_and(|f| !f.is_empty())
    }

    /// Binds a call of a user function to the best match for `args`
    /// (exact types first, then implicit casts; defaults fill in missing
    /// trailing arguments). None when no function of the name accepts
    /// them, so the built-ins are tried.
    pub(super) fn bind_user_function_call(
        &mut self,
        parts: &[String],
        args: Vec<Expr>,
        variadic_given: bool,
    ) -> PgResult<Option<Expr>> {
        let candidates = self.user_functions_named(parts)?;
        let given: Vec<TypeId> = args.iter().map(Expr::type_id).collect();
        let mut best: Vec<(CandidateRank, Arc<Function>)> = Vec::new();
        for f in candidates {
            let Some(want) = candidate_types(&f, given.len(), variadic_given) else {
                continue;
            };
            let mut rank = CandidateRank {
                exact: 0,
                plain: !(f.variadic && !variadic_given && given.len() >= f.arg_types.len()),
                unknown_as_text: 0,
            };
            let fits = given.iter().zip(&want).all(|(g, want)| {
                if g == want {
                    rank.exact += 1;
                    true
                } else if *g == TypeId::Unknown {
                    rank.unknown_as_text += usize::from(want.is_string());
                    true
                } else {
                    can_cast(*g, *want, CastContext::Implicit)
                }
            });
            if fits {
                best.push((rank, f));
            }
        }
        // As func_select_candidate: most exact matches, then (for the same
        // types) a function that is not variadic, then unknowns as strings.
        let Some(top) = best.iter().map(|(r, _)| *r).max() else {
            return Ok(None);
        };
        best.retain(|(r, _)| *r == top);
        if best.len() > 1 {
            let name = parts.last().expect("a name");
            let types: Vec<&str> = given.iter().map(|t| t.display_name()).collect();
            return Err(PgError::new(
                SqlState::AMBIGUOUS_FUNCTION,
                format!("function {name}({}) is not unique", types.join(", ")),
            )
            .with_hint(
                "Could not choose a best candidate function. You might need to add explicit type casts.",
            ));
        }
        let (rank, f) = best.pop().expect("one left");
        let want = candidate_types(&f, given.len(), variadic_given).expect("a candidate");
        let mut bound = Vec::with_capacity(f.arg_types.len());
        for (a, want) in args.into_iter().zip(want) {
            bound.push(self.coerce(a, want.into(), CastContext::Implicit)?);
        }
        if !rank.plain {
            // The variadic arguments, collected into the declared array.
            let items = bound.split_off(f.arg_types.len() - 1);
            bound.push(self.variadic_array(&f, items));
        }
        // Missing trailing arguments take their defaults.
        let first_default = f.arg_types.len() - f.arg_defaults.len();
        for i in bound.len()..f.arg_types.len() {
            let text = &f.arg_defaults[i - first_default];
            let e = self.bind_default_text(text)?;
            let want = TypeId::from_oid(f.arg_types[i]).unwrap_or(TypeId::Unknown);
            bound.push(self.coerce(e, want.into(), CastContext::Assignment)?);
        }
        if f.return_type == TRIGGER_TYPE_OID {
            return Err(PgError::new(
                SqlState::FEATURE_NOT_SUPPORTED,
                "trigger functions can only be called as triggers",
            ));
        }
        let ret = TypeId::from_oid(f.return_type).unwrap_or(TypeId::Unknown);
        if f.returns_set {
            return Err(PgError::unsupported(format!(
                "set-returning function {} is not supported in expressions yet",
                f.name
            )));
        }
        Ok(Some(Expr::UserFunc(Box::new(UserFuncCall {
            volatility: f.volatility,
            parallel: f.parallel,
            args: bound,
            ret: ret.into(),
            function: f,
        }))))
    }

    /// `ARRAY[items]` of a variadic function's last argument type.
    fn variadic_array(&mut self, f: &Function, items: Vec<Expr>) -> Expr {
        let ty =
            TypeId::from_oid(*f.arg_types.last().expect("variadic")).unwrap_or(TypeId::Unknown);
        let elem = ty.array_element().unwrap_or(TypeId::Unknown);
        if items.iter().all(|a| matches!(a, Expr::Const(..))) {
            let values = items
                .into_iter()
                .map(|a| match a {
                    Expr::Const(v, _) => v,
                    _ => Value::Null,
                })
                .collect();
            return Expr::Const(
                Value::array(ArrayValue::from_items(elem, values)),
                ty.into(),
            );
        }
        Expr::Sys {
            func: crate::expr::SysFunc::ArrayConstruct,
            args: items,
            ty: ty.into(),
        }
    }

    /// A stored default's SQL text, bound with no columns in scope.
    fn bind_default_text(&mut self, text: &str) -> PgResult<Expr> {
        let dialect = sqlparser::dialect::PostgreSqlDialect {};
        let e = sqlparser::parser::Parser::new(&dialect)
            .try_with_sql(text)
            .and_then(|mut p| p.parse_expr())
            .map_err(|e| PgError::syntax(e.to_string()))?;
        self.bind_expr(&e, &Vec::new())
    }

    /// CREATE [OR REPLACE] FUNCTION.
    pub(super) fn bind_create_function(
        &mut self,
        cf: &ast::CreateFunction,
    ) -> PgResult<BoundStatement> {
        let parts = object_name_parts(&cf.name)?;
        let (namespace, name) = self.creation_namespace(&parts)?;
        if namespace == PG_CATALOG_NAMESPACE {
            return Err(PgError::new(
                SqlState::INSUFFICIENT_PRIVILEGE,
                "permission denied for schema pg_catalog",
            ));
        }
        let mut arg_types = Vec::new();
        let mut arg_names = Vec::new();
        let mut arg_defaults = Vec::new();
        let mut variadic = false;
        for a in cf.args.iter().flatten() {
            if matches!(a.mode, Some(ast::ArgMode::Out | ast::ArgMode::InOut)) {
                return Err(PgError::unsupported(
                    "OUT and INOUT arguments are not supported yet",
                ));
            }
            if variadic {
                return Err(invalid_definition(
                    "VARIADIC parameter must be the last input parameter",
                ));
            }
            let ty = signature_type(&a.data_type)?;
            if matches!(a.mode, Some(ast::ArgMode::Variadic)) {
                if !ty.id.is_array() {
                    return Err(invalid_definition("VARIADIC parameter must be an array"));
                }
                variadic = true;
            }
            let arg_name = a.name.as_ref().map(ident_name).unwrap_or_default();
            if !arg_name.is_empty() && arg_names.contains(&arg_name) {
                return Err(invalid_definition(format!(
                    "parameter name \"{arg_name}\" used more than once"
                )));
            }
            match &a.default_expr {
                Some(d) => arg_defaults.push(d.to_string()),
                None if !arg_defaults.is_empty() => {
                    return Err(invalid_definition(
                        "input parameters after one with a default value must also have defaults",
                    ))
                }
                None => {}
            }
            arg_types.push(ty);
            arg_names.push(arg_name);
        }
        let returns_trigger = matches!(&cf.return_type,
            Some(ast::FunctionReturnType::DataType(t)) if t.to_string().eq_ignore_ascii_case("trigger"));
        let (returns_set, ret) = match &cf.return_type {
            // The pseudo-type `trigger` has no TypeId: its oid is kept.
            _ if returns_trigger => (false, TypeId::Void.into()),
            Some(ast::FunctionReturnType::DataType(t)) => (false, signature_type(t)?),
            Some(ast::FunctionReturnType::SetOf(t)) => (true, signature_type(t)?),
            None => return Err(invalid_definition("function result type must be specified")),
        };
        let (language, source) = match (&cf.language, &cf.function_body) {
            (_, Some(ast::CreateFunctionBody::Return(e))) => {
                (FunctionLanguage::Sql, format!("SELECT {e}"))
            }
            (None, Some(_)) => return Err(invalid_definition("no language specified")),
            (Some(l), Some(ast::CreateFunctionBody::AsBeforeOptions { body, .. })) => {
                let lang = match ident_name(l).as_str() {
                    "sql" => FunctionLanguage::Sql,
                    "plpgsql" => FunctionLanguage::Plpgsql,
                    other => {
                        return Err(PgError::new(
                            SqlState::UNDEFINED_OBJECT,
                            format!("language \"{other}\" does not exist"),
                        ))
                    }
                };
                (lang, body_text(body)?)
            }
            (_, None) => return Err(invalid_definition("no function body specified")),
            _ => return Err(PgError::unsupported("this form of function body")),
        };
        for ty in &arg_types {
            check_supported_type(*ty)?;
        }
        check_supported_type(ret)?;
        if !arg_names.iter().any(|n| !n.is_empty()) {
            arg_names.clear();
        }
        let function = Function {
            oid: 0,
            name,
            namespace,
            db_oid: self.ctx.db_oid,
            language,
            volatility: cf.behavior.as_ref().map(volatility_of).unwrap_or_default(),
            parallel: cf.parallel.as_ref().map(parallel_of).unwrap_or_default(),
            strict: matches!(
                cf.called_on_null,
                Some(
                    ast::FunctionCalledOnNull::Strict
                        | ast::FunctionCalledOnNull::ReturnsNullOnNullInput
                )
            ),
            returns_set,
            return_type: if returns_trigger {
                TRIGGER_TYPE_OID
            } else {
                ret.id.oid()
            },
            arg_types: arg_types.iter().map(|t| t.id.oid()).collect(),
            arg_names,
            arg_defaults,
            variadic,
            source,
        };
        if returns_trigger && !arg_types.is_empty() {
            return Err(invalid_definition("trigger functions cannot have declared arguments")
                .with_hint("The arguments of the trigger can be accessed through TG_NARGS and TG_ARGV instead."));
        }
        match language {
            FunctionLanguage::Sql if returns_trigger => {
                return Err(invalid_definition(
                    "SQL functions cannot return type trigger",
                ))
            }
            FunctionLanguage::Sql => self.check_sql_body(&function)?,
            FunctionLanguage::Plpgsql => {
                crate::plpgsql::parse_body(&function.source)?;
            }
        }
        Ok(BoundStatement::CreateFunction {
            function,
            replace: cf.or_replace,
        })
    }

    /// Binds every statement of a SQL body and checks the last one's
    /// result against the return type (PostgreSQL's check_sql_fn_retval).
    fn check_sql_body(&mut self, f: &Function) -> PgResult<()> {
        let statements = bind_sql_body(self.ctx, f)?;
        let ret = TypeId::from_oid(f.return_type).unwrap_or(TypeId::Unknown);
        if ret == TypeId::Void {
            return Ok(());
        }
        let ret_name = format_type(ret.into());
        let mismatch = |detail: String| {
            invalid_definition(format!(
                "return type mismatch in function declared to return {ret_name}"
            ))
            .with_detail(detail)
        };
        let final_not_query = || {
            mismatch(
                "Function's final statement must be SELECT or INSERT/UPDATE/DELETE RETURNING."
                    .into(),
            )
        };
        let Some(last) = statements.last() else {
            return Err(final_not_query());
        };
        let Some(columns) = last.columns() else {
            return Err(final_not_query());
        };
        match columns {
            [c] => {
                let actual = c.ty.id;
                if actual != ret
                    && actual != TypeId::Unknown
                    && !can_cast(actual, ret, CastContext::Assignment)
                {
                    return Err(mismatch(format!(
                        "Actual return type is {}.",
                        format_type(c.ty)
                    )));
                }
                Ok(())
            }
            _ => Err(mismatch(
                "Final statement must return exactly one column.".into(),
            )),
        }
    }

    /// The functions `desc` names: with an argument list exactly that
    /// signature, without one the only function of the name.
    fn resolve_function_desc(
        &self,
        desc: &ast::FunctionDesc,
    ) -> PgResult<Result<Arc<Function>, String>> {
        let parts = object_name_parts(&desc.name)?;
        let name = parts.last().expect("a name").clone();
        let found = self.user_functions_named(&parts)?;
        match &desc.args {
            Some(args) => {
                let mut types = Vec::new();
                for a in args {
                    if matches!(a.mode, Some(ast::ArgMode::Out)) {
                        continue;
                    }
                    types.push(signature_type(&a.data_type)?);
                }
                let oids: Vec<Oid> = types.iter().map(|t| t.id.oid()).collect();
                let shown: Vec<String> = types.iter().map(|t| format_type(*t)).collect();
                Ok(found
                    .into_iter()
                    .find(|f| f.arg_types == oids)
                    .ok_or_else(|| format!("{name}({})", shown.join(", "))))
            }
            None => match found.len() {
                0 => Ok(Err(name)),
                1 => Ok(Ok(found.into_iter().next().expect("one"))),
                _ => Err(PgError::new(
                    SqlState::AMBIGUOUS_FUNCTION,
                    format!("function name \"{name}\" is not unique"),
                )
                .with_hint("Specify the argument list to select the function unambiguously.")),
            },
        }
    }

    fn missing_function(desc: &ast::FunctionDesc, shown: &str) -> PgError {
        if desc.args.is_some() {
            PgError::new(
                SqlState::UNDEFINED_FUNCTION,
                format!("function {shown} does not exist"),
            )
        } else {
            PgError::new(
                SqlState::UNDEFINED_FUNCTION,
                format!("could not find a function named \"{shown}\""),
            )
        }
    }

    /// DROP FUNCTION [IF EXISTS] name[(types)] [, ...].
    pub(super) fn bind_drop_function(
        &mut self,
        df: &ast::DropFunction,
    ) -> PgResult<BoundStatement> {
        if matches!(df.drop_behavior, Some(ast::DropBehavior::Cascade)) {
            // Nothing depends on a function yet: CASCADE drops just it.
        }
        let mut functions = Vec::new();
        let mut missing = Vec::new();
        for desc in &df.func_desc {
            match self.resolve_function_desc(desc)? {
                Ok(f) => functions.push(f),
                Err(shown) if df.if_exists => missing.push(shown),
                Err(shown) => return Err(Self::missing_function(desc, &shown)),
            }
        }
        Ok(BoundStatement::DropFunction { functions, missing })
    }

    /// ALTER FUNCTION name[(types)] action [...]: volatility, strictness and
    /// parallel safety.
    pub(super) fn bind_alter_function(
        &mut self,
        af: &ast::AlterFunction,
    ) -> PgResult<BoundStatement> {
        if af.kind != ast::AlterFunctionKind::Function {
            return Err(PgError::unsupported("ALTER AGGREGATE is not supported"));
        }
        let f = match self.resolve_function_desc(&af.function)? {
            Ok(f) => f,
            Err(shown) => return Err(Self::missing_function(&af.function, &shown)),
        };
        let mut function = (*f).clone();
        let ast::AlterFunctionOperation::Actions { actions, .. } = &af.operation else {
            return Err(PgError::unsupported(
                "ALTER FUNCTION supports only changing its attributes",
            ));
        };
        for a in actions {
            match a {
                ast::AlterFunctionAction::Behavior(b) => function.volatility = volatility_of(b),
                ast::AlterFunctionAction::Parallel(p) => function.parallel = parallel_of(p),
                ast::AlterFunctionAction::CalledOnNull(c) => {
                    function.strict = !matches!(c, ast::FunctionCalledOnNull::CalledOnNullInput)
                }
                // Accepted without effect: no cost model, leakproofness or
                // security context for functions yet.
                ast::AlterFunctionAction::Cost(_)
                | ast::AlterFunctionAction::Rows(_)
                | ast::AlterFunctionAction::Leakproof(_)
                | ast::AlterFunctionAction::Security { .. } => {}
                _ => {
                    return Err(PgError::unsupported(
                        "this ALTER FUNCTION action is not supported",
                    ))
                }
            }
        }
        Ok(BoundStatement::AlterFunction { function })
    }
}

/// Types a function may take or return here.
/// How well a user function fits a call, best highest (field order).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct CandidateRank {
    /// Arguments of exactly the declared type.
    exact: usize,
    /// Called without collecting variadic arguments into the array.
    plain: bool,
    /// Untyped literals going to a string type (PostgreSQL's preferred
    /// category for them).
    unknown_as_text: usize,
}

/// The argument types `f` takes for a call with `n` arguments, None when it
/// takes no such call: its declared types (trailing ones with defaults may
/// be left out), or for a variadic function called without VARIADIC and at
/// least one variadic argument, the declared types before the array and its
/// element type for each argument from there (PostgreSQL's expanded form).
fn candidate_types(f: &Function, n: usize, variadic_given: bool) -> Option<Vec<TypeId>> {
    let declared: Vec<TypeId> = f
        .arg_types
        .iter()
        .map(|t| TypeId::from_oid(*t).unwrap_or(TypeId::Unknown))
        .collect();
    let count = declared.len();
    if f.variadic && !variadic_given && n >= count {
        let elem = declared[count - 1].array_element()?;
        let mut want = declared[..count - 1].to_vec();
        want.resize(n, elem);
        return Some(want);
    }
    if n > count || n + f.arg_defaults.len() < count {
        return None;
    }
    Some(declared)
}

fn check_supported_type(t: DataType) -> PgResult<()> {
    if t.id == TypeId::Unknown {
        return Err(PgError::unsupported("functions of type unknown"));
    }
    Ok(())
}

/// A binder context for `f`'s body: the caller's catalog and settings,
/// the arguments as `$n` with their names.
pub fn function_body_context<'a>(ctx: &BindContext<'a>, f: &Function) -> BindContext<'a> {
    BindContext {
        catalog: ctx.catalog,
        db_oid: ctx.db_oid,
        db_name: ctx.db_name,
        user: ctx.user,
        session_user: ctx.session_user,
        search_path: ctx.search_path.clone(),
        temp_namespace: ctx.temp_namespace,
        param_types: f.arg_types.iter().map(|o| TypeId::from_oid(*o)).collect(),
        server_version: ctx.server_version,
        io: ctx.io,
        system_views: ctx.system_views,
        param_names: f.arg_names.clone(),
    }
}

use super::BindContext;

/// Parses and binds every statement of a SQL function's body.
pub fn bind_sql_body(ctx: &BindContext<'_>, f: &Function) -> PgResult<Vec<BoundStatement>> {
    let mut out = Vec::new();
    for st in crate::parse::split_statements(&f.source) {
        if crate::parse::is_blank(st.text) {
            continue;
        }
        let parsed = crate::parse::parse_statement(&f.source, &st)?;
        let mut body_ctx = function_body_context(ctx, f);
        out.push(crate::bind_statement(&mut body_ctx, &parsed)?);
    }
    Ok(out)
}

impl Binder<'_, '_> {
    /// DO: the block as a transient PL/pgSQL function of no arguments
    /// returning void (PostgreSQL's `inline_code_block`, oid 0), called
    /// once.
    pub(crate) fn bind_do(&mut self, block: crate::do_block::DoBlock) -> PgResult<BoundStatement> {
        let function = Function {
            oid: 0,
            name: "inline_code_block".into(),
            namespace: PG_CATALOG_NAMESPACE,
            db_oid: self.ctx.db_oid,
            language: FunctionLanguage::Plpgsql,
            volatility: Volatility::Volatile,
            parallel: ParallelSafety::Unsafe,
            strict: false,
            returns_set: false,
            return_type: TypeId::Void.oid(),
            arg_types: Vec::new(),
            arg_names: Vec::new(),
            arg_defaults: Vec::new(),
            variadic: false,
            source: block.body,
        };
        let call = Expr::UserFunc(Box::new(UserFuncCall {
            function: Arc::new(function),
            args: Vec::new(),
            ret: TypeId::Void.into(),
            volatility: Volatility::Volatile,
            parallel: ParallelSafety::Unsafe,
        }));
        let plan = crate::plan::Plan::Project {
            input: Box::new(crate::plan::Plan::Values {
                rows: vec![vec![]],
                width: 0,
            }),
            exprs: vec![call],
        };
        Ok(BoundStatement::Do { plan })
    }
}
