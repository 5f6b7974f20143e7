//! Domains in statements: CREATE DOMAIN and ALTER DOMAIN, and the checks
//! of a value coerced to a domain. A domain is its base type to everything
//! below the binder; assignments to a domain column and casts to a domain
//! wrap the value in `Expr::DomainCheck` (NOT NULL and the CHECKs).

use std::sync::Arc;

use ::types::DataType;
use catalog::domains::{Domain, DomainCheck as CatalogCheck};
use catalog::user_types::UserType;
use catalog::{Column, Table};
use common::{PgError, PgResult, SqlState};
use sqlparser::ast;

use super::{object_name_parts, Binder, ScopeColumn};
use crate::domain_stmt::{DomainAlteration, DomainCheckDef, DomainStatement};
use crate::expr::{DomainCheck, Expr};
use crate::plan::{BoundStatement, DomainValidation};
use ::types::cast::CastContext;

/// Oids from here on are user objects'; below them no type is a domain.
const FIRST_USER_OID: u32 = 16384;

impl Binder<'_, '_> {
    /// The domain a type name names (None for any other type).
    pub(crate) fn domain_named(&self, dt: &ast::DataType) -> PgResult<Option<Arc<UserType>>> {
        let ast::DataType::Custom(name, modifiers) = dt else {
            return Ok(None);
        };
        if !modifiers.is_empty() || super::types::parse_type_name(&dt.to_string()).is_ok() {
            return Ok(None);
        }
        Ok(self
            .lookup_user_type(&object_name_parts(name)?)?
            .filter(|t| t.domain.is_some()))
    }

    /// The domain column `col` is declared with (no lookup for built-in types).
    pub(crate) fn column_domain(&self, col: &Column) -> Option<Arc<UserType>> {
        if col.type_oid < FIRST_USER_OID {
            return None;
        }
        self.ctx
            .catalog
            .user_type(col.type_oid)
            .filter(|t| t.domain.is_some())
            .cloned()
    }

    /// `e` (already of the base type) checked against domain `ty` and the
    /// domains it is based on: as PostgreSQL, the base domains' checks run
    /// first (each domain's in name order), and every failure names `ty`.
    pub(crate) fn check_domain(&mut self, e: Expr, ty: &UserType) -> PgResult<Expr> {
        let value_type = e.data_type();
        let mut levels = Vec::new();
        let mut level = Some(Arc::new(ty.clone()));
        while let Some(t) = level {
            let Some(d) = t.domain.as_ref() else { break };
            level = self.ctx.catalog.user_type(d.base_oid).cloned();
            levels.push(t);
        }
        let mut not_null = false;
        let mut checks = Vec::new();
        for t in levels.iter().rev() {
            let d = t.domain.as_ref().expect("only domains are levels");
            not_null |= d.not_null;
            let mut sorted: Vec<&CatalogCheck> = d.checks.iter().collect();
            sorted.sort_by(|a, b| a.name.as_bytes().cmp(b.name.as_bytes()));
            for c in sorted {
                let parsed = super::constraints::parse_stored_expr(&c.expr, "domain check")?;
                checks.push((c.name.clone(), self.bind_value_check(&parsed, value_type)?));
            }
        }
        if !not_null && checks.is_empty() {
            return Ok(e);
        }
        Ok(Expr::DomainCheck(Box::new(DomainCheck {
            arg: e,
            domain: ty.name.clone(),
            not_null,
            checks,
        })))
    }

    /// A CHECK expression reading the value as VALUE (column 0).
    fn bind_value_check(&mut self, e: &ast::Expr, value_type: DataType) -> PgResult<Expr> {
        let scope = vec![ScopeColumn::derived(None, "value".into(), value_type)];
        self.bind_check_expr(e, &scope)
    }

