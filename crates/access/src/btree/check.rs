//! amcheck's bt_index_check and bt_index_parent_check (README rule 27).
//!
//! Each level is walked left to right from its leftmost page. Every page:
//! its level and flags, data items in strictly ascending order (tid last),
//! all below the high key, an internal page's first data item minus
//! infinity, and the left link of its right sibling pointing back at it
//! (checked with both pages share-locked, left then right, so concurrent
//! splits cannot fake a disagreement). With `parent`, the downlinks of each
//! level, in order, must be exactly the pages of the level below, each
//! child's high key must equal the separator after its downlink (or the
//! parent's high key, or be absent at the right edge), and its entries
//! must not sort before the downlink's separator. The parent check reads
//! levels one after another: the caller keeps writers out (PostgreSQL's
//! bt_index_parent_check takes a ShareLock).

use std::cmp::Ordering;

use common::{BlockNumber, PgError, PgResult, RelFileLocator, SqlState};
use storage::buffer::{BufferPool, OwnedPageRead};
use storage::page;

use super::page::{self as bp, NONE};
use super::search::{lock, read_meta};
use super::tuple::{self, compare_keys};
use super::IndexDesc;

fn corrupt(message: String, detail: String) -> PgError {
    PgError::new(SqlState::INDEX_CORRUPTED, message).with_detail(detail)
}

fn lsn(pg: &[u8]) -> String {
    wal::format_lsn(page::lsn(pg))
}

/// What a parent says about one child: its separator (None: minus
/// infinity at the left edge) and the next separator (None: the right edge).
struct Downlink {
    parent: BlockNumber,
    parent_lsn: String,
    child: BlockNumber,
    lower: Option<Vec<u8>>,
    upper: Option<Vec<u8>>,
}

struct Checker<'a> {
    pool: &'static BufferPool,
    rel: RelFileLocator,
    desc: &'a IndexDesc,
    name: &'a str,
    parent: bool,
    root: BlockNumber,
}

/// What the walk of one level found.
struct LevelWalk {
    pages: usize,
    first_child: BlockNumber,
    downlinks: Vec<Downlink>,
}

