//! Parallel query: Gather, and the Partial/Finalize Aggregate pair over it
//! (PostgreSQL's nodeGather.c and the parallel paths of nodeAgg.c).
//!
//! Rules:
//! 1. Workers are threads of one server-wide pool; at most
//!    max_parallel_workers (capped by max_worker_processes) run query work
//!    at once. A Gather reserves what it can of the workers it planned and
//!    runs with those (none, if none are free: the leader then runs the
//!    whole plan, as PostgreSQL does).
//! 2. A worker owns everything it reads (`Shared`: a copy of the Gather's
//!    input plan, the statement's catalog, snapshot and parameters), never
//!    a borrow of the session: a cursor's plan lives across messages while
//!    each message lends the executor a new environment.
//! 3. The participants divide the table through one `ParallelBlocks`
//!    (`access::heap::parallel`); rows come back in batches over one
//!    bounded channel, so a slow leader holds the workers back.
//! 4. A Gather that stops early (LIMIT, an error, a cancel) cancels its
//!    workers (their own interrupt flag, and no more blocks handed out)
//!    and waits until every one has finished before it returns, so a
//!    statement leaves no worker busy behind it.
//! 5. Every worker ends by sending exactly one `Done` or `Failed`; a panic
//!    in a worker is caught and becomes the query's error.
//! 6. A SERIALIZABLE transaction launches no workers (its reads must take
//!    predicate locks as that transaction); the leader runs the plan.

use std::collections::HashMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, RecvTimeoutError, SyncSender, TryRecvError};
use std::sync::{Arc, Condvar, LazyLock, Mutex};
use std::time::{Duration, Instant};

use access::heap::parallel::ParallelBlocks;
use common::interrupt::Interrupts;
use common::{PgError, PgResult, SqlState};
use sql::expr::{AggCall, Expr};
use sql::plan::explain::{children, node_key, PlanStats};
use sql::plan::needed::{needed_with, Needed};
use sql::plan::Plan;
use types::Value;

use crate::agg::{AggAccumulator, GroupKey, KeyHashBuilder};
use crate::eval::eval;
use crate::ops::{build, build_bounded, Operator};
use crate::table_stats::TableCounters;
use crate::{ExecEnv, ExecSettings, Instrumentation, Row};

/// Rows per message from a worker.
const BATCH: usize = 256;
/// Messages queued per worker before it waits for the leader.
const QUEUE_PER_WORKER: usize = 4;
/// How often a leader waiting for workers checks its own interrupts.
const WAIT_TICK: Duration = Duration::from_millis(20);

/// Query workers running now, in the whole server.
static WORKERS_BUSY: AtomicUsize = AtomicUsize::new(0);

/// Reserves up to `wanted` workers under `limit`; the reservation is
/// handed to the workers, each releasing its slot when it ends.
fn reserve_workers(wanted: usize, limit: usize) -> usize {
    let mut busy = WORKERS_BUSY.load(Ordering::Relaxed);
    loop {
        let n = wanted.min(limit.saturating_sub(busy));
        if n == 0 {
            return 0;
        }
        // Relaxed: the counter only bounds how many run; it orders nothing.
        match WORKERS_BUSY.compare_exchange_weak(
            busy,
            busy + n,
            Ordering::Relaxed,
            Ordering::Relaxed,
        ) {
            Ok(_) => return n,
            Err(now) => busy = now,
        }
    }
}

/// One reserved worker slot, released when the worker's job ends.
struct Slot;

impl Drop for Slot {
    fn drop(&mut self) {
        WORKERS_BUSY.fetch_sub(1, Ordering::Relaxed);
    }
}

type Job = Box<dyn FnOnce() + Send>;

/// Idle worker threads, each waiting for a job on its channel.
static IDLE: LazyLock<Mutex<Vec<std::sync::mpsc::Sender<Job>>>> =
    LazyLock::new(|| Mutex::new(Vec::new()));

/// How long an idle worker thread waits for work before it exits.
const IDLE_EXIT: Duration = Duration::from_secs(60);

