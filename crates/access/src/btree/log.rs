//! The B-tree's log records and their redo (rmgr BTREE, README rule 24).
//!
//! Every record is a list of block references, each with a role byte in
//! the main data saying what happened to that page; forward path and redo
//! apply a role with the same function (`Change::apply` / `apply_role`).
//!
//! | role | block data | what redo does |
//! | --- | --- | --- |
//! | WHOLE | the page without its free hole | rebuilds the page (will_init) |
//! | PREV | left-sibling block | sets the page's left link |
//! | INSERT | offset, item | inserts the item at the offset (later ones shift) |
//! | META | root block, root level | points the metapage at the root |
//! | DELETE | offsets | removes those items and compacts the page |
//! | NEXT | right-sibling block | sets the page's right link |
//! | MERGE | offsets keep, drop | points keep's downlink at drop's child, removes drop |
//!
//! | kind | blocks |
//! | --- | --- |
//! | INSERT_LEAF | leaf: INSERT |
//! | SPLIT | per split level: left WHOLE, right WHOLE[, old right sibling PREV]; then the parent INSERT |
//! | NEWROOT | as SPLIT, ending with the new root WHOLE and the metapage META |
//! | CREATE | metapage WHOLE, empty root leaf WHOLE |
//! | BUILD | up to 16 pages WHOLE (a bottom-up build's output) |
//! | META | metapage META (the end of a build) |
//! | VACUUM | leaf: DELETE |
//! | UNLINK | [left sibling NEXT,] deleted leaf WHOLE, right sibling PREV, parent MERGE |
//!
//! An insert, however many pages it splits, is one record, so redo never
//! sees a split without its downlink.

use common::{BlockNumber, RelFileLocator};
use storage::buffer::{BufferPool, OwnedPageWrite};
use storage::page::{self, OffsetNumber};
use storage::ForkNumber;
use wal::{rmgr, BlockTag, Record, RecordBuilder, Redo, RedoError, Wal};

use super::page as bp;
use crate::heap::log::{insert_or_panic, redo_block};

pub const BTREE_INSERT_LEAF: u8 = 0x00;
pub const BTREE_SPLIT: u8 = 0x10;
pub const BTREE_NEWROOT: u8 = 0x20;
pub const BTREE_CREATE: u8 = 0x30;
pub const BTREE_BUILD: u8 = 0x40;
pub const BTREE_META: u8 = 0x50;
pub const BTREE_VACUUM: u8 = 0x60;
pub const BTREE_UNLINK: u8 = 0x70;

const ROLE_WHOLE: u8 = 1;
const ROLE_PREV: u8 = 2;
const ROLE_INSERT: u8 = 3;
const ROLE_META: u8 = 4;
const ROLE_DELETE: u8 = 5;
const ROLE_NEXT: u8 = 6;
const ROLE_MERGE: u8 = 7;

/// What happens to one locked page.
pub(crate) enum Change {
    /// The page becomes this image (built in memory first).
    Whole(Box<[u8]>),
    Prev(BlockNumber),
    Insert(OffsetNumber, Vec<u8>),
    Meta(BlockNumber, u32),
    Delete(Vec<OffsetNumber>),
    Next(BlockNumber),
    /// `bp::merge_downlinks(keep, drop)` on a parent.
    Merge(OffsetNumber, OffsetNumber),
}

/// A locked page and what to do to it, applied and logged with others.
pub(crate) struct Step {
    pub page: OwnedPageWrite,
    pub change: Change,
}

impl Change {
    fn role(&self) -> u8 {
        match self {
            Change::Whole(_) => ROLE_WHOLE,
            Change::Prev(_) => ROLE_PREV,
            Change::Insert(..) => ROLE_INSERT,
            Change::Meta(..) => ROLE_META,
            Change::Delete(_) => ROLE_DELETE,
            Change::Next(_) => ROLE_NEXT,
            Change::Merge(..) => ROLE_MERGE,
        }
    }

    fn apply(&self, pg: &mut [u8]) -> Result<(), String> {
        match self {
            Change::Whole(img) => {
                pg.copy_from_slice(img);
                Ok(())
            }
            Change::Prev(p) => {
                bp::set_prev(pg, *p);
                Ok(())
            }
            Change::Insert(off, item) => insert_at(pg, *off, item),
            Change::Meta(root, level) => {
                bp::set_meta_root(pg, *root, *level);
                Ok(())
            }
            Change::Delete(offs) => {
                page::delete_items(pg, offs);
                Ok(())
            }
            Change::Next(n) => {
                bp::set_next(pg, *n);
                Ok(())
            }
            Change::Merge(keep, drop) => merge_at(pg, *keep, *drop),
        }
    }

    /// The block data redo needs, from the page after the change.
    fn encode(&self, pg: &[u8], out: &mut Vec<u8>) {
        match self {
            Change::Whole(_) => bp::put_whole(pg, out),
            Change::Prev(p) => out.extend_from_slice(&p.to_le_bytes()),
            Change::Insert(off, item) => {
                out.extend_from_slice(&off.to_le_bytes());
                out.extend_from_slice(item);
            }
            Change::Meta(root, level) => {
                out.extend_from_slice(&root.to_le_bytes());
                out.extend_from_slice(&level.to_le_bytes());
            }
            Change::Delete(offs) => {
                for o in offs {
                    out.extend_from_slice(&o.to_le_bytes());
                }
            }
            Change::Next(n) => out.extend_from_slice(&n.to_le_bytes()),
            Change::Merge(keep, drop) => {
                out.extend_from_slice(&keep.to_le_bytes());
                out.extend_from_slice(&drop.to_le_bytes());
            }
        }
    }
}

