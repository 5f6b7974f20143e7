//! Domains (CREATE DOMAIN): a domain's values are its base type's values,
//! so below the binder a domain is its base type. The catalog publishes
//! each domain's base type here (when it loads and whenever type DDL
//! changes), which lets `TypeId::from_oid` resolve a column declared with
//! a domain to the base type. Built-in types never touch this registry.

use std::collections::HashMap;
use std::sync::{LazyLock, RwLock};

use common::Oid;

/// Domain oid -> base type oid (itself possibly a domain).
static BASE_TYPES: LazyLock<RwLock<HashMap<Oid, Oid>>> = LazyLock::new(Default::default);

/// Replaces every registered domain with `domains` (domain oid, base type oid).
pub fn publish(domains: impl IntoIterator<Item = (Oid, Oid)>) {
    let mut m = BASE_TYPES.write().unwrap_or_else(|e| e.into_inner());
    m.clear();
    m.extend(domains);
}

/// The base type oid of domain `oid` (None: not a domain).
pub fn base_type_oid(oid: Oid) -> Option<Oid> {
    BASE_TYPES
        .read()
        .unwrap_or_else(|e| e.into_inner())
        .get(&oid)
        .copied()
}
