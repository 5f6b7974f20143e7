//! CREATE TRIGGER, DROP TRIGGER and ALTER TABLE ... ENABLE/DISABLE
//! TRIGGER (`crate::trigger_stmt`), checked as PostgreSQL's CreateTrigger
//! does: the table, the function (no arguments, returning trigger), UPDATE
//! OF's columns and what WHEN may reference.

use std::sync::Arc;

use ::types::TypeId;
use catalog::triggers::{
    Trigger, TRIGGER_TYPE_BEFORE, TRIGGER_TYPE_DELETE, TRIGGER_TYPE_INSERT, TRIGGER_TYPE_OID,
    TRIGGER_TYPE_ROW, TRIGGER_TYPE_TRUNCATE,
};
use catalog::Table;
use common::{PgError, PgResult, SqlState};

use super::{undefined_table, BindContext, Binder, Relation};
use crate::plan::BoundStatement;
use crate::trigger_stmt::{CreateTrigger, TriggerSelector, TriggerStatement};

fn invalid_object(msg: impl Into<String>) -> PgError {
    PgError::new(SqlState("42P17"), msg)
}

/// The parameters a WHEN condition (and a trigger's row) is bound with:
/// `old.c` for each column, then `new.c`.
pub fn when_parameters(table: &Table) -> (Vec<String>, Vec<Option<TypeId>>) {
    let mut names = Vec::new();
    let mut types = Vec::new();
    for prefix in ["old", "new"] {
        for c in &table.columns {
            names.push(format!("{prefix}.{}", c.name));
            types.push(Some(c.data_type().id));
        }
    }
    (names, types)
}

/// Whether SQL text names `old.` / `new.` (`which`) anywhere.
fn references(text: &str, which: &str) -> bool {
    let Ok(toks) =
        sqlparser::tokenizer::Tokenizer::new(&sqlparser::dialect::PostgreSqlDialect {}, text)
            .tokenize()
    else {
        return false;
    };
    let solid: Vec<_> = toks
        .iter()
        .filter(|t| !matches!(t, sqlparser::tokenizer::Token::Whitespace(_)))
        .collect();
    solid.windows(2).any(|w| {
        matches!(w[0], sqlparser::tokenizer::Token::Word(x) if x.quote_style.is_none() && x.value.eq_ignore_ascii_case(which))
            && matches!(w[1], sqlparser::tokenizer::Token::Period)
    })
}

/// Binds `SELECT (when)` with the row parameters of `table`.
pub fn bind_when(ctx: &BindContext<'_>, table: &Table, when: &str) -> PgResult<BoundStatement> {
    let (names, types) = when_parameters(table);
    let mut inner = BindContext {
        catalog: ctx.catalog,
        db_oid: ctx.db_oid,
        db_name: ctx.db_name,
        user: ctx.user,
        session_user: ctx.session_user,
        search_path: ctx.search_path.clone(),
        temp_namespace: ctx.temp_namespace,
        param_types: types,
        server_version: ctx.server_version,
        io: ctx.io,
        system_views: ctx.system_views,
        param_names: names,
    };
    let text = format!("SELECT ({when})::boolean");
    let parsed = crate::parse::parse_statement(
        &text,
        &crate::parse::StatementText {
            text: &text,
            offset: 0,
        },
    )?;
    crate::bind_statement(&mut inner, &parsed)
}

impl Binder<'_, '_> {
    pub(super) fn bind_trigger_statement(
        &mut self,
        stmt: &TriggerStatement,
    ) -> PgResult<BoundStatement> {
        match stmt {
            TriggerStatement::Create(c) => self.bind_create_trigger(c),
            TriggerStatement::Drop {
                name,
                table,
                if_exists,
                cascade: _,
            } => {
                let Some(t) = self.lookup_table(table)? else {
                    if *if_exists {
                        return Ok(BoundStatement::DropTrigger {
                            trigger: None,
                            missing: Some(format!(
                                "relation \"{}\" does not exist, skipping",
                                table.join(".")
                            )),
                        });
                    }
                    return Err(undefined_table(&table.join(".")));
                };
                match self.ctx.catalog.trigger_named(t.oid, name) {
                    Some(tr) => Ok(BoundStatement::DropTrigger {
                        trigger: Some(tr.clone()),
                        missing: None,
                    }),
                    None if *if_exists => Ok(BoundStatement::DropTrigger {
                        trigger: None,
                        missing: Some(format!(
                            "trigger \"{name}\" for relation \"{}\" does not exist, skipping",
                            t.name
                        )),
                    }),
                    None => Err(missing_trigger(name, &t.name)),
                }
            }
            TriggerStatement::SetEnabled {
                table,
                if_exists,
                which,
                enabled,
            } => {
                let Some(t) = self.lookup_table(table)? else {
                    if *if_exists {
                        return Ok(BoundStatement::SetTriggersEnabled {
                            triggers: Vec::new(),
                            enabled: *enabled,
                        });
                    }
                    return Err(undefined_table(&table.join(".")));
                };
                let triggers = match which {
                    TriggerSelector::Named(n) => vec![self
                        .ctx
                        .catalog
                        .trigger_named(t.oid, n)
                        .cloned()
                        .ok_or_else(|| missing_trigger(n, &t.name))?],
                    // Every trigger here is a user trigger (foreign keys
                    // are not triggers).
                    TriggerSelector::All | TriggerSelector::User => {
                        self.ctx.catalog.triggers_of(t.oid)
                    }
                };
                Ok(BoundStatement::SetTriggersEnabled {
                    triggers,
                    enabled: *enabled,
                })
            }
        }
    }

