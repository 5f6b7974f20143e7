//! WITH queries (common table expressions), as PostgreSQL 12+ plans them.
//!
//! Each CTE's query is bound once, where its WITH is, in the scope of that
//! query level. A reference binds to a copy of that plan:
//! - inlined like a subquery in FROM (so the planner pushes quals into it)
//!   when the CTE is NOT MATERIALIZED, or referenced once, not recursive and
//!   free of volatile functions;
//! - otherwise as a `Plan::CteScan`, computed once per statement for all
//!   its references (`shared`) or streamed to its single reference.
//!
//! WITH RECURSIVE's `base UNION [ALL] recursive` binds to a
//! `Plan::RecursiveUnion`; its references inside `recursive` bind to
//! `Plan::WorkTableScan`. References are counted on the syntax tree before
//! binding (names are not resolved there, so a nested WITH reusing a name
//! counts towards the outer one: such a CTE is then computed apart instead
//! of inlined, which changes no results).
//!
//! A data-modifying WITH query (`d AS (DELETE ... RETURNING *)`, only in
//! the statement's own WITH) binds to a `ModifyingCte` the statement is
//! wrapped with (`BoundStatement::WithModifying`); its references read
//! its RETURNING rows through a shared `Plan::CteScan` over
//! `Plan::ModifyingCteRows`.

use std::ops::ControlFlow;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use common::{PgError, PgResult, SqlState};
use sqlparser::ast;
use types::cast::CastContext;
use types::DataType;

use super::{ident_name, Binder, Scope, ScopeColumn};
use crate::expr::Expr;
use crate::plan::{BoundStatement, JoinKind, ModifyingCte, OutputColumn, Plan};

/// CTE ids, unique in the process so plans bound apart (a view's query)
/// never share one in a statement.
static NEXT_CTE_ID: AtomicUsize = AtomicUsize::new(1);

/// A CTE visible to name resolution.
pub(crate) struct CteEntry {
    name: String,
    id: usize,
    /// `Binder::outer.len()` at the WITH: a reference deeper down lies in
    /// a subquery.
    level: usize,
    state: CteState,
}

enum CteState {
    /// A recursive CTE whose recursive term is being bound.
    Recursive {
        types: Vec<DataType>,
        names: Vec<String>,
        /// References met so far (PostgreSQL allows one).
        refs: usize,
        /// False while its non-recursive term is bound.
        in_recursive_term: bool,
    },
    /// A data-modifying statement; its RETURNING columns, if it has one.
    Modifying { columns: Option<Vec<OutputColumn>> },
    Bound {
        plan: Plan,
        columns: Vec<OutputColumn>,
        inline: bool,
        /// Referenced more than once: computed once for all references.
        shared: bool,
        /// Reads outer queries' columns (or may: it holds a subquery).
        correlated: bool,
    },
}

/// The statement's data-modifying WITH queries, while it is bound.
#[derive(Default)]
pub(crate) struct ModifyingWith {
    /// Set until the statement's own WITH is bound: only that one may
    /// hold data-modifying statements (PostgreSQL's rule).
    top_level: bool,
    ctes: Vec<Arc<ModifyingCte>>,
}

impl ModifyingWith {
    /// The next WITH bound is the statement's own.
    pub(crate) fn allow_at_top_level(&mut self) {
        self.top_level = true;
    }
}

/// The INSERT, UPDATE or DELETE a WITH query is, if it is one.
fn modifying_statement(q: &ast::Query) -> Option<&ast::Statement> {
    match q.body.as_ref() {
        ast::SetExpr::Insert(s) | ast::SetExpr::Update(s) | ast::SetExpr::Delete(s) => Some(s),
        _ => None,
    }
}

/// Whether `q`'s own WITH holds a data-modifying statement.
pub(crate) fn with_modifies(q: &ast::Query) -> bool {
    q.with.as_ref().is_some_and(|w| {
        w.cte_tables.iter().any(|c| {
            modifying_statement(&c.query).is_some()
                || matches!(c.query.body.as_ref(), ast::SetExpr::Merge(_))
        })
    })
}

fn recursion_error(name: &str, what: &str) -> PgError {
    PgError::new(
        SqlState::INVALID_RECURSION,
        format!("recursive reference to query \"{name}\" must not appear {what}"),
    )
}

/// How many times `name` is used as a relation in `node`.
fn count_refs<V: ast::Visit>(node: &V, name: &str) -> usize {
    let mut n = 0;
    let _ = ast::visit_relations(node, |o: &ast::ObjectName| {
        if o.0.len() == 1 && o.0[0].as_ident().is_some_and(|i| ident_name(i) == name) {
            n += 1;
        }
        ControlFlow::<()>::Continue(())
    });
    n
}

