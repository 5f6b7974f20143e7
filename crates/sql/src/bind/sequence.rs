//! CREATE SEQUENCE, DROP SEQUENCE and serial columns: the parameters as
//! PostgreSQL's sequence.c (init_params) settles them.

use std::sync::Arc;

use catalog::Sequence;
use common::{Oid, PgError, PgResult, SqlState};
use sqlparser::ast;
use types::TypeId;

use super::{object_name_parts, Binder};
use crate::plan::BoundStatement;

/// The serial pseudo-types: the column's real type.
pub(crate) fn serial_type(name: &str) -> Option<TypeId> {
    match name {
        "serial" | "serial4" => Some(TypeId::Int4),
        "bigserial" | "serial8" => Some(TypeId::Int8),
        "smallserial" | "serial2" => Some(TypeId::Int2),
        _ => None,
    }
}

fn type_bounds(ty: TypeId) -> (i64, i64) {
    match ty {
        TypeId::Int2 => (i16::MIN as i64, i16::MAX as i64),
        TypeId::Int4 => (i32::MIN as i64, i32::MAX as i64),
        _ => (i64::MIN, i64::MAX),
    }
}

fn invalid(msg: String) -> PgError {
    PgError::new(SqlState::INVALID_PARAMETER_VALUE, msg)
}

/// Options as given; None where the statement left them out.
#[derive(Default)]
pub(crate) struct SequenceOptions {
    pub increment: Option<i64>,
    pub min: Option<Option<i64>>,
    pub max: Option<Option<i64>>,
    pub start: Option<i64>,
    pub cache: Option<i64>,
    pub cycle: Option<bool>,
}

/// A sequence of type `ty` with PostgreSQL's defaults for what `o` leaves
/// out, checked as init_params checks it (22023).
pub(crate) fn settle(name: &str, ty: TypeId, o: &SequenceOptions) -> PgResult<Sequence> {
    let increment = o.increment.unwrap_or(1);
    if increment == 0 {
        return Err(invalid("INCREMENT must not be zero".into()));
    }
    let (lo, hi) = type_bounds(ty);
    let max = o
        .max
        .flatten()
        .unwrap_or(if increment > 0 { hi } else { -1 });
    let min = o
        .min
        .flatten()
        .unwrap_or(if increment > 0 { 1 } else { lo });
    let type_name = ty.display_name();
    if max < lo || max > hi {
        return Err(invalid(format!(
            "MAXVALUE ({max}) is out of range for sequence data type {type_name}"
        )));
    }
    if min < lo || min > hi {
        return Err(invalid(format!(
            "MINVALUE ({min}) is out of range for sequence data type {type_name}"
        )));
    }
    if min >= max {
        return Err(invalid(format!(
            "MINVALUE ({min}) must be less than MAXVALUE ({max})"
        )));
    }
    let start = o.start.unwrap_or(if increment > 0 { min } else { max });
    if start < min {
        return Err(invalid(format!(
            "START value ({start}) cannot be less than MINVALUE ({min})"
        )));
    }
    if start > max {
        return Err(invalid(format!(
            "START value ({start}) cannot be greater than MAXVALUE ({max})"
        )));
    }
    let cache = o.cache.unwrap_or(1);
    if cache <= 0 {
        return Err(invalid(format!(
            "CACHE ({cache}) must be greater than zero"
        )));
    }
    Ok(Sequence {
        oid: 0,
        name: name.to_string(),
        namespace: 0,
        db_oid: 0,
        relfilenode: 0,
        type_oid: ty.oid(),
        start,
        increment,
        min,
        max,
        cache,
        cycle: o.cycle.unwrap_or(false),
        owned_by: None,
    })
}

impl Binder<'_, '_> {
    /// The oid of the relation `parts` names (`[name]` through the
    /// search_path, or `[schema, name]`), None when there is none; 42601
    /// for more dotted parts.
    pub(crate) fn relation_oid(&self, parts: &[String]) -> PgResult<Option<common::Oid>> {
        let cat = self.ctx.catalog;
        let db = self.ctx.db_oid;
        Ok(match parts {
            [name] => self
                .ctx
                .search_path
                .iter()
                .filter_map(|s| cat.namespace_by_name(db, s))
                .find_map(|ns| cat.relation_oid(db, ns.oid, name)),
            [schema, name] => cat
                .namespace_by_name(db, schema)
                .and_then(|ns| cat.relation_oid(db, ns.oid, name)),
            _ => {
                return Err(PgError::syntax(
                    "improper qualified name (too many dotted names)",
                ))
            }
        })
    }

