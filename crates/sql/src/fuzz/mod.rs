//! Fuzz target for the SQL front end: statement splitting, parsing, the
//! parse cache and binding, fed with grammar-generated statements and byte
//! mutations of a seed corpus of real ones (`corpus.sql`).
//!
//! Invariants checked on every input, beyond "no panic":
//! - a tree from the parse cache equals a direct parse of the same text
//!   (README invariant 4), also for a sibling text whose number literals
//!   differ, which is what makes the cache hit;
//! - every error carries a SQLSTATE of a user error, never XX000.

mod generate;

use std::sync::Arc;

use catalog::{
    CatalogData, Column, Database, Namespace, Role, Table, BOOTSTRAP_SUPERUSER, FIRST_NORMAL_OID,
    PG_CATALOG_NAMESPACE, POSTGRES_DB_OID, PUBLIC_NAMESPACE,
};
use common::fuzz::{Mutator, Rng};
use common::{PgError, PgResult};
use types::{DataType, TypeId};

use crate::bind::{bind_statement, BindContext};
use crate::parse::{parse_statement, split_statements, ParsedStatement, StatementText};
use crate::parse_cache::ParseCache;

pub use generate::{nesting_bound, SqlGen};

/// Real statements, one a line (lines starting with `--` are comments).
pub const CORPUS: &str = include_str!("corpus.sql");

pub fn corpus_statements() -> Vec<&'static str> {
    CORPUS
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with("--"))
        .collect()
}

/// Tokens the byte mutator splices in: keywords and punctuation that turn
/// one statement into a different valid-looking one.
pub const DICTIONARY: &[&[u8]] = &[
    b"select ",
    b" from ",
    b" where ",
    b" and ",
    b" or ",
    b" not ",
    b" null",
    b"(",
    b")",
    b"'",
    b"''",
    b"\"",
    b",",
    b";",
    b"::",
    b"::int",
    b"::text",
    b"::numeric(3,1)",
    b"::timestamptz",
    b" is null",
    b" in (",
    b" between ",
    b" case when ",
    b" then ",
    b" else ",
    b" end",
    b" union all ",
    b" group by ",
    b" order by ",
    b" limit ",
    b" having ",
    b" join ",
    b" on ",
    b"$1",
    b"$",
    b"$$",
    b"E'",
    b"U&'",
    b"\\",
    b"--",
    b"/*",
    b"*/",
    b"9223372036854775807",
    b"-2147483648",
    b"1e308",
    b"1e-400",
    b"NaN",
    b"'infinity'",
    b"count(*)",
    b"sum(",
    b"over (",
    b"partition by ",
    b"exists (",
    b"values (",
    b"insert into t values (",
    b"update t set a = ",
    b"delete from t",
    b"create table ",
    b"drop table ",
    b"begin",
    b"commit",
    b"rollback",
    b"\xc3\xa9",
    b"\xff",
    b"\t",
    b"\n",
];

/// One fuzz input: a generated statement, a mutated corpus statement, or a
/// mutated generated one. `max_depth` bounds the generator's expression
/// nesting (the mutator can still deepen it a little).
pub fn generate_input(rng: &mut Rng, max_depth: usize) -> Vec<u8> {
    let mutator = Mutator {
        dictionary: DICTIONARY,
        max_len: 4096,
    };
    match rng.below(3) {
        0 => SqlGen::new(rng, max_depth).script().into_bytes(),
        1 => {
            let corpus = corpus_statements();
            let mut data = rng.pick(&corpus).as_bytes().to_vec();
            let others: Vec<Vec<u8>> = (0..2)
                .map(|_| rng.pick(&corpus).as_bytes().to_vec())
                .collect();
            mutator.mutate(rng, &mut data, &others);
            data
        }
        _ => {
            let mut data = SqlGen::new(rng, max_depth).script().into_bytes();
            let other = SqlGen::new(rng, max_depth).statement().into_bytes();
            mutator.mutate(rng, &mut data, &[other]);
            data
        }
    }
}

