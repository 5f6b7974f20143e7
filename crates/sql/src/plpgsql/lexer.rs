//! Tokens of a PL/pgSQL body, each with its byte span in the source, so
//! the parser can hand embedded SQL expressions and statements on as the
//! text they were written as (PostgreSQL's plpgsql scanner does the same).

use common::{PgError, PgResult};

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Tok {
    /// An identifier or keyword: lowercased unless it was quoted.
    Word {
        text: String,
        quoted: bool,
    },
    /// A string literal's value ('...', E'...', $tag$...$tag$).
    Str(String),
    Number,
    /// `:=`, `..`, `<<`, `>>` and single punctuation or operator characters.
    Punct(&'static str),
    Other(char),
}

#[derive(Debug, Clone)]
pub(crate) struct Token {
    pub tok: Tok,
    pub start: usize,
    pub end: usize,
}

impl Token {
    /// Whether this is the unquoted keyword `kw` (lowercase).
    pub fn is_kw(&self, kw: &str) -> bool {
        matches!(&self.tok, Tok::Word { text, quoted: false } if text == kw)
    }
    pub fn is_punct(&self, p: &str) -> bool {
        matches!(&self.tok, Tok::Punct(x) if *x == p)
    }
}

fn syntax(msg: impl Into<String>) -> PgError {
    PgError::syntax(msg.into())
}

pub(crate) fn tokenize(src: &str) -> PgResult<Vec<Token>> {
    let b = src.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let start = i;
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        if c == b'-' && b.get(i + 1) == Some(&b'-') {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
            continue;
        }
        if c == b'/' && b.get(i + 1) == Some(&b'*') {
            let mut depth = 0;
            while i < b.len() {
                if b[i..].starts_with(b"/*") {
                    depth += 1;
                    i += 2;
                } else if b[i..].starts_with(b"*/") {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
            continue;
        }
        let escape = (c == b'e' || c == b'E') && b.get(i + 1) == Some(&b'\'');
        if c == b'\'' || escape {
            if escape {
                i += 1;
            }
            i += 1;
            let mut value = String::new();
            loop {
                let Some(&ch) = b.get(i) else {
                    return Err(syntax("unterminated quoted string"));
                };
                if ch == b'\'' {
                    if b.get(i + 1) == Some(&b'\'') {
                        value.push('\'');
                        i += 2;
                        continue;
                    }
                    i += 1;
                    break;
                }
                if escape && ch == b'\\' && i + 1 < b.len() {
                    let n = b[i + 1];
                    value.push(match n {
                        b'n' => '\n',
                        b't' => '\t',
                        b'r' => '\r',
                        other => other as char,
                    });
                    i += 2;
                    continue;
                }
                let ch_str = &src[i..];
                let ch = ch_str.chars().next().expect("in bounds");
                value.push(ch);
                i += ch.len_utf8();
            }
            out.push(Token {
                tok: Tok::Str(value),
                start,
                end: i,
            });
            continue;
        }
        if c == b'$' {
            // $tag$ ... $tag$ or $n.
            let rest = &src[i + 1..];
            let tag_len = rest
                .find(|ch: char| !(ch.is_alphanumeric() || ch == '_'))
                .unwrap_or(rest.len());
            if rest[tag_len..].starts_with('$') && !rest[..tag_len].starts_with(char::is_numeric) {
                let delim = &src[i..i + tag_len + 2];
                let body_start = i + tag_len + 2;
                let Some(len) = src[body_start..].find(delim) else {
                    return Err(syntax("unterminated dollar-quoted string"));
                };
                i = body_start + len + delim.len();
                out.push(Token {
                    tok: Tok::Str(src[body_start..body_start + len].to_string()),
                    start,
                    end: i,
                });
                continue;
            }
            i += 1;
            while i < b.len() && b[i].is_ascii_digit() {
                i += 1;
            }
            out.push(Token {
                tok: Tok::Word {
                    text: src[start..i].to_string(),
                    quoted: false,
                },
                start,
                end: i,
            });
            continue;
        }
        if c == b'"' {
            i += 1;
            let mut value = String::new();
            loop {
                let Some(&ch) = b.get(i) else {
                    return Err(syntax("unterminated quoted identifier"));
                };
                if ch == b'"' {
                    if b.get(i + 1) == Some(&b'"') {
                        value.push('"');
                        i += 2;
                        continue;
                    }
                    i += 1;
                    break;
                }
                let ch = src[i..].chars().next().expect("in bounds");
                value.push(ch);
                i += ch.len_utf8();
            }
            out.push(Token {
                tok: Tok::Word {
                    text: value,
                    quoted: true,
                },
                start,
                end: i,
            });
            continue;
        }
        if c.is_ascii_alphabetic() || c == b'_' || c >= 0x80 {
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] >= 0x80) {
                i += 1;
            }
            out.push(Token {
                tok: Tok::Word {
                    text: src[start..i].to_lowercase(),
                    quoted: false,
                },
                start,
                end: i,
            });
            continue;
        }
        if c.is_ascii_digit() {
            while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'.') {
                // `1..10`: the range operator is not part of the number.
                if b[i] == b'.' && b.get(i + 1) == Some(&b'.') {
                    break;
                }
                i += 1;
            }
            out.push(Token {
                tok: Tok::Number,
                start,
                end: i,
            });
            continue;
        }
        let two = &src[i..(i + 2).min(src.len())];
        let punct = match two {
            ":=" => Some(":="),
            ".." => Some(".."),
            "<<" => Some("<<"),
            ">>" => Some(">>"),
            _ => None,
        };
        if let Some(p) = punct {
            i += 2;
            out.push(Token {
                tok: Tok::Punct(p),
                start,
                end: i,
            });
            continue;
        }
        let single = match c {
            b';' => Some(";"),
            b'(' => Some("("),
            b')' => Some(")"),
            b',' => Some(","),
            b'=' => Some("="),
            b'[' => Some("["),
            b']' => Some("]"),
            b'.' => Some("."),
            _ => None,
        };
        let ch = src[i..].chars().next().expect("in bounds");
        i += ch.len_utf8();
        out.push(Token {
            tok: single.map_or(Tok::Other(ch), Tok::Punct),
            start,
            end: i,
        });
    }
    Ok(out)
}
