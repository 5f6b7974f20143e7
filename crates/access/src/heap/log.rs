//! The heap's log records and their redo (rmgr HEAP), and relation file
//! creation and removal (rmgr SMGR).
//!
//! Every record names the pages it changed as block references; redo of a
//! block (rule 5 in README.md) restores its full-page image when the record
//! carries one, rebuilds it when the record initialises it, and otherwise
//! applies the change only if the page's LSN is older than the record.
//!
//! | kind | blocks | block data |
//! | --- | --- | --- |
//! | INSERT | the page | offset, tuple |
//! | MULTI_INSERT | the page | count, (offset, length, tuple)… |
//! | DELETE | the page | offset, cid, next tid, stamp flags |
//! | UPDATE | new page [, old page] | new: offset, tuple; old: as DELETE |
//! | LOCK | the page | offset, xmax, xmax's infomask bits |
//! | PRUNE | the page | counts, then offsets: (root, target) redirected, made dead, made unused (the page is then compacted) |
//! | VACUUM | the page | LP_DEAD offsets made unused (the page is then compacted) |
//! | KILL | the page | offset of a version whose xmin became invalid (ON CONFLICT's super-delete) |
//! | VISIBLE | the heap page, its visibility map page | map: the bits set |
//!
//! INSERT, MULTI_INSERT, DELETE, UPDATE and LOCK carry `VM_CLEARED` (and an
//! UPDATE on two pages `VM_CLEARED_OLD`) in their info's low bits when the
//! change cleared the page's PD_ALL_VISIBLE and its map bit; redo clears
//! the map bit whatever the heap page's LSN (access README rule 29).
//!
//! An UPDATE's stamp flags say whether it was a HOT update (the new
//! version's own header, logged whole, carries `HEAP_ONLY`).
//!
//! SMGR records name a relation in their main data: CREATE, DROP,
//! DROP_DATABASE, and TRUNCATE (plus the new main-fork size in blocks).

use common::{RelFileLocator, Xid};
use storage::buffer::{Buffer, BufferPool, PageWrite, ReadMode};
use storage::page::{self, OffsetNumber};
use storage::ForkNumber;
use wal::{rmgr, BlockRef, BlockTag, Record, RecordBuilder, Redo, RedoError, Wal};

use super::prune::PrunePlan;
use super::{visibilitymap, Tid};
use crate::tuple;

pub const HEAP_INSERT: u8 = 0x00;
pub const HEAP_MULTI_INSERT: u8 = 0x10;
pub const HEAP_DELETE: u8 = 0x20;
pub const HEAP_UPDATE: u8 = 0x30;
pub const HEAP_LOCK: u8 = 0x40;
pub const HEAP_PRUNE: u8 = 0x50;
pub const HEAP_VACUUM: u8 = 0x60;
pub const HEAP_KILL: u8 = 0x90;
pub const HEAP_VISIBLE: u8 = 0x70;
/// The record kind is the info's high half; the low half holds flags.
const KIND_MASK: u8 = 0xf0;
/// Info flag: the change cleared PD_ALL_VISIBLE and the visibility map
/// bit of its first block's page (`visibilitymap::clear_for_change`).
pub(crate) const VM_CLEARED: u8 = 0x01;
/// Info flag of an UPDATE on two pages: the same for the old page.
pub(crate) const VM_CLEARED_OLD: u8 = 0x02;

pub const SMGR_CREATE: u8 = 0x10;
pub const SMGR_DROP: u8 = 0x20;
pub const SMGR_DROP_DATABASE: u8 = 0x30;
pub const SMGR_TRUNCATE: u8 = 0x40;

fn tag(rel: RelFileLocator, block: u32) -> BlockTag {
    BlockTag {
        rel,
        fork: ForkNumber::Main,
        block,
    }
}

/// Inserts a record describing pages the caller has changed and still
/// holds exclusively. A failure here leaves changed pages without their
/// record: as PostgreSQL's critical sections, that stops the server.
pub(crate) fn insert_or_panic(wal: &Wal, rec: &RecordBuilder<'_>) -> u64 {
    match wal.insert(rec) {
        Ok(lsn) => lsn,
        Err(e) => panic!("PANIC: could not write to the write-ahead log: {e}"),
    }
}

