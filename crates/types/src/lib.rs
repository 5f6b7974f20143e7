//! SQL data types (PostgreSQL's utils/adt): type identity (PostgreSQL type oids),
//! typmods, runtime values, and the per-type input/output, comparison, arithmetic
//! and cast routines and built-in functions, one module per type family.

pub mod functions;
#[cfg(any(test, feature = "fuzzing"))]
pub mod fuzz;
pub mod numeric;
pub mod value;

pub use io::IoSettings;
pub use value::Value;

use common::Oid;

/// The built-in types Scalegres knows, with PostgreSQL's oids.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum TypeId {
    Bool,
    Int2,
    Int4,
    Int8,
    Float4,
    Float8,
    Numeric,
    Text,
    Varchar,
    /// `character(n)`, blank-padded.
    Bpchar,
    /// `name`: 63-byte identifiers in catalogs.
    Name,
    Oid,
    /// `regclass`: an oid that prints as a relation name.
    RegClass,
    /// `regtype`: an oid that prints as a type name (`integer`).
    RegType,
    /// `regproc`: an oid that prints as a function name.
    RegProc,
    /// `regprocedure`: an oid that prints as a function with its argument types.
    RegProcedure,
    /// `regnamespace`: an oid that prints as a schema name.
    RegNamespace,
    /// `regrole`: an oid that prints as a role name.
    RegRole,
    /// Array types, one per element type (`int4[]` is `Int4Array`, whatever
    /// its number of dimensions). Values are `Value::Array` (see `array/`).
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
    JsonbArray,
    InetArray,
    CidrArray,
    MacAddrArray,
    MacAddr8Array,
    MoneyArray,
    Date,
    Timestamp,
    Timestamptz,
    /// `bytea`: binary strings (`Value::Bytea`).
    Bytea,
    /// `uuid`: 16 bytes (`Value::Uuid`).
    Uuid,
    /// `interval`: months, days and microseconds (see `interval.rs`).
    Interval,
    /// `json`: the input text, validated, as `Value::Text`.
    Json,
    /// `jsonb`: a parsed, normalised document (`Value::Jsonb`).
    Jsonb,
    /// `inet`: an IPv4 or IPv6 host address with an optional netmask
    /// (`Value::Inet`, see `network.rs`).
    Inet,
    /// `cidr`: an IPv4 or IPv6 network (`Value::Inet`, no bits right of the mask).
    Cidr,
    /// `macaddr`: a 6-byte MAC address (`Value::MacAddr`).
    MacAddr,
    /// `macaddr8`: an 8-byte (EUI-64) MAC address (`Value::MacAddr8`).
    MacAddr8,
    /// `money`: an int8 count of cents (`Value::Money`, see `money.rs`).
    Money,
    /// `tid`: a row version's address, (block, offset); held as an int8
    /// `(block << 16) | offset`, which orders as PostgreSQL's tid does.
    Tid,
    /// `xid`: a transaction id as PostgreSQL shows it (32 bits; ours are
    /// 64, the low 32 bits are shown), held as `Value::Oid`.
    Xid,
    /// `cid`: a command id within a transaction, held as `Value::Oid`.
    Cid,
    /// Type of an untyped string literal before resolution.
    Unknown,
    Void,
    /// `"char"`: one byte, held as a one-character `Value::Text`. Only
    /// catalog views use it (pg_type.typtype, which drivers read as a byte);
    /// it is not in `ALL`.
    Char,
    /// `record`: an anonymous row, held as `Value::Array` of its fields
    /// (an `ArrayValue` whose `elem` is `Record`), each printed by its own
    /// value's type. Only WITH RECURSIVE's SEARCH and CYCLE columns make
    /// them; not in `ALL`.
    Record,
    /// `record[]`: an array of records (SEARCH DEPTH FIRST's and CYCLE's
    /// path columns).
    RecordArray,
    /// A user-defined enum type, by its pg_type oid (see `enums.rs`).
    Enum(Oid),
    /// The array type over the enum type of this (element) oid.
    EnumArray(Oid),
}

