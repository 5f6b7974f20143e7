"""Suite `btree`: B-tree indexes (issue 13) beside PostgreSQL 15.

1. Point lookups by primary key, prepared (pgbench -M prepared), from 1 to N
   clients (N = the CPU count, at most 32):

       create table btree_pk (k int primary key, v int, pad text);   -- R rows
       \\set k random(1, R)
       select v from btree_pk where k = :k;

2. Range scans through the same index, 1 and N clients:

       \\set lo random(1, R - 100)
       select sum(v) from btree_pk where k between :lo and :lo + 100;

3. Concurrent inserts from N clients (synchronous_commit = off, so the index,
   not the log flush, is what is measured): random keys into a non-unique
   index, and ascending keys from a sequence into a primary key (every
   client on the rightmost leaf).

4. Index build: CREATE INDEX on B rows of int keys in a pseudo-random order
   (k = g * 48271 mod (2^31 - 1), all distinct), loaded with
   INSERT ... SELECT generate_series; the median of several builds, the
   index dropped in between.

Throughput ratios are Scalegres / PostgreSQL; the build ratio is
PostgreSQL's time / Scalegres' time. Both: > 1 means Scalegres is faster.
A part that fails on one server (e.g. no CREATE INDEX yet) is reported as
failed with its error, and the suite goes on with the next part.

Last line: `btree: lookup_ratio=<lowest over the client counts>
build_ratio=... range_ratio=<lowest> insert_ratio=<random keys, N clients>
insert_seq_ratio=<ascending keys, N clients> lookup_ratio_1=... lookup_ratio_N=...`.
"""

import os
import re

from harness import BenchError, pgbench_tps

NAME = "btree"

# {server label: {part: first line of the error}}, {server label: {what: plan}}.
ERRORS = {}
PLANS = {}


def cpus():
    return os.cpu_count() or 1


def max_clients():
    return max(1, min(cpus(), 32))


def lookup_clients(quick):
    n = max_clients()
    if quick:
        return sorted({1, n})
    return sorted({c for c in (1, 2, 4, 8, 16, 32) if c <= n} | {n})


def range_clients(quick):
    return sorted({1, max_clients()})


def insert_clients(quick):
    return [max_clients()] if quick else sorted({1, max_clients()})


def seconds(quick):
    return 4 if quick else 10


def lookup_rows(quick):
    return 100_000 if quick else 1_000_000


def build_rows(quick):
    return 1_000_000 if quick else 10_000_000


def build_repeats(quick):
    return 2 if quick else 3


def describe(quick):
    return (f"lookups and ranges on {lookup_rows(quick):,} rows (int primary key), pgbench "
            f"-M prepared, {seconds(quick)} s per point; lookups at "
            f"{', '.join(map(str, lookup_clients(quick)))} clients, ranges (101 keys) at "
            f"{', '.join(map(str, range_clients(quick)))}; inserts (synchronous_commit=off) at "
            f"{', '.join(map(str, insert_clients(quick)))} clients; CREATE INDEX on "
            f"{build_rows(quick):,} int rows, median of {build_repeats(quick)}")


def measurements(quick):
    return []


def threads(clients):
    return min(clients, cpus())


def first_error_line(e):
    """The server's ERROR line out of a BenchError's text, or its first line."""
    text = str(e)
    m = re.search(r"ERROR:\s*(.*)", text)
    if m:
        return m.group(1).strip()
    for line in text.splitlines():
        if line.strip():
            return line.strip()[:200]
    return "?"


def plan(server, sql):
    out = server.psql(f"explain (costs off) {sql};")
    return " / ".join(line.strip() for line in out.splitlines() if line.strip())


class Part:
    """Runs one part; a BenchError is recorded for the report, not raised."""

    def __init__(self, server, name, log):
        self.server, self.name, self.log = server, name, log

    def __enter__(self):
        return self

    def __exit__(self, kind, e, tb):
        if kind is BenchError:
            msg = first_error_line(e)
            ERRORS.setdefault(self.server.label, {})[self.name] = msg
            self.log(f"{self.server.label}: {self.name} failed: {msg}")
            return True
        return False


