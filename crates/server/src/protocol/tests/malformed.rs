use std::net::Shutdown;

use super::*;

fn fatal(msg: &str) -> Vec<String> {
    vec![format!("E(FATAL:08P01:{msg})")]
}

#[test]
fn length_below_four() {
    let server = Server::new();
    let mut c = server.login();
    c.send_raw(&[b'Q', 0, 0, 0, 3]);
    assert_eq!(c.until_eof(), fatal("invalid message length"));
    assert_eq!(server.registry.count(), 0);
}

#[test]
fn oversized_message_is_refused_before_its_body_arrives() {
    let server = Server::with_limits(ProtocolLimits {
        max_message_len: 1000,
        ..ProtocolLimits::default()
    });
    let mut c = server.login();
    c.send_raw(&[b'Q', 0x7f, 0xff, 0xff, 0xff]);
    assert_eq!(c.until_eof(), fatal("invalid message length"));

    // Messages without data are held to 10000 bytes whatever the limit.
    let server = Server::new();
    let mut c = server.login();
    c.send_raw(&[b'S', 0, 1, 0, 0]);
    assert_eq!(c.until_eof(), fatal("invalid message length"));

    // Within the limit is fine.
    let server = Server::with_limits(ProtocolLimits {
        max_message_len: 1000,
        ..ProtocolLimits::default()
    });
    let mut c = server.login();
    c.query(&format!("insert {}", "x".repeat(900)));
    assert_eq!(c.until_ready(), v(&["C(INSERT 0 1)", "Z(I)"]));
}

#[test]
fn unknown_message_type() {
    let server = Server::new();
    let mut c = server.login();
    c.send(123, b"");
    assert_eq!(c.until_eof(), fatal("invalid frontend message type 123"));
}

#[test]
fn truncated_fields() {
    let cases: Vec<(u8, Vec<u8>, &str)> = vec![
        (b'Q', b"select".to_vec(), "invalid string in message"),
        (b'Q', b"select\0x".to_vec(), "invalid message format"),
        (
            b'P',
            b"\0select\0\0\x05\0\0".to_vec(),
            "insufficient data left in message",
        ),
        (
            b'B',
            b"\0\0\0\0\0\x05".to_vec(),
            "insufficient data left in message",
        ),
        (
            b'B',
            b"\0\0\0\0\0\x01\xff\xff\xff\xfb\0\0".to_vec(),
            "insufficient data left in message",
        ),
        (
            b'B',
            b"\0\0\0\0\0\x01\0\0\x10\0ab\0\0".to_vec(),
            "insufficient data left in message",
        ),
        (
            b'E',
            b"\0\0\0".to_vec(),
            "insufficient data left in message",
        ),
        (b'E', b"\0\0\0\0\0\0".to_vec(), "invalid message format"),
        (b'D', b"".to_vec(), "insufficient data left in message"),
        (b'C', b"S".to_vec(), "invalid string in message"),
        (b'S', b"x".to_vec(), "invalid message format"),
        (b'H', b"x".to_vec(), "invalid message format"),
    ];
    for (ty, body, msg) in cases {
        let server = Server::new();
        let mut c = server.login();
        c.send(ty, &body);
        assert_eq!(c.until_eof(), fatal(msg), "{} {body:?}", ty as char);
    }
}

#[test]
fn truncated_message_during_skip_is_still_fatal() {
    let server = Server::new();
    let mut c = server.login();
    c.parse("", "bogus", &[]);
    c.send_raw(&[b'Q', 0, 0, 0, 2]);
    assert_eq!(
        c.until_eof(),
        v(&[
            "E(ERROR:42601:syntax error at or near \"bogus\")",
            "E(FATAL:08P01:invalid message length)"
        ])
    );
}

#[test]
fn bad_startup_packets() {
    for packet in [
        20_000u32.to_be_bytes().to_vec(),
        3u32.to_be_bytes().to_vec(),
        0xffff_ffffu32.to_be_bytes().to_vec(),
    ] {
        let server = Server::new();
        let mut c = server.connect();
        c.send_raw(&packet);
        assert_eq!(c.until_eof(), fatal("invalid length of startup packet"));
    }
    // Parameters without the final terminator.
    let server = Server::new();
    let mut c = server.connect();
    let mut body = 196608u32.to_be_bytes().to_vec();
    body.extend_from_slice(b"user\0bob\0database");
    c.send_packet(&body);
    assert_eq!(
        c.until_eof(),
        fatal("invalid startup packet layout: expected terminator as last byte")
    );
}

#[test]
fn eof_mid_message_is_silent() {
    let server = Server::new();
    let mut c = server.login();
    c.send_raw(&[b'Q', 0, 0, 0, 100, b's', b'e']);
    c.s.shutdown(Shutdown::Write).unwrap();
    assert_eq!(c.until_eof(), Vec::<String>::new());
    assert_eq!(server.registry.count(), 0);
}

#[test]
fn a_bad_connection_does_not_disturb_others() {
    let server = Server::new();
    let mut good = server.login();
    let mut bad = server.login();
    good.parse("s", "gen 3", &[]);
    good.bind("p", "s", &[], &[], &[]);
    good.execute("p", 1);
    good.sync();
    assert_eq!(good.until_ready(), v(&["1", "2", "D(1)", "s", "Z(I)"]));
    bad.send_raw(b"garbage!");
    assert_eq!(bad.until_eof().len(), 1);
    good.query("select");
    assert_eq!(good.until_ready().len(), 5);
    assert_eq!(server.registry.count(), 1);
}

/// xorshift64*, enough for fuzzing.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

#[test]
fn fuzzed_input_never_panics() {
    let server = Server::with_limits(ProtocolLimits {
        max_message_len: 4096,
        ..ProtocolLimits::default()
    });
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let types = b"QPBDECHSFdcf";
    for round in 0..300 {
        let mut c = if round % 10 == 0 {
            server.connect()
        } else {
            server.login()
        };
        let mut data = Vec::new();
        for _ in 0..rng.below(20) {
            let ty = if rng.below(20) == 0 {
                rng.below(256) as u8
            } else {
                types[rng.below(types.len() as u64) as usize]
            };
            let mut body = Vec::new();
            for _ in 0..rng.below(40) {
                // Small numbers and NULs make well-formed-looking fields likelier.
                body.push(match rng.below(4) {
                    0 => 0,
                    1 => rng.below(4) as u8,
                    2 => b"selctgenhow $1"[rng.below(14) as usize],
                    _ => rng.below(256) as u8,
                });
            }
            let len = if rng.below(10) == 0 {
                rng.next() as u32
            } else {
                body.len() as u32 + 4
            };
            data.push(ty);
            data.extend_from_slice(&len.to_be_bytes());
            data.extend_from_slice(&body);
        }
        // Send from another thread so a full socket buffer cannot deadlock.
        let mut w = c.s.try_clone().unwrap();
        let writer = std::thread::spawn(move || {
            let _ = w.write_all(&data);
            let _ = w.shutdown(Shutdown::Write);
        });
        c.until_eof();
        writer.join().unwrap();
    }
    assert_eq!(server.registry.count(), 0);
}
