//! Expression evaluation over a row.

use std::cmp::Ordering;

use access::relation;
use common::{PgError, PgResult, SqlState};
use sql::expr::{Expr, SysFunc};
use types::cast::{cast_value, CastContext};
use types::io::format_text;
use types::ops::{compare, eval_binary_op, negate, BinaryOp, LikePattern};
use types::{TypeId, Value};

use crate::ops::build;
use crate::ExecEnv;

#[inline]
fn truth(v: &Value) -> Option<bool> {
    match v {
        Value::Bool(b) => Some(*b),
        _ => None,
    }
}

/// Evaluates a boolean qual: NULL counts as false.
#[inline]
pub fn eval_qual(e: &Expr, row: &[Value], env: &mut ExecEnv) -> PgResult<bool> {
    if let Some(b) = fast_comparison(e, row, env.params) {
        return Ok(b);
    }
    Ok(eval(e, row, env)? == Value::Bool(true))
}

/// `column op constant` or `column op $n` (either way round) on fixed-width
/// types, compared in place without cloning either side: the common shape of
/// scan quals, prepared statements' included.
#[inline]
fn fast_comparison<'a>(e: &'a Expr, row: &'a [Value], params: &'a [Value]) -> Option<bool> {
    let Expr::Binary {
        op, left, right, ..
    } = e
    else {
        return None;
    };
    let operand = |x: &'a Expr| -> Option<&'a Value> {
        match x {
            Expr::Column(i, _) => row.get(*i),
            Expr::Const(v, _) => Some(v),
            Expr::Param(i, _) => params.get(*i),
            _ => None,
        }
    };
    if !matches!(
        op,
        BinaryOp::Eq
            | BinaryOp::NotEq
            | BinaryOp::Lt
            | BinaryOp::LtEq
            | BinaryOp::Gt
            | BinaryOp::GtEq
    ) {
        return None;
    }
    let (l, r) = (operand(left)?, operand(right)?);
    if l.is_null() || r.is_null() {
        return Some(false);
    }
    let fixed = matches!(
        l,
        Value::Int2(_)
            | Value::Int4(_)
            | Value::Int8(_)
            | Value::Date(_)
            | Value::Timestamp(_)
            | Value::Timestamptz(_)
            | Value::Oid(_)
            | Value::Bool(_)
    );
    if !fixed || std::mem::discriminant(l) != std::mem::discriminant(r) {
        return None;
    }
    let o = compare(l, r);
    Some(match op {
        BinaryOp::Eq => o == Ordering::Equal,
        BinaryOp::NotEq => o != Ordering::Equal,
        BinaryOp::Lt => o == Ordering::Less,
        BinaryOp::LtEq => o != Ordering::Greater,
        BinaryOp::Gt => o == Ordering::Greater,
        _ => o != Ordering::Less,
    })
}

fn equal(a: &Value, b: &Value) -> PgResult<Option<bool>> {
    if a.is_null() || b.is_null() {
        return Ok(None);
    }
    Ok(Some(compare(a, b) == Ordering::Equal))
}