impl Checker<'_> {
    fn walk_level(
        &self,
        leftmost: BlockNumber,
        level: u32,
        above: Option<&[Downlink]>,
    ) -> PgResult<LevelWalk> {
        let mut walk = LevelWalk {
            pages: 0,
            first_child: NONE,
            downlinks: Vec::new(),
        };
        let mut blk = leftmost;
        let mut cur: OwnedPageRead = lock(self.pool, self.rel, blk)?;
        // Without the parent check writers run beside us: the leftmost page
        // read from the level above may have been unlinked since (rule
        // 27a); the level starts at the first live page right of it.
        while !self.parent && bp::is_deleted(&cur) {
            blk = bp::next(&cur);
            drop(cur);
            cur = lock(self.pool, self.rel, blk)?;
        }
        let mut left_high_key: Option<Vec<u8>> = None;
        loop {
            if walk.pages == 0 && bp::prev(&cur) != NONE {
                return Err(corrupt(
                    format!(
                        "leftmost page of level {level} in index \"{}\" has a left sibling",
                        self.name
                    ),
                    format!("Block={blk} left link={}.", bp::prev(&cur)),
                ));
            }
            if let Some(above) = above {
                let Some(d) = above.get(walk.pages) else {
                    return Err(corrupt(
                        format!(
                            "block {blk} of level {level} in index \"{}\" lacks a downlink",
                            self.name
                        ),
                        format!("Page lsn={}.", lsn(&cur)),
                    ));
                };
                self.check_against_parent(&cur, blk, d)?;
            }
            self.check_page(&cur, blk, level)?;
            if level > 0 {
                if walk.pages == 0 {
                    walk.first_child = bp::child(bp::item(&cur, bp::first_data(&cur)));
                }
                if self.parent {
                    self.collect_downlinks(&cur, blk, left_high_key.as_deref(), &mut walk);
                }
            }
            walk.pages += 1;
            left_high_key = bp::high_key(&cur).map(<[u8]>::to_vec);
            if bp::is_rightmost(&cur) {
                break;
            }
            let next_blk = bp::next(&cur);
            let next: OwnedPageRead = lock(self.pool, self.rel, next_blk)?;
            if !bp::is_btree_page(&next) || bp::prev(&next) != blk {
                return Err(corrupt(
                    format!(
                        "left link/right link pair in index \"{}\" not in agreement",
                        self.name
                    ),
                    format!(
                        "Block={next_blk} left block={blk} left link from block={}.",
                        if bp::is_btree_page(&next) {
                            bp::prev(&next)
                        } else {
                            NONE
                        }
                    ),
                ));
            }
            cur = next;
            blk = next_blk;
        }
        if let Some(above) = above {
            if above.len() != walk.pages {
                let d = &above[walk.pages];
                return Err(corrupt(
                    format!(
                        "downlink in block {} of index \"{}\" points to block {}, past the end of level {level}",
                        d.parent, self.name, d.child
                    ),
                    format!("Parent page lsn={}.", d.parent_lsn),
                ));
            }
        }
        Ok(walk)
    }

    fn check_page(&self, pg: &[u8], blk: BlockNumber, level: u32) -> PgResult<()> {
        let name = self.name;
        if !bp::is_btree_page(pg) || bp::flags(pg) & bp::META != 0 {
            return Err(corrupt(
                format!("block {blk} of index \"{name}\" is not a B-tree page"),
                format!("Page lsn={}.", lsn(pg)),
            ));
        }
        if bp::is_deleted(pg) {
            return Err(corrupt(
                format!("block {blk} of index \"{name}\" is deleted but still linked into level {level}"),
                format!("Page lsn={}.", lsn(pg)),
            ));
        }
        if bp::level(pg) != level || bp::is_leaf(pg) != (level == 0) {
            return Err(corrupt(
                format!(
                    "block {blk} of index \"{name}\" has level {} where {level} is expected",
                    bp::level(pg)
                ),
                format!("Page lsn={}.", lsn(pg)),
            ));
        }
        if bp::is_root(pg) != (blk == self.root) {
            return Err(corrupt(
                format!("block {blk} of index \"{name}\" has a root flag that disagrees with the metapage"),
                format!("Root block={} page lsn={}.", self.root, lsn(pg)),
            ));
        }
        let leaf = level == 0;
        let (first, max) = (bp::first_data(pg), bp::max_offset(pg));
        if !leaf {
            if max < first {
                return Err(corrupt(
                    format!("internal block {blk} of index \"{name}\" has no downlinks"),
                    format!("Page lsn={}.", lsn(pg)),
                ));
            }
            for off in first..=max {
                let it = bp::item(pg, off);
                if tuple::is_minus_infinity(bp::key_of(false, it)) != (off == first)
                    || bp::child(it) == NONE
                {
                    return Err(corrupt(
                        format!(
                            "internal block {blk} of index \"{name}\" has a malformed downlink"
                        ),
                        format!("Index tid=({blk},{off}) page lsn={}.", lsn(pg)),
                    ));
                }
            }
        }
        // Minus infinity is first by construction; order the rest.
        let from = if leaf { first } else { first + 1 };
        for off in from..max {
            let (a, b) = (bp::key(pg, off), bp::key(pg, off + 1));
            if compare_keys(self.desc, a, b)? != Ordering::Less {
                let (ta, tb) = (tuple::tid(a), tuple::tid(b));
                let points = if leaf { "heap" } else { "index" };
                return Err(corrupt(
                    format!("item order invariant violated for index \"{name}\""),
                    format!(
                        "Lower index tid=({blk},{off}) (points to {points} tid=({},{})) higher index tid=({blk},{}) (points to {points} tid=({},{})) page lsn={}.",
                        ta.block, ta.offset, off + 1, tb.block, tb.offset, lsn(pg)
                    ),
                ));
            }
        }
        if let Some(hk) = bp::high_key(pg) {
            if max >= from && compare_keys(self.desc, bp::key(pg, max), hk)? != Ordering::Less {
                let t = tuple::tid(bp::key(pg, max));
                return Err(corrupt(
                    format!("high key invariant violated for index \"{name}\""),
                    format!(
                        "Index tid=({blk},{max}) points to heap tid=({},{}) page lsn={}.",
                        t.block,
                        t.offset,
                        lsn(pg)
                    ),
                ));
            }
        }
        Ok(())
    }

    fn collect_downlinks(
        &self,
        pg: &[u8],
        blk: BlockNumber,
        left_high_key: Option<&[u8]>,
        walk: &mut LevelWalk,
    ) {
        let (first, max) = (bp::first_data(pg), bp::max_offset(pg));
        let parent_lsn = lsn(pg);
        for off in first..=max {
            let lower = if off == first {
                left_high_key.map(<[u8]>::to_vec)
            } else {
                Some(bp::key(pg, off).to_vec())
            };
            let upper = if off < max {
                Some(bp::key(pg, off + 1).to_vec())
            } else {
                bp::high_key(pg).map(<[u8]>::to_vec)
            };
            walk.downlinks.push(Downlink {
                parent: blk,
                parent_lsn: parent_lsn.clone(),
                child: bp::child(bp::item(pg, off)),
                lower,
                upper,
            });
        }
    }

    fn check_against_parent(&self, pg: &[u8], blk: BlockNumber, d: &Downlink) -> PgResult<()> {
        let name = self.name;
        if d.child != blk {
            return Err(corrupt(
                format!(
                    "downlink in block {} of index \"{name}\" points to block {}, not to the next page of its level ({blk})",
                    d.parent, d.child
                ),
                format!("Parent page lsn={}.", d.parent_lsn),
            ));
        }
        let high_key_matches = match (bp::high_key(pg), &d.upper) {
            (None, None) => true,
            (Some(hk), Some(up)) => compare_keys(self.desc, hk, up)? == Ordering::Equal,
            _ => false,
        };
        if !high_key_matches {
            return Err(corrupt(
                format!("mismatch between parent key and child high key in index \"{name}\""),
                format!(
                    "Target block={} child block={blk} target page lsn={}.",
                    d.parent, d.parent_lsn
                ),
            ));
        }
        if let Some(lower) = &d.lower {
            let leaf = bp::is_leaf(pg);
            let first = bp::first_data(pg) + if leaf { 0 } else { 1 };
            if first <= bp::max_offset(pg)
                && compare_keys(self.desc, bp::key(pg, first), lower)? == Ordering::Less
            {
                return Err(corrupt(
                    format!("down-link lower bound invariant violated for index \"{name}\""),
                    format!(
                        "Parent block={} child index tid=({blk},{first}) parent page lsn={}.",
                        d.parent, d.parent_lsn
                    ),
                ));
            }
        }
        Ok(())
    }
}

