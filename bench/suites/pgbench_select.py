"""Suite `pgbench_select`: the real `pgbench -S` (select-only) beside PostgreSQL 15.

Both servers are initialised the same way at scale S (10; 2 with --quick):

- `pgbench -i -s S -q` (drop, create, COPY ... FREEZE, VACUUM ANALYZE,
  ALTER TABLE ... ADD PRIMARY KEY) when the server accepts all of it;
- otherwise an equivalent SQL script: the same four tables and rows (those of
  pgbench's server-side generation, `-I G`), VACUUM ANALYZE, then the
  primary keys by ALTER TABLE ... ADD PRIMARY KEY or, failing that,
  CREATE UNIQUE INDEX pgbench_<table>_pkey.

`BENCH_PGBENCH_INIT=pgbench` or `=sql` forces one way on both servers (the
default, `auto`, tries pgbench -i and falls back per server); the report says
which way each server took. A server whose pgbench_accounts ends up without
an index on aid is not measured (its select-only figures would be those of
sequential scans).

Then `pgbench -n -S -M prepared|simple -c N -j min(N, CPUs) -T D` at
N = 1, 2, 8, 32 clients (D = 15 s; 4 s with --quick), after one untimed
warm-up run. Ratios are Scalegres tps / PostgreSQL tps.

Last line: `pgbench_select: ratio_min=<lowest over clients and modes>
ratio_1=<prepared, 1 client> ratio_32=<prepared, 32 clients>
simple_ratio_1=... simple_ratio_32=... init=<how Scalegres was initialised>`.
"""

import os
import re
import subprocess
import time

from harness import PG_BIN, BenchError, clean_env

NAME = "pgbench_select"
CLIENTS = [1, 2, 8, 32]
MODES = ["prepared", "simple"]
TABLES = ["pgbench_branches", "pgbench_tellers", "pgbench_accounts", "pgbench_history"]
KEYS = {"pgbench_branches": "bid", "pgbench_tellers": "tid", "pgbench_accounts": "aid"}

# {server label: how it was initialised}, {server label: why it was not measured}.
INIT = {}
SKIPPED = {}
INIT_SECONDS = {}

TPS_RE = re.compile(r"^tps = ([0-9.]+) \(without initial connection time\)", re.M)


def scale(quick):
    return 2 if quick else 10


def seconds(quick):
    return 4 if quick else 15


def warmup_seconds(quick):
    return 2 if quick else 5


def init_mode():
    mode = os.environ.get("BENCH_PGBENCH_INIT", "auto")
    if mode not in ("auto", "pgbench", "sql"):
        raise BenchError(f"BENCH_PGBENCH_INIT={mode!r}: expected auto, pgbench or sql")
    return mode


def describe(quick):
    return (f"scale {scale(quick)}; pgbench -n -S -M prepared|simple -c N -j min(N, "
            f"{os.cpu_count()}) -T {seconds(quick)} at N = {', '.join(map(str, CLIENTS))} "
            f"after a {warmup_seconds(quick)} s warm-up; initialisation: "
            f"BENCH_PGBENCH_INIT={init_mode()}")


def measurements(quick):
    return []


def pgbench_argv(server, *args):
    return [os.path.join(PG_BIN, "pgbench"), "-h", "127.0.0.1", "-p", str(server.port),
            "-U", "postgres", *args, "postgres"]


def last_error(text):
    lines = [line.strip() for line in text.splitlines() if "error" in line.lower()]
    return (lines[0] if lines else text.strip().splitlines()[-1] if text.strip() else "?")[:300]


def init_with_pgbench(server, s):
    r = subprocess.run(pgbench_argv(server, "-i", "-q", "-s", str(s)), capture_output=True,
                       text=True, env=clean_env(), stdin=subprocess.DEVNULL, timeout=3600)
    if r.returncode != 0:
        raise BenchError(last_error(r.stderr + r.stdout))


def init_with_sql(server, s, log):
    """pgbench's tables and rows (as `-I dtG` makes them), VACUUM ANALYZE,
    then primary keys by whichever statement the server accepts."""
    server.psql(f"""
drop table if exists pgbench_accounts;
drop table if exists pgbench_branches;
drop table if exists pgbench_history;
drop table if exists pgbench_tellers;
create table pgbench_history (tid int, bid int, aid int, delta int, mtime timestamp,
                              filler char(22));
create table pgbench_tellers (tid int not null, bid int, tbalance int, filler char(84))
  with (fillfactor = 100);
create table pgbench_accounts (aid int not null, bid int, abalance int, filler char(84))
  with (fillfactor = 100);
create table pgbench_branches (bid int not null, bbalance int, filler char(88))
  with (fillfactor = 100);
insert into pgbench_branches (bid, bbalance) select bid, 0 from generate_series(1, {s}) bid;
insert into pgbench_tellers (tid, bid, tbalance)
  select tid, (tid - 1) / 10 + 1, 0 from generate_series(1, {s * 10}) tid;
insert into pgbench_accounts (aid, bid, abalance, filler)
  select aid, (aid - 1) / 100000 + 1, 0, '' from generate_series(1, {s * 100000}) aid;
""")
    for t in TABLES:
        server.psql(f"vacuum analyze {t};")
    how = []
    for t, k in KEYS.items():
        try:
            server.psql(f"alter table {t} add primary key ({k});")
            how.append("add primary key")
        except BenchError as e:
            log(f"{server.label}: alter table {t} add primary key failed "
                f"({last_error(str(e))}); trying create unique index")
            server.psql(f"create unique index {t}_pkey on {t} ({k});")
            how.append("create unique index")
    return ", ".join(sorted(set(how)))


