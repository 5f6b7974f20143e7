//! B-tree indexes against sequential scans on random data and random
//! queries: every query runs with the index paths forced on
//! (`enable_seqscan = off`, twice: with and without bitmap scans) and with
//! them switched off, and the answers must be the same. Between rounds of
//! queries, random inserts, updates, deletes and VACUUMs give the indexes
//! upkeep to do.
//!
//! Tables hold ints, text, NULLs and many duplicates; indexes are single- and
//! multi-column, unique and not, with DESC and NULLS FIRST/LAST keys.
//! Predicates are `=`, `<`, `<=`, `>`, `>=`, `<>`, BETWEEN, IN lists,
//! IS [NOT] NULL, LIKE prefixes, nested with AND/OR/NOT; `ORDER BY` the
//! index columns (both directions) with LIMIT; counts and min/max. Answers
//! are compared sorted unless an ORDER BY fully determines their order (the
//! ordered queries select exactly their ORDER BY columns, so ties print the
//! same). A quarter of the queries go through the extended protocol with
//! their constants as parameters.
//!
//! Index-only scans: the queries that read only one index's columns (and
//! counts) can be answered from the index, and VACUUM every third round
//! marks pages all-visible. In odd rounds a second session holds a
//! transaction open over the queries with inserts, updates and deletes of
//! its own (clearing pages' all-visible state while its changes are
//! invisible to the checker), a VACUUM runs meanwhile, and the transaction
//! then commits or rolls back; the visibility map must never let a scan see
//! its changes early or miss rows it did not touch. (Its statements are not
//! in `INDEX_DIFF_LOG`.)
//!
//! The seed is printed with every failure; `INDEX_DIFF_SEED=N` replays it,
//! and `INDEX_DIFF_LOG=FILE` writes every statement sent (constants inline)
//! for a replay with `psql -f` against a server started with the test's
//! settings (`shared_buffers=16MB autovacuum=off`).
//! Checked against PostgreSQL 15 with
//! `SCALEGRES_TEST_BIN=crates/server/tests/support/postgres_as_scalegres.sh`.

mod support;

use std::fmt::Write as _;

use postgres::types::{ToSql, Type};
use postgres::{Client, SimpleQueryMessage};
use support::{test_seed, TestRng, TestServer};

const DEFAULT_SEED: u64 = 20_261_124;
const ROUNDS: usize = 8;
const QUERIES_PER_ROUND: usize = 45;

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Int4,
    Int8,
    Text,
}

struct Column {
    name: &'static str,
    kind: Kind,
    /// Range of generated values (ints) or of the text pool's numbers.
    lo: i64,
    hi: i64,
    null_percent: u64,
}

/// One key column of an index, as declared.
struct KeyCol {
    name: &'static str,
    desc: bool,
    nulls_first: bool,
}

struct Index {
    name: &'static str,
    unique: bool,
    keys: Vec<KeyCol>,
}

struct Table {
    name: &'static str,
    columns: Vec<Column>,
    indexes: Vec<Index>,
    /// Rows inserted so far (ids are 1..=next_id-1, some deleted).
    next_id: i64,
}

fn key(name: &'static str, desc: bool, nulls_first: bool) -> KeyCol {
    KeyCol {
        name,
        desc,
        nulls_first,
    }
}

