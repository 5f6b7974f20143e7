//! Page images for a split and a new root (README rule 22). A split is
//! planned in memory while the page is locked: the page's data items with
//! the new one in place are divided where the two halves use about the same
//! space, except on the rightmost page of a level, where the left half is
//! filled to the fillfactor (90% for leaves, 70% above, as nbtree does) so
//! ascending inserts leave full pages behind.

use common::BlockNumber;
use storage::page::OffsetNumber;
use storage::BLCKSZ;

use super::page::{self as bp, CAPACITY, LEAF, NONE};

/// Leaves are filled to this percentage by rightmost splits and builds.
pub(crate) const LEAF_FILLFACTOR: usize = 90;
/// Internal pages, likewise.
pub(crate) const INTERNAL_FILLFACTOR: usize = 70;

/// A split's result: the images of the left page (the old block) and the
/// right page (a new block), and the key tuple of the separator the parent
/// gets for the right page (the left page's new high key).
pub(crate) struct SplitImages {
    pub left: Box<[u8]>,
    pub right: Box<[u8]>,
    pub separator: Vec<u8>,
}

fn empty_image() -> Box<[u8]> {
    vec![0u8; BLCKSZ].into_boxed_slice()
}

/// Where to divide `costs` (the data items' space, the new one included):
/// the first item of the right half. `hk_cost(k)` is the left half's high
/// key when item k starts the right half; `right_fixed` what the right
/// half holds besides its items (its high key), `right_first_cost(k)`
/// what its first item costs (internal pages keep only its downlink).
fn choose_split(
    costs: &[usize],
    hk_cost: impl Fn(usize) -> usize,
    right_fixed: usize,
    right_first_cost: impl Fn(usize) -> usize,
    fill_limit: Option<usize>,
) -> usize {
    let n = costs.len();
    let total: usize = costs.iter().sum();
    let mut best: Option<(usize, usize)> = None;
    let mut fill_best: Option<usize> = None;
    let mut left_items = 0;
    for k in 1..n {
        left_items += costs[k - 1];
        let left = left_items + hk_cost(k);
        let right = right_fixed + right_first_cost(k) + (total - left_items - costs[k]);
        if left > CAPACITY || right > CAPACITY {
            continue;
        }
        if fill_limit.is_some_and(|limit| left <= limit) {
            fill_best = Some(k);
        }
        let diff = left.abs_diff(right);
        if best.is_none_or(|(_, d)| diff < d) {
            best = Some((k, diff));
        }
    }
    fill_best
        .or(best.map(|(k, _)| k))
        .expect("a page of at most three maximum-size items always splits")
}

/// Plans the split of the locked page `pg` (block `left_blk`) into itself
/// and `right_blk` with `item` inserted at `off`.
pub(crate) fn split_images(
    pg: &[u8],
    off: OffsetNumber,
    item: &[u8],
    left_blk: BlockNumber,
    right_blk: BlockNumber,
) -> SplitImages {
    let leaf = bp::is_leaf(pg);
    let level = bp::level(pg);
    let (old_prev, old_next) = (bp::prev(pg), bp::next(pg));
    let old_high_key = (!bp::is_rightmost(pg)).then(|| bp::item(pg, 1));
    let first = bp::first_data(pg);
    let max = bp::max_offset(pg);
    let mut items: Vec<&[u8]> = Vec::with_capacity((max - first + 2) as usize);
    for o in first..=max {
        if o == off {
            items.push(item);
        }
        items.push(bp::item(pg, o));
    }
    if off > max {
        items.push(item);
    }
    let costs: Vec<usize> = items.iter().map(|i| bp::item_cost(i.len())).collect();
    let minus_infinity_cost = bp::item_cost(bp::minus_infinity_pivot(NONE).len());
    let fill_limit = old_next == NONE;
    let k = choose_split(
        &costs,
        // A leaf's high key is the right half's first entry; an internal
        // page's is that pivot's key with no downlink: the same length.
        |k| costs[k],
        old_high_key.map_or(0, |h| bp::item_cost(h.len())),
        |k| if leaf { costs[k] } else { minus_infinity_cost },
        fill_limit.then(|| {
            CAPACITY
                * if leaf {
                    LEAF_FILLFACTOR
                } else {
                    INTERNAL_FILLFACTOR
                }
                / 100
        }),
    );
    let separator = bp::key_of(leaf, items[k]).to_vec();
    let flags = if leaf { LEAF } else { 0 };

    let mut left = empty_image();
    bp::init(&mut left, level, flags, old_prev, right_blk);
    let left_high_key = if leaf {
        items[k].to_vec()
    } else {
        bp::pivot(NONE, &separator)
    };
    bp::fill(&mut left, Some(&left_high_key), items[..k].iter().copied());

    let mut right = empty_image();
    bp::init(&mut right, level, flags, left_blk, old_next);
    if leaf {
        bp::fill(&mut right, old_high_key, items[k..].iter().copied());
    } else {
        let first_downlink = bp::minus_infinity_pivot(bp::child(items[k]));
        let rest = std::iter::once(&first_downlink[..]).chain(items[k + 1..].iter().copied());
        bp::fill(&mut right, old_high_key, rest);
    }
    SplitImages {
        left,
        right,
        separator,
    }
}

/// A new root above `left` and `right` (the old root and its new sibling).
pub(crate) fn root_image(
    level: u32,
    left: BlockNumber,
    right: BlockNumber,
    separator: &[u8],
) -> Box<[u8]> {
    let mut img = empty_image();
    bp::init(&mut img, level, bp::ROOT, NONE, NONE);
    let first = bp::minus_infinity_pivot(left);
    let second = bp::pivot(right, separator);
    bp::fill(&mut img, None, [&first[..], &second[..]]);
    img
}
