//! Fast-path relation locks (seed 004, "fast-path relation locks";
//! PostgreSQL's `FastPathGrantRelationLock` and friends).
//!
//! A weak relation lock (AccessShare, RowShare, RowExclusive) on a relation
//! of the session's database is recorded in the owner's own slots, never
//! touching the shared table, while no strong lock can exist on that
//! relation. Strong requesters count themselves in one of 1024 buckets
//! (by the tag's hash) and then move every owner's matching slots into the
//! shared table before they look for conflicts.
//!
//! Why no weak lock is missed (the memory-ordering argument): a weak locker
//! reads the bucket's counter while holding its own `Proc::fast_path`
//! mutex, and writes its slot in the same critical section. A strong locker
//! increments the counter first and only then takes each proc's
//! `fast_path` mutex, one after the other, to transfer. For any proc, the
//! two critical sections are ordered by that mutex: if the weak locker's
//! comes first, its unlock happens-before the strong locker's lock, so the
//! transfer sees the slot; if the strong locker's comes first, its
//! increment (sequenced before its unlock) happens-before the weak locker's
//! lock, so the weak locker reads a non-zero counter and goes to the shared
//! table, where the strong lock conflicts with it. The mutex provides every
//! ordering needed, so the counters themselves are Relaxed. A stale
//! non-zero read only sends a weak locker to the shared table, which is
//! always correct.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use common::Oid;
use parking_lot::MutexGuard;

use super::mode::{LockMode, ModeMask};
use super::tag::LockTag;
use super::{LockManager, Proc};

/// Fast-path slots per owner (PostgreSQL's FP_LOCK_SLOTS_PER_BACKEND).
pub const SLOTS: usize = 16;
/// Strong-lock counters (PostgreSQL's FAST_PATH_STRONG_LOCK_HASH_PARTITIONS).
pub const STRONG_BUCKETS: usize = 1024;

/// One owner's fast-path locks; guarded by `Proc::fast_path`.
#[derive(Default)]
pub(crate) struct Slots {
    /// The database the owner's relations belong to.
    pub db: Oid,
    /// Relation of each slot (0: free) and the weak modes held on it.
    pub rel: [Oid; SLOTS],
    pub modes: [ModeMask; SLOTS],
}

impl Slots {
    pub fn reset(&mut self, db: Oid) {
        *self = Slots {
            db,
            ..Default::default()
        };
    }

    pub fn is_empty(&self) -> bool {
        self.modes.iter().all(|&m| m == 0)
    }

    /// Records `mode` on `rel`; false when every slot is taken.
    fn grant(&mut self, rel: Oid, mode: LockMode) -> bool {
        let mut free = None;
        for i in 0..SLOTS {
            if self.modes[i] != 0 && self.rel[i] == rel {
                self.modes[i] |= mode.bit();
                return true;
            }
            if self.modes[i] == 0 && free.is_none() {
                free = Some(i);
            }
        }
        match free {
            Some(i) => {
                self.rel[i] = rel;
                self.modes[i] = mode.bit();
                true
            }
            None => false,
        }
    }

    /// Clears `mode` on `rel`; false if it is not here (moved to the table).
    pub fn ungrant(&mut self, rel: Oid, mode: LockMode) -> bool {
        for i in 0..SLOTS {
            if self.modes[i] & mode.bit() != 0 && self.rel[i] == rel {
                self.modes[i] &= !mode.bit();
                return true;
            }
        }
        false
    }

    /// The weak modes held on `rel` through the fast path.
    pub fn held(&self, rel: Oid) -> ModeMask {
        (0..SLOTS)
            .filter(|&i| self.modes[i] != 0 && self.rel[i] == rel)
            .fold(0, |m, i| m | self.modes[i])
    }

    /// (relation, modes) of every used slot.
    pub fn entries(&self) -> impl Iterator<Item = (Oid, ModeMask)> + '_ {
        (0..SLOTS)
            .filter(|&i| self.modes[i] != 0)
            .map(|i| (self.rel[i], self.modes[i]))
    }
}