/// Whether any expression of `plan` (subqueries included) satisfies `pred`.
pub(crate) fn plan_has_expr(plan: &Plan, pred: &dyn Fn(&Expr) -> bool) -> bool {
    let mut found = false;
    crate::plan::map_plan_exprs(plan.clone(), &mut |e| {
        e.visit(&mut |x| {
            found |= pred(x);
            match x {
                Expr::ScalarSubquery(p, _)
                | Expr::ArraySubquery(p, _)
                | Expr::Exists { plan: p, .. }
                | Expr::InSubquery { plan: p, .. } => found |= plan_has_expr(p, pred),
                _ => {}
            }
        });
        e
    });
    found
}

fn is_volatile(e: &Expr) -> bool {
    match e {
        Expr::Func { func, .. } => func.0.volatile,
        _ => false,
    }
}

/// Whether `plan` reads the working table of RecursiveUnion `id`.
fn reads_worktable(plan: &Plan, id: usize) -> bool {
    match plan {
        Plan::WorkTableScan { id: w, .. } => *w == id,
        other => crate::plan::explain::children(other)
            .into_iter()
            .any(|c| reads_worktable(c, id)),
    }
}

/// Whether an Aggregate in `plan` reads the working table of `id` (an
/// aggregate in the recursive term, which PostgreSQL refuses).
fn aggregates_worktable(plan: &Plan, id: usize) -> bool {
    match plan {
        Plan::Aggregate { .. } if reads_worktable(plan, id) => true,
        other => crate::plan::explain::children(other)
            .into_iter()
            .any(|c| aggregates_worktable(c, id)),
    }
}

impl Binder<'_, '_> {
    /// Binds `with`'s CTEs and makes them visible; returns how many entries
    /// were pushed (popped by `end_with` when the query is bound).
    pub(crate) fn begin_with(&mut self, with: &ast::With, q: &ast::Query) -> PgResult<usize> {
        let mut pushed = 0;
        let top_level = std::mem::take(&mut self.modifying.top_level);
        let r = self.bind_ctes(with, q, top_level, &mut pushed);
        if r.is_err() {
            self.end_with(pushed);
        }
        r.map(|_| pushed)
    }

    pub(crate) fn end_with(&mut self, pushed: usize) {
        let keep = self.ctes.len() - pushed;
        self.ctes.truncate(keep);
    }

    /// `statement` wrapped with the data-modifying WITH queries bound for
    /// it, if any.
    pub(crate) fn with_modifying_ctes(&mut self, statement: BoundStatement) -> BoundStatement {
        let ctes = std::mem::take(&mut self.modifying.ctes);
        if ctes.is_empty() {
            return statement;
        }
        BoundStatement::WithModifying {
            ctes,
            statement: Box::new(statement),
        }
    }

