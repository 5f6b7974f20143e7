//! Crash recovery through the write-ahead log: the server is killed with
//! SIGKILL while clients commit, and after each restart every acknowledged
//! commit is there exactly once, no transaction is half there, and a
//! transfer workload's invariant holds. Also: torn pages repaired from
//! full-page images, a damaged log tail, and the records waldump prints.

mod support;

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use support::TestServer;

const CLIENTS: usize = 4;
const ACCOUNTS: i64 = 20;

/// Acknowledged work of one round, per client.
#[derive(Default)]
struct Acked {
    /// Single-row commits: ids.
    rows: BTreeSet<i64>,
    /// Ids being inserted when the server died (may or may not be there).
    in_flight: BTreeSet<i64>,
}

fn setup(server: &TestServer) {
    server.psql_script(
        "create table rows (id int8, client int4, pad text);
         create table batches (batch int8, n int4);
         create table accounts (id int8, balance int8);",
    );
    let mut c = server.connect();
    for id in 0..ACCOUNTS {
        c.execute("insert into accounts values ($1, 0)", &[&id])
            .unwrap();
    }
}

/// One client: single-row commits, three-row transactions and transfers
/// between accounts, until the server goes away.
fn client_work(
    server_cfg: postgres::Config,
    client: usize,
    round: usize,
    acked: Arc<Mutex<Acked>>,
    stop: Arc<AtomicBool>,
) {
    let Ok(mut c) = server_cfg.connect(postgres::NoTls) else {
        return;
    };
    let mut n: i64 = 0;
    while !stop.load(Ordering::Relaxed) {
        n += 1;
        let id = ((round * CLIENTS + client) as i64) * 1_000_000 + n;
        acked.lock().unwrap().in_flight.insert(id);
        let pad = "p".repeat((n % 300) as usize);
        match c.execute(
            "insert into rows values ($1, $2, $3)",
            &[&id, &(client as i32), &pad],
        ) {
            Ok(_) => {
                let mut a = acked.lock().unwrap();
                a.in_flight.remove(&id);
                a.rows.insert(id);
            }
            Err(_) => return,
        }
        // A three-row transaction: all or nothing.
        let batch = id;
        let tx = c.transaction().and_then(|mut t| {
            for _ in 0..3 {
                t.execute("insert into batches values ($1, 1)", &[&batch])?;
            }
            t.commit()
        });
        if tx.is_err() {
            return;
        }
        // A transfer: the balances always sum to zero.
        let (from, to) = (n % ACCOUNTS, (n * 7 + client as i64) % ACCOUNTS);
        let tx = c.transaction().and_then(|mut t| {
            t.execute(
                "update accounts set balance = balance - 5 where id = $1",
                &[&from],
            )?;
            t.execute(
                "update accounts set balance = balance + 5 where id = $1",
                &[&to],
            )?;
            t.commit()
        });
        if tx.is_err() {
            return;
        }
    }
}

fn check_consistent(server: &TestServer, acked: &[Arc<Mutex<Acked>>]) {
    let mut c = server.connect();
    let present: Vec<i64> = c
        .query("select id from rows", &[])
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    let set: BTreeSet<i64> = present.iter().copied().collect();
    assert_eq!(set.len(), present.len(), "a row is there twice");
    for a in acked {
        let a = a.lock().unwrap();
        for id in &a.rows {
            assert!(set.contains(id), "acknowledged row {id} lost");
        }
    }
    let all_known: BTreeSet<i64> = acked
        .iter()
        .flat_map(|a| {
            let a = a.lock().unwrap();
            a.rows
                .iter()
                .chain(a.in_flight.iter())
                .copied()
                .collect::<Vec<_>>()
        })
        .collect();
    for id in &set {
        assert!(all_known.contains(id), "row {id} was never inserted");
    }
    let partial = c
        .query(
            "select batch, count(*) from batches group by batch having count(*) <> 3",
            &[],
        )
        .unwrap();
    assert!(
        partial.is_empty(),
        "a three-row transaction is partly there: {} batches",
        partial.len()
    );
    let sum: i64 = c
        .query_one("select sum(balance)::int8 from accounts", &[])
        .unwrap()
        .get(0);
    assert_eq!(sum, 0, "transfers are half there");
    let accounts: i64 = c
        .query_one("select count(*) from accounts", &[])
        .unwrap()
        .get(0);
    assert_eq!(accounts, ACCOUNTS);
}