pub fn eval(e: &Expr, row: &[Value], env: &mut ExecEnv) -> PgResult<Value> {
    Ok(match e {
        Expr::Const(v, _) => v.clone(),
        Expr::Column(i, _) => row[*i].clone(),
        Expr::OuterColumn { depth, index, .. } => {
            let n = env.outer.len();
            env.outer[n - depth][*index].clone()
        }
        Expr::Param(i, _) => env.params.get(*i).cloned().unwrap_or(Value::Null),
        Expr::Binary {
            op, left, right, ..
        } => {
            let l = eval(left, row, env)?;
            if l.is_null() {
                return Ok(Value::Null);
            }
            let r = eval(right, row, env)?;
            if r.is_null() {
                return Ok(Value::Null);
            }
            eval_binary_op(*op, &l, &r)?
        }
        Expr::Neg(x, _) => {
            let v = eval(x, row, env)?;
            if v.is_null() {
                v
            } else {
                negate(&v)?
            }
        }
        Expr::And(v) => {
            let mut null = false;
            for x in v {
                match truth(&eval(x, row, env)?) {
                    Some(false) => return Ok(Value::Bool(false)),
                    None => null = true,
                    Some(true) => {}
                }
            }
            if null {
                Value::Null
            } else {
                Value::Bool(true)
            }
        }
        Expr::Or(v) => {
            let mut null = false;
            for x in v {
                match truth(&eval(x, row, env)?) {
                    Some(true) => return Ok(Value::Bool(true)),
                    None => null = true,
                    Some(false) => {}
                }
            }
            if null {
                Value::Null
            } else {
                Value::Bool(false)
            }
        }
        Expr::Not(x) => match truth(&eval(x, row, env)?) {
            Some(b) => Value::Bool(!b),
            None => Value::Null,
        },
        Expr::IsNull { expr, negated } => Value::Bool(eval(expr, row, env)?.is_null() != *negated),
        Expr::IsBool {
            expr,
            value,
            negated,
        } => {
            let v = truth(&eval(expr, row, env)?);
            Value::Bool((v == Some(*value)) != *negated)
        }
        Expr::IsDistinctFrom {
            left,
            right,
            negated,
        } => {
            let l = eval(left, row, env)?;
            let r = eval(right, row, env)?;
            let distinct = match (l.is_null(), r.is_null()) {
                (true, true) => false,
                (true, false) | (false, true) => true,
                _ => compare(&l, &r) != Ordering::Equal,
            };
            Value::Bool(distinct != *negated)
        }
        Expr::LikeConst {
            expr,
            pattern,
            negated,
        } => match eval(expr, row, env)? {
            Value::Text(s) => Value::Bool(pattern.0.matches(&s) != *negated),
            _ => Value::Null,
        },
        Expr::Like {
            expr,
            pattern,
            case_insensitive,
            negated,
        } => {
            let s = eval(expr, row, env)?;
            let p = eval(pattern, row, env)?;
            match (s, p) {
                (Value::Text(s), Value::Text(p)) => {
                    let pat = LikePattern::compile(&p, None, *case_insensitive)?;
                    Value::Bool(pat.matches(&s) != *negated)
                }
                _ => Value::Null,
            }
        }
        Expr::Cast {
            expr,
            from,
            to,
            explicit,
        } => {
            let v = eval(expr, row, env)?;
            if v.is_null() {
                return Ok(v);
            }
            if to.id.is_reg() && from.is_string() {
                let Value::Text(s) = &v else { unreachable!() };
                return Ok(Value::Oid(reg_catalog(env).input(to.id, s)?));
            }
            if from.is_reg() && to.id.is_string() {
                let Value::Oid(oid) = v else { unreachable!() };
                let name = reg_catalog(env).output(*from, oid);
                return cast_value(
                    Value::Text(name),
                    TypeId::Text,
                    *to,
                    CastContext::Explicit,
                    &env.io,
                );
            }
            let ctx = if *explicit {
                CastContext::Explicit
            } else {
                CastContext::Assignment
            };
            cast_value(v, *from, *to, ctx, &env.io)?
        }
        Expr::Func { func, args } => {
            let mut vals = Vec::with_capacity(args.len());
            for a in args {
                let v = eval(a, row, env)?;
                if v.is_null() && func.0.strict {
                    return Ok(Value::Null);
                }
                vals.push(v);
            }
            func.0.invoke(&vals, &env.io)?
        }
        Expr::Sys {
            func: SysFunc::DatumSize,
            args,
            ..
        } => {
            // pg_column_size of a computed value: its type decides.
            let v = eval(&args[0], row, env)?;
            match v {
                Value::Null => Value::Null,
                v => {
                    let size = types::datum_size::datum_size(&v, args[0].data_type().id);
                    Value::Int4(size as i32)
                }
            }
        }
        Expr::Sys { func, args, ty } => {
            let mut vals = Vec::with_capacity(args.len());
            for a in args {
                vals.push(eval(a, row, env)?);
            }
            let strict_null = vals.iter().any(Value::is_null);
            match eval_sys(*func, &vals, *ty, env)? {
                // A void function's result is not NULL (it prints as an
                // empty string), unless a NULL argument skipped the call.
                Value::Null if ty.id == TypeId::Void && !strict_null => Value::Text(String::new()),
                v => v,
            }
        }
        Expr::Case { whens, else_, .. } => {
            for (cond, result) in whens {
                if truth(&eval(cond, row, env)?) == Some(true) {
                    return eval(result, row, env);
                }
            }
            match else_ {
                Some(x) => eval(x, row, env)?,
                None => Value::Null,
            }
        }
        Expr::Coalesce(v, _) => {
            for x in v {
                let r = eval(x, row, env)?;
                if !r.is_null() {
                    return Ok(r);
                }
            }
            Value::Null
        }
        Expr::NullIf(a, b, _) => {
            let l = eval(a, row, env)?;
            let r = eval(b, row, env)?;
            if equal(&l, &r)? == Some(true) {
                Value::Null
            } else {
                l
            }
        }
        Expr::MinMax { args, greatest, .. } => {
            let mut best = Value::Null;
            for a in args {
                let v = eval(a, row, env)?;
                if v.is_null() {
                    continue;
                }
                let better = best.is_null() || {
                    let o = compare(&v, &best);
                    if *greatest {
                        o == Ordering::Greater
                    } else {
                        o == Ordering::Less
                    }
                };
                if better {
                    best = v;
                }
            }
            best
        }
        Expr::InList {
            expr,
            list,
            negated,
        } => {
            let x = eval(expr, row, env)?;
            if x.is_null() {
                return Ok(Value::Null);
            }
            let mut null = false;
            for item in list {
                let v = eval(item, row, env)?;
                match equal(&x, &v)? {
                    Some(true) => return Ok(Value::Bool(!negated)),
                    None => null = true,
                    _ => {}
                }
            }
            if null {
                Value::Null
            } else {
                Value::Bool(*negated)
            }
        }
        Expr::ArraySubquery(plan, ty) => crate::subplan::value(plan, env, |env| {
            let rows = run_subquery(plan, row, env, None)?;
            let elem = ty.id.array_element().unwrap_or(TypeId::Text);
            let values: Vec<Value> = rows
                .into_iter()
                .map(|r| r.into_iter().next().unwrap_or(Value::Null))
                .collect();
            // A subquery of arrays stacks them into one more dimension.
            Ok(if values.iter().any(|v| matches!(v, Value::Array(_))) {
                stack_arrays(elem, values)?
            } else {
                Value::array(types::array::ArrayValue::from_items(elem, values))
            })
        })?,
        Expr::ArrayCompare {
            expr,
            op,
            array,
            all,
        } => {
            let x = eval(expr, row, env)?;
            let Value::Array(arr) = eval(array, row, env)? else {
                return Ok(Value::Null);
            };
            let elements = &arr.items;
            // PostgreSQL's three-valued ANY/ALL: a NULL comparison makes the
            // result NULL unless another element decides it.
            let mut saw_null = false;
            for e in elements {
                if x.is_null() || e.is_null() {
                    saw_null = true;
                    continue;
                }
                let hit = eval_binary_op(*op, &x, e)? == Value::Bool(true);
                if hit != *all {
                    return Ok(Value::Bool(hit));
                }
            }
            if saw_null {
                Value::Null
            } else {
                Value::Bool(*all)
            }
        }
        Expr::ScalarSubquery(plan, _) => crate::subplan::value(plan, env, |env| {
            let rows = run_subquery(plan, row, env, Some(2))?;
            match rows.len() {
                0 => Ok(Value::Null),
                1 => Ok(rows
                    .into_iter()
                    .next()
                    .unwrap()
                    .into_iter()
                    .next()
                    .unwrap_or(Value::Null)),
                _ => Err(PgError::new(
                    SqlState::CARDINALITY_VIOLATION,
                    "more than one row returned by a subquery used as an expression",
                )),
            }
        })?,
        Expr::Exists { plan, negated } => crate::subplan::value(plan, env, |env| {
            let rows = run_subquery(plan, row, env, Some(1))?;
            Ok(Value::Bool(rows.is_empty() == *negated))
        })?,
        Expr::InSubquery {
            expr,
            plan,
            negated,
        } => {
            let x = eval(expr, row, env)?;
            if let Some(set) =
                crate::subplan::in_set(plan, env, |env| run_subquery(plan, row, env, None))?
            {
                return Ok(set.test(&x, *negated));
            }
            let rows = run_subquery(plan, row, env, None)?;
            if rows.is_empty() {
                return Ok(Value::Bool(*negated));
            }
            if x.is_null() {
                return Ok(Value::Null);
            }
            let mut null = false;
            for r in &rows {
                match equal(&x, &r[0])? {
                    Some(true) => return Ok(Value::Bool(!negated)),
                    None => null = true,
                    _ => {}
                }
            }
            if null {
                Value::Null
            } else {
                Value::Bool(*negated)
            }
        }
        Expr::Agg(_) => {
            return Err(PgError::internal(
                "aggregate evaluated outside an Aggregate",
            ))
        }
        Expr::Window(_) => {
            return Err(PgError::internal(
                "window function evaluated outside a WindowAgg",
            ))
        }
        // The binder lets set-returning calls stand only where a ProjectSet
        // runs them; anywhere else is a placement it did not catch.
        Expr::Srf(call) => {
            return Err(PgError::new(
                SqlState::FEATURE_NOT_SUPPORTED,
                format!(
                    "set-returning function {}() is not allowed in this context",
                    call.name
                ),
            ))
        }
        Expr::RegClassName(oid) => Value::Text(relname(*oid, env)),
        Expr::UserFunc(call) => {
            let args = call
                .args
                .iter()
                .map(|a| eval(a, row, env))
                .collect::<PgResult<Vec<_>>>()?;
            crate::functions::call(call, args, env)?
        }
        Expr::DomainCheck(d) => {
            let v = eval(&d.arg, row, env)?;
            check_domain_value(d, &v, env)?;
            v
        }
        Expr::VariadicSpread(v) => eval_variadic_spread(v, row, env)?,
    })
}

