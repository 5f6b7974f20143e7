//! Splitting a query string into statements and parsing each: a small
//! pre-parser handles PostgreSQL utility commands that `sqlparser` lacks or
//! parses differently (SET/SHOW/RESET, transaction control, DROP, TRUNCATE,
//! CHECKPOINT, CREATE EXTENSION, FETCH/MOVE); everything else goes to `sqlparser`.

use common::{PgError, PgResult};
use sqlparser::ast::Statement;
use sqlparser::dialect::PostgreSqlDialect;
use sqlparser::parser::Parser;

/// A statement and its byte offset in the original query string.
#[derive(Debug, Clone)]
pub struct StatementText<'a> {
    pub text: &'a str,
    pub offset: usize,
}

/// Splits at top-level semicolons, respecting quotes, comments and dollar quotes.
pub fn split_statements(sql: &str) -> Vec<StatementText<'_>> {
    let b = sql.as_bytes();
    let mut out = Vec::new();
    let mut start = 0;
    let mut i = 0;
    let mut depth = 0i32;
    while i < b.len() {
        match b[i] {
            b'\'' | b'"' => {
                let q = b[i];
                i += 1;
                while i < b.len() {
                    if b[i] == q {
                        if i + 1 < b.len() && b[i + 1] == q {
                            i += 2;
                            continue;
                        }
                        break;
                    }
                    i += 1;
                }
            }
            b'-' if b.get(i + 1) == Some(&b'-') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                i += 2;
                let mut nest = 1;
                while i < b.len() && nest > 0 {
                    if b[i] == b'*' && b.get(i + 1) == Some(&b'/') {
                        nest -= 1;
                        i += 1;
                    } else if b[i] == b'/' && b.get(i + 1) == Some(&b'*') {
                        nest += 1;
                        i += 1;
                    }
                    i += 1;
                }
                continue;
            }
            b'$' => {
                // $tag$ ... $tag$
                let mut j = i + 1;
                while j < b.len() && (b[j].is_ascii_alphanumeric() || b[j] == b'_') {
                    j += 1;
                }
                if j < b.len() && b[j] == b'$' && !(j > i + 1 && b[i + 1].is_ascii_digit()) {
                    let tag = &sql[i..=j];
                    if let Some(end) = sql[j + 1..].find(tag) {
                        i = j + 1 + end + tag.len();
                        continue;
                    }
                    i = b.len();
                    continue;
                }
            }
            b'(' => depth += 1,
            b')' => depth -= 1,
            b';' if depth <= 0 => {
                out.push(StatementText {
                    text: &sql[start..i],
                    offset: start,
                });
                start = i + 1;
            }
            _ => {}
        }
        i += 1;
    }
    out.push(StatementText {
        text: &sql[start..],
        offset: start,
    });
    out.retain(|s| !is_blank(s.text));
    out
}

/// Whether a string holds only whitespace and comments.
pub fn is_blank(s: &str) -> bool {
    let mut rest = s.trim_start();
    loop {
        if rest.is_empty() {
            return true;
        }
        if let Some(r) = rest.strip_prefix("--") {
            rest = r.split_once('\n').map(|x| x.1).unwrap_or("").trim_start();
        } else if let Some(r) = rest.strip_prefix("/*") {
            rest = r.split_once("*/").map(|x| x.1).unwrap_or("").trim_start();
        } else {
            return false;
        }
    }
}

