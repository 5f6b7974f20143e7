//! The buffer mapping table (tag -> buffer id), split into partitions, each
//! an open-addressing table under its own LWLock (BufferMapping tranche).
//!
//! Rules:
//! 1. A partition's slots change only under its LWLock held exclusively
//!    (`insert`, `remove` take the guard). Locked lookups take it shared.
//! 2. `lookup_optimistic` reads the slots with no lock at all (seed 002's
//!    "next bottleneck": the partition lock word every hit writes). It may see
//!    a slot half-written or a key in the middle of a backward shift, so what it
//!    returns is only a hint: the caller pins that buffer and accepts it only if
//!    the descriptor's tag, stable once pinned, is the one it looked for; a
//!    miss means "ask under the lock", never "not there".
//! 3. Slot words are written Release and read Acquire; a torn read can only
//!    produce a false hint or a false miss, both caught by rule 2.
//! 4. A partition whose table is full spills into an overflow map that only
//!    locked lookups see (never expected: tables are sized 8× the average).

use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicU64, Ordering};

use common::RelFileLocator;
use crossbeam_utils::CachePadded;
use rustc_hash::FxHashMap;

use super::BufferTag;
use crate::lwlock::{ExclusiveGuard, LwLock, SharedGuard, Tranche};
use crate::ForkNumber;

struct Slot {
    /// spc_oid << 32 | db_oid
    a: AtomicU64,
    /// rel_number << 32 | block
    b: AtomicU64,
    /// fork << 32 | (buffer id + 1); 0 = empty
    c: AtomicU64,
}

fn words(tag: &BufferTag) -> (u64, u64, u64) {
    (
        (tag.rel.spc_oid as u64) << 32 | tag.rel.db_oid as u64,
        (tag.rel.rel_number as u64) << 32 | tag.block as u64,
        (tag.fork as u64) << 32,
    )
}

fn tag_of(a: u64, b: u64, c: u64) -> BufferTag {
    BufferTag {
        rel: RelFileLocator {
            spc_oid: (a >> 32) as u32,
            db_oid: a as u32,
            rel_number: (b >> 32) as u32,
        },
        fork: match c >> 32 {
            0 => ForkNumber::Main,
            1 => ForkNumber::Fsm,
            _ => ForkNumber::VisibilityMap,
        },
        block: b as u32,
    }
}

pub(crate) struct MappingPartition {
    lock: LwLock,
    slots: Box<[Slot]>,
    mask: usize,
    /// Entries beyond a full table (rule 4); only under `lock`.
    overflow: UnsafeCell<FxHashMap<BufferTag, u32>>,
}

// SAFETY: `overflow` is only touched with `lock` held (shared to read,
// exclusive to change); the slots are atomics.
unsafe impl Sync for MappingPartition {}
unsafe impl Send for MappingPartition {}

/// Slot index of a tag's home position (bits the partition choice does not use).
#[inline]
fn home(hash: u64, mask: usize) -> usize {
    (hash >> 32) as usize & mask
}

impl MappingPartition {
    pub fn new(capacity: usize) -> CachePadded<Self> {
        let cap = capacity.next_power_of_two().max(16);
        CachePadded::new(MappingPartition {
            lock: LwLock::new(Tranche::BufferMapping),
            slots: (0..cap)
                .map(|_| Slot {
                    a: AtomicU64::new(0),
                    b: AtomicU64::new(0),
                    c: AtomicU64::new(0),
                })
                .collect(),
            mask: cap - 1,
            overflow: UnsafeCell::new(FxHashMap::default()),
        })
    }

