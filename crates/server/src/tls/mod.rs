//! TLS (PostgreSQL's "SSL"): the `ssl*` settings typed once, loading the
//! certificate, private key and CA files into a rustls server configuration
//! (at start and again on SIGHUP), and what `pg_stat_ssl` reports of one
//! connection. The handshake itself runs in `protocol/transport.rs`.
//!
//! Invariant: the configuration in force is always a complete one. A reload
//! that fails leaves the previous one (or none) in place, as PostgreSQL 15
//! keeps its old SSL context.

mod x509;

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use parking_lot::RwLock;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::{NoServerSessionStorage, WebPkiClientVerifier};
use rustls::{RootCertStore, ServerConfig, ServerConnection};

use crate::gucs::{self, Settings};

/// A value of `ssl_min_protocol_version` / `ssl_max_protocol_version`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum TlsVersion {
    V1_0,
    V1_1,
    V1_2,
    V1_3,
}

impl TlsVersion {
    /// PostgreSQL's names; like every enum setting, case does not matter.
    pub fn parse(s: &str) -> Option<TlsVersion> {
        Some(match s.trim().to_ascii_lowercase().as_str() {
            "tlsv1" => TlsVersion::V1_0,
            "tlsv1.1" => TlsVersion::V1_1,
            "tlsv1.2" => TlsVersion::V1_2,
            "tlsv1.3" => TlsVersion::V1_3,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            TlsVersion::V1_0 => "TLSv1",
            TlsVersion::V1_1 => "TLSv1.1",
            TlsVersion::V1_2 => "TLSv1.2",
            TlsVersion::V1_3 => "TLSv1.3",
        }
    }
}

/// The `ssl*` settings, typed once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsSettings {
    pub enabled: bool,
    /// File names as configured: messages name them so, as PostgreSQL's do.
    pub cert_file: String,
    pub key_file: String,
    /// Empty: client certificates are not requested.
    pub ca_file: String,
    pub min_version: TlsVersion,
    /// None: no upper bound.
    pub max_version: Option<TlsVersion>,
    /// Relative file names are taken from here (PostgreSQL runs in its data directory).
    pub data_dir: PathBuf,
}

impl TlsSettings {
    /// Values were validated when set; a bad one here falls back to the default.
    pub fn from_settings(s: &Settings, data_dir: &Path) -> TlsSettings {
        let get = |name: &str| s.get(name).unwrap_or("").to_string();
        TlsSettings {
            enabled: gucs::parse_bool(&get("ssl")).unwrap_or(false),
            cert_file: get("ssl_cert_file"),
            key_file: get("ssl_key_file"),
            ca_file: get("ssl_ca_file"),
            min_version: TlsVersion::parse(&get("ssl_min_protocol_version"))
                .unwrap_or(TlsVersion::V1_2),
            max_version: TlsVersion::parse(&get("ssl_max_protocol_version")),
            data_dir: data_dir.to_path_buf(),
        }
    }

    fn resolve(&self, file: &str) -> PathBuf {
        self.data_dir.join(file)
    }
}

/// Why the TLS configuration could not be loaded. At server start these are
/// fatal; on reload they are logged and the old configuration stays.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    #[error("could not load server certificate file \"{file}\": {reason}")]
    Certificate { file: String, reason: String },
    #[error("could not access private key file \"{file}\": {reason}")]
    KeyAccess { file: String, reason: String },
    #[error("private key file \"{0}\" is not a regular file")]
    KeyNotRegular(String),
    #[error("private key file \"{0}\" must be owned by the database user or root")]
    KeyOwner(String),
    #[error("private key file \"{0}\" has group or world access")]
    KeyPermissions(String),
    #[error("could not load private key file \"{file}\": {reason}")]
    Key { file: String, reason: String },
    #[error("check of private key failed: {0}")]
    KeyMismatch(String),
    #[error("\"{setting}\" setting \"{value}\" not supported by this build")]
    UnsupportedVersion {
        setting: &'static str,
        value: &'static str,
    },
    #[error("could not set SSL protocol version range")]
    VersionRange,
    #[error("could not load root certificate file \"{file}\": {reason}")]
    RootCertificate { file: String, reason: String },
}

impl TlsError {
    pub fn detail(&self) -> Option<&'static str> {
        match self {
            TlsError::KeyPermissions(_) => Some(
                "File must have permissions u=rw (0600) or less if owned by the database user, \
                 or permissions u=rw,g=r (0640) or less if owned by root.",
            ),
            TlsError::VersionRange => Some(
                "\"ssl_min_protocol_version\" cannot be higher than \"ssl_max_protocol_version\".",
            ),
            _ => None,
        }
    }
}

/// The OS's words without Rust's " (os error N)", as PostgreSQL's %m prints them.
fn os_reason(e: &std::io::Error) -> String {
    let s = e.to_string();
    s.split(" (os error").next().unwrap_or_default().to_string()
}

