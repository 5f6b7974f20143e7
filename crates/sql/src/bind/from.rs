//! FROM clauses: tables, views, subqueries, functions (`srf.rs`) and
//! joins as written (the planner reorders inner joins), USING/NATURAL's
//! merged columns, and LATERAL items, bound with the items to their left
//! as an outer scope (`bind_beside`) and joined per left row when they
//! read it.

use common::{PgError, PgResult, SqlState};
use sqlparser::ast;
use types::cast::CastContext;

use super::{ident_name, object_name_parts, Binder, Scope, ScopeColumn};
use crate::expr::Expr;
use crate::plan::{JoinKind, Plan};

/// Whether a FROM item may read the items to its left: a LATERAL subquery
/// or a function (functions in FROM are implicitly LATERAL).
fn may_be_lateral(tf: &ast::TableFactor) -> bool {
    matches!(
        tf,
        ast::TableFactor::Derived { lateral: true, .. }
            | ast::TableFactor::Function { .. }
            | ast::TableFactor::UNNEST { .. }
            | ast::TableFactor::Table { args: Some(_), .. }
    )
}

/// A non-LATERAL FROM item's reference to an item on its left, which it
/// cannot see: PostgreSQL's error for it, where the name was not found.
fn sibling_reference(err: PgError, left: &Scope) -> PgError {
    if err.code != SqlState::UNDEFINED_TABLE {
        return err;
    }
    let Some(table) = err
        .message
        .strip_prefix("missing FROM-clause entry for table \"")
        .and_then(|r| r.strip_suffix('"'))
        .filter(|t| left.iter().any(|c| c.qualifier.as_deref() == Some(*t)))
        .map(str::to_string)
    else {
        return err;
    };
    PgError::new(
        SqlState::UNDEFINED_TABLE,
        format!("invalid reference to FROM-clause entry for table \"{table}\""),
    )
    .with_hint(format!(
        "There is an entry for table \"{table}\", but it cannot be referenced from this part of the query."
    ))
}

/// PostgreSQL's error for a LATERAL reference across a RIGHT or FULL join.
fn lateral_join_kind_error(left: &Scope) -> PgError {
    let table = left
        .iter()
        .find_map(|c| c.qualifier.clone())
        .unwrap_or_default();
    PgError::new(
        SqlState::INVALID_COLUMN_REFERENCE,
        format!("invalid reference to FROM-clause entry for table \"{table}\""),
    )
    .with_detail("The combining JOIN type must be INNER or LEFT for a LATERAL reference.")
}

impl Binder<'_, '_> {
    /// A FROM list: its items cross-joined left to right, a LATERAL one
    /// (or a list item holding one) joined per left row when it reads the
    /// items before it.
    pub(super) fn bind_from_list(
        &mut self,
        from: &[ast::TableWithJoins],
    ) -> PgResult<(Plan, Scope)> {
        let mut acc: Option<(Plan, Scope)> = None;
        for twj in from {
            acc = Some(match acc {
                None => self.bind_table_with_joins(twj)?,
                Some((lp, mut ls)) => {
                    let reads_left = may_be_lateral(&twj.relation)
                        || twj.joins.iter().any(|j| may_be_lateral(&j.relation));
                    let ((p, sc), lateral) = if reads_left {
                        self.bind_beside(&ls, |b| b.bind_table_with_joins(twj))?
                    } else {
                        let bound = self.bind_table_with_joins(twj);
                        (bound.map_err(|e| sibling_reference(e, &ls))?, false)
                    };
                    let (lw, rw) = (ls.len(), sc.len());
                    ls.extend(sc);
                    let (left, right) = (Box::new(lp), Box::new(p));
                    let kind = JoinKind::Inner;
                    let plan = if lateral {
                        Plan::LateralJoin {
                            left,
                            right,
                            kind,
                            on: None,
                            left_width: lw,
                            right_width: rw,
                        }
                    } else {
                        Plan::NestedLoop {
                            left,
                            right,
                            kind,
                            on: None,
                            left_width: lw,
                            right_width: rw,
                        }
                    };
                    (plan, ls)
                }
            });
        }
        Ok(acc.expect("a FROM list has an item"))
    }