/// Runs `job` on an idle pool thread, or on a new one.
fn run_on_worker(job: Job) {
    let idle = IDLE.lock().expect("worker pool").pop();
    let job = match idle {
        Some(tx) => match tx.send(job) {
            Ok(()) => return,
            // That thread timed out meanwhile: start another.
            Err(e) => e.0,
        },
        None => job,
    };
    let (tx, rx) = std::sync::mpsc::channel::<Job>();
    let spawned = std::thread::Builder::new()
        .name("parallel worker".into())
        .spawn(move || {
            let mut next = Some(job);
            while let Some(job) = next.take() {
                job();
                IDLE.lock().expect("worker pool").push(tx.clone());
                next = rx.recv_timeout(IDLE_EXIT).ok();
            }
        });
    if let Err(e) = spawned {
        // Out of threads: the job (and its slot) is dropped, which the
        // leader sees as a worker that failed.
        eprintln!("could not start a parallel worker: {e}");
    }
}

/// What one worker sends.
enum Message {
    Rows(Vec<Row>),
    /// A Partial Aggregate's groups: keys and unfinished states.
    Groups(Vec<(Row, Vec<AggAccumulator>)>),
    /// The worker ended (its EXPLAIN ANALYZE counters are in
    /// `Shared::instrument`).
    Done,
    Failed(PgError),
    /// A NOTICE (or WARNING, ...) raised in the worker, for the leader's
    /// client, as PostgreSQL's workers forward theirs.
    Notice(PgError),
}

/// Everything a worker reads, owned (rule 2).
struct Shared {
    /// A copy of the Gather's input.
    plan: Plan,
    catalog: Arc<catalog::CatalogData>,
    /// The statement's snapshot, made again in each worker (a snapshot
    /// caches its last commit-log lookup and stays in one thread).
    snapshot: (Arc<txn::SnapshotData>, txn::OwnXids, u32),
    params: Vec<Value>,
    db_oid: common::Oid,
    db_name: String,
    xid: common::Xid,
    cid: u32,
    isolation: txn::IsolationLevel,
    deadline: Option<Instant>,
    settings: ExecSettings,
    io: types::IoSettings,
    temp: Arc<storage::temp_file::TempSpace>,
    pool: &'static storage::buffer::BufferPool,
    tm: &'static txn::TransactionManager,
    /// The workers' own cancel flag, raised by the leader (rule 4); a
    /// cancel of the session reaches the leader, which raises this.
    interrupts: Interrupts,
    blocks: Arc<ParallelBlocks>,
    /// The scanned table's statistics (None: not counted).
    counters: Option<Arc<TableCounters>>,
    /// EXPLAIN ANALYZE's options (timing, buffers) and where a worker adds
    /// its counts when it ends, by the original plan's node keys.
    instrument: Option<(bool, bool, Arc<Mutex<PlanStats>>)>,
    /// The copy's node addresses → the original plan's, set before any
    /// worker starts.
    keys: std::sync::OnceLock<HashMap<usize, usize>>,
    needed: Needed,
    /// Rows the parent reads at most (a LIMIT over a Gather Merge): each
    /// participant's sort keeps only that many.
    bound: Option<usize>,
}

/// Counts workers still running; the leader waits for zero (rule 4).
#[derive(Default)]
struct Running {
    count: Mutex<usize>,
    ended: Condvar,
}

/// Marks one worker's end, however its job ends.
struct Ending(Arc<Running>);

impl Drop for Ending {
    fn drop(&mut self) {
        let mut n = self.0.count.lock().expect("running workers");
        *n -= 1;
        self.0.ended.notify_all();
    }
}

/// The workers of one Gather, from their start to their end.
struct Workers {
    shared: Arc<Shared>,
    /// One channel for all (Gather), or one per worker (Gather Merge,
    /// which must read a given worker's next row).
    rxs: Vec<Receiver<Message>>,
    running: Arc<Running>,
    launched: usize,
    /// Workers that have not sent their last message.
    live: usize,
}

