//! Calls of user-defined functions (`sql::expr::UserFuncCall`).
//!
//! A LANGUAGE sql function runs its body's statements in order and
//! returns the last one's first column of its first row (NULL when it
//! has none), cast to the declared type. A LANGUAGE plpgsql function is
//! interpreted (`plpgsql.rs`). Either way each statement of the body is
//! bound with the session's binder (arguments and variables as `$n`
//! parameters that also answer to their names), planned by the session's
//! planner, and run in a nested `ExecEnv` under the calling statement's
//! transaction with a command id of its own, so it sees the writes of
//! the statements before it, as PostgreSQL's CommandCounterIncrement
//! between a function's statements does.
//!
//! Bound bodies and statements are kept in `ExecEnv::functions` for the
//! rest of the calling statement (a function called per row is bound
//! once), keyed by the function's oid: the catalog version cannot change
//! within a statement.

mod plpgsql;

use std::collections::HashMap;
use std::sync::Arc;

use catalog::functions::{Function, FunctionLanguage, Volatility};
use common::{Oid, PgError, PgResult, SqlState};
use sql::expr::UserFuncCall;
use sql::plan::{BoundStatement, Plan};
use txn::lock::LockTag;
use types::cast::{cast_value, CastContext};
use types::{DataType, TypeId, Value};

use crate::{ExecEnv, Row};

/// Nesting levels of `common::stack_depth` one call counts for: a call
/// binds, plans and runs whole statements on the thread's stack.
const LEVELS_PER_CALL: u32 = 48;

/// A PL/pgSQL statement bound with these variables (names and types) in
/// scope: a trigger function's NEW and OLD columns differ by table.
type ScopedStatement = (Vec<(String, DataType)>, Arc<BoundStatement>);

/// What the calling statement has bound of the functions it called.
#[derive(Default)]
pub struct FunctionCache {
    sql_bodies: HashMap<Oid, Arc<Vec<BoundStatement>>>,
    plpgsql_bodies: HashMap<Oid, Arc<sql::plpgsql::Block>>,
    /// A PL/pgSQL function's statements and expressions, by function and
    /// where the text lies in its cached body, for each list of variables
    /// in scope there (record variables' columns may differ by row).
    plpgsql_statements: HashMap<(Oid, usize), Vec<ScopedStatement>>,
    /// Triggers' WHEN conditions, bound, by trigger oid.
    pub(crate) trigger_conditions: HashMap<Oid, Arc<BoundStatement>>,
}

/// One firing of a trigger: what its function sees as NEW, OLD and the
/// TG_ variables.
pub(crate) struct TriggerCall<'a> {
    pub trigger: &'a catalog::triggers::Trigger,
    pub table: &'a catalog::Table,
    pub schema: &'a str,
    /// INSERT, UPDATE, DELETE or TRUNCATE.
    pub op: &'static str,
    pub old: Option<&'a [Value]>,
    pub new: Option<&'a [Value]>,
}

impl TriggerCall<'_> {
    /// The function's variables: NEW and OLD (records, with a field per
    /// column; NULL when there is no such row) and the TG_ ones.
    fn variables(&self) -> Vec<(String, DataType, Value)> {
        let t = self.trigger;
        let text = |s: &str| Value::Text(s.to_string());
        let mut vars = Vec::new();
        for (name, row) in [("new", self.new), ("old", self.old)] {
            let present = row.is_some() && t.is_row();
            let marker = if present {
                Value::Bool(true)
            } else {
                Value::Null
            };
            vars.push((name.to_string(), DataType::new(TypeId::Unknown), marker));
            // An absent row's fields read as NULL, as in PostgreSQL 11 on.
            for (i, c) in self.table.columns.iter().enumerate() {
                let v = match (row, present) {
                    (Some(row), true) => row.get(i).cloned().unwrap_or(Value::Null),
                    _ => Value::Null,
                };
                vars.push((format!("{name}.{}", c.name), c.data_type(), v));
            }
        }
        let argv = types::array::ArrayValue {
            elem: TypeId::Text,
            dims: if t.args.is_empty() {
                Vec::new()
            } else {
                vec![types::array::Dim {
                    len: t.args.len() as i32,
                    lower: 0,
                }]
            },
            items: t.args.iter().map(|a| text(a)).collect(),
        };
        let when = if t.is_before() { "BEFORE" } else { "AFTER" };
        let level = if t.is_row() { "ROW" } else { "STATEMENT" };
        let name_type = DataType::new(TypeId::Name);
        let text_type = DataType::new(TypeId::Text);
        vars.extend([
            ("tg_name".to_string(), name_type, text(&t.name)),
            ("tg_when".to_string(), text_type, text(when)),
            ("tg_level".to_string(), text_type, text(level)),
            ("tg_op".to_string(), text_type, text(self.op)),
            (
                "tg_relid".to_string(),
                DataType::new(TypeId::Oid),
                Value::Oid(self.table.oid),
            ),
            ("tg_relname".to_string(), name_type, text(&self.table.name)),
            (
                "tg_table_name".to_string(),
                name_type,
                text(&self.table.name),
            ),
            ("tg_table_schema".to_string(), name_type, text(self.schema)),
            (
                "tg_nargs".to_string(),
                DataType::new(TypeId::Int4),
                Value::Int4(t.args.len() as i32),
            ),
            (
                "tg_argv".to_string(),
                DataType::new(TypeId::TextArray),
                Value::array(argv),
            ),
        ]);
        vars
    }
}

