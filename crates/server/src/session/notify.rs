//! LISTEN, UNLISTEN and NOTIFY in a session: kept pending until the
//! transaction ends, then handed to the server's hub (`crate::notify`).

use std::sync::Arc;

use common::PgResult;
use sql::plan::BoundStatement;

use super::{Session, TxnState};
use crate::notify::ListenAction;
use crate::session_api::ResultSink;

impl Session {
    /// Runs LISTEN / UNLISTEN / NOTIFY: recorded for the transaction's
    /// commit, which outside a block is this statement's end.
    pub(super) fn run_notify_statement(
        &mut self,
        stmt: &BoundStatement,
        sink: &mut dyn ResultSink,
    ) -> PgResult<()> {
        let tag = match stmt {
            BoundStatement::Listen(channel) => {
                self.notify
                    .actions
                    .push(ListenAction::Listen(channel.clone()));
                "LISTEN"
            }
            BoundStatement::Unlisten(channel) => {
                self.notify.actions.push(match channel {
                    Some(c) => ListenAction::Unlisten(c.clone()),
                    None => ListenAction::UnlistenAll,
                });
                "UNLISTEN"
            }
            BoundStatement::Notify { channel, payload } => {
                self.queue_notification(channel, payload)?;
                "NOTIFY"
            }
            _ => unreachable!("only notification statements come here"),
        };
        if matches!(self.txn, TxnState::Idle) {
            self.end_notify(true);
        }
        sink.complete(tag)
    }

    /// NOTIFY and pg_notify(): checked now, sent at commit.
    pub(super) fn queue_notification(&mut self, channel: &str, payload: &str) -> PgResult<()> {
        queue_notification(&self.ctx.notify, &mut self.notify, channel, payload)
    }

    /// DISCARD ALL's UNLISTEN *, effective at once (it runs outside blocks).
    pub(super) fn unlisten_all_now(&mut self) {
        self.notify.actions.push(ListenAction::UnlistenAll);
        self.end_notify(true);
    }

    /// At the transaction's end: a commit publishes what it said, an abort
    /// forgets it.
    pub(super) fn end_notify(&mut self, committed: bool) {
        if self.notify.is_empty() {
            return;
        }
        let pending = std::mem::take(&mut self.notify);
        if !committed {
            return;
        }
        let hub = Arc::clone(&self.ctx.notify);
        if let Err(e) = hub.commit(pending, &mut self.listener, self.pid, self.db_oid) {
            crate::log(&format!("could not listen: {}", e.message));
        }
    }
}

/// Checks a notification and adds it to the transaction's pending ones,
/// failing when the queues could not take them (54000).
pub(super) fn queue_notification(
    hub: &crate::notify::NotifyHub,
    pending: &mut crate::notify::PendingNotify,
    channel: &str,
    payload: &str,
) -> PgResult<()> {
    crate::notify::check_notification(channel, payload)?;
    hub.check_room(pending, crate::notify::entry_bytes(channel, payload))?;
    pending.push(channel, payload);
    Ok(())
}