impl TypeId {
    pub fn oid(self) -> Oid {
        match self {
            TypeId::Bool => 16,
            TypeId::Int2 => 21,
            TypeId::Int4 => 23,
            TypeId::Int8 => 20,
            TypeId::Float4 => 700,
            TypeId::Float8 => 701,
            TypeId::Numeric => 1700,
            TypeId::Text => 25,
            TypeId::Varchar => 1043,
            TypeId::Bpchar => 1042,
            TypeId::Name => 19,
            TypeId::Oid => 26,
            TypeId::RegClass => 2205,
            TypeId::RegType => 2206,
            TypeId::RegProc => 24,
            TypeId::RegProcedure => 2202,
            TypeId::RegNamespace => 4089,
            TypeId::RegRole => 4096,
            TypeId::TextArray => 1009,
            TypeId::NameArray => 1003,
            TypeId::Int2Array => 1005,
            TypeId::Int4Array => 1007,
            TypeId::Int8Array => 1016,
            TypeId::OidArray => 1028,
            TypeId::ByteaArray => 1001,
            TypeId::UuidArray => 2951,
            TypeId::BoolArray => 1000,
            TypeId::Float4Array => 1021,
            TypeId::Float8Array => 1022,
            TypeId::NumericArray => 1231,
            TypeId::VarcharArray => 1015,
            TypeId::BpcharArray => 1014,
            TypeId::DateArray => 1182,
            TypeId::TimestampArray => 1115,
            TypeId::TimestamptzArray => 1185,
            TypeId::IntervalArray => 1187,
            TypeId::JsonArray => 199,
            TypeId::JsonbArray => 3807,
            TypeId::InetArray => 1041,
            TypeId::CidrArray => 651,
            TypeId::MacAddrArray => 1040,
            TypeId::MacAddr8Array => 775,
            TypeId::MoneyArray => 791,
            TypeId::Date => 1082,
            TypeId::Timestamp => 1114,
            TypeId::Timestamptz => 1184,
            TypeId::Bytea => 17,
            TypeId::Uuid => 2950,
            TypeId::Interval => 1186,
            TypeId::Json => 114,
            TypeId::Jsonb => 3802,
            TypeId::Inet => 869,
            TypeId::Cidr => 650,
            TypeId::MacAddr => 829,
            TypeId::MacAddr8 => 774,
            TypeId::Money => 790,
            TypeId::Tid => 27,
            TypeId::Xid => 28,
            TypeId::Cid => 29,
            TypeId::Unknown => 705,
            TypeId::Void => 2278,
            TypeId::Char => 18,
            TypeId::Record => 2249,
            TypeId::RecordArray => 2287,
            TypeId::Enum(oid) => oid,
            TypeId::EnumArray(elem) => enums::array_oid(elem),
        }
    }

    pub const ALL: [TypeId; 61] = [
        TypeId::Bool,
        TypeId::Int2,
        TypeId::Int4,
        TypeId::Int8,
        TypeId::Float4,
        TypeId::Float8,
        TypeId::Numeric,
        TypeId::Text,
        TypeId::Varchar,
        TypeId::Bpchar,
        TypeId::Name,
        TypeId::Oid,
        TypeId::RegClass,
        TypeId::RegType,
        TypeId::RegProc,
        TypeId::RegProcedure,
        TypeId::RegNamespace,
        TypeId::RegRole,
        TypeId::TextArray,
        TypeId::NameArray,
        TypeId::Int2Array,
        TypeId::Int4Array,
        TypeId::Int8Array,
        TypeId::OidArray,
        TypeId::ByteaArray,
        TypeId::UuidArray,
        TypeId::BoolArray,
        TypeId::Float4Array,
        TypeId::Float8Array,
        TypeId::NumericArray,
        TypeId::VarcharArray,
        TypeId::BpcharArray,
        TypeId::DateArray,
        TypeId::TimestampArray,
        TypeId::TimestamptzArray,
        TypeId::IntervalArray,
        TypeId::JsonArray,
        TypeId::JsonbArray,
        TypeId::InetArray,
        TypeId::CidrArray,
        TypeId::MacAddrArray,
        TypeId::MacAddr8Array,
        TypeId::MoneyArray,
        TypeId::Date,
        TypeId::Timestamp,
        TypeId::Timestamptz,
        TypeId::Bytea,
        TypeId::Uuid,
        TypeId::Interval,
        TypeId::Json,
        TypeId::Jsonb,
        TypeId::Inet,
        TypeId::Cidr,
        TypeId::MacAddr,
        TypeId::MacAddr8,
        TypeId::Money,
        TypeId::Tid,
        TypeId::Xid,
        TypeId::Cid,
        TypeId::Unknown,
        TypeId::Void,
    ];

    pub fn from_oid(oid: Oid) -> Option<TypeId> {
        TypeId::ALL
            .iter()
            .copied()
            .find(|t| t.oid() == oid)
            .or_else(|| {
                [TypeId::Record, TypeId::RecordArray]
                    .into_iter()
                    .find(|t| t.oid() == oid)
            })
            .or_else(|| Self::user_defined(oid))
    }

