//! Plans: the operator tree for queries, and bound utility/DML statements.
//!
//! The binder emits a logical shape (scans, inner joins as written, WHERE as
//! a Filter); `plan_statement` (the planner stage, `planner.rs`, `joins.rs`)
//! turns it into the physical plan `exec` runs: quals pushed into scans, join
//! order and method chosen by cost (`cost.rs`). `explain.rs` prints it.

pub use crate::transaction::{TransactionModes, TransactionOp};
pub mod cost;
mod ddl;
pub mod explain;
mod indexonly;
pub mod indexpath;
mod joins;
pub mod locks;
pub mod needed;
pub mod parallel;
mod params;
pub mod partitions;
mod planner;
pub mod selfuncs;
mod system_columns;
pub mod walk;

pub use cost::{Estimate, PlanCacheMode, PlannerSettings, RelationSizes};
pub use ddl::{ConstraintSpec, ConstraintSpecKind, IndexSpec};
pub use indexpath::{IndexCond, IndexInfo, IndexOp, IndexPath};
pub(crate) use params::map_plan as map_plan_exprs;
pub use params::{statement_cost, substitute_params};
pub use system_columns::SystemColumn;

/// A table ANALYZE reads and the columns it analyses (None: all).
pub type AnalyzeTarget = (Arc<Table>, Option<Vec<usize>>);
pub use planner::{plan_statement, PlannerContext};

use std::sync::Arc;

use catalog::Table;
use common::Oid;
use types::DataType;

