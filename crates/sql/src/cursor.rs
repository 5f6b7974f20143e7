//! SQL cursors' statement forms: DECLARE's options, FETCH and MOVE (whose
//! grammar sqlparser covers only in part: it has no MOVE, and requires FROM),
//! and whether a plan can run backwards without being materialised.

use crate::plan::Plan;

/// DECLARE's options.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CursorOptions {
    /// BINARY: a simple-protocol FETCH sends the rows in binary format.
    pub binary: bool,
    /// Some(true) SCROLL, Some(false) NO SCROLL, None: as the plan allows
    /// (PostgreSQL scrolls a plan that can run backwards cheaply).
    pub scroll: Option<bool>,
    /// WITH HOLD: the cursor outlives the transaction that committed it.
    pub hold: bool,
}

/// FETCH and MOVE directions, as PostgreSQL's FetchStmt has them: every
/// keyword form reduces to one of these with a count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FetchDirection {
    Forward,
    Backward,
    Absolute,
    Relative,
}

/// `count` of FETCH ALL, FORWARD ALL and BACKWARD ALL (PostgreSQL's FETCH_ALL).
pub const FETCH_ALL: i64 = i64::MAX;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FetchStmt {
    pub cursor: String,
    pub direction: FetchDirection,
    pub count: i64,
    /// MOVE: positions the cursor and returns no rows.
    pub is_move: bool,
}

/// Parses FETCH or MOVE from the pre-parser's tokens (words lowercased,
/// quoted names flagged). None for anything PostgreSQL's grammar rejects,
/// which then fails as a syntax error.
pub(crate) fn parse_fetch(toks: &[(String, bool)]) -> Result<FetchStmt, String> {
    fetch_tokens(toks).ok_or_else(|| {
        // The first token PostgreSQL's grammar cannot take, roughly: a count
        // out of int4's range, else what follows the cursor name.
        toks.iter()
            .skip(1)
            .find(|(w, q)| !q && w.bytes().any(|b| b.is_ascii_digit()) && signed_count(w).is_none())
            .or_else(|| toks.last())
            .map(|(w, _)| w.clone())
            .unwrap_or_default()
    })
}

fn fetch_tokens(toks: &[(String, bool)]) -> Option<FetchStmt> {
    let is_move = match toks.first() {
        Some((w, false)) if w == "move" => true,
        Some((w, false)) if w == "fetch" => false,
        _ => return None,
    };
    let word = |i: usize| toks.get(i).filter(|t| !t.1).map(|t| t.0.as_str());
    let mut i = 1;
    let (direction, count) = match word(i) {
        Some("next") => (FetchDirection::Forward, 1),
        Some("prior") => (FetchDirection::Backward, 1),
        Some("first") => (FetchDirection::Absolute, 1),
        Some("last") => (FetchDirection::Absolute, -1),
        Some("all") => (FetchDirection::Forward, FETCH_ALL),
        Some("absolute") => {
            i += 1;
            (FetchDirection::Absolute, signed_count(word(i)?)?)
        }
        Some("relative") => {
            i += 1;
            (FetchDirection::Relative, signed_count(word(i)?)?)
        }
        Some(dir @ ("forward" | "backward")) => {
            let direction = if dir == "forward" {
                FetchDirection::Forward
            } else {
                FetchDirection::Backward
            };
            match word(i + 1) {
                Some("all") => {
                    i += 1;
                    (direction, FETCH_ALL)
                }
                Some(w) if signed_count(w).is_some() => {
                    i += 1;
                    (direction, signed_count(w)?)
                }
                _ => (direction, 1),
            }
        }
        Some(w) if signed_count(w).is_some() => (FetchDirection::Forward, signed_count(w)?),
        // FETCH cursor / FETCH FROM cursor.
        _ => {
            i -= 1;
            (FetchDirection::Forward, 1)
        }
    };
    i += 1;
    if matches!(word(i), Some("from" | "in")) {
        i += 1;
    }
    let (cursor, quoted) = toks.get(i)?;
    if i + 1 != toks.len() || (!quoted && !is_identifier(cursor)) {
        return None;
    }
    Some(FetchStmt {
        cursor: cursor.clone(),
        direction,
        count,
        is_move,
    })
}