pub(crate) fn check(
    pool: &'static BufferPool,
    rel: RelFileLocator,
    desc: &IndexDesc,
    parent: bool,
    name: &str,
) -> PgResult<()> {
    let (root, root_level) = read_meta(pool, rel).map_err(|_| {
        PgError::new(
            SqlState::INDEX_CORRUPTED,
            format!("index \"{name}\" is not a btree"),
        )
    })?;
    {
        let pg: OwnedPageRead = lock(pool, rel, root)?;
        if !bp::is_btree_page(&pg)
            || !bp::is_root(&pg)
            || bp::level(&pg) != root_level
            || bp::prev(&pg) != NONE
            || bp::next(&pg) != NONE
        {
            return Err(corrupt(
                format!("the metapage of index \"{name}\" does not point at its root"),
                format!("Root block={root} level={root_level}."),
            ));
        }
    }
    let checker = Checker {
        pool,
        rel,
        desc,
        name,
        parent,
        root,
    };
    let mut leftmost = root;
    let mut level = root_level;
    let mut above: Option<Vec<Downlink>> = None;
    loop {
        let walk = checker.walk_level(leftmost, level, above.as_deref())?;
        if level == 0 {
            return Ok(());
        }
        leftmost = walk.first_child;
        level -= 1;
        above = parent.then_some(walk.downlinks);
    }
}
