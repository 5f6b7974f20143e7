//! The JSON lexer and recursive-descent parser, with PostgreSQL's grammar
//! (RFC 8259, any value at the top level) and its error messages: 22P02
//! "invalid input syntax for type json" with the same DETAIL and CONTEXT
//! lines as PostgreSQL's json_errdetail and report_json_context.
//!
//! One parser serves three uses through `Sink`: validating `json` input
//! (nothing built), building `jsonb` trees, and building span trees over a
//! `json` text for its operators (which return sub-texts verbatim).

use common::{stack_depth, PgError, PgResult, SqlState};

use super::Jsonb;
use crate::numeric::Numeric;

/// What the parser builds from the values it recognises.
pub trait Sink {
    type Out;
    /// Whether strings are decoded (jsonb and spans) or only checked (json).
    const DECODE: bool;
    fn null(&mut self, span: (usize, usize)) -> Self::Out;
    fn boolean(&mut self, b: bool, span: (usize, usize)) -> Self::Out;
    fn number(&mut self, text: &str, span: (usize, usize)) -> PgResult<Self::Out>;
    fn string(&mut self, s: String, span: (usize, usize)) -> Self::Out;
    fn array(&mut self, items: Vec<Self::Out>, span: (usize, usize)) -> Self::Out;
    fn object(&mut self, pairs: Vec<(String, Self::Out)>, span: (usize, usize)) -> Self::Out;
}

/// Builds nothing: `json` input validation.
pub struct Validate;

impl Sink for Validate {
    type Out = ();
    const DECODE: bool = false;
    fn null(&mut self, _: (usize, usize)) {}
    fn boolean(&mut self, _: bool, _: (usize, usize)) {}
    fn number(&mut self, _: &str, _: (usize, usize)) -> PgResult<()> {
        Ok(())
    }
    fn string(&mut self, _: String, _: (usize, usize)) {}
    fn array(&mut self, _: Vec<()>, _: (usize, usize)) {}
    fn object(&mut self, _: Vec<(String, ())>, _: (usize, usize)) {}
}

/// Builds a normalised jsonb tree.
pub struct BuildJsonb;

impl Sink for BuildJsonb {
    type Out = Jsonb;
    const DECODE: bool = true;
    fn null(&mut self, _: (usize, usize)) -> Jsonb {
        Jsonb::Null
    }
    fn boolean(&mut self, b: bool, _: (usize, usize)) -> Jsonb {
        Jsonb::Bool(b)
    }
    fn number(&mut self, text: &str, _: (usize, usize)) -> PgResult<Jsonb> {
        Ok(Jsonb::Number(Numeric::parse(text)?))
    }
    fn string(&mut self, s: String, _: (usize, usize)) -> Jsonb {
        Jsonb::String(s)
    }
    fn array(&mut self, items: Vec<Jsonb>, _: (usize, usize)) -> Jsonb {
        Jsonb::Array(items)
    }
    fn object(&mut self, pairs: Vec<(String, Jsonb)>, _: (usize, usize)) -> Jsonb {
        Jsonb::object_from_pairs(pairs)
    }
}

/// A `json` value located in its text: operators on `json` return the
/// text of a sub-value exactly as written.
#[derive(Debug, Clone)]
pub enum JsonNode {
    /// A scalar: its span, and for strings the decoded text.
    Scalar {
        span: (usize, usize),
        string: Option<String>,
        kind: &'static str,
    },
    Array {
        span: (usize, usize),
        items: Vec<JsonNode>,
    },
    /// Pairs in input order, duplicates kept (json keeps its text as written).
    Object {
        span: (usize, usize),
        pairs: Vec<(String, JsonNode)>,
    },
}

impl JsonNode {
    pub fn span(&self) -> (usize, usize) {
        match self {
            JsonNode::Scalar { span, .. }
            | JsonNode::Array { span, .. }
            | JsonNode::Object { span, .. } => *span,
        }
    }

