//! UPDATE and DELETE binding: the target table, WHERE, SET's assignments
//! and RETURNING; SELECT ... INTO, which is CREATE TABLE AS.

use std::sync::Arc;

use common::{PgError, PgResult, SqlState};
use sqlparser::ast;

use sqlparser::ast::Spanned;

use super::{ident_name, is_default_keyword, object_name_parts, split_conjuncts, Binder, Scope};
use crate::expr::Expr;
use crate::plan::{BoundStatement, Plan};
use catalog::Table;

impl Binder<'_, '_> {
    pub(super) fn single_table(
        &self,
        twj: &ast::TableWithJoins,
    ) -> PgResult<(Arc<Table>, Option<String>)> {
        if !twj.joins.is_empty() {
            return Err(PgError::unsupported(
                "joins in UPDATE/DELETE are not supported yet",
            ));
        }
        match &twj.relation {
            ast::TableFactor::Table {
                name,
                alias,
                args: None,
                ..
            } => Ok((
                self.require_table(&object_name_parts(name)?)
                    .map_err(|e| self.at(e, ast::Spanned::span(name)))?,
                alias.as_ref().map(|a| ident_name(&a.name)),
            )),
            _ => Err(PgError::unsupported(
                "this UPDATE/DELETE target is not supported",
            )),
        }
    }

    pub(super) fn bind_where(
        &mut self,
        selection: &Option<ast::Expr>,
        scope: &Scope,
    ) -> PgResult<Vec<Expr>> {
        let Some(w) = selection else {
            return Ok(Vec::new());
        };
        let e = self.bind_expr(w, scope)?;
        no_aggregates(&e, "WHERE")?;
        let e = self.coerce_bool(e, "WHERE")?;
        Ok(split_conjuncts(e))
    }

    pub(super) fn bind_update(&mut self, u: &ast::Update) -> PgResult<BoundStatement> {
        let (table, alias) = self.single_table(&u.table)?;
        let (scope, join) = match &u.from {
            // System columns come from a scan of the target.
            None if self.system_use.named => {
                let (plan, scope) = self.bind_modify_from(&table, alias.as_deref(), &[])?;
                (scope, Some(plan))
            }
            None => (Self::table_scope(&table, alias.as_deref()), None),
            Some(ast::UpdateTableFromKind::BeforeSet(_)) => {
                return Err(PgError::syntax("FROM must follow SET in UPDATE"))
            }
            Some(ast::UpdateTableFromKind::AfterSet(from)) => {
                let (plan, scope) = self.bind_modify_from(&table, alias.as_deref(), from)?;
                (scope, Some(plan))
            }
        };
        let qual = self.bind_where(&u.selection, &scope)?;
        let assignments = self.in_window_context(Some("UPDATE"), |b| {
            b.bind_assignments(&u.assignments, &table, &scope)
        })?;
        let returning = self.bind_returning(&u.returning, &scope)?;
        let (qual, join) = Self::modify_join(join, qual);
        Ok(BoundStatement::Update {
            table,
            alias,
            qual,
            assignments,
            returning,
            index: None,
            join,
        })
    }

    /// SET's assignments (UPDATE, ON CONFLICT DO UPDATE): `column = value`
    /// and `(a, b) = (x, y) | ROW(x, y) | (SELECT x, y ...)`, values bound
    /// over `scope` and coerced to their columns.
    pub(crate) fn bind_assignments(
        &mut self,
        list: &[ast::Assignment],
        table: &Table,
        scope: &Scope,
    ) -> PgResult<Vec<(usize, Expr)>> {
        let mut assignments: Vec<(usize, Expr)> = Vec::new();
        for a in list {
            let (names, values) = match &a.target {
                ast::AssignmentTarget::ColumnName(n) => {
                    (std::slice::from_ref(n), vec![Source::Value(&a.value)])
                }
                ast::AssignmentTarget::Tuple(names) => (
                    names.as_slice(),
                    self.multi_sources(names.len(), &a.value, scope)?,
                ),
            };
            for (n, source) in names.iter().zip(values) {
                let (i, cname) = self.target_column(table, n)?;
                let cname = cname.as_str();
                if assignments.iter().any(|(j, _)| *j == i) {
                    return Err(PgError::syntax(format!(
                        "multiple assignments to same column \"{cname}\""
                    )));
                }
                let e = match source {
                    Source::Value(v) if is_default_keyword(v) => self.column_default(table, i)?,
                    Source::Value(v) => {
                        super::identity::refuse_update_of(table, i)?;
                        let b = self.bind_expr(v, scope)?;
                        no_aggregates(&b, "UPDATE")?;
                        self.assign_to_column(b, table, i)?
                    }
                    Source::Bound(b) => {
                        super::identity::refuse_update_of(table, i)?;
                        self.assign_to_column(b, table, i)?
                    }
                };
                assignments.push((i, e));
            }
        }
        Ok(assignments)
    }

