//! Finding the rows a foreign key relates: the referenced row holding a
//! key (through the referenced table's unique index, locked FOR KEY
//! SHARE), and the referencing rows holding one (through an index of the
//! referencing table whose leading columns are the key, else a scan).

use std::cmp::Ordering;
use std::sync::Arc;

use access::btree::{self, IndexScan, ScanBound, ScanRange};
use access::heap::{self, HeapScan, LockResult, RowLockMode, Tid, WaitPolicy};
use access::tuple::{self, deform_tuple};
use common::{PgError, PgResult, SqlState};
use txn::{Snapshot, XidStatus};
use types::cast::{cast_value, CastContext};
use types::{DataType, Value};

use super::ForeignKey;
use crate::dml::wait_error;
use crate::ExecEnv;

/// Whether two keys hold equal values column by column, compared as
/// `types` (NULL equals nothing).
pub(crate) fn keys_equal(types: &[DataType], a: &[Value], b: &[Value]) -> bool {
    types.iter().zip(a.iter().zip(b)).all(|(t, (x, y))| {
        !x.is_null() && !y.is_null() && types::ops::compare_typed(t.id, x, y) == Ordering::Equal
    })
}

pub(super) fn serialization_failure() -> PgError {
    PgError::new(
        SqlState::SERIALIZATION_FAILURE,
        "could not serialize access due to concurrent update",
    )
}

/// A referencing key in the referenced columns' types; None when a value
/// cannot be one (out of its range): no referenced row holds it then.
pub(super) fn to_parent_types(
    fk: &ForeignKey,
    key: &[Value],
    io: &types::IoSettings,
) -> Option<Vec<Value>> {
    key.iter()
        .zip(fk.child_cols.iter().zip(&fk.parent_cols))
        .map(|(v, (&c, &p))| {
            let from = fk.child.columns[c].data_type().id;
            let to = fk.parent.columns[p].data_type();
            if from == to.id {
                return Some(v.clone());
            }
            cast_value(v.clone(), from, to, CastContext::Implicit, io).ok()
        })
        .collect()
}

/// The version of the row at index entry `tid` (a HOT chain's root) that
/// the statement's snapshot sees, and where it is.
fn visible_version(
    env: &ExecEnv,
    rel: common::RelFileLocator,
    tid: Tid,
) -> PgResult<Option<(Tid, Vec<u8>)>> {
    heap::fetch_visible(env.pool, rel, tid, env.snapshot, env.tm, |at, t| {
        (at, t.to_vec())
    })
}

fn visible(snapshot: &Snapshot, t: &[u8], env: &ExecEnv) -> bool {
    snapshot.tuple_visible(
        tuple::xmin(t),
        tuple::cmin(t),
        tuple::deleting_xmax(t),
        tuple::cmax(t),
        env.tm,
    )
}

/// Whether a version is live to the transaction itself, whatever its
/// command (PostgreSQL's SnapshotSelf): inserted by a committed or our own
/// transaction, and deleted by neither.
pub(super) fn live_to_self(t: &[u8], env: &ExecEnv) -> bool {
    let own = &env.snapshot.own;
    let committed = |x| env.tm.status_settled(x) == XidStatus::Committed;
    let xmin = tuple::xmin(t);
    if !own.contains(xmin) && xmin != common::ids::BOOTSTRAP_XID && !committed(xmin) {
        return false;
    }
    let xmax = tuple::deleting_xmax(t);
    xmax == 0 || (!own.contains(xmax) && !committed(xmax))
}

/// Locks the version at `tid` of `rel` FOR KEY SHARE for the statement's
/// transaction. A version a committed transaction updated meanwhile is
/// followed to its newest one while `still_matches` says its row still
/// holds the key; REPEATABLE READ follows only an update that left the
/// unique indexes' columns alone (PostgreSQL's FOR KEY SHARE does not
/// conflict with it), else fails with 40001. Returns the version locked,
/// or None when the row is gone or no longer matches.
pub(super) fn lock_key_share(
    env: &mut ExecEnv,
    table: &catalog::Table,
    types: &[DataType],
    mut tid: Tid,
    still_matches: &dyn Fn(&[Value]) -> bool,
) -> PgResult<Option<Tid>> {
    let rel = table.locator();
    let toast = table.toast_source(env.pool);
    loop {
        let who = env.requester();
        let (pool, tm) = (env.pool, env.tm);
        let hooks = &mut *env.hooks;
        let r = heap::lock_tuple(
            pool,
            rel,
            tid,
            who,
            RowLockMode::KeyShare,
            WaitPolicy::Block,
            tm,
            &mut |x| hooks.wait_for_transaction(x),
        )
        .map_err(|e| wait_error(env, e))?;
        match r {
            LockResult::Locked => return Ok(Some(tid)),
            LockResult::SelfModified | LockResult::WouldBlock | LockResult::Updated(None) => {
                return Ok(None)
            }
            LockResult::Updated(Some(_))
                if env.isolation.uses_transaction_snapshot() && keys_updated(env, rel, tid)? =>
            {
                return Err(serialization_failure())
            }
            LockResult::Updated(Some((next, updater))) => {
                let Some(bytes) = heap::fetch_version(pool, rel, next, updater)? else {
                    return Ok(None);
                };
                let mut row = Vec::with_capacity(types.len());
                deform_tuple(&bytes, types, toast, &mut row)?;
                if !still_matches(&row) {
                    return Ok(None);
                }
                tid = next;
            }
        }
    }
}

