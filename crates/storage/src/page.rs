//! Slotted 8 KB page layout (PostgreSQL's bufpage.h):
//!
//! ```text
//! 0..8    LSN of the last WAL record that changed the page
//! 8..12   CRC32C checksum (computed with this field zero, seeded by block number)
//! 12..14  flags (PD_HAS_FREE_LINES, PD_ALL_VISIBLE)
//! 14..16  pd_lower: end of the line pointer array
//! 16..18  pd_upper: start of tuple data
//! 18..20  pd_special: start of the special space
//! 20..22  layout version
//! 22..24  reserved
//! 24..    line pointers (4 bytes each), growing up; tuples grow down from pd_upper
//! ```
//! A page of all zeroes is a valid "new" page (never initialised).

use crate::BLCKSZ;

pub const PAGE_HEADER_SIZE: usize = 24;
pub const LINE_POINTER_SIZE: usize = 4;
pub const PAGE_LAYOUT_VERSION: u16 = 1;
/// Largest tuple that fits on an empty heap page with one line pointer.
pub const MAX_ITEM_SIZE: usize = BLCKSZ - PAGE_HEADER_SIZE - LINE_POINTER_SIZE;

/// Line pointer states (lp_flags).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ItemState {
    Unused = 0,
    Normal = 1,
    Redirect = 2,
    Dead = 3,
}

/// 1-based item number within a page, as PostgreSQL's OffsetNumber.
pub type OffsetNumber = u16;

/// pd_flags bit: some line pointer before the last is unused (set by
/// pruning, cleared when a search for one finds none), so adding an item
/// looks for one to reuse only when it may succeed.
pub const PD_HAS_FREE_LINES: u16 = 0x0001;
/// pd_flags bit of a heap page: every tuple on it is visible to every
/// snapshot, now and later (PostgreSQL's PD_ALL_VISIBLE). The visibility
/// map's bit for the page is set only while this is (access README).
pub const PD_ALL_VISIBLE: u16 = 0x0004;

#[inline]
fn get_u16(p: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([p[at], p[at + 1]])
}
#[inline]
fn put_u16(p: &mut [u8], at: usize, v: u16) {
    p[at..at + 2].copy_from_slice(&v.to_le_bytes());
}

pub fn is_new(page: &[u8]) -> bool {
    get_u16(page, 16) == 0
}

/// Initialises an empty page with `special` bytes of special space.
pub fn init(page: &mut [u8], special: usize) {
    page.fill(0);
    put_u16(page, 14, PAGE_HEADER_SIZE as u16);
    put_u16(page, 16, (BLCKSZ - special) as u16);
    put_u16(page, 18, (BLCKSZ - special) as u16);
    put_u16(page, 20, PAGE_LAYOUT_VERSION);
}

pub fn lsn(page: &[u8]) -> u64 {
    u64::from_le_bytes(page[0..8].try_into().unwrap())
}
pub fn set_lsn(page: &mut [u8], lsn: u64) {
    page[0..8].copy_from_slice(&lsn.to_le_bytes());
}
pub fn flags(page: &[u8]) -> u16 {
    get_u16(page, 12)
}
pub fn set_flags(page: &mut [u8], flags: u16) {
    put_u16(page, 12, flags);
}
pub fn lower(page: &[u8]) -> usize {
    get_u16(page, 14) as usize
}
pub fn upper(page: &[u8]) -> usize {
    get_u16(page, 16) as usize
}

/// Number of line pointers on the page.
pub fn item_count(page: &[u8]) -> u16 {
    if is_new(page) {
        return 0;
    }
    ((lower(page) - PAGE_HEADER_SIZE) / LINE_POINTER_SIZE) as u16
}

/// Free bytes for a new tuple, after reserving its line pointer.
pub fn free_space(page: &[u8]) -> usize {
    if is_new(page) {
        return MAX_ITEM_SIZE;
    }
    (upper(page) - lower(page)).saturating_sub(LINE_POINTER_SIZE)
}

