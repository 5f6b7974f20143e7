//! Backend registry: process ids, cancel keys and cancel flags of the live
//! connections (PostgreSQL's PGPROC array, as far as cancel requests need it).

use std::collections::hash_map::RandomState;
use std::collections::HashMap;
use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use common::interrupt::Interrupts;
use parking_lot::Mutex;

struct BackendEntry {
    secret: i32,
    interrupts: Arc<Interrupts>,
}

struct RegistryInner {
    next_pid: i32,
    backends: HashMap<i32, BackendEntry>,
}

/// Assigns each connection a unique positive process id and a random secret key
/// (sent in BackendKeyData) and maps the pid to the connection's cancel flag, so
/// a CancelRequest arriving on another connection can reach it, and maps it to
/// the connection's interrupt flags.
pub struct BackendRegistry {
    inner: Mutex<RegistryInner>,
    salt: AtomicU64,
}

impl Default for BackendRegistry {
    fn default() -> Self {
        Self::new()
    }
}

impl BackendRegistry {
    pub fn new() -> Self {
        // Start somewhere that looks like an OS pid; uniqueness is what matters.
        let start = 1000 + (random_u64(0) % 30_000) as i32;
        BackendRegistry {
            inner: Mutex::new(RegistryInner {
                next_pid: start,
                backends: HashMap::new(),
            }),
            salt: AtomicU64::new(0),
        }
    }

    /// Registers a new backend whose thread polls `interrupts`; it is removed
    /// when the returned guard is dropped.
    pub fn register(&self, interrupts: Arc<Interrupts>) -> BackendGuard<'_> {
        let secret = random_u64(self.salt.fetch_add(1, Ordering::Relaxed)) as i32;
        let mut inner = self.inner.lock();
        let mut pid = inner.next_pid;
        loop {
            if pid <= 0 {
                pid = 1;
            }
            if !inner.backends.contains_key(&pid) {
                break;
            }
            pid = pid.checked_add(1).unwrap_or(1);
        }
        inner.next_pid = pid.checked_add(1).unwrap_or(1);
        inner.backends.insert(
            pid,
            BackendEntry {
                secret,
                interrupts: interrupts.clone(),
            },
        );
        BackendGuard {
            registry: self,
            pid,
            secret,
            interrupts,
        }
    }

    /// Handles a CancelRequest: sets the cancel flag of backend `pid` if `secret`
    /// matches its key. Returns whether a backend was signalled.
    pub fn cancel(&self, pid: i32, secret: i32) -> bool {
        let inner = self.inner.lock();
        match inner.backends.get(&pid) {
            Some(entry) if entry.secret == secret => {
                entry.interrupts.request_cancel();
                true
            }
            _ => false,
        }
    }

    /// Sets the cancel flag of backend `pid` without checking a key
    /// (for `pg_cancel_backend`). Returns whether the backend exists.
    pub fn cancel_backend(&self, pid: i32) -> bool {
        let inner = self.inner.lock();
        match inner.backends.get(&pid) {
            Some(entry) => {
                entry.interrupts.request_cancel();
                true
            }
            None => false,
        }
    }

    /// Asks backend `pid` to end its session (`pg_terminate_backend`).
    /// Returns whether the backend exists.
    pub fn terminate_backend(&self, pid: i32) -> bool {
        let inner = self.inner.lock();
        match inner.backends.get(&pid) {
            Some(entry) => {
                entry.interrupts.request_terminate();
                true
            }
            None => false,
        }
    }

    /// Number of live backends.
    pub fn count(&self) -> usize {
        self.inner.lock().backends.len()
    }

    /// Pids of the live backends, in ascending order.
    pub fn pids(&self) -> Vec<i32> {
        let mut pids: Vec<i32> = self.inner.lock().backends.keys().copied().collect();
        pids.sort_unstable();
        pids
    }

    fn unregister(&self, pid: i32) {
        self.inner.lock().backends.remove(&pid);
    }
}

/// A registered backend; unregisters it on drop.
pub struct BackendGuard<'a> {
    registry: &'a BackendRegistry,
    pid: i32,
    secret: i32,
    interrupts: Arc<Interrupts>,
}

impl BackendGuard<'_> {
    pub fn pid(&self) -> i32 {
        self.pid
    }
    pub fn secret(&self) -> i32 {
        self.secret
    }
    pub fn interrupts(&self) -> &Arc<Interrupts> {
        &self.interrupts
    }
}

impl Drop for BackendGuard<'_> {
    fn drop(&mut self) {
        self.registry.unregister(self.pid);
    }
}

/// Unpredictable 64 bits: SipHash keyed by the process-random `RandomState`
/// over a counter and the clock. Good enough for cancel keys, which PostgreSQL
/// itself only uses to stop stray cancels.
fn random_u64(salt: u64) -> u64 {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let mut h = RandomState::new().build_hasher();
    h.write_u64(salt);
    h.write_u128(nanos);
    h.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn register_cancel_unregister() {
        let reg = BackendRegistry::new();
        let a = reg.register(Arc::default());
        let b = reg.register(Arc::default());
        assert_ne!(a.pid(), b.pid());
        assert!(a.pid() > 0 && b.pid() > 0);
        assert_eq!(reg.count(), 2);
        assert!(!reg.cancel(a.pid(), a.secret().wrapping_add(1)));
        assert!(!a.interrupts().cancel_pending());
        assert!(reg.cancel(a.pid(), a.secret()));
        assert!(a.interrupts().cancel_pending());
        assert!(!b.interrupts().cancel_pending());
        assert!(reg.terminate_backend(b.pid()));
        assert!(b.interrupts().terminate_pending());
        let mut pids = vec![a.pid(), b.pid()];
        pids.sort_unstable();
        assert_eq!(reg.pids(), pids);
        let pid_a = a.pid();
        drop(a);
        assert_eq!(reg.count(), 1);
        assert!(!reg.cancel_backend(pid_a));
        assert!(reg.cancel_backend(b.pid()));
    }

    #[test]
    fn pid_wraps_to_positive() {
        let reg = BackendRegistry::new();
        reg.inner.lock().next_pid = i32::MAX;
        let a = reg.register(Arc::default());
        let b = reg.register(Arc::default());
        assert_eq!(a.pid(), i32::MAX);
        assert_eq!(b.pid(), 1);
    }
}
