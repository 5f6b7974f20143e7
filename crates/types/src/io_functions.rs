//! The types' I/O functions as pg_proc rows (typinput, typoutput,
//! typreceive, typsend), with PostgreSQL 15's oids and names. They are not
//! callable from SQL here; they exist so that catalog queries drivers run
//! (pgJDBC's `typinput = 'pg_catalog.array_in'::regproc`, psql's and
//! pg_dump's type descriptions) find what PostgreSQL has.

use common::Oid;

use crate::TypeId;

/// cstring, internal and bytea: the I/O functions' other argument and
/// result types.
const CSTRING: Oid = 2275;
const INTERNAL: Oid = 2281;
const BYTEA: Oid = 17;
const OID: Oid = 26;
const INT4: Oid = 23;

/// Which of a type's four I/O functions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IoKind {
    Input,
    Output,
    Receive,
    Send,
}

/// One I/O function.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IoFunction {
    pub oid: Oid,
    pub name: &'static str,
    pub kind: IoKind,
}

impl IoFunction {
    /// Argument type oids and result type oid, as PostgreSQL declares them
    /// (`of` is the type the function reads or writes; arrays take
    /// anyarray 2277).
    pub fn signature(&self, of: Oid) -> (Vec<Oid>, Oid) {
        let takes_typmod = matches!(
            self.name,
            "array_in"
                | "array_recv"
                | "bpcharin"
                | "bpcharrecv"
                | "varcharin"
                | "varcharrecv"
                | "numeric_in"
                | "numeric_recv"
                | "timestamp_in"
                | "timestamp_recv"
                | "timestamptz_in"
                | "timestamptz_recv"
                | "interval_in"
                | "interval_recv"
        );
        match self.kind {
            IoKind::Input if takes_typmod => (vec![CSTRING, OID, INT4], of),
            IoKind::Input => (vec![CSTRING], of),
            IoKind::Output => (vec![of], CSTRING),
            IoKind::Receive if takes_typmod => (vec![INTERNAL, OID, INT4], of),
            IoKind::Receive => (vec![INTERNAL], of),
            IoKind::Send => (vec![of], BYTEA),
        }
    }
}

