//! The pg_catalog relations psql's describe commands, drivers and ORMs read
//! beyond the core ones: pg_proc, pg_roles, pg_attrdef, pg_extension,
//! pg_tablespace, and the catalogs of objects Scalegres does not have yet
//! (indexes, constraints, inheritance, comments, dependencies, sequences,
//! triggers, policies, publications, extended statistics), which are empty
//! with PostgreSQL 15's columns so the queries over them bind and run.
//! Type stand-ins as in `catalog.rs`, except that the int2vector and
//! oidvector columns of the empty catalogs are int2[] / oid[], which psql
//! subscripts (`prattrs[s]`); pg_proc.proargtypes, which has rows, keeps
//! oidvector's space-separated text that drivers split.

use ::catalog::{BOOTSTRAP_SUPERUSER, PG_CATALOG_NAMESPACE};
use types::functions::{builtins, BuiltinImpl, FIRST_BUILTIN_OID};
use types::TypeId::*;
use types::{TypeId, Value};

use super::catalog::{sequences, user_columns, DEFAULT_TABLESPACE};
use super::{text, Schema, Source, ViewContext, ViewDef};
use crate::Row;

const fn empty_catalog(
    name: &'static str,
    columns: &'static [(&'static str, types::TypeId)],
) -> ViewDef {
    ViewDef {
        schema: Schema::PgCatalog,
        name,
        source: Source::Relation(name),
        columns,
        rows: no_rows,
    }
}

fn no_rows(_: &ViewContext<'_>) -> Vec<Row> {
    Vec::new()
}

/// pg_proc's, pg_extension's and pg_tablespace's owner, pg_catalog's language.
const INTERNAL_LANGUAGE: u32 = 12;
const GLOBAL_TABLESPACE: u32 = 1664;
/// plpgsql's pg_extension oid in PostgreSQL 15.
pub(crate) const PLPGSQL_EXTENSION: u32 = 13559;
/// pg_extension's own oid, as pg_description.classoid names it.
pub(crate) const PG_EXTENSION_CLASS: u32 = 3079;
/// The comment PostgreSQL puts on plpgsql.
pub(crate) const PLPGSQL_COMMENT: &str = "PL/pgSQL procedural language";

