//! CREATE ROLE / USER, ALTER ROLE (attributes, PASSWORD, RENAME TO) and
//! DROP ROLE, with PostgreSQL 15's checks in its order (user.c): option
//! values, privileges, reserved names, existence. Passwords are stored as
//! verifiers computed by the session (`SessionHooks::encrypt_password`:
//! authentication belongs to the server).

use catalog::{CatalogData, Role, RoleAttributes, BOOTSTRAP_SUPERUSER};
use common::{PgError, PgResult, SqlState};
use sql::role::{RoleOptions, RoleSpec, RoleStatement};

use super::{CommandContext, Notices};
use crate::ExecEnv;

fn denied(message: &str) -> PgError {
    PgError::new(SqlState::INSUFFICIENT_PRIVILEGE, message.to_string())
}

fn missing(name: &str) -> PgError {
    PgError::new(
        SqlState::UNDEFINED_OBJECT,
        format!("role \"{name}\" does not exist"),
    )
}

/// Names the grammar already refuses (RoleId) and the `pg_` prefix kept for
/// predefined roles (IsReservedName).
fn check_name(name: &str) -> PgResult<()> {
    if name == "public" || name == "none" {
        return Err(PgError::new(
            SqlState::RESERVED_NAME,
            format!("role name \"{name}\" is reserved"),
        ));
    }
    if name.starts_with("pg_") {
        return Err(PgError::new(
            SqlState::RESERVED_NAME,
            format!("role name \"{name}\" is reserved"),
        )
        .with_detail("Role names starting with \"pg_\" are reserved."));
    }
    Ok(())
}

/// The roles a command acts as: the current role and the session's.
struct Actor {
    current: Option<Role>,
    session: Option<Role>,
}

impl Actor {
    fn new(catalog: &CatalogData, env: &ExecEnv) -> Actor {
        Actor {
            current: catalog.role_by_name(&env.hooks.current_user()).cloned(),
            session: catalog.role_by_name(&env.hooks.session_user()).cloned(),
        }
    }
    fn superuser(&self) -> bool {
        self.current.as_ref().is_some_and(|r| r.superuser)
    }
    /// have_createrole_privilege: CREATEROLE, or superuser.
    fn create_role(&self) -> bool {
        self.superuser() || self.current.as_ref().is_some_and(|r| r.attrs.create_role)
    }
    fn is_current(&self, oid: common::Oid) -> bool {
        self.current.as_ref().is_some_and(|r| r.oid == oid)
    }
    fn is_session(&self, oid: common::Oid) -> bool {
        self.session.as_ref().is_some_and(|r| r.oid == oid)
    }
}

/// Runs a role statement that changes the catalog; returns its tag.
pub(super) fn run(
    cx: &mut CommandContext,
    env: &mut ExecEnv,
    notices: &mut Notices,
    stmt: &RoleStatement,
) -> PgResult<String> {
    match stmt {
        RoleStatement::Create {
            name,
            user,
            options,
        } => create(cx, env, notices, name, *user, options),
        RoleStatement::Alter { role, options } => alter(cx, env, notices, role, options),
        RoleStatement::Rename { name, new_name } => rename(cx, env, notices, name, new_name),
        RoleStatement::Drop { names, if_exists } => drop(cx, env, notices, names, *if_exists),
        RoleStatement::SetRole { .. } | RoleStatement::SetSessionAuthorization { .. } => {
            Err(PgError::internal("SET ROLE is run by the session"))
        }
    }
}

fn check_conn_limit(o: &RoleOptions) -> PgResult<()> {
    match o.conn_limit {
        Some(n) if n < -1 => Err(PgError::new(
            SqlState::INVALID_PARAMETER_VALUE,
            format!("invalid connection limit: {n}"),
        )),
        _ => Ok(()),
    }
}

/// The password option as a verifier (None clears it), with PostgreSQL's
/// notice for an empty one.
fn verifier(
    env: &mut ExecEnv,
    notices: &mut Notices,
    name: &str,
    password: &Option<String>,
) -> PgResult<Option<String>> {
    match password.as_deref() {
        None => Ok(None),
        Some("") => {
            notices(&PgError::new(
                SqlState::SUCCESSFUL_COMPLETION,
                "empty string is not a valid password, clearing password",
            ))?;
            Ok(None)
        }
        Some(p) => env.hooks.encrypt_password(name, p).map(Some),
    }
}

