//! The visibility map (PostgreSQL's visibilitymap.c, in our words): the
//! `_vm` fork holds two bits per heap page, ALL_VISIBLE (every tuple on the
//! page is visible to every snapshot, now and later) and ALL_FROZEN
//! (defined, never set: xids are 64-bit and never frozen). Index-only scans
//! skip the heap for pages whose ALL_VISIBLE bit is set, and VACUUM skips
//! them (nothing on them is dead).
//!
//! Map pages have the standard header (LSN, checksum) and the bitmap as
//! their special space, so a full-page image keeps all of it. Heap page
//! `b`'s bits are in map page `b / HEAP_BLOCKS_PER_PAGE`, byte
//! `(b % HEAP_BLOCKS_PER_PAGE) / 4`, at bit `2 * (b % 4)`.
//!
//! Rules (access README 28-31):
//! - The bit is set only by VACUUM, with the heap page locked exclusively,
//!   after it set the page's PD_ALL_VISIBLE flag, in one VISIBLE record that
//!   names both pages; redo sets the bit only if the heap page then carries
//!   the flag.
//! - Every change of a heap page that can make one of its tuples invisible to
//!   some snapshot (an insert, both pages of an update, a delete, a row lock)
//!   clears the flag and the bit under the heap page's exclusive lock,
//!   before that lock is released; its record says so (`VM_CLEARED` in the
//!   record's info) and redo clears both again, the bit whatever the heap
//!   page's LSN.
//! - Readers take only the map page's share lock, no heap page lock. A stale
//!   "not all-visible" is harmless (they visit the heap). A stale
//!   "all-visible" is never seen for a change the reader could see: a new
//!   tuple's index entry is made after the heap insert cleared the bit, and
//!   an index scan reads the entry (under the index page's lock) before it
//!   reads the bit; a delete or update is visible to a snapshot only if its
//!   transaction committed before the snapshot was taken, and the bit was
//!   cleared before that commit. Lock hand-offs order all of these.

use common::{BlockNumber, RelFileLocator};
use storage::buffer::{Buffer, BufferPool, PageWrite, ReadMode};
use storage::page::{self, PAGE_HEADER_SIZE, PD_ALL_VISIBLE};
use storage::{ForkNumber, StorageResult, BLCKSZ};
use wal::{rmgr, BlockTag, RecordBuilder, Wal};

use super::log;

/// Every tuple on the heap page is visible to every snapshot.
pub const ALL_VISIBLE: u8 = 0x01;
/// Every tuple on the heap page is frozen. Never set: we do not freeze.
pub const ALL_FROZEN: u8 = 0x02;

const MAP_BYTES: usize = BLCKSZ - PAGE_HEADER_SIZE;
/// Heap pages one map page covers (2 bits each).
pub const HEAP_BLOCKS_PER_PAGE: u32 = (MAP_BYTES * 4) as u32;

/// Where heap block `block`'s bits are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Slot {
    map_block: BlockNumber,
    byte: usize,
    shift: u32,
}

fn slot(block: BlockNumber) -> Slot {
    let i = (block % HEAP_BLOCKS_PER_PAGE) as usize;
    Slot {
        map_block: block / HEAP_BLOCKS_PER_PAGE,
        byte: PAGE_HEADER_SIZE + i / 4,
        shift: (i % 4 * 2) as u32,
    }
}

fn bits_at(pg: &[u8], s: Slot) -> u8 {
    (pg[s.byte] >> s.shift) & (ALL_VISIBLE | ALL_FROZEN)
}

/// A map page is initialised with the bitmap as its special space (so the
/// page's "hole" is empty and an image keeps every bit).
fn init_map_page(pg: &mut [u8]) {
    page::init(pg, MAP_BYTES);
}

fn map_blocks(pool: &BufferPool, rel: RelFileLocator) -> StorageResult<BlockNumber> {
    pool.smgr().nblocks(rel, ForkNumber::VisibilityMap)
}

/// Whether heap page `pg` carries PD_ALL_VISIBLE.
pub fn page_all_visible(pg: &[u8]) -> bool {
    page::flags(pg) & PD_ALL_VISIBLE != 0
}

/// Reads heap pages' bits, keeping the last map page pinned (a scan asks
/// about many heap pages of the same map page).
pub struct MapReader {
    rel: RelFileLocator,
    buf: Option<Buffer>,
}

impl MapReader {
    pub fn new(rel: RelFileLocator) -> Self {
        MapReader { rel, buf: None }
    }

    /// The bits of heap block `block` (0 where the map has no page yet).
    pub fn status(&mut self, pool: &'static BufferPool, block: BlockNumber) -> StorageResult<u8> {
        let s = slot(block);
        if self.buf.as_ref().map(Buffer::block) != Some(s.map_block) {
            self.buf = None;
            if s.map_block >= map_blocks(pool, self.rel)? {
                return Ok(0);
            }
            self.buf = Some(pool.read_buffer(
                self.rel,
                ForkNumber::VisibilityMap,
                s.map_block,
                ReadMode::Normal,
                None,
            )?);
        }
        let buf = self.buf.as_ref().expect("pinned above");
        Ok(bits_at(&buf.read(), s))
    }

