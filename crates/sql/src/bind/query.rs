//! SELECT binding: the FROM list (`from.rs`), WHERE as a filter over it
//! (the planner places its conjuncts and orders the joins), aggregation,
//! projection, DISTINCT, ORDER BY, LIMIT, set operations.

use common::{PgError, PgResult, SqlState};
use sqlparser::ast;
use types::cast::CastContext;
use types::{DataType, TypeId, Value};

use super::target_list::{check_target_list, output_name};
use super::{ident_name, object_name_parts, Binder, Scope};
use crate::expr::{AggCall, Expr};
use crate::plan::{OutputColumn, Plan, SetOpKind, SortKey};

/// Whether an expression calls a set-returning function anywhere.
fn has_srf_call(e: &ast::Expr) -> bool {
    let found = ast::visit_expressions(e, |x| match x {
        ast::Expr::Function(f)
            if f.name
                .0
                .last()
                .and_then(|p| p.as_ident())
                .is_some_and(|i| super::srf::is_srf_name(&i.value.to_ascii_lowercase())) =>
        {
            std::ops::ControlFlow::Break(())
        }
        _ => std::ops::ControlFlow::Continue(()),
    });
    found.is_break()
}

/// A ProjectSet computing `exprs` over `input`: each set-returning call in
/// them becomes a reference to its value after the input's columns.
pub(super) fn project_set(input: Plan, exprs: Vec<Expr>) -> Plan {
    let width = input.width();
    let mut srfs = Vec::new();
    let exprs = exprs
        .into_iter()
        .map(|e| {
            e.transform(&mut |x| {
                Ok(match x {
                    Expr::Srf(call) => {
                        let ty = call.value_type();
                        srfs.push(*call);
                        Expr::Column(width + srfs.len() - 1, ty)
                    }
                    other => other,
                })
            })
            .expect("replacing calls cannot fail")
        })
        .collect();
    Plan::ProjectSet {
        input: Box::new(input),
        srfs,
        exprs,
    }
}

impl Binder<'_, '_> {
    /// A single VALUES row with a set-returning call (as in `INSERT INTO t
    /// VALUES (generate_series(1, 10), 'x')`), planned like a SELECT of
    /// those expressions; None if the row has no such call.
    pub(crate) fn bind_srf_row(
        &mut self,
        row: &[ast::Expr],
    ) -> PgResult<Option<(Plan, Vec<OutputColumn>)>> {
        if !row.iter().any(has_srf_call) {
            return Ok(None);
        }
        let scope: Scope = Vec::new();
        let mut exprs = Vec::with_capacity(row.len());
        let mut cols = Vec::with_capacity(row.len());
        for e in row {
            let b = self.in_window_context(None, |b| b.bind_expr(e, &scope))?;
            let ty = b.data_type();
            exprs.push(b);
            cols.push(OutputColumn {
                name: "?column?".into(),
                ty,
                table_oid: 0,
                column_id: 0,
            });
        }
        let input = Plan::Values {
            rows: vec![vec![]],
            width: 0,
        };
        Ok(Some((project_set(input, exprs), cols)))
    }

    pub(crate) fn bind_subquery(
        &mut self,
        q: &ast::Query,
        scope: &Scope,
    ) -> PgResult<(Plan, Vec<OutputColumn>)> {
        self.outer.push(scope.clone());
        let r = self.bind_query(q);
        self.outer.pop();
        r
    }

    pub(crate) fn bind_query(&mut self, q: &ast::Query) -> PgResult<(Plan, Vec<OutputColumn>)> {
        let _level = common::stack_depth::enter()?;
        let pushed = match &q.with {
            Some(with) => self.begin_with(with, q)?,
            None => 0,
        };
        // This query's locking clause applies to its own FROM list only:
        // enclosing and nested queries have their own.
        let outer_locking = std::mem::replace(&mut self.locking, super::locking::LockScope::new(q));
        let r = self.bind_query_body(q);
        self.locking = outer_locking;
        self.end_with(pushed);
        r
    }

