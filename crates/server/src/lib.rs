//! The Scalegres server: listener, wire protocol, sessions, settings and
//! background threads.

pub mod session_api;
