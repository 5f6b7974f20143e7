//! Server-state views: pg_stat_activity, pg_stat_ssl, pg_stat_bgwriter, pg_stat_database,
//! pg_stat_lwlock, pg_buffercache, pg_settings. Binding reads their columns;
//! their rows are taken each time a plan's SystemView node runs (through the
//! session's `SessionHooks::view_rows`), so a prepared statement sees the
//! server as it is at each execution.

use std::sync::atomic::Ordering;

use sql::plan::OutputColumn;
use sql::RuntimeViews;
use storage::lwlock::{tranche_stats, wait_event_name, Tranche};
use types::{TypeId, Value};

use crate::context::ServerContext;
use crate::gucs::{self, Settings};
use crate::gucs_meta;

pub struct ServerViews<'a> {
    pub ctx: &'a ServerContext,
    /// The session's settings.
    pub settings: &'a Settings,
    /// The configuration files' settings the session started from.
    pub base: &'a Settings,
}

fn col(name: &str, ty: TypeId) -> OutputColumn {
    OutputColumn::new(name, ty)
}

fn text(s: &str) -> Value {
    Value::Text(s.to_string())
}

fn opt_ts(t: Option<i64>) -> Value {
    t.map(Value::Timestamptz).unwrap_or(Value::Null)
}

/// A view's rows, computed only when asked for (binding needs the columns alone).
type LazyRows<'a> = Box<dyn FnOnce() -> Vec<Vec<Value>> + 'a>;

impl RuntimeViews for ServerViews<'_> {
    fn view(&self, name: &str) -> Option<(Vec<OutputColumn>, Vec<Vec<Value>>)> {
        self.parts(name).map(|(cols, rows)| (cols, rows()))
    }

    fn columns(&self, name: &str) -> Option<Vec<OutputColumn>> {
        self.parts(name).map(|(cols, _)| cols)
    }
}

