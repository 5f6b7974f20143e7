//! `inet` and `cidr` (PostgreSQL's network.c and inet_net_pton.c /
//! inet_cidr_ntop.c, rewritten), and `macaddr` / `macaddr8` (mac.c, mac8.c).
//!
//! One value type serves inet and cidr, as in PostgreSQL, whose datum holds
//! the family, the mask length and the address: the static type says which,
//! and shapes the text output (cidr always shows its mask length) and
//! the binary `is_cidr` byte. cidr values never have bits set right of the
//! mask (input, recv and the cidr-returning functions see to it).

use std::cmp::Ordering;
use std::fmt::Write as _;

use common::{PgError, PgResult, SqlState};

/// PostgreSQL's PGSQL_AF_INET / PGSQL_AF_INET6, as sent in binary.
pub const AF_INET: u8 = 2;
pub const AF_INET6: u8 = 3;

/// An IPv4 or IPv6 address with its mask length (PostgreSQL's inet_struct).
/// IPv4 addresses use the first 4 bytes of `addr`; the rest are zero.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Inet {
    /// `AF_INET` or `AF_INET6`.
    pub family: u8,
    pub bits: u8,
    pub addr: [u8; 16],
}

impl Inet {
    /// Address length in bytes: 4 or 16.
    pub fn len(&self) -> usize {
        if self.family == AF_INET {
            4
        } else {
            16
        }
    }

    /// Never empty; here for clippy's `len_without_is_empty`.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// 32 or 128.
    pub fn max_bits(&self) -> u8 {
        if self.family == AF_INET {
            32
        } else {
            128
        }
    }

    fn bytes(&self) -> &[u8] {
        &self.addr[..self.len()]
    }

    /// The address as an unsigned integer (IPv4 in the low 32 bits).
    pub fn as_u128(&self) -> u128 {
        self.bytes()
            .iter()
            .fold(0u128, |acc, b| (acc << 8) | *b as u128)
    }

    fn with_u128(&self, v: u128) -> Inet {
        let mut addr = [0u8; 16];
        let n = self.len();
        for (i, byte) in addr[..n].iter_mut().enumerate() {
            *byte = (v >> (8 * (n - 1 - i))) as u8;
        }
        Inet { addr, ..*self }
    }

    /// The mask of `bits` ones from the top, over this family's width.
    fn mask_of(&self, bits: u8) -> u128 {
        let width = self.max_bits() as u32;
        let full = if width == 128 {
            u128::MAX
        } else {
            (1u128 << width) - 1
        };
        full & !full.checked_shr(bits as u32).unwrap_or(0)
    }

    fn full_mask(&self) -> u128 {
        self.mask_of(self.max_bits())
    }

    /// Whether no bits are set right of the mask (addressOK).
    pub fn is_network(&self) -> bool {
        self.as_u128() & !self.mask_of(self.bits) & self.full_mask() == 0
    }

    /// The address with the bits right of the mask cleared.
    pub fn network_part(&self) -> Inet {
        self.with_u128(self.as_u128() & self.mask_of(self.bits))
    }

    /// The storage form: family, bits, then the address bytes.
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.push(self.family);
        out.push(self.bits);
        out.extend_from_slice(self.bytes());
    }

    /// The inverse of `encode` (None if malformed).
    pub fn decode(b: &[u8]) -> Option<Inet> {
        let (&family, rest) = b.split_first()?;
        let (&bits, addr_bytes) = rest.split_first()?;
        let want = match family {
            AF_INET => 4,
            AF_INET6 => 16,
            _ => return None,
        };
        if addr_bytes.len() != want {
            return None;
        }
        let mut addr = [0u8; 16];
        addr[..want].copy_from_slice(addr_bytes);
        Some(Inet { family, bits, addr })
    }
}

/// First `bits` bits of `a` and `b` compared (bitncmp).
fn bitncmp(a: &Inet, b: &Inet, bits: u8) -> Ordering {
    let m = a.mask_of(bits);
    (a.as_u128() & m).cmp(&(b.as_u128() & m))
}

