//! A prepared statement's plans, PostgreSQL's way (plancache.c): the bound
//! statement is kept per catalog version; each execution gets either a
//! custom plan, made for that execution's parameter values, or the generic
//! plan, made once with the parameters left as `$n`.
//!
//! Under `plan_cache_mode = auto` the first five executions get custom plans;
//! after that the generic plan is used when its estimated cost is below the
//! custom plans' average, where a custom plan's cost includes what planning
//! it again costs (1000 × cpu_operator_cost per relation, plus one).
//! Statements without parameters, and utility statements, always use the
//! generic plan.

use std::sync::Arc;

use catalog::CatalogData;
use common::{PgError, PgResult, SqlState};
use sql::plan::{BoundStatement, PlanCacheMode, PlannerSettings};
use types::Value;

/// Custom plans made before the generic plan is considered (PostgreSQL's 5).
const CUSTOM_PLANS_FIRST: u32 = 5;

pub(crate) struct PlanCache {
    /// The catalog version the statement was bound against: DDL or new
    /// statistics make a new version, and the statement is bound again.
    catalog: Arc<CatalogData>,
    /// Bound, not planned: custom plans start from it.
    bound: Arc<BoundStatement>,
    /// The generic plan and its estimated cost, made on first use.
    generic: Option<(Arc<BoundStatement>, f64)>,
    custom_plans: u32,
    total_custom_cost: f64,
    /// Executions that ran the generic plan and a custom plan
    /// (pg_prepared_statements' generic_plans and custom_plans).
    generic_runs: i64,
    custom_runs: i64,
}

/// How a cached statement is planned, given by the session.
pub(crate) trait Planning {
    /// Plans a bound statement.
    fn plan(&self, stmt: BoundStatement) -> BoundStatement;
    /// The planner's estimate of a planned statement's total cost, and how
    /// many relations it reads; None for statements that are not planned.
    fn cost(&self, planned: &BoundStatement) -> Option<(f64, usize)>;
}

impl PlanCache {
    pub fn new(catalog: Arc<CatalogData>, bound: BoundStatement) -> Self {
        PlanCache {
            catalog,
            bound: Arc::new(bound),
            generic: None,
            custom_plans: 0,
            total_custom_cost: 0.0,
            generic_runs: 0,
            custom_runs: 0,
        }
    }

    /// The cache of a statement bound again after the catalog changed: its
    /// result keeps its columns or the execution fails, as PostgreSQL's
    /// (a client decodes the rows by the columns it was told at Parse), and
    /// the plan counts carry over.
    pub fn rebind(
        old: Option<&PlanCache>,
        catalog: Arc<CatalogData>,
        bound: BoundStatement,
    ) -> PgResult<Self> {
        let mut new = PlanCache::new(catalog, bound);
        if let Some(old) = old {
            if old.bound.columns() != new.bound.columns() {
                return Err(PgError::new(
                    SqlState::FEATURE_NOT_SUPPORTED,
                    "cached plan must not change result type",
                ));
            }
            (new.generic_runs, new.custom_runs) = (old.generic_runs, old.custom_runs);
        }
        Ok(new)
    }

    /// How many executions ran the generic plan, and how many a custom one.
    pub fn plan_counts(&self) -> (i64, i64) {
        (self.generic_runs, self.custom_runs)
    }

    pub fn is_current(&self, catalog: &Arc<CatalogData>) -> bool {
        Arc::ptr_eq(&self.catalog, catalog)
    }

    /// The plan to run for one execution with `params`.
    pub fn plan_for(
        &mut self,
        params: &[Value],
        settings: &PlannerSettings,
        planning: &dyn Planning,
    ) -> Arc<BoundStatement> {
        if self.use_custom(params, settings, planning) {
            self.custom_runs += 1;
            let stmt = sql::plan::substitute_params((*self.bound).clone(), params);
            let planned = planning.plan(stmt);
            if let Some((cost, relations)) = planning.cost(&planned) {
                self.custom_plans += 1;
                self.total_custom_cost += cost + planning_cost(relations, settings);
            }
            return Arc::new(planned);
        }
        self.generic_runs += 1;
        self.generic(planning).0
    }

    fn generic(&mut self, planning: &dyn Planning) -> (Arc<BoundStatement>, f64) {
        if self.generic.is_none() {
            let planned = planning.plan((*self.bound).clone());
            let cost = planning.cost(&planned).map_or(0.0, |(c, _)| c);
            self.generic = Some((Arc::new(planned), cost));
        }
        self.generic.clone().expect("made above")
    }

