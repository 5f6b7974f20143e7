use super::*;
use crate::io::{format_binary, parse_binary, parse_text, to_text};
use crate::{DataType, IoSettings, TypeId, Value};

fn show_as(ty: TypeId, s: &str) -> String {
    match parse_text(DataType::new(ty), s, &IoSettings::UTC) {
        Ok(v) => to_text(&v, ty, &IoSettings::UTC),
        Err(e) => format!(
            "ERROR {}: {}{}",
            e.code.0,
            e.message,
            e.detail.map(|d| format!(" ({d})")).unwrap_or_default()
        ),
    }
}

fn inet(s: &str) -> Inet {
    parse(s, false).unwrap()
}

#[test]
fn inet_text() {
    let i = |s| show_as(TypeId::Inet, s);
    assert_eq!(i("192.168.1.5/24"), "192.168.1.5/24");
    assert_eq!(i("192.168.1.5/32"), "192.168.1.5");
    assert_eq!(i("10.1/16"), "10.1.0.0/16");
    assert_eq!(i("0.0.0.0/0"), "0.0.0.0/0");
    assert_eq!(i("::"), "::");
    assert_eq!(i("1::"), "1::");
    assert_eq!(i("1:0:0:2:0:0:0:3"), "1:0:0:2::3");
    assert_eq!(i("2001:db8:0:0:1:0:0:1"), "2001:db8::1:0:0:1");
    assert_eq!(i("1:0:2:3:4:5:6:7"), "1:0:2:3:4:5:6:7");
    assert_eq!(i("::ffff:1.2.3.4"), "::ffff:1.2.3.4");
    assert_eq!(i("::1.2.3.4"), "::1.2.3.4");
    assert_eq!(i("::1"), "::1");
    assert_eq!(i("FFFF::1/64"), "ffff::1/64");
    for bad in [
        "",
        " 1.2.3.4",
        "1.2.3.4 ",
        "10.1.2",
        "1.2.3.4/33",
        "1.2.3.256",
        "1.2.3.4.5",
        "1..2.3",
        "1:2:3:4:5:6:7:8:9",
        "1::2::3",
        "::1/129",
        "::1/08",
        ":1::",
        "1:2:3:4:5:6:7:",
        "12345::",
        "::1.2.3",
        "abc",
    ] {
        assert_eq!(
            i(bad),
            format!("ERROR 22P02: invalid input syntax for type inet: \"{bad}\""),
            "{bad}"
        );
    }
}

#[test]
fn cidr_text() {
    let c = |s| show_as(TypeId::Cidr, s);
    assert_eq!(c("10"), "10.0.0.0/8");
    assert_eq!(c("128"), "128.0.0.0/16");
    assert_eq!(c("192"), "192.0.0.0/24");
    assert_eq!(c("224"), "224.0.0.0/4");
    assert_eq!(c("240"), "240.0.0.0/32");
    assert_eq!(c("10.1.2"), "10.1.2.0/24");
    assert_eq!(c("192.168"), "192.168.0.0/24");
    assert_eq!(c("0x0a0b"), "10.11.0.0/16");
    assert_eq!(c("1.2.3.4"), "1.2.3.4/32");
    assert_eq!(c("::/0"), "::/0");
    assert_eq!(
        c("1.2.3.4/24"),
        "ERROR 22P02: invalid cidr value: \"1.2.3.4/24\" (Value has bits set to right of mask.)"
    );
    assert_eq!(
        c("ffff::1/16"),
        "ERROR 22P02: invalid cidr value: \"ffff::1/16\" (Value has bits set to right of mask.)"
    );
    assert_eq!(
        c("192.168.1.0/33"),
        "ERROR 22P02: invalid input syntax for type cidr: \"192.168.1.0/33\""
    );
}

#[test]
fn binary_round_trips() {
    for (ty, s) in [
        (TypeId::Inet, "192.168.1.5/24"),
        (TypeId::Inet, "2001:db8::1/64"),
        (TypeId::Cidr, "10.0.0.0/8"),
        (TypeId::Cidr, "::/0"),
        (TypeId::MacAddr, "08:00:2b:01:02:03"),
        (TypeId::MacAddr8, "08:00:2b:01:02:03:04:05"),
        (TypeId::Money, "-$1,234.56"),
    ] {
        let v = parse_text(DataType::new(ty), s, &IoSettings::UTC).unwrap();
        let mut b = Vec::new();
        format_binary(&v, ty, &mut b);
        let back = parse_binary(DataType::new(ty), &b).unwrap();
        assert_eq!(back, v, "{s}");
        assert_eq!(to_text(&back, ty, &IoSettings::UTC), s);
        let mut stored = Vec::new();
        if let Value::Inet(n) = &v {
            n.encode(&mut stored);
            assert_eq!(Inet::decode(&stored), Some(*n));
        }
    }
    let mut b = Vec::new();
    format_binary(&Value::Inet(inet("192.168.1.5/24")), TypeId::Inet, &mut b);
    assert_eq!(b, [2, 24, 0, 4, 192, 168, 1, 5]);
    b.clear();
    format_binary(&Value::Inet(inet("10.0.0.0/8")), TypeId::Cidr, &mut b);
    assert_eq!(b, [2, 8, 1, 4, 10, 0, 0, 0]);
    let err = read_binary(&[2, 8, 1, 4, 10, 1, 0, 0], true).unwrap_err();
    assert_eq!(err.code.0, "22P03");
}

