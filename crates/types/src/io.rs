//! Text and binary input/output functions (PostgreSQL's typinput/typoutput,
//! typreceive/typsend).

use std::fmt::Write as _;

use crate::bytea::{self, ByteaOutput};
use crate::datetime;
use crate::float;
use crate::numeric::Numeric;
use crate::timezone::TimeZone;
use crate::Value;
use crate::{DataType, TypeId};
use common::{PgError, PgResult, SqlState};

/// The session's settings that text input and output, casts and some
/// functions depend on (TimeZone, bytea_output, IntervalStyle, DateStyle),
/// each typed once where the session sets it. It travels explicitly from the session to whatever
/// converts values (the binder's constant folding, the executor, the
/// protocol's output), so a thread that is not the session's (a parallel
/// worker) converts values exactly as the session would.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct IoSettings {
    pub timezone: TimeZone,
    pub bytea_output: ByteaOutput,
    pub interval_style: crate::interval::IntervalStyle,
    /// Output format of dates and times, and the field order of date input.
    pub date_style: crate::datestyle::DateStyle,
}

impl IoSettings {
    /// UTC: for conversions that must not depend on any session (stored
    /// statistics, storage formats, tests).
    pub const UTC: IoSettings = IoSettings {
        timezone: TimeZone::Fixed(0),
        bytea_output: ByteaOutput::Hex,
        interval_style: crate::interval::IntervalStyle::Postgres,
        date_style: crate::datestyle::DateStyle::ISO_MDY,
    };
}

/// Longest `name` in bytes (NAMEDATALEN - 1).
pub const NAME_MAX_BYTES: usize = 63;

/// Parses the text form of a value of type `ty`, enforcing its typmod
/// (varchar(n)/char(n): 22001 if too long, char(n) is blank-padded; numeric(p,s) rounds).
/// Bad input: 22P02 (or 22003/22008/22007 as PostgreSQL reports them).
pub fn parse_text(ty: DataType, s: &str, io: &IoSettings) -> PgResult<Value> {
    Ok(match ty.id {
        TypeId::Bool => Value::Bool(parse_bool(s)?),
        TypeId::Int2 => Value::Int2(parse_int2(s)?),
        TypeId::Int4 => Value::Int4(parse_int4(s)?),
        TypeId::Int8 => Value::Int8(parse_int8(s)?),
        TypeId::Float4 => Value::Float4(float::parse_f32(s)?),
        TypeId::Float8 => Value::Float8(float::parse_f64(s)?),
        TypeId::Numeric => Value::Numeric(Box::new(Numeric::parse(s)?.apply_typmod(ty.typmod)?)),
        TypeId::Text | TypeId::Unknown => Value::Text(s.to_string()),
        TypeId::Varchar | TypeId::Bpchar => {
            Value::Text(enforce_string_typmod(s.to_string(), ty, false)?)
        }
        TypeId::Name => Value::Text(truncate_name(s).to_string()),
        TypeId::Char => Value::Text(s.chars().next().map(String::from).unwrap_or_default()),
        TypeId::Oid => Value::Oid(parse_oid(s)?),
        TypeId::Tid => Value::Int8(crate::tid::parse(s)?),
        TypeId::Xid | TypeId::Cid => Value::Oid(crate::tid::parse_xid(s)),
        t if t.is_reg() => Value::Oid(parse_reg_oid(t, s)?),
        t if t.is_array() => Value::array(crate::array::text::parse(
            DataType::with_typmod(t.array_element().unwrap_or(TypeId::Text), ty.typmod),
            s,
            io,
        )?),
        TypeId::Date => Value::Date(datetime::parse_date(s, io.date_style.order)?),
        TypeId::Timestamp => Value::Timestamp(datetime::adjust_timestamp_typmod(
            datetime::parse_timestamp(s, io.date_style.order)?,
            ty.typmod,
        )?),
        TypeId::Timestamptz => Value::Timestamptz(datetime::adjust_timestamp_typmod(
            datetime::parse_timestamptz(s, io.timezone, io.date_style.order)?,
            ty.typmod,
        )?),
        TypeId::Bytea => Value::Bytea(bytea::parse(s)?),
        TypeId::Uuid => Value::Uuid(crate::uuid::parse(s)?),
        TypeId::Inet | TypeId::Cidr => {
            Value::Inet(crate::network::parse(s, ty.id == TypeId::Cidr)?)
        }
        TypeId::MacAddr => Value::MacAddr(crate::network::parse_macaddr(s)?),
        TypeId::MacAddr8 => Value::MacAddr8(crate::network::parse_macaddr8(s)?),
        TypeId::Money => Value::Money(crate::money::parse(s)?),
        TypeId::Interval => Value::Interval(crate::interval::parse_interval(s, io.interval_style)?),
        TypeId::Json => {
            crate::json::parse::validate_json(s)?;
            Value::Text(s.to_string())
        }
        TypeId::Jsonb => crate::json::build::jsonb_value(crate::json::parse::parse_jsonb(s)?),
        TypeId::Enum(t) => crate::enums::parse(t, s)?,
        _ => Value::Null,
    })
}

