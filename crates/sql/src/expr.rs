//! Bound expressions: names resolved to row positions, types resolved,
//! operators and functions chosen. Built once per statement, evaluated per row
//! by `exec` (PostgreSQL's ExprState).

use std::sync::Arc;

use common::Oid;
use types::functions::BuiltinFunction;
use types::ops::{BinaryOp, LikePattern};
use types::{DataType, TypeId, Value};

use crate::plan::Plan;

pub use catalog::functions::{ParallelSafety, Volatility};

/// A call of a user-defined function (CREATE FUNCTION), bound against
/// the definition the statement's catalog version holds. The labels are
/// copied out of it so the planner can judge a plan's parallel safety and
/// volatility without a catalog lookup (`crate::parallel_safety`).
#[derive(Debug, Clone, PartialEq)]
pub struct UserFuncCall {
    pub function: Arc<catalog::functions::Function>,
    /// The arguments, coerced to the declared types, defaults filled in.
    pub args: Vec<Expr>,
    pub ret: DataType,
    pub volatility: Volatility,
    pub parallel: ParallelSafety,
}

/// A value coerced to a domain: the domain's NOT NULL and CHECK
/// constraints, bound with the value as column 0 of a one-column row (the
/// checks are no children of the node: they read no row of the plan).
#[derive(Debug, Clone, PartialEq)]
pub struct DomainCheck {
    /// The value, already of the domain's base type.
    pub arg: Expr,
    pub domain: String,
    pub not_null: bool,
    /// (constraint name, boolean expression over the value).
    pub checks: Vec<(String, Expr)>,
}

/// A built-in variadic function called with `VARIADIC arr`: the array's
/// elements (all dimensions, in storage order) become the function's
/// trailing arguments when the call runs. `element` converts one element,
/// bound as column 0 of a one-column row (no child of the node, as a
/// domain's checks), to what the function takes (text for `"any"`, json).
#[derive(Debug, Clone, PartialEq)]
pub struct VariadicSpread {
    pub func: Builtin,
    /// The arguments before the array, converted to the function's types,
    /// then the array.
    pub args: Vec<Expr>,
    pub element: Expr,
    /// A NULL array stands for no arguments (format), else the result is NULL.
    pub null_is_empty: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AggFunc {
    CountStar,
    Count,
    Sum,
    Avg,
    Min,
    Max,
    BoolAnd,
    BoolOr,
    StringAgg,
    /// json_agg / jsonb_agg: every input (NULLs as json null) in an array;
    /// the binder converts the input to json / jsonb.
    JsonAgg,
    JsonbAgg,
    /// json_object_agg / jsonb_object_agg(key, value).
    JsonObjectAgg,
    JsonbObjectAgg,
    /// array_agg(x): the inputs, NULLs included, as an array (of one more
    /// dimension when the inputs are arrays).
    ArrayAgg,
    /// var_pop / var_samp (variance) and, with `root`, stddev_pop /
    /// stddev_samp (stddev): numeric for integer and numeric input,
    /// double precision for floating-point input.
    Variance {
        sample: bool,
        root: bool,
    },
    /// bit_and / bit_or / bit_xor over integers.
    BitAnd,
    BitOr,
    BitXor,
    /// The two-argument statistics over double precision (Y, X).
    Regr(RegrFunc),
    /// Ordered-set aggregates (`WITHIN GROUP (ORDER BY x)`): the sorted
    /// value is the first argument, a direct argument (the fraction) the
    /// second.
    PercentileCont,
    PercentileDisc,
    Mode,
}

/// covar_*, corr and the regr_* family: one transition state (N, Sx, Sxx,
/// Sy, Syy, Sxy), different final functions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RegrFunc {
    CovarPop,
    CovarSamp,
    Corr,
    Count,
    Sxx,
    Syy,
    Sxy,
    AvgX,
    AvgY,
    R2,
    Slope,
    Intercept,
}