fn tables() -> Vec<Table> {
    let col = |name, kind, lo, hi, null_percent| Column {
        name,
        kind,
        lo,
        hi,
        null_percent,
    };
    vec![
        Table {
            name: "di_a",
            // `id` (unique, never NULL) and `d` (unique or NULL) are filled in
            // by the generator, not from their ranges.
            columns: vec![
                col("id", Kind::Int4, 1, 1, 0),
                col("a", Kind::Int4, 0, 200, 10),
                col("b", Kind::Int4, -20, 30, 12),
                col("c", Kind::Text, 0, 120, 10),
                col("d", Kind::Int8, 0, 0, 15),
                col("e", Kind::Int4, 0, 1000, 0),
            ],
            indexes: vec![
                Index {
                    name: "di_a_id_idx",
                    unique: true,
                    keys: vec![key("id", false, false)],
                },
                Index {
                    name: "di_a_a_idx",
                    unique: false,
                    keys: vec![key("a", false, false)],
                },
                Index {
                    name: "di_a_b_c_idx",
                    unique: false,
                    keys: vec![key("b", true, true), key("c", false, true)],
                },
                Index {
                    name: "di_a_c_a_idx",
                    unique: false,
                    keys: vec![key("c", true, false), key("a", false, false)],
                },
                Index {
                    name: "di_a_d_key",
                    unique: true,
                    keys: vec![key("d", false, false)],
                },
            ],
            next_id: 1,
        },
        Table {
            name: "di_b",
            columns: vec![
                col("id", Kind::Int4, 1, 1, 0),
                col("x", Kind::Int4, 0, 12, 5),
                col("y", Kind::Text, 0, 15, 20),
                col("z", Kind::Int8, -500, 500, 10),
                col("w", Kind::Int4, 0, 100, 0),
            ],
            indexes: vec![Index {
                name: "di_b_x_y_z_idx",
                unique: false,
                keys: vec![
                    key("x", false, false),
                    key("y", true, true),
                    key("z", false, true),
                ],
            }],
            next_id: 1,
        },
    ]
}

fn create_sql(t: &Table) -> String {
    let mut sql = String::new();
    let cols: Vec<String> = t
        .columns
        .iter()
        .map(|c| {
            let ty = match c.kind {
                Kind::Int4 => "int4",
                Kind::Int8 => "int8",
                Kind::Text => "text",
            };
            format!("{} {ty}", c.name)
        })
        .collect();
    writeln!(sql, "create table {} ({});", t.name, cols.join(", ")).unwrap();
    for ix in &t.indexes {
        let keys: Vec<String> = ix.keys.iter().map(declared_key).collect();
        let unique = if ix.unique { "unique " } else { "" };
        writeln!(
            sql,
            "create {unique}index {} on {} ({});",
            ix.name,
            t.name,
            keys.join(", ")
        )
        .unwrap();
    }
    sql
}

/// The key as written in CREATE INDEX (only what differs from the default).
fn declared_key(k: &KeyCol) -> String {
    let mut s = k.name.to_string();
    if k.desc {
        s.push_str(" desc");
    }
    // The default is NULLS LAST for ASC, NULLS FIRST for DESC.
    if k.nulls_first != k.desc {
        s.push_str(if k.nulls_first {
            " nulls first"
        } else {
            " nulls last"
        });
    }
    s
}

// --- values -----------------------------------------------------------------------

/// A constant of a query, printed inline or sent as a parameter.
#[derive(Clone, Debug)]
enum Lit {
    Int4(i32),
    Int8(i64),
    Text(String),
}

impl Lit {
    fn sql(&self) -> String {
        match self {
            Lit::Int4(v) => v.to_string(),
            Lit::Int8(v) => v.to_string(),
            Lit::Text(s) => format!("'{}'", s.replace('\'', "''")),
        }
    }
}

fn text_value(rng: &mut TestRng, n: i64) -> String {
    match rng.range(0, 9) {
        0 => String::new(),
        1 => format!("c{n:03}-{}", "long".repeat(rng.range(1, 6) as usize)),
        _ => format!("c{n:03}"),
    }
}

/// A value for a row (None = NULL), for columns other than id and d.
fn row_value(rng: &mut TestRng, c: &Column) -> Option<Lit> {
    if rng.chance(c.null_percent) {
        return None;
    }
    let n = rng.range(c.lo, c.hi);
    Some(match c.kind {
        Kind::Int4 => Lit::Int4(n as i32),
        Kind::Int8 => Lit::Int8(n),
        Kind::Text => Lit::Text(text_value(rng, n)),
    })
}

/// A constant to compare a column with: mostly inside the data's range,
/// sometimes just outside it, text sometimes a bare prefix.
fn query_value(rng: &mut TestRng, t: &Table, c: &Column) -> Lit {
    let mut n = match c.name {
        "id" => rng.range(-5, t.next_id + 5),
        // d: a base value (3 * id + 1), often shifted as the updates shift it.
        "d" => rng.range(-5, 3 * t.next_id + 5) + 10_000_000 * rng.range(0, 3),
        _ => rng.range(c.lo - 3, c.hi + 3),
    };
    if c.name == "d" && rng.chance(50) {
        n -= n % 3 - 1; // hit the base values more often
    }
    match c.kind {
        Kind::Int4 => Lit::Int4(n as i32),
        Kind::Int8 => Lit::Int8(n),
        Kind::Text if rng.chance(20) => Lit::Text(format!("c{:02}", n.rem_euclid(130) / 10)),
        Kind::Text => Lit::Text(text_value(rng, n)),
    }
}

