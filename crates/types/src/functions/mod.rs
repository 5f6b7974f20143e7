//! Built-in scalar functions (string, math, date/time), resolved by name and
//! argument types as PostgreSQL's function lookup does.
//!
//! Declared argument types follow pg_proc. A few functions take PostgreSQL's
//! `"any"` (see [`accepts_any`]): `concat` and `concat_ws` accept arguments of
//! every type in their variadic part; the caller casts them to the declared
//! `text` (any type casts to text).

mod binary;
mod catalog;
mod datetime;
mod datetime_extra;
mod format;
mod interval;
pub mod json;
mod math;
mod math_extra;
mod network;
mod regexp;
mod string;
#[cfg(test)]
mod tests;
mod to_char;

pub use catalog::ident_needs_quotes;
pub use regexp::{regexp_matches, regexp_split_to_table};

use crate::cast::{can_cast, CastContext};
use crate::TypeId;
use crate::{IoSettings, Value};
use common::{PgError, PgResult, SqlState};

/// A built-in's implementation; its args are non-null if `strict`.
#[derive(Clone, Copy)]
pub enum BuiltinImpl {
    /// Depends on its arguments alone.
    Pure(fn(&[Value]) -> PgResult<Value>),
    /// Also on the session's settings (TimeZone): PostgreSQL's stable
    /// functions over timestamptz, and output functions of any type.
    Session(fn(&[Value], &IoSettings) -> PgResult<Value>),
}

pub struct BuiltinFunction {
    pub name: &'static str,
    /// Declared argument types; the caller casts actual arguments to these.
    pub arg_types: &'static [TypeId],
    /// If set, the last arg type repeats for any number of extra arguments.
    pub variadic: bool,
    pub ret: TypeId,
    /// Returns NULL (without calling `imp`) when any argument is NULL.
    pub strict: bool,
    /// Result may change within a statement (random(), clock_timestamp()).
    pub volatile: bool,
    pub imp: BuiltinImpl,
}

impl BuiltinFunction {
    /// Declared type of argument `i` (variadic functions repeat the last one).
    pub fn arg_type(&self, i: usize) -> Option<TypeId> {
        match self.arg_types.get(i) {
            Some(t) => Some(*t),
            None if self.variadic => self.arg_types.last().copied(),
            None => None,
        }
    }

    /// Whether the function takes `n` arguments.
    pub fn accepts_arity(&self, n: usize) -> bool {
        if self.variadic {
            n >= self.arg_types.len()
        } else {
            n == self.arg_types.len()
        }
    }

    /// Calls the function, honouring `strict` (NULL in, NULL out).
    pub fn call(&self, args: &[Value], io: &IoSettings) -> PgResult<Value> {
        if self.strict && args.iter().any(Value::is_null) {
            return Ok(Value::Null);
        }
        self.invoke(args, io)
    }

    /// Calls the implementation; the caller has applied `strict`.
    #[inline]
    pub fn invoke(&self, args: &[Value], io: &IoSettings) -> PgResult<Value> {
        match self.imp {
            BuiltinImpl::Pure(f) => f(args),
            BuiltinImpl::Session(f) => f(args, io),
        }
    }
}

impl std::fmt::Debug for BuiltinFunction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}(", self.name)?;
        for (i, t) in self.arg_types.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            f.write_str(t.name())?;
        }
        if self.variadic {
            f.write_str(", ...")?;
        }
        write!(f, ") -> {}", self.ret.name())
    }
}

/// Whether argument position `i` of `f` is PostgreSQL's `"any"`: every type is
/// accepted there (the caller casts the argument to the declared text).
pub fn accepts_any(f: &BuiltinFunction, i: usize) -> bool {
    match f.name {
        "concat" | "num_nulls" | "num_nonnulls" | "quote_literal" | "quote_nullable" => true,
        "concat_ws" | "format" => i >= 1,
        _ => false,
    }
}

const fn f(
    name: &'static str,
    arg_types: &'static [TypeId],
    ret: TypeId,
    imp: fn(&[Value]) -> PgResult<Value>,
) -> BuiltinFunction {
    BuiltinFunction {
        name,
        arg_types,
        variadic: false,
        ret,
        strict: true,
        volatile: false,
        imp: BuiltinImpl::Pure(imp),
    }
}

/// A function that reads the session's settings.
const fn fs(
    name: &'static str,
    arg_types: &'static [TypeId],
    ret: TypeId,
    imp: fn(&[Value], &IoSettings) -> PgResult<Value>,
) -> BuiltinFunction {
    BuiltinFunction {
        imp: BuiltinImpl::Session(imp),
        ..f(name, arg_types, ret, |_| Ok(Value::Null))
    }
}

const fn volatile(func: BuiltinFunction) -> BuiltinFunction {
    BuiltinFunction {
        volatile: true,
        ..func
    }
}

use TypeId::Interval;
use TypeId::{
    Bool, Bpchar, Bytea, ByteaArray, Date, Float4, Float8, Int2, Int4, Int8, Int8Array, Name,
    NameArray, Numeric, Oid, OidArray, Text, TextArray, Timestamp, Timestamptz, Uuid, UuidArray,
};
use TypeId::{
    BoolArray, BpcharArray, DateArray, Float4Array, Float8Array, Int2Array, Int4Array,
    IntervalArray, JsonArray, JsonbArray, NumericArray, TimestampArray, TimestamptzArray, Varchar,
    VarcharArray,
};

