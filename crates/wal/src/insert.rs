//! Inserting records (seed 000 "Write Scalability", PostgreSQL 9.4's
//! scalable WAL insertion): a record's space is reserved by advancing the
//! insert position under one short mutex (`InsertPos`); the bytes are then
//! copied into the WAL buffers (a ring) while holding one of
//! [`INSERT_LOCKS`] insertion slots, so copies of different records run in
//! parallel. A slot publishes how far its copy has come (`inserting_at`),
//! which tells a flusher how far the ring holds finished bytes.

use std::cell::{Cell, RefCell};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use crossbeam_utils::CachePadded;
use parking_lot::{Mutex, MutexGuard};
use storage::page;

use crate::record::{self, align, RecordBuilder};
use crate::{Lsn, Wal, WalResult};

/// Insertion slots, as PostgreSQL's NUM_XLOGINSERT_LOCKS.
pub const INSERT_LOCKS: usize = 8;

/// `inserting_at` of a slot nobody holds.
const FREE: u64 = u64::MAX;
/// `inserting_at` of a slot whose holder has not reserved yet: a waiter
/// cannot know where its record goes, so it waits for a real value.
const RESERVING: u64 = 0;

struct InsertPos {
    /// Where the next record starts.
    cur: Lsn,
    /// Where the last reserved record started.
    prev: Lsn,
    /// The current checkpoint's redo pointer: a page whose LSN is at or
    /// below it gets a full image with its next change.
    redo: Lsn,
}

pub(crate) struct Slot {
    lock: Mutex<()>,
    inserting_at: AtomicU64,
    /// Records and images inserted through this slot (pg_stat_wal), counted
    /// under the slot lock so inserters on different slots share no line.
    pub(crate) records: AtomicU64,
    pub(crate) images: AtomicU64,
}

/// The WAL buffers: `len` bytes; position `p` lives at `p % len`.
struct Ring {
    ptr: *mut u8,
    len: usize,
}

// SAFETY: the ring's bytes are written only by the inserter that reserved
// their positions (rule 2 in README.md) and read by the writer only below
// the finished-insertions horizon, so no byte is accessed by two threads
// without the slot/`written` handshake in between.
unsafe impl Send for Ring {}
unsafe impl Sync for Ring {}

impl Drop for Ring {
    fn drop(&mut self) {
        // SAFETY: allocated in `Inserter::new` as a boxed slice of `len`.
        unsafe {
            drop(Box::from_raw(std::ptr::slice_from_raw_parts_mut(
                self.ptr, self.len,
            )))
        };
    }
}

pub(crate) struct Inserter {
    pos: Mutex<InsertPos>,
    /// A copy of `pos.redo` read without the mutex when assembling.
    redo_hint: AtomicU64,
    slots: Box<[CachePadded<Slot>]>,
    ring: Ring,
}

impl Inserter {
    pub(crate) fn new(ring_bytes: usize, slots: usize) -> Self {
        let ring = vec![0u8; ring_bytes].into_boxed_slice();
        let len = ring.len();
        Inserter {
            pos: Mutex::new(InsertPos {
                cur: 0,
                prev: 0,
                redo: 0,
            }),
            redo_hint: AtomicU64::new(0),
            slots: (0..slots.max(1))
                .map(|_| {
                    CachePadded::new(Slot {
                        lock: Mutex::new(()),
                        inserting_at: AtomicU64::new(FREE),
                        records: AtomicU64::new(0),
                        images: AtomicU64::new(0),
                    })
                })
                .collect(),
            ring: Ring {
                ptr: Box::into_raw(ring) as *mut u8,
                len,
            },
        }
    }

    /// Positions insertion after startup: the next record goes to `end`.
    pub(crate) fn position(&self, end: Lsn, prev: Lsn, redo: Lsn) {
        let mut p = self.pos.lock();
        p.cur = end;
        p.prev = prev;
        p.redo = redo;
        // Relaxed: a hint only; the mutex decides (see `Wal::insert`).
        self.redo_hint.store(redo, Ordering::Relaxed);
    }

    /// Where the next record will start.
    pub(crate) fn reserved(&self) -> Lsn {
        self.pos.lock().cur
    }