fn insert_rows(t: &mut Table, rng: &mut TestRng, n: usize) -> String {
    let mut rows = Vec::new();
    for _ in 0..n {
        let id = t.next_id;
        t.next_id += 1;
        let vals: Vec<String> = t
            .columns
            .iter()
            .map(|c| match c.name {
                "id" => id.to_string(),
                // Unique: a base of 3*id+1 (< 10,000,000), shifted by
                // multiples of 10,000,000 by the updates.
                "d" if !rng.chance(c.null_percent) => (3 * id + 1).to_string(),
                "d" => "null".into(),
                _ => row_value(rng, c).map_or("null".into(), |l| l.sql()),
            })
            .collect();
        rows.push(format!("({})", vals.join(", ")));
    }
    format!("insert into {} values {}", t.name, rows.join(", "))
}

// --- queries ----------------------------------------------------------------------

/// Builds SQL text, with constants inline or as `$n` parameters.
struct QueryBuilder {
    params: Option<Vec<Lit>>,
}

impl QueryBuilder {
    fn lit(&mut self, l: Lit) -> String {
        match &mut self.params {
            None => l.sql(),
            Some(p) => {
                p.push(l);
                format!("${}", p.len())
            }
        }
    }
}

fn column<'a>(t: &'a Table, name: &str) -> &'a Column {
    t.columns.iter().find(|c| c.name == name).unwrap()
}

fn leaf(rng: &mut TestRng, t: &Table, qb: &mut QueryBuilder, c: &Column) -> String {
    let value = |rng: &mut TestRng| query_value(rng, t, c);
    let n = c.name;
    match rng.range(0, 12) {
        0 | 1 => format!("{n} = {}", qb.lit(value(rng))),
        2 => format!("{n} < {}", qb.lit(value(rng))),
        3 => format!("{n} <= {}", qb.lit(value(rng))),
        4 => format!("{n} > {}", qb.lit(value(rng))),
        5 => format!("{n} >= {}", qb.lit(value(rng))),
        6 | 7 => {
            let (x, y) = (value(rng), value(rng));
            format!("{n} between {} and {}", qb.lit(x), qb.lit(y))
        }
        8 | 9 => {
            let k = rng.range(1, 5);
            let items: Vec<String> = (0..k).map(|_| qb.lit(value(rng))).collect();
            format!("{n} in ({})", items.join(", "))
        }
        10 => format!("{n} is null"),
        11 => format!("{n} is not null"),
        _ => match c.kind {
            Kind::Text => {
                let prefix = format!("c{}%", rng.range(0, 12));
                format!("{n} like {}", qb.lit(Lit::Text(prefix)))
            }
            _ => format!("{n} <> {}", qb.lit(value(rng))),
        },
    }
}

/// A predicate over mostly indexed columns, at most `depth` levels of AND/OR.
fn predicate(rng: &mut TestRng, t: &Table, qb: &mut QueryBuilder, depth: u32) -> String {
    if depth == 0 || rng.chance(45) {
        // Index columns are chosen more often than the others.
        let c = if rng.chance(80) {
            let ix = rng.pick(&t.indexes);
            let k = if rng.chance(70) {
                &ix.keys[0]
            } else {
                rng.pick(&ix.keys)
            };
            column(t, k.name)
        } else {
            rng.pick(&t.columns)
        };
        return leaf(rng, t, qb, c);
    }
    let l = predicate(rng, t, qb, depth - 1);
    let r = predicate(rng, t, qb, depth - 1);
    match rng.range(0, 9) {
        0..=5 => format!("({l} and {r})"),
        6..=8 => format!("({l} or {r})"),
        _ => format!("not ({l} and {r})"),
    }
}

struct Query {
    sql: String,
    params: Option<Vec<Lit>>,
    /// The ORDER BY determines the order of the answer: compare as is.
    ordered: bool,
}