pub(super) static VIEWS: &[ViewDef] = &[
    ViewDef {
        schema: Schema::PgCatalog,
        name: "pg_proc",
        source: Source::Relation("pg_proc"),
        columns: &[
            ("oid", Oid),
            ("proname", Name),
            ("pronamespace", Oid),
            ("proowner", Oid),
            ("prolang", Oid),
            ("procost", Float4),
            ("prorows", Float4),
            ("provariadic", Oid),
            ("prosupport", RegProc),
            ("prokind", Text),
            ("prosecdef", Bool),
            ("proleakproof", Bool),
            ("proisstrict", Bool),
            ("proretset", Bool),
            ("provolatile", Text),
            ("proparallel", Text),
            ("pronargs", Int2),
            ("pronargdefaults", Int2),
            ("prorettype", Oid),
            ("proargtypes", Text),
            ("proallargtypes", OidArray),
            ("proargmodes", TextArray),
            ("proargnames", TextArray),
            ("proargdefaults", Text),
            ("protrftypes", OidArray),
            ("prosrc", Text),
            ("probin", Text),
            ("prosqlbody", Text),
            ("proconfig", TextArray),
            ("proacl", TextArray),
        ],
        rows: pg_proc,
    },
    ViewDef {
        schema: Schema::PgCatalog,
        name: "pg_roles",
        source: Source::Relation("pg_authid"),
        columns: &[
            ("rolname", Name),
            ("rolsuper", Bool),
            ("rolinherit", Bool),
            ("rolcreaterole", Bool),
            ("rolcreatedb", Bool),
            ("rolcanlogin", Bool),
            ("rolreplication", Bool),
            ("rolconnlimit", Int4),
            ("rolpassword", Text),
            ("rolvaliduntil", Timestamptz),
            ("rolbypassrls", Bool),
            ("rolconfig", TextArray),
            ("oid", Oid),
        ],
        rows: pg_roles,
    },
    ViewDef {
        schema: Schema::PgCatalog,
        name: "pg_attrdef",
        source: Source::Relation("pg_attrdef"),
        columns: &[
            ("oid", Oid),
            ("adrelid", Oid),
            ("adnum", Int2),
            ("adbin", Text),
        ],
        rows: pg_attrdef,
    },
    ViewDef {
        schema: Schema::PgCatalog,
        name: "pg_extension",
        source: Source::Relation("pg_extension"),
        columns: &[
            ("oid", Oid),
            ("extname", Name),
            ("extowner", Oid),
            ("extnamespace", Oid),
            ("extrelocatable", Bool),
            ("extversion", Text),
            ("extconfig", OidArray),
            ("extcondition", TextArray),
        ],
        rows: pg_extension,
    },
    ViewDef {
        schema: Schema::PgCatalog,
        name: "pg_tablespace",
        source: Source::Relation("pg_tablespace"),
        columns: &[
            ("oid", Oid),
            ("spcname", Name),
            ("spcowner", Oid),
            ("spcacl", TextArray),
            ("spcoptions", TextArray),
        ],
        rows: pg_tablespace,
    },
    empty_catalog(
        "pg_auth_members",
        &[
            ("roleid", Oid),
            ("member", Oid),
            ("grantor", Oid),
            ("admin_option", Bool),
        ],
    ),
    ViewDef {
        schema: Schema::PgCatalog,
        name: "pg_inherits",
        source: Source::Relation("pg_inherits"),
        columns: &[
            ("inhrelid", Oid),
            ("inhparent", Oid),
            ("inhseqno", Int4),
            ("inhdetachpending", Bool),
        ],
        rows: pg_inherits,
    },
    ViewDef {
        schema: Schema::PgCatalog,
        name: "pg_partitioned_table",
        source: Source::Relation("pg_partitioned_table"),
        columns: &[
            ("partrelid", Oid),
            ("partstrat", Text),
            ("partnatts", Int2),
            ("partdefid", Oid),
            ("partattrs", Int2Array),
            ("partclass", OidArray),
            ("partcollation", OidArray),
            ("partexprs", Text),
        ],
        rows: pg_partitioned_table,
    },
    ViewDef {
        schema: Schema::PgCatalog,
        name: "pg_description",
        source: Source::Relation("pg_description"),
        columns: &[
            ("objoid", Oid),
            ("classoid", Oid),
            ("objsubid", Int4),
            ("description", Text),
        ],
        rows: pg_description,
    },
    ViewDef {
        schema: Schema::PgCatalog,
        name: "pg_rewrite",
        source: Source::Relation("pg_rewrite"),
        columns: &[
            ("oid", Oid),
            ("rulename", Name),
            ("ev_class", Oid),
            ("ev_type", Text),
            ("ev_enabled", Text),
            ("is_instead", Bool),
            ("ev_qual", Text),
            ("ev_action", Text),
        ],
        rows: pg_rewrite,
    },
    ViewDef {
        schema: Schema::PgCatalog,
        name: "pg_shdescription",
        source: Source::Relation("pg_shdescription"),
        columns: &[("objoid", Oid), ("classoid", Oid), ("description", Text)],
        rows: pg_shdescription,
    },
    empty_catalog(
        "pg_depend",
        &[
            ("classid", Oid),
            ("objid", Oid),
            ("objsubid", Int4),
            ("refclassid", Oid),
            ("refobjid", Oid),
            ("refobjsubid", Int4),
            ("deptype", Text),
        ],
    ),
    ViewDef {
        schema: Schema::PgCatalog,
        name: "pg_sequence",
        source: Source::Relation("pg_sequence"),
        columns: &[
            ("seqrelid", Oid),
            ("seqtypid", Oid),
            ("seqstart", Int8),
            ("seqincrement", Int8),
            ("seqmax", Int8),
            ("seqmin", Int8),
            ("seqcache", Int8),
            ("seqcycle", Bool),
        ],
        rows: pg_sequence,
    },
    ViewDef {
        schema: Schema::PgCatalog,
        name: "pg_sequences",
        source: Source::Relation("pg_sequence"),
        columns: &[
            ("schemaname", Name),
            ("sequencename", Name),
            ("sequenceowner", Name),
            ("data_type", RegType),
            ("start_value", Int8),
            ("min_value", Int8),
            ("max_value", Int8),
            ("increment_by", Int8),
            ("cycle", Bool),
            ("cache_size", Int8),
            ("last_value", Int8),
        ],
        rows: pg_sequences,
    },
    empty_catalog(
        "pg_policy",
        &[
            ("oid", Oid),
            ("polname", Name),
            ("polrelid", Oid),
            ("polcmd", Text),
            ("polpermissive", Bool),
            ("polroles", OidArray),
            ("polqual", Text),
            ("polwithcheck", Text),
        ],
    ),
    empty_catalog(
        "pg_publication",
        &[
            ("oid", Oid),
            ("pubname", Name),
            ("pubowner", Oid),
            ("puballtables", Bool),
            ("pubinsert", Bool),
            ("pubupdate", Bool),
            ("pubdelete", Bool),
            ("pubtruncate", Bool),
            ("pubviaroot", Bool),
        ],
    ),
    empty_catalog(
        "pg_publication_rel",
        &[
            ("oid", Oid),
            ("prpubid", Oid),
            ("prrelid", Oid),
            ("prqual", Text),
            ("prattrs", Int2Array),
        ],
    ),
    empty_catalog(
        "pg_publication_namespace",
        &[("oid", Oid), ("pnpubid", Oid), ("pnnspid", Oid)],
    ),
    empty_catalog(
        "pg_statistic_ext",
        &[
            ("oid", Oid),
            ("stxrelid", Oid),
            ("stxname", Name),
            ("stxnamespace", Oid),
            ("stxowner", Oid),
            ("stxstattarget", Int4),
            ("stxkeys", Int2Array),
            ("stxkind", TextArray),
            ("stxexprs", Text),
        ],
    ),
];