/// The fuzz target: parses every statement of `data` (as a query string)
/// directly and through the parse cache, compares the two, and binds it
/// against a small fixed catalog.
pub fn fuzz_one(data: &[u8]) {
    let sql = String::from_utf8_lossy(data);
    // The protocol refuses NUL in a query string (22021) before it gets here.
    if sql.contains('\0') {
        return;
    }
    let catalog = fixture_catalog();
    let mut cache = ParseCache::new();
    for stmt in split_statements(&sql) {
        let direct = parse_statement(&sql, &stmt);
        if let Err(e) = &direct {
            check_user_error("parse", e, &sql);
        }
        for round in ["first", "cached"] {
            let through_cache = cache.parse(&sql, &stmt);
            assert_same_parse(&direct, &through_cache, round, &sql);
        }
        check_sibling_through_cache(&mut cache, &stmt);
        if let Ok(parsed) = &direct {
            let mut ctx = BindContext {
                catalog: &catalog,
                db_oid: POSTGRES_DB_OID,
                db_name: "postgres",
                user: "postgres",
                session_user: "postgres",
                search_path: vec!["public".into()],
                temp_namespace: None,
                param_types: Vec::new(),
                server_version: "17.0",
                io: types::IoSettings::UTC,
                system_views: None,
                param_names: Vec::new(),
            };
            if let Err(e) = bind_statement(&mut ctx, parsed) {
                check_user_error("bind", &e, &sql);
            }
        }
    }
}

/// The same statement with every digit changed (same length, so the same
/// positions): its number literals differ, so it shares the first one's cache
/// key, and the cache must give exactly what a direct parse gives.
fn check_sibling_through_cache(cache: &mut ParseCache, stmt: &StatementText<'_>) {
    let sibling: String = stmt
        .text
        .chars()
        .map(|c| match c.to_digit(10) {
            Some(d) => char::from_digit((d * 7 + 3) % 10, 10).unwrap_or(c),
            None => c,
        })
        .collect();
    if sibling == stmt.text {
        return;
    }
    let text = StatementText {
        text: &sibling,
        offset: 0,
    };
    let direct = parse_statement(&sibling, &text);
    let through_cache = cache.parse(&sibling, &text);
    assert_same_parse(&direct, &through_cache, "sibling", &sibling);
}

fn assert_same_parse(
    direct: &PgResult<ParsedStatement>,
    other: &PgResult<ParsedStatement>,
    what: &str,
    sql: &str,
) {
    let same = match (direct, other) {
        (Ok(ParsedStatement::Sql(a, _)), Ok(ParsedStatement::Sql(b, _))) => a == b,
        (Ok(ParsedStatement::Utility(a)), Ok(ParsedStatement::Utility(b))) => {
            format!("{a:?}") == format!("{b:?}")
        }
        (Ok(ParsedStatement::Copy(a)), Ok(ParsedStatement::Copy(b))) => {
            format!("{a:?}") == format!("{b:?}")
        }
        (Err(a), Err(b)) => a.code == b.code && a.message == b.message,
        _ => false,
    };
    assert!(
        same,
        "parse cache ({what}) differs from a direct parse of {sql:?}:\n direct: {direct:?}\n cache: {other:?}"
    );
}

/// Errors from the front end are the client's mistakes: they must carry a
/// specific SQLSTATE, not an internal error.
fn check_user_error(stage: &str, e: &PgError, sql: &str) {
    assert!(
        e.code.0 != "XX000" && e.code.0.len() == 5,
        "{stage} error with SQLSTATE {} ({}) for {sql:?}",
        e.code.0,
        e.message
    );
}

fn column(name: &str, ty: DataType) -> Column {
    Column {
        name: name.into(),
        type_oid: ty.id.oid(),
        typmod: ty.typmod,
        not_null: false,
        default: None,
        storage: None,
        compression: None,
        identity: None,
    }
}