/// Clears the page's all-visible state for a change about to be logged
/// (rule 29); the flag the record then carries.
fn cleared_flag(pg: &mut PageWrite<'_>, rel: RelFileLocator, block: u32) -> u8 {
    if super::visibilitymap::clear_for_change(pg, rel, block) {
        VM_CLEARED
    } else {
        0
    }
}

/// Logs the insertion of the tuple now at `off` and stamps the page.
/// `was_empty`: the page had no items before (redo starts from a new page).
pub(crate) fn log_insert(
    wal: &Wal,
    rel: RelFileLocator,
    block: u32,
    pg: &mut PageWrite<'_>,
    off: OffsetNumber,
    was_empty: bool,
) {
    let info = HEAP_INSERT | cleared_flag(pg, rel, block);
    let lsn = {
        let t = page::item(pg, off).expect("just added");
        let mut rec = RecordBuilder::new(rmgr::HEAP, info, tuple::xmin(t));
        let b = rec.register_block(tag(rel, block), pg, was_empty);
        let d = rec.block_data(b);
        d.extend_from_slice(&off.to_le_bytes());
        d.extend_from_slice(t);
        insert_or_panic(wal, &rec)
    };
    page::set_lsn(pg, lsn);
}

/// Logs the tuples just added to one page at `offsets`, in one record.
pub(crate) fn log_multi_insert(
    wal: &Wal,
    rel: RelFileLocator,
    block: u32,
    pg: &mut PageWrite<'_>,
    offsets: &[OffsetNumber],
    was_empty: bool,
) {
    let info = HEAP_MULTI_INSERT | cleared_flag(pg, rel, block);
    let lsn = {
        let xid = tuple::xmin(page::item(pg, offsets[0]).expect("just added"));
        let mut rec = RecordBuilder::new(rmgr::HEAP, info, xid);
        let b = rec.register_block(tag(rel, block), pg, was_empty);
        let d = rec.block_data(b);
        d.extend_from_slice(&(offsets.len() as u16).to_le_bytes());
        for &off in offsets {
            let t = page::item(pg, off).expect("just added");
            d.extend_from_slice(&off.to_le_bytes());
            d.extend_from_slice(&(t.len() as u16).to_le_bytes());
            d.extend_from_slice(t);
        }
        insert_or_panic(wal, &rec)
    };
    page::set_lsn(pg, lsn);
}

/// Logs a prune of the page: the pointers it redirected, made dead and
/// made unused.
pub(crate) fn log_prune(
    wal: &Wal,
    rel: RelFileLocator,
    block: u32,
    pg: &mut PageWrite<'_>,
    plan: &PrunePlan,
) {
    let lsn = {
        let mut rec = RecordBuilder::new(rmgr::HEAP, HEAP_PRUNE, 0);
        let b = rec.register_block(tag(rel, block), pg, false);
        let d = rec.block_data(b);
        for count in [plan.redirected.len(), plan.dead.len(), plan.unused.len()] {
            d.extend_from_slice(&(count as u16).to_le_bytes());
        }
        for (root, target) in &plan.redirected {
            d.extend_from_slice(&root.to_le_bytes());
            d.extend_from_slice(&target.to_le_bytes());
        }
        for off in plan.dead.iter().chain(&plan.unused) {
            d.extend_from_slice(&off.to_le_bytes());
        }
        insert_or_panic(wal, &rec)
    };
    page::set_lsn(pg, lsn);
}

fn get_prune_plan(d: &[u8]) -> Result<PrunePlan, String> {
    let (nredirected, ndead, nunused) = (
        u16_at(d, 0)? as usize,
        u16_at(d, 2)? as usize,
        u16_at(d, 4)? as usize,
    );
    let mut at = 6;
    let mut next = || {
        let v = u16_at(d, at);
        at += 2;
        v
    };
    let mut plan = PrunePlan::default();
    for _ in 0..nredirected {
        plan.redirected.push((next()?, next()?));
    }
    for _ in 0..ndead {
        plan.dead.push(next()?);
    }
    for _ in 0..nunused {
        plan.unused.push(next()?);
    }
    Ok(plan)
}

