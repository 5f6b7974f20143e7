//! ALTER TABLE ... DROP COLUMN and ALTER COLUMN ... TYPE: the dependents
//! dropped, the catalog changed, then the table rewritten into new files
//! (its TOAST relation and indexes too) by inserting every row as the
//! change computes it from the old file. PostgreSQL drops a column without
//! a rewrite (attisdropped); here the catalog keeps no dropped columns
//! (`catalog::columns`), so the rows lose the value at once.

use std::sync::Arc;

use catalog::{ConstraintKind, Table};
use common::{PgError, PgResult, SqlState};
use sql::expr::Expr;
use sql::plan::{AlterTableAction, Plan};

use super::{CommandContext, Notices};
use crate::ExecEnv;

/// DROP COLUMN (`action`, of `table` as the actions before left it),
/// then the actions after it.
pub(super) fn drop_column(
    cx: &mut CommandContext,
    env: &mut ExecEnv,
    notices: &mut Notices,
    table: &Table,
    action: &AlterTableAction,
    rest: &[AlterTableAction],
) -> PgResult<String> {
    let index = drop_dependents(cx, env, notices, table, action)?;
    let catalog = cx.catalog;
    catalog.drop_column(cx.changes(env)?, env.cid, table.oid, index)?;
    let exprs = (0..table.columns.len())
        .filter(|&c| c != index)
        .map(|c| Expr::Column(c, table.columns[c].data_type()))
        .collect();
    rewrite(cx, env, notices, table, exprs, rest)
}

/// ALTER COLUMN ... TYPE of column `index`: it becomes `column`, each
/// row's value `using` (over the row as it was).
pub(super) struct Retype<'a> {
    pub index: usize,
    pub column: &'a catalog::Column,
    pub using: &'a Expr,
}

/// ALTER COLUMN TYPE, then the actions after it.
pub(super) fn alter_type(
    cx: &mut CommandContext,
    env: &mut ExecEnv,
    notices: &mut Notices,
    table: &Table,
    retype: Retype,
    rest: &[AlterTableAction],
) -> PgResult<String> {
    let Retype {
        index,
        column,
        using,
    } = retype;
    let catalog = cx.catalog;
    catalog.retype_column(cx.changes(env)?, env.cid, table.oid, index, column.clone())?;
    let exprs = (0..table.columns.len())
        .map(|c| {
            if c == index {
                using.clone()
            } else {
                Expr::Column(c, table.columns[c].data_type())
            }
        })
        .collect();
    rewrite(cx, env, notices, table, exprs, rest)
}

/// What goes with the column: with CASCADE the views, triggers and other
/// tables' foreign keys using it that the binder found (one NOTICE, as
/// PostgreSQL's), and always its indexes (with the PRIMARY KEY or UNIQUE
/// constraints owning them), this table's constraints on it and the
/// sequences it owns.
/// Returns the column's index.
fn drop_dependents(
    cx: &mut CommandContext,
    env: &ExecEnv,
    notices: &mut Notices,
    table: &Table,
    action: &AlterTableAction,
) -> PgResult<usize> {
    let AlterTableAction::DropColumn {
        index: Some(index),
        views,
        triggers,
        foreign_keys,
        ..
    } = action
    else {
        unreachable!("the caller matched a DROP COLUMN of a column");
    };
    let index = *index;
    let attnum = index as i16 + 1;
    let name = &table.columns[index].name;
    let mut cascaded: Vec<String> = views.iter().map(|v| format!("view {}", v.name)).collect();
    cascaded.extend(triggers.iter().chain(foreign_keys).map(|(_, d)| d.clone()));
    if !cascaded.is_empty() {
        notices(&super::constraint::cascade_notice(&cascaded))?;
    }
    let catalog = cx.catalog;
    for v in views.iter().rev() {
        catalog.drop_view(cx.changes(env)?, env.cid, v.oid)?;
    }
    for (t, _) in triggers {
        catalog.drop_trigger(cx.changes(env)?, env.cid, *t)?;
    }
    for (c, _) in foreign_keys {
        catalog.drop_constraint(cx.changes(env)?, env.cid, *c)?;
    }
    let current = Arc::clone(cx.changes(env)?.catalog());
    // Foreign keys relying on an index that goes through other columns
    // (a two-column key) go as PostgreSQL's would: refused without CASCADE.
    for i in current.indexes_of(table.oid) {
        if !i.keys.iter().any(|k| k.attnum == attnum) {
            continue;
        }
        let relies = current.constraints.values().any(|c| {
            matches!(c.kind, ConstraintKind::ForeignKey { ref_index, .. } if ref_index == i.oid)
        });
        if relies {
            return Err(PgError::new(
                SqlState::DEPENDENT_OBJECTS_STILL_EXIST,
                format!(
                    "cannot drop column {name} of table {} because other objects depend on it",
                    table.name
                ),
            )
            .with_detail(format!("index {} is used by a foreign key", i.name)));
        }
        catalog.drop_index(cx.changes(env)?, env.cid, i.oid)?;
    }
    let own: Vec<_> = current
        .constraints_of(table.oid)
        // PRIMARY KEY and UNIQUE went with their index above.
        .filter(|c| {
            c.columns.contains(&attnum)
                && !matches!(
                    c.kind,
                    ConstraintKind::PrimaryKey { .. } | ConstraintKind::Unique { .. }
                )
        })
        .map(|c| c.oid)
        .collect();
    for c in own {
        catalog.drop_constraint(cx.changes(env)?, env.cid, c)?;
    }
    let sequences: Vec<_> = current
        .sequences
        .values()
        .filter(|q| q.owned_by == Some((table.oid, attnum)))
        .map(|q| q.oid)
        .collect();
    for q in sequences {
        catalog.drop_sequence(cx.changes(env)?, env.cid, q)?;
    }
    Ok(index)
}

/// Gives the table new files and fills them with `exprs` computed over
/// each row of `before` (the table as it was, its old files), through the
/// insert path, so the new indexes and TOAST relation are filled and the
/// constraints checked; no trigger fires (a rewrite is no INSERT). The
/// actions after run as the next command, which sees the new rows.
fn rewrite(
    cx: &mut CommandContext,
    env: &mut ExecEnv,
    notices: &mut Notices,
    before: &Table,
    exprs: Vec<Expr>,
    rest: &[AlterTableAction],
) -> PgResult<String> {
    let catalog = cx.catalog;
    let after = catalog.new_relfilenode(cx.changes(env)?, env.cid, before.oid)?;
    let working = Arc::clone(cx.changes(env)?.catalog());
    let source = Plan::Project {
        input: Box::new(Plan::SeqScan {
            table: Arc::new(before.clone()),
            qual: Vec::new(),
            alias: None,
            tid: false,
            system: Vec::new(),
            index: None,
        }),
        exprs,
    };
    {
        let (snapshot, cid) = (env.snapshot, env.cid);
        let mut writer = env.nested_in(&working, snapshot, cid, &[]);
        writer.fire_triggers = false;
        crate::dml::insert(&after, &source, true, None, None, &mut writer)?;
    }
    let cid = env.hooks.next_command_id();
    let snapshot = env.snapshot.for_command(cid);
    let mut next = env.nested(&snapshot, cid, &[]);
    super::table::alter(cx, &mut next, notices, &after, rest)
}
