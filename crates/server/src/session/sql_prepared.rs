//! PREPARE, EXECUTE and DEALLOCATE in SQL, over the same named statements
//! as the protocol's Parse (`prepared_statements.rs`), and what
//! pg_prepared_statements lists.

use std::sync::Arc;

use common::{PgError, PgResult, SqlState};
use exec::system_views::PreparedStatementInfo;
use sql::parse::ParsedStatement;
use sql::plan::BoundStatement;
use sql::Expr;
use types::{TypeId, Value};

use super::{column_desc, text_column, Prepared, Session, TxnState};
use crate::plan_cache::PlanCache;
use crate::prepared_statements::no_such_statement;
use crate::session_api::{ColumnDesc, PreparedStatement, ResultSink, StatementRegistry};

impl Session {
    /// A prepared statement from its parsed and bound (not planned) form;
    /// parameters whose type nothing decided are text, as PostgreSQL's.
    pub(super) fn make_prepared(
        &self,
        sql: &str,
        parsed: ParsedStatement,
        bound: BoundStatement,
        types: &[Option<TypeId>],
    ) -> PreparedStatement {
        let final_types: Vec<Option<TypeId>> = types
            .iter()
            .map(|t| Some(t.unwrap_or(TypeId::Text)))
            .collect();
        PreparedStatement {
            sql: sql.to_string(),
            param_types: final_types.iter().flatten().map(|t| t.oid()).collect(),
            columns: self.result_columns(&bound),
            inner: Arc::new(Prepared {
                parsed: Some(parsed),
                param_types: final_types,
                plans: parking_lot::Mutex::new(Some(PlanCache::new(self.catalog_version(), bound))),
            }),
        }
    }

    /// The columns a statement returns (RowDescription for Describe), None
    /// for one that returns no rows.
    fn result_columns(&self, bound: &BoundStatement) -> Option<Vec<ColumnDesc>> {
        if let Some(c) = bound.columns() {
            return Some(c.iter().map(column_desc).collect());
        }
        match bound {
            BoundStatement::Show { name } => Some(vec![text_column(name)]),
            BoundStatement::ShowAll => Some(vec![
                text_column("name"),
                text_column("setting"),
                text_column("description"),
            ]),
            BoundStatement::Fetch(f) => self.fetch_columns(f),
            BoundStatement::ExecutePrepared { name, .. } => {
                self.statements.get(name).and_then(|s| s.columns.clone())
            }
            _ => None,
        }
    }

    pub(super) fn run_prepared_command(
        &mut self,
        stmt: &BoundStatement,
        params: &[Value],
        sink: &mut dyn ResultSink,
    ) -> PgResult<()> {
        match stmt {
            BoundStatement::Prepare {
                name,
                statement,
                param_types,
                bound,
            } => {
                if self.statements.contains(name) {
                    return Err(PgError::new(
                        SqlState::DUPLICATE_PREPARED_STATEMENT,
                        format!("prepared statement \"{name}\" already exists"),
                    ));
                }
                let text = self.status.fields.lock().query.clone();
                let prepared = self.make_prepared(
                    &text,
                    (**statement).clone(),
                    (**bound).clone(),
                    param_types,
                );
                self.statements.insert(name, prepared, true)?;
                sink.complete("PREPARE")
            }
            BoundStatement::ExecutePrepared { name, args } => {
                self.execute_prepared(name, args, params, sink)
            }
            BoundStatement::Deallocate(Some(name)) => {
                if !self.statements.contains(name) || !self.statements.remove(name) {
                    return Err(no_such_statement(name));
                }
                sink.complete("DEALLOCATE")
            }
            BoundStatement::Deallocate(None) => {
                self.statements.remove_all_named();
                sink.complete("DEALLOCATE ALL")
            }
            _ => Err(PgError::internal("not a prepared-statement command")),
        }
    }

    fn execute_prepared(
        &mut self,
        name: &str,
        args: &[Expr],
        outer_params: &[Value],
        sink: &mut dyn ResultSink,
    ) -> PgResult<()> {
        match self.prepared_plan(name, args, outer_params)? {
            Some((bound, values)) => self.run(&bound, &values, sink),
            None => sink.complete(""),
        }
    }

