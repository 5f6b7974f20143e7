//! Array text input and output (PostgreSQL's array_in and array_out).

use common::{PgError, PgResult, SqlState};

use super::{ArrayValue, Dim, MAX_DIMS};
use crate::io::{format_text, parse_text};
use crate::{DataType, IoSettings, TypeId, Value};

fn malformed(s: &str, detail: impl Into<String>) -> PgError {
    PgError::new(
        SqlState::INVALID_TEXT_REPRESENTATION,
        format!("malformed array literal: \"{s}\""),
    )
    .with_detail(detail.into())
}

/// array_isspace: the whitespace array_in skips.
fn is_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r' | '\x0b' | '\x0c')
}

/// One parsed brace level: either elements or sub-levels.
enum Node {
    Elements(Vec<Option<String>>),
    Levels(Vec<Node>),
}

struct Parser<'a> {
    input: &'a str,
    chars: Vec<char>,
    at: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.at).copied()
    }

    fn skip_space(&mut self) {
        while self.peek().is_some_and(is_space) {
            self.at += 1;
        }
    }

    fn err(&self, detail: impl Into<String>) -> PgError {
        malformed(self.input, detail)
    }

    fn unexpected(&self, c: Option<char>) -> PgError {
        match c {
            None => self.err("Unexpected end of input."),
            Some(c) => self.err(format!("Unexpected \"{c}\" character.")),
        }
    }

    /// A level: the cursor is on its `{`.
    fn level(&mut self, depth: usize) -> PgResult<Node> {
        if depth >= MAX_DIMS {
            return Err(super::too_many_dims(depth + 1));
        }
        self.at += 1;
        self.skip_space();
        match self.peek() {
            Some('}') if depth == 0 => {
                self.at += 1;
                return Ok(Node::Elements(Vec::new()));
            }
            Some('{') => {
                let mut levels = Vec::new();
                loop {
                    levels.push(self.level(depth + 1)?);
                    self.skip_space();
                    match self.peek() {
                        Some(',') => {
                            self.at += 1;
                            self.skip_space();
                            match self.peek() {
                                Some('{') => continue,
                                None => return Err(self.unexpected(None)),
                                Some(c @ ('}' | ',' | '"')) => return Err(self.unexpected(Some(c))),
                                Some(_) => return Err(self.err("Unexpected array element.")),
                            }
                        }
                        Some('}') => {
                            self.at += 1;
                            return Ok(Node::Levels(levels));
                        }
                        None => return Err(self.unexpected(None)),
                        Some('{') => return Err(self.unexpected(Some('{'))),
                        Some(_) => return Err(self.err("Unexpected array element.")),
                    }
                }
            }
            _ => {}
        }
        let mut items = Vec::new();
        loop {
            items.push(self.element()?);
            match self.peek() {
                Some(',') => self.at += 1,
                Some('}') => {
                    self.at += 1;
                    return Ok(Node::Elements(items));
                }
                other => return Err(self.unexpected(other)),
            }
        }
    }

    /// One element, leaving the cursor on the `,` or `}` after it.
    fn element(&mut self) -> PgResult<Option<String>> {
        self.skip_space();
        let mut item = String::new();
        let mut escaped_any = false;
        // Length of `item` up to its last character that is not
        // unquoted, unescaped trailing whitespace.
        let mut keep = 0;
        match self.peek() {
            None => return Err(self.unexpected(None)),
            Some(c @ (',' | '}' | '{')) => return Err(self.unexpected(Some(c))),
            _ => {}
        }
        if self.peek() == Some('"') {
            self.at += 1;
            loop {
                match self.peek() {
                    None => return Err(self.unexpected(None)),
                    Some('"') => {
                        self.at += 1;
                        break;
                    }
                    Some('\\') => {
                        self.at += 1;
                        match self.peek() {
                            None => return Err(self.unexpected(None)),
                            Some(c) => item.push(c),
                        }
                        self.at += 1;
                    }
                    Some(c) => {
                        item.push(c);
                        self.at += 1;
                    }
                }
            }
            self.skip_space();
            return match self.peek() {
                Some(',' | '}') => Ok(Some(item)),
                None => Err(self.unexpected(None)),
                Some(_) => Err(self.err("Unexpected array element.")),
            };
        }
        loop {
            match self.peek() {
                None => return Err(self.unexpected(None)),
                Some(',' | '}') => break,
                Some('{') => return Err(self.unexpected(Some('{'))),
                Some('"') => return Err(self.err("Unexpected array element.")),
                Some('\\') => {
                    self.at += 1;
                    match self.peek() {
                        None => return Err(self.unexpected(None)),
                        Some(c) => item.push(c),
                    }
                    self.at += 1;
                    escaped_any = true;
                    keep = item.len();
                }
                Some(c) => {
                    item.push(c);
                    self.at += 1;
                    if !is_space(c) {
                        keep = item.len();
                    }
                }
            }
        }
        item.truncate(keep);
        if !escaped_any && item.eq_ignore_ascii_case("NULL") {
            return Ok(None);
        }
        Ok(Some(item))
    }
}