    fn bind_create_trigger(&mut self, c: &CreateTrigger) -> PgResult<BoundStatement> {
        let table: Arc<Table> = match self.lookup_relation(&c.table)? {
            Some(Relation::Table(t)) => t,
            Some(Relation::View(_)) => {
                return Err(PgError::new(
                    SqlState::WRONG_OBJECT_TYPE,
                    format!("\"{}\" is a view", c.table.join(".")),
                )
                .with_detail("Views cannot have row-level BEFORE or AFTER triggers."))
            }
            None => return Err(undefined_table(&c.table.join("."))),
        };
        if c.row && c.events & TRIGGER_TYPE_TRUNCATE != 0 {
            return Err(PgError::new(
                SqlState::FEATURE_NOT_SUPPORTED,
                "TRUNCATE FOR EACH ROW triggers are not supported",
            ));
        }
        let mut columns = Vec::new();
        for name in &c.update_columns {
            let Some(i) = table.columns.iter().position(|col| &col.name == name) else {
                return Err(PgError::new(
                    SqlState::UNDEFINED_COLUMN,
                    format!(
                        "column \"{name}\" of relation \"{}\" does not exist",
                        table.name
                    ),
                ));
            };
            let attnum = i as i16 + 1;
            if columns.contains(&attnum) {
                return Err(PgError::new(
                    SqlState::DUPLICATE_COLUMN,
                    format!("column \"{name}\" specified more than once"),
                ));
            }
            columns.push(attnum);
        }
        if let Some(when) = &c.when {
            let (old, new) = (references(when, "old"), references(when, "new"));
            if !c.row && (old || new) {
                return Err(invalid_object(
                    "statement trigger's WHEN condition cannot reference column values",
                ));
            }
            if c.events & TRIGGER_TYPE_INSERT != 0 && old {
                return Err(invalid_object(
                    "INSERT trigger's WHEN condition cannot reference OLD values",
                ));
            }
            if c.events & TRIGGER_TYPE_DELETE != 0 && new {
                return Err(invalid_object(
                    "DELETE trigger's WHEN condition cannot reference NEW values",
                ));
            }
            let bound = bind_when(self.ctx, &table, when)?;
            if bound.columns().map_or(0, <[_]>::len) != 1 {
                return Err(PgError::syntax("WHEN condition must be one expression"));
            }
        }
        let function = self.trigger_function(&c.function)?;
        let mut tgtype = c.events;
        if c.row {
            tgtype |= TRIGGER_TYPE_ROW;
        }
        if c.before {
            tgtype |= TRIGGER_TYPE_BEFORE;
        }
        Ok(BoundStatement::CreateTrigger {
            trigger: Trigger {
                oid: 0,
                table: table.oid,
                name: c.name.clone(),
                function,
                tgtype,
                enabled: 'O',
                columns,
                args: c.args.clone(),
                when: c.when.clone(),
            },
            replace: c.replace,
        })
    }

    /// The function `parts()` (no arguments), which must return trigger.
    fn trigger_function(&self, parts: &[String]) -> PgResult<common::Oid> {
        let shown = parts.join(".");
        let found = self
            .user_functions_named(parts)?
            .into_iter()
            .find(|f| f.arg_types.is_empty());
        let Some(f) = found else {
            return Err(PgError::new(
                SqlState::UNDEFINED_FUNCTION,
                format!("function {shown}() does not exist"),
            ));
        };
        if f.return_type != TRIGGER_TYPE_OID {
            return Err(invalid_object(format!(
                "function {shown} must return type trigger"
            )));
        }
        Ok(f.oid)
    }
}

fn missing_trigger(name: &str, table: &str) -> PgError {
    PgError::new(
        SqlState::UNDEFINED_OBJECT,
        format!("trigger \"{name}\" for table \"{table}\" does not exist"),
    )
}
