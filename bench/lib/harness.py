"""Benchmark harness: starts Scalegres and PostgreSQL 15 side by side, runs a
suite against both through psql, and reports the comparison.

Standard library only. See bench/README.md.
"""

import datetime
import os
import platform
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

PG_BIN = "/usr/lib/postgresql/15/bin"
PG_SYSTEM_USER = "postgres"
DEFAULT_SHARED_BUFFERS = "128MB"
START_TIMEOUT_S = float(os.environ.get("BENCH_START_TIMEOUT", "120"))
STOP_TIMEOUT_S = 60.0

TIME_RE = re.compile(r"^Time: ([0-9]+(?:\.[0-9]+)?) ms")


class BenchError(Exception):
    pass


class Interrupted(BaseException):
    pass


def log(msg):
    print(f"[bench] {msg}", file=sys.stderr, flush=True)


def free_port():
    """Asks the kernel for a free TCP port on 127.0.0.1 (bind port 0, release it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def psql_path():
    p = os.path.join(PG_BIN, "psql")
    if os.access(p, os.X_OK):
        return p
    p = shutil.which("psql")
    if p:
        return p
    raise BenchError("psql not found (install postgresql-15)")


def clean_env():
    """The environment for client programs: no inherited PG* connection settings."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
    env["PGCONNECT_TIMEOUT"] = "10"
    return env


def tail(path, n=40):
    try:
        with open(path, "r", errors="replace") as f:
            return "".join(f.readlines()[-n:])
    except OSError as e:
        return f"(could not read {path}: {e})"


# Settings the running suite asks both servers for (its SETTINGS list).
SUITE_SETTINGS = []


def extra_settings(side):
    """The suite's SETTINGS, then per-side server settings from
    BENCH_PG_SETTINGS / BENCH_SCALEGRES_SETTINGS (space-separated name=value,
    e.g. "bgwriter_lru_maxpages=0"), for ablations."""
    return SUITE_SETTINGS + os.environ.get(f"BENCH_{side}_SETTINGS", "").split()


def as_system_user(argv):
    """Runs argv as the postgres system user when we are root (PostgreSQL
    refuses to run as root); as ourselves otherwise."""
    if os.geteuid() != 0:
        return argv
    if shutil.which("runuser"):
        return ["runuser", "-u", PG_SYSTEM_USER, "--"] + argv
    import shlex
    return ["su", PG_SYSTEM_USER, "-s", "/bin/sh", "-c", " ".join(shlex.quote(a) for a in argv)]


class Server:
    """One running server that psql can reach on 127.0.0.1:port as user postgres."""

    label = "?"

    def __init__(self, workdir, port, shared_buffers):
        self.workdir = workdir
        self.port = port
        self.shared_buffers = shared_buffers
        self.logfile = os.path.join(workdir, "server.log")

    # --- psql -------------------------------------------------------------
    def psql_argv(self, *extra):
        return [psql_path(), "-X", "-q", "-h", "127.0.0.1", "-p", str(self.port),
                "-U", "postgres", "-d", "postgres", "-v", "ON_ERROR_STOP=1", "-At", *extra]

    def psql(self, sql, timeout=3600):
        """Runs sql (one or more statements) in one psql session; returns stdout."""
        r = subprocess.run(self.psql_argv(), input=sql, capture_output=True, text=True,
                           env=clean_env(), timeout=timeout)
        if r.returncode != 0:
            raise BenchError(f"{self.label}: psql failed (exit {r.returncode}) running:\n{sql}\n"
                             f"stderr:\n{r.stderr}\nserver log tail:\n{tail(self.logfile)}")
        return r.stdout

    def time_sql(self, sql, repeats=1, warmup=0, timeout=3600):
        """Runs `sql` (one statement) warmup+repeats times in one psql session with
        \\timing on and results discarded; returns the timed runs in ms (psql's
        \\timing: from sending the query to receiving its whole result, without
        connection start-up)."""
        stmt = sql.strip().rstrip(";") + ";\n"
        script = "\\timing on\n\\o /dev/null\n" + stmt * (warmup + repeats)
        out = self.psql(script, timeout=timeout)
        times = [float(m.group(1)) for m in map(TIME_RE.match, out.splitlines()) if m]
        if len(times) != warmup + repeats:
            raise BenchError(f"{self.label}: expected {warmup + repeats} timings from psql, "
                             f"got {len(times)}; output:\n{out}")
        return times[warmup:]

    def ready(self):
        r = subprocess.run(self.psql_argv("-c", "select 1"), capture_output=True, text=True,
                           env=clean_env(), timeout=30, stdin=subprocess.DEVNULL)
        return r.returncode == 0 and r.stdout.strip() == "1"

    def wait_ready(self):
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if not self.alive():
                raise BenchError(f"{self.label} exited during start-up; log tail:\n{tail(self.logfile)}")
            if self.ready():
                return
            time.sleep(0.2)
        raise BenchError(f"{self.label} did not accept connections within {START_TIMEOUT_S:.0f} s; "
                         f"log tail:\n{tail(self.logfile)}")

    def alive(self):
        return True

    def version(self):
        try:
            return self.psql("show server_version;").strip()
        except BenchError:
            return "?"