#[derive(Debug, Clone)]
pub enum Utility {
    /// ALTER SEQUENCE name OWNED BY table.column | NONE, or OWNER TO role
    /// (what pg_dump writes; other forms are not supported yet).
    AlterSequence {
        name: Vec<String>,
        action: SequenceAlter,
    },
    Set {
        name: String,
        /// None: the default (RESET, or SET ... TO DEFAULT).
        value: Option<String>,
        local: bool,
        /// Spelled RESET (the command tag says which).
        reset: bool,
    },
    Show {
        name: String,
    },
    Transaction(PgResult<crate::transaction::TransactionOp>),
    DropTable {
        names: Vec<Vec<String>>,
        if_exists: bool,
        /// CASCADE: foreign keys of other tables referencing these go too.
        cascade: bool,
    },
    Truncate {
        names: Vec<Vec<String>>,
        /// CASCADE: tables with foreign keys referencing these are emptied too.
        cascade: bool,
    },
    /// SET CONSTRAINTS {ALL | names} {DEFERRED | IMMEDIATE}: `names` None
    /// is ALL.
    SetConstraints {
        names: Option<Vec<Vec<String>>>,
        deferred: bool,
    },
    DropView {
        names: Vec<Vec<String>>,
        if_exists: bool,
        /// CASCADE: views reading the dropped ones go too.
        cascade: bool,
    },
    DropIndex {
        names: Vec<Vec<String>>,
        if_exists: bool,
        /// CASCADE: foreign keys relying on the indexes go too.
        cascade: bool,
    },
    /// REINDEX INDEX|TABLE name (`table` true for TABLE).
    Reindex {
        table: bool,
        name: Vec<String>,
    },
    DropSequence {
        names: Vec<Vec<String>>,
        if_exists: bool,
    },
    /// DROP TYPE | DOMAIN [IF EXISTS] names [CASCADE | RESTRICT].
    DropType {
        names: Vec<Vec<String>>,
        if_exists: bool,
        cascade: bool,
        domain: bool,
    },
    /// CREATE DOMAIN, ALTER DOMAIN (`domain_stmt.rs`).
    Domain(Result<Box<crate::domain_stmt::DomainStatement>, PgError>),
    DropSchema {
        names: Vec<String>,
        if_exists: bool,
        cascade: bool,
    },
    Checkpoint,
    /// DO: an anonymous code block (`do_block.rs`).
    Do(Result<crate::do_block::DoBlock, PgError>),
    DropDatabase {
        name: String,
        if_exists: bool,
    },
    CreateExtension {
        name: String,
        if_not_exists: bool,
    },
    /// Accepted and ignored (DISCARD ALL etc.); the string is the tag.
    NoOp(String),
    /// ALTER SYSTEM SET name = value / RESET name (value None) / RESET ALL
    /// (name None).
    AlterSystem {
        name: Option<String>,
        value: Option<String>,
    },
    /// ANALYZE [VERBOSE] [table [(columns)], ...].
    Analyze {
        verbose: bool,
        vacuum: bool,
        targets: Vec<(Vec<String>, Vec<String>)>,
    },
    /// VACUUM (`vacuum.rs`), or the error a malformed one fails with.
    Vacuum(Result<crate::vacuum::VacuumStmt, PgError>),
    /// FETCH or MOVE on a cursor, or the word a malformed one fails at.
    Fetch(Result<crate::cursor::FetchStmt, String>),
    /// CREATE/ALTER/DROP ROLE, SET ROLE and the like (`role.rs`), or the
    /// error a malformed one fails with.
    Role(Result<crate::role::RoleStatement, PgError>),
    /// CREATE/DROP TRIGGER, ALTER TABLE ... ENABLE/DISABLE TRIGGER
    /// (`trigger_stmt.rs`), or the error a malformed one fails with.
    Trigger(Result<crate::trigger_stmt::TriggerStatement, PgError>),
    /// ALTER TABLE [ONLY] name ALTER [COLUMN] c SET STORAGE s | SET
    /// COMPRESSION m [, ...] (every action one of those two; sqlparser
    /// knows neither).
    AlterColumnToast {
        table: Vec<String>,
        /// (column, true for STORAGE / false for COMPRESSION, the value).
        actions: Vec<(String, bool, String)>,
    },
    /// LOCK [TABLE] [ONLY] name [*] [, ...] [IN mode MODE] [NOWAIT]; the
    /// mode, or the word a malformed mode fails at.
    Lock {
        names: Vec<Vec<String>>,
        mode: Result<txn::lock::LockMode, String>,
        nowait: bool,
    },
}

#[derive(Debug, Clone)]
pub enum ParsedStatement {
    Utility(Utility),
    /// A sqlparser statement and where its text lies in the query string
    /// (for error positions).
    Sql(Box<Statement>, SourceMap),
    /// COPY, whose grammar sqlparser covers only in part.
    Copy(Box<crate::copy::CopyStatement>),
}

/// Maps sqlparser line/column locations inside one statement to PostgreSQL's
/// error positions: 1-based character offsets in the whole query string.
#[derive(Debug, Clone, Default)]
pub struct SourceMap {
    /// Characters in the whole string before the statement.
    base: usize,
    /// The statement's characters.
    chars: Vec<char>,
    /// Index in `chars` of each line start.
    line_starts: Vec<usize>,
}

impl SourceMap {
    pub fn new(full: &str, stmt: &StatementText<'_>) -> SourceMap {
        let base = full[..stmt.offset.min(full.len())].chars().count();
        let chars: Vec<char> = stmt.text.chars().collect();
        let mut line_starts = vec![0];
        for (i, c) in chars.iter().enumerate() {
            if *c == '\n' {
                line_starts.push(i + 1);
            }
        }
        SourceMap {
            base,
            chars,
            line_starts,
        }
    }

    /// Index in the statement's characters of a sqlparser location (line
    /// and column from 1); None for the empty location of untracked nodes.
    fn index(&self, loc: sqlparser::tokenizer::Location) -> Option<usize> {
        if loc.line == 0 || loc.column == 0 {
            return None;
        }
        let start = self.line_starts.get(loc.line as usize - 1)?;
        Some(start + loc.column as usize - 1)
    }

    /// The error position (1-based character offset in the whole string) of
    /// a sqlparser location.
    pub fn position(&self, loc: sqlparser::tokenizer::Location) -> Option<u32> {
        self.index(loc).map(|i| (self.base + i + 1) as u32)
    }

    /// The position of the first `needle` between two locations (an
    /// operator between its operands), skipping comments' text naively.
    pub fn find_between(
        &self,
        from: sqlparser::tokenizer::Location,
        to: sqlparser::tokenizer::Location,
        needle: &str,
    ) -> Option<u32> {
        let (a, b) = (self.index(from)?, self.index(to)?.min(self.chars.len()));
        let needle: Vec<char> = needle.chars().collect();
        if a >= b || needle.is_empty() {
            return None;
        }
        (a..b)
            .find(|&i| self.chars[i..].starts_with(&needle))
            .map(|i| (self.base + i + 1) as u32)
    }
}

impl SourceMap {
    /// The position of the last occurrence (ASCII case ignored) of
    /// `words[0]` that is followed by the others in order, the last of
    /// them before `to`: a clause's keywords, found back from an element
    /// of the clause (`["on", "conflict"]`).
    pub fn rfind_before(&self, to: sqlparser::tokenizer::Location, words: &[&str]) -> Option<u32> {
        let mut end = self.index(to)?.min(self.chars.len());
        let mut at = None;
        for w in words.iter().rev() {
            let w: Vec<char> = w.chars().collect();
            let i = (0..end).rev().find(|&i| {
                i + w.len() <= end
                    && self.chars[i..i + w.len()]
                        .iter()
                        .zip(&w)
                        .all(|(a, b)| a.eq_ignore_ascii_case(b))
            })?;
            at = Some(i);
            end = i;
        }
        at.map(|i| (self.base + i + 1) as u32)
    }
}