    fn bind_query_body(&mut self, q: &ast::Query) -> PgResult<(Plan, Vec<OutputColumn>)> {
        let order: Vec<ast::OrderByExpr> = match &q.order_by {
            Some(ob) => match &ob.kind {
                ast::OrderByKind::Expressions(v) => v.clone(),
                ast::OrderByKind::All(_) => return Err(PgError::unsupported("ORDER BY ALL")),
            },
            None => Vec::new(),
        };
        let (mut plan, cols) = match q.body.as_ref() {
            ast::SetExpr::Select(s) => self.bind_select(s, &order)?,
            ast::SetExpr::SetOperation { .. } if self.locking.is_some() => {
                return Err(PgError::new(
                    SqlState::FEATURE_NOT_SUPPORTED,
                    format!(
                        "{} is not allowed with UNION/INTERSECT/EXCEPT",
                        crate::locking::clause(&q.locks[0]).strength.as_sql()
                    ),
                ));
            }
            ast::SetExpr::Query(_) | ast::SetExpr::Values(_) if self.locking.is_some() => {
                return Err(PgError::unsupported(
                    "a locking clause on a parenthesized query or VALUES is not supported yet",
                ));
            }
            other => {
                let (plan, cols) = self.bind_set_expr(other)?;
                let plan = self.order_by_output(plan, &cols, &order)?;
                (plan, cols)
            }
        };
        let (limit, offset) = match &q.limit_clause {
            None => (None, None),
            Some(ast::LimitClause::LimitOffset { limit, offset, .. }) => {
                (limit.clone(), offset.as_ref().map(|o| o.value.clone()))
            }
            Some(ast::LimitClause::OffsetCommaLimit { offset, limit }) => {
                (Some(limit.clone()), Some(offset.clone()))
            }
        };
        let with_ties = q.fetch.as_ref().is_some_and(|f| f.with_ties);
        if let Some(f) = &q.fetch {
            if f.percent {
                return Err(PgError::syntax("syntax error at or near \"PERCENT\""));
            }
            if f.with_ties && order.is_empty() {
                return Err(PgError::syntax(
                    "WITH TIES cannot be specified without ORDER BY clause",
                ));
            }
            let skip_locked = q
                .locks
                .iter()
                .any(|l| matches!(l.nonblock, Some(ast::NonBlock::SkipLocked)));
            if f.with_ties && skip_locked {
                return Err(PgError::syntax(
                    "SKIP LOCKED and WITH TIES options cannot be used together",
                ));
            }
            let is_null = |e: &ast::Expr| matches!(e, ast::Expr::Value(v) if matches!(v.value, ast::Value::Null));
            if f.with_ties && f.quantity.as_ref().is_some_and(is_null) {
                return Err(PgError::new(
                    SqlState::INVALID_ROW_COUNT_IN_LIMIT,
                    "row count cannot be null in FETCH FIRST ... WITH TIES clause",
                ));
            }
        }
        let limit = match q.fetch.as_ref() {
            Some(f) => f.quantity.clone().or(Some(ast::Expr::Value(
                ast::Value::Number("1".into(), false).into(),
            ))),
            None => limit,
        };
        if limit.is_some() || offset.is_some() {
            let bind_count = |b: &mut Self, e: Option<ast::Expr>| -> PgResult<Option<Expr>> {
                match e {
                    None => Ok(None),
                    Some(ast::Expr::Value(v)) if matches!(v.value, ast::Value::Null) => Ok(None),
                    Some(e) => {
                        let x = b.bind_expr(&e, &Vec::new())?;
                        Ok(Some(b.coerce(
                            x,
                            TypeId::Int8.into(),
                            CastContext::Assignment,
                        )?))
                    }
                }
            };
            let limit = self.in_window_context(Some("LIMIT"), |b| bind_count(b, limit))?;
            let offset = self.in_window_context(Some("OFFSET"), |b| bind_count(b, offset))?;
            plan = if with_ties {
                limit_with_ties(plan, limit, offset)?
            } else {
                Plan::Limit {
                    input: Box::new(plan),
                    limit,
                    offset,
                    ties: Vec::new(),
                }
            };
        }
        Ok((plan, cols))
    }

