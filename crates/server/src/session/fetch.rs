//! Where FETCH and MOVE leave a cursor and which rows they return,
//! following PostgreSQL's DoPortalRunFetch and PortalRunSelect: every
//! direction reduces to runs of "forward n" and "backward n" from the
//! cursor's position, with the same edge cases (FETCH 0 re-reads the current
//! row, ABSOLUTE rewinds when that is shorter, MOVE BACKWARD ALL rewinds).
//!
//! Rows are numbered from 1. `cur` is 0 before the first row, k on row k,
//! and N + 1 after the last of N rows (`at_end`).

use common::{PgError, PgResult, SqlState};
use sql::cursor::{FetchDirection, FETCH_ALL};

use exec::Row;

/// Reads rows `from`, `from + 1`, ... (at most `max`), handing each to
/// `emit` when given; returns how many there were (fewer at the end).
pub(super) trait RowReader {
    fn read(
        &mut self,
        from: u64,
        max: u64,
        emit: Option<&mut dyn FnMut(Row) -> PgResult<()>>,
    ) -> PgResult<u64>;
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Position {
    pub cur: u64,
    pub at_end: bool,
}

pub(super) fn forward_only() -> PgError {
    PgError::new(
        SqlState::OBJECT_NOT_IN_PREREQUISITE_STATE,
        "cursor can only scan forward",
    )
    .with_hint("Declare it with SCROLL option to enable backward scan.")
}

const ALL_ROWS: u64 = u64::MAX;

pub(super) struct Fetcher<'r> {
    pub pos: Position,
    pub scrollable: bool,
    pub reader: &'r mut dyn RowReader,
}

type Emit<'e> = Option<&'e mut dyn FnMut(Row) -> PgResult<()>>;