use crate::expr::{AggCall, Expr, WindowCall, WindowFrame};
use crate::srf::SrfCall;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SetOpKind {
    Union,
    Intersect,
    Except,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JoinKind {
    Inner,
    Left,
    Right,
    Full,
}

#[derive(Debug, Clone, PartialEq)]
pub struct SortKey {
    pub column: usize,
    pub descending: bool,
    pub nulls_first: bool,
}

/// The grouping sets of an Aggregate, expanded as PostgreSQL's
/// expand_grouping_sets does (ROLLUP, CUBE and nesting already multiplied
/// out, duplicates kept unless GROUP BY DISTINCT).
#[derive(Debug, Clone, PartialEq)]
pub struct GroupingSets {
    /// Each set as indexes into the Aggregate's keys; in a set's rows the
    /// keys it lacks read NULL.
    pub sets: Vec<Vec<usize>>,
    /// Each GROUPING() call as the key indexes of its arguments: its value
    /// has bit `n-1-i` set when argument `i` is not in the row's set.
    pub calls: Vec<Vec<usize>>,
}

impl GroupingSets {
    /// GROUPING(args) for the rows of set `set`.
    pub fn grouping_value(&self, call: usize, set: usize) -> i32 {
        let members = &self.sets[set];
        self.calls[call]
            .iter()
            .fold(0, |acc, k| (acc << 1) | i32::from(!members.contains(k)))
    }
}

/// The number of GROUPING() columns an Aggregate emits after its keys.
pub fn grouping_calls(sets: &Option<Box<GroupingSets>>) -> usize {
    sets.as_ref().map_or(0, |s| s.calls.len())
}

#[derive(Debug, Clone, PartialEq)]
pub enum Plan {
    /// Heap scan; `qual` conjuncts are checked page-at-a-time while decoding
    /// only the columns they need.
    SeqScan {
        table: Arc<Table>,
        qual: Vec<Expr>,
        /// The FROM alias, if any (EXPLAIN prints `Seq Scan on t alias`).
        alias: Option<String>,
        /// Rows end with one more column, the version's tid (int8, see
        /// `RowMark`), for a LockRows node above.
        tid: bool,
        /// Then these, computed from each row version (ctid, xmin, ...):
        /// only when the query names one, which keeps index-only scans off.
        system: Vec<SystemColumn>,
        /// Set when the planner chose to read the table through an index
        /// (`indexpath.rs`): the rows come in index order, bounded by its
        /// conditions, and `qual` holds only the other quals.
        index: Option<Box<IndexPath>>,
    },
    /// Constant rows (VALUES, SELECT without FROM).
    Values {
        rows: Vec<Vec<Expr>>,
        width: usize,
    },
    Filter {
        input: Box<Plan>,
        qual: Expr,
    },
    Project {
        input: Box<Plan>,
        exprs: Vec<Expr>,
    },
    /// Like Project, but the set-returning calls `srfs` (one-column ones)
    /// run for each input row in lockstep, yielding rows until every one
    /// is exhausted (a shorter one reads NULL meanwhile); `exprs` read the
    /// input row followed by the calls' current values. An input row for
    /// which every call yields nothing yields no row.
    ProjectSet {
        input: Box<Plan>,
        srfs: Vec<SrfCall>,
        exprs: Vec<Expr>,
    },
    /// A system view (pg_class, pg_stats, information_schema.tables,
    /// pg_stat_activity, pg_settings, ...): its rows are produced when the
    /// plan runs (`exec::system_views`), from the statement's catalog snapshot
    /// or the running server, so a cached plan sees fresh rows at every
    /// execution. `name` is the view's registry key (`pg_class`,
    /// `information_schema.tables`).
    SystemView {
        name: String,
        scan: ViewScan,
        alias: Option<String>,
        columns: Vec<OutputColumn>,
    },
    /// Set-returning functions in FROM (PostgreSQL's Function Scan): each
    /// call's columns side by side, the calls run in lockstep until all are
    /// exhausted (`ROWS FROM`; a shorter one's columns read NULL), then the
    /// row number (bigint) WITH ORDINALITY. The arguments read no input row
    /// (a LATERAL reference is an `OuterColumn`).
    FunctionScan {
        calls: Vec<SrfCall>,
        ordinality: bool,
        /// The FROM alias, if any (EXPLAIN prints `Function Scan on f alias`).
        alias: Option<String>,
    },
    /// Nested loop over the right input materialised once; `on` is checked
    /// on every pair.
    NestedLoop {
        left: Box<Plan>,
        right: Box<Plan>,
        kind: JoinKind,
        on: Option<Expr>,
        right_width: usize,
        left_width: usize,
    },
    /// A join whose right input reads the left row (LATERAL, and functions
    /// in FROM reading earlier FROM items): for each left row the right
    /// plan runs again with that row as its innermost outer row (its
    /// references to it are `OuterColumn { depth: 1 }`). Inner or Left.
    LateralJoin {
        left: Box<Plan>,
        right: Box<Plan>,
        kind: JoinKind,
        on: Option<Expr>,
        right_width: usize,
        left_width: usize,
    },
    /// Hash join: the right input is hashed on the right sides of
    /// `hash_cond` (equalities between a left and a right expression) and
    /// probed with each left row; `hash_cond` and `join_filter` are both
    /// checked on every candidate pair (hash equality is only a pre-filter).
    HashJoin {
        left: Box<Plan>,
        right: Box<Plan>,
        kind: JoinKind,
        hash_cond: Vec<Expr>,
        join_filter: Option<Expr>,
        right_width: usize,
        left_width: usize,
    },
    /// Output: group keys, then one int4 per GROUPING() call of `sets`,
    /// then aggregate results.
    Aggregate {
        input: Box<Plan>,
        keys: Vec<Expr>,
        aggs: Vec<AggCall>,
        /// GROUP BY GROUPING SETS / ROLLUP / CUBE (or a GROUPING() call):
        /// None groups by all of `keys` once.
        sets: Option<Box<GroupingSets>>,
    },
    Sort {
        input: Box<Plan>,
        keys: Vec<SortKey>,
    },
    /// Window functions sharing one window (PostgreSQL's WindowAgg): the
    /// input comes sorted by `partition` (ascending) then `order`; each
    /// output row is the input row followed by one column per call of
    /// `funcs` (their arguments read the input row).
    WindowAgg {
        input: Box<Plan>,
        partition: Vec<usize>,
        order: Vec<SortKey>,
        frame: WindowFrame,
        funcs: Vec<WindowCall>,
    },
    Limit {
        input: Box<Plan>,
        limit: Option<Expr>,
        offset: Option<Expr>,
        /// FETCH FIRST ... WITH TIES: the ORDER BY keys (columns of the
        /// input) whose ties with the last counted row are returned too;
        /// empty for LIMIT or ONLY.
        ties: Vec<SortKey>,
    },
    Distinct {
        input: Box<Plan>,
    },
    /// SELECT ... FOR UPDATE/SHARE: locks, for each row of `input`, the
    /// row versions its `marks` name (PostgreSQL's LockRows, planned above
    /// scans, joins and sorts and below LIMIT). A row whose version was
    /// updated meanwhile is re-checked on the newest one (EvalPlanQual:
    /// `input` runs again over just those versions).
    LockRows {
        input: Box<Plan>,
        marks: Vec<RowMark>,
    },
    SetOp {
        left: Box<Plan>,
        right: Box<Plan>,
        op: SetOpKind,
        all: bool,
    },
    /// A reference to a WITH query computed apart from the query reading it
    /// (PostgreSQL's CTE Scan): one that is MATERIALIZED, recursive,
    /// volatile or referenced more than once. Every reference carries the
    /// CTE's plan; `id` (unique in the statement) names the CTE. A `shared`
    /// CTE is run once per statement (`exec::cte`), its rows kept for every
    /// reference; otherwise this one reference streams its rows.
    CteScan {
        id: usize,
        name: String,
        alias: Option<String>,
        plan: Box<Plan>,
        shared: bool,
        /// A shared CTE reading enclosing queries' columns: how many
        /// enclosing queries' current rows its result depends on (it runs
        /// again when they change); 0 for one that reads none.
        outer_rows: usize,
        /// The CTE's column names (EXPLAIN's labels).
        columns: Vec<String>,
    },
    /// WITH RECURSIVE's `base UNION [ALL] recursive` (PostgreSQL's Recursive
    /// Union): `base`'s rows, then `recursive` run again and again over the
    /// rows the previous round produced (its `WorkTableScan`s with this
    /// `id`) until a round produces none. `distinct` (UNION) drops rows
    /// already produced.
    RecursiveUnion {
        id: usize,
        base: Box<Plan>,
        recursive: Box<Plan>,
        distinct: bool,
        width: usize,
    },
    /// The rows the previous round of RecursiveUnion `id` produced
    /// (PostgreSQL's WorkTable Scan); `name` is the CTE's.
    WorkTableScan {
        id: usize,
        name: String,
        alias: Option<String>,
        columns: Vec<String>,
        types: Vec<DataType>,
    },
    /// The RETURNING rows of the data-modifying WITH query `id`
    /// (`BoundStatement::WithModifying`): the leaf under its CTE Scans,
    /// which keep the rows (shared), so the statement runs once.
    ModifyingCteRows {
        id: usize,
        types: Vec<DataType>,
    },
    /// PostgreSQL's Gather (`parallel.rs` plans it): `input` runs in up to
    /// `workers` worker threads, and in the leader too unless
    /// parallel_leader_participation is off; their rows come up in no
    /// particular order. The one Seq Scan at the bottom of `input`'s
    /// Project/Filter chain is a Parallel Seq Scan: the participants take
    /// the table's blocks from one shared counter. When `input` is an
    /// Aggregate, that is a Partial Aggregate and this Gather is always
    /// the input of the Aggregate that finalizes it: each participant's
    /// groups, their aggregate states unfinished, are combined in the
    /// leader (`exec::parallel`). When `input` is a Sort, this is a Gather
    /// Merge: each participant sorts its share and the leader merges the
    /// sorted streams, so the rows come up in the Sort's order.
    Gather {
        input: Box<Plan>,
        workers: usize,
    },
}

/// The rows UPDATE ... FROM or DELETE ... USING changes: the target table
/// joined with the other FROM items under WHERE. Each row of `plan` starts
/// with the target's columns, then the target version's tid (int8, as a
/// `RowMark`'s), then the other items' columns (their tables' tids among
/// them). A target row the join yields more than once is changed once.
#[derive(Debug, Clone, PartialEq)]
pub struct ModifyJoin {
    pub plan: Plan,
    /// Every table of the join with its tid column (the target first, at
    /// column `target width`): a row updated concurrently is re-checked by
    /// running `plan` again over just these versions (EvalPlanQual).
    pub marks: Vec<RowMark>,
    /// The target scan's system columns, after its tid: RETURNING reads
    /// them of the version the statement wrote (`exec::dml_join`).
    pub target_system: Vec<SystemColumn>,
}

impl ModifyJoin {
    /// The column holding the target version's tid.
    pub fn tid_column(&self) -> usize {
        self.marks[0].tid_column
    }
}

/// A relation of a locking query's FROM, as LockRows sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct RowMark {
    pub table: Arc<Table>,
    /// The input column holding its row version's tid, as
    /// `(block << 16) | offset` in an int8; NULL where an outer join
    /// supplied no row.
    pub tid_column: usize,
    /// The lock taken, or None for a relation the clause does not name
    /// (its tid only pins its version for re-checks).
    pub lock: Option<(LockStrength, LockWait)>,
}

