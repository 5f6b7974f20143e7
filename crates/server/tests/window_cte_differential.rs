//! Window functions and WITH queries against PostgreSQL 15: random queries
//! over the same random tables in Scalegres and in a throwaway PostgreSQL 15
//! (the oracle, started on a free port) must give the same rows.
//!
//! The tables hold ints with many duplicates and NULLs, text, numeric, date,
//! timestamp, boolean and float columns, a second table to join with, and a
//! parent/child table (a forest with a few cycles) for WITH RECURSIVE.
//!
//! Window queries: every ranking, offset and value function and the common
//! aggregates (with FILTER) as window aggregates; PARTITION BY / ORDER BY
//! with ASC/DESC and NULLS FIRST/LAST over several keys; ROWS, RANGE (with
//! offsets on int, numeric, date and timestamp keys) and GROUPS frames with
//! every bound and EXCLUDE option; named windows, windows built on other
//! windows, several windows per query; windows over GROUP BY results and
//! over CTEs, recursive ones included. WITH queries: CTEs referenced once and
//! twice, MATERIALIZED / NOT MATERIALIZED, nested WITH, CTEs joined with
//! tables, WITH RECURSIVE tree walks with depth limits, UNION to dedupe and
//! UNION ALL with a bound.
//!
//! Determinism: PostgreSQL leaves the order among ORDER BY peers open, so
//! any call whose result depends on it (row_number, ntile, lag/lead, the
//! value functions, string_agg, ROWS frames) gets a window whose ORDER BY
//! ends with a unique key; the other calls (ranks, aggregates over RANGE or
//! GROUPS frames) may have ties. Every query selects a unique key of its
//! rows, and answers are compared sorted unless an ORDER BY with a unique
//! key fixes their order. Floats are compared as printed, with the same
//! `extra_float_digits` on both.
//!
//! The seed is printed with every failure; `WINCTE_DIFF_SEED=N` replays it,
//! `WINCTE_DIFF_LOG=FILE` writes every statement sent (for `psql -f`),
//! `WINCTE_DIFF_QUERIES=N` changes the number of queries,
//! `WINCTE_DIFF_KEEP_GOING=1` reports every mismatch instead of the first,
//! and `WINCTE_DIFF_ORACLE=HOST:PORT` uses a running PostgreSQL 15 instead
//! of starting one.

mod support;

use std::fmt::Write as _;

use postgres::{Client, NoTls, SimpleQueryMessage};
use support::reference::start_postgres;
use support::{test_seed, TestRng, TestServer};

const DEFAULT_SEED: u64 = 20_261_125;
const DEFAULT_QUERIES: usize = 400;
const MAIN_ROWS: i64 = 90;
const OTHER_ROWS: i64 = 30;
const TREE_NODES: i64 = 40;

// --- values and tables -------------------------------------------------------------

#[derive(Clone, Copy, PartialEq, Debug)]
enum Kind {
    Int,
    Num,
    Text,
    Date,
    Ts,
    Bool,
    Float,
}

/// An expression a query can select, partition, order or aggregate by.
#[derive(Clone)]
struct Expr {
    sql: String,
    kind: Kind,
}

fn expr(sql: &str, kind: Kind) -> Expr {
    Expr {
        sql: sql.to_string(),
        kind,
    }
}

/// The main table's columns other than `id` (unique, never NULL).
const MAIN_COLUMNS: &[(&str, Kind)] = &[
    ("a", Kind::Int),
    ("b", Kind::Int),
    ("t", Kind::Text),
    ("n", Kind::Num),
    ("d", Kind::Date),
    ("ts", Kind::Ts),
    ("flag", Kind::Bool),
    ("f", Kind::Float),
];

const TEXTS: &[&str] = &["", "a", "ab", "abc", "b", "B", "zz", "a b"];
const NUMERICS: &[&str] = &["-1.5", "0", "0.25", "1", "1.50", "2", "2.75", "10.125"];

fn value(rng: &mut TestRng, kind: Kind, null_percent: u64) -> String {
    if rng.chance(null_percent) {
        return "null".into();
    }
    match kind {
        Kind::Int => rng.range(-3, 5).to_string(),
        Kind::Num if rng.chance(3) => rng
            .pick(&["'NaN'", "'Infinity'", "'-Infinity'"])
            .to_string(),
        Kind::Num => rng.pick(NUMERICS).to_string(),
        Kind::Text => format!("'{}'", rng.pick(TEXTS)),
        Kind::Date if rng.chance(2) => "'infinity'::date".into(),
        Kind::Ts if rng.chance(2) => "'-infinity'::timestamp".into(),
        Kind::Date => format!("date '2024-02-20' + {}", rng.range(0, 15)),
        Kind::Ts => format!(
            "timestamp '2024-02-28 00:00' + interval '{} minutes'",
            90 * rng.range(0, 40)
        ),
        Kind::Bool => (if rng.chance(60) { "true" } else { "false" }).into(),
        Kind::Float if rng.chance(4) => format!(
            "{}::float8",
            rng.pick(&["'NaN'", "'Infinity'", "'-Infinity'", "'-0'"])
        ),
        Kind::Float => format!("{}::float8 / {}", rng.range(-10, 10), rng.range(1, 4)),
    }
}

