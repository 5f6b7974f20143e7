"""Suite `pgbench`: the real pgbench 15 against both servers (issue 14).

Both servers run with the same shared_buffers (the harness's), the same
max_connections (SETTINGS) and synchronous_commit on by default; a TPC-B
run with synchronous_commit off sets it for its own sessions
(PGOPTIONS=-c synchronous_commit=off), on both servers alike.

For each scale factor S (full run: 5, whose ~80 MB fit in 128MB of
shared_buffers, and 20, ~320 MB, which do not but fit in RAM; --quick: 2):

1. `pgbench -i -q -s S` timed (drop, create, COPY ... FREEZE, VACUUM
   ANALYZE, primary keys), then `checkpoint`;
2. select-only (`-b select-only`) in `-M prepared` and `-M simple` at
   1, 2, 4, 8, 16, 32, 64 clients (--quick: prepared at 8);
3. TPC-B (`-b tpcb-like`, `-M prepared`) at 1, 8, 32 clients with
   synchronous_commit on and off (--quick: on, 8 clients); after each run
   sum(abalance) = sum(tbalance) = sum(bbalance) = sum(delta) is checked.

Every run is `pgbench -n -c N -j min(N, CPUs) -T D` (D = BENCH_PGBENCH_SECONDS,
default 15; --quick: 10) after one untimed warm-up of select-only at 8
clients. BENCH_PGBENCH_SCALES (e.g. "5,20") overrides the scales.

Report: a markdown table per scale (tps of both and Scalegres / PostgreSQL),
the load times, the invariant checks, and PNG plots of tps against clients
for each workload (both servers on one plot) under bench/results/, drawn by
bench/lib/plot_pgbench.py with matplotlib from bench/.venv (created and
filled with `pip install matplotlib` on first use; without it the report
says the plots were skipped). Last line:
`pgbench: select_only_ratio=... tpcb_ratio=... load_ratio=... invariant=ok|FAILED`
with the medians over the client counts (and modes and scales) of
Scalegres tps / PostgreSQL tps, and load_ratio = PostgreSQL's load time /
Scalegres' (higher is better for Scalegres in all three).
"""

import datetime
import json
import os
import re
import statistics
import subprocess
import sys
import time

from harness import PG_BIN, BenchError, clean_env

NAME = "pgbench"
SETTINGS = ["max_connections=110"]

SELECT_CLIENTS = [1, 2, 4, 8, 16, 32, 64]
SELECT_MODES = ["prepared", "simple"]
TPCB_CLIENTS = [1, 8, 32]
SYNC_MODES = ["on", "off"]

TPS_RE = re.compile(r"^tps = ([0-9.]+) \(without initial connection time\)", re.M)
FAILED_RE = re.compile(r"^number of failed transactions: (\d+)", re.M)

BENCH_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# {server label: [notes]} gathered while running (failures, invariant checks).
NOTES = {}


def scales(quick):
    env = os.environ.get("BENCH_PGBENCH_SCALES")
    if env:
        return [int(s) for s in env.split(",") if s.strip()]
    return [2] if quick else [5, 20]


def seconds(quick):
    return int(os.environ.get("BENCH_PGBENCH_SECONDS", "10" if quick else "15"))


def plan(quick):
    """[(workload key, mode, clients)] in run order for one scale."""
    if quick:
        return [("select", "prepared", 8), ("tpcb_on", "prepared", 8)]
    runs = [("select", m, n) for n in SELECT_CLIENTS for m in SELECT_MODES]
    runs += [(f"tpcb_{s}", "prepared", n) for s in SYNC_MODES for n in TPCB_CLIENTS]
    return runs


def describe(quick):
    return (f"scales {', '.join(map(str, scales(quick)))}; pgbench -n -c N -j min(N, "
            f"{os.cpu_count()}) -T {seconds(quick)}; select-only "
            f"{'-M prepared at 8' if quick else '-M prepared|simple at ' + ', '.join(map(str, SELECT_CLIENTS))}"
            f" clients; TPC-B -M prepared "
            f"at {'8' if quick else ', '.join(map(str, TPCB_CLIENTS))} clients with "
            f"synchronous_commit {'on' if quick else 'on and off'}; {' '.join(SETTINGS)} on both")


def measurements(quick):
    return []


def pgbench_argv(server, *args):
    return [os.path.join(PG_BIN, "pgbench"), "-h", "127.0.0.1", "-p", str(server.port),
            "-U", "postgres", *args, "postgres"]


def run_pgbench(server, args, env_extra=None, timeout=3600):
    env = clean_env()
    env.update(env_extra or {})
    return subprocess.run(pgbench_argv(server, *args), capture_output=True, text=True, env=env,
                          stdin=subprocess.DEVNULL, timeout=timeout)


