//! Expression binding and type coercion.

use std::sync::Arc;

use common::{PgError, PgResult, SqlState};
use sqlparser::ast;
use types::cast::{can_cast, cast_value, CastContext};
use types::functions::lookup_function;
use types::io::parse_text;
use types::ops::{resolve_binary_op, BinaryOp, LikePattern};
use types::{DataType, TypeId, Value};

use super::{ident_name, object_name_parts, Binder, Scope, ScopeColumn};
use crate::expr::{Expr, Like};

fn undefined_column(name: &str) -> PgError {
    PgError::new(
        SqlState::UNDEFINED_COLUMN,
        format!("column {name} does not exist"),
    )
}

fn with_hint(err: PgError, hint: Option<String>) -> PgError {
    match hint {
        Some(h) => err.with_hint(h),
        None => err,
    }
}

/// A COLLATE clause's collation: strings compare bytewise, which is what
/// the default, C and POSIX collations mean here (every database is
/// created with the C collation); other collations are not supported.
pub(super) fn check_collation(collation: &ast::ObjectName) -> PgResult<()> {
    let name = object_name_parts(collation)?;
    match name.last().map(String::as_str) {
        Some("default" | "C" | "c" | "POSIX" | "posix" | "ucs_basic") => Ok(()),
        _ => Err(PgError::new(
            SqlState::UNDEFINED_OBJECT,
            format!(
                "collation \"{}\" for encoding \"UTF8\" does not exist",
                name.join(".")
            ),
        )),
    }
}

fn type_mismatch(msg: String) -> PgError {
    PgError::new(SqlState::DATATYPE_MISMATCH, msg)
}

impl Binder<'_, '_> {
    /// The columns of `scope`, then of the enclosing queries, innermost first.
    fn all_scopes<'s>(&'s self, scope: &'s Scope) -> impl Iterator<Item = &'s ScopeColumn> {
        scope.iter().chain(self.outer.iter().rev().flatten())
    }

    /// Resolves a (possibly qualified) column name in `scope`, then outer scopes.
    fn resolve_column(&self, parts: &[String], scope: &Scope) -> PgResult<Expr> {
        let (qual, name) = match parts {
            [n] => (None, n),
            [q, n] => (Some(q), n),
            [_, q, n] => (Some(q), n),
            _ => return Err(PgError::syntax("improper qualified name")),
        };
        let find = |s: &Scope| -> PgResult<Option<usize>> {
            let mut hits = s.iter().enumerate().filter(|(_, c)| {
                &c.name == name
                    && match qual {
                        None => !c.hidden || super::system_columns::found_unqualified(c),
                        Some(q) => c.qualifier.as_deref() == Some(q.as_str()),
                    }
            });
            let first = hits.next().map(|(i, _)| i);
            if first.is_some() && hits.next().is_some() {
                return Err(PgError::new(
                    SqlState::AMBIGUOUS_COLUMN,
                    format!("column reference \"{name}\" is ambiguous"),
                ));
            }
            Ok(first)
        };
        if let Some(i) = find(scope)? {
            return Ok(Expr::Column(i, scope[i].ty));
        }
        for (d, s) in self.outer.iter().rev().enumerate() {
            if let Some(i) = find(s)? {
                let level = self.outer.len() - 1 - d;
                self.outermost_ref.set(self.outermost_ref.get().min(level));
                return Ok(Expr::OuterColumn {
                    depth: d + 1,
                    index: i,
                    ty: s[i].ty,
                });
            }
        }
        // A PL/pgSQL record variable's field (`rec.x`) is a parameter
        // named so.
        if let Some(q) = qual {
            let field = format!("{q}.{name}");
            if let Some(i) = self.ctx.param_names.iter().rposition(|p| *p == field) {
                let ty = self.ctx.param_types.get(i).copied().flatten();
                return Ok(Expr::Param(i, ty.unwrap_or(TypeId::Unknown).into()));
            }
        }
        if let Some(q) = qual {
            let known = scope
                .iter()
                .any(|c| c.qualifier.as_deref() == Some(q.as_str()))
                || self
                    .outer
                    .iter()
                    .any(|s| s.iter().any(|c| c.qualifier.as_deref() == Some(q.as_str())));
            if !known && self.modify_target.as_deref() == Some(q.as_str()) {
                return Err(PgError::new(
                    SqlState::UNDEFINED_TABLE,
                    format!("invalid reference to FROM-clause entry for table \"{q}\""),
                )
                .with_hint(format!(
                    "There is an entry for table \"{q}\", but it cannot be referenced from this part of the query."
                )));
            }
            if !known {
                // A table in scope under an alias, named by its own name.
                let aliased = scope.iter().chain(self.outer.iter().flatten()).find(|c| {
                    c.qualifier.is_some()
                        && self
                            .ctx
                            .catalog
                            .table_by_oid(c.table_oid)
                            .is_some_and(|t| t.name == *q)
                });
                if let Some(c) = aliased {
                    let alias = c.qualifier.as_deref().unwrap_or_default();
                    return Err(PgError::new(
                        SqlState::UNDEFINED_TABLE,
                        format!("invalid reference to FROM-clause entry for table \"{q}\""),
                    )
                    .with_hint(format!(
                        "Perhaps you meant to reference the table alias \"{alias}\"."
                    )));
                }
                return Err(PgError::new(
                    SqlState::UNDEFINED_TABLE,
                    format!("missing FROM-clause entry for table \"{q}\""),
                ));
            }
            return Err(with_hint(
                undefined_column(&format!("{q}.{name}")),
                super::fuzzy::missing_column_hint(name, Some(q.as_str()), self.all_scopes(scope)),
            ));
        }
        // Inside a function body an argument's (or variable's) name.
        if let Some(i) = self.ctx.param_names.iter().rposition(|p| p == name) {
            let ty = self.ctx.param_types.get(i).copied().flatten();
            return Ok(Expr::Param(i, ty.unwrap_or(TypeId::Unknown).into()));
        }
        Err(with_hint(
            undefined_column(&format!("\"{name}\"")),
            super::fuzzy::missing_column_hint(name, None, self.all_scopes(scope)),
        ))
    }