    /// The values of a multiple-column assignment to `n` columns, as
    /// PostgreSQL's transformMultiAssignRef accepts them.
    fn multi_sources<'e>(
        &mut self,
        n: usize,
        value: &'e ast::Expr,
        scope: &Scope,
    ) -> PgResult<Vec<Source<'e>>> {
        let mismatch = |b: &Self| {
            b.at(
                PgError::syntax("number of columns does not match number of values"),
                value.span(),
            )
        };
        let items: &[ast::Expr] = match value {
            ast::Expr::Tuple(items) => items,
            ast::Expr::Function(f) if f.name.to_string().eq_ignore_ascii_case("row") => {
                let ast::FunctionArguments::List(list) = &f.args else {
                    return Err(mismatch(self));
                };
                let mut items = Vec::new();
                for arg in &list.args {
                    match arg {
                        ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e)) => {
                            items.push(Source::Value(e))
                        }
                        _ => return Err(PgError::syntax("ROW() takes only values")),
                    }
                }
                if items.len() != n {
                    return Err(mismatch(self));
                }
                return Ok(items);
            }
            ast::Expr::Subquery(q) => {
                // One scalar subquery per column, each projecting its
                // column (no row, NULLs; more than one row, 21000).
                let (plan, cols) = self.bind_subquery(q, scope)?;
                if cols.len() != n {
                    return Err(mismatch(self));
                }
                let mut out = Vec::with_capacity(n);
                for (k, c) in cols.iter().enumerate() {
                    let ty = if c.ty.id == types::TypeId::Unknown {
                        types::TypeId::Text.into()
                    } else {
                        c.ty
                    };
                    let column = Plan::Project {
                        input: Box::new(plan.clone()),
                        exprs: vec![Expr::Column(k, c.ty)],
                    };
                    out.push(Source::Bound(Expr::ScalarSubquery(Box::new(column), ty)));
                }
                return Ok(out);
            }
            _ => {
                let err = PgError::new(
                    SqlState::FEATURE_NOT_SUPPORTED,
                    "source for a multiple-column UPDATE item must be a sub-SELECT or ROW() expression",
                );
                return Err(self.at(err, value.span()));
            }
        };
        if items.len() != n {
            return Err(mismatch(self));
        }
        Ok(items.iter().map(Source::Value).collect())
    }

    pub(super) fn bind_delete(&mut self, d: &ast::Delete) -> PgResult<BoundStatement> {
        let from = match &d.from {
            ast::FromTable::WithFromKeyword(v) | ast::FromTable::WithoutKeyword(v) => v,
        };
        let [twj] = from.as_slice() else {
            return Err(PgError::unsupported("DELETE from several tables"));
        };
        let (table, alias) = self.single_table(twj)?;
        let (scope, join) = match &d.using {
            None if self.system_use.named => {
                let (plan, scope) = self.bind_modify_from(&table, alias.as_deref(), &[])?;
                (scope, Some(plan))
            }
            None => (Self::table_scope(&table, alias.as_deref()), None),
            Some(using) => {
                let (plan, scope) = self.bind_modify_from(&table, alias.as_deref(), using)?;
                (scope, Some(plan))
            }
        };
        let qual = self.bind_where(&d.selection, &scope)?;
        let returning = self.bind_returning(&d.returning, &scope)?;
        let (qual, join) = Self::modify_join(join, qual);
        Ok(BoundStatement::Delete {
            table,
            alias,
            qual,
            returning,
            index: None,
            join,
        })
    }
}

/// 42803 for an aggregate call in a clause of INSERT, UPDATE or DELETE
/// (no Aggregate node runs there).
pub(super) fn no_aggregates(e: &Expr, clause: &str) -> PgResult<()> {
    if e.contains_agg() {
        return Err(PgError::new(
            SqlState::GROUPING_ERROR,
            format!("aggregate functions are not allowed in {clause}"),
        ));
    }
    Ok(())
}

/// A value of SET: as written, or bound already (a column of a sub-SELECT).
enum Source<'e> {
    Value(&'e ast::Expr),
    Bound(Expr),
}

/// The INTO clause of a top-level `SELECT ... INTO t` (the query's own
/// SELECT, not one inside a set operation or subquery).
pub(super) fn select_into_target(q: &ast::Query) -> Option<&ast::SelectInto> {
    match q.body.as_ref() {
        ast::SetExpr::Select(s) => s.into.as_ref(),
        _ => None,
    }
}

impl Binder<'_, '_> {
    /// The column of `table` an INSERT column list or an UPDATE's SET names
    /// (42703 at its position if there is none), and its name.
    pub(super) fn target_column(
        &self,
        table: &Table,
        name: &ast::ObjectName,
    ) -> PgResult<(usize, String)> {
        let parts = object_name_parts(name)?;
        let cname = parts.last().expect("a column name").clone();
        let i = table.column_index(&cname).ok_or_else(|| {
            let err = PgError::new(
                SqlState::UNDEFINED_COLUMN,
                format!(
                    "column \"{cname}\" of relation \"{}\" does not exist",
                    table.name
                ),
            );
            self.at(err, name.span())
        })?;
        Ok((i, cname))
    }

    /// `SELECT ... INTO [TEMP] t FROM ...`: PostgreSQL runs it as
    /// `CREATE [TEMP] TABLE t AS SELECT ... FROM ...`, and so does this.
    pub(super) fn bind_select_into(
        &mut self,
        q: &ast::Query,
        into: &ast::SelectInto,
    ) -> PgResult<BoundStatement> {
        let [target] = into.targets.as_slice() else {
            return Err(PgError::syntax("SELECT ... INTO takes one table name"));
        };
        let mut query = q.clone();
        if let ast::SetExpr::Select(s) = query.body.as_mut() {
            s.into = None;
        }
        let text = format!(
            "CREATE {}{}TABLE {} AS {}",
            if into.temporary { "TEMPORARY " } else { "" },
            if into.unlogged { "UNLOGGED " } else { "" },
            target,
            query
        );
        let dialect = sqlparser::dialect::PostgreSqlDialect {};
        let mut statements = sqlparser::parser::Parser::parse_sql(&dialect, &text)
            .map_err(|e| PgError::internal(format!("SELECT INTO as CREATE TABLE AS: {e}")))?;
        match statements.pop() {
            Some(ast::Statement::CreateTable(ct)) => self.bind_create_table(&ct),
            _ => Err(PgError::internal(
                "SELECT INTO did not read back as CREATE TABLE AS",
            )),
        }
    }
}
