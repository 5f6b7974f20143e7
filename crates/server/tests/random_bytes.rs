//! Garbage on the wire: random bytes, malformed start-up packets, absurd length
//! prefixes and bad messages after a valid start-up. Each such connection must
//! be closed by the server, the server must stay up, and new connections must
//! still work.

mod support;

use std::io::{ErrorKind, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use support::TestServer;

const CLOSE_TIMEOUT: Duration = Duration::from_secs(10);

/// xorshift64*: deterministic from the printed seed, no extra dependency.
struct Rng(u64);

impl Rng {
    fn new() -> (Rng, u64) {
        let seed = std::env::var("SCALEGRES_TEST_SEED")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| {
                SystemTime::now()
                    .duration_since(UNIX_EPOCH)
                    .unwrap()
                    .as_nanos() as u64
            })
            | 1;
        (Rng(seed), seed)
    }
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn bytes(&mut self, len: usize) -> Vec<u8> {
        (0..len).map(|_| self.next() as u8).collect()
    }
}

fn startup_packet() -> Vec<u8> {
    let mut body = Vec::new();
    body.extend(196608u32.to_be_bytes()); // protocol 3.0
    for s in [
        "user",
        "postgres",
        "database",
        "postgres",
        "application_name",
        "garbage-test",
    ] {
        body.extend(s.as_bytes());
        body.push(0);
    }
    body.push(0);
    let mut msg = ((body.len() + 4) as u32).to_be_bytes().to_vec();
    msg.extend(body);
    msg
}

fn open(s: &TestServer) -> TcpStream {
    let stream = TcpStream::connect(("127.0.0.1", s.port())).expect("TCP connect to the server");
    stream
        .set_read_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    stream.set_write_timeout(Some(CLOSE_TIMEOUT)).unwrap();
    stream
}

/// Sends a valid start-up packet and reads until ReadyForQuery.
fn start_session(s: &TestServer) -> TcpStream {
    let mut stream = open(s);
    stream
        .write_all(&startup_packet())
        .expect("send the start-up packet");
    let deadline = Instant::now() + CLOSE_TIMEOUT;
    let mut buf = Vec::new();
    loop {
        // Parse complete messages in buf.
        let mut pos = 0;
        while buf.len() >= pos + 5 {
            let ty = buf[pos];
            let len = u32::from_be_bytes(buf[pos + 1..pos + 5].try_into().unwrap()) as usize;
            if buf.len() < pos + 1 + len {
                break;
            }
            let body = &buf[pos + 5..pos + 1 + len];
            match ty {
                b'R' => assert_eq!(
                    &body[..4],
                    &[0, 0, 0, 0],
                    "expected AuthenticationOk (trust), got authentication request {body:?}"
                ),
                b'E' => panic!(
                    "the server refused the valid start-up packet: {}",
                    String::from_utf8_lossy(body)
                ),
                b'Z' => return stream,
                _ => {}
            }
            pos += 1 + len;
        }
        buf.drain(..pos);
        if Instant::now() > deadline {
            panic!("no ReadyForQuery within {CLOSE_TIMEOUT:?} after a valid start-up packet");
        }
        let mut chunk = [0u8; 4096];
        match stream.read(&mut chunk) {
            Ok(0) => panic!("the server closed the connection during a valid start-up"),
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
            Err(e) => panic!("reading the start-up response: {e}"),
        }
    }
}

/// Sends `bytes` (ignoring errors: the server may already have closed), optionally
/// half-closes our side, and waits for the server to close the connection.
fn send_and_expect_close(mut stream: TcpStream, bytes: &[u8], half_close: bool, what: &str) {
    let _ = stream.write_all(bytes);
    if half_close {
        let _ = stream.shutdown(Shutdown::Write);
    }
    let deadline = Instant::now() + CLOSE_TIMEOUT;
    let mut received = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        match stream.read(&mut chunk) {
            Ok(0) => return,
            Ok(n) => {
                if received.len() < 256 {
                    received.extend_from_slice(&chunk[..n]);
                }
            }
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
            Err(_) => return, // reset: closed too
        }
        if Instant::now() > deadline {
            panic!(
                "{what}: the server did not close the connection within {CLOSE_TIMEOUT:?}{}; \
                 it sent {:?}",
                if half_close {
                    " after we closed our side"
                } else {
                    ""
                },
                String::from_utf8_lossy(&received)
            );
        }
    }
}

/// The server process is alive and fresh connections work.
fn assert_healthy(s: &mut TestServer, after: &str) {
    s.assert_running(&format!("after {after}"));
    let mut c = s
        .try_connect()
        .unwrap_or_else(|e| panic!("after {after}: a new connection failed: {e:?}"));
    let v: i32 = c
        .query_one("select 1", &[])
        .unwrap_or_else(|e| panic!("after {after}: select 1 failed: {e:?}"))
        .get(0);
    assert_eq!(v, 1, "after {after}");
}