/// The catalog statements are bound against: tables `t` and `u` (the
/// generator's) and `emp` and `dept` (the corpus's), in database postgres.
pub fn fixture_catalog() -> Arc<CatalogData> {
    let mut catalog = CatalogData::default();
    catalog.databases.insert(
        POSTGRES_DB_OID,
        Database {
            oid: POSTGRES_DB_OID,
            name: "postgres".into(),
            owner: BOOTSTRAP_SUPERUSER,
            allow_connections: true,
            is_template: false,
        },
    );
    for (oid, name) in [
        (PG_CATALOG_NAMESPACE, "pg_catalog"),
        (PUBLIC_NAMESPACE, "public"),
    ] {
        catalog.namespaces.insert(
            oid,
            Namespace {
                oid,
                name: name.into(),
                db_oid: 0,
            },
        );
    }
    catalog.roles.insert(
        BOOTSTRAP_SUPERUSER,
        Role {
            oid: BOOTSTRAP_SUPERUSER,
            name: "postgres".into(),
            superuser: true,
            password: None,
            attrs: catalog::RoleAttributes::all(),
        },
    );
    let int = DataType::new(TypeId::Int4);
    let text = DataType::new(TypeId::Text);
    let tables = [
        ("t", generate::TABLE_T_COLUMNS.to_vec()),
        ("u", vec![("a", int), ("b", text)]),
        (
            "emp",
            vec![("id", int), ("name", text), ("dept", int), ("salary", int)],
        ),
        ("dept", vec![("id", int), ("title", text)]),
    ];
    for (i, (name, columns)) in tables.into_iter().enumerate() {
        let oid = FIRST_NORMAL_OID + i as u32;
        catalog.tables.insert(
            oid,
            Table {
                oid,
                name: name.into(),
                namespace: PUBLIC_NAMESPACE,
                db_oid: POSTGRES_DB_OID,
                relfilenode: oid,
                columns: columns.into_iter().map(|(n, ty)| column(n, ty)).collect(),
                reltuples: -1.0,
                relpages: 0,
                relallvisible: 0,
                statistics: Default::default(),
                toast: None,
                partition_key: None,
                partition_of: None,
            },
        );
    }
    Arc::new(catalog)
}

#[cfg(test)]
mod tests {
    use super::*;
    use common::fuzz::{drive, on_big_stack, Budget};

    /// The short fixed-seed run of the test command; see the README for a
    /// long one. On a big stack: inputs nest deeper than 2 MiB allows in the
    /// dev profile (the server sizes its session threads for this).
    #[test]
    fn fuzz_parse_cache_and_bind() {
        on_big_stack(|| {
            drive(
                "sql_parse_bind",
                Budget::from_env(0x5c41_e5ed, 10_000),
                |rng| generate_input(rng, 40),
                fuzz_one,
            )
        });
    }

    #[test]
    fn corpus_statements_parse() {
        // The seed corpus is real SQL: nearly all of it must parse, or the
        // mutations start from noise.
        let corpus = corpus_statements();
        let failing: Vec<_> = corpus
            .iter()
            .filter(|s| {
                split_statements(s)
                    .iter()
                    .any(|st| parse_statement(s, st).is_err())
            })
            .collect();
        assert!(
            failing.len() * 10 < corpus.len(),
            "{} of {} corpus statements fail to parse: {failing:?}",
            failing.len(),
            corpus.len()
        );
    }

    #[test]
    fn generated_statements_mostly_parse() {
        let mut rng = Rng::new(1);
        let total = 300;
        let parsed = (0..total)
            .filter(|_| {
                let sql = SqlGen::new(&mut rng, 8).statement();
                split_statements(&sql)
                    .iter()
                    .all(|st| parse_statement(&sql, st).is_ok())
            })
            .count();
        assert!(parsed * 10 >= total * 7, "only {parsed} of {total} parse");
    }
}
