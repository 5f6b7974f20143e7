//! Error positions: PostgreSQL reports where in the query string a bind
//! error arose (the column reference, the literal that failed input
//! conversion, the function call).

use common::{PgError, SqlState};
use sqlparser::ast::{self, Spanned};
use sqlparser::tokenizer::Span;

use super::Binder;

/// Whether `err` is a failed input conversion of a literal (22P02 and friends).
fn is_input_error(err: &PgError) -> bool {
    matches!(
        err.code,
        SqlState::INVALID_TEXT_REPRESENTATION
            // bytea's hex input: "invalid hexadecimal digit"
            | SqlState::INVALID_PARAMETER_VALUE
            | SqlState::NUMERIC_VALUE_OUT_OF_RANGE
            | SqlState::INVALID_DATETIME_FORMAT
            | SqlState::DATETIME_FIELD_OVERFLOW
    )
    // Not 22001 (value too long for varchar(n)): PostgreSQL raises it from
    // the length coercion while planning, with no position.
}

/// The span of `e` if it is a literal (possibly parenthesised, signed or cast).
pub(crate) fn literal_span(e: &ast::Expr) -> Option<Span> {
    use ast::Expr as E;
    match e {
        E::Value(v) => Some(v.span),
        E::TypedString(ts) => Some(ts.value.span),
        E::Nested(x) => literal_span(x),
        // Only a cast of the literal itself converts it from unknown.
        E::Cast { expr: x, .. } => match x.as_ref() {
            E::Value(v) => Some(v.span),
            _ => None,
        },
        E::UnaryOp { expr, .. } => literal_span(expr),
        _ => None,
    }
}

fn is_bare_number(e: &ast::Expr) -> bool {
    match e {
        ast::Expr::Value(v) => matches!(v.value, ast::Value::Number(..)),
        ast::Expr::Nested(x) | ast::Expr::UnaryOp { expr: x, .. } => is_bare_number(x),
        _ => false,
    }
}

/// The literals directly under `e` whose conversion may fail there.
fn child_literals(e: &ast::Expr) -> Vec<Span> {
    use ast::Expr as E;
    let mut out = Vec::new();
    let mut push = |x: &ast::Expr| {
        // A bare number is typed already: only a string literal's input
        // conversion to the other side's type can fail.
        if is_bare_number(x) {
            return;
        }
        if let Some(s) = literal_span(x) {
            out.push(s);
        }
    };
    match e {
        E::Value(_) | E::TypedString(_) | E::Cast { .. } | E::Nested(_) | E::UnaryOp { .. } => {
            push(e)
        }
        E::BinaryOp { left, right, .. } => {
            push(left);
            push(right);
        }
        E::IsDistinctFrom(a, b) | E::IsNotDistinctFrom(a, b) => {
            push(a);
            push(b);
        }
        E::Between {
            expr, low, high, ..
        } => {
            push(expr);
            push(low);
            push(high);
        }
        E::InList { expr, list, .. } => {
            push(expr);
            list.iter().for_each(&mut push);
        }
        E::Like { expr, pattern, .. } | E::ILike { expr, pattern, .. } => {
            push(expr);
            push(pattern);
        }
        E::Case {
            operand,
            conditions,
            else_result,
            ..
        } => {
            if let Some(o) = operand {
                push(o);
            }
            for c in conditions {
                push(&c.condition);
                push(&c.result);
            }
            if let Some(x) = else_result {
                push(x);
            }
        }
        E::Function(f) => {
            if let ast::FunctionArguments::List(l) = &f.args {
                for a in &l.args {
                    if let ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(x)) = a {
                        push(x);
                    }
                }
            }
        }
        _ => {}
    }
    out
}

impl Binder<'_, '_> {
    /// The error position of a span's start, if the statement's text is known.
    pub(crate) fn position(&self, span: Span) -> Option<u32> {
        self.src.as_ref()?.position(span.start)
    }

    /// Attaches the position of the keywords `words` found back from `to`
    /// (`SourceMap::rfind_before`) to `err`.
    pub(crate) fn at_words_before(&self, err: PgError, to: Span, words: &[&str]) -> PgError {
        match self
            .src
            .as_ref()
            .and_then(|s| s.rfind_before(to.start, words))
        {
            Some(p) if err.position.is_none() => err.with_position(p),
            _ => err,
        }
    }

    /// Attaches `span`'s position to `err` unless it already has one.
    pub(crate) fn at(&self, err: PgError, span: Span) -> PgError {
        if err.position.is_some() {
            return err;
        }
        match self.position(span) {
            Some(p) => err.with_position(p),
            None => err,
        }
    }