impl RegrFunc {
    pub fn from_name(name: &str) -> Option<RegrFunc> {
        use RegrFunc::*;
        Some(match name {
            "covar_pop" => CovarPop,
            "covar_samp" => CovarSamp,
            "corr" => Corr,
            "regr_count" => Count,
            "regr_sxx" => Sxx,
            "regr_syy" => Syy,
            "regr_sxy" => Sxy,
            "regr_avgx" => AvgX,
            "regr_avgy" => AvgY,
            "regr_r2" => R2,
            "regr_slope" => Slope,
            "regr_intercept" => Intercept,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        use RegrFunc::*;
        match self {
            CovarPop => "covar_pop",
            CovarSamp => "covar_samp",
            Corr => "corr",
            Count => "regr_count",
            Sxx => "regr_sxx",
            Syy => "regr_syy",
            Sxy => "regr_sxy",
            AvgX => "regr_avgx",
            AvgY => "regr_avgy",
            R2 => "regr_r2",
            Slope => "regr_slope",
            Intercept => "regr_intercept",
        }
    }
}

impl AggFunc {
    /// The function's name as EXPLAIN prints it.
    pub fn name(self) -> &'static str {
        use AggFunc::*;
        match self {
            CountStar | Count => "count",
            Sum => "sum",
            Avg => "avg",
            Min => "min",
            Max => "max",
            BoolAnd => "bool_and",
            BoolOr => "bool_or",
            StringAgg => "string_agg",
            JsonAgg => "json_agg",
            JsonbAgg => "jsonb_agg",
            JsonObjectAgg => "json_object_agg",
            JsonbObjectAgg => "jsonb_object_agg",
            ArrayAgg => "array_agg",
            Variance {
                sample: false,
                root: false,
            } => "var_pop",
            Variance {
                sample: true,
                root: false,
            } => "var_samp",
            Variance {
                sample: false,
                root: true,
            } => "stddev_pop",
            Variance {
                sample: true,
                root: true,
            } => "stddev_samp",
            BitAnd => "bit_and",
            BitOr => "bit_or",
            BitXor => "bit_xor",
            Regr(r) => r.name(),
            PercentileCont => "percentile_cont",
            PercentileDisc => "percentile_disc",
            Mode => "mode",
        }
    }

    /// Whether the aggregate takes `WITHIN GROUP (ORDER BY ...)`.
    pub fn is_ordered_set(self) -> bool {
        matches!(
            self,
            AggFunc::PercentileCont | AggFunc::PercentileDisc | AggFunc::Mode
        )
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct AggCall {
    pub func: AggFunc,
    pub args: Vec<Expr>,
    pub distinct: bool,
    /// Type of the input (first argument).
    pub arg_type: TypeId,
    pub result: DataType,
    /// `FILTER (WHERE ...)`: only rows where it is true are aggregated.
    pub filter: Option<Expr>,
    /// `ORDER BY` inside the call: the inputs are fed in this order.
    pub order: Vec<AggOrder>,
}

/// One `ORDER BY` key inside an aggregate call.
#[derive(Debug, Clone, PartialEq)]
pub struct AggOrder {
    pub expr: Expr,
    pub descending: bool,
    pub nulls_first: bool,
}

impl AggCall {
    /// A call with no FILTER and no ORDER BY.
    pub fn new(
        func: AggFunc,
        args: Vec<Expr>,
        distinct: bool,
        arg_type: TypeId,
        result: DataType,
    ) -> AggCall {
        AggCall {
            func,
            args,
            distinct,
            arg_type,
            result,
            filter: None,
            order: Vec::new(),
        }
    }

    /// Every expression the call evaluates per input row: arguments,
    /// filter and ordering keys.
    pub fn input_exprs(&self) -> impl Iterator<Item = &Expr> {
        self.args
            .iter()
            .chain(self.filter.iter())
            .chain(self.order.iter().map(|o| &o.expr))
    }

    /// The call with `f` applied to each of its input expressions.
    pub fn map_input_exprs(
        mut self,
        f: &mut dyn FnMut(Expr) -> common::PgResult<Expr>,
    ) -> common::PgResult<AggCall> {
        self.args = std::mem::take(&mut self.args)
            .into_iter()
            .map(&mut *f)
            .collect::<common::PgResult<_>>()?;
        self.filter = self.filter.take().map(&mut *f).transpose()?;
        for o in &mut self.order {
            let e = std::mem::replace(&mut o.expr, Expr::Const(Value::Null, TypeId::Bool.into()));
            o.expr = f(e)?;
        }
        Ok(self)
    }
}

pub use crate::window::{
    FrameBound, FrameExclusion, FrameUnits, WindowCall, WindowFrame, WindowFunc, WindowOrder,
    WindowSpec,
};

/// Functions that need the session or the storage layer at run time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SysFunc {
    /// GROUPING(args) as bound, before the grouping stage replaces it with
    /// its Aggregate's output column (it is never evaluated).
    Grouping,
    CurrentSetting,
    SetConfig,
    /// pg_notify(channel, payload): sent when the transaction commits.
    Notify,
    /// pg_notification_queue_usage()
    NotificationQueueUsage,
    RelationSize,
    /// pg_total_relation_size: the table, its TOAST relation and indexes.
    TotalRelationSize,
    /// pg_table_size: the table and its TOAST relation.
    TableSize,
    /// pg_indexes_size.
    IndexesSize,
    RelationFilepath,
    RelationFilenode,
    BackendPid,
    TableIsVisible,
    FormatType,
    IsolationTestSessionIsBlocked,
    PgSleep,
    StatLwlockReset,
    /// pg_prewarm(regclass, mode, fork, first_block, last_block)
    Prewarm,
    /// pg_get_userbyid(oid): a role's name
    GetUserById,
    /// pg_get_indexdef(oid [, column, pretty]): CREATE INDEX as PostgreSQL prints it.
    GetIndexdef,
    /// pg_get_constraintdef(oid [, pretty]).
    GetConstraintdef,
    /// pg_get_triggerdef(oid [, pretty]): CREATE TRIGGER as PostgreSQL prints it.
    GetTriggerdef,
    /// pg_get_partkeydef(oid): a partitioned table's `RANGE (a)`.
    GetPartkeydef,
    /// pg_get_partition_constraintdef(oid): a partition's constraint.
    GetPartitionConstraintdef,
    /// amcheck's bt_index_check(regclass) (false) and
    /// bt_index_parent_check(regclass) (true).
    BtIndexCheck(bool),
    /// pg_reload_conf(): signals the server to reload its configuration.
    ReloadConf,
    /// pg_cancel_backend(pid), pg_terminate_backend(pid).
    CancelBackend,
    TerminateBackend,
    /// pg_current_wal_lsn(), _insert_lsn(), _flush_lsn()
    CurrentWalLsn,
    CurrentWalInsertLsn,
    CurrentWalFlushLsn,
    /// pg_walfile_name(lsn)
    WalfileName,
    /// pg_type_is_visible(oid), pg_function_is_visible(oid): every type and
    /// function is in pg_catalog, so visible when it exists.
    TypeIsVisible,
    FunctionIsVisible,
    /// pg_relation_is_publishable(regclass): user tables are.
    RelationIsPublishable,
    /// to_regclass(text) and friends: the reg* input, NULL instead of an
    /// error for a name that names nothing.
    ToReg(TypeId),
    /// `array[i][j]...` (args: the array, then one subscript per
    /// dimension given); NULL out of range.
    ArraySubscript,
    /// `array[lo:hi]...` (args: the array, then per subscript: an index, or
    /// a slice's lower and upper bounds where written; see `SliceShape`).
    ArraySlice(SliceShape),
    /// `ARRAY[e1, e2, ...]` of scalar elements (args: the elements).
    ArrayConstruct,
    /// `ARRAY[a1, a2, ...]` of arrays: one more dimension.
    ArrayConstructNested,
    /// nextval(regclass), currval(regclass), setval(regclass, bigint
    /// [, bool]), lastval(): sequences (access::sequence).
    NextVal,
    CurrVal,
    SetVal,
    LastVal,
    /// pg_get_serial_sequence(table, column)
    GetSerialSequence,
    /// obj_description(oid [, catalog name]): a comment (COMMENT ON).
    ObjDescription,
    /// col_description(table oid, attnum).
    ColDescription,
    /// shobj_description(oid, catalog name): a database's or role's comment.
    ShobjDescription,
    /// pg_get_viewdef(oid [, pretty]).
    GetViewdef,
    /// pg_get_viewdef(view name [, pretty]).
    GetViewdefByName,
    /// pg_get_ruledef(oid [, pretty]): NULL (the only rules are views'
    /// `_RETURN` rules, which psql leaves out).
    GetRuledef,
    /// pg_advisory_lock and its variants (bigint or (int, int) keys).
    Advisory(AdvisoryCall),
    /// pg_advisory_unlock_all()
    AdvisoryUnlockAll,
    /// pg_blocking_pids(pid): int4[]
    BlockingPids,
    /// pg_column_size(x) of a value that is no stored column: the size of
    /// PostgreSQL's datum for it (`bind/system_columns.rs`).
    DatumSize,
    /// SEARCH DEPTH FIRST's sequence and CYCLE's path (`bind/cte_search.rs`):
    /// the previous path (args[0], NULL to start one) with `ROW(args[1..])`
    /// appended; record[].
    SearchPath,
    /// SEARCH BREADTH FIRST's `ROW(depth, args[1..])`, the depth one more
    /// than args[0]'s (0 when NULL).
    SearchBreadth,
    /// CYCLE's mark: args[1] (TO) when `ROW(args[3..])` is on the path
    /// args[0], else args[2] (DEFAULT).
    CycleMark,
}

/// Which subscripts of an `array[...]` slice are slices and which of
/// their bounds are written (bit i for subscript i).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SliceShape {
    pub count: u8,
    pub slices: u8,
    pub lowers: u8,
    pub uppers: u8,
}

impl SysFunc {
    /// Computes from its arguments alone: never waits or reads pages.
    pub fn is_pure(self) -> bool {
        matches!(
            self,
            SysFunc::ArraySubscript
                | SysFunc::ArraySlice(_)
                | SysFunc::ArrayConstruct
                | SysFunc::ArrayConstructNested
                | SysFunc::SearchPath
                | SysFunc::SearchBreadth
                | SysFunc::CycleMark
        )
    }
}

/// What an advisory-lock function does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AdvisoryOp {
    /// Waits until granted.
    Lock,
    /// Takes it if free: true, else false.
    TryLock,
    /// Releases a session-level hold: false (and a WARNING) if not held.
    Unlock,
}

