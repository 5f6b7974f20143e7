//! LISTEN / NOTIFY: the server-wide hub that carries committed
//! notifications to the sessions listening on their channel.
//!
//! Rules:
//! 1. A transaction's LISTEN/UNLISTEN and NOTIFY take effect only when it
//!    commits (the session keeps them pending until then, `PendingNotify`):
//!    listen actions first, so a session that listens and notifies in one
//!    transaction hears itself, then the notifications, in the order sent,
//!    with duplicates (same channel and payload) folded, as PostgreSQL 15.
//! 2. Each listening session has its own queue. Publishing copies a
//!    notification into the queue of every session of the same database
//!    listening on its channel at that moment and wakes it through its
//!    eventfd; the session's connection sends them when it is idle (before
//!    ReadyForQuery outside a transaction block, or woken while waiting for
//!    the client's next message).
//! 3. The queues together hold at most `QUEUE_LIMIT_BYTES`; a transaction
//!    whose notifications would pass it fails before it commits (54000), as
//!    PostgreSQL's full NOTIFY queue does.
//!
//! Lock order: `NotifyHub::listeners` -> `Listener::channels` ->
//! `Listener::queue`. Nothing else is held while taking them.

use std::collections::{HashSet, VecDeque};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Weak};

use common::{PgError, PgResult, SqlState};
use parking_lot::Mutex;

/// PostgreSQL's NAMEDATALEN - 1: the longest channel name.
pub const MAX_CHANNEL_BYTES: usize = 63;
/// PostgreSQL's NOTIFY_PAYLOAD_MAX_LENGTH - 1.
pub const MAX_PAYLOAD_BYTES: usize = 7999;
/// How much the queues of all listeners may hold together.
pub const QUEUE_LIMIT_BYTES: usize = 256 << 20;

/// One delivered notification (NotificationResponse).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notification {
    /// The notifying session's backend pid.
    pub pid: i32,
    pub channel: String,
    pub payload: String,
}

impl Notification {
    fn bytes(&self) -> usize {
        entry_bytes(&self.channel, &self.payload)
    }
}

/// What one notification counts against `QUEUE_LIMIT_BYTES`.
pub fn entry_bytes(channel: &str, payload: &str) -> usize {
    channel.len() + payload.len() + 16
}

/// The checks pg_notify and NOTIFY make on their arguments.
pub fn check_notification(channel: &str, payload: &str) -> PgResult<()> {
    if channel.is_empty() {
        return Err(PgError::new(
            SqlState::INVALID_PARAMETER_VALUE,
            "channel name cannot be empty",
        ));
    }
    if channel.len() > MAX_CHANNEL_BYTES {
        return Err(PgError::new(
            SqlState::INVALID_PARAMETER_VALUE,
            "channel name too long",
        ));
    }
    if payload.len() > MAX_PAYLOAD_BYTES {
        return Err(PgError::new(
            SqlState::INVALID_PARAMETER_VALUE,
            "payload string too long",
        ));
    }
    Ok(())
}

/// A non-blocking eventfd a listener's connection polls beside its socket.
#[derive(Debug)]
struct WakeFd(OwnedFd);

impl WakeFd {
    fn new() -> std::io::Result<WakeFd> {
        // SAFETY: eventfd takes no pointers; a negative result is an error.
        let fd = unsafe { libc::eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC) };
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: `fd` is a new descriptor nobody else owns.
        Ok(WakeFd(unsafe { OwnedFd::from_raw_fd(fd) }))
    }

    fn wake(&self) {
        let one: u64 = 1;
        // SAFETY: writes 8 bytes from a live u64 to our own descriptor. A
        // full counter (EAGAIN) already means "wake up".
        unsafe { libc::write(self.0.as_raw_fd(), (&one as *const u64).cast(), 8) };
    }

    fn drain(&self) {
        let mut v: u64 = 0;
        // SAFETY: reads 8 bytes into a live u64; EAGAIN when not signalled.
        unsafe { libc::read(self.0.as_raw_fd(), (&mut v as *mut u64).cast(), 8) };
    }
}

/// A session that has listened: its channels and undelivered notifications.
#[derive(Debug)]
pub struct Listener {
    db_oid: u32,
    /// Committed LISTENs.
    channels: Mutex<HashSet<String>>,
    queue: Mutex<VecDeque<Notification>>,
    wake: WakeFd,
    hub: Weak<NotifyHub>,
}

impl Listener {
    /// The descriptor that becomes readable when notifications arrive.
    pub fn wake_fd(&self) -> RawFd {
        self.wake.0.as_raw_fd()
    }

