//! A relation's storage as SQL functions see it: sizes by fork, the file
//! path, and pg_prewarm's loading modes. The executor calls these instead
//! of reaching the buffer pool or smgr itself.

use common::{BlockNumber, PgError, PgResult, RelFileLocator, SqlState};
use storage::buffer::{BufferPool, ReadMode};
use storage::smgr::Smgr;

pub use storage::{ForkNumber, BLCKSZ};

/// The fork named `name` ("main", "fsm", "vm"), as size functions spell them.
pub fn fork_by_name(name: &str) -> Option<ForkNumber> {
    match name {
        "main" => Some(ForkNumber::Main),
        "fsm" => Some(ForkNumber::Fsm),
        "vm" => Some(ForkNumber::VisibilityMap),
        _ => None,
    }
}

/// Blocks in one fork of the relation.
pub fn nblocks(pool: &BufferPool, rel: RelFileLocator, fork: ForkNumber) -> PgResult<BlockNumber> {
    Ok(pool.smgr().nblocks(rel, fork)?)
}

/// Bytes in one fork of the relation (pg_relation_size).
pub fn fork_size(pool: &BufferPool, rel: RelFileLocator, fork: ForkNumber) -> PgResult<i64> {
    Ok(i64::from(nblocks(pool, rel, fork)?) * BLCKSZ as i64)
}

/// Bytes in the main and free-space forks (pg_table_size and friends).
pub fn table_size(pool: &BufferPool, rel: RelFileLocator) -> PgResult<i64> {
    Ok(fork_size(pool, rel, ForkNumber::Main)? + fork_size(pool, rel, ForkNumber::Fsm)?)
}

/// Bytes in every fork of the relation.
pub fn total_size(pool: &BufferPool, rel: RelFileLocator) -> PgResult<i64> {
    Ok(table_size(pool, rel)? + fork_size(pool, rel, ForkNumber::VisibilityMap)?)
}

/// The main fork's path relative to the data directory (pg_relation_filepath).
pub fn filepath(rel: RelFileLocator) -> String {
    Smgr::relative_path(rel, ForkNumber::Main)
}

/// How pg_prewarm loads a block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PrewarmMode {
    /// Asks the kernel to read it ahead.
    Prefetch,
    /// Reads it into a scratch buffer (the OS cache keeps it).
    Read,
    /// Reads it into shared buffers.
    Buffer,
}

impl PrewarmMode {
    pub fn parse(name: &str) -> PgResult<PrewarmMode> {
        match name {
            "prefetch" => Ok(PrewarmMode::Prefetch),
            "read" => Ok(PrewarmMode::Read),
            "buffer" => Ok(PrewarmMode::Buffer),
            other => Err(PgError::new(
                SqlState::INVALID_PARAMETER_VALUE,
                format!("invalid prewarm type \"{other}\""),
            )
            .with_hint("Valid prewarm types are \"prefetch\", \"read\", and \"buffer\".")),
        }
    }
}

/// Loads blocks `first..=last` of one fork; returns how many. `check` runs
/// every 256 blocks (cancellation).
pub fn prewarm(
    pool: &'static BufferPool,
    rel: RelFileLocator,
    fork: ForkNumber,
    mode: PrewarmMode,
    (first, last): (BlockNumber, BlockNumber),
    check: &dyn Fn() -> PgResult<()>,
) -> PgResult<i64> {
    // Only 'read' needs a page-sized buffer; one-block 'buffer' calls are hot.
    let mut scratch = Vec::new();
    let mut count = 0;
    for b in first..=last {
        if b % 256 == 0 {
            check()?;
        }
        match mode {
            PrewarmMode::Prefetch => pool.smgr().prefetch(rel, fork, b)?,
            PrewarmMode::Read => {
                scratch.resize(BLCKSZ, 0);
                pool.smgr().read_block(rel, fork, b, &mut scratch)?
            }
            PrewarmMode::Buffer => drop(pool.read_buffer(rel, fork, b, ReadMode::Normal, None)?),
        }
        count += 1;
    }
    Ok(count)
}