fn order_spec(k: &KeyCol, reverse: bool) -> String {
    let desc = k.desc != reverse;
    let nulls_first = k.nulls_first != reverse;
    format!(
        "{} {} nulls {}",
        k.name,
        if desc { "desc" } else { "asc" },
        if nulls_first { "first" } else { "last" }
    )
}

fn random_query(rng: &mut TestRng, t: &Table) -> Query {
    let mut qb = QueryBuilder {
        params: if rng.chance(25) {
            Some(Vec::new())
        } else {
            None
        },
    };
    let form = rng.range(0, 9);
    let (sql, ordered) = match form {
        // Rows, compared as sets.
        0..=3 => {
            let cols: Vec<&str> = if rng.chance(50) {
                t.columns.iter().map(|c| c.name).collect()
            } else {
                // The columns of one index: an index-only scan can answer.
                rng.pick(&t.indexes).keys.iter().map(|k| k.name).collect()
            };
            let p = predicate(rng, t, &mut qb, 2);
            (
                format!("select {} from {} where {p}", cols.join(", "), t.name),
                false,
            )
        }
        // Aggregates.
        4 | 5 => {
            let c = rng.pick(&t.columns).name;
            let p = predicate(rng, t, &mut qb, 2);
            (
                format!(
                    "select count(*), count({c}), min({c}), max({c}) from {} where {p}",
                    t.name
                ),
                false,
            )
        }
        // ORDER BY an index's columns (a prefix of them, after equalities on
        // the ones before), forwards or backwards, usually with a LIMIT.
        _ => {
            let ix = rng.pick(&t.indexes);
            let reverse = rng.chance(50);
            let skip = if ix.keys.len() > 1 && rng.chance(40) {
                rng.range(1, ix.keys.len() as i64 - 1) as usize
            } else {
                0
            };
            let mut conds: Vec<String> = ix.keys[..skip]
                .iter()
                .map(|k| {
                    let c = column(t, k.name);
                    format!("{} = {}", k.name, qb.lit(query_value(rng, t, c)))
                })
                .collect();
            if rng.chance(60) {
                conds.push(predicate(rng, t, &mut qb, 1));
            }
            let take = rng.range(1, (ix.keys.len() - skip) as i64) as usize;
            let keys = &ix.keys[skip..skip + take];
            let mut specs: Vec<String> = keys.iter().map(|k| order_spec(k, reverse)).collect();
            if rng.chance(15) {
                // An order the index does not give (one key flipped): a sort.
                let i = rng.range(0, specs.len() as i64 - 1) as usize;
                specs[i] = order_spec(&keys[i], !reverse);
            }
            let select: Vec<&str> = keys.iter().map(|k| k.name).collect();
            let mut sql = format!("select {} from {}", select.join(", "), t.name);
            if !conds.is_empty() {
                write!(sql, " where {}", conds.join(" and ")).unwrap();
            }
            write!(sql, " order by {}", specs.join(", ")).unwrap();
            if rng.chance(85) {
                write!(sql, " limit {}", rng.range(1, 40)).unwrap();
            }
            (sql, true)
        }
    };
    Query {
        sql,
        params: qb.params,
        ordered,
    }
}

// --- running --------------------------------------------------------------------------

const INDEX_PATHS: &str = "set enable_seqscan = off; set enable_indexscan = on; \
     set enable_indexonlyscan = on; set enable_bitmapscan = on";
const INDEX_PATHS_NO_BITMAP: &str = "set enable_seqscan = off; set enable_indexscan = on; \
     set enable_indexonlyscan = on; set enable_bitmapscan = off";
const SEQ_ONLY: &str = "set enable_indexscan = off; set enable_indexonlyscan = off; \
     set enable_bitmapscan = off; set enable_seqscan = on";

type Answer = Vec<Vec<Option<String>>>;

fn run_simple(c: &mut Client, sql: &str) -> Result<Answer, postgres::Error> {
    Ok(c.simple_query(sql)?
        .into_iter()
        .filter_map(|m| match m {
            SimpleQueryMessage::Row(r) => {
                Some((0..r.len()).map(|i| r.get(i).map(str::to_string)).collect())
            }
            _ => None,
        })
        .collect())
}