impl Workers {
    /// Starts up to `planned` workers, each running `work` over `shared`.
    fn start(
        shared: Shared,
        planned: usize,
        original: &Plan,
        work: fn(&Shared, &mut ExecEnv, &SyncSender<Message>) -> PgResult<()>,
        per_worker: bool,
    ) -> Workers {
        let shared = Arc::new(shared);
        // The copy's nodes have their final addresses now, inside the Arc.
        let mut keys = HashMap::new();
        map_keys(&shared.plan, original, &mut keys);
        shared.keys.set(keys).expect("set once");
        // A SERIALIZABLE transaction's reads take predicate locks for it:
        // its plan runs in the leader alone (PostgreSQL before 12 kept such
        // transactions serial the same way).
        let planned = match shared.isolation {
            txn::IsolationLevel::Serializable => 0,
            _ => planned,
        };
        let launched = reserve_workers(planned, shared.settings.max_parallel_workers);
        let mut rxs = Vec::new();
        let mut txs = Vec::new();
        if per_worker {
            for _ in 0..launched {
                let (tx, rx) = sync_channel(QUEUE_PER_WORKER);
                txs.push(tx);
                rxs.push(rx);
            }
        } else {
            let (tx, rx) = sync_channel(QUEUE_PER_WORKER * launched.max(1));
            txs = vec![tx; launched];
            rxs.push(rx);
        }
        let running = Arc::new(Running::default());
        *running.count.lock().expect("running workers") = launched;
        for tx in txs {
            let (shared, ending) = (shared.clone(), Ending(running.clone()));
            run_on_worker(Box::new(move || {
                // Dropped in reverse: the slot is free before the leader
                // learns that this worker has ended.
                let _ending = ending;
                let _slot = Slot;
                let outcome = catch_unwind(AssertUnwindSafe(|| worker_main(&shared, &tx, work)));
                let last = match outcome {
                    Ok(Ok(())) => Message::Done,
                    Ok(Err(e)) => Message::Failed(e),
                    Err(panic) => Message::Failed(PgError::internal(format!(
                        "parallel worker failed: {}",
                        panic_text(&panic)
                    ))),
                };
                let _ = tx.send(last);
            }));
        }
        Workers {
            shared,
            rxs,
            running,
            launched,
            live: launched,
        }
    }

    /// The next message, waiting for one unless `wait` is false; None when
    /// every worker has ended (or, not waiting, none is ready).
    fn receive(&mut self, env: &mut ExecEnv, wait: bool) -> PgResult<Option<Message>> {
        debug_assert_eq!(self.rxs.len(), 1, "one channel for all");
        while self.live > 0 {
            let msg = if wait {
                match self.rxs[0].recv_timeout(WAIT_TICK) {
                    Ok(m) => m,
                    Err(RecvTimeoutError::Timeout) => {
                        env.check_cancel()?;
                        continue;
                    }
                    Err(RecvTimeoutError::Disconnected) => return Err(lost_worker()),
                }
            } else {
                match self.rxs[0].try_recv() {
                    Ok(m) => m,
                    Err(TryRecvError::Empty) => return Ok(None),
                    Err(TryRecvError::Disconnected) => return Err(lost_worker()),
                }
            };
            match msg {
                Message::Done => self.live -= 1,
                Message::Failed(e) => {
                    self.live -= 1;
                    return Err(e);
                }
                Message::Notice(n) => env.hooks.notice(n),
                other => return Ok(Some(other)),
            }
        }
        Ok(None)
    }

    /// Worker `i`'s next batch of rows (Gather Merge), waiting for it; None
    /// once that worker has ended.
    fn receive_from(&mut self, i: usize, env: &mut ExecEnv) -> PgResult<Option<Vec<Row>>> {
        loop {
            let msg = match self.rxs[i].recv_timeout(WAIT_TICK) {
                Ok(m) => m,
                Err(RecvTimeoutError::Timeout) => {
                    env.check_cancel()?;
                    continue;
                }
                Err(RecvTimeoutError::Disconnected) => return Err(lost_worker()),
            };
            match msg {
                Message::Rows(rows) => return Ok(Some(rows)),
                Message::Done => {
                    self.live -= 1;
                    return Ok(None);
                }
                Message::Failed(e) => {
                    self.live -= 1;
                    return Err(e);
                }
                Message::Notice(n) => env.hooks.notice(n),
                Message::Groups(_) => {
                    return Err(PgError::internal("unexpected message from a worker"))
                }
            }
        }
    }
}

impl Drop for Workers {
    fn drop(&mut self) {
        // Rule 4: stop them, then wait until each has ended.
        self.shared.interrupts.request_cancel();
        self.shared.blocks.stop();
        let drain = |rxs: &[Receiver<Message>]| {
            for rx in rxs {
                while rx.try_recv().is_ok() {}
            }
        };
        drain(&self.rxs);
        let mut n = self.running.count.lock().expect("running workers");
        while *n > 0 {
            // Unblock a worker waiting on its full channel.
            drain(&self.rxs);
            n = self
                .running
                .ended
                .wait_timeout(n, Duration::from_millis(5))
                .expect("running workers")
                .0;
        }
    }
}

