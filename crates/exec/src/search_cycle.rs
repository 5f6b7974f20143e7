//! The columns WITH RECURSIVE's SEARCH and CYCLE clauses add (see
//! `sql::bind::cte_search`): records are `ArrayValue`s of their fields
//! whose `elem` is `TypeId::Record`, paths arrays of them.

use std::cmp::Ordering;

use sql::expr::SysFunc;
use types::array::ArrayValue;
use types::{TypeId, Value};

fn record(fields: Vec<Value>) -> Value {
    Value::array(ArrayValue::from_items(TypeId::Record, fields))
}

/// Whether two records hold equal fields; a NULL field never matches, as
/// `ROW(...) = ANY (path)` yields no true then.
fn same_row(a: &Value, fields: &[Value]) -> bool {
    match a {
        Value::Array(r) => {
            r.items.len() == fields.len()
                && r.items.iter().zip(fields).all(|(x, y)| {
                    !x.is_null() && !y.is_null() && types::ops::compare(x, y) == Ordering::Equal
                })
        }
        _ => false,
    }
}

pub(crate) fn eval(func: SysFunc, args: &[Value]) -> Value {
    let previous = match &args[0] {
        Value::Array(a) => Some(a),
        _ => None,
    };
    match func {
        SysFunc::SearchPath => {
            let mut items = previous.map_or_else(Vec::new, |p| p.items.clone());
            items.push(record(args[1..].to_vec()));
            Value::array(ArrayValue::from_items(TypeId::Record, items))
        }
        SysFunc::SearchBreadth => {
            let depth = match previous.and_then(|p| p.items.first()) {
                Some(Value::Int8(d)) => d + 1,
                _ => 0,
            };
            let mut fields = vec![Value::Int8(depth)];
            fields.extend_from_slice(&args[1..]);
            record(fields)
        }
        _ => {
            let fields = &args[3..];
            let on_path = previous.is_some_and(|p| p.items.iter().any(|r| same_row(r, fields)));
            args[if on_path { 1 } else { 2 }].clone()
        }
    }
}
