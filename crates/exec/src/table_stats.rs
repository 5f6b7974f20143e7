//! Per-table cumulative statistics (PostgreSQL's PgStat_StatTabEntry):
//! what pg_stat_all_tables shows and autovacuum decides by.
//!
//! Counters are shared atomics, one `TableCounters` per table, kept by the
//! server in a `TableStatsRegistry`. Statements do not write them row by
//! row: DML adds its counts to the session's `PendingCounts`, applied at
//! transaction end as PostgreSQL does (an aborted insert is a dead tuple);
//! a scan adds its counts once, when it is dropped. Every counter is
//! Relaxed: they are statistics, read without any ordering promise.

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering::Relaxed};
use std::sync::Arc;

use common::Oid;
use parking_lot::RwLock;

/// One table's counters. Timestamps are timestamptz microseconds, 0 for
/// never (NULL).
#[derive(Debug, Default)]
pub struct TableCounters {
    pub seq_scan: AtomicU64,
    pub seq_tup_read: AtomicU64,
    pub idx_scan: AtomicU64,
    pub idx_tup_fetch: AtomicU64,
    pub n_tup_ins: AtomicU64,
    pub n_tup_upd: AtomicU64,
    pub n_tup_del: AtomicU64,
    pub n_tup_hot_upd: AtomicU64,
    pub n_live_tup: AtomicI64,
    pub n_dead_tup: AtomicI64,
    pub n_mod_since_analyze: AtomicI64,
    pub n_ins_since_vacuum: AtomicI64,
    pub last_vacuum: AtomicI64,
    pub last_autovacuum: AtomicI64,
    pub last_analyze: AtomicI64,
    pub last_autoanalyze: AtomicI64,
    pub vacuum_count: AtomicU64,
    pub autovacuum_count: AtomicU64,
    pub analyze_count: AtomicU64,
    pub autoanalyze_count: AtomicU64,
}

/// A transaction's row changes to one table, not yet applied.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct PendingCounts {
    pub inserted: u64,
    /// Updates, the heap-only (HOT) ones among them counted again in
    /// `hot_updated`.
    pub updated: u64,
    pub hot_updated: u64,
    pub deleted: u64,
}

impl TableCounters {
    /// Applies a transaction's changes at its end (pgstat_relation's
    /// AtEOXact: every change counts in n_tup_*; a commit makes inserts
    /// live and deleted or updated versions dead, an abort makes its
    /// inserted and updated versions dead).
    pub fn apply_transaction(&self, c: PendingCounts, committed: bool) {
        let (ins, upd, del) = (c.inserted as i64, c.updated as i64, c.deleted as i64);
        self.n_tup_ins.fetch_add(c.inserted, Relaxed);
        self.n_tup_upd.fetch_add(c.updated, Relaxed);
        self.n_tup_hot_upd.fetch_add(c.hot_updated, Relaxed);
        self.n_tup_del.fetch_add(c.deleted, Relaxed);
        self.n_ins_since_vacuum.fetch_add(ins, Relaxed);
        if committed {
            add_floor0(&self.n_live_tup, ins - del);
            add_floor0(&self.n_dead_tup, upd + del);
            self.n_mod_since_analyze.fetch_add(ins + upd + del, Relaxed);
        } else {
            add_floor0(&self.n_dead_tup, ins + upd);
        }
    }

    /// A sequential scan that returned `tuples` rows.
    pub fn count_seq_scan(&self, tuples: u64) {
        self.seq_scan.fetch_add(1, Relaxed);
        self.seq_tup_read.fetch_add(tuples, Relaxed);
    }

    /// An index scan that fetched `tuples` live rows.
    pub fn count_index_scan(&self, tuples: u64) {
        self.idx_scan.fetch_add(1, Relaxed);
        self.idx_tup_fetch.fetch_add(tuples, Relaxed);
    }

    /// After a VACUUM that found `live` live and `dead` not yet removable
    /// versions (pgstat_report_vacuum).
    pub fn report_vacuum(&self, live: u64, dead: u64, autovacuum: bool, now: i64) {
        self.n_live_tup.store(live as i64, Relaxed);
        self.n_dead_tup.store(dead as i64, Relaxed);
        self.n_ins_since_vacuum.store(0, Relaxed);
        if autovacuum {
            self.last_autovacuum.store(now, Relaxed);
            self.autovacuum_count.fetch_add(1, Relaxed);
        } else {
            self.last_vacuum.store(now, Relaxed);
            self.vacuum_count.fetch_add(1, Relaxed);
        }
    }

