//! Per-backend status for pg_stat_activity (PostgreSQL's PgBackendStatus),
//! and per-database counters for pg_stat_database.
//!
//! Each session owns one `BackendStatus`; it writes its own entry and other
//! sessions read it. The wait event is an atomic the session's thread
//! publishes through `storage::lwlock::set_wait_event_slot`.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;

#[derive(Debug, Clone, Default)]
pub struct StatusFields {
    pub state: &'static str,
    pub query: String,
    /// Microseconds since 2000-01-01 (timestamptz), or None.
    pub query_start: Option<i64>,
    pub application_name: String,
}

pub struct BackendStatus {
    pub pid: i32,
    pub db_oid: u32,
    pub datname: String,
    pub usename: String,
    pub backend_start: i64,
    /// The connection's TLS parameters (pg_stat_ssl); None without TLS.
    pub ssl: Option<crate::tls::SslInfo>,
    pub fields: Mutex<StatusFields>,
    pub wait_event: &'static AtomicU32,
    /// An autovacuum worker, not a client backend (backend_type; not
    /// counted against max_connections).
    pub autovacuum: bool,
}

#[derive(Default)]
pub struct DatabaseCounters {
    pub xact_commit: AtomicU64,
    pub xact_rollback: AtomicU64,
    pub blks_read: AtomicU64,
    pub blks_hit: AtomicU64,
    /// Temporary files deleted and their bytes (temp_files, temp_bytes).
    pub temp: Arc<storage::temp_file::TempCounters>,
}

#[derive(Default)]
pub struct Activity {
    backends: Mutex<HashMap<i32, Arc<BackendStatus>>>,
    databases: Mutex<HashMap<u32, Arc<DatabaseCounters>>>,
    /// Wait-event slots of ended sessions, reused (they are leaked 'static).
    spare_slots: Mutex<Vec<&'static AtomicU32>>,
}

impl Activity {
    #[allow(clippy::too_many_arguments)]
    pub fn register(
        &self,
        pid: i32,
        db_oid: u32,
        datname: &str,
        usename: &str,
        application_name: &str,
        ssl: Option<crate::tls::SslInfo>,
        autovacuum: bool,
    ) -> Arc<BackendStatus> {
        let slot = self
            .spare_slots
            .lock()
            .pop()
            .unwrap_or_else(|| Box::leak(Box::new(AtomicU32::new(0))));
        slot.store(0, Ordering::Relaxed);
        let st = Arc::new(BackendStatus {
            pid,
            db_oid,
            datname: datname.to_string(),
            usename: usename.to_string(),
            backend_start: types::datetime::now_timestamp(),
            ssl,
            fields: Mutex::new(StatusFields {
                state: "idle",
                application_name: application_name.to_string(),
                ..Default::default()
            }),
            wait_event: slot,
            autovacuum,
        });
        self.backends.lock().insert(pid, st.clone());
        st
    }

    pub fn unregister(&self, pid: i32) {
        if let Some(st) = self.backends.lock().remove(&pid) {
            self.spare_slots.lock().push(st.wait_event);
        }
    }

    pub fn backends(&self) -> Vec<Arc<BackendStatus>> {
        let mut v: Vec<_> = self.backends.lock().values().cloned().collect();
        v.sort_by_key(|b| b.pid);
        v
    }

    pub fn database(&self, oid: u32) -> Arc<DatabaseCounters> {
        self.databases.lock().entry(oid).or_default().clone()
    }
}