    /// PostgreSQL's choose_custom_plan.
    fn use_custom(
        &mut self,
        params: &[Value],
        settings: &PlannerSettings,
        planning: &dyn Planning,
    ) -> bool {
        if params.is_empty() || !plannable(&self.bound) {
            return false;
        }
        match settings.plan_cache_mode {
            PlanCacheMode::ForceGenericPlan => false,
            PlanCacheMode::ForceCustomPlan => true,
            PlanCacheMode::Auto => {
                if self.custom_plans < CUSTOM_PLANS_FIRST {
                    return true;
                }
                let average = self.total_custom_cost / f64::from(self.custom_plans);
                let (_, generic_cost) = self.generic(planning);
                generic_cost >= average
            }
        }
    }
}

/// What planning once more costs, in the planner's units (PostgreSQL's
/// cached_plan_cost with include_planner).
fn planning_cost(relations: usize, s: &PlannerSettings) -> f64 {
    1000.0 * s.cpu_operator_cost * (relations as f64 + 1.0)
}

fn plannable(stmt: &BoundStatement) -> bool {
    match stmt {
        BoundStatement::Explain { statement, .. }
        | BoundStatement::WithModifying { statement, .. } => plannable(statement),
        BoundStatement::Query { .. }
        | BoundStatement::Insert { .. }
        | BoundStatement::Update { .. }
        | BoundStatement::Delete { .. } => true,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sql::expr::Expr;
    use sql::plan::Plan;
    use types::{DataType, TypeId};

    /// Plans nothing; a plan still holding `$1` costs `generic`, one with
    /// the value written in costs `custom`.
    struct Costs {
        generic: f64,
        custom: f64,
    }

    impl Planning for Costs {
        fn plan(&self, stmt: BoundStatement) -> BoundStatement {
            stmt
        }
        fn cost(&self, planned: &BoundStatement) -> Option<(f64, usize)> {
            let BoundStatement::Query {
                plan: Plan::Values { rows, .. },
                ..
            } = planned
            else {
                return None;
            };
            let generic = matches!(rows[0][0], Expr::Param(..));
            Some((if generic { self.generic } else { self.custom }, 1))
        }
    }

    fn select_param() -> BoundStatement {
        BoundStatement::Query {
            plan: Plan::Values {
                rows: vec![vec![Expr::Param(0, DataType::new(TypeId::Int4))]],
                width: 1,
            },
            columns: Vec::new(),
        }
    }

    fn is_custom(stmt: &BoundStatement) -> bool {
        matches!(
            stmt,
            BoundStatement::Query { plan: Plan::Values { rows, .. }, .. }
                if matches!(rows[0][0], Expr::Const(Value::Int4(7), _))
        )
    }

    /// Which of `n` executions got custom plans, under `mode`.
    fn run(mode: PlanCacheMode, costs: Costs, n: usize) -> Vec<bool> {
        let settings = PlannerSettings {
            plan_cache_mode: mode,
            ..PlannerSettings::default()
        };
        let catalog = Arc::new(CatalogData::bootstrap());
        let mut cache = PlanCache::new(catalog, select_param());
        (0..n)
            .map(|_| is_custom(&cache.plan_for(&[Value::Int4(7)], &settings, &costs)))
            .collect()
    }

    #[test]
    fn auto_tries_five_custom_plans_then_keeps_a_generic_plan_that_costs_no_more() {
        // Re-planning costs 1000 * 0.0025 * 2 = 5 per custom plan: a generic
        // plan of cost 10 beats custom plans of cost 10 (10 + 5 on average).
        let got = run(
            PlanCacheMode::Auto,
            Costs {
                generic: 10.0,
                custom: 10.0,
            },
            8,
        );
        assert_eq!(got, [true, true, true, true, true, false, false, false]);
    }

    #[test]
    fn auto_keeps_custom_plans_while_the_generic_plan_costs_more() {
        let got = run(
            PlanCacheMode::Auto,
            Costs {
                generic: 1000.0,
                custom: 10.0,
            },
            8,
        );
        assert!(got.iter().all(|&c| c));
    }

    #[test]
    fn forced_modes_are_obeyed() {
        let costs = || Costs {
            generic: 1.0,
            custom: 1000.0,
        };
        assert!(run(PlanCacheMode::ForceCustomPlan, costs(), 7)
            .iter()
            .all(|&c| c));
        assert!(run(PlanCacheMode::ForceGenericPlan, costs(), 7)
            .iter()
            .all(|&c| !c));
    }
}
