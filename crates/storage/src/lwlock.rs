//! LWLocks: reader/writer locks on parking_lot's raw lock (an atomic state word
//! with parking), each belonging to a named tranche with per-tranche counters
//! in the spirit of PostgreSQL's LWLOCK_STATS, and wait-event publication so
//! `pg_stat_activity` can show what a session waits on.
//!
//! Counters are sharded per thread (cache-padded) so counting costs one
//! uncontended relaxed add and never becomes a bottleneck of its own.

use std::cell::Cell;
use std::sync::atomic::{AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

use crossbeam_utils::CachePadded;
use lock_api::{RawRwLock as _, RawRwLockDowngrade as _};
use parking_lot::RawRwLock;

/// Lock families (PostgreSQL's tranches).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Tranche {
    BufferMapping = 0,
    BufferContent,
    BufferIO,
    BufferFreelist,
    RelationExtension,
    Catalog,
    ProcArray,
    XactSLRU,
    WALInsert,
    WALWrite,
    LockManager,
}

pub const TRANCHE_COUNT: usize = 11;

impl Tranche {
    pub const ALL: [Tranche; TRANCHE_COUNT] = [
        Tranche::BufferMapping,
        Tranche::BufferContent,
        Tranche::BufferIO,
        Tranche::BufferFreelist,
        Tranche::RelationExtension,
        Tranche::Catalog,
        Tranche::ProcArray,
        Tranche::XactSLRU,
        Tranche::WALInsert,
        Tranche::WALWrite,
        Tranche::LockManager,
    ];
    pub fn name(self) -> &'static str {
        match self {
            Tranche::BufferMapping => "BufferMapping",
            Tranche::BufferContent => "BufferContent",
            Tranche::BufferIO => "BufferIO",
            Tranche::BufferFreelist => "BufferFreelist",
            Tranche::RelationExtension => "RelationExtension",
            Tranche::Catalog => "Catalog",
            Tranche::ProcArray => "ProcArray",
            Tranche::XactSLRU => "XactSLRU",
            Tranche::WALInsert => "WALInsert",
            Tranche::WALWrite => "WALWrite",
            Tranche::LockManager => "LockManager",
        }
    }
}

const STAT_SHARDS: usize = 64;

#[derive(Default)]
struct TrancheCounters {
    shared: AtomicU64,
    exclusive: AtomicU64,
    blocks: AtomicU64,
    spin_delays: AtomicU64,
}

struct LockStats {
    shards: Vec<CachePadded<[TrancheCounters; TRANCHE_COUNT]>>,
}

static STATS: std::sync::LazyLock<LockStats> = std::sync::LazyLock::new(|| LockStats {
    shards: (0..STAT_SHARDS)
        .map(|_| CachePadded::new(Default::default()))
        .collect(),
});

static NEXT_SHARD: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    static SHARD: usize = NEXT_SHARD.fetch_add(1, Ordering::Relaxed) % STAT_SHARDS;
    static WAIT_SLOT: Cell<Option<&'static AtomicU32>> = const { Cell::new(None) };
}

#[inline]
fn counters(t: Tranche) -> &'static TrancheCounters {
    let shard = SHARD.with(|s| *s);
    &STATS.shards[shard][t as usize]
}

/// Totals of one tranche since start or the last reset.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TrancheStats {
    pub shared_acquires: u64,
    pub exclusive_acquires: u64,
    pub blocks: u64,
    pub spin_delays: u64,
}

pub fn tranche_stats(t: Tranche) -> TrancheStats {
    let mut s = TrancheStats::default();
    for shard in &STATS.shards {
        let c = &shard[t as usize];
        s.shared_acquires += c.shared.load(Ordering::Relaxed);
        s.exclusive_acquires += c.exclusive.load(Ordering::Relaxed);
        s.blocks += c.blocks.load(Ordering::Relaxed);
        s.spin_delays += c.spin_delays.load(Ordering::Relaxed);
    }
    s
}

pub fn reset_stats() {
    for shard in &STATS.shards {
        for c in shard.iter() {
            c.shared.store(0, Ordering::Relaxed);
            c.exclusive.store(0, Ordering::Relaxed);
            c.blocks.store(0, Ordering::Relaxed);
            c.spin_delays.store(0, Ordering::Relaxed);
        }
    }
}

