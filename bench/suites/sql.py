"""Suite `sql`: SQL breadth — window functions, a recursive CTE, string and
formatting functions, and a GROUPING SETS report.

    win_t(id int, grp int, val int)                 N_win rows (10M; --quick 1M)
    tree(id int, parent int)                        N_tree nodes (1M; --quick 100k),
                                                    node 1 the root, every other
                                                    node's parent (id + 2) / 4
                                                    (4 children a node, depth 10)
    func_t(id int, s text, ts timestamp, amount numeric)
                                                    N_func rows (1M; --quick 200k)
    sales(region text, product text, year int, amount numeric)
                                                    N_func rows

No indexes; both servers get `vacuum analyze` first. Every query reduces its
result to one row (an aggregate over the computed column), so the time is
the server's, not psql's; the computed column is read by the aggregate, so
neither server can leave it uncomputed.

The last line is `sql: window_ratio=... cte_ratio=... func_ratio=...
grouping_ratio=... median_ratio=... <query>_ratio=...`: a group's ratio is
PostgreSQL's total time over its queries / Scalegres' total time, and
median_ratio the median of the per-query ratios.
"""

from harness import BenchError, fmt_ms, fmt_ratio, median

NAME = "sql"


def sizes(quick):
    """(window rows, tree nodes, function rows)"""
    return (1_000_000, 100_000, 200_000) if quick else (10_000_000, 1_000_000, 1_000_000)


def repeats(quick):
    return 3 if quick else 3


# (key, group, label, SQL)
QUERIES = [
    ("row_number", "window", "row_number() over (order by val, id)",
     "select sum(rn) from (select row_number() over (order by val, id) rn from win_t) s"),
    ("running_sum", "window", "running sum(val) over (partition by grp order by id)",
     "select sum(s) from (select sum(val) over (partition by grp order by id) s "
     "from win_t) x"),
    ("lag", "window", "val - lag(val) over (order by id)",
     "select count(*) filter (where d > 0), sum(d) from "
     "(select val - lag(val) over (order by id) d from win_t) x"),
    ("tree_walk", "cte", "recursive CTE walking the tree from its root",
     "with recursive walk(id, depth) as ("
     "select id, 0 from tree where parent is null "
     "union all "
     "select c.id, w.depth + 1 from tree c join walk w on c.parent = w.id) "
     "select count(*), max(depth), sum(id) from walk"),
    ("regexp_replace", "func", "regexp_replace(s, '([a-z]+)-([0-9]+)', '\\2:\\1')",
     "select sum(length(regexp_replace(s, '([a-z]+)-([0-9]+)', '\\2:\\1'))) from func_t"),
    ("to_char_ts", "func", "to_char(ts, 'YYYY-MM-DD HH24:MI:SS Dy Mon')",
     "select sum(length(to_char(ts, 'YYYY-MM-DD HH24:MI:SS Dy Mon'))) from func_t"),
    ("to_char_num", "func", "to_char(amount, 'FM999,999.00')",
     "select sum(length(to_char(amount, 'FM999,999.00'))) from func_t"),
    ("grouping_sets", "grouping",
     "GROUPING SETS ((region, product), (region), (year), ())",
     "select count(*), sum(total), sum(n) from ("
     "select region, product, year, sum(amount) total, count(*) n from sales "
     "group by grouping sets ((region, product), (region), (year), ())) g"),
]

GROUPS = ["window", "cte", "func", "grouping"]

# Each server's one-row answers, {label: {query key: psql's -At output}}.
ANSWERS = {}

# What each query must answer, as (id of the query, function of the sizes):
# the same on both servers, so a wrong answer fails the run instead of
# being timed.
CHECKS = {
    "row_number": lambda n_win, n_tree, n_func: f"{n_win * (n_win + 1) // 2}",
}


def describe(quick):
    n_win, n_tree, n_func = sizes(quick)
    return (f"windows over {n_win:,} rows, a {n_tree:,}-node tree (fan-out 4), functions "
            f"and GROUPING SETS over {n_func:,} rows; no indexes, both analysed; median "
            f"of {repeats(quick)} runs after one warm-up")


def measurements(quick):
    return [(key, label, f"{key}_ratio") for key, _, label, _ in QUERIES]


