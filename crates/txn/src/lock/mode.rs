//! PostgreSQL's eight table-lock modes and their conflict table (the docs'
//! "Explicit Locking", table 13.2; `lock.c`'s `LockConflicts`).

/// A set of modes: bit `1 << mode as u8`.
pub type ModeMask = u16;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum LockMode {
    AccessShare = 1,
    RowShare = 2,
    RowExclusive = 3,
    ShareUpdateExclusive = 4,
    Share = 5,
    ShareRowExclusive = 6,
    Exclusive = 7,
    AccessExclusive = 8,
}

use LockMode::*;

const fn bit(m: LockMode) -> ModeMask {
    1 << m as u8
}

/// `CONFLICTS[m]`: the modes that conflict with mode `m`.
const CONFLICTS: [ModeMask; 9] = [
    0,
    // AccessShare
    bit(AccessExclusive),
    // RowShare
    bit(Exclusive) | bit(AccessExclusive),
    // RowExclusive
    bit(Share) | bit(ShareRowExclusive) | bit(Exclusive) | bit(AccessExclusive),
    // ShareUpdateExclusive
    bit(ShareUpdateExclusive)
        | bit(Share)
        | bit(ShareRowExclusive)
        | bit(Exclusive)
        | bit(AccessExclusive),
    // Share
    bit(RowExclusive)
        | bit(ShareUpdateExclusive)
        | bit(ShareRowExclusive)
        | bit(Exclusive)
        | bit(AccessExclusive),
    // ShareRowExclusive
    bit(RowExclusive)
        | bit(ShareUpdateExclusive)
        | bit(Share)
        | bit(ShareRowExclusive)
        | bit(Exclusive)
        | bit(AccessExclusive),
    // Exclusive
    bit(RowShare)
        | bit(RowExclusive)
        | bit(ShareUpdateExclusive)
        | bit(Share)
        | bit(ShareRowExclusive)
        | bit(Exclusive)
        | bit(AccessExclusive),
    // AccessExclusive
    bit(AccessShare)
        | bit(RowShare)
        | bit(RowExclusive)
        | bit(ShareUpdateExclusive)
        | bit(Share)
        | bit(ShareRowExclusive)
        | bit(Exclusive)
        | bit(AccessExclusive),
];

impl LockMode {
    pub const ALL: [LockMode; 8] = [
        AccessShare,
        RowShare,
        RowExclusive,
        ShareUpdateExclusive,
        Share,
        ShareRowExclusive,
        Exclusive,
        AccessExclusive,
    ];

    pub const fn bit(self) -> ModeMask {
        bit(self)
    }

    /// The modes this one conflicts with.
    pub const fn conflicts(self) -> ModeMask {
        CONFLICTS[self as usize]
    }

    pub fn conflicts_with(self, other: LockMode) -> bool {
        self.conflicts() & other.bit() != 0
    }

    /// The modes in `mask`, weakest first.
    pub fn in_mask(mask: ModeMask) -> impl Iterator<Item = LockMode> {
        LockMode::ALL
            .into_iter()
            .filter(move |m| mask & m.bit() != 0)
    }

    /// PostgreSQL's name (pg_locks.mode, deadlock reports).
    pub fn name(self) -> &'static str {
        match self {
            AccessShare => "AccessShareLock",
            RowShare => "RowShareLock",
            RowExclusive => "RowExclusiveLock",
            ShareUpdateExclusive => "ShareUpdateExclusiveLock",
            Share => "ShareLock",
            ShareRowExclusive => "ShareRowExclusiveLock",
            Exclusive => "ExclusiveLock",
            AccessExclusive => "AccessExclusiveLock",
        }
    }

    /// The mode as LOCK TABLE's `IN ... MODE` names it (lowercase).
    pub fn sql_name(self) -> &'static str {
        match self {
            AccessShare => "access share",
            RowShare => "row share",
            RowExclusive => "row exclusive",
            ShareUpdateExclusive => "share update exclusive",
            Share => "share",
            ShareRowExclusive => "share row exclusive",
            Exclusive => "exclusive",
            AccessExclusive => "access exclusive",
        }
    }

    /// A mode as LOCK TABLE's `IN ... MODE` names it (words lowercased,
    /// separated by single spaces).
    pub fn from_sql(words: &str) -> Option<LockMode> {
        LockMode::ALL.into_iter().find(|m| m.sql_name() == words)
    }

    /// Weak relation modes may be taken through the fast path: they
    /// conflict only with the strong ones (PostgreSQL's
    /// `EligibleForRelationFastPath`).
    pub fn is_weak(self) -> bool {
        self < ShareUpdateExclusive
    }

    /// Strong modes conflict with some weak mode, so they must first move
    /// every fast-path entry of the relation into the shared table
    /// (`ConflictsWithRelationFastPath`).
    pub fn is_strong(self) -> bool {
        self > ShareUpdateExclusive
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conflict_table_is_symmetric_and_matches_the_docs() {
        for a in LockMode::ALL {
            for b in LockMode::ALL {
                assert_eq!(a.conflicts_with(b), b.conflicts_with(a), "{a:?} {b:?}");
            }
        }
        // The docs' table, row by row: X marks a conflict.
        let docs = [
            "       X", "      XX", "    XXXX", "   XXXXX", "  XX XXX", "  XXXXXX", " XXXXXXX",
            "XXXXXXXX",
        ];
        for (i, row) in docs.iter().enumerate() {
            for (j, c) in row.chars().enumerate() {
                assert_eq!(
                    LockMode::ALL[i].conflicts_with(LockMode::ALL[j]),
                    c == 'X',
                    "{:?} vs {:?}",
                    LockMode::ALL[i],
                    LockMode::ALL[j]
                );
            }
        }
        // Weak modes conflict only with strong ones.
        for w in LockMode::ALL.into_iter().filter(|m| m.is_weak()) {
            for m in LockMode::ALL {
                if w.conflicts_with(m) {
                    assert!(m.is_strong(), "{w:?} {m:?}");
                }
            }
        }
    }
}