#[test]
fn acknowledged_commits_survive_repeated_kills() {
    // A small pool so pages are evicted (written before their log is
    // flushed would be a bug) and a short checkpoint interval so kills land
    // inside checkpoints too.
    let mut server = TestServer::start_with(&[
        ("shared_buffers", "256kB"),
        ("checkpoint_timeout", "1s"),
        ("checkpoint_completion_target", "0.5"),
    ]);
    setup(&server);
    let rounds = 5;
    let mut all: Vec<Arc<Mutex<Acked>>> = Vec::new();
    for round in 0..rounds {
        let stop = Arc::new(AtomicBool::new(false));
        let acked: Vec<Arc<Mutex<Acked>>> = (0..CLIENTS).map(|_| Arc::default()).collect();
        let threads: Vec<_> = (0..CLIENTS)
            .map(|client| {
                let (cfg, a, s) = (server.config(), acked[client].clone(), stop.clone());
                std::thread::spawn(move || client_work(cfg, client, round, a, s))
            })
            .collect();
        if round == 2 {
            std::thread::sleep(Duration::from_millis(300));
            server.psql("checkpoint");
        }
        // Kill at a different moment each round.
        std::thread::sleep(Duration::from_millis(400 + 230 * round as u64));
        server.kill();
        stop.store(true, Ordering::Relaxed);
        for t in threads {
            t.join().unwrap();
        }
        all.extend(acked);
        server.start_again();
        check_consistent(&server, &all);
        let log = server.log_tail(40);
        assert!(log.contains("redo done at"), "no recovery reported:\n{log}");
        // What was in flight and did not make it will never appear: forget it.
        let present: BTreeSet<i64> = server
            .connect()
            .query("select id from rows", &[])
            .unwrap()
            .iter()
            .map(|r| r.get(0))
            .collect();
        for a in &all {
            let mut a = a.lock().unwrap();
            let flight: Vec<i64> = std::mem::take(&mut a.in_flight).into_iter().collect();
            for id in flight {
                if present.contains(&id) {
                    a.rows.insert(id);
                }
            }
        }
    }
    let total: i64 = server
        .connect()
        .query_one("select count(*) from rows", &[])
        .unwrap()
        .get(0);
    assert!(total > 0, "no work was done");
    // A clean stop after all that writes a shutdown checkpoint: no replay.
    server.restart();
    check_consistent(&server, &all);
}

#[test]
fn asynchronous_commits_are_atomic_after_a_crash() {
    let mut server =
        TestServer::start_with(&[("synchronous_commit", "off"), ("wal_writer_delay", "50ms")]);
    setup(&server);
    let stop = Arc::new(AtomicBool::new(false));
    let acked: Vec<Arc<Mutex<Acked>>> = (0..2).map(|_| Arc::default()).collect();
    let threads: Vec<_> = (0..2)
        .map(|client| {
            let (cfg, a, s) = (server.config(), acked[client].clone(), stop.clone());
            std::thread::spawn(move || client_work(cfg, client, 0, a, s))
        })
        .collect();
    std::thread::sleep(Duration::from_millis(800));
    server.kill();
    stop.store(true, Ordering::Relaxed);
    for t in threads {
        t.join().unwrap();
    }
    server.start_again();
    // Recent commits may be lost, but nothing is half there.
    let mut c = server.connect();
    let partial = c
        .query(
            "select batch from batches group by batch having count(*) <> 3",
            &[],
        )
        .unwrap();
    assert!(partial.is_empty());
    let sum: i64 = c
        .query_one("select sum(balance)::int8 from accounts", &[])
        .unwrap()
        .get(0);
    assert_eq!(sum, 0);
}

