//! What a lock is on (PostgreSQL's LOCKTAG): a relation, a transaction id,
//! an advisory key, a tuple, or a catalog object.

use common::{Oid, Xid};

/// The catalog-change lock: taken in AccessExclusive by a transaction's
/// first catalog change and held to its end (`catalog::Catalog::begin`).
/// Class 1259 (pg_class), object 0: no catalog row has oid 0.
pub const CATALOG_CHANGE: LockTag = LockTag::Object {
    db: 0,
    class: 1259,
    objid: 0,
    subid: 0,
};

/// How an advisory lock's key was given (pg_locks.objsubid), as PostgreSQL
/// encodes it: one bigint split into two halves, or two int4 keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AdvisoryKey {
    BigInt(i64),
    IntPair(i32, i32),
}

impl AdvisoryKey {
    /// (classid, objid, objsubid) as pg_locks shows them.
    pub fn fields(self) -> (u32, u32, u16) {
        match self {
            AdvisoryKey::BigInt(k) => ((k as u64 >> 32) as u32, k as u64 as u32, 1),
            AdvisoryKey::IntPair(a, b) => (a as u32, b as u32, 2),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LockTag {
    Relation {
        db: Oid,
        rel: Oid,
    },
    /// A transaction's own lock on its xid: held in Exclusive mode while it
    /// runs; waiters for its row changes take Share.
    Transaction(Xid),
    Tuple {
        db: Oid,
        rel: Oid,
        block: u32,
        offset: u16,
    },
    Advisory {
        db: Oid,
        key: AdvisoryKey,
    },
    Object {
        db: Oid,
        class: Oid,
        objid: Oid,
        subid: u16,
    },
}

impl LockTag {
    /// pg_locks.locktype.
    pub fn kind_name(&self) -> &'static str {
        match self {
            LockTag::Relation { .. } => "relation",
            LockTag::Transaction(_) => "transactionid",
            LockTag::Tuple { .. } => "tuple",
            LockTag::Advisory { .. } => "advisory",
            LockTag::Object { .. } => "object",
        }
    }

    /// The database the lock belongs to (0: shared).
    pub fn database(&self) -> Option<Oid> {
        match *self {
            LockTag::Relation { db, .. }
            | LockTag::Tuple { db, .. }
            | LockTag::Advisory { db, .. }
            | LockTag::Object { db, .. } => Some(db),
            LockTag::Transaction(_) => None,
        }
    }

    /// The lock as PostgreSQL's DescribeLockTag words it (deadlock reports).
    pub fn describe(&self) -> String {
        match *self {
            LockTag::Relation { db, rel } => format!("relation {rel} of database {db}"),
            LockTag::Transaction(x) => format!("transaction {x}"),
            LockTag::Tuple {
                db,
                rel,
                block,
                offset,
            } => format!("tuple ({block},{offset}) of relation {rel} of database {db}"),
            LockTag::Advisory { db, key } => {
                let (a, b, c) = key.fields();
                format!("advisory lock [{db},{a},{b},{c}]")
            }
            LockTag::Object {
                db,
                class,
                objid,
                subid,
            } => {
                if subid == 0 {
                    format!("object {objid} of class {class} of database {db}")
                } else {
                    format!("object {objid}/{subid} of class {class} of database {db}")
                }
            }
        }
    }

    /// A 64-bit hash that spreads tags over partitions and the fast path's
    /// strong-lock buckets (FNV-1a over the fields).
    pub(crate) fn hash(&self) -> u64 {
        let (kind, a, b, c, d): (u64, u64, u64, u64, u64) = match *self {
            LockTag::Relation { db, rel } => (0, db as u64, rel as u64, 0, 0),
            LockTag::Transaction(x) => (1, x, 0, 0, 0),
            LockTag::Tuple {
                db,
                rel,
                block,
                offset,
            } => (2, db as u64, rel as u64, block as u64, offset as u64),
            LockTag::Advisory { db, key } => {
                let (x, y, z) = key.fields();
                (3, db as u64, x as u64, y as u64, z as u64)
            }
            LockTag::Object {
                db,
                class,
                objid,
                subid,
            } => (4, db as u64, class as u64, objid as u64, subid as u64),
        };
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for v in [kind, a, b, c, d] {
            for byte in v.to_le_bytes() {
                h ^= byte as u64;
                h = h.wrapping_mul(0x0100_0000_01b3);
            }
        }
        h
    }
}