/// Logs VACUUM's second pass over the page: the LP_DEAD pointers it made
/// unused (their index entries are gone).
pub(crate) fn log_vacuum(
    wal: &Wal,
    rel: RelFileLocator,
    block: u32,
    pg: &mut PageWrite<'_>,
    offsets: &[OffsetNumber],
) {
    let lsn = {
        let mut rec = RecordBuilder::new(rmgr::HEAP, HEAP_VACUUM, 0);
        let b = rec.register_block(tag(rel, block), pg, false);
        let d = rec.block_data(b);
        for off in offsets {
            d.extend_from_slice(&off.to_le_bytes());
        }
        insert_or_panic(wal, &rec)
    };
    page::set_lsn(pg, lsn);
}

/// Stamp flags: an update (ctid points at the new version), a delete (the
/// key changed), lockers in the locker table besides the new xmax, a HOT
/// update.
pub(crate) const STAMP_UPDATED: u8 = 0x01;
pub(crate) const STAMP_KEYS_UPDATED: u8 = 0x02;
pub(crate) const STAMP_HAS_LOCKERS: u8 = 0x04;
/// A HOT update: the new version is a heap-only tuple on the same page.
pub(crate) const STAMP_HOT_UPDATED: u8 = 0x08;

/// What `stamp_old` did to an old version, as redo repeats it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Stamp {
    pub offset: OffsetNumber,
    pub cid: u32,
    pub next: Tid,
    pub flags: u8,
}

fn put_stamp(d: &mut Vec<u8>, s: &Stamp) {
    d.extend_from_slice(&s.offset.to_le_bytes());
    d.extend_from_slice(&s.cid.to_le_bytes());
    d.extend_from_slice(&s.next.block.to_le_bytes());
    d.extend_from_slice(&s.next.offset.to_le_bytes());
    d.push(s.flags);
}

fn get_stamp(d: &[u8]) -> Option<Stamp> {
    if d.len() < 13 {
        return None;
    }
    Some(Stamp {
        offset: u16::from_le_bytes([d[0], d[1]]),
        cid: u32::from_le_bytes(d[2..6].try_into().unwrap()),
        next: Tid {
            block: u32::from_le_bytes(d[6..10].try_into().unwrap()),
            offset: u16::from_le_bytes([d[10], d[11]]),
        },
        flags: d[12],
    })
}

pub(crate) fn log_delete(
    wal: &Wal,
    rel: RelFileLocator,
    block: u32,
    pg: &mut PageWrite<'_>,
    xid: Xid,
    stamp: Stamp,
) {
    let info = HEAP_DELETE | cleared_flag(pg, rel, block);
    let lsn = {
        let mut rec = RecordBuilder::new(rmgr::HEAP, info, xid);
        let b = rec.register_block(tag(rel, block), pg, false);
        put_stamp(rec.block_data(b), &stamp);
        insert_or_panic(wal, &rec)
    };
    page::set_lsn(pg, lsn);
}

/// Logs `kill_speculative`'s change: the version at `off` lost its xmin.
pub(crate) fn log_kill(
    wal: &Wal,
    rel: RelFileLocator,
    block: u32,
    pg: &mut PageWrite<'_>,
    xid: Xid,
    off: OffsetNumber,
) {
    let lsn = {
        let mut rec = RecordBuilder::new(rmgr::HEAP, HEAP_KILL, xid);
        let b = rec.register_block(tag(rel, block), pg, false);
        rec.block_data(b).extend_from_slice(&off.to_le_bytes());
        insert_or_panic(wal, &rec)
    };
    page::set_lsn(pg, lsn);
}

/// What `rowlock::stamp_lock` did to a version, as redo repeats it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct LockStamp {
    pub offset: OffsetNumber,
    /// The xmax after the lock: the locker, or the slot's holder when the
    /// locker joined the locker table.
    pub xmax: Xid,
    /// The infomask's xmax bits after the lock.
    pub bits: u16,
}

