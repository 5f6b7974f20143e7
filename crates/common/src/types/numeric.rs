//! Arbitrary-precision `numeric`.

/// A PostgreSQL `numeric` value.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Numeric(pub bigdecimal::BigDecimal);