/// Simple tokens for the pre-parser: words (lowercased unless quoted),
/// strings, numbers and punctuation.
pub(crate) fn tokens(s: &str) -> Option<Vec<(String, bool)>> {
    let mut out = Vec::new();
    let mut it = s.char_indices().peekable();
    while let Some(&(i, c)) = it.peek() {
        if c.is_whitespace() {
            it.next();
        } else if c == '-' && s[i..].starts_with("--") {
            while let Some(&(_, c)) = it.peek() {
                if c == '\n' {
                    break;
                }
                it.next();
            }
        } else if c == '\'' || c == '"' {
            it.next();
            let mut v = String::new();
            loop {
                match it.next() {
                    Some((_, ch)) if ch == c => {
                        if it.peek().map(|x| x.1) == Some(c) {
                            it.next();
                            v.push(c);
                        } else {
                            break;
                        }
                    }
                    Some((_, ch)) => v.push(ch),
                    None => return None,
                }
            }
            out.push((v, true));
        } else if c.is_alphanumeric() || c == '_' || c == '.' || c == '-' || c == '+' {
            let mut v = String::new();
            while let Some(&(_, ch)) = it.peek() {
                if ch.is_alphanumeric()
                    || ch == '_'
                    || ch == '.'
                    || ch == '-'
                    || ch == '+'
                    || ch == '$'
                {
                    v.push(ch);
                    it.next();
                } else {
                    break;
                }
            }
            out.push((v.to_lowercase(), false));
        } else {
            out.push((c.to_string(), false));
            it.next();
        }
    }
    Some(out)
}

/// ANALYZE: options (parenthesised or the bare VERBOSE), then tables with
/// optional column lists. VACUUM is `vacuum.rs`.
fn parse_analyze(toks: &[(String, bool)]) -> Option<Utility> {
    let vacuum = false;
    let word = |i: usize| toks.get(i).filter(|t| !t.1).map(|t| t.0.as_str());
    let (mut verbose, mut analyze) = (false, true);
    let mut i = 1;
    if word(i) == Some("(") {
        i += 1;
        loop {
            match word(i)? {
                ")" => break,
                "," => {}
                "verbose" => verbose = true,
                "analyze" | "analyse" => analyze = true,
                // Options that change nothing here (no dead tuples to report,
                // no locks to skip, no true/false values).
                "skip_locked"
                | "full"
                | "freeze"
                | "true"
                | "on"
                | "1"
                | "disable_page_skipping" => {}
                _ => return None,
            }
            i += 1;
        }
        i += 1;
    } else {
        while let Some(w) = word(i) {
            match w {
                "verbose" => verbose = true,
                _ => break,
            }
            i += 1;
        }
    }
    if !analyze {
        return None;
    }
    let targets = analyze_targets(toks, i)?;
    Some(Utility::Analyze {
        verbose,
        vacuum,
        targets,
    })
}

/// Tables with optional column lists from token `i` to the end (ANALYZE's
/// and VACUUM's relation lists).
pub(crate) fn analyze_targets(
    toks: &[(String, bool)],
    mut i: usize,
) -> Option<Vec<(Vec<String>, Vec<String>)>> {
    let word = |i: usize| toks.get(i).filter(|t| !t.1).map(|t| t.0.as_str());
    let mut targets = Vec::new();
    while i < toks.len() {
        let (name, quoted) = &toks[i];
        if !quoted && (name == "(" || name == ")" || name == ",") {
            return None;
        }
        let mut parts: Vec<String> = if *quoted {
            vec![name.clone()]
        } else {
            name.split('.').map(str::to_string).collect()
        };
        i += 1;
        loop {
            // "schema"."table": a quoted part after a trailing dot.
            if parts.last().is_some_and(|p| p.is_empty()) && i < toks.len() {
                parts.pop();
                let (n, q) = &toks[i];
                if *q {
                    parts.push(n.clone());
                } else {
                    parts.extend(n.split('.').map(str::to_string));
                }
                i += 1;
            } else if let Some(rest) = word(i).and_then(|w| w.strip_prefix('.')) {
                // A dot (and maybe the next part) right after a quoted part.
                parts.extend(rest.split('.').map(str::to_string));
                i += 1;
            } else {
                break;
            }
        }
        if parts.iter().any(String::is_empty) || parts.len() > 3 {
            return None;
        }
        let mut cols = Vec::new();
        if word(i) == Some("(") {
            i += 1;
            loop {
                let (c, _) = toks.get(i)?;
                cols.push(c.clone());
                i += 1;
                match word(i)? {
                    "," => i += 1,
                    ")" => break,
                    _ => return None,
                }
            }
            i += 1;
        }
        targets.push((parts, cols));
        match word(i) {
            Some(",") => i += 1,
            None if i >= toks.len() => {}
            _ => return None,
        }
    }
    Some(targets)
}