/// Flattens the brace structure into dimension lengths and elements,
/// checking it is rectangular.
fn shape(
    node: Node,
    depth: usize,
    lens: &mut Vec<Option<i32>>,
    leaf_depth: &mut Option<usize>,
    out: &mut Vec<Option<String>>,
    input: &str,
) -> PgResult<()> {
    let mismatch = || {
        malformed(
            input,
            "Multidimensional arrays must have sub-arrays with matching dimensions.",
        )
    };
    let n = match &node {
        Node::Elements(v) => v.len(),
        Node::Levels(v) => v.len(),
    } as i32;
    if lens.len() <= depth {
        lens.resize(depth + 1, None);
    }
    match lens[depth] {
        None => lens[depth] = Some(n),
        Some(m) if m != n => return Err(mismatch()),
        Some(_) => {}
    }
    match node {
        Node::Elements(v) => {
            match *leaf_depth {
                None => *leaf_depth = Some(depth),
                Some(d) if d != depth => return Err(mismatch()),
                Some(_) => {}
            }
            out.extend(v);
        }
        Node::Levels(v) => {
            for child in v {
                shape(child, depth + 1, lens, leaf_depth, out, input)?;
            }
        }
    }
    Ok(())
}

/// The `[lo:hi]...` decoration, if any; the cursor ends after the `=`.
fn dimension_decoration(p: &mut Parser<'_>) -> PgResult<Vec<Dim>> {
    let mut dims = Vec::new();
    loop {
        p.skip_space();
        if p.peek() != Some('[') {
            break;
        }
        p.at += 1;
        if dims.len() >= MAX_DIMS {
            return Err(super::too_many_dims(dims.len() + 1));
        }
        let number = |p: &mut Parser<'_>| -> Option<i32> {
            let start = p.at;
            while p
                .peek()
                .is_some_and(|c| c.is_ascii_digit() || c == '-' || c == '+')
            {
                p.at += 1;
            }
            if p.at == start {
                return None;
            }
            let s: String = p.chars[start..p.at].iter().collect();
            // atoi: the leading sign and digits, 0 when none parse.
            Some(s.parse::<i64>().map_or(0, |v| v as i32))
        };
        let first = number(p)
            .ok_or_else(|| p.err("\"[\" must introduce explicitly-specified array dimensions."))?;
        let (lower, upper) = if p.peek() == Some(':') {
            p.at += 1;
            let upper = number(p).ok_or_else(|| p.err("Missing array dimension value."))?;
            (first, upper)
        } else {
            (1, first)
        };
        if p.peek() != Some(']') {
            return Err(p.err("Missing \"]\" after array dimensions."));
        }
        p.at += 1;
        if upper < lower {
            return Err(PgError::new(
                SqlState::ARRAY_SUBSCRIPT_ERROR,
                "upper bound cannot be less than lower bound",
            ));
        }
        dims.push(Dim {
            len: (upper as i64 - lower as i64 + 1) as i32,
            lower,
        });
    }
    if !dims.is_empty() {
        if p.peek() != Some('=') {
            return Err(p.err("Missing \"=\" after array dimensions."));
        }
        p.at += 1;
        p.skip_space();
        if p.peek() != Some('{') {
            return Err(p.err("Array contents must start with \"{\"."));
        }
    }
    Ok(dims)
}