fn run_extended(c: &mut Client, sql: &str, params: &[Lit]) -> Result<Answer, postgres::Error> {
    let values: Vec<Box<dyn ToSql + Sync>> = params
        .iter()
        .map(|l| -> Box<dyn ToSql + Sync> {
            match l {
                Lit::Int4(v) => Box::new(*v),
                Lit::Int8(v) => Box::new(*v),
                Lit::Text(s) => Box::new(s.clone()),
            }
        })
        .collect();
    let refs: Vec<&(dyn ToSql + Sync)> = values.iter().map(|b| b.as_ref()).collect();
    let rows = c.query(sql, &refs)?;
    Ok(rows
        .iter()
        .map(|r| {
            (0..r.len())
                .map(|i| match *r.columns()[i].type_() {
                    Type::INT4 => r.get::<_, Option<i32>>(i).map(|v| v.to_string()),
                    Type::INT8 => r.get::<_, Option<i64>>(i).map(|v| v.to_string()),
                    Type::TEXT => r.get::<_, Option<String>>(i),
                    ref other => panic!("unexpected result type {other} in {sql}"),
                })
                .collect()
        })
        .collect())
}

struct Checker {
    client: Client,
    /// `INDEX_DIFF_LOG=FILE`: every statement sent, for replaying with psql.
    log: Option<std::fs::File>,
    seed: u64,
    queries: usize,
    index_plans: usize,
    index_only_plans: usize,
    /// Queries whose answer had rows (a count of zero counts as empty).
    nonempty: usize,
}

impl Checker {
    fn log(&mut self, sql: &str) {
        if let Some(f) = &mut self.log {
            use std::io::Write as _;
            writeln!(f, "{sql};").unwrap();
        }
    }

    fn exec(&mut self, sql: &str) -> Result<(), postgres::Error> {
        self.log(sql);
        self.client.batch_execute(sql)
    }

    fn context(&self, round: usize, q: &Query) -> String {
        format!(
            "seed {} (INDEX_DIFF_SEED={} replays it), round {round}, query:\n  {}\n  params: {:?}",
            self.seed, self.seed, q.sql, q.params
        )
    }

    fn run(&mut self, settings: &str, q: &Query, ctx: &str) -> Answer {
        self.exec(settings)
            .unwrap_or_else(|e| panic!("{settings} failed: {e:?}\n{ctx}"));
        self.log(&inline(q));
        let got = match &q.params {
            None => run_simple(&mut self.client, &q.sql),
            Some(p) => run_extended(&mut self.client, &q.sql, p),
        };
        let mut rows =
            got.unwrap_or_else(|e| panic!("query failed under `{settings}`: {e:?}\n{ctx}"));
        if !q.ordered {
            rows.sort();
        }
        rows
    }

    /// The plan's text under `settings` (EXPLAIN with the constants inline).
    fn plan(&mut self, settings: &str, sql: &str, ctx: &str) -> String {
        self.exec(settings).unwrap();
        self.log(&format!("explain (costs off) {sql}"));
        run_simple(&mut self.client, &format!("explain (costs off) {sql}"))
            .unwrap_or_else(|e| panic!("EXPLAIN failed: {e:?}\n{ctx}"))
            .into_iter()
            .map(|r| r[0].clone().unwrap_or_default())
            .collect::<Vec<_>>()
            .join("\n")
    }

    fn check(&mut self, round: usize, q: &Query, inline_sql: &str) {
        let ctx = self.context(round, q);
        let expected = self.run(SEQ_ONLY, q, &ctx);
        if expected
            .iter()
            .any(|r| r.first() != Some(&Some("0".into())))
        {
            self.nonempty += 1;
        }
        let seq_plan = self.plan(SEQ_ONLY, inline_sql, &ctx);
        assert!(
            !seq_plan.contains("Index"),
            "with the index paths switched off the plan still uses an index:\n{seq_plan}\n{ctx}"
        );
        for settings in [INDEX_PATHS, INDEX_PATHS_NO_BITMAP] {
            let got = self.run(settings, q, &ctx);
            let plan = self.plan(settings, inline_sql, &ctx);
            if got != expected {
                panic!(
                    "index paths and a sequential scan disagree\n{ctx}\nsettings: {settings}\n\
                     sequential scan ({} rows): {:?}\nwith index paths ({} rows): {:?}\n\
                     plan with index paths:\n{plan}\nplan without:\n{seq_plan}",
                    expected.len(),
                    shorten(&expected),
                    got.len(),
                    shorten(&got),
                );
            }
            if plan.contains("Index Scan")
                || plan.contains("Index Only Scan")
                || plan.contains("Bitmap Index Scan")
            {
                self.index_plans += 1;
            }
            if plan.contains("Index Only Scan") {
                self.index_only_plans += 1;
            }
            self.queries += 1;
        }
    }
}