/// The statements that create and fill the tables (the same in both servers).
fn setup_sql(rng: &mut TestRng) -> Vec<String> {
    let mut stmts = vec![
        "create table wt (id int not null, a int, b int, t text, n numeric, d date, \
         ts timestamp, flag boolean, f float8)"
            .to_string(),
        "create table wu (id int not null, a int, v int, s text)".to_string(),
        "create table tr (id int not null, parent int, w int)".to_string(),
    ];
    // Rows go in in a shuffled order, so no plan sees them sorted by id.
    let mut ids: Vec<i64> = (1..=MAIN_ROWS).collect();
    rng.shuffle(&mut ids);
    let mut rows = Vec::new();
    for id in ids {
        let mut vals = vec![id.to_string()];
        for (name, kind) in MAIN_COLUMNS {
            // `a` has few values (partitions of a dozen rows), `b` a few more.
            let v = match *name {
                "a" if !rng.chance(12) => rng.range(0, 5).to_string(),
                "a" => "null".into(),
                _ => value(rng, *kind, 12),
            };
            vals.push(v);
        }
        rows.push(format!("({})", vals.join(", ")));
    }
    stmts.push(format!("insert into wt values {}", rows.join(", ")));
    let rows: Vec<String> = (1..=OTHER_ROWS)
        .map(|id| {
            format!(
                "({id}, {}, {}, {})",
                value(rng, Kind::Int, 10),
                rng.range(0, 100),
                value(rng, Kind::Text, 10)
            )
        })
        .collect();
    stmts.push(format!("insert into wu values {}", rows.join(", ")));
    // A forest (parents have lower ids) with a few back edges making cycles.
    let rows: Vec<String> = (1..=TREE_NODES)
        .map(|id| {
            let parent = if id == 1 || rng.chance(12) {
                "null".to_string()
            } else if rng.chance(6) {
                rng.range(1, TREE_NODES).to_string()
            } else {
                rng.range((id - 8).max(1), id - 1).to_string()
            };
            format!("({id}, {parent}, {})", value(rng, Kind::Int, 10))
        })
        .collect();
    stmts.push(format!("insert into tr values {}", rows.join(", ")));
    stmts.push("analyze wt".into());
    stmts.push("analyze wu".into());
    stmts.push("analyze tr".into());
    stmts
}

// --- predicates ----------------------------------------------------------------------

/// A condition on the main table's columns (qualified by `q` when not empty).
fn predicate(rng: &mut TestRng, q: &str) -> String {
    let col = |c: &str| {
        if q.is_empty() {
            c.to_string()
        } else {
            format!("{q}.{c}")
        }
    };
    match rng.range(0, 7) {
        0 => format!("{} > {}", col("a"), rng.range(0, 4)),
        1 => format!("{} <> {}", col("b"), rng.range(-3, 5)),
        2 => format!("{} is not null", col("t")),
        3 => format!("{} <= {}", col("n"), rng.pick(NUMERICS)),
        4 => format!("{} < date '2024-02-20' + {}", col("d"), rng.range(0, 15)),
        5 => format!("{} % {} <> 0", col("id"), rng.range(2, 5)),
        6 => format!("({} or {} is null)", col("flag"), col("flag")),
        _ => format!(
            "{} between {} and {}",
            col("b"),
            rng.range(-3, 1),
            rng.range(1, 5)
        ),
    }
}

// --- window queries --------------------------------------------------------------------

/// Where a window query's rows come from.
struct Source {
    /// WITH clause (or empty).
    with: String,
    /// `from … [where …] [group by … [having …]]`.
    from: String,
    /// Selected first, and a unique key of the rows.
    key: Vec<Expr>,
    /// Other expressions to partition, order and aggregate by.
    exprs: Vec<Expr>,
    /// The key can go into ORDER BY as a tie breaker (not for a key of
    /// expressions the window can't refer to).
    grouped: bool,
}

fn table_source(rng: &mut TestRng) -> Source {
    let mut exprs: Vec<Expr> = MAIN_COLUMNS.iter().map(|(c, k)| expr(c, *k)).collect();
    exprs.push(expr("b % 3", Kind::Int));
    exprs.push(expr("coalesce(a, 9) * -1", Kind::Int));
    exprs.push(expr("t || '.'", Kind::Text));
    exprs.push(expr("n * 2", Kind::Num));
    let mut from = "from wt".to_string();
    if rng.chance(35) {
        write!(from, " where {}", predicate(rng, "")).unwrap();
    }
    Source {
        with: String::new(),
        from,
        key: vec![expr("id", Kind::Int)],
        exprs,
        grouped: false,
    }
}

/// A join of the two tables (outer joins leave NULLs in wu's columns).
fn join_source(rng: &mut TestRng) -> Source {
    let kind = rng.pick(&["join", "left join", "full join"]);
    let mut from = format!(
        "from wt {kind} wu on wu.a = wt.a and wu.v > {}",
        rng.range(0, 60)
    );
    if rng.chance(30) {
        write!(from, " where {}", predicate(rng, "wt")).unwrap();
    }
    Source {
        with: String::new(),
        from,
        key: vec![expr("wt.id", Kind::Int), expr("wu.id", Kind::Int)],
        exprs: vec![
            expr("wt.a", Kind::Int),
            expr("wt.b", Kind::Int),
            expr("wt.n", Kind::Num),
            expr("wt.t", Kind::Text),
            expr("wt.d", Kind::Date),
            expr("wu.v", Kind::Int),
            expr("wu.s", Kind::Text),
        ],
        grouped: false,
    }
}

/// GROUP BY one or two columns: windows over the groups' keys and aggregates.
fn grouped_source(rng: &mut TestRng) -> Source {
    let keys: &[&[(&str, Kind)]] = &[
        &[("a", Kind::Int)],
        &[("a", Kind::Int), ("b", Kind::Int)],
        &[("t", Kind::Text)],
        &[("a", Kind::Int), ("flag", Kind::Bool)],
        &[("d", Kind::Date)],
    ];
    let key: Vec<Expr> = rng.pick(keys).iter().map(|(c, k)| expr(c, *k)).collect();
    let mut from = "from wt".to_string();
    if rng.chance(30) {
        write!(from, " where {}", predicate(rng, "")).unwrap();
    }
    let names: Vec<&str> = key.iter().map(|e| e.sql.as_str()).collect();
    write!(from, " group by {}", names.join(", ")).unwrap();
    if rng.chance(25) {
        write!(from, " having count(*) > {}", rng.range(1, 3)).unwrap();
    }
    Source {
        with: String::new(),
        from,
        key,
        exprs: vec![
            expr("count(*)", Kind::Int),
            expr("sum(b)", Kind::Int),
            expr("sum(n)", Kind::Num),
            expr("min(t)", Kind::Text),
            expr("max(ts)", Kind::Ts),
            expr("max(id)", Kind::Int),
        ],
        grouped: true,
    }
}

