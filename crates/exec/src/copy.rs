//! COPY's data formats, as PostgreSQL reads and writes them: text (one line
//! per row, fields split by the delimiter, backslash escapes, `\N` for NULL)
//! and CSV (RFC 4180 quoting with configurable quote and escape characters).
//! Input is parsed incrementally from chunks of any size, so a load never
//! holds more than one row's worth of unparsed bytes, and rows are inserted
//! in batches that fill a page per content-lock acquisition.

use access::heap::{self, InsertTarget, Tid};
use access::tuple;
use catalog::Table;
use common::{PgError, PgResult, SqlState};
use sql::copy::{CopyFormat, CopyHeader, CopyOptions};
use sql::plan::CopyFromTarget;
use types::io::{format_text, parse_text};
use types::{DataType, Value};

use crate::eval::eval;
use crate::ri::RiQueue;
use crate::triggers::TableTriggers;
use crate::writer::TableWriter;
use crate::{ExecEnv, Row};
use catalog::triggers::TRIGGER_TYPE_INSERT;

fn bad_format(msg: impl Into<String>) -> PgError {
    PgError::new(SqlState("22P04"), msg)
}

/// The longest record (line) COPY accepts: PostgreSQL's 1 GB bound on one
/// allocation, and so on what an endless input without line breaks can
/// make the server buffer.
const MAX_RECORD_BYTES: usize = 1 << 30;

/// One input row's fields: None for NULL.
pub type RawRecord = Vec<Option<String>>;

/// Splits COPY input into records, one chunk at a time.
pub struct CopyParser {
    options: CopyOptions,
    /// Bytes received but not yet part of a complete record.
    pending: Vec<u8>,
    /// Bytes of `pending` already consumed (compacted away now and then, so a
    /// chunk of many records is not shifted once per record).
    start: usize,
    /// Where scanning for the end of the current record resumes (from `start`).
    scanned: usize,
    /// Line number of the next record (1-based), for error context.
    pub line: u64,
    /// The `\.` end-of-data marker was seen.
    pub ended: bool,
    header_pending: bool,
    /// Per field: the CSV value was quoted (FORCE_NULL / FORCE_NOT_NULL need it).
    quoted: Vec<bool>,
    /// The last record's text, for errors' CONTEXT.
    last_line: String,
}

impl CopyParser {
    pub fn new(options: &CopyOptions) -> Self {
        CopyParser {
            header_pending: options.header != CopyHeader::None,
            options: options.clone(),
            pending: Vec::new(),
            start: 0,
            scanned: 0,
            line: 1,
            ended: false,
            quoted: Vec::new(),
            last_line: String::new(),
        }
    }

    /// Adds input. Fails when one record grows past `MAX_RECORD_BYTES`.
    pub fn push(&mut self, chunk: &[u8]) -> PgResult<()> {
        if self.ended {
            return Ok(());
        }
        if self.start > 0 {
            self.pending.drain(..self.start);
            self.start = 0;
        }
        if self.pending.len() + chunk.len() > MAX_RECORD_BYTES {
            return Err(
                PgError::new(SqlState::PROGRAM_LIMIT_EXCEEDED, "out of memory").with_detail(
                    format!(
                        "A COPY line over {} MB cannot be stored in a row.",
                        MAX_RECORD_BYTES >> 20
                    ),
                ),
            );
        }
        self.pending.extend_from_slice(chunk);
        Ok(())
    }

    /// The header line, if one is still to be skipped, or the next complete
    /// record. `at_eof`: no more input will come (a last line may lack its
    /// newline). Returns (record, is_header).
    pub fn next_record(&mut self, at_eof: bool) -> PgResult<Option<(RawRecord, bool)>> {
        if self.ended {
            return Ok(None);
        }
        let Some(end) = self.find_record_end(at_eof)? else {
            return Ok(None);
        };
        let mut line = &self.pending[self.start..self.start + end];
        self.start += end;
        self.scanned = 0;
        // Drop the terminator: \n, \r\n or \r.
        if line.last() == Some(&b'\n') {
            line = &line[..line.len() - 1];
        }
        if line.last() == Some(&b'\r') {
            line = &line[..line.len() - 1];
        }
        let lines_in_record = 1 + memchr::memchr_iter(b'\n', line).count() as u64;
        if line == b"\\." {
            self.ended = true;
            self.pending.clear();
            self.start = 0;
            return Ok(None);
        }
        let text = std::str::from_utf8(line).map_err(|_| {
            PgError::new(
                SqlState("22021"),
                "invalid byte sequence for encoding \"UTF8\"",
            )
        })?;
        // The line's text is kept for errors' CONTEXT in a reused buffer.
        self.last_line.clear();
        self.last_line.push_str(text);
        let text = std::mem::take(&mut self.last_line);
        let record = match self.options.format {
            CopyFormat::Csv => self.split_csv(&text),
            _ => self.split_text(&text),
        };
        self.last_line = text;
        let record = record?;
        let header = std::mem::take(&mut self.header_pending);
        self.line += lines_in_record;
        Ok(Some((record, header)))
    }

