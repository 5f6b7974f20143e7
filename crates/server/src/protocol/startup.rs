//! Connection startup: SSL negotiation (TLS when the server has it and the
//! client is on TCP), GSSAPI encryption (always refused), CancelRequest, and
//! the StartupMessage with its parameters and `options`.

use std::io::{Read, Write};
use std::sync::Arc;

use common::{PgError, PgResult, SqlState};

use super::codec::{protocol_violation, MsgReader};
use super::registry::BackendRegistry;
use super::stream::{Conn, ReadError};
use super::ProtocolLimits;
use crate::session_api::StartupParams;

const CANCEL_REQUEST_CODE: i32 = (1234 << 16) | 5678;
const SSL_REQUEST_CODE: i32 = (1234 << 16) | 5679;
const GSSENC_REQUEST_CODE: i32 = (1234 << 16) | 5680;
const PROTOCOL_MAJOR: u32 = 3;
const PROTOCOL_MINOR: u32 = 0;

/// What the startup phase ended with.
pub(crate) enum Startup {
    /// A StartupMessage was accepted: open a session.
    Session(StartupParams),
    /// The connection is done (cancel request, EOF, or a FATAL error already sent).
    Close,
}

/// Runs the startup phase up to (not including) authentication. `tls` is
/// the configuration to answer an SSLRequest with, None to refuse it.
pub(crate) fn read_startup<S: Read + Write>(
    conn: &mut Conn<S>,
    registry: &BackendRegistry,
    limits: &ProtocolLimits,
    tls: Option<Arc<rustls::ServerConfig>>,
) -> Startup {
    let mut packet = Vec::new();
    let mut ssl_done = false;
    let mut gss_done = false;
    loop {
        match conn.read_startup_packet(limits.max_startup_packet_len, &mut packet) {
            Ok(()) => {}
            Err(ReadError::Eof | ReadError::Io) => return Startup::Close,
            Err(ReadError::Fatal(e)) => return fatal(conn, &e),
        }
        let mut r = MsgReader::new(&packet);
        let code = match r.i32() {
            Ok(code) => code,
            Err(e) => return fatal(conn, &e),
        };
        match code {
            SSL_REQUEST_CODE if !ssl_done => {
                ssl_done = true;
                match &tls {
                    // Bytes sent before our answer were not encrypted: they
                    // may be injected, and cannot be the TLS handshake's.
                    // Refused in plain text, without 'S'.
                    Some(_) if conn.has_buffered_input() => {
                        return fatal(conn, &unencrypted_data("SSL request"));
                    }
                    Some(config) => {
                        conn.out.put_u8(b'S');
                        conn.flush();
                        if conn.broken {
                            return Startup::Close;
                        }
                        if let Err(e) = conn.stream.start_tls(config.clone()) {
                            crate::log(&format!(
                                "could not accept SSL connection: {}",
                                tls_reason(&e)
                            ));
                            return Startup::Close;
                        }
                        // No GSSAPI encryption inside TLS: a GSSENCRequest
                        // now is an unknown protocol version, as in PostgreSQL.
                        gss_done = true;
                    }
                    None => {
                        if let Some(close) = refuse_encryption(conn, "SSL request") {
                            return close;
                        }
                    }
                }
            }
            GSSENC_REQUEST_CODE if !gss_done => {
                gss_done = true;
                if let Some(close) = refuse_encryption(conn, "GSSAPI encryption request") {
                    return close;
                }
            }
            CANCEL_REQUEST_CODE => {
                // PostgreSQL never answers a cancel request, right or wrong.
                if let (Ok(pid), Ok(secret)) = (r.i32(), r.i32()) {
                    if r.remaining() == 0 {
                        registry.cancel(pid, secret);
                    }
                }
                return Startup::Close;
            }
            _ => {
                return match parse_startup_message(code as u32, &mut r) {
                    Ok((params, unrecognized)) => {
                        let minor = code as u32 & 0xffff;
                        if minor > PROTOCOL_MINOR || !unrecognized.is_empty() {
                            conn.out
                                .negotiate_protocol_version(PROTOCOL_MINOR as i32, &unrecognized);
                        }
                        Startup::Session(params)
                    }
                    Err(e) => fatal(conn, &e),
                }
            }
        }
    }
}

