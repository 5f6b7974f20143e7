//! `uuid`: 16 bytes, `Value::Uuid` (PostgreSQL's uuid.c). They compare as
//! memcmp of the bytes.

use common::{PgError, PgResult, SqlState};

/// uuid_in: 32 hex digits in either case, optionally in braces, with an
/// optional hyphen after any group of four digits; no blanks.
pub fn parse(input: &str) -> PgResult<[u8; 16]> {
    let bad = || {
        PgError::new(
            SqlState::INVALID_TEXT_REPRESENTATION,
            format!("invalid input syntax for type uuid: \"{input}\""),
        )
    };
    let mut s = input.as_bytes();
    let braces = s.first() == Some(&b'{');
    if braces {
        s = &s[1..];
    }
    let mut out = [0u8; 16];
    for (i, byte) in out.iter_mut().enumerate() {
        let digit = |at: usize| s.get(at).and_then(|b| (*b as char).to_digit(16));
        let (Some(high), Some(low)) = (digit(0), digit(1)) else {
            return Err(bad());
        };
        *byte = (high << 4 | low) as u8;
        s = &s[2..];
        if i % 2 == 1 && i < 15 && s.first() == Some(&b'-') {
            s = &s[1..];
        }
    }
    if braces {
        if s.first() != Some(&b'}') {
            return Err(bad());
        }
        s = &s[1..];
    }
    if !s.is_empty() {
        return Err(bad());
    }
    Ok(out)
}

/// uuid_out: lower case, hyphens after the 4th, 6th, 8th and 10th bytes.
pub fn format(u: &[u8; 16], out: &mut String) {
    for (i, b) in u.iter().enumerate() {
        if matches!(i, 4 | 6 | 8 | 10) {
            out.push('-');
        }
        crate::bytea::hex_encode(std::slice::from_ref(b), out);
    }
}

/// A version 4 (random) uuid, as gen_random_uuid().
pub fn random_v4() -> [u8; 16] {
    *::uuid::Uuid::new_v4().as_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn show(s: &str) -> String {
        match parse(s) {
            Ok(u) => {
                let mut o = String::new();
                format(&u, &mut o);
                o
            }
            Err(e) => e.message,
        }
    }

    #[test]
    fn input_forms() {
        let canonical = "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11";
        for s in [
            canonical,
            "A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11",
            "{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11}",
            "a0eebc999c0b4ef8bb6d6bb9bd380a11",
            "a0ee-bc99-9c0b-4ef8-bb6d-6bb9-bd38-0a11",
            "{a0eebc99-9c0b4ef8-bb6d6bb9-bd380a11}",
        ] {
            assert_eq!(show(s), canonical, "{s}");
        }
        for s in [
            "",
            " a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11",
            "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11 ",
            "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a1",
            "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a111",
            "a0eebc999-c0b-4ef8-bb6d-6bb9bd380a11",
            "{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11",
            "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11-",
            "g0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11",
        ] {
            assert_eq!(
                show(s),
                format!("invalid input syntax for type uuid: \"{s}\""),
                "{s}"
            );
        }
        let r = random_v4();
        assert_eq!(r[6] >> 4, 4);
        assert_eq!(r[8] >> 6, 2);
    }
}