    /// A view named in FROM: its stored query, bound here as a subquery
    /// whose columns carry the view's names.
    pub(crate) fn expand_view(
        &mut self,
        v: &catalog::View,
        alias: &Option<ast::TableAlias>,
    ) -> PgResult<(Plan, Scope)> {
        let dialect = sqlparser::dialect::PostgreSqlDialect {};
        let q = sqlparser::parser::Parser::new(&dialect)
            .try_with_sql(&v.query)
            .and_then(|mut p| p.parse_query())
            .map_err(|e| {
                PgError::internal(format!(
                    "stored query of view \"{}\" does not parse: {e}",
                    v.name
                ))
            })?;
        let (mut plan, mut cols) = self.bind_view_query(&q)?;
        if cols.len() > v.columns.len() {
            // `*` in the stored query now finds columns added since the
            // view was made; the view keeps the ones it had.
            cols.truncate(v.columns.len());
            plan = Plan::Project {
                input: Box::new(plan),
                exprs: cols
                    .iter()
                    .enumerate()
                    .map(|(i, c)| Expr::Column(i, c.ty))
                    .collect(),
            };
        }
        if cols.len() < v.columns.len() {
            return Err(PgError::new(
                SqlState::UNDEFINED_COLUMN,
                format!("view \"{}\" lost columns of its query", v.name),
            ));
        }
        let q = alias
            .as_ref()
            .map_or_else(|| v.name.clone(), |a| ident_name(&a.name));
        let mut scope: Scope = cols
            .into_iter()
            .zip(&v.columns)
            .map(|(c, vc)| ScopeColumn::derived(Some(q.clone()), vc.name.clone(), c.ty))
            .collect();
        super::apply_column_aliases(&mut scope, alias)?;
        Ok((plan, scope))
    }

