//! User-defined functions (CREATE FUNCTION): pg_proc's rows.
//!
//! One heap relation (relfilenode 1255, pg_proc's oid) holds every user
//! function, written under the creating transaction's xid like every other
//! catalog row, so CREATE/DROP/ALTER FUNCTION are transactional and durable
//! the way views and sequences are. Built-in functions are not rows here
//! (they live in `types::functions`); the pg_proc view shows both.
//!
//! Argument types are kept as type oids, argument names and default
//! expressions as JSON arrays of strings (the SQL text of each default),
//! so a row reads back without the binder.

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

/// pg_proc's oid: the classoid of function comments.
pub const PG_PROC_OID: Oid = 1255;
/// pg_language oids PostgreSQL 15 gives its languages.
pub const LANGUAGE_INTERNAL_OID: Oid = 12;
pub const LANGUAGE_SQL_OID: Oid = 14;
pub const LANGUAGE_PLPGSQL_OID: Oid = 13_600;

/// oid, proname, pronamespace, prodatabase, prolang, provolatile,
/// proparallel, proisstrict, proretset, prorettype, the details (JSON: argument
/// types, names, defaults), prosrc.
pub(crate) const PG_PROC: SystemRelation = SystemRelation {
    name: "pg_proc",
    rel_number: 1255,
    columns: &[
        TypeId::Oid,
        TypeId::Name,
        TypeId::Oid,
        TypeId::Oid,
        TypeId::Oid,
        TypeId::Text,
        TypeId::Text,
        TypeId::Bool,
        TypeId::Bool,
        TypeId::Oid,
        TypeId::Text,
        TypeId::Text,
    ],
};

/// The language a function body is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FunctionLanguage {
    Sql,
    Plpgsql,
}

impl FunctionLanguage {
    pub fn oid(self) -> Oid {
        match self {
            FunctionLanguage::Sql => LANGUAGE_SQL_OID,
            FunctionLanguage::Plpgsql => LANGUAGE_PLPGSQL_OID,
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            FunctionLanguage::Sql => "sql",
            FunctionLanguage::Plpgsql => "plpgsql",
        }
    }
    fn from_oid(oid: Oid) -> Option<FunctionLanguage> {
        match oid {
            LANGUAGE_SQL_OID => Some(FunctionLanguage::Sql),
            LANGUAGE_PLPGSQL_OID => Some(FunctionLanguage::Plpgsql),
            _ => None,
        }
    }
}

/// pg_proc.provolatile: whether a call's result may change within a scan
/// or a statement.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub enum Volatility {
    Immutable,
    Stable,
    #[default]
    Volatile,
}

impl Volatility {
    /// pg_proc's letter for it.
    pub fn code(self) -> char {
        match self {
            Volatility::Immutable => 'i',
            Volatility::Stable => 's',
            Volatility::Volatile => 'v',
        }
    }
    pub fn from_code(c: &str) -> Volatility {
        match c {
            "i" => Volatility::Immutable,
            "s" => Volatility::Stable,
            _ => Volatility::Volatile,
        }
    }
}

/// pg_proc.proparallel: whether a call may run in a parallel worker
/// (Safe), only in the leader (Restricted), or rules parallel plans out
/// (Unsafe). Ordered from least to most hazardous, so the hazard of an
/// expression is the maximum over its calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub enum ParallelSafety {
    Safe,
    Restricted,
    #[default]
    Unsafe,
}

impl ParallelSafety {
    /// pg_proc's letter for it.
    pub fn code(self) -> char {
        match self {
            ParallelSafety::Safe => 's',
            ParallelSafety::Restricted => 'r',
            ParallelSafety::Unsafe => 'u',
        }
    }
    pub fn from_code(c: &str) -> ParallelSafety {
        match c {
            "s" => ParallelSafety::Safe,
            "r" => ParallelSafety::Restricted,
            _ => ParallelSafety::Unsafe,
        }
    }
}