/// A locking clause's strength, weakest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum LockStrength {
    KeyShare,
    Share,
    NoKeyUpdate,
    Update,
}

impl LockStrength {
    /// As PostgreSQL names it in messages (LCS_asString).
    pub fn as_sql(self) -> &'static str {
        match self {
            LockStrength::KeyShare => "FOR KEY SHARE",
            LockStrength::Share => "FOR SHARE",
            LockStrength::NoKeyUpdate => "FOR NO KEY UPDATE",
            LockStrength::Update => "FOR UPDATE",
        }
    }
}

/// What a locking clause does about a row another transaction holds,
/// ordered as PostgreSQL combines clauses (the stronger policy wins).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum LockWait {
    Block,
    /// SKIP LOCKED.
    Skip,
    /// NOWAIT.
    Error,
}

impl Plan {
    /// Whether running the plan locks rows (it needs a transaction id).
    pub fn locks_rows(&self) -> bool {
        match self {
            Plan::LockRows { .. } => true,
            Plan::Limit { input, .. } | Plan::Project { input, .. } => input.locks_rows(),
            _ => false,
        }
    }

    /// A join's left and right inputs and the left input's width.
    pub fn join_inputs(&self) -> Option<(&Plan, &Plan, usize)> {
        match self {
            Plan::NestedLoop {
                left,
                right,
                left_width,
                ..
            }
            | Plan::HashJoin {
                left,
                right,
                left_width,
                ..
            }
            | Plan::LateralJoin {
                left,
                right,
                left_width,
                ..
            } => Some((left, right, *left_width)),
            _ => None,
        }
    }

    /// Columns in the rows this node produces.
    pub fn width(&self) -> usize {
        match self {
            Plan::SeqScan {
                table, tid, system, ..
            } => table.columns.len() + *tid as usize + system.len(),
            Plan::Values { width, .. } => *width,
            Plan::Project { exprs, .. } | Plan::ProjectSet { exprs, .. } => exprs.len(),
            Plan::FunctionScan {
                calls, ordinality, ..
            } => crate::srf::function_scan_width(calls, *ordinality),
            Plan::SystemView { columns, .. } => columns.len(),
            Plan::NestedLoop {
                left_width,
                right_width,
                ..
            }
            | Plan::HashJoin {
                left_width,
                right_width,
                ..
            }
            | Plan::LateralJoin {
                left_width,
                right_width,
                ..
            } => left_width + right_width,
            Plan::Aggregate {
                keys, aggs, sets, ..
            } => keys.len() + grouping_calls(sets) + aggs.len(),
            Plan::WindowAgg { input, funcs, .. } => input.width() + funcs.len(),
            Plan::Filter { input, .. }
            | Plan::Sort { input, .. }
            | Plan::Limit { input, .. }
            | Plan::LockRows { input, .. }
            | Plan::Gather { input, .. }
            | Plan::Distinct { input } => input.width(),
            Plan::SetOp { left, .. } => left.width(),
            Plan::CteScan { columns, .. } => columns.len(),
            Plan::RecursiveUnion { width, .. } => *width,
            Plan::WorkTableScan { types, .. } | Plan::ModifyingCteRows { types, .. } => types.len(),
        }
    }

