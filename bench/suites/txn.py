"""Suite `txn`: snapshots and transaction ends under many clients, beside PostgreSQL 15.

1. Read-only point queries (pgbench, 8 clients, a 1,000-row table) with no idle
   connections, then with IDLE idle connections held open (sockets past the startup
   handshake, costing the client nothing): taking a snapshot must not cost more with more
   connections (`idle_conn_ratio` = tps with idle connections / tps without,
   Scalegres; target >= 0.9).
2. Many clients updating a 10-row hot table, one single-row UPDATE per
   transaction with synchronous_commit off (so the ProcArray, not the log
   flush, is what they contend for), at 8 and 32 clients. On Scalegres once
   with grouped ProcArray exits (`procarray_group_clear = on`, the default) and
   once without: `group_clear_gain` = tps on / tps off at the highest client
   count. `update_vs_pg` = Scalegres tps / PostgreSQL tps there.

The TPC-B comparison of the issue needs indexes (pgbench's own tables); this
suite's hot-table workload stands in until then.
"""

import socket
import struct
import time

from harness import pgbench_tps

NAME = "txn"
IDLE = 500
SETTINGS = [f"max_connections={IDLE + 60}"]


def seconds(quick):
    return 5 if quick else 15


def update_clients(quick):
    return [32] if quick else [8, 32]


def describe(quick):
    return (f"{seconds(quick)} s per measurement; read: pgbench -c 8 -j 2 "
            "`select v from txn_read where id = :id` (1,000 rows) without and with "
            f"{IDLE} idle connections; update: pgbench -c N -j 2 "
            "`update txn_hot set v = v + 1 where id = :id` (10 rows, "
            f"synchronous_commit=off), N = {', '.join(map(str, update_clients(quick)))}")


def measurements(quick):
    return []


READ = "\\set id random(1, 1000)\nselect v from txn_read where id = :id;\n"
UPDATE = "\\set id random(1, 10)\nupdate txn_hot set v = v + 1 where id = :id;\n"


def startup_message(user, database):
    body = struct.pack("!i", 196608)
    for k, v in (("user", user), ("database", database)):
        body += k.encode() + b"\0" + v.encode() + b"\0"
    body += b"\0"
    return struct.pack("!i", len(body) + 4) + body


def hold_idle(server, n):
    """Opens n idle sessions (startup handshake only, trust authentication)
    that cost the client nothing while they are held; returns the sockets."""
    socks = []
    for _ in range(n):
        s = socket.create_connection(("127.0.0.1", server.port), timeout=30)
        s.sendall(startup_message("postgres", "postgres"))
        buf = b""
        # Read messages until ReadyForQuery ('Z').
        while True:
            while len(buf) < 5:
                chunk = s.recv(65536)
                if not chunk:
                    raise RuntimeError("server closed an idle connection during startup")
                buf += chunk
            kind, length = buf[0:1], struct.unpack("!i", buf[1:5])[0]
            while len(buf) < 1 + length:
                buf += s.recv(65536)
            buf = buf[1 + length:]
            if kind == b"E":
                raise RuntimeError("server refused an idle connection")
            if kind == b"Z":
                break
        socks.append(s)
    return socks


def run(server, quick, log):
    server.psql("drop table if exists txn_read;\ndrop table if exists txn_hot;\n"
                "create table txn_read (id int, v int);\n"
                "insert into txn_read select g, g from generate_series(1, 1000) g;\n"
                "create table txn_hot (id int, v int);\n"
                "insert into txn_hot select g, 0 from generate_series(1, 10) g;\n"
                "analyze txn_read;\nanalyze txn_hot;\n")
    out = {}
    secs = seconds(quick)
    tps = pgbench_tps(server, READ, secs, ["-c", "8", "-j", "2"])
    out["read_0"] = [tps]
    log(f"{server.label}: read, no idle connections: {tps:.0f} tps")
    socks = hold_idle(server, IDLE)
    try:
        tps = pgbench_tps(server, READ, secs, ["-c", "8", "-j", "2"])
    finally:
        for s in socks:
            s.close()
    out["read_idle"] = [tps]
    log(f"{server.label}: read, {IDLE} idle connections: {tps:.0f} tps")
    modes = ["on", "off"] if server.label == "Scalegres" else ["on"]
    for mode in modes:
        if server.label == "Scalegres":
            server.psql(f"alter system set procarray_group_clear = {mode};\n"
                        "select pg_reload_conf();\n")
            time.sleep(1)
        for n in update_clients(quick):
            tps = pgbench_tps(server, UPDATE, secs, ["-c", str(n), "-j", "2"],
                              {"PGOPTIONS": "-c synchronous_commit=off"})
            out[f"update_{mode}_{n}"] = [tps]
            log(f"{server.label}: update, {n} clients, group clear {mode}: {tps:.0f} tps")
    if server.label == "Scalegres":
        server.psql("alter system reset procarray_group_clear;\nselect pg_reload_conf();\n")
    return out


def report(samples, quick):
    pg, sg = samples.get("PostgreSQL", {}), samples.get("Scalegres", {})
    f = (lambda v: f"{v:,.0f}" if v else "—")
    get = (lambda d, k: d.get(k, [None])[0])
    lines = ["| workload | PostgreSQL tps | Scalegres tps | ratio |",
             "| --- | ---: | ---: | ---: |"]
    for key, label in [("read_0", "read, no idle connections"),
                       ("read_idle", f"read, {IDLE} idle connections")]:
        a, b = get(pg, key), get(sg, key)
        lines.append(f"| {label} | {f(a)} | {f(b)} | {b / a:.2f} |" if a and b
                     else f"| {label} | {f(a)} | {f(b)} | n/a |")
    for n in update_clients(quick):
        a = get(pg, f"update_on_{n}")
        for mode in ("on", "off"):
            b = get(sg, f"update_{mode}_{n}")
            r = f"{b / a:.2f}" if a and b else "n/a"
            lines.append(f"| update, {n} clients (Scalegres group clear {mode}) | {f(a)} | {f(b)} | {r} |")
    lines.append("")
    lines.append("ratio = Scalegres tps / PostgreSQL tps (higher is better for Scalegres).")
    lines.append("")
    top = update_clients(quick)[-1]
    r0, ri = get(sg, "read_0"), get(sg, "read_idle")
    on, off, pg_top = get(sg, f"update_on_{top}"), get(sg, f"update_off_{top}"), get(pg, f"update_on_{top}")
    ratios = [f"idle_conn_ratio={ri / r0:.2f}" if r0 and ri else "idle_conn_ratio=n/a",
              f"group_clear_gain={on / off:.2f}" if on and off else "group_clear_gain=n/a",
              f"update_vs_pg={on / pg_top:.2f}" if on and pg_top else "update_vs_pg=n/a"]
    return lines, ratios