    /// The text of the last record read (or of the unfinished one at the end).
    pub fn last_line(&self) -> &str {
        &self.last_line
    }

    /// Whether the last record's field `i` was quoted (CSV).
    pub fn was_quoted(&self, i: usize) -> bool {
        self.quoted.get(i).copied().unwrap_or(false)
    }

    /// End (exclusive, terminator included) of the first complete record.
    fn find_record_end(&mut self, at_eof: bool) -> PgResult<Option<usize>> {
        let b = &self.pending[self.start..];
        if self.options.format == CopyFormat::Csv {
            // A newline inside quotes belongs to the field.
            let (q, e) = (self.options.quote, self.options.escape);
            let mut in_quotes = false;
            let mut i = 0;
            while i < b.len() {
                let c = b[i];
                if in_quotes {
                    if c == e && e != q && b.get(i + 1).is_some_and(|&n| n == q || n == e) {
                        i += 2;
                        continue;
                    }
                    if c == q {
                        if e == q && b.get(i + 1) == Some(&q) {
                            i += 2;
                            continue;
                        }
                        in_quotes = false;
                    }
                } else if c == q {
                    in_quotes = true;
                } else if c == b'\n' {
                    return Ok(Some(i + 1));
                }
                i += 1;
            }
            if at_eof && !b.is_empty() {
                if in_quotes {
                    self.last_line = String::from_utf8_lossy(b).into_owned();
                    return Err(bad_format("unterminated CSV quoted field"));
                }
                return Ok(Some(b.len()));
            }
            return Ok(None);
        }
        match memchr::memchr(b'\n', &b[self.scanned..]) {
            Some(i) => Ok(Some(self.scanned + i + 1)),
            None => {
                self.scanned = b.len();
                Ok((at_eof && !b.is_empty()).then_some(b.len()))
            }
        }
    }

    fn split_text(&mut self, line: &str) -> PgResult<RawRecord> {
        let delim = self.options.delimiter;
        let mut fields = Vec::new();
        let bytes = line.as_bytes();
        let mut start = 0;
        let mut i = 0;
        loop {
            if i == bytes.len() || bytes[i] == delim {
                let raw = &line[start..i];
                fields.push(if raw == self.options.null {
                    None
                } else {
                    Some(unescape_text(raw)?)
                });
                if i == bytes.len() {
                    break;
                }
                start = i + 1;
            } else if bytes[i] == b'\\' && i + 1 < bytes.len() {
                i += 1;
            }
            i += 1;
        }
        self.quoted.clear();
        Ok(fields)
    }

    fn split_csv(&mut self, rec: &str) -> PgResult<RawRecord> {
        let (d, q, e) = (
            self.options.delimiter,
            self.options.quote,
            self.options.escape,
        );
        let b = rec.as_bytes();
        let mut fields = Vec::new();
        self.quoted.clear();
        let mut i = 0;
        loop {
            let mut value = Vec::new();
            let mut quoted = false;
            let mut any_quoted = false;
            let start = i;
            while i < b.len() {
                let c = b[i];
                if quoted {
                    if c == e && b.get(i + 1).is_some_and(|&n| n == q || (n == e && e != q)) {
                        value.push(b[i + 1]);
                        i += 2;
                        continue;
                    }
                    if c == q {
                        quoted = false;
                        i += 1;
                        continue;
                    }
                    value.push(c);
                } else if c == q {
                    quoted = true;
                    any_quoted = true;
                } else if c == d {
                    break;
                } else {
                    value.push(c);
                }
                i += 1;
            }
            if quoted {
                return Err(bad_format("unterminated CSV quoted field"));
            }
            let raw = &rec[start..i];
            let text = String::from_utf8(value).map_err(|_| {
                PgError::new(
                    SqlState("22021"),
                    "invalid byte sequence for encoding \"UTF8\"",
                )
            })?;
            // Only an unquoted field can be the NULL marker.
            let is_null = !any_quoted && raw == self.options.null;
            fields.push(if is_null { None } else { Some(text) });
            self.quoted.push(any_quoted);
            if i >= b.len() {
                break;
            }
            i += 1; // the delimiter
        }
        Ok(fields)
    }
}