impl Fetcher<'_> {
    /// Runs one FETCH (rows to `emit`) or MOVE (`emit` None); returns the
    /// count for the command tag.
    pub fn run(&mut self, direction: FetchDirection, count: i64, emit: Emit<'_>) -> PgResult<u64> {
        let is_move = emit.is_none();
        let (mut forward, mut count) = match direction {
            FetchDirection::Absolute => return self.absolute(count, emit),
            FetchDirection::Relative if count > 0 => {
                if count > 1 {
                    self.select(true, count as u64 - 1, None)?;
                }
                return self.select(true, 1, emit);
            }
            FetchDirection::Relative if count < 0 => {
                if count < -1 {
                    self.select(false, count.unsigned_abs() - 1, None)?;
                }
                return self.select(false, 1, emit);
            }
            FetchDirection::Relative => (true, 0),
            FetchDirection::Forward | FetchDirection::Backward => {
                let forward = direction == FetchDirection::Forward;
                match count {
                    FETCH_ALL => (forward, ALL_ROWS),
                    c if c < 0 => (!forward, c.unsigned_abs()),
                    c => (forward, c as u64),
                }
            }
        };
        if count == 0 {
            // FETCH 0 returns the current row again, if the cursor is on one.
            let on_row = self.pos.cur > 0 && !self.pos.at_end;
            if is_move {
                return Ok(u64::from(on_row));
            }
            if on_row {
                self.select(false, 1, None)?;
                count = 1;
                forward = true;
            }
        }
        if !forward && count == ALL_ROWS && is_move {
            let moved = self.pos.cur.saturating_sub(1);
            self.rewind()?;
            return Ok(moved);
        }
        self.select(forward, count, emit)
    }

    fn absolute(&mut self, count: i64, emit: Emit<'_>) -> PgResult<u64> {
        if count > 0 {
            let target = count as u64;
            let portal_pos = self.pos.cur - u64::from(self.pos.at_end);
            // Rewinding is shorter when the target is in the first half.
            if target - 1 <= portal_pos / 2 {
                self.rewind()?;
                if target > 1 {
                    self.select(true, target - 1, None)?;
                }
            } else if target <= self.pos.cur {
                self.select(false, self.pos.cur - target + 1, None)?;
            } else if target > self.pos.cur + 1 {
                self.select(true, target - self.pos.cur - 1, None)?;
            }
            self.select(true, 1, emit)
        } else if count < 0 {
            self.select(true, ALL_ROWS, None)?;
            if count < -1 {
                self.select(false, count.unsigned_abs() - 1, None)?;
            }
            self.select(false, 1, emit)
        } else {
            self.rewind()?;
            self.select(true, 0, emit)
        }
    }

    /// Back before the first row; a NO SCROLL cursor only if it never moved.
    fn rewind(&mut self) -> PgResult<()> {
        if !self.scrollable && self.pos != Position::default() {
            return Err(forward_only());
        }
        self.pos = Position::default();
        Ok(())
    }

    /// PortalRunSelect: up to `count` rows in one direction.
    fn select(&mut self, forward: bool, count: u64, emit: Emit<'_>) -> PgResult<u64> {
        if forward {
            if self.pos.at_end || count == 0 {
                return Ok(0);
            }
            let n = self.reader.read(self.pos.cur + 1, count, emit)?;
            self.pos.cur += n;
            if n < count {
                self.pos.at_end = true;
                self.pos.cur += 1;
            }
            return Ok(n);
        }
        if !self.scrollable {
            return Err(forward_only());
        }
        if self.pos.cur == 0 || count == 0 {
            return Ok(0);
        }
        let n = count.min(self.pos.cur - 1);
        if let (Some(emit), true) = (emit, n > 0) {
            let mut rows = Vec::new();
            self.reader.read(
                self.pos.cur - n,
                n,
                Some(&mut |r| {
                    rows.push(r);
                    Ok(())
                }),
            )?;
            for r in rows.into_iter().rev() {
                emit(r)?;
            }
        }
        if n > 0 {
            self.pos.at_end = false;
        }
        if n < count {
            self.pos.cur = 0;
        } else {
            self.pos.cur -= n;
        }
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use types::Value;

    struct Numbers(u64);

    impl RowReader for Numbers {
        fn read(
            &mut self,
            from: u64,
            max: u64,
            mut emit: Option<&mut dyn FnMut(Row) -> PgResult<()>>,
        ) -> PgResult<u64> {
            let mut n = 0;
            let mut k = from;
            while n < max && k >= 1 && k <= self.0 {
                if let Some(e) = emit.as_mut() {
                    e(vec![Value::Int8(k as i64)])?;
                }
                n += 1;
                k += 1;
            }
            Ok(n)
        }
    }

    fn fetch(f: &mut Fetcher<'_>, d: FetchDirection, c: i64) -> Vec<i64> {
        let mut out = Vec::new();
        f.run(
            d,
            c,
            Some(&mut |r: Row| {
                if let Value::Int8(v) = r[0] {
                    out.push(v);
                }
                Ok(())
            }),
        )
        .unwrap();
        out
    }

    use FetchDirection::*;

    /// The sequence PostgreSQL 15 answers over ten rows (tests/sql/cursors.slt).
    #[test]
    fn scroll_cursor_matches_postgres() {
        let mut rows = Numbers(10);
        let mut f = Fetcher {
            pos: Position::default(),
            scrollable: true,
            reader: &mut rows,
        };
        assert_eq!(fetch(&mut f, Absolute, -1), vec![10]);
        assert_eq!(fetch(&mut f, Backward, 1), vec![9]);
        assert_eq!(f.run(Backward, FETCH_ALL, None).unwrap(), 8);
        assert_eq!(fetch(&mut f, Forward, 1), vec![1]);
        assert_eq!(fetch(&mut f, Absolute, -2), vec![9]);
        assert_eq!(fetch(&mut f, Forward, -3), vec![8, 7, 6]);
        assert_eq!(fetch(&mut f, Backward, 2), vec![5, 4]);
        assert_eq!(fetch(&mut f, Forward, 1), vec![5]);
        assert_eq!(fetch(&mut f, Backward, 1), vec![4]);
        assert_eq!(fetch(&mut f, Relative, 0), vec![4]);
        assert_eq!(f.run(Forward, FETCH_ALL, None).unwrap(), 6);
        assert_eq!(f.run(Forward, 0, None).unwrap(), 0);
        assert_eq!(fetch(&mut f, Forward, 0), Vec::<i64>::new());
        assert_eq!(f.run(Backward, FETCH_ALL, None).unwrap(), 10);
        assert_eq!(f.run(Backward, FETCH_ALL, None).unwrap(), 0);
        assert_eq!(fetch(&mut f, Absolute, 20), Vec::<i64>::new());
        assert_eq!(fetch(&mut f, Backward, 1), vec![10]);
        assert_eq!(fetch(&mut f, Absolute, -20), Vec::<i64>::new());
        assert_eq!(fetch(&mut f, Forward, 1), vec![1]);
    }

    #[test]
    fn no_scroll_cursor_moves_forward_only() {
        let mut rows = Numbers(10);
        let mut f = Fetcher {
            pos: Position::default(),
            scrollable: false,
            reader: &mut rows,
        };
        assert_eq!(fetch(&mut f, Absolute, 1), vec![1]);
        assert_eq!(fetch(&mut f, Forward, 2), vec![2, 3]);
        assert_eq!(fetch(&mut f, Absolute, 5), vec![5]);
        assert_eq!(fetch(&mut f, Relative, 2), vec![7]);
        let e = f.run(Backward, 1, None).unwrap_err();
        assert_eq!(e.code, SqlState::OBJECT_NOT_IN_PREREQUISITE_STATE);
        let e = f.run(Absolute, 1, None).unwrap_err();
        assert_eq!(e.message, "cursor can only scan forward");
    }
}
