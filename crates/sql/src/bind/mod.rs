//! Binding: resolves names against a catalog snapshot, types every
//! expression, and plans queries (see `query.rs`) and DML/DDL statements.

mod aggregates;
mod alter_column;
mod alter_table;
mod arrays;
mod comment;
mod constraints;
mod copy;
mod cte;
mod cte_search;
mod distinct_on;
mod explain;
mod expr;
mod from;
mod function_call;
pub mod functions;
mod fuzzy;
mod grouping_sets;
mod identity;
mod json;
mod lock;
mod locking;
mod modify;
mod modify_join;
mod network;
use modify::select_into_target;
mod domains;
mod on_conflict;
pub mod partition;
mod portal;
mod pos;
mod query;
mod sequence;
mod srf;
mod system_columns;
mod target_list;
mod temp;
pub mod triggers;
mod types;
mod user_types;
mod variadic;
mod view_deps;
mod view_rename;
mod views;
mod window;

use std::sync::Arc;

use ::types::cast::CastContext;
use ::types::{DataType, TypeId, Value};
use catalog::{is_temp_schema_name, CatalogData, Column, Table, PG_CATALOG_NAMESPACE};
use common::{Oid, PgError, PgResult, SqlState};
use sqlparser::ast::{self, Spanned};

use crate::expr::Expr;
use crate::parse::{ParsedStatement, Utility};
use crate::plan::{
    AlterTableAction, BoundStatement, ConstraintSpecKind, OutputColumn, Plan, TransactionOp,
};

pub use constraints::{bind_check, bind_column_default, rename_in_check, Rename};
pub use portal::coerce_execute_arg;
pub(crate) use srf::ROWS_FROM_MARK;
pub use types::{format_type, parse_type_name};

/// What the binder needs to know about the session.
pub struct BindContext<'a> {
    pub catalog: &'a CatalogData,
    pub db_oid: Oid,
    pub db_name: &'a str,
    /// current_user (SET ROLE changes it).
    pub user: &'a str,
    /// session_user.
    pub session_user: &'a str,
    /// Schemas searched for unqualified names, in order (pg_catalog is implicit).
    pub search_path: Vec<String>,
    /// The session's temporary schema (`pg_temp_N`) once it has one; the
    /// session also puts its name into `search_path` (`bind/temp.rs`).
    pub temp_namespace: Option<Oid>,
    /// Declared or inferred parameter types ($1 is index 0); None = not yet known.
    pub param_types: Vec<Option<TypeId>>,
    pub server_version: &'a str,
    /// The session's TimeZone: constants are folded with it.
    pub io: ::types::IoSettings,
    /// The system views (pg_class, pg_stat_activity, information_schema.tables,
    /// ...), looked up before the catalog's tables; None binds without them.
    pub system_views: Option<&'a dyn SystemViews>,
    /// Names of the parameters (`$n` is `param_names[n - 1]`) inside a
    /// function body: a name no column has resolves to its parameter, as
    /// PostgreSQL resolves a SQL function's argument names. Empty elsewhere.
    pub param_names: Vec<String>,
}

/// Where the binder finds system views. It needs their columns and what
/// EXPLAIN calls their scan; their rows are produced when the plan runs
/// (the registry is `exec::system_views`).
pub trait SystemViews {
    /// The view `name` in `schema` (`pg_catalog` or `information_schema`).
    fn lookup(&self, schema: &str, name: &str) -> Option<SystemViewDesc>;
    /// The name regclass prints for a system relation's oid.
    fn name_by_oid(&self, oid: Oid) -> Option<String> {
        let _ = oid;
        None
    }
}

/// A system view as the binder sees it.
#[derive(Debug, Clone)]
pub struct SystemViewDesc {
    /// The registry key the plan node carries (`pg_class`, `information_schema.tables`).
    pub key: String,
    /// The relation's oid (PostgreSQL's for catalogs), 0 if it has none.
    pub oid: Oid,
    pub scan: crate::plan::ViewScan,
    pub columns: Vec<OutputColumn>,
}

/// One column visible to name resolution.
#[derive(Debug, Clone)]
pub(crate) struct ScopeColumn {
    pub qualifier: Option<String>,
    pub name: String,
    pub ty: DataType,
    pub table_oid: Oid,
    pub attnum: i16,
    /// A join's USING column as seen through one side: reachable only
    /// qualified (`a.x`), left out of `*` (the merged column stands for it).
    pub hidden: bool,
}

impl ScopeColumn {
    /// A column of a FROM item that is no table's (a subquery's, a
    /// function's, a view's).
    pub(crate) fn derived(qualifier: Option<String>, name: String, ty: DataType) -> ScopeColumn {
        ScopeColumn {
            qualifier,
            name,
            ty,
            table_oid: 0,
            attnum: 0,
            hidden: false,
        }
    }
}

pub(crate) type Scope = Vec<ScopeColumn>;

/// Renames a FROM item's columns by its alias list, after PostgreSQL's
/// 42P10 check that the list is not longer than the columns.
pub(crate) fn apply_column_aliases(
    scope: &mut Scope,
    alias: &Option<sqlparser::ast::TableAlias>,
) -> PgResult<()> {
    let Some(a) = alias else { return Ok(()) };
    let visible = scope.iter().filter(|c| !c.hidden).count();
    check_alias_count(&ident_name(&a.name), visible, a.columns.len())?;
    for (c, n) in scope.iter_mut().zip(&a.columns) {
        c.name = ident_name(&n.name);
    }
    Ok(())
}

pub(crate) struct Binder<'c, 'a> {
    pub ctx: &'c mut BindContext<'a>,
    /// Enclosing queries' scopes, innermost last (for correlated subqueries).
    pub outer: Vec<Scope>,
    /// Where the statement lies in the query string (error positions).
    pub src: Option<crate::parse::SourceMap>,
    /// The locking clause of the query whose FROM list is being bound.
    pub(crate) locking: Option<locking::LockScope>,
    /// WITH queries in scope, innermost last (`cte.rs`).
    pub(crate) ctes: Vec<cte::CteEntry>,
    /// Where window calls may appear and the WINDOW clause in force.
    pub(crate) window: window::WindowScope,
    /// The outermost level of `outer` a column reference has resolved to
    /// (usize::MAX: none) since it was last reset: a LATERAL item bound
    /// with the FROM items to its left pushed as an outer scope reads them
    /// only if a reference reached that level (`query.rs`).
    pub(crate) outermost_ref: std::cell::Cell<usize>,
    /// While UPDATE ... FROM / DELETE ... USING binds its FROM list: the
    /// target's reference name, which those items cannot see.
    pub(crate) modify_target: Option<String>,
    /// The statement's data-modifying WITH queries (`cte.rs`).
    pub(crate) modifying: cte::ModifyingWith,
    /// Whether the statement names system columns or stored forms, which
    /// its table scans then emit (`system_columns.rs`).
    pub(crate) system_use: system_columns::SystemColumnUse,
    /// Set for the SELECT of INSERT … SELECT: its untyped literals stay
    /// unknown, for the INSERT to coerce to the target columns' types as
    /// PostgreSQL does; taken by the first SELECT bound.
    pub(crate) keep_unknown_outputs: bool,
}

