//! CREATE TABLE ... PARTITION BY / PARTITION OF: the bound's values
//! evaluated and checked against the parent's other partitions (PostgreSQL's
//! check_new_partition_bound: 42P17 for an empty range, an overlap, a second
//! default, hash moduli that do not divide), the catalog rows written, and
//! what the partition takes from its parent (CHECK constraints, PRIMARY
//! KEY / UNIQUE and plain indexes).

use std::cmp::Ordering;

use catalog::partition::{PartitionBound, PartitionKey, PartitionOf, RangeDatum};
use catalog::{ConstraintKind, IndexKey, Table};
use common::{PgError, PgResult, SqlState};
use sql::bind::partition::{BoundExpr, BoundSpec, PartitionSpec};
use sql::expr::Expr;
use sql::partition::{bounds_overlap, compare_bounds, ordered_partitions, resolve, ResolvedBound};
use sql::plan::{ConstraintSpec, ConstraintSpecKind, IndexSpec};
use types::DataType;

use super::{CommandContext, Notices};
use crate::eval::eval;
use crate::ExecEnv;

fn overlap_error(new: &str, existing: &str) -> PgError {
    PgError::new(
        SqlState::INVALID_OBJECT_DEFINITION,
        format!("partition \"{new}\" would overlap partition \"{existing}\""),
    )
}

/// A bound value's text as the catalog keeps it (the type's output, ISO).
fn value_text(env: &mut ExecEnv, e: &Expr, ty: DataType) -> PgResult<Option<String>> {
    let v = eval(e, &[], env)?;
    if v.is_null() {
        return Ok(None);
    }
    let mut out = String::new();
    types::io::format_text(&v, ty.id, &types::IoSettings::default(), &mut out);
    Ok(Some(out))
}

/// The bound as written, its values computed.
fn evaluate_bound(
    env: &mut ExecEnv,
    spec: &BoundSpec,
    key: &PartitionKey,
) -> PgResult<PartitionBound> {
    let ty = |i: usize| key.parts[i].data_type();
    Ok(match spec {
        BoundSpec::Default => PartitionBound::Default,
        BoundSpec::Hash { modulus, remainder } => PartitionBound::Hash {
            modulus: *modulus as u32,
            remainder: *remainder as u32,
        },
        BoundSpec::List(values) => {
            let mut out: Vec<Option<String>> = Vec::new();
            for v in values {
                let t = value_text(env, v, ty(0))?;
                if !out.contains(&t) {
                    out.push(t);
                }
            }
            PartitionBound::List(out)
        }
        BoundSpec::Range { from, to } => {
            let mut datums = |list: &[BoundExpr]| -> PgResult<Vec<RangeDatum>> {
                let mut out = Vec::new();
                for (i, d) in list.iter().enumerate() {
                    out.push(match d {
                        BoundExpr::Min => RangeDatum::MinValue,
                        BoundExpr::Max => RangeDatum::MaxValue,
                        BoundExpr::Value(e) => match value_text(env, e, ty(i))? {
                            Some(t) => RangeDatum::Value(t),
                            None => {
                                return Err(PgError::new(
                                    SqlState::INVALID_OBJECT_DEFINITION,
                                    "cannot specify NULL in range bound",
                                ))
                            }
                        },
                    });
                }
                Ok(out)
            };
            PartitionBound::Range {
                from: datums(from)?,
                to: datums(to)?,
            }
        }
    })
}