/// Runs trigger function `f` for one firing: the row it returned, or None
/// (RETURN NULL). Only PL/pgSQL functions return trigger.
pub(crate) fn call_trigger(
    f: &Arc<Function>,
    call: &TriggerCall,
    env: &mut ExecEnv,
) -> PgResult<Option<Row>> {
    let _depth = common::stack_depth::enter_levels(LEVELS_PER_CALL)?;
    plpgsql::run_trigger(f, call, env).map_err(|e| add_context(e, f))
}

/// Evaluates a call whose arguments are evaluated already.
pub(crate) fn call(call: &UserFuncCall, args: Vec<Value>, env: &mut ExecEnv) -> PgResult<Value> {
    let f = &call.function;
    if f.strict && args.iter().any(Value::is_null) {
        return Ok(Value::Null);
    }
    let _depth = common::stack_depth::enter_levels(LEVELS_PER_CALL)?;
    let v = match f.language {
        FunctionLanguage::Sql => run_sql_function(f, &args, env),
        FunctionLanguage::Plpgsql => plpgsql::run(f, args, env),
    }
    .map_err(|e| add_context(e, f))?;
    to_type(v.0, v.1, call.ret, env)
}

/// PostgreSQL's CONTEXT line for an error inside a function.
fn add_context(mut e: PgError, f: &Function) -> PgError {
    let kind = match f.language {
        FunctionLanguage::Sql => "SQL function",
        FunctionLanguage::Plpgsql => "PL/pgSQL function",
    };
    let line = format!("{kind} \"{}\"", f.name);
    e.context = Some(match e.context.take() {
        Some(c) => format!("{c}\n{line}").into(),
        None => line.into(),
    });
    e
}

/// `v`, a value of type `from`, as a value of `ty`.
pub(crate) fn to_type(v: Value, from: TypeId, ty: DataType, env: &ExecEnv) -> PgResult<Value> {
    if v.is_null() {
        return Ok(Value::Null);
    }
    if from == ty.id || from == TypeId::Unknown && ty.id == TypeId::Text {
        return Ok(v);
    }
    cast_value(v, from, ty, CastContext::Assignment, &env.io)
}

fn run_sql_function(
    f: &Arc<Function>,
    args: &[Value],
    env: &mut ExecEnv,
) -> PgResult<(Value, TypeId)> {
    let body = match env.functions.sql_bodies.get(&f.oid) {
        Some(b) => b.clone(),
        None => {
            let bound = with_function_binder(env, f, &f.arg_names, &arg_types(f), |ctx| {
                sql::bind::functions::bind_sql_body(ctx, f)
            })?;
            let planned: Vec<BoundStatement> = bound
                .into_iter()
                .map(|s| env.hooks.plan_function_statement(s, env.catalog))
                .collect();
            let b = Arc::new(planned);
            env.functions.sql_bodies.insert(f.oid, b.clone());
            b
        }
    };
    let mut result = (Value::Null, TypeId::Unknown);
    for (i, stmt) in body.iter().enumerate() {
        let last = i + 1 == body.len();
        let (_, rows) = run_statement(stmt, args, env, last.then_some(1), f.volatility)?;
        if last {
            let ty = stmt
                .columns()
                .and_then(|c| c.first())
                .map_or(TypeId::Unknown, |c| c.ty.id);
            result.1 = ty;
            result.0 = rows
                .into_iter()
                .next()
                .and_then(|r| r.into_iter().next())
                .unwrap_or(Value::Null);
        }
    }
    Ok(result)
}

fn arg_types(f: &Function) -> Vec<Option<TypeId>> {
    f.arg_types.iter().map(|o| TypeId::from_oid(*o)).collect()
}

