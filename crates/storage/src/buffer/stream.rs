//! Read streams: pin the blocks of a range in order, combining the reads of
//! consecutive missing blocks into one vectored read. With the I/O worker
//! method (`io_method = worker`, as PostgreSQL 18 names it) a helper thread
//! reads ahead — file read and checksum — while the consumer works on the
//! pages it already has, so a large sequential scan uses a second core for
//! its I/O. The helper owns the scan's ring; blocks travel in small batches
//! over a bounded channel, so at most a few batches are pinned ahead.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{sync_channel, Receiver};

use common::{BlockNumber, RelFileLocator};

use super::{Buffer, BufferPool, BufferStrategy, ReadMode};
use crate::{ForkNumber, StorageResult};

/// Blocks per hand-over from the I/O worker.
const BATCH: usize = 8;
/// Batches queued ahead of the consumer. With BATCH this keeps the pinned
/// read-ahead (queue + the batch being filled + the batch being consumed)
/// well below the 32-buffer scan ring.
const QUEUE: usize = 1;

/// Read-ahead threads per stream.
const IO_WORKERS_PER_STREAM: usize = 2;

static IO_WORKERS: AtomicBool = AtomicBool::new(false);

/// Chooses between read-ahead by a worker thread and synchronous reads.
pub fn set_io_workers(enabled: bool) {
    IO_WORKERS.store(enabled, Ordering::Relaxed);
}

pub fn io_workers_enabled() -> bool {
    IO_WORKERS.load(Ordering::Relaxed)
}

type Batch = StorageResult<Vec<Buffer>>;

enum Source {
    Sync {
        next: BlockNumber,
        end: BlockNumber,
        strategy: Option<BufferStrategy>,
        /// Combine reads into batches (a big scan); else one block at a time.
        combine: bool,
        pending: std::vec::IntoIter<Buffer>,
    },
    Worker {
        rxs: Vec<Receiver<Batch>>,
        turn: usize,
        pending: std::vec::IntoIter<Buffer>,
    },
}

pub struct ReadStream {
    pool: &'static BufferPool,
    rel: RelFileLocator,
    fork: ForkNumber,
    source: Source,
}

impl ReadStream {
    /// Streams blocks `start..end`. `read_ahead` asks for the I/O worker (used
    /// when io workers are enabled and the range is long enough to pay off).
    pub fn new(
        pool: &'static BufferPool,
        rel: RelFileLocator,
        fork: ForkNumber,
        start: BlockNumber,
        end: BlockNumber,
        strategy: Option<BufferStrategy>,
        read_ahead: bool,
    ) -> ReadStream {
        let source = if read_ahead && io_workers_enabled() && end > start + 64 {
            // Workers take interleaved batches (worker k: batches k, k+W, ...),
            // each through its own ring and channel; the consumer takes the
            // channels in turn, so blocks still arrive in order.
            let workers = IO_WORKERS_PER_STREAM;
            let mut rxs = Vec::with_capacity(workers);
            for k in 0..workers {
                let (tx, rx) = sync_channel::<Batch>(QUEUE);
                rxs.push(rx);
                let mut strategy = strategy.as_ref().map(|s| s.fresh());
                std::thread::Builder::new()
                    .name("io worker".into())
                    .spawn(move || {
                        let mut first = start + (k * BATCH) as u32;
                        while first < end {
                            let stop = (first + BATCH as u32).min(end);
                            let msg = pool.read_buffers(
                                rel,
                                fork,
                                first,
                                stop - first,
                                strategy.as_mut(),
                            );
                            let stop_now = msg.is_err();
                            if tx.send(msg).is_err() || stop_now {
                                return; // consumer gone (LIMIT, error, cancel) or error sent
                            }
                            first += (workers * BATCH) as u32;
                        }
                    })
                    .expect("spawn io worker");
            }
            Source::Worker {
                rxs,
                turn: 0,
                pending: Vec::new().into_iter(),
            }
        } else {
            Source::Sync {
                next: start,
                end,
                combine: read_ahead,
                strategy,
                pending: Vec::new().into_iter(),
            }
        };
        ReadStream {
            pool,
            rel,
            fork,
            source,
        }
    }

    /// Streams blocks `start..end` in the reader's own thread, combining
    /// the reads of consecutive missing blocks (no read-ahead thread: a
    /// parallel scan's participants are the parallelism).
    pub fn combined(
        pool: &'static BufferPool,
        rel: RelFileLocator,
        fork: ForkNumber,
        start: BlockNumber,
        end: BlockNumber,
        strategy: Option<BufferStrategy>,
    ) -> ReadStream {
        ReadStream {
            pool,
            rel,
            fork,
            source: Source::Sync {
                next: start,
                end,
                combine: true,
                strategy,
                pending: Vec::new().into_iter(),
            },
        }
    }

    /// The scan ring of a synchronous stream, for the next range the same
    /// reader streams (a parallel scan's participant moving to its next
    /// chunk keeps one ring).
    pub fn into_strategy(self) -> Option<BufferStrategy> {
        match self.source {
            Source::Sync { strategy, .. } => strategy,
            Source::Worker { .. } => None,
        }
    }

    /// The next block's pinned buffer, or None at the end of the range.
    pub fn next_buffer(&mut self) -> StorageResult<Option<Buffer>> {
        match &mut self.source {
            Source::Sync {
                next,
                end,
                strategy,
                combine,
                pending,
            } => {
                if let Some(b) = pending.next() {
                    return Ok(Some(b));
                }
                if *next >= *end {
                    return Ok(None);
                }
                if *combine {
                    let n = (BATCH as u32).min(*end - *next);
                    let batch =
                        self.pool
                            .read_buffers(self.rel, self.fork, *next, n, strategy.as_mut())?;
                    *next += n;
                    *pending = batch.into_iter();
                    return Ok(pending.next());
                }
                let b = self.pool.read_buffer(
                    self.rel,
                    self.fork,
                    *next,
                    ReadMode::Normal,
                    strategy.as_mut(),
                )?;
                *next += 1;
                Ok(Some(b))
            }
            Source::Worker { rxs, turn, pending } => loop {
                if let Some(b) = pending.next() {
                    return Ok(Some(b));
                }
                let rx = &rxs[*turn % rxs.len()];
                *turn += 1;
                match rx.recv() {
                    Ok(Ok(batch)) => *pending = batch.into_iter(),
                    Ok(Err(e)) => return Err(e),
                    Err(_) => return Ok(None),
                }
            },
        }
    }
}
