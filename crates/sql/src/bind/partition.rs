//! CREATE TABLE's partitioning clauses: PARTITION BY's key and PARTITION
//! OF's parent and bound (FOR VALUES ... | DEFAULT), checked as
//! PostgreSQL's transformPartitionSpec / transformPartitionBound do. The
//! bound's values stay expressions here: `exec::partition` evaluates them,
//! then checks them against the parent's other partitions.

use std::sync::Arc;

use catalog::partition::{PartitionKey, PartitionKeyPart, PartitionStrategy};
use catalog::{Column, Table};
use common::{PgError, PgResult, SqlState};
use sqlparser::ast;
use types::DataType;

use super::{ident_name, object_name_parts, BindContext, Binder};
use crate::expr::Expr;
use types::cast::CastContext;

/// A range bound datum as written.
#[derive(Debug, Clone)]
pub enum BoundExpr {
    Min,
    Max,
    /// A constant expression, coerced to the key column's type.
    Value(Expr),
}

/// FOR VALUES ... as written, its values bound.
#[derive(Debug, Clone)]
pub enum BoundSpec {
    Range {
        from: Vec<BoundExpr>,
        to: Vec<BoundExpr>,
    },
    List(Vec<Expr>),
    Hash {
        modulus: u64,
        remainder: u64,
    },
    Default,
}

/// CREATE TABLE's partitioning: the new table's key (PARTITION BY) and/or
/// its parent and bound (PARTITION OF).
#[derive(Debug, Clone)]
pub struct PartitionSpec {
    pub key: Option<PartitionKey>,
    pub parent: Option<(Arc<Table>, BoundSpec)>,
}

fn invalid(msg: impl Into<String>) -> PgError {
    PgError::new(SqlState::INVALID_OBJECT_DEFINITION, msg)
}

/// A table that does not exist yet, to bind expressions over its columns.
pub(crate) fn scratch_table(name: &str, columns: &[Column]) -> Table {
    Table {
        oid: 0,
        name: name.to_owned(),
        namespace: 0,
        db_oid: 0,
        relfilenode: 0,
        columns: columns.to_vec(),
        reltuples: -1.0,
        relpages: 0,
        relallvisible: 0,
        statistics: Default::default(),
        toast: None,
        partition_key: None,
        partition_of: None,
    }
}

/// A partition key expression stored as SQL text, bound over `table`'s rows
/// (the executor routes rows by it).
pub fn bind_partition_expr(ctx: &mut BindContext<'_>, table: &Table, text: &str) -> PgResult<Expr> {
    let e = super::constraints::parse_stored_expr(text, "partition key expression")?;
    let mut b = Binder::new(ctx);
    let scope = Binder::table_scope(table, None);
    b.bind_expr(&e, &scope)
}

