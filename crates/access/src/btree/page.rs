//! B-tree pages (README rule 18): the slotted page of `storage::page` with
//! a 16-byte special space.
//!
//! ```text
//! special space (last 16 bytes of the page)
//! 0..4    left sibling block (NONE on the leftmost page of a level)
//! 4..8    right sibling block (NONE on the rightmost)
//! 8..12   level (0: leaf)
//! 12..14  flags: LEAF, ROOT, META, DELETED
//! 14..16  reserved
//! ```
//! Item 1 of a page with a right sibling is its high key: every entry on
//! the page sorts before it, every entry of the right sibling at or after
//! it. The data items follow in key order. Internal items are
//! `child block (4 bytes)` + key tuple; the first data item of an internal
//! page is minus infinity. Block 0 is the metapage: one item with the
//! root's block and level. Block numbers use 0 (the metapage, never a
//! sibling or child) for "none", as nbtree's P_NONE.
//!
//! A DELETED page (README rule 27a, a leaf VACUUM unlinked) keeps its left
//! and right links as they were at deletion, so a reader that still
//! reaches it moves on, and holds one 8-byte item: the next xid at
//! deletion (`safexid`); nothing else on it means anything.

use common::BlockNumber;
use storage::page::{self, OffsetNumber, LINE_POINTER_SIZE, PAGE_HEADER_SIZE};
use storage::BLCKSZ;

use super::tuple;

pub(crate) const SPECIAL_SIZE: usize = 16;
pub(crate) const NONE: BlockNumber = 0;
pub(crate) const META_BLOCK: BlockNumber = 0;
pub(crate) const LEAF: u16 = 0x0001;
pub(crate) const ROOT: u16 = 0x0002;
pub(crate) const META: u16 = 0x0008;
pub(crate) const DELETED: u16 = 0x0010;

/// Bytes for line pointers and items on an empty page.
pub(crate) const CAPACITY: usize = BLCKSZ - PAGE_HEADER_SIZE - SPECIAL_SIZE;
const META_MAGIC: u32 = 0x053162;
const META_VERSION: u32 = 4;

/// Where the special space starts.
const SP: usize = BLCKSZ - SPECIAL_SIZE;
#[inline]
fn u32_at(pg: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(pg[at..at + 4].try_into().unwrap())
}
#[inline]
fn put_u32(pg: &mut [u8], at: usize, v: u32) {
    pg[at..at + 4].copy_from_slice(&v.to_le_bytes());
}

/// Initialises an empty B-tree page.
pub(crate) fn init(pg: &mut [u8], level: u32, flags: u16, prev: BlockNumber, next: BlockNumber) {
    page::init(pg, SPECIAL_SIZE);
    let s = SP;
    put_u32(pg, s, prev);
    put_u32(pg, s + 4, next);
    put_u32(pg, s + 8, level);
    pg[s + 12..s + 14].copy_from_slice(&flags.to_le_bytes());
}

/// Whether the page is an initialised B-tree page (a block reserved by a
/// split that never finished is all zeroes).
pub(crate) fn is_btree_page(pg: &[u8]) -> bool {
    !page::is_new(pg) && page::special(pg) == BLCKSZ - SPECIAL_SIZE
}

#[inline]
pub(crate) fn prev(pg: &[u8]) -> BlockNumber {
    u32_at(pg, SP)
}
#[inline]
pub(crate) fn next(pg: &[u8]) -> BlockNumber {
    u32_at(pg, SP + 4)
}
#[inline]
pub(crate) fn level(pg: &[u8]) -> u32 {
    u32_at(pg, SP + 8)
}
#[inline]
pub(crate) fn flags(pg: &[u8]) -> u16 {
    let s = SP;
    u16::from_le_bytes([pg[s + 12], pg[s + 13]])
}
pub(crate) fn set_prev(pg: &mut [u8], prev: BlockNumber) {
    put_u32(pg, SP, prev);
}
pub(crate) fn set_next(pg: &mut [u8], next: BlockNumber) {
    put_u32(pg, SP + 4, next);
}
pub(crate) fn set_flags(pg: &mut [u8], flags: u16) {
    pg[SP + 12..SP + 14].copy_from_slice(&flags.to_le_bytes());
}
#[inline]
pub(crate) fn is_leaf(pg: &[u8]) -> bool {
    flags(pg) & LEAF != 0
}
#[inline]
pub(crate) fn is_root(pg: &[u8]) -> bool {
    flags(pg) & ROOT != 0
}
#[inline]
pub(crate) fn is_deleted(pg: &[u8]) -> bool {
    flags(pg) & DELETED != 0
}
#[inline]
pub(crate) fn is_rightmost(pg: &[u8]) -> bool {
    next(pg) == NONE
}