    /// The types of the columns this node produces, where known (a VALUES
    /// list without rows has none).
    pub fn column_types(&self) -> Vec<DataType> {
        if let Some((left, right, left_width)) = self.join_inputs() {
            let mut t = left.column_types();
            t.resize(left_width, DataType::new(types::TypeId::Text));
            t.extend(right.column_types());
            return t;
        }
        match self {
            Plan::SeqScan {
                table, tid, system, ..
            } => {
                let mut t = table.column_types();
                if *tid {
                    t.push(DataType::new(types::TypeId::Int8));
                }
                t.extend(system.iter().map(|c| c.data_type()));
                t
            }
            Plan::Values { rows, .. } => rows
                .first()
                .map(|r| r.iter().map(Expr::data_type).collect())
                .unwrap_or_default(),
            Plan::Project { exprs, .. } | Plan::ProjectSet { exprs, .. } => {
                exprs.iter().map(Expr::data_type).collect()
            }
            Plan::FunctionScan {
                calls, ordinality, ..
            } => {
                let mut t: Vec<DataType> = calls
                    .iter()
                    .flat_map(|c| c.columns.iter().map(|c| c.ty))
                    .collect();
                if *ordinality {
                    t.push(DataType::new(types::TypeId::Int8));
                }
                t
            }
            Plan::SystemView { columns, .. } => columns.iter().map(|c| c.ty).collect(),
            Plan::NestedLoop { .. } | Plan::HashJoin { .. } | Plan::LateralJoin { .. } => {
                unreachable!("handled above")
            }
            Plan::Aggregate {
                keys, aggs, sets, ..
            } => keys
                .iter()
                .map(Expr::data_type)
                .chain((0..grouping_calls(sets)).map(|_| DataType::new(types::TypeId::Int4)))
                .chain(aggs.iter().map(|a| a.result))
                .collect(),
            Plan::WindowAgg { input, funcs, .. } => {
                let mut t = input.column_types();
                t.extend(funcs.iter().map(|f| f.result));
                t
            }
            Plan::Filter { input, .. }
            | Plan::Sort { input, .. }
            | Plan::Limit { input, .. }
            | Plan::LockRows { input, .. }
            | Plan::Gather { input, .. }
            | Plan::Distinct { input } => input.column_types(),
            Plan::SetOp { left, .. } => left.column_types(),
            Plan::CteScan { plan, .. } => plan.column_types(),
            Plan::RecursiveUnion { base, .. } => base.column_types(),
            Plan::WorkTableScan { types, .. } | Plan::ModifyingCteRows { types, .. } => {
                types.clone()
            }
        }
    }
}

/// A result column as the client sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct OutputColumn {
    pub name: String,
    pub ty: DataType,
    pub table_oid: u32,
    pub column_id: i16,
}

/// What a system view's rows come from, as EXPLAIN names its scan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ViewScan {
    /// A catalog relation: `Seq Scan on pg_class`.
    Relation(String),
    /// A set-returning function: `Function Scan on pg_stat_get_activity`.
    Function(String),
}

impl ViewScan {
    /// The relation's or function's name.
    pub fn source(&self) -> &String {
        match self {
            ViewScan::Relation(s) | ViewScan::Function(s) => s,
        }
    }
}

