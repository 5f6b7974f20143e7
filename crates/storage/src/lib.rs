//! Storage: files (smgr), 8 KB pages with checksums, LWLocks, and the shared
//! buffer pool through which every page access goes. See README.md for the
//! rules and the lock order.

pub mod buffer;
pub mod fsm;
pub mod lwlock;
pub mod page;
pub mod smgr;
pub mod temp_file;

pub const BLCKSZ: usize = 8192;
/// Blocks per 1 GB segment file, as PostgreSQL's RELSEG_SIZE.
pub const RELSEG_BLOCKS: u32 = (1 << 30) / BLCKSZ as u32;

/// Relation forks, as PostgreSQL's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum ForkNumber {
    Main = 0,
    Fsm = 1,
    VisibilityMap = 2,
}

impl ForkNumber {
    pub fn suffix(self) -> &'static str {
        match self {
            ForkNumber::Main => "",
            ForkNumber::Fsm => "_fsm",
            ForkNumber::VisibilityMap => "_vm",
        }
    }
}

/// Storage-layer errors; converted to `PgError` where they reach a client.
#[derive(Debug, thiserror::Error)]
pub enum StorageError {
    #[error("could not {op} file \"{path}\": {source}")]
    Io {
        op: &'static str,
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("invalid page in block {block} of relation {path}")]
    Corrupt { block: u32, path: String },
    #[error("no unpinned buffers available")]
    NoFreeBuffers,
    #[error("could not flush the write-ahead log before writing a page: {message}")]
    WalFlush { message: String },
}

impl From<StorageError> for common::PgError {
    fn from(e: StorageError) -> Self {
        use common::SqlState;
        let code = match &e {
            StorageError::Io { .. } | StorageError::WalFlush { .. } => SqlState::IO_ERROR,
            StorageError::Corrupt { .. } => SqlState::DATA_CORRUPTED,
            StorageError::NoFreeBuffers => SqlState::PROGRAM_LIMIT_EXCEEDED,
        };
        common::PgError::new(code, e.to_string())
    }
}

pub type StorageResult<T> = Result<T, StorageError>;
