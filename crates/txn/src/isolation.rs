//! Transaction isolation levels as SQL names them.

/// PostgreSQL's four levels. READ UNCOMMITTED behaves as READ COMMITTED;
/// SERIALIZABLE runs as REPEATABLE READ until serializable snapshot
/// isolation exists (README "Not yet here").
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub enum IsolationLevel {
    ReadUncommitted,
    #[default]
    ReadCommitted,
    RepeatableRead,
    Serializable,
}

impl IsolationLevel {
    /// From a setting's value (`default_transaction_isolation`), in any case.
    pub fn parse(s: &str) -> Option<IsolationLevel> {
        let words: Vec<String> = s
            .split_whitespace()
            .map(|w| w.to_ascii_lowercase())
            .collect();
        let words: Vec<&str> = words.iter().map(String::as_str).collect();
        Some(match words.as_slice() {
            ["read", "uncommitted"] => IsolationLevel::ReadUncommitted,
            ["read", "committed"] => IsolationLevel::ReadCommitted,
            ["repeatable", "read"] => IsolationLevel::RepeatableRead,
            ["serializable"] => IsolationLevel::Serializable,
            _ => return None,
        })
    }

    /// The name SHOW prints.
    pub fn name(self) -> &'static str {
        match self {
            IsolationLevel::ReadUncommitted => "read uncommitted",
            IsolationLevel::ReadCommitted => "read committed",
            IsolationLevel::RepeatableRead => "repeatable read",
            IsolationLevel::Serializable => "serializable",
        }
    }

    /// Whether one snapshot serves the whole transaction (and a concurrent
    /// update of a row it wants to change is a serialization failure).
    pub fn uses_transaction_snapshot(self) -> bool {
        self >= IsolationLevel::RepeatableRead
    }
}
