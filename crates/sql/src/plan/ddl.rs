//! Bound forms of the index and constraint DDL (CREATE INDEX, table
//! constraints in CREATE TABLE and ALTER TABLE). Columns are 0-based
//! positions in the table's column list; names not given are chosen by
//! the executor, as PostgreSQL chooses them, once the table exists.

use catalog::{IndexKey, ReferentialAction};
use common::Oid;

/// A constraint as written, bound to the table's columns.
#[derive(Debug, Clone, PartialEq)]
pub struct ConstraintSpec {
    pub name: Option<String>,
    pub kind: ConstraintSpecKind,
    pub deferrable: bool,
    pub deferred: bool,
    /// NOT VALID: existing rows are not checked (CHECK and FOREIGN KEY).
    pub not_valid: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub enum ConstraintSpecKind {
    PrimaryKey {
        keys: Vec<IndexKey>,
    },
    Unique {
        keys: Vec<IndexKey>,
    },
    /// CHECK: the expression's SQL text (bound again where rows are
    /// checked) and the columns it reads.
    Check {
        expr: String,
        columns: Vec<usize>,
        no_inherit: bool,
    },
    /// FOREIGN KEY: `ref_table` 0 means the table being created.
    ForeignKey {
        columns: Vec<usize>,
        ref_table: Oid,
        ref_columns: Vec<usize>,
        on_delete: ReferentialAction,
        on_update: ReferentialAction,
        match_full: bool,
    },
}

/// CREATE INDEX.
#[derive(Debug, Clone, PartialEq)]
pub struct IndexSpec {
    /// None: chosen as PostgreSQL does (`t_a_b_idx`).
    pub name: Option<String>,
    pub keys: Vec<IndexKey>,
    pub unique: bool,
    pub if_not_exists: bool,
}
