//! INSERT into a partitioned table: each row routed to its leaf partition
//! (`partition::PartitionRouter`) and written there with the leaf's own
//! constraints, indexes and row triggers; statement triggers are the
//! parent's. RETURNING sees the row in the parent's column order, its
//! system columns (tableoid) the leaf's.

use std::collections::HashMap;
use std::sync::Arc;

use access::heap::{self, InsertTarget};
use catalog::triggers::TRIGGER_TYPE_INSERT;
use catalog::Table;
use common::{Oid, PgResult};
use sql::expr::Expr;
use sql::plan::Plan;
use types::Value;

use crate::dml::{count_changes, project_returning, Returning};
use crate::ops::build;
use crate::partition::{column_map, map_row, ColumnMap, PartitionRouter};
use crate::ri::RiQueue;
use crate::table_stats::PendingCounts;
use crate::triggers::TableTriggers;
use crate::writer::TableWriter;
use crate::ExecEnv;

/// What writing to one leaf partition needs, made at its first row.
pub(crate) struct LeafTarget {
    pub table: Arc<Table>,
    pub writer: TableWriter,
    triggers: Option<TableTriggers>,
    target: InsertTarget,
    /// The leaf's row in the root's column order (RETURNING).
    to_root: ColumnMap,
    inserted: u64,
}

/// Leaf partitions' writers for one statement, by oid.
pub(crate) struct RoutedInserts {
    pub router: PartitionRouter,
    root: Arc<Table>,
    leaves: HashMap<Oid, LeafTarget>,
    bulk: bool,
}

impl RoutedInserts {
    pub fn new(env: &ExecEnv, root: &Table, bulk: bool) -> PgResult<RoutedInserts> {
        Ok(RoutedInserts {
            router: PartitionRouter::new(env, root)?,
            root: Arc::new(root.clone()),
            leaves: HashMap::new(),
            bulk,
        })
    }

    fn leaf(&mut self, env: &ExecEnv, leaf: &Arc<Table>) -> PgResult<&mut LeafTarget> {
        if !self.leaves.contains_key(&leaf.oid) {
            let t = LeafTarget {
                writer: TableWriter::new(env, leaf)?,
                triggers: TableTriggers::for_event(env, leaf, TRIGGER_TYPE_INSERT, None)?,
                target: if self.bulk {
                    InsertTarget::bulk(env.pool)
                } else {
                    InsertTarget::new()
                },
                to_root: column_map(leaf, &self.root),
                table: leaf.clone(),
                inserted: 0,
            };
            self.leaves.insert(leaf.oid, t);
        }
        Ok(self.leaves.get_mut(&leaf.oid).expect("just added"))
    }

    /// Routes and stores one row given in the root's column order. Returns
    /// the row as stored, in the root's column order, followed by its
    /// system columns when `system` (None: a BEFORE trigger skipped it).
    pub fn insert(
        &mut self,
        env: &mut ExecEnv,
        row: Vec<Value>,
        queue: &mut RiQueue,
        system: bool,
    ) -> PgResult<Option<Vec<Value>>> {
        let (leaf, mut row) = self.router.route(row, env)?;
        let t = self.leaf(env, &leaf)?;
        if let Some(tr) = t.triggers.as_ref().filter(|tr| tr.has_before_row()) {
            match tr.before_row(env, None, Some(row))? {
                Some(r) => row = r,
                None => return Ok(None),
            }
        }
        t.writer.check_row(&row, env)?;
        let mut buf = Vec::new();
        t.writer.form(env, &row, &[], &mut buf)?;
        let tid = heap::insert(env.pool, env.tm, t.table.locator(), &mut buf, &mut t.target)?;
        env.predicate_write(t.table.locator(), None)?;
        t.writer.inserted(env, &row, tid, queue)?;
        if let Some(tr) = t.triggers.as_ref().filter(|tr| tr.has_after_row()) {
            tr.queue_after_row(env, queue, None, Some(&row))?;
        }
        t.inserted += 1;
        let mut out = map_row(&row, &t.to_root);
        if system {
            let mut own = row;
            crate::system_columns::push_written(env, &t.table, tid, &mut own)?;
            out.extend(own.drain(t.table.columns.len()..));
        }
        Ok(Some(out))
    }

    /// Tells the session how many rows each leaf got.
    pub fn finish(&mut self, env: &mut ExecEnv) {
        for (_, t) in self.leaves.drain() {
            let c = PendingCounts {
                inserted: t.inserted,
                ..Default::default()
            };
            count_changes(env, &t.table, c);
        }
    }
}