/// EXPLAIN's options.
#[derive(Debug, Clone, PartialEq)]
pub struct ExplainOptions {
    pub analyze: bool,
    pub verbose: bool,
    pub costs: bool,
    pub buffers: bool,
    pub timing: bool,
    pub summary: bool,
    pub format: ExplainFormat,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExplainFormat {
    Text,
    Json,
}

/// One action of ALTER TABLE (columns by 0-based index).
#[derive(Debug, Clone)]
pub enum AlterTableAction {
    /// ADD COLUMN, bare: its default, NOT NULL and constraints follow as
    /// actions of their own. With IF NOT EXISTS and the column present
    /// (when bound), a NOTICE and nothing else.
    AddColumn {
        column: catalog::Column,
        if_not_exists: bool,
    },
    /// Sets the column just added to its default in every existing row:
    /// an UPDATE of the table as it is after the ADD COLUMN (PostgreSQL
    /// rewrites the table instead), run as a command of its own so the
    /// actions after it see the rows it wrote.
    FillColumn(Box<BoundStatement>),
    /// DROP COLUMN (`index` None: IF EXISTS found no column `name`, a
    /// NOTICE). What lives on the column goes first: its indexes and this
    /// table's constraints on it silently, and with CASCADE the views,
    /// triggers and other tables' foreign keys that use it (without
    /// CASCADE those refuse the drop, 2BP01); then the column, and the
    /// rows are rewritten without it.
    DropColumn {
        name: String,
        index: Option<usize>,
        cascade: bool,
        /// Views reading the column (found by the binder; CASCADE).
        views: Vec<Arc<catalog::View>>,
        /// Triggers naming the column and other tables' foreign keys
        /// referencing it (CASCADE), each with its description.
        triggers: Vec<(Oid, String)>,
        foreign_keys: Vec<(Oid, String)>,
    },
    /// ALTER COLUMN ... TYPE: the column as it becomes, and each row's new
    /// value, computed from the row as it was (USING, or a cast of the
    /// column); the rows are rewritten.
    AlterColumnType {
        index: usize,
        column: catalog::Column,
        using: Expr,
    },
    RenameTable(String),
    /// The views a rename before it would break, with their query text
    /// rewritten to the new name (`bind/view_rename.rs`).
    RewriteViews(Vec<(Arc<catalog::View>, String)>),
    RenameColumn {
        index: usize,
        name: String,
    },
    /// SET DEFAULT (the expression's SQL text) or DROP DEFAULT (None).
    SetDefault {
        index: usize,
        default: Option<String>,
    },
    /// SET NOT NULL (true; existing rows are checked) or DROP NOT NULL.
    SetNotNull {
        index: usize,
        not_null: bool,
    },
    AddConstraint(ConstraintSpec),
    DropConstraint {
        name: String,
        if_exists: bool,
        /// CASCADE: foreign keys relying on the constraint's index go too.
        cascade: bool,
    },
    ValidateConstraint(String),
    /// OWNER TO the role that already owns every relation (the bootstrap
    /// superuser): nothing to change. Other owners are refused when bound.
    OwnerUnchanged,
    /// SET STORAGE: how the column's values are toasted from now on.
    SetStorage {
        index: usize,
        storage: catalog::Storage,
    },
    /// SET COMPRESSION (None: DEFAULT, default_toast_compression).
    SetCompression {
        index: usize,
        compression: Option<catalog::Compression>,
    },
}

/// INSERT's ON CONFLICT clause, bound.
#[derive(Debug, Clone)]
pub struct OnConflict {
    /// The unique indexes whose conflicts the clause handles (its
    /// arbiters): the ones the conflict target names or infers, or for DO
    /// NOTHING without a target every unique index of the table.
    pub arbiters: Vec<Oid>,
    /// The clause names its arbiters (a conflict target): EXPLAIN lists
    /// them only then.
    pub explicit: bool,
    pub action: ConflictAction,
}

impl OnConflict {
    /// The clause with `f` applied to each of DO UPDATE's expressions.
    pub fn map_exprs(self, f: &mut dyn FnMut(Expr) -> Expr) -> OnConflict {
        let action = match self.action {
            ConflictAction::Nothing => ConflictAction::Nothing,
            ConflictAction::Update { assignments, qual } => ConflictAction::Update {
                assignments: assignments.into_iter().map(|(i, e)| (i, f(e))).collect(),
                qual: qual.into_iter().map(f).collect(),
            },
        };
        OnConflict {
            arbiters: self.arbiters,
            explicit: self.explicit,
            action,
        }
    }
}

#[derive(Debug, Clone)]
pub enum ConflictAction {
    Nothing,
    /// DO UPDATE SET … WHERE …: the expressions read a row made of the
    /// existing row's columns followed by EXCLUDED's (the row proposed for
    /// insertion), so EXCLUDED's column i is `Column(width + i)`.
    Update {
        assignments: Vec<(usize, Expr)>,
        qual: Vec<Expr>,
    },
}

/// CREATE TEMP TABLE's ON COMMIT (PRESERVE ROWS unless written).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OnCommit {
    #[default]
    PreserveRows,
    /// Emptied at each transaction's end.
    DeleteRows,
    /// Dropped at the end of the transaction that created it.
    Drop,
}

/// A data-modifying statement (INSERT, UPDATE or DELETE, planned) in a
/// top-level WITH: `WITH d AS (DELETE ... RETURNING *) ...`.
#[derive(Debug, Clone)]
pub struct ModifyingCte {
    /// The CTE id its references' `Plan::ModifyingCteRows` carry.
    pub id: usize,
    pub name: String,
    pub statement: BoundStatement,
}

impl ModifyingCte {
    /// The CTE with its statement replaced by `f` of it (a copy if shared).
    pub fn map_statement(
        self: Arc<Self>,
        f: impl FnOnce(BoundStatement) -> BoundStatement,
    ) -> Arc<Self> {
        let mut c = Arc::unwrap_or_clone(self);
        c.statement = f(c.statement);
        Arc::new(c)
    }
}

/// The table columns declared with a domain, and the check their stored
/// values must pass (its argument: column 0 of a one-column row).
#[derive(Debug, Clone)]
pub struct DomainValidation {
    pub columns: Vec<(catalog::Table, usize)>,
    pub check: crate::expr::DomainCheck,
}

/// What ALTER TYPE does to an enum type.
#[derive(Debug, Clone, PartialEq)]
pub enum EnumAlteration {
    AddValue {
        label: String,
        position: catalog::user_types::LabelPosition,
        if_not_exists: bool,
    },
    RenameValue {
        from: String,
        to: String,
    },
}

