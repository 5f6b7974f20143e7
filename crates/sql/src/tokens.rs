//! The non-blank tokens of a statement by position, which the token
//! rewrites that run before sqlparser (`srf.rs`, `window.rs`, `parse.rs`)
//! match over.

use sqlparser::tokenizer::{Token, TokenWithSpan};

pub(crate) struct Solid<'t> {
    tokens: &'t [TokenWithSpan],
    /// Positions in `tokens` of the non-blank ones.
    at: Vec<usize>,
}

impl<'t> Solid<'t> {
    pub(crate) fn new(tokens: &'t [TokenWithSpan]) -> Solid<'t> {
        let at = (0..tokens.len())
            .filter(|&i| !matches!(tokens[i].token, Token::Whitespace(_)))
            .collect();
        Solid { tokens, at }
    }

    pub(crate) fn len(&self) -> usize {
        self.at.len()
    }

    /// Where the `k`th non-blank token is in the whole list.
    pub(crate) fn position(&self, k: usize) -> usize {
        self.at[k]
    }

    pub(crate) fn token(&self, k: usize) -> Option<&'t Token> {
        self.at.get(k).map(|&i| &self.tokens[i].token)
    }

    /// The `k`th token as an unquoted word, upper-cased; "" for any other.
    pub(crate) fn word(&self, k: usize) -> String {
        match self.token(k) {
            Some(Token::Word(w)) if w.quote_style.is_none() => w.value.to_ascii_uppercase(),
            _ => String::new(),
        }
    }

    pub(crate) fn is(&self, k: usize, t: &Token) -> bool {
        self.token(k) == Some(t)
    }
}
