//! INSERT … ON CONFLICT: the arbiter indexes (PostgreSQL's
//! infer_arbiter_indexes) and DO UPDATE's assignments and WHERE, bound over
//! the target table's row followed by EXCLUDED's.

use catalog::{ConstraintKind, Table};
use common::{Oid, PgError, PgResult, SqlState};
use sqlparser::ast::{self, Spanned};

use super::{ident_name, object_name_parts, split_conjuncts, Binder};
use crate::plan::{ConflictAction, OnConflict};

impl Binder<'_, '_> {
    pub(super) fn bind_on_conflict(
        &mut self,
        oc: &ast::OnConflict,
        table: &Table,
        alias: Option<&str>,
    ) -> PgResult<OnConflict> {
        let arbiters = match &oc.conflict_target {
            None => {
                if let ast::OnConflictAction::DoUpdate(u) = &oc.action {
                    let err = PgError::syntax(
                        "ON CONFLICT DO UPDATE requires inference specification or constraint name",
                    )
                    .with_hint("For example, ON CONFLICT (column_name).");
                    return Err(match u.assignments.first() {
                        Some(a) => self.at_words_before(err, a.span(), &["on", "conflict"]),
                        None => err,
                    });
                }
                let all: Vec<UniqueIndex> = self.unique_indexes(table).collect();
                if all.iter().any(|u| u.deferrable) {
                    return Err(deferrable_arbiter());
                }
                all.into_iter().map(|u| u.oid).collect()
            }
            Some(ast::ConflictTarget::Columns(cols)) => {
                let mut attnums: Vec<i16> = Vec::new();
                for c in cols {
                    let name = ident_name(c);
                    let Some(i) = table.column_index(&name) else {
                        let err = PgError::new(
                            SqlState::UNDEFINED_COLUMN,
                            format!("column \"{name}\" does not exist"),
                        );
                        // PostgreSQL points at the target's parenthesis.
                        return Err(self.at_words_before(err, c.span, &["("]));
                    };
                    let attnum = i as i16 + 1;
                    if !attnums.contains(&attnum) {
                        attnums.push(attnum);
                    }
                }
                let found: Vec<UniqueIndex> = self
                    .unique_indexes(table)
                    .filter(|u| {
                        u.keys.len() == attnums.len() && u.keys.iter().all(|k| attnums.contains(k))
                    })
                    .collect();
                if found.is_empty() {
                    return Err(no_matching_constraint());
                }
                if found.iter().any(|u| u.deferrable) {
                    return Err(deferrable_arbiter());
                }
                found.into_iter().map(|u| u.oid).collect()
            }
            Some(ast::ConflictTarget::OnConstraint(name)) => {
                let parts = object_name_parts(name)?;
                let cname = parts.last().expect("a name has a part");
                let catalog = self.ctx.catalog;
                let Some(c) = catalog.constraint_by_name(table.oid, cname) else {
                    return Err(PgError::new(
                        SqlState::UNDEFINED_OBJECT,
                        format!(
                            "constraint \"{cname}\" for table \"{}\" does not exist",
                            table.name
                        ),
                    ));
                };
                match c.kind {
                    ConstraintKind::PrimaryKey { index } | ConstraintKind::Unique { index } => {
                        if c.deferrable {
                            return Err(deferrable_arbiter());
                        }
                        vec![index]
                    }
                    _ => {
                        return Err(PgError::new(
                            SqlState::WRONG_OBJECT_TYPE,
                            "constraint in ON CONFLICT clause has no associated index",
                        ))
                    }
                }
            }
        };
        let action = match &oc.action {
            ast::OnConflictAction::DoNothing => ConflictAction::Nothing,
            ast::OnConflictAction::DoUpdate(u) => {
                let mut scope = Self::table_scope(table, alias);
                scope.extend(Self::table_scope(table, Some("excluded")));
                let assignments = self.bind_assignments(&u.assignments, table, &scope)?;
                let qual = match &u.selection {
                    None => Vec::new(),
                    Some(w) => {
                        let e = self.bind_expr(w, &scope)?;
                        split_conjuncts(self.coerce_bool(e, "WHERE")?)
                    }
                };
                ConflictAction::Update { assignments, qual }
            }
        };
        Ok(OnConflict {
            arbiters,
            explicit: oc.conflict_target.is_some(),
            action,
        })
    }

    /// The table's unique indexes.
    fn unique_indexes(&self, table: &Table) -> impl Iterator<Item = UniqueIndex> + '_ {
        let catalog = self.ctx.catalog;
        let table = table.oid;
        catalog
            .indexes_of(table)
            .filter(|i| i.unique)
            .map(move |i| UniqueIndex {
                oid: i.oid,
                keys: i.keys.iter().map(|k| k.attnum).collect(),
                deferrable: catalog
                    .constraint_of_index(i.oid)
                    .is_some_and(|c| c.deferrable),
            })
    }
}

/// A unique index as inference looks at it.
struct UniqueIndex {
    oid: Oid,
    keys: Vec<i16>,
    /// Its constraint is DEFERRABLE: checked late, it cannot arbitrate.
    deferrable: bool,
}

fn no_matching_constraint() -> PgError {
    PgError::new(
        SqlState::INVALID_COLUMN_REFERENCE,
        "there is no unique or exclusion constraint matching the ON CONFLICT specification",
    )
}

fn deferrable_arbiter() -> PgError {
    PgError::new(
        SqlState::OBJECT_NOT_IN_PREREQUISITE_STATE,
        "ON CONFLICT does not support deferrable unique constraints/exclusion constraints as arbiters",
    )
}