fn insert_at(pg: &mut [u8], off: OffsetNumber, item: &[u8]) -> Result<(), String> {
    if page::insert_item_shifting(pg, off, item) {
        Ok(())
    } else {
        Err(format!("no room for an index item at offset {off}"))
    }
}

/// Applies every step's change (planned while the pages were locked, so
/// none can fail), then logs them as one record and stamps its LSN on each
/// page; the locks are released when the caller drops the steps.
pub(crate) fn apply_and_log(wal: &Wal, rel: RelFileLocator, info: u8, steps: &mut [Step]) {
    for s in steps.iter_mut() {
        if let Err(e) = s.change.apply(&mut s.page) {
            panic!("B-tree change planned under lock failed: {e}");
        }
        // Dirty before the record is reserved (wal rule 6).
        s.page.mark_dirty();
    }
    let lsn = {
        let mut rec = RecordBuilder::new(rmgr::BTREE, info, 0);
        for s in steps.iter() {
            let tag = BlockTag {
                rel,
                fork: ForkNumber::Main,
                block: s.page.block(),
            };
            let whole = matches!(s.change, Change::Whole(_));
            let b = rec.register_block(tag, &s.page, whole);
            s.change.encode(&s.page, rec.block_data(b));
            rec.main_data().push(s.change.role());
        }
        insert_or_panic(wal, &rec)
    };
    for s in steps.iter_mut() {
        page::set_lsn(&mut s.page, lsn);
    }
}

fn merge_at(pg: &mut [u8], keep: OffsetNumber, drop: OffsetNumber) -> Result<(), String> {
    if bp::merge_downlinks(pg, keep, drop) {
        Ok(())
    } else {
        Err(format!("cannot merge downlinks {keep} and {drop}"))
    }
}

fn short() -> String {
    "record too short".to_string()
}

fn apply_role(role: u8, d: &[u8], pg: &mut [u8]) -> Result<(), String> {
    let u32_at = |at: usize| -> Result<u32, String> {
        Ok(u32::from_le_bytes(
            d.get(at..at + 4).ok_or_else(short)?.try_into().unwrap(),
        ))
    };
    let u16_at = |at: usize| -> Result<u16, String> {
        Ok(u16::from_le_bytes(
            d.get(at..at + 2).ok_or_else(short)?.try_into().unwrap(),
        ))
    };
    match role {
        ROLE_WHOLE => bp::restore_whole(pg, d),
        ROLE_PREV => {
            bp::set_prev(pg, u32_at(0)?);
            Ok(())
        }
        ROLE_INSERT => {
            let off = u16::from_le_bytes(d.get(0..2).ok_or_else(short)?.try_into().unwrap());
            insert_at(pg, off, &d[2..])
        }
        ROLE_META => {
            if bp::meta_root(pg).is_none() {
                return Err("not a B-tree metapage".into());
            }
            bp::set_meta_root(pg, u32_at(0)?, u32_at(4)?);
            Ok(())
        }
        ROLE_DELETE => {
            let offs: Vec<OffsetNumber> = d
                .chunks_exact(2)
                .map(|c| u16::from_le_bytes([c[0], c[1]]))
                .collect();
            page::delete_items(pg, &offs);
            Ok(())
        }
        ROLE_NEXT => {
            bp::set_next(pg, u32_at(0)?);
            Ok(())
        }
        ROLE_MERGE => merge_at(pg, u16_at(0)?, u16_at(2)?),
        other => Err(format!("unknown B-tree block role {other}")),
    }
}

/// Redo of B-tree records.
pub struct BtreeRedo {
    pub pool: &'static BufferPool,
}

impl Redo for BtreeRedo {
    fn redo(&self, rec: &Record<'_>) -> Result<(), RedoError> {
        if rec.rmid != rmgr::BTREE || rec.main.len() != rec.blocks.len() {
            return Err(RedoError::new(rec, "not a B-tree record"));
        }
        for (b, &role) in rec.blocks.iter().zip(rec.main) {
            redo_block(self.pool, rec, b, |pg| apply_role(role, b.data, pg))?;
        }
        Ok(())
    }
}

/// A description of a record for waldump.
pub fn describe(rec: &Record<'_>) -> String {
    let kind = match rec.info {
        BTREE_INSERT_LEAF => "INSERT_LEAF",
        BTREE_SPLIT => "SPLIT",
        BTREE_NEWROOT => "NEWROOT",
        BTREE_CREATE => "CREATE",
        BTREE_BUILD => "BUILD",
        BTREE_META => "META",
        BTREE_VACUUM => "VACUUM",
        BTREE_UNLINK => "UNLINK",
        _ => "?",
    };
    format!("{kind}; {} pages", rec.blocks.len())
}
