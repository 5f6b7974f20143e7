//! Window function calls: `f(args) OVER (...)`, `OVER w` and the WINDOW
//! clause (PostgreSQL's transformWindowFuncCall and transformWindowDefinitions),
//! and the plan stage that evaluates them (WindowAgg nodes over sorts, as
//! PostgreSQL's create_windowagg_plan stacks them).
//!
//! Window calls may appear only in a SELECT's list and ORDER BY: the binder
//! keeps in `WindowScope::context` the clause being bound when that is
//! anywhere else, and a call there is PostgreSQL's 42P20 naming the clause.

use common::{PgError, PgResult, SqlState};
use sqlparser::ast;
use types::cast::{can_cast, CastContext};
use types::{DataType, TypeId, Value};

use super::{ident_name, Binder, Scope};
use crate::expr::{
    Expr, FrameBound, FrameExclusion, FrameUnits, WindowCall, WindowFrame, WindowFunc, WindowOrder,
    WindowSpec,
};
use crate::plan::{OutputColumn, Plan, SortKey};

/// The window state of the query being bound.
pub(crate) struct WindowScope {
    /// Where window calls are refused (the clause being bound: "WHERE",
    /// "GROUP BY", ...); None inside a select list or ORDER BY.
    pub context: Option<&'static str>,
    /// The WINDOW clause of the SELECT being bound.
    named: Vec<ast::NamedWindowDefinition>,
}

impl Default for WindowScope {
    /// Outside any SELECT (UPDATE's SET, DEFAULT, CHECK, ...).
    fn default() -> Self {
        WindowScope {
            context: Some("this context"),
            named: Vec::new(),
        }
    }
}

/// A PARTITION BY list less the EXCLUDE marker the parser put first in it
/// (`crate::window::rewrite_exclusions`), and the exclusion it names.
fn split_exclusion(partition: &[ast::Expr]) -> (Vec<ast::Expr>, FrameExclusion) {
    match partition.first() {
        Some(ast::Expr::Identifier(i)) => match crate::window::exclusion_of_mark(&i.value) {
            Some(x) => (partition[1..].to_vec(), x),
            None => (partition.to_vec(), FrameExclusion::NoOthers),
        },
        _ => (partition.to_vec(), FrameExclusion::NoOthers),
    }
}

/// A window definition with its references to named windows resolved.
struct ResolvedSpec {
    partition: Vec<ast::Expr>,
    order: Vec<ast::OrderByExpr>,
    frame: Option<ast::WindowFrame>,
    exclusion: FrameExclusion,
}

fn window_error(msg: impl Into<String>) -> PgError {
    PgError::new(SqlState::WINDOWING_ERROR, msg)
}

/// A window call where the clause `context` allows none.
pub(super) fn not_allowed(context: &str) -> PgError {
    window_error(format!("window functions are not allowed in {context}"))
}

/// The error for a window call inside an aggregate's arguments.
pub(super) fn window_in_aggregate() -> PgError {
    PgError::new(
        SqlState::GROUPING_ERROR,
        "aggregate function calls cannot contain window function calls",
    )
}

impl Binder<'_, '_> {
    /// A SELECT with its own WINDOW clause and window context (a nested
    /// query's calls are its own).
    pub(crate) fn bind_select(
        &mut self,
        s: &ast::Select,
        order: &[ast::OrderByExpr],
    ) -> PgResult<(Plan, Vec<OutputColumn>)> {
        for (i, d) in s.named_window.iter().enumerate() {
            let name = ident_name(&d.0);
            if s.named_window[..i].iter().any(|p| ident_name(&p.0) == name) {
                return Err(window_error(format!(
                    "window \"{name}\" is already defined"
                )));
            }
        }
        let outer = std::mem::replace(
            &mut self.window,
            WindowScope {
                context: None,
                named: s.named_window.clone(),
            },
        );
        let r = self.bind_select_body(s, order);
        self.window = outer;
        r
    }

    /// Runs `f` with window calls refused as in `context` (None: allowed).
    pub(crate) fn in_window_context<T>(
        &mut self,
        context: Option<&'static str>,
        f: impl FnOnce(&mut Self) -> T,
    ) -> T {
        let outer = std::mem::replace(&mut self.window.context, context);
        let r = f(self);
        self.window.context = outer;
        r
    }

