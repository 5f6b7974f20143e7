//! CREATE SEQUENCE's options in any order, as PostgreSQL takes them.
//!
//! sqlparser reads `INCREMENT, MINVALUE, MAXVALUE, START, CACHE, CYCLE,
//! OWNED BY` only in that order, while PostgreSQL (and pg_dump's output:
//! `START WITH 1 INCREMENT BY 1 NO MINVALUE NO MAXVALUE CACHE 1`) writes
//! them in any. `reorder_sequence_options` moves each option's tokens into
//! sqlparser's order before it parses; a statement it does not recognise
//! wholly is left alone (sqlparser then reports it).

use sqlparser::keywords::Keyword;
use sqlparser::tokenizer::{Token, TokenWithSpan};

fn keyword(t: &Token) -> Option<Keyword> {
    match t {
        Token::Word(w) if w.quote_style.is_none() => Some(w.keyword),
        _ => None,
    }
}

fn is_name(t: &Token) -> bool {
    matches!(t, Token::Word(_))
}

/// One option: its first and one-past-last positions in `solid`, and its rank
/// in sqlparser's order.
struct Group {
    from: usize,
    to: usize,
    rank: u8,
}

/// Rewrites `CREATE [TEMP] SEQUENCE ...` so its options come in sqlparser's
/// order (see the module comment); other statements come back unchanged.
pub(crate) fn reorder_sequence_options(tokens: Vec<TokenWithSpan>) -> Vec<TokenWithSpan> {
    let solid: Vec<usize> = (0..tokens.len())
        .filter(|&i| !matches!(tokens[i].token, Token::Whitespace(_)))
        .collect();
    let tok = |k: usize| solid.get(k).map(|&i| &tokens[i].token);
    let kw = |k: usize| tok(k).and_then(keyword);
    if kw(0) != Some(Keyword::CREATE) {
        return tokens;
    }
    let mut k = 1;
    if matches!(
        kw(k),
        Some(Keyword::TEMP | Keyword::TEMPORARY | Keyword::UNLOGGED)
    ) {
        k += 1;
    }
    if kw(k) != Some(Keyword::SEQUENCE) {
        return tokens;
    }
    k += 1;
    if kw(k) == Some(Keyword::IF) {
        k += 3;
    }
    // The name, possibly qualified.
    if !tok(k).is_some_and(is_name) {
        return tokens;
    }
    k += 1;
    while tok(k) == Some(&Token::Period) && tok(k + 1).is_some_and(is_name) {
        k += 2;
    }
    if kw(k) == Some(Keyword::AS) {
        // One type name of one or two words (smallint, integer, bigint).
        k += 2;
    }
    match reorder_span(&tokens, &solid, k, None) {
        Some(out) => out,
        None => tokens,
    }
}

/// Puts the options from solid position `start` on into sqlparser's order:
/// up to the statement's end, or with `close` the `)` closing an identity
/// column's options. None when they are in order already or one is not
/// recognised (sqlparser then reports it).
fn reorder_span(
    tokens: &[TokenWithSpan],
    solid: &[usize],
    start: usize,
    close: Option<&Token>,
) -> Option<Vec<TokenWithSpan>> {
    let tok = |k: usize| solid.get(k).map(|&i| &tokens[i].token);
    let kw = |k: usize| tok(k).and_then(keyword);
    let number = |k: usize| -> Option<usize> {
        let k = if matches!(tok(k), Some(Token::Minus | Token::Plus)) {
            k + 1
        } else {
            k
        };
        matches!(tok(k), Some(Token::Number(..))).then_some(k + 1)
    };
    let mut k = start;
    let mut groups = Vec::new();
    while k < solid.len() && tok(k) != Some(&Token::SemiColon) && tok(k) != close {
        let (rank, to) = match (kw(k), kw(k + 1)) {
            (Some(Keyword::INCREMENT), Some(Keyword::BY)) => (0, number(k + 2)),
            (Some(Keyword::INCREMENT), _) => (0, number(k + 1)),
            (Some(Keyword::MINVALUE), _) => (1, number(k + 1)),
            (Some(Keyword::NO), Some(Keyword::MINVALUE)) => (1, Some(k + 2)),
            (Some(Keyword::MAXVALUE), _) => (2, number(k + 1)),
            (Some(Keyword::NO), Some(Keyword::MAXVALUE)) => (2, Some(k + 2)),
            (Some(Keyword::START), Some(Keyword::WITH)) => (3, number(k + 2)),
            (Some(Keyword::START), _) => (3, number(k + 1)),
            (Some(Keyword::CACHE), _) => (4, number(k + 1)),
            (Some(Keyword::NO), Some(Keyword::CYCLE)) => (5, Some(k + 2)),
            (Some(Keyword::CYCLE), _) => (5, Some(k + 1)),
            (Some(Keyword::OWNED), Some(Keyword::BY))
                if close.is_none() && tok(k + 2).is_some_and(is_name) =>
            {
                let mut e = k + 3;
                while tok(e) == Some(&Token::Period) && tok(e + 1).is_some_and(is_name) {
                    e += 2;
                }
                (6, Some(e))
            }
            _ => return None,
        };
        let to = to?;
        groups.push(Group { from: k, to, rank });
        k = to;
    }
    if groups.windows(2).all(|w| w[0].rank <= w[1].rank) {
        return None;
    }
    let raw = |k: usize| solid.get(k).copied().unwrap_or(tokens.len());
    let (head_end, tail_start) = (raw(start), raw(k));
    let mut sorted: Vec<&Group> = groups.iter().collect();
    sorted.sort_by_key(|g| g.rank);
    let mut out: Vec<TokenWithSpan> = tokens[..head_end].to_vec();
    for g in sorted {
        out.extend_from_slice(&tokens[raw(g.from)..raw(g.to)]);
        out.push(TokenWithSpan::wrap(Token::Whitespace(
            sqlparser::tokenizer::Whitespace::Space,
        )));
    }
    out.extend_from_slice(&tokens[tail_start..]);
    Some(out)
}

