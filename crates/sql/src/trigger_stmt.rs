//! CREATE TRIGGER, DROP TRIGGER and ALTER TABLE ... {ENABLE|DISABLE}
//! TRIGGER, parsed here: sqlparser reads a trigger function's arguments as
//! a signature (`f('a')` fails) and keeps no text of WHEN's condition.

use common::{PgError, PgResult, SqlState};
use sqlparser::dialect::PostgreSqlDialect;
use sqlparser::tokenizer::{Token, Tokenizer};

/// The events of a trigger, as tgtype's bits (`catalog::triggers`).
pub use catalog::triggers::{
    TRIGGER_TYPE_DELETE, TRIGGER_TYPE_INSERT, TRIGGER_TYPE_TRUNCATE, TRIGGER_TYPE_UPDATE,
};

#[derive(Debug, Clone)]
pub struct CreateTrigger {
    pub replace: bool,
    pub name: String,
    /// BEFORE (else AFTER).
    pub before: bool,
    /// `TRIGGER_TYPE_INSERT | ...`.
    pub events: i16,
    /// UPDATE OF's columns.
    pub update_columns: Vec<String>,
    pub table: Vec<String>,
    /// FOR EACH ROW (else STATEMENT).
    pub row: bool,
    /// WHEN's condition, as written.
    pub when: Option<String>,
    pub function: Vec<String>,
    pub args: Vec<String>,
}

/// Which triggers ALTER TABLE ... ENABLE/DISABLE TRIGGER names.
#[derive(Debug, Clone, PartialEq)]
pub enum TriggerSelector {
    Named(String),
    All,
    User,
}

#[derive(Debug, Clone)]
pub enum TriggerStatement {
    Create(CreateTrigger),
    Drop {
        name: String,
        table: Vec<String>,
        if_exists: bool,
        cascade: bool,
    },
    SetEnabled {
        table: Vec<String>,
        if_exists: bool,
        which: TriggerSelector,
        /// tgenabled's new value: `O` (ENABLE), `A` (ENABLE ALWAYS), `R`
        /// (ENABLE REPLICA), `D` (DISABLE).
        enabled: char,
    },
}

#[derive(Debug, Clone)]
enum Tok {
    /// Lower-cased unless quoted.
    Word(String, bool),
    Str(String),
    Number(String),
    Punct(String),
}

impl Tok {
    fn is_kw(&self, kw: &str) -> bool {
        matches!(self, Tok::Word(w, false) if w == kw)
    }
    fn is_punct(&self, p: &str) -> bool {
        matches!(self, Tok::Punct(s) if s == p)
    }
}

/// The solid tokens, each with its text span (start, end) in whole tokens
/// of the original list, which keeps whitespace.
fn lex(text: &str) -> Option<(Vec<Tok>, Vec<String>, Vec<usize>)> {
    let dialect = PostgreSqlDialect {};
    let raw = Tokenizer::new(&dialect, text).tokenize().ok()?;
    let mut toks = Vec::new();
    let mut texts = Vec::new();
    let mut at = Vec::new();
    for (i, t) in raw.iter().enumerate() {
        texts.push(t.to_string());
        let tok = match t {
            Token::Whitespace(_) => continue,
            Token::Word(w) => match w.quote_style {
                Some(_) => Tok::Word(w.value.clone(), true),
                None => Tok::Word(w.value.to_lowercase(), false),
            },
            Token::SingleQuotedString(s)
            | Token::EscapedStringLiteral(s)
            | Token::NationalStringLiteral(s) => Tok::Str(s.clone()),
            Token::DollarQuotedString(s) => Tok::Str(s.value.clone()),
            Token::Number(n, _) => Tok::Number(n.clone()),
            Token::SemiColon => continue,
            other => Tok::Punct(other.to_string()),
        };
        toks.push(tok);
        at.push(i);
    }
    Some((toks, texts, at))
}