/// The functions over any array type (PostgreSQL's anyarray and
/// anyelement), once per array type with its element type.
macro_rules! array_functions {
    ($(($arr:path, $elem:path)),*) => {
        [$(
            fs("array_to_string", &[$arr, Text], Text, crate::array::ops::array_to_string),
            fs("array_to_string", &[$arr, Text, Text], Text, crate::array::ops::array_to_string),
            f("array_upper", &[$arr, Int4], Int4, crate::array::ops::array_upper),
            f("array_length", &[$arr, Int4], Int4, crate::array::ops::array_length),
            f("array_lower", &[$arr, Int4], Int4, crate::array::ops::array_lower),
            f("array_ndims", &[$arr], Int4, crate::array::ops::array_ndims),
            f("array_dims", &[$arr], Text, crate::array::ops::array_dims),
            f("cardinality", &[$arr], Int4, crate::array::ops::cardinality),
            f("arraycontains", &[$arr, $arr], Bool, crate::array::ops::arraycontains),
            f("arraycontained", &[$arr, $arr], Bool, crate::array::ops::arraycontained),
            f("arrayoverlap", &[$arr, $arr], Bool, crate::array::ops::arrayoverlap),
            nonstrict(f("array_cat", &[$arr, $arr], $arr, crate::array::ops::array_cat)),
            nonstrict(f("array_append", &[$arr, $elem], $arr, crate::array::ops::array_append)),
            nonstrict(f("array_prepend", &[$elem, $arr], $arr, crate::array::ops::array_prepend)),
            nonstrict(f("array_remove", &[$arr, $elem], $arr, crate::array::ops::array_remove)),
            nonstrict(f("array_replace", &[$arr, $elem, $elem], $arr, crate::array::ops::array_replace)),
            nonstrict(f("array_position", &[$arr, $elem], Int4, crate::array::ops::array_position)),
            nonstrict(f("array_position", &[$arr, $elem, Int4], Int4, crate::array::ops::array_position)),
            nonstrict(f("array_positions", &[$arr, $elem], Int4Array, crate::array::ops::array_positions)),
            nonstrict(f("array_fill", &[$elem, Int4Array], $arr, crate::array::ops::array_fill)),
            nonstrict(f("array_fill", &[$elem, Int4Array, Int4Array], $arr, crate::array::ops::array_fill)),
        )*]
    };
}

/// A non-strict built-in (called with NULL arguments).
const fn nonstrict(func: BuiltinFunction) -> BuiltinFunction {
    BuiltinFunction {
        strict: false,
        ..func
    }
}

static ARRAY_BUILTINS: &[BuiltinFunction] = &array_functions!(
    (TextArray, Text),
    (NameArray, Name),
    (Int2Array, Int2),
    (Int4Array, Int4),
    (Int8Array, Int8),
    (OidArray, Oid),
    (ByteaArray, Bytea),
    (UuidArray, Uuid),
    (BoolArray, Bool),
    (Float4Array, Float4),
    (Float8Array, Float8),
    (NumericArray, Numeric),
    (VarcharArray, Varchar),
    (BpcharArray, Bpchar),
    (DateArray, Date),
    (TimestampArray, Timestamp),
    (TimestamptzArray, Timestamptz),
    (IntervalArray, Interval),
    (JsonArray, Json),
    (JsonbArray, Jsonb)
);

