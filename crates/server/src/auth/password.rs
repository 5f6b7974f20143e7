//! Stored password verifiers (rolpassword) as PostgreSQL keeps them: a SCRAM
//! secret `SCRAM-SHA-256$<iter>:<salt>$<StoredKey>:<ServerKey>` or
//! `md5<hex(md5(password || user))>`; plaintext is never stored.

use md5::{Digest, Md5};

use super::scram::ScramSecret;

/// `password_encryption`, typed once where the setting is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PasswordEncryption {
    ScramSha256,
    Md5,
}

impl PasswordEncryption {
    pub fn parse(s: &str) -> Option<Self> {
        match s.to_ascii_lowercase().as_str() {
            "scram-sha-256" => Some(Self::ScramSha256),
            "md5" => Some(Self::Md5),
            _ => None,
        }
    }
}

/// What kind of verifier a stored rolpassword is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoredPassword {
    Scram(ScramSecret),
    Md5(String),
}

impl StoredPassword {
    pub fn parse(stored: &str) -> Option<StoredPassword> {
        if let Some(secret) = ScramSecret::parse(stored) {
            return Some(StoredPassword::Scram(secret));
        }
        if is_md5_verifier(stored) {
            return Some(StoredPassword::Md5(stored.to_string()));
        }
        None
    }

    /// Checks a cleartext password (the `password` method).
    pub fn check_cleartext(&self, user: &str, password: &str) -> bool {
        match self {
            StoredPassword::Scram(secret) => secret.check_password(password),
            StoredPassword::Md5(stored) => md5_verifier(password, user) == *stored,
        }
    }
}

fn is_md5_verifier(s: &str) -> bool {
    s.len() == 35
        && s.starts_with("md5")
        && s[3..]
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

fn md5_hex(data: &[u8]) -> String {
    let digest = Md5::digest(data);
    let mut out = String::with_capacity(32);
    for b in digest {
        out.push_str(&format!("{b:02x}"));
    }
    out
}

/// `md5` + hex(md5(password || user)), as PostgreSQL stores md5 passwords.
pub fn md5_verifier(password: &str, user: &str) -> String {
    let mut data = password.as_bytes().to_vec();
    data.extend_from_slice(user.as_bytes());
    format!("md5{}", md5_hex(&data))
}

/// What a client answers to AuthenticationMD5Password: `md5` +
/// hex(md5(hex part of the stored verifier || salt)).
pub fn md5_response(stored_verifier: &str, salt: [u8; 4]) -> String {
    let mut data = stored_verifier.as_bytes()[3..].to_vec();
    data.extend_from_slice(&salt);
    format!("md5{}", md5_hex(&data))
}

/// The verifier to store for `ALTER ROLE ... PASSWORD 'text'`: text that is
/// already a verifier is stored as is, as PostgreSQL does.
pub fn encrypt_password(method: PasswordEncryption, user: &str, password: &str) -> String {
    if StoredPassword::parse(password).is_some() {
        return password.to_string();
    }
    match method {
        PasswordEncryption::Md5 => md5_verifier(password, user),
        PasswordEncryption::ScramSha256 => ScramSecret::generate(password).to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn md5_matches_postgres() {
        // SELECT 'md5' || md5('secret' || 'bob') in PostgreSQL.
        assert_eq!(
            md5_verifier("secret", "bob"),
            "md521f3163f8f86fa10bdefbfbd502a8f06"
        );
        let v = md5_verifier("secret", "bob");
        assert!(is_md5_verifier(&v));
        let stored = StoredPassword::parse(&v).unwrap();
        assert!(stored.check_cleartext("bob", "secret"));
        assert!(!stored.check_cleartext("bob", "Secret"));
    }

    #[test]
    fn hashed_input_is_kept() {
        let v = md5_verifier("x", "u");
        assert_eq!(
            encrypt_password(PasswordEncryption::ScramSha256, "u", &v),
            v
        );
        let s = encrypt_password(PasswordEncryption::ScramSha256, "u", "pw");
        assert!(s.starts_with("SCRAM-SHA-256$4096:"));
        assert_eq!(encrypt_password(PasswordEncryption::Md5, "u", &s), s);
    }
}