fn qualified_names(toks: &[(String, bool)]) -> Option<Vec<Vec<String>>> {
    let mut names = Vec::new();
    for part in toks.split(|t| t.0 == "," && !t.1) {
        let mut name = Vec::new();
        for (t, quoted) in part {
            if *quoted {
                name.push(t.clone());
            } else {
                for p in t.split('.') {
                    if !p.is_empty() {
                        name.push(p.to_string());
                    }
                }
            }
        }
        if name.is_empty() || name.len() > 3 {
            return None;
        }
        names.push(name);
    }
    Some(names)
}

/// First keyword of a statement, lowercased (skipping blanks and comments).
fn first_keyword(text: &str) -> String {
    let mut rest = text.trim_start();
    loop {
        if let Some(r) = rest.strip_prefix("--") {
            rest = r.split_once('\n').map(|x| x.1).unwrap_or("").trim_start();
        } else if let Some(r) = rest.strip_prefix("/*") {
            rest = r.split_once("*/").map(|x| x.1).unwrap_or("").trim_start();
        } else {
            break;
        }
    }
    rest.chars()
        .take_while(|c| c.is_ascii_alphabetic())
        .take(16)
        .collect::<String>()
        .to_ascii_lowercase()
}

/// What ALTER SEQUENCE changes.
#[derive(Debug, Clone)]
pub enum SequenceAlter {
    /// OWNED BY table.column (the name's parts), or NONE (None).
    OwnedBy(Option<Vec<String>>),
    OwnerTo(String),
}

/// ALTER SEQUENCE's forms that pg_dump writes; None for any other (which
/// then reaches sqlparser and fails as a syntax error).
fn parse_alter_sequence(toks: &[(String, bool)], words: &[&str]) -> Option<Utility> {
    let split = |at: &str| words.iter().position(|w| *w == at);
    let (name_end, action) = match (split("owned"), split("owner")) {
        (Some(i), _) if words.get(i + 1) == Some(&"by") => {
            let target = &toks[i + 2..];
            let action = if target.len() == 1 && words[i + 2] == "none" {
                SequenceAlter::OwnedBy(None)
            } else {
                let mut names = qualified_names(target)?;
                if names.len() != 1 || names[0].len() < 2 {
                    return None;
                }
                SequenceAlter::OwnedBy(Some(names.remove(0)))
            };
            (i, action)
        }
        (_, Some(i)) if words.get(i + 1) == Some(&"to") && toks.len() == i + 3 => {
            (i, SequenceAlter::OwnerTo(toks[i + 2].0.clone()))
        }
        _ => return None,
    };
    let mut names = qualified_names(&toks[2..name_end])?;
    if names.len() != 1 {
        return None;
    }
    Some(Utility::AlterSequence {
        name: names.remove(0),
        action,
    })
}