fn lost_worker() -> PgError {
    PgError::internal("a parallel worker ended without a result")
}

fn panic_text(panic: &Box<dyn std::any::Any + Send>) -> String {
    panic
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "panic".into())
}

/// Pairs every node of a worker's copy with the original's address.
fn map_keys(copy: &Plan, original: &Plan, out: &mut HashMap<usize, usize>) {
    out.insert(node_key(copy), node_key(original));
    for (c, o) in children(copy).into_iter().zip(children(original)) {
        map_keys(c, o, out);
    }
}

/// A worker's whole run: its environment over `shared`, then `work`.
fn worker_main(
    shared: &Shared,
    tx: &SyncSender<Message>,
    work: fn(&Shared, &mut ExecEnv, &SyncSender<Message>) -> PgResult<()>,
) -> PgResult<()> {
    let mut hooks = WorkerHooks {
        table: shared.counters.clone(),
        cid: shared.cid,
        notices: tx.clone(),
    };
    let (data, own, command_id) = &shared.snapshot;
    let snapshot = txn::Snapshot::new(data.clone(), own.clone(), *command_id);
    let mut env = ExecEnv {
        pool: shared.pool,
        tm: shared.tm,
        catalog: &shared.catalog,
        db_oid: shared.db_oid,
        db_name: &shared.db_name,
        snapshot: &snapshot,
        xid: shared.xid,
        cid: shared.cid,
        isolation: shared.isolation,
        params: &shared.params,
        interrupts: &shared.interrupts,
        hooks: &mut hooks,
        outer: Vec::new(),
        deadline: shared.deadline,
        checks: Default::default(),
        instrument: shared
            .instrument
            .as_ref()
            .map(|(timing, buffers, _)| Instrumentation::new(*timing, *buffers)),
        settings: shared.settings,
        io: shared.io,
        temp: &shared.temp,
        ctes: Default::default(),
        subplans: Default::default(),
        parallel_scan: Some(shared.blocks.clone()),
        functions: Default::default(),
        fire_triggers: true,
    };
    let outcome = work(shared, &mut env, tx);
    // The counts go to the leader's EXPLAIN ANALYZE whether or not the
    // leader still reads this worker's rows.
    if let (Some(ins), Some((_, _, into))) = (env.instrument.take(), &shared.instrument) {
        let keys = shared.keys.get().expect("set before the workers start");
        let mut into = into.lock().expect("worker counts");
        for (key, st) in ins.stats {
            if let Some(&original) = keys.get(&key) {
                into.entry(original).or_default().add(&st);
            }
        }
    }
    match outcome {
        // Stopped by the leader: nobody reads the error.
        Err(_) if shared.interrupts.check().is_err() => Ok(()),
        other => other,
    }
}

/// A worker of a plain Gather: its rows, in batches.
fn send_rows(shared: &Shared, env: &mut ExecEnv, tx: &SyncSender<Message>) -> PgResult<()> {
    let mut op = build_bounded(&shared.plan, env, shared.needed.clone(), shared.bound)?;
    let mut batch = Vec::with_capacity(BATCH);
    while let Some(row) = op.next(env)? {
        batch.push(row);
        if batch.len() == BATCH {
            let full = std::mem::replace(&mut batch, Vec::with_capacity(BATCH));
            if tx.send(Message::Rows(full)).is_err() {
                return Ok(());
            }
        }
    }
    if !batch.is_empty() {
        let _ = tx.send(Message::Rows(batch));
    }
    Ok(())
}

/// A worker of a Partial Aggregate: its groups, states unfinished.
fn send_groups(shared: &Shared, env: &mut ExecEnv, tx: &SyncSender<Message>) -> PgResult<()> {
    let Plan::Aggregate {
        input, keys, aggs, ..
    } = &shared.plan
    else {
        unreachable!("a partial aggregate's Gather is over an Aggregate")
    };
    let groups = partial_groups(input, keys, aggs, env)?;
    let _ = tx.send(Message::Groups(groups));
    Ok(())
}

