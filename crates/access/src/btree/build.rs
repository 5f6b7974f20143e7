//! Bottom-up build from sorted entries (README rule 26), as nbtree's
//! nbtsort: leaves are filled left to right to 90% (internal pages to
//! 70%); when a page is full its last item moves to a new right sibling
//! and that item's key becomes the full page's high key (so the high key
//! always has room) and the downlink of the new page in the level above,
//! which is built the same way as it goes. Finished pages are written
//! through the buffer pool (a bulk-write ring) and logged whole, 16 to a
//! record; the metapage is pointed at the root last. Block 1, the empty
//! root leaf `create_empty` made, becomes the first leaf.

use common::{BlockNumber, PgError, PgResult, RelFileLocator};
use storage::buffer::{BufferPool, BufferStrategy, ReadMode, StrategyKind};
use storage::page;
use storage::{ForkNumber, BLCKSZ};
use types::Value;
use wal::Wal;

use super::log::{apply_and_log, Change, Step, BTREE_BUILD, BTREE_META};
use super::page::{self as bp, CAPACITY, LEAF, META_BLOCK, NONE, ROOT};
use super::search::{self, lock, read_meta};
use super::split::{INTERNAL_FILLFACTOR, LEAF_FILLFACTOR};
use super::tuple;
use super::IndexDesc;
use crate::heap::Tid;

/// The empty root leaf of a new index.
pub(crate) const FIRST_LEAF: BlockNumber = 1;
/// Pages per BUILD record.
const BATCH_PAGES: usize = 16;

/// The page being filled at one level.
struct Level {
    img: Box<[u8]>,
    block: BlockNumber,
    used: usize,
    count: u16,
}

struct Builder<'w> {
    pool: &'static BufferPool,
    wal: &'w Wal,
    rel: RelFileLocator,
    levels: Vec<Level>,
    pending: Vec<(BlockNumber, Box<[u8]>)>,
    batch: usize,
    ring: BufferStrategy,
    first_leaf_taken: bool,
}