/// Applies `o` to `role` (the password handled by the caller).
fn apply(env: &ExecEnv, role: &mut Role, o: &RoleOptions) -> PgResult<()> {
    let a = &mut role.attrs;
    if let Some(v) = o.superuser {
        role.superuser = v;
    }
    for (slot, v) in [
        (&mut a.create_db, o.create_db),
        (&mut a.create_role, o.create_role),
        (&mut a.inherit, o.inherit),
        (&mut a.can_login, o.login),
        (&mut a.replication, o.replication),
        (&mut a.bypass_rls, o.bypass_rls),
    ] {
        if let Some(v) = v {
            *slot = v;
        }
    }
    if let Some(n) = o.conn_limit {
        a.conn_limit = n;
    }
    if let Some(t) = &o.valid_until {
        a.valid_until = Some(types::datetime::parse_timestamptz(
            t,
            env.io.timezone,
            env.io.date_style.order,
        )?);
    }
    Ok(())
}

fn create(
    cx: &mut CommandContext,
    env: &mut ExecEnv,
    notices: &mut Notices,
    name: &str,
    user: bool,
    o: &RoleOptions,
) -> PgResult<String> {
    check_conn_limit(o)?;
    let actor = Actor::new(env.catalog, env);
    if o.superuser == Some(true) {
        if !actor.superuser() {
            return Err(denied("must be superuser to create superusers"));
        }
    } else if o.replication == Some(true) {
        if !actor.superuser() {
            return Err(denied("must be superuser to create replication users"));
        }
    } else if o.bypass_rls == Some(true) {
        if !actor.superuser() {
            return Err(denied("must be superuser to create bypassrls users"));
        }
    } else if !actor.create_role() {
        return Err(denied("permission denied to create role"));
    }
    check_name(name)?;
    if env.catalog.role_by_name(name).is_some() {
        return Err(PgError::new(
            SqlState::DUPLICATE_OBJECT,
            format!("role \"{name}\" already exists"),
        ));
    }
    let mut role = Role {
        oid: 0,
        name: name.to_string(),
        superuser: false,
        password: None,
        attrs: RoleAttributes {
            // CREATE USER is CREATE ROLE with LOGIN by default.
            can_login: user,
            ..RoleAttributes::default()
        },
    };
    apply(env, &mut role, o)?;
    if let Some(p) = &o.password {
        role.password = verifier(env, notices, name, p)?;
    }
    let catalog = cx.catalog;
    catalog.create_role(cx.changes(env)?, env.cid, role)?;
    Ok("CREATE ROLE".into())
}

fn alter(
    cx: &mut CommandContext,
    env: &mut ExecEnv,
    notices: &mut Notices,
    spec: &RoleSpec,
    o: &RoleOptions,
) -> PgResult<String> {
    check_conn_limit(o)?;
    let actor = Actor::new(env.catalog, env);
    let target = match spec {
        RoleSpec::Name(n) => env
            .catalog
            .role_by_name(n)
            .cloned()
            .ok_or_else(|| missing(n))?,
        RoleSpec::CurrentUser => actor
            .current
            .clone()
            .ok_or_else(|| missing("current_user"))?,
        RoleSpec::SessionUser => actor
            .session
            .clone()
            .ok_or_else(|| missing("session_user"))?,
    };
    if target.superuser || o.superuser.is_some() {
        if !actor.superuser() {
            return Err(denied(
                "must be superuser to alter superuser roles or change superuser attribute",
            ));
        }
    } else if target.attrs.replication || o.replication.is_some() {
        if !actor.superuser() {
            return Err(denied(
                "must be superuser to alter replication roles or change replication attribute",
            ));
        }
    } else if o.bypass_rls.is_some() {
        if !actor.superuser() {
            return Err(denied("must be superuser to change bypassrls attribute"));
        }
    } else if !actor.create_role() {
        // Without CREATEROLE a role may change only its own password.
        let only_password = RoleOptions {
            password: None,
            ..o.clone()
        } == RoleOptions::default()
            && o.password.is_some();
        if !only_password || !actor.is_current(target.oid) {
            return Err(denied("permission denied"));
        }
    }
    let mut role = target;
    apply(env, &mut role, o)?;
    if let Some(p) = &o.password {
        role.password = verifier(env, notices, &role.name, p)?;
    }
    let catalog = cx.catalog;
    catalog.update_role(cx.changes(env)?, env.cid, role)?;
    Ok("ALTER ROLE".into())
}

