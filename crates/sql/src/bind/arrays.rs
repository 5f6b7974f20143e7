//! Array expressions (`types::array`): `ARRAY[...]`, `ARRAY(subquery)`,
//! `x op ANY/ALL (array)`, subscripts and slices, the array operators
//! (`@>`, `<@`, `&&`, `||`), array_agg, `unnest(...)` in FROM and
//! `current_schemas(bool)`.

use ::types::cast::CastContext;
use ::types::ops::BinaryOp;
use ::types::{DataType, TypeId, Value};
use common::{PgError, PgResult, SqlState};
use sqlparser::ast;

use super::{Binder, Scope};
use crate::expr::{AggCall, AggFunc, Expr, SliceShape, SysFunc};

fn comparison_op(op: &ast::BinaryOperator) -> PgResult<BinaryOp> {
    use ast::BinaryOperator as B;
    Ok(match op {
        B::Eq => BinaryOp::Eq,
        B::NotEq => BinaryOp::NotEq,
        B::Lt => BinaryOp::Lt,
        B::LtEq => BinaryOp::LtEq,
        B::Gt => BinaryOp::Gt,
        B::GtEq => BinaryOp::GtEq,
        other => {
            return Err(PgError::unsupported(format!(
                "operator {other} with ANY/ALL is not supported yet"
            )))
        }
    })
}

/// The function behind an array operator, by operand types; None: not an
/// array operator.
pub(super) fn operator_function(
    op: &ast::BinaryOperator,
    l: TypeId,
    r: TypeId,
) -> Option<&'static str> {
    use ast::BinaryOperator as B;
    let (la, ra) = (l.is_array(), r.is_array());
    if !la && !ra {
        return None;
    }
    let unknown = |t: TypeId| t == TypeId::Unknown;
    Some(match op {
        B::AtArrow if (la || unknown(l)) && (ra || unknown(r)) => "arraycontains",
        B::ArrowAt if (la || unknown(l)) && (ra || unknown(r)) => "arraycontained",
        B::PGOverlap if (la || unknown(l)) && (ra || unknown(r)) => "arrayoverlap",
        // Both arrays, or an untyped literal read as the other side's array.
        B::StringConcat if (la && (ra || unknown(r))) || (ra && unknown(l)) => "array_cat",
        B::StringConcat if la => "array_append",
        B::StringConcat => "array_prepend",
        _ => return None,
    })
}

fn not_an_array(ty: TypeId, what: &str) -> PgError {
    PgError::new(
        SqlState::DATATYPE_MISMATCH,
        format!("{what} must yield an array, not type {}", ty.display_name()),
    )
}

impl Binder<'_, '_> {
    /// `ARRAY(subquery)`: the subquery's one column collected into an array.
    pub(super) fn bind_array_subquery(&mut self, q: &ast::Query, scope: &Scope) -> PgResult<Expr> {
        let (plan, cols) = self.bind_subquery(q, scope)?;
        if cols.len() != 1 {
            return Err(PgError::syntax("subquery must return only one column"));
        }
        let elem = match cols[0].ty.id {
            TypeId::Unknown => TypeId::Text,
            t => t,
        };
        if elem.is_array() {
            return Ok(Expr::ArraySubquery(Box::new(plan), elem.into()));
        }
        let array = elem.array_type().ok_or_else(|| {
            PgError::unsupported(format!(
                "arrays of type {} are not supported yet",
                elem.display_name()
            ))
        })?;
        Ok(Expr::ArraySubquery(Box::new(plan), array.into()))
    }

