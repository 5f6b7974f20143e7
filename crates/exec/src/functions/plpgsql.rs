//! The PL/pgSQL interpreter over `sql::plpgsql`'s syntax tree.
//!
//! Variables live in one vector, innermost last, so a name resolves to
//! its latest declaration; every expression is `SELECT <expr>` bound with
//! the variables in scope as named parameters and run with their current
//! values (PostgreSQL's plpgsql does the same through SPI). A record
//! variable of FOR ... IN query holds one variable per column, named
//! `rec.column`, which the binder finds for a qualified name.
//!
//! EXCEPTION handlers catch errors raised in their block unless the block
//! wrote rows: without subtransactions here those writes could not be
//! undone, so the error then goes on as if unhandled.

use std::sync::Arc;

use catalog::functions::Function;
use common::error::Severity;
use common::{PgError, PgResult, SqlState};
use sql::plan::BoundStatement;
use sql::plpgsql::{Block, DeclarationKind, RaiseLevel, Stmt};
use types::{DataType, TypeId, Value};

use super::{run_statement, to_type, with_function_binder, TriggerCall};
use crate::ExecEnv;

struct Var {
    name: String,
    ty: DataType,
    value: Value,
    constant: bool,
}

/// How a statement list ended.
enum Flow {
    Normal,
    Exit(Option<String>),
    Continue(Option<String>),
    Return(Value, TypeId),
    /// A trigger function's RETURN NEW / OLD: the row's values.
    ReturnRow(crate::Row),
}

struct Interp<'f> {
    function: &'f Function,
    vars: Vec<Var>,
    /// Rows the last SQL statement processed (GET DIAGNOSTICS).
    row_count: u64,
    /// Write statements run so far (whether a handler may catch).
    writes: u64,
    /// The error an EXCEPTION handler is handling (bare RAISE).
    handling: Vec<PgError>,
    /// In a trigger function, the table's column names: RETURN of a
    /// record variable returns its fields in this order.
    row_columns: Vec<String>,
}

pub(super) fn run(
    f: &Arc<Function>,
    args: Vec<Value>,
    env: &mut ExecEnv,
) -> PgResult<(Value, TypeId)> {
    match run_body(f, args, None, env)? {
        Flow::Return(v, t) => Ok((v, t)),
        Flow::ReturnRow(_) => Err(PgError::unsupported(
            "returning a record from a function is not supported yet",
        )),
        _ => {
            let ret = TypeId::from_oid(f.return_type).unwrap_or(TypeId::Unknown);
            if ret == TypeId::Void {
                Ok((Value::Null, TypeId::Void))
            } else {
                Err(PgError::new(
                    SqlState("2F005"),
                    "control reached end of function without RETURN",
                ))
            }
        }
    }
}

/// Runs a trigger function for one firing: the row it returned (RETURN
/// NEW / OLD, possibly changed), or None for RETURN NULL.
pub(super) fn run_trigger(
    f: &Arc<Function>,
    call: &TriggerCall,
    env: &mut ExecEnv,
) -> PgResult<Option<crate::Row>> {
    match run_body(f, Vec::new(), Some(call), env)? {
        Flow::ReturnRow(row) => Ok(Some(row)),
        Flow::Return(v, _) if v.is_null() => Ok(None),
        Flow::Return(..) => Err(PgError::new(
            SqlState::DATATYPE_MISMATCH,
            "returned row structure does not match the structure of the triggering table",
        )
        .with_detail("Returned type does not match the table's row.")),
        _ => Err(PgError::new(
            SqlState("2F005"),
            "control reached end of trigger procedure without RETURN",
        )),
    }
}

