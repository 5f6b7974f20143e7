//! Views of the running server: pg_stat_activity, pg_stat_ssl,
//! pg_stat_database, pg_stat_bgwriter, pg_stat_wal, pg_stat_lwlock,
//! pg_buffercache, pg_settings. The buffer pool's, the WAL's and LWLocks'
//! counters are read here; what
//! the server process owns (its sessions, settings and counters) comes
//! through `ServerState`, which the session implements.

use std::sync::atomic::Ordering;

use storage::lwlock::{tranche_stats, Tranche};
use types::TypeId::*;
use types::Value;

use super::{opt_text, text, Schema, Source, ViewContext, ViewDef};
use crate::Row;

/// What the server process knows that the views show.
pub trait ServerState {
    /// Every backend, in no particular order.
    fn backends(&self) -> Vec<BackendInfo>;
    /// Database `db`'s counters.
    fn database_stats(&self, db: common::Oid) -> DatabaseStats;
    /// The checkpointer's counters.
    fn checkpoints(&self) -> CheckpointStats;
    /// When the server started (timestamptz microseconds).
    fn start_time(&self) -> i64;
    /// Every setting as this session sees it (pg_settings' rows).
    fn settings(&self) -> Vec<SettingInfo>;
    /// The session's open SQL cursors (pg_cursors).
    fn cursors(&self) -> Vec<super::CursorInfo> {
        Vec::new()
    }
    /// The session's named prepared statements (pg_prepared_statements).
    fn prepared_statements(&self) -> Vec<super::PreparedStatementInfo> {
        Vec::new()
    }
    /// Whether the current role is a superuser: only superusers see
    /// pg_authid's and pg_shadow's password verifiers.
    fn current_user_is_superuser(&self) -> bool {
        false
    }
    /// Table `table` of database `db`'s cumulative statistics, if counted
    /// (pg_stat_all_tables).
    fn table_counters(
        &self,
        _db: common::Oid,
        _table: common::Oid,
    ) -> Option<std::sync::Arc<crate::table_stats::TableCounters>> {
        None
    }
}

/// One backend's status (PostgreSQL's PgBackendStatus).
#[derive(Debug, Clone)]
pub struct BackendInfo {
    pub db_oid: common::Oid,
    pub datname: String,
    pub pid: i32,
    pub usename: String,
    pub application_name: String,
    pub backend_start: i64,
    pub query_start: Option<i64>,
    /// What the backend waits on, if anything: wait_event_type (`LWLock`,
    /// `Lock`) and wait_event.
    pub wait_event: Option<(&'static str, &'static str)>,
    pub state: &'static str,
    /// Its top-level transaction id and advertised snapshot xmin, if any.
    pub backend_xid: Option<u64>,
    pub backend_xmin: Option<u64>,
    pub query: String,
    /// "client backend" or "autovacuum worker".
    pub backend_type: &'static str,
    pub ssl: Option<SslInfo>,
}

/// A TLS connection's parameters (pg_stat_ssl).
#[derive(Debug, Clone)]
pub struct SslInfo {
    pub version: &'static str,
    pub cipher: String,
    pub bits: i32,
    pub client_dn: Option<String>,
    /// Decimal.
    pub client_serial: Option<String>,
    pub issuer_dn: Option<String>,
}

/// A database's counters (pg_stat_database).
#[derive(Debug, Clone, Copy, Default)]
pub struct DatabaseStats {
    pub xact_commit: u64,
    pub xact_rollback: u64,
    pub blks_read: u64,
    pub blks_hit: u64,
    pub temp_files: u64,
    pub temp_bytes: u64,
}

/// The checkpointer's counters (pg_stat_bgwriter).
#[derive(Debug, Clone, Copy, Default)]
pub struct CheckpointStats {
    /// Checkpoints started by checkpoint_timeout.
    pub timed: u64,
    /// Checkpoints asked for (CHECKPOINT, max_wal_size, shutdown).
    pub requested: u64,
    pub write_time_ms: f64,
    pub sync_time_ms: f64,
}

/// One setting as pg_settings shows it.
#[derive(Debug, Clone)]
pub struct SettingInfo {
    pub name: &'static str,
    pub setting: String,
    pub unit: Option<&'static str>,
    pub category: &'static str,
    pub short_desc: &'static str,
    pub context: &'static str,
    pub vartype: &'static str,
    pub source: &'static str,
    pub min_val: Option<&'static str>,
    pub max_val: Option<&'static str>,
    /// `{a,b}` (text[] in PostgreSQL).
    pub enumvals: Option<String>,
    pub boot_val: String,
    pub reset_val: String,
    pub pending_restart: bool,
}