    /// Takes every queued notification, oldest first.
    pub fn take(&self) -> Vec<Notification> {
        self.wake.drain();
        let taken: Vec<Notification> = self.queue.lock().drain(..).collect();
        if let Some(hub) = self.hub.upgrade() {
            let bytes = taken.iter().map(Notification::bytes).sum();
            hub.queued_bytes.fetch_sub(bytes, Ordering::Relaxed);
        }
        taken
    }

    fn apply(&self, action: &ListenAction) {
        let mut channels = self.channels.lock();
        match action {
            ListenAction::Listen(c) => {
                channels.insert(c.clone());
            }
            ListenAction::Unlisten(c) => {
                channels.remove(c);
            }
            ListenAction::UnlistenAll => channels.clear(),
        }
    }
}

impl Drop for Listener {
    fn drop(&mut self) {
        if let Some(hub) = self.hub.upgrade() {
            let bytes = self.queue.get_mut().iter().map(Notification::bytes).sum();
            hub.queued_bytes.fetch_sub(bytes, Ordering::Relaxed);
        }
    }
}

/// A LISTEN or UNLISTEN waiting for its transaction to commit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ListenAction {
    Listen(String),
    Unlisten(String),
    UnlistenAll,
}

/// What a transaction has said about notifications so far (rule 1).
#[derive(Debug, Default)]
pub struct PendingNotify {
    pub actions: Vec<ListenAction>,
    /// Channel and payload, in order sent, without duplicates.
    pub notifications: Vec<(String, String)>,
    seen: HashSet<(String, String)>,
    /// `entry_bytes` of `notifications`, kept as they come and go.
    bytes: usize,
}

impl PendingNotify {
    /// Adds a notification (checked by the caller: `check_notification`,
    /// `NotifyHub::check_room`); a duplicate of one already sent is folded.
    pub fn push(&mut self, channel: &str, payload: &str) {
        let key = (channel.to_string(), payload.to_string());
        if self.seen.insert(key.clone()) {
            self.bytes += entry_bytes(channel, payload);
            self.notifications.push(key);
        }
    }

    pub fn is_empty(&self) -> bool {
        self.actions.is_empty() && self.notifications.is_empty()
    }

    /// Where a savepoint began: ROLLBACK TO forgets what came after.
    pub fn mark(&self) -> (usize, usize) {
        (self.actions.len(), self.notifications.len())
    }

    pub fn rollback_to(&mut self, (actions, notifications): (usize, usize)) {
        self.actions.truncate(actions);
        for n in self
            .notifications
            .drain(notifications.min(self.notifications.len())..)
        {
            self.bytes -= entry_bytes(&n.0, &n.1);
            self.seen.remove(&n);
        }
    }
}

/// Every listening session (rule 2).
#[derive(Debug, Default)]
pub struct NotifyHub {
    listeners: Mutex<Vec<Weak<Listener>>>,
    /// Bytes queued in all listeners (rule 3); Relaxed: a bound, not a lock.
    queued_bytes: AtomicUsize,
}

impl NotifyHub {
    pub fn new() -> Arc<NotifyHub> {
        Arc::new(NotifyHub::default())
    }

    /// Registers a session as a listener (at its first committed LISTEN).
    pub fn register(self: &Arc<Self>, db_oid: u32) -> PgResult<Arc<Listener>> {
        let wake = WakeFd::new().map_err(|e| PgError::io("could not create an eventfd", e))?;
        let l = Arc::new(Listener {
            db_oid,
            channels: Mutex::new(HashSet::new()),
            queue: Mutex::new(VecDeque::new()),
            wake,
            hub: Arc::downgrade(self),
        });
        let mut all = self.listeners.lock();
        all.retain(|w| w.strong_count() > 0);
        all.push(Arc::downgrade(&l));
        Ok(l)
    }

    /// Fails when the transaction's notifications and one more of `extra`
    /// bytes would overfill the queues (rule 3).
    pub fn check_room(&self, pending: &PendingNotify, extra: usize) -> PgResult<()> {
        if self.queued_bytes.load(Ordering::Relaxed) + pending.bytes + extra > QUEUE_LIMIT_BYTES {
            return Err(PgError::new(
                SqlState::PROGRAM_LIMIT_EXCEEDED,
                "too many notifications in the NOTIFY queue",
            ));
        }
        Ok(())
    }

