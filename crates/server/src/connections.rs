//! The table of open client connections, from accept to close, and the
//! watchdog work the listener does over it: ending connections that do not
//! finish startup in time (`authentication_timeout`), noticing clients that
//! hung up during a long statement (`client_connection_check_interval`),
//! keeping the process under its file-descriptor limit, and reaching every
//! connection at shutdown.
//!
//! Invariant: a connection's socket stays open while its entry is in the
//! table. [`Admitted`] removes the entry (under the table lock) before its
//! stream is closed, and every `shutdown(2)` on a table fd happens under the
//! same lock, so a recycled descriptor number is never shut down by mistake.

use std::collections::BTreeMap;
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::interrupt::Interrupts;
use parking_lot::Mutex;

use crate::gucs::{self, Settings};

/// Connection settings, typed once from the server's settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConnectionSettings {
    /// A connection that has not finished startup by then is closed.
    pub authentication_timeout: Duration,
    pub max_connections: usize,
    /// Slots only superusers may take.
    pub superuser_reserved_connections: usize,
    /// The server's socket settings: applied at accept, and to sessions
    /// until they SET their own.
    pub socket: SocketSettings,
}

impl ConnectionSettings {
    pub fn from_settings(s: &Settings) -> Self {
        let ms = |name: &str, unit_ms: u64| {
            Duration::from_millis(
                s.get(name)
                    .ok()
                    .and_then(|v| gucs::parse_duration_ms(v, unit_ms))
                    .unwrap_or(0),
            )
        };
        let int = |name: &str| -> u64 {
            s.get(name)
                .ok()
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or(0)
        };
        ConnectionSettings {
            authentication_timeout: ms("authentication_timeout", 1000),
            max_connections: int("max_connections") as usize,
            superuser_reserved_connections: int("superuser_reserved_connections") as usize,
            socket: SocketSettings::from_settings(s),
        }
    }
}

/// The settings of one connection's socket a session may change (PostgreSQL
/// gives them the user context): TCP keepalives and the hang-up check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SocketSettings {
    /// How often a running statement's client is polled for a hang-up; zero: never.
    pub client_connection_check_interval: Duration,
    /// TCP keepalive parameters; zero keeps the system default.
    pub tcp_keepalives_idle: Duration,
    pub tcp_keepalives_interval: Duration,
    pub tcp_keepalives_count: u32,
}

impl SocketSettings {
    pub fn from_settings(s: &Settings) -> Self {
        let ms = |name: &str, unit_ms: u64| {
            Duration::from_millis(
                s.get(name)
                    .ok()
                    .and_then(|v| gucs::parse_duration_ms(v, unit_ms))
                    .unwrap_or(0),
            )
        };
        SocketSettings {
            client_connection_check_interval: ms("client_connection_check_interval", 1),
            tcp_keepalives_idle: ms("tcp_keepalives_idle", 1000),
            tcp_keepalives_interval: ms("tcp_keepalives_interval", 1000),
            tcp_keepalives_count: s
                .get("tcp_keepalives_count")
                .ok()
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or(0),
        }
    }
}

/// `client_check_interval_ms` before the session set one.
const CHECK_INTERVAL_UNSET: u64 = u64::MAX;

/// What a connection's thread and the listener share about it.
#[derive(Debug)]
pub struct ConnectionShared {
    /// Raised by cancel requests, shutdown and the watchdog; polled by the session.
    pub interrupts: Arc<Interrupts>,
    /// Set once startup finished and a session is open; until then the
    /// connection is subject to `authentication_timeout` and eviction.
    in_session: AtomicBool,
    /// The session's client_connection_check_interval in milliseconds
    /// (`CHECK_INTERVAL_UNSET`: the server's).
    client_check_interval_ms: AtomicU64,
    /// The socket's descriptor when it is a TCP connection (keepalives apply).
    tcp_fd: std::sync::OnceLock<RawFd>,
    /// The socket's descriptor, TCP or Unix (an idle listener polls it).
    socket_fd: std::sync::OnceLock<RawFd>,
}

impl Default for ConnectionShared {
    fn default() -> Self {
        ConnectionShared {
            interrupts: Default::default(),
            in_session: AtomicBool::new(false),
            client_check_interval_ms: AtomicU64::new(CHECK_INTERVAL_UNSET),
            tcp_fd: std::sync::OnceLock::new(),
            socket_fd: std::sync::OnceLock::new(),
        }
    }
}

impl ConnectionShared {
    pub fn mark_session_started(&self) {
        // Relaxed: only the watchdog reads it, and a tick's delay is harmless.
        self.in_session.store(true, Ordering::Relaxed);
    }

