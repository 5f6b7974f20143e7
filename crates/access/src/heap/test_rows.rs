//! Rows the heap's unit tests store: an int8 and a text of `pad` bytes
//! (the padding sizes a tuple to fill pages as a test needs).

use common::Xid;
use types::{DataType, TypeId, Value};

use crate::tuple;

pub(crate) const TYPES: [DataType; 2] = [DataType::new(TypeId::Int8), DataType::new(TypeId::Text)];

/// The tuple (a, 'x' × pad) stamped with `xid` and `cid`.
pub(crate) fn form(a: i64, pad: usize, xid: Xid, cid: u32) -> Vec<u8> {
    let mut out = Vec::new();
    let row = [Value::Int8(a), Value::Text("x".repeat(pad))];
    tuple::form_tuple(&TYPES, &row, xid, cid, &mut out);
    out
}
