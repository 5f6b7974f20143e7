//! Functions over inet/cidr, macaddr/macaddr8 and money (PostgreSQL's
//! network.c, mac.c, mac8.c, cash.c), and the functions behind their
//! operators that are not `BinaryOp`s (`<<`, `<<=`, `>>`, `>>=`, `&&`, `~`).

use common::{PgError, PgResult};

use super::{f, BuiltinFunction};
use crate::network::{self as net, Inet as InetValue};
use crate::{TypeId, Value};

use TypeId::{Bool, Cidr, Inet, Int4, Int8, MacAddr, MacAddr8, Money, Text};

pub(super) static BUILTINS: &[BuiltinFunction] = &[
    f("host", &[Inet], Text, host),
    f("hostmask", &[Inet], Inet, |a| unary(a, net::hostmask)),
    f("masklen", &[Inet], Int4, |a| {
        Ok(Value::Int4(inet(a, 0)?.bits as i32))
    }),
    f("set_masklen", &[Inet, Int4], Inet, |a| {
        set_masklen(a, false)
    }),
    f("set_masklen", &[Cidr, Int4], Cidr, |a| set_masklen(a, true)),
    f("netmask", &[Inet], Inet, |a| unary(a, net::netmask)),
    f("network", &[Inet], Cidr, |a| unary(a, |v| v.network_part())),
    f("family", &[Inet], Int4, |a| {
        Ok(Value::Int4(if inet(a, 0)?.family == net::AF_INET {
            4
        } else {
            6
        }))
    }),
    f("broadcast", &[Inet], Inet, |a| unary(a, net::broadcast)),
    f("abbrev", &[Inet], Text, |a| {
        let mut s = String::new();
        net::format(inet(a, 0)?, false, &mut s);
        Ok(Value::Text(s))
    }),
    f("abbrev", &[Cidr], Text, |a| {
        Ok(Value::Text(net::abbrev_cidr(inet(a, 0)?)))
    }),
    f("text", &[Inet], Text, |a| {
        Ok(Value::Text(net::show(inet(a, 0)?)))
    }),
    f("inet_same_family", &[Inet, Inet], Bool, |a| {
        Ok(Value::Bool(inet(a, 0)?.family == inet(a, 1)?.family))
    }),
    f("inet_merge", &[Inet, Inet], Cidr, |a| {
        net::merge(inet(a, 0)?, inet(a, 1)?).map(Value::Inet)
    }),
    f("network_sub", &[Inet, Inet], Bool, |a| pred(a, net::sub)),
    f("network_subeq", &[Inet, Inet], Bool, |a| {
        pred(a, net::subeq)
    }),
    f("network_sup", &[Inet, Inet], Bool, |a| {
        pred(a, |x, y| net::sub(y, x))
    }),
    f("network_supeq", &[Inet, Inet], Bool, |a| {
        pred(a, |x, y| net::subeq(y, x))
    }),
    f("network_overlap", &[Inet, Inet], Bool, |a| {
        pred(a, net::overlap)
    }),
    f("inetnot", &[Inet], Inet, |a| unary(a, net::not)),
    f("inetand", &[Inet, Inet], Inet, |a| {
        net::and_or(inet(a, 0)?, inet(a, 1)?, false).map(Value::Inet)
    }),
    f("inetor", &[Inet, Inet], Inet, |a| {
        net::and_or(inet(a, 0)?, inet(a, 1)?, true).map(Value::Inet)
    }),
    f("inetpl", &[Inet, Int8], Inet, |a| {
        net::plus(inet(a, 0)?, int8(a, 1)?).map(Value::Inet)
    }),
    f("inetmi_int8", &[Inet, Int8], Inet, |a| {
        net::minus_int(inet(a, 0)?, int8(a, 1)?).map(Value::Inet)
    }),
    f("inetmi", &[Inet, Inet], Int8, |a| {
        net::minus(inet(a, 0)?, inet(a, 1)?).map(Value::Int8)
    }),
    // ----- macaddr, macaddr8 -----
    f("trunc", &[MacAddr], MacAddr, |a| {
        let m = mac(a)?;
        Ok(Value::MacAddr([m[0], m[1], m[2], 0, 0, 0]))
    }),
    f("trunc", &[MacAddr8], MacAddr8, |a| {
        let m = mac8(a)?;
        Ok(Value::MacAddr8([m[0], m[1], m[2], 0, 0, 0, 0, 0]))
    }),
    f("macaddr8_set7bit", &[MacAddr8], MacAddr8, |a| {
        let mut m = mac8(a)?;
        m[0] |= 0x02;
        Ok(Value::MacAddr8(m))
    }),
    f("macaddr_not", &[MacAddr], MacAddr, |a| {
        Ok(Value::MacAddr(mac(a)?.map(|b| !b)))
    }),
    f("macaddr_and", &[MacAddr, MacAddr], MacAddr, |a| {
        mac_bits(a, |x, y| x & y)
    }),
    f("macaddr_or", &[MacAddr, MacAddr], MacAddr, |a| {
        mac_bits(a, |x, y| x | y)
    }),
    f("macaddr8_not", &[MacAddr8], MacAddr8, |a| {
        Ok(Value::MacAddr8(mac8(a)?.map(|b| !b)))
    }),
    f("macaddr8_and", &[MacAddr8, MacAddr8], MacAddr8, |a| {
        mac8_bits(a, |x, y| x & y)
    }),
    f("macaddr8_or", &[MacAddr8, MacAddr8], MacAddr8, |a| {
        mac8_bits(a, |x, y| x | y)
    }),
    // ----- money -----
    f("cash_words", &[Money], Text, |a| match a.first() {
        Some(Value::Money(m)) => Ok(Value::Text(crate::money::words(*m))),
        _ => Err(bad_arg()),
    }),
    f("cashlarger", &[Money, Money], Money, |a| match a {
        [Value::Money(x), Value::Money(y)] => Ok(Value::Money(*x.max(y))),
        _ => Err(bad_arg()),
    }),
    f("cashsmaller", &[Money, Money], Money, |a| match a {
        [Value::Money(x), Value::Money(y)] => Ok(Value::Money(*x.min(y))),
        _ => Err(bad_arg()),
    }),
];