/// Appends PostgreSQL's text output of `v` (non-null) as type `ty` to `out`.
pub fn format_text(v: &Value, ty: TypeId, io: &IoSettings, out: &mut String) {
    match v {
        Value::Null => {}
        Value::Bool(b) => out.push(if *b { 't' } else { 'f' }),
        Value::Int2(i) => push_int(out, *i as i64),
        Value::Int4(i) => push_int(out, *i as i64),
        Value::Int8(i) if ty == TypeId::Tid => crate::tid::format(*i, out),
        Value::Int8(i) => push_int(out, *i),
        Value::Float4(f) => float::write_f32(*f, out),
        Value::Float8(f) => float::write_f64(*f, out),
        Value::Numeric(n) => n.write_text(out),
        Value::Text(s) => out.push_str(s),
        Value::Oid(o) => {
            let _ = write!(out, "{o}");
        }
        Value::Date(d) => datetime::write_date(*d, io.date_style, out),
        Value::Timestamp(t) | Value::Timestamptz(t) => {
            if ty == TypeId::Timestamptz
                || (ty != TypeId::Timestamp && matches!(v, Value::Timestamptz(_)))
            {
                datetime::write_timestamptz(*t, io.timezone, io.date_style, out)
            } else {
                datetime::write_timestamp(*t, io.date_style, out)
            }
        }
        Value::Bytea(b) => bytea::format(b, io.bytea_output, out),
        Value::Uuid(u) => crate::uuid::format(u, out),
        Value::Inet(n) => crate::network::format(n, ty == TypeId::Cidr, out),
        Value::MacAddr(m) => crate::network::format_mac(m, out),
        Value::MacAddr8(m) => crate::network::format_mac(m, out),
        Value::Money(m) => crate::money::format(*m, out),
        Value::Interval(iv) => crate::interval::write_interval(iv, io.interval_style, out),
        Value::Jsonb(j) => j.write_text(out),
        Value::Array(a) if ty == TypeId::Record => crate::array::text::format_record(a, io, out),
        Value::Array(a) => {
            crate::array::text::format(a, ty.array_element().unwrap_or(a.elem), io, out)
        }
        Value::Enum(d) => out.push_str(&crate::enums::label_of(d.oid)),
    }
}

/// Text output as a new String.
pub fn to_text(v: &Value, ty: TypeId, io: &IoSettings) -> String {
    let mut s = String::new();
    format_text(v, ty, io, &mut s);
    s
}

fn push_int(out: &mut String, v: i64) {
    out.push_str(itoa::Buffer::new().format(v));
}

fn binary_format_error() -> PgError {
    PgError::new(
        SqlState::INVALID_BINARY_REPRESENTATION,
        "incorrect binary data format",
    )
}

fn fixed<const N: usize>(bytes: &[u8]) -> PgResult<[u8; N]> {
    bytes.try_into().map_err(|_| binary_format_error())
}

