use std::sync::Arc;

use super::*;

fn pool(nbuffers: usize) -> (&'static BufferPool, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let smgr = Arc::new(Smgr::new(dir.path()));
    (BufferPool::new(nbuffers, smgr), dir)
}

const REL: RelFileLocator = RelFileLocator {
    spc_oid: common::ids::DEFAULT_TABLESPACE_OID,
    db_oid: 5,
    rel_number: 16384,
};

fn write_block(pool: &'static BufferPool, block: u32, value: u64) {
    let buf = pool
        .read_buffer(REL, ForkNumber::Main, block, ReadMode::Normal, None)
        .unwrap();
    let mut page = buf.write();
    if page::is_new(&page) {
        page::init(&mut page, 0);
    }
    page[100..108].copy_from_slice(&(block as u64).to_le_bytes());
    page[108..116].copy_from_slice(&value.to_le_bytes());
    page.mark_dirty();
}

fn read_block(pool: &'static BufferPool, block: u32) -> (u64, u64) {
    let buf = pool
        .read_buffer(REL, ForkNumber::Main, block, ReadMode::Normal, None)
        .unwrap();
    assert_eq!(buf.block(), block, "buffer under the wrong tag");
    let page = buf.read();
    (
        u64::from_le_bytes(page[100..108].try_into().unwrap()),
        u64::from_le_bytes(page[108..116].try_into().unwrap()),
    )
}

#[test]
fn pages_survive_eviction() {
    let (pool, _dir) = pool(16);
    pool.smgr().create(REL, ForkNumber::Main).unwrap();
    for b in 0..200 {
        write_block(pool, b, b as u64 * 10);
    }
    for b in 0..200 {
        assert_eq!(read_block(pool, b), (b as u64, b as u64 * 10));
    }
    assert!(pool.stats.buffers_backend.load(Ordering::Relaxed) > 0);
}

#[test]
fn checksum_failure_is_an_error() {
    let (pool, dir) = pool(16);
    pool.smgr().create(REL, ForkNumber::Main).unwrap();
    write_block(pool, 0, 1);
    pool.flush_all().unwrap();
    pool.drop_relation_buffers(REL);
    let path = dir.path().join(Smgr::relative_path(REL, ForkNumber::Main));
    let mut bytes = std::fs::read(&path).unwrap();
    bytes[4000] ^= 0xff;
    std::fs::write(&path, bytes).unwrap();
    let err = pool
        .read_buffer(REL, ForkNumber::Main, 0, ReadMode::Normal, None)
        .err()
        .expect("corruption must be detected");
    assert!(matches!(err, StorageError::Corrupt { block: 0, .. }));
}

/// Many threads read-modify-write counters on more pages than buffers; the
/// final counts must match a model exactly (no lost write, no torn page, no
/// page under the wrong tag).
#[test]
fn concurrent_increments_match_model() {
    let (pool, _dir) = pool(24);
    pool.smgr().create(REL, ForkNumber::Main).unwrap();
    const BLOCKS: u32 = 64;
    for b in 0..BLOCKS {
        write_block(pool, b, 0);
    }
    let threads = 8;
    let per_thread = 10_000u64;
    let handles: Vec<_> = (0..threads)
        .map(|t| {
            std::thread::spawn(move || {
                let mut counts = vec![0u64; BLOCKS as usize];
                let mut x = 12345u64 + t;
                for _ in 0..per_thread {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    let b = (x % BLOCKS as u64) as u32;
                    let buf = pool
                        .read_buffer(REL, ForkNumber::Main, b, ReadMode::Normal, None)
                        .unwrap();
                    assert_eq!(buf.block(), b);
                    let mut page = buf.write();
                    assert_eq!(
                        u64::from_le_bytes(page[100..108].try_into().unwrap()),
                        b as u64
                    );
                    let v = u64::from_le_bytes(page[108..116].try_into().unwrap());
                    page[108..116].copy_from_slice(&(v + 1).to_le_bytes());
                    page.mark_dirty();
                    counts[b as usize] += 1;
                }
                counts
            })
        })
        .collect();
    let mut model = vec![0u64; BLOCKS as usize];
    for h in handles {
        for (m, c) in model.iter_mut().zip(h.join().unwrap()) {
            *m += c;
        }
    }
    for b in 0..BLOCKS {
        assert_eq!(
            read_block(pool, b),
            (b as u64, model[b as usize]),
            "block {b}"
        );
    }
    for info in pool.buffer_infos() {
        assert_eq!(info.pin_count, 0, "leaked pin on buffer {}", info.buffer_id);
    }
}

