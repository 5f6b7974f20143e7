//! Shared helpers for the server's integration tests: start a `scalegres`
//! process in a temporary data directory on a free port, talk to it with psql
//! and the `postgres` crate, stop it (fast shutdown, SIGINT, as `pg_ctl stop`'s
//! default) and restart it.
//!
//! Builds nothing itself: the binary is Cargo's `CARGO_BIN_EXE_scalegres`.
//! `SCALEGRES_TEST_BIN=/path/to/binary` runs the tests against another binary
//! with the same command line (e.g. `tests/support/postgres_as_scalegres.sh`,
//! which runs real PostgreSQL 15 that way, to check the tests themselves).
//! `SCALEGRES_TEST_START_TIMEOUT` (seconds, default 30) and
//! `SCALEGRES_TEST_WATCHDOG` (seconds, default 300: a server still running
//! then is killed, so a hung test fails instead of hanging CI) tune timing.

#![allow(dead_code)]

use std::fs::OpenOptions;
use std::io::Read;
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use tempfile::TempDir;

pub mod reference;

pub const DEFAULT_SHARED_BUFFERS: &str = "16MB";
/// How long a psql/pgbench run may take before the test fails.
pub const CLIENT_TIMEOUT: Duration = Duration::from_secs(120);
const STOP_TIMEOUT: Duration = Duration::from_secs(30);

fn env_secs(name: &str, default: u64) -> Duration {
    Duration::from_secs(
        std::env::var(name)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(default),
    )
}

/// The server binary under test.
pub fn server_binary() -> PathBuf {
    match std::env::var_os("SCALEGRES_TEST_BIN") {
        Some(p) => PathBuf::from(p),
        None => PathBuf::from(env!("CARGO_BIN_EXE_scalegres")),
    }
}

/// Finds a PostgreSQL client program: PostgreSQL 15's bindir first, then PATH.
pub fn pg_tool(name: &str) -> PathBuf {
    let candidate = Path::new("/usr/lib/postgresql/15/bin").join(name);
    if candidate.is_file() {
        return candidate;
    }
    if let Some(path) = std::env::var_os("PATH") {
        for dir in std::env::split_paths(&path) {
            let p = dir.join(name);
            if p.is_file() {
                return p;
            }
        }
    }
    panic!(
        "`{name}` not found in /usr/lib/postgresql/15/bin or on PATH; install PostgreSQL 15's \
         client programs (apt-get install postgresql-15; .ci/run does this)"
    );
}

/// A free TCP port on 127.0.0.1 (bind port 0, read it, release it).
pub fn free_port() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0 to find a free port");
    l.local_addr().unwrap().port()
}

/// A command with no inherited PG* connection settings and no stdin.
fn client_command(program: &Path) -> Command {
    let mut cmd = Command::new(program);
    for (k, _) in std::env::vars_os() {
        if k.to_string_lossy().starts_with("PG") {
            cmd.env_remove(k);
        }
    }
    cmd.env("PGCONNECT_TIMEOUT", "10");
    cmd.stdin(Stdio::null());
    cmd
}

/// The first lines (at most 10) where `actual` differs from `expected`, for
/// a failing expected-output file.
pub fn first_differences(expected: &str, actual: &str) -> String {
    expected
        .lines()
        .zip(actual.lines())
        .enumerate()
        .filter(|(_, (e, a))| e != a)
        .take(10)
        .map(|(i, (e, a))| format!("line {}:\n  expected: {e}\n  actual:   {a}", i + 1))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Runs `cmd`, capturing its output; fails the test if it runs past `timeout`.
pub fn run_with_timeout(cmd: &mut Command, timeout: Duration) -> Output {
    let desc = format!("{cmd:?}");
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = cmd
        .spawn()
        .unwrap_or_else(|e| panic!("could not start {desc}: {e}"));
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let out_t = thread::spawn(move || {
        let mut v = Vec::new();
        let _ = out.read_to_end(&mut v);
        v
    });
    let err_t = thread::spawn(move || {
        let mut v = Vec::new();
        let _ = err.read_to_end(&mut v);
        v
    });
    let deadline = Instant::now() + timeout;
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for client process") {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            let stdout = out_t.join().unwrap_or_default();
            let stderr = err_t.join().unwrap_or_default();
            panic!(
                "{desc} did not finish within {timeout:?}\nstdout:\n{}\nstderr:\n{}",
                String::from_utf8_lossy(&stdout),
                String::from_utf8_lossy(&stderr)
            );
        }
        thread::sleep(Duration::from_millis(20));
    };
    Output {
        status,
        stdout: out_t.join().unwrap_or_default(),
        stderr: err_t.join().unwrap_or_default(),
    }
}