    fn bind_ctes(
        &mut self,
        with: &ast::With,
        q: &ast::Query,
        top_level: bool,
        pushed: &mut usize,
    ) -> PgResult<()> {
        for (i, cte) in with.cte_tables.iter().enumerate() {
            let name = ident_name(&cte.alias.name);
            // SEARCH and CYCLE arrive as markers in the column list.
            let (plain_alias, search, cycle) = crate::cte_search::split_alias(&cte.alias);
            let cleaned;
            let cte = if search.is_some() || cycle.is_some() {
                if !with.recursive || count_refs(cte.query.as_ref(), &name) == 0 {
                    return Err(PgError::new(
                        SqlState::SYNTAX_ERROR,
                        "WITH query is not recursive",
                    ));
                }
                cleaned = ast::Cte {
                    alias: plain_alias,
                    ..cte.clone()
                };
                &cleaned
            } else {
                cte
            };
            if with.cte_tables[..i]
                .iter()
                .any(|c| ident_name(&c.alias.name) == name)
            {
                let err = PgError::new(
                    SqlState::DUPLICATE_ALIAS,
                    format!("WITH query name \"{name}\" specified more than once"),
                );
                return Err(self.at(err, cte.alias.name.span));
            }
            if matches!(cte.query.body.as_ref(), ast::SetExpr::Merge(_)) {
                return Err(PgError::unsupported("MERGE in WITH is not supported"));
            }
            if let Some(statement) = modifying_statement(&cte.query) {
                if !top_level {
                    let err = PgError::new(
                        SqlState::FEATURE_NOT_SUPPORTED,
                        "WITH clause containing a data-modifying statement must be at the top level",
                    );
                    return Err(self.at(err, cte.alias.name.span));
                }
                self.bind_modifying_cte(cte, &name, statement)?;
                *pushed += 1;
                continue;
            }
            // References in the main query and in the CTEs after this one.
            let mut refs = count_refs(q.body.as_ref(), &name);
            for later in &with.cte_tables[i + 1..] {
                refs += count_refs(later.query.as_ref(), &name);
            }
            if let Some(ob) = &q.order_by {
                refs += count_refs(ob, &name);
            }
            let id = NEXT_CTE_ID.fetch_add(1, Ordering::Relaxed);
            let self_refs = if with.recursive {
                count_refs(cte.query.as_ref(), &name)
            } else {
                0
            };
            let (plan, columns, recursive) = if self_refs > 0 {
                // The non-recursive term sees the name only to refuse it.
                self.ctes.push(CteEntry {
                    name: name.clone(),
                    id,
                    level: self.outer.len(),
                    state: CteState::Recursive {
                        types: Vec::new(),
                        names: Vec::new(),
                        refs: 0,
                        in_recursive_term: false,
                    },
                });
                *pushed += 1;
                let (p, c) =
                    self.bind_recursive_cte(cte, &name, id, search.as_ref(), cycle.as_ref())?;
                (p, c, true)
            } else {
                let (p, c) = self.bind_query(&cte.query)?;
                (p, c, false)
            };
            let columns = self.alias_columns(&name, columns, &cte.alias)?;
            let correlated = plan_has_expr(&plan, &|e| {
                matches!(e, Expr::OuterColumn { .. }) || e.is_subquery()
            });
            // A volatile function runs once per row of the CTE, however
            // often it is read, even NOT MATERIALIZED (as PostgreSQL).
            let inline = !recursive
                && !plan_has_expr(&plan, &is_volatile)
                && match cte.materialized {
                    Some(ast::CteAsMaterialized::NotMaterialized) => true,
                    Some(ast::CteAsMaterialized::Materialized) => false,
                    None => refs <= 1,
                };
            let entry = CteEntry {
                name,
                id,
                level: self.outer.len(),
                state: CteState::Bound {
                    plan,
                    columns,
                    inline,
                    shared: refs > 1,
                    correlated,
                },
            };
            if recursive {
                // Its working-table entry becomes the bound CTE.
                *self.ctes.last_mut().expect("pushed above") = entry;
            } else {
                self.ctes.push(entry);
                *pushed += 1;
            }
        }
        Ok(())
    }

    /// `name AS (INSERT | UPDATE | DELETE ...)`: bound as the statement
    /// it is, made visible as a CTE reading its RETURNING rows.
    fn bind_modifying_cte(
        &mut self,
        cte: &ast::Cte,
        name: &str,
        statement: &ast::Statement,
    ) -> PgResult<()> {
        let statement = self.bind_sql(statement)?;
        let columns = match statement.columns() {
            Some(c) => Some(self.alias_columns(name, c.to_vec(), &cte.alias)?),
            None => None,
        };
        let id = NEXT_CTE_ID.fetch_add(1, Ordering::Relaxed);
        self.modifying.ctes.push(Arc::new(ModifyingCte {
            id,
            name: name.to_string(),
            statement,
        }));
        self.ctes.push(CteEntry {
            name: name.to_string(),
            id,
            level: self.outer.len(),
            state: CteState::Modifying { columns },
        });
        Ok(())
    }

    /// The CTE's column names: `WITH t(a, b)` renames the first ones.
    fn alias_columns(
        &self,
        name: &str,
        mut columns: Vec<OutputColumn>,
        alias: &ast::TableAlias,
    ) -> PgResult<Vec<OutputColumn>> {
        if alias.columns.len() > columns.len() {
            return Err(PgError::new(
                SqlState::INVALID_COLUMN_REFERENCE,
                format!(
                    "WITH query \"{name}\" has {} columns available but {} columns specified",
                    columns.len(),
                    alias.columns.len()
                ),
            ));
        }
        for (c, a) in columns.iter_mut().zip(&alias.columns) {
            c.name = ident_name(&a.name);
        }
        Ok(columns)
    }

