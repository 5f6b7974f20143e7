//! Binding of index and constraint DDL: CREATE INDEX, column and table
//! constraints of CREATE TABLE, and ALTER TABLE ... ADD CONSTRAINT.

use std::sync::Arc;

use catalog::{Column, IndexKey, ReferentialAction, Table};
use common::{PgError, PgResult, SqlState};
use sqlparser::ast;

use super::{ident_name, object_name_parts, Binder};
use crate::plan::{BoundStatement, ConstraintSpec, ConstraintSpecKind, IndexSpec};

/// A constraint written on a column (`a int PRIMARY KEY`) as the table
/// constraint it stands for.
pub(super) fn column_constraint(
    column: &ast::Ident,
    opt: &ast::ColumnOptionDef,
) -> Option<ast::TableConstraint> {
    let name = opt.name.clone();
    let col = ast::IndexColumn::from(column.clone());
    Some(match &opt.option {
        ast::ColumnOption::PrimaryKey(pk) => {
            let mut pk = pk.clone();
            pk.name = name.or(pk.name);
            pk.columns = vec![col];
            ast::TableConstraint::PrimaryKey(pk)
        }
        ast::ColumnOption::Unique(u) => {
            let mut u = u.clone();
            u.name = name.or(u.name);
            u.columns = vec![col];
            ast::TableConstraint::Unique(u)
        }
        ast::ColumnOption::Check(c) => {
            let mut c = c.clone();
            c.name = name.or(c.name);
            ast::TableConstraint::Check(c)
        }
        ast::ColumnOption::ForeignKey(fk) => {
            let mut fk = fk.clone();
            fk.name = name.or(fk.name);
            fk.columns = vec![column.clone()];
            ast::TableConstraint::ForeignKey(fk)
        }
        _ => return None,
    })
}

/// A key column's position; PostgreSQL words the error differently for
/// a constraint's key and for CREATE INDEX.
fn column_position(columns: &[Column], in_constraint: bool, name: &ast::Ident) -> PgResult<usize> {
    let name = ident_name(name);
    columns.iter().position(|c| c.name == name).ok_or_else(|| {
        let what = if in_constraint { " named in key" } else { "" };
        PgError::new(
            SqlState::UNDEFINED_COLUMN,
            format!("column \"{name}\"{what} does not exist"),
        )
    })
}

/// Key columns of an index or a PRIMARY KEY/UNIQUE constraint: plain
/// columns with ASC/DESC and NULLS FIRST/LAST (PostgreSQL's defaults:
/// NULLS LAST for ASC, FIRST for DESC).
fn index_keys(
    columns: &[Column],
    in_constraint: bool,
    cols: &[ast::IndexColumn],
) -> PgResult<Vec<IndexKey>> {
    let mut keys: Vec<IndexKey> = Vec::with_capacity(cols.len());
    for c in cols {
        let ident = match &c.column.expr {
            ast::Expr::Identifier(i) => i,
            other => {
                return Err(PgError::unsupported(format!(
                    "index expressions are not supported yet: {other}"
                )))
            }
        };
        if c.operator_class.is_some() {
            return Err(PgError::unsupported(
                "operator classes are not supported yet",
            ));
        }
        let pos = column_position(columns, in_constraint, ident)?;
        let descending = match &c.column.options.sort {
            None | Some(ast::OrderBySort::Asc) => false,
            Some(ast::OrderBySort::Desc) => true,
            Some(ast::OrderBySort::Using(_)) => {
                return Err(PgError::unsupported(
                    "USING in an index key is not supported",
                ))
            }
        };
        keys.push(IndexKey {
            attnum: pos as i16 + 1,
            descending,
            nulls_first: c.column.options.nulls_first.unwrap_or(descending),
        });
    }
    if keys.len() > 32 {
        return Err(PgError::new(
            SqlState::TOO_MANY_COLUMNS_IN_INDEX,
            "cannot use more than 32 columns in an index",
        ));
    }
    Ok(keys)
}

fn characteristics(c: &Option<ast::ConstraintCharacteristics>) -> (bool, bool) {
    let Some(c) = c else {
        return (false, false);
    };
    let deferred = matches!(c.initially, Some(ast::DeferrableInitial::Deferred));
    (c.deferrable.unwrap_or(deferred), deferred)
}

