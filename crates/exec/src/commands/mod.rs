//! Utility commands (DDL and the like): what CREATE/DROP/ALTER do to the
//! catalog. The session only dispatches here with its environment; catalog
//! changes (and the relation files they create or drop) go through
//! `catalog::Catalog` as part of the session's transaction (`CatalogTxn`).

mod alter_column;
mod comment;
mod constraint;
mod database;
mod domain;
mod function;
mod index;
mod partition;
mod role;
mod schema;
mod sequence;
mod table;
mod trigger;
mod user_type;
mod view;

use catalog::{Catalog, CatalogTxn};
use common::{Oid, PgError, PgResult};
use sql::plan::BoundStatement;

use crate::ExecEnv;

/// Where a command's notices go (to the client, in order, before its result).
pub type Notices<'n> = dyn FnMut(&PgError) -> PgResult<()> + 'n;

/// DROP ... IF EXISTS's notice for each name that named nothing.
pub(crate) fn notice_missing(
    notices: &mut Notices,
    kind: &str,
    missing: &[String],
) -> PgResult<()> {
    for m in missing {
        notices(&PgError::new(
            common::SqlState::SUCCESSFUL_COMPLETION,
            format!("{kind} \"{m}\" does not exist, skipping"),
        ))?;
    }
    Ok(())
}

/// What a utility command needs beyond the execution environment.
pub struct CommandContext<'c> {
    /// The catalog to change (the environment holds only a snapshot of it).
    pub catalog: &'c Catalog,
    /// The transaction's catalog changes so far (None before its first).
    pub changes: &'c mut Option<CatalogTxn>,
    /// The session's database.
    pub db_oid: Oid,
    /// Whether the statement runs inside a transaction block (explicit, or
    /// the implicit one of a multi-statement query).
    pub in_block: bool,
}

impl CommandContext<'_> {
    /// The transaction's catalog changes, started at the first. The session
    /// took the catalog-change lock before running the statement
    /// (`sql::plan::locks::changes_catalog`).
    pub fn changes(&mut self, env: &ExecEnv) -> PgResult<&mut CatalogTxn> {
        match self.changes {
            Some(c) => c.set_write_xid(env.xid),
            None => {
                let top = env.snapshot.own.top;
                *self.changes = Some(self.catalog.begin(top, env.xid));
            }
        }
        Ok(self.changes.as_mut().expect("started above"))
    }

    /// PostgreSQL's 25001 for commands that cannot run in a transaction block.
    pub fn prevent_in_block(&self, command: &str) -> PgResult<()> {
        if self.in_block {
            return Err(PgError::new(
                common::SqlState::ACTIVE_SQL_TRANSACTION,
                format!("{command} cannot run inside a transaction block"),
            ));
        }
        Ok(())
    }
}