    pub(crate) fn bind_set_expr(
        &mut self,
        s: &ast::SetExpr,
    ) -> PgResult<(Plan, Vec<OutputColumn>)> {
        let _level = common::stack_depth::enter()?;
        match s {
            ast::SetExpr::Select(sel) => self.bind_select(sel, &[]),
            ast::SetExpr::Query(q) => self.bind_query(q),
            ast::SetExpr::Values(v) => self.bind_values(v),
            ast::SetExpr::Table(t) => self.bind_table_query(t),
            ast::SetExpr::SetOperation {
                left,
                op,
                set_quantifier,
                right,
            } => {
                let (lp, lc) = self.bind_set_expr(left)?;
                let (rp, rc) = self.bind_set_expr(right)?;
                let opname = match op {
                    ast::SetOperator::Union => "UNION",
                    ast::SetOperator::Intersect => "INTERSECT",
                    ast::SetOperator::Except => "EXCEPT",
                    _ => return Err(PgError::unsupported("set operation")),
                };
                if lc.len() != rc.len() {
                    return Err(PgError::syntax(format!(
                        "each {opname} query must have the same number of columns"
                    )));
                }
                let mut lexprs = Vec::new();
                let mut rexprs = Vec::new();
                let mut cols = Vec::new();
                for (i, (l, r)) in lc.iter().zip(&rc).enumerate() {
                    let ty = self.common_type(&[l.ty, r.ty], opname)?;
                    let ty = if ty.id == TypeId::Unknown {
                        TypeId::Text.into()
                    } else {
                        ty
                    };
                    lexprs.push(self.coerce(Expr::Column(i, l.ty), ty, CastContext::Implicit)?);
                    rexprs.push(self.coerce(Expr::Column(i, r.ty), ty, CastContext::Implicit)?);
                    cols.push(OutputColumn {
                        name: l.name.clone(),
                        ty,
                        table_oid: 0,
                        column_id: 0,
                    });
                }
                let kind = match op {
                    ast::SetOperator::Union => SetOpKind::Union,
                    ast::SetOperator::Intersect => SetOpKind::Intersect,
                    _ => SetOpKind::Except,
                };
                let all = matches!(set_quantifier, ast::SetQuantifier::All);
                Ok((
                    Plan::SetOp {
                        left: Box::new(Plan::Project {
                            input: Box::new(lp),
                            exprs: lexprs,
                        }),
                        right: Box::new(Plan::Project {
                            input: Box::new(rp),
                            exprs: rexprs,
                        }),
                        op: kind,
                        all,
                    },
                    cols,
                ))
            }
            _ => Err(PgError::unsupported("this query form is not supported yet")),
        }
    }

    fn bind_values(&mut self, v: &ast::Values) -> PgResult<(Plan, Vec<OutputColumn>)> {
        check_target_list(v.rows.first().map_or(0, |r| r.len()))?;
        let mut rows: Vec<Vec<Expr>> = Vec::new();
        for r in &v.rows {
            let row = self.in_window_context(Some("VALUES"), |b| {
                r.iter()
                    .map(|e| b.bind_expr(e, &Vec::new()))
                    .collect::<PgResult<Vec<_>>>()
            })?;
            if let Some(first) = rows.first() {
                if first.len() != row.len() {
                    return Err(PgError::syntax("VALUES lists must all be the same length"));
                }
            }
            rows.push(row);
        }
        let width = rows.first().map_or(0, Vec::len);
        let mut cols = Vec::new();
        for i in 0..width {
            let types: Vec<DataType> = rows.iter().map(|r| r[i].data_type()).collect();
            let ty = self.common_type(&types, "VALUES")?;
            let ty = if ty.id == TypeId::Unknown {
                TypeId::Text.into()
            } else {
                ty
            };
            for r in rows.iter_mut() {
                let e = std::mem::replace(&mut r[i], Expr::Const(Value::Null, ty));
                r[i] = self.coerce(e, ty, CastContext::Implicit)?;
            }
            cols.push(OutputColumn {
                name: format!("column{}", i + 1),
                ty,
                table_oid: 0,
                column_id: 0,
            });
        }
        Ok((Plan::Values { rows, width }, cols))
    }