#[test]
fn ordering_is_network_cmp() {
    let mut v: Vec<Inet> = [
        "::1",
        "10.0.0.0/16",
        "10.0.0.0/8",
        "10.1.2.3/8",
        "0.0.0.0/0",
        "192.168.1.5/24",
        "192.168.1.200",
    ]
    .iter()
    .map(|s| inet(s))
    .collect();
    v.sort_by(compare);
    let shown: Vec<String> = v
        .iter()
        .map(|n| {
            let mut s = String::new();
            format(n, false, &mut s);
            s
        })
        .collect();
    assert_eq!(
        shown,
        [
            "0.0.0.0/0",
            "10.0.0.0/8",
            "10.1.2.3/8",
            "10.0.0.0/16",
            "192.168.1.5/24",
            "192.168.1.200",
            "::1"
        ]
    );
}

#[test]
fn functions() {
    let a = inet("192.168.1.5/24");
    let text = |n: Inet| {
        let mut s = String::new();
        format(&n, false, &mut s);
        s
    };
    assert_eq!(text(netmask(&a)), "255.255.255.0");
    assert_eq!(text(hostmask(&a)), "0.0.0.255");
    assert_eq!(text(broadcast(&a)), "192.168.1.255/24");
    assert_eq!(text(a.network_part()), "192.168.1.0/24");
    assert_eq!(show(&inet("1.2.3.4")), "1.2.3.4/32");
    assert_eq!(
        abbrev_cidr(&parse("10.1.2.0/23", true).unwrap()),
        "10.1.2/23"
    );
    assert_eq!(abbrev_cidr(&parse("0.0.0.0/0", true).unwrap()), "0/0");
    for (net, short) in [
        ("2001:db8:1::/48", "2001:db8:1/48"),
        ("1::/16", "1::/16"),
        ("0:1::/32", "::1/32"),
        ("1:0:0:4::/64", "1::4/64"),
        ("::ffff:1.2.3.0/120", "::ffff:1.2.3/120"),
        ("::/0", "::/0"),
    ] {
        assert_eq!(abbrev_cidr(&parse(net, true).unwrap()), short);
    }
    assert!(sub(&a, &inet("192.168.0.0/16")));
    assert!(!sub(&a, &inet("192.168.1.0/24")));
    assert!(subeq(&a, &inet("192.168.1.0/24")));
    assert!(overlap(&inet("10.0.0.0/8"), &inet("10.1.0.0/16")));
    assert!(!overlap(&inet("10.0.0.0/8"), &inet("::/0")));
    assert_eq!(text(plus(&a, 10).unwrap()), "192.168.1.15/24");
    assert_eq!(text(plus(&inet("::1"), 65535).unwrap()), "::0.1.0.0");
    assert_eq!(
        plus(&inet("255.255.255.255"), 1).unwrap_err().message,
        "result is out of range"
    );
    assert!(minus_int(&inet("0.0.0.0"), 1).is_err());
    assert_eq!(minus(&inet("10.0.0.0"), &inet("9.255.255.0")).unwrap(), 256);
    assert_eq!(minus(&inet("::1"), &inet("::5")).unwrap(), -4);
    assert!(minus(&inet("::1"), &inet("ffff::")).is_err());
    assert_eq!(text(not(&a)), "63.87.254.250/24");
    assert_eq!(
        text(merge(&inet("192.168.1.5/24"), &inet("192.168.2.5/24")).unwrap()),
        "192.168.0.0/22"
    );
    assert_eq!(
        text(merge(&inet("::1"), &inet("::2/120")).unwrap()),
        "::/120"
    );
    assert_eq!(text(set_masklen(&a, 16, false).unwrap()), "192.168.1.5/16");
    assert_eq!(
        set_masklen(&a, 33, false).unwrap_err().message,
        "invalid mask length: 33"
    );
}

#[test]
fn macaddr_text() {
    let m = |s| show_as(TypeId::MacAddr, s);
    for ok in [
        "08:00:2b:01:02:03",
        "08-00-2b-01-02-03",
        "08002b:010203",
        "08002b-010203",
        "0800.2b01.0203",
        "0800-2b01-0203",
        "08002b010203",
        " 08:00:2B:01:02:03 ",
        "8:0:2b:1:2:3",
    ] {
        assert_eq!(m(ok), "08:00:2b:01:02:03", "{ok}");
    }
    assert_eq!(
        m("08:00:2b:01:02"),
        "ERROR 22P02: invalid input syntax for type macaddr: \"08:00:2b:01:02\""
    );
    assert_eq!(
        m("08:00:2b:01:02:1ff"),
        "ERROR 22003: invalid octet value in \"macaddr\" value: \"08:00:2b:01:02:1ff\""
    );
    let m8 = |s| show_as(TypeId::MacAddr8, s);
    assert_eq!(m8("08:00:2b:01:02:03"), "08:00:2b:ff:fe:01:02:03");
    assert_eq!(m8("08002b0102030405"), "08:00:2b:01:02:03:04:05");
    assert_eq!(m8("0800.2b01.0203.0405"), "08:00:2b:01:02:03:04:05");
    assert_eq!(m8(" 08:00:2b:01:02:03:04:05 "), "08:00:2b:01:02:03:04:05");
    for bad in [
        "08:00:2b:01:02:03:04:05:06",
        "08:00-2b:01:02:03:04:05",
        "08:00:2b:01:02:03:04",
        "08:00:2b:01:02:03 x",
    ] {
        assert_eq!(
            m8(bad),
            format!("ERROR 22P02: invalid input syntax for type macaddr8: \"{bad}\"")
        );
    }
    assert!(macaddr8_to_macaddr(&[8, 0, 0x2b, 1, 2, 3, 4, 5]).is_err());
}
