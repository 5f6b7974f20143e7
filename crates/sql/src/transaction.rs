//! Transaction-control statements: BEGIN / START TRANSACTION with modes,
//! COMMIT, ROLLBACK, SAVEPOINT, RELEASE, ROLLBACK TO, SET TRANSACTION and
//! SET SESSION CHARACTERISTICS, parsed from the pre-parser's tokens.

use common::{PgError, PgResult, SqlState};
use txn::IsolationLevel;

/// The modes a transaction can be started or set with; `None`: unchanged.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TransactionModes {
    pub isolation: Option<IsolationLevel>,
    pub read_only: Option<bool>,
    pub deferrable: Option<bool>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TransactionOp {
    Begin(TransactionModes),
    Commit { chain: bool },
    Rollback { chain: bool },
    Savepoint(String),
    Release(String),
    RollbackTo(String),
    SetTransaction(TransactionModes),
    SetSessionCharacteristics(TransactionModes),
}

fn syntax_error(near: &str) -> PgError {
    if near.is_empty() {
        PgError::new(SqlState::SYNTAX_ERROR, "syntax error at end of input")
    } else {
        PgError::new(
            SqlState::SYNTAX_ERROR,
            format!("syntax error at or near \"{near}\""),
        )
    }
}

/// Whether the first words make this a transaction statement this module
/// parses (the caller tokenized the text).
pub fn is_transaction_statement(words: &[&str]) -> bool {
    matches!(
        words,
        ["begin", ..]
            | ["start", "transaction", ..]
            | ["commit", ..]
            | ["end", ..]
            | ["abort", ..]
            | ["rollback", ..]
            | ["savepoint", ..]
            | ["release", ..]
            | ["set", "transaction", ..]
            | ["set", "session", "characteristics", ..]
    )
}

/// Parses a transaction statement from tokens (word, quoted).
pub fn parse(toks: &[(String, bool)]) -> PgResult<TransactionOp> {
    let mut toks: Vec<(String, bool)> = toks.to_vec();
    while toks.last().is_some_and(|t| t.0 == ";" && !t.1) {
        toks.pop();
    }
    let word = |i: usize| -> &str {
        match toks.get(i) {
            Some((w, false)) => w.as_str(),
            Some((_, true)) => "\u{0}",
            None => "",
        }
    };
    let near = |i: usize| toks.get(i).map(|t| t.0.clone()).unwrap_or_default();
    match word(0) {
        "begin" => {
            let at = if matches!(word(1), "work" | "transaction") {
                2
            } else {
                1
            };
            Ok(TransactionOp::Begin(parse_modes(&toks[at..], at)?))
        }
        "start" => Ok(TransactionOp::Begin(parse_modes(&toks[2..], 2)?)),
        "commit" | "end" => Ok(TransactionOp::Commit {
            chain: parse_chain(&toks, 1)?,
        }),
        "abort" => Ok(TransactionOp::Rollback {
            chain: parse_chain(&toks, 1)?,
        }),
        "rollback" => {
            let mut at = 1;
            if matches!(word(at), "work" | "transaction") {
                at += 1;
            }
            if word(at) == "to" {
                at += 1;
                if word(at) == "savepoint" {
                    at += 1;
                }
                let name = savepoint_name(&toks, at)?;
                return Ok(TransactionOp::RollbackTo(name));
            }
            Ok(TransactionOp::Rollback {
                chain: parse_chain(&toks, at)?,
            })
        }
        "savepoint" => Ok(TransactionOp::Savepoint(savepoint_name(&toks, 1)?)),
        "release" => {
            let at = if word(1) == "savepoint" { 2 } else { 1 };
            Ok(TransactionOp::Release(savepoint_name(&toks, at)?))
        }
        "set" if word(1) == "transaction" => {
            if word(2) == "snapshot" {
                return Err(PgError::unsupported("SET TRANSACTION SNAPSHOT"));
            }
            let modes = parse_modes(&toks[2..], 2)?;
            if modes == TransactionModes::default() {
                return Err(syntax_error(&near(2)));
            }
            Ok(TransactionOp::SetTransaction(modes))
        }
        "set" => {
            // SET SESSION CHARACTERISTICS AS TRANSACTION modes
            if word(1) != "session" || word(2) != "characteristics" {
                return Err(syntax_error(&near(1)));
            }
            if word(3) != "as" {
                return Err(syntax_error(&near(3)));
            }
            if word(4) != "transaction" {
                return Err(syntax_error(&near(4)));
            }
            let modes = parse_modes(&toks[5..], 5)?;
            if modes == TransactionModes::default() {
                return Err(syntax_error(&near(5)));
            }
            Ok(TransactionOp::SetSessionCharacteristics(modes))
        }
        _ => Err(syntax_error(&near(0))),
    }
}

fn savepoint_name(toks: &[(String, bool)], at: usize) -> PgResult<String> {
    match toks.get(at) {
        Some((name, quoted)) if (*quoted || is_identifier(name)) && toks.len() == at + 1 => {
            Ok(name.clone())
        }
        Some(_) if toks.len() > at + 1 => Err(syntax_error(&toks[at + 1].0)),
        Some((name, _)) => Err(syntax_error(name)),
        None => Err(syntax_error("")),
    }
}

fn is_identifier(w: &str) -> bool {
    w.chars()
        .next()
        .is_some_and(|c| c.is_alphabetic() || c == '_')
        && w.chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == '$')
}