/// The offset of the first data item (after the high key, if any).
#[inline]
pub(crate) fn first_data(pg: &[u8]) -> OffsetNumber {
    if is_rightmost(pg) {
        1
    } else {
        2
    }
}

#[inline]
pub(crate) fn max_offset(pg: &[u8]) -> OffsetNumber {
    page::item_count(pg)
}

/// Item `off`'s bytes; B-tree pages hold only normal items.
#[inline]
pub(crate) fn item(pg: &[u8], off: OffsetNumber) -> &[u8] {
    page::normal_item(pg, off)
}

/// The key tuple of an item on a page of this kind.
#[inline]
pub(crate) fn key_of(leaf: bool, item: &[u8]) -> &[u8] {
    if leaf {
        item
    } else {
        &item[4..]
    }
}

/// Item `off`'s key tuple.
#[inline]
pub(crate) fn key(pg: &[u8], off: OffsetNumber) -> &[u8] {
    key_of(is_leaf(pg), item(pg, off))
}

/// The high key's key tuple, if the page has a right sibling.
#[inline]
pub(crate) fn high_key(pg: &[u8]) -> Option<&[u8]> {
    (!is_rightmost(pg)).then(|| key(pg, 1))
}

/// The child an internal item points at.
#[inline]
pub(crate) fn child(item: &[u8]) -> BlockNumber {
    u32::from_le_bytes(item[0..4].try_into().unwrap())
}

/// An internal item: `child` and a key tuple.
pub(crate) fn pivot(child: BlockNumber, key_tuple: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(4 + key_tuple.len());
    out.extend_from_slice(&child.to_le_bytes());
    out.extend_from_slice(key_tuple);
    out
}

/// An internal page's first data item: minus infinity pointing at `child`.
pub(crate) fn minus_infinity_pivot(child: BlockNumber) -> Vec<u8> {
    let mut out = child.to_le_bytes().to_vec();
    tuple::minus_infinity(&mut out);
    out
}

/// Space an item takes on a page, its line pointer included.
#[inline]
pub(crate) fn item_cost(len: usize) -> usize {
    ((len + 7) & !7) + LINE_POINTER_SIZE
}

#[inline]
pub(crate) fn fits(pg: &[u8], len: usize) -> bool {
    page::free_space(pg) >= (len + 7) & !7
}

/// Fills an initialised empty page with a high key (optional) and items.
/// Panics if they do not fit: callers size pages first.
pub(crate) fn fill<'a>(
    pg: &mut [u8],
    high_key: Option<&'a [u8]>,
    items: impl IntoIterator<Item = &'a [u8]>,
) {
    for (off, it) in (1..).zip(high_key.into_iter().chain(items)) {
        assert!(
            page::insert_item_shifting(pg, off, it),
            "page sized by caller"
        );
    }
}

// Deleted pages.

/// The image of a leaf VACUUM unlinked: its links as they were, the
/// DELETED flag and the next xid at deletion.
pub(crate) fn deleted_image(prev: BlockNumber, next: BlockNumber, safexid: u64) -> Box<[u8]> {
    let mut img = vec![0u8; BLCKSZ].into_boxed_slice();
    init(&mut img, 0, LEAF | DELETED, prev, next);
    fill(&mut img, None, [&safexid.to_le_bytes()[..]]);
    img
}

/// The next xid when a DELETED page was unlinked: once every running
/// transaction and snapshot is newer (`global_xmin` above it), no one can
/// still be on the way to the page and it may be reused.
pub(crate) fn safexid(pg: &[u8]) -> u64 {
    debug_assert!(is_deleted(pg));
    match page::item(pg, 1) {
        Some(it) if it.len() >= 8 => u64::from_le_bytes(it[..8].try_into().unwrap()),
        _ => u64::MAX,
    }
}

/// Whether the page holds no entries (a high key does not count).
#[inline]
pub(crate) fn is_empty_leaf(pg: &[u8]) -> bool {
    is_leaf(pg) && !is_deleted(pg) && max_offset(pg) < first_data(pg)
}

/// Points item `keep`'s downlink at item `drop`'s child and removes
/// `drop` (the parent's half of unlinking a page: the deleted page's key
/// space goes to its right sibling, whose separator is dropped).
pub(crate) fn merge_downlinks(pg: &mut [u8], keep: OffsetNumber, drop: OffsetNumber) -> bool {
    if keep < first_data(pg) || drop > max_offset(pg) || keep + 1 != drop {
        return false;
    }
    let right = child(item(pg, drop));
    let Some(it) = page::item_mut(pg, keep) else {
        return false;
    };
    it[0..4].copy_from_slice(&right.to_le_bytes());
    page::delete_items(pg, &[drop]);
    true
}

// The metapage.

