//! The Scalegres server: listener, wire protocol, sessions, settings and
//! background threads.

pub mod activity;
pub mod auth;
pub mod autovacuum;
pub mod checkpointer;
pub mod connections;
pub mod context;
mod copy_session;
pub mod datadir;
mod explain;
#[cfg(any(test, feature = "fuzzing"))]
pub mod fuzz;
pub mod gucs;
mod gucs_defs;
mod gucs_meta;
mod gucs_typed;
pub mod lockfile;
pub mod notify;
mod plan_cache;
pub mod prepared_statements;
pub mod protocol;
mod query_cursor;
mod reg_output;
mod server_state;
pub mod session;
pub mod session_api;
pub mod shutdown;
pub mod stop;
pub mod tls;
pub mod waldump;

/// A LOG line on the server's standard error, as PostgreSQL's log prefix
/// `%m [%p]` writes it.
pub fn log(msg: &str) {
    use std::io::Write;
    let now = chrono::Utc::now().format("%Y-%m-%d %H:%M:%S%.3f UTC");
    let _ = writeln!(
        std::io::stderr(),
        "{now} [{}] LOG:  {msg}",
        std::process::id()
    );
}