fn run_body(
    f: &Arc<Function>,
    args: Vec<Value>,
    trigger: Option<&TriggerCall>,
    env: &mut ExecEnv,
) -> PgResult<Flow> {
    let block = match env.functions.plpgsql_bodies.get(&f.oid) {
        Some(b) => b.clone(),
        None => {
            let b = Arc::new(sql::plpgsql::parse_body(&f.source)?);
            env.functions.plpgsql_bodies.insert(f.oid, b.clone());
            b
        }
    };
    let mut it = Interp {
        function: f,
        vars: Vec::new(),
        row_count: 0,
        writes: 0,
        handling: Vec::new(),
        row_columns: Vec::new(),
    };
    for (i, (ty, value)) in f.arg_types.iter().zip(args).enumerate() {
        let ty = TypeId::from_oid(*ty).unwrap_or(TypeId::Unknown).into();
        let name = f.arg_names.get(i).cloned().unwrap_or_default();
        // `$n` names the argument too.
        it.vars.push(Var {
            name: format!("${}", i + 1),
            ty,
            value: value.clone(),
            constant: false,
        });
        if !name.is_empty() {
            it.vars.push(Var {
                name,
                ty,
                value,
                constant: false,
            });
        }
    }
    if let Some(call) = trigger {
        for (name, ty, value) in call.variables() {
            it.vars.push(Var {
                name,
                ty,
                value,
                constant: false,
            });
        }
        it.row_columns = call.table.columns.iter().map(|c| c.name.clone()).collect();
    }
    it.vars.push(Var {
        name: "found".into(),
        ty: TypeId::Bool.into(),
        value: Value::Bool(false),
        constant: false,
    });
    it.block(&block, env)
}

fn syntax(msg: impl Into<String>) -> PgError {
    PgError::syntax(msg.into())
}