/// Whether the version at `tid` was replaced by an update that changed a
/// unique index's column (`access::heap::update`'s `keys_updated`).
fn keys_updated(env: &ExecEnv, rel: common::RelFileLocator, tid: Tid) -> PgResult<bool> {
    Ok(heap::fetch_any(env.pool, rel, tid)?
        .is_none_or(|t| tuple::infomask(&t) & tuple::KEYS_UPDATED != 0))
}

/// Whether the referenced table holds `key` (in the referenced columns'
/// types and order) in a row the statement's snapshot sees; with `lock`,
/// that row is locked FOR KEY SHARE first (rule 3).
pub(super) fn find_referenced(
    fk: &ForeignKey,
    key: &[Value],
    lock: bool,
    env: &mut ExecEnv,
) -> PgResult<bool> {
    let rel = fk.parent.locator();
    let index_key: Vec<Value> = fk.index_order.iter().map(|&i| key[i].clone()).collect();
    let tids = btree::find_equal(env.pool, fk.index.locator(), &fk.desc, &index_key)?;
    let types = fk.parent.column_types();
    let key_types: Vec<DataType> = fk.parent_cols.iter().map(|&c| types[c]).collect();
    for tid in tids {
        let Some((at, _)) = visible_version(env, rel, tid)? else {
            continue;
        };
        if !lock {
            return Ok(true);
        }
        let matches = |row: &[Value]| keys_equal(&key_types, &fk.parent_key(row), key);
        if lock_key_share(env, &fk.parent, &types, at, &matches)?.is_some() {
            return Ok(true);
        }
    }
    Ok(false)
}

/// A referencing row found for a referenced key.
pub(super) struct Referencing {
    pub tid: Tid,
    pub row: Vec<Value>,
    /// Whether `crosscheck` (REPEATABLE READ's transaction snapshot) sees it.
    pub seen_before: bool,
}

/// Whether referencing row `row` holds the referenced key `key` (the
/// referenced columns' values; MATCH FULL and SIMPLE alike need every
/// column equal).
pub(super) fn references(fk: &ForeignKey, row: &[Value], key: &[Value]) -> bool {
    fk.child_cols.iter().zip(key).all(|(&c, k)| {
        let v = &row[c];
        !v.is_null()
            && !k.is_null()
            && types::ops::compare_typed(fk.child.columns[c].data_type().id, v, k)
                == Ordering::Equal
    })
}

/// The referencing rows holding `key` that the statement's snapshot sees.
pub(super) fn find_referencing(
    fk: &ForeignKey,
    key: &[Value],
    crosscheck: Option<&Snapshot>,
    env: &mut ExecEnv,
) -> PgResult<Vec<Referencing>> {
    let types = fk.child.column_types();
    let mut out = Vec::new();
    let mut found = |tid: Tid, t: &[u8], env: &ExecEnv| -> PgResult<()> {
        let mut row = Vec::with_capacity(types.len());
        deform_tuple(t, &types, fk.child.toast_source(env.pool), &mut row)?;
        if references(fk, &row, key) {
            let seen_before = crosscheck.is_none_or(|s| visible(s, t, env));
            out.push(Referencing {
                tid,
                row,
                seen_before,
            });
        }
        Ok(())
    };
    if let Some((index, prefix)) = referencing_index(fk, key, env) {
        let desc = Arc::new(index.desc(&fk.child));
        let bound = ScanBound {
            prefix,
            inclusive: true,
        };
        let range = ScanRange {
            lower: Some(bound.clone()),
            upper: Some(bound),
            backward: false,
        };
        let mut scan = IndexScan::new(env.pool, index.locator(), desc, range, false)?;
        let mut tids = Vec::new();
        while let Some((tid, _)) = scan.next()? {
            tids.push(tid);
        }
        for tid in tids {
            env.check_cancel()?;
            if let Some((at, t)) = visible_version(env, fk.child.locator(), tid)? {
                found(at, &t, env)?;
            }
        }
        return Ok(out);
    }
    let mut scan = HeapScan::new(env.pool, fk.child.locator())?;
    loop {
        env.check_cancel()?;
        let (snapshot, tm) = (env.snapshot, env.tm);
        let shared: &ExecEnv = env;
        if !scan.next_page(snapshot, tm, |tid, t| found(tid, t, shared))? {
            return Ok(out);
        }
    }
}

/// An index of the referencing table whose leading columns are the
/// foreign key's (of the referenced columns' types, so the key needs no
/// conversion), and the key as its scan prefix.
fn referencing_index(
    fk: &ForeignKey,
    key: &[Value],
    env: &ExecEnv,
) -> Option<(catalog::Index, Vec<Value>)> {
    let n = fk.child_cols.len();
    let same_types =
        fk.child_cols.iter().zip(&fk.parent_cols).all(|(&c, &p)| {
            fk.child.columns[c].data_type().id == fk.parent.columns[p].data_type().id
        });
    if !same_types || key.iter().any(Value::is_null) {
        return None;
    }
    env.catalog.indexes_of(fk.child.oid).find_map(|i| {
        if i.keys.len() < n {
            return None;
        }
        let prefix = i.keys[..n]
            .iter()
            .map(|k| {
                let pos = fk
                    .child_cols
                    .iter()
                    .position(|&c| c + 1 == k.attnum as usize)?;
                Some(key[pos].clone())
            })
            .collect::<Option<Vec<_>>>()?;
        Some((i.clone(), prefix))
    })
}