/// Parses PostgreSQL's binary send format of type `ty` (22P03 on bad input).
pub fn parse_binary(ty: DataType, bytes: &[u8]) -> PgResult<Value> {
    Ok(match ty.id {
        TypeId::Bool => Value::Bool(fixed::<1>(bytes)?[0] != 0),
        TypeId::Int2 => Value::Int2(i16::from_be_bytes(fixed(bytes)?)),
        TypeId::Int4 => Value::Int4(i32::from_be_bytes(fixed(bytes)?)),
        TypeId::Int8 => Value::Int8(i64::from_be_bytes(fixed(bytes)?)),
        TypeId::Float4 => Value::Float4(f32::from_be_bytes(fixed(bytes)?)),
        TypeId::Float8 => Value::Float8(f64::from_be_bytes(fixed(bytes)?)),
        TypeId::Numeric => Value::Numeric(Box::new(
            Numeric::read_binary(bytes)?.apply_typmod(ty.typmod)?,
        )),
        TypeId::Text | TypeId::Unknown | TypeId::Varchar | TypeId::Bpchar | TypeId::Name => {
            let s = utf8_text(bytes)?;
            match ty.id {
                TypeId::Varchar | TypeId::Bpchar => {
                    Value::Text(enforce_string_typmod(s.to_string(), ty, false)?)
                }
                TypeId::Name => Value::Text(truncate_name(s).to_string()),
                _ => Value::Text(s.to_string()),
            }
        }
        TypeId::Json => {
            let s = utf8_text(bytes)?;
            crate::json::parse::validate_json(s)?;
            Value::Text(s.to_string())
        }
        // jsonb_recv: a version byte (1), then the text form.
        TypeId::Jsonb => match bytes.split_first() {
            Some((1, text)) => {
                crate::json::build::jsonb_value(crate::json::parse::parse_jsonb(utf8_text(text)?)?)
            }
            Some((v, _)) => {
                return Err(PgError::new(
                    SqlState::INVALID_BINARY_REPRESENTATION,
                    format!("unsupported jsonb version number {v}"),
                ))
            }
            None => return Err(binary_format_error()),
        },
        t if t == TypeId::Oid || t.is_reg() => Value::Oid(u32::from_be_bytes(fixed(bytes)?)),
        // enum_recv: the label's text.
        TypeId::Enum(t) => crate::enums::parse(t, utf8_text(bytes)?)?,
        TypeId::Xid | TypeId::Cid => Value::Oid(u32::from_be_bytes(fixed(bytes)?)),
        // tidrecv: the block, then the offset, big-endian.
        TypeId::Tid => {
            let b: [u8; 6] = fixed(bytes)?;
            let block = u32::from_be_bytes([b[0], b[1], b[2], b[3]]);
            Value::Int8(crate::tid::pack(block, u16::from_be_bytes([b[4], b[5]])))
        }
        t if t.is_array() => Value::array(crate::array::binary::read(
            DataType::with_typmod(t.array_element().unwrap_or(TypeId::Text), ty.typmod),
            bytes,
        )?),
        TypeId::Date => Value::Date(receive_date(i32::from_be_bytes(fixed(bytes)?))?),
        TypeId::Timestamp => Value::Timestamp(datetime::adjust_timestamp_typmod(
            receive_timestamp(i64::from_be_bytes(fixed(bytes)?))?,
            ty.typmod,
        )?),
        TypeId::Timestamptz => Value::Timestamptz(datetime::adjust_timestamp_typmod(
            receive_timestamp(i64::from_be_bytes(fixed(bytes)?))?,
            ty.typmod,
        )?),
        TypeId::Bytea => Value::Bytea(bytes.to_vec()),
        TypeId::Uuid => Value::Uuid(fixed(bytes)?),
        TypeId::Inet | TypeId::Cidr => {
            Value::Inet(crate::network::read_binary(bytes, ty.id == TypeId::Cidr)?)
        }
        TypeId::MacAddr => Value::MacAddr(fixed(bytes)?),
        // macaddr8_recv takes 6 bytes too (ff:fe goes in the middle).
        TypeId::MacAddr8 => match bytes.len() {
            6 => Value::MacAddr8(crate::network::macaddr_to_macaddr8(&fixed(bytes)?)),
            8 => Value::MacAddr8(fixed(bytes)?),
            _ => {
                return Err(PgError::new(
                    SqlState::INVALID_BINARY_REPRESENTATION,
                    format!(
                        "invalid macaddr8 format, unexpected length {} (expected 6 or 8)",
                        bytes.len()
                    ),
                ))
            }
        },
        TypeId::Money => Value::Money(i64::from_be_bytes(fixed(bytes)?)),
        TypeId::Interval => {
            Value::Interval(crate::interval::read_binary(bytes).ok_or_else(binary_format_error)?)
        }
        _ => Value::Null,
    })
}