class PostgresServer(Server):
    label = "PostgreSQL"

    def __init__(self, workdir, port, shared_buffers):
        super().__init__(workdir, port, shared_buffers)
        self.datadir = os.path.join(workdir, "data")
        self.started = False

    def start(self):
        if os.geteuid() == 0:
            shutil.chown(self.workdir, user=PG_SYSTEM_USER)
        os.chmod(self.workdir, 0o700)
        log(f"PostgreSQL: initdb in {self.datadir}")
        r = subprocess.run(as_system_user([os.path.join(PG_BIN, "initdb"), "-D", self.datadir,
                                           "-U", "postgres", "--auth=trust", "-E", "UTF8",
                                           "--locale=C", "--no-sync"]),
                           capture_output=True, text=True, stdin=subprocess.DEVNULL)
        if r.returncode != 0:
            raise BenchError(f"initdb failed:\n{r.stdout}\n{r.stderr}")
        opts = (f"-p {self.port} -c listen_addresses=127.0.0.1 "
                f"-c unix_socket_directories={self.workdir} -c shared_buffers={self.shared_buffers}")
        for setting in extra_settings("PG"):
            opts += f" -c {setting}"
        log(f"PostgreSQL: starting on port {self.port} (shared_buffers={self.shared_buffers})")
        r = subprocess.run(as_system_user([os.path.join(PG_BIN, "pg_ctl"), "-D", self.datadir,
                                           "-l", self.logfile, "-o", opts, "-w", "-t", "120", "start"]),
                           capture_output=True, text=True, stdin=subprocess.DEVNULL)
        self.started = True
        if r.returncode != 0:
            raise BenchError(f"pg_ctl start failed:\n{r.stdout}\n{r.stderr}\nlog tail:\n{tail(self.logfile)}")
        self.wait_ready()

    def alive(self):
        return os.path.exists(os.path.join(self.datadir, "postmaster.pid"))

    def stop(self):
        if not self.started:
            return
        self.started = False
        log("PostgreSQL: stopping")
        try:
            r = subprocess.run(as_system_user([os.path.join(PG_BIN, "pg_ctl"), "-D", self.datadir,
                                               "-m", "fast", "-w", "-t", str(int(STOP_TIMEOUT_S)), "stop"]),
                               capture_output=True, text=True, stdin=subprocess.DEVNULL,
                               timeout=STOP_TIMEOUT_S + 10)
            if r.returncode == 0:
                return
            log(f"PostgreSQL: pg_ctl stop failed: {r.stderr.strip()}")
        except subprocess.TimeoutExpired:
            log("PostgreSQL: pg_ctl stop timed out")
        subprocess.run(as_system_user([os.path.join(PG_BIN, "pg_ctl"), "-D", self.datadir,
                                       "-m", "immediate", "stop"]),
                       capture_output=True, stdin=subprocess.DEVNULL)