/// A CTE (plain, materialized or not, or recursive) feeding the windows.
fn cte_source(rng: &mut TestRng) -> Source {
    if rng.chance(50) {
        let with = tree_walk_cte(rng, "r");
        return Source {
            with,
            from: "from r".into(),
            key: vec![expr("path", Kind::Text)],
            exprs: vec![
                expr("id", Kind::Int),
                expr("parent", Kind::Int),
                expr("depth", Kind::Int),
                expr("root", Kind::Int),
                expr("w", Kind::Int),
            ],
            grouped: false,
        };
    }
    let mat = rng.pick(&["", "materialized ", "not materialized "]);
    let mut body = "select id, a, b, n, t, d from wt".to_string();
    if rng.chance(60) {
        write!(body, " where {}", predicate(rng, "")).unwrap();
    }
    Source {
        with: format!("with c as {mat}({body}) "),
        from: "from c".into(),
        key: vec![expr("id", Kind::Int)],
        exprs: vec![
            expr("a", Kind::Int),
            expr("b", Kind::Int),
            expr("n", Kind::Num),
            expr("t", Kind::Text),
            expr("d", Kind::Date),
        ],
        grouped: false,
    }
}

/// One ORDER BY key as written.
fn order_key(rng: &mut TestRng, e: &str) -> String {
    let mut s = e.to_string();
    match rng.range(0, 3) {
        0 => {}
        1 => s.push_str(" desc"),
        2 => s.push_str(" asc"),
        _ => s.push_str(" desc nulls last"),
    }
    if rng.chance(30) {
        s.push_str(if rng.chance(50) {
            " nulls first"
        } else {
            " nulls last"
        });
        // "nulls last nulls first" would not parse: keep the last choice only.
        if s.matches("nulls").count() > 1 {
            let cut = s.find(" nulls").unwrap();
            let tail = s.rfind(" nulls").unwrap();
            s = format!("{}{}", &s[..cut], &s[tail..]);
        }
    }
    s
}

fn range_offset(rng: &mut TestRng, kind: Kind) -> Option<String> {
    if rng.chance(1) {
        return Some(match kind {
            Kind::Date | Kind::Ts => "interval '-1 day'".into(),
            _ => "-1".into(),
        });
    }
    Some(match kind {
        Kind::Int => rng.range(0, 3).to_string(),
        Kind::Num => rng.pick(&["0", "0.5", "1", "1.25", "3"]).to_string(),
        Kind::Date => format!("interval '{} days'", rng.range(0, 4)),
        Kind::Ts => rng
            .pick(&[
                "interval '90 minutes'",
                "interval '3 hours'",
                "interval '1 day'",
            ])
            .to_string(),
        Kind::Float => rng.pick(&["0.5", "1", "2.5"]).to_string(),
        _ => return None,
    })
}

/// A window: its clauses as written, and what they guarantee.
struct Window {
    partition: Vec<String>,
    order: Vec<String>,
    frame: Option<String>,
    /// ORDER BY ends with a unique key: every function is deterministic.
    unique: bool,
}

/// Frame bounds as written; `offset` is None for RANGE without an offset
/// column (only UNBOUNDED and CURRENT ROW then).
fn frame_bound(
    rng: &mut TestRng,
    offset: Option<&dyn Fn(&mut TestRng) -> String>,
    start: bool,
) -> (u8, String) {
    loop {
        // 0 unbounded preceding, 1 n preceding, 2 current row, 3 n following,
        // 4 unbounded following.
        let rank = if start {
            rng.range(0, 3)
        } else {
            rng.range(1, 4)
        } as u8;
        let text = match (rank, offset) {
            (0, _) => "unbounded preceding".to_string(),
            (2, _) => "current row".to_string(),
            (4, _) => "unbounded following".to_string(),
            (_, None) => continue,
            (1, Some(f)) => format!("{} preceding", f(rng)),
            (_, Some(f)) => format!("{} following", f(rng)),
        };
        return (rank, text);
    }
}

/// A frame clause PostgreSQL accepts (the end not before the start's kind
/// of bound); the offsets themselves may still leave the frame empty.
fn frame_clause(
    rng: &mut TestRng,
    units: &str,
    offset: Option<&dyn Fn(&mut TestRng) -> String>,
) -> String {
    let mut text = loop {
        let (rs, start) = frame_bound(rng, offset, true);
        if rng.chance(15) && rs <= 2 {
            break format!("{units} {start}");
        }
        let (re, end) = frame_bound(rng, offset, false);
        // A frame starting at the current row may not end before it, one
        // starting after it may not end at or before it; n PRECEDING ..
        // m PRECEDING is allowed in any order (and may be empty).
        if (rs == 2 && re < 2) || (rs == 3 && re < 3) {
            continue;
        }
        break format!("{units} between {start} and {end}");
    };
    if rng.chance(40) {
        let ex = rng.pick(&[
            " exclude current row",
            " exclude group",
            " exclude ties",
            " exclude no others",
        ]);
        text.push_str(ex);
    }
    text
}

