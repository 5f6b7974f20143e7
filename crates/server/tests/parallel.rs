//! Parallel query through a real client: the seed's experiments ("Parallel
//! Sequential Scans in play"), results that do not depend on the number of
//! workers, and queries that fail or are cancelled while workers run.

mod support;

use postgres::Client;
use support::TestServer;

/// EXPLAIN's lines for `sql`.
fn explain(c: &mut Client, sql: &str) -> Vec<String> {
    c.query(&format!("explain {sql}"), &[])
        .unwrap()
        .iter()
        .map(|r| r.get::<_, String>(0))
        .collect()
}

/// The number after `label: ` on the line that has it.
fn figure(lines: &[String], label: &str) -> Option<u64> {
    lines.iter().find_map(|l| {
        let rest = l.trim().strip_prefix(label)?.strip_prefix(": ")?;
        rest.trim().parse().ok()
    })
}

/// `q`'s rows as text, columns joined by `|`, NULL as `NULL`.
fn rows_text(c: &mut Client, q: &str) -> Vec<String> {
    c.simple_query(q)
        .unwrap()
        .into_iter()
        .filter_map(|m| match m {
            postgres::SimpleQueryMessage::Row(r) => Some(
                (0..r.len())
                    .map(|i| r.get(i).unwrap_or("NULL").to_string())
                    .collect::<Vec<_>>()
                    .join("|"),
            ),
            _ => None,
        })
        .collect()
}

/// The `loops=N` of the first line containing `node`.
fn loops(lines: &[String], node: &str) -> u64 {
    let line = lines.iter().find(|l| l.contains(node)).expect(node);
    let at = line.rfind("loops=").expect("analyze figures") + "loops=".len();
    line[at..].trim_end_matches(')').parse().unwrap()
}

/// PostgreSQL's compute_parallel_worker for a table of `pages` blocks
/// with the default min_parallel_table_scan_size (8MB = 1024 blocks).
fn workers_for(pages: u64, max: u64) -> u64 {
    let mut workers = 1;
    let mut threshold = 1024;
    while pages >= threshold * 3 {
        workers += 1;
        threshold *= 3;
    }
    workers.min(max)
}

