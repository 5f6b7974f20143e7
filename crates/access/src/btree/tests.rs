//! Unit tests of the B-tree (README rules 16–25).

mod support;

mod basic;
mod build;
mod concurrent;
mod corrupt;
mod model;
mod multicol;
mod perf;
mod redo;
mod unique;