def load(server, quick, log):
    n_win, n_tree, n_func = sizes(quick)
    log(f"{server.label}: loading ({n_win:,} window rows, {n_tree:,} tree nodes, "
        f"{n_func:,} function rows)")
    server.psql(f"""
drop table if exists win_t, tree, func_t, sales;
create table win_t (id int, grp int, val int);
insert into win_t select g, (g::bigint * 7919) % 1000, (g::bigint * 31) % 10007
  from generate_series(1, {n_win}) g;
create table tree (id int, parent int);
insert into tree select g, case when g = 1 then null else (g + 2) / 4 end
  from generate_series(1, {n_tree}) g;
create table func_t (id int, s text, ts timestamp, amount numeric);
insert into func_t select g, 'item-' || g || '-' || md5(g::text),
  timestamp '2020-01-01' + g * interval '37 seconds', (g % 100000) / 100.0
  from generate_series(1, {n_func}) g;
create table sales (region text, product text, year int, amount numeric);
insert into sales select 'region' || (g % 7), 'product' || (g % 101), 2000 + g % 23,
  (g % 1000) / 10.0 from generate_series(1, {n_func}) g;
""")
    server.psql("vacuum analyze;")


def run(server, quick, log):
    n_win, n_tree, n_func = sizes(quick)
    load(server, quick, log)
    results, answers = {}, {}
    for key, _, _, sql in QUERIES:
        results[key] = server.time_sql(sql, repeats=repeats(quick), warmup=1)
        answers[key] = server.psql(sql + ";").strip()
        log(f"{server.label}: {key} median {median(results[key]):.1f} ms -> {answers[key]}")
    for key, expected in CHECKS.items():
        if answers[key] != expected(n_win, n_tree, n_func):
            raise BenchError(f"{server.label}: {key} answered {answers[key]!r}, expected "
                             f"{expected(n_win, n_tree, n_func)!r}")
    tree = answers["tree_walk"].split("|")
    if tree[0] != str(n_tree):
        raise BenchError(f"{server.label}: the tree walk reached {tree[0]} of {n_tree} nodes")
    # Kept so report() can check that both servers agree on every answer.
    ANSWERS[server.label] = answers
    return results


def report(samples, quick):
    pg, sg = samples.get("PostgreSQL", {}), samples.get("Scalegres", {})
    lines = ["| query | PostgreSQL ms | Scalegres ms | ratio |", "| --- | ---: | ---: | ---: |"]
    per_query, group_times = [], {g: [0.0, 0.0, True] for g in GROUPS}
    for key, group, label, _ in QUERIES:
        a = median(pg[key]) if key in pg else None
        b = median(sg[key]) if key in sg else None
        lines.append(f"| {group}: {label} | {fmt_ms(a)} | {fmt_ms(b)} | {fmt_ratio(a, b)} |")
        per_query.append(f"{key}_ratio={fmt_ratio(a, b)}")
        if a and b:
            group_times[group][0] += a
            group_times[group][1] += b
        else:
            group_times[group][2] = False
    lines += ["", "ratio = PostgreSQL ms / Scalegres ms (higher is better for Scalegres); "
              "each value is the median of the timed runs (psql \\timing); a group's ratio "
              "is the ratio of its queries' summed medians.", ""]
    pg_answers, sg_answers = ANSWERS.get("PostgreSQL", {}), ANSWERS.get("Scalegres", {})
    differ = [k for k in sg_answers if pg_answers.get(k) != sg_answers[k]]
    if differ:
        lines.append("**Answers differ** from PostgreSQL's for: " + ", ".join(differ))
        for k in differ:
            lines.append(f"- {k}: PostgreSQL {pg_answers.get(k)!r}, Scalegres {sg_answers[k]!r}")
        lines.append("")
    lines.append("Samples (ms):")
    lines.append("")
    for label, raw in samples.items():
        for key, _, _, _ in QUERIES:
            vals = ", ".join(f"{v:.1f}" for v in raw.get(key, []))
            lines.append(f"- {label} {key}: {vals}")
    head = []
    for g in GROUPS:
        a, b, complete = group_times[g]
        head.append(f"{g}_ratio=" + (fmt_ratio(a, b) if complete else "n/a"))
    ratios = [median(pg[k]) / median(sg[k]) for k, _, _, _ in QUERIES
              if k in pg and k in sg and median(sg[k]) > 0]
    head.append("median_ratio=" + (f"{median(ratios):.2f}" if ratios and len(ratios) == len(QUERIES)
                                   else "n/a"))
    if differ:
        head.append("answers_differ=" + ",".join(differ))
    return lines, head + per_query