#[derive(Debug, Clone)]
pub enum BoundStatement {
    /// A statement whose WITH holds data-modifying statements. Each runs
    /// exactly once, to completion, under the statement's snapshot and
    /// command id (so none sees another's changes): when its CTE is first
    /// read, else after `statement` (before its completion is reported).
    WithModifying {
        ctes: Vec<Arc<ModifyingCte>>,
        statement: Box<BoundStatement>,
    },
    /// EXPLAIN of a query or DML statement.
    Explain {
        statement: Box<BoundStatement>,
        options: ExplainOptions,
        /// The settings it was planned with (EXPLAIN prints costs under them).
        settings: Box<PlannerSettings>,
        /// Binding and planning time (EXPLAIN's `Planning Time`).
        planning_time: std::time::Duration,
    },
    Query {
        plan: Plan,
        columns: Vec<OutputColumn>,
    },
    Insert {
        table: Arc<Table>,
        source: Plan,
        returning: Option<(Vec<Expr>, Vec<OutputColumn>)>,
        bulk: bool,
        on_conflict: Option<Box<OnConflict>>,
    },
    Update {
        table: Arc<Table>,
        /// The target's alias (EXPLAIN's `Update on t x`).
        alias: Option<String>,
        qual: Vec<Expr>,
        assignments: Vec<(usize, Expr)>,
        returning: Option<(Vec<Expr>, Vec<OutputColumn>)>,
        /// The index the rows are found through, if the planner chose one
        /// (`qual` still holds every qual: a concurrently updated row is
        /// re-checked against all of them).
        index: Option<Box<IndexPath>>,
        /// UPDATE ... FROM: the rows come from this join instead (`qual`
        /// is then empty, `assignments` and `returning` read join rows).
        join: Option<Box<ModifyJoin>>,
    },
    Delete {
        table: Arc<Table>,
        alias: Option<String>,
        qual: Vec<Expr>,
        returning: Option<(Vec<Expr>, Vec<OutputColumn>)>,
        index: Option<Box<IndexPath>>,
        /// DELETE ... USING: as Update's `join`.
        join: Option<Box<ModifyJoin>>,
    },
    CreateTable {
        name: String,
        namespace: u32,
        columns: Vec<catalog::Column>,
        if_not_exists: bool,
        source: Option<(Plan, Vec<OutputColumn>)>,
        /// Serial columns' sequences, owned by (0: the new table, attnum).
        sequences: Vec<catalog::Sequence>,
        /// Column and table constraints, in the order written.
        constraints: Vec<ConstraintSpec>,
        /// A temporary table's ON COMMIT: what the session does with it at
        /// each transaction's end (`server::session::temp`).
        on_commit: OnCommit,
        /// PARTITION BY / PARTITION OF.
        partitioning: Option<Box<crate::bind::partition::PartitionSpec>>,
    },
    CreateIndex {
        table: Arc<Table>,
        spec: IndexSpec,
    },
    DropIndex {
        indexes: Vec<Arc<catalog::Index>>,
        missing: Vec<String>,
        /// CASCADE: foreign keys relying on the indexes are dropped.
        cascade: bool,
        /// The tables of those foreign keys (locked AccessExclusive).
        related: Vec<Oid>,
    },
    /// REINDEX INDEX / TABLE: the indexes rebuilt.
    Reindex {
        indexes: Vec<Arc<catalog::Index>>,
    },
    DropTable {
        tables: Vec<Arc<Table>>,
        missing: Vec<String>,
        /// CASCADE: other tables' foreign keys referencing these are dropped.
        cascade: bool,
        /// Other tables whose foreign keys the drop removes (those the
        /// dropped tables reference, and with CASCADE those referencing
        /// them): locked AccessExclusive, as PostgreSQL does.
        related: Vec<Oid>,
        /// Views reading the dropped tables (CASCADE), dropped first.
        views: Vec<Arc<catalog::View>>,
    },
    Truncate {
        tables: Vec<Arc<Table>>,
        /// With CASCADE: the tables referencing those (transitively) that
        /// are emptied too, each with a NOTICE.
        cascaded: Vec<Arc<Table>>,
        cascade: bool,
    },
    AddColumn {
        table: Arc<Table>,
        column: catalog::Column,
        if_not_exists: bool,
    },
    /// ALTER TABLE's other actions, applied in order.
    AlterTable {
        table: Arc<Table>,
        actions: Vec<AlterTableAction>,
        /// Other tables the actions reach (a foreign key's referenced
        /// table, the referencing tables of a constraint dropped with
        /// CASCADE), with the lock PostgreSQL takes on each.
        related: Vec<(Oid, txn::lock::LockMode)>,
    },
    /// SET CONSTRAINTS: the deferrable constraints named (None: ALL), or
    /// why the names do not do (raised when it runs, after the WARNING
    /// outside a transaction block, as PostgreSQL orders them).
    SetConstraints {
        constraints: Result<Option<Vec<Oid>>, common::PgError>,
        deferred: bool,
    },
    CreateSchema {
        name: String,
        if_not_exists: bool,
    },
    CreateView {
        name: String,
        namespace: u32,
        /// The query as SQL text, bound again wherever the view is used.
        query: String,
        columns: Vec<catalog::Column>,
        replace: bool,
    },
    DropView {
        views: Vec<Arc<catalog::View>>,
        missing: Vec<String>,
        /// Views reading the dropped ones (CASCADE), dropped first.
        dependents: Vec<Arc<catalog::View>>,
    },
    CreateSequence {
        seq: catalog::Sequence,
        if_not_exists: bool,
    },
    /// CREATE [OR REPLACE] FUNCTION: the definition (its oid not yet
    /// assigned), its body checked.
    CreateFunction {
        function: catalog::functions::Function,
        replace: bool,
    },
    /// DROP FUNCTION: the functions found, and the signatures IF EXISTS
    /// found nothing for.
    DropFunction {
        functions: Vec<Arc<catalog::functions::Function>>,
        missing: Vec<String>,
    },
    /// CREATE [OR REPLACE] TRIGGER: the definition (its oid not yet
    /// assigned), checked.
    CreateTrigger {
        trigger: catalog::triggers::Trigger,
        replace: bool,
    },
    /// DROP TRIGGER: the trigger, or IF EXISTS's notice.
    DropTrigger {
        trigger: Option<Arc<catalog::triggers::Trigger>>,
        missing: Option<String>,
    },
    /// ALTER TABLE ... ENABLE/DISABLE TRIGGER: the triggers named.
    SetTriggersEnabled {
        triggers: Vec<Arc<catalog::triggers::Trigger>>,
        /// tgenabled's new value (`O`, `A`, `R` or `D`).
        enabled: char,
    },
    /// CREATE TYPE name AS ENUM (labels).
    CreateEnumType {
        namespace: Oid,
        name: String,
        labels: Vec<String>,
    },
    /// ALTER TYPE of an enum type.
    AlterEnumType {
        type_oid: Oid,
        alteration: EnumAlteration,
    },
    /// DROP TYPE or DROP DOMAIN: the types found, the names IF EXISTS
    /// found nothing for.
    DropType {
        types: Vec<Arc<catalog::user_types::UserType>>,
        missing: Vec<String>,
        cascade: bool,
        domain: bool,
    },
    /// CREATE DOMAIN.
    CreateDomain {
        namespace: Oid,
        name: String,
        domain: catalog::domains::Domain,
    },
    /// ALTER DOMAIN: what the domain becomes, the stored values to check
    /// first (SET NOT NULL, ADD CHECK), and a notice (DROP CONSTRAINT IF
    /// EXISTS of a missing one).
    AlterDomain {
        type_oid: Oid,
        domain: catalog::domains::Domain,
        validate: Option<DomainValidation>,
        notice: Option<String>,
    },
    /// ALTER FUNCTION's attribute changes: the definition as it becomes.
    AlterFunction {
        function: catalog::functions::Function,
    },
    DropSequence {
        sequences: Vec<Arc<catalog::Sequence>>,
        missing: Vec<String>,
    },
    /// ALTER SEQUENCE ... OWNED BY: the column the sequence goes with (its
    /// table's oid and attnum), or none.
    AlterSequenceOwnedBy {
        sequence: Arc<catalog::Sequence>,
        owned_by: Option<(Oid, i16)>,
    },
    /// COMMENT ON: `object` None is a database that does not exist (only
    /// a warning in PostgreSQL), `name` the object's name as written.
    Comment {
        object: Option<catalog::ObjectAddress>,
        name: String,
        comment: Option<String>,
    },
    DropSchema {
        schemas: Vec<catalog::Namespace>,
        /// Names given with IF EXISTS that do not exist (a notice each).
        missing: Vec<String>,
        cascade: bool,
    },
    Set {
        name: String,
        /// None: the default (RESET, or SET ... TO DEFAULT).
        value: Option<String>,
        local: bool,
        /// Spelled RESET (the command tag says which).
        reset: bool,
    },
    Show {
        name: String,
    },
    ShowAll,
    Transaction(TransactionOp),
    /// Accepted for compatibility, does nothing (e.g. CREATE EXTENSION of a
    /// built-in). The string is the command tag.
    NoOp(String),
    Checkpoint,
    /// DO: `plan` evaluates the block's call once (one row, discarded).
    Do {
        plan: Plan,
    },
    /// LISTEN channel (takes effect at commit).
    Listen(String),
    /// UNLISTEN channel, or UNLISTEN * (None).
    Unlisten(Option<String>),
    /// NOTIFY channel [, payload] (sent at commit).
    Notify {
        channel: String,
        payload: String,
    },
    /// ANALYZE (or VACUUM ANALYZE, `vacuum`): tables with the columns to
    /// analyse (None: all).
    Analyze {
        targets: Vec<AnalyzeTarget>,
        verbose: bool,
        vacuum: bool,
    },
    /// VACUUM: tables (with ANALYZE's columns), and its options.
    Vacuum {
        targets: Vec<AnalyzeTarget>,
        verbose: bool,
        analyze: bool,
        truncate: bool,
        /// Visit all-visible pages too (DISABLE_PAGE_SKIPPING, FREEZE).
        scan_all: bool,
    },
    /// ALTER SYSTEM: `name` None is RESET ALL, `value` None a RESET.
    AlterSystem {
        name: Option<String>,
        value: Option<String>,
    },
    CreateDatabase {
        name: String,
    },
    DropDatabase {
        name: String,
        if_exists: bool,
    },
    CopyFrom(Box<CopyFromTarget>),
    CopyTo(Box<CopyToSource>),
    /// CREATE/ALTER/DROP ROLE (run by `exec::commands::role`), SET ROLE
    /// and SET SESSION AUTHORIZATION (run by the session).
    Role(crate::role::RoleStatement),
    /// DECLARE name CURSOR FOR query: `query` is a `Query`.
    DeclareCursor {
        name: String,
        options: crate::cursor::CursorOptions,
        query: Box<BoundStatement>,
    },
    /// FETCH or MOVE.
    Fetch(crate::cursor::FetchStmt),
    /// CLOSE name, or CLOSE ALL (None).
    CloseCursor(Option<String>),
    /// PREPARE name [(types)] AS statement: the statement as parsed (bound
    /// again when the catalog changes), its parameters' types (declared,
    /// else inferred) and its binding now.
    Prepare {
        name: String,
        statement: Box<crate::parse::ParsedStatement>,
        param_types: Vec<Option<types::TypeId>>,
        bound: Box<BoundStatement>,
    },
    /// EXECUTE name [(args)]: the arguments are bound but not yet coerced
    /// to the statement's parameter types, which only the session knows.
    ExecutePrepared {
        name: String,
        args: Vec<Expr>,
    },
    /// DEALLOCATE [PREPARE] name, or ALL (None).
    Deallocate(Option<String>),
    /// LOCK TABLE: each relation's oid and name (a view's base tables
    /// follow it), in the order to lock them.
    Lock {
        relations: Vec<(u32, String)>,
        mode: txn::lock::LockMode,
        nowait: bool,
    },
}

