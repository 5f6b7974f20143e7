//! DELETE and UPDATE of one tuple version, each a single call that does the
//! whole protocol under the page lock(s) (design.md §5).
//!
//! Lock order: an update holds at most two heap page content locks, the old
//! version's page and the page the new version goes to, and takes them in
//! ascending block number. Buffers are pinned before either lock is taken, so
//! no buffer is read (and no victim written) while a content lock is held;
//! FSM pages are touched only while no heap page is locked.

use common::{PgError, PgResult, RelFileLocator, Xid};
use storage::buffer::{BufferPool, PageWrite, ReadMode};
use storage::page;
use storage::{fsm, ForkNumber};
use txn::TransactionManager;

use super::rowlock::{self, Intent, Requester, Verdict};
use super::{
    aligned_len, block_exists, check_tuple_size, log, next_target_page, prune_for_space,
    InsertTarget, Tid,
};
use crate::tuple;

/// Outcome of trying to delete/update one tuple version.
#[derive(Debug, PartialEq, Eq)]
pub enum ModifyResult {
    /// Deleted; for an update, the new version's tid (a version with index
    /// entries of its own to make).
    Done(Tid),
    /// Updated, the new version (at this tid) being a heap-only tuple on
    /// the old one's page: reached through its HOT chain's root, it needs
    /// no index entries.
    HeapOnly(Tid),
    /// Already deleted or updated by this command (not an error: skip it).
    SelfModified,
    /// A concurrent transaction committed an update (Some: the newer
    /// version's tid and that transaction, the newer version's xmin, for
    /// `heap::fetch_version`) or a delete (None) of this version first.
    Updated(Option<(Tid, Xid)>),
}

/// `next`, the newer version of the one at `tid` (on the locked page `pg`),
/// with its expected xmin: the old version's updater.
pub(crate) fn successor(pg: &[u8], tid: Tid, next: Option<Tid>) -> Option<(Tid, Xid)> {
    let updater = tuple::xmax(page::item(pg, tid.offset)?);
    next.map(|n| (n, updater))
}

pub(crate) fn vanished(tid: Tid) -> PgError {
    PgError::internal(format!("tuple {tid:?} vanished"))
}

/// Blocks until a transaction has ended and returns its status, or fails
/// (cancel, timeouts, a deadlock): how a writer waits for another one.
pub type WaitForXid<'a> = dyn FnMut(Xid) -> PgResult<txn::XidStatus> + 'a;

/// Waits for `holder` (a row's writer or conflicting locker) to end (rule 3);
/// the caller then looks at the version again.
pub(crate) fn wait_for(holder: Xid, wait: &mut WaitForXid<'_>) -> PgResult<()> {
    wait(holder).map(|_| ())
}

/// Sets xmax/cmax on the old version and points its ctid at `next` (itself
/// for a delete). Clears what a lock or an aborted updater left in the
/// xmax bits; a delete marks the key changed; `lockers` says the locker
/// table holds lockers of this version.
pub(crate) fn stamp_old(t: &mut [u8], xid: Xid, cid: u32, next: Tid, flags: u8) {
    tuple::set_xmax(t, xid, cid);
    tuple::set_ctid(t, next.block, next.offset);
    let mut m = tuple::infomask(t) & !tuple::XMAX_BITS;
    if flags & log::STAMP_UPDATED != 0 {
        m |= tuple::UPDATED;
    }
    if flags & log::STAMP_KEYS_UPDATED != 0 {
        m |= tuple::KEYS_UPDATED;
    }
    if flags & log::STAMP_HAS_LOCKERS != 0 {
        m |= tuple::XMAX_HAS_LOCKERS;
    }
    if flags & log::STAMP_HOT_UPDATED != 0 {
        m |= tuple::HOT_UPDATED;
    }
    tuple::set_infomask(t, m);
}

