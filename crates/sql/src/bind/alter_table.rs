//! ALTER TABLE: its actions bound against the table (renames, defaults,
//! NOT NULL, constraints, OWNER TO, and SET STORAGE / SET COMPRESSION,
//! which the pre-parser reads because sqlparser does not).

use catalog::Table;
use common::{PgError, PgResult, SqlState};
use sqlparser::ast;

use super::*;

impl Binder<'_, '_> {
    pub(super) fn bind_alter_table(&mut self, at: &ast::AlterTable) -> PgResult<BoundStatement> {
        let parts = object_name_parts(&at.name)?;
        if let Some(done) = self.owner_to_non_table(&parts, &at.operations)? {
            return Ok(done);
        }
        let table = self.require_table(&parts)?;
        // Each action is bound against the table as the ones before
        // it leave it (an added column is there for the next).
        let mut current = (*table).clone();
        let mut actions = Vec::new();
        for op in &at.operations {
            match op {
                ast::AlterTableOperation::AddColumn {
                    if_not_exists,
                    column_def,
                    ..
                } => {
                    self.bind_add_column(&mut current, column_def, *if_not_exists, &mut actions)?
                }
                ast::AlterTableOperation::DropColumn {
                    column_names,
                    if_exists,
                    drop_behavior,
                    ..
                } => {
                    let cascade = matches!(drop_behavior, Some(ast::DropBehavior::Cascade));
                    for name in column_names {
                        actions.push(self.bind_drop_column(
                            &mut current,
                            name,
                            *if_exists,
                            cascade,
                        )?);
                    }
                }
                ast::AlterTableOperation::AlterColumn {
                    column_name,
                    op:
                        ast::AlterColumnOperation::SetDataType {
                            data_type, using, ..
                        },
                } => {
                    let index = Self::column_position(&current, column_name)?;
                    actions.push(self.bind_alter_column_type(
                        &mut current,
                        index,
                        data_type,
                        using.as_ref(),
                    )?);
                }
                op => {
                    let action = self.bind_alter_action(&current, op)?;
                    // The actions after it see the column as it leaves it.
                    match &action {
                        AlterTableAction::SetDefault { index, default } => {
                            current.columns[*index].default = default.clone()
                        }
                        AlterTableAction::SetNotNull { index, not_null } => {
                            current.columns[*index].not_null = *not_null
                        }
                        AlterTableAction::RenameColumn { index, name } => {
                            current.columns[*index].name = name.clone()
                        }
                        _ => {}
                    }
                    let views = self.rename_in_views(&mut current, &action)?;
                    actions.push(action);
                    if !views.is_empty() {
                        actions.push(AlterTableAction::RewriteViews(views));
                    }
                }
            }
        }
        if let [AlterTableAction::AddColumn {
            column,
            if_not_exists,
        }] = actions.as_slice()
        {
            return Ok(BoundStatement::AddColumn {
                table,
                column: column.clone(),
                if_not_exists: *if_not_exists,
            });
        }
        let related = constraints::alter_table_related(self.ctx.catalog, &table, &actions);
        Ok(BoundStatement::AlterTable {
            table,
            actions,
            related,
        })
    }

    /// ADD COLUMN with a default, NOT NULL or constraints: the bare column,
    /// then its default set and filled into the existing rows, NOT NULL
    /// checked, constraints added, in that order (`current` is the table
    /// as the actions so far leave it, and gains the column).
    fn bind_add_column(
        &mut self,
        current: &mut Table,
        column_def: &ast::ColumnDef,
        if_not_exists: bool,
        actions: &mut Vec<AlterTableAction>,
    ) -> PgResult<()> {
        let mut constraints = Vec::new();
        let mut column = self.bind_column_def(column_def, &mut constraints)?;
        if if_not_exists && current.column_index(&column.name).is_some() {
            actions.push(AlterTableAction::AddColumn {
                column,
                if_not_exists,
            });
            return Ok(());
        }
        target_list::check_table_columns(current.columns.len() + 1)?;
        let default = column.default.take();
        let not_null = std::mem::take(&mut column.not_null);
        let index = current.columns.len();
        actions.push(AlterTableAction::AddColumn {
            column: column.clone(),
            if_not_exists,
        });
        let of_domain = self.column_domain(&column).is_some();
        current.columns.push(column);
        if default.is_some() || of_domain {
            if let Some(text) = default {
                actions.push(AlterTableAction::SetDefault {
                    index,
                    default: Some(text.clone()),
                });
                current.columns[index].default = Some(text);
            }
            // A domain column's rows take the domain's default (NULL too,
            // which its NOT NULL and CHECKs see), as PostgreSQL's rewrite.
            let value = self.column_default(current, index)?;
            if !matches!(value, Expr::Const(Value::Null, _)) {
                actions.push(AlterTableAction::FillColumn(Box::new(
                    BoundStatement::Update {
                        table: Arc::new(current.clone()),
                        alias: None,
                        qual: Vec::new(),
                        assignments: vec![(index, value)],
                        returning: None,
                        index: None,
                        join: None,
                    },
                )));
            }
        }
        if not_null {
            actions.push(AlterTableAction::SetNotNull {
                index,
                not_null: true,
            });
            current.columns[index].not_null = true;
        }
        if !constraints.is_empty() {
            let constraints: Vec<_> = constraints.into_iter().map(|c| (c, false)).collect();
            let specs = self.bind_constraints(
                &current.name,
                Some(current),
                &current.columns,
                &constraints,
            )?;
            actions.extend(specs.into_iter().map(AlterTableAction::AddConstraint));
        }
        Ok(())
    }