    /// An option's value: an integer literal, possibly signed.
    fn sequence_number(&mut self, e: &ast::Expr) -> PgResult<i64> {
        let (negative, inner) = match e {
            ast::Expr::UnaryOp {
                op: ast::UnaryOperator::Minus,
                expr,
            } => (true, &**expr),
            ast::Expr::UnaryOp {
                op: ast::UnaryOperator::Plus,
                expr,
            } => (false, &**expr),
            other => (false, other),
        };
        let text = match inner {
            ast::Expr::Value(v) => match &v.value {
                ast::Value::Number(n, _) => n.clone(),
                _ => String::new(),
            },
            _ => String::new(),
        };
        let text = if negative { format!("-{text}") } else { text };
        text.parse::<i64>().map_err(|_| {
            PgError::new(
                SqlState::SYNTAX_ERROR,
                format!("syntax error at or near \"{e}\""),
            )
        })
    }

    /// CREATE SEQUENCE's (or an identity column's) options.
    fn sequence_options(&mut self, options: &[ast::SequenceOptions]) -> PgResult<SequenceOptions> {
        let mut o = SequenceOptions::default();
        for opt in options {
            match opt {
                ast::SequenceOptions::IncrementBy(e, _) => {
                    o.increment = Some(self.sequence_number(e)?)
                }
                ast::SequenceOptions::MinValue(e) => {
                    o.min = Some(e.as_ref().map(|e| self.sequence_number(e)).transpose()?)
                }
                ast::SequenceOptions::MaxValue(e) => {
                    o.max = Some(e.as_ref().map(|e| self.sequence_number(e)).transpose()?)
                }
                ast::SequenceOptions::StartWith(e, _) => o.start = Some(self.sequence_number(e)?),
                ast::SequenceOptions::Cache(e) => o.cache = Some(self.sequence_number(e)?),
                ast::SequenceOptions::Cycle(no) => o.cycle = Some(!no),
            }
        }
        Ok(o)
    }

    pub(crate) fn bind_create_sequence(
        &mut self,
        name: &ast::ObjectName,
        if_not_exists: bool,
        data_type: Option<&ast::DataType>,
        options: &[ast::SequenceOptions],
        owned_by: Option<&ast::ObjectName>,
    ) -> PgResult<BoundStatement> {
        let parts = object_name_parts(name)?;
        let (namespace, name) = self.creation_namespace(&parts)?;
        let ty = match data_type {
            None => TypeId::Int8,
            Some(t) => {
                let ty = super::types::parse_type_name(&t.to_string())?.id;
                if !matches!(ty, TypeId::Int2 | TypeId::Int4 | TypeId::Int8) {
                    return Err(invalid(
                        "sequence type must be smallint, integer, or bigint".into(),
                    ));
                }
                ty
            }
        };
        let o = self.sequence_options(options)?;
        let mut seq = settle(&name, ty, &o)?;
        seq.namespace = namespace;
        seq.db_oid = self.ctx.db_oid;
        if let Some(owner) = owned_by {
            let parts = object_name_parts(owner)?;
            if !(parts.len() == 1 && parts[0] == "none") {
                let Some((column, table)) = parts.split_last() else {
                    return Err(PgError::syntax("invalid OWNED BY option"));
                };
                if table.is_empty() {
                    return Err(PgError::new(
                        SqlState::FEATURE_NOT_SUPPORTED,
                        "invalid OWNED BY option",
                    )
                    .with_hint("Specify OWNED BY table.column or OWNED BY NONE."));
                }
                let t = self.require_table(table)?;
                let index = t.column_index(column).ok_or_else(|| {
                    PgError::new(
                        SqlState::UNDEFINED_COLUMN,
                        format!(
                            "column \"{column}\" of relation \"{}\" does not exist",
                            t.name
                        ),
                    )
                })?;
                if t.namespace != namespace {
                    return Err(PgError::new(
                        SqlState::OBJECT_NOT_IN_PREREQUISITE_STATE,
                        "sequence must be in same schema as table it is linked to",
                    ));
                }
                seq.owned_by = Some((t.oid, index as i16 + 1));
            }
        }
        Ok(BoundStatement::CreateSequence { seq, if_not_exists })
    }