    /// After an ANALYZE that estimated `live` rows (pgstat_report_analyze;
    /// our sample does not count dead rows, so n_dead_tup stays).
    pub fn report_analyze(&self, live: f64, autovacuum: bool, now: i64) {
        self.n_live_tup.store(live.round() as i64, Relaxed);
        self.n_mod_since_analyze.store(0, Relaxed);
        if autovacuum {
            self.last_autoanalyze.store(now, Relaxed);
            self.autoanalyze_count.fetch_add(1, Relaxed);
        } else {
            self.last_analyze.store(now, Relaxed);
            self.analyze_count.fetch_add(1, Relaxed);
        }
    }
}

/// Adds `delta`, never going below zero (estimates, as PostgreSQL's).
fn add_floor0(c: &AtomicI64, delta: i64) {
    let _ = c.fetch_update(Relaxed, Relaxed, |v| Some((v + delta).max(0)));
}

/// Every table's counters, by database and table oid.
#[derive(Default)]
pub struct TableStatsRegistry {
    tables: RwLock<HashMap<(Oid, Oid), Arc<TableCounters>>>,
}

impl TableStatsRegistry {
    /// Table `oid` of database `db`'s counters, made on first use.
    pub fn get(&self, db: Oid, oid: Oid) -> Arc<TableCounters> {
        if let Some(c) = self.tables.read().get(&(db, oid)) {
            return c.clone();
        }
        self.tables.write().entry((db, oid)).or_default().clone()
    }

    /// The counters of database `db`'s tables that have any.
    pub fn database(&self, db: Oid) -> Vec<(Oid, Arc<TableCounters>)> {
        self.tables
            .read()
            .iter()
            .filter(|((d, _), _)| *d == db)
            .map(|((_, o), c)| (*o, c.clone()))
            .collect()
    }

    /// Forgets the counters of tables `keep` says are gone (dropped).
    pub fn retain(&self, keep: impl Fn(Oid, Oid) -> bool) {
        self.tables.write().retain(|(d, o), _| keep(*d, *o));
    }
}

/// A session's DML counts for its open transaction, by table.
#[derive(Debug, Default)]
pub struct PendingTableCounts {
    pub tables: HashMap<Oid, PendingCounts>,
}

impl PendingTableCounts {
    pub fn add(&mut self, oid: Oid, c: PendingCounts) {
        let e = self.tables.entry(oid).or_default();
        e.inserted += c.inserted;
        e.updated += c.updated;
        e.hot_updated += c.hot_updated;
        e.deleted += c.deleted;
    }

    /// Applies and forgets the counts at transaction end.
    pub fn apply(&mut self, registry: &TableStatsRegistry, db: Oid, committed: bool) {
        for (oid, c) in self.tables.drain() {
            registry.get(db, oid).apply_transaction(c, committed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transaction_end_counts_as_postgresql() {
        let reg = TableStatsRegistry::default();
        let mut p = PendingTableCounts::default();
        p.add(
            1,
            PendingCounts {
                inserted: 10,
                ..Default::default()
            },
        );
        p.apply(&reg, 5, true);
        p.add(
            1,
            PendingCounts {
                inserted: 3,
                updated: 4,
                hot_updated: 1,
                deleted: 2,
            },
        );
        p.apply(&reg, 5, false);
        p.add(
            1,
            PendingCounts {
                inserted: 0,
                updated: 5,
                hot_updated: 3,
                deleted: 1,
            },
        );
        p.apply(&reg, 5, true);
        let c = reg.get(5, 1);
        assert_eq!(c.n_tup_ins.load(Relaxed), 13);
        assert_eq!(c.n_tup_upd.load(Relaxed), 9);
        // Aborted HOT updates count too, as PostgreSQL's.
        assert_eq!(c.n_tup_hot_upd.load(Relaxed), 4);
        assert_eq!(c.n_tup_del.load(Relaxed), 3);
        assert_eq!(c.n_live_tup.load(Relaxed), 9);
        // aborted: 3 inserted + 4 updated; committed: 5 updated + 1 deleted
        assert_eq!(c.n_dead_tup.load(Relaxed), 13);
        assert_eq!(c.n_mod_since_analyze.load(Relaxed), 16);
        assert_eq!(c.n_ins_since_vacuum.load(Relaxed), 13);
        c.report_vacuum(9, 0, true, 42);
        assert_eq!(c.n_ins_since_vacuum.load(Relaxed), 0);
        assert_eq!(c.autovacuum_count.load(Relaxed), 1);
        assert_eq!(c.last_autovacuum.load(Relaxed), 42);
        assert_eq!(reg.database(5).len(), 1);
        assert!(reg.database(6).is_empty());
    }
}
