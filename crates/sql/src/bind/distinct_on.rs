//! SELECT DISTINCT ON (exprs): the first row of each group of rows equal on
//! `exprs`, in the ORDER BY's order. Planned as PostgreSQL's Unique over a
//! Sort would give it: the rows sorted by the DISTINCT ON columns and then
//! the rest of the ORDER BY, numbered within each group by a row_number()
//! WindowAgg, and the rows numbered 1 kept.

use common::{PgError, PgResult, SqlState};
use sqlparser::ast;
use types::{TypeId, Value};

use super::{Binder, Scope};
use crate::expr::Expr;
use crate::plan::{OutputColumn, Plan, SortKey};
use crate::window::{WindowCall, WindowFrame, WindowFunc, WindowSpec};

impl Binder<'_, '_> {
    /// The output columns of the DISTINCT ON expressions: output names and
    /// positions as in ORDER BY, other expressions added as hidden columns.
    pub(super) fn distinct_on_columns(
        &mut self,
        on: &[ast::Expr],
        scope: &Scope,
        exprs: &mut Vec<Expr>,
        cols: &[OutputColumn],
    ) -> PgResult<Vec<usize>> {
        let mut out = Vec::new();
        for e in on {
            let idx = match self.output_position(e, cols, scope)? {
                Some(i) => i,
                None => {
                    let bound = self.bind_expr(e, scope)?;
                    match exprs.iter().position(|x| *x == bound) {
                        Some(i) => i,
                        None => {
                            exprs.push(bound);
                            exprs.len() - 1
                        }
                    }
                }
            };
            if !out.contains(&idx) {
                out.push(idx);
            }
        }
        Ok(out)
    }
}

/// PostgreSQL's rule (transformDistinctOnClause): the DISTINCT ON
/// expressions that the ORDER BY names come before any it does not, and
/// any the ORDER BY leaves out are only allowed if it names no others.
pub(super) fn check_order(on: &[usize], sort_keys: &[SortKey]) -> PgResult<()> {
    let mismatch = || {
        PgError::new(
            SqlState::INVALID_COLUMN_REFERENCE,
            "SELECT DISTINCT ON expressions must match initial ORDER BY expressions",
        )
    };
    let mut skipped = false;
    for k in sort_keys {
        if on.contains(&k.column) {
            if skipped {
                return Err(mismatch());
            }
        } else {
            skipped = true;
        }
    }
    if skipped && on.iter().any(|c| !sort_keys.iter().any(|k| k.column == *c)) {
        return Err(mismatch());
    }
    Ok(())
}

/// `plan` (whose output holds the `on` columns) reduced to the first row of
/// each DISTINCT ON group. `sort_keys`, the query's ORDER BY, is cleared
/// when the result already comes in its order.
pub(super) fn first_of_each(plan: Plan, on: &[usize], sort_keys: &mut Vec<SortKey>) -> Plan {
    let types = plan.column_types();
    let width = types.len();
    // Sort by the ORDER BY, which starts with the DISTINCT ON columns, or
    // by those columns alone.
    let mut keys: Vec<SortKey> = sort_keys.clone();
    for &c in on {
        if !keys.iter().any(|k| k.column == c) {
            keys.push(SortKey {
                column: c,
                descending: false,
                nulls_first: false,
            });
        }
    }
    let partition_len = on.len();
    // The DISTINCT ON columns first, in the order the sort has them.
    keys.sort_by_key(|k| usize::from(!on.contains(&k.column)));
    let number = WindowCall {
        func: WindowFunc::RowNumber,
        args: Vec::new(),
        spec: WindowSpec {
            partition: Vec::new(),
            order: Vec::new(),
            frame: WindowFrame::default_frame(),
        },
        result: TypeId::Int8.into(),
    };
    let sorted = Plan::Sort {
        input: Box::new(plan),
        keys: keys.clone(),
    };
    let numbered = Plan::WindowAgg {
        input: Box::new(sorted),
        partition: keys[..partition_len].iter().map(|k| k.column).collect(),
        order: keys[partition_len..].to_vec(),
        frame: WindowFrame::default_frame(),
        funcs: vec![number],
    };
    let first = Plan::Filter {
        input: Box::new(numbered),
        qual: Expr::Binary {
            op: types::ops::BinaryOp::Eq,
            left: Box::new(Expr::Column(width, TypeId::Int8.into())),
            right: Box::new(Expr::Const(Value::Int8(1), TypeId::Int8.into())),
            ty: TypeId::Bool.into(),
        },
    };
    let out = Plan::Project {
        input: Box::new(first),
        exprs: types
            .iter()
            .enumerate()
            .map(|(i, t)| Expr::Column(i, *t))
            .collect(),
    };
    if *sort_keys == keys || sort_keys.is_empty() {
        sort_keys.clear();
    }
    out
}