    fn bind_table_factor(&mut self, tf: &ast::TableFactor) -> PgResult<(Plan, Scope)> {
        match tf {
            ast::TableFactor::UNNEST {
                alias,
                array_exprs,
                with_offset: false,
                with_ordinality,
                ..
            } => {
                let args: Vec<ast::FunctionArg> = array_exprs
                    .iter()
                    .map(|e| ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e.clone())))
                    .collect();
                let call = super::srf::FromCall {
                    name: "unnest".into(),
                    args: &args,
                };
                self.bind_function_item(&[call], *with_ordinality, alias)
            }
            ast::TableFactor::Function {
                name,
                args,
                with_ordinality,
                alias,
                ..
            } => {
                let calls = super::srf::from_calls(name, args)?;
                self.bind_function_item(&calls, *with_ordinality, alias)
            }
            ast::TableFactor::Table {
                name,
                alias,
                args: Some(args),
                with_ordinality,
                ..
            } => {
                let calls = super::srf::from_calls(name, &args.args)?;
                self.bind_function_item(&calls, *with_ordinality, alias)
            }
            ast::TableFactor::Table { name, alias, .. } => {
                let parts = object_name_parts(name)?;
                self.bind_named_relation(parts, alias, Some(ast::Spanned::span(name)))
            }
            // LATERAL or not, the caller decides which outer scopes it sees.
            ast::TableFactor::Derived {
                subquery, alias, ..
            } => {
                if let Some(a) = alias {
                    self.check_lock_other(&ident_name(&a.name), false)?;
                } else if self.locking.is_some() {
                    self.check_lock_other("", false)?;
                }
                let (plan, cols) = self.bind_query(subquery)?;
                let q = alias.as_ref().map(|a| ident_name(&a.name));
                let mut scope: Scope = cols
                    .into_iter()
                    .map(|c| ScopeColumn::derived(q.clone(), c.name, c.ty))
                    .collect();
                super::apply_column_aliases(&mut scope, alias)?;
                Ok((plan, scope))
            }
            ast::TableFactor::NestedJoin {
                table_with_joins,
                alias: None,
            } => self.bind_table_with_joins(table_with_joins),
            _ => Err(PgError::unsupported("this FROM item is not supported yet")),
        }
    }

    /// A relation named in FROM: a WITH query, a system view, a view or a
    /// table (`span`: where its name is, for the error when it is none).
    fn bind_named_relation(
        &mut self,
        parts: Vec<String>,
        alias: &Option<ast::TableAlias>,
        span: Option<sqlparser::tokenizer::Span>,
    ) -> PgResult<(Plan, Scope)> {
        let alias_name = alias.as_ref().map(|a| ident_name(&a.name));
        if parts.len() == 1 {
            if let Some(r) = self.bind_cte_ref(&parts[0], alias, span)? {
                self.check_lock_cte(alias_name.as_deref().unwrap_or(&parts[0]))?;
                return Ok(r);
            }
        }
        if let Some((plan, cols)) = self.system_view(&parts, alias_name.as_deref()) {
            let q = alias_name.unwrap_or_else(|| parts.last().unwrap().clone());
            let scope = cols
                .into_iter()
                .map(|c| ScopeColumn::derived(Some(q.clone()), c.name, c.ty))
                .collect();
            return Ok((plan, scope));
        }
        let table = match self.lookup_relation(&parts)? {
            Some(super::Relation::Table(t)) => t,
            Some(super::Relation::View(v)) => {
                self.check_lock_other(alias_name.as_deref().unwrap_or(&v.name), false)?;
                return self.expand_view(&v, alias);
            }
            None => {
                let err = super::undefined_table(&parts.join("."));
                return Err(match span {
                    Some(span) => self.at(err, span),
                    None => err,
                });
            }
        };
        let mut scope = Self::table_scope(&table, alias_name.as_deref());
        super::apply_column_aliases(&mut scope, alias)?;
        let tid = self.scans_emit_tids();
        let refname = alias_name.clone().unwrap_or_else(|| table.name.clone());
        self.add_lock_rel(&refname, &table, &mut scope);
        let system = self.add_system_columns(&table, &refname, &mut scope);
        Ok((
            Plan::SeqScan {
                table,
                qual: Vec::new(),
                alias: alias_name,
                tid,
                system,
                index: None,
            },
            scope,
        ))
    }

    /// `TABLE name`: every column of the relation, as `SELECT * FROM name`.
    pub(super) fn bind_table_query(
        &mut self,
        t: &ast::Table,
    ) -> PgResult<(Plan, Vec<crate::plan::OutputColumn>)> {
        let Some(name) = &t.table_name else {
            return Err(PgError::syntax("syntax error at end of input"));
        };
        let parts: Vec<String> = t
            .schema_name
            .iter()
            .chain(std::iter::once(name))
            .map(|p| p.to_lowercase())
            .collect();
        let (plan, scope) = self.bind_named_relation(parts, &None, None)?;
        let mut exprs = Vec::new();
        let mut cols = Vec::new();
        for (i, c) in scope.iter().enumerate().filter(|(_, c)| !c.hidden) {
            exprs.push(Expr::Column(i, c.ty));
            cols.push(crate::plan::OutputColumn {
                name: c.name.clone(),
                ty: c.ty,
                table_oid: c.table_oid,
                column_id: c.attnum,
            });
        }
        let plan = Plan::Project {
            input: Box::new(plan),
            exprs,
        };
        Ok((plan, cols))
    }

    /// Binds `f` with `left` (the FROM items left of a LATERAL-capable
    /// item) pushed as the innermost outer scope; true if what it bound
    /// reads that scope or one beyond it, so it must run once per left row.
    fn bind_beside<T>(
        &mut self,
        left: &Scope,
        f: impl FnOnce(&mut Self) -> PgResult<T>,
    ) -> PgResult<(T, bool)> {
        let level = self.outer.len();
        self.outer.push(left.clone());
        let saved = self.outermost_ref.replace(usize::MAX);
        let r = f(self);
        self.outer.pop();
        let reached = self.outermost_ref.get();
        self.outermost_ref.set(saved.min(reached));
        Ok((r?, reached <= level))
    }

    pub(super) fn bind_table_with_joins(
        &mut self,
        twj: &ast::TableWithJoins,
    ) -> PgResult<(Plan, Scope)> {
        let (mut plan, mut scope) = self.bind_table_factor(&twj.relation)?;
        for j in &twj.joins {
            let ((rplan, rscope), lateral) = if may_be_lateral(&j.relation) {
                self.bind_beside(&scope, |b| b.bind_table_factor(&j.relation))?
            } else {
                let bound = self.bind_table_factor(&j.relation);
                (bound.map_err(|e| sibling_reference(e, &scope))?, false)
            };
            use ast::JoinOperator as J;
            let (kind, constraint) = match &j.join_operator {
                J::Join(c) | J::Inner(c) => (JoinKind::Inner, Some(c)),
                J::Left(c) | J::LeftOuter(c) => (JoinKind::Left, Some(c)),
                J::Right(c) | J::RightOuter(c) => (JoinKind::Right, Some(c)),
                J::FullOuter(c) => (JoinKind::Full, Some(c)),
                J::CrossJoin(_) => (JoinKind::Inner, None),
                _ => return Err(PgError::unsupported("this join type is not supported yet")),
            };
            self.check_outer_join_recursion(kind, &plan, &rplan)?;
            let left_width = scope.len();
            let right_width = rscope.len();
            let mut using: Option<Vec<String>> = None;
            let mut joined = scope.clone();
            joined.extend(rscope.iter().cloned());
            let on = match constraint {
                None | Some(ast::JoinConstraint::None) => None,
                Some(ast::JoinConstraint::On(e)) => {
                    let b = self
                        .in_window_context(Some("JOIN conditions"), |b| b.bind_expr(e, &joined))?;
                    if b.contains_grouping() {
                        return Err(PgError::new(
                            SqlState::GROUPING_ERROR,
                            "grouping operations are not allowed in JOIN conditions",
                        ));
                    }
                    Some(self.coerce_bool(b, "JOIN/ON")?)
                }
                Some(ast::JoinConstraint::Using(names)) => {
                    let mut v = Vec::new();
                    for n in names {
                        v.push(object_name_parts(n)?.pop().unwrap());
                    }
                    using = Some(v);
                    None
                }
                Some(ast::JoinConstraint::Natural) => {
                    // The columns both sides have, in the left side's order.
                    let common: Vec<String> = scope
                        .iter()
                        .filter(|c| !c.hidden)
                        .map(|c| c.name.clone())
                        .filter(|n| rscope.iter().any(|c| !c.hidden && &c.name == n))
                        .collect();
                    using = Some(common);
                    None
                }
            };
            match kind {
                JoinKind::Inner => {}
                JoinKind::Left => self.mark_nullable(&rscope),
                JoinKind::Right => self.mark_nullable(&scope),
                JoinKind::Full => {
                    self.mark_nullable(&scope);
                    self.mark_nullable(&rscope);
                }
            }
            let mut merged = None;
            let on = match using {
                None => on,
                Some(names) => {
                    let (cond, m) = self.bind_using(&names, &scope, &rscope, kind)?;
                    merged = Some(m);
                    cond
                }
            };
            plan = if lateral {
                if !matches!(kind, JoinKind::Inner | JoinKind::Left) {
                    return Err(lateral_join_kind_error(&scope));
                }
                Plan::LateralJoin {
                    left: Box::new(plan),
                    right: Box::new(rplan),
                    kind,
                    on,
                    left_width,
                    right_width,
                }
            } else {
                Plan::NestedLoop {
                    left: Box::new(plan),
                    right: Box::new(rplan),
                    kind,
                    on,
                    left_width,
                    right_width,
                }
            };
            scope = joined;
            // USING / NATURAL: the merged columns first, then both sides'
            // columns, the joined ones hidden behind the merged ones.
            if let Some((exprs, mcols, hide)) = merged {
                let mut all = exprs;
                all.extend(scope.iter().enumerate().map(|(i, c)| Expr::Column(i, c.ty)));
                for i in hide {
                    scope[i].hidden = true;
                }
                let mut new_scope = mcols;
                new_scope.extend(scope);
                plan = Plan::Project {
                    input: Box::new(plan),
                    exprs: all,
                };
                scope = new_scope;
            }
        }
        if !twj.joins.is_empty() {
            super::system_columns::hide_in_join(&mut scope);
        }
        Ok((plan, scope))
    }

    /// A USING join's condition, its merged columns (expressions over the
    /// joined row and their scope entries) and the joined-row columns they hide.
    #[allow(clippy::type_complexity)]
    fn bind_using(
        &mut self,
        names: &[String],
        left: &Scope,
        right: &Scope,
        kind: JoinKind,
    ) -> PgResult<(Option<Expr>, (Vec<Expr>, Vec<ScopeColumn>, Vec<usize>))> {
        let find = |s: &Scope, name: &str, side: &str| -> PgResult<usize> {
            let mut hits = s
                .iter()
                .enumerate()
                .filter(|(_, c)| !c.hidden && c.name == name);
            let Some((i, _)) = hits.next() else {
                return Err(PgError::new(
                    SqlState::UNDEFINED_COLUMN,
                    format!("column \"{name}\" specified in USING clause does not exist in {side} table"),
                ));
            };
            if hits.next().is_some() {
                return Err(PgError::new(
                    SqlState::AMBIGUOUS_COLUMN,
                    format!("common column name \"{name}\" appears more than once in {side} table"),
                ));
            }
            Ok(i)
        };
        let lw = left.len();
        let mut conds = Vec::new();
        let mut exprs = Vec::new();
        let mut cols = Vec::new();
        let mut hide = Vec::new();
        for name in names {
            let li = find(left, name, "left")?;
            let ri = find(right, name, "right")?;
            let (l, r) = (
                Expr::Column(li, left[li].ty),
                Expr::Column(lw + ri, right[ri].ty),
            );
            conds.push(self.bind_binary(types::ops::BinaryOp::Eq, l.clone(), r.clone())?);
            let ty = self.common_type(&[left[li].ty, right[ri].ty], "JOIN/USING")?;
            let l = self.coerce(l, ty, CastContext::Implicit)?;
            let r = self.coerce(r, ty, CastContext::Implicit)?;
            exprs.push(match kind {
                JoinKind::Inner | JoinKind::Left => l,
                JoinKind::Right => r,
                JoinKind::Full => Expr::Coalesce(vec![l, r], ty),
            });
            cols.push(ScopeColumn {
                qualifier: None,
                name: name.clone(),
                ty,
                table_oid: 0,
                attnum: 0,
                hidden: false,
            });
            hide.push(li);
            hide.push(lw + ri);
        }
        let cond = match conds.len() {
            0 => None,
            1 => conds.pop(),
            _ => Some(Expr::And(conds)),
        };
        Ok((cond, (exprs, cols, hide)))
    }
}
