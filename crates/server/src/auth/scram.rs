//! SCRAM-SHA-256 (RFC 5802 / RFC 7677), server side, without channel binding.
//! The exchange is a pure state machine here; `protocol/authenticate.rs`
//! carries its messages.

use std::fmt;

use base64::engine::general_purpose::STANDARD as B64;
use base64::Engine;
use hmac::{Hmac, KeyInit, Mac};
use sha2::{Digest, Sha256};

use super::random_bytes;

pub const MECHANISM: &str = "SCRAM-SHA-256";
/// PostgreSQL's default scram_iterations.
const ITERATIONS: u32 = 4096;
const SALT_LEN: usize = 16;
const NONCE_LEN: usize = 18;

type Key = [u8; 32];

fn hmac(key: &[u8], data: &[u8]) -> Key {
    let mut mac = Hmac::<Sha256>::new_from_slice(key).expect("HMAC takes any key length");
    mac.update(data);
    let mut out = [0u8; 32];
    out.copy_from_slice(&mac.finalize().into_bytes());
    out
}

fn sha256(data: &[u8]) -> Key {
    let mut out = [0u8; 32];
    out.copy_from_slice(&Sha256::digest(data));
    out
}

/// Hi() of RFC 5802: PBKDF2-HMAC-SHA-256 with one output block.
fn salted_password(password: &[u8], salt: &[u8], iterations: u32) -> Key {
    let mut first = salt.to_vec();
    first.extend_from_slice(&1u32.to_be_bytes());
    let mut u = hmac(password, &first);
    let mut out = u;
    for _ in 1..iterations {
        u = hmac(password, &u);
        for (o, x) in out.iter_mut().zip(u.iter()) {
            *o ^= x;
        }
    }
    out
}

/// SASLprep when the password is valid for it, the raw bytes otherwise (as
/// PostgreSQL does, so any byte string still works as a password).
fn normalize(password: &str) -> Vec<u8> {
    match stringprep::saslprep(password) {
        Ok(p) => p.into_owned().into_bytes(),
        Err(_) => password.as_bytes().to_vec(),
    }
}

/// A stored SCRAM secret: `SCRAM-SHA-256$<iter>:<salt>$<StoredKey>:<ServerKey>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScramSecret {
    pub iterations: u32,
    pub salt: Vec<u8>,
    pub stored_key: Key,
    pub server_key: Key,
}

impl ScramSecret {
    pub fn generate(password: &str) -> ScramSecret {
        let mut salt = vec![0u8; SALT_LEN];
        random_bytes(&mut salt);
        Self::from_password(password, salt, ITERATIONS)
    }

    fn from_password(password: &str, salt: Vec<u8>, iterations: u32) -> ScramSecret {
        let salted = salted_password(&normalize(password), &salt, iterations);
        ScramSecret {
            iterations,
            salt,
            stored_key: sha256(&hmac(&salted, b"Client Key")),
            server_key: hmac(&salted, b"Server Key"),
        }
    }

    /// A secret no password matches, for users that do not exist or have no
    /// SCRAM secret: the exchange then fails only at the proof, as in
    /// PostgreSQL, so a client cannot tell which.
    pub fn mock() -> ScramSecret {
        let mut salt = vec![0u8; SALT_LEN];
        random_bytes(&mut salt);
        let mut stored_key = [0u8; 32];
        random_bytes(&mut stored_key);
        ScramSecret {
            iterations: ITERATIONS,
            salt,
            stored_key,
            server_key: [0u8; 32],
        }
    }

    pub fn parse(s: &str) -> Option<ScramSecret> {
        let rest = s.strip_prefix("SCRAM-SHA-256$")?;
        let (iter_salt, keys) = rest.split_once('$')?;
        let (iterations, salt) = iter_salt.split_once(':')?;
        let (stored, server) = keys.split_once(':')?;
        let key = |k: &str| -> Option<Key> { B64.decode(k).ok()?.try_into().ok() };
        Some(ScramSecret {
            iterations: iterations.parse().ok().filter(|&i| i > 0)?,
            salt: B64.decode(salt).ok()?,
            stored_key: key(stored)?,
            server_key: key(server)?,
        })
    }

    pub fn check_password(&self, password: &str) -> bool {
        let other = Self::from_password(password, self.salt.clone(), self.iterations);
        constant_time_eq(&other.stored_key, &self.stored_key)
            && constant_time_eq(&other.server_key, &self.server_key)
    }
}