fn be32(v: u32) -> [u8; 4] {
    v.to_be_bytes()
}

#[test]
fn random_bytes_before_startup() {
    let mut s = TestServer::start();
    let (mut rng, seed) = Rng::new();
    for i in 0..20 {
        let len = 1 + rng.below(2048) as usize;
        let bytes = rng.bytes(len);
        let what = format!("random blob {i} ({len} bytes, SCALEGRES_TEST_SEED={seed})");
        send_and_expect_close(open(&s), &bytes, true, &what);
        assert_healthy(&mut s, &what);
    }
    // Valid start-up packets with random bytes flipped.
    let good = startup_packet();
    for i in 0..20 {
        let mut bytes = good.clone();
        for _ in 0..1 + rng.below(4) {
            let at = rng.below(bytes.len() as u64) as usize;
            bytes[at] = rng.next() as u8;
        }
        let what = format!("mutated start-up packet {i} (SCALEGRES_TEST_SEED={seed}): {bytes:?}");
        send_and_expect_close(open(&s), &bytes, true, &what);
        assert_healthy(&mut s, &what);
    }
    assert_eq!(
        s.psql("select 1"),
        "1",
        "psql after the random start-up packets"
    );
}

#[test]
fn malformed_startup_packets_are_rejected() {
    let mut s = TestServer::start();
    let v3 = be32(196608);
    let mut v2_body = be32(0x0002_0000).to_vec(); // protocol 2.0
    v2_body.extend(b"user\0postgres\0database\0postgres\0\0");
    let unsupported = [&be32(4 + v2_body.len() as u32)[..], &v2_body].concat();
    let cases: Vec<(&str, Vec<u8>)> = vec![
        (
            "absurd start-up length 0x7fffffff",
            [be32(0x7fff_ffff), v3].concat(),
        ),
        (
            "start-up length 0xffffffff (negative)",
            [be32(0xffff_ffff), v3].concat(),
        ),
        (
            "start-up length 2 (shorter than the length word)",
            be32(2).to_vec(),
        ),
        ("start-up length 0", [be32(0), v3].concat()),
        ("unsupported protocol version 2.0", unsupported),
    ];
    for (what, bytes) in &cases {
        // No half-close: the server must give up on these by itself.
        send_and_expect_close(open(&s), bytes, false, what);
        assert_healthy(&mut s, what);
    }
    // SSLRequest gets 'N'; then garbage.
    let mut stream = open(&s);
    stream
        .write_all(&[be32(8), be32(80877103)].concat())
        .unwrap();
    stream.set_read_timeout(Some(CLOSE_TIMEOUT)).unwrap();
    let mut answer = [0u8; 1];
    stream
        .read_exact(&mut answer)
        .expect("an answer to SSLRequest (PostgreSQL sends 'N' without SSL)");
    assert_eq!(answer[0], b'N', "answer to SSLRequest");
    stream
        .set_read_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    send_and_expect_close(
        stream,
        b"\x00\x00\x00\x09garbage!!!!",
        true,
        "garbage after SSLRequest",
    );
    assert_healthy(&mut s, "garbage after SSLRequest");
}

#[test]
fn garbage_after_a_valid_startup() {
    let mut s = TestServer::start();
    // The session works before the garbage arrives.
    let mut stream = start_session(&s);
    let query = b"select 1\0";
    let mut msg = vec![b'Q'];
    msg.extend(be32(4 + query.len() as u32));
    msg.extend(query);
    stream.write_all(&msg).unwrap();
    // Then an unknown message type: the server must close by itself.
    send_and_expect_close(
        stream,
        &[&[0xFEu8][..], &be32(4)].concat(),
        false,
        "message type 0xFE",
    );
    assert_healthy(&mut s, "an unknown message type");

    let cases: Vec<(&str, Vec<u8>)> = vec![
        (
            "query message with length 0x7fffffff",
            [&[b'Q'][..], &be32(0x7fff_ffff), b"select 1"].concat(),
        ),
        (
            "query message with length 0xffffffff",
            [&[b'Q'][..], &be32(0xffff_ffff), b"select 1"].concat(),
        ),
        (
            "query message with length 3",
            [&[b'Q'][..], &be32(3), b"select 1\0"].concat(),
        ),
    ];
    for (what, bytes) in &cases {
        send_and_expect_close(start_session(&s), bytes, false, what);
        assert_healthy(&mut s, what);
    }

    let (mut rng, seed) = Rng::new();
    for i in 0..20 {
        let len = 1 + rng.below(2048) as usize;
        let bytes = rng.bytes(len);
        let what =
            format!("random bytes {i} after start-up ({len} bytes, SCALEGRES_TEST_SEED={seed})");
        send_and_expect_close(start_session(&s), &bytes, true, &what);
        assert_healthy(&mut s, &what);
    }
    assert_eq!(s.psql("select 1"), "1", "psql after the garbage");
}