impl ServerViews<'_> {
    fn parts(&self, name: &str) -> Option<(Vec<OutputColumn>, LazyRows<'_>)> {
        let ctx = self.ctx;
        let pool = ctx.pool;
        Some(match name {
            "pg_stat_lwlock" => (
                vec![
                    col("tranche", TypeId::Text),
                    col("shared_acquires", TypeId::Int8),
                    col("exclusive_acquires", TypeId::Int8),
                    col("blocks", TypeId::Int8),
                    col("spin_delays", TypeId::Int8),
                ],
                Box::new(move || {
                    Tranche::ALL
                        .iter()
                        .map(|t| {
                            let s = tranche_stats(*t);
                            vec![
                                text(t.name()),
                                Value::Int8(s.shared_acquires as i64),
                                Value::Int8(s.exclusive_acquires as i64),
                                Value::Int8(s.blocks as i64),
                                Value::Int8(s.spin_delays as i64),
                            ]
                        })
                        .collect()
                }),
            ),
            "pg_stat_bgwriter" => (
                vec![
                    col("checkpoints_timed", TypeId::Int8),
                    col("checkpoints_req", TypeId::Int8),
                    col("checkpoint_write_time", TypeId::Float8),
                    col("checkpoint_sync_time", TypeId::Float8),
                    col("buffers_checkpoint", TypeId::Int8),
                    col("buffers_clean", TypeId::Int8),
                    col("maxwritten_clean", TypeId::Int8),
                    col("buffers_backend", TypeId::Int8),
                    col("buffers_backend_fsync", TypeId::Int8),
                    col("buffers_alloc", TypeId::Int8),
                    col("stats_reset", TypeId::Timestamptz),
                    col("buffers_freelist", TypeId::Int8),
                ],
                Box::new(move || {
                    let st = &pool.stats;
                    let n = |a: &std::sync::atomic::AtomicU64| {
                        Value::Int8(a.load(Ordering::Relaxed) as i64)
                    };
                    let ck = &ctx.checkpointer;
                    let ms = |a: &std::sync::atomic::AtomicU64| {
                        Value::Float8(a.load(Ordering::Relaxed) as f64 / 1000.0)
                    };
                    vec![vec![
                        n(&ck.timed),
                        n(&ck.requested),
                        ms(&ck.write_time_us),
                        ms(&ck.sync_time_us),
                        n(&st.buffers_checkpoint),
                        n(&st.buffers_clean),
                        n(&st.maxwritten_clean),
                        n(&st.buffers_backend),
                        Value::Int8(0),
                        n(&st.buffers_alloc),
                        Value::Timestamptz(ctx.start_time),
                        Value::Int8(pool.freelist_len() as i64),
                    ]]
                }),
            ),
            "pg_stat_wal" => (
                vec![
                    col("wal_records", TypeId::Int8),
                    col("wal_fpi", TypeId::Int8),
                    col("wal_bytes", TypeId::Int8),
                    col("wal_buffers_full", TypeId::Int8),
                    col("wal_write", TypeId::Int8),
                    col("wal_sync", TypeId::Int8),
                    col("wal_write_time", TypeId::Float8),
                    col("wal_sync_time", TypeId::Float8),
                    col("stats_reset", TypeId::Timestamptz),
                ],
                Box::new(move || {
                    let w = ctx.tm.wal().stats();
                    let i = |v: u64| Value::Int8(v as i64);
                    vec![vec![
                        i(w.records),
                        i(w.fpi),
                        i(w.bytes),
                        i(w.buffers_full),
                        i(w.write),
                        i(w.sync),
                        Value::Float8(w.write_time_ms),
                        Value::Float8(w.sync_time_ms),
                        Value::Timestamptz(ctx.start_time),
                    ]]
                }),
            ),
            "pg_stat_database" => (
                vec![
                    col("datid", TypeId::Oid),
                    col("datname", TypeId::Name),
                    col("numbackends", TypeId::Int4),
                    col("xact_commit", TypeId::Int8),
                    col("xact_rollback", TypeId::Int8),
                    col("blks_read", TypeId::Int8),
                    col("blks_hit", TypeId::Int8),
                    col("temp_files", TypeId::Int8),
                    col("temp_bytes", TypeId::Int8),
                ],
                Box::new(move || {
                    let cat = ctx.catalog.snapshot();
                    let backends = ctx.activity.backends();
                    cat.databases
                        .values()
                        .map(|d| {
                            let c = ctx.activity.database(d.oid);
                            let n = |a: &std::sync::atomic::AtomicU64| {
                                Value::Int8(a.load(Ordering::Relaxed) as i64)
                            };
                            vec![
                                Value::Oid(d.oid),
                                text(&d.name),
                                Value::Int4(
                                    backends.iter().filter(|b| b.db_oid == d.oid).count() as i32
                                ),
                                n(&c.xact_commit),
                                n(&c.xact_rollback),
                                n(&c.blks_read),
                                n(&c.blks_hit),
                                n(&c.temp.files),
                                n(&c.temp.bytes),
                            ]
                        })
                        .collect()
                }),
            ),
            "pg_stat_activity" => (
                vec![
                    col("datid", TypeId::Oid),
                    col("datname", TypeId::Name),
                    col("pid", TypeId::Int4),
                    col("usename", TypeId::Name),
                    col("application_name", TypeId::Text),
                    col("backend_start", TypeId::Timestamptz),
                    col("query_start", TypeId::Timestamptz),
                    col("wait_event_type", TypeId::Text),
                    col("wait_event", TypeId::Text),
                    col("state", TypeId::Text),
                    col("query", TypeId::Text),
                    col("backend_type", TypeId::Text),
                ],
                Box::new(move || {
                    ctx.activity
                        .backends()
                        .iter()
                        .map(|b| {
                            let f = b.fields.lock().clone();
                            let ev = wait_event_name(b.wait_event.load(Ordering::Relaxed));
                            vec![
                                Value::Oid(b.db_oid),
                                text(&b.datname),
                                Value::Int4(b.pid),
                                text(&b.usename),
                                text(&f.application_name),
                                Value::Timestamptz(b.backend_start),
                                opt_ts(f.query_start),
                                ev.map(|_| text("LWLock")).unwrap_or(Value::Null),
                                ev.map(text).unwrap_or(Value::Null),
                                text(f.state),
                                text(&f.query),
                                text("client backend"),
                            ]
                        })
                        .collect()
                }),
            ),
            // Every backend has a row; the TLS columns are null without TLS.
            "pg_stat_ssl" => (
                vec![
                    col("pid", TypeId::Int4),
                    col("ssl", TypeId::Bool),
                    col("version", TypeId::Text),
                    col("cipher", TypeId::Text),
                    col("bits", TypeId::Int4),
                    col("client_dn", TypeId::Text),
                    col("client_serial", TypeId::Numeric),
                    col("issuer_dn", TypeId::Text),
                ],
                Box::new(move || {
                    ctx.activity
                        .backends()
                        .iter()
                        .map(|b| {
                            let opt_text =
                                |s: &Option<String>| s.as_deref().map(text).unwrap_or(Value::Null);
                            match &b.ssl {
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
                                    opt_text(&s.client_dn),
                                    s.client_serial
                                        .as_deref()
                                        .and_then(|n| types::numeric::Numeric::parse(n).ok())
                                        .map(Value::numeric)
                                        .unwrap_or(Value::Null),
                                    opt_text(&s.issuer_dn),
                                ],
                            }
                        })
                        .collect()
                }),
            ),
            "pg_buffercache" => (
                vec![
                    col("bufferid", TypeId::Int4),
                    col("relfilenode", TypeId::Oid),
                    col("reltablespace", TypeId::Oid),
                    col("reldatabase", TypeId::Oid),
                    col("relforknumber", TypeId::Int2),
                    col("relblocknumber", TypeId::Int8),
                    col("isdirty", TypeId::Bool),
                    col("usagecount", TypeId::Int2),
                    col("pinning_backends", TypeId::Int4),
                ],
                Box::new(move || {
                    pool.buffer_infos()
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
                }),
            ),
            "pg_settings" => (
                vec![
                    col("name", TypeId::Text),
                    col("setting", TypeId::Text),
                    col("unit", TypeId::Text),
                    col("category", TypeId::Text),
                    col("short_desc", TypeId::Text),
                    col("extra_desc", TypeId::Text),
                    col("context", TypeId::Text),
                    col("vartype", TypeId::Text),
                    col("source", TypeId::Text),
                    col("min_val", TypeId::Text),
                    col("max_val", TypeId::Text),
                    // text[] in PostgreSQL; shown as its text until arrays exist.
                    col("enumvals", TypeId::Text),
                    col("boot_val", TypeId::Text),
                    col("reset_val", TypeId::Text),
                    col("sourcefile", TypeId::Text),
                    col("sourceline", TypeId::Int4),
                    col("pending_restart", TypeId::Bool),
                ],
                Box::new(move || {
                    gucs::GUCS
                        .iter()
                        .filter_map(|d| {
                            let meta = gucs_meta::meta(d.name)?;
                            let opt = |v: Option<&str>| v.map(text).unwrap_or(Value::Null);
                            let current = self.settings.get(d.name).unwrap_or(d.default);
                            let in_files = self.base.get(d.name).unwrap_or(d.default);
                            // A postmaster setting keeps its start value; a
                            // changed file waits for a restart.
                            let postmaster = d.context == gucs::GucContext::Postmaster;
                            let server = if postmaster {
                                self.ctx.settings.get(d.name).unwrap_or(d.default)
                            } else {
                                in_files
                            };
                            let pending_restart = postmaster && in_files != server;
                            let source = if current != server {
                                "session"
                            } else if server != d.default {
                                "configuration file"
                            } else {
                                "default"
                            };
                            let enumvals = (!meta.enumvals.is_empty())
                                .then(|| format!("{{{}}}", meta.enumvals.join(",")));
                            Some(vec![
                                text(d.name),
                                text(&gucs_meta::display_setting(meta, current)),
                                opt(meta.unit),
                                text(meta.category),
                                text(d.description),
                                Value::Null,
                                text(d.context.name()),
                                text(meta.vartype.name()),
                                text(source),
                                opt(meta.min),
                                opt(meta.max),
                                opt(enumvals.as_deref()),
                                text(&gucs_meta::display_setting(meta, d.default)),
                                text(&gucs_meta::display_setting(meta, server)),
                                Value::Null,
                                Value::Null,
                                Value::Bool(pending_restart),
                            ])
                        })
                        .collect()
                }),
            ),
            _ => return None,
        })
    }
}