/// Decodes text format's backslash escapes.
fn unescape_text(raw: &str) -> PgResult<String> {
    if !raw.contains('\\') {
        return Ok(raw.to_string());
    }
    let b = raw.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'\\' || i + 1 == b.len() {
            out.push(b[i]);
            i += 1;
            continue;
        }
        let c = b[i + 1];
        i += 2;
        match c {
            b'b' => out.push(8),
            b'f' => out.push(12),
            b'n' => out.push(b'\n'),
            b'r' => out.push(b'\r'),
            b't' => out.push(b'\t'),
            b'v' => out.push(11),
            b'0'..=b'7' => {
                let mut v = (c - b'0') as u32;
                for _ in 0..2 {
                    match b.get(i) {
                        Some(&d @ b'0'..=b'7') => {
                            v = v * 8 + (d - b'0') as u32;
                            i += 1;
                        }
                        _ => break,
                    }
                }
                out.push((v & 0xff) as u8);
            }
            b'x' if b.get(i).is_some_and(u8::is_ascii_hexdigit) => {
                let mut v = 0u32;
                for _ in 0..2 {
                    match b.get(i) {
                        Some(d) if d.is_ascii_hexdigit() => {
                            v = v * 16 + (*d as char).to_digit(16).unwrap_or(0);
                            i += 1;
                        }
                        _ => break,
                    }
                }
                out.push(v as u8);
            }
            other => out.push(other),
        }
    }
    String::from_utf8(out).map_err(|_| {
        PgError::new(
            SqlState("22021"),
            "invalid byte sequence for encoding \"UTF8\"",
        )
    })
}

/// Appends one output row (with its newline) in the COPY format. `text` is
/// scratch space the caller keeps across rows, so a row allocates nothing.
pub fn format_row(
    row: &[Value],
    types: &[DataType],
    options: &CopyOptions,
    force_quote: &[bool],
    io: &types::IoSettings,
    text: &mut String,
    out: &mut Vec<u8>,
) {
    for (i, (v, ty)) in row.iter().zip(types).enumerate() {
        if i > 0 {
            out.push(options.delimiter);
        }
        if v.is_null() {
            out.extend_from_slice(options.null.as_bytes());
            continue;
        }
        text.clear();
        format_text(v, ty.id, io, text);
        match options.format {
            CopyFormat::Csv => {
                let lone = row.len() == 1;
                write_csv_field(text, options, force_quote[i] || lone && text == "\\.", out)
            }
            _ => write_text_field(text, options.delimiter, out),
        }
    }
    out.push(b'\n');
}

/// Bytes text format always escapes (the delimiter too, checked apart).
const TEXT_ESCAPED: [bool; 256] = {
    let mut t = [false; 256];
    let escaped = [b'\\', b'\n', b'\r', b'\t', 8, 11, 12];
    let mut i = 0;
    while i < escaped.len() {
        t[escaped[i] as usize] = true;
        i += 1;
    }
    t
};

fn write_text_field(s: &str, delim: u8, out: &mut Vec<u8>) {
    // Most values need no escape: copy them whole.
    if !s.bytes().any(|c| TEXT_ESCAPED[c as usize] || c == delim) {
        out.extend_from_slice(s.as_bytes());
        return;
    }
    for &c in s.as_bytes() {
        match c {
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'\t' => out.extend_from_slice(b"\\t"),
            8 => out.extend_from_slice(b"\\b"),
            12 => out.extend_from_slice(b"\\f"),
            11 => out.extend_from_slice(b"\\v"),
            c if c == delim => {
                out.push(b'\\');
                out.push(c);
            }
            c => out.push(c),
        }
    }
}

