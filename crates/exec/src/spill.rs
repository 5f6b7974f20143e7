//! What spilling operators share: rows in a compact length-prefixed encoding
//! for temporary files (private to one server run: it need not be stable
//! across versions), the approximate memory a row holds (as PostgreSQL
//! counts tuple memory against work_mem), and run files of rows.

use common::{PgError, PgResult};
use storage::temp_file::TempFile;
use types::numeric::Numeric;
use types::Value;

use crate::{ExecEnv, Row};

/// Rows handled between interrupt checks while writing or reading spills.
pub(crate) const ROWS_PER_CHECK: u64 = 4096;

/// Allocator overhead assumed per heap block.
const ALLOC_OVERHEAD: usize = 16;

/// Approximate bytes a row holds in memory: the vector, its values, and
/// their heap parts.
pub(crate) fn row_size(row: &Row) -> usize {
    let mut n =
        std::mem::size_of::<Row>() + row.capacity() * std::mem::size_of::<Value>() + ALLOC_OVERHEAD;
    for v in row {
        n += value_heap(v);
    }
    n
}

/// Bytes a value holds on the heap beyond its own slot.
pub(crate) fn value_heap(v: &Value) -> usize {
    match v {
        Value::Text(s) => s.capacity() + ALLOC_OVERHEAD,
        Value::Bytea(b) => b.capacity() + ALLOC_OVERHEAD,
        Value::Numeric(_) => std::mem::size_of::<Numeric>() + ALLOC_OVERHEAD,
        // An estimate: the document's stored size, counted as if unshared.
        Value::Jsonb(j) => 2 * j.stored_size() + ALLOC_OVERHEAD,
        Value::Array(a) => {
            a.items.capacity() * std::mem::size_of::<Value>()
                + a.items.iter().map(value_heap).sum::<usize>()
                + 2 * ALLOC_OVERHEAD
        }
        _ => 0,
    }
}

/// Appends `row`'s encoding to `out`.
pub(crate) fn encode_row(row: &[Value], out: &mut Vec<u8>) {
    out.extend_from_slice(&(row.len() as u32).to_le_bytes());
    for v in row {
        match v {
            Value::Null => out.push(0),
            Value::Bool(b) => out.extend_from_slice(&[1, *b as u8]),
            Value::Int2(x) => {
                out.push(2);
                out.extend_from_slice(&x.to_le_bytes());
            }
            Value::Int4(x) => {
                out.push(3);
                out.extend_from_slice(&x.to_le_bytes());
            }
            Value::Int8(x) => {
                out.push(4);
                out.extend_from_slice(&x.to_le_bytes());
            }
            Value::Float4(x) => {
                out.push(5);
                out.extend_from_slice(&x.to_bits().to_le_bytes());
            }
            Value::Float8(x) => {
                out.push(6);
                out.extend_from_slice(&x.to_bits().to_le_bytes());
            }
            Value::Numeric(n) => {
                // Its text form keeps the display scale and NaN / infinities.
                let s = n.to_string();
                out.push(7);
                out.extend_from_slice(&(s.len() as u32).to_le_bytes());
                out.extend_from_slice(s.as_bytes());
            }
            Value::Text(s) => {
                out.push(8);
                out.extend_from_slice(&(s.len() as u32).to_le_bytes());
                out.extend_from_slice(s.as_bytes());
            }
            Value::Oid(x) => {
                out.push(9);
                out.extend_from_slice(&x.to_le_bytes());
            }
            Value::Date(x) => {
                out.push(10);
                out.extend_from_slice(&x.to_le_bytes());
            }
            Value::Timestamp(x) => {
                out.push(11);
                out.extend_from_slice(&x.to_le_bytes());
            }
            Value::Timestamptz(x) => {
                out.push(12);
                out.extend_from_slice(&x.to_le_bytes());
            }
            Value::Bytea(b) => {
                out.push(13);
                out.extend_from_slice(&(b.len() as u32).to_le_bytes());
                out.extend_from_slice(b);
            }
            Value::Uuid(u) => {
                out.push(14);
                out.extend_from_slice(u);
            }
            Value::Interval(iv) => {
                out.push(15);
                out.extend_from_slice(&iv.months.to_le_bytes());
                out.extend_from_slice(&iv.days.to_le_bytes());
                out.extend_from_slice(&iv.micros.to_le_bytes());
            }
            Value::Jsonb(j) => {
                let mut doc = Vec::new();
                j.encode(&mut doc);
                out.push(16);
                out.extend_from_slice(&(doc.len() as u32).to_le_bytes());
                out.extend_from_slice(&doc);
            }
            Value::Array(a) => {
                let mut stored = Vec::new();
                types::array::storage::encode(a, a.elem, &mut stored);
                out.push(17);
                out.extend_from_slice(&(stored.len() as u32).to_le_bytes());
                out.extend_from_slice(&stored);
            }
            Value::Inet(n) => {
                let mut stored = Vec::with_capacity(18);
                n.encode(&mut stored);
                out.push(18);
                out.extend_from_slice(&(stored.len() as u32).to_le_bytes());
                out.extend_from_slice(&stored);
            }
            Value::MacAddr(m) => {
                out.push(19);
                out.extend_from_slice(m);
            }
            Value::MacAddr8(m) => {
                out.push(20);
                out.extend_from_slice(m);
            }
            Value::Money(m) => {
                out.push(21);
                out.extend_from_slice(&m.to_le_bytes());
            }
            Value::Enum(d) => {
                out.push(22);
                out.extend_from_slice(&d.oid.to_le_bytes());
                out.extend_from_slice(&d.sort_order.to_le_bytes());
            }
        }
    }
}

