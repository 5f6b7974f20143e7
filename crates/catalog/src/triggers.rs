//! Triggers (CREATE TRIGGER): pg_trigger's rows.
//!
//! One heap relation (relfilenode 2620, pg_trigger's oid) holds every
//! trigger, written under the changing transaction's xid like the other
//! catalog rows, so CREATE/DROP TRIGGER and ALTER TABLE ... ENABLE/DISABLE
//! TRIGGER are transactional and durable. A table's triggers go with it
//! (`drop_table_dependents`). The UPDATE OF columns (attnums), the
//! arguments and the WHEN condition's SQL text are kept as JSON, so a row
//! reads back without the binder.

use std::sync::Arc;

use access::heap::Tid;
use common::{Oid, PgError, PgResult, SqlState};
use serde::{Deserialize, Serialize};
use storage::buffer::BufferPool;
use txn::TransactionManager;
use types::{TypeId, Value};

use crate::ddl::CatalogTxn;
use crate::model::CatalogData;
use crate::relations::{self, RowWriter, SystemRelation};
use crate::Catalog;

/// pg_trigger's oid.
pub const PG_TRIGGER_OID: Oid = 2620;
/// pg_type's oid of the `trigger` pseudo-type (a trigger function's result).
pub const TRIGGER_TYPE_OID: Oid = 2279;

/// tgtype's bits, as PostgreSQL's pg_trigger.h defines them.
pub const TRIGGER_TYPE_ROW: i16 = 1 << 0;
pub const TRIGGER_TYPE_BEFORE: i16 = 1 << 1;
pub const TRIGGER_TYPE_INSERT: i16 = 1 << 2;
pub const TRIGGER_TYPE_DELETE: i16 = 1 << 3;
pub const TRIGGER_TYPE_UPDATE: i16 = 1 << 4;
pub const TRIGGER_TYPE_TRUNCATE: i16 = 1 << 5;

/// oid, tgrelid, tgname, tgfoid, tgtype, tgenabled, the details (JSON:
/// UPDATE OF attnums, arguments, WHEN text).
pub(crate) const PG_TRIGGER: SystemRelation = SystemRelation {
    name: "pg_trigger",
    rel_number: 2620,
    columns: &[
        TypeId::Oid,
        TypeId::Oid,
        TypeId::Name,
        TypeId::Oid,
        TypeId::Int2,
        TypeId::Text,
        TypeId::Text,
    ],
};

/// One trigger on a table.
#[derive(Debug, Clone, PartialEq)]
pub struct Trigger {
    pub oid: Oid,
    /// The table it is on (tgrelid).
    pub table: Oid,
    pub name: String,
    /// The trigger function (tgfoid).
    pub function: Oid,
    /// tgtype: the `TRIGGER_TYPE_*` bits.
    pub tgtype: i16,
    /// tgenabled: `O` enabled, `A` always, `R` replica only, `D` disabled.
    pub enabled: char,
    /// UPDATE OF's columns (attnums); empty: any UPDATE.
    pub columns: Vec<i16>,
    /// The arguments given after the function's name (tgargs).
    pub args: Vec<String>,
    /// WHEN's condition as SQL text, naming OLD and NEW columns.
    pub when: Option<String>,
}

impl Trigger {
    pub fn is_row(&self) -> bool {
        self.tgtype & TRIGGER_TYPE_ROW != 0
    }
    pub fn is_before(&self) -> bool {
        self.tgtype & TRIGGER_TYPE_BEFORE != 0
    }
    /// Whether it fires: session_replication_role is always `origin` here,
    /// so ENABLE REPLICA triggers do not.
    pub fn is_enabled(&self) -> bool {
        matches!(self.enabled, 'O' | 'A')
    }
    /// Whether it fires on the event (`TRIGGER_TYPE_INSERT`, ...).
    pub fn fires_on(&self, event: i16) -> bool {
        self.tgtype & event != 0
    }
}

#[derive(Serialize, Deserialize)]
struct Details {
    columns: Vec<i16>,
    args: Vec<String>,
    when: Option<String>,
}

fn trigger_row(t: &Trigger) -> Vec<Value> {
    let details = Details {
        columns: t.columns.clone(),
        args: t.args.clone(),
        when: t.when.clone(),
    };
    vec![
        Value::Oid(t.oid),
        Value::Oid(t.table),
        Value::Text(t.name.clone()),
        Value::Oid(t.function),
        Value::Int2(t.tgtype),
        Value::Text(t.enabled.to_string()),
        Value::Text(serde_json::to_string(&details).expect("plain data serialises")),
    ]
}

fn read_row(r: &[Value]) -> PgResult<Trigger> {
    let bad = |what: &str| relations::corrupt(&PG_TRIGGER, what);
    let oid = |v: &Value| match v {
        Value::Oid(o) => Ok(*o),
        _ => Err(bad("oid column")),
    };
    let text = |v: &Value| match v {
        Value::Text(s) => Ok(s.clone()),
        _ => Err(bad("text column")),
    };
    let details: Details = serde_json::from_str(&text(&r[6])?).map_err(|_| bad("details"))?;
    let Value::Int2(tgtype) = r[4] else {
        return Err(bad("tgtype"));
    };
    Ok(Trigger {
        oid: oid(&r[0])?,
        table: oid(&r[1])?,
        name: text(&r[2])?,
        function: oid(&r[3])?,
        tgtype,
        enabled: text(&r[5])?.chars().next().unwrap_or('O'),
        columns: details.columns,
        args: details.args,
        when: details.when,
    })
}