fn random_window(rng: &mut TestRng, src: &Source) -> Window {
    let mut pool: Vec<Expr> = src.exprs.clone();
    if src.grouped {
        pool.extend(src.key.iter().cloned());
    }
    let mut partition = Vec::new();
    for _ in 0..rng.range(0, 2) {
        let e = rng.pick(&pool);
        if e.kind != Kind::Float {
            partition.push(e.sql.clone());
        }
    }
    let unique = rng.chance(55);
    let mut order = Vec::new();
    let mut frame = None;
    // One numeric, date or timestamp key: a chance for RANGE with offsets.
    let rangeable: Vec<&Expr> = pool
        .iter()
        .chain(if unique && src.key.len() == 1 {
            src.key.iter()
        } else {
            [].iter()
        })
        .filter(|e| {
            matches!(
                e.kind,
                Kind::Int | Kind::Num | Kind::Date | Kind::Ts | Kind::Float
            )
        })
        .collect();
    if rng.chance(35) && !rangeable.is_empty() {
        let e = *rng.pick(&rangeable);
        let is_key = unique && src.key.len() == 1 && e.sql == src.key[0].sql;
        if !unique || is_key {
            order.push(order_key(rng, &e.sql));
            let kind = e.kind;
            let offset = move |rng: &mut TestRng| range_offset(rng, kind).unwrap();
            frame = Some(frame_clause(rng, "range", Some(&offset)));
            return Window {
                partition,
                order,
                frame,
                unique: is_key,
            };
        }
    }
    for _ in 0..rng.range(0, 3) {
        let e = rng.pick(&pool).sql.clone();
        order.push(order_key(rng, &e));
    }
    if unique {
        for k in &src.key {
            order.push(order_key(rng, &k.sql));
        }
    }
    if rng.chance(55) {
        let mut units = vec!["range"];
        if !order.is_empty() {
            units.push("groups");
        }
        if unique {
            units.push("rows");
        }
        let units = *rng.pick(&units);
        let offset = |rng: &mut TestRng| {
            // Now and then a negative offset: an error to agree on.
            let lo = if rng.chance(1) { -1 } else { 0 };
            rng.range(lo, 3).to_string()
        };
        // RANGE without an offset column: only UNBOUNDED and CURRENT ROW.
        let offset: Option<&dyn Fn(&mut TestRng) -> String> = (units != "range").then_some(&offset);
        frame = Some(frame_clause(rng, units, offset));
    }
    Window {
        partition,
        order,
        frame,
        unique,
    }
}

/// A window function call (without OVER) that is deterministic over `w`.
fn window_call(rng: &mut TestRng, src: &Source, w: &Window) -> String {
    let pool: Vec<Expr> = src.exprs.iter().chain(src.key.iter()).cloned().collect();
    let of_kind = |rng: &mut TestRng, kinds: &[Kind]| -> Option<String> {
        let fits: Vec<&Expr> = pool.iter().filter(|e| kinds.contains(&e.kind)).collect();
        (!fits.is_empty()).then(|| rng.pick(&fits).sql.clone())
    };
    let filter = |rng: &mut TestRng, call: String| -> String {
        if !rng.chance(20) {
            return call;
        }
        // No aggregates in FILTER: in a grouped query only the keys.
        let row_exprs = if src.grouped { &src.key } else { &pool };
        let e = rng.pick(row_exprs);
        let cond = match e.kind {
            Kind::Int => format!("{} > {}", e.sql, rng.range(-1, 3)),
            Kind::Bool => e.sql.clone(),
            _ => format!("{} is not null", e.sql),
        };
        format!("{call} filter (where {cond})")
    };
    loop {
        let call = match rng.range(0, 17) {
            0 => "rank()".into(),
            1 => "dense_rank()".into(),
            2 => "percent_rank()".into(),
            3 => "cume_dist()".into(),
            4 => filter(rng, "count(*)".into()),
            5 => {
                let c = rng.pick(&pool).sql.clone();
                filter(rng, format!("count({c})"))
            }
            6 => {
                let c = of_kind(rng, &[Kind::Int, Kind::Num]).unwrap();
                filter(rng, format!("sum({c})"))
            }
            7 => {
                let c = of_kind(rng, &[Kind::Int, Kind::Num]).unwrap();
                // Exact (numeric) arithmetic: the order of the inputs does
                // not matter.
                let f = rng.pick(&["avg", "avg", "stddev", "var_pop", "var_samp", "stddev_pop"]);
                filter(rng, format!("{f}({c})"))
            }
            8 => {
                let c = rng.pick(&pool).sql.clone();
                let f = rng.pick(&["min", "max"]);
                if pool.iter().any(|e| e.sql == c && e.kind == Kind::Bool) {
                    continue;
                }
                // Sums can be equal yet print differently (0.5, 0.50; floats
                // 0 and -0); of equal values min and max give the last one
                // fed, which only a unique order fixes.
                let float = pool.iter().any(|e| e.sql == c && e.kind == Kind::Float);
                if (c == "sum(n)" || float) && !w.unique {
                    continue;
                }
                filter(rng, format!("{f}({c})"))
            }
            9 => match of_kind(rng, &[Kind::Bool]) {
                Some(c) => {
                    let f = rng.pick(&["bool_and", "bool_or"]);
                    filter(rng, format!("{f}({c})"))
                }
                None => continue,
            },
            // The rest depend on the order among peers.
            _ if !w.unique => continue,
            10 if rng.chance(30) => match of_kind(rng, &[Kind::Float]) {
                // Float sums round in the order of their inputs.
                Some(c) => {
                    let f = rng.pick(&["sum", "avg"]);
                    filter(rng, format!("{f}({c})"))
                }
                None => continue,
            },
            10 => "row_number()".into(),
            11 => format!("ntile({})", if rng.chance(3) { 0 } else { rng.range(1, 5) }),
            12 | 13 => {
                let e = rng.pick(&pool).clone();
                let f = rng.pick(&["lag", "lead"]);
                match rng.range(0, 2) {
                    0 => format!("{f}({})", e.sql),
                    1 => format!("{f}({}, {})", e.sql, rng.range(-2, 3)),
                    _ => {
                        let mut dflt = value(rng, e.kind, 20);
                        if e.kind == Kind::Int && dflt != "null" {
                            dflt = format!("{dflt} + 100");
                        }
                        // The default must have the column's type exactly.
                        let cast = match e.kind {
                            Kind::Int if e.sql.starts_with("count") || e.sql.starts_with("sum") => {
                                "::bigint"
                            }
                            _ => "",
                        };
                        format!("{f}({}, {}, ({dflt}){cast})", e.sql, rng.range(1, 3))
                    }
                }
            }
            14 => {
                let e = rng.pick(&pool).sql.clone();
                format!("{}({e})", rng.pick(&["first_value", "last_value"]))
            }
            15 => {
                let e = rng.pick(&pool).sql.clone();
                let k = if rng.chance(3) { 0 } else { rng.range(1, 4) };
                format!("nth_value({e}, {k})")
            }
            _ => match of_kind(rng, &[Kind::Text]) {
                Some(c) => filter(rng, format!("string_agg({c}, ',')")),
                None => continue,
            },
        };
        return call;
    }
}