#[inline]
fn lp_at(page: &[u8], off: OffsetNumber) -> u32 {
    let at = PAGE_HEADER_SIZE + (off as usize - 1) * LINE_POINTER_SIZE;
    u32::from_le_bytes(page[at..at + 4].try_into().unwrap())
}

#[inline]
fn set_lp(page: &mut [u8], off: OffsetNumber, offset: usize, state: ItemState, len: usize) {
    let at = PAGE_HEADER_SIZE + (off as usize - 1) * LINE_POINTER_SIZE;
    let v = (offset as u32 & 0x7fff) | ((state as u32) << 15) | ((len as u32 & 0x7fff) << 17);
    page[at..at + 4].copy_from_slice(&v.to_le_bytes());
}

/// State, offset and length of item `off` (1-based); an offset past the
/// line pointer array (a tid whose slot pruning truncated away) is unused.
#[inline]
pub fn item_id(page: &[u8], off: OffsetNumber) -> (ItemState, usize, usize) {
    if off == 0 || off > item_count(page) {
        return (ItemState::Unused, 0, 0);
    }
    let v = lp_at(page, off);
    let state = match (v >> 15) & 3 {
        0 => ItemState::Unused,
        1 => ItemState::Normal,
        2 => ItemState::Redirect,
        _ => ItemState::Dead,
    };
    (state, (v & 0x7fff) as usize, (v >> 17) as usize)
}

/// The bytes of a normal item, or None for unused/dead/redirect items.
#[inline]
pub fn item(page: &[u8], off: OffsetNumber) -> Option<&[u8]> {
    let (state, at, len) = item_id(page, off);
    (state == ItemState::Normal).then(|| &page[at..at + len])
}

/// The bytes of item `off` on a page whose items are all normal (an
/// index page), without the checks `item` makes: the hot path of a
/// binary search. `off` must be a line pointer of the page.
#[inline]
pub fn normal_item(page: &[u8], off: OffsetNumber) -> &[u8] {
    debug_assert!(off >= 1 && off <= item_count(page));
    let v = lp_at(page, off);
    debug_assert_eq!((v >> 15) & 3, ItemState::Normal as u32);
    let (at, len) = ((v & 0x7fff) as usize, (v >> 17) as usize);
    &page[at..at + len]
}

#[inline]
pub fn item_mut(page: &mut [u8], off: OffsetNumber) -> Option<&mut [u8]> {
    let (state, at, len) = item_id(page, off);
    (state == ItemState::Normal).then(move || &mut page[at..at + len])
}

/// Marks an item dead: the pointer stays (index entries may point at it)
/// but holds no storage; its bytes are reclaimed by `repair_fragmentation`.
/// `add_item` never reuses it: only making it unused again frees the slot.
pub fn set_item_dead(page: &mut [u8], off: OffsetNumber) {
    set_lp(page, off, 0, ItemState::Dead, 0);
}

/// Makes item `off` a redirect to item `target` on the same page (a HOT
/// chain's root whose tuple is gone), holding no storage.
pub fn set_item_redirect(page: &mut [u8], off: OffsetNumber, target: OffsetNumber) {
    debug_assert!(target != 0 && target != off);
    set_lp(page, off, target as usize, ItemState::Redirect, 0);
}

/// Where a redirect pointer leads, or None if `off` is no redirect.
#[inline]
pub fn redirect_target(page: &[u8], off: OffsetNumber) -> Option<OffsetNumber> {
    let (state, target, _) = item_id(page, off);
    (state == ItemState::Redirect).then_some(target as OffsetNumber)
}

/// Marks an item unused: its slot may be reused by an unrelated item and
/// its bytes are reclaimed by `repair_fragmentation`.
pub fn set_item_unused(page: &mut [u8], off: OffsetNumber) {
    set_lp(page, off, 0, ItemState::Unused, 0);
}

