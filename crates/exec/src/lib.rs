//! Executor: pull-based operators over plans from `sql`, expression
//! evaluation, and DML against the heap. See README.md.

pub mod agg;
mod agg_stats;
pub mod analyze;
mod checks;
pub mod commands;
pub mod copy;
pub mod cte;
pub mod dml;
pub mod dml_join;
pub mod eval;
pub mod functions;
mod hashagg;
pub(crate) mod index;
mod index_build;
mod indexscan;
mod join;
mod lateral;
mod lockrows;
pub mod ops;
mod parallel;
pub(crate) mod partition;
mod partition_dml;
pub mod ri;
mod search_cycle;
mod sequence_funcs;
mod sort;
mod spill;
mod srf;
pub mod subplan;
mod system_columns;
pub mod system_views;
pub mod table_stats;
pub mod triggers;
mod upsert;
pub mod vacuum;
pub(crate) mod window;
mod writer;

use common::interrupt::Interrupts;

use common::{PgError, PgResult, SqlState, Xid};
use storage::buffer::BufferPool;
use txn::{Snapshot, TransactionManager};
use types::Value;

pub type Row = Vec<Value>;

/// What functions like current_setting() and the system views need from
/// the session.
pub trait SessionHooks: system_views::ServerState {
    fn current_setting(&mut self, name: &str, missing_ok: bool) -> PgResult<Option<String>>;
    fn set_config(&mut self, name: &str, value: &str, is_local: bool) -> PgResult<String>;
    fn backend_pid(&self) -> i32;
    /// Whether backend `pid` waits for a heavyweight lock held or awaited
    /// by one of `by` (pg_isolation_test_session_is_blocked).
    fn is_backend_blocked(&self, pid: i32, by: &[i32]) -> bool;
    /// The backends that block backend `pid`'s lock wait (pg_blocking_pids).
    fn blocking_pids(&self, pid: i32) -> Vec<i32>;
    /// An advisory-lock function on `key` (pg_advisory_lock and friends):
    /// true when taken or released, false when a try found it taken or an
    /// unlock found it not held (after a WARNING).
    fn advisory_lock(
        &mut self,
        call: sql::expr::AdvisoryCall,
        key: txn::lock::AdvisoryKey,
    ) -> PgResult<bool>;
    /// Blocks until transaction `xid` (a row's other writer) has ended and
    /// returns its status; waits through the lock manager, within the
    /// statement's cancel, statement_timeout, lock_timeout and deadlock
    /// check.
    fn wait_for_transaction(&mut self, xid: common::Xid) -> PgResult<txn::XidStatus>;
    /// pg_advisory_unlock_all(): the session-level advisory locks.
    fn advisory_unlock_all(&mut self);
    /// A WARNING or NOTICE for the client, sent once the statement ends.
    fn notice(&mut self, notice: PgError);
    /// Asks the server to reload its configuration files (SIGHUP).
    fn reload_conf(&mut self) -> bool;
    /// pg_cancel_backend / pg_terminate_backend (`terminate`): whether the
    /// backend `pid` was signalled; 42501 when the current role may not.
    fn signal_backend(&mut self, pid: i32, terminate: bool) -> PgResult<bool>;
    /// A password verifier for `role` under the session's
    /// password_encryption (ALTER ROLE ... PASSWORD).
    fn encrypt_password(&mut self, role: &str, password: &str) -> PgResult<String>;
    /// How many backends are connected to database `db_oid` (DROP DATABASE).
    fn backends_in_database(&self, db_oid: common::Oid) -> usize;
    /// Remembers the value nextval()/setval() gave sequence `seq` in this
    /// session (currval, lastval).
    fn sequence_value_used(&mut self, seq: common::Oid, value: i64);
    /// WAL up to `lsn` (a sequence's log-ahead record) must be flushed when
    /// the transaction commits, unless synchronous_commit is off.
    fn flush_at_commit(&mut self, lsn: u64);
    /// The session's last value of `seq` (currval), or of the sequence
    /// nextval() last ran on when `seq` is None (lastval).
    fn sequence_last_value(&self, seq: Option<common::Oid>) -> Option<i64>;
    /// The current role's name (current_user: SET ROLE changes it), whose
    /// privileges role DDL checks.
    fn current_user(&self) -> String;
    /// The session's role (session_user), which cannot be dropped or renamed.
    fn session_user(&self) -> String;
    /// Table `table`'s cumulative statistics in the session's database, to
    /// count into, or None when track_counts is off.
    fn counters_to_update(
        &self,
        _table: common::Oid,
    ) -> Option<std::sync::Arc<table_stats::TableCounters>> {
        None
    }
    /// Row changes to `table` made by the open transaction, applied to its
    /// counters when the transaction ends.
    fn count_table_changes(&mut self, _table: common::Oid, _counts: table_stats::PendingCounts) {}
    /// Whether this session is an autovacuum worker (its VACUUM and
    /// ANALYZE count as autovacuum's).
    fn is_autovacuum(&self) -> bool {
        false
    }
    /// A new command id of the statement's transaction, after every one
    /// the statement has used: referential actions run as later commands
    /// (PostgreSQL's CommandCounterIncrement), and the session's next
    /// statement starts after the last one handed out.
    fn next_command_id(&mut self) -> u32;
    /// Whether deferrable constraint `constraint` is deferred in the
    /// current transaction: SET CONSTRAINTS said so, else its INITIALLY
    /// DEFERRED (`initially_deferred`).
    fn constraint_deferred(&self, constraint: common::Oid, initially_deferred: bool) -> bool;
    /// Keeps a deferred constraint's event for the transaction's commit.
    fn defer_ri_event(&mut self, event: ri::RiEvent);
    /// The deferred events kept so far, taken (a lone statement's
    /// transaction commits when it ends: `ri::fire_statement_deferred`).
    fn take_deferred_events(&mut self) -> Vec<ri::RiEvent>;
    /// Locks relation `rel` in `mode` to the end of the transaction (a
    /// table a statement reaches through a foreign key), waiting as a
    /// statement's own locks do.
    fn lock_relation(&mut self, rel: common::Oid, mode: txn::lock::LockMode) -> PgResult<()>;
    /// pg_notify(): a notification for `channel`, sent when the
    /// transaction commits.
    fn notify(&mut self, _channel: &str, _payload: &str) -> PgResult<()> {
        Err(PgError::unsupported("pg_notify is not available here"))
    }
    /// pg_notification_queue_usage(): the fraction of the queue in use.
    fn notification_queue_usage(&self) -> f64 {
        0.0
    }
    /// The session's search path, for binding function bodies.
    fn search_path(&self) -> Vec<String> {
        vec!["public".into()]
    }
    /// Plans a statement of a function body as the session plans its own
    /// (unplanned here: the binder's plan runs as it is).
    fn plan_function_statement(
        &self,
        stmt: sql::plan::BoundStatement,
        _catalog: &catalog::CatalogData,
    ) -> sql::plan::BoundStatement {
        stmt
    }
}

