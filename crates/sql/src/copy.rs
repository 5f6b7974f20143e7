//! The COPY command's grammar, as PostgreSQL 15 accepts it: the
//! parenthesised option list and the pre-9.0 keyword syntax, both checked
//! the way PostgreSQL's ProcessCopyOptions checks them.
//!
//! ```text
//! COPY table [(col, ...)] FROM {'file' | PROGRAM 'cmd' | STDIN} [[WITH] (option, ...)]
//! COPY {table [(col, ...)] | (query)} TO {'file' | PROGRAM 'cmd' | STDOUT} [[WITH] (option, ...)]
//! ```

use common::{PgError, PgResult, SqlState};

use crate::parse::{parse_sql, ParsedStatement, StatementText};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CopyFormat {
    Text,
    Csv,
    Binary,
}

/// HEADER: none, a header line (skipped on input), or one whose names must
/// match the columns (input only).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CopyHeader {
    None,
    Present,
    Match,
}

/// FORCE_QUOTE: which output values are always quoted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ForceQuote {
    None,
    All,
    Columns(Vec<String>),
}

/// COPY's options after defaults and checks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CopyOptions {
    pub format: CopyFormat,
    pub freeze: bool,
    pub delimiter: u8,
    /// The string that stands for NULL.
    pub null: String,
    pub header: CopyHeader,
    pub quote: u8,
    pub escape: u8,
    pub force_quote: ForceQuote,
    pub force_not_null: Vec<String>,
    pub force_null: Vec<String>,
    /// ENCODING: the data's encoding, when not the client's (or, for a
    /// file, the server's).
    pub encoding: Option<types::encoding::PgEncoding>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CopyEndpoint {
    /// STDIN or STDOUT: the client, through CopyData messages.
    Client,
    /// A file the server reads or writes.
    File(String),
    Program(String),
}

#[derive(Debug, Clone)]
pub enum CopySource {
    Table {
        name: Vec<String>,
        columns: Vec<String>,
    },
    /// `COPY (query) TO ...`.
    Query(Box<ParsedStatement>),
}

#[derive(Debug, Clone)]
pub struct CopyStatement {
    pub source: CopySource,
    /// FROM (load into the table) or TO (unload).
    pub from: bool,
    pub endpoint: CopyEndpoint,
    pub options: CopyOptions,
}

/// A token of the COPY grammar.
#[derive(Debug, Clone, PartialEq)]
enum Tok {
    /// A keyword or identifier, lowercased unless double-quoted.
    Word(String, bool),
    /// A single-quoted string, or an E'' one with its escapes undone.
    Str(String),
    Punct(char),
    /// `( query )`: the text between matching parentheses after COPY, and its
    /// byte offset in the statement.
    Paren(String, usize),
}

fn syntax_error(near: &str) -> PgError {
    if near.is_empty() {
        PgError::syntax("syntax error at end of input")
    } else {
        PgError::syntax(format!("syntax error at or near \"{near}\""))
    }
}

