//! Sequence relations: one page holding one item, the sequence's state
//! (last value, values logged ahead, whether the last value was handed out).
//!
//! Rules (PostgreSQL's sequence.c):
//! 1. Changes are not transactional: the state is overwritten in place under
//!    the page's exclusive content lock, and a rolled-back nextval() is not
//!    undone.
//! 2. Every overwrite is logged (rmgr SEQ) with the whole new state; redo
//!    rebuilds the page from the record.
//! 3. nextval() logs ahead: when the values logged ahead are used up it logs
//!    a state `LOG_AHEAD` values further on and returns that record's LSN
//!    with the value; the caller's transaction flushes it when it commits
//!    (unless synchronous_commit is off), as PostgreSQL's nextval assigns an
//!    xid so the commit record's flush covers the sequence's record. So
//!    after a crash no value a committed transaction got is handed out
//!    again (up to `LOG_AHEAD` values are skipped instead). A checkpoint
//!    since the last log record forces a new one, since redo starts after it.

use common::{PgError, PgResult, RelFileLocator, SqlState};
use storage::buffer::{BufferPool, PageWrite, ReadMode};
use storage::page;
use storage::ForkNumber;
use wal::{rmgr, BlockTag, Record, RecordBuilder, RedoError, Wal};

use crate::heap::log::insert_or_panic;

/// How many values one log record covers.
pub const LOG_AHEAD: i64 = 32;
/// The record kind: the page's new state.
pub const SEQ_STATE: u8 = 0x00;

/// A sequence's parameters, as CREATE SEQUENCE fixed them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SeqParams {
    pub increment: i64,
    pub min: i64,
    pub max: i64,
    pub cycle: bool,
}

/// What the page holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SeqState {
    pub last_value: i64,
    /// Values still covered by the last log record.
    pub log_cnt: i64,
    pub is_called: bool,
}

impl SeqState {
    fn encode(&self) -> [u8; 17] {
        let mut b = [0u8; 17];
        b[0..8].copy_from_slice(&self.last_value.to_le_bytes());
        b[8..16].copy_from_slice(&self.log_cnt.to_le_bytes());
        b[16] = self.is_called as u8;
        b
    }
    fn decode(b: &[u8]) -> Option<SeqState> {
        Some(SeqState {
            last_value: i64::from_le_bytes(b.get(0..8)?.try_into().ok()?),
            log_cnt: i64::from_le_bytes(b.get(8..16)?.try_into().ok()?),
            is_called: *b.get(16)? != 0,
        })
    }
}

fn tag(rel: RelFileLocator) -> BlockTag {
    BlockTag {
        rel,
        fork: ForkNumber::Main,
        block: 0,
    }
}

fn corrupt(rel: RelFileLocator) -> PgError {
    PgError::new(
        SqlState::DATA_CORRUPTED,
        format!("sequence page of relation {} is corrupt", rel.rel_number),
    )
}

/// Writes `state` into the page and logs it (rule 2); returns the record's end.
fn write_state(wal: &Wal, rel: RelFileLocator, pg: &mut PageWrite<'_>, state: SeqState) -> u64 {
    page::init(pg, 0);
    page::add_item(pg, &state.encode()).expect("an empty page has room");
    pg.mark_dirty();
    let lsn = {
        let mut rec = RecordBuilder::new(rmgr::SEQ, SEQ_STATE, 0);
        let b = rec.register_block(tag(rel), pg, true);
        rec.block_data(b).extend_from_slice(&state.encode());
        insert_or_panic(wal, &rec)
    };
    page::set_lsn(pg, lsn);
    lsn
}

/// Creates the sequence's file with its first state: `start`, not yet called.
pub fn create(
    pool: &'static BufferPool,
    wal: &Wal,
    rel: RelFileLocator,
    start: i64,
) -> PgResult<()> {
    crate::heap::create_storage(pool, wal, rel)?;
    pool.smgr().extend(rel, ForkNumber::Main, 1)?;
    let buf = pool.read_buffer(rel, ForkNumber::Main, 0, ReadMode::Zero, None)?;
    let mut pg = buf.write();
    let state = SeqState {
        last_value: start,
        log_cnt: 0,
        is_called: false,
    };
    write_state(wal, rel, &mut pg, state);
    Ok(())
}

/// The current state.
pub fn read(pool: &'static BufferPool, rel: RelFileLocator) -> PgResult<SeqState> {
    let buf = pool.read_buffer(rel, ForkNumber::Main, 0, ReadMode::Normal, None)?;
    let pg = buf.read();
    page::item(&pg, 1)
        .and_then(SeqState::decode)
        .ok_or_else(|| corrupt(rel))
}