    /// `WITH RECURSIVE name AS (base UNION [ALL] recursive)`, with the CTE's
    /// working-table entry last in `ctes` (the caller replaces it by the
    /// bound CTE).
    fn bind_recursive_cte(
        &mut self,
        cte: &ast::Cte,
        name: &str,
        id: usize,
        search: Option<&crate::cte_search::SearchClause>,
        cycle: Option<&crate::cte_search::CycleClause>,
    ) -> PgResult<(Plan, Vec<OutputColumn>)> {
        let q = cte.query.as_ref();
        let ast::SetExpr::SetOperation {
            left,
            op: ast::SetOperator::Union,
            set_quantifier,
            right,
        } = q.body.as_ref()
        else {
            return Err(PgError::new(
                SqlState::INVALID_RECURSION,
                format!(
                    "recursive query \"{name}\" does not have the form non-recursive-term UNION [ALL] recursive-term"
                ),
            ));
        };
        if q.order_by.is_some() {
            return Err(PgError::unsupported(
                "ORDER BY in a recursive query is not implemented",
            ));
        }
        if q.limit_clause.is_some() || q.fetch.is_some() {
            return Err(PgError::unsupported(
                "LIMIT in a recursive query is not implemented",
            ));
        }
        if q.with.is_some() {
            return Err(PgError::unsupported(
                "a WITH clause inside a recursive query is not supported yet",
            ));
        }
        let (mut base, base_cols) = self.bind_set_expr(left)?;
        let mut base_cols = self.alias_columns(name, base_cols, &cte.alias)?;
        let rewritten_right;
        let mut right: &ast::SetExpr = right;
        if search.is_some() || cycle.is_some() {
            // Bound again with the added columns (their names are the CTE's).
            let names: Vec<String> = base_cols.iter().map(|c| c.name.clone()).collect();
            super::cte_search::check_clauses(&names, search, cycle)?;
            let (new_left, new_right) =
                super::cte_search::rewrite_terms(left, right, name, &names, search, cycle)?;
            (base, base_cols) = self.bind_set_expr(&new_left)?;
            rewritten_right = new_right;
            right = &rewritten_right;
        }
        let types: Vec<DataType> = base_cols
            .iter()
            .map(|c| {
                if c.ty.id == types::TypeId::Unknown {
                    types::TypeId::Text.into()
                } else {
                    c.ty
                }
            })
            .collect();
        let base = self.coerce_columns(base, &base_cols, &types)?;
        if let Some(CteEntry {
            state:
                CteState::Recursive {
                    types: t,
                    names,
                    in_recursive_term,
                    ..
                },
            ..
        }) = self.ctes.last_mut()
        {
            *t = types.clone();
            *names = base_cols.iter().map(|c| c.name.clone()).collect();
            *in_recursive_term = true;
        }
        let (rec, rec_cols) = self.bind_set_expr(right)?;
        if let Some(e) = self.ctes.last() {
            if aggregates_worktable(&rec, e.id) {
                return Err(PgError::new(
                    SqlState::INVALID_RECURSION,
                    "aggregate functions are not allowed in a recursive query's recursive term",
                ));
            }
        }
        if rec_cols.len() != types.len() {
            return Err(PgError::syntax(
                "each UNION query must have the same number of columns",
            ));
        }
        for (i, (rc, ty)) in rec_cols.iter().zip(&types).enumerate() {
            let overall = self.common_type(&[*ty, rc.ty], "UNION")?;
            if overall != *ty {
                return Err(PgError::new(
                    SqlState::DATATYPE_MISMATCH,
                    format!(
                        "recursive query \"{name}\" column {} has type {} in non-recursive term but type {} overall",
                        i + 1,
                        ty.display_name(),
                        overall.display_name()
                    ),
                )
                .with_hint("Cast the output of the non-recursive term to the correct type."));
            }
        }
        let rec = self.coerce_columns(rec, &rec_cols, &types)?;
        let width = types.len();
        let cols = base_cols
            .into_iter()
            .zip(&types)
            .map(|(c, ty)| OutputColumn {
                name: c.name,
                ty: *ty,
                table_oid: 0,
                column_id: 0,
            })
            .collect();
        Ok((
            Plan::RecursiveUnion {
                id,
                base: Box::new(base),
                recursive: Box::new(rec),
                distinct: !matches!(set_quantifier, ast::SetQuantifier::All),
                width,
            },
            cols,
        ))
    }

    /// `plan` with its columns converted to `types` where they differ.
    fn coerce_columns(
        &mut self,
        plan: Plan,
        cols: &[OutputColumn],
        types: &[DataType],
    ) -> PgResult<Plan> {
        if cols.iter().zip(types).all(|(c, t)| c.ty == *t) {
            return Ok(plan);
        }
        let mut exprs = Vec::with_capacity(cols.len());
        for (i, (c, t)) in cols.iter().zip(types).enumerate() {
            exprs.push(self.coerce(Expr::Column(i, c.ty), *t, CastContext::Implicit)?);
        }
        Ok(Plan::Project {
            input: Box::new(plan),
            exprs,
        })
    }