def run(server, quick, log):
    label = server.label
    out = {}
    secs = seconds(quick)
    r = lookup_rows(quick)
    plans = PLANS.setdefault(label, {})

    with Part(server, "lookup table", log):
        log(f"{label}: loading btree_pk ({r:,} rows)")
        server.psql("drop table if exists btree_pk;\n"
                    "create table btree_pk (k int primary key, v int, pad text);\n"
                    f"insert into btree_pk select g, g % 1000, repeat('x', 40) "
                    f"from generate_series(1, {r}) g;\n"
                    "vacuum analyze btree_pk;\n")
        plans["lookup"] = plan(server, "select v from btree_pk where k = 42")
        plans["range"] = plan(server, "select sum(v) from btree_pk where k between 42 and 142")

    if "lookup table" not in ERRORS.get(label, {}):
        lookup = f"\\set k random(1, {r})\nselect v from btree_pk where k = :k;\n"
        for n in lookup_clients(quick):
            with Part(server, f"lookups, {n} clients", log):
                tps = pgbench_tps(server, lookup, secs,
                                  ["-c", str(n), "-j", str(threads(n)), "-M", "prepared"])
                out[f"lookup_{n}"] = [tps]
                log(f"{label}: point lookups, {n} clients: {tps:,.0f} tps")
        ranges = (f"\\set lo random(1, {r - 100})\n"
                  "select sum(v) from btree_pk where k between :lo and :lo + 100;\n")
        for n in range_clients(quick):
            with Part(server, f"ranges, {n} clients", log):
                tps = pgbench_tps(server, ranges, secs,
                                  ["-c", str(n), "-j", str(threads(n)), "-M", "prepared"])
                out[f"range_{n}"] = [tps]
                log(f"{label}: range scans, {n} clients: {tps:,.0f} tps")

    async_commit = {"PGOPTIONS": "-c synchronous_commit=off"}
    with Part(server, "insert tables", log):
        server.psql("drop table if exists btree_ins;\n"
                    "drop table if exists btree_seq;\n"
                    "drop sequence if exists btree_seq_k;\n"
                    "create table btree_ins (k int8, v int);\n"
                    "create index btree_ins_k on btree_ins (k);\n"
                    "create sequence btree_seq_k;\n"
                    "create table btree_seq (k int8 primary key default nextval('btree_seq_k'), "
                    "v int);\n")
    if "insert tables" not in ERRORS.get(label, {}):
        for n in insert_clients(quick):
            with Part(server, f"random-key inserts, {n} clients", log):
                script = ("\\set k random(1, 1000000000000)\n"
                          "insert into btree_ins values (:k, 1);\n")
                tps = pgbench_tps(server, script, secs,
                                  ["-c", str(n), "-j", str(threads(n)), "-M", "prepared"],
                                  async_commit)
                out[f"insert_{n}"] = [tps]
                log(f"{label}: random-key inserts, {n} clients: {tps:,.0f} tps")
            with Part(server, f"ascending-key inserts, {n} clients", log):
                tps = pgbench_tps(server, "insert into btree_seq (v) values (1);\n", secs,
                                  ["-c", str(n), "-j", str(threads(n)), "-M", "prepared"],
                                  async_commit)
                out[f"insert_seq_{n}"] = [tps]
                log(f"{label}: ascending-key inserts, {n} clients: {tps:,.0f} tps")
        # Drop them: their pages would otherwise be written back during the build.
        with Part(server, "dropping the insert tables", log):
            server.psql("drop table if exists btree_ins;\ndrop table if exists btree_seq;\n"
                        "checkpoint;\n")

    b = build_rows(quick)
    with Part(server, "build table", log):
        log(f"{label}: loading btree_build ({b:,} rows)")
        server.psql("drop table if exists btree_build;\n"
                    "create table btree_build (k int, v int);\n")
        load = server.time_sql(f"insert into btree_build select "
                               f"((g::int8 * 48271) % 2147483647)::int4, g "
                               f"from generate_series(1, {b}) g")
        out["build_load"] = load
        log(f"{label}: load took {load[0] / 1000:.1f} s")
        server.psql("vacuum analyze btree_build;\ncheckpoint;\n")
    if "build table" not in ERRORS.get(label, {}):
        with Part(server, "create index", log):
            times = []
            for i in range(build_repeats(quick)):
                if i:
                    server.psql("drop index btree_build_k;\ncheckpoint;\n")
                os.sync()
                t = server.time_sql("create index btree_build_k on btree_build (k)")
                times += t
                log(f"{label}: create index {i + 1}: {t[0] / 1000:.2f} s")
            out["build"] = times
            got = server.psql("set enable_seqscan = off;\n"
                              "select count(*) from btree_build where k between 1 and 1000000;\n")
            plans["build"] = plan(server, "select count(*) from btree_build where k < 1000")
            log(f"{label}: keys 1..1000000 through the index: {got.strip()}")
        with Part(server, "dropping the build table", log):
            server.psql("drop table if exists btree_build;\n")
    return out


