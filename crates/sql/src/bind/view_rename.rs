//! Renames seen through views. PostgreSQL stores a view as a tree of
//! attnums and oids, which a rename leaves alone; here a view is stored as
//! SQL text (bound again where it is used), so a rename of a table or of a
//! column a view reads rewrites the view's text to the new name. A renamed
//! table keeps its old name as the alias of its FROM item, so the view's
//! qualified references still resolve; a renamed column is renamed where
//! the text names it unqualified or through the table. Each rewritten view
//! must then bind to the columns it was made with, or the rename is refused
//! (0A000) rather than leaving a view that no longer works.

use std::ops::ControlFlow;
use std::sync::Arc;

use catalog::{CatalogData, Table, View};
use common::{PgError, PgResult};
use sqlparser::ast::{self, VisitMut, VisitorMut};

use super::constraints::Rename;
use super::{ident_name, Binder};

/// Rewrites one view's query for a rename of `table` (by its FROM items'
/// names) or of one of its columns.
struct RenameInView<'r> {
    rename: &'r Rename<'r>,
    table: &'r str,
    /// Names the table goes by in the query (its name and its aliases).
    names: Vec<String>,
}

fn quoted(s: &str) -> ast::Ident {
    let mut i = ast::Ident::new(s);
    if ::types::functions::ident_needs_quotes(s) {
        i.quote_style = Some('"');
    }
    i
}

impl VisitorMut for RenameInView<'_> {
    type Break = ();

    fn pre_visit_table_factor(&mut self, f: &mut ast::TableFactor) -> ControlFlow<()> {
        let ast::TableFactor::Table {
            name, alias, args, ..
        } = f
        else {
            return ControlFlow::Continue(());
        };
        let Some(ast::ObjectNamePart::Identifier(last)) = name.0.last_mut() else {
            return ControlFlow::Continue(());
        };
        if args.is_some() || ident_name(last) != self.table {
            return ControlFlow::Continue(());
        }
        match self.rename {
            Rename::Table { old, new } => {
                *last = quoted(new);
                if alias.is_none() {
                    *alias = Some(ast::TableAlias {
                        explicit: true,
                        name: quoted(old),
                        columns: Vec::new(),
                        at: None,
                    });
                }
            }
            Rename::Column { .. } => {
                if let Some(a) = alias {
                    self.names.push(ident_name(&a.name));
                }
            }
        }
        ControlFlow::Continue(())
    }

    fn pre_visit_expr(&mut self, e: &mut ast::Expr) -> ControlFlow<()> {
        let Rename::Column { old, new } = self.rename else {
            return ControlFlow::Continue(());
        };
        match e {
            ast::Expr::Identifier(i) if ident_name(i) == *old => *i = quoted(new),
            ast::Expr::CompoundIdentifier(parts) if parts.len() >= 2 => {
                let n = parts.len();
                if ident_name(&parts[n - 1]) == *old
                    && self.names.contains(&ident_name(&parts[n - 2]))
                {
                    parts[n - 1] = quoted(new);
                }
            }
            _ => {}
        }
        ControlFlow::Continue(())
    }
}

impl Binder<'_, '_> {
    /// The views a rename of `table` (or of its column) would break,
    /// with their query rewritten to the new name; `after` is the catalog
    /// as the rename leaves it. Errors: 0A000 for a view whose rewritten
    /// query does not bind to its columns.
    pub(super) fn views_for_rename(
        &self,
        table: &Table,
        rename: &Rename<'_>,
        mut after: CatalogData,
    ) -> PgResult<Vec<(Arc<View>, String)>> {
        let broken = self.views_broken_by(after.clone(), &[table.name.as_str()], &[]);
        let mut rewritten = Vec::new();
        for b in broken {
            let v = &b.view;
            let dialect = sqlparser::dialect::PostgreSqlDialect {};
            let mut q = sqlparser::parser::Parser::new(&dialect)
                .try_with_sql(&v.query)
                .and_then(|mut p| p.parse_query())
                .map_err(|e| {
                    PgError::internal(format!(
                        "stored query of view \"{}\" does not parse: {e}",
                        v.name
                    ))
                })?;
            // Aliases are found on the way down, before the expressions
            // that use them (FROM is visited before the select list only
            // within one SELECT), so a first pass collects them.
            let mut visitor = RenameInView {
                rename,
                table: &table.name,
                names: vec![table.name.clone()],
            };
            if matches!(rename, Rename::Column { .. }) {
                let _ = q.clone().visit(&mut visitor);
            }
            let _ = q.visit(&mut visitor);
            let mut changed = (**v).clone();
            changed.query = q.to_string();
            if !self.binds_alike(&after, &changed) {
                return Err(PgError::unsupported(format!(
                    "cannot rename {} because view \"{}\" uses it in a way that cannot be rewritten",
                    match rename {
                        Rename::Table { old, .. } => format!("table \"{old}\""),
                        Rename::Column { old, .. } => format!("column \"{old}\""),
                    },
                    v.name
                )));
            }
            after.views.insert(v.oid, changed.clone());
            rewritten.push((Arc::clone(v), changed.query));
        }
        Ok(rewritten)
    }
}
