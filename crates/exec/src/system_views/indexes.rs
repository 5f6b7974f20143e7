//! Indexes and constraints as SQL sees them: pg_index, pg_constraint,
//! pg_indexes, pg_get_indexdef, pg_get_constraintdef, and amcheck's
//! bt_index_check / bt_index_parent_check.

use ::catalog::{CatalogData, ConstraintKind, Index, ReferentialAction, Table};
use common::{Oid, PgError, PgResult, SqlState};
use types::TypeId::*;
use types::Value;

use super::catalog::namespace_name;
use super::{text, Schema, Source, ViewContext, ViewDef};
use crate::{ExecEnv, Row};

/// The B-tree access method's pg_am oid.
pub(crate) const BTREE_AM: u32 = 403;

fn quote(name: &str) -> String {
    sql::plan::explain::quote_ident(name)
}

/// `{1,2}`: an int2vector shown as the int2[] stand-in.
fn int2_array(v: impl IntoIterator<Item = i16>) -> Value {
    let parts: Vec<String> = v.into_iter().map(|x| x.to_string()).collect();
    Value::Text(format!("{{{}}}", parts.join(",")))
}

/// CREATE [UNIQUE] INDEX as pg_get_indexdef prints it; `column` > 0 asks
/// for that key column's name only.
pub(crate) fn indexdef(cat: &CatalogData, oid: Oid, column: i32) -> Option<String> {
    let index = cat.indexes.get(&oid)?;
    let table = cat.tables.get(&index.table)?;
    if column > 0 {
        let k = index.keys.get(column as usize - 1)?;
        return Some(quote(&table.columns[k.attnum as usize - 1].name));
    }
    let schema = namespace_name(cat, table.namespace);
    Some(format!(
        "CREATE {}INDEX {} ON {}.{} USING btree ({})",
        if index.unique { "UNIQUE " } else { "" },
        quote(&index.name),
        quote(schema),
        quote(&table.name),
        key_list(index, table)
    ))
}

