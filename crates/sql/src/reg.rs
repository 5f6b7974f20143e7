//! Input and output of the reg* types (regclass, regtype, regproc,
//! regprocedure, regnamespace, regrole): an object's name to its oid and
//! back, against a catalog snapshot. The binder resolves literals with it
//! (`'t'::regclass`), the executor casts at run time and the server prints
//! result columns of these types with it, as PostgreSQL's regclassin /
//! regclassout and friends do through the syscache.

use catalog::CatalogData;
use common::{Oid, PgError, PgResult, SqlState};
use types::functions::{builtin_by_oid, builtins, ident_needs_quotes, FIRST_BUILTIN_OID};
use types::io::{reg_not_found, reg_numeric};
use types::{DataType, TypeId};

use crate::bind::{format_type, parse_type_name, SystemViews};

/// PostgreSQL 15's predefined roles: no login, members-only; they exist so
/// that `pg_get_userbyid`, `regrole` and pg_roles know the names PostgreSQL
/// uses (pg_database_owner owns the public schema).
pub const PREDEFINED_ROLES: &[(Oid, &str)] = &[
    (3373, "pg_monitor"),
    (3374, "pg_read_all_settings"),
    (3375, "pg_read_all_stats"),
    (3377, "pg_stat_scan_tables"),
    (4200, "pg_signal_backend"),
    (4544, "pg_checkpoint"),
    (4569, "pg_read_server_files"),
    (4570, "pg_write_server_files"),
    (4571, "pg_execute_server_program"),
    (6171, "pg_database_owner"),
    (6181, "pg_read_all_data"),
    (6182, "pg_write_all_data"),
];

/// pg_database_owner: the owner of the public schema in PostgreSQL 15.
pub const PG_DATABASE_OWNER: Oid = 6171;

/// Where reg* names are looked up.
pub struct RegCatalog<'a> {
    pub catalog: &'a CatalogData,
    pub db_oid: Oid,
    /// Schemas searched for unqualified relation names.
    pub search_path: Vec<&'a str>,
    /// pg_catalog's system views, which have PostgreSQL's oids.
    pub system_views: Option<&'a dyn SystemViews>,
}

/// A role's name by oid: catalog roles and the predefined ones.
pub fn role_name(catalog: &CatalogData, oid: Oid) -> Option<&str> {
    catalog
        .roles
        .get(&oid)
        .map(|r| r.name.as_str())
        .or_else(|| {
            PREDEFINED_ROLES
                .iter()
                .find(|(o, _)| *o == oid)
                .map(|(_, n)| *n)
        })
}

/// A built-in function's name and argument types by its pg_proc oid.
pub fn builtin_function(oid: Oid) -> Option<(&'static str, &'static [TypeId])> {
    builtin_by_oid(oid).map(|f| (f.name, f.arg_types))
}

fn quote(name: &str) -> String {
    if ident_needs_quotes(name) {
        format!("\"{}\"", name.replace('"', "\"\""))
    } else {
        name.to_string()
    }
}

/// Splits a possibly qualified, possibly quoted name as the parser would:
/// unquoted parts fold to lower case.
fn name_parts(s: &str) -> Vec<String> {
    let mut parts = Vec::new();
    let mut cur = String::new();
    let mut chars = s.trim().chars().peekable();
    let mut quoted = false;
    while let Some(c) = chars.next() {
        match c {
            '"' if quoted && chars.peek() == Some(&'"') => {
                chars.next();
                cur.push('"');
            }
            '"' => quoted = !quoted,
            '.' if !quoted => parts.push(std::mem::take(&mut cur)),
            c if quoted => cur.push(c),
            c => cur.push(c.to_ascii_lowercase()),
        }
    }
    parts.push(cur);
    parts
}