/// Answers 'N' to an encryption request; then, as PostgreSQL 15 does,
/// refuses data the client sent before it had the answer.
fn refuse_encryption<S: Read + Write>(conn: &mut Conn<S>, what: &str) -> Option<Startup> {
    conn.out.put_u8(b'N');
    if conn.has_buffered_input() {
        return Some(fatal(conn, &unencrypted_data(what)));
    }
    conn.flush();
    conn.broken.then_some(Startup::Close)
}

fn unencrypted_data(what: &str) -> PgError {
    protocol_violation(format!("received unencrypted data after {what}")).with_detail(
        "This could be either a client-software bug or evidence of an attempted man-in-the-middle attack.",
    )
}

/// A failed handshake as PostgreSQL logs it ("EOF detected" for a client
/// that hung up).
fn tls_reason(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::UnexpectedEof => "EOF detected".into(),
        _ => e.to_string(),
    }
}

fn fatal<S: Read + Write>(conn: &mut Conn<S>, e: &PgError) -> Startup {
    conn.out.error(e);
    conn.flush();
    Startup::Close
}

/// Parses a StartupMessage after its version word. Returns the parameters and
/// the `_pq_.` protocol options, none of which are supported.
fn parse_startup_message(
    version: u32,
    r: &mut MsgReader<'_>,
) -> PgResult<(StartupParams, Vec<String>)> {
    let (major, minor) = (version >> 16, version & 0xffff);
    if major != PROTOCOL_MAJOR {
        return Err(PgError::fatal(
            SqlState::FEATURE_NOT_SUPPORTED,
            format!(
                "unsupported frontend protocol {major}.{minor}: server supports \
                 {PROTOCOL_MAJOR}.0 to {PROTOCOL_MAJOR}.{PROTOCOL_MINOR}"
            ),
        ));
    }
    let mut user = None;
    let mut database = None;
    let mut option_settings = Vec::new();
    let mut settings = Vec::new();
    let mut unrecognized = Vec::new();
    let layout_error =
        || protocol_violation("invalid startup packet layout: expected terminator as last byte");
    loop {
        let name = r.cstr_bytes().map_err(|_| layout_error())?;
        if name.is_empty() {
            break;
        }
        let value = r.cstr_bytes().map_err(|_| layout_error())?;
        let name = String::from_utf8_lossy(name).into_owned();
        let value = String::from_utf8_lossy(value).into_owned();
        match name.as_str() {
            "user" => user = Some(value),
            "database" => database = Some(value),
            "options" => option_settings.extend(parse_options(&value)?),
            _ if name.starts_with("_pq_.") => unrecognized.push(name),
            _ => settings.push((name, value)),
        }
    }
    if r.remaining() != 0 {
        return Err(layout_error());
    }
    let user = match user {
        Some(u) if !u.is_empty() => u,
        _ => {
            return Err(PgError::fatal(
                SqlState::INVALID_AUTHORIZATION_SPECIFICATION,
                "no PostgreSQL user name specified in startup packet",
            ))
        }
    };
    let database = match database {
        Some(d) if !d.is_empty() => d,
        _ => user.clone(),
    };
    // As PostgreSQL: settings from `options` first, then the other parameters.
    option_settings.extend(settings);
    Ok((
        StartupParams {
            user,
            database,
            settings: option_settings,
            ssl: None,
        },
        unrecognized,
    ))
}

/// Splits the `options` startup parameter into words as PostgreSQL's
/// pg_split_opts does: whitespace separates, a backslash escapes the next byte.
fn split_options(s: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut chars = s.chars().peekable();
    loop {
        while chars.next_if(|c| c.is_ascii_whitespace()).is_some() {}
        if chars.peek().is_none() {
            break;
        }
        let mut word = String::new();
        while let Some(c) = chars.next_if(|c| !c.is_ascii_whitespace()) {
            if c == '\\' {
                if let Some(escaped) = chars.next() {
                    word.push(escaped);
                    continue;
                }
            }
            word.push(c);
        }
        words.push(word);
    }
    words
}

