//! Hash tables for hash joins: the planner's hash clauses (equalities of an
//! expression of the left input with one of the right input) let the join
//! probe a table of the right rows instead of scanning them all.
//!
//! A candidate found through the table satisfies every hash clause: `=`
//! evaluates `types::ops::compare(a, b) == Equal` on operands the binder
//! cast to one type, `GroupKey` equality is that same comparison (and its
//! hash agrees with it, as GROUP BY needs), and NULL keys are never entered
//! or probed. So only the join filter is checked per pair.

use std::collections::HashMap;

use common::PgResult;
use sql::expr::Expr;
use types::ops::BinaryOp;
use types::Value;

use crate::agg::GroupKey;
use crate::eval::eval;
use crate::{ExecEnv, Row};

/// Left and right key expressions of the hash clauses, each over its own
/// input's row.
pub(crate) struct HashKeys<'p> {
    left: Vec<&'p Expr>,
    right: Vec<Expr>,
}

/// Whether `e` reads only columns below `left_width`.
fn reads_left(e: &Expr, left_width: usize) -> bool {
    let mut left = true;
    e.visit(&mut |x| {
        if let Expr::Column(i, _) = x {
            left &= *i < left_width;
        }
    });
    left
}

/// Moves an expression over the joined row onto the right input's row.
fn onto_right(e: &Expr, left_width: usize) -> Expr {
    e.clone()
        .transform(&mut |x| {
            Ok(match x {
                Expr::Column(i, t) => Expr::Column(i - left_width, t),
                other => other,
            })
        })
        .expect("moving columns cannot fail")
}

/// The hash keys of a hash join's `hash_cond`, as the planner wrote them:
/// each an equality with its left (outer) expression first.
pub(crate) fn hash_keys(conds: &[Expr], left_width: usize) -> HashKeys<'_> {
    let mut keys = HashKeys {
        left: Vec::new(),
        right: Vec::new(),
    };
    for c in conds {
        let Expr::Binary {
            op: BinaryOp::Eq,
            left,
            right,
            ..
        } = c
        else {
            panic!("a hash clause that is not an equality");
        };
        debug_assert!(reads_left(left, left_width) && !reads_left(right, left_width));
        keys.left.push(left);
        keys.right.push(onto_right(right, left_width));
    }
    keys
}

/// A row's key values, or None if any is NULL (NULL never equals anything).
fn key_of<'e>(
    exprs: impl Iterator<Item = &'e Expr>,
    row: &[Value],
    env: &mut ExecEnv,
) -> PgResult<Option<GroupKey>> {
    let mut vals = Vec::new();
    for e in exprs {
        let v = eval(e, row, env)?;
        if v.is_null() {
            return Ok(None);
        }
        vals.push(v);
    }
    Ok(Some(GroupKey(vals)))
}

/// Right rows by key: each key's bucket of row indices.
pub(crate) struct HashTable {
    map: HashMap<GroupKey, usize>,
    buckets: Vec<Vec<usize>>,
}

impl HashTable {
    /// Row indices in bucket `b`.
    pub(crate) fn bucket(&self, b: usize) -> &[usize] {
        &self.buckets[b]
    }
}

impl HashKeys<'_> {
    pub(crate) fn build(&self, rows: &[Row], env: &mut ExecEnv) -> PgResult<HashTable> {
        let mut t = HashTable {
            map: HashMap::with_capacity(rows.len()),
            buckets: Vec::new(),
        };
        for (i, r) in rows.iter().enumerate() {
            if let Some(k) = key_of(self.right.iter(), r, env)? {
                let next = t.buckets.len();
                let b = *t.map.entry(k).or_insert(next);
                if b == next {
                    t.buckets.push(Vec::with_capacity(1));
                }
                t.buckets[b].push(i);
            }
        }
        Ok(t)
    }

    /// The bucket of the right rows whose keys equal this left row's.
    pub(crate) fn probe(
        &self,
        table: &HashTable,
        left: &[Value],
        env: &mut ExecEnv,
    ) -> PgResult<Option<usize>> {
        Ok(match key_of(self.left.iter().copied(), left, env)? {
            Some(k) => table.map.get(&k).copied(),
            None => None,
        })
    }
}