static BUILTINS: &[BuiltinFunction] = &[
    // ----- strings -----
    f("length", &[Text], Int4, string::length),
    f("length", &[Bpchar], Int4, string::bpchar_length),
    f("char_length", &[Text], Int4, string::length),
    f("char_length", &[Bpchar], Int4, string::bpchar_length),
    f("character_length", &[Text], Int4, string::length),
    f("character_length", &[Bpchar], Int4, string::bpchar_length),
    f("octet_length", &[Text], Int4, string::octet_length),
    f("octet_length", &[Bpchar], Int4, string::octet_length),
    f("bit_length", &[Text], Int4, string::bit_length),
    f("lower", &[Text], Text, string::lower),
    f("upper", &[Text], Text, string::upper),
    f("initcap", &[Text], Text, string::initcap),
    nonstrict(f(
        "string_to_array",
        &[Text, Text],
        TextArray,
        crate::array::ops::string_to_array,
    )),
    nonstrict(f(
        "string_to_array",
        &[Text, Text, Text],
        TextArray,
        crate::array::ops::string_to_array,
    )),
    f("substr", &[Text, Int4], Text, string::substr),
    f("substr", &[Text, Int4, Int4], Text, string::substr),
    f("substring", &[Text, Int4], Text, string::substr),
    f("substring", &[Text, Int4, Int4], Text, string::substr),
    f("strpos", &[Text, Text], Int4, string::strpos),
    f("position", &[Text, Text], Int4, string::position),
    f("btrim", &[Text], Text, string::btrim),
    f("btrim", &[Text, Text], Text, string::btrim),
    f("ltrim", &[Text], Text, string::ltrim),
    f("ltrim", &[Text, Text], Text, string::ltrim),
    f("rtrim", &[Text], Text, string::rtrim),
    f("rtrim", &[Text, Text], Text, string::rtrim),
    f("lpad", &[Text, Int4], Text, string::lpad),
    f("lpad", &[Text, Int4, Text], Text, string::lpad),
    f("rpad", &[Text, Int4], Text, string::rpad),
    f("rpad", &[Text, Int4, Text], Text, string::rpad),
    f("replace", &[Text, Text, Text], Text, string::replace),
    f("translate", &[Text, Text, Text], Text, string::translate),
    BuiltinFunction {
        variadic: true,
        strict: false,
        ..fs("concat", &[Text], Text, string::concat)
    },
    BuiltinFunction {
        variadic: true,
        strict: false,
        ..fs("concat_ws", &[Text, Text], Text, string::concat_ws)
    },
    f("left", &[Text, Int4], Text, string::left),
    f("right", &[Text, Int4], Text, string::right),
    f("repeat", &[Text, Int4], Text, string::repeat),
    f("reverse", &[Text], Text, string::reverse),
    f("split_part", &[Text, Text, Int4], Text, string::split_part),
    f("md5", &[Text], Text, string::md5),
    f("overlay", &[Text, Text, Int4], Text, string::overlay),
    f("overlay", &[Text, Text, Int4, Int4], Text, string::overlay),
    // ----- bytea -----
    f("length", &[Bytea], Int4, binary::length),
    f("octet_length", &[Bytea], Int4, binary::length),
    f("bit_length", &[Bytea], Int4, binary::bit_length),
    f("substr", &[Bytea, Int4], Bytea, binary::substr),
    f("substr", &[Bytea, Int4, Int4], Bytea, binary::substr),
    f("substring", &[Bytea, Int4], Bytea, binary::substr),
    f("substring", &[Bytea, Int4, Int4], Bytea, binary::substr),
    f("position", &[Bytea, Bytea], Int4, binary::position),
    f("overlay", &[Bytea, Bytea, Int4], Bytea, binary::overlay),
    f(
        "overlay",
        &[Bytea, Bytea, Int4, Int4],
        Bytea,
        binary::overlay,
    ),
    f("btrim", &[Bytea, Bytea], Bytea, binary::btrim),
    f("ltrim", &[Bytea, Bytea], Bytea, binary::ltrim),
    f("rtrim", &[Bytea, Bytea], Bytea, binary::rtrim),
    f("encode", &[Bytea, Text], Text, binary::encode),
    f("decode", &[Text, Text], Bytea, binary::decode),
    f("md5", &[Bytea], Text, binary::md5),
    f("sha224", &[Bytea], Bytea, binary::sha224),
    f("sha256", &[Bytea], Bytea, binary::sha256),
    f("sha384", &[Bytea], Bytea, binary::sha384),
    f("sha512", &[Bytea], Bytea, binary::sha512),
    f("get_byte", &[Bytea, Int4], Int4, binary::get_byte),
    f("set_byte", &[Bytea, Int4, Int4], Bytea, binary::set_byte),
    f("get_bit", &[Bytea, Int8], Int4, binary::get_bit),
    f("set_bit", &[Bytea, Int8, Int4], Bytea, binary::set_bit),
    f("convert_to", &[Text, Name], Bytea, binary::convert_to),
    f("convert_from", &[Bytea, Name], Text, binary::convert_from),
    // ----- uuid -----
    volatile(f("gen_random_uuid", &[], Uuid, binary::gen_random_uuid)),
    f("chr", &[Int4], Text, string::chr),
    f("ascii", &[Text], Int4, string::ascii),
    f("to_hex", &[Int4], Text, string::to_hex),
    f("to_hex", &[Int8], Text, string::to_hex),
    f("starts_with", &[Text, Text], Bool, string::starts_with),
    f("quote_ident", &[Text], Text, catalog::quote_ident),
    f(
        "pg_encoding_to_char",
        &[Int4],
        Name,
        catalog::pg_encoding_to_char,
    ),
    f(
        "pg_char_to_encoding",
        &[Name],
        Int4,
        catalog::pg_char_to_encoding,
    ),
    f("pg_size_pretty", &[Int8], Text, catalog::pg_size_pretty),
    f(
        "pg_size_pretty",
        &[Numeric],
        Text,
        catalog::pg_size_pretty_numeric,
    ),
    // ----- catalog inspection -----
    f("pg_get_expr", &[Text, Oid], Text, catalog::pg_get_expr),
    f(
        "pg_get_expr",
        &[Text, Oid, Bool],
        Text,
        catalog::pg_get_expr,
    ),
    f(
        "pg_get_constraintdef",
        &[Oid],
        Text,
        catalog::no_such_object,
    ),
    f(
        "pg_get_constraintdef",
        &[Oid, Bool],
        Text,
        catalog::no_such_object,
    ),
    // Evaluated by the executor (`SysFunc::GetTriggerdef`).
    f("pg_get_triggerdef", &[Oid], Text, catalog::no_such_object),
    f(
        "pg_get_triggerdef",
        &[Oid, Bool],
        Text,
        catalog::no_such_object,
    ),
    f("pg_get_indexdef", &[Oid], Text, catalog::no_such_object),
    f(
        "pg_get_indexdef",
        &[Oid, Int4, Bool],
        Text,
        catalog::no_such_object,
    ),
    f("pg_get_viewdef", &[Oid], Text, catalog::no_such_object),
    f(
        "pg_get_viewdef",
        &[Oid, Bool],
        Text,
        catalog::no_such_object,
    ),
    f("pg_get_viewdef", &[Text], Text, catalog::no_such_object),
    f(
        "pg_get_viewdef",
        &[Text, Bool],
        Text,
        catalog::no_such_object,
    ),
    f(
        "pg_get_statisticsobjdef_columns",
        &[Oid],
        Text,
        catalog::no_such_object,
    ),
    f(
        "pg_get_function_result",
        &[Oid],
        Text,
        catalog::pg_get_function_result,
    ),
    f(
        "pg_get_function_arguments",
        &[Oid],
        Text,
        catalog::pg_get_function_arguments,
    ),
    f("obj_description", &[Oid], Text, catalog::no_such_object),
    f(
        "obj_description",
        &[Oid, Name],
        Text,
        catalog::no_such_object,
    ),
    f(
        "col_description",
        &[Oid, Int4],
        Text,
        catalog::no_such_object,
    ),
    f(
        "shobj_description",
        &[Oid, Name],
        Text,
        catalog::no_such_object,
    ),
    volatile(f(
        "pg_is_in_recovery",
        &[],
        Bool,
        catalog::pg_is_in_recovery,
    )),
    f(
        "has_table_privilege",
        &[Text, Text],
        Bool,
        catalog::has_table_privilege,
    ),
    f(
        "has_table_privilege",
        &[Oid, Text],
        Bool,
        catalog::has_table_privilege,
    ),
    f(
        "has_table_privilege",
        &[Name, Text, Text],
        Bool,
        catalog::has_table_privilege,
    ),
    f(
        "has_table_privilege",
        &[Name, Oid, Text],
        Bool,
        catalog::has_table_privilege,
    ),
    f(
        "has_schema_privilege",
        &[Text, Text],
        Bool,
        catalog::has_schema_privilege,
    ),
    f(
        "has_schema_privilege",
        &[Oid, Text],
        Bool,
        catalog::has_schema_privilege,
    ),
    f(
        "has_schema_privilege",
        &[Name, Text, Text],
        Bool,
        catalog::has_schema_privilege,
    ),
    f(
        "has_schema_privilege",
        &[Name, Oid, Text],
        Bool,
        catalog::has_schema_privilege,
    ),
    f(
        "has_database_privilege",
        &[Text, Text],
        Bool,
        catalog::has_database_privilege,
    ),
    f(
        "has_database_privilege",
        &[Oid, Text],
        Bool,
        catalog::has_database_privilege,
    ),
    f(
        "has_database_privilege",
        &[Name, Text, Text],
        Bool,
        catalog::has_database_privilege,
    ),
    f(
        "has_database_privilege",
        &[Name, Oid, Text],
        Bool,
        catalog::has_database_privilege,
    ),
    // ----- regular expression match operators (~, !~, ~*, !~*) -----
    f("textregexeq", &[Text, Text], Bool, string::regex_eq),
    f("textregexne", &[Text, Text], Bool, string::regex_ne),
    f("texticregexeq", &[Text, Text], Bool, string::iregex_eq),
    f("texticregexne", &[Text, Text], Bool, string::iregex_ne),
    // ----- boolean comparison functions (the operators' pg_proc entries) -----
    // boolean's output function ('t'/'f'; a cast to text gives 'true').
    f("boolout", &[Bool], Text, bool_out),
    // character(n)'s output keeps its padding; the cast to text trims it.
    f("bpcharout", &[Bpchar], Text, bpchar_out),
    f("booleq", &[Bool, Bool], Bool, bool_eq),
    f("boolne", &[Bool, Bool], Bool, bool_ne),
    f("boollt", &[Bool, Bool], Bool, bool_lt),
    f("boolgt", &[Bool, Bool], Bool, bool_gt),
    f("boolle", &[Bool, Bool], Bool, bool_le),
    f("boolge", &[Bool, Bool], Bool, bool_ge),
    // ----- math -----
    f("abs", &[Int2], Int2, math::abs),
    f("abs", &[Int4], Int4, math::abs),
    f("abs", &[Int8], Int8, math::abs),
    f("abs", &[Float4], Float4, math::abs),
    f("abs", &[Float8], Float8, math::abs),
    f("abs", &[Numeric], Numeric, math::abs),
    f("round", &[Float8], Float8, math::round),
    f("round", &[Numeric], Numeric, math::round),
    f("round", &[Numeric, Int4], Numeric, math::round),
    f("trunc", &[Float8], Float8, math::trunc),
    f("trunc", &[Numeric], Numeric, math::trunc),
    f("trunc", &[Numeric, Int4], Numeric, math::trunc),
    f("ceil", &[Float8], Float8, math::ceil),
    f("ceil", &[Numeric], Numeric, math::ceil),
    f("ceiling", &[Float8], Float8, math::ceil),
    f("ceiling", &[Numeric], Numeric, math::ceil),
    f("floor", &[Float8], Float8, math::floor),
    f("floor", &[Numeric], Numeric, math::floor),
    f("sign", &[Float8], Float8, math::sign),
    f("sign", &[Numeric], Numeric, math::sign),
    f("sqrt", &[Float8], Float8, math::sqrt),
    f("sqrt", &[Numeric], Numeric, math::sqrt),
    f("cbrt", &[Float8], Float8, math::cbrt),
    f("power", &[Float8, Float8], Float8, math::power),
    f("power", &[Numeric, Numeric], Numeric, math::power),
    f("pow", &[Float8, Float8], Float8, math::power),
    f("pow", &[Numeric, Numeric], Numeric, math::power),
    f("exp", &[Float8], Float8, math::exp),
    f("exp", &[Numeric], Numeric, math::exp),
    f("ln", &[Float8], Float8, math::ln),
    f("ln", &[Numeric], Numeric, math::ln),
    f("log", &[Float8], Float8, math::log10),
    f("log", &[Numeric], Numeric, math::log10),
    f("log", &[Numeric, Numeric], Numeric, math::log),
    f("log10", &[Float8], Float8, math::log10),
    f("log10", &[Numeric], Numeric, math::log10),
    f("mod", &[Int2, Int2], Int2, math::modulo),
    f("mod", &[Int4, Int4], Int4, math::modulo),
    f("mod", &[Int8, Int8], Int8, math::modulo),
    f("mod", &[Numeric, Numeric], Numeric, math::modulo),
    f("div", &[Numeric, Numeric], Numeric, math::div),
    f("gcd", &[Int4, Int4], Int4, math::gcd),
    f("gcd", &[Int8, Int8], Int8, math::gcd),
    f("gcd", &[Numeric, Numeric], Numeric, math::gcd),
    f("lcm", &[Int4, Int4], Int4, math::lcm),
    f("lcm", &[Int8, Int8], Int8, math::lcm),
    f("lcm", &[Numeric, Numeric], Numeric, math::lcm),
    f("pi", &[], Float8, math::pi),
    volatile(f("random", &[], Float8, math::random)),
    f("degrees", &[Float8], Float8, math::degrees),
    f("radians", &[Float8], Float8, math::radians),
    f("sin", &[Float8], Float8, math::sin),
    f("cos", &[Float8], Float8, math::cos),
    f("tan", &[Float8], Float8, math::tan),
    f("asin", &[Float8], Float8, math::asin),
    f("acos", &[Float8], Float8, math::acos),
    f("atan", &[Float8], Float8, math::atan),
    f("atan2", &[Float8, Float8], Float8, math::atan2),
    // ----- date/time -----
    volatile(f("now", &[], Timestamptz, datetime::now)),
    volatile(f("current_timestamp", &[], Timestamptz, datetime::now)),
    volatile(f("transaction_timestamp", &[], Timestamptz, datetime::now)),
    volatile(f("statement_timestamp", &[], Timestamptz, datetime::now)),
    volatile(f("clock_timestamp", &[], Timestamptz, datetime::now)),
    volatile(fs(
        "localtimestamp",
        &[],
        Timestamp,
        datetime::localtimestamp,
    )),
    volatile(fs("current_date", &[], Date, datetime::current_date)),
    f(
        "date_part",
        &[Text, Timestamp],
        Float8,
        datetime::date_part_ts,
    ),
    fs(
        "date_part",
        &[Text, Timestamptz],
        Float8,
        datetime::date_part_tstz,
    ),
    f("date_part", &[Text, Date], Float8, datetime::date_part_date),
    f("extract", &[Text, Timestamp], Numeric, datetime::extract_ts),
    fs(
        "extract",
        &[Text, Timestamptz],
        Numeric,
        datetime::extract_tstz,
    ),
    f("extract", &[Text, Date], Numeric, datetime::extract_date),
    f(
        "date_trunc",
        &[Text, Timestamp],
        Timestamp,
        datetime::date_trunc_ts,
    ),
    fs(
        "date_trunc",
        &[Text, Timestamptz],
        Timestamptz,
        datetime::date_trunc_tstz,
    ),
    f(
        "timezone",
        &[Text, Timestamptz],
        Timestamp,
        datetime::timezone_tstz,
    ),
    f(
        "timezone",
        &[Text, Timestamp],
        Timestamptz,
        datetime::timezone_ts,
    ),
    f("make_date", &[Int4, Int4, Int4], Date, datetime::make_date),
    // ----- interval -----
    fs(
        "timestamptz_pl_interval",
        &[Timestamptz, Interval],
        Timestamptz,
        interval::timestamptz_pl_interval,
    ),
    fs(
        "timestamptz_mi_interval",
        &[Timestamptz, Interval],
        Timestamptz,
        interval::timestamptz_mi_interval,
    ),
    f(
        "date_part",
        &[Text, Interval],
        Float8,
        interval::date_part_interval,
    ),
    f(
        "extract",
        &[Text, Interval],
        Numeric,
        interval::extract_interval,
    ),
    f(
        "date_trunc",
        &[Text, Interval],
        Interval,
        interval::date_trunc_interval,
    ),
    f(
        "justify_days",
        &[Interval],
        Interval,
        interval::justify_days,
    ),
    f(
        "justify_hours",
        &[Interval],
        Interval,
        interval::justify_hours,
    ),
    f(
        "justify_interval",
        &[Interval],
        Interval,
        interval::justify_interval,
    ),
    f("make_interval", &[], Interval, interval::make_interval),
    f("make_interval", &[Int4], Interval, interval::make_interval),
    f(
        "make_interval",
        &[Int4, Int4],
        Interval,
        interval::make_interval,
    ),
    f(
        "make_interval",
        &[Int4, Int4, Int4],
        Interval,
        interval::make_interval,
    ),
    f(
        "make_interval",
        &[Int4, Int4, Int4, Int4],
        Interval,
        interval::make_interval,
    ),
    f(
        "make_interval",
        &[Int4, Int4, Int4, Int4, Int4],
        Interval,
        interval::make_interval,
    ),
    f(
        "make_interval",
        &[Int4, Int4, Int4, Int4, Int4, Int4],
        Interval,
        interval::make_interval,
    ),
    f(
        "make_interval",
        &[Int4, Int4, Int4, Int4, Int4, Int4, Float8],
        Interval,
        interval::make_interval,
    ),
    fs("age", &[Timestamp, Timestamp], Interval, interval::age2),
    fs("age", &[Timestamptz, Timestamptz], Interval, interval::age2),
    volatile(fs("age", &[Timestamp], Interval, interval::age1)),
    volatile(fs("age", &[Timestamptz], Interval, interval::age1)),
    f(
        "to_timestamp",
        &[Float8],
        Timestamptz,
        datetime::to_timestamp,
    ),
];