/// The same for each identity column's options in any statement:
/// `GENERATED ... AS IDENTITY (START WITH 10 INCREMENT BY 5)`.
pub(crate) fn reorder_identity_options(mut tokens: Vec<TokenWithSpan>) -> Vec<TokenWithSpan> {
    let mut from = 0;
    loop {
        let solid: Vec<usize> = (0..tokens.len())
            .filter(|&i| !matches!(tokens[i].token, Token::Whitespace(_)))
            .collect();
        let kw = |k: usize| solid.get(k).and_then(|&i| keyword(&tokens[i].token));
        let Some(at) = (from..solid.len()).find(|&k| {
            kw(k) == Some(Keyword::AS)
                && kw(k + 1) == Some(Keyword::IDENTITY)
                && solid.get(k + 2).map(|&i| &tokens[i].token) == Some(&Token::LParen)
        }) else {
            return tokens;
        };
        if let Some(out) = reorder_span(&tokens, &solid, at + 3, Some(&Token::RParen)) {
            tokens = out;
        }
        from = at + 3;
    }
}

#[cfg(test)]
mod tests {
    use sqlparser::dialect::PostgreSqlDialect;
    use sqlparser::parser::Parser;
    use sqlparser::tokenizer::Tokenizer;

    fn parse(sql: &str) -> Result<String, String> {
        let dialect = PostgreSqlDialect {};
        let tokens = Tokenizer::new(&dialect, sql)
            .tokenize_with_location()
            .map_err(|e| e.to_string())?;
        Parser::new(&dialect)
            .with_tokens_with_locations(super::reorder_sequence_options(tokens))
            .parse_statements()
            .map(|v| v[0].to_string())
            .map_err(|e| e.to_string())
    }

    #[test]
    fn options_in_any_order() {
        assert_eq!(
            parse("CREATE SEQUENCE public.s START WITH 100 INCREMENT BY -5 NO MINVALUE NO MAXVALUE CACHE 1;")
                .unwrap(),
            "CREATE SEQUENCE public.s INCREMENT BY -5 NO MINVALUE NO MAXVALUE START WITH 100 CACHE 1"
        );
        assert_eq!(
            parse("create sequence s as integer cycle start 3 owned by t.c maxvalue 9").unwrap(),
            parse("create sequence s as integer maxvalue 9 start 3 cycle owned by t.c").unwrap()
        );
        // Already in order, or not a sequence: untouched.
        assert!(parse("create sequence s increment 2 start 5").is_ok());
        assert!(parse("create table t (a int)").is_ok());
        // Unknown options are left for the parser to reject.
        assert!(parse("create sequence s start 1 bogus 2").is_err());
    }

    #[test]
    fn identity_options_in_any_order() {
        let dialect = PostgreSqlDialect {};
        let sql = "create table t (a int generated always as identity (start with 10 increment by 5 cache 2), b int generated by default as identity (cycle start 3))";
        let tokens = Tokenizer::new(&dialect, sql)
            .tokenize_with_location()
            .unwrap();
        let parsed = Parser::new(&dialect)
            .with_tokens_with_locations(super::reorder_identity_options(tokens))
            .parse_statements()
            .unwrap();
        assert_eq!(
            parsed[0].to_string(),
            "CREATE TABLE t (a INT GENERATED ALWAYS AS IDENTITY ( INCREMENT BY 5 START WITH 10 CACHE 2 ), b INT GENERATED BY DEFAULT AS IDENTITY ( START 3 CYCLE ))"
        );
    }
}