/// Logs a row lock's change of a tuple header (rmgr HEAP, LOCK).
pub(crate) fn log_lock(
    wal: &Wal,
    rel: RelFileLocator,
    block: u32,
    pg: &mut PageWrite<'_>,
    xid: Xid,
    stamp: LockStamp,
) {
    let info = HEAP_LOCK | cleared_flag(pg, rel, block);
    let lsn = {
        let mut rec = RecordBuilder::new(rmgr::HEAP, info, xid);
        let b = rec.register_block(tag(rel, block), pg, false);
        let d = rec.block_data(b);
        d.extend_from_slice(&stamp.offset.to_le_bytes());
        d.extend_from_slice(&stamp.xmax.to_le_bytes());
        d.extend_from_slice(&stamp.bits.to_le_bytes());
        insert_or_panic(wal, &rec)
    };
    page::set_lsn(pg, lsn);
}

fn get_lock_stamp(d: &[u8]) -> Option<LockStamp> {
    if d.len() < 12 {
        return None;
    }
    Some(LockStamp {
        offset: u16::from_le_bytes([d[0], d[1]]),
        xmax: u64::from_le_bytes(d[2..10].try_into().unwrap()),
        bits: u16::from_le_bytes([d[10], d[11]]),
    })
}

/// Logs an update whose new version is at `new` and old one at `stamp`;
/// `old_pg` is None when both are on `new_pg`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn log_update(
    wal: &Wal,
    rel: RelFileLocator,
    xid: Xid,
    new: Tid,
    new_pg: &mut PageWrite<'_>,
    new_was_empty: bool,
    old_block: u32,
    mut old_pg: Option<&mut PageWrite<'_>>,
    stamp: Stamp,
) {
    let mut info = HEAP_UPDATE | cleared_flag(new_pg, rel, new.block);
    if let Some(old) = old_pg.as_deref_mut() {
        if super::visibilitymap::clear_for_change(old, rel, old_block) {
            info |= VM_CLEARED_OLD;
        }
    }
    let lsn = {
        let mut rec = RecordBuilder::new(rmgr::HEAP, info, xid);
        let b = rec.register_block(
            tag(rel, new.block),
            new_pg,
            new_was_empty && old_pg.is_some(),
        );
        let t = page::item(new_pg, new.offset).expect("just added");
        let d = rec.block_data(b);
        d.extend_from_slice(&new.offset.to_le_bytes());
        d.extend_from_slice(&(t.len() as u16).to_le_bytes());
        d.extend_from_slice(t);
        match &old_pg {
            None => put_stamp(rec.block_data(b), &stamp),
            Some(old) => {
                let o = rec.register_block(tag(rel, old_block), old, false);
                put_stamp(rec.block_data(o), &stamp);
            }
        }
        insert_or_panic(wal, &rec)
    };
    page::set_lsn(new_pg, lsn);
    if let Some(old) = old_pg {
        page::set_lsn(old, lsn);
    }
}

/// Logs a new relation file, before anything is written to it.
pub(crate) fn log_smgr(wal: &Wal, info: u8, rel: RelFileLocator) -> u64 {
    log_smgr_with(wal, info, rel, &[])
}

fn log_smgr_with(wal: &Wal, info: u8, rel: RelFileLocator, extra: &[u8]) -> u64 {
    let mut rec = RecordBuilder::new(rmgr::SMGR, info, 0);
    let d = rec.main_data();
    d.extend_from_slice(&rel.spc_oid.to_le_bytes());
    d.extend_from_slice(&rel.db_oid.to_le_bytes());
    d.extend_from_slice(&rel.rel_number.to_le_bytes());
    d.extend_from_slice(extra);
    insert_or_panic(wal, &rec)
}

/// Logs the truncation of the main fork to `nblocks` (flushed by the
/// caller before the file is cut: redo of older records may extend the
/// file again, and this record must then cut it again).
pub(crate) fn log_truncate(wal: &Wal, rel: RelFileLocator, nblocks: u32) -> u64 {
    log_smgr_with(wal, SMGR_TRUNCATE, rel, &nblocks.to_le_bytes())
}

/// Redo of heap and smgr records.
pub struct HeapRedo {
    pub pool: &'static BufferPool,
}