fn tokenize(text: &str, query_paren_at: Option<usize>) -> PgResult<Vec<Tok>> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
        } else if c == b'-' && b.get(i + 1) == Some(&b'-') {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if c == b'(' && Some(i) == query_paren_at {
            let start = i + 1;
            let mut depth = 1;
            let mut j = start;
            let mut quote: Option<u8> = None;
            while j < b.len() && depth > 0 {
                match (quote, b[j]) {
                    (Some(q), x) if x == q => quote = None,
                    (Some(_), _) => {}
                    (None, b'\'' | b'"') => quote = Some(b[j]),
                    (None, b'(') => depth += 1,
                    (None, b')') => depth -= 1,
                    _ => {}
                }
                j += 1;
            }
            if depth != 0 {
                return Err(syntax_error(""));
            }
            out.push(Tok::Paren(text[start..j - 1].to_string(), start));
            i = j;
        } else if matches!(c, b'e' | b'E') && b.get(i + 1) == Some(&b'\'') {
            let (v, end) = escape_string(text, i + 2)?;
            out.push(Tok::Str(v));
            i = end;
        } else if c == b'\'' || c == b'"' {
            let mut v = String::new();
            let mut j = i + 1;
            loop {
                match text[j..].find(c as char) {
                    Some(k) => {
                        v.push_str(&text[j..j + k]);
                        j += k + 1;
                        if b.get(j) == Some(&c) {
                            v.push(c as char);
                            j += 1;
                        } else {
                            break;
                        }
                    }
                    None => {
                        return Err(PgError::syntax(if c == b'\'' {
                            "unterminated quoted string"
                        } else {
                            "unterminated quoted identifier"
                        }))
                    }
                }
            }
            out.push(if c == b'\'' {
                Tok::Str(v)
            } else {
                Tok::Word(v, true)
            });
            i = j;
        } else if c.is_ascii_alphanumeric() || c == b'_' || c >= 0x80 {
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] >= 0x80) {
                i += 1;
            }
            out.push(Tok::Word(text[start..i].to_lowercase(), false));
        } else {
            let ch = text[i..].chars().next().unwrap_or(' ');
            out.push(Tok::Punct(ch));
            i += ch.len_utf8();
        }
    }
    Ok(out)
}

/// The body of an E'...' string starting at `start` (after the quote):
/// backslash escapes (`\\`, `\'`, `\n`, `\t`, `\r`, `\b`, `\f`, octal `\ooo`,
/// hex `\xhh`; any other character stands for itself) and doubled quotes.
/// Returns the value and the offset after the closing quote.
fn escape_string(text: &str, start: usize) -> PgResult<(String, usize)> {
    let mut v = String::new();
    let mut chars = text[start..].char_indices().peekable();
    while let Some((k, ch)) = chars.next() {
        match ch {
            '\'' if chars.peek().map(|&(_, n)| n) == Some('\'') => {
                chars.next();
                v.push('\'');
            }
            '\'' => return Ok((v, start + k + 1)),
            '\\' => {
                let Some((_, e)) = chars.next() else { break };
                let digits = |chars: &mut std::iter::Peekable<std::str::CharIndices<'_>>,
                              first: Option<char>,
                              radix: u32,
                              max: usize| {
                    let mut n = first.and_then(|d| d.to_digit(radix)).unwrap_or(0);
                    let mut count = usize::from(first.is_some());
                    while count < max {
                        match chars.peek().and_then(|&(_, d)| d.to_digit(radix)) {
                            Some(d) => {
                                n = n * radix + d;
                                chars.next();
                                count += 1;
                            }
                            None => break,
                        }
                    }
                    (n, count)
                };
                match e {
                    'b' => v.push('\u{8}'),
                    'f' => v.push('\u{c}'),
                    'n' => v.push('\n'),
                    'r' => v.push('\r'),
                    't' => v.push('\t'),
                    '0'..='7' => {
                        let (n, _) = digits(&mut chars, Some(e), 8, 3);
                        v.push(char::from_u32(n & 0xff).unwrap_or('\0'));
                    }
                    'x' => match digits(&mut chars, None, 16, 2) {
                        (n, 1..) => v.push(char::from_u32(n).unwrap_or('\0')),
                        _ => v.push('x'),
                    },
                    other => v.push(other),
                }
            }
            other => v.push(other),
        }
    }
    Err(PgError::syntax("unterminated quoted string"))
}

struct Cursor {
    toks: Vec<Tok>,
    pos: usize,
}

