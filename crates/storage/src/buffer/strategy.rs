//! Buffer access strategies: small rings of buffers reused by one large
//! operation so it cannot flush the rest of the pool (PostgreSQL's
//! BufferAccessStrategy, with its ring sizes).

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StrategyKind {
    /// Large sequential scans: 256 kB.
    BulkRead,
    /// COPY, CREATE TABLE AS, INSERT ... SELECT into a new table: 16 MB.
    BulkWrite,
    /// VACUUM: 256 kB.
    Vacuum,
}

pub struct BufferStrategy {
    ring: Vec<Option<u32>>,
    next: usize,
}

impl BufferStrategy {
    pub fn new(kind: StrategyKind, nbuffers: usize) -> Self {
        let bytes = match kind {
            StrategyKind::BulkRead | StrategyKind::Vacuum => 256 * 1024,
            StrategyKind::BulkWrite => 16 * 1024 * 1024,
        };
        let size = (bytes / crate::BLCKSZ).min(nbuffers / 8).max(1);
        BufferStrategy {
            ring: vec![None; size],
            next: 0,
        }
    }

    /// An empty ring of the same size.
    pub fn fresh(&self) -> Self {
        BufferStrategy {
            ring: vec![None; self.ring.len()],
            next: 0,
        }
    }

    /// Resizes the ring (read streams keep more buffers pinned ahead).
    pub fn with_size(mut self, buffers: usize) -> Self {
        self.ring.resize(buffers.max(1), None);
        self
    }

    /// The ring slot to try next (advances the ring).
    pub(crate) fn current(&mut self) -> Option<u32> {
        self.next = (self.next + 1) % self.ring.len();
        self.ring[self.next]
    }

    /// Records the buffer just allocated in the current slot.
    pub(crate) fn remember(&mut self, id: u32) {
        self.ring[self.next] = Some(id);
    }
}
