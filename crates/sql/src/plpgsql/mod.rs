//! A PL/pgSQL subset: the body's syntax tree, parsed once per function
//! (CREATE FUNCTION checks it, the executor runs it: `exec::functions`).
//!
//! As in PostgreSQL, every expression and embedded SQL statement stays SQL
//! text: the executor binds `SELECT <expr>` (or the statement) with the
//! visible variables as named parameters. Supported: DECLARE (types,
//! CONSTANT, NOT NULL, defaults, ALIAS FOR $n), `:=`/`=` assignment, IF /
//! ELSIF / ELSE, LOOP, WHILE, FOR over an integer range (REVERSE, BY) or a
//! query's rows, EXIT / CONTINUE [label] [WHEN], RETURN, RETURN NEXT /
//! QUERY, PERFORM, RAISE with `%` placeholders and USING ERRCODE /
//! MESSAGE / DETAIL / HINT, SELECT ... INTO [STRICT], INSERT / UPDATE /
//! DELETE (with RETURNING ... INTO), GET DIAGNOSTICS ... ROW_COUNT,
//! NULL, nested blocks and EXCEPTION WHEN handlers.

mod lexer;

use common::{PgError, PgResult};
use lexer::{Tok, Token};

/// A function body: its outermost block.
#[derive(Debug, Clone)]
pub struct Block {
    pub label: Option<String>,
    pub declarations: Vec<Declaration>,
    pub body: Vec<Stmt>,
    /// EXCEPTION WHEN ... THEN handlers (empty: none).
    pub handlers: Vec<Handler>,
}

#[derive(Debug, Clone)]
pub struct Declaration {
    pub name: String,
    pub kind: DeclarationKind,
}

#[derive(Debug, Clone)]
pub enum DeclarationKind {
    Variable {
        type_name: String,
        constant: bool,
        not_null: bool,
        default: Option<String>,
    },
    /// `name ALIAS FOR $n` (0-based argument index) or for a name.
    Alias(String),
}