/// Sequence values a committed transaction got are never handed out again
/// after a crash: nextval() logs ahead and the commit flushes that record
/// (the record is not flushed by nextval itself, so asynchronous commits
/// and read-only uses pay no flush per call).
#[test]
fn committed_sequence_values_are_not_reissued_after_a_crash() {
    // No background log writes: only commits make the records durable.
    let mut server = TestServer::start_with(&[("wal_writer_delay", "10s")]);
    server.psql("create sequence s; create table t (id bigserial primary key, v int)");
    server.psql("checkpoint");
    let mut c = server.connect();
    let mut last_id = 0i64;
    for i in 0..70 {
        last_id = c
            .query_one("insert into t (v) values ($1) returning id", &[&i])
            .unwrap()
            .get(0);
    }
    // Read-only transactions last, so no later commit flushes their records.
    let mut last = 0i64;
    for _ in 0..100 {
        let v: i64 = c.query_one("select nextval('s')", &[]).unwrap().get(0);
        assert!(v > last);
        last = v;
    }
    drop(c);
    server.kill();
    server.start_again();
    let mut c = server.connect();
    let next: i64 = c.query_one("select nextval('s')", &[]).unwrap().get(0);
    assert!(next > last, "nextval {next} after {last} before the crash");
    let id: i64 = c
        .query_one("insert into t (v) values (0) returning id", &[])
        .unwrap()
        .get(0);
    assert!(id > last_id, "serial {id} reissued after {last_id}");
}

/// Overwrites half of block `block` of the file (relative to the data
/// directory) with garbage, as a write torn by a power loss would leave it.
fn tear_page(server: &TestServer, path: &str, block: u64) {
    let file = server.data_dir().join(path.trim());
    let mut bytes = std::fs::read(&file).unwrap();
    let at = block as usize * 8192 + 4096;
    assert!(bytes.len() >= at + 4096, "block {block} is not on disk");
    for b in &mut bytes[at..at + 4096] {
        *b = 0xA5;
    }
    std::fs::write(&file, bytes).unwrap();
}

#[test]
fn a_torn_page_is_restored_from_its_full_page_image() {
    let mut server = TestServer::start();
    server.psql_script(
        "create table t (a int, b text);
         insert into t select g, 'row ' || g from generate_series(1, 2000) g;
         checkpoint;",
    );
    // The first change of each page after the checkpoint logs its image.
    server.psql("update t set b = b || ' changed' where a % 10 = 0");
    let wal_fpi: i64 = server
        .psql("select wal_fpi from pg_stat_wal")
        .trim()
        .parse()
        .unwrap();
    assert!(wal_fpi > 0, "no full-page images were logged");
    let expected =
        server.psql("select count(*), sum(a), count(*) filter (where b like '%changed') from t");
    let path = server.psql("select pg_relation_filepath('t')");
    server.kill();
    // The data file still has the checkpoint's pages; tear one.
    tear_page(&server, &path, 0);
    server.start_again();
    assert_eq!(
        server.psql("select count(*), sum(a), count(*) filter (where b like '%changed') from t"),
        expected
    );
    let changed: i64 = server
        .psql("select count(*) from t where b like '%changed'")
        .trim()
        .parse()
        .unwrap();
    assert_eq!(changed, 200);
}

#[test]
fn a_damaged_log_tail_ends_replay_at_the_last_valid_record() {
    let mut server = TestServer::start();
    server.psql("create table t (a int)");
    server.psql("insert into t values (1)");
    server.psql("insert into t values (2)");
    let before_last = server.psql("select pg_current_wal_insert_lsn()");
    let segment = server.psql(&format!("select pg_walfile_name('{}')", before_last.trim()));
    server.psql("insert into t values (3)");
    server.kill();
    // Flip a byte inside the record that inserted 3.
    let lsn = wal::parse_lsn(before_last.trim()).unwrap();
    let seg_path = server.data_dir().join("pg_wal").join(segment.trim());
    let seg_path = if seg_path.exists() {
        seg_path
    } else {
        server
            .data_dir()
            .join("pg_wal")
            .join(wal::segment_file_name(wal::segment_of(lsn)))
    };
    let mut bytes = std::fs::read(&seg_path).unwrap();
    let at = (lsn % wal::SEGMENT_SIZE) as usize + 40;
    bytes[at] ^= 0x10;
    std::fs::write(&seg_path, bytes).unwrap();
    server.start_again();
    assert_eq!(
        server.psql("select string_agg(a::text, ',' order by a) from t"),
        "1,2"
    );
    assert!(
        server.log_tail(20).contains("checksum"),
        "{}",
        server.log_tail(20)
    );
    // The server goes on from there.
    server.psql("insert into t values (4)");
    server.kill();
    server.start_again();
    assert_eq!(
        server.psql("select string_agg(a::text, ',' order by a) from t"),
        "1,2,4"
    );
}

