//! User-defined types in statements: resolving a type name to an enum type
//! of the catalog, and CREATE TYPE ... AS ENUM, ALTER TYPE and DROP TYPE.

use std::sync::Arc;

use ::types::array::ArrayValue;
use ::types::{DataType, TypeId, Value};
use catalog::user_types::{LabelPosition, UserType};
use common::{PgError, PgResult, SqlState};
use sqlparser::ast;

use super::{object_name_parts, Binder};
use crate::expr::Expr;
use crate::plan::{BoundStatement, EnumAlteration};

fn undefined_type(name: &str) -> PgError {
    PgError::new(
        SqlState::UNDEFINED_OBJECT,
        format!("type \"{name}\" does not exist"),
    )
}

impl Binder<'_, '_> {
    /// A type as written in SQL: a built-in type's name first (pg_catalog
    /// comes first on every search path), then a user-defined type.
    pub(crate) fn bind_data_type(&self, dt: &ast::DataType) -> PgResult<DataType> {
        match super::types::parse_type_name(&dt.to_string()) {
            Ok(t) => Ok(t),
            Err(e) => match self.user_data_type(dt)? {
                Some(t) => Ok(t),
                None => Err(e),
            },
        }
    }

    fn user_data_type(&self, dt: &ast::DataType) -> PgResult<Option<DataType>> {
        Ok(match dt {
            ast::DataType::Custom(name, modifiers) if modifiers.is_empty() => self
                .lookup_user_type(&object_name_parts(name)?)?
                .map(|t| match &t.domain {
                    // A domain is its base type, modifier included (varchar(3)).
                    Some(d) => DataType::with_typmod(t.type_id(), d.base_typmod),
                    None => DataType::new(t.type_id()),
                }),
            ast::DataType::Array(
                ast::ArrayElemTypeDef::SquareBracket(inner, _)
                | ast::ArrayElemTypeDef::AngleBracket(inner),
            ) => self
                .user_data_type(inner)?
                .and_then(|t| t.id.array_type())
                .map(DataType::new),
            _ => None,
        })
    }

    /// The user-defined type `parts` names: schema-qualified, or the first
    /// of the search path's schemas that has one of the name.
    pub(crate) fn lookup_user_type(&self, parts: &[String]) -> PgResult<Option<Arc<UserType>>> {
        let cat = self.ctx.catalog;
        let db = self.ctx.db_oid;
        Ok(match parts {
            [name] => self.ctx.search_path.iter().find_map(|s| {
                let ns = cat.namespace_by_name(db, s)?;
                cat.user_type_by_name(db, ns.oid, name).cloned()
            }),
            [schema, name] => {
                let ns = self.namespace_oid(schema)?;
                cat.user_type_by_name(db, ns, name).cloned()
            }
            _ => {
                return Err(PgError::syntax(
                    "improper qualified name (too many dotted names)",
                ))
            }
        })
    }

    /// CREATE TYPE name AS ENUM (labels).
    pub(super) fn bind_create_type(
        &mut self,
        name: &ast::ObjectName,
        representation: Option<&ast::UserDefinedTypeRepresentation>,
    ) -> PgResult<BoundStatement> {
        let Some(ast::UserDefinedTypeRepresentation::Enum { labels }) = representation else {
            return Err(PgError::unsupported(
                "CREATE TYPE is supported only for enum types (AS ENUM)",
            ));
        };
        let (namespace, name) = self.new_type_name(name)?;
        Ok(BoundStatement::CreateEnumType {
            namespace,
            name,
            labels: labels.iter().map(|l| l.value.clone()).collect(),
        })
    }

    /// The enum type ALTER TYPE names (42809 for another kind of type).
    fn enum_type_named(&self, name: &ast::ObjectName) -> PgResult<Arc<UserType>> {
        let parts = object_name_parts(name)?;
        let found = self.lookup_user_type(&parts)?;
        if let Some(t) = found.as_ref().filter(|t| t.domain.is_none()) {
            return Ok(t.clone());
        }
        let joined = parts.join(".");
        if found.is_some() || super::types::parse_type_name(&joined).is_ok() {
            return Err(PgError::new(
                SqlState::WRONG_OBJECT_TYPE,
                format!("{joined} is not an enum"),
            ));
        }
        Err(undefined_type(&joined))
    }

    /// ALTER TYPE name ADD VALUE ... | RENAME VALUE ... .
    pub(super) fn bind_alter_type(&mut self, at: &ast::AlterType) -> PgResult<BoundStatement> {
        let ty = self.enum_type_named(&at.name)?;
        let alteration = match &at.operation {
            ast::AlterTypeOperation::AddValue(a) => EnumAlteration::AddValue {
                label: a.value.value.clone(),
                position: match &a.position {
                    None => LabelPosition::Last,
                    Some(ast::AlterTypeAddValuePosition::Before(n)) => {
                        LabelPosition::Before(n.value.clone())
                    }
                    Some(ast::AlterTypeAddValuePosition::After(n)) => {
                        LabelPosition::After(n.value.clone())
                    }
                },
                if_not_exists: a.if_not_exists,
            },
            ast::AlterTypeOperation::RenameValue(r) => EnumAlteration::RenameValue {
                from: r.from.value.clone(),
                to: r.to.value.clone(),
            },
            ast::AlterTypeOperation::Rename(_) => {
                return Err(PgError::unsupported(
                    "ALTER TYPE ... RENAME TO is not supported",
                ))
            }
        };
        Ok(BoundStatement::AlterEnumType {
            type_oid: ty.oid,
            alteration,
        })
    }

