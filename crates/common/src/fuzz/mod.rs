//! Fuzzing support that runs on stable Rust: a deterministic random source, a
//! byte-level mutator, and a driver that runs a target's `fuzz_one(&[u8])`
//! over generated and mutated inputs for a fixed budget.
//!
//! Each crate keeps its targets next to the code they exercise
//! (`types::fuzz`, `sql::fuzz`, `server::fuzz`); each target's core is a plain
//! `fn fuzz_one(data: &[u8])` that panics on a broken invariant, so a
//! coverage-guided fuzzer (cargo-fuzz, see the top-level README) can call it
//! as it is. The unit tests drive them with [`drive`] for a short fixed-seed
//! run; `SCALEGRES_FUZZ_ITERS`, `SCALEGRES_FUZZ_SECONDS` and
//! `SCALEGRES_FUZZ_SEED` turn the same tests into a long run.

use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// SplitMix64: tiny, fast, and the same sequence on every platform, so a
/// seed printed by a failing run reproduces it anywhere.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    /// Uniform in `0..n` (n > 0; the modulo bias is irrelevant here).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n.max(1) as u64) as usize
    }
    /// True with probability 1/n.
    pub fn one_in(&mut self, n: usize) -> bool {
        self.below(n) == 0
    }
    /// A random element (`items` must not be empty).
    pub fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len())]
    }
    /// A length skewed towards small values (most inputs stay small, some don't).
    pub fn small(&mut self, max: usize) -> usize {
        let bits = self.below(usize::BITS as usize - max.leading_zeros() as usize + 1);
        self.below((1usize << bits).min(max + 1))
    }
}

/// Byte-level mutations in the style of libFuzzer's: flips, inserts,
/// deletions, copies inside the input, splices from other corpus entries and
/// insertions of dictionary tokens.
pub struct Mutator<'a> {
    /// Tokens worth inserting whole (keywords, magic numbers, separators).
    pub dictionary: &'a [&'a [u8]],
    /// Inputs never grow beyond this.
    pub max_len: usize,
}

impl Mutator<'_> {
    /// Applies one to four stacked mutations to `data`.
    pub fn mutate(&self, rng: &mut Rng, data: &mut Vec<u8>, corpus: &[Vec<u8>]) {
        for _ in 0..1 + rng.below(4) {
            self.mutate_once(rng, data, corpus);
        }
        data.truncate(self.max_len);
    }

    fn mutate_once(&self, rng: &mut Rng, data: &mut Vec<u8>, corpus: &[Vec<u8>]) {
        let len = data.len();
        match rng.below(10) {
            0 if len > 0 => {
                let i = rng.below(len);
                data[i] ^= 1 << rng.below(8);
            }
            1 if len > 0 => {
                let i = rng.below(len);
                data[i] = rng.pick(INTERESTING_BYTES);
            }
            2 => {
                let at = rng.below(len + 1);
                data.insert(at, rng.next_u64() as u8);
            }
            3 if len > 0 => {
                let from = rng.below(len);
                let to = (from + 1 + rng.small(16)).min(len);
                data.drain(from..to);
            }
            4 if len > 0 => {
                // Repeat a slice: builds nesting and long lists.
                let from = rng.below(len);
                let to = (from + 1 + rng.small(32)).min(len);
                let piece = data[from..to].to_vec();
                let at = rng.below(len + 1);
                for _ in 0..1 + rng.small(8) {
                    data.splice(at..at, piece.iter().copied());
                }
            }
            5 if !corpus.is_empty() => {
                let other = &corpus[rng.below(corpus.len())];
                if !other.is_empty() {
                    let from = rng.below(other.len());
                    let to = (from + 1 + rng.small(64)).min(other.len());
                    let at = rng.below(len + 1);
                    data.splice(at..at, other[from..to].iter().copied());
                }
            }
            6 if len >= 2 => {
                let a = rng.below(len);
                let b = rng.below(len);
                data.swap(a, b);
            }
            7 if len >= 4 => {
                // Overwrite a 32-bit word: lengths and counts live in these.
                let i = rng.below(len - 3);
                let word = rng.pick(INTERESTING_WORDS);
                data[i..i + 4].copy_from_slice(&word.to_be_bytes());
            }
            _ if !self.dictionary.is_empty() => {
                let token = rng.pick(self.dictionary);
                let at = rng.below(len + 1);
                if rng.one_in(2) || len == 0 {
                    data.splice(at..at, token.iter().copied());
                } else {
                    let end = (at + token.len()).min(len);
                    data.splice(at..end, token.iter().copied());
                }
            }
            _ => data.push(rng.next_u64() as u8),
        }
    }
}

