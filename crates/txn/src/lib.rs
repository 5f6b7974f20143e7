//! Transactions: xid assignment, the commit log (`pg_xact`), the set of running
//! transactions (ProcArray) and MVCC snapshots. See README.md.

pub mod clog;
pub mod manager;
pub mod snapshot;

pub use clog::{Clog, XidStatus};
pub use manager::TransactionManager;
pub use snapshot::Snapshot;
