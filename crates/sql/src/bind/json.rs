//! json and jsonb in the binder: their operators (bound to the functions
//! behind them), the builders and aggregates that take any type (each
//! argument converted with to_json / to_jsonb of its type).

use common::{PgError, PgResult, SqlState};
use sqlparser::ast;
use types::cast::CastContext;
use types::TypeId;

use super::Binder;
use crate::expr::{AggCall, AggFunc, Expr};

/// The function behind a json/jsonb operator (pg_operator.oprcode), chosen
/// by the operator and the operand types; None: not a json operator.
pub(super) fn operator_function(
    op: &ast::BinaryOperator,
    l: TypeId,
    r: TypeId,
) -> Option<&'static str> {
    use ast::BinaryOperator as B;
    let json = l == TypeId::Json;
    if !(json || l == TypeId::Jsonb || (r == TypeId::Jsonb && l == TypeId::Unknown)) {
        return None;
    }
    let int_key = r.is_integer();
    Some(match (op, json) {
        (B::Arrow, true) if int_key => "json_array_element",
        (B::Arrow, true) => "json_object_field",
        (B::LongArrow, true) if int_key => "json_array_element_text",
        (B::LongArrow, true) => "json_object_field_text",
        (B::HashArrow, true) => "json_extract_path_op",
        (B::HashLongArrow, true) => "json_extract_path_text_op",
        (B::Arrow, false) if int_key => "jsonb_array_element",
        (B::Arrow, false) => "jsonb_object_field",
        (B::LongArrow, false) if int_key => "jsonb_array_element_text",
        (B::LongArrow, false) => "jsonb_object_field_text",
        (B::HashArrow, false) => "jsonb_extract_path_op",
        (B::HashLongArrow, false) => "jsonb_extract_path_text_op",
        (B::AtArrow, false) => "jsonb_contains",
        (B::ArrowAt, false) => "jsonb_contained",
        (B::Question, false) => "jsonb_exists",
        (B::QuestionPipe, false) => "jsonb_exists_any",
        (B::QuestionAnd, false) => "jsonb_exists_all",
        (B::HashMinus, false) => "jsonb_delete_path",
        (B::Minus, false) if l == TypeId::Jsonb => "jsonb_delete",
        // jsonb || jsonb; jsonb || text stays text concatenation.
        (B::StringConcat, false) if matches!(r, TypeId::Jsonb | TypeId::Unknown) => "jsonb_concat",
        _ => return None,
    })
}

impl Binder<'_, '_> {
    /// `e` as json (or jsonb): to_json / to_jsonb of its type; an untyped
    /// literal is text, a type without its own conversion goes by its text.
    pub(super) fn json_arg(&mut self, e: Expr, jsonb: bool) -> PgResult<Expr> {
        let conv = if jsonb { "to_jsonb" } else { "to_json" };
        let e = if e.type_id() == TypeId::Unknown {
            self.coerce(e, TypeId::Text.into(), CastContext::Implicit)?
        } else {
            e
        };
        let t = e.type_id();
        let has_own =
            types::functions::builtins().any(|f| f.name == conv && f.arg_types.first() == Some(&t));
        let e = if has_own || matches!(t, TypeId::Varchar | TypeId::Bpchar | TypeId::Name) {
            e
        } else {
            self.coerce(e, TypeId::Text.into(), CastContext::Explicit)?
        };
        self.call_builtin_exprs(conv, vec![e])
    }

    /// to_json, to_jsonb and the json builders, which take `"any"`.
    pub(super) fn bind_json_builder(
        &mut self,
        name: &str,
        args: &[Expr],
    ) -> PgResult<Option<Expr>> {
        let jsonb = match name {
            "to_jsonb" | "jsonb_build_object" | "jsonb_build_array" => true,
            "to_json" | "json_build_object" | "json_build_array" => false,
            _ => return Ok(None),
        };
        if name.starts_with("to_json") {
            if let [a] = args {
                if a.type_id() == TypeId::Unknown {
                    return Err(PgError::new(
                        SqlState::DATATYPE_MISMATCH,
                        "could not determine polymorphic type because input has type unknown",
                    ));
                }
                return self.json_arg(a.clone(), jsonb).map(Some);
            }
            return Ok(None);
        }
        let wrapped = args
            .iter()
            .map(|a| self.json_arg(a.clone(), jsonb))
            .collect::<PgResult<Vec<_>>>()?;
        self.call_builtin_exprs(name, wrapped).map(Some)
    }

    /// json_agg, jsonb_agg, json_object_agg, jsonb_object_agg.
    pub(super) fn bind_json_aggregate(
        &mut self,
        name: &str,
        args: &[Expr],
        distinct: bool,
        star: bool,
    ) -> PgResult<Option<Expr>> {
        let (func, jsonb) = match (name, args.len(), star) {
            ("jsonb_agg", 1, false) => (AggFunc::JsonbAgg, true),
            ("json_agg", 1, false) => (AggFunc::JsonAgg, false),
            ("jsonb_object_agg", 2, false) => (AggFunc::JsonbObjectAgg, true),
            ("json_object_agg", 2, false) => (AggFunc::JsonObjectAgg, false),
            _ => return Ok(None),
        };
        if args.iter().any(Expr::contains_agg) {
            return Err(PgError::new(
                SqlState::GROUPING_ERROR,
                "aggregate function calls cannot be nested",
            ));
        }
        let args = args
            .iter()
            .map(|a| self.json_arg(a.clone(), jsonb))
            .collect::<PgResult<Vec<_>>>()?;
        let ty = if jsonb { TypeId::Jsonb } else { TypeId::Json };
        Ok(Some(Expr::Agg(Box::new(AggCall::new(
            func,
            args,
            distinct,
            ty,
            ty.into(),
        )))))
    }
}
