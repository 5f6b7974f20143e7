//! LIKE / ILIKE pattern matching. Patterns are compiled once into a shape with
//! fast paths (`literal`, `literal%`, `%literal`, `%literal%` via memmem) and a
//! general segment matcher; `matches` does not allocate. ILIKE folds ASCII
//! letters only, as PostgreSQL does under the C locale.

use std::cell::RefCell;

use memchr::memmem::Finder;

use common::{PgError, PgResult, SqlState};

/// A compiled LIKE / ILIKE pattern.
pub struct LikePattern {
    shape: Shape,
    case_insensitive: bool,
    /// The pattern as written (EXPLAIN prints it).
    source: String,
}

enum Shape {
    /// Matches every string (`%`).
    All,
    Exact(Vec<u8>),
    Prefix(Vec<u8>),
    Suffix(Vec<u8>),
    Contains(Box<Finder<'static>>),
    General(General),
}

/// Pattern split at `%`: segments of literals and `_` runs.
struct General {
    segments: Vec<Segment>,
    /// Pattern starts / ends with `%`.
    open_start: bool,
    open_end: bool,
}

struct Segment {
    toks: Vec<Tok>,
    /// Length in characters (fixed for a segment).
    chars: usize,
    /// Finder for the first literal, if the segment starts with one.
    lead: Option<Finder<'static>>,
}

#[derive(Debug, PartialEq)]
enum Tok {
    Lit(Vec<u8>),
    /// `n` consecutive `_`.
    Any(usize),
}

thread_local! {
    static FOLD_BUF: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// Advances `n` UTF-8 characters from byte `pos`; None if the string ends first.
#[inline]
fn skip_chars(s: &[u8], mut pos: usize, n: usize) -> Option<usize> {
    for _ in 0..n {
        let b = *s.get(pos)?;
        pos += if b < 0x80 {
            1
        } else if b >= 0xF0 {
            4
        } else if b >= 0xE0 {
            3
        } else {
            2
        };
    }
    (pos <= s.len()).then_some(pos)
}

#[inline]
fn is_char_start(b: u8) -> bool {
    (b as i8) >= -0x40
}

impl Segment {
    fn new(toks: Vec<Tok>) -> Segment {
        let chars = toks
            .iter()
            .map(|t| match t {
                Tok::Lit(l) => l.iter().filter(|b| is_char_start(**b)).count(),
                Tok::Any(n) => *n,
            })
            .sum();
        let lead = match toks.first() {
            Some(Tok::Lit(l)) => Some(Finder::new(l).into_owned()),
            _ => None,
        };
        Segment { toks, chars, lead }
    }

    /// Matches the segment at byte `pos`; returns the end position.
    #[inline]
    fn match_at(&self, s: &[u8], mut pos: usize) -> Option<usize> {
        for t in &self.toks {
            match t {
                Tok::Lit(l) => {
                    if s.len() - pos < l.len() || &s[pos..pos + l.len()] != l.as_slice() {
                        return None;
                    }
                    pos += l.len();
                }
                Tok::Any(n) => pos = skip_chars(s, pos, *n)?,
            }
        }
        Some(pos)
    }

    /// Leftmost match starting at or after `from`: (start, end).
    fn find(&self, s: &[u8], from: usize) -> Option<(usize, usize)> {
        let mut pos = from;
        while pos <= s.len() {
            let start = match &self.lead {
                Some(f) => pos + f.find(&s[pos..])?,
                None => pos,
            };
            if let Some(end) = self.match_at(s, start) {
                return Some((start, end));
            }
            // Next character boundary after `start`.
            pos = skip_chars(s, start, 1)?;
        }
        None
    }
}

impl General {
    fn matches(&self, s: &[u8]) -> bool {
        let segs = &self.segments;
        if !self.open_start && !self.open_end && segs.len() == 1 {
            return segs[0].match_at(s, 0) == Some(s.len());
        }
        let mut pos = 0;
        let mut first = 0;
        let mut last = segs.len();
        if !self.open_start {
            match segs[0].match_at(s, 0) {
                Some(end) => pos = end,
                None => return false,
            }
            first = 1;
        }
        // The anchored last segment: it starts `chars` characters before the end.
        let mut tail_start = s.len();
        if !self.open_end && last > first {
            let seg = &segs[last - 1];
            let mut start = s.len();
            let mut n = 0;
            while n < seg.chars {
                if start == 0 {
                    return false;
                }
                start -= 1;
                while start > 0 && !is_char_start(s[start]) {
                    start -= 1;
                }
                n += 1;
            }
            if start < pos || seg.match_at(s, start) != Some(s.len()) {
                return false;
            }
            tail_start = start;
            last -= 1;
        }
        let hay = &s[..tail_start];
        for seg in &segs[first..last] {
            match seg.find(hay, pos) {
                Some((_, end)) => pos = end,
                None => return false,
            }
        }
        pos <= tail_start
    }
}

/// Whether `b` has an ASCII capital letter (branch-free per chunk, so it vectorizes).
fn has_ascii_upper(b: &[u8]) -> bool {
    b.chunks(64).any(|c| {
        c.iter()
            .fold(0u8, |acc, x| acc | (x.wrapping_sub(b'A') < 26) as u8)
            != 0
    })
}

impl LikePattern {
    /// The `escape` argument for an `ESCAPE 'x'` clause: `'\0'` (no escaping)
    /// for an empty string, the character for one character, else 22025
    /// "invalid escape string".
    pub fn escape_char(escape: &str) -> PgResult<char> {
        let mut it = escape.chars();
        match (it.next(), it.next()) {
            (None, _) => Ok('\0'),
            (Some(c), None) => Ok(c),
            _ => Err(
                PgError::new(SqlState::INVALID_ESCAPE_SEQUENCE, "invalid escape string")
                    .with_hint("Escape string must be empty or one character."),
            ),
        }
    }

    /// `escape` defaults to backslash; `Some('\0')` disables escaping (ESCAPE '').
    /// 22025 if the pattern ends with the escape character.
    pub fn compile(pattern: &str, escape: Option<char>, case_insensitive: bool) -> PgResult<Self> {
        let escape = match escape {
            None => Some('\\'),
            Some('\0') => None,
            Some(c) => Some(c),
        };
        // Parse into segments separated by '%'.
        let mut segments: Vec<Vec<Tok>> = vec![Vec::new()];
        let mut open_start = false;
        let mut open_end = false;
        let mut lit = String::new();
        let mut chars = pattern.chars().peekable();
        let mut first = true;
        let flush = |lit: &mut String, toks: &mut Vec<Tok>| {
            if !lit.is_empty() {
                let mut bytes = std::mem::take(lit).into_bytes();
                if case_insensitive {
                    bytes.make_ascii_lowercase();
                }
                toks.push(Tok::Lit(bytes));
            }
        };
        while let Some(c) = chars.next() {
            let at_start = first;
            first = false;
            if Some(c) == escape {
                match chars.next() {
                    Some(n) => lit.push(n),
                    None => {
                        return Err(PgError::new(
                            SqlState::INVALID_ESCAPE_SEQUENCE,
                            "LIKE pattern must not end with escape character",
                        ))
                    }
                }
                open_end = false;
            } else if c == '%' {
                let toks = segments.last_mut().expect("segment");
                flush(&mut lit, toks);
                if at_start {
                    open_start = true;
                }
                if !toks.is_empty() {
                    segments.push(Vec::new());
                }
                open_end = true;
            } else if c == '_' {
                let toks = segments.last_mut().expect("segment");
                flush(&mut lit, toks);
                match toks.last_mut() {
                    Some(Tok::Any(n)) => *n += 1,
                    _ => toks.push(Tok::Any(1)),
                }
                open_end = false;
            } else {
                lit.push(c);
                open_end = false;
            }
        }
        flush(&mut lit, segments.last_mut().expect("segment"));
        if segments.last().is_some_and(|s| s.is_empty()) && segments.len() > 1 {
            segments.pop();
        }
        let shape = Self::shape(segments, open_start, open_end);
        Ok(LikePattern {
            shape,
            case_insensitive,
            source: pattern.to_string(),
        })
    }

    fn shape(mut segments: Vec<Vec<Tok>>, open_start: bool, open_end: bool) -> Shape {
        let single_lit = |segs: &mut Vec<Vec<Tok>>| -> Option<Vec<u8>> {
            if segs.len() != 1 {
                return None;
            }
            match segs[0].as_slice() {
                [] => Some(Vec::new()),
                [Tok::Lit(_)] => match segs[0].pop() {
                    Some(Tok::Lit(l)) => Some(l),
                    _ => None,
                },
                _ => None,
            }
        };
        if let Some(l) = single_lit(&mut segments) {
            return match (open_start, open_end) {
                (false, false) => Shape::Exact(l),
                _ if l.is_empty() => Shape::All,
                (false, true) => Shape::Prefix(l),
                (true, false) => Shape::Suffix(l),
                (true, true) => Shape::Contains(Box::new(Finder::new(&l).into_owned())),
            };
        }
        Shape::General(General {
            segments: segments.into_iter().map(Segment::new).collect(),
            open_start,
            open_end,
        })
    }

    fn matches_bytes(&self, s: &[u8]) -> bool {
        match &self.shape {
            Shape::All => true,
            Shape::Exact(l) => s == l.as_slice(),
            Shape::Prefix(l) => s.starts_with(l),
            Shape::Suffix(l) => s.ends_with(l),
            Shape::Contains(f) => f.find(s).is_some(),
            Shape::General(g) => g.matches(s),
        }
    }

    pub fn is_case_insensitive(&self) -> bool {
        self.case_insensitive
    }

    /// The pattern text it was compiled from.
    pub fn source(&self) -> &str {
        &self.source
    }

    pub fn matches(&self, s: &str) -> bool {
        let b = s.as_bytes();
        if !self.case_insensitive || !has_ascii_upper(b) {
            return self.matches_bytes(b);
        }
        FOLD_BUF.with(|buf| {
            let mut buf = buf.borrow_mut();
            buf.clear();
            buf.extend(b.iter().map(|c| c.to_ascii_lowercase()));
            self.matches_bytes(&buf)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(p: &str, s: &str) -> bool {
        LikePattern::compile(p, None, false).unwrap().matches(s)
    }

    #[test]
    fn basics() {
        assert!(m("abc", "abc"));
        assert!(!m("abc", "abcd"));
        assert!(m("a%", "abc"));
        assert!(!m("a%", "bac"));
        assert!(m("%c", "abc"));
        assert!(m("%b%", "abc"));
        assert!(!m("%bb%", "abc"));
        assert!(m("%", ""));
        assert!(m("%%", "x"));
        assert!(!m("_", ""));
        assert!(m("_", "é"));
        assert!(m("a_c", "aéc"));
        assert!(!m("a_c", "ac"));
        assert!(m("a%c", "ac"));
        assert!(m("a%c", "abbbc"));
        assert!(!m("a%c", "abbbcd"));
        assert!(m("%a%b%c%", "xxaxxbxxcxx"));
        assert!(!m("%a%b%c%", "xxcxxbxxaxx"));
        assert!(m("a%b%c", "abc"));
        assert!(m("a%b%c", "aXbYbZc"));
        assert!(!m("ab%bc", "abc"));
        assert!(m("ab%bc", "abbc"));
        assert!(m("%_b", "ab"));
        assert!(!m("%_b", "b"));
        assert!(m("_%_", "ab"));
        assert!(!m("_%_", "a"));
        assert!(m("%a_c%", "xxabcxx"));
        assert!(m("%a_c%", "xaacabcx"));
        assert!(m("%é_", "aéb"));
        assert!(m("", ""));
        assert!(!m("", "a"));
        let padded = format!("aaaaa{}", " ".repeat(995));
        assert!(!m("%bb%", &padded));
        assert!(m("aaaaa%", &padded));
    }

    #[test]
    fn escapes() {
        assert!(m("a\\%", "a%"));
        assert!(!m("a\\%", "ab"));
        assert!(m("a\\_", "a_"));
        assert!(!m("a\\_", "ab"));
        assert!(m("a\\\\", "a\\"));
        let p = LikePattern::compile("a%", Some('\0'), false).unwrap();
        assert!(p.matches("abc"));
        let p = LikePattern::compile("a\\_", Some('\0'), false).unwrap();
        assert!(p.matches("a\\x"));
        let p = LikePattern::compile("a#%", Some('#'), false).unwrap();
        assert!(p.matches("a%") && !p.matches("ab"));
        assert_eq!(LikePattern::escape_char("").unwrap(), '\0');
        assert_eq!(LikePattern::escape_char("#").unwrap(), '#');
        assert_eq!(
            LikePattern::escape_char("xy").err().unwrap().message,
            "invalid escape string"
        );
        let e = LikePattern::compile("abc\\", None, false).err().unwrap();
        assert_eq!(e.code, SqlState::INVALID_ESCAPE_SEQUENCE);
    }

    #[test]
    fn ilike() {
        let p = LikePattern::compile("%HeLLo%", None, true).unwrap();
        assert!(p.matches("say hello world"));
        assert!(p.matches("SAY HELLO"));
        assert!(!p.matches("help"));
        let p = LikePattern::compile("a", None, true).unwrap();
        assert!(p.matches("A"));
        let p = LikePattern::compile("É%", None, true).unwrap();
        assert!(!p.matches("éa"));
        assert!(p.matches("Éa"));
    }
}