/// Adds the triggers a fresh snapshot sees to the relcache being loaded.
pub(crate) fn load(
    pool: &'static BufferPool,
    tm: &TransactionManager,
    d: &mut CatalogData,
) -> PgResult<()> {
    for (tid, r) in relations::scan(pool, tm, &PG_TRIGGER)? {
        let t = read_row(&r)?;
        d.rows.triggers.insert(t.oid, tid);
        d.triggers.insert(t.oid, Arc::new(t));
    }
    Ok(())
}

impl CatalogData {
    /// The triggers of `table`, in name order (the order they fire in).
    pub fn triggers_of(&self, table: Oid) -> Vec<Arc<Trigger>> {
        if self.triggers.is_empty() {
            return Vec::new();
        }
        let mut v: Vec<Arc<Trigger>> = self
            .triggers
            .values()
            .filter(|t| t.table == table)
            .cloned()
            .collect();
        v.sort_by(|a, b| a.name.cmp(&b.name));
        v
    }

    /// Whether any trigger is on `table`.
    pub fn has_triggers(&self, table: Oid) -> bool {
        self.triggers.values().any(|t| t.table == table)
    }

    /// The trigger `name` on `table`.
    pub fn trigger_named(&self, table: Oid, name: &str) -> Option<&Arc<Trigger>> {
        self.triggers
            .values()
            .find(|t| t.table == table && t.name == name)
    }

    /// The triggers that call function `function`.
    pub fn triggers_calling(&self, function: Oid) -> impl Iterator<Item = &Arc<Trigger>> + '_ {
        self.triggers
            .values()
            .filter(move |t| t.function == function)
    }
}

impl Catalog {
    fn trigger_writer(&self, txn: &CatalogTxn, cid: u32) -> RowWriter<'_> {
        RowWriter {
            pool: self.pool,
            tm: self.tm,
            xid: txn.write_xid,
            cid,
        }
    }

    /// CREATE [OR REPLACE] TRIGGER. `t.oid` is ignored: a new trigger gets
    /// a fresh oid, a replaced one keeps its own. Errors: 42710 when the
    /// table has a trigger of that name and `replace` is false.
    pub fn create_trigger(
        &self,
        txn: &mut CatalogTxn,
        cid: u32,
        mut t: Trigger,
        replace: bool,
    ) -> PgResult<Arc<Trigger>> {
        let existing = txn.working.trigger_named(t.table, &t.name).cloned();
        let w = self.trigger_writer(txn, cid);
        let tid = match existing {
            Some(old) => {
                if !replace {
                    let table = txn
                        .working
                        .tables
                        .get(&t.table)
                        .map_or_else(String::new, |r| r.name.clone());
                    return Err(PgError::new(
                        SqlState::DUPLICATE_OBJECT,
                        format!(
                            "trigger \"{}\" for relation \"{table}\" already exists",
                            t.name
                        ),
                    ));
                }
                t.oid = old.oid;
                let row = txn.working.rows.triggers.get(&old.oid).copied();
                let row = row.ok_or_else(|| relations::corrupt(&PG_TRIGGER, "no row"))?;
                w.replace(&PG_TRIGGER, row, &trigger_row(&t))?
            }
            None => {
                t.oid = self.oids.next()?;
                w.insert(&PG_TRIGGER, &trigger_row(&t))?
            }
        };
        let t = Arc::new(t);
        let d = Arc::make_mut(&mut txn.working);
        d.rows.triggers.insert(t.oid, tid);
        d.triggers.insert(t.oid, t.clone());
        Ok(t)
    }

    /// ALTER TABLE ... ENABLE/DISABLE TRIGGER: writes `t` over its row.
    pub fn alter_trigger(&self, txn: &mut CatalogTxn, cid: u32, t: Trigger) -> PgResult<()> {
        let row = txn.working.rows.triggers.get(&t.oid).copied();
        let row = row.ok_or_else(|| relations::corrupt(&PG_TRIGGER, "no row"))?;
        let w = self.trigger_writer(txn, cid);
        let tid = w.replace(&PG_TRIGGER, row, &trigger_row(&t))?;
        let d = Arc::make_mut(&mut txn.working);
        d.rows.triggers.insert(t.oid, tid);
        d.triggers.insert(t.oid, Arc::new(t));
        Ok(())
    }

    /// DROP TRIGGER: deletes its row.
    pub fn drop_trigger(&self, txn: &mut CatalogTxn, cid: u32, oid: Oid) -> PgResult<()> {
        let w = self.trigger_writer(txn, cid);
        let d = Arc::make_mut(&mut txn.working);
        d.triggers.remove(&oid);
        if let Some(tid) = d.rows.triggers.remove(&oid) {
            w.delete(&PG_TRIGGER, tid)?;
        }
        Ok(())
    }

    /// Drops every trigger on `table` (the table is going).
    pub(crate) fn drop_triggers_of(
        &self,
        txn: &mut CatalogTxn,
        cid: u32,
        table: Oid,
    ) -> PgResult<()> {
        let oids: Vec<Oid> = txn
            .working
            .triggers
            .values()
            .filter(|t| t.table == table)
            .map(|t| t.oid)
            .collect();
        for oid in oids {
            self.drop_trigger(txn, cid, oid)?;
        }
        Ok(())
    }
}

/// Where a trigger's row lives (kept beside the other objects' tids).
pub(crate) type TriggerRows = std::collections::HashMap<Oid, Tid>;
