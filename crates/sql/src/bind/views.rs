//! System views in FROM: the binder looks their columns up through
//! `BindContext::system_views` and plans a `Plan::SystemView` scan; the rows
//! are produced when the plan runs (`exec::system_views`).

use super::Binder;
use crate::plan::{OutputColumn, Plan};

impl Binder<'_, '_> {
    /// The scan of the system view named by `parts`, if it is one: an
    /// unqualified or `pg_catalog.` name, or `information_schema.` name.
    pub(crate) fn system_view(
        &self,
        parts: &[String],
        alias: Option<&str>,
    ) -> Option<(Plan, Vec<OutputColumn>)> {
        let (schema, name) = match parts {
            [n] => ("pg_catalog", n.as_str()),
            [s, n] if s == "pg_catalog" || s == "information_schema" => (s.as_str(), n.as_str()),
            _ => return None,
        };
        let view = self.ctx.system_views?.lookup(schema, name)?;
        let plan = Plan::SystemView {
            name: view.key,
            scan: view.scan,
            alias: alias.map(str::to_string),
            columns: view.columns.clone(),
        };
        Some((plan, view.columns))
    }
}