/// PostgreSQL's error for a FROM item's alias list longer than its columns.
pub(crate) fn check_alias_count(table: &str, available: usize, given: usize) -> PgResult<()> {
    if given > available {
        return Err(PgError::new(
            SqlState::INVALID_COLUMN_REFERENCE,
            format!(
                "table \"{table}\" has {available} columns available but {given} columns specified"
            ),
        ));
    }
    Ok(())
}

/// Binds a parsed statement.
pub fn bind_statement(
    ctx: &mut BindContext<'_>,
    stmt: &ParsedStatement,
) -> PgResult<BoundStatement> {
    let mut b = Binder::new(ctx);
    match stmt {
        ParsedStatement::Utility(u) => b.bind_utility(u),
        ParsedStatement::Sql(s, src) => {
            b.src = Some(src.clone());
            b.system_use = system_columns::SystemColumnUse::of(s.as_ref());
            b.bind_sql(s)
        }
        ParsedStatement::Copy(c) => b.bind_copy(c),
    }
}

impl<'a, 'c> Binder<'a, 'c> {
    /// A binder for a statement of its own (no outer query, no CTEs).
    fn new(ctx: &'a mut BindContext<'c>) -> Self {
        Binder {
            ctx,
            outer: Vec::new(),
            src: None,
            locking: None,
            ctes: Vec::new(),
            window: Default::default(),
            outermost_ref: std::cell::Cell::new(usize::MAX),
            modify_target: None,
            modifying: Default::default(),
            system_use: Default::default(),
            keep_unknown_outputs: false,
        }
    }
}

pub(crate) fn ident_name(i: &ast::Ident) -> String {
    if i.quote_style.is_some() {
        i.value.clone()
    } else {
        i.value.to_lowercase()
    }
}

/// A channel named in LISTEN, UNLISTEN or NOTIFY: an identifier, cut to
/// NAMEDATALEN - 1 bytes as PostgreSQL's scanner cuts every identifier.
fn channel_name(i: &ast::Ident) -> String {
    let mut name = ident_name(i);
    if name.len() > 63 {
        let mut end = 63;
        while !name.is_char_boundary(end) {
            end -= 1;
        }
        name.truncate(end);
    }
    name
}

pub(crate) fn object_name_parts(n: &ast::ObjectName) -> PgResult<Vec<String>> {
    n.0.iter()
        .map(|p| match p {
            ast::ObjectNamePart::Identifier(i) => Ok(ident_name(i)),
            _ => Err(PgError::syntax(format!("syntax error at or near \"{n}\""))),
        })
        .collect()
}

fn undefined_table(name: &str) -> PgError {
    PgError::new(
        SqlState::UNDEFINED_TABLE,
        format!("relation \"{name}\" does not exist"),
    )
}

/// A relation a name resolves to.
pub(crate) enum Relation {
    Table(Arc<Table>),
    View(Arc<catalog::View>),
}

/// PostgreSQL's 42809 for a relation of the wrong kind.
fn wrong_object_type(name: &str, kind: &str) -> PgError {
    PgError::new(
        SqlState::WRONG_OBJECT_TYPE,
        format!("\"{name}\" is not a {kind}"),
    )
}

impl Binder<'_, '_> {
    pub(crate) fn namespace_oid(&self, name: &str) -> PgResult<Oid> {
        self.relation_schema(name)?.map(|n| n.oid).ok_or_else(|| {
            PgError::new(
                SqlState::INVALID_SCHEMA_NAME,
                format!("schema \"{name}\" does not exist"),
            )
        })
    }

    /// Schema for new objects: the first existing schema of the search path.
    pub(crate) fn creation_namespace(&self, parts: &[String]) -> PgResult<(Oid, String)> {
        match parts {
            [name] => {
                // A temporary schema is a creation target only by name.
                for s in self
                    .ctx
                    .search_path
                    .iter()
                    .filter(|s| !is_temp_schema_name(s))
                {
                    if let Some(ns) = self.ctx.catalog.namespace_by_name(self.ctx.db_oid, s) {
                        return Ok((ns.oid, name.clone()));
                    }
                }
                Err(PgError::new(
                    SqlState::INVALID_SCHEMA_NAME,
                    "no schema has been selected to create in",
                ))
            }
            [schema, name] => Ok((self.namespace_oid(schema)?, name.clone())),
            [db, schema, name] => {
                self.check_db(db)?;
                Ok((self.namespace_oid(schema)?, name.clone()))
            }
            _ => Err(PgError::syntax(
                "improper qualified name (too many dotted names)",
            )),
        }
    }

    fn check_db(&self, db: &str) -> PgResult<()> {
        if db != self.ctx.db_name {
            return Err(PgError::unsupported(format!(
                "cross-database references are not implemented: \"{db}\""
            )));
        }
        Ok(())
    }