fn corrupt() -> PgError {
    PgError::internal("corrupt row in temporary file")
}

struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take<const N: usize>(&mut self) -> PgResult<[u8; N]> {
        let (a, rest) = self.0.split_first_chunk::<N>().ok_or_else(corrupt)?;
        self.0 = rest;
        Ok(*a)
    }

    fn bytes(&mut self) -> PgResult<&'a [u8]> {
        let n = u32::from_le_bytes(self.take()?) as usize;
        if self.0.len() < n {
            return Err(corrupt());
        }
        let (a, rest) = self.0.split_at(n);
        self.0 = rest;
        Ok(a)
    }

    fn string(&mut self) -> PgResult<String> {
        String::from_utf8(self.bytes()?.to_vec()).map_err(|_| corrupt())
    }
}

/// Decodes a row `encode_row` wrote.
pub(crate) fn decode_row(bytes: &[u8]) -> PgResult<Row> {
    let mut r = Reader(bytes);
    let n = u32::from_le_bytes(r.take()?) as usize;
    let mut row = Vec::with_capacity(n);
    for _ in 0..n {
        let [tag] = r.take()?;
        row.push(match tag {
            0 => Value::Null,
            1 => Value::Bool(r.take::<1>()?[0] != 0),
            2 => Value::Int2(i16::from_le_bytes(r.take()?)),
            3 => Value::Int4(i32::from_le_bytes(r.take()?)),
            4 => Value::Int8(i64::from_le_bytes(r.take()?)),
            5 => Value::Float4(f32::from_bits(u32::from_le_bytes(r.take()?))),
            6 => Value::Float8(f64::from_bits(u64::from_le_bytes(r.take()?))),
            7 => Value::numeric(Numeric::parse(&r.string()?)?),
            8 => Value::Text(r.string()?),
            9 => Value::Oid(u32::from_le_bytes(r.take()?)),
            10 => Value::Date(i32::from_le_bytes(r.take()?)),
            11 => Value::Timestamp(i64::from_le_bytes(r.take()?)),
            12 => Value::Timestamptz(i64::from_le_bytes(r.take()?)),
            13 => Value::Bytea(r.bytes()?.to_vec()),
            14 => Value::Uuid(r.take()?),
            15 => Value::Interval(types::interval::Interval::new(
                i32::from_le_bytes(r.take()?),
                i32::from_le_bytes(r.take()?),
                i64::from_le_bytes(r.take()?),
            )),
            16 => Value::Jsonb(std::sync::Arc::new(types::json::JsonbDoc::from_stored(
                r.bytes()?,
            )?)),
            17 => Value::array(types::array::storage::decode(r.bytes()?)?),
            18 => Value::Inet(types::network::Inet::decode(r.bytes()?).ok_or_else(corrupt)?),
            19 => Value::MacAddr(r.take()?),
            20 => Value::MacAddr8(r.take()?),
            21 => Value::Money(i64::from_le_bytes(r.take()?)),
            22 => Value::Enum(types::enums::EnumDatum {
                oid: u32::from_le_bytes(r.take()?),
                sort_order: f32::from_le_bytes(r.take()?),
            }),
            _ => return Err(corrupt()),
        });
    }
    Ok(row)
}