    /// An assignment to column `i` of `table`: coerced to its type, and
    /// checked when that is a domain.
    pub(crate) fn assign_to_column(&mut self, e: Expr, table: &Table, i: usize) -> PgResult<Expr> {
        let col = &table.columns[i];
        let e = self.coerce_assign(e, col.data_type(), &col.name)?;
        match self.column_domain(col) {
            Some(d) => self.check_domain(e, &d),
            None => Ok(e),
        }
    }

    /// The DEFAULT a column takes: its own, else its domain's.
    pub(crate) fn effective_default(&self, col: &Column) -> Option<String> {
        col.default.clone().or_else(|| {
            let d = self.column_domain(col)?;
            self.domain_default(&d)
        })
    }

    /// A domain's default, or the one of the domain it is based on.
    fn domain_default(&self, ty: &UserType) -> Option<String> {
        let d = ty.domain.as_ref()?;
        d.default.clone().or_else(|| {
            let base = self.ctx.catalog.user_type(d.base_oid)?;
            self.domain_default(base)
        })
    }

    pub(super) fn bind_domain_statement(&mut self, s: DomainStatement) -> PgResult<BoundStatement> {
        match s {
            DomainStatement::Create {
                name,
                data_type,
                default,
                not_null,
                checks,
            } => self.bind_create_domain(&name, &data_type, default.as_ref(), not_null, checks),
            DomainStatement::Alter { name, action } => self.bind_alter_domain(&name, action),
        }
    }

    fn bind_create_domain(
        &mut self,
        name: &ast::ObjectName,
        data_type: &ast::DataType,
        default: Option<&ast::Expr>,
        not_null: Option<bool>,
        checks: Vec<DomainCheckDef>,
    ) -> PgResult<BoundStatement> {
        let (namespace, name) = self.new_type_name(name)?;
        let base = self.bind_data_type(data_type)?;
        let base_oid = match self.domain_named(data_type)? {
            Some(d) => d.oid,
            None => base.id.oid(),
        };
        let mut domain = Domain {
            base_oid,
            base_typmod: base.typmod,
            not_null: not_null.unwrap_or(false),
            default: None,
            checks: Vec::new(),
        };
        if let Some(e) = default {
            domain.default = Some(self.bind_domain_default(e, base)?);
        }
        for c in checks {
            let check = self.bind_new_check(&name, &domain, c, base)?;
            domain.checks.push(check);
        }
        Ok(BoundStatement::CreateDomain {
            namespace,
            name,
            domain,
        })
    }

    /// A DEFAULT checked now (its type, no column references), kept as text.
    fn bind_domain_default(&mut self, e: &ast::Expr, base: DataType) -> PgResult<String> {
        let bound = self.bind_expr(e, &Vec::new())?;
        self.coerce(bound, base, CastContext::Assignment)?;
        Ok(e.to_string())
    }

    /// A CHECK being added: bound to validate it, named `<domain>_check`
    /// (then `_check1`, ...) unless named.
    fn bind_new_check(
        &mut self,
        domain_name: &str,
        domain: &Domain,
        c: DomainCheckDef,
        base: DataType,
    ) -> PgResult<CatalogCheck> {
        self.bind_value_check(&c.expr, base)?;
        let taken = |n: &str| domain.checks.iter().any(|k| k.name == n);
        let name = match c.name {
            Some(n) => {
                if taken(&n) {
                    return Err(PgError::new(
                        SqlState::DUPLICATE_OBJECT,
                        format!("constraint \"{n}\" for domain \"{domain_name}\" already exists"),
                    ));
                }
                n
            }
            None => {
                let stem = format!("{domain_name}_check");
                let mut n = stem.clone();
                let mut k = 0;
                while taken(&n) {
                    k += 1;
                    n = format!("{stem}{k}");
                }
                n
            }
        };
        Ok(CatalogCheck {
            oid: 0,
            name,
            expr: c.expr.to_string(),
        })
    }