    /// ORDER BY over output columns only (set operations).
    fn order_by_output(
        &mut self,
        plan: Plan,
        cols: &[OutputColumn],
        order: &[ast::OrderByExpr],
    ) -> PgResult<Plan> {
        if order.is_empty() {
            return Ok(plan);
        }
        let mut keys = Vec::new();
        for o in order {
            let idx = match &o.expr {
                ast::Expr::Value(v) => match &v.value {
                    ast::Value::Number(n, _) => n
                        .parse::<usize>()
                        .ok()
                        .filter(|&k| k >= 1 && k <= cols.len())
                        .map(|k| k - 1),
                    _ => None,
                },
                ast::Expr::Identifier(i) => cols.iter().position(|c| c.name == ident_name(i)),
                _ => None,
            }
            .ok_or_else(|| {
                PgError::unsupported("ORDER BY on a set operation must name an output column")
            })?;
            keys.push(sort_key(idx, o)?);
        }
        Ok(Plan::Sort {
            input: Box::new(plan),
            keys,
        })
    }

    pub(crate) fn bind_select_list(
        &mut self,
        items: &[ast::SelectItem],
        scope: &Scope,
    ) -> PgResult<(Vec<Expr>, Vec<OutputColumn>)> {
        let mut exprs = Vec::new();
        let mut cols = Vec::new();
        for item in items {
            match item {
                ast::SelectItem::Wildcard(_) => {
                    if scope.is_empty() {
                        return Err(PgError::syntax(
                            "SELECT * with no tables specified is not valid",
                        ));
                    }
                    for (i, c) in scope.iter().enumerate().filter(|(_, c)| !c.hidden) {
                        exprs.push(Expr::Column(i, c.ty));
                        cols.push(OutputColumn {
                            name: c.name.clone(),
                            ty: c.ty,
                            table_oid: c.table_oid,
                            column_id: c.attnum,
                        });
                    }
                }
                ast::SelectItem::QualifiedWildcard(
                    ast::SelectItemQualifiedWildcardKind::ObjectName(n),
                    _,
                ) => {
                    let q = object_name_parts(n)?.pop().unwrap();
                    let mut any = false;
                    for (i, c) in scope.iter().enumerate() {
                        if c.qualifier.as_deref() == Some(q.as_str()) {
                            any = true;
                            if super::system_columns::is_system_entry(c) {
                                continue;
                            }
                            exprs.push(Expr::Column(i, c.ty));
                            cols.push(OutputColumn {
                                name: c.name.clone(),
                                ty: c.ty,
                                table_oid: c.table_oid,
                                column_id: c.attnum,
                            });
                        }
                    }
                    if !any {
                        return Err(PgError::new(
                            SqlState::UNDEFINED_TABLE,
                            format!("missing FROM-clause entry for table \"{q}\""),
                        ));
                    }
                }
                ast::SelectItem::UnnamedExpr(e)
                | ast::SelectItem::ExprWithAlias { expr: e, .. } => {
                    let name = match item {
                        ast::SelectItem::ExprWithAlias { alias, .. } => ident_name(alias),
                        _ => output_name(e),
                    };
                    let b = self.bind_expr(e, scope)?;
                    let (table_oid, column_id) = match &b {
                        Expr::Column(i, _) => super::system_columns::output_origin(&scope[*i]),
                        _ => (0, 0),
                    };
                    let ty = b.data_type();
                    cols.push(OutputColumn {
                        name,
                        ty,
                        table_oid,
                        column_id,
                    });
                    exprs.push(b);
                }
                _ => return Err(PgError::unsupported("this select item is not supported")),
            }
        }
        check_target_list(cols.len())?;
        Ok((exprs, cols))
    }