#[test]
fn ring_keeps_hot_pages_resident() {
    let (pool, _dir) = pool(64);
    pool.smgr().create(REL, ForkNumber::Main).unwrap();
    for b in 0..400 {
        write_block(pool, b, 1);
    }
    pool.flush_all().unwrap();
    for b in 0..8 {
        read_block(pool, b);
        read_block(pool, b);
    }
    let mut ring = BufferStrategy::new(StrategyKind::BulkRead, pool.nbuffers());
    for _ in 0..2 {
        for b in 8..400 {
            let _ = pool
                .read_buffer(REL, ForkNumber::Main, b, ReadMode::Normal, Some(&mut ring))
                .unwrap();
        }
    }
    let resident = pool
        .buffer_infos()
        .iter()
        .filter(|i| i.tag.is_some_and(|t| t.block < 8))
        .count();
    assert_eq!(resident, 8);
}

/// The writer's rounds (run here in step with the workload, as its latch
/// would wake it) keep backends from writing dirty victims themselves.
#[test]
fn bgwriter_keeps_backends_from_writing() {
    let (pool, _dir) = pool(128);
    pool.smgr().create(REL, ForkNumber::Main).unwrap();
    pool.bgwriter.lru_maxpages.store(1000, Ordering::Relaxed);
    for b in 0..512 {
        write_block(pool, b, 1);
        if b % 8 == 0 && pool.freelist_len() < pool.freelist_watermarks().0 {
            pool.bgwriter_round(8);
        }
    }
    let alloc0 = pool.stats.buffers_alloc.load(Ordering::Relaxed);
    let backend0 = pool.stats.buffers_backend.load(Ordering::Relaxed);
    for _ in 0..4 {
        for b in 0..512 {
            if pool.freelist_len() < pool.freelist_watermarks().0 {
                pool.bgwriter_round(8);
            }
            write_block(pool, b, 2);
        }
    }
    let alloc = pool.stats.buffers_alloc.load(Ordering::Relaxed) - alloc0;
    let backend = pool.stats.buffers_backend.load(Ordering::Relaxed) - backend0;
    assert!(alloc > 1000, "workload must evict (alloc {alloc})");
    assert!(
        backend * 20 < alloc,
        "backends wrote {backend} of {alloc} allocations"
    );
    assert!(pool.stats.buffers_clean.load(Ordering::Relaxed) > 0);
}

#[test]
fn bgwriter_thread_answers_its_latch() {
    let (pool, _dir) = pool(128);
    pool.smgr().create(REL, ForkNumber::Main).unwrap();
    pool.bgwriter.delay_ms.store(10_000, Ordering::Relaxed);
    pool.bgwriter.lru_maxpages.store(1000, Ordering::Relaxed);
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let writer = pool.start_bgwriter(stop.clone());
    for b in 0..300 {
        write_block(pool, b, 1);
    }
    // Taking the freelist below its low mark set the latch: the writer must
    // refill it long before its 10 s delay.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    let cleaned = || pool.stats.buffers_clean.load(Ordering::Relaxed) > 0;
    while !cleaned() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    assert!(cleaned(), "the writer did not wake on its latch");
    stop.store(true, Ordering::Relaxed);
    pool.control.set_latch();
    writer.join().unwrap();
}

#[test]
fn ablation_options_still_correct() {
    for lock_free_lookup in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let smgr = Arc::new(Smgr::new(dir.path()));
        let opts = PoolOptions {
            nbuffers: 32,
            mapping_partitions: 1,
            global_victim_lock: true,
            lock_free_lookup,
        };
        let pool = BufferPool::with_options(opts, smgr);
        pool.smgr().create(REL, ForkNumber::Main).unwrap();
        for b in 0..100 {
            write_block(pool, b, b as u64 + 7);
        }
        for b in 0..100 {
            assert_eq!(read_block(pool, b), (b as u64, b as u64 + 7));
        }
    }
}

#[test]
fn vectored_reads_match_single_reads() {
    let (pool, _dir) = pool(64);
    pool.smgr().create(REL, ForkNumber::Main).unwrap();
    for b in 0..40 {
        write_block(pool, b, b as u64 * 3);
    }
    pool.flush_all().unwrap();
    // Some blocks resident, most not: the batch mixes hits and a few runs.
    pool.drop_relation_buffers(REL);
    read_block(pool, 5);
    read_block(pool, 17);
    let bufs = pool
        .read_buffers(REL, ForkNumber::Main, 0, 40, None)
        .unwrap();
    for (i, b) in bufs.iter().enumerate() {
        assert_eq!(b.block(), i as u32);
        let page = b.read();
        assert_eq!(
            u64::from_le_bytes(page[108..116].try_into().unwrap()),
            i as u64 * 3
        );
    }
    drop(bufs);
    // Past the end of the file: zero pages, not errors.
    let bufs = pool
        .read_buffers(REL, ForkNumber::Main, 40, 4, None)
        .unwrap();
    assert!(bufs.iter().all(|b| page::is_new(&b.read())));
}