fn rename(
    cx: &mut CommandContext,
    env: &mut ExecEnv,
    notices: &mut Notices,
    name: &str,
    new_name: &str,
) -> PgResult<String> {
    let actor = Actor::new(env.catalog, env);
    let mut role = env
        .catalog
        .role_by_name(name)
        .cloned()
        .ok_or_else(|| missing(name))?;
    if actor.is_session(role.oid) {
        return Err(PgError::unsupported("session user cannot be renamed"));
    }
    if actor.is_current(role.oid) {
        return Err(PgError::unsupported("current user cannot be renamed"));
    }
    check_name(name)?;
    check_name(new_name)?;
    if env.catalog.role_by_name(new_name).is_some() {
        return Err(PgError::new(
            SqlState::DUPLICATE_OBJECT,
            format!("role \"{new_name}\" already exists"),
        ));
    }
    if role.superuser {
        if !actor.superuser() {
            return Err(denied("must be superuser to rename superusers"));
        }
    } else if !actor.create_role() {
        return Err(denied("permission denied to rename role"));
    }
    // An MD5 verifier is salted with the role name: it no longer matches.
    if role
        .password
        .as_deref()
        .is_some_and(|p| p.starts_with("md5"))
    {
        role.password = None;
        notices(&PgError::new(
            SqlState::SUCCESSFUL_COMPLETION,
            "MD5 password cleared because of role rename",
        ))?;
    }
    role.name = new_name.to_string();
    let catalog = cx.catalog;
    catalog.update_role(cx.changes(env)?, env.cid, role)?;
    Ok("ALTER ROLE".into())
}

fn drop(
    cx: &mut CommandContext,
    env: &mut ExecEnv,
    notices: &mut Notices,
    names: &[String],
    if_exists: bool,
) -> PgResult<String> {
    let actor = Actor::new(env.catalog, env);
    if !actor.create_role() {
        return Err(denied("permission denied to drop role"));
    }
    for name in names {
        // Earlier names' drops are in the transaction's own version.
        let catalog = cx.changes.as_ref().map(|t| t.catalog().clone());
        let current = catalog.as_deref().unwrap_or(env.catalog);
        let Some(role) = current.role_by_name(name).cloned() else {
            if if_exists {
                notices(&PgError::new(
                    SqlState::SUCCESSFUL_COMPLETION,
                    format!("role \"{name}\" does not exist, skipping"),
                ))?;
                continue;
            }
            return Err(missing(name));
        };
        if actor.is_current(role.oid) {
            return Err(PgError::new(
                SqlState::OBJECT_IN_USE,
                "current user cannot be dropped",
            ));
        }
        if actor.is_session(role.oid) {
            return Err(PgError::new(
                SqlState::OBJECT_IN_USE,
                "session user cannot be dropped",
            ));
        }
        if role.superuser && !actor.superuser() {
            return Err(denied("must be superuser to drop superusers"));
        }
        if role.oid == BOOTSTRAP_SUPERUSER {
            // Pinned, as initdb's objects are in PostgreSQL.
            return Err(PgError::new(
                SqlState::DEPENDENT_OBJECTS_STILL_EXIST,
                format!("cannot drop role {name} because it is required by the database system"),
            ));
        }
        let owned: Vec<String> = current
            .databases_owned_by(role.oid)
            .map(|d| format!("owner of database {}", d.name))
            .collect();
        if !owned.is_empty() {
            return Err(PgError::new(
                SqlState::DEPENDENT_OBJECTS_STILL_EXIST,
                format!("role \"{name}\" cannot be dropped because some objects depend on it"),
            )
            .with_detail(owned.join("\n")));
        }
        let catalog = cx.catalog;
        catalog.drop_role(cx.changes(env)?, env.cid, role.oid)?;
    }
    Ok("DROP ROLE".into())
}
