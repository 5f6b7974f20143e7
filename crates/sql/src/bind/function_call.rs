//! Binding of function calls: built-in functions, user-defined ones
//! (overloads, defaults) and the special forms sqlparser reads as calls.

use common::{PgError, PgResult, SqlState};
use sqlparser::ast;
use types::cast::CastContext;
use types::ops::BinaryOp;
use types::{DataType, TypeId, Value};

use super::{object_name_parts, Binder, Scope};
use crate::expr::{Expr, SysFunc};

impl Binder<'_, '_> {
    /// The call without its FILTER and ORDER BY clauses.
    pub(super) fn bind_function_call(
        &mut self,
        f: &ast::Function,
        scope: &Scope,
    ) -> PgResult<Expr> {
        if super::grouping_sets::is_grouping_call(f) && f.over.is_none() {
            return self.bind_grouping(f, scope);
        }
        let parts = object_name_parts(&f.name)?;
        let name = parts.last().unwrap().as_str();
        let variadic = super::variadic::has_variadic_arg(f)?;
        if name.starts_with('\u{1}') {
            let (args, _, _) = self.function_args(f, scope)?;
            if let Some(call) = self.bind_search_function(name, args)? {
                return Ok(call);
            }
        }
        if f.over.is_none() && self.has_user_function(&parts) {
            let (args, _, _) = self.function_args(f, scope)?;
            if let Some(call) = self.bind_user_function_call(&parts, args, variadic)? {
                return Ok(call);
            }
        }
        if parts.len() > 1 && parts[0] != "pg_catalog" {
            return Err(PgError::new(
                SqlState::UNDEFINED_FUNCTION,
                format!("function {} does not exist", parts.join(".")),
            ));
        }
        if f.over.is_some() {
            return self.bind_window_call(f, name, scope);
        }
        if super::srf::is_srf_name(name) {
            return self.bind_srf_expr(f, name, scope);
        }
        if let (true, ast::FunctionArguments::Subquery(q)) = (name == "array", &f.args) {
            return self.bind_array_subquery(q, scope);
        }
        let (args, distinct, star) = self.function_args(f, scope)?;
        if variadic {
            if let Some(call) = self.bind_variadic_builtin(name, &args)? {
                return Ok(call);
            }
        }
        if let Some(call) = self.bind_stored_form(name, &args, scope)? {
            return Ok(call);
        }
        if super::aggregates::is_aggregate_name(name) && args.iter().any(Expr::contains_window) {
            return Err(super::window::window_in_aggregate());
        }
        if super::aggregates::is_aggregate_name(name) && args.iter().any(Expr::contains_srf) {
            return Err(super::srf::srf_in_aggregate());
        }
        if let Some(agg) = self.bind_json_aggregate(name, &args, distinct, star)? {
            return Ok(agg);
        }
        if name == "array_agg" && !star {
            return self.bind_array_agg(&args, distinct);
        }
        if let Some(call) = self.bind_json_builder(name, &args)? {
            return Ok(call);
        }
        if let Some(call) = super::user_types::bind_enum_function(name, &args)? {
            return Ok(call);
        }
        if let Some(agg) = self.bind_aggregate(name, args.clone(), distinct, star)? {
            return Ok(agg);
        }
        let tyname = |t: &DataType| t.id;
        let text = |s: String| Expr::Const(Value::Text(s), TypeId::Text.into());
        match (name, args.len()) {
            ("coalesce", n) if n > 0 => {
                if args.iter().any(Expr::contains_srf) {
                    return Err(super::srf::srf_in_conditional("COALESCE"));
                }
                let ty = self.common_type(&args.iter().map(Expr::data_type).collect::<Vec<_>>(), "COALESCE")?;
                let args = args.into_iter().map(|a| self.coerce(a, ty, CastContext::Implicit)).collect::<PgResult<_>>()?;
                return Ok(Expr::Coalesce(args, ty));
            }
            ("nullif", 2) => {
                let mut it = args.into_iter();
                let (a, b) = (it.next().unwrap(), it.next().unwrap());
                let Expr::Binary { left, right, .. } = self.bind_binary(BinaryOp::Eq, a, b)? else { unreachable!() };
                let ty = left.data_type();
                return Ok(Expr::NullIf(left, right, ty));
            }
            ("greatest" | "least", n) if n > 0 => {
                let ty = self.common_type(&args.iter().map(Expr::data_type).collect::<Vec<_>>(), name)?;
                let args = args.into_iter().map(|a| self.coerce(a, ty, CastContext::Implicit)).collect::<PgResult<_>>()?;
                return Ok(Expr::MinMax { args, greatest: name == "greatest", ty });
            }
            ("version", 0) => {
                return Ok(text(format!(
                    "PostgreSQL {} (Scalegres {}) on x86_64-pc-linux-gnu, compiled by rustc, 64-bit",
                    self.ctx.server_version,
                    env!("CARGO_PKG_VERSION")
                )))
            }
            // The server encoding is always UTF8.
            ("getdatabaseencoding", 0) => return Ok(Expr::Const(Value::Text("UTF8".into()), TypeId::Name.into())),
            // The setting holds the encoding's canonical name.
            ("pg_client_encoding", 0) => {
                return Ok(Expr::Sys {
                    func: SysFunc::CurrentSetting,
                    args: vec![Expr::Const(Value::Text("client_encoding".into()), TypeId::Text.into())],
                    ty: TypeId::Name.into(),
                })
            }
            // The argument's type is known when binding. (PostgreSQL also
            // evaluates the argument, which only a volatile one would show.)
            ("pg_typeof", 1) => {
                let ty = args[0].data_type().id;
                return Ok(Expr::Const(Value::Oid(ty.oid()), TypeId::RegType.into()));
            }
            ("current_database", 0) => return Ok(Expr::Const(Value::Text(self.ctx.db_name.into()), TypeId::Name.into())),
            ("current_user", 0) => return Ok(Expr::Const(Value::Text(self.ctx.user.into()), TypeId::Name.into())),
            ("session_user", 0) => return Ok(Expr::Const(Value::Text(self.ctx.session_user.into()), TypeId::Name.into())),
            ("current_schema", 0) => return self.current_schema(),
            ("current_schemas", 1) => return self.current_schemas(args.into_iter().next().unwrap()),
            ("pg_my_temp_schema", 0) => return Ok(self.my_temp_schema()),
            (f, _) if types::json::ops::JsonSrf::from_name(f).is_some() => {
                return Err(PgError::unsupported(format!(
                    "{f} is only supported in FROM (as a set-returning function)"
                )))
            }
            ("generate_series", _) => {
                return Err(PgError::unsupported("set-returning functions are only supported at the top level of a select list or in FROM"))
            }
            _ => {}
        }
        let sys = |func: SysFunc, want: &[TypeId], ret: TypeId| (func, want.to_vec(), ret);
        let spec = match name {
            "current_setting" => Some(sys(
                SysFunc::CurrentSetting,
                &[TypeId::Text, TypeId::Bool],
                TypeId::Text,
            )),
            "set_config" => Some(sys(
                SysFunc::SetConfig,
                &[TypeId::Text, TypeId::Text, TypeId::Bool],
                TypeId::Text,
            )),
            "nextval" => Some(sys(SysFunc::NextVal, &[TypeId::RegClass], TypeId::Int8)),
            "currval" => Some(sys(SysFunc::CurrVal, &[TypeId::RegClass], TypeId::Int8)),
            "setval" => Some(sys(
                SysFunc::SetVal,
                &[TypeId::RegClass, TypeId::Int8, TypeId::Bool],
                TypeId::Int8,
            )),
            "lastval" => Some(sys(SysFunc::LastVal, &[], TypeId::Int8)),
            "pg_get_serial_sequence" => Some(sys(
                SysFunc::GetSerialSequence,
                &[TypeId::Text, TypeId::Text],
                TypeId::Text,
            )),
            "pg_relation_size" => Some(sys(
                SysFunc::RelationSize,
                &[TypeId::RegClass, TypeId::Text],
                TypeId::Int8,
            )),
            "pg_total_relation_size" => Some(sys(
                SysFunc::TotalRelationSize,
                &[TypeId::RegClass],
                TypeId::Int8,
            )),
            "pg_table_size" => Some(sys(SysFunc::TableSize, &[TypeId::RegClass], TypeId::Int8)),
            "pg_indexes_size" => Some(sys(SysFunc::IndexesSize, &[TypeId::RegClass], TypeId::Int8)),
            "pg_relation_filepath" => Some(sys(
                SysFunc::RelationFilepath,
                &[TypeId::RegClass],
                TypeId::Text,
            )),
            "pg_relation_filenode" => Some(sys(
                SysFunc::RelationFilenode,
                &[TypeId::RegClass],
                TypeId::Oid,
            )),
            "pg_backend_pid" => Some(sys(SysFunc::BackendPid, &[], TypeId::Int4)),
            "pg_reload_conf" => Some(sys(SysFunc::ReloadConf, &[], TypeId::Bool)),
            "pg_cancel_backend" => Some(sys(SysFunc::CancelBackend, &[TypeId::Int4], TypeId::Bool)),
            "pg_terminate_backend" => Some(sys(
                SysFunc::TerminateBackend,
                &[TypeId::Int4],
                TypeId::Bool,
            )),
            // pg_lsn values are text until the type exists.
            "pg_current_wal_lsn" => Some(sys(SysFunc::CurrentWalLsn, &[], TypeId::Text)),
            "pg_current_wal_insert_lsn" => {
                Some(sys(SysFunc::CurrentWalInsertLsn, &[], TypeId::Text))
            }
            "pg_current_wal_flush_lsn" => Some(sys(SysFunc::CurrentWalFlushLsn, &[], TypeId::Text)),
            "pg_walfile_name" => Some(sys(SysFunc::WalfileName, &[TypeId::Text], TypeId::Text)),
            "pg_table_is_visible" => {
                Some(sys(SysFunc::TableIsVisible, &[TypeId::Oid], TypeId::Bool))
            }
            "pg_type_is_visible" => Some(sys(SysFunc::TypeIsVisible, &[TypeId::Oid], TypeId::Bool)),
            "pg_function_is_visible" => Some(sys(
                SysFunc::FunctionIsVisible,
                &[TypeId::Oid],
                TypeId::Bool,
            )),
            "pg_relation_is_publishable" => Some(sys(
                SysFunc::RelationIsPublishable,
                &[TypeId::RegClass],
                TypeId::Bool,
            )),
            "to_regclass" | "to_regtype" | "to_regproc" | "to_regprocedure" | "to_regnamespace"
            | "to_regrole" => {
                let ty = super::types::parse_type_name(&format!("reg{}", &name[6..]))?.id;
                Some(sys(SysFunc::ToReg(ty), &[TypeId::Text], ty))
            }
            "format_type" => Some(sys(
                SysFunc::FormatType,
                &[TypeId::Oid, TypeId::Int4],
                TypeId::Text,
            )),
            "pg_isolation_test_session_is_blocked" => Some(sys(
                SysFunc::IsolationTestSessionIsBlocked,
                &[TypeId::Int4, TypeId::Int4Array],
                TypeId::Bool,
            )),
            "pg_sleep" => Some(sys(SysFunc::PgSleep, &[TypeId::Float8], TypeId::Void)),
            "pg_notify" => Some(sys(
                SysFunc::Notify,
                &[TypeId::Text, TypeId::Text],
                TypeId::Void,
            )),
            "pg_notification_queue_usage" => {
                Some(sys(SysFunc::NotificationQueueUsage, &[], TypeId::Float8))
            }
            "pg_advisory_unlock_all" => Some(sys(SysFunc::AdvisoryUnlockAll, &[], TypeId::Void)),
            "pg_blocking_pids" => Some(sys(
                SysFunc::BlockingPids,
                &[TypeId::Int4],
                TypeId::Int4Array,
            )),
            _ if crate::expr::AdvisoryCall::from_name(name).is_some() => {
                let call = crate::expr::AdvisoryCall::from_name(name).expect("checked");
                let keys: &[TypeId] = if args.len() == 2 {
                    &[TypeId::Int4, TypeId::Int4]
                } else {
                    &[TypeId::Int8]
                };
                let ret = match (call.op, call.xact) {
                    (crate::expr::AdvisoryOp::Lock, _) => TypeId::Void,
                    _ => TypeId::Bool,
                };
                Some(sys(SysFunc::Advisory(call), keys, ret))
            }
            "pg_stat_lwlock_reset" => Some(sys(SysFunc::StatLwlockReset, &[], TypeId::Void)),
            "pg_get_userbyid" => Some(sys(SysFunc::GetUserById, &[TypeId::Oid], TypeId::Name)),
            "pg_get_indexdef" => Some(sys(
                SysFunc::GetIndexdef,
                &[TypeId::Oid, TypeId::Int4, TypeId::Bool],
                TypeId::Text,
            )),
            "pg_get_constraintdef" => Some(sys(
                SysFunc::GetConstraintdef,
                &[TypeId::Oid, TypeId::Bool],
                TypeId::Text,
            )),
            "pg_get_partition_constraintdef" => Some(sys(
                SysFunc::GetPartitionConstraintdef,
                &[TypeId::Oid],
                TypeId::Text,
            )),
            "pg_get_partkeydef" => Some(sys(SysFunc::GetPartkeydef, &[TypeId::Oid], TypeId::Text)),
            "pg_get_triggerdef" => Some(sys(
                SysFunc::GetTriggerdef,
                &[TypeId::Oid, TypeId::Bool],
                TypeId::Text,
            )),
            "bt_index_check" => Some(sys(
                SysFunc::BtIndexCheck(false),
                &[TypeId::RegClass, TypeId::Bool],
                TypeId::Void,
            )),
            "bt_index_parent_check" => Some(sys(
                SysFunc::BtIndexCheck(true),
                &[TypeId::RegClass, TypeId::Bool, TypeId::Bool],
                TypeId::Void,
            )),
            "obj_description" => Some(sys(
                SysFunc::ObjDescription,
                &[TypeId::Oid, TypeId::Name],
                TypeId::Text,
            )),
            "col_description" => Some(sys(
                SysFunc::ColDescription,
                &[TypeId::Oid, TypeId::Int4],
                TypeId::Text,
            )),
            "shobj_description" => Some(sys(
                SysFunc::ShobjDescription,
                &[TypeId::Oid, TypeId::Name],
                TypeId::Text,
            )),
            "pg_get_ruledef" => Some(sys(
                SysFunc::GetRuledef,
                &[TypeId::Oid, TypeId::Bool],
                TypeId::Text,
            )),
            // An untyped literal resolves to the text variant, as in
            // PostgreSQL (string category preferred).
            "pg_get_viewdef" => Some(match args.first().map(Expr::type_id) {
                Some(TypeId::Text | TypeId::Unknown | TypeId::Varchar | TypeId::Name) => sys(
                    SysFunc::GetViewdefByName,
                    &[TypeId::Text, TypeId::Bool],
                    TypeId::Text,
                ),
                _ => sys(
                    SysFunc::GetViewdef,
                    &[TypeId::Oid, TypeId::Bool],
                    TypeId::Text,
                ),
            }),
            "pg_prewarm" => Some(sys(
                SysFunc::Prewarm,
                &[
                    TypeId::RegClass,
                    TypeId::Text,
                    TypeId::Text,
                    TypeId::Int8,
                    TypeId::Int8,
                ],
                TypeId::Int8,
            )),
            _ => None,
        };
        if let Some((func, want, ret)) = spec {
            let min = match func {
                SysFunc::CurrentSetting
                | SysFunc::RelationSize
                | SysFunc::Prewarm
                | SysFunc::ObjDescription
                | SysFunc::GetViewdef
                | SysFunc::GetIndexdef
                | SysFunc::GetConstraintdef
                | SysFunc::GetTriggerdef
                | SysFunc::BtIndexCheck(_)
                | SysFunc::GetViewdefByName
                | SysFunc::GetRuledef => 1,
                SysFunc::SetVal => 2,
                _ => want.len(),
            };
            if args.len() < min || args.len() > want.len() {
                let types: Vec<&str> = args
                    .iter()
                    .map(|a| tyname(&a.data_type()).display_name())
                    .collect();
                return Err(PgError::new(
                    SqlState::UNDEFINED_FUNCTION,
                    format!("function {name}({}) does not exist", types.join(", ")),
                )
                .with_hint("No function matches the given name and argument types. You might need to add explicit type casts."));
            }
            let mut bound = Vec::new();
            for (a, t) in args.into_iter().zip(want) {
                let t = if t == TypeId::RegClass && a.type_id() == TypeId::Oid {
                    TypeId::Oid
                } else {
                    t
                };
                bound.push(self.coerce(a, t.into(), CastContext::Implicit)?);
            }
            return Ok(Expr::Sys {
                func,
                args: bound,
                ty: ret.into(),
            });
        }
        self.call_builtin_exprs(name, args)
    }
}
