//! System columns (ctid, xmin, cmin, xmax, cmax, tableoid) and the stored
//! form pg_column_size / pg_column_compression report for a table column.
//!
//! A statement that names a system column, or calls one of those two
//! functions, has every table scan it binds emit the corresponding extra
//! columns (`Plan::SeqScan::system`, computed from each row version); other
//! statements pay nothing. A system column's scope entry is hidden from `*`
//! and NATURAL/USING but found by name, qualified or not (PostgreSQL's
//! negative attnums, -1 ctid to -6 tableoid). A stored-form entry has no
//! name: only `pg_column_size(col)` of the same table column reaches it.

use std::ops::ControlFlow;

use catalog::Table;
use common::PgResult;
use sqlparser::ast;
use types::{DataType, TypeId, Value};

use super::{ident_name, Binder, Scope, ScopeColumn};
use crate::expr::{Expr, SysFunc};
use crate::plan::SystemColumn;

/// What of this section a statement uses, found before it is bound.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct SystemColumnUse {
    /// It names a system column somewhere (the name may turn out to be a
    /// subquery's column: the scans then emit columns nobody reads).
    pub named: bool,
    /// It calls pg_column_size or pg_column_compression.
    pub stored: bool,
    /// While a grouped SELECT's list is bound: its calls size the grouped
    /// value as computed, the stored form being no group key.
    pub grouped: bool,
}

/// Whether a SELECT groups its rows (GROUP BY or HAVING).
pub(crate) fn is_grouped(s: &ast::Select) -> bool {
    s.having.is_some()
        || !matches!(&s.group_by, ast::GroupByExpr::Expressions(keys, _) if keys.is_empty())
}

impl SystemColumnUse {
    pub(crate) fn of<V: ast::Visit>(v: &V) -> SystemColumnUse {
        let mut used = SystemColumnUse::default();
        let is_system = |i: &ast::Ident| SystemColumn::by_name(&ident_name(i)).is_some();
        let _ = ast::visit_expressions(v, |e| {
            match e {
                ast::Expr::Identifier(i) => used.named |= is_system(i),
                ast::Expr::CompoundIdentifier(parts) => {
                    used.named |= parts.last().is_some_and(is_system)
                }
                ast::Expr::Function(f) => {
                    let name = f.name.0.last().and_then(|p| p.as_ident()).map(ident_name);
                    used.stored |= matches!(
                        name.as_deref(),
                        Some("pg_column_size" | "pg_column_compression")
                    );
                }
                _ => {}
            }
            ControlFlow::<()>::Continue(())
        });
        used
    }
}

/// Scope attnums of the stored-form entries: below every named one.
const STORED_SIZE_ATTNUM: i16 = -10000;
const STORED_COMPRESSION_ATTNUM: i16 = -20000;

fn attnum(c: SystemColumn) -> i16 {
    match c {
        SystemColumn::Ctid => -1,
        SystemColumn::Xmin => -2,
        SystemColumn::Cmin => -3,
        SystemColumn::Xmax => -4,
        SystemColumn::Cmax => -5,
        SystemColumn::TableOid => -6,
        SystemColumn::StoredSize(i) => STORED_SIZE_ATTNUM - i as i16,
        SystemColumn::StoredCompression(i) => STORED_COMPRESSION_ATTNUM - i as i16,
    }
}

/// Whether `c` is a system column or stored form of a scanned table.
pub(crate) fn is_system_entry(c: &ScopeColumn) -> bool {
    c.hidden && c.qualifier.is_some() && c.attnum < 0
}

/// Whether `c` is a stored form (what pg_column_size reports).
pub(crate) fn is_stored_form(c: &ScopeColumn) -> bool {
    is_system_entry(c) && c.attnum <= STORED_SIZE_ATTNUM
}

/// How far a named system column's attnum moves once its table is inside
/// a JOIN: PostgreSQL finds it there only qualified (a join has no system
/// columns of its own and hides its members' unqualified names).
const IN_JOIN: i16 = 100;

/// After a JOIN is bound: its tables' system columns only qualified.
pub(crate) fn hide_in_join(scope: &mut Scope) {
    for c in scope.iter_mut().filter(|c| found_unqualified(c)) {
        c.attnum -= IN_JOIN;
    }
}