/// The offset the next `add_item` will use: the first unused line pointer
/// when the page says it may have one (dead and redirect pointers are never
/// reused), else a new one at the end. Clears
/// PD_HAS_FREE_LINES when the search finds none.
pub fn next_offset(page: &mut [u8]) -> OffsetNumber {
    let count = item_count(page);
    if !is_new(page) && flags(page) & PD_HAS_FREE_LINES != 0 {
        if let Some(off) = (1..=count).find(|&o| item_id(page, o).0 == ItemState::Unused) {
            return off;
        }
        set_flags(page, flags(page) & !PD_HAS_FREE_LINES);
    }
    count + 1
}

/// Adds `data` as a new item (8-byte aligned) at the offset `next_offset`
/// chooses, returning it, or None if it does not fit. Initialises a new
/// page first.
pub fn add_item(page: &mut [u8], data: &[u8]) -> Option<OffsetNumber> {
    if is_new(page) {
        init(page, 0);
    }
    let off = next_offset(page);
    add_item_at(page, off, data).then_some(off)
}

/// Adds `data` at `off`, an unused line pointer or the one just past the
/// end (redo repeats the offset the forward path chose). False if it does
/// not fit or `off` is taken.
pub fn add_item_at(page: &mut [u8], off: OffsetNumber, data: &[u8]) -> bool {
    if is_new(page) {
        init(page, 0);
    }
    let count = item_count(page);
    let new_pointer = off == count + 1;
    if off == 0 || off > count + 1 || (!new_pointer && item_id(page, off).0 != ItemState::Unused) {
        return false;
    }
    let aligned = (data.len() + 7) & !7;
    let lower = lower(page);
    let upper = upper(page);
    let pointer = if new_pointer { LINE_POINTER_SIZE } else { 0 };
    if lower + pointer + aligned > upper {
        return false;
    }
    let new_upper = upper - aligned;
    page[new_upper..new_upper + data.len()].copy_from_slice(data);
    set_lp(page, off, new_upper, ItemState::Normal, data.len());
    if new_pointer {
        put_u16(page, 14, (lower + LINE_POINTER_SIZE) as u16);
    }
    put_u16(page, 16, new_upper as u16);
    true
}

/// Compacts the page after items were marked unused, dead or redirected
/// (none of which hold storage): the normal items' bytes move together at
/// the end of the page (their offsets stay),
/// trailing unused line pointers go, and PD_HAS_FREE_LINES says whether
/// unused ones remain before the last. Deterministic, so redo rebuilds the
/// same page from the same changes (PostgreSQL's
/// PageRepairFragmentation and PageTruncateLinePointerArray).
pub fn repair_fragmentation(page: &mut [u8]) {
    if is_new(page) {
        return;
    }
    let mut count = item_count(page);
    while count > 0 && item_id(page, count).0 == ItemState::Unused {
        count -= 1;
    }
    let special = get_u16(page, 18) as usize;
    // By descending position, so each item moves towards the end without
    // overwriting one not yet moved.
    let mut items: Vec<(OffsetNumber, usize, usize, ItemState)> = (1..=count)
        .filter_map(|o| {
            let (st, at, len) = item_id(page, o);
            (st != ItemState::Unused && len > 0).then_some((o, at, len, st))
        })
        .collect();
    items.sort_by_key(|i| std::cmp::Reverse(i.1));
    let mut upper = special;
    for (o, at, len, st) in items {
        upper -= (len + 7) & !7;
        page.copy_within(at..at + len, upper);
        set_lp(page, o, upper, st, len);
    }
    let lower = PAGE_HEADER_SIZE + count as usize * LINE_POINTER_SIZE;
    put_u16(page, 14, lower as u16);
    put_u16(page, 16, upper as u16);
    page[lower..upper].fill(0);
    let has_free = (1..=count).any(|o| item_id(page, o).0 == ItemState::Unused);
    let f = flags(page) & !PD_HAS_FREE_LINES;
    set_flags(page, if has_free { f | PD_HAS_FREE_LINES } else { f });
}

