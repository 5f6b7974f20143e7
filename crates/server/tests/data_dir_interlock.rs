//! One server per data directory: two servers started at the same instant on
//! one directory never both run; a stale postmaster.pid is replaced; the data
//! directory is private (0700, or 0750 with group access) and a server refuses
//! a directory others can read.

mod support;

use std::net::TcpStream;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use support::{free_port, server_binary, TestServer};

fn spawn_server(data: &Path, sock: &Path, port: u16) -> Child {
    Command::new(server_binary())
        .arg("-D")
        .arg(data)
        .arg("-p")
        .arg(port.to_string())
        .arg("-c")
        .arg(format!("unix_socket_directories={}", sock.display()))
        .arg("-c")
        .arg("shared_buffers=1MB")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn server")
}

fn stop(child: &mut Child) {
    unsafe {
        libc::kill(child.id() as libc::pid_t, libc::SIGINT);
    }
    let deadline = Instant::now() + Duration::from_secs(30);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("server did not stop");
        }
        thread::sleep(Duration::from_millis(10));
    }
}

/// Waits until one of the pair has exited (refused) and the other accepts
/// connections; returns the index of the one that runs.
fn settle(pair: &mut [(Child, u16); 2]) -> usize {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let exited: Vec<bool> = pair
            .iter_mut()
            .map(|(c, _)| c.try_wait().unwrap().is_some())
            .collect();
        let listening: Vec<bool> = pair
            .iter()
            .map(|(_, port)| TcpStream::connect(("127.0.0.1", *port)).is_ok())
            .collect();
        for i in 0..2 {
            if exited[1 - i] && listening[i] && !exited[i] {
                return i;
            }
        }
        if exited[0] && exited[1] {
            panic!("both servers of a pair exited");
        }
        if Instant::now() > deadline {
            panic!(
                "pair did not settle: exited {exited:?}, listening {listening:?} \
                 (both running means the interlock failed)"
            );
        }
        thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn fifty_simultaneous_pairs_start_only_one_server_each() {
    let tmp = tempfile::tempdir().unwrap();
    let sock_a = tmp.path().join("sock_a");
    let sock_b = tmp.path().join("sock_b");
    std::fs::create_dir(&sock_a).unwrap();
    std::fs::create_dir(&sock_b).unwrap();
    for round in 0..50 {
        // Even rounds race on a new directory (both would initialise it),
        // odd rounds on the directory left by the round before.
        let data = tmp.path().join(format!("data{}", round / 2));
        let (port_a, port_b) = (free_port(), free_port());
        let mut pair = [
            (spawn_server(&data, &sock_a, port_a), port_a),
            (spawn_server(&data, &sock_b, port_b), port_b),
        ];
        let winner = settle(&mut pair);
        let loser = 1 - winner;
        let out = pair[loser].0.wait_with_output_ref();
        assert!(
            out.contains("lock file") && out.contains("already exists"),
            "round {round}: refused server said: {out}"
        );
        stop(&mut pair[winner].0);
        assert!(
            !data.join("postmaster.pid").exists(),
            "round {round}: postmaster.pid left behind"
        );
    }
}

/// Reads the stderr of an exited child.
trait StderrText {
    fn wait_with_output_ref(&mut self) -> String;
}

impl StderrText for Child {
    fn wait_with_output_ref(&mut self) -> String {
        use std::io::Read;
        let _ = self.wait();
        let mut s = String::new();
        if let Some(mut e) = self.stderr.take() {
            let _ = e.read_to_string(&mut s);
        }
        s
    }
}

#[test]
fn stale_pid_file_is_replaced_and_live_one_refused() {
    let mut server = TestServer::start();
    server.stop_clean();
    let pidfile = server.data_dir().join("postmaster.pid");
    // A PID above pid_max: no such process can be running.
    std::fs::write(&pidfile, "999999999\n/elsewhere\n").unwrap();
    server.start_again();
    let text = std::fs::read_to_string(&pidfile).unwrap();
    assert_eq!(
        text.lines().next().unwrap(),
        server.pid().to_string(),
        "postmaster.pid: {text}"
    );
    assert_eq!(
        text.lines().nth(2).unwrap(),
        server.port().to_string(),
        "postmaster.pid records the port: {text}"
    );
    // A second server on the same directory is refused with PostgreSQL's words.
    let out = support::run_with_timeout(
        Command::new(server_binary())
            .arg("-D")
            .arg(server.data_dir())
            .arg("-p")
            .arg(free_port().to_string()),
        Duration::from_secs(30),
    );
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("already exists")
            && err.contains(&format!("Is another postmaster (PID {})", server.pid())),
        "{err}"
    );
    server.assert_running("after a second server was refused");
}

#[test]
fn data_directory_must_be_private() {
    let mut server = TestServer::start();
    let data = server.data_dir();
    let mode = std::fs::metadata(&data).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o700, "new data directory mode {mode:o}");
    assert_eq!(server.psql("show data_directory_mode").trim(), "0700");
    server.psql("create table t (a int)");
    for entry in walk(&data) {
        let m = std::fs::metadata(&entry).unwrap().permissions().mode() & 0o777;
        let want = if entry.is_dir() { 0o700 } else { 0o600 };
        assert_eq!(m, want, "{} has mode {m:o}", entry.display());
    }
    server.stop_clean();

    std::fs::set_permissions(&data, std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = support::run_with_timeout(
        Command::new(server_binary())
            .arg("-D")
            .arg(&data)
            .arg("-p")
            .arg(free_port().to_string()),
        Duration::from_secs(30),
    );
    assert!(!out.status.success(), "started on a 0755 data directory");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("has invalid permissions")
            && err.contains("Permissions should be u=rwx (0700) or u=rwx,g=rx (0750)."),
        "{err}"
    );

    // Group access, as initdb -g: 0750 directory, 0640 new files.
    std::fs::set_permissions(&data, std::fs::Permissions::from_mode(0o750)).unwrap();
    server.start_again();
    assert_eq!(server.psql("show data_directory_mode").trim(), "0750");
    server.psql("create table u (a int); insert into u values (1); checkpoint");
    let newest = walk(&data.join("base"))
        .into_iter()
        .filter(|p| p.is_file())
        .max_by_key(|p| std::fs::metadata(p).unwrap().modified().unwrap())
        .unwrap();
    let m = std::fs::metadata(&newest).unwrap().permissions().mode() & 0o777;
    assert_eq!(m, 0o640, "{} has mode {m:o}", newest.display());
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p));
        }
        out.push(p);
    }
    out
}