    pub fn in_session(&self) -> bool {
        self.in_session.load(Ordering::Relaxed)
    }

    /// The client socket's descriptor, once the connection was admitted.
    pub fn socket_fd(&self) -> Option<RawFd> {
        self.socket_fd.get().copied()
    }

    /// Records that the connection is TCP, on descriptor `fd`.
    pub fn set_tcp_fd(&self, fd: RawFd) {
        let _ = self.tcp_fd.set(fd);
    }

    /// Applies a session's socket settings: its keepalives to a TCP socket
    /// (the caller, the connection's thread, owns the stream, so `fd` is
    /// open), its check interval to the watchdog.
    pub fn apply_socket_settings(&self, s: &SocketSettings) {
        if let Some(&fd) = self.tcp_fd.get() {
            apply_tcp_keepalives(fd, s);
        }
        self.set_client_check_interval(s.client_connection_check_interval);
    }

    /// Sets how often the watchdog polls this connection's client while its
    /// session runs (the session's client_connection_check_interval).
    pub fn set_client_check_interval(&self, every: Duration) {
        let ms = u64::try_from(every.as_millis()).unwrap_or(CHECK_INTERVAL_UNSET - 1);
        self.client_check_interval_ms
            .store(ms.min(CHECK_INTERVAL_UNSET - 1), Ordering::Relaxed);
    }

    /// This connection's check interval, `server` until its session set one.
    fn client_check_interval(&self, server: Duration) -> Duration {
        match self.client_check_interval_ms.load(Ordering::Relaxed) {
            CHECK_INTERVAL_UNSET => server,
            ms => Duration::from_millis(ms),
        }
    }
}

struct Entry {
    fd: RawFd,
    accepted_at: Instant,
    shared: Arc<ConnectionShared>,
    /// Set once the watchdog shut the socket down, so it is not done twice.
    hung_up: bool,
    /// When the watchdog last polled this session's client.
    last_client_check: Option<Instant>,
}

/// Every open client connection, in accept order.
#[derive(Default)]
pub struct ConnectionTable {
    inner: Mutex<TableInner>,
}

#[derive(Default)]
struct TableInner {
    next_id: u64,
    entries: BTreeMap<u64, Entry>,
}

/// An accepted connection registered in the table. Dropping it removes the
/// entry first, then closes the stream (fields drop after `Drop::drop`).
pub struct Admitted<S> {
    table: Arc<ConnectionTable>,
    id: u64,
    pub shared: Arc<ConnectionShared>,
    pub stream: S,
}

impl<S> Drop for Admitted<S> {
    fn drop(&mut self) {
        self.table.inner.lock().entries.remove(&self.id);
    }
}

/// `shutdown(2)` on a socket in the table. The caller holds the table lock,
/// which keeps `fd` open (see the module invariant).
fn shutdown_socket(_table: &TableInner, fd: RawFd, how: libc::c_int) {
    // SAFETY: shutdown only acts on the socket; `fd` is open while its entry
    // exists and the lock (witnessed by `_table`) is held.
    unsafe {
        libc::shutdown(fd, how);
    }
}

