//! Commit log: two status bits per transaction, kept in memory in 8 KB pages
//! and written to `pg_xact/<segment>` files at checkpoints and shutdown.
//! A transaction that is neither committed nor aborted and is not running is
//! taken as aborted (it was running when the server stopped).
//!
//! Commit statuses are redone from the log, so the files only need to be
//! current as of a checkpoint's redo pointer. Before pages are written, the
//! log is flushed past every commit they record (`max_lsn`): an
//! asynchronous commit whose record is not durable yet must not become
//! durable through the commit log.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};

use common::Xid;
use parking_lot::RwLock;

const PAGE_BYTES: usize = 8192;
const XIDS_PER_PAGE: u64 = PAGE_BYTES as u64 * 4;
const PAGES_PER_SEGMENT: u64 = 32;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum XidStatus {
    InProgress = 0,
    Committed = 1,
    Aborted = 2,
}

pub struct Clog {
    dir: PathBuf,
    pages: RwLock<Vec<Box<[AtomicU8]>>>,
    /// The highest commit-record end set so far (flushed before `flush`
    /// writes the pages).
    max_lsn: AtomicU64,
}

fn new_page() -> Box<[AtomicU8]> {
    (0..PAGE_BYTES).map(|_| AtomicU8::new(0)).collect()
}

impl Clog {
    /// Loads `dir` (pg_xact), creating it if missing.
    pub fn open(dir: impl Into<PathBuf>) -> std::io::Result<Clog> {
        let dir = dir.into();
        std::fs::create_dir_all(&dir)?;
        let mut pages = Vec::new();
        for seg in 0u64.. {
            let path = dir.join(format!("{seg:04X}"));
            let Ok(bytes) = std::fs::read(&path) else {
                break;
            };
            for chunk in bytes.chunks(PAGE_BYTES) {
                let page = new_page();
                for (slot, &b) in page.iter().zip(chunk) {
                    slot.store(b, Ordering::Relaxed);
                }
                pages.push(page);
            }
        }
        Ok(Clog {
            dir,
            pages: RwLock::new(pages),
            max_lsn: AtomicU64::new(0),
        })
    }

    pub fn status(&self, xid: Xid) -> XidStatus {
        let page = (xid / XIDS_PER_PAGE) as usize;
        let byte = ((xid % XIDS_PER_PAGE) / 4) as usize;
        let shift = (xid % 4) * 2;
        let pages = self.pages.read();
        let Some(p) = pages.get(page) else {
            return XidStatus::InProgress;
        };
        // Acquire pairs with the Release in `set_status`: data written by the
        // transaction before its commit is visible once we see it committed.
        match (p[byte].load(Ordering::Acquire) >> shift) & 3 {
            1 => XidStatus::Committed,
            2 => XidStatus::Aborted,
            _ => XidStatus::InProgress,
        }
    }

    /// Sets a status whose log record ends at `lsn`.
    pub fn set_status_logged(&self, xid: Xid, status: XidStatus, lsn: u64) {
        // SeqCst pairs with the SeqCst load in `flush`: a status visible in
        // the pages `flush` copies has its LSN counted in the maximum.
        self.max_lsn.fetch_max(lsn, Ordering::SeqCst);
        self.set_status(xid, status);
    }

    pub fn set_status(&self, xid: Xid, status: XidStatus) {
        let page = (xid / XIDS_PER_PAGE) as usize;
        let byte = ((xid % XIDS_PER_PAGE) / 4) as usize;
        let shift = (xid % 4) * 2;
        {
            let pages = self.pages.read();
            if let Some(p) = pages.get(page) {
                p[byte].fetch_or((status as u8) << shift, Ordering::Release);
                return;
            }
        }
        let mut pages = self.pages.write();
        while pages.len() <= page {
            pages.push(new_page());
        }
        pages[page][byte].fetch_or((status as u8) << shift, Ordering::Release);
    }

    /// Writes all pages to their segment files and fsyncs them, after
    /// `flush_log` made the log durable past every status they hold.
    pub fn flush(&self, flush_log: &dyn Fn(u64) -> std::io::Result<()>) -> std::io::Result<()> {
        let pages = self.pages.read();
        let mut segments = Vec::new();
        for chunk in pages.chunks(PAGES_PER_SEGMENT as usize) {
            let mut bytes = Vec::with_capacity(chunk.len() * PAGE_BYTES);
            for p in chunk {
                // SeqCst: see `set_status_logged`.
                bytes.extend(p.iter().map(|b| b.load(Ordering::SeqCst)));
            }
            segments.push(bytes);
        }
        drop(pages);
        flush_log(self.max_lsn.load(Ordering::SeqCst))?;
        for (seg, bytes) in segments.into_iter().enumerate() {
            let path = self.dir.join(format!("{seg:04X}"));
            common::durable::replace_file(&path, &bytes, true).map_err(|(_, _, e)| e)?;
        }
        Ok(())
    }
}