/// oidvector's text output: the oids separated by spaces.
fn oidvector(oids: impl Iterator<Item = u32>) -> Value {
    Value::Text(oids.map(|o| o.to_string()).collect::<Vec<_>>().join(" "))
}

fn pg_proc(cx: &ViewContext<'_>) -> Vec<Row> {
    let builtin = builtins().enumerate().map(|(i, f)| {
        let volatility = if f.volatile {
            "v"
        } else if matches!(f.imp, BuiltinImpl::Session(_)) {
            "s"
        } else {
            "i"
        };
        let variadic = if f.variadic {
            f.arg_types.last().map_or(0, |t| t.oid())
        } else {
            0
        };
        ProcRow {
            oid: FIRST_BUILTIN_OID + i as u32,
            name: f.name,
            variadic,
            strict: f.strict,
            volatility,
            args: f.arg_types.iter().map(|t| t.oid()).collect(),
            ret: f.ret.oid(),
        }
        .row()
    });
    // The types' I/O functions (typinput and friends), as PostgreSQL's.
    let io = types::io_functions::all_io_functions()
        .iter()
        .map(|&(f, t)| {
            let of = if t.array_element().is_some() {
                ANYARRAY
            } else {
                t.oid()
            };
            let (args, ret) = f.signature(of);
            ProcRow {
                oid: f.oid,
                name: f.name,
                variadic: 0,
                strict: true,
                volatility: "i",
                args,
                ret,
            }
            .row()
        });
    let user = cx
        .catalog
        .functions
        .values()
        .filter(|f| f.db_oid == cx.db_oid)
        .map(|f| user_proc_row(f));
    builtin.chain(io).chain(user).collect()
}

