//! Role statements, parsed here rather than by sqlparser, whose PostgreSQL
//! dialect reads `CREATE USER` as Snowflake's and lacks `RENAME TO`, `SET
//! SESSION AUTHORIZATION`'s DEFAULT and PostgreSQL's option errors:
//! `CREATE ROLE|USER|GROUP`, `ALTER ROLE|USER|GROUP` (options, RENAME TO),
//! `DROP ROLE|USER|GROUP`, `SET [SESSION|LOCAL] ROLE`, `RESET ROLE`,
//! `SET SESSION AUTHORIZATION`, `RESET SESSION AUTHORIZATION`. The grammar
//! follows PostgreSQL 15's gram.y (CreateRoleStmt, AlterRoleStmt,
//! DropRoleStmt, RenameStmt); tokens are sqlparser's.

use common::{PgError, PgResult, SqlState};
use sqlparser::dialect::PostgreSqlDialect;
use sqlparser::tokenizer::{Token, Tokenizer};

/// CREATE/ALTER ROLE's attribute options; None where not given.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RoleOptions {
    pub superuser: Option<bool>,
    pub create_db: Option<bool>,
    pub create_role: Option<bool>,
    pub inherit: Option<bool>,
    pub login: Option<bool>,
    pub replication: Option<bool>,
    pub bypass_rls: Option<bool>,
    pub conn_limit: Option<i32>,
    /// `PASSWORD 'p'` (Some(Some)), `PASSWORD NULL` (Some(None)).
    pub password: Option<Option<String>>,
    /// VALID UNTIL's text, converted to timestamptz when the command runs
    /// (with the session's TimeZone).
    pub valid_until: Option<String>,
}

/// A role named by a statement: a name or CURRENT_USER / SESSION_USER
/// (CURRENT_ROLE is CURRENT_USER).
#[derive(Debug, Clone, PartialEq)]
pub enum RoleSpec {
    Name(String),
    CurrentUser,
    SessionUser,
}

#[derive(Debug, Clone, PartialEq)]
pub enum RoleStatement {
    /// `user`: CREATE USER, which implies LOGIN.
    Create {
        name: String,
        user: bool,
        options: RoleOptions,
    },
    Alter {
        role: RoleSpec,
        options: RoleOptions,
    },
    Rename {
        name: String,
        new_name: String,
    },
    Drop {
        names: Vec<String>,
        if_exists: bool,
    },
    /// SET [LOCAL] ROLE name, or NONE / RESET ROLE (None).
    SetRole {
        role: Option<String>,
        local: bool,
    },
    /// SET [LOCAL] SESSION AUTHORIZATION name, or DEFAULT / RESET (None).
    SetSessionAuthorization {
        role: Option<String>,
        local: bool,
    },
}

impl RoleStatement {
    /// Whether it changes the catalog (and so needs a transaction id).
    pub fn writes_catalog(&self) -> bool {
        matches!(
            self,
            RoleStatement::Create { .. }
                | RoleStatement::Alter { .. }
                | RoleStatement::Rename { .. }
                | RoleStatement::Drop { .. }
        )
    }
}

/// One token: a word (lowercased unless double-quoted), a string, a number
/// or punctuation as text.
#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Word { text: String, quoted: bool },
    Str(String),
    Number(String),
    Punct(String),
}

impl Tok {
    fn is_kw(&self, kw: &str) -> bool {
        matches!(self, Tok::Word { text, quoted: false } if text == kw)
    }
    /// As PostgreSQL echoes it in "syntax error at or near".
    fn shown(&self) -> String {
        match self {
            Tok::Word { text, .. } | Tok::Number(text) | Tok::Punct(text) => text.clone(),
            Tok::Str(s) => format!("'{s}'"),
        }
    }
}