    /// `left op ANY (array)` (`all`: ALL).
    pub(super) fn bind_array_compare(
        &mut self,
        left: &ast::Expr,
        op: &ast::BinaryOperator,
        right: &ast::Expr,
        all: bool,
        scope: &Scope,
    ) -> PgResult<Expr> {
        let op = comparison_op(op)?;
        let mut x = self.bind_expr(left, scope)?;
        // `op ANY (subquery)` compares with the subquery's rows as
        // `op ANY (ARRAY(subquery))` does: the same three-valued result.
        let mut array = match right {
            ast::Expr::Subquery(q) => self.bind_array_subquery(q, scope)?,
            _ => self.bind_expr(right, scope)?,
        };
        if array.type_id() == TypeId::Unknown {
            if x.type_id() == TypeId::Unknown {
                x = self.coerce(x, TypeId::Text.into(), CastContext::Implicit)?;
            }
            let ty = x
                .type_id()
                .array_type()
                .ok_or_else(|| not_an_array(x.type_id(), "op ANY/ALL (array)"))?;
            array = self.coerce(array, ty.into(), CastContext::Implicit)?;
        }
        let elem = array
            .type_id()
            .array_element()
            .ok_or_else(|| not_an_array(array.type_id(), "op ANY/ALL (array)"))?;
        // Resolve the comparison as `x op element` would be.
        let probe = self.bind_binary(op, x, Expr::Const(Value::Null, elem.into()))?;
        let Expr::Binary { left, right, .. } = probe else {
            return Err(PgError::internal("comparison bound to a non-binary"));
        };
        if right.type_id() != elem {
            // The element is promoted (int2 to int4, int4 to numeric ...):
            // the array is cast element-wise to match, as PostgreSQL's
            // cross-type operator or implicit cast resolves it.
            let promoted = right.type_id().array_type().and_then(|t| {
                self.coerce(array.clone(), t.into(), CastContext::Implicit)
                    .ok()
            });
            if let Some(array) = promoted {
                return Ok(Expr::ArrayCompare {
                    expr: left,
                    op,
                    array: Box::new(array),
                    all,
                });
            }
            return Err(PgError::new(
                SqlState::UNDEFINED_FUNCTION,
                format!(
                    "operator does not exist: {} {} {}",
                    left.type_id().display_name(),
                    op.symbol(),
                    elem.display_name()
                ),
            ));
        }
        Ok(Expr::ArrayCompare {
            expr: left,
            op,
            array: Box::new(array),
            all,
        })
    }

    /// `array[i]`, `array[i][j]`, `array[lo:hi]`, `array[:hi]`, ...
    pub(super) fn bind_subscript(
        &mut self,
        root: &ast::Expr,
        chain: &[ast::AccessExpr],
        scope: &Scope,
    ) -> PgResult<Expr> {
        let array = self.bind_expr(root, scope)?;
        let ty = array.data_type();
        let elem = ty.id.array_element().ok_or_else(|| {
            PgError::new(
                SqlState::DATATYPE_MISMATCH,
                format!(
                    "cannot subscript type {} because it does not support subscripting",
                    ty.id.display_name()
                ),
            )
        })?;
        if chain.len() > ::types::array::MAX_DIMS {
            return Err(PgError::new(
                SqlState::PROGRAM_LIMIT_EXCEEDED,
                format!(
                    "number of array dimensions ({}) exceeds the maximum allowed ({})",
                    chain.len(),
                    ::types::array::MAX_DIMS
                ),
            ));
        }
        let mut args = vec![array];
        let mut shape = SliceShape {
            count: chain.len() as u8,
            slices: 0,
            lowers: 0,
            uppers: 0,
        };
        for (i, access) in chain.iter().enumerate() {
            let ast::AccessExpr::Subscript(sub) = access else {
                return Err(PgError::unsupported("field selection on an array"));
            };
            match sub {
                ast::Subscript::Index { index } => {
                    args.push(self.bind_subscript_value(index, scope)?)
                }
                ast::Subscript::Slice {
                    lower_bound,
                    upper_bound,
                    stride: None,
                } => {
                    shape.slices |= 1 << i;
                    if let Some(lo) = lower_bound {
                        shape.lowers |= 1 << i;
                        args.push(self.bind_subscript_value(lo, scope)?);
                    }
                    if let Some(hi) = upper_bound {
                        shape.uppers |= 1 << i;
                        args.push(self.bind_subscript_value(hi, scope)?);
                    }
                }
                ast::Subscript::Slice { .. } => {
                    return Err(PgError::syntax("syntax error at or near \":\""))
                }
            }
        }
        Ok(if shape.slices == 0 {
            Expr::Sys {
                func: SysFunc::ArraySubscript,
                args,
                ty: DataType::with_typmod(elem, ty.typmod),
            }
        } else {
            Expr::Sys {
                func: SysFunc::ArraySlice(shape),
                args,
                ty: DataType::new(ty.id),
            }
        })
    }