fn read_certs(path: &Path) -> Result<Vec<CertificateDer<'static>>, String> {
    let pem = std::fs::read(path).map_err(|e| os_reason(&e))?;
    let certs = CertificateDer::pem_slice_iter(&pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| e.to_string())?;
    if certs.is_empty() {
        return Err("no certificate found".into());
    }
    Ok(certs)
}

/// PostgreSQL's check_ssl_key_file_permissions: the key must not be
/// readable by others; a root-owned key may be group-readable (0640).
fn check_key_permissions(file: &str, path: &Path) -> Result<(), TlsError> {
    let md = std::fs::metadata(path).map_err(|e| TlsError::KeyAccess {
        file: file.to_string(),
        reason: os_reason(&e),
    })?;
    if !md.is_file() {
        return Err(TlsError::KeyNotRegular(file.to_string()));
    }
    // SAFETY: geteuid has no preconditions.
    let euid = unsafe { libc::geteuid() };
    if md.uid() != euid && md.uid() != 0 {
        return Err(TlsError::KeyOwner(file.to_string()));
    }
    let mode = md.mode();
    let too_open = if md.uid() == 0 {
        mode & 0o037 != 0
    } else {
        mode & 0o077 != 0
    };
    if too_open {
        return Err(TlsError::KeyPermissions(file.to_string()));
    }
    Ok(())
}

/// The versions rustls offers within the configured range. rustls has no
/// TLS 1.0/1.1, so a lower minimum means TLS 1.2.
fn protocol_versions(
    s: &TlsSettings,
) -> Result<Vec<&'static rustls::SupportedProtocolVersion>, TlsError> {
    if let Some(max) = s.max_version {
        if max < TlsVersion::V1_2 {
            return Err(TlsError::UnsupportedVersion {
                setting: "ssl_max_protocol_version",
                value: max.name(),
            });
        }
        if s.min_version > max {
            return Err(TlsError::VersionRange);
        }
    }
    let max = s.max_version.unwrap_or(TlsVersion::V1_3);
    let mut versions = Vec::new();
    if s.min_version <= TlsVersion::V1_3 && max >= TlsVersion::V1_3 {
        versions.push(&rustls::version::TLS13);
    }
    if s.min_version <= TlsVersion::V1_2 && max >= TlsVersion::V1_2 {
        versions.push(&rustls::version::TLS12);
    }
    Ok(versions)
}

/// Loads the files `s` names into a server configuration, checking them in
/// PostgreSQL's order (certificate, key permissions, key, versions, CA).
pub fn load_config(s: &TlsSettings) -> Result<Arc<ServerConfig>, TlsError> {
    let certs = read_certs(&s.resolve(&s.cert_file)).map_err(|reason| TlsError::Certificate {
        file: s.cert_file.clone(),
        reason,
    })?;
    let key_path = s.resolve(&s.key_file);
    check_key_permissions(&s.key_file, &key_path)?;
    let key_error = |reason: String| TlsError::Key {
        file: s.key_file.clone(),
        reason,
    };
    let pem = std::fs::read(&key_path).map_err(|e| key_error(os_reason(&e)))?;
    let key = PrivateKeyDer::from_pem_slice(&pem).map_err(|e| key_error(e.to_string()))?;
    let versions = protocol_versions(s)?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = ServerConfig::builder_with_provider(provider.clone())
        .with_protocol_versions(&versions)
        .map_err(|_| TlsError::VersionRange)?;
    let builder = if s.ca_file.is_empty() {
        builder.with_no_client_auth()
    } else {
        let ca_error = |reason: String| TlsError::RootCertificate {
            file: s.ca_file.clone(),
            reason,
        };
        let mut roots = RootCertStore::empty();
        for cert in read_certs(&s.resolve(&s.ca_file)).map_err(ca_error)? {
            roots.add(cert).map_err(|e| ca_error(e.to_string()))?;
        }
        // Clients without a certificate still get in unless pg_hba.conf
        // asks for one (clientcert, `cert`); one that sends a certificate
        // must send a valid one, as with PostgreSQL's SSL_VERIFY_PEER.
        let verifier = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider)
            .allow_unauthenticated()
            .build()
            .map_err(|e| ca_error(e.to_string()))?;
        builder.with_client_cert_verifier(verifier)
    };
    let mut config = builder
        .with_single_cert(certs, key)
        .map_err(|e| TlsError::KeyMismatch(e.to_string()))?;
    // PostgreSQL turns session caching and tickets off: every connection
    // does a full handshake, and no resumption state is kept.
    config.session_storage = Arc::new(NoServerSessionStorage {});
    config.send_tls13_tickets = 0;
    Ok(Arc::new(config))
}

/// The TLS configuration in force: None while `ssl` is off (or never loaded).
#[derive(Default)]
pub struct TlsHolder {
    current: RwLock<Option<Arc<ServerConfig>>>,
}

impl TlsHolder {
    /// Loads at server start; an error there stops the server.
    pub fn load(s: &TlsSettings) -> Result<TlsHolder, TlsError> {
        let config = if s.enabled {
            Some(load_config(s)?)
        } else {
            None
        };
        Ok(TlsHolder {
            current: RwLock::new(config),
        })
    }