/// A Partial Aggregate over `input` in this participant: its groups and
/// their unfinished states. A plain aggregate has its one group even
/// over no rows. Not spilled: the planner plans this only for few groups.
fn partial_groups(
    input: &Plan,
    keys: &[Expr],
    aggs: &[AggCall],
    env: &mut ExecEnv,
) -> PgResult<Vec<(Row, Vec<AggAccumulator>)>> {
    let mut refs: Vec<&Expr> = keys.iter().collect();
    for a in aggs {
        refs.extend(a.input_exprs());
    }
    let mut op = build(input, env, needed_with(Some(Vec::new()), &refs))?;
    let mut index: HashMap<GroupKey, usize, KeyHashBuilder> = HashMap::default();
    let mut groups: Vec<(Row, Vec<AggAccumulator>)> = Vec::new();
    if keys.is_empty() {
        groups.push((Vec::new(), aggs.iter().map(AggAccumulator::new).collect()));
    }
    let mut args = Vec::new();
    let mut n = 0u64;
    while let Some(row) = op.next(env)? {
        n += 1;
        if n.is_multiple_of(crate::spill::ROWS_PER_CHECK) {
            env.check_cancel()?;
        }
        let g = if keys.is_empty() {
            0
        } else {
            let key = GroupKey(
                keys.iter()
                    .map(|k| eval(k, &row, env))
                    .collect::<PgResult<_>>()?,
            );
            match index.get(&key) {
                Some(&g) => g,
                None => {
                    groups.push((
                        key.0.clone(),
                        aggs.iter().map(AggAccumulator::new).collect(),
                    ));
                    index.insert(key, groups.len() - 1);
                    groups.len() - 1
                }
            }
        };
        for (acc, call) in groups[g].1.iter_mut().zip(aggs) {
            acc.feed(call, &row, env, &mut args)?;
        }
    }
    Ok(groups)
}

/// The leader's picture of a Gather's input: what it shares with workers.
fn shared_for(input: &Plan, env: &mut ExecEnv, needed: Needed) -> PgResult<Shared> {
    let table = scanned_table(input);
    let nblocks = env
        .pool
        .smgr()
        .nblocks(table.locator(), storage::ForkNumber::Main)?;
    Ok(Shared {
        plan: input.clone(),
        catalog: Arc::clone(env.catalog),
        snapshot: (
            env.snapshot.data.clone(),
            env.snapshot.own.clone(),
            env.snapshot.command_id,
        ),
        params: env.params.to_vec(),
        db_oid: env.db_oid,
        db_name: env.db_name.to_string(),
        xid: env.xid,
        cid: env.cid,
        isolation: env.isolation,
        deadline: env.deadline,
        settings: env.settings,
        io: env.io,
        temp: Arc::clone(env.temp),
        pool: env.pool,
        tm: env.tm,
        interrupts: Interrupts::new(),
        blocks: Arc::new(ParallelBlocks::new(nblocks)),
        counters: env.hooks.counters_to_update(table.oid),
        instrument: env
            .instrument
            .as_ref()
            .map(|i| (i.timing, i.buffers, i.workers.clone())),
        keys: Default::default(),
        needed,
        bound: None,
    })
}

/// The table of the Parallel Seq Scan at the bottom of a Gather's input.
fn scanned_table(p: &Plan) -> &catalog::Table {
    match p {
        Plan::SeqScan { table, .. } => table,
        Plan::Filter { input, .. }
        | Plan::Project { input, .. }
        | Plan::Aggregate { input, .. }
        | Plan::Sort { input, .. } => scanned_table(input),
        other => unreachable!("a Gather's input is a scan chain, not {other:?}"),
    }
}

/// Builds the leader's own copy of `plan`, its scan taking blocks from
/// `blocks`.
fn build_local<'p>(
    plan: &'p Plan,
    blocks: &Arc<ParallelBlocks>,
    env: &mut ExecEnv,
    needed: Needed,
    bound: Option<usize>,
) -> PgResult<Box<dyn Operator + 'p>> {
    let outside = env.parallel_scan.replace(blocks.clone());
    let op = build_bounded(plan, env, needed, bound);
    env.parallel_scan = outside;
    op
}

/// Gather: the rows of its input from every participant.
pub(crate) struct GatherOp<'p> {
    gather: &'p Plan,
    input: &'p Plan,
    planned: usize,
    needed: Needed,
    workers: Option<Workers>,
    /// The leader's own part, while it has rows.
    local: Option<Box<dyn Operator + 'p>>,
    batch: std::vec::IntoIter<Row>,
}

