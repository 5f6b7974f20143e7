//! SQL front end: statement splitting and parsing (`sqlparser` plus a small
//! pre-parser for PostgreSQL utility commands), binding names and types
//! against the catalog, and planning into the operator tree `exec` runs.

pub mod bind;
pub mod copy;
mod cte_search;
pub mod cursor;
pub mod describe;
pub mod do_block;
pub mod domain_stmt;
pub mod expr;
#[cfg(any(test, feature = "fuzzing"))]
pub mod fuzz;
mod group_by;
mod locking;
pub mod parallel_safety;
pub mod parse;
pub mod parse_cache;
pub mod partition;
pub mod plan;
pub mod plpgsql;
pub mod reg;
pub mod role;
mod seqopts;
pub mod srf;
mod tokens;
pub mod transaction;
pub mod trigger_stmt;
mod unicode_ident;
pub mod vacuum;
mod variadic;
pub mod viewdef;
pub mod window;

pub use bind::{bind_statement, BindContext, SystemViewDesc, SystemViews};
pub use expr::{AggCall, AggFunc, Expr, SysFunc};
pub use parse::{parse_statement, split_statements, ParsedStatement};
pub use plan::{BoundStatement, Plan, SetOpKind};
