//! The heavyweight locks a bound statement takes before it runs, held to
//! the end of the transaction: PostgreSQL's modes for opening relations
//! (reads AccessShare, the target of INSERT/UPDATE/DELETE/COPY FROM
//! RowExclusive, VACUUM and ANALYZE ShareUpdateExclusive, DROP/TRUNCATE/ALTER
//! AccessExclusive), and the catalog-change lock for statements that
//! change the catalog.

use common::Oid;
use txn::lock::{LockMode, LockTag, CATALOG_CHANGE};

use super::{BoundStatement, Plan};
use crate::expr::Expr;

/// The locks `stmt` takes in database `db`, in the order to take them
/// (relations first, then the catalog-change lock). LOCK TABLE's own locks
/// are not listed: the session takes them with their NOWAIT.
pub fn statement_locks(stmt: &BoundStatement, db: Oid) -> Vec<(LockTag, LockMode)> {
    let mut rels: Vec<(Oid, LockMode)> = Vec::new();
    collect(stmt, &mut rels);
    let mut out: Vec<(LockTag, LockMode)> = Vec::with_capacity(rels.len() + 1);
    for (rel, mode) in rels {
        let tag = LockTag::Relation { db, rel };
        if !out.contains(&(tag, mode)) {
            out.push((tag, mode));
        }
    }
    if changes_catalog(stmt) {
        out.push((CATALOG_CHANGE, LockMode::AccessExclusive));
    }
    out
}

/// Whether running `stmt` changes the catalog (it then holds the
/// catalog-change lock to the end of its transaction).
pub fn changes_catalog(stmt: &BoundStatement) -> bool {
    match stmt {
        BoundStatement::WithModifying { statement, .. } => changes_catalog(statement),
        BoundStatement::CreateTable { .. }
        | BoundStatement::CreateIndex { .. }
        | BoundStatement::DropIndex { .. }
        | BoundStatement::Reindex { .. }
        | BoundStatement::DropTable { .. }
        | BoundStatement::Truncate { .. }
        | BoundStatement::AddColumn { .. }
        | BoundStatement::AlterTable { .. }
        | BoundStatement::CreateSchema { .. }
        | BoundStatement::CreateView { .. }
        | BoundStatement::DropView { .. }
        | BoundStatement::CreateFunction { .. }
        | BoundStatement::CreateEnumType { .. }
        | BoundStatement::AlterEnumType { .. }
        | BoundStatement::DropType { .. }
        | BoundStatement::CreateDomain { .. }
        | BoundStatement::AlterDomain { .. }
        | BoundStatement::DropFunction { .. }
        | BoundStatement::AlterFunction { .. }
        | BoundStatement::CreateTrigger { .. }
        | BoundStatement::DropTrigger { .. }
        | BoundStatement::SetTriggersEnabled { .. }
        | BoundStatement::CreateSequence { .. }
        | BoundStatement::DropSequence { .. }
        | BoundStatement::AlterSequenceOwnedBy { .. }
        | BoundStatement::Comment { .. }
        | BoundStatement::DropSchema { .. }
        | BoundStatement::Analyze { .. }
        // VACUUM stores relpages/reltuples in the table's pg_class row
        // (Catalog::update_statistics): without the lock its transaction's
        // catalog version, taken when it began, would be published over a
        // concurrent DDL's and leave the relcache with stale row versions.
        | BoundStatement::Vacuum { .. }
        | BoundStatement::CreateDatabase { .. }
        | BoundStatement::DropDatabase { .. } => true,
        BoundStatement::Role(r) => r.writes_catalog(),
        _ => false,
    }
}

