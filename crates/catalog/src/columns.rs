//! ALTER TABLE ... DROP COLUMN and ALTER COLUMN ... TYPE in the catalog.
//!
//! Both rewrite the table (the caller, `exec`, copies its rows into a new
//! file), so the catalog keeps no dropped-column placeholders as
//! PostgreSQL's attisdropped does: a table's columns are always its live
//! columns, attnums 1..n. Dropping a column therefore renumbers the ones
//! after it in every row that names them by attnum: pg_attribute,
//! pg_index.indkey, pg_constraint.conkey (and other tables' confkey),
//! pg_trigger.tgattr, pg_description.objsubid, pg_statistic and the
//! sequences a column owns. The dependents that live on the column itself
//! (its indexes, constraints, triggers, owned sequences, views) are the
//! caller's to drop first.

use std::sync::Arc;

use common::{Oid, PgResult};

use crate::comments::{ObjectAddress, PG_CLASS_OID};
use crate::ddl::{vanished, CatalogTxn};
use crate::indexes::{index_row, ConstraintKind, PG_INDEX};
use crate::model::{Column, Table};
use crate::relations::{self, PG_ATTRIBUTE, PG_STATISTIC};
use crate::Catalog;

/// The attnum a column after the dropped one moves to.
fn shifted(attnum: i16, dropped: i16) -> i16 {
    debug_assert_ne!(attnum, dropped, "dependents on the column go first");
    if attnum > dropped {
        attnum - 1
    } else {
        attnum
    }
}

impl Catalog {
    /// Removes column `index` (0-based) of table `oid`, renumbering the
    /// columns after it wherever an attnum names them. Its statistics and
    /// comment go with it. Returns the table as it is now.
    pub fn drop_column(
        &self,
        txn: &mut CatalogTxn,
        cid: u32,
        oid: Oid,
        index: usize,
    ) -> PgResult<Table> {
        let mut t = txn.working_table(oid)?;
        let dropped = index as i16 + 1;
        let last = t.columns.len() as i16;
        t.columns.remove(index);
        self.renumber_attributes(txn, cid, &t, dropped, last)?;
        self.renumber_statistics(txn, cid, &mut t, dropped)?;
        self.renumber_dependents(txn, cid, oid, dropped)?;
        self.renumber_comments(txn, cid, oid, dropped, last)?;
        Arc::make_mut(&mut txn.working)
            .tables
            .insert(oid, t.clone());
        self.replace_class_row(txn, cid, &t)?;
        Ok(t)
    }

    /// Gives column `index` a new type (ALTER COLUMN TYPE; the rows are
    /// rewritten by the caller). Its statistics no longer describe it and go.
    pub fn retype_column(
        &self,
        txn: &mut CatalogTxn,
        cid: u32,
        oid: Oid,
        index: usize,
        column: Column,
    ) -> PgResult<Table> {
        let mut t = self.replace_column(txn, cid, oid, index, column)?;
        let attnum = index as i16 + 1;
        if t.statistics.iter().any(|s| s.attnum == attnum) {
            let w = self.writer(txn, cid);
            let d = Arc::make_mut(&mut txn.working);
            if let Some(tid) = d.rows.statistics.remove(&(oid, attnum)) {
                w.delete(&PG_STATISTIC, tid)?;
            }
            Arc::make_mut(&mut t.statistics).retain(|s| s.attnum != attnum);
            d.tables.insert(oid, t.clone());
        }
        if t.toast.is_none() && crate::model::needs_toast(&t.columns) {
            self.create_toast_relation(txn, &mut t)?;
            self.replace_class_row(txn, cid, &t)?;
        }
        Ok(t)
    }

    /// pg_attribute: the rows from `dropped` on take the next column's
    /// values; the last row goes.
    fn renumber_attributes(
        &self,
        txn: &mut CatalogTxn,
        cid: u32,
        t: &Table,
        dropped: i16,
        last: i16,
    ) -> PgResult<()> {
        let w = self.writer(txn, cid);
        let d = Arc::make_mut(&mut txn.working);
        for attnum in dropped..last {
            let old = *d
                .rows
                .attributes
                .get(&(t.oid, attnum))
                .ok_or_else(|| vanished(t.oid))?;
            let column = &t.columns[attnum as usize - 1];
            let tid = w.replace(
                &PG_ATTRIBUTE,
                old,
                &relations::attribute_row(t.oid, attnum, column),
            )?;
            d.rows.attributes.insert((t.oid, attnum), tid);
        }
        let gone = d
            .rows
            .attributes
            .remove(&(t.oid, last))
            .ok_or_else(|| vanished(t.oid))?;
        w.delete(&PG_ATTRIBUTE, gone)
    }