/// `f(fixed..., VARIADIC arr)` of a built-in: the array's elements, each
/// converted by `element`, follow the fixed arguments.
fn eval_variadic_spread(
    call: &sql::expr::VariadicSpread,
    row: &[Value],
    env: &mut ExecEnv,
) -> PgResult<Value> {
    let mut args = call
        .args
        .iter()
        .map(|a| eval(a, row, env))
        .collect::<PgResult<Vec<_>>>()?;
    match args.pop() {
        Some(Value::Array(arr)) => {
            for item in &arr.items {
                args.push(eval(&call.element, std::slice::from_ref(item), env)?);
            }
        }
        _ if call.null_is_empty => {}
        _ => return Ok(Value::Null),
    }
    call.func.0.call(&args, &env.io)
}

fn is_domain(env: &ExecEnv, oid: common::Oid) -> bool {
    env.catalog
        .user_type(oid)
        .is_some_and(|t| t.domain.is_some())
}

/// 23502 for a NULL of a NOT NULL domain, 23514 for the first of the
/// domain's CHECKs `v` fails (a NULL result passes), as domain_check_input.
pub(crate) fn check_domain_value(
    d: &sql::expr::DomainCheck,
    v: &Value,
    env: &mut ExecEnv,
) -> PgResult<()> {
    // A NULL still goes through the CHECKs: one may reject it.
    if v.is_null() && d.not_null {
        return Err(PgError::new(
            SqlState::NOT_NULL_VIOLATION,
            format!("domain {} does not allow null values", d.domain),
        ));
    }
    let row = std::slice::from_ref(v);
    for (name, check) in &d.checks {
        if let Value::Bool(false) = eval(check, row, env)? {
            return Err(PgError::new(
                SqlState::CHECK_VIOLATION,
                format!(
                    "value for domain {} violates check constraint \"{name}\"",
                    d.domain
                ),
            ));
        }
    }
    Ok(())
}

