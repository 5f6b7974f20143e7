//! The running server's state as the system views read it: the session's
//! answers to `exec::system_views::ServerState` (backends, per-database
//! counters, checkpoint counts, pg_settings' rows). The views themselves —
//! names, columns, rows — are defined in `exec::system_views`.

use std::sync::atomic::Ordering;

use exec::system_views::{BackendInfo, CheckpointStats, DatabaseStats, SettingInfo, SslInfo};
use storage::lwlock::wait_event_info;

use crate::context::ServerContext;
use crate::gucs::{self, Settings};
use crate::gucs_meta;

/// The state a session's views see.
pub(crate) struct ServerView<'a> {
    pub ctx: &'a ServerContext,
    /// The session's settings.
    pub settings: &'a Settings,
    /// The configuration files' settings the session started from.
    pub base: &'a Settings,
}

impl ServerView<'_> {
    pub fn backends(&self) -> Vec<BackendInfo> {
        let xids: std::collections::HashMap<i32, (u64, u64)> = self
            .ctx
            .tm
            .proc_states()
            .into_iter()
            .map(|(pid, xid, xmin)| (pid, (xid, xmin)))
            .collect();
        let nonzero = |x: u64| (x != 0).then_some(x);
        self.ctx
            .activity
            .backends()
            .iter()
            .map(|b| {
                let f = b.fields.lock().clone();
                BackendInfo {
                    db_oid: b.db_oid,
                    datname: b.datname.clone(),
                    pid: b.pid,
                    usename: b.usename.clone(),
                    application_name: f.application_name,
                    backend_start: b.backend_start,
                    query_start: f.query_start,
                    wait_event: wait_event_info(b.wait_event.load(Ordering::Relaxed)),
                    state: f.state,
                    backend_xid: xids.get(&b.pid).and_then(|p| nonzero(p.0)),
                    backend_xmin: xids.get(&b.pid).and_then(|p| nonzero(p.1)),
                    query: f.query,
                    backend_type: if b.autovacuum {
                        "autovacuum worker"
                    } else {
                        "client backend"
                    },
                    ssl: b.ssl.as_ref().map(|s| SslInfo {
                        version: s.version,
                        cipher: s.cipher.clone(),
                        bits: s.bits,
                        client_dn: s.client_dn.clone(),
                        client_serial: s.client_serial.clone(),
                        issuer_dn: s.issuer_dn.clone(),
                    }),
                }
            })
            .collect()
    }

    pub fn database_stats(&self, db: u32) -> DatabaseStats {
        let c = self.ctx.activity.database(db);
        let n = |a: &std::sync::atomic::AtomicU64| a.load(Ordering::Relaxed);
        DatabaseStats {
            xact_commit: n(&c.xact_commit),
            xact_rollback: n(&c.xact_rollback),
            blks_read: n(&c.blks_read),
            blks_hit: n(&c.blks_hit),
            temp_files: n(&c.temp.files),
            temp_bytes: n(&c.temp.bytes),
        }
    }

    pub fn checkpoints(&self) -> CheckpointStats {
        let ck = &self.ctx.checkpointer;
        let ms = |a: &std::sync::atomic::AtomicU64| a.load(Ordering::Relaxed) as f64 / 1000.0;
        CheckpointStats {
            timed: ck.timed.load(Ordering::Relaxed),
            requested: ck.requested.load(Ordering::Relaxed),
            write_time_ms: ms(&ck.write_time_us),
            sync_time_ms: ms(&ck.sync_time_us),
        }
    }

    /// pg_settings' rows: the session's values, where each came from, and
    /// whether a changed configuration file waits for a restart.
    pub fn settings(&self) -> Vec<SettingInfo> {
        gucs::GUCS
            .iter()
            .filter_map(|d| {
                let meta = gucs_meta::meta(d.name)?;
                let current = self.settings.get(d.name).unwrap_or(d.default);
                let in_files = self.base.get(d.name).unwrap_or(d.default);
                // A postmaster setting keeps its start value; a changed file
                // waits for a restart.
                let postmaster = d.context == gucs::GucContext::Postmaster;
                let server = if postmaster {
                    self.ctx.settings.get(d.name).unwrap_or(d.default)
                } else {
                    in_files
                };
                let source = if current != server {
                    "session"
                } else if server != d.default {
                    "configuration file"
                } else {
                    "default"
                };
                Some(SettingInfo {
                    name: d.name,
                    setting: gucs_meta::display_setting(meta, current),
                    unit: meta.unit,
                    category: meta.category,
                    short_desc: d.description,
                    context: d.context.name(),
                    vartype: meta.vartype.name(),
                    source,
                    min_val: meta.min,
                    max_val: meta.max,
                    enumvals: (!meta.enumvals.is_empty())
                        .then(|| format!("{{{}}}", meta.enumvals.join(","))),
                    boot_val: gucs_meta::display_setting(meta, d.default),
                    reset_val: gucs_meta::display_setting(meta, server),
                    pending_restart: postmaster && in_files != server,
                })
            })
            .collect()
    }
}
