//! Identity columns: GENERATED { ALWAYS | BY DEFAULT } AS IDENTITY, as
//! Django (4.1+) and SQLAlchemy create primary keys. An identity column is
//! a serial column underneath (a sequence it owns, nextval as its default)
//! marked with pg_attribute.attidentity; GENERATED ALWAYS refuses values
//! INSERT and UPDATE give it (428C9).

use catalog::{Column, Identity, Sequence, Table};
use common::{Oid, PgError, PgResult, SqlState};
use sqlparser::ast;

use super::Binder;
use ::types::TypeId;

impl Binder<'_, '_> {
    /// The sequence of identity column `c` (of table `table` being made),
    /// with the options written after AS IDENTITY; `c` becomes NOT NULL.
    pub(super) fn identity_sequence(
        &mut self,
        table: &str,
        namespace: Oid,
        cd: &ast::ColumnDef,
        c: &mut Column,
        taken: &[String],
    ) -> PgResult<Sequence> {
        let ty = c.data_type().id;
        if !matches!(ty, TypeId::Int2 | TypeId::Int4 | TypeId::Int8) {
            return Err(PgError::new(
                SqlState::INVALID_PARAMETER_VALUE,
                "identity column type must be smallint, integer, or bigint",
            ));
        }
        if c.default.is_some() {
            return Err(PgError::syntax(format!(
                "both default and identity specified for column \"{}\" of table \"{table}\"",
                c.name
            )));
        }
        let options = cd
            .options
            .iter()
            .find_map(|o| match &o.option {
                ast::ColumnOption::Generated {
                    sequence_options: Some(s),
                    ..
                } => Some(s.as_slice()),
                _ => None,
            })
            .unwrap_or(&[]);
        c.not_null = true;
        self.owned_sequence(table, namespace, &c.name, ty, taken, options)
    }
}

/// 428C9 for a value INSERT gives a GENERATED ALWAYS column.
pub(super) fn refuse_insert_into(table: &Table, column: usize) -> PgResult<()> {
    let c = &table.columns[column];
    if c.identity != Some(Identity::Always) {
        return Ok(());
    }
    Err(PgError::new(
        SqlState::GENERATED_ALWAYS,
        format!(
            "cannot insert a non-DEFAULT value into column \"{}\"",
            c.name
        ),
    )
    .with_detail(format!(
        "Column \"{}\" is an identity column defined as GENERATED ALWAYS.",
        c.name
    ))
    .with_hint("Use OVERRIDING SYSTEM VALUE to override."))
}

/// 428C9 for a value UPDATE sets a GENERATED ALWAYS column to.
pub(super) fn refuse_update_of(table: &Table, column: usize) -> PgResult<()> {
    let c = &table.columns[column];
    if c.identity != Some(Identity::Always) {
        return Ok(());
    }
    Err(PgError::new(
        SqlState::GENERATED_ALWAYS,
        format!("column \"{}\" can only be updated to DEFAULT", c.name),
    )
    .with_detail(format!(
        "Column \"{}\" is an identity column defined as GENERATED ALWAYS.",
        c.name
    )))
}