/// (input, output, receive, send) oids and names of a base type's functions.
type Quad = [(Oid, &'static str); 4];

const ARRAY: Quad = [
    (750, "array_in"),
    (751, "array_out"),
    (2400, "array_recv"),
    (2401, "array_send"),
];

fn base_quad(t: TypeId) -> Option<Quad> {
    if let TypeId::Enum(_) = t {
        return Some([
            (3504, "enum_in"),
            (3505, "enum_out"),
            (3532, "enum_recv"),
            (3533, "enum_send"),
        ]);
    }
    Some(match t.name() {
        "bool" => [
            (1242, "boolin"),
            (1243, "boolout"),
            (2436, "boolrecv"),
            (2437, "boolsend"),
        ],
        "bytea" => [
            (1244, "byteain"),
            (31, "byteaout"),
            (2412, "bytearecv"),
            (2413, "byteasend"),
        ],
        "name" => [
            (34, "namein"),
            (35, "nameout"),
            (2422, "namerecv"),
            (2423, "namesend"),
        ],
        "int8" => [
            (460, "int8in"),
            (461, "int8out"),
            (2408, "int8recv"),
            (2409, "int8send"),
        ],
        "int2" => [
            (38, "int2in"),
            (39, "int2out"),
            (2404, "int2recv"),
            (2405, "int2send"),
        ],
        "int4" => [
            (42, "int4in"),
            (43, "int4out"),
            (2406, "int4recv"),
            (2407, "int4send"),
        ],
        "regproc" => [
            (44, "regprocin"),
            (45, "regprocout"),
            (2444, "regprocrecv"),
            (2445, "regprocsend"),
        ],
        "text" => [
            (46, "textin"),
            (47, "textout"),
            (2414, "textrecv"),
            (2415, "textsend"),
        ],
        "oid" => [
            (1798, "oidin"),
            (1799, "oidout"),
            (2418, "oidrecv"),
            (2419, "oidsend"),
        ],
        "json" => [
            (321, "json_in"),
            (322, "json_out"),
            (323, "json_recv"),
            (324, "json_send"),
        ],
        "float4" => [
            (200, "float4in"),
            (201, "float4out"),
            (2424, "float4recv"),
            (2425, "float4send"),
        ],
        "float8" => [
            (214, "float8in"),
            (215, "float8out"),
            (2426, "float8recv"),
            (2427, "float8send"),
        ],
        "unknown" => [
            (109, "unknownin"),
            (110, "unknownout"),
            (2416, "unknownrecv"),
            (2417, "unknownsend"),
        ],
        "bpchar" => [
            (1044, "bpcharin"),
            (1045, "bpcharout"),
            (2430, "bpcharrecv"),
            (2431, "bpcharsend"),
        ],
        "varchar" => [
            (1046, "varcharin"),
            (1047, "varcharout"),
            (2432, "varcharrecv"),
            (2433, "varcharsend"),
        ],
        "date" => [
            (1084, "date_in"),
            (1085, "date_out"),
            (2468, "date_recv"),
            (2469, "date_send"),
        ],
        "timestamp" => [
            (1312, "timestamp_in"),
            (1313, "timestamp_out"),
            (2474, "timestamp_recv"),
            (2475, "timestamp_send"),
        ],
        "timestamptz" => [
            (1150, "timestamptz_in"),
            (1151, "timestamptz_out"),
            (2476, "timestamptz_recv"),
            (2477, "timestamptz_send"),
        ],
        "interval" => [
            (1160, "interval_in"),
            (1161, "interval_out"),
            (2478, "interval_recv"),
            (2479, "interval_send"),
        ],
        "numeric" => [
            (1701, "numeric_in"),
            (1702, "numeric_out"),
            (2460, "numeric_recv"),
            (2461, "numeric_send"),
        ],
        "regprocedure" => [
            (2212, "regprocedurein"),
            (2213, "regprocedureout"),
            (2446, "regprocedurerecv"),
            (2447, "regproceduresend"),
        ],
        "regclass" => [
            (2218, "regclassin"),
            (2219, "regclassout"),
            (2452, "regclassrecv"),
            (2453, "regclasssend"),
        ],
        "regtype" => [
            (2220, "regtypein"),
            (2221, "regtypeout"),
            (2454, "regtyperecv"),
            (2455, "regtypesend"),
        ],
        "void" => [
            (2298, "void_in"),
            (2299, "void_out"),
            (3120, "void_recv"),
            (3121, "void_send"),
        ],
        "uuid" => [
            (2952, "uuid_in"),
            (2953, "uuid_out"),
            (2961, "uuid_recv"),
            (2962, "uuid_send"),
        ],
        "money" => [
            (886, "cash_in"),
            (887, "cash_out"),
            (2492, "cash_recv"),
            (2493, "cash_send"),
        ],
        "macaddr" => [
            (436, "macaddr_in"),
            (437, "macaddr_out"),
            (2494, "macaddr_recv"),
            (2495, "macaddr_send"),
        ],
        "macaddr8" => [
            (4110, "macaddr8_in"),
            (4111, "macaddr8_out"),
            (3446, "macaddr8_recv"),
            (3447, "macaddr8_send"),
        ],
        "inet" => [
            (910, "inet_in"),
            (911, "inet_out"),
            (2496, "inet_recv"),
            (2497, "inet_send"),
        ],
        "cidr" => [
            (1267, "cidr_in"),
            (1427, "cidr_out"),
            (2498, "cidr_recv"),
            (2499, "cidr_send"),
        ],
        "tid" => [
            (48, "tidin"),
            (49, "tidout"),
            (2438, "tidrecv"),
            (2439, "tidsend"),
        ],
        "xid" => [
            (50, "xidin"),
            (51, "xidout"),
            (2440, "xidrecv"),
            (2441, "xidsend"),
        ],
        "cid" => [
            (52, "cidin"),
            (53, "cidout"),
            (2442, "cidrecv"),
            (2443, "cidsend"),
        ],
        "jsonb" => [
            (3806, "jsonb_in"),
            (3804, "jsonb_out"),
            (3805, "jsonb_recv"),
            (3803, "jsonb_send"),
        ],
        "regnamespace" => [
            (4084, "regnamespacein"),
            (4085, "regnamespaceout"),
            (4087, "regnamespacerecv"),
            (4088, "regnamespacesend"),
        ],
        "regrole" => [
            (4098, "regrolein"),
            (4092, "regroleout"),
            (4094, "regrolerecv"),
            (4095, "regrolesend"),
        ],
        _ => return None,
    })
}

const KINDS: [IoKind; 4] = [IoKind::Input, IoKind::Output, IoKind::Receive, IoKind::Send];

/// A type's input, output, receive and send functions (None: a type whose
/// functions are not listed).
pub fn io_functions(t: TypeId) -> Option<[IoFunction; 4]> {
    let quad = if t.array_element().is_some() {
        ARRAY
    } else {
        base_quad(t)?
    };
    Some(std::array::from_fn(|i| IoFunction {
        oid: quad[i].0,
        name: quad[i].1,
        kind: KINDS[i],
    }))
}

/// Every I/O function once, with a type it serves (pg_proc rows), built
/// on first use: regproc input and output look functions up here.
pub fn all_io_functions() -> &'static [(IoFunction, TypeId)] {
    static ALL: std::sync::OnceLock<Vec<(IoFunction, TypeId)>> = std::sync::OnceLock::new();
    ALL.get_or_init(|| {
        let mut out: Vec<(IoFunction, TypeId)> = Vec::new();
        for t in TypeId::ALL {
            for f in io_functions(t).into_iter().flatten() {
                if !out.iter().any(|(g, _)| g.oid == f.oid) {
                    out.push((f, t));
                }
            }
        }
        out
    })
}

pub fn io_function_by_oid(oid: Oid) -> Option<IoFunction> {
    all_io_functions()
        .iter()
        .map(|&(f, _)| f)
        .find(|f| f.oid == oid)
}

pub fn io_function_by_name(name: &str) -> Option<IoFunction> {
    all_io_functions()
        .iter()
        .map(|&(f, _)| f)
        .find(|f| f.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arrays_share_array_in_and_oids_are_unique() {
        let int4s = io_functions(TypeId::Int4Array).unwrap();
        assert_eq!(int4s[0].name, "array_in");
        assert_eq!(io_function_by_name("array_in").unwrap().oid, 750);
        assert_eq!(io_function_by_oid(42).unwrap().name, "int4in");
        let all = all_io_functions();
        let mut oids: Vec<Oid> = all.iter().map(|(f, _)| f.oid).collect();
        oids.sort_unstable();
        oids.dedup();
        assert_eq!(oids.len(), all.len());
        // The user-visible types all have theirs.
        for t in [TypeId::Int4, TypeId::Jsonb, TypeId::Interval, TypeId::Uuid] {
            assert!(io_functions(t).is_some(), "{t:?}");
        }
    }
}