    /// reg* name lookups against this statement's catalog.
    pub(crate) fn reg_catalog(&self) -> crate::reg::RegCatalog<'_> {
        crate::reg::RegCatalog {
            catalog: self.ctx.catalog,
            db_oid: self.ctx.db_oid,
            search_path: self.ctx.search_path.iter().map(String::as_str).collect(),
            system_views: self.ctx.system_views,
        }
    }

    /// Finds a user table or view by possibly qualified name: the first
    /// schema of the search path holding a relation of that name decides.
    pub(crate) fn lookup_relation(&self, parts: &[String]) -> PgResult<Option<Relation>> {
        let cat = self.ctx.catalog;
        let db = self.ctx.db_oid;
        let in_schema = |ns: Oid, name: &str| {
            cat.table(db, ns, name)
                .map(|t| Relation::Table(Arc::new(t.clone())))
                .or_else(|| {
                    cat.view(db, ns, name)
                        .map(|v| Relation::View(Arc::new(v.clone())))
                })
        };
        Ok(match parts {
            [name] => self
                .ctx
                .search_path
                .iter()
                .filter_map(|s| cat.namespace_by_name(db, s))
                .find_map(|ns| in_schema(ns.oid, name)),
            [schema, name] | [_, schema, name] => {
                if parts.len() == 3 {
                    self.check_db(&parts[0])?;
                }
                // A missing schema is a missing relation, as in PostgreSQL.
                self.relation_schema(schema)?
                    .and_then(|ns| in_schema(ns.oid, name))
            }
            _ => {
                return Err(PgError::syntax(
                    "improper qualified name (too many dotted names)",
                ))
            }
        })
    }

    /// Finds a user table by possibly qualified name (a view there is 42809).
    pub(crate) fn lookup_table(&self, parts: &[String]) -> PgResult<Option<Arc<Table>>> {
        match self.lookup_relation(parts)? {
            Some(Relation::Table(t)) => Ok(Some(t)),
            Some(Relation::View(_)) => Err(wrong_object_type(&parts.join("."), "table")),
            None => Ok(None),
        }
    }

    pub(crate) fn require_table(&self, parts: &[String]) -> PgResult<Arc<Table>> {
        self.lookup_table(parts)?
            .ok_or_else(|| undefined_table(&parts.join(".")))
    }

    fn bind_utility(&mut self, u: &Utility) -> PgResult<BoundStatement> {
        Ok(match u {
            Utility::Set {
                name,
                value,
                local,
                reset,
            } => BoundStatement::Set {
                name: name.clone(),
                value: value.clone(),
                local: *local,
                reset: *reset,
            },
            Utility::Show { name } if name == "all" => BoundStatement::ShowAll,
            Utility::Show { name } => BoundStatement::Show {
                name: name.replace(' ', ""),
            },
            Utility::Transaction(op) => BoundStatement::Transaction(op.clone()?),
            Utility::Checkpoint => BoundStatement::Checkpoint,
            Utility::Do(block) => self.bind_do(block.clone()?)?,
            Utility::Fetch(Ok(f)) => BoundStatement::Fetch(f.clone()),
            Utility::Fetch(Err(near)) => {
                return Err(PgError::syntax(format!(
                    "syntax error at or near \"{near}\""
                )))
            }
            Utility::AlterSystem { name, value } => BoundStatement::AlterSystem {
                name: name.clone(),
                value: value.clone(),
            },
            Utility::NoOp(tag) => BoundStatement::NoOp(tag.clone()),
            Utility::Role(Ok(r)) => BoundStatement::Role(r.clone()),
            Utility::Role(Err(e)) => return Err(e.clone()),
            Utility::Trigger(Ok(t)) => self.bind_trigger_statement(t)?,
            Utility::Trigger(Err(e)) => return Err(e.clone()),
            Utility::DropDatabase { name, if_exists } => BoundStatement::DropDatabase {
                name: name.clone(),
                if_exists: *if_exists,
            },
            Utility::CreateExtension {
                name,
                if_not_exists: _,
            } => match name.as_str() {
                "pg_prewarm" | "pg_buffercache" | "plpgsql" | "amcheck" => {
                    BoundStatement::NoOp("CREATE EXTENSION".into())
                }
                _ => {
                    return Err(PgError::new(
                        SqlState::UNDEFINED_FILE_OR_OBJECT,
                        format!("extension \"{name}\" is not available"),
                    ))
                }
            },
            Utility::DropTable {
                names,
                if_exists,
                cascade,
            } => {
                let mut tables = Vec::new();
                let mut missing = Vec::new();
                for n in names {
                    match self.lookup_relation(n)? {
                        Some(Relation::Table(t)) => tables.push(t),
                        Some(Relation::View(_)) => {
                            return Err(wrong_object_type(&n.join("."), "table")
                                .with_hint("Use DROP VIEW to remove a view."))
                        }
                        None if *if_exists => missing.push(n.join(".")),
                        None => {
                            return Err(PgError::new(
                                SqlState::UNDEFINED_TABLE,
                                format!("table \"{}\" does not exist", n.join(".")),
                            ))
                        }
                    }
                }
                let tables = partition::with_partitions(self.ctx.catalog, tables);
                let related = constraints::drop_table_related(self.ctx.catalog, &tables, *cascade);
                let views = self.views_on_dropped(&tables, &[], *cascade)?;
                BoundStatement::DropTable {
                    tables,
                    missing,
                    cascade: *cascade,
                    related,
                    views,
                }
            }
            Utility::Analyze {
                verbose,
                vacuum,
                targets,
            } => BoundStatement::Analyze {
                targets: self.bind_analyze_targets(targets)?,
                verbose: *verbose,
                vacuum: *vacuum,
            },
            Utility::Vacuum(Ok(v)) => BoundStatement::Vacuum {
                targets: self.bind_analyze_targets(&v.targets)?,
                verbose: v.verbose,
                analyze: v.analyze,
                truncate: v.truncate,
                scan_all: v.scan_all,
            },
            Utility::Vacuum(Err(e)) => return Err(e.clone()),
            Utility::DropSequence { names, if_exists } => {
                self.bind_drop_sequence(names, *if_exists)?
            }
            Utility::DropType {
                names,
                if_exists,
                cascade,
                domain,
            } => self.bind_drop_type(names, *if_exists, *cascade, *domain)?,
            Utility::Domain(d) => self.bind_domain_statement(*d.clone()?)?,
            Utility::DropIndex {
                names,
                if_exists,
                cascade,
            } => self.bind_drop_index(names, *if_exists, *cascade)?,
            Utility::Reindex { table, name } => self.bind_reindex(*table, name)?,
            Utility::AlterSequence { name, action } => self.bind_alter_sequence(name, action)?,
            Utility::DropView {
                names,
                if_exists,
                cascade,
            } => {
                let mut views = Vec::new();
                let mut missing = Vec::new();
                for n in names {
                    match self.lookup_relation(n)? {
                        Some(Relation::View(v)) => views.push(v),
                        Some(Relation::Table(_)) => {
                            return Err(wrong_object_type(&n.join("."), "view")
                                .with_hint("Use DROP TABLE to remove a table."))
                        }
                        None if *if_exists => missing.push(n.join(".")),
                        None => {
                            return Err(PgError::new(
                                SqlState::UNDEFINED_TABLE,
                                format!("view \"{}\" does not exist", n.join(".")),
                            ))
                        }
                    }
                }
                let dependents = self.views_on_dropped(&[], &views, *cascade)?;
                BoundStatement::DropView {
                    views,
                    missing,
                    dependents,
                }
            }
            Utility::DropSchema {
                names,
                if_exists,
                cascade,
            } => {
                let mut schemas = Vec::new();
                let mut missing = Vec::new();
                for n in names {
                    match self.ctx.catalog.namespace_by_name(self.ctx.db_oid, n) {
                        Some(ns) => schemas.push(ns.clone()),
                        None if *if_exists => missing.push(n.clone()),
                        None => {
                            return Err(PgError::new(
                                SqlState::INVALID_SCHEMA_NAME,
                                format!("schema \"{n}\" does not exist"),
                            ))
                        }
                    }
                }
                BoundStatement::DropSchema {
                    schemas,
                    missing,
                    cascade: *cascade,
                }
            }
            Utility::Lock {
                names,
                mode,
                nowait,
            } => self.bind_lock(names, mode, *nowait)?,
            Utility::AlterColumnToast { table, actions } => {
                self.bind_alter_column_toast(table, actions)?
            }
            Utility::Truncate { names, cascade } => {
                let tables: Vec<Arc<Table>> = names
                    .iter()
                    .map(|n| self.require_table(n))
                    .collect::<PgResult<_>>()?;
                let tables = partition::with_partitions(self.ctx.catalog, tables);
                let cascaded = if *cascade {
                    constraints::truncate_cascade(self.ctx.catalog, &tables)
                } else {
                    Vec::new()
                };
                BoundStatement::Truncate {
                    tables,
                    cascaded,
                    cascade: *cascade,
                }
            }
            Utility::SetConstraints { names, deferred } => BoundStatement::SetConstraints {
                constraints: self.bind_set_constraints(names.as_deref()),
                deferred: *deferred,
            },
        })
    }

    /// ANALYZE's tables and columns; no tables means every table of the
    /// database.
    fn bind_analyze_targets(
        &self,
        targets: &[(Vec<String>, Vec<String>)],
    ) -> PgResult<Vec<crate::plan::AnalyzeTarget>> {
        if targets.is_empty() {
            return Ok(self
                .ctx
                .catalog
                .tables
                .values()
                .filter(|t| t.db_oid == self.ctx.db_oid)
                .map(|t| (Arc::new(t.clone()), None))
                .collect());
        }
        targets
            .iter()
            .map(|(name, cols)| {
                let t = self.require_table(name)?;
                if cols.is_empty() {
                    return Ok((t, None));
                }
                let mut idx = Vec::new();
                for c in cols {
                    let i = t.column_index(c).ok_or_else(|| {
                        PgError::new(
                            SqlState::UNDEFINED_COLUMN,
                            format!("column \"{c}\" of relation \"{}\" does not exist", t.name),
                        )
                    })?;
                    if idx.contains(&i) {
                        return Err(PgError::new(
                            SqlState::DUPLICATE_COLUMN,
                            format!(
                                "column \"{c}\" of relation \"{}\" appears more than once",
                                t.name
                            ),
                        ));
                    }
                    idx.push(i);
                }
                Ok((t, Some(idx)))
            })
            .collect()
    }

    fn bind_sql(&mut self, s: &ast::Statement) -> PgResult<BoundStatement> {
        use ast::Statement as S;
        match s {
            // WITH ... INSERT/UPDATE/DELETE: the CTEs are visible to the
            // statement's queries.
            S::Query(q)
                if q.with.is_some()
                    && matches!(
                        q.body.as_ref(),
                        ast::SetExpr::Insert(_) | ast::SetExpr::Update(_) | ast::SetExpr::Delete(_)
                    ) =>
            {
                let (ast::SetExpr::Insert(inner)
                | ast::SetExpr::Update(inner)
                | ast::SetExpr::Delete(inner)) = q.body.as_ref()
                else {
                    unreachable!("matched above")
                };
                self.modifying.allow_at_top_level();
                let pushed = self.begin_with(q.with.as_ref().expect("checked"), q)?;
                let r = self.bind_sql(inner);
                self.end_with(pushed);
                r.map(|s| self.with_modifying_ctes(s))
            }
            S::Query(q) => {
                if q.with.is_some() {
                    self.modifying.allow_at_top_level();
                }
                let stmt = match select_into_target(q) {
                    Some(into) => self.bind_select_into(q, into)?,
                    None => {
                        let (plan, columns) = self.bind_query(q)?;
                        BoundStatement::Query { plan, columns }
                    }
                };
                Ok(self.with_modifying_ctes(stmt))
            }
            S::Explain {
                describe_alias: ast::DescribeAlias::Explain,
                analyze,
                verbose,
                query_plan: false,
                estimate: false,
                statement,
                format,
                options,
            } => self.bind_explain(
                *analyze,
                *verbose,
                statement,
                format.as_ref(),
                options.as_deref(),
            ),
            S::Insert(ins) => self.bind_insert(ins),
            S::Update(u) => self.bind_update(u),
            S::Delete(d) => self.bind_delete(d),
            S::CreateTable(ct) => {
                // CREATE TABLE ... AS's query is the statement's top level.
                if ct.query.as_ref().is_some_and(|q| q.with.is_some()) {
                    self.modifying.allow_at_top_level();
                }
                let stmt = self.bind_create_table(ct)?;
                Ok(self.with_modifying_ctes(stmt))
            }
            S::CreateIndex(ci) => self.bind_create_index(ci),
            S::AlterTable(at) => self.bind_alter_table(at),
            S::CreateDatabase { db_name, .. } => Ok(BoundStatement::CreateDatabase {
                name: object_name_parts(db_name)?.join("."),
            }),
            S::CreateView(cv) => self.bind_create_view(cv),
            S::CreateFunction(cf) => self.bind_create_function(cf),
            S::DropFunction(df) => self.bind_drop_function(df),
            S::CreateType {
                name,
                representation,
            } => self.bind_create_type(name, representation.as_ref()),
            S::AlterType(at) => self.bind_alter_type(at),
            S::AlterFunction(af) => self.bind_alter_function(af),
            S::CreateSequence {
                temporary: false,
                if_not_exists,
                name,
                data_type,
                sequence_options,
                owned_by,
            } => self.bind_create_sequence(
                name,
                *if_not_exists,
                data_type.as_ref(),
                sequence_options,
                owned_by.as_ref(),
            ),
            S::CreateSchema {
                schema_name: ast::SchemaName::Simple(name),
                if_not_exists,
                or_replace: false,
                ..
            } => {
                let parts = object_name_parts(name)?;
                let [name] = <[String; 1]>::try_from(parts)
                    .map_err(|_| PgError::syntax("syntax error at or near \".\""))?;
                if name.starts_with("pg_") {
                    return Err(PgError::new(
                        SqlState::RESERVED_NAME,
                        format!("unacceptable schema name \"{name}\""),
                    )
                    .with_detail("The prefix \"pg_\" is reserved for system schemas."));
                }
                Ok(BoundStatement::CreateSchema {
                    name,
                    if_not_exists: *if_not_exists,
                })
            }
            S::Comment {
                object_type,
                object_name,
                comment,
                if_exists,
            } => self.bind_comment(object_type, object_name, comment, *if_exists),
            S::Declare { stmts } => self.bind_declare(stmts),
            S::Close { cursor } => Ok(portal::bind_close(cursor)),
            S::Prepare {
                name,
                data_types,
                statement,
            } => self.bind_prepare(name, data_types, statement),
            S::Execute {
                name,
                parameters,
                immediate,
                using,
                into,
                ..
            } => self.bind_execute(name.as_ref(), parameters, *immediate, using, into),
            S::Deallocate { name, .. } => Ok(portal::bind_deallocate(name)),
            S::LISTEN { channel } => Ok(BoundStatement::Listen(channel_name(channel))),
            S::UNLISTEN { channel } => Ok(BoundStatement::Unlisten(
                (channel.quote_style.is_some() || channel.value != "*")
                    .then(|| channel_name(channel)),
            )),
            S::NOTIFY { channel, payload } => Ok(BoundStatement::Notify {
                channel: channel_name(channel),
                payload: payload.clone().unwrap_or_default(),
            }),
            S::StartTransaction { .. } => Ok(BoundStatement::Transaction(TransactionOp::Begin(
                Default::default(),
            ))),
            S::Commit { .. } => Ok(BoundStatement::Transaction(TransactionOp::Commit {
                chain: false,
            })),
            S::Rollback {
                savepoint: None, ..
            } => Ok(BoundStatement::Transaction(TransactionOp::Rollback {
                chain: false,
            })),
            other => Err(PgError::unsupported(format!(
                "statement not supported yet: {}",
                other
                    .to_string()
                    .split_whitespace()
                    .take(3)
                    .collect::<Vec<_>>()
                    .join(" ")
            ))),
        }
    }

    /// Binds a column definition; constraints written on it (PRIMARY KEY,
    /// UNIQUE, CHECK, REFERENCES) go to `constraints` as table constraints.
    fn bind_column_def(
        &mut self,
        cd: &ast::ColumnDef,
        constraints: &mut Vec<ast::TableConstraint>,
    ) -> PgResult<Column> {
        let ty = self.bind_data_type(&cd.data_type)?;
        check_column_type(&ident_name(&cd.name), ty.id)?;
        // A domain column keeps the domain's oid; its values are the base type's.
        let domain = self.domain_named(&cd.data_type)?;
        let mut col = Column {
            name: ident_name(&cd.name),
            type_oid: domain.map_or(ty.id.oid(), |d| d.oid),
            typmod: ty.typmod,
            not_null: false,
            default: None,
            storage: None,
            compression: None,
            identity: None,
        };
        for opt in &cd.options {
            match &opt.option {
                ast::ColumnOption::Null => col.not_null = false,
                ast::ColumnOption::NotNull => col.not_null = true,
                ast::ColumnOption::Default(e) => {
                    // Validate now so errors surface at CREATE time.
                    let bound = self.bind_expr(e, &Vec::new())?;
                    self.coerce(bound, ty, CastContext::Assignment)?;
                    col.default = Some(e.to_string());
                }
                ast::ColumnOption::Generated {
                    generated_as,
                    generation_expr: None,
                    ..
                } => {
                    col.identity = Some(match generated_as {
                        ast::GeneratedAs::Always => catalog::Identity::Always,
                        _ => catalog::Identity::ByDefault,
                    });
                }
                ast::ColumnOption::Collation(name) => {
                    expr::check_collation(name)?;
                    if !ty.id.is_collatable() {
                        return Err(PgError::new(
                            SqlState::DATATYPE_MISMATCH,
                            format!("collations are not supported by type {}", format_type(ty)),
                        ));
                    }
                }
                ast::ColumnOption::PrimaryKey(_)
                | ast::ColumnOption::Unique(_)
                | ast::ColumnOption::Check(_)
                | ast::ColumnOption::ForeignKey(_) => {
                    // Bound with the table's constraints (bind_create_table).
                    if let Some(c) = constraints::column_constraint(&cd.name, opt) {
                        constraints.push(c);
                    }
                }
                other => {
                    return Err(PgError::unsupported(format!(
                        "column option not supported yet: {other}"
                    )))
                }
            }
        }
        Ok(col)
    }

    pub(super) fn bind_create_table(&mut self, ct: &ast::CreateTable) -> PgResult<BoundStatement> {
        let parts = object_name_parts(&ct.name)?;
        let (namespace, name) = if ct.temporary {
            self.temp_creation_namespace(&parts)?
        } else {
            if ct.on_commit.is_some() {
                return Err(PgError::new(
                    SqlState::INVALID_TABLE_DEFINITION,
                    "ON COMMIT can only be used on temporary tables",
                ));
            }
            self.creation_namespace(&parts)?
        };
        let on_commit = match ct.on_commit {
            None | Some(ast::OnCommit::PreserveRows) => crate::plan::OnCommit::PreserveRows,
            Some(ast::OnCommit::DeleteRows) => crate::plan::OnCommit::DeleteRows,
            Some(ast::OnCommit::Drop) => crate::plan::OnCommit::Drop,
        };
        if namespace == PG_CATALOG_NAMESPACE {
            return Err(PgError::new(
                SqlState::INSUFFICIENT_PRIVILEGE,
                format!("permission denied to create \"pg_catalog.{name}\""),
            ));
        }
        reject_unsupported_table_kind(ct)?;
        target_list::check_table_columns(ct.columns.len())?;
        let partition_of = match &ct.partition_of {
            Some(parent) => Some(self.bind_partition_of(parent, ct.for_values.as_ref())?),
            None => None,
        };
        let mut column_constraints = Vec::new();
        let mut columns = Vec::new();
        let mut sequences: Vec<catalog::Sequence> = Vec::new();
        let schema = self
            .ctx
            .catalog
            .namespaces
            .get(&namespace)
            .map_or_else(String::new, |n| n.name.clone());
        if let Some(
            ast::CreateTableLikeKind::Parenthesized(like) | ast::CreateTableLikeKind::Plain(like),
        ) = &ct.like
        {
            // LIKE: the source's column names, types and NOT NULL
            // constraints; defaults only with INCLUDING DEFAULTS.
            let source = self
                .require_table(&object_name_parts(&like.name)?)
                .map_err(|e| self.at(e, like.name.span()))?;
            let with_defaults = like.defaults == Some(ast::CreateTableLikeDefaults::Including);
            columns.extend(source.columns.iter().map(|c| Column {
                default: c.default.clone().filter(|_| with_defaults),
                ..c.clone()
            }));
        }
        if let Some((parent, _)) = &partition_of {
            // A partition has its parent's columns, NOT NULL and defaults.
            columns.extend(parent.columns.iter().cloned());
        }
        for cd in &ct.columns {
            if partition_of.is_some() {
                let c = self.bind_column_def(cd, &mut column_constraints)?;
                let Some(i) = columns.iter().position(|x| x.name == c.name) else {
                    return Err(PgError::new(
                        SqlState::UNDEFINED_COLUMN,
                        format!("column \"{}\" does not exist", c.name),
                    ));
                };
                columns[i].not_null |= c.not_null;
                if c.default.is_some() {
                    columns[i].default = c.default;
                }
                continue;
            }
            let serial = sequence::serial_type(&cd.data_type.to_string().to_lowercase());
            let c = match serial {
                None => {
                    let mut c = self.bind_column_def(cd, &mut column_constraints)?;
                    if c.identity.is_some() {
                        let taken: Vec<String> = sequences.iter().map(|q| q.name.clone()).collect();
                        let mut seq =
                            self.identity_sequence(&name, namespace, cd, &mut c, &taken)?;
                        seq.owned_by = Some((0, columns.len() as i16 + 1));
                        c.default = Some(sequence::nextval_default(&schema, &seq.name));
                        sequences.push(seq);
                    }
                    c
                }
                Some(ty) => {
                    let mut real = cd.clone();
                    real.data_type = match ty {
                        TypeId::Int2 => ast::DataType::SmallInt(None),
                        TypeId::Int4 => ast::DataType::Integer(None),
                        _ => ast::DataType::BigInt(None),
                    };
                    let mut c = self.bind_column_def(&real, &mut column_constraints)?;
                    if c.default.is_some() {
                        return Err(PgError::syntax(format!(
                            "multiple default values specified for column \"{}\" of table \"{name}\"",
                            c.name
                        )));
                    }
                    let taken: Vec<String> = sequences.iter().map(|q| q.name.clone()).collect();
                    let mut seq = self.serial_sequence(&name, namespace, &c.name, ty, &taken)?;
                    seq.owned_by = Some((0, columns.len() as i16 + 1));
                    c.not_null = true;
                    c.default = Some(sequence::nextval_default(&schema, &seq.name));
                    sequences.push(seq);
                    c
                }
            };
            if columns.iter().any(|x: &Column| x.name == c.name) {
                return Err(PgError::new(
                    SqlState::DUPLICATE_COLUMN,
                    format!("column \"{}\" specified more than once", c.name),
                ));
            }
            columns.push(c);
        }
        let source = match &ct.query {
            Some(q) => {
                let (plan, cols) = self.bind_query(q)?;
                if columns.is_empty() {
                    for c in &cols {
                        let ty = if c.ty.id == TypeId::Unknown {
                            DataType::new(TypeId::Text)
                        } else {
                            c.ty
                        };
                        check_column_type(&c.name, ty.id)?;
                        columns.push(Column {
                            name: c.name.clone(),
                            type_oid: ty.id.oid(),
                            typmod: ty.typmod,
                            not_null: false,
                            default: None,
                            storage: None,
                            compression: None,
                            identity: None,
                        });
                    }
                }
                Some((plan, cols))
            }
            None => None,
        };
        if let Some((_, cols)) = &source {
            target_list::check_table_columns(cols.len())?;
        }
        // Column constraints first, then table constraints, as PostgreSQL
        // names them in that order.
        let written: Vec<(ast::TableConstraint, bool)> = column_constraints
            .into_iter()
            .chain(ct.constraints.iter().cloned())
            .map(|c| (c, false))
            .collect();
        let constraints = self.bind_constraints(&name, None, &columns, &written)?;
        for c in &constraints {
            if let ConstraintSpecKind::PrimaryKey { keys } = &c.kind {
                for k in keys {
                    columns[k.attnum as usize - 1].not_null = true;
                }
            }
        }
        if constraints
            .iter()
            .filter(|c| matches!(c.kind, ConstraintSpecKind::PrimaryKey { .. }))
            .count()
            > 1
        {
            return Err(PgError::new(
                SqlState::INVALID_TABLE_DEFINITION,
                format!("multiple primary keys for table \"{name}\" are not allowed"),
            ));
        }
        let key = match &ct.partition_by {
            Some(spec) => {
                let key = self.bind_partition_by(&name, spec, &columns)?;
                partition::check_unique_covers_key(&name, &key, &columns, &constraints)?;
                Some(key)
            }
            None => None,
        };
        let partitioning = (key.is_some() || partition_of.is_some()).then(|| {
            Box::new(partition::PartitionSpec {
                key,
                parent: partition_of,
            })
        });
        Ok(BoundStatement::CreateTable {
            partitioning,
            name,
            namespace,
            columns,
            if_not_exists: ct.if_not_exists,
            source,
            sequences,
            constraints,
            on_commit,
        })
    }

    fn bind_create_view(&mut self, cv: &ast::CreateView) -> PgResult<BoundStatement> {
        if cv.materialized || cv.temporary {
            return Err(PgError::unsupported(
                "materialized and temporary views are not supported yet",
            ));
        }
        let parts = object_name_parts(&cv.name)?;
        let (namespace, name) = self.creation_namespace(&parts)?;
        if namespace == PG_CATALOG_NAMESPACE {
            return Err(PgError::new(
                SqlState::INSUFFICIENT_PRIVILEGE,
                format!("permission denied to create \"pg_catalog.{name}\""),
            ));
        }
        let (_, output) = self.bind_view_query(&cv.query)?;
        if cv.columns.len() > output.len() {
            return Err(PgError::syntax(
                "CREATE VIEW specifies more column names than columns",
            ));
        }
        let mut columns: Vec<Column> = Vec::new();
        for (i, c) in output.iter().enumerate() {
            let name = cv
                .columns
                .get(i)
                .map_or_else(|| c.name.clone(), |d| ident_name(&d.name));
            if columns.iter().any(|x| x.name == name) {
                return Err(PgError::new(
                    SqlState::DUPLICATE_COLUMN,
                    format!("column \"{name}\" specified more than once"),
                ));
            }
            // An untyped literal's column is text, as PostgreSQL 15 makes it.
            let ty = if c.ty.id == TypeId::Unknown {
                DataType::new(TypeId::Text)
            } else {
                c.ty
            };
            check_column_type(&name, ty.id)?;
            columns.push(Column {
                name,
                type_oid: ty.id.oid(),
                typmod: ty.typmod,
                not_null: false,
                default: None,
                storage: None,
                compression: None,
                identity: None,
            });
        }
        target_list::check_table_columns(columns.len())?;
        Ok(BoundStatement::CreateView {
            name,
            namespace,
            query: cv.query.to_string(),
            columns,
            replace: cv.or_replace,
        })
    }

    /// Binds a view's query on its own: no outer query's columns are in
    /// scope and no parameters may appear.
    pub(crate) fn bind_view_query(
        &mut self,
        q: &ast::Query,
    ) -> PgResult<(Plan, Vec<OutputColumn>)> {
        if cte::with_modifies(q) {
            return Err(PgError::new(
                SqlState::FEATURE_NOT_SUPPORTED,
                "views must not contain data-modifying statements in WITH",
            ));
        }
        let mut inner = Binder::new(&mut *self.ctx);
        inner.system_use = system_columns::SystemColumnUse::of(q);
        inner.bind_query(q)
    }

    pub(crate) fn table_scope(table: &Table, alias: Option<&str>) -> Scope {
        table
            .columns
            .iter()
            .enumerate()
            .map(|(i, c)| ScopeColumn {
                qualifier: Some(alias.unwrap_or(&table.name).to_string()),
                name: c.name.clone(),
                ty: c.data_type(),
                table_oid: table.oid,
                attnum: i as i16 + 1,
                hidden: false,
            })
            .collect()
    }

    /// The DEFAULT of column `i` (NULL when none), coerced to the column type.
    pub(crate) fn column_default(&mut self, table: &Table, i: usize) -> PgResult<Expr> {
        let col = &table.columns[i];
        let value = match &self.effective_default(col) {
            None => Expr::Const(Value::Null, col.data_type()),
            Some(text) => {
                let dialect = sqlparser::dialect::PostgreSqlDialect {};
                let e = sqlparser::parser::Parser::new(&dialect)
                    .try_with_sql(text)
                    .and_then(|mut p| p.parse_expr())
                    .map_err(|e| {
                        PgError::internal(format!("stored default does not parse: {e}"))
                    })?;
                let bound = self.bind_expr(&e, &Vec::new())?;
                self.coerce(bound, col.data_type(), CastContext::Assignment)?
            }
        };
        match self.column_domain(col) {
            Some(d) => self.check_domain(value, &d),
            None => Ok(value),
        }
    }

    fn bind_returning(
        &mut self,
        items: &Option<Vec<ast::SelectItem>>,
        scope: &Scope,
    ) -> PgResult<Option<(Vec<Expr>, Vec<OutputColumn>)>> {
        let Some(items) = items else { return Ok(None) };
        let (exprs, cols) = self.bind_select_list(items, scope)?;
        for e in &exprs {
            modify::no_aggregates(e, "RETURNING")?;
        }
        Ok(Some((exprs, cols)))
    }

    fn bind_insert(&mut self, ins: &ast::Insert) -> PgResult<BoundStatement> {
        let ast::TableObject::TableName(name) = &ins.table else {
            return Err(PgError::unsupported("INSERT into a table function"));
        };
        let table = self
            .require_table(&object_name_parts(name)?)
            .map_err(|e| self.at(e, ast::Spanned::span(name)))?;
        let alias = ins.table_alias.as_ref().map(|a| ident_name(&a.alias));
        let on_conflict = match &ins.on {
            None => None,
            Some(ast::OnInsert::OnConflict(oc)) => Some(Box::new(self.bind_on_conflict(
                oc,
                &table,
                alias.as_deref(),
            )?)),
            Some(_) => return Err(PgError::unsupported("INSERT ... ON DUPLICATE KEY UPDATE")),
        };
        // Target column index for each source position.
        let targets: Vec<usize> = if ins.columns.is_empty() {
            // Without a column list, fewer values fill the leading columns.
            let n = match ins.source.as_ref().map(|s| s.body.as_ref()) {
                Some(ast::SetExpr::Values(v)) => v.rows.first().map_or(0, |r| r.len()),
                _ => table.columns.len(),
            };
            (0..n.min(table.columns.len())).collect()
        } else {
            let mut v = Vec::new();
            for c in &ins.columns {
                let (i, cname) = self.target_column(&table, c)?;
                if v.contains(&i) {
                    return Err(PgError::new(
                        SqlState::DUPLICATE_COLUMN,
                        format!("column \"{cname}\" specified more than once"),
                    ));
                }
                v.push(i);
            }
            v
        };
        let types = table.column_types();
        let source = ins
            .source
            .as_ref()
            .ok_or_else(|| PgError::unsupported("INSERT without a source"))?;
        let width = table.columns.len();
        let srf_row = match source.body.as_ref() {
            ast::SetExpr::Values(v) if v.rows.len() == 1 => self.bind_srf_row(&v.rows[0])?,
            _ => None,
        };
        let plan = match source.body.as_ref() {
            ast::SetExpr::Values(values)
                if srf_row.is_none()
                    && source.order_by.is_none()
                    && source.limit_clause.is_none() =>
            {
                let mut rows = Vec::with_capacity(values.rows.len());
                for row in &values.rows {
                    if row.len() > targets.len() {
                        let err =
                            PgError::syntax("INSERT has more expressions than target columns");
                        return Err(self.at(err, row[targets.len()].span()));
                    }
                    if row.len() < targets.len() {
                        let err =
                            PgError::syntax("INSERT has more target columns than expressions");
                        return Err(match ins.columns.get(row.len()) {
                            Some(c) => self.at(err, c.span()),
                            None => err,
                        });
                    }
                    let mut out: Vec<Option<Expr>> = vec![None; width];
                    for (e, &t) in row.iter().zip(&targets) {
                        let bound = if is_default_keyword(e) {
                            self.column_default(&table, t)?
                        } else {
                            identity::refuse_insert_into(&table, t)?;
                            let b = self.in_window_context(Some("VALUES"), |x| {
                                x.bind_expr(e, &Vec::new())
                            })?;
                            self.assign_to_column(b, &table, t)
                                .map_err(|err| self.locate(err, e))?
                        };
                        out[t] = Some(bound);
                    }
                    let mut full = Vec::with_capacity(width);
                    for (i, o) in out.into_iter().enumerate() {
                        full.push(match o {
                            Some(e) => e,
                            None => self.column_default(&table, i)?,
                        });
                    }
                    rows.push(full);
                }
                Plan::Values { rows, width }
            }
            _ => {
                let (plan, cols) = match srf_row {
                    Some(pc) => pc,
                    None => {
                        // ORDER BY, DISTINCT and GROUP BY resolve them to
                        // text first, as in PostgreSQL.
                        self.keep_unknown_outputs = source.order_by.is_none()
                            && matches!(source.body.as_ref(), ast::SetExpr::Select(s)
                                if s.distinct.is_none()
                                    && matches!(&s.group_by, ast::GroupByExpr::Expressions(g, _) if g.is_empty()));
                        let bound = self.bind_query(source);
                        self.keep_unknown_outputs = false;
                        bound?
                    }
                };
                if cols.len() > targets.len() && !ins.columns.is_empty() {
                    return Err(PgError::syntax(
                        "INSERT has more expressions than target columns",
                    ));
                }
                if cols.len() > width {
                    return Err(PgError::syntax(
                        "INSERT has more expressions than target columns",
                    ));
                }
                let (plan, cols) = self.coerce_unknown_outputs(plan, cols, source, |k| {
                    targets
                        .get(k)
                        .map(|&t| (types[t], table.columns[t].name.as_str()))
                })?;
                let mut out: Vec<Option<Expr>> = vec![None; width];
                for (k, (c, &t)) in cols.iter().zip(&targets).enumerate() {
                    identity::refuse_insert_into(&table, t)?;
                    let e = Expr::Column(k, c.ty);
                    out[t] = Some(self.assign_to_column(e, &table, t)?);
                }
                let mut exprs = Vec::with_capacity(width);
                for (i, o) in out.into_iter().enumerate() {
                    exprs.push(match o {
                        Some(e) => e,
                        None => self.column_default(&table, i)?,
                    });
                }
                Plan::Project {
                    input: Box::new(plan),
                    exprs,
                }
            }
        };
        let scope = self.insert_returning_scope(&table, alias.as_deref(), ins.on.is_some());
        let returning = self.bind_returning(&ins.returning, &scope)?;
        Ok(BoundStatement::Insert {
            table,
            source: plan,
            returning,
            // PostgreSQL uses the bulk-write ring for COPY and CREATE TABLE AS
            // only; INSERT ... SELECT leaves its pages in the pool.
            bulk: false,
            on_conflict,
        })
    }
}