fn bool_args(args: &[Value]) -> PgResult<(bool, bool)> {
    match args {
        [Value::Bool(a), Value::Bool(b)] => Ok((*a, *b)),
        _ => Err(PgError::internal("boolean comparison of non-booleans")),
    }
}

/// bpcharout: the stored, blank-padded string as it is.
fn bpchar_out(args: &[Value]) -> PgResult<Value> {
    Ok(args[0].clone())
}

fn bool_out(args: &[Value]) -> PgResult<Value> {
    match args {
        [Value::Bool(b)] => Ok(Value::Text(if *b { "t" } else { "f" }.into())),
        _ => Err(PgError::internal("boolout of a non-boolean")),
    }
}

fn bool_eq(args: &[Value]) -> PgResult<Value> {
    bool_args(args).map(|(a, b)| Value::Bool(a == b))
}

fn bool_ne(args: &[Value]) -> PgResult<Value> {
    bool_args(args).map(|(a, b)| Value::Bool(a != b))
}

fn bool_lt(args: &[Value]) -> PgResult<Value> {
    bool_args(args).map(|(a, b)| Value::Bool(!a & b))
}

fn bool_gt(args: &[Value]) -> PgResult<Value> {
    bool_args(args).map(|(a, b)| Value::Bool(a & !b))
}