/// How many strong locks are held or wanted per bucket of relations.
pub(crate) struct StrongCounts(Box<[AtomicU32]>);

impl StrongCounts {
    pub fn new() -> Self {
        StrongCounts((0..STRONG_BUCKETS).map(|_| AtomicU32::new(0)).collect())
    }

    fn bucket(&self, tag: &LockTag) -> &AtomicU32 {
        &self.0[(tag.hash() % STRONG_BUCKETS as u64) as usize]
    }

    // Relaxed throughout: the `fast_path` mutexes order these against the
    // slots (module comment).
    fn any(&self, tag: &LockTag) -> bool {
        self.bucket(tag).load(Ordering::Relaxed) != 0
    }

    pub fn increment(&self, tag: &LockTag) {
        self.bucket(tag).fetch_add(1, Ordering::Relaxed);
    }

    pub fn decrement(&self, tag: &LockTag) {
        let before = self.bucket(tag).fetch_sub(1, Ordering::Relaxed);
        debug_assert!(before > 0, "strong lock count underflow");
    }
}

/// Whether `mode` on `tag` may go through an owner's slots (`db` is the
/// owner's database: shared relations never do).
pub(crate) fn eligible(tag: &LockTag, mode: LockMode, db: Oid) -> Option<Oid> {
    match *tag {
        LockTag::Relation { db: d, rel } if d == db && d != 0 && mode.is_weak() => Some(rel),
        _ => None,
    }
}

/// Whether `mode` on `tag` must first move the relation's fast-path locks
/// into the table.
pub(crate) fn is_strong_relation_lock(tag: &LockTag, mode: LockMode) -> bool {
    matches!(tag, LockTag::Relation { .. }) && mode.is_strong()
}

impl LockManager {
    /// Tries to record a weak lock in `proc`'s slots: false when a strong
    /// lock may exist on the relation or the slots are full.
    /// `rel` is the relation of `tag`, which `eligible` accepted.
    pub(crate) fn fast_path_grant(
        &self,
        proc: &Proc,
        tag: &LockTag,
        rel: Oid,
        mode: LockMode,
    ) -> bool {
        if self.strong.any(tag) {
            return false;
        }
        let mut slots = proc.fast_path.lock();
        // Read again under the mutex: this read is the one the argument in
        // the module comment is about.
        if self.strong.any(tag) {
            return false;
        }
        slots.grant(rel, mode)
    }

    /// Releases a weak lock from `proc`'s slots; false if a strong locker
    /// moved it to the shared table meanwhile.
    pub(crate) fn fast_path_ungrant(&self, proc: &Proc, tag: &LockTag, mode: LockMode) -> bool {
        let LockTag::Relation { rel, .. } = *tag else {
            return false;
        };
        proc.fast_path.lock().ungrant(rel, mode)
    }

    /// A strong locker's first step: counts itself, then moves every
    /// owner's fast-path locks on the relation into the shared table
    /// (PostgreSQL's FastPathTransferRelationLocks).
    pub(crate) fn strong_begin(&self, tag: &LockTag) {
        self.strong.increment(tag);
        let LockTag::Relation { db, rel } = *tag else {
            unreachable!("only relation locks take the fast path")
        };
        for proc in self.procs() {
            let mut slots = proc.fast_path.lock();
            if slots.db != db {
                continue;
            }
            self.transfer(&proc, &mut slots, tag, rel);
        }
    }

    /// Moves `proc`'s slot for `rel` into the table. Lock order:
    /// `Proc::fast_path` before the partition.
    fn transfer(
        &self,
        proc: &Arc<Proc>,
        slots: &mut MutexGuard<'_, Slots>,
        tag: &LockTag,
        rel: Oid,
    ) {
        let held = slots.held(rel);
        if held == 0 {
            return;
        }
        let mut part = self.partition(tag).write();
        for mode in LockMode::in_mask(held) {
            part.lock_mut(*tag).grant(proc, mode);
            slots.ungrant(rel, mode);
        }
    }
}