    pub fn shared(&self) -> SharedGuard<'_> {
        self.lock.shared()
    }

    pub fn exclusive(&self) -> ExclusiveGuard<'_> {
        self.lock.exclusive()
    }

    /// Probes for `tag`; returns its slot and the slot's value word.
    #[inline]
    fn probe(&self, tag: &BufferTag, hash: u64, order: Ordering) -> Option<(usize, u64)> {
        let (a, b, c) = words(tag);
        let mut i = home(hash, self.mask);
        for _ in 0..=self.mask {
            let s = &self.slots[i];
            let sc = s.c.load(order);
            if sc == 0 {
                return None;
            }
            if sc & !0xFFFF_FFFF == c && s.a.load(order) == a && s.b.load(order) == b {
                return Some((i, sc));
            }
            i = (i + 1) & self.mask;
        }
        None
    }

    /// A lock-free hint (rule 2): the buffer that held `tag`, if a probe saw it.
    #[inline]
    pub fn lookup_optimistic(&self, tag: &BufferTag, hash: u64) -> Option<u32> {
        // Acquire pairs with the Release stores in `put` (rule 3).
        self.probe(tag, hash, Ordering::Acquire)
            .map(|(_, sc)| (sc as u32).wrapping_sub(1))
    }

    fn find(&self, tag: &BufferTag, hash: u64) -> Option<usize> {
        self.probe(tag, hash, Ordering::Relaxed).map(|(i, _)| i)
    }

    /// Lookup with the partition lock held (either mode).
    pub fn lookup(&self, _held: &dyn HeldLock, tag: &BufferTag, hash: u64) -> Option<u32> {
        match self.find(tag, hash) {
            Some(i) => Some((self.slots[i].c.load(Ordering::Relaxed) as u32).wrapping_sub(1)),
            // SAFETY: the lock is held (rule 1 / rule 4).
            None => unsafe { (*self.overflow.get()).get(tag).copied() },
        }
    }

    fn put(&self, i: usize, a: u64, b: u64, c: u64) {
        let s = &self.slots[i];
        // Release pairs with the Acquire loads in `lookup_optimistic`.
        s.c.store(0, Ordering::Release);
        s.a.store(a, Ordering::Release);
        s.b.store(b, Ordering::Release);
        s.c.store(c, Ordering::Release);
    }

    /// Maps `tag` to `id`; the caller checked it is not mapped.
    pub fn insert(&self, _held: &ExclusiveGuard<'_>, tag: &BufferTag, hash: u64, id: u32) {
        let (a, b, c) = words(tag);
        let mut i = home(hash, self.mask);
        for _ in 0..=self.mask {
            if self.slots[i].c.load(Ordering::Relaxed) == 0 {
                self.put(i, a, b, c | (id as u64 + 1));
                return;
            }
            i = (i + 1) & self.mask;
        }
        // SAFETY: exclusive lock held.
        unsafe { (*self.overflow.get()).insert(*tag, id) };
    }

    /// Unmaps `tag` if it maps to `id`; returns whether it did.
    pub fn remove(&self, _held: &ExclusiveGuard<'_>, tag: &BufferTag, hash: u64, id: u32) -> bool {
        let Some(mut i) = self.find(tag, hash) else {
            // SAFETY: exclusive lock held.
            let over = unsafe { &mut *self.overflow.get() };
            if over.get(tag) == Some(&id) {
                over.remove(tag);
                return true;
            }
            return false;
        };
        if (self.slots[i].c.load(Ordering::Relaxed) as u32).wrapping_sub(1) != id {
            return false;
        }
        // Backward-shift deletion keeps every probe chain free of holes.
        let mut j = i;
        for _ in 0..self.mask {
            j = (j + 1) & self.mask;
            let s = &self.slots[j];
            let sc = s.c.load(Ordering::Relaxed);
            if sc == 0 {
                break;
            }
            let (sa, sb) = (s.a.load(Ordering::Relaxed), s.b.load(Ordering::Relaxed));
            let k = home(tag_of(sa, sb, sc).hash_code(), self.mask);
            // The entry at j may fill the hole at i unless its home lies
            // cyclically in (i, j].
            let stays = if i <= j {
                i < k && k <= j
            } else {
                i < k || k <= j
            };
            if !stays {
                self.put(i, sa, sb, sc);
                i = j;
            }
        }
        self.slots[i].c.store(0, Ordering::Release);
        true
    }
}

/// Proof that a partition lock is held, in either mode.
pub(crate) trait HeldLock {}
impl HeldLock for SharedGuard<'_> {}
impl HeldLock for ExclusiveGuard<'_> {}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn tag(block: u32, rel: u32) -> BufferTag {
        BufferTag {
            rel: RelFileLocator {
                spc_oid: 1663,
                db_oid: 5,
                rel_number: rel,
            },
            fork: if block.is_multiple_of(7) {
                ForkNumber::Fsm
            } else {
                ForkNumber::Main
            },
            block,
        }
    }

    /// Random inserts and removes against a HashMap model, in a table small
    /// enough to wrap, collide and overflow.
    #[test]
    fn matches_a_model() {
        let p = MappingPartition::new(16);
        let mut model: HashMap<BufferTag, u32> = HashMap::new();
        let mut x = 42u64;
        for step in 0..20_000u32 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let t = tag((x % 40) as u32, 16384 + (x >> 40) as u32 % 2);
            let h = t.hash_code();
            let g = p.exclusive();
            match model.get(&t).copied() {
                Some(id) if !x.is_multiple_of(3) => {
                    assert!(p.remove(&g, &t, h, id));
                    model.remove(&t);
                }
                Some(_) => {}
                None => {
                    p.insert(&g, &t, h, step);
                    model.insert(t, step);
                }
            }
            drop(g);
            if step % 97 == 0 {
                let g = p.shared();
                for b in 0..40 {
                    for r in [16384, 16385] {
                        let t = tag(b, r);
                        assert_eq!(
                            p.lookup(&g, &t, t.hash_code()),
                            model.get(&t).copied(),
                            "step {step}"
                        );
                        if p.find(&t, t.hash_code()).is_some() {
                            assert_eq!(
                                p.lookup_optimistic(&t, t.hash_code()),
                                model.get(&t).copied()
                            );
                        }
                    }
                }
            }
        }
    }
}
