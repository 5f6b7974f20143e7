//! The autovacuum launcher and its workers (design.md §2 "background
//! threads"; PostgreSQL's autovacuum.c, simplified).
//!
//! Every `autovacuum_naptime` the launcher reads the tables' cumulative
//! statistics (`ServerContext::table_stats`) against pg_class.reltuples and
//! picks the tables over PostgreSQL's thresholds:
//!
//! - vacuum when n_dead_tup > autovacuum_vacuum_threshold +
//!   autovacuum_vacuum_scale_factor × reltuples, or n_ins_since_vacuum >
//!   autovacuum_vacuum_insert_threshold (unless -1) +
//!   autovacuum_vacuum_insert_scale_factor × reltuples;
//! - analyze when n_mod_since_analyze > autovacuum_analyze_threshold +
//!   autovacuum_analyze_scale_factor × reltuples.
//!
//! Up to `autovacuum_max_workers` worker threads then take the tables one at
//! a time. A worker is a session of its own on the table's database (as the
//! bootstrap superuser, outside max_connections, shown in pg_stat_activity
//! as "autovacuum worker") that runs VACUUM/ANALYZE through the ordinary
//! statement path, so its runs count as autovacuum's in the statistics.
//! `autovacuum = off` or `track_counts = off` (both reloadable) stop it
//! picking tables. At shutdown `stop` cancels the running workers'
//! statements and joins the threads before the shutdown checkpoint.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::interrupt::Interrupts;
use parking_lot::Mutex;

use crate::context::ServerContext;
use crate::gucs::{self, Settings};
use crate::session::Factory;
use crate::session_api::{ColumnDesc, ResultSink, SessionHandler};

/// The launcher's settings, typed once per round from the configuration
/// files' settings (all reloadable but `autovacuum_max_workers`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AutovacuumSettings {
    pub enabled: bool,
    pub naptime: Duration,
    pub vacuum_threshold: f64,
    pub vacuum_scale_factor: f64,
    /// None: insert-driven vacuums are off (-1).
    pub insert_threshold: Option<f64>,
    pub insert_scale_factor: f64,
    pub analyze_threshold: f64,
    pub analyze_scale_factor: f64,
    /// None: never logged (-1).
    pub log_min_duration: Option<Duration>,
}

impl AutovacuumSettings {
    pub fn from_settings(s: &Settings) -> Self {
        let get = |n: &str| s.get(n).ok().map(str::trim);
        let num = |n: &str, d: f64| get(n).and_then(|v| v.parse::<f64>().ok()).unwrap_or(d);
        let on = |n: &str| get(n).and_then(gucs::parse_bool).unwrap_or(true);
        let insert_threshold = num("autovacuum_vacuum_insert_threshold", 1000.0);
        let log = get("log_autovacuum_min_duration").unwrap_or("-1");
        AutovacuumSettings {
            enabled: on("autovacuum") && on("track_counts"),
            naptime: Duration::from_millis(
                get("autovacuum_naptime")
                    .and_then(|v| gucs::parse_duration_ms(v, 1000))
                    .unwrap_or(60_000)
                    .max(1000),
            ),
            vacuum_threshold: num("autovacuum_vacuum_threshold", 50.0),
            vacuum_scale_factor: num("autovacuum_vacuum_scale_factor", 0.2),
            insert_threshold: (insert_threshold >= 0.0).then_some(insert_threshold),
            insert_scale_factor: num("autovacuum_vacuum_insert_scale_factor", 0.2),
            analyze_threshold: num("autovacuum_analyze_threshold", 50.0),
            analyze_scale_factor: num("autovacuum_analyze_scale_factor", 0.1),
            log_min_duration: (log != "-1")
                .then(|| gucs::parse_duration_ms(log, 1).map(Duration::from_millis))
                .flatten(),
        }
    }

    /// Whether a table with these counters and pg_class.reltuples needs a
    /// vacuum and an analyze (relation_needs_vacanalyze).
    pub fn needs(&self, reltuples: f64, dead: i64, inserted: i64, modified: i64) -> (bool, bool) {
        let reltuples = reltuples.max(0.0);
        let vacuum = dead as f64 > self.vacuum_threshold + self.vacuum_scale_factor * reltuples
            || self
                .insert_threshold
                .is_some_and(|t| inserted as f64 > t + self.insert_scale_factor * reltuples);
        let analyze =
            modified as f64 > self.analyze_threshold + self.analyze_scale_factor * reltuples;
        (vacuum, analyze)
    }
}

