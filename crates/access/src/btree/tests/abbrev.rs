//! Abbreviated keys agree with the full comparison: whenever two keys'
//! abbreviations differ, `compare_prefix` orders them the same way, and an
//! exact abbreviation is equal only for equal keys.

use std::cmp::Ordering;

use types::{DataType, TypeId, Value};

use super::support::Rng;
use crate::btree::{IndexDesc, KeyColumn};

fn column(ty: TypeId, descending: bool, nulls_first: bool) -> IndexDesc {
    IndexDesc {
        columns: vec![KeyColumn {
            ty: DataType::new(ty),
            descending,
            nulls_first,
        }],
    }
}

fn value(ty: TypeId, rng: &mut Rng) -> Value {
    if rng.next().is_multiple_of(10) {
        return Value::Null;
    }
    let n = rng.next();
    match ty {
        TypeId::Int4 => Value::Int4(n as i32 >> (n % 31)),
        TypeId::Int8 => Value::Int8(n as i64 >> (n % 63)),
        TypeId::Text => {
            let len = (n % 12) as usize;
            let s: String = (0..len)
                .map(|i| (b'a' + ((n >> (i * 3)) % 4) as u8) as char)
                .collect();
            Value::Text(s)
        }
        _ => Value::Float8((n % 1000) as f64 / 7.0 - 50.0),
    }
}

#[test]
fn abbreviations_order_as_full_keys() {
    let mut rng = Rng(0x5eed);
    for ty in [TypeId::Int4, TypeId::Int8, TypeId::Text, TypeId::Float8] {
        for descending in [false, true] {
            for nulls_first in [false, true] {
                let desc = column(ty, descending, nulls_first);
                let keys: Vec<Vec<Value>> = (0..300).map(|_| vec![value(ty, &mut rng)]).collect();
                for a in &keys {
                    for b in &keys {
                        let full = desc.compare_prefix(a, b);
                        let abbrev = desc.abbreviate(a).cmp(&desc.abbreviate(b));
                        if abbrev != Ordering::Equal {
                            assert_eq!(abbrev, full, "{ty:?} desc={descending} {a:?} {b:?}");
                        } else if desc.abbreviation_is_exact() {
                            assert_eq!(full, Ordering::Equal, "{ty:?} {a:?} {b:?}");
                        }
                    }
                }
            }
        }
    }
}