impl ConnectionTable {
    pub fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }

    /// Registers an accepted stream whose descriptor is `fd`.
    pub fn admit<S>(self: &Arc<Self>, fd: RawFd, stream: S) -> Admitted<S> {
        let shared = Arc::new(ConnectionShared::default());
        let _ = shared.socket_fd.set(fd);
        let mut inner = self.inner.lock();
        let id = inner.next_id;
        inner.next_id += 1;
        inner.entries.insert(
            id,
            Entry {
                fd,
                accepted_at: Instant::now(),
                shared: shared.clone(),
                hung_up: false,
                last_client_check: None,
            },
        );
        Admitted {
            table: self.clone(),
            id,
            shared,
            stream,
        }
    }

    /// Open connections, in startup or in a session.
    pub fn len(&self) -> usize {
        self.inner.lock().entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Closes the connection that has waited longest in startup, to make
    /// room for another under the descriptor limit. Returns whether one was
    /// closed.
    pub fn evict_oldest_in_startup(&self) -> bool {
        let mut inner = self.inner.lock();
        let inner = &mut *inner;
        let Some(entry) = inner
            .entries
            .values_mut()
            .find(|e| !e.hung_up && !e.shared.in_session())
        else {
            return false;
        };
        entry.hung_up = true;
        let fd = entry.fd;
        shutdown_socket(inner, fd, libc::SHUT_RDWR);
        true
    }

    /// One watchdog round: closes connections in startup for longer than
    /// `authentication_timeout`, and every `client_connection_check_interval`
    /// marks sessions whose client hung up. Returns how many were closed.
    pub fn watchdog_tick(&self, cfg: &ConnectionSettings, now: Instant) -> usize {
        let mut inner = self.inner.lock();
        let inner = &mut *inner;
        let mut expired = Vec::new();
        for e in inner.entries.values_mut() {
            if !e.hung_up
                && !e.shared.in_session()
                && !cfg.authentication_timeout.is_zero()
                && now.duration_since(e.accepted_at) >= cfg.authentication_timeout
            {
                e.hung_up = true;
                expired.push(e.fd);
            }
        }
        for &fd in &expired {
            shutdown_socket(inner, fd, libc::SHUT_RDWR);
        }
        // pg_terminate_backend: a session waiting for its client's next
        // message (or a notification) is woken to end now, as PostgreSQL's
        // SIGTERM ends an idle backend, not at that message.
        let mut terminated = Vec::new();
        for e in inner.entries.values_mut() {
            if !e.hung_up && e.shared.in_session() && e.shared.interrupts.terminate_pending() {
                e.hung_up = true;
                terminated.push(e.fd);
            }
        }
        for fd in terminated {
            shutdown_socket(inner, fd, libc::SHUT_RD);
        }
        // Each session's own interval (it may SET it).
        for e in inner.entries.values_mut() {
            if !e.shared.in_session() {
                continue;
            }
            let interval = e
                .shared
                .client_check_interval(cfg.socket.client_connection_check_interval);
            let due = !interval.is_zero()
                && e.last_client_check
                    .is_none_or(|t| now.duration_since(t) >= interval);
            if due {
                e.last_client_check = Some(now);
                if client_hung_up(e.fd) {
                    e.shared.interrupts.report_client_lost();
                }
            }
        }
        expired.len()
    }

    /// Fast shutdown: asks every session to end at its next interrupt point
    /// and wakes the ones waiting for a message (their read sees end of file;
    /// they can still send their FATAL message). Connections still in
    /// startup are closed.
    pub fn terminate_all(&self) {
        let mut inner = self.inner.lock();
        let inner = &mut *inner;
        let mut targets = Vec::new();
        for e in inner.entries.values_mut() {
            e.shared.interrupts.request_terminate();
            let how = if e.shared.in_session() {
                libc::SHUT_RD
            } else {
                libc::SHUT_RDWR
            };
            targets.push((e.fd, how));
        }
        for (fd, how) in targets {
            shutdown_socket(inner, fd, how);
        }
    }

    /// Last resort of a shutdown: closes both directions of every socket so
    /// a session blocked writing to a client that stopped reading wakes up.
    pub fn hang_up_all(&self) {
        let mut inner = self.inner.lock();
        let inner = &mut *inner;
        let fds: Vec<RawFd> = inner.entries.values_mut().map(|e| e.fd).collect();
        for fd in fds {
            shutdown_socket(inner, fd, libc::SHUT_RDWR);
        }
    }
}

/// Whether the peer of a connected socket has closed it or reset it, without
/// consuming any data (PostgreSQL's pq_check_connection).
fn client_hung_up(fd: RawFd) -> bool {
    let mut pfd = libc::pollfd {
        fd,
        events: libc::POLLRDHUP,
        revents: 0,
    };
    // SAFETY: one valid pollfd, zero timeout.
    let n = unsafe { libc::poll(&mut pfd, 1, 0) };
    n > 0 && pfd.revents & (libc::POLLRDHUP | libc::POLLHUP | libc::POLLERR) != 0
}

/// The descriptor budget for client connections under RLIMIT_NOFILE, after
/// raising the soft limit to the hard one. The rest is kept for relation
/// files, listeners and the standard streams.
pub fn connection_fd_budget() -> usize {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: plain getrlimit/setrlimit on a local struct.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) != 0 {
            return 1000;
        }
        if lim.rlim_cur < lim.rlim_max {
            let raised = libc::rlimit {
                rlim_cur: lim.rlim_max,
                rlim_max: lim.rlim_max,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &raised) == 0 {
                lim.rlim_cur = lim.rlim_max;
            }
        }
    }
    let limit = usize::try_from(lim.rlim_cur)
        .unwrap_or(usize::MAX)
        .min(1 << 20);
    let reserve = (limit / 8).max(64);
    limit.saturating_sub(reserve).max(8)
}