impl<'p> GatherOp<'p> {
    pub(crate) fn new(gather: &'p Plan, input: &'p Plan, planned: usize, needed: Needed) -> Self {
        GatherOp {
            gather,
            input,
            planned,
            needed,
            workers: None,
            local: None,
            batch: Vec::new().into_iter(),
        }
    }

    fn start(&mut self, env: &mut ExecEnv) -> PgResult<()> {
        let shared = shared_for(self.input, env, self.needed.clone())?;
        let blocks = shared.blocks.clone();
        let workers = Workers::start(shared, self.planned, self.input, send_rows, false);
        let launched = workers.launched;
        env.node_detail(
            node_key(self.gather),
            false,
            "Workers Launched",
            launched.to_string(),
        );
        if env.settings.parallel_leader_participation || launched == 0 {
            self.local = Some(build_local(
                self.input,
                &blocks,
                env,
                self.needed.clone(),
                None,
            )?);
        }
        self.workers = Some(workers);
        Ok(())
    }
}

impl Operator for GatherOp<'_> {
    fn next(&mut self, env: &mut ExecEnv) -> PgResult<Option<Row>> {
        if self.workers.is_none() {
            self.start(env)?;
        }
        loop {
            if let Some(row) = self.batch.next() {
                return Ok(Some(row));
            }
            let workers = self.workers.as_mut().expect("started");
            // What the workers have sent first, without waiting; then a
            // row of the leader's own; only then wait.
            let wait = self.local.is_none();
            match workers.receive(env, wait)? {
                Some(Message::Rows(rows)) => {
                    self.batch = rows.into_iter();
                    continue;
                }
                Some(_) => return Err(PgError::internal("unexpected message from a worker")),
                None if wait => return Ok(None),
                None => {}
            }
            if let Some(local) = self.local.as_mut() {
                match local.next(env)? {
                    Some(row) => return Ok(Some(row)),
                    None => self.local = None,
                }
            }
        }
    }
}

/// Gather Merge: every participant sorts its share (the Sort that is the
/// Gather's input) and the leader merges their streams in that order.
pub(crate) struct GatherMergeOp<'p> {
    gather: &'p Plan,
    input: &'p Plan,
    keys: &'p [sql::plan::SortKey],
    planned: usize,
    needed: Needed,
    bound: Option<usize>,
    workers: Option<Workers>,
    local: Option<Box<dyn Operator + 'p>>,
    /// Per stream (the workers', then the leader's): its current first
    /// row and the rest of its batch; None once it has ended.
    streams: Vec<Option<(Row, std::vec::IntoIter<Row>)>>,
}

impl<'p> GatherMergeOp<'p> {
    pub(crate) fn new(
        gather: &'p Plan,
        input: &'p Plan,
        keys: &'p [sql::plan::SortKey],
        planned: usize,
        needed: Needed,
        bound: Option<usize>,
    ) -> Self {
        GatherMergeOp {
            gather,
            input,
            keys,
            planned,
            needed,
            bound,
            workers: None,
            local: None,
            streams: Vec::new(),
        }
    }

    fn start(&mut self, env: &mut ExecEnv) -> PgResult<()> {
        let shared = Shared {
            bound: self.bound,
            ..shared_for(self.input, env, self.needed.clone())?
        };
        let blocks = shared.blocks.clone();
        let workers = Workers::start(shared, self.planned, self.input, send_rows, true);
        let launched = workers.launched;
        let key = node_key(self.gather);
        env.node_detail(key, false, "Workers Launched", launched.to_string());
        self.workers = Some(workers);
        if env.settings.parallel_leader_participation || launched == 0 {
            let (needed, bound) = (self.needed.clone(), self.bound);
            self.local = Some(build_local(self.input, &blocks, env, needed, bound)?);
        }
        let streams = launched + self.local.is_some() as usize;
        for i in 0..streams {
            let first = self.refill(i, Vec::new().into_iter(), env)?;
            self.streams.push(first);
        }
        Ok(())
    }

    /// Stream `i`'s next row and what remains of its batch.
    fn refill(
        &mut self,
        i: usize,
        mut rest: std::vec::IntoIter<Row>,
        env: &mut ExecEnv,
    ) -> PgResult<Option<(Row, std::vec::IntoIter<Row>)>> {
        let workers = self.workers.as_mut().expect("started");
        if i == workers.launched {
            let local = self.local.as_mut().expect("the leader's stream");
            return Ok(local.next(env)?.map(|r| (r, rest)));
        }
        loop {
            if let Some(row) = rest.next() {
                return Ok(Some((row, rest)));
            }
            match workers.receive_from(i, env)? {
                Some(batch) => rest = batch.into_iter(),
                None => return Ok(None),
            }
        }
    }
}

