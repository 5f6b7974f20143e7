//! Fuzz target for every type's text and binary input (`parse_text`,
//! `parse_binary`) and the round-trip invariant of `types::io`: a value that
//! parses comes back unchanged through its text form and through its binary
//! form, and bad input fails with a data-exception SQLSTATE (class 22), never a
//! panic or an internal error.

use crate::io::{format_binary, parse_binary, parse_text, to_text};
use crate::numeric::numeric_typmod;
use crate::{DataType, IoSettings, TypeId, Value};
use common::PgError;

use common::fuzz::{Mutator, Rng};

/// Input layout: byte 0 picks the type, byte 1 its typmod, byte 2 whether the
/// payload is text or binary input; the rest is the payload.
pub fn fuzz_one(data: &[u8]) {
    let [ty, typmod, mode, payload @ ..] = data else {
        return;
    };
    let ty = data_type(*ty, *typmod);
    let parsed = if mode & 1 == 0 {
        // Text input is a C string, as PostgreSQL's typinput gets it: the
        // protocol and the SQL lexer refuse NUL and invalid UTF-8 before it.
        match std::str::from_utf8(payload) {
            Ok(text) if !text.contains('\0') => parse_text(ty, text, &IoSettings::UTC),
            _ => return,
        }
    } else {
        parse_binary(ty, payload)
    };
    match parsed {
        Ok(value) => check_round_trips(ty, &value, payload),
        Err(e) => check_input_error(ty, &e, payload),
    }
}

/// The type a fuzz input names: every `TypeId`, with and without typmods.
pub fn data_type(ty: u8, typmod: u8) -> DataType {
    let id = TypeId::ALL[ty as usize % TypeId::ALL.len()];
    if typmod & 0x80 == 0 {
        return DataType::new(id);
    }
    let n = (typmod & 0x7f) as i32;
    match id {
        TypeId::Varchar | TypeId::Bpchar => DataType::with_typmod(id, n % 12 + 1 + 4),
        TypeId::Numeric => {
            let precision = n % 40 + 1;
            DataType::with_typmod(id, numeric_typmod(precision, (n / 7) % (precision + 1)))
        }
        TypeId::Timestamp | TypeId::Timestamptz => DataType::with_typmod(id, n % 7),
        _ => DataType::new(id),
    }
}

fn check_input_error(ty: DataType, e: &PgError, payload: &[u8]) {
    // reg* input looks names up: an unknown object is 42P01/42704/42883, an
    // unknown schema 3F000, as in PostgreSQL.
    let name_lookup = ty.id.is_reg() && (e.code.0.starts_with("42") || e.code.0 == "3F000");
    // Binary array input names its element type: another one is 42804.
    // Arrays past PostgreSQL's dimension and size limits are 54000, as there.
    let element_type = ty.id.is_array() && matches!(e.code.0, "42804" | "54000");
    assert!(
        e.code.0.starts_with("22") || name_lookup || element_type,
        "input of {} gave {} ({}), not a data exception; input b\"{}\"",
        ty.display_name(),
        e.code.0,
        e.message,
        payload.escape_ascii()
    );
}

/// Floats compare by bits (NaN equal to NaN, -0 apart from 0); numerics by
/// value and, through the text form compared too, by scale.
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Float4(x), Value::Float4(y)) => {
            x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan())
        }
        (Value::Float8(x), Value::Float8(y)) => {
            x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan())
        }
        _ => a == b,
    }
}

/// `parse_text(format_text(v)) == v` and `parse_binary(format_binary(v)) == v`.
pub fn check_round_trips(ty: DataType, value: &Value, input: &[u8]) {
    let what = || format!("{} from b\"{}\"", ty.display_name(), input.escape_ascii());
    if matches!(value, Value::Null) {
        return;
    }
    let text = to_text(value, ty.id, &IoSettings::UTC);
    match parse_text(ty, &text, &IoSettings::UTC) {
        Ok(again) => {
            assert!(
                same(value, &again) && to_text(&again, ty.id, &IoSettings::UTC) == text,
                "text round trip of {}: {value:?} printed {text:?}, read back {again:?}",
                what()
            );
        }
        Err(e) => panic!(
            "text round trip of {}: {value:?} printed {text:?}, which fails: {} {}",
            what(),
            e.code.0,
            e.message
        ),
    }
    let mut binary = Vec::new();
    format_binary(value, ty.id, &mut binary);
    match parse_binary(ty, &binary) {
        Ok(again) => assert!(
            same(value, &again) && to_text(&again, ty.id, &IoSettings::UTC) == text,
            "binary round trip of {}: {value:?} sent b\"{}\", read back {again:?}",
            what(),
            binary.escape_ascii()
        ),
        Err(e) => panic!(
            "binary round trip of {}: {value:?} sent b\"{}\", which fails: {} {}",
            what(),
            binary.escape_ascii(),
            e.code.0,
            e.message
        ),
    }
}