    /// DROP TYPE [IF EXISTS] names [CASCADE | RESTRICT].
    pub(super) fn bind_drop_type(
        &mut self,
        names: &[Vec<String>],
        if_exists: bool,
        cascade: bool,
        domain: bool,
    ) -> PgResult<BoundStatement> {
        let mut types = Vec::new();
        let mut missing = Vec::new();
        for n in names {
            match self.lookup_user_type(n)? {
                Some(t) if domain && t.domain.is_none() => {
                    return Err(PgError::new(
                        SqlState::WRONG_OBJECT_TYPE,
                        format!("\"{}\" is not a domain", n.join(".")),
                    ))
                }
                Some(t) => types.push(t),
                None if if_exists => missing.push(n.join(".")),
                None if super::types::parse_type_name(&n.join(".")).is_ok() => {
                    return Err(PgError::new(
                        SqlState::DEPENDENT_OBJECTS_STILL_EXIST,
                        format!(
                            "cannot drop type {} because it is required by the database system",
                            n.join(".")
                        ),
                    ))
                }
                None => return Err(undefined_type(&n.join("."))),
            }
        }
        Ok(BoundStatement::DropType {
            types,
            missing,
            cascade,
            domain,
        })
    }
}

/// enum_first, enum_last and enum_range over an enum type. They depend on
/// the type (and constant bounds) alone, so they fold to constants here;
/// enum DDL changes the catalog, which makes plans bind again.
pub(super) fn bind_enum_function(name: &str, args: &[Expr]) -> PgResult<Option<Expr>> {
    if !matches!(name, "enum_first" | "enum_last" | "enum_range") {
        return Ok(None);
    }
    // enum_range(NULL, 'b'::mood): an untyped NULL takes the other's type.
    let Some(TypeId::Enum(ty)) = args
        .iter()
        .map(|a| a.data_type().id)
        .find(|t| *t != TypeId::Unknown)
    else {
        return Ok(None);
    };
    let typed = |e: &Expr| {
        matches!(e.data_type().id, TypeId::Unknown) || e.data_type().id == TypeId::Enum(ty)
    };
    let constant = |e: &Expr| match e {
        Expr::Const(Value::Enum(d), _) => Ok(Some(d.oid)),
        Expr::Const(Value::Text(s), _) => match ::types::enums::parse(ty, s)? {
            Value::Enum(d) => Ok(Some(d.oid)),
            _ => Ok(None),
        },
        Expr::Const(Value::Null, _) => Ok(None),
        _ => Err(PgError::unsupported(
            "enum_range with bounds that are not constants is not supported",
        )),
    };
    let array = |items: Vec<Value>| {
        Expr::Const(
            Value::array(ArrayValue::from_items(TypeId::Enum(ty), items)),
            DataType::new(TypeId::EnumArray(ty)),
        )
    };
    Ok(Some(match (name, args) {
        ("enum_first" | "enum_last", [_]) => Expr::Const(
            ::types::enums::first_or_last(ty, name == "enum_last")?,
            DataType::new(TypeId::Enum(ty)),
        ),
        ("enum_range", [_]) => array(::types::enums::range(ty, None, None)?),
        ("enum_range", [a, b]) if typed(a) && typed(b) => {
            array(::types::enums::range(ty, constant(a)?, constant(b)?)?)
        }
        _ => return Ok(None),
    }))
}

impl Binder<'_, '_> {
    /// Where CREATE TYPE / CREATE DOMAIN puts `name`: its schema (not
    /// pg_catalog, 42501) and its unqualified name, which no type or
    /// relation there may have already (42710: a table's row type has it).
    pub(super) fn new_type_name(&self, name: &ast::ObjectName) -> PgResult<(common::Oid, String)> {
        let parts = object_name_parts(name)?;
        let (namespace, name) = self.creation_namespace(&parts)?;
        if namespace == catalog::PG_CATALOG_NAMESPACE {
            return Err(PgError::new(
                SqlState::INSUFFICIENT_PRIVILEGE,
                "permission denied for schema pg_catalog",
            ));
        }
        let cat = self.ctx.catalog;
        if cat
            .user_type_by_name(self.ctx.db_oid, namespace, &name)
            .is_some()
            || cat.relation_exists(self.ctx.db_oid, namespace, &name)
        {
            return Err(PgError::new(
                SqlState::DUPLICATE_OBJECT,
                format!("type \"{name}\" already exists"),
            ));
        }
        Ok((namespace, name))
    }
}