/// PostgreSQL's network_cmp: family, then the network parts over the
/// smaller mask, then the mask length, then the whole address.
pub fn compare(a: &Inet, b: &Inet) -> Ordering {
    if a.family != b.family {
        return a.family.cmp(&b.family);
    }
    bitncmp(a, b, a.bits.min(b.bits))
        .then(a.bits.cmp(&b.bits))
        .then(bitncmp(a, b, a.max_bits()))
}

fn invalid_input(ty: &str, s: &str) -> PgError {
    PgError::new(
        SqlState::INVALID_TEXT_REPRESENTATION,
        format!("invalid input syntax for type {ty}: \"{s}\""),
    )
}

/// inet_in / cidr_in.
pub fn parse(s: &str, is_cidr: bool) -> PgResult<Inet> {
    let ty = if is_cidr { "cidr" } else { "inet" };
    let parsed = if s.contains(':') {
        parse_ipv6(s.as_bytes()).map(|(addr, bits)| Inet {
            family: AF_INET6,
            bits,
            addr,
        })
    } else if is_cidr {
        parse_cidr_ipv4(s.as_bytes())
    } else {
        parse_inet_ipv4(s.as_bytes())
    };
    let v = parsed.ok_or_else(|| invalid_input(ty, s))?;
    if is_cidr && !v.is_network() {
        return Err(PgError::new(
            SqlState::INVALID_TEXT_REPRESENTATION,
            format!("invalid cidr value: \"{s}\""),
        )
        .with_detail("Value has bits set to right of mask."));
    }
    Ok(v)
}

fn ipv4(octets: &[u8], bits: u8) -> Inet {
    let mut addr = [0u8; 16];
    addr[..octets.len()].copy_from_slice(octets);
    Inet {
        family: AF_INET,
        bits,
        addr,
    }
}

/// Reads a decimal octet (<= 255) at `*i`.
fn octet(s: &[u8], i: &mut usize) -> Option<u8> {
    let start = *i;
    let mut v: u32 = 0;
    while let Some(c) = s.get(*i).filter(|c| c.is_ascii_digit()) {
        v = v * 10 + (c - b'0') as u32;
        if v > 255 {
            return None;
        }
        *i += 1;
    }
    (*i > start).then_some(v as u8)
}

/// `/n` at the end (nothing may follow), n <= `max`.
fn mask_suffix(s: &[u8], i: usize, max: u32) -> Option<Option<u8>> {
    if i == s.len() {
        return Some(None);
    }
    if s[i] != b'/' || !s.get(i + 1).is_some_and(u8::is_ascii_digit) {
        return None;
    }
    let mut v: u32 = 0;
    for &c in &s[i + 1..] {
        if !c.is_ascii_digit() {
            return None;
        }
        v = v * 10 + (c - b'0') as u32;
        if v > max {
            return None;
        }
    }
    Some(Some(v as u8))
}

/// inet_net_pton_ipv4: 1 to 4 octets; fewer than 4 only with a mask that
/// covers no more than the octets given.
fn parse_inet_ipv4(s: &[u8]) -> Option<Inet> {
    let mut octets = Vec::with_capacity(4);
    let mut i = 0;
    while s.get(i).is_some_and(u8::is_ascii_digit) {
        if octets.len() == 4 {
            return None;
        }
        octets.push(octet(s, &mut i)?);
        match s.get(i) {
            None | Some(b'/') => break,
            Some(b'.') => i += 1,
            _ => return None,
        }
    }
    if octets.is_empty() {
        return None;
    }
    let bits = match mask_suffix(s, i, 32)? {
        Some(b) => b,
        None if octets.len() == 4 => 32,
        None => return None,
    };
    if (bits as usize / 8) > octets.len() {
        return None;
    }
    Some(ipv4(&octets, bits))
}