fn write_csv_field(s: &str, o: &CopyOptions, force: bool, out: &mut Vec<u8>) {
    let b = s.as_bytes();
    // Quote when the value could be misread: it holds the delimiter, a quote,
    // a line break, or is empty or equal to the NULL marker. (A lone column's
    // `\.`, the end-of-data marker, is forced by the caller.)
    let needs = force
        || b.is_empty()
        || s == o.null
        || b.iter()
            .any(|&c| c == o.delimiter || c == o.quote || c == b'\n' || c == b'\r');
    if !needs {
        out.extend_from_slice(b);
        return;
    }
    out.push(o.quote);
    for &c in b {
        if c == o.quote || c == o.escape {
            out.push(o.escape);
        }
        out.push(c);
    }
    out.push(o.quote);
}

/// The header line of a COPY TO.
pub fn format_header(names: &[String], options: &CopyOptions, out: &mut Vec<u8>) {
    for (i, n) in names.iter().enumerate() {
        if i > 0 {
            out.push(options.delimiter);
        }
        match options.format {
            CopyFormat::Csv => write_csv_field(n, options, names.len() == 1 && n == "\\.", out),
            _ => write_text_field(n, options.delimiter, out),
        }
    }
    out.push(b'\n');
}

/// Rows formed into tuples and inserted a batch at a time.
pub struct CopyLoader<'t> {
    target: &'t CopyFromTarget,
    types: Vec<DataType>,
    insert_target: InsertTarget,
    batch: Vec<Vec<u8>>,
    /// The batch's rows as values, kept only when the writer needs them
    /// after the heap insert (index entries, foreign key checks).
    batch_rows: Vec<Row>,
    batch_bytes: usize,
    row: Row,
    pub rows: u64,
    /// Checks, index entries and foreign key events of the rows written.
    writer: TableWriter,
    queue: RiQueue,
    /// The table's INSERT triggers, and whether BEFORE STATEMENT ones ran.
    triggers: Option<TableTriggers>,
    started: bool,
    /// COPY into a partitioned table: each row routed to its leaf.
    routed: Option<crate::partition_dml::RoutedInserts>,
}

/// A batch is inserted once it holds this many bytes of tuples (about eight
/// pages) or rows.
const BATCH_BYTES: usize = 64 * 1024;
const BATCH_ROWS: usize = 1000;

impl<'t> CopyLoader<'t> {
    pub fn new(target: &'t CopyFromTarget, env: &ExecEnv) -> PgResult<Self> {
        Ok(CopyLoader {
            types: target.table.column_types(),
            insert_target: InsertTarget::bulk(env.pool),
            batch: Vec::new(),
            batch_rows: Vec::new(),
            batch_bytes: 0,
            row: Vec::new(),
            rows: 0,
            writer: TableWriter::new(env, &target.table)?,
            routed: if target.table.is_partitioned() {
                Some(crate::partition_dml::RoutedInserts::new(
                    env,
                    &target.table,
                    true,
                )?)
            } else {
                None
            },
            queue: RiQueue::default(),
            triggers: TableTriggers::for_event(env, &target.table, TRIGGER_TYPE_INSERT, None)?,
            started: false,
            target,
        })
    }

    /// BEFORE STATEMENT triggers, before the first row (or at the end of
    /// a COPY of none).
    fn start(&mut self, env: &mut ExecEnv) -> PgResult<()> {
        if !self.started {
            self.started = true;
            if let Some(t) = &self.triggers {
                t.before_statement(env)?;
            }
        }
        Ok(())
    }

    /// After the last flush: the foreign key checks and AFTER triggers of
    /// the rows loaded.
    pub fn finish(&mut self, env: &mut ExecEnv) -> PgResult<()> {
        self.start(env)?;
        if let Some(r) = self.routed.as_mut() {
            r.finish(env);
        }
        if let Some(t) = &self.triggers {
            t.queue_after_statement(env, &mut self.queue);
        }
        self.queue.run(env)
    }

    fn table(&self) -> &Table {
        &self.target.table
    }