/// Everything a statement's execution needs.
pub struct ExecEnv<'a> {
    pub pool: &'static BufferPool,
    pub tm: &'static TransactionManager,
    /// Shared, so a Gather's workers hold the statement's catalog too.
    pub catalog: &'a std::sync::Arc<catalog::CatalogData>,
    /// The session's database.
    pub db_oid: common::Oid,
    pub db_name: &'a str,
    pub snapshot: &'a Snapshot,
    /// The (sub-)transaction this statement writes under (0: read only).
    pub xid: Xid,
    pub cid: u32,
    /// The transaction's isolation level: REPEATABLE READ and above fail
    /// with 40001 where READ COMMITTED re-checks a concurrently changed row.
    pub isolation: txn::IsolationLevel,
    pub params: &'a [Value],
    pub interrupts: &'a Interrupts,
    pub hooks: &'a mut dyn SessionHooks,
    /// Rows of enclosing queries, innermost last (correlated subqueries).
    pub outer: Vec<Row>,
    /// When statement_timeout expires, if set.
    pub deadline: Option<std::time::Instant>,
    /// Calls of `check_cancel` since the clock was last read.
    pub checks: std::cell::Cell<u32>,
    /// Per-node counters, when running under EXPLAIN ANALYZE.
    pub instrument: Option<Instrumentation>,
    /// Memory limits of sorts and hash tables.
    pub settings: ExecSettings,
    /// The session's TimeZone, for casts, date/time functions and text
    /// output: handed over explicitly, never read from a thread-local, so a
    /// worker thread evaluates expressions as the session would.
    pub io: types::IoSettings,
    /// Where spilling operators put their temporary files.
    pub temp: &'a std::sync::Arc<storage::temp_file::TempSpace>,
    /// Rows of WITH queries run once for the statement, and recursive
    /// queries' working tables (`cte.rs`).
    pub ctes: cte::CteStore,
    /// Answers of subqueries that read no outer row (`subplan.rs`).
    pub subplans: subplan::SubplanCache,
    /// Set while a Parallel Seq Scan is built (`parallel.rs`): the block
    /// allocator its participants share.
    pub parallel_scan: Option<std::sync::Arc<access::heap::parallel::ParallelBlocks>>,
    /// User functions' bodies as bound for this statement (`functions`).
    pub functions: functions::FunctionCache,
    /// Whether DML fires the table's triggers (not while ALTER TABLE fills
    /// an added column's default into the existing rows).
    pub fire_triggers: bool,
}

