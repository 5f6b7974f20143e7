"""Suite `seed`: bulk load of a wide table, then a filtered scan and a count.

The table and queries are the project's seed workload:

    create table tbl_parallel_test(c1 int, c2 char(1000));
    insert into tbl_parallel_test values(generate_series(1,N),'aaaaa');
    select * from tbl_parallel_test where c1 < 10000 and c2 like '%bb%';
    select count(*) from tbl_parallel_test;
"""

import os
from harness import BenchError

NAME = "seed"

SCAN_SQL = "select * from tbl_parallel_test where c1 < 10000 and c2 like '%bb%'"
COUNT_SQL = "select count(*) from tbl_parallel_test"


def rows(quick):
    return 100_000 if quick else 1_000_000


def repeats(quick):
    return 3 if quick else 5


def describe(quick):
    return (f"N={rows(quick):,} rows of (c1 int, c2 char(1000)); load timed once; "
            f"scan and count: 1 untimed warm-up run, then median of {repeats(quick)} runs")


def measurements(quick):
    """(key, label in the table, ratio name in the last line), in report order."""
    return [
        ("load", f"insert {rows(quick):,} rows (generate_series)", "load_ratio"),
        ("scan", SCAN_SQL, "scan_ratio"),
        ("count", COUNT_SQL, "count_ratio"),
    ]


def run(server, quick, log):
    """Runs the suite on one server; returns {key: [ms, ...]}."""
    n = rows(quick)
    server.psql("drop table if exists tbl_parallel_test;\n"
                "create table tbl_parallel_test(c1 int, c2 char(1000));\n")
    # Let the kernel finish writing back what the other server left dirty, so
    # neither load is timed against the other's writeback.
    os.sync()
    log(f"{server.label}: loading {n:,} rows")
    load = server.time_sql(
        f"insert into tbl_parallel_test values(generate_series(1,{n}),'aaaaa')")
    got = server.psql(COUNT_SQL + ";").strip()
    if got != str(n):
        raise BenchError(f"{server.label}: after the load count(*) is {got!r}, expected {n}")
    log(f"{server.label}: load took {load[0]:.0f} ms; timing queries")
    scan = server.time_sql(SCAN_SQL, repeats=repeats(quick), warmup=1)
    count = server.time_sql(COUNT_SQL, repeats=repeats(quick), warmup=1)
    return {"load": load, "scan": scan, "count": count}