    /// Converts one record to a row and queues it. Errors carry PostgreSQL's
    /// CONTEXT (`COPY t, line 3, column a: "x"`).
    pub fn add_record(
        &mut self,
        record: RawRecord,
        line: u64,
        parser: &CopyParser,
        env: &mut ExecEnv,
    ) -> PgResult<()> {
        let t = self.target;
        let name = &t.table.name;
        let raw = parser.last_line();
        let context = |col: Option<(&str, &str)>| match col {
            Some((c, v)) => format!("COPY {name}, line {line}, column {c}: \"{v}\""),
            None => format!("COPY {name}, line {line}: \"{raw}\""),
        };
        if record.len() < t.columns.len() {
            let missing = &self.table().columns[t.columns[record.len()]].name;
            return Err(bad_format(format!("missing data for column \"{missing}\""))
                .with_context(context(None)));
        }
        if record.len() > t.columns.len() {
            return Err(
                bad_format("extra data after last expected column").with_context(context(None))
            );
        }
        let width = self.table().columns.len();
        self.row.clear();
        self.row.resize(width, Value::Null);
        let csv = t.options.format == CopyFormat::Csv;
        for (i, field) in record.into_iter().enumerate() {
            let col = t.columns[i];
            let field = match field {
                // FORCE_NOT_NULL: the NULL marker is read as a value.
                None if t.force_not_null[i] => Some(t.options.null.clone()),
                // FORCE_NULL: a quoted value equal to the marker is NULL too.
                Some(v)
                    if csv && t.force_null[i] && parser.was_quoted(i) && v == t.options.null =>
                {
                    None
                }
                f => f,
            };
            if let Some(text) = &field {
                let ty = self.types[col];
                self.row[col] = parse_text(ty, text, &env.io).map_err(|e| {
                    e.with_context(context(Some((&self.table().columns[col].name, text))))
                })?;
            }
            // A domain's checks run as its input function would.
            if let Some(check) = &t.domain_checks[i] {
                eval(check, &self.row, env).map_err(|e| {
                    let name = &self.table().columns[col].name;
                    e.with_context(context(field.as_deref().map(|f| (name.as_str(), f))))
                })?;
            }
        }
        for (col, expr) in &t.defaults {
            let v = eval(expr, &[], env)?;
            self.row[*col] = v;
        }
        if self.triggers.is_some() {
            self.start(env)?;
        }
        if let Some(trig) = self.triggers.as_ref().filter(|t| t.has_before_row()) {
            let row = std::mem::take(&mut self.row);
            match trig.before_row(env, None, Some(row))? {
                Some(r) => self.row = r,
                None => return Ok(()),
            }
        }
        if let Some(routed) = self.routed.as_mut() {
            let row = std::mem::take(&mut self.row);
            routed
                .insert(env, row, &mut self.queue, false)
                .map_err(|e| e.with_context(context(None)))?;
            self.rows += 1;
            return Ok(());
        }
        self.writer
            .check_row(&self.row, env)
            .map_err(|e| e.with_context(context(None)))?;
        let mut buf = Vec::new();
        self.writer.form(env, &self.row, &[], &mut buf)?;
        self.batch_bytes += buf.len();
        self.batch.push(buf);
        if self.writer.acts_after_insert()
            || self
                .triggers
                .as_ref()
                .is_some_and(TableTriggers::has_after_row)
        {
            let width = self.row.len();
            self.batch_rows
                .push(std::mem::replace(&mut self.row, Vec::with_capacity(width)));
        }
        self.rows += 1;
        if self.batch.len() >= BATCH_ROWS || self.batch_bytes >= BATCH_BYTES {
            self.flush(env)?;
        }
        Ok(())
    }

    /// Inserts the queued rows.
    pub fn flush(&mut self, env: &mut ExecEnv) -> PgResult<()> {
        if self.batch.is_empty() {
            return Ok(());
        }
        env.check_cancel()?;
        heap::insert_batch(
            env.pool,
            env.tm,
            self.target.table.locator(),
            &mut self.batch,
            &mut self.insert_target,
        )?;
        env.predicate_write(self.target.table.locator(), None)?;
        // Each tuple's ctid now says where it went.
        for (t, row) in self.batch.iter().zip(&self.batch_rows) {
            let (block, offset) = tuple::ctid(t);
            let tid = Tid { block, offset };
            self.writer.inserted(env, row, tid, &mut self.queue)?;
            if let Some(trig) = self.triggers.as_ref().filter(|t| t.has_after_row()) {
                trig.queue_after_row(env, &mut self.queue, None, Some(row))?;
            }
        }
        let c = crate::table_stats::PendingCounts {
            inserted: self.batch.len() as u64,
            ..Default::default()
        };
        env.hooks.count_table_changes(self.target.table.oid, c);
        self.batch.clear();
        self.batch_rows.clear();
        self.batch_bytes = 0;
        Ok(())
    }

