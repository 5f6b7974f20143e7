//! Utility commands (DDL and the like): what CREATE/DROP/ALTER do to the
//! catalog and to storage. The session only dispatches here with its
//! environment; catalog changes go through `catalog::Catalog` (which assigns
//! OIDs inside the DDL write) and storage changes through `access`.

mod database;
mod role;
mod table;

use catalog::Catalog;
use common::{Oid, PgError, PgResult};
use sql::plan::BoundStatement;

use crate::ExecEnv;

/// Where a command's notices go (to the client, in order, before its result).
pub type Notices<'n> = dyn FnMut(&PgError) -> PgResult<()> + 'n;

/// What a utility command needs beyond the execution environment.
pub struct CommandContext<'c> {
    /// The catalog to change (the environment holds only a snapshot of it).
    pub catalog: &'c Catalog,
    /// The session's database.
    pub db_oid: Oid,
}

/// Runs `stmt` if it is a utility command handled here; returns its
/// command tag, or None when `stmt` is not one.
pub fn run(
    stmt: &BoundStatement,
    cx: &CommandContext,
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
            },
        )?,
        BoundStatement::DropTable { tables, missing } => {
            table::drop_tables(cx, env, notices, tables, missing)?
        }
        BoundStatement::Truncate { tables } => table::truncate(cx, env, tables)?,
        BoundStatement::AddColumn {
            table,
            column,
            if_not_exists,
        } => table::add_column(cx, notices, table, column, *if_not_exists)?,
        BoundStatement::AlterRolePassword { name, password } => {
            role::alter_password(cx, env, notices, name, password.as_deref())?
        }
        BoundStatement::CreateDatabase { name } => database::create(cx, name)?,
        BoundStatement::DropDatabase { name, if_exists } => {
            database::drop(cx, env, notices, name, *if_exists)?
        }
        _ => return Ok(None),
    };
    Ok(Some(tag))
}
