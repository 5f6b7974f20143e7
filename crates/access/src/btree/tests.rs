//! Unit tests of the B-tree (README rules 18–27).

mod support;

mod abbrev;
mod basic;
mod build;
mod concurrent;
mod corrupt;
mod delete;
mod model;
mod multicol;
mod perf;
mod redo;
mod unique;
