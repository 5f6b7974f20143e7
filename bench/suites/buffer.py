"""Suite `buffer`: buffer replacement under eviction pressure (seed 003).

A hot table of about shared_buffers/4 is loaded into shared buffers with
pg_prewarm and re-read every 500 ms by one client, while 8 clients read
random single pages of a table several times larger than shared_buffers:

    create extension if not exists pg_prewarm;
    create table hot(id int, pad char(1000));   -- ~shared_buffers/4
    create table big(id int, pad char(1000));   -- ~3x shared_buffers (2x --quick)
    select pg_prewarm('hot');
    -- 1 client (pgbench):  select pg_prewarm('hot'); \\sleep 500 ms
    -- 8 clients (pgbench -n -c 8 -j 2 -T D):
    --   \\set b random(0, NBLOCKS-1)
    --   select pg_prewarm('big', 'buffer', 'main', :b, :b);

Reported per server: the readers' tps, the hit ratio from pg_stat_database
(blks_hit / (blks_hit + blks_read), delta over the run), the
pg_stat_bgwriter buffers_alloc / buffers_backend / buffers_clean deltas and,
for Scalegres, pg_stat_lwlock per tranche (reset before the run); and how
much of the hot table stays in shared buffers (pg_buffercache, sampled every
second). Then the eviction readers alone with 1 and 2 clients, in rounds:
scaling_2t = median over rounds of tps(2) / tps(1).

Last line: `buffer: scaling_2t=<Scalegres tps(2)/tps(1)>
evict_vs_pg=<Scalegres tps / PostgreSQL tps in the seed-003 scenario>`.
"""

import os
import re
import statistics
import subprocess
import tempfile
import time

from harness import PG_BIN, BenchError, clean_env

NAME = "buffer"

BLCKSZ = 8192
ROWS_PER_PAGE = 7          # (int, char(1000)) rows: 7 per 8 kB page in both servers
READERS = 8
READER_THREADS = 2         # pgbench -j
HOT_INTERVAL_MS = 500
SETTLE_S = 1.5             # lets PostgreSQL's backends and bgwriter publish their counters

TPS_RE = re.compile(r"^tps = ([0-9.]+) \(without initial connection time\)", re.M)
PROCESSED_RE = re.compile(r"^number of transactions actually processed: ([0-9]+)", re.M)


def params(quick):
    return {
        "big_factor": 2 if quick else 3,   # big table = factor x shared_buffers
        "warmup_s": 2 if quick else 3,
        "duration_s": 8 if quick else 20,
        "scaling_s": 3 if quick else 5,
        "scaling_rounds": 2 if quick else 4,
    }