/// One table to process.
#[derive(Debug, Clone)]
struct Job {
    db_name: String,
    /// `"schema"."table"`, quoted.
    qualified: String,
    /// `db.schema.table`, as the server log names it.
    display: String,
    vacuum: bool,
    analyze: bool,
}

/// The running launcher: what `stop` needs.
pub struct Autovacuum {
    stop: Arc<AtomicBool>,
    /// The interrupts of the workers' open sessions (cancelled at stop).
    running: Arc<Mutex<Vec<Arc<Interrupts>>>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Autovacuum {
    /// Stops the launcher: no new table is started, running statements are
    /// cancelled, and the threads are joined.
    pub fn stop(mut self) {
        // Relaxed: the launcher and workers poll the flag; nothing is
        // published through it.
        self.stop.store(true, Ordering::Relaxed);
        for i in self.running.lock().iter() {
            i.request_cancel();
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Starts the launcher thread.
pub fn start(factory: Arc<Factory>) -> Autovacuum {
    let stop = Arc::new(AtomicBool::new(false));
    let running = Arc::new(Mutex::new(Vec::new()));
    let (s, r) = (stop.clone(), running.clone());
    let thread = std::thread::Builder::new()
        .name("autovacuum launcher".into())
        .spawn(move || launcher_loop(&factory, &s, &r))
        .expect("start autovacuum launcher");
    Autovacuum {
        stop,
        running,
        thread: Some(thread),
    }
}

fn launcher_loop(factory: &Factory, stop: &AtomicBool, running: &Mutex<Vec<Arc<Interrupts>>>) {
    let ctx = &factory.ctx;
    let max_workers = ctx
        .settings
        .get("autovacuum_max_workers")
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
        .unwrap_or(3)
        .max(1);
    let mut last_round = Instant::now();
    loop {
        let settings = AutovacuumSettings::from_settings(&ctx.file_settings.read());
        // Sleep in short steps so a stop is seen promptly.
        while last_round.elapsed() < settings.naptime {
            if stop.load(Ordering::Relaxed) {
                return;
            }
            std::thread::sleep(Duration::from_millis(100).min(settings.naptime));
        }
        last_round = Instant::now();
        if stop.load(Ordering::Relaxed) || ctx.is_shutting_down() {
            return;
        }
        if !settings.enabled {
            continue;
        }
        let jobs = pick_tables(ctx, &settings);
        if jobs.is_empty() {
            continue;
        }
        let queue = Mutex::new(VecDeque::from(jobs));
        std::thread::scope(|scope| {
            for n in 0..max_workers.min(queue.lock().len()) {
                let (queue, settings) = (&queue, &settings);
                std::thread::Builder::new()
                    .name(format!("autovacuum worker {n}"))
                    .spawn_scoped(scope, move || {
                        // A panic (an invariant broken while vacuuming) ends
                        // this worker's round only: the launcher goes on.
                        let run = || worker(factory, queue, settings, stop, running);
                        if std::panic::catch_unwind(std::panic::AssertUnwindSafe(run)).is_err() {
                            crate::log("autovacuum worker ended by an internal error");
                        }
                    })
                    .expect("start autovacuum worker");
            }
        });
    }
}

/// The tables of every database that are over their thresholds.
fn pick_tables(ctx: &ServerContext, s: &AutovacuumSettings) -> Vec<Job> {
    let catalog = ctx.catalog.snapshot();
    let mut jobs = Vec::new();
    for db in catalog.databases.values() {
        if !db.allow_connections {
            continue;
        }
        for (oid, c) in ctx.table_stats.database(db.oid) {
            let Some(t) = catalog.tables.get(&oid) else {
                continue;
            };
            // Only their session can reach temporary tables (PostgreSQL's
            // autovacuum skips them too).
            if catalog.is_temp_namespace(t.namespace) {
                continue;
            }
            let r = Ordering::Relaxed;
            let (vacuum, analyze) = s.needs(
                t.reltuples,
                c.n_dead_tup.load(r),
                c.n_ins_since_vacuum.load(r),
                c.n_mod_since_analyze.load(r),
            );
            if !vacuum && !analyze {
                continue;
            }
            let schema = catalog
                .namespaces
                .get(&t.namespace)
                .map_or("public", |n| n.name.as_str());
            jobs.push(Job {
                db_name: db.name.clone(),
                qualified: format!("{}.{}", quote(schema), quote(&t.name)),
                display: format!("{}.{schema}.{}", db.name, t.name),
                vacuum,
                analyze,
            });
        }
    }
    jobs
}

fn quote(ident: &str) -> String {
    format!("\"{}\"", ident.replace('"', "\"\""))
}

/// A worker: takes tables off `queue` until it is empty or the server
/// stops, keeping one session per database it visits.
fn worker(
    factory: &Factory,
    queue: &Mutex<VecDeque<Job>>,
    settings: &AutovacuumSettings,
    stop: &AtomicBool,
    running: &Mutex<Vec<Arc<Interrupts>>>,
) {
    let ctx = &factory.ctx;
    let interrupts = Arc::new(Interrupts::new());
    running.lock().push(interrupts.clone());
    let backend = ctx.registry.register(interrupts.clone());
    let mut sessions: HashMap<String, Box<dyn SessionHandler>> = HashMap::new();
    loop {
        if stop.load(Ordering::Relaxed) || ctx.is_shutting_down() {
            break;
        }
        let Some(job) = queue.lock().pop_front() else {
            break;
        };
        let session = match sessions.entry(job.db_name.clone()) {
            std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
            std::collections::hash_map::Entry::Vacant(e) => {
                match factory.open_autovacuum(&job.db_name, backend.pid(), interrupts.clone()) {
                    Ok(s) => e.insert(s),
                    Err(err) => {
                        crate::log(&format!(
                            "autovacuum: could not open database \"{}\": {}",
                            job.db_name, err.message
                        ));
                        continue;
                    }
                }
            }
        };
        run_job(session.as_mut(), &job, settings);
        interrupts.clear_cancel();
    }
    sessions.clear();
    running.lock().retain(|i| !Arc::ptr_eq(i, &interrupts));
}

fn run_job(session: &mut dyn SessionHandler, job: &Job, settings: &AutovacuumSettings) {
    let sql = match (job.vacuum, job.analyze) {
        (true, true) => format!("VACUUM (ANALYZE) {}", job.qualified),
        (true, false) => format!("VACUUM {}", job.qualified),
        _ => format!("ANALYZE {}", job.qualified),
    };
    let started = Instant::now();
    let what = if job.vacuum { "vacuum" } else { "analyze" };
    // No statement_timeout for maintenance, as PostgreSQL's workers.
    let _ = session.simple_query("SET statement_timeout = 0", &mut DiscardSink);
    match session.simple_query(&sql, &mut DiscardSink) {
        Ok(_) => {
            if settings
                .log_min_duration
                .is_some_and(|d| started.elapsed() >= d)
            {
                crate::log(&format!(
                    "automatic {what} of table \"{}\": elapsed: {:.2} s",
                    job.display,
                    started.elapsed().as_secs_f64()
                ));
            }
        }
        // A table dropped since it was picked is no error worth a line.
        Err(e) if e.code == common::SqlState::UNDEFINED_TABLE => {}
        Err(e) => crate::log(&format!(
            "automatic {what} of table \"{}\" failed: {}",
            job.display, e.message
        )),
    }
}

/// A statement's output nobody reads.
pub(crate) struct DiscardSink;

impl ResultSink for DiscardSink {
    fn columns(&mut self, _: &[ColumnDesc]) -> common::PgResult<()> {
        Ok(())
    }
    fn row(&mut self, _: &[types::Value]) -> common::PgResult<()> {
        Ok(())
    }
    fn complete(&mut self, _: &str) -> common::PgResult<()> {
        Ok(())
    }
    fn notice(&mut self, _: &common::PgError) -> common::PgResult<()> {
        Ok(())
    }
    fn output_settings(&mut self, _: &types::IoSettings) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thresholds_are_postgresql_s() {
        let mut s = Settings::defaults();
        let d = AutovacuumSettings::from_settings(&s);
        assert!(d.enabled);
        assert_eq!(d.naptime, Duration::from_secs(60));
        // 1000 rows: vacuum after 50 + 200 dead, analyze after 50 + 100 changes.
        assert_eq!(d.needs(1000.0, 250, 0, 150), (false, false));
        assert_eq!(d.needs(1000.0, 251, 0, 151), (true, true));
        // Never analysed (-1): as 0 rows.
        assert_eq!(d.needs(-1.0, 51, 0, 0), (true, false));
        // Inserts: 1000 + 0.2 × reltuples.
        assert_eq!(d.needs(1000.0, 0, 1201, 0), (true, false));
        s.set_startup("autovacuum_vacuum_insert_threshold", "-1")
            .unwrap();
        s.set_startup("autovacuum_naptime", "1").unwrap();
        s.set_startup("track_counts", "off").unwrap();
        let t = AutovacuumSettings::from_settings(&s);
        assert_eq!(t.needs(1000.0, 0, 100_000, 0), (false, false));
        assert_eq!(t.naptime, Duration::from_secs(1));
        assert!(!t.enabled);
    }
}
