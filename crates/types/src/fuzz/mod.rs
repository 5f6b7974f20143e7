//! Fuzz targets of the types (feature `fuzzing`, on in tests), run by the
//! driver in `common::fuzz`.

pub mod types_io;
