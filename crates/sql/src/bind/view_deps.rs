//! Which views a DDL statement would break (pg_depend's role for views).
//!
//! A view is stored as SQL text and bound again wherever it is used, so
//! rather than recording what each view reads when it is made, the views a
//! change affects are found by binding them against the catalog as the
//! change would leave it (`after`): a view that no longer binds, or binds
//! to other column names or types than it was made with, depends on what
//! changed. That is PostgreSQL's rule too — a view depends on the relations
//! and columns its query reads, not on the others — found by trying rather
//! than by bookkeeping. Only views whose text names a changed relation (or
//! a view found broken before) are bound, so the cost follows the views
//! that can be affected.

use std::sync::Arc;

use catalog::{CatalogData, Table, View};
use common::{PgError, PgResult, SqlState};

use super::{BindContext, Binder};

/// A view a change breaks, and what it depends on that changed: the
/// changed object itself (None) or a view broken before it (Some(name)).
pub(super) struct BrokenView {
    pub view: Arc<View>,
    pub through: Option<String>,
}

impl Binder<'_, '_> {
    /// The views of this database (other than `dropping`) that `after`
    /// breaks, `changed` naming the relations the change touches; each
    /// view before the views that read it, as a cascade drops them.
    pub(super) fn views_broken_by(
        &self,
        mut after: CatalogData,
        changed: &[&str],
        dropping: &[Arc<View>],
    ) -> Vec<BrokenView> {
        let mut names: Vec<(String, bool)> =
            changed.iter().map(|n| (n.to_lowercase(), false)).collect();
        let mut candidates: Vec<View> = self
            .ctx
            .catalog
            .views
            .values()
            .filter(|v| v.db_oid == self.ctx.db_oid && !dropping.iter().any(|d| d.oid == v.oid))
            .cloned()
            .collect();
        let mut broken = Vec::new();
        loop {
            let before = broken.len();
            let mut i = 0;
            while i < candidates.len() {
                let text = candidates[i].query.to_lowercase();
                let named: Vec<&(String, bool)> = names
                    .iter()
                    .filter(|(n, _)| text.contains(n.as_str()))
                    .collect();
                if named.is_empty() || self.binds_alike(&after, &candidates[i]) {
                    i += 1;
                    continue;
                }
                let through = named
                    .iter()
                    .find(|(_, is_view)| *is_view)
                    .map(|(n, _)| n.clone());
                let v = candidates.swap_remove(i);
                after.views.remove(&v.oid);
                names.push((v.name.to_lowercase(), true));
                broken.push(BrokenView {
                    view: Arc::new(v),
                    through,
                });
            }
            if broken.len() == before {
                return broken;
            }
        }
    }

    /// The views DROP TABLE of `tables` or DROP VIEW of `views` would
    /// break: refused without CASCADE (2BP01), else to be dropped first.
    pub(super) fn views_on_dropped(
        &self,
        tables: &[Arc<Table>],
        views: &[Arc<View>],
        cascade: bool,
    ) -> PgResult<Vec<Arc<View>>> {
        if tables.is_empty() && views.is_empty() {
            return Ok(Vec::new());
        }
        let mut after = self.ctx.catalog.clone();
        for t in tables {
            after.tables.remove(&t.oid);
        }
        for v in views {
            after.views.remove(&v.oid);
        }
        let names: Vec<&str> = tables
            .iter()
            .map(|t| t.name.as_str())
            .chain(views.iter().map(|v| v.name.as_str()))
            .collect();
        let broken = self.views_broken_by(after, &names, views);
        if broken.is_empty() || cascade {
            return Ok(broken.into_iter().map(|b| b.view).collect());
        }
        Err(match (tables, views) {
            ([t], []) => views_depend_error("drop", &format!("table {}", t.name), &broken),
            ([], [v]) => views_depend_error("drop", &format!("view {}", v.name), &broken),
            _ => PgError::new(
                SqlState::DEPENDENT_OBJECTS_STILL_EXIST,
                "cannot drop desired object(s) because other objects depend on them",
            )
            .with_hint("Use DROP ... CASCADE to drop the dependent objects too."),
        })
    }

    /// Whether view `v` binds in `catalog` to the columns it was made with.
    pub(super) fn binds_alike(&self, catalog: &CatalogData, v: &View) -> bool {
        let ctx = &self.ctx;
        let mut ctx = BindContext {
            catalog,
            db_oid: ctx.db_oid,
            db_name: ctx.db_name,
            user: ctx.user,
            session_user: ctx.session_user,
            search_path: ctx.search_path.clone(),
            temp_namespace: ctx.temp_namespace,
            param_types: Vec::new(),
            server_version: ctx.server_version,
            io: ctx.io,
            system_views: ctx.system_views,
            param_names: Vec::new(),
        };
        let mut binder = Binder::new(&mut ctx);
        match binder.expand_view(v, &None) {
            Ok((_, scope)) => scope
                .iter()
                .zip(&v.columns)
                .all(|(s, c)| s.ty == c.data_type()),
            Err(_) => false,
        }
    }
}

/// 2BP01 for a drop or change that views depend on: `what` is the object
/// as PostgreSQL names it (`table t`, `column b of table t`).
pub(super) fn views_depend_error(action: &str, what: &str, views: &[BrokenView]) -> PgError {
    let detail = views
        .iter()
        .map(|b| match &b.through {
            Some(v) => format!("view {} depends on view {v}", b.view.name),
            None => format!("view {} depends on {what}", b.view.name),
        })
        .collect::<Vec<_>>()
        .join("\n");
    PgError::new(
        SqlState::DEPENDENT_OBJECTS_STILL_EXIST,
        format!("cannot {action} {what} because other objects depend on it"),
    )
    .with_detail(detail)
    .with_hint("Use DROP ... CASCADE to drop the dependent objects too.")
}