/// inet_cidr_pton_ipv4: dotted octets (or `0x` hex) with the mask implied
/// by the address class when absent, widened to the octets given.
fn parse_cidr_ipv4(s: &[u8]) -> Option<Inet> {
    let mut octets: Vec<u8> = Vec::with_capacity(4);
    let mut i;
    if s.len() > 2 && s[0] == b'0' && (s[1] | 0x20) == b'x' && s[2].is_ascii_hexdigit() {
        i = 2;
        let mut nibbles = Vec::new();
        while let Some(c) = s.get(i).filter(|c| c.is_ascii_hexdigit()) {
            nibbles.push((*c as char).to_digit(16)? as u8);
            i += 1;
        }
        for pair in nibbles.chunks(2) {
            if octets.len() == 4 {
                return None;
            }
            octets.push(if pair.len() == 2 {
                pair[0] << 4 | pair[1]
            } else {
                pair[0] << 4
            });
        }
    } else if s.first().is_some_and(u8::is_ascii_digit) {
        i = 0;
        loop {
            if octets.len() == 4 {
                return None;
            }
            octets.push(octet(s, &mut i)?);
            match s.get(i) {
                None | Some(b'/') => break,
                Some(b'.') if s.get(i + 1).is_some_and(u8::is_ascii_digit) => i += 1,
                _ => return None,
            }
        }
    } else {
        return None;
    }
    if octets.is_empty() {
        return None;
    }
    let given = octets.len() as u8 * 8;
    let bits = match mask_suffix(s, i, 32)? {
        Some(b) => b,
        None => {
            let first = octets[0];
            let mut b = match first {
                240.. => 32,
                224.. => 8,
                192.. => 24,
                128.. => 16,
                _ => 8,
            };
            if b < given {
                b = given;
            }
            if b == 8 && first == 224 {
                b = 4;
            }
            b
        }
    };
    Some(ipv4(&octets, bits))
}

/// IPv6 with `::`, an optional trailing dotted IPv4 part and `/n`
/// (inet_cidr_pton_ipv6; getbits refuses leading zeros in n).
fn parse_ipv6(s: &[u8]) -> Option<([u8; 16], u8)> {
    let (addr_part, bits) = match s.iter().position(|&c| c == b'/') {
        Some(p) => {
            let m = &s[p + 1..];
            if m.is_empty() || !m.iter().all(u8::is_ascii_digit) || (m.len() > 1 && m[0] == b'0') {
                return None;
            }
            let v: u32 = std::str::from_utf8(m).ok()?.parse().ok()?;
            if v > 128 {
                return None;
            }
            (&s[..p], v as u8)
        }
        None => (s, 128),
    };
    let mut words: Vec<u16> = Vec::with_capacity(8);
    let mut gap: Option<usize> = None;
    let mut i = 0;
    let n = addr_part.len();
    if addr_part.starts_with(b":") {
        if !addr_part.starts_with(b"::") {
            return None;
        }
        gap = Some(0);
        i = 2;
    }
    let mut tail_v4 = false;
    while i < n {
        let start = i;
        while i < n && addr_part[i].is_ascii_hexdigit() {
            i += 1;
        }
        if i < n && addr_part[i] == b'.' {
            // The last 32 bits in dotted form.
            let mut j = start;
            let mut oct = Vec::with_capacity(4);
            loop {
                oct.push(octet(addr_part, &mut j)?);
                if j == n {
                    break;
                }
                if addr_part[j] != b'.' || oct.len() == 4 {
                    return None;
                }
                j += 1;
            }
            if oct.len() != 4 || words.len() > 6 {
                return None;
            }
            words.push(u16::from_be_bytes([oct[0], oct[1]]));
            words.push(u16::from_be_bytes([oct[2], oct[3]]));
            tail_v4 = true;
            break;
        }
        let len = i - start;
        if len == 0 || len > 4 || words.len() == 8 {
            return None;
        }
        words.push(u16::from_str_radix(std::str::from_utf8(&addr_part[start..i]).ok()?, 16).ok()?);
        if i == n {
            break;
        }
        if addr_part[i] != b':' {
            return None;
        }
        i += 1;
        if i < n && addr_part[i] == b':' {
            if gap.is_some() {
                return None;
            }
            gap = Some(words.len());
            i += 1;
        } else if i == n {
            return None;
        }
    }
    let _ = tail_v4;
    if words.len() > 8 {
        return None;
    }
    let mut full = [0u16; 8];
    match gap {
        Some(g) => {
            if words.len() == 8 {
                return None;
            }
            full[..g].copy_from_slice(&words[..g]);
            let rest = &words[g..];
            full[8 - rest.len()..].copy_from_slice(rest);
        }
        None if words.len() == 8 => full.copy_from_slice(&words),
        None => return None,
    }
    let mut addr = [0u8; 16];
    for (k, w) in full.iter().enumerate() {
        addr[2 * k..2 * k + 2].copy_from_slice(&w.to_be_bytes());
    }
    Some((addr, bits))
}