pub(crate) fn parse_utility(text: &str) -> Option<Utility> {
    if first_keyword(text) == "do" {
        return crate::do_block::parse(text).map(Utility::Do);
    }
    // Only utility commands go through the pre-parser's tokenizer.
    if !matches!(
        first_keyword(text).as_str(),
        "begin"
            | "start"
            | "commit"
            | "end"
            | "rollback"
            | "abort"
            | "checkpoint"
            | "discard"
            | "show"
            | "reset"
            | "set"
            | "drop"
            | "truncate"
            | "create"
            | "alter"
            | "analyze"
            | "analyse"
            | "vacuum"
            | "fetch"
            | "move"
            | "lock"
            | "reindex"
            | "savepoint"
            | "release"
    ) {
        return None;
    }
    if let Some(r) = crate::role::parse(text) {
        return Some(Utility::Role(r));
    }
    if let Some(t) = crate::trigger_stmt::parse(text) {
        return Some(Utility::Trigger(t));
    }
    if matches!(first_keyword(text).as_str(), "create" | "alter") {
        if let Some(d) = crate::domain_stmt::parse(text) {
            return Some(Utility::Domain(d.map(Box::new)));
        }
    }
    let toks = tokens(text)?;
    let words: Vec<&str> = toks
        .iter()
        .map(|(t, q)| if *q { "" } else { t.as_str() })
        .collect();
    if crate::transaction::is_transaction_statement(&words) {
        return Some(Utility::Transaction(crate::transaction::parse(&toks)));
    }
    match words.as_slice() {
        ["checkpoint"] => Some(Utility::Checkpoint),
        ["fetch" | "move", ..] => Some(Utility::Fetch(crate::cursor::parse_fetch(&toks))),
        ["analyze" | "analyse", ..] => parse_analyze(&toks),
        ["vacuum", ..] => crate::vacuum::parse(&toks).map(Utility::Vacuum),
        ["alter", "system", "reset", "all"] => Some(Utility::AlterSystem {
            name: None,
            value: None,
        }),
        ["alter", "system", "reset", _] => Some(Utility::AlterSystem {
            name: Some(toks[3].0.to_lowercase()),
            value: None,
        }),
        ["alter", "system", "set", _, "=" | "to", _, ..] => {
            let vals: Vec<String> = toks[5..]
                .iter()
                .filter(|t| t.0 != "," || t.1)
                .map(|t| t.0.clone())
                .collect();
            let default = vals.len() == 1 && vals[0] == "default" && !toks[5].1;
            Some(Utility::AlterSystem {
                name: Some(toks[3].0.to_lowercase()),
                value: (!default).then(|| vals.join(", ")),
            })
        }
        ["discard", "all"] => Some(Utility::NoOp("DISCARD ALL".into())),
        ["discard", "temp" | "temporary"] => Some(Utility::NoOp("DISCARD TEMP".into())),
        ["alter", "sequence", ..] => parse_alter_sequence(&toks, &words),
        ["show", rest @ ..] if !rest.is_empty() => {
            let name = toks[1..]
                .iter()
                .map(|t| t.0.clone())
                .collect::<Vec<_>>()
                .join(" ");
            Some(Utility::Show { name })
        }
        ["reset", "all"] => Some(Utility::Set {
            name: "all".into(),
            value: None,
            local: false,
            reset: true,
        }),
        ["reset", _] => Some(Utility::Set {
            name: toks[1].0.to_lowercase(),
            value: None,
            local: false,
            reset: true,
        }),
        ["set", "constraints", .., mode @ ("deferred" | "immediate")] => {
            let list = &toks[2..toks.len() - 1];
            let names = match words.get(2..words.len() - 1) {
                Some(["all"]) => None,
                _ => Some(qualified_names(list)?),
            };
            Some(Utility::SetConstraints {
                names,
                deferred: *mode == "deferred",
            })
        }
        ["set", rest @ ..] => {
            let (local, rest, off) = match rest {
                ["local", r @ ..] => (true, r, 2),
                ["session", r @ ..] => (false, r, 2),
                r => (false, r, 1),
            };
            if rest.first() == Some(&"transaction") {
                return None;
            }
            if rest.len() >= 2 && rest[0] == "time" && rest[1] == "zone" {
                let vals = &toks[off + 2..];
                let value = vals
                    .iter()
                    .map(|t| t.0.clone())
                    .collect::<Vec<_>>()
                    .join(" ");
                let value = if value == "local" || value == "default" {
                    None
                } else {
                    Some(value)
                };
                return Some(Utility::Set {
                    name: "timezone".into(),
                    value,
                    local,
                    reset: false,
                });
            }
            // SET NAMES 'x': client_encoding (no value or DEFAULT resets it).
            if rest.first() == Some(&"names") {
                let value = match &toks[off + 1..] {
                    [] => None,
                    [(v, quoted)] if !quoted && v.eq_ignore_ascii_case("default") => None,
                    [(v, _)] => Some(v.clone()),
                    _ => return None,
                };
                return Some(Utility::Set {
                    name: "client_encoding".into(),
                    value,
                    local,
                    reset: false,
                });
            }
            let name = toks.get(off)?.0.to_lowercase();
            let sep = toks.get(off + 1)?;
            if sep.1 || (sep.0 != "to" && sep.0 != "=") {
                return None;
            }
            let vals: Vec<String> = toks[off + 2..]
                .iter()
                .filter(|t| t.0 != "," || t.1)
                .map(|t| t.0.clone())
                .collect();
            if vals.is_empty() {
                return None;
            }
            let value = vals.join(", ");
            let value = if vals.len() == 1 && vals[0] == "default" && !toks[off + 2].1 {
                None
            } else {
                Some(value)
            };
            Some(Utility::Set {
                name,
                value,
                local,
                reset: false,
            })
        }
        ["drop", "table", "if", "exists", ..] => Some(Utility::DropTable {
            names: qualified_names(strip_behavior(&toks[4..]))?,
            if_exists: true,
            cascade: ends_with_cascade(&toks),
        }),
        ["drop", "table", ..] => Some(Utility::DropTable {
            names: qualified_names(strip_behavior(&toks[2..]))?,
            if_exists: false,
            cascade: ends_with_cascade(&toks),
        }),
        ["drop", kind @ ("type" | "domain"), "if", "exists", ..] => Some(Utility::DropType {
            names: qualified_names(strip_behavior(&toks[4..]))?,
            if_exists: true,
            cascade: ends_with_cascade(&toks),
            domain: *kind == "domain",
        }),
        ["drop", kind @ ("type" | "domain"), ..] => Some(Utility::DropType {
            names: qualified_names(strip_behavior(&toks[2..]))?,
            if_exists: false,
            cascade: ends_with_cascade(&toks),
            domain: *kind == "domain",
        }),
        ["drop", "sequence", "if", "exists", ..] => Some(Utility::DropSequence {
            names: qualified_names(strip_behavior(&toks[4..]))?,
            if_exists: true,
        }),
        ["drop", "sequence", ..] => Some(Utility::DropSequence {
            names: qualified_names(strip_behavior(&toks[2..]))?,
            if_exists: false,
        }),
        ["drop", "index", ..] => {
            // CONCURRENTLY changes only how long others wait.
            let skip = if words.get(2) == Some(&"concurrently") {
                3
            } else {
                2
            };
            let (if_exists, rest) = match words.get(skip..skip + 2) {
                Some(["if", "exists"]) => (true, &toks[skip + 2..]),
                _ => (false, &toks[skip..]),
            };
            Some(Utility::DropIndex {
                names: qualified_names(strip_behavior(rest))?,
                if_exists,
                cascade: ends_with_cascade(rest),
            })
        }
        ["reindex", kind @ ("index" | "table"), ..] => {
            let skip = if words.get(2) == Some(&"concurrently") {
                3
            } else {
                2
            };
            let mut names = qualified_names(&toks[skip..])?;
            if names.len() != 1 {
                return None;
            }
            Some(Utility::Reindex {
                table: *kind == "table",
                name: names.remove(0),
            })
        }
        ["drop", "view", ..] => {
            let if_exists = words.get(2..4) == Some(&["if", "exists"]);
            let rest = &toks[if if_exists { 4 } else { 2 }..];
            Some(Utility::DropView {
                names: qualified_names(strip_behavior(rest))?,
                if_exists,
                cascade: rest.last().is_some_and(|t| !t.1 && t.0 == "cascade"),
            })
        }
        ["drop", "schema", ..] => {
            let (if_exists, rest) = match words.get(2..4) {
                Some(["if", "exists"]) => (true, &toks[4..]),
                _ => (false, &toks[2..]),
            };
            let cascade = rest.last().is_some_and(|t| !t.1 && t.0 == "cascade");
            let names = qualified_names(strip_behavior(rest))?
                .into_iter()
                .map(|n| match <[String; 1]>::try_from(n) {
                    Ok([name]) => Some(name),
                    Err(_) => None,
                })
                .collect::<Option<Vec<_>>>()?;
            Some(Utility::DropSchema {
                names,
                if_exists,
                cascade,
            })
        }
        ["lock", ..] => parse_lock(&toks),
        ["alter", "table", ..] => parse_alter_column_toast(&toks),
        ["truncate", "table", ..] => Some(Utility::Truncate {
            names: qualified_names(strip_behavior(&toks[2..]))?,
            cascade: ends_with_cascade(&toks),
        }),
        ["truncate", ..] => Some(Utility::Truncate {
            names: qualified_names(strip_behavior(&toks[1..]))?,
            cascade: ends_with_cascade(&toks),
        }),
        ["drop", "database", "if", "exists", _] => Some(Utility::DropDatabase {
            name: toks[4].0.clone(),
            if_exists: true,
        }),
        ["drop", "database", _] => Some(Utility::DropDatabase {
            name: toks[2].0.clone(),
            if_exists: false,
        }),
        ["create", "extension", "if", "not", "exists", name, ..] => {
            Some(Utility::CreateExtension {
                name: name.to_string(),
                if_not_exists: true,
            })
        }
        ["create", "extension", name, ..] => Some(Utility::CreateExtension {
            name: name.to_string(),
            if_not_exists: false,
        }),
        _ => None,
    }
}