    fn number_const(&self, s: &str) -> PgResult<Expr> {
        if !s.contains(['.', 'e', 'E']) {
            if let Ok(v) = s.parse::<i32>() {
                return Ok(Expr::Const(Value::Int4(v), TypeId::Int4.into()));
            }
            if let Ok(v) = s.parse::<i64>() {
                return Ok(Expr::Const(Value::Int8(v), TypeId::Int8.into()));
            }
        }
        let v = Value::Numeric(Box::new(::types::numeric::Numeric::parse(s)?));
        Ok(Expr::Const(v, TypeId::Numeric.into()))
    }

    fn bind_value(&mut self, v: &ast::Value) -> PgResult<Expr> {
        use ast::Value as V;
        Ok(match v {
            V::Number(s, _) => self.number_const(s)?,
            V::SingleQuotedString(s)
            | V::EscapedStringLiteral(s)
            | V::UnicodeStringLiteral(s)
            | V::NationalStringLiteral(s) => {
                Expr::Const(Value::Text(s.clone()), TypeId::Unknown.into())
            }
            V::DollarQuotedString(d) => {
                Expr::Const(Value::Text(d.value.clone()), TypeId::Unknown.into())
            }
            V::Boolean(b) => Expr::Const(Value::Bool(*b), TypeId::Bool.into()),
            V::Null => Expr::Const(Value::Null, TypeId::Unknown.into()),
            V::Placeholder(p) => {
                let n: usize = p
                    .trim_start_matches('$')
                    .parse()
                    .map_err(|_| PgError::syntax(format!("syntax error at or near \"{p}\"")))?;
                if n == 0 || n > 65535 {
                    return Err(PgError::new(
                        SqlState::UNDEFINED_PARAMETER,
                        format!("there is no parameter ${n}"),
                    ));
                }
                if self.ctx.param_types.len() < n {
                    self.ctx.param_types.resize(n, None);
                }
                let ty = self.ctx.param_types[n - 1].unwrap_or(TypeId::Unknown);
                Expr::Param(n - 1, ty.into())
            }
            other => {
                return Err(PgError::unsupported(format!(
                    "literal not supported: {other}"
                )))
            }
        })
    }

    /// Coerces `e` to `to` in `context`, resolving unknown literals and
    /// parameters to the target type.
    pub(crate) fn coerce(&mut self, e: Expr, to: DataType, context: CastContext) -> PgResult<Expr> {
        let from = e.type_id();
        if to.id == TypeId::Unknown {
            return Ok(e);
        }
        match e {
            Expr::Param(i, t) if t.id == TypeId::Unknown => {
                self.ctx.param_types[i] = Some(to.id);
                return Ok(Expr::Param(i, to.id.into()));
            }
            Expr::Const(Value::Null, _) => return Ok(Expr::Const(Value::Null, to)),
            Expr::Const(Value::Text(ref s), t)
                if to.id.is_reg()
                    && (t.id == TypeId::Unknown
                        || (t.id.is_string() && can_cast(t.id, to.id, context))) =>
            {
                let oid = self.reg_catalog().input(to.id, s)?;
                return Ok(Expr::Const(Value::Oid(oid), to));
            }
            Expr::Const(Value::Text(ref s), t) if t.id == TypeId::Unknown => {
                // An array literal takes its elements' typmod as a cast
                // would, and an explicit cast truncates ('abcd'::varchar(3)
                // is 'abc', as in PostgreSQL).
                let v = if to.typmod >= 0 && (to.id.is_array() || context == CastContext::Explicit)
                {
                    let v = parse_text(DataType::new(to.id), s, &self.ctx.io)?;
                    ::types::cast::apply_typmod(v, to, context == CastContext::Explicit)?
                } else {
                    parse_text(to, s, &self.ctx.io)?
                };
                return Ok(Expr::Const(v, to));
            }
            _ => {}
        }
        if from == to.id && (to.typmod < 0 || e.data_type().typmod == to.typmod) {
            return Ok(e);
        }
        if from == to.id && context == CastContext::Implicit {
            return Ok(e);
        }
        if !can_cast(from, to.id, context) {
            return Err(PgError::new(
                SqlState::CANNOT_COERCE,
                format!(
                    "cannot cast type {} to {}",
                    from.display_name(),
                    to.id.display_name()
                ),
            ));
        }
        // reg* output needs the catalog when the plan runs; not folded here.
        let prints_reg_name = from.is_reg() && !to.id.is_reg() && to.id != TypeId::Oid;
        if let (Expr::Const(v, _), false) = (&e, prints_reg_name) {
            // Fold constant casts now (errors surface at bind time, as PostgreSQL's).
            let v = cast_value(v.clone(), from, to, context, &self.ctx.io)?;
            return Ok(Expr::Const(v, to));
        }
        Ok(Expr::Cast {
            expr: Box::new(e),
            from,
            to,
            explicit: context == CastContext::Explicit,
        })
    }