    /// Checks a HEADER MATCH line against the column names.
    pub fn check_header(&self, record: &RawRecord) -> PgResult<()> {
        let t = self.target;
        if t.options.header != CopyHeader::Match {
            return Ok(());
        }
        if record.len() != t.columns.len() {
            return Err(bad_format(format!(
                "wrong number of fields in header line: got {}, expected {}",
                record.len(),
                t.columns.len()
            )));
        }
        for (i, f) in record.iter().enumerate() {
            let want = &self.table().columns[t.columns[i]].name;
            match f {
                Some(got) if got == want => {}
                Some(got) => {
                    return Err(bad_format(format!(
                        "column name mismatch in header line field {}: got \"{got}\", expected \"{want}\"",
                        i + 1
                    )))
                }
                None => {
                    return Err(bad_format(format!(
                        "column name mismatch in header line field {}: got null value (\"{}\"), expected \"{want}\"",
                        i + 1,
                        t.options.null
                    )))
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sql::copy::ForceQuote;

    fn opts(format: CopyFormat) -> CopyOptions {
        let csv = format == CopyFormat::Csv;
        CopyOptions {
            format,
            freeze: false,
            delimiter: if csv { b',' } else { b'\t' },
            null: if csv { String::new() } else { "\\N".into() },
            header: CopyHeader::None,
            quote: b'"',
            escape: b'"',
            force_quote: ForceQuote::None,
            force_not_null: vec![],
            force_null: vec![],
            encoding: None,
        }
    }

    fn records(o: &CopyOptions, chunks: &[&str]) -> PgResult<Vec<RawRecord>> {
        let mut p = CopyParser::new(o);
        let mut out = Vec::new();
        for c in chunks {
            p.push(c.as_bytes())?;
            while let Some((r, _)) = p.next_record(false)? {
                out.push(r);
            }
        }
        while let Some((r, _)) = p.next_record(true)? {
            out.push(r);
        }
        Ok(out)
    }

    fn s(v: &str) -> Option<String> {
        Some(v.to_string())
    }

    #[test]
    fn text_format_escapes_nulls_and_chunk_boundaries() {
        let o = opts(CopyFormat::Text);
        let r = records(
            &o,
            &["1\ta\\tb\\\\c\t\\N\n2\t", "x\\ny\t\\101\\x41\n3\t\t", "z"],
        )
        .unwrap();
        assert_eq!(
            r,
            vec![
                vec![s("1"), s("a\tb\\c"), None],
                vec![s("2"), s("x\ny"), s("AA")],
                vec![s("3"), s(""), s("z")],
            ]
        );
        // The end marker stops the data; CRLF line ends are accepted.
        let r = records(&o, &["1\r\n\\.\r\nignored\n"]).unwrap();
        assert_eq!(r, vec![vec![s("1")]]);
    }

    #[test]
    fn csv_quotes_embedded_newlines_and_null_rules() {
        let o = opts(CopyFormat::Csv);
        let r = records(
            &o,
            &[
                "1,\"a,b\",\"say \"\"hi\"\"\"\n2,,\"\"\n3,\"multi",
                "\nline\",x",
            ],
        )
        .unwrap();
        assert_eq!(
            r,
            vec![
                vec![s("1"), s("a,b"), s("say \"hi\"")],
                vec![s("2"), None, s("")],
                vec![s("3"), s("multi\nline"), s("x")],
            ]
        );
        assert!(records(&o, &["1,\"open\n"]).is_err());
    }

    #[test]
    fn output_round_trips() {
        for format in [CopyFormat::Text, CopyFormat::Csv] {
            let o = opts(format);
            let types = [DataType::new(types::TypeId::Text); 3];
            let rows = [
                vec![
                    Value::Text("a\tb\\c\nd".into()),
                    Value::Null,
                    Value::Text("".into()),
                ],
                vec![
                    Value::Text("x,\"y\"\r".into()),
                    Value::Text("\\.".into()),
                    Value::Text("\\N".into()),
                ],
            ];
            let (mut out, mut scratch) = (Vec::new(), String::new());
            for r in &rows {
                format_row(
                    r,
                    &types,
                    &o,
                    &[false; 3],
                    &types::IoSettings::UTC,
                    &mut scratch,
                    &mut out,
                );
            }
            let back = records(&o, &[std::str::from_utf8(&out).unwrap()]).unwrap();
            let want: Vec<RawRecord> = rows
                .iter()
                .map(|r| {
                    r.iter()
                        .map(|v| match v {
                            Value::Text(t) => Some(t.clone()),
                            _ => None,
                        })
                        .collect()
                })
                .collect();
            assert_eq!(back, want, "{format:?}: {}", String::from_utf8_lossy(&out));
        }
    }
}