fn referential(a: &Option<ast::ReferentialAction>) -> ReferentialAction {
    match a {
        None | Some(ast::ReferentialAction::NoAction) => ReferentialAction::NoAction,
        Some(ast::ReferentialAction::Restrict) => ReferentialAction::Restrict,
        Some(ast::ReferentialAction::Cascade) => ReferentialAction::Cascade,
        Some(ast::ReferentialAction::SetNull) => ReferentialAction::SetNull,
        Some(ast::ReferentialAction::SetDefault) => ReferentialAction::SetDefault,
    }
}

impl Binder<'_, '_> {
    /// Binds the constraints of a table whose columns are `columns`
    /// (`table` is None while CREATE TABLE makes it: a foreign key may then
    /// reference the new table itself by name).
    pub(super) fn bind_constraints(
        &mut self,
        table_name: &str,
        table: Option<&Table>,
        columns: &[Column],
        constraints: &[(ast::TableConstraint, bool)],
    ) -> PgResult<Vec<ConstraintSpec>> {
        let mut out = Vec::with_capacity(constraints.len());
        for (c, not_valid) in constraints {
            out.push(self.bind_constraint(table_name, table, columns, c, *not_valid)?);
        }
        Ok(out)
    }

    fn bind_constraint(
        &mut self,
        table_name: &str,
        table: Option<&Table>,
        columns: &[Column],
        c: &ast::TableConstraint,
        not_valid: bool,
    ) -> PgResult<ConstraintSpec> {
        use ast::TableConstraint as T;
        let name = |n: &Option<ast::Ident>| n.as_ref().map(ident_name);
        let (name, kind, (deferrable, deferred)) = match c {
            T::PrimaryKey(pk) => (
                name(&pk.name),
                ConstraintSpecKind::PrimaryKey {
                    keys: index_keys(columns, true, &pk.columns)?,
                },
                characteristics(&pk.characteristics),
            ),
            T::Unique(u) => (
                name(&u.name),
                ConstraintSpecKind::Unique {
                    keys: index_keys(columns, true, &u.columns)?,
                },
                characteristics(&u.characteristics),
            ),
            T::Check(ch) => (
                name(&ch.name),
                self.bind_check_constraint(table_name, table, columns, ch)?,
                (false, false),
            ),
            T::ForeignKey(fk) => (
                name(&fk.name),
                self.bind_foreign_key(table_name, table, columns, fk)?,
                characteristics(&fk.characteristics),
            ),
            other => {
                return Err(PgError::unsupported(format!(
                    "constraint not supported yet: {other}"
                )))
            }
        };
        if not_valid
            && !matches!(
                kind,
                ConstraintSpecKind::Check { .. } | ConstraintSpecKind::ForeignKey { .. }
            )
        {
            let what = match kind {
                ConstraintSpecKind::PrimaryKey { .. } => "PRIMARY KEY",
                _ => "UNIQUE",
            };
            return Err(PgError::new(
                SqlState::FEATURE_NOT_SUPPORTED,
                format!("{what} constraints cannot be marked NOT VALID"),
            ));
        }
        if deferrable && matches!(kind, ConstraintSpecKind::Check { .. }) {
            return Err(PgError::new(
                SqlState::FEATURE_NOT_SUPPORTED,
                "CHECK constraints cannot be marked DEFERRABLE",
            ));
        }
        Ok(ConstraintSpec {
            name,
            kind,
            deferrable,
            deferred,
            not_valid,
        })
    }

    /// CHECK (expr): bound against the columns to validate it now; the
    /// SQL text is what the catalog keeps.
    fn bind_check_constraint(
        &mut self,
        _table_name: &str,
        _table: Option<&Table>,
        _columns: &[Column],
        _ch: &ast::CheckConstraint,
    ) -> PgResult<ConstraintSpecKind> {
        Err(PgError::unsupported(
            "CHECK constraints are not supported yet",
        ))
    }

    /// FOREIGN KEY (columns) REFERENCES table (columns).
    fn bind_foreign_key(
        &mut self,
        _table_name: &str,
        _table: Option<&Table>,
        _columns: &[Column],
        fk: &ast::ForeignKeyConstraint,
    ) -> PgResult<ConstraintSpecKind> {
        let _ = (referential(&fk.on_delete), &fk.match_kind);
        Err(PgError::unsupported(
            "FOREIGN KEY constraints are not supported yet",
        ))
    }