/// Counts a spin delay (a failed spin on a buffer header lock and the like).
pub fn count_spin_delay(t: Tranche) {
    counters(t).spin_delays.fetch_add(1, Ordering::Relaxed);
}

/// Wait events: 0 is "not waiting"; LWLock waits are `1 + tranche`.
pub const WAIT_EVENT_NONE: u32 = 0;
pub fn wait_event_for(t: Tranche) -> u32 {
    1 + t as u32
}
/// Name of an LWLock wait event, for pg_stat_activity.
pub fn wait_event_name(ev: u32) -> Option<&'static str> {
    wait_event_info(ev).map(|(_, name)| name)
}

/// Heavyweight-lock waits (wait_event_type `Lock`), by the kind of lock
/// waited for: `LOCK_WAIT_BASE + index` in this list.
pub const LOCK_WAIT_EVENTS: [&str; 5] =
    ["relation", "transactionid", "tuple", "advisory", "object"];
const LOCK_WAIT_BASE: u32 = 0x100;

/// The wait event of a heavyweight-lock wait on a `kind` lock (one of
/// `LOCK_WAIT_EVENTS`; an unknown kind reads as `object`).
pub fn lock_wait_event(kind: &str) -> u32 {
    let i = LOCK_WAIT_EVENTS
        .iter()
        .position(|k| *k == kind)
        .unwrap_or(LOCK_WAIT_EVENTS.len() - 1);
    LOCK_WAIT_BASE + i as u32
}

/// pg_stat_activity's wait_event_type and wait_event of a published event.
pub fn wait_event_info(ev: u32) -> Option<(&'static str, &'static str)> {
    if ev >= LOCK_WAIT_BASE {
        let name = LOCK_WAIT_EVENTS.get((ev - LOCK_WAIT_BASE) as usize)?;
        return Some(("Lock", name));
    }
    Tranche::ALL
        .get((ev as usize).checked_sub(1)?)
        .map(|t| ("LWLock", t.name()))
}

/// Publishes `ev` as this thread's wait until the guard drops (heavyweight
/// lock waits; LWLocks publish their own).
pub fn report_wait(ev: u32) -> WaitGuard {
    let slot = WAIT_SLOT.with(|s| s.get());
    if let Some(slot) = slot {
        slot.store(ev, Ordering::Relaxed);
    }
    WaitGuard(slot)
}

/// Makes this thread publish its waits into `slot` (its backend's status entry).
/// The slot must live as long as the thread uses locks, hence `'static`
/// (backend status slots are allocated once for the server's life).
pub fn set_wait_event_slot(slot: Option<&'static AtomicU32>) {
    WAIT_SLOT.with(|s| s.set(slot));
}

/// Clears the published wait event when dropped.
pub struct WaitGuard(Option<&'static AtomicU32>);
impl WaitGuard {
    fn start(t: Tranche) -> Self {
        let slot = WAIT_SLOT.with(|s| s.get());
        if let Some(slot) = slot {
            slot.store(wait_event_for(t), Ordering::Relaxed);
        }
        WaitGuard(slot)
    }
}
impl Drop for WaitGuard {
    fn drop(&mut self) {
        if let Some(slot) = self.0 {
            slot.store(WAIT_EVENT_NONE, Ordering::Relaxed);
        }
    }
}

/// A reader/writer lock with no data of its own (like PostgreSQL's LWLock);
/// callers pair it with the data it protects.
pub struct LwLock {
    raw: RawRwLock,
    tranche: Tranche,
}

impl LwLock {
    pub const fn new(tranche: Tranche) -> Self {
        LwLock {
            raw: RawRwLock::INIT,
            tranche,
        }
    }

    pub fn tranche(&self) -> Tranche {
        self.tranche
    }

    pub fn shared(&self) -> SharedGuard<'_> {
        let c = counters(self.tranche);
        c.shared.fetch_add(1, Ordering::Relaxed);
        if !self.raw.try_lock_shared() {
            c.blocks.fetch_add(1, Ordering::Relaxed);
            let _w = WaitGuard::start(self.tranche);
            self.raw.lock_shared();
        }
        SharedGuard { lock: self }
    }

    pub fn exclusive(&self) -> ExclusiveGuard<'_> {
        let c = counters(self.tranche);
        c.exclusive.fetch_add(1, Ordering::Relaxed);
        if !self.raw.try_lock_exclusive() {
            c.blocks.fetch_add(1, Ordering::Relaxed);
            let _w = WaitGuard::start(self.tranche);
            self.raw.lock_exclusive();
        }
        ExclusiveGuard { lock: self }
    }

    pub fn try_exclusive(&self) -> Option<ExclusiveGuard<'_>> {
        self.raw.try_lock_exclusive().then(|| {
            counters(self.tranche)
                .exclusive
                .fetch_add(1, Ordering::Relaxed);
            ExclusiveGuard { lock: self }
        })
    }

    /// Whether some thread holds the lock exclusively (for debug assertions).
    pub fn is_locked_exclusive(&self) -> bool {
        self.raw.is_locked_exclusive()
    }
}