fn show_range(ds: &[RangeDatum]) -> String {
    ds.iter()
        .map(|d| match d {
            RangeDatum::MinValue => "MINVALUE".to_owned(),
            RangeDatum::MaxValue => "MAXVALUE".to_owned(),
            RangeDatum::Value(v) => v.clone(),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// Checks a new partition `name`'s bound against `parent`'s partitions
/// (`except`: one being re-attached is not counted).
pub(crate) fn check_new_bound(
    env: &ExecEnv,
    parent: &Table,
    name: &str,
    bound: &PartitionBound,
) -> PgResult<()> {
    let key = parent.partition_key.as_deref().expect("partitioned");
    let types: Vec<DataType> = key.parts.iter().map(|p| p.data_type()).collect();
    let new = resolve(bound, key)?;
    if let (ResolvedBound::Range { from, to }, PartitionBound::Range { from: f, to: t }) =
        (&new, bound)
    {
        if compare_bounds(from, to, &types) != Ordering::Less {
            return Err(PgError::new(
                SqlState::INVALID_OBJECT_DEFINITION,
                format!("empty range bound specified for partition \"{name}\""),
            )
            .with_detail(format!(
                "Specified lower bound ({}) is greater than or equal to upper bound ({}).",
                show_range(f),
                show_range(t)
            )));
        }
    }
    let catalog = env.catalog.clone();
    let existing = ordered_partitions(&catalog, parent)?;
    if new == ResolvedBound::Default {
        if let Some((d, _)) = existing.iter().find(|(_, b)| *b == ResolvedBound::Default) {
            return Err(PgError::new(
                SqlState::INVALID_OBJECT_DEFINITION,
                format!(
                    "partition \"{name}\" conflicts with existing default partition \"{}\"",
                    d.name
                ),
            ));
        }
        return Ok(());
    }
    if let ResolvedBound::Hash { modulus, .. } = &new {
        // Every modulus must divide the next larger one.
        for (t, b) in &existing {
            if let ResolvedBound::Hash { modulus: m, .. } = b {
                let (small, big) = if m <= modulus {
                    (*m, *modulus)
                } else {
                    (*modulus, *m)
                };
                if big % small != 0 {
                    let detail = if m > modulus {
                        format!(
                            "The new modulus {modulus} is not a factor of {m}, the modulus of existing partition \"{}\".",
                            t.name
                        )
                    } else {
                        format!(
                            "The new modulus {modulus} is not divisible by {m}, the modulus of existing partition \"{}\".",
                            t.name
                        )
                    };
                    return Err(PgError::new(
                        SqlState::INVALID_OBJECT_DEFINITION,
                        "every hash partition modulus must be a factor of the next larger modulus",
                    )
                    .with_detail(detail));
                }
            }
        }
    }
    if let Some((t, _)) = existing
        .iter()
        .find(|(_, b)| *b != ResolvedBound::Default && bounds_overlap(&new, b, &types))
    {
        return Err(overlap_error(name, &t.name));
    }
    Ok(())
}

/// The default partition's rows must not belong to a new sibling: 23514
/// when one does (PostgreSQL scans the default partition the same way).
fn check_default_rows(env: &mut ExecEnv, parent: &Table, bound: &PartitionBound) -> PgResult<()> {
    let catalog = env.catalog.clone();
    let Some(default) = catalog.partitions_of(parent.oid).find(|t| {
        t.partition_of
            .as_ref()
            .is_some_and(|p| p.bound == PartitionBound::Default)
    }) else {
        return Ok(());
    };
    let key = parent.partition_key.as_deref().expect("partitioned");
    let types: Vec<DataType> = key.parts.iter().map(|p| p.data_type()).collect();
    let new = resolve(bound, key)?;
    let router_key = crate::partition::KeyOfParent::new(env, parent)?;
    let mut violated = false;
    for leaf in catalog.leaf_partitions(default.oid) {
        let map = crate::partition::column_map(leaf, parent);
        crate::partition::for_each_visible_row(env, leaf, |row, env| {
            let parent_row = crate::partition::map_row(row, &map);
            let k = router_key.compute(&parent_row, env)?;
            violated = sql::partition::bound_accepts(&new, &k, &types);
            Ok(!violated)
        })?;
        if violated {
            return Err(PgError::new(
                SqlState::CHECK_VIOLATION,
                format!(
                    "updated partition constraint for default partition \"{}\" would be violated by some row",
                    default.name
                ),
            ));
        }
    }
    Ok(())
}

/// Makes the new table `table` partitioned and/or a partition, as `spec`
/// says; returns it as it now is.
pub(super) fn apply(
    cx: &mut CommandContext,
    env: &mut ExecEnv,
    notices: &mut Notices,
    table: Table,
    spec: &PartitionSpec,
) -> PgResult<Table> {
    let partition_of = match &spec.parent {
        Some((parent, bound_spec)) => {
            let key = parent.partition_key.as_deref().expect("bound checked it");
            let bound = evaluate_bound(env, bound_spec, key)?;
            check_new_bound(env, parent, &table.name, &bound)?;
            if bound != PartitionBound::Default {
                check_default_rows(env, parent, &bound)?;
            }
            Some(PartitionOf {
                parent: parent.oid,
                bound,
            })
        }
        None => None,
    };
    let catalog = cx.catalog;
    let table = catalog.set_partitioning(
        cx.changes(env)?,
        env.cid,
        table.oid,
        spec.key.clone(),
        partition_of,
    )?;
    match &spec.parent {
        Some((parent, _)) => inherit_from_parent(cx, env, notices, table, parent),
        None => Ok(table),
    }
}

/// A new or attached partition takes its parent's CHECK constraints, and
/// gets an index for each of the parent's (PRIMARY KEY and UNIQUE as
/// constraints).
pub(crate) fn inherit_from_parent(
    cx: &mut CommandContext,
    env: &mut ExecEnv,
    notices: &mut Notices,
    mut table: Table,
    parent: &Table,
) -> PgResult<Table> {
    let current = std::sync::Arc::clone(cx.changes(env)?.catalog());
    let attnum_in_child = |attnum: i16| -> i16 {
        let name = &parent.columns[attnum as usize - 1].name;
        table
            .columns
            .iter()
            .position(|c| &c.name == name)
            .map_or(attnum, |i| i as i16 + 1)
    };
    let mut specs = Vec::new();
    let mut plain_indexes = Vec::new();
    for c in current.constraints_of(parent.oid) {
        if let ConstraintKind::Check { expr } = &c.kind {
            if current.constraints_of(table.oid).any(|x| x.name == c.name) {
                continue;
            }
            specs.push(ConstraintSpec {
                name: Some(c.name.clone()),
                kind: ConstraintSpecKind::Check {
                    expr: expr.clone(),
                    columns: c
                        .columns
                        .iter()
                        .map(|a| attnum_in_child(*a) as usize - 1)
                        .collect(),
                    no_inherit: false,
                },
                deferrable: false,
                deferred: false,
                not_valid: false,
            });
        }
    }
    for i in current.indexes_of(parent.oid) {
        let keys: Vec<IndexKey> = i
            .keys
            .iter()
            .map(|k| IndexKey {
                attnum: attnum_in_child(k.attnum),
                ..*k
            })
            .collect();
        let kind = match current.constraint_of_index(i.oid).map(|c| &c.kind) {
            Some(ConstraintKind::PrimaryKey { .. }) => {
                Some(ConstraintSpecKind::PrimaryKey { keys: keys.clone() })
            }
            Some(ConstraintKind::Unique { .. }) => {
                Some(ConstraintSpecKind::Unique { keys: keys.clone() })
            }
            _ => None,
        };
        match kind {
            Some(kind) => specs.push(ConstraintSpec {
                name: None,
                kind,
                deferrable: false,
                deferred: false,
                not_valid: false,
            }),
            None => plain_indexes.push(IndexSpec {
                name: None,
                keys,
                unique: i.unique,
                if_not_exists: false,
            }),
        }
    }
    for s in &specs {
        table = super::index::add_constraint(cx, env, &table, s, true)?;
    }
    for s in &plain_indexes {
        super::index::create_index(cx, env, notices, &table, s)?;
    }
    Ok(table)
}
