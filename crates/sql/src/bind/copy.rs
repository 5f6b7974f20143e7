//! Binding COPY: the table and its columns (with the DEFAULTs of the columns
//! a COPY FROM leaves out), or the query a COPY TO unloads.

use std::sync::Arc;

use catalog::Table;
use common::{PgError, PgResult, SqlState};
use sqlparser::ast;

use super::Binder;
use crate::copy::{CopyEndpoint, CopySource, CopyStatement, ForceQuote};
use crate::expr::Expr;
use crate::parse::ParsedStatement;
use crate::plan::{BoundStatement, CopyFromTarget, CopyToSource, OutputColumn, Plan};

impl Binder<'_, '_> {
    pub(crate) fn bind_copy(&mut self, c: &CopyStatement) -> PgResult<BoundStatement> {
        if let CopyEndpoint::Program(_) = c.endpoint {
            return Err(PgError::unsupported(
                "COPY TO or FROM PROGRAM is not supported",
            ));
        }
        match (&c.source, c.from) {
            (CopySource::Table { name, columns }, true) => {
                let table = self.require_table(name)?;
                let targets = copy_columns(&table, columns)?;
                let flags = |names: &[String], option: &str| -> PgResult<Vec<bool>> {
                    let mut v = vec![false; targets.len()];
                    for n in names {
                        let i = table
                            .column_index(n)
                            .and_then(|i| targets.iter().position(|&t| t == i))
                            .ok_or_else(|| {
                                PgError::new(
                                    SqlState::INVALID_COLUMN_REFERENCE,
                                    format!("{option} column \"{n}\" not referenced by COPY"),
                                )
                            })?;
                        v[i] = true;
                    }
                    Ok(v)
                };
                let force_not_null = flags(&c.options.force_not_null, "FORCE_NOT_NULL")?;
                let force_null = flags(&c.options.force_null, "FORCE_NULL")?;
                let mut defaults = Vec::new();
                for i in 0..table.columns.len() {
                    if !targets.contains(&i) {
                        defaults.push((i, self.column_default(&table, i)?));
                    }
                }
                let mut domain_checks = Vec::new();
                for &i in &targets {
                    let col = &table.columns[i];
                    domain_checks.push(match self.column_domain(col) {
                        Some(d) => Some(self.check_domain(Expr::Column(i, col.data_type()), &d)?),
                        None => None,
                    });
                }
                Ok(BoundStatement::CopyFrom(Box::new(CopyFromTarget {
                    table,
                    columns: targets,
                    defaults,
                    domain_checks,
                    force_not_null,
                    force_null,
                    options: c.options.clone(),
                    endpoint: c.endpoint.clone(),
                })))
            }
            (CopySource::Table { name, columns }, false) => {
                let table = self.require_table(name)?;
                let targets = copy_columns(&table, columns)?;
                let exprs: Vec<Expr> = targets
                    .iter()
                    .map(|&i| Expr::Column(i, table.columns[i].data_type()))
                    .collect();
                let columns: Vec<OutputColumn> = targets
                    .iter()
                    .map(|&i| OutputColumn {
                        name: table.columns[i].name.clone(),
                        ty: table.columns[i].data_type(),
                        table_oid: table.oid,
                        column_id: i as i16 + 1,
                    })
                    .collect();
                let scan = Plan::SeqScan {
                    table: table.clone(),
                    qual: Vec::new(),
                    alias: None,
                    tid: false,
                    system: Vec::new(),
                    index: None,
                };
                // Every column in table order is the scan's own row.
                let plan = if targets.iter().copied().eq(0..table.columns.len()) {
                    scan
                } else {
                    Plan::Project {
                        input: Box::new(scan),
                        exprs,
                    }
                };
                self.copy_to(plan, columns, c, Some(&table))
            }
            (CopySource::Query(parsed), false) => {
                let ParsedStatement::Sql(stmt, src) = parsed.as_ref() else {
                    return Err(PgError::syntax("syntax error at or near \"(\""));
                };
                let ast::Statement::Query(q) = stmt.as_ref() else {
                    return Err(PgError::unsupported(
                        "COPY of a statement other than SELECT is not supported",
                    ));
                };
                let saved = self.src.replace(src.clone());
                if q.with.is_some() {
                    self.modifying.allow_at_top_level();
                }
                let bound = self.bind_query(q);
                self.src = saved;
                let (plan, columns) = bound?;
                let stmt = self.copy_to(plan, columns, c, None)?;
                Ok(self.with_modifying_ctes(stmt))
            }
            (CopySource::Query(_), true) => {
                Err(PgError::syntax("syntax error at or near \"from\""))
            }
        }
    }

    fn copy_to(
        &mut self,
        plan: Plan,
        columns: Vec<OutputColumn>,
        c: &CopyStatement,
        table: Option<&Arc<Table>>,
    ) -> PgResult<BoundStatement> {
        let force_quote = match &c.options.force_quote {
            ForceQuote::None => vec![false; columns.len()],
            ForceQuote::All => vec![true; columns.len()],
            ForceQuote::Columns(names) => {
                let mut v = vec![false; columns.len()];
                for n in names {
                    let i = columns
                        .iter()
                        .position(|col| &col.name == n)
                        .ok_or_else(|| {
                            PgError::new(
                                SqlState::INVALID_COLUMN_REFERENCE,
                                format!("FORCE_QUOTE column \"{n}\" not referenced by COPY"),
                            )
                        })?;
                    v[i] = true;
                }
                v
            }
        };
        Ok(BoundStatement::CopyTo(Box::new(CopyToSource {
            plan,
            columns,
            force_quote,
            options: c.options.clone(),
            endpoint: c.endpoint.clone(),
            table_name: table.map(|t| t.name.clone()),
        })))
    }
}

/// The table columns a COPY names, in its order (all of them when it names none).
fn copy_columns(table: &Table, names: &[String]) -> PgResult<Vec<usize>> {
    if names.is_empty() {
        return Ok((0..table.columns.len()).collect());
    }
    let mut v = Vec::with_capacity(names.len());
    for n in names {
        let i = table.column_index(n).ok_or_else(|| {
            PgError::new(
                SqlState::UNDEFINED_COLUMN,
                format!(
                    "column \"{n}\" of relation \"{}\" does not exist",
                    table.name
                ),
            )
        })?;
        if v.contains(&i) {
            return Err(PgError::new(
                SqlState::DUPLICATE_COLUMN,
                format!("column \"{n}\" specified more than once"),
            ));
        }
        v.push(i);
    }
    Ok(v)
}