    pub(super) fn bind_create_index(&mut self, ci: &ast::CreateIndex) -> PgResult<BoundStatement> {
        if ci.concurrently {
            // Builds under ShareLock all the same; PostgreSQL's CONCURRENTLY
            // only lets writers in meanwhile.
        }
        if let Some(using) = &ci.using {
            let method = using.to_string().to_lowercase();
            if method != "btree" {
                return Err(PgError::new(
                    SqlState::UNDEFINED_OBJECT,
                    format!("access method \"{method}\" does not exist"),
                ));
            }
        }
        if ci.predicate.is_some() {
            return Err(PgError::unsupported(
                "partial indexes are not supported yet",
            ));
        }
        if !ci.include.is_empty() {
            return Err(PgError::unsupported(
                "INCLUDE columns are not supported yet",
            ));
        }
        if ci.nulls_distinct == Some(false) {
            return Err(PgError::unsupported(
                "NULLS NOT DISTINCT is not supported yet",
            ));
        }
        let parts = object_name_parts(&ci.table_name)?;
        let table = self.require_table(&parts)?;
        let name = match &ci.name {
            Some(n) => {
                let parts = object_name_parts(n)?;
                match parts.as_slice() {
                    [name] => Some(name.clone()),
                    [_, name] => Some(name.clone()),
                    _ => {
                        return Err(PgError::syntax(
                            "improper qualified name (too many dotted names)",
                        ))
                    }
                }
            }
            None => None,
        };
        let keys = index_keys(&table.columns, false, &ci.columns)?;
        Ok(BoundStatement::CreateIndex {
            table: Arc::clone(&table),
            spec: IndexSpec {
                name,
                keys,
                unique: ci.unique,
                if_not_exists: ci.if_not_exists,
            },
        })
    }
}

impl Binder<'_, '_> {
    /// Finds an index by possibly qualified name (search path as for tables).
    fn lookup_index(&self, parts: &[String]) -> PgResult<Option<Arc<catalog::Index>>> {
        let cat = self.ctx.catalog;
        let db = self.ctx.db_oid;
        let found = match parts {
            [name] => self
                .ctx
                .search_path
                .iter()
                .filter_map(|s| cat.namespace_by_name(db, s))
                .find_map(|ns| cat.index(db, ns.oid, name)),
            [schema, name] => cat
                .namespace_by_name(db, schema)
                .and_then(|ns| cat.index(db, ns.oid, name)),
            _ => {
                return Err(PgError::syntax(
                    "improper qualified name (too many dotted names)",
                ))
            }
        };
        Ok(found.map(|i| Arc::new(i.clone())))
    }

    pub(super) fn bind_drop_index(
        &mut self,
        names: &[Vec<String>],
        if_exists: bool,
    ) -> PgResult<BoundStatement> {
        let mut indexes = Vec::new();
        let mut missing = Vec::new();
        for n in names {
            match self.lookup_index(n)? {
                Some(i) => {
                    if let Some(c) = self.ctx.catalog.constraint_of_index(i.oid) {
                        let table = self
                            .ctx
                            .catalog
                            .table_by_oid(i.table)
                            .map_or("", |t| t.name.as_str());
                        return Err(PgError::new(
                            SqlState::DEPENDENT_OBJECTS_STILL_EXIST,
                            format!(
                                "cannot drop index {} because constraint {} on table {table} requires it",
                                i.name, c.name
                            ),
                        )
                        .with_hint(format!(
                            "You can drop constraint {} on table {table} instead.",
                            c.name
                        )));
                    }
                    indexes.push(i)
                }
                None if self.lookup_relation(n)?.is_some() => {
                    return Err(PgError::new(
                        SqlState::WRONG_OBJECT_TYPE,
                        format!("\"{}\" is not an index", n.join(".")),
                    )
                    .with_hint("Use DROP TABLE to remove a table."))
                }
                None if if_exists => missing.push(n.join(".")),
                None => {
                    return Err(PgError::new(
                        SqlState::UNDEFINED_OBJECT,
                        format!("index \"{}\" does not exist", n.join(".")),
                    ))
                }
            }
        }
        Ok(BoundStatement::DropIndex { indexes, missing })
    }

    pub(super) fn bind_reindex(
        &mut self,
        table: bool,
        name: &[String],
    ) -> PgResult<BoundStatement> {
        let indexes = if table {
            let t = self.require_table(name)?;
            self.ctx
                .catalog
                .indexes_of(t.oid)
                .map(|i| Arc::new(i.clone()))
                .collect()
        } else {
            match self.lookup_index(name)? {
                Some(i) => vec![i],
                None => {
                    return Err(PgError::new(
                        SqlState::UNDEFINED_TABLE,
                        format!("relation \"{}\" does not exist", name.join(".")),
                    ))
                }
            }
        };
        Ok(BoundStatement::Reindex { indexes })
    }
}