/// The address alone, as inet_net_ntop prints it with the full mask.
pub fn write_host(v: &Inet, out: &mut String) {
    if v.family == AF_INET {
        let a = &v.addr;
        let _ = write!(out, "{}.{}.{}.{}", a[0], a[1], a[2], a[3]);
    } else {
        write_ipv6(&v.addr, out);
    }
}

/// inet_ntop6: the longest run (first of equals) of two or more zero words
/// as `::`, an IPv4-mapped or -compatible tail in dotted form.
fn write_ipv6(a: &[u8; 16], out: &mut String) {
    let words: Vec<u16> = (0..8)
        .map(|k| u16::from_be_bytes([a[2 * k], a[2 * k + 1]]))
        .collect();
    let (mut best, mut best_len) = (None, 0usize);
    let mut k = 0;
    while k < 8 {
        if words[k] == 0 {
            let start = k;
            while k < 8 && words[k] == 0 {
                k += 1;
            }
            if k - start > best_len {
                best = Some(start);
                best_len = k - start;
            }
        } else {
            k += 1;
        }
    }
    if best_len < 2 {
        best = None;
    }
    let mut k = 0;
    while k < 8 {
        if let Some(b) = best {
            if k >= b && k < b + best_len {
                if k == b {
                    out.push(':');
                }
                k += 1;
                continue;
            }
        }
        if k != 0 {
            out.push(':');
        }
        // An encapsulated IPv4 address.
        if k == 6
            && best == Some(0)
            && (best_len == 6
                || (best_len == 7 && words[7] != 0x0001)
                || (best_len == 5 && words[5] == 0xffff))
        {
            let _ = write!(out, "{}.{}.{}.{}", a[12], a[13], a[14], a[15]);
            return;
        }
        let _ = write!(out, "{:x}", words[k]);
        k += 1;
    }
    if best.is_some_and(|b| b + best_len == 8) {
        out.push(':');
    }
}

/// inet_out / cidr_out: the mask length shown unless it is the whole
/// address (always for cidr).
pub fn format(v: &Inet, is_cidr: bool, out: &mut String) {
    write_host(v, out);
    if is_cidr || v.bits != v.max_bits() {
        let _ = write!(out, "/{}", v.bits);
    }
}

/// text(inet): the address and always the mask length (network_show).
pub fn show(v: &Inet) -> String {
    let mut s = String::new();
    write_host(v, &mut s);
    let _ = write!(s, "/{}", v.bits);
    s
}

/// abbrev(cidr): IPv4 networks print only the octets the mask covers
/// (inet_cidr_ntop).
pub fn abbrev_cidr(v: &Inet) -> String {
    let mut s = String::new();
    if v.family == AF_INET {
        let whole = (v.bits / 8) as usize;
        if v.bits == 0 {
            s.push('0');
        }
        for (k, b) in v.addr[..whole].iter().enumerate() {
            if k > 0 {
                s.push('.');
            }
            let _ = write!(s, "{b}");
        }
        let part = v.bits % 8;
        if part > 0 {
            if !s.is_empty() {
                s.push('.');
            }
            let m = (((1u16 << part) - 1) << (8 - part)) as u8;
            let _ = write!(s, "{}", v.addr[whole] & m);
        }
        let _ = write!(s, "/{}", v.bits);
    } else {
        abbrev_ipv6(v, &mut s);
    }
    s
}

