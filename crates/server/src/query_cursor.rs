//! A query portal suspended at a row limit (Execute with max_rows, as JDBC's
//! fetch size and psycopg's named cursors use): its operator tree stays
//! alive between Execute messages and produces the next rows on demand, so a
//! result is never materialised, however large.
//!
//! The operator tree borrows from the bound plan, so both live in one
//! self-referential cell; everything else an execution needs (catalog
//! version, snapshot, parameters) is owned here and lent to a fresh
//! `ExecEnv` for each batch.

use std::sync::Arc;

use catalog::CatalogData;
use common::Xid;
use sql::plan::BoundStatement;
use txn::Snapshot;
use types::Value;

type OperatorBox<'plan> = Box<dyn exec::Operator + 'plan>;

self_cell::self_cell!(
    /// A bound query and the operator tree built over its plan.
    pub(crate) struct RunningPlan {
        owner: Arc<BoundStatement>,
        #[not_covariant]
        dependent: OperatorBox,
    }
);

/// Everything a suspended query needs to continue.
pub(crate) struct QueryCursor {
    pub(crate) plan: RunningPlan,
    pub(crate) catalog: Arc<CatalogData>,
    pub(crate) snapshot: Snapshot,
    pub(crate) xid: Xid,
    pub(crate) cid: u32,
    pub(crate) params: Vec<Value>,
    /// The statement's text, for pg_stat_activity while a batch runs.
    pub(crate) sql: String,
}