    pub(crate) fn coerce_assign(&mut self, e: Expr, to: DataType, column: &str) -> PgResult<Expr> {
        let from = e.type_id();
        if from != TypeId::Unknown && !can_cast(from, to.id, CastContext::Assignment) {
            return Err(type_mismatch(format!(
                "column \"{column}\" is of type {} but expression is of type {}",
                super::types::format_type(to),
                from.display_name()
            ))
            .with_hint("You will need to rewrite or cast the expression."));
        }
        self.coerce(e, to, CastContext::Assignment)
    }

    pub(crate) fn coerce_bool(&mut self, e: Expr, clause: &str) -> PgResult<Expr> {
        match e.type_id() {
            TypeId::Bool => Ok(e),
            TypeId::Unknown => self.coerce(e, TypeId::Bool.into(), CastContext::Implicit),
            t => Err(type_mismatch(format!(
                "argument of {clause} must be type boolean, not type {}",
                t.display_name()
            ))),
        }
    }

    /// Finds a common type for CASE/COALESCE/UNION branches (PostgreSQL's
    /// select_common_type, simplified to our type set).
    pub(crate) fn common_type(&self, types: &[DataType], what: &str) -> PgResult<DataType> {
        let known: Vec<DataType> = types
            .iter()
            .copied()
            .filter(|t| t.id != TypeId::Unknown)
            .collect();
        let Some(&first) = known.first() else {
            return Ok(TypeId::Text.into());
        };
        let mut best = first;
        for &t in &known[1..] {
            if t.id == best.id {
                if t.typmod != best.typmod {
                    best = DataType::new(best.id);
                }
                continue;
            }
            if can_cast(best.id, t.id, CastContext::Implicit) {
                best = DataType::new(t.id);
            } else if !can_cast(t.id, best.id, CastContext::Implicit) {
                return Err(type_mismatch(format!(
                    "{what} types {} and {} cannot be matched",
                    best.id.display_name(),
                    t.id.display_name()
                )));
            }
        }
        Ok(best)
    }

    pub(crate) fn bind_binary(&mut self, op: BinaryOp, l: Expr, r: Expr) -> PgResult<Expr> {
        let (lt, rt) = (l.type_id(), r.type_id());
        let res = resolve_binary_op(op, lt, rt)
            .ok_or_else(|| ::types::ops::operator_not_exist_error(op, lt, rt))?;
        // `||` with a non-string side converts it with its output function
        // (PostgreSQL's anytextcat / textanycat).
        let ctx_for = |t: TypeId| {
            if op == BinaryOp::Concat && !t.is_string() {
                CastContext::Explicit
            } else {
                CastContext::Implicit
            }
        };
        let l = self.coerce(l, res.left.into(), ctx_for(lt))?;
        let r = self.coerce(r, res.right.into(), ctx_for(rt))?;
        // timestamptz +/- interval moves the wall clock of the session's
        // zone, so it runs as the session-aware function.
        let zoned = match (op, res.left, res.right) {
            (BinaryOp::Add, TypeId::Timestamptz, TypeId::Interval) => {
                Some(("timestamptz_pl_interval", false))
            }
            (BinaryOp::Add, TypeId::Interval, TypeId::Timestamptz) => {
                Some(("timestamptz_pl_interval", true))
            }
            (BinaryOp::Sub, TypeId::Timestamptz, TypeId::Interval) => {
                Some(("timestamptz_mi_interval", false))
            }
            _ => None,
        };
        if let Some((name, swapped)) = zoned {
            let args = if swapped { vec![r, l] } else { vec![l, r] };
            return self.call_builtin_exprs(name, args);
        }
        Ok(Expr::Binary {
            op,
            left: Box::new(l),
            right: Box::new(r),
            ty: res.result.into(),
        })
    }

    pub(crate) fn bind_expr(&mut self, e: &ast::Expr, scope: &Scope) -> PgResult<Expr> {
        let _level = common::stack_depth::enter()?;
        self.bind_expr_node(e, scope)
            .map_err(|err| self.locate(err, e))
    }

    /// AND and OR chains bind to one n-ary node, as PostgreSQL's grammar
    /// makes them, without recursing along the chain: an ORM's
    /// `a = 0 OR a = 1 OR ... OR a = 99999` is one level deep.
    fn bind_bool_chain(&mut self, e: &ast::Expr, and: bool, scope: &Scope) -> PgResult<Expr> {
        use ast::BinaryOperator as B;
        let is_same = |x: &ast::Expr| {
            matches!(x, ast::Expr::BinaryOp { op, .. }
                if matches!((op, and), (B::And, true) | (B::Or, false)))
        };
        // Operands in source order: walk the tree with an explicit stack,
        // right child pushed first so the left is visited first.
        let mut pending = vec![e];
        let mut args = Vec::new();
        while let Some(x) = pending.pop() {
            let mut x = x;
            while let ast::Expr::Nested(inner) = x {
                if !is_same(inner) {
                    break;
                }
                x = inner;
            }
            match x {
                ast::Expr::BinaryOp { left, right, .. } if is_same(x) => {
                    pending.push(right);
                    pending.push(left);
                }
                leaf => {
                    let bound = self.bind_expr(leaf, scope)?;
                    args.push(self.coerce_bool(bound, if and { "AND" } else { "OR" })?);
                }
            }
        }
        Ok(if and { Expr::And(args) } else { Expr::Or(args) })
    }