impl Binder<'_, '_> {
    /// PARTITION BY strategy (col | (expr), ...) over the new table's columns.
    pub(super) fn bind_partition_by(
        &mut self,
        name: &str,
        spec: &ast::Expr,
        columns: &[Column],
    ) -> PgResult<PartitionKey> {
        let (strategy_name, args) = match spec {
            ast::Expr::Function(f) => {
                let args: Vec<ast::Expr> = match &f.args {
                    ast::FunctionArguments::List(l) => l
                        .args
                        .iter()
                        .map(|a| match a {
                            ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e)) => {
                                Ok(e.clone())
                            }
                            _ => Err(PgError::syntax("syntax error in PARTITION BY")),
                        })
                        .collect::<PgResult<_>>()?,
                    _ => return Err(PgError::syntax("syntax error in PARTITION BY")),
                };
                (f.name.to_string().to_lowercase(), args)
            }
            _ => return Err(PgError::syntax("syntax error in PARTITION BY")),
        };
        let strategy = match strategy_name.as_str() {
            "range" => PartitionStrategy::Range,
            "list" => PartitionStrategy::List,
            "hash" => PartitionStrategy::Hash,
            other => {
                return Err(PgError::new(
                    SqlState::INVALID_PARAMETER_VALUE,
                    format!("unrecognized partitioning strategy \"{other}\""),
                ))
            }
        };
        if strategy == PartitionStrategy::List && args.len() > 1 {
            return Err(invalid(
                "cannot use \"list\" partition strategy with more than one column",
            ));
        }
        let table = scratch_table(name, columns);
        let scope = Binder::table_scope(&table, None);
        let mut parts = Vec::new();
        for a in &args {
            let part = match a {
                ast::Expr::Identifier(id) => {
                    let col = ident_name(id);
                    let Some(i) = columns.iter().position(|c| c.name == col) else {
                        return Err(PgError::new(
                            SqlState::UNDEFINED_COLUMN,
                            format!("column \"{col}\" named in partition key does not exist"),
                        ));
                    };
                    let c = &columns[i];
                    let ty = c.data_type();
                    PartitionKeyPart {
                        attnum: i as i16 + 1,
                        expr: None,
                        type_oid: ty.id.oid(),
                        typmod: ty.typmod,
                    }
                }
                other => {
                    let inner = match other {
                        ast::Expr::Nested(e) => e.as_ref(),
                        e => e,
                    };
                    let bound = self.bind_expr(inner, &scope)?;
                    let ty = bound.data_type();
                    PartitionKeyPart {
                        attnum: 0,
                        expr: Some(inner.to_string()),
                        type_oid: ty.id.oid(),
                        typmod: ty.typmod,
                    }
                }
            };
            parts.push(part);
        }
        Ok(PartitionKey { strategy, parts })
    }

    /// PARTITION OF parent: the parent (which must be partitioned) and the
    /// bound, checked against the parent's strategy.
    pub(super) fn bind_partition_of(
        &mut self,
        parent_name: &ast::ObjectName,
        for_values: Option<&ast::ForValues>,
    ) -> PgResult<(Arc<Table>, BoundSpec)> {
        let parent = self.require_table(&object_name_parts(parent_name)?)?;
        let Some(key) = parent.partition_key.clone() else {
            return Err(invalid(format!("\"{}\" is not partitioned", parent.name)));
        };
        let fv = for_values.ok_or_else(|| PgError::syntax("syntax error: FOR VALUES expected"))?;
        let wrong = |kind: &str| {
            PgError::new(
                SqlState::INVALID_TABLE_DEFINITION,
                format!("invalid bound specification for a {kind} partition"),
            )
        };
        let kind = match key.strategy {
            PartitionStrategy::Range => "range",
            PartitionStrategy::List => "list",
            PartitionStrategy::Hash => "hash",
        };
        let spec = match fv {
            ast::ForValues::Default => {
                if key.strategy == PartitionStrategy::Hash {
                    return Err(PgError::new(
                        SqlState::INVALID_TABLE_DEFINITION,
                        "a hash-partitioned table may not have a default partition",
                    ));
                }
                BoundSpec::Default
            }
            ast::ForValues::In(values) => {
                if key.strategy != PartitionStrategy::List {
                    return Err(wrong(kind));
                }
                let ty = key.parts[0].data_type();
                let col = self.key_column_name(&parent, 0);
                let mut out = Vec::new();
                for v in values {
                    out.push(self.bind_bound_value(v, ty, &col)?);
                }
                BoundSpec::List(out)
            }
            ast::ForValues::From { from, to } => {
                if key.strategy != PartitionStrategy::Range {
                    return Err(wrong(kind));
                }
                let n = key.parts.len();
                for (list, what) in [(from, "FROM"), (to, "TO")] {
                    if list.len() != n {
                        return Err(PgError::new(
                            SqlState::INVALID_TABLE_DEFINITION,
                            format!(
                                "{} must specify exactly one value per partitioning column",
                                what
                            ),
                        ));
                    }
                }
                let mut bind_list =
                    |list: &[ast::PartitionBoundValue]| -> PgResult<Vec<BoundExpr>> {
                        let mut out = Vec::new();
                        for (i, v) in list.iter().enumerate() {
                            out.push(match v {
                                ast::PartitionBoundValue::MinValue => BoundExpr::Min,
                                ast::PartitionBoundValue::MaxValue => BoundExpr::Max,
                                ast::PartitionBoundValue::Expr(e) => {
                                    let col = self.key_column_name(&parent, i);
                                    BoundExpr::Value(self.bind_bound_value(
                                        e,
                                        key.parts[i].data_type(),
                                        &col,
                                    )?)
                                }
                            });
                        }
                        check_infinities(&out)?;
                        Ok(out)
                    };
                BoundSpec::Range {
                    from: bind_list(from)?,
                    to: bind_list(to)?,
                }
            }
            ast::ForValues::With { modulus, remainder } => {
                if key.strategy != PartitionStrategy::Hash {
                    return Err(wrong(kind));
                }
                if *modulus < 1 {
                    return Err(invalid(
                        "modulus for hash partition must be an integer value greater than zero",
                    ));
                }
                if remainder >= modulus {
                    return Err(invalid(
                        "remainder for hash partition must be less than modulus",
                    ));
                }
                BoundSpec::Hash {
                    modulus: *modulus,
                    remainder: *remainder,
                }
            }
        };
        Ok((parent, spec))
    }

    fn key_column_name(&self, parent: &Table, i: usize) -> String {
        let key = parent.partition_key.as_deref().expect("partitioned");
        let p = &key.parts[i];
        if p.attnum > 0 {
            parent.columns[p.attnum as usize - 1].name.clone()
        } else {
            p.expr.clone().unwrap_or_default()
        }
    }

    /// A bound value: a constant expression (no column references) of the
    /// key column's type.
    fn bind_bound_value(&mut self, e: &ast::Expr, ty: DataType, column: &str) -> PgResult<Expr> {
        let bound = self.bind_expr(e, &Vec::new()).map_err(|err| {
            if err.code == SqlState::UNDEFINED_COLUMN {
                PgError::new(
                    SqlState::INVALID_COLUMN_REFERENCE,
                    "cannot use column reference in partition bound expression",
                )
            } else {
                err
            }
        })?;
        if bound.data_type().id == types::TypeId::Unknown
            || matches!(bound, Expr::Const(types::Value::Null, _))
        {
            return self.coerce(bound, ty, CastContext::Explicit);
        }
        self.coerce(bound, ty, CastContext::Assignment)
            .map_err(|_| {
                PgError::new(
                    SqlState::DATATYPE_MISMATCH,
                    format!(
                        "specified value cannot be cast to type {} for column \"{column}\"",
                        ty.display_name()
                    ),
                )
            })
    }
}

