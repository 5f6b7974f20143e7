//! Unit tests of the B-tree (README rules 16–25).

mod support;

mod basic;
mod model;
mod multicol;