fn bool_le(args: &[Value]) -> PgResult<Value> {
    bool_args(args).map(|(a, b)| Value::Bool(a <= b))
}

fn bool_ge(args: &[Value]) -> PgResult<Value> {
    bool_args(args).map(|(a, b)| Value::Bool(a >= b))
}

/// to_json and to_jsonb, once per argument type (PostgreSQL's take
/// anyelement and look at its type; here the overload knows it).
macro_rules! json_conversions {
    ($($ty:ident),*) => {
        [$(
            fs("to_jsonb", &[$ty], TypeId::Jsonb, |a, io| json::to_jsonb_of(a, $ty, io)),
            fs("to_json", &[$ty], TypeId::Json, |a, io| json::to_json_of(a, $ty, io)),
        )*]
    };
}

use TypeId::{Json, Jsonb};

static JSON_CONVERSIONS: &[BuiltinFunction] = &json_conversions!(
    Bool,
    Int2,
    Int4,
    Int8,
    Float4,
    Float8,
    Numeric,
    Text,
    Json,
    Jsonb,
    Date,
    Timestamp,
    Timestamptz,
    Oid,
    TextArray,
    NameArray,
    Int2Array,
    Int4Array,
    Int8Array,
    OidArray,
    ByteaArray,
    UuidArray,
    BoolArray,
    Float4Array,
    Float8Array,
    NumericArray,
    VarcharArray,
    BpcharArray,
    DateArray,
    TimestampArray,
    TimestamptzArray,
    IntervalArray,
    JsonArray,
    JsonbArray
);