/// Text inputs worth starting from, PostgreSQL's regression tests' style.
pub const TEXT_SEEDS: &[&str] = &[
    "t",
    " TRUE ",
    "off",
    "yes",
    "0",
    "1",
    "-1",
    "+42",
    " 12 ",
    "-32768",
    "32767",
    "-2147483648",
    "2147483647",
    "-9223372036854775808",
    "9223372036854775807",
    "1.5",
    "-0",
    "-0.0",
    "0.1",
    "1e10",
    "1E-10",
    "-1.5e+300",
    "1e-320",
    "3.4028235e38",
    "1.17549435e-38",
    "NaN",
    "nan",
    "Infinity",
    "-Infinity",
    "inf",
    "-inf",
    "123456789012345678901234567890.123456789",
    "0.000000000000000000001",
    "-99999.99999",
    "1e1000",
    "1e-1000",
    ".5",
    "5.",
    "  -  1",
    "0x1f",
    "1_000",
    "abc",
    "",
    " a ",
    "ééé",
    "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
    "2024-01-02",
    "2024-02-29",
    "2023-02-29",
    "0001-01-01",
    "0001-01-01 BC",
    "4713-01-01 BC",
    "5874897-12-31",
    "294276-12-31 23:59:59.999999",
    "epoch",
    "infinity",
    "-infinity",
    "today",
    "allballs",
    "2024-01-02 03:04:05",
    "2024-01-02T03:04:05.123456+02",
    "2024-01-02 03:04:05.9999995",
    "2024-01-02 03:04:05-08:30",
    "1999-12-31 24:00:00",
    "2024-01-02 03:04:05 PST",
    "January 8, 1999",
    "1/8/1999",
    "19990108",
    "2024-13-01",
    "2024-01-32",
    "12:34:56",
    "pg_class",
    "16384",
    "4294967295",
];

const DICTIONARY: &[&[u8]] = &[
    b"-",
    b"+",
    b".",
    b"e",
    b"E",
    b"e+",
    b"e-",
    b"0",
    b"9",
    b" ",
    b":",
    b"T",
    b"Z",
    b"BC",
    b"AD",
    b"+02",
    b"-08:30",
    b".999999",
    b"99999999999999999999",
    b"Infinity",
    b"NaN",
    b"epoch",
    b"\0",
    b"\xff",
    b"\xc3\xa9",
    b"\xc3",
];

/// One fuzz input: a type and typmod, then a text seed or random bytes,
/// mutated; binary payloads are often the right width for fixed-size types.
pub fn generate(rng: &mut Rng) -> Vec<u8> {
    let mut data = vec![
        rng.next_u64() as u8,
        rng.next_u64() as u8,
        rng.below(3) as u8,
    ];
    let ty = data_type(data[0], data[1]);
    if data[2] & 1 == 0 {
        data.extend_from_slice(rng.pick(TEXT_SEEDS).as_bytes());
    } else {
        let width = match ty.id.typlen() {
            n @ 1..=8 if !rng.one_in(8) => n as usize,
            _ => rng.small(40),
        };
        data.extend((0..width).map(|_| rng.next_u64() as u8));
        if ty.id == TypeId::Numeric && !rng.one_in(4) {
            // A well-formed header (ndigits, weight, sign, dscale) with
            // random digits reaches the decoder's checks beyond the header.
            data.truncate(3);
            let ndigits = rng.below(6) as u16;
            for word in [
                ndigits,
                rng.below(40) as u16 ^ if rng.one_in(3) { 0xfff0 } else { 0 },
                rng.pick(&[0u16, 0x4000, 0xc000, 0xd000, 0xf000, 0x1234]),
                rng.below(20) as u16,
            ] {
                data.extend_from_slice(&word.to_be_bytes());
            }
            for _ in 0..ndigits {
                let digit = if rng.one_in(10) {
                    rng.next_u64() as u16
                } else {
                    rng.below(10000) as u16
                };
                data.extend_from_slice(&digit.to_be_bytes());
            }
        }
    }
    if !rng.one_in(3) {
        let mut payload = data.split_off(3);
        Mutator {
            dictionary: DICTIONARY,
            max_len: 256,
        }
        .mutate(rng, &mut payload, &[]);
        data.extend(payload);
    }
    data
}

#[cfg(test)]
mod tests {
    use super::*;
    use common::fuzz::{drive, Budget};

    /// The short fixed-seed run of the test command; see the README for a long one.
    #[test]
    fn fuzz_type_input_and_round_trips() {
        drive(
            "types_io",
            Budget::from_env(0x7e57_1001, 300_000),
            generate,
            fuzz_one,
        );
    }
}