    /// A SELECT; `bind_select` (window.rs) sets up its window scope.
    pub(super) fn bind_select_body(
        &mut self,
        s: &ast::Select,
        order: &[ast::OrderByExpr],
    ) -> PgResult<(Plan, Vec<OutputColumn>)> {
        if s.into.is_some() {
            // A top-level SELECT INTO is CREATE TABLE AS (modify.rs).
            return Err(PgError::syntax("SELECT ... INTO is not allowed here"));
        }
        let keep_unknown = std::mem::take(&mut self.keep_unknown_outputs);
        // FROM
        let (mut plan, scope) = if s.from.is_empty() {
            (
                Plan::Values {
                    rows: vec![vec![]],
                    width: 0,
                },
                Vec::new(),
            )
        } else {
            self.bind_from_list(&s.from)?
        };
        let lock = self.locking.take();
        // WHERE
        if let Some(w) = &s.selection {
            let e = self.in_window_context(Some("WHERE"), |b| b.bind_expr(w, &scope))?;
            if e.contains_grouping() {
                return Err(PgError::new(
                    SqlState::GROUPING_ERROR,
                    "grouping operations are not allowed in WHERE",
                ));
            }
            if e.contains_agg() {
                return Err(PgError::new(
                    SqlState::GROUPING_ERROR,
                    "aggregate functions are not allowed in WHERE",
                ));
            }
            let e = self.coerce_bool(e, "WHERE")?;
            // Where each conjunct runs is the planner's choice.
            plan = Plan::Filter {
                input: Box::new(plan),
                qual: e,
            };
        }
        // Select list; set-returning calls in it run in a ProjectSet.
        let outer_grouped = self.system_use.grouped;
        self.system_use.grouped = super::system_columns::is_grouped(s);
        let bound = self.bind_select_list(&s.projection, &scope);
        self.system_use.grouped = outer_grouped;
        let (mut exprs, mut cols) = bound?;
        check_target_list(cols.len())?;
        let visible = exprs.len();
        // GROUP BY
        let group_by = match &s.group_by {
            ast::GroupByExpr::Expressions(gs, _) => {
                self.bind_group_by(gs, &scope, &exprs, &cols)?
            }
            ast::GroupByExpr::All(_) => {
                return Err(PgError::syntax("syntax error at end of input"))
            }
        };
        let (keys, grouping_sets) = (group_by.keys, group_by.sets);
        let having = s
            .having
            .as_ref()
            .map(|h| self.in_window_context(Some("HAVING"), |b| b.bind_expr(h, &scope)))
            .transpose()?;
        if keys.iter().any(Expr::contains_window) {
            return Err(super::window::not_allowed("GROUP BY")); // `GROUP BY 1`
        }
        // ORDER BY: output positions/aliases, or extra hidden columns.
        let mut sort_keys = Vec::new();
        for o in order {
            let idx = match self.output_position(&o.expr, &cols, &scope)? {
                Some(i) => i,
                None => {
                    let e = self.bind_expr(&o.expr, &scope)?;
                    match exprs.iter().position(|x| *x == e) {
                        Some(i) => i,
                        None => {
                            if matches!(s.distinct, Some(ast::Distinct::Distinct)) {
                                return Err(PgError::new(
                                    SqlState::INVALID_COLUMN_REFERENCE,
                                    "for SELECT DISTINCT, ORDER BY expressions must appear in select list",
                                ));
                            }
                            exprs.push(e);
                            exprs.len() - 1
                        }
                    }
                }
            };
            sort_keys.push(sort_key(idx, o)?);
        }
        // DISTINCT ON: its expressions resolve as ORDER BY items do.
        let distinct_on = match &s.distinct {
            Some(ast::Distinct::On(on)) => {
                let cols_on = self.distinct_on_columns(on, &scope, &mut exprs, &cols)?;
                super::distinct_on::check_order(&cols_on, &sort_keys)?;
                Some(cols_on)
            }
            _ => None,
        };
        // Aggregation
        let has_aggs =
            exprs.iter().any(Expr::contains_agg) || having.as_ref().is_some_and(Expr::contains_agg);
        let has_windows = exprs.iter().any(Expr::contains_window);
        let has_srfs = exprs.iter().any(Expr::contains_srf);
        if let Some(lock) = &lock {
            let grouped = !keys.is_empty() || grouping_sets.is_some();
            let flags = (grouped, has_aggs, has_windows, has_srfs);
            Self::check_select_locking(lock, s, flags)?;
        }
        // HAVING alone makes the query grouped (one group, possibly empty),
        // as does GROUP BY () (one group even over no rows).
        if has_aggs || !keys.is_empty() || having.is_some() || grouping_sets.is_some() {
            let mut aggs: Vec<AggCall> = Vec::new();
            let calls = {
                let all: Vec<&Expr> = exprs.iter().chain(having.as_ref()).collect();
                super::grouping_sets::grouping_calls(&all, &keys)?
            };
            let stage = PostAgg {
                keys: &keys,
                calls: &calls,
                cols: &cols,
                scope: &scope,
            };
            let mut rewrite = |e: Expr| -> PgResult<Expr> { stage.rewrite(e, &mut aggs) };
            let rewritten = exprs
                .into_iter()
                .map(&mut rewrite)
                .collect::<PgResult<Vec<_>>>()
                .and_then(|x| Ok((x, having.map(&mut rewrite).transpose()?)));
            let (new_exprs, having) = match rewritten {
                Ok(r) => r,
                Err(err) => return Err(self.locate_grouping_error(err, s, order)),
            };
            if !has_aggs && keys.is_empty() {
                // Degenerate grouping (HAVING without aggregates or GROUP BY):
                // nothing reads the input, so it is not scanned, as PostgreSQL's.
                plan = Plan::Values {
                    rows: vec![vec![]],
                    width: 0,
                };
            }
            let sets = super::grouping_sets::aggregate_sets(grouping_sets, calls, keys.len());
            plan = Plan::Aggregate {
                input: Box::new(plan),
                keys,
                aggs,
                sets,
            };
            if let Some(h) = having {
                let h = self.coerce_bool(h, "HAVING")?;
                plan = Plan::Filter {
                    input: Box::new(plan),
                    qual: h,
                };
            }
            exprs = new_exprs;
        } else if let Some(h) = having {
            let h = self.coerce_bool(h, "HAVING")?;
            plan = Plan::Filter {
                input: Box::new(plan),
                qual: h,
            };
        }
        if has_windows {
            let (p, e) = self.window_stage(plan, exprs, &mut sort_keys, s)?;
            (plan, exprs) = (p, e);
        }
        // Unknown-typed outputs become text (INSERT … SELECT coerces them
        // to its columns' types instead).
        for (e, c) in exprs.iter_mut().zip(cols.iter_mut()) {
            if c.ty.id == TypeId::Unknown && !keep_unknown {
                let x = std::mem::replace(e, Expr::Const(Value::Null, TypeId::Text.into()));
                *e = self.coerce(x, TypeId::Text.into(), CastContext::Implicit)?;
                c.ty = TypeId::Text.into();
            }
        }
        let marks = match lock {
            Some(lock) => self.row_marks(lock, &scope, &mut exprs)?,
            None => Vec::new(),
        };
        let width = exprs.len();
        plan = if has_srfs {
            project_set(plan, exprs)
        } else {
            Plan::Project {
                input: Box::new(plan),
                exprs,
            }
        };
        match &s.distinct {
            None | Some(ast::Distinct::All) => {}
            Some(ast::Distinct::Distinct) => {
                plan = Plan::Distinct {
                    input: Box::new(plan),
                }
            }
            Some(ast::Distinct::On(_)) => {
                let on = distinct_on.expect("resolved above");
                plan = super::distinct_on::first_of_each(plan, &on, &mut sort_keys);
            }
        }
        if !sort_keys.is_empty() {
            plan = Plan::Sort {
                input: Box::new(plan),
                keys: sort_keys,
            };
        }
        if marks.iter().any(|m| m.lock.is_some()) {
            plan = Plan::LockRows {
                input: Box::new(plan),
                marks,
            };
        }
        if width > visible {
            let trim = cols
                .iter()
                .enumerate()
                .map(|(i, c)| Expr::Column(i, c.ty))
                .collect();
            plan = Plan::Project {
                input: Box::new(plan),
                exprs: trim,
            };
        }
        Ok((plan, cols))
    }

