//! Grammar-aware generation of SQL for the fuzz targets: statements of the
//! kinds clients send, over the fixture tables, with expressions of bounded
//! nesting built from operators, functions, casts, CASE, subqueries and
//! literals at the edges of their types' ranges.

use common::fuzz::Rng;
use types::{DataType, TypeId};

/// Columns of the generator's table `t`, one of each interesting type.
pub const TABLE_T_COLUMNS: [(&str, DataType); 8] = [
    ("a", DataType::new(TypeId::Int4)),
    ("b", DataType::new(TypeId::Text)),
    ("c", DataType::new(TypeId::Numeric)),
    ("d", DataType::new(TypeId::Date)),
    ("e", DataType::new(TypeId::Timestamptz)),
    ("f", DataType::new(TypeId::Float8)),
    ("g", DataType::new(TypeId::Bool)),
    ("h", DataType::with_typmod(TypeId::Varchar, 14)),
];

const COLUMNS: &[&str] = &[
    "a", "b", "c", "d", "e", "f", "g", "h", "t.a", "t.b", "u.a", "u.b", "x", "t.*", "\"A\"",
];

const LITERALS: &[&str] = &[
    "0",
    "1",
    "-1",
    "42",
    "2147483647",
    "-2147483648",
    "9223372036854775807",
    "-9223372036854775808",
    "32767",
    "1.5",
    "-0.0",
    "1e308",
    "1e-308",
    "0.1",
    "99999999999999999999999999999999999999",
    "'abc'",
    "''",
    "'it''s'",
    "'é'",
    "'2024-01-02'",
    "'2024-01-02 03:04:05+02'",
    "'infinity'",
    "'NaN'",
    "'1 day'",
    "null",
    "true",
    "false",
    "$1",
    "$2",
    "date '2000-01-01'",
    "timestamp 'epoch'",
    "interval '1 hour'",
    "'t'",
    "' 12 '",
    "E'\\n'",
    "$$x$$",
];

const TYPES: &[&str] = &[
    "int",
    "int2",
    "int8",
    "bigint",
    "smallint",
    "real",
    "float8",
    "double precision",
    "numeric",
    "numeric(5,2)",
    "numeric(1000,0)",
    "text",
    "varchar(3)",
    "char(2)",
    "character varying",
    "name",
    "oid",
    "regclass",
    "date",
    "timestamp",
    "timestamptz",
    "timestamp(0)",
    "timestamp with time zone",
    "bool",
    "boolean",
    "no_such_type",
    "int[]",
];

const BINARY_OPS: &[&str] = &[
    "+",
    "-",
    "*",
    "/",
    "%",
    "^",
    "||",
    "=",
    "<>",
    "!=",
    "<",
    ">",
    "<=",
    ">=",
    "and",
    "or",
    "like",
    "not like",
    "ilike",
    "is distinct from",
    "is not distinct from",
    "~",
    "!~*",
];

const FUNCTIONS: &[(&str, usize)] = &[
    ("abs", 1),
    ("length", 1),
    ("upper", 1),
    ("lower", 1),
    ("substr", 2),
    ("substring", 3),
    ("round", 2),
    ("trunc", 1),
    ("coalesce", 3),
    ("nullif", 2),
    ("greatest", 2),
    ("least", 3),
    ("concat", 3),
    ("md5", 1),
    ("now", 0),
    ("current_date", 0),
    ("date_trunc", 2),
    ("to_char", 2),
    ("replace", 3),
    ("position", 2),
    ("sqrt", 1),
    ("mod", 2),
    ("power", 2),
    ("left", 2),
    ("right", 2),
    ("btrim", 1),
    ("ltrim", 2),
    ("split_part", 3),
    ("strpos", 2),
    ("floor", 1),
    ("ceil", 1),
    ("sign", 1),
    ("random", 0),
    ("version", 0),
    ("pg_typeof", 1),
    ("format_type", 2),
    ("regexp_replace", 3),
    ("no_such_function", 1),
    ("count", 1),
    ("sum", 1),
    ("avg", 1),
    ("min", 1),
    ("max", 1),
    ("string_agg", 2),
    ("bool_and", 1),
];

/// A statement generator over one RNG.
pub struct SqlGen<'r> {
    rng: &'r mut Rng,
    max_depth: usize,
    /// Expression nodes left: without a budget the random tree is
    /// supercritical and grows exponentially with the depth.
    nodes_left: usize,
}

