//! SSLRequest with a TLS configuration: 'S', the handshake, and the whole
//! protocol over TLS; 'N' on Unix sockets; unencrypted data after the
//! request refused.

use std::net::{IpAddr, Ipv4Addr};
use std::os::unix::fs::PermissionsExt;

use rustls::pki_types::ServerName;
use rustls::{ClientConfig, ClientConnection, RootCertStore, StreamOwned};

use super::*;
use crate::auth::ClientAddr;
use crate::tls::{load_config, TlsSettings, TlsVersion};

const SSL_REQUEST: [u8; 8] = [0, 0, 0, 8, 4, 0xd2, 0x16, 0x2f];
const TCP: ClientAddr = ClientAddr::Host(IpAddr::V4(Ipv4Addr::LOCALHOST));

/// A CA and a server certificate for "localhost" signed by it, loaded the
/// way the server loads them; returns the server config and the CA (DER).
fn tls_setup(dir: &std::path::Path) -> (Arc<rustls::ServerConfig>, Vec<u8>) {
    let ca_key = rcgen::KeyPair::generate().unwrap();
    let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    ca_params
        .distinguished_name
        .push(rcgen::DnType::CommonName, "test CA");
    let ca = ca_params.self_signed(&ca_key).unwrap();
    let key = rcgen::KeyPair::generate().unwrap();
    let params = rcgen::CertificateParams::new(vec!["localhost".into()]).unwrap();
    let cert = params.signed_by(&key, &ca, &ca_key).unwrap();
    std::fs::write(dir.join("server.crt"), cert.pem()).unwrap();
    let key_path = dir.join("server.key");
    std::fs::write(&key_path, key.serialize_pem()).unwrap();
    std::fs::set_permissions(&key_path, std::fs::Permissions::from_mode(0o600)).unwrap();
    let settings = TlsSettings {
        enabled: true,
        cert_file: "server.crt".into(),
        key_file: "server.key".into(),
        ca_file: String::new(),
        min_version: TlsVersion::V1_2,
        max_version: None,
        data_dir: dir.to_path_buf(),
    };
    (load_config(&settings).unwrap(), ca.der().to_vec())
}

fn tls_server(dir: &std::path::Path) -> (Server, Vec<u8>) {
    let (config, ca) = tls_setup(dir);
    let server = Server {
        factory: Arc::new(MockFactory {
            tls: Some(config),
            ..Default::default()
        }),
        registry: Arc::new(BackendRegistry::new()),
        limits: ProtocolLimits::default(),
    };
    (server, ca)
}

fn startup_packet(user: &str) -> Vec<u8> {
    let mut body = 196608u32.to_be_bytes().to_vec();
    for part in ["user", user, ""] {
        body.extend_from_slice(part.as_bytes());
        body.push(0);
    }
    let mut p = ((body.len() + 4) as u32).to_be_bytes().to_vec();
    p.extend(body);
    p
}

fn read_message(r: &mut impl Read) -> Option<(u8, Vec<u8>)> {
    let mut head = [0u8; 5];
    r.read_exact(&mut head).ok()?;
    let len = u32::from_be_bytes([head[1], head[2], head[3], head[4]]) as usize;
    let mut body = vec![0; len - 4];
    r.read_exact(&mut body).ok()?;
    Some((head[0], body))
}

/// Message types up to ReadyForQuery.
fn until_ready(r: &mut impl Read) -> Vec<u8> {
    let mut types = Vec::new();
    while let Some((ty, _)) = read_message(r) {
        types.push(ty);
        if ty == b'Z' {
            break;
        }
    }
    types
}