impl Interp<'_> {
    fn find(&self, name: &str) -> Option<usize> {
        self.vars.iter().rposition(|v| v.name == name)
    }

    fn values(&self) -> Vec<Value> {
        self.vars.iter().map(|v| v.value.clone()).collect()
    }

    /// Runs an SQL statement; returns the rows it returned (up to `limit`).
    fn sql(
        &mut self,
        text: &str,
        env: &mut ExecEnv,
        limit: Option<usize>,
    ) -> PgResult<(Arc<BoundStatement>, Vec<crate::Row>)> {
        let stmt = self.bound_expr(text, || text.to_owned(), env)?;
        let params = self.values();
        let (n, rows) = run_statement(&stmt, &params, env, limit, self.function.volatility)?;
        if !matches!(*stmt, BoundStatement::Query { .. }) {
            self.writes += 1;
        }
        self.row_count = n;
        Ok((stmt, rows))
    }

    /// Evaluates an expression: its value and type.
    fn expr(&mut self, text: &str, env: &mut ExecEnv) -> PgResult<(Value, TypeId)> {
        let query = || format!("SELECT {text}");
        // The key must be the expression's own text in the body, not the
        // SELECT built around it.
        let stmt = self.bound_expr(text, query, env)?;
        let cols = stmt.columns().map_or(0, <[_]>::len);
        if cols != 1 {
            return Err(PgError::syntax(format!(
                "query \"{}\" returned {cols} columns",
                query()
            )));
        }
        let ty = stmt.columns().expect("checked")[0].ty.id;
        let params = self.values();
        let (_, rows) = run_statement(&stmt, &params, env, Some(2), self.function.volatility)?;
        if rows.len() > 1 {
            return Err(PgError::new(
                SqlState::CARDINALITY_VIOLATION,
                format!("query \"{}\" returned more than one row", query()),
            ));
        }
        let v = rows
            .into_iter()
            .next()
            .and_then(|r| r.into_iter().next())
            .unwrap_or(Value::Null);
        Ok((v, ty))
    }

    /// Binds (once per calling statement) `query`, whose text in the body
    /// is `text`, with the variables in scope as parameters.
    fn bound_expr(
        &self,
        text: &str,
        query: impl FnOnce() -> String,
        env: &mut ExecEnv,
    ) -> PgResult<Arc<BoundStatement>> {
        let key = (self.function.oid, text.as_ptr() as usize);
        let in_scope = |scope: &[(String, DataType)]| {
            scope.len() == self.vars.len()
                && scope
                    .iter()
                    .zip(&self.vars)
                    .all(|((n, t), v)| *n == v.name && *t == v.ty)
        };
        if let Some(bound) = env.functions.plpgsql_statements.get(&key) {
            if let Some((_, b)) = bound.iter().find(|(names, _)| in_scope(names)) {
                return Ok(b.clone());
            }
        }
        let names: Vec<String> = self.vars.iter().map(|v| v.name.clone()).collect();
        let types: Vec<Option<TypeId>> = self.vars.iter().map(|v| Some(v.ty.id)).collect();
        let stmt = with_function_binder(env, self.function, &names, &types, |ctx| {
            let parsed = parse_one(&query())?;
            sql::bind_statement(ctx, &parsed)
        })?;
        let stmt = Arc::new(env.hooks.plan_function_statement(stmt, env.catalog));
        let scope = self.vars.iter().map(|v| (v.name.clone(), v.ty)).collect();
        let bound = env.functions.plpgsql_statements.entry(key).or_default();
        bound.push((scope, stmt.clone()));
        Ok(stmt)
    }

    fn condition(&mut self, text: &str, env: &mut ExecEnv) -> PgResult<bool> {
        let (v, t) = self.expr(text, env)?;
        match (v, t) {
            (Value::Bool(b), _) => Ok(b),
            (Value::Null, _) => Ok(false),
            (v, t) => Ok(matches!(
                to_type(v, t, TypeId::Bool.into(), env)?,
                Value::Bool(true)
            )),
        }
    }

    fn assign(&mut self, name: &str, v: Value, from: TypeId, env: &ExecEnv) -> PgResult<()> {
        let Some(i) = self.find(name) else {
            return Err(syntax(format!("\"{name}\" is not a known variable")));
        };
        if self.vars[i].constant {
            return Err(syntax(format!("variable \"{name}\" is declared CONSTANT")));
        }
        let v = to_type(v, from, self.vars[i].ty, env)?;
        self.vars[i].value = v;
        Ok(())
    }

    fn set_found(&mut self, found: bool) {
        if let Some(i) = self.find("found") {
            self.vars[i].value = Value::Bool(found);
        }
    }

    fn block(&mut self, b: &Block, env: &mut ExecEnv) -> PgResult<Flow> {
        let mark = self.vars.len();
        let writes = self.writes;
        let r = self.block_inner(b, env);
        let r = match r {
            Err(e) if !b.handlers.is_empty() && self.writes == writes => {
                self.vars.truncate(mark);
                match b.handlers.iter().find(|h| handles(&h.conditions, &e)) {
                    Some(h) => {
                        self.vars.push(Var {
                            name: "sqlstate".into(),
                            ty: TypeId::Text.into(),
                            value: Value::Text(e.code.0.to_string()),
                            constant: false,
                        });
                        self.vars.push(Var {
                            name: "sqlerrm".into(),
                            ty: TypeId::Text.into(),
                            value: Value::Text(e.message.clone()),
                            constant: false,
                        });
                        self.handling.push(e);
                        let r = self.statements(&h.body, env);
                        self.handling.pop();
                        r
                    }
                    None => Err(e),
                }
            }
            other => other,
        };
        self.vars.truncate(mark);
        match r? {
            Flow::Exit(Some(l)) if b.label.as_deref() == Some(l.as_str()) => Ok(Flow::Normal),
            flow => Ok(flow),
        }
    }

    fn block_inner(&mut self, b: &Block, env: &mut ExecEnv) -> PgResult<Flow> {
        for d in &b.declarations {
            match &d.kind {
                DeclarationKind::Alias(target) => {
                    let i = self
                        .find(target)
                        .ok_or_else(|| syntax(format!("\"{target}\" is not a known variable")))?;
                    let v = &self.vars[i];
                    let alias = Var {
                        name: d.name.clone(),
                        ty: v.ty,
                        value: v.value.clone(),
                        constant: v.constant,
                    };
                    self.vars.push(alias);
                }
                DeclarationKind::Variable {
                    type_name,
                    constant,
                    not_null,
                    default,
                } => {
                    let ty = if type_name.eq_ignore_ascii_case("record") {
                        DataType::new(TypeId::Unknown)
                    } else {
                        sql::bind::parse_type_name(type_name)?
                    };
                    let value = match default {
                        Some(e) => {
                            let (v, t) = self.expr(e, env)?;
                            to_type(v, t, ty, env)?
                        }
                        None => Value::Null,
                    };
                    if *not_null && value.is_null() {
                        return Err(PgError::new(
                            SqlState::NULL_VALUE_NOT_ALLOWED,
                            format!(
                                "variable \"{}\" must have a default value, since it's declared NOT NULL",
                                d.name
                            ),
                        ));
                    }
                    self.vars.push(Var {
                        name: d.name.clone(),
                        ty,
                        value,
                        constant: *constant,
                    });
                }
            }
        }
        self.statements(&b.body, env)
    }

    fn statements(&mut self, body: &[Stmt], env: &mut ExecEnv) -> PgResult<Flow> {
        for s in body {
            env.check_cancel()?;
            match self.statement(s, env)? {
                Flow::Normal => {}
                other => return Ok(other),
            }
        }
        Ok(Flow::Normal)
    }

    /// Runs a loop body once; Some(flow) ends the loop with that flow.
    fn loop_body(
        &mut self,
        label: &Option<String>,
        body: &[Stmt],
        env: &mut ExecEnv,
    ) -> PgResult<Option<Flow>> {
        let ours = |l: &Option<String>| l.is_none() || l == label;
        Ok(match self.statements(body, env)? {
            Flow::Normal => None,
            Flow::Continue(l) if ours(&l) => None,
            Flow::Exit(l) if ours(&l) => Some(Flow::Normal),
            other => Some(other),
        })
    }

    fn statement(&mut self, s: &Stmt, env: &mut ExecEnv) -> PgResult<Flow> {
        match s {
            Stmt::Null => {}
            Stmt::Assign { target, expr } => {
                let (v, t) = self.expr(expr, env)?;
                self.assign(target, v, t, env)?;
            }
            Stmt::If {
                branches,
                otherwise,
            } => {
                for (cond, body) in branches {
                    if self.condition(cond, env)? {
                        return self.statements(body, env);
                    }
                }
                return self.statements(otherwise, env);
            }
            Stmt::Loop { label, body } => loop {
                if let Some(flow) = self.loop_body(label, body, env)? {
                    return Ok(flow);
                }
            },
            Stmt::While {
                label,
                condition,
                body,
            } => {
                while self.condition(condition, env)? {
                    if let Some(flow) = self.loop_body(label, body, env)? {
                        return Ok(flow);
                    }
                }
            }
            Stmt::ForRange {
                label,
                var,
                reverse,
                low,
                high,
                step,
                body,
            } => return self.for_range(label, var, *reverse, (low, high, step), body, env),
            Stmt::ForQuery {
                label,
                var,
                query,
                body,
            } => return self.for_query(label, var, query, body, env),
            Stmt::Exit {
                continue_loop,
                label,
                when,
            } => {
                if let Some(w) = when {
                    if !self.condition(w, env)? {
                        return Ok(Flow::Normal);
                    }
                }
                return Ok(if *continue_loop {
                    Flow::Continue(label.clone())
                } else {
                    Flow::Exit(label.clone())
                });
            }
            Stmt::Return(Some(e)) if !self.row_columns.is_empty() && self.is_record(e.trim()) => {
                return self.return_record(e.trim());
            }
            Stmt::Return(e) => {
                let (v, t) = match e {
                    Some(e) => self.expr(e, env)?,
                    None => (Value::Null, TypeId::Void),
                };
                return Ok(Flow::Return(v, t));
            }
            Stmt::ReturnNext(_) | Stmt::ReturnQuery(_) => {
                return Err(PgError::unsupported(
                    "RETURN NEXT and RETURN QUERY are not supported yet",
                ))
            }
            Stmt::Perform(q) => {
                let (_, rows) = self.sql(q, env, Some(1))?;
                let found = self.row_count > 0 || !rows.is_empty();
                self.set_found(found);
            }
            Stmt::GetRowCount(var) => {
                let n = self.row_count as i64;
                self.assign(var, Value::Int8(n), TypeId::Int8, env)?;
            }
            Stmt::Raise {
                level,
                message,
                args,
                condition,
                options,
            } => self.raise(
                *level,
                message.as_deref(),
                args,
                condition.as_deref(),
                options,
                env,
            )?,
            Stmt::Sql { text, into } => {
                let (stmt, rows) = self.sql(text, env, Some(2))?;
                self.set_found(self.row_count > 0);
                if let Some(into) = into {
                    if into.strict && rows.is_empty() {
                        return Err(PgError::new(
                            SqlState::NO_DATA_FOUND,
                            "query returned no rows",
                        ));
                    }
                    if into.strict && rows.len() > 1 {
                        return Err(PgError::new(
                            SqlState::TOO_MANY_ROWS,
                            "query returned more than one row",
                        )
                        .with_hint("Make sure the query returns a single row, or use LIMIT 1."));
                    }
                    let columns = stmt.columns().map(<[_]>::to_vec).unwrap_or_default();
                    let row = rows.into_iter().next();
                    self.set_found(row.is_some());
                    self.store_row(&into.targets, &columns, row, env)?;
                }
            }
            Stmt::Block(b) => return self.block(b, env),
        }
        Ok(Flow::Normal)
    }

    /// Puts a row's columns into `targets` (a record variable takes them all).
    fn store_row(
        &mut self,
        targets: &[String],
        columns: &[sql::plan::OutputColumn],
        row: Option<crate::Row>,
        env: &ExecEnv,
    ) -> PgResult<()> {
        let values = row.unwrap_or_else(|| vec![Value::Null; columns.len()]);
        if let [one] = targets {
            if self.is_record(one) {
                self.set_record(one, columns, values);
                return Ok(());
            }
        }
        for (i, t) in targets.iter().enumerate() {
            let (v, ty) = match (values.get(i), columns.get(i)) {
                (Some(v), Some(c)) => (v.clone(), c.ty.id),
                _ => (Value::Null, TypeId::Unknown),
            };
            self.assign(t, v, ty, env)?;
        }
        Ok(())
    }

    /// RETURN of a record variable in a trigger function: its fields in
    /// the table's column order, or NULL when it holds no row (NEW in a
    /// DELETE trigger).
    fn return_record(&self, name: &str) -> PgResult<Flow> {
        let name = name.to_ascii_lowercase();
        let i = self.find(&name).expect("checked by is_record");
        if self.vars[i].value.is_null() {
            return Ok(Flow::Return(Value::Null, TypeId::Unknown));
        }
        let mut row = Vec::with_capacity(self.row_columns.len());
        for c in &self.row_columns {
            let Some(f) = self.find(&format!("{name}.{c}")) else {
                return Err(PgError::new(
                    SqlState::DATATYPE_MISMATCH,
                    "returned row structure does not match the structure of the triggering table",
                ));
            };
            row.push(self.vars[f].value.clone());
        }
        Ok(Flow::ReturnRow(row))
    }

    fn is_record(&self, name: &str) -> bool {
        let name = name.to_ascii_lowercase();
        self.find(&name)
            .is_some_and(|i| self.vars[i].ty.id == TypeId::Unknown)
    }

    /// A record variable's fields: variables named `rec.column`, replaced.
    fn set_record(&mut self, name: &str, columns: &[sql::plan::OutputColumn], values: Vec<Value>) {
        let prefix = format!("{name}.");
        self.vars.retain(|v| !v.name.starts_with(&prefix));
        for (c, v) in columns.iter().zip(values) {
            self.vars.push(Var {
                name: format!("{prefix}{}", c.name),
                ty: c.ty,
                value: v,
                constant: false,
            });
        }
    }

    fn for_range(
        &mut self,
        label: &Option<String>,
        var: &str,
        reverse: bool,
        (low, high, step): (&String, &String, &Option<String>),
        body: &[Stmt],
        env: &mut ExecEnv,
    ) -> PgResult<Flow> {
        let int = |this: &mut Self, e: &str, env: &mut ExecEnv| -> PgResult<i64> {
            let (v, t) = this.expr(e, env)?;
            match to_type(v, t, TypeId::Int8.into(), env)? {
                Value::Int8(i) => Ok(i),
                _ => Err(PgError::new(
                    SqlState::NULL_VALUE_NOT_ALLOWED,
                    "lower bound of FOR loop cannot be null",
                )),
            }
        };
        let low = int(self, low, env)?;
        let high = int(self, high, env)?;
        let step = match step {
            Some(s) => int(self, s, env)?,
            None => 1,
        };
        if step <= 0 {
            return Err(PgError::new(
                SqlState::INVALID_PARAMETER_VALUE,
                "BY value of FOR loop must be greater than zero",
            ));
        }
        let mark = self.vars.len();
        self.vars.push(Var {
            name: var.to_string(),
            ty: TypeId::Int4.into(),
            value: Value::Int4(low as i32),
            constant: false,
        });
        let slot = self.vars.len() - 1;
        let mut i = low;
        let mut ran = false;
        let flow = loop {
            if (!reverse && i > high) || (reverse && i < high) {
                break Flow::Normal;
            }
            ran = true;
            self.vars[slot].value = Value::Int4(i as i32);
            if let Some(flow) = self.loop_body(label, body, env)? {
                break flow;
            }
            i = if reverse { i - step } else { i + step };
        };
        self.vars.truncate(mark);
        self.set_found(ran);
        Ok(flow)
    }

    fn for_query(
        &mut self,
        label: &Option<String>,
        var: &str,
        query: &str,
        body: &[Stmt],
        env: &mut ExecEnv,
    ) -> PgResult<Flow> {
        // Rows are read whole first: the body may run statements of its own.
        let (stmt, rows) = self.sql(query, env, None)?;
        let columns = stmt.columns().map(<[_]>::to_vec).unwrap_or_default();
        let targets: Vec<String> = var.split(',').map(|s| s.trim().to_string()).collect();
        let mut flow = Flow::Normal;
        let ran = !rows.is_empty();
        for row in rows {
            self.store_row(&targets, &columns, Some(row), env)?;
            if let Some(f) = self.loop_body(label, body, env)? {
                flow = f;
                break;
            }
        }
        self.set_found(ran);
        Ok(flow)
    }

    #[allow(clippy::too_many_arguments)]
    fn raise(
        &mut self,
        level: RaiseLevel,
        message: Option<&str>,
        args: &[String],
        condition: Option<&str>,
        options: &[(String, String)],
        env: &mut ExecEnv,
    ) -> PgResult<()> {
        if message.is_none() && condition.is_none() && options.is_empty() {
            return Err(self.handling.last().cloned().unwrap_or_else(|| {
                PgError::new(
                    SqlState("0Z002"),
                    "RAISE without parameters cannot be used outside an exception handler",
                )
            }));
        }
        let mut values = Vec::new();
        for a in args {
            let (v, t) = self.expr(a, env)?;
            values.push(if v.is_null() {
                "<NULL>".to_string()
            } else {
                crate::eval::value_to_text(&v, t, &env.io)
            });
        }
        let mut text = match message {
            Some(m) => format_message(m, &values)?,
            None => String::new(),
        };
        let mut code = match condition {
            Some(c) => condition_code(c)?,
            None if level == RaiseLevel::Exception => SqlState::RAISE_EXCEPTION,
            None => SqlState::SUCCESSFUL_COMPLETION,
        };
        if message.is_none() {
            text = condition.unwrap_or_default().to_string();
        }
        let mut detail = None;
        let mut hint = None;
        for (name, e) in options {
            let (v, t) = self.expr(e, env)?;
            let s = crate::eval::value_to_text(&v, t, &env.io);
            match name.as_str() {
                "message" => text = s,
                "detail" => detail = Some(s),
                "hint" => hint = Some(s),
                "errcode" => code = condition_code(&s)?,
                other => {
                    return Err(syntax(format!(
                        "unrecognized RAISE statement option \"{other}\""
                    )))
                }
            }
        }
        let mut err = PgError::new(code, text);
        if let Some(d) = detail {
            err = err.with_detail(d);
        }
        if let Some(h) = hint {
            err = err.with_hint(h);
        }
        match level {
            RaiseLevel::Exception => Err(err),
            // Below client_min_messages' default: not sent.
            RaiseLevel::Debug | RaiseLevel::Log => Ok(()),
            RaiseLevel::Info | RaiseLevel::Notice | RaiseLevel::Warning => {
                err.severity = match level {
                    RaiseLevel::Info => Severity::Info,
                    RaiseLevel::Warning => Severity::Warning,
                    _ => Severity::Notice,
                };
                if err.code == SqlState::RAISE_EXCEPTION {
                    err.code = SqlState::SUCCESSFUL_COMPLETION;
                }
                env.hooks.notice(err);
                Ok(())
            }
        }
    }
}