/// Some(statement or its error) when `text` is one of the statements here.
pub fn parse(text: &str) -> Option<PgResult<TriggerStatement>> {
    let (toks, texts, at) = lex(text)?;
    let kw = |i: usize, w: &str| toks.get(i).is_some_and(|t| t.is_kw(w));
    let create = kw(0, "create")
        && (kw(1, "trigger")
            || (kw(1, "or") && kw(2, "replace") && kw(3, "trigger"))
            || kw(1, "constraint"));
    let drop = kw(0, "drop") && kw(1, "trigger");
    let alter = kw(0, "alter")
        && kw(1, "table")
        && toks.windows(3).any(|w| {
            (w[0].is_kw("enable") || w[0].is_kw("disable"))
                && (w[1].is_kw("trigger")
                    || ((w[1].is_kw("always") || w[1].is_kw("replica")) && w[2].is_kw("trigger")))
        });
    if !(create || drop || alter) {
        return None;
    }
    let mut c = Cursor {
        toks,
        texts,
        at,
        pos: 0,
    };
    Some(if create {
        c.create().map(TriggerStatement::Create)
    } else if drop {
        c.drop()
    } else {
        c.alter()
    })
}

struct Cursor {
    toks: Vec<Tok>,
    texts: Vec<String>,
    at: Vec<usize>,
    pos: usize,
}