    fn bind_subscript_value(&mut self, e: &ast::Expr, scope: &Scope) -> PgResult<Expr> {
        let e = self.bind_expr(e, scope)?;
        if !can_cast_implicit(e.type_id(), TypeId::Int4) {
            return Err(PgError::new(
                SqlState::DATATYPE_MISMATCH,
                "array subscript must have type integer",
            ));
        }
        self.coerce(e, TypeId::Int4.into(), CastContext::Implicit)
    }

    /// `ARRAY[e, ...]` (`elems`; nested `[...]` lists and array-typed
    /// elements add a dimension); `cast` is the type an enclosing cast
    /// asks for, which an empty array needs.
    pub(super) fn bind_array_constructor(
        &mut self,
        elems: &[ast::Expr],
        cast: Option<DataType>,
        scope: &Scope,
    ) -> PgResult<Expr> {
        let mut bound = Vec::with_capacity(elems.len());
        for e in elems {
            bound.push(match e {
                ast::Expr::Array(inner) => self.bind_array_constructor(&inner.elem, cast, scope)?,
                _ => self.bind_expr(e, scope)?,
            });
        }
        if bound.is_empty() {
            return match cast {
                Some(t) if t.id.is_array() => Ok(Expr::Const(
                    Value::array(::types::array::ArrayValue::empty(
                        t.id.array_element().unwrap_or(TypeId::Text),
                    )),
                    t,
                )),
                _ => Err(
                    PgError::new(SqlState("42P18"), "cannot determine type of empty array")
                        .with_hint(
                            "Explicitly cast to the desired type, for example ARRAY[]::integer[].",
                        ),
                ),
            };
        }
        let types: Vec<DataType> = bound.iter().map(Expr::data_type).collect();
        let nested = types.iter().any(|t| t.id.is_array());
        let mut common = self.common_type(&types, "ARRAY")?;
        if types.iter().all(|t| t.id == TypeId::Unknown) {
            // Untyped literals: text, or the cast's element type.
            common = match cast.and_then(|c| c.id.array_element()) {
                Some(e) if !nested => e.into(),
                _ => TypeId::Text.into(),
            };
        }
        let array_ty = if nested {
            if !common.id.is_array() {
                return Err(PgError::new(
                    SqlState::DATATYPE_MISMATCH,
                    "ARRAY could not convert type to an array",
                ));
            }
            common
        } else {
            let Some(t) = common.id.array_type() else {
                return Err(PgError::new(
                    SqlState::UNDEFINED_OBJECT,
                    format!(
                        "could not find array type for data type {}",
                        common.id.display_name()
                    ),
                ));
            };
            DataType::with_typmod(t, common.typmod)
        };
        let want = if nested { array_ty } else { common };
        let args = bound
            .into_iter()
            .map(|e| self.coerce(e, want, CastContext::Implicit))
            .collect::<PgResult<Vec<_>>>()?;
        let func = if nested {
            SysFunc::ArrayConstructNested
        } else {
            SysFunc::ArrayConstruct
        };
        // All-constant elements fold to the array constant.
        if !nested && args.iter().all(|a| matches!(a, Expr::Const(..))) {
            let items = args
                .into_iter()
                .map(|a| match a {
                    Expr::Const(v, _) => v,
                    _ => Value::Null,
                })
                .collect();
            return Ok(Expr::Const(
                Value::array(::types::array::ArrayValue::from_items(common.id, items)),
                array_ty,
            ));
        }
        Ok(Expr::Sys {
            func,
            args,
            ty: array_ty,
        })
    }

    /// `a || b` where a side is an array: array_cat, array_append or
    /// array_prepend (an untyped literal side is read as an array of the
    /// other side's type).
    pub(super) fn bind_array_concat(&mut self, l: Expr, r: Expr) -> PgResult<Expr> {
        let (lt, rt) = (l.type_id(), r.type_id());
        let name = operator_function(&ast::BinaryOperator::StringConcat, lt, rt)
            .ok_or_else(|| ::types::ops::operator_not_exist_error(BinaryOp::Concat, lt, rt))?;
        self.call_builtin_exprs(name, vec![l, r])
    }

