//! Authentication on the wire, after the StartupMessage: the pg_hba.conf
//! method decides between trust, reject, cleartext password, MD5 and
//! SCRAM-SHA-256 (SASL).

use std::io::{Read, Write};

use common::{PgError, PgResult, SqlState};

use super::codec::{protocol_violation, MsgReader};
use super::stream::{Conn, ReadError};
use crate::auth::hba::{ConnInfo, Method};
use crate::auth::password::{md5_response, StoredPassword};
use crate::auth::scram::{self, ScramError, ScramSecret, ScramServer};
use crate::auth::{random_bytes, ClientAddr};
use crate::session_api::{SessionFactory, StartupParams};

const AUTH_CLEARTEXT: i32 = 3;
const AUTH_MD5: i32 = 5;
const AUTH_SASL: i32 = 10;
const AUTH_SASL_CONTINUE: i32 = 11;
const AUTH_SASL_FINAL: i32 = 12;
/// PostgreSQL's limit on a password packet.
const MAX_AUTH_MESSAGE: usize = 1000;

/// Why authentication did not succeed.
pub(crate) enum AuthFailure {
    /// Send this FATAL error and close.
    Error(PgError),
    /// The client went away; close silently.
    Closed,
}

impl From<PgError> for AuthFailure {
    fn from(e: PgError) -> Self {
        AuthFailure::Error(e)
    }
}

/// Authenticates the client named in `params`; on success nothing is sent
/// yet (the caller sends AuthenticationOk once the session is open).
pub(crate) fn authenticate<S: Read + Write>(
    conn: &mut Conn<S>,
    factory: &dyn SessionFactory,
    addr: ClientAddr,
    ssl: bool,
    params: &StartupParams,
) -> Result<(), AuthFailure> {
    let Some(hba) = factory.hba() else {
        return Ok(());
    };
    let info = ConnInfo {
        addr,
        ssl,
        user: &params.user,
        database: &params.database,
    };
    let encryption = if ssl {
        "SSL encryption"
    } else {
        "no encryption"
    };
    let method = match hba.method_for(&info) {
        None => {
            return Err(auth_error(format!(
                "no pg_hba.conf entry for host \"{}\", user \"{}\", database \"{}\", {encryption}",
                addr.display(),
                params.user,
                params.database
            )))
        }
        Some(Method::Reject) => {
            return Err(auth_error(format!(
                "pg_hba.conf rejects connection for host \"{}\", user \"{}\", database \"{}\", {encryption}",
                addr.display(),
                params.user,
                params.database
            )))
        }
        Some(Method::Trust) => return Ok(()),
        Some(m) => m,
    };
    let stored = factory
        .role_password(&params.user)
        .and_then(|p| StoredPassword::parse(&p));
    let ok = match (method, stored) {
        (Method::Password, stored) => {
            let password = read_cleartext(conn)?;
            stored.is_some_and(|s| s.check_cleartext(&params.user, &password))
        }
        (Method::Md5, Some(StoredPassword::Md5(verifier))) => md5_exchange(conn, Some(&verifier))?,
        (Method::Md5, Some(StoredPassword::Scram(secret)))
        | (Method::ScramSha256, Some(StoredPassword::Scram(secret))) => {
            scram_exchange(conn, secret)?
        }
        (Method::Md5, None) => md5_exchange(conn, None)?,
        // No SCRAM secret: run the exchange against a mock one so the client
        // learns nothing about the role.
        (Method::ScramSha256, _) => scram_exchange(conn, ScramSecret::mock())?,
        (Method::Trust | Method::Reject, _) => unreachable!("handled above"),
    };
    if ok {
        Ok(())
    } else {
        Err(AuthFailure::Error(password_failed(&params.user)))
    }
}

fn auth_error(message: String) -> AuthFailure {
    AuthFailure::Error(PgError::fatal(
        SqlState::INVALID_AUTHORIZATION_SPECIFICATION,
        message,
    ))
}