fn lex(text: &str) -> Option<Vec<Tok>> {
    let dialect = PostgreSqlDialect {};
    let raw = Tokenizer::new(&dialect, text).tokenize().ok()?;
    let mut out = Vec::new();
    for t in raw {
        out.push(match t {
            Token::Whitespace(_) => continue,
            Token::Word(w) => match w.quote_style {
                Some(_) => Tok::Word {
                    text: w.value,
                    quoted: true,
                },
                None => Tok::Word {
                    text: w.value.to_lowercase(),
                    quoted: false,
                },
            },
            Token::SingleQuotedString(s)
            | Token::EscapedStringLiteral(s)
            | Token::NationalStringLiteral(s) => Tok::Str(s),
            Token::DollarQuotedString(s) => Tok::Str(s.value),
            Token::Number(n, _) => Tok::Number(n),
            other => Tok::Punct(other.to_string()),
        });
    }
    Some(out)
}

struct Cursor {
    toks: Vec<Tok>,
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
    fn error(&self) -> PgError {
        match self.peek() {
            Some(t) => PgError::syntax(format!("syntax error at or near \"{}\"", t.shown())),
            None => PgError::syntax("syntax error at end of input"),
        }
    }
    fn expect(&mut self, kw: &str) -> PgResult<()> {
        if self.eat(kw) {
            Ok(())
        } else {
            Err(self.error())
        }
    }
    fn next(&mut self) -> Option<Tok> {
        let t = self.toks.get(self.pos).cloned();
        self.pos += 1;
        t
    }
    /// A role name: any word (PostgreSQL's RoleId is a NonReservedWord; the
    /// few reserved ones are refused by the command as reserved names).
    fn name(&mut self) -> PgResult<String> {
        match self.peek() {
            Some(Tok::Word { text, .. }) => {
                let t = text.clone();
                self.pos += 1;
                Ok(t)
            }
            _ => Err(self.error()),
        }
    }
    fn role_spec(&mut self) -> PgResult<RoleSpec> {
        if self.eat("current_user") || self.eat("current_role") {
            return Ok(RoleSpec::CurrentUser);
        }
        if self.eat("session_user") {
            return Ok(RoleSpec::SessionUser);
        }
        self.name().map(RoleSpec::Name)
    }
    fn string(&mut self) -> PgResult<String> {
        match self.peek() {
            Some(Tok::Str(s)) => {
                let s = s.clone();
                self.pos += 1;
                Ok(s)
            }
            _ => Err(self.error()),
        }
    }
    fn end(&self) -> PgResult<()> {
        match self.peek() {
            None => Ok(()),
            Some(_) => Err(self.error()),
        }
    }
}

/// Parses `text` if it is a role statement: None when it is not one,
/// Some(Err) for a role statement with an error (reported when bound).
pub fn parse(text: &str) -> Option<PgResult<RoleStatement>> {
    let toks = lex(text)?;
    let kw = |i: usize, w: &str| toks.get(i).is_some_and(|t| t.is_kw(w));
    let role_word = |i: usize| kw(i, "role") || kw(i, "user") || kw(i, "group");
    let is_role = ((kw(0, "create") || kw(0, "drop")) && role_word(1))
        // ALTER USER MAPPING is another statement.
        || (kw(0, "alter") && role_word(1) && !kw(2, "mapping"))
        || (kw(0, "set") && (kw(1, "role") || (kw(2, "role") && (kw(1, "session") || kw(1, "local")))))
        || (kw(0, "set") && kw(1, "session") && kw(2, "authorization"))
        || (kw(0, "reset") && (kw(1, "role") || (kw(1, "session") && kw(2, "authorization"))));
    if !is_role {
        return None;
    }
    let mut c = Cursor { toks, pos: 0 };
    Some(statement(&mut c))
}