/// A variadic, non-strict built-in (the json builders).
const fn builder(
    name: &'static str,
    arg: &'static [TypeId],
    ret: TypeId,
    imp: fn(&[Value]) -> PgResult<Value>,
) -> BuiltinFunction {
    BuiltinFunction {
        variadic: true,
        strict: false,
        ..f(name, arg, ret, imp)
    }
}

static JSON_BUILTINS: &[BuiltinFunction] = &[
    // The operators' functions (pg_operator.oprcode).
    f(
        "jsonb_object_field",
        &[Jsonb, Text],
        Jsonb,
        json::jsonb_object_field,
    ),
    f(
        "jsonb_array_element",
        &[Jsonb, Int4],
        Jsonb,
        json::jsonb_array_element,
    ),
    f(
        "jsonb_object_field_text",
        &[Jsonb, Text],
        Text,
        json::jsonb_object_field_text,
    ),
    f(
        "jsonb_array_element_text",
        &[Jsonb, Int4],
        Text,
        json::jsonb_array_element_text,
    ),
    f(
        "jsonb_extract_path_op",
        &[Jsonb, TextArray],
        Jsonb,
        json::jsonb_extract_path_op,
    ),
    f(
        "jsonb_extract_path_text_op",
        &[Jsonb, TextArray],
        Text,
        json::jsonb_extract_path_text_op,
    ),
    f(
        "jsonb_contains",
        &[Jsonb, Jsonb],
        Bool,
        json::jsonb_contains,
    ),
    f(
        "jsonb_contained",
        &[Jsonb, Jsonb],
        Bool,
        json::jsonb_contained,
    ),
    f("jsonb_exists", &[Jsonb, Text], Bool, json::jsonb_exists),
    f(
        "jsonb_exists_any",
        &[Jsonb, TextArray],
        Bool,
        json::jsonb_exists_any,
    ),
    f(
        "jsonb_exists_all",
        &[Jsonb, TextArray],
        Bool,
        json::jsonb_exists_all,
    ),
    f("jsonb_concat", &[Jsonb, Jsonb], Jsonb, json::jsonb_concat),
    f(
        "jsonb_delete",
        &[Jsonb, Text],
        Jsonb,
        json::jsonb_delete_key,
    ),
    f(
        "jsonb_delete",
        &[Jsonb, Int4],
        Jsonb,
        json::jsonb_delete_index,
    ),
    f(
        "jsonb_delete",
        &[Jsonb, TextArray],
        Jsonb,
        json::jsonb_delete_keys,
    ),
    f(
        "jsonb_delete_path",
        &[Jsonb, TextArray],
        Jsonb,
        json::jsonb_delete_path,
    ),
    f(
        "json_object_field",
        &[Json, Text],
        Json,
        json::json_object_field,
    ),
    f(
        "json_array_element",
        &[Json, Int4],
        Json,
        json::json_array_element,
    ),
    f(
        "json_object_field_text",
        &[Json, Text],
        Text,
        json::json_object_field_text,
    ),
    f(
        "json_array_element_text",
        &[Json, Int4],
        Text,
        json::json_array_element_text,
    ),
    f(
        "json_extract_path_op",
        &[Json, TextArray],
        Json,
        json::json_extract_path_op,
    ),
    f(
        "json_extract_path_text_op",
        &[Json, TextArray],
        Text,
        json::json_extract_path_text_op,
    ),
    // Functions.
    BuiltinFunction {
        variadic: true,
        ..f(
            "jsonb_extract_path",
            &[Jsonb, Text],
            Jsonb,
            json::jsonb_extract_path,
        )
    },
    BuiltinFunction {
        variadic: true,
        ..f(
            "jsonb_extract_path_text",
            &[Jsonb, Text],
            Text,
            json::jsonb_extract_path_text,
        )
    },
    f(
        "jsonb_set",
        &[Jsonb, TextArray, Jsonb],
        Jsonb,
        json::jsonb_set,
    ),
    f(
        "jsonb_set",
        &[Jsonb, TextArray, Jsonb, Bool],
        Jsonb,
        json::jsonb_set,
    ),
    f(
        "jsonb_insert",
        &[Jsonb, TextArray, Jsonb],
        Jsonb,
        json::jsonb_insert,
    ),
    f(
        "jsonb_insert",
        &[Jsonb, TextArray, Jsonb, Bool],
        Jsonb,
        json::jsonb_insert,
    ),
    f(
        "jsonb_strip_nulls",
        &[Jsonb],
        Jsonb,
        json::jsonb_strip_nulls,
    ),
    f("jsonb_pretty", &[Jsonb], Text, json::jsonb_pretty),
    f("jsonb_typeof", &[Jsonb], Text, json::jsonb_typeof),
    f(
        "jsonb_array_length",
        &[Jsonb],
        Int4,
        json::jsonb_array_length,
    ),
    f("json_typeof", &[Json], Text, json::json_typeof),
    f("json_array_length", &[Json], Int4, json::json_array_length),
    builder(
        "jsonb_build_object",
        &[Jsonb],
        Jsonb,
        json::jsonb_build_object,
    ),
    builder(
        "jsonb_build_array",
        &[Jsonb],
        Jsonb,
        json::jsonb_build_array,
    ),
    builder("json_build_object", &[Json], Json, json::json_build_object),
    builder("json_build_array", &[Json], Json, json::json_build_array),
    f("jsonb_build_object", &[], Jsonb, json::jsonb_empty_object),
    f("jsonb_build_array", &[], Jsonb, json::jsonb_empty_array),
    f("json_build_object", &[], Json, json::json_empty_object),
    f("json_build_array", &[], Json, json::json_empty_array),
];