    /// A rename's effect on views: `current` (as the actions before left
    /// it, the column renamed already) takes a table's new name, and the
    /// views reading what was renamed get their query rewritten.
    fn rename_in_views(
        &self,
        current: &mut Table,
        action: &AlterTableAction,
    ) -> PgResult<Vec<(Arc<catalog::View>, String)>> {
        let before = current.clone();
        let (old, rename_new);
        let rename = match action {
            AlterTableAction::RenameTable(name) => {
                current.name = name.clone();
                old = before.name.clone();
                rename_new = name.clone();
                constraints::Rename::Table {
                    old: &old,
                    new: &rename_new,
                }
            }
            AlterTableAction::RenameColumn { index, name } => {
                // A name the column cannot take fails when the rename runs.
                let taken = current.columns.iter().filter(|c| c.name == *name).count() > 1;
                if taken || catalog::SYSTEM_COLUMN_NAMES.contains(&name.as_str()) {
                    return Ok(Vec::new());
                }
                old = self
                    .ctx
                    .catalog
                    .table_by_oid(current.oid)
                    .and_then(|t| t.columns.get(*index))
                    .map_or_else(String::new, |c| c.name.clone());
                rename_new = name.clone();
                constraints::Rename::Column {
                    old: &old,
                    new: &rename_new,
                }
            }
            _ => return Ok(Vec::new()),
        };
        let mut after = self.ctx.catalog.clone();
        after.tables.insert(current.oid, current.clone());
        let mut named = before;
        if let AlterTableAction::RenameTable(_) = action {
            named.name = old.clone();
        }
        self.views_for_rename(&named, &rename, after)
    }

    /// ALTER TABLE ... ALTER COLUMN c SET STORAGE | SET COMPRESSION, with
    /// PostgreSQL's checks: a fixed-width type has plain storage only and
    /// no compression.
    pub(super) fn bind_alter_column_toast(
        &mut self,
        parts: &[String],
        actions: &[(String, bool, String)],
    ) -> PgResult<BoundStatement> {
        use catalog::{Compression, Storage};
        let table = self.require_table(parts)?;
        let mut bound = Vec::with_capacity(actions.len());
        for (column, storage, value) in actions {
            let index = table.column_index(column).ok_or_else(|| {
                PgError::new(
                    SqlState::UNDEFINED_COLUMN,
                    format!(
                        "column \"{column}\" of relation \"{}\" does not exist",
                        table.name
                    ),
                )
            })?;
            let ty = table.columns[index].data_type();
            let fixed = table.columns[index].effective_storage() == Storage::Plain
                && Storage::default_for(ty.id) == Storage::Plain;
            let type_name = || types::format_type(ty);
            bound.push(if *storage {
                let s = Storage::from_name(value).ok_or_else(|| {
                    PgError::new(
                        SqlState::INVALID_PARAMETER_VALUE,
                        format!("invalid storage type \"{value}\""),
                    )
                })?;
                if fixed && s != Storage::Plain {
                    return Err(PgError::unsupported(format!(
                        "column data type {} can only have storage PLAIN",
                        type_name()
                    )));
                }
                AlterTableAction::SetStorage { index, storage: s }
            } else {
                let compression = if value.eq_ignore_ascii_case("default") {
                    None
                } else {
                    Some(Compression::from_name(value).ok_or_else(|| {
                        PgError::new(
                            SqlState::INVALID_PARAMETER_VALUE,
                            format!("invalid compression method \"{value}\""),
                        )
                    })?)
                };
                if fixed && compression.is_some() {
                    return Err(PgError::unsupported(format!(
                        "column data type {} does not support compression",
                        type_name()
                    )));
                }
                AlterTableAction::SetCompression { index, compression }
            });
        }
        Ok(BoundStatement::AlterTable {
            table,
            actions: bound,
            related: Vec::new(),
        })
    }

    /// ALTER TABLE name OWNER TO role on a sequence or a view (pg_dump's
    /// way of setting their owner): accepted as for tables, changing nothing
    /// (see bind_owner_to). None when `parts` is no sequence or view or the
    /// statement does more than OWNER TO.
    fn owner_to_non_table(
        &self,
        parts: &[String],
        ops: &[ast::AlterTableOperation],
    ) -> PgResult<Option<BoundStatement>> {
        if ops.is_empty()
            || !ops
                .iter()
                .all(|op| matches!(op, ast::AlterTableOperation::OwnerTo { .. }))
        {
            return Ok(None);
        }
        let cat = self.ctx.catalog;
        let oid = self.relation_oid(parts).ok().flatten();
        let is_view = matches!(self.lookup_relation(parts), Ok(Some(Relation::View(_))));
        if !oid.is_some_and(|o| cat.sequences.contains_key(&o)) && !is_view {
            return Ok(None);
        }
        for op in ops {
            if let ast::AlterTableOperation::OwnerTo { new_owner } = op {
                self.bind_owner_to(new_owner)?;
            }
        }
        Ok(Some(BoundStatement::NoOp("ALTER TABLE".into())))
    }