/// The page a block reference names, ready to be changed by redo: None
/// when the page is already newer than the record.
fn redo_page(
    pool: &'static BufferPool,
    rec: &Record<'_>,
    b: &BlockRef<'_>,
) -> Result<Option<Buffer>, RedoError> {
    let err = |e: storage::StorageError| RedoError::new(rec, e.to_string());
    let smgr = pool.smgr();
    let (rel, fork, block) = (b.tag.rel, b.tag.fork, b.tag.block);
    // The size is cached by smgr; only a fork it knows no blocks of may
    // lack its file (a stat per record would slow replay down).
    let n = smgr.nblocks(rel, fork).map_err(err)?;
    if n == 0 && !smgr.exists(rel, fork) {
        smgr.create(rel, fork).map_err(err)?;
    }
    if n <= block {
        smgr.extend(rel, fork, block + 1 - n).map_err(err)?;
    }
    let fresh = b.has_image() || b.will_init();
    let mode = if fresh {
        ReadMode::Zero
    } else {
        ReadMode::Normal
    };
    let buf = pool
        .read_buffer(rel, fork, block, mode, None)
        .map_err(err)?;
    if !fresh && page::lsn(&buf.read()) >= rec.end {
        return Ok(None);
    }
    Ok(Some(buf))
}

/// Redoes one block: image, or `apply` on the page (initialised first when
/// the record says so). Stamps the record's LSN.
pub(crate) fn redo_block(
    pool: &'static BufferPool,
    rec: &Record<'_>,
    b: &BlockRef<'_>,
    apply: impl FnOnce(&mut [u8]) -> Result<(), String>,
) -> Result<(), RedoError> {
    let Some(buf) = redo_page(pool, rec, b)? else {
        return Ok(());
    };
    let mut pg = buf.write();
    if !b.restore_image(&mut pg) {
        if b.will_init() {
            page::init(&mut pg, 0);
        }
        apply(&mut pg).map_err(|m| RedoError::new(rec, m))?;
    }
    page::set_lsn(&mut pg, rec.end);
    pg.mark_dirty();
    Ok(())
}

/// `redo_block` for a change that cleared the page's PD_ALL_VISIBLE
/// (`clear`: the record's flag for this block) as the forward path did.
fn redo_change(
    pool: &'static BufferPool,
    rec: &Record<'_>,
    b: &BlockRef<'_>,
    clear: bool,
    apply: impl FnOnce(&mut [u8]) -> Result<(), String>,
) -> Result<(), RedoError> {
    redo_block(pool, rec, b, |pg| {
        if clear {
            page::set_flags(pg, page::flags(pg) & !page::PD_ALL_VISIBLE);
        }
        apply(pg)
    })
}

fn add_at(pg: &mut [u8], off: OffsetNumber, t: &[u8]) -> Result<(), String> {
    if page::add_item_at(pg, off, t) {
        Ok(())
    } else {
        Err(format!("no room for a tuple at offset {off}"))
    }
}

fn u16_at(d: &[u8], at: usize) -> Result<u16, String> {
    Ok(u16::from_le_bytes(
        d.get(at..at + 2).ok_or_else(short)?.try_into().unwrap(),
    ))
}

fn apply_stamp(pg: &mut [u8], xid: Xid, s: Stamp) -> Result<(), String> {
    let t =
        page::item_mut(pg, s.offset).ok_or_else(|| format!("no tuple at offset {}", s.offset))?;
    super::modify::stamp_old(t, xid, s.cid, s.next, s.flags);
    Ok(())
}

fn short() -> String {
    "record too short".to_string()
}