fn run_subquery(
    plan: &sql::Plan,
    row: &[Value],
    env: &mut ExecEnv,
    limit: Option<usize>,
) -> PgResult<Vec<crate::Row>> {
    env.outer.push(row.to_vec());
    let result = (|| {
        let mut op = build(plan, env, None)?;
        let mut out = Vec::new();
        while let Some(r) = op.next(env)? {
            out.push(r);
            if limit.is_some_and(|l| out.len() >= l) {
                break;
            }
        }
        Ok(out)
    })();
    env.outer.pop();
    result
}

fn relname(oid: u32, env: &ExecEnv) -> String {
    env.catalog
        .table_by_oid(oid)
        .map(|t| t.name.clone())
        .unwrap_or_else(|| oid.to_string())
}

/// The session's default search_path (`"$user", public`, where no schema is
/// named after a user): the executor does not carry the session's own yet,
/// so run-time reg* casts resolve and print names as with the default.
const DEFAULT_SEARCH_PATH: &[&str] = &["public"];

/// reg* lookups against the statement's catalog.
pub fn reg_catalog<'a>(env: &'a ExecEnv) -> sql::reg::RegCatalog<'a> {
    sql::reg::RegCatalog {
        catalog: env.catalog,
        db_oid: env.db_oid,
        search_path: DEFAULT_SEARCH_PATH.to_vec(),
        system_views: Some(&crate::system_views::Registry),
    }
}

/// The storage of the table or index `v` names (sizes, file paths).
/// Bytes of a relation's own storage with its TOAST relation (every fork),
/// and of its indexes; None when `oid` has no storage.
fn relation_sizes(oid: common::Oid, env: &ExecEnv) -> PgResult<Option<(i64, i64)>> {
    let pool = env.pool;
    if let Some(i) = env.catalog.indexes.get(&oid) {
        return Ok(Some((relation::total_size(pool, i.locator())?, 0)));
    }
    let Some(t) = env.catalog.table_by_oid(oid) else {
        return Ok(None);
    };
    let mut table = relation::total_size(pool, t.locator())?;
    if let Some(toast) = t.toast_locator() {
        table += relation::total_size(pool, toast)?;
    }
    let mut indexes = 0;
    for i in env.catalog.indexes_of(oid) {
        indexes += relation::total_size(pool, i.locator())?;
    }
    Ok(Some((table, indexes)))
}

fn storage_of(v: &Value, env: &ExecEnv) -> Option<common::RelFileLocator> {
    match v {
        Value::Oid(o) => env
            .catalog
            .table_by_oid(*o)
            .map(|t| t.locator())
            .or_else(|| env.catalog.indexes.get(o).map(|i| i.locator()))
            .or_else(|| {
                // A TOAST relation, by the oid pg_class.reltoastrelid shows.
                env.catalog
                    .tables
                    .values()
                    .find(|t| t.toast.is_some_and(|r| r.oid == *o))
                    .and_then(|t| t.toast_locator())
            }),
        _ => None,
    }
}

/// The comment on an object (`classoid` None: of any class), as
/// pg_description holds it.
fn description(
    env: &ExecEnv,
    objoid: common::Oid,
    classoid: Option<common::Oid>,
    objsubid: i32,
) -> Option<String> {
    use crate::system_views::{PG_EXTENSION_CLASS, PLPGSQL_COMMENT, PLPGSQL_EXTENSION};
    if objoid == PLPGSQL_EXTENSION
        && objsubid == 0
        && classoid.is_none_or(|c| c == PG_EXTENSION_CLASS)
    {
        return Some(PLPGSQL_COMMENT.into());
    }
    let comments = &env.catalog.comments;
    match classoid {
        Some(c) => comments
            .get(&catalog::ObjectAddress::new(c, objoid, objsubid))
            .cloned(),
        None => comments
            .iter()
            .find(|(a, _)| a.objoid == objoid && a.objsubid == objsubid)
            .map(|(_, d)| d.clone()),
    }
}