/// Runs `bind` with a binder context for a function body: the statement's
/// catalog, the session's search path, `names` typed `types` as `$n`.
pub(crate) fn with_function_binder<R>(
    env: &ExecEnv,
    _f: &Function,
    names: &[String],
    types: &[Option<TypeId>],
    bind: impl FnOnce(&mut sql::BindContext<'_>) -> R,
) -> R {
    let user = env.hooks.current_user();
    let session_user = env.hooks.session_user();
    let mut ctx = sql::BindContext {
        catalog: env.catalog,
        db_oid: env.db_oid,
        db_name: env.db_name,
        user: &user,
        session_user: &session_user,
        search_path: env.hooks.search_path(),
        temp_namespace: None,
        param_types: types.to_vec(),
        server_version: "",
        io: env.io,
        system_views: Some(&crate::system_views::Registry),
        param_names: names.to_vec(),
    };
    bind(&mut ctx)
}

/// Runs one statement of a function body with `params` as its `$n`;
/// returns the rows it processed and the rows it returned (at most
/// `limit`).
pub(crate) fn run_statement(
    stmt: &BoundStatement,
    params: &[Value],
    env: &mut ExecEnv,
    limit: Option<usize>,
    volatility: Volatility,
) -> PgResult<(u64, Vec<Row>)> {
    if sql::plan::locks::changes_catalog(stmt) {
        return Err(PgError::unsupported(
            "statements that change the catalog are not supported in functions yet",
        ));
    }
    for (tag, mode) in sql::plan::locks::statement_locks(stmt, env.db_oid) {
        if let LockTag::Relation { rel, .. } = tag {
            env.hooks.lock_relation(rel, mode)?;
        }
    }
    let writes = matches!(
        stmt,
        BoundStatement::Insert { .. }
            | BoundStatement::Update { .. }
            | BoundStatement::Delete { .. }
            | BoundStatement::WithModifying { .. }
    );
    // A VOLATILE function's statements each see the writes before them
    // (a new command id); a STABLE or IMMUTABLE one's see the calling
    // statement's snapshot and may not write, as in PostgreSQL.
    let (cid, command_id) = if volatility == Volatility::Volatile {
        let cid = env.hooks.next_command_id();
        (cid, cid)
    } else {
        if writes {
            return Err(PgError::new(
                SqlState::FEATURE_NOT_SUPPORTED,
                format!(
                    "{} is not allowed in a non-volatile function",
                    command_name(stmt)
                ),
            ));
        }
        (env.cid, env.snapshot.command_id)
    };
    if writes && env.xid == 0 {
        return Err(PgError::new(
            SqlState::FEATURE_NOT_SUPPORTED,
            "a function called from a read-only statement cannot modify data",
        ));
    }
    // Under SERIALIZABLE its reads take SIREAD locks as the caller's do.
    let snapshot = env.snapshot.for_command(command_id);
    // A SELECT of expressions without FROM (most PL/pgSQL expressions):
    // evaluated in place, as PostgreSQL's plpgsql "simple expressions".
    let simple = match stmt {
        BoundStatement::Query { plan, .. } => simple_expressions(plan),
        _ => None,
    };
    with_nested_env(env, params, cid, &snapshot, |inner| match stmt {
        _ if simple.is_some() => {
            let exprs = simple.expect("checked");
            let row = exprs
                .iter()
                .map(|e| crate::eval::eval(e, &[], inner))
                .collect::<PgResult<Row>>()?;
            let rows = if limit == Some(0) {
                Vec::new()
            } else {
                vec![row]
            };
            Ok((1, rows))
        }
        BoundStatement::Query { plan, .. } => {
            let mut op = crate::build(plan, inner, None)?;
            let mut rows = Vec::new();
            let mut n = 0u64;
            while let Some(row) = op.next(inner)? {
                n += 1;
                if limit.is_none_or(|l| rows.len() < l) {
                    rows.push(row);
                } else if limit.is_some() {
                    break;
                }
            }
            Ok((n, rows))
        }
        s if writes => {
            let (n, returning) = crate::dml::run_statement(s, inner)?;
            Ok((n, returning))
        }
        _ => Err(PgError::unsupported(
            "only SELECT, INSERT, UPDATE and DELETE statements are supported in functions",
        )),
    })
}

/// The expressions of a plan that computes one row without reading any:
/// `SELECT a + 1` (a projection over one empty row) or `VALUES (...)`.
fn simple_expressions(plan: &Plan) -> Option<&[sql::expr::Expr]> {
    match plan {
        Plan::Project { input, exprs } => match &**input {
            Plan::Values { rows, .. } if rows.len() == 1 && rows[0].is_empty() => Some(exprs),
            _ => None,
        },
        Plan::Values { rows, .. } if rows.len() == 1 => Some(&rows[0]),
        _ => None,
    }
}

fn command_name(stmt: &BoundStatement) -> &'static str {
    match stmt {
        BoundStatement::Insert { .. } => "INSERT",
        BoundStatement::Update { .. } => "UPDATE",
        BoundStatement::Delete { .. } => "DELETE",
        BoundStatement::WithModifying { statement, .. } => command_name(statement),
        _ => "SELECT",
    }
}

/// Lends `f` an environment for a function's statement: the caller's,
/// with its own parameters, command id and snapshot, and fresh per-run
/// state (subquery answers, CTE rows).
fn with_nested_env<R>(
    env: &mut ExecEnv,
    params: &[Value],
    cid: u32,
    snapshot: &txn::Snapshot,
    f: impl FnOnce(&mut ExecEnv) -> R,
) -> R {
    let cache = std::mem::take(&mut env.functions);
    let mut inner = env.nested(snapshot, cid, params);
    inner.functions = cache;
    let r = f(&mut inner);
    let cache = std::mem::take(&mut inner.functions);
    drop(inner);
    env.functions = cache;
    r
}