impl RegCatalog<'_> {
    /// A user-defined type (`mood`, `s.mood`, `mood[]`) by name.
    fn user_type_oid(&self, s: &str) -> Option<Oid> {
        let (name, array) = match s.trim().strip_suffix("[]") {
            Some(elem) => (elem, true),
            None => (s, false),
        };
        let mut parts = name_parts(name);
        let name = parts.pop()?;
        let t = match parts.as_slice() {
            [] => self.search_path.iter().find_map(|schema| {
                let ns = self.catalog.namespace_by_name(self.db_oid, schema)?;
                self.catalog.user_type_by_name(self.db_oid, ns.oid, &name)
            }),
            [schema] => {
                let ns = self.catalog.namespace_by_name(self.db_oid, schema)?;
                self.catalog.user_type_by_name(self.db_oid, ns.oid, &name)
            }
            _ => None,
        }?;
        Some(if array { t.array_oid } else { t.oid })
    }

    /// reg* input: a number is taken as the oid itself, `-` is oid 0, a name
    /// must exist (PostgreSQL's errors otherwise).
    pub fn input(&self, ty: TypeId, s: &str) -> PgResult<Oid> {
        if let Some(oid) = reg_numeric(s) {
            return oid;
        }
        if s.trim() == "-" {
            return Ok(0);
        }
        let found = match ty {
            TypeId::RegClass => self.relation_oid(s)?,
            TypeId::RegType => parse_type_name(s)
                .ok()
                .map(|t| t.id.oid())
                .or_else(|| self.user_type_oid(s)),
            TypeId::RegNamespace => self.namespace(s),
            TypeId::RegRole => {
                let name = name_parts(s).pop().unwrap_or_default();
                self.catalog.role_by_name(&name).map(|r| r.oid).or_else(|| {
                    PREDEFINED_ROLES
                        .iter()
                        .find(|(_, n)| *n == name)
                        .map(|(o, _)| *o)
                })
            }
            TypeId::RegProc => self.function_by_name(s)?,
            TypeId::RegProcedure => self.function_by_signature(s)?,
            _ => None,
        };
        found.ok_or_else(|| reg_not_found(ty, s))
    }

    fn namespace(&self, s: &str) -> Option<Oid> {
        let name = name_parts(s).pop().unwrap_or_default();
        self.catalog
            .namespace_by_name(self.db_oid, &name)
            .map(|n| n.oid)
    }

    fn relation_oid(&self, s: &str) -> PgResult<Option<Oid>> {
        let parts = name_parts(s);
        let (schemas, name): (Vec<&str>, &str) = match parts.as_slice() {
            [name] => (
                std::iter::once("pg_catalog")
                    .chain(self.search_path.iter().copied())
                    .collect(),
                name,
            ),
            [schema, name] | [_, schema, name] => (vec![schema.as_str()], name),
            _ => {
                return Err(PgError::syntax(format!(
                    "improper relation name (too many dotted names): {s}"
                )))
            }
        };
        for schema in schemas {
            if schema == "pg_catalog" || schema == "information_schema" {
                if let Some(view) = self.system_views.and_then(|v| v.lookup(schema, name)) {
                    if view.oid != 0 {
                        return Ok(Some(view.oid));
                    }
                }
            }
            let Some(ns) = self.catalog.namespace_by_name(self.db_oid, schema) else {
                if parts.len() > 1 {
                    return Err(PgError::new(
                        SqlState::INVALID_SCHEMA_NAME,
                        format!("schema \"{schema}\" does not exist"),
                    ));
                }
                continue;
            };
            if let Some(oid) = self.catalog.relation_oid(self.db_oid, ns.oid, name) {
                return Ok(Some(oid));
            }
        }
        Ok(None)
    }

    fn function_by_name(&self, s: &str) -> PgResult<Option<Oid>> {
        let name = name_parts(s).pop().unwrap_or_default();
        let mut matches: Vec<Oid> = builtins()
            .enumerate()
            .filter(|(_, f)| f.name == name)
            .map(|(i, _)| FIRST_BUILTIN_OID + i as Oid)
            .collect();
        matches.extend(types::io_functions::io_function_by_name(&name).map(|f| f.oid));
        if matches.len() > 1 {
            return Err(PgError::new(
                SqlState::AMBIGUOUS_FUNCTION,
                format!("more than one function named \"{s}\""),
            ));
        }
        Ok(matches.first().copied())
    }

    fn function_by_signature(&self, s: &str) -> PgResult<Option<Oid>> {
        let Some((name, args)) = s.trim().strip_suffix(')').and_then(|r| r.split_once('(')) else {
            return Err(PgError::new(
                SqlState::INVALID_TEXT_REPRESENTATION,
                "expected a left parenthesis",
            ));
        };
        let name = name_parts(name).pop().unwrap_or_default();
        let wanted: Vec<TypeId> = args
            .split(',')
            .map(str::trim)
            .filter(|a| !a.is_empty())
            .map(|a| parse_type_name(a).map(|t| t.id))
            .collect::<PgResult<_>>()?;
        Ok(builtins()
            .position(|f| f.name == name && f.arg_types == wanted.as_slice())
            .map(|i| FIRST_BUILTIN_OID + i as Oid))
    }

    /// reg* output: the object's name (qualified where it would not be found
    /// unqualified), `-` for oid 0, the number for an oid naming nothing.
    pub fn output(&self, ty: TypeId, oid: Oid) -> String {
        if oid == 0 {
            return "-".into();
        }
        let name = match ty {
            TypeId::RegClass => self.relation_name(oid),
            TypeId::RegType => TypeId::from_oid(oid).map(|t| format_type(DataType::new(t))),
            TypeId::RegNamespace => self.catalog.namespaces.get(&oid).map(|n| quote(&n.name)),
            TypeId::RegRole => role_name(self.catalog, oid).map(quote),
            TypeId::RegProc => builtin_function(oid)
                .map(|(name, _)| name)
                .or_else(|| types::io_functions::io_function_by_oid(oid).map(|f| f.name))
                .map(quote),
            TypeId::RegProcedure => builtin_function(oid).map(|(name, args)| {
                let args: Vec<String> = args
                    .iter()
                    .map(|t| format_type(DataType::new(*t)))
                    .collect();
                format!("{}({})", quote(name), args.join(","))
            }),
            _ => None,
        };
        name.unwrap_or_else(|| oid.to_string())
    }

    fn relation_name(&self, oid: Oid) -> Option<String> {
        if let Some((name, namespace, db)) = self.catalog.relation_by_oid(oid) {
            let ns = self.catalog.namespaces.get(&namespace)?;
            let visible = ns.name == "pg_catalog"
                || self.search_path.contains(&ns.name.as_str())
                    && self
                        .search_path
                        .iter()
                        .take_while(|s| **s != ns.name)
                        .filter_map(|s| self.catalog.namespace_by_name(self.db_oid, s))
                        .all(|earlier| !self.catalog.relation_exists(db, earlier.oid, name));
            return Some(if visible {
                quote(name)
            } else {
                format!("{}.{}", quote(&ns.name), quote(name))
            });
        }
        self.system_views.and_then(|v| v.name_by_oid(oid))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_split_like_identifiers() {
        assert_eq!(name_parts("Public.T"), vec!["public", "t"]);
        assert_eq!(name_parts("\"My\"\"T\".x"), vec!["My\"T", "x"]);
    }
}