class ScalegresServer(Server):
    label = "Scalegres"

    def __init__(self, workdir, port, shared_buffers, binary):
        super().__init__(workdir, port, shared_buffers)
        self.binary = binary
        self.datadir = os.path.join(workdir, "data")
        self.proc = None

    def start(self):
        argv = [self.binary, "-D", self.datadir, "-p", str(self.port),
                "-c", "listen_addresses=127.0.0.1",
                "-c", f"unix_socket_directories={self.workdir}",
                "-c", f"shared_buffers={self.shared_buffers}"]
        for setting in extra_settings("SCALEGRES"):
            argv += ["-c", setting]
        log(f"Scalegres: starting {' '.join(argv)}")
        with open(self.logfile, "ab") as logf:
            # Own session: a Ctrl-C in the terminal reaches only this script, which
            # then stops the server itself.
            self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=logf,
                                         stderr=subprocess.STDOUT, start_new_session=True)
        self.wait_ready()

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def stop(self):
        if self.proc is None:
            return
        proc, self.proc = self.proc, None
        if proc.poll() is not None:
            log(f"Scalegres: had already exited with status {proc.returncode}")
            return
        log("Scalegres: stopping (SIGTERM)")
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=STOP_TIMEOUT_S)
            if proc.returncode != 0:
                log(f"Scalegres: exited with status {proc.returncode} after SIGTERM")
        except subprocess.TimeoutExpired:
            log(f"Scalegres: still running {STOP_TIMEOUT_S:.0f} s after SIGTERM; sending SIGKILL")
            proc.kill()
            proc.wait()


# --- machine and environment description ---------------------------------------

def machine_info():
    cpu = "?"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    try:
        nproc = subprocess.run(["nproc"], capture_output=True, text=True).stdout.strip()
    except OSError:
        nproc = str(os.cpu_count())
    mem = "?"
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal"):
                    kb = int(line.split()[1])
                    mem = f"{kb / 1024 / 1024:.1f} GiB"
                    break
    except OSError:
        pass
    return {"nproc": nproc, "cpu": cpu, "memory": mem,
            "kernel": f"{platform.system()} {platform.release()}"}


def git_describe(repo):
    try:
        rev = subprocess.run(["git", "-C", repo, "rev-parse", "--short", "HEAD"],
                             capture_output=True, text=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", repo, "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True).stdout.strip()
        return (rev or "?") + (" (with uncommitted changes)" if dirty else "")
    except OSError:
        return "?"


# --- setup steps ----------------------------------------------------------------

def ensure_postgresql():
    if os.access(os.path.join(PG_BIN, "postgres"), os.X_OK):
        return
    if os.geteuid() != 0:
        raise BenchError(f"{PG_BIN}/postgres is missing; install postgresql-15 (as root: "
                         "apt-get update && apt-get install -y postgresql-15)")
    log("installing postgresql-15 with apt-get")
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    for argv in (["apt-get", "update", "-qq"],
                 ["apt-get", "install", "-y", "-qq", "--no-install-recommends", "postgresql-15"]):
        r = subprocess.run(argv, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True)
        if r.returncode != 0:
            raise BenchError(f"{' '.join(argv)} failed:\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}")
    if not os.access(os.path.join(PG_BIN, "postgres"), os.X_OK):
        raise BenchError("postgresql-15 installed but postgres binary still missing")


def build_scalegres(repo):
    log("cargo build --release -p server")
    r = subprocess.run(["cargo", "build", "--release", "-p", "server"], cwd=repo,
                       stdin=subprocess.DEVNULL)
    if r.returncode != 0:
        raise BenchError("cargo build --release -p server failed")
    binary = release_binary(repo)
    if not os.access(binary, os.X_OK):
        raise BenchError(f"{binary} not found after build")
    return binary


