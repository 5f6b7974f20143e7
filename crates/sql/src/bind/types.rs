//! SQL type names to types with typmods.

use common::{PgError, PgResult, SqlState};
use types::{DataType, TypeId};

/// The element part of an array type name, if it is one.
fn strip_array_suffix(name: &str) -> Option<&str> {
    let t = name.trim_end();
    if let Some(open) = t.strip_suffix(']').and_then(|s| s.rfind('[')) {
        let inside = &t[open + 1..t.len() - 1];
        if inside.trim().chars().all(|c| c.is_ascii_digit()) {
            let rest = t[..open].trim_end();
            return Some(rest.strip_suffix(" array").unwrap_or(rest));
        }
    }
    t.strip_suffix(" array")
}

/// Parses a type name as written in SQL ("integer", "varchar(10)",
/// "numeric(10,2)", "timestamp with time zone", "char", ...).
pub fn parse_type_name(name: &str) -> PgResult<DataType> {
    let lower = name.trim().to_lowercase();
    // `elem[]`, `elem[][]`, `elem[3]`, `elem ARRAY`, `elem ARRAY[3]`: the
    // array type over `elem` (dimensions are not part of the type).
    if let Some(elem) = strip_array_suffix(&lower) {
        let elem = parse_type_name(elem)?;
        if elem.id.is_array() {
            return Ok(elem);
        }
        return elem
            .id
            .array_type()
            .map(|a| DataType::with_typmod(a, elem.typmod))
            .ok_or_else(|| {
                PgError::new(
                    SqlState::UNDEFINED_OBJECT,
                    format!("type \"{}[]\" does not exist", elem.id.name()),
                )
            });
    }
    let (base, args) = match lower.find('(') {
        Some(i) => {
            let close = lower.rfind(')').unwrap_or(lower.len());
            let args: Vec<&str> = lower[i + 1..close].split(',').map(str::trim).collect();
            let rest = lower[close.min(lower.len())..]
                .trim_start_matches(')')
                .trim();
            (
                format!("{} {}", lower[..i].trim(), rest).trim().to_string(),
                args,
            )
        }
        None => (lower.clone(), Vec::new()),
    };
    let base = base.trim_start_matches("pg_catalog.");
    let nums: Vec<i32> = args
        .iter()
        .map(|a| {
            a.parse::<i32>()
                .map_err(|_| PgError::syntax(format!("invalid type modifier in \"{name}\"")))
        })
        .collect::<PgResult<_>>()?;
    let id = match base {
        "int" | "integer" | "int4" | "serial" | "serial4" => TypeId::Int4,
        "smallint" | "int2" | "smallserial" | "serial2" => TypeId::Int2,
        "bigint" | "int8" | "bigserial" | "serial8" => TypeId::Int8,
        "real" | "float4" => TypeId::Float4,
        "double precision" | "double" | "float8" => TypeId::Float8,
        "float" => {
            if nums.first().is_some_and(|&p| p <= 24) {
                TypeId::Float4
            } else {
                TypeId::Float8
            }
        }
        "numeric" | "decimal" | "dec" => TypeId::Numeric,
        "boolean" | "bool" => TypeId::Bool,
        "text" => TypeId::Text,
        "varchar" | "character varying" | "char varying" => TypeId::Varchar,
        "char" | "character" | "bpchar" | "nchar" => TypeId::Bpchar,
        "name" => TypeId::Name,
        "oid" => TypeId::Oid,
        "regclass" => TypeId::RegClass,
        "regtype" => TypeId::RegType,
        "regproc" => TypeId::RegProc,
        "regprocedure" => TypeId::RegProcedure,
        "regnamespace" => TypeId::RegNamespace,
        "regrole" => TypeId::RegRole,
        "_text" => TypeId::TextArray,
        "_name" => TypeId::NameArray,
        "_int2" | "int2vector" => TypeId::Int2Array,
        "_int4" => TypeId::Int4Array,
        "_int8" => TypeId::Int8Array,
        "_oid" | "oidvector" => TypeId::OidArray,
        "_bytea" => TypeId::ByteaArray,
        "_uuid" => TypeId::UuidArray,
        a if a.starts_with('_') && TypeId::ALL.iter().any(|t| t.name() == a) => TypeId::ALL
            .iter()
            .copied()
            .find(|t| t.name() == a)
            .unwrap_or(TypeId::TextArray),
        "bytea" => TypeId::Bytea,
        "uuid" => TypeId::Uuid,
        "inet" => TypeId::Inet,
        "cidr" => TypeId::Cidr,
        "macaddr" => TypeId::MacAddr,
        "macaddr8" => TypeId::MacAddr8,
        "money" => TypeId::Money,
        "tid" => TypeId::Tid,
        "xid" => TypeId::Xid,
        "cid" => TypeId::Cid,
        "date" => TypeId::Date,
        "timestamp" | "timestamp without time zone" => TypeId::Timestamp,
        "timestamptz" | "timestamp with time zone" => TypeId::Timestamptz,
        "interval" => TypeId::Interval,
        "json" => TypeId::Json,
        "jsonb" => TypeId::Jsonb,
        // The quoted name is the one-byte type, not character(1).
        "\"char\"" | "pg_catalog.\"char\"" => TypeId::Char,
        _ => {
            return Err(PgError::new(
                SqlState::UNDEFINED_OBJECT,
                format!("type \"{base}\" does not exist"),
            ))
        }
    };
    if matches!(
        base,
        "serial" | "serial4" | "serial2" | "smallserial" | "bigserial" | "serial8"
    ) {
        return Err(PgError::unsupported(
            "serial columns need sequences, which are not supported yet",
        ));
    }
    let typmod = match id {
        TypeId::Varchar | TypeId::Bpchar => match nums.as_slice() {
            [] if id == TypeId::Bpchar && base != "bpchar" => 1 + 4,
            [] => -1,
            [n] if *n >= 1 && *n <= 10_485_760 => n + 4,
            [n] => {
                return Err(PgError::new(
                    SqlState::INVALID_PARAMETER_VALUE,
                    format!(
                        "length for type {} must be at least 1",
                        if id == TypeId::Varchar {
                            "varchar"
                        } else {
                            "char"
                        }
                    ),
                )
                .with_detail(format!("got {n}")))
            }
            _ => {
                return Err(PgError::syntax(format!(
                    "invalid type modifier in \"{name}\""
                )))
            }
        },
        TypeId::Numeric => match nums.as_slice() {
            [] => -1,
            [p] if (1..=1000).contains(p) => (p << 16) + 4,
            [p, s] if (1..=1000).contains(p) && (-1000..=1000).contains(s) => {
                ((p << 16) | (s & 0xffff)) + 4
            }
            _ => {
                return Err(PgError::new(
                    SqlState::INVALID_PARAMETER_VALUE,
                    "NUMERIC precision must be between 1 and 1000",
                ))
            }
        },
        _ => -1,
    };
    Ok(DataType::with_typmod(id, typmod))
}

/// PostgreSQL's format_type: "character varying(10)", "numeric(10,2)", "integer".
pub fn format_type(ty: DataType) -> String {
    let base = ty.id.display_name();
    match ty.id {
        TypeId::Varchar | TypeId::Bpchar if ty.typmod >= 4 => format!("{base}({})", ty.typmod - 4),
        TypeId::Numeric if ty.typmod >= 4 => {
            let t = ty.typmod - 4;
            format!("numeric({},{})", t >> 16, t & 0xffff)
        }
        _ => base.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert_eq!(parse_type_name("integer").unwrap().id, TypeId::Int4);
        assert_eq!(
            parse_type_name("CHAR(1000)").unwrap(),
            DataType::with_typmod(TypeId::Bpchar, 1004)
        );
        assert_eq!(
            parse_type_name("character varying(10)").unwrap(),
            DataType::with_typmod(TypeId::Varchar, 14)
        );
        assert_eq!(
            parse_type_name("timestamp with time zone").unwrap().id,
            TypeId::Timestamptz
        );
        assert!(parse_type_name("blob").is_err());
    }
}