/// ALTER TABLE [ONLY] name followed only by `ALTER [COLUMN] c SET
/// STORAGE|COMPRESSION value` actions; None for anything else (sqlparser's).
fn parse_alter_column_toast(toks: &[(String, bool)]) -> Option<Utility> {
    let word = |i: usize| toks.get(i).filter(|t| !t.1).map(|t| t.0.as_str());
    let mut i = 2;
    if word(i) == Some("only") {
        i += 1;
    }
    let name_end = (i..toks.len()).find(|&j| word(j) == Some("alter"))?;
    let mut table = qualified_names(&toks[i..name_end])?;
    if table.len() != 1 {
        return None;
    }
    let mut actions = Vec::new();
    for action in toks[name_end..].split(|t| t.0 == "," && !t.1) {
        let w = |k: usize| action.get(k).filter(|t| !t.1).map(|t| t.0.as_str());
        let k = if w(1) == Some("column") { 2 } else { 1 };
        let (Some("alter"), Some(column), Some("set"), Some(what), Some(value), None) = (
            w(0),
            action.get(k).map(|t| t.0.as_str()),
            w(k + 1),
            w(k + 2),
            action.get(k + 3).map(|t| t.0.as_str()),
            action.get(k + 4),
        ) else {
            return None;
        };
        let storage = match what {
            "storage" => true,
            "compression" => false,
            _ => return None,
        };
        actions.push((column.to_string(), storage, value.to_string()));
    }
    Some(Utility::AlterColumnToast {
        table: table.remove(0),
        actions,
    })
}

/// LOCK [TABLE] [ONLY] name [*] [, ...] [IN mode MODE] [NOWAIT].
fn parse_lock(toks: &[(String, bool)]) -> Option<Utility> {
    let word = |i: usize| toks.get(i).filter(|t| !t.1).map(|t| t.0.as_str());
    let mut i = 1;
    if word(i) == Some("table") {
        i += 1;
    }
    if word(i) == Some("only") {
        i += 1;
    }
    let names_end = (i..toks.len())
        .find(|&k| matches!(word(k), Some("in" | "nowait")))
        .unwrap_or(toks.len());
    // `name *` asks for descendant tables too, which are all there is.
    let names: Vec<(String, bool)> = toks[i..names_end]
        .iter()
        .filter(|t| t.1 || t.0 != "*")
        .cloned()
        .collect();
    let names = qualified_names(&names)?;
    i = names_end;
    let mut mode = Ok(txn::lock::LockMode::AccessExclusive);
    if word(i) == Some("in") {
        let start = i + 1;
        let end = (start..toks.len()).find(|&k| word(k) == Some("mode"))?;
        let words: Vec<&str> = toks[start..end].iter().map(|t| t.0.as_str()).collect();
        mode = txn::lock::LockMode::from_sql(&words.join(" ")).ok_or_else(|| {
            // The grammar fails at the first word no mode goes on with.
            let names = txn::lock::LockMode::ALL.map(|m| m.sql_name());
            let fits = |k: usize| {
                names.iter().any(|n| {
                    let n: Vec<&str> = n.split(' ').collect();
                    n.len() >= k && n[..k] == words[..k]
                })
            };
            let bad = (1..=words.len()).find(|&k| !fits(k));
            match bad {
                Some(k) => words[k - 1].to_string(),
                None => "mode".to_string(),
            }
        });
        i = end + 1;
    }
    let nowait = word(i) == Some("nowait");
    if nowait {
        i += 1;
    }
    if i != toks.len() {
        return None;
    }
    Some(Utility::Lock {
        names,
        mode,
        nowait,
    })
}