    /// A named window of the WINDOW clause, resolved.
    fn named_window(&self, name: &ast::Ident, depth: usize) -> PgResult<ResolvedSpec> {
        let n = ident_name(name);
        let def = self
            .window
            .named
            .iter()
            .find(|d| ident_name(&d.0) == n)
            .ok_or_else(|| {
                PgError::new(
                    SqlState::UNDEFINED_OBJECT,
                    format!("window \"{n}\" does not exist"),
                )
            })?;
        if depth > self.window.named.len() {
            return Err(window_error(format!("window \"{n}\" does not exist")));
        }
        match &def.1 {
            ast::NamedWindowExpr::NamedWindow(other) => self.named_window(other, depth + 1),
            ast::NamedWindowExpr::WindowSpec(spec) => self.resolve_spec(spec, depth + 1),
        }
    }

    /// `(w ORDER BY ... frame)`: a copy of `w` refined as PostgreSQL allows.
    fn resolve_spec(&self, spec: &ast::WindowSpec, depth: usize) -> PgResult<ResolvedSpec> {
        let (partition, exclusion) = split_exclusion(&spec.partition_by);
        let Some(base_name) = &spec.window_name else {
            return Ok(ResolvedSpec {
                partition,
                order: spec.order_by.clone(),
                frame: spec.window_frame.clone(),
                exclusion,
            });
        };
        let base = self.named_window(base_name, depth)?;
        let n = ident_name(base_name);
        if !partition.is_empty() {
            return Err(window_error(format!(
                "cannot override PARTITION BY clause of window \"{n}\""
            )));
        }
        if !base.order.is_empty() && !spec.order_by.is_empty() {
            return Err(window_error(format!(
                "cannot override ORDER BY clause of window \"{n}\""
            )));
        }
        if base.frame.is_some() {
            let err = window_error(format!(
                "cannot copy window \"{n}\" because it has a frame clause"
            ));
            return Err(if spec.order_by.is_empty() && spec.window_frame.is_none() {
                err.with_hint("Omit the parentheses in this OVER clause.")
            } else {
                err
            });
        }
        Ok(ResolvedSpec {
            partition: base.partition,
            order: if spec.order_by.is_empty() {
                base.order
            } else {
                spec.order_by.clone()
            },
            frame: spec.window_frame.clone(),
            exclusion,
        })
    }

    /// `f(args) OVER ...`; errors about the call itself (where it is, what
    /// it calls) point at it, as PostgreSQL's do.
    pub(super) fn bind_window_call(
        &mut self,
        f: &ast::Function,
        name: &str,
        scope: &Scope,
    ) -> PgResult<Expr> {
        use sqlparser::ast::Spanned;
        self.window_call(f, name, scope).map_err(|e| {
            let about_call = e.message.starts_with("window functions are not allowed")
                || e.message.starts_with("FILTER is not implemented")
                || e.message.starts_with("OVER specified")
                || e.message.starts_with("DISTINCT is not implemented");
            if about_call {
                self.at(e, f.name.span())
            } else {
                e
            }
        })
    }

    fn window_call(&mut self, f: &ast::Function, name: &str, scope: &Scope) -> PgResult<Expr> {
        if let Some(context) = self.window.context {
            return Err(not_allowed(context));
        }
        let spec = match f.over.as_ref().expect("an OVER clause") {
            ast::WindowType::NamedWindow(n) => self.named_window(n, 0)?,
            ast::WindowType::WindowSpec(spec) => self.resolve_spec(spec, 0)?,
        };
        let (args, distinct, star) = self.function_args(f, scope)?;
        if args.iter().any(Expr::contains_window) {
            return Err(window_error("window function calls cannot be nested"));
        }
        let (func, args, result) = match self.window_function(name, args.clone(), star)? {
            Some(_) if f.filter.is_some() => {
                return Err(PgError::new(
                    SqlState::FEATURE_NOT_SUPPORTED,
                    "FILTER is not implemented for non-aggregate window functions",
                ))
            }
            Some(r) => r,
            None => {
                let plain = ast::Function {
                    over: None,
                    filter: None,
                    ..f.clone()
                };
                let mut agg =
                    self.window_aggregate(name, (args, distinct, star), Some(plain), scope)?;
                if let Some(w) = &f.filter {
                    agg.filter = Some(self.window_filter(w, scope)?);
                }
                let result = agg.result;
                (WindowFunc::Agg(agg), Vec::new(), result)
            }
        };
        let spec = self.in_window_context(Some("window definitions"), |b| {
            b.bind_window_spec(spec, scope)
        })?;
        Ok(Expr::Window(Box::new(WindowCall {
            func,
            args,
            spec,
            result,
        })))
    }

