//! The Scalegres server: listener, wire protocol, sessions, settings and
//! background threads.

pub mod activity;
pub mod auth;
pub mod context;
pub mod gucs;
pub mod protocol;
pub mod session;
pub mod session_api;
pub mod views;