/// One user-defined function.
#[derive(Debug, Clone, PartialEq)]
pub struct Function {
    pub oid: Oid,
    pub name: String,
    pub namespace: Oid,
    pub db_oid: Oid,
    pub language: FunctionLanguage,
    pub volatility: Volatility,
    pub parallel: ParallelSafety,
    pub strict: bool,
    /// RETURNS SETOF.
    pub returns_set: bool,
    pub return_type: Oid,
    pub arg_types: Vec<Oid>,
    /// One per argument; empty strings for unnamed ones. Empty when none
    /// is named.
    pub arg_names: Vec<String>,
    /// The SQL text of the trailing arguments' defaults.
    pub arg_defaults: Vec<String>,
    /// The last argument is VARIADIC (an array; pg_proc.provariadic is its
    /// element type).
    pub variadic: bool,
    /// The body as written (prosrc).
    pub source: String,
}

#[derive(Serialize, Deserialize)]
struct Details {
    arg_types: Vec<Oid>,
    arg_names: Vec<String>,
    arg_defaults: Vec<String>,
    #[serde(default)]
    variadic: bool,
}

fn proc_row(f: &Function) -> Vec<Value> {
    let details = Details {
        arg_types: f.arg_types.clone(),
        arg_names: f.arg_names.clone(),
        arg_defaults: f.arg_defaults.clone(),
        variadic: f.variadic,
    };
    vec![
        Value::Oid(f.oid),
        Value::Text(f.name.clone()),
        Value::Oid(f.namespace),
        Value::Oid(f.db_oid),
        Value::Oid(f.language.oid()),
        Value::Text(f.volatility.code().to_string()),
        Value::Text(f.parallel.code().to_string()),
        Value::Bool(f.strict),
        Value::Bool(f.returns_set),
        Value::Oid(f.return_type),
        Value::Text(serde_json::to_string(&details).expect("plain data serialises")),
        Value::Text(f.source.clone()),
    ]
}

fn read_row(r: &[Value]) -> PgResult<Function> {
    let bad = |what: &str| relations::corrupt(&PG_PROC, what);
    let oid = |v: &Value| match v {
        Value::Oid(o) => Ok(*o),
        _ => Err(bad("oid column")),
    };
    let text = |v: &Value| match v {
        Value::Text(s) => Ok(s.clone()),
        _ => Err(bad("text column")),
    };
    let details: Details =
        serde_json::from_str(&text(&r[10])?).map_err(|_| bad("argument details"))?;
    Ok(Function {
        oid: oid(&r[0])?,
        name: text(&r[1])?,
        namespace: oid(&r[2])?,
        db_oid: oid(&r[3])?,
        language: FunctionLanguage::from_oid(oid(&r[4])?).ok_or_else(|| bad("prolang"))?,
        volatility: Volatility::from_code(&text(&r[5])?),
        parallel: ParallelSafety::from_code(&text(&r[6])?),
        strict: matches!(r[7], Value::Bool(true)),
        returns_set: matches!(r[8], Value::Bool(true)),
        return_type: oid(&r[9])?,
        arg_types: details.arg_types,
        arg_names: details.arg_names,
        arg_defaults: details.arg_defaults,
        variadic: details.variadic,
        source: text(&r[11])?,
    })
}

/// Adds the functions a fresh snapshot sees to the relcache being loaded.
pub(crate) fn load(
    pool: &'static BufferPool,
    tm: &TransactionManager,
    d: &mut CatalogData,
) -> PgResult<()> {
    for (tid, r) in relations::scan(pool, tm, &PG_PROC)? {
        let f = read_row(&r)?;
        d.rows.functions.insert(f.oid, tid);
        d.functions.insert(f.oid, Arc::new(f));
    }
    Ok(())
}

impl CatalogData {
    /// The functions named `name` in schema `namespace` of database `db`.
    pub fn functions_named<'a>(
        &'a self,
        db: Oid,
        namespace: Oid,
        name: &'a str,
    ) -> impl Iterator<Item = &'a Arc<Function>> + 'a {
        self.functions
            .values()
            .filter(move |f| f.db_oid == db && f.namespace == namespace && f.name == name)
    }

    /// The function `name(arg_types)` in `namespace`, if there is one.
    pub fn function_by_signature(
        &self,
        db: Oid,
        namespace: Oid,
        name: &str,
        arg_types: &[Oid],
    ) -> Option<&Arc<Function>> {
        self.functions.values().find(|f| {
            f.db_oid == db && f.namespace == namespace && f.name == name && f.arg_types == arg_types
        })
    }

    pub fn function_by_oid(&self, oid: Oid) -> Option<&Arc<Function>> {
        self.functions.get(&oid)
    }
}