/// Kills the server if it still runs when the watchdog's time is up.
struct Watchdog {
    done: Arc<AtomicBool>,
}

impl Watchdog {
    fn start(pid: u32, after: Duration) -> Watchdog {
        let done = Arc::new(AtomicBool::new(false));
        let flag = done.clone();
        thread::spawn(move || {
            let deadline = Instant::now() + after;
            while Instant::now() < deadline {
                if flag.load(Ordering::SeqCst) {
                    return;
                }
                thread::sleep(Duration::from_millis(100));
            }
            if !flag.load(Ordering::SeqCst) {
                eprintln!(
                    "test watchdog: server pid {pid} still running after {after:?}; killing it \
                     (set SCALEGRES_TEST_WATCHDOG to allow longer)"
                );
                unsafe {
                    libc::kill(pid as libc::pid_t, libc::SIGKILL);
                }
            }
        });
        Watchdog { done }
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        self.done.store(true, Ordering::SeqCst);
    }
}

/// One server process (and, across restarts, its data directory).
pub struct TestServer {
    dir: TempDir,
    settings: Vec<(String, String)>,
    port: u16,
    child: Option<Child>,
    watchdog: Option<Watchdog>,
    /// RLIMIT_NOFILE (soft and hard) for the server process, if set.
    nofile_limit: Option<u64>,
}

impl TestServer {
    /// Starts a server with the default settings; fails the test if it doesn't come up.
    #[track_caller]
    pub fn start() -> TestServer {
        Self::start_with(&[])
    }

    /// Starts a server with extra `-c name=value` settings (`shared_buffers` defaults to
    /// DEFAULT_SHARED_BUFFERS unless given); fails the test if it doesn't come up.
    #[track_caller]
    pub fn start_with(settings: &[(&str, &str)]) -> TestServer {
        match Self::try_start_with(settings) {
            Ok(s) => s,
            Err(e) => panic!("{e}"),
        }
    }