pub(super) static VIEWS: &[ViewDef] = &[
    ViewDef {
        schema: Schema::PgCatalog,
        name: "pg_stat_activity",
        source: Source::Function("pg_stat_get_activity"),
        columns: &[
            ("datid", Oid),
            ("datname", Name),
            ("pid", Int4),
            ("usename", Name),
            ("application_name", Text),
            ("backend_start", Timestamptz),
            ("query_start", Timestamptz),
            ("wait_event_type", Text),
            ("wait_event", Text),
            ("state", Text),
            // xid in PostgreSQL; bigint until the xid types exist.
            ("backend_xid", Int8),
            ("backend_xmin", Int8),
            ("query", Text),
            ("backend_type", Text),
        ],
        rows: pg_stat_activity,
    },
    // Every backend has a row; the TLS columns are null without TLS.
    ViewDef {
        schema: Schema::PgCatalog,
        name: "pg_stat_ssl",
        source: Source::Function("pg_stat_get_activity"),
        columns: &[
            ("pid", Int4),
            ("ssl", Bool),
            ("version", Text),
            ("cipher", Text),
            ("bits", Int4),
            ("client_dn", Text),
            ("client_serial", Numeric),
            ("issuer_dn", Text),
        ],
        rows: pg_stat_ssl,
    },
    ViewDef {
        schema: Schema::PgCatalog,
        name: "pg_stat_database",
        source: Source::Relation("pg_database"),
        columns: &[
            ("datid", Oid),
            ("datname", Name),
            ("numbackends", Int4),
            ("xact_commit", Int8),
            ("xact_rollback", Int8),
            ("blks_read", Int8),
            ("blks_hit", Int8),
            ("temp_files", Int8),
            ("temp_bytes", Int8),
        ],
        rows: pg_stat_database,
    },
    ViewDef {
        schema: Schema::PgCatalog,
        name: "pg_stat_bgwriter",
        source: Source::Function("pg_stat_get_bgwriter"),
        columns: &[
            ("checkpoints_timed", Int8),
            ("checkpoints_req", Int8),
            ("checkpoint_write_time", Float8),
            ("checkpoint_sync_time", Float8),
            ("buffers_checkpoint", Int8),
            ("buffers_clean", Int8),
            ("maxwritten_clean", Int8),
            ("buffers_backend", Int8),
            ("buffers_backend_fsync", Int8),
            ("buffers_alloc", Int8),
            ("stats_reset", Timestamptz),
            ("buffers_freelist", Int8),
        ],
        rows: pg_stat_bgwriter,
    },
    ViewDef {
        schema: Schema::PgCatalog,
        name: "pg_stat_wal",
        source: Source::Function("pg_stat_get_wal"),
        columns: &[
            ("wal_records", Int8),
            ("wal_fpi", Int8),
            ("wal_bytes", Int8),
            ("wal_buffers_full", Int8),
            ("wal_write", Int8),
            ("wal_sync", Int8),
            ("wal_write_time", Float8),
            ("wal_sync_time", Float8),
            ("stats_reset", Timestamptz),
        ],
        rows: pg_stat_wal,
    },
    ViewDef {
        schema: Schema::PgCatalog,
        name: "pg_stat_lwlock",
        source: Source::Function("pg_stat_get_lwlock"),
        columns: &[
            ("tranche", Text),
            ("shared_acquires", Int8),
            ("exclusive_acquires", Int8),
            ("blocks", Int8),
            ("spin_delays", Int8),
        ],
        rows: pg_stat_lwlock,
    },
    ViewDef {
        schema: Schema::PgCatalog,
        name: "pg_buffercache",
        source: Source::Function("pg_buffercache_pages"),
        columns: &[
            ("bufferid", Int4),
            ("relfilenode", Oid),
            ("reltablespace", Oid),
            ("reldatabase", Oid),
            ("relforknumber", Int2),
            ("relblocknumber", Int8),
            ("isdirty", Bool),
            ("usagecount", Int2),
            ("pinning_backends", Int4),
        ],
        rows: pg_buffercache,
    },
    ViewDef {
        schema: Schema::PgCatalog,
        name: "pg_settings",
        source: Source::Function("pg_show_all_settings"),
        columns: &[
            ("name", Text),
            ("setting", Text),
            ("unit", Text),
            ("category", Text),
            ("short_desc", Text),
            ("extra_desc", Text),
            ("context", Text),
            ("vartype", Text),
            ("source", Text),
            ("min_val", Text),
            ("max_val", Text),
            // text[] in PostgreSQL; shown as its text until arrays exist.
            ("enumvals", Text),
            ("boot_val", Text),
            ("reset_val", Text),
            ("sourcefile", Text),
            ("sourceline", Int4),
            ("pending_restart", Bool),
        ],
        rows: pg_settings,
    },
];

fn opt_ts(t: Option<i64>) -> Value {
    t.map_or(Value::Null, Value::Timestamptz)
}

fn count(n: u64) -> Value {
    Value::Int8(n as i64)
}

fn pg_stat_activity(cx: &ViewContext<'_>) -> Vec<Row> {
    cx.server
        .backends()
        .into_iter()
        .map(|b| {
            vec![
                Value::Oid(b.db_oid),
                text(&b.datname),
                Value::Int4(b.pid),
                text(&b.usename),
                text(&b.application_name),
                Value::Timestamptz(b.backend_start),
                opt_ts(b.query_start),
                opt_text(b.wait_event.map(|w| w.0)),
                opt_text(b.wait_event.map(|w| w.1)),
                text(b.state),
                b.backend_xid.map_or(Value::Null, |x| Value::Int8(x as i64)),
                b.backend_xmin
                    .map_or(Value::Null, |x| Value::Int8(x as i64)),
                text(&b.query),
                text(b.backend_type),
            ]
        })
        .collect()
}