/// A user-defined function's row (CREATE FUNCTION).
fn user_proc_row(f: &::catalog::functions::Function) -> Row {
    let mut row = ProcRow {
        oid: f.oid,
        name: "",
        variadic: 0,
        strict: f.strict,
        volatility: "v",
        args: f.arg_types.clone(),
        ret: f.return_type,
    }
    .row();
    row[1] = text(&f.name);
    row[2] = Value::Oid(f.namespace);
    row[4] = Value::Oid(f.language.oid());
    // procost: PostgreSQL's default for SQL and PL functions.
    row[5] = Value::Float4(100.0);
    row[6] = Value::Float4(if f.returns_set { 1000.0 } else { 0.0 });
    row[13] = Value::Bool(f.returns_set);
    row[14] = text(&f.volatility.code().to_string());
    row[15] = text(&f.parallel.code().to_string());
    row[17] = Value::Int2(f.arg_defaults.len() as i16);
    if f.variadic {
        // provariadic: the array's element type; proargmodes: 'v' last.
        let last = f.arg_types.last().copied().unwrap_or(0);
        row[7] = Value::Oid(
            TypeId::from_oid(last)
                .and_then(TypeId::array_element)
                .map_or(0, TypeId::oid),
        );
        let mut modes = vec![text("i"); f.arg_types.len() - 1];
        modes.push(text("v"));
        row[21] = Value::array(types::array::ArrayValue::from_items(TypeId::Text, modes));
    }
    if !f.arg_names.is_empty() {
        let names = f.arg_names.iter().map(|n| text(n)).collect();
        row[22] = Value::array(types::array::ArrayValue::from_items(TypeId::Text, names));
    }
    row[25] = text(&f.source);
    row
}

/// anyarray: what array_out and array_send take.
const ANYARRAY: u32 = 2277;

/// What differs between pg_proc rows here.
struct ProcRow {
    oid: u32,
    name: &'static str,
    variadic: u32,
    strict: bool,
    volatility: &'static str,
    args: Vec<u32>,
    ret: u32,
}

impl ProcRow {
    fn row(self) -> Row {
        vec![
            Value::Oid(self.oid),
            text(self.name),
            Value::Oid(PG_CATALOG_NAMESPACE),
            Value::Oid(BOOTSTRAP_SUPERUSER),
            Value::Oid(INTERNAL_LANGUAGE),
            Value::Float4(1.0),
            Value::Float4(0.0),
            Value::Oid(self.variadic),
            Value::Oid(0),
            text("f"),
            Value::Bool(false),
            Value::Bool(false),
            Value::Bool(self.strict),
            Value::Bool(false),
            text(self.volatility),
            // Built-ins run anywhere, as PostgreSQL labels most of its own.
            text("s"),
            Value::Int2(self.args.len() as i16),
            Value::Int2(0),
            Value::Oid(self.ret),
            oidvector(self.args.iter().copied()),
            Value::Null,
            Value::Null,
            Value::Null,
            Value::Null,
            Value::Null,
            text(self.name),
            Value::Null,
            Value::Null,
            Value::Null,
            Value::Null,
        ]
    }
}

fn pg_roles(cx: &ViewContext<'_>) -> Vec<Row> {
    super::roles::authid(cx)
        .map(|r| {
            vec![
                text(&r.name),
                Value::Bool(r.superuser),
                Value::Bool(r.attrs.inherit),
                Value::Bool(r.attrs.create_role),
                Value::Bool(r.attrs.create_db),
                Value::Bool(r.attrs.can_login),
                Value::Bool(r.attrs.replication),
                Value::Int4(r.attrs.conn_limit),
                // pg_roles never shows the verifier, nor whether there is one.
                text("********"),
                r.attrs.valid_until.map_or(Value::Null, Value::Timestamptz),
                Value::Bool(r.attrs.bypass_rls),
                Value::Null,
                Value::Oid(r.oid),
            ]
        })
        .collect()
}

