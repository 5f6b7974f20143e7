//! Just enough DER to read a client certificate's subject, issuer and serial
//! number for pg_stat_ssl. Anything malformed gives None: the certificate
//! was already verified by rustls, so this only has to be total, not strict.

/// A certificate's names as PostgreSQL's X509_NAME_to_cstring writes them
/// ("/CN=alice/O=Example", in certificate order) and its serial in decimal.
pub(super) struct CertNames {
    pub subject: String,
    pub issuer: String,
    pub serial: String,
}

impl CertNames {
    pub fn parse(der: &[u8]) -> Option<CertNames> {
        let (tag, cert, _) = read_tlv(der)?;
        expect(tag, 0x30)?;
        let (tag, tbs, _) = read_tlv(cert)?;
        expect(tag, 0x30)?;
        let (mut tag, mut value, mut rest) = read_tlv(tbs)?;
        // [0] EXPLICIT version, absent for v1 certificates.
        if tag == 0xa0 {
            (tag, value, rest) = read_tlv(rest)?;
        }
        expect(tag, 0x02)?;
        let serial = to_decimal(value);
        let (_signature_alg, rest) = skip(rest)?;
        let (tag, issuer, rest) = read_tlv(rest)?;
        expect(tag, 0x30)?;
        let (_validity, rest) = skip(rest)?;
        let (tag, subject, _) = read_tlv(rest)?;
        expect(tag, 0x30)?;
        Some(CertNames {
            subject: format_name(subject)?,
            issuer: format_name(issuer)?,
            serial,
        })
    }
}

fn expect(tag: u8, want: u8) -> Option<()> {
    (tag == want).then_some(())
}

/// One tag-length-value: (tag, value, what follows).
fn read_tlv(b: &[u8]) -> Option<(u8, &[u8], &[u8])> {
    let (&tag, b) = b.split_first()?;
    let (&first, mut b) = b.split_first()?;
    let len = if first < 0x80 {
        first as usize
    } else {
        let n = (first & 0x7f) as usize;
        if n == 0 || n > 4 || b.len() < n {
            return None;
        }
        let len = b[..n]
            .iter()
            .fold(0usize, |acc, &x| (acc << 8) | x as usize);
        b = &b[n..];
        len
    };
    if b.len() < len {
        return None;
    }
    Some((tag, &b[..len], &b[len..]))
}

fn skip(b: &[u8]) -> Option<((), &[u8])> {
    read_tlv(b).map(|(_, _, rest)| ((), rest))
}

/// Name ::= SEQUENCE OF SET OF SEQUENCE { type OID, value string }.
fn format_name(mut rdns: &[u8]) -> Option<String> {
    let mut out = String::new();
    while !rdns.is_empty() {
        let (tag, mut set, rest) = read_tlv(rdns)?;
        expect(tag, 0x31)?;
        rdns = rest;
        while !set.is_empty() {
            let (tag, attr, rest) = read_tlv(set)?;
            expect(tag, 0x30)?;
            set = rest;
            let (tag, oid, attr) = read_tlv(attr)?;
            expect(tag, 0x06)?;
            let (string_tag, value, _) = read_tlv(attr)?;
            out.push('/');
            out.push_str(&short_name(oid));
            out.push('=');
            escape_value(&decode_string(string_tag, value), &mut out);
        }
    }
    Some(out)
}

/// OpenSSL's short names for the usual attributes; dotted form otherwise.
fn short_name(oid: &[u8]) -> String {
    const X520: [u8; 2] = [0x55, 0x04];
    const PKCS9_EMAIL: &[u8] = &[0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x09, 0x01];
    const PILOT: &[u8] = &[0x09, 0x92, 0x26, 0x89, 0x93, 0xf2, 0x2c, 0x64, 0x01];
    if oid.len() == 3 && oid[..2] == X520 {
        let name = match oid[2] {
            3 => Some("CN"),
            4 => Some("SN"),
            5 => Some("serialNumber"),
            6 => Some("C"),
            7 => Some("L"),
            8 => Some("ST"),
            9 => Some("street"),
            10 => Some("O"),
            11 => Some("OU"),
            12 => Some("title"),
            17 => Some("postalCode"),
            42 => Some("GN"),
            _ => None,
        };
        if let Some(n) = name {
            return n.to_string();
        }
    }
    if oid == PKCS9_EMAIL {
        return "emailAddress".into();
    }
    if oid.len() == PILOT.len() + 1 && oid.starts_with(PILOT) {
        match oid[PILOT.len()] {
            1 => return "UID".into(),
            25 => return "DC".into(),
            _ => {}
        }
    }
    dotted(oid)
}

