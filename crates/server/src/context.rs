//! State shared by all sessions of one server: the buffer pool, transaction
//! manager, catalog and server-wide settings.

use std::path::PathBuf;
use std::sync::Arc;

use catalog::Catalog;
use storage::buffer::BufferPool;
use txn::TransactionManager;

use crate::gucs::Settings;
use crate::protocol::BackendRegistry;

pub struct ServerContext {
    pub data_dir: PathBuf,
    /// base/pgsql_tmp: sorts' and hash tables' temporary files.
    pub temp_dir: Arc<storage::temp_file::TempDir>,
    pub pool: &'static BufferPool,
    pub tm: TransactionManager,
    pub catalog: Catalog,
    pub settings: Settings,
    /// Connection limits and timeouts, typed once from `settings`.
    pub connection_settings: crate::connections::ConnectionSettings,
    pub registry: BackendRegistry,
    /// pg_hba.conf, swapped on SIGHUP ([`ServerContext::reload`]).
    pub hba: crate::auth::hba::HbaHolder,
    /// The TLS configuration in force (`ssl = on`), swapped on SIGHUP.
    pub tls: crate::tls::TlsHolder,
    pub activity: crate::activity::Activity,
    /// CHECKPOINT commands run (pg_stat_bgwriter.checkpoints_req).
    pub checkpoints_req: std::sync::atomic::AtomicU64,
    /// Server start, microseconds since 2000-01-01.
    pub start_time: i64,
    /// Set once a smart or fast shutdown began: new sessions are refused.
    pub shutting_down: std::sync::atomic::AtomicBool,
}

impl ServerContext {
    /// Refuses new sessions from now on (57P03).
    pub fn begin_shutdown(&self) {
        // Relaxed: sessions opened just before the flag is seen are ended by
        // the shutdown like any other.
        self.shutting_down
            .store(true, std::sync::atomic::Ordering::Relaxed);
    }

    pub fn is_shutting_down(&self) -> bool {
        self.shutting_down
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Re-reads the files a SIGHUP reloads (pg_hba.conf). A bad file is
    /// reported and the old rules stay in force.
    pub fn reload(&self) -> Result<(), crate::auth::hba::HbaError> {
        self.hba.reload()
    }

    /// Flushes everything durable (shutdown, CHECKPOINT).
    pub fn checkpoint(&self) -> common::PgResult<()> {
        self.pool.flush_all()?;
        self.tm
            .flush()
            .map_err(|e| common::PgError::io("could not write pg_xact", e))?;
        Ok(())
    }
}

pub type SharedContext = Arc<ServerContext>;