/// Every built-in function.
pub fn builtins() -> impl Iterator<Item = &'static BuiltinFunction> {
    BUILTINS
        .iter()
        .chain(ARRAY_BUILTINS.iter())
        .chain(JSON_BUILTINS.iter())
        .chain(JSON_CONVERSIONS.iter())
        .chain(regexp::BUILTINS.iter())
        .chain(format::BUILTINS.iter())
        .chain(math_extra::BUILTINS.iter())
        .chain(datetime_extra::BUILTINS.iter())
        .chain(to_char::BUILTINS.iter())
        .chain(network::BUILTINS.iter())
        .chain(NETWORK_ARRAY_BUILTINS.iter())
}

/// The array functions over the network and money array types (after the
/// other tables, so existing pg_proc oids stay put).
static NETWORK_ARRAY_BUILTINS: &[BuiltinFunction] = &array_functions!(
    (TypeId::InetArray, TypeId::Inet),
    (TypeId::CidrArray, TypeId::Cidr),
    (TypeId::MacAddrArray, TypeId::MacAddr),
    (TypeId::MacAddr8Array, TypeId::MacAddr8),
    (TypeId::MoneyArray, TypeId::Money)
);

/// The first oid of the built-in functions as pg_proc lists them: they are
/// numbered in registry order here, not with PostgreSQL's oids.
pub const FIRST_BUILTIN_OID: common::Oid = 9000;

/// The built-in whose pg_proc oid is `oid`.
pub fn builtin_by_oid(oid: common::Oid) -> Option<&'static BuiltinFunction> {
    builtins().nth(oid.checked_sub(FIRST_BUILTIN_OID)? as usize)
}

/// Whether a built-in with this name exists (any arity).
pub fn function_exists(name: &str) -> bool {
    builtins().any(|f| f.name.eq_ignore_ascii_case(name))
}

fn signature_text(name: &str, arg_types: &[TypeId]) -> String {
    let args: Vec<&str> = arg_types.iter().map(|t| t.display_name()).collect();
    format!("{name}({})", args.join(", "))
}