    /// Whether heap block `block` is all-visible.
    pub fn all_visible(
        &mut self,
        pool: &'static BufferPool,
        block: BlockNumber,
    ) -> StorageResult<bool> {
        Ok(self.status(pool, block)? & ALL_VISIBLE != 0)
    }
}

/// Clears heap block `block`'s bits if its map page exists (forward path
/// and redo; the map page's LSN is left alone: a clear written before its
/// record only makes the map more careful).
fn clear_bits(
    pool: &'static BufferPool,
    rel: RelFileLocator,
    block: BlockNumber,
) -> StorageResult<()> {
    let s = slot(block);
    if s.map_block >= map_blocks(pool, rel)? {
        return Ok(());
    }
    let buf = pool.read_buffer(
        rel,
        ForkNumber::VisibilityMap,
        s.map_block,
        ReadMode::Normal,
        None,
    )?;
    let mut pg = buf.write();
    if bits_at(&pg, s) != 0 {
        pg[s.byte] &= !((ALL_VISIBLE | ALL_FROZEN) << s.shift);
        pg.mark_dirty();
    }
    Ok(())
}

/// For every logged heap change, with the heap page `pg` (block `block`)
/// locked exclusively, before its record: clears PD_ALL_VISIBLE and the
/// map bits when the flag was set. Returns whether it did (the record then
/// carries `log::VM_CLEARED`, so redo clears them too).
pub(crate) fn clear_for_change(
    pg: &mut PageWrite<'_>,
    rel: RelFileLocator,
    block: BlockNumber,
) -> bool {
    let flags = page::flags(pg);
    if flags & PD_ALL_VISIBLE == 0 {
        return false;
    }
    page::set_flags(pg, flags & !PD_ALL_VISIBLE);
    if let Err(e) = clear_bits(pg.pool(), rel, block) {
        // Inside the change's critical section: as a failed WAL insert.
        panic!("PANIC: could not clear the visibility map of block {block}: {e}");
    }
    true
}

/// Redo's half of `clear_for_change` for the map: done whether or not the
/// heap page needed the record (its flag comes back with the page).
pub(crate) fn redo_clear(
    pool: &'static BufferPool,
    rel: RelFileLocator,
    block: BlockNumber,
) -> StorageResult<()> {
    clear_bits(pool, rel, block)
}

/// Pins the map page that holds heap block `block`'s bits, creating and
/// extending the fork first (VACUUM, before it locks the heap page: only
/// VACUUM, one per table, and redo extend the map).
pub(crate) fn pin_for_set(
    pool: &'static BufferPool,
    rel: RelFileLocator,
    block: BlockNumber,
) -> StorageResult<Buffer> {
    let s = slot(block);
    let smgr = pool.smgr();
    let n = map_blocks(pool, rel)?;
    if n == 0 && !smgr.exists(rel, ForkNumber::VisibilityMap) {
        smgr.create(rel, ForkNumber::VisibilityMap)?;
    }
    if n <= s.map_block {
        // New blocks read as zero pages; the first set initialises one.
        smgr.extend(rel, ForkNumber::VisibilityMap, s.map_block + 1 - n)?;
    }
    pool.read_buffer(
        rel,
        ForkNumber::VisibilityMap,
        s.map_block,
        ReadMode::Normal,
        None,
    )
}

/// Whether heap block `block`'s ALL_VISIBLE bit is set on `map_buf`, the
/// map page that holds it (pinned by `pin_for_set`).
pub(crate) fn bit_set_on(map_buf: &Buffer, block: BlockNumber) -> bool {
    let s = slot(block);
    debug_assert_eq!(map_buf.block(), s.map_block);
    bits_at(&map_buf.read(), s) & ALL_VISIBLE != 0
}

/// Sets the ALL_VISIBLE bit of heap block `block` on its map page `map`,
/// initialising a new map page. Returns whether it changed anything.
fn set_bit_on(map: &mut [u8], block: BlockNumber) -> bool {
    let s = slot(block);
    if page::is_new(map) {
        init_map_page(map);
    }
    if bits_at(map, s) & ALL_VISIBLE != 0 {
        return false;
    }
    map[s.byte] |= ALL_VISIBLE << s.shift;
    true
}