/// A system column's table and attnum as RowDescription reports them
/// (none for a stored form, pg_column_size's result).
pub(crate) fn output_origin(c: &ScopeColumn) -> (common::Oid, i16) {
    if !is_system_entry(c) {
        (c.table_oid, c.attnum)
    } else if is_stored_form(c) {
        (0, 0)
    } else if c.attnum < -6 {
        (c.table_oid, c.attnum + IN_JOIN)
    } else {
        (c.table_oid, c.attnum)
    }
}

/// Whether an unqualified name finds this hidden entry: a named system
/// column (the locking tid has no qualifier, stored forms no name).
pub(crate) fn found_unqualified(c: &ScopeColumn) -> bool {
    is_system_entry(c) && (-6..0).contains(&c.attnum)
}

impl Binder<'_, '_> {
    /// INSERT's RETURNING scope: the table's columns, then (when the
    /// statement names one) the named system columns of the version
    /// written, which the executor appends (`exec::system_columns`). Not
    /// with ON CONFLICT, whose rows may be updated ones (42703 there).
    pub(crate) fn insert_returning_scope(
        &self,
        table: &Table,
        alias: Option<&str>,
        on_conflict: bool,
    ) -> Scope {
        let mut scope = Self::table_scope(table, alias);
        if self.system_use.named && !on_conflict {
            let refname = alias.unwrap_or(&table.name);
            for c in SystemColumn::NAMED {
                scope.push(ScopeColumn {
                    qualifier: Some(refname.to_string()),
                    name: c.name().unwrap_or_default().to_string(),
                    ty: c.data_type(),
                    table_oid: table.oid,
                    attnum: attnum(c),
                    hidden: true,
                });
            }
        }
        scope
    }

    /// The system columns a scan of `table` (referenced as `refname`)
    /// emits in this statement, their entries appended to `scope`.
    pub(crate) fn add_system_columns(
        &self,
        table: &Table,
        refname: &str,
        scope: &mut Scope,
    ) -> Vec<SystemColumn> {
        let mut cols = Vec::new();
        if self.system_use.named {
            cols.extend(SystemColumn::NAMED);
        }
        if self.system_use.stored {
            for i in 0..table.columns.len() {
                cols.push(SystemColumn::StoredSize(i));
                cols.push(SystemColumn::StoredCompression(i));
            }
        }
        for c in &cols {
            scope.push(ScopeColumn {
                qualifier: Some(refname.to_string()),
                name: c.name().unwrap_or_default().to_string(),
                ty: c.data_type(),
                table_oid: table.oid,
                attnum: attnum(*c),
                hidden: true,
            });
        }
        cols
    }

    /// pg_column_size(x) and pg_column_compression(x): of a scanned table
    /// column, its stored form (the scan's column for it); of any other
    /// value, its size in memory as PostgreSQL's datum would be, and no
    /// compression. None for other calls.
    pub(crate) fn bind_stored_form(
        &mut self,
        name: &str,
        args: &[Expr],
        scope: &Scope,
    ) -> PgResult<Option<Expr>> {
        let compression = match (name, args.len()) {
            ("pg_column_size", 1) => false,
            ("pg_column_compression", 1) => true,
            _ => return Ok(None),
        };
        if let (Expr::Column(i, _), false) = (&args[0], self.system_use.grouped) {
            let col = &scope[*i];
            if col.attnum > 0 && col.table_oid != 0 {
                let k = (col.attnum - 1) as usize;
                let want = attnum(if compression {
                    SystemColumn::StoredCompression(k)
                } else {
                    SystemColumn::StoredSize(k)
                });
                let stored = scope.iter().position(|c| {
                    c.attnum == want && c.table_oid == col.table_oid && c.qualifier == col.qualifier
                });
                if let Some(j) = stored {
                    return Ok(Some(Expr::Column(j, scope[j].ty)));
                }
            }
        }
        if compression {
            // Only a stored value is ever compressed here.
            return Ok(Some(Expr::Const(Value::Null, DataType::new(TypeId::Text))));
        }
        Ok(Some(Expr::Sys {
            func: SysFunc::DatumSize,
            args: args.to_vec(),
            ty: DataType::new(TypeId::Int4),
        }))
    }
}