#[test]
fn dropped_and_created_tables_are_consistent_after_a_crash() {
    let mut server = TestServer::start();
    server.psql_script(
        "create table keep (a int);
         insert into keep select generate_series(1, 500);
         create table gone (a int);
         insert into gone select generate_series(1, 500);
         checkpoint;
         insert into gone select generate_series(1, 500);
         drop table gone;
         create table fresh (a int);
         insert into fresh select generate_series(1, 300);
         truncate keep;
         insert into keep values (42);",
    );
    server.kill();
    server.start_again();
    assert_eq!(server.psql("select count(*), sum(a) from keep"), "1|42");
    assert_eq!(server.psql("select count(*) from fresh"), "300");
    let err = server.psql_err("select * from gone");
    assert!(err.contains("does not exist"), "{err}");
}

#[test]
fn waldump_prints_the_records() {
    let mut server = TestServer::start();
    let start = server.psql("select pg_current_wal_insert_lsn()");
    server.psql("create table t (a int)");
    server.psql("insert into t values (1)");
    server.psql("checkpoint");
    server.psql("insert into t values (2)");
    server.stop_clean();
    let out = std::process::Command::new(support::server_binary())
        .arg("waldump")
        .arg("-D")
        .arg(server.data_dir())
        .arg("--start")
        .arg(start.trim())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("rmgr: Heap"), "{text}");
    assert!(text.contains("desc: INSERT"), "{text}");
    assert!(text.contains("desc: COMMIT"), "{text}");
    assert!(text.contains("CHECKPOINT_SHUTDOWN"), "{text}");
    assert!(text.contains("FPW") || text.contains("blkref #0"), "{text}");
}

#[test]
fn a_bulk_load_killed_midway_leaves_nothing_and_an_earlier_one_everything() {
    let mut server = TestServer::start_with(&[("shared_buffers", "1MB")]);
    server.psql("create table bulk (a int, b text)");
    let mut data = String::new();
    for i in 0..200_000 {
        data.push_str(&format!("{i}\trow number {i} with some padding\n"));
    }
    let file = server.write_file("bulk.tsv", &data);
    // A committed load: every row survives.
    server.psql(&format!("\\copy bulk from '{}'", file.display()));
    let loaded: i64 = server
        .psql("select pg_relation_size('bulk')")
        .trim()
        .parse()
        .unwrap();
    // A second load, killed while it runs: none of it may appear.
    let mut cmd = server.psql_command();
    cmd.arg("-c")
        .arg(format!("\\copy bulk from '{}'", file.display()));
    let mut child = cmd
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Kill once the second load has written pages (its rows are not committed).
    let mut grew = false;
    for _ in 0..200 {
        let size: i64 = server
            .psql("select pg_relation_size('bulk')")
            .trim()
            .parse()
            .unwrap();
        if size > loaded {
            grew = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    server.kill();
    let status = child.wait().unwrap();
    assert!(grew, "the second load never started");
    assert!(
        !status.success(),
        "the second load finished before the kill"
    );
    server.start_again();
    assert_eq!(
        server.psql("select count(*), count(distinct a), min(a), max(a) from bulk"),
        "200000|200000|0|199999"
    );
}

/// A committed trigger is catalog rows like any other (pg_trigger, pg_proc):
/// it survives a crash and fires after it; one rolled back does not exist.
#[test]
fn triggers_survive_a_crash() {
    let mut server = TestServer::start();
    let mut c = server.connect();
    c.batch_execute(
        "create table t (a int, b text);
         create function t_upper() returns trigger language plpgsql as $$
         begin new.b := upper(new.b); return new; end $$;
         create trigger t_upper before insert on t for each row execute function t_upper();",
    )
    .unwrap();
    c.batch_execute("begin").unwrap();
    c.batch_execute(
        "create trigger t_gone before insert on t for each row execute function t_upper()",
    )
    .unwrap();
    c.batch_execute("rollback").unwrap();
    drop(c);
    server.kill();
    server.start_again();
    let mut c = server.connect();
    c.batch_execute("insert into t values (1, 'x')").unwrap();
    let b: String = c.query_one("select b from t", &[]).unwrap().get(0);
    assert_eq!(b, "X");
    let names: Vec<String> = c
        .query("select tgname::text from pg_trigger order by 1", &[])
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert_eq!(names, vec!["t_upper".to_string()]);
}