    /// `json_typeof`.
    pub fn type_name(&self) -> &'static str {
        match self {
            JsonNode::Scalar { kind, .. } => kind,
            JsonNode::Array { .. } => "array",
            JsonNode::Object { .. } => "object",
        }
    }
}

/// Builds span trees over a json text.
pub struct BuildSpans;

impl Sink for BuildSpans {
    type Out = JsonNode;
    const DECODE: bool = true;
    fn null(&mut self, span: (usize, usize)) -> JsonNode {
        JsonNode::Scalar {
            span,
            string: None,
            kind: "null",
        }
    }
    fn boolean(&mut self, _: bool, span: (usize, usize)) -> JsonNode {
        JsonNode::Scalar {
            span,
            string: None,
            kind: "boolean",
        }
    }
    fn number(&mut self, _: &str, span: (usize, usize)) -> PgResult<JsonNode> {
        Ok(JsonNode::Scalar {
            span,
            string: None,
            kind: "number",
        })
    }
    fn string(&mut self, s: String, span: (usize, usize)) -> JsonNode {
        JsonNode::Scalar {
            span,
            string: Some(s),
            kind: "string",
        }
    }
    fn array(&mut self, items: Vec<JsonNode>, span: (usize, usize)) -> JsonNode {
        JsonNode::Array { span, items }
    }
    fn object(&mut self, pairs: Vec<(String, JsonNode)>, span: (usize, usize)) -> JsonNode {
        JsonNode::Object { span, pairs }
    }
}

/// Checks `json` input.
pub fn validate_json(input: &str) -> PgResult<()> {
    parse_with(input, &mut Validate, "json")
}

/// Parses `jsonb` input.
pub fn parse_jsonb(input: &str) -> PgResult<Jsonb> {
    parse_with(input, &mut BuildJsonb, "json")
}

/// Parses a `json` text into spans (the text was validated on input).
pub fn parse_json_spans(input: &str) -> PgResult<JsonNode> {
    parse_with(input, &mut BuildSpans, "json")
}