impl<'r> SqlGen<'r> {
    pub fn new(rng: &'r mut Rng, max_depth: usize) -> Self {
        let nodes_left = 10 + rng.small(60);
        SqlGen {
            rng,
            max_depth,
            nodes_left,
        }
    }

    /// One to three statements separated by semicolons.
    pub fn script(&mut self) -> String {
        let n = 1 + self.rng.small(2);
        (0..n)
            .map(|_| self.statement())
            .collect::<Vec<_>>()
            .join("; ")
    }

    pub fn statement(&mut self) -> String {
        match self.rng.below(16) {
            0..=5 => self.select(0),
            6 => format!(
                "insert into t (a, b, c) values ({}, {}, {}){}",
                self.expr(1),
                self.expr(1),
                self.expr(1),
                self.returning()
            ),
            7 => format!("insert into u {}", self.select(1)),
            8 => format!(
                "update t set {} = {} where {}{}",
                self.rng.pick(&["a", "b", "c", "h"]),
                self.expr(1),
                self.expr(1),
                self.returning()
            ),
            9 => format!("delete from t where {}{}", self.expr(1), self.returning()),
            10 => format!(
                "values ({}, {}), ({}, {})",
                self.expr(1),
                self.expr(1),
                self.expr(1),
                self.expr(1)
            ),
            11 => format!(
                "create table if not exists g{} (k {} default {}, v {})",
                self.rng.below(4),
                self.rng.pick(TYPES),
                self.expr(2),
                self.rng.pick(TYPES)
            ),
            12 => format!(
                "{} {}",
                self.rng.pick(&[
                    "explain",
                    "explain analyze",
                    "prepare q as",
                    "declare c cursor for"
                ]),
                self.select(1)
            ),
            13 => format!("with w(x, y) as ({}) select x, y from w", self.select(1)),
            14 => format!(
                "{} {} {}",
                self.select(1),
                self.rng
                    .pick(&["union", "union all", "except", "intersect"]),
                self.select(1)
            ),
            _ => self
                .rng
                .pick(&[
                    "begin",
                    "commit",
                    "rollback",
                    "set search_path = public",
                    "show all",
                    "reset all",
                    "drop table if exists g0",
                    "truncate u",
                    "savepoint s",
                    "release s",
                    "set statement_timeout = '1s'",
                    "show server_version",
                    "alter table g1 add column z int",
                    "analyze",
                    "vacuum",
                    "checkpoint",
                    "discard all",
                    "listen x",
                    "select pg_sleep(0)",
                ])
                .to_string(),
        }
    }

    fn returning(&mut self) -> String {
        if self.rng.one_in(3) {
            format!(" returning {}", self.expr(2))
        } else {
            String::new()
        }
    }

    fn select(&mut self, depth: usize) -> String {
        let items: Vec<String> = (0..1 + self.rng.small(3))
            .map(|_| self.item(depth + 1))
            .collect();
        let mut sql = format!(
            "select {}{}",
            if self.rng.one_in(8) { "distinct " } else { "" },
            items.join(", ")
        );
        if !self.rng.one_in(4) {
            sql += match self.rng.below(6) {
                0 => " from t",
                1 => " from t join u on t.a = u.a",
                2 => " from t left join u using (a)",
                3 => " from t, u",
                4 => " from generate_series(1, 3) as x",
                _ => " from (select a, b from t) as t",
            };
        }
        if self.rng.one_in(2) {
            sql += &format!(" where {}", self.expr(depth + 1));
        }
        if self.rng.one_in(4) {
            sql += &format!(" group by {}", self.expr(depth + 1));
            if self.rng.one_in(2) {
                sql += &format!(" having {}", self.expr(depth + 1));
            }
        }
        if self.rng.one_in(3) {
            sql += &format!(
                " order by {} {}",
                self.expr(depth + 1),
                self.rng
                    .pick(&["", "desc", "asc nulls first", "desc nulls last"])
            );
        }
        if self.rng.one_in(3) {
            sql += &format!(
                " limit {}",
                self.rng.pick(&["1", "0", "all", "null", "5 offset 2"])
            );
        }
        sql
    }

    fn item(&mut self, depth: usize) -> String {
        let e = self.expr(depth);
        if self.rng.one_in(3) {
            format!(
                "{e} as {}",
                self.rng.pick(&["x", "\"Y z\"", "col", "select"])
            )
        } else {
            e
        }
    }