/// Binary text input: valid UTF-8 without NULs (22021 otherwise).
pub(crate) fn utf8_text(bytes: &[u8]) -> PgResult<&str> {
    let nul = || {
        PgError::new(
            SqlState("22021"),
            "invalid byte sequence for encoding \"UTF8\": 0x00",
        )
    };
    let s = std::str::from_utf8(bytes).map_err(|e| {
        // The first bad byte wins, as PostgreSQL scans: a NUL before it.
        if bytes[..e.valid_up_to()].contains(&0) {
            return nul();
        }
        let bad = bytes[e.valid_up_to()..]
            .iter()
            .take(e.error_len().unwrap_or(1))
            .map(|b| format!("0x{b:02x}"))
            .collect::<Vec<_>>()
            .join(" ");
        PgError::new(
            SqlState("22021"),
            format!("invalid byte sequence for encoding \"UTF8\": {bad}"),
        )
    })?;
    if s.contains('\0') {
        return Err(nul());
    }
    Ok(s)
}

/// date_recv's range check: the range date_in accepts, or +-infinity.
fn receive_date(days: i32) -> PgResult<i32> {
    let finite = (datetime::MIN_DATE..datetime::END_DATE).contains(&days);
    if finite || days == datetime::DATE_NOBEGIN || days == datetime::DATE_NOEND {
        Ok(days)
    } else {
        Err(PgError::new(
            SqlState::DATETIME_FIELD_OVERFLOW,
            "date out of range",
        ))
    }
}

/// timestamp_recv's range check: values the text output could not print
/// (and text input would refuse) are 22008, as in PostgreSQL.
fn receive_timestamp(us: i64) -> PgResult<i64> {
    let finite = (datetime::MIN_TIMESTAMP..datetime::END_TIMESTAMP).contains(&us);
    if finite || us == datetime::TIMESTAMP_NOBEGIN || us == datetime::TIMESTAMP_NOEND {
        Ok(us)
    } else {
        Err(PgError::new(
            SqlState::DATETIME_FIELD_OVERFLOW,
            "timestamp out of range",
        ))
    }
}

/// Appends PostgreSQL's binary send format of `v` (non-null) as type `ty` to `out`.
pub fn format_binary(v: &Value, ty: TypeId, out: &mut Vec<u8>) {
    let int = |v: &Value| -> Option<i64> {
        match v {
            Value::Int2(i) => Some(*i as i64),
            Value::Int4(i) => Some(*i as i64),
            Value::Int8(i) => Some(*i),
            Value::Oid(o) => Some(*o as i64),
            _ => None,
        }
    };
    match (ty, v) {
        (_, Value::Null) | (TypeId::Void, _) => {}
        (TypeId::Tid, Value::Int8(v)) => {
            let (block, offset) = crate::tid::unpack(*v);
            out.extend_from_slice(&block.to_be_bytes());
            out.extend_from_slice(&offset.to_be_bytes());
        }
        (TypeId::Int2, _) if int(v).is_some() => {
            out.extend_from_slice(&(int(v).unwrap_or(0) as i16).to_be_bytes())
        }
        (TypeId::Int4, _) if int(v).is_some() => {
            out.extend_from_slice(&(int(v).unwrap_or(0) as i32).to_be_bytes())
        }
        (TypeId::Int8, _) if int(v).is_some() => {
            out.extend_from_slice(&int(v).unwrap_or(0).to_be_bytes())
        }
        (TypeId::Float4, Value::Float8(f)) => out.extend_from_slice(&(*f as f32).to_be_bytes()),
        (TypeId::Float8, Value::Float4(f)) => out.extend_from_slice(&(*f as f64).to_be_bytes()),
        (_, Value::Bool(b)) => out.push(*b as u8),
        (_, Value::Int2(i)) => out.extend_from_slice(&i.to_be_bytes()),
        (_, Value::Int4(i)) => out.extend_from_slice(&i.to_be_bytes()),
        (_, Value::Int8(i)) => out.extend_from_slice(&i.to_be_bytes()),
        (_, Value::Float4(f)) => out.extend_from_slice(&f.to_be_bytes()),
        (_, Value::Float8(f)) => out.extend_from_slice(&f.to_be_bytes()),
        (_, Value::Numeric(n)) => n.write_binary(out),
        (t, Value::Array(a)) => {
            crate::array::binary::write(a, t.array_element().unwrap_or(a.elem), out)
        }
        (_, Value::Text(s)) => out.extend_from_slice(s.as_bytes()),
        (_, Value::Oid(o)) => out.extend_from_slice(&o.to_be_bytes()),
        (_, Value::Date(d)) => out.extend_from_slice(&d.to_be_bytes()),
        (_, Value::Timestamp(t) | Value::Timestamptz(t)) => out.extend_from_slice(&t.to_be_bytes()),
        (_, Value::Bytea(b)) => out.extend_from_slice(b),
        (_, Value::Uuid(u)) => out.extend_from_slice(u),
        (t, Value::Inet(n)) => crate::network::write_binary(n, t == TypeId::Cidr, out),
        (_, Value::MacAddr(m)) => out.extend_from_slice(m),
        (_, Value::MacAddr8(m)) => out.extend_from_slice(m),
        (_, Value::Money(m)) => out.extend_from_slice(&m.to_be_bytes()),
        (_, Value::Interval(iv)) => crate::interval::write_binary(iv, out),
        // jsonb_send: version 1, then the text form.
        (_, Value::Jsonb(j)) => {
            out.push(1);
            out.extend_from_slice(j.to_text().as_bytes());
        }
        // enum_send: the label's text.
        (_, Value::Enum(d)) => out.extend_from_slice(crate::enums::label_of(d.oid).as_bytes()),
    }
}