fn dotted(oid: &[u8]) -> String {
    let mut parts: Vec<u64> = Vec::new();
    let mut acc: u64 = 0;
    for &b in oid {
        acc = (acc << 7) | (b & 0x7f) as u64;
        if b & 0x80 == 0 {
            if parts.is_empty() {
                let first = (acc / 40).min(2);
                parts.push(first);
                parts.push(acc - first * 40);
            } else {
                parts.push(acc);
            }
            acc = 0;
        }
    }
    parts
        .iter()
        .map(u64::to_string)
        .collect::<Vec<_>>()
        .join(".")
}

fn decode_string(tag: u8, v: &[u8]) -> String {
    match tag {
        // BMPString: UCS-2, big-endian.
        0x1e => {
            let units: Vec<u16> = v
                .chunks_exact(2)
                .map(|c| u16::from_be_bytes([c[0], c[1]]))
                .collect();
            String::from_utf16_lossy(&units)
        }
        // UniversalString: UCS-4, big-endian.
        0x1c => v
            .chunks_exact(4)
            .map(|c| char::from_u32(u32::from_be_bytes([c[0], c[1], c[2], c[3]])).unwrap_or('?'))
            .collect(),
        _ => String::from_utf8_lossy(v).into_owned(),
    }
}

/// RFC 2253 escaping, as ASN1_STRFLGS_RFC2253 does (multi-byte characters
/// are kept as they are).
fn escape_value(v: &str, out: &mut String) {
    let last = v.chars().count().saturating_sub(1);
    for (i, c) in v.chars().enumerate() {
        let special = matches!(c, ',' | '+' | '"' | '\\' | '<' | '>' | ';')
            || (i == 0 && (c == '#' || c == ' '))
            || (i == last && c == ' ');
        if special {
            out.push('\\');
        }
        out.push(c);
    }
}

/// A DER INTEGER's two's-complement bytes in decimal (BN_bn2dec).
fn to_decimal(bytes: &[u8]) -> String {
    let negative = bytes.first().is_some_and(|b| b & 0x80 != 0);
    let mut mag: Vec<u8> = if negative {
        // Two's complement: invert and add one.
        let mut v: Vec<u8> = bytes.iter().map(|b| !b).collect();
        for b in v.iter_mut().rev() {
            let (n, carry) = b.overflowing_add(1);
            *b = n;
            if !carry {
                break;
            }
        }
        v
    } else {
        bytes.to_vec()
    };
    // Repeated division by 10 on a big-endian byte string.
    let mut digits = Vec::new();
    while mag.iter().any(|&b| b != 0) {
        let mut rem = 0u32;
        for b in mag.iter_mut() {
            let cur = (rem << 8) | *b as u32;
            *b = (cur / 10) as u8;
            rem = cur % 10;
        }
        digits.push(b'0' + rem as u8);
    }
    if digits.is_empty() {
        digits.push(b'0');
    }
    if negative {
        digits.push(b'-');
    }
    digits.reverse();
    String::from_utf8(digits).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimal_serials() {
        assert_eq!(to_decimal(&[0]), "0");
        assert_eq!(to_decimal(&[0x01, 0x00]), "256");
        assert_eq!(to_decimal(&[0x00, 0xff]), "255");
        assert_eq!(to_decimal(&[0xff]), "-1");
        assert_eq!(
            to_decimal(&[0x00, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]),
            "18446744073709551615"
        );
    }

    #[test]
    fn names_and_escaping() {
        assert_eq!(short_name(&[0x55, 0x04, 0x03]), "CN");
        assert_eq!(short_name(&[0x2a, 0x03]), "1.2.3");
        let mut s = String::new();
        escape_value(" a,b ", &mut s);
        assert_eq!(s, "\\ a\\,b\\ ");
    }

    #[test]
    fn parses_a_generated_certificate() {
        let key = rcgen::KeyPair::generate().unwrap();
        let mut params = rcgen::CertificateParams::new(vec!["localhost".into()]).unwrap();
        params.distinguished_name = rcgen::DistinguishedName::new();
        params
            .distinguished_name
            .push(rcgen::DnType::CommonName, "alice");
        params
            .distinguished_name
            .push(rcgen::DnType::OrganizationName, "Example, Inc");
        params.serial_number = Some(rcgen::SerialNumber::from_slice(&[0x01, 0x02]));
        let cert = params.self_signed(&key).unwrap();
        let names = CertNames::parse(cert.der()).unwrap();
        assert_eq!(names.subject, "/CN=alice/O=Example\\, Inc");
        assert_eq!(names.issuer, names.subject);
        assert_eq!(names.serial, "258");
        assert!(CertNames::parse(&cert.der()[..40]).is_none());
    }
}
