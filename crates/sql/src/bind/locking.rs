//! Binding SELECT's locking clause (PostgreSQL's transformLockingClause and
//! CheckSelectLocking).
//!
//! While the FROM list of a query with a locking clause is bound, every
//! table scan also emits its row version's tid (`Plan::SeqScan::tid`),
//! reachable through a scope entry no name finds (no qualifier, hidden,
//! attnum -1 as PostgreSQL's ctid). The select list then carries each tid
//! as an extra column past the visible ones, a LockRows node above the
//! sort locks the rows they name, and the projection that trims ORDER BY's
//! extra columns trims these too. Every table gets a mark, named by the
//! clause or not: LockRows' re-check pins the others' versions by it.

use std::sync::Arc;

use catalog::Table;
use common::{PgError, PgResult, SqlState};
use sqlparser::ast;
use types::{DataType, TypeId};

use super::{ident_name, Binder, Scope, ScopeColumn};
use crate::expr::Expr;
use crate::locking::LockingClause;
use crate::plan::{LockStrength, LockWait, RowMark};

/// A table in the FROM list of the query being bound, and whether an outer
/// join may supply NULLs for it.
struct LockRel {
    name: String,
    table: Arc<Table>,
    nullable: bool,
}

/// The locking clauses of the query being bound and the tables its FROM
/// list has bound so far.
pub(crate) struct LockScope {
    clauses: Vec<LockingClause>,
    rels: Vec<LockRel>,
}

impl LockScope {
    pub(crate) fn new(q: &ast::Query) -> Option<LockScope> {
        (!q.locks.is_empty()).then(|| LockScope {
            clauses: q.locks.iter().map(crate::locking::clause).collect(),
            rels: Vec::new(),
        })
    }

    /// UPDATE ... FROM / DELETE ... USING: no clause, only the tables'
    /// tids (`modify_join.rs`).
    pub(crate) fn for_modify() -> LockScope {
        LockScope {
            clauses: Vec::new(),
            rels: Vec::new(),
        }
    }

    /// Each table of a join bound under `for_modify` with its tid column
    /// in `scope`, in scope order, none locked.
    pub(crate) fn modify_marks(self, scope: &Scope) -> Vec<RowMark> {
        let mut marks = Vec::new();
        for (i, c) in scope.iter().enumerate().filter(|(_, c)| is_tid_entry(c)) {
            if let Some(rel) = self
                .rels
                .iter()
                .find(|r| r.name == c.name && r.table.oid == c.table_oid)
            {
                marks.push(RowMark {
                    table: rel.table.clone(),
                    tid_column: i,
                    lock: None,
                });
            }
        }
        marks
    }

    /// The first clause's strength, as PostgreSQL's messages name it.
    fn first(&self) -> &'static str {
        self.clauses[0].strength.as_sql()
    }

    /// The clause naming relation `name`, if any, and whether one names
    /// every relation.
    fn names(&self, name: &str) -> bool {
        self.clauses.iter().any(|c| match &c.of {
            None => true,
            Some(of) => of_name(of).as_deref() == Some(name),
        })
    }
}

fn of_name(of: &ast::ObjectName) -> Option<String> {
    match of.0.as_slice() {
        [ast::ObjectNamePart::Identifier(i)] => Some(ident_name(i)),
        _ => None,
    }
}

/// Where an OF name is in the text.
fn of_span(of: &ast::ObjectName) -> sqlparser::tokenizer::Span {
    of.0.first()
        .and_then(|p| p.as_ident())
        .map_or(sqlparser::tokenizer::Span::empty(), |i| i.span)
}

fn not_allowed(lock: &LockScope, with: &str) -> PgError {
    PgError::new(
        SqlState::FEATURE_NOT_SUPPORTED,
        format!("{} is not allowed with {with}", lock.first()),
    )
}

/// The scope entry of a tid column: no name finds it.
fn tid_entry(name: &str, table: &Table) -> ScopeColumn {
    ScopeColumn {
        qualifier: None,
        name: name.to_string(),
        ty: DataType::new(TypeId::Int8),
        table_oid: table.oid,
        attnum: -1,
        hidden: true,
    }
}

fn is_tid_entry(c: &ScopeColumn) -> bool {
    c.hidden && c.qualifier.is_none() && c.attnum == -1
}

impl Binder<'_, '_> {
    /// Whether table scans bound now emit tids (a locking query's FROM).
    pub(crate) fn scans_emit_tids(&self) -> bool {
        self.locking.is_some()
    }

    /// Registers a table of a locking query's FROM list under its
    /// reference name and adds its tid column to its scope.
    pub(crate) fn add_lock_rel(&mut self, name: &str, table: &Arc<Table>, scope: &mut Scope) {
        if let Some(lock) = &mut self.locking {
            lock.rels.push(LockRel {
                name: name.to_string(),
                table: table.clone(),
                nullable: false,
            });
            scope.push(tid_entry(name, table));
        }
    }