/// `AND [NO] CHAIN` after COMMIT / ROLLBACK.
fn parse_chain(toks: &[(String, bool)], at: usize) -> PgResult<bool> {
    let w: Vec<&str> = toks[at.min(toks.len())..]
        .iter()
        .map(|t| if t.1 { "\u{0}" } else { t.0.as_str() })
        .collect();
    match w.as_slice() {
        [] | ["work" | "transaction"] => Ok(false),
        ["work" | "transaction", "and", "chain"] | ["and", "chain"] => Ok(true),
        ["work" | "transaction", "and", "no", "chain"] | ["and", "no", "chain"] => Ok(false),
        _ => {
            let first = if matches!(w[0], "work" | "transaction") {
                1
            } else {
                0
            };
            Err(syntax_error(
                &toks
                    .get(at + first)
                    .map(|t| t.0.clone())
                    .unwrap_or_default(),
            ))
        }
    }
}

/// Transaction modes separated by commas or spaces; `base` is the token
/// index of `toks[0]` (for error positions it only names the token).
fn parse_modes(toks: &[(String, bool)], _base: usize) -> PgResult<TransactionModes> {
    let mut modes = TransactionModes::default();
    let w: Vec<&str> = toks
        .iter()
        .map(|t| if t.1 { "\u{0}" } else { t.0.as_str() })
        .collect();
    let near = |i: usize| toks.get(i).map(|t| t.0.clone()).unwrap_or_default();
    let mut i = 0;
    let mut first = true;
    while i < w.len() {
        if !first && w[i] == "," {
            i += 1;
        }
        first = false;
        match w.get(i..).unwrap_or(&[]) {
            ["isolation", "level", "serializable", ..] => {
                modes.isolation = Some(IsolationLevel::Serializable);
                i += 3;
            }
            ["isolation", "level", "repeatable", "read", ..] => {
                modes.isolation = Some(IsolationLevel::RepeatableRead);
                i += 4;
            }
            ["isolation", "level", "read", "committed", ..] => {
                modes.isolation = Some(IsolationLevel::ReadCommitted);
                i += 4;
            }
            ["isolation", "level", "read", "uncommitted", ..] => {
                modes.isolation = Some(IsolationLevel::ReadUncommitted);
                i += 4;
            }
            ["isolation", "level", "read", ..] => return Err(syntax_error(&near(i + 3))),
            ["isolation", "level", "repeatable", ..] => return Err(syntax_error(&near(i + 3))),
            ["isolation", "level", ..] => return Err(syntax_error(&near(i + 2))),
            ["isolation", ..] => return Err(syntax_error(&near(i + 1))),
            ["read", "only", ..] => {
                modes.read_only = Some(true);
                i += 2;
            }
            ["read", "write", ..] => {
                modes.read_only = Some(false);
                i += 2;
            }
            ["read", ..] => return Err(syntax_error(&near(i + 1))),
            ["deferrable", ..] => {
                modes.deferrable = Some(true);
                i += 1;
            }
            ["not", "deferrable", ..] => {
                modes.deferrable = Some(false);
                i += 2;
            }
            _ => return Err(syntax_error(&near(i))),
        }
    }
    Ok(modes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> PgResult<TransactionOp> {
        parse(&crate::parse::tokens(s).unwrap())
    }

    #[test]
    fn statements() {
        let rr = TransactionModes {
            isolation: Some(IsolationLevel::RepeatableRead),
            ..Default::default()
        };
        assert_eq!(
            p("BEGIN ISOLATION LEVEL REPEATABLE READ").unwrap(),
            TransactionOp::Begin(rr)
        );
        assert_eq!(
            p("start transaction isolation level repeatable read;").unwrap(),
            TransactionOp::Begin(rr)
        );
        assert_eq!(
            p("begin transaction read only, isolation level serializable deferrable").unwrap(),
            TransactionOp::Begin(TransactionModes {
                isolation: Some(IsolationLevel::Serializable),
                read_only: Some(true),
                deferrable: Some(true),
            })
        );
        assert_eq!(
            p("begin").unwrap(),
            TransactionOp::Begin(Default::default())
        );
        assert_eq!(
            p("ROLLBACK TO SAVEPOINT a").unwrap(),
            TransactionOp::RollbackTo("a".into())
        );
        assert_eq!(
            p("rollback work to \"B c\"").unwrap(),
            TransactionOp::RollbackTo("B c".into())
        );
        assert_eq!(
            p("release s1").unwrap(),
            TransactionOp::Release("s1".into())
        );
        assert_eq!(
            p("savepoint S1").unwrap(),
            TransactionOp::Savepoint("s1".into())
        );
        assert_eq!(
            p("commit and chain").unwrap(),
            TransactionOp::Commit { chain: true }
        );
        assert_eq!(
            p("set transaction isolation level read committed").unwrap(),
            TransactionOp::SetTransaction(TransactionModes {
                isolation: Some(IsolationLevel::ReadCommitted),
                ..Default::default()
            })
        );
        assert_eq!(
            p("set session characteristics as transaction read only").unwrap(),
            TransactionOp::SetSessionCharacteristics(TransactionModes {
                read_only: Some(true),
                ..Default::default()
            })
        );
        let e = p("begin isolation level foo").unwrap_err();
        assert_eq!(e.message, "syntax error at or near \"foo\"");
        assert!(p("savepoint").is_err());
        assert!(p("savepoint a b").is_err());
    }
}
