//! Access methods: the heap (tuple format, insert/update/delete, scans).
//! B-tree indexes join here later. See README.md.

pub mod btree;
pub mod heap;
mod pglz;
pub mod relation;
pub mod sequence;
pub mod toast;
pub mod tuple;

pub use heap::{HeapScan, InsertTarget, Tid};