impl fmt::Display for ScramSecret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "SCRAM-SHA-256${}:{}${}:{}",
            self.iterations,
            B64.encode(&self.salt),
            B64.encode(self.stored_key),
            B64.encode(self.server_key)
        )
    }
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Why an exchange failed: a malformed message (08P01) or a wrong proof (28P01).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ScramError {
    #[error("malformed SCRAM message: {0}")]
    Malformed(&'static str),
    #[error("password authentication failed")]
    WrongProof,
}

/// The server's side after client-first-message, waiting for client-final.
pub struct ScramServer {
    secret: ScramSecret,
    gs2_header: String,
    client_first_bare: String,
    server_first: String,
    nonce: String,
}

impl ScramServer {
    /// Handles client-first-message; returns the state and server-first-message.
    pub fn start(
        secret: ScramSecret,
        client_first: &str,
    ) -> Result<(ScramServer, String), ScramError> {
        // gs2-header: no channel binding ('n') or "client supports it but
        // thinks the server does not" ('y'); 'p' is refused as we never offer PLUS.
        let (gs2_header, bare) = match client_first.as_bytes().first() {
            Some(b'n') | Some(b'y') => {
                let mut parts = client_first.splitn(3, ',');
                let cb = parts.next().unwrap_or_default();
                let authzid = parts
                    .next()
                    .ok_or(ScramError::Malformed("missing authzid"))?;
                let bare = parts
                    .next()
                    .ok_or(ScramError::Malformed("missing client-first-bare"))?;
                if cb.len() != 1 || !authzid.is_empty() {
                    return Err(ScramError::Malformed("unsupported gs2 header"));
                }
                (format!("{cb},{authzid},"), bare)
            }
            _ => return Err(ScramError::Malformed("unsupported channel binding")),
        };
        // The user name in n= is ignored: the startup packet's user counts.
        let client_nonce = bare
            .split(',')
            .find_map(|attr| attr.strip_prefix("r="))
            .filter(|n| !n.is_empty() && n.bytes().all(|b| (0x21..=0x7e).contains(&b) && b != b','))
            .ok_or(ScramError::Malformed("missing client nonce"))?;
        if !bare.starts_with("n=") {
            return Err(ScramError::Malformed("missing user name attribute"));
        }
        let mut raw = [0u8; NONCE_LEN];
        random_bytes(&mut raw);
        let nonce = format!("{client_nonce}{}", B64.encode(raw));
        let server_first = format!(
            "r={nonce},s={},i={}",
            B64.encode(&secret.salt),
            secret.iterations
        );
        Ok((
            ScramServer {
                secret,
                gs2_header,
                client_first_bare: bare.to_string(),
                server_first: server_first.clone(),
                nonce,
            },
            server_first,
        ))
    }

    /// Handles client-final-message; returns server-final-message on success.
    pub fn finish(self, client_final: &str) -> Result<String, ScramError> {
        let (without_proof, proof) = client_final
            .rsplit_once(",p=")
            .ok_or(ScramError::Malformed("missing proof"))?;
        let mut attrs = without_proof.split(',');
        let binding = attrs
            .next()
            .and_then(|a| a.strip_prefix("c="))
            .ok_or(ScramError::Malformed("missing channel binding"))?;
        if B64.decode(binding).ok().as_deref() != Some(self.gs2_header.as_bytes()) {
            return Err(ScramError::Malformed("unexpected channel binding data"));
        }
        let nonce = attrs
            .next()
            .and_then(|a| a.strip_prefix("r="))
            .ok_or(ScramError::Malformed("missing nonce"))?;
        if nonce != self.nonce {
            return Err(ScramError::Malformed("nonce does not match"));
        }
        let proof: Key = B64
            .decode(proof)
            .ok()
            .and_then(|p| p.try_into().ok())
            .ok_or(ScramError::Malformed("malformed proof"))?;
        let auth_message = format!(
            "{},{},{}",
            self.client_first_bare, self.server_first, without_proof
        );
        let signature = hmac(&self.secret.stored_key, auth_message.as_bytes());
        let mut client_key = proof;
        for (k, s) in client_key.iter_mut().zip(signature.iter()) {
            *k ^= s;
        }
        if !constant_time_eq(&sha256(&client_key), &self.secret.stored_key) {
            return Err(ScramError::WrongProof);
        }
        let server_signature = hmac(&self.secret.server_key, auth_message.as_bytes());
        Ok(format!("v={}", B64.encode(server_signature)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc7677_example() {
        // RFC 7677 section 3: user "user", password "pencil".
        let salt = B64.decode("W22ZaJ0SNY7soEsUEjb6gQ==").unwrap();
        let secret = ScramSecret::from_password("pencil", salt, 4096);
        let (mut server, _) =
            ScramServer::start(secret, "n,,n=user,r=rOprNGfwEbeRWgbNEkqO").unwrap();
        // Replay the RFC's server nonce so the client proof from the RFC applies.
        server.nonce = "rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0".into();
        server.server_first = format!("r={},s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096", server.nonce);
        let fin = server
            .finish(
                "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,\
                 p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=",
            )
            .unwrap();
        assert_eq!(fin, "v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=");
    }

    #[test]
    fn secret_round_trip_and_wrong_password() {
        let s = ScramSecret::generate("pw");
        assert_eq!(ScramSecret::parse(&s.to_string()), Some(s.clone()));
        assert!(s.check_password("pw"));
        assert!(!s.check_password("pW"));
        assert!(ScramSecret::parse("SCRAM-SHA-256$0:AA==$AA==:AA==").is_none());
    }

    #[test]
    fn malformed_messages() {
        let s = ScramSecret::generate("pw");
        assert!(ScramServer::start(s.clone(), "p=tls-server-end-point,,n=,r=x").is_err());
        assert!(ScramServer::start(s.clone(), "n,,n=").is_err());
        let (server, first) = ScramServer::start(s, "n,,n=,r=abc").unwrap();
        assert!(first.starts_with("r=abc"));
        assert_eq!(
            server.finish("c=biws,r=wrong,p=AAAA"),
            Err(ScramError::Malformed("nonce does not match"))
        );
    }
}