/// Marks the heap page `pg` (block `block`, locked exclusively, every tuple
/// on it checked visible to all) all-visible: PD_ALL_VISIBLE first, then the
/// map bit on `map_buf` (from `pin_for_set`), one VISIBLE record naming
/// both, its LSN on both.
pub(crate) fn set_all_visible(
    wal: &Wal,
    pg: &mut PageWrite<'_>,
    rel: RelFileLocator,
    block: BlockNumber,
    map_buf: &Buffer,
) {
    let s = slot(block);
    debug_assert_eq!(map_buf.block(), s.map_block);
    let flags = page::flags(pg);
    page::set_flags(pg, flags | PD_ALL_VISIBLE);
    pg.mark_dirty();
    let mut map = map_buf.write();
    set_bit_on(&mut map, block);
    map.mark_dirty();
    let lsn = {
        let mut rec = RecordBuilder::new(rmgr::HEAP, log::HEAP_VISIBLE, 0);
        rec.register_block(
            BlockTag {
                rel,
                fork: ForkNumber::Main,
                block,
            },
            pg,
            false,
        );
        let m = rec.register_block(
            BlockTag {
                rel,
                fork: ForkNumber::VisibilityMap,
                block: s.map_block,
            },
            &map,
            false,
        );
        rec.block_data(m).push(ALL_VISIBLE);
        log::insert_or_panic(wal, &rec)
    };
    page::set_lsn(pg, lsn);
    page::set_lsn(&mut map, lsn);
}

/// Redo of a VISIBLE record's map block: sets the bit of heap block
/// `heap_block` when the heap page carries PD_ALL_VISIBLE after its own
/// redo (`heap_flagged`); a later change cleared it otherwise, and its
/// record clears the bit again.
pub(crate) fn redo_set(map: &mut [u8], heap_block: BlockNumber, heap_flagged: bool) {
    if page::is_new(map) {
        init_map_page(map);
    }
    if heap_flagged {
        set_bit_on(map, heap_block);
    }
}

/// Clears the bits of heap blocks from `new_nblocks` on (a truncation of
/// the heap, before the shorter size is visible: a block extended again
/// later starts not all-visible).
pub(crate) fn truncate(
    pool: &'static BufferPool,
    rel: RelFileLocator,
    new_nblocks: BlockNumber,
) -> StorageResult<()> {
    let n = map_blocks(pool, rel)?;
    let first = slot(new_nblocks);
    for map_block in first.map_block..n {
        let buf = pool.read_buffer(
            rel,
            ForkNumber::VisibilityMap,
            map_block,
            ReadMode::Normal,
            None,
        )?;
        let mut pg = buf.write();
        if page::is_new(&pg) {
            continue;
        }
        if map_block == first.map_block {
            clear_from(&mut pg, first);
        } else {
            pg[PAGE_HEADER_SIZE..].fill(0);
        }
        pg.mark_dirty();
    }
    Ok(())
}

/// Clears the bits at `from` and after it on its map page.
fn clear_from(map: &mut [u8], from: Slot) {
    // The bits of lower blocks sharing the first byte stay.
    map[from.byte] &= (1u8 << from.shift) - 1;
    map[from.byte + 1..].fill(0);
}

/// Heap pages below `heap_nblocks` whose ALL_VISIBLE bit is set
/// (pg_class.relallvisible).
pub fn count_all_visible(
    pool: &'static BufferPool,
    rel: RelFileLocator,
    heap_nblocks: BlockNumber,
) -> StorageResult<u32> {
    let n = map_blocks(pool, rel)?;
    let mut count = 0u32;
    for map_block in 0..n {
        let first_heap = map_block.saturating_mul(HEAP_BLOCKS_PER_PAGE);
        if first_heap >= heap_nblocks {
            break;
        }
        let buf = pool.read_buffer(
            rel,
            ForkNumber::VisibilityMap,
            map_block,
            ReadMode::Normal,
            None,
        )?;
        let pg = buf.read();
        let covered = (heap_nblocks - first_heap).min(HEAP_BLOCKS_PER_PAGE);
        for i in 0..covered {
            if bits_at(&pg, slot(first_heap + i)) & ALL_VISIBLE != 0 {
                count += 1;
            }
        }
    }
    Ok(count)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_pack_four_heap_pages_a_byte() {
        assert_eq!(
            slot(0),
            Slot {
                map_block: 0,
                byte: PAGE_HEADER_SIZE,
                shift: 0
            }
        );
        assert_eq!(slot(3).shift, 6);
        assert_eq!(slot(4).byte, PAGE_HEADER_SIZE + 1);
        let last = slot(HEAP_BLOCKS_PER_PAGE - 1);
        assert_eq!((last.map_block, last.byte), (0, BLCKSZ - 1));
        assert_eq!(slot(HEAP_BLOCKS_PER_PAGE).map_block, 1);
    }

    #[test]
    fn truncate_keeps_the_bits_below_the_new_end() {
        let mut map = vec![0u8; BLCKSZ];
        for b in 0..10 {
            assert!(set_bit_on(&mut map, b));
        }
        assert!(!set_bit_on(&mut map, 3));
        clear_from(&mut map, slot(6));
        let set: Vec<u32> = (0..12).filter(|&b| bits_at(&map, slot(b)) != 0).collect();
        assert_eq!(set, vec![0, 1, 2, 3, 4, 5]);
    }
}