/// Whether the statement's trailing options say CASCADE (TRUNCATE's
/// RESTART/CONTINUE IDENTITY may stand before it).
fn ends_with_cascade(toks: &[(String, bool)]) -> bool {
    let rest = strip_behavior(toks);
    toks[rest.len()..].iter().any(|t| !t.1 && t.0 == "cascade")
}

fn strip_behavior(toks: &[(String, bool)]) -> &[(String, bool)] {
    let mut t = toks;
    while let Some(last) = t.last() {
        if !last.1
            && matches!(
                last.0.as_str(),
                "cascade" | "restrict" | "continue" | "identity" | "restart"
            )
        {
            t = &t[..t.len() - 1];
        } else {
            break;
        }
    }
    t
}

/// Parses one statement. `offset` is its position in the whole query string,
/// so syntax error positions are reported relative to what the client sent.
pub fn parse_statement(full: &str, stmt: &StatementText<'_>) -> PgResult<ParsedStatement> {
    if let Some(u) = parse_utility(stmt.text) {
        return Ok(ParsedStatement::Utility(u));
    }
    if crate::copy::is_copy(stmt.text) {
        return crate::copy::parse_copy(full, stmt).map(|c| ParsedStatement::Copy(Box::new(c)));
    }
    parse_sql(full, stmt)
}

/// Whether a statement that failed to parse would parse without the depth
/// limit: some of sqlparser's backtracking paths (nested CASE) report its
/// recursion limit as a syntax error. Only a statement at least one character
/// per allowed level long can be that deep, so short ones are not parsed again.
fn nested_too_deep(text: &str) -> bool {
    // Past a few MB the answer is not worth a stack of gigabytes.
    if text.len() < common::stack_depth::max_levels() || text.len() > 4 << 20 {
        return false;
    }
    let stack = text.len() * 256 + (1 << 20);
    stacker::grow(stack, || {
        let dialect = PostgreSqlDialect {};
        Parser::new(&dialect)
            .with_recursion_limit(text.len())
            .try_with_sql(text)
            .and_then(|mut p| p.parse_statements())
            .is_ok()
    })
}

/// Statements longer than this are dropped on a stack of their own.
const DEEP_DROP_TEXT: usize = 256 * 1024;

/// Drops a parsed statement. sqlparser's trees drop recursively, one frame
/// per level, and a long statement can nest a level every two characters
/// (`1+1+...` is parsed without recursion into a left-deep tree), deeper than
/// any thread stack: a long one is dropped on a stack sized for its length.
pub fn drop_parsed(parsed: ParsedStatement) {
    let len = match &parsed {
        ParsedStatement::Sql(_, src) => src.chars.len(),
        _ => 0,
    };
    if len <= DEEP_DROP_TEXT {
        drop(parsed);
        return;
    }
    // At most one level per two characters, a few hundred bytes a level.
    let stack = (len / 2) * 256 + (1 << 20);
    stacker::grow(stack, move || drop(parsed));
}

/// sqlparser reads `TABLE name` (a query body) as three tokens even when
/// the name is unqualified, dropping the two after it (`(TABLE t)` loses
/// its parenthesis): two filler tokens are put after an unqualified name.
fn pad_table_query(
    tokens: Vec<sqlparser::tokenizer::TokenWithSpan>,
) -> Vec<sqlparser::tokenizer::TokenWithSpan> {
    use sqlparser::tokenizer::{Token, TokenWithSpan};
    let solid = crate::tokens::Solid::new(&tokens);
    let mut pad_after = Vec::new();
    for k in 0..solid.len() {
        if solid.word(k) != "TABLE" {
            continue;
        }
        // Where a query body starts: the statement's start, a parenthesis,
        // or a set operation.
        let body_start = k == 0
            || solid.is(k - 1, &Token::LParen)
            || matches!(
                solid.word(k - 1).as_str(),
                "UNION" | "INTERSECT" | "EXCEPT" | "ALL" | "DISTINCT"
            );
        let name_is_word = matches!(solid.token(k + 1), Some(Token::Word(_)));
        if body_start && name_is_word && !solid.is(k + 2, &Token::Period) {
            pad_after.push(solid.position(k + 1));
        }
    }
    if pad_after.is_empty() {
        return tokens;
    }
    let mut out = Vec::with_capacity(tokens.len() + pad_after.len());
    for (i, t) in tokens.into_iter().enumerate() {
        let span = t.span;
        out.push(t);
        if pad_after.contains(&i) {
            for _ in 0..2 {
                out.push(TokenWithSpan {
                    token: Token::Comma,
                    span,
                });
            }
        }
    }
    out
}