fn shorten(rows: &Answer) -> String {
    let shown: Vec<String> = rows.iter().take(30).map(|r| format!("{r:?}")).collect();
    let more = if rows.len() > 30 { " ..." } else { "" };
    format!("[{}{more}]", shown.join(", "))
}

/// The same query with its parameters written inline (for EXPLAIN).
fn inline(q: &Query) -> String {
    let Some(params) = &q.params else {
        return q.sql.clone();
    };
    let mut sql = q.sql.clone();
    // Highest numbers first, so $1 does not eat the front of $10.
    for (i, l) in params.iter().enumerate().rev() {
        sql = sql.replace(&format!("${}", i + 1), &l.sql());
    }
    sql
}

/// Random inserts, updates (of indexed and unindexed columns) and deletes.
fn maintenance(rng: &mut TestRng, t: &mut Table, round: usize) -> Vec<String> {
    let n = rng.range(20, 120) as usize;
    let mut stmts = vec![insert_rows(t, rng, n)];
    let ids = t.next_id;
    match t.name {
        "di_a" => {
            let m = rng.range(7, 23);
            let r = rng.range(0, m - 1);
            let a = rng.range(0, 200);
            let c_number = rng.range(0, 120);
            let c = Lit::Text(text_value(rng, c_number)).sql();
            stmts.push(format!(
                "update di_a set a = {a}, c = {c} where id % {m} = {r}"
            ));
            stmts.push(format!(
                "update di_a set b = b + 1 where a between {0} and {0} + 10",
                rng.range(0, 200)
            ));
            // Unique keys moved to a fresh range (see insert_rows): no clash.
            stmts.push(format!(
                "update di_a set d = d + {} where id % 5 = {}",
                10_000_000 * (round as i64 + 1),
                rng.range(0, 4)
            ));
            stmts.push(format!(
                "update di_a set d = null where id = {}",
                rng.range(1, ids)
            ));
            // Unindexed column only (a heap-only update where the heap allows).
            stmts.push(format!(
                "update di_a set e = e + 1 where id between {0} and {0} + 50",
                rng.range(1, ids)
            ));
            stmts.push(format!(
                "delete from di_a where a between {0} and {0} + 3",
                rng.range(0, 200)
            ));
            stmts.push(format!(
                "delete from di_a where id % 31 = {}",
                rng.range(0, 30)
            ));
        }
        _ => {
            stmts.push(format!(
                "update di_b set z = z + {} where x = {}",
                rng.range(-50, 50),
                rng.range(0, 12)
            ));
            stmts.push(format!(
                "update di_b set y = null where id % 13 = {}",
                rng.range(0, 12)
            ));
            stmts.push(format!(
                "update di_b set w = w + 1 where id % 3 = {}",
                rng.range(0, 2)
            ));
            stmts.push(format!(
                "delete from di_b where x = {} and z > {}",
                rng.range(0, 12),
                rng.range(-500, 500)
            ));
        }
    }
    stmts
}

/// What the second session does inside its open transaction: changes of
/// non-unique indexed and unindexed columns, deletes and fresh rows.
fn concurrent_changes(rng: &mut TestRng, t: &mut Table) -> Vec<String> {
    let n = rng.range(5, 40) as usize;
    let mut stmts = vec![insert_rows(t, rng, n)];
    let ids = t.next_id;
    match t.name {
        "di_a" => {
            stmts.push(format!(
                "update di_a set a = {}, b = b - 1 where id % {} = {}",
                rng.range(0, 200),
                rng.range(5, 17),
                rng.range(0, 4)
            ));
            stmts.push(format!(
                "update di_a set e = e + 7 where id between {0} and {0} + 80",
                rng.range(1, ids)
            ));
            stmts.push(format!(
                "delete from di_a where id % 37 = {}",
                rng.range(0, 36)
            ));
        }
        _ => {
            stmts.push(format!(
                "update di_b set x = {}, z = z - 3 where id % 11 = {}",
                rng.range(0, 12),
                rng.range(0, 10)
            ));
            stmts.push(format!(
                "delete from di_b where id % 29 = {}",
                rng.range(0, 28)
            ));
        }
    }
    stmts
}

