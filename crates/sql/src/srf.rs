//! Set-returning functions: calls that yield rows rather than one value.
//! They run in FROM (`Plan::FunctionScan`, which also zips `ROWS FROM
//! (f(), g())` and numbers rows `WITH ORDINALITY`) and in select lists
//! (`Plan::ProjectSet`, several calls in lockstep as PostgreSQL 10+ runs
//! them). The binder resolves the call (`bind/srf.rs`); `exec::srf` runs it.

use sqlparser::keywords::Keyword;
use sqlparser::tokenizer::{Token, TokenWithSpan, Word};
use types::json::ops::JsonSrf;
use types::DataType;

use crate::expr::Expr;

/// Which set-returning function a call runs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SetFunction {
    /// generate_series(start, stop[, step]) (also generate_subscripts, bound
    /// as the series of an array's subscripts) over the call's column type.
    Series,
    /// unnest(array): the elements in storage order.
    Unnest,
    /// A json/jsonb function (jsonb_each, jsonb_array_elements, ...).
    Json { func: JsonSrf, json: bool },
    /// regexp_matches(string, pattern[, flags]): each match's groups as text[].
    RegexpMatches,
    /// regexp_split_to_table(string, pattern[, flags]).
    RegexpSplitToTable,
    /// A function with no rows for any argument (pg_partition_ancestors: no
    /// relation is a partition).
    Empty,
}

/// One output column of a call: its default name ("" = named after the
/// function, or the FROM item's alias for a one-column call) and type.
#[derive(Debug, Clone, PartialEq)]
pub struct SrfColumn {
    pub name: String,
    pub ty: DataType,
}

/// A bound call of a set-returning function.
#[derive(Debug, Clone, PartialEq)]
pub struct SrfCall {
    pub func: SetFunction,
    /// As written (EXPLAIN's `Function Scan on name`, default column names).
    pub name: String,
    pub args: Vec<Expr>,
    pub columns: Vec<SrfColumn>,
}

impl SrfCall {
    /// The type of a one-column call's value.
    pub fn value_type(&self) -> DataType {
        self.columns[0].ty
    }

    pub fn map_args(
        self,
        f: &mut dyn FnMut(Expr) -> common::PgResult<Expr>,
    ) -> common::PgResult<Self> {
        Ok(SrfCall {
            args: self
                .args
                .into_iter()
                .map(&mut *f)
                .collect::<common::PgResult<_>>()?,
            ..self
        })
    }
}

/// The names of a Function Scan's columns before an alias list renames
/// them: a call's unnamed column takes the FROM item's alias when the call
/// is the only one, else the function's name; then `ordinality`.
pub fn column_names(calls: &[SrfCall], ordinality: bool, alias: Option<&str>) -> Vec<String> {
    let single = calls.len() == 1;
    calls
        .iter()
        .flat_map(|c| {
            c.columns
                .iter()
                .map(move |col| match (&*col.name, single, alias) {
                    ("", true, Some(a)) => a.to_string(),
                    ("", _, _) => c.name.clone(),
                    (n, _, _) => n.to_string(),
                })
        })
        .chain(ordinality.then(|| "ordinality".to_string()))
        .collect()
}

/// Columns in the rows of `ROWS FROM (calls) [WITH ORDINALITY]`.
pub fn function_scan_width(calls: &[SrfCall], ordinality: bool) -> usize {
    calls.iter().map(|c| c.columns.len()).sum::<usize>() + usize::from(ordinality)
}

/// Rewrites `ROWS FROM (` in a FROM list (after FROM, a comma, JOIN or
/// LATERAL, and followed by a function call, not a subquery) into a call of
/// the quoted name `bind::srf::ROWS_FROM_MARK`, which sqlparser reads as a
/// function in FROM whose arguments are the calls.
pub(crate) fn rewrite_rows_from(tokens: Vec<TokenWithSpan>) -> Vec<TokenWithSpan> {
    let solid = crate::tokens::Solid::new(&tokens);
    let word = |k: usize| solid.word(k);
    let is = |k: usize, t: &Token| solid.is(k, t);
    let mut starts = Vec::new();
    for k in 1..solid.len() {
        if word(k) != "ROWS" || word(k + 1) != "FROM" || !is(k + 2, &Token::LParen) {
            continue;
        }
        let after_from_item =
            matches!(word(k - 1).as_str(), "FROM" | "JOIN" | "LATERAL") || is(k - 1, &Token::Comma);
        // A function call follows, not `(SELECT ...`: `SELECT a, rows FROM
        // (SELECT ...) s` reads a column named rows.
        let call_follows = matches!(solid.token(k + 3), Some(Token::Word(_)))
            && !matches!(word(k + 3).as_str(), "SELECT" | "VALUES" | "WITH" | "TABLE")
            && (is(k + 4, &Token::LParen) || is(k + 4, &Token::Period));
        if after_from_item && call_follows {
            starts.push(k);
        }
    }
    let starts: Vec<(usize, usize)> = starts
        .into_iter()
        .map(|k| (solid.position(k), solid.position(k + 1)))
        .collect();
    if starts.is_empty() {
        return tokens;
    }
    let mut out = Vec::with_capacity(tokens.len());
    let mut skip_to = 0;
    for (i, t) in tokens.into_iter().enumerate() {
        if i < skip_to {
            continue;
        }
        if let Some(&(_, from)) = starts.iter().find(|&&(rows, _)| rows == i) {
            out.push(TokenWithSpan {
                token: Token::Word(Word {
                    value: crate::bind::ROWS_FROM_MARK.to_string(),
                    quote_style: Some('"'),
                    keyword: Keyword::NoKeyword,
                }),
                span: t.span,
            });
            // Drop FROM (and the whitespace between): the name is one token.
            skip_to = from + 1;
            continue;
        }
        out.push(t);
    }
    out
}