impl Binder<'_, '_> {
    /// INSERT … SELECT: the SELECT's untyped literals (left unknown) take
    /// the types of the columns they fill, folded now as PostgreSQL does, so
    /// a bad literal fails before anything runs and points at itself.
    /// `target(k)` is output `k`'s column type and name.
    fn coerce_unknown_outputs<'t>(
        &mut self,
        mut plan: Plan,
        mut cols: Vec<OutputColumn>,
        source: &ast::Query,
        target: impl Fn(usize) -> Option<(DataType, &'t str)>,
    ) -> PgResult<(Plan, Vec<OutputColumn>)> {
        let items = match source.body.as_ref() {
            ast::SetExpr::Select(s) => Some(&s.projection),
            _ => None,
        };
        // Select items match outputs one to one only without a `*`.
        let item_expr = |k: usize| -> Option<&ast::Expr> {
            let items = items?;
            if items.iter().any(|i| {
                !matches!(
                    i,
                    ast::SelectItem::UnnamedExpr(_) | ast::SelectItem::ExprWithAlias { .. }
                )
            }) {
                return None;
            }
            match items.get(k)? {
                ast::SelectItem::UnnamedExpr(e)
                | ast::SelectItem::ExprWithAlias { expr: e, .. } => Some(e),
                _ => None,
            }
        };
        if let Plan::Project { exprs, .. } = &mut plan {
            for (k, c) in cols.iter_mut().enumerate() {
                let Some((ty, name)) = target(k).filter(|_| c.ty.id == TypeId::Unknown) else {
                    continue;
                };
                let e = std::mem::replace(&mut exprs[k], Expr::Const(Value::Null, ty));
                exprs[k] = self
                    .coerce_assign(e, ty, name)
                    .map_err(|err| match item_expr(k) {
                        Some(e) => self.locate(err, e),
                        None => err,
                    })?;
                c.ty = ty;
            }
        }
        Ok((plan, cols))
    }
}