/// INSERT into partitioned `table`: rows routed to the leaves.
pub(crate) fn insert_routed(
    table: &Table,
    source: &Plan,
    bulk: bool,
    returning: Option<&[Expr]>,
    env: &mut ExecEnv,
) -> PgResult<(u64, Returning)> {
    let triggers = TableTriggers::for_event(env, table, TRIGGER_TYPE_INSERT, None)?;
    if let Some(t) = &triggers {
        t.before_statement(env)?;
    }
    let mut op = build(source, env, None)?;
    let mut routed = RoutedInserts::new(env, table, bulk)?;
    let mut queue = RiQueue::default();
    let width = table.columns.len();
    let reads_system = returning.is_some_and(|r| r.iter().any(|e| e.columns_needed() > width));
    let mut n = 0u64;
    let mut out = Vec::new();
    let r: PgResult<()> = (|| {
        while let Some(row) = op.next(env)? {
            let Some(stored) = routed.insert(env, row, &mut queue, reads_system)? else {
                continue;
            };
            n += 1;
            if n.is_multiple_of(4096) {
                env.check_cancel()?;
            }
            project_returning(returning, &stored, env, &mut out)?;
        }
        Ok(())
    })();
    drop(op);
    routed.finish(env);
    r?;
    if let Some(t) = &triggers {
        t.queue_after_statement(env, &mut queue);
    }
    queue.run(env)?;
    Ok((n, out))
}

/// Moves rows an UPDATE of a partitioned table puts outside their
/// partition: routes them from the statement's target.
pub(crate) struct RowMover {
    routed: RoutedInserts,
}

impl RowMover {
    /// Whether the new version `row` stays in the writer's partition.
    pub fn stays(&self, writer: &TableWriter, row: &[Value], env: &mut ExecEnv) -> PgResult<bool> {
        match &writer.partition {
            Some(p) => p.accepts(row, env),
            None => Ok(true),
        }
    }

    /// Inserts `row` of partition `from` where the target's routing puts it.
    pub fn insert(
        &mut self,
        env: &mut ExecEnv,
        from: &Table,
        row: &[Value],
        queue: &mut RiQueue,
    ) -> PgResult<()> {
        let root_row = map_row(row, &column_map(from, &self.routed.root));
        self.routed.insert(env, root_row, queue, false)?;
        Ok(())
    }
}

/// The leaves an UPDATE or DELETE of partitioned `table` under `qual`
/// reaches, each with the statement's expressions over its columns.
fn leaves_of(env: &ExecEnv, table: &Table, qual: &[Expr]) -> Vec<(Arc<Table>, Vec<Option<usize>>)> {
    sql::plan::partitions::pruned_leaves(env.catalog, table, qual)
}

fn remap_all(exprs: &[Expr], map: &[Option<usize>], width: usize) -> Vec<Expr> {
    exprs
        .iter()
        .map(|e| sql::plan::partitions::remap_columns(e.clone(), map, width))
        .collect()
}

/// UPDATE of partitioned `table`: each leaf partition the quals reach is
/// updated in turn, rows whose key changes moving to their new partition.
pub(crate) fn update_partitioned(
    table: &Table,
    qual: &[Expr],
    assignments: &[(usize, Expr)],
    returning: Option<&[Expr]>,
    env: &mut ExecEnv,
) -> PgResult<(u64, Returning)> {
    let width = table.columns.len();
    let mut mover = RowMover {
        routed: RoutedInserts::new(env, table, false)?,
    };
    let (mut n, mut out) = (0, Vec::new());
    for (leaf, map) in leaves_of(env, table, qual) {
        let leaf_qual = remap_all(qual, &map, width);
        let leaf_assign: Vec<(usize, Expr)> = assignments
            .iter()
            .filter_map(|(i, e)| {
                let target = map.iter().position(|m| *m == Some(*i))?;
                Some((
                    target,
                    sql::plan::partitions::remap_columns(e.clone(), &map, width),
                ))
            })
            .collect();
        let leaf_returning = returning.map(|r| remap_all(r, &map, width));
        let (k, rows) = crate::dml::update_moving(
            &leaf,
            &leaf_qual,
            None,
            &leaf_assign,
            leaf_returning.as_deref(),
            Some(&mut mover),
            env,
        )?;
        n += k;
        out.extend(rows);
    }
    mover.routed.finish(env);
    Ok((n, out))
}

/// DELETE from partitioned `table`: from each leaf the quals reach.
pub(crate) fn delete_partitioned(
    table: &Table,
    qual: &[Expr],
    returning: Option<&[Expr]>,
    env: &mut ExecEnv,
) -> PgResult<(u64, Returning)> {
    let width = table.columns.len();
    let (mut n, mut out) = (0, Vec::new());
    for (leaf, map) in leaves_of(env, table, qual) {
        let leaf_qual = remap_all(qual, &map, width);
        let leaf_returning = returning.map(|r| remap_all(r, &map, width));
        let (k, rows) =
            crate::dml::delete(&leaf, &leaf_qual, None, leaf_returning.as_deref(), env)?;
        n += k;
        out.extend(rows);
    }
    Ok((n, out))
}
