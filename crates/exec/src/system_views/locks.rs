//! pg_locks: every heavyweight lock held or awaited (`txn::lock`) and
//! every SIREAD lock (`txn::ssi`), with PostgreSQL 15's columns.

use txn::lock::LockTag;
use types::TypeId::*;
use types::Value;

use super::{text, Schema, Source, ViewContext, ViewDef};
use crate::Row;

pub(super) static VIEWS: &[ViewDef] = &[ViewDef {
    schema: Schema::PgCatalog,
    name: "pg_locks",
    source: Source::Function("pg_lock_status"),
    // transactionid is an xid in PostgreSQL; xids are 64-bit here.
    columns: &[
        ("locktype", Text),
        ("database", Oid),
        ("relation", Oid),
        ("page", Int4),
        ("tuple", Int2),
        ("virtualxid", Text),
        ("transactionid", Int8),
        ("classid", Oid),
        ("objid", Oid),
        ("objsubid", Int2),
        ("virtualtransaction", Text),
        ("pid", Int4),
        ("mode", Text),
        ("granted", Bool),
        ("fastpath", Bool),
        ("waitstart", Timestamptz),
    ],
    rows: pg_locks,
}];

/// Microseconds since the Unix epoch as a timestamptz (2000-01-01 based).
fn timestamptz(unix_us: i64) -> Value {
    const UNIX_TO_PG_EPOCH_US: i64 = 946_684_800_000_000;
    Value::Timestamptz(unix_us - UNIX_TO_PG_EPOCH_US)
}

fn pg_locks(cx: &ViewContext<'_>) -> Vec<Row> {
    let null = || Value::Null;
    cx.tm
        .locks()
        .status()
        .into_iter()
        .map(|s| {
            // database, relation, page, tuple, transactionid, classid, objid, objsubid
            let (db, rel, page, tuple, xid, class, objid, subid) = match s.tag {
                LockTag::Relation { db, rel } => (
                    Value::Oid(db),
                    Value::Oid(rel),
                    null(),
                    null(),
                    null(),
                    null(),
                    null(),
                    null(),
                ),
                LockTag::Transaction(x) => (
                    null(),
                    null(),
                    null(),
                    null(),
                    Value::Int8(x as i64),
                    null(),
                    null(),
                    null(),
                ),
                LockTag::Tuple {
                    db,
                    rel,
                    block,
                    offset,
                } => (
                    Value::Oid(db),
                    Value::Oid(rel),
                    Value::Int4(block as i32),
                    Value::Int2(offset as i16),
                    null(),
                    null(),
                    null(),
                    null(),
                ),
                LockTag::Advisory { db, key } => {
                    let (a, b, c) = key.fields();
                    (
                        Value::Oid(db),
                        null(),
                        null(),
                        null(),
                        null(),
                        Value::Oid(a),
                        Value::Oid(b),
                        Value::Int2(c as i16),
                    )
                }
                LockTag::Object {
                    db,
                    class,
                    objid,
                    subid,
                } => (
                    Value::Oid(db),
                    null(),
                    null(),
                    null(),
                    null(),
                    Value::Oid(class),
                    Value::Oid(objid),
                    Value::Int2(subid as i16),
                ),
            };
            vec![
                text(s.tag.kind_name()),
                db,
                rel,
                page,
                tuple,
                null(),
                xid,
                class,
                objid,
                subid,
                text(&s.virtual_xact),
                Value::Int4(s.pid),
                text(s.mode.name()),
                Value::Bool(s.granted),
                Value::Bool(s.fast_path),
                s.wait_start_us.map_or(Value::Null, timestamptz),
            ]
        })
        .chain(siread_locks(cx))
        .collect()
}

/// SERIALIZABLE transactions' SIREAD locks (`txn::ssi`), as PostgreSQL
/// lists them: mode SIReadLock, granted, locktype relation, page or tuple.
/// A relation is named by its relfilenode (the table's oid until a rewrite).
fn siread_locks(cx: &ViewContext<'_>) -> impl Iterator<Item = Row> {
    use txn::ssi::PredicateTarget;
    let null = || Value::Null;
    cx.tm.predicate().locks().into_iter().map(move |l| {
        let (db, rel) = l.target.relation();
        let (page, tuple) = match l.target {
            PredicateTarget::Relation { .. } => (null(), null()),
            PredicateTarget::Page { block, .. } => (Value::Int4(block as i32), null()),
            PredicateTarget::Tuple { block, offset, .. } => {
                (Value::Int4(block as i32), Value::Int2(offset as i16))
            }
        };
        vec![
            text(l.target.locktype()),
            Value::Oid(db),
            Value::Oid(rel),
            page,
            tuple,
            null(),
            null(),
            null(),
            null(),
            null(),
            null(),
            Value::Int4(l.pid),
            text("SIReadLock"),
            Value::Bool(true),
            Value::Bool(false),
            null(),
        ]
    })
}
