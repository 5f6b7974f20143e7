//! Foreign keys between sessions, and what only a driver sees: a
//! referencing insert racing a delete (or key update) of its referenced
//! row waits for the other transaction and the outcome is PostgreSQL's (no
//! orphan is ever committed); errors' DETAIL and HINT, cascade NOTICEs, and
//! deferred constraints failing at an implicit commit over the extended
//! protocol. Single-session behaviour is in tests/sql/foreign_keys.slt.

mod support;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use postgres::Client;
use support::TestServer;

fn until(c: &mut Client, sql: &str) {
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        if c.query_one(sql, &[]).unwrap().get::<_, bool>(0) {
            return;
        }
        assert!(std::time::Instant::now() < deadline, "never true: {sql}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn pid(c: &mut Client) -> i32 {
    c.query_one("select pg_backend_pid()", &[]).unwrap().get(0)
}

/// Waits until backend `pid` waits for another transaction (a row lock).
fn until_waiting(c: &mut Client, pid: i32) {
    until(
        c,
        &format!(
            "select count(*) = 1 from pg_stat_activity where pid = {pid} \
             and wait_event_type = 'Lock' and wait_event = 'transactionid'"
        ),
    );
}

/// (code, message, detail) of a server error.
fn error(e: postgres::Error) -> (String, String, String) {
    let db = e.as_db_error().expect("a server error");
    (
        db.code().code().to_string(),
        db.message().to_string(),
        db.detail().unwrap_or("").to_string(),
    )
}

fn count(c: &mut Client, sql: &str) -> i64 {
    c.query_one(sql, &[]).unwrap().get(0)
}

fn setup(s: &TestServer) {
    s.psql(
        "create table p (id int primary key, v int); \
         create table c (id int, p int references p); \
         insert into p values (1, 0), (2, 0)",
    );
}

const STILL_REFERENCED: (&str, &str, &str) = (
    "23503",
    "update or delete on table \"p\" violates foreign key constraint \"c_p_fkey\" on table \"c\"",
    "Key (id)=(1) is still referenced from table \"c\".",
);

const NOT_PRESENT: (&str, &str, &str) = (
    "23503",
    "insert or update on table \"c\" violates foreign key constraint \"c_p_fkey\"",
    "Key (p)=(1) is not present in table \"p\".",
);

fn as_strings(t: (&str, &str, &str)) -> (String, String, String) {
    (t.0.into(), t.1.into(), t.2.into())
}

#[test]
fn delete_of_a_referenced_row_waits_for_the_referencing_insert() {
    let s = TestServer::start();
    setup(&s);
    let mut a = s.connect();
    let mut watcher = s.connect();
    // The insert's check locks p's row 1 FOR KEY SHARE until A ends.
    a.batch_execute("begin; insert into c values (10, 1)")
        .unwrap();
    let cfg = s.config();
    let delete = std::thread::spawn(move || {
        let mut b = cfg.connect(postgres::NoTls).unwrap();
        let pid = pid(&mut b);
        (pid, b.batch_execute("delete from p where id = 1"))
    });
    // Wait for B to block on A's lock.
    until(
        &mut watcher,
        "select count(*) = 1 from pg_stat_activity where query = 'delete from p where id = 1' \
         and wait_event = 'transactionid'",
    );
    a.batch_execute("commit").unwrap();
    let (_, r) = delete.join().unwrap();
    assert_eq!(error(r.unwrap_err()), as_strings(STILL_REFERENCED));
    assert_eq!(count(&mut a, "select count(*) from p where id = 1"), 1);

    // Rolled back instead, the insert leaves nothing to refuse the delete.
    a.batch_execute("begin; insert into c values (11, 2)")
        .unwrap();
    let cfg = s.config();
    let delete = std::thread::spawn(move || {
        let mut b = cfg.connect(postgres::NoTls).unwrap();
        b.batch_execute("delete from p where id = 2")
    });
    until(
        &mut watcher,
        "select count(*) = 1 from pg_stat_activity where query = 'delete from p where id = 2' \
         and wait_event = 'transactionid'",
    );
    a.batch_execute("rollback").unwrap();
    delete.join().unwrap().unwrap();
    assert_eq!(count(&mut a, "select count(*) from p where id = 2"), 0);
}

#[test]
fn referencing_insert_waits_for_the_delete_of_its_referenced_row() {
    let s = TestServer::start();
    setup(&s);
    let mut b = s.connect();
    let mut watcher = s.connect();
    for commit in [true, false] {
        b.batch_execute("begin; delete from p where id = 1")
            .unwrap();
        let cfg = s.config();
        let insert = std::thread::spawn(move || {
            let mut a = cfg.connect(postgres::NoTls).unwrap();
            let pid = pid(&mut a);
            (pid, a.batch_execute("insert into c values (20, 1)"))
        });
        until(
            &mut watcher,
            "select count(*) = 1 from pg_stat_activity \
             where query = 'insert into c values (20, 1)' and wait_event = 'transactionid'",
        );
        b.batch_execute(if commit { "commit" } else { "rollback" })
            .unwrap();
        let (_, r) = insert.join().unwrap();
        if commit {
            // The key went: the insert finds it gone once B committed.
            assert_eq!(error(r.unwrap_err()), as_strings(NOT_PRESENT));
            b.batch_execute("insert into p values (1, 0)").unwrap();
        } else {
            r.unwrap();
            assert_eq!(count(&mut b, "select count(*) from c where p = 1"), 1);
        }
    }
}

#[test]
fn key_update_of_a_referenced_row_waits_but_other_updates_do_not() {
    let s = TestServer::start();
    setup(&s);
    let mut a = s.connect();
    let mut b = s.connect();
    a.batch_execute("begin; insert into c values (30, 1)")
        .unwrap();
    // A non-key update does not conflict with FOR KEY SHARE.
    b.batch_execute("set statement_timeout = '5s'; update p set v = v + 1 where id = 1")
        .unwrap();
    let b_pid = pid(&mut b);
    let update = std::thread::spawn(move || {
        let r = b.batch_execute("update p set id = 100 where id = 1");
        (b, r)
    });
    let mut watcher = s.connect();
    until_waiting(&mut watcher, b_pid);
    a.batch_execute("commit").unwrap();
    let (_, r) = update.join().unwrap();
    assert_eq!(error(r.unwrap_err()), as_strings(STILL_REFERENCED));
    assert_eq!(count(&mut a, "select count(*) from p where id = 1"), 1);
}

/// Writers on both sides at once: whatever interleaving the lock waits
/// give, no committed referencing row lacks its referenced row.
#[test]
fn concurrent_inserts_and_deletes_never_commit_an_orphan() {
    let s = TestServer::start();
    s.psql(
        "create table p (id int primary key); \
         create table c (p int references p); \
         insert into p select generate_series(1, 40)",
    );
    let mut handles = Vec::new();
    for worker in 0..4u64 {
        let cfg = s.config();
        handles.push(std::thread::spawn(move || {
            let mut c = cfg.connect(postgres::NoTls).unwrap();
            let mut state = worker.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
            let mut next = || {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                state
            };
            for _ in 0..60 {
                let key = next() % 40 + 1;
                let sql = match next() % 3 {
                    0 => format!("delete from p where id = {key}"),
                    1 => format!("insert into p values ({key})"),
                    _ => format!("insert into c values ({key})"),
                };
                if let Err(e) = c.batch_execute(&sql) {
                    let code = e.as_db_error().map(|d| d.code().code().to_string());
                    // A missing key, a key still referenced, a duplicate.
                    assert!(
                        matches!(code.as_deref(), Some("23503" | "23505")),
                        "{sql}: {e}"
                    );
                }
            }
        }));
    }
    for h in handles {
        h.join().unwrap();
    }
    let mut c = s.connect();
    assert_eq!(
        count(
            &mut c,
            "select count(*) from c where not exists (select 1 from p where p.id = c.p)"
        ),
        0
    );
}

#[test]
fn drivers_see_details_hints_and_cascade_notices() {
    let s = TestServer::start();
    setup(&s);
    let notices = Arc::new(Mutex::new(Vec::new()));
    let mut cfg = s.config();
    let sink = notices.clone();
    cfg.notice_callback(move |n| {
        let detail = n.detail().map(|d| format!(" / {d}")).unwrap_or_default();
        sink.lock()
            .unwrap()
            .push(format!("{}: {}{detail}", n.severity(), n.message()))
    });
    let mut c = cfg.connect(postgres::NoTls).unwrap();
    let e = c.batch_execute("insert into c values (1, 5)").unwrap_err();
    let db = e.as_db_error().unwrap();
    // The fields drivers map errors to constraints by.
    assert_eq!(
        (db.schema(), db.table(), db.column(), db.constraint()),
        (Some("public"), Some("c"), None, Some("c_p_fkey"))
    );
    let (code, message, detail) = error(e);
    assert_eq!(code, "23503");
    assert_eq!(
        message,
        "insert or update on table \"c\" violates foreign key constraint \"c_p_fkey\""
    );
    assert_eq!(detail, "Key (p)=(5) is not present in table \"p\".");

    c.batch_execute("create table t (a int check (a > 0), b text)")
        .unwrap();
    let e = c
        .batch_execute("insert into t values (0, 'x')")
        .unwrap_err();
    let db = e.as_db_error().unwrap();
    assert_eq!(
        (db.schema(), db.table(), db.constraint()),
        (Some("public"), Some("t"), Some("t_a_check"))
    );
    assert_eq!(
        error(e),
        (
            "23514".into(),
            "new row for relation \"t\" violates check constraint \"t_a_check\"".into(),
            "Failing row contains (0, x).".into()
        )
    );

    c.batch_execute("insert into c values (1, 1)").unwrap();
    let e = c.batch_execute("delete from p where id = 1").unwrap_err();
    let db = e.as_db_error().unwrap();
    assert_eq!(
        (db.code().code(), db.table(), db.constraint()),
        ("23503", Some("c"), Some("c_p_fkey"))
    );
    c.batch_execute("create table nn (a int not null)").unwrap();
    let e = c.batch_execute("insert into nn values (null)").unwrap_err();
    let db = e.as_db_error().unwrap();
    assert_eq!(
        (db.schema(), db.table(), db.column(), db.constraint()),
        (Some("public"), Some("nn"), Some("a"), None)
    );
    let e = c.batch_execute("drop table p").unwrap_err();
    let db = e.as_db_error().unwrap();
    assert_eq!(db.code().code(), "2BP01");
    assert_eq!(
        db.message(),
        "cannot drop table p because other objects depend on it"
    );
    assert_eq!(
        db.detail(),
        Some("constraint c_p_fkey on table c depends on table p")
    );
    assert_eq!(
        db.hint(),
        Some("Use DROP ... CASCADE to drop the dependent objects too.")
    );
    let e = c.batch_execute("truncate p").unwrap_err();
    let db = e.as_db_error().unwrap();
    assert_eq!(
        (db.code().code(), db.detail(), db.hint()),
        (
            "0A000",
            Some("Table \"c\" references \"p\"."),
            Some("Truncate table \"c\" at the same time, or use TRUNCATE ... CASCADE.")
        )
    );
    c.batch_execute("drop table p cascade").unwrap();
    assert_eq!(
        notices.lock().unwrap().as_slice(),
        ["NOTICE: drop cascades to constraint c_p_fkey on table c"]
    );
    // The constraint went with it: any value goes now.
    c.batch_execute("insert into c values (2, 12345)").unwrap();
}

#[test]
fn deferred_check_fails_the_implicit_commit_over_the_extended_protocol() {
    let s = TestServer::start();
    s.psql(
        "create table p (id int primary key); \
         create table c (p int references p deferrable initially deferred)",
    );
    let mut c = s.connect();
    // Parse/Bind/Execute/Sync: the check runs when Sync commits.
    let e = c.execute("insert into c values (1)", &[]).unwrap_err();
    let (code, _, detail) = error(e);
    assert_eq!(code, "23503");
    assert_eq!(detail, "Key (p)=(1) is not present in table \"p\".");
    assert_eq!(count(&mut c, "select count(*) from c"), 0);
    // In a block the check waits for COMMIT, so the order of the rows
    // within the transaction does not matter.
    let mut t = c.transaction().unwrap();
    t.execute("insert into c values (2)", &[]).unwrap();
    t.execute("insert into p values (2)", &[]).unwrap();
    t.commit().unwrap();
    let mut t = c.transaction().unwrap();
    t.execute("insert into c values (3)", &[]).unwrap();
    let (code, _, detail) = error(t.commit().unwrap_err());
    assert_eq!(code, "23503");
    assert_eq!(detail, "Key (p)=(3) is not present in table \"p\".");
    assert_eq!(count(&mut c, "select count(*) from c"), 1);
}

#[test]
fn copy_checks_constraints_of_every_row() {
    use std::io::Write;
    let s = TestServer::start();
    setup(&s);
    let mut c = s.connect();
    c.batch_execute("create table t (a int check (a > 0))")
        .unwrap();
    let mut w = c.copy_in("copy t from stdin").unwrap();
    w.write_all(b"1\n-1\n").unwrap();
    let e = w.finish().unwrap_err();
    let db = e.as_db_error().unwrap();
    assert_eq!(db.code().code(), "23514");
    assert_eq!(db.where_(), Some("COPY t, line 2: \"-1\""));
    // The foreign key's checks run when the COPY ends.
    let mut w = c.copy_in("copy c from stdin").unwrap();
    w.write_all(b"1\t1\n2\t5\n").unwrap();
    let (code, _, detail) = error(w.finish().unwrap_err());
    assert_eq!(code, "23503");
    assert_eq!(detail, "Key (p)=(5) is not present in table \"p\".");
    let mut w = c.copy_in("copy c from stdin").unwrap();
    w.write_all(b"1\t1\n2\t2\n3\t\\N\n").unwrap();
    assert_eq!(w.finish().unwrap(), 3);
    assert_eq!(count(&mut c, "select count(*) from c"), 3);
}

#[test]
fn repeatable_read_checks_against_its_snapshot() {
    let s = TestServer::start();
    setup(&s);
    let mut a = s.connect();
    let mut b = s.connect();
    let rr = "begin isolation level repeatable read; select count(*) from p";
    // A referenced row committed after the snapshot is not there for it.
    a.batch_execute(rr).unwrap();
    b.batch_execute("insert into p values (3, 0)").unwrap();
    let (code, _, detail) = error(a.batch_execute("insert into c values (1, 3)").unwrap_err());
    assert_eq!(code, "23503");
    assert_eq!(detail, "Key (p)=(3) is not present in table \"p\".");
    a.batch_execute("rollback").unwrap();
    // One updated since is still there for it, unless its key changed.
    a.batch_execute(rr).unwrap();
    b.batch_execute("update p set v = 1 where id = 1").unwrap();
    a.batch_execute("insert into c values (1, 1); rollback")
        .unwrap();
    a.batch_execute(rr).unwrap();
    b.batch_execute("update p set id = 10 where id = 2")
        .unwrap();
    let (code, message, _) = error(a.batch_execute("insert into c values (1, 2)").unwrap_err());
    assert_eq!(
        (code.as_str(), message.as_str()),
        (
            "40001",
            "could not serialize access due to concurrent update"
        )
    );
    a.batch_execute("rollback").unwrap();
    // A referencing row committed since is found all the same.
    a.batch_execute(rr).unwrap();
    b.batch_execute("insert into c values (5, 3)").unwrap();
    let (code, _, detail) = error(a.batch_execute("delete from p where id = 3").unwrap_err());
    assert_eq!(code, "23503");
    assert_eq!(detail, "Key (id)=(3) is still referenced from table \"c\".");
    a.batch_execute("rollback").unwrap();
}

/// The relation locks PostgreSQL takes for foreign keys (it holds a few
/// AccessShare locks besides, for its own catalog reads).
#[test]
fn foreign_keys_lock_the_tables_they_reach() {
    let s = TestServer::start();
    s.psql("create table lk_p (id int primary key); create table lk_c (p int)");
    let mut c = s.connect();
    let locks = |c: &mut Client| -> Vec<String> {
        c.query(
            "select relation::regclass::text || ' ' || mode from pg_locks \
             where locktype = 'relation' and pid = pg_backend_pid() \
             and relation in ('lk_p'::regclass, 'lk_c'::regclass) order by 1",
            &[],
        )
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect()
    };
    let has = |all: &[String], want: &[&str]| {
        for w in want {
            assert!(all.iter().any(|l| l == w), "{w} not in {all:?}");
        }
    };
    c.batch_execute("begin; alter table lk_c add foreign key (p) references lk_p")
        .unwrap();
    let l = locks(&mut c);
    has(
        &l,
        &["lk_c ShareRowExclusiveLock", "lk_p ShareRowExclusiveLock"],
    );
    assert!(
        !l.iter().any(|l| l.ends_with("AccessExclusiveLock")),
        "{l:?}"
    );
    c.batch_execute("commit; begin; insert into lk_c values (null)")
        .unwrap();
    // A NULL key is not looked up: the referenced table is not reached.
    assert_eq!(locks(&mut c), ["lk_c RowExclusiveLock"]);
    c.batch_execute("rollback").unwrap();
    c.batch_execute("insert into lk_p values (1)").unwrap();
    c.batch_execute("begin; insert into lk_c values (1)")
        .unwrap();
    assert_eq!(
        locks(&mut c),
        ["lk_c RowExclusiveLock", "lk_p RowShareLock"]
    );
    c.batch_execute("commit; begin; alter table lk_c drop constraint lk_c_p_fkey")
        .unwrap();
    has(
        &locks(&mut c),
        &["lk_c AccessExclusiveLock", "lk_p AccessExclusiveLock"],
    );
    c.batch_execute("commit").unwrap();
}
