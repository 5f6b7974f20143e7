//! The Scalegres server: listener, wire protocol, sessions, settings and
//! background threads.

pub mod activity;
pub mod auth;
pub mod connections;
pub mod context;
mod copy_session;
pub mod datadir;
mod explain;
#[cfg(any(test, feature = "fuzzing"))]
pub mod fuzz;
pub mod gucs;
pub mod lockfile;
pub mod protocol;
mod query_cursor;
pub mod session;
pub mod session_api;
pub mod shutdown;
pub mod stop;
pub mod views;
