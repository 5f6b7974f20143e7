//! Settings changed inside a transaction are undone when it rolls back, as
//! PostgreSQL's GUC stack does: a plain SET lasts past the commit, SET LOCAL
//! and `set_config(…, true)` only to the transaction's end, and ROLLBACK TO
//! SAVEPOINT restores the settings the savepoint found.
//!
//! Nothing is copied until a transaction first changes a setting, so the
//! common transaction that changes none pays nothing.

use common::{PgError, PgResult, SqlState};

use super::{Session, TxnState};
use crate::gucs::{self, Settings};
use crate::session_api::ResultSink;

/// The settings one transaction (and each of its savepoints) started from.
#[derive(Default)]
pub(super) struct SettingsUndo {
    /// The settings as the transaction found them; None until it changes one.
    at_start: Option<Settings>,
    /// What a commit keeps, where SET LOCAL made the current settings differ
    /// from it; None while they are the same.
    at_commit: Option<Settings>,
    /// One entry per open savepoint, innermost last: the settings it found,
    /// None while nothing has changed since it began. The None entries are
    /// always a suffix (a change fills every open one).
    savepoints: Vec<Option<SavedSettings>>,
}

struct SavedSettings {
    current: Settings,
    at_commit: Option<Settings>,
}

impl SettingsUndo {
    /// Applies `change` to `current` inside a transaction, remembering what
    /// undoes it; `local` changes end with the transaction even when it
    /// commits. `change` returns the setting's canonical name.
    pub fn change(
        &mut self,
        current: &mut Settings,
        local: bool,
        change: impl FnOnce(&mut Settings) -> PgResult<&'static str>,
    ) -> PgResult<&'static str> {
        self.remember(current);
        if local && self.at_commit.is_none() {
            self.at_commit = Some(current.clone());
        }
        let name = change(current)?;
        if !local {
            if let Some(kept) = &mut self.at_commit {
                kept.copy_value(current, name);
            }
        }
        Ok(name)
    }

    /// RESET ALL inside a transaction: `current` becomes `next` (a commit
    /// keeps it).
    pub fn reset_all(&mut self, current: &mut Settings, next: Settings) {
        self.remember(current);
        *current = next;
        self.at_commit = None;
    }

    fn remember(&mut self, current: &Settings) {
        if self.at_start.is_none() {
            self.at_start = Some(current.clone());
        }
        for saved in self.savepoints.iter_mut().rev() {
            if saved.is_some() {
                break;
            }
            *saved = Some(SavedSettings {
                current: current.clone(),
                at_commit: self.at_commit.clone(),
            });
        }
    }

    pub fn savepoint(&mut self) {
        self.savepoints.push(None);
    }

    /// RELEASE of savepoint `level` (and those inside it): their changes
    /// become the enclosing level's.
    pub fn release(&mut self, level: usize) {
        self.savepoints.truncate(level);
    }

    /// ROLLBACK TO savepoint `level`: the settings as it found them.
    /// Returns the settings replaced, where anything changed since it began.
    pub fn rollback_to(&mut self, level: usize, current: &mut Settings) -> Option<Settings> {
        self.savepoints.truncate(level + 1);
        let saved = self.savepoints[level].as_ref()?;
        self.at_commit = saved.at_commit.clone();
        Some(std::mem::replace(current, saved.current.clone()))
    }

    /// The transaction ends: a commit keeps the plain SETs, a rollback
    /// restores the settings it found. Returns the settings replaced, where
    /// the transaction had changed any.
    pub fn end(&mut self, commit: bool, current: &mut Settings) -> Option<Settings> {
        let at_start = self.at_start.take()?;
        self.savepoints.clear();
        let kept = self.at_commit.take();
        let next = match (commit, kept) {
            (true, Some(kept)) => kept,
            (true, None) => return None,
            (false, _) => at_start,
        };
        Some(std::mem::replace(current, next))
    }
}

