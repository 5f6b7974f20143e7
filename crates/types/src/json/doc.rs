//! `JsonbDoc`, the jsonb document a `Value::Jsonb` holds: either a tree
//! (made by input, operators and builders) or the stored bytes a tuple,
//! index entry or spill file gave, with the tree decoded on first need.
//!
//! Why this shape: reads of stored documents (`->>` in a filter, `->`,
//! `jsonb_agg` of whole rows, output) are the common case and need only a
//! part of the document or its bytes as they are; operations that rewrite a
//! document (`||`, `jsonb_set`, ...) and the B-tree order want the tree.
//! Deref to `Jsonb` keeps every tree user unchanged (it decodes once and
//! keeps the tree), while the hot operators (functions/json.rs) ask for
//! `stored()` first and walk the bytes (`stored.rs`). Writing a stored
//! document back to a tuple copies its bytes.

use std::fmt;
use std::ops::Deref;
use std::sync::OnceLock;

use common::PgResult;

use super::storage;
use super::stored::StoredValue;
use super::Jsonb;

/// A jsonb document. Invariant: `stored` or `tree` is set, and `stored`
/// bytes passed `storage::validate` (so decoding them cannot fail).
pub struct JsonbDoc {
    stored: Option<Box<[u8]>>,
    tree: OnceLock<Jsonb>,
}

impl JsonbDoc {
    /// A document from its stored form, checked (XX001 if corrupt), not decoded.
    pub fn from_stored(bytes: &[u8]) -> PgResult<JsonbDoc> {
        storage::validate(bytes)?;
        Ok(JsonbDoc::from_validated(bytes.into()))
    }

    /// Bytes known valid: a sub-slice of a validated document, or built from
    /// such slices.
    pub(crate) fn from_validated(bytes: Box<[u8]>) -> JsonbDoc {
        debug_assert!(storage::validate(&bytes).is_ok());
        JsonbDoc {
            stored: Some(bytes),
            tree: OnceLock::new(),
        }
    }

    /// The stored value, when the document came from storage.
    pub fn stored(&self) -> Option<StoredValue<'_>> {
        self.stored.as_deref().map(StoredValue::of_document)
    }

    /// The tree, decoded from the stored bytes the first time.
    pub fn tree(&self) -> &Jsonb {
        self.tree.get_or_init(|| {
            let bytes = self
                .stored
                .as_deref()
                .expect("a JsonbDoc has bytes or a tree");
            storage::decode(bytes).expect("stored jsonb was validated when read")
        })
    }

    /// Appends the stored form (version byte and value).
    pub fn encode(&self, out: &mut Vec<u8>) {
        match &self.stored {
            Some(b) => out.extend_from_slice(b),
            None => storage::encode(self.tree(), out),
        }
    }

    /// The size of the stored form (encoding a tree to measure it).
    pub fn stored_size(&self) -> usize {
        match &self.stored {
            Some(b) => b.len(),
            None => {
                let mut out = Vec::new();
                storage::encode(self.tree(), &mut out);
                out.len()
            }
        }
    }

    /// Appends the value's stored bytes without the version byte.
    pub(crate) fn append_value_bytes(&self, out: &mut Vec<u8>) {
        match self.stored() {
            Some(v) => out.extend_from_slice(v.value_bytes()),
            None => storage::encode_value(self.tree(), out),
        }
    }

    /// The text form (`jsonb_out`), from the bytes when stored.
    pub fn write_text(&self, out: &mut String) {
        match (self.stored(), self.tree.get()) {
            (Some(v), None) => v
                .write_text(out)
                .expect("stored jsonb was validated when read"),
            _ => self.tree().write_text(out),
        }
    }

    pub fn to_text(&self) -> String {
        let mut s = String::new();
        self.write_text(&mut s);
        s
    }
}

impl From<Jsonb> for JsonbDoc {
    fn from(tree: Jsonb) -> JsonbDoc {
        JsonbDoc {
            stored: None,
            tree: OnceLock::from(tree),
        }
    }
}

impl Deref for JsonbDoc {
    type Target = Jsonb;

    fn deref(&self) -> &Jsonb {
        self.tree()
    }
}

impl Clone for JsonbDoc {
    fn clone(&self) -> JsonbDoc {
        JsonbDoc {
            stored: self.stored.clone(),
            tree: self.tree.clone(),
        }
    }
}

impl PartialEq for JsonbDoc {
    fn eq(&self, other: &JsonbDoc) -> bool {
        // The same bytes decode to the same tree; different bytes may still
        // (they are not canonical for numbers' scale), so compare trees then.
        match (&self.stored, &other.stored) {
            (Some(a), Some(b)) if a == b => true,
            _ => self.tree() == other.tree(),
        }
    }
}

impl fmt::Debug for JsonbDoc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "JsonbDoc({})", self.to_text())
    }
}
