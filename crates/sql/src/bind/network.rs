//! The operators of inet/cidr and macaddr(8) that are not `BinaryOp`s:
//! containment (`<<`, `<<=`, `>>`, `>>=`), overlap (`&&`), bitwise NOT
//! (`~`) and macaddr's `&` and `|`, bound as calls of their functions
//! (PostgreSQL's pg_operator.oprcode). inet's `&`, `|`, `+` and `-` and
//! money's arithmetic are `BinaryOp`s (`types::ops`).

use ::types::TypeId;
use sqlparser::ast;

fn net(t: TypeId) -> bool {
    matches!(t, TypeId::Inet | TypeId::Cidr)
}

/// Both sides network types, or one an untyped literal read as one.
fn net_pair(l: TypeId, r: TypeId) -> bool {
    (net(l) || net(r)) && [l, r].iter().all(|t| net(*t) || *t == TypeId::Unknown)
}

/// The function behind a network or macaddr operator, by operand types;
/// None: not such an operator.
pub(super) fn operator_function(
    op: &ast::BinaryOperator,
    l: TypeId,
    r: TypeId,
) -> Option<&'static str> {
    use ast::BinaryOperator as B;
    let mac =
        |t: TypeId| [l, r].contains(&t) && [l, r].iter().all(|x| *x == t || *x == TypeId::Unknown);
    Some(match op {
        B::PGBitwiseShiftLeft if net_pair(l, r) => "network_sub",
        B::PGBitwiseShiftRight if net_pair(l, r) => "network_sup",
        B::PGOverlap if net_pair(l, r) => "network_overlap",
        B::BitwiseAnd if mac(TypeId::MacAddr) => "macaddr_and",
        B::BitwiseOr if mac(TypeId::MacAddr) => "macaddr_or",
        B::BitwiseAnd if mac(TypeId::MacAddr8) => "macaddr8_and",
        B::BitwiseOr if mac(TypeId::MacAddr8) => "macaddr8_or",
        _ => return None,
    })
}

/// `<<=` and `>>=`, which sqlparser reads as custom operators.
pub(super) fn custom_operator_function(sym: &str) -> Option<&'static str> {
    Some(match sym {
        "<<=" => "network_subeq",
        ">>=" => "network_supeq",
        _ => return None,
    })
}

/// Prefix `~` on a network or macaddr value.
pub(super) fn not_function(t: TypeId) -> Option<&'static str> {
    Some(match t {
        TypeId::Inet | TypeId::Cidr => "inetnot",
        TypeId::MacAddr => "macaddr_not",
        TypeId::MacAddr8 => "macaddr8_not",
        _ => return None,
    })
}