    /// A window aggregate's `FILTER (WHERE ...)`: a boolean of the row,
    /// with no aggregate or window call inside (PostgreSQL's rules).
    fn window_filter(&mut self, w: &ast::Expr, scope: &Scope) -> PgResult<Expr> {
        let e = self.in_window_context(Some("FILTER"), |b| b.bind_expr(w, scope))?;
        if e.contains_agg() {
            return Err(PgError::new(
                SqlState::GROUPING_ERROR,
                "aggregate functions are not allowed in FILTER",
            ));
        }
        self.coerce_bool(e, "FILTER")
    }

    /// A window-only function by name: its arguments coerced and its type.
    fn window_function(
        &mut self,
        name: &str,
        mut args: Vec<Expr>,
        star: bool,
    ) -> PgResult<Option<(WindowFunc, Vec<Expr>, DataType)>> {
        let func = match name {
            "row_number" => WindowFunc::RowNumber,
            "rank" => WindowFunc::Rank,
            "dense_rank" => WindowFunc::DenseRank,
            "percent_rank" => WindowFunc::PercentRank,
            "cume_dist" => WindowFunc::CumeDist,
            "ntile" => WindowFunc::Ntile,
            "lag" => WindowFunc::Lag,
            "lead" => WindowFunc::Lead,
            "first_value" => WindowFunc::FirstValue,
            "last_value" => WindowFunc::LastValue,
            "nth_value" => WindowFunc::NthValue,
            _ => return Ok(None),
        };
        // Unknown literals resolve as anyelement does: to the value's
        // type (lag/lead's default), else text.
        for i in 0..args.len() {
            if args[i].type_id() == TypeId::Unknown {
                let to = match (&func, i) {
                    (WindowFunc::Lag | WindowFunc::Lead, 2) => args[0].data_type(),
                    // lag('1', 1, 0): the value takes the default's type.
                    (WindowFunc::Lag | WindowFunc::Lead, 0)
                        if args.len() > 2 && args[2].type_id() != TypeId::Unknown =>
                    {
                        args[2].data_type()
                    }
                    (WindowFunc::Ntile, 0)
                    | (WindowFunc::Lag | WindowFunc::Lead | WindowFunc::NthValue, 1) => {
                        TypeId::Int4.into()
                    }
                    _ => TypeId::Text.into(),
                };
                let x = std::mem::replace(&mut args[i], Expr::Const(Value::Null, to));
                args[i] = self.coerce(x, to, CastContext::Implicit)?;
            }
        }
        let no_such = |args: &[Expr]| {
            let types: Vec<&str> = args.iter().map(|a| a.type_id().display_name()).collect();
            PgError::new(
                SqlState::UNDEFINED_FUNCTION,
                format!("function {name}({}) does not exist", types.join(", ")),
            )
            .with_hint(
                "No function matches the given name and argument types. You might need to add explicit type casts.",
            )
        };
        // `rank(*)` is `rank()`, as PostgreSQL reads it.
        if star && !args.is_empty() {
            return Err(no_such(&[]));
        }
        let int4: DataType = TypeId::Int4.into();
        let int_arg = |b: &mut Self, e: Expr, args: &[Expr]| -> PgResult<Expr> {
            match e.type_id() {
                TypeId::Int2 | TypeId::Int4 => b.coerce(e, int4, CastContext::Implicit),
                _ => Err(no_such(args)),
            }
        };
        let result = match (&func, args.len()) {
            (WindowFunc::RowNumber | WindowFunc::Rank | WindowFunc::DenseRank, 0) => {
                TypeId::Int8.into()
            }
            (WindowFunc::PercentRank | WindowFunc::CumeDist, 0) => TypeId::Float8.into(),
            (WindowFunc::Ntile, 1) => {
                args[0] = int_arg(self, args[0].clone(), &args)?;
                int4
            }
            (WindowFunc::Lag | WindowFunc::Lead, 1..=3) => {
                let mut ty = args[0].data_type();
                if args.len() > 1 {
                    args[1] = int_arg(self, args[1].clone(), &args)?;
                }
                // lag(anycompatible, integer, anycompatible): the value and
                // the default meet in their common type (lag(int, 1, 1.5)
                // is numeric).
                if args.len() > 2 && args[2].data_type() != ty {
                    ty = self
                        .common_type(&[ty, args[2].data_type()], "lag")
                        .map_err(|_| no_such(&args))?;
                    for i in [0, 2] {
                        args[i] = self.coerce(args[i].clone(), ty, CastContext::Implicit)?;
                    }
                }
                ty
            }
            (WindowFunc::FirstValue | WindowFunc::LastValue, 1) => args[0].data_type(),
            (WindowFunc::NthValue, 2) => {
                args[1] = int_arg(self, args[1].clone(), &args)?;
                args[0].data_type()
            }
            _ => return Err(no_such(&args)),
        };
        Ok(Some((func, args, result)))
    }

