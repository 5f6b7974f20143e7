//! PostgreSQL's `check_stack_depth`, counted in nesting levels: every
//! recursive step of analysis (an expression node, a query, a set operation)
//! enters one level, and a statement nested deeper than `max_stack_depth`
//! allows fails with 54001 instead of overflowing its thread's stack.
//!
//! Levels rather than bytes: our frames are larger than PostgreSQL's, so a
//! byte budget of 2MB would refuse expressions PostgreSQL runs. One level is
//! counted as `BYTES_PER_LEVEL` of `max_stack_depth` (2MB gives 4096 levels;
//! PostgreSQL 15 runs a 3,000-term `+` chain and refuses 5,000), and session
//! threads are spawned with a stack sized for the deepest `max_stack_depth`
//! allows (`MAX_STACK_DEPTH_KB` levels of `STACK_BYTES_PER_LEVEL`).
//!
//! The limit and the current depth are per thread: sessions run on their own
//! threads and set the limit from their settings before each statement.

use std::cell::Cell;

use crate::{PgError, PgResult, SqlState};

/// Bytes of `max_stack_depth` one nesting level accounts for.
pub const BYTES_PER_LEVEL: u64 = 512;
/// The largest `max_stack_depth` accepted, in kB.
pub const MAX_STACK_DEPTH_KB: u64 = 8192;
/// Real stack one level may take across parsing, analysis, planning,
/// evaluation and dropping of the trees (measured with margin in debug builds).
pub const STACK_BYTES_PER_LEVEL: usize = 12 * 1024;
/// Stack for session threads: the deepest allowed nesting plus room for
/// everything that runs above the nested part.
pub const SESSION_STACK_SIZE: usize =
    (MAX_STACK_DEPTH_KB * 1024 / BYTES_PER_LEVEL) as usize * STACK_BYTES_PER_LEVEL + (16 << 20);

const DEFAULT_KB: u64 = 2048;

thread_local! {
    static DEPTH: Cell<u32> = const { Cell::new(0) };
    static LIMIT_KB: Cell<u64> = const { Cell::new(DEFAULT_KB) };
    /// `LIMIT_KB` in levels, kept beside it so `enter` does no division.
    static LIMIT_LEVELS: Cell<u32> = const { Cell::new(limit_levels(DEFAULT_KB)) };
}

/// Sets this thread's `max_stack_depth`, in kB (clamped to what the
/// thread stacks are sized for).
pub fn set_max_stack_depth_kb(kb: u64) {
    let kb = kb.min(MAX_STACK_DEPTH_KB);
    LIMIT_KB.with(|l| l.set(kb));
    LIMIT_LEVELS.with(|l| l.set(limit_levels(kb)));
}

const fn limit_levels(kb: u64) -> u32 {
    (kb * 1024 / BYTES_PER_LEVEL) as u32
}

/// One level of nesting, left when dropped.
#[must_use]
pub struct DepthGuard(());

impl Drop for DepthGuard {
    fn drop(&mut self) {
        DEPTH.with(|d| d.set(d.get() - 1));
    }
}

/// Enters one nesting level, or fails with PostgreSQL's 54001 when the
/// statement is nested deeper than `max_stack_depth` allows.
#[inline]
pub fn enter() -> PgResult<DepthGuard> {
    let depth = DEPTH.with(|d| {
        let n = d.get() + 1;
        d.set(n);
        n
    });
    if depth > LIMIT_LEVELS.with(Cell::get) {
        DEPTH.with(|d| d.set(d.get() - 1));
        return Err(too_deep_here());
    }
    Ok(DepthGuard(()))
}

/// `levels` nesting levels at once, left together when dropped.
#[must_use]
pub struct DepthGuards(u32);

impl Drop for DepthGuards {
    fn drop(&mut self) {
        DEPTH.with(|d| d.set(d.get() - self.0));
    }
}

/// Enters `levels` nesting levels in one step (a call that runs whole
/// statements counts for many), or fails as `enter` does.
pub fn enter_levels(levels: u32) -> PgResult<DepthGuards> {
    let depth = DEPTH.with(|d| {
        let n = d.get() + levels;
        d.set(n);
        n
    });
    if depth > LIMIT_LEVELS.with(Cell::get) {
        DEPTH.with(|d| d.set(d.get() - levels));
        return Err(too_deep_here());
    }
    Ok(DepthGuards(levels))
}

/// PostgreSQL's error for a statement nested too deeply.
pub fn too_deep(kb: u64) -> PgError {
    PgError::new(
        SqlState::STATEMENT_TOO_COMPLEX,
        "stack depth limit exceeded",
    )
    .with_hint(format!(
        "Increase the configuration parameter \"max_stack_depth\" (currently {kb}kB), \
             after ensuring the platform's stack depth limit is adequate."
    ))
}

/// The error for this thread's current limit.
pub fn too_deep_here() -> PgError {
    too_deep(LIMIT_KB.with(Cell::get))
}

/// Levels this thread's limit allows (parsers that count their own depth use it).
pub fn max_levels() -> usize {
    LIMIT_LEVELS.with(Cell::get) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nest(n: u32) -> PgResult<u32> {
        let _g = enter()?;
        if n == 0 {
            Ok(0)
        } else {
            nest(n - 1).map(|d| d + 1)
        }
    }

    #[test]
    fn limit_follows_the_setting_and_unwinds() {
        set_max_stack_depth_kb(100);
        let levels = limit_levels(100);
        assert_eq!(nest(levels - 1).unwrap(), levels - 1);
        let e = nest(levels).unwrap_err();
        assert_eq!(e.code, SqlState::STATEMENT_TOO_COMPLEX);
        assert!(e.hint.unwrap().contains("(currently 100kB)"));
        // Every guard was released on the way out.
        assert_eq!(DEPTH.with(Cell::get), 0);
        set_max_stack_depth_kb(DEFAULT_KB);
        assert_eq!(max_levels(), 4096);
    }
}
