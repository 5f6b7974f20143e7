"""Suite `wal`: commit throughput through the write-ahead log, beside PostgreSQL 15.

Many clients each commit single-row INSERTs (pgbench, one transaction per
statement) with `synchronous_commit` on and off. Reported per setting and
client count: transactions per second and commits per WAL sync (from
pg_stat_wal.wal_sync and pg_stat_database.xact_commit on both servers), the
group-commit factor.

The last line's values are Scalegres tps / PostgreSQL tps at the highest
client count: commit_sync_ratio (on) and commit_async_ratio (off).
"""

from harness import pgbench_tps

NAME = "wal"


def seconds(quick):
    return 5 if quick else 15


def clients(quick):
    return [16] if quick else [1, 4, 16, 32]


def describe(quick):
    return (f"pgbench -c N -j 2, {seconds(quick)} s per measurement, script "
            "`insert into wal_bench values (:client_id, 1)`; clients "
            f"{', '.join(map(str, clients(quick)))}")


def measurements(quick):
    return []


def counters(server):
    out = server.psql("select (select wal_sync from pg_stat_wal), "
                      "(select sum(xact_commit) from pg_stat_database);")
    sync, commits = out.strip().split("|")
    return int(sync), int(commits)


def run(server, quick, log):
    server.psql("drop table if exists wal_bench;\ncreate table wal_bench (client int, v int);\n")
    out = {}
    script = "insert into wal_bench values (:client_id, 1);\n"
    for mode in ("on", "off"):
        for n in clients(quick):
            s0, c0 = counters(server)
            tps = pgbench_tps(server, script, seconds(quick), ["-c", str(n), "-j", "2"],
                              {"PGOPTIONS": f"-c synchronous_commit={mode}"})
            s1, c1 = counters(server)
            per_sync = (c1 - c0) / max(1, s1 - s0)
            out[f"{mode}_{n}"] = [tps]
            out[f"{mode}_{n}_per_sync"] = [per_sync]
            log(f"{server.label}: synchronous_commit={mode} clients={n}: "
                f"{tps:.0f} tps, {per_sync:.1f} commits per sync")
    return out


def report(samples, quick):
    pg, sg = samples.get("PostgreSQL", {}), samples.get("Scalegres", {})
    lines = ["| synchronous_commit | clients | PostgreSQL tps | Scalegres tps | ratio | "
             "PostgreSQL commits/sync | Scalegres commits/sync |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    ratios = {}
    for mode in ("on", "off"):
        for n in clients(quick):
            a = pg.get(f"{mode}_{n}", [None])[0]
            b = sg.get(f"{mode}_{n}", [None])[0]
            pa = pg.get(f"{mode}_{n}_per_sync", [None])[0]
            pb = sg.get(f"{mode}_{n}_per_sync", [None])[0]
            ratio = f"{b / a:.2f}" if a and b else "n/a"
            ratios[mode] = ratio
            f = (lambda v: f"{v:,.0f}" if v else "—")
            g = (lambda v: f"{v:.1f}" if v else "—")
            lines.append(f"| {mode} | {n} | {f(a)} | {f(b)} | {ratio} | {g(pa)} | {g(pb)} |")
    lines.append("")
    lines.append("ratio = Scalegres tps / PostgreSQL tps (higher is better for Scalegres).")
    lines.append("")
    return lines, [f"commit_sync_ratio={ratios.get('on', 'n/a')}",
                   f"commit_async_ratio={ratios.get('off', 'n/a')}"]