impl Session {
    /// SET [LOCAL] name = value, RESET name, RESET ALL (`reset`: a RESET).
    pub(super) fn run_set(
        &mut self,
        name: &str,
        value: Option<&str>,
        local: bool,
        reset: bool,
        sink: &mut dyn ResultSink,
    ) -> PgResult<()> {
        let tag = if reset { "RESET" } else { "SET" };
        let in_transaction = match &self.txn {
            TxnState::Idle => false,
            TxnState::Block(t) => !(t.implicit && t.lone_execute),
        };
        if local && !in_transaction {
            // As PostgreSQL: the value would end with the statement's own
            // transaction, so it never takes effect.
            sink.notice(&PgError {
                severity: common::error::Severity::Warning,
                ..PgError::new(
                    SqlState::NO_ACTIVE_SQL_TRANSACTION,
                    "SET LOCAL can only be used in transaction blocks",
                )
            })?;
            return sink.complete(tag);
        }
        let record = matches!(self.txn, TxnState::Block(_));
        if name == "all" {
            let before = self.settings.clone();
            let mut next = (*self.reset).clone();
            // PostgreSQL's GUC_NO_RESET_ALL settings keep their values.
            for name in ["role", "session_authorization", "is_superuser"] {
                next.copy_value(&before, name);
            }
            if record {
                self.settings_undo.reset_all(&mut self.settings, next);
            } else {
                self.settings = next;
            }
            self.changed
                .extend(reported_changes(&before, &self.settings));
            self.sync_transaction_settings();
            return sink.complete("RESET");
        }
        if let Some(
            canonical @ ("transaction_isolation"
            | "transaction_read_only"
            | "transaction_deferrable"),
        ) = gucs::lookup(name).map(|d| d.name)
        {
            return self.set_transaction_setting(canonical, value, sink);
        }
        let (reset, superuser) = (&self.reset, self.superuser);
        let set = |s: &mut Settings| s.set_user(name, value, reset, superuser);
        let canonical = if record {
            self.settings_undo.change(&mut self.settings, local, set)?
        } else {
            set(&mut self.settings)?
        };
        if gucs::lookup(canonical).is_some_and(|d| d.reported) {
            let v = self.settings.get(canonical)?.to_string();
            self.changed.push((canonical.to_string(), v));
        }
        if canonical.starts_with("default_transaction_") {
            self.sync_transaction_settings();
        }
        sink.complete(tag)
    }

    /// The transaction ends (`commit`: it committed): its SET LOCALs, or on
    /// rollback all its setting changes, are undone.
    pub(super) fn end_settings(&mut self, commit: bool) {
        if let Some(before) = self.settings_undo.end(commit, &mut self.settings) {
            self.after_restore(&before);
        }
    }

    /// After the settings went back to earlier values: what follows them.
    fn after_restore(&mut self, before: &Settings) {
        self.changed
            .extend(reported_changes(before, &self.settings));
        self.sync_identity();
        self.sync_transaction_settings();
    }

    /// ROLLBACK TO savepoint `level`: the settings as it found them.
    pub(super) fn rollback_settings_to(&mut self, level: usize) {
        // JDBC's autosave issues a ROLLBACK TO per failed statement: nothing
        // is copied unless the savepoint's settings changed.
        if let Some(before) = self.settings_undo.rollback_to(level, &mut self.settings) {
            self.after_restore(&before);
        }
    }
}

/// The reported settings (ParameterStatus) whose values differ between
/// `before` and `after`, with their new values.
pub(super) fn reported_changes(before: &Settings, after: &Settings) -> Vec<(String, String)> {
    gucs::GUCS
        .iter()
        .filter(|d| d.reported)
        .filter_map(|d| {
            let now = after.get(d.name).ok()?;
            (before.get(d.name).ok()? != now).then(|| (d.name.to_string(), now.to_string()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(undo: &mut SettingsUndo, s: &mut Settings, value: &str, local: bool) {
        let reset = Settings::defaults();
        undo.change(s, local, |s| {
            s.set_user("work_mem", Some(value), &reset, true)
        })
        .unwrap();
    }

    fn work_mem(s: &Settings) -> &str {
        s.get("work_mem").unwrap()
    }

    #[test]
    fn rollback_restores_and_commit_keeps_plain_sets_only() {
        let mut s = Settings::defaults();
        let start = work_mem(&s).to_string();
        let mut undo = SettingsUndo::default();
        set(&mut undo, &mut s, "8MB", false);
        assert!(undo.end(false, &mut s).is_some());
        assert_eq!(work_mem(&s), start);

        set(&mut undo, &mut s, "8MB", false);
        set(&mut undo, &mut s, "16MB", true);
        assert_eq!(work_mem(&s), "16MB");
        undo.end(true, &mut s);
        assert_eq!(work_mem(&s), "8MB");

        set(&mut undo, &mut s, "16MB", true);
        set(&mut undo, &mut s, "32MB", false);
        undo.end(true, &mut s);
        assert_eq!(work_mem(&s), "32MB");
    }

    #[test]
    fn rollback_to_restores_what_the_savepoint_found() {
        let mut s = Settings::defaults();
        let mut undo = SettingsUndo::default();
        set(&mut undo, &mut s, "8MB", false);
        undo.savepoint();
        undo.savepoint();
        set(&mut undo, &mut s, "16MB", true);
        assert!(undo.rollback_to(1, &mut s).is_some());
        assert_eq!(work_mem(&s), "8MB");
        set(&mut undo, &mut s, "32MB", false);
        undo.release(0);
        undo.end(true, &mut s);
        assert_eq!(work_mem(&s), "32MB");
    }
}