    /// An expression; `depth` is its nesting level so far.
    pub fn expr(&mut self, depth: usize) -> String {
        if depth >= self.max_depth || self.nodes_left == 0 || self.rng.one_in(3) {
            return self.leaf();
        }
        self.nodes_left -= 1;
        let d = depth + 1;
        if self.rng.one_in(12) {
            return self.chain(d);
        }
        match self.rng.below(16) {
            0..=3 => {
                let op = self.rng.pick(BINARY_OPS);
                format!("{} {op} {}", self.operand(d), self.operand(d))
            }
            4 => format!(
                "{}{}",
                self.rng.pick(&["-", "+", "not ", "@ ", "|/ "]),
                self.operand(d)
            ),
            5 => {
                let (name, arity) = self.rng.pick(FUNCTIONS);
                let args: Vec<String> = (0..arity).map(|_| self.expr(d)).collect();
                format!("{name}({})", args.join(", "))
            }
            6 => {
                let ty = self.rng.pick(TYPES);
                if self.rng.one_in(2) {
                    format!("cast({} as {ty})", self.expr(d))
                } else {
                    format!("{}::{ty}", self.operand(d))
                }
            }
            7 => format!(
                "case when {} then {} else {} end",
                self.expr(d),
                self.expr(d),
                self.expr(d)
            ),
            8 => format!(
                "{} is {}",
                self.operand(d),
                self.rng
                    .pick(&["null", "not null", "true", "not false", "unknown"])
            ),
            9 => format!(
                "{} between {} and {}",
                self.operand(d),
                self.operand(d),
                self.operand(d)
            ),
            10 => {
                let list: Vec<String> = (0..1 + self.rng.small(4)).map(|_| self.expr(d)).collect();
                format!(
                    "{} {}in ({})",
                    self.operand(d),
                    if self.rng.one_in(3) { "not " } else { "" },
                    list.join(", ")
                )
            }
            11 => format!("({})", self.select(d)),
            12 => format!("exists ({})", self.select(d)),
            13 => format!("{} in ({})", self.operand(d), self.select(d)),
            14 => format!(
                "{}(*) over (partition by {} order by {})",
                self.rng.pick(&["count", "row_number", "rank"]),
                self.expr(d),
                self.expr(d)
            ),
            _ => format!("({})", self.expr(d)),
        }
    }

    /// A deep, narrow expression: one-child constructs nested down to the
    /// depth limit (what stresses recursion without a huge text).
    fn chain(&mut self, depth: usize) -> String {
        let inner = if depth >= self.max_depth {
            self.leaf()
        } else {
            self.chain(depth + 1)
        };
        match self.rng.below(6) {
            0 => format!("({inner})"),
            1 => format!("-({inner})"),
            2 => format!("not ({inner})"),
            3 => format!("({inner})::text"),
            4 => format!("(select {inner})"),
            _ => format!("{inner} + 1"),
        }
    }

    /// An operand of an operator: parenthesized unless it is a leaf, so the
    /// text's nesting is the tree's.
    fn operand(&mut self, depth: usize) -> String {
        let e = self.expr(depth);
        if e.contains(' ') {
            format!("({e})")
        } else {
            e
        }
    }

    fn leaf(&mut self) -> String {
        if self.rng.one_in(2) {
            self.rng.pick(COLUMNS).to_string()
        } else {
            self.rng.pick(LITERALS).to_string()
        }
    }
}

/// An upper bound of a statement's expression nesting, from its text: every
/// parenthesis, operator character and nesting keyword counted. The
/// end-to-end test keeps this under the server's known-safe depth.
pub fn nesting_bound(sql: &str) -> usize {
    let symbols = sql
        .chars()
        .filter(|c| "(+-*/%^|<>=~!@".contains(*c))
        .count();
    let words = sql
        .split(|c: char| !c.is_ascii_alphanumeric() && c != '_')
        .filter(|w| {
            matches!(
                w.to_ascii_lowercase().as_str(),
                "and"
                    | "or"
                    | "not"
                    | "case"
                    | "when"
                    | "select"
                    | "union"
                    | "except"
                    | "intersect"
                    | "between"
                    | "like"
                    | "ilike"
                    | "is"
                    | "in"
                    | "cast"
            )
        })
        .count();
    symbols + words
}