def first_error(r):
    text = r.stderr + r.stdout
    lines = [line.strip() for line in text.splitlines() if "error" in line.lower()]
    return (lines[0] if lines else (text.strip().splitlines() or ["?"])[-1])[:300]


def initialise(server, s, log):
    """`pgbench -i -q -s s`, timed; returns seconds."""
    log(f"{server.label}: pgbench -i -q -s {s}")
    t0 = time.monotonic()
    r = run_pgbench(server, ["-i", "-q", "-s", str(s)])
    took = time.monotonic() - t0
    if r.returncode != 0:
        raise BenchError(f"{server.label}: pgbench -i -s {s} failed: {first_error(r)}")
    got = server.psql("select count(*) from pgbench_accounts;").strip()
    if got != str(s * 100_000):
        raise BenchError(f"{server.label}: pgbench_accounts has {got} rows after -i -s {s}")
    server.psql("checkpoint;")
    return took


def balances(server):
    out = server.psql(
        "select coalesce((select sum(abalance) from pgbench_accounts), 0),"
        " coalesce((select sum(tbalance) from pgbench_tellers), 0),"
        " coalesce((select sum(bbalance) from pgbench_branches), 0),"
        " coalesce((select sum(delta) from pgbench_history), 0);").strip()
    return [int(x) for x in out.split("|")]


def measure(server, workload, mode, clients, secs):
    """One pgbench run; returns tps. Raises BenchError if it fails or any
    transaction failed."""
    args = ["-n", "-M", mode, "-c", str(clients), "-j", str(min(clients, os.cpu_count() or 1)),
            "-T", str(secs), "-b", "select-only" if workload == "select" else "tpcb-like"]
    env = {"PGOPTIONS": "-c synchronous_commit=off"} if workload == "tpcb_off" else None
    r = run_pgbench(server, args, env, timeout=secs + 600)
    m = TPS_RE.search(r.stdout)
    if r.returncode != 0 or not m:
        raise BenchError(f"pgbench {' '.join(args)} failed: {first_error(r)}")
    f = FAILED_RE.search(r.stdout)
    if f and int(f.group(1)) != 0:
        raise BenchError(f"pgbench {' '.join(args)}: {f.group(1)} failed transactions")
    return float(m.group(1))


def run(server, quick, log):
    """{"load_S": [seconds], "W_M_N_S": [tps]} for this server."""
    out = {}
    notes = NOTES.setdefault(server.label, [])
    secs = seconds(quick)
    for s in scales(quick):
        try:
            out[f"load_{s}"] = [initialise(server, s, log)]
        except BenchError as e:
            notes.append(f"scale {s}: not measured: {e}")
            log(notes[-1])
            continue
        log(f"{server.label}: scale {s} loaded in {out[f'load_{s}'][0]:.1f} s; warming up")
        try:
            measure(server, "select", "prepared", 8, min(5, secs))
        except BenchError as e:
            notes.append(f"scale {s}: warm-up failed: {e}")
        for workload, mode, n in plan(quick):
            key = f"{workload}_{mode}_{n}_{s}"
            try:
                tps = measure(server, workload, mode, n, secs)
            except BenchError as e:
                notes.append(f"scale {s}: {key}: {e}")
                log(f"{server.label}: {notes[-1]}")
                continue
            out[key] = [tps]
            log(f"{server.label}: scale {s} {workload} -M {mode} -c {n}: {tps:,.0f} tps")
            if workload.startswith("tpcb"):
                b = balances(server)
                ok = len(set(b)) == 1
                out.setdefault("invariant_checks", []).append(1.0 if ok else 0.0)
                if not ok:
                    notes.append(f"scale {s}: TPC-B invariant broken after {key}: "
                                 f"sum(abalance, tbalance, bbalance, delta) = {b}")
                    log(f"{server.label}: {notes[-1]}")
    return out


WORKLOAD_LABELS = {
    "select_prepared": "select-only, -M prepared",
    "select_simple": "select-only, -M simple",
    "tpcb_on_prepared": "TPC-B, synchronous_commit on",
    "tpcb_off_prepared": "TPC-B, synchronous_commit off",
}


def curves(quick):
    """[(workload, mode, [clients])] in report order."""
    seen = []
    for workload, mode, n in plan(quick):
        c = next((c for c in seen if c[0] == workload and c[1] == mode), None)
        if c is None:
            c = (workload, mode, [])
            seen.append(c)
        c[2].append(n)
    return seen


def fmt_tps(v):
    return f"{v:,.0f}" if v else "—"