/// An integer constant with an optional sign, in int4's range as
/// PostgreSQL's grammar takes it (a larger one is a syntax error there).
fn signed_count(w: &str) -> Option<i64> {
    let digits = w.strip_prefix(['+', '-']).unwrap_or(w);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let n: i64 = w.parse().ok()?;
    i32::try_from(n).ok().map(i64::from)
}

fn is_identifier(w: &str) -> bool {
    let mut chars = w.chars();
    chars.next().is_some_and(|c| c.is_alphabetic() || c == '_')
        && chars.all(|c| c.is_alphanumeric() || c == '_' || c == '$')
}

/// Whether a plan can produce its rows backwards as cheaply as forwards
/// (PostgreSQL's ExecSupportsBackwardScan): a cursor declared without SCROLL
/// or NO SCROLL over such a plan may scroll. Scans, sorts, limits and
/// concatenations can; aggregation, joins, DISTINCT and set-returning
/// projections cannot, nor can a SELECT without FROM (a Result node there).
pub fn supports_backward_scan(plan: &Plan) -> bool {
    match plan {
        Plan::SeqScan { .. } | Plan::FunctionScan { .. } | Plan::SystemView { .. } => true,
        Plan::Sort { .. } => true,
        Plan::Values { rows, width } => !(rows.len() == 1 && *width == 0),
        Plan::Filter { input, .. } | Plan::Project { input, .. } | Plan::Limit { input, .. } => {
            supports_backward_scan(input)
        }
        Plan::SetOp {
            left,
            right,
            op: crate::plan::SetOpKind::Union,
            all: true,
        } => supports_backward_scan(left) && supports_backward_scan(right),
        Plan::ProjectSet { .. }
        | Plan::NestedLoop { .. }
        | Plan::LateralJoin { .. }
        | Plan::HashJoin { .. }
        | Plan::Aggregate { .. }
        | Plan::WindowAgg { .. }
        | Plan::Distinct { .. }
        | Plan::LockRows { .. }
        | Plan::SetOp { .. }
        | Plan::CteScan { .. }
        | Plan::RecursiveUnion { .. }
        | Plan::WorkTableScan { .. }
        | Plan::ModifyingCteRows { .. }
        | Plan::Gather { .. } => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fetch(s: &str) -> Option<FetchStmt> {
        fetch_tokens(&crate::parse::tokens(s)?)
    }

    #[test]
    fn fetch_forms() {
        let f = fetch("FETCH c").unwrap();
        assert_eq!(
            (f.direction, f.count, f.is_move),
            (FetchDirection::Forward, 1, false)
        );
        assert_eq!(fetch("fetch from c").unwrap().cursor, "c");
        let f = fetch("move backward all in c").unwrap();
        assert_eq!(
            (f.direction, f.count, f.is_move),
            (FetchDirection::Backward, FETCH_ALL, true)
        );
        assert_eq!(fetch("fetch -3 from c").unwrap().count, -3);
        assert_eq!(fetch("fetch forward c").unwrap().count, 1);
        assert_eq!(fetch("fetch forward 5 c").unwrap().count, 5);
        assert_eq!(fetch("fetch last in c").unwrap().count, -1);
        assert_eq!(
            fetch("fetch absolute -2 from \"My C\"").unwrap().cursor,
            "My C"
        );
        assert!(fetch("fetch 2147483648 from c").is_none());
        assert!(fetch("fetch absolute from c").is_none());
        assert!(fetch("fetch 1 from c d").is_none());
        assert!(fetch("fetch").is_none());
    }
}