const INTERESTING_BYTES: &[u8] = &[0, 1, 0x7f, 0x80, 0xff, b'\'', b'"', b'(', b')', b';', b'$'];
const INTERESTING_WORDS: &[u32] = &[
    0,
    1,
    4,
    0x7fff_ffff,
    0x8000_0000,
    0xffff_ffff,
    0x0001_0000,
    0x0000_ffff,
];

/// How long a driven target runs, from the environment or the caller's default.
#[derive(Debug, Clone, Copy)]
pub struct Budget {
    pub seed: u64,
    /// Index of the first input (SCALEGRES_FUZZ_FROM): with
    /// SCALEGRES_FUZZ_ITERS=1, replays one input of an earlier run.
    pub first: u64,
    pub iterations: u64,
    /// When set, the run goes on until this much time passed (and at least
    /// `iterations` if SCALEGRES_FUZZ_ITERS was given too).
    pub duration: Option<Duration>,
}

impl Budget {
    /// `default_iterations` unless SCALEGRES_FUZZ_ITERS / SCALEGRES_FUZZ_SECONDS
    /// say otherwise; seed from SCALEGRES_FUZZ_SEED or `default_seed`.
    pub fn from_env(default_seed: u64, default_iterations: u64) -> Budget {
        let var = |name: &str| std::env::var(name).ok().and_then(|v| v.trim().parse().ok());
        let seconds: Option<u64> = var("SCALEGRES_FUZZ_SECONDS");
        let iterations = var("SCALEGRES_FUZZ_ITERS").unwrap_or(if seconds.is_some() {
            0
        } else {
            default_iterations
        });
        Budget {
            seed: var("SCALEGRES_FUZZ_SEED").unwrap_or(default_seed),
            first: var("SCALEGRES_FUZZ_FROM").unwrap_or(0),
            iterations,
            duration: seconds.map(Duration::from_secs),
        }
    }

    fn more(&self, index: u64, started: Instant) -> bool {
        index - self.first < self.iterations || self.duration.is_some_and(|d| started.elapsed() < d)
    }
}

/// What a driven run did, for the test's output.
#[derive(Debug, Clone, Copy)]
pub struct RunStats {
    pub iterations: u64,
    pub elapsed: Duration,
    /// The slowest single input (a hang shows up here first), and its index.
    pub slowest: Duration,
    pub slowest_index: u64,
}

/// One input taking longer than this is a hang: the driver prints it and
/// aborts the test process (a stuck test would otherwise say nothing).
fn hang_limit() -> Duration {
    let secs = std::env::var("SCALEGRES_FUZZ_HANG_SECONDS")
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(20);
    Duration::from_secs(secs)
}

/// The input being run, for the hang watchdog.
type Current = Arc<Mutex<Option<(u64, Vec<u8>, Instant)>>>;