    pub(crate) fn redo(&self) -> Lsn {
        self.pos.lock().redo
    }

    pub(crate) fn slots(&self) -> &[CachePadded<Slot>] {
        &self.slots
    }

    pub(crate) fn ring_len(&self) -> usize {
        self.ring.len
    }

    /// The ring bytes of positions `from..to`, which must not wrap.
    ///
    /// # Safety
    /// Every insertion below `to` has finished copying (the caller waited
    /// for them) and no inserter may reuse these bytes before `written`
    /// passes `to` (it waits for that).
    pub(crate) unsafe fn ring_slice(&self, from: Lsn, to: Lsn) -> &[u8] {
        let at = (from % self.ring.len as u64) as usize;
        let len = (to - from) as usize;
        debug_assert!(at + len <= self.ring.len);
        std::slice::from_raw_parts(self.ring.ptr.add(at), len)
    }

    /// Waits until every insertion that reserved space below `upto` has
    /// copied its bytes below `upto` (or published progress at or past it).
    pub(crate) fn wait_insertions(&self, upto: Lsn) {
        for slot in self.slots.iter() {
            let mut spins = 0u32;
            loop {
                // Acquire pairs with the Release stores in `insert`/`copy`:
                // the ring bytes below the value are visible.
                let v = slot.inserting_at.load(Ordering::Acquire);
                if v == FREE || (v != RESERVING && v >= upto) {
                    break;
                }
                backoff(&mut spins);
            }
        }
    }

    /// How far the ring holds finished bytes, up to `limit`, without waiting.
    pub(crate) fn finished_upto(&self, limit: Lsn) -> Lsn {
        let mut reach = limit;
        for slot in self.slots.iter() {
            // Acquire: as in `wait_insertions`.
            let v = slot.inserting_at.load(Ordering::Acquire);
            if v == RESERVING {
                return 0;
            }
            reach = reach.min(v);
        }
        reach
    }

    /// Starts a checkpoint: its redo pointer is the current insert position.
    pub(crate) fn begin_checkpoint(&self) -> Lsn {
        let mut p = self.pos.lock();
        p.redo = p.cur;
        // Relaxed: see `position`.
        self.redo_hint.store(p.cur, Ordering::Relaxed);
        p.cur
    }
}

fn backoff(spins: &mut u32) {
    *spins += 1;
    if *spins < 64 {
        std::hint::spin_loop();
    } else if *spins < 256 {
        std::thread::yield_now();
    } else {
        std::thread::sleep(std::time::Duration::from_micros(20));
    }
}

thread_local! {
    static ASSEMBLY: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
    static HOME_SLOT: Cell<usize> = const { Cell::new(usize::MAX) };
}

static NEXT_HOME: AtomicUsize = AtomicUsize::new(0);

/// This thread's preferred slot, handed out round robin.
fn home_slot(slots: usize) -> usize {
    HOME_SLOT.with(|h| {
        if h.get() == usize::MAX {
            h.set(NEXT_HOME.fetch_add(1, Ordering::Relaxed));
        }
        h.get() % slots
    })
}

impl Wal {
    /// Appends a record and returns its end: the LSN to stamp on the pages
    /// it changed and to flush up to. The caller holds the exclusive
    /// content locks of the registered pages.
    pub fn insert(&self, rec: &RecordBuilder<'_>) -> WalResult<Lsn> {
        Ok(self.insert_record(rec)?.1)
    }

    /// As [`Wal::insert`], returning the record's start too.
    pub fn insert_record(&self, rec: &RecordBuilder<'_>) -> WalResult<(Lsn, Lsn)> {
        ASSEMBLY.with(|buf| {
            let mut buf = buf.borrow_mut();
            self.insert_with(rec, &mut buf)
        })
    }