    /// A user-defined type's id (built-in oids are below 16384 and never
    /// look at the registry).
    #[cold]
    fn user_defined(oid: Oid) -> Option<TypeId> {
        if oid < 16384 {
            return None;
        }
        enums::classify(oid)
            .map(|(elem, array)| {
                if array {
                    TypeId::EnumArray(elem)
                } else {
                    TypeId::Enum(elem)
                }
            })
            // A domain is its base type to everything below the binder.
            .or_else(|| domains::base_type_oid(oid).and_then(TypeId::from_oid))
    }

    /// `pg_type.typname`.
    pub fn name(self) -> &'static str {
        match self {
            TypeId::Bool => "bool",
            TypeId::Int2 => "int2",
            TypeId::Int4 => "int4",
            TypeId::Int8 => "int8",
            TypeId::Float4 => "float4",
            TypeId::Float8 => "float8",
            TypeId::Numeric => "numeric",
            TypeId::Text => "text",
            TypeId::Varchar => "varchar",
            TypeId::Bpchar => "bpchar",
            TypeId::Name => "name",
            TypeId::Oid => "oid",
            TypeId::RegClass => "regclass",
            TypeId::RegType => "regtype",
            TypeId::RegProc => "regproc",
            TypeId::RegProcedure => "regprocedure",
            TypeId::RegNamespace => "regnamespace",
            TypeId::RegRole => "regrole",
            TypeId::TextArray => "_text",
            TypeId::NameArray => "_name",
            TypeId::Int2Array => "_int2",
            TypeId::Int4Array => "_int4",
            TypeId::Int8Array => "_int8",
            TypeId::OidArray => "_oid",
            TypeId::ByteaArray => "_bytea",
            TypeId::UuidArray => "_uuid",
            TypeId::BoolArray => "_bool",
            TypeId::Float4Array => "_float4",
            TypeId::Float8Array => "_float8",
            TypeId::NumericArray => "_numeric",
            TypeId::VarcharArray => "_varchar",
            TypeId::BpcharArray => "_bpchar",
            TypeId::DateArray => "_date",
            TypeId::TimestampArray => "_timestamp",
            TypeId::TimestamptzArray => "_timestamptz",
            TypeId::IntervalArray => "_interval",
            TypeId::JsonArray => "_json",
            TypeId::JsonbArray => "_jsonb",
            TypeId::InetArray => "_inet",
            TypeId::CidrArray => "_cidr",
            TypeId::MacAddrArray => "_macaddr",
            TypeId::MacAddr8Array => "_macaddr8",
            TypeId::MoneyArray => "_money",
            TypeId::Date => "date",
            TypeId::Timestamp => "timestamp",
            TypeId::Timestamptz => "timestamptz",
            TypeId::Bytea => "bytea",
            TypeId::Uuid => "uuid",
            TypeId::Inet => "inet",
            TypeId::Cidr => "cidr",
            TypeId::MacAddr => "macaddr",
            TypeId::MacAddr8 => "macaddr8",
            TypeId::Money => "money",
            TypeId::Tid => "tid",
            TypeId::Xid => "xid",
            TypeId::Cid => "cid",
            TypeId::Interval => "interval",
            TypeId::Json => "json",
            TypeId::Jsonb => "jsonb",
            TypeId::Unknown => "unknown",
            TypeId::Void => "void",
            TypeId::Char => "char",
            TypeId::Record => "record",
            TypeId::RecordArray => "_record",
            TypeId::Enum(oid) => enums::type_name(oid, false),
            TypeId::EnumArray(elem) => enums::type_name(elem, true),
        }
    }

    /// `pg_type.typlen`: fixed size in bytes, or -1 for variable length.
    pub fn typlen(self) -> i16 {
        match self {
            TypeId::Bool | TypeId::Char => 1,
            TypeId::Int2 => 2,
            TypeId::Int4
            | TypeId::Oid
            | TypeId::Date
            | TypeId::Float4
            | TypeId::Xid
            | TypeId::Enum(_)
            | TypeId::Cid => 4,
            TypeId::Tid | TypeId::MacAddr => 6,
            t if t.is_reg() => 4,
            TypeId::Int8
            | TypeId::Float8
            | TypeId::Timestamp
            | TypeId::Timestamptz
            | TypeId::MacAddr8
            | TypeId::Money => 8,
            TypeId::Name => 64,
            TypeId::Uuid => 16,
            TypeId::Interval => 16,
            TypeId::Void => 4,
            TypeId::Unknown => -2,
            _ => -1,
        }
    }

    /// The name PostgreSQL uses in messages (`format_type`): integer, bigint,
    /// character varying, timestamp with time zone, ...
    pub fn display_name(self) -> &'static str {
        match self {
            TypeId::Bool => "boolean",
            TypeId::Int2 => "smallint",
            TypeId::Int4 => "integer",
            TypeId::Int8 => "bigint",
            TypeId::Float4 => "real",
            TypeId::Float8 => "double precision",
            TypeId::Numeric => "numeric",
            TypeId::Text => "text",
            TypeId::Varchar => "character varying",
            TypeId::Bpchar => "character",
            TypeId::Name => "name",
            TypeId::Oid => "oid",
            TypeId::RegClass => "regclass",
            TypeId::RegType => "regtype",
            TypeId::RegProc => "regproc",
            TypeId::RegProcedure => "regprocedure",
            TypeId::RegNamespace => "regnamespace",
            TypeId::RegRole => "regrole",
            TypeId::TextArray => "text[]",
            TypeId::NameArray => "name[]",
            TypeId::Int2Array => "smallint[]",
            TypeId::Int4Array => "integer[]",
            TypeId::Int8Array => "bigint[]",
            TypeId::OidArray => "oid[]",
            TypeId::ByteaArray => "bytea[]",
            TypeId::UuidArray => "uuid[]",
            TypeId::BoolArray => "boolean[]",
            TypeId::Float4Array => "real[]",
            TypeId::Float8Array => "double precision[]",
            TypeId::NumericArray => "numeric[]",
            TypeId::VarcharArray => "character varying[]",
            TypeId::BpcharArray => "character[]",
            TypeId::DateArray => "date[]",
            TypeId::TimestampArray => "timestamp without time zone[]",
            TypeId::TimestamptzArray => "timestamp with time zone[]",
            TypeId::IntervalArray => "interval[]",
            TypeId::JsonArray => "json[]",
            TypeId::JsonbArray => "jsonb[]",
            TypeId::InetArray => "inet[]",
            TypeId::CidrArray => "cidr[]",
            TypeId::MacAddrArray => "macaddr[]",
            TypeId::MacAddr8Array => "macaddr8[]",
            TypeId::MoneyArray => "money[]",
            TypeId::Date => "date",
            TypeId::Timestamp => "timestamp without time zone",
            TypeId::Timestamptz => "timestamp with time zone",
            TypeId::Bytea => "bytea",
            TypeId::Uuid => "uuid",
            TypeId::Inet => "inet",
            TypeId::Cidr => "cidr",
            TypeId::MacAddr => "macaddr",
            TypeId::MacAddr8 => "macaddr8",
            TypeId::Money => "money",
            TypeId::Tid => "tid",
            TypeId::Xid => "xid",
            TypeId::Cid => "cid",
            TypeId::Interval => "interval",
            TypeId::Json => "json",
            TypeId::Jsonb => "jsonb",
            TypeId::Unknown => "unknown",
            TypeId::Void => "void",
            TypeId::Char => "\"char\"",
            TypeId::Record => "record",
            TypeId::RecordArray => "record[]",
            TypeId::Enum(oid) => enums::display_name(oid, false),
            TypeId::EnumArray(elem) => enums::display_name(elem, true),
        }
    }

    /// `pg_type.typcategory`: B boolean, N numeric, S string, D date/time,
    /// U user-defined (bytea, uuid, macaddr), I network address (inet,
    /// cidr), T timespan, X unknown, P pseudo-type.
    pub fn category(self) -> char {
        match self {
            TypeId::Bool => 'B',
            TypeId::Int2
            | TypeId::Int4
            | TypeId::Int8
            | TypeId::Float4
            | TypeId::Float8
            | TypeId::Numeric
            | TypeId::Money
            | TypeId::Oid => 'N',
            t if t.is_reg() => 'N',
            t if t.array_element().is_some() => 'A',
            TypeId::Text | TypeId::Varchar | TypeId::Bpchar | TypeId::Name => 'S',
            TypeId::Date | TypeId::Timestamp | TypeId::Timestamptz => 'D',
            TypeId::Bytea | TypeId::Uuid | TypeId::Tid | TypeId::Xid | TypeId::Cid => 'U',
            TypeId::MacAddr | TypeId::MacAddr8 => 'U',
            TypeId::Inet | TypeId::Cidr => 'I',
            TypeId::Interval => 'T',
            TypeId::Unknown => 'X',
            TypeId::Json | TypeId::Jsonb => 'U',
            TypeId::Enum(_) => 'E',
            _ => 'P',
        }
    }

    /// `pg_type.typispreferred` (bool, float8, oid, text, timestamptz, interval).
    pub fn is_preferred(self) -> bool {
        matches!(
            self,
            TypeId::Bool
                | TypeId::Float8
                | TypeId::Oid
                | TypeId::Text
                | TypeId::Timestamptz
                | TypeId::Interval
                | TypeId::Inet
        )
    }

    /// The oid aliases that print as an object's name: regclass, regtype, ...
    pub fn is_reg(self) -> bool {
        matches!(
            self,
            TypeId::RegClass
                | TypeId::RegType
                | TypeId::RegProc
                | TypeId::RegProcedure
                | TypeId::RegNamespace
                | TypeId::RegRole
        )
    }

    /// An array type's element type (pg_type.typelem).
    pub fn array_element(self) -> Option<TypeId> {
        Some(match self {
            TypeId::TextArray => TypeId::Text,
            TypeId::NameArray => TypeId::Name,
            TypeId::Int2Array => TypeId::Int2,
            TypeId::Int4Array => TypeId::Int4,
            TypeId::Int8Array => TypeId::Int8,
            TypeId::OidArray => TypeId::Oid,
            TypeId::ByteaArray => TypeId::Bytea,
            TypeId::UuidArray => TypeId::Uuid,
            TypeId::BoolArray => TypeId::Bool,
            TypeId::Float4Array => TypeId::Float4,
            TypeId::Float8Array => TypeId::Float8,
            TypeId::NumericArray => TypeId::Numeric,
            TypeId::VarcharArray => TypeId::Varchar,
            TypeId::BpcharArray => TypeId::Bpchar,
            TypeId::DateArray => TypeId::Date,
            TypeId::TimestampArray => TypeId::Timestamp,
            TypeId::TimestamptzArray => TypeId::Timestamptz,
            TypeId::IntervalArray => TypeId::Interval,
            TypeId::JsonArray => TypeId::Json,
            TypeId::JsonbArray => TypeId::Jsonb,
            TypeId::InetArray => TypeId::Inet,
            TypeId::CidrArray => TypeId::Cidr,
            TypeId::MacAddrArray => TypeId::MacAddr,
            TypeId::MacAddr8Array => TypeId::MacAddr8,
            TypeId::MoneyArray => TypeId::Money,
            TypeId::EnumArray(elem) => TypeId::Enum(elem),
            TypeId::RecordArray => TypeId::Record,
            _ => return None,
        })
    }

    /// Whether values of this type have a collation (pg_type.typcollation
    /// is set): the string types and arrays of them.
    pub fn is_collatable(self) -> bool {
        use TypeId::*;
        matches!(
            self,
            Text | Varchar | Bpchar | Name | TextArray | VarcharArray | BpcharArray | NameArray
        )
    }

    /// Whether this is an array type.
    pub fn is_array(self) -> bool {
        self.array_element().is_some()
    }

    /// The array type over this element type, where one exists here.
    pub fn array_type(self) -> Option<TypeId> {
        if let TypeId::Enum(elem) = self {
            return Some(TypeId::EnumArray(elem));
        }
        if self == TypeId::Record {
            return Some(TypeId::RecordArray);
        }
        TypeId::ALL
            .iter()
            .copied()
            .find(|a| a.array_element() == Some(self))
    }

    /// pg_type.typarray: the oid of the array type PostgreSQL 15 defines
    /// over this type (whether or not Scalegres has that array type), 0 if none.
    pub fn array_type_oid(self) -> Oid {
        match self {
            TypeId::Bool => 1000,
            TypeId::Int2 => 1005,
            TypeId::Int4 => 1007,
            TypeId::Int8 => 1016,
            TypeId::Float4 => 1021,
            TypeId::Float8 => 1022,
            TypeId::Numeric => 1231,
            TypeId::Text => 1009,
            TypeId::Varchar => 1015,
            TypeId::Bpchar => 1014,
            TypeId::Name => 1003,
            TypeId::Oid => 1028,
            TypeId::RegClass => 2210,
            TypeId::RegType => 2211,
            TypeId::RegProc => 1008,
            TypeId::RegProcedure => 2207,
            TypeId::RegNamespace => 4090,
            TypeId::RegRole => 4097,
            TypeId::Date => 1182,
            TypeId::Timestamp => 1115,
            TypeId::Timestamptz => 1185,
            TypeId::Bytea => 1001,
            TypeId::Uuid => 2951,
            TypeId::Interval => 1187,
            TypeId::Json => 199,
            TypeId::Jsonb => 3807,
            TypeId::Inet => 1041,
            TypeId::Cidr => 651,
            TypeId::MacAddr => 1040,
            TypeId::MacAddr8 => 775,
            TypeId::Money => 791,
            TypeId::Tid => 1010,
            TypeId::Xid => 1011,
            TypeId::Cid => 1012,
            TypeId::Enum(oid) => enums::array_oid(oid),
            TypeId::Record => 2287,
            _ => 0,
        }
    }

    /// Integer types: int2, int4, int8.
    pub fn is_integer(self) -> bool {
        matches!(self, TypeId::Int2 | TypeId::Int4 | TypeId::Int8)
    }

    pub fn is_string(self) -> bool {
        matches!(
            self,
            TypeId::Text
                | TypeId::Varchar
                | TypeId::Bpchar
                | TypeId::Name
                | TypeId::Unknown
                | TypeId::Char
        )
    }

    pub fn is_numeric_family(self) -> bool {
        matches!(
            self,
            TypeId::Int2
                | TypeId::Int4
                | TypeId::Int8
                | TypeId::Float4
                | TypeId::Float8
                | TypeId::Numeric
        )
    }
}

