//! GROUP BY with grouping sets: ROLLUP, CUBE and GROUPING SETS expanded as
//! PostgreSQL's expand_grouping_sets does (the items of a GROUP BY list
//! multiplied out, each set a list of distinct keys), GROUP BY DISTINCT,
//! and GROUPING() calls bound to the key indexes of their arguments.

use common::{PgError, PgResult, SqlState};
use sqlparser::ast;
use types::TypeId;

use super::{Binder, Scope};
use crate::expr::{Expr, SysFunc};
use crate::plan::{GroupingSets, OutputColumn};

/// PostgreSQL's limit on the sets one GROUP BY may expand to.
const MAX_GROUPING_SETS: usize = 4096;
/// CUBE's limit on its elements.
const MAX_CUBE_ELEMENTS: usize = 12;
/// GROUPING's limit on its arguments (its result is an int4 bitmask).
const MAX_GROUPING_ARGS: usize = 31;

/// A bound GROUP BY: its distinct keys and, where it has grouping sets,
/// the sets over them.
pub(super) struct GroupBy {
    pub keys: Vec<Expr>,
    pub sets: Option<Vec<Vec<usize>>>,
}

/// ROLLUP and CUBE as sqlparser reads them inside GROUPING SETS: as
/// function calls (their elements are its arguments, a parenthesised list
/// one composite element).
fn set_function(e: &ast::Expr) -> Option<(bool, Vec<Vec<ast::Expr>>)> {
    let ast::Expr::Function(f) = e else {
        return None;
    };
    let [ast::ObjectNamePart::Identifier(name)] = f.name.0.as_slice() else {
        return None;
    };
    if name.quote_style.is_some() || f.over.is_some() || f.filter.is_some() {
        return None;
    }
    let cube = match name.value.to_ascii_lowercase().as_str() {
        "cube" => true,
        "rollup" => false,
        _ => return None,
    };
    let ast::FunctionArguments::List(list) = &f.args else {
        return None;
    };
    let mut elements = Vec::new();
    for arg in &list.args {
        let ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(x)) = arg else {
            return None;
        };
        elements.push(match x {
            ast::Expr::Tuple(v) => v.clone(),
            other => vec![other.clone()],
        });
    }
    Some((cube, elements))
}

fn too_many_sets() -> PgError {
    PgError::new(
        SqlState::STATEMENT_TOO_COMPLEX,
        format!("too many grouping sets present (maximum {MAX_GROUPING_SETS})"),
    )
}

/// The union of `parts`, each key once, in order of first appearance.
fn union<'a>(parts: impl IntoIterator<Item = &'a Vec<usize>>) -> Vec<usize> {
    let mut out: Vec<usize> = Vec::new();
    for k in parts.into_iter().flatten() {
        if !out.contains(k) {
            out.push(*k);
        }
    }
    out
}

fn rollup(elements: &[Vec<usize>]) -> Vec<Vec<usize>> {
    (0..=elements.len())
        .rev()
        .map(|n| union(&elements[..n]))
        .collect()
}

fn cube(elements: &[Vec<usize>]) -> PgResult<Vec<Vec<usize>>> {
    let n = elements.len();
    if n > MAX_CUBE_ELEMENTS {
        return Err(PgError::new(
            SqlState("54011"),
            format!("CUBE is limited to {MAX_CUBE_ELEMENTS} elements"),
        ));
    }
    // All subsets, the full set first and the empty one last (the
    // element listed first is the mask's highest bit).
    Ok((0..1usize << n)
        .rev()
        .map(|mask| {
            union(
                (0..n)
                    .filter(|i| mask & (1 << (n - 1 - i)) != 0)
                    .map(|i| &elements[i]),
            )
        })
        .collect())
}