fn window_body(w: &Window, base: Option<&str>) -> String {
    let mut parts = Vec::new();
    if let Some(b) = base {
        parts.push(b.to_string());
    }
    if !w.partition.is_empty() && base.is_none() {
        parts.push(format!("partition by {}", w.partition.join(", ")));
    }
    if !w.order.is_empty() {
        parts.push(format!("order by {}", w.order.join(", ")));
    }
    if let Some(f) = &w.frame {
        parts.push(f.clone());
    }
    parts.join(" ")
}

/// A query: its text and whether its ORDER BY fixes the order of its rows.
struct Query {
    sql: String,
    ordered: bool,
}

fn window_query(rng: &mut TestRng) -> Query {
    let src = match rng.range(0, 10) {
        0..=3 => table_source(rng),
        4 => join_source(rng),
        5 | 6 => grouped_source(rng),
        _ => cte_source(rng),
    };
    let mut select: Vec<String> = src
        .key
        .iter()
        .enumerate()
        .map(|(i, e)| format!("{} as k{i}", e.sql))
        .collect();
    let mut named = Vec::new();
    for i in 0..rng.range(1, 3) {
        let w = random_window(rng, &src);
        // Inline, named, named and refined in OVER, or built on a named base.
        let over = match rng.range(0, 5) {
            0 | 1 => format!("({})", window_body(&w, None)),
            2 => {
                named.push(format!("w{i} as ({})", window_body(&w, None)));
                format!("w{i}")
            }
            3 if w.frame.is_some() => {
                let frame_less = Window {
                    frame: None,
                    order: w.order.clone(),
                    partition: w.partition.clone(),
                    unique: w.unique,
                };
                named.push(format!("w{i} as ({})", window_body(&frame_less, None)));
                format!("(w{i} {})", w.frame.as_ref().unwrap())
            }
            _ => {
                let base = if w.partition.is_empty() {
                    String::new()
                } else {
                    format!("partition by {}", w.partition.join(", "))
                };
                named.push(format!("wb{i} as ({base})"));
                named.push(format!(
                    "w{i} as ({})",
                    window_body(&w, Some(&format!("wb{i}")))
                ));
                format!("w{i}")
            }
        };
        for _ in 0..rng.range(1, 3) {
            let call = window_call(rng, &src, &w);
            let n = select.len();
            select.push(format!("{call} over {over} as c{n}"));
        }
    }
    let mut sql = format!("{}select {} {}", src.with, select.join(", "), src.from);
    if !named.is_empty() {
        write!(sql, " window {}", named.join(", ")).unwrap();
    }
    let mut ordered = false;
    if rng.chance(25) {
        let mut keys: Vec<String> = src.key.iter().map(|k| order_key(rng, &k.sql)).collect();
        if rng.chance(40) {
            // A window result first (ties broken by the key).
            keys.insert(
                0,
                format!(
                    "c{} desc",
                    rng.range(src.key.len() as i64, select.len() as i64 - 1)
                ),
            );
        }
        write!(sql, " order by {}", keys.join(", ")).unwrap();
        if rng.chance(50) {
            write!(sql, " limit {}", rng.range(1, 20)).unwrap();
        }
        ordered = true;
    } else if rng.chance(25) {
        // A condition on the key above the windows: it must not be pushed
        // below them (it is no partition key).
        let k = &src.key[0];
        let cond = match k.kind {
            Kind::Int => format!("k0 % 3 = {}", rng.range(0, 2)),
            Kind::Text => format!("k0 > '{}'", rng.range(1, 9)),
            Kind::Date => "k0 > date '2024-02-25'".into(),
            Kind::Bool => "k0".into(),
            _ => "k0 is not null".into(),
        };
        sql = format!("select * from ({sql}) s where {cond}");
    }
    Query { sql, ordered }
}

// --- WITH queries -------------------------------------------------------------------------

/// A WITH RECURSIVE walk of `tr` named `name`, with columns (id, parent,
/// depth, root, w, path): down to the children or up to the parents, at most
/// `limit` steps (the table has cycles); `path` is unique per row.
fn tree_walk_cte(rng: &mut TestRng, name: &str) -> String {
    let limit = rng.range(1, 6);
    let start = match rng.range(0, 2) {
        0 => "parent is null".to_string(),
        1 => format!(
            "id in ({}, {})",
            rng.range(1, TREE_NODES),
            rng.range(1, TREE_NODES)
        ),
        _ => format!("id <= {}", rng.range(1, 8)),
    };
    let join = if rng.chance(75) {
        "t.parent = r.id"
    } else {
        "t.id = r.parent"
    };
    let cond = if rng.chance(30) {
        format!(" and t.w is distinct from {}", rng.range(0, 9))
    } else {
        String::new()
    };
    format!(
        "with recursive {name}(id, parent, depth, root, w, path) as (\
         select id, parent, 0, id, w, id::text from tr where {start} \
         union all \
         select t.id, t.parent, r.depth + 1, r.root, t.w, r.path || '/' || t.id::text \
         from tr t join {name} r on {join} where r.depth < {limit}{cond}) "
    )
}