def shared_buffer_blocks(setting):
    """shared_buffers as 8 kB blocks ('128MB', '1GB', '16384' = blocks)."""
    m = re.fullmatch(r"\s*([0-9]+)\s*([kKmMgGtT]?[bB]?)\s*", setting)
    if not m:
        raise BenchError(f"cannot parse shared_buffers={setting!r}")
    n, unit = int(m.group(1)), m.group(2).upper()
    mult = {"": BLCKSZ, "KB": 1024, "MB": 1 << 20, "GB": 1 << 30, "TB": 1 << 40}.get(unit)
    if mult is None:
        raise BenchError(f"cannot parse shared_buffers={setting!r}")
    return max(16, n * mult // BLCKSZ)


def describe(quick):
    p = params(quick)
    return (f"hot table ~shared_buffers/4 re-read with pg_prewarm every {HOT_INTERVAL_MS} ms by 1 "
            f"client, big table ~{p['big_factor']}x shared_buffers read one random page per "
            f"transaction by {READERS} pgbench clients (-j {READER_THREADS}) for "
            f"{p['duration_s']} s after a {p['warmup_s']} s warm-up; eviction scaling: the "
            f"big-table readers alone, 1 and 2 clients, {p['scaling_rounds']} rounds of "
            f"{p['scaling_s']} s each (median)")


def measurements(quick):
    """(key, label, ratio name); the report itself comes from report()."""
    return [
        ("seed003_tps", f"seed 003: {READERS} random readers + hot reader, tps", "evict_vs_pg"),
        ("evict_1c_tps", "eviction readers, 1 client, tps", "scaling_2t"),
        ("evict_2c_tps", "eviction readers, 2 clients, tps", "scaling_2t"),
    ]


# --- pgbench -------------------------------------------------------------------

def pgbench_argv(server, script, clients, threads, seconds):
    return [os.path.join(PG_BIN, "pgbench"), "-h", "127.0.0.1", "-p", str(server.port),
            "-U", "postgres", "-n", "-c", str(clients), "-j", str(threads),
            "-T", str(seconds), "-f", script, "postgres"]


def pgbench_result(server, proc, what):
    out, err = proc.communicate()
    text = out + err
    if proc.returncode != 0:
        raise BenchError(f"{server.label}: pgbench ({what}) failed with exit {proc.returncode}:\n"
                         f"{text[-3000:]}")
    m, n = TPS_RE.search(text), PROCESSED_RE.search(text)
    if not m or not n:
        raise BenchError(f"{server.label}: no tps in pgbench ({what}) output:\n{text[-3000:]}")
    return float(m.group(1)), int(n.group(1))


def start_pgbench(server, script, clients, threads, seconds):
    return subprocess.Popen(pgbench_argv(server, script, clients, threads, seconds),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            stdin=subprocess.DEVNULL, env=clean_env())


def run_pgbench(server, script, clients, threads, seconds, what, hot_script=None, sampler=None):
    """Runs the readers (and, with hot_script, the hot reader beside them;
    with sampler, calls it about once a second while they run); returns
    (readers tps, hot-reader transactions or None, the sampler's results)."""
    hot = start_pgbench(server, hot_script, 1, 1, seconds) if hot_script else None
    readers = None
    samples = []
    try:
        readers = start_pgbench(server, script, clients, threads, seconds)
        if sampler is not None:
            deadline = time.monotonic() + seconds - 0.5
            while True:
                time.sleep(1.0)
                if time.monotonic() >= deadline or readers.poll() is not None:
                    break
                samples.append(sampler())
        tps, _ = pgbench_result(server, readers, what)
    except BaseException:
        # Stop whatever still runs (error or Ctrl-C) before passing it on.
        for proc in (readers, hot):
            if proc is not None and proc.poll() is None:
                proc.kill()
                proc.communicate()
        raise
    hot_n = pgbench_result(server, hot, "hot reader")[1] if hot is not None else None
    return tps, hot_n, samples


# --- counters --------------------------------------------------------------------

def counters(server):
    """Cumulative pg_stat_database / pg_stat_bgwriter counters of interest."""
    out = server.psql(
        "select blks_hit, blks_read from pg_stat_database where datname = current_database();\n"
        "select buffers_alloc, buffers_backend, buffers_clean from pg_stat_bgwriter;\n")
    vals = [int(v) for line in out.split() for v in line.split("|")]
    if len(vals) != 5:
        raise BenchError(f"{server.label}: unexpected counters output:\n{out}")
    return dict(zip(["blks_hit", "blks_read", "buffers_alloc", "buffers_backend",
                     "buffers_clean"], vals))


def lwlock_stats(server):
    out = server.psql("select tranche, shared_acquires, exclusive_acquires, blocks, spin_delays "
                      "from pg_stat_lwlock;\n")
    rows = {}
    for line in out.splitlines():
        f = line.split("|")
        if len(f) == 5:
            rows[f[0]] = [int(x) for x in f[1:]]
    return rows


def hot_resident(server):
    """Buffers holding blocks of the hot table now (pg_buffercache)."""
    return int(server.psql("select count(*) from pg_buffercache "
                           "where relfilenode = pg_relation_filenode('hot') "
                           "and relforknumber = 0;\n").strip())


def is_scalegres(server):
    return server.label == "Scalegres"


# --- the suite -------------------------------------------------------------------

def run(server, quick, log):
    """Runs the suite on one server; returns {key: [value, ...]}."""
    p = params(quick)
    sb = shared_buffer_blocks(server.shared_buffers)
    hot_rows = sb // 4 * ROWS_PER_PAGE
    big_rows = sb * p["big_factor"] * ROWS_PER_PAGE
    log(f"{server.label}: loading hot ({hot_rows:,} rows) and big ({big_rows:,} rows)")
    server.psql("create extension if not exists pg_prewarm;\n"
                "create extension if not exists pg_buffercache;\n"
                "drop table if exists hot;\n"
                "drop table if exists big;\n"
                "create table hot(id int, pad char(1000));\n"
                "create table big(id int, pad char(1000));\n"
                f"insert into hot values(generate_series(1,{hot_rows}),'hot');\n"
                f"insert into big values(generate_series(1,{big_rows}),'big');\n")
    if not is_scalegres(server):
        # Keeps autovacuum from starting on the new tables during the run.
        server.psql("vacuum analyze hot;\nvacuum analyze big;\n")
    # Read everything once (hint bits) and write it out, so the measured run
    # starts with clean pages on both servers.
    server.psql("select count(*) from hot;\nselect count(*) from big;\ncheckpoint;\n")
    sizes = server.psql("select pg_relation_size('hot') / 8192;\n"
                        "select pg_relation_size('big') / 8192;\n").split()
    hot_blocks, big_blocks = int(sizes[0]), int(sizes[1])
    log(f"{server.label}: hot = {hot_blocks} blocks, big = {big_blocks} blocks, "
        f"shared_buffers = {sb} blocks")
    if big_blocks < 2 * sb:
        raise BenchError(f"{server.label}: big table has {big_blocks} blocks, expected at least "
                         f"2 x shared_buffers ({2 * sb})")

    with tempfile.TemporaryDirectory(prefix="bench-buffer-") as d:
        readers = os.path.join(d, "readers.sql")
        with open(readers, "w") as f:
            f.write(f"\\set b random(0, {big_blocks - 1})\n"
                    "select pg_prewarm('big', 'buffer', 'main', :b, :b);\n")
        hot = os.path.join(d, "hot.sql")
        with open(hot, "w") as f:
            f.write(f"select pg_prewarm('hot');\n\\sleep {HOT_INTERVAL_MS} ms\n")

        # --- seed 003 ------------------------------------------------------------
        server.psql("select pg_prewarm('hot');\n")
        log(f"{server.label}: warm-up {p['warmup_s']} s")
        run_pgbench(server, readers, READERS, READER_THREADS, p["warmup_s"], "warm-up", hot)
        time.sleep(SETTLE_S)
        before = counters(server)
        if is_scalegres(server):
            server.psql("select pg_stat_lwlock_reset();\n")
        log(f"{server.label}: seed 003 scenario, {p['duration_s']} s")
        tps, hot_n, resident = run_pgbench(server, readers, READERS, READER_THREADS,
                                           p["duration_s"], "seed 003 readers", hot,
                                           sampler=lambda: hot_resident(server))
        hot_mean = statistics.mean(resident) / hot_blocks if resident else 0.0
        hot_min = min(resident) / hot_blocks if resident else 0.0
        time.sleep(SETTLE_S)
        after = counters(server)
        lw = lwlock_stats(server) if is_scalegres(server) else {}
        delta = {k: after[k] - before[k] for k in after}
        accesses = delta["blks_hit"] + delta["blks_read"]
        hit_ratio = delta["blks_hit"] / accesses if accesses else 0.0
        log(f"{server.label}: {tps:.0f} tps, hit ratio {hit_ratio:.3f}, {hot_n} hot passes, "
            f"hot table resident {hot_mean:.1%} (mean of {len(resident)} samples, "
            f"min {hot_min:.1%}), "
            f"alloc {delta['buffers_alloc']}, backend {delta['buffers_backend']}")

        # --- eviction scaling ----------------------------------------------------
        # Rounds alternate 1,2 / 2,1 so a drifting machine load hits both
        # alike; scaling is the median of each round's tps(2) / tps(1).
        one, two = [], []
        for r in range(p["scaling_rounds"]):
            order = ((1, one), (2, two)) if r % 2 == 0 else ((2, two), (1, one))
            for clients, acc in order:
                log(f"{server.label}: eviction readers, {clients} client(s), {p['scaling_s']} s")
                t, _, _ = run_pgbench(server, readers, clients, clients, p["scaling_s"],
                                   f"eviction readers x{clients}")
                acc.append(t)

    result = {
        "seed003_tps": [tps],
        "hot_passes": [hot_n],
        "hit_ratio": [hit_ratio],
        "hot_resident_mean": [hot_mean],
        "hot_resident_min": [hot_min],
        "evict_1c_tps": one,
        "evict_2c_tps": two,
        "scaling_2t": [b / a for a, b in zip(one, two) if a > 0],
        "hot_blocks": [hot_blocks],
        "big_blocks": [big_blocks],
    }
    for k, v in delta.items():
        result[k] = [v]
    for tranche, vals in lw.items():
        for col, v in zip(("shared", "exclusive", "blocks", "spin_delays"), vals):
            result[f"lwlock:{tranche}:{col}"] = [v]
    return result


# --- report ------------------------------------------------------------------------

def _med(raw, key):
    v = raw.get(key) if raw else None
    return statistics.median(v) if v else None


def _num(v, fmt="{:,.0f}"):
    return "—" if v is None else fmt.format(v)


def _ratio(sg, pg):
    if sg is None or pg is None or pg <= 0:
        return "n/a"
    return f"{sg / pg:.2f}"


def report(samples, quick):
    """Markdown lines and the last line's pairs (Scalegres / PostgreSQL here:
    these are throughputs, so higher is better for Scalegres as elsewhere)."""
    p = params(quick)
    pg, sg = samples.get("PostgreSQL", {}), samples.get("Scalegres")
    lines = []
    lines.append(f"### Seed 003: hot table re-read every {HOT_INTERVAL_MS} ms + {READERS} random "
                 f"big-table readers ({p['duration_s']} s)")
    lines.append("")
    lines.append(f"Tables: hot {_num(_med(pg, 'hot_blocks'))} / {_num(_med(sg, 'hot_blocks'))} "
                 f"blocks, big {_num(_med(pg, 'big_blocks'))} / {_num(_med(sg, 'big_blocks'))} "
                 "blocks (PostgreSQL / Scalegres). Counters are deltas over the measured run.")
    lines.append("")
    lines.append("| | PostgreSQL | Scalegres | Scalegres / PostgreSQL |")
    lines.append("| --- | ---: | ---: | ---: |")

    def row(label, key, fmt="{:,.0f}", ratio=True):
        a, b = _med(pg, key), _med(sg, key)
        lines.append(f"| {label} | {_num(a, fmt)} | {_num(b, fmt)} | "
                     f"{_ratio(b, a) if ratio else ''} |")

    row(f"random readers, tps ({READERS} clients)", "seed003_tps", "{:,.1f}")
    row("hot-table passes (pg_prewarm('hot'))", "hot_passes", ratio=False)
    row("hit ratio (pg_stat_database)", "hit_ratio", "{:.4f}", ratio=False)
    row("hot table resident, mean of 1 s samples (pg_buffercache)", "hot_resident_mean",
        "{:.1%}", ratio=False)
    row("hot table resident, lowest sample", "hot_resident_min", "{:.1%}", ratio=False)
    row("blks_hit", "blks_hit", ratio=False)
    row("blks_read", "blks_read", ratio=False)
    row("buffers_alloc", "buffers_alloc", ratio=False)
    row("buffers_backend", "buffers_backend", ratio=False)
    row("buffers_clean", "buffers_clean", ratio=False)
    lines.append("")

    lines.append(f"### Eviction scaling: random big-table readers alone "
                 f"({p['scaling_rounds']} rounds of {p['scaling_s']} s per point, median)")
    lines.append("")
    lines.append("| clients | PostgreSQL tps | Scalegres tps | Scalegres / PostgreSQL |")
    lines.append("| ---: | ---: | ---: | ---: |")
    for c in (1, 2):
        a, b = _med(pg, f"evict_{c}c_tps"), _med(sg, f"evict_{c}c_tps")
        lines.append(f"| {c} | {_num(a, '{:,.1f}')} | {_num(b, '{:,.1f}')} | {_ratio(b, a)} |")

    def scaling(raw):
        return _med(raw, "scaling_2t")

    s_pg, s_sg = scaling(pg), scaling(sg)
    lines.append(f"| scaling 2/1 (median of per-round ratios) | {_num(s_pg, '{:.2f}')} | "
                 f"{_num(s_sg, '{:.2f}')} | |")
    lines.append("")

    if sg:
        tranches = sorted({k.split(":")[1] for k in sg if k.startswith("lwlock:")})
        lines.append("### Scalegres pg_stat_lwlock over the seed-003 run "
                     "(pg_stat_lwlock_reset() before; tranches with any activity)")
        lines.append("")
        lines.append("| tranche | shared | exclusive | blocks | spin delays |")
        lines.append("| --- | ---: | ---: | ---: | ---: |")
        for t in tranches:
            vals = [_med(sg, f"lwlock:{t}:{c}") for c in ("shared", "exclusive", "blocks",
                                                          "spin_delays")]
            if any(vals):
                lines.append(f"| {t} | " + " | ".join(_num(v) for v in vals) + " |")
        lines.append("")

    lines.append("Samples:")
    lines.append("")
    for label, raw in samples.items():
        for key in ("seed003_tps", "evict_1c_tps", "evict_2c_tps", "scaling_2t"):
            vals = ", ".join(f"{v:.2f}" for v in raw.get(key, []))
            lines.append(f"- {label} {key}: {vals}")

    evict_vs_pg = _ratio(_med(sg, "seed003_tps"), _med(pg, "seed003_tps"))
    pairs = [f"scaling_2t={_num(s_sg, '{:.2f}') if s_sg else 'n/a'}",
             f"evict_vs_pg={evict_vs_pg}"]
    return lines, pairs
