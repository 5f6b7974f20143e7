//! SELECT binding: FROM/joins as written, WHERE as a filter over them (the
//! planner places its conjuncts and orders the joins), aggregation,
//! projection, DISTINCT, ORDER BY, LIMIT, set operations.

use common::{PgError, PgResult, SqlState};
use sqlparser::ast;
use types::cast::CastContext;
use types::{DataType, TypeId, Value};

use super::target_list::{check_target_list, output_name};
use super::{ident_name, object_name_parts, Binder, Scope, ScopeColumn};
use crate::expr::{AggCall, Expr};
use crate::plan::{JoinKind, OutputColumn, Plan, SetOpKind, SortKey};

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
            keys.push(sort_key(idx, o));
        }
        Ok(Plan::Sort {
            input: Box::new(plan),
            keys,
        })
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
            .map(|(c, vc)| ScopeColumn {
                qualifier: Some(q.clone()),
                name: vc.name.clone(),
                ty: c.ty,
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
                let alias_name = alias.as_ref().map(|a| ident_name(&a.name));
                if parts.len() == 1 {
                    if let Some(r) = self.bind_cte_ref(&parts[0], alias)? {
                        self.check_lock_cte(alias_name.as_deref().unwrap_or(&parts[0]))?;
                        return Ok(r);
                    }
                }
                if let Some((plan, cols)) = self.system_view(&parts, alias_name.as_deref()) {
                    let q = alias_name.unwrap_or_else(|| parts.last().unwrap().clone());
                    let scope = cols
                        .into_iter()
                        .map(|c| ScopeColumn {
                            qualifier: Some(q.clone()),
                            name: c.name,
                            ty: c.ty,
                            table_oid: 0,
                            attnum: 0,
                            hidden: false,
                        })
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
                        return Err(self.at(err, ast::Spanned::span(name)));
                    }
                };
                let mut scope = Self::table_scope(&table, alias_name.as_deref());
                if let Some(a) = alias {
                    let visible = scope.iter().filter(|c| !c.hidden).count();
                    super::check_alias_count(&ident_name(&a.name), visible, a.columns.len())?;
                    for (c, n) in scope.iter_mut().zip(&a.columns) {
                        c.name = ident_name(&n.name);
                    }
                }
                let tid = self.scans_emit_tids();
                let refname = alias_name.clone().unwrap_or_else(|| table.name.clone());
                self.add_lock_rel(&refname, &table, &mut scope);
                Ok((
                    Plan::SeqScan {
                        table,
                        qual: Vec::new(),
                        alias: alias_name,
                        tid,
                        index: None,
                    },
                    scope,
                ))
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
                    .map(|c| ScopeColumn {
                        qualifier: q.clone(),
                        name: c.name,
                        ty: c.ty,
                        table_oid: 0,
                        attnum: 0,
                        hidden: false,
                    })
                    .collect();
                if let Some(a) = alias {
                    super::check_alias_count(&ident_name(&a.name), scope.len(), a.columns.len())?;
                    for (c, n) in scope.iter_mut().zip(&a.columns) {
                        c.name = ident_name(&n.name);
                    }
                }
                Ok((plan, scope))
            }
            ast::TableFactor::NestedJoin {
                table_with_joins,
                alias: None,
            } => self.bind_table_with_joins(table_with_joins),
            _ => Err(PgError::unsupported("this FROM item is not supported yet")),
        }
    }

    pub(super) fn series_args(&mut self, exprs: Vec<Expr>) -> PgResult<(Vec<Expr>, DataType)> {
        if !(2..=3).contains(&exprs.len()) {
            return Err(PgError::new(
                SqlState::UNDEFINED_FUNCTION,
                "function generate_series with these arguments does not exist",
            ));
        }
        if exprs.len() == 3 && matches!(exprs[2].type_id(), TypeId::Interval | TypeId::Unknown) {
            let bounds = self.common_type(
                &exprs[..2].iter().map(Expr::data_type).collect::<Vec<_>>(),
                "generate_series",
            )?;
            // generate_series(timestamp[tz], timestamp[tz], interval); dates
            // and untyped bounds go as timestamptz, PostgreSQL's preferred type.
            let ty = match bounds.id {
                TypeId::Timestamp => Some(TypeId::Timestamp),
                TypeId::Timestamptz | TypeId::Date => Some(TypeId::Timestamptz),
                TypeId::Text | TypeId::Unknown if exprs[2].type_id() == TypeId::Interval => {
                    Some(TypeId::Timestamptz)
                }
                _ => None,
            };
            if let Some(ty) = ty {
                let mut it = exprs.into_iter();
                let mut args = Vec::with_capacity(3);
                for _ in 0..2 {
                    let e = it.next().expect("three arguments");
                    args.push(self.coerce(e, ty.into(), CastContext::Implicit)?);
                }
                let step = it.next().expect("three arguments");
                args.push(self.coerce(step, TypeId::Interval.into(), CastContext::Implicit)?);
                return Ok((args, ty.into()));
            }
        }
        let ty = self.common_type(
            &exprs.iter().map(Expr::data_type).collect::<Vec<_>>(),
            "generate_series",
        )?;
        let ty = match ty.id {
            TypeId::Int2 | TypeId::Int4 | TypeId::Unknown => TypeId::Int4,
            TypeId::Int8 => TypeId::Int8,
            TypeId::Numeric => TypeId::Numeric,
            t => {
                return Err(PgError::new(
                    SqlState::UNDEFINED_FUNCTION,
                    format!(
                        "function generate_series({0}, {0}) does not exist",
                        t.display_name()
                    ),
                ))
            }
        };
        let args = exprs
            .into_iter()
            .map(|e| self.coerce(e, ty.into(), CastContext::Implicit))
            .collect::<PgResult<_>>()?;
        Ok((args, ty.into()))
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
                        Expr::Column(i, _) => (scope[*i].table_oid, scope[*i].attnum),
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
            let mut acc: Option<(Plan, Scope)> = None;
            for twj in &s.from {
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
            acc.unwrap()
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
        let (mut exprs, mut cols) = self.bind_select_list(&s.projection, &scope)?;
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
            sort_keys.push(sort_key(idx, o));
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
        // Unknown-typed outputs become text.
        for (e, c) in exprs.iter_mut().zip(cols.iter_mut()) {
            if c.ty.id == TypeId::Unknown {
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

fn sort_key(column: usize, o: &ast::OrderByExpr) -> SortKey {
    let descending = matches!(o.options.sort, Some(ast::OrderBySort::Desc));
    SortKey {
        column,
        descending,
        nulls_first: o.options.nulls_first.unwrap_or(descending),
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