    /// pg_statistic: the dropped column's row goes, later ones move down.
    fn renumber_statistics(
        &self,
        txn: &mut CatalogTxn,
        cid: u32,
        t: &mut Table,
        dropped: i16,
    ) -> PgResult<()> {
        let w = self.writer(txn, cid);
        let d = Arc::make_mut(&mut txn.working);
        let stats = Arc::make_mut(&mut t.statistics);
        for s in stats.iter() {
            if s.attnum >= dropped {
                if let Some(tid) = d.rows.statistics.remove(&(t.oid, s.attnum)) {
                    w.delete(&PG_STATISTIC, tid)?;
                }
            }
        }
        stats.retain(|s| s.attnum != dropped);
        for s in stats.iter_mut().filter(|s| s.attnum > dropped) {
            s.attnum -= 1;
            let tid = w.insert(&PG_STATISTIC, &relations::statistic_row(t.oid, s))?;
            d.rows.statistics.insert((t.oid, s.attnum), tid);
        }
        Ok(())
    }

    /// pg_index, pg_constraint (this table's conkey, other tables'
    /// confkey), pg_trigger and owned sequences: attnums after `dropped`
    /// move down.
    fn renumber_dependents(
        &self,
        txn: &mut CatalogTxn,
        cid: u32,
        table: Oid,
        dropped: i16,
    ) -> PgResult<()> {
        let indexes: Vec<_> = txn
            .working
            .indexes_of(table)
            .filter(|i| i.keys.iter().any(|k| k.attnum > dropped))
            .cloned()
            .collect();
        for mut i in indexes {
            for k in &mut i.keys {
                k.attnum = shifted(k.attnum, dropped);
            }
            let w = self.writer(txn, cid);
            let d = Arc::make_mut(&mut txn.working);
            let old = *d.rows.indexes.get(&i.oid).ok_or_else(|| vanished(i.oid))?;
            let tid = w.replace(&PG_INDEX, old, &index_row(&i))?;
            d.rows.indexes.insert(i.oid, tid);
            d.indexes.insert(i.oid, i);
        }
        let constraints: Vec<_> = txn
            .working
            .constraints
            .values()
            .filter(|c| {
                (c.table == table && c.columns.iter().any(|&a| a > dropped))
                    || matches!(&c.kind, ConstraintKind::ForeignKey { ref_table, ref_columns, .. }
                        if *ref_table == table && ref_columns.iter().any(|&a| a > dropped))
            })
            .cloned()
            .collect();
        for mut c in constraints {
            if c.table == table {
                for a in &mut c.columns {
                    *a = shifted(*a, dropped);
                }
            }
            if let ConstraintKind::ForeignKey {
                ref_table,
                ref_columns,
                ..
            } = &mut c.kind
            {
                if *ref_table == table {
                    for a in ref_columns {
                        *a = shifted(*a, dropped);
                    }
                }
            }
            self.replace_constraint(txn, cid, c)?;
        }
        let triggers: Vec<_> = txn
            .working
            .triggers_of(table)
            .into_iter()
            .filter(|t| t.columns.iter().any(|&a| a > dropped))
            .collect();
        for t in triggers {
            let mut t = (*t).clone();
            for a in &mut t.columns {
                *a = shifted(*a, dropped);
            }
            self.alter_trigger(txn, cid, t)?;
        }
        let owned: Vec<(Oid, i16)> = txn
            .working
            .sequences
            .values()
            .filter_map(|q| match q.owned_by {
                Some((rel, a)) if rel == table && a > dropped => Some((q.oid, a)),
                _ => None,
            })
            .collect();
        for (seq, a) in owned {
            self.set_sequence_owned_by(txn, cid, seq, Some((table, a - 1)))?;
        }
        Ok(())
    }

    /// pg_description: the dropped column's comment goes, later ones move.
    fn renumber_comments(
        &self,
        txn: &mut CatalogTxn,
        cid: u32,
        table: Oid,
        dropped: i16,
        last: i16,
    ) -> PgResult<()> {
        for attnum in dropped..=last {
            let at = ObjectAddress::new(PG_CLASS_OID, table, attnum.into());
            let Some(text) = txn.working.comment(at).map(str::to_owned) else {
                continue;
            };
            self.set_comment(txn, cid, at, None)?;
            if attnum > dropped {
                let to = ObjectAddress::new(PG_CLASS_OID, table, (attnum - 1).into());
                self.set_comment(txn, cid, to, Some(&text))?;
            }
        }
        Ok(())
    }
}