def error_line(e):
    m = re.search(r"ERROR:\s*(.*)", str(e))
    return (m.group(1) if m else str(e).strip().splitlines()[0])[:300]


def initialise(server, quick, log):
    """Loads the tables (see the module's doc); records the way taken in INIT."""
    s = scale(quick)
    mode = init_mode()
    label = server.label
    failures = []
    done = False
    t0 = time.monotonic()
    if mode in ("auto", "pgbench"):
        try:
            log(f"{label}: pgbench -i -s {s}")
            init_with_pgbench(server, s)
            INIT[label] = "pgbench -i"
            done = True
        except BenchError as e:
            failures.append(f"pgbench -i failed: {error_line(e)}")
            log(f"{label}: {failures[-1]}")
            if mode == "pgbench":
                INIT[label] = "; ".join(failures)
                raise BenchError(failures[-1])
    if not done:
        t0 = time.monotonic()
        try:
            how = init_with_sql(server, s, log)
        except BenchError as e:
            failures.append(f"the SQL script failed: {error_line(e)}")
            INIT[label] = "; ".join(failures)
            raise BenchError(failures[-1])
        why = failures[0] if failures else "BENCH_PGBENCH_INIT=sql"
        INIT[label] = f"SQL script, keys by {how} ({why})"
    INIT_SECONDS[label] = time.monotonic() - t0
    got = server.psql("select count(*) from pgbench_accounts;").strip()
    if got != str(s * 100_000):
        raise BenchError(f"pgbench_accounts has {got} rows, expected {s * 100_000}")
    plan = server.psql("explain (costs off) select abalance from pgbench_accounts "
                       "where aid = 42;")
    if "Index" not in plan:
        raise BenchError(f"the select-only query does not use an index: "
                         f"{' / '.join(plan.split())}")


def select_only(server, mode, clients, secs):
    argv = pgbench_argv(server, "-n", "-S", "-M", mode, "-c", str(clients),
                        "-j", str(min(clients, os.cpu_count() or 1)), "-T", str(secs))
    r = subprocess.run(argv, capture_output=True, text=True, env=clean_env(),
                       stdin=subprocess.DEVNULL, timeout=secs + 600)
    m = TPS_RE.search(r.stdout)
    if r.returncode != 0 or not m:
        raise BenchError(f"{server.label}: pgbench -S -M {mode} -c {clients} failed:\n"
                         f"{r.stdout[-2000:]}\n{r.stderr[-2000:]}")
    return float(m.group(1))


def run(server, quick, log):
    out = {}
    try:
        initialise(server, quick, log)
    except BenchError as e:
        SKIPPED[server.label] = error_line(e)
        log(f"{server.label}: not measured: {SKIPPED[server.label]}")
        return out
    log(f"{server.label}: initialised by {INIT[server.label]} in "
        f"{INIT_SECONDS[server.label]:.1f} s; warming up")
    select_only(server, "prepared", 8, warmup_seconds(quick))
    for n in CLIENTS:
        for mode in MODES:
            tps = select_only(server, mode, n, seconds(quick))
            out[f"{mode}_{n}"] = [tps]
            log(f"{server.label}: -M {mode}, {n} clients: {tps:,.0f} tps")
    return out


def report(samples, quick):
    pg, sg = samples.get("PostgreSQL", {}), samples.get("Scalegres", {})
    get = (lambda d, k: (d.get(k) or [None])[0])
    f = (lambda v: f"{v:,.0f}" if v else "—")
    lines = ["| clients | mode | PostgreSQL tps | Scalegres tps | Scalegres / PostgreSQL |",
             "| ---: | --- | ---: | ---: | ---: |"]
    ratios = {}
    for n in CLIENTS:
        for mode in MODES:
            a, b = get(pg, f"{mode}_{n}"), get(sg, f"{mode}_{n}")
            r = f"{b / a:.2f}" if a and b else "n/a"
            if a and b:
                ratios[(mode, n)] = b / a
            lines.append(f"| {n} | {mode} | {f(a)} | {f(b)} | {r} |")
    lines.append("")
    lines.append("ratio = Scalegres tps / PostgreSQL tps (higher is better for Scalegres).")
    lines.append("")
    for label in ("PostgreSQL", "Scalegres"):
        if label in INIT:
            secs = INIT_SECONDS.get(label)
            took = f", {secs:.1f} s" if secs is not None else ""
            lines.append(f"- {label} initialisation: {INIT[label]}{took}")
        if label in SKIPPED:
            lines.append(f"- **{label} not measured**: {SKIPPED[label]}")
    lines.append("")

    def pair(name, key):
        return f"{name}={ratios[key]:.2f}" if key in ratios else f"{name}=n/a"

    sg_init = INIT.get("Scalegres", "not run")
    init_tag = ("pgbench" if sg_init == "pgbench -i" else
                "sql" if sg_init.startswith("SQL") else
                "not_run" if sg_init == "not run" else "failed")
    pairs = [f"ratio_min={min(ratios.values()):.2f}" if ratios else "ratio_min=n/a",
             pair("ratio_1", ("prepared", 1)), pair("ratio_32", ("prepared", 32)),
             pair("simple_ratio_1", ("simple", 1)), pair("simple_ratio_32", ("simple", 32)),
             f"init={init_tag}"]
    return lines, pairs