    /// Gives an error raised while binding `e` the position PostgreSQL would
    /// report: the failing literal for input errors, the function name for
    /// unknown functions.
    pub(crate) fn locate(&self, err: PgError, e: &ast::Expr) -> PgError {
        if err.position.is_some() || self.src.is_none() {
            return err;
        }
        // A reg* literal naming nothing ('nope'::regclass) points at the literal.
        if let ast::Expr::Cast {
            expr, data_type, ..
        } = e
        {
            let target = data_type.to_string().to_lowercase();
            let reg_target = target.trim_start_matches("pg_catalog.").starts_with("reg");
            let lookup_error = matches!(
                err.code,
                SqlState::UNDEFINED_TABLE
                    | SqlState::UNDEFINED_OBJECT
                    | SqlState::UNDEFINED_FUNCTION
                    | SqlState::INVALID_SCHEMA_NAME
            );
            if let (true, true, Some(span)) = (reg_target, lookup_error, literal_span(expr)) {
                return self.at(err, span);
            }
        }
        if is_input_error(&err) {
            let lits = child_literals(e);
            // Only when the culprit is unambiguous.
            if lits.len() == 1 {
                return self.at(err, lits[0]);
            }
            return err;
        }
        match e {
            ast::Expr::BinaryOp { left, op, right } if err.code == SqlState::UNDEFINED_FUNCTION => {
                let src = self.src.as_ref().expect("checked above");
                let sym = op.to_string();
                match src.find_between(left.span().end, right.span().start, &sym) {
                    Some(p) => err.with_position(p),
                    None => err,
                }
            }
            ast::Expr::Function(f) if err.code == SqlState::UNDEFINED_FUNCTION => {
                self.at(err, f.name.span())
            }
            ast::Expr::Identifier(i)
                if matches!(
                    err.code,
                    SqlState::UNDEFINED_COLUMN
                        | SqlState::UNDEFINED_TABLE
                        | SqlState::AMBIGUOUS_COLUMN
                ) =>
            {
                self.at(err, i.span)
            }
            ast::Expr::CompoundIdentifier(ids)
                if matches!(
                    err.code,
                    SqlState::UNDEFINED_COLUMN
                        | SqlState::UNDEFINED_TABLE
                        | SqlState::AMBIGUOUS_COLUMN
                ) =>
            {
                self.at(err, ids[0].span)
            }
            _ => err,
        }
    }
}

const AGGREGATES: &[&str] = &[
    "count",
    "sum",
    "avg",
    "min",
    "max",
    "bool_and",
    "bool_or",
    "every",
    "string_agg",
];

/// The span of the first reference to column `name` in `e` outside any
/// aggregate call (where a grouping error about it points).
pub(crate) fn ungrouped_column_span(e: &ast::Expr, name: &str) -> Option<Span> {
    use ast::Expr as E;
    let find = |x: &ast::Expr| ungrouped_column_span(x, name);
    match e {
        E::Identifier(i) if super::ident_name(i) == name => Some(i.span),
        E::CompoundIdentifier(ids) if ids.last().is_some_and(|i| super::ident_name(i) == name) => {
            Some(ids[0].span)
        }
        E::BinaryOp { left, right, .. } => find(left).or_else(|| find(right)),
        E::UnaryOp { expr, .. }
        | E::Nested(expr)
        | E::Cast { expr, .. }
        | E::IsNull(expr)
        | E::IsNotNull(expr)
        | E::IsTrue(expr)
        | E::IsFalse(expr)
        | E::IsNotTrue(expr)
        | E::IsNotFalse(expr) => find(expr),
        E::Between {
            expr, low, high, ..
        } => find(expr).or_else(|| find(low)).or_else(|| find(high)),
        E::InList { expr, list, .. } => find(expr).or_else(|| list.iter().find_map(find)),
        E::Case {
            operand,
            conditions,
            else_result,
            ..
        } => operand
            .as_deref()
            .and_then(find)
            .or_else(|| {
                conditions
                    .iter()
                    .find_map(|c| find(&c.condition).or_else(|| find(&c.result)))
            })
            .or_else(|| else_result.as_deref().and_then(find)),
        E::Function(f) => {
            let fname = f
                .name
                .0
                .last()
                .and_then(|p| p.as_ident())
                .map(super::ident_name);
            if fname.is_some_and(|n| AGGREGATES.contains(&n.as_str())) {
                return None;
            }
            match &f.args {
                ast::FunctionArguments::List(l) => l.args.iter().find_map(|a| match a {
                    ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(x)) => find(x),
                    _ => None,
                }),
                _ => None,
            }
        }
        _ => None,
    }
}

/// The column a grouping error ("column \"t.a\" must appear in the GROUP BY
/// clause ...") is about, unqualified.
pub(crate) fn grouping_error_column(err: &PgError) -> Option<String> {
    if err.code != SqlState::GROUPING_ERROR {
        return None;
    }
    let rest = err.message.strip_prefix("column \"")?;
    let quoted = &rest[..rest.find('"')?];
    Some(quoted.rsplit('.').next().unwrap_or(quoted).to_string())
}
