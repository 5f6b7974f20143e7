//! UPDATE ... FROM and DELETE ... USING: the target table joined with the
//! other FROM items (PostgreSQL's transformUpdateStmt/transformDeleteStmt
//! with a FROM list).
//!
//! The join is bound as a locking SELECT's FROM list is (`locking.rs`):
//! every table scan also emits its row version's tid, so the executor finds
//! the target row to change and, under READ COMMITTED, re-runs the join
//! over the newest target version and the same versions of the other
//! tables (EvalPlanQual). The target comes first: its columns, then its
//! tid, then the other items' columns.

use std::sync::Arc;

use catalog::Table;
use common::{PgError, PgResult, SqlState};
use sqlparser::ast;

use super::locking::LockScope;
use super::{Binder, Scope};
use crate::expr::Expr;
use crate::plan::{JoinKind, ModifyJoin, Plan};

impl Binder<'_, '_> {
    /// The target `table` (under `alias`) joined with `from`, without
    /// WHERE, and the scope of its rows.
    pub(super) fn bind_modify_from(
        &mut self,
        table: &Arc<Table>,
        alias: Option<&str>,
        from: &[ast::TableWithJoins],
    ) -> PgResult<(ModifyJoin, Scope)> {
        let target_name = alias.unwrap_or(&table.name).to_string();
        let outer_locking = self.locking.replace(LockScope::for_modify());
        let mut scope = Self::table_scope(table, alias);
        self.add_lock_rel(&target_name, table, &mut scope);
        let target_system = self.add_system_columns(table, &target_name, &mut scope);
        let mut plan = Plan::SeqScan {
            table: table.clone(),
            qual: Vec::new(),
            alias: alias.map(str::to_string),
            tid: true,
            system: target_system.clone(),
            index: None,
        };
        if from.is_empty() {
            // The plain form reading system columns (`system_columns.rs`).
            let lock = std::mem::replace(&mut self.locking, outer_locking);
            let marks = lock.expect("set above").modify_marks(&scope);
            let join = ModifyJoin {
                plan,
                marks,
                target_system,
            };
            return Ok((join, scope));
        }
        // The FROM items cannot see the target (PostgreSQL adds it to the
        // namespace only for WHERE, SET and RETURNING).
        let outer_target = self.modify_target.replace(target_name.clone());
        let r = self.bind_from_items(from, &target_name);
        self.modify_target = outer_target;
        let lock = std::mem::replace(&mut self.locking, outer_locking);
        let (items, items_scope) = r?;
        let (lw, rw) = (scope.len(), items_scope.len());
        scope.extend(items_scope);
        plan = Plan::NestedLoop {
            left: Box::new(plan),
            right: Box::new(items),
            kind: JoinKind::Inner,
            on: None,
            left_width: lw,
            right_width: rw,
        };
        let marks = lock.expect("set above").modify_marks(&scope);
        let join = ModifyJoin {
            plan,
            marks,
            target_system,
        };
        Ok((join, scope))
    }

    /// The FROM list's items cross-joined, each checked against the
    /// target's reference name.
    fn bind_from_items(
        &mut self,
        from: &[ast::TableWithJoins],
        target_name: &str,
    ) -> PgResult<(Plan, Scope)> {
        let mut acc: Option<(Plan, Scope)> = None;
        for twj in from {
            let (p, sc) = self.bind_table_with_joins(twj)?;
            if sc
                .iter()
                .any(|c| c.qualifier.as_deref() == Some(target_name))
            {
                return Err(PgError::new(
                    SqlState::DUPLICATE_ALIAS,
                    format!("table name \"{target_name}\" specified more than once"),
                ));
            }
            acc = Some(match acc {
                None => (p, sc),
                Some((lp, mut ls)) => {
                    let (lw, rw) = (ls.len(), sc.len());
                    ls.extend(sc);
                    let plan = Plan::NestedLoop {
                        left: Box::new(lp),
                        right: Box::new(p),
                        kind: JoinKind::Inner,
                        on: None,
                        left_width: lw,
                        right_width: rw,
                    };
                    (plan, ls)
                }
            });
        }
        acc.ok_or_else(|| PgError::syntax("syntax error at end of input"))
    }

    /// The statement's qual and join: with a join, WHERE filters the join
    /// (the planner pushes each conjunct where it belongs) and the
    /// statement's own qual is empty.
    pub(super) fn modify_join(
        join: Option<ModifyJoin>,
        qual: Vec<Expr>,
    ) -> (Vec<Expr>, Option<Box<ModifyJoin>>) {
        let Some(mut join) = join else {
            return (qual, None);
        };
        let filter = match qual.len() {
            0 => None,
            1 => qual.into_iter().next(),
            _ => Some(Expr::And(qual)),
        };
        if let Some(qual) = filter {
            join.plan = Plan::Filter {
                input: Box::new(join.plan),
                qual,
            };
        }
        (Vec::new(), Some(Box::new(join)))
    }
}