    fn insert_with(&self, rec: &RecordBuilder<'_>, buf: &mut Vec<u8>) -> WalResult<(Lsn, Lsn)> {
        let ins = &self.insert;
        let fpw = self.settings.full_page_writes();
        loop {
            // Relaxed: a stale value is caught under the mutex below.
            let redo = ins.redo_hint.load(Ordering::Relaxed);
            let wants_image = |b: &record::BlockRegistration<'_>, redo: Lsn| {
                fpw && !b.will_init && page::lsn(b.page) <= redo
            };
            let images = record::assemble(rec, &|b| wants_image(b, redo), buf);
            let len = buf.len() as u64;
            let (slot_no, _slot_guard) = self.acquire_slot();
            let slot = &ins.slots[slot_no];
            // Relaxed: published to flushers by the `pos` mutex below.
            slot.inserting_at.store(RESERVING, Ordering::Relaxed);
            let mut pos = ins.pos.lock();
            if pos.redo != redo
                && rec
                    .blocks
                    .iter()
                    .any(|b| wants_image(b, pos.redo) && !wants_image(b, redo))
            {
                // A checkpoint began since we assembled: a page needs an image now.
                drop(pos);
                slot.inserting_at.store(FREE, Ordering::Release);
                continue;
            }
            let start = pos.cur;
            let prev = pos.prev;
            pos.prev = start;
            pos.cur = align(start + len);
            // Release pairs with the Acquire in `wait_insertions`.
            slot.inserting_at.store(start, Ordering::Release);
            drop(pos);
            record::seal(buf, prev);
            let copied = self.copy_to_ring(slot, start, buf);
            // Release pairs with the Acquire in `wait_insertions`: the
            // record's bytes are in the ring before the slot reads free.
            slot.inserting_at.store(FREE, Ordering::Release);
            copied?;
            slot.records.fetch_add(1, Ordering::Relaxed);
            if images > 0 {
                slot.images.fetch_add(images as u64, Ordering::Relaxed);
            }
            let end = align(start + len);
            if crate::segment_of(start) != crate::segment_of(end) {
                self.segment_crossed(end);
            }
            return Ok((start, end));
        }
    }

    fn acquire_slot(&self) -> (usize, MutexGuard<'_, ()>) {
        let slots = self.insert.slots.len();
        let home = home_slot(slots);
        for i in 0..slots {
            let n = (home + i) % slots;
            if let Some(g) = self.insert.slots[n].lock.try_lock() {
                return (n, g);
            }
        }
        (home, self.insert.slots[home].lock.lock())
    }

    /// Copies `bytes` to the ring at `start`, first making room where the
    /// ring still holds unwritten bytes from a lap ago.
    fn copy_to_ring(&self, slot: &Slot, start: Lsn, bytes: &[u8]) -> WalResult<()> {
        let ring_len = self.insert.ring.len;
        let mut pos = start;
        let mut rest = bytes;
        while !rest.is_empty() {
            let at = (pos % ring_len as u64) as usize;
            let chunk = rest.len().min(ring_len - at);
            let need = (pos + chunk as u64).saturating_sub(ring_len as u64);
            if self.write.written() < need {
                // Publish our progress so that the writer we may become
                // (or wait for) does not wait for us.
                slot.inserting_at.store(pos, Ordering::Release);
                self.stats.buffers_full.fetch_add(1, Ordering::Relaxed);
                self.write_upto(need, false)?;
            }
            // SAFETY: positions pos..pos+chunk are reserved by us alone, and
            // `written >= need` means the writer is done with the bytes a
            // lap ago at the same place (README rule 2).
            unsafe {
                std::ptr::copy_nonoverlapping(rest.as_ptr(), self.insert.ring.ptr.add(at), chunk)
            };
            pos += chunk as u64;
            rest = &rest[chunk..];
        }
        Ok(())
    }

    fn segment_crossed(&self, end: Lsn) {
        // Relaxed: the redo pointer only decides when to ask for a checkpoint.
        let redo = self.last_redo.load(Ordering::Relaxed);
        // As PostgreSQL's CheckPointSegments: leave room for the
        // checkpoint's own spread before max_wal_size is reached.
        if end.saturating_sub(redo) > self.settings.max_wal_size() / 2 {
            self.request_checkpoint();
        }
    }

    /// The position the next record will start at (pg_current_wal_insert_lsn).
    pub fn insert_lsn(&self) -> Lsn {
        self.insert.reserved()
    }

    /// The redo pointer records are compared with for full-page images.
    pub fn redo_pointer(&self) -> Lsn {
        self.insert.redo()
    }
}
