//! pgbench with custom scripts in `-M prepared` mode: two concurrent clients,
//! then the data must add up.

mod support;

use support::{pg_tool, run_with_timeout, TestServer, CLIENT_TIMEOUT};

const CLIENTS: u32 = 2;
const TRANSACTIONS: u32 = 200; // per client

fn setup(s: &TestServer) {
    s.psql_script(
        "create table pgb (id int, c int);\n\
         insert into pgb select g, 0 from generate_series(1, 1000) g;\n\
         create table pgb_log (id int, client int);\n",
    );
    assert_eq!(
        s.psql("select count(*) from pgb"),
        "1000",
        "rows loaded into pgb"
    );
}

/// Runs pgbench with the given `(file name, script, weight)` scripts; returns its stdout.
fn pgbench(s: &TestServer, scripts: &[(&str, &str, u32)]) -> String {
    let mut cmd = std::process::Command::new(pg_tool("pgbench"));
    for (k, _) in std::env::vars_os() {
        if k.to_string_lossy().starts_with("PG") {
            cmd.env_remove(k);
        }
    }
    cmd.env("PGCONNECT_TIMEOUT", "10")
        .stdin(std::process::Stdio::null())
        .args([
            "-h",
            "127.0.0.1",
            "-p",
            &s.port().to_string(),
            "-U",
            "postgres",
        ])
        .args(["-n", "-M", "prepared", "-j", "1"])
        .args(["-c", &CLIENTS.to_string(), "-t", &TRANSACTIONS.to_string()]);
    for (name, script, weight) in scripts {
        let path = s.write_file(name, script);
        cmd.arg("-f").arg(format!("{}@{weight}", path.display()));
    }
    cmd.arg("postgres");
    let out = run_with_timeout(&mut cmd, CLIENT_TIMEOUT);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        out.status.success(),
        "pgbench failed ({})\nstdout:\n{stdout}\nstderr:\n{stderr}",
        out.status
    );
    let total = CLIENTS * TRANSACTIONS;
    let processed = format!("number of transactions actually processed: {total}/{total}");
    assert!(
        stdout.contains(&processed),
        "pgbench should report `{processed}`\nstdout:\n{stdout}\nstderr:\n{stderr}"
    );
    if let Some(line) = stdout
        .lines()
        .find(|l| l.starts_with("number of failed transactions"))
    {
        assert!(
            line.starts_with("number of failed transactions: 0 "),
            "pgbench reported failed transactions: {line}\nstdout:\n{stdout}\nstderr:\n{stderr}"
        );
    }
    stdout
}

#[test]
fn pgbench_prepared_autocommit_statements() {
    let s = TestServer::start();
    setup(&s);
    pgbench(
        &s,
        &[(
            "autocommit.sql",
            "\\set id random(1, 1000)\n\
             select c from pgb where id = :id;\n\
             update pgb set c = c + 1 where id = :id;\n\
             insert into pgb_log values (:id, :client_id);\n",
            1,
        )],
    );
    let total = (CLIENTS * TRANSACTIONS).to_string();
    assert_eq!(
        s.psql("select count(*) from pgb_log"),
        total,
        "one pgb_log row per pgbench transaction"
    );
    assert_eq!(
        s.psql("select sum(c) from pgb"),
        total,
        "sum(c): every `update ... set c = c + 1` must count exactly once"
    );
    assert_eq!(
        s.psql("select count(*) from pgb"),
        "1000",
        "updates must not change the row count"
    );
    assert_eq!(
        s.psql("select count(*) from pgb_log where client < 0 or client >= 2"),
        "0",
        "client ids are 0 and 1"
    );
}

#[test]
fn pgbench_prepared_transaction_blocks() {
    let s = TestServer::start();
    setup(&s);
    pgbench(
        &s,
        &[
            (
                "commit.sql",
                "\\set id random(1, 1000)\n\
                 begin;\n\
                 select c from pgb where id = :id;\n\
                 update pgb set c = c + 1 where id = :id;\n\
                 insert into pgb_log values (:id, :client_id);\n\
                 commit;\n",
                3,
            ),
            (
                "rollback.sql",
                "\\set id random(1, 1000)\n\
                 begin;\n\
                 update pgb set c = c + 1 where id = :id;\n\
                 insert into pgb_log values (:id, -1);\n\
                 rollback;\n",
                1,
            ),
        ],
    );
    let logged: u32 = s
        .psql("select count(*) from pgb_log")
        .parse()
        .expect("a count");
    assert!(
        logged > 0 && logged < CLIENTS * TRANSACTIONS,
        "with 3:1 commit/rollback scripts some but not all of the {} transactions commit; \
         pgb_log has {logged} rows",
        CLIENTS * TRANSACTIONS
    );
    assert_eq!(
        s.psql("select count(*) from pgb_log where client = -1"),
        "0",
        "rows inserted by rolled-back transactions must not be visible"
    );
    assert_eq!(
        s.psql("select sum(c) from pgb"),
        logged.to_string(),
        "sum(c) must equal the number of committed transactions (pgb_log rows)"
    );
}
