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
    pub tm: &'static TransactionManager,
    pub catalog: Catalog,
    /// The settings the server started with (postmaster-context ones stay).
    pub settings: Settings,
    /// The configuration files' settings as last (re)loaded: what sessions
    /// RESET to. Replaced whole on SIGHUP; `settings_reloads` counts the
    /// replacements so a session notices one with a single load.
    pub file_settings: parking_lot::RwLock<Arc<Settings>>,
    pub settings_reloads: std::sync::atomic::AtomicU64,
    /// Connection limits and timeouts, typed once from `settings`.
    pub connection_settings: crate::connections::ConnectionSettings,
    pub registry: BackendRegistry,
    /// pg_hba.conf, swapped on SIGHUP ([`ServerContext::reload`]).
    pub hba: crate::auth::hba::HbaHolder,
    /// The TLS configuration in force (`ssl = on`), swapped on SIGHUP.
    pub tls: crate::tls::TlsHolder,
    pub activity: crate::activity::Activity,
    /// Checkpoint settings and counters (pg_stat_bgwriter).
    pub checkpointer: crate::checkpointer::Checkpointer,
    /// Server start, microseconds since 2000-01-01.
    pub start_time: i64,
    /// Set once a smart or fast shutdown began: new sessions are refused.
    pub shutting_down: std::sync::atomic::AtomicBool,
    /// Every table's cumulative statistics (pg_stat_all_tables, autovacuum).
    pub table_stats: exec::table_stats::TableStatsRegistry,
    /// LISTEN / NOTIFY between sessions (`notify.rs`).
    pub notify: Arc<crate::notify::NotifyHub>,
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

    /// Publishes settings re-read from the configuration files (SIGHUP).
    pub fn publish_settings(&self, settings: Settings) {
        *self.file_settings.write() = Arc::new(settings);
        // Release: pairs with the Acquire in `reloaded_settings`, so a session
        // that sees the new count reads the new settings.
        self.settings_reloads
            .fetch_add(1, std::sync::atomic::Ordering::Release);
    }

    /// The configuration files' settings, if reloaded since `seen` (a count
    /// from an earlier call; start from 0), with the new count.
    pub fn reloaded_settings(&self, seen: u64) -> Option<(u64, Arc<Settings>)> {
        let now = self
            .settings_reloads
            .load(std::sync::atomic::Ordering::Acquire);
        (now != seen).then(|| (now, self.file_settings.read().clone()))
    }
}

pub type SharedContext = Arc<ServerContext>;
