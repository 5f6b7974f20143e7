//! SEARCH and CYCLE of a recursive CTE (`crate::cte_search` keeps them
//! aside while parsing), rewritten before binding as PostgreSQL's
//! rewriteSearchAndCycle does:
//! - SEARCH DEPTH FIRST BY a, b SET seq: the non-recursive term starts
//!   `seq` as `ARRAY[ROW(a, b)]`, the recursive term appends its row's
//!   `ROW(a, b)` to the working-table row's `seq` (record[]);
//! - SEARCH BREADTH FIRST BY a, b SET seq: `ROW(depth, a, b)` (record),
//!   the depth 0 in the non-recursive term, one more than the working
//!   table row's in the recursive term;
//! - CYCLE a, b SET mark [TO v DEFAULT d] USING path: `path` grows as a
//!   depth-first sequence, `mark` is `v` where the row's `ROW(a, b)` is
//!   already on the working-table row's path (else `d`), and the recursive
//!   term reads only working-table rows whose mark is not `v`.
//!
//! Each term is wrapped: `SELECT w.c1, ..., <added columns> FROM (term) AS
//! w(c1, ...)`, the recursive term first given the working table's added
//! columns as extra outputs. The added columns are calls of internal
//! functions (names starting U+0001) that bind to `SysFunc::SearchPath`,
//! `SearchBreadth` and `CycleMark`.

use common::{PgError, PgResult, SqlState};
use sqlparser::ast;
use sqlparser::dialect::PostgreSqlDialect;
use sqlparser::parser::Parser;
use types::cast::CastContext;
use types::{DataType, TypeId};

use super::{ident_name, Binder};
use crate::cte_search::{CycleClause, SearchClause};
use crate::expr::{Expr, SysFunc};

pub(super) const SEARCH_PATH_FN: &str = "\u{1}search_path";
pub(super) const SEARCH_BREADTH_FN: &str = "\u{1}search_breadth";
pub(super) const CYCLE_MARK_FN: &str = "\u{1}cycle_mark";
/// The wrapped terms' aliases and the working table's added columns as
/// the recursive term passes them on.
const BASE_ALIAS: &str = "\u{1}base";
const RECURSIVE_ALIAS: &str = "\u{1}recursive";
const PREVIOUS_SEQUENCE: &str = "\u{1}previous sequence";
const PREVIOUS_PATH: &str = "\u{1}previous path";