#[test]
fn seed_experiments_plan_and_run_in_parallel() {
    let s = TestServer::start();
    let mut c = s.connect();
    c.batch_execute(
        "create table tbl_parallel_test(c1 int, c2 char(1000));
         insert into tbl_parallel_test values(generate_series(1,300000),'aaaaa');
         analyze tbl_parallel_test;",
    )
    .unwrap();
    let query = "select * from tbl_parallel_test where c1 < 10000 and c2 like '%bb%'";

    c.batch_execute("set max_parallel_workers_per_gather = 0")
        .unwrap();
    let serial = explain(&mut c, query);
    assert!(
        serial[0].starts_with("Seq Scan on tbl_parallel_test"),
        "{serial:?}"
    );

    // The seed's older setting name; workers chosen by the table's size.
    c.batch_execute("set max_parallel_degree = 6").unwrap();
    let pages: i64 = c
        .query_one("select pg_relation_size('tbl_parallel_test') / 8192", &[])
        .unwrap()
        .get(0);
    let planned = workers_for(pages as u64, 6);
    assert!(planned >= 3, "{pages} pages");
    let plan = explain(&mut c, query);
    assert!(plan[0].starts_with("Gather "), "{plan:?}");
    assert_eq!(figure(&plan, "Workers Planned"), Some(planned), "{plan:?}");
    assert!(
        plan.iter()
            .any(|l| l.contains("->  Parallel Seq Scan on tbl_parallel_test")),
        "{plan:?}"
    );

    // Under ANALYZE every participant's rows add up to the table.
    let analyzed = explain(&mut c, &format!("analyze {query}"));
    let launched = figure(&analyzed, "Workers Launched").expect("launched");
    assert_eq!(launched, planned, "{analyzed:?}");
    let participants = loops(&analyzed, "Parallel Seq Scan");
    assert_eq!(participants, launched + 1, "{analyzed:?}");
    let per_loop = figure(&analyzed, "Rows Removed by Filter").unwrap();
    let total = per_loop * participants;
    assert!(total.abs_diff(300_000) <= participants, "{analyzed:?}");

    // The seed's PARALLEL SAFE function is evaluated in the workers'
    // filters; PARALLEL UNSAFE (or RESTRICTED) keeps the plan serial.
    c.batch_execute(
        "create or replace function calc_factorial(a integer, fact_val integer)
         returns integer as $$ begin perform factorial(fact_val); return a; end; $$
         language plpgsql parallel safe",
    )
    .unwrap();
    let with_function =
        "select * from tbl_parallel_test where c1 < calc_factorial(10000, 10) and c2 like '%bb%'";
    let plan = explain(&mut c, with_function);
    assert!(plan[0].starts_with("Gather "), "{plan:?}");
    assert!(
        plan.iter()
            .any(|l| l.trim().starts_with("Filter:") && l.contains("calc_factorial(10000, 10)")),
        "{plan:?}"
    );
    let analyzed = explain(&mut c, &format!("analyze {with_function}"));
    assert_eq!(
        figure(&analyzed, "Workers Launched"),
        Some(planned),
        "{analyzed:?}"
    );
    for label in ["unsafe", "restricted"] {
        c.batch_execute(&format!(
            "alter function calc_factorial(integer, integer) parallel {label}"
        ))
        .unwrap();
        let plan = explain(&mut c, with_function);
        assert!(
            plan[0].starts_with("Seq Scan on tbl_parallel_test"),
            "{label}: {plan:?}"
        );
    }

    // The same answers as the serial plan.
    let agg = "select count(*), sum(c1), min(c1), max(c1), avg(c1) from tbl_parallel_test \
               where c1 % 7 = 3";
    let parallel_plan = explain(&mut c, agg);
    assert!(
        parallel_plan[0].starts_with("Finalize Aggregate"),
        "{parallel_plan:?}"
    );
    assert!(parallel_plan
        .iter()
        .any(|l| l.contains("Partial Aggregate")));
    let text = |c: &mut Client, q: &str| rows_text(c, q).join("\n");
    let in_parallel = text(&mut c, agg);
    let rows = text(
        &mut c,
        "select c1 from tbl_parallel_test where c1 % 1000 = 0",
    );
    c.batch_execute("set max_parallel_workers_per_gather = 0")
        .unwrap();
    assert_eq!(in_parallel, text(&mut c, agg));
    let mut serial_rows: Vec<&str> = Vec::new();
    let serial_text = text(
        &mut c,
        "select c1 from tbl_parallel_test where c1 % 1000 = 0",
    );
    serial_rows.extend(serial_text.lines());
    let mut parallel_rows: Vec<&str> = rows.lines().collect();
    parallel_rows.sort();
    serial_rows.sort();
    assert_eq!(parallel_rows, serial_rows);
    assert_eq!(parallel_rows.len(), 300);

    // A cancelled parallel query leaves no worker busy: with the server's
    // workers capped at what the plan asks for, the next query launches
    // every one of them again.
    c.batch_execute(&format!(
        "set max_parallel_workers_per_gather = 6; set max_parallel_workers = {planned}"
    ))
    .unwrap();
    c.batch_execute("set statement_timeout = '20ms'").unwrap();
    let err = c
        .batch_execute("select count(*) from tbl_parallel_test where c2 like '%b%'")
        .unwrap_err();
    assert_eq!(err.code().unwrap().code(), "57014", "{err}");
    c.batch_execute("reset statement_timeout").unwrap();
    let again = explain(&mut c, &format!("analyze {query}"));
    assert_eq!(
        figure(&again, "Workers Launched"),
        Some(planned),
        "{again:?}"
    );

    // An error raised in a worker (division by zero on one row) is the
    // query's error; the session and the workers go on.
    let err = c
        .batch_execute("select count(*) from tbl_parallel_test where 1 / (c1 - 150000) > 0")
        .unwrap_err();
    assert_eq!(err.code().unwrap().code(), "22012", "{err}");
    let again = explain(&mut c, &format!("analyze {query}"));
    assert_eq!(
        figure(&again, "Workers Launched"),
        Some(planned),
        "{again:?}"
    );

    // A LIMIT that stops the Gather early, then the next query.
    let few = c
        .query(
            "select c1 from tbl_parallel_test where c1 > 10 limit 5",
            &[],
        )
        .unwrap();
    assert_eq!(few.len(), 5);
    let n: i64 = c
        .query_one("select count(*) from tbl_parallel_test", &[])
        .unwrap()
        .get(0);
    assert_eq!(n, 300_000);
}

/// A small xorshift generator: the same queries on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

