//! ALTER TABLE ... DROP COLUMN and ALTER COLUMN ... TYPE: the column's
//! dependents found and checked as PostgreSQL's dependency walk would
//! (what lives on the column goes along; views, triggers and other tables'
//! foreign keys refuse the drop without CASCADE), and the new type's
//! conversion of each row bound over the table as it was.

use catalog::{ConstraintKind, Table};
use common::{Oid, PgError, PgResult, SqlState};
use sqlparser::ast;

use super::view_deps::BrokenView;
use super::*;

/// Whether an expression's SQL text may name column `name` (a conservative
/// word test: a trigger's WHEN is kept as text).
fn mentions(text: &str, name: &str) -> bool {
    let text = text.to_lowercase();
    let is_word = |c: char| c.is_alphanumeric() || c == '_';
    text.match_indices(name).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + name.len()..].chars().next();
        !before.is_some_and(is_word) && !after.is_some_and(is_word)
    })
}

impl Binder<'_, '_> {
    /// DROP COLUMN name (each of a list): `current` loses the column.
    pub(super) fn bind_drop_column(
        &mut self,
        current: &mut Table,
        name: &ast::Ident,
        if_exists: bool,
        cascade: bool,
    ) -> PgResult<AlterTableAction> {
        let name = ident_name(name);
        refuse_partitioned(current, "DROP COLUMN")?;
        if catalog::SYSTEM_COLUMN_NAMES.contains(&name.as_str()) {
            return Err(PgError::new(
                SqlState::FEATURE_NOT_SUPPORTED,
                format!("cannot drop system column \"{name}\""),
            ));
        }
        let Some(index) = current.column_index(&name) else {
            if if_exists {
                return Ok(AlterTableAction::DropColumn {
                    name,
                    index: None,
                    cascade,
                    views: Vec::new(),
                    triggers: Vec::new(),
                    foreign_keys: Vec::new(),
                });
            }
            return Err(PgError::new(
                SqlState::UNDEFINED_COLUMN,
                format!(
                    "column \"{name}\" of relation \"{}\" does not exist",
                    current.name
                ),
            ));
        };
        let what = format!("column {name} of table {}", current.name);
        let triggers = self.column_triggers(current, index);
        let foreign_keys = self.column_foreign_keys(current, index);
        let mut after_table = current.clone();
        after_table.columns.remove(index);
        let mut after = self.ctx.catalog.clone();
        after.tables.insert(current.oid, after_table.clone());
        let views = self.views_broken_by(after, &[current.name.as_str()], &[]);
        let others: Vec<&String> = triggers
            .iter()
            .chain(&foreign_keys)
            .map(|(_, d)| d)
            .collect();
        let unused = views.is_empty() && others.is_empty();
        let refused = !cascade && !unused;
        if refused {
            let detail = views_detail(&views, &what)
                .chain(others.iter().map(|o| format!("{o} depends on {what}")))
                .collect::<Vec<_>>()
                .join("\n");
            return Err(PgError::new(
                SqlState::DEPENDENT_OBJECTS_STILL_EXIST,
                format!("cannot drop {what} because other objects depend on it"),
            )
            .with_detail(detail)
            .with_hint("Use DROP ... CASCADE to drop the dependent objects too."));
        }
        *current = after_table;
        Ok(AlterTableAction::DropColumn {
            name,
            index: Some(index),
            cascade,
            views: views.into_iter().map(|b| b.view).collect(),
            triggers,
            foreign_keys,
        })
    }

    /// Triggers whose UPDATE OF list or WHEN names column `index`, as
    /// PostgreSQL describes them (`trigger tr on table t`).
    fn column_triggers(&self, table: &Table, index: usize) -> Vec<(Oid, String)> {
        let attnum = index as i16 + 1;
        let name = &table.columns[index].name;
        self.ctx
            .catalog
            .triggers_of(table.oid)
            .iter()
            .filter(|t| {
                t.columns.contains(&attnum) || t.when.as_deref().is_some_and(|w| mentions(w, name))
            })
            .map(|t| (t.oid, format!("trigger {} on table {}", t.name, table.name)))
            .collect()
    }

    /// Other tables' foreign keys referencing column `index`.
    fn column_foreign_keys(&self, table: &Table, index: usize) -> Vec<(Oid, String)> {
        let attnum = index as i16 + 1;
        let cat = self.ctx.catalog;
        cat.foreign_keys_referencing(table.oid)
            .filter(|c| {
                c.table != table.oid
                    && matches!(&c.kind, ConstraintKind::ForeignKey { ref_columns, .. }
                        if ref_columns.contains(&attnum))
            })
            .map(|c| {
                let on = cat.table_by_oid(c.table).map_or("", |t| t.name.as_str());
                (c.oid, format!("constraint {} on table {on}", c.name))
            })
            .collect()
    }

