//! pg_catalog's core relations over the catalog snapshot: pg_namespace,
//! pg_database, pg_class, pg_am, pg_tables, pg_attribute, pg_type,
//! pg_collation. Columns are PostgreSQL 15's, in its order, with these
//! stand-ins for types Scalegres lacks: `"char"` and `pg_node_tree` are
//! text, `xid` is oid, `aclitem[]` is text[], and `int2vector`/`oidvector`
//! are text in their space-separated output form.

use ::catalog::{
    CatalogData, Column, Table, BOOTSTRAP_SUPERUSER, INFORMATION_SCHEMA_NAMESPACE,
    PG_CATALOG_NAMESPACE, PUBLIC_NAMESPACE, TEMPLATE1_OID,
};
use sql::reg::PG_DATABASE_OWNER;
use types::TypeId::{self, *};
use types::Value;

use super::{opt_text, text, Schema, Source, ViewContext, ViewDef};
use crate::Row;

/// pg_default, where every table lives.
pub(super) const DEFAULT_TABLESPACE: u32 = 1663;
/// The "default" and "C" collations.
pub(super) const DEFAULT_COLLATION: u32 = 100;
pub(super) const C_COLLATION: u32 = 950;
/// The heap access method.
const HEAP_AM: u32 = 2;

pub(super) static VIEWS: &[ViewDef] = &[
    ViewDef {
        schema: Schema::PgCatalog,
        name: "pg_namespace",
        source: Source::Relation("pg_namespace"),
        columns: &[
            ("oid", Oid),
            ("nspname", Name),
            ("nspowner", Oid),
            ("nspacl", TextArray),
        ],
        rows: pg_namespace,
    },
    ViewDef {
        schema: Schema::PgCatalog,
        name: "pg_database",
        source: Source::Relation("pg_database"),
        columns: &[
            ("oid", Oid),
            ("datname", Name),
            ("datdba", Oid),
            ("encoding", Int4),
            ("datlocprovider", Text),
            ("datistemplate", Bool),
            ("datallowconn", Bool),
            ("datconnlimit", Int4),
            ("datfrozenxid", Oid),
            ("datminmxid", Oid),
            ("dattablespace", Oid),
            ("datcollate", Text),
            ("datctype", Text),
            ("daticulocale", Text),
            ("datcollversion", Text),
            ("datacl", TextArray),
        ],
        rows: pg_database,
    },
    ViewDef {
        schema: Schema::PgCatalog,
        name: "pg_class",
        source: Source::Relation("pg_class"),
        columns: &[
            ("oid", Oid),
            ("relname", Name),
            ("relnamespace", Oid),
            ("reltype", Oid),
            ("reloftype", Oid),
            ("relowner", Oid),
            ("relam", Oid),
            ("relfilenode", Oid),
            ("reltablespace", Oid),
            ("relpages", Int4),
            ("reltuples", Float4),
            ("relallvisible", Int4),
            ("reltoastrelid", Oid),
            ("relhasindex", Bool),
            ("relisshared", Bool),
            ("relpersistence", Text),
            ("relkind", Text),
            ("relnatts", Int2),
            ("relchecks", Int2),
            ("relhasrules", Bool),
            ("relhastriggers", Bool),
            ("relhassubclass", Bool),
            ("relrowsecurity", Bool),
            ("relforcerowsecurity", Bool),
            ("relispopulated", Bool),
            ("relreplident", Text),
            ("relispartition", Bool),
            ("relrewrite", Oid),
            ("relfrozenxid", Oid),
            ("relminmxid", Oid),
            ("relacl", TextArray),
            ("reloptions", TextArray),
            ("relpartbound", Text),
        ],
        rows: pg_class,
    },
    ViewDef {
        schema: Schema::PgCatalog,
        name: "pg_am",
        source: Source::Relation("pg_am"),
        columns: &[
            ("oid", Oid),
            ("amname", Name),
            ("amhandler", RegProc),
            ("amtype", Text),
        ],
        rows: pg_am,
    },
    ViewDef {
        schema: Schema::PgCatalog,
        name: "pg_tables",
        source: Source::Relation("pg_class"),
        columns: &[
            ("schemaname", Name),
            ("tablename", Name),
            ("tableowner", Name),
            ("tablespace", Name),
            ("hasindexes", Bool),
            ("hasrules", Bool),
            ("hastriggers", Bool),
            ("rowsecurity", Bool),
        ],
        rows: pg_tables,
    },
    ViewDef {
        schema: Schema::PgCatalog,
        name: "pg_views",
        source: Source::Relation("pg_class"),
        columns: &[
            ("schemaname", Name),
            ("viewname", Name),
            ("viewowner", Name),
            ("definition", Text),
        ],
        rows: pg_views,
    },
    ViewDef {
        schema: Schema::PgCatalog,
        name: "pg_attribute",
        source: Source::Relation("pg_attribute"),
        columns: &[
            ("attrelid", Oid),
            ("attname", Name),
            ("atttypid", Oid),
            ("attstattarget", Int4),
            ("attlen", Int2),
            ("attnum", Int2),
            ("attndims", Int4),
            ("attcacheoff", Int4),
            ("atttypmod", Int4),
            ("attbyval", Bool),
            ("attalign", Text),
            ("attstorage", Text),
            ("attcompression", Text),
            ("attnotnull", Bool),
            ("atthasdef", Bool),
            ("atthasmissing", Bool),
            ("attidentity", Text),
            ("attgenerated", Text),
            ("attisdropped", Bool),
            ("attislocal", Bool),
            ("attinhcount", Int4),
            ("attcollation", Oid),
            ("attacl", TextArray),
            ("attoptions", TextArray),
            ("attfdwoptions", TextArray),
            ("attmissingval", Text),
        ],
        rows: pg_attribute,
    },
    ViewDef {
        schema: Schema::PgCatalog,
        name: "pg_type",
        source: Source::Relation("pg_type"),
        columns: &[
            ("oid", Oid),
            ("typname", Name),
            ("typnamespace", Oid),
            ("typowner", Oid),
            ("typlen", Int2),
            ("typbyval", Bool),
            ("typtype", Char),
            ("typcategory", Text),
            ("typispreferred", Bool),
            ("typisdefined", Bool),
            ("typdelim", Text),
            ("typrelid", Oid),
            ("typsubscript", RegProc),
            ("typelem", Oid),
            ("typarray", Oid),
            ("typinput", RegProc),
            ("typoutput", RegProc),
            ("typreceive", RegProc),
            ("typsend", RegProc),
            ("typmodin", RegProc),
            ("typmodout", RegProc),
            ("typanalyze", RegProc),
            ("typalign", Text),
            ("typstorage", Text),
            ("typnotnull", Bool),
            ("typbasetype", Oid),
            ("typtypmod", Int4),
            ("typndims", Int4),
            ("typcollation", Oid),
            ("typdefaultbin", Text),
            ("typdefault", Text),
            ("typacl", TextArray),
        ],
        rows: pg_type,
    },
    ViewDef {
        schema: Schema::PgCatalog,
        name: "pg_collation",
        source: Source::Relation("pg_collation"),
        columns: &[
            ("oid", Oid),
            ("collname", Name),
            ("collnamespace", Oid),
            ("collowner", Oid),
            ("collprovider", Text),
            ("collisdeterministic", Bool),
            ("collencoding", Int4),
            ("collcollate", Text),
            ("collctype", Text),
            ("colliculocale", Text),
            ("collversion", Text),
        ],
        rows: pg_collation,
    },
];