/// A NOTICE raised in a worker reaches the client, as PostgreSQL's
/// workers forward their messages through the leader.
#[test]
fn notices_raised_in_workers_reach_the_client() {
    let s = TestServer::start();
    let notices = std::sync::Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let sink = notices.clone();
    let mut c = s
        .config()
        .notice_callback(move |n| sink.lock().unwrap().push(n.message().to_string()))
        .connect(postgres::NoTls)
        .unwrap();
    c.batch_execute(
        "create table w(a int, pad text);
         insert into w select g, repeat('w', 200) from generate_series(1, 20000) g;
         analyze w;
         create function noisy(i int) returns bool as $$
         begin raise notice 'row %', i; return true; end; $$
         language plpgsql parallel safe;
         set parallel_setup_cost = 0; set parallel_tuple_cost = 0;
         set min_parallel_table_scan_size = 0; set max_parallel_workers_per_gather = 2;
         set parallel_leader_participation = off;",
    )
    .unwrap();
    let query = "select count(*) from w where a % 1000 = 0 and noisy(a)";
    let analyzed = explain(&mut c, &format!("analyze {query}"));
    assert!(
        figure(&analyzed, "Workers Launched").is_some_and(|n| n > 0),
        "{analyzed:?}"
    );
    notices.lock().unwrap().clear();
    let n: i64 = c.query_one(query, &[]).unwrap().get(0);
    assert_eq!(n, 20);
    let mut got = notices.lock().unwrap().clone();
    // The cheap qual runs first (the function costs 100 operators).
    assert_eq!(got.len(), 20, "{:?}", &got[..got.len().min(30)]);
    got.sort_by_key(|m| m[4..].parse::<i32>().unwrap());
    let want: Vec<String> = (1..=20).map(|k| format!("row {}", k * 1000)).collect();
    assert_eq!(got, want);
}

#[test]
fn results_do_not_depend_on_the_number_of_workers() {
    let s = TestServer::start();
    let mut c = s.connect();
    c.batch_execute(
        "create table d(a int, b int, c text, n numeric);
         insert into d select g, case when g % 11 = 0 then null else (g * 7919) % 1000 end,
                'v' || (g % 97), case when g % 13 = 0 then null else g / 7.0 end
           from generate_series(1, 20000) g;
         analyze d;
         set parallel_setup_cost = 0; set parallel_tuple_cost = 0;
         set min_parallel_table_scan_size = 0;",
    )
    .unwrap();
    let filters = [
        "a < {k}",
        "b % 5 = {r}",
        "c like '%{r}%'",
        "n > {k} / 3.0",
        "b is null or a > {k}",
        "true",
    ];
    let aggregates = [
        "count(*), count(b), sum(a), sum(n)",
        "avg(b), min(c), max(n), bool_and(a > b)",
        "max(a), min(b), sum(b), avg(n)",
    ];
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut queries = Vec::new();
    for _ in 0..30 {
        let f = filters[rng.next(filters.len() as u64) as usize]
            .replace("{k}", &rng.next(20000).to_string())
            .replace("{r}", &rng.next(5).to_string());
        let a = aggregates[rng.next(aggregates.len() as u64) as usize];
        queries.push(match rng.next(5) {
            0 => format!("select {a} from d where {f}"),
            1 => format!("select b % 7 as g, {a} from d where {f} group by b % 7"),
            // Gather Merge: the order itself is compared.
            2 => format!("select a, b, c from d where {f} order by a desc"),
            3 => format!("select a, n from d where {f} order by n nulls first, a limit 50"),
            _ => format!("select a, b, c, n from d where {f}"),
        });
    }
    let run = |c: &mut Client, q: &str| -> Vec<String> {
        let mut rows = rows_text(c, q);
        if !q.contains("order by") {
            rows.sort();
        }
        rows
    };
    let mut gathered = 0;
    for q in &queries {
        c.batch_execute("set max_parallel_workers_per_gather = 0")
            .unwrap();
        let expected = run(&mut c, q);
        for workers in [1, 2, 4] {
            c.batch_execute(&format!("set max_parallel_workers_per_gather = {workers}"))
                .unwrap();
            let plan = explain(&mut c, q);
            if plan.iter().any(|l| l.contains("Gather")) {
                gathered += 1;
            }
            assert_eq!(run(&mut c, q), expected, "{q} with {workers} workers");
        }
    }
    assert!(
        gathered >= queries.len() * 2,
        "only {gathered} parallel plans"
    );
}
