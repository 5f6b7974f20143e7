//! CHECK constraints. The catalog keeps each one's expression as SQL text;
//! a statement that writes a table binds the table's checks once
//! (`TableChecks::of`) and evaluates them on every row it writes, after
//! NOT NULL and before the heap, in name order as PostgreSQL's
//! ExecConstraints does. A NULL result passes. ADD CONSTRAINT and
//! VALIDATE CONSTRAINT check the rows already there (`validate`).

use access::heap::HeapScan;
use access::tuple::deform_tuple;
use catalog::{ConstraintKind, Table};
use common::{PgError, PgResult, SqlState};
use sql::expr::Expr;
use types::Value;

use crate::dml::failing_row;
use crate::eval::eval;
use crate::ExecEnv;

/// Runs `f` with a binder context for SQL text the catalog stores (CHECK
/// expressions, column defaults): the statement's catalog, `public` as the
/// search path, no parameters.
pub(crate) fn with_stored_text_binder<R>(
    env: &ExecEnv,
    f: impl FnOnce(&mut sql::BindContext<'_>) -> R,
) -> R {
    let user = env.hooks.current_user();
    let mut ctx = sql::BindContext {
        catalog: env.catalog,
        db_oid: env.db_oid,
        db_name: env.db_name,
        user: &user,
        session_user: &user,
        search_path: vec!["public".into()],
        temp_namespace: None,
        param_types: Vec::new(),
        server_version: "",
        io: env.io,
        system_views: None,
        param_names: Vec::new(),
    };
    f(&mut ctx)
}

/// Binds a CHECK expression stored as `text` over `table`'s rows.
pub(crate) fn bind(env: &ExecEnv, table: &Table, text: &str) -> PgResult<Expr> {
    with_stored_text_binder(env, |ctx| sql::bind::bind_check(ctx, table, text))
}

struct Check {
    name: String,
    expr: Expr,
}

/// A table's CHECK constraints, bound for one statement.
pub(crate) struct TableChecks {
    checks: Vec<Check>,
}

impl TableChecks {
    /// The table's checks (NOT VALID ones too: they hold for new rows),
    /// sorted by name.
    pub fn of(env: &ExecEnv, table: &Table) -> PgResult<TableChecks> {
        let mut checks = Vec::new();
        for c in env.catalog.constraints_of(table.oid) {
            if let ConstraintKind::Check { expr } = &c.kind {
                checks.push(Check {
                    name: c.name.clone(),
                    expr: bind(env, table, expr)?,
                });
            }
        }
        checks.sort_by(|a, b| a.name.as_bytes().cmp(b.name.as_bytes()));
        Ok(TableChecks { checks })
    }

    pub fn is_empty(&self) -> bool {
        self.checks.is_empty()
    }

    /// 23514 for the first check `row` fails (`schema`: the table's).
    pub fn check(
        &self,
        table: &Table,
        schema: &str,
        row: &[Value],
        env: &mut ExecEnv,
    ) -> PgResult<()> {
        for c in &self.checks {
            if let Value::Bool(false) = eval(&c.expr, row, env)? {
                return Err(PgError::new(
                    SqlState::CHECK_VIOLATION,
                    format!(
                        "new row for relation \"{}\" violates check constraint \"{}\"",
                        table.name, c.name
                    ),
                )
                .with_detail(format!(
                    "Failing row contains {}.",
                    failing_row(table, row, &env.io)
                ))
                .with_constraint(schema, &table.name, &c.name));
            }
        }
        Ok(())
    }
}

/// Checks every row of `table` the statement sees against `expr` (the
/// constraint `name` being added or validated): 23514 if one fails.
pub(crate) fn validate(env: &mut ExecEnv, table: &Table, name: &str, expr: &Expr) -> PgResult<()> {
    let types = table.column_types();
    let mut scan = HeapScan::new(env.pool, table.locator())?;
    let mut rows: Vec<Vec<Value>> = Vec::new();
    loop {
        env.check_cancel()?;
        let more = scan.next_page(env.snapshot, env.tm, |_, t| {
            let mut row = Vec::with_capacity(types.len());
            deform_tuple(t, &types, table.toast_source(env.pool), &mut row)?;
            rows.push(row);
            Ok(())
        })?;
        // Evaluated outside the page lock: an expression may call anything.
        for row in rows.drain(..) {
            if let Value::Bool(false) = eval(expr, &row, env)? {
                return Err(PgError::new(
                    SqlState::CHECK_VIOLATION,
                    format!(
                        "check constraint \"{name}\" of relation \"{}\" is violated by some row",
                        table.name
                    ),
                )
                .with_constraint(
                    &crate::dml::schema_name(env.catalog, table.namespace),
                    &table.name,
                    name,
                ));
            }
        }
        if !more {
            return Ok(());
        }
    }
}
