//! Transaction isolation levels as SQL names them.

/// PostgreSQL's four levels. READ UNCOMMITTED behaves as READ COMMITTED;
/// SERIALIZABLE is REPEATABLE READ's snapshot plus serializable snapshot
/// isolation (`crate::ssi`).
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
        // Read per statement (default_transaction_isolation): no allocation.
        let mut words = s.split_whitespace();
        let (first, second) = (words.next()?, words.next());
        if words.next().is_some() {
            return None;
        }
        let is = |w: &str, k: &str| w.eq_ignore_ascii_case(k);
        Some(match second {
            None if is(first, "serializable") => IsolationLevel::Serializable,
            Some(w) if is(first, "read") && is(w, "uncommitted") => IsolationLevel::ReadUncommitted,
            Some(w) if is(first, "read") && is(w, "committed") => IsolationLevel::ReadCommitted,
            Some(w) if is(first, "repeatable") && is(w, "read") => IsolationLevel::RepeatableRead,
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

#[cfg(test)]
mod tests {
    use super::IsolationLevel::*;
    use super::*;

    #[test]
    fn names_parse_in_any_case_and_spacing() {
        assert_eq!(
            IsolationLevel::parse("Repeatable  READ"),
            Some(RepeatableRead)
        );
        assert_eq!(IsolationLevel::parse(" serializable "), Some(Serializable));
        assert_eq!(
            IsolationLevel::parse("read uncommitted"),
            Some(ReadUncommitted)
        );
        assert_eq!(IsolationLevel::parse("read committed"), Some(ReadCommitted));
        assert_eq!(IsolationLevel::parse("read committed now"), None);
        assert_eq!(IsolationLevel::parse("serializable read"), None);
        assert_eq!(IsolationLevel::parse(""), None);
        for l in [ReadUncommitted, ReadCommitted, RepeatableRead, Serializable] {
            assert_eq!(IsolationLevel::parse(l.name()), Some(l));
        }
    }
}