pub(super) fn is_default_keyword(e: &ast::Expr) -> bool {
    matches!(e, ast::Expr::Identifier(i) if i.quote_style.is_none() && i.value.eq_ignore_ascii_case("default"))
}

/// Splits a boolean expression at top-level ANDs.
pub(crate) fn split_conjuncts(e: Expr) -> Vec<Expr> {
    match e {
        Expr::And(v) => v.into_iter().flat_map(split_conjuncts).collect(),
        other => vec![other],
    }
}

/// Refuses the CREATE TABLE forms whose meaning we do not implement, so
/// they fail instead of creating an ordinary table that looks right:
/// inheritance (`INHERITS`). UNLOGGED is accepted: the table is an
/// ordinary, WAL-logged one (relpersistence `p`), which keeps every
/// promise an unlogged table makes.
fn reject_unsupported_table_kind(ct: &ast::CreateTable) -> PgResult<()> {
    if ct.partition_of.is_some() && ct.query.is_some() {
        return Err(PgError::syntax("syntax error at or near \"AS\""));
    }
    if ct
        .inherits
        .as_ref()
        .is_some_and(|parents| !parents.is_empty())
    {
        return Err(PgError::unsupported("table inheritance is not supported"));
    }
    Ok(())
}

/// Types no table column may have: record (a pseudo-type, 42P16, as
/// PostgreSQL) and those storage does not hold yet ("char").
fn check_column_type(name: &str, ty: TypeId) -> PgResult<()> {
    match ty {
        TypeId::Record | TypeId::RecordArray => Err(PgError::new(
            SqlState::INVALID_TABLE_DEFINITION,
            format!("column \"{name}\" has pseudo-type {}", ty.display_name()),
        )),
        TypeId::Char => Err(PgError::unsupported(
            "type \"char\" is not supported for table columns yet",
        )),
        _ => Ok(()),
    }
}
