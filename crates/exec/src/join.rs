//! Hash lookups for hash joins: the planner's hash clauses (equalities of an
//! expression of the left input with one of the right input) let the join
//! probe a hash table of the right rows instead of scanning them all. The
//! whole condition is still evaluated on every candidate pair, so hashing
//! only has to be consistent with equality, not identical to it.

use std::collections::HashMap;

use common::PgResult;
use sql::expr::Expr;
use types::ops::BinaryOp;
use types::Value;

use crate::agg::GroupKey;
use crate::eval::eval;
use crate::{ExecEnv, Row};

#[derive(Clone, Copy, PartialEq, Eq)]
enum Side {
    Left,
    Right,
}

/// Which input an expression reads: None if both, neither, or something a
/// hash key cannot hold (subqueries, outer references).
fn side(e: &Expr, left_width: usize) -> Option<Side> {
    let (mut left, mut right, mut other) = (false, false, false);
    e.visit(&mut |x| match x {
        Expr::Column(i, _) if *i < left_width => left = true,
        Expr::Column(..) => right = true,
        Expr::OuterColumn { .. }
        | Expr::ScalarSubquery(..)
        | Expr::Exists { .. }
        | Expr::InSubquery { .. } => other = true,
        _ => {}
    });
    match (left, right, other) {
        (true, false, false) => Some(Side::Left),
        (false, true, false) => Some(Side::Right),
        _ => None,
    }
}

/// Left and right key expressions of the condition's equi-join conjuncts.
pub(crate) struct HashKeys<'p> {
    left: Vec<&'p Expr>,
    right: Vec<&'p Expr>,
}

/// The hash keys of a hash join's `hash_cond` (each an equality of a left
/// and a right expression, as the planner chose them).
pub(crate) fn hash_keys(conds: &[Expr], left_width: usize) -> HashKeys<'_> {
    let mut keys = HashKeys {
        left: Vec::new(),
        right: Vec::new(),
    };
    for c in conds {
        if let Expr::Binary {
            op: BinaryOp::Eq,
            left,
            right,
            ..
        } = c
        {
            match (side(left, left_width), side(right, left_width)) {
                (Some(Side::Left), Some(Side::Right)) => {
                    keys.left.push(left);
                    keys.right.push(right);
                }
                (Some(Side::Right), Some(Side::Left)) => {
                    keys.left.push(right);
                    keys.right.push(left);
                }
                _ => debug_assert!(false, "hash clause without a left and a right side"),
            }
        }
    }
    keys
}

impl HashKeys<'_> {
    /// Number of hash clauses.
    pub(crate) fn len(&self) -> usize {
        self.left.len()
    }
}

/// A key's values, or None if any is NULL (NULL never equals anything).
fn key_of(exprs: &[&Expr], row: &[Value], env: &mut ExecEnv) -> PgResult<Option<GroupKey>> {
    let mut vals = Vec::with_capacity(exprs.len());
    for e in exprs {
        let v = eval(e, row, env)?;
        if v.is_null() {
            return Ok(None);
        }
        vals.push(v);
    }
    Ok(Some(GroupKey(vals)))
}

/// Right rows by key.
pub(crate) struct HashTable {
    map: HashMap<GroupKey, Vec<usize>>,
}

impl HashKeys<'_> {
    pub(crate) fn build(
        &self,
        rows: &[Row],
        left_width: usize,
        env: &mut ExecEnv,
    ) -> PgResult<HashTable> {
        let mut map: HashMap<GroupKey, Vec<usize>> = HashMap::new();
        // Right key expressions index the joined row: pad the left part.
        let mut joined = vec![Value::Null; left_width];
        for (i, r) in rows.iter().enumerate() {
            joined.truncate(left_width);
            joined.extend(r.iter().cloned());
            if let Some(k) = key_of(&self.right, &joined, env)? {
                map.entry(k).or_default().push(i);
            }
        }
        Ok(HashTable { map })
    }

    /// Indices of the right rows whose keys equal this left row's.
    pub(crate) fn probe(
        &self,
        table: &HashTable,
        left: &[Value],
        env: &mut ExecEnv,
    ) -> PgResult<Vec<usize>> {
        Ok(match key_of(&self.left, left, env)? {
            Some(k) => table.map.get(&k).cloned().unwrap_or_default(),
            None => Vec::new(),
        })
    }
}