fn pg_stat_ssl(cx: &ViewContext<'_>) -> Vec<Row> {
    cx.server
        .backends()
        .into_iter()
        .map(|b| match &b.ssl {
            None => {
                let mut r = vec![Value::Int4(b.pid), Value::Bool(false)];
                r.extend(std::iter::repeat_n(Value::Null, 6));
                r
            }
            Some(s) => vec![
                Value::Int4(b.pid),
                Value::Bool(true),
                text(s.version),
                text(&s.cipher),
                Value::Int4(s.bits),
                opt_text(s.client_dn.as_deref()),
                s.client_serial
                    .as_deref()
                    .and_then(|n| types::numeric::Numeric::parse(n).ok())
                    .map_or(Value::Null, Value::numeric),
                opt_text(s.issuer_dn.as_deref()),
            ],
        })
        .collect()
}

fn pg_stat_database(cx: &ViewContext<'_>) -> Vec<Row> {
    let backends = cx.server.backends();
    cx.catalog
        .databases
        .values()
        .map(|d| {
            let c = cx.server.database_stats(d.oid);
            vec![
                Value::Oid(d.oid),
                text(&d.name),
                Value::Int4(backends.iter().filter(|b| b.db_oid == d.oid).count() as i32),
                count(c.xact_commit),
                count(c.xact_rollback),
                count(c.blks_read),
                count(c.blks_hit),
                count(c.temp_files),
                count(c.temp_bytes),
            ]
        })
        .collect()
}

fn pg_stat_bgwriter(cx: &ViewContext<'_>) -> Vec<Row> {
    let st = &cx.pool.stats;
    let n = |a: &std::sync::atomic::AtomicU64| count(a.load(Ordering::Relaxed));
    let ck = cx.server.checkpoints();
    vec![vec![
        count(ck.timed),
        count(ck.requested),
        Value::Float8(ck.write_time_ms),
        Value::Float8(ck.sync_time_ms),
        n(&st.buffers_checkpoint),
        n(&st.buffers_clean),
        n(&st.maxwritten_clean),
        n(&st.buffers_backend),
        Value::Int8(0),
        n(&st.buffers_alloc),
        Value::Timestamptz(cx.server.start_time()),
        Value::Int8(cx.pool.freelist_len() as i64),
    ]]
}

fn pg_stat_wal(cx: &ViewContext<'_>) -> Vec<Row> {
    let w = cx.tm.wal().stats();
    vec![vec![
        count(w.records),
        count(w.fpi),
        count(w.bytes),
        count(w.buffers_full),
        count(w.write),
        count(w.sync),
        Value::Float8(w.write_time_ms),
        Value::Float8(w.sync_time_ms),
        Value::Timestamptz(cx.server.start_time()),
    ]]
}

fn pg_stat_lwlock(_: &ViewContext<'_>) -> Vec<Row> {
    Tranche::ALL
        .iter()
        .map(|t| {
            let s = tranche_stats(*t);
            vec![
                text(t.name()),
                count(s.shared_acquires),
                count(s.exclusive_acquires),
                count(s.blocks),
                count(s.spin_delays),
            ]
        })
        .collect()
}

fn pg_buffercache(cx: &ViewContext<'_>) -> Vec<Row> {
    cx.pool
        .buffer_infos()
        .into_iter()
        .map(|b| match b.tag {
            Some(t) => vec![
                Value::Int4(b.buffer_id as i32 + 1),
                Value::Oid(t.rel.rel_number),
                Value::Oid(t.rel.spc_oid),
                Value::Oid(t.rel.db_oid),
                Value::Int2(t.fork as i16),
                Value::Int8(t.block as i64),
                Value::Bool(b.dirty),
                Value::Int2(b.usage_count as i16),
                Value::Int4(b.pin_count as i32),
            ],
            None => {
                let mut r = vec![Value::Int4(b.buffer_id as i32 + 1)];
                r.extend(std::iter::repeat_n(Value::Null, 8));
                r
            }
        })
        .collect()
}

fn pg_settings(cx: &ViewContext<'_>) -> Vec<Row> {
    cx.server
        .settings()
        .into_iter()
        .map(|s| {
            vec![
                text(s.name),
                text(&s.setting),
                opt_text(s.unit),
                text(s.category),
                text(s.short_desc),
                Value::Null,
                text(s.context),
                text(s.vartype),
                text(s.source),
                opt_text(s.min_val),
                opt_text(s.max_val),
                opt_text(s.enumvals.as_deref()),
                text(&s.boot_val),
                text(&s.reset_val),
                Value::Null,
                Value::Null,
                Value::Bool(s.pending_restart),
            ]
        })
        .collect()
}