fn statement(c: &mut Cursor) -> PgResult<RoleStatement> {
    let first = c.name()?;
    let stmt = match first.as_str() {
        "create" => {
            let user = c.eat("user");
            if !user && !c.eat("role") {
                c.expect("group")?;
            }
            let name = c.name()?;
            c.eat("with");
            let options = options(c, true)?;
            RoleStatement::Create {
                name,
                user,
                options,
            }
        }
        "alter" => {
            c.next();
            let role = c.role_spec()?;
            if c.eat("rename") {
                c.expect("to")?;
                let new_name = c.name()?;
                let RoleSpec::Name(name) = role else {
                    return Err(PgError::syntax("syntax error at or near \"RENAME\""));
                };
                RoleStatement::Rename { name, new_name }
            } else if c.peek().is_some_and(|t| {
                t.is_kw("set") || t.is_kw("reset") || t.is_kw("in") || t.is_kw("add")
            }) {
                return Err(PgError::unsupported(
                    "ALTER ROLE SET/RESET and group membership are not supported",
                ));
            } else {
                c.eat("with");
                RoleStatement::Alter {
                    role,
                    options: options(c, false)?,
                }
            }
        }
        "drop" => {
            c.next();
            let if_exists = c.eat("if");
            if if_exists {
                c.expect("exists")?;
            }
            let mut names = vec![c.name()?];
            while c.peek() == Some(&Tok::Punct(",".into())) {
                c.next();
                names.push(c.name()?);
            }
            RoleStatement::Drop { names, if_exists }
        }
        "set" => {
            let local = c.eat("local");
            c.eat("session");
            if c.eat("authorization") {
                if c.eat("default") {
                    RoleStatement::SetSessionAuthorization { role: None, local }
                } else {
                    let name = match c.peek() {
                        Some(Tok::Str(_)) => c.string()?,
                        _ => c.name()?,
                    };
                    RoleStatement::SetSessionAuthorization {
                        role: Some(name),
                        local,
                    }
                }
            } else {
                c.expect("role")?;
                match c.peek() {
                    Some(t) if t.is_kw("none") => {
                        c.next();
                        RoleStatement::SetRole { role: None, local }
                    }
                    Some(Tok::Str(_)) => RoleStatement::SetRole {
                        role: Some(c.string()?),
                        local,
                    },
                    _ => RoleStatement::SetRole {
                        role: Some(c.name()?),
                        local,
                    },
                }
            }
        }
        _ => {
            // RESET ROLE / RESET SESSION AUTHORIZATION
            if c.eat("role") {
                RoleStatement::SetRole {
                    role: None,
                    local: false,
                }
            } else {
                c.expect("session")?;
                c.expect("authorization")?;
                RoleStatement::SetSessionAuthorization {
                    role: None,
                    local: false,
                }
            }
        }
    };
    c.end()?;
    Ok(stmt)
}

fn conflicting() -> PgError {
    PgError::new(SqlState::SYNTAX_ERROR, "conflicting or redundant options")
}

fn set<T>(slot: &mut Option<T>, value: T) -> PgResult<()> {
    if slot.is_some() {
        return Err(conflicting());
    }
    *slot = Some(value);
    Ok(())
}