/// Applies the TCP keepalive settings to a TCP socket (at accept, and when
/// its session changes them).
pub fn apply_tcp_keepalives(fd: RawFd, cfg: &SocketSettings) {
    let set = |level: libc::c_int, name: libc::c_int, value: libc::c_int| {
        // SAFETY: setsockopt with a pointer to a local c_int of the right size.
        unsafe {
            libc::setsockopt(
                fd,
                level,
                name,
                &value as *const libc::c_int as *const libc::c_void,
                std::mem::size_of::<libc::c_int>() as libc::socklen_t,
            );
        }
    };
    // PostgreSQL turns SO_KEEPALIVE on for every TCP connection.
    set(libc::SOL_SOCKET, libc::SO_KEEPALIVE, 1);
    let secs = |d: Duration| d.as_secs().clamp(1, i32::MAX as u64) as libc::c_int;
    if !cfg.tcp_keepalives_idle.is_zero() {
        set(
            libc::IPPROTO_TCP,
            libc::TCP_KEEPIDLE,
            secs(cfg.tcp_keepalives_idle),
        );
    }
    if !cfg.tcp_keepalives_interval.is_zero() {
        set(
            libc::IPPROTO_TCP,
            libc::TCP_KEEPINTVL,
            secs(cfg.tcp_keepalives_interval),
        );
    }
    if cfg.tcp_keepalives_count > 0 {
        set(
            libc::IPPROTO_TCP,
            libc::TCP_KEEPCNT,
            cfg.tcp_keepalives_count.min(i32::MAX as u32) as libc::c_int,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;
    use std::os::fd::AsRawFd;
    use std::os::unix::net::UnixStream;

    fn cfg(auth_ms: u64) -> ConnectionSettings {
        ConnectionSettings {
            authentication_timeout: Duration::from_millis(auth_ms),
            max_connections: 100,
            superuser_reserved_connections: 3,
            socket: SocketSettings {
                client_connection_check_interval: Duration::from_millis(1),
                ..Default::default()
            },
        }
    }

    #[test]
    fn startup_timeout_closes_only_connections_in_startup() {
        let table = ConnectionTable::new();
        let (a, _a_peer) = UnixStream::pair().unwrap();
        let (b, _b_peer) = UnixStream::pair().unwrap();
        let a = table.admit(a.as_raw_fd(), a);
        let b = table.admit(b.as_raw_fd(), b);
        b.shared.mark_session_started();
        let later = Instant::now() + Duration::from_secs(5);
        assert_eq!(table.watchdog_tick(&cfg(1000), later), 1);
        // Shut down for reading: the blocked read of the startup packet ends.
        let mut buf = [0u8; 1];
        assert_eq!((&a.stream).read(&mut buf).unwrap(), 0);
        assert_eq!(table.watchdog_tick(&cfg(1000), later), 0, "not twice");
        assert_eq!(table.len(), 2);
        drop(a);
        assert_eq!(table.len(), 1);
        drop(b);
        assert!(table.is_empty());
    }

    #[test]
    fn hung_up_client_is_reported() {
        let table = ConnectionTable::new();
        let (a, peer) = UnixStream::pair().unwrap();
        let a = table.admit(a.as_raw_fd(), a);
        a.shared.mark_session_started();
        table.watchdog_tick(&cfg(0), Instant::now());
        assert!(!a.shared.interrupts.any_pending());
        drop(peer);
        table.watchdog_tick(&cfg(0), Instant::now() + Duration::from_secs(1));
        assert!(a.shared.interrupts.session_ending_error().is_some());
    }

    #[test]
    fn eviction_takes_the_oldest_in_startup() {
        let table = ConnectionTable::new();
        let (s1, _p1) = UnixStream::pair().unwrap();
        let (s2, _p2) = UnixStream::pair().unwrap();
        let (s3, _p3) = UnixStream::pair().unwrap();
        let c1 = table.admit(s1.as_raw_fd(), s1);
        c1.shared.mark_session_started();
        let c2 = table.admit(s2.as_raw_fd(), s2);
        let c3 = table.admit(s3.as_raw_fd(), s3);
        assert!(table.evict_oldest_in_startup());
        let mut buf = [0u8; 1];
        assert_eq!((&c2.stream).read(&mut buf).unwrap(), 0);
        assert!(table.evict_oldest_in_startup());
        assert_eq!((&c3.stream).read(&mut buf).unwrap(), 0);
        assert!(
            !table.evict_oldest_in_startup(),
            "sessions are never evicted"
        );
        drop((c1, c2, c3));
    }

    #[test]
    fn terminate_all_raises_terminate() {
        let table = ConnectionTable::new();
        let (s, _peer) = UnixStream::pair().unwrap();
        let c = table.admit(s.as_raw_fd(), s);
        c.shared.mark_session_started();
        table.terminate_all();
        assert!(c.shared.interrupts.terminate_pending());
        let mut buf = [0u8; 1];
        assert_eq!((&c.stream).read(&mut buf).unwrap(), 0);
    }
}
