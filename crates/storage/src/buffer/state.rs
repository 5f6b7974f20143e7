//! The buffer descriptor's state word: one `AtomicU32` holding the reference
//! count, the usage count and the flags (PostgreSQL's BufferDesc.state).
//!
//! Rules:
//! 1. Any change to the word is a CAS loop that waits while `LOCKED` is set,
//!    because the header-lock holder writes the whole word back on unlock.
//! 2. The tag may change only under the header lock, with the reference count
//!    zero (apart from the changer's own pin) and the mapping partition locks of
//!    the old and new tag held exclusively.

use std::sync::atomic::{AtomicU32, Ordering};

use crate::lwlock::{count_spin_delay, Tranche};

pub const REFCOUNT_MASK: u32 = (1 << 18) - 1;
pub const USAGE_ONE: u32 = 1 << 18;
pub const USAGE_MASK: u32 = 0xF << 18;
pub const MAX_USAGE: u32 = 5;

pub const LOCKED: u32 = 1 << 22;
pub const DIRTY: u32 = 1 << 23;
pub const VALID: u32 = 1 << 24;
pub const TAG_VALID: u32 = 1 << 25;
pub const IO_IN_PROGRESS: u32 = 1 << 26;
pub const IO_ERROR: u32 = 1 << 27;
pub const JUST_DIRTIED: u32 = 1 << 28;
/// The buffer is on the freelist (PostgreSQL's freeNext != NOT_IN_LIST).
pub const ON_FREELIST: u32 = 1 << 29;

/// The usual state of a page that stays in the pool: valid, clean, unpinned,
/// usage count at its cap (the guess for `update_expecting` on a cache hit).
pub const CACHED_UNPINNED: u32 = TAG_VALID | VALID | (MAX_USAGE * USAGE_ONE);

#[inline]
pub fn refcount(s: u32) -> u32 {
    s & REFCOUNT_MASK
}
#[inline]
pub fn usage(s: u32) -> u32 {
    (s & USAGE_MASK) >> 18
}

/// Spins until the header lock bit is clear, returning the state seen.
#[inline]
pub fn wait_unlocked(state: &AtomicU32) -> u32 {
    let mut spins = 0u32;
    loop {
        let s = state.load(Ordering::Acquire);
        if s & LOCKED == 0 {
            return s;
        }
        spins += 1;
        if spins.is_multiple_of(64) {
            count_spin_delay(Tranche::BufferMapping);
            std::thread::yield_now();
        } else {
            std::hint::spin_loop();
        }
    }
}

/// Takes the header lock; returns the state with `LOCKED` set.
#[inline]
pub fn lock_header(state: &AtomicU32) -> u32 {
    loop {
        // Acquire pairs with the Release store in `unlock_header`.
        let old = state.fetch_or(LOCKED, Ordering::Acquire);
        if old & LOCKED == 0 {
            return old | LOCKED;
        }
        wait_unlocked(state);
    }
}

/// Releases the header lock, publishing `new` (LOCKED is cleared).
#[inline]
pub fn unlock_header(state: &AtomicU32, new: u32) {
    // Release pairs with the Acquire in `lock_header` and in pin CAS loops,
    // publishing the tag written under the lock.
    state.store(new & !LOCKED, Ordering::Release);
}

/// Applies `f` to the state with a CAS loop that respects the header lock.
/// `f` returns None to leave the word unchanged. Returns (old, new).
#[inline]
pub fn update(state: &AtomicU32, f: impl FnMut(u32) -> Option<u32>) -> (u32, u32) {
    update_from(state, state.load(Ordering::Relaxed), f)
}

/// As `update`, but the first CAS expects `guess` instead of a loaded value.
/// When another core wrote the word last, a load followed by a CAS costs two
/// coherence transfers (a shared copy, then ownership); a CAS alone costs one,
/// and a wrong guess still returns the current value to retry from.
#[inline]
pub fn update_expecting(
    state: &AtomicU32,
    guess: u32,
    mut f: impl FnMut(u32) -> Option<u32>,
) -> (u32, u32) {
    debug_assert_eq!(guess & LOCKED, 0);
    let Some(new) = f(guess) else {
        // f must see the real state before deciding to leave it alone.
        return update(state, f);
    };
    // AcqRel: as in `update_from`.
    match state.compare_exchange(guess, new, Ordering::AcqRel, Ordering::Relaxed) {
        Ok(_) => (guess, new),
        Err(current) => update_from(state, current, f),
    }
}

#[inline]
fn update_from(
    state: &AtomicU32,
    mut old: u32,
    mut f: impl FnMut(u32) -> Option<u32>,
) -> (u32, u32) {
    loop {
        if old & LOCKED != 0 {
            old = wait_unlocked(state);
        }
        let Some(new) = f(old) else {
            return (old, old);
        };
        // AcqRel: Acquire pairs with `unlock_header`'s Release (tag visibility after
        // pinning); Release orders page writes before an unpin or a dirty mark.
        match state.compare_exchange_weak(old, new, Ordering::AcqRel, Ordering::Relaxed) {
            Ok(_) => return (old, new),
            Err(cur) => old = cur,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn update_expecting_right_and_wrong_guesses() {
        // Right guess: one CAS.
        let w = AtomicU32::new(CACHED_UNPINNED);
        let (old, new) = update_expecting(&w, CACHED_UNPINNED, |s| Some(s + 1));
        assert_eq!((old, new), (CACHED_UNPINNED, CACHED_UNPINNED + 1));
        // Wrong guess (pinned and dirty): the CAS fails and retries from the
        // real value, never from the guess.
        let real = CACHED_UNPINNED | DIRTY | 3;
        let w = AtomicU32::new(real);
        let (old, new) = update_expecting(&w, CACHED_UNPINNED, |s| Some(s + 1));
        assert_eq!((old, new), (real, real + 1));
        assert_eq!(w.load(Ordering::Relaxed), real + 1);
        // f declines the real state although it would accept the guess.
        let w = AtomicU32::new(0);
        let (old, new) = update_expecting(&w, CACHED_UNPINNED, |s| {
            (s & TAG_VALID != 0).then_some(s + 1)
        });
        assert_eq!((old, new), (0, 0));
        assert_eq!(w.load(Ordering::Relaxed), 0);
    }

    #[test]
    fn update_expecting_waits_for_the_header_lock() {
        let w = std::sync::Arc::new(AtomicU32::new(CACHED_UNPINNED));
        let locked = lock_header(&w);
        let w2 = w.clone();
        let t = std::thread::spawn(move || update_expecting(&w2, CACHED_UNPINNED, |s| Some(s + 1)));
        std::thread::sleep(std::time::Duration::from_millis(20));
        // The holder writes the whole word back: a pin taken meanwhile would be lost.
        unlock_header(&w, (locked & !USAGE_MASK) | DIRTY);
        let (old, new) = t.join().unwrap();
        assert_eq!(old, TAG_VALID | VALID | DIRTY);
        assert_eq!(new, old + 1);
        assert_eq!(w.load(Ordering::Relaxed), new);
    }
}
