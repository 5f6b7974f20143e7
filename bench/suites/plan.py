"""Suite `plan`: multi-table joins (a TPC-H-like schema) and planning time.

    nation(n_id, n_name)                        25 rows
    customer(c_id, c_nation, c_segment)         N/40
    orders(o_id, o_cust, o_year, o_status)      N/4
    part(p_id, p_type, p_size)                  N/20
    lineitem(l_order, l_part, l_qty, l_price)   N

Queries join 3 to 4 of them, written as comma joins with the conditions in
WHERE, some in the worst order; both servers get `vacuum analyze` first (as
PostgreSQL's users would have through autovacuum). Planning time is EXPLAIN (costs off) of a 6-way join, which
plans without running.

Protocols: pgbench, one client, a point query on a 10-row table (so the
per-statement path dominates, not the scan) through `-M simple`, `-M extended`
(Parse, Bind, Execute every time) and `-M prepared` (Bind, Execute).

The last line is `plan: join_ratio=<median of the join queries' ratios>
plan_time_ratio=<ratio> extended_vs_simple=<Scalegres extended tps / simple tps>
prepared_vs_simple=<...> <query>=<ratio> ...`.
"""

from harness import BenchError, pgbench_tps

NAME = "plan"


def rows(quick):
    return 200_000 if quick else 1_000_000


def repeats(quick):
    return 3 if quick else 5


QUERIES = [
    ("q_revenue_by_nation",
     "revenue per nation (lineitem, orders, customer, nation)",
     "select n_name, sum(l_qty * l_price) from lineitem, orders, customer, nation "
     "where l_order = o_id and o_cust = c_id and c_nation = n_id group by n_name"),
    ("q_star_worst_order",
     "filtered star, worst written order (nation, customer, orders, lineitem)",
     "select count(*) from nation, customer, orders, lineitem "
     "where l_order = o_id and o_cust = c_id and c_nation = n_id "
     "and n_name = 'nation7' and o_year = 1995"),
    ("q_part_type",
     "one part type's order count (part, lineitem, orders)",
     "select o_status, count(*) from part, lineitem, orders "
     "where p_id = l_part and l_order = o_id and p_type = 'type3' and p_size < 10 "
     "group by o_status"),
    ("q_segment",
     "customers of a segment with big orders (customer, orders, lineitem)",
     "select count(distinct c_id) from customer, orders, lineitem "
     "where c_id = o_cust and o_id = l_order and c_segment = 'seg2' and l_qty > 45"),
]

SIX_WAY = ("explain (costs off) select count(*) from lineitem l, orders o, customer c, "
           "nation n, part p, orders o2 where l.l_order = o.o_id and o.o_cust = c.c_id "
           "and c.c_nation = n.n_id and l.l_part = p.p_id and o2.o_cust = c.c_id "
           "and p.p_size = 3")


def describe(quick):
    return (f"lineitem N={rows(quick):,} rows, orders N/4, part N/20, customer N/40, "
            f"nation 25; median of {repeats(quick)} runs after one warm-up; both "
            "analysed")


def measurements(quick):
    return [(k, label, f"{k}_ratio") for k, label, _ in QUERIES] + [
        ("plan_6way", "EXPLAIN of a 6-way join (planning time)", "plan_time_ratio")]


