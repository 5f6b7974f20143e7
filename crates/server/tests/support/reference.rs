//! A throwaway PostgreSQL 15 beside the server under test, started by
//! `postgres_as_scalegres.sh` (as the `postgres` user when root): the oracle
//! for tests that compare what clients get from both.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::{free_port, pg_tool};

/// The throwaway PostgreSQL: stopped (SIGINT, fast shutdown) when dropped.
pub struct Postgres {
    child: Child,
    pub port: u16,
}

impl Drop for Postgres {
    fn drop(&mut self) {
        unsafe {
            libc::kill(self.child.id() as libc::pid_t, libc::SIGINT);
        }
        let deadline = Instant::now() + Duration::from_secs(30);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
    }
}

pub fn client(program: &str) -> Command {
    let mut cmd = Command::new(pg_tool(program));
    for (k, _) in std::env::vars_os() {
        if k.to_string_lossy().starts_with("PG") {
            cmd.env_remove(k);
        }
    }
    cmd.env("PGCONNECT_TIMEOUT", "10").stdin(Stdio::null());
    cmd
}

/// Starts PostgreSQL 15 with its data and socket directories under `dir`,
/// and waits until it accepts connections.
pub fn start_postgres(dir: &Path) -> Postgres {
    let script =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/support/postgres_as_scalegres.sh");
    let sock = dir.join("sock");
    std::fs::create_dir_all(&sock).unwrap();
    let port = free_port();
    let log = std::fs::File::create(dir.join("postgres.log")).unwrap();
    let child = Command::new("bash")
        .arg(script)
        .arg("-D")
        .arg(dir.join("data"))
        .args(["-p", &port.to_string(), "-c", "listen_addresses=127.0.0.1"])
        .arg("-c")
        .arg(format!("unix_socket_directories={}", sock.display()))
        .stdin(Stdio::null())
        .stdout(log.try_clone().unwrap())
        .stderr(log)
        .spawn()
        .expect("start postgres_as_scalegres.sh");
    let pg = Postgres { child, port };
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let mut cmd = client("psql");
        cmd.args(["-X", "-At", "-h", "127.0.0.1", "-p", &port.to_string()])
            .args(["-U", "postgres", "-d", "postgres", "-c", "select 1"]);
        if cmd.output().map(|o| o.status.success()).unwrap_or(false) {
            return pg;
        }
        assert!(
            Instant::now() < deadline,
            "PostgreSQL did not start; log:\n{}",
            std::fs::read_to_string(dir.join("postgres.log")).unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}