    /// An aggregate used as a window function. Plain aggregates inside its
    /// arguments (`sum(sum(x)) OVER ()` in a grouped query) are allowed:
    /// they are set aside while the aggregate binds, so its check against
    /// nested aggregates sees only this call.
    fn window_aggregate(
        &mut self,
        name: &str,
        (args, distinct, star): (Vec<Expr>, bool, bool),
        plain: Option<ast::Function>,
        scope: &Scope,
    ) -> PgResult<crate::expr::AggCall> {
        let mut inner = Vec::new();
        let mut hide = |e: Expr| -> PgResult<Expr> {
            Ok(match e {
                Expr::Agg(a) => {
                    let ty = a.result;
                    inner.push(Expr::Agg(a));
                    Expr::Column(usize::MAX - (inner.len() - 1), ty)
                }
                other => other,
            })
        };
        let hidden = args
            .into_iter()
            .map(|a| a.transform(&mut hide))
            .collect::<PgResult<Vec<_>>>()?;
        let bound = match self.bind_json_aggregate(name, &hidden, distinct, star)? {
            Some(e) => Some(e),
            None if name == "array_agg" && !star => Some(self.bind_array_agg(&hidden, distinct)?),
            None => self.bind_aggregate(name, hidden, distinct, star)?,
        };
        let Some(Expr::Agg(agg)) = bound else {
            // Not an aggregate: an unknown function is reported as such.
            if let Some(f) = plain {
                self.bind_expr(&ast::Expr::Function(f), scope)?;
            }
            return Err(PgError::new(
                SqlState::WRONG_OBJECT_TYPE,
                format!(
                    "OVER specified, but {name} is not a window function nor an aggregate function"
                ),
            ));
        };
        if agg.distinct {
            return Err(PgError::new(
                SqlState::FEATURE_NOT_SUPPORTED,
                "DISTINCT is not implemented for window functions",
            ));
        }
        let mut agg = *agg;
        let mut restore = |e: Expr| -> PgResult<Expr> {
            Ok(match e {
                Expr::Column(i, _) if i > usize::MAX - inner.len().max(1) => {
                    inner[usize::MAX - i].clone()
                }
                other => other,
            })
        };
        agg.args = std::mem::take(&mut agg.args)
            .into_iter()
            .map(|a| a.transform(&mut restore))
            .collect::<PgResult<_>>()?;
        Ok(agg)
    }

    fn bind_window_spec(&mut self, spec: ResolvedSpec, scope: &Scope) -> PgResult<WindowSpec> {
        let partition = spec
            .partition
            .iter()
            .map(|e| self.bind_expr(e, scope))
            .collect::<PgResult<Vec<_>>>()?;
        let mut order = Vec::new();
        for o in &spec.order {
            let expr = self.bind_expr(&o.expr, scope)?;
            let descending = super::query::descending(&o.options)?;
            order.push(WindowOrder {
                expr,
                descending,
                nulls_first: o.options.nulls_first.unwrap_or(descending),
            });
        }
        for e in partition.iter().chain(order.iter().map(|o| &o.expr)) {
            if e.contains_window() {
                return Err(window_error(
                    "window functions are not allowed in window definitions",
                ));
            }
        }
        let frame = match spec.frame {
            None => WindowFrame::default_frame(),
            Some(f) => self.bind_frame(&f, spec.exclusion, &order, scope)?,
        };
        Ok(WindowSpec {
            partition,
            order,
            frame,
        })
    }