fn eval_sys(
    func: SysFunc,
    args: &[Value],
    ty: types::DataType,
    env: &mut ExecEnv,
) -> PgResult<Value> {
    let text_arg = |i: usize| -> Option<String> {
        match args.get(i) {
            Some(Value::Text(s)) => Some(s.clone()),
            _ => None,
        }
    };
    Ok(match func {
        SysFunc::CurrentSetting => {
            let Some(name) = text_arg(0) else {
                return Ok(Value::Null);
            };
            let missing_ok = matches!(args.get(1), Some(Value::Bool(true)));
            match env.hooks.current_setting(&name, missing_ok)? {
                Some(s) => Value::Text(s),
                None => Value::Null,
            }
        }
        SysFunc::SetConfig => {
            let (Some(name), Some(value)) = (text_arg(0), text_arg(1)) else {
                return Err(PgError::new(
                    SqlState::NULL_VALUE_NOT_ALLOWED,
                    "SET requires parameter name",
                ));
            };
            let local = matches!(args.get(2), Some(Value::Bool(true)));
            Value::Text(env.hooks.set_config(&name, &value, local)?)
        }
        SysFunc::TotalRelationSize | SysFunc::TableSize | SysFunc::IndexesSize => {
            let Value::Oid(oid) = args[0] else {
                return Ok(Value::Null);
            };
            match relation_sizes(oid, env)? {
                Some((table, indexes)) => Value::Int8(match func {
                    SysFunc::TableSize => table,
                    SysFunc::IndexesSize => indexes,
                    _ => table + indexes,
                }),
                None if env.catalog.views.contains_key(&oid) => Value::Int8(0),
                None => Value::Null,
            }
        }
        SysFunc::RelationSize => {
            let Some(rel) = storage_of(&args[0], env) else {
                // A view has no storage: 0 bytes, as in PostgreSQL (\dv+).
                return Ok(match &args[0] {
                    Value::Oid(o) if env.catalog.views.contains_key(o) => Value::Int8(0),
                    _ => Value::Null,
                });
            };
            let fork = match text_arg(1) {
                None => relation::ForkNumber::Main,
                Some(name) => match relation::fork_by_name(&name) {
                    Some(f) => f,
                    None => return Err(PgError::new(SqlState::INVALID_PARAMETER_VALUE, "invalid fork name").with_hint(format!("Valid fork names are \"main\", \"fsm\", \"vm\", and \"init\"; got \"{name}\"."))),
                },
            };
            Value::Int8(relation::fork_size(env.pool, rel, fork)?)
        }
        SysFunc::RelationFilepath => match storage_of(&args[0], env) {
            Some(rel) => Value::Text(relation::filepath(rel)),
            None => Value::Null,
        },
        SysFunc::NextVal
        | SysFunc::CurrVal
        | SysFunc::SetVal
        | SysFunc::LastVal
        | SysFunc::GetSerialSequence => return crate::sequence_funcs::eval(func, args, env),
        SysFunc::RelationFilenode => match storage_of(&args[0], env) {
            Some(rel) => Value::Oid(rel.rel_number),
            None => Value::Null,
        },
        SysFunc::BackendPid => Value::Int4(env.hooks.backend_pid()),
        SysFunc::ReloadConf => Value::Bool(env.hooks.reload_conf()),
        SysFunc::CancelBackend | SysFunc::TerminateBackend => match &args[0] {
            Value::Int4(pid) => {
                let terminate = matches!(func, SysFunc::TerminateBackend);
                Value::Bool(env.hooks.signal_backend(*pid, terminate)?)
            }
            _ => Value::Null,
        },
        SysFunc::CurrentWalLsn => Value::Text(wal::format_lsn(env.tm.wal().write_lsn())),
        SysFunc::CurrentWalInsertLsn => Value::Text(wal::format_lsn(env.tm.wal().insert_lsn())),
        SysFunc::CurrentWalFlushLsn => Value::Text(wal::format_lsn(env.tm.wal().flush_lsn())),
        SysFunc::WalfileName => {
            let Some(text) = text_arg(0) else {
                return Ok(Value::Null);
            };
            let lsn = wal::parse_lsn(text.trim()).ok_or_else(|| {
                PgError::new(
                    SqlState::INVALID_TEXT_REPRESENTATION,
                    format!("invalid input syntax for type pg_lsn: \"{text}\""),
                )
            })?;
            // As PostgreSQL: an LSN on a boundary belongs to the segment before.
            Value::Text(wal::segment_file_name(wal::segment_of(
                lsn.saturating_sub(1),
            )))
        }
        SysFunc::TableIsVisible => Value::Bool(true),
        // Evaluated with its argument's type, in `eval`.
        SysFunc::DatumSize => Value::Null,
        SysFunc::FormatType => match &args[0] {
            // A domain prints as itself, not as the base type it resolves to.
            Value::Oid(o) if *o >= 16384 && is_domain(env, *o) => Value::Text(
                env.catalog
                    .user_type(*o)
                    .map_or_else(String::new, |t| t.name.clone()),
            ),
            Value::Oid(o) => match TypeId::from_oid(*o) {
                Some(t) => {
                    let typmod = match args.get(1) {
                        Some(Value::Int4(m)) => *m,
                        _ => -1,
                    };
                    Value::Text(sql::bind::format_type(types::DataType::with_typmod(
                        t, typmod,
                    )))
                }
                None => Value::Text("???".into()),
            },
            // format_type(NULL, ...) is NULL; the typmod may be NULL.
            _ => Value::Null,
        },
        SysFunc::IsolationTestSessionIsBlocked => match (&args[0], &args[1]) {
            (Value::Int4(pid), Value::Array(pids)) => {
                let by: Vec<i32> = pids
                    .items
                    .iter()
                    .filter_map(|v| v.as_i64().map(|p| p as i32))
                    .collect();
                Value::Bool(env.hooks.is_backend_blocked(*pid, &by))
            }
            _ => Value::Null,
        },
        SysFunc::BlockingPids => match &args[0] {
            Value::Int4(pid) => Value::array(types::array::ArrayValue::from_items(
                TypeId::Int4,
                env.hooks
                    .blocking_pids(*pid)
                    .into_iter()
                    .map(Value::Int4)
                    .collect(),
            )),
            _ => Value::Null,
        },
        SysFunc::Advisory(call) => {
            let key = match args {
                [Value::Int8(k)] => txn::lock::AdvisoryKey::BigInt(*k),
                [Value::Int4(a), Value::Int4(b)] => txn::lock::AdvisoryKey::IntPair(*a, *b),
                // Strict: a NULL key gives NULL.
                _ => return Ok(Value::Null),
            };
            let done = env.hooks.advisory_lock(call, key)?;
            match call.op {
                sql::expr::AdvisoryOp::Lock => Value::Null,
                _ => Value::Bool(done),
            }
        }
        SysFunc::AdvisoryUnlockAll => {
            env.hooks.advisory_unlock_all();
            Value::Null
        }
        SysFunc::Notify => {
            // Not strict: a NULL channel is an empty one, a NULL payload none.
            let channel = text_arg(0).unwrap_or_default();
            let payload = text_arg(1).unwrap_or_default();
            env.hooks.notify(&channel, &payload)?;
            Value::Null
        }
        SysFunc::NotificationQueueUsage => Value::Float8(env.hooks.notification_queue_usage()),
        SysFunc::Grouping => {
            return Err(PgError::internal(
                "GROUPING evaluated outside its aggregate",
            ))
        }
        SysFunc::PgSleep => {
            if let Value::Float8(secs) = args[0] {
                let end =
                    std::time::Instant::now() + std::time::Duration::from_secs_f64(secs.max(0.0));
                while std::time::Instant::now() < end {
                    env.check_cancel()?;
                    if env.timed_out() {
                        return Err(PgError::new(
                            SqlState::QUERY_CANCELED,
                            "canceling statement due to statement timeout",
                        ));
                    }
                    std::thread::sleep(
                        std::time::Duration::from_millis(10).min(end - std::time::Instant::now()),
                    );
                }
            }
            Value::Null
        }
        SysFunc::Prewarm => prewarm(args, env)?,
        SysFunc::GetIndexdef => match (&args[0], args.get(1)) {
            (Value::Oid(o), column) => {
                let column = match column {
                    Some(Value::Int4(c)) => *c,
                    _ => 0,
                };
                crate::system_views::indexes::indexdef(env.catalog, *o, column)
                    .map_or(Value::Null, Value::Text)
            }
            _ => Value::Null,
        },
        SysFunc::GetConstraintdef => match &args[0] {
            Value::Oid(o) => {
                let pretty = matches!(args.get(1), Some(Value::Bool(true)));
                crate::system_views::indexes::constraintdef(env.catalog, *o, pretty)
                    .map_or(Value::Null, Value::Text)
            }
            _ => Value::Null,
        },
        SysFunc::GetPartitionConstraintdef => match &args[0] {
            Value::Oid(o) => catalog::partition::partition_constraint_sql(env.catalog, *o)
                .map_or(Value::Null, Value::Text),
            _ => Value::Null,
        },
        SysFunc::GetPartkeydef => match &args[0] {
            Value::Oid(o) => env
                .catalog
                .tables
                .get(o)
                .and_then(|t| {
                    let key = t.partition_key.as_deref()?;
                    Some(Value::Text(catalog::partition::partkey_sql(key, t)))
                })
                .unwrap_or(Value::Null),
            _ => Value::Null,
        },
        SysFunc::GetTriggerdef => match &args[0] {
            Value::Oid(o) => {
                let pretty = matches!(args.get(1), Some(Value::Bool(true)));
                crate::system_views::triggers::triggerdef(env.catalog, *o, pretty)
                    .map_or(Value::Null, Value::Text)
            }
            _ => Value::Null,
        },
        SysFunc::BtIndexCheck(parent) => match &args[0] {
            Value::Oid(o) => {
                crate::system_views::indexes::bt_index_check(env, *o, parent)?;
                Value::Null
            }
            _ => Value::Null,
        },
        SysFunc::GetUserById => match &args[0] {
            Value::Oid(o) => Value::Text(match sql::reg::role_name(env.catalog, *o) {
                Some(name) => name.to_string(),
                None => format!("unknown (OID={o})"),
            }),
            _ => Value::Null,
        },
        SysFunc::TypeIsVisible => match &args[0] {
            Value::Oid(o) => Value::Bool(TypeId::from_oid(*o).is_some()),
            _ => Value::Null,
        },
        SysFunc::FunctionIsVisible => match &args[0] {
            Value::Oid(o) => Value::Bool(types::functions::builtin_by_oid(*o).is_some()),
            _ => Value::Null,
        },
        SysFunc::RelationIsPublishable => {
            Value::Bool(matches!(&args[0], Value::Oid(o) if env.catalog.table_by_oid(*o).is_some()))
        }
        SysFunc::ToReg(ty) => match text_arg(0) {
            Some(name) => match reg_catalog(env).input(ty, &name) {
                Ok(oid) => Value::Oid(oid),
                // Only a name naming nothing is NULL; bad syntax still errors.
                Err(e) if e.code.0.starts_with("42") || e.code == SqlState::INVALID_SCHEMA_NAME => {
                    Value::Null
                }
                Err(e) => return Err(e),
            },
            None => Value::Null,
        },
        SysFunc::ArraySubscript => match &args[0] {
            Value::Array(a) => types::array::ops::subscript(a, &args[1..]),
            _ => Value::Null,
        },
        SysFunc::ArraySlice(shape) => match &args[0] {
            Value::Array(a) => {
                let mut rest = args[1..].iter();
                let mut subs = Vec::with_capacity(shape.count as usize);
                for i in 0..shape.count {
                    let bit = 1u8 << i;
                    let mut next = || rest.next().cloned().unwrap_or(Value::Null);
                    subs.push(if shape.slices & bit == 0 {
                        types::array::ops::Subscript::Index(next())
                    } else {
                        let lo = (shape.lowers & bit != 0).then(&mut next);
                        let hi = (shape.uppers & bit != 0).then(&mut next);
                        types::array::ops::Subscript::Slice(lo, hi)
                    });
                }
                types::array::ops::slice(a, &subs).map_or(Value::Null, Value::array)
            }
            _ => Value::Null,
        },
        SysFunc::ArrayConstruct => Value::array(types::array::ArrayValue::from_items(
            ty.id.array_element().unwrap_or(TypeId::Text),
            args.to_vec(),
        )),
        SysFunc::SearchPath | SysFunc::SearchBreadth | SysFunc::CycleMark => {
            crate::search_cycle::eval(func, args)
        }
        SysFunc::ArrayConstructNested => {
            stack_arrays(ty.id.array_element().unwrap_or(TypeId::Text), args.to_vec())?
        }
        SysFunc::ObjDescription | SysFunc::ShobjDescription | SysFunc::ColDescription => {
            let Some(Value::Oid(objoid)) = args.first() else {
                return Ok(Value::Null);
            };
            let (classoid, objsubid) = match (func, args.get(1)) {
                (SysFunc::ColDescription, Some(Value::Int4(n))) => {
                    (Some(catalog::comments::PG_CLASS_OID), *n)
                }
                // obj_description(oid): any class (deprecated in PostgreSQL).
                (SysFunc::ObjDescription, None) => (None, 0),
                (_, Some(Value::Text(class))) => {
                    use catalog::comments::{PG_AUTHID_OID, PG_DATABASE_OID};
                    // The catalogs comments are on, whether or not a view
                    // by that name exists (pg_authid has none).
                    let oid = match class.as_str() {
                        "pg_class" | "pg_catalog.pg_class" => catalog::comments::PG_CLASS_OID,
                        "pg_namespace" | "pg_catalog.pg_namespace" => {
                            catalog::comments::PG_NAMESPACE_OID
                        }
                        "pg_database" | "pg_catalog.pg_database" => PG_DATABASE_OID,
                        "pg_authid" | "pg_catalog.pg_authid" => PG_AUTHID_OID,
                        _ => reg_catalog(env).input(TypeId::RegClass, class)?,
                    };
                    (Some(oid), 0)
                }
                _ => return Ok(Value::Null),
            };
            description(env, *objoid, classoid, objsubid).map_or(Value::Null, Value::Text)
        }
        SysFunc::GetRuledef => Value::Null,
        SysFunc::GetViewdef | SysFunc::GetViewdefByName => {
            let oid = match &args[0] {
                Value::Oid(o) => *o,
                Value::Text(name) => reg_catalog(env).input(TypeId::RegClass, name)?,
                _ => return Ok(Value::Null),
            };
            let pretty = matches!(args.get(1), Some(Value::Bool(true)));
            // A relation that is not a view (or no relation) is NULL.
            env.catalog
                .views
                .get(&oid)
                .and_then(|v| sql::viewdef::view_definition(env.catalog, v, pretty))
                .map_or(Value::Null, Value::Text)
        }
        SysFunc::StatLwlockReset => {
            storage::lwlock::reset_stats();
            Value::Null
        }
    })
}