    /// ALTER COLUMN name [SET DATA] TYPE type [USING expr]: `current`'s
    /// column takes the new type.
    pub(super) fn bind_alter_column_type(
        &mut self,
        current: &mut Table,
        index: usize,
        data_type: &ast::DataType,
        using: Option<&ast::Expr>,
    ) -> PgResult<AlterTableAction> {
        refuse_partitioned(current, "ALTER COLUMN ... TYPE")?;
        let old = current.columns[index].clone();
        let ty = self.bind_data_type(data_type)?;
        let domain = self.domain_named(data_type)?;
        let mut column = old.clone();
        column.type_oid = domain.map_or(ty.id.oid(), |d| d.oid);
        column.typmod = ty.typmod;
        self.refuse_retype_dependents(current, index)?;
        let target = column.data_type();
        let name = &old.name;
        let to = format_type(target);
        let using = match using {
            Some(e) => {
                let scope = Binder::table_scope(current, None);
                let bound = self.bind_expr(e, &scope)?;
                let hint = format!(
                    "You might need to add an explicit cast. ({} to {to})",
                    format_type(bound.data_type())
                );
                self.coerce(bound, target, CastContext::Assignment)
                    .map_err(|e| {
                        let what = format!("result of USING clause for column \"{name}\"");
                        no_cast(e, what, &to, Some(hint))
                    })?
            }
            None => {
                let value = Expr::Column(index, old.data_type());
                self.coerce(value, target, CastContext::Assignment)
                    .map_err(|e| {
                        let hint = format!("You might need to specify \"USING {name}::{to}\".");
                        no_cast(e, format!("column \"{name}\""), &to, Some(hint))
                    })?
            }
        };
        if old.default.is_some() {
            // The stored default has the old type (PostgreSQL stores it
            // coerced), which must cast to the new one by assignment.
            let as_stored = self.column_default(current, index)?;
            self.coerce(as_stored, target, CastContext::Assignment)
                .map_err(|e| no_cast(e, format!("default for column \"{name}\""), &to, None))?;
        }
        current.columns[index] = column.clone();
        Ok(AlterTableAction::AlterColumnType {
            index,
            column,
            using,
        })
    }

    /// PostgreSQL refuses to change the type of a column a view or a
    /// trigger uses (0A000), CASCADE or not.
    fn refuse_retype_dependents(&self, table: &Table, index: usize) -> PgResult<()> {
        let name = &table.columns[index].name;
        if let Some((_, t)) = self.column_triggers(table, index).first() {
            return Err(PgError::unsupported(
                "cannot alter type of a column used in a trigger definition",
            )
            .with_detail(format!("{t} depends on column \"{name}\"")));
        }
        let mut after_table = table.clone();
        after_table.columns.remove(index);
        let mut after = self.ctx.catalog.clone();
        after.tables.insert(table.oid, after_table);
        if let Some(b) = self
            .views_broken_by(after, &[table.name.as_str()], &[])
            .first()
        {
            return Err(PgError::unsupported(
                "cannot alter type of a column used by a view or rule",
            )
            .with_detail(format!(
                "rule _RETURN on view {} depends on column \"{name}\"",
                b.view.name
            )));
        }
        Ok(())
    }
}

/// The rewrite does not reach a partitioned table's partitions (whose
/// columns must stay the parent's) yet.
fn refuse_partitioned(table: &Table, action: &str) -> PgResult<()> {
    if table.partition_key.is_some() || table.partition_of.is_some() {
        return Err(PgError::unsupported(format!(
            "ALTER TABLE ... {action} on a partitioned table or a partition is not supported yet"
        )));
    }
    Ok(())
}

/// ALTER TYPE's 42804 (with `hint`) for `what` having no assignment cast
/// to `to`; a coercion that failed on a value keeps its own error.
fn no_cast(e: PgError, what: String, to: &str, hint: Option<String>) -> PgError {
    if e.code != SqlState::DATATYPE_MISMATCH && e.code != SqlState::CANNOT_COERCE {
        return e;
    }
    let err = PgError::new(
        SqlState::DATATYPE_MISMATCH,
        format!("{what} cannot be cast automatically to type {to}"),
    );
    match hint {
        Some(h) => err.with_hint(h),
        None => err,
    }
}

/// DETAIL lines for views a change breaks.
fn views_detail<'v>(views: &'v [BrokenView], what: &'v str) -> impl Iterator<Item = String> + 'v {
    views.iter().map(move |b| match &b.through {
        Some(v) => format!("view {} depends on view {v}", b.view.name),
        None => format!("view {} depends on {what}", b.view.name),
    })
}