/// This database's tables.
pub(super) fn tables<'a>(cx: &'a ViewContext<'_>) -> impl Iterator<Item = &'a Table> {
    let db = cx.db_oid;
    cx.catalog.tables.values().filter(move |t| t.db_oid == db)
}

/// Every column of this database's tables: (table, 0-based position, column).
pub(super) fn user_columns<'a>(
    cx: &'a ViewContext<'_>,
) -> impl Iterator<Item = (&'a Table, usize, &'a Column)> {
    tables(cx).flat_map(|t| t.columns.iter().enumerate().map(move |(i, c)| (t, i, c)))
}

/// Every column of this database's tables and views: (relation oid,
/// 0-based position, column).
pub(super) fn relation_columns<'a>(
    cx: &'a ViewContext<'_>,
) -> impl Iterator<Item = (u32, usize, &'a Column)> {
    let tables = tables(cx).flat_map(|t| {
        t.columns
            .iter()
            .enumerate()
            .map(move |(i, c)| (t.oid, i, c))
    });
    let views = views(cx).flat_map(|v| {
        v.columns
            .iter()
            .enumerate()
            .map(move |(i, c)| (v.oid, i, c))
    });
    tables.chain(views)
}

/// The name of namespace `oid` ("" if it is gone).
pub(super) fn namespace_name(cat: &CatalogData, oid: u32) -> &str {
    cat.namespaces.get(&oid).map_or("", |n| n.name.as_str())
}