impl Binder<'_, '_> {
    /// Binds a GROUP BY list (`items` as sqlparser read them).
    pub(super) fn bind_group_by(
        &mut self,
        items: &[ast::Expr],
        scope: &Scope,
        exprs: &[Expr],
        cols: &[OutputColumn],
    ) -> PgResult<GroupBy> {
        let (distinct, items) = match items.split_first() {
            Some((first, rest)) if crate::group_by::is_distinct_marker(first) => (true, rest),
            _ => (false, items),
        };
        let mut keys: Vec<Expr> = Vec::new();
        let mut has_sets = false;
        let mut sets: Vec<Vec<usize>> = vec![Vec::new()];
        for item in items {
            let item_sets = match item {
                ast::Expr::Rollup(_) | ast::Expr::Cube(_) | ast::Expr::GroupingSets(_) => {
                    has_sets = true;
                    self.expand_set_item(item, &mut keys, scope, exprs, cols)?
                }
                // `()`; `(a, b)` groups by a and b.
                ast::Expr::Tuple(list) => {
                    has_sets |= list.is_empty();
                    vec![self.key_list(list, &mut keys, scope, exprs, cols)?]
                }
                simple => vec![self.key_list(
                    std::slice::from_ref(simple),
                    &mut keys,
                    scope,
                    exprs,
                    cols,
                )?],
            };
            if sets.len().saturating_mul(item_sets.len()) > MAX_GROUPING_SETS {
                return Err(too_many_sets());
            }
            sets = sets
                .iter()
                .flat_map(|s| item_sets.iter().map(move |t| union([s, t])))
                .collect();
        }
        if distinct {
            let mut seen: Vec<Vec<usize>> = Vec::new();
            sets.retain(|s| {
                let mut sorted = s.clone();
                sorted.sort_unstable();
                let new = !seen.contains(&sorted);
                if new {
                    seen.push(sorted);
                }
                new
            });
        }
        // One non-empty set is ordinary grouping (PostgreSQL drops `()`
        // beside other items, and a single set's GROUPING SETS).
        let sets = match sets.as_slice() {
            _ if !has_sets => None,
            [only] if !only.is_empty() => None,
            _ => Some(sets),
        };
        Ok(GroupBy { keys, sets })
    }

    /// The sets one ROLLUP, CUBE or GROUPING SETS item expands to.
    fn expand_set_item(
        &mut self,
        item: &ast::Expr,
        keys: &mut Vec<Expr>,
        scope: &Scope,
        exprs: &[Expr],
        cols: &[OutputColumn],
    ) -> PgResult<Vec<Vec<usize>>> {
        let elements = |b: &mut Self, keys: &mut Vec<Expr>, lists: &[Vec<ast::Expr>]| {
            lists
                .iter()
                .map(|l| b.key_list(l, keys, scope, exprs, cols))
                .collect::<PgResult<Vec<_>>>()
        };
        match item {
            ast::Expr::Rollup(lists) => Ok(rollup(&elements(self, keys, lists)?)),
            ast::Expr::Cube(lists) => cube(&elements(self, keys, lists)?),
            ast::Expr::GroupingSets(lists) => {
                let mut out = Vec::new();
                for list in lists {
                    match list.as_slice() {
                        [nested @ (ast::Expr::Rollup(_)
                        | ast::Expr::Cube(_)
                        | ast::Expr::GroupingSets(_))] => {
                            out.extend(self.expand_set_item(nested, keys, scope, exprs, cols)?)
                        }
                        [call] if set_function(call).is_some() => {
                            let (is_cube, lists) = set_function(call).expect("checked");
                            let elements = elements(self, keys, &lists)?;
                            out.extend(if is_cube {
                                cube(&elements)?
                            } else {
                                rollup(&elements)
                            });
                        }
                        plain => out.push(self.key_list(plain, keys, scope, exprs, cols)?),
                    }
                    if out.len() > MAX_GROUPING_SETS {
                        return Err(too_many_sets());
                    }
                }
                Ok(out)
            }
            _ => unreachable!("only grouping set items are expanded"),
        }
    }

    /// Binds grouping expressions, adding each new one to `keys`; returns
    /// their key indexes.
    fn key_list(
        &mut self,
        list: &[ast::Expr],
        keys: &mut Vec<Expr>,
        scope: &Scope,
        exprs: &[Expr],
        cols: &[OutputColumn],
    ) -> PgResult<Vec<usize>> {
        let mut out = Vec::new();
        for g in list {
            let k = self.in_window_context(Some("GROUP BY"), |b| {
                b.bind_output_ref(g, scope, exprs, cols)
            })?;
            if k.contains_grouping() {
                return Err(PgError::new(
                    SqlState::GROUPING_ERROR,
                    "grouping operations are not allowed in GROUP BY",
                ));
            }
            let i = match keys.iter().position(|x| *x == k) {
                Some(i) => i,
                None => {
                    keys.push(k);
                    keys.len() - 1
                }
            };
            if !out.contains(&i) {
                out.push(i);
            }
        }
        Ok(out)
    }

