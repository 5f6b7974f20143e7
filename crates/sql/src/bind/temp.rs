//! Temporary relations' names: the session's temporary schema (`pg_temp_N`,
//! `BindContext::temp_namespace`) and its alias `pg_temp`, as PostgreSQL's
//! namespace rules have them. The session puts its temporary schema into
//! the search path it hands the binder (first, or where `pg_temp` stands),
//! so unqualified names find temporary relations first; here are the rules
//! for qualified names and for where a temporary relation is created.

use catalog::{is_temp_schema_name, Namespace};
use common::{Oid, PgError, PgResult, SqlState};

use super::Binder;

/// PostgreSQL's 0A000 for a name in another session's temporary schema.
fn other_sessions_temp() -> PgError {
    PgError::new(
        SqlState::FEATURE_NOT_SUPPORTED,
        "cannot access temporary tables of other sessions",
    )
}

impl Binder<'_, '_> {
    /// pg_my_temp_schema(): the session's temporary schema, 0 before it has one.
    pub(crate) fn my_temp_schema(&self) -> crate::expr::Expr {
        let oid = self.ctx.temp_namespace.unwrap_or(0);
        crate::expr::Expr::Const(::types::Value::Oid(oid), ::types::TypeId::Oid.into())
    }

    /// The schema a qualified relation name names: `pg_temp` is this
    /// session's temporary schema (None before it has one); another
    /// session's temporary schema is refused.
    pub(crate) fn relation_schema(&self, name: &str) -> PgResult<Option<&Namespace>> {
        let cat = self.ctx.catalog;
        if name == "pg_temp" {
            return Ok(self
                .ctx
                .temp_namespace
                .and_then(|oid| cat.namespaces.get(&oid)));
        }
        let ns = cat.namespace_by_name(self.ctx.db_oid, name);
        if let Some(ns) = ns {
            if ns.is_temp() && Some(ns.oid) != self.ctx.temp_namespace {
                return Err(other_sessions_temp());
            }
        }
        Ok(ns)
    }

    /// Where CREATE TEMP puts relation `parts`: the session's temporary
    /// schema (the session creates it before binding such a statement).
    /// A schema other than `pg_temp` or the session's own is 42P16.
    pub(crate) fn temp_creation_namespace(&self, parts: &[String]) -> PgResult<(Oid, String)> {
        let name = match parts {
            [name] => name,
            [schema, name] | [_, schema, name] => {
                if schema != "pg_temp" && !is_temp_schema_name(schema) {
                    // A missing schema is named first, as PostgreSQL does.
                    self.namespace_oid(schema)?;
                    return Err(PgError::new(
                        SqlState::INVALID_TABLE_DEFINITION,
                        "cannot create temporary relation in non-temporary schema",
                    ));
                }
                self.relation_schema(schema)?;
                name
            }
            _ => {
                return Err(PgError::syntax(
                    "improper qualified name (too many dotted names)",
                ))
            }
        };
        let oid = self
            .ctx
            .temp_namespace
            .ok_or_else(|| PgError::internal("the session has no temporary schema to create in"))?;
        Ok((oid, name.clone()))
    }
}
