//! PostgreSQL's BufferUsage: how many blocks a backend hit, read, dirtied
//! and wrote, per kind of buffer. The storage layer counts them per thread
//! (`storage::buffer::buffer_usage`); EXPLAIN (ANALYZE, BUFFERS) prints the
//! difference between two readings.

use std::ops::{AddAssign, Sub};

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BufferUsage {
    pub shared_hit: u64,
    pub shared_read: u64,
    pub shared_dirtied: u64,
    pub shared_written: u64,
    /// Local buffers (temporary tables): none exist yet, always zero.
    pub local_hit: u64,
    pub local_read: u64,
    pub local_dirtied: u64,
    pub local_written: u64,
    /// Blocks (BLCKSZ) of temporary files read and written.
    pub temp_read: u64,
    pub temp_written: u64,
}

impl BufferUsage {
    /// Whether every count is zero.
    pub fn is_zero(&self) -> bool {
        *self == BufferUsage::default()
    }
}

impl Sub for BufferUsage {
    type Output = BufferUsage;
    /// The counts between an earlier reading (`rhs`) and this one.
    fn sub(self, rhs: BufferUsage) -> BufferUsage {
        BufferUsage {
            shared_hit: self.shared_hit.wrapping_sub(rhs.shared_hit),
            shared_read: self.shared_read.wrapping_sub(rhs.shared_read),
            shared_dirtied: self.shared_dirtied.wrapping_sub(rhs.shared_dirtied),
            shared_written: self.shared_written.wrapping_sub(rhs.shared_written),
            local_hit: self.local_hit.wrapping_sub(rhs.local_hit),
            local_read: self.local_read.wrapping_sub(rhs.local_read),
            local_dirtied: self.local_dirtied.wrapping_sub(rhs.local_dirtied),
            local_written: self.local_written.wrapping_sub(rhs.local_written),
            temp_read: self.temp_read.wrapping_sub(rhs.temp_read),
            temp_written: self.temp_written.wrapping_sub(rhs.temp_written),
        }
    }
}

impl AddAssign for BufferUsage {
    fn add_assign(&mut self, o: BufferUsage) {
        self.shared_hit += o.shared_hit;
        self.shared_read += o.shared_read;
        self.shared_dirtied += o.shared_dirtied;
        self.shared_written += o.shared_written;
        self.local_hit += o.local_hit;
        self.local_read += o.local_read;
        self.local_dirtied += o.local_dirtied;
        self.local_written += o.local_written;
        self.temp_read += o.temp_read;
        self.temp_written += o.temp_written;
    }
}