// ----- scalar parsers -----

/// PostgreSQL's boolin: t/true/yes/on/1 and f/false/no/off/0, any unique
/// prefix, case-insensitive, surrounding whitespace ignored.
pub fn parse_bool(input: &str) -> PgResult<bool> {
    let s = float::trim_pg(input);
    let l = s.len();
    let prefix_of = |word: &str| l >= 1 && l <= word.len() && word[..l].eq_ignore_ascii_case(s);
    let v = match s.as_bytes().first().map(|b| b.to_ascii_lowercase()) {
        Some(b't') if prefix_of("true") => Some(true),
        Some(b'f') if prefix_of("false") => Some(false),
        Some(b'y') if prefix_of("yes") => Some(true),
        Some(b'n') if prefix_of("no") => Some(false),
        Some(b'o') if l >= 2 && prefix_of("on") => Some(true),
        Some(b'o') if l >= 2 && prefix_of("off") => Some(false),
        Some(b'1') if l == 1 => Some(true),
        Some(b'0') if l == 1 => Some(false),
        _ => None,
    };
    v.ok_or_else(|| {
        PgError::new(
            SqlState::INVALID_TEXT_REPRESENTATION,
            format!("invalid input syntax for type boolean: \"{input}\""),
        )
    })
}

/// Parses a decimal integer as PostgreSQL's pg_strtoint*: optional surrounding
/// whitespace and sign, at least one digit. Returns None on bad syntax and
/// Some(None) on overflow of [min, max].
fn parse_int_range(input: &str, min: i64, max: i64) -> Option<Option<i64>> {
    let s = float::trim_pg(input).as_bytes();
    let (neg, digits) = match s.first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    if digits.is_empty() || !digits.iter().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let mut acc: i128 = 0;
    for d in digits {
        acc = acc * 10 + (d - b'0') as i128;
        if acc > (max as i128) + 1 {
            return Some(None);
        }
    }
    let v = if neg { -acc } else { acc };
    if v < min as i128 || v > max as i128 {
        return Some(None);
    }
    Some(Some(v as i64))
}

fn parse_int_typed(input: &str, min: i64, max: i64, type_name: &str) -> PgResult<i64> {
    match parse_int_range(input, min, max) {
        Some(Some(v)) => Ok(v),
        Some(None) => Err(PgError::new(
            SqlState::NUMERIC_VALUE_OUT_OF_RANGE,
            format!("value \"{input}\" is out of range for type {type_name}"),
        )),
        None => Err(PgError::new(
            SqlState::INVALID_TEXT_REPRESENTATION,
            format!("invalid input syntax for type {type_name}: \"{input}\""),
        )),
    }
}

/// smallint input.
pub fn parse_int2(s: &str) -> PgResult<i16> {
    parse_int_typed(s, i16::MIN as i64, i16::MAX as i64, "smallint").map(|v| v as i16)
}

/// integer input.
pub fn parse_int4(s: &str) -> PgResult<i32> {
    parse_int_typed(s, i32::MIN as i64, i32::MAX as i64, "integer").map(|v| v as i32)
}

/// bigint input.
pub fn parse_int8(s: &str) -> PgResult<i64> {
    parse_int_typed(s, i64::MIN, i64::MAX, "bigint")
}

/// oid input: like strtoul, so values from -2147483648 wrap around.
pub fn parse_oid(s: &str) -> PgResult<u32> {
    parse_int_typed(s, i32::MIN as i64, u32::MAX as i64, "oid").map(|v| v as u32)
}