/// Text output of a value (for messages like "Failing row contains").
pub fn value_to_text(v: &Value, ty: TypeId, io: &types::IoSettings) -> String {
    if v.is_null() {
        return "null".into();
    }
    let mut s = String::new();
    format_text(v, ty, io, &mut s);
    s
}

/// Applies `BinaryOp` folding helper for aggregates.
pub fn add(a: &Value, b: &Value) -> PgResult<Value> {
    eval_binary_op(BinaryOp::Add, a, b)
}

/// pg_prewarm: loads blocks of a relation into the OS cache ('prefetch'),
/// reads them ('read') or into shared buffers ('buffer'). Returns the count.
/// An int4[] value as text.
/// Arrays (of one shape) stacked into an array of one more dimension, as
/// ARRAY[a, b], ARRAY(subquery of arrays) and array_agg of arrays build
/// them; NULL arrays are skipped by ARRAY[...] (PostgreSQL's ExecEvalArrayExpr).
pub(crate) fn stack_arrays(elem: TypeId, values: Vec<Value>) -> PgResult<Value> {
    use types::array::{ArrayValue, Dim};
    let mismatch = || {
        PgError::new(
            SqlState::ARRAY_SUBSCRIPT_ERROR,
            "multidimensional arrays must have array expressions with matching dimensions",
        )
    };
    let mut shape: Option<Vec<Dim>> = None;
    let mut items = Vec::new();
    let mut count = 0;
    let mut saw_empty = false;
    for v in &values {
        let Value::Array(a) = v else { continue };
        if a.is_empty() {
            saw_empty = true;
            if shape.is_some() {
                return Err(mismatch());
            }
            continue;
        }
        if saw_empty {
            return Err(mismatch());
        }
        match &shape {
            None => shape = Some(a.dims.clone()),
            Some(s) if *s != a.dims => return Err(mismatch()),
            Some(_) => {}
        }
        items.extend(a.items.iter().cloned());
        count += 1;
    }
    let Some(inner) = shape else {
        return Ok(Value::array(ArrayValue::empty(elem)));
    };
    if inner.len() + 1 > types::array::MAX_DIMS {
        return Err(PgError::new(
            SqlState::PROGRAM_LIMIT_EXCEEDED,
            format!(
                "number of array dimensions ({}) exceeds the maximum allowed ({})",
                inner.len() + 1,
                types::array::MAX_DIMS
            ),
        ));
    }
    let mut dims = vec![Dim {
        len: count,
        lower: 1,
    }];
    dims.extend(inner);
    Ok(Value::array(ArrayValue::with_dims(elem, dims, items)?))
}

