//! The reg* output function for result rows: names looked up in the
//! catalog snapshot of the statement that produced them, with the session's
//! search_path deciding which relation names need their schema.

use std::sync::Arc;

use catalog::CatalogData;
use common::Oid;
use types::TypeId;

use crate::session_api::RegOutput;

pub(crate) struct CatalogNames {
    pub catalog: Arc<CatalogData>,
    pub db_oid: Oid,
    pub search_path: Vec<String>,
}

impl RegOutput for CatalogNames {
    fn reg_name(&self, ty: TypeId, oid: u32) -> String {
        sql::reg::RegCatalog {
            catalog: &self.catalog,
            db_oid: self.db_oid,
            search_path: self.search_path.iter().map(String::as_str).collect(),
            system_views: Some(&exec::system_views::Registry),
        }
        .output(ty, oid)
    }
}
