//! System columns: what a table scan computes from each stored row version
//! besides its columns (`Plan::SeqScan::system`), PostgreSQL's ctid, xmin,
//! cmin, xmax, cmax and tableoid, and the stored form of an attribute that
//! pg_column_size and pg_column_compression report.

use types::{DataType, TypeId};

/// One computed column of a table scan, emitted after the table's columns
/// (and the locking tid, when there is one).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SystemColumn {
    Ctid,
    Xmin,
    Cmin,
    Xmax,
    Cmax,
    TableOid,
    /// pg_column_size of attribute `i` (0-based) as stored: its bytes in
    /// the row, or compressed / out of line when TOASTed.
    StoredSize(usize),
    /// pg_column_compression of attribute `i`: its method when compressed.
    StoredCompression(usize),
}

impl SystemColumn {
    /// The named system columns in PostgreSQL's attnum order (-1 to -6).
    pub const NAMED: [SystemColumn; 6] = [
        SystemColumn::Ctid,
        SystemColumn::Xmin,
        SystemColumn::Cmin,
        SystemColumn::Xmax,
        SystemColumn::Cmax,
        SystemColumn::TableOid,
    ];

    /// The column's name, for the named ones.
    pub fn name(self) -> Option<&'static str> {
        Some(match self {
            SystemColumn::Ctid => "ctid",
            SystemColumn::Xmin => "xmin",
            SystemColumn::Cmin => "cmin",
            SystemColumn::Xmax => "xmax",
            SystemColumn::Cmax => "cmax",
            SystemColumn::TableOid => "tableoid",
            _ => return None,
        })
    }

    /// The named system column `name`, if it is one.
    pub fn by_name(name: &str) -> Option<SystemColumn> {
        Self::NAMED.into_iter().find(|c| c.name() == Some(name))
    }

    pub fn data_type(self) -> DataType {
        DataType::new(match self {
            SystemColumn::Ctid => TypeId::Tid,
            SystemColumn::Xmin | SystemColumn::Xmax => TypeId::Xid,
            SystemColumn::Cmin | SystemColumn::Cmax => TypeId::Cid,
            SystemColumn::TableOid => TypeId::Oid,
            SystemColumn::StoredSize(_) => TypeId::Int4,
            SystemColumn::StoredCompression(_) => TypeId::Text,
        })
    }
}