/// An advisory-lock function: its operation, mode (shared or exclusive)
/// and scope (transaction or session).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AdvisoryCall {
    pub op: AdvisoryOp,
    pub shared: bool,
    pub xact: bool,
}

impl AdvisoryCall {
    /// The function of that name, if it is one.
    pub fn from_name(name: &str) -> Option<AdvisoryCall> {
        let rest = name.strip_prefix("pg_")?;
        let (op, rest) = if let Some(r) = rest.strip_prefix("try_advisory_") {
            (AdvisoryOp::TryLock, r)
        } else {
            let r = rest.strip_prefix("advisory_")?;
            match r.strip_prefix("un") {
                Some(u) => (AdvisoryOp::Unlock, u),
                None => (AdvisoryOp::Lock, r),
            }
        };
        let (xact, rest) = match rest.strip_prefix("xact_") {
            Some(r) => (true, r),
            None => (false, rest),
        };
        let shared = match rest {
            "lock" => false,
            "lock_shared" => true,
            _ => return None,
        };
        // There is no transaction-level unlock.
        if xact && op == AdvisoryOp::Unlock {
            return None;
        }
        Some(AdvisoryCall { op, shared, xact })
    }
}

#[derive(Clone)]
pub struct Like(pub Arc<LikePattern>);