/// inet_cidr_ntop_ipv6: only the words the mask covers (at least two),
/// the longest zero run among them as `::` (with the C code's habit of
/// letting a shorter run merge into the next), an IPv4 tail in dotted form
/// as far as the mask reaches.
fn abbrev_ipv6(v: &Inet, s: &mut String) {
    let bits = v.bits as usize;
    if bits == 0 {
        s.push_str("::/0");
        return;
    }
    let p = v.network_part().addr;
    let words = bits.div_ceil(16).max(2);
    let word = |i: usize| u16::from_be_bytes([p[2 * i], p[2 * i + 1]]);
    let (mut zero_s, mut zero_l, mut tmp_s, mut tmp_l) = (0, 0, 0, 0);
    for i in 0..words {
        if word(i) == 0 {
            if tmp_l == 0 {
                tmp_s = i;
            }
            tmp_l += 1;
        } else if tmp_l > 0 && zero_l < tmp_l {
            zero_s = tmp_s;
            zero_l = tmp_l;
            tmp_l = 0;
        }
    }
    if tmp_l > 0 && zero_l < tmp_l {
        zero_s = tmp_s;
        zero_l = tmp_l;
    }
    let is_ipv4 = zero_l != words
        && zero_s == 0
        && (zero_l == 6
            || (zero_l == 5 && p[10] == 0xff && p[11] == 0xff)
            || (zero_l == 7 && p[14] != 0 && p[15] != 1));
    for i in 0..words {
        if i >= zero_s && i < zero_s + zero_l {
            if i == zero_s {
                s.push(':');
            }
            if i == words - 1 {
                s.push(':');
            }
            continue;
        }
        if is_ipv4 && i >= 6 {
            s.push(':');
            let last = bits.div_ceil(8).clamp(13, 16);
            let quad: Vec<String> = p[12..last].iter().map(|b| b.to_string()).collect();
            s.push_str(&quad.join("."));
            break;
        }
        if i > 0 {
            s.push(':');
        }
        let _ = write!(s, "{:x}", word(i));
    }
    let _ = write!(s, "/{bits}");
}

/// inet_send / cidr_send: family, bits, is_cidr, address length, address.
pub fn write_binary(v: &Inet, is_cidr: bool, out: &mut Vec<u8>) {
    out.push(v.family);
    out.push(v.bits);
    out.push(is_cidr as u8);
    out.push(v.len() as u8);
    out.extend_from_slice(v.bytes());
}

/// inet_recv / cidr_recv.
pub fn read_binary(b: &[u8], is_cidr: bool) -> PgResult<Inet> {
    let ty = if is_cidr { "cidr" } else { "inet" };
    let bad = |what: &str| {
        PgError::new(
            SqlState::INVALID_BINARY_REPRESENTATION,
            format!("invalid {what} in external \"{ty}\" value"),
        )
    };
    let family = *b.first().ok_or_else(|| bad("address family"))?;
    if family != AF_INET && family != AF_INET6 {
        return Err(bad("address family"));
    }
    let max = if family == AF_INET { 32 } else { 128 };
    let bits = *b.get(1).ok_or_else(|| bad("bits"))?;
    if bits > max {
        return Err(bad("bits"));
    }
    // The is_cidr byte is read and ignored, as PostgreSQL does.
    let nb = *b.get(3).ok_or_else(|| bad("length"))? as usize;
    if nb != max as usize / 8 || b.len() != 4 + nb {
        return Err(bad("length"));
    }
    let mut addr = [0u8; 16];
    addr[..nb].copy_from_slice(&b[4..]);
    let v = Inet { family, bits, addr };
    if is_cidr && !v.is_network() {
        return Err(PgError::new(
            SqlState::INVALID_BINARY_REPRESENTATION,
            "invalid external \"cidr\" value",
        )
        .with_detail("Value has bits set to right of mask."));
    }
    Ok(v)
}

