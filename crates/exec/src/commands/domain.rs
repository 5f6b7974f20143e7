//! CREATE DOMAIN and ALTER DOMAIN (DROP DOMAIN is `user_type::drop`).

use access::heap::HeapScan;
use access::tuple::deform_tuple;
use catalog::domains::Domain;
use catalog::Table;
use common::{Oid, PgError, PgResult, SqlState};
use sql::plan::DomainValidation;
use types::Value;

use super::{CommandContext, Notices};
use crate::eval::eval;
use crate::ExecEnv;

pub(super) fn create(
    cx: &mut CommandContext,
    env: &ExecEnv,
    namespace: Oid,
    name: &str,
    domain: &Domain,
) -> PgResult<String> {
    let catalog = cx.catalog;
    let db = cx.db_oid;
    catalog.create_domain(
        cx.changes(env)?,
        env.cid,
        name,
        namespace,
        db,
        domain.clone(),
    )?;
    Ok("CREATE DOMAIN".into())
}

pub(super) fn alter(
    cx: &mut CommandContext,
    env: &mut ExecEnv,
    notices: &mut Notices,
    type_oid: Oid,
    domain: &Domain,
    validate: Option<&DomainValidation>,
    notice: Option<&str>,
) -> PgResult<String> {
    if let Some(v) = validate {
        for (table, column) in &v.columns {
            validate_column(env, table, *column, v)?;
        }
    }
    if let Some(n) = notice {
        notices(&PgError::new(SqlState::SUCCESSFUL_COMPLETION, n))?;
    }
    let catalog = cx.catalog;
    catalog.alter_domain(cx.changes(env)?, env.cid, type_oid, domain.clone())?;
    Ok("ALTER DOMAIN".into())
}

/// SET NOT NULL's and ADD CHECK's look at the values stored in a column
/// declared with the domain (PostgreSQL's validateDomainConstraint).
fn validate_column(
    env: &mut ExecEnv,
    table: &Table,
    column: usize,
    v: &DomainValidation,
) -> PgResult<()> {
    let types = table.column_types();
    let column_name = &table.columns[column].name;
    let mut scan = HeapScan::new(env.pool, table.locator())?;
    let mut values: Vec<Value> = Vec::new();
    loop {
        env.check_cancel()?;
        let more = scan.next_page(env.snapshot, env.tm, |_, t| {
            let mut row = Vec::with_capacity(types.len());
            deform_tuple(t, &types, table.toast_source(env.pool), &mut row)?;
            values.push(std::mem::replace(&mut row[column], Value::Null));
            Ok(())
        })?;
        // Evaluated outside the page lock: a check may call anything.
        for value in values.drain(..) {
            if v.check.not_null && value.is_null() {
                return Err(PgError::new(
                    SqlState::NOT_NULL_VIOLATION,
                    format!(
                        "column \"{column_name}\" of table \"{}\" contains null values",
                        table.name
                    ),
                ));
            }
            let row = std::slice::from_ref(&value);
            for (_, check) in &v.check.checks {
                if let Value::Bool(false) = eval(check, row, env)? {
                    return Err(PgError::new(
                        SqlState::CHECK_VIOLATION,
                        format!(
                            "column \"{column_name}\" of table \"{}\" contains values that violate the new constraint",
                            table.name
                        ),
                    ));
                }
            }
        }
        if !more {
            return Ok(());
        }
    }
}
