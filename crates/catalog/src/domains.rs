//! Domains (CREATE DOMAIN): a pg_type row of typtype 'd' with the base
//! type, NOT NULL and DEFAULT (`user_types::PG_TYPE`'s last columns), and
//! one pg_constraint row per CHECK constraint, told apart from the tables'
//! constraints by contypid. Enum types and domains share `UserType`, so
//! lookups by name, DROP and DROP SCHEMA treat both alike.

use std::collections::HashMap;
use std::sync::Arc;

use common::{Oid, PgResult};
use storage::buffer::BufferPool;
use txn::TransactionManager;
use types::Value;

use crate::ddl::CatalogTxn;
use crate::indexes::{CONTYPID, PG_CONSTRAINT};
use crate::model::CatalogData;
use crate::relations;
use crate::user_types::{type_row, UserType, PG_TYPE};
use crate::Catalog;

/// What makes a user type a domain.
#[derive(Debug, Clone, PartialEq)]
pub struct Domain {
    /// typbasetype (a built-in type, an enum or another domain).
    pub base_oid: Oid,
    /// typtypmod: the base type's modifier (`varchar(10)`), -1 without.
    pub base_typmod: i32,
    /// typnotnull.
    pub not_null: bool,
    /// typdefault, as SQL text.
    pub default: Option<String>,
    /// The CHECK constraints, in the order they were added.
    pub checks: Vec<DomainCheck>,
}

/// One CHECK constraint of a domain.
#[derive(Debug, Clone, PartialEq)]
pub struct DomainCheck {
    /// pg_constraint's oid (0 before the catalog stores it).
    pub oid: Oid,
    pub name: String,
    /// The expression's SQL text, reading the value as `VALUE`.
    pub expr: String,
}

/// The domain a pg_type row describes (None for an enum's row).
pub(crate) fn domain_of_row(r: &[Value]) -> PgResult<Option<Domain>> {
    if !matches!(&r[4], Value::Text(t) if t == "d") {
        return Ok(None);
    }
    let bad = || relations::corrupt(&PG_TYPE, "domain row");
    Ok(Some(Domain {
        base_oid: match r[6] {
            Value::Oid(o) => o,
            _ => return Err(bad()),
        },
        base_typmod: match r[7] {
            Value::Int4(m) => m,
            _ => return Err(bad()),
        },
        not_null: matches!(r[8], Value::Bool(true)),
        default: match &r[9] {
            Value::Text(t) => Some(t.clone()),
            _ => None,
        },
        checks: Vec::new(),
    }))
}

/// Adds the domains' CHECK constraints to `types` being loaded, in oid
/// order (the order they were added).
pub(crate) fn load_checks(
    pool: &'static BufferPool,
    tm: &TransactionManager,
    d: &mut CatalogData,
    types: &mut HashMap<Oid, UserType>,
) -> PgResult<()> {
    let mut rows: Vec<_> = relations::scan(pool, tm, &PG_CONSTRAINT)?
        .into_iter()
        .filter_map(|(tid, r)| match r[CONTYPID] {
            Value::Oid(ty) if ty != 0 => Some((tid, ty, r)),
            _ => None,
        })
        .collect();
    rows.sort_by_key(|(_, _, r)| match r[0] {
        Value::Oid(o) => o,
        _ => 0,
    });
    for (tid, ty, r) in rows {
        let text = |v: &Value| match v {
            Value::Text(s) => Ok(s.clone()),
            _ => Err(relations::corrupt(&PG_CONSTRAINT, "domain check text")),
        };
        let check = DomainCheck {
            oid: match r[0] {
                Value::Oid(o) => o,
                _ => return Err(relations::corrupt(&PG_CONSTRAINT, "oid")),
            },
            name: text(&r[1])?,
            expr: text(&r[15])?,
        };
        let domain = types
            .get_mut(&ty)
            .and_then(|t| t.domain.as_mut())
            .ok_or_else(|| relations::corrupt(&PG_CONSTRAINT, "check of a missing domain"))?;
        d.rows.user_types.domain_checks.insert(check.oid, tid);
        domain.checks.push(check);
    }
    Ok(())
}

