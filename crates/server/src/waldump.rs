//! `scalegres waldump -D DIR`: prints the log's records as pg_waldump does,
//! from the last checkpoint's redo pointer (or `--start`) to the end of the
//! valid log.

use std::io::Write;
use std::path::Path;

use wal::reader::{ReadEnd, WalReader};
use wal::{format_lsn, rmgr, Record};

fn describe(rec: &Record<'_>) -> String {
    match rec.rmid {
        rmgr::XLOG => {
            let kind = if rec.info == wal::XLOG_CHECKPOINT_SHUTDOWN {
                "CHECKPOINT_SHUTDOWN"
            } else {
                "CHECKPOINT_ONLINE"
            };
            match wal::CheckpointInfo::decode(rec.main) {
                Some(c) => format!(
                    "{kind} redo {}; next xid {}",
                    format_lsn(c.redo),
                    c.next_xid
                ),
                None => kind.to_string(),
            }
        }
        rmgr::XACT if rec.info == txn::XACT_COMMIT => "COMMIT".to_string(),
        rmgr::XACT => "ABORT".to_string(),
        rmgr::BTREE => access::btree::log::describe(rec),
        _ => access::heap::log::describe(rec),
    }
}

/// One line per record, as pg_waldump prints them.
pub fn format_record(rec: &Record<'_>) -> String {
    let mut line = format!(
        "rmgr: {:<11} len (rec/tot): {:>6}/{:>6}, tx: {:>10}, lsn: {}, prev {}, desc: {}",
        rmgr::name(rec.rmid),
        rec.total_len - rec.image_bytes(),
        rec.total_len,
        rec.xid,
        format_lsn(rec.lsn),
        format_lsn(rec.prev),
        describe(rec)
    );
    for (i, b) in rec.blocks.iter().enumerate() {
        let r = b.tag.rel;
        let fork = match b.tag.fork.suffix() {
            "" => String::new(),
            s => format!(" fork {}", s.trim_start_matches('_')),
        };
        line.push_str(&format!(
            ", blkref #{i}: rel {}/{}/{}{fork} blk {}",
            r.spc_oid, r.db_oid, r.rel_number, b.tag.block
        ));
        if b.has_image() {
            line.push_str(" FPW");
        }
    }
    line
}

/// Prints the records; returns how many there were.
pub fn run(data_dir: &Path, start: Option<&str>, out: &mut dyn Write) -> Result<u64, String> {
    let start = match start {
        Some(s) => wal::parse_lsn(s).ok_or_else(|| format!("invalid start LSN \"{s}\""))?,
        None => match wal::ControlFile::read(data_dir).map_err(|e| e.to_string())? {
            Some(c) => c.redo,
            None => return Err(format!("no control file in \"{}\"", data_dir.display())),
        },
    };
    let mut reader = WalReader::new(&data_dir.join("pg_wal"), start);
    let mut n = 0;
    loop {
        match reader.next_record() {
            Ok(rec) => {
                writeln!(out, "{}", format_record(&rec)).map_err(|e| e.to_string())?;
                n += 1;
            }
            Err(ReadEnd::Missing(at)) => {
                writeln!(out, "end of log at {}", format_lsn(at)).map_err(|e| e.to_string())?;
                return Ok(n);
            }
            Err(e) => {
                writeln!(out, "end of log: {e}").map_err(|e| e.to_string())?;
                return Ok(n);
            }
        }
    }
}