def release_binary(repo):
    """target/release/scalegres, under CARGO_TARGET_DIR when that is set (as
    cargo builds it there)."""
    target = os.environ.get("CARGO_TARGET_DIR") or os.path.join(repo, "target")
    return os.path.join(os.path.abspath(os.path.join(repo, target)), "release", "scalegres")


# --- reporting ------------------------------------------------------------------

def pgbench_tps(server, script, seconds, args, env_extra=None):
    """Runs pgbench with a custom script against `server`; returns its tps."""
    fd, path = tempfile.mkstemp(suffix=".sql")
    with os.fdopen(fd, "w") as f:
        f.write(script)
    env = clean_env()
    env.update(env_extra or {})
    argv = [os.path.join(PG_BIN, "pgbench"), "-n", "-h", "127.0.0.1", "-p", str(server.port),
            "-U", "postgres", "-T", str(seconds), "-f", path, *args, "postgres"]
    r = subprocess.run(argv, capture_output=True, text=True, env=env, stdin=subprocess.DEVNULL)
    os.unlink(path)
    m = re.search(r"tps = ([0-9.]+)", r.stdout)
    if r.returncode != 0 or not m:
        raise BenchError(f"{server.label}: pgbench failed:\n{r.stdout}\n{r.stderr}")
    return float(m.group(1))


def fmt_ms(v):
    return "—" if v is None else f"{v:.1f}"


def fmt_ratio(pg, sg):
    if pg is None or sg is None or sg <= 0:
        return "n/a"
    return f"{pg / sg:.2f}"


def median(samples):
    return statistics.median(samples) if samples else None