impl Builder<'_> {
    fn new_block(&mut self) -> PgResult<BlockNumber> {
        if !self.first_leaf_taken {
            self.first_leaf_taken = true;
            return Ok(FIRST_LEAF);
        }
        Ok(self.pool.smgr().extend(self.rel, ForkNumber::Main, 1)?)
    }

    fn start_page(&mut self, level: usize, prev: BlockNumber) -> PgResult<Level> {
        let block = self.new_block()?;
        let mut img = vec![0u8; BLCKSZ].into_boxed_slice();
        let flags = if level == 0 { LEAF } else { 0 };
        bp::init(&mut img, level as u32, flags, prev, NONE);
        Ok(Level {
            img,
            block,
            used: 0,
            count: 0,
        })
    }

    fn append(lv: &mut Level, item: &[u8]) {
        let off = bp::max_offset(&lv.img) + 1;
        assert!(page::insert_item_shifting(&mut lv.img, off, item), "sized");
        lv.used += bp::item_cost(item.len());
        lv.count += 1;
    }

    fn add(&mut self, level: usize, item: &[u8]) -> PgResult<()> {
        if self.levels.len() == level {
            let lv = self.start_page(level, NONE)?;
            self.levels.push(lv);
        }
        let fill = if level == 0 {
            LEAF_FILLFACTOR
        } else {
            INTERNAL_FILLFACTOR
        };
        let lv = &self.levels[level];
        let full = lv.count >= 2
            && (lv.used + bp::item_cost(item.len()) > CAPACITY * fill / 100
                || !bp::fits(&lv.img, item.len()));
        if !full {
            Self::append(&mut self.levels[level], item);
            return Ok(());
        }
        let leaf = level == 0;
        let prev_block = self.levels[level].block;
        let mut next = self.start_page(level, prev_block)?;
        // The last item moves right; its key is the full page's high key.
        let (last, separator) = {
            let full = &mut self.levels[level];
            let last_off = bp::max_offset(&full.img);
            let last = bp::item(&full.img, last_off).to_vec();
            page::delete_items(&mut full.img, &[last_off]);
            let separator = bp::key_of(leaf, &last).to_vec();
            let high_key = if leaf {
                last.clone()
            } else {
                bp::pivot(NONE, &separator)
            };
            assert!(
                page::insert_item_shifting(&mut full.img, 1, &high_key),
                "room left by the moved item"
            );
            bp::set_next(&mut full.img, next.block);
            (last, separator)
        };
        if leaf {
            Self::append(&mut next, &last);
        } else {
            Self::append(&mut next, &bp::minus_infinity_pivot(bp::child(&last)));
        }
        Self::append(&mut next, item);
        let new_block = next.block;
        let old = std::mem::replace(&mut self.levels[level], next);
        let old_block = old.block;
        self.finished(old_block, old.img)?;
        if self.levels.len() == level + 1 {
            let mut parent = self.start_page(level + 1, NONE)?;
            Self::append(&mut parent, &bp::minus_infinity_pivot(old_block));
            self.levels.push(parent);
        }
        self.add(level + 1, &bp::pivot(new_block, &separator))
    }

    fn finished(&mut self, block: BlockNumber, img: Box<[u8]>) -> PgResult<()> {
        self.pending.push((block, img));
        if self.pending.len() >= self.batch {
            self.flush()?;
        }
        Ok(())
    }

    /// Writes the finished pages into their buffers and logs them whole.
    fn flush(&mut self) -> PgResult<()> {
        let mut steps = Vec::with_capacity(self.pending.len());
        for (blk, img) in self.pending.drain(..) {
            let buf = self.pool.read_buffer(
                self.rel,
                ForkNumber::Main,
                blk,
                ReadMode::Zero,
                Some(&mut self.ring),
            )?;
            steps.push(Step {
                page: buf.into_write(),
                change: Change::Whole(img),
            });
        }
        if !steps.is_empty() {
            apply_and_log(self.wal, self.rel, BTREE_BUILD, &mut steps);
        }
        Ok(())
    }

    /// Closes every level's last page (the top one is the root), writes
    /// them and points the metapage at the root.
    fn finish(mut self) -> PgResult<()> {
        let top = self.levels.len() - 1;
        let levels = std::mem::take(&mut self.levels);
        let mut root = NONE;
        for (level, mut lv) in levels.into_iter().enumerate() {
            if level == top {
                let f = bp::flags(&lv.img);
                bp::set_flags(&mut lv.img, f | ROOT);
                root = lv.block;
            }
            self.finished(lv.block, lv.img)?;
        }
        self.flush()?;
        let meta = lock(self.pool, self.rel, META_BLOCK)?;
        let mut steps = [Step {
            page: meta,
            change: Change::Meta(root, top as u32),
        }];
        apply_and_log(self.wal, self.rel, BTREE_META, &mut steps);
        drop(steps);
        search::remember_root(self.pool, self.rel, root);
        Ok(())
    }
}

pub(crate) fn build<K: AsRef<[Value]>>(
    pool: &'static BufferPool,
    wal: &Wal,
    rel: RelFileLocator,
    desc: &IndexDesc,
    sorted: &mut dyn Iterator<Item = PgResult<(K, Tid)>>,
) -> PgResult<u64> {
    let (root, level) = read_meta(pool, rel)?;
    let nblocks = pool.smgr().nblocks(rel, ForkNumber::Main)?;
    let empty = {
        let pg: storage::buffer::OwnedPageRead = lock(pool, rel, FIRST_LEAF)?;
        bp::max_offset(&pg) == 0
    };
    if root != FIRST_LEAF || level != 0 || nblocks != 2 || !empty {
        return Err(PgError::internal(
            "a B-tree is built only into the empty tree create_empty made",
        ));
    }
    let mut b = Builder {
        pool,
        wal,
        rel,
        levels: Vec::new(),
        pending: Vec::new(),
        batch: BATCH_PAGES.min(pool.nbuffers() / 4).max(1),
        ring: BufferStrategy::new(StrategyKind::BulkWrite, pool.nbuffers()),
        first_leaf_taken: false,
    };
    let mut item = Vec::with_capacity(64);
    let mut prev: Vec<u8> = Vec::new();
    let mut count = 0u64;
    for entry in sorted {
        let (values, tid) = entry?;
        let values = values.as_ref();
        tuple::encode(desc, values, tid, &mut item)?;
        tuple::check_size(item.len(), tid)?;
        debug_assert!(
            count == 0
                || tuple::compare_search(desc, &tuple::SearchKey::entry(values, tid), &prev)
                    == std::cmp::Ordering::Greater,
            "build input out of order at entry {count}"
        );
        b.add(0, &item)?;
        if cfg!(debug_assertions) {
            std::mem::swap(&mut prev, &mut item);
        }
        count += 1;
    }
    if count > 0 {
        b.finish()?;
    }
    Ok(count)
}
