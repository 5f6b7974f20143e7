//! LATERAL joins: the right plan runs again for each left row, with that
//! row pushed as its innermost outer row (`ExecEnv::outer`) while it is
//! built and while it produces rows, and popped before a joined row goes
//! up (the nodes above read their own outer rows).

use common::PgResult;
use sql::expr::Expr;
use sql::plan::needed::Needed;
use sql::plan::{JoinKind, Plan};
use types::Value;

use crate::eval::eval_qual;
use crate::ops::{build, Operator};
use crate::{ExecEnv, Row};

pub(crate) struct LateralJoinOp<'p> {
    left: Box<dyn Operator + 'p>,
    right_plan: &'p Plan,
    right_needed: Needed,
    kind: JoinKind,
    on: Option<&'p Expr>,
    right_width: usize,
    /// The left row and the right side running for it.
    current: Option<(Row, Box<dyn Operator + 'p>)>,
    matched: bool,
}

impl<'p> LateralJoinOp<'p> {
    pub(crate) fn new(
        left: Box<dyn Operator + 'p>,
        (right_plan, right_needed): (&'p Plan, Needed),
        kind: JoinKind,
        on: Option<&'p Expr>,
        right_width: usize,
    ) -> Self {
        debug_assert!(matches!(kind, JoinKind::Inner | JoinKind::Left));
        LateralJoinOp {
            left,
            right_plan,
            right_needed,
            kind,
            on,
            right_width,
            current: None,
            matched: false,
        }
    }
}

/// Runs `f` with `row` as the innermost outer row (moved there and back,
/// not copied).
fn with_outer<T>(
    env: &mut ExecEnv,
    row: &mut Row,
    f: impl FnOnce(&mut ExecEnv) -> PgResult<T>,
) -> PgResult<T> {
    env.outer.push(std::mem::take(row));
    let r = f(env);
    *row = env.outer.pop().expect("the row pushed above");
    r
}

impl Operator for LateralJoinOp<'_> {
    fn next(&mut self, env: &mut ExecEnv) -> PgResult<Option<Row>> {
        loop {
            if let Some((left, right)) = &mut self.current {
                while let Some(r) = with_outer(env, left, |env| right.next(env))? {
                    let mut out = left.clone();
                    out.extend(r);
                    out.resize(left.len() + self.right_width, Value::Null);
                    if let Some(on) = self.on {
                        if !eval_qual(on, &out, env)? {
                            continue;
                        }
                    }
                    self.matched = true;
                    return Ok(Some(out));
                }
                let (left, _) = self.current.take().expect("a current left row");
                if !self.matched && self.kind == JoinKind::Left {
                    let mut out = left;
                    out.resize(out.len() + self.right_width, Value::Null);
                    return Ok(Some(out));
                }
            }
            let Some(mut left) = self.left.next(env)? else {
                return Ok(None);
            };
            let plan = self.right_plan;
            let needed = self.right_needed.clone();
            let right = with_outer(env, &mut left, |env| build(plan, env, needed))?;
            self.current = Some((left, right));
            self.matched = false;
        }
    }
}
