//! Functions clients call around the catalogs that need no catalog:
//! `pg_encoding_to_char`, `quote_ident` and `pg_size_pretty`.

use common::{PgError, PgResult, SqlState};

use super::string::{int, text};
use crate::encoding::PgEncoding;
use crate::numeric::Numeric;
use crate::Value;

/// pg_encoding_to_char(int4): the encoding's name, '' for an unknown number.
pub fn pg_encoding_to_char(args: &[Value]) -> PgResult<Value> {
    let name = PgEncoding::from_number(int(args, 0)?).map_or("", PgEncoding::name);
    Ok(Value::Text(name.to_string()))
}

/// pg_char_to_encoding(name): the encoding's number, -1 for an unknown name.
pub fn pg_char_to_encoding(args: &[Value]) -> PgResult<Value> {
    let n = PgEncoding::from_name(text(args, 0)?).map_or(-1, PgEncoding::number);
    Ok(Value::Int4(n))
}

/// Keywords quote_ident must quote: PostgreSQL's reserved, type/function-name
/// and column-name keywords (unreserved ones stay bare, as in PostgreSQL).
const NON_UNRESERVED_KEYWORDS: &[&str] = &[
    "all",
    "analyse",
    "analyze",
    "and",
    "any",
    "array",
    "as",
    "asc",
    "asymmetric",
    "authorization",
    "between",
    "bigint",
    "binary",
    "bit",
    "boolean",
    "both",
    "case",
    "cast",
    "char",
    "character",
    "check",
    "coalesce",
    "collate",
    "collation",
    "column",
    "concurrently",
    "constraint",
    "create",
    "cross",
    "current_catalog",
    "current_date",
    "current_role",
    "current_schema",
    "current_time",
    "current_timestamp",
    "current_user",
    "dec",
    "decimal",
    "default",
    "deferrable",
    "desc",
    "distinct",
    "do",
    "else",
    "end",
    "except",
    "exists",
    "extract",
    "false",
    "fetch",
    "float",
    "for",
    "foreign",
    "freeze",
    "from",
    "full",
    "grant",
    "greatest",
    "group",
    "grouping",
    "having",
    "ilike",
    "in",
    "initially",
    "inner",
    "inout",
    "int",
    "integer",
    "intersect",
    "interval",
    "into",
    "is",
    "isnull",
    "join",
    "lateral",
    "leading",
    "least",
    "left",
    "like",
    "limit",
    "localtime",
    "localtimestamp",
    "national",
    "natural",
    "nchar",
    "none",
    "normalize",
    "not",
    "notnull",
    "null",
    "nullif",
    "numeric",
    "offset",
    "on",
    "only",
    "or",
    "order",
    "out",
    "outer",
    "overlaps",
    "overlay",
    "placing",
    "position",
    "precision",
    "primary",
    "real",
    "references",
    "returning",
    "right",
    "row",
    "select",
    "session_user",
    "setof",
    "similar",
    "smallint",
    "some",
    "substring",
    "symmetric",
    "table",
    "tablesample",
    "then",
    "time",
    "timestamp",
    "to",
    "trailing",
    "treat",
    "trim",
    "true",
    "union",
    "unique",
    "user",
    "using",
    "values",
    "varchar",
    "variadic",
    "verbose",
    "when",
    "where",
    "window",
    "with",
    "xmlattributes",
    "xmlconcat",
    "xmlelement",
    "xmlexists",
    "xmlforest",
    "xmlnamespaces",
    "xmlparse",
    "xmlpi",
    "xmlroot",
    "xmlserialize",
    "xmltable",
];

/// Whether `ident` must be double-quoted to be read back as itself.
pub fn ident_needs_quotes(ident: &str) -> bool {
    let mut bytes = ident.bytes();
    let starts_well = bytes
        .next()
        .is_some_and(|b| b.is_ascii_lowercase() || b == b'_');
    let rest_ok = ident
        .bytes()
        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
    !(starts_well && rest_ok) || NON_UNRESERVED_KEYWORDS.contains(&ident)
}

/// quote_ident(text).
pub fn quote_ident(args: &[Value]) -> PgResult<Value> {
    Ok(Value::Text(quote_ident_text(text(args, 0)?)))
}