/// Runs `stmt` if it is a utility command handled here; returns its
/// command tag, or None when `stmt` is not one.
pub fn run(
    stmt: &BoundStatement,
    cx: &mut CommandContext,
    env: &mut ExecEnv,
    notices: &mut Notices,
) -> PgResult<Option<String>> {
    let tag = match stmt {
        BoundStatement::CreateTable {
            name,
            namespace,
            columns,
            if_not_exists,
            source,
            sequences,
            constraints,
            on_commit: _,
            partitioning,
        } => table::create_table(
            cx,
            env,
            notices,
            table::CreateTable {
                name,
                namespace: *namespace,
                columns,
                if_not_exists: *if_not_exists,
                source: source.as_ref().map(|(plan, _)| plan),
                sequences,
                constraints,
                partitioning: partitioning.as_deref(),
            },
        )?,
        BoundStatement::CreateIndex { table, spec } => {
            index::create_index(cx, env, notices, table, spec)?
        }
        BoundStatement::DropIndex {
            indexes,
            missing,
            cascade,
            ..
        } => index::drop_indexes(cx, env, notices, indexes, missing, *cascade)?,
        BoundStatement::Reindex { indexes } => index::reindex(cx, env, indexes)?,
        BoundStatement::CreateSequence { seq, if_not_exists } => {
            sequence::create(cx, env, notices, seq, *if_not_exists)?
        }
        BoundStatement::DropSequence { sequences, missing } => {
            sequence::drop(cx, env, notices, sequences, missing)?
        }
        BoundStatement::AlterSequenceOwnedBy { sequence, owned_by } => {
            let catalog = cx.catalog;
            catalog.set_sequence_owned_by(cx.changes(env)?, env.cid, sequence.oid, *owned_by)?;
            "ALTER SEQUENCE".into()
        }
        BoundStatement::DropTable {
            tables,
            missing,
            cascade,
            views,
            ..
        } => {
            view::drop_dependents(cx, env, notices, views)?;
            table::drop_tables(cx, env, notices, tables, missing, *cascade)?
        }
        BoundStatement::Truncate {
            tables, cascaded, ..
        } => table::truncate(cx, env, notices, tables, cascaded)?,
        BoundStatement::AddColumn {
            table,
            column,
            if_not_exists,
        } => table::add_column(cx, env, notices, table, column, *if_not_exists)?,
        BoundStatement::AlterTable { table, actions, .. } => {
            table::alter(cx, env, notices, table, actions)?
        }
        BoundStatement::CreateView {
            name,
            namespace,
            query,
            columns,
            replace,
        } => view::create(cx, env, name, *namespace, query, columns, *replace)?,
        BoundStatement::DropView {
            views,
            missing,
            dependents,
        } => {
            view::drop_dependents(cx, env, notices, dependents)?;
            view::drop(cx, env, notices, views, missing)?
        }
        BoundStatement::CreateFunction { function, replace } => {
            function::create(cx, env, function, *replace)?
        }
        BoundStatement::AlterFunction { function } => function::alter(cx, env, function)?,
        BoundStatement::CreateTrigger { trigger, replace } => {
            trigger::create(cx, env, trigger, *replace)?
        }
        BoundStatement::DropTrigger { trigger, missing } => {
            trigger::drop(cx, env, notices, trigger.as_ref(), missing.as_deref())?
        }
        BoundStatement::SetTriggersEnabled { triggers, enabled } => {
            trigger::set_enabled(cx, env, triggers, *enabled)?
        }
        BoundStatement::CreateEnumType {
            namespace,
            name,
            labels,
        } => user_type::create_enum(cx, env, *namespace, name, labels)?,
        BoundStatement::AlterEnumType {
            type_oid,
            alteration,
        } => user_type::alter_enum(cx, env, notices, *type_oid, alteration)?,
        BoundStatement::DropType {
            types,
            missing,
            cascade,
            domain,
        } => user_type::drop(cx, env, notices, types, missing, *cascade, *domain)?,
        BoundStatement::CreateDomain {
            namespace,
            name,
            domain,
        } => domain::create(cx, env, *namespace, name, domain)?,
        BoundStatement::AlterDomain {
            type_oid,
            domain,
            validate,
            notice,
        } => domain::alter(
            cx,
            env,
            notices,
            *type_oid,
            domain,
            validate.as_ref(),
            notice.as_deref(),
        )?,
        BoundStatement::DropFunction { functions, missing } => {
            function::drop(cx, env, notices, functions, missing)?
        }
        BoundStatement::CreateSchema {
            name,
            if_not_exists,
        } => schema::create(cx, env, notices, name, *if_not_exists)?,
        BoundStatement::DropSchema {
            schemas,
            missing,
            cascade,
        } => schema::drop(cx, env, notices, schemas, missing, *cascade)?,
        BoundStatement::Comment {
            object,
            name,
            comment: text,
        } => comment::comment(cx, env, notices, *object, name, text.as_deref())?,
        BoundStatement::Role(r) if r.writes_catalog() => role::run(cx, env, notices, r)?,
        BoundStatement::CreateDatabase { name } => database::create(cx, env, name)?,
        BoundStatement::DropDatabase { name, if_exists } => {
            database::drop(cx, env, notices, name, *if_exists)?
        }
        _ => return Ok(None),
    };
    Ok(Some(tag))
}