/// Parses one statement that is not a utility statement, with sqlparser.
pub(crate) fn parse_sql(full: &str, stmt: &StatementText<'_>) -> PgResult<ParsedStatement> {
    let dialect = PostgreSqlDialect {};
    // sqlparser grows its stack on the heap while it recurses; its own limit
    // is set to ours so deep nesting ends as 54001, not a syntax error.
    let parse = || {
        let tokens = sqlparser::tokenizer::Tokenizer::new(&dialect, stmt.text)
            .with_unescape(true)
            .tokenize_with_location()?;
        Parser::new(&dialect)
            .with_recursion_limit(common::stack_depth::max_levels())
            .with_tokens_with_locations(crate::seqopts::reorder_identity_options(
                crate::seqopts::reorder_sequence_options(crate::window::rewrite_exclusions(
                    crate::group_by::rewrite_tokens(crate::group_by::flatten_nested_grouping_sets(
                        crate::group_by::rewrite_fetch_sign(crate::locking::rewrite_tokens(
                            crate::srf::rewrite_rows_from(crate::variadic::rewrite_variadic_args(
                                crate::cte_search::rewrite_search_cycle(
                                    crate::unicode_ident::rewrite_unicode_identifiers(
                                        pad_table_query(tokens),
                                    ),
                                ),
                            )),
                        )),
                    )),
                )),
            ))
            .parse_statements()
    };
    // A failed parse drops its partial tree inside sqlparser, recursively: a
    // long statement is parsed on a stack sized for its length (as it is
    // dropped, see drop_parsed).
    let parsed = if stmt.text.len() > DEEP_DROP_TEXT {
        stacker::grow(stmt.text.len() * 128 + (1 << 20), parse)
    } else {
        parse()
    };
    match parsed {
        Ok(mut v) if v.len() == 1 => Ok(ParsedStatement::Sql(
            Box::new(v.remove(0)),
            SourceMap::new(full, stmt),
        )),
        Ok(v) if v.is_empty() => Err(PgError::syntax("syntax error at end of input")),
        Ok(_) => Err(PgError::syntax("cannot parse multiple statements here")),
        Err(sqlparser::parser::ParserError::RecursionLimitExceeded) => {
            Err(common::stack_depth::too_deep_here())
        }
        Err(_) if nested_too_deep(stmt.text) => Err(common::stack_depth::too_deep_here()),
        Err(e) => Err(syntax_error(full, stmt, &e.to_string())),
    }
}

/// Turns a sqlparser message ("Expected: X, found: Y at Line: 1, Column: 8")
/// into PostgreSQL's form ("syntax error at or near "Y"", position).
fn syntax_error(full: &str, stmt: &StatementText<'_>, msg: &str) -> PgError {
    let (body, pos) = match msg.rfind(" at Line: ") {
        Some(i) => {
            let loc = &msg[i + " at Line: ".len()..];
            let mut parts = loc.split(", Column: ");
            let line: usize = parts
                .next()
                .and_then(|l| l.trim().parse().ok())
                .unwrap_or(1);
            let col: usize = parts
                .next()
                .and_then(|c| c.trim().parse().ok())
                .unwrap_or(1);
            (&msg[..i], Some((line, col)))
        }
        None => (msg, None),
    };
    let found = body.rsplit_once("found: ").map(|x| x.1.trim());
    let message = match found {
        Some("EOF") | None if body.contains("EOF") => "syntax error at end of input".to_string(),
        Some(tok) => format!("syntax error at or near \"{}\"", tok.trim_matches('"')),
        None => format!(
            "syntax error: {}",
            body.trim_start_matches("sql parser error: ")
        ),
    };
    let mut err = PgError::syntax(message);
    // Character position (1-based) of the offending token in the whole string.
    let char_pos = match pos {
        Some((line, col)) => {
            let mut offset = 0;
            for (n, l) in stmt.text.split_inclusive('\n').enumerate() {
                if n + 1 == line {
                    offset += l
                        .chars()
                        .take(col.saturating_sub(1))
                        .map(char::len_utf8)
                        .sum::<usize>();
                    break;
                }
                offset += l.len();
            }
            Some(
                full[..(stmt.offset + offset).min(full.len())]
                    .chars()
                    .count()
                    + 1,
            )
        }
        None => None,
    };
    let char_pos = char_pos.unwrap_or_else(|| full.trim_end().chars().count() + 1);
    err = err.with_position(char_pos as u32);
    err
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_statements() {
        let s = "select 1; select 'a;b'; -- c;\n select $$x;y$$;  ";
        let v: Vec<_> = split_statements(s)
            .iter()
            .map(|x| x.text.trim().to_string())
            .collect();
        assert_eq!(
            v,
            vec!["select 1", "select 'a;b'", "-- c;\n select $$x;y$$"]
        );
    }

    #[test]
    fn syntax_error_has_position() {
        let q = "select 1; selec 2";
        let parts = split_statements(q);
        let e = parse_statement(q, &parts[1]).unwrap_err();
        assert_eq!(e.code, common::SqlState::SYNTAX_ERROR);
        assert_eq!(e.message, "syntax error at or near \"selec\"");
        assert_eq!(e.position, Some(11));
    }

    #[test]
    fn utilities() {
        assert!(matches!(
            parse_utility("SET search_path TO public, x"),
            Some(Utility::Set { .. })
        ));
        assert!(matches!(
            parse_utility("drop table if exists a, b cascade"),
            Some(Utility::DropTable {
                if_exists: true,
                cascade: true,
                ..
            })
        ));
        assert!(matches!(
            parse_utility("truncate a restart identity cascade"),
            Some(Utility::Truncate { cascade: true, .. })
        ));
        assert!(matches!(
            parse_utility("truncate a restrict"),
            Some(Utility::Truncate { cascade: false, .. })
        ));
        assert!(matches!(
            parse_utility("SET CONSTRAINTS ALL IMMEDIATE"),
            Some(Utility::SetConstraints {
                names: None,
                deferred: false
            })
        ));
        match parse_utility("set constraints s.c1, \"C2\" deferred") {
            Some(Utility::SetConstraints {
                names: Some(n),
                deferred: true,
            }) => assert_eq!(
                n,
                vec![vec!["s".to_string(), "c1".into()], vec!["C2".into()]]
            ),
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            parse_utility("show all"),
            Some(Utility::Show { .. })
        ));
    }
}