/// A domain CHECK's pg_constraint row (contype 'c', conrelid 0).
fn check_row(namespace: Oid, domain: Oid, c: &DomainCheck) -> Vec<Value> {
    let text = |s: &str| Value::Text(s.to_string());
    vec![
        Value::Oid(c.oid),
        text(&c.name),
        Value::Oid(namespace),
        text("c"),
        Value::Bool(false),
        Value::Bool(false),
        Value::Bool(true),
        Value::Oid(0),
        Value::Oid(0),
        Value::Oid(0),
        text(" "),
        text(" "),
        text(" "),
        text(""),
        text(""),
        text(&c.expr),
        Value::Oid(domain),
    ]
}

impl Catalog {
    /// CREATE DOMAIN. The caller checked that no type of the name exists
    /// in the schema; the checks' oids are assigned here.
    pub fn create_domain(
        &self,
        txn: &mut CatalogTxn,
        cid: u32,
        name: &str,
        namespace: Oid,
        db_oid: Oid,
        domain: Domain,
    ) -> PgResult<Oid> {
        let oid = self.oids.next()?;
        let t = UserType {
            oid,
            name: name.to_string(),
            namespace,
            db_oid,
            // Arrays of domains are not supported: no array type.
            array_oid: 0,
            labels: Vec::new(),
            domain: Some(domain),
        };
        let w = self.type_writer(txn, cid);
        let tid = w.insert(&PG_TYPE, &type_row(&t))?;
        let d = Arc::make_mut(&mut txn.working);
        d.rows.user_types.types.insert(oid, tid);
        d.user_types.insert(oid, Arc::new(t));
        self.replace_domain_checks(txn, cid, oid, &[])?;
        crate::user_types::publish(&txn.working);
        Ok(oid)
    }

    /// ALTER DOMAIN: `domain` is what the domain becomes; its type row is
    /// rewritten, checks it no longer has are deleted and new ones (oid 0)
    /// inserted.
    pub fn alter_domain(
        &self,
        txn: &mut CatalogTxn,
        cid: u32,
        type_oid: Oid,
        domain: Domain,
    ) -> PgResult<()> {
        let mut t = crate::user_types::working_type(txn, type_oid)?;
        let old_checks = t
            .domain
            .as_ref()
            .map(|d| d.checks.clone())
            .unwrap_or_default();
        t.domain = Some(domain);
        let row = txn.working.rows.user_types.types.get(&type_oid).copied();
        let row = row.ok_or_else(|| relations::corrupt(&PG_TYPE, "no row"))?;
        let w = self.type_writer(txn, cid);
        let tid = w.replace(&PG_TYPE, row, &type_row(&t))?;
        let d = Arc::make_mut(&mut txn.working);
        d.rows.user_types.types.insert(type_oid, tid);
        d.user_types.insert(type_oid, Arc::new(t));
        self.replace_domain_checks(txn, cid, type_oid, &old_checks)?;
        crate::user_types::publish(&txn.working);
        Ok(())
    }

    /// Writes the rows of the domain's checks that have none yet (oid 0)
    /// and deletes those of `old` checks it no longer has.
    fn replace_domain_checks(
        &self,
        txn: &mut CatalogTxn,
        cid: u32,
        type_oid: Oid,
        old: &[DomainCheck],
    ) -> PgResult<()> {
        let mut t = crate::user_types::working_type(txn, type_oid)?;
        let w = self.type_writer(txn, cid);
        let mut written = Vec::new();
        let namespace = t.namespace;
        if let Some(domain) = t.domain.as_mut() {
            for c in domain.checks.iter_mut().filter(|c| c.oid == 0) {
                c.oid = self.oids.next()?;
                written.push((
                    c.oid,
                    w.insert(&PG_CONSTRAINT, &check_row(namespace, type_oid, c))?,
                ));
            }
        }
        let kept: Vec<Oid> = t
            .domain
            .iter()
            .flat_map(|d| &d.checks)
            .map(|c| c.oid)
            .collect();
        let d = Arc::make_mut(&mut txn.working);
        for c in old.iter().filter(|c| !kept.contains(&c.oid)) {
            if let Some(tid) = d.rows.user_types.domain_checks.remove(&c.oid) {
                w.delete(&PG_CONSTRAINT, tid)?;
            }
        }
        d.rows.user_types.domain_checks.extend(written);
        d.user_types.insert(type_oid, Arc::new(t));
        Ok(())
    }
}