    /// A FROM item naming a CTE in scope, bound to its rows; None when no
    /// CTE has that name.
    pub(crate) fn bind_cte_ref(
        &mut self,
        name: &str,
        alias: &Option<ast::TableAlias>,
        span: Option<sqlparser::tokenizer::Span>,
    ) -> PgResult<Option<(Plan, Scope)>> {
        let Some(pos) = self.ctes.iter().rposition(|c| c.name == name) else {
            return Ok(None);
        };
        let depth = self.outer.len();
        let alias_name = alias.as_ref().map(|a| ident_name(&a.name));
        let qualifier = alias_name.clone().unwrap_or_else(|| name.to_string());
        let entry = &mut self.ctes[pos];
        let (plan, names, types) = match &mut entry.state {
            CteState::Recursive {
                types,
                names,
                refs,
                in_recursive_term,
            } => {
                if !*in_recursive_term {
                    return Err(recursion_error(name, "within its non-recursive term"));
                }
                if depth > entry.level {
                    return Err(recursion_error(name, "within a subquery"));
                }
                *refs += 1;
                if *refs > 1 {
                    return Err(recursion_error(name, "more than once"));
                }
                (
                    Plan::WorkTableScan {
                        id: entry.id,
                        name: name.to_string(),
                        alias: alias_name,
                        columns: names.clone(),
                        types: types.clone(),
                    },
                    names.clone(),
                    types.clone(),
                )
            }
            CteState::Modifying { columns } => {
                let Some(columns) = columns else {
                    let err = PgError::new(
                        SqlState::FEATURE_NOT_SUPPORTED,
                        format!("WITH query \"{name}\" does not have a RETURNING clause"),
                    );
                    return Err(match span {
                        Some(s) => self.at(err, s),
                        None => err,
                    });
                };
                let names: Vec<String> = columns.iter().map(|c| c.name.clone()).collect();
                let types: Vec<DataType> = columns.iter().map(|c| c.ty).collect();
                // Shared: the statement runs once, however often it is read.
                let plan = Plan::CteScan {
                    id: entry.id,
                    name: name.to_string(),
                    alias: alias_name.filter(|a| a != name),
                    columns: names.clone(),
                    plan: Box::new(Plan::ModifyingCteRows {
                        id: entry.id,
                        types: types.clone(),
                    }),
                    shared: true,
                    outer_rows: 0,
                };
                (plan, names, types)
            }
            CteState::Bound {
                plan,
                columns,
                inline,
                shared,
                correlated,
            } => {
                if *correlated && depth != entry.level {
                    return Err(PgError::unsupported(
                        "a WITH query that reads outer columns, referenced from a subquery",
                    ));
                }
                let names: Vec<String> = columns.iter().map(|c| c.name.clone()).collect();
                let types = columns.iter().map(|c| c.ty).collect();
                let plan = if *inline {
                    plan.clone()
                } else {
                    Plan::CteScan {
                        id: entry.id,
                        name: name.to_string(),
                        alias: alias_name.filter(|a| a != name),
                        columns: names.clone(),
                        plan: Box::new(plan.clone()),
                        // From a subquery it may be read many times.
                        shared: *shared || depth > entry.level,
                        outer_rows: if *correlated { entry.level } else { 0 },
                    }
                };
                (plan, names, types)
            }
        };
        let mut scope: Scope = names
            .into_iter()
            .zip(types)
            .map(|(n, ty)| ScopeColumn {
                qualifier: Some(qualifier.clone()),
                name: n,
                ty,
                table_oid: 0,
                attnum: 0,
                hidden: false,
            })
            .collect();
        if let Some(a) = alias {
            for (c, n) in scope.iter_mut().zip(&a.columns) {
                c.name = ident_name(&n.name);
            }
        }
        Ok(Some((plan, scope)))
    }

    /// Refuses a recursive reference on the nullable side of an outer join.
    pub(crate) fn check_outer_join_recursion(
        &self,
        kind: JoinKind,
        left: &Plan,
        right: &Plan,
    ) -> PgResult<()> {
        let mut nullable = Vec::new();
        if matches!(kind, JoinKind::Left | JoinKind::Full) {
            nullable.push(right);
        }
        if matches!(kind, JoinKind::Right | JoinKind::Full) {
            nullable.push(left);
        }
        for c in &self.ctes {
            if matches!(c.state, CteState::Recursive { .. })
                && nullable.iter().any(|p| reads_worktable(p, c.id))
            {
                return Err(recursion_error(&c.name, "within an outer join"));
            }
        }
        Ok(())
    }
}