    fn bind_alter_domain(
        &mut self,
        name: &ast::ObjectName,
        action: DomainAlteration,
    ) -> PgResult<BoundStatement> {
        let parts = object_name_parts(name)?;
        let joined = parts.join(".");
        let ty = match self.lookup_user_type(&parts)? {
            Some(t) if t.domain.is_some() => t,
            Some(_) => {
                return Err(PgError::new(
                    SqlState::WRONG_OBJECT_TYPE,
                    format!("{joined} is not a domain"),
                ))
            }
            None if super::types::parse_type_name(&joined).is_ok() => {
                let builtin = super::types::parse_type_name(&joined)?;
                return Err(PgError::new(
                    SqlState::WRONG_OBJECT_TYPE,
                    format!("{} is not a domain", super::types::format_type(builtin)),
                ));
            }
            None => {
                return Err(PgError::new(
                    SqlState::UNDEFINED_OBJECT,
                    format!("type \"{joined}\" does not exist"),
                ))
            }
        };
        let mut domain = ty.domain.clone().expect("checked above");
        let base = DataType::with_typmod(ty.type_id(), domain.base_typmod);
        let mut validate = None;
        let mut notice = None;
        match action {
            DomainAlteration::SetDefault(e) => {
                domain.default = Some(self.bind_domain_default(&e, base)?)
            }
            DomainAlteration::DropDefault => domain.default = None,
            DomainAlteration::DropNotNull => domain.not_null = false,
            DomainAlteration::SetNotNull => {
                if !domain.not_null {
                    domain.not_null = true;
                    validate = Some(self.domain_validation(&ty, true, Vec::new()));
                }
            }
            DomainAlteration::AddCheck(c) => {
                let check = self.bind_new_check(&ty.name, &domain, c, base)?;
                let parsed = super::constraints::parse_stored_expr(&check.expr, "domain check")?;
                let bound = self.bind_value_check(&parsed, base)?;
                validate =
                    Some(self.domain_validation(&ty, false, vec![(check.name.clone(), bound)]));
                domain.checks.push(check);
            }
            DomainAlteration::DropConstraint { name, if_exists } => {
                let before = domain.checks.len();
                domain.checks.retain(|c| c.name != name);
                if domain.checks.len() == before {
                    if !if_exists {
                        return Err(PgError::new(
                            SqlState::UNDEFINED_OBJECT,
                            format!(
                                "constraint \"{name}\" of domain \"{}\" does not exist",
                                ty.name
                            ),
                        ));
                    }
                    notice = Some(format!(
                        "constraint \"{name}\" of domain \"{}\" does not exist, skipping",
                        ty.name
                    ));
                }
            }
        }
        Ok(BoundStatement::AlterDomain {
            type_oid: ty.oid,
            domain,
            validate,
            notice,
        })
    }

    /// What SET NOT NULL or ADD CHECK checks the stored values against:
    /// every table column declared with the domain.
    fn domain_validation(
        &self,
        ty: &UserType,
        not_null: bool,
        checks: Vec<(String, Expr)>,
    ) -> DomainValidation {
        let cat = self.ctx.catalog;
        // Columns of the domain or of a domain based on it, at any depth.
        let of_domain = |mut oid: u32| loop {
            if oid == ty.oid {
                return true;
            }
            match cat.user_type(oid).and_then(|t| t.domain.as_ref()) {
                Some(d) => oid = d.base_oid,
                None => return false,
            }
        };
        let columns = cat
            .tables
            .values()
            .flat_map(|t| {
                t.columns
                    .iter()
                    .enumerate()
                    .filter(|(_, c)| c.type_oid >= FIRST_USER_OID && of_domain(c.type_oid))
                    .map(move |(i, _)| (t.clone(), i))
            })
            .collect();
        DomainValidation {
            columns,
            check: DomainCheck {
                arg: Expr::Column(0, DataType::new(ty.type_id())),
                domain: ty.name.clone(),
                not_null,
                checks,
            },
        }
    }
}
