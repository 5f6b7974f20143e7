//! VACUUM's grammar (PostgreSQL 15's VacuumStmt): options in parentheses
//! (`name [value]`, comma-separated) or the old bare keywords
//! `[FULL] [FREEZE] [VERBOSE] [ANALYZE]`, then tables with optional column
//! lists.

use common::{PgError, SqlState};

/// A parsed VACUUM.
#[derive(Debug, Clone, PartialEq)]
pub struct VacuumStmt {
    pub verbose: bool,
    pub analyze: bool,
    /// TRUNCATE option: cut empty pages off the end (default true).
    pub truncate: bool,
    /// DISABLE_PAGE_SKIPPING or FREEZE: visit every page, all-visible ones
    /// too (PostgreSQL's aggressive VACUUM).
    pub scan_all: bool,
    /// Tables (qualified name parts) and their column lists.
    pub targets: Vec<(Vec<String>, Vec<String>)>,
}

fn syntax(msg: impl Into<String>) -> PgError {
    PgError::new(SqlState::SYNTAX_ERROR, msg)
}

/// A boolean option's value as PostgreSQL's defGetBoolean reads it.
fn boolean(option: &str, value: Option<&str>) -> Result<bool, PgError> {
    match value.map(str::to_ascii_lowercase).as_deref() {
        None | Some("true" | "on" | "1") => Ok(true),
        Some("false" | "off" | "0") => Ok(false),
        _ => Err(syntax(format!("{option} requires a Boolean value"))),
    }
}

/// Parses VACUUM from its tokens (`toks[0]` is "vacuum"); None when the
/// text is not VACUUM as this parser knows it (sqlparser reports it).
pub(crate) fn parse(toks: &[(String, bool)]) -> Option<Result<VacuumStmt, PgError>> {
    let word = |i: usize| toks.get(i).filter(|t| !t.1).map(|t| t.0.as_str());
    let mut stmt = VacuumStmt {
        verbose: false,
        analyze: false,
        truncate: true,
        scan_all: false,
        targets: Vec::new(),
    };
    let mut i = 1;
    if word(i) == Some("(") {
        i += 1;
        loop {
            let (name, _) = toks.get(i)?;
            let name = name.to_ascii_lowercase();
            i += 1;
            // An option's value, if one follows before ',' or ')'.
            let value = match word(i) {
                Some(",") | Some(")") => None,
                _ => {
                    let v = toks.get(i)?.0.clone();
                    i += 1;
                    Some(v)
                }
            };
            let value = value.as_deref();
            match name.as_str() {
                "verbose" => {
                    stmt.verbose = match boolean("verbose", value) {
                        Ok(b) => b,
                        Err(e) => return Some(Err(e)),
                    }
                }
                "analyze" | "analyse" => {
                    stmt.analyze = match boolean("analyze", value) {
                        Ok(b) => b,
                        Err(e) => return Some(Err(e)),
                    }
                }
                "truncate" => {
                    stmt.truncate = match boolean("truncate", value) {
                        Ok(b) => b,
                        Err(e) => return Some(Err(e)),
                    }
                }
                // FREEZE freezes nothing (64-bit xids are never frozen) but,
                // as PostgreSQL's, visits every page.
                "freeze" | "disable_page_skipping" => {
                    stmt.scan_all |= match boolean(&name, value) {
                        Ok(b) => b,
                        Err(e) => return Some(Err(e)),
                    }
                }
                // Accepted, changing nothing here: FULL (no rewrite),
                // nothing is locked, no TOAST exists.
                "full" | "skip_locked" | "process_toast" => {
                    if let Err(e) = boolean(&name, value) {
                        return Some(Err(e));
                    }
                }
                "index_cleanup" => {
                    let ok = value.is_none_or(|v| {
                        matches!(
                            v.to_ascii_lowercase().as_str(),
                            "auto" | "on" | "off" | "true" | "false" | "1" | "0"
                        )
                    });
                    if !ok {
                        return Some(Err(syntax("index_cleanup requires a Boolean value")));
                    }
                }
                "parallel" => {
                    if !value
                        .and_then(|v| v.parse::<i64>().ok())
                        .is_some_and(|n| (0..=1024).contains(&n))
                    {
                        return Some(Err(syntax(
                            "parallel option requires a value between 0 and 1024",
                        )));
                    }
                }
                _ => {
                    return Some(Err(syntax(format!(
                        "unrecognized VACUUM option \"{name}\""
                    ))))
                }
            }
            match word(i)? {
                "," => i += 1,
                ")" => break,
                _ => return None,
            }
        }
        i += 1;
    } else {
        // [FULL] [FREEZE] [VERBOSE] [ANALYZE], in this order.
        for kw in ["full", "freeze", "verbose", "analyze"] {
            let w = word(i);
            if w == Some(kw) || (kw == "analyze" && w == Some("analyse")) {
                match kw {
                    "verbose" => stmt.verbose = true,
                    "analyze" => stmt.analyze = true,
                    "freeze" => stmt.scan_all = true,
                    _ => {}
                }
                i += 1;
            }
        }
    }
    stmt.targets = crate::parse::analyze_targets(toks, i)?;
    if !stmt.analyze && stmt.targets.iter().any(|(_, cols)| !cols.is_empty()) {
        return Some(Err(PgError::new(
            SqlState::FEATURE_NOT_SUPPORTED,
            "ANALYZE option must be specified when a column list is provided",
        )));
    }
    Some(Ok(stmt))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> Option<Result<VacuumStmt, PgError>> {
        parse(&crate::parse::tokens(s).unwrap())
    }

    #[test]
    fn options_and_targets() {
        let v = p("vacuum (verbose, analyze on, truncate false) s.t (a, b), u")
            .unwrap()
            .unwrap();
        assert!(v.verbose && v.analyze && !v.truncate);
        assert_eq!(v.targets.len(), 2);
        assert_eq!(v.targets[0].0, vec!["s".to_string(), "t".to_string()]);
        let v = p(r#"vacuum "My s"."T", "s".t, s."t""#).unwrap().unwrap();
        let names: Vec<_> = v.targets.iter().map(|t| t.0.join("|")).collect();
        assert_eq!(names, ["My s|T", "s|t", "s|t"]);
        let v = p("VACUUM FULL VERBOSE ANALYZE t").unwrap().unwrap();
        assert!(v.verbose && v.analyze && v.truncate);
        let v = p("vacuum").unwrap().unwrap();
        assert!(!v.verbose && v.targets.is_empty());
        let e = p("vacuum (bogus) t").unwrap().unwrap_err();
        assert_eq!(e.message, "unrecognized VACUUM option \"bogus\"");
        let e = p("vacuum t(a)").unwrap().unwrap_err();
        assert_eq!(e.code, SqlState::FEATURE_NOT_SUPPORTED);
        let e = p("vacuum (parallel) t").unwrap().unwrap_err();
        assert_eq!(
            e.message,
            "parallel option requires a value between 0 and 1024"
        );
        let e = p("vacuum (verbose maybe) t").unwrap().unwrap_err();
        assert_eq!(e.message, "verbose requires a Boolean value");
    }
}
