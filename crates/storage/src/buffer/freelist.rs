//! Victim bookkeeping (PostgreSQL's BufferStrategyControl): the freelist of
//! buffers ready for reuse, its low/high watermarks, the latch that wakes the
//! background writer, and the clock hand.
//!
//! The freelist holds never-used and invalidated buffers and those the
//! background writer found clean, unpinned and unused. A buffer on it may be
//! used again before it is taken (it keeps its tag); whoever pops it re-checks
//! that it is still unpinned with usage count zero. The ON_FREELIST state bit
//! keeps a buffer from being pushed twice.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use crossbeam_utils::CachePadded;
use parking_lot::{Condvar, Mutex};

use crate::lwlock::{LwLock, LwRwLock, Tranche};

/// Freelist watermarks by pool size (buffers), after seed 001's bands:
/// a few hundred to two thousand free buffers suffice even for large pools;
/// small pools need proportionally fewer so the writer does not evict hot pages.
pub fn watermarks(nbuffers: usize) -> (usize, usize) {
    match nbuffers {
        0..=99 => (2, 8),
        100..=999 => (10, 50),
        1000..=9999 => (50, 200),
        10000..=99999 => (100, 1000),
        _ => (200, 2000),
    }
}

pub(crate) struct StrategyControl {
    /// Under the BufferFreelist LWLock, so its acquisitions and blocks show in
    /// pg_stat_lwlock as seed 001's freelist-lock statistics did.
    list: CachePadded<LwRwLock<Vec<u32>>>,
    /// Length of `list`, readable without its lock.
    len: CachePadded<AtomicUsize>,
    /// Clock hand; `hand / nbuffers` is the number of complete passes.
    pub hand: CachePadded<AtomicU64>,
    pub low: usize,
    pub high: usize,
    /// The background writer's latch: set when the list drops below `low`.
    latch: Mutex<bool>,
    latch_cv: Condvar,
    /// Ablation: take one lock around all of victim selection (freelist and
    /// clock), as PostgreSQL's BufFreelistLock did before 9.5.
    pub global_lock: Option<LwLock>,
}

impl StrategyControl {
    pub fn new(nbuffers: usize, global_lock: bool) -> Self {
        let (low, high) = watermarks(nbuffers);
        StrategyControl {
            list: CachePadded::new(LwRwLock::new(
                Tranche::BufferFreelist,
                (0..nbuffers as u32).rev().collect(),
            )),
            len: CachePadded::new(AtomicUsize::new(nbuffers)),
            hand: CachePadded::new(AtomicU64::new(0)),
            low,
            high,
            latch: Mutex::new(false),
            latch_cv: Condvar::new(),
            global_lock: global_lock.then(|| LwLock::new(Tranche::BufferFreelist)),
        }
    }

    pub fn len(&self) -> usize {
        self.len.load(Ordering::Relaxed)
    }

    /// Pops a candidate; wakes the writer when the list runs low.
    pub fn pop(&self) -> Option<u32> {
        if self.len() == 0 {
            return None;
        }
        let id = {
            let mut l = self.list.write();
            let id = l.pop();
            self.len.store(l.len(), Ordering::Relaxed);
            id
        };
        if self.len() < self.low {
            self.set_latch();
        }
        id
    }

    pub fn push(&self, id: u32) {
        let mut l = self.list.write();
        l.push(id);
        self.len.store(l.len(), Ordering::Relaxed);
    }

    pub fn set_latch(&self) {
        let mut set = self.latch.lock();
        if !*set {
            *set = true;
            self.latch_cv.notify_one();
        }
    }

    /// Waits until the latch is set or `timeout` passes; resets it.
    pub fn wait_latch(&self, timeout: std::time::Duration) {
        let mut set = self.latch.lock();
        if !*set {
            self.latch_cv.wait_for(&mut set, timeout);
        }
        *set = false;
    }
}