/// Deletes the version at `tid`: sets our xmax, waiting for a concurrent
/// writer first (rule 3). One content lock acquisition when nobody is in the way.
pub fn delete(
    pool: &'static BufferPool,
    rel: RelFileLocator,
    tid: Tid,
    who: Requester<'_>,
    cid: u32,
    tm: &TransactionManager,
    wait: &mut WaitForXid<'_>,
) -> PgResult<ModifyResult> {
    let xid = who.xid;
    let buf = pool.read_buffer(rel, ForkNumber::Main, tid.block, ReadMode::Normal, None)?;
    loop {
        let mut pg = buf.write();
        match rowlock::inspect(&pg, pool, rel, tid, who, Intent::Delete, tm)? {
            Verdict::Proceed(holders) => {
                // Every other transaction's lock conflicts with a delete;
                // only our enclosing transaction's stays (it must survive a
                // rollback of the savepoint that deletes).
                let stay = rowlock::lockers_after_change(&pg, pool, rel, tid, holders, tm)?;
                let flags = if stay.is_empty() {
                    log::STAMP_KEYS_UPDATED
                } else {
                    log::STAMP_KEYS_UPDATED | log::STAMP_HAS_LOCKERS
                };
                let t = page::item_mut(&mut pg, tid.offset).expect("inspected");
                stamp_old(t, xid, cid, tid, flags);
                pg.mark_dirty();
                let stamp = log::Stamp {
                    offset: tid.offset,
                    cid,
                    next: tid,
                    flags,
                };
                log::log_delete(tm.wal(), rel, tid.block, &mut pg, xid, stamp);
                return Ok(ModifyResult::Done(tid));
            }
            Verdict::SelfModified => return Ok(ModifyResult::SelfModified),
            Verdict::Updated(next) => return Ok(ModifyResult::Updated(successor(&pg, tid, next))),
            Verdict::Wait(holder) => {
                drop(pg);
                wait_for(holder, wait)?;
            }
        }
    }
}

/// Takes back the version at `tid` that `xid` has just inserted (ON
/// CONFLICT's speculative insertion, which found a conflicting key after
/// the heap insert): its xmin becomes `INVALID_XID`, which every
/// transaction reads as aborted, so the version is dead to everyone at
/// once: no unique check waits for our transaction because of it, and
/// pruning removes it (PostgreSQL's "super-delete"). Nothing else can have
/// locked or changed a version no one else could see.
pub fn kill_speculative(
    pool: &'static BufferPool,
    rel: RelFileLocator,
    tid: Tid,
    xid: Xid,
    tm: &TransactionManager,
) -> PgResult<()> {
    let buf = pool.read_buffer(rel, ForkNumber::Main, tid.block, ReadMode::Normal, None)?;
    let mut pg = buf.write();
    let t = page::item_mut(&mut pg, tid.offset).expect("the version just inserted");
    assert_eq!(tuple::xmin(t), xid, "kill_speculative of another's version");
    tuple::set_xmin(t, common::ids::INVALID_XID);
    pg.mark_dirty();
    log::log_kill(tm.wal(), rel, tid.block, &mut pg, xid, tid.offset);
    Ok(())
}

