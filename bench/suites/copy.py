"""Suite `copy`: COPY FROM a server-side file and COPY TO /dev/null.

The table has pgbench_accounts' shape, so the load is what `pgbench -i`
does at scale N/100,000:

    create table copy_accounts(aid int not null, bid int, abalance int, filler char(84));
    copy copy_accounts from '<file>';            -- timed, median of runs on a fresh table
    copy copy_accounts to '/dev/null';           -- timed
    copy copy_accounts to '/dev/null' (format csv);

Both servers read the same file (written once, readable by every user).
"""

import os
import tempfile

from harness import BenchError

NAME = "copy"

_DATA = {}


def rows(quick):
    return 200_000 if quick else 2_000_000


def repeats(quick):
    return 3 if quick else 3


def describe(quick):
    return (f"N={rows(quick):,} rows of (aid int, bid int, abalance int, filler char(84)) "
            f"from a server-side text file; median of {repeats(quick)} runs each")


def measurements(quick):
    return [
        ("load", f"copy {rows(quick):,} rows from a file", "load_ratio"),
        ("out_text", "copy the table to /dev/null", "out_ratio"),
        ("out_csv", "copy the table to /dev/null (format csv)", "csv_ratio"),
    ]


def data_file(quick):
    """Writes the input once per process, where the postgres user can read it."""
    n = rows(quick)
    if n in _DATA:
        return _DATA[n]
    parent = os.environ.get("BENCH_TMPDIR") or tempfile.gettempdir()
    fd, path = tempfile.mkstemp(prefix="scalegres-copy-", suffix=".txt", dir=parent)
    with os.fdopen(fd, "w") as f:
        for aid in range(1, n + 1):
            f.write(f"{aid}\t{(aid - 1) // 100_000 + 1}\t0\t\n")
    os.chmod(path, 0o644)
    _DATA[n] = path
    return path


def run(server, quick, log):
    n = rows(quick)
    path = data_file(quick)
    create = ("drop table if exists copy_accounts;\n"
              "create table copy_accounts(aid int not null, bid int, abalance int, "
              "filler char(84));\n")
    loads = []
    for i in range(repeats(quick)):
        server.psql(create)
        os.sync()
        t = server.time_sql(f"copy copy_accounts from '{path}'")
        loads += t
        log(f"{server.label}: load {i + 1} took {t[0]:.0f} ms")
    got = server.psql("select count(*) from copy_accounts;").strip()
    if got != str(n):
        raise BenchError(f"{server.label}: after COPY count(*) is {got!r}, expected {n}")
    out_text = server.time_sql("copy copy_accounts to '/dev/null'", repeats=repeats(quick), warmup=1)
    out_csv = server.time_sql("copy copy_accounts to '/dev/null' (format csv)",
                              repeats=repeats(quick), warmup=1)
    return {"load": loads, "out_text": out_text, "out_csv": out_csv}