impl Operator for GatherMergeOp<'_> {
    fn next(&mut self, env: &mut ExecEnv) -> PgResult<Option<Row>> {
        if self.workers.is_none() {
            self.start(env)?;
        }
        // Few streams: the smallest head by a scan (ties to the lowest
        // stream).
        let mut best: Option<(usize, &Row)> = None;
        for (i, s) in self.streams.iter().enumerate() {
            let Some((row, _)) = s else { continue };
            if best.is_none_or(|(_, head)| crate::ops::compare_rows(row, head, self.keys).is_lt()) {
                best = Some((i, row));
            }
        }
        let Some((i, _)) = best else {
            return Ok(None);
        };
        let (row, rest) = self.streams[i].take().expect("chosen");
        self.streams[i] = self.refill(i, rest, env)?;
        Ok(Some(row))
    }
}

/// A Finalize Aggregate over a Gather over a Partial Aggregate: every
/// participant's groups combined, then finished.
pub(crate) struct FinalizeAggregateOp<'p> {
    gather: &'p Plan,
    partial: &'p Plan,
    planned: usize,
    output: Option<std::vec::IntoIter<Row>>,
}

impl<'p> FinalizeAggregateOp<'p> {
    pub(crate) fn new(gather: &'p Plan, partial: &'p Plan, planned: usize) -> Self {
        FinalizeAggregateOp {
            gather,
            partial,
            planned,
            output: None,
        }
    }

    fn run(&mut self, env: &mut ExecEnv) -> PgResult<Vec<Row>> {
        let Plan::Aggregate {
            input, keys, aggs, ..
        } = self.partial
        else {
            unreachable!("checked when built")
        };
        let started = Instant::now();
        let shared = shared_for(self.partial, env, None)?;
        let blocks = shared.blocks.clone();
        let mut workers = Workers::start(shared, self.planned, self.partial, send_groups, false);
        let launched = workers.launched;
        let gather_key = node_key(self.gather);
        env.node_detail(gather_key, false, "Workers Launched", launched.to_string());
        let mut parts: Vec<Vec<(Row, Vec<AggAccumulator>)>> = Vec::new();
        if env.settings.parallel_leader_participation || launched == 0 {
            let outside = env.parallel_scan.replace(blocks);
            let local = partial_groups(input, keys, aggs, env);
            env.parallel_scan = outside;
            parts.push(local?);
        }
        while let Some(msg) = workers.receive(env, true)? {
            match msg {
                Message::Groups(g) => parts.push(g),
                _ => return Err(PgError::internal("unexpected message from a worker")),
            }
        }
        drop(workers);
        let partial_rows: usize = parts.iter().map(Vec::len).sum();
        if let Some(ins) = env.instrument.as_mut() {
            let elapsed = started.elapsed();
            for (key, loops) in [(gather_key, 1), (node_key(self.partial), parts.len())] {
                let st = ins.stats.entry(key).or_default();
                st.loops += loops as u64;
                st.rows += partial_rows as u64;
                st.total += elapsed * loops as u32;
                st.first_row += elapsed * loops as u32;
            }
        }
        // Combined in the order the participants' groups came.
        let mut index: HashMap<GroupKey, usize, KeyHashBuilder> = HashMap::default();
        let mut groups: Vec<(Row, Vec<AggAccumulator>)> = Vec::new();
        for part in parts {
            for (key, accs) in part {
                let key = GroupKey(key);
                match index.get(&key) {
                    Some(&g) => {
                        for ((acc, other), call) in groups[g].1.iter_mut().zip(accs).zip(aggs) {
                            acc.combine(other, call)?;
                        }
                    }
                    None => {
                        groups.push((key.0.clone(), accs));
                        index.insert(key, groups.len() - 1);
                    }
                }
            }
        }
        groups
            .into_iter()
            .map(|(mut row, accs)| {
                for (acc, call) in accs.into_iter().zip(aggs) {
                    row.push(acc.finish(call)?);
                }
                Ok(row)
            })
            .collect()
    }
}