/// Whether input type `input` at position `i` can be passed to `f`.
fn arg_coercible(f: &BuiltinFunction, i: usize, input: TypeId) -> bool {
    let Some(decl) = f.arg_type(i) else {
        return false;
    };
    input == decl
        || input == TypeId::Unknown
        || accepts_any(f, i)
        || can_cast(input, decl, CastContext::Implicit)
}

/// Finds the best-matching built-in `name(arg_types)`; Unknown args match any type.
/// Errors: 42883 "function name(types) does not exist" with PostgreSQL's hint;
/// 42725 if ambiguous.
pub fn lookup_function(name: &str, arg_types: &[TypeId]) -> PgResult<&'static BuiltinFunction> {
    let n = arg_types.len();
    let mut cands: Vec<&'static BuiltinFunction> = builtins()
        .filter(|f| f.name.eq_ignore_ascii_case(name) && f.accepts_arity(n))
        .filter(|f| {
            arg_types
                .iter()
                .enumerate()
                .all(|(i, t)| arg_coercible(f, i, *t))
        })
        .collect();
    if cands.is_empty() {
        return Err(PgError::new(
            SqlState::UNDEFINED_FUNCTION,
            format!(
                "function {} does not exist",
                signature_text(&name.to_ascii_lowercase(), arg_types)
            ),
        )
        .with_hint(
            "No function matches the given name and argument types. You might need to add explicit type casts.",
        ));
    }
    if cands.len() > 1 {
        cands = select_candidate(cands, arg_types);
    }
    if cands.len() == 1 {
        return Ok(cands[0]);
    }
    Err(PgError::new(
        SqlState::AMBIGUOUS_FUNCTION,
        format!(
            "function {} is not unique",
            signature_text(&name.to_ascii_lowercase(), arg_types)
        ),
    )
    .with_hint(
        "Could not choose a best candidate function. You might need to add explicit type casts.",
    ))
}

/// Keeps the candidates maximising `score`, or all of them if none scores.
fn keep_best(
    cands: Vec<&'static BuiltinFunction>,
    score: impl Fn(&BuiltinFunction) -> usize,
) -> Vec<&'static BuiltinFunction> {
    let best = cands.iter().map(|f| score(f)).max().unwrap_or(0);
    cands.into_iter().filter(|f| score(f) == best).collect()
}

/// PostgreSQL's func_select_candidate heuristics.
fn select_candidate(
    cands: Vec<&'static BuiltinFunction>,
    inputs: &[TypeId],
) -> Vec<&'static BuiltinFunction> {
    use TypeId::Unknown;
    let decl = |f: &BuiltinFunction, i: usize| f.arg_type(i).unwrap_or(Unknown);
    // 1. Most exact matches.
    let cands = keep_best(cands, |f| {
        inputs
            .iter()
            .enumerate()
            .filter(|(i, t)| **t != Unknown && decl(f, *i) == **t)
            .count()
    });
    if cands.len() <= 1 {
        return cands;
    }
    // 2. Most exact-or-preferred-in-category matches at coerced positions.
    let cands = keep_best(cands, |f| {
        inputs
            .iter()
            .enumerate()
            .filter(|(i, t)| {
                let d = decl(f, *i);
                **t != Unknown && (d == **t || (d.category() == t.category() && d.is_preferred()))
            })
            .count()
    });
    if cands.len() <= 1 {
        return cands;
    }
    let nunknown = inputs.iter().filter(|t| **t == Unknown).count();
    if nunknown == 0 {
        return cands;
    }
    // 3. Resolve unknown positions by category (string wins), preferring preferred types.
    let mut slot: Vec<Option<(char, bool)>> = vec![None; inputs.len()];
    let mut resolved = true;
    for (i, t) in inputs.iter().enumerate() {
        if *t != Unknown {
            continue;
        }
        let mut cat: Option<char> = None;
        let mut pref = false;
        let mut conflict = false;
        for f in &cands {
            let d = decl(f, i);
            match cat {
                None => {
                    cat = Some(d.category());
                    pref = d.is_preferred();
                }
                Some(c) if c == d.category() => pref |= d.is_preferred(),
                Some(_) => {
                    if d.category() == 'S' {
                        cat = Some('S');
                        pref = d.is_preferred();
                    } else {
                        conflict = true;
                    }
                }
            }
        }
        if conflict && cat != Some('S') {
            resolved = false;
            break;
        }
        slot[i] = cat.map(|c| (c, pref));
    }
    let mut cands = cands;
    if resolved {
        let kept: Vec<_> = cands
            .iter()
            .copied()
            .filter(|f| {
                slot.iter().enumerate().all(|(i, s)| match s {
                    None => true,
                    Some((c, pref)) => {
                        let d = decl(f, i);
                        d.category() == *c && (!pref || d.is_preferred())
                    }
                })
            })
            .collect();
        if !kept.is_empty() {
            cands = kept;
        }
        if cands.len() == 1 {
            return cands;
        }
    }
    // 4. All known inputs of one type: assume the unknowns are of it too.
    if nunknown < inputs.len() {
        let mut known = inputs.iter().filter(|t| **t != Unknown);
        let first = *known.next().unwrap_or(&Unknown);
        if known.all(|t| *t == first) {
            let fits: Vec<_> = cands
                .iter()
                .copied()
                .filter(|f| (0..inputs.len()).all(|i| arg_coercible(f, i, first)))
                .collect();
            if fits.len() == 1 {
                return fits;
            }
        }
    }
    cands
}