fn quoted(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

fn syntax(msg: String) -> PgError {
    PgError::new(SqlState::SYNTAX_ERROR, msg)
}

/// The clauses' checks against the CTE's column names, as analyzeCTE's.
pub(super) fn check_clauses(
    names: &[String],
    search: Option<&SearchClause>,
    cycle: Option<&CycleClause>,
) -> PgResult<()> {
    let check_list = |cols: &[String], what: &str| -> PgResult<()> {
        for (i, c) in cols.iter().enumerate() {
            if !names.contains(c) {
                return Err(syntax(format!(
                    "{what} column \"{c}\" not in WITH query column list"
                )));
            }
            if cols[..i].contains(c) {
                return Err(PgError::new(
                    SqlState::DUPLICATE_COLUMN,
                    format!("{what} column \"{c}\" specified more than once"),
                ));
            }
        }
        Ok(())
    };
    if let Some(s) = search {
        check_list(&s.columns, "search")?;
        if names.contains(&s.sequence_column) {
            return Err(syntax(format!(
                "search sequence column name \"{}\" already used in WITH query column list",
                s.sequence_column
            )));
        }
    }
    if let Some(c) = cycle {
        check_list(&c.columns, "cycle")?;
        if names.contains(&c.mark_column) {
            return Err(syntax(format!(
                "cycle mark column name \"{}\" already used in WITH query column list",
                c.mark_column
            )));
        }
        if names.contains(&c.path_column) {
            return Err(syntax(format!(
                "cycle path column name \"{}\" already used in WITH query column list",
                c.path_column
            )));
        }
        if c.mark_column == c.path_column {
            return Err(syntax(
                "cycle mark column name and cycle path column name are the same".into(),
            ));
        }
    }
    if let (Some(s), Some(c)) = (search, cycle) {
        if s.sequence_column == c.mark_column {
            return Err(syntax(
                "search sequence column name and cycle mark column name are the same".into(),
            ));
        }
        if s.sequence_column == c.path_column {
            return Err(syntax(
                "search sequence column name and cycle path column name are the same".into(),
            ));
        }
    }
    Ok(())
}

fn parse_query(sql: &str) -> PgResult<ast::Query> {
    Parser::new(&PostgreSqlDialect {})
        .try_with_sql(sql)
        .and_then(|mut p| p.parse_query())
        .map(|q| *q)
        .map_err(|e| PgError::internal(format!("SEARCH/CYCLE rewrite: {e}")))
}

/// `SELECT alias.c1, ..., added FROM (term) AS alias(c1, ..., extra)`.
fn wrap(
    term: &ast::SetExpr,
    alias: &str,
    names: &[String],
    extra: &[&str],
    added: &[(String, String)],
) -> PgResult<ast::SetExpr> {
    let a = quoted(alias);
    let mut items: Vec<String> = names.iter().map(|n| format!("{a}.{}", quoted(n))).collect();
    items.extend(added.iter().map(|(e, n)| format!("{e} AS {}", quoted(n))));
    let mut cols: Vec<String> = names.iter().map(|n| quoted(n)).collect();
    cols.extend(extra.iter().map(|n| quoted(n)));
    let sql = format!(
        "SELECT {} FROM (SELECT 1) AS {a}({})",
        items.join(", "),
        cols.join(", ")
    );
    let mut q = parse_query(&sql)?;
    let ast::SetExpr::Select(select) = q.body.as_mut() else {
        unreachable!("a SELECT was parsed")
    };
    let ast::TableFactor::Derived { subquery, .. } = &mut select.from[0].relation else {
        unreachable!("a derived table was parsed")
    };
    *subquery.body = term.clone();
    Ok(*q.body)
}

/// The added columns' expressions over `alias`'s columns; `previous`
/// names the working-table row's sequence and path (the recursive term).
fn added_columns(
    alias: &str,
    search: Option<&SearchClause>,
    cycle: Option<&CycleClause>,
    mark_values: &(String, String),
    recursive: bool,
) -> Vec<(String, String)> {
    let a = quoted(alias);
    let cols = |list: &[String]| -> String {
        list.iter()
            .map(|c| format!(", {a}.{}", quoted(c)))
            .collect()
    };
    let previous = |name: &str| {
        if recursive {
            format!("{a}.{}", quoted(name))
        } else {
            "NULL".to_string()
        }
    };
    let mut added = Vec::new();
    if let Some(s) = search {
        let f = if s.breadth_first {
            SEARCH_BREADTH_FN
        } else {
            SEARCH_PATH_FN
        };
        added.push((
            format!(
                "{}({}{})",
                quoted(f),
                previous(PREVIOUS_SEQUENCE),
                cols(&s.columns)
            ),
            s.sequence_column.clone(),
        ));
    }
    if let Some(c) = cycle {
        let (to, default) = mark_values;
        added.push((
            format!(
                "{}({}, {to}, {default}{})",
                quoted(CYCLE_MARK_FN),
                previous(PREVIOUS_PATH),
                cols(&c.columns)
            ),
            c.mark_column.clone(),
        ));
        added.push((
            format!(
                "{}({}{})",
                quoted(SEARCH_PATH_FN),
                previous(PREVIOUS_PATH),
                cols(&c.columns)
            ),
            c.path_column.clone(),
        ));
    }
    added
}

/// The name the recursive term's SELECT reads the working table by.
fn worktable_reference(select: &ast::Select, cte: &str) -> Option<String> {
    let tables = select
        .from
        .iter()
        .flat_map(|t| std::iter::once(&t.relation).chain(t.joins.iter().map(|j| &j.relation)));
    for t in tables {
        if let ast::TableFactor::Table { name, alias, .. } = t {
            let parts = super::object_name_parts(name).ok()?;
            if parts.len() == 1 && parts[0] == cte {
                return Some(
                    alias
                        .as_ref()
                        .map_or(cte.to_string(), |a| ident_name(&a.name)),
                );
            }
        }
    }
    None
}

fn not_simple(side: &str) -> PgError {
    PgError::new(
        SqlState::FEATURE_NOT_SUPPORTED,
        format!("with a SEARCH or CYCLE clause, the {side} side of the UNION must be a SELECT"),
    )
}

/// The CTE's query with SEARCH and CYCLE rewritten into its terms;
/// `names` are its columns (the column list, then the non-recursive
/// term's names).
pub(super) fn rewrite_terms(
    left: &ast::SetExpr,
    right: &ast::SetExpr,
    cte: &str,
    names: &[String],
    search: Option<&SearchClause>,
    cycle: Option<&CycleClause>,
) -> PgResult<(ast::SetExpr, ast::SetExpr)> {
    if !matches!(left, ast::SetExpr::Select(_)) {
        return Err(not_simple("left"));
    }
    let ast::SetExpr::Select(select) = right else {
        return Err(not_simple("right"));
    };
    let mark_values = match cycle.and_then(|c| c.mark_values.clone()) {
        Some(v) => v,
        None => ("TRUE".to_string(), "FALSE".to_string()),
    };
    let base_added = added_columns(BASE_ALIAS, search, cycle, &mark_values, false);
    let base = wrap(left, BASE_ALIAS, names, &[], &base_added)?;

    // The recursive term passes on the working table's added columns and
    // reads no row already marked as a cycle.
    let wt = worktable_reference(select, cte).ok_or_else(|| {
        PgError::unsupported(
            "SEARCH or CYCLE with the recursive reference outside the recursive term's FROM list",
        )
    })?;
    let wt = quoted(&wt);
    let mut select = select.clone();
    let mut extra = Vec::new();
    let mut pass = |column: &str, as_name: &'static str| -> PgResult<()> {
        let sql = format!("SELECT {wt}.{} AS {}", quoted(column), quoted(as_name));
        let q = parse_query(&sql)?;
        let ast::SetExpr::Select(s) = *q.body else {
            unreachable!("a SELECT was parsed")
        };
        select.projection.extend(s.projection);
        extra.push(as_name);
        Ok(())
    };
    if let Some(s) = search {
        pass(&s.sequence_column, PREVIOUS_SEQUENCE)?;
    }
    if let Some(c) = cycle {
        pass(&c.path_column, PREVIOUS_PATH)?;
        let sql = format!(
            "SELECT 1 WHERE {wt}.{} <> {}",
            quoted(&c.mark_column),
            mark_values.0
        );
        let q = parse_query(&sql)?;
        let ast::SetExpr::Select(s) = *q.body else {
            unreachable!("a SELECT was parsed")
        };
        let not_a_cycle = s.selection.expect("a WHERE was parsed");
        select.selection = Some(match select.selection.take() {
            Some(w) => ast::Expr::BinaryOp {
                left: Box::new(ast::Expr::Nested(Box::new(w))),
                op: ast::BinaryOperator::And,
                right: Box::new(not_a_cycle),
            },
            None => not_a_cycle,
        });
    }
    let rec_added = added_columns(RECURSIVE_ALIAS, search, cycle, &mark_values, true);
    let recursive = wrap(
        &ast::SetExpr::Select(select),
        RECURSIVE_ALIAS,
        names,
        &extra,
        &rec_added,
    )?;
    Ok((base, recursive))
}