    pub fn current(&self) -> Option<Arc<ServerConfig>> {
        self.current.read().clone()
    }

    /// SIGHUP: `ssl = off` drops TLS for new connections; otherwise the
    /// files are read again and, only if all of them load, replace the old ones.
    pub fn reload(&self, s: &TlsSettings) -> Result<(), TlsError> {
        let config = if s.enabled {
            Some(load_config(s)?)
        } else {
            None
        };
        *self.current.write() = config;
        Ok(())
    }
}

/// What pg_stat_ssl shows of a TLS connection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SslInfo {
    /// "TLSv1.2", "TLSv1.3".
    pub version: &'static str,
    /// The suite's OpenSSL name, as PostgreSQL (built with OpenSSL) reports it.
    pub cipher: String,
    pub bits: i32,
    pub client_dn: Option<String>,
    /// Decimal, for the numeric column.
    pub client_serial: Option<String>,
    pub issuer_dn: Option<String>,
}

impl SslInfo {
    /// Reads the negotiated parameters of a connection whose handshake is done.
    pub fn of(conn: &ServerConnection) -> SslInfo {
        let version = match conn.protocol_version() {
            Some(rustls::ProtocolVersion::TLSv1_3) => "TLSv1.3",
            _ => "TLSv1.2",
        };
        let suite = conn
            .negotiated_cipher_suite()
            .and_then(|s| s.suite().as_str())
            .unwrap_or("");
        let (cipher, bits) = openssl_cipher_name(suite);
        let peer = conn
            .peer_certificates()
            .and_then(|c| c.first())
            .and_then(|c| x509::CertNames::parse(c));
        SslInfo {
            version,
            cipher,
            bits,
            client_dn: peer.as_ref().map(|p| p.subject.clone()),
            client_serial: peer.as_ref().map(|p| p.serial.clone()),
            issuer_dn: peer.map(|p| p.issuer),
        }
    }
}

/// rustls's IANA suite name as OpenSSL names it, and its key bits.
fn openssl_cipher_name(iana: &str) -> (String, i32) {
    let bits = if iana.contains("AES_128") { 128 } else { 256 };
    // OpenSSL names TLS 1.3 suites as IANA does.
    if let Some(rest) = iana.strip_prefix("TLS13_") {
        return (format!("TLS_{rest}"), bits);
    }
    let name = match iana {
        "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256" => "ECDHE-ECDSA-AES128-GCM-SHA256",
        "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384" => "ECDHE-ECDSA-AES256-GCM-SHA384",
        "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256" => "ECDHE-ECDSA-CHACHA20-POLY1305",
        "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256" => "ECDHE-RSA-AES128-GCM-SHA256",
        "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384" => "ECDHE-RSA-AES256-GCM-SHA384",
        "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256" => "ECDHE-RSA-CHACHA20-POLY1305",
        other => other,
    };
    (name.to_string(), bits)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(min: TlsVersion, max: Option<TlsVersion>) -> TlsSettings {
        TlsSettings {
            enabled: true,
            cert_file: "server.crt".into(),
            key_file: "server.key".into(),
            ca_file: String::new(),
            min_version: min,
            max_version: max,
            data_dir: PathBuf::from("/nonexistent"),
        }
    }

    #[test]
    fn version_range() {
        use TlsVersion::*;
        assert_eq!(protocol_versions(&settings(V1_2, None)).unwrap().len(), 2);
        assert_eq!(protocol_versions(&settings(V1_0, None)).unwrap().len(), 2);
        let only13 = protocol_versions(&settings(V1_3, None)).unwrap();
        assert_eq!(only13, vec![&rustls::version::TLS13]);
        let only12 = protocol_versions(&settings(V1_0, Some(V1_2))).unwrap();
        assert_eq!(only12, vec![&rustls::version::TLS12]);
        let e = protocol_versions(&settings(V1_3, Some(V1_2))).unwrap_err();
        assert_eq!(e.to_string(), "could not set SSL protocol version range");
        let e = protocol_versions(&settings(V1_0, Some(V1_1))).unwrap_err();
        assert_eq!(
            e.to_string(),
            "\"ssl_max_protocol_version\" setting \"TLSv1.1\" not supported by this build"
        );
    }

    #[test]
    fn missing_certificate_is_named_as_configured() {
        let e = load_config(&settings(TlsVersion::V1_2, None)).unwrap_err();
        assert_eq!(
            e.to_string(),
            "could not load server certificate file \"server.crt\": No such file or directory"
        );
    }

    #[test]
    fn cipher_names() {
        assert_eq!(
            openssl_cipher_name("TLS13_AES_256_GCM_SHA384"),
            ("TLS_AES_256_GCM_SHA384".to_string(), 256)
        );
        assert_eq!(
            openssl_cipher_name("TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"),
            ("ECDHE-RSA-AES128-GCM-SHA256".to_string(), 128)
        );
    }
}