/// `s` as an identifier: double-quoted when it must be.
pub fn quote_ident_text(s: &str) -> String {
    if ident_needs_quotes(s) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// pg_size_pretty's units: name, the magnitude below which the unit is used,
/// whether the value is half-rounded, and the unit's power of two.
const SIZE_UNITS: &[(&str, i64, bool, u32)] = &[
    ("bytes", 10 * 1024, false, 0),
    ("kB", 20 * 1024 - 1, true, 10),
    ("MB", 20 * 1024 - 1, true, 20),
    ("GB", 20 * 1024 - 1, true, 30),
    ("TB", 20 * 1024 - 1, true, 40),
    ("PB", 20 * 1024 - 1, true, 50),
];

fn half_rounded(x: i64) -> i64 {
    (x + if x < 0 { -1 } else { 1 }) / 2
}

/// PostgreSQL 15's size_pretty: each step divides keeping one extra bit
/// for the final half-rounding.
fn size_pretty(mut size: i64) -> String {
    for (i, &(name, limit, round, bits)) in SIZE_UNITS.iter().enumerate() {
        let next = SIZE_UNITS.get(i + 1);
        if next.is_none() || size.abs() < limit {
            if round {
                size = half_rounded(size);
            }
            return format!("{size} {name}");
        }
        let (_, _, next_round, next_bits) = next.copied().unwrap_or(SIZE_UNITS[0]);
        let shift = next_bits - bits - u32::from(next_round) + u32::from(round);
        size /= 1i64 << shift;
    }
    unreachable!("the last unit always applies")
}

/// pg_size_pretty(bigint).
pub fn pg_size_pretty(args: &[Value]) -> PgResult<Value> {
    Ok(Value::Text(size_pretty(int(args, 0)?)))
}

/// pg_size_pretty(numeric): small values keep their digits ("1.5 bytes");
/// larger ones are truncated to whole bytes first, as PostgreSQL's
/// truncating divisions do.
pub fn pg_size_pretty_numeric(args: &[Value]) -> PgResult<Value> {
    let Some(Value::Numeric(n)) = args.first() else {
        return Err(PgError::internal(
            "pg_size_pretty(numeric) of a non-numeric",
        ));
    };
    let limit = Numeric::from_i64(SIZE_UNITS[0].1);
    if n.abs() < limit {
        let mut s = String::new();
        n.write_text(&mut s);
        return Ok(Value::Text(format!("{s} bytes")));
    }
    let whole = n.div_trunc(&Numeric::from_i64(1))?.to_i64().map_err(|_| {
        PgError::new(
            SqlState::NUMERIC_VALUE_OUT_OF_RANGE,
            "pg_size_pretty argument out of range",
        )
    })?;
    Ok(Value::Text(size_pretty(whole)))
}

// ----- catalog inspection with nothing to inspect yet -----

/// pg_get_expr(pg_node_tree, relation [, pretty]): expressions are stored
/// as their deparsed text (pg_attrdef.adbin), so it is the text itself.
pub fn pg_get_expr(args: &[Value]) -> PgResult<Value> {
    Ok(args.first().cloned().unwrap_or(Value::Null))
}

/// Functions describing objects that cannot exist yet (constraints, indexes,
/// views, extended statistics) or that have no comments: NULL, as
/// PostgreSQL returns for an oid naming no such object.
pub fn no_such_object(_: &[Value]) -> PgResult<Value> {
    Ok(Value::Null)
}

/// pg_is_in_recovery(): sessions only run once recovery has finished.
pub fn pg_is_in_recovery(_: &[Value]) -> PgResult<Value> {
    Ok(Value::Bool(false))
}

fn check_privileges(spec: &str, allowed: &[&str]) -> PgResult<()> {
    for part in spec.split(',') {
        let word = part.trim().to_ascii_uppercase();
        let word = word
            .strip_suffix(" WITH GRANT OPTION")
            .unwrap_or(&word)
            .trim();
        if !allowed.contains(&word) {
            return Err(PgError::new(
                SqlState::INVALID_PARAMETER_VALUE,
                format!("unrecognized privilege type: \"{}\"", part.trim()),
            ));
        }
    }
    Ok(())
}

/// The privilege-check functions: every role holds every privilege while
/// GRANT/REVOKE do not exist; the privilege string is still checked.
fn has_privilege(args: &[Value], allowed: &[&str]) -> PgResult<Value> {
    check_privileges(text(args, args.len() - 1)?, allowed)?;
    Ok(Value::Bool(true))
}

pub fn has_table_privilege(args: &[Value]) -> PgResult<Value> {
    has_privilege(
        args,
        &[
            "SELECT",
            "INSERT",
            "UPDATE",
            "DELETE",
            "TRUNCATE",
            "REFERENCES",
            "TRIGGER",
        ],
    )
}

pub fn has_schema_privilege(args: &[Value]) -> PgResult<Value> {
    has_privilege(args, &["CREATE", "USAGE"])
}

pub fn has_database_privilege(args: &[Value]) -> PgResult<Value> {
    has_privilege(args, &["CREATE", "CONNECT", "TEMPORARY", "TEMP"])
}

fn builtin_of(args: &[Value]) -> Option<&'static super::BuiltinFunction> {
    match args.first() {
        Some(Value::Oid(oid)) => super::builtin_by_oid(*oid),
        _ => None,
    }
}

/// pg_get_function_result(oid).
pub fn pg_get_function_result(args: &[Value]) -> PgResult<Value> {
    Ok(builtin_of(args).map_or(Value::Null, |f| {
        Value::Text(crate::DataType::new(f.ret).display_name())
    }))
}

/// pg_get_function_arguments(oid): the argument types, unnamed.
pub fn pg_get_function_arguments(args: &[Value]) -> PgResult<Value> {
    Ok(builtin_of(args).map_or(Value::Null, |f| {
        let mut names: Vec<String> = f
            .arg_types
            .iter()
            .map(|t| crate::DataType::new(*t).display_name())
            .collect();
        if f.variadic {
            if let Some(last) = names.last_mut() {
                *last = format!("VARIADIC {last}[]");
            }
        }
        Value::Text(names.join(", "))
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn size_pretty_matches_postgres() {
        for (n, want) in [
            (0, "0 bytes"),
            (10239, "10239 bytes"),
            (10240, "10 kB"),
            (8192 * 1024, "8192 kB"),
            (20 * 1024 * 1024, "20 MB"),
            (123_456_789_012, "115 GB"),
            (-10240, "-10 kB"),
            (i64::MAX, "8192 PB"),
        ] {
            assert_eq!(size_pretty(n), want, "pg_size_pretty({n})");
        }
    }

    #[test]
    fn quote_ident_quotes_what_postgres_quotes() {
        assert!(!ident_needs_quotes("abc_1"));
        assert!(ident_needs_quotes("Abc"));
        assert!(ident_needs_quotes("1a"));
        assert!(ident_needs_quotes("select"));
        assert!(!ident_needs_quotes("name"));
        assert!(ident_needs_quotes("a b"));
    }
}
