//! Plans: the operator tree for queries, and bound utility/DML statements.

use std::sync::Arc;

use catalog::Table;
use common::{DataType, Value};

use crate::expr::{AggCall, Expr};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SetOpKind {
    Union,
    Intersect,
    Except,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JoinKind {
    Inner,
    Left,
    Right,
    Full,
}

#[derive(Debug, Clone, PartialEq)]
pub struct SortKey {
    pub column: usize,
    pub descending: bool,
    pub nulls_first: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Plan {
    /// Heap scan; `qual` conjuncts are checked page-at-a-time while decoding
    /// only the columns they need.
    SeqScan {
        table: Arc<Table>,
        qual: Vec<Expr>,
    },
    /// Constant rows (VALUES, SELECT without FROM, catalog views).
    Values {
        rows: Vec<Vec<Expr>>,
        width: usize,
    },
    Filter {
        input: Box<Plan>,
        qual: Expr,
    },
    Project {
        input: Box<Plan>,
        exprs: Vec<Expr>,
    },
    /// Like Project, but `srf` (a set-returning generate_series) yields one
    /// output row per element; its value lands at column `srf_index`.
    ProjectSet {
        input: Box<Plan>,
        exprs: Vec<Expr>,
        srf_index: usize,
        srf_args: Vec<Expr>,
    },
    /// generate_series(start, stop[, step]) in FROM.
    SeriesScan {
        args: Vec<Expr>,
        ty: DataType,
    },
    NestedLoop {
        left: Box<Plan>,
        right: Box<Plan>,
        kind: JoinKind,
        on: Option<Expr>,
        right_width: usize,
        left_width: usize,
    },
    /// Output: group keys then aggregate results.
    Aggregate {
        input: Box<Plan>,
        keys: Vec<Expr>,
        aggs: Vec<AggCall>,
    },
    Sort {
        input: Box<Plan>,
        keys: Vec<SortKey>,
    },
    Limit {
        input: Box<Plan>,
        limit: Option<Expr>,
        offset: Option<Expr>,
    },
    Distinct {
        input: Box<Plan>,
    },
    SetOp {
        left: Box<Plan>,
        right: Box<Plan>,
        op: SetOpKind,
        all: bool,
    },
}

/// A result column as the client sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct OutputColumn {
    pub name: String,
    pub ty: DataType,
    pub table_oid: u32,
    pub column_id: i16,
}

#[derive(Debug, Clone)]
pub enum TransactionOp {
    Begin,
    Commit,
    Rollback,
}

#[derive(Debug, Clone)]
pub enum BoundStatement {
    Query {
        plan: Plan,
        columns: Vec<OutputColumn>,
    },
    Insert {
        table: Arc<Table>,
        source: Plan,
        returning: Option<(Vec<Expr>, Vec<OutputColumn>)>,
        bulk: bool,
    },
    Update {
        table: Arc<Table>,
        qual: Vec<Expr>,
        assignments: Vec<(usize, Expr)>,
        returning: Option<(Vec<Expr>, Vec<OutputColumn>)>,
    },
    Delete {
        table: Arc<Table>,
        qual: Vec<Expr>,
        returning: Option<(Vec<Expr>, Vec<OutputColumn>)>,
    },
    CreateTable {
        name: String,
        namespace: u32,
        columns: Vec<catalog::Column>,
        if_not_exists: bool,
        source: Option<(Plan, Vec<OutputColumn>)>,
    },
    DropTable {
        tables: Vec<Arc<Table>>,
        missing: Vec<String>,
    },
    Truncate {
        tables: Vec<Arc<Table>>,
    },
    AddColumn {
        table: Arc<Table>,
        column: catalog::Column,
        if_not_exists: bool,
    },
    Set {
        name: String,
        value: Option<String>,
        local: bool,
    },
    Show {
        name: String,
    },
    ShowAll,
    Transaction(TransactionOp),
    /// Accepted for compatibility, does nothing (e.g. CREATE EXTENSION of a
    /// built-in). The string is the command tag.
    NoOp(String),
    Checkpoint,
    CreateDatabase {
        name: String,
    },
    DropDatabase {
        name: String,
        if_exists: bool,
    },
    CopyFrom(Box<CopyFromTarget>),
    CopyTo(Box<CopyToSource>),
    /// `ALTER ROLE name [WITH] PASSWORD '...' | PASSWORD NULL`; the text is
    /// hashed (or kept, if already a verifier) by the executor.
    AlterRolePassword {
        name: String,
        password: Option<String>,
    },
}

/// COPY ... FROM: where the rows go.
#[derive(Debug, Clone)]
pub struct CopyFromTarget {
    pub table: Arc<Table>,
    /// The table column each input field fills, in input order.
    pub columns: Vec<usize>,
    /// Columns the input leaves out, with their DEFAULT.
    pub defaults: Vec<(usize, Expr)>,
    /// Per input field: FORCE_NOT_NULL / FORCE_NULL (CSV).
    pub force_not_null: Vec<bool>,
    pub force_null: Vec<bool>,
    pub options: crate::copy::CopyOptions,
    pub endpoint: crate::copy::CopyEndpoint,
}

/// COPY ... TO: what is unloaded.
#[derive(Debug, Clone)]
pub struct CopyToSource {
    pub plan: Plan,
    pub columns: Vec<OutputColumn>,
    /// Per column: FORCE_QUOTE (CSV).
    pub force_quote: Vec<bool>,
    pub options: crate::copy::CopyOptions,
    pub endpoint: crate::copy::CopyEndpoint,
    /// The table, for COPY table TO (None for a query).
    pub table_name: Option<String>,
}

impl OutputColumn {
    /// A computed column (no table of origin).
    pub fn new(name: &str, ty: common::TypeId) -> Self {
        OutputColumn {
            name: name.into(),
            ty: DataType::new(ty),
            table_oid: 0,
            column_id: 0,
        }
    }
}

impl BoundStatement {
    pub fn columns(&self) -> Option<&[OutputColumn]> {
        match self {
            BoundStatement::Query { columns, .. } => Some(columns),
            BoundStatement::Insert {
                returning: Some((_, c)),
                ..
            }
            | BoundStatement::Update {
                returning: Some((_, c)),
                ..
            }
            | BoundStatement::Delete {
                returning: Some((_, c)),
                ..
            } => Some(c),
            _ => None,
        }
    }
}

/// Helper for constant rows.
pub fn const_row(values: Vec<(Value, DataType)>) -> Vec<Expr> {
    values.into_iter().map(|(v, t)| Expr::Const(v, t)).collect()
}
