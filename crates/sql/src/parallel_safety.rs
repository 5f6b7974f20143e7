//! Parallel safety and volatility of bound expressions, as PostgreSQL's
//! max_parallel_hazard and contain_volatile_functions judge them: the
//! planner asks here whether an expression may run in a parallel worker
//! without looking anything up in the catalog.
//!
//! User functions carry their own labels (`UserFuncCall::parallel`);
//! built-in functions are safe except those PostgreSQL 15 labels
//! otherwise in pg_proc.proparallel. Subqueries count as safe: whether
//! their plans can run in a worker is the planner's to decide.

use crate::expr::{Expr, ParallelSafety, SysFunc, Volatility};
use crate::plan::Plan;

/// The most hazardous label of any call in `expr` (not looking into
/// subquery plans).
pub fn max_parallel_hazard(expr: &Expr) -> ParallelSafety {
    let mut worst = ParallelSafety::Safe;
    expr.visit(&mut |e| worst = worst.max(node_hazard(e)));
    worst
}

/// `max_parallel_hazard` over every expression of `plan` and its inputs,
/// subquery plans included.
pub fn plan_parallel_hazard(plan: &Plan) -> ParallelSafety {
    let mut worst = ParallelSafety::Safe;
    for_each_plan_expr(plan, &mut |e| worst = worst.max(node_hazard(e)));
    worst
}

/// Whether `plan` calls a VOLATILE user function anywhere (subqueries
/// included): such a call may write, so the statement needs an xid.
pub fn plan_calls_volatile_user_function(plan: &Plan) -> bool {
    let mut found = false;
    for_each_plan_expr(plan, &mut |e| {
        found |= matches!(e, Expr::UserFunc(c) if c.volatility == Volatility::Volatile)
    });
    found
}

/// Calls `f` on every expression node of `plan`, its inputs and the plans
/// of subqueries in them.
fn for_each_plan_expr(plan: &Plan, f: &mut dyn FnMut(&Expr)) {
    for e in crate::plan::walk::node_exprs(plan) {
        visit_with_subqueries(e, f);
    }
    for c in crate::plan::explain::children(plan) {
        for_each_plan_expr(c, f);
    }
}

fn visit_with_subqueries(e: &Expr, f: &mut dyn FnMut(&Expr)) {
    e.visit(&mut |n| {
        f(n);
        match n {
            Expr::ScalarSubquery(p, _)
            | Expr::ArraySubquery(p, _)
            | Expr::Exists { plan: p, .. }
            | Expr::InSubquery { plan: p, .. } => for_each_plan_expr(p, f),
            _ => {}
        }
    });
}

/// One node's own label (its children are visited apart).
fn node_hazard(e: &Expr) -> ParallelSafety {
    match e {
        Expr::UserFunc(c) => c.parallel,
        Expr::Sys { func, .. } => sys_hazard(*func),
        Expr::Func { func, .. } => builtin_hazard(func.0.name),
        _ => ParallelSafety::Safe,
    }
}

/// PostgreSQL 15's proparallel of the functions bound to `SysFunc`.
fn sys_hazard(func: SysFunc) -> ParallelSafety {
    use ParallelSafety::*;
    match func {
        // Sequences change shared state a worker cannot report back.
        SysFunc::NextVal | SysFunc::SetVal | SysFunc::CurrVal | SysFunc::LastVal => Unsafe,
        SysFunc::SetConfig | SysFunc::Notify => Unsafe,
        SysFunc::Advisory(_) | SysFunc::AdvisoryUnlockAll => Unsafe,
        // Session state the leader has and a worker would not see.
        SysFunc::CurrentSetting
        | SysFunc::BackendPid
        | SysFunc::NotificationQueueUsage
        | SysFunc::Prewarm
        | SysFunc::ReloadConf
        | SysFunc::CancelBackend
        | SysFunc::TerminateBackend
        | SysFunc::BlockingPids
        | SysFunc::IsolationTestSessionIsBlocked => Restricted,
        _ => Safe,
    }
}

/// PostgreSQL 15's proparallel of the built-in functions that are not safe.
fn builtin_hazard(name: &str) -> ParallelSafety {
    match name {
        "random" | "setseed" | "inet_client_addr" | "inet_client_port" | "pg_backend_pid"
        | "current_setting" | "txid_current" | "pg_current_xact_id" => ParallelSafety::Restricted,
        "set_config" | "nextval" | "setval" | "currval" | "lastval" => ParallelSafety::Unsafe,
        _ => ParallelSafety::Safe,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use types::{TypeId, Value};

    fn user_call(parallel: ParallelSafety, args: Vec<Expr>) -> Expr {
        let f = catalog::functions::Function {
            oid: 1,
            name: "f".into(),
            namespace: 2200,
            db_oid: 5,
            language: catalog::functions::FunctionLanguage::Sql,
            volatility: Volatility::Volatile,
            parallel,
            strict: false,
            returns_set: false,
            return_type: TypeId::Int4.oid(),
            arg_types: vec![],
            arg_names: vec![],
            arg_defaults: vec![],
            variadic: false,
            source: "select 1".into(),
        };
        Expr::UserFunc(Box::new(crate::expr::UserFuncCall {
            function: Arc::new(f),
            args,
            ret: TypeId::Int4.into(),
            volatility: Volatility::Volatile,
            parallel,
        }))
    }

    #[test]
    fn the_worst_label_wins() {
        let one = Expr::Const(Value::Int4(1), TypeId::Int4.into());
        assert_eq!(max_parallel_hazard(&one), ParallelSafety::Safe);
        let safe = user_call(ParallelSafety::Safe, vec![one.clone()]);
        assert_eq!(max_parallel_hazard(&safe), ParallelSafety::Safe);
        let nested = user_call(ParallelSafety::Restricted, vec![safe]);
        assert_eq!(max_parallel_hazard(&nested), ParallelSafety::Restricted);
        let seq = Expr::Sys {
            func: SysFunc::NextVal,
            args: vec![],
            ty: TypeId::Int8.into(),
        };
        let both = Expr::And(vec![nested, seq]);
        assert_eq!(max_parallel_hazard(&both), ParallelSafety::Unsafe);
    }
}