impl Binder<'_, '_> {
    /// The internal functions the rewrite calls; None for other names.
    pub(super) fn bind_search_function(
        &mut self,
        name: &str,
        mut args: Vec<Expr>,
    ) -> PgResult<Option<Expr>> {
        // Only the rewrite calls them, with the previous value first (and
        // CYCLE's two mark values); a hand-written call is no function.
        let least = if name == CYCLE_MARK_FN { 3 } else { 1 };
        if args.len() < least {
            return Ok(None);
        }
        let (func, ty) = match name {
            SEARCH_PATH_FN => (SysFunc::SearchPath, TypeId::RecordArray.into()),
            SEARCH_BREADTH_FN => (SysFunc::SearchBreadth, TypeId::Record.into()),
            CYCLE_MARK_FN => {
                // TO and DEFAULT meet in their common type.
                let types = [args[1].data_type(), args[2].data_type()];
                let mut ty: DataType = self.common_type(&types, "CYCLE")?;
                if ty.id == TypeId::Unknown {
                    ty = TypeId::Text.into();
                }
                for arg in &mut args[1..3] {
                    let v = std::mem::replace(arg, Expr::Const(types::Value::Null, ty));
                    *arg = self.coerce(v, ty, CastContext::Implicit)?;
                }
                (SysFunc::CycleMark, ty)
            }
            _ => return Ok(None),
        };
        Ok(Some(Expr::Sys { func, args, ty }))
    }
}