pub(crate) fn init_meta(pg: &mut [u8], root: BlockNumber, level: u32) {
    init(pg, 0, META, NONE, NONE);
    let mut m = Vec::with_capacity(24);
    for v in [META_MAGIC, META_VERSION, root, level, root, level] {
        m.extend_from_slice(&v.to_le_bytes());
    }
    fill(pg, None, [&m[..]]);
}

/// The root's block and level, or None if this is no B-tree metapage.
pub(crate) fn meta_root(pg: &[u8]) -> Option<(BlockNumber, u32)> {
    if !is_btree_page(pg) || flags(pg) & META == 0 || max_offset(pg) != 1 {
        return None;
    }
    let m = page::item(pg, 1)?;
    if m.len() < 16 || u32_at(m, 0) != META_MAGIC || u32_at(m, 4) != META_VERSION {
        return None;
    }
    Some((u32_at(m, 8), u32_at(m, 12)))
}

/// Points the metapage at a new root (the "fast root" fields follow it:
/// without page deletion the true root is always the fast root).
pub(crate) fn set_meta_root(pg: &mut [u8], root: BlockNumber, level: u32) {
    let m = page::item_mut(pg, 1).expect("metapage item");
    put_u32(m, 8, root);
    put_u32(m, 12, level);
    put_u32(m, 16, root);
    put_u32(m, 20, level);
}

// Whole pages in log records: the page without its free hole.

pub(crate) fn put_whole(pg: &[u8], out: &mut Vec<u8>) {
    let (lower, upper) = (page::lower(pg), page::upper(pg));
    out.extend_from_slice(&pg[..lower]);
    out.extend_from_slice(&pg[upper..]);
}

pub(crate) fn restore_whole(pg: &mut [u8], data: &[u8]) -> Result<(), String> {
    if data.len() < PAGE_HEADER_SIZE || data.len() > BLCKSZ {
        return Err("bad whole-page length".into());
    }
    let lower = page::lower(data);
    let hole = BLCKSZ - data.len();
    if lower > data.len() {
        return Err("bad whole-page lower bound".into());
    }
    pg[..lower].copy_from_slice(&data[..lower]);
    pg[lower..lower + hole].fill(0);
    pg[lower + hole..].copy_from_slice(&data[lower..]);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn special_space_meta_and_whole_pages() {
        let mut pg = vec![0u8; BLCKSZ];
        init(&mut pg, 2, 0, 7, 9);
        assert_eq!((prev(&pg), next(&pg), level(&pg)), (7, 9, 2));
        assert!(!is_leaf(&pg) && !is_rightmost(&pg) && is_btree_page(&pg));
        fill(&mut pg, Some(b"highkey!"), [&b"one"[..], b"two"]);
        assert_eq!((first_data(&pg), max_offset(&pg)), (2, 3));
        assert_eq!(item(&pg, 3), b"two");
        let mut w = Vec::new();
        put_whole(&pg, &mut w);
        assert!(w.len() < 200);
        let mut back = vec![0xffu8; BLCKSZ];
        restore_whole(&mut back, &w).unwrap();
        assert_eq!(back, pg);

        let mut meta = vec![0u8; BLCKSZ];
        init_meta(&mut meta, 1, 0);
        assert_eq!(meta_root(&meta), Some((1, 0)));
        set_meta_root(&mut meta, 5, 1);
        assert_eq!(meta_root(&meta), Some((5, 1)));
        assert_eq!(meta_root(&pg), None);
    }

    #[test]
    fn deleted_pages_and_merged_downlinks() {
        let img = deleted_image(3, 8, 4242);
        assert!(is_deleted(&img) && is_leaf(&img) && is_btree_page(&img));
        assert_eq!((prev(&img), next(&img), safexid(&img)), (3, 8, 4242));
        assert!(!is_empty_leaf(&img));

        let mut leaf = vec![0u8; BLCKSZ];
        init(&mut leaf, 0, LEAF, 1, 2);
        fill(&mut leaf, Some(b"hk"), []);
        assert!(is_empty_leaf(&leaf));

        let mut parent = vec![0u8; BLCKSZ];
        init(&mut parent, 1, 0, NONE, NONE);
        let a = minus_infinity_pivot(10);
        let (b, c) = (pivot(11, b"k1"), pivot(12, b"k2"));
        fill(&mut parent, None, [&a[..], &b[..], &c[..]]);
        assert!(!merge_downlinks(&mut parent, 2, 1));
        assert!(merge_downlinks(&mut parent, 1, 2));
        assert_eq!(max_offset(&parent), 2);
        assert_eq!(child(item(&parent, 1)), 11);
        assert!(tuple::is_minus_infinity(key(&parent, 1)));
        assert_eq!((child(item(&parent, 2)), key(&parent, 2)), (12, &b"k2"[..]));
    }
}
