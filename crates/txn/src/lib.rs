//! Transactions: xid assignment, the commit log (`pg_xact`), the set of running
//! transactions (ProcArray) and MVCC snapshots. See README.md.

pub mod clog;
pub mod isolation;
pub mod lock;
pub mod manager;
pub mod procarray;
pub mod snapshot;
pub mod ssi;

pub use clog::{Clog, XidStatus};
pub use isolation::IsolationLevel;
pub use manager::{SyncCommit, TransactionManager, XACT_ABORT, XACT_COMMIT};
pub use procarray::Proc;
pub use snapshot::{OwnXids, Snapshot, SnapshotData};

/// A started log in `dir` for unit tests (fsync off), here and in the
/// crates above.
pub fn test_wal(dir: &std::path::Path) -> &'static wal::Wal {
    std::fs::create_dir_all(dir.join("global")).expect("create global");
    let settings = wal::WalSettings::new(
        1 << 20,
        wal::settings::WalReloadable {
            fsync: false,
            ..Default::default()
        },
    );
    let w = wal::Wal::open(dir, settings).expect("open wal");
    w.startup(dir, &[]).expect("start wal");
    w
}