impl std::fmt::Debug for Like {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("LikePattern")
    }
}

/// A built-in function, compared by identity.
#[derive(Clone, Copy)]
pub struct Builtin(pub &'static BuiltinFunction);

impl PartialEq for Builtin {
    fn eq(&self, other: &Self) -> bool {
        std::ptr::eq(self.0, other.0)
    }
}

impl std::fmt::Debug for Builtin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0.name)
    }
}

impl PartialEq for Like {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    Const(Value, DataType),
    /// Column `index` of the input row.
    Column(usize, DataType),
    /// Column of an enclosing query's row (`depth` 1 = the immediate outer).
    OuterColumn {
        depth: usize,
        index: usize,
        ty: DataType,
    },
    /// `$n` (0-based here).
    Param(usize, DataType),
    Binary {
        op: BinaryOp,
        left: Box<Expr>,
        right: Box<Expr>,
        ty: DataType,
    },
    Neg(Box<Expr>, DataType),
    And(Vec<Expr>),
    Or(Vec<Expr>),
    Not(Box<Expr>),
    IsNull {
        expr: Box<Expr>,
        negated: bool,
    },
    /// IS [NOT] TRUE / FALSE.
    IsBool {
        expr: Box<Expr>,
        value: bool,
        negated: bool,
    },
    IsDistinctFrom {
        left: Box<Expr>,
        right: Box<Expr>,
        negated: bool,
    },
    /// LIKE / ILIKE with a constant pattern compiled once.
    LikeConst {
        expr: Box<Expr>,
        pattern: Like,
        negated: bool,
    },
    /// LIKE / ILIKE with a pattern computed per row.
    Like {
        expr: Box<Expr>,
        pattern: Box<Expr>,
        case_insensitive: bool,
        negated: bool,
    },
    Cast {
        expr: Box<Expr>,
        from: TypeId,
        to: DataType,
        explicit: bool,
    },
    Func {
        func: Builtin,
        args: Vec<Expr>,
    },
    Sys {
        func: SysFunc,
        args: Vec<Expr>,
        ty: DataType,
    },
    Case {
        operand: Option<Box<Expr>>,
        whens: Vec<(Expr, Expr)>,
        else_: Option<Box<Expr>>,
        ty: DataType,
    },
    Coalesce(Vec<Expr>, DataType),
    NullIf(Box<Expr>, Box<Expr>, DataType),
    /// GREATEST (true) / LEAST (false).
    MinMax {
        args: Vec<Expr>,
        greatest: bool,
        ty: DataType,
    },
    InList {
        expr: Box<Expr>,
        list: Vec<Expr>,
        negated: bool,
    },
    ScalarSubquery(Box<Plan>, DataType),
    /// `ARRAY(subquery)`: the subquery's single column as an array of type `.1`.
    ArraySubquery(Box<Plan>, DataType),
    /// `expr op ANY (array)` / `expr op ALL (array)`; `expr` has the array's
    /// element type.
    ArrayCompare {
        expr: Box<Expr>,
        op: BinaryOp,
        array: Box<Expr>,
        all: bool,
    },
    Exists {
        plan: Box<Plan>,
        negated: bool,
    },
    InSubquery {
        expr: Box<Expr>,
        plan: Box<Plan>,
        negated: bool,
    },
    /// Aggregate call; only inside an Aggregate's input to the planner,
    /// replaced by a Column reference above the Aggregate.
    Agg(Box<AggCall>),
    /// Window function call (`f(...) OVER (...)`); only in a select list or
    /// ORDER BY, replaced by a Column reference above its WindowAgg.
    Window(Box<WindowCall>),
    /// A set-returning function call (one column); only in a select list or
    /// ORDER BY, replaced by a reference to its value in a ProjectSet.
    Srf(Box<crate::srf::SrfCall>),
    /// `regclass` constant printed as a relation name.
    RegClassName(Oid),
    /// A user-defined function's call.
    UserFunc(Box<UserFuncCall>),
    /// A value coerced to a domain (its base type's value, checked).
    DomainCheck(Box<DomainCheck>),
    /// A built-in variadic function's call with `VARIADIC arr`.
    VariadicSpread(Box<VariadicSpread>),
}

