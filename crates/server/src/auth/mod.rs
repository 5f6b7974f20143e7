//! Client authentication: `pg_hba.conf` rules ([`hba`]), stored password
//! verifiers and their checks ([`password`], [`scram`]). The wire exchange
//! itself lives in `protocol/authenticate.rs`.

pub mod hba;
pub mod password;
pub mod scram;

use std::net::IpAddr;

/// Where a connection comes from, as pg_hba.conf matches it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClientAddr {
    /// A Unix-domain socket (`local` lines).
    Local,
    /// A TCP connection from this address (`host*` lines).
    Host(IpAddr),
}

impl ClientAddr {
    /// The host as PostgreSQL's messages name it.
    pub fn display(&self) -> String {
        match self {
            ClientAddr::Local => "[local]".into(),
            ClientAddr::Host(ip) => ip.to_string(),
        }
    }
}

/// Fills `buf` with random bytes from the operating system.
pub(crate) fn random_bytes(buf: &mut [u8]) {
    getrandom::getrandom(buf).expect("the OS random source works");
}