/// COPY ... FROM: where the rows go.
#[derive(Debug, Clone)]
pub struct CopyFromTarget {
    pub table: Arc<Table>,
    /// The table column each input field fills, in input order.
    pub columns: Vec<usize>,
    /// Columns the input leaves out, with their DEFAULT.
    pub defaults: Vec<(usize, Expr)>,
    /// Per input field: its domain's checks when the column is of a
    /// domain, over the row being built.
    pub domain_checks: Vec<Option<Expr>>,
    /// Per input field: FORCE_NOT_NULL / FORCE_NULL (CSV).
    pub force_not_null: Vec<bool>,
    pub force_null: Vec<bool>,
    pub options: crate::copy::CopyOptions,
    pub endpoint: crate::copy::CopyEndpoint,
}

/// COPY ... TO: what is unloaded.
#[derive(Debug, Clone)]
pub struct CopyToSource {
    pub plan: Plan,
    pub columns: Vec<OutputColumn>,
    /// Per column: FORCE_QUOTE (CSV).
    pub force_quote: Vec<bool>,
    pub options: crate::copy::CopyOptions,
    pub endpoint: crate::copy::CopyEndpoint,
    /// The table, for COPY table TO (None for a query).
    pub table_name: Option<String>,
}

impl OutputColumn {
    /// A computed column (no table of origin).
    pub fn new(name: &str, ty: types::TypeId) -> Self {
        OutputColumn {
            name: name.into(),
            ty: DataType::new(ty),
            table_oid: 0,
            column_id: 0,
        }
    }
}