/// Statements PostgreSQL rejects: both must fail with the same SQLSTATE.
const INVALID: &[&str] = &[
    "with recursive r(i) as (select 1 union all select count(*) from r) select * from r",
    "with recursive r(i) as (select 1 union all select r.i + 1 from wt left join r on r.i = wt.a) \
     select * from r",
    "with recursive r(i) as (select i from r union all select 1) select * from r",
    "with recursive r(i) as (select 1 union all select i + 1 from r where i < \
     (select max(i) from r)) select * from r",
    "with recursive r(i) as (select 1 union all select i + 0.5 from r where i < 3) select * from r",
    "with recursive r(i) as (select 1 union all (select i + 1 from r where i < 5 \
     order by 1 limit 1)) select * from r",
    "with recursive r(i) as (select 1 union all select i + 1 from r where i < 3 \
     intersect select 2) select * from r",
    "with c as (select 1 as x), c as (select 2 as x) select * from c",
    "with c(x, y) as (select 1) select * from c",
    "select id from wt where row_number() over (order by id) > 3",
    "select sum(row_number() over ()) over () from wt",
    "select count(*) over missing_w from wt",
    "select rank() over (w order by b) from wt window w as (order by a)",
    "select sum(a) over (w rows 1 preceding) from wt window w as (rows unbounded preceding)",
    "select sum(a) over (order by a, b range 1 preceding) from wt",
    "select sum(a) over (order by t range 1 preceding) from wt",
    "select sum(a) over (order by d range between 1 preceding and current row) from wt",
    "select ntile(a) over (order by id) from wt",
    "select lag(a, b) over (order by id) from wt",
    "select id from wt group by a",
    "select row_number(1) over () from wt",
    "select first_value(*) over () from wt",
    "select id from wt window w as (order by a), w as (order by b)",
];

fn cte_query(rng: &mut TestRng) -> Query {
    if rng.chance(4) {
        return Query {
            sql: rng.pick(INVALID).to_string(),
            ordered: false,
        };
    }
    let mat = *rng.pick(&["", "", "materialized ", "not materialized "]);
    let mut body = "select id, a, b, t, n, d, flag from wt".to_string();
    if rng.chance(70) {
        write!(body, " where {}", predicate(rng, "")).unwrap();
    }
    let sql = match rng.range(0, 22) {
        // Referenced once.
        0 => format!(
            "with c as {mat}({body}) select id, a, b + 1, t from c where {}",
            predicate(rng, "c")
        ),
        1 => format!(
            "with c as {mat}({body}) select a, count(*), sum(n), min(t), max(b) from c group by a"
        ),
        // Referenced twice.
        2 => format!(
            "with c as {mat}({body}) select x.id, y.id, x.a from c x join c y \
             on x.a = y.a and x.id < y.id where x.b {} y.b",
            rng.pick(&["<", "=", ">=", "is distinct from"])
        ),
        3 => format!(
            "with c as {mat}({body}) select id, b from c where b > (select avg(b) from c) \
             or n = (select max(n) from c)"
        ),
        4 => format!(
            "with c as {mat}({body}) select id, 'x' as side from c where a = {} \
             union all select id, 'y' from c where b < {}",
            rng.range(0, 5),
            rng.range(-2, 4)
        ),
        // Joined with tables.
        5 => format!(
            "with c as {mat}({body}) select c.id, u.id, u.v from c {} join wu u on u.a = c.a \
             and u.v > {}",
            rng.pick(&["", "left", "right", "full"]),
            rng.range(0, 80)
        ),
        6 => format!(
            "with c as {mat}({body}), s as (select a, count(*) as cnt, sum(v) as sv from wu \
             group by a) select c.id, s.cnt, s.sv from c join s on s.a is not distinct from c.a"
        ),
        // Nested WITH: a CTE built on another, WITH inside a CTE and a subquery.
        7 => format!(
            "with c as {mat}({body}), g as (select a, count(*) as cnt, max(id) as top from c \
             group by a) select c.id, g.cnt, g.top from c join g using (a) where c.id <> g.top"
        ),
        8 => format!(
            "with c as (with inner_c as {mat}({body}) select id, a, b from inner_c \
             where a is not null) select c.id, c.a, (select count(*) from c c2 where c2.a = c.a) \
             from c"
        ),
        9 => format!(
            "select s.id, s.m from (with c as {mat}({body}) select id, max(b) over () as m \
             from c) s where s.id % 2 = {}",
            rng.range(0, 1)
        ),
        // WITH RECURSIVE: tree walks, reachability with UNION, bounded series.
        10 => {
            let clause = tree_walk_cte(rng, "r");
            match rng.range(0, 2) {
                0 => format!("{clause}select id, depth, root, path from r"),
                1 => format!(
                    "{clause}select depth, count(*), min(path), max(id), sum(w) from r \
                     group by depth"
                ),
                _ => format!(
                    "{clause}select r.path, r.id, wt.t from r join wt on wt.id = r.id \
                     where wt.a is not null"
                ),
            }
        }
        // Windows over a UNION ALL, and in both of its branches.
        20 => format!(
            "select k, src, rank() over (partition by src order by v nulls last), \
             sum(v) over (order by k, src rows between 1 preceding and 1 following) from \
             (select id as k, 'wt' as src, b as v from wt where {} union all \
             select id, 'wu', v from wu) u",
            predicate(rng, "")
        ),
        // A CTE with windows feeding a recursion: walk each partition's
        // rows in rank order.
        21 => format!(
            "with recursive ranked as {mat}(select id, a, row_number() over (partition by a \
             order by b desc nulls last, id) as rn from wt), walk(a, rn, ids) as (select a, rn, \
             id::text from ranked where rn = 1 union all select r.a, r.rn, w.ids || ',' || \
             r.id::text from ranked r join walk w on r.a is not distinct from w.a and \
             r.rn = w.rn + 1 where w.rn < {}) select a, max(rn), max(ids) from walk group by a",
            rng.range(1, 6)
        ),
        // Windows inside a CTE referenced twice.
        16 => format!(
            "with c as {mat}(select id, a, rank() over (partition by a order by b nulls first) \
             as r, count(*) over (partition by a) as cnt from wt) select x.id, y.id, x.r, x.cnt \
             from c x join c y on x.a = y.a and x.r = y.r and x.id < y.id"
        ),
        // CTEs in IN and EXISTS subqueries.
        17 => format!(
            "with c as {mat}({body}) select id, a from wt where id in (select id + 1 from c) \
             and exists (select 1 from c where c.a = wt.a and c.b is distinct from wt.b)"
        ),
        // DISTINCT over window results.
        18 => format!(
            "select distinct a, count(*) over (partition by a), sum(b) over (partition by a), \
             max(t) over (partition by a) from wt where {}",
            predicate(rng, "")
        ),
        // Unbounded recursion stopped by LIMIT (evaluated lazily).
        19 => format!(
            "with recursive s(i) as (select 1 union all select i + 1 from s) \
             select i from s limit {}",
            rng.range(1, 50)
        ),
        // UNION with a depth: both ways along the edges, deduplicated.
        13 => format!(
            "with recursive r(id, parent, depth) as (select id, parent, 0 from tr where id = {} \
             union select t.id, t.parent, r.depth + 1 from tr t join r on t.parent = r.id \
             or t.id = r.parent where r.depth < {}) select id, min(depth), count(*) from r \
             group by id",
            rng.range(1, TREE_NODES),
            rng.range(1, 5)
        ),
        // A plain CTE feeding the recursive one, and one built on it; the
        // recursive result referenced twice.
        14 => {
            let clause = tree_walk_cte(rng, "r").replacen(
                "with recursive ",
                &format!(
                    "with recursive e as {mat}(select id, parent, w from tr where w is distinct \
                     from {}), ",
                    rng.range(0, 9)
                ),
                1,
            );
            let clause = clause.replace("from tr t join", "from e t join");
            match rng.range(0, 1) {
                0 => format!(
                    "{clause}, g as (select root, count(*) as cnt, max(depth) as md from r \
                     group by root) select r.path, g.cnt, g.md from r join g using (root)"
                ),
                _ => format!(
                    "{clause}select x.path, y.path from r x join r y on x.parent = y.id \
                     and x.root = y.root and x.depth = y.depth + 1"
                ),
            }
        }
        15 => format!(
            "with recursive s(i) as (select 1 union all select i + 1 from s where i < {}), \
             t(i, total) as (select 0, 0::bigint union all select t.i + 1, t.total + s.i \
             from t join s on s.i = t.i + 1) select i, total from t",
            rng.range(1, 30)
        ),
        11 => {
            let start = format!("{}, {}", rng.range(1, TREE_NODES), rng.range(1, TREE_NODES));
            if rng.chance(50) {
                format!(
                    "with recursive r(id) as (select id from tr where id in ({start}) \
                     union select t.id from tr t join r on t.parent = r.id) \
                     select r.id, tr.w from r join tr using (id)"
                )
            } else {
                // Up the parents: with cycles this ends only by deduplication.
                format!(
                    "with recursive r(id, parent) as (select id, parent from tr \
                     where id in ({start}) union select t.id, t.parent from tr t join r \
                     on t.id = r.parent) select id, parent from r"
                )
            }
        }
        _ => {
            let bound = rng.range(3, 40);
            match rng.range(0, 2) {
                0 => format!(
                    "with recursive s(i) as (select 1 union all select i + 1 from s \
                     where i < {bound}) select s.i, count(wt.id), max(wt.t) from s left join wt \
                     on wt.b = s.i % 7 - 3 group by s.i"
                ),
                1 => format!(
                    "with recursive f(i, x, y) as (select 0, 0::bigint, 1::bigint union all \
                     select i + 1, y, x + y from f where i < {bound}) select i, x, y from f"
                ),
                _ => format!(
                    "with recursive s(i, d) as (select 1, date '2024-02-20' union all \
                     select i + 1, d + {} from s where i < {bound}) \
                     select s.i, s.d, count(wt.id) from s left join wt on wt.d = s.d group by \
                     s.i, s.d",
                    rng.range(1, 3)
                ),
            }
        }
    };
    Query {
        sql,
        ordered: false,
    }
}