// ----- operators and functions -----

/// `a << b`: a is inside b and smaller.
pub fn sub(a: &Inet, b: &Inet) -> bool {
    a.family == b.family && a.bits > b.bits && bitncmp(a, b, b.bits).is_eq()
}

/// `a <<= b`.
pub fn subeq(a: &Inet, b: &Inet) -> bool {
    a.family == b.family && a.bits >= b.bits && bitncmp(a, b, b.bits).is_eq()
}

/// `a && b`: either contains the other.
pub fn overlap(a: &Inet, b: &Inet) -> bool {
    a.family == b.family && bitncmp(a, b, a.bits.min(b.bits)).is_eq()
}

/// `~ a`.
pub fn not(a: &Inet) -> Inet {
    a.with_u128(!a.as_u128() & a.full_mask())
}

fn size_error(what: &str) -> PgError {
    PgError::new(
        SqlState::INVALID_PARAMETER_VALUE,
        format!("cannot {what} inet values of different sizes"),
    )
}

/// `a & b`, `a | b`: the mask length is the larger one.
pub fn and_or(a: &Inet, b: &Inet, or: bool) -> PgResult<Inet> {
    if a.family != b.family {
        return Err(size_error(if or { "OR" } else { "AND" }));
    }
    let v = if or {
        a.as_u128() | b.as_u128()
    } else {
        a.as_u128() & b.as_u128()
    };
    Ok(Inet {
        bits: a.bits.max(b.bits),
        ..a.with_u128(v)
    })
}

fn out_of_range() -> PgError {
    PgError::new(
        SqlState::NUMERIC_VALUE_OUT_OF_RANGE,
        "result is out of range",
    )
}

/// `a + n` (and `a - n` with -n): 22003 past either end of the family.
pub fn plus(a: &Inet, n: i64) -> PgResult<Inet> {
    let v = a.as_u128();
    let r = if n >= 0 {
        v.checked_add(n as u128)
    } else {
        v.checked_sub(n.unsigned_abs() as u128)
    };
    match r {
        Some(r) if r <= a.full_mask() => Ok(a.with_u128(r)),
        _ => Err(out_of_range()),
    }
}

/// `a - n`.
pub fn minus_int(a: &Inet, n: i64) -> PgResult<Inet> {
    if n == i64::MIN {
        // -n does not fit; go by two steps.
        return plus(&plus(a, i64::MAX)?, 1);
    }
    plus(a, -n)
}

/// `a - b` as a bigint.
pub fn minus(a: &Inet, b: &Inet) -> PgResult<i64> {
    if a.family != b.family {
        return Err(size_error("subtract"));
    }
    let (x, y) = (a.as_u128(), b.as_u128());
    if x >= y {
        i64::try_from(x - y).map_err(|_| out_of_range())
    } else {
        let d = y - x;
        if d > 1u128 << 63 {
            return Err(out_of_range());
        }
        Ok((d as i128).wrapping_neg() as i64)
    }
}

/// hostmask(inet).
pub fn hostmask(a: &Inet) -> Inet {
    Inet {
        bits: a.max_bits(),
        ..a.with_u128(!a.mask_of(a.bits) & a.full_mask())
    }
}

/// netmask(inet).
pub fn netmask(a: &Inet) -> Inet {
    Inet {
        bits: a.max_bits(),
        ..a.with_u128(a.mask_of(a.bits))
    }
}

/// broadcast(inet).
pub fn broadcast(a: &Inet) -> Inet {
    a.with_u128(a.as_u128() | (!a.mask_of(a.bits) & a.full_mask()))
}