#[test]
fn index_scans_agree_with_sequential_scans() {
    let seed = test_seed("INDEX_DIFF_SEED", DEFAULT_SEED);
    eprintln!("indexes_differential: seed {seed} (set INDEX_DIFF_SEED to replay another)");
    let mut rng = TestRng::new(seed);
    let server = TestServer::start();
    let mut checker = Checker {
        client: server.connect(),
        log: std::env::var_os("INDEX_DIFF_LOG")
            .map(|p| std::fs::File::create(p).expect("create INDEX_DIFF_LOG")),
        seed,
        queries: 0,
        index_plans: 0,
        index_only_plans: 0,
        nonempty: 0,
    };
    let mut other = server.connect();
    let mut tables = tables();
    for t in &mut tables {
        let ddl = create_sql(t);
        if let Err(e) = checker.exec(&ddl) {
            panic!("{ddl} failed: {e:?}");
        }
        let rows = if t.name == "di_a" { 3000 } else { 2000 };
        for _ in 0..rows / 250 {
            let sql = insert_rows(t, &mut rng, 250);
            checker.exec(&sql).unwrap();
        }
        checker.exec(&format!("analyze {}", t.name)).unwrap();
    }
    for round in 0..ROUNDS {
        let concurrent = round % 2 == 1;
        if concurrent {
            other.batch_execute("begin").unwrap();
            for t in &mut tables {
                for stmt in concurrent_changes(&mut rng, t) {
                    if let Err(e) = other.batch_execute(&stmt) {
                        panic!("seed {seed}, round {round}: `{stmt}` failed: {e:?}");
                    }
                }
            }
        }
        for i in 0..QUERIES_PER_ROUND {
            if concurrent && i == QUERIES_PER_ROUND / 2 {
                // Nothing the open transaction touched may become all-visible.
                for t in &tables {
                    checker.exec(&format!("vacuum {}", t.name)).unwrap();
                }
            }
            let t = rng.pick(&tables);
            let q = random_query(&mut rng, t);
            let sql = inline(&q);
            checker.check(round, &q, &sql);
        }
        if concurrent {
            let end = if rng.chance(50) { "commit" } else { "rollback" };
            other.batch_execute(end).unwrap();
        }
        // Upkeep, some of it through the index paths themselves.
        let settings = if round % 2 == 0 {
            INDEX_PATHS
        } else {
            SEQ_ONLY
        };
        checker.exec(settings).unwrap();
        for t in &mut tables {
            for stmt in maintenance(&mut rng, t, round) {
                if let Err(e) = checker.exec(&stmt) {
                    panic!("seed {seed}, round {round}: `{stmt}` failed: {e:?}");
                }
            }
            let after = match round % 3 {
                0 => format!("vacuum {}", t.name),
                1 => format!("analyze {}", t.name),
                _ => String::new(),
            };
            if !after.is_empty() {
                checker.exec(&after).unwrap();
            }
        }
    }
    // Without this the test could pass with indexes that are never read.
    eprintln!(
        "indexes_differential: {} query runs with index paths on, {} of them used an index \
         ({} an index-only scan); {} of {} queries found rows",
        checker.queries,
        checker.index_plans,
        checker.index_only_plans,
        checker.nonempty,
        ROUNDS * QUERIES_PER_ROUND
    );
    // Nor with queries that all come back empty.
    assert!(
        checker.nonempty * 2 >= ROUNDS * QUERIES_PER_ROUND,
        "seed {seed}: only {} of {} queries found any rows",
        checker.nonempty,
        ROUNDS * QUERIES_PER_ROUND
    );
    assert!(
        checker.index_only_plans * 10 >= checker.queries,
        "seed {seed}: only {} of {} query runs used an index-only scan",
        checker.index_only_plans,
        checker.queries
    );
    assert!(
        checker.index_plans * 2 >= checker.queries,
        "seed {seed}: only {} of {} query runs with enable_seqscan = off used an index",
        checker.index_plans,
        checker.queries
    );
}