/// The structure of an array literal: its dimensions and its elements'
/// texts (None for NULL), before element input.
pub fn parse_structure(s: &str) -> PgResult<(Vec<Dim>, Vec<Option<String>>)> {
    let mut p = Parser {
        input: s,
        chars: s.chars().collect(),
        at: 0,
    };
    let declared = dimension_decoration(&mut p)?;
    if p.peek() != Some('{') {
        return Err(p.err("Array value must start with \"{\" or dimension information."));
    }
    let root = p.level(0)?;
    p.skip_space();
    if p.peek().is_some() {
        return Err(p.err("Junk after closing right brace."));
    }
    let mut lens = Vec::new();
    let mut leaf_depth = None;
    let mut items = Vec::new();
    shape(root, 0, &mut lens, &mut leaf_depth, &mut items, s)?;
    let lens: Vec<i32> = match leaf_depth {
        Some(d) => lens[..=d].iter().map(|l| l.unwrap_or(0)).collect(),
        None => Vec::new(),
    };
    if items.is_empty() {
        if !declared.is_empty() {
            return Err(p.err("Specified array dimensions do not match array contents."));
        }
        return Ok((Vec::new(), items));
    }
    if declared.is_empty() {
        let dims = lens.iter().map(|&len| Dim { len, lower: 1 }).collect();
        return Ok((dims, items));
    }
    if declared.len() != lens.len() || declared.iter().zip(&lens).any(|(d, l)| d.len != *l) {
        return Err(p.err("Specified array dimensions do not match array contents."));
    }
    super::item_count(&declared)?;
    Ok((declared, items))
}

/// array_in: the array literal `s` with elements of type `elem` (its typmod
/// applies to each element).
pub fn parse(elem: DataType, s: &str, io: &IoSettings) -> PgResult<ArrayValue> {
    let (dims, texts) = parse_structure(s)?;
    let items = texts
        .into_iter()
        .map(|t| match t {
            Some(t) => parse_text(elem, &t, io),
            None => Ok(Value::Null),
        })
        .collect::<PgResult<Vec<_>>>()?;
    ArrayValue::with_dims(elem.id, dims, items)
}