/// Parses the `options` parameter: `-c name=value`, `-cname=value` and
/// `--name=value` (dashes in names become underscores).
pub(crate) fn parse_options(s: &str) -> PgResult<Vec<(String, String)>> {
    let words = split_options(s);
    let mut out = Vec::new();
    let mut i = 0;
    while i < words.len() {
        let word = &words[i];
        i += 1;
        let (flag, arg) = if let Some(long) = word.strip_prefix("--") {
            ("--", long.to_string())
        } else if let Some(rest) = word.strip_prefix("-c") {
            if !rest.is_empty() {
                ("-c ", rest.to_string())
            } else if i < words.len() {
                i += 1;
                ("-c ", words[i - 1].clone())
            } else {
                return Err(invalid_argument(word));
            }
        } else {
            return Err(invalid_argument(word));
        };
        match arg.split_once('=') {
            Some((name, value)) if !name.is_empty() => {
                out.push((name.replace('-', "_"), value.to_string()));
            }
            _ => {
                return Err(PgError::fatal(
                    SqlState::SYNTAX_ERROR,
                    format!("{flag}{arg} requires a value"),
                ))
            }
        }
    }
    Ok(out)
}

fn invalid_argument(word: &str) -> PgError {
    PgError::fatal(
        SqlState::SYNTAX_ERROR,
        format!("invalid command-line argument for server process: {word}"),
    )
    .with_hint("Try \"postgres --help\" for more information.")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(v: &[(&str, &str)]) -> Vec<(String, String)> {
        v.iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect()
    }

    #[test]
    fn options_forms() {
        assert_eq!(
            parse_options("-c search_path=public  --work-mem=64kB -cstatement_timeout=5").unwrap(),
            pairs(&[
                ("search_path", "public"),
                ("work_mem", "64kB"),
                ("statement_timeout", "5")
            ])
        );
        assert_eq!(
            parse_options(r"-c application_name=my\ app -c x=a\\b").unwrap(),
            pairs(&[("application_name", "my app"), ("x", r"a\b")])
        );
        assert_eq!(parse_options("  ").unwrap(), vec![]);
        assert_eq!(parse_options("-c a=").unwrap(), pairs(&[("a", "")]));
    }

    #[test]
    fn options_errors() {
        let e = parse_options("-c foo").unwrap_err();
        assert_eq!(e.message, "-c foo requires a value");
        let e = parse_options("--foo").unwrap_err();
        assert_eq!(e.message, "--foo requires a value");
        let e = parse_options("-c").unwrap_err();
        assert!(e.message.starts_with("invalid command-line argument"));
        let e = parse_options("-d 5").unwrap_err();
        assert_eq!(e.code, SqlState::SYNTAX_ERROR);
    }

    #[test]
    fn startup_message_params() {
        let body = b"user\0bob\0options\0-c a=1\0application_name\0psql\0a\0\x32\0\0";
        let (p, unrec) = parse_startup_message(3 << 16, &mut MsgReader::new(body)).unwrap();
        assert_eq!(p.user, "bob");
        assert_eq!(p.database, "bob");
        assert_eq!(
            p.settings,
            pairs(&[("a", "1"), ("application_name", "psql"), ("a", "2")])
        );
        assert!(unrec.is_empty());
        let body = b"user\0bob\0database\0db\0_pq_.x\0y\0\0";
        let (p, unrec) = parse_startup_message(3 << 16, &mut MsgReader::new(body)).unwrap();
        assert_eq!(p.database, "db");
        assert_eq!(unrec, vec!["_pq_.x".to_string()]);
        let e = parse_startup_message(2 << 16, &mut MsgReader::new(b"\0")).unwrap_err();
        assert_eq!(
            e.message,
            "unsupported frontend protocol 2.0: server supports 3.0 to 3.0"
        );
        let e =
            parse_startup_message(3 << 16, &mut MsgReader::new(b"database\0x\0\0")).unwrap_err();
        assert_eq!(e.code, SqlState::INVALID_AUTHORIZATION_SPECIFICATION);
        for bad in [&b"user\0bob\0"[..], b"user\0bob", b"user\0bob\0\0x"] {
            let e = parse_startup_message(3 << 16, &mut MsgReader::new(bad)).unwrap_err();
            assert_eq!(e.code, SqlState::PROTOCOL_VIOLATION);
        }
    }
}