/// Start of the special space (where an index keeps its per-page data).
pub fn special(page: &[u8]) -> usize {
    get_u16(page, 18) as usize
}

/// Inserts `data` as item `off` of an ordered page (a B-tree's): line
/// pointers from `off` on move up by one, so items keep their order
/// (PostgreSQL's PageAddItem with shuffling). Unused pointers are never
/// reused here. False if it does not fit or `off` is past the end + 1.
pub fn insert_item_shifting(page: &mut [u8], off: OffsetNumber, data: &[u8]) -> bool {
    debug_assert!(!is_new(page), "ordered pages are initialised first");
    let count = item_count(page);
    if off == 0 || off > count + 1 {
        return false;
    }
    let aligned = (data.len() + 7) & !7;
    let (lower, upper) = (lower(page), upper(page));
    if lower + LINE_POINTER_SIZE + aligned > upper {
        return false;
    }
    let at = PAGE_HEADER_SIZE + (off as usize - 1) * LINE_POINTER_SIZE;
    page.copy_within(at..lower, at + LINE_POINTER_SIZE);
    let new_upper = upper - aligned;
    page[new_upper..new_upper + data.len()].copy_from_slice(data);
    page[new_upper + data.len()..new_upper + aligned].fill(0);
    set_lp(page, off, new_upper, ItemState::Normal, data.len());
    put_u16(page, 14, (lower + LINE_POINTER_SIZE) as u16);
    put_u16(page, 16, new_upper as u16);
    true
}

/// Removes the items at `offsets` (ascending) from an ordered page: the
/// later line pointers move down to close the gaps and the item bytes are
/// compacted towards the special space, in one pass (PostgreSQL's
/// PageIndexMultiDelete). Deterministic, so redo repeats it exactly.
pub fn delete_items(page: &mut [u8], offsets: &[OffsetNumber]) {
    if offsets.is_empty() || is_new(page) {
        return;
    }
    debug_assert!(offsets.windows(2).all(|w| w[0] < w[1]), "offsets ascending");
    let count = item_count(page);
    let special = special(page);
    let mut kept: Vec<(usize, usize)> = Vec::with_capacity(count as usize);
    let mut doomed = offsets.iter().peekable();
    for off in 1..=count {
        if doomed.peek() == Some(&&off) {
            doomed.next();
            continue;
        }
        let (_, at, len) = item_id(page, off);
        kept.push((at, len));
    }
    // Copy the survivors out, then lay them down again from the end in
    // offset order: simple, and the result depends only on the survivors.
    let mut scratch = Vec::with_capacity(special - upper(page));
    let spans: Vec<(usize, usize)> = kept
        .iter()
        .map(|&(at, len)| {
            let start = scratch.len();
            scratch.extend_from_slice(&page[at..at + len]);
            (start, len)
        })
        .collect();
    let mut upper = special;
    for (i, &(start, len)) in spans.iter().enumerate() {
        upper -= (len + 7) & !7;
        page[upper..upper + len].copy_from_slice(&scratch[start..start + len]);
        page[upper + len..upper + ((len + 7) & !7)].fill(0);
        set_lp(page, (i + 1) as OffsetNumber, upper, ItemState::Normal, len);
    }
    let lower = PAGE_HEADER_SIZE + spans.len() * LINE_POINTER_SIZE;
    put_u16(page, 14, lower as u16);
    put_u16(page, 16, upper as u16);
    page[lower..upper].fill(0);
}

/// Checksum of a page image for `block`: CRC32C over the page with the checksum
/// field taken as zero, mixed with the block number so a page written to the
/// wrong place is caught too.
pub fn compute_checksum(page: &[u8], block: u32) -> u32 {
    let c = crc32c::crc32c_append(block.wrapping_add(0x5ca1_e5ed), &page[0..8]);
    let c = crc32c::crc32c_append(c, &[0u8; 4]);
    crc32c::crc32c_append(c, &page[12..BLCKSZ])
}