    /// EXPLAIN [ANALYZE] EXECUTE name (args): the plan EXECUTE would run,
    /// explained as any statement.
    pub(super) fn explain_prepared(
        &mut self,
        name: &str,
        args: &[Expr],
        (options, settings, planning_time): (
            &sql::plan::ExplainOptions,
            &sql::plan::PlannerSettings,
            std::time::Duration,
        ),
        outer_params: &[Value],
        sink: &mut dyn ResultSink,
    ) -> PgResult<()> {
        let Some((bound, values)) = self.prepared_plan(name, args, outer_params)? else {
            return Err(PgError::syntax(
                "EXPLAIN of this statement is not supported",
            ));
        };
        let explain = BoundStatement::Explain {
            statement: Box::new(bound),
            options: options.clone(),
            settings: Box::new(settings.clone()),
            planning_time,
        };
        self.run(&explain, &values, sink)
    }

    /// The plan and argument values EXECUTE name (args) runs; None for an
    /// empty statement.
    fn prepared_plan(
        &mut self,
        name: &str,
        args: &[Expr],
        outer_params: &[Value],
    ) -> PgResult<Option<(BoundStatement, Vec<Value>)>> {
        let stmt = match self.statements.get(name) {
            Some(s) if !name.is_empty() => s.clone(),
            _ => return Err(no_such_statement(name)),
        };
        let Some(p) = stmt.inner.downcast_ref::<Prepared>() else {
            return Err(PgError::internal("foreign prepared statement"));
        };
        let Some(parsed) = &p.parsed else {
            return Ok(None);
        };
        // As PostgreSQL: arguments count only for statements with parameters.
        let mut values = Vec::new();
        if !stmt.param_types.is_empty() {
            if args.len() != stmt.param_types.len() {
                return Err(PgError::new(
                    SqlState::SYNTAX_ERROR,
                    format!("wrong number of parameters for prepared statement \"{name}\""),
                )
                .with_detail(format!(
                    "Expected {} parameters but got {}.",
                    stmt.param_types.len(),
                    args.len()
                )));
            }
            let io = self.io();
            for (i, (arg, &oid)) in args.iter().zip(&stmt.param_types).enumerate() {
                let ty = TypeId::from_oid(oid).unwrap_or(TypeId::Text);
                let arg = sql::bind::coerce_execute_arg(arg.clone(), ty, i, &io)?;
                values.push(self.evaluate(&arg, outer_params)?);
            }
        }
        let bound = self.current_plan(p, parsed, &values)?;
        Ok(Some(((*bound).clone(), values)))
    }

    /// Evaluates an expression outside any query (EXECUTE's arguments).
    fn evaluate(&mut self, e: &Expr, params: &[Value]) -> PgResult<Value> {
        if let Expr::Const(v, _) = e {
            return Ok(v.clone());
        }
        let st = self.statement_txn(None)?;
        let (xid, cid, snapshot) = (st.xid, st.cid, st.snapshot);
        let catalog = self.catalog_version();
        let value = self.with_env(&catalog, &snapshot, xid, cid, params, |env| {
            exec::eval::eval(e, &[], env)
        });
        if matches!(self.txn, TxnState::Idle) {
            // A lone SERIALIZABLE evaluation read as a transaction of its own.
            self.ssi_release(value.is_ok());
        }
        value
    }
}

/// pg_prepared_statements' rows.
pub(super) fn prepared_infos(statements: &StatementRegistry) -> Vec<PreparedStatementInfo> {
    statements
        .named()
        .map(|(name, s)| {
            let (generic_plans, custom_plans) = s
                .stmt
                .inner
                .downcast_ref::<Prepared>()
                .and_then(|p| p.plans.lock().as_ref().map(PlanCache::plan_counts))
                .unwrap_or_default();
            PreparedStatementInfo {
                name: name.clone(),
                statement: s.source_text.clone(),
                prepare_time: s.prepare_time,
                parameter_types: s
                    .stmt
                    .param_types
                    .iter()
                    .map(|&oid| {
                        TypeId::from_oid(oid)
                            .map_or_else(|| oid.to_string(), |t| t.display_name().into())
                    })
                    .collect(),
                from_sql: s.from_sql,
                generic_plans,
                custom_plans,
            }
        })
        .collect()
}