/// The executor's settings, typed once from the session's GUCs.
#[derive(Debug, Clone, Copy)]
pub struct ExecSettings {
    /// work_mem: memory of one sort or hash table before it spills.
    pub work_mem_kb: u64,
    /// hash_mem_multiplier: hash tables may use this many times work_mem.
    pub hash_mem_multiplier: f64,
    /// temp_file_limit (None: -1, no limit).
    pub temp_file_limit_kb: Option<u64>,
    /// maintenance_work_mem: what VACUUM's dead tuple ids may take before
    /// it cleans the indexes up and goes on.
    pub maintenance_work_mem_kb: u64,
    /// max_parallel_maintenance_workers: threads CREATE INDEX may sort
    /// with besides the session's own.
    pub max_parallel_maintenance_workers: u32,
    /// default_toast_compression: the method for columns that name none.
    pub default_toast_compression: access::toast::Compression,
    /// max_parallel_workers, at most max_worker_processes: the query
    /// workers running at once in the whole server (`parallel.rs`).
    pub max_parallel_workers: usize,
    /// parallel_leader_participation: a Gather's leader runs its plan too.
    pub parallel_leader_participation: bool,
}

impl Default for ExecSettings {
    fn default() -> Self {
        ExecSettings {
            work_mem_kb: 4096,
            hash_mem_multiplier: 2.0,
            temp_file_limit_kb: None,
            maintenance_work_mem_kb: 65536,
            max_parallel_maintenance_workers: 2,
            default_toast_compression: access::toast::Compression::Lz4,
            max_parallel_workers: 8,
            parallel_leader_participation: true,
        }
    }
}

impl ExecSettings {
    /// work_mem in bytes.
    pub fn work_mem(&self) -> usize {
        (self.work_mem_kb as usize).saturating_mul(1024)
    }

    /// maintenance_work_mem in bytes.
    pub fn maintenance_work_mem(&self) -> usize {
        (self.maintenance_work_mem_kb as usize).saturating_mul(1024)
    }

    /// What a hash table may hold: work_mem × hash_mem_multiplier.
    pub fn hash_mem(&self) -> usize {
        (self.work_mem() as f64 * self.hash_mem_multiplier) as usize
    }
}

/// What EXPLAIN ANALYZE collects while a plan runs.
#[derive(Debug, Default)]
pub struct Instrumentation {
    pub stats: sql::plan::explain::PlanStats,
    /// Whether to read the clock around every row (EXPLAIN's TIMING).
    pub timing: bool,
    /// Whether to read the thread's block counts around every row
    /// (EXPLAIN's BUFFERS).
    pub buffers: bool,
    /// What parallel workers counted, keyed by the plan's own nodes: each
    /// worker adds its counts here as it ends, even after a LIMIT stopped
    /// reading it (`parallel.rs`).
    pub workers: std::sync::Arc<std::sync::Mutex<sql::plan::explain::PlanStats>>,
}

impl Instrumentation {
    pub fn new(timing: bool, buffers: bool) -> Self {
        Instrumentation {
            stats: Default::default(),
            timing,
            buffers,
            workers: Default::default(),
        }
    }

    /// The counts of every node, the workers' added to the leader's. Called
    /// once the plan's operators are dropped (every worker has ended).
    pub fn into_stats(self) -> sql::plan::explain::PlanStats {
        let mut stats = self.stats;
        let workers = std::mem::take(&mut *self.workers.lock().expect("worker counts"));
        for (key, st) in workers {
            stats.entry(key).or_default().add(&st);
        }
        stats
    }
}