/// A type with its modifier, as stored in `pg_attribute.atttypmod`
/// (-1: none; varchar(n)/char(n): n + 4; numeric(p,s): ((p << 16) | s) + 4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DataType {
    pub id: TypeId,
    pub typmod: i32,
}

impl DataType {
    pub const fn new(id: TypeId) -> Self {
        DataType { id, typmod: -1 }
    }
    pub const fn with_typmod(id: TypeId, typmod: i32) -> Self {
        DataType { id, typmod }
    }
    /// `numeric(p, s)`'s typmod.
    pub fn numeric(precision: i32, scale: i32) -> Self {
        DataType::with_typmod(TypeId::Numeric, numeric::numeric_typmod(precision, scale))
    }
    /// `varchar(n)`.
    pub fn varchar(n: usize) -> Self {
        DataType::with_typmod(TypeId::Varchar, n as i32 + 4)
    }
    /// `char(n)`.
    pub fn bpchar(n: usize) -> Self {
        DataType::with_typmod(TypeId::Bpchar, n as i32 + 4)
    }
    /// PostgreSQL's `format_type` with typmod: `character varying(5)`, `numeric(10,2)`,
    /// `timestamp(3) without time zone`, ...
    pub fn display_name(&self) -> String {
        match (self.id, self.typmod) {
            (TypeId::Varchar | TypeId::Bpchar, t) if t >= 4 => {
                format!("{}({})", self.id.display_name(), t - 4)
            }
            (TypeId::Numeric, t) if t >= 4 => match numeric::numeric_typmod_precision_scale(t) {
                Some((p, s)) => format!("numeric({p},{s})"),
                None => "numeric".to_string(),
            },
            (TypeId::Timestamp, t) if t >= 0 => format!("timestamp({t}) without time zone"),
            (TypeId::Timestamptz, t) if t >= 0 => format!("timestamp({t}) with time zone"),
            // An array's typmod is its element's: `character varying(5)[]`.
            (id, t) if t >= 0 && id.is_array() => {
                let elem = id.array_element().unwrap_or(TypeId::Text);
                format!("{}[]", DataType::with_typmod(elem, t).display_name())
            }
            (id, _) => id.display_name().to_string(),
        }
    }
    /// Declared length of varchar(n)/char(n), if any.
    pub fn char_length(&self) -> Option<usize> {
        (matches!(self.id, TypeId::Varchar | TypeId::Bpchar) && self.typmod >= 4)
            .then(|| (self.typmod - 4) as usize)
    }
}

impl From<TypeId> for DataType {
    fn from(id: TypeId) -> Self {
        DataType::new(id)
    }
}

pub mod array;
pub mod bytea;
pub mod cast;
pub mod datestyle;
pub mod datetime;
pub mod datum_size;
pub mod domains;
pub mod encoding;
pub mod enums;
pub mod float;
pub mod interval;
pub mod io;
pub mod io_functions;
pub mod json;
mod like;
pub mod money;
pub mod network;
pub mod ops;
pub mod tid;
pub mod timezone;
pub mod uuid;
