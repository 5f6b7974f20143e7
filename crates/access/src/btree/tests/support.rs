//! A pool, a log and a transaction manager in a temporary directory, as
//! the heap's tests set them up.

use std::sync::Arc;

use common::RelFileLocator;
use storage::buffer::BufferPool;
use storage::smgr::Smgr;
use txn::TransactionManager;
use types::{DataType, TypeId, Value};

use crate::btree::{IndexDesc, KeyColumn};
use crate::heap::Tid;

pub const REL: RelFileLocator = RelFileLocator {
    spc_oid: common::ids::DEFAULT_TABLESPACE_OID,
    db_oid: 5,
    rel_number: 20000,
};

pub struct Env {
    #[allow(dead_code)]
    pub dir: tempfile::TempDir,
    pub tm: TransactionManager,
    pub pool: &'static BufferPool,
}

pub fn env(buffers: usize) -> Env {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("global")).unwrap();
    let tm = TransactionManager::open(dir.path(), txn::test_wal(dir.path())).unwrap();
    let pool = BufferPool::new(buffers, Arc::new(Smgr::new(dir.path())));
    Env { dir, tm, pool }
}

pub fn col(id: TypeId) -> KeyColumn {
    KeyColumn {
        ty: DataType::new(id),
        descending: false,
        nulls_first: false,
    }
}

pub fn int_desc() -> IndexDesc {
    IndexDesc {
        columns: vec![col(TypeId::Int4)],
    }
}

pub fn tid(n: u64) -> Tid {
    Tid {
        block: (n / 100) as u32,
        offset: (n % 100) as u16 + 1,
    }
}

pub fn int(v: i32) -> Vec<Value> {
    vec![Value::Int4(v)]
}

/// A small deterministic generator (xorshift64*), so failures repeat.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// Every entry a scan returns: tid and key values.
pub fn scan_all(
    pool: &'static BufferPool,
    desc: &IndexDesc,
    range: crate::btree::ScanRange,
) -> Vec<(Tid, Vec<Value>)> {
    let mut scan =
        crate::btree::IndexScan::new(pool, REL, Arc::new(desc.clone()), range, true).unwrap();
    let mut out = Vec::new();
    while let Some((t, keys)) = scan.next().unwrap() {
        out.push((t, keys.unwrap().to_vec()));
    }
    out
}

/// A wide text key that sorts as `n` does: about 30 entries per leaf.
pub fn wide(n: u64) -> Vec<Value> {
    vec![Value::Text(format!("{n:0>240}"))]
}

pub fn text_desc() -> IndexDesc {
    IndexDesc {
        columns: vec![col(TypeId::Text)],
    }
}