    /// DROP SEQUENCE's sequences; a name of another kind of relation is 42809.
    /// ALTER SEQUENCE ... OWNED BY table.column | NONE, or OWNER TO the
    /// role that owns every relation (a no-op, as for ALTER TABLE).
    pub(crate) fn bind_alter_sequence(
        &mut self,
        name: &[String],
        action: &crate::parse::SequenceAlter,
    ) -> PgResult<BoundStatement> {
        let cat = self.ctx.catalog;
        let found = self.relation_oid(name)?;
        let Some(oid) = found else {
            return Err(PgError::new(
                SqlState::UNDEFINED_TABLE,
                format!("relation \"{}\" does not exist", name.join(".")),
            ));
        };
        let Some(seq) = cat.sequences.get(&oid) else {
            return Err(PgError::new(
                SqlState::WRONG_OBJECT_TYPE,
                format!("\"{}\" is not a sequence", name.join(".")),
            ));
        };
        let owned_by = match action {
            crate::parse::SequenceAlter::OwnerTo(role) => {
                let role = ast::Owner::Ident(ast::Ident::new(role.clone()));
                self.bind_owner_to(&role)?;
                return Ok(BoundStatement::NoOp("ALTER SEQUENCE".into()));
            }
            crate::parse::SequenceAlter::OwnedBy(None) => None,
            crate::parse::SequenceAlter::OwnedBy(Some(parts)) => {
                let (column, table_parts) = parts.split_last().expect("two parts at least");
                let table = self.require_table(table_parts)?;
                if table.namespace != seq.namespace {
                    return Err(PgError::new(
                        SqlState::OBJECT_NOT_IN_PREREQUISITE_STATE,
                        "sequence must be in same schema as table it is linked to",
                    ));
                }
                let index = table.column_index(column).ok_or_else(|| {
                    PgError::new(
                        SqlState::UNDEFINED_COLUMN,
                        format!(
                            "column \"{column}\" of relation \"{}\" does not exist",
                            table.name
                        ),
                    )
                })?;
                Some((table.oid, index as i16 + 1))
            }
        };
        Ok(BoundStatement::AlterSequenceOwnedBy {
            sequence: Arc::new(seq.clone()),
            owned_by,
        })
    }

    pub(crate) fn bind_drop_sequence(
        &mut self,
        names: &[Vec<String>],
        if_exists: bool,
    ) -> PgResult<BoundStatement> {
        let cat = self.ctx.catalog;
        let mut sequences = Vec::new();
        let mut missing = Vec::new();
        for n in names {
            let found = self.relation_oid(n)?;
            match found {
                Some(oid) => match cat.sequences.get(&oid) {
                    Some(q) => sequences.push(Arc::new(q.clone())),
                    None => {
                        return Err(PgError::new(
                            SqlState::WRONG_OBJECT_TYPE,
                            format!("\"{}\" is not a sequence", n.join(".")),
                        ))
                    }
                },
                None if if_exists => missing.push(n.join(".")),
                None => {
                    return Err(PgError::new(
                        SqlState::UNDEFINED_TABLE,
                        format!("sequence \"{}\" does not exist", n.join(".")),
                    ))
                }
            }
        }
        Ok(BoundStatement::DropSequence { sequences, missing })
    }

    /// The sequence a serial column gets: `table_column_seq`, with a number
    /// appended while that name is taken (PostgreSQL's ChooseRelationName).
    pub(crate) fn serial_sequence(
        &mut self,
        table: &str,
        namespace: Oid,
        column: &str,
        ty: TypeId,
        taken: &[String],
    ) -> PgResult<Sequence> {
        self.owned_sequence(table, namespace, column, ty, taken, &[])
    }

    /// The sequence of a serial or identity column, named as PostgreSQL
    /// names it (`t_c_seq`, numbered when taken), with `options`.
    pub(crate) fn owned_sequence(
        &mut self,
        table: &str,
        namespace: Oid,
        column: &str,
        ty: TypeId,
        taken: &[String],
        options: &[ast::SequenceOptions],
    ) -> PgResult<Sequence> {
        let base = format!("{table}_{column}_seq");
        let mut name = base.clone();
        let mut n = 0;
        while self
            .ctx
            .catalog
            .relation_exists(self.ctx.db_oid, namespace, &name)
            || taken.contains(&name)
        {
            n += 1;
            name = format!("{base}{n}");
        }
        let mut seq = settle(&name, ty, &self.sequence_options(options)?)?;
        seq.namespace = namespace;
        seq.db_oid = self.ctx.db_oid;
        Ok(seq)
    }
}

/// The DEFAULT of a serial column: nextval of its sequence, qualified
/// outside public.
pub(crate) fn nextval_default(schema: &str, seq: &str) -> String {
    let q = |s: &str| {
        if s.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        {
            s.to_string()
        } else {
            format!("\"{}\"", s.replace('"', "\"\""))
        }
    };
    let name = if schema == "public" {
        q(seq)
    } else {
        format!("{}.{}", q(schema), q(seq))
    };
    format!("nextval('{}'::regclass)", name.replace('\'', "''"))
}