impl HeapRedo {
    fn heap(&self, rec: &Record<'_>) -> Result<(), RedoError> {
        let Some(b0) = rec.blocks.first() else {
            return Err(RedoError::new(rec, "no block reference"));
        };
        let d = b0.data;
        let err = |e: storage::StorageError| RedoError::new(rec, e.to_string());
        // The map bits first, whether or not the heap pages need the record.
        let (c0, c1) = (rec.info & VM_CLEARED != 0, rec.info & VM_CLEARED_OLD != 0);
        if c0 {
            visibilitymap::redo_clear(self.pool, b0.tag.rel, b0.tag.block).map_err(err)?;
        }
        if let Some(b1) = rec.blocks.get(1).filter(|_| c1) {
            visibilitymap::redo_clear(self.pool, b1.tag.rel, b1.tag.block).map_err(err)?;
        }
        match rec.info & KIND_MASK {
            HEAP_INSERT => redo_change(self.pool, rec, b0, c0, |pg| {
                let off = u16::from_le_bytes(d.get(0..2).ok_or_else(short)?.try_into().unwrap());
                add_at(pg, off, &d[2..])
            }),
            HEAP_MULTI_INSERT => redo_change(self.pool, rec, b0, c0, |pg| {
                let count = u16_at(d, 0)?;
                let mut at = 2;
                for _ in 0..count {
                    let off = u16_at(d, at)?;
                    let len = u16_at(d, at + 2)? as usize;
                    at += 4;
                    add_at(pg, off, d.get(at..at + len).ok_or_else(short)?)?;
                    at += len;
                }
                Ok(())
            }),
            HEAP_PRUNE => redo_block(self.pool, rec, b0, |pg| {
                super::prune::apply_prune(pg, &get_prune_plan(d)?);
                Ok(())
            }),
            HEAP_VACUUM => redo_block(self.pool, rec, b0, |pg| {
                let offsets: Vec<OffsetNumber> = d
                    .chunks_exact(2)
                    .map(|c| u16::from_le_bytes([c[0], c[1]]))
                    .collect();
                super::prune::apply_vacuum(pg, &offsets);
                Ok(())
            }),
            HEAP_DELETE => redo_change(self.pool, rec, b0, c0, |pg| {
                apply_stamp(pg, rec.xid, get_stamp(d).ok_or_else(short)?)
            }),
            HEAP_KILL => redo_block(self.pool, rec, b0, |pg| {
                let off = u16_at(d, 0)?;
                let t =
                    page::item_mut(pg, off).ok_or_else(|| format!("no tuple at offset {off}"))?;
                tuple::set_xmin(t, common::ids::INVALID_XID);
                Ok(())
            }),
            HEAP_LOCK => redo_change(self.pool, rec, b0, c0, |pg| {
                let s = get_lock_stamp(d).ok_or_else(short)?;
                let t = page::item_mut(pg, s.offset)
                    .ok_or_else(|| format!("no tuple at offset {}", s.offset))?;
                let tid = Tid {
                    block: b0.tag.block,
                    offset: s.offset,
                };
                super::rowlock::stamp_lock(t, tid, s.xmax, s.bits);
                Ok(())
            }),
            HEAP_UPDATE => {
                let off = u16::from_le_bytes(
                    d.get(0..2)
                        .ok_or_else(|| RedoError::new(rec, short()))?
                        .try_into()
                        .unwrap(),
                );
                let len = u16::from_le_bytes(
                    d.get(2..4)
                        .ok_or_else(|| RedoError::new(rec, short()))?
                        .try_into()
                        .unwrap(),
                ) as usize;
                let t = d
                    .get(4..4 + len)
                    .ok_or_else(|| RedoError::new(rec, short()))?;
                let rest = &d[4 + len..];
                redo_change(self.pool, rec, b0, c0, |pg| {
                    add_at(pg, off, t)?;
                    if rec.blocks.len() == 1 {
                        apply_stamp(pg, rec.xid, get_stamp(rest).ok_or_else(short)?)?;
                    }
                    Ok(())
                })?;
                if let Some(b1) = rec.blocks.get(1) {
                    redo_change(self.pool, rec, b1, c1, |pg| {
                        apply_stamp(pg, rec.xid, get_stamp(b1.data).ok_or_else(short)?)
                    })?;
                }
                Ok(())
            }
            HEAP_VISIBLE => {
                redo_block(self.pool, rec, b0, |pg| {
                    page::set_flags(pg, page::flags(pg) | page::PD_ALL_VISIBLE);
                    Ok(())
                })?;
                let Some(b1) = rec.blocks.get(1) else {
                    return Err(RedoError::new(rec, "no map block reference"));
                };
                // Set the bit only if the heap page is all-visible now (a
                // later change may have cleared it on a page newer than
                // this record).
                let heap = self
                    .pool
                    .read_buffer(
                        b0.tag.rel,
                        ForkNumber::Main,
                        b0.tag.block,
                        ReadMode::Normal,
                        None,
                    )
                    .map_err(err)?;
                let flagged = visibilitymap::page_all_visible(&heap.read());
                drop(heap);
                redo_block(self.pool, rec, b1, |map| {
                    visibilitymap::redo_set(map, b0.tag.block, flagged);
                    Ok(())
                })
            }
            other => Err(RedoError::new(
                rec,
                format!("unknown heap record kind {other:#x}"),
            )),
        }
    }