fn pg_attrdef(cx: &ViewContext<'_>) -> Vec<Row> {
    user_columns(cx)
        .filter_map(|(t, i, c)| {
            let expr = sql::describe::default_sql(c)?;
            Some(vec![
                // Defaults have no oids of their own here.
                Value::Oid(0),
                Value::Oid(t.oid),
                Value::Int2(i as i16 + 1),
                Value::Text(expr),
            ])
        })
        .collect()
}

fn pg_extension(_: &ViewContext<'_>) -> Vec<Row> {
    // plpgsql, which every PostgreSQL database has (its oid in PostgreSQL 15).
    vec![vec![
        Value::Oid(PLPGSQL_EXTENSION),
        text("plpgsql"),
        Value::Oid(BOOTSTRAP_SUPERUSER),
        Value::Oid(PG_CATALOG_NAMESPACE),
        Value::Bool(false),
        text("1.0"),
        Value::Null,
        Value::Null,
    ]]
}

/// Whether the object a comment is on belongs to database `db` (the
/// built-in schemas belong to every database).
fn in_database(cx: &ViewContext<'_>, a: &::catalog::ObjectAddress) -> bool {
    use ::catalog::comments::{PG_CLASS_OID, PG_NAMESPACE_OID};
    let c = cx.catalog;
    match a.classoid {
        PG_CLASS_OID => {
            c.tables
                .get(&a.objoid)
                .map(|t| t.db_oid)
                .or_else(|| c.views.get(&a.objoid).map(|v| v.db_oid))
                == Some(cx.db_oid)
        }
        PG_NAMESPACE_OID => c
            .namespaces
            .get(&a.objoid)
            .is_some_and(|n| n.in_database(cx.db_oid)),
        _ => false,
    }
}

/// Comments (COMMENT ON) on this database's objects, and the one
/// PostgreSQL puts on plpgsql.
fn pg_description(cx: &ViewContext<'_>) -> Vec<Row> {
    let mut rows = vec![vec![
        Value::Oid(PLPGSQL_EXTENSION),
        Value::Oid(PG_EXTENSION_CLASS),
        Value::Int4(0),
        text(PLPGSQL_COMMENT),
    ]];
    rows.extend(
        cx.catalog
            .comments
            .iter()
            .filter(|(a, _)| !a.is_shared() && in_database(cx, a))
            .map(|(a, d)| {
                vec![
                    Value::Oid(a.objoid),
                    Value::Oid(a.classoid),
                    Value::Int4(a.objsubid),
                    text(d),
                ]
            }),
    );
    rows
}

/// Each view's `_RETURN` rule (psql's `\d+` of a view lists the other
/// rules, of which there are none). The rule's oid is the view's: oids
/// need only be unique within one catalog. ev_action holds the query's SQL
/// text where PostgreSQL has its parse tree.
fn pg_rewrite(cx: &ViewContext<'_>) -> Vec<Row> {
    cx.catalog
        .views
        .values()
        .filter(|v| v.db_oid == cx.db_oid)
        .map(|v| {
            vec![
                Value::Oid(v.oid),
                text("_RETURN"),
                Value::Oid(v.oid),
                text("1"),
                text("O"),
                Value::Bool(true),
                text("<>"),
                text(&v.query),
            ]
        })
        .collect()
}

/// Comments on databases and roles (kept with the others, see
/// `catalog::comments`).
fn pg_shdescription(cx: &ViewContext<'_>) -> Vec<Row> {
    cx.catalog
        .comments
        .iter()
        .filter(|(a, _)| a.is_shared())
        .map(|(a, d)| vec![Value::Oid(a.objoid), Value::Oid(a.classoid), text(d)])
        .collect()
}