/// A schema's owner as PostgreSQL 15 sets it up: public belongs to
/// pg_database_owner, the others to the bootstrap superuser.
pub(super) fn namespace_owner(oid: u32) -> u32 {
    if oid == PUBLIC_NAMESPACE {
        PG_DATABASE_OWNER
    } else {
        BOOTSTRAP_SUPERUSER
    }
}

fn namespace_acl(oid: u32) -> Value {
    match oid {
        PUBLIC_NAMESPACE => text("{pg_database_owner=UC/pg_database_owner,=U/pg_database_owner}"),
        PG_CATALOG_NAMESPACE | INFORMATION_SCHEMA_NAMESPACE => {
            text("{postgres=UC/postgres,=U/postgres}")
        }
        _ => Value::Null,
    }
}

fn pg_namespace(cx: &ViewContext<'_>) -> Vec<Row> {
    let toast = vec![
        Value::Oid(PG_TOAST_NAMESPACE),
        text("pg_toast"),
        Value::Oid(BOOTSTRAP_SUPERUSER),
        Value::Null,
    ];
    cx.catalog
        .namespaces
        .values()
        .filter(|n| n.in_database(cx.db_oid))
        .map(|n| {
            vec![
                Value::Oid(n.oid),
                text(&n.name),
                Value::Oid(namespace_owner(n.oid)),
                namespace_acl(n.oid),
            ]
        })
        .chain(std::iter::once(toast))
        .collect()
}

/// pg_toast's oid, as in PostgreSQL: the schema of TOAST relations.
pub(super) const PG_TOAST_NAMESPACE: u32 = 99;

fn pg_database(cx: &ViewContext<'_>) -> Vec<Row> {
    cx.catalog
        .databases
        .values()
        .map(|d| {
            // initdb revokes CREATE and TEMP on template1 from PUBLIC; databases
            // created later have the default (NULL) privileges.
            let acl = (d.oid == TEMPLATE1_OID).then_some("{=c/postgres,postgres=CTc/postgres}");
            vec![
                Value::Oid(d.oid),
                text(&d.name),
                Value::Oid(d.owner),
                // UTF8
                Value::Int4(6),
                text("c"),
                Value::Bool(d.is_template),
                Value::Bool(d.allow_connections),
                Value::Int4(-1),
                Value::Oid(0),
                Value::Oid(0),
                Value::Oid(DEFAULT_TABLESPACE),
                // Strings compare bytewise: the C locale.
                text("C"),
                text("C"),
                Value::Null,
                Value::Null,
                opt_text(acl),
            ]
        })
        .collect()
}

/// What differs between pg_class rows of tables and of views.
struct ClassRow<'a> {
    oid: u32,
    /// In a temporary schema: relpersistence `t`.
    temp: bool,
    name: &'a str,
    namespace: u32,
    relam: u32,
    relfilenode: u32,
    relpages: i32,
    reltuples: f32,
    relallvisible: i32,
    relkind: &'a str,
    natts: usize,
    hasrules: bool,
    hasindex: bool,
    /// relchecks: the table's CHECK constraints.
    checks: usize,
    /// relhastriggers: PostgreSQL's foreign keys are triggers on both tables.
    hastriggers: bool,
    /// reltoastrelid.
    toast: u32,
    /// relhassubclass: a partitioned table with partitions.
    hassubclass: bool,
    /// relpartbound as pg_get_expr prints it, for a partition.
    partbound: Option<String>,
}

