//! Quoted identifiers with Unicode escapes: `U&"d\0061t\+000061"`, with an
//! optional `UESCAPE 'c'` choosing another escape character. sqlparser
//! reads `U&"..."` as the word U, `&` and a quoted identifier;
//! `rewrite_unicode_identifiers` makes the three (and the UESCAPE clause)
//! one quoted identifier holding the decoded name.

use sqlparser::tokenizer::{Token, TokenWithSpan, Word};

/// The name with its escapes decoded (`\XXXX`, `\+XXXXXX`, `\\`); None
/// for an invalid escape, left for the parser to refuse.
fn decode(raw: &str, escape: char) -> Option<String> {
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars().peekable();
    while let Some(c) = chars.next() {
        if c != escape {
            out.push(c);
            continue;
        }
        if chars.peek() == Some(&escape) {
            chars.next();
            out.push(escape);
            continue;
        }
        let digits = if chars.peek() == Some(&'+') {
            chars.next();
            6
        } else {
            4
        };
        let hex: String = (0..digits).filter_map(|_| chars.next()).collect();
        if hex.len() != digits {
            return None;
        }
        out.push(char::from_u32(u32::from_str_radix(&hex, 16).ok()?)?);
    }
    Some(out)
}

fn is_u(t: &Token) -> bool {
    matches!(t, Token::Word(w) if w.quote_style.is_none() && w.value.eq_ignore_ascii_case("u"))
}

fn non_blank_after(tokens: &[TokenWithSpan], i: usize) -> Option<usize> {
    (i + 1..tokens.len()).find(|&j| !matches!(tokens[j].token, Token::Whitespace(_)))
}

/// Replaces `U&"..." [UESCAPE 'c']` by the decoded quoted identifier.
pub(crate) fn rewrite_unicode_identifiers(tokens: Vec<TokenWithSpan>) -> Vec<TokenWithSpan> {
    let starts = (0..tokens.len().saturating_sub(2)).any(|i| {
        is_u(&tokens[i].token)
            && tokens[i + 1].token == Token::Ampersand
            && matches!(&tokens[i + 2].token, Token::Word(w) if w.quote_style == Some('"'))
    });
    if !starts {
        return tokens;
    }
    let mut out = Vec::with_capacity(tokens.len());
    let mut i = 0;
    while i < tokens.len() {
        let quoted = match tokens.get(i + 2).map(|t| &t.token) {
            Some(Token::Word(w)) if w.quote_style == Some('"') => Some(w.value.clone()),
            _ => None,
        };
        let Some(raw) =
            quoted.filter(|_| is_u(&tokens[i].token) && tokens[i + 1].token == Token::Ampersand)
        else {
            out.push(tokens[i].clone());
            i += 1;
            continue;
        };
        let mut end = i + 3;
        let mut escape = '\\';
        if let Some(k) = non_blank_after(&tokens, i + 2) {
            let uescape = matches!(&tokens[k].token, Token::Word(w)
                if w.quote_style.is_none() && w.value.eq_ignore_ascii_case("uescape"));
            if let (true, Some(v)) = (uescape, non_blank_after(&tokens, k)) {
                if let Token::SingleQuotedString(s) = &tokens[v].token {
                    let mut cs = s.chars();
                    if let (Some(c), None) = (cs.next(), cs.next()) {
                        escape = c;
                        end = v + 1;
                    }
                }
            }
        }
        match decode(&raw, escape) {
            Some(name) => {
                out.push(TokenWithSpan {
                    token: Token::Word(Word {
                        value: name,
                        quote_style: Some('"'),
                        keyword: sqlparser::keywords::Keyword::NoKeyword,
                    }),
                    span: tokens[i].span,
                });
                i = end;
            }
            None => {
                out.push(tokens[i].clone());
                i += 1;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::decode;

    #[test]
    fn escapes_decode() {
        assert_eq!(decode(r"d\0061t\+000061", '\\').as_deref(), Some("data"));
        assert_eq!(decode("d!0061t!!", '!').as_deref(), Some("dat!"));
        assert_eq!(decode(r"\00", '\\'), None);
    }
}