impl BoundStatement {
    /// Whether running the statement locks rows (SELECT ... FOR UPDATE,
    /// also under EXPLAIN ANALYZE or DECLARE): it needs a transaction id,
    /// as a write does.
    pub fn locks_rows(&self) -> bool {
        match self {
            BoundStatement::Query { plan, .. } => plan.locks_rows(),
            BoundStatement::Explain {
                statement, options, ..
            } => options.analyze && statement.locks_rows(),
            BoundStatement::DeclareCursor { query, .. } => query.locks_rows(),
            BoundStatement::WithModifying { statement, .. } => statement.locks_rows(),
            _ => false,
        }
    }

    /// The command a read-only transaction refuses it as (CreateCommandTag:
    /// `SELECT FOR UPDATE`, ... after the first locked relation's strength).
    pub fn row_lock_command(&self) -> &'static str {
        fn strength(p: &Plan) -> Option<LockStrength> {
            match p {
                Plan::LockRows { marks, .. } => marks.iter().find_map(|m| m.lock).map(|l| l.0),
                Plan::Limit { input, .. } | Plan::Project { input, .. } => strength(input),
                _ => None,
            }
        }
        let plan = match self {
            BoundStatement::Query { plan, .. } => Some(plan),
            BoundStatement::Explain { statement, .. }
            | BoundStatement::DeclareCursor {
                query: statement, ..
            } => match &**statement {
                BoundStatement::Query { plan, .. } => Some(plan),
                _ => None,
            },
            _ => None,
        };
        match plan.and_then(strength) {
            Some(LockStrength::KeyShare) => "SELECT FOR KEY SHARE",
            Some(LockStrength::Share) => "SELECT FOR SHARE",
            Some(LockStrength::NoKeyUpdate) => "SELECT FOR NO KEY UPDATE",
            _ => "SELECT FOR UPDATE",
        }
    }

    pub fn columns(&self) -> Option<&[OutputColumn]> {
        static EXPLAIN_COLUMNS: std::sync::LazyLock<Vec<OutputColumn>> =
            std::sync::LazyLock::new(|| vec![OutputColumn::new("QUERY PLAN", types::TypeId::Text)]);
        match self {
            BoundStatement::Explain { .. } => Some(&EXPLAIN_COLUMNS),
            BoundStatement::Query { columns, .. } => Some(columns),
            BoundStatement::WithModifying { statement, .. } => statement.columns(),
            BoundStatement::Insert {
                returning: Some((_, c)),
                ..
            }
            | BoundStatement::Update {
                returning: Some((_, c)),
                ..
            }
            | BoundStatement::Delete {
                returning: Some((_, c)),
                ..
            } => Some(c),
            _ => None,
        }
    }
}
