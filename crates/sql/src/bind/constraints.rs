//! Binding of index and constraint DDL: CREATE INDEX, column and table
//! constraints of CREATE TABLE, and ALTER TABLE ... ADD CONSTRAINT.

use std::sync::Arc;

use ::types::{DataType, TypeId};
use catalog::{Column, IndexKey, ReferentialAction, Table};
use common::{Oid, PgError, PgResult, SqlState};
use sqlparser::ast;

use super::{ident_name, object_name_parts, BindContext, Binder, Relation, ScopeColumn};
use crate::expr::Expr;
use crate::plan::{
    AlterTableAction, BoundStatement, ConstraintSpec, ConstraintSpecKind, IndexSpec,
};
use txn::lock::LockMode;

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
        let pos = column_position(columns, in_constraint, ident)?;
        if let Some(class) = &c.operator_class {
            check_operator_class(class, columns[pos].data_type().id)?;
        }
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

/// PostgreSQL's B-tree operator classes and the types each accepts. Every
/// index here orders by its type's default comparison; under the C
/// collation every database has, the `*_pattern_ops` classes (byte-wise
/// comparison for LIKE prefixes, which Django creates for indexed text
/// columns) order the same way, so each named class is accepted where
/// PostgreSQL accepts it and the index built as the default.
fn operator_class_types(name: &str) -> Option<&'static [TypeId]> {
    use TypeId::*;
    const TEXTS: &[TypeId] = &[Text, Varchar];
    Some(match name {
        "text_ops" | "varchar_ops" | "text_pattern_ops" | "varchar_pattern_ops" => TEXTS,
        "bpchar_ops" | "bpchar_pattern_ops" => &[Bpchar],
        "bool_ops" => &[Bool],
        "int2_ops" => &[Int2],
        "int4_ops" => &[Int4],
        "int8_ops" => &[Int8],
        "float4_ops" => &[Float4],
        "float8_ops" => &[Float8],
        "numeric_ops" => &[Numeric],
        "name_ops" => &[Name],
        "oid_ops" => &[
            TypeId::Oid,
            RegClass,
            RegType,
            RegProc,
            RegProcedure,
            RegNamespace,
            RegRole,
        ],
        "date_ops" => &[Date],
        "timestamp_ops" => &[Timestamp],
        "timestamptz_ops" => &[Timestamptz],
        "interval_ops" => &[Interval],
        "bytea_ops" => &[Bytea],
        "uuid_ops" => &[Uuid],
        "jsonb_ops" => &[Jsonb],
        "inet_ops" | "network_ops" => &[Inet, Cidr],
        "macaddr_ops" => &[MacAddr],
        "macaddr8_ops" => &[MacAddr8],
        "money_ops" => &[Money],
        "tid_ops" => &[Tid],
        "char_ops" => &[Char],
        // The polymorphic classes: checked by kind below.
        "enum_ops" | "array_ops" => &[],
        _ => return None,
    })
}

/// An index key's operator class: one PostgreSQL's B-tree has for the
/// column's type (42704 for an unknown class, 42804 for another type's).
fn check_operator_class(class: &ast::ObjectName, ty: TypeId) -> PgResult<()> {
    let parts = super::object_name_parts(class)?;
    let name = parts.last().map_or("", String::as_str);
    let in_catalog = parts.len() == 1 || parts[0] == "pg_catalog";
    let Some(types) = operator_class_types(name).filter(|_| in_catalog) else {
        return Err(PgError::new(
            SqlState::UNDEFINED_OBJECT,
            format!(
                "operator class \"{}\" does not exist for access method \"btree\"",
                parts.join(".")
            ),
        ));
    };
    let accepted = match name {
        "enum_ops" => matches!(ty, TypeId::Enum(_)),
        "array_ops" => ty.is_array(),
        _ => types.contains(&ty),
    };
    if accepted {
        return Ok(());
    }
    Err(PgError::new(
        SqlState::DATATYPE_MISMATCH,
        format!(
            "operator class \"{name}\" does not accept data type {}",
            super::format_type(DataType::new(ty))
        ),
    ))
}

