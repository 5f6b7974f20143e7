//! Crash and replay: trees built, split and vacuumed with logging, the
//! pool thrown away, the log replayed into a fresh pool over the same files.

use std::collections::HashSet;
use std::sync::Arc;

use storage::buffer::BufferPool;
use storage::smgr::Smgr;
use txn::TransactionManager;

use super::support::*;
use crate::btree::{self, IndexDesc, ScanRange};
use crate::heap::Tid;

pub(super) fn replay(dir: &std::path::Path, buffers: usize) -> &'static BufferPool {
    let wal2 = wal::Wal::open(
        dir,
        wal::WalSettings::new(
            1 << 20,
            wal::settings::WalReloadable {
                fsync: false,
                ..Default::default()
            },
        ),
    )
    .unwrap();
    let tm2 = TransactionManager::open(dir, wal2).unwrap();
    let pool2 = BufferPool::new(buffers, Arc::new(Smgr::new(dir)));
    let heap_redo = crate::heap::log::HeapRedo { pool: pool2 };
    let btree_redo = btree::log::BtreeRedo { pool: pool2 };
    let mut handlers: Vec<Option<&dyn wal::Redo>> = vec![None; wal::rmgr::COUNT];
    handlers[wal::rmgr::SMGR as usize] = Some(&heap_redo);
    handlers[wal::rmgr::HEAP as usize] = Some(&heap_redo);
    handlers[wal::rmgr::BTREE as usize] = Some(&btree_redo);
    handlers[wal::rmgr::XACT as usize] = Some(&tm2);
    let rep = wal2.startup(dir, &handlers).unwrap();
    assert!(rep.crashed && rep.records > 0);
    pool2
}

/// Builds two indexes (one by inserts with root splits and a VACUUM, one
/// bottom-up), crashes, replays, and compares.
fn crash_and_replay(buffers: usize) {
    let e = env(buffers);
    let text = text_desc();
    let ints = int_desc();
    let rel2 = common::RelFileLocator {
        rel_number: REL.rel_number + 1,
        ..REL
    };
    btree::create_empty(e.pool, e.tm.wal(), REL).unwrap();
    let mut rng = Rng(99);
    for i in 0..3000u64 {
        let k = rng.below(100_000);
        btree::insert(e.pool, &e.tm, REL, &text, &wide(k), tid(i), None).unwrap();
    }
    let doomed: HashSet<Tid> = (0..3000).filter(|i| i % 4 == 1).map(tid).collect();
    btree::bulk_delete(e.pool, &e.tm, REL, &text, &|t| doomed.contains(&t)).unwrap();
    btree::create_empty(e.pool, e.tm.wal(), rel2).unwrap();
    let mut it = (0..50_000).map(|i| Ok((int(i), tid(i as u64))));
    btree::build(e.pool, e.tm.wal(), rel2, &ints, &mut it).unwrap();
    for i in 0..5000u64 {
        let k = ((i * 7919) % 50_000) as i32;
        btree::insert(e.pool, &e.tm, rel2, &ints, &int(k), tid(100_000 + i), None).unwrap();
    }
    e.tm.wal().flush_all().unwrap();
    let before1 = scan_all(e.pool, &text, ScanRange::default());
    let before2 = scan_on(e.pool, rel2, &ints);
    assert_eq!(before1.len(), 3000 - doomed.len());
    assert_eq!(before2.len(), 55_000);

    // The pool's dirty pages are never written: replay from the log alone
    // (with a small pool some were written by evictions, at any LSN).
    let pool2 = replay(e.dir.path(), 4096);
    btree::check(pool2, REL, &text, true).unwrap();
    btree::check(pool2, rel2, &ints, true).unwrap();
    assert_eq!(scan_all(pool2, &text, ScanRange::default()), before1);
    assert_eq!(scan_on(pool2, rel2, &ints), before2);
    // The replayed tree takes more inserts.
    for i in 0..2000u64 {
        btree::insert(
            pool2,
            &e.tm,
            rel2,
            &ints,
            &int(-(i as i32)),
            tid(900_000 + i),
            None,
        )
        .unwrap();
    }
    btree::check(pool2, rel2, &ints, true).unwrap();
}

