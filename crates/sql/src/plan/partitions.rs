//! Scans of partitioned tables: after the scan's quals are placed, a Seq
//! Scan of a partitioned table becomes an Append (a UNION ALL chain, which
//! EXPLAIN prints as one Append) over scans of the leaf partitions its
//! quals do not rule out (plan-time pruning, `crate::partition::prune`),
//! each with the quals on its own columns. A leaf whose columns are in
//! another order is read through a Project back into the parent's order,
//! so the nodes above see the parent's columns. PostgreSQL names the
//! children's aliases `alias_1`, `alias_2`, ... (one alone keeps `alias`).

use std::sync::Arc;

use catalog::{CatalogData, Table};

use super::walk::children_mut;
use super::{Plan, PlannerContext, SetOpKind};
use crate::expr::Expr;

/// Replaces every scan of a partitioned table in `plan` by its Append.
pub(crate) fn expand(mut plan: Plan, cx: &PlannerContext) -> Plan {
    if let Some(catalog) = cx.sizes.catalog() {
        expand_in_place(&mut plan, catalog);
    }
    plan
}

fn expand_in_place(p: &mut Plan, catalog: &CatalogData) {
    for c in children_mut(p) {
        expand_in_place(c, catalog);
    }
    if matches!(p, Plan::SeqScan { table, .. } if table.is_partitioned()) {
        let placeholder = Plan::Values {
            rows: Vec::new(),
            width: 0,
        };
        let scan = std::mem::replace(p, placeholder);
        *p = append_of(scan, catalog);
    }
}

/// The leaves of `table` rows passing `qual` may be in, each with the
/// column map from `root`'s columns to its own, in bound order.
pub fn pruned_leaves(
    catalog: &CatalogData,
    root: &Table,
    qual: &[Expr],
) -> Vec<(Arc<Table>, Vec<Option<usize>>)> {
    let mut out = Vec::new();
    collect_leaves(catalog, root, root, qual, &mut out);
    out
}

fn collect_leaves(
    catalog: &CatalogData,
    root: &Table,
    table: &Table,
    qual: &[Expr],
    out: &mut Vec<(Arc<Table>, Vec<Option<usize>>)>,
) {
    let Some(key) = table.partition_key.as_deref() else {
        let map = table
            .columns
            .iter()
            .map(|c| root.columns.iter().position(|r| r.name == c.name))
            .collect();
        out.push((Arc::new(table.clone()), map));
        return;
    };
    // The key's columns as columns of the root's rows (the quals' terms).
    let key_columns: Vec<Option<usize>> = key
        .parts
        .iter()
        .map(|p| {
            if p.attnum == 0 {
                return None;
            }
            let name = &table.columns[p.attnum as usize - 1].name;
            root.columns.iter().position(|c| &c.name == name)
        })
        .collect();
    let Ok(parts) = crate::partition::ordered_partitions(catalog, table) else {
        return;
    };
    for (child, _) in crate::partition::prune(parts, key, &key_columns, qual) {
        collect_leaves(catalog, root, child, qual, out);
    }
}

/// An expression over the root's columns rewritten over the leaf's
/// (`map[leaf column] = root column`); the columns after the root's
/// (tid, system columns) shift to follow the leaf's.
pub fn remap_columns(e: Expr, map: &[Option<usize>], root_width: usize) -> Expr {
    e.transform(&mut |e| {
        Ok(match e {
            Expr::Column(i, ty) if i < root_width => {
                let leaf = map.iter().position(|m| *m == Some(i)).unwrap_or(i);
                Expr::Column(leaf, ty)
            }
            Expr::Column(i, ty) => Expr::Column(i - root_width + map.len(), ty),
            other => other,
        })
    })
    .expect("remapping columns does not fail")
}

fn append_of(scan: Plan, catalog: &CatalogData) -> Plan {
    let Plan::SeqScan {
        table,
        qual,
        alias,
        tid,
        system,
        ..
    } = scan
    else {
        unreachable!("only scans are expanded");
    };
    let root_width = table.columns.len();
    let extra = usize::from(tid) + system.len();
    let leaves = pruned_leaves(catalog, &table, &qual);
    let base_alias = alias.clone().unwrap_or_else(|| table.name.clone());
    let single = leaves.len() == 1;
    let mut scans: Vec<Plan> = leaves
        .into_iter()
        .enumerate()
        .map(|(k, (leaf, map))| {
            let identity =
                map.len() == root_width && map.iter().enumerate().all(|(i, m)| *m == Some(i));
            let leaf_width = leaf.columns.len();
            let leaf_qual: Vec<Expr> = if identity {
                qual.clone()
            } else {
                qual.iter()
                    .map(|q| remap_columns(q.clone(), &map, root_width))
                    .collect()
            };
            let child_alias = if single {
                base_alias.clone()
            } else {
                format!("{base_alias}_{}", k + 1)
            };
            let types = leaf.column_types();
            let s = Plan::SeqScan {
                table: leaf.clone(),
                qual: leaf_qual,
                alias: Some(child_alias),
                tid,
                system: system.clone(),
                index: None,
            };
            if identity {
                return s;
            }
            // Back into the root's column order.
            let mut exprs: Vec<Expr> = (0..root_width)
                .map(|i| {
                    let col = map.iter().position(|m| *m == Some(i));
                    match col {
                        Some(c) => Expr::Column(c, types[c]),
                        None => Expr::Const(types::Value::Null, table.columns[i].data_type()),
                    }
                })
                .collect();
            let extra_types = extra_column_types(tid, &system);
            exprs.extend((0..extra).map(|k| Expr::Column(leaf_width + k, extra_types[k])));
            Plan::Project {
                input: Box::new(s),
                exprs,
            }
        })
        .collect();
    if scans.is_empty() {
        return Plan::Values {
            rows: Vec::new(),
            width: root_width + extra,
        };
    }
    let mut plan = scans.remove(0);
    for s in scans {
        plan = Plan::SetOp {
            left: Box::new(plan),
            right: Box::new(s),
            op: SetOpKind::Union,
            all: true,
        };
    }
    plan
}

fn extra_column_types(tid: bool, system: &[super::SystemColumn]) -> Vec<types::DataType> {
    let mut out = Vec::new();
    if tid {
        out.push(types::DataType::new(types::TypeId::Int8));
    }
    out.extend(system.iter().map(|s| s.data_type()));
    out
}