    /// A FROM item other than a table (`kind`: a function, a subquery or
    /// view) under a locking clause that names it: PostgreSQL's error for a
    /// function, ours for what it would lock through.
    pub(crate) fn check_lock_other(&self, name: &str, function: bool) -> PgResult<()> {
        let Some(lock) = &self.locking else {
            return Ok(());
        };
        let named = lock.clauses.iter().find_map(|c| {
            c.of.as_ref()
                .filter(|of| of_name(of).as_deref() == Some(name))
                .map(|of| (c.strength, of_span(of)))
        });
        if let Some((strength, span)) = named.filter(|_| function) {
            let err = PgError::new(
                SqlState::FEATURE_NOT_SUPPORTED,
                format!("{} cannot be applied to a function", strength.as_sql()),
            );
            return Err(self.at(err, span));
        }
        if !function && lock.names(name) {
            return Err(PgError::unsupported(format!(
                "{} of a subquery or view in FROM is not supported yet",
                lock.first()
            )));
        }
        Ok(())
    }

    /// A WITH query's reference under a locking clause: skipped unless an OF
    /// list names it, which is PostgreSQL's error.
    pub(crate) fn check_lock_cte(&self, name: &str) -> PgResult<()> {
        let Some(lock) = &self.locking else {
            return Ok(());
        };
        let named = lock.clauses.iter().find_map(|c| {
            c.of.as_ref()
                .filter(|of| of_name(of).as_deref() == Some(name))
                .map(|of| (c.strength, of_span(of)))
        });
        match named {
            Some((strength, span)) => {
                let err = PgError::new(
                    SqlState::FEATURE_NOT_SUPPORTED,
                    format!("{} cannot be applied to a WITH query", strength.as_sql()),
                );
                Err(self.at(err, span))
            }
            None => Ok(()),
        }
    }

    /// After an outer join is bound: its nullable side's tables.
    pub(crate) fn mark_nullable(&mut self, side: &Scope) {
        if let Some(lock) = &mut self.locking {
            for c in side.iter().filter(|c| is_tid_entry(c)) {
                for r in lock.rels.iter_mut().filter(|r| r.name == c.name) {
                    r.nullable = true;
                }
            }
        }
    }

    /// CheckSelectLocking: what a locking SELECT may not have, in
    /// PostgreSQL's order.
    pub(crate) fn check_select_locking(
        lock: &LockScope,
        s: &ast::Select,
        (grouped, has_aggs, has_windows, srf): (bool, bool, bool, bool),
    ) -> PgResult<()> {
        if s.distinct.is_some() {
            return Err(not_allowed(lock, "DISTINCT clause"));
        }
        if grouped {
            return Err(not_allowed(lock, "GROUP BY clause"));
        }
        if s.having.is_some() {
            return Err(not_allowed(lock, "HAVING clause"));
        }
        if has_aggs {
            return Err(not_allowed(lock, "aggregate functions"));
        }
        if has_windows {
            return Err(not_allowed(lock, "window functions"));
        }
        if srf {
            return Err(not_allowed(
                lock,
                "set-returning functions in the target list",
            ));
        }
        Ok(())
    }

    /// The marks of a locking query's tables: each tid column appended to
    /// `exprs`, the lock the clauses give it (the strongest strength and
    /// wait policy of those naming it). Checks OF names and outer joins.
    pub(crate) fn row_marks(
        &self,
        lock: LockScope,
        scope: &Scope,
        exprs: &mut Vec<Expr>,
    ) -> PgResult<Vec<RowMark>> {
        for c in &lock.clauses {
            let Some(of) = &c.of else { continue };
            let Some(name) = of_name(of) else {
                let err = PgError::new(
                    SqlState::SYNTAX_ERROR,
                    format!(
                        "{} must specify unqualified relation names",
                        c.strength.as_sql()
                    ),
                );
                return Err(self.at(err, of_span(of)));
            };
            if !lock.rels.iter().any(|r| r.name == name) {
                let err = PgError::new(
                    SqlState::UNDEFINED_TABLE,
                    format!(
                        "relation \"{name}\" in {} clause not found in FROM clause",
                        c.strength.as_sql()
                    ),
                );
                return Err(self.at(err, of_span(of)));
            }
        }
        let mut marks = Vec::new();
        for (i, c) in scope.iter().enumerate().filter(|(_, c)| is_tid_entry(c)) {
            let rel = lock
                .rels
                .iter()
                .find(|r| r.name == c.name && r.table.oid == c.table_oid)
                .expect("every tid column has its relation");
            let mut taken: Option<(LockStrength, LockWait)> = None;
            for clause in &lock.clauses {
                let named = match &clause.of {
                    None => true,
                    Some(of) => of_name(of).as_deref() == Some(rel.name.as_str()),
                };
                if named {
                    taken = Some(match taken {
                        None => (clause.strength, clause.wait),
                        Some((s, w)) => (s.max(clause.strength), w.max(clause.wait)),
                    });
                }
            }
            if let Some((strength, _)) = taken.filter(|_| rel.nullable) {
                return Err(PgError::new(
                    SqlState::FEATURE_NOT_SUPPORTED,
                    format!(
                        "{} cannot be applied to the nullable side of an outer join",
                        strength.as_sql()
                    ),
                ));
            }
            if let Some((strength, _)) = taken.filter(|_| rel.table.is_partitioned()) {
                // The rows are the partitions', which a mark cannot name yet.
                return Err(PgError::unsupported(format!(
                    "{} is not supported on a partitioned table",
                    strength.as_sql()
                )));
            }
            exprs.push(Expr::Column(i, c.ty));
            marks.push(RowMark {
                table: rel.table.clone(),
                tid_column: exprs.len() - 1,
                lock: taken,
            });
        }
        Ok(marks)
    }
}