impl Expr {
    pub fn data_type(&self) -> DataType {
        use Expr::*;
        match self {
            Const(_, t) | Column(_, t) | Param(_, t) | Neg(_, t) => *t,
            OuterColumn { ty, .. } | Binary { ty, .. } | Sys { ty, .. } | Case { ty, .. } => *ty,
            Coalesce(_, t) | NullIf(_, _, t) | ScalarSubquery(_, t) | ArraySubquery(_, t) => *t,
            ArrayCompare { .. } => DataType::new(TypeId::Bool),
            MinMax { ty, .. } => *ty,
            And(_) | Or(_) | Not(_) | IsNull { .. } | IsBool { .. } | IsDistinctFrom { .. } => {
                DataType::new(TypeId::Bool)
            }
            LikeConst { .. } | Like { .. } | InList { .. } | Exists { .. } | InSubquery { .. } => {
                DataType::new(TypeId::Bool)
            }
            Cast { to, .. } => *to,
            Func { func, .. } => DataType::new(func.0.ret),
            Agg(a) => a.result,
            Window(w) => w.result,
            Srf(c) => c.value_type(),
            RegClassName(_) => DataType::new(TypeId::Text),
            UserFunc(c) => c.ret,
            DomainCheck(d) => d.arg.data_type(),
            VariadicSpread(v) => DataType::new(v.func.0.ret),
        }
    }

