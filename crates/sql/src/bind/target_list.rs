//! Target lists: the names PostgreSQL gives select-list expressions
//! (FigureColname) and its limits on target lists and table widths.

use common::{PgError, PgResult, SqlState};
use sqlparser::ast;

use super::ident_name;

pub(super) fn output_name(e: &ast::Expr) -> String {
    figure_name(e).unwrap_or_else(|| "?column?".into())
}

/// The name PostgreSQL gives a select-list expression (FigureColname), or
/// None where it falls back to `?column?`.
fn figure_name(e: &ast::Expr) -> Option<String> {
    let type_name = |dt: &ast::DataType| {
        super::types::parse_type_name(&dt.to_string())
            .ok()
            // An array type is named by its element type (`int4`).
            .map(|t| t.id.array_element().unwrap_or(t.id).name().to_string())
    };
    match e {
        ast::Expr::Identifier(i) => Some(ident_name(i)),
        ast::Expr::CompoundIdentifier(v) => v.last().map(ident_name),
        ast::Expr::Function(f) => f.name.0.last().and_then(|p| p.as_ident()).map(ident_name),
        // A cast takes its operand's name, else the type's.
        ast::Expr::Cast {
            expr, data_type, ..
        } => figure_name(expr).or_else(|| type_name(data_type)),
        ast::Expr::TypedString(ts) => type_name(&ts.data_type),
        ast::Expr::Interval(_) => Some("interval".into()),
        // TRUE and FALSE are constants (?column?) since PostgreSQL 15.
        ast::Expr::Nested(inner) => figure_name(inner),
        // A scalar subquery is named by its single output column.
        ast::Expr::Subquery(q) => match q.body.as_ref() {
            ast::SetExpr::Select(s) => match s.projection.first() {
                Some(ast::SelectItem::ExprWithAlias { alias, .. }) => Some(ident_name(alias)),
                Some(ast::SelectItem::UnnamedExpr(x)) => figure_name(x),
                _ => None,
            },
            _ => None,
        },
        ast::Expr::Case { .. } => Some("case".into()),
        ast::Expr::Array(_) => Some("array".into()),
        // `a[1]` is named after `a`.
        ast::Expr::CompoundFieldAccess { root, .. } => figure_name(root),
        ast::Expr::Exists { .. } => Some("exists".into()),
        // `substr(...)` parses as a shorthand SUBSTRING.
        ast::Expr::Substring {
            shorthand: true, ..
        } => Some("substr".into()),
        ast::Expr::Substring { .. } => Some("substring".into()),
        ast::Expr::Overlay { .. } => Some("overlay".into()),
        ast::Expr::Position { .. } => Some("position".into()),
        ast::Expr::Trim { .. } => Some("btrim".into()),
        ast::Expr::Extract { .. } => Some("extract".into()),
        ast::Expr::Ceil { .. } => Some("ceil".into()),
        ast::Expr::Floor { .. } => Some("floor".into()),
        _ => None,
    }
}

/// PostgreSQL's MaxTupleAttributeNumber: the most entries a target list
/// (and so a result's RowDescription) may have.
pub(crate) const MAX_TARGET_LIST: usize = 1664;
/// PostgreSQL's MaxHeapAttributeNumber.
pub(crate) const MAX_TABLE_COLUMNS: usize = 1600;

pub(crate) fn check_target_list(n: usize) -> PgResult<()> {
    if n > MAX_TARGET_LIST {
        return Err(PgError::new(
            SqlState("54011"),
            format!("target lists can have at most {MAX_TARGET_LIST} entries"),
        ));
    }
    Ok(())
}

pub(crate) fn check_table_columns(n: usize) -> PgResult<()> {
    if n > MAX_TABLE_COLUMNS {
        return Err(PgError::new(
            SqlState("54011"),
            format!("tables can have at most {MAX_TABLE_COLUMNS} columns"),
        ));
    }
    Ok(())
}
