//! pg_authid, pg_shadow and pg_user: the roles' rows as PostgreSQL 15's
//! views show them (pg_roles is with the describe catalogs). The predefined
//! `pg_*` roles are listed with the catalog's own, by oid, as in
//! PostgreSQL's pg_authid. Unlike PostgreSQL, reading pg_authid or
//! pg_shadow is not refused to other roles: they see no verifiers.

use ::catalog::{Role, RoleAttributes};
use sql::reg::PREDEFINED_ROLES;
use types::TypeId::*;
use types::Value;

use super::{text, Schema, Source, ViewContext, ViewDef};
use crate::Row;

pub(super) static VIEWS: &[ViewDef] = &[
    ViewDef {
        schema: Schema::PgCatalog,
        name: "pg_authid",
        source: Source::Relation("pg_authid"),
        columns: &[
            ("oid", Oid),
            ("rolname", Name),
            ("rolsuper", Bool),
            ("rolinherit", Bool),
            ("rolcreaterole", Bool),
            ("rolcreatedb", Bool),
            ("rolcanlogin", Bool),
            ("rolreplication", Bool),
            ("rolbypassrls", Bool),
            ("rolconnlimit", Int4),
            ("rolpassword", Text),
            ("rolvaliduntil", Timestamptz),
        ],
        rows: pg_authid,
    },
    ViewDef {
        schema: Schema::PgCatalog,
        name: "pg_shadow",
        source: Source::Relation("pg_authid"),
        columns: USER_COLUMNS,
        rows: pg_shadow,
    },
    ViewDef {
        schema: Schema::PgCatalog,
        name: "pg_user",
        source: Source::Relation("pg_authid"),
        columns: USER_COLUMNS,
        rows: pg_user,
    },
];

const USER_COLUMNS: &[(&str, types::TypeId)] = &[
    ("usename", Name),
    ("usesysid", Oid),
    ("usecreatedb", Bool),
    ("usesuper", Bool),
    ("userepl", Bool),
    ("usebypassrls", Bool),
    ("passwd", Text),
    ("valuntil", Timestamptz),
    ("useconfig", TextArray),
];

/// Every role, the predefined ones included, by oid.
pub(super) fn authid<'a>(cx: &'a ViewContext<'_>) -> impl Iterator<Item = Role> + 'a {
    let mut roles: Vec<Role> = cx
        .catalog
        .roles
        .values()
        .cloned()
        .chain(PREDEFINED_ROLES.iter().map(|(oid, name)| Role {
            oid: *oid,
            name: name.to_string(),
            superuser: false,
            password: None,
            attrs: RoleAttributes::default(),
        }))
        .collect();
    roles.sort_by_key(|r| r.oid);
    roles.into_iter()
}

fn verifier(cx: &ViewContext<'_>, r: &Role) -> Value {
    if cx.server.current_user_is_superuser() {
        r.password.as_deref().map_or(Value::Null, text)
    } else {
        Value::Null
    }
}

fn valid_until(r: &Role) -> Value {
    r.attrs.valid_until.map_or(Value::Null, Value::Timestamptz)
}

fn pg_authid(cx: &ViewContext<'_>) -> Vec<Row> {
    authid(cx)
        .map(|r| {
            vec![
                Value::Oid(r.oid),
                text(&r.name),
                Value::Bool(r.superuser),
                Value::Bool(r.attrs.inherit),
                Value::Bool(r.attrs.create_role),
                Value::Bool(r.attrs.create_db),
                Value::Bool(r.attrs.can_login),
                Value::Bool(r.attrs.replication),
                Value::Bool(r.attrs.bypass_rls),
                Value::Int4(r.attrs.conn_limit),
                verifier(cx, &r),
                valid_until(&r),
            ]
        })
        .collect()
}

/// pg_shadow's rows (login roles only); `passwd` as pg_user shows it when
/// `masked`.
fn users(cx: &ViewContext<'_>, masked: bool) -> Vec<Row> {
    authid(cx)
        .filter(|r| r.attrs.can_login)
        .map(|r| {
            vec![
                text(&r.name),
                Value::Oid(r.oid),
                Value::Bool(r.attrs.create_db),
                Value::Bool(r.superuser),
                Value::Bool(r.attrs.replication),
                Value::Bool(r.attrs.bypass_rls),
                if masked {
                    text("********")
                } else {
                    verifier(cx, &r)
                },
                valid_until(&r),
                Value::Null,
            ]
        })
        .collect()
}

fn pg_shadow(cx: &ViewContext<'_>) -> Vec<Row> {
    users(cx, false)
}

fn pg_user(cx: &ViewContext<'_>) -> Vec<Row> {
    users(cx, true)
}
