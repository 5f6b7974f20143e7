"""Suite `parallel`: the seed's parallel sequential scan experiments.

The table is the seed's (`c1 int, c2 char(1000)`, N rows). Timed on both
servers, in one psql session per setting:

- the seed's query and `count(*)` at 0, 1 and 2 workers
  (`max_parallel_workers_per_gather`), with parallel_setup_cost and
  parallel_tuple_cost at 0 so the planner takes the Gather at every size;
- the seed's 1%, 10% and 25% selectivity queries
  (`select c1 from t where c1 > K and c2 like '%aa%'`) at 0, 1 and 2 workers,
  the same way;
- the seed's query and `count(*)` with every setting at its default
  (2 workers per Gather where the cost model takes one).

With CREATE FUNCTION available the selectivity queries call the seed's
PARALLEL SAFE calc_factorial; without it the bound is a constant.
"""

from harness import BenchError, TIME_RE, median

NAME = "parallel"

TABLE = "tbl_parallel_test"
SEED_SQL = f"select * from {TABLE} where c1 < 10000 and c2 like '%bb%'"
COUNT_SQL = f"select count(*) from {TABLE}"
WORKERS = (0, 1, 2)
SELECTIVITY = (1, 10, 25)
FORCE = "set parallel_setup_cost = 0; set parallel_tuple_cost = 0;"
FUNCTION = """create or replace function calc_factorial(a integer, fact_val integer)
returns integer as $$ begin perform factorial(fact_val); return a; end; $$
language plpgsql parallel safe;"""


def rows(quick):
    return 100_000 if quick else 1_000_000


def repeats(quick):
    return 3 if quick else 5


def describe(quick):
    return (f"N={rows(quick):,} rows of (c1 int, c2 char(1000)); every query: 1 untimed "
            f"warm-up run, then the median of {repeats(quick)}; worker counts forced with "
            f"max_parallel_workers_per_gather and parallel_setup_cost = parallel_tuple_cost "
            f"= 0 on both; 'defaults' leaves every setting alone")


def measurements(quick):
    return []


def selectivity_sql(pct, n, with_function):
    bound = int(n * (100 - pct) / 100)
    lhs = f"calc_factorial({bound}, 10)" if with_function else str(bound)
    return f"select c1 from {TABLE} where c1 > {lhs} and c2 like '%aa%'"


def timed(server, setup, sql, quick):
    """Runs `sql` after `setup` in one session: warm-up, then timed runs (ms)."""
    stmt = sql.strip().rstrip(";") + ";\n"
    n = 1 + repeats(quick)
    out = server.psql(setup + "\n\\timing on\n\\o /dev/null\n" + stmt * n)
    times = [float(m.group(1)) for m in map(TIME_RE.match, out.splitlines()) if m]
    if len(times) != n:
        raise BenchError(f"{server.label}: expected {n} timings, got {len(times)}:\n{out}")
    return times[1:]


def queries(n, with_function):
    out = [("seed", SEED_SQL), ("count", COUNT_SQL)]
    out += [(f"sel{p}", selectivity_sql(p, n, with_function)) for p in SELECTIVITY]
    return out


def run(server, quick, log):
    n = rows(quick)
    server.psql(f"drop table if exists {TABLE};\n"
                f"create table {TABLE}(c1 int, c2 char(1000));\n")
    log(f"{server.label}: loading {n:,} rows")
    server.psql(f"insert into {TABLE} values(generate_series(1,{n}),'aaaaa');\n"
                f"vacuum analyze {TABLE};\n")
    try:
        server.psql(FUNCTION)
        with_function = True
    except BenchError as e:
        log(f"{server.label}: no calc_factorial ({str(e).splitlines()[0]}); constant bounds")
        with_function = False
    out = {"with_function": [with_function]}
    for key, sql in queries(n, with_function):
        for w in WORKERS:
            log(f"{server.label}: {key} at {w} workers")
            setup = f"{FORCE} set max_parallel_workers_per_gather = {w};"
            out[f"{key}_{w}"] = timed(server, setup, sql, quick)
    for key, sql in (("seed", SEED_SQL), ("count", COUNT_SQL)):
        out[f"{key}_default"] = timed(server, "", sql, quick)
    plan = server.psql(f"explain {SEED_SQL};")
    out["default_plan"] = [plan.splitlines()[0] if plan else ""]
    return out


def report(samples, quick):
    pg, sg = samples.get("PostgreSQL", {}), samples.get("Scalegres", {})

    def ms(d, k):
        v = d.get(k)
        return median(v) if v else None

    f = (lambda v: f"{v:,.1f}" if v else "—")
    lines = ["| query | workers | PostgreSQL ms | Scalegres ms | ratio | "
             "PostgreSQL speedup | Scalegres speedup |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    with_function = (sg.get("with_function") or pg.get("with_function") or [False])[0]
    n = rows(quick)
    for key, sql in queries(n, with_function):
        for w in list(WORKERS) + ["default"]:
            if w == "default" and key not in ("seed", "count"):
                continue
            a, b = ms(pg, f"{key}_{w}"), ms(sg, f"{key}_{w}")
            ratio = f"{a / b:.2f}" if a and b else "n/a"
            a0, b0 = ms(pg, f"{key}_0"), ms(sg, f"{key}_0")
            sp = (lambda base, x: f"{base / x:.2f}" if base and x and w != 0 else "")
            label = f"`{sql}`" if w == 0 else ""
            lines.append(f"| {label} | {w} | {f(a)} | {f(b)} | {ratio} | "
                         f"{sp(a0, a)} | {sp(b0, b)} |")
    lines.append("")
    lines.append("ratio = PostgreSQL ms / Scalegres ms (higher is better for Scalegres); "
                 "speedup = the same server's 0-worker time / this time.")
    for label, d in (("PostgreSQL", pg), ("Scalegres", sg)):
        if d.get("default_plan"):
            lines.append(f"- {label}'s default plan for the seed query: `{d['default_plan'][0]}`")
    lines.append("")

    def ratio(x, y):
        return f"{x / y:.2f}" if x and y else "n/a"

    pairs = [
        f"serial_ratio={ratio(ms(pg, 'seed_0'), ms(sg, 'seed_0'))}",
        f"speedup_1w={ratio(ms(sg, 'seed_0'), ms(sg, 'seed_1'))}",
        f"speedup_2w={ratio(ms(sg, 'seed_0'), ms(sg, 'seed_2'))}",
        f"pg_speedup_1w={ratio(ms(pg, 'seed_0'), ms(pg, 'seed_1'))}",
        f"count_speedup_1w={ratio(ms(sg, 'count_0'), ms(sg, 'count_1'))}",
        f"default_seed_ratio={ratio(ms(pg, 'seed_default'), ms(sg, 'seed_default'))}",
        f"default_count_ratio={ratio(ms(pg, 'count_default'), ms(sg, 'count_default'))}",
    ]
    return lines, pairs