    pub fn type_id(&self) -> TypeId {
        self.data_type().id
    }

    /// Highest input column index referenced (+1), for lazy deforming.
    pub fn columns_needed(&self) -> usize {
        let mut max = 0;
        self.visit(&mut |e| {
            if let Expr::Column(i, _) = e {
                max = max.max(i + 1);
            }
        });
        max
    }

    /// Whether the expression has an aggregate call (not inside a subquery).
    pub fn contains_agg(&self) -> bool {
        let mut found = false;
        self.visit(&mut |e| found |= matches!(e, Expr::Agg(_)) || e.is_grouping());
        found
    }

    /// Whether this node is a GROUPING() call (not looking into its children).
    pub fn is_grouping(&self) -> bool {
        matches!(
            self,
            Expr::Sys {
                func: SysFunc::Grouping,
                ..
            }
        )
    }

    /// Whether the expression has a GROUPING() call (not inside a subquery).
    pub fn contains_grouping(&self) -> bool {
        let mut found = false;
        self.visit(&mut |e| found |= e.is_grouping());
        found
    }

    /// Whether the expression has a window function call (not inside a subquery).
    pub fn contains_window(&self) -> bool {
        let mut found = false;
        self.visit(&mut |e| found |= matches!(e, Expr::Window(_)));
        found
    }

    /// Whether the expression has a set-returning function call (not inside
    /// a subquery).
    pub fn contains_srf(&self) -> bool {
        let mut found = false;
        self.visit(&mut |e| found |= matches!(e, Expr::Srf(_)));
        found
    }

    /// Whether evaluating the expression can neither wait (advisory locks,
    /// pg_sleep) nor read pages (subqueries, sequences, catalog and size
    /// functions): only then may a scan evaluate it under a page's content
    /// lock. `Sys` functions and subqueries are taken to do either.
    pub fn safe_under_page_lock(&self) -> bool {
        let mut safe = true;
        self.visit(&mut |e| {
            safe &= !matches!(e, Expr::Sys { func, .. } if !func.is_pure())
                && !e.is_subquery()
                // A user function runs queries of its own.
                && !matches!(e, Expr::UserFunc(_))
        });
        safe
    }