    /// OWNER TO: every relation is owned by the bootstrap superuser and
    /// ownership cannot change yet, so only that role is accepted (what a
    /// dump restored by that role asks for).
    pub(crate) fn bind_owner_to(&self, owner: &ast::Owner) -> PgResult<AlterTableAction> {
        let ast::Owner::Ident(name) = owner else {
            return Err(PgError::unsupported(
                "ALTER TABLE ... OWNER TO CURRENT_USER is not supported yet",
            ));
        };
        let name = ident_name(name);
        let role = self.ctx.catalog.role_by_name(&name).ok_or_else(|| {
            PgError::new(
                SqlState::UNDEFINED_OBJECT,
                format!("role \"{name}\" does not exist"),
            )
        })?;
        if role.oid != catalog::BOOTSTRAP_SUPERUSER {
            return Err(PgError::unsupported(
                "changing a relation's owner is not supported yet (every relation is owned by the bootstrap superuser)",
            ));
        }
        Ok(AlterTableAction::OwnerUnchanged)
    }

    fn column_position(table: &Table, name: &ast::Ident) -> PgResult<usize> {
        let name = ident_name(name);
        table.column_index(&name).ok_or_else(|| {
            PgError::new(
                SqlState::UNDEFINED_COLUMN,
                format!(
                    "column \"{name}\" of relation \"{}\" does not exist",
                    table.name
                ),
            )
        })
    }

    fn bind_alter_action(
        &mut self,
        table: &Table,
        op: &ast::AlterTableOperation,
    ) -> PgResult<AlterTableAction> {
        use ast::AlterColumnOperation as C;
        use ast::AlterTableOperation as A;
        Ok(match op {
            A::RenameTable {
                table_name: ast::RenameTableNameKind::To(name),
            } => {
                let parts = object_name_parts(name)?;
                let [name] = <[String; 1]>::try_from(parts)
                    .map_err(|_| PgError::syntax("syntax error at or near \".\""))?;
                AlterTableAction::RenameTable(name)
            }
            A::RenameColumn {
                old_column_name,
                new_column_name,
            } => {
                let old = ident_name(old_column_name);
                // PostgreSQL's renameatt names no relation here.
                let index = table.column_index(&old).ok_or_else(|| {
                    PgError::new(
                        SqlState::UNDEFINED_COLUMN,
                        format!("column \"{old}\" does not exist"),
                    )
                })?;
                AlterTableAction::RenameColumn {
                    index,
                    name: ident_name(new_column_name),
                }
            }
            A::AlterColumn { column_name, op } => {
                let index = Self::column_position(table, column_name)?;
                match op {
                    C::SetNotNull => AlterTableAction::SetNotNull {
                        index,
                        not_null: true,
                    },
                    C::DropNotNull => AlterTableAction::SetNotNull {
                        index,
                        not_null: false,
                    },
                    C::DropDefault => AlterTableAction::SetDefault {
                        index,
                        default: None,
                    },
                    C::SetDefault { value } => {
                        // Checked now, as at CREATE TABLE.
                        let bound = self.bind_expr(value, &Vec::new())?;
                        self.coerce(
                            bound,
                            table.columns[index].data_type(),
                            CastContext::Assignment,
                        )?;
                        AlterTableAction::SetDefault {
                            index,
                            default: Some(value.to_string()),
                        }
                    }
                    other => {
                        return Err(PgError::unsupported(format!(
                            "ALTER COLUMN ... {other} is not supported yet"
                        )))
                    }
                }
            }
            A::AddColumn { .. } => unreachable!("bound by bind_add_column"),
            A::AddConstraint {
                constraint,
                not_valid,
            } => {
                let mut specs = self.bind_constraints(
                    &table.name,
                    Some(table),
                    &table.columns,
                    &[(constraint.clone(), *not_valid)],
                )?;
                AlterTableAction::AddConstraint(specs.remove(0))
            }
            A::DropConstraint {
                if_exists,
                name,
                drop_behavior,
            } => AlterTableAction::DropConstraint {
                name: ident_name(name),
                if_exists: *if_exists,
                cascade: matches!(drop_behavior, Some(ast::DropBehavior::Cascade)),
            },
            A::ValidateConstraint { name } => {
                AlterTableAction::ValidateConstraint(ident_name(name))
            }
            A::OwnerTo { new_owner } => self.bind_owner_to(new_owner)?,
            other => {
                return Err(PgError::unsupported(format!(
                    "ALTER TABLE ... {} is not supported yet",
                    other
                        .to_string()
                        .split_whitespace()
                        .take(2)
                        .collect::<Vec<_>>()
                        .join(" ")
                )))
            }
        })
    }
}