/// RAISE's message with each `%` replaced by the next argument.
fn format_message(fmt: &str, args: &[String]) -> PgResult<String> {
    let mut out = String::new();
    let mut it = args.iter();
    let mut chars = fmt.chars().peekable();
    let mut used = 0;
    while let Some(c) = chars.next() {
        if c == '%' {
            if chars.peek() == Some(&'%') {
                chars.next();
                out.push('%');
                continue;
            }
            match it.next() {
                Some(a) => {
                    out.push_str(a);
                    used += 1;
                }
                None => return Err(syntax("too few parameters specified for RAISE")),
            }
        } else {
            out.push(c);
        }
    }
    if used < args.len() {
        return Err(syntax("too many parameters specified for RAISE"));
    }
    Ok(out)
}

/// Condition names PostgreSQL's handlers and RAISE know, with SQLSTATEs.
const CONDITIONS: &[(&str, &str)] = &[
    ("raise_exception", "P0001"),
    ("no_data_found", "P0002"),
    ("too_many_rows", "P0003"),
    ("assert_failure", "P0004"),
    ("division_by_zero", "22012"),
    ("unique_violation", "23505"),
    ("not_null_violation", "23502"),
    ("foreign_key_violation", "23503"),
    ("check_violation", "23514"),
    ("numeric_value_out_of_range", "22003"),
    ("invalid_text_representation", "22P02"),
    ("string_data_right_truncation", "22001"),
    ("null_value_not_allowed", "22004"),
    ("undefined_table", "42P01"),
    ("undefined_column", "42703"),
    ("undefined_function", "42883"),
    ("syntax_error", "42601"),
    ("data_exception", "22000"),
    ("integrity_constraint_violation", "23000"),
    ("invalid_parameter_value", "22023"),
    ("feature_not_supported", "0A000"),
    ("query_canceled", "57014"),
];

