//! Background writer (seed 001): keeps clean, unpinned, unused buffers on the
//! freelist between a low and a high watermark, so backends find victims
//! without running the clock sweep or writing dirty pages themselves.
//!
//! A backend that takes the freelist below the low watermark sets the
//! writer's latch. The writer then runs the clock sweep itself (decrementing
//! usage counts as a backend would), writes dirty candidates — at most
//! `bgwriter_lru_maxpages` per round, and no more than recent allocations
//! times `bgwriter_lru_multiplier` predict — and pushes clean ones onto the
//! freelist until it reaches the high watermark. Between
//! rounds it sleeps `bgwriter_delay` or until the latch is set.

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use super::state::*;
use super::BufferPool;

/// The writer's settings (GUCs), changeable while it runs.
pub struct BgWriterSettings {
    pub delay_ms: AtomicU64,
    /// 0 turns the writer off (as in PostgreSQL).
    pub lru_maxpages: AtomicU32,
    /// bgwriter_lru_multiplier × 100.
    pub lru_multiplier_pct: AtomicU32,
}

impl Default for BgWriterSettings {
    fn default() -> Self {
        BgWriterSettings {
            delay_ms: AtomicU64::new(200),
            lru_maxpages: AtomicU32::new(100),
            lru_multiplier_pct: AtomicU32::new(200),
        }
    }
}

/// What one round did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct RoundResult {
    pub freed: usize,
    pub written: usize,
    pub hit_maxpages: bool,
}

impl BufferPool {
    /// One round of the background writer.
    pub fn bgwriter_round(&'static self, recent_allocs: u64) -> RoundResult {
        let mut r = RoundResult::default();
        let maxpages = self.bgwriter.lru_maxpages.load(Ordering::Relaxed) as usize;
        if maxpages == 0 {
            return r;
        }
        let n = self.descs.len();
        let mult = self.bgwriter.lru_multiplier_pct.load(Ordering::Relaxed) as u64;
        // Writes per round: what recent demand predicts (allocations since the
        // last round × multiplier, as PostgreSQL's BgBufferSync estimates),
        // at least enough to refill to the high mark, at most lru_maxpages.
        let demand = (recent_allocs * mult / 100) as usize;
        let maxpages = maxpages.min(demand.max(self.control.high));
        let target = self.control.high;
        let mut scanned = 0;
        while self.control.len() < target && scanned < 2 * n {
            scanned += 1;
            let Some(id) = self.clock_tick(n as u64, false) else {
                continue;
            };
            let desc = &self.descs[id as usize];
            let s = desc.state.load(Ordering::Acquire);
            if s & ON_FREELIST != 0 {
                continue;
            }
            if s & DIRTY != 0 {
                if r.written >= maxpages {
                    r.hit_maxpages = true;
                    self.stats.maxwritten_clean.fetch_add(1, Ordering::Relaxed);
                    break;
                }
                // Pin without counting a use, so the write does not make it hot.
                let (old, new) = update(&desc.state, |s| {
                    (refcount(s) == 0 && usage(s) == 0).then_some(s + 1)
                });
                if old == new {
                    continue;
                }
                let res = self.flush_buffer(id);
                self.unpin(id);
                if res.is_err() {
                    continue; // a backend that needs it will report the error
                }
                r.written += 1;
                self.stats.buffers_clean.fetch_add(1, Ordering::Relaxed);
            }
            let s = desc.state.load(Ordering::Acquire);
            if refcount(s) == 0 && usage(s) == 0 && s & DIRTY == 0 && self.push_free(id) {
                r.freed += 1;
            }
        }
        r
    }

    /// Sets the writer's latch (shutdown, tests).
    pub fn wake_bgwriter(&self) {
        self.control.set_latch();
    }

    /// Starts the background writer thread; it stops when `shutdown` is set.
    pub fn start_bgwriter(&'static self, shutdown: Arc<AtomicBool>) -> std::thread::JoinHandle<()> {
        std::thread::Builder::new()
            .name("bgwriter".into())
            .spawn(move || {
                let mut last_alloc = self.stats.buffers_alloc.load(Ordering::Relaxed);
                // Relaxed: a request flag polled every round; no data rides on it.
                while !shutdown.load(Ordering::Relaxed) {
                    let alloc = self.stats.buffers_alloc.load(Ordering::Relaxed);
                    let r = self.bgwriter_round(alloc.saturating_sub(last_alloc));
                    last_alloc = alloc;
                    let delay = Duration::from_millis(
                        self.bgwriter.delay_ms.load(Ordering::Relaxed).max(1),
                    );
                    if r.hit_maxpages {
                        // Rate-limited: wait the full delay as PostgreSQL does.
                        std::thread::sleep(delay);
                    } else {
                        self.control.wait_latch(delay);
                    }
                }
            })
            .expect("spawn bgwriter")
    }
}