/// DEFERRABLE and INITIALLY DEFERRED (which implies DEFERRABLE).
fn characteristics(c: &Option<ast::ConstraintCharacteristics>) -> PgResult<(bool, bool)> {
    let Some(c) = c else {
        return Ok((false, false));
    };
    let deferred = matches!(c.initially, Some(ast::DeferrableInitial::Deferred));
    if deferred && c.deferrable == Some(false) {
        return Err(PgError::syntax(
            "constraint declared INITIALLY DEFERRED must be DEFERRABLE",
        ));
    }
    Ok((c.deferrable.unwrap_or(deferred), deferred))
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

/// The scope of a table CREATE TABLE is making (no oid yet).
fn new_table_scope(table_name: &str, columns: &[Column]) -> super::Scope {
    columns
        .iter()
        .enumerate()
        .map(|(i, c)| ScopeColumn {
            qualifier: Some(table_name.to_string()),
            name: c.name.clone(),
            ty: c.data_type(),
            table_oid: 0,
            attnum: i as i16 + 1,
            hidden: false,
        })
        .collect()
}

/// The row columns `e` reads, each once, in the order they first appear.
fn columns_read(e: &Expr) -> Vec<usize> {
    let mut out = Vec::new();
    e.visit(&mut |x| {
        if let Expr::Column(i, _) = x {
            if !out.contains(i) {
                out.push(*i);
            }
        }
    });
    out
}

/// Parses an expression the catalog stores as SQL text (a CHECK, a DEFAULT).
pub(super) fn parse_stored_expr(text: &str, what: &str) -> PgResult<ast::Expr> {
    let dialect = sqlparser::dialect::PostgreSqlDialect {};
    sqlparser::parser::Parser::new(&dialect)
        .try_with_sql(text)
        .and_then(|mut p| p.parse_expr())
        .map_err(|e| PgError::internal(format!("stored {what} does not parse: {e}")))
}

/// A CHECK constraint's stored text bound over `table`'s rows: the
/// executor binds each check of a table once per statement that writes it.
pub fn bind_check(ctx: &mut BindContext<'_>, table: &Table, text: &str) -> PgResult<Expr> {
    let e = parse_stored_expr(text, "check constraint")?;
    let mut b = Binder::new(ctx);
    let scope = Binder::table_scope(table, None);
    b.bind_check_expr(&e, &scope)
}

/// Column `index`'s DEFAULT (NULL without one) coerced to its type, as
/// ON DELETE / ON UPDATE SET DEFAULT assigns it.
pub fn bind_column_default(
    ctx: &mut BindContext<'_>,
    table: &Table,
    index: usize,
) -> PgResult<Expr> {
    let mut b = Binder::new(ctx);
    b.column_default(table, index)
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
                characteristics(&pk.characteristics)?,
            ),
            T::Unique(u) => (
                name(&u.name),
                ConstraintSpecKind::Unique {
                    keys: index_keys(columns, true, &u.columns)?,
                },
                characteristics(&u.characteristics)?,
            ),
            T::Check(ch) => (
                name(&ch.name),
                self.bind_check_constraint(table_name, table, columns, ch)?,
                (false, false),
            ),
            T::ForeignKey(fk) => (
                name(&fk.name),
                self.bind_foreign_key(table_name, table, columns, fk)?,
                characteristics(&fk.characteristics)?,
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
    /// SQL text is what the catalog keeps, with the columns it reads in
    /// the order they first appear (PostgreSQL's conkey).
    fn bind_check_constraint(
        &mut self,
        table_name: &str,
        table: Option<&Table>,
        columns: &[Column],
        ch: &ast::CheckConstraint,
    ) -> PgResult<ConstraintSpecKind> {
        let scope = match table {
            Some(t) => Binder::table_scope(t, None),
            None => new_table_scope(table_name, columns),
        };
        let bound = self.bind_check_expr(&ch.expr, &scope)?;
        Ok(ConstraintSpecKind::Check {
            expr: ch.expr.to_string(),
            columns: columns_read(&bound),
            no_inherit: ch.no_inherit,
        })
    }

    /// A CHECK expression over one table's row: boolean, without
    /// subqueries or aggregates (PostgreSQL's messages).
    pub(super) fn bind_check_expr(
        &mut self,
        e: &ast::Expr,
        scope: &super::Scope,
    ) -> PgResult<Expr> {
        let bound = self.bind_expr(e, scope)?;
        let mut subquery = false;
        bound.visit(&mut |x| {
            subquery |= matches!(
                x,
                Expr::ScalarSubquery(..)
                    | Expr::ArraySubquery(..)
                    | Expr::Exists { .. }
                    | Expr::InSubquery { .. }
            )
        });
        if subquery {
            return Err(self.locate(
                PgError::new(
                    SqlState::FEATURE_NOT_SUPPORTED,
                    "cannot use subquery in check constraint",
                ),
                e,
            ));
        }
        if bound.contains_agg() {
            return Err(self.locate(
                PgError::new(
                    SqlState::GROUPING_ERROR,
                    "aggregate functions are not allowed in check constraints",
                ),
                e,
            ));
        }
        self.coerce_bool(bound, "CHECK")
            .map_err(|err| self.locate(err, e))
    }

    /// FOREIGN KEY (columns) REFERENCES table [(columns)]: names resolved
    /// here; the referenced key (the primary key when no columns are
    /// given), its unique index and the column types are checked where the
    /// constraint is added, when a primary key made by the same CREATE
    /// TABLE exists.
    fn bind_foreign_key(
        &mut self,
        table_name: &str,
        table: Option<&Table>,
        columns: &[Column],
        fk: &ast::ForeignKeyConstraint,
    ) -> PgResult<ConstraintSpecKind> {
        if matches!(
            fk.match_kind,
            Some(ast::ConstraintReferenceMatchKind::Partial)
        ) {
            return Err(PgError::unsupported("MATCH PARTIAL not yet implemented"));
        }
        let parts = object_name_parts(&fk.foreign_table)?;
        // CREATE TABLE t (... REFERENCES t): the table being made.
        let self_reference =
            table.is_none() && parts.last().map(String::as_str) == Some(table_name);
        let referenced: Option<Arc<Table>> = if self_reference {
            None
        } else {
            match self.lookup_relation(&parts)? {
                Some(Relation::Table(t)) => Some(t),
                Some(Relation::View(_)) => {
                    return Err(PgError::new(
                        SqlState::WRONG_OBJECT_TYPE,
                        format!("referenced relation \"{}\" is not a table", parts.join(".")),
                    ))
                }
                None => {
                    return Err(PgError::new(
                        SqlState::UNDEFINED_TABLE,
                        format!("relation \"{}\" does not exist", parts.join(".")),
                    ))
                }
            }
        };
        let (ref_table, ref_columns): (Oid, &[Column]) = match &referenced {
            Some(t) => (t.oid, &t.columns),
            None => (0, columns),
        };
        let fk_column = |cols: &[Column], name: &ast::Ident| {
            let name = ident_name(name);
            cols.iter().position(|c| c.name == name).ok_or_else(|| {
                PgError::new(
                    SqlState::UNDEFINED_COLUMN,
                    format!(
                        "column \"{name}\" referenced in foreign key constraint does not exist"
                    ),
                )
            })
        };
        let own = fk
            .columns
            .iter()
            .map(|c| fk_column(columns, c))
            .collect::<PgResult<Vec<_>>>()?;
        let referenced = fk
            .referred_columns
            .iter()
            .map(|c| fk_column(ref_columns, c))
            .collect::<PgResult<Vec<_>>>()?;
        Ok(ConstraintSpecKind::ForeignKey {
            columns: own,
            ref_table,
            ref_columns: referenced,
            on_delete: referential(&fk.on_delete),
            on_update: referential(&fk.on_update),
            match_full: matches!(fk.match_kind, Some(ast::ConstraintReferenceMatchKind::Full)),
        })
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
        cascade: bool,
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
        let mut related: Vec<Oid> = Vec::new();
        if cascade {
            for i in &indexes {
                for fk in self.ctx.catalog.constraints.values() {
                    if fk.kind.code() == 'f'
                        && fk.kind.index() == Some(i.oid)
                        && !related.contains(&fk.table)
                    {
                        related.push(fk.table);
                    }
                }
            }
        }
        Ok(BoundStatement::DropIndex {
            indexes,
            missing,
            cascade,
            related,
        })
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

/// The tables whose foreign keys DROP TABLE removes besides the dropped
/// tables' own: those the dropped tables reference, and with CASCADE those
/// referencing them (PostgreSQL locks both AccessExclusive).
pub(super) fn drop_table_related(
    catalog: &catalog::CatalogData,
    tables: &[Arc<Table>],
    cascade: bool,
) -> Vec<Oid> {
    let dropped = |oid: Oid| tables.iter().any(|t| t.oid == oid);
    let mut out: Vec<Oid> = Vec::new();
    let mut add = |oid: Oid| {
        if !dropped(oid) && !out.contains(&oid) {
            out.push(oid);
        }
    };
    for t in tables {
        for c in catalog.constraints_of(t.oid) {
            if let catalog::ConstraintKind::ForeignKey { ref_table, .. } = c.kind {
                add(ref_table);
            }
        }
        if cascade {
            for c in catalog.foreign_keys_referencing(t.oid) {
                add(c.table);
            }
        }
    }
    out
}

/// TRUNCATE ... CASCADE: the tables referencing `tables` through foreign
/// keys, and those referencing them, in the order found.
pub(super) fn truncate_cascade(
    catalog: &catalog::CatalogData,
    tables: &[Arc<Table>],
) -> Vec<Arc<Table>> {
    let mut seen: Vec<Oid> = tables.iter().map(|t| t.oid).collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < seen.len() {
        let mut referencing: Vec<Oid> = catalog
            .foreign_keys_referencing(seen[i])
            .map(|c| c.table)
            .collect();
        referencing.sort_unstable();
        for oid in referencing {
            if seen.contains(&oid) {
                continue;
            }
            seen.push(oid);
            if let Some(t) = catalog.table_by_oid(oid) {
                out.push(Arc::new(t.clone()));
            }
        }
        i += 1;
    }
    out
}

/// The other tables ALTER TABLE's actions reach, with PostgreSQL's locks:
/// a new foreign key's referenced table ShareRowExclusive, a dropped
/// foreign key's referenced table AccessExclusive (and with CASCADE the
/// tables whose foreign keys rely on a dropped unique constraint), a
/// validated foreign key's referenced table RowShare.
pub(super) fn alter_table_related(
    catalog: &catalog::CatalogData,
    table: &Table,
    actions: &[AlterTableAction],
) -> Vec<(Oid, LockMode)> {
    let mut out = Vec::new();
    let mut add = |oid: Oid, mode: LockMode| {
        if oid != 0 && oid != table.oid && !out.contains(&(oid, mode)) {
            out.push((oid, mode));
        }
    };
    for a in actions {
        match a {
            AlterTableAction::AddConstraint(ConstraintSpec {
                kind: ConstraintSpecKind::ForeignKey { ref_table, .. },
                ..
            }) => add(*ref_table, LockMode::ShareRowExclusive),
            AlterTableAction::DropConstraint { name, cascade, .. } => {
                match catalog.constraint_by_name(table.oid, name).map(|c| &c.kind) {
                    Some(catalog::ConstraintKind::ForeignKey { ref_table, .. }) => {
                        add(*ref_table, LockMode::AccessExclusive)
                    }
                    Some(k) if *cascade => {
                        if let Some(index) = k.index() {
                            for fk in catalog.foreign_keys_referencing(table.oid) {
                                if fk.kind.index() == Some(index) {
                                    add(fk.table, LockMode::AccessExclusive);
                                }
                            }
                        }
                    }
                    _ => {}
                }
            }
            // The other ends of foreign keys on the column and the views
            // reading it go with it.
            AlterTableAction::DropColumn {
                index: Some(index),
                views,
                ..
            } => {
                let attnum = *index as i16 + 1;
                for c in catalog.constraints.values() {
                    if let catalog::ConstraintKind::ForeignKey {
                        ref_table,
                        ref_columns,
                        ..
                    } = &c.kind
                    {
                        if c.table == table.oid && c.columns.contains(&attnum) {
                            add(*ref_table, LockMode::AccessExclusive);
                        }
                        if *ref_table == table.oid && ref_columns.contains(&attnum) {
                            add(c.table, LockMode::AccessExclusive);
                        }
                    }
                }
                for v in views {
                    add(v.oid, LockMode::AccessExclusive);
                }
            }
            AlterTableAction::ValidateConstraint(name) => {
                if let Some(catalog::ConstraintKind::ForeignKey { ref_table, .. }) =
                    catalog.constraint_by_name(table.oid, name).map(|c| &c.kind)
                {
                    add(*ref_table, LockMode::RowShare);
                }
            }
            _ => {}
        }
    }
    out
}

impl Binder<'_, '_> {
    /// SET CONSTRAINTS: each name is looked up in its schema, or in the
    /// first schema of the search path holding a constraint of that name
    /// (every constraint of that name there); all must be deferrable.
    pub(super) fn bind_set_constraints(
        &mut self,
        names: Option<&[Vec<String>]>,
    ) -> PgResult<Option<Vec<Oid>>> {
        let Some(names) = names else {
            return Ok(None);
        };
        let cat = self.ctx.catalog;
        let mut found = Vec::new();
        for parts in names {
            let (schemas, name): (Vec<Oid>, &str) = match parts.as_slice() {
                [name] => (
                    self.ctx
                        .search_path
                        .iter()
                        .filter_map(|s| cat.namespace_by_name(self.ctx.db_oid, s))
                        .map(|n| n.oid)
                        .collect(),
                    name,
                ),
                [schema, name] | [_, schema, name] => (vec![self.namespace_oid(schema)?], name),
                _ => {
                    return Err(PgError::syntax(
                        "improper qualified name (too many dotted names)",
                    ))
                }
            };
            let in_first: Vec<&catalog::Constraint> = schemas
                .iter()
                .map(|ns| {
                    cat.constraints
                        .values()
                        .filter(|c| c.namespace == *ns && c.name == name)
                        .collect::<Vec<_>>()
                })
                .find(|v| !v.is_empty())
                .unwrap_or_default();
            if in_first.is_empty() {
                return Err(PgError::new(
                    SqlState::UNDEFINED_OBJECT,
                    format!("constraint \"{name}\" does not exist"),
                ));
            }
            for c in in_first {
                if !c.deferrable {
                    return Err(PgError::new(
                        SqlState::WRONG_OBJECT_TYPE,
                        format!("constraint \"{name}\" is not deferrable"),
                    ));
                }
                found.push(c.oid);
            }
        }
        Ok(Some(found))
    }
}

/// What a rename changes in the SQL text of a table's CHECK constraints.
pub enum Rename<'a> {
    Column { old: &'a str, new: &'a str },
    Table { old: &'a str, new: &'a str },
}

/// A CHECK constraint's stored text with a column or its table renamed
/// (PostgreSQL keeps the expression as a tree of attnums, which renames
/// leave alone; the text here names them). None if nothing changed.
pub fn rename_in_check(text: &str, rename: &Rename<'_>) -> PgResult<Option<String>> {
    use sqlparser::ast::visit_expressions_mut;
    let mut e = parse_stored_expr(text, "check constraint")?;
    let quoted = |s: &str| {
        let mut i = ast::Ident::new(s);
        if ::types::functions::ident_needs_quotes(s) {
            i.quote_style = Some('"');
        }
        i
    };
    let mut changed = false;
    let _ = visit_expressions_mut(&mut e, |x| {
        match (x, rename) {
            (ast::Expr::Identifier(i), Rename::Column { old, new }) if ident_name(i) == *old => {
                *i = quoted(new);
                changed = true;
            }
            (ast::Expr::CompoundIdentifier(parts), r) if parts.len() == 2 => {
                let (k, old, new) = match r {
                    Rename::Table { old, new } => (0, old, new),
                    Rename::Column { old, new } => (1, old, new),
                };
                if ident_name(&parts[k]) == **old {
                    parts[k] = quoted(new);
                    changed = true;
                }
            }
            _ => {}
        }
        std::ops::ControlFlow::<()>::Continue(())
    });
    Ok(changed.then(|| e.to_string()))
}
