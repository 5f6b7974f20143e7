//! The block allocator a Parallel Seq Scan's participants share
//! (PostgreSQL 14's `table_block_parallelscan_nextpage`): blocks are handed
//! out in chunks from one atomic counter, so each participant reads runs of
//! consecutive blocks (read combining and the kernel's read-ahead keep
//! working), and the chunks shrink as the table's end nears so no
//! participant is left with a long run while the others are done.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use common::BlockNumber;

/// Chunks a table is divided into at first (PostgreSQL's
/// PARALLEL_SEQSCAN_NCHUNKS).
const CHUNKS: u64 = 2048;
/// Near the end the chunks halve, from this many chunks before it
/// (PARALLEL_SEQSCAN_RAMPDOWN_CHUNKS).
const RAMPDOWN_CHUNKS: u64 = 64;
/// The largest chunk (PARALLEL_SEQSCAN_MAX_CHUNK_SIZE), 64 MB of blocks.
const MAX_CHUNK: u64 = 8192;

/// Shared by every participant of one scan.
#[derive(Debug)]
pub struct ParallelBlocks {
    nblocks: BlockNumber,
    /// Blocks handed out so far (may pass `nblocks`).
    allocated: AtomicU64,
    /// Set when the query stops early (LIMIT, error, cancel): no more
    /// chunks are handed out.
    stopped: AtomicBool,
}

impl ParallelBlocks {
    /// A scan of the table's first `nblocks` blocks: its size when the
    /// leader set the scan up, so every participant sees the same range.
    pub fn new(nblocks: BlockNumber) -> Self {
        ParallelBlocks {
            nblocks,
            allocated: AtomicU64::new(0),
            stopped: AtomicBool::new(false),
        }
    }

    pub fn nblocks(&self) -> BlockNumber {
        self.nblocks
    }

    /// Hands out no more chunks (participants finish the one they hold).
    pub fn stop(&self) {
        // Relaxed: a participant taking one more chunk before it sees the
        // flag only reads a little more.
        self.stopped.store(true, Ordering::Relaxed);
    }

    /// The size a participant starts with: a power of two near a 2048th of
    /// the table, at most 8192 blocks.
    pub fn initial_chunk(&self) -> u64 {
        (self.nblocks as u64 / CHUNKS)
            .max(1)
            .next_power_of_two()
            .min(MAX_CHUNK)
    }

    /// The next range of blocks for a participant whose chunk size is
    /// `chunk` (halved here as the end nears), or None when the table is
    /// handed out.
    pub fn next_range(&self, chunk: &mut u64) -> Option<(BlockNumber, BlockNumber)> {
        if self.stopped.load(Ordering::Relaxed) {
            return None;
        }
        let total = self.nblocks as u64;
        // Relaxed: the counter only divides the blocks; the pages
        // themselves are read under their buffer locks.
        let seen = self.allocated.load(Ordering::Relaxed);
        if *chunk > 1 && total.saturating_sub(seen) <= *chunk * RAMPDOWN_CHUNKS {
            *chunk /= 2;
        }
        let start = self.allocated.fetch_add(*chunk, Ordering::Relaxed);
        if start >= total {
            return None;
        }
        let end = (start + *chunk).min(total);
        Some((start as BlockNumber, end as BlockNumber))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;
    use std::sync::Arc;

    #[test]
    fn every_block_is_handed_out_once_across_threads() {
        let blocks = Arc::new(ParallelBlocks::new(100_003));
        let handles: Vec<_> = (0..4)
            .map(|_| {
                let b = blocks.clone();
                std::thread::spawn(move || {
                    let mut chunk = b.initial_chunk();
                    let mut got = Vec::new();
                    while let Some((s, e)) = b.next_range(&mut chunk) {
                        got.extend(s..e);
                    }
                    got
                })
            })
            .collect();
        let mut seen = HashSet::new();
        for h in handles {
            for b in h.join().unwrap() {
                assert!(seen.insert(b), "block {b} handed out twice");
            }
        }
        assert_eq!(seen.len(), 100_003);
    }

    #[test]
    fn chunks_shrink_near_the_end() {
        let blocks = ParallelBlocks::new(1_000_000);
        let mut chunk = blocks.initial_chunk();
        assert_eq!(chunk, 512);
        let mut last = 0;
        while let Some((s, e)) = blocks.next_range(&mut chunk) {
            last = e - s;
        }
        assert_eq!(last, 1, "the last chunks are single blocks");
    }

    #[test]
    fn stop_ends_the_scan() {
        let blocks = ParallelBlocks::new(10_000);
        let mut chunk = blocks.initial_chunk();
        assert!(blocks.next_range(&mut chunk).is_some());
        blocks.stop();
        assert!(blocks.next_range(&mut chunk).is_none());
    }
}