/// A condition name or `sqlstate xxxxx` (or a bare code) as a SQLSTATE.
fn condition_code(c: &str) -> PgResult<SqlState> {
    let c = c.trim();
    let code = c
        .strip_prefix("sqlstate ")
        .unwrap_or(c)
        .trim()
        .to_uppercase();
    if let Some((_, code)) = CONDITIONS.iter().find(|(n, _)| n.eq_ignore_ascii_case(c)) {
        return Ok(SqlState(code));
    }
    if code.len() == 5 && code.chars().all(|ch| ch.is_ascii_alphanumeric()) {
        if let Some((_, known)) = CONDITIONS.iter().find(|(_, k)| *k == code) {
            return Ok(SqlState(known));
        }
        // SQLSTATEs are static strings; a user's own code is kept for good.
        return Ok(SqlState(Box::leak(code.into_boxed_str())));
    }
    Err(PgError::new(
        SqlState::UNDEFINED_OBJECT,
        format!("unrecognized exception condition \"{c}\""),
    ))
}

/// Whether a handler for `conditions` catches `e`.
fn handles(conditions: &[String], e: &PgError) -> bool {
    conditions.iter().any(|c| match c.as_str() {
        // OTHERS catches everything but cancels, as in PostgreSQL.
        "others" => e.code != SqlState::QUERY_CANCELED && e.code.0 != "57P01",
        c => match condition_code(c) {
            // A class code (`22000`) catches its whole class.
            Ok(code) if code.0.ends_with("000") && c != "raise_exception" => {
                e.code.0[..2] == code.0[..2]
            }
            Ok(code) => code == e.code,
            Err(_) => false,
        },
    })
}

fn parse_one(text: &str) -> PgResult<sql::ParsedStatement> {
    let mut parts = sql::split_statements(text)
        .into_iter()
        .filter(|s| !sql::parse::is_blank(s.text));
    let Some(st) = parts.next() else {
        return Err(syntax("syntax error at end of input"));
    };
    sql::parse_statement(text, &st)
}
