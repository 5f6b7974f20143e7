//! OID assignment: a counter shared by all DDL, not transactional (an OID
//! used by a rolled-back CREATE is not handed out again), and crash-safe
//! the way the xid counter is: before the counter passes the limit written
//! in `global/pg_oid_limit`, a limit `OID_BATCH` further on is written
//! durably, and a restart resumes from the written limit. OIDs (and so
//! relfilenodes) are therefore never reused, even after a crash.

use std::path::{Path, PathBuf};

use common::{Oid, PgError, PgResult, SqlState};
use parking_lot::Mutex;

use crate::FIRST_NORMAL_OID;

const OID_BATCH: Oid = 8192;

pub(crate) struct OidCounter {
    path: PathBuf,
    /// (next OID to hand out, the durable limit).
    state: Mutex<(Oid, Oid)>,
    fsync: bool,
}

impl OidCounter {
    pub fn open(data_dir: &Path, fsync: bool) -> PgResult<OidCounter> {
        let path = data_dir.join("global").join("pg_oid_limit");
        let next = match std::fs::read_to_string(&path) {
            Ok(s) => s.trim().parse::<Oid>().map_err(|e| {
                PgError::new(
                    SqlState::DATA_CORRUPTED,
                    format!("invalid OID limit in \"{}\": {e}", path.display()),
                )
            })?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => FIRST_NORMAL_OID,
            Err(e) => {
                return Err(PgError::io(
                    format!("could not read \"{}\"", path.display()),
                    e,
                ))
            }
        };
        Ok(OidCounter {
            path,
            state: Mutex::new((next, next)),
            fsync,
        })
    }

    /// A new OID, never handed out before.
    pub fn next(&self) -> PgResult<Oid> {
        let mut st = self.state.lock();
        if st.0 >= st.1 {
            // Past the top of the OID space, start over above the fixed OIDs
            // (PostgreSQL wraps the same way); 4 billion OIDs is far off.
            let next =
                st.0.checked_add(OID_BATCH)
                    .map_or(FIRST_NORMAL_OID, |_| st.0);
            let limit = next + OID_BATCH;
            common::durable::replace_file(&self.path, format!("{limit}\n").as_bytes(), self.fsync)
                .map_err(|(op, file, e)| {
                    PgError::io(format!("could not {op} \"{}\"", file.display()), e)
                })?;
            *st = (next, limit);
        }
        let o = st.0;
        st.0 += 1;
        Ok(o)
    }
}