    /// Like `start_with`, but returns why the server didn't come up instead of failing.
    pub fn try_start_with(settings: &[(&str, &str)]) -> Result<TestServer, String> {
        let dir = tempfile::Builder::new()
            .prefix("scalegres-test-")
            .tempdir()
            .map_err(|e| format!("create temp dir: {e}"))?;
        let mut settings: Vec<(String, String)> = settings
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        if !settings.iter().any(|(k, _)| k == "shared_buffers") {
            settings.push(("shared_buffers".into(), DEFAULT_SHARED_BUFFERS.into()));
        }
        // Autovacuum stays off unless a test asks for it: its ANALYZE would
        // change statistics and plans under tests that compare them.
        if !settings.iter().any(|(k, _)| k == "autovacuum") {
            settings.push(("autovacuum".into(), "off".into()));
        }
        std::fs::create_dir(dir.path().join("sock")).map_err(|e| format!("mkdir sock: {e}"))?;
        let mut server = TestServer {
            dir,
            settings,
            port: 0,
            child: None,
            watchdog: None,
            nofile_limit: None,
        };
        server.launch()?;
        Ok(server)
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    pub fn data_dir(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    /// The directory holding the Unix socket `.s.PGSQL.<port>`.
    pub fn socket_dir(&self) -> PathBuf {
        self.dir.path().join("sock")
    }

    pub fn log_path(&self) -> PathBuf {
        self.dir.path().join("server.log")
    }

    /// The last `lines` lines the server printed (stdout and stderr, all runs).
    pub fn log_tail(&self, lines: usize) -> String {
        let text = std::fs::read_to_string(self.log_path()).unwrap_or_default();
        let all: Vec<&str> = text.lines().collect();
        all[all.len().saturating_sub(lines)..].join("\n")
    }

    fn context(&self) -> String {
        format!(
            "server log ({}), last lines:\n{}",
            self.log_path().display(),
            self.log_tail(40)
        )
    }

    /// Spawns the process (retrying on another port if the chosen one was taken
    /// meanwhile) and waits until it accepts connections.
    fn launch(&mut self) -> Result<(), String> {
        let mut last_err = String::new();
        for _attempt in 0..3 {
            self.port = free_port();
            let log = OpenOptions::new()
                .create(true)
                .append(true)
                .open(self.log_path())
                .map_err(|e| format!("open server log: {e}"))?;
            let mut cmd = Command::new(server_binary());
            cmd.arg("-D")
                .arg(self.data_dir())
                .arg("-p")
                .arg(self.port.to_string())
                .arg("-c")
                .arg(format!(
                    "unix_socket_directories={}",
                    self.socket_dir().display()
                ));
            for (k, v) in &self.settings {
                cmd.arg("-c").arg(format!("{k}={v}"));
            }
            cmd.stdin(Stdio::null())
                .stdout(log.try_clone().map_err(|e| e.to_string())?)
                .stderr(log);
            if let Some(limit) = self.nofile_limit {
                use std::os::unix::process::CommandExt;
                // SAFETY: only setrlimit, which is async-signal-safe, runs in the child.
                unsafe {
                    cmd.pre_exec(move || {
                        let l = libc::rlimit {
                            rlim_cur: limit,
                            rlim_max: limit,
                        };
                        if libc::setrlimit(libc::RLIMIT_NOFILE, &l) != 0 {
                            return Err(std::io::Error::last_os_error());
                        }
                        Ok(())
                    });
                }
            }
            let desc = format!("{cmd:?}");
            let child = cmd
                .spawn()
                .map_err(|e| format!("could not start {desc}: {e}"))?;
            self.watchdog = Some(Watchdog::start(
                child.id(),
                env_secs("SCALEGRES_TEST_WATCHDOG", 300),
            ));
            self.child = Some(child);
            match self.wait_ready() {
                Ok(()) => return Ok(()),
                Err(e) => {
                    self.kill();
                    let log = self.log_tail(40);
                    last_err = format!("{desc}: {e}\n{}", self.context());
                    if !log.to_lowercase().contains("in use") && !e.contains("another server") {
                        break;
                    }
                }
            }
        }
        Err(last_err)
    }

    fn wait_ready(&mut self) -> Result<(), String> {
        let timeout = env_secs("SCALEGRES_TEST_START_TIMEOUT", 30);
        let deadline = Instant::now() + timeout;
        let mut last = String::from("no attempt yet");
        while Instant::now() < deadline {
            if let Some(status) = self.child.as_mut().unwrap().try_wait().unwrap() {
                return Err(format!("server exited during start-up with {status}"));
            }
            if TcpStream::connect(("127.0.0.1", self.port)).is_ok() {
                match self.try_connect() {
                    // Another test's server may have taken the port between
                    // free_port() and our bind: only ours has our socket directory.
                    Ok(mut c) => match c.query_one("show unix_socket_directories", &[]) {
                        Ok(row) => {
                            let dirs: String = row.get(0);
                            if dirs == self.socket_dir().display().to_string() {
                                return Ok(());
                            }
                            return Err(format!(
                                "port {} answered by another server (socket directory {dirs})",
                                self.port
                            ));
                        }
                        Err(e) => last = format!("`show unix_socket_directories` failed: {e}"),
                    },
                    Err(e) => last = format!("connect failed: {e}"),
                }
            } else {
                last = "TCP connection refused".into();
            }
            thread::sleep(Duration::from_millis(100));
        }
        Err(format!(
            "server did not accept connections on port {} within {timeout:?} (last attempt: {last})",
            self.port
        ))
    }

    /// Stops the server and starts it again with RLIMIT_NOFILE set to `limit`
    /// (as `ulimit -n limit` would).
    #[track_caller]
    pub fn restart_with_nofile_limit(&mut self, limit: u64) {
        if self.child.is_some() {
            self.stop_clean();
        }
        self.nofile_limit = Some(limit);
        if let Err(e) = self.launch() {
            panic!("restart with RLIMIT_NOFILE={limit} failed: {e}");
        }
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.as_ref().expect("server is not running").id()
    }

    /// Sends `signal` to the server process.
    pub fn signal(&self, signal: libc::c_int) {
        unsafe {
            libc::kill(self.pid() as libc::pid_t, signal);
        }
    }

    /// Waits up to `timeout` for the process to exit by itself; returns its
    /// status, or None if it still runs.
    pub fn wait_exit(&mut self, timeout: Duration) -> Option<ExitStatus> {
        let deadline = Instant::now() + timeout;
        loop {
            let child = self.child.as_mut()?;
            if let Some(status) = child.try_wait().unwrap() {
                self.child = None;
                self.watchdog = None;
                return Some(status);
            }
            if Instant::now() > deadline {
                return None;
            }
            thread::sleep(Duration::from_millis(10));
        }
    }

    /// Sends SIGHUP, which makes the server re-read pg_hba.conf.
    pub fn reload(&self) {
        let pid = self.child.as_ref().expect("server is running").id();
        // SAFETY: kill(2) with a valid signal number on our own child.
        let rc = unsafe { libc::kill(pid as libc::pid_t, libc::SIGHUP) };
        assert_eq!(rc, 0, "kill -HUP {pid}");
    }

    /// Whether the process is still running.
    pub fn is_running(&mut self) -> bool {
        match self.child.as_mut() {
            Some(c) => c.try_wait().map(|s| s.is_none()).unwrap_or(false),
            None => false,
        }
    }

    /// Fails the test if the server process has exited.
    #[track_caller]
    pub fn assert_running(&mut self, what: &str) {
        if let Some(c) = self.child.as_mut() {
            if let Some(status) = c.try_wait().unwrap() {
                panic!("server process died ({status}) {what}\n{}", self.context());
            }
        } else {
            panic!("server is not started ({what})");
        }
    }

    /// Sends SIGINT (fast shutdown) and waits for the process to exit; returns
    /// its exit status.
    /// Fails the test if it is still running after 30 s (it is then killed).
    #[track_caller]
    pub fn stop(&mut self) -> ExitStatus {
        let mut child = self.child.take().expect("stop: server is not running");
        if let Some(status) = child.try_wait().unwrap() {
            self.watchdog = None;
            panic!(
                "stop: server had already exited with {status}\n{}",
                self.context()
            );
        }
        unsafe {
            libc::kill(child.id() as libc::pid_t, libc::SIGINT);
        }
        let deadline = Instant::now() + STOP_TIMEOUT;
        loop {
            if let Some(status) = child.try_wait().unwrap() {
                self.watchdog = None;
                return status;
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                let _ = child.wait();
                self.watchdog = None;
                panic!(
                    "server did not exit within {STOP_TIMEOUT:?} after SIGINT (killed it)\n{}",
                    self.context()
                );
            }
            thread::sleep(Duration::from_millis(20));
        }
    }

    /// `stop`, and fails the test unless the server exited with status 0.
    #[track_caller]
    pub fn stop_clean(&mut self) {
        let status = self.stop();
        assert!(
            status.success(),
            "server did not shut down cleanly on SIGINT: {status}\n{}",
            self.context()
        );
    }

    /// SIGKILL, no clean shutdown (for crash tests), then wait.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
        self.watchdog = None;
    }

    /// Stops the server cleanly if it runs, then starts it again on the same data
    /// directory with the same settings (on a fresh port).
    #[track_caller]
    pub fn restart(&mut self) {
        if self.child.is_some() {
            self.stop_clean();
        }
        if let Err(e) = self.launch() {
            panic!("restart on the same data directory failed: {e}");
        }
    }

    /// Starts the server again after `stop`/`kill` (same directory and settings).
    #[track_caller]
    pub fn start_again(&mut self) {
        assert!(self.child.is_none(), "start_again: server still running");
        if let Err(e) = self.launch() {
            panic!("start on the existing data directory failed: {e}");
        }
    }

    /// Like `start_again`, but returns why the server didn't come up.
    pub fn try_start_again(&mut self) -> Result<(), String> {
        assert!(
            self.child.is_none(),
            "try_start_again: server still running"
        );
        self.launch()
    }

    // --- the postgres crate --------------------------------------------------------

    pub fn config(&self) -> postgres::Config {
        let mut c = postgres::Config::new();
        c.host("127.0.0.1")
            .port(self.port)
            .user("postgres")
            .dbname("postgres")
            .connect_timeout(Duration::from_secs(10));
        c
    }

    pub fn try_connect(&self) -> Result<postgres::Client, postgres::Error> {
        self.config().connect(postgres::NoTls)
    }

    /// A `postgres::Client` over TCP; fails the test if it can't connect.
    #[track_caller]
    pub fn connect(&self) -> postgres::Client {
        match self.try_connect() {
            Ok(c) => c,
            Err(e) => panic!(
                "postgres crate could not connect to 127.0.0.1:{}: {e:?}\n{}",
                self.port,
                self.context()
            ),
        }
    }

    /// A `postgres::Client` over the Unix socket.
    #[track_caller]
    pub fn connect_unix(&self) -> postgres::Client {
        let mut c = self.config();
        c.host_path(self.socket_dir());
        match c.connect(postgres::NoTls) {
            Ok(c) => c,
            Err(e) => panic!(
                "postgres crate could not connect over the Unix socket in {}: {e:?}\n{}",
                self.socket_dir().display(),
                self.context()
            ),
        }
    }

    // --- psql ----------------------------------------------------------------------

    /// `psql -X -h 127.0.0.1 -p PORT -U postgres -d postgres -v ON_ERROR_STOP=1 -At`.
    pub fn psql_command(&self) -> Command {
        self.psql_command_host("127.0.0.1")
    }

    /// What `psql -X -a -q -f NAME.sql`, run in `dir`, prints (statements
    /// echoed, errors inline in order): pg_regress's way of checking a file.
    pub fn psql_echo_file(&self, dir: &Path, name: &str) -> String {
        let script = format!(
            "{} -X -a -q -h 127.0.0.1 -p {} -U postgres -d postgres -f {name}.sql 2>&1",
            pg_tool("psql").display(),
            self.port
        );
        let mut cmd = client_command(Path::new("sh"));
        cmd.arg("-c").arg(script).current_dir(dir);
        let out = run_with_timeout(&mut cmd, Duration::from_secs(120));
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// `psql -X -h 127.0.0.1 -p PORT -U postgres -d postgres`: psql's default
    /// aligned output, as a user sees it.
    pub fn psql_command_aligned(&self) -> Command {
        let mut cmd = client_command(&pg_tool("psql"));
        cmd.args(["-X", "-h", "127.0.0.1", "-p", &self.port.to_string()])
            .args(["-U", "postgres", "-d", "postgres"]);
        cmd
    }

    /// The psql command line connecting through `host` (an address or a socket dir).
    pub fn psql_command_host(&self, host: &str) -> Command {
        let mut cmd = client_command(&pg_tool("psql"));
        cmd.args(["-X", "-h", host, "-p", &self.port.to_string()])
            .args([
                "-U",
                "postgres",
                "-d",
                "postgres",
                "-v",
                "ON_ERROR_STOP=1",
                "-At",
            ]);
        cmd
    }

    /// Runs a psql command; returns its output (whatever its exit status).
    pub fn run_psql(&self, mut cmd: Command) -> Output {
        run_with_timeout(&mut cmd, CLIENT_TIMEOUT)
    }

    #[track_caller]
    fn expect_success(&self, what: &str, out: Output) -> String {
        if !out.status.success() {
            panic!(
                "psql {what} failed ({})\nstdout:\n{}\nstderr:\n{}\n{}",
                out.status,
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr),
                self.context()
            );
        }
        let s = String::from_utf8_lossy(&out.stdout).into_owned();
        s.strip_suffix('\n').unwrap_or(&s).to_string()
    }

    /// `psql ... -c SQL` over TCP; returns stdout without the final newline.
    /// Fails the test (with psql's stderr and the server log) on an error.
    #[track_caller]
    pub fn psql(&self, sql: &str) -> String {
        let mut cmd = self.psql_command();
        cmd.arg("-c").arg(sql);
        let out = self.run_psql(cmd);
        self.expect_success(&format!("-c {sql:?}"), out)
    }

    /// `psql ... -c SQL` over the Unix socket.
    #[track_caller]
    pub fn psql_unix(&self, sql: &str) -> String {
        let mut cmd = self.psql_command_host(&self.socket_dir().to_string_lossy());
        cmd.arg("-c").arg(sql);
        let out = self.run_psql(cmd);
        self.expect_success(&format!("(Unix socket) -c {sql:?}"), out)
    }

    /// `psql ... -f FILE`; returns stdout without the final newline.
    #[track_caller]
    pub fn psql_file(&self, path: &Path) -> String {
        let mut cmd = self.psql_command();
        cmd.arg("-f").arg(path);
        let out = self.run_psql(cmd);
        self.expect_success(&format!("-f {}", path.display()), out)
    }

    /// Writes `script` to a file in the test's temp dir and runs it with `psql -f`.
    #[track_caller]
    pub fn psql_script(&self, script: &str) -> String {
        let path = self.write_file("script.sql", script);
        self.psql_file(&path)
    }

    /// Runs `sql` with psql expecting it to fail; returns psql's stderr.
    #[track_caller]
    pub fn psql_err(&self, sql: &str) -> String {
        let mut cmd = self.psql_command();
        cmd.arg("-c").arg(sql);
        let out = self.run_psql(cmd);
        assert!(
            !out.status.success(),
            "psql -c {sql:?} was expected to fail but succeeded; stdout:\n{}",
            String::from_utf8_lossy(&out.stdout)
        );
        String::from_utf8_lossy(&out.stderr).into_owned()
    }

    /// Writes a file in the test's temp dir; returns its path.
    pub fn write_file(&self, name: &str, contents: &str) -> PathBuf {
        let path = self.dir.path().join(name);
        std::fs::write(&path, contents).unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
        path
    }

    /// The test's temp dir (holds data/, sock/, server.log and files written by tests).
    pub fn temp_dir(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        if thread::panicking() {
            eprintln!(
                "--- scalegres server log ({}), last 60 lines ---\n{}\n--- end of server log ---",
                self.log_path().display(),
                self.log_tail(60)
            );
        }
        self.kill();
    }
}

/// A small deterministic generator (SplitMix64) for randomised tests: the
/// same seed gives the same sequence on every platform, so a failure's seed
/// reproduces it.
#[derive(Clone, Debug)]
pub struct TestRng(u64);

impl TestRng {
    pub fn new(seed: u64) -> TestRng {
        TestRng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: i64, hi: i64) -> i64 {
        assert!(lo <= hi, "empty range {lo}..={hi}");
        let span = (hi - lo) as u64 + 1;
        lo + (self.next_u64() % span) as i64
    }

    /// True with probability `percent`/100.
    pub fn chance(&mut self, percent: u64) -> bool {
        self.next_u64() % 100 < percent
    }

    /// One element of a non-empty slice.
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.range(0, items.len() as i64 - 1) as usize]
    }

    /// Fisher–Yates shuffle in place.
    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let j = self.range(0, i as i64) as usize;
            items.swap(i, j);
        }
    }
}

/// The seed for a randomised test: `$var` if set (to reproduce a failure),
/// otherwise `default`. Tests print it in every failure message.
pub fn test_seed(var: &str, default: u64) -> u64 {
    match std::env::var(var) {
        Ok(v) => v
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("{var}={v:?} is not an unsigned integer")),
        Err(_) => default,
    }
}
