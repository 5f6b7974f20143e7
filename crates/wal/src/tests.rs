//! The log round trip: concurrent inserts through a small ring (so copies
//! wrap and wait for the writer), replayed after a "crash" (a second open
//! of the same directory without a shutdown checkpoint).

use std::sync::Mutex;

use crate::record::{Record, RecordBuilder};
use crate::settings::WalReloadable;
use crate::{Redo, RedoError, Wal, WalSettings};

fn open(dir: &std::path::Path) -> &'static Wal {
    std::fs::create_dir_all(dir.join("global")).unwrap();
    let r = WalReloadable {
        fsync: false,
        ..Default::default()
    };
    Wal::open(dir, WalSettings::new(64 * 1024, r)).unwrap()
}

/// Records each replayed record's xid and main-data length.
struct Collect {
    seen: Mutex<Vec<(u64, usize)>>,
}

impl Redo for Collect {
    fn redo(&self, rec: &Record<'_>) -> Result<(), RedoError> {
        let n = u64::from_le_bytes(rec.main[..8].try_into().unwrap());
        assert!(rec.main[8..].iter().all(|&b| b == n as u8));
        self.seen.lock().unwrap().push((rec.xid, rec.main.len()));
        Ok(())
    }
}

/// Opens `dir` again (as after a crash) and replays it; returns the log,
/// the report and what the heap handler saw.
fn replay(dir: &std::path::Path) -> (&'static Wal, crate::RecoveryReport, Vec<(u64, usize)>) {
    let wal = open(dir);
    let c = Collect {
        seen: Mutex::new(Vec::new()),
    };
    let mut handlers: Vec<Option<&dyn Redo>> = vec![None; crate::rmgr::COUNT];
    handlers[crate::rmgr::HEAP as usize] = Some(&c);
    let rep = wal.startup(dir, &handlers).unwrap();
    (wal, rep, c.seen.into_inner().unwrap())
}

fn record_body(n: u64) -> Vec<u8> {
    // Some records are bigger than the 64 kB ring.
    let len = if n.is_multiple_of(97) {
        100_000
    } else {
        8 + (n as usize * 37) % 3000
    };
    let mut b = n.to_le_bytes().to_vec();
    b.resize(len.max(8), n as u8);
    b
}

#[test]
fn concurrent_inserts_replay_in_order_and_completely() {
    let dir = tempfile::tempdir().unwrap();
    let wal = open(dir.path());
    let rep = wal.startup(dir.path(), &[]).unwrap();
    assert!(rep.initialised);
    let threads = 4;
    let per = 500u64;
    std::thread::scope(|s| {
        for t in 0..threads {
            s.spawn(move || {
                for i in 0..per {
                    let n = t * per + i;
                    let mut rec = RecordBuilder::new(crate::rmgr::HEAP, 0, n + 1);
                    rec.main_data().extend_from_slice(&record_body(n));
                    let end = wal.insert(&rec).unwrap();
                    if i % 50 == 0 {
                        wal.flush(end).unwrap();
                        assert!(wal.flush_lsn() >= end);
                    }
                }
            });
        }
    });
    let end = wal.flush_all().unwrap();
    // "Crash": open again without a shutdown checkpoint and replay.
    let (_, rep, seen) = replay(dir.path());
    assert!(rep.crashed);
    assert_eq!(rep.records, threads * per);
    assert_eq!(rep.end, end);
    let mut xids: Vec<u64> = seen.iter().map(|s| s.0).collect();
    xids.sort_unstable();
    assert_eq!(xids, (1..=threads * per).collect::<Vec<_>>());
    for (xid, len) in &seen {
        assert_eq!(*len, record_body(xid - 1).len());
    }
}

#[test]
fn a_damaged_tail_ends_replay_at_the_last_valid_record() {
    let dir = tempfile::tempdir().unwrap();
    let wal = open(dir.path());
    wal.startup(dir.path(), &[]).unwrap();
    let mut ends = Vec::new();
    for n in 0..10u64 {
        let mut rec = RecordBuilder::new(crate::rmgr::HEAP, 0, n + 1);
        rec.main_data().extend_from_slice(&record_body(n + 1));
        let (start, end) = wal.insert_record(&rec).unwrap();
        ends.push((start, end));
    }
    wal.flush_all().unwrap();
    // Flip a byte inside the last record.
    let (start, _) = ends[9];
    let seg = dir
        .path()
        .join("pg_wal")
        .join(crate::segment_file_name(crate::segment_of(start)));
    let mut bytes = std::fs::read(&seg).unwrap();
    let at = (start % crate::SEGMENT_SIZE) as usize + 40;
    bytes[at] ^= 0x40;
    std::fs::write(&seg, bytes).unwrap();
    let (again, rep, _) = replay(dir.path());
    assert_eq!(rep.records, 9);
    assert_eq!(rep.end, ends[8].1);
    assert!(rep.stop_reason.contains("checksum"), "{}", rep.stop_reason);
    // New records continue the chain and replay after the next crash.
    let mut rec = RecordBuilder::new(crate::rmgr::HEAP, 0, 99);
    rec.main_data().extend_from_slice(&record_body(99));
    again.insert(&rec).unwrap();
    again.flush_all().unwrap();
    let (_, rep, _) = replay(dir.path());
    assert_eq!(rep.records, 9 + 1);
}