#[derive(Debug, Clone)]
pub struct Handler {
    /// Condition names (lowercase) or `sqlstate xxxxx`.
    pub conditions: Vec<String>,
    pub body: Vec<Stmt>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RaiseLevel {
    Debug,
    Log,
    Info,
    Notice,
    Warning,
    Exception,
}

#[derive(Debug, Clone)]
pub enum Stmt {
    Assign {
        target: String,
        expr: String,
    },
    If {
        branches: Vec<(String, Vec<Stmt>)>,
        otherwise: Vec<Stmt>,
    },
    Loop {
        label: Option<String>,
        body: Vec<Stmt>,
    },
    While {
        label: Option<String>,
        condition: String,
        body: Vec<Stmt>,
    },
    ForRange {
        label: Option<String>,
        var: String,
        reverse: bool,
        low: String,
        high: String,
        step: Option<String>,
        body: Vec<Stmt>,
    },
    ForQuery {
        label: Option<String>,
        var: String,
        query: String,
        body: Vec<Stmt>,
    },
    /// EXIT (`continue` false) or CONTINUE.
    Exit {
        continue_loop: bool,
        label: Option<String>,
        when: Option<String>,
    },
    Return(Option<String>),
    ReturnNext(Option<String>),
    ReturnQuery(String),
    /// PERFORM: the query, already rewritten to a SELECT.
    Perform(String),
    Raise {
        level: RaiseLevel,
        /// None: a bare RAISE re-raising the handled error.
        message: Option<String>,
        args: Vec<String>,
        /// A condition name or SQLSTATE given instead of a message.
        condition: Option<String>,
        /// USING option = expression.
        options: Vec<(String, String)>,
    },
    /// An SQL statement; `into` the variables its first row goes to.
    Sql {
        text: String,
        into: Option<IntoTargets>,
    },
    /// GET DIAGNOSTICS var = ROW_COUNT.
    GetRowCount(String),
    Block(Block),
    Null,
}

#[derive(Debug, Clone)]
pub struct IntoTargets {
    pub targets: Vec<String>,
    pub strict: bool,
}

/// Parses a PL/pgSQL function body.
pub fn parse_body(src: &str) -> PgResult<Block> {
    let tokens = lexer::tokenize(src)?;
    let mut p = Parser {
        src,
        tokens,
        pos: 0,
    };
    let label = p.label()?;
    let block = p.block(label)?;
    p.eat_punct(";");
    if p.pos < p.tokens.len() {
        return Err(p.error_here());
    }
    Ok(block)
}

struct Parser<'s> {
    src: &'s str,
    tokens: Vec<Token>,
    pos: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.pos)
    }
    fn peek_kw(&self, kw: &str) -> bool {
        self.peek().is_some_and(|t| t.is_kw(kw))
    }
    fn peek_at_kw(&self, offset: usize, kw: &str) -> bool {
        self.tokens
            .get(self.pos + offset)
            .is_some_and(|t| t.is_kw(kw))
    }
    fn eat_kw(&mut self, kw: &str) -> bool {
        if self.peek_kw(kw) {
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
    fn error_here(&self) -> PgError {
        match self.peek() {
            Some(t) => PgError::syntax(format!(
                "syntax error at or near \"{}\"",
                &self.src[t.start..t.end]
            )),
            None => PgError::syntax("syntax error at end of input"),
        }
    }
    fn expect_kw(&mut self, kw: &str) -> PgResult<()> {
        if self.eat_kw(kw) {
            Ok(())
        } else {
            Err(self.error_here())
        }
    }
    fn expect_punct(&mut self, p: &str) -> PgResult<()> {
        if self.eat_punct(p) {
            Ok(())
        } else {
            Err(self.error_here())
        }
    }
    fn ident(&mut self) -> PgResult<String> {
        match self.peek().map(|t| t.tok.clone()) {
            Some(Tok::Word { text, .. }) => {
                self.pos += 1;
                Ok(text)
            }
            _ => Err(self.error_here()),
        }
    }

    /// `<<label>>` before a block or loop.
    fn label(&mut self) -> PgResult<Option<String>> {
        if !self.eat_punct("<<") {
            return Ok(None);
        }
        let l = self.ident()?;
        self.expect_punct(">>")?;
        Ok(Some(l))
    }

    /// The source text of tokens `from..to`.
    fn text(&self, from: usize, to: usize) -> String {
        if from >= to {
            return String::new();
        }
        self.src[self.tokens[from].start..self.tokens[to - 1].end].to_string()
    }

    /// Consumes tokens up to (not including) the first, outside
    /// parentheses and CASE ... END, that `stop` accepts; returns their text.
    fn until(&mut self, stop: &dyn Fn(&Parser, &Token) -> bool) -> PgResult<String> {
        let from = self.pos;
        let mut depth = 0i32;
        let mut cases = 0i32;
        while let Some(t) = self.peek() {
            if depth == 0 && cases == 0 && stop(self, t) {
                return Ok(self.text(from, self.pos));
            }
            if t.is_punct("(") || t.is_punct("[") {
                depth += 1;
            } else if t.is_punct(")") || t.is_punct("]") {
                depth -= 1;
            } else if t.is_kw("case") {
                cases += 1;
            } else if t.is_kw("end") && cases > 0 {
                cases -= 1;
            }
            self.pos += 1;
        }
        Err(PgError::syntax("syntax error at end of input"))
    }
    fn until_kw(&mut self, kw: &'static str) -> PgResult<String> {
        let s = self.until(&|_, t| t.is_kw(kw))?;
        self.pos += 1;
        Ok(s)
    }
    fn until_semicolon(&mut self) -> PgResult<String> {
        let s = self.until(&|_, t| t.is_punct(";"))?;
        self.pos += 1;
        Ok(s)
    }

    /// [DECLARE ...] BEGIN ... [EXCEPTION ...] END [label]
    fn block(&mut self, label: Option<String>) -> PgResult<Block> {
        let mut declarations = Vec::new();
        if self.eat_kw("declare") {
            while !self.peek_kw("begin") {
                if self.peek().is_none() {
                    return Err(self.error_here());
                }
                if self.eat_kw("declare") {
                    continue;
                }
                declarations.push(self.declaration()?);
            }
        }
        self.expect_kw("begin")?;
        let body = self.statements(&["end", "exception"])?;
        let mut handlers = Vec::new();
        if self.eat_kw("exception") {
            while self.eat_kw("when") {
                let cond_text = self.until_kw("then")?;
                let conditions = cond_text
                    .split(|c: char| c.is_whitespace())
                    .filter(|w| !w.is_empty() && !w.eq_ignore_ascii_case("or"))
                    .map(|w| w.trim_matches('\'').to_lowercase())
                    .collect::<Vec<_>>();
                // `SQLSTATE '22012'` is one condition.
                let mut merged = Vec::new();
                let mut it = conditions.into_iter();
                while let Some(c) = it.next() {
                    if c == "sqlstate" {
                        merged.push(format!("sqlstate {}", it.next().unwrap_or_default()));
                    } else {
                        merged.push(c);
                    }
                }
                let body = self.statements(&["when", "end"])?;
                handlers.push(Handler {
                    conditions: merged,
                    body,
                });
            }
        }
        self.expect_kw("end")?;
        if let Some(Tok::Word { .. }) = self.peek().map(|t| &t.tok) {
            // END label
            if !self.peek().is_some_and(|t| t.is_punct(";")) {
                self.pos += 1;
            }
        }
        Ok(Block {
            label,
            declarations,
            body,
            handlers,
        })
    }

    fn declaration(&mut self) -> PgResult<Declaration> {
        let name = self.ident()?;
        if self.eat_kw("alias") {
            self.expect_kw("for")?;
            let target = self.ident()?;
            self.expect_punct(";")?;
            return Ok(Declaration {
                name,
                kind: DeclarationKind::Alias(target),
            });
        }
        let constant = self.eat_kw("constant");
        let type_name = self.until(&|p, t| {
            t.is_punct(";")
                || t.is_punct(":=")
                || t.is_punct("=")
                || t.is_kw("default")
                || (t.is_kw("not") && p.peek_at_kw(1, "null"))
                || t.is_kw("collate")
        })?;
        let not_null = if self.eat_kw("not") {
            self.expect_kw("null")?;
            true
        } else {
            false
        };
        let default = if self.eat_punct(":=") || self.eat_punct("=") || self.eat_kw("default") {
            Some(self.until_semicolon()?)
        } else {
            self.expect_punct(";")?;
            None
        };
        Ok(Declaration {
            name,
            kind: DeclarationKind::Variable {
                type_name,
                constant,
                not_null,
                default,
            },
        })
    }

    /// Statements up to one of the `ends` keywords (not consumed).
    fn statements(&mut self, ends: &[&str]) -> PgResult<Vec<Stmt>> {
        let mut out = Vec::new();
        loop {
            let Some(t) = self.peek() else {
                return Err(self.error_here());
            };
            if ends.iter().any(|e| t.is_kw(e)) {
                return Ok(out);
            }
            if t.is_punct(";") {
                self.pos += 1;
                continue;
            }
            out.push(self.statement()?);
        }
    }

    fn end_loop(&mut self) -> PgResult<()> {
        self.expect_kw("end")?;
        self.expect_kw("loop")?;
        if !self.peek().is_some_and(|t| t.is_punct(";")) {
            self.ident()?;
        }
        self.expect_punct(";")
    }

    fn statement(&mut self) -> PgResult<Stmt> {
        let label = self.label()?;
        let t = self.peek().cloned().ok_or_else(|| self.error_here())?;
        let Tok::Word { text: word, quoted } = &t.tok else {
            return Err(self.error_here());
        };
        let word = if *quoted { String::new() } else { word.clone() };
        // An assignment to a record's field: `rec.field := expr`.
        let field = self.tokens.get(self.pos + 2);
        if self
            .tokens
            .get(self.pos + 1)
            .is_some_and(|n| n.is_punct("."))
            && field.is_some_and(|f| matches!(f.tok, Tok::Word { .. }))
            && self
                .tokens
                .get(self.pos + 3)
                .is_some_and(|n| n.is_punct(":=") || n.is_punct("="))
        {
            let record = self.ident()?;
            self.pos += 1;
            let field = self.ident()?;
            self.pos += 1;
            let expr = self.until_semicolon()?;
            return Ok(Stmt::Assign {
                target: format!("{record}.{field}"),
                expr,
            });
        }
        // An assignment: `name := expr` or `name = expr`.
        let next = self.tokens.get(self.pos + 1);
        if next.is_some_and(|n| n.is_punct(":=") || n.is_punct("="))
            && !matches!(word.as_str(), "return" | "raise" | "perform")
        {
            let target = self.ident()?;
            self.pos += 1;
            let expr = self.until_semicolon()?;
            return Ok(Stmt::Assign { target, expr });
        }
        match word.as_str() {
            "declare" | "begin" => {
                let b = self.block(label)?;
                self.expect_punct(";")?;
                Ok(Stmt::Block(b))
            }
            "if" => {
                self.pos += 1;
                let mut branches = Vec::new();
                let cond = self.until_kw("then")?;
                let body = self.statements(&["elsif", "elseif", "else", "end"])?;
                branches.push((cond, body));
                let mut otherwise = Vec::new();
                loop {
                    if self.eat_kw("elsif") || self.eat_kw("elseif") {
                        let cond = self.until_kw("then")?;
                        let body = self.statements(&["elsif", "elseif", "else", "end"])?;
                        branches.push((cond, body));
                    } else if self.eat_kw("else") {
                        otherwise = self.statements(&["end"])?;
                    } else {
                        break;
                    }
                }
                self.expect_kw("end")?;
                self.expect_kw("if")?;
                self.expect_punct(";")?;
                Ok(Stmt::If {
                    branches,
                    otherwise,
                })
            }
            "loop" => {
                self.pos += 1;
                let body = self.statements(&["end"])?;
                self.end_loop()?;
                Ok(Stmt::Loop { label, body })
            }
            "while" => {
                self.pos += 1;
                let condition = self.until_kw("loop")?;
                let body = self.statements(&["end"])?;
                self.end_loop()?;
                Ok(Stmt::While {
                    label,
                    condition,
                    body,
                })
            }
            "for" => self.for_loop(label),
            "exit" | "continue" => {
                self.pos += 1;
                let mut target = None;
                if !self.peek_kw("when") && !self.peek().is_some_and(|t| t.is_punct(";")) {
                    target = Some(self.ident()?);
                }
                let when = if self.eat_kw("when") {
                    Some(self.until_semicolon()?)
                } else {
                    self.expect_punct(";")?;
                    None
                };
                Ok(Stmt::Exit {
                    continue_loop: word == "continue",
                    label: target,
                    when,
                })
            }
            "return" => {
                self.pos += 1;
                if self.eat_kw("next") {
                    let e = self.until_semicolon()?;
                    return Ok(Stmt::ReturnNext((!e.is_empty()).then_some(e)));
                }
                if self.eat_kw("query") {
                    return Ok(Stmt::ReturnQuery(self.until_semicolon()?));
                }
                let e = self.until_semicolon()?;
                Ok(Stmt::Return((!e.is_empty()).then_some(e)))
            }
            "perform" => {
                self.pos += 1;
                let rest = self.until_semicolon()?;
                Ok(Stmt::Perform(format!("SELECT {rest}")))
            }
            "raise" => self.raise(),
            "null" => {
                self.pos += 1;
                self.expect_punct(";")?;
                Ok(Stmt::Null)
            }
            "get" => {
                self.pos += 1;
                self.eat_kw("current");
                self.expect_kw("diagnostics")?;
                let var = self.ident()?;
                if !self.eat_punct("=") {
                    self.expect_punct(":=")?;
                }
                self.expect_kw("row_count")?;
                self.expect_punct(";")?;
                Ok(Stmt::GetRowCount(var))
            }
            "select" | "with" | "insert" | "update" | "delete" | "values" => self.sql_statement(),
            // Any other statement is SQL, checked by the SQL parser now as
            // PostgreSQL's plpgsql checks it at CREATE FUNCTION.
            _ => {
                let from = self.pos;
                let stmt = self.sql_statement()?;
                if let Stmt::Sql { text, .. } = &stmt {
                    let st = crate::parse::StatementText { text, offset: 0 };
                    crate::parse::parse_statement(text, &st).map_err(|_| {
                        let t = &self.tokens[from];
                        PgError::syntax(format!(
                            "syntax error at or near \"{}\"",
                            &self.src[t.start..t.end]
                        ))
                    })?;
                }
                Ok(stmt)
            }
        }
    }

    fn for_loop(&mut self, label: Option<String>) -> PgResult<Stmt> {
        self.pos += 1;
        let var = self.ident()?;
        self.expect_kw("in")?;
        let reverse = self.eat_kw("reverse");
        let start = self.pos;
        // A range has `..` before LOOP at the top level.
        let mut depth = 0;
        let mut range = false;
        for t in &self.tokens[start..] {
            if t.is_punct("(") {
                depth += 1;
            } else if t.is_punct(")") {
                depth -= 1;
            } else if depth == 0 && t.is_kw("loop") {
                break;
            } else if depth == 0 && t.is_punct("..") {
                range = true;
            }
        }
        if range {
            let low = self.until(&|_, t| t.is_punct(".."))?;
            self.pos += 1;
            let high = self.until(&|_, t| t.is_kw("by") || t.is_kw("loop"))?;
            let step = if self.eat_kw("by") {
                Some(self.until(&|_, t| t.is_kw("loop"))?)
            } else {
                None
            };
            self.expect_kw("loop")?;
            let body = self.statements(&["end"])?;
            self.end_loop()?;
            return Ok(Stmt::ForRange {
                label,
                var,
                reverse,
                low,
                high,
                step,
                body,
            });
        }
        let query = self.until_kw("loop")?;
        let body = self.statements(&["end"])?;
        self.end_loop()?;
        Ok(Stmt::ForQuery {
            label,
            var,
            query,
            body,
        })
    }

    fn raise(&mut self) -> PgResult<Stmt> {
        self.pos += 1;
        let level = [
            ("debug", RaiseLevel::Debug),
            ("log", RaiseLevel::Log),
            ("info", RaiseLevel::Info),
            ("notice", RaiseLevel::Notice),
            ("warning", RaiseLevel::Warning),
            ("exception", RaiseLevel::Exception),
        ]
        .into_iter()
        .find(|(kw, _)| self.peek_kw(kw))
        .map(|(_, l)| l);
        if level.is_some() {
            self.pos += 1;
        }
        let level = level.unwrap_or(RaiseLevel::Exception);
        let mut message = None;
        let mut condition = None;
        let mut args = Vec::new();
        match self.peek().map(|t| t.tok.clone()) {
            Some(Tok::Str(s)) => {
                self.pos += 1;
                message = Some(s);
                while self.eat_punct(",") {
                    args.push(
                        self.until(&|_, t| t.is_punct(",") || t.is_punct(";") || t.is_kw("using"))?,
                    );
                }
            }
            Some(Tok::Word { text, .. }) if text == "sqlstate" => {
                self.pos += 1;
                match self.peek().map(|t| t.tok.clone()) {
                    Some(Tok::Str(s)) => {
                        self.pos += 1;
                        condition = Some(format!("sqlstate {s}"));
                    }
                    _ => return Err(self.error_here()),
                }
            }
            Some(Tok::Word { text, .. }) if text != "using" => {
                self.pos += 1;
                condition = Some(text);
            }
            _ => {}
        }
        let mut options = Vec::new();
        if self.eat_kw("using") {
            loop {
                let name = self.ident()?;
                if !self.eat_punct("=") {
                    self.expect_punct(":=")?;
                }
                let value = self.until(&|_, t| t.is_punct(",") || t.is_punct(";"))?;
                options.push((name, value));
                if !self.eat_punct(",") {
                    break;
                }
            }
        }
        self.expect_punct(";")?;
        if message.is_none() && condition.is_none() && options.is_empty() {
            return Ok(Stmt::Raise {
                level,
                message: None,
                args,
                condition: None,
                options,
            });
        }
        Ok(Stmt::Raise {
            level,
            message: message
                .or(Some(String::new()))
                .filter(|_| condition.is_none()),
            args,
            condition,
            options,
        })
    }

    /// An SQL statement, with a top-level `INTO [STRICT] targets` taken out.
    fn sql_statement(&mut self) -> PgResult<Stmt> {
        let from = self.pos;
        let is_insert = self.peek_kw("insert");
        self.until(&|_, t| t.is_punct(";"))?;
        let to = self.pos;
        self.pos += 1;
        // Find INTO at depth 0 (not INSERT's own INTO).
        let mut depth = 0;
        let mut into_at = None;
        for i in from..to {
            let t = &self.tokens[i];
            if t.is_punct("(") {
                depth += 1;
            } else if t.is_punct(")") {
                depth -= 1;
            } else if depth == 0 && t.is_kw("into") && !(is_insert && i == from + 1) {
                into_at = Some(i);
                break;
            }
        }
        let Some(at) = into_at else {
            return Ok(Stmt::Sql {
                text: self.text(from, to),
                into: None,
            });
        };
        let mut i = at + 1;
        let strict = self.tokens.get(i).is_some_and(|t| t.is_kw("strict"));
        if strict {
            i += 1;
        }
        let mut targets = Vec::new();
        while i < to {
            let Tok::Word { text, .. } = &self.tokens[i].tok else {
                break;
            };
            targets.push(text.clone());
            i += 1;
            if self.tokens.get(i).is_some_and(|t| t.is_punct(",")) && i < to {
                i += 1;
            } else {
                break;
            }
        }
        if targets.is_empty() {
            return Err(PgError::syntax("syntax error at or near \"INTO\""));
        }
        let before = self.text(from, at);
        let after = self.text(i, to);
        Ok(Stmt::Sql {
            text: format!("{before} {after}"),
            into: Some(IntoTargets { targets, strict }),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_seed_function() {
        let b = parse_body(" begin perform factorial(fact_val); return a; end; ").unwrap();
        assert!(matches!(&b.body[0], Stmt::Perform(q) if q == "SELECT factorial(fact_val)"));
        assert!(matches!(&b.body[1], Stmt::Return(Some(e)) if e == "a"));
    }

    #[test]
    fn parses_loops_and_into() {
        let src = "declare s int := 0; r record; begin
            for i in reverse 10..1 by 2 loop s := s + i; exit when s > 20; end loop;
            for r in select x from t loop null; end loop;
            select count(*) into strict s from t where x > s;
            if s > 1 then raise notice 'big % %', s, 2; elsif s = 0 then return 0; else s = 1; end if;
            return s; end";
        let b = parse_body(src).unwrap();
        assert_eq!(b.declarations.len(), 2);
        assert!(matches!(
            &b.body[0],
            Stmt::ForRange {
                reverse: true,
                step: Some(_),
                ..
            }
        ));
        assert!(matches!(&b.body[1], Stmt::ForQuery { query, .. } if query == "select x from t"));
        match &b.body[2] {
            Stmt::Sql {
                text,
                into: Some(i),
            } => {
                assert_eq!(text, "select count(*) from t where x > s");
                assert!(i.strict);
                assert_eq!(i.targets, ["s"]);
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(&b.body[3], Stmt::If { branches, .. } if branches.len() == 2));
    }

    #[test]
    fn reports_syntax_errors() {
        assert!(parse_body("begin retur 1; end").is_err());
        assert!(parse_body("begin if x then end").is_err());
    }
}