fn class_row(c: ClassRow<'_>) -> Row {
    vec![
        Value::Oid(c.oid),
        text(c.name),
        Value::Oid(c.namespace),
        // No composite row types yet.
        Value::Oid(0),
        Value::Oid(0),
        Value::Oid(BOOTSTRAP_SUPERUSER),
        Value::Oid(c.relam),
        Value::Oid(c.relfilenode),
        // 0: the database's default tablespace.
        Value::Oid(0),
        Value::Int4(c.relpages),
        Value::Float4(c.reltuples),
        Value::Int4(c.relallvisible),
        Value::Oid(c.toast),
        Value::Bool(c.hasindex),
        Value::Bool(false),
        text(if c.temp { "t" } else { "p" }),
        text(c.relkind),
        Value::Int2(c.natts as i16),
        Value::Int2(c.checks as i16),
        Value::Bool(c.hasrules),
        Value::Bool(c.hastriggers),
        Value::Bool(c.hassubclass),
        Value::Bool(false),
        Value::Bool(false),
        Value::Bool(true),
        text(if c.relkind == "v" { "n" } else { "d" }),
        Value::Bool(c.partbound.is_some()),
        Value::Oid(0),
        Value::Oid(0),
        Value::Oid(0),
        Value::Null,
        Value::Null,
        c.partbound.map_or(Value::Null, Value::Text),
    ]
}

fn pg_class(cx: &ViewContext<'_>) -> Vec<Row> {
    let tables = tables(cx).map(|t| {
        class_row(ClassRow {
            oid: t.oid,
            temp: cx.catalog.is_temp_namespace(t.namespace),
            name: &t.name,
            namespace: t.namespace,
            // A partitioned table has no storage of its own to show.
            relam: if t.is_partitioned() { 0 } else { HEAP_AM },
            relfilenode: if t.is_partitioned() { 0 } else { t.relfilenode },
            relpages: t.relpages as i32,
            reltuples: t.reltuples as f32,
            relallvisible: t.relallvisible as i32,
            relkind: if t.is_partitioned() { "p" } else { "r" },
            natts: t.columns.len(),
            hasrules: false,
            hasindex: cx.catalog.indexes_of(t.oid).next().is_some(),
            checks: cx
                .catalog
                .constraints_of(t.oid)
                .filter(|c| c.kind.code() == 'c')
                .count(),
            hastriggers: cx
                .catalog
                .constraints_of(t.oid)
                .any(|c| c.kind.code() == 'f')
                || cx.catalog.foreign_keys_referencing(t.oid).next().is_some()
                || cx.catalog.has_triggers(t.oid),
            toast: t.toast.map_or(0, |r| r.oid),
            hassubclass: cx.catalog.partitions_of(t.oid).next().is_some(),
            partbound: t.partition_of.as_deref().and_then(|of| {
                let parent = cx.catalog.tables.get(&of.parent)?;
                let key = parent.partition_key.as_deref()?;
                Some(catalog::partition::bound_sql(&of.bound, key))
            }),
        })
    });
    // A TOAST relation has no catalog row of its own here (its table's
    // holds its numbers): shown as PostgreSQL names it.
    let toast_names: Vec<(u32, u32, String)> = self::tables(cx)
        .filter_map(|t| {
            t.toast
                .map(|r| (r.oid, r.relfilenode, format!("pg_toast_{}", t.oid)))
        })
        .collect();
    let toasts: Vec<Row> = toast_names
        .iter()
        .map(|(oid, relfilenode, name)| {
            class_row(ClassRow {
                oid: *oid,
                temp: false,
                name,
                namespace: PG_TOAST_NAMESPACE,
                relam: HEAP_AM,
                relfilenode: *relfilenode,
                relpages: 0,
                reltuples: -1.0,
                relallvisible: 0,
                relkind: "t",
                natts: 3,
                hasrules: false,
                hasindex: false,
                checks: 0,
                hastriggers: false,
                toast: 0,
                hassubclass: false,
                partbound: None,
            })
        })
        .collect();
    let db = cx.db_oid;
    let indexes = cx
        .catalog
        .indexes
        .values()
        .filter(move |i| i.db_oid == db)
        .map(|i| {
            class_row(ClassRow {
                oid: i.oid,
                temp: cx.catalog.is_temp_namespace(i.namespace),
                name: &i.name,
                namespace: i.namespace,
                relam: super::indexes::BTREE_AM,
                relfilenode: i.relfilenode,
                relpages: access::heap::relation_blocks(cx.pool, i.locator()) as i32,
                reltuples: -1.0,
                relallvisible: 0,
                relkind: "i",
                natts: i.keys.len(),
                hasrules: false,
                hasindex: false,
                checks: 0,
                hastriggers: false,
                toast: 0,
                hassubclass: false,
                partbound: None,
            })
        });
    let views = views(cx).map(|v| {
        class_row(ClassRow {
            oid: v.oid,
            temp: cx.catalog.is_temp_namespace(v.namespace),
            name: &v.name,
            namespace: v.namespace,
            relam: 0,
            relfilenode: 0,
            relpages: 0,
            reltuples: -1.0,
            relallvisible: 0,
            relkind: "v",
            natts: v.columns.len(),
            hasrules: true,
            hasindex: false,
            checks: 0,
            hastriggers: false,
            toast: 0,
            hassubclass: false,
            partbound: None,
        })
    });
    let sequences = sequences(cx).map(|q| {
        class_row(ClassRow {
            oid: q.oid,
            temp: cx.catalog.is_temp_namespace(q.namespace),
            name: &q.name,
            namespace: q.namespace,
            relam: 0,
            relfilenode: q.relfilenode,
            relpages: 1,
            reltuples: 1.0,
            relallvisible: 0,
            relkind: "S",
            natts: 3,
            hasrules: false,
            hasindex: false,
            checks: 0,
            hastriggers: false,
            toast: 0,
            hassubclass: false,
            partbound: None,
        })
    });
    tables
        .chain(views)
        .chain(sequences)
        .chain(indexes)
        .chain(toasts)
        .collect()
}

