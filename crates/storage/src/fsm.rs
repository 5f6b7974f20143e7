//! Free space map: the `_fsm` fork records, per heap block, free space in
//! 32-byte steps (one byte, 0..=255), so inserts can reuse space.
//!
//! Two levels: block 0 is the root, holding for each leaf page the largest
//! category in it; leaf page `1 + n` covers heap blocks `n * SLOTS ..`. The
//! root only ever over-estimates a leaf (it is raised at once and lowered
//! lazily when a search of that leaf comes back empty), so a search never
//! misses space that is recorded.

use common::{BlockNumber, RelFileLocator};

use crate::buffer::{BufferPool, ReadMode};
use crate::page::PAGE_HEADER_SIZE;
use crate::{ForkNumber, StorageResult, BLCKSZ};

const SLOTS: usize = BLCKSZ - PAGE_HEADER_SIZE;
const STEP: usize = BLCKSZ / 256;

/// Category for `bytes` free: rounds down, so a page never promises more.
pub fn category(bytes: usize) -> u8 {
    (bytes / STEP).min(255) as u8
}

fn ensure_block(
    pool: &'static BufferPool,
    rel: RelFileLocator,
    block: BlockNumber,
) -> StorageResult<()> {
    let smgr = pool.smgr();
    let n = smgr.nblocks(rel, ForkNumber::Fsm)?;
    if n > block {
        return Ok(());
    }
    if n == 0 && !smgr.exists(rel, ForkNumber::Fsm) {
        smgr.create(rel, ForkNumber::Fsm)?;
    }
    while smgr.nblocks(rel, ForkNumber::Fsm)? <= block {
        let b = smgr.extend(rel, ForkNumber::Fsm, 1)?;
        let buf = pool.read_buffer(rel, ForkNumber::Fsm, b, ReadMode::Zero, None)?;
        let mut page = buf.write();
        crate::page::init(&mut page, 0);
        page.mark_dirty();
    }
    Ok(())
}

/// Records that heap block `block` has `free` bytes available.
pub fn record_free_space(
    pool: &'static BufferPool,
    rel: RelFileLocator,
    block: BlockNumber,
    free: usize,
) -> StorageResult<()> {
    let cat = category(free);
    let leaf = 1 + block as usize / SLOTS;
    let slot = PAGE_HEADER_SIZE + block as usize % SLOTS;
    if cat == 0 && pool.smgr().nblocks(rel, ForkNumber::Fsm)? <= leaf as u32 {
        return Ok(()); // nothing recorded there; zero is the default
    }
    ensure_block(pool, rel, leaf as u32)?;
    {
        let buf = pool.read_buffer(rel, ForkNumber::Fsm, leaf as u32, ReadMode::Normal, None)?;
        let mut page = buf.write();
        if page[slot] == cat {
            return Ok(());
        }
        page[slot] = cat;
        page.mark_dirty();
    }
    let root = pool.read_buffer(rel, ForkNumber::Fsm, 0, ReadMode::Normal, None)?;
    let root_slot = PAGE_HEADER_SIZE + leaf - 1;
    if root.read()[root_slot] < cat {
        let mut page = root.write();
        if page[root_slot] < cat {
            page[root_slot] = cat;
            page.mark_dirty();
        }
    }
    Ok(())
}

/// Finds a heap block with at least `needed` bytes free, if one is recorded.
pub fn search(
    pool: &'static BufferPool,
    rel: RelFileLocator,
    needed: usize,
) -> StorageResult<Option<BlockNumber>> {
    let want = category(needed + STEP - 1).max(1);
    let nfsm = pool.smgr().nblocks(rel, ForkNumber::Fsm)?;
    if nfsm < 2 {
        return Ok(None);
    }
    let root = pool.read_buffer(rel, ForkNumber::Fsm, 0, ReadMode::Normal, None)?;
    let leaves = (nfsm - 1) as usize;
    for l in 0..leaves {
        if root.read()[PAGE_HEADER_SIZE + l] < want {
            continue;
        }
        let buf = pool.read_buffer(rel, ForkNumber::Fsm, 1 + l as u32, ReadMode::Normal, None)?;
        let page = buf.read();
        let slots = &page[PAGE_HEADER_SIZE..];
        if let Some(i) = slots.iter().position(|&c| c >= want) {
            return Ok(Some((l * SLOTS + i) as BlockNumber));
        }
        let max = slots.iter().copied().max().unwrap_or(0);
        drop(page);
        drop(buf);
        let mut rp = root.write();
        rp[PAGE_HEADER_SIZE + l] = max;
        rp.mark_dirty();
    }
    Ok(None)
}