fn collect(stmt: &BoundStatement, out: &mut Vec<(Oid, LockMode)>) {
    use LockMode::*;
    match stmt {
        BoundStatement::Explain { statement, .. } => collect(statement, out),
        BoundStatement::WithModifying { ctes, statement } => {
            for c in ctes {
                collect(&c.statement, out);
            }
            collect(statement, out);
        }
        BoundStatement::Query { plan, .. } => plan_relations(plan, AccessShare, out),
        BoundStatement::DeclareCursor { query, .. } => collect(query, out),
        BoundStatement::Insert {
            table,
            source,
            returning,
            ..
        } => {
            out.push((table.oid, RowExclusive));
            plan_relations(source, AccessShare, out);
            for e in returning.iter().flat_map(|r| &r.0) {
                expr_relations(e, out);
            }
        }
        BoundStatement::Update {
            table,
            qual,
            assignments,
            returning,
            join,
            ..
        } => {
            out.push((table.oid, RowExclusive));
            if let Some(j) = join {
                plan_relations(&j.plan, AccessShare, out);
            }
            let exprs = qual
                .iter()
                .chain(assignments.iter().map(|a| &a.1))
                .chain(returning.iter().flat_map(|r| &r.0));
            for e in exprs {
                expr_relations(e, out);
            }
        }
        BoundStatement::Delete {
            table,
            qual,
            returning,
            join,
            ..
        } => {
            out.push((table.oid, RowExclusive));
            if let Some(j) = join {
                plan_relations(&j.plan, AccessShare, out);
            }
            for e in qual.iter().chain(returning.iter().flat_map(|r| &r.0)) {
                expr_relations(e, out);
            }
        }
        BoundStatement::CopyFrom(target) => out.push((target.table.oid, RowExclusive)),
        // As PostgreSQL's CreateTrigger, RemoveTriggerById and ATExecEnableDisableTrigger.
        BoundStatement::CreateTrigger { trigger, .. } => {
            out.push((trigger.table, ShareRowExclusive))
        }
        BoundStatement::DropTrigger {
            trigger: Some(t), ..
        } => out.push((t.table, AccessExclusive)),
        BoundStatement::SetTriggersEnabled { triggers, .. } => {
            if let Some(t) = triggers.first() {
                out.push((t.table, ShareRowExclusive));
            }
        }
        BoundStatement::CopyTo(source) => plan_relations(&source.plan, AccessShare, out),
        BoundStatement::CreateTable {
            source,
            constraints,
            ..
        } => {
            if let Some((plan, _)) = source {
                plan_relations(plan, AccessShare, out);
            }
            // A foreign key's referenced table, as ADD FOREIGN KEY locks it.
            for c in constraints {
                if let super::ConstraintSpecKind::ForeignKey { ref_table, .. } = c.kind {
                    if ref_table != 0 {
                        out.push((ref_table, ShareRowExclusive));
                    }
                }
            }
        }
        BoundStatement::DropTable {
            tables,
            related,
            views,
            ..
        } => {
            out.extend(tables.iter().map(|t| (t.oid, AccessExclusive)));
            out.extend(related.iter().map(|&t| (t, AccessExclusive)));
            out.extend(views.iter().map(|v| (v.oid, AccessExclusive)));
        }
        BoundStatement::Truncate {
            tables, cascaded, ..
        } => out.extend(
            tables
                .iter()
                .chain(cascaded)
                .map(|t| (t.oid, AccessExclusive)),
        ),
        BoundStatement::AddColumn { table, .. } => out.push((table.oid, AccessExclusive)),
        BoundStatement::AlterTable {
            table,
            actions,
            related,
        } => {
            let mode = actions.iter().map(alter_action_lock).max();
            out.push((table.oid, mode.unwrap_or(AccessExclusive)));
            out.extend(related.iter().copied());
        }
        // Writers wait for the build (PostgreSQL's ShareLock), readers not.
        BoundStatement::CreateIndex { table, .. } => out.push((table.oid, Share)),
        BoundStatement::DropIndex {
            indexes, related, ..
        } => {
            for i in indexes {
                out.push((i.table, AccessExclusive));
                out.push((i.oid, AccessExclusive));
            }
            out.extend(related.iter().map(|&t| (t, AccessExclusive)));
        }
        BoundStatement::Reindex { indexes } => {
            for i in indexes {
                out.push((i.table, Share));
                out.push((i.oid, AccessExclusive));
            }
        }
        BoundStatement::DropView {
            views, dependents, ..
        } => out.extend(
            views
                .iter()
                .chain(dependents)
                .map(|v| (v.oid, AccessExclusive)),
        ),
        BoundStatement::DropSequence { sequences, .. } => {
            out.extend(sequences.iter().map(|s| (s.oid, AccessExclusive)))
        }
        BoundStatement::AlterSequenceOwnedBy {
            sequence, owned_by, ..
        } => {
            out.push((sequence.oid, AccessExclusive));
            if let Some((table, _)) = owned_by {
                out.push((*table, AccessShare));
            }
        }
        // Self-conflicting: one VACUUM (or ANALYZE) of a table at a time,
        // so only one makes its dead line pointers unused (access README
        // rule 16).
        BoundStatement::Analyze { targets, .. } | BoundStatement::Vacuum { targets, .. } => {
            out.extend(targets.iter().map(|(t, _)| (t.oid, ShareUpdateExclusive)))
        }
        _ => {}
    }
}