    fn bind_frame(
        &mut self,
        f: &ast::WindowFrame,
        exclusion: FrameExclusion,
        order: &[WindowOrder],
        scope: &Scope,
    ) -> PgResult<WindowFrame> {
        let (units, word) = match f.units {
            ast::WindowFrameUnits::Rows => (FrameUnits::Rows, "ROWS"),
            ast::WindowFrameUnits::Range => (FrameUnits::Range, "RANGE"),
            ast::WindowFrameUnits::Groups => (FrameUnits::Groups, "GROUPS"),
        };
        let start = f.start_bound.clone();
        let end = f
            .end_bound
            .clone()
            .unwrap_or(ast::WindowFrameBound::CurrentRow);
        use ast::WindowFrameBound as B;
        match (&start, &end) {
            (B::Following(None), _) => {
                return Err(window_error("frame start cannot be UNBOUNDED FOLLOWING"))
            }
            (_, B::Preceding(None)) => {
                return Err(window_error("frame end cannot be UNBOUNDED PRECEDING"))
            }
            (B::CurrentRow, B::Preceding(_)) => {
                return Err(window_error(
                    "frame starting from current row cannot have preceding rows",
                ))
            }
            (B::Following(_), B::Preceding(_) | B::CurrentRow) => {
                return Err(window_error(
                    "frame starting from following row cannot have preceding rows",
                ))
            }
            _ => {}
        }
        if units == FrameUnits::Groups && order.is_empty() {
            return Err(window_error("GROUPS mode requires an ORDER BY clause"));
        }
        let has_offset = |b: &B| matches!(b, B::Preceding(Some(_)) | B::Following(Some(_)));
        // The offset's type: bigint counts rows or groups; RANGE adds it to
        // the single ORDER BY key.
        let offset_type = if units == FrameUnits::Range && (has_offset(&start) || has_offset(&end))
        {
            let [key] = order else {
                return Err(window_error(
                    "RANGE with offset PRECEDING/FOLLOWING requires exactly one ORDER BY column",
                ));
            };
            let t = key.expr.type_id();
            match t {
                TypeId::Int2 | TypeId::Int4 | TypeId::Int8 => TypeId::Int8,
                TypeId::Float4 | TypeId::Float8 => TypeId::Float8,
                TypeId::Numeric => TypeId::Numeric,
                TypeId::Date | TypeId::Timestamp | TypeId::Timestamptz | TypeId::Interval => {
                    TypeId::Interval
                }
                t => {
                    return Err(PgError::new(
                        SqlState::FEATURE_NOT_SUPPORTED,
                        format!(
                        "RANGE with offset PRECEDING/FOLLOWING is not supported for column type {}",
                        t.display_name()
                    ),
                    ))
                }
            }
        } else {
            TypeId::Int8
        };
        let range_key_type = (units == FrameUnits::Range)
            .then(|| order.first().map(|o| o.expr.type_id()))
            .flatten();
        let mut bound = |b: &B| -> PgResult<FrameBound> {
            let offset = |binder: &mut Self, e: &ast::Expr| -> PgResult<Expr> {
                // sqlparser reads a quoted offset as an INTERVAL literal;
                // PostgreSQL reads it as a literal of unknown type.
                let e = match e {
                    ast::Expr::Interval(iv)
                        if iv.leading_field.is_none()
                            && iv.last_field.is_none()
                            && iv.fractional_seconds_precision.is_none() =>
                    {
                        iv.value.as_ref()
                    }
                    other => other,
                };
                let mut x = binder.bind_expr(e, scope)?;
                // An unknown literal is read as the key's type first (as
                // in_range's resolution does): `'1 day'` for an integer
                // key is an invalid integer.
                if let (TypeId::Unknown, Some(key)) = (x.type_id(), range_key_type) {
                    let to = if offset_type == TypeId::Interval {
                        TypeId::Interval
                    } else {
                        key
                    };
                    x = binder.coerce(x, to.into(), CastContext::Implicit)?;
                }
                let mut column = false;
                x.visit(&mut |n| column |= matches!(n, Expr::Column(..)));
                if column {
                    return Err(PgError::new(
                        SqlState::INVALID_COLUMN_REFERENCE,
                        format!("argument of {word} must not contain variables"),
                    ));
                }
                // RANGE: only an offset that converts implicitly to the
                // in_range support function's offset type (no int key with
                // a numeric offset, no date key with an integer one).
                if let Some(key) = range_key_type {
                    let t = x.type_id();
                    if t != offset_type && !can_cast(t, offset_type, CastContext::Implicit) {
                        return Err(PgError::new(
                            SqlState::FEATURE_NOT_SUPPORTED,
                            format!(
                                "RANGE with offset PRECEDING/FOLLOWING is not supported for \
                                 column type {} and offset type {}",
                                key.display_name(),
                                t.display_name()
                            ),
                        ));
                    }
                }
                binder.coerce(x, offset_type.into(), CastContext::Assignment)
            };
            Ok(match b {
                B::Preceding(None) => FrameBound::UnboundedPreceding,
                B::Following(None) => FrameBound::UnboundedFollowing,
                B::CurrentRow => FrameBound::CurrentRow,
                B::Preceding(Some(e)) => FrameBound::Preceding(offset(self, e)?),
                B::Following(Some(e)) => FrameBound::Following(offset(self, e)?),
            })
        };
        Ok(WindowFrame {
            units,
            start: bound(&start)?,
            end: bound(&end)?,
            exclusion,
        })
    }