    fn smgr(&self, rec: &Record<'_>) -> Result<(), RedoError> {
        let m = rec.main;
        if m.len() < 12 {
            return Err(RedoError::new(rec, short()));
        }
        let u = |i: usize| u32::from_le_bytes(m[i..i + 4].try_into().unwrap());
        let rel = RelFileLocator {
            spc_oid: u(0),
            db_oid: u(4),
            rel_number: u(8),
        };
        let err = |e: storage::StorageError| RedoError::new(rec, e.to_string());
        let smgr = self.pool.smgr();
        match rec.info {
            SMGR_CREATE => {
                if !smgr.exists(rel, ForkNumber::Main) {
                    smgr.create(rel, ForkNumber::Main).map_err(err)?;
                }
            }
            SMGR_DROP => {
                self.pool.drop_relation_buffers(rel);
                smgr.unlink(rel);
            }
            SMGR_DROP_DATABASE => {
                super::remove_database_dir(self.pool, rel.db_oid);
            }
            SMGR_TRUNCATE => {
                let n = m.get(12..16).ok_or_else(|| RedoError::new(rec, short()))?;
                let n = u32::from_le_bytes(n.try_into().unwrap());
                visibilitymap::truncate(self.pool, rel, n).map_err(err)?;
                self.pool.drop_buffers_from(rel, ForkNumber::Main, n);
                if smgr.exists(rel, ForkNumber::Main) {
                    smgr.truncate_with(rel, ForkNumber::Main, |_| Some((n, ())))
                        .map_err(err)?;
                }
            }
            other => {
                return Err(RedoError::new(
                    rec,
                    format!("unknown storage record kind {other:#x}"),
                ))
            }
        }
        Ok(())
    }
}

impl Redo for HeapRedo {
    fn redo(&self, rec: &Record<'_>) -> Result<(), RedoError> {
        match rec.rmid {
            rmgr::HEAP => self.heap(rec),
            rmgr::SMGR => self.smgr(rec),
            rmgr::SEQ => crate::sequence::redo(self.pool, rec),
            _ => Err(RedoError::new(rec, "not a heap or storage record")),
        }
    }
}

/// A description of a record for waldump.
pub fn describe(rec: &Record<'_>) -> String {
    let kind = match (rec.rmid, rec.info & KIND_MASK) {
        (rmgr::HEAP, HEAP_INSERT) => "INSERT",
        (rmgr::HEAP, HEAP_MULTI_INSERT) => "MULTI_INSERT",
        (rmgr::HEAP, HEAP_DELETE) => "DELETE",
        (rmgr::HEAP, HEAP_UPDATE) => "UPDATE",
        (rmgr::HEAP, HEAP_LOCK) => "LOCK",
        (rmgr::HEAP, HEAP_PRUNE) => "PRUNE",
        (rmgr::HEAP, HEAP_VACUUM) => "VACUUM",
        (rmgr::HEAP, HEAP_KILL) => "KILL",
        (rmgr::HEAP, HEAP_VISIBLE) => "VISIBLE",
        (rmgr::SMGR, SMGR_TRUNCATE) => "TRUNCATE",
        (rmgr::SMGR, SMGR_CREATE) => "CREATE",
        (rmgr::SMGR, SMGR_DROP) => "DROP",
        (rmgr::SMGR, SMGR_DROP_DATABASE) => "DROP_DATABASE",
        (rmgr::SEQ, crate::sequence::SEQ_STATE) => "STATE",
        _ => "?",
    };
    kind.to_string()
}