// --- running ----------------------------------------------------------------------------------

/// Rows as printed, or the error's SQLSTATE and message.
type Answer = Result<Vec<Vec<Option<String>>>, (String, String)>;

fn run(c: &mut Client, sql: &str) -> Answer {
    match c.simple_query(sql) {
        Ok(msgs) => Ok(msgs
            .into_iter()
            .filter_map(|m| match m {
                SimpleQueryMessage::Row(r) => {
                    Some((0..r.len()).map(|i| r.get(i).map(str::to_string)).collect())
                }
                _ => None,
            })
            .collect()),
        Err(e) => Err(match e.as_db_error() {
            Some(db) => (db.code().code().to_string(), db.message().to_string()),
            None => ("?????".into(), e.to_string()),
        }),
    }
}

fn shorten(a: &Answer) -> String {
    match a {
        Err((code, msg)) => format!("ERROR {code}: {msg}"),
        Ok(rows) => {
            let shown: Vec<String> = rows.iter().take(25).map(|r| format!("{r:?}")).collect();
            let more = if rows.len() > 25 { "\n  ..." } else { "" };
            format!("{} rows:\n  {}{more}", rows.len(), shown.join("\n  "))
        }
    }
}

/// Lines that differ between two answers (sorted the same way).
fn row_diff(expected: &Answer, got: &Answer) -> String {
    let (Ok(e), Ok(g)) = (expected, got) else {
        return String::new();
    };
    let missing: Vec<String> = e
        .iter()
        .filter(|r| !g.contains(r))
        .take(8)
        .map(|r| format!("{r:?}"))
        .collect();
    let extra: Vec<String> = g
        .iter()
        .filter(|r| !e.contains(r))
        .take(8)
        .map(|r| format!("{r:?}"))
        .collect();
    format!(
        "\nonly in PostgreSQL: {}\nonly in Scalegres: {}",
        missing.join(" "),
        extra.join(" ")
    )
}