    /// array_agg(x): the inputs (NULLs included) as an array; inputs that
    /// are arrays stack into one more dimension.
    pub(super) fn bind_array_agg(&mut self, args: &[Expr], distinct: bool) -> PgResult<Expr> {
        let [arg] = args else {
            return Err(PgError::new(
                SqlState::UNDEFINED_FUNCTION,
                "function array_agg with more than one argument does not exist",
            ));
        };
        if arg.contains_agg() {
            return Err(PgError::new(
                SqlState::GROUPING_ERROR,
                "aggregate function calls cannot be nested",
            ));
        }
        let arg = if arg.type_id() == TypeId::Unknown {
            self.coerce(arg.clone(), TypeId::Text.into(), CastContext::Implicit)?
        } else {
            arg.clone()
        };
        let t = arg.data_type();
        let result = if t.id.is_array() {
            t
        } else {
            let a = t.id.array_type().ok_or_else(|| {
                PgError::new(
                    SqlState::UNDEFINED_FUNCTION,
                    format!("function array_agg({}) does not exist", t.id.display_name()),
                )
            })?;
            DataType::with_typmod(a, t.typmod)
        };
        Ok(Expr::Agg(Box::new(AggCall::new(
            AggFunc::ArrayAgg,
            vec![arg],
            distinct,
            t.id,
            result,
        ))))
    }

    /// current_schemas(include_implicit): the search path's existing
    /// schemas, pg_catalog first when implicit schemas are asked for.
    pub(super) fn current_schemas(&mut self, arg: Expr) -> PgResult<Expr> {
        let arg = self.coerce(arg, TypeId::Bool.into(), CastContext::Implicit)?;
        let implicit = match arg {
            Expr::Const(Value::Bool(b), _) => b,
            Expr::Const(Value::Null, _) => {
                return Ok(Expr::Const(Value::Null, TypeId::NameArray.into()))
            }
            _ => {
                return Err(PgError::unsupported(
                    "current_schemas with a non-constant argument",
                ))
            }
        };
        let mut names: Vec<String> = Vec::new();
        // The session's temporary schema is searched first, and is an
        // implicit schema: listed only with `true` (PostgreSQL's order).
        let temp = |s: &String| catalog::is_temp_schema_name(s);
        if implicit {
            names.extend(self.ctx.search_path.iter().filter(|s| temp(s)).cloned());
        }
        if implicit && !self.ctx.search_path.iter().any(|s| s == "pg_catalog") {
            names.push("pg_catalog".into());
        }
        for s in self.ctx.search_path.iter().filter(|s| !temp(s)) {
            if self
                .ctx
                .catalog
                .namespace_by_name(self.ctx.db_oid, s)
                .is_some()
                && !names.contains(s)
            {
                names.push(s.clone());
            }
        }
        let items = names.into_iter().map(Value::Text).collect();
        Ok(Expr::Const(
            Value::array(::types::array::ArrayValue::from_items(TypeId::Name, items)),
            TypeId::NameArray.into(),
        ))
    }

    /// generate_subscripts(array, dim [, reverse]) as the generate_series
    /// bounds it stands for: array_lower..array_upper (reversed: from the
    /// upper bound down); an empty array or a missing dimension has none.
    pub(super) fn subscript_series(&mut self, args: Vec<Expr>) -> PgResult<Vec<Expr>> {
        let n = args.len();
        let mut args = args.into_iter();
        let (Some(array), Some(dim)) = (args.next(), args.next()) else {
            return Err(PgError::new(
                SqlState::UNDEFINED_FUNCTION,
                format!("function generate_subscripts with {n} arguments does not exist"),
            ));
        };
        let reverse = match args.next() {
            None => false,
            Some(Expr::Const(Value::Bool(b), _)) => b,
            Some(_) => {
                return Err(PgError::unsupported(
                    "generate_subscripts with a non-constant reverse flag",
                ))
            }
        };
        if args.next().is_some() {
            return Err(PgError::new(
                SqlState::UNDEFINED_FUNCTION,
                "function generate_subscripts with 4 arguments does not exist",
            ));
        }
        let lower = self.call_builtin_exprs("array_lower", vec![array.clone(), dim.clone()])?;
        let upper = self.call_builtin_exprs("array_upper", vec![array, dim])?;
        Ok(if reverse {
            vec![
                upper,
                lower,
                Expr::Const(Value::Int4(-1), TypeId::Int4.into()),
            ]
        } else {
            vec![lower, upper]
        })
    }
}

fn can_cast_implicit(from: TypeId, to: TypeId) -> bool {
    ::types::cast::can_cast(from, to, CastContext::Implicit)
}