impl Cursor {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos)
    }

    fn next(&mut self) -> Option<Tok> {
        let t = self.toks.get(self.pos).cloned();
        self.pos += 1;
        t
    }

    /// Whether the next token is the unquoted keyword `kw`; consumes it if so.
    fn eat(&mut self, kw: &str) -> bool {
        if matches!(self.peek(), Some(Tok::Word(w, false)) if w == kw) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn eat_punct(&mut self, p: char) -> bool {
        if self.peek() == Some(&Tok::Punct(p)) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn error_here(&self) -> PgError {
        syntax_error(&match self.peek() {
            None => String::new(),
            Some(Tok::Word(w, _)) => w.clone(),
            Some(Tok::Str(s)) => format!("'{s}'"),
            Some(Tok::Punct(p)) => p.to_string(),
            Some(Tok::Paren(..)) => "(".into(),
        })
    }

    fn expect_punct(&mut self, p: char) -> PgResult<()> {
        if self.eat_punct(p) {
            Ok(())
        } else {
            Err(self.error_here())
        }
    }

    fn word(&mut self) -> PgResult<String> {
        match self.peek() {
            Some(Tok::Word(w, _)) => {
                let w = w.clone();
                self.pos += 1;
                Ok(w)
            }
            _ => Err(self.error_here()),
        }
    }

    fn string(&mut self) -> PgResult<String> {
        match self.peek() {
            Some(Tok::Str(s)) => {
                let s = s.clone();
                self.pos += 1;
                Ok(s)
            }
            _ => Err(self.error_here()),
        }
    }

    /// `( name, ... )`
    fn name_list(&mut self) -> PgResult<Vec<String>> {
        self.expect_punct('(')?;
        let mut names = vec![self.word()?];
        while self.eat_punct(',') {
            names.push(self.word()?);
        }
        self.expect_punct(')')?;
        Ok(names)
    }
}

/// Whether a statement is a COPY command.
pub fn is_copy(text: &str) -> bool {
    let t = text.trim_start().as_bytes();
    t.len() >= 4
        && t[..4].eq_ignore_ascii_case(b"copy")
        && !t
            .get(4)
            .is_some_and(|&c| c.is_ascii_alphanumeric() || c == b'_' || c >= 0x80)
}

/// Parses a COPY statement (`is_copy` said it is one).
pub fn parse_copy(full: &str, stmt: &StatementText<'_>) -> PgResult<CopyStatement> {
    let text = stmt.text;
    let lead = text.len() - text.trim_start().len();
    let after_copy = lead + 4;
    let paren_at = text[after_copy..]
        .find(|c: char| !c.is_whitespace())
        .map(|i| after_copy + i)
        .filter(|&i| text.as_bytes()[i] == b'(');
    let mut cur = Cursor {
        toks: tokenize(text, paren_at)?,
        pos: 0,
    };
    cur.eat("copy");
    let mut raw = RawOptions::default();
    // COPY BINARY t ...: the oldest syntax.
    if cur.eat("binary") {
        raw.set("format", RawValue::Word("binary".into()))?;
    }
    let source = match cur.next() {
        Some(Tok::Paren(query, at)) => {
            let inner = StatementText {
                text: &text[at..at + query.len()],
                offset: stmt.offset + at,
            };
            let parsed = parse_sql(full, &inner)?;
            CopySource::Query(Box::new(parsed))
        }
        Some(Tok::Word(first, _)) => {
            let mut name = vec![first];
            while cur.eat_punct('.') {
                name.push(cur.word()?);
            }
            let columns = if cur.peek() == Some(&Tok::Punct('(')) {
                cur.name_list()?
            } else {
                Vec::new()
            };
            CopySource::Table { name, columns }
        }
        _ => {
            cur.pos -= 1;
            return Err(cur.error_here());
        }
    };
    let from = if cur.eat("from") {
        true
    } else if cur.eat("to") {
        false
    } else {
        return Err(cur.error_here());
    };
    if from && matches!(source, CopySource::Query(_)) {
        return Err(PgError::syntax("syntax error at or near \"from\"")
            .with_hint("COPY (query) FROM is not supported; copy into a table instead."));
    }
    let endpoint = if cur.eat("stdin") || cur.eat("stdout") {
        CopyEndpoint::Client
    } else if cur.eat("program") {
        CopyEndpoint::Program(cur.string()?)
    } else {
        CopyEndpoint::File(cur.string()?)
    };
    cur.eat("with");
    if cur.peek() == Some(&Tok::Punct('(')) {
        parse_option_list(&mut cur, &mut raw)?;
    } else {
        parse_legacy_options(&mut cur, &mut raw)?;
    }
    if cur.peek().is_some() {
        return Err(cur.error_here());
    }
    let options = raw.resolve(from)?;
    Ok(CopyStatement {
        source,
        from,
        endpoint,
        options,
    })
}

/// An option's value as written.
#[derive(Debug, Clone)]
enum RawValue {
    None,
    Word(String),
    Str(String),
    Star,
    List(Vec<String>),
}

#[derive(Default)]
struct RawOptions {
    seen: Vec<(String, RawValue)>,
}

fn conflicting() -> PgError {
    PgError::new(SqlState::SYNTAX_ERROR, "conflicting or redundant options")
}

impl RawOptions {
    fn set(&mut self, name: &str, value: RawValue) -> PgResult<()> {
        if self.seen.iter().any(|(n, _)| n == name) {
            return Err(conflicting());
        }
        self.seen.push((name.to_string(), value));
        Ok(())
    }

    fn get(&self, name: &str) -> Option<&RawValue> {
        self.seen.iter().find(|(n, _)| n == name).map(|(_, v)| v)
    }

    fn resolve(&self, from: bool) -> PgResult<CopyOptions> {
        let invalid = |msg: String| PgError::new(SqlState::INVALID_PARAMETER_VALUE, msg);
        let feature = |msg: &str| PgError::new(SqlState::FEATURE_NOT_SUPPORTED, msg.to_string());
        let text_of = |name: &str, v: &RawValue| -> PgResult<String> {
            match v {
                RawValue::Word(w) | RawValue::Str(w) => Ok(w.clone()),
                _ => Err(PgError::new(
                    SqlState::SYNTAX_ERROR,
                    format!("{name} requires a parameter"),
                )),
            }
        };
        let bool_of = |name: &str, v: &RawValue| -> PgResult<bool> {
            match v {
                RawValue::None => Ok(true),
                RawValue::Word(w) | RawValue::Str(w) => match w.to_ascii_lowercase().as_str() {
                    "true" | "on" | "1" | "yes" | "t" | "y" => Ok(true),
                    "false" | "off" | "0" | "no" | "f" | "n" => Ok(false),
                    _ => Err(PgError::new(
                        SqlState::SYNTAX_ERROR,
                        format!("{name} requires a Boolean value"),
                    )),
                },
                _ => Err(PgError::new(
                    SqlState::SYNTAX_ERROR,
                    format!("{name} requires a Boolean value"),
                )),
            }
        };
        let format = match self.get("format") {
            None => CopyFormat::Text,
            Some(v) => match text_of("format", v)?.to_ascii_lowercase().as_str() {
                "text" => CopyFormat::Text,
                "csv" => CopyFormat::Csv,
                "binary" => CopyFormat::Binary,
                other => return Err(invalid(format!("COPY format \"{other}\" not recognized"))),
            },
        };
        if format == CopyFormat::Binary {
            return Err(feature("COPY in binary format is not supported yet"));
        }
        let csv = format == CopyFormat::Csv;
        let single_byte = |name: &str, what: &str| -> PgResult<Option<u8>> {
            match self.get(name) {
                None => Ok(None),
                Some(v) => {
                    let s = text_of(name, v)?;
                    if s.len() != 1 {
                        return Err(feature(&format!(
                            "COPY {what} must be a single one-byte character"
                        )));
                    }
                    Ok(Some(s.as_bytes()[0]))
                }
            }
        };
        let delimiter =
            single_byte("delimiter", "delimiter")?.unwrap_or(if csv { b',' } else { b'\t' });
        let null = match self.get("null") {
            Some(v) => text_of("null", v)?,
            None if csv => String::new(),
            None => "\\N".to_string(),
        };
        let header = match self.get("header") {
            None => CopyHeader::None,
            Some(RawValue::Word(w)) if w.eq_ignore_ascii_case("match") => {
                if !from {
                    return Err(feature("cannot use \"match\" with HEADER in COPY TO"));
                }
                CopyHeader::Match
            }
            Some(v) => {
                if bool_of("header", v)? {
                    CopyHeader::Present
                } else {
                    CopyHeader::None
                }
            }
        };
        let quote_opt = single_byte("quote", "quote")?;
        let escape_opt = single_byte("escape", "escape")?;
        let quote = quote_opt.unwrap_or(b'"');
        let escape = escape_opt.unwrap_or(quote);
        let force_quote = match self.get("force_quote") {
            None => ForceQuote::None,
            Some(RawValue::Star) => ForceQuote::All,
            Some(RawValue::List(cols)) => ForceQuote::Columns(cols.clone()),
            Some(_) => {
                return Err(PgError::new(
                    SqlState::SYNTAX_ERROR,
                    "argument to option \"force_quote\" must be a list of column names",
                ))
            }
        };
        let list = |name: &str| -> PgResult<Vec<String>> {
            match self.get(name) {
                None => Ok(Vec::new()),
                Some(RawValue::List(cols)) => Ok(cols.clone()),
                Some(_) => Err(PgError::new(
                    SqlState::SYNTAX_ERROR,
                    format!("argument to option \"{name}\" must be a list of column names"),
                )),
            }
        };
        let force_not_null = list("force_not_null")?;
        let force_null = list("force_null")?;
        let freeze = match self.get("freeze") {
            None => false,
            Some(v) => bool_of("freeze", v)?,
        };
        let encoding = match self.get("encoding") {
            None => None,
            Some(v) => {
                let e = text_of("encoding", v)?;
                Some(types::encoding::PgEncoding::from_name(&e).ok_or_else(|| {
                    invalid("argument to option \"encoding\" must be a valid encoding name".into())
                })?)
            }
        };
        // PostgreSQL's cross-checks, in its order.
        if !csv && quote_opt.is_some() {
            return Err(feature("COPY quote available only in CSV mode"));
        }
        if !csv && escape_opt.is_some() {
            return Err(feature("COPY escape available only in CSV mode"));
        }
        if !csv && force_quote != ForceQuote::None {
            return Err(feature("COPY force quote available only in CSV mode"));
        }
        if force_quote != ForceQuote::None && from {
            return Err(feature("COPY force quote only available using COPY TO"));
        }
        if !csv && !force_not_null.is_empty() {
            return Err(feature("COPY force not null available only in CSV mode"));
        }
        if !force_not_null.is_empty() && !from {
            return Err(feature(
                "COPY force not null only available using COPY FROM",
            ));
        }
        if !csv && !force_null.is_empty() {
            return Err(feature("COPY force null available only in CSV mode"));
        }
        if !force_null.is_empty() && !from {
            return Err(feature("COPY force null only available using COPY FROM"));
        }
        if delimiter == b'\n' || delimiter == b'\r' {
            return Err(invalid(
                "COPY delimiter cannot be newline or carriage return".into(),
            ));
        }
        if null.contains(['\n', '\r']) {
            return Err(invalid(
                "COPY null representation cannot use newline or carriage return".into(),
            ));
        }
        if !csv
            && b"\\.abcdefghijklmnopqrstuvwxyz0123456789".contains(&delimiter.to_ascii_lowercase())
        {
            return Err(invalid(format!(
                "COPY delimiter cannot be \"{}\"",
                delimiter as char
            )));
        }
        if csv && null.as_bytes().contains(&quote) {
            return Err(invalid(
                "CSV quote character must not appear in the NULL specification".into(),
            ));
        }
        if csv && delimiter == quote {
            return Err(invalid("COPY delimiter and quote must be different".into()));
        }
        if null.as_bytes().contains(&delimiter) {
            return Err(invalid(
                "COPY delimiter must not appear in the NULL specification".into(),
            ));
        }
        Ok(CopyOptions {
            format,
            freeze,
            delimiter,
            null,
            header,
            quote,
            escape,
            force_quote,
            force_not_null,
            force_null,
            encoding,
        })
    }
}

/// `( name [value], ... )`
fn parse_option_list(cur: &mut Cursor, raw: &mut RawOptions) -> PgResult<()> {
    cur.expect_punct('(')?;
    loop {
        let name = cur.word()?;
        let value = match cur.peek() {
            Some(Tok::Punct(',')) | Some(Tok::Punct(')')) => RawValue::None,
            Some(Tok::Punct('*')) => {
                cur.pos += 1;
                RawValue::Star
            }
            Some(Tok::Punct('(')) => RawValue::List(cur.name_list()?),
            Some(Tok::Str(s)) => {
                let s = s.clone();
                cur.pos += 1;
                RawValue::Str(s)
            }
            Some(Tok::Word(w, _)) => {
                let w = w.clone();
                cur.pos += 1;
                RawValue::Word(w)
            }
            _ => return Err(cur.error_here()),
        };
        match name.as_str() {
            "format" | "freeze" | "delimiter" | "null" | "header" | "quote" | "escape"
            | "force_quote" | "force_not_null" | "force_null" | "encoding" => {
                raw.set(&name, value)?
            }
            other => {
                return Err(PgError::new(
                    SqlState::SYNTAX_ERROR,
                    format!("option \"{other}\" not recognized"),
                ))
            }
        }
        if cur.eat_punct(')') {
            return Ok(());
        }
        cur.expect_punct(',')?;
    }
}

/// The pre-9.0 keyword options: BINARY, DELIMITER [AS] 'c', NULL [AS] 's',
/// CSV, HEADER, QUOTE [AS] 'q', ESCAPE [AS] 'e', FORCE QUOTE cols|*,
/// FORCE NOT NULL cols.
fn parse_legacy_options(cur: &mut Cursor, raw: &mut RawOptions) -> PgResult<()> {
    let names = |cur: &mut Cursor| -> PgResult<Vec<String>> {
        let mut v = vec![cur.word()?];
        while cur.eat_punct(',') {
            v.push(cur.word()?);
        }
        Ok(v)
    };
    while cur.peek().is_some() {
        if cur.eat("binary") {
            raw.set("format", RawValue::Word("binary".into()))?;
        } else if cur.eat("csv") {
            raw.set("format", RawValue::Word("csv".into()))?;
        } else if cur.eat("header") {
            raw.set("header", RawValue::None)?;
        } else if cur.eat("freeze") {
            raw.set("freeze", RawValue::None)?;
        } else if cur.eat("delimiter") {
            cur.eat("as");
            raw.set("delimiter", RawValue::Str(cur.string()?))?;
        } else if cur.eat("null") {
            cur.eat("as");
            raw.set("null", RawValue::Str(cur.string()?))?;
        } else if cur.eat("quote") {
            cur.eat("as");
            raw.set("quote", RawValue::Str(cur.string()?))?;
        } else if cur.eat("escape") {
            cur.eat("as");
            raw.set("escape", RawValue::Str(cur.string()?))?;
        } else if cur.eat("encoding") {
            raw.set("encoding", RawValue::Str(cur.string()?))?;
        } else if cur.eat("force") {
            if cur.eat("quote") {
                if cur.eat_punct('*') {
                    raw.set("force_quote", RawValue::Star)?;
                } else {
                    let cols = names(cur)?;
                    raw.set("force_quote", RawValue::List(cols))?;
                }
            } else if cur.eat("not") {
                if !cur.eat("null") {
                    return Err(cur.error_here());
                }
                let cols = names(cur)?;
                raw.set("force_not_null", RawValue::List(cols))?;
            } else {
                return Err(cur.error_here());
            }
        } else {
            return Err(cur.error_here());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(sql: &str) -> PgResult<CopyStatement> {
        parse_copy(
            sql,
            &StatementText {
                text: sql,
                offset: 0,
            },
        )
    }

    #[test]
    fn forms_pgbench_and_psql_send() {
        let c = parse("copy pgbench_accounts from stdin with (freeze on)").unwrap();
        assert!(c.from && c.options.freeze);
        assert_eq!(c.endpoint, CopyEndpoint::Client);
        assert_eq!(c.options.delimiter, b'\t');
        assert_eq!(c.options.null, "\\N");
        let c = parse("COPY public.t (a, \"B\") FROM STDIN").unwrap();
        match &c.source {
            CopySource::Table { name, columns } => {
                assert_eq!(name, &["public", "t"]);
                assert_eq!(columns, &["a", "B"]);
            }
            _ => panic!(),
        }
        let c = parse("copy (select 1, ')' ) to stdout with csv header force quote *").unwrap();
        assert!(matches!(c.source, CopySource::Query(_)));
        assert_eq!(c.options.format, CopyFormat::Csv);
        assert_eq!(c.options.header, CopyHeader::Present);
        assert_eq!(c.options.force_quote, ForceQuote::All);
        let c = parse("copy t to stdout (format csv, force_quote (a, b), delimiter ';')").unwrap();
        assert_eq!(c.options.delimiter, b';');
        assert_eq!(c.options.null, "");
        let c = parse("COPY onek FROM '/x/onek.data'").unwrap();
        assert_eq!(c.endpoint, CopyEndpoint::File("/x/onek.data".into()));
        let c = parse("copy t from stdin with delimiter as '|' null as 'NULL' csv quote as '''' ")
            .unwrap();
        assert_eq!((c.options.delimiter, c.options.quote), (b'|', b'\''));
        // E'' strings, as pg_regress's copy test writes the escape.
        let c = parse(r"copy t to stdout csv quote '''' escape E'\\' delimiter e'\t'").unwrap();
        assert_eq!((c.options.escape, c.options.delimiter), (b'\\', b'\t'));
        assert_eq!(
            escape_string(r"a\x41\101\'b''c'", 0).unwrap(),
            ("aAA'b'c".to_string(), 16)
        );
    }

    #[test]
    fn checks_as_postgresql() {
        let code = |sql: &str| parse(sql).unwrap_err().code;
        assert_eq!(
            code("copy t from stdin (quote '\"')"),
            SqlState::FEATURE_NOT_SUPPORTED
        );
        assert_eq!(
            code("copy t from stdin (delimiter ';;')"),
            SqlState::FEATURE_NOT_SUPPORTED
        );
        assert_eq!(
            code("copy t from stdin (format json)"),
            SqlState::INVALID_PARAMETER_VALUE
        );
        assert_eq!(code("copy t from stdin (bogus 1)"), SqlState::SYNTAX_ERROR);
        assert_eq!(
            code("copy t from stdin (format csv, format text)"),
            SqlState::SYNTAX_ERROR
        );
        assert_eq!(
            code("copy t from stdin (format csv, delimiter '\"')"),
            SqlState::INVALID_PARAMETER_VALUE
        );
        assert_eq!(
            code("copy t to stdout (format csv, force_not_null (a))"),
            SqlState::FEATURE_NOT_SUPPORTED
        );
        assert_eq!(code("copy (select 1) from stdin"), SqlState::SYNTAX_ERROR);
        assert_eq!(code("copy t from"), SqlState::SYNTAX_ERROR);
        assert!(is_copy("  COPY t to stdout"));
        assert!(!is_copy("copyx"));
        // Found by the fuzzer: a multi-byte character across byte 4.
        assert!(!is_copy("s\u{fffd}\u{fffd}t"));
        assert!(!is_copy("copé"));
    }
}