/// regclass input without a catalog: only numeric oids are understood; a name
/// raises 42P01 (the caller resolves names before reaching here).
pub fn parse_regclass(s: &str) -> PgResult<u32> {
    parse_reg_oid(TypeId::RegClass, s)
}

/// The numeric form of a reg* input (`'16384'::regclass`), or None for a name.
pub fn reg_numeric(s: &str) -> Option<PgResult<u32>> {
    let t = float::trim_pg(s);
    (!t.is_empty() && t.bytes().all(|b| b.is_ascii_digit())).then(|| parse_oid(t))
}

/// reg* input without a catalog: only numeric oids are understood; a name
/// raises the error PostgreSQL gives for a missing object of that kind (the
/// caller resolves names against the catalog before reaching here).
pub fn parse_reg_oid(ty: TypeId, s: &str) -> PgResult<u32> {
    match reg_numeric(s) {
        Some(oid) => oid,
        None => Err(reg_not_found(ty, s)),
    }
}

/// The error for a reg* input naming no object: 42P01 for relations,
/// 42883 for functions, 3F000 for schemas, 42704 for types and roles.
pub fn reg_not_found(ty: TypeId, name: &str) -> PgError {
    let (code, what) = match ty {
        TypeId::RegClass => (SqlState::UNDEFINED_TABLE, "relation"),
        TypeId::RegProc | TypeId::RegProcedure => (SqlState::UNDEFINED_FUNCTION, "function"),
        TypeId::RegNamespace => (SqlState::INVALID_SCHEMA_NAME, "schema"),
        TypeId::RegRole => (SqlState::UNDEFINED_OBJECT, "role"),
        _ => (SqlState::UNDEFINED_OBJECT, "type"),
    };
    PgError::new(code, format!("{what} \"{name}\" does not exist"))
}