struct Checker {
    scalegres: Client,
    oracle: Client,
    log: Option<std::fs::File>,
    seed: u64,
    keep_going: bool,
    mismatches: Vec<String>,
    /// Queries whose PostgreSQL answer had rows, and ones that failed there.
    nonempty: usize,
    errors: usize,
}

impl Checker {
    fn log(&mut self, sql: &str) {
        if let Some(f) = &mut self.log {
            use std::io::Write as _;
            writeln!(f, "{sql};").unwrap();
        }
    }

    fn setup(&mut self, sql: &str) {
        self.log(sql);
        if let Err(e) = self.oracle.batch_execute(sql) {
            panic!("seed {}: PostgreSQL rejected `{sql}`: {e:?}", self.seed);
        }
        if let Err(e) = self.scalegres.batch_execute(sql) {
            panic!("seed {}: Scalegres rejected `{sql}`: {e:?}", self.seed);
        }
    }

    fn check(&mut self, n: usize, q: &Query) {
        self.log(&q.sql);
        let mut expected = run(&mut self.oracle, &q.sql);
        let mut got = run(&mut self.scalegres, &q.sql);
        if !q.ordered {
            for rows in [&mut expected, &mut got].into_iter().flatten() {
                rows.sort();
            }
        }
        match &expected {
            Ok(rows) if !rows.is_empty() => self.nonempty += 1,
            Err(_) => self.errors += 1,
            _ => {}
        }
        // Both failing with the same SQLSTATE agrees (the message may differ).
        let agree = match (&expected, &got) {
            (Err((a, _)), Err((b, _))) => a == b,
            _ => expected == got,
        };
        if agree {
            if let (true, Err((code, msg))) = (self.keep_going, &expected) {
                eprintln!("both failed: {code} {msg}");
            }
            return;
        }
        let report = format!(
            "seed {seed} (WINCTE_DIFF_SEED={seed} replays it), query {n}:\n  {}\n\
             PostgreSQL: {}\nScalegres: {}{}",
            q.sql,
            shorten(&expected),
            shorten(&got),
            row_diff(&expected, &got),
            seed = self.seed
        );
        if !self.keep_going {
            panic!("Scalegres and PostgreSQL 15 disagree\n{report}");
        }
        eprintln!("MISMATCH {report}\n");
        self.mismatches.push(report);
    }
}

#[test]
fn window_and_cte_queries_agree_with_postgresql() {
    let seed = test_seed("WINCTE_DIFF_SEED", DEFAULT_SEED);
    let queries = match std::env::var("WINCTE_DIFF_QUERIES") {
        Ok(v) => v.trim().parse().expect("WINCTE_DIFF_QUERIES is a number"),
        Err(_) => DEFAULT_QUERIES,
    };
    eprintln!("window_cte_differential: seed {seed} (set WINCTE_DIFF_SEED to replay another)");
    let mut rng = TestRng::new(seed);
    let server = TestServer::start();
    let dir = tempfile::Builder::new()
        .prefix("scalegres-wincte-")
        .tempdir()
        .unwrap();
    let (_pg, oracle_addr) = match std::env::var("WINCTE_DIFF_ORACLE") {
        Ok(addr) => (None, addr),
        Err(_) => {
            let pg = start_postgres(dir.path());
            let addr = format!("127.0.0.1:{}", pg.port);
            (Some(pg), addr)
        }
    };
    let (host, port) = oracle_addr
        .rsplit_once(':')
        .expect("WINCTE_DIFF_ORACLE is HOST:PORT");
    let mut oracle = Client::connect(
        &format!("host={host} port={port} user=postgres dbname=postgres connect_timeout=10"),
        NoTls,
    )
    .unwrap_or_else(|e| panic!("connect to PostgreSQL at {oracle_addr}: {e:?}"));
    // A shared oracle keeps its tables in a schema of this run's own.
    let schema = format!("wincte_{}", std::process::id());
    oracle
        .batch_execute(&format!(
            "drop schema if exists {schema} cascade; create schema {schema}; \
             set search_path = {schema}"
        ))
        .unwrap();
    let mut checker = Checker {
        scalegres: server.connect(),
        oracle,
        log: std::env::var_os("WINCTE_DIFF_LOG")
            .map(|p| std::fs::File::create(p).expect("create WINCTE_DIFF_LOG")),
        seed,
        keep_going: std::env::var_os("WINCTE_DIFF_KEEP_GOING").is_some(),
        mismatches: Vec::new(),
        nonempty: 0,
        errors: 0,
    };
    checker.setup("set extra_float_digits = 1");
    // A runaway recursion fails its query instead of hanging the test.
    checker.setup("set statement_timeout = '30s'");
    for stmt in setup_sql(&mut rng) {
        checker.setup(&stmt);
    }
    for n in 0..queries {
        let q = if rng.chance(65) {
            window_query(&mut rng)
        } else {
            cte_query(&mut rng)
        };
        checker.check(n, &q);
    }
    let _ = checker
        .oracle
        .batch_execute(&format!("drop schema {schema} cascade"));
    eprintln!(
        "window_cte_differential: {queries} queries, {} with rows, {} failed in PostgreSQL too",
        checker.nonempty, checker.errors
    );
    assert!(
        checker.mismatches.is_empty(),
        "{} of {queries} queries disagree:\n{}",
        checker.mismatches.len(),
        checker.mismatches.join("\n\n")
    );
    // A generator whose queries fail or come back empty would test nothing.
    assert!(
        checker.errors * 20 <= queries,
        "seed {seed}: {} of {queries} queries failed in PostgreSQL (a generator bug)",
        checker.errors
    );
    assert!(
        checker.nonempty * 10 >= queries * 8,
        "seed {seed}: only {} of {queries} queries found rows",
        checker.nonempty
    );
}