/// The lock an ALTER TABLE action takes on its table (PostgreSQL's
/// AlterTableGetLockLevel): adding a foreign key lets readers in, and
/// VALIDATE CONSTRAINT writers too.
fn alter_action_lock(action: &super::AlterTableAction) -> LockMode {
    use super::{AlterTableAction as A, ConstraintSpecKind as K};
    match action {
        A::AddConstraint(c) if matches!(c.kind, K::ForeignKey { .. }) => {
            LockMode::ShareRowExclusive
        }
        A::ValidateConstraint(_) => LockMode::ShareUpdateExclusive,
        _ => LockMode::AccessExclusive,
    }
}

/// The tables `plan` scans, in `mode`, and those its subqueries read.
pub fn plan_relations(plan: &Plan, mode: LockMode, out: &mut Vec<(Oid, LockMode)>) {
    let mut exprs: Vec<&Expr> = Vec::new();
    match plan {
        Plan::SeqScan { table, qual, .. } => {
            out.push((table.oid, mode));
            exprs.extend(qual);
        }
        Plan::Values { rows, .. } => exprs.extend(rows.iter().flatten()),
        Plan::Filter { input, qual } => {
            plan_relations(input, mode, out);
            exprs.push(qual);
        }
        Plan::Project { input, exprs: e } => {
            plan_relations(input, mode, out);
            exprs.extend(e);
        }
        Plan::ProjectSet {
            input,
            exprs: e,
            srfs,
        } => {
            plan_relations(input, mode, out);
            exprs.extend(e.iter().chain(srfs.iter().flat_map(|c| &c.args)));
        }
        Plan::SystemView { .. } => {}
        Plan::FunctionScan { calls, .. } => exprs.extend(calls.iter().flat_map(|c| &c.args)),
        Plan::NestedLoop {
            left, right, on, ..
        }
        | Plan::LateralJoin {
            left, right, on, ..
        } => {
            plan_relations(left, mode, out);
            plan_relations(right, mode, out);
            exprs.extend(on);
        }
        Plan::HashJoin {
            left,
            right,
            hash_cond,
            join_filter,
            ..
        } => {
            plan_relations(left, mode, out);
            plan_relations(right, mode, out);
            exprs.extend(hash_cond.iter().chain(join_filter));
        }
        Plan::Aggregate {
            input, keys, aggs, ..
        } => {
            plan_relations(input, mode, out);
            exprs.extend(keys.iter().chain(aggs.iter().flat_map(|a| a.input_exprs())));
        }
        Plan::WindowAgg { input, funcs, .. } => {
            plan_relations(input, mode, out);
            exprs.extend(funcs.iter().flat_map(|f| f.children()));
        }
        Plan::Sort { input, .. } | Plan::Distinct { input } | Plan::Gather { input, .. } => {
            plan_relations(input, mode, out)
        }
        Plan::Limit {
            input,
            limit,
            offset,
            ..
        } => {
            plan_relations(input, mode, out);
            exprs.extend(limit.iter().chain(offset));
        }
        Plan::SetOp { left, right, .. }
        | Plan::RecursiveUnion {
            base: left,
            recursive: right,
            ..
        } => {
            plan_relations(left, mode, out);
            plan_relations(right, mode, out);
        }
        Plan::CteScan { plan, .. } => plan_relations(plan, mode, out),
        // The statement's relations are the WithModifying's.
        Plan::WorkTableScan { .. } | Plan::ModifyingCteRows { .. } => {}
        Plan::LockRows { input, marks } => {
            let start = out.len();
            plan_relations(input, mode, out);
            // A table the clause names is opened RowShare instead, as
            // PostgreSQL's range table entry with a row mark is.
            for entry in &mut out[start..] {
                if marks
                    .iter()
                    .any(|m| m.lock.is_some() && m.table.oid == entry.0)
                {
                    entry.1 = LockMode::RowShare;
                }
            }
        }
    }
    for e in exprs {
        expr_relations(e, out);
    }
}

/// Tables read by subqueries inside `e` (AccessShare).
fn expr_relations(e: &Expr, out: &mut Vec<(Oid, LockMode)>) {
    e.visit(&mut |x| match x {
        Expr::ScalarSubquery(plan, _)
        | Expr::ArraySubquery(plan, _)
        | Expr::Exists { plan, .. }
        | Expr::InSubquery { plan, .. } => plan_relations(plan, LockMode::AccessShare, out),
        _ => {}
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ddl_takes_the_catalog_change_lock_last() {
        let stmt = BoundStatement::CreateSchema {
            name: "s".into(),
            if_not_exists: false,
        };
        assert_eq!(
            statement_locks(&stmt, 5),
            vec![(CATALOG_CHANGE, LockMode::AccessExclusive)]
        );
        let q = BoundStatement::Query {
            plan: Plan::Values {
                rows: vec![],
                width: 0,
            },
            columns: vec![],
        };
        assert!(statement_locks(&q, 5).is_empty());
    }
}