/// Hands out the next value (rule 3), with the LSN the caller's commit
/// must flush when this call logged ahead. `name` is for the error when the
/// sequence is exhausted (2200H).
pub fn next(
    pool: &'static BufferPool,
    wal: &Wal,
    rel: RelFileLocator,
    params: SeqParams,
    name: &str,
) -> PgResult<(i64, Option<u64>)> {
    let buf = pool.read_buffer(rel, ForkNumber::Main, 0, ReadMode::Normal, None)?;
    let mut pg = buf.write();
    let state = page::item(&pg, 1)
        .and_then(SeqState::decode)
        .ok_or_else(|| corrupt(rel))?;
    let value = if state.is_called {
        step(state.last_value, params, name)?
    } else {
        state.last_value
    };
    let mut flush_to = None;
    // A checkpoint since the page was last logged means a crash would
    // restore the page as the checkpoint wrote it, without the values it
    // covers: log again (PostgreSQL checks the redo pointer the same way).
    let checkpointed = page::lsn(&pg) <= wal.redo_pointer();
    let log_cnt = if state.log_cnt > 0 && state.is_called && !checkpointed {
        state.log_cnt - 1
    } else {
        // Log a state LOG_AHEAD values on, as far as the bounds allow.
        let mut ahead = value;
        let mut n = 0;
        while n < LOG_AHEAD {
            match step(
                ahead,
                SeqParams {
                    cycle: false,
                    ..params
                },
                name,
            ) {
                Ok(v) => ahead = v,
                Err(_) => break,
            }
            n += 1;
        }
        let logged = SeqState {
            last_value: ahead,
            log_cnt: 0,
            is_called: true,
        };
        flush_to = Some(write_state(wal, rel, &mut pg, logged));
        n
    };
    // What the page keeps (and a checkpoint writes) is the real position;
    // the log holds the one ahead of it. The page keeps its LSN: it says
    // whether a checkpoint came since the last record (zeroing it made
    // every call log, and flush, again).
    let lsn = page::lsn(&pg);
    page::init(&mut pg, 0);
    page::set_lsn(&mut pg, lsn);
    let kept = SeqState {
        last_value: value,
        log_cnt,
        is_called: true,
    };
    page::add_item(&mut pg, &kept.encode()).expect("an empty page has room");
    pg.mark_dirty();
    drop(pg);
    Ok((value, flush_to))
}

/// The value after `v`, or 2200H at a bound without CYCLE.
fn step(v: i64, p: SeqParams, name: &str) -> PgResult<i64> {
    let next = v.checked_add(p.increment);
    let within = next.filter(|n| *n >= p.min && *n <= p.max);
    match within {
        Some(n) => Ok(n),
        None if p.cycle => Ok(if p.increment > 0 { p.min } else { p.max }),
        None => {
            let (which, bound) = if p.increment > 0 {
                ("maximum", p.max)
            } else {
                ("minimum", p.min)
            };
            Err(PgError::new(
                SqlState::SEQUENCE_GENERATOR_LIMIT_EXCEEDED,
                format!("nextval: reached {which} value of sequence \"{name}\" ({bound})"),
            ))
        }
    }
}

/// setval(): the next nextval() returns `value` (is_called false) or the
/// value after it (true). Logged and flushed like a log-ahead.
pub fn set(
    pool: &'static BufferPool,
    wal: &Wal,
    rel: RelFileLocator,
    value: i64,
    is_called: bool,
) -> PgResult<()> {
    let buf = pool.read_buffer(rel, ForkNumber::Main, 0, ReadMode::Normal, None)?;
    let mut pg = buf.write();
    let state = SeqState {
        last_value: value,
        log_cnt: 0,
        is_called,
    };
    let lsn = write_state(wal, rel, &mut pg, state);
    drop(pg);
    wal.flush(lsn)?;
    Ok(())
}

/// Redo of a SEQ record: the page is rebuilt from the logged state.
pub(crate) fn redo(pool: &'static BufferPool, rec: &Record<'_>) -> Result<(), RedoError> {
    let b = rec
        .blocks
        .first()
        .ok_or_else(|| RedoError::new(rec, "sequence record without its page"))?;
    crate::heap::log::redo_block(pool, rec, b, |pg| {
        page::add_item(pg, b.data)
            .map(|_| ())
            .ok_or_else(|| "sequence state does not fit".to_string())
    })
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use storage::buffer::BufferPool;
    use storage::smgr::Smgr;
    use txn::TransactionManager;

    use super::*;

    const REL: RelFileLocator = RelFileLocator {
        spc_oid: common::ids::DEFAULT_TABLESPACE_OID,
        db_oid: 5,
        rel_number: 30000,
    };

    /// nextval() logs once per LOG_AHEAD values (the page keeps the LSN of
    /// its last record, by which a checkpoint since is detected).
    #[test]
    fn one_record_per_log_ahead_values() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("global")).unwrap();
        let tm = TransactionManager::open(dir.path(), txn::test_wal(dir.path())).unwrap();
        let pool = BufferPool::new(16, Arc::new(Smgr::new(dir.path())));
        let wal = tm.wal();
        create(pool, wal, REL, 1).unwrap();
        let params = SeqParams {
            increment: 1,
            min: 1,
            max: i64::MAX,
            cycle: false,
        };
        let mut logged = 0;
        for expect in 1..=(2 * LOG_AHEAD) {
            let (v, lsn) = next(pool, wal, REL, params, "s").unwrap();
            assert_eq!(v, expect);
            logged += lsn.is_some() as usize;
        }
        assert_eq!(logged, 2, "a record per {LOG_AHEAD} values");
    }
}