/// Appends one element's text, quoted where array_in would misread it.
pub fn push_element(e: &str, out: &mut String) {
    let needs_quotes = e.is_empty()
        || e.eq_ignore_ascii_case("NULL")
        || e.chars()
            .any(|c| matches!(c, '{' | '}' | ',' | '"' | '\\') || is_space(c));
    if !needs_quotes {
        out.push_str(e);
        return;
    }
    out.push('"');
    for c in e.chars() {
        if c == '"' || c == '\\' {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
}

/// array_out, appended to `out`; `elem` is the static element type.
pub fn format(a: &ArrayValue, elem: TypeId, io: &IoSettings, out: &mut String) {
    if a.items.is_empty() {
        out.push_str("{}");
        return;
    }
    if !a.default_bounds() {
        for d in &a.dims {
            out.push_str(&format!("[{}:{}]", d.lower, d.upper()));
        }
        out.push('=');
    }
    let mut scratch = String::new();
    let mut next = 0;
    write_level(a, elem, io, 0, &mut next, &mut scratch, out);
}

fn write_level(
    a: &ArrayValue,
    elem: TypeId,
    io: &IoSettings,
    depth: usize,
    next: &mut usize,
    scratch: &mut String,
    out: &mut String,
) {
    out.push('{');
    for i in 0..a.dims[depth].len {
        if i > 0 {
            out.push(',');
        }
        if depth + 1 < a.dims.len() {
            write_level(a, elem, io, depth + 1, next, scratch, out);
            continue;
        }
        let v = &a.items[*next];
        *next += 1;
        if v.is_null() {
            out.push_str("NULL");
            continue;
        }
        scratch.clear();
        format_text(v, elem, io, scratch);
        // Element types whose output never needs quoting skip the scan.
        if matches!(
            elem,
            TypeId::Int2 | TypeId::Int4 | TypeId::Int8 | TypeId::Oid | TypeId::Bool
        ) {
            out.push_str(scratch);
        } else {
            push_element(scratch, out);
        }
    }
    out.push('}');
}

/// record_out of a record held as an `ArrayValue` of its fields: `(a,b)`,
/// a NULL field empty, a field quoted (quotes and backslashes doubled)
/// where record_in would misread it.
pub fn format_record(a: &ArrayValue, io: &IoSettings, out: &mut String) {
    out.push('(');
    let mut field = String::new();
    for (i, v) in a.items.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        let Some(ty) = v.type_id() else { continue };
        field.clear();
        let ty = if matches!(v, Value::Array(f) if f.elem == TypeId::Record) {
            TypeId::Record
        } else {
            ty
        };
        format_text(v, ty, io, &mut field);
        let quote = field.is_empty()
            || field
                .chars()
                .any(|c| matches!(c, '"' | '\\' | '(' | ')' | ',') || is_space(c));
        if !quote {
            out.push_str(&field);
            continue;
        }
        out.push('"');
        for c in field.chars() {
            if c == '"' || c == '\\' {
                out.push(c);
            }
            out.push(c);
        }
        out.push('"');
    }
    out.push(')');
}

/// The text of `a`.
pub fn to_text(a: &ArrayValue, elem: TypeId, io: &IoSettings) -> String {
    let mut s = String::new();
    format(a, elem, io, &mut s);
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round(elem: TypeId, s: &str) -> String {
        let io = IoSettings::UTC;
        to_text(&parse(elem.into(), s, &io).unwrap(), elem, &io)
    }

    fn detail(s: &str) -> String {
        parse_structure(s)
            .unwrap_err()
            .detail
            .map(|d| d.to_string())
            .unwrap_or_default()
    }

    #[test]
    fn text_round_trips() {
        assert_eq!(round(TypeId::Int4, "{ 1, 02 ,3}"), "{1,2,3}");
        assert_eq!(round(TypeId::Int4, " [0:1] = {1,2} "), "[0:1]={1,2}");
        assert_eq!(
            round(TypeId::Text, r#"{NULL,"NULL",nUll}"#),
            r#"{NULL,"NULL",NULL}"#
        );
        assert_eq!(
            round(TypeId::Text, r#"{" a ",b c,  d  , \\ ,""}"#),
            r#"{" a ","b c",d,"\\",""}"#
        );
        assert_eq!(
            round(TypeId::Text, "[1:1][3:4]={{a,b}}"),
            "[1:1][3:4]={{a,b}}"
        );
        assert_eq!(round(TypeId::Int4, "{{1,2},{3,4}}"), "{{1,2},{3,4}}");
        assert_eq!(round(TypeId::Int4, "{ }"), "{}");
    }

    #[test]
    fn malformed_literals() {
        assert_eq!(detail("{{}}"), "Unexpected \"}\" character.");
        assert_eq!(detail("{a\"b\"}"), "Unexpected array element.");
        assert_eq!(detail("{\"a\"b}"), "Unexpected array element.");
        assert_eq!(detail("{1,{2}}"), "Unexpected \"{\" character.");
        assert_eq!(detail("{{1},2}"), "Unexpected array element.");
        assert_eq!(
            detail("[1:2]{1,2}"),
            "Missing \"=\" after array dimensions."
        );
        assert_eq!(
            detail("[a]={1}"),
            "\"[\" must introduce explicitly-specified array dimensions."
        );
        assert_eq!(detail("[1:]={1}"), "Missing array dimension value.");
        assert_eq!(
            detail("[1:3]={1,2}"),
            "Specified array dimensions do not match array contents."
        );
        assert_eq!(detail("{1,}"), "Unexpected \"}\" character.");
        assert_eq!(detail("{,1}"), "Unexpected \",\" character.");
        assert_eq!(
            detail("{{1,2},{3}}"),
            "Multidimensional arrays must have sub-arrays with matching dimensions."
        );
        assert_eq!(detail("{1}}"), "Junk after closing right brace.");
        assert_eq!(detail("{1"), "Unexpected end of input.");
        assert_eq!(
            detail("1,2"),
            "Array value must start with \"{\" or dimension information."
        );
    }
}