/// For an update `inspect` let through (both pages locked): the lockers
/// that stay on the old version (FOR KEY SHARE ones) lock the new one as
/// well (rule 10). Returns the old version's stamp flags; marks
/// `new_tuple` when it has lockers.
fn hand_over_lockers(
    pool: &BufferPool,
    rel: RelFileLocator,
    (old_page, old): (&PageWrite<'_>, Tid),
    (new_page, new): (&PageWrite<'_>, Tid),
    holders: rowlock::Holders,
    new_tuple: &mut [u8],
    tm: &TransactionManager,
) -> PgResult<u8> {
    let stay = rowlock::lockers_after_change(old_page, pool, rel, old, holders, tm)?;
    if stay.is_empty() {
        return Ok(log::STAMP_UPDATED);
    }
    if !rowlock::carry_lockers(new_page, pool, rel, new, stay, tm)? {
        return Ok(log::STAMP_UPDATED | log::STAMP_HAS_LOCKERS);
    }
    tuple::set_infomask(
        new_tuple,
        tuple::infomask(new_tuple) | tuple::XMAX_HAS_LOCKERS,
    );
    Ok(log::STAMP_UPDATED | log::STAMP_HAS_LOCKERS)
}

/// Replaces the version at `tid` with `new_tuple` (header stamped with our
/// xmin/cmin): sets the old version's xmax, adds the new one and links the
/// old ctid to it, all while the old page stays locked. The new version goes
/// on the old page when it fits, else on a page from `target` (locked with
/// the old one in block order, see the module comment). Concurrent writers
/// are handled as in `delete`; on `Updated(Some(next))` nothing was written
/// and the caller may retry on `next` with a tuple recomputed from it.
///
/// `hot_allowed`: no column any index of the table covers changed (or the
/// table has no indexes). Then a new version on the old page is a
/// heap-only tuple continuing the old one's HOT chain, reported as
/// `HeapOnly`, and the caller makes no index entries for it.
///
/// `keys_updated`: a column of one of the table's unique indexes changed.
/// The update then takes the row lock a DELETE takes (FOR UPDATE's), which
/// FOR KEY SHARE lockers (foreign key checks) conflict with, and marks the
/// old version key-updated; otherwise FOR NO KEY UPDATE's.
#[allow(clippy::too_many_arguments)]
pub fn update(
    pool: &'static BufferPool,
    rel: RelFileLocator,
    tid: Tid,
    new_tuple: &mut [u8],
    hot_allowed: bool,
    keys_updated: bool,
    who: Requester<'_>,
    cid: u32,
    tm: &TransactionManager,
    target: &mut InsertTarget,
    wait: &mut WaitForXid<'_>,
) -> PgResult<ModifyResult> {
    check_tuple_size(new_tuple)?;
    let xid = who.xid;
    let needed = aligned_len(new_tuple);
    let intent = if keys_updated {
        Intent::KeyUpdate
    } else {
        Intent::Update
    };
    let key_flag = if keys_updated {
        log::STAMP_KEYS_UPDATED
    } else {
        0
    };
    let buf = pool.read_buffer(rel, ForkNumber::Main, tid.block, ReadMode::Normal, None)?;
    loop {
        // Free space a prune of the old page left that is too little for
        // the new version, recorded once the page is unlocked.
        let mut pruned_free = None;
        {
            let mut pg = buf.write();
            let verdict = rowlock::inspect(&pg, pool, rel, tid, who, intent, tm)?;
            // Short of space: prune first (our version is live, it stays),
            // so an update-heavy page keeps its rows on it.
            let (free, pruned) = match verdict {
                Verdict::Proceed(_) => prune_for_space(&mut pg, rel, tid.block, needed, tm),
                _ => (0, false),
            };
            let fits = free >= needed;
            if pruned {
                pruned_free = Some(free);
            }
            match verdict {
                Verdict::Proceed(holders) if fits => {
                    let new = Tid {
                        block: tid.block,
                        offset: page::next_offset(&mut pg),
                    };
                    let mut flags = key_flag
                        | hand_over_lockers(
                            pool,
                            rel,
                            (&pg, tid),
                            (&pg, new),
                            holders,
                            new_tuple,
                            tm,
                        )?;
                    if hot_allowed {
                        flags |= log::STAMP_HOT_UPDATED;
                        let m = tuple::infomask(new_tuple) | tuple::HEAP_ONLY;
                        tuple::set_infomask(new_tuple, m);
                    }
                    tuple::set_ctid(new_tuple, new.block, new.offset);
                    assert!(
                        page::add_item_at(&mut pg, new.offset, new_tuple),
                        "space checked"
                    );
                    let t = page::item_mut(&mut pg, tid.offset).expect("locked");
                    stamp_old(t, xid, cid, new, flags);
                    pg.mark_dirty();
                    let stamp = log::Stamp {
                        offset: tid.offset,
                        cid,
                        next: new,
                        flags,
                    };
                    log::log_update(
                        tm.wal(),
                        rel,
                        xid,
                        new,
                        &mut pg,
                        false,
                        tid.block,
                        None,
                        stamp,
                    );
                    return Ok(if hot_allowed {
                        ModifyResult::HeapOnly(new)
                    } else {
                        ModifyResult::Done(new)
                    });
                }
                Verdict::Proceed(_) => {}
                Verdict::SelfModified => return Ok(ModifyResult::SelfModified),
                Verdict::Updated(next) => {
                    return Ok(ModifyResult::Updated(successor(&pg, tid, next)))
                }
                Verdict::Wait(holder) => {
                    drop(pg);
                    wait_for(holder, wait)?;
                    continue;
                }
            }
        }
        if let Some(free) = pruned_free {
            fsm::record_free_space(pool, rel, tid.block, free)?;
        }
        // The new version needs another page: pin one with room while no
        // heap page is locked (the FSM may be consulted), then lock both in
        // block order and check the old version again.
        let other = match target.current.take() {
            Some(b) if b.block() != tid.block => b,
            stale => {
                if let Some(b) = stale {
                    let free = page::free_space(&b.read());
                    fsm::record_free_space(pool, rel, b.block(), free)?;
                }
                next_target_page(pool, rel, needed, 1, target)?;
                let b = target.current.take().expect("target page chosen");
                if b.block() == tid.block {
                    // Space appeared on the old page itself: start over there.
                    target.current = Some(b);
                    continue;
                }
                b
            }
        };
        let (mut old_pg, mut new_pg) = if other.block() < tid.block {
            let n = other.write();
            (buf.write(), n)
        } else {
            let o = buf.write();
            (o, other.write())
        };
        if !block_exists(pool, rel, other.block())? {
            // Cut off by VACUUM since it was chosen: choose again.
            drop((old_pg, new_pg));
            continue;
        }
        if prune_for_space(&mut new_pg, rel, other.block(), needed, tm).0 < needed {
            let free = page::free_space(&new_pg);
            drop((old_pg, new_pg));
            fsm::record_free_space(pool, rel, other.block(), free)?;
            continue;
        }
        let Verdict::Proceed(holders) = rowlock::inspect(&old_pg, pool, rel, tid, who, intent, tm)?
        else {
            // Changed while unlocked: go round and let the old page decide.
            drop((old_pg, new_pg));
            target.current = Some(other);
            continue;
        };
        let new_was_empty = page::item_count(&new_pg) == 0;
        let new = Tid {
            block: other.block(),
            offset: page::next_offset(&mut new_pg),
        };
        let flags = key_flag
            | hand_over_lockers(
                pool,
                rel,
                (&old_pg, tid),
                (&new_pg, new),
                holders,
                new_tuple,
                tm,
            )?;
        tuple::set_ctid(new_tuple, new.block, new.offset);
        assert!(
            page::add_item_at(&mut new_pg, new.offset, new_tuple),
            "space checked"
        );
        let t = page::item_mut(&mut old_pg, tid.offset).expect("locked");
        stamp_old(t, xid, cid, new, flags);
        old_pg.mark_dirty();
        new_pg.mark_dirty();
        let stamp = log::Stamp {
            offset: tid.offset,
            cid,
            next: new,
            flags,
        };
        log::log_update(
            tm.wal(),
            rel,
            xid,
            new,
            &mut new_pg,
            new_was_empty,
            tid.block,
            Some(&mut old_pg),
            stamp,
        );
        drop((old_pg, new_pg));
        target.current = Some(other);
        return Ok(ModifyResult::Done(new));
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use storage::smgr::Smgr;
    use types::Value;

    use super::*;
    use crate::heap::test_rows::{form, TYPES};
    use crate::heap::{self, HeapScan};

    const REL: RelFileLocator = RelFileLocator {
        spc_oid: common::ids::DEFAULT_TABLESPACE_OID,
        db_oid: 5,
        rel_number: 16384,
    };

    /// The `a` of every version visible to (xid, cid), in scan order.
    fn visible(pool: &'static BufferPool, tm: &TransactionManager, xid: Xid, cid: u32) -> Vec<i64> {
        let snap = tm.snapshot(xid, cid);
        let mut scan = HeapScan::new(pool, REL).unwrap();
        let mut seen = Vec::new();
        while scan
            .next_page(&snap, tm, |_, t| {
                let mut row = Vec::new();
                tuple::deform_tuple(t, &TYPES, None, &mut row)?;
                if let Value::Int8(a) = row[0] {
                    seen.push(a);
                }
                Ok(())
            })
            .unwrap()
        {}
        seen
    }

    #[test]
    fn update_places_the_new_version_and_links_it_in_one_call() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("global")).unwrap();
        let tm = TransactionManager::open(dir.path(), txn::test_wal(dir.path())).unwrap();
        let pool = BufferPool::new(32, Arc::new(Smgr::new(dir.path())));
        heap::create_storage(pool, tm.wal(), REL).unwrap();
        let xid = tm.begin().unwrap();
        // Nobody else writes here: a wait would be a bug.
        let mut never = |x: Xid| -> PgResult<txn::XidStatus> { panic!("waited for {x}") };

        // Block 0: two small rows and a big one that leaves ~600 bytes.
        let mut target = InsertTarget::new();
        let small1 = heap::insert(pool, &tm, REL, &mut form(1, 10, xid, 0), &mut target).unwrap();
        let small2 = heap::insert(pool, &tm, REL, &mut form(2, 10, xid, 0), &mut target).unwrap();
        heap::insert(pool, &tm, REL, &mut form(3, 7400, xid, 0), &mut target).unwrap();
        assert_eq!((small1.block, small2.block), (0, 0));

        // Fits: same page.
        let mut target = InsertTarget::new();
        let r = update(
            pool,
            REL,
            small1,
            &mut form(10, 10, xid, 1),
            false,
            false,
            Requester::plain(xid),
            1,
            &tm,
            &mut target,
            &mut never,
        );
        let ModifyResult::Done(new1) = r.unwrap() else {
            panic!("not updated")
        };
        assert_eq!(new1.block, 0);
        // Does not fit: another page, the old one locked with it.
        let r = update(
            pool,
            REL,
            small2,
            &mut form(20, 1000, xid, 1),
            false,
            false,
            Requester::plain(xid),
            1,
            &tm,
            &mut target,
            &mut never,
        );
        let ModifyResult::Done(new2) = r.unwrap() else {
            panic!("not updated")
        };
        assert_ne!(new2.block, 0);
        // Twice in one command: the second sees our own xmax and skips.
        let r = update(
            pool,
            REL,
            small2,
            &mut form(30, 10, xid, 1),
            false,
            false,
            Requester::plain(xid),
            1,
            &tm,
            &mut target,
            &mut never,
        );
        assert_eq!(r.unwrap(), ModifyResult::SelfModified);

        // The old versions point at the new ones.
        for (old, new) in [(small1, new1), (small2, new2)] {
            let bytes = heap::fetch_version(pool, REL, new, xid).unwrap().unwrap();
            assert_eq!(tuple::xmin(&bytes), xid);
            let bytes = heap::fetch_version(pool, REL, old, xid).unwrap().unwrap();
            assert_eq!(tuple::ctid(&bytes), (new.block, new.offset));
            assert_ne!(tuple::infomask(&bytes) & tuple::UPDATED, 0);
            assert_eq!(tuple::xmax(&bytes), xid);
        }
        // Command 1 sees neither its new versions nor lost its old ones...
        assert_eq!(visible(pool, &tm, xid, 1), vec![1, 2, 3]);
        // ...the next command sees only the new ones.
        let mut after = visible(pool, &tm, xid, 2);
        after.sort();
        assert_eq!(after, vec![3, 10, 20]);

        // Delete: one call, the version becomes invisible to later commands.
        let r = delete(pool, REL, new1, Requester::plain(xid), 2, &tm, &mut never).unwrap();
        assert_eq!(r, ModifyResult::Done(new1));
        assert_eq!(
            delete(pool, REL, new1, Requester::plain(xid), 2, &tm, &mut never).unwrap(),
            ModifyResult::SelfModified
        );
        let mut after = visible(pool, &tm, xid, 3);
        after.sort();
        assert_eq!(after, vec![3, 20]);

        // Crash: nothing written but the log. Replay into a new pool over
        // the same files rebuilds the same visible rows.
        tm.commit(xid, txn::SyncCommit::On).unwrap();
        let xid2 = tm.begin().unwrap();
        let mut batch: Vec<Vec<u8>> = (100..400).map(|a| form(a, 50, xid2, 0)).collect();
        heap::insert_batch(pool, &tm, REL, &mut batch, &mut InsertTarget::bulk(pool)).unwrap();
        tm.commit(xid2, txn::SyncCommit::On).unwrap();
        let mut before = visible(pool, &tm, 0, 0);
        before.sort();
        assert_eq!(before.len(), 2 + 300);

        let wal2 = wal::Wal::open(
            dir.path(),
            wal::WalSettings::new(
                1 << 20,
                wal::settings::WalReloadable {
                    fsync: false,
                    ..Default::default()
                },
            ),
        )
        .unwrap();
        let tm2 = TransactionManager::open(dir.path(), wal2).unwrap();
        let pool2 = BufferPool::new(64, Arc::new(Smgr::new(dir.path())));
        let heap_redo = heap::log::HeapRedo { pool: pool2 };
        let mut handlers: Vec<Option<&dyn wal::Redo>> = vec![None; wal::rmgr::COUNT];
        handlers[wal::rmgr::HEAP as usize] = Some(&heap_redo);
        handlers[wal::rmgr::SMGR as usize] = Some(&heap_redo);
        handlers[wal::rmgr::XACT as usize] = Some(&tm2);
        let rep = wal2.startup(dir.path(), &handlers).unwrap();
        assert!(rep.crashed && rep.records > 0);
        let mut replayed = visible(pool2, &tm2, 0, 0);
        replayed.sort();
        assert_eq!(replayed, before);
    }
}