    fn bind_expr_node(&mut self, e: &ast::Expr, scope: &Scope) -> PgResult<Expr> {
        use ast::Expr as E;
        match e {
            E::Identifier(i) => {
                let name = ident_name(i);
                match (i.quote_style, name.as_str()) {
                    (None, "current_user" | "user" | "current_role") => Ok(Expr::Const(
                        Value::Text(self.ctx.user.to_string()),
                        TypeId::Name.into(),
                    )),
                    (None, "session_user") => Ok(Expr::Const(
                        Value::Text(self.ctx.session_user.to_string()),
                        TypeId::Name.into(),
                    )),
                    (None, "current_catalog") => Ok(Expr::Const(
                        Value::Text(self.ctx.db_name.to_string()),
                        TypeId::Name.into(),
                    )),
                    (None, "current_schema") => self.current_schema(),
                    (None, "current_date") => self.call_builtin("current_date", vec![]),
                    (None, "current_timestamp" | "localtimestamp") => {
                        self.call_builtin("now", vec![])
                    }
                    _ => self.resolve_column(&[name], scope),
                }
            }
            E::CompoundIdentifier(ids) => {
                let parts: Vec<String> = ids.iter().map(ident_name).collect();
                self.resolve_column(&parts, scope)
            }
            E::Value(v) => self.bind_value(&v.value),
            E::Nested(inner) => self.bind_expr(inner, scope),
            E::Collate { expr, collation } => {
                check_collation(collation)?;
                self.bind_expr(expr, scope)
            }
            E::Interval(iv) => self.bind_interval_literal(iv, scope),
            E::TypedString(ts) => {
                let to = self.bind_data_type(&ts.data_type)?;
                let lit = self.bind_value(&ts.value.value)?;
                let cast = self.coerce(lit, to, CastContext::Explicit)?;
                match self.domain_named(&ts.data_type)? {
                    Some(d) => self.check_domain(cast, &d),
                    None => Ok(cast),
                }
            }
            E::Cast {
                expr, data_type, ..
            } => {
                let to = self.bind_data_type(data_type)?;
                let inner = match expr.as_ref() {
                    E::Array(a) => self.bind_array_constructor(&a.elem, Some(to), scope)?,
                    _ => self.bind_expr(expr, scope)?,
                };
                let cast = self.coerce(inner, to, CastContext::Explicit)?;
                match self.domain_named(data_type)? {
                    Some(d) => self.check_domain(cast, &d),
                    None => Ok(cast),
                }
            }
            E::Array(a) => self.bind_array_constructor(&a.elem, None, scope),
            E::BinaryOp { left, op, right } => {
                use ast::BinaryOperator as B;
                // OPERATOR(pg_catalog.~) and friends: the built-in operator.
                if let B::PGCustomBinaryOperator(parts) = op {
                    let builtin = match parts.as_slice() {
                        [schema, sym] if schema == "pg_catalog" => Some(sym.as_str()),
                        [sym] => Some(sym.as_str()),
                        _ => None,
                    }
                    .and_then(|sym| {
                        Some(match sym {
                            "~" => B::PGRegexMatch,
                            "!~" => B::PGRegexNotMatch,
                            "~*" => B::PGRegexIMatch,
                            "!~*" => B::PGRegexNotIMatch,
                            "=" => B::Eq,
                            "<>" | "!=" => B::NotEq,
                            "<" => B::Lt,
                            "<=" => B::LtEq,
                            ">" => B::Gt,
                            ">=" => B::GtEq,
                            "+" => B::Plus,
                            "-" => B::Minus,
                            "*" => B::Multiply,
                            "/" => B::Divide,
                            "%" => B::Modulo,
                            "||" => B::StringConcat,
                            _ => return None,
                        })
                    });
                    if let [sym] | [_, sym] = parts.as_slice() {
                        if let Some(f) = super::network::custom_operator_function(sym) {
                            let l = self.bind_expr(left, scope)?;
                            let r = self.bind_expr(right, scope)?;
                            return self.call_builtin_exprs(f, vec![l, r]);
                        }
                    }
                    let Some(op) = builtin else {
                        return Err(PgError::new(
                            SqlState::UNDEFINED_FUNCTION,
                            format!("operator does not exist: {}", parts.join(".")),
                        ));
                    };
                    let e = E::BinaryOp {
                        left: left.clone(),
                        op,
                        right: right.clone(),
                    };
                    return self.bind_expr(&e, scope);
                }
                if matches!(op, B::And | B::Or) {
                    return self.bind_bool_chain(e, matches!(op, B::And), scope);
                }
                let l = self.bind_expr(left, scope)?;
                let r = self.bind_expr(right, scope)?;
                if let Some(f) = super::json::operator_function(op, l.type_id(), r.type_id()) {
                    return self.call_builtin_exprs(f, vec![l, r]);
                }
                if let Some(f) = super::arrays::operator_function(op, l.type_id(), r.type_id()) {
                    return self.call_builtin_exprs(f, vec![l, r]);
                }
                if let Some(f) = super::network::operator_function(op, l.type_id(), r.type_id()) {
                    return self.call_builtin_exprs(f, vec![l, r]);
                }
                if let B::Custom(sym) = op {
                    if let Some(f) = super::network::custom_operator_function(sym) {
                        return self.call_builtin_exprs(f, vec![l, r]);
                    }
                }
                let op = match op {
                    B::And | B::Or => {
                        let l =
                            self.coerce_bool(l, if matches!(op, B::And) { "AND" } else { "OR" })?;
                        let r =
                            self.coerce_bool(r, if matches!(op, B::And) { "AND" } else { "OR" })?;
                        return Ok(if matches!(op, B::And) {
                            Expr::And(vec![l, r])
                        } else {
                            Expr::Or(vec![l, r])
                        });
                    }
                    B::PGRegexMatch
                    | B::PGRegexNotMatch
                    | B::PGRegexIMatch
                    | B::PGRegexNotIMatch => {
                        let f = match op {
                            B::PGRegexMatch => "textregexeq",
                            B::PGRegexNotMatch => "textregexne",
                            B::PGRegexIMatch => "texticregexeq",
                            _ => "texticregexne",
                        };
                        return self.call_builtin_exprs(f, vec![l, r]);
                    }
                    B::Plus => BinaryOp::Add,
                    B::Minus => BinaryOp::Sub,
                    B::Multiply => BinaryOp::Mul,
                    B::Divide => BinaryOp::Div,
                    B::Modulo => BinaryOp::Mod,
                    B::StringConcat => BinaryOp::Concat,
                    B::PGExp => BinaryOp::Pow,
                    B::BitwiseAnd => BinaryOp::BitAnd,
                    B::BitwiseOr => BinaryOp::BitOr,
                    B::PGBitwiseXor => BinaryOp::BitXor,
                    B::PGBitwiseShiftLeft => BinaryOp::Shl,
                    B::PGBitwiseShiftRight => BinaryOp::Shr,
                    B::Eq => BinaryOp::Eq,
                    B::NotEq => BinaryOp::NotEq,
                    B::Lt => BinaryOp::Lt,
                    B::LtEq => BinaryOp::LtEq,
                    B::Gt => BinaryOp::Gt,
                    B::GtEq => BinaryOp::GtEq,
                    other if [l.type_id(), r.type_id()]
                        .iter()
                        .any(|t| matches!(t, TypeId::Json | TypeId::Jsonb)) =>
                    {
                        return Err(PgError::new(
                            SqlState::UNDEFINED_FUNCTION,
                            format!(
                                "operator does not exist: {} {other} {}",
                                l.type_id().display_name(),
                                r.type_id().display_name()
                            ),
                        )
                        .with_hint("No operator matches the given name and argument types. You might need to add explicit type casts."))
                    }
                    other => {
                        return Err(PgError::unsupported(format!(
                            "operator not supported yet: {other}"
                        )))
                    }
                };
                if op == BinaryOp::Concat
                    && (l.type_id().array_element().is_some()
                        || r.type_id().array_element().is_some())
                {
                    return self.bind_array_concat(l, r);
                }
                // Operators are strict: a NULL constant operand makes the
                // result NULL without evaluating the other side (PostgreSQL
                // folds these at plan time).
                Ok(fold_strict_null(self.bind_binary(op, l, r)?))
            }
            E::UnaryOp { op, expr } => {
                let inner = self.bind_expr(expr, scope)?;
                match op {
                    ast::UnaryOperator::Not => {
                        Ok(Expr::Not(Box::new(self.coerce_bool(inner, "NOT")?)))
                    }
                    ast::UnaryOperator::Plus => Ok(inner),
                    ast::UnaryOperator::BitwiseNot
                        if super::network::not_function(inner.type_id()).is_some() =>
                    {
                        let f = super::network::not_function(inner.type_id()).unwrap_or("inetnot");
                        self.call_builtin_exprs(f, vec![inner])
                    }
                    ast::UnaryOperator::Minus => {
                        if let Expr::Const(v, t) = &inner {
                            let folded = types::ops::negate(v);
                            if let Ok(v) = folded {
                                return Ok(Expr::Const(v, *t));
                            }
                        }
                        let inner = if inner.type_id() == TypeId::Unknown {
                            self.coerce(inner, TypeId::Numeric.into(), CastContext::Implicit)?
                        } else {
                            inner
                        };
                        if !inner.type_id().is_numeric_family()
                            && inner.type_id() != TypeId::Interval
                        {
                            return Err(PgError::new(
                                SqlState::UNDEFINED_FUNCTION,
                                format!(
                                    "operator does not exist: - {}",
                                    inner.type_id().display_name()
                                ),
                            ));
                        }
                        let t = inner.data_type();
                        Ok(fold_strict_null(Expr::Neg(Box::new(inner), t)))
                    }
                    other => Err(PgError::unsupported(format!(
                        "operator not supported yet: {other}"
                    ))),
                }
            }
            E::IsNull(x) | E::IsNotNull(x) => Ok(Expr::IsNull {
                expr: Box::new(self.bind_expr(x, scope)?),
                negated: matches!(e, E::IsNotNull(_)),
            }),
            E::IsTrue(x) | E::IsNotTrue(x) | E::IsFalse(x) | E::IsNotFalse(x) => {
                let inner = self.bind_expr(x, scope)?;
                Ok(Expr::IsBool {
                    expr: Box::new(self.coerce_bool(inner, "IS TRUE")?),
                    value: matches!(e, E::IsTrue(_) | E::IsNotTrue(_)),
                    negated: matches!(e, E::IsNotTrue(_) | E::IsNotFalse(_)),
                })
            }
            E::IsUnknown(x) | E::IsNotUnknown(x) => {
                let inner = self.bind_expr(x, scope)?;
                Ok(Expr::IsNull {
                    expr: Box::new(self.coerce_bool(inner, "IS UNKNOWN")?),
                    negated: matches!(e, E::IsNotUnknown(_)),
                })
            }
            E::IsDistinctFrom(a, b) | E::IsNotDistinctFrom(a, b) => {
                let l = self.bind_expr(a, scope)?;
                let r = self.bind_expr(b, scope)?;
                let Expr::Binary { left, right, .. } = self.bind_binary(BinaryOp::Eq, l, r)? else {
                    unreachable!()
                };
                Ok(Expr::IsDistinctFrom {
                    left,
                    right,
                    negated: matches!(e, E::IsNotDistinctFrom(..)),
                })
            }
            E::Between {
                expr,
                negated,
                low,
                high,
            } => {
                let x = self.bind_expr(expr, scope)?;
                let lo = self.bind_expr(low, scope)?;
                let hi = self.bind_expr(high, scope)?;
                let a = self.bind_binary(BinaryOp::GtEq, x.clone(), lo)?;
                let b = self.bind_binary(BinaryOp::LtEq, x, hi)?;
                let both = Expr::And(vec![a, b]);
                Ok(if *negated {
                    Expr::Not(Box::new(both))
                } else {
                    both
                })
            }
            E::Like {
                negated,
                expr,
                pattern,
                escape_char,
                any: false,
            }
            | E::ILike {
                negated,
                expr,
                pattern,
                escape_char,
                any: false,
            } => {
                let ci = matches!(e, E::ILike { .. });
                let x = self.bind_expr(expr, scope)?;
                let x = self.coerce(x, TypeId::Text.into(), CastContext::Implicit)?;
                let p = self.bind_expr(pattern, scope)?;
                let p = self.coerce(p, TypeId::Text.into(), CastContext::Implicit)?;
                let escape = match escape_char {
                    None => None,
                    Some(ec) => match self.bind_expr(ec, scope)? {
                        Expr::Const(Value::Text(s), _) => Some(s.chars().next().unwrap_or('\0')),
                        _ => return Err(PgError::unsupported("non-constant ESCAPE")),
                    },
                };
                if let Expr::Const(Value::Text(pat), _) = &p {
                    let compiled = LikePattern::compile(pat, escape, ci)?;
                    return Ok(Expr::LikeConst {
                        expr: Box::new(x),
                        pattern: Like(Arc::new(compiled)),
                        negated: *negated,
                    });
                }
                if escape.is_some() {
                    return Err(PgError::unsupported("ESCAPE with a non-constant pattern"));
                }
                Ok(Expr::Like {
                    expr: Box::new(x),
                    pattern: Box::new(p),
                    case_insensitive: ci,
                    negated: *negated,
                })
            }
            E::InList {
                expr,
                list,
                negated,
            } => {
                let x = self.bind_expr(expr, scope)?;
                let mut items = Vec::new();
                for item in list {
                    items.push(self.bind_expr(item, scope)?);
                }
                let mut types = vec![x.data_type()];
                types.extend(items.iter().map(Expr::data_type));
                let common = self.common_type(&types, "IN")?;
                let x = self.coerce(x, common, CastContext::Implicit)?;
                let items = items
                    .into_iter()
                    .map(|i| self.coerce(i, common, CastContext::Implicit))
                    .collect::<PgResult<Vec<_>>>()?;
                // Check the comparison exists.
                resolve_binary_op(BinaryOp::Eq, common.id, common.id).ok_or_else(|| {
                    PgError::new(
                        SqlState::UNDEFINED_FUNCTION,
                        format!(
                            "operator does not exist: {0} = {0}",
                            common.id.display_name()
                        ),
                    )
                })?;
                Ok(Expr::InList {
                    expr: Box::new(x),
                    list: items,
                    negated: *negated,
                })
            }
            E::InSubquery {
                expr,
                subquery,
                negated,
            } => {
                let x = self.bind_expr(expr, scope)?;
                let (plan, cols) = self.bind_subquery(subquery, scope)?;
                if cols.len() != 1 {
                    return Err(PgError::syntax("subquery has too many columns"));
                }
                let common = self.common_type(&[x.data_type(), cols[0].ty], "IN")?;
                let x = self.coerce(x, common, CastContext::Implicit)?;
                let plan = if cols[0].ty.id != common.id {
                    let c =
                        self.coerce(Expr::Column(0, cols[0].ty), common, CastContext::Implicit)?;
                    crate::plan::Plan::Project {
                        input: Box::new(plan),
                        exprs: vec![c],
                    }
                } else {
                    plan
                };
                Ok(Expr::InSubquery {
                    expr: Box::new(x),
                    plan: Box::new(plan),
                    negated: *negated,
                })
            }
            E::Exists { subquery, negated } => {
                let (plan, _) = self.bind_subquery(subquery, scope)?;
                // Only whether a row comes matters: its columns are not
                // computed (PostgreSQL's simplify_EXISTS_query).
                let plan = match plan {
                    crate::plan::Plan::Project { input, exprs }
                        if !exprs.iter().any(Expr::contains_srf) =>
                    {
                        crate::plan::Plan::Project {
                            input,
                            exprs: Vec::new(),
                        }
                    }
                    other => other,
                };
                Ok(Expr::Exists {
                    plan: Box::new(plan),
                    negated: *negated,
                })
            }
            E::Subquery(q) => {
                let (plan, cols) = self.bind_subquery(q, scope)?;
                if cols.len() != 1 {
                    return Err(PgError::syntax("subquery must return only one column"));
                }
                let ty = if cols[0].ty.id == TypeId::Unknown {
                    TypeId::Text.into()
                } else {
                    cols[0].ty
                };
                Ok(Expr::ScalarSubquery(Box::new(plan), ty))
            }
            E::Case {
                operand,
                conditions,
                else_result,
                ..
            } => {
                let operand = operand
                    .as_ref()
                    .map(|o| self.bind_expr(o, scope))
                    .transpose()?;
                let mut whens = Vec::new();
                for cw in conditions {
                    let cond = self.bind_expr(&cw.condition, scope)?;
                    let cond = match &operand {
                        Some(o) => self.bind_binary(BinaryOp::Eq, o.clone(), cond)?,
                        None => self.coerce_bool(cond, "CASE/WHEN")?,
                    };
                    whens.push((cond, self.bind_expr(&cw.result, scope)?));
                }
                let else_ = else_result
                    .as_ref()
                    .map(|e| self.bind_expr(e, scope))
                    .transpose()?;
                let mut types: Vec<DataType> = whens.iter().map(|w| w.1.data_type()).collect();
                if let Some(e) = &else_ {
                    types.push(e.data_type());
                }
                let ty = self.common_type(&types, "CASE")?;
                if whens
                    .iter()
                    .any(|(c, r)| c.contains_srf() || r.contains_srf())
                    || else_.as_ref().is_some_and(Expr::contains_srf)
                {
                    return Err(super::srf::srf_in_conditional("CASE"));
                }
                let whens = whens
                    .into_iter()
                    .map(|(c, r)| Ok((c, self.coerce(r, ty, CastContext::Implicit)?)))
                    .collect::<PgResult<Vec<_>>>()?;
                let else_ = else_
                    .map(|e| self.coerce(e, ty, CastContext::Implicit))
                    .transpose()?
                    .map(Box::new);
                Ok(Expr::Case {
                    operand: None,
                    whens,
                    else_,
                    ty,
                })
            }
            E::Function(f) => self.bind_function(f, scope),
            E::AnyOp {
                left,
                compare_op,
                right,
                ..
            } => self.bind_array_compare(left, compare_op, right, false, scope),
            E::AllOp {
                left,
                compare_op,
                right,
            } => self.bind_array_compare(left, compare_op, right, true, scope),
            E::CompoundFieldAccess { root, access_chain } => {
                self.bind_subscript(root, access_chain, scope)
            }
            E::Substring {
                expr,
                substring_from,
                substring_for,
                ..
            } => {
                let mut args = vec![self.bind_expr(expr, scope)?];
                args.push(match substring_from {
                    Some(f) => self.bind_expr(f, scope)?,
                    None => Expr::Const(Value::Int4(1), TypeId::Int4.into()),
                });
                if let Some(f) = substring_for {
                    args.push(self.bind_expr(f, scope)?);
                }
                self.call_builtin_exprs("substr", args)
            }
            E::Position { expr, r#in } => {
                let args = vec![self.bind_expr(r#in, scope)?, self.bind_expr(expr, scope)?];
                self.call_builtin_exprs("position", args)
            }
            E::Overlay {
                expr,
                overlay_what,
                overlay_from,
                overlay_for,
            } => {
                let mut args = vec![
                    self.bind_expr(expr, scope)?,
                    self.bind_expr(overlay_what, scope)?,
                    self.bind_expr(overlay_from, scope)?,
                ];
                if let Some(f) = overlay_for {
                    args.push(self.bind_expr(f, scope)?);
                }
                self.call_builtin_exprs("overlay", args)
            }
            E::Trim {
                expr,
                trim_where,
                trim_what,
                ..
            } => {
                let mut args = vec![self.bind_expr(expr, scope)?];
                if let Some(w) = trim_what {
                    args.push(self.bind_expr(w, scope)?);
                }
                let name = match trim_where {
                    Some(ast::TrimWhereField::Leading) => "ltrim",
                    Some(ast::TrimWhereField::Trailing) => "rtrim",
                    _ => "btrim",
                };
                self.call_builtin_exprs(name, args)
            }
            E::Extract { field, expr, .. } => {
                let f = Expr::Const(
                    Value::Text(field.to_string().to_lowercase()),
                    TypeId::Text.into(),
                );
                let x = self.bind_expr(expr, scope)?;
                // extract() is exact numeric (PostgreSQL 14+), unlike date_part.
                self.call_builtin_exprs("extract", vec![f, x])
            }
            E::AtTimeZone {
                timestamp,
                time_zone,
            } => {
                let ts = self.bind_expr(timestamp, scope)?;
                let zone = self.bind_expr(time_zone, scope)?;
                self.call_builtin_exprs("timezone", vec![zone, ts])
            }
            E::Ceil { expr, .. } => {
                let x = self.bind_expr(expr, scope)?;
                self.call_builtin_exprs("ceil", vec![x])
            }
            E::Floor { expr, .. } => {
                let x = self.bind_expr(expr, scope)?;
                self.call_builtin_exprs("floor", vec![x])
            }
            other => Err(PgError::unsupported(format!(
                "expression not supported yet: {other}"
            ))),
        }
    }

    pub(super) fn current_schema(&self) -> PgResult<Expr> {
        let s = self
            .ctx
            .search_path
            .iter()
            // Never the temporary schema, as in PostgreSQL.
            .filter(|s| !catalog::is_temp_schema_name(s))
            .find(|s| {
                self.ctx
                    .catalog
                    .namespace_by_name(self.ctx.db_oid, s)
                    .is_some()
            })
            .cloned();
        Ok(match s {
            Some(s) => Expr::Const(Value::Text(s), TypeId::Name.into()),
            None => Expr::Const(Value::Null, TypeId::Name.into()),
        })
    }

    /// `interval '...' [field [TO field]]`: the last field says what a bare
    /// number means and which smaller fields are dropped.
    fn bind_interval_literal(&mut self, iv: &ast::Interval, scope: &Scope) -> PgResult<Expr> {
        use ast::DateTimeField as F;
        use types::interval::{self as ivl, IntervalField};
        let field = |f: &F| -> PgResult<IntervalField> {
            Ok(match f {
                F::Year | F::Years => IntervalField::Year,
                F::Month | F::Months => IntervalField::Month,
                F::Day | F::Days => IntervalField::Day,
                F::Hour | F::Hours => IntervalField::Hour,
                F::Minute | F::Minutes => IntervalField::Minute,
                F::Second | F::Seconds => IntervalField::Second,
                other => {
                    return Err(PgError::syntax(format!(
                        "syntax error at or near \"{other}\""
                    )))
                }
            })
        };
        let last = match (&iv.last_field, &iv.leading_field) {
            (Some(l), _) | (None, Some(l)) => Some(field(l)?),
            (None, None) => None,
        };
        let inner = self.bind_expr(&iv.value, scope)?;
        match inner {
            Expr::Const(Value::Text(s), t) if t.id == TypeId::Unknown => {
                let v = ivl::parse_interval_with(
                    &s,
                    last.unwrap_or(IntervalField::Second),
                    self.ctx.io.interval_style,
                )?;
                let v = last.map_or(v, |l| ivl::truncate_to_field(v, l));
                Ok(Expr::Const(Value::Interval(v), TypeId::Interval.into()))
            }
            other => self.coerce(other, TypeId::Interval.into(), CastContext::Explicit),
        }
    }

    fn call_builtin(&mut self, name: &str, args: Vec<Expr>) -> PgResult<Expr> {
        self.call_builtin_exprs(name, args)
    }

    pub(crate) fn call_builtin_exprs(&mut self, name: &str, args: Vec<Expr>) -> PgResult<Expr> {
        let types: Vec<TypeId> = args.iter().map(Expr::type_id).collect();
        let f = lookup_function(name, &types)?;
        let mut bound = Vec::with_capacity(args.len());
        for (i, a) in args.into_iter().enumerate() {
            let want = if i < f.arg_types.len() {
                f.arg_types[i]
            } else {
                *f.arg_types.last().expect("variadic has an arg type")
            };
            // `"any"` positions convert with the type's output function.
            if types::functions::accepts_any(f, i) {
                bound.push(self.output_text(a)?);
                continue;
            }
            bound.push(self.coerce(a, want.into(), CastContext::Implicit)?);
        }
        let call = Expr::Func {
            func: crate::expr::Builtin(f),
            args: bound,
        };
        Ok(if f.volatile {
            call
        } else {
            fold_strict_null(call)
        })
    }

    /// `e` converted to text by its type's output function (a cast to text
    /// for every type but boolean, whose cast spells `true`, not `t`, and
    /// character(n), whose cast trims the padding its output keeps).
    pub(super) fn output_text(&mut self, e: Expr) -> PgResult<Expr> {
        if e.type_id() == TypeId::Bool {
            return self.call_builtin_exprs("boolout", vec![e]);
        }
        if e.type_id() == TypeId::Bpchar {
            return self.call_builtin_exprs("bpcharout", vec![e]);
        }
        self.coerce(e, TypeId::Text.into(), CastContext::Explicit)
    }

    pub(super) fn function_args(
        &mut self,
        f: &ast::Function,
        scope: &Scope,
    ) -> PgResult<(Vec<Expr>, bool, bool)> {
        match &f.args {
            ast::FunctionArguments::None => Ok((Vec::new(), false, false)),
            ast::FunctionArguments::Subquery(_) => {
                Err(PgError::unsupported("subquery as function argument"))
            }
            ast::FunctionArguments::List(list) => {
                let distinct = matches!(
                    list.duplicate_treatment,
                    Some(ast::DuplicateTreatment::Distinct)
                );
                let mut out = Vec::new();
                let mut star = false;
                for a in &list.args {
                    match a {
                        ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e)) => {
                            out.push(self.bind_expr(e, scope)?)
                        }
                        ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Wildcard) => star = true,
                        // `VARIADIC arr` (see bind/variadic.rs): the array.
                        a if crate::variadic::variadic_arg(a).is_some() => {
                            let e = crate::variadic::variadic_arg(a).expect("checked");
                            out.push(self.bind_expr(e, scope)?)
                        }
                        _ => {
                            return Err(PgError::unsupported(
                                "named or qualified-wildcard function arguments",
                            ))
                        }
                    }
                }
                Ok((out, distinct, star))
            }
        }
    }

    pub(super) fn bind_function(&mut self, f: &ast::Function, scope: &Scope) -> PgResult<Expr> {
        if f.over.is_some() {
            // A window call binds its own FILTER and ORDER BY (window.rs).
            return self.bind_function_call(f, scope);
        }
        let clauses = super::aggregates::CallClauses::of(f)?;
        let parts = object_name_parts(&f.name)?;
        let name = parts.last().expect("a function has a name");
        let call = match self.bind_ordered_set(name, f, scope)? {
            Some(call) => call,
            None => self.bind_function_call(f, scope)?,
        };
        self.apply_call_clauses(name, call, clauses, scope)
    }
}

/// A strict operator or function call with a NULL constant argument is a
/// NULL constant of its result type.
pub(crate) fn fold_strict_null(e: Expr) -> Expr {
    let is_null = |x: &Expr| matches!(x, Expr::Const(Value::Null, _));
    let fold = match &e {
        Expr::Binary { left, right, .. } => is_null(left) || is_null(right),
        Expr::Neg(x, _) => is_null(x),
        Expr::Func { func, args } => func.0.strict && args.iter().any(is_null),
        _ => false,
    };
    // An aggregate inside still makes the query an aggregate: keep it.
    if fold && !e.contains_agg() {
        let ty = e.data_type();
        Expr::Const(Value::Null, ty)
    } else {
        e
    }
}