impl Cursor {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos)
    }
    fn eat(&mut self, kw: &str) -> bool {
        if self.peek().is_some_and(|t| t.is_kw(kw)) {
            self.pos += 1;
            true
        } else {
            false
        }
    }
    fn eat_punct(&mut self, p: &str) -> bool {
        if self.peek().is_some_and(|t| t.is_punct(p)) {
            self.pos += 1;
            true
        } else {
            false
        }
    }
    fn error(&self) -> PgError {
        match self.at.get(self.pos) {
            None => PgError::syntax("syntax error at end of input"),
            Some(&i) => PgError::syntax(format!("syntax error at or near \"{}\"", self.texts[i])),
        }
    }
    fn expect(&mut self, kw: &str) -> PgResult<()> {
        if self.eat(kw) {
            Ok(())
        } else {
            Err(self.error())
        }
    }
    fn name(&mut self) -> PgResult<String> {
        match self.peek() {
            Some(Tok::Word(w, _)) => {
                let w = w.clone();
                self.pos += 1;
                Ok(w)
            }
            _ => Err(self.error()),
        }
    }
    /// A possibly qualified name.
    fn qualified(&mut self) -> PgResult<Vec<String>> {
        let mut parts = vec![self.name()?];
        while self.eat_punct(".") {
            parts.push(self.name()?);
        }
        Ok(parts)
    }
    fn end(&self) -> PgResult<()> {
        if self.pos < self.toks.len() {
            return Err(self.error());
        }
        Ok(())
    }

    fn create(&mut self) -> PgResult<CreateTrigger> {
        self.expect("create")?;
        let replace = self.eat("or");
        if replace {
            self.expect("replace")?;
        }
        if self.eat("constraint") {
            return Err(PgError::unsupported(
                "constraint triggers are not supported yet",
            ));
        }
        self.expect("trigger")?;
        let name = self.name()?;
        let before = if self.eat("before") {
            true
        } else if self.eat("after") {
            false
        } else if self.eat("instead") {
            return Err(PgError::unsupported(
                "INSTEAD OF triggers are not supported yet",
            ));
        } else {
            return Err(self.error());
        };
        let mut events = 0i16;
        let mut update_columns = Vec::new();
        loop {
            let bit = if self.eat("insert") {
                TRIGGER_TYPE_INSERT
            } else if self.eat("delete") {
                TRIGGER_TYPE_DELETE
            } else if self.eat("truncate") {
                TRIGGER_TYPE_TRUNCATE
            } else if self.eat("update") {
                if self.eat("of") {
                    loop {
                        update_columns.push(self.name()?);
                        if !self.eat_punct(",") {
                            break;
                        }
                    }
                }
                TRIGGER_TYPE_UPDATE
            } else {
                return Err(self.error());
            };
            if events & bit != 0 {
                return Err(PgError::syntax("duplicate trigger events specified"));
            }
            events |= bit;
            if !self.eat("or") {
                break;
            }
        }
        self.expect("on")?;
        let table = self.qualified()?;
        if self.eat("referencing") {
            return Err(PgError::unsupported(
                "transition tables are not supported yet",
            ));
        }
        let mut row = false;
        if self.eat("for") {
            self.eat("each");
            if self.eat("row") {
                row = true;
            } else {
                self.expect("statement")?;
            }
        }
        let mut when = None;
        if self.eat("when") {
            if !self.eat_punct("(") {
                return Err(self.error());
            }
            let start = self.pos;
            let mut depth = 1;
            while depth > 0 {
                match self.peek() {
                    None => return Err(self.error()),
                    Some(t) if t.is_punct("(") => depth += 1,
                    Some(t) if t.is_punct(")") => depth -= 1,
                    _ => {}
                }
                self.pos += 1;
            }
            let (from, to) = (self.at[start], self.at[self.pos - 1]);
            when = Some(self.texts[from..to].concat().trim().to_string());
        }
        self.expect("execute")?;
        if !self.eat("function") {
            self.expect("procedure")?;
        }
        let function = self.qualified()?;
        if !self.eat_punct("(") {
            return Err(self.error());
        }
        let mut args = Vec::new();
        if !self.eat_punct(")") {
            loop {
                let arg = match self.peek() {
                    Some(Tok::Str(s)) => s.clone(),
                    Some(Tok::Number(n)) => n.clone(),
                    Some(Tok::Word(w, _)) => w.clone(),
                    _ => return Err(self.error()),
                };
                self.pos += 1;
                args.push(arg);
                if self.eat_punct(")") {
                    break;
                }
                if !self.eat_punct(",") {
                    return Err(self.error());
                }
            }
        }
        self.end()?;
        Ok(CreateTrigger {
            replace,
            name,
            before,
            events,
            update_columns,
            table,
            row,
            when,
            function,
            args,
        })
    }

    fn drop(&mut self) -> PgResult<TriggerStatement> {
        self.expect("drop")?;
        self.expect("trigger")?;
        let if_exists = self.eat("if");
        if if_exists {
            self.expect("exists")?;
        }
        let name = self.name()?;
        self.expect("on")?;
        let table = self.qualified()?;
        let cascade = self.eat("cascade");
        if !cascade {
            self.eat("restrict");
        }
        self.end()?;
        Ok(TriggerStatement::Drop {
            name,
            table,
            if_exists,
            cascade,
        })
    }

    fn alter(&mut self) -> PgResult<TriggerStatement> {
        self.expect("alter")?;
        self.expect("table")?;
        let if_exists = self.eat("if");
        if if_exists {
            self.expect("exists")?;
        }
        self.eat("only");
        let table = self.qualified()?;
        let enabled = if self.eat("enable") {
            if self.eat("always") {
                'A'
            } else if self.eat("replica") {
                'R'
            } else {
                'O'
            }
        } else {
            self.expect("disable")?;
            'D'
        };
        self.expect("trigger")?;
        let named_only = matches!(enabled, 'A' | 'R');
        let which = if named_only
            && self
                .peek()
                .is_some_and(|t| t.is_kw("all") || t.is_kw("user"))
        {
            return Err(self.error());
        } else if self.eat("all") {
            TriggerSelector::All
        } else if self.eat("user") {
            TriggerSelector::User
        } else {
            TriggerSelector::Named(self.name()?)
        };
        if self.pos < self.toks.len() {
            return Err(PgError::new(
                SqlState::FEATURE_NOT_SUPPORTED,
                "ENABLE/DISABLE TRIGGER combined with other ALTER TABLE actions is not supported yet",
            ));
        }
        Ok(TriggerStatement::SetEnabled {
            table,
            if_exists,
            which,
            enabled,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_create_trigger_with_arguments_and_when() {
        let Some(Ok(TriggerStatement::Create(c))) = parse(
            "CREATE OR REPLACE TRIGGER t1 BEFORE INSERT OR UPDATE OF a, b ON s.t \
             FOR EACH ROW WHEN (new.a > (old.a + 1)) EXECUTE FUNCTION f('x', 42, y)",
        ) else {
            panic!("not parsed");
        };
        assert!(c.replace && c.before && c.row);
        assert_eq!(c.events, TRIGGER_TYPE_INSERT | TRIGGER_TYPE_UPDATE);
        assert_eq!(c.update_columns, vec!["a", "b"]);
        assert_eq!(c.table, vec!["s", "t"]);
        assert_eq!(c.when.as_deref(), Some("new.a > (old.a + 1)"));
        assert_eq!(c.args, vec!["x", "42", "y"]);
    }

    #[test]
    fn other_statements_are_not_taken() {
        assert!(parse("CREATE TABLE t (a int)").is_none());
        assert!(parse("ALTER TABLE t ADD COLUMN b int").is_none());
        assert!(parse("DROP TRIGGER IF EXISTS x ON t CASCADE").is_some());
    }
}
