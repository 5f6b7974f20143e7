//! CREATE DATABASE / DROP DATABASE and connecting to the new database.

mod support;

use support::TestServer;

#[test]
fn create_use_and_drop_a_database() {
    let s = TestServer::start();
    s.psql("create database app");
    let err = s.psql_err("create database app");
    assert!(err.contains("already exists"), "{err}");
    let mut c = s
        .config()
        .dbname("app")
        .connect(postgres::NoTls)
        .expect("connect to app");
    c.batch_execute("create table t(a int); insert into t values (1), (2)")
        .unwrap();
    let n: i64 = c.query_one("select count(*) from t", &[]).unwrap().get(0);
    assert_eq!(n, 2);
    let err = s.psql_err("drop database app");
    assert!(err.contains("being accessed by other users"), "{err}");
    drop(c);
    // The session ends asynchronously after the client leaves.
    let mut ok = false;
    for _ in 0..50 {
        let mut cmd = s.psql_command();
        cmd.arg("-c").arg("drop database app");
        if s.run_psql(cmd).status.success() {
            ok = true;
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    assert!(ok, "drop database kept failing");
    assert_eq!(
        s.psql("select count(*) from pg_database where datname = 'app'")
            .trim(),
        "0"
    );
    let err = s.psql_err("drop database app");
    assert!(err.contains("does not exist"), "{err}");
    s.psql("drop database if exists app");
    let err = s.psql_err("drop database postgres");
    assert!(err.contains("currently open database"), "{err}");
}

#[test]
fn max_connections_is_enforced() {
    let s = TestServer::start_with(&[("max_connections", "2")]);
    // The startup probe's session may not have ended yet on a busy machine.
    let connect = || {
        for _ in 0..50 {
            if let Ok(c) = s.try_connect() {
                return c;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        s.connect()
    };
    let a = connect();
    let b = connect();
    let err = s
        .try_connect()
        .err()
        .expect("a third connection must be refused");
    let db = err.as_db_error().expect("a server error");
    assert_eq!(db.code().code(), "53300");
    drop(a);
    drop(b);
    // Sessions end asynchronously after their clients leave.
    let mut ok = false;
    for _ in 0..50 {
        if s.try_connect().is_ok() {
            ok = true;
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    assert!(ok, "connections were not freed");
}

/// Drivers send CREATE/DROP DATABASE through the extended protocol (one
/// Parse/Bind/Execute/Sync): that is not a transaction block.
#[test]
fn create_and_drop_database_through_the_extended_protocol() {
    let s = TestServer::start();
    let mut c = s.connect();
    c.execute("create database ext_db", &[]).unwrap();
    let mut d = s
        .config()
        .dbname("ext_db")
        .connect(postgres::NoTls)
        .unwrap();
    d.execute("create table t (k int primary key)", &[])
        .unwrap();
    drop(d);
    c.execute("drop database ext_db", &[]).unwrap();
}

/// VACUUM through the extended protocol runs; in a pipeline or block it
/// does not.
#[test]
fn vacuum_through_the_extended_protocol() {
    let s = TestServer::start();
    let mut c = s.connect();
    c.batch_execute("create table t (k int); insert into t select generate_series(1, 100); delete from t where k < 50")
        .unwrap();
    c.execute("vacuum t", &[]).unwrap();
    assert_eq!(s.psql("select count(*) from t"), "51");
    let mut tx = c.transaction().unwrap();
    let e = tx.execute("vacuum t", &[]).unwrap_err();
    assert_eq!(e.code().unwrap().code(), "25001");
}
