//! `pg_hba.conf`: which connections may authenticate, and how. The first line
//! that matches a connection decides; no match rejects it.

use std::net::IpAddr;
use std::path::Path;
use std::sync::Arc;

use parking_lot::RwLock;

use super::ClientAddr;

pub const FILE_NAME: &str = "pg_hba.conf";

/// What `initdb` writes without options: trust on the Unix socket and on
/// loopback TCP (PostgreSQL also adds replication lines, which have no meaning here).
pub const DEFAULT_CONF: &str = "\
# Scalegres client authentication configuration, as PostgreSQL's pg_hba.conf:
# TYPE  DATABASE  USER  ADDRESS  METHOD
# TYPE: local (Unix socket), host, hostssl, hostnossl.
# METHOD: trust, reject, scram-sha-256, md5, password.
# The first matching line decides. Reloaded on SIGHUP.
#
# To require passwords, set one with ALTER ROLE name PASSWORD '...' and
# change trust to scram-sha-256 below.

# \"local\" is for Unix domain socket connections only
local   all             all                                     trust
# IPv4 local connections:
host    all             all             127.0.0.1/32            trust
# IPv6 local connections:
host    all             all             ::1/128                 trust
";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    Trust,
    Reject,
    ScramSha256,
    Md5,
    Password,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ConnType {
    Local,
    Host,
    HostSsl,
    HostNoSsl,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum NameMatch {
    All,
    /// Database only: the database named like the user.
    SameUser,
    Name(String),
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Network {
    addr: IpAddr,
    prefix: u32,
}

impl Network {
    fn contains(&self, ip: IpAddr) -> bool {
        match (self.addr, ip) {
            (IpAddr::V4(net), IpAddr::V4(ip)) => {
                let mask = u32::MAX.checked_shl(32 - self.prefix).unwrap_or(0);
                u32::from(net) & mask == u32::from(ip) & mask
            }
            (IpAddr::V6(net), IpAddr::V6(ip)) => {
                let mask = u128::MAX.checked_shl(128 - self.prefix).unwrap_or(0);
                u128::from(net) & mask == u128::from(ip) & mask
            }
            // An IPv4 client on an IPv6 socket arrives as ::ffff:a.b.c.d.
            (IpAddr::V4(_), IpAddr::V6(ip)) => ip
                .to_ipv4_mapped()
                .is_some_and(|v4| self.contains(IpAddr::V4(v4))),
            (IpAddr::V6(_), IpAddr::V4(_)) => false,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct HbaLine {
    conn_type: ConnType,
    databases: Vec<NameMatch>,
    users: Vec<NameMatch>,
    /// None for `local` lines.
    network: Option<Network>,
    method: Method,
}

/// A parse error: the file, line number and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message} in line {line} of configuration file \"{file}\"")]
pub struct HbaError {
    pub file: String,
    pub line: usize,
    pub message: String,
}

/// One connection to be matched.
#[derive(Debug, Clone, Copy)]
pub struct ConnInfo<'a> {
    pub addr: ClientAddr,
    pub ssl: bool,
    pub user: &'a str,
    pub database: &'a str,
}

/// The parsed rules.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HbaConfig {
    lines: Vec<HbaLine>,
}

impl HbaConfig {
    pub fn load(path: &Path) -> Result<HbaConfig, HbaError> {
        let text = std::fs::read_to_string(path).map_err(|e| HbaError {
            file: path.display().to_string(),
            line: 0,
            message: format!("could not open file: {e}"),
        })?;
        Self::parse(&text, &path.display().to_string())
    }

    pub fn parse(text: &str, file: &str) -> Result<HbaConfig, HbaError> {
        let mut lines = Vec::new();
        for (i, raw) in text.lines().enumerate() {
            let fields = tokenize(raw);
            if fields.is_empty() {
                continue;
            }
            let line = parse_line(&fields).map_err(|message| HbaError {
                file: file.to_string(),
                line: i + 1,
                message,
            })?;
            lines.push(line);
        }
        Ok(HbaConfig { lines })
    }

    /// The method of the first matching line, or None if no line matches.
    pub fn method_for(&self, conn: &ConnInfo<'_>) -> Option<Method> {
        self.lines
            .iter()
            .find(|l| line_matches(l, conn))
            .map(|l| l.method)
    }
}

fn line_matches(line: &HbaLine, conn: &ConnInfo<'_>) -> bool {
    let addr_ok = match (line.conn_type, conn.addr) {
        (ConnType::Local, ClientAddr::Local) => true,
        (ConnType::Local, ClientAddr::Host(_)) | (_, ClientAddr::Local) => false,
        (ConnType::HostSsl, ClientAddr::Host(_)) if !conn.ssl => false,
        (ConnType::HostNoSsl, ClientAddr::Host(_)) if conn.ssl => false,
        (_, ClientAddr::Host(ip)) => line.network.as_ref().is_some_and(|n| n.contains(ip)),
    };
    addr_ok
        && line.databases.iter().any(|d| match d {
            NameMatch::All => true,
            NameMatch::SameUser => conn.database == conn.user,
            NameMatch::Name(n) => n == conn.database,
        })
        && line.users.iter().any(|u| match u {
            NameMatch::All => true,
            NameMatch::SameUser => false,
            NameMatch::Name(n) => n == conn.user,
        })
}

/// A field: its text and whether it was quoted (a quoted `all` is a name).
type Token = (String, bool);

/// Splits a line into fields; `#` starts a comment outside quotes; a field is
/// a comma list whose items may be double-quoted.
fn tokenize(line: &str) -> Vec<Vec<Token>> {
    let mut fields: Vec<Vec<Token>> = Vec::new();
    let mut chars = line.chars().peekable();
    loop {
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        match chars.peek() {
            None | Some('#') => break,
            _ => {}
        }
        let mut items = Vec::new();
        loop {
            let mut item = String::new();
            let mut quoted = false;
            let mut in_quotes = false;
            while let Some(&c) = chars.peek() {
                if c == '"' {
                    in_quotes = !in_quotes;
                    quoted = true;
                } else if !in_quotes && (c.is_whitespace() || c == ',' || c == '#') {
                    break;
                } else {
                    item.push(c);
                }
                chars.next();
            }
            items.push((item, quoted));
            if chars.next_if_eq(&',').is_none() {
                break;
            }
        }
        fields.push(items);
    }
    fields
}

fn single<'a>(field: &'a [Token], what: &str) -> Result<&'a str, String> {
    match field {
        [(s, _)] => Ok(s),
        _ => Err(format!("multiple values specified for {what}")),
    }
}

fn parse_line(fields: &[Vec<Token>]) -> Result<HbaLine, String> {
    let conn_type = match single(&fields[0], "connection type")? {
        "local" => ConnType::Local,
        "host" => ConnType::Host,
        "hostssl" => ConnType::HostSsl,
        "hostnossl" => ConnType::HostNoSsl,
        other => return Err(format!("invalid connection type \"{other}\"")),
    };
    let mut rest = fields[1..].iter();
    let databases = rest
        .next()
        .ok_or("end-of-line before database specification")?
        .iter()
        .map(|(s, quoted)| match (s.as_str(), quoted) {
            ("all", false) => Ok(NameMatch::All),
            ("sameuser", false) => Ok(NameMatch::SameUser),
            ("samerole" | "samegroup" | "replication", false) => {
                Err(format!("database keyword \"{s}\" is not supported"))
            }
            _ => Ok(NameMatch::Name(s.clone())),
        })
        .collect::<Result<Vec<_>, String>>()?;
    let users = rest
        .next()
        .ok_or("end-of-line before role specification")?
        .iter()
        .map(|(s, quoted)| match (s.as_str(), quoted) {
            ("all", false) => Ok(NameMatch::All),
            (n, false) if n.starts_with('+') || n.starts_with('@') => Err(format!(
                "role \"{n}\": group and file references are not supported"
            )),
            _ => Ok(NameMatch::Name(s.clone())),
        })
        .collect::<Result<Vec<_>, String>>()?;
    let network = if conn_type == ConnType::Local {
        None
    } else {
        let addr = single(
            rest.next()
                .ok_or("end-of-line before IP address specification")?,
            "IP address",
        )?;
        Some(match addr.split_once('/') {
            Some((ip, bits)) => {
                let addr: IpAddr = ip
                    .parse()
                    .map_err(|_| format!("invalid IP address \"{ip}\""))?;
                let max = if addr.is_ipv4() { 32 } else { 128 };
                let prefix = bits
                    .parse::<u32>()
                    .ok()
                    .filter(|&p| p <= max)
                    .ok_or_else(|| format!("invalid CIDR mask in address \"{addr}\""))?;
                Network { addr, prefix }
            }
            None => {
                let addr: IpAddr = addr.parse().map_err(|_| {
                    format!("invalid IP address \"{addr}\" (host names, samehost and samenet are not supported)")
                })?;
                let mask = single(
                    rest.next()
                        .ok_or("end-of-line before netmask specification")?,
                    "netmask",
                )?;
                let mask: IpAddr = mask
                    .parse()
                    .map_err(|_| format!("invalid IP mask \"{mask}\""))?;
                Network {
                    addr,
                    prefix: mask_prefix(addr, mask)
                        .ok_or_else(|| format!("invalid IP mask \"{mask}\""))?,
                }
            }
        })
    };
    let method = match single(
        rest.next()
            .ok_or("end-of-line before authentication method")?,
        "authentication type",
    )? {
        "trust" => Method::Trust,
        "reject" => Method::Reject,
        "scram-sha-256" => Method::ScramSha256,
        "md5" => Method::Md5,
        "password" => Method::Password,
        other => return Err(format!("invalid authentication method \"{other}\"")),
    };
    if let Some(option) = rest.next() {
        let text = option.first().map(|(s, _)| s.as_str()).unwrap_or_default();
        return Err(format!("authentication option \"{text}\" is not supported"));
    }
    Ok(HbaLine {
        conn_type,
        databases,
        users,
        network,
        method,
    })
}

/// The prefix length of a contiguous netmask of the address's family.
fn mask_prefix(addr: IpAddr, mask: IpAddr) -> Option<u32> {
    let (bits, width) = match (addr, mask) {
        (IpAddr::V4(_), IpAddr::V4(m)) => (u128::from(u32::from(m)) << 96, 32),
        (IpAddr::V6(_), IpAddr::V6(m)) => (u128::from(m), 128),
        _ => return None,
    };
    let ones = bits.leading_ones();
    (bits.checked_shl(ones).unwrap_or(0) == 0 && ones <= width).then_some(ones)
}

/// Writes the default pg_hba.conf into a new data directory, unless one is there.
pub fn write_default(data_dir: &Path) -> std::io::Result<()> {
    let path = data_dir.join(FILE_NAME);
    if path.exists() {
        return Ok(());
    }
    std::fs::write(path, DEFAULT_CONF)
}

/// The rules in force, swapped whole on reload; readers take an `Arc` and
/// never see a half-read file.
pub struct HbaHolder {
    path: std::path::PathBuf,
    current: RwLock<Arc<HbaConfig>>,
}

impl HbaHolder {
    /// Loads `pg_hba.conf` from the data directory; an error is fatal at startup.
    pub fn load(data_dir: &Path) -> Result<HbaHolder, HbaError> {
        let path = data_dir.join(FILE_NAME);
        let config = HbaConfig::load(&path)?;
        Ok(HbaHolder {
            path,
            current: RwLock::new(Arc::new(config)),
        })
    }

    /// [`HbaHolder::load`], writing the default file first into a data
    /// directory made before pg_hba.conf existed.
    pub fn load_or_create(data_dir: &Path) -> Result<HbaHolder, HbaError> {
        write_default(data_dir).map_err(|e| HbaError {
            file: data_dir.join(FILE_NAME).display().to_string(),
            line: 0,
            message: format!("could not write file: {e}"),
        })?;
        Self::load(data_dir)
    }

    /// Rules for tests and embedders that have no file.
    pub fn fixed(config: HbaConfig) -> HbaHolder {
        HbaHolder {
            path: std::path::PathBuf::new(),
            current: RwLock::new(Arc::new(config)),
        }
    }

    pub fn current(&self) -> Arc<HbaConfig> {
        self.current.read().clone()
    }

    /// Re-reads the file (SIGHUP). On error the old rules stay in force and
    /// the error is returned for the log, as PostgreSQL does.
    pub fn reload(&self) -> Result<(), HbaError> {
        let config = HbaConfig::load(&self.path)?;
        *self.current.write() = Arc::new(config);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conn<'a>(addr: &str, ssl: bool, user: &'a str, database: &'a str) -> ConnInfo<'a> {
        ConnInfo {
            addr: if addr == "local" {
                ClientAddr::Local
            } else {
                ClientAddr::Host(addr.parse().unwrap())
            },
            ssl,
            user,
            database,
        }
    }

    #[test]
    fn default_is_trust_on_local_and_loopback_only() {
        let c = HbaConfig::parse(DEFAULT_CONF, "x").unwrap();
        assert_eq!(
            c.method_for(&conn("local", false, "u", "d")),
            Some(Method::Trust)
        );
        assert_eq!(
            c.method_for(&conn("127.0.0.1", false, "u", "d")),
            Some(Method::Trust)
        );
        assert_eq!(
            c.method_for(&conn("::1", true, "u", "d")),
            Some(Method::Trust)
        );
        assert_eq!(c.method_for(&conn("10.0.0.1", false, "u", "d")), None);
    }

    #[test]
    fn first_match_lists_and_masks() {
        let c = HbaConfig::parse(
            "hostssl db1,\"all\" bob 10.0.0.0/8 scram-sha-256 # c\n\
             host sameuser all 10.1.0.0 255.255.0.0 md5\n\
             hostnossl all alice,carol 0.0.0.0/0 password\n\
             host all all ::/0 reject\n",
            "f",
        )
        .unwrap();
        let m = |a, ssl, u, d| c.method_for(&conn(a, ssl, u, d));
        assert_eq!(m("10.2.0.1", true, "bob", "db1"), Some(Method::ScramSha256));
        // "all" quoted is a database named all.
        assert_eq!(m("10.2.0.1", true, "bob", "all"), Some(Method::ScramSha256));
        assert_eq!(m("10.2.0.1", true, "bob", "other"), None);
        assert_eq!(m("10.1.3.4", false, "bob", "bob"), Some(Method::Md5));
        assert_eq!(m("10.2.3.4", false, "carol", "x"), Some(Method::Password));
        assert_eq!(m("10.2.3.4", true, "carol", "x"), None);
        assert_eq!(m("fe80::1", false, "x", "y"), Some(Method::Reject));
        assert_eq!(m("local", false, "x", "y"), None);
    }

    #[test]
    fn errors_name_the_line() {
        let e = HbaConfig::parse(
            "local all all trust\nhost all all 1.2.3.4/33 md5\n",
            "/d/pg_hba.conf",
        )
        .unwrap_err();
        assert_eq!(e.line, 2);
        assert!(e.to_string().contains("invalid CIDR mask"), "{e}");
        for bad in [
            "foo all all trust",
            "local all all bogus",
            "host all all 1.2.3.4 md5",
            "host all all 1.2.3.4 255.0.255.0 md5",
            "local all",
        ] {
            assert!(HbaConfig::parse(bad, "f").is_err(), "{bad}");
        }
    }
}