pub fn parse_with<S: Sink>(input: &str, sink: &mut S, type_name: &str) -> PgResult<S::Out> {
    let mut p = Parser {
        input: input.as_bytes(),
        text: input,
        pos: 0,
        token_start: 0,
        string: None,
        sink,
        type_name,
    };
    let v = p.value()?;
    p.skip_ws();
    if p.pos < p.input.len() {
        let tok = p.lex()?;
        return Err(p.error(Detail::Found("Expected end of input", tok)));
    }
    Ok(v)
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Token {
    LBrace,
    RBrace,
    LBracket,
    RBracket,
    Comma,
    Colon,
    String,
    Number,
    True,
    False,
    Null,
    End,
}

enum Detail {
    /// `<expected>, but found "<token>".` (or the end-of-input detail).
    Found(&'static str, Token),
    InvalidToken,
    Other(String),
}

struct Parser<'a, 's, S: Sink> {
    input: &'a [u8],
    text: &'a str,
    pos: usize,
    token_start: usize,
    /// The decoded contents of the string token just lexed.
    string: Option<String>,
    sink: &'s mut S,
    type_name: &'a str,
}

/// PostgreSQL's JSON_ALPHANUMERIC_CHAR: what a bare word is made of.
fn is_word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'$' || b >= 0x80
}

impl<S: Sink> Parser<'_, '_, S> {
    fn skip_ws(&mut self) {
        while self.pos < self.input.len()
            && matches!(self.input[self.pos], b' ' | b'\t' | b'\n' | b'\r')
        {
            self.pos += 1;
        }
    }

    /// The error for the token that ends at `self.pos`.
    fn error(&self, detail: Detail) -> PgError {
        let token = &self.text[self.token_start.min(self.pos)..self.pos];
        let (code, message, detail) = match detail {
            Detail::Found(_, Token::End) => (
                SqlState::INVALID_TEXT_REPRESENTATION,
                format!("invalid input syntax for type {}", self.type_name),
                "The input string ended unexpectedly.".to_string(),
            ),
            Detail::Found(expected, _) => (
                SqlState::INVALID_TEXT_REPRESENTATION,
                format!("invalid input syntax for type {}", self.type_name),
                format!("{expected}, but found \"{token}\"."),
            ),
            Detail::InvalidToken => (
                SqlState::INVALID_TEXT_REPRESENTATION,
                format!("invalid input syntax for type {}", self.type_name),
                format!("Token \"{token}\" is invalid."),
            ),
            Detail::Other(d) if d.starts_with("\\u0000") => (
                SqlState("22P05"),
                "unsupported Unicode escape sequence".to_string(),
                d,
            ),
            Detail::Other(d) => (
                SqlState::INVALID_TEXT_REPRESENTATION,
                format!("invalid input syntax for type {}", self.type_name),
                d,
            ),
        };
        PgError::new(code, message)
            .with_detail(detail)
            .with_context(self.context())
    }

    /// report_json_context: the current line up to the error, at most 50
    /// bytes of it, with "..." where it was cut.
    fn context(&self) -> String {
        let end = self.pos.min(self.input.len());
        let line_start = self.input[..end]
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |i| i + 1);
        let line = 1 + self.input[..end].iter().filter(|&&b| b == b'\n').count();
        let mut start = line_start;
        let mut prefix = "";
        if end - start >= 50 {
            start = end - 50;
            while !self.text.is_char_boundary(start) {
                start += 1;
            }
            prefix = "...";
        }
        let suffix = if end < self.input.len() && !matches!(self.input[end], b'\n' | b'\r') {
            "..."
        } else {
            ""
        };
        format!(
            "JSON data, line {line}: {prefix}{}{suffix}",
            &self.text[start..end]
        )
    }

    /// Lexes the next token (strings and numbers are checked here; their
    /// contents are read again by `value`).
    fn lex(&mut self) -> PgResult<Token> {
        self.skip_ws();
        self.token_start = self.pos;
        let Some(&c) = self.input.get(self.pos) else {
            return Ok(Token::End);
        };
        let single = match c {
            b'{' => Some(Token::LBrace),
            b'}' => Some(Token::RBrace),
            b'[' => Some(Token::LBracket),
            b']' => Some(Token::RBracket),
            b',' => Some(Token::Comma),
            b':' => Some(Token::Colon),
            _ => None,
        };
        if let Some(t) = single {
            self.pos += 1;
            return Ok(t);
        }
        match c {
            b'"' => {
                self.string = self.scan_string(S::DECODE)?;
                Ok(Token::String)
            }
            b'-' | b'0'..=b'9' => {
                self.scan_number()?;
                Ok(Token::Number)
            }
            _ => {
                let mut p = self.pos;
                while p < self.input.len() && is_word_byte(self.input[p]) {
                    p += 1;
                }
                if p == self.pos {
                    // One character that cannot start anything.
                    let len = self.text[self.pos..]
                        .chars()
                        .next()
                        .map_or(1, char::len_utf8);
                    self.pos += len;
                    return Err(self.error(Detail::InvalidToken));
                }
                self.pos = p;
                match &self.input[self.token_start..p] {
                    b"true" => Ok(Token::True),
                    b"false" => Ok(Token::False),
                    b"null" => Ok(Token::Null),
                    _ => Err(self.error(Detail::InvalidToken)),
                }
            }
        }
    }

    /// A number per RFC 8259; trailing word characters make the whole word
    /// an invalid token, as in PostgreSQL.
    fn scan_number(&mut self) -> PgResult<()> {
        let b = self.input;
        let mut p = self.pos;
        let mut ok = true;
        if b[p] == b'-' {
            p += 1;
        }
        let digits = |p: &mut usize| {
            let s = *p;
            while *p < b.len() && b[*p].is_ascii_digit() {
                *p += 1;
            }
            *p > s
        };
        if p < b.len() && b[p] == b'0' {
            p += 1;
        } else if !digits(&mut p) {
            ok = false;
        }
        if ok && p < b.len() && b[p] == b'.' {
            p += 1;
            ok = digits(&mut p);
        }
        if ok && p < b.len() && (b[p] == b'e' || b[p] == b'E') {
            p += 1;
            if p < b.len() && (b[p] == b'+' || b[p] == b'-') {
                p += 1;
            }
            ok = digits(&mut p);
        }
        while p < b.len() && is_word_byte(b[p]) {
            p += 1;
            ok = false;
        }
        self.pos = p;
        if ok {
            Ok(())
        } else {
            Err(self.error(Detail::InvalidToken))
        }
    }

    /// Scans the string token at `pos` (its opening quote), checking escapes;
    /// with `decode`, returns its contents.
    fn scan_string(&mut self, decode: bool) -> PgResult<Option<String>> {
        let b = self.input;
        let mut p = self.pos + 1;
        let mut out = decode.then(String::new);
        let mut run_start = p;
        let mut hi_surrogate: Option<u32> = None;
        loop {
            if p >= b.len() {
                self.pos = p;
                return Err(self.error(Detail::InvalidToken));
            }
            let c = b[p];
            if c == b'"' {
                break;
            }
            if c < 0x20 {
                self.pos = p + 1;
                return Err(self.error(Detail::Other(format!(
                    "Character with value 0x{c:02x} must be escaped."
                ))));
            }
            if c != b'\\' {
                if hi_surrogate.is_some() {
                    self.pos = p;
                    return Err(self.low_surrogate_error());
                }
                p += 1;
                continue;
            }
            if let Some(o) = out.as_mut() {
                o.push_str(&self.text[run_start..p]);
            }
            p += 1;
            if p >= b.len() {
                self.pos = p;
                return Err(self.error(Detail::InvalidToken));
            }
            let e = b[p];
            if e == b'u' {
                let hex = b.get(p + 1..p + 5);
                let code = hex
                    .filter(|h| h.iter().all(u8::is_ascii_hexdigit))
                    .and_then(|h| u32::from_str_radix(std::str::from_utf8(h).ok()?, 16).ok());
                let Some(code) = code else {
                    // PostgreSQL reports the token up to the bad digit.
                    let mut q = p + 1;
                    while q < b.len() && q < p + 5 && b[q].is_ascii_hexdigit() {
                        q += 1;
                    }
                    self.pos = (q + 1).min(b.len());
                    return Err(self.error(Detail::Other(
                        "\"\\u\" must be followed by four hexadecimal digits.".into(),
                    )));
                };
                p += 5;
                if !decode {
                    // json keeps its escapes as written: only their form is checked.
                    run_start = p;
                    continue;
                }
                let ch = if (0xd800..=0xdbff).contains(&code) {
                    if hi_surrogate.is_some() {
                        self.pos = p;
                        return Err(self.error(Detail::Other(
                            "Unicode high surrogate must not follow a high surrogate.".into(),
                        )));
                    }
                    hi_surrogate = Some(code);
                    run_start = p;
                    continue;
                } else if (0xdc00..=0xdfff).contains(&code) {
                    let Some(hi) = hi_surrogate.take() else {
                        self.pos = p;
                        return Err(self.low_surrogate_error());
                    };
                    0x10000 + ((hi - 0xd800) << 10) + (code - 0xdc00)
                } else {
                    if hi_surrogate.is_some() {
                        self.pos = p;
                        return Err(self.low_surrogate_error());
                    }
                    code
                };
                if let Some(o) = out.as_mut() {
                    if ch == 0 {
                        self.pos = p;
                        return Err(self
                            .error(Detail::Other("\\u0000 cannot be converted to text.".into())));
                    }
                    o.push(char::from_u32(ch).unwrap_or('\u{fffd}'));
                }
                run_start = p;
                continue;
            }
            if hi_surrogate.is_some() {
                self.pos = p + 1;
                return Err(self.low_surrogate_error());
            }
            let decoded = match e {
                b'"' => '"',
                b'\\' => '\\',
                b'/' => '/',
                b'b' => '\u{8}',
                b'f' => '\u{c}',
                b'n' => '\n',
                b'r' => '\r',
                b't' => '\t',
                _ => {
                    let len = self.text[p..].chars().next().map_or(1, char::len_utf8);
                    self.pos = p + len;
                    let token = self.text[p..p + len].to_string();
                    return Err(self.error(Detail::Other(format!(
                        "Escape sequence \"\\{token}\" is invalid."
                    ))));
                }
            };
            if let Some(o) = out.as_mut() {
                o.push(decoded);
            }
            p += 1;
            run_start = p;
        }
        if hi_surrogate.is_some() {
            self.pos = p;
            return Err(self.low_surrogate_error());
        }
        if let Some(o) = out.as_mut() {
            o.push_str(&self.text[run_start..p]);
        }
        self.pos = p + 1;
        Ok(out)
    }

    fn low_surrogate_error(&self) -> PgError {
        self.error(Detail::Other(
            "Unicode low surrogate must follow a high surrogate.".into(),
        ))
    }

    /// The string token just lexed, decoded when the sink wants it.
    fn string_contents(&mut self) -> PgResult<String> {
        Ok(self.string.take().unwrap_or_default())
    }

    fn value(&mut self) -> PgResult<S::Out> {
        let tok = self.lex()?;
        self.value_from(tok)
    }

    fn value_from(&mut self, tok: Token) -> PgResult<S::Out> {
        let span = (self.token_start, self.pos);
        match tok {
            Token::Null => Ok(self.sink.null(span)),
            Token::True => Ok(self.sink.boolean(true, span)),
            Token::False => Ok(self.sink.boolean(false, span)),
            Token::Number => {
                let text = &self.text[span.0..span.1];
                self.sink.number(text, span)
            }
            Token::String => {
                let s = self.string_contents()?;
                Ok(self.sink.string(s, span))
            }
            Token::LBracket => {
                let _depth = stack_depth::enter()?;
                let start = self.token_start;
                let mut items = Vec::new();
                let mut tok = self.lex()?;
                if tok != Token::RBracket {
                    loop {
                        if !matches!(
                            tok,
                            Token::LBrace
                                | Token::LBracket
                                | Token::String
                                | Token::Number
                                | Token::True
                                | Token::False
                                | Token::Null
                        ) {
                            return Err(self.error(Detail::Found("Expected JSON value", tok)));
                        }
                        items.push(self.value_from(tok)?);
                        match self.lex()? {
                            Token::Comma => tok = self.lex()?,
                            Token::RBracket => break,
                            t => {
                                return Err(self.error(Detail::Found("Expected \",\" or \"]\"", t)))
                            }
                        }
                    }
                }
                Ok(self.sink.array(items, (start, self.pos)))
            }
            Token::LBrace => {
                let _depth = stack_depth::enter()?;
                let start = self.token_start;
                let mut pairs = Vec::new();
                let mut tok = self.lex()?;
                let mut first = true;
                if tok != Token::RBrace {
                    loop {
                        if tok != Token::String {
                            let expected = if first {
                                "Expected string or \"}\""
                            } else {
                                "Expected string"
                            };
                            return Err(self.error(Detail::Found(expected, tok)));
                        }
                        first = false;
                        let key = self.string_contents()?;
                        let colon = self.lex()?;
                        if colon != Token::Colon {
                            return Err(self.error(Detail::Found("Expected \":\"", colon)));
                        }
                        let vt = self.lex()?;
                        if matches!(
                            vt,
                            Token::RBrace
                                | Token::RBracket
                                | Token::Comma
                                | Token::Colon
                                | Token::End
                        ) {
                            return Err(self.error(Detail::Found("Expected JSON value", vt)));
                        }
                        let v = self.value_from(vt)?;
                        pairs.push((key, v));
                        match self.lex()? {
                            Token::Comma => tok = self.lex()?,
                            Token::RBrace => break,
                            t => {
                                return Err(self.error(Detail::Found("Expected \",\" or \"}\"", t)))
                            }
                        }
                    }
                }
                Ok(self.sink.object(pairs, (start, self.pos)))
            }
            t => Err(self.error(Detail::Found("Expected JSON value", t))),
        }
    }
}