/// This database's sequences.
pub(super) fn sequences<'a>(
    cx: &'a ViewContext<'_>,
) -> impl Iterator<Item = &'a ::catalog::Sequence> {
    let db = cx.db_oid;
    cx.catalog
        .sequences
        .values()
        .filter(move |q| q.db_oid == db)
}

/// This database's views.
pub(super) fn views<'a>(cx: &'a ViewContext<'_>) -> impl Iterator<Item = &'a ::catalog::View> {
    let db = cx.db_oid;
    cx.catalog.views.values().filter(move |v| v.db_oid == db)
}

fn pg_views(cx: &ViewContext<'_>) -> Vec<Row> {
    views(cx)
        .map(|v| {
            vec![
                text(namespace_name(cx.catalog, v.namespace)),
                text(&v.name),
                text("postgres"),
                text(&format!(" {};", v.query)),
            ]
        })
        .collect()
}

fn pg_am(_: &ViewContext<'_>) -> Vec<Row> {
    // amhandler: the handler functions are not in pg_proc, so 0 ('-').
    vec![
        vec![Value::Oid(HEAP_AM), text("heap"), Value::Oid(0), text("t")],
        vec![Value::Oid(403), text("btree"), Value::Oid(0), text("i")],
    ]
}

fn pg_tables(cx: &ViewContext<'_>) -> Vec<Row> {
    tables(cx)
        .map(|t| {
            vec![
                text(namespace_name(cx.catalog, t.namespace)),
                text(&t.name),
                text("postgres"),
                Value::Null,
                Value::Bool(false),
                Value::Bool(false),
                Value::Bool(false),
                Value::Bool(false),
            ]
        })
        .collect()
}

/// pg_type's storage properties: (typbyval, typalign, typstorage).
pub(super) fn storage_of(t: TypeId) -> (bool, &'static str, &'static str) {
    match t {
        Bool | Name | Unknown => (t == Bool, "c", "p"),
        Int2 => (true, "s", "p"),
        Int8 | Float8 | Timestamp | Timestamptz => (true, "d", "p"),
        Interval => (false, "d", "p"),
        Numeric => (false, "i", "m"),
        Text | Varchar | Bpchar | Bytea => (false, "i", "x"),
        Uuid => (false, "c", "p"),
        Money => (true, "d", "p"),
        MacAddr | MacAddr8 => (false, "i", "p"),
        Inet | Cidr => (false, "i", "m"),
        Tid => (false, "s", "p"),
        Int8Array => (false, "d", "x"),
        t if t.array_element().is_some() => (false, "i", "x"),
        _ => (true, "i", "p"),
    }
}