fn password_failed(user: &str) -> PgError {
    PgError::fatal(
        SqlState::INVALID_PASSWORD,
        format!("password authentication failed for user \"{user}\""),
    )
}

/// Sends an Authentication request and reads the client's 'p' answer.
fn request<S: Read + Write>(
    conn: &mut Conn<S>,
    code: i32,
    payload: &[u8],
    body: &mut Vec<u8>,
) -> Result<(), AuthFailure> {
    conn.out.begin(b'R');
    conn.out.put_i32(code);
    conn.out.buf.extend_from_slice(payload);
    conn.out.end();
    conn.flush();
    if conn.broken {
        return Err(AuthFailure::Closed);
    }
    match conn.read_message(MAX_AUTH_MESSAGE, body) {
        Ok(b'p') => Ok(()),
        Ok(ty) => Err(protocol_violation(format!(
            "expected password response, got message type {ty}"
        ))
        .into()),
        Err(ReadError::Eof | ReadError::Io) => Err(AuthFailure::Closed),
        Err(ReadError::Fatal(e)) => Err(e.into()),
    }
}

fn password_text(body: &[u8]) -> PgResult<String> {
    let mut r = MsgReader::new(body);
    let text = r
        .cstr()
        .map_err(|_| protocol_violation("invalid password packet size"))?
        .to_string();
    if r.remaining() != 0 {
        return Err(protocol_violation("invalid password packet size"));
    }
    Ok(text)
}

fn read_cleartext<S: Read + Write>(conn: &mut Conn<S>) -> Result<String, AuthFailure> {
    let mut body = Vec::new();
    request(conn, AUTH_CLEARTEXT, &[], &mut body)?;
    let password = password_text(&body)?;
    if password.is_empty() {
        return Err(protocol_violation("empty password returned by client").into());
    }
    Ok(password)
}

fn md5_exchange<S: Read + Write>(
    conn: &mut Conn<S>,
    verifier: Option<&str>,
) -> Result<bool, AuthFailure> {
    let mut salt = [0u8; 4];
    random_bytes(&mut salt);
    let mut body = Vec::new();
    request(conn, AUTH_MD5, &salt, &mut body)?;
    let answer = password_text(&body)?;
    Ok(verifier.is_some_and(|v| md5_response(v, salt) == answer))
}

fn scram_exchange<S: Read + Write>(
    conn: &mut Conn<S>,
    secret: ScramSecret,
) -> Result<bool, AuthFailure> {
    let mut mechanisms = scram::MECHANISM.as_bytes().to_vec();
    mechanisms.extend_from_slice(b"\0\0");
    let mut body = Vec::new();
    request(conn, AUTH_SASL, &mechanisms, &mut body)?;
    let mut r = MsgReader::new(&body);
    let mechanism = r.cstr()?;
    if mechanism != scram::MECHANISM {
        return Err(
            protocol_violation("client selected an invalid SASL authentication mechanism").into(),
        );
    }
    let len = r.i32()?;
    let data = if len < 0 {
        &[][..]
    } else {
        r.bytes(len as usize)?
    };
    r.finish()?;
    let client_first = std::str::from_utf8(data).map_err(|_| malformed())?;
    let (server, server_first) =
        ScramServer::start(secret, client_first).map_err(|_| malformed())?;
    request(conn, AUTH_SASL_CONTINUE, server_first.as_bytes(), &mut body)?;
    let client_final = std::str::from_utf8(&body).map_err(|_| malformed())?;
    match server.finish(client_final) {
        Ok(server_final) => {
            conn.out.begin(b'R');
            conn.out.put_i32(AUTH_SASL_FINAL);
            conn.out.buf.extend_from_slice(server_final.as_bytes());
            conn.out.end();
            Ok(true)
        }
        Err(ScramError::WrongProof) => Ok(false),
        Err(ScramError::Malformed(_)) => Err(malformed().into()),
    }
}

fn malformed() -> PgError {
    protocol_violation("malformed SCRAM message")
}