/// set_masklen: -1 means the full width; 22023 outside 0..=max.
pub fn set_masklen(a: &Inet, bits: i32, is_cidr: bool) -> PgResult<Inet> {
    let bits = if bits == -1 {
        a.max_bits() as i32
    } else {
        bits
    };
    if bits < 0 || bits > a.max_bits() as i32 {
        return Err(PgError::new(
            SqlState::INVALID_PARAMETER_VALUE,
            format!("invalid mask length: {bits}"),
        ));
    }
    let v = Inet {
        bits: bits as u8,
        ..*a
    };
    Ok(if is_cidr { v.network_part() } else { v })
}

/// inet_merge: the smallest network containing both.
pub fn merge(a: &Inet, b: &Inet) -> PgResult<Inet> {
    if a.family != b.family {
        return Err(PgError::new(
            SqlState::INVALID_PARAMETER_VALUE,
            "cannot merge addresses from different families",
        ));
    }
    let common = (a.as_u128() ^ b.as_u128()).leading_zeros() as i32 - (128 - a.max_bits() as i32);
    let bits = (a.bits.min(b.bits) as i32).min(common) as u8;
    Ok(Inet { bits, ..*a }.network_part())
}

// ----- macaddr and macaddr8 -----

/// sscanf's `%x` (or `%2x`): blanks skipped, an optional sign and `0x`,
/// then hex digits, all within `width` characters.
fn scan_hex(s: &[u8], i: &mut usize, width: Option<usize>) -> Option<i64> {
    while s.get(*i).is_some_and(u8::is_ascii_whitespace) {
        *i += 1;
    }
    let limit = width.map_or(s.len(), |w| (*i + w).min(s.len()));
    let mut neg = false;
    if *i < limit && (s[*i] == b'-' || s[*i] == b'+') {
        neg = s[*i] == b'-';
        *i += 1;
    }
    if *i + 1 < limit
        && s[*i] == b'0'
        && (s[*i + 1] | 0x20) == b'x'
        && s.get(*i + 2).is_some_and(u8::is_ascii_hexdigit)
        && *i + 2 < limit
    {
        *i += 2;
    }
    let start = *i;
    let mut v: u32 = 0;
    while *i < limit && s[*i].is_ascii_hexdigit() {
        v = v.wrapping_mul(16) | (s[*i] as char).to_digit(16)?;
        *i += 1;
    }
    if *i == start {
        return None;
    }
    let v = if neg { v.wrapping_neg() } else { v };
    Some(v as i32 as i64)
}

/// Matches a sscanf format of `%x`/`%2x` and separator characters against
/// the whole string (blanks allowed at the end): the six values or None.
fn scan_mac(s: &[u8], format: &[Option<u8>], width: Option<usize>) -> Option<Vec<i64>> {
    let mut i = 0;
    let mut vals = Vec::with_capacity(6);
    for f in format {
        match f {
            None => vals.push(scan_hex(s, &mut i, width)?),
            Some(c) => {
                if s.get(i) != Some(c) {
                    return None;
                }
                i += 1;
            }
        }
    }
    s[i..].iter().all(u8::is_ascii_whitespace).then_some(vals)
}

/// macaddr_in: the seven layouts PostgreSQL accepts.
pub fn parse_macaddr(s: &str) -> PgResult<[u8; 6]> {
    let b = s.as_bytes();
    let h = None;
    let c = |x: u8| Some(x);
    let layouts: [(Vec<Option<u8>>, Option<usize>); 7] = [
        (
            vec![
                h,
                c(b':'),
                h,
                c(b':'),
                h,
                c(b':'),
                h,
                c(b':'),
                h,
                c(b':'),
                h,
            ],
            None,
        ),
        (
            vec![
                h,
                c(b'-'),
                h,
                c(b'-'),
                h,
                c(b'-'),
                h,
                c(b'-'),
                h,
                c(b'-'),
                h,
            ],
            None,
        ),
        (vec![h, h, h, c(b':'), h, h, h], Some(2)),
        (vec![h, h, h, c(b'-'), h, h, h], Some(2)),
        (vec![h, h, c(b'.'), h, h, c(b'.'), h, h], Some(2)),
        (vec![h, h, c(b'-'), h, h, c(b'-'), h, h], Some(2)),
        (vec![h, h, h, h, h, h], Some(2)),
    ];
    let vals = layouts
        .iter()
        .find_map(|(f, w)| scan_mac(b, f, *w))
        .ok_or_else(|| invalid_input("macaddr", s))?;
    let mut out = [0u8; 6];
    for (o, v) in out.iter_mut().zip(&vals) {
        if !(0..=255).contains(v) {
            return Err(PgError::new(
                SqlState::NUMERIC_VALUE_OUT_OF_RANGE,
                format!("invalid octet value in \"macaddr\" value: \"{s}\""),
            ));
        }
        *o = *v as u8;
    }
    Ok(out)
}

