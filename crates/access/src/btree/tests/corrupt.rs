//! `check` finds what is wrong, with amcheck's messages and XX002.

use storage::buffer::ReadMode;
use storage::page;
use storage::ForkNumber;

use super::support::*;
use crate::btree::page as bp;
use crate::btree::{self, IndexDesc};

fn index(e: &Env) -> IndexDesc {
    let desc = int_desc();
    btree::create_empty(e.pool, e.tm.wal(), REL).unwrap();
    let mut it = (0..5000).map(|i| Ok((int(i), tid(i as u64))));
    btree::build(e.pool, e.tm.wal(), REL, &desc, &mut it).unwrap();
    btree::check(e.pool, REL, &desc, true).unwrap();
    desc
}

/// Changes block `blk` in the pool with `f` (as a disk error would).
fn damage(e: &Env, blk: u32, f: impl FnOnce(&mut [u8])) {
    let buf = e
        .pool
        .read_buffer(REL, ForkNumber::Main, blk, ReadMode::Normal, None)
        .unwrap();
    let mut pg = buf.into_write();
    f(&mut pg);
    pg.mark_dirty();
}

fn expect(e: &Env, desc: &IndexDesc, parent: bool, message: &str) {
    let err = btree::check_named(e.pool, REL, desc, parent, "t_a_idx").unwrap_err();
    assert_eq!(err.code, common::SqlState::INDEX_CORRUPTED);
    assert_eq!(err.message, message);
    assert!(err.detail.is_some());
}

/// Swaps the bytes of two equally long items.
fn swap_items(pg: &mut [u8], a: u16, b: u16) {
    let x = page::item(pg, a).unwrap().to_vec();
    let y = page::item(pg, b).unwrap().to_vec();
    page::item_mut(pg, a).unwrap().copy_from_slice(&y);
    page::item_mut(pg, b).unwrap().copy_from_slice(&x);
}

#[test]
fn order_high_key_links_and_downlinks() {
    let e = env(64);
    let desc = index(&e);
    // Block 1 is the first leaf; block 2 its right sibling.
    damage(&e, 1, |pg| swap_items(pg, 3, 4));
    expect(
        &e,
        &desc,
        false,
        "item order invariant violated for index \"t_a_idx\"",
    );
    damage(&e, 1, |pg| swap_items(pg, 3, 4));
    btree::check(e.pool, REL, &desc, true).unwrap();

    // The last entry moved past the high key.
    damage(&e, 1, |pg| {
        let last = bp::max_offset(pg);
        let hk = page::item(pg, 1).unwrap().to_vec();
        let mut bumped = page::item(pg, last).unwrap().to_vec();
        // Its key and tid become the high key's.
        bumped.copy_from_slice(&hk);
        page::item_mut(pg, last).unwrap().copy_from_slice(&bumped);
    });
    expect(
        &e,
        &desc,
        false,
        "high key invariant violated for index \"t_a_idx\"",
    );
    let e = env(64);
    let desc = index(&e);
    damage(&e, 2, |pg| bp::set_prev(pg, 7));
    expect(
        &e,
        &desc,
        false,
        "left link/right link pair in index \"t_a_idx\" not in agreement",
    );

    // A separator in the root that disagrees with its child's high key:
    // only the parent check sees it.
    let e = env(64);
    let desc = index(&e);
    let (root, _) = super::super::search::read_meta(e.pool, REL).unwrap();
    damage(&e, root, |pg| {
        let it = page::item_mut(pg, 3).unwrap();
        let v = i32::from_le_bytes(it[12..16].try_into().unwrap());
        it[12..16].copy_from_slice(&(v + 1).to_le_bytes());
    });
    btree::check(e.pool, REL, &desc, false).unwrap();
    expect(
        &e,
        &desc,
        true,
        "mismatch between parent key and child high key in index \"t_a_idx\"",
    );

    // A downlink that skips a page.
    let e = env(64);
    let desc = index(&e);
    let (root, _) = super::super::search::read_meta(e.pool, REL).unwrap();
    damage(&e, root, |pg| page::delete_items(pg, &[3]));
    let err = btree::check_named(e.pool, REL, &desc, true, "t_a_idx").unwrap_err();
    assert_eq!(err.code, common::SqlState::INDEX_CORRUPTED);
}

#[test]
fn not_a_btree() {
    let e = env(32);
    let desc = int_desc();
    crate::heap::create_storage(e.pool, e.tm.wal(), REL).unwrap();
    let err = btree::check_named(e.pool, REL, &desc, false, "t").unwrap_err();
    assert_eq!(err.code, common::SqlState::INDEX_CORRUPTED);
    assert_eq!(err.message, "index \"t\" is not a btree");
}