impl<'a> ExecEnv<'a> {
    /// An environment for a statement run inside this one (a function's
    /// statement, a foreign key's check): the same session, transaction
    /// and settings, with its own snapshot, command id and parameters,
    /// and fresh per-run state (subquery answers, CTE rows, no
    /// instrumentation, no parallel scan).
    pub(crate) fn nested<'s>(
        &'s mut self,
        snapshot: &'s Snapshot,
        cid: u32,
        params: &'s [Value],
    ) -> ExecEnv<'s> {
        let catalog = self.catalog;
        self.nested_in(catalog, snapshot, cid, params)
    }

    /// `nested`, over `catalog`: a DDL statement's own version of the
    /// catalog, for the rows it writes itself (a table rewrite's inserts
    /// find the indexes as the statement left them).
    pub(crate) fn nested_in<'s>(
        &'s mut self,
        catalog: &'s std::sync::Arc<catalog::CatalogData>,
        snapshot: &'s Snapshot,
        cid: u32,
        params: &'s [Value],
    ) -> ExecEnv<'s> {
        ExecEnv {
            pool: self.pool,
            tm: self.tm,
            catalog,
            db_oid: self.db_oid,
            db_name: self.db_name,
            snapshot,
            xid: self.xid,
            cid,
            isolation: self.isolation,
            params,
            interrupts: self.interrupts,
            hooks: &mut *self.hooks,
            outer: Vec::new(),
            deadline: self.deadline,
            checks: Default::default(),
            instrument: None,
            settings: self.settings,
            io: self.io,
            temp: self.temp,
            ctes: Default::default(),
            subplans: Default::default(),
            parallel_scan: None,
            functions: Default::default(),
            fire_triggers: self.fire_triggers,
        }
    }
}

impl ExecEnv<'_> {
    /// SERIALIZABLE: after a write to `rel` (at `tid` for an update or a
    /// delete, None for an insert, whose gaps the indexes' leaf pages
    /// cover), every concurrent serializable reader whose SIREAD lock
    /// covers it gets an rw-antidependency to this transaction, and a
    /// dangerous structure fails it (`txn::ssi`). After, not before: a
    /// reader locks under the page's share lock, so it either locked first
    /// or sees the change. Nothing for other isolation levels.
    pub(crate) fn predicate_write(
        &self,
        rel: common::RelFileLocator,
        tid: Option<access::heap::Tid>,
    ) -> PgResult<()> {
        use txn::ssi::PredicateTarget;
        let Some(sx) = &self.snapshot.ssi else {
            return Ok(());
        };
        let (db, rel) = (rel.db_oid, rel.rel_number);
        let whole = PredicateTarget::Relation { db, rel };
        let found = match tid {
            Some(t) => {
                let tuple = PredicateTarget::Tuple {
                    db,
                    rel,
                    block: t.block,
                    offset: t.offset,
                };
                if self.snapshot.own.subs.is_empty() {
                    sx.manager().release_written_tuple(sx, tuple);
                }
                sx.manager().conflict_in(
                    sx,
                    &[
                        tuple,
                        PredicateTarget::Page {
                            db,
                            rel,
                            block: t.block,
                        },
                        whole,
                    ],
                )
            }
            None => sx.manager().conflict_in(sx, &[whole]),
        };
        Ok(found?)
    }

    /// Sets a detail line of node `key` (`Sort Method`, ...) when running
    /// under EXPLAIN ANALYZE; `inner` puts it under the node's Hash line.
    pub(crate) fn node_detail(&mut self, key: usize, inner: bool, name: &str, value: String) {
        if let Some(ins) = self.instrument.as_mut() {
            let st = ins.stats.entry(key).or_default();
            let d = if inner {
                &mut st.inner_details
            } else {
                &mut st.details
            };
            match d.iter_mut().find(|(n, _)| n == name) {
                Some(slot) => slot.1 = value,
                None => d.push((name.to_string(), value)),
            }
        }
    }
}

impl<'a> ExecEnv<'a> {
    /// Who locks or changes rows: the statement's (sub)transaction, whose
    /// enclosing transaction's own locks never stand in its way. Borrows
    /// the snapshot, not the environment, so hooks stay usable beside it.
    pub fn requester(&self) -> access::heap::Requester<'a> {
        access::heap::Requester {
            xid: self.xid,
            snapshot: Some(self.snapshot),
        }
    }

    /// Whether statement_timeout has expired (reads the clock).
    pub fn timed_out(&self) -> bool {
        self.deadline
            .is_some_and(|d| std::time::Instant::now() >= d)
    }

    pub fn check_cancel(&self) -> PgResult<()> {
        if self.deadline.is_some() {
            // The clock is read every 16th check: a check is about a page's work.
            let n = self.checks.get().wrapping_add(1);
            self.checks.set(n);
            if n.is_multiple_of(16) && self.timed_out() {
                return Err(PgError::new(
                    SqlState::QUERY_CANCELED,
                    "canceling statement due to statement timeout",
                ));
            }
        }
        self.interrupts.check()
    }
}

pub use ops::{build, Operator};