/// macaddr8_in: 6 or 8 pairs of hex digits, optionally separated by one
/// of `:`, `-`, `.` used consistently; 6 bytes get `ff:fe` in the middle.
pub fn parse_macaddr8(s: &str) -> PgResult<[u8; 8]> {
    let fail = || invalid_input("macaddr8", s);
    let b = s.as_bytes();
    let mut i = 0;
    while b.get(i).is_some_and(u8::is_ascii_whitespace) {
        i += 1;
    }
    let mut bytes = Vec::with_capacity(8);
    let mut spacer = None;
    while i + 1 < b.len() {
        let hi = (b[i] as char).to_digit(16).ok_or_else(fail)?;
        let lo = (b[i + 1] as char).to_digit(16).ok_or_else(fail)?;
        if bytes.len() == 8 {
            return Err(fail());
        }
        bytes.push((hi << 4 | lo) as u8);
        i += 2;
        if let Some(&c) = b.get(i).filter(|c| matches!(c, b':' | b'-' | b'.')) {
            match spacer {
                None => spacer = Some(c),
                Some(sp) if sp != c => return Err(fail()),
                _ => {}
            }
            i += 1;
        }
        if (bytes.len() == 6 || bytes.len() == 8) && b.get(i).is_some_and(u8::is_ascii_whitespace) {
            if b[i..].iter().all(u8::is_ascii_whitespace) {
                i = b.len();
            } else {
                return Err(fail());
            }
        }
    }
    if i < b.len() {
        return Err(fail());
    }
    match bytes.len() {
        6 => Ok([
            bytes[0], bytes[1], bytes[2], 0xff, 0xfe, bytes[3], bytes[4], bytes[5],
        ]),
        8 => Ok(bytes.try_into().map_err(|_| fail())?),
        _ => Err(fail()),
    }
}

/// `08:00:2b:01:02:03`.
pub fn format_mac(bytes: &[u8], out: &mut String) {
    for (k, b) in bytes.iter().enumerate() {
        if k > 0 {
            out.push(':');
        }
        let _ = write!(out, "{b:02x}");
    }
}

/// macaddr8 → macaddr: only addresses with `ff:fe` in bytes 4 and 5.
pub fn macaddr8_to_macaddr(m: &[u8; 8]) -> PgResult<[u8; 6]> {
    if m[3] != 0xff || m[4] != 0xfe {
        return Err(PgError::new(
            SqlState::NUMERIC_VALUE_OUT_OF_RANGE,
            "macaddr8 data out of range to convert to macaddr",
        )
        .with_hint(
            "Only addresses that have FF and FE as values in the 4th and 5th bytes from the left, for example xx:xx:xx:ff:fe:xx:xx:xx, are eligible to be converted from macaddr8 to macaddr.",
        ));
    }
    Ok([m[0], m[1], m[2], m[5], m[6], m[7]])
}

/// macaddr → macaddr8.
pub fn macaddr_to_macaddr8(m: &[u8; 6]) -> [u8; 8] {
    [m[0], m[1], m[2], 0xff, 0xfe, m[3], m[4], m[5]]
}

#[cfg(test)]
#[path = "network_tests.rs"]
mod tests;
