//! Shared vocabulary of every Scalegres layer: object ids, errors with SQLSTATE,
//! SQL types and values with their text and binary representations.

pub mod error;
pub mod functions;
#[cfg(any(test, feature = "fuzzing"))]
pub mod fuzz;
pub mod ids;
pub mod interrupt;
pub mod stack_depth;
pub mod types;
pub mod value;

pub use error::{PgError, PgResult, SqlState};
pub use ids::{BlockNumber, Oid, RelFileLocator, Xid};
pub use types::{DataType, TypeId};
pub use value::Value;