def run(server, quick, log):
    n = rows(quick)
    server.psql(f"""
drop table if exists lineitem, orders, customer, part, nation;
create table nation (n_id int, n_name text);
create table customer (c_id int, c_nation int, c_segment text);
create table orders (o_id int, o_cust int, o_year int, o_status text);
create table part (p_id int, p_type text, p_size int);
create table lineitem (l_order int, l_part int, l_qty int, l_price numeric);
insert into nation select g, 'nation' || g from generate_series(0, 24) g;
insert into customer select g, g % 25, 'seg' || (g % 5) from generate_series(1, {n // 40}) g;
insert into orders select g, 1 + g % {n // 40}, 1992 + g % 7,
  case when g % 3 = 0 then 'F' when g % 3 = 1 then 'O' else 'P' end
  from generate_series(1, {n // 4}) g;
insert into part select g, 'type' || (g % 10), g % 50 from generate_series(1, {n // 20}) g;
insert into lineitem select 1 + g % {n // 4}, 1 + (g * 7) % {n // 20}, 1 + g % 50,
  (g % 1000) / 10.0 from generate_series(1, {n}) g;
""")
    server.psql("vacuum analyze;")
    results = {}
    for key, _, sql in QUERIES:
        results[key] = server.time_sql(sql, repeats=repeats(quick), warmup=1)
        log(f"{server.label}: {key} median {sorted(results[key])[len(results[key]) // 2]:.1f} ms")
    results["plan_6way"] = server.time_sql(SIX_WAY, repeats=repeats(quick) * 4, warmup=2)
    got = server.psql(QUERIES[1][2] + ";").strip()
    if not got.isdigit():
        raise BenchError(f"{server.label}: unexpected answer {got!r}")
    log(f"{server.label}: star query count {got}")
    server.psql("drop table if exists plan_point;\n"
                "create table plan_point (aid int, abalance int);\n"
                "insert into plan_point select g, g from generate_series(1, 10) g;\n")
    point = "\\set aid random(1, 10)\nselect abalance from plan_point where aid = :aid;\n"
    for mode in PROTOCOLS:
        tps = pgbench_tps(server, point, 5 if quick else 15, ["-c", "1", "-M", mode])
        results[f"tps_{mode}"] = [tps]
        log(f"{server.label}: point query tps, -M {mode}: {tps:.0f}")
    return results


PROTOCOLS = ["simple", "extended", "prepared"]


def report(samples, quick):
    from harness import median, fmt_ms, fmt_ratio
    pg, sg = samples.get("PostgreSQL", {}), samples.get("Scalegres", {})
    lines = ["| query | PostgreSQL ms | Scalegres ms | ratio |", "| --- | ---: | ---: | ---: |"]
    pairs, join_ratios = [], []
    for key, label, ratio_name in measurements(quick):
        a = median(pg[key]) if key in pg else None
        b = median(sg[key]) if key in sg else None
        ratio = fmt_ratio(a, b)
        lines.append(f"| {label} | {fmt_ms(a)} | {fmt_ms(b)} | {ratio} |")
        if a and b and key != "plan_6way":
            join_ratios.append(a / b)
        pairs.append(f"{ratio_name}={ratio}")
    lines += ["", "ratio = PostgreSQL ms / Scalegres ms (higher is better for Scalegres).", ""]
    jr = sorted(join_ratios)[len(join_ratios) // 2] if join_ratios else None
    head = [f"join_ratio={jr:.2f}" if jr else "join_ratio=n/a"]
    plan_pair = [p for p in pairs if p.startswith("plan_time_ratio=")]
    rest = [p for p in pairs if not p.startswith("plan_time_ratio=")]
    lines += ["| point query, one client | PostgreSQL tps | Scalegres tps | Scalegres / PostgreSQL |",
              "| --- | ---: | ---: | ---: |"]
    tps = {}
    for mode in PROTOCOLS:
        a = pg.get(f"tps_{mode}", [None])[0]
        b = sg.get(f"tps_{mode}", [None])[0]
        tps[mode] = b
        ratio = f"{b / a:.2f}" if a and b else "n/a"
        lines.append(f"| -M {mode} | {a or 0:,.0f} | {b or 0:,.0f} | {ratio} |")
    lines.append("")
    for mode in ["extended", "prepared"]:
        s_, m_ = tps.get("simple"), tps.get(mode)
        head.append(f"{mode}_vs_simple=" + (f"{m_ / s_:.2f}" if s_ and m_ else "n/a"))
    return lines, head + plan_pair + rest