def run_suite(suite, repo, quick, pg_only, no_build):
    """Runs one suite module against both servers; returns the process exit code."""
    shared_buffers = os.environ.get("BENCH_SHARED_BUFFERS", DEFAULT_SHARED_BUFFERS)
    keep = os.environ.get("BENCH_KEEP") == "1"
    tmp_parent = os.environ.get("BENCH_TMPDIR") or tempfile.gettempdir()

    def on_signal(signum, _frame):
        raise Interrupted(f"signal {signum}")

    for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(s, on_signal)

    servers = []
    base = None
    output = None
    try:
        ensure_postgresql()
        binary = None
        if not pg_only:
            binary = os.environ.get("BENCH_SCALEGRES_BIN")
            if not binary:
                binary = release_binary(repo) if no_build else build_scalegres(repo)
            if not os.access(binary, os.X_OK):
                raise BenchError(f"{binary} not found")

        SUITE_SETTINGS[:] = list(getattr(suite, "SETTINGS", []))
        base = tempfile.mkdtemp(prefix=f"scalegres-bench-{suite.NAME}-", dir=tmp_parent)
        os.chmod(base, 0o755)  # the postgres system user must reach its own subdirectory
        pg_dir = os.path.join(base, "postgresql")
        os.mkdir(pg_dir)
        pg = PostgresServer(pg_dir, free_port(), shared_buffers)
        servers.append(pg)
        pg.start()
        sg = None
        if not pg_only:
            sg_dir = os.path.join(base, "scalegres")
            os.mkdir(sg_dir)
            sg = ScalegresServer(sg_dir, free_port(), shared_buffers, binary)
            servers.append(sg)
            sg.start()

        measurements = suite.measurements(quick)
        results = {}
        samples = {}
        for server in [pg] + ([sg] if sg else []):
            log(f"running suite {suite.NAME} against {server.label}")
            raw = suite.run(server, quick, log)
            # Leave the machine quiet for the next server: no checkpoint or
            # writeback of this one's data may run during the other's timings.
            try:
                server.psql("checkpoint;")
            except BenchError as e:
                log(f"{server.label}: checkpoint after the suite failed: {e}")
            os.sync()
            samples[server.label] = raw
            results[server.label] = {k: median(v) for k, v in raw.items()}

        # --- report -----------------------------------------------------------
        stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
        info = machine_info()
        lines = []
        lines.append(f"# Benchmark `{suite.NAME}`{' (--quick)' if quick else ''}")
        lines.append("")
        lines.append(f"- date: {datetime.datetime.now().isoformat(timespec='seconds')}")
        lines.append(f"- machine: {info['nproc']} CPUs ({info['cpu']}), {info['memory']} memory, {info['kernel']}")
        sg_desc = f"git {git_describe(repo)}"
        if pg_only:
            sg_desc += " (not run: --pg-only)"
        elif os.environ.get("BENCH_SCALEGRES_BIN"):
            sg_desc = f"binary {binary} (BENCH_SCALEGRES_BIN)"
        lines.append(f"- scalegres: {sg_desc}")
        lines.append(f"- postgresql: {pg.version()}")
        lines.append(f"- shared_buffers: {shared_buffers} on both")
        for side, label in (("PG", "postgresql"), ("SCALEGRES", "scalegres")):
            if extra_settings(side):
                lines.append(f"- extra {label} settings: {' '.join(extra_settings(side))}")
        lines.append(f"- parameters: {suite.describe(quick)}")
        lines.append("")
        if hasattr(suite, "report"):
            # The suite reports its own figures (e.g. throughput instead of
            # times): report(samples, quick) -> (markdown lines, ["name=value", ...]),
            # samples being {server label: the dict its run() returned}.
            body, ratio_pairs = suite.report(samples, quick)
            lines.extend(body)
        else:
            lines.append("| query | PostgreSQL ms | Scalegres ms | ratio |")
            lines.append("| --- | ---: | ---: | ---: |")
            ratio_pairs = []
            for key, label, ratio_name in measurements:
                pg_ms = results["PostgreSQL"].get(key)
                sg_ms = results.get("Scalegres", {}).get(key)
                ratio = fmt_ratio(pg_ms, sg_ms)
                lines.append(f"| {label} | {fmt_ms(pg_ms)} | {fmt_ms(sg_ms)} | {ratio} |")
                ratio_pairs.append(f"{ratio_name}={ratio}")
            lines.append("")
            lines.append("ratio = PostgreSQL ms / Scalegres ms (higher is better for Scalegres); "
                         "each value is the median of the timed runs (psql \\timing).")
            lines.append("")
            lines.append("Samples (ms):")
            lines.append("")
            for label, raw in samples.items():
                for key, _, _ in measurements:
                    vals = ", ".join(f"{v:.1f}" for v in raw.get(key, []))
                    lines.append(f"- {label} {key}: {vals}")
        report = "\n".join(lines) + "\n"

        results_dir = os.path.join(repo, "bench", "results")
        os.makedirs(results_dir, exist_ok=True)
        out_path = os.path.join(results_dir, f"{suite.NAME}-{stamp}.md")
        with open(out_path, "w") as f:
            f.write(report)
        output = (report + f"\nsaved to {os.path.relpath(out_path, repo)}\n"
                  + f"{suite.NAME}: " + " ".join(ratio_pairs))
    except BenchError as e:
        log(f"FAILED: {e}")
        return 1
    except Interrupted as e:
        log(f"interrupted ({e}); stopping servers")
        return 130
    finally:
        # Stop both servers whatever happened; ignore further signals meanwhile.
        for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(s, signal.SIG_IGN)
        for server in reversed(servers):
            try:
                server.stop()
            except Exception as e:  # keep stopping the others
                log(f"error stopping {server.label}: {e}")
        if base is not None:
            if keep:
                log(f"kept data directories under {base}")
            else:
                shutil.rmtree(base, ignore_errors=True)
    # Printed after both servers are stopped, so the summary line is the last line.
    sys.stderr.flush()
    print(output, flush=True)
    return 0