    /// GROUPING(args): bound as a marker call the grouping stage replaces
    /// with its Aggregate's output column.
    pub(super) fn bind_grouping(&mut self, f: &ast::Function, scope: &Scope) -> PgResult<Expr> {
        let (args, distinct, star) = self.function_args(f, scope)?;
        if distinct || star || args.is_empty() {
            return Err(PgError::syntax("syntax error at or near \"grouping\""));
        }
        if args.len() > MAX_GROUPING_ARGS {
            return Err(PgError::new(
                SqlState("54023"),
                "GROUPING must have fewer than 32 arguments",
            ));
        }
        if args.iter().any(Expr::contains_agg) {
            return Err(PgError::new(
                SqlState::GROUPING_ERROR,
                "aggregate function calls cannot be nested",
            ));
        }
        Ok(Expr::Sys {
            func: SysFunc::Grouping,
            args,
            ty: TypeId::Int4.into(),
        })
    }
}

/// Whether `f` names GROUPING (a keyword in PostgreSQL: never qualified).
pub(super) fn is_grouping_call(f: &ast::Function) -> bool {
    matches!(f.name.0.as_slice(), [ast::ObjectNamePart::Identifier(i)]
        if i.quote_style.is_none() && i.value.eq_ignore_ascii_case("grouping"))
}

/// The GROUPING() calls of `exprs` as key indexes, each distinct call once,
/// in the order met. An argument that is not a key is PostgreSQL's 42803.
pub(super) fn grouping_calls(exprs: &[&Expr], keys: &[Expr]) -> PgResult<Vec<Vec<usize>>> {
    let mut calls: Vec<Vec<usize>> = Vec::new();
    let mut err = None;
    for e in exprs {
        e.visit(&mut |x| {
            if let Expr::Sys {
                func: SysFunc::Grouping,
                args,
                ..
            } = x
            {
                match call_keys(args, keys) {
                    Ok(c) if !calls.contains(&c) => calls.push(c),
                    Ok(_) => {}
                    Err(e) => err = err.take().or(Some(e)),
                }
            }
        });
    }
    match err {
        Some(e) => Err(e),
        None => Ok(calls),
    }
}

/// A GROUPING() call's arguments as key indexes.
pub(super) fn call_keys(args: &[Expr], keys: &[Expr]) -> PgResult<Vec<usize>> {
    args.iter()
        .map(|a| {
            keys.iter().position(|k| k == a).ok_or_else(|| {
                PgError::new(
                    SqlState::GROUPING_ERROR,
                    "arguments to GROUPING must be grouping expressions of the associated query level",
                )
            })
        })
        .collect()
}

/// The Aggregate's grouping sets: those of GROUP BY, or the one set of all
/// keys where only a GROUPING() call needs them.
pub(super) fn aggregate_sets(
    sets: Option<Vec<Vec<usize>>>,
    calls: Vec<Vec<usize>>,
    nkeys: usize,
) -> Option<Box<GroupingSets>> {
    match sets {
        Some(sets) => Some(Box::new(GroupingSets { sets, calls })),
        None if calls.is_empty() => None,
        None => Some(Box::new(GroupingSets {
            sets: vec![(0..nkeys).collect()],
            calls,
        })),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rollup_drops_trailing_elements() {
        let e = vec![vec![0], vec![1, 2], vec![3]];
        assert_eq!(
            rollup(&e),
            vec![vec![0, 1, 2, 3], vec![0, 1, 2], vec![0], vec![]]
        );
    }

    #[test]
    fn cube_lists_subsets_full_first_in_postgres_order() {
        let e = vec![vec![0], vec![1], vec![2]];
        let expect: Vec<Vec<usize>> = vec![
            vec![0, 1, 2],
            vec![0, 1],
            vec![0, 2],
            vec![0],
            vec![1, 2],
            vec![1],
            vec![2],
            vec![],
        ];
        assert_eq!(cube(&e).unwrap(), expect);
        let too_many: Vec<Vec<usize>> = (0..13).map(|i| vec![i]).collect();
        assert_eq!(cube(&too_many).unwrap_err().code, SqlState("54011"));
    }

    #[test]
    fn grouping_bits_read_left_argument_highest() {
        let g = GroupingSets {
            sets: vec![vec![0, 1], vec![0], vec![]],
            calls: vec![vec![0, 1], vec![1, 0]],
        };
        assert_eq!(g.grouping_value(0, 0), 0);
        assert_eq!(g.grouping_value(0, 1), 1);
        assert_eq!(g.grouping_value(1, 1), 2);
        assert_eq!(g.grouping_value(0, 2), 3);
    }
}