fn prewarm(args: &[Value], env: &mut ExecEnv) -> PgResult<Value> {
    let Some(rel) = storage_of(&args[0], env) else {
        return Err(PgError::new(
            SqlState::NULL_VALUE_NOT_ALLOWED,
            "relation cannot be null",
        ));
    };
    let text = |i: usize, d: &str| match args.get(i) {
        Some(Value::Text(s)) => s.clone(),
        _ => d.to_string(),
    };
    let mode = text(1, "buffer");
    let fork_name = text(2, "main");
    let Some(fork) = relation::fork_by_name(&fork_name) else {
        return Err(PgError::new(
            SqlState::INVALID_PARAMETER_VALUE,
            format!("invalid fork name \"{fork_name}\""),
        ));
    };
    let nblocks = i64::from(relation::nblocks(env.pool, rel, fork)?);
    let bound = |i: usize, d: i64| -> PgResult<i64> {
        match args.get(i) {
            Some(Value::Int8(b)) => {
                if *b < 0 || *b >= nblocks {
                    Err(PgError::new(
                        SqlState::INVALID_PARAMETER_VALUE,
                        format!(
                            "starting block number must be between 0 and {}",
                            nblocks - 1
                        ),
                    ))
                } else {
                    Ok(*b)
                }
            }
            _ => Ok(d),
        }
    };
    if nblocks == 0 {
        return Ok(Value::Int8(0));
    }
    let first = bound(3, 0)?;
    let last = bound(4, nblocks - 1)?;
    if first > last {
        return Ok(Value::Int8(0));
    }
    let mode = relation::PrewarmMode::parse(&mode)?;
    let count = relation::prewarm(
        env.pool,
        rel,
        fork,
        mode,
        (first as u32, last as u32),
        &|| env.check_cancel(),
    )?;
    Ok(Value::Int8(count))
}