    /// Whether this node is a subquery (not looking into its children).
    pub(crate) fn is_subquery(&self) -> bool {
        matches!(
            self,
            Expr::ScalarSubquery(..)
                | Expr::ArraySubquery(..)
                | Expr::Exists { .. }
                | Expr::InSubquery { .. }
        )
    }

    /// Whether the expression holds a subquery anywhere.
    pub fn has_subquery(&self) -> bool {
        let mut found = false;
        self.visit(&mut |e| found |= e.is_subquery());
        found
    }

    /// Pre-order walk over this expression and its children (not into subquery plans).
    pub fn visit(&self, f: &mut dyn FnMut(&Expr)) {
        use Expr::*;
        f(self);
        match self {
            Const(..) | Column(..) | OuterColumn { .. } | Param(..) | RegClassName(_) => {}
            Binary { left, right, .. } | IsDistinctFrom { left, right, .. } => {
                left.visit(f);
                right.visit(f);
            }
            ArrayCompare { expr, array, .. } => {
                expr.visit(f);
                array.visit(f);
            }
            NullIf(a, b, _) => {
                a.visit(f);
                b.visit(f);
            }
            Like { expr, pattern, .. } => {
                expr.visit(f);
                pattern.visit(f);
            }
            Neg(e, _) | Not(e) | IsNull { expr: e, .. } | IsBool { expr: e, .. } => e.visit(f),
            LikeConst { expr, .. } | Cast { expr, .. } => expr.visit(f),
            And(v) | Or(v) | Coalesce(v, _) => v.iter().for_each(|e| e.visit(f)),
            Func { args, .. } | Sys { args, .. } | MinMax { args, .. } => {
                args.iter().for_each(|e| e.visit(f))
            }
            Case {
                operand,
                whens,
                else_,
                ..
            } => {
                if let Some(o) = operand {
                    o.visit(f);
                }
                for (w, t) in whens {
                    w.visit(f);
                    t.visit(f);
                }
                if let Some(e) = else_ {
                    e.visit(f);
                }
            }
            InList { expr, list, .. } => {
                expr.visit(f);
                list.iter().for_each(|e| e.visit(f));
            }
            InSubquery { expr, .. } => expr.visit(f),
            ScalarSubquery(..) | ArraySubquery(..) | Exists { .. } => {}
            Agg(a) => a.input_exprs().for_each(|e| e.visit(f)),
            Window(w) => w.children().for_each(|e| e.visit(f)),
            Srf(c) => c.args.iter().for_each(|e| e.visit(f)),
            UserFunc(c) => c.args.iter().for_each(|e| e.visit(f)),
            DomainCheck(d) => d.arg.visit(f),
            VariadicSpread(v) => v.args.iter().for_each(|e| e.visit(f)),
        }
    }