impl Operator for FinalizeAggregateOp<'_> {
    fn next(&mut self, env: &mut ExecEnv) -> PgResult<Option<Row>> {
        if self.output.is_none() {
            self.output = Some(self.run(env)?.into_iter());
        }
        Ok(self.output.as_mut().and_then(Iterator::next))
    }
}

/// A worker's session: it evaluates only parallel-safe expressions (the
/// planner keeps the rest in the leader), so anything reaching here is a
/// planner bug reported as an error, as PostgreSQL reports a function
/// that is not safe in a worker.
struct WorkerHooks {
    table: Option<Arc<TableCounters>>,
    cid: u32,
    /// The worker's channel to the leader, for its notices.
    notices: SyncSender<Message>,
}

fn not_in_worker(what: &str) -> PgError {
    PgError::new(
        SqlState::INVALID_TRANSACTION_STATE,
        format!("cannot {what} during a parallel operation"),
    )
}

impl crate::system_views::ServerState for WorkerHooks {
    fn backends(&self) -> Vec<crate::system_views::BackendInfo> {
        Vec::new()
    }
    fn database_stats(&self, _db: common::Oid) -> crate::system_views::DatabaseStats {
        Default::default()
    }
    fn checkpoints(&self) -> crate::system_views::CheckpointStats {
        Default::default()
    }
    fn start_time(&self) -> i64 {
        0
    }
    fn settings(&self) -> Vec<crate::system_views::SettingInfo> {
        Vec::new()
    }
}

impl crate::SessionHooks for WorkerHooks {
    fn current_setting(&mut self, _name: &str, _missing_ok: bool) -> PgResult<Option<String>> {
        Err(not_in_worker("read settings"))
    }
    fn set_config(&mut self, _name: &str, _value: &str, _is_local: bool) -> PgResult<String> {
        Err(not_in_worker("set parameters"))
    }
    fn backend_pid(&self) -> i32 {
        0
    }
    fn is_backend_blocked(&self, _pid: i32, _by: &[i32]) -> bool {
        false
    }
    fn blocking_pids(&self, _pid: i32) -> Vec<i32> {
        Vec::new()
    }
    fn advisory_lock(
        &mut self,
        _call: sql::expr::AdvisoryCall,
        _key: txn::lock::AdvisoryKey,
    ) -> PgResult<bool> {
        Err(not_in_worker("take advisory locks"))
    }
    fn wait_for_transaction(&mut self, _xid: common::Xid) -> PgResult<txn::XidStatus> {
        Err(not_in_worker("wait for a transaction"))
    }
    fn advisory_unlock_all(&mut self) {}
    fn notice(&mut self, notice: PgError) {
        // A leader gone no longer wants it.
        let _ = self.notices.send(Message::Notice(notice));
    }
    fn reload_conf(&mut self) -> bool {
        false
    }
    fn signal_backend(&mut self, _pid: i32, _terminate: bool) -> PgResult<bool> {
        Err(not_in_worker("signal backends"))
    }
    fn encrypt_password(&mut self, _role: &str, _password: &str) -> PgResult<String> {
        Err(not_in_worker("encrypt passwords"))
    }
    fn backends_in_database(&self, _db_oid: common::Oid) -> usize {
        0
    }
    fn sequence_value_used(&mut self, _seq: common::Oid, _value: i64) {}
    fn flush_at_commit(&mut self, _lsn: u64) {}
    fn sequence_last_value(&self, _seq: Option<common::Oid>) -> Option<i64> {
        None
    }
    fn current_user(&self) -> String {
        String::new()
    }
    fn session_user(&self) -> String {
        String::new()
    }
    fn counters_to_update(&self, _table: common::Oid) -> Option<Arc<TableCounters>> {
        self.table.clone()
    }
    fn next_command_id(&mut self) -> u32 {
        self.cid
    }
    fn constraint_deferred(&self, _constraint: common::Oid, initially_deferred: bool) -> bool {
        initially_deferred
    }
    fn defer_ri_event(&mut self, _event: crate::ri::RiEvent) {}
    fn take_deferred_events(&mut self) -> Vec<crate::ri::RiEvent> {
        Vec::new()
    }
    fn lock_relation(&mut self, _rel: common::Oid, _mode: txn::lock::LockMode) -> PgResult<()> {
        Err(not_in_worker("lock relations"))
    }
}