impl Catalog {
    fn proc_writer(&self, txn: &CatalogTxn, cid: u32) -> RowWriter<'_> {
        RowWriter {
            pool: self.pool,
            tm: self.tm,
            xid: txn.write_xid,
            cid,
        }
    }

    /// CREATE [OR REPLACE] FUNCTION. `f.oid` is ignored: a new function
    /// gets a fresh oid, a replaced one keeps its own (and its comments).
    /// Errors: 42723 when one with the same argument types exists and
    /// `replace` is false; 42P13 when a replacement changes the return type.
    pub fn create_function(
        &self,
        txn: &mut CatalogTxn,
        cid: u32,
        mut f: Function,
        replace: bool,
    ) -> PgResult<Arc<Function>> {
        let existing = txn
            .working
            .function_by_signature(f.db_oid, f.namespace, &f.name, &f.arg_types)
            .cloned();
        let w = self.proc_writer(txn, cid);
        let tid = match existing {
            Some(old) => {
                if !replace {
                    return Err(PgError::new(
                        SqlState::DUPLICATE_FUNCTION,
                        format!(
                            "function \"{}\" already exists with same argument types",
                            f.name
                        ),
                    ));
                }
                if old.return_type != f.return_type || old.returns_set != f.returns_set {
                    return Err(PgError::new(
                        SqlState::INVALID_FUNCTION_DEFINITION,
                        "cannot change return type of existing function",
                    )
                    .with_hint(format!(
                        "Use DROP FUNCTION {}({}) first.",
                        f.name,
                        signature_types(&f.arg_types)
                    )));
                }
                f.oid = old.oid;
                let row = txn.working.rows.functions.get(&old.oid).copied();
                let row = row.ok_or_else(|| relations::corrupt(&PG_PROC, "no row"))?;
                w.replace(&PG_PROC, row, &proc_row(&f))?
            }
            None => {
                f.oid = self.oids.next()?;
                w.insert(&PG_PROC, &proc_row(&f))?
            }
        };
        let f = Arc::new(f);
        let d = Arc::make_mut(&mut txn.working);
        d.rows.functions.insert(f.oid, tid);
        d.functions.insert(f.oid, f.clone());
        Ok(f)
    }

    /// ALTER FUNCTION's attributes: writes `f` over the row of its oid.
    pub fn alter_function(&self, txn: &mut CatalogTxn, cid: u32, f: Function) -> PgResult<()> {
        let row = txn.working.rows.functions.get(&f.oid).copied();
        let row = row.ok_or_else(|| relations::corrupt(&PG_PROC, "no row"))?;
        let w = self.proc_writer(txn, cid);
        let tid = w.replace(&PG_PROC, row, &proc_row(&f))?;
        let d = Arc::make_mut(&mut txn.working);
        d.rows.functions.insert(f.oid, tid);
        d.functions.insert(f.oid, Arc::new(f));
        Ok(())
    }

    /// DROP FUNCTION: deletes its row and its comments.
    pub fn drop_function(&self, txn: &mut CatalogTxn, cid: u32, oid: Oid) -> PgResult<()> {
        let w = self.proc_writer(txn, cid);
        let d = Arc::make_mut(&mut txn.working);
        d.functions.remove(&oid);
        if let Some(tid) = d.rows.functions.remove(&oid) {
            w.delete(&PG_PROC, tid)?;
        }
        self.drop_comments(txn, cid, PG_PROC_OID, oid)
    }
}

/// `integer, text`: argument types as PostgreSQL's messages list them.
pub fn signature_types(arg_types: &[Oid]) -> String {
    arg_types
        .iter()
        .map(|o| TypeId::from_oid(*o).map_or("unknown", TypeId::display_name))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Where a function's row lives (kept beside the other objects' tids).
pub(crate) type FunctionRows = std::collections::HashMap<Oid, Tid>;