fn bad_arg() -> PgError {
    PgError::internal("unexpected argument to a network or money function")
}

fn inet(a: &[Value], i: usize) -> PgResult<&InetValue> {
    match a.get(i) {
        Some(Value::Inet(v)) => Ok(v),
        _ => Err(bad_arg()),
    }
}

fn int8(a: &[Value], i: usize) -> PgResult<i64> {
    a.get(i).and_then(Value::as_i64).ok_or_else(bad_arg)
}

fn mac(a: &[Value]) -> PgResult<[u8; 6]> {
    match a.first() {
        Some(Value::MacAddr(m)) => Ok(*m),
        _ => Err(bad_arg()),
    }
}

fn mac8(a: &[Value]) -> PgResult<[u8; 8]> {
    match a.first() {
        Some(Value::MacAddr8(m)) => Ok(*m),
        _ => Err(bad_arg()),
    }
}

fn mac_bits(a: &[Value], op: fn(u8, u8) -> u8) -> PgResult<Value> {
    match a {
        [Value::MacAddr(x), Value::MacAddr(y)] => {
            Ok(Value::MacAddr(std::array::from_fn(|k| op(x[k], y[k]))))
        }
        _ => Err(bad_arg()),
    }
}

fn mac8_bits(a: &[Value], op: fn(u8, u8) -> u8) -> PgResult<Value> {
    match a {
        [Value::MacAddr8(x), Value::MacAddr8(y)] => {
            Ok(Value::MacAddr8(std::array::from_fn(|k| op(x[k], y[k]))))
        }
        _ => Err(bad_arg()),
    }
}

fn unary(a: &[Value], op: fn(&InetValue) -> InetValue) -> PgResult<Value> {
    Ok(Value::Inet(op(inet(a, 0)?)))
}

fn pred(a: &[Value], op: fn(&InetValue, &InetValue) -> bool) -> PgResult<Value> {
    Ok(Value::Bool(op(inet(a, 0)?, inet(a, 1)?)))
}

fn host(a: &[Value]) -> PgResult<Value> {
    let mut s = String::new();
    net::write_host(inet(a, 0)?, &mut s);
    Ok(Value::Text(s))
}

fn set_masklen(a: &[Value], is_cidr: bool) -> PgResult<Value> {
    let bits = match a.get(1) {
        Some(Value::Int4(b)) => *b,
        _ => return Err(bad_arg()),
    };
    net::set_masklen(inet(a, 0)?, bits, is_cidr).map(Value::Inet)
}