    /// Points a grouping error at the first ungrouped reference to its
    /// column: in the select list, then HAVING, then ORDER BY.
    fn locate_grouping_error(
        &self,
        err: PgError,
        s: &ast::Select,
        order: &[ast::OrderByExpr],
    ) -> PgError {
        let Some(name) = super::pos::grouping_error_column(&err) else {
            return err;
        };
        let items = s.projection.iter().filter_map(|i| match i {
            ast::SelectItem::UnnamedExpr(e) | ast::SelectItem::ExprWithAlias { expr: e, .. } => {
                Some(e)
            }
            _ => None,
        });
        let found = items
            .chain(s.having.as_ref())
            .chain(order.iter().map(|o| &o.expr))
            .find_map(|e| super::pos::ungrouped_column_span(e, &name));
        match found {
            Some(span) => self.at(err, span),
            None => err,
        }
    }

    /// `ORDER BY 2` or `ORDER BY alias`: the output column it names, if any.
    pub(super) fn output_position(
        &self,
        e: &ast::Expr,
        cols: &[OutputColumn],
        scope: &Scope,
    ) -> PgResult<Option<usize>> {
        match e {
            ast::Expr::Value(v) => {
                if let ast::Value::Number(n, _) = &v.value {
                    let k: usize = n.parse().unwrap_or(0);
                    if k == 0 || k > cols.len() {
                        return Err(PgError::new(
                            SqlState::INVALID_COLUMN_REFERENCE,
                            format!("ORDER BY position {n} is not in select list"),
                        ));
                    }
                    return Ok(Some(k - 1));
                }
                Ok(None)
            }
            ast::Expr::Identifier(i) => {
                let name = ident_name(i);
                if scope.iter().any(|c| c.name == name) {
                    return Ok(None);
                }
                Ok(cols.iter().position(|c| c.name == name))
            }
            _ => Ok(None),
        }
    }