/// Runs `fuzz_one` on inputs from `next_input` until the budget is spent.
/// Each input gets its own RNG seeded from (seed, index), so a failure is
/// reproduced by the printed seed and index alone. A panic is reported with
/// the input (escaped) and then propagated: the test fails. An input that
/// runs past the hang limit is reported and the process aborted.
pub fn drive(
    target: &str,
    budget: Budget,
    mut next_input: impl FnMut(&mut Rng) -> Vec<u8>,
    mut fuzz_one: impl FnMut(&[u8]),
) -> RunStats {
    let started = Instant::now();
    let mut done = budget.first;
    let mut slowest = Duration::ZERO;
    let mut slowest_index = budget.first;
    let current: Current = Arc::default();
    let finished = Arc::new(AtomicBool::new(false));
    let watchdog = spawn_hang_watchdog(target, budget.seed, current.clone(), finished.clone());
    while budget.more(done, started) {
        let mut rng = Rng::new(budget.seed ^ done.wrapping_mul(0xd134_2543_de82_ef95));
        let input = next_input(&mut rng);
        let one = Instant::now();
        *current.lock().unwrap_or_else(|e| e.into_inner()) = Some((done, input.clone(), one));
        if let Err(panic) = catch_unwind(AssertUnwindSafe(|| fuzz_one(&input))) {
            eprintln!(
                "fuzz target {target} failed on input #{done} (SCALEGRES_FUZZ_SEED={}): {} bytes: b\"{}\"",
                budget.seed,
                input.len(),
                input.escape_ascii()
            );
            finished.store(true, Ordering::Relaxed);
            resume_unwind(panic);
        }
        if one.elapsed() > slowest {
            slowest = one.elapsed();
            slowest_index = done;
        }
        done += 1;
    }
    finished.store(true, Ordering::Relaxed);
    let _ = watchdog.join();
    let stats = RunStats {
        iterations: done - budget.first,
        elapsed: started.elapsed(),
        slowest,
        slowest_index,
    };
    eprintln!(
        "fuzz target {target}: {} inputs in {:.1?} (seed {}, slowest input #{}: {:.1?})",
        stats.iterations, stats.elapsed, budget.seed, stats.slowest_index, stats.slowest
    );
    stats
}

fn spawn_hang_watchdog(
    target: &str,
    seed: u64,
    current: Current,
    finished: Arc<AtomicBool>,
) -> std::thread::JoinHandle<()> {
    let target = target.to_string();
    let limit = hang_limit();
    std::thread::spawn(move || {
        while !finished.load(Ordering::Relaxed) {
            std::thread::sleep(Duration::from_millis(100));
            let guard = current.lock().unwrap_or_else(|e| e.into_inner());
            if let Some((index, input, since)) = guard.as_ref() {
                if since.elapsed() > limit && !finished.load(Ordering::Relaxed) {
                    eprintln!(
                        "fuzz target {target} hangs (over {limit:?}) on input #{index} (SCALEGRES_FUZZ_SEED={seed}): {} bytes: b\"{}\"",
                        input.len(),
                        input.escape_ascii()
                    );
                    std::process::abort();
                }
            }
        }
    })
}

/// Runs `f` on a thread with a large stack: generated inputs nest deeper than
/// a test thread's default 2 MiB allows in the dev profile.
pub fn on_big_stack<R: Send + 'static>(f: impl FnOnce() -> R + Send + 'static) -> R {
    match std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(f)
        .expect("spawn fuzz thread")
        .join()
    {
        Ok(r) => r,
        Err(panic) => resume_unwind(panic),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rng_is_deterministic_and_mutations_respect_the_limit() {
        let mut a = Rng::new(7);
        let mut b = Rng::new(7);
        assert_eq!(
            (0..8).map(|_| a.next_u64()).collect::<Vec<_>>(),
            (0..8).map(|_| b.next_u64()).collect::<Vec<_>>()
        );
        let m = Mutator {
            dictionary: &[b"select"],
            max_len: 64,
        };
        let mut data = b"select 1".to_vec();
        for _ in 0..1000 {
            m.mutate(&mut a, &mut data, &[b"abc".to_vec()]);
            assert!(data.len() <= 64);
        }
    }

    #[test]
    fn drive_reports_a_failing_input() {
        let budget = Budget {
            seed: 1,
            first: 0,
            iterations: 100,
            duration: None,
        };
        let r = catch_unwind(|| {
            drive(
                "self-test",
                budget,
                |rng| vec![rng.below(4) as u8],
                |d| assert_ne!(d, [3]),
            )
        });
        assert!(r.is_err());
    }
}
