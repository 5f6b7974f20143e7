//! Identifiers shared by all layers.

/// PostgreSQL object identifier.
pub type Oid = u32;
/// Block number within one relation fork.
pub type BlockNumber = u32;
/// 64-bit transaction id: no wraparound (design.md §5).
pub type Xid = u64;

pub const INVALID_OID: Oid = 0;
pub const INVALID_XID: Xid = 0;
/// Xid stamped on tuples written during bootstrap; always committed.
pub const BOOTSTRAP_XID: Xid = 1;
/// First xid handed out to ordinary transactions.
pub const FIRST_NORMAL_XID: Xid = 3;

/// Where a relation's files live: tablespace, database, relfilenode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RelFileLocator {
    pub spc_oid: Oid,
    pub db_oid: Oid,
    pub rel_number: Oid,
}

/// Default tablespace oid, as in PostgreSQL.
pub const DEFAULT_TABLESPACE_OID: Oid = 1663;
/// Global (shared catalogs) tablespace oid, as in PostgreSQL.
pub const GLOBAL_TABLESPACE_OID: Oid = 1664;