fn scan_on(
    pool: &'static BufferPool,
    rel: common::RelFileLocator,
    desc: &IndexDesc,
) -> Vec<(Tid, Vec<types::Value>)> {
    let mut scan = btree::IndexScan::new(
        pool,
        rel,
        Arc::new(desc.clone()),
        ScanRange::default(),
        true,
    )
    .unwrap();
    let mut out = Vec::new();
    while let Some((t, k)) = scan.next().unwrap() {
        out.push((t, k.unwrap().to_vec()));
    }
    out
}

#[test]
fn replay_rebuilds_trees_never_written() {
    crash_and_replay(8192);
}

#[test]
fn replay_over_pages_written_by_evictions() {
    crash_and_replay(40);
}

/// After a checkpoint, every page the log changes is restored whole by the
/// first record that touches it (a full-page image, or a record that logs
/// the page whole): pages torn on disk after the checkpoint come back.
#[test]
fn torn_pages_after_a_checkpoint_are_restored() {
    let e = env(4096);
    let text = text_desc();
    let ints = int_desc();
    let rel2 = common::RelFileLocator {
        rel_number: REL.rel_number + 1,
        ..REL
    };
    btree::create_empty(e.pool, e.tm.wal(), REL).unwrap();
    let mut rng = Rng(5);
    for i in 0..2000u64 {
        let k = rng.below(100_000);
        btree::insert(e.pool, &e.tm, REL, &text, &wide(k), tid(i), None).unwrap();
    }
    let wal = e.tm.wal();
    let redo = wal.begin_checkpoint();
    e.pool.flush_all().unwrap();
    e.tm.flush().unwrap();
    wal.finish_checkpoint(e.dir.path(), redo, e.tm.next_xid(), false)
        .unwrap();

    for i in 2000..3500u64 {
        let k = rng.below(100_000);
        btree::insert(e.pool, &e.tm, REL, &text, &wide(k), tid(i), None).unwrap();
    }
    let doomed: HashSet<Tid> = (0..3500).filter(|i| i % 5 == 2).map(tid).collect();
    btree::bulk_delete(e.pool, &e.tm, REL, &text, &|t| doomed.contains(&t)).unwrap();
    btree::create_empty(e.pool, wal, rel2).unwrap();
    let mut it = (0..20_000).map(|i| Ok((int(i), tid(i as u64))));
    btree::build(e.pool, wal, rel2, &ints, &mut it).unwrap();
    wal.flush_all().unwrap();
    e.pool.flush_all().unwrap();
    let before1 = scan_all(e.pool, &text, ScanRange::default());
    let before2 = scan_on(e.pool, rel2, &ints);

    // Tear every page changed since the checkpoint: its first half new,
    // the rest zeroes (its checksum no longer matches).
    let mut torn = 0;
    for rel in [REL, rel2] {
        let smgr = e.pool.smgr();
        for blk in 0..smgr.nblocks(rel, storage::ForkNumber::Main).unwrap() {
            let buf = e
                .pool
                .read_buffer(
                    rel,
                    storage::ForkNumber::Main,
                    blk,
                    storage::buffer::ReadMode::Normal,
                    None,
                )
                .unwrap();
            let mut img = buf.read().to_vec();
            if storage::page::lsn(&img) <= redo {
                continue;
            }
            img[4096..].fill(0);
            smgr.write_block(rel, storage::ForkNumber::Main, blk, &img)
                .unwrap();
            torn += 1;
        }
    }
    assert!(torn > 50, "{torn} pages torn");

    let pool2 = replay(e.dir.path(), 4096);
    btree::check(pool2, REL, &text, true).unwrap();
    btree::check(pool2, rel2, &ints, true).unwrap();
    assert_eq!(scan_all(pool2, &text, ScanRange::default()), before1);
    assert_eq!(scan_on(pool2, rel2, &ints), before2);
}
