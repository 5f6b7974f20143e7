//! Bound window function calls (`f(args) OVER (...)`), as the binder
//! leaves them in a select list, and the window specifications a
//! `Plan::WindowAgg` evaluates (PostgreSQL's WindowFunc and WindowClause).

use common::PgResult;
use sqlparser::keywords::Keyword;
use sqlparser::tokenizer::{Token, TokenWithSpan, Whitespace, Word};
use types::DataType;

use crate::expr::{AggCall, Expr};

/// What a window call computes.
#[derive(Debug, Clone, PartialEq)]
pub enum WindowFunc {
    RowNumber,
    Rank,
    DenseRank,
    PercentRank,
    CumeDist,
    /// ntile(buckets)
    Ntile,
    /// lag/lead(value [, offset [, default]])
    Lag,
    Lead,
    FirstValue,
    LastValue,
    /// nth_value(value, n)
    NthValue,
    /// An aggregate over the frame; its arguments are the call's.
    Agg(AggCall),
}

impl WindowFunc {
    /// The name EXPLAIN VERBOSE and errors use.
    pub fn name(&self) -> &'static str {
        match self {
            WindowFunc::RowNumber => "row_number",
            WindowFunc::Rank => "rank",
            WindowFunc::DenseRank => "dense_rank",
            WindowFunc::PercentRank => "percent_rank",
            WindowFunc::CumeDist => "cume_dist",
            WindowFunc::Ntile => "ntile",
            WindowFunc::Lag => "lag",
            WindowFunc::Lead => "lead",
            WindowFunc::FirstValue => "first_value",
            WindowFunc::LastValue => "last_value",
            WindowFunc::NthValue => "nth_value",
            WindowFunc::Agg(_) => "aggregate",
        }
    }
}

/// One ORDER BY item of a window.
#[derive(Debug, Clone, PartialEq)]
pub struct WindowOrder {
    pub expr: Expr,
    pub descending: bool,
    pub nulls_first: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameUnits {
    Rows,
    Range,
    Groups,
}

/// A frame bound; offsets are bound expressions (constants or parameters,
/// never columns), evaluated once per partition.
#[derive(Debug, Clone, PartialEq)]
pub enum FrameBound {
    UnboundedPreceding,
    Preceding(Expr),
    CurrentRow,
    Following(Expr),
    UnboundedFollowing,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameExclusion {
    NoOthers,
    CurrentRow,
    Group,
    Ties,
}

#[derive(Debug, Clone, PartialEq)]
pub struct WindowFrame {
    pub units: FrameUnits,
    pub start: FrameBound,
    pub end: FrameBound,
    pub exclusion: FrameExclusion,
}

impl WindowFrame {
    /// RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW: no frame clause.
    pub fn default_frame() -> Self {
        WindowFrame {
            units: FrameUnits::Range,
            start: FrameBound::UnboundedPreceding,
            end: FrameBound::CurrentRow,
            exclusion: FrameExclusion::NoOthers,
        }
    }
}

/// A window: how rows are partitioned and ordered, and each row's frame.
#[derive(Debug, Clone, PartialEq)]
pub struct WindowSpec {
    pub partition: Vec<Expr>,
    pub order: Vec<WindowOrder>,
    pub frame: WindowFrame,
}

impl WindowSpec {
    /// Every expression of the specification.
    pub fn exprs(&self) -> impl Iterator<Item = &Expr> {
        fn bound(b: &FrameBound) -> Option<&Expr> {
            match b {
                FrameBound::Preceding(e) | FrameBound::Following(e) => Some(e),
                _ => None,
            }
        }
        self.partition
            .iter()
            .chain(self.order.iter().map(|o| &o.expr))
            .chain(bound(&self.frame.start))
            .chain(bound(&self.frame.end))
    }