/// A temporary file of rows.
pub(crate) struct RowFile {
    file: TempFile,
    buf: Vec<u8>,
    /// Rows written or read since the last interrupt check.
    since_check: u64,
}

impl RowFile {
    pub(crate) fn create(env: &ExecEnv) -> PgResult<RowFile> {
        Self::with_buffer(env, storage::temp_file::TEMP_BUFFER)
    }

    /// A file with a `buffer`-byte buffer (for many files open at once).
    pub(crate) fn with_buffer(env: &ExecEnv, buffer: usize) -> PgResult<RowFile> {
        Ok(RowFile {
            file: TempFile::with_buffer(env.temp, env.settings.temp_file_limit_kb, buffer)?,
            buf: Vec::new(),
            since_check: 0,
        })
    }

    fn tick(&mut self, env: &ExecEnv) -> PgResult<()> {
        self.since_check += 1;
        if self.since_check >= ROWS_PER_CHECK {
            self.since_check = 0;
            env.check_cancel()?;
        }
        Ok(())
    }

    pub(crate) fn write(&mut self, row: &[Value], env: &ExecEnv) -> PgResult<()> {
        self.tick(env)?;
        self.buf.clear();
        encode_row(row, &mut self.buf);
        self.file.write_record(&self.buf)
    }

    /// Ends writing: reads start from the first row.
    pub(crate) fn rewind(&mut self) -> PgResult<()> {
        self.file.rewind()
    }

    pub(crate) fn read(&mut self, env: &ExecEnv) -> PgResult<Option<Row>> {
        self.tick(env)?;
        if !self.file.read_record(&mut self.buf)? {
            return Ok(None);
        }
        decode_row(&self.buf).map(Some)
    }

    /// Bytes written.
    pub(crate) fn size(&self) -> u64 {
        self.file.size()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_value_kind_round_trips() {
        let row = vec![
            Value::Null,
            Value::Bool(true),
            Value::Int2(-3),
            Value::Int4(7),
            Value::Int8(i64::MIN),
            Value::Float4(1.5),
            Value::Float8(f64::NAN),
            Value::numeric(Numeric::parse("12.3400").unwrap()),
            Value::numeric(Numeric::parse("-Infinity").unwrap()),
            Value::text("héllo"),
            Value::Oid(99),
            Value::Date(-1),
            Value::Interval(types::interval::Interval::new(-14, 3, i64::MIN)),
            Value::Timestamp(5),
            Value::Timestamptz(-5),
            Value::Bytea(vec![0, 255]),
            Value::Uuid([7; 16]),
            Value::array(types::array::ArrayValue {
                elem: types::TypeId::Text,
                dims: vec![
                    types::array::Dim { len: 1, lower: 0 },
                    types::array::Dim { len: 2, lower: 1 },
                ],
                items: vec![Value::text("a"), Value::Null],
            }),
            // A jsonb tree, and one holding stored bytes (written back as they are).
            types::json::build::jsonb_value(
                types::json::parse::parse_jsonb(r#"{"a": [1.50, "x"], "b": null}"#).unwrap(),
            ),
            Value::Jsonb(std::sync::Arc::new(
                types::json::JsonbDoc::from_stored(&[1, 5, 1, 4, 1, b'y']).unwrap(),
            )),
        ];
        let mut buf = Vec::new();
        encode_row(&row, &mut buf);
        let back = decode_row(&buf).unwrap();
        assert_eq!(format!("{row:?}"), format!("{back:?}"));
        assert!(decode_row(&buf[..buf.len() - 1]).is_err());
    }
}