    pub(super) fn bind_output_ref(
        &mut self,
        g: &ast::Expr,
        scope: &Scope,
        exprs: &[Expr],
        cols: &[OutputColumn],
    ) -> PgResult<Expr> {
        if let Some(i) = self.output_position(g, cols, scope)? {
            return Ok(exprs[i].clone());
        }
        let e = self.bind_expr(g, scope)?;
        if e.contains_agg() {
            return Err(PgError::new(
                SqlState::GROUPING_ERROR,
                "aggregate functions are not allowed in GROUP BY",
            ));
        }
        Ok(e)
    }
}

/// FETCH FIRST ... WITH TIES: a Limit directly above the query's ORDER BY
/// Sort (or the LockRows over it), below the projection that drops hidden
/// sort columns, so the ties are judged on the sort keys themselves.
fn limit_with_ties(plan: Plan, limit: Option<Expr>, offset: Option<Expr>) -> PgResult<Plan> {
    match plan {
        Plan::Project { input, exprs }
            if matches!(*input, Plan::Sort { .. } | Plan::LockRows { .. }) =>
        {
            Ok(Plan::Project {
                input: Box::new(limit_with_ties(*input, limit, offset)?),
                exprs,
            })
        }
        plan => {
            let ties = match &plan {
                Plan::Sort { keys, .. } => keys.clone(),
                Plan::LockRows { input, .. } => match input.as_ref() {
                    Plan::Sort { keys, .. } => keys.clone(),
                    _ => Vec::new(),
                },
                _ => Vec::new(),
            };
            if ties.is_empty() {
                return Err(PgError::internal("WITH TIES found no ORDER BY sort"));
            }
            Ok(Plan::Limit {
                input: Box::new(plan),
                limit,
                offset,
                ties,
            })
        }
    }
}