fn pg_tablespace(_: &ViewContext<'_>) -> Vec<Row> {
    [
        (DEFAULT_TABLESPACE, "pg_default"),
        (GLOBAL_TABLESPACE, "pg_global"),
    ]
    .into_iter()
    .map(|(oid, name)| {
        vec![
            Value::Oid(oid),
            text(name),
            Value::Oid(BOOTSTRAP_SUPERUSER),
            Value::Null,
            Value::Null,
        ]
    })
    .collect()
}

fn pg_sequence(cx: &ViewContext<'_>) -> Vec<Row> {
    sequences(cx)
        .map(|q| {
            vec![
                Value::Oid(q.oid),
                Value::Oid(q.type_oid),
                Value::Int8(q.start),
                Value::Int8(q.increment),
                Value::Int8(q.max),
                Value::Int8(q.min),
                Value::Int8(q.cache),
                Value::Bool(q.cycle),
            ]
        })
        .collect()
}

fn pg_sequences(cx: &ViewContext<'_>) -> Vec<Row> {
    sequences(cx)
        .map(|q| {
            // NULL until nextval() has handed out a value, as in PostgreSQL.
            let last = access::sequence::read(cx.pool, q.locator())
                .ok()
                .filter(|s| s.is_called)
                .map_or(Value::Null, |s| Value::Int8(s.last_value));
            vec![
                text(super::catalog::namespace_name(cx.catalog, q.namespace)),
                text(&q.name),
                text("postgres"),
                Value::Oid(q.type_oid),
                Value::Int8(q.start),
                Value::Int8(q.min),
                Value::Int8(q.max),
                Value::Int8(q.increment),
                Value::Bool(q.cycle),
                Value::Int8(q.cache),
                last,
            ]
        })
        .collect()
}

/// One row per partition: its parent (PostgreSQL also lists legacy
/// inheritance, which does not exist here).
fn pg_inherits(cx: &ViewContext<'_>) -> Vec<Row> {
    super::catalog::tables(cx)
        .filter_map(|t| {
            let of = t.partition_of.as_deref()?;
            Some(vec![
                Value::Oid(t.oid),
                Value::Oid(of.parent),
                Value::Int4(1),
                Value::Bool(false),
            ])
        })
        .collect()
}

/// One row per partitioned table: its strategy, key columns (0 for an
/// expression) and default partition.
fn pg_partitioned_table(cx: &ViewContext<'_>) -> Vec<Row> {
    super::catalog::tables(cx)
        .filter_map(|t| {
            let key = t.partition_key.as_deref()?;
            let default = cx
                .catalog
                .partitions_of(t.oid)
                .find(|c| {
                    c.partition_of
                        .as_ref()
                        .is_some_and(|p| p.bound == ::catalog::partition::PartitionBound::Default)
                })
                .map_or(0, |c| c.oid);
            let attrs: Vec<Value> = key.parts.iter().map(|p| Value::Int2(p.attnum)).collect();
            let zeros: Vec<Value> = key.parts.iter().map(|_| Value::Oid(0)).collect();
            let exprs: Vec<String> = key.parts.iter().filter_map(|p| p.expr.clone()).collect();
            Some(vec![
                Value::Oid(t.oid),
                text(&key.strategy.code().to_string()),
                Value::Int2(key.parts.len() as i16),
                Value::Oid(default),
                Value::Array(std::sync::Arc::new(types::array::ArrayValue::from_items(
                    Int2, attrs,
                ))),
                Value::Array(std::sync::Arc::new(types::array::ArrayValue::from_items(
                    Oid,
                    zeros.clone(),
                ))),
                Value::Array(std::sync::Arc::new(types::array::ArrayValue::from_items(
                    Oid, zeros,
                ))),
                if exprs.is_empty() {
                    Value::Null
                } else {
                    text(&exprs.join(", "))
                },
            ])
        })
        .collect()
}