    /// The fraction of the queue space in use (pg_notification_queue_usage).
    pub fn usage(&self) -> f64 {
        self.queued_bytes.load(Ordering::Relaxed) as f64 / QUEUE_LIMIT_BYTES as f64
    }

    /// Applies a committed transaction's pending work (rule 1): `listener`
    /// is the session's own registration, made if it listens now.
    pub fn commit(
        self: &Arc<Self>,
        pending: PendingNotify,
        listener: &mut Option<Arc<Listener>>,
        pid: i32,
        db_oid: u32,
    ) -> PgResult<()> {
        if !pending.actions.is_empty() {
            if listener.is_none()
                && pending
                    .actions
                    .iter()
                    .any(|a| matches!(a, ListenAction::Listen(_)))
            {
                *listener = Some(self.register(db_oid)?);
            }
            if let Some(l) = listener {
                for a in &pending.actions {
                    l.apply(a);
                }
            }
        }
        if pending.notifications.is_empty() {
            return Ok(());
        }
        let all: Vec<Arc<Listener>> = self
            .listeners
            .lock()
            .iter()
            .filter_map(Weak::upgrade)
            .filter(|l| l.db_oid == db_oid)
            .collect();
        for l in all {
            let channels = l.channels.lock();
            let mut queued = Vec::new();
            for (channel, payload) in &pending.notifications {
                if channels.contains(channel) {
                    queued.push(Notification {
                        pid,
                        channel: channel.clone(),
                        payload: payload.clone(),
                    });
                }
            }
            if queued.is_empty() {
                continue;
            }
            let bytes: usize = queued.iter().map(Notification::bytes).sum();
            self.queued_bytes.fetch_add(bytes, Ordering::Relaxed);
            l.queue.lock().extend(queued);
            drop(channels);
            l.wake.wake();
        }
        Ok(())
    }
}

/// Waits until `socket` is readable or `listener` is woken (`wake_fd`),
/// whichever comes first; true when notifications may be waiting.
pub fn wait_for_input_or_notification(socket: RawFd, listener: &Listener) -> bool {
    let mut fds = [
        libc::pollfd {
            fd: socket,
            events: libc::POLLIN,
            revents: 0,
        },
        libc::pollfd {
            fd: listener.wake_fd(),
            events: libc::POLLIN,
            revents: 0,
        },
    ];
    loop {
        // SAFETY: two valid pollfds; -1 waits until one is ready.
        let n = unsafe { libc::poll(fds.as_mut_ptr(), 2, -1) };
        if n >= 0 {
            return fds[1].revents & libc::POLLIN != 0;
        }
        if std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
            // Let the blocking read find out what is wrong with the socket.
            return false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn committed_notifications_reach_listeners_of_their_channel_and_database() {
        let hub = NotifyHub::new();
        let mut a = None;
        let mut b = None;
        let mut listen = PendingNotify::default();
        listen.actions.push(ListenAction::Listen("c".into()));
        hub.commit(listen, &mut a, 1, 5).unwrap();
        let mut other_db = PendingNotify::default();
        other_db.actions.push(ListenAction::Listen("c".into()));
        hub.commit(other_db, &mut b, 2, 6).unwrap();
        let mut n = PendingNotify::default();
        n.push("c", "x");
        n.push("c", "x");
        n.push("c", "y");
        n.push("d", "z");
        hub.commit(n, &mut None, 3, 5).unwrap();
        let got = a.as_ref().unwrap().take();
        assert_eq!(
            got.iter().map(|n| n.payload.as_str()).collect::<Vec<_>>(),
            ["x", "y"]
        );
        assert!(got.iter().all(|n| n.pid == 3));
        assert!(b.as_ref().unwrap().take().is_empty());
        assert_eq!(hub.queued_bytes.load(Ordering::Relaxed), 0);
    }

    #[test]
    fn savepoint_rollback_forgets_later_notifications() {
        let mut p = PendingNotify::default();
        p.push("c", "1");
        let mark = p.mark();
        p.push("c", "2");
        p.actions.push(ListenAction::UnlistenAll);
        p.rollback_to(mark);
        p.push("c", "2");
        assert_eq!(p.notifications.len(), 2);
        assert_eq!(p.bytes, 2 * entry_bytes("c", "1"));
        assert!(p.actions.is_empty());
    }

    #[test]
    fn argument_checks() {
        assert!(check_notification("", "").is_err());
        assert!(check_notification(&"x".repeat(64), "").is_err());
        assert!(check_notification("c", &"p".repeat(8000)).is_err());
        assert!(check_notification("c", &"p".repeat(7999)).is_ok());
    }
}