/// After MINVALUE only MINVALUE may follow, after MAXVALUE only MAXVALUE.
fn check_infinities(list: &[BoundExpr]) -> PgResult<()> {
    let mut seen: Option<bool> = None;
    for d in list {
        match (seen, d) {
            (Some(true), BoundExpr::Min) | (Some(false), BoundExpr::Max) => {}
            (Some(true), _) => {
                return Err(PgError::new(
                    SqlState::DATATYPE_MISMATCH,
                    "every bound following MINVALUE must also be MINVALUE",
                ))
            }
            (Some(false), _) => {
                return Err(PgError::new(
                    SqlState::DATATYPE_MISMATCH,
                    "every bound following MAXVALUE must also be MAXVALUE",
                ))
            }
            (None, BoundExpr::Min) => seen = Some(true),
            (None, BoundExpr::Max) => seen = Some(false),
            (None, BoundExpr::Value(_)) => {}
        }
    }
    Ok(())
}

/// PRIMARY KEY and UNIQUE on a partitioned table must include every key
/// column (each partition enforces its own index; 0A000 otherwise).
pub(super) fn check_unique_covers_key(
    table: &str,
    key: &PartitionKey,
    columns: &[Column],
    constraints: &[crate::plan::ConstraintSpec],
) -> PgResult<()> {
    use crate::plan::ConstraintSpecKind;
    for c in constraints {
        let (keys, what) = match &c.kind {
            ConstraintSpecKind::PrimaryKey { keys } => (keys, "PRIMARY KEY"),
            ConstraintSpecKind::Unique { keys, .. } => (keys, "UNIQUE"),
            _ => continue,
        };
        check_index_covers_key(table, key, columns, keys.iter().map(|k| k.attnum), what)?;
    }
    Ok(())
}

/// The check of `check_unique_covers_key` for one index's columns.
pub fn check_index_covers_key(
    table: &str,
    key: &PartitionKey,
    columns: &[Column],
    attnums: impl Iterator<Item = i16> + Clone,
    what: &str,
) -> PgResult<()> {
    for p in &key.parts {
        if p.attnum == 0 {
            return Err(PgError::unsupported(
                "unsupported UNIQUE constraint with partition key definition",
            )
            .with_detail(format!(
                "{what} constraints cannot be used when partition keys include expressions."
            )));
        }
        if !attnums.clone().any(|a| a == p.attnum) {
            return Err(PgError::unsupported(
                "unique constraint on partitioned table must include all partitioning columns",
            )
            .with_detail(format!(
                "{what} constraint on table \"{table}\" lacks column \"{}\" which is part of the partition key.",
                columns[p.attnum as usize - 1].name
            )));
        }
    }
    Ok(())
}

/// `tables` followed by every partition under the partitioned ones (DROP
/// TABLE and TRUNCATE of a partitioned table reach its partitions).
pub(super) fn with_partitions(
    catalog: &catalog::CatalogData,
    tables: Vec<Arc<Table>>,
) -> Vec<Arc<Table>> {
    let mut out = tables;
    let mut i = 0;
    while i < out.len() {
        let oid = out[i].oid;
        for child in catalog.partitions_of(oid) {
            if !out.iter().any(|t| t.oid == child.oid) {
                out.push(Arc::new(child.clone()));
            }
        }
        i += 1;
    }
    out
}
