"""Suite `tls`: what TLS costs, beside PostgreSQL 15.

Both servers get the same self-signed EC P-256 certificate (made with the
openssl command line) and turn `ssl` on by a configuration reload
(PostgreSQL: ALTER SYSTEM and pg_reload_conf(); Scalegres: postgresql.conf and
SIGHUP). Then pgbench, as a client would see it:

    connections/s, sslmode=disable  pgbench -n -C -c 1 running `select 1`
    connections/s, sslmode=require  the same over TLS
    tps over TLS                    pgbench -n -c 4 -j 2, a point query on a
                                    1,000-row table (no index on either side)

Figures are throughputs (higher is better); the last line's values are
Scalegres / PostgreSQL.
"""

import os
import signal
import subprocess

from harness import BenchError, PG_BIN, PG_SYSTEM_USER, clean_env, pgbench_tps

NAME = "tls"
_CERT = {}


def seconds(quick):
    return 5 if quick else 15


def describe(quick):
    return (f"pgbench, {seconds(quick)} s per measurement; EC P-256 self-signed certificate; "
            "trust authentication")


def measurements(quick):
    return [("conn_plain", "connections/s, sslmode=disable", "conn_plain"),
            ("conn_tls", "connections/s, sslmode=require", "conn_tls"),
            ("tps_tls", "point-query tps over TLS, 4 clients", "tps_tls")]


def certificate(workdir, owner):
    """A certificate and key in `workdir`, the key readable only by `owner`."""
    cert, key = os.path.join(workdir, "server.crt"), os.path.join(workdir, "server.key")
    r = subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                        "ec_paramgen_curve:prime256v1", "-nodes", "-days", "2",
                        "-subj", "/CN=localhost", "-keyout", key, "-out", cert],
                       capture_output=True, text=True, stdin=subprocess.DEVNULL)
    if r.returncode != 0:
        raise BenchError(f"openssl failed: {r.stderr}")
    os.chmod(key, 0o600)
    if owner and os.geteuid() == 0:
        import shutil
        shutil.chown(key, user=owner)
        shutil.chown(cert, user=owner)
    return cert, key


def enable_tls(server):
    if server.label == "PostgreSQL":
        cert, key = certificate(server.workdir, PG_SYSTEM_USER)
        server.psql(f"alter system set ssl_cert_file = '{cert}';\n"
                    f"alter system set ssl_key_file = '{key}';\n"
                    "alter system set ssl = on;\nselect pg_reload_conf();\n")
    else:
        cert, key = certificate(server.workdir, None)
        with open(os.path.join(server.datadir, "postgresql.conf"), "a") as f:
            f.write(f"\nssl = on\nssl_cert_file = '{cert}'\nssl_key_file = '{key}'\n")
        server.proc.send_signal(signal.SIGHUP)
    import time
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        env = clean_env()
        env["PGSSLMODE"] = "require"
        r = subprocess.run(server.psql_argv("-c", "select 1"), capture_output=True, text=True,
                           env=env, stdin=subprocess.DEVNULL)
        if r.returncode == 0:
            return
        time.sleep(0.2)
    raise BenchError(f"{server.label}: TLS did not come up")


def pgbench(server, script, sslmode, args, quick):
    return pgbench_tps(server, script, seconds(quick), args, {"PGSSLMODE": sslmode})


def run(server, quick, log):
    server.psql("drop table if exists tls_accounts;\n"
                "create table tls_accounts (aid int, abalance int);\n"
                "insert into tls_accounts select g, 0 from generate_series(1, 1000) g;\n")
    enable_tls(server)
    out = {}
    out["conn_plain"] = [pgbench(server, "select 1;\n", "disable", ["-C", "-c", "1"], quick)]
    out["conn_tls"] = [pgbench(server, "select 1;\n", "require", ["-C", "-c", "1"], quick)]
    point = "\\set aid random(1, 1000)\nselect abalance from tls_accounts where aid = :aid;\n"
    out["tps_tls"] = [pgbench(server, point, "require", ["-c", "4", "-j", "2"], quick)]
    for k, v in out.items():
        log(f"{server.label}: {k} = {v[0]:.0f}")
    return out


def report(samples, quick):
    pg, sg = samples.get("PostgreSQL", {}), samples.get("Scalegres", {})
    lines = ["| | PostgreSQL | Scalegres | Scalegres / PostgreSQL |", "| --- | ---: | ---: | ---: |"]
    pairs = []
    for key, label, name in measurements(quick):
        a = pg.get(key, [None])[0]
        b = sg.get(key, [None])[0]
        ratio = f"{b / a:.2f}" if a and b else "n/a"
        fa = f"{a:,.0f}" if a else "—"
        fb = f"{b:,.0f}" if b else "—"
        lines.append(f"| {label} | {fa} | {fb} | {ratio} |")
        pairs.append(f"{name}={ratio}")
    lines.append("")
    return lines, pairs