    /// The window stage of a SELECT over `plan` (after grouping): the
    /// WindowAgg nodes and the select list reading their results; the
    /// query's ORDER BY `sort_keys` are dropped when the windows' order
    /// gives it.
    pub(super) fn window_stage(
        &mut self,
        plan: Plan,
        exprs: Vec<Expr>,
        sort_keys: &mut Vec<SortKey>,
        s: &ast::Select,
    ) -> PgResult<(Plan, Vec<Expr>)> {
        let (plan, exprs, order) = self.plan_windows(plan, exprs)?;
        if s.distinct.is_none() && order_satisfied(sort_keys, &exprs, &order) {
            sort_keys.clear();
        }
        Ok((plan, exprs))
    }

    /// Adds the WindowAgg nodes evaluating the window calls of `exprs`
    /// (the select list and hidden ORDER BY columns, over `plan`'s rows),
    /// and rewrites each call into a reference to its result column.
    /// Returns the plan, the rewritten expressions and the order the rows
    /// leave the top WindowAgg in.
    fn plan_windows(
        &mut self,
        plan: Plan,
        exprs: Vec<Expr>,
    ) -> PgResult<(Plan, Vec<Expr>, Vec<SortKey>)> {
        // The distinct calls, in order of appearance.
        let mut calls: Vec<WindowCall> = Vec::new();
        for e in &exprs {
            e.visit(&mut |x| {
                if let Expr::Window(w) = x {
                    if !calls.iter().any(|c| same_call(c, w)) {
                        calls.push((**w).clone());
                    }
                }
            });
        }
        // Calls sharing a window share a WindowAgg.
        let mut windows: Vec<(WindowSpec, Vec<usize>)> = Vec::new();
        for (i, c) in calls.iter().enumerate() {
            match windows.iter_mut().find(|(s, _)| *s == c.spec) {
                Some((_, v)) => v.push(i),
                None => windows.push((c.spec.clone(), vec![i])),
            }
        }
        // Sort keys become columns: a projection below adds those that are
        // not input columns already. `keys` numbers them in order of first
        // appearance, as PostgreSQL's sort-group references.
        let width = plan.width();
        let types = plan.column_types();
        let mut base: Vec<Expr> = (0..width)
            .map(|i| Expr::Column(i, types.get(i).copied().unwrap_or(TypeId::Text.into())))
            .collect();
        let mut keys: Vec<Expr> = Vec::new();
        let mut key_column = |e: &Expr, base: &mut Vec<Expr>| -> (usize, usize) {
            let r = match keys.iter().position(|k| k == e) {
                Some(r) => r,
                None => {
                    keys.push(e.clone());
                    keys.len() - 1
                }
            };
            let col = match e {
                Expr::Column(i, _) => *i,
                _ => match base.iter().position(|b| b == e) {
                    Some(i) => i,
                    None => {
                        base.push(e.clone());
                        base.len() - 1
                    }
                },
            };
            (r, col)
        };
        // Per window: its sort keys and their references.
        let mut planned: Vec<PlannedWindow> = Vec::new();
        for (w, (spec, _)) in windows.iter().enumerate() {
            let mut sort = Vec::new();
            for p in &spec.partition {
                let (r, column) = key_column(p, &mut base);
                sort.push((
                    r,
                    SortKey {
                        column,
                        descending: false,
                        nulls_first: false,
                    },
                ));
            }
            let nparts = sort.len();
            for o in &spec.order {
                let (r, column) = key_column(&o.expr, &mut base);
                sort.push((
                    r,
                    SortKey {
                        column,
                        descending: o.descending,
                        nulls_first: o.nulls_first,
                    },
                ));
            }
            planned.push(PlannedWindow {
                sort,
                partition_keys: nparts,
                window: w,
            });
        }
        // PostgreSQL's order: by sort-group reference, highest first, a
        // window whose keys extend another's before it; the first sorts
        // lowest in the plan.
        planned.sort_by(
            |PlannedWindow { sort: a, .. }, PlannedWindow { sort: b, .. }| {
                for (x, y) in a.iter().zip(b) {
                    let o = y.0.cmp(&x.0).then_with(|| {
                        (x.1.descending, x.1.nulls_first).cmp(&(y.1.descending, y.1.nulls_first))
                    });
                    if o.is_ne() {
                        return o;
                    }
                }
                b.len().cmp(&a.len())
            },
        );
        let mut plan = if base.len() > width {
            Plan::Project {
                input: Box::new(plan),
                exprs: base,
            }
        } else {
            plan
        };
        let mut current: Vec<SortKey> = Vec::new();
        let mut result_column = vec![0; calls.len()];
        for PlannedWindow {
            sort,
            partition_keys: nparts,
            window: w,
        } in planned
        {
            let keys: Vec<SortKey> = sort.into_iter().map(|(_, k)| k).collect();
            if !keys.is_empty() && !current.starts_with(&keys) {
                plan = Plan::Sort {
                    input: Box::new(plan),
                    keys: keys.clone(),
                };
                current = keys.clone();
            }
            let (spec, members) = &windows[w];
            let first = plan.width();
            for (j, &c) in members.iter().enumerate() {
                result_column[c] = first + j;
            }
            plan = Plan::WindowAgg {
                input: Box::new(plan),
                partition: keys[..nparts].iter().map(|k| k.column).collect(),
                order: keys[nparts..].to_vec(),
                frame: spec.frame.clone(),
                funcs: members.iter().map(|&c| calls[c].clone()).collect(),
            };
        }
        fn replace(e: Expr, calls: &[WindowCall], columns: &[usize]) -> PgResult<Expr> {
            match e {
                Expr::Window(w) => {
                    let i = calls
                        .iter()
                        .position(|c| same_call(c, &w))
                        .expect("collected");
                    Ok(Expr::Column(columns[i], w.result))
                }
                other => other.map_children(&mut |c| replace(c, calls, columns)),
            }
        }
        let exprs = exprs
            .into_iter()
            .map(|e| replace(e, &calls, &result_column))
            .collect::<PgResult<Vec<_>>>()?;
        Ok((plan, exprs, current))
    }
}

/// Whether two calls are the same call. `==` is not enough: a NaN constant
/// (`lead(x, 1, 'NaN'::float8)`) is not equal to itself, and the call must
/// still be found again when its result replaces it.
fn same_call(a: &WindowCall, b: &WindowCall) -> bool {
    a == b || format!("{a:?}") == format!("{b:?}")
}

/// A window on its way into the plan: its sort keys (each with its
/// sort-group reference), how many of them partition, and its index.
struct PlannedWindow {
    sort: Vec<(usize, SortKey)>,
    partition_keys: usize,
    window: usize,
}

/// Whether rows in `order` (over the select list's input) already come in
/// the order the query's ORDER BY `sort` asks (over `exprs`).
fn order_satisfied(sort: &[SortKey], exprs: &[Expr], order: &[SortKey]) -> bool {
    sort.len() <= order.len()
        && sort.iter().zip(order).all(|(s, o)| {
            matches!(exprs.get(s.column), Some(Expr::Column(c, _)) if *c == o.column)
                && s.descending == o.descending
                && s.nulls_first == o.nulls_first
        })
}