/// The options of CREATE ROLE (`create`) or ALTER ROLE, in any order, each
/// at most once.
fn options(c: &mut Cursor, create: bool) -> PgResult<RoleOptions> {
    let mut o = RoleOptions::default();
    while let Some(t) = c.next() {
        let Tok::Word {
            text: word,
            quoted: false,
        } = &t
        else {
            c.pos -= 1;
            return Err(c.error());
        };
        match word.as_str() {
            "superuser" => set(&mut o.superuser, true)?,
            "nosuperuser" => set(&mut o.superuser, false)?,
            "createdb" => set(&mut o.create_db, true)?,
            "nocreatedb" => set(&mut o.create_db, false)?,
            "createrole" => set(&mut o.create_role, true)?,
            "nocreaterole" => set(&mut o.create_role, false)?,
            "inherit" => set(&mut o.inherit, true)?,
            "noinherit" => set(&mut o.inherit, false)?,
            "login" => set(&mut o.login, true)?,
            "nologin" => set(&mut o.login, false)?,
            "replication" => set(&mut o.replication, true)?,
            "noreplication" => set(&mut o.replication, false)?,
            "bypassrls" => set(&mut o.bypass_rls, true)?,
            "nobypassrls" => set(&mut o.bypass_rls, false)?,
            "connection" => {
                c.expect("limit")?;
                let negative = c.peek() == Some(&Tok::Punct("-".into()));
                if negative {
                    c.next();
                }
                let n = match c.peek() {
                    Some(Tok::Number(n)) => n.parse::<i32>().ok(),
                    _ => None,
                }
                .ok_or_else(|| c.error())?;
                c.next();
                set(&mut o.conn_limit, if negative { -n } else { n })?;
            }
            "encrypted" | "password" => {
                if word == "encrypted" {
                    c.expect("password")?;
                }
                let p = if c.eat("null") {
                    if word == "encrypted" {
                        // ENCRYPTED PASSWORD takes only a string.
                        c.pos -= 1;
                        return Err(c.error());
                    }
                    None
                } else {
                    Some(c.string()?)
                };
                set(&mut o.password, p)?;
            }
            "unencrypted" => {
                return Err(
                    PgError::unsupported("UNENCRYPTED PASSWORD is no longer supported").with_hint(
                        "Remove UNENCRYPTED to store the password in encrypted form instead.",
                    ),
                )
            }
            "valid" => {
                c.expect("until")?;
                set(&mut o.valid_until, c.string()?)?;
            }
            "sysid" if create => {
                // Accepted and ignored, as PostgreSQL does (with a notice).
                match c.next() {
                    Some(Tok::Number(_)) => {}
                    _ => {
                        c.pos -= 1;
                        return Err(c.error());
                    }
                }
            }
            "in" | "role" | "admin" | "user" if create => {
                return Err(PgError::unsupported(
                    "role membership (IN ROLE, ROLE, ADMIN, USER) is not supported",
                ))
            }
            other => {
                return Err(PgError::syntax(format!(
                    "unrecognized role option \"{other}\""
                )))
            }
        }
    }
    Ok(o)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(s: &str) -> RoleStatement {
        parse(s).expect("a role statement").expect("parses")
    }

    #[test]
    fn statements() {
        assert_eq!(
            ok("CREATE USER \"Bob\" WITH PASSWORD 'x' CONNECTION LIMIT -1 VALID UNTIL 'infinity'"),
            RoleStatement::Create {
                name: "Bob".into(),
                user: true,
                options: RoleOptions {
                    password: Some(Some("x".into())),
                    conn_limit: Some(-1),
                    valid_until: Some("infinity".into()),
                    ..Default::default()
                }
            }
        );
        assert_eq!(
            ok("alter role current_user nologin password null"),
            RoleStatement::Alter {
                role: RoleSpec::CurrentUser,
                options: RoleOptions {
                    login: Some(false),
                    password: Some(None),
                    ..Default::default()
                }
            }
        );
        assert_eq!(
            ok("alter user a rename to b"),
            RoleStatement::Rename {
                name: "a".into(),
                new_name: "b".into()
            }
        );
        assert_eq!(
            ok("drop role if exists a, b"),
            RoleStatement::Drop {
                names: vec!["a".into(), "b".into()],
                if_exists: true
            }
        );
        assert_eq!(
            ok("set role none"),
            RoleStatement::SetRole {
                role: None,
                local: false
            }
        );
        assert_eq!(
            ok("reset role"),
            RoleStatement::SetRole {
                role: None,
                local: false
            }
        );
        assert_eq!(
            ok("set session authorization 'x'"),
            RoleStatement::SetSessionAuthorization {
                role: Some("x".into()),
                local: false
            }
        );
        assert!(parse("set search_path = a").is_none());
        assert!(parse("alter user mapping for x server y").is_none());
    }

    #[test]
    fn errors() {
        let err = |s: &str| parse(s).unwrap().unwrap_err();
        assert_eq!(
            err("create role a login nologin").message,
            "conflicting or redundant options"
        );
        assert_eq!(
            err("create role a foo").message,
            "unrecognized role option \"foo\""
        );
        assert_eq!(err("create role").message, "syntax error at end of input");
        assert_eq!(
            err("drop role a b").message,
            "syntax error at or near \"b\""
        );
    }
}