def make_plots(series, stamp):
    """Draws one PNG per (scale, workload) with bench/lib/plot_pgbench.py in
    bench/.venv (matplotlib); returns (paths, None) or ([], why not)."""
    venv = os.path.join(BENCH_DIR, ".venv")
    python = os.path.join(venv, "bin", "python")
    try:
        if not os.access(python, os.X_OK):
            subprocess.run([sys.executable, "-m", "venv", venv], check=True, capture_output=True)
        if subprocess.run([python, "-c", "import matplotlib"], capture_output=True).returncode:
            r = subprocess.run([python, "-m", "pip", "install", "-q", "matplotlib"],
                               capture_output=True, text=True, timeout=600)
            if r.returncode != 0:
                return [], f"pip install matplotlib failed: {r.stderr.strip()[-300:]}"
    except (OSError, subprocess.SubprocessError) as e:
        return [], f"no plotting environment: {e}"
    out_dir = os.path.join(BENCH_DIR, "results")
    spec = {"out_dir": out_dir, "prefix": f"pgbench-{stamp}", "series": series}
    r = subprocess.run([python, os.path.join(BENCH_DIR, "lib", "plot_pgbench.py")],
                       input=json.dumps(spec), capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        return [], f"plotting failed: {r.stderr.strip()[-300:]}"
    return [line for line in r.stdout.splitlines() if line.endswith(".png")], None


def report(samples, quick):
    pg, sg = samples.get("PostgreSQL", {}), samples.get("Scalegres", {})
    get = (lambda d, k: (d.get(k) or [None])[0])
    lines = []
    select_ratios, tpcb_ratios, load_ratios = [], [], []
    series = []
    for s in scales(quick):
        lines.append(f"### Scale {s} ({s * 100_000:,} accounts)")
        lines.append("")
        a, b = get(pg, f"load_{s}"), get(sg, f"load_{s}")
        if a and b:
            load_ratios.append(a / b)
        secs = (lambda v: f"{v:.1f} s" if v else "—")
        ratio = f", ratio {a / b:.2f} (PostgreSQL time / Scalegres time)" if a and b else ""
        lines.append(f"`pgbench -i -q -s {s}`: PostgreSQL {secs(a)}, Scalegres {secs(b)}{ratio}")
        lines.append("")
        lines.append("| workload | clients | PostgreSQL tps | Scalegres tps | Scalegres / PostgreSQL |")
        lines.append("| --- | ---: | ---: | ---: | ---: |")
        for workload, mode, clients in curves(quick):
            label = WORKLOAD_LABELS[f"{workload}_{mode}"]
            points = {"PostgreSQL": [], "Scalegres": []}
            for n in clients:
                key = f"{workload}_{mode}_{n}_{s}"
                x, y = get(pg, key), get(sg, key)
                ratio = "n/a"
                if x and y:
                    ratio = f"{y / x:.2f}"
                    (select_ratios if workload == "select" else tpcb_ratios).append(y / x)
                lines.append(f"| {label} | {n} | {fmt_tps(x)} | {fmt_tps(y)} | {ratio} |")
                points["PostgreSQL"].append([n, x])
                points["Scalegres"].append([n, y])
            series.append({"title": f"{label}, scale {s}",
                           "file": f"s{s}-{workload}-{mode}", "points": points})
        lines.append("")
    lines.append("ratio = Scalegres tps / PostgreSQL tps (higher is better for Scalegres); "
                 "one run of each point.")
    lines.append("")
    invariant_ok = True
    for label, d in (("PostgreSQL", pg), ("Scalegres", sg)):
        checks = d.get("invariant_checks", [])
        good = sum(1 for c in checks if c == 1.0)
        if good != len(checks):
            invariant_ok = False
        if checks:
            lines.append(f"- {label}: TPC-B invariant held after {good} of {len(checks)} runs")
        for note in NOTES.get(label, []):
            lines.append(f"- {label}: {note}")
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    plots, why = make_plots(series, stamp)
    if plots:
        lines.append("")
        lines.append("Plots: " + ", ".join(f"`{os.path.relpath(p, os.path.dirname(BENCH_DIR))}`"
                                           for p in plots))
    else:
        lines.append(f"- plots skipped: {why}")
    lines.append("")

    def med(v):
        return f"{statistics.median(v):.2f}" if v else "n/a"

    pairs = [f"select_only_ratio={med(select_ratios)}", f"tpcb_ratio={med(tpcb_ratios)}",
             f"load_ratio={med(load_ratios)}",
             f"invariant={'ok' if invariant_ok else 'FAILED'}"]
    return lines, pairs