fn sort_key(column: usize, o: &ast::OrderByExpr) -> PgResult<SortKey> {
    let descending = descending(&o.options)?;
    Ok(SortKey {
        column,
        descending,
        nulls_first: o.options.nulls_first.unwrap_or(descending),
    })
}

/// Whether an ORDER BY item sorts descending: DESC, or `USING >` (`USING <`
/// is ascending; any other operator is not an ordering one).
pub(super) fn descending(options: &ast::OrderByOptions) -> PgResult<bool> {
    match &options.sort {
        None | Some(ast::OrderBySort::Asc) => Ok(false),
        Some(ast::OrderBySort::Desc) => Ok(true),
        Some(ast::OrderBySort::Using(op)) => {
            let name = op.0.last().map(|p| p.to_string()).unwrap_or_default();
            match name.as_str() {
                "<" => Ok(false),
                ">" => Ok(true),
                _ => Err(PgError::new(
                    SqlState("42809"),
                    format!("operator {name} is not a valid ordering operator"),
                )
                .with_hint(
                    "Ordering operators must be \"<\" or \">\" members of btree operator families.",
                )),
            }
        }
    }
}

/// What an expression above an Aggregate reads: its output row is
/// `[keys..., GROUPING() calls..., aggs...]`.
struct PostAgg<'a> {
    keys: &'a [Expr],
    calls: &'a [Vec<usize>],
    cols: &'a [OutputColumn],
    scope: &'a Scope,
}

impl PostAgg<'_> {
    /// Rewrites an expression to run above the Aggregate, adding the
    /// aggregate calls it makes to `aggs`.
    fn rewrite(&self, e: Expr, aggs: &mut Vec<AggCall>) -> PgResult<Expr> {
        rewrite_post_agg(e, self, aggs)
    }
}

fn rewrite_post_agg(e: Expr, stage: &PostAgg<'_>, aggs: &mut Vec<AggCall>) -> PgResult<Expr> {
    let PostAgg {
        keys,
        calls,
        cols,
        scope,
    } = *stage;
    let nkeys = keys.len() + calls.len();
    if let Some(i) = keys.iter().position(|k| *k == e) {
        return Ok(Expr::Column(i, e.data_type()));
    }
    if let Expr::Sys {
        func: crate::expr::SysFunc::Grouping,
        args,
        ty,
    } = &e
    {
        let call = super::grouping_sets::call_keys(args, keys)?;
        let i = calls
            .iter()
            .position(|c| *c == call)
            .expect("collected beforehand");
        return Ok(Expr::Column(keys.len() + i, *ty));
    }
    match e {
        Expr::Agg(a) => {
            let ty = a.result;
            let idx = match aggs.iter().position(|x| *x == *a) {
                Some(i) => i,
                None => {
                    aggs.push(*a);
                    aggs.len() - 1
                }
            };
            Ok(Expr::Column(nkeys + idx, ty))
        }
        Expr::Column(i, _) => {
            let _ = cols;
            let c = &scope[i];
            let name = match &c.qualifier {
                Some(q) => format!("{q}.{}", c.name),
                None => c.name.clone(),
            };
            Err(PgError::new(
                SqlState::GROUPING_ERROR,
                format!("column \"{name}\" must appear in the GROUP BY clause or be used in an aggregate function"),
            ))
        }
        // Rebuild the children, checking each against the keys first.
        other => other.map_children(&mut |child| rewrite_post_agg(child, stage, aggs)),
    }
}
