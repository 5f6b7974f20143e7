//! ANALYZE's row sample (PostgreSQL's acquire_sample_rows): a random choice
//! of min(nblocks, targrows) blocks (Knuth's Algorithm S), and over the
//! tuples of those blocks visible to the snapshot a reservoir of `targrows`
//! rows (Vitter's Algorithm R). The table's row count is extrapolated from
//! the live rows per scanned block. A table of at most `targrows` blocks and
//! rows is sampled whole, so its statistics are deterministic.

use common::{BlockNumber, PgResult, RelFileLocator};
use storage::buffer::{BufferPool, BufferStrategy, ReadMode, StrategyKind};
use storage::page;
use storage::ForkNumber;
use txn::{Snapshot, TransactionManager};

use super::Tid;
use crate::tuple;

/// What acquire_sample_rows returns.
pub struct Sample<T> {
    /// The sampled rows in physical (TID) order.
    pub rows: Vec<T>,
    /// Estimated live rows of the whole table.
    pub total_rows: f64,
    /// The main fork's blocks when the sample was taken.
    pub total_blocks: BlockNumber,
}

/// A small deterministic generator (SplitMix64): sampling needs no more.
pub struct SampleRng(u64);

impl SampleRng {
    pub fn new(seed: u64) -> Self {
        SampleRng(seed)
    }
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in [0, 1).
    fn fract(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
    /// Uniform in [0, n).
    fn below(&mut self, n: u64) -> u64 {
        ((self.fract() * n as f64) as u64).min(n - 1)
    }
}

/// The blocks to read: `n` of `nblocks` in ascending order, each subset
/// equally likely (Algorithm S).
fn choose_blocks(nblocks: BlockNumber, n: usize, rng: &mut SampleRng) -> Vec<BlockNumber> {
    let mut out = Vec::with_capacity(n.min(nblocks as usize));
    for b in 0..nblocks {
        let needed = n - out.len();
        if needed == 0 {
            break;
        }
        let remaining = (nblocks - b) as usize;
        if remaining <= needed || rng.fract() * (remaining as f64) < needed as f64 {
            out.push(b);
        }
    }
    out
}

/// How many rows to sample, and the random source choosing them.
pub struct SampleSize {
    pub targrows: usize,
    pub rng: SampleRng,
}

/// Samples up to `size.targrows` rows of `rel` visible to `snapshot`;
/// `check` runs before each block (cancellation); `decode` turns a tuple's
/// bytes into a row under the page's share lock.
pub fn acquire_sample_rows<T>(
    pool: &'static BufferPool,
    rel: RelFileLocator,
    snapshot: &Snapshot,
    tm: &TransactionManager,
    size: &mut SampleSize,
    mut check: impl FnMut() -> PgResult<()>,
    mut decode: impl FnMut(&[u8]) -> PgResult<T>,
) -> PgResult<Sample<T>> {
    let targrows = size.targrows;
    let rng = &mut size.rng;
    let nblocks = pool.smgr().nblocks(rel, ForkNumber::Main)?;
    let blocks = choose_blocks(nblocks, targrows, rng);
    let mut strategy = BufferStrategy::new(StrategyKind::BulkRead, pool.nbuffers());
    let mut sample: Vec<(Tid, T)> = Vec::with_capacity(targrows.min(1 << 16));
    let mut live = 0u64;
    for &block in &blocks {
        check()?;
        let buf = pool.read_buffer(
            rel,
            ForkNumber::Main,
            block,
            ReadMode::Normal,
            Some(&mut strategy),
        )?;
        let pg = buf.read();
        for off in 1..=page::item_count(&pg) {
            let Some(t) = page::item(&pg, off) else {
                continue;
            };
            if !snapshot.tuple_visible(
                tuple::xmin(t),
                tuple::cmin(t),
                tuple::deleting_xmax(t),
                tuple::cmax(t),
                tm,
            ) {
                continue;
            }
            live += 1;
            let tid = Tid { block, offset: off };
            if sample.len() < targrows {
                sample.push((tid, decode(t)?));
            } else {
                // Row number `live` replaces a reservoir slot with
                // probability targrows / live.
                let k = rng.below(live) as usize;
                if k < targrows {
                    sample[k] = (tid, decode(t)?);
                }
            }
        }
    }
    sample.sort_by_key(|(tid, _)| *tid);
    let total_rows = if blocks.is_empty() {
        0.0
    } else {
        (live as f64 / blocks.len() as f64 * nblocks as f64 + 0.5).floor()
    };
    Ok(Sample {
        rows: sample.into_iter().map(|(_, r)| r).collect(),
        total_rows,
        total_blocks: nblocks,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_choice_is_ordered_and_complete_when_small() {
        let mut rng = SampleRng::new(7);
        assert_eq!(choose_blocks(5, 10, &mut rng), vec![0, 1, 2, 3, 4]);
        let b = choose_blocks(1000, 30, &mut rng);
        assert_eq!(b.len(), 30);
        assert!(b.windows(2).all(|w| w[0] < w[1]));
        // Not just the first blocks.
        assert!(*b.last().unwrap() > 100);
    }

    #[test]
    fn rng_is_uniform_enough() {
        let mut rng = SampleRng::new(1);
        let n = 100_000;
        let mean = (0..n).map(|_| rng.fract()).sum::<f64>() / n as f64;
        assert!((mean - 0.5).abs() < 0.01, "{mean}");
        assert!((0..1000).all(|_| rng.below(3) < 3));
    }
}