/// Truncates to at most 63 bytes at a character boundary (namein).
pub fn truncate_name(s: &str) -> &str {
    if s.len() <= NAME_MAX_BYTES {
        return s;
    }
    let mut end = NAME_MAX_BYTES;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// Applies a varchar(n) / char(n) typmod to `s`. Longer values raise 22001
/// "value too long for type character varying(n)" unless the excess is all
/// blanks (then it is cut) or `truncate` (explicit casts) is set; char(n) is
/// then blank-padded to n characters. Other types / typmod -1: unchanged.
pub fn enforce_string_typmod(mut s: String, ty: DataType, truncate: bool) -> PgResult<String> {
    let Some(n) = ty.char_length() else {
        return Ok(s);
    };
    let bpchar = ty.id == TypeId::Bpchar;
    if s.len() <= n && !bpchar {
        return Ok(s);
    }
    // Byte offset of the n-th character, if the string is longer.
    let cut = s.char_indices().nth(n).map(|(i, _)| i);
    if let Some(cut) = cut {
        if !truncate && s.as_bytes()[cut..].iter().any(|b| *b != b' ') {
            return Err(PgError::new(
                SqlState::STRING_DATA_RIGHT_TRUNCATION,
                format!("value too long for type {}({n})", ty.id.display_name()),
            ));
        }
        s.truncate(cut);
    } else if bpchar {
        let chars = if s.is_ascii() {
            s.len()
        } else {
            s.chars().count()
        };
        push_spaces(&mut s, n - chars);
    }
    Ok(s)
}

/// Appends `n` blanks.
pub fn push_spaces(s: &mut String, mut n: usize) {
    const SPACES: &str = "                                                                ";
    s.reserve(n);
    while n > 0 {
        let k = n.min(SPACES.len());
        s.push_str(&SPACES[..k]);
        n -= k;
    }
}

/// The significant part of a char(n) value: trailing blanks removed.
pub fn bpchar_trim(s: &str) -> &str {
    // Byte-wise, eight at a time: char(n) values are mostly padding, and a
    // char-by-char backwards scan cost more than the rest of a scan's qual.
    const BLANKS: u64 = u64::from_ne_bytes([b' '; 8]);
    let b = s.as_bytes();
    let mut end = b.len();
    while end >= 8 && u64::from_ne_bytes(b[end - 8..end].try_into().unwrap()) == BLANKS {
        end -= 8;
    }
    while end > 0 && b[end - 1] == b' ' {
        end -= 1;
    }
    // A blank is ASCII, so `end` is a char boundary.
    &s[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(ty: DataType, s: &str) -> String {
        match parse_text(ty, s, &IoSettings::UTC) {
            Ok(v) => to_text(&v, ty.id, &IoSettings::UTC),
            Err(e) => format!("ERROR {}: {}", e.code.0, e.message),
        }
    }

    #[test]
    fn bools() {
        let b = DataType::new(TypeId::Bool);
        for (i, o) in [
            ("  TRUE ", "t"),
            ("yes", "t"),
            ("of", "f"),
            ("off", "f"),
            ("on", "t"),
            ("1", "t"),
            ("0", "f"),
            ("f", "f"),
            ("tr", "t"),
            ("n", "f"),
        ] {
            assert_eq!(p(b, i), o, "{i}");
        }
        for bad in ["o", "x", "", "10", "truex", "yess"] {
            assert_eq!(
                p(b, bad),
                format!("ERROR 22P02: invalid input syntax for type boolean: \"{bad}\"")
            );
        }
    }

    #[test]
    fn ints() {
        let i4 = DataType::new(TypeId::Int4);
        assert_eq!(p(i4, " 12 "), "12");
        assert_eq!(p(i4, "-2147483648"), "-2147483648");
        assert_eq!(
            p(i4, "abc"),
            "ERROR 22P02: invalid input syntax for type integer: \"abc\""
        );
        assert_eq!(
            p(i4, "1.5"),
            "ERROR 22P02: invalid input syntax for type integer: \"1.5\""
        );
        assert_eq!(
            p(i4, ""),
            "ERROR 22P02: invalid input syntax for type integer: \"\""
        );
        assert_eq!(
            p(i4, "99999999999"),
            "ERROR 22003: value \"99999999999\" is out of range for type integer"
        );
        assert_eq!(
            p(i4, "99999999999999999999999999"),
            "ERROR 22003: value \"99999999999999999999999999\" is out of range for type integer"
        );
        let i2 = DataType::new(TypeId::Int2);
        assert_eq!(p(i2, "+5"), "5");
        assert_eq!(
            p(i2, "40000"),
            "ERROR 22003: value \"40000\" is out of range for type smallint"
        );
        let i8 = DataType::new(TypeId::Int8);
        assert_eq!(p(i8, "-9223372036854775808"), "-9223372036854775808");
        assert_eq!(
            p(i8, "9223372036854775808"),
            "ERROR 22003: value \"9223372036854775808\" is out of range for type bigint"
        );
        assert_eq!(p(DataType::new(TypeId::Oid), "-1"), "4294967295");
    }

    #[test]
    fn strings() {
        let vc = DataType::varchar(5);
        assert_eq!(p(vc, "abc"), "abc");
        assert_eq!(p(vc, "abcde   "), "abcde");
        assert_eq!(
            p(vc, "abcdef"),
            "ERROR 22001: value too long for type character varying(5)"
        );
        let c = DataType::bpchar(5);
        assert_eq!(p(c, "ab"), "ab   ");
        assert_eq!(p(c, "ééé"), "ééé  ");
        assert_eq!(
            p(c, "abcdefgh"),
            "ERROR 22001: value too long for type character(5)"
        );
        assert_eq!(p(c, "abcde  "), "abcde");
        assert_eq!(
            enforce_string_typmod("abcdef".into(), DataType::varchar(2), true).unwrap(),
            "ab"
        );
        assert_eq!(
            enforce_string_typmod("abcdef".into(), DataType::bpchar(3), true).unwrap(),
            "abc"
        );
        let long = "x".repeat(70);
        assert_eq!(p(DataType::new(TypeId::Name), &long).len(), 63);
        assert_eq!(p(DataType::new(TypeId::Unknown), " a "), " a ");
    }

    #[test]
    fn numerics_and_dates() {
        assert_eq!(p(DataType::numeric(5, 2), "123.456"), "123.46");
        assert_eq!(p(DataType::new(TypeId::Numeric), "1.50"), "1.50");
        assert_eq!(p(DataType::new(TypeId::Float8), "1e20"), "1e+20");
        assert_eq!(p(DataType::new(TypeId::Date), "2024-01-02"), "2024-01-02");
        assert_eq!(
            p(DataType::new(TypeId::Timestamptz), "2024-01-02 03:04:05+02"),
            "2024-01-02 01:04:05+00"
        );
        assert_eq!(
            p(
                DataType::with_typmod(TypeId::Timestamp, 0),
                "2024-01-02 03:04:05.9999"
            ),
            "2024-01-02 03:04:06"
        );
    }

    #[test]
    fn binary() {
        let cases: Vec<(DataType, Value, Vec<u8>)> = vec![
            (TypeId::Bool.into(), Value::Bool(true), vec![1]),
            (TypeId::Int2.into(), Value::Int2(-2), vec![0xff, 0xfe]),
            (TypeId::Int4.into(), Value::Int4(1), vec![0, 0, 0, 1]),
            (
                TypeId::Int8.into(),
                Value::Int8(256),
                vec![0, 0, 0, 0, 0, 0, 1, 0],
            ),
            (
                TypeId::Float8.into(),
                Value::Float8(1.5),
                1.5f64.to_be_bytes().to_vec(),
            ),
            (
                TypeId::Float4.into(),
                Value::Float4(1.5),
                1.5f32.to_be_bytes().to_vec(),
            ),
            (
                TypeId::Text.into(),
                Value::Text("hé".into()),
                "hé".as_bytes().to_vec(),
            ),
            (
                TypeId::Date.into(),
                Value::Date(-1),
                vec![0xff, 0xff, 0xff, 0xff],
            ),
            (
                TypeId::Timestamp.into(),
                Value::Timestamp(1),
                vec![0, 0, 0, 0, 0, 0, 0, 1],
            ),
            (TypeId::Oid.into(), Value::Oid(4294967295), vec![0xff; 4]),
            // tidsend: block then offset, big-endian.
            (
                TypeId::Tid.into(),
                Value::Int8(crate::tid::pack(258, 3)),
                vec![0, 0, 1, 2, 0, 3],
            ),
            (TypeId::Xid.into(), Value::Oid(7), vec![0, 0, 0, 7]),
            (
                TypeId::Numeric.into(),
                Value::Numeric(Box::new(Numeric::parse("1.50").unwrap())),
                vec![0, 2, 0, 0, 0, 0, 0, 2, 0, 1, 0x13, 0x88],
            ),
        ];
        for (ty, v, bytes) in cases {
            let mut out = Vec::new();
            format_binary(&v, ty.id, &mut out);
            assert_eq!(out, bytes, "{ty:?}");
            assert_eq!(parse_binary(ty, &bytes).unwrap(), v);
        }
        assert_eq!(
            parse_binary(TypeId::Int4.into(), &[0, 1]).unwrap_err().code,
            SqlState::INVALID_BINARY_REPRESENTATION
        );
        assert_eq!(
            parse_binary(TypeId::Text.into(), &[0xff])
                .unwrap_err()
                .message,
            "invalid byte sequence for encoding \"UTF8\": 0xff"
        );
        assert_eq!(
            parse_binary(DataType::bpchar(3), b"a").unwrap(),
            Value::Text("a  ".into())
        );
    }

    /// Found by the types_io fuzz target: binary input took dates and
    /// timestamps the text output cannot print; PostgreSQL's *_recv refuse them.
    #[test]
    fn binary_dates_and_timestamps_are_range_checked() {
        let err = |ty: TypeId, bytes: &[u8]| {
            let e = parse_binary(DataType::new(ty), bytes).unwrap_err();
            format!("{} {}", e.code.0, e.message)
        };
        let beyond = datetime::END_TIMESTAMP.to_be_bytes();
        assert_eq!(
            err(TypeId::Timestamp, &beyond),
            "22008 timestamp out of range"
        );
        assert_eq!(
            err(
                TypeId::Timestamptz,
                &(datetime::MIN_TIMESTAMP - 1).to_be_bytes()
            ),
            "22008 timestamp out of range"
        );
        assert_eq!(
            err(TypeId::Date, &(i32::MAX - 1).to_be_bytes()),
            "22008 date out of range"
        );
        // The infinities and the ends of the range still come through.
        for t in [
            i64::MIN,
            i64::MAX,
            datetime::MIN_TIMESTAMP,
            datetime::END_TIMESTAMP - 1,
        ] {
            let v = parse_binary(DataType::new(TypeId::Timestamp), &t.to_be_bytes()).unwrap();
            assert_eq!(v, Value::Timestamp(t));
        }
        for d in [
            i32::MIN,
            i32::MAX,
            datetime::MIN_DATE,
            datetime::END_DATE - 1,
        ] {
            let v = parse_binary(DataType::new(TypeId::Date), &d.to_be_bytes()).unwrap();
            assert_eq!(v, Value::Date(d));
        }
    }
}
