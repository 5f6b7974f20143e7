//! UPDATE and DELETE binding: the target table, WHERE, SET's assignments
//! and RETURNING; SELECT ... INTO, which is CREATE TABLE AS.

use std::sync::Arc;

use common::{PgError, PgResult, SqlState};
use sqlparser::ast;

use sqlparser::ast::Spanned;

use super::{ident_name, is_default_keyword, object_name_parts, split_conjuncts, Binder, Scope};
use crate::expr::Expr;
use crate::plan::BoundStatement;
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
        let e = self.coerce_bool(e, "WHERE")?;
        Ok(split_conjuncts(e))
    }

    pub(super) fn bind_update(&mut self, u: &ast::Update) -> PgResult<BoundStatement> {
        if u.from.is_some() {
            return Err(PgError::unsupported("UPDATE ... FROM is not supported yet"));
        }
        let (table, alias) = self.single_table(&u.table)?;
        let scope = Self::table_scope(&table, alias.as_deref());
        let qual = self.bind_where(&u.selection, &scope)?;
        let assignments = self.in_window_context(Some("UPDATE"), |b| {
            b.bind_assignments(&u.assignments, &table, &scope)
        })?;
        let returning = self.bind_returning(&u.returning, &scope)?;
        Ok(BoundStatement::Update {
            table,
            qual,
            assignments,
            returning,
            index: None,
        })
    }

    /// SET's `column = value` list (UPDATE, ON CONFLICT DO UPDATE), values
    /// bound over `scope` and coerced to their columns.
    pub(crate) fn bind_assignments(
        &mut self,
        list: &[ast::Assignment],
        table: &Table,
        scope: &Scope,
    ) -> PgResult<Vec<(usize, Expr)>> {
        let mut assignments: Vec<(usize, Expr)> = Vec::new();
        for a in list {
            let ast::AssignmentTarget::ColumnName(n) = &a.target else {
                return Err(PgError::unsupported(
                    "multi-column assignment is not supported yet",
                ));
            };
            let (i, cname) = self.target_column(table, n)?;
            let cname = cname.as_str();
            if assignments.iter().any(|(j, _)| *j == i) {
                return Err(PgError::syntax(format!(
                    "multiple assignments to same column \"{cname}\""
                )));
            }
            let e = if is_default_keyword(&a.value) {
                self.column_default(table, i)?
            } else {
                let b = self.bind_expr(&a.value, scope)?;
                self.coerce_assign(b, table.columns[i].data_type(), cname)?
            };
            assignments.push((i, e));
        }
        Ok(assignments)
    }

    pub(super) fn bind_delete(&mut self, d: &ast::Delete) -> PgResult<BoundStatement> {
        let from = match &d.from {
            ast::FromTable::WithFromKeyword(v) | ast::FromTable::WithoutKeyword(v) => v,
        };
        let [twj] = from.as_slice() else {
            return Err(PgError::unsupported("DELETE from several tables"));
        };
        if d.using.is_some() {
            return Err(PgError::unsupported(
                "DELETE ... USING is not supported yet",
            ));
        }
        let (table, alias) = self.single_table(twj)?;
        let scope = Self::table_scope(&table, alias.as_deref());
        let qual = self.bind_where(&d.selection, &scope)?;
        let returning = self.bind_returning(&d.returning, &scope)?;
        Ok(BoundStatement::Delete {
            table,
            qual,
            returning,
            index: None,
        })
    }
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