/// pg_type.typcollation: collatable types use the default collation,
/// except name, which is C.
pub(super) fn type_collation(t: TypeId) -> u32 {
    match t {
        Text | Varchar | Bpchar | TextArray => DEFAULT_COLLATION,
        Name | NameArray => C_COLLATION,
        _ => 0,
    }
}

fn pg_attribute(cx: &ViewContext<'_>) -> Vec<Row> {
    relation_columns(cx)
        .map(|(rel, i, c)| {
            let ty = c.data_type().id;
            let (byval, align, _) = storage_of(ty);
            let storage = c.effective_storage().code().to_string();
            let compression = c
                .compression
                .map_or(String::new(), |m| m.code().to_string());
            vec![
                Value::Oid(rel),
                text(&c.name),
                Value::Oid(c.type_oid),
                Value::Int4(-1),
                Value::Int2(ty.typlen()),
                Value::Int2(i as i16 + 1),
                Value::Int4(0),
                Value::Int4(-1),
                Value::Int4(c.typmod),
                Value::Bool(byval),
                text(align),
                text(&storage),
                // '\0' (empty): default_toast_compression.
                text(&compression),
                Value::Bool(c.not_null),
                // An identity column's nextval is no default to SQL.
                Value::Bool(c.default.is_some() && c.identity.is_none()),
                Value::Bool(false),
                text(&c.identity.map_or(String::new(), |i| i.code().to_string())),
                text(""),
                Value::Bool(false),
                Value::Bool(true),
                Value::Int4(0),
                Value::Oid(type_collation(ty)),
                Value::Null,
                Value::Null,
                Value::Null,
                Value::Null,
            ]
        })
        .collect()
}

fn pg_type(cx: &ViewContext<'_>) -> Vec<Row> {
    let mut rows: Vec<Row> = TypeId::ALL
        .iter()
        .map(|&t| {
            let (byval, align, storage) = storage_of(t);
            let pseudo = matches!(t, Unknown | Void);
            let functions = types::io_functions::io_functions(t);
            let io = |i: usize| Value::Oid(functions.map_or(0, |f| f[i].oid));
            let elem = match t {
                // name is a fixed-length array of "char" (oid 18) in PostgreSQL.
                Name => 18,
                t => t.array_element().map_or(0, |e| e.oid()),
            };
            vec![
                Value::Oid(t.oid()),
                text(t.name()),
                Value::Oid(PG_CATALOG_NAMESPACE),
                Value::Oid(BOOTSTRAP_SUPERUSER),
                Value::Int2(t.typlen()),
                Value::Bool(byval),
                text(if pseudo { "p" } else { "b" }),
                text(&t.category().to_string()),
                Value::Bool(t.is_preferred()),
                Value::Bool(true),
                text(","),
                Value::Oid(0),
                Value::Oid(0),
                Value::Oid(elem),
                Value::Oid(t.array_type_oid()),
                io(0),
                io(1),
                io(2),
                io(3),
                Value::Oid(0),
                Value::Oid(0),
                Value::Oid(0),
                text(align),
                text(storage),
                Value::Bool(false),
                Value::Oid(0),
                Value::Int4(-1),
                Value::Int4(0),
                Value::Oid(type_collation(t)),
                Value::Null,
                Value::Null,
                Value::Null,
            ]
        })
        .collect();
    rows.extend(super::user_types::pg_type_rows(cx));
    rows
}

fn pg_collation(_: &ViewContext<'_>) -> Vec<Row> {
    [
        (DEFAULT_COLLATION, "default", "d", None),
        (C_COLLATION, "C", "c", Some("C")),
        (951, "POSIX", "c", Some("POSIX")),
    ]
    .into_iter()
    .map(|(oid, name, provider, locale)| {
        vec![
            Value::Oid(oid),
            text(name),
            Value::Oid(PG_CATALOG_NAMESPACE),
            Value::Oid(BOOTSTRAP_SUPERUSER),
            text(provider),
            Value::Bool(true),
            Value::Int4(-1),
            opt_text(locale),
            opt_text(locale),
            Value::Null,
            Value::Null,
        ]
    })
    .collect()
}