#[test]
fn ssl_request_gets_s_and_the_session_runs_over_tls() {
    let dir = tempfile::tempdir().unwrap();
    let (server, ca) = tls_server(dir.path());
    let mut c = server.connect_from(TCP);
    c.s.write_all(&SSL_REQUEST).unwrap();
    assert_eq!(c.recv_byte(), b'S');
    let mut roots = RootCertStore::empty();
    roots.add(ca.into()).unwrap();
    let config =
        ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_root_certificates(roots)
            .with_no_client_auth();
    let name = ServerName::try_from("localhost").unwrap();
    let conn = ClientConnection::new(Arc::new(config), name).unwrap();
    let mut tls = StreamOwned::new(conn, c.s.try_clone().unwrap());
    tls.write_all(&startup_packet("alice")).unwrap();
    assert_eq!(until_ready(&mut tls), b"RSSSKZ");
    // A result larger than the TLS record and send buffers, byte-exact.
    let q = b"gen 5000\0";
    let mut msg = vec![b'Q'];
    msg.extend_from_slice(&((q.len() + 4) as u32).to_be_bytes());
    msg.extend_from_slice(q);
    tls.write_all(&msg).unwrap();
    let mut rows = 0;
    loop {
        let (ty, body) = read_message(&mut tls).unwrap();
        if ty == b'D' {
            rows += 1;
            let text = String::from_utf8_lossy(&body[6..]).into_owned();
            assert_eq!(text, rows.to_string());
        }
        if ty == b'Z' {
            break;
        }
    }
    assert_eq!(rows, 5000);
    tls.write_all(&[b'X', 0, 0, 0, 4]).unwrap();
    tls.flush().unwrap();
    // The server ends with close_notify: a clean end of stream.
    let mut rest = Vec::new();
    assert_eq!(tls.read_to_end(&mut rest).unwrap(), 0);
    c.join();
    let log = server.factory.log.lock().unwrap();
    let ssl = log.startups[0]
        .ssl
        .as_ref()
        .expect("TLS info reaches the session");
    assert!(ssl.version.starts_with("TLSv1."), "{ssl:?}");
    assert!(ssl.bits >= 128);
    assert_eq!(ssl.client_dn, None);
}

#[test]
fn unix_socket_ssl_request_gets_n() {
    let dir = tempfile::tempdir().unwrap();
    let (server, _) = tls_server(dir.path());
    let mut c = server.connect();
    c.send_packet(&80877103u32.to_be_bytes());
    assert_eq!(c.recv_byte(), b'N');
    c.startup(&[("user", "alice")]);
    assert_eq!(c.until_ready().last().unwrap(), "Z(I)");
    assert!(server.factory.log.lock().unwrap().startups[0].ssl.is_none());
}

#[test]
fn data_after_ssl_request_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (server, _) = tls_server(dir.path());
    let mut c = server.connect_from(TCP);
    let mut bytes = SSL_REQUEST.to_vec();
    bytes.extend(startup_packet("alice"));
    c.s.write_all(&bytes).unwrap();
    // No 'S': the refusal comes in plain text.
    assert_eq!(
        c.until_eof(),
        v(&["E(FATAL:08P01:received unencrypted data after SSL request)"])
    );
    // Without TLS: 'N', then the same refusal.
    let server = Server::new();
    let mut c = server.connect_from(TCP);
    c.s.write_all(&bytes).unwrap();
    assert_eq!(c.recv_byte(), b'N');
    assert_eq!(
        c.until_eof(),
        v(&["E(FATAL:08P01:received unencrypted data after SSL request)"])
    );
}

#[test]
fn failed_handshake_ends_only_that_connection() {
    let dir = tempfile::tempdir().unwrap();
    let (server, _) = tls_server(dir.path());
    let mut c = server.connect_from(TCP);
    c.s.write_all(&SSL_REQUEST).unwrap();
    assert_eq!(c.recv_byte(), b'S');
    // Not a ClientHello: the server sends an alert (or nothing) and closes.
    c.s.write_all(&startup_packet("alice")).unwrap();
    let mut rest = Vec::new();
    let _ = c.s.read_to_end(&mut rest);
    assert!(rest.first().is_none_or(|&b| b == 0x15), "{rest:?}");
    c.join();
    // Hanging up mid-handshake is no different.
    let mut c = server.connect_from(TCP);
    c.s.write_all(&SSL_REQUEST).unwrap();
    assert_eq!(c.recv_byte(), b'S');
    c.s.shutdown(std::net::Shutdown::Write).unwrap();
    c.join();
    assert_eq!(server.registry.count(), 0);
    let mut c = server.login();
    c.query("select");
    assert_eq!(c.until_ready().last().unwrap(), "Z(I)");
}