    fn map_exprs(self, f: &mut dyn FnMut(Expr) -> PgResult<Expr>) -> PgResult<Self> {
        let bound = |b: FrameBound, f: &mut dyn FnMut(Expr) -> PgResult<Expr>| {
            Ok::<_, common::PgError>(match b {
                FrameBound::Preceding(e) => FrameBound::Preceding(f(e)?),
                FrameBound::Following(e) => FrameBound::Following(f(e)?),
                other => other,
            })
        };
        Ok(WindowSpec {
            partition: self
                .partition
                .into_iter()
                .map(&mut *f)
                .collect::<PgResult<_>>()?,
            order: self
                .order
                .into_iter()
                .map(|o| {
                    Ok(WindowOrder {
                        expr: f(o.expr)?,
                        ..o
                    })
                })
                .collect::<PgResult<_>>()?,
            frame: WindowFrame {
                start: bound(self.frame.start, f)?,
                end: bound(self.frame.end, f)?,
                ..self.frame
            },
        })
    }
}

impl WindowFrame {
    /// Rebuilds the frame with `f` applied to its offsets.
    pub fn map_offsets(self, f: &mut dyn FnMut(Expr) -> Expr) -> Self {
        let mut bound = |b: FrameBound| match b {
            FrameBound::Preceding(e) => FrameBound::Preceding(f(e)),
            FrameBound::Following(e) => FrameBound::Following(f(e)),
            other => other,
        };
        WindowFrame {
            start: bound(self.start),
            end: bound(self.end),
            ..self
        }
    }
}

/// A window node's frame and calls with `f` applied to every expression
/// (parameter substitution, subquery planning).
pub fn map_window_node(
    frame: WindowFrame,
    funcs: Vec<WindowCall>,
    f: &mut dyn FnMut(Expr) -> Expr,
) -> (WindowFrame, Vec<WindowCall>) {
    let frame = frame.map_offsets(f);
    let funcs = funcs
        .into_iter()
        .map(|c| c.map_exprs(&mut |e| Ok(f(e))).expect("infallible"))
        .collect();
    (frame, funcs)
}

/// A window function call.
#[derive(Debug, Clone, PartialEq)]
pub struct WindowCall {
    pub func: WindowFunc,
    /// The arguments (an aggregate's are in its `AggCall`).
    pub args: Vec<Expr>,
    pub spec: WindowSpec,
    pub result: DataType,
}

impl WindowCall {
    /// What the call evaluates per input row: its arguments (an
    /// aggregate's, with its FILTER, included).
    pub fn arguments(&self) -> Box<dyn Iterator<Item = &Expr> + '_> {
        match &self.func {
            WindowFunc::Agg(a) => Box::new(a.input_exprs()),
            _ => Box::new(self.args.iter()),
        }
    }

    /// Every expression the call holds: arguments, then the window's.
    pub fn children(&self) -> impl Iterator<Item = &Expr> {
        self.arguments().chain(self.spec.exprs())
    }