    /// Rebuilds the expression with `f` applied to each direct child.
    pub fn map_children(
        self,
        f: &mut dyn FnMut(Expr) -> common::PgResult<Expr>,
    ) -> common::PgResult<Expr> {
        use Expr::*;
        let bx =
            |e: Box<Expr>, f: &mut dyn FnMut(Expr) -> common::PgResult<Expr>| f(*e).map(Box::new);
        let e = match self {
            Binary {
                op,
                left,
                right,
                ty,
            } => Binary {
                op,
                left: bx(left, f)?,
                right: bx(right, f)?,
                ty,
            },
            IsDistinctFrom {
                left,
                right,
                negated,
            } => IsDistinctFrom {
                left: bx(left, f)?,
                right: bx(right, f)?,
                negated,
            },
            NullIf(a, b, t) => NullIf(bx(a, f)?, bx(b, f)?, t),
            ArrayCompare {
                expr,
                op,
                array,
                all,
            } => ArrayCompare {
                expr: bx(expr, f)?,
                op,
                array: bx(array, f)?,
                all,
            },
            Like {
                expr,
                pattern,
                case_insensitive,
                negated,
            } => Like {
                expr: bx(expr, f)?,
                pattern: bx(pattern, f)?,
                case_insensitive,
                negated,
            },
            Neg(e, t) => Neg(bx(e, f)?, t),
            Not(e) => Not(bx(e, f)?),
            IsNull { expr, negated } => IsNull {
                expr: bx(expr, f)?,
                negated,
            },
            IsBool {
                expr,
                value,
                negated,
            } => IsBool {
                expr: bx(expr, f)?,
                value,
                negated,
            },
            LikeConst {
                expr,
                pattern,
                negated,
            } => LikeConst {
                expr: bx(expr, f)?,
                pattern,
                negated,
            },
            Cast {
                expr,
                from,
                to,
                explicit,
            } => Cast {
                expr: bx(expr, f)?,
                from,
                to,
                explicit,
            },
            And(v) => And(v.into_iter().map(&mut *f).collect::<Result<_, _>>()?),
            Or(v) => Or(v.into_iter().map(&mut *f).collect::<Result<_, _>>()?),
            Coalesce(v, t) => Coalesce(v.into_iter().map(&mut *f).collect::<Result<_, _>>()?, t),
            Func { func, args } => Func {
                func,
                args: args.into_iter().map(&mut *f).collect::<Result<_, _>>()?,
            },
            Sys { func, args, ty } => Sys {
                func,
                args: args.into_iter().map(&mut *f).collect::<Result<_, _>>()?,
                ty,
            },
            MinMax { args, greatest, ty } => MinMax {
                args: args.into_iter().map(&mut *f).collect::<Result<_, _>>()?,
                greatest,
                ty,
            },
            Case {
                operand,
                whens,
                else_,
                ty,
            } => Case {
                operand: operand.map(|o| bx(o, f)).transpose()?,
                whens: whens
                    .into_iter()
                    .map(|(w, t)| Ok((f(w)?, f(t)?)))
                    .collect::<common::PgResult<_>>()?,
                else_: else_.map(|e| bx(e, f)).transpose()?,
                ty,
            },
            InList {
                expr,
                list,
                negated,
            } => InList {
                expr: bx(expr, f)?,
                list: list.into_iter().map(&mut *f).collect::<Result<_, _>>()?,
                negated,
            },
            InSubquery {
                expr,
                plan,
                negated,
            } => InSubquery {
                expr: bx(expr, f)?,
                plan,
                negated,
            },
            Window(w) => Window(Box::new(w.map_exprs(f)?)),
            Srf(c) => Srf(Box::new(c.map_args(f)?)),
            UserFunc(mut c) => {
                c.args = std::mem::take(&mut c.args)
                    .into_iter()
                    .map(&mut *f)
                    .collect::<Result<_, _>>()?;
                UserFunc(c)
            }
            DomainCheck(mut d) => {
                let placeholder = Const(Value::Null, d.arg.data_type());
                d.arg = f(std::mem::replace(&mut d.arg, placeholder))?;
                DomainCheck(d)
            }
            VariadicSpread(mut v) => {
                v.args = std::mem::take(&mut v.args)
                    .into_iter()
                    .map(&mut *f)
                    .collect::<Result<_, _>>()?;
                VariadicSpread(v)
            }
            other => other,
        };
        Ok(e)
    }

    /// Rebuilds the expression bottom-up through `f` (children first).
    pub fn transform(
        self,
        f: &mut dyn FnMut(Expr) -> common::PgResult<Expr>,
    ) -> common::PgResult<Expr> {
        let e = self.map_children(&mut |c| c.transform(f))?;
        f(e)
    }
}
