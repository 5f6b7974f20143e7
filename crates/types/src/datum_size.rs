//! pg_column_size of a value that is not a stored column: the size of the
//! datum PostgreSQL would hold for it in memory (a 4-byte varlena header,
//! never compressed), and PostgreSQL's stored size of a numeric.

use crate::numeric::Numeric;
use crate::{TypeId, Value};

/// The varlena header of a value in memory.
const VARHDRSZ: usize = 4;

/// The bytes of PostgreSQL's numeric datum for `n` after its varlena
/// header: the short form (2-byte header) where the weight and display
/// scale fit, else the long one (4), then 2 bytes per base-10000 digit.
fn numeric_body(n: &Numeric) -> usize {
    if !n.is_finite() {
        return 2;
    }
    // The binary send format is PostgreSQL's digits: ndigits, weight,
    // sign, dscale, then the digits.
    let mut wire = Vec::new();
    n.write_binary(&mut wire);
    let ndigits = i16::from_be_bytes([wire[0], wire[1]]) as usize;
    let weight = i16::from_be_bytes([wire[2], wire[3]]);
    let dscale = u16::from_be_bytes([wire[6], wire[7]]);
    let short = dscale <= 63 && (-64..=63).contains(&weight);
    (if short { 2 } else { 4 }) + 2 * ndigits
}

/// pg_column_size of a numeric as a table stores it: with a 1-byte
/// header when it is short enough, as PostgreSQL packs it.
pub fn stored_numeric_size(n: &Numeric) -> usize {
    let body = numeric_body(n);
    if body < 127 {
        1 + body
    } else {
        VARHDRSZ + body
    }
}

/// The size of PostgreSQL's in-memory datum for non-null `v` of type `ty`.
/// jsonb and arrays: our encoding's size, which is not PostgreSQL's.
pub fn datum_size(v: &Value, ty: TypeId) -> usize {
    let typlen = ty.typlen();
    if typlen > 0 {
        return typlen as usize;
    }
    match v {
        // An untyped literal is a C string: its bytes and a terminator.
        Value::Text(s) if ty == TypeId::Unknown => s.len() + 1,
        Value::Text(s) => VARHDRSZ + s.len(),
        Value::Bytea(b) => VARHDRSZ + b.len(),
        Value::Numeric(n) => VARHDRSZ + numeric_body(n),
        Value::Jsonb(j) => {
            let mut doc = Vec::new();
            j.encode(&mut doc);
            VARHDRSZ + doc.len()
        }
        Value::Array(a) => {
            let mut stored = Vec::new();
            crate::array::storage::encode(a, ty.array_element().unwrap_or(a.elem), &mut stored);
            VARHDRSZ + stored.len()
        }
        // inet_struct: family, bits, then the address bytes.
        Value::Inet(n) => VARHDRSZ + 2 + n.len(),
        // A value whose type has no fixed length here but does in
        // PostgreSQL's catalog is covered by typlen above.
        _ => 0,
    }
}
