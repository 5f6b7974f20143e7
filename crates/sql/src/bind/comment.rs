//! COMMENT ON: resolves the object to PostgreSQL's object address
//! (class oid, object oid, sub-id) with PostgreSQL's errors for objects
//! that do not exist or are of the wrong kind (objectaddress.c).

use catalog::comments::{PG_AUTHID_OID, PG_CLASS_OID, PG_DATABASE_OID, PG_NAMESPACE_OID};
use catalog::ObjectAddress;
use common::{PgError, PgResult, SqlState};
use sqlparser::ast::{self, CommentObject};

use super::{object_name_parts, undefined_table, wrong_object_type, Binder, Relation};
use crate::plan::BoundStatement;

impl Binder<'_, '_> {
    pub(super) fn bind_comment(
        &self,
        object_type: &CommentObject,
        name: &ast::ObjectName,
        comment: &Option<String>,
        if_exists: bool,
    ) -> PgResult<BoundStatement> {
        if if_exists {
            // Not PostgreSQL syntax (sqlparser takes it from Snowflake).
            return Err(PgError::syntax("syntax error at or near \"IF\""));
        }
        let parts = object_name_parts(name)?;
        // Schema, database and role names are bare identifiers in
        // PostgreSQL's grammar.
        let single = || -> PgResult<String> {
            match parts.as_slice() {
                [one] => Ok(one.clone()),
                _ => Err(PgError::syntax("syntax error at or near \".\"")),
            }
        };
        let cat = self.ctx.catalog;
        // A qualified relation name in a missing schema is 3F000 here
        // (get_object_address names the schema), unlike in queries.
        let check_schema = |rel: &[String]| -> PgResult<()> {
            match rel {
                [.., schema, _] => self.namespace_oid(schema).map(|_| ()),
                _ => Ok(()),
            }
        };
        let object = match object_type {
            CommentObject::Table | CommentObject::View => {
                let want_view = matches!(object_type, CommentObject::View);
                check_schema(&parts)?;
                let oid = match self.lookup_relation(&parts)? {
                    Some(Relation::Table(t)) if !want_view => t.oid,
                    Some(Relation::View(v)) if want_view => v.oid,
                    Some(_) => {
                        let kind = if want_view { "view" } else { "table" };
                        return Err(wrong_object_type(parts.last().expect("a name"), kind));
                    }
                    None => return Err(undefined_table(&parts.join("."))),
                };
                Some(ObjectAddress::new(PG_CLASS_OID, oid, 0))
            }
            CommentObject::Column => {
                let Some((column, rel)) = parts.split_last().filter(|(_, r)| !r.is_empty()) else {
                    return Err(PgError::syntax("column name must be qualified"));
                };
                check_schema(rel)?;
                let (oid, rel_name, index) = match self.lookup_relation(rel)? {
                    Some(Relation::Table(t)) => (t.oid, t.name.clone(), t.column_index(column)),
                    Some(Relation::View(v)) => (
                        v.oid,
                        v.name.clone(),
                        v.columns.iter().position(|c| &c.name == column),
                    ),
                    None => return Err(undefined_table(&rel.join("."))),
                };
                let Some(index) = index else {
                    return Err(PgError::new(
                        SqlState::UNDEFINED_COLUMN,
                        format!("column \"{column}\" of relation \"{rel_name}\" does not exist"),
                    ));
                };
                Some(ObjectAddress::new(PG_CLASS_OID, oid, index as i32 + 1))
            }
            CommentObject::Schema => {
                let name = single()?;
                Some(ObjectAddress::new(
                    PG_NAMESPACE_OID,
                    self.namespace_oid(&name)?,
                    0,
                ))
            }
            CommentObject::Database => {
                let name = single()?;
                // A missing database is only a warning, so that pg_dump
                // output restores into a database of another name.
                cat.database_by_name(&name)
                    .map(|d| ObjectAddress::new(PG_DATABASE_OID, d.oid, 0))
            }
            CommentObject::Role => {
                let name = single()?;
                let role = cat.role_by_name(&name).ok_or_else(|| {
                    PgError::new(
                        SqlState::UNDEFINED_OBJECT,
                        format!("role \"{name}\" does not exist"),
                    )
                })?;
                Some(ObjectAddress::new(PG_AUTHID_OID, role.oid, 0))
            }
            CommentObject::User => return Err(PgError::syntax("syntax error at or near \"USER\"")),
            other => {
                return Err(PgError::unsupported(format!(
                    "COMMENT ON {other} is not supported yet"
                )))
            }
        };
        Ok(BoundStatement::Comment {
            object,
            name: parts.join("."),
            comment: comment.clone(),
        })
    }
}