pub struct SharedGuard<'a> {
    lock: &'a LwLock,
}
impl Drop for SharedGuard<'_> {
    fn drop(&mut self) {
        // SAFETY: this guard was created by a successful shared acquisition.
        unsafe { self.lock.raw.unlock_shared() }
    }
}
impl SharedGuard<'_> {
    pub fn lock(&self) -> &LwLock {
        self.lock
    }
}

pub struct ExclusiveGuard<'a> {
    lock: &'a LwLock,
}
impl Drop for ExclusiveGuard<'_> {
    fn drop(&mut self) {
        // SAFETY: this guard was created by a successful exclusive acquisition.
        unsafe { self.lock.raw.unlock_exclusive() }
    }
}
impl<'a> ExclusiveGuard<'a> {
    pub fn lock(&self) -> &LwLock {
        self.lock
    }
    pub fn downgrade(self) -> SharedGuard<'a> {
        let lock = self.lock;
        std::mem::forget(self);
        // SAFETY: we held the lock exclusively and give up that guard.
        unsafe { lock.raw.downgrade() };
        SharedGuard { lock }
    }
}

/// A data-carrying LWLock for structures (mapping partitions, caches).
pub struct LwRwLock<T> {
    lock: LwLock,
    data: std::cell::UnsafeCell<T>,
}

// SAFETY: access to `data` is only through guards that hold `lock` appropriately.
unsafe impl<T: Send> Send for LwRwLock<T> {}
unsafe impl<T: Send + Sync> Sync for LwRwLock<T> {}

impl<T> LwRwLock<T> {
    pub fn new(tranche: Tranche, data: T) -> Self {
        LwRwLock {
            lock: LwLock::new(tranche),
            data: std::cell::UnsafeCell::new(data),
        }
    }
    pub fn read(&self) -> LwReadGuard<'_, T> {
        LwReadGuard {
            _g: self.lock.shared(),
            data: unsafe { &*self.data.get() },
        }
    }
    pub fn write(&self) -> LwWriteGuard<'_, T> {
        let g = self.lock.exclusive();
        LwWriteGuard {
            _g: g,
            data: unsafe { &mut *self.data.get() },
        }
    }
}

pub struct LwReadGuard<'a, T> {
    _g: SharedGuard<'a>,
    data: &'a T,
}
impl<T> std::ops::Deref for LwReadGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        self.data
    }
}
pub struct LwWriteGuard<'a, T> {
    _g: ExclusiveGuard<'a>,
    data: &'a mut T,
}
impl<T> std::ops::Deref for LwWriteGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        self.data
    }
}
impl<T> std::ops::DerefMut for LwWriteGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        self.data
    }
}

/// Keeps an `Arc` alive for a `'static` wait slot (see `set_wait_event_slot`).
pub fn leak_wait_slot(slot: Arc<AtomicU32>) -> &'static AtomicU32 {
    let p: &'static Arc<AtomicU32> = Box::leak(Box::new(slot));
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_acquisitions_and_blocks() {
        static L: LwLock = LwLock::new(Tranche::LockManager);
        let before = tranche_stats(Tranche::LockManager);
        {
            let _a = L.shared();
            let _b = L.shared();
        }
        let g = L.exclusive();
        let t = std::thread::spawn(|| {
            let _s = L.shared();
        });
        std::thread::sleep(std::time::Duration::from_millis(50));
        drop(g);
        t.join().unwrap();
        let after = tranche_stats(Tranche::LockManager);
        assert!(after.shared_acquires >= before.shared_acquires + 3);
        assert!(after.exclusive_acquires > before.exclusive_acquires);
        assert!(after.blocks > before.blocks);
    }
}