/// Sets the checksum field of a page image about to be written.
pub fn set_checksum(page: &mut [u8], block: u32) {
    if is_new(page) && page.iter().all(|&b| b == 0) {
        return;
    }
    let c = compute_checksum(page, block);
    page[8..12].copy_from_slice(&c.to_le_bytes());
}

/// Whether a page image read from disk is intact. An all-zero page is valid.
pub fn verify_checksum(page: &[u8], block: u32) -> bool {
    let stored = u32::from_le_bytes(page[8..12].try_into().unwrap());
    if stored == 0 && is_new(page) {
        return page.iter().all(|&b| b == 0);
    }
    stored == compute_checksum(page, block)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn add_and_read_items() {
        let mut page = vec![0u8; BLCKSZ];
        assert_eq!(free_space(&page), MAX_ITEM_SIZE);
        let a = add_item(&mut page, b"hello").unwrap();
        let b = add_item(&mut page, b"world!!!!").unwrap();
        assert_eq!((a, b), (1, 2));
        assert_eq!(item(&page, 1).unwrap(), b"hello");
        assert_eq!(item(&page, 2).unwrap(), b"world!!!!");
        assert_eq!(item_count(&page), 2);
        set_item_dead(&mut page, 1);
        assert!(item(&page, 1).is_none());
        set_item_redirect(&mut page, 2, 1);
        assert_eq!(redirect_target(&page, 2), Some(1));
        assert_eq!(redirect_target(&page, 1), None);
        // Dead and redirect pointers hold no storage and are never reused.
        let before = free_space(&page);
        repair_fragmentation(&mut page);
        assert_eq!(free_space(&page), before + 8 + 16);
        assert_eq!(item_count(&page), 2);
        assert_eq!(add_item(&mut page, b"new"), Some(3));
    }

    #[test]
    fn page_fills_up() {
        let mut page = vec![0u8; BLCKSZ];
        let tuple = vec![7u8; 1000];
        let mut n = 0;
        while add_item(&mut page, &tuple).is_some() {
            n += 1;
        }
        assert_eq!(n, 8);
        assert!(free_space(&page) < 1000);
    }

    #[test]
    fn ordered_insert_and_multi_delete() {
        let mut page = vec![0u8; BLCKSZ];
        init(&mut page, 16);
        assert_eq!(special(&page), BLCKSZ - 16);
        for (i, w) in [b"b", b"d", b"a", b"c"].iter().enumerate() {
            let off = match i {
                0 => 1,
                1 => 2,
                2 => 1,
                _ => 3,
            };
            assert!(insert_item_shifting(&mut page, off, *w));
        }
        let all: Vec<&[u8]> = (1..=item_count(&page))
            .map(|o| item(&page, o).unwrap())
            .collect();
        assert_eq!(all, vec![b"a", b"b", b"c", b"d"]);
        assert!(!insert_item_shifting(&mut page, 9, b"x"));
        let before = free_space(&page);
        delete_items(&mut page, &[1, 3]);
        let all: Vec<&[u8]> = (1..=item_count(&page))
            .map(|o| item(&page, o).unwrap())
            .collect();
        assert_eq!(all, vec![b"b", b"d"]);
        assert_eq!(free_space(&page), before + 2 * (8 + LINE_POINTER_SIZE));
        // The special space is untouched and the hole is zero.
        assert!(page[lower(&page)..upper(&page)].iter().all(|&b| b == 0));
    }

    #[test]
    fn checksum_detects_corruption_and_misplacement() {
        let mut page = vec![0u8; BLCKSZ];
        add_item(&mut page, b"data").unwrap();
        set_checksum(&mut page, 7);
        assert!(verify_checksum(&page, 7));
        assert!(!verify_checksum(&page, 8));
        page[5000] ^= 1;
        assert!(!verify_checksum(&page, 7));
        assert!(verify_checksum(&vec![0u8; BLCKSZ], 3));
    }
}
