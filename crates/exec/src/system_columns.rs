//! The system columns a table scan emits (`Plan::SeqScan::system`),
//! computed from each row version it returns: ctid, xmin, cmin, xmax,
//! cmax, tableoid, and a column's stored form for pg_column_size and
//! pg_column_compression.

use access::heap::{self, Tid};
use access::toast::Compression;
use access::tuple;
use catalog::Table;
use common::PgResult;
use sql::plan::SystemColumn;
use types::{DataType, TypeId, Value};

use crate::{ExecEnv, Row};

/// Appends the values of `cols` for the version `t` at `tid` of `table`
/// to `row`, which holds the version's columns decoded.
pub(crate) fn push_values(
    cols: &[SystemColumn],
    tid: Tid,
    t: &[u8],
    table: &Table,
    types: &[DataType],
    row: &mut Row,
) -> PgResult<()> {
    for c in cols {
        let v = match *c {
            SystemColumn::Ctid => Value::Int8(types::tid::pack(tid.block, tid.offset)),
            SystemColumn::Xmin => Value::Oid(types::tid::xid_shown(tuple::xmin(t))),
            // The xmax a row shows: its deleter's or locker's, as
            // PostgreSQL's; 0 when none.
            SystemColumn::Xmax => Value::Oid(types::tid::xid_shown(tuple::xmax(t))),
            // PostgreSQL keeps one command id per version, the deleter's
            // once deleted, and shows it as both.
            SystemColumn::Cmin | SystemColumn::Cmax => {
                Value::Oid(if tuple::deleting_xmax(t) != 0 {
                    tuple::cmax(t)
                } else {
                    tuple::cmin(t)
                })
            }
            SystemColumn::TableOid => Value::Oid(table.oid),
            SystemColumn::StoredSize(i) => match stored_form(t, types, row, i)? {
                Some((size, _)) => Value::Int4(size as i32),
                None => Value::Null,
            },
            SystemColumn::StoredCompression(i) => match stored_form(t, types, row, i)? {
                Some((_, Some(method))) => Value::Text(compression_name(method).into()),
                _ => Value::Null,
            },
        };
        row.push(v);
    }
    Ok(())
}

fn compression_name(c: Compression) -> &'static str {
    match c {
        Compression::Pglz => "pglz",
        Compression::Lz4 => "lz4",
    }
}

/// Column `i`'s size as stored and its compression method (None: NULL).
/// A fixed-width value takes its type's length; a numeric PostgreSQL's
/// packed form (ours is stored differently); any other varlena the bytes
/// it takes in the row, or compressed or out of line.
fn stored_form(
    t: &[u8],
    types: &[DataType],
    row: &Row,
    i: usize,
) -> PgResult<Option<(usize, Option<Compression>)>> {
    let value = row.get(i).unwrap_or(&Value::Null);
    if value.is_null() {
        return Ok(None);
    }
    let ty = types[i].id;
    if ty.typlen() > 0 {
        return Ok(Some((ty.typlen() as usize, None)));
    }
    let mut found = None;
    tuple::for_each_varlena(t, types, |k, payload, special| {
        if k == i {
            found = Some(access::toast::stored_form(payload, special)?);
        }
        Ok(())
    })?;
    Ok(match (found, value) {
        (Some((_, None)), Value::Numeric(n)) if ty == TypeId::Numeric => {
            Some((types::datum_size::stored_numeric_size(n), None))
        }
        (Some(form), _) => Some(form),
        // A column added after the version was written: its default.
        (None, v) => Some((types::datum_size::datum_size(v, ty), None)),
    })
}

/// UPDATE/DELETE in the join form: the target's system columns in `row`
/// (after its tid) made those of the version the statement wrote at
/// `tid` (the new one, or the deleted one with its xmax), which RETURNING
/// reads, as PostgreSQL's.
pub(crate) fn refresh(
    env: &ExecEnv,
    table: &Table,
    join: &sql::plan::ModifyJoin,
    tid: Tid,
    row: &mut Row,
) -> PgResult<()> {
    let cols = &join.target_system;
    if cols.is_empty() {
        return Ok(());
    }
    let Some(bytes) = heap::fetch_any(env.pool, table.locator(), tid)? else {
        return Ok(());
    };
    let types = table.column_types();
    let mut version = Vec::with_capacity(types.len() + cols.len());
    tuple::deform_tuple(&bytes, &types, table.toast_source(env.pool), &mut version)?;
    version.resize(types.len(), Value::Null);
    push_values(cols, tid, &bytes, table, &types, &mut version)?;
    let at = join.tid_column() + 1;
    row.splice(at..at + cols.len(), version.drain(types.len()..));
    Ok(())
}

/// INSERT ... RETURNING naming system columns: `row` (the table's
/// columns) followed by the named system columns of the version just
/// written at `tid`.
pub(crate) fn push_written(env: &ExecEnv, table: &Table, tid: Tid, row: &mut Row) -> PgResult<()> {
    let types = table.column_types();
    row.resize(types.len(), Value::Null);
    match heap::fetch_any(env.pool, table.locator(), tid)? {
        Some(bytes) => push_values(&SystemColumn::NAMED, tid, &bytes, table, &types, row),
        None => {
            row.extend(SystemColumn::NAMED.iter().map(|_| Value::Null));
            Ok(())
        }
    }
}