    /// Rebuilds the call with `f` applied to each expression it holds.
    pub fn map_exprs(self, f: &mut dyn FnMut(Expr) -> PgResult<Expr>) -> PgResult<Self> {
        let func = match self.func {
            WindowFunc::Agg(a) => WindowFunc::Agg(a.map_input_exprs(&mut *f)?),
            other => other,
        };
        Ok(WindowCall {
            func,
            args: self
                .args
                .into_iter()
                .map(&mut *f)
                .collect::<PgResult<_>>()?,
            spec: self.spec.map_exprs(f)?,
            result: self.result,
        })
    }
}

/// The marker `rewrite_exclusions` leaves for a frame's EXCLUDE option: a
/// quoted identifier first in the window's PARTITION BY, starting with
/// U+0001 (no name a client writes does).
pub const EXCLUSION_MARK: &str = "\u{1}EXCLUDE ";

/// The exclusion a PARTITION BY marker names, if it is one.
pub fn exclusion_of_mark(name: &str) -> Option<FrameExclusion> {
    Some(match name.strip_prefix(EXCLUSION_MARK)? {
        "CURRENT ROW" => FrameExclusion::CurrentRow,
        "GROUP" => FrameExclusion::Group,
        "TIES" => FrameExclusion::Ties,
        _ => FrameExclusion::NoOthers,
    })
}

/// sqlparser has no frame EXCLUDE option: `EXCLUDE CURRENT ROW | GROUP |
/// TIES | NO OTHERS` ending a window specification is taken out of the
/// tokens and its meaning put first in the window's PARTITION BY as a
/// marker (`exclusion_of_mark`), where sqlparser reads any expression.
pub(crate) fn rewrite_exclusions(tokens: Vec<TokenWithSpan>) -> Vec<TokenWithSpan> {
    let solid = crate::tokens::Solid::new(&tokens);
    let word = |k: usize| solid.word(k);
    let is = |k: usize, t: &Token| solid.is(k, t);
    // (position of the EXCLUDE token, tokens it spans, insertion point, text to insert)
    let mut edits: Vec<(usize, usize, usize, Vec<Token>)> = Vec::new();
    for k in 0..solid.len() {
        if word(k) != "EXCLUDE" {
            continue;
        }
        let (what, len) = match (word(k + 1).as_str(), word(k + 2).as_str()) {
            ("CURRENT", "ROW") => ("CURRENT ROW", 3),
            ("GROUP", _) => ("GROUP", 2),
            ("TIES", _) => ("TIES", 2),
            ("NO", "OTHERS") => ("NO OTHERS", 3),
            _ => continue,
        };
        if !is(k + len, &Token::RParen) {
            continue;
        }
        // The window specification's opening parenthesis.
        let mut depth = 0;
        let mut open = None;
        for j in (0..k).rev() {
            match solid.token(j).expect("a token before EXCLUDE") {
                Token::RParen => depth += 1,
                Token::LParen if depth == 0 => {
                    open = Some(j);
                    break;
                }
                Token::LParen => depth -= 1,
                _ => {}
            }
        }
        let Some(open) = open else { continue };
        let mark = Token::Word(Word {
            value: format!("{EXCLUSION_MARK}{what}"),
            quote_style: Some('"'),
            keyword: Keyword::NoKeyword,
        });
        let clause_word =
            |w: &str| matches!(w, "PARTITION" | "ORDER" | "ROWS" | "RANGE" | "GROUPS");
        // After an existing window's name, if one is named.
        let mut at = open + 1;
        if !clause_word(&word(at)) && matches!(solid.token(at), Some(Token::Word(_))) {
            at += 1;
        }
        let insert = if word(at) == "PARTITION" && word(at + 1) == "BY" {
            (at + 2, vec![mark, Token::Comma])
        } else {
            (
                at,
                vec![
                    Token::make_keyword("PARTITION"),
                    Token::make_keyword("BY"),
                    mark,
                ],
            )
        };
        edits.push((k, len, insert.0, insert.1));
    }
    if edits.is_empty() {
        return tokens;
    }
    let mut drop = vec![false; tokens.len()];
    let mut inserts: Vec<(usize, TokenWithSpan)> = Vec::new();
    for (k, len, at, new) in edits {
        let span = tokens[solid.position(k)].span;
        for j in k..k + len {
            drop[solid.position(j)] = true;
        }
        for t in new {
            inserts.push((
                solid.position(at),
                TokenWithSpan::new(Token::Whitespace(Whitespace::Space), span),
            ));
            inserts.push((solid.position(at), TokenWithSpan::new(t, span)));
        }
        inserts.push((
            solid.position(at),
            TokenWithSpan::new(Token::Whitespace(Whitespace::Space), span),
        ));
    }
    let mut out = Vec::with_capacity(tokens.len() + inserts.len());
    for (i, t) in tokens.into_iter().enumerate() {
        out.extend(
            inserts
                .iter()
                .filter(|(at, _)| *at == i)
                .map(|(_, t)| t.clone()),
        );
        if !drop[i] {
            out.push(t);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use sqlparser::dialect::PostgreSqlDialect;
    use sqlparser::parser::Parser;
    use sqlparser::tokenizer::Tokenizer;

    /// The PARTITION BY list of the first window in `sql`, as text.
    fn partition_after_rewrite(sql: &str) -> String {
        let dialect = PostgreSqlDialect {};
        let tokens = Tokenizer::new(&dialect, sql)
            .tokenize_with_location()
            .unwrap();
        let stmt = Parser::new(&dialect)
            .with_tokens_with_locations(rewrite_exclusions(tokens))
            .parse_statement()
            .unwrap();
        let text = stmt.to_string();
        let start = text.find("PARTITION BY").map_or(0, |i| i + 13);
        let end = text[start..]
            .find(" ORDER")
            .map_or(text.len(), |e| start + e);
        text[start..end].to_string()
    }

    #[test]
    fn exclusions_become_partition_markers() {
        let p = partition_after_rewrite(
            "select sum(a) over (order by a rows 1 preceding exclude current row) from t",
        );
        assert_eq!(p, "\"\u{1}EXCLUDE CURRENT ROW\"");
        let p = partition_after_rewrite(
            "select sum(a) over (partition by b order by a groups 1 preceding exclude ties) from t",
        );
        assert_eq!(p, "\"\u{1}EXCLUDE TIES\", b");
        let p = partition_after_rewrite(
            "select sum(a) over (w order by a range current row exclude group) from t window w as (partition by b)",
        );
        assert_eq!(p, "\"\u{1}EXCLUDE GROUP\"");
        assert_eq!(
            exclusion_of_mark("\u{1}EXCLUDE NO OTHERS"),
            Some(FrameExclusion::NoOthers)
        );
        assert_eq!(exclusion_of_mark("exclude"), None);
    }
}
