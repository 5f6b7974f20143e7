//! Commit log: two status bits per transaction, kept in memory in 8 KB pages
//! and written to `pg_xact/<segment>` files at checkpoints and shutdown.
//! A transaction that is neither committed nor aborted and is not running is
//! taken as aborted (it was running when the server stopped).

use std::path::PathBuf;
use std::sync::atomic::{AtomicU8, Ordering};

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

    /// Writes all pages to their segment files and fsyncs them.
    pub fn flush(&self) -> std::io::Result<()> {
        let pages = self.pages.read();
        for (seg, chunk) in pages.chunks(PAGES_PER_SEGMENT as usize).enumerate() {
            let mut bytes = Vec::with_capacity(chunk.len() * PAGE_BYTES);
            for p in chunk {
                bytes.extend(p.iter().map(|b| b.load(Ordering::Relaxed)));
            }
            let path = self.dir.join(format!("{seg:04X}"));
            let tmp = self.dir.join(format!("{seg:04X}.tmp"));
            std::fs::write(&tmp, &bytes)?;
            std::fs::File::open(&tmp)?.sync_all()?;
            std::fs::rename(&tmp, &path)?;
        }
        Ok(())
    }
}