/// `a, b DESC, c NULLS FIRST`.
fn key_list(index: &Index, table: &Table) -> String {
    index
        .keys
        .iter()
        .map(|k| {
            let name = quote(&table.columns[k.attnum as usize - 1].name);
            // Only what differs from the direction's default is printed.
            let order = match (k.descending, k.nulls_first) {
                (false, false) => "",
                (false, true) => " NULLS FIRST",
                (true, true) => " DESC",
                (true, false) => " DESC NULLS LAST",
            };
            format!("{name}{order}")
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn column_list(table: &Table, attnums: &[i16]) -> String {
    attnums
        .iter()
        .map(|a| {
            table
                .columns
                .get(*a as usize - 1)
                .map_or_else(|| a.to_string(), |c| quote(&c.name))
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn action_text(a: ReferentialAction) -> Option<&'static str> {
    match a {
        ReferentialAction::NoAction => None,
        ReferentialAction::Restrict => Some("RESTRICT"),
        ReferentialAction::Cascade => Some("CASCADE"),
        ReferentialAction::SetNull => Some("SET NULL"),
        ReferentialAction::SetDefault => Some("SET DEFAULT"),
    }
}

/// A constraint's definition as pg_get_constraintdef prints it (`pretty`:
/// without ruleutils' outer parentheses in a CHECK's expression).
pub(crate) fn constraintdef(cat: &CatalogData, oid: Oid, pretty: bool) -> Option<String> {
    let c = cat.constraints.get(&oid)?;
    let table = cat.tables.get(&c.table)?;
    let mut out = match &c.kind {
        ConstraintKind::PrimaryKey { .. } => {
            format!("PRIMARY KEY ({})", column_list(table, &c.columns))
        }
        ConstraintKind::Unique { .. } => format!("UNIQUE ({})", column_list(table, &c.columns)),
        ConstraintKind::Check { expr } => format!(
            "CHECK ({})",
            sql::viewdef::check_expression(cat, table, expr, pretty)?
        ),
        ConstraintKind::ForeignKey {
            ref_table,
            ref_columns,
            on_delete,
            on_update,
            match_full,
            ..
        } => {
            let r = cat.tables.get(ref_table)?;
            let mut s = format!(
                "FOREIGN KEY ({}) REFERENCES {}({})",
                column_list(table, &c.columns),
                quote(&r.name),
                column_list(r, ref_columns)
            );
            if *match_full {
                s.push_str(" MATCH FULL");
            }
            if let Some(a) = action_text(*on_update) {
                s.push_str(" ON UPDATE ");
                s.push_str(a);
            }
            if let Some(a) = action_text(*on_delete) {
                s.push_str(" ON DELETE ");
                s.push_str(a);
            }
            s
        }
    };
    if c.deferrable {
        out.push_str(" DEFERRABLE");
        if c.deferred {
            out.push_str(" INITIALLY DEFERRED");
        }
    }
    if !c.validated {
        out.push_str(" NOT VALID");
    }
    Some(out)
}

/// amcheck: verifies the B-tree `oid` (with `parent`, also every downlink).
pub(crate) fn bt_index_check(env: &ExecEnv, oid: Oid, parent: bool) -> PgResult<()> {
    let Some(index) = env.catalog.indexes.get(&oid) else {
        let name = env
            .catalog
            .relation_by_oid(oid)
            .map_or_else(|| oid.to_string(), |(n, _, _)| n.to_string());
        return Err(PgError::new(
            SqlState::WRONG_OBJECT_TYPE,
            "only B-Tree indexes are supported as targets for verification",
        )
        .with_detail(format!("Relation \"{name}\" is not a B-Tree index.")));
    };
    let table = env
        .catalog
        .tables
        .get(&index.table)
        .ok_or_else(|| PgError::internal("index without table"))?;
    access::btree::check_named(
        env.pool,
        index.locator(),
        &index.desc(table),
        parent,
        &index.name,
    )
}

fn this_db_indexes<'a>(cx: &'a ViewContext<'_>) -> impl Iterator<Item = (&'a Index, &'a Table)> {
    let db = cx.db_oid;
    cx.catalog
        .indexes
        .values()
        .filter(move |i| i.db_oid == db)
        .filter_map(|i| cx.catalog.tables.get(&i.table).map(|t| (i, t)))
}

fn pg_index(cx: &ViewContext<'_>) -> Vec<Row> {
    this_db_indexes(cx)
        .map(|(i, _)| {
            let n = i.keys.len() as i16;
            let immediate = cx
                .catalog
                .constraint_of_index(i.oid)
                .is_none_or(|c| !c.deferrable);
            vec![
                Value::Oid(i.oid),
                Value::Oid(i.table),
                Value::Int2(n),
                Value::Int2(n),
                Value::Bool(i.unique),
                Value::Bool(false),
                Value::Bool(i.primary),
                Value::Bool(false),
                Value::Bool(immediate),
                Value::Bool(false),
                Value::Bool(true),
                Value::Bool(false),
                Value::Bool(true),
                Value::Bool(true),
                Value::Bool(false),
                int2_array(i.keys.iter().map(|k| k.attnum)),
                Value::Text(format!("{{{}}}", vec!["0"; i.keys.len()].join(","))),
                Value::Text(format!("{{{}}}", vec!["1978"; i.keys.len()].join(","))),
                int2_array(
                    i.keys
                        .iter()
                        .map(|k| i16::from(k.descending) | (i16::from(k.nulls_first) << 1)),
                ),
                Value::Null,
                Value::Null,
            ]
        })
        .collect()
}

fn action_code(k: &ConstraintKind, update: bool) -> Value {
    match k {
        ConstraintKind::ForeignKey {
            on_delete,
            on_update,
            ..
        } => text(
            &if update { on_update } else { on_delete }
                .code()
                .to_string(),
        ),
        _ => text(" "),
    }
}

fn pg_constraint(cx: &ViewContext<'_>) -> Vec<Row> {
    let db = cx.db_oid;
    cx.catalog
        .constraints
        .values()
        .filter(|c| {
            cx.catalog
                .tables
                .get(&c.table)
                .is_some_and(|t| t.db_oid == db)
        })
        .map(|c| {
            let (confrelid, confkey, matching) = match &c.kind {
                ConstraintKind::ForeignKey {
                    ref_table,
                    ref_columns,
                    match_full,
                    ..
                } => (
                    *ref_table,
                    int2_array(ref_columns.iter().copied()),
                    text(if *match_full { "f" } else { "s" }),
                ),
                _ => (0, Value::Null, text(" ")),
            };
            vec![
                Value::Oid(c.oid),
                text(&c.name),
                Value::Oid(c.namespace),
                text(&c.kind.code().to_string()),
                Value::Bool(c.deferrable),
                Value::Bool(c.deferred),
                Value::Bool(c.validated),
                Value::Oid(c.table),
                Value::Oid(0),
                Value::Oid(c.kind.index().unwrap_or(0)),
                Value::Oid(0),
                Value::Oid(confrelid),
                action_code(&c.kind, true),
                action_code(&c.kind, false),
                matching,
                Value::Bool(true),
                Value::Int4(0),
                Value::Bool(false),
                int2_array(c.columns.iter().copied()),
                confkey,
                Value::Null,
                Value::Null,
                Value::Null,
                Value::Null,
                Value::Null,
                match &c.kind {
                    ConstraintKind::Check { expr } => text(expr),
                    _ => Value::Null,
                },
            ]
        })
        .chain(domain_constraints(cx))
        .collect()
}

/// The CHECK constraints of the database's domains (conrelid 0, contypid
/// the domain).
fn domain_constraints<'a>(cx: &'a ViewContext<'_>) -> impl Iterator<Item = Row> + 'a {
    cx.catalog.user_types_of(cx.db_oid).flat_map(|t| {
        let checks = t.domain.iter().flat_map(|d| d.checks.iter());
        checks.map(|c| {
            let mut row = vec![
                Value::Oid(c.oid),
                text(&c.name),
                Value::Oid(t.namespace),
                text("c"),
                Value::Bool(false),
                Value::Bool(false),
                Value::Bool(true),
                Value::Oid(0),
                Value::Oid(t.oid),
                Value::Oid(0),
                Value::Oid(0),
                Value::Oid(0),
                text(" "),
                text(" "),
                text(" "),
                Value::Bool(true),
                Value::Int4(0),
                Value::Bool(false),
            ];
            row.extend(std::iter::repeat_n(Value::Null, 7));
            row.push(text(&c.expr));
            row
        })
    })
}

fn pg_indexes(cx: &ViewContext<'_>) -> Vec<Row> {
    this_db_indexes(cx)
        .map(|(i, t)| {
            vec![
                text(namespace_name(cx.catalog, t.namespace)),
                text(&t.name),
                text(&i.name),
                Value::Null,
                indexdef(cx.catalog, i.oid, 0).map_or(Value::Null, Value::Text),
            ]
        })
        .collect()
}

pub(super) static VIEWS: &[ViewDef] = &[
    ViewDef {
        schema: Schema::PgCatalog,
        name: "pg_index",
        source: Source::Relation("pg_index"),
        columns: &[
            ("indexrelid", Oid),
            ("indrelid", Oid),
            ("indnatts", Int2),
            ("indnkeyatts", Int2),
            ("indisunique", Bool),
            ("indnullsnotdistinct", Bool),
            ("indisprimary", Bool),
            ("indisexclusion", Bool),
            ("indimmediate", Bool),
            ("indisclustered", Bool),
            ("indisvalid", Bool),
            ("indcheckxmin", Bool),
            ("indisready", Bool),
            ("indislive", Bool),
            ("indisreplident", Bool),
            ("indkey", Int2Array),
            ("indcollation", OidArray),
            ("indclass", OidArray),
            ("indoption", Int2Array),
            ("indexprs", Text),
            ("indpred", Text),
        ],
        rows: pg_index,
    },
    ViewDef {
        schema: Schema::PgCatalog,
        name: "pg_constraint",
        source: Source::Relation("pg_constraint"),
        columns: &[
            ("oid", Oid),
            ("conname", Name),
            ("connamespace", Oid),
            ("contype", Text),
            ("condeferrable", Bool),
            ("condeferred", Bool),
            ("convalidated", Bool),
            ("conrelid", Oid),
            ("contypid", Oid),
            ("conindid", Oid),
            ("conparentid", Oid),
            ("confrelid", Oid),
            ("confupdtype", Text),
            ("confdeltype", Text),
            ("confmatchtype", Text),
            ("conislocal", Bool),
            ("coninhcount", Int4),
            ("connoinherit", Bool),
            ("conkey", Int2Array),
            ("confkey", Int2Array),
            ("conpfeqop", OidArray),
            ("conppeqop", OidArray),
            ("conffeqop", OidArray),
            ("confdelsetcols", Int2Array),
            ("conexclop", OidArray),
            ("conbin", Text),
        ],
        rows: pg_constraint,
    },
    ViewDef {
        schema: Schema::PgCatalog,
        name: "pg_indexes",
        source: Source::Relation("pg_indexes"),
        columns: &[
            ("schemaname", Name),
            ("tablename", Name),
            ("indexname", Name),
            ("tablespace", Name),
            ("indexdef", Text),
        ],
        rows: pg_indexes,
    },
];
