//! LOCK TABLE: the relations to lock, a view's base tables after it
//! (PostgreSQL locks a view's query's relations in the same mode).

use common::{PgError, PgResult, SqlState};
use txn::lock::LockMode;

use super::{undefined_table, Binder, Relation};
use crate::plan::BoundStatement;

impl Binder<'_, '_> {
    pub(crate) fn bind_lock(
        &mut self,
        names: &[Vec<String>],
        mode: &Result<LockMode, String>,
        nowait: bool,
    ) -> PgResult<BoundStatement> {
        let mode = match mode {
            Ok(m) => *m,
            Err(near) => {
                return Err(PgError::syntax(format!(
                    "syntax error at or near \"{near}\""
                )))
            }
        };
        let mut relations: Vec<(u32, String)> = Vec::new();
        let mut add = |oid: u32, name: &str| {
            if !relations.iter().any(|(o, _)| *o == oid) {
                relations.push((oid, name.to_string()));
            }
        };
        for n in names {
            match self.lookup_relation(n)? {
                Some(Relation::Table(t)) => add(t.oid, &t.name),
                Some(Relation::View(v)) => {
                    add(v.oid, &v.name);
                    let (plan, _) = self.expand_view(&v, &None)?;
                    let mut base = Vec::new();
                    crate::plan::locks::plan_relations(&plan, mode, &mut base);
                    for (oid, _) in base {
                        let name = self
                            .ctx
                            .catalog
                            .relation_by_oid(oid)
                            .map_or_else(|| oid.to_string(), |r| r.0.to_string());
                        add(oid, &name);
                    }
                }
                None => {
                    let name = n.last().map_or("", String::as_str);
                    if self.sequence_named(n) {
                        return Err(PgError::new(
                            SqlState::WRONG_OBJECT_TYPE,
                            format!("cannot lock relation \"{name}\""),
                        )
                        .with_detail("This operation is not supported for sequences."));
                    }
                    return Err(undefined_table(&n.join(".")));
                }
            }
        }
        Ok(BoundStatement::Lock {
            relations,
            mode,
            nowait,
        })
    }

    /// Whether `parts` names a sequence.
    fn sequence_named(&self, parts: &[String]) -> bool {
        let cat = self.ctx.catalog;
        let db = self.ctx.db_oid;
        match parts {
            [name] => self
                .ctx
                .search_path
                .iter()
                .filter_map(|s| cat.namespace_by_name(db, s))
                .any(|ns| cat.sequence(db, ns.oid, name).is_some()),
            [.., schema, name] => cat
                .namespace_by_name(db, schema)
                .is_some_and(|ns| cat.sequence(db, ns.oid, name).is_some()),
            [] => false,
        }
    }
}