# --- report -----------------------------------------------------------------------------

def fmt_tps(v):
    return f"{v:,.0f}" if v else "—"


def ratio(a, b):
    """b / a as text, or n/a."""
    return f"{b / a:.2f}" if a and b else "n/a"


def report(samples, quick):
    pg, sg = samples.get("PostgreSQL", {}), samples.get("Scalegres", {})
    get = (lambda d, k: (d.get(k) or [None])[0])
    lines = []
    pairs = {}

    def throughput_table(title, prefix, clients):
        lines.append(f"**{title}** (tps)")
        lines.append("")
        lines.append("| clients | PostgreSQL | Scalegres | Scalegres / PostgreSQL |")
        lines.append("| ---: | ---: | ---: | ---: |")
        ratios = {}
        for n in clients:
            a, b = get(pg, f"{prefix}_{n}"), get(sg, f"{prefix}_{n}")
            lines.append(f"| {n} | {fmt_tps(a)} | {fmt_tps(b)} | {ratio(a, b)} |")
            if a and b:
                ratios[n] = b / a
        lines.append("")
        return ratios

    lookups = throughput_table("Point lookups by primary key, -M prepared", "lookup",
                               lookup_clients(quick))
    ranges = throughput_table("Range scans, 101 keys, sum(v), -M prepared", "range",
                              range_clients(quick))
    inserts = throughput_table("Inserts, random keys, non-unique index", "insert",
                               insert_clients(quick))
    seq_inserts = throughput_table("Inserts, ascending keys from a sequence, primary key",
                                   "insert_seq", insert_clients(quick))

    from harness import median
    a = median(pg["build"]) if pg.get("build") else None
    b = median(sg["build"]) if sg.get("build") else None
    la = median(pg["build_load"]) if pg.get("build_load") else None
    lb = median(sg["build_load"]) if sg.get("build_load") else None
    lines.append(f"**CREATE INDEX on {build_rows(quick):,} int rows** (seconds, median of "
                 f"{build_repeats(quick)})")
    lines.append("")
    lines.append("| | PostgreSQL | Scalegres | PostgreSQL time / Scalegres time |")
    lines.append("| --- | ---: | ---: | ---: |")
    sec = (lambda v: f"{v / 1000:.2f}" if v else "—")
    lines.append(f"| create index | {sec(a)} | {sec(b)} | {ratio(b, a)} |")
    lines.append(f"| load (insert ... select generate_series, once) | {sec(la)} | {sec(lb)} | "
                 f"{ratio(lb, la)} |")
    lines.append("")
    if a and b:
        faster = "Scalegres builds faster" if a > b else "PostgreSQL builds faster"
        lines.append(f"build_ratio > 1 means Scalegres builds the index faster ({faster} here).")
        lines.append("")
    lines.append("Throughput ratios are Scalegres / PostgreSQL, the build ratio PostgreSQL's "
                 "time / Scalegres' time: higher is better for Scalegres in both. "
                 "PostgreSQL may build with parallel workers "
                 "(max_parallel_maintenance_workers = 2, its default).")
    lines.append("")
    for label in ("PostgreSQL", "Scalegres"):
        for what, text in PLANS.get(label, {}).items():
            lines.append(f"- {label} plan, {what}: `{text}`")
            if "Index" not in text:
                lines.append(f"- **{label}'s {what} plan reads no index**: its figures "
                             "measure something else")
    for label in ("PostgreSQL", "Scalegres"):
        for part, msg in ERRORS.get(label, {}).items():
            lines.append(f"- **{label} failed: {part}**: {msg}")
    lines.append("")

    low = (lambda d: f"{min(d.values()):.2f}" if d else "n/a")
    n = max_clients()
    pairs = [f"lookup_ratio={low(lookups)}",
             f"build_ratio={ratio(b, a)}",
             f"range_ratio={low(ranges)}",
             f"insert_ratio={f'{inserts[n]:.2f}' if n in inserts else 'n/a'}",
             f"insert_seq_ratio={f'{seq_inserts[n]:.2f}' if n in seq_inserts else 'n/a'}",
             f"lookup_ratio_1={f'{lookups[1]:.2f}' if 1 in lookups else 'n/a'}",
             f"lookup_ratio_{n}={f'{lookups[n]:.2f}' if n in lookups else 'n/a'}"]
    return lines, pairs
