//! Shared vocabulary of every Scalegres layer: object ids, errors with SQLSTATE,
//! interrupts and stack-depth checks, and the fuzz driver. The SQL types and
//! values live in the `types` crate, above this one.

pub mod buffer_usage;
pub mod durable;
pub mod error;
#[cfg(any(test, feature = "fuzzing"))]
pub mod fuzz;
pub mod ids;
pub mod interrupt;
pub mod stack_depth;

pub use buffer_usage::BufferUsage;
pub use error::{PgError, PgResult, SqlState};
pub use ids::{BlockNumber, Oid, RelFileLocator, Xid};
